"""`multi_head`: every head of a layer side by side, each with its own pattern (a small grid of
dots, the followed word's column outlined) and its own proposed change ΔE; the proposals add up
into the embedding, E + ΣΔE = E′; where the model has named directions, how far the sum moved the
word along them, and the same word in different sentences compared."""

from __future__ import annotations

from math import floor

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Arrow, FadeIn, FadeOut, ReplacementTransform, SurroundingRectangle, VGroup

from ..components.attention_grid import AttentionGrid
from ..components.dot_legend import SMALL_GRID_WEIGHTS
from ..components.text import baseline_row, label, number, text_baseline
from ..components.vectors import VectorColumn, math, symbol_source
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter
from ..plans.multi_head import (HEAD_ENTRIES, TAIL_ENTRIES, HeadProposal, MultiHeadPlan, SentenceSum,
                                plan_multi_head)
from ..stage import Region, Stage
from .embedding_parts import direction_name, fit_into, mixed_label
from .grid_parts import corner_legend, side_title
from .honest import wrapped
from .rounding_parts import declare_rows, rounding_marks, rounding_note

T = "multi_head"
PER_HEAD_CAPTIONS = 4  # with more heads than this, one caption for all of them
FIRST_NOTE = 0.5  # the focus's mean weight on the first token, over the heads, that earns a note
# four grids side by side leave each row little height and width: the first grid labels the rows for
# all of them, and the labels fill more of a row than a lone grid's (0.62), so they read at the grid
# numbers' 14 px at 720p, not at the text minimum's 11
LABEL_FILL = 0.85
COMPARE_MAX_SCALE = 1.6  # the closing table grows at most this much to fill the frame
TOP_SHRINK = 0.85  # a head's title shrinks at most this much to stay on one line, else it wraps
CELL_GAP = 0.25  # between two heads' columns: their titles never touch
TITLE_GAP = 0.45  # the least room between two heads' titles (closer, two read as one)


def compare_caption(plan: MultiHeadPlan, same: bool) -> str:
    """The closing caption's key. The same word's E drawn differently in two sentences (its position
    added, or earlier layers): the caption says why rather than "the same lookup" beside two
    different Es; where the table's projections read the same, it says the change lies elsewhere."""
    starts: dict[str, list] = {}
    for s in plan.sentences:
        # the E (its entries as the sum frames showed them) and its projections as the table shows them
        starts.setdefault(s.tokens[s.focus], []).append(([round(float(a), 2) for a in s.E],
                                                         [round(float(a), 2) for a, _ in s.projections]))
    shifted = any(len({tuple(e) + tuple(p) for e, p in vs}) > 1 for vs in starts.values())
    drawn_same = all(len({tuple(p) for _, p in vs}) == 1 for vs in starts.values())
    return f"{T}.caption_compare" if not same else (
        f"{T}.caption_compare_same_layers" if plan.real and plan.layer > 0 and shifted else
        f"{T}.caption_compare_same_hidden" if shifted and drawn_same else
        f"{T}.caption_compare_same_shifted" if shifted else f"{T}.caption_compare_same")


def head_name(say, plan: MultiHeadPlan, h: HeadProposal, tokens=None) -> str:
    """The head's role in words (common roles, then this lesson's measured ones), else its layer and
    number. Over a sentence where the role has nothing to act on (h.idle), the label says so too."""
    if h.role and say.has(f"common.roles.{h.role}"):
        return say.role(h.role, plan.layer, h.head, tokens=tokens, idle_said=h.idle is not None)
    if h.role and say.has(f"{T}.roles.{h.role}"):
        return say(f"{T}.roles.{h.role}")
    return say.head_name(plan.layer, h.head)


def habit_line(say, h: HeadProposal) -> str | None:
    """Under a head nobody named: its strongest habit on this sentence, with its weight."""
    if h.role:
        return None
    return say(f"{T}.habit_{h.habit}", weight=h.habit_weight)


def table(rows, gap: float, row_gap: float, first_left: bool = False) -> VGroup:
    """Mobjects in rows and columns: each column as wide as its widest cell, cells centred in it
    (the first column left-aligned with `first_left`), each row on its own line."""
    widths = [max(r[c].width for r in rows) for c in range(len(rows[0]))]
    y = 0.0
    for r in rows:
        x = 0.0
        h = max(m.height for m in r)
        for c, m in enumerate(r):
            m.move_to([x + (m.width / 2 if (c == 0 and first_left) else widths[c] / 2), y - h / 2, 0])
            x += widths[c] + gap
        y -= h + row_gap
    return VGroup(*(VGroup(*r) for r in rows))


