"""Text and numbers without LaTeX, built once per distinct label and copied after.

Creating a `Text` costs ~15 ms; copying one ~0.7 ms. Everything that shows words or numbers goes
through `label` / `number` so repeated labels (cell values, token names) stay cheap.
"""

from __future__ import annotations

from functools import lru_cache

from manim import Text

from ..style import FONT, fmt_score, fmt_vec, fmt_weight


def fmt_signed2(x: float) -> str:
    """Cosines and other signed numbers shown to two decimals ("+0.93", "−0.54", "0.00")."""
    r = round(float(x), 2)
    if r == 0:
        return "0.00"
    return f"{r:+.2f}".replace("-", "−")


FORMATTERS = {"vec": fmt_vec, "weight": fmt_weight, "score": fmt_score, "signed2": fmt_signed2}


def drop_svg_paths(mob):
    """Forget the parsed SVG path objects glyphs keep after their points are built.

    Nothing reads them again, but every `copy()` (each FadeIn, Transform, `.animate`) deep-copies
    them: dropping them makes copying a Text or MathTypst ~8× cheaper."""
    for m in mob.get_family():
        if getattr(m, "path_obj", None) is not None:
            m.path_obj = None
    return mob


@lru_cache(maxsize=4096)
def _prototype(text: str, font_size: float, color: str, font: str, weight: str, slant: str) -> Text:
    return drop_svg_paths(Text(text, font_size=font_size, color=color, font=font, weight=weight, slant=slant))


def label(text: str, font_size: float = 36, color: str = "#FFFFFF", font: str = FONT,
          weight: str = "NORMAL", slant: str = "NORMAL") -> Text:
    """A fresh copy of a cached Text, in `color` (one prototype serves every colour)."""
    return _prototype(text, float(font_size), "#FFFFFF", font, weight, slant).copy().set_color(color)


def number(value: float, kind: str = "vec", font_size: float = 28, color: str = "#FFFFFF") -> Text:
    """A number as shown on screen (`kind`: vec = signed one decimal, weight = two decimals,
    score = signed one decimal or −∞, signed2 = signed two decimals, for cosines). The mobject
    keeps the exact value in `.value` and the shown string in `.shown`, so tests can compare what is drawn with the trace."""
    shown = FORMATTERS[kind](value)
    mob = label(shown, font_size=font_size, color=color)
    mob.value = float(value)
    mob.shown = shown
    return mob


def parse_shown(shown: str) -> float:
    """The number a viewer reads from a shown string ("−1.2" -> -1.2, "−∞" -> -inf)."""
    s = shown.replace("−", "-").replace("∞", "inf")
    return float(s)
