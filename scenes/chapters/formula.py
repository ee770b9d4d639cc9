"""The formula: Attention(Q, K, V) = V softmax(KᵀQ / √d_k) written above the grid, each symbol
tied to the part of the grid it names (Q the labels across the top, K down the side, KᵀQ every
cell, √d_k under every cell, softmax down each column, V one value per key, mixed by the focus's
real weights); then the paper's QKᵀ, the same grid flipped over its diagonal.

Goes on with the grid the chapter before left: it makes room for the formula above it."""

from __future__ import annotations

import numpy as np
from manim import (
    DOWN, LEFT, PI, RIGHT, UP, FadeIn, FadeOut, Indicate, ReplacementTransform, Restore, Rotate, Succession,
    SurroundingRectangle, VGroup, Write, smooth,
)

from ..components.formula import AttentionFormula
from ..components.text import label, number, rich_line
from ..components.vectors import MATH_PER_TEXT, ellipsis_dots, math, symbol_source
from ..lesson import Chapter
from ..plans.grid import FormulaPlan, plan_formula
from ..stage import Region, Stage
from .grid_parts import (close_up, close_up_done, dot_legend, grid_on_stage, masked_note, new_grid, panel_row,
                         query_sums, show_scores, snapped_close_up, titles_of)

FS = 40  # the formula's font size
ROW = 0.6  # the panel's line spacing


