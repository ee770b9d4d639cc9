"""`flash_attention`: the n × n grid of scores is drawn only as a ghost (it never exists in memory).
One block of queries meets the blocks of keys and values one after another; the block's real
scores light up in its tile, and the running maximum m, running sum l and rescaled output O of
each of its rows are updated beside the grid. The other query blocks do the same; the result O / l
equals the model's own head output to the printed digit, and both ways' peak memory is counted."""

from __future__ import annotations

import re
from math import floor, log10

import numpy as np

from manim import (
    DOWN, LEFT, PI, RIGHT, UP, BackgroundRectangle, FadeIn, FadeOut, Rectangle, Square, Transform, VGroup,
)

from ..components.number_table import aligned_rows
from ..components.text import label, rich_lines
from ..components.vectors import math
from ..lesson import Chapter
from ..components.log_bars import LogBars
from ..review import MIN_NUMBER_PX, PX_PER_UNIT_720
from ..plans.flash import BYTES_PER_NUMBER, O_SHOWN, FlashPlan, plan_flash
from ..stage import Stage
from ..style import byte_text
from .beyond_parts import diff_line
from .embedding_parts import fit_alike, fit_into
from .grid_parts import side_title
from .head_split import fixed, grouped, tiny
from .honest import wrapped

T = "blocks.flash"
HELD_OPACITY, TILE_OPACITY = 0.28, 0.45  # the memory frame: every score ordinary attention holds, the one tile flash holds
PANEL_H = 5.4  # a step's panel at most this tall (its notes under the table; at 4.2 SmolLM2's shrank under 14 px)
AXIS_NAME_ROOM = 0.3  # beside the level labels: the side axis's name ("keys" or "queries")
SCORE_FILL = 0.85  # the widest score in a tile takes at most this share of a cell's width (a gap
# of 0.075 cell, 3.6 px, each side of it, clear of the cell's lines)
LABEL_ROOM = 0.85  # the turned token labels over the columns take at most this: the rest goes to the cells,
# so that a tile's signed scores read at 14 px


def score_text(x: float) -> str:
    return "−∞" if x == float("-inf") else fixed(x, 1)


def tied_queries(steps) -> dict[int, tuple[float, float]]:
    """The queries one of whose tiles holds two scores that one decimal shows equal though they are
    not (5.29 and 5.34 both read 5.3, and l = 1.96 beside them looks wrong), each with such a pair."""
    tied = {}
    for s in steps:
        if s.skipped:
            continue
        for a, i in enumerate(range(*s.rows)):
            xs = [float(x) for x in np.ravel(s.scores[a]) if np.isfinite(x)]
            for u in range(len(xs)):
                for v in range(u + 1, len(xs)):
                    if i not in tied and score_text(xs[u]) == score_text(xs[v]) and fixed(xs[u], 2) != fixed(xs[v], 2):
                        tied[i] = (min(xs[u], xs[v]), max(xs[u], xs[v]))
    return tied


def tile_text(x: float, decimals: int) -> str:
    """A score in its tile (and a running maximum in the panel): every one to the same decimals. (No "+" as the
    other grids write: a tile's cell is narrower, and on a longer sentence "+11.56" read under 14 px: review 52.)"""
    return fixed(x, decimals) if np.isfinite(x) else score_text(x)


def score_decimals(tied: dict, digit_px_at) -> int:
    """Two decimals for every score where one decimal would show two different scores equal and the
    cell still holds the widest two-decimal score at a readable size (digit_px_at(2) px at 720p);
    otherwise one, and the panel names the tie. One column never mixes "−3.8" with "5.29"."""
    return 2 if tied and digit_px_at(2) >= MIN_NUMBER_PX else 1


def tie_notes(say, th, plan: FlashPlan, s, tied: dict, width: float) -> list:
    """Under a step's table: for each of its rows whose tile shows two scores equal at one decimal
    (where two decimals do not fit), the two scores to two decimals."""
    notes = []
    for a, i in enumerate(range(*s.rows)):
        pair = tied.get(i)
        if pair and not s.skipped and all(np.isclose(np.ravel(s.scores[a]), x).any() for x in pair):
            notes.append(wrapped(say(f"{T}.tie", word=say.quote(plan.tokens[i]), shown=score_text(pair[0]),
                                     a=fixed(pair[0], 2), b=fixed(pair[1], 2)), width, 22, th.dim, 2))
    return notes


