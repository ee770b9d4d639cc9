"""`dot_products`, `softmax`, `masking`, `context_size`, `attention_formula` (and the finished
`attention_pattern`): the grid half of one attention head, every number from the trace.

Each step is a method of `GridSteps` (a mixin for `TraceScene`), so the flagship
`fluffy_blue_creature` can chain them on one canvas; each is also a scene of its own.

The step contract: a step assumes the camera frame at its default place and size when it starts
and restores it if it moved it; it starts with `self.clear_all()` when it needs a clean canvas;
it leaves its final picture on screen; every number it draws is read from the trace. The grid it
leaves is `self.grid` (its axis titles `self.grid_titles`, word boxes `self.words`): a later step
that finds a grid of the same sentence, head and layout still on screen continues from it.

What a step shows is also recorded in `self.grid_rec[step]` (the number mobjects and the cells it
picked), so tests can compare them with the trace.
"""

from __future__ import annotations

import math as pymath

import numpy as np
from manim import (
    DOWN, LEFT, PI, RIGHT, UP, Arrow, Circle, CurvedArrow, Dot, FadeIn, FadeOut, Indicate, LaggedStart,
    Line, Rectangle, ReplacementTransform, Restore, Rotate, SurroundingRectangle, Transform, VGroup, Write, config,
)

from model.errors import UserError
from model.toy_world import EXAMPLES  # plain strings and numpy: no torch

from .base import TraceScene
from .components.attention_grid import AttentionGrid
from .components.formula import AttentionFormula
from .components.softmax_column import SoftmaxColumn
from .components.text import label, number
from .components.vectors import math, symbol_source
from .components.word_boxes import WordBoxes
from .one_head_qkv import contrast_key, top_keys
from .registry import step_scene
from .style import fmt_weight

# where the grid lives (labels included): the left of the frame, below a free top strip; the
# right of the frame is a side panel for notes, the softmax column and counts
GRID_BOX = (9.2, 7.0)  # max width, max height (labels and axis titles included)
GRID_CENTER = np.array([-2.25, 0.0, 0.0])
FORMULA_GRID_BOX = (8.8, 6.0)  # below the formula
FORMULA_GRID_CENTER = np.array([-2.5, -0.55, 0.0])
TOP_Y = 3.45  # the top strip (formula, titles)
PANEL_X = 2.8  # the side panel's left edge
PANEL_RIGHT = 6.85
NOTE_FS = 26


def focus_tops(head, i: int) -> list[int]:
    """The keys the focus attends to most (weight ≥ 0.1, up to 3), leaving itself out unless it
    attends to nothing else: the cells the spotlight picks."""
    tops = [j for j in top_keys(head.pattern[i]) if j != i]
    return tops or top_keys(head.pattern[i])


def quoted(word: str) -> str:
    return f"“{word}”"


def text_baseline(mob) -> float:
    """The baseline of a line of text: the median bottom of its full-height glyphs (quotes,
    dots and dashes are left out; one descender or ligature cannot move it)."""
    glyphs = [g for g in mob.family_members_with_points()] or [mob]
    tallest = max(g.height for g in glyphs)
    full = [g for g in glyphs if g.height >= 0.5 * tallest] or glyphs
    return float(np.median([g.get_bottom()[1] for g in full]))


def baseline_row(parts, buff: float = 0.14) -> VGroup:
    """Text pieces side by side on one baseline (quotes and descenders do not lift a word)."""
    row = VGroup(*parts).arrange(RIGHT, buff=buff)
    base = text_baseline(parts[0])
    for p in parts[1:]:
        p.shift(UP * (base - text_baseline(p)))
    return row


def names(tokens, idx) -> str:
    words = [quoted(tokens[j]) for j in idx]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def fmt_root(d: int) -> str:
    r = pymath.sqrt(d)
    return f"{r:.0f}" if abs(r - round(r)) < 1e-9 else f"{r:.2f}"


def continuation_texts(tokens, n_ctx: int, min_long: int = 50):
    """(short text or None, long text) for the context-size step: a short sentence (None: the
    sentence itself) grows by the long example passage, cut to the context; a long sentence
    grows from its first 8 words."""
    n = len(tokens)
    if n > 16:
        return " ".join(tokens[:8]), " ".join(tokens)
    extra = EXAMPLES["long"].split()
    room = n_ctx - n - 1
    long_tokens = list(tokens) + ["."] + extra[:max(room, 0)]
    return None, " ".join(long_tokens[:n_ctx])


