"""A rectangular grid of weights: rows of one sentence against columns of another.

`AttentionGrid` draws a square pattern (self-attention: one sentence against itself). Cross-attention
has two sentences of different lengths, so its pattern is n_query × n_key. `WeightGrid` draws any
`[query, key]` array: `layout="video"` puts keys in the rows and queries in the columns, "paper"
the transpose, and every lookup takes (query, key) whatever the layout. Each cell is shaded by its
weight and shows the weight as a number (built with `number()`, so `.value` is the trace's value)
when the cell is large enough to read it.

    grid = WeightGrid(pattern, queries=en_tokens, keys=fr_tokens, theme=theme, max_width=9, max_height=5)
    grid.number_mobs[(query, key)].value == pattern[query, key]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Line, Rectangle, VGroup

from ..plans.rounding import drawn_misses
from ..review import declare_sum
from ..style import DARK, Theme
from .text import label, number

MIN_NUMBER_CELL = 0.42  # a cell narrower than this shows its shade only


def baseline(word) -> float:
    """The y of a word's baseline: the highest bottom among its full-size glyphs (a descender, as
    in "je", ends below the baseline; the other letters end on it)."""
    glyphs = [g for g in word.submobjects if g.has_points()] or [word]
    tallest = max(g.height for g in glyphs)
    return max(g.get_bottom()[1] for g in glyphs if g.height >= 0.4 * tallest)


class WeightGrid(VGroup):
    def __init__(self, weights, queries: Sequence[str], keys: Sequence[str], *, layout: str = "video",
                 theme: Theme = DARK, max_width: float = 9.0, max_height: float = 5.0, max_cell: float = 1.0,
                 shade: str | None = None, label_font: float = 26):
        super().__init__()
        if layout not in ("video", "paper"):
            raise ValueError(f"unknown layout {layout!r}: use 'video' or 'paper'")
        W = np.asarray(weights, dtype=float)
        if W.shape != (len(queries), len(keys)):
            raise ValueError(f"weights of shape {W.shape} for {len(queries)} queries and {len(keys)} keys")
        self.weights, self.layout, self.theme = W, layout, theme
        self.queries, self.keys = tuple(queries), tuple(keys)
        video = layout == "video"
        row_tokens, col_tokens = (self.keys, self.queries) if video else (self.queries, self.keys)
        row_color, col_color = (theme.key, theme.query) if video else (theme.query, theme.key)
        self.n_rows, self.n_cols = len(row_tokens), len(col_tokens)

        row_labels = [label(t, label_font, row_color) for t in row_tokens]
        col_labels = [label(t, label_font, col_color) for t in col_tokens]
        lw = max(m.width for m in row_labels) + 0.25
        lh = max(m.height for m in col_labels) + 0.25
        cell = min(max_cell, (max_width - lw) / self.n_cols, (max_height - lh) / self.n_rows)
        k = 1.0
        if cell < 0.3 * max_cell:  # long sentences: smaller labels too
            k = max(cell / (0.3 * max_cell), 0.4)
            for m in row_labels + col_labels:
                m.scale(k)
            lw, lh = lw * k, lh * k
            cell = min(max_cell, (max_width - lw) / self.n_cols, (max_height - lh) / self.n_rows)
        # a column as wide as its widest label when there is room (cells need not be square)
        need = max(m.width for m in col_labels) + 0.14
        cell_w = max(cell, min(need, (max_width - lw) / self.n_cols))
        if need > cell_w:
            for m in col_labels:
                m.scale((cell_w - 0.14) / (need - 0.14))
        self.cell, self.cell_w = cell, cell_w

        shade = shade or theme.positive
        self.cells = VGroup()
        self._cell_of: dict[tuple[int, int], Rectangle] = {}
        self.number_mobs: dict[tuple[int, int], object] = {}
        self.numbers = VGroup()
        font = min(24 * cell / 0.9, 26)
        for q in range(len(self.queries)):
            for kk in range(len(self.keys)):
                r, c = self._rc(q, kk)
                rect = Rectangle(width=cell_w, height=cell, stroke_width=0)
                rect.set_fill(shade, opacity=float(np.clip(W[q, kk], 0, 1)) * 0.85)
                rect.move_to([c * cell_w + cell_w / 2, -r * cell - cell / 2, 0])
                self.cells.add(rect)
                self._cell_of[(q, kk)] = rect
                if cell >= MIN_NUMBER_CELL:
                    m = number(W[q, kk], "weight", font_size=font, color=theme.text)
                    if m.width > 0.86 * cell_w:
                        m.scale(0.86 * cell_w / m.width)
                    m.move_to(rect)
                    self.number_mobs[(q, kk)] = m
                    self.numbers.add(m)
        lines = VGroup()
        for r in range(self.n_rows + 1):
            lines.add(Line([0, -r * cell, 0], [self.n_cols * cell_w, -r * cell, 0]))
        for c in range(self.n_cols + 1):
            lines.add(Line([c * cell_w, 0, 0], [c * cell_w, -self.n_rows * cell, 0]))
        lines.set_stroke(theme.dim, width=1.2)
        self.lines = lines
        # labels sit on a common baseline: a descender ("j", "p") does not lift a word
        ref = label("0", label_font, theme.text).scale(k)  # a digit: no word of any language
        half_x = 0.35 * (ref.get_top()[1] - baseline(ref))  # half the x-height, about
        for r, m in enumerate(row_labels):
            m.move_to([-0.15 - m.width / 2, 0, 0])
            m.shift(UP * (-r * cell - cell / 2 - half_x - baseline(m)))
        for c, m in enumerate(col_labels):
            m.move_to([c * cell_w + cell_w / 2, 0, 0])
            m.shift(UP * (0.22 - baseline(m)))
        self.row_labels, self.col_labels = VGroup(*row_labels), VGroup(*col_labels)
        self.add(self.cells, self.lines, self.numbers, self.row_labels, self.col_labels)
        self.center()
        # each query's drawn weights make 1, or a mark says they miss it by rounding (`rounding_marks`):
        # the lint adds up every query's numbers while they are drawn
        self.sum_marks: list = []
        for q in range(len(self.queries)):
            mobs = [self.number_mobs.get((q, k)) for k in range(len(self.keys))]
            if all(m is not None for m in mobs):
                declare_sum(self, mobs, "1", lambda q=q: [g.of[q] for g in self.sum_marks if q in g.of],
                            name=f"{self.queries[q]}'s weights")

    def missed_queries(self) -> list[int]:
        """The queries whose weights, as drawn (two decimals), do not make 1.00."""
        return [q for q in range(len(self.queries))
                if all((q, k) in self.number_mobs for k in range(len(self.keys)))
                and drawn_misses([self.number_mobs[(q, k)].shown for k in range(len(self.keys))], "1")]

    def rounding_marks(self, mark: str, font_size: float = 26) -> VGroup:
        """`mark` ("≈") under each query's column (video) or after its row (paper) whose drawn weights
        miss 1 by rounding; `.of[q]` is the mark of query q. Shown, they are what the lint accepts."""
        marks, of = VGroup(), {}
        for q in self.missed_queries():
            m = label(mark, font_size, self.theme.dim)
            cells = self.query_cells(q)
            if self.layout == "video":
                m.next_to(cells, DOWN, buff=0.08)
            else:
                m.next_to(cells, RIGHT, buff=0.08)
            marks.add(m)
            of[q] = m
        marks.of = of
        self.sum_marks.append(marks)
        return marks

    def _rc(self, query: int, key: int) -> tuple[int, int]:
        return (key, query) if self.layout == "video" else (query, key)

    def cell_rect(self, query: int, key: int) -> Rectangle:
        return self._cell_of[(query, key)]

    def query_label(self, query: int):
        return (self.col_labels if self.layout == "video" else self.row_labels)[query]

    def key_label(self, key: int):
        return (self.row_labels if self.layout == "video" else self.col_labels)[key]

    def query_cells(self, query: int) -> VGroup:
        """The cells of one query (a column in the video layout): they sum to 1."""
        return VGroup(*(self._cell_of[(query, k)] for k in range(len(self.keys))))

    def outline(self, query: int, color: str, width: float = 4) -> Rectangle:
        """A box around one query's cells."""
        cells = self.query_cells(query)
        box = Rectangle(width=cells.width, height=cells.height).move_to(cells)
        return box.set_stroke(color, width=width).set_fill(opacity=0)

    def side(self, direction) -> np.ndarray:
        return {"up": self.get_edge_center(UP), "down": self.get_edge_center(DOWN),
                "left": self.get_edge_center(LEFT), "right": self.get_edge_center(RIGHT)}[direction]