class Formula(Chapter):
    key = "formula"
    continues = ("grid",)

    def plan(self, setting) -> FormulaPlan:
        return plan_formula(setting)

    def formula(self, stage: Stage, form: str) -> AttentionFormula:
        f = AttentionFormula(form, theme=stage.theme, font_size=FS)
        f.part("sqrt").set_color(stage.theme.output)
        f.move_to([0, stage.region("title").top - 0.02 - f.height / 2, 0])
        return f  # its tall parentheses stay inside the frame

    def grid_area(self, stage: Stage, f) -> Region:
        g = stage.region("grid")
        return Region("formula_grid", g.left - 0.1, g.right - 0.3, g.bottom, f.get_bottom()[1] - 0.15)

    def play(self, stage: Stage, plan: FormulaPlan) -> None:
        say, th = stage.say, stage.theme
        tokens, layout, n, d, i = plan.tokens, plan.layout, plan.n, plan.d_head, plan.focus
        f = self.formula(stage, layout)
        area = self.grid_area(stage, f)
        grid = grid_on_stage(stage, plan.head_trace, tokens, layout)
        if grid is None:
            stage.clear()
            grid, titles = new_grid(stage, plan.head_trace, tokens, layout, area, tag=True, tag_avoid=[f])
            grid.set_mask("cleared")
            stage.hand_on(grid=grid, grid_titles=titles)
            stage.play(FadeIn(grid), FadeIn(titles), run_time=1.0)
        else:  # continue from the grid on stage: make room for the formula above it
            titles = titles_of(stage)
            extras = [m for m in stage.mobjects if m is not grid and m is not titles]
            both = VGroup(grid, titles)
            k = min(1.0, area.width / both.width, area.height / both.height)
            anims = [FadeOut(m) for m in extras] + [grid.unhighlight(), grid.transition("none")]
            if grid.mask_state != "cleared":
                anims.append(grid.clear_mask())
            stage.play(*anims, run_time=0.8)
            stage.remove(*extras)
            stage.play(both.animate.scale(k).move_to(area.center), run_time=1.0)
            grid.use_common_number_font()
        drawn = stage.drawn[self.key] = {"grid": grid, "formula": f}
        with stage.narrating(say("grid.formula.write")):
            stage.play(Write(f), run_time=1.5)
            stage.wait(0.3)

        q_labels, k_labels = ((grid.col_labels, grid.row_labels) if layout == "video"
                              else (grid.row_labels, grid.col_labels))
        t_top, t_side = (titles[0], titles[1]) if len(titles) == 2 else (VGroup(), VGroup())
        q_title, k_title = (t_top, t_side) if layout == "video" else (t_side, t_top)
        q_box = SurroundingRectangle(VGroup(q_labels, q_title), color=th.query, buff=0.06, stroke_width=2.5)
        k_box = SurroundingRectangle(VGroup(k_labels, k_title), color=th.key, buff=0.06, stroke_width=2.5)
        panel = VGroup()
        y0 = stage.region("panel").top - 1.05

        def line(symbol, text, row):
            words = label(text, 24, th.text) if isinstance(text, str) else text
            out = panel_row(stage, [symbol, words], y0 - ROW * row)
            panel.add(out)
            return out

        l_q = line(math("Q", 30, th.query), say(f"grid.formula.q_line_{layout}", count=n), 0)
        with stage.narrating(say(f"grid.formula.q_{layout}", count=n)):
            stage.play(Indicate(f.part("Q"), color=th.query), FadeIn(q_box), FadeIn(l_q), run_time=1.2)
            stage.wait(0.4)
        l_k = line(math("K", 30, th.key), say(f"grid.formula.k_line_{layout}", count=n), 1)
        with stage.narrating(say(f"grid.formula.k_{layout}")):
            stage.play(Indicate(f.part("KT"), color=th.key), FadeIn(k_box), FadeIn(l_k), run_time=1.2)
            stage.wait(0.4)
        k_t = f'#text(fill: rgb("{th.key}"))[$K^T$]'
        q_ = f'#text(fill: rgb("{th.query}"))[$Q$]'
        prod = f"{k_t} {q_}" if layout == "video" else f"{q_} {k_t}"  # each symbol in its own colour
        l_p = line(math(prod, 30, th.text), say("grid.formula.prod_line"), 2)
        with stage.narrating(say("grid.formula.prod")):
            stage.play(Indicate(f.part("scores"), color=th.text), FadeIn(l_p), FadeOut(q_box), FadeOut(k_box),
                       grid.show_symbols(run_time=1.2), run_time=1.2)
            stage.wait(0.4)
        root = say.number(plan.root, f".{plan.root_digits}f")
        # "= √16 = 4, under every cell": the root typeset like the formula's √d_k, not the text font's √
        sqrt_line = rich_line(say.catalog["grid.formula.sqrt_line"], {"root": root}, font_size=24, color=th.text,
                              mobjects={"sqrt": math(f"sqrt({d})", 24 * MATH_PER_TEXT, th.text)})
        l_s = line(math("sqrt(d_k)", 30, th.output), sqrt_line, 3)
        drawn["sqrt_text"] = say("grid.formula.sqrt_line", sqrt=f"√{d}", root=root)
        frame = stage.camera_frame
        frame.save_state()
        with stage.narrating(say("grid.formula.sqrt", d=d, root=root)):
            stage.play(Indicate(f.part("sqrt"), color=th.output), FadeIn(l_s),
                       grid.show_symbols(run_time=1.2, denominator=f"√{d}", denominator_color=th.output),
                       run_time=1.2)
            # a close look at the cells around the focus, where the fractions can be read
            near = grid.cell_center(i, max(0, min(i, n - 1) - 1))
            z = float(np.clip(5.5 * grid.cell_width / frame.width, 0.25, 1.0))  # about 5 cells across
            if z < 0.9:
                near, z = snapped_close_up(grid, near, z, frame, keep=grid.cell_rect(i, max(0, min(i, n - 1) - 1)))
                # the root's value, boxed, on an empty (masked) cell of the close-up: the caption's "√16 = 4" is on
                # the frame it ends on (review 53: only "√16" was, in every cell)
                root_note = root_callout(grid, near, z, frame, math(f"sqrt({d}) = {root}", 46 * z, th.output), th)
                drawn["root_note"] = root_note
                stage.play(frame.animate.scale(z).move_to(near), *close_up(grid, near, z, frame),
                           *([FadeIn(root_note)] if root_note is not None else []), run_time=1.2)
                if not grid.symbol_indexed:  # close up, the indices the home size left out read: K⃗₃·Q⃗₄, not K⃗·Q⃗
                    grid.symbol_zoom = 1.0 / z  # (review 48: the close-up's cells could not be told apart)
                    stage.play(grid.show_symbols(run_time=0.6, denominator=f"√{d}", denominator_color=th.output))
                    grid.symbol_zoom = 1.0
                stage.wait(0.8)
        drawn["denominator"] = grid.symbol_denominator
        masked = masked_note(stage, grid, i)  # the empty half, named once the camera is back
        shown_masked = [FadeIn(masked)] if masked is not None else []
        with stage.narrating(say("grid.formula.scores")):
            stage.play(show_scores(grid, 1.2))
            stage.wait(0.5)
            if z < 0.9:
                stage.play(Restore(frame), *close_up_done(grid), *shown_masked,
                           *([FadeOut(root_note)] if root_note is not None else []), run_time=1.0)
            elif shown_masked:
                stage.play(*shown_masked, run_time=0.6)
        drawn["scores"] = dict(grid.number_mobs)
        drawn["masked"] = masked
        l_m = line(math("\"softmax\"", 30, th.text), say(f"grid.formula.softmax_line_{layout}"), 4)
        with stage.narrating(say(f"grid.formula.softmax_{layout}")):
            sums = query_sums(stage, grid)  # each column's Σ, "≈" where its drawn weights miss 1
            stage.play(Indicate(f.part("softmax"), color=th.text), FadeIn(l_m), grid.show_weights(run_time=1.2),
                       FadeIn(sums), run_time=1.2)
            stage.wait(0.5)
            legend = dot_legend(stage, grid, [titles, panel, f], corners=self.legend_corners(stage))
            stage.play(grid.show_dots(run_time=1.2), FadeIn(legend), FadeOut(sums))
        drawn["sums"] = sums
        drawn["weights_kind"] = grid.content_kind
        drawn["legend"] = legend
        mix = self.values(stage, plan, grid, line, y0)
        drawn["panel"] = VGroup(*panel, *mix[:2])
        self.transpose(stage, plan, grid, titles, f, VGroup(panel, *mix, legend, *([masked] if masked else [])))

    @staticmethod
    def legend_corners(stage: Stage):
        """The dot legend's place: the frame's lower right corner, under the panel's lines."""
        full = stage.region("full")
        return [([full.right, full.bottom, 0], DOWN + RIGHT)]

    def values(self, stage: Stage, plan: FormulaPlan, grid, line, y0: float) -> list:
        """V: one value per key, labelled beside the grid; the focus mixes them with its weights."""
        say, th = stage.say, stage.theme
        tokens, n, i = plan.tokens, plan.n, plan.focus
        terms, wnums = [], []
        for k, (j, w) in enumerate(zip(plan.mix_keys, plan.mix_weights)):
            if k:
                terms.append(label("+", 26, th.text))
            m = number(w, "weight", 26, th.text)
            wnums.append(m)
            terms += [m, math(symbol_source("V", j + 1), 30, th.value)]
        if plan.mix_rest >= 0.005:  # more values flow in than are drawn: the sum says so ("+ ⋯")
            terms += [label("+", 26, th.text), ellipsis_dots(RIGHT, color=th.text)]
        v_row = VGroup(*terms).arrange(RIGHT, buff=0.1)
        v_labels = VGroup()
        for j in plan.value_labels:
            # as large as a row (video) or a column (paper) lets it be (at 22 pt its subscript read at 10 px)
            lab = math(symbol_source("V", j + 1), 32, th.value)
            room = 0.85 * (grid.cell_height if plan.layout == "video" else grid.cell_width)
            size = lab.height if plan.layout == "video" else lab.width
            if size > room:
                lab.scale(room / size)
            if plan.layout == "video":
                c = grid.cell_center(n - 1, j)
                lab.move_to([grid.lines.get_right()[0] + 0.12 + lab.width / 2, c[1], 0])
            else:
                c = grid.cell_center(j, j)
                lab.move_to([c[0], grid.lines.get_bottom()[1] - 0.1 - lab.height / 2, 0])
            v_labels.add(lab)
        l_v = line(math("V", 30, th.value), say("grid.formula.v_line"), 5)
        head = rich_line(say.catalog["grid.formula.mixes"], {"query": say.quote(tokens[i])}, font_size=24,
                         color=th.text, colors={"query": th.query})
        mix = panel_row(stage, [head], y0 - ROW * 5 - 0.55)
        v_row.next_to(mix, DOWN, buff=0.15).align_to(mix, LEFT)
        panel = stage.region("panel")
        if v_row.get_right()[0] > panel.right:
            v_row.scale_to_fit_width(panel.width).align_to(mix, LEFT)
        stage.drawn[self.key].update(mix_numbers=wnums, mix_keys=list(plan.mix_keys), mix_row=v_row,
                                     value_labels=v_labels)
        items = say.words([say("grid.formula.mix_item", weight=w, index=j + 1)
                           for j, w in zip(plan.mix_keys, plan.mix_weights)] +
                          ([say("grid.formula.mix_rest")] if plan.mix_rest >= 0.005 else []))
        with stage.narrating(say("grid.formula.v", query=say.quote(tokens[i]), items=items)):
            f = stage.drawn[self.key]["formula"]
            stage.play(Indicate(f.part("V"), color=th.value), FadeIn(l_v), FadeIn(v_labels, lag_ratio=0.05),
                       grid.highlight_column(i, color=th.query), run_time=1.2)
            stage.play(FadeIn(mix), FadeIn(v_row, lag_ratio=0.1), run_time=1.0)
            stage.wait(1.2)
        return [mix, v_row, v_labels]

    def transpose(self, stage: Stage, plan: FormulaPlan, grid, titles, f, panel) -> None:
        """The paper's orientation: the same picture, flipped over its diagonal."""
        say = stage.say
        other = plan.other_layout
        f2 = self.formula(stage, other).move_to(f)
        g2, t2 = new_grid(stage, plan.head_trace, plan.tokens, other, self.grid_area(stage, f), tag=True, tag_avoid=[f2])
        g2.set_mask("cleared")
        g2.set_content("dots")
        d2 = grid.lines.get_center() - g2.lines.get_center()  # the flip turns about the cells' centre
        g2.shift(d2)
        t2.shift(d2)
        full, both = stage.region("full"), VGroup(g2, t2)  # but never past the frame's edge
        fix = max(0.0, full.left - both.get_left()[0]) - max(0.0, both.get_right()[0] - full.right)
        both.shift(RIGHT * fix + UP * (max(0.0, full.bottom - both.get_bottom()[1])
                                       - max(0.0, both.get_top()[1] - full.top)))
        legend2 = dot_legend(stage, g2, [t2, f2])
        masked2 = masked_note(stage, g2)
        late_extras = [legend2, *([masked2] if masked2 is not None else [])]
        stage.drawn[self.key].update(other_grid=g2, other_formula=f2, other_titles=t2, other_legend=legend2,
                                     other_masked=masked2)
        ul = grid.lines.get_corner(UP + LEFT)
        dr = grid.lines.get_corner(DOWN + RIGHT)
        with stage.narrating(say(f"grid.formula.to_{other}")):
            # the labels go with the titles (flipped, they would read mirrored and leave the frame); the
            # flipped cells (not square: they turn out of the frame's box) fade into the new grid
            stage.play(FadeOut(panel), FadeOut(titles), grid.unhighlight(), grid.labels.animate.set_opacity(0.0),
                       run_time=0.6)
            late = lambda t: smooth(max(0.0, (t - 0.75) / 0.25))  # noqa: E731
            stage.play(Succession(Rotate(grid, PI, axis=dr - ul, about_point=(ul + dr) / 2, run_time=2.0),
                                  FadeOut(grid, run_time=0.6)),
                       ReplacementTransform(f, f2, run_time=2.0), FadeIn(g2, rate_func=late),
                       FadeIn(t2, rate_func=late), *(FadeIn(m, rate_func=late) for m in late_extras), run_time=2.6)
            stage.wait(1.0)
        stage.hand_on(grid=g2, grid_titles=t2)


