"""Korean lines in two faces: the Hangul in the Korean face, figures and signs (digits, =, ×, %, ·, Σ) in the
serif, as every other language and the typeset math beside them set them (review 46), spaced ink to ink as
the Korean face spaces those characters (review 47). `text.label` sets a Korean text with a figure or a sign
this way; `face_runs` says where a line changes face."""

from __future__ import annotations

from functools import lru_cache

from manim import RIGHT, UP, VGroup

from ..style import KOREAN_FONT, has_hangul
from .text import label, mark_glyph, text_baseline

MATH_SIGNS = frozenset("=×+−≈<>≤≥%·")  # with digits, what makes a Korean label's run of the serif worth setting apart


def _face_of(ch: str):
    """True for a Hangul letter, False for a letter or digit of the serif, None for a sign or a mark (it
    goes with its neighbours)."""
    if has_hangul(ch):
        return True
    return False if ch.isalnum() else None


def face_runs(text: str) -> list[tuple[bool, str, bool]]:
    """`text` cut where it changes face: (hangul, piece, a space before it). Inside a word too: in
    "1,048,576에서" the figure is the serif's and the particle the Korean face's (review 46: Hangul-face
    digits and "=" beside typeset ones). A sign or a mark goes with the letters beside it in its word (the
    one before, else the one after); a word of signs alone ("=", "→") is the serif's."""
    runs: list[list] = []
    for word in text.split(" "):
        if not word:
            continue
        faces = [_face_of(c) for c in word]
        known = [f for f in faces if f is not None]
        last = known[0] if known else False
        cut = []
        for f in faces:
            last = last if f is None else f
            cut.append(last)
        for k, (c, f) in enumerate(zip(word, cut)):
            if runs and runs[-1][0] == f:
                runs[-1][1] += (" " if k == 0 else "") + c
            else:
                runs.append([f, c, k == 0 and bool(runs)])
    return [(bool(h), piece, space) for h, piece, space in runs]


@lru_cache(maxsize=4096)
def ink_gap(left: str, right: str, space: bool, font_size: float) -> float:
    """The gap between the ink of `left` and of `right` as the Korean face sets them side by side, with a space
    between or none (a character it has no glyph for is measured as a digit)."""
    def seen(c: str) -> str:
        return c if has_hangul(c) or (c.isascii() and not c.isspace()) else "1"

    a, b = seen(left), seen(right)
    both = label(a + (" " if space else "") + b, font_size, font=KOREAN_FONT).width
    return max(0.0, both - label(a, font_size, font=KOREAN_FONT).width - label(b, font_size, font=KOREAN_FONT).width)


class MixedFace(VGroup):
    """A line set in two faces (`mixed_face`); it reads its size and its words as a Text does."""

    @property
    def font_size(self) -> float:  # the size it was set at (its serif pieces are a little larger), as scaled since
        return self.set_size * self.width / self.set_width if self.set_width > 0 else self.set_size

    @property
    def text(self) -> str:
        return str(self.original_text)


def mixed_face(text: str, font_size: float, color: str):
    """A line whose Hangul is set in the Korean face and everything else (figures, signs, tokens, Latin
    words) in the serif, on one baseline (`face_runs`); a line without Hangul is one `label`."""
    if not has_hangul(text):
        return label(text, font_size, color)
    # (a no-break space only kept a line from breaking there: set here, it is a space; kept inside a run, it set
    # none: "층30개")
    runs = face_runs(text.replace("\u00a0", " "))
    if len(runs) == 1:
        return label(text, font_size, color)
    # (a run of signs alone, "·" between two words, is seated as a line sets it: centred, it sat as a period)
    pieces = [(label if any(c.isalnum() for c in piece) else mark_glyph)(piece, font_size, color)
              for _, piece, _ in runs]
    for p in pieces:  # each a piece of one line of prose (the lint reads "2" in "구절 2에서" as words, not a figure)
        p.in_prose = True
    row = MixedFace(*pieces)
    row.set_size = float(font_size)
    base = text_baseline(pieces[0])
    x = pieces[0].get_right()[0]
    for (_, before, _), p, (_, piece, space) in zip(runs, pieces[1:], runs[1:]):
        # ink to ink as the Korean face sets those two characters, with or without a space between (review 47:
        # a box-to-box gap of one space's advance read as no space at all: "에서16,132배")
        p.shift(RIGHT * (x + ink_gap(before[-1], piece[0], space, font_size) - p.get_left()[0])
                + UP * (base - text_baseline(p)))
        x = p.get_right()[0]
    row.original_text = text
    row.set_width = row.width
    row.baseline = lambda: text_baseline(pieces[0])  # the pieces stand on the first one's line
    return row


__all__ = ["MATH_SIGNS", "MixedFace", "face_runs", "ink_gap", "mixed_face"]
