"""`flash_attention`: the n × n grid of scores is drawn only as a ghost (it never exists in memory).
One block of queries meets the blocks of keys and values one after another; the block's real
scores light up in its tile, and the running maximum m, running sum l and rescaled output O of
each of its rows are updated beside the grid. The other query blocks do the same; the result O / l
equals the model's own head output to the printed digit, and both ways' peak memory is counted."""

from __future__ import annotations

from manim import DOWN, LEFT, PI, RIGHT, UP, FadeIn, FadeOut, Rectangle, Square, Transform, VGroup

from ..components.number_table import aligned_rows
from ..components.text import label
from ..components.vectors import math
from ..lesson import Chapter
from ..plans.flash import O_SHOWN, FlashPlan, plan_flash
from ..stage import Stage
from .embedding_parts import fit_into
from .head_split import fixed, tiny

T = "blocks.flash"


def score_text(x: float) -> str:
    return "−∞" if x == float("-inf") else fixed(x, 1)


class Flash(Chapter):
    key = "flash"

    def plan(self, setting) -> FlashPlan:
        return plan_flash(setting)

    def play(self, stage: Stage, plan: FlashPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        drawn: dict = {"tiles": []}
        stage.drawn[self.key] = drawn
        res = plan.result
        n = len(plan.tokens)
        title = label(say(f"{T}.title", layer=plan.layer, head=plan.head), 30, th.text)
        stage.region("title").fit(title)
        top = title.get_bottom()[1] - 0.3
        size = min(0.52, (top - full.bottom - 1.8) / n)  # room on the right for the running numbers
        video = plan.layout == "video"

        def at(i: int, j: int):
            """Centre of the cell of query i and key j (video: keys as rows, queries as columns)."""
            r, c = (j, i) if video else (i, j)
            return [full.left + 1.3 + (c + 0.5) * size, top - 1.1 - (r + 0.5) * size, 0]

        cells = VGroup(*(Square(size, stroke_width=1, color=th.dim, stroke_opacity=0.45)
                         .move_to(at(i, j)) for i in range(n) for j in range(n)))
        qlab = VGroup(*(label(t, 16, th.query) for t in plan.tokens))
        klab = VGroup(*(label(t, 16, th.key) for t in plan.tokens))
        for t, m in enumerate(qlab):
            fit_into(m, 1.1, size * 0.8)
            if video:  # on top of the columns: turned to read upwards
                m.rotate(PI / 2).move_to(at(t, 0)).shift(UP * (size / 2 + 0.1 + m.height / 2))
            else:
                m.move_to(at(t, 0)).shift(LEFT * (size / 2 + 0.1 + m.width / 2))
        for t, m in enumerate(klab):
            fit_into(m, 1.1, size * 0.8)
            if video:
                m.move_to(at(0, t)).shift(LEFT * (size / 2 + 0.1 + m.width / 2))
            else:
                m.rotate(PI / 2).move_to(at(0, t)).shift(UP * (size / 2 + 0.1 + m.height / 2))
        ghost = label(say(f"{T}.ghost", n=n, cells=n * n), 18, th.dim)
        fit_into(ghost, n * size + 1.0, 0.4).next_to(cells, DOWN, buff=0.2)
        with stage.narrating(say(f"{T}.caption_ghost", n=n, cells=n * n)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(qlab), FadeIn(klab), run_time=0.8)
            stage.play(FadeIn(cells, lag_ratio=0.01), FadeIn(ghost), run_time=1.0)
        with stage.narrating(say(f"{T}.caption_blocks", bq=res.block_q, bk=res.block_k,
                                 count=plan.n_key_blocks)):
            stage.wait(0.5)

        # the followed query block, key block after key block
        panel_left = cells.get_right()[0] + 0.5
        panel = None
        tile = None
        shown_scores: list = []
        for k, s in enumerate(plan.steps):
            (r0, r1), (c0, c1) = s.rows, s.cols
            corners = VGroup(*(Square(size).move_to(at(i, j)) for i in range(r0, r1) for j in range(c0, c1)))
            new_tile = Rectangle(width=corners.width, height=corners.height, color=th.highlight,
                                 stroke_width=3).move_to(corners)
            nums = VGroup()
            if not s.skipped:
                for a, i in enumerate(range(r0, r1)):
                    for b, j in enumerate(range(c0, c1)):
                        m = label(score_text(float(s.scores[a, b])), 14, th.text if s.scores[a, b] > -1e300 else th.mask)
                        nums.add(fit_into(m, size * 0.9, size * 0.5).move_to(at(i, j)))
            new_panel = self.panel(stage, plan, s)
            fit_into(new_panel, full.right - panel_left, 3.6)
            new_panel.move_to([panel_left + new_panel.width / 2, cells.get_center()[1], 0])
            with stage.narrating(self.caption(stage, plan, s, k)):
                anims = [FadeIn(nums)]
                anims.append(FadeIn(new_tile) if tile is None else Transform(tile, new_tile))
                anims.append(FadeIn(new_panel) if panel is None else Transform(panel, new_panel))
                anims += [m.animate.set_opacity(0.25) for m in shown_scores if len(m)]
                stage.play(*anims, run_time=0.9)
                stage.wait(0.4)
            if tile is None:
                tile = new_tile
            if panel is None:
                panel = new_panel
            shown_scores.append(nums)
            drawn["tiles"].append((s.rows, s.cols, s.skipped))

        # the other query blocks, quickly
        others = [s for s in res.steps if s.q_block != plan.q_block and not s.skipped]
        with stage.narrating(say(f"{T}.caption_others", count=plan.n_query_blocks - 1, skipped=plan.skipped)):
            fades = [FadeOut(m) for m in shown_scores if len(m)]
            if fades:
                stage.play(*fades, run_time=0.4)
            for s in others:
                (r0, r1), (c0, c1) = s.rows, s.cols
                corners = VGroup(*(Square(size).move_to(at(i, j)) for i in range(r0, r1) for j in range(c0, c1)))
                stage.play(tile.animate.move_to(corners).stretch_to_fit_width(corners.width)
                           .stretch_to_fit_height(corners.height), run_time=0.15)
        drawn["panel"] = panel
        self.finish(stage, plan, drawn, VGroup(cells, qlab, klab, ghost, tile))

    @staticmethod
    def caption(stage: Stage, plan: FlashPlan, s, k: int) -> str:
        say = stage.say
        if s.skipped:
            return say(f"{T}.caption_skipped")
        if k == 0:
            return say(f"{T}.caption_first", count=s.rows[1] - s.rows[0])
        shrink = float(s.rescale.min())
        if shrink < 1.0:
            return say(f"{T}.caption_next", rescale=shrink)
        return say(f"{T}.caption_next_same")

    @staticmethod
    def panel(stage: Stage, plan: FlashPlan, s) -> VGroup:
        """The followed block's rows: token, running max m, running sum l, the first entries of O."""
        th = stage.theme
        head = [label("", 16, th.text), math("m", 24, th.highlight), math("l", 24, th.highlight)] + \
            [math(f"O_{j + 1}", 24, th.value) for j in range(O_SHOWN)]
        rows = [head]
        for a, i in enumerate(range(*s.rows)):
            rows.append([label(plan.tokens[i], 18, th.query), label(score_text(float(s.m[a])), 20, th.text),
                         label(fixed(float(s.l[a]), 2), 20, th.text)] +
                        [label(fixed(float(s.O[a, j]), 2), 20, th.text) for j in range(O_SHOWN)])
        return aligned_rows(rows, col_gap=0.3, row_step=0.5)

    def finish(self, stage: Stage, plan: FlashPlan, drawn: dict, grid: VGroup) -> None:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        r0 = plan.q_block * plan.result.block_q
        r1 = min(r0 + plan.result.block_q, len(plan.tokens))
        d = plan.decimals
        rows = VGroup()
        for i in range(r0, r1):
            tiled = "  ".join(fixed(plan.result.output[i, j], d) for j in range(O_SHOWN))
            model = "  ".join(fixed(plan.trace_z[i, j], d) for j in range(O_SHOWN))
            both = VGroup(label(say(f"{T}.tiled_row", values=tiled), 22, th.value),
                          label(say(f"{T}.model_row", values=model), 22, th.delta_multi)).arrange(
                DOWN, aligned_edge=LEFT, buff=0.08)
            rows.add(VGroup(label(plan.tokens[i], 22, th.query), both).arrange(RIGHT, buff=0.3, aligned_edge=UP))
        rows.arrange(DOWN, aligned_edge=LEFT, buff=0.2)
        diff = label(say(f"{T}.max_diff", diff=tiny(say, plan.max_diff_trace)), 22, th.highlight)
        memory = VGroup(label(say(f"{T}.memory_ordinary", n=len(plan.tokens), count=plan.result.peak_ordinary), 22, th.text),
                        label(say(f"{T}.memory_tiled", bq=plan.result.block_q, bk=plan.result.block_k,
                                  d=plan.result.d, count=plan.result.peak_tiled), 22, th.text),
                        label(say(f"{T}.memory_ctx", n=plan.n_ctx, ordinary=plan.ctx_ordinary, tiled=plan.ctx_tiled),
                              22, th.dim)).arrange(DOWN, aligned_edge=LEFT, buff=0.12)
        box = VGroup(rows, diff, memory).arrange(DOWN, aligned_edge=LEFT, buff=0.25)
        left = grid.get_right()[0] + 0.4
        fit_into(box, full.right - 0.2 - left, full.top - full.bottom - 1.5)
        box.move_to([left + box.width / 2, grid.get_center()[1], 0])
        with stage.narrating(say(f"{T}.caption_equal", decimals=d, diff=tiny(say, plan.max_diff_trace))):
            stage.play(FadeOut(drawn["panel"]), run_time=0.4)
            stage.play(FadeIn(rows), FadeIn(diff), run_time=1.0)
            stage.wait(0.5)
        key = f"{T}.caption_memory" if plan.result.peak_tiled < plan.result.peak_ordinary else f"{T}.caption_memory_short"
        with stage.narrating(say(key, ordinary=plan.result.peak_ordinary,
                                 tiled=plan.result.peak_tiled, n=plan.n_ctx, big=plan.ctx_ordinary)):
            stage.play(FadeIn(memory, shift=UP * 0.1), run_time=0.8)
            stage.wait(1.0)
        drawn.update(result=rows, memory=memory)