def l_from_shown(plan: FlashPlan, s, a: int, decimals: int) -> float | None:
    """Row `a`'s running sum l as a student works it out from the rounded numbers the tiles have shown so far:
    Σ exp(score − m) over the row's scores of this and the earlier key blocks and the largest of them, each as
    written (`decimals`). None where the row has no finite score yet."""
    if s.skipped or not np.isfinite(s.m[a]):
        return None
    steps = [t for t in plan.result.steps if t.q_block == s.q_block and t.k_block <= s.k_block and not t.skipped]
    scores = [round(float(x), decimals) for t in steps for x in t.scores[a] if np.isfinite(x)]
    m = max(scores)
    return float(sum(np.exp(x - m) for x in scores))


def unrounded_notes(say, th, plan: FlashPlan, s, decimals: int, width: float) -> list:
    """Under a step's table, where a row's l, worked out from the rounded numbers on screen, is not the l written
    (creature's 5.29 and 5.34 give 1.95, the unrounded scores 1.96: review 50): both sums for the first such row,
    the other such rows named (one note: a note per row shrank SmolLM2's panel under 14 px)."""
    missed = []
    for a, i in enumerate(range(*s.rows)):
        shown = l_from_shown(plan, s, a, decimals)
        if shown is not None and fixed(shown, 2) != fixed(float(s.l[a]), 2):
            missed.append((i, a, shown))
    if not missed:
        return []
    i, a, shown = missed[0]
    values = {"word": say.quote(plan.tokens[i]), "value": fixed(float(s.l[a]), 2), "shown": fixed(shown, 2)}
    key = f"{T}.l_unrounded"
    if len(missed) > 1:
        key, values["others"] = f"{T}.l_unrounded_more", ", ".join(say.quote(plan.tokens[j]) for j, _, _ in missed[1:])
    symbols = {"l": math("l", 24, th.dim), "sum": math("Sigma e^(s - m)", 24, th.dim)}
    return [rich_lines(say.catalog[key], values, width, font_size=20, color=th.dim, mobjects=symbols)]


