"""A table of real numbers with words along its rows and columns: a score matrix with its tokens,
an attention pattern read by rows, a dictionary of keys and values.

    t = NumberTable(scores, kind="score", row_labels=tokens, col_labels=tokens, theme=th)
    t.cell(1, 3)                  # the number mobject of row 1, column 3 (it keeps .value, .shown)
    self.play(t.swap(1, 3, -np.inf, "score", th.mask))   # the cell becomes −∞, in the mask colour

`rows` / `cols` pick which indices are drawn (None = an ellipsis row or column), so a wide matrix
can be shown as a window of its real entries. Cells are `number()` mobjects; row labels sit at the
left, column labels on top (rotated words are hard to read: keep them short, tokens are).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from manim import DOWN, RIGHT, UP, AnimationGroup, FadeIn, FadeOut, VGroup, VMobject

from ..style import DARK, Theme
from .text import label, number, text_baseline
from .vectors import bracket_pair, ellipsis_dots


class NumberTable(VGroup):
    """values[i, j] drawn at row i, column j. kind: a `number()` kind (or "zero": an exact 0 drawn
    as "0"), or a function (i, j) -> kind.
    color: a colour, or a function (i, j, value) -> colour. Parts: `.cells` {(i, j): mobject},
    `.row_labels` {i: mobject}, `.col_labels` {j: mobject}, `.dots`, `.brackets` (if `brackets`)."""

    def __init__(self, values: np.ndarray, *, kind: str | Callable = "vec", color: str | Callable | None = None,
                 row_labels: Sequence[str] | None = None, col_labels: Sequence[str] | None = None,
                 rows: Sequence[int | None] | None = None, cols: Sequence[int | None] | None = None,
                 font_size: float = 20, label_size: float | None = None, theme: Theme = DARK,
                 row_label_color: str | None = None, col_label_color: str | None = None,
                 brackets: bool = False, h_gap: float = 0.22, row_height: float | None = None):
        super().__init__()
        self.values = np.asarray(values, dtype=float)
        self.theme = theme
        self.font_size = font_size
        self.cell_kind = kind
        self.cell_color = color
        n_r, n_c = self.values.shape
        self.shown_rows = list(range(n_r)) if rows is None else list(rows)
        self.shown_cols = list(range(n_c)) if cols is None else list(cols)
        self.row_h = row_height or font_size * 0.0135 + 0.14
        ls = label_size or font_size
        self.cells: dict[tuple[int, int], VMobject] = {}
        for i in self.shown_rows:
            for j in self.shown_cols:
                if i is not None and j is not None:
                    self.cells[(i, j)] = self._make(i, j, self.values[i, j])
        col_w = max([m.width for m in self.cells.values()] + [0.3])
        self.col_labels: dict[int, VMobject] = {}
        if col_labels is not None:
            for j in self.shown_cols:
                if j is not None:
                    self.col_labels[j] = label(col_labels[j], ls, col_label_color or theme.text)
            col_w = max([col_w] + [m.width for m in self.col_labels.values()])
        self.col_w = col_w + h_gap
        self.dots = VGroup()
        grid = VGroup()
        for r, i in enumerate(self.shown_rows):
            for c, j in enumerate(self.shown_cols):
                at = np.array([c * self.col_w, -r * self.row_h, 0.0])
                if i is None or j is None:
                    direction = DOWN + RIGHT if (i is None and j is None) else (DOWN if i is None else RIGHT)
                    d = ellipsis_dots(direction, spacing=self.row_h * 0.18, color=theme.dim).move_to(at)
                    self.dots.add(d)
                    grid.add(d)
                else:
                    self.cells[(i, j)].move_to(at)
                    grid.add(self.cells[(i, j)])
        self.grid = grid
        self.add(grid)
        self.brackets = None
        if brackets:
            self.brackets = bracket_pair(grid, color=theme.text, extra_height=self.row_h * 0.2)
            self.add(self.brackets)
        top = grid.get_top()[1]
        left = (self.brackets or grid).get_left()[0]
        for c, j in enumerate(self.shown_cols):
            if j is not None and j in self.col_labels:
                m = self.col_labels[j]
                m.move_to([c * self.col_w, 0, 0])
                m.shift(UP * (top + 0.18 - text_baseline(m)))  # one baseline, descenders below it
                self.add(m)
        self.row_labels: dict[int, VMobject] = {}
        if row_labels is not None:
            for r, i in enumerate(self.shown_rows):
                if i is None:
                    continue
                m = label(row_labels[i], ls, row_label_color or theme.text)
                m.move_to([left - 0.18 - m.width / 2, -r * self.row_h, 0])
                self.row_labels[i] = m
                self.add(m)
        self.center()

    def _make(self, i: int, j: int, value: float, kind: str | None = None, color: str | None = None) -> VMobject:
        k = kind or (self.cell_kind(i, j) if callable(self.cell_kind) else self.cell_kind)
        if color is None:
            color = self.cell_color(i, j, value) if callable(self.cell_color) else (self.cell_color or self.theme.text)
        if k == "zero":  # an exact zero (a masked weight): "0", not a rounded "0.00"
            m = label("0", self.font_size, color)
            m.value, m.shown = 0.0, "0"
        else:
            m = number(value, k, self.font_size, color)
        m.index, m.kind = (i, j), k
        return m

    def cell(self, i: int, j: int) -> VMobject:
        return self.cells[(i, j)]

    def row(self, i: int) -> VGroup:
        return VGroup(*(m for (r, _), m in self.cells.items() if r == i))

    def column(self, j: int) -> VGroup:
        return VGroup(*(m for (_, c), m in self.cells.items() if c == j))

    def number_like(self, value: float, kind: str, color: str) -> VMobject:
        """A number in the cells' size, however the table was scaled since (for a column beside it)."""
        ref = next(iter(self.cells.values()))
        fresh = number(ref.value, getattr(ref, "kind", "vec"), self.font_size)
        return number(value, kind, self.font_size, color).scale(ref.height / max(fresh.height, 1e-9))

    def swap(self, i: int, j: int, value: float, kind: str | None = None, color: str | None = None,
             **kwargs) -> AnimationGroup:
        """An animation that replaces cell (i, j) by `value` (kept in `.cells` and `.values`)."""
        old = self.cells[(i, j)]
        new = self._make(i, j, value, kind, color).scale(
            old.height / max(self._make(i, j, old.value, getattr(old, "kind", None)).height, 1e-9))
        new.move_to(old.get_center())
        self.cells[(i, j)] = new
        self.values[i, j] = value
        self.remove(old) if old in self.submobjects else None
        self.grid.remove(old)
        self.grid.add(new)
        return AnimationGroup(FadeOut(old, shift=DOWN * 0.1), FadeIn(new, shift=DOWN * 0.1), **kwargs)

    def label_column(self) -> VGroup:
        return VGroup(*self.row_labels.values())

    def header_row(self) -> VGroup:
        return VGroup(*self.col_labels.values())

    def right_of_rows(self, gap: float = 0.3) -> float:
        return self.grid.get_right()[0] + gap


def aligned_rows(rows: Sequence[Sequence[VMobject]], col_gap: float = 0.3, row_step: float = 0.5,
                 align: str | Sequence[str] = "center") -> VGroup:
    """Mobjects laid out as a table: row r at y = −r·row_step, each column as wide as its widest
    entry, entries centred in their column (`align`: "center", "left" or "right", for all columns
    or one per column; right-aligned numbers line up their last digits). Returns a VGroup of one
    VGroup per row."""
    n = max(map(len, rows))
    widths = [max(r[c].width for r in rows if c < len(r)) for c in range(n)]
    aligns = [align] * n if isinstance(align, str) else list(align) + ["center"] * (n - len(align))
    out = VGroup()
    for k, r in enumerate(rows):
        x = 0.0
        for c, m in enumerate(r):
            y = -k * row_step
            if aligns[c] == "right":
                m.move_to([x + widths[c] - m.width / 2, y, 0])
            elif aligns[c] == "left":
                m.move_to([x + m.width / 2, y, 0])
            else:
                m.move_to([x + widths[c] / 2, y, 0])
            x += widths[c] + col_gap
        out.add(VGroup(*r))
    return out
