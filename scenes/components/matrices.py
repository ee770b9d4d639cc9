"""Weight matrices and the matrix–vector product.

    W = WeightMatrix.from_trace(head.W_Q, name="W_Q", name_color=theme.query, theme=theme)
    prod = MatVecProduct(W, VectorColumn(x, head=W.col_head, tail=W.col_tail))
    self.add(prod); self.play(prod.sweep())   # boxes sweep each row; Q⃗ entries count up

Orientation: the trace stores weights the torch way, acting on row vectors (q = x @ W_Q, W_Q is
[d_model, d_head]). The video draws a d_head × d_model matrix times a column vector, i.e. W_Q.T.
`WeightMatrix.from_trace` does that transpose, so every shown entry (i, j) is W.T[i, j] = W[j, i]
and the product's entries are (W.T @ x)[i] = (x @ W)[i]. The same holds for W_K, W_V and for W_O
([d_head, d_model]; drawn d_model × d_head, mapping a d_head vector back to embedding space).

Entry colours follow sign and magnitude: positive blue, negative red, each going from dark
(|w| ≈ 0) to light (|w| = the largest |entry| of the whole matrix).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from manim import (
    DOWN, RIGHT, UP, Animation, AnimationGroup, Create, FadeOut, ManimColor, Succession,
    Rectangle, SurroundingRectangle, Transform, VGroup, VMobject, interpolate_color,
)

from ..style import DARK, Theme, fmt_vec
from .text import label, number
from .vectors import VectorColumn, bracket_pair, ellipsis_dots, math, window_indices

ROW_BOX_BUFF = 0.08  # a row's box stands this far outside its matrix's brackets (as a vector's box does)
VEC_BOX_BUFF = 0.08  # the vector's box, round its brackets
SYMBOL_CLEAR = 0.2  # ... and its name this far over that box (at 0.1, Σⱼ's j read as on the box once scaled: review 52)


def signed_color(value: float, scale: float, theme: Theme = DARK) -> str:
    """Positive: theme.positive, negative: theme.negative; from a faint version (|value| ≈ 0) to
    a bright one (|value| = scale). "Faint" is toward the background, so this reads as
    dark→light on the dark theme and light→dark on the light theme."""
    hue = ManimColor(theme.positive if value >= 0 else theme.negative)
    alpha = 0.0 if scale <= 0 else min(abs(float(value)) / scale, 1.0)
    # the faint end still reads on a washed-out projector: 62% of the way from the background to the hue
    faint = interpolate_color(ManimColor(theme.background), hue, 0.62 if theme.is_dark else 0.7)
    bright = interpolate_color(hue, ManimColor(theme.text), 0.35)
    return interpolate_color(faint, bright, alpha).to_hex()


class WeightMatrix(VGroup):
    """A window of a real matrix, drawn as given: `values[i, j]` is row i, column j on screen.

    Shows the first `row_head` and last `row_tail` rows (likewise columns), with ⋮, ⋯ and ⋱ for
    the hidden ones. Parts: `.cells` {(i, j): number mobject} with real indices, `.dots`,
    `.brackets`, `.label` (MathTypst name above, if `name`), `.grid` (entries and dots).
    `.shown_rows` / `.shown_cols` list real indices per on-screen row/column (None = ellipsis).
    """

    def __init__(self, values: np.ndarray, *, name: str | None = None, name_color: str | None = None,
                 row_head: int = 5, row_tail: int = 1, col_head: int = 5, col_tail: int = 1,
                 font_size: float = 20, theme: Theme = DARK, bracket_color: str | None = None,
                 h_gap: float = 0.16, row_height: float | None = None):
        super().__init__()
        self.values = np.asarray(values, dtype=float)
        if self.values.ndim != 2:
            raise ValueError(f"a weight matrix must be 2-D, got shape {self.values.shape}")
        self.theme = theme
        self.font_size = font_size
        self.col_head, self.col_tail = col_head, col_tail
        self.row_head, self.row_tail = row_head, row_tail
        self.scale_ref = float(np.abs(self.values).max()) if self.values.size else 0.0
        n_rows, n_cols = self.values.shape
        self.shown_rows = window_indices(n_rows, row_head, row_tail)
        self.shown_cols = window_indices(n_cols, col_head, col_tail)
        row_h = row_height or font_size * 0.0135 + 0.06
        self.row_height = row_h

        self.cells: dict[tuple[int, int], VMobject] = {}
        self.dots = VGroup()
        self.grid = VGroup()
        # build the numbers first to know the column width
        for i in self.shown_rows:
            for j in self.shown_cols:
                if i is None or j is None:
                    continue
                v = self.values[i, j]
                # an entry written "0.0" has no sign to show: the neutral dim colour, not a red or blue zero
                color = theme.dim if fmt_vec(v) == "0.0" else signed_color(v, self.scale_ref, theme)
                m = number(v, "vec", font_size=font_size, color=color)
                m.index = (i, j)
                self.cells[(i, j)] = m
        col_w = max((m.width for m in self.cells.values()), default=0.3) + h_gap
        dot_space = row_h * 0.22
        for r, i in enumerate(self.shown_rows):
            y = -r * row_h
            for c, j in enumerate(self.shown_cols):
                right_x = (c + 1) * col_w
                centre_x = right_x - (col_w - h_gap) / 2
                if i is None and j is None:
                    d = ellipsis_dots(DOWN + RIGHT, spacing=dot_space, color=theme.dim).move_to([centre_x, y, 0])
                elif i is None:
                    d = ellipsis_dots(DOWN, spacing=dot_space, color=theme.dim).move_to([centre_x, y, 0])
                elif j is None:
                    d = ellipsis_dots(RIGHT, spacing=dot_space * 1.3, color=theme.dim).move_to([centre_x, y, 0])
                else:
                    m = self.cells[(i, j)]
                    m.move_to([right_x - m.width / 2, y, 0])
                    self.grid.add(m)
                    continue
                d.shown_at = (i, j)
                self.dots.add(d)
                self.grid.add(d)
        self.brackets = bracket_pair(self.grid, color=bracket_color or theme.text, extra_height=row_h * 0.25)
        self.add(self.brackets, self.grid)
        self.label = None
        if name:
            self.label = math(name, font_size=font_size * 1.8, color=name_color or theme.text)
            self.label.next_to(self.brackets, UP, buff=0.15)
            self.add(self.label)
        self.center()

    @classmethod
    def from_trace(cls, W: np.ndarray, **kwargs) -> "WeightMatrix":
        """Draw a trace weight (W_Q/W_K/W_V [d_model, d_head], W_O [d_head, d_model]) as the
        video does: the map's output dimension down, its input across, i.e. W.T (see module doc)."""
        return cls(np.asarray(W).T, **kwargs)

    # --- access -------------------------------------------------------------------------------
    def cell(self, i: int, j: int) -> VMobject:
        n_rows, n_cols = self.values.shape
        key = (i % n_rows, j % n_cols)
        if key not in self.cells:
            raise IndexError(f"entry {key} is hidden behind an ellipsis")
        return self.cells[key]

    def row_mobjects(self, i: int) -> VGroup:
        """Everything drawn in matrix row `i` (shown entries and its ⋯)."""
        i = i % self.values.shape[0]
        r = self.shown_rows.index(i)
        per_row = len(self.shown_cols)
        return VGroup(*self.grid.submobjects[r * per_row:(r + 1) * per_row])