def factor_digits(x: float) -> int:
    """Decimals for a rescaling factor: three, more when it is smaller (two significant digits), at most eight."""
    return 3 if x <= 0 else min(8, max(3, 1 - floor(log10(x))))


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
        drawn["title"] = title
        top = title.get_bottom()[1] - 0.15
        video = plan.layout == "video"
        # the longest token, turned, stands above the columns (video) or beside the rows (paper)
        probe = max((label(t, 20, th.text) for t in plan.tokens), key=lambda m: m.width)
        # the turned labels' room over the grid, the level labels' beside it (width is not short), and room
        # beside those for the side axis name ("queries", "keys": colour alone had said which was which)
        lab = min(probe.width, LABEL_ROOM) + 0.15
        side = min(probe.width, 1.4) + 0.15 + AXIS_NAME_ROOM
        bottom = full.bottom + 0.45  # room under the grid for the ghost line
        # (the side name's room comes out of the panel's half, not out of the cells: scores stay at 14 px)
        size = min(0.72, (top - lab - bottom) / n, (full.width * 0.5 - side + AXIS_NAME_ROOM) / n)
        gx = full.left + side + 0.1

        def at(i: int, j: int):
            """Centre of the cell of query i and key j (video: keys as rows, queries as columns)."""
            r, c = (j, i) if video else (i, j)
            return [gx + (c + 0.5) * size, top - lab - (r + 0.5) * size, 0]

        cells = VGroup(*(Square(size, stroke_width=1, color=th.dim, stroke_opacity=0.45)
                         .move_to(at(i, j)) for i in range(n) for j in range(n)))
        qlab = VGroup(*(label(t, 20, th.query) for t in plan.tokens))
        klab = VGroup(*(label(t, 20, th.key) for t in plan.tokens))
        fit_alike(qlab, (lab if video else side) - 0.15, size * 0.8)  # one size for an axis's labels
        fit_alike(klab, (side if video else lab) - 0.15, size * 0.8)
        for t, m in enumerate(qlab):
            if video:  # on top of the columns: turned to read upwards
                m.rotate(PI / 2).move_to(at(t, 0)).shift(UP * (size / 2 + 0.08 + m.height / 2))
            else:
                m.move_to(at(t, 0)).shift(LEFT * (size / 2 + 0.08 + m.width / 2))
        for t, m in enumerate(klab):
            if video:
                m.move_to(at(0, t)).shift(LEFT * (size / 2 + 0.08 + m.width / 2))
            else:
                m.rotate(PI / 2).move_to(at(0, t)).shift(UP * (size / 2 + 0.08 + m.height / 2))
        drawn["token_labels"] = (qlab, klab)
        top_labels, side_labels = (qlab, klab) if video else (klab, qlab)
        names = ((say("grid.axes.queries"), th.query), (say("grid.axes.keys"), th.key))
        (top_text, top_color), (side_text, side_color) = names if video else names[::-1]
        # the top axis's name in the corner over the side labels, pointing along the top labels (over them
        # it would take the height the scores need)
        top_name = label(f"{top_text} →", 22, top_color)
        fit_into(top_name, side - 0.1, 0.4)
        top_name.move_to([cells.get_left()[0] - 0.12 - top_name.width / 2, cells.get_top()[1] + 0.12 + top_name.height / 2, 0])
        side_name = side_title(side_text, 22, side_color).next_to(side_labels, LEFT, buff=0.1).set_y(cells.get_y())
        axis_names = VGroup(top_name, side_name)
        drawn["axis_names"] = axis_names
        ghost = label(say(f"{T}.ghost", n=n, cells=n * n), 20, th.dim)
        fit_into(ghost, n * size + side, 0.4).next_to(cells, DOWN, buff=0.15)
        with stage.narrating(say(f"{T}.caption_ghost", n=n, cells=n * n)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(qlab), FadeIn(klab), FadeIn(axis_names), run_time=0.8)
            stage.play(FadeIn(cells, lag_ratio=0.01), FadeIn(ghost), run_time=1.0)
        panel_box = (cells.get_right()[0] + 0.5, full.right, cells.get_center()[1])
        # the grid cut into tiles: a query block (the plan's block_q) against a key block (block_k),
        # each tile outlined, and what a block holds said beside the grid
        outlines = self.tiles(stage, plan, at, size)
        legend = self.tiles_legend(stage, plan)
        fit_into(legend, panel_box[1] - panel_box[0], 2.5)
        legend.move_to([(panel_box[0] + panel_box[1]) / 2, panel_box[2], 0])
        drawn.update(outlines=outlines, tiles_legend=legend)
        with stage.narrating(say(f"{T}.caption_blocks", bq=res.block_q, bk=res.block_k,
                                 count=plan.n_key_blocks)):
            stage.play(FadeIn(outlines, lag_ratio=0.05), FadeIn(legend), run_time=1.0)
            stage.wait(0.5)

        # one size for every score, set by the cell: the widest signed score fills at most
        # SCORE_FILL of a cell's width, so neighbours keep a gap and stay inside the grid
        def fitted_size(decimals: int) -> float:
            widest = max((tile_text(float(x), decimals) for st in res.steps if not st.skipped
                          for x in np.ravel(st.scores)), key=len, default="−0.0")
            probe = label(widest, 18, th.text)
            return 18 * min(1.0, SCORE_FILL * size / probe.width, 0.5 * size / probe.height)

        tied = tied_queries(res.steps)
        decimals = score_decimals(tied, lambda d: label("0", fitted_size(d), th.text).height * PX_PER_UNIT_720)
        score_size = fitted_size(decimals)
        state = {"tile": None, "panel": None, "scores": []}
        drawn.update(tied=tied, decimals=decimals)

        def show(s, k: int, caption: str | None, run_time: float, wait: float) -> None:
            """One (query block, key block) step: its real scores in its tile (a skipped tile is
            marked so), and the rows' m, l, O after it in the panel."""
            (r0, r1), (c0, c1) = s.rows, s.cols
            corners = VGroup(*(Square(size).move_to(at(i, j)) for i in range(r0, r1) for j in range(c0, c1)))
            new_tile = Rectangle(width=corners.width, height=corners.height, color=th.highlight,
                                 stroke_width=3).move_to(corners)
            nums = VGroup()
            if s.skipped:
                new_tile.set_fill(th.mask, opacity=0.18)
                word = label(say(f"{T}.skipped"), 20, th.mask)
                fit_into(word, corners.width * 0.9, corners.height * 0.9).move_to(corners)
                # on a plate: the grid's lines run through the tile, not through the word
                nums.add(BackgroundRectangle(word, color=th.background, fill_opacity=0.9, buff=0.06), word)
            else:
                for a, i in enumerate(range(r0, r1)):
                    for b, j in enumerate(range(c0, c1)):
                        x = float(s.scores[a, b])
                        m = label(tile_text(x, decimals), score_size, th.text if x > -1e300 else th.mask)
                        m.value = x
                        nums.add(m.move_to(at(i, j)))
            new_panel = self.panel(stage, plan, s, decimals, {} if decimals == 2 else tied)
            left, right, y = panel_box
            fit_into(new_panel, right - left, PANEL_H)
            # its top where every step's stands (centred, a step with a longer note moved the table: review 52)
            new_panel.move_to([(left + right) / 2, y + PANEL_H / 2 - new_panel.height / 2, 0])
            drawn.setdefault("panel_tops", []).append(new_panel.get_top()[1])
            anims = [FadeIn(nums)]
            tile, panel = state["tile"], state["panel"]
            anims.append(FadeIn(new_tile) if tile is None else Transform(tile, new_tile))
            anims.append(FadeIn(new_panel))  # a fresh table: the step's own numbers, not morphed glyphs
            if panel is not None:
                anims.append(FadeOut(panel))
            else:  # the first step's panel takes the tiles' legend's place
                anims.append(FadeOut(legend))
            # the tile before is gone from memory: its scores leave the screen too (one tile at a time)
            anims += [FadeOut(m) for m in state["scores"] if len(m)]
            if caption is None:
                stage.play(*anims, run_time=run_time)
                stage.wait(wait)
            else:
                with stage.narrating(caption):
                    stage.play(*anims, run_time=run_time)
                    stage.wait(wait)
            state["tile"] = state["tile"] or new_tile
            state["panel"] = new_panel
            state["scores"] = [nums]

        # the followed query block, key block after key block
        for k, s in enumerate(plan.steps):
            show(s, k, self.caption(stage, plan, s, k), 0.9, 0.4)
            drawn["tiles"].append((s.rows, s.cols, s.skipped))

        # the other query blocks, each step with its own real scores and running numbers
        others = [s for s in res.steps if s.q_block != plan.q_block]
        with stage.narrating(say(f"{T}.caption_others", count=plan.n_query_blocks - 1, skipped=plan.skipped)):
            for s in others:
                if s.k_block == 0:  # a new query block: the previous block's scores go
                    stage.play(*(FadeOut(m) for m in state["scores"] if len(m)), run_time=0.3)
                    state["scores"] = []
                show(s, s.k_block, None, 0.5, 0.2)
                drawn.setdefault("others", []).append((s.rows, s.cols, s.skipped))
        # the last tile's scores stay while the caption is read, then go
        stage.play(*(FadeOut(m) for m in state["scores"] if len(m)), run_time=0.3)
        drawn["panel"] = state["panel"]
        self.finish(stage, plan, drawn, VGroup(cells, qlab, klab, ghost, outlines, state["tile"]))

    @staticmethod
    def tiles(stage: Stage, plan: FlashPlan, at, size: float) -> VGroup:
        """One outline per (query block, key block) tile of the grid, the plan's own block sizes
        (the last block of each kind possibly shorter)."""
        th = stage.theme
        n, bq, bk = len(plan.tokens), plan.result.block_q, plan.result.block_k
        out = VGroup()
        for r0 in range(0, n, bq):
            for c0 in range(0, n, bk):
                r1, c1 = min(r0 + bq, n), min(c0 + bk, n)
                a, b = at(r0, c0), at(r1 - 1, c1 - 1)
                w = abs(b[0] - a[0]) + size
                h = abs(b[1] - a[1]) + size
                out.add(Rectangle(width=w, height=h, color=th.text, stroke_width=2.5, stroke_opacity=0.8)
                        .move_to([(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, 0]))
        return out

    @staticmethod
    def tiles_legend(stage: Stage, plan: FlashPlan) -> VGroup:
        """What the tiles are: a query block's size, a key block's size, how many tiles."""
        th, say = stage.theme, stage.say
        r = plan.result
        lines = [label(say(f"{T}.tiles_q", count=r.block_q), 26, th.query),
                 label(say(f"{T}.tiles_k", count=r.block_k), 26, th.key),
                 label(say(f"{T}.tiles_count", nq=plan.n_query_blocks, nk=plan.n_key_blocks,
                           count=plan.n_query_blocks * plan.n_key_blocks), 26, th.text)]
        return VGroup(*lines).arrange(DOWN, aligned_edge=LEFT, buff=0.3)

    @staticmethod
    def caption(stage: Stage, plan: FlashPlan, s, k: int) -> str:
        say = stage.say
        if s.skipped:
            return say(f"{T}.caption_skipped")
        if k == 0:
            return say(f"{T}.caption_first", count=s.rows[1] - s.rows[0])
        fin = np.isfinite(s.m_before)
        shrink = float(s.rescale[fin].min()) if fin.any() else 1.0
        if shrink < 1.0:
            return say(f"{T}.caption_next", rescale=say.number(shrink, f".{factor_digits(shrink)}f"))
        return say(f"{T}.caption_next_same")

    @staticmethod
    def panel(stage: Stage, plan: FlashPlan, s, decimals: int = 1, tied: dict | None = None) -> VGroup:
        """The step's query rows after it: token, running max m, running sum l, the first entries
        of O (numbers right-aligned in their columns), under a line naming the step's two blocks
        and, when the maximum rose, the factor exp(old m − new m) the old l and O were multiplied by;
        a row whose tile shows two different scores equal (tied, where two decimals do not fit) is
        told under the table with the two scores to two decimals."""
        th, say = stage.theme, stage.say
        head = [label("", 22, th.text), math("m", 30, th.highlight), math("l", 30, th.highlight)] + \
            [math(f"O_{j + 1}", 30, th.value) for j in range(O_SHOWN)]
        rows = [head]
        for a, i in enumerate(range(*s.rows)):
            m = float(s.m[a])  # as its tile writes the score it came from
            rows.append([label(plan.tokens[i], 24, th.query),
                         label(tile_text(m, decimals), 26, th.text),
                         label(fixed(float(s.l[a]), 2), 26, th.text)] +
                        [label(fixed(float(s.O[a, j]), 2), 26, th.text) for j in range(O_SHOWN)])
        table = aligned_rows(rows, col_gap=0.45, row_step=0.6, align=["left"] + ["right"] * (2 + O_SHOWN))
        where = label(say(f"{T}.step", q=s.q_block + 1, nq=plan.n_query_blocks, k=s.k_block + 1,
                          nk=plan.n_key_blocks), 22, th.dim)
        # O₁, O₂ are entries of each row's O, not the outputs of queries 1 and 2: said under the table
        # (O₁, O₂ and O typeset as the headers write them, as the rescale note's l and O: review 43)
        o_note = rich_lines(say.catalog[f"{T}.o_entries"], {"shown": O_SHOWN, "d": plan.result.d},
                            max(table.width, where.width), font_size=20, color=th.dim,
                            mobjects={k: math(src, 24, th.dim) for k, src in (("O1", "O_1"), ("O2", "O_2"), ("O", "O"))})
        parts = [where, table, o_note]
        fin = np.isfinite(s.m_before)
        if not s.skipped and fin.any() and float(s.rescale[fin].min()) < 1.0:
            # the factor is a row's own (each row's maximum rose by its own amount): the smallest,
            # said with the row it belongs to
            a = int(np.flatnonzero(fin)[np.argmin(s.rescale[fin])])
            f = float(s.rescale[a])
            # l and O typeset as the table's headers write them (review 37: an upright l read as "old 1")
            symbols = {"l": math("l", 26, th.highlight), "O": math("O", 26, th.highlight)}
            parts.append(rich_lines(say.catalog[f"{T}.rescaled"], {"word": say.quote(plan.tokens[s.rows[0] + a]),
                                                                   "rescale": fixed(f, factor_digits(f))},
                                    max(table.width, where.width), font_size=22, color=th.highlight, mobjects=symbols))
        parts += tie_notes(say, th, plan, s, tied or {}, max(table.width, where.width))
        parts += unrounded_notes(say, th, plan, s, decimals, max(table.width, where.width))
        return VGroup(*parts).arrange(DOWN, aligned_edge=LEFT, buff=0.35)

    def finish(self, stage: Stage, plan: FlashPlan, drawn: dict, grid: VGroup) -> None:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        r0 = plan.q_block * plan.result.block_q
        r1 = min(r0 + plan.result.block_q, len(plan.tokens))
        d = plan.decimals
        # headed as the panel's table was (review 46: bare columns of figures read as no O at all), but as what
        # they are, the running O divided by its l: "O₁" here stood over 0.53 where it had read 1.06 (review 49)
        table = [[label("", 22, th.text), label("", 22, th.text)] +
                 [math(f"(O slash l)_{j + 1}", 28, th.text) for j in range(O_SHOWN)]]
        for i in range(r0, r1):
            for k, (name, values, color) in enumerate(((f"{T}.tiled_name", plan.result.output, th.value),
                                                       (f"{T}.model_name", plan.trace_z, th.delta_multi))):
                table.append([label(plan.tokens[i] if k == 0 else "", 22, th.query), label(say(name), 22, color)] +
                             [label(fixed(values[i, j], d), 22, color) for j in range(O_SHOWN)])
        rows = aligned_rows(table, col_gap=0.35, row_step=0.4, align=["left", "left"] + ["right"] * O_SHOWN)
        diff = diff_line(say, f"{T}.max_diff", plan.max_diff_trace, 22, th.highlight)
        box = VGroup(rows, diff).arrange(DOWN, aligned_edge=LEFT, buff=0.25)
        left = grid.get_right()[0] + 0.4
        fit_into(box, full.right - 0.2 - left, full.top - full.bottom - 1.5)
        box.move_to([left + box.width / 2, grid.get_center()[1], 0])
        with stage.narrating(say(f"{T}.caption_equal", decimals=d, diff=tiny(say, plan.max_diff_trace))):
            # the last tile's frame goes too: what follows is about every row, not that tile
            stage.play(FadeOut(drawn["panel"]), FadeOut(grid[-1]), run_time=0.4)
            stage.play(FadeIn(rows), FadeIn(diff), run_time=1.0)
            stage.wait(0.5)
        title = stage.drawn[self.key]["title"]
        top = title.get_bottom()[1] - 0.2
        left = grid.get_right()[0] + 0.25  # the chart takes all the room right of the grid: its ticks read at 14 px
        memory = memory_chart(stage, plan, full.right - 0.15 - left)
        # its last line above the grid's line under it (review 37: on one baseline the two read as one sentence)
        floor = max(full.bottom + 0.05, grid[3].get_top()[1] + 0.15)
        fit_into(memory, full.right - 0.15 - left, top - floor)
        memory.move_to([left + memory.width / 2, top - memory.height / 2, 0])
        key = f"{T}.caption_memory" if plan.result.peak_tiled < plan.result.peak_ordinary else f"{T}.caption_memory_short"
        # the grid says what the bars count, in their colours: ordinary attention holds every score of it,
        # flash one tile (the chart beside an empty grid read as a wall of text: review 48)
        cells, outlines = grid[0], grid[4]
        held = cells.copy().set_fill(th.delta_multi, opacity=HELD_OPACITY).set_stroke(opacity=0).set_z_index(-1)
        one_tile = outlines[0].copy().set_fill(th.highlight, opacity=TILE_OPACITY).set_stroke(th.highlight, width=3.5)
        with stage.narrating(say(key, ordinary=plan.result.peak_ordinary,
                                 tiled=plan.result.peak_tiled, n=plan.n_ctx, big=plan.ctx_ordinary)):
            stage.play(FadeOut(rows), FadeOut(diff), run_time=0.4)
            stage.play(FadeIn(memory, shift=UP * 0.1), FadeIn(held), run_time=0.8)
            stage.play(FadeIn(one_tile), run_time=0.5)
            stage.wait(1.2)
        drawn.update(result=rows, memory=memory, ghost=grid[3], held=held, one_tile=one_tile)  # (rows[0]: the headers)


def memory_chart(stage: Stage, plan: FlashPlan, width: float) -> VGroup:
    """Ordinary attention's n × n scores against flash's tile and running numbers, on this sentence
    and at the model's full context (its config's n_ctx), as bars on a log scale (model/flash.py's
    peak_floats); what flash's count is made of; what that is in bytes at full context."""
    th, say = stage.theme, stage.say
    r = plan.result
    n = len(plan.tokens)
    ordinary, tiled = say(f"{T}.memory_bar_ordinary"), say(f"{T}.memory_bar_tiled")

    # each bar says its count; what flash's count is made of is the legend under the chart
    groups = [
        (say(f"{T}.memory_sentence", count=n, n=grouped(n, say)),
         [(ordinary, r.peak_ordinary, grouped(r.peak_ordinary, say), th.delta_multi),
          (tiled, r.peak_tiled, grouped(r.peak_tiled, say), th.highlight)]),
        (say(f"{T}.memory_context", count=plan.n_ctx, n=grouped(plan.n_ctx, say)),
         [(ordinary, plan.ctx_ordinary, grouped(plan.ctx_ordinary, say), th.delta_multi),
          (tiled, plan.ctx_tiled, grouped(plan.ctx_tiled, say), th.highlight)]),
    ]
    chart = LogBars(groups, lambda factor: say(f"{T}.memory_axis", factor=factor), theme=th, font_size=26, row_step=0.58, bar_height=0.4,
                    max_width=width)
    head = wrapped(say(f"{T}.memory_title"), width, 30, th.text, 2)
    tag = label(f"{tiled} {grouped(r.peak_tiled, say)} =", 24, th.highlight)
    # what flash's count is made of, a line each (a sum such as "2 × 2 = 4" is never broken); m, l and O
    # typeset as the table's headers write them (review 44: upright, "m and sum l" read as words)
    def symbols(size: float, color: str) -> dict:
        return {k: math(k, size, color) for k in ("m", "l", "O")}

    def unbroken(key: str, **values) -> str:
        """The catalog's template with its figures written in (prose, as the tile's line: alone, each read as
        a table's number), its sums held together."""
        template = say.catalog[key]
        for name, value in values.items():
            template = template.replace("{" + name + "}", f"{value}")
        template = re.sub(r" ([×=+]) ", "\u00a0\\1\u00a0", template)
        # a symbol stays with the word that names it ("sum l:"): an "l:" alone at a line's start read as a stray
        # letter (review 47)
        return re.sub(r" (\{[mlO]\})", "\u00a0\\1", template)

    parts = VGroup(
        wrapped(re.sub(r" ([×=+]) ", "\u00a0\\1\u00a0", say(f"{T}.memory_tile", bq=plan.mem_bq, bk=plan.mem_bk,
                                                                count=plan.mem_tile)), width - 0.35, 26, th.text, 2),
        rich_lines(unbroken(f"{T}.memory_ml", bq=plan.mem_bq, count=plan.mem_ml), {}, width - 0.35, font_size=26,
                   color=th.text, mobjects=symbols(32, th.text))).arrange(DOWN, aligned_edge=LEFT, buff=0.1)
    parts.next_to(tag, DOWN, buff=0.1, aligned_edge=LEFT).shift(RIGHT * 0.35)
    # the running O is the output's own rows: left out of both counts, and said so
    out_note = rich_lines(unbroken(f"{T}.memory_o", bq=plan.mem_bq, d=r.d, count=plan.mem_o), {}, width,
                          font_size=22, color=th.dim, mobjects=symbols(27, th.dim))
    out_note.next_to(parts, DOWN, buff=0.18).align_to(tag, LEFT)  # (apart from the sums it is not one of)
    legend = VGroup(tag, parts, out_note)
    # a size and its unit ("16.4 kB") are never split across lines
    size = wrapped(say(f"{T}.memory_bytes", per=BYTES_PER_NUMBER, n=grouped(plan.n_ctx),
                       ordinary=byte_text(say, plan.ctx_bytes_ordinary).replace(" ", "\u00a0"),
                       tiled=byte_text(say, plan.ctx_bytes_tiled).replace(" ", "\u00a0")),
                   width, 24, th.dim, 2)
    # (0.25 apart: a Korean legend's extra line had shrunk the whole stack until its figures read at 13 px)
    out = VGroup(head, chart, legend, size).arrange(DOWN, aligned_edge=LEFT, buff=0.25)
    out.chart, out.legend, out.size = chart, legend, size
    return out
