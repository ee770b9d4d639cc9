"""Pieces the `linear_attention` and `sliding_window` chapters share: numbers as figures and as prose,
the model's name in a sentence, labelled bars on a 0-to-1 scale, a head's name, the key to a grid of
dots (circle area = weight; the future, masked)."""

from __future__ import annotations

from math import floor, log10

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Circle, DashedLine, Line, Rectangle, VGroup, VMobject

from ..components.batched_shapes import rect_points
from ..components.text import label, seat_under_superscripts, text_baseline
from ..components.vectors import MATH_PER_TEXT, math
from .embedding_parts import mixed_label as text
from .honest import wrapped
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


def sci_math(x: float, say: Say, font_size: float, color: str, prefix: str = ""):
    """`sci` typeset (the exponent a real superscript in the math face, not a text font's superscript
    glyph), the mantissa the language's way; `.shown` is what a reader reads ("1,1×10⁻¹⁵"), for the lint.
    `font_size` is the text size it stands beside; `prefix` is typst math set before it ("<=": ≤)."""
    x = float(x)
    shown = sci(x, say)
    if x == 0:
        mob = math(f"{prefix} 0", font_size * MATH_PER_TEXT, color)
    else:
        mant, exp = shown.split("×10")
        e = int(exp.translate(str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")))
        mob = math(f'{prefix} "{mant}" times 10^({e})', font_size * MATH_PER_TEXT, color)
    mob.shown = shown
    return seat_under_superscripts(mob)


def diff_line(say: Say, key: str, diff: float, font_size: float, color: str):
    """A catalog line with a small difference in it, `{diff}` ("largest difference: 2.5×10⁻⁷"): below
    0.01 the figure is typeset (`sci_math`: a real exponent on the line, as the formulas set one; a
    text face's superscript glyphs float apart from their 10), above it written in the line (`tiny`)."""
    from ..components.text import rich_line
    from .head_split import tiny

    x = abs(float(diff))
    if x == 0 or x >= 0.01:
        return label(say(key, diff=tiny(say, x)), font_size, color)
    figure = sci_math(x, say, font_size, color)
    line = rich_line(say.catalog[key], {}, font_size=font_size, color=color, mobjects={"diff": figure})
    line.figure = figure
    return line


def diff_lines(say: Say, key: str, diff: float, width: float, font_size: float, color: str, max_lines: int = 2,
               **params):
    """`diff_line` broken into lines no wider than `width` (a sentence that ends on its difference:
    "… largest logit difference 4.3 × 10⁻⁵"); the figure typeset below 0.01, as the formulas set it, never
    the text face's "4.3×10⁻⁵" (review 47). `params`: the template's other parameters."""
    from ..components.text import rich_lines
    from .head_split import tiny

    x = abs(float(diff))
    if x == 0 or x >= 0.01:
        return wrapped(say(key, diff=tiny(say, x), **params), width, font_size, color, max_lines)
    figure = sci_math(x, say, font_size, color)
    # the template with its other parameters filled in, "{diff}" left for the typeset figure
    template = say(key, diff="{diff}", **params)
    lines = rich_lines(template, {}, width, font_size=font_size, color=color, mobjects={"diff": figure})
    if len(lines) > max_lines:
        lines.scale(max_lines / len(lines))
    lines.figure = figure
    return lines


def power_math(e: int, font_size: float, color: str):
    """10ᵉ typeset (an axis tick): `.shown` "10¹⁴"."""
    mob = math(f"10^({int(e)})", font_size * MATH_PER_TEXT, color)
    mob.shown = power_of_ten(e)
    return mob


def with_math(words: str, formula, font_size: float, color: str, buff: float = 0.14, centred: bool = False):
    """A line of words followed by a typeset piece ("largest difference" + 1,1×10⁻¹⁵), on one line: the
    piece's bottom on the words' baseline (digits), or `centred` on their capitals (a formula with
    brackets and subscripts that hang below the line). `words` may be a line already set (a `rich_line`)."""
    row = VGroup(text(words, font_size, color) if isinstance(words, str) else words, formula).arrange(RIGHT, buff=buff)
    base = text_baseline(row[0])
    if centred:
        formula.set_y(base + label("H", font_size).height / 2)
    else:  # the digits on the words' line: the bottom of its full-size glyphs (not a comma, not an exponent)
        glyphs = formula.family_members_with_points()
        tallest = max(g.height for g in glyphs)
        digits = [g.get_bottom()[1] for g in glyphs if g.height >= 0.8 * tallest]
        formula.shift(UP * (base - float(np.median(digits))))
    return row


def wrapped_words(words: str, width: float, font_size: float, color: str, max_lines: int = 4) -> VGroup:
    """`words` as left-aligned lines of at most `width`, broken at spaces, each line set as the suite's
    prose is (Hangul in the Korean face, a token such as "␣rye" in the serif, as on the rest of the
    frame; `honest.wrapped`'s default sets a Korean line in one face); scaled down past `max_lines` lines."""
    return wrapped(words, width, font_size, color, max_lines, setter=text)


def dec(x: float, say: Say | None = None, digits: int = 2) -> str:
    """A weight or share to `digits` decimals (three when it would read 0.00 and is not zero): a figure,
    or with `say` the language's prose."""
    x = float(x)
    if digits == 2 and x != 0 and abs(x) < 0.005:
        digits = 3
    return say.number(x, f".{digits}f") if say is not None else f"{x:.{digits}f}"


def telling_digits(a: float, b: float, low: int = 2, high: int = 4) -> int:
    """The fewest decimals (from `low` to `high`) at which `a` and `b` read differently: a sentence
    saying the weight "goes from 0.99 to 0.99" hides the change it describes. `high` if none."""
    return next((d for d in range(low, high + 1) if f"{float(a):.{d}f}" != f"{float(b):.{d}f}"), high)


def panel_digits(values) -> int:
    """Decimals for every weight in one panel: three when any non-zero one would read 0.00, else two (one
    convention per panel: never 0.001 beside 0.02)."""
    return 3 if any(0 < abs(float(v)) < 0.005 for v in values) else 2


def count(n: int, say: Say | None = None) -> str:
    """A count: with `say` the language's thousands separator (65,536; 65.536 in Portuguese, where a
    thousands comma reads as a decimal one); without, a bare figure's comma."""
    return say.number(int(n), ",d") if say is not None else f"{int(n):,}"


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
    """A head as the suite names it (common.head): "layer 11 · head 1", or, when the model names or the
    probes measured a role for it, "layer 11 · head 1: previous token". Layers and heads from 0."""
    if role and say.has(f"common.roles.{role}"):
        return say("common.head.layer_head_role", layer=layer, head=head, role=say.role(role, layer, head))
    return say("common.head.layer_head", layer=layer, head=head)


def share_bars(rows: list[tuple[str, float, str]], theme, *, length: float = 4.0, height: float = 0.34,
               gap: float = 0.16, font_size: float = 22, name_width: float | None = None,
               highlight: int | None = None, say: Say | None = None, digits: int | None = None) -> VGroup:
    """Horizontal bars on one 0-to-1 scale: (name, value, colour) per row, the name on the left, the value
    (`digits` decimals, by default `panel_digits` of the rows; the language's way with `say`) right of the bar, and a faint track showing 1. `.bars`,
    `.values`, `.names`, `.tracks`, `.unit` (scene units per 1.0) for placing marks on the same scale."""
    names = VGroup(*(text(n, font_size, theme.text if k != highlight else theme.highlight)
                     for k, (n, _, _) in enumerate(rows)))
    digits = panel_digits([v for _, v, _ in rows]) if digits is None else digits
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
        value = label(dec(v, say, digits), font_size, theme.text if k != highlight else theme.highlight)
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


def future_cells(grid, mask: np.ndarray, theme) -> VMobject:
    """The cells the causal mask blocks (the future), filled grey under the grid's lines: visibly not
    there, unlike a weight too small to see."""
    cw, ch = grid.cell_width, grid.cell_height
    cells = VMobject().set_points(rect_points(grid.cell_centers()[np.asarray(mask, bool)], cw * 0.5, ch * 0.5))
    cells.set_fill(theme.dim, opacity=0.3).set_stroke(width=0)
    cells.set_z_index(-1)
    return cells


def grid_key(say: Say, grid, theme, font_size: float = 22, removed: str | None = None) -> VGroup:
    """The key to a grid of dots: two dots at the grid's own sizes, "circle area = weight"; a grey cell,
    "future: masked"; with `removed` (a colour), a red cell, "removed by the window". `.dots`, `.future`,
    `.removed` (empty when not asked)."""
    r1 = grid.dot_fraction * min(grid.cell_width, grid.cell_height)
    side = min(grid.cell_width, grid.cell_height, 0.4)
    dots = VGroup()
    for w in (1.0, 0.25):
        dot = Circle(radius=r1 * float(np.sqrt(w)), stroke_width=0).set_fill(grid.dot_color, opacity=0.9)
        dots.add(VGroup(dot, label(dec(w, say), font_size, theme.text)).arrange(RIGHT, buff=0.1))
    dots = VGroup(*dots, text(say(f"{T}.key_area"), font_size, theme.text)).arrange(RIGHT, buff=0.25)
    future = VGroup(Rectangle(width=side, height=side, stroke_width=0).set_fill(theme.dim, opacity=0.3),
                    text(say(f"{T}.key_future"), font_size, theme.text)).arrange(RIGHT, buff=0.12)
    parts = [dots, future]
    out_removed = VGroup()
    if removed is not None:
        out_removed = VGroup(Rectangle(width=side, height=side, stroke_color=removed, stroke_width=2)
                             .set_fill(removed, opacity=0.28),
                             text(say(f"{T}.key_removed"), font_size, theme.text)).arrange(RIGHT, buff=0.12)
        parts.append(out_removed)
    key = VGroup(*parts).arrange(RIGHT, buff=0.5)
    key.dots, key.future, key.removed = dots, future, out_removed
    return key


__all__ = ["T", "wrapped_words", "sci", "sci_math", "diff_line", "diff_lines", "telling_digits", "power_of_ten", "power_math", "with_math", "dec", "count", "shown_model",
           "head_name", "panel_digits", "share_bars", "bar_x", "mark_line", "axis_line", "future_cells", "grid_key", "UP", "DOWN"]
