"""`low_rank`: value-down then value-up. The big space goes down to d_head dimensions and back up;
the real product W_O·W_V of one head (vectors as columns) as a heat map, and its real singular values as bars: only
d_head of them are non-zero."""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Arrow, DashedLine, FadeIn, FadeOut, GrowFromEdge, Indicate, Line, Rectangle, VGroup

from ..components.bars import round_ticks
from ..components.color_scale import ColorScale
from ..components.matrices import signed_color
from ..components.text import label
from ..components.vectors import math
from ..lesson import Chapter
from ..plans.low_rank import LowRankPlan, plan_low_rank
from ..stage import Stage
from .beyond_parts import sci, sci_math, wrapped_words

T = "low_rank.low_rank"


def heat_map(cells: np.ndarray, scale: float, theme, size: float) -> VGroup:
    """A grid of squares coloured by sign and size (the palette of weight matrices)."""
    n_r, n_c = cells.shape
    side = size / max(n_r, n_c)
    squares = VGroup()
    for i in range(n_r):
        for j in range(n_c):
            sq = Rectangle(width=side, height=side, stroke_width=0)
            sq.set_fill(signed_color(cells[i, j], scale, theme), opacity=1.0)
            sq.move_to([j * side, -i * side, 0])
            squares.add(sq)
    return squares