class CountUp(Animation):
    """A number counts from 0 up to its own value (the value it was built with), showing each
    intermediate value at the number's format; it ends as exactly the original mobject."""

    def __init__(self, entry: VMobject, **kwargs):
        self.entry = entry
        self.original = entry.copy()
        self.kind = kwargs.pop("kind", "vec")
        self.font_size = kwargs.pop("font_size", None)
        super().__init__(entry, **kwargs)

    def begin(self):
        self.right_edge = self.original.get_right()
        self.y = self.original.get_center()[1]
        self.color = self.original[0].get_fill_color() if len(self.original) else self.original.get_fill_color()
        super().begin()

    def interpolate_mobject(self, alpha: float) -> None:
        a = self.rate_func(alpha)
        if a >= 1:
            self.entry.become(self.original)
            return
        fs = self.font_size or 24
        m = number(self.original.value * a, self.kind, font_size=fs, color=self.color)
        m.move_to([self.right_edge[0] - m.width / 2, self.y, 0])
        self.entry.become(m)

    def finish(self):
        super().finish()
        self.entry.become(self.original)
        self.entry.set_opacity(1)


class MatVecProduct(VGroup):
    """matrix · vector = result, laid out left to right, the result's entries being the real
    product `matrix.values @ vector.values` (float64) in the matrix's shown rows.

    The vector must be windowed like the matrix's columns (same length, same head/tail).
    `result_symbol` (Typst source) labels the result column. The result entries start hidden;
    `sweep()` reveals them row by row while highlight boxes move down the matrix.
    """

    def __init__(self, matrix: WeightMatrix, vector: VectorColumn, *, result_symbol: str | None = None,
                 result_color: str | None = None, theme: Theme | None = None, buff: float = 0.25):
        super().__init__()
        theme = theme or matrix.theme
        self.theme = theme
        if len(vector.values) != matrix.values.shape[1]:
            raise ValueError(f"matrix has {matrix.values.shape[1]} columns but the vector has {len(vector.values)} entries")
        vec_rows = [i for i in vector.shown_indices]
        if vec_rows != matrix.shown_cols:
            raise ValueError(f"the vector shows entries {vec_rows} but the matrix columns {matrix.shown_cols}; "
                             "build the vector with head=matrix.col_head, tail=matrix.col_tail")
        self.matrix = matrix
        self.vector = vector
        self.product = matrix.values @ vector.values  # the real product, every row
        self.result = VectorColumn(self.product, head=matrix.row_head, tail=matrix.row_tail,
                                   font_size=vector.font_size, theme=theme, symbol=result_symbol,
                                   symbol_color=result_color, show_symbol=result_symbol is not None,
                                   row_height=matrix.row_height)
        self.equals = label("=", font_size=vector.font_size * 1.4, color=theme.text)
        vector.next_to(matrix.brackets, RIGHT, buff=buff)
        vector.match_y(matrix.brackets)
        sym = vector.symbol
        if sym is not None and sym in vector.submobjects and not vector.horizontal:
            # its name clear of the box the sweep draws round the vector (review 51: Σⱼ's j on the box's line)
            sym.shift(UP * max(0.0, vector.brackets.get_top()[1] + VEC_BOX_BUFF + SYMBOL_CLEAR - sym.get_bottom()[1]))
        self.equals.next_to(vector.brackets, RIGHT, buff=buff)
        self.result.next_to(self.equals, RIGHT, buff=buff)
        # line the result rows up with the matrix rows
        self.result.shift(UP * (matrix.grid.get_top()[1] - self.result.rows.get_top()[1]))
        self.add(matrix, vector, self.equals, self.result)
        for m in self.result.entries:
            m.set_opacity(0)
        self.row_box = None
        self.vec_box = None
        self.out_box = None

    def shown_rows(self) -> list[int]:
        return [i for i in self.matrix.shown_rows if i is not None]

    def reveal_all(self):
        """Show every result entry at once (no animation)."""
        for m in self.result.entries:
            m.set_opacity(1)
        return self

    def _row_rect(self, mob) -> Rectangle:
        """A highlight box around one row's entries, no taller than the rows' pitch: its edges run
        between rows and never through a neighbour's digits."""
        pitch = self.matrix.row_height
        rect = Rectangle(width=mob.width + 0.1, height=min(mob.height + 0.1, pitch * 0.96),
                         color=self.theme.highlight, stroke_width=2.5)
        return rect.move_to(mob)

    def row_animation(self, i: int, run_time: float = 1.0) -> AnimationGroup:
        """Boxes move to row `i`, the vector and result entry `i`, which counts up to its real value."""
        row = self.matrix.row_mobjects(i)
        target_row = self._row_rect(row)
        # every row's box as wide as the matrix with its brackets, its sides clear outside them (review 50: inside,
        # the gap to the brackets' strokes was a few pixels, and the box's sides read as drawn on the brackets)
        left, right = self.matrix.brackets
        x0, x1 = left.get_left()[0] - ROW_BOX_BUFF, right.get_right()[0] + ROW_BOX_BUFF
        target_row.stretch_to_fit_width(x1 - x0).set_x((x0 + x1) / 2)
        # the whole vector is what a row multiplies: its box goes around its brackets, clear of them (review 49:
        # inside them, its edges ran over the brackets' ends, 0.02 from the entries)
        target_vec = SurroundingRectangle(self.vector.brackets, color=self.theme.highlight, buff=VEC_BOX_BUFF,
                                          stroke_width=2.5)
        entry = self.result.entry(i)
        # the result's box spans the column's width, at entry i's height (an entry is narrower than its column)
        # (its sides outside the column's brackets, as the row's: inside, they ran down the brackets' strokes)
        edges = self.result.brackets
        target_out = self._row_rect(entry).stretch_to_fit_width(edges.width + 2 * ROW_BOX_BUFF)
        target_out.set_x(edges.get_x())
        anims = []
        if self.row_box is None:
            self.row_box, self.vec_box, self.out_box = target_row, target_vec, target_out
            anims += [Create(b, run_time=run_time * 0.3) for b in (self.row_box, self.vec_box, self.out_box)]
        else:
            anims += [Transform(self.row_box, target_row, run_time=run_time * 0.3),
                      Transform(self.out_box, target_out, run_time=run_time * 0.3)]
        count = CountUp(entry, font_size=self.result.font_size, run_time=run_time * 0.7)
        return Succession(AnimationGroup(*anims), count)

    def sweep(self, rows: Sequence[int] | None = None, run_time_per_row: float = 0.8,
              fade_boxes: bool = True) -> Succession:
        """Row animations for `rows` (all shown rows by default), then the boxes fade; rows not
        swept appear at the end so the finished result always shows every entry. With `fade_boxes`
        False the sweep goes on later (another call sweeps the other rows): the rest stay hidden."""
        rows = list(rows) if rows is not None else self.shown_rows()
        anims = [self.row_animation(i, run_time_per_row) for i in rows]
        rest = [self.result.entry(i) for i in self.shown_rows() if i not in rows]
        if rest and fade_boxes:
            anims.append(AnimationGroup(*(m.animate.set_opacity(1) for m in rest), run_time=0.4))
        if fade_boxes and self.row_box is not None:
            anims.append(AnimationGroup(FadeOut(self.row_box), FadeOut(self.vec_box), FadeOut(self.out_box),
                                        run_time=0.3))
        return Succession(*anims)


__all__ = ["WeightMatrix", "MatVecProduct", "CountUp", "signed_color"]
