"""Word boxes: a phrase split into tokens, each word in a translucent rounded box.

    boxes = WordBoxes(trace.tokens, theme=theme).to_edge(UP)
    self.play(FadeIn(boxes)); self.play(boxes.animate.highlight(3, theme.query).dim_others(3))

Every box has the same height and the words sit on one baseline (a word box row reads as a line
of text). State changes (`highlight`, `dim_boxes`, `dim_others`, `recolor`, `reset`) modify the boxes in place and
return `self`, so they also work through `.animate`.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
from manim import DOWN, RIGHT, RoundedRectangle, VGroup, VMobject

from ..style import DARK, Theme
from .text import SPACE_MARK, label

BOX_OPACITY = 0.35  # translucent: what is behind a box (grid lines, arcs) stays visible
DIM_OPACITY = 0.3


def space_key(tokens: Iterable[str], say, theme: Theme, font_size: float = 24,
              mark_size: float | None = None) -> VMobject | None:
    """"␣ = a space before the word", the key to a row of tokens that shows their leading spaces
    (a real model's tokens: "␣Paris"); None when no token shows one (the toy's words). The ␣ itself
    is drawn at `mark_size`, the tokens' font size (at the words' size it was a 4-px speck, smaller
    than the mark it explains), on the words' baseline; `.mark` is it, `.original_text` the text."""
    if not any(SPACE_MARK in str(t) for t in tokens):
        return None
    text = say("common.space_key")
    if mark_size is None or SPACE_MARK not in text:
        return label(text, font_size, theme.dim)
    before, after = text.split(SPACE_MARK, 1)
    mark = label(SPACE_MARK, mark_size, theme.dim)
    parts = [label(p.strip(), font_size, theme.dim) for p in (before, after) if p.strip()]
    out = VGroup(*([parts.pop(0)] if before.strip() else []), mark, *parts).arrange(RIGHT, buff=0.12)
    words = [p for p in out if p is not mark]
    if words:  # the mark sits on the words' baseline, as it does in a token
        mark.shift(DOWN * (mark.get_bottom()[1] - min(_baseline_y(w) for w in words)))
    out.mark, out.original_text = mark, text
    return out


def _baseline_y(word: VMobject) -> float:
    """The y of the text baseline: the highest glyph bottom among full-size glyphs.

    Glyphs without descenders end on the baseline; glyphs with descenders end below it. Small
    marks (apostrophes, dashes) float above it, so glyphs much shorter than the tallest are
    ignored unless nothing else is there."""
    glyphs = [g for g in word.submobjects if g.has_points() or g.submobjects] or [word]
    tallest = max(g.height for g in glyphs)
    full = [g for g in glyphs if g.height >= 0.4 * tallest] or glyphs
    return max(g.get_bottom()[1] for g in full)


class WordBox(VGroup):
    """One token: `.box` (rounded rectangle) and `.word` (Text). `.token` is the raw string."""

    def __init__(self, token: str, box: RoundedRectangle, word: VMobject):
        super().__init__(box, word)
        self.token = token
        self.box = box
        self.word = word


