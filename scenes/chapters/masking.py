"""Masking: why no word may look at the words after it (while learning, every prefix guesses its
next word in the same pass), then on the grid: every pair is scored, the blocked cells become −∞
before the softmax and 0 after it, and every query's weights still sum to 1.

Goes on with the grid the softmax chapter left: it steps aside for the explanation and comes
back to the same place."""

from __future__ import annotations

import numpy as np
from manim import (
    DOWN, LEFT, RIGHT, UP, Arrow, Create, CurvedArrow, FadeIn, FadeOut, Indicate, LaggedStart, Line, MoveToTarget, Restore,
    Rectangle, SurroundingRectangle, Transform, VGroup,
)

from ..components.text import label, number, text_baseline
from ..components.vectors import MATH_PER_TEXT, math
from ..lesson import Chapter
from ..plans.grid import MaskingPlan, plan_masking
from ..stage import Region, Stage
from .grid_parts import NOTE_FS, ensure_grid, new_grid, query_sums, show_scores, softmax_strip, titles_of
from .honest import wrapped


STAIR_GROWTH = 1.45  # a short stair of prefixes is set at most this much larger than its 28 px
CHEAT_LIFT = 0.4  # the lines over the boxed prefix rise this much to make room for the crossed-out arc


class Masking(Chapter):
    key = "masking"
    continues = ("grid",)

    def plan(self, setting) -> MaskingPlan:
        return plan_masking(setting)

    def play(self, stage: Stage, plan: MaskingPlan) -> None:
        say, th = stage.say, stage.theme
        tokens, layout = plan.tokens, plan.layout
        drawn = stage.drawn[self.key] = {}
        full = stage.region("full")
        aside = None
        if self.goes_on_from(stage) and stage.has("grid"):
            grid, _ = ensure_grid(stage, plan.head_trace, tokens, layout, "none", "cleared")
            aside = VGroup(grid, titles_of(stage))
            aside.save_state()
            panel = stage.region("panel")
            room = Region("aside", panel.left, panel.right, panel.top - 3.2, panel.top)
            aside.generate_target()
            aside.target.scale(min(room.width / aside.width, room.height / aside.height)).move_to(room.center)
            # it waits out of sight (an empty grid in a corner, its words too small to read, looked like a
            # leftover) and comes back from there when the stair is done
            aside.target.set_opacity(0.0)
            stage.play(MoveToTarget(aside), run_time=1.0)
            area = full  # (the grid waits out of sight: the stair may take the whole frame, review 51)
        else:
            stage.clear()
            area = full

        # 1. why: every prefix guesses its next word, all in one pass
        stair, answers, heading = self.stair(stage, plan, area)
        drawn.update(stair=stair, heading=heading)
        with stage.narrating(say("grid.masking.learn")):
            lines = [LaggedStart(*(FadeIn(m, shift=RIGHT * 0.15) for m in stair), lag_ratio=0.15)] if len(stair) else []
            stage.play(FadeIn(heading), *lines, run_time=2.0)
            stage.wait(0.3)
            if answers:
                stage.play(*(Transform(g, a) for g, a in answers.values()), run_time=1.0)
            stage.wait(0.5)
        if plan.cheat in answers:
            self.cheat(stage, plan, stair, heading)

        # 2. the grid: every pair is scored; the blocked ones become −∞
        with stage.narrating(say("grid.masking.back")):
            going = [m for m in stage.mobjects if aside is None or m not in (aside[0], aside[1])]
            stage.play(*(FadeOut(m) for m in going), run_time=0.6)
            stage.remove(*going)
            if aside is not None:
                grid = aside[0]
                grid.set_mask("hidden")
                stage.play(Restore(aside), run_time=0.8)
                # the grid and its titles stand on stage on their own again, for the next chapter
                stage.remove(aside)
                stage.add(*aside.submobjects)
            else:
                grid, titles = new_grid(stage, plan.head_trace, tokens, layout, tag=True)
                stage.hand_on(grid=grid, grid_titles=titles)
                stage.play(FadeIn(grid), FadeIn(titles), run_time=0.8)
            stage.play(show_scores(grid, 1.2))
            stage.wait(0.4)
        drawn.update(grid=grid, scores=dict(grid.number_mobs))
        # the rule beside the grid, in the panel the softmax strip takes next (review 51: the grid left, the
        # right half empty): a blocked cell's look and what it means; then e^(−∞) = 0 with the weights
        rule, rule_all = self.rule_notes(stage, grid)
        drawn.update(rule=rule, rule_all=rule_all)
        with stage.narrating(say("grid.masking.minus_inf")):
            stage.play(grid.reveal_mask(run_time=2.5), FadeIn(rule, run_time=1.0))
            stage.wait(0.5)
        stage.play(FadeOut(rule), run_time=0.4)
        stage.remove(rule)
        drawn.update(minus_inf=dict(grid.mask_number_mobs), scores_after_mask=dict(grid.number_mobs))

        q = plan.strip_query
        sm = softmax_strip(stage, grid, q)
        drawn["strip"] = sm
        # what the caption says of the red zeros, under the strip where it fits (review 52: said, not shown)
        exp_zero = math("e^(-infinity) = 0", NOTE_FS * MATH_PER_TEXT, th.mask)
        exp_zero.next_to(sm.box, DOWN, buff=0.2)
        if exp_zero.get_bottom()[1] < stage.region("full").bottom + 0.05:
            exp_zero = VGroup()
        drawn["exp_zero"] = exp_zero
        with stage.narrating(say(f"grid.masking.strip_{layout}", query=say.quote(tokens[q]))):
            stage.play(sm.lift())
            stage.play(sm.normalize(), FadeIn(exp_zero))
            stage.wait(0.8)
        # the block about the visible weights ends on them: the column settles back under the next caption
        # this block's own step: the visible keys' weights and their sum outlined (the blocked ones dimmed)
        seen = [i for i, k in enumerate(sm.shown_keys) if not grid.mask[q, k]]
        hidden = [i for i, k in enumerate(sm.shown_keys) if grid.mask[q, k]]
        outline = VGroup(
            SurroundingRectangle(VGroup(*(sm.key_labels[i] for i in seen), *(sm.weight_mobs[i] for i in seen)),
                                 color=th.query, buff=0.08, stroke_width=2.5),
            SurroundingRectangle(sm.sum_row, color=th.query, buff=0.08, stroke_width=2.5)) if seen else VGroup()
        faded = VGroup(*(sm.key_labels[i] for i in hidden), *(sm.weight_mobs[i] for i in hidden))
        drawn["visible_outline"] = outline
        with stage.narrating(say("grid.masking.visible", count=plan.strip_visible)):
            stage.play(Create(outline), faded.animate.set_opacity(0.35), run_time=0.8)
            stage.play(Indicate(sm.sum_row, color=th.query), run_time=1.0)
            stage.wait(0.6)
        sums = query_sums(stage, grid)
        with stage.narrating(say(f"grid.masking.all_{layout}")):
            stage.play(FadeOut(outline), faded.animate.set_opacity(1.0), FadeOut(exp_zero), run_time=0.4)
            stage.remove(exp_zero)
            stage.play(sm.settle())
            stage.play(grid.clear_mask(run_time=1.2), grid.show_weights(run_time=1.2))
            stage.play(FadeIn(sums, lag_ratio=0.05), FadeIn(rule_all), run_time=0.8)
            stage.wait(1.0)
        drawn.update(weights=dict(grid.number_mobs), sums=sums.numbers, sums_group=sums)

    @staticmethod
    def rule_notes(stage: Stage, grid) -> tuple[VGroup, VGroup]:
        """The panel's key: a blocked cell as the grid draws it ("−∞" in red in its red square) beside "a key
        after its query"; and, with the weights (no −∞ left on the grid: review 52), e^(−∞) = 0 beside "a
        blocked key gets no weight". Two notes of one line each."""
        say, th = stage.say, stage.theme

        def blocked_cell():
            side = 0.62
            square = Rectangle(width=side * 1.45, height=side, stroke_color=th.mask, stroke_width=2.5)
            square.set_fill(th.mask, opacity=0.12)
            return VGroup(square, number(float("-inf"), "score", font_size=NOTE_FS, color=th.mask).move_to(square))

        panel = stage.region("panel")

        def lines(pairs) -> VGroup:  # each symbol, its words wrapped beside it (one column), first line on it
            column = max(sym.width for sym, _ in pairs) + 0.3
            rows = []
            for sym, key in pairs:
                words = wrapped(say(key), panel.width - column, NOTE_FS, th.text, 3)
                sym.move_to([panel.left + sym.width / 2, 0, 0])
                words.move_to([panel.left + column + words.width / 2, 0, 0])
                words.shift(UP * (sym.get_y() - words[0].get_y()))
                rows.append(VGroup(sym, words))
            out = VGroup(*rows).arrange(DOWN, buff=0.4, aligned_edge=LEFT)  # (arrange centres the group)
            return out.shift(RIGHT * (panel.left - out.get_left()[0])).set_y(stage.region("grid").center[1])

        return (lines([(blocked_cell(), "grid.masking.key_blocked")]),
                lines([(math("e^(-infinity) = 0", NOTE_FS * MATH_PER_TEXT, th.text), "grid.masking.zero_weight")]))

    # --- the stair of prefixes ------------------------------------------------------------------
    @staticmethod
    def stair(stage: Stage, plan: MaskingPlan, area: Region):
        """Every prefix with an arrow to "?" (and the next word it will turn into), one per line,
        under a heading; returns (lines, {prefix end: (guess, answer)}, heading)."""
        say, th = stage.say, stage.theme
        tokens = plan.tokens
        n_lines = len(plan.stair)
        fs = 28 if n_lines <= 8 else 22
        row_h = min(0.62, 5.6 / max(n_lines, 1))
        left = area.left + 0.25
        y_top = area.center[1] + 0.2 + (n_lines - 1) * row_h / 2
        stair, answers = VGroup(), {}
        for r, (p, text) in enumerate(zip(plan.stair, plan.prefix_texts)):
            y = y_top - r * row_h
            if p is None:
                stair.add(label("⋮", fs, th.dim).move_to([left + 0.7, y, 0]))
                continue
            pre = label(text, fs, th.text)
            pre.move_to([left + pre.width / 2, y, 0])
            arrow = Arrow(pre.get_right() + RIGHT * 0.1, pre.get_right() + RIGHT * 0.75, buff=0, color=th.dim,
                          stroke_width=2.5, max_tip_length_to_length_ratio=0.3)
            guess = label("?", fs, th.query).next_to(arrow, RIGHT, buff=0.12)
            ans = label(tokens[p + 1], fs, th.key).next_to(arrow, RIGHT, buff=0.12)
            for m in (guess, ans):  # on the prefix's baseline
                m.shift(UP * (text_baseline(pre) - text_baseline(m)))
            line = VGroup(pre, arrow, guess)
            line.prefix_end = p
            stair.add(line)
            answers[p] = (guess, ans)
        if not answers:  # a single word: no prefix has a next word
            heading = label(say("grid.masking.heading_one"), 26, th.dim)
            area.fit(heading)
            return VGroup(), {}, heading
        heading = label(say("grid.masking.heading"), 26, th.dim)
        every = VGroup(stair, *(a for _, a in answers.values()))
        width = area.width - 0.5
        if every.width > width:
            every.scale_to_fit_width(width)
            every.shift(RIGHT * (left - every.get_left()[0]))
        elif every.width < 0.8 * width:  # a short stair grows into its room (review 50: a third of the frame empty)
            # (room kept over it for the heading, its gap and the cheat's lift of the lines above)
            room = area.height - 1.2 * heading.height - 0.5 - CHEAT_LIFT - 0.9
            k = min(0.85 * width / every.width, room / every.height, STAIR_GROWTH)
            if k > 1:
                every.scale(k, about_point=np.array([left, every.get_center()[1], 0.0]))
                heading.scale(min(k, 1.2))
        if heading.width > width:
            heading.scale_to_fit_width(width)
        heading.next_to(every, UP, buff=0.5).align_to(every, LEFT)
        over = heading.get_top()[1] - (area.top - 0.35 - CHEAT_LIFT)
        if over > 0:  # the lift must not push the heading off the frame
            VGroup(every, heading).shift(DOWN * over)
        return stair, answers, heading

    @staticmethod
    def cheat(stage: Stage, plan: MaskingPlan, stair: VGroup, heading) -> None:
        """The focus's prefix boxed, a crossed-out arc from its answer back into it."""
        say, th = stage.say, stage.theme
        p = plan.cheat
        line = next(m for m in stair if getattr(m, "prefix_end", None) == p)
        pre, ans = line[0], line[2]  # the guess, now the answer
        box = SurroundingRectangle(VGroup(pre, ans), color=th.query, buff=0.08, stroke_width=2.5)
        # from over the box, not from inside it: the arc and its ✕ crossed the box's top edge (review 49)
        start = np.array([ans.get_x(), box.get_top()[1] + 0.06, 0.0])
        end = np.array([pre.get_right()[0] - 0.3, box.get_top()[1] + 0.06, 0.0])
        arc = CurvedArrow(start, end, angle=0.7, color=th.mask, stroke_width=3, tip_length=0.15)
        mid = arc.point_from_proportion(0.5)
        cross = VGroup(Line(mid + [-0.14, -0.14, 0], mid + [0.14, 0.14, 0]),
                       Line(mid + [-0.14, 0.14, 0], mid + [0.14, -0.14, 0])).set_stroke(th.mask, 5)
        stage.drawn["masking"].update(cheat_box=box, cheat_arc=arc)
        with stage.narrating(say("grid.masking.cheat", word=say.quote(plan.tokens[p]),
                                 next=say.quote(plan.tokens[p + 1]))):
            # the lines above make room for the crossed-out arc, so that it crosses no word
            lift = UP * CHEAT_LIFT
            above = [m for m in stair if m is not line and m.get_y() > line.get_y()]
            below = [m for m in stair if m is not line and m not in above]
            stage.play(FadeIn(box), *(m.animate.set_opacity(0.35) for m in below),
                       *(m.animate.set_opacity(0.35).shift(lift) for m in above),
                       *([heading.animate.shift(lift)] if above else []), run_time=0.6)
            stage.play(FadeIn(arc), run_time=0.8)
            stage.play(FadeIn(cross, scale=1.5), run_time=0.5)
            stage.wait(0.8)

