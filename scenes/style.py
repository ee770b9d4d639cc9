"""Palette, themes, fonts and number formats: the one place the suite's look is defined.

Colours are set by hex (ManimCE's named colours differ from the video's engine). The dark theme is
the video's look; the light theme (white background) is for printed handouts and slides.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

FONT = "CMU Serif"  # Debian fonts-cmu; Pango falls back to a CJK font (fonts-nanum) for Hangul
MONO_FONT = "CMU Typewriter Text"
KOREAN_FONT = "NanumMyeongjo"  # Debian fonts-nanum: a serif Hangul face that sits well beside CMU Serif


def has_hangul(text: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" or "\u1100" <= ch <= "\u11ff" or "\u3130" <= ch <= "\u318f"
               for ch in text)


@dataclass(frozen=True)
class Theme:
    name: str
    background: str
    text: str
    dim: str  # secondary text, ellipses, grid lines
    query: str
    key: str
    value: str
    embedding: str
    updated: str  # E′
    delta: str  # ΔE of a single head
    delta_multi: str  # ΔE summed over heads
    output: str  # the output matrix W_O
    positive: str  # weight-matrix entries > 0 (shaded dark→light by magnitude)
    negative: str  # weight-matrix entries < 0
    mask: str  # blocked cells
    highlight: str
    box_fill: str  # word-box fill (drawn translucent)
    # a token the model wrote (next_token, kv_cache): never the value's red, which there means the V cache
    # (review 37: "red = values" or "red = recomputed")
    generated: str = "#FF862F"

    @property
    def is_dark(self) -> bool:
        return self.name == "dark"


DARK = Theme(
    name="dark", background="#000000", text="#FFFFFF", dim="#888888",
    query="#FFFF00", key="#5CD0B3", value="#FC6255", embedding="#DDDDDD", updated="#5CD0B3",
    delta="#FFFF00", delta_multi="#58C4DD", output="#D147BD",
    positive="#58C4DD", negative="#FC6255", mask="#FC6255", highlight="#FFFF00", box_fill="#444444",
)

# same hues, darkened where the video's colours vanish on white paper
LIGHT = replace(
    DARK, name="light", background="#FFFFFF", text="#111111", dim="#777777",
    query="#B8A000", key="#1E9C7C", value="#D03A2E", embedding="#333333", updated="#1E9C7C",
    delta="#B8A000", delta_multi="#1F7FA8", output="#A0288F",
    positive="#1F7FA8", negative="#D03A2E", mask="#D03A2E", highlight="#E0A000", box_fill="#DDDDDD",
    generated="#C85A00",
)

THEMES = {"dark": DARK, "light": LIGHT}


def get_theme(name: str) -> Theme:
    try:
        return THEMES[name]
    except KeyError:
        raise ValueError(f"unknown theme {name!r}; choose from {', '.join(THEMES)}") from None


def fmt_fixed(x: float, decimals: int, signed: bool = False) -> str:
    """A number on screen to `decimals` places: the typographic minus, "+" when `signed`, and a value
    that rounds to zero always "0.00" (never "−0.00" or "+0.00"). Every fixed-point format is this."""
    r = round(float(x), decimals)
    if r == 0:
        return f"{0:.{decimals}f}"
    return f"{r:{'+' if signed else ''}.{decimals}f}".replace("-", "−")


def fmt_vec(x: float) -> str:
    """Vector and weight entries: signed, one decimal ("+1.2", "−0.4"; −0.0 shown as 0.0)."""
    return fmt_fixed(x, 1, signed=True)


def fmt_weight(x: float) -> str:
    """Attention weights: two decimals ("0.47")."""
    return f"{float(x):.2f}"


def fmt_weight3(x: float) -> str:
    """Probabilities to three decimals, where two would show a false tie ("0.362", "0.358")."""
    return f"{float(x):.3f}"


def fmt_weight4(x: float) -> str:
    """Four decimals, where three still show a false tie ("0.0432", "0.0429")."""
    return f"{float(x):.4f}"


def fmt_score(x: float) -> str:
    """Raw scores: signed, one decimal, and −∞ for blocked entries."""
    if x == float("-inf"):
        return "−∞"
    return fmt_vec(x)


def fmt_score2(x: float) -> str:
    """Raw scores to two decimals (where one decimal would show a tie the weights deny), −∞ when blocked."""
    if x == float("-inf"):
        return "−∞"
    return fmt_fixed(x, 2, signed=True)


# byte counts in decimal units (powers of 1000), largest first; the unit's label is the catalog's
# common.bytes.<unit>, the figure and its unit joined by common.bytes.size
BYTE_UNITS = ((10**12, "TB"), (10**9, "GB"), (10**6, "MB"), (10**3, "kB"))


def byte_size(b: float) -> tuple[float, int, str]:
    """(value, decimals, unit) of a byte count in decimal units, three significant digits: 23,040,000
    bytes -> (23.04, 1, "MB"), read "23.0 MB"; below 1,000 bytes, whole bytes."""
    for size, unit in BYTE_UNITS:
        if round(b / size, 2) >= 1.0:  # 999,600 bytes read "1.00 MB", not "1000 kB"
            v = b / size
            # three significant digits, rounded first (9.996 MB reads "10.0 MB", not "10.00 MB")
            dec = 2 if round(v, 2) < 10 else 1 if round(v, 1) < 100 else 0
            return v, dec, unit
    return float(b), 0, "B"


def byte_text(say, b: float) -> str:
    """A byte count as words on screen: "23.0 GB", with the language's decimal mark ("23,0 GB" in
    Portuguese), in prose and beside figures alike."""
    v, dec, unit = byte_size(b)
    value = say.number(v, f".{dec}f")  # figures follow the language too (README, "Numbers")
    return say("common.bytes.size", value=value, unit=say(f"common.bytes.{unit}"))