def at_least(x: float) -> float:
    """A lower bound written to two decimals, rounded down: "itself ≥ 0.99", never "≥ 1.00" for a
    weight of 0.996 (no weight exceeds 1)."""
    return floor(float(x) * 100 + 1e-9) / 100


def head_delta_symbol(position: int, head: int) -> str:
    """ΔE⃗ of one head for the word at `position` (from 1, as E⃗): "ΔE⃗₄⁽²⁾"."""
    return f"{symbol_source('E', position, delta=True)}^(({head}))"


def settle_head_labels(cells) -> None:
    """Each cell is (head label, grid, ΔE column), side by side: the heads' second lines on one line, whatever
    letters their first lines have (review 37: "head 2" sat 5 px above "head 3", under a title with no
    descender)."""
    low = min(c[0][1].get_top()[1] for c in cells)
    for c in cells:
        c[0][1].shift(UP * (low - c[0][1].get_top()[1]))


def space_heads(cells, grids) -> VGroup:
    """The heads' cells (title, grid, ΔE) side by side at one pitch, each ΔE centred under its grid's cells and
    each title over them (not over the row labels beside the first grid), moved sideways only as far as
    it takes to keep TITLE_GAP from its neighbours (review 37: "adjetivos → substantivos" centred over the row
    labels, 22 px from the next head's title). The pitch grows only where the titles need it."""
    titles, n = [c[0] for c in cells], len(cells)
    for (title, _, delta), g in zip(cells, grids):
        title.set_x(g.lines.get_x())
        delta.set_x(g.lines.get_x())
    body = max(g.lines.width for g in grids)
    rows = grids[0].lines.get_left()[0] - grids[0].get_left()[0]  # the row labels, left of the first grid
    pitch = max(body + CELL_GAP, max(c[2].width for c in cells) + CELL_GAP,
                (sum(t.width for t in titles) + (n - 1) * TITLE_GAP - rows - body) / max(n - 1, 1))
    top = max(c.get_top()[1] for c in cells)
    for k, (cell, g) in enumerate(zip(cells, grids)):
        cell.shift(RIGHT * (k * pitch - g.lines.get_x()) + UP * (top - cell.get_top()[1]))
    w, xs = [t.width for t in titles], [g.lines.get_x() for g in grids]
    left, right = grids[0].get_left()[0], grids[-1].get_right()[0]
    for _ in range(3):  # pushed right, then back left inside the grids' span, until both hold
        for i in range(1, n):
            xs[i] = max(xs[i], xs[i - 1] + (w[i - 1] + w[i]) / 2 + TITLE_GAP)
        xs[-1] = min(xs[-1], right - w[-1] / 2)
        for i in range(n - 2, -1, -1):
            xs[i] = min(xs[i], xs[i + 1] - (w[i] + w[i + 1]) / 2 - TITLE_GAP)
        xs[0] = max(xs[0], left + w[0] / 2)
    for t, x in zip(titles, xs):
        t.set_x(x)
    return VGroup(*cells)


def every_token(plan: MultiHeadPlan) -> list[str]:
    """The tokens of every sentence the lesson shows: a direction named for one of them is that word in every
    frame of the lesson (review 48: "마법사" beside one sentence, "wizard" beside the next)."""
    return [t for s in plan.sentences for t in s.tokens]


def axis_names(stage: Stage, grid: AttentionGrid) -> VGroup:
    """Which side is which, once for all the heads, by the first grid (it carries the row labels): "queries"
    in the corner left of its column labels, "keys" beside its row labels (review 38: only the colours
    said which words attend; the caption's "its column" rests on it)."""
    th, say = stage.theme, stage.say
    cols, rows = grid.col_labels, grid.row_labels
    # with an arrow to the columns: by its place alone, over the row labels, it read as naming them (review 42)
    word = label(say("grid.axes.queries"), 20, th.query)
    x = grid.lines.get_left()[0] - 0.1
    pointer = Arrow([x - 0.45, cols.get_y(), 0], [x, cols.get_y(), 0], buff=0, stroke_width=3, color=th.query,
                    max_tip_length_to_length_ratio=0.35)
    word.move_to([pointer.get_left()[0] - 0.1 - word.width / 2, cols.get_y(), 0])
    top = VGroup(word, pointer)
    top.original_text = word.original_text
    side = side_title(say("grid.axes.keys"), 20, th.key)
    # between two rows' labels, not level with one, and a word's gap off them (review 41: "키" level with "cast",
    # 11 px from it, read as one label "키 cast")
    y = grid.lines.get_y() + (grid.cell_height / 2 if grid.n % 2 else 0.0)
    side.move_to([rows.get_left()[0] - 0.3 - side.width / 2, y, 0])
    return VGroup(top, side)


