"""A line of words with typeset math in it: `$W_Q$, one head's query matrix ($d_model × d_head$)`.

Catalog strings mark math with dollars; outside them the text is a `label()` (the language's font),
inside a `math()` (MathTypst): `W_Q` is W with a subscript Q, and a word after an underscore
(`d_model`) becomes an upright subscript (Typst's `d_"model"`), so translators write plain names
and no raw underscore reaches the screen. Pieces sit on one baseline, a space where the text had one.
"""

from __future__ import annotations

import re

from manim import RIGHT, UP, VGroup

from ..i18n import plain_text
from ..style import has_hangul
from .korean_face import mixed_face
from .text import label, text_baseline
from .vectors import math

MATH = re.compile(r"\$([^$]*)\$")
MATH_SCALE = 4 / 3  # a MathTypst letter at font size f is as tall as a Text letter at 3f/4


def typst_source(s: str) -> str:
    """`d_model × d_head` -> `d_"model" times d_"head"` (a subscript word upright, × as times)."""
    s = re.sub(r"_([A-Za-z]{2,})", r'_"\1"', s)
    return s.replace("×", " times ").replace("·", " dot ").replace("↓", " arrow.b ").replace("↑", " arrow.t ")


def pieces_of(text: str) -> list[tuple[str, str]]:
    """[("text", ...), ("math", ...)] in order (empty text pieces dropped)."""
    out, at = [], 0
    for m in MATH.finditer(text):
        if m.start() > at:
            out.append(("text", text[at:m.start()]))
        out.append(("math", m.group(1)))
        at = m.end()
    if at < len(text):
        out.append(("text", text[at:]))
    return [(k, s) for k, s in out if s]


def plain(text: str) -> str:
    """The words as a subtitle would write them: the dollars dropped, subscripts as plain text writes
    them (scenes.i18n.plain_text: W_Q -> WQ, d_k -> dₖ)."""
    return plain_text(text)


def text_piece_baseline(mob, body: str, font_size: float) -> float:
    """The baseline of a text piece, even one of punctuation alone (")" hangs below the line): read
    beside a capital H set in front of it, then carried over by the first glyph."""
    ref = label("H" + body, font_size)
    if len(ref.submobjects) != len(mob.submobjects) + 1 or not mob.submobjects:
        return text_baseline(mob)
    h_bottom = float(ref[0].get_bottom()[1])
    return float(mob[0].get_bottom()[1]) + (h_bottom - float(ref[1].get_bottom()[1]))


def rich(text: str, font_size: float = 24, color: str = "#FFFFFF", math_color: str | None = None) -> VGroup:
    """The line as a VGroup of labels and formulas on one baseline; `.plain` keeps its words."""
    # a space, ink to ink, as the serif sets one between a letter or figure and a sign (0.0059 to 0.0071 of the
    # size, measured); one space's advance alone read as none: "n/4 ×n/4" (review 47)
    space = 0.0065 * font_size
    parts, gaps = [], []
    prev_space = False
    for kind, s in pieces_of(text):
        if kind == "text":
            lead, trail = s[:1].isspace(), s[-1:].isspace()
            body = s.strip()
            if not body:
                prev_space = True
                continue
            if has_hangul(body):  # figures and signs in the serif, beside the typeset ones (review 46)
                mob = mixed_face(body, font_size, color)
                mob.baseline = text_baseline(mob)
            else:
                mob = label(body, font_size, color)
                mob.baseline = text_piece_baseline(mob, body, font_size)
        else:
            lead = trail = False
            mob = math(typst_source(s), font_size * MATH_SCALE, math_color or color)
            glyphs = mob.family_members_with_points()
            mob.baseline = float(glyphs[0].get_bottom()[1]) if glyphs else float(mob.get_bottom()[1])
        if parts:
            gaps.append(space if (prev_space or lead) else 0.03)
        parts.append(mob)
        prev_space = trail
    group = VGroup(*parts)
    x = 0.0
    for i, p in enumerate(parts):
        if i:
            x += gaps[i - 1]
        p.shift(RIGHT * (x - p.get_left()[0]) + UP * (0 - p.baseline))
        x = p.get_right()[0]
    group.plain = plain(text)
    group.original_text = group.plain  # what it says, as a label says it (tests, the lint's messages)
    return group