class LowRank(Chapter):
    key = "low_rank"

    def plan(self, setting) -> LowRankPlan:
        return plan_low_rank(setting)

    def head_name(self, say, plan: LowRankPlan) -> str:
        # where the head sits, not its role: no frame here shows what it attends to
        return say.head_name(plan.layer, plan.head)

    def play(self, stage: Stage, plan: LowRankPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn.setdefault(self.key, {})
        title = label(say(f"{T}.title", head=self.head_name(say, plan)), 30, th.text)
        stage.region("title").fit(title)
        drawn["title"] = title
        stage.play(FadeIn(title), run_time=0.5)

        # 1. down and up: three columns whose heights are the dimensions
        unit = 4.4 / plan.d_model
        big = Rectangle(width=0.6, height=4.4, color=th.embedding, stroke_width=2)
        small = Rectangle(width=0.6, height=max(plan.d_head * unit, 0.12), color=th.value, stroke_width=2)
        out = Rectangle(width=0.6, height=4.4, color=th.delta, stroke_width=2)
        cols = VGroup(big, small, out).arrange(RIGHT, buff=3.6).move_to([0, 0, 0])
        down = Arrow(big.get_right(), small.get_left(), buff=0.12, color=th.value, stroke_width=3)
        up = Arrow(small.get_right(), out.get_left(), buff=0.12, color=th.output, stroke_width=3)
        # one head's maps carry its number, as output_matrix writes them: W_O alone is the whole layer's matrix
        wv = math(f"W_V^(({plan.head}))", 44, th.value).next_to(down, UP, buff=0.08)
        wo = math(f"W_O^(({plan.head}))", 44, th.output).next_to(up, UP, buff=0.08)
        dims = VGroup(*(label(str(d), 30, th.text).next_to(c, DOWN, buff=0.12)
                        for d, c in zip((plan.d_model, plan.d_head, plan.d_model), cols)))
        names = VGroup(label(say(f"{T}.value_down"), 30, th.value).next_to(down, DOWN, buff=0.1),
                       label(say(f"{T}.value_up"), 30, th.output).next_to(up, DOWN, buff=0.1))
        diagram = VGroup(cols, down, up, wv, wo, dims, names)
        top = stage.region("full").top - 0.9
        if diagram.height > top - stage.region("full").bottom - 0.3:
            diagram.scale_to_fit_height(top - stage.region("full").bottom - 0.3)
        diagram.move_to([0, (top + stage.region("full").bottom) / 2, 0])
        drawn["diagram"] = diagram
        with stage.narrating(say(f"{T}.caption_down_up", d_model=plan.d_model, d_head=plan.d_head)):
            stage.play(FadeIn(big), FadeIn(dims[0]), run_time=0.5)
            stage.play(FadeIn(down), FadeIn(wv), FadeIn(names[0]), FadeIn(small), FadeIn(dims[1]), run_time=0.8)
            stage.play(FadeIn(up), FadeIn(wo), FadeIn(names[1]), FadeIn(out), FadeIn(dims[2]), run_time=0.8)
        stage.play(FadeOut(diagram), run_time=0.5)

        # 2. the product, a d_model × d_model heat map (evenly spread rows and columns when large)
        lower_top = stage.region("title").bottom - 0.15
        bottom = stage.region("full").bottom
        box_h = lower_top - bottom - 2.4
        # drawn the screen's way (vectors as columns, W_O·W_V·E): the transpose of the trace's row-form
        # product W_V @ W_O, the same singular values
        grid = heat_map(plan.cells.T, plan.scale, th, min(box_h, 5.2))
        grid.move_to([stage.region("full").left + 0.2 + grid.width / 2, (lower_top + bottom) / 2 + 0.2, 0])
        name = math(f"W_O^(({plan.head})) W_V^(({plan.head}))", 36, th.output).next_to(grid, UP, buff=0.15)
        size = label(say(f"{T}.size", rows=plan.d_model, cols=plan.d_model), 24, th.text)
        parts = [size]
        if len(plan.rows) < plan.d_model:
            parts.append(label(say(f"{T}.spread", shown=len(plan.rows), total=plan.d_model), 20, th.text))
        # the colour scale: the smallest to the largest entry shown, coloured as the cells are, and 0
        legend = ColorScale(float(plan.cells.min()), float(plan.cells.max()), scale=plan.scale,
                            caption=say("common.colour.scale"), theme=th, kind="signed2", width=4.0)
        parts.append(legend)
        notes = VGroup(*parts).arrange(DOWN, buff=0.12).next_to(grid, DOWN, buff=0.15)
        if notes.width > grid.width:  # wider than the map: start where it starts
            notes.align_to(grid, LEFT)
        whole = VGroup(name, grid, notes)
        whole.shift(UP * ((lower_top + bottom) / 2 - whole.get_center()[1]))
        drawn.update(heat=grid, heat_name=name, heat_notes=notes, legend=legend)
        with stage.narrating(say(f"{T}.caption_product", d_model=plan.d_model, full=plan.full_count,
                                 factors=plan.factor_count)):
            stage.play(FadeIn(name), FadeIn(grid, lag_ratio=0.002), run_time=1.2)
            stage.play(FadeIn(notes), run_time=0.5)

        # 3. its singular values: at most d_head non-zero
        right = stage.region("full").right
        room = right - grid.get_right()[0] - 1.2
        # the toy's two-line note under the chart takes its room from the bars' height
        bars = self.bars(stage, plan, width=room - 1.2, height=min(box_h, 4.2) - (0 if plan.real else 0.6))
        bars.move_to([(grid.get_right()[0] + 0.9 + right) / 2, grid.get_center()[1], 0])
        drawn["bars"] = bars
        stage.play(FadeIn(bars.axis), FadeIn(bars.axis_name), run_time=0.4)
        with stage.narrating(say(f"{T}.caption_singular", rank=plan.rank, d_head=plan.d_head,
                                 zeros=plan.d_model - plan.rank, largest=sci(plan.largest_zero, say))):
            stage.play(*(GrowFromEdge(b, DOWN) for b in bars.bars), run_time=1.4)
            stage.play(FadeIn(bars.divider), FadeIn(bars.notes), run_time=0.6)
            stage.wait(1.0)
        # this block's own step: the rank the non-zero bars make, written under the chart
        left = max(grid.get_right()[0], notes.get_right()[0]) + 0.3
        rank = wrapped_words(say(f"{T}.rank_note", rank=plan.rank, d_model=plan.d_model), right - left, 26,
                             th.output, max_lines=2)
        rank.next_to(bars, DOWN, buff=0.25)
        rank.set_x(min(max(rank.get_x(), left + rank.width / 2), right - rank.width / 2))
        drawn["rank_note"] = rank
        with stage.narrating(say(f"{T}.caption_meaning", d_head=plan.d_head, d_model=plan.d_model)):
            # (the heading pulses, it does not grow: scaled, pt's ran over the divider and the tick: review 50)
            stage.play(FadeIn(rank, shift=UP * 0.1), Indicate(bars.notes[0], color=th.output, scale_factor=1.1),
                       run_time=0.8)
            stage.wait(1.0)

    def bars(self, stage: Stage, plan: LowRankPlan, width: float, height: float) -> VGroup:
        """The first `plan.bars` singular values as bars; past d_head they are zero (a hairline)."""
        th, say = stage.theme, stage.say
        s = plan.singular[: plan.bars]
        step = width / len(s)
        top = float(s.max()) or 1.0
        bars = VGroup()
        for i, x in enumerate(s):
            nonzero = x > plan.tolerance
            h = max(height * float(x) / top, 0.015)
            b = Rectangle(width=step * 0.8, height=h, stroke_width=0)
            b.set_fill(th.output if nonzero else th.dim, opacity=1.0)
            b.move_to([i * step, h / 2, 0])
            b.value = float(x)
            bars.add(b)
        axis = DashedLine([-step, 0, 0], [len(s) * step, 0, 0], color=th.dim, stroke_width=1.5)
        split = plan.d_head * step - step / 2
        divider = DashedLine([split, -0.15, 0], [split, height + 0.1, 0], color=th.text, stroke_width=2)
        left = label(say(f"{T}.nonzero", count=plan.rank), 26, th.output)
        right = VGroup(label(say(f"{T}.zero", count=plan.d_model - plan.rank), 26, th.text),
                       sci_math(plan.largest_zero, say, 26, th.text, prefix="<=")
                       ).arrange(DOWN, buff=0.1, aligned_edge=LEFT)
        left.next_to([split / 2, height, 0], UP, buff=0.2)
        right.next_to([split, height * 0.3, 0], RIGHT, buff=0.2)
        notes = VGroup(left, right)
        if len(s) < plan.d_model:
            more = label(say(f"{T}.first_bars", shown=len(s), total=plan.d_model), 22, th.text)
            notes.add(more.next_to(axis, DOWN, buff=0.4))
        # the scale: an upright axis with round ticks from 0 (a lone tick at the top read as no scale)
        x_axis = -step * 0.5
        upright = Line([x_axis, 0, 0], [x_axis, height, 0], color=th.text, stroke_width=2)
        ticks, tick_labels = VGroup(), VGroup()
        values, decimals = round_ticks(top)
        for value in values:
            y = height * value / top
            ticks.add(Line([x_axis - step * 0.4, y, 0], [x_axis, y, 0], color=th.text, stroke_width=2))
            tick_labels.add(label(say.number(value, f".{decimals}f"), 24, th.text).next_to(ticks[-1], LEFT, buff=0.08))
            tick_labels[-1].value = value
        # the heights' name beside the upright axis, halfway up, as an axis title (review 50: under the first bar it
        # read as the name of the horizontal line)
        axis_name = math("sigma_i", 34, th.text).next_to(tick_labels, LEFT, buff=0.2).set_y(height / 2)
        axis = VGroup(axis, upright, ticks, tick_labels)
        axis.ticks, axis.tick_labels = ticks, tick_labels
        # the heading stands between the tick labels and the divider: over its bars (review 50: pt's ran past the
        # divider and onto the "1,5")
        lo, hi = tick_labels.get_right()[0] + 0.15, split - 0.08
        if left.width > hi - lo:
            left.scale_to_fit_width(hi - lo)
        left.set_x(min(max(left.get_x(), lo + left.width / 2), hi - left.width / 2))
        chart = VGroup(bars, axis, divider, notes, axis_name)
        chart.bars, chart.axis, chart.divider, chart.notes, chart.axis_name = bars, axis, divider, notes, axis_name
        if chart.width > width + 1.2:
            chart.scale_to_fit_width(width + 1.2)
        chart.groups = None
        if not plan.real:  # the toy's plateaus are its training, not chance: the frame says why
            # (as wide as the bars at most, left-aligned with them: wider, it ran into the heat map's notes)
            groups = wrapped_words(say(f"{T}.toy_groups"), bars.width, 20, th.dim, max_lines=3)
            groups.next_to(notes[-1] if len(s) < plan.d_model else axis, DOWN, buff=0.15).align_to(bars, LEFT)
            notes.add(groups)
            chart.add(groups)
            chart.groups = groups
        return chart