def tall_cells(s: SentenceSum, th, width: float, height: float, count: int = 1) -> tuple[float, float] | None:
    """A cell size for `count` narrow grids side by side in `width` (the first with the row labels,
    which the others share), each at most `height` tall: rows as tall as the height allows (so
    the labels are as large as the rows), columns as wide as the width allows; None when no size
    fits."""
    n = len(s.tokens)
    probe = (None, s.heads[0].pattern, s.heads[0].mask)
    gaps = 0.35 * (count - 1)
    ch = min(0.62, height / (n + 1.5))
    while ch > 0.2:
        g = AttentionGrid(probe, s.tokens, theme=th, cell_size=(ch, ch), max_label_font=22, label_fill=LABEL_FILL)
        left = g.lines.get_left()[0] - g.get_left()[0]
        cw = min(ch, (width - gaps - left - 0.05) / (n * count))
        if cw > 0:
            g = AttentionGrid(probe, s.tokens, theme=th, cell_size=(cw, ch), max_label_font=22,
                              label_fill=LABEL_FILL)
            if g.width + (count - 1) * n * cw + gaps <= width and g.height <= height:
                return cw, ch
        ch -= 0.01
    return None


class MultiHead(Chapter):
    key = "multi_head"

    def plan(self, setting) -> MultiHeadPlan:
        return plan_multi_head(setting)

    def play(self, stage: Stage, plan: MultiHeadPlan) -> None:
        drawn = {"sentences": []}
        stage.drawn[self.key] = drawn
        for n, s in enumerate(plan.sentences):
            drawn["sentences"].append(self.play_sentence(stage, plan, s, first=n == 0))
        if len(plan.sentences) > 1 and plan.directions:
            drawn["compare"] = self.compare(stage, plan)

    # --- one sentence --------------------------------------------------------------------------
    def play_sentence(self, stage: Stage, plan: MultiHeadPlan, s: SentenceSum, first: bool) -> dict:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        word = say.quote(s.tokens[s.focus])
        title = label(say(f"{T}.title", layer=plan.layer, count=plan.n_heads), 30, th.text)
        stage.region("title").fit(title)
        words = WordBoxes(s.tokens, theme=th, font_size=26, max_width=full.width)
        words.move_to([0, title.get_bottom()[1] - 0.2 - words.height / 2, 0])
        top = words.get_bottom()[1] - 0.2
        n = plan.n_heads
        cell_w = full.width / n
        show_labels = len(s.tokens) <= 8 and n <= 4
        cells, grids, columns = [], [], []
        head_labels = [self.head_label(stage, plan, h, cell_w - CELL_GAP, s.tokens) for h in s.heads]
        cols = [VectorColumn(h.delta, head=HEAD_ENTRIES, tail=TAIL_ENTRIES, font_size=18, theme=th,
                             # ΔE⃗₄⁽⁰⁾: the word's position below (as E⃗₄ beside it), the head above, in
                             # brackets (ΔE⃗₃ for head 3 beside E⃗₃ for word 3 read as word 3's change)
                             symbol=head_delta_symbol(s.focus + 1, h.head), symbol_color=th.delta_multi,
                             show_symbol=True, bracket_color=th.delta_multi) for h in s.heads]
        # the grids take the height the labels over them and the ΔEs under them leave
        room_h = (top - full.bottom - 0.1 - max(m.height for m in head_labels) - max(c.height for c in cols)
                  - 2 * 0.18)
        # the grids share their rows' labels: the first grid carries them, the others only their columns'
        cell_size = tall_cells(s, th, full.width - CELL_GAP * (n - 1), room_h, n) if show_labels else None
        for k, (h, head_label, col) in enumerate(zip(s.heads, head_labels, cols)):
            grid = AttentionGrid((None, h.pattern, h.mask), s.tokens if show_labels else None, theme=th,
                                 max_width=cell_w - 0.25, max_height=2.2, show_labels=show_labels, max_label_font=22,
                                 cell_size=cell_size, label_fill=LABEL_FILL, show_row_labels=k == 0)
            grid.set_mask("cleared")
            grid.set_content("dots")
            cell = VGroup(head_label, grid, col).arrange(DOWN, buff=0.18)
            cells.append(cell)
            grids.append(grid)
            columns.append(col)
        row = space_heads(cells, grids)
        settle_head_labels(cells)
        grid_top = min(g.get_top()[1] for g in grids)  # every grid (and its ΔE) on one line
        for cell, g in zip(cells, grids):
            VGroup(cell[1], cell[2]).shift(UP * (grid_top - g.get_top()[1]))
        fit_into(row, full.width, top - full.bottom - 0.1)
        row.move_to([0, top - row.height / 2, 0])
        names = axis_names(stage, grids[0]) if show_labels else VGroup()
        # what a dot's size means (the grids' dots are all one size function), in a free corner
        # one key for every sentence of the lesson (review 49: 0.10, then 0.25 on the next sentence's smaller
        # grids): with several sentences it starts at 0.25, and never goes under an earlier sentence's key
        key_floor = max(SMALL_GRID_WEIGHTS[0][0] if len(plan.sentences) > 1 else 0.0,
                    stage.drawn.get("multi_head_key_floor", 0.0))
        legend = corner_legend(stage, grids[0], [*(part for c in cells for part in c), title, words, *names],
                               smallest=key_floor)
        if legend is not None:
            stage.drawn["multi_head_key_floor"] = legend.weights[0]
        grids[0].legend, grids[0].axis_names = legend, names
        shown_legend = [FadeIn(legend)] if legend is not None else []
        shown_legend += [FadeIn(names)] if len(names) else []
        out = {"title": title, "words": words, "grids": grids, "columns": columns, "cells": cells, "sum": None,
               "moved": None, "note": None, "legend": legend, "axis_names": names}

        intro = f"{T}.caption_intro_real" if plan.real else f"{T}.caption_intro"
        shared = 0 < plan.n_kv_heads < plan.n_heads  # grouped queries: W_K and W_V are not each head's own
        if shared:
            intro += "_shared"
        if first:
            with stage.narrating(say(intro, layer=plan.layer, count=n, kv=plan.n_kv_heads)):
                stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(words, lag_ratio=0.08), run_time=1.0)
                stage.play(*(FadeIn(VGroup(c[0], c[1])) for c in cells), *shown_legend, run_time=1.2)
        else:
            with stage.narrating(say(f"{T}.caption_next", word=word)):
                stage.play(FadeIn(title), FadeIn(words, lag_ratio=0.08), run_time=0.8)
                stage.play(*(FadeIn(VGroup(c[0], c[1])) for c in cells), *shown_legend, run_time=1.0)
        with stage.narrating(say(f"{T}.caption_focus", word=word)):
            stage.play(words.animate.highlight(s.focus, th.query),
                       *(g.highlight_column(s.focus, color=th.query) for g in grids), run_time=1.0)
            stage.wait(0.6)
        if n <= PER_HEAD_CAPTIONS:
            for h, cell in zip(s.heads, cells):
                keys = say.quoted_words([s.tokens[j] for j in h.tops])
                line = f"{T}.caption_head_self" if h.tops == (s.focus,) else f"{T}.caption_head"
                if h.idle is not None:
                    line = f"{T}.caption_head_idle"
                shown = None
                if h.tops == (s.focus,) or h.idle is not None:  # the weight the caption reads, under the focus's own cell
                    g = cell[1]
                    shown = number(float(h.row[s.focus]), "weight", 22, th.highlight)
                    shown.next_to(g, DOWN, buff=0.08).set_x(g.cell_center(s.focus, s.focus)[0])
                with stage.narrating(say(line, role=head_name(say, plan, h, s.tokens), word=word, keys=keys,
                                         weight=float(h.row[s.focus]), least=at_least(h.idle or 0.0))):
                    stage.play(cell[0][0].animate.set_color(th.highlight),
                               *([FadeIn(shown)] if shown is not None else []), run_time=0.4)
                    stage.wait(0.9)  # the head named stays lit to the caption's end (its frame says which)
                stage.play(cell[0][0].animate.set_color(th.text), *([FadeOut(shown)] if shown is not None else []),
                           run_time=0.3)
        else:
            # each grid's strongest cell in the word's column, framed while the caption says each head looks
            # somewhere else (a wait over the unchanged grids pointed at nothing, review 53); on a real model
            # the strongest apart from the first token, where most heads park their weight (its note follows)
            rings = VGroup(*(cell[1].cell_rect(s.focus, strongest_key(h.row, s.focus, plan.real), th.highlight)
                             .set_stroke(width=3) for h, cell in zip(s.heads, cells)))
            out["strongest"] = rings
            with stage.narrating(say(f"{T}.caption_heads_many", count=n, word=word)):
                stage.play(FadeIn(rings), run_time=0.6)
                stage.wait(0.9)
            stage.play(FadeOut(rings), run_time=0.3)
        if plan.real and s.mean_first >= FIRST_NOTE:
            out["note"] = self.first_note(stage, plan, s, row, legend)
        with stage.narrating(say(f"{T}.caption_proposals", word=word, count=plan.d_model)):
            stage.play(*(FadeIn(c) for c in columns), run_time=1.2)
            stage.wait(0.8)
        out["sum"] = self.add_up(stage, plan, s, cells, grids, columns, words)
        if plan.directions:
            out["moved"] = self.moved(stage, plan, s, out["sum"])
        return out

    @staticmethod
    def head_label(stage: Stage, plan: MultiHeadPlan, h: HeadProposal, width: float, tokens=None) -> VGroup:
        """Two lines over a head's grid. The toy: its role, then "head h". A real model: "head h",
        then the role measured for it or its strongest habit on this sentence (the title names the layer).
        A role with nothing to act on in this sentence (every word keeps to itself): the second line
        says so, with the least weight a word keeps on itself."""
        th, say = stage.theme, stage.say
        ident = say("common.head.head_only", head=h.head)
        idle = say(f"{T}.idle_here", head=h.head, weight=at_least(h.idle)) if h.idle is not None else None
        if plan.real:
            first = ident
            second = head_name(say, plan, h, tokens) if h.role else habit_line(say, h)
            if idle is not None:
                second = say(f"{T}.idle_here_real", role=second, weight=at_least(h.idle))
            elif h.role:  # the role was measured on other phrases: under it, its habit on this sentence, with
                # its weight, as every other head's (review 34: "sense from context" alone, over a first-token
                # pattern); each on lines of its own, at the others' size
                habit = say(f"{T}.habit_{h.habit}", weight=h.habit_weight)
                below = VGroup(wrapped(second, width, 20, th.dim, 2), wrapped(habit, width, 20, th.dim, 2))
                below.arrange(DOWN, buff=0.12)  # the two as far apart as the lines within each (review 35: "context" on "first token")
                top = label(first, 22, th.text)
                fit_into(top, width, 0.75)
                fit_into(below, width, 1.4)
                return VGroup(top, below).arrange(DOWN, buff=0.06)
        else:
            first, second = head_name(say, plan, h, tokens), (idle or ident)
        top = label(first, 22, th.text)
        if top.width > width / TOP_SHRINK:  # a narrow column: the role on two lines, not run into its neighbour
            top = wrapped(first, width, 22, th.text, 2)
        below = label(second, 20, th.dim)
        if below.width > width:  # a narrow column (many heads): the line wrapped, not shrunk, each line centred
            below = wrapped(second, width, 20, th.dim, 2)
            for line in below:
                line.set_x(below.get_x())
        fit_into(top, width, 0.75)
        fit_into(below, width, 0.7)
        return VGroup(top, below).arrange(DOWN, buff=0.06)

    # --- the sum ------------------------------------------------------------------------------
    def add_up(self, stage: Stage, plan: MultiHeadPlan, s: SentenceSum, cells, grids, columns, words) -> VGroup:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        word = say.quote(s.tokens[s.focus])
        fs = 18
        i = s.focus + 1  # the video counts words from 1
        E = VectorColumn(s.E, head=HEAD_ENTRIES, tail=TAIL_ENTRIES, font_size=fs, theme=th,
                         symbol=symbol_source("E", i), symbol_color=th.embedding, show_symbol=True)
        Ep = VectorColumn(s.E_prime, head=HEAD_ENTRIES, tail=TAIL_ENTRIES, font_size=fs, theme=th,
                          symbol=symbol_source("E", i, prime=True), symbol_color=th.updated, show_symbol=True,
                          bracket_color=th.updated)
        targets = [c.copy() for c in columns]
        pieces = [E]
        for t in targets:
            pieces += [math("+", 30, th.text), t]
        bias = None
        if s.has_bias:
            bias = VectorColumn(s.bias, head=HEAD_ENTRIES, tail=TAIL_ENTRIES, font_size=fs, theme=th,
                                symbol="b_O", show_symbol=True)
            pieces += [math("+", 30, th.text), bias]
        pieces += [math("=", 30, th.text), Ep]
        eq = VGroup(*pieces).arrange(RIGHT, buff=0.16)
        middle = pieces[1].get_y()  # the signs' line: every column's brackets centred on it
        for p in pieces:
            if isinstance(p, VectorColumn):
                p.shift(UP * (middle - p.brackets.get_y()))
        top = words.get_bottom()[1] - 0.3
        eq_scale = min((full.width - 0.4) / eq.width, 2.8 / eq.height)
        eq.scale(eq_scale)
        eq.move_to([0, top - eq.height / 2, 0])
        eq.columns, eq.E, eq.E_prime, eq.bias = targets, E, Ep, bias
        note = None
        if s.rounding_off:  # say so, and mark the rows where the drawn digits do not add up
            note = rounding_note(stage, full.width - 1.0)
            fit_into(note, full.width - 0.4, 0.8).next_to(eq, DOWN, buff=0.2)
            note = VGroup(note, rounding_marks(stage, Ep, s.rounding_off, scale=eq_scale))
        declare_rows([E, *targets, *([bias] if bias is not None else [])], Ep, note[1] if note is not None else None)
        eq.note = note
        key = f"{T}.caption_sum_bias" if s.has_bias else f"{T}.caption_sum"
        with stage.narrating(say(key, word=word)):
            legend, names = getattr(grids[0], "legend", None), getattr(grids[0], "axis_names", VGroup())
            stage.play(*(FadeOut(VGroup(c[0], c[1])) for c in cells), *([FadeOut(legend)] if legend else []),
                       *([FadeOut(names)] if len(names) else []), run_time=0.6)
            stage.play(*(ReplacementTransform(c, t) for c, t in zip(columns, targets)),
                       FadeIn(E), *(FadeIn(p) for p in pieces if p not in targets and p is not E and p is not Ep),
                       run_time=1.4)
            stage.play(FadeIn(Ep, shift=LEFT * 0.3), *([FadeIn(note)] if note is not None else []), run_time=0.8)
            stage.wait(1.0)
        stage.remove(*grids)
        return eq

    def moved(self, stage: Stage, plan: MultiHeadPlan, s: SentenceSum, eq: VGroup) -> VGroup:
        """Under the sum: E and E′ of the word, projected on each named direction."""
        th, say = stage.theme, stage.say
        full = stage.region("full")
        rows = [[label(direction_name(say, name, every_token(plan)), 24, th.text), math(symbol_source("E"), 26, th.embedding),
                 number(a, "signed2", 24, th.embedding), label("→", 24, th.dim), math(symbol_source("E", prime=True), 26, th.updated),
                 number(b, "signed2", 24, th.updated)] for name, (a, b) in zip(plan.directions, s.projections)]
        lines = table(rows, gap=0.22, row_gap=0.16, first_left=True)
        head = mixed_label(say(f"{T}.moved_title", word=say.quote(s.tokens[s.focus])), 24, th.dim)
        box = VGroup(head, lines).arrange(DOWN, buff=0.2, aligned_edge=LEFT)
        above = eq.note if eq.note is not None else eq
        room = Region("moved", full.left, full.right, full.bottom, above.get_bottom()[1] - 0.25)
        fit_into(box, room.width, room.height).move_to(room.center)
        name, (a, b) = max(zip(plan.directions, s.projections), key=lambda d: d[1][1] - d[1][0])
        with stage.narrating(say(f"{T}.caption_moved", word=say.quote(s.tokens[s.focus]),
                                 direction=direction_name(say, name, every_token(plan)), before=a, after=b)):
            stage.play(FadeIn(box, shift=UP * 0.1), run_time=0.8)
            stage.wait(1.2)
        return box

    def first_note(self, stage: Stage, plan: MultiHeadPlan, s: SentenceSum, row, legend=None) -> VGroup:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        text = say(f"{T}.real_first", word=say.quote(s.tokens[s.focus]), first=say.quote(s.tokens[0]),
                   share=s.mean_first)
        lines = wrapped(text, full.width - 1.0, 22, th.text, 3)
        plate = SurroundingRectangle(lines, buff=0.18, corner_radius=0.08, color=th.dim, stroke_width=1.5)
        plate.set_fill(th.background, opacity=0.94)
        note = VGroup(plate, lines).move_to([0, full.bottom + 0.2 + lines.height / 2 + 0.18, 0])
        legend = [legend] if legend is not None else []  # the dot legend steps aside while the note is read
        with stage.narrating(text):
            stage.play(FadeIn(note), *(FadeOut(m) for m in legend), run_time=0.6)
            stage.wait(1.0)
        stage.play(FadeOut(note), *(FadeIn(m) for m in legend), run_time=0.4)
        return note

    # --- sentences compared -------------------------------------------------------------------
    def compare(self, stage: Stage, plan: MultiHeadPlan) -> VGroup:
        """Every sentence's word, E′ along every direction: the same word moved apart by context."""
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        title = label(say(f"{T}.compare_title"), 30, th.text)
        stage.region("title").fit(title)
        header = [label("", 22, th.text)] + [
            VGroup(label(direction_name(say, d, every_token(plan)), 24, th.text),
                   baseline_row([math(symbol_source("E"), 22, th.embedding), label("→", 20, th.dim),
                                 math(symbol_source("E", prime=True), 22, th.updated)]))
            .arrange(DOWN, buff=0.1) for d in plan.directions]
        rows = [header]
        for s in plan.sentences:
            sent = VGroup(label(say.quote(s.tokens[s.focus]), 24, th.query),
                          label(" ".join(s.tokens), 18, th.dim)).arrange(DOWN, buff=0.08, aligned_edge=LEFT)
            cells = [sent]
            for a, b in s.projections:
                cells.append(baseline_row([number(a, "signed2", 22, th.embedding), label("→", 22, th.dim),
                                           number(b, "signed2", 22, th.updated)]))
            rows.append(cells)
        room_w, room_h = full.width - 0.5, title.get_bottom()[1] - full.bottom - 0.6
        grid = table(rows, gap=0.5, row_gap=0.3, first_left=True)
        k = min(room_w / grid.width, room_h / grid.height, COMPARE_MAX_SCALE)
        if grid.height * k < 0.8 * room_h:  # held by the width: the rows spread to use the height
            spread = (0.8 * room_h / k - grid.height) / max(1, len(rows) - 1)
            grid = table(rows, gap=0.5, row_gap=0.3 + spread, first_left=True)
        heads = [c[0] for c in grid[0][1:]]  # the directions' names on one baseline ("mago" not lifted)
        base = text_baseline(heads[0])
        for h in heads[1:]:
            h.shift(UP * (base - text_baseline(h)))
        # the table fills the frame under the title (scaled up as well as down): a chapter's last frame
        grid.scale(min(room_w / grid.width, room_h / grid.height, COMPARE_MAX_SCALE))
        grid.move_to([0, (title.get_bottom()[1] - 0.3 + full.bottom) / 2, 0])
        same = len({s.tokens[s.focus] for s in plan.sentences}) < len(plan.sentences)
        title.become(label(say(f"{T}.compare_title" if same else f"{T}.compare_title_other"), 30, th.text))
        stage.region("title").fit(title)
        table_ = grid
        with stage.narrating(say(compare_caption(plan, same))):
            stage.play(FadeIn(title), FadeIn(table_, lag_ratio=0.15), run_time=1.5)
            stage.wait(2.0)
        return table_


def strongest_key(row, focus: int, real: bool) -> int:
    """The key a head's row (over keys up to `focus`) weighs most; on a real model, apart from the first token
    (the sink most heads park their weight on) when the row has another."""
    weights = np.array(row[: focus + 1], dtype=float)
    if real and focus > 0:
        weights[0] = -1.0
    return int(np.argmax(weights))
