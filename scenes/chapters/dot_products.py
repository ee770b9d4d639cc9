"""Dot products: every key against every query in a grid. K⃗ⱼ·Q⃗ᵢ in each cell, a close look at
one cell (the real dot product, divided by √d_head), the real scores, the focus's best keys
spotlit against a poor one, then dots sized by score.

Goes on from the query and key chapters: their vector columns (`stage.queries`, `stage.keys`)
turn into the grid's labels, the queries across the top and the keys down the side.
"""

from __future__ import annotations

import numpy as np
from manim import (
    DOWN, LEFT, PI, RIGHT, UP, FadeIn, FadeOut, Rectangle, ReplacementTransform, Restore, VGroup,
)

from ..components.attention_grid import AttentionGrid
from ..components.text import label, number, rich_line
from ..components.vectors import MATH_PER_TEXT, math, symbol_source
from ..lesson import Chapter
from ..plans.grid import DotProductsPlan, plan_dot_products
from ..stage import Stage
from .grid_parts import NOTE_FS, close_up, close_up_done, new_grid, panel_note, score_legend, show_scores, snapped_close_up

ZOOM = 0.45  # the close look at one cell: the camera frame at this fraction of its size
WIDE_ZOOM = 0.66  # ... or up to this, where the grid's whole width with its row labels then fits


def covered(grid: AttentionGrid, box) -> int:
    """How many of the grid's unmasked cells (those that hold a product) have their centre in `box` (x0, y0, x1, y1)."""
    x0, y0, x1, y1 = box
    c = grid.cell_centers()
    under = (c[..., 0] > x0) & (c[..., 0] < x1) & (c[..., 1] > y0) & (c[..., 1] < y1)
    return int((under & ~np.asarray(grid.mask, bool)).sum())


def card_shift(grid: AttentionGrid, card, lean, lowest: float) -> np.ndarray:
    """Where to move a card that stands under its cell: leaning a whole number of cells into the grid's empty
    (blocked) half and down a whole number of rows, over the fewest cells that hold a product, then the nearest;
    never past the grid's side (over its row labels: review 52, SmolLM2's card on "fluffy", "blue") nor under
    `lowest` (the frame's bottom). The card's own place where nothing fits."""
    (x0, y0, _), (x1, y1, _) = card.get_corner(DOWN + LEFT), card.get_corner(UP + RIGHT)
    left, right = grid.lines.get_left()[0] + 0.02, grid.lines.get_right()[0] - 0.02
    best, shift = None, np.zeros(3)
    for down in range(grid.n):
        for over in range(grid.n + 1):
            d = lean * over * grid.cell_width + DOWN * down * grid.cell_height
            box = (x0 + d[0], y0 + d[1], x1 + d[0], y1 + d[1])
            if box[0] < left or box[2] > right or box[1] < lowest:
                continue
            score = (covered(grid, box), down + over)
            if best is None or score < best:
                best, shift = score, d
    return shift


