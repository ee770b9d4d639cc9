"""Pieces the `linear_attention` and `sliding_window` chapters share: numbers as figures and as prose,
the model's name in a sentence, labelled bars on a 0-to-1 scale, a head's name."""

from __future__ import annotations

from math import floor, log10

from manim import DOWN, LEFT, RIGHT, UP, DashedLine, Line, Rectangle, VGroup

from ..components.text import label
from .embedding_parts import mixed_label as text
from ..i18n import Say

T = "beyond"
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def sci(x: float, say: Say | None = None) -> str:
    """A small or large number to two significant digits as 2.2×10⁻¹⁶ (a figure keeps the point; with
    `say`, prose writes the mantissa the language's way). Zero is "0"."""
    x = float(x)
    if x == 0:
        return "0"
    e = floor(log10(abs(x)))
    m = x / 10 ** e
    if round(m, 1) >= 10:
        m, e = m / 10, e + 1
    mant = say.number(m, ".1f") if say is not None else f"{m:.1f}"
    return f"{mant}×10{str(e).translate(SUPERSCRIPT)}"


def power_of_ten(e: int) -> str:
    return f"10{str(int(e)).translate(SUPERSCRIPT)}"


def dec(x: float, say: Say | None = None, digits: int = 2) -> str:
    """A weight or share to `digits` decimals (three when it would read 0.00 and is not zero): a figure,
    or with `say` the language's prose."""
    x = float(x)
    if digits == 2 and x != 0 and abs(x) < 0.005:
        digits = 3
    return say.number(x, f".{digits}f") if say is not None else f"{x:.{digits}f}"


def count(n: int) -> str:
    """A count drawn as a figure (thousands comma in every language, like the grids)."""
    return f"{int(n):,}"


MODEL_NAMES = {"smollm2": "SmolLM2"}


def shown_model(say: Say, name: str, form: str = "") -> str:
    """The model in a sentence, as the language says it: `form` "" as a subject ("the toy model",
    "SmolLM2"), "of" after "of" ("do SmolLM2" in Portuguese), "in" after "in" ("no SmolLM2")."""
    suffix = f"_{form}" if form else ""
    if name == "toy":
        return say(f"{T}.model_toy{suffix}")
    return say(f"{T}.model_named{suffix}", name=MODEL_NAMES.get(name, name))


def model_forms(say: Say, name: str) -> dict:
    """model=, of_model=, in_model= for a template."""
    return {"model": shown_model(say, name), "of_model": shown_model(say, name, "of"),
            "in_model": shown_model(say, name, "in")}


def head_name(say: Say, layer: int, head: int, role: str = "") -> str:
    """"L11H1" or, when the model names or measured a role for the head, "L11H1, previous token"."""
    if role and say.has(f"common.roles.{role}"):
        return say(f"{T}.head_role", layer=layer, head=head, role=say.role(role, layer, head))
    return say(f"{T}.head", layer=layer, head=head)


def share_bars(rows: list[tuple[str, float, str]], theme, *, length: float = 4.0, height: float = 0.34,
               gap: float = 0.16, font_size: float = 22, name_width: float | None = None,
               highlight: int | None = None) -> VGroup:
    """Horizontal bars on one 0-to-1 scale: (name, value, colour) per row, the name on the left, the value
    (two decimals) right of the bar, and a faint track showing 1. `.bars`, `.values`, `.names`, `.tracks`,
    `.unit` (scene units per 1.0) for placing marks on the same scale."""
    names = VGroup(*(text(n, font_size, theme.text if k != highlight else theme.highlight)
                     for k, (n, _, _) in enumerate(rows)))
    left = (name_width if name_width is not None else max((m.width for m in names), default=0)) + 0.2
    out = VGroup()
    out.bars, out.values, out.names, out.tracks = VGroup(), VGroup(), names, VGroup()
    out.unit = length
    for k, ((_, v, color), name) in enumerate(zip(rows, names)):
        y = -k * (height + gap)
        track = Rectangle(width=length, height=height, stroke_width=1, stroke_color=theme.dim, stroke_opacity=0.5)
        track.move_to([left + length / 2, y, 0])
        bar = Rectangle(width=max(length * float(v), 0.01), height=height, stroke_width=0)
        bar.set_fill(color, opacity=0.85).move_to([left, y, 0], aligned_edge=LEFT)
        name.move_to([left - 0.2 - name.width / 2, y, 0])
        value = label(dec(v), font_size, theme.text if k != highlight else theme.highlight)
        value.next_to(track, RIGHT, buff=0.15)
        value.set_y(y)
        out.tracks.add(track)
        out.bars.add(bar)
        out.values.add(value)
        out.add(VGroup(track, bar, name, value))
    out.origin_x = left  # scene x of 0 on the scale (before the group is moved: use bar_x)
    return out


def bar_x(bars: VGroup, value: float) -> float:
    """The scene x of `value` on `bars`' scale, wherever the group now is."""
    track = bars.tracks[0]
    return track.get_left()[0] + track.width * float(value)


def mark_line(bars: VGroup, value: float, color: str, words: str, font_size: float = 20) -> VGroup:
    """A dashed vertical line across `bars` at `value`, its text under the bars."""
    x = bar_x(bars, value)
    top, bottom = bars.tracks.get_top()[1] + 0.12, bars.tracks.get_bottom()[1] - 0.12
    line = DashedLine([x, top, 0], [x, bottom, 0], color=color, stroke_width=2.5, dash_length=0.08)
    note = text(words, font_size, color).next_to(line, DOWN, buff=0.1)
    return VGroup(line, note)


def axis_line(start, end, theme) -> Line:
    return Line(start, end, stroke_color=theme.dim, stroke_width=2)


__all__ = ["T", "sci", "power_of_ten", "dec", "count", "shown_model", "head_name", "share_bars", "bar_x",
           "mark_line", "axis_line", "UP", "DOWN"]
