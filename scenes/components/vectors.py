"""Numeric vectors: a bracketed column of a real vector's first few and last entries.

    col = VectorColumn(trace.embeddings[3], symbol=symbol_source("E", 4), brace=True, theme=theme)
    self.play(FadeIn(col)); self.play(col.collapse())   # the column squeezes into E⃗₄

Entries are `number()` mobjects (signed, one decimal by default) shaded grey→white by magnitude
(relative to the largest |entry| of the whole vector, not just the shown ones). Hidden entries are
marked by a vertical ellipsis; the optional brace shows the real length (the number, or the
caller's `brace_text`, e.g. "64 numbers" from the chapter's catalog: no words are built in).
Symbols (E⃗₄, Q⃗₄, ΔE⃗₄, E⃗′₄) are MathTypst, so no LaTeX is needed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np
from manim import (
    DOWN, LEFT, RIGHT, UP, AnimationGroup, Brace, Dot, FadeIn, FadeOut, MathTypst, VGroup,
    ManimColor, VMobject, interpolate_color,
)

from ..i18n import number_symbols
from ..style import DARK, Theme
from ..plans.windows import token_window, window_indices  # pure: plans use them too
from .batched_shapes import rect_points
from .text import drop_svg_paths, label, number, number_language, remember_size, text_baseline

# --------------------------------------------------------------------------------------------
# symbols


def symbol_source(base: str, index: int | str | None = None, *, prime: bool = False,
                  delta: bool = False, arrow: bool = True, normed: bool = False) -> str:
    """Typst math source for a vector symbol: ("E", 4) -> E⃗₄, prime -> E⃗′₄, delta -> ΔE⃗₄, normed ->
    Ê₄ (what a head reads in a model that norms E first: not the E⃗₄ that E + ΔE = E′ adds to).

    Indices are shown as given: scenes pass 1-based word positions, as the video does."""
    s = f"hat({base})" if normed else f"arrow({base})" if arrow else base
    if prime:
        s += "'"
    if index is not None:
        s += f"_{index}"
    if delta:
        s = "Delta " + s
    return s


@lru_cache(maxsize=512)
def _math_prototype(source: str, font_size: float, color: str) -> MathTypst:
    mob = remember_size(drop_svg_paths(MathTypst(source, font_size=font_size, color=color)))
    mob.math_font_size = font_size  # the lint holds typeset math to the text size rule (review.py)
    return mob


def math(source: str, font_size: float = 36, color: str = "#FFFFFF") -> MathTypst:
    """A fresh copy of a cached MathTypst (compiling Typst costs ~50 ms; a copy ~1 ms)."""
    return _math_prototype(source, float(font_size), color).copy()


COMMA_GAP = 1.5  # a row vector's gap between entries where the decimal mark is a comma ("+1,5  −2,0")
MATH_PER_TEXT = 1.33  # a Typst math size whose digits stand as tall as the text font's at size 1


def math_on_line(source: str, font_size: float = 36, color: str = "#FFFFFF") -> MathTypst:
    """`math` that knows its baseline (`.baseline()`, read by `text_baseline`), measured by setting it after
    an x, whose foot is the line: a lone q or y, seated by its own bottom, stood on its tail (review 46)."""
    ref = math(f"x {source}", font_size, color).family_members_with_points()
    drop = float(ref[0].get_bottom()[1] - min(g.get_bottom()[1] for g in ref[1:]))  # how far it reaches under
    mob = math(source, font_size, color)
    h0 = max(mob.height, 1e-9)
    mob.baseline = lambda: float(mob.get_bottom()[1] + drop * mob.height / h0)
    return mob


def math_points(source: str, font_size: float) -> np.ndarray:
    """Typst math `source` as fill outlines: its glyphs, and its rules (a root's bar, a fraction's
    line, drawn by Typst as strokes) as thin filled rectangles, so the whole reads as one fill."""
    pieces = []
    for m in math(source, font_size).family_members_with_points():
        if m.get_fill_opacity() > 0:
            pieces.append(m.points)
        elif m.get_stroke_width() > 0:  # a straight rule: a rectangle as thick as the stroke
            a, b = m.points[0], m.points[-1]
            half = 0.005 * float(m.get_stroke_width())
            hw, hh = max(abs(b[0] - a[0]) / 2, half), max(abs(b[1] - a[1]) / 2, half)
            pieces.append(rect_points(np.array([(a + b) / 2]), hw, hh))
    return np.concatenate(pieces) if pieces else np.zeros((0, 3))


def symbol(base: str, index: int | str | None = None, *, prime: bool = False, delta: bool = False,
           font_size: float = 36, color: str = "#FFFFFF") -> MathTypst:
    """E⃗₄-style symbol mobject; see `symbol_source`."""
    return math(symbol_source(base, index, prime=prime, delta=delta), font_size, color)


# --------------------------------------------------------------------------------------------
# shared drawing helpers (also used by matrices.py)


def bracket_pair(mob: VMobject, *, buff: float = 0.12, serif: float = 0.1, color: str = "#FFFFFF",
                 stroke_width: float = 2.0, extra_height: float = 0.1) -> VGroup:
    """Square brackets [ ] around `mob`, drawn as strokes (no font, no LaTeX)."""
    top = mob.get_top()[1] + extra_height
    bottom = mob.get_bottom()[1] - extra_height
    left = mob.get_left()[0] - buff
    right = mob.get_right()[0] + buff
    lb = VMobject(stroke_color=color, stroke_width=stroke_width)
    lb.set_points_as_corners([[left + serif, top, 0], [left, top, 0], [left, bottom, 0], [left + serif, bottom, 0]])
    rb = VMobject(stroke_color=color, stroke_width=stroke_width)
    rb.set_points_as_corners([[right - serif, top, 0], [right, top, 0], [right, bottom, 0], [right - serif, bottom, 0]])
    return VGroup(lb, rb)


def ellipsis_dots(direction=DOWN, *, spacing: float = 0.11, radius: float = 0.022, color: str = "#888888") -> VGroup:
    """Three dots: DOWN for ⋮, RIGHT for ⋯, DOWN+RIGHT for ⋱ (drawn, so any font works)."""
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    return VGroup(*(Dot(point=(k - 1) * spacing * d, radius=radius, color=color) for k in range(3)))


def shade_grey(value: float, scale: float, theme: Theme = DARK) -> str:
    """Grey→white (dark theme) by |value|/scale; on the light theme grey→black."""
    alpha = 0.0 if scale <= 0 else min(abs(float(value)) / scale, 1.0)
    start = interpolate_color(ManimColor(theme.background), ManimColor(theme.text), 0.4)
    return interpolate_color(start, ManimColor(theme.text), alpha).to_hex()


# --------------------------------------------------------------------------------------------


class VectorColumn(VGroup):
    """A real vector as a bracketed column of numbers (or, with `horizontal=True`, a bracketed
    row of them on one line, `entry_gap` apart: the way a key can sit beside its word).

    values: the full vector (1-D). head/tail: how many leading/trailing entries to show.
    brace: True for a brace on `brace_side`, labelled `brace_text` (the caller's words, e.g.
    "64 numbers" from its catalog) or, without it, just the length n.
    symbol: Typst source (see `symbol_source`) or a mobject; the column can `collapse()` into it
    and `expand()` from it; `show_symbol` puts it above the column as a label.

    Parts: `.entries` (number mobjects, in shown order), `.dots`, `.brackets`, `.brace`,
    `.brace_label`, `.body` (everything but the symbol), `.symbol` (not added unless shown).
    `.shown_indices` lists the vector index of every row (None for the ellipsis row).
    """

    def __init__(self, values: Sequence[float] | np.ndarray, *, head: int = 4, tail: int = 1,
                 kind: str = "vec", font_size: float = 24, theme: Theme = DARK,
                 brace: bool = False, brace_side=RIGHT, brace_text: str | None = None,
                 symbol: str | VMobject | None = None, symbol_color: str | None = None,
                 show_symbol: bool = False, bracket_color: str | None = None,
                 row_height: float | None = None, shade: bool = True, horizontal: bool = False,
                 entry_gap: float = 0.14):
        super().__init__()
        self.horizontal = horizontal
        self.values = np.asarray(values, dtype=float).reshape(-1)
        self.theme = theme
        self.kind = kind
        self.font_size = font_size
        self.scale_ref = float(np.abs(self.values).max()) if self.values.size else 0.0
        self.shown_indices = window_indices(len(self.values), head, tail)
        row_h = row_height or font_size * 0.0135 + 0.06
        self.row_height = row_h

        self.entries = VGroup()
        self.dots = VGroup()
        rows = VGroup()
        right_x = 0.0
        x = 0.0  # horizontal layout: the left edge of the next entry
        if horizontal and number_symbols(number_language())[0] == ",":
            # a decimal comma inside each entry: entries further apart, or "+1,5 −2,0" read as a list of four
            # (review 49, pt)
            entry_gap *= COMMA_GAP
        probe = number(0.0, kind, font_size=font_size)  # a digit's baseline under its middle, for every row
        seat = probe.get_center()[1] - text_baseline(probe)
        for r, idx in enumerate(self.shown_indices):
            y = -r * row_h
            if idx is None:
                if horizontal:
                    d = ellipsis_dots(RIGHT, spacing=row_h * 0.3, color=theme.dim)
                    d.move_to([x + d.width / 2, 0, 0])
                    x += d.width + entry_gap
                else:
                    d = ellipsis_dots(DOWN, spacing=row_h * 0.22, color=theme.dim)
                    d.move_to([0, y, 0])
                rows.add(d)
                self.dots.add(d)
                continue
            color = shade_grey(self.values[idx], self.scale_ref, theme) if shade else theme.text
            m = number(self.values[idx], kind, font_size=font_size, color=color)
            m.index = idx
            if horizontal:  # left to right, on one line
                m.move_to([x + m.width / 2, 0, 0])
                x += m.width + entry_gap
            else:  # right-align on a common edge; on the row's baseline (centred, "−0.10" stood 6 px under
                # "+5.18" beside it: a plus is taller than a minus, review 50)
                m.move_to([right_x - m.width / 2, y, 0])
                m.shift(UP * (y - seat - text_baseline(m)))
            self.entries.add(m)
            rows.add(m)
        # centre the ellipsis under the numbers (or on the line, when horizontal)
        if len(self.entries):
            c = self.entries.get_center()
            for d in self.dots:
                if horizontal:
                    d.set_y(c[1])
                else:
                    d.set_x(c[0])
        self.rows = rows
        self.brackets = bracket_pair(rows, color=bracket_color or theme.text, extra_height=row_h * 0.25)
        self.body = VGroup(self.brackets, rows)
        self.add(self.body)

        self.brace = None
        self.brace_label = None
        if brace:
            self.brace = Brace(self.brackets, direction=brace_side, color=theme.dim, buff=0.15)
            text = brace_text or str(len(self.values))
            self.brace_label = label(text, font_size=font_size * 0.8, color=theme.dim)
            self.brace_label.next_to(self.brace, brace_side, buff=0.1)
            self.body.add(self.brace, self.brace_label)

        self.symbol_source = symbol if isinstance(symbol, str) else None  # what it says, for tests
        if isinstance(symbol, str):
            symbol = math(symbol, font_size=font_size * 1.5, color=symbol_color or theme.text)
        self.symbol = symbol
        if symbol is not None:
            self._place_symbol()
            if show_symbol:
                self.add(symbol)
        self.collapsed = False
        self.center()

    def _place_symbol(self):
        """The symbol's label position: above a column, left of a horizontal vector."""
        if self.horizontal:
            self.symbol.next_to(self.brackets, LEFT, buff=0.15)
        else:
            self.symbol.next_to(self.brackets, UP, buff=0.15)

    # --- access -------------------------------------------------------------------------------
    def entry(self, index: int) -> VMobject:
        """The number mobject showing vector entry `index` (negative counts from the end)."""
        idx = index % len(self.values)
        for m in self.entries:
            if m.index == idx:
                return m
        raise IndexError(f"entry {index} is hidden behind the ellipsis (shown: {[i for i in self.shown_indices if i is not None]})")

    def row(self, r: int) -> VMobject:
        """The r-th shown row (a number or the ellipsis)."""
        return self.rows[r]

    def fade_to(self, opacity: float) -> "VectorColumn":
        """Dim (or restore) the whole vector to `opacity`: numbers and dots by fill, brackets by
        stroke (setting a bracket's fill would paint it as a solid bar). Works through `.animate`."""
        for m in [*self.entries, *self.dots]:
            m.set_fill(opacity=opacity)
        self.brackets.set_stroke(opacity=opacity)
        for m in (self.brace, self.brace_label):
            if m is not None:
                m.set_fill(opacity=opacity)
        if self.symbol is not None and self.symbol in self.submobjects:
            self.symbol.set_fill(opacity=opacity)
        return self

    # --- collapse / expand --------------------------------------------------------------------
    def collapse(self, run_time: float = 1.0, **kwargs) -> AnimationGroup:
        """The column squeezes into its symbol, which ends where the column's centre was."""
        if self.symbol is None:
            raise ValueError("this vector has no symbol to collapse into")
        centre = self.brackets.get_center()
        target = self.symbol.copy().scale(1.2).move_to(centre)
        self.collapsed_symbol = target
        self.collapsed = True
        anims = [FadeOut(self.body, target_position=centre, scale=0.15), FadeIn(target, scale=2.5)]
        self._symbol_was_shown = self.symbol in self.submobjects
        if self._symbol_was_shown:
            anims.append(FadeOut(self.symbol))
        return AnimationGroup(*anims, run_time=run_time, **kwargs)

    def expand(self, run_time: float = 1.0, **kwargs) -> AnimationGroup:
        """Inverse of `collapse`: the numbers come back out of the symbol."""
        if not self.collapsed:
            raise ValueError("expand() follows collapse()")
        centre = self.collapsed_symbol.get_center()
        self.body.move_to(self.body.get_center() + centre - self.brackets.get_center())
        self.collapsed = False
        anims = [FadeOut(self.collapsed_symbol, scale=0.3), FadeIn(self.body, target_position=centre, scale=0.15)]
        if getattr(self, "_symbol_was_shown", False):
            self._place_symbol()
            anims.append(FadeIn(self.symbol))
        return AnimationGroup(*anims, run_time=run_time, **kwargs)


__all__ = [
    "VectorColumn", "symbol", "symbol_source", "math", "bracket_pair", "ellipsis_dots", "shade_grey",
    "window_indices", "token_window",
]