def root_callout(grid, near, z: float, frame, note, th):
    """`note` in a box on the masked cell of the close-up (the camera frame scaled by `z` about `near`) nearest the
    frame's corner where the masked cells lie, wholly in view; its cells are empty, so it covers no figure. The box
    reads as a note, not as one more cell's value (review 54). None where no masked cell is wholly in view."""
    half = np.array([frame.width, frame.height, 0.0]) * z / 2
    corner = near + (DOWN + LEFT if grid.layout == "video" else UP + RIGHT) * half
    cw, ch = grid.cell_width, grid.cell_height
    seen = [(q, k) for q in range(grid.n) for k in range(grid.n) if grid.mask[q, k]
            and np.all(np.abs(grid.cell_center(q, k) - near)[:2] + [cw / 2, ch / 2] <= half[:2] - 0.02 * z)]
    if not seen:
        return None
    q, k = min(seen, key=lambda c: np.linalg.norm(grid.cell_center(*c) - corner))
    note.scale(min(1.0, 0.72 * cw / note.width, 0.5 * ch / note.height))
    box = SurroundingRectangle(note, buff=0.12 * z, corner_radius=0.06 * z, color=th.output, stroke_width=2)
    box.set_fill(th.background, opacity=1.0)
    callout = VGroup(box, note).move_to(grid.cell_center(q, k))
    callout.set_z_index(grid.get_z_index() + 3)  # over the close-up's edge veils
    return callout