class WordBoxes(VGroup):
    """A row of word boxes for `tokens` (a trace's tokens, or any list of words).

    Access: `boxes[i]` (a WordBox), `boxes.box(i)`, `boxes.word(i)`, `boxes.tokens`.
    `colors` optionally gives each box's outline colour (e.g. per-token role colours)."""

    def __init__(self, tokens: Sequence[str], *, theme: Theme = DARK, font_size: float = 32,
                 gap: float = 0.12, pad_x: float = 0.12, pad_y: float = 0.1, corner_radius: float = 0.08,
                 colors: Sequence[str] | None = None, max_width: float | None = None):
        super().__init__()
        self.tokens = tuple(str(t) for t in tokens)
        self.theme = theme
        self.font_size = font_size
        words = [label(t.strip() or "␣", font_size=font_size, color=theme.text) for t in self.tokens]
        # one common box height; each word is placed on a common baseline
        ref = label("Ay", font_size=font_size, color=theme.text)  # ascender + descender extent
        asc = ref.get_top()[1] - _baseline_y(ref)
        desc = _baseline_y(ref) - ref.get_bottom()[1]
        height = asc + desc + 2 * pad_y
        x = 0.0
        for i, (tok, w) in enumerate(zip(self.tokens, words)):
            width = w.width + 2 * pad_x
            color = colors[i] if colors is not None else theme.dim
            box = RoundedRectangle(width=width, height=height, corner_radius=corner_radius,
                                   stroke_color=color, stroke_width=1.5,
                                   fill_color=theme.box_fill, fill_opacity=BOX_OPACITY)
            box.move_to([x + width / 2, 0, 0])
            # baseline at y = -height/2 + pad_y + desc
            w.shift([box.get_center()[0] - w.get_center()[0], (-height / 2 + pad_y + desc) - _baseline_y(w), 0])
            self.add(WordBox(tok, box, w))
            x += width + gap
        self.center()
        if max_width is not None and self.width > max_width:
            self.scale_to_fit_width(max_width)
        self._base = [(b.box.get_stroke_color(), b.word.get_fill_color()) for b in self]

    # --- access -------------------------------------------------------------------------------
    def box(self, i: int) -> RoundedRectangle:
        return self[i].box

    def word(self, i: int) -> VMobject:
        return self[i].word

    def _indices(self, indices: int | Iterable[int] | None) -> list[int]:
        if indices is None:
            return list(range(len(self)))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    # --- state changes (in place; usable through .animate) ------------------------------------
    def highlight(self, indices: int | Iterable[int], color: str | None = None, fill_opacity: float = 0.55):
        """Outline and tint the given boxes in `color` (theme highlight by default)."""
        color = color or self.theme.highlight
        for i in self._indices(indices):
            wb = self[i]
            wb.box.set_stroke(color=color, width=3, opacity=1)
            wb.box.set_fill(color=color, opacity=fill_opacity * 0.5)
            wb.word.set_fill(opacity=1)
        return self

    def recolor(self, indices: int | Iterable[int], color: str, *, word: bool = False):
        """Change the outline (and with `word=True` the text) colour of the given boxes."""
        for i in self._indices(indices):
            self[i].box.set_stroke(color=color)
            if word:
                self[i].word.set_fill(color=color)
        return self

    def dim_boxes(self, indices: int | Iterable[int] | None = None, opacity: float = DIM_OPACITY):
        """Fade the given boxes (all when None) to `opacity`."""
        for i in self._indices(indices):
            wb = self[i]
            wb.box.set_stroke(opacity=opacity).set_fill(opacity=BOX_OPACITY * opacity)
            wb.word.set_fill(opacity=opacity)
        return self

    def dim_others(self, keep: int | Iterable[int], opacity: float = DIM_OPACITY):
        keep = set(self._indices(keep))
        return self.dim_boxes([i for i in range(len(self)) if i not in keep], opacity)

    def reset(self, indices: int | Iterable[int] | None = None):
        """Back to the initial look."""
        for i in self._indices(indices):
            wb = self[i]
            stroke, word_color = self._base[i]
            wb.box.set_stroke(color=stroke, width=1.5, opacity=1)
            wb.box.set_fill(color=self.theme.box_fill, opacity=BOX_OPACITY)
            wb.word.set_fill(color=word_color, opacity=1)
        return self

    # --- geometry helpers ---------------------------------------------------------------------
    def anchor(self, i: int, side=DOWN, buff: float = 0.1) -> np.ndarray:
        """A point just outside box `i` on `side` (for arrows and arcs)."""
        return self.box(i).get_edge_center(side) + np.asarray(side) * buff


__all__ = ["WordBoxes", "WordBox", "BOX_OPACITY", "DIM_OPACITY"]