class DotProducts(Chapter):
    key = "dot_products"
    continues = ("queries", "keys")

    def plan(self, setting) -> DotProductsPlan:
        return plan_dot_products(setting)

    def play(self, stage: Stage, plan: DotProductsPlan) -> None:
        say = stage.say
        grid, titles = new_grid(stage, plan.head_trace, plan.tokens, plan.layout, tag=True)
        grid.set_mask("cleared")  # keys after their query: left for the masking chapter
        drawn = stage.drawn[self.key] = {"grid": grid, "titles": titles}
        if self.goes_on_from(stage):
            with stage.narrating(say(f"grid.dot_products.morph_{plan.layout}")):
                drawn["morphed"] = self.morph_in(stage, grid, titles)
        else:
            stage.clear()
            with stage.narrating(say(f"grid.dot_products.intro_{plan.layout}")):
                stage.play(FadeIn(grid), FadeIn(titles), run_time=1.2)
        stage.hand_on(grid=grid, grid_titles=titles)

        legend = self.symbol_legend(stage, plan)
        with stage.narrating(say("grid.dot_products.symbols")):
            stage.play(grid.show_symbols(run_time=1.5), FadeIn(legend, lag_ratio=0.2), run_time=1.5)
            stage.wait(0.4)
        self.close_look(stage, plan, grid, legend)
        drawn["scores"] = dict(grid.number_mobs)
        self.spotlight(stage, plan, grid)

        legend = score_legend(stage, grid)
        drawn["legend"] = legend
        with stage.narrating(say("grid.dot_products.as_dots")):
            stage.play(grid.show_score_dots(run_time=1.5))
            stage.wait(0.8)
            stage.play(grid.unspotlight(), *(FadeOut(m) for m in drawn["spotlight_marks"]), run_time=0.8)
            stage.play(FadeIn(legend), run_time=0.6)
            stage.wait(0.8)
        stage.attach(grid, legend)  # the next chapter's card keeps the key to the dots with them

    # --- the grid from the query and key columns ------------------------------------------------
    def morph_in(self, stage: Stage, grid: AttentionGrid, titles: VGroup) -> dict:
        """The query columns rise into the labels across the top (down the side, in the paper
        layout) and the key columns slide into the others; then the lines and titles appear.
        Returns {"query": {token: label}, "key": {token: label}}: the labels they became."""
        kept = [stage.queries if stage.has("queries") else None, stage.keys if stage.has("keys") else None]
        others = [m for m in stage.mobjects if m not in kept]
        grid.lines.save_state()
        grid.labels.save_state()
        grid.lines.set_stroke(opacity=0.0)
        grid.labels.set_opacity(0.0)
        stage.add(grid)
        became = {}
        for axis, group in zip(("query", "key"), kept):
            if group is None:
                became[axis] = {}
                continue
            stage.remove(group)
            columns = list(group.submobjects)
            stage.add(*columns)
            targets, anims = {}, []
            for col, t in zip(columns, getattr(group, "tokens", range(len(columns)))):
                target = self.label_target(stage, grid, int(t), axis)
                if target is None:  # a label the grid leaves out: the column shrinks onto its row
                    anims.append(col.animate.scale(0.05).move_to(grid.label_position(int(t), axis)).set_opacity(0))
                else:
                    targets[int(t)] = target
                    anims.append(ReplacementTransform(col, target))
            became[axis] = targets
            fade = [FadeOut(m) for m in others] if axis == "query" or kept[0] is None else []
            stage.play(*anims, *fade, run_time=1.4)
            stage.remove(*[c for c in columns if c in stage.mobjects and c not in targets.values()])
        stage.play(Restore(grid.lines), Restore(grid.labels), FadeIn(titles),
                   *(FadeOut(m) for d in became.values() for m in d.values()), run_time=1.0)
        stage.forget("queries", "keys", "words")
        return became

    @staticmethod
    def label_target(stage: Stage, grid: AttentionGrid, token: int, axis: str):
        """A label of `token` exactly over the grid's own label of it (None: the grid shows none)."""
        on_rows = (axis == "key") == (grid.layout == "video")
        which = "rows" if on_rows else "cols"
        shown = list(grid.shown_labels[which])
        if token not in shown:
            return None
        x0, y0, x1, y1 = grid.label_boxes(which)[shown.index(token)]
        color = stage.theme.query if axis == "query" else stage.theme.key
        mob = label(grid.tokens[token], 30, color)
        if not on_rows and grid.top_labels_rotated:
            mob.rotate(PI / 2)
        mob.stretch_to_fit_width(max(x1 - x0, 1e-3)).stretch_to_fit_height(max(y1 - y0, 1e-3))
        return mob.move_to([(x0 + x1) / 2, (y0 + y1) / 2, 0])

    # --- what the symbols mean ------------------------------------------------------------------
    @staticmethod
    def symbol_legend(stage: Stage, plan: DotProductsPlan) -> VGroup:
        say, th = stage.say, stage.theme
        keys_on, queries_on = ("rows", "columns") if plan.layout == "video" else ("columns", "rows")
        both = math("{{ arrow(K)_j : k }} dot {{ arrow(Q)_i : q }}", 32, th.text)
        both.select("k").set_color(th.key)
        both.select("q").set_color(th.query)
        rows = [
            [math("arrow(K)_j", 32, th.key),
             label(say("grid.dot_products.legend_key", axis=say(f"grid.axes.{keys_on}")), 24, th.text)],
            [math("arrow(Q)_i", 32, th.query),
             label(say("grid.dot_products.legend_query", axis=say(f"grid.axes.{queries_on}")), 24, th.text)],
            [both, label(say("grid.dot_products.legend_dot"), 24, th.text)],
        ]
        return panel_note(stage, rows, font_size=24)

    # --- a close look at one cell: the dot product, then the score --------------------------------
    def close_look(self, stage: Stage, plan: DotProductsPlan, grid: AttentionGrid, legend) -> None:
        say, th = stage.say, stage.theme
        i, j, d = plan.focus, plan.card_key, plan.d_head
        frame = stage.camera_frame
        frame.save_state()
        # the grid's whole width with its row labels where that is nearly as close: no column cut at the right
        # and no empty band at the left where the cut labels had faded (review 50); the card is set for that zoom
        # (set for the closer one, its figures read at half the cells' size: review 51)
        span = VGroup(grid.lines, grid.row_labels) if grid.row_labels.has_points() else grid.lines
        wide = (span.width + 0.4) / frame.width
        at_least = ZOOM < wide <= WIDE_ZOOM
        z = wide if at_least else ZOOM
        # (inside the cell's lines: a close-up from the grid's top cut the first row's box at the frame, review 52)
        cell_box = grid.cell_rect(i, j, color=th.key, buff=-0.03)
        sym = math(f"{{{{ {symbol_source('K', j + 1)} : k }}}} dot {{{{ {symbol_source('Q', i + 1)} : q }}}} =",
                   32 * MATH_PER_TEXT, th.text)  # (at the numbers' size, as l2's: review 49, two sizes in one card)
        sym.select("k").set_color(th.key)
        sym.select("q").set_color(th.query)
        # both to two decimals: "+21.36 ÷ √16 = +5.34" checks by hand and is the grid's +5.34 (the grid's
        # one-decimal +5.3 rounds it); "+21.3 ÷ √16 = +5.3" beside a grid's +5.34 did not
        dot_mob = number(plan.card_dot, "score2", 32, th.text)
        l1 = VGroup(sym, dot_mob).arrange(RIGHT, buff=0.15)
        score_mob = number(plan.card_score, "score2", 32, th.text)
        # "÷ √16 =" typeset (the root with its bar over the number, as in the formula), not the text font's √
        l2 = VGroup(math(f"div sqrt({d}) =", 32 * MATH_PER_TEXT, th.text), score_mob).arrange(RIGHT, buff=0.15)
        l3 = label(say("grid.dot_products.card_score"), 26, th.dim)
        text = VGroup(l1, l2, l3).arrange(DOWN, buff=0.22, aligned_edge=RIGHT)
        # the pair's words over their symbols, in their colours: with the camera close, the turned column labels
        # are out of the frame, and nothing else tied Q⃗₄ to its word (review 51)
        k_sym, q_sym = sym.select("k"), sym.select("q")
        words = VGroup(label(say.quote(plan.tokens[j]), 30, th.key), math("dot", 30 * MATH_PER_TEXT, th.text),
                       label(say.quote(plan.tokens[i]), 30, th.query))  # (at 26, 16 px: review 52)
        words.arrange(RIGHT, buff=0.12).next_to(l1, UP, buff=0.18)
        words.shift(RIGHT * ((k_sym.get_right()[0] + q_sym.get_left()[0]) / 2 - words[1].get_center()[0]))
        text.add_to_back(words)
        back = Rectangle(width=text.width + 0.5, height=text.height + 0.4, stroke_color=th.key, stroke_width=2,
                         fill_color=th.background, fill_opacity=1.0).move_to(text)
        card = VGroup(back, text).scale(z)
        # below the cell, its far side over the cell's, leaning into the empty (blocked) half of the grid, and
        # further where it would otherwise cover a cell that holds a product (review 48/49: the card sat on
        # K⃗₄·Q⃗₄ under the cell it explains)
        lean = LEFT if grid.layout == "video" else RIGHT
        card.next_to(cell_box, DOWN, buff=0.15 * z)
        # (a little short of the cell's line: on it, the card's edge read as a doubled grid line, review 52)
        card.shift(lean * (max(0.0, card.width / 2 - cell_box.width / 2) + 0.12 * z))
        rows = min(np.ceil(z * frame.height / grid.cell_height - 1e-6), grid.n)  # what a close-up from the top shows
        lowest = grid.lines.get_top()[1] - rows * grid.cell_height + 0.1 * z if at_least else -np.inf
        card.shift(card_shift(grid, card, lean, lowest))
        view = VGroup(cell_box, card)
        stage.drawn[self.key].update(card=card, card_numbers=[dot_mob, score_mob], card_cell=(i, j),
                                     card_words=words, card_symbols=(k_sym, q_sym))
        tokens = plan.tokens
        with stage.narrating(say("grid.dot_products.closeup", key_word=say.quote(tokens[j]),
                                 query=say.quote(tokens[i]), d=d)):
            centre = view.get_center()
            if at_least:
                # its top on the grid's top line (the turned column labels over it would be cut: they fade), or,
                # where every row fits, the grid's middle
                y = grid.lines.get_top()[1] - rows * grid.cell_height / 2
                centre = np.array([span.get_right()[0] + 0.15 - z * frame.width / 2,
                                   grid.lines.get_center()[1] if rows >= grid.n else y, 0.0])
            at, zz = snapped_close_up(grid, centre, z, frame, keep=view, at_least=at_least)
            stage.drawn[self.key].update(card_scale=z, close_zoom=zz)
            stage.play(frame.animate.scale(zz).move_to(at), FadeIn(cell_box), FadeOut(legend),
                       *close_up(grid, at, zz, frame, others=stage.drawn[self.key]["titles"]), run_time=1.5)
            stage.drawn[self.key]["close_faded"] = list(grid.close_up_faded)
            stage.play(FadeIn(back), FadeIn(words), FadeIn(l1, shift=LEFT * 0.1 * z), run_time=0.8)
        root = say.number(plan.root, f".{plan.root_digits}f")
        with stage.narrating(say("grid.dot_products.divide", d=d, root=root)):
            stage.play(FadeIn(l2, shift=LEFT * 0.1 * z), FadeIn(l3), run_time=0.8)
            stage.wait(0.6)
        with stage.narrating(say("grid.dot_products.all_scores")):
            stage.play(Restore(frame), FadeOut(back), FadeOut(text), FadeOut(cell_box), show_scores(grid, 1.5),
                       *close_up_done(grid), run_time=1.5)
            stage.wait(0.6)

    # --- the spotlight: the focus's best keys, and a poor one for contrast ---------------------------
    def spotlight(self, stage: Stage, plan: DotProductsPlan, grid: AttentionGrid) -> None:
        say, th = stage.say, stage.theme
        i, tokens = plan.focus, plan.tokens
        boxes = VGroup(*(grid.cell_rect(i, j, color=th.key) for j in plan.tops))
        head = rich_line(say.catalog["grid.dot_products.note_attends"], {"query": say.quote(tokens[i])},
                         font_size=NOTE_FS, color=th.text, colors={"query": th.query})
        rows, nums = [[head]], []
        scores = plan.cells_by_key

        kind = grid.score_kind()  # the grid's own figures: "+5.34" beside a cell that says +5.34, not "+5.3"

        def key_row(j):
            m = number(scores[j], kind, NOTE_FS, th.text)
            nums.append(m)
            word = label(say.quote(tokens[j]), NOTE_FS, th.key)
            return [word, m]

        for j in plan.tops:
            rows.append(key_row(j))
        if plan.contrast is not None:
            boxes.add(grid.cell_rect(i, plan.contrast, color=th.negative))
            rows += [[label(say("grid.dot_products.note_hardly"), NOTE_FS, th.dim)], key_row(plan.contrast)]
        note = panel_note(stage, rows)
        stage.drawn[self.key].update(spotlit=list(plan.spotlit), note=note, note_numbers=nums,
                                     spotlight_marks=[boxes, note])
        keys = say.quoted_words([tokens[j] for j in plan.tops])
        if plan.contrast is not None:
            caption = say(f"grid.dot_products.spot_{plan.layout}_contrast", query=say.quote(tokens[i]), keys=keys,
                          low=say.quote(tokens[plan.contrast]))
        else:
            caption = say(f"grid.dot_products.spot_{plan.layout}", query=say.quote(tokens[i]), keys=keys)
        with stage.narrating(caption):
            stage.play(grid.spotlight(list(plan.spotlit)), FadeIn(boxes), run_time=1.0)
            stage.play(FadeIn(note, lag_ratio=0.15), run_time=1.0)
            stage.wait(0.8)
        stage.drawn[self.key]["spotlight_state"] = list(grid.spotlit)