class GridSteps:
    """The dot-product grid, softmax, masking, context size and formula steps (mix into a
    TraceScene)."""

    # --- data -------------------------------------------------------------------------------
    def _g_data(self, trace=None):
        tr = trace or self.trace
        if not hasattr(self, "grid_rec"):
            self.grid_rec = {}
        return tr, self.head_trace(tr), self.focus_index(tr)

    def _g_rec(self, step: str) -> dict:
        if not hasattr(self, "grid_rec"):
            self.grid_rec = {}
        self.grid_rec[step] = {}
        return self.grid_rec[step]

    # --- the grid ---------------------------------------------------------------------------
    def _g_key(self, trace, layout):
        return (trace.text, self.layer, self.head_index, layout)

    def _g_on_screen(self, trace=None, layout=None):
        """The grid left by an earlier step, if it shows this sentence, head and layout."""
        tr = trace or self.trace
        g = getattr(self, "grid", None)
        if g is None or g not in self.mobjects:
            return None
        if getattr(g, "grid_key", None) != self._g_key(tr, layout or self.inputs.layout):
            return None
        return g

    def _g_new_grid(self, trace=None, layout=None, box=GRID_BOX, center=GRID_CENTER, **kw):
        """A grid of this head in the standard place, with its axis titles (not yet on screen)."""
        tr = trace or self.trace
        layout = layout or self.inputs.layout
        grid = AttentionGrid(self.head_trace(tr), tr.tokens, layout=layout, theme=self.theme,
                             max_width=box[0] - 0.45, max_height=box[1] - 0.4, **kw)
        grid.grid_key = self._g_key(tr, layout)
        grid.move_to(center)
        grid.use_common_number_font()  # scores and weights at one size (columns can change alone)
        titles = self._g_axis_titles(grid)
        shift = np.asarray(center, dtype=float) - VGroup(grid, titles).get_center()
        grid.shift(shift)
        titles.shift(shift)
        return grid, titles

    def _g_axis_titles(self, grid) -> VGroup:
        """"queries" over the labels across the top, "keys" beside the labels down the side (or the
        other way round in the paper layout)."""
        th = self.theme
        top_name, top_color = ("queries", th.query) if grid.layout == "video" else ("keys", th.key)
        side_name, side_color = ("keys", th.key) if grid.layout == "video" else ("queries", th.query)
        lines = grid.lines
        top = label(top_name, 24, top_color)
        top_y = (grid.col_labels.get_top()[1] if grid.col_labels.has_points() else lines.get_top()[1]) + 0.14
        top.move_to([lines.get_x(), top_y + top.height / 2, 0])
        side = label(side_name, 24, side_color).rotate(PI / 2)
        side_x = (grid.row_labels.get_left()[0] if grid.row_labels.has_points() else lines.get_left()[0]) - 0.16
        side.move_to([side_x - side.width / 2, lines.get_y(), 0])
        return VGroup(top, side)

    @staticmethod
    def _g_strip(grid, q: int, top: float = 3.2, bottom: float = -3.7, **kw) -> SoftmaxColumn:
        """The softmax column of query q in the side panel, at the largest font (≤ 26) that keeps it
        between `top` and `bottom`."""
        x = (PANEL_X + PANEL_RIGHT) / 2
        target = np.array([x, (top + bottom) / 2, 0])
        sm = SoftmaxColumn(grid, q, target=target, font_size=26, **kw)
        room = top - bottom
        if sm.box.height > room:
            sm = SoftmaxColumn(grid, q, target=target, font_size=26 * room / sm.box.height * 0.98, **kw)
        return sm

    @staticmethod
    def _g_scores(grid, run_time: float = 1.0):
        """The real scores in the cells, or (too many to read) dots sized by score."""
        return grid.show_scores(run_time) if grid.numbers_readable() else grid.show_score_dots(run_time)

    def _g_adopt(self, grid, titles, words=None):
        self.grid, self.grid_titles = grid, titles
        if words is not None:
            self.words = words

    def _g_sums(self, grid, font_size=None) -> VGroup:
        """Σ of every query's weights (the real sums), under each column (video) or beside each
        row (paper), with a Σ sign in front."""
        th = self.theme
        totals = grid.pattern.sum(axis=1)
        if not grid.numbers_readable():  # too many columns to label one by one: one line for all
            side = "column" if grid.layout == "video" else "row"
            m = number(float(totals.min()), "weight", 24, th.text)
            line = baseline_row([label(f"every {side}: Σ =", 24, th.dim), m])
            line.next_to(grid.lines, DOWN, buff=0.12)
            line.numbers = [m]
            return line
        fs = font_size or min(grid.number_font or 22, 24)
        sums = VGroup()
        for q in range(grid.n):
            m = number(float(grid.pattern[q].sum()), "weight", fs, th.text)
            ll, ur = grid.column_region(q)
            if grid.layout == "video":
                m.move_to([(ll[0] + ur[0]) / 2, ll[1] - 0.12 - m.height / 2, 0])
            else:
                m.move_to([ur[0] + 0.12 + m.width / 2, (ll[1] + ur[1]) / 2, 0])
            sums.add(m)
        sigma = label("Σ", fs * 1.1, th.dim)
        if grid.layout == "video":
            sigma.next_to(sums[0], LEFT, buff=0.25)
        else:
            sigma.next_to(sums[0], UP, buff=0.12)
        out = VGroup(sigma, sums)
        out.numbers = list(sums)
        return out

    def _g_note(self, rows, top=None, fs=NOTE_FS) -> VGroup:
        """Lines of text in the side panel: each row a string or a list of mobjects/strings."""
        th = self.theme
        lines = VGroup()
        for row in rows:
            parts = [label(p, fs, th.text) if isinstance(p, str) else p for p in (row if isinstance(row, list) else [row])]
            line = baseline_row(parts)
            lines.add(line)
        lines.arrange(DOWN, buff=0.22, aligned_edge=LEFT)
        width = PANEL_RIGHT - PANEL_X
        if lines.width > width:
            lines.scale_to_fit_width(width)
        lines.move_to([PANEL_X + lines.width / 2, 0, 0])
        lines.set_y(top - lines.height / 2 if top is not None else GRID_CENTER[1])
        return lines

    def _g_ensure(self, content: str, mask: str = "cleared", trace=None):
        """A grid of this head on screen (continued from the last step when compatible, else new),
        showing `content` with the mask in state `mask`."""
        grid = self._g_on_screen(trace)
        if grid is None:
            self.clear_all()
            grid, titles = self._g_new_grid(trace)
            grid.set_mask(mask)
            if content == "scores" and not grid.numbers_readable():
                content = "score_dots"
            if content != "none":
                grid.set_content(content)
            self._g_adopt(grid, titles)
            self.play(FadeIn(grid), FadeIn(titles), run_time=1.0)
            return grid, True
        extras = [m for m in self.mobjects if m is not grid and m is not getattr(self, "grid_titles", None)]
        anims = [FadeOut(m) for m in extras]
        if grid.mask_state != mask and mask == "cleared" and grid.mask_state != "hidden":
            anims.append(grid.clear_mask())
        elif grid.mask_state != mask:
            grid.set_mask(mask)
        if grid.content_kind != content and not (content == "scores" and grid.content_kind == "score_dots"
                                                  and not grid.numbers_readable()):
            anims.append(self._g_scores(grid) if content == "scores" else grid.transition(content))
        if anims:
            self.play(*anims, run_time=1.0)
        return grid, False

    # ========================================================================================
    # the finished pattern
    # ========================================================================================
    def step_pattern(self):
        """The finished attention pattern of this head: title, words, grid of dots, the blocked
        half empty, the focus word's strongest links named with their real weights."""
        th = self.theme
        tr, ht, i = self._g_data()
        rec = self._g_rec("pattern")
        n = len(tr.tokens)
        self.clear_all()
        title = label(f"layer {self.layer} · head {self.head_index}: {ht.name}", 30, th.text)
        title.move_to([0, 3.55, 0])
        top = title.get_bottom()[1] - 0.2
        words = None
        if n <= 16:
            words = WordBoxes(tr.tokens, theme=th, font_size=28, max_width=12.6)
            words.move_to([0, top - words.height / 2, 0])
            top = words.get_bottom()[1] - 0.15
        note_room = 0.65
        box = (12.6, top + 3.85 - note_room)
        grid, titles = self._g_new_grid(box=box, center=[0, (top - 3.85 + note_room) / 2, 0])
        # keep the grid's labels clear of the axis titles on the left
        grid.set_mask("cleared")
        self._g_adopt(grid, titles, words)
        rec.update(grid=grid, title=title)

        with self.narrating(f"This is what one head of the model does with the sentence: layer {self.layer}, "
                         f"head {self.head_index}, the “{ht.name}” head."):
            self.play(FadeIn(title, shift=DOWN * 0.2), *( [FadeIn(words, lag_ratio=0.08)] if words else []),
                      run_time=1.0)
        side = "column" if grid.layout == "video" else "row"
        with self.narrating(f"One {side} per word asking (the query); along it, every word it may look at (the keys)."):
            self.play(FadeIn(grid), FadeIn(titles), run_time=1.0)
        with self.narrating("Each dot is an attention weight: the bigger the dot, the more the query takes from that key. "
                         "The empty half is masked: no word looks ahead."):
            self.play(grid.show_dots(run_time=2.5, lag=0.6))
            self.wait(0.5)
        tops = focus_tops(ht, i)
        w = ht.pattern[i]
        parts = [label(quoted(tr.tokens[i]), NOTE_FS, th.query), label("looks at", NOTE_FS, th.text)]
        nums = []
        for k, j in enumerate(tops):
            m = number(float(w[j]), "weight", NOTE_FS, th.text)
            nums.append(m)
            parts += [label(quoted(tr.tokens[j]), NOTE_FS, th.key), m]
            if k < len(tops) - 2:
                parts[-1] = VGroup(parts[-1], label(",", NOTE_FS, th.text)).arrange(RIGHT, buff=0.03, aligned_edge=DOWN)
            elif k == len(tops) - 2:
                parts.append(label("and", NOTE_FS, th.text))
        note = baseline_row(parts)
        if note.width > 12.5:
            note.scale_to_fit_width(12.5)
        note.move_to([0, -3.85 + note_room / 2, 0])
        rec.update(note_numbers=nums, tops=tops, focus=i)
        anims = [grid.highlight_column(i, color=th.query), FadeIn(note, shift=UP * 0.1)]
        if words is not None:
            anims.append(words.animate.highlight(i, th.query).recolor(tops, th.key))
        with self.narrating(f"{quoted(tr.tokens[i])} puts its weight on {names(tr.tokens, tops)}."):
            self.play(*anims, run_time=1.0)
            self.wait(1.5)

    # ========================================================================================
    # dot products
    # ========================================================================================
    def step_dot_products(self):
        th = self.theme
        tr, ht, i = self._g_data()
        word = tr.tokens[i]
        tops = focus_tops(ht, i)
        contrast = contrast_key(ht.scores[i], ht.mask[i], tops + [i])
        d = ht.q.shape[1]
        rec = self._g_rec("dot_products")
        rec.update(focus=i, tops=tops, contrast=contrast)
        self.clear_all()
        grid, titles = self._g_new_grid()
        grid.set_mask("cleared")  # keys after their query: left for the masking step
        self._g_adopt(grid, titles)
        rec["grid"] = grid

        q_side, k_side = ("top", "side") if grid.layout == "video" else ("side", "top")
        with self.narrating(f"Queries across the {q_side}, keys down the {k_side}: one cell for every pair of words."):
            self.play(FadeIn(grid), FadeIn(titles), run_time=1.2)
        rows_are, cols_are = ("rows", "columns") if grid.layout == "video" else ("columns", "rows")
        both = math("{{ arrow(K)_j : k }} dot {{ arrow(Q)_i : q }}", 32, th.text)
        both.select("k").set_color(th.key)
        both.select("q").set_color(th.query)
        legend = self._g_note([
            [math("arrow(K)_j", 32, th.key), label(f"the key of word j ({rows_are})", 24, th.text)],
            [math("arrow(Q)_i", 32, th.query), label(f"the query of word i ({cols_are})", 24, th.text)],
            [both, label("their dot product", 24, th.text)],
        ], fs=24)
        with self.narrating("Each cell holds a dot product: one key with one query. "
                         "Cells whose key comes after the query stay empty for now."):
            self.play(grid.show_symbols(run_time=1.5), FadeIn(legend, lag_ratio=0.2), run_time=1.5)
            self.wait(0.4)

        # a close-up of the focus's strongest cell: the dot product, then the score
        j = tops[0]
        qk = float(ht.q[i] @ ht.k[j])
        frame = self.camera.frame
        frame.save_state()
        z = 0.45
        cell_box = grid.cell_rect(i, j, color=th.key, buff=0.02)
        sym = math(f"{{{{ {symbol_source('K', j + 1)} : k }}}} dot {{{{ {symbol_source('Q', i + 1)} : q }}}} =",
                   34, th.text)
        sym.select("k").set_color(th.key)
        sym.select("q").set_color(th.query)
        qk_mob = number(qk, "vec", 32, th.text)
        l1 = VGroup(sym, qk_mob).arrange(RIGHT, buff=0.15)
        div = label(f"÷ √{d} =", 32, th.text)
        sc_mob = number(float(ht.scores[i, j]), "score", 32, th.text)
        l2 = VGroup(div, sc_mob).arrange(RIGHT, buff=0.15)
        l3 = label("the score", 26, th.dim)
        text = VGroup(l1, l2, l3).arrange(DOWN, buff=0.22, aligned_edge=RIGHT)
        back = Rectangle(width=text.width + 0.5, height=text.height + 0.4, stroke_color=th.key, stroke_width=2,
                         fill_color=th.background, fill_opacity=1.0).move_to(text)
        card = VGroup(back, text).scale(z)
        # below the cell, leaning into the empty (blocked) half of the grid
        lean = LEFT if grid.layout == "video" else RIGHT
        card.next_to(cell_box, DOWN, buff=0.15 * z)
        card.shift(lean * max(0.0, card.width / 2 - cell_box.width / 2))
        view = VGroup(cell_box, card)
        rec.update(card_numbers=[qk_mob, sc_mob], card_cell=(i, j))
        with self.narrating(f"Up close: the key of {quoted(tr.tokens[j])} and the query of {quoted(word)}, "
                         f"multiplied entry by entry and summed over all {d} entries."):
            self.play(frame.animate.scale(z).move_to(view.get_center()), FadeIn(cell_box), FadeOut(legend),
                      run_time=1.5)
            self.play(FadeIn(back), FadeIn(l1, shift=LEFT * 0.1 * z), run_time=0.8)
        with self.narrating(f"Divided by √{d} = {fmt_root(d)} (the square root of that length, to keep scores in a "
                         "workable range), it becomes the cell's score."):
            self.play(FadeIn(l2, shift=LEFT * 0.1 * z), FadeIn(l3), run_time=0.8)
            self.wait(0.6)
        with self.narrating("Every cell, worked out the same way: these are the model's real scores."):
            self.play(Restore(frame), FadeOut(back), FadeOut(text), FadeOut(cell_box), self._g_scores(grid, 1.5),
                      run_time=1.5)
            self.wait(0.6)
        rec["scores"] = dict(grid.number_mobs)

        # the spotlight: the focus's best keys, and a poor one for contrast (from the real numbers)
        cells = [(i, j) for j in tops] + ([(i, contrast)] if contrast is not None else [])
        boxes = VGroup(*(grid.cell_rect(i, j, color=th.key) for j in tops))
        rows = [[label(quoted(word), NOTE_FS, th.query), label("attends to", NOTE_FS, th.text)]]
        note_nums = []
        for j in tops:
            m = number(float(ht.scores[i, j]), "score", NOTE_FS, th.text)
            note_nums.append(m)
            rows.append([label("   " + quoted(tr.tokens[j]), NOTE_FS, th.key), m])
        if contrast is not None:
            boxes.add(grid.cell_rect(i, contrast, color=th.negative))
            m = number(float(ht.scores[i, contrast]), "score", NOTE_FS, th.text)
            note_nums.append(m)
            rows += [[label("and hardly to", NOTE_FS, th.dim)],
                     [label("   " + quoted(tr.tokens[contrast]), NOTE_FS, th.key), m]]
        note = self._g_note(rows)
        rec.update(spotlit=cells, note_numbers=note_nums)
        best = "highest" if len(tops) > 1 else "highest"
        msg = f"Down the {('column' if grid.layout == 'video' else 'row')} of {quoted(word)}, its {best} scores are with {names(tr.tokens, tops)}"
        if contrast is not None:
            msg += f"; {quoted(tr.tokens[contrast])} scores far lower"
        with self.narrating(msg + "."):
            self.play(grid.spotlight(cells), FadeIn(boxes), run_time=1.0)
            self.play(FadeIn(note, lag_ratio=0.15), run_time=1.0)
            self.wait(0.8)
        rec["spotlight_state"] = list(grid.spotlit)

        legend = self._g_score_legend(grid)
        with self.narrating("As dots: filled for a positive score, a ring for a negative one, larger the further "
                         "the score is from zero."):
            self.play(grid.show_score_dots(run_time=1.5))
            self.wait(0.8)
            self.play(grid.unspotlight(), FadeOut(boxes), FadeOut(note), run_time=0.8)
            self.play(FadeIn(legend), run_time=0.6)
            self.wait(0.8)

    def _g_score_legend(self, grid) -> VGroup:
        th = self.theme
        r = grid.dot_fraction * min(grid.cell_width, grid.cell_height) * 0.8
        dot = Dot(radius=r, color=th.text, fill_opacity=0.9)
        ring = Circle(radius=r, color=th.negative, stroke_width=2.5)
        rows = [[dot, label("positive score", 24, th.text)], [ring, label("negative score", 24, th.text)],
                [label("area ∝ |score|", 22, th.dim)]]
        return self._g_note(rows, fs=24)

    # ========================================================================================
    # softmax
    # ========================================================================================
    def step_softmax(self):
        th = self.theme
        tr, ht, i = self._g_data()
        n = len(tr.tokens)
        rec = self._g_rec("softmax")
        rec["focus"] = i
        grid, fresh = self._g_ensure("scores", "cleared")
        rec["grid"] = grid
        rec["scores"] = dict(grid.number_mobs)

        formula = math("w_j = e^(s_j) / (sum_k e^(s_k))", 34, th.text)
        formula.move_to([(PANEL_X + PANEL_RIGHT) / 2, 2.7, 0])
        with self.narrating("Scores can be any size, even negative. Softmax turns each query's scores into weights "
                         "between 0 and 1 that add up to 1; the larger the score, the larger its share."):
            self.play(Write(formula), run_time=1.2)
            self.wait(0.5)

        order = self._g_softmax_order(ht, i)
        rec["columns"] = order
        rec["strips"] = []
        frame = self.camera.frame
        frame.save_state()
        for k, q in enumerate(order):
            visible = int((~ht.mask[q]).sum())
            sm = self._g_strip(grid, q, top=2.1, visible_only=True)  # below the softmax formula
            rec["strips"].append(sm)
            side = "column" if grid.layout == "video" else "row"
            if k == 0:
                say = (f"Take the {side} of {quoted(tr.tokens[q])}: its {visible} scores come out, "
                       "and the softmax turns them into weights." if visible > 1 else
                       f"Take the {side} of {quoted(tr.tokens[q])}: its only score comes out, "
                       "and the softmax turns it into a weight.")
            else:
                say = f"The same for {quoted(tr.tokens[q])}."
            with self.narrating(say):
                readable = grid.content_kind in ("scores", "columns")
                self.play(sm.lift(), *([grid.show_columns({q: "none"}, run_time=0.6)] if readable else []))
                zoom = k == 0 and grid.layout == "video"
                if zoom:  # lean in: the column in the grid and its strip, side by side
                    col = VGroup(Rectangle().replace(VGroup(*[Line(*grid.column_region(q))]), stretch=True), sm.box)
                    z = float(np.clip((col.width + 1.5) / config.frame_width, 0.6, 1.0))
                    self.play(frame.animate.scale(z).move_to(col.get_center()), run_time=1.0)
                self.play(sm.normalize(run_time=1.6 if k == 0 else 1.2))
                self.wait(0.6 if k == 0 else 0.3)
            if k == 0:
                top = [j for j in np.argsort(-ht.pattern[q]) if not ht.mask[q, j]][0]
                with self.narrating(f"Real weights: {quoted(tr.tokens[top])} gets {fmt_weight(ht.pattern[q, top])}, "
                                 f"and {f'all {visible} weights together sum' if visible > 1 else 'that one weight comes'} "
                                 f"to {fmt_weight(ht.pattern[q].sum())}."):
                    self.play(Indicate(sm.sum_row, color=th.query), run_time=1.0)
                    if zoom:
                        self.play(Restore(frame), run_time=1.0)
            self.play(sm.settle(), *([grid.show_columns({q: "weights"}, run_time=0.8)] if readable else []))

        with self.narrating(f"Then every {('column' if grid.layout == 'video' else 'row')} at once."):
            if readable:
                self.play(grid.show_columns({q: "weights" for q in range(n)}, run_time=1.5))
            else:
                self.play(grid.show_dots(run_time=1.5))
            self.wait(0.3)
        rec["weights"] = dict(grid.number_mobs)
        sums = self._g_sums(grid)
        rec["sums"] = sums.numbers
        with self.narrating(f"Each {('column' if grid.layout == 'video' else 'row')} now sums to 1."):
            self.play(FadeIn(sums, lag_ratio=0.05), FadeOut(formula), run_time=1.0)
            self.wait(0.6)
        with self.narrating("This grid of weights is the attention pattern: a dot for each weight, as big as the weight."):
            self.play(grid.show_dots(run_time=2.0))
            self.wait(0.8)

    def _g_softmax_order(self, ht, i) -> list[int]:
        """The focus first, then up to two other queries with several keys to weigh: the one that
        spreads its weight the most, and the last word (most keys)."""
        n = ht.pattern.shape[0]
        order = [i]
        p = ht.pattern.copy()
        others = [q for q in range(1, n) if q != i]
        if others:
            spread = {q: 1.0 - float(p[q].max()) for q in others}
            best = max(others, key=lambda q: (spread[q], q))
            if spread[best] > 0.02:
                order.append(best)
        if n - 1 not in order and n - 1 > 0:
            order.append(n - 1)
        return order[:3]

    # ========================================================================================
    # masking
    # ========================================================================================
    def step_masking(self):
        th = self.theme
        tr, ht, i = self._g_data()
        tokens = tr.tokens
        n = len(tokens)
        rec = self._g_rec("masking")
        rec["focus"] = i
        self.clear_all()

        # 1. why: every prefix guesses its next word, all in one pass
        lines = list(range(n - 1))
        if len(lines) > 8:
            keep = sorted(set(lines[:3] + lines[-2:] + ([min(i, n - 2)])))
            shown = []
            for p in keep:
                if shown and p - shown[-1] > 1:
                    shown.append(None)
                shown.append(p)
            lines = shown
        stair = VGroup()
        answers = {}
        fs = 28 if len(lines) <= 8 else 22
        row_h = min(0.62, 5.6 / max(len(lines), 1))
        max_prefix_words = 14
        y_top = 0.2 + (len(lines) - 1) * row_h / 2
        for r, p in enumerate(lines):
            y = y_top - r * row_h
            if p is None:
                stair.add(label("⋮", fs, th.dim).move_to([-5.9, y, 0]))
                continue
            words = tokens[:p + 1]
            text = " ".join(words) if len(words) <= max_prefix_words else "… " + " ".join(words[-max_prefix_words:])
            pre = label(text, fs, th.text)
            pre.move_to([-6.6 + pre.width / 2, y, 0])
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
        heading = label("training: every prefix guesses its next word, in one pass", 26, th.dim)
        every = VGroup(stair, *(a for _, a in answers.values()))
        if every.width > 13.2:
            every.scale_to_fit_width(13.2)
            every.shift(RIGHT * (-6.6 - every.get_left()[0]))
        heading.next_to(every, UP, buff=0.5).align_to(every, LEFT)
        if not lines:  # a single word: no prefix has a next word
            heading = label("one word: nothing comes after it, nothing to hide", 26, th.dim)
            stair = VGroup(heading)
        with self.narrating("While it learns, the model reads a passage and guesses the next word after every prefix, "
                         "all in the same pass."):
            self.play(FadeIn(heading), LaggedStart(*(FadeIn(m, shift=RIGHT * 0.15) for m in stair), lag_ratio=0.15),
                      run_time=2.0)
            self.wait(0.3)
            if answers:
                self.play(*(Transform(g, a) for g, a in answers.values()), run_time=1.0)
            self.wait(0.5)
        p_focus = min(i, n - 2)
        if p_focus in answers:
            line = next(m for m in stair if getattr(m, "prefix_end", None) == p_focus)
            ans = line[2]  # the guess, now the answer
            pre = line[0]
            box = SurroundingRectangle(VGroup(pre, ans), color=th.query, buff=0.08, stroke_width=2.5)
            start = ans.get_top() + UP * 0.05
            end = pre.get_corner(UP + RIGHT) + UP * 0.05 + LEFT * 0.3
            arc = CurvedArrow(start, end, angle=0.7, color=th.mask, stroke_width=3, tip_length=0.15)
            mid = arc.point_from_proportion(0.5)
            cross = VGroup(Line(mid + [-0.14, -0.14, 0], mid + [0.14, 0.14, 0]),
                           Line(mid + [-0.14, 0.14, 0], mid + [0.14, -0.14, 0])).set_stroke(th.mask, 5)
            with self.narrating(f"If {quoted(tokens[p_focus])} could take information from {quoted(tokens[p_focus + 1])}, "
                             "it would simply read off the answer. So no word may look at the words after it."):
                # the lines above make room for the crossed-out arc, so that it crosses no word
                lift = UP * 0.3
                above = [m for m in stair if m is not line and m.get_y() > line.get_y()]
                self.play(FadeIn(box), *(m.animate.set_opacity(0.35) for m in stair if m is not line and m not in above),
                          *(m.animate.set_opacity(0.35).shift(lift) for m in above),
                          *([heading.animate.shift(lift)] if above else []), run_time=0.6)
                self.play(FadeIn(arc), run_time=0.8)
                self.play(FadeIn(cross, scale=1.5), run_time=0.5)
                self.wait(0.8)

        # 2. the grid: every pair is scored; the blocked ones become −∞
        grid, titles = self._g_new_grid()
        self._g_adopt(grid, titles)
        rec["grid"] = grid
        with self.narrating("Back to the grid. The dot products are taken for every pair, even where the key comes "
                         "after its query."):
            self.play(*(FadeOut(m) for m in self.mobjects), run_time=0.6)
            self.play(FadeIn(grid), FadeIn(titles), run_time=0.8)
            self.play(self._g_scores(grid, 1.2))
            self.wait(0.4)
        rec["scores"] = dict(grid.number_mobs)
        with self.narrating("Those cells are blocked: before the softmax, their scores are replaced by minus infinity."):
            self.play(grid.reveal_mask(run_time=2.5))
            self.wait(0.5)
        rec["minus_inf"] = dict(grid.mask_number_mobs)
        rec["scores_after_mask"] = dict(grid.number_mobs)

        q = i if i < n - 1 else max(n - 2, 0)
        visible = int((~ht.mask[q]).sum())
        sm = self._g_strip(grid, q)
        rec["strip"] = sm
        with self.narrating(f"The softmax of {quoted(tokens[q])}'s {('column' if grid.layout == 'video' else 'row')}: "
                         "e to the minus infinity is 0, so blocked keys get no weight."):
            self.play(sm.lift())
            self.play(sm.normalize())
            self.wait(0.8)
        with self.narrating(f"Its {visible} visible weights still add up to 1."):
            self.play(Indicate(sm.sum_row, color=th.query), run_time=1.0)
            self.wait(0.4)
            self.play(sm.settle())
        sums = self._g_sums(grid)
        with self.narrating("Every column at once: the blocked half is empty, each column still sums to 1."
                         if grid.layout == "video" else
                         "Every row at once: the blocked half is empty, each row still sums to 1."):
            self.play(grid.clear_mask(run_time=1.2), grid.show_weights(run_time=1.2))
            self.play(FadeIn(sums, lag_ratio=0.05), run_time=0.8)
            self.wait(1.0)
        rec["weights"] = dict(grid.number_mobs)
        rec["sums"] = sums.numbers

    # ========================================================================================
    # context size
    # ========================================================================================
    def step_context_size(self):
        th = self.theme
        tr = self.trace
        n_ctx = tr.model.n_ctx
        short_text, long_text = continuation_texts(tr.tokens, n_ctx)
        try:
            tr_long = self.inputs.tracer(long_text)
        except UserError:  # a model that does not know the passage's words: the sentence, repeated
            words = " ".join(tr.tokens)
            reps = max(2, n_ctx // (len(tr.tokens) + 1))
            tr_long = self.inputs.tracer(" . ".join([words] * reps))
        tr_short = tr if short_text is None else self.inputs.tracer(short_text)
        rec = self._g_rec("context_size")
        n, N = len(tr_short.tokens), len(tr_long.tokens)
        rec.update(n=n, N=N, long_trace=tr_long, short_trace=tr_short)

        grid, _ = self._g_ensure("dots", "cleared", trace=tr_short)
        frame = self.camera.frame
        frame.save_state()
        cnt, counts = self._g_count(n, tr_short)
        cnt.move_to([(PANEL_X + PANEL_RIGHT) / 2, GRID_CENTER[1], 0])
        rec["short_count"] = counts
        with self.narrating(f"{n} words make {n} × {n} = {n * n} cells: the pattern grows with the square of the length."):
            self.play(FadeIn(cnt, lag_ratio=0.1), run_time=1.0)
            self.wait(0.8)

        # the long grid at the same cell size, placed so that its first n × n block is the short
        # grid (the mask makes the first words' pattern independent of what follows)
        # It is built at the size it ends at (so its lines and labels suit that size: fewer,
        # thinner lines, abbreviated labels), then blown up F times to line up with the short grid
        # while the camera pulls back F times.
        ht_long = self.head_trace(tr_long)
        fw, fh = config.frame_width, config.frame_height
        end_h = fh - 1.9
        aspect = grid.cell_width / grid.cell_height
        big = AttentionGrid(ht_long, tr_long.tokens, layout=grid.layout, theme=th,
                            cell_size=(end_h / N * aspect * 0.92, end_h / N * 0.92))
        big.grid_key = self._g_key(tr_long, grid.layout)
        big.set_mask("cleared")
        F = grid.cell_height / big.cell_height
        big.scale(F)
        big.shift(grid.lines.get_corner(UP + LEFT) - big.lines.get_corner(UP + LEFT))
        w0 = self._g_count(N, tr_long)[0].width  # the count's width at its normal size
        F = max(F, (big.height + 1.2) / fh, big.width / (fw - w0 - 1.2))
        big_cnt, big_counts = self._g_count(N, tr_long, font_size=30 * F)
        frame_w = fw * F
        center = np.array([big.get_left()[0] - 0.3 * F + frame_w / 2, big.get_y(), 0])
        right = center[0] + frame_w / 2 - 0.3 * F  # the count sits between the grid and the frame's edge
        big_cnt.move_to([(big.get_right()[0] + right) / 2, big.get_y(), 0])
        rec.update(big=big, long_count=big_counts)
        titles = getattr(self, "grid_titles", VGroup())
        with self.narrating(f"Keep reading, up to {N} words: the grid grows to {N} × {N} = {N * N:,} cells."):
            self.play(FadeOut(cnt), FadeOut(titles), run_time=0.5)
            big.labels.save_state()
            big.labels.set_opacity(0.0)  # at F times their final size they would swamp the close view
            self.play(frame.animate.scale(F).move_to(center), grid.labels.animate.set_opacity(0.0),
                      grid.lines.animate.set_stroke(opacity=0.0), FadeIn(big), run_time=2.5)
            self.play(big.show_dots(run_time=2.5, lag=0.7), Restore(big.labels, run_time=1.5))
            self.remove(grid)
            self.play(FadeIn(big_cnt, lag_ratio=0.1), run_time=1.0)
            self.wait(0.8)
        rec["big_dots"] = list(big.dot_cells)

        # a close look: the query in the new part that looks away from itself the most
        p = ht_long.pattern.copy()
        np.fill_diagonal(p, 0.0)
        cand = list(range(n, N)) or list(range(N))
        q = max(cand, key=lambda c: (p[c].sum(), -c))
        ks = [j for j in top_keys(ht_long.pattern[q]) if j != q] or [q]
        lo, hi = max(0, min(ks) - 2), min(N - 1, q + 2)
        a, b = big.cell_center(lo, lo), big.cell_center(hi, hi)
        span = max(abs(b[0] - a[0]), abs(b[1] - a[1]) * fw / fh) + 3 * big.cell_width
        zoom_w = float(np.clip(span * 1.5, 18 * big.cell_width, frame_w))
        look = (a + b) / 2
        rec.update(close_query=q, close_keys=ks)
        zs = zoom_w / fw  # text in the close-up is built at normal size and scaled by this
        parts = [label(quoted(tr_long.tokens[q]), NOTE_FS, th.query), label("looks at", NOTE_FS, th.text)]
        close_nums = []
        for k, j in enumerate(ks):
            m = number(float(ht_long.pattern[q, j]), "weight", NOTE_FS, th.text)
            close_nums.append(m)
            parts += [label(quoted(tr_long.tokens[j]), NOTE_FS, th.key), m]
            if k < len(ks) - 1:
                parts.append(label("and" if k == len(ks) - 2 else ",", NOTE_FS, th.text))
        close_note = baseline_row(parts).scale(zs)
        corner = look + np.array([-zoom_w / 2 + 0.3 * zs, -zoom_w * fh / fw / 2 + 0.3 * zs, 0])
        if grid.layout == "video":  # the empty (blocked) lower-left of the close-up
            close_note.move_to(corner + np.array(close_note.get_center() - close_note.get_corner(DOWN + LEFT)))
        else:  # the paper layout is blocked at the upper right
            c2 = look + np.array([zoom_w / 2 - 0.3 * zs, zoom_w * fh / fw / 2 - 0.3 * zs, 0])
            close_note.move_to(c2 + np.array(close_note.get_center() - close_note.get_corner(UP + RIGHT)))
        rec["close_numbers"] = close_nums
        with self.narrating(f"Up close, the same rule at work: {quoted(tr_long.tokens[q])} looks back at "
                         f"{names(tr_long.tokens, ks)}."):
            self.play(frame.animate.set(width=zoom_w).move_to(look), run_time=2.0)
            self.play(big.highlight_column(q, color=th.query), FadeIn(close_note), run_time=0.8)
            self.wait(1.5)
            self.play(frame.animate.set(width=frame_w).move_to(center), big.unhighlight(), FadeOut(close_note),
                      run_time=2.0)

        # back to the default framing: the picture shrinks exactly as the camera returns (no
        # visible change), then settles above room for a last note
        whole = VGroup(big, big_cnt)
        frame.restore()
        whole.scale(1.0 / F, about_point=center).shift(-center)
        nod = VGroup(label("Weighing every pair gets costly as texts grow longer;", 24, th.dim),
                     label("much recent work reshapes attention to reach far longer contexts.", 24, th.dim))
        nod.arrange(DOWN, buff=0.1).to_edge(DOWN, buff=0.25)
        room_top, room_bottom = fh / 2 - 0.25, nod.get_top()[1] + 0.2
        scale = min(1.0, (room_top - room_bottom) / whole.height, (fw - 0.6) / whole.width)
        with self.narrating("Every new word adds a whole row and column. Making attention reach much longer "
                         "texts is an active line of research."):
            self.play(whole.animate.scale(scale).move_to([0, (room_top + room_bottom) / 2, 0]), run_time=1.0)
            self.play(FadeIn(nod, shift=UP * 0.1), run_time=1.0)
            self.wait(1.5)
        self._g_adopt(big, VGroup())

    def _g_count(self, n: int, trace, font_size: float = 30):
        """"n × n = n²" and how many of those cells the mask leaves open; (group, the counts)."""
        th = self.theme
        allowed = int((~self.head_trace(trace).mask).sum())
        eq = label(f"{n} × {n} = {n * n:,}", font_size, th.text)
        sub = label(f"{allowed:,} of them allowed by the mask", font_size * 0.7, th.dim)
        out = VGroup(eq, sub).arrange(DOWN, buff=0.15 * font_size / 30)
        return out, {"n": n, "cells": n * n, "open": allowed, "texts": (eq.text, sub.text)}

    # ========================================================================================
    # the formula
    # ========================================================================================
    def step_formula(self):
        th = self.theme
        tr, ht, i = self._g_data()
        n = len(tr.tokens)
        d = ht.q.shape[1]
        layout = self.inputs.layout
        rec = self._g_rec("formula")
        rec.update(focus=i, d_head=d)
        grid = self._g_on_screen()
        if grid is None:
            self.clear_all()
            grid, titles = self._g_new_grid(box=FORMULA_GRID_BOX, center=FORMULA_GRID_CENTER)
            grid.set_mask("cleared")
            self._g_adopt(grid, titles)
            self.play(FadeIn(grid), FadeIn(titles), run_time=1.0)
        else:  # continue from the last step's grid: make room for the formula above it
            titles = getattr(self, "grid_titles", VGroup())
            extras = [m for m in self.mobjects if m is not grid and m is not titles]
            both = VGroup(grid, titles)
            k = min(1.0, (FORMULA_GRID_BOX[0]) / both.width, FORMULA_GRID_BOX[1] / both.height)
            anims = [FadeOut(m) for m in extras] + [grid.unhighlight(), grid.transition("none")]
            if grid.mask_state not in ("cleared",):
                anims.append(grid.clear_mask())
            self.play(*anims, run_time=0.8)
            self.play(both.animate.scale(k).move_to(FORMULA_GRID_CENTER), run_time=1.0)
            grid.use_common_number_font()
        rec["grid"] = grid
        form = "video" if layout == "video" else "paper"
        f = AttentionFormula(form, theme=th, font_size=40)
        f.move_to([0, min(TOP_Y, config.frame_height / 2 - 0.12 - f.height / 2), 0])  # tall parentheses stay inside
        sqrt_color = th.output
        f.part("sqrt").set_color(sqrt_color)
        rec["formula"] = f
        with self.narrating("The whole head fits in one line. Each symbol names a part of this grid."):
            self.play(Write(f), run_time=1.5)
            self.wait(0.3)

        q_labels, k_labels = ((grid.col_labels, grid.row_labels) if layout == "video"
                              else (grid.row_labels, grid.col_labels))
        titles = getattr(self, "grid_titles", VGroup())
        t_top, t_side = (titles[0], titles[1]) if len(titles) == 2 else (VGroup(), VGroup())
        q_title, k_title = (t_top, t_side) if layout == "video" else (t_side, t_top)
        q_box = SurroundingRectangle(VGroup(q_labels, q_title), color=th.query, buff=0.06, stroke_width=2.5)
        k_box = SurroundingRectangle(VGroup(k_labels, k_title), color=th.key, buff=0.06, stroke_width=2.5)
        def line(sym_src, color, text):
            return [math(sym_src, 30, color), label(text, 24, th.text)]

        q_where = "across the top" if layout == "video" else "down the side"
        k_where = "down the side" if layout == "video" else "across the top"
        panel = VGroup()

        def add_line(row, top):
            ln = self._g_note([row], top=top, fs=24)
            panel.add(ln)
            return ln

        y0 = 2.4
        l_q = add_line(line("Q", th.query, f"all {n} queries, {q_where}"), y0)
        with self.narrating(f"Q stacks the queries of all {n} words: the labels {q_where}."):
            self.play(Indicate(f.part("Q"), color=th.query), FadeIn(q_box), FadeIn(l_q), run_time=1.2)
            self.wait(0.4)
        l_k = add_line(line("K", th.key, f"all {n} keys, {k_where}"), y0 - 0.6)
        with self.narrating(f"K stacks their keys: the labels {k_where}."):
            self.play(Indicate(f.part("KT"), color=th.key), FadeIn(k_box), FadeIn(l_k), run_time=1.2)
            self.wait(0.4)
        k_t = f'#text(fill: rgb("{th.key}"))[$K^T$]'
        q_ = f'#text(fill: rgb("{th.query}"))[$Q$]'
        prod = f"{k_t} {q_}" if layout == "video" else f"{q_} {k_t}"  # each symbol in its own colour
        l_p = add_line(line(prod, th.text, "every dot product at once"), y0 - 1.2)
        with self.narrating("Multiplying them gives every key-query dot product at once, one per cell."):
            self.play(Indicate(f.part("scores"), color=th.text), FadeIn(l_p), FadeOut(q_box), FadeOut(k_box),
                      grid.show_symbols(run_time=1.2), run_time=1.2)
            self.wait(0.4)
        root = fmt_root(d)
        l_s = add_line([math("sqrt(d_k)", 30, sqrt_color), label(f"= √{d} = {root}, under every cell", 24, th.text)],
                       y0 - 1.8)
        rec["sqrt_text"] = l_s[0][1].text
        with self.narrating(f"Each one is divided by the square root of the key length d_k: √{d} = {root} here."):
            self.play(Indicate(f.part("sqrt"), color=sqrt_color), FadeIn(l_s),
                      grid.show_symbols(run_time=1.2, denominator=f"√{d}", denominator_color=sqrt_color),
                      run_time=1.2)
            # a close look at the cells around the focus, where the fractions can be read
            frame = self.camera.frame
            frame.save_state()
            near = grid.cell_center(i, max(0, min(i, n - 1) - 1))
            z = float(np.clip(5.5 * grid.cell_width / config.frame_width, 0.25, 1.0))  # about 5 cells across
            if z < 0.9:
                self.play(frame.animate.scale(z).move_to(near), run_time=1.2)
                self.wait(0.8)
        rec["denominator"] = grid.symbol_denominator
        with self.narrating("Worked out, those are the real scores."):
            self.play(self._g_scores(grid, 1.2))
            self.wait(0.5)
            if z < 0.9:
                self.play(Restore(frame), run_time=1.0)
        rec["scores"] = dict(grid.number_mobs)
        where = "down each column" if layout == "video" else "along each row"
        l_m = add_line([math("\"softmax\"", 30, th.text), label(where, 24, th.text)], y0 - 2.4)
        with self.narrating(f"Softmax runs {where}, so each query's weights add up to 1: the attention pattern."):
            self.play(Indicate(f.part("softmax"), color=th.text), FadeIn(l_m), grid.show_weights(run_time=1.2),
                      run_time=1.2)
            self.wait(0.5)
            self.play(grid.show_dots(run_time=1.2))
        rec["weights_kind"] = grid.content_kind

        # V: one value per key; the focus's weights mix them
        w = ht.pattern[i]
        picks = [j for j in np.argsort(-w) if w[j] >= 0.01][:3]
        picks = sorted(int(j) for j in picks)
        terms, wnums = [], []
        for k, j in enumerate(picks):
            if k:
                terms.append(label("+", 26, th.text))
            m = number(float(w[j]), "weight", 26, th.text)
            wnums.append(m)
            terms += [m, math(symbol_source("V", j + 1), 30, th.value)]
        v_row = VGroup(*terms).arrange(RIGHT, buff=0.1)
        v_labels = VGroup()
        for j in range(n):
            if n > 16 and j not in picks:
                continue
            lab = math(symbol_source("V", j + 1), 22 if n <= 12 else 16, th.value)
            if layout == "video":
                c = grid.cell_center(n - 1, j)
                lab.move_to([grid.lines.get_right()[0] + 0.12 + lab.width / 2, c[1], 0])
            else:
                c = grid.cell_center(j, j)
                lab.move_to([c[0], grid.lines.get_bottom()[1] - 0.1 - lab.height / 2, 0])
            v_labels.add(lab)
        l_v = add_line(line("V", th.value, "one value per key"), y0 - 3.0)
        mix = self._g_note([[label(quoted(tr.tokens[i]), 24, th.query), label("mixes", 24, th.text)]], top=y0 - 3.55, fs=24)
        v_row.next_to(mix, DOWN, buff=0.15).align_to(mix, LEFT)
        if v_row.get_right()[0] > PANEL_RIGHT:
            v_row.scale_to_fit_width(PANEL_RIGHT - PANEL_X).align_to(mix, LEFT)
        rec["mix_numbers"] = wnums
        rec["mix_keys"] = picks
        with self.narrating(f"V holds a value for every key. The weights say how much of each value flows into each word: "
                         f"{quoted(tr.tokens[i])} takes "
                         + ", ".join(f"{fmt_weight(w[j])} of V{j + 1}" for j in picks) + "."):
            self.play(Indicate(f.part("V"), color=th.value), FadeIn(l_v), FadeIn(v_labels, lag_ratio=0.05),
                      grid.highlight_column(i, color=th.query), run_time=1.2)
            self.play(FadeIn(mix), FadeIn(v_row, lag_ratio=0.1), run_time=1.0)
            self.wait(1.2)

        # the paper's orientation: the same picture, transposed
        other = "paper" if layout == "video" else "video"
        f2 = AttentionFormula(other, theme=th, font_size=40).move_to(f)
        f2.part("sqrt").set_color(sqrt_color)
        g2, t2 = self._g_new_grid(layout=other, box=FORMULA_GRID_BOX, center=FORMULA_GRID_CENTER)
        g2.set_mask("cleared")
        g2.set_content("dots")
        d2 = grid.lines.get_center() - g2.lines.get_center()  # the flip turns about the cells' centre
        g2.shift(d2)
        t2.shift(d2)
        rec.update(other_grid=g2, other_formula=f2)
        ul = grid.lines.get_corner(UP + LEFT)
        dr = grid.lines.get_corner(DOWN + RIGHT)
        axis = dr - ul
        pivot = (ul + dr) / 2
        titles = getattr(self, "grid_titles", VGroup())
        if layout == "video":
            msg = ("The paper writes Q Kᵀ instead: queries down the side, keys across the top, softmax along each "
                   "row. It is the same grid, flipped over its diagonal.")
        else:
            msg = ("The video's way of drawing it, Kᵀ Q, puts the queries across the top: the same grid, flipped "
                   "over its diagonal.")
        with self.narrating(msg):
            self.play(FadeOut(panel), FadeOut(mix), FadeOut(v_row), FadeOut(v_labels), FadeOut(titles),
                      grid.unhighlight(), run_time=0.6)
            self.play(Rotate(grid, PI, axis=axis, about_point=pivot), ReplacementTransform(f, f2), run_time=2.0)
            self.play(FadeOut(grid), FadeIn(g2), FadeIn(t2), run_time=0.6)
            self.wait(1.0)
        self._g_adopt(g2, t2)


# ============================================================================================
# the scenes
# ============================================================================================
DotProducts = step_scene(
    "dot_products", "DotProducts", "step_dot_products",
    "the grid of every key against every query: K·Q symbols, the real scores, dots sized by score, the focus's best keys spotlit",
    GridSteps, TraceScene)
Softmax = step_scene(
    "softmax", "Softmax", "step_softmax",
    "softmax per query: columns lift out, real scores become real weights that sum to 1, the grid becomes the pattern",
    GridSteps, TraceScene)
Masking = step_scene(
    "masking", "Masking", "step_masking",
    "why later words are hidden (every prefix predicts its next word), −∞ before the softmax, zeros after, sums still 1",
    GridSteps, TraceScene)
ContextSize = step_scene(
    "context_size", "ContextSize", "step_context_size",
    "the pattern has n² cells: the grid grows from the sentence to a 50+ word passage, real pattern throughout",
    GridSteps, TraceScene)
AttentionFormulaScene = step_scene(
    "attention_formula", "AttentionFormulaScene", "step_formula",
    "Attention(Q,K,V) = softmax(KᵀQ/√d_k)V, each symbol tied to the grid; the paper's QKᵀ as its transpose",
    GridSteps, TraceScene)
