"""Which characters the installed fonts can draw, and text made drawable.

Any text the tokenizer accepts must render (issue 20): Arabic, Hebrew, combining marks, emoji.
Two things go wrong without help, both measured with manim's Text on these machines:

- a line made only of right-to-left letters comes out empty (0 glyphs: Pango sets the paragraph
  right-to-left and the glyphs fall outside what manim keeps); a left-to-right mark in front makes
  the paragraph left-to-right, and the word itself is still shaped and drawn right to left;
- a character no installed font has is drawn by Pango as a hex box, tiny digits in a frame; it is
  replaced by a plain placeholder square here, the same everywhere.

Coverage comes from fontconfig (`fc-list`), once per process; Pango falls back to any installed
font, so a character is drawable when any font has it. Without fc-list nothing is replaced.
"""

from __future__ import annotations

import bisect
import subprocess
import unicodedata
from functools import lru_cache

PLACEHOLDER = "□"  # U+25A1 WHITE SQUARE (DejaVu Sans has it)
LRM = "\u200e"  # LEFT-TO-RIGHT MARK


def parse_charset(charset: str) -> list[tuple[int, int]]:
    """fontconfig's charset ("20-7e a0 2010-2011") as inclusive (start, end) code point ranges."""
    out = []
    for part in charset.split():
        lo, _, hi = part.partition("-")
        try:
            out.append((int(lo, 16), int(hi or lo, 16)))
        except ValueError:
            continue
    return out


def merge(ranges) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """Sorted, merged ranges as (starts, ends) for bisecting."""
    starts, ends = [], []
    for lo, hi in sorted(ranges):
        if ends and lo <= ends[-1] + 1:
            ends[-1] = max(ends[-1], hi)
        else:
            starts.append(lo)
            ends.append(hi)
    return tuple(starts), tuple(ends)


@lru_cache(maxsize=1)
def installed_coverage() -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """Every code point some installed font has, or None when fontconfig cannot be asked."""
    try:
        out = subprocess.run(["fc-list", "--format", "%{charset}\n"], capture_output=True, text=True,
                             timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    ranges = [r for line in out.splitlines() for r in parse_charset(line)]
    return merge(ranges) if ranges else None


def covered(ch: str, coverage=None) -> bool:
    coverage = installed_coverage() if coverage is None else coverage
    if coverage is None:
        return True
    starts, ends = coverage
    i = bisect.bisect_right(starts, ord(ch)) - 1
    return i >= 0 and ord(ch) <= ends[i]


def _invisible(ch: str) -> bool:
    """Spaces and format characters (joiners, direction marks): nothing to draw, nothing to replace."""
    return ch.isspace() or unicodedata.category(ch) in ("Cf", "Cc")


@lru_cache(maxsize=8192)
def drawable(text: str) -> str:
    """`text` as it can be drawn: characters no installed font has become PLACEHOLDER, and a text
    with right-to-left letters gets a left-to-right mark in front (see the module doc)."""
    coverage = installed_coverage()
    mark = PLACEHOLDER if covered(PLACEHOLDER, coverage) else "?"
    chars = [ch if _invisible(ch) or covered(ch, coverage) else mark for ch in text]
    out = "".join(chars)
    if any(unicodedata.bidirectional(ch) in ("R", "AL") for ch in out) and not out.startswith(LRM):
        out = LRM + out
    return out


@lru_cache(maxsize=8)
def face_coverage(family: str) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The code points of `family`'s upright regular face (Roman, Regular or Book), or None when
    fontconfig cannot be asked or has no such face."""
    for style in ("Roman", "Regular", "Book"):
        try:
            out = subprocess.run(["fc-list", f":family={family}:style={style}", "--format", "%{style}\t%{charset}\n"],
                                 capture_output=True, text=True, timeout=30, check=True).stdout
        except (OSError, subprocess.SubprocessError):
            return None
        faces = [line.split("\t", 1) for line in out.splitlines() if "\t" in line]
        if faces:  # DejaVu Serif Book also answers as its "Condensed,Book" face: the plain one first
            faces.sort(key=lambda f: f[0] != style)
            return merge(parse_charset(faces[0][1]))
    return None


def face_has(ch: str, family: str) -> bool | None:
    """Whether `family`'s regular face has `ch`; None when that cannot be known."""
    coverage = face_coverage(family)
    return None if coverage is None else covered(ch, coverage)
