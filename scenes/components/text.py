"""Text and numbers without LaTeX, built once per distinct label and copied after.

Creating a `Text` costs ~15 ms; copying one ~0.7 ms. Everything that shows words or numbers goes
through `label` / `number` so repeated labels (cell values, token names) stay cheap.
"""

from __future__ import annotations

import hashlib
import os
import re
from contextvars import ContextVar
import tempfile
from functools import lru_cache, partial
from pathlib import Path

from manim import Text, VMobject, config

from . import glyph_store
from .coverage import drawable, face_has
from ..speed import enabled as fast_enabled
from ..style import FONT, KOREAN_FONT, fmt_fixed, fmt_score, fmt_score2, fmt_vec, fmt_weight, fmt_weight3, fmt_weight4, has_hangul


# signed3, signed4: signed figures finer than two decimals, where two would round back to another table's figure
FORMATTERS = {"vec": fmt_vec, "weight": fmt_weight, "weight3": fmt_weight3, "weight4": fmt_weight4, "score": fmt_score,
              "score2": fmt_score2, **{f"signed{d}": partial(fmt_fixed, decimals=d, signed=True) for d in (2, 3, 4)}}

# The language numbers are drawn in (0.48 in en and ko, 0,48 in pt): set by the lesson being rendered,
# per thread (the explorer may render two languages at once), English where nothing set it.
_NUMBER_LANG: ContextVar[str] = ContextVar("number_language", default="en")


def set_number_language(lang: str):
    """Set the language numbers are drawn in; returns the token `reset_number_language` takes back."""
    return _NUMBER_LANG.set(lang)


def reset_number_language(token) -> None:
    """Undo one `set_number_language`, so a lesson's language never leaks into what runs after it."""
    _NUMBER_LANG.reset(token)


def number_language() -> str:
    return _NUMBER_LANG.get()


def drop_svg_paths(mob):
    """Forget the parsed SVG path objects glyphs keep after their points are built.

    Nothing reads them again, but every `copy()` (each FadeIn, Transform, `.animate`) deep-copies
    them: dropping them makes copying a Text or MathTypst ~8× cheaper."""
    for m in mob.get_family():
        if getattr(m, "path_obj", None) is not None:
            m.path_obj = None
    return mob


def remember_size(mob):
    """Its size as made, turned or not: the lint reads a copy's font size as its nominal size times how
    much the copy's outline has grown (scenes/review.py `_font_size`; manim's own reads the height,
    which a quarter turn swaps for the width)."""
    pts = [g.points for g in mob.family_members_with_points()]
    if pts:
        import numpy as np

        p = np.concatenate(pts)[:, :2]
        mob.ref_rms = float(np.sqrt(((p - p.mean(axis=0)) ** 2).sum(axis=1).mean()))
    return mob


# Pango wraps a line wider than the canvas it is given, and manim gives it the render's pixel size
# (and caches the SVG by text, not by size): a 128-pixel test render would wrap labels, and a later
# full-size render sharing the cache would reuse the wrapped ones. Text is always laid out on a
# canvas this large, so a label is one line at any resolution.
TEXT_CANVAS = (7680, 4320)


def glyph_cache_dir() -> Path:
    """Where glyph outlines are kept between runs: $ATTN_MANIM_GLYPHS, else
    $ATTENTION_MANIM_CACHE/glyphs, else $XDG_CACHE_HOME/attention-manim/glyphs, else
    ~/.cache/attention-manim/glyphs."""
    if os.environ.get("ATTN_MANIM_GLYPHS"):
        return Path(os.environ["ATTN_MANIM_GLYPHS"])
    from attention_manim.model.places import cache_dir

    return cache_dir("glyphs")


GLYPH_CACHE_MB = 1024  # the cache is trimmed to 80% of this (oldest entries first) once per process
_trimmed = False


def trim_glyph_cache(folder: Path | None = None, max_mb: float | None = None) -> int:
    """Keep the glyph cache under $ATTN_MANIM_GLYPHS_MAX_MB (default GLYPH_CACHE_MB): when it is
    larger, delete the entries used longest ago until it is at 80% of that. Returns how many went."""
    folder = folder or glyph_cache_dir()
    limit = float(max_mb if max_mb is not None else os.environ.get("ATTN_MANIM_GLYPHS_MAX_MB", GLYPH_CACHE_MB)) * 2**20
    try:
        for old in folder.glob("*/*.pkl.z"):  # pickles of an older version: never read again
            old.unlink(missing_ok=True)
        entries = [(st.st_mtime, st.st_size, f) for f in folder.glob("*/*.glyphs") for st in (f.stat(),)]
    except OSError:
        return 0
    total = sum(size for _, size, _ in entries)
    removed = 0
    for _, size, f in sorted(entries, key=lambda e: e[0]):
        if total <= 0.8 * limit:
            break
        f.unlink(missing_ok=True)
        total -= size
        removed += 1
    return removed


class GlyphCachedText(Text):
    """A manim `Text` that keeps its parsed glyph outlines on disk.

    Pango lays a text out as an SVG in a few milliseconds; parsing that SVG into outlines (XML,
    svgelements, one VMobject per glyph) costs 10-50 ms a label, a quarter of a scene's render
    time at -ql. The outlines are a pure function of the SVG's bytes and the style manim
    applies, so they are stored (as data: glyph_store.py, no pickle) under a hash of exactly those, the manim and
    svgelements versions: a changed font, size, text or colour is a different SVG and a
    different key. A damaged or unreadable entry is rebuilt; a cache that cannot be written is
    skipped."""

    def generate_mobject(self):
        try:
            import svgelements

            from manim import __version__ as manim_version

            h = hashlib.sha256(self.get_file_path().read_bytes())
            h.update(repr((type(self).__mro__[1].__name__, self.svg_default, self.path_string_config,
                           sorted(self.generate_config_style_dict().items()), str(config.renderer),
                           manim_version, getattr(svgelements, "SVGELEMENTS_VERSION", ""))).encode())
            entry = glyph_cache_dir() / h.hexdigest()[:2] / f"{h.hexdigest()}.glyphs"
        except Exception:  # no file to hash, no home folder: build it the usual way
            return super().generate_mobject()
        try:  # data only (glyph_store): a file that is anything else is rebuilt, never run
            submobjects, id_map = glyph_store.loads(entry.read_bytes())
            ok = isinstance(id_map, dict) and all(isinstance(m, VMobject) for m in submobjects)
        except Exception:  # absent, damaged or from an incompatible version: build it again
            ok = False
        if ok:
            self.add(*submobjects)
            self.id_to_vgroup_dict = id_map
            try:
                os.utime(entry)  # "used recently": the trim keeps it
            except OSError:
                pass
            return self
        global _trimmed
        if not _trimmed:  # once per process, before it adds entries of its own
            _trimmed = True
            trim_glyph_cache()
        super().generate_mobject()
        drop_svg_paths(self)
        tmp = None
        try:
            entry.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".glyphs-")
            with os.fdopen(fd, "wb") as f:
                f.write(glyph_store.dumps([list(self.submobjects), dict(self.id_to_vgroup_dict)]))
            os.replace(tmp, entry)
        except (OSError, glyph_store.UnsupportedData):
            if tmp:
                Path(tmp).unlink(missing_ok=True)
        return self


SPACE_MARK = "␣"
POWER_OF_TEN = re.compile(r"[0-9.,]*×10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+")
# set from the text face inside Korean text, as the formulas set them: Greek (the Korean face's Δ is
# "⊿") and subscript digits (its O₁ stood 8 px tall, apart from its letter)
FORMULA_CHARS = "ΔΣσαβθλμπφ₀₁₂₃₄₅₆₇₈₉"


MATH_FACE = "FreeSerif"  # a serif face with the math signs and superscripts CMU Serif lacks (≈ ≥ ∞ ⁻ ⁷)


def _superscript(ch: str) -> bool:
    import unicodedata

    return "SUPERSCRIPT" in unicodedata.name(ch, "") or unicodedata.category(ch) == "Lm"


def face_spans(text: str, font: str) -> dict[str, str]:
    """Which characters of `text`, set in `font`, come from another face: manim `t2f` keys "[i:j]".

    Left to itself, Pango fills a glyph the face lacks from any font, here DejaVu Sans: a sans-serif
    "≈" or "10⁻⁷" in a serif line, and inside Korean text a minus set apart from its digit ("10⁻  ⁷").
    So the choice is made here:
    - in Korean text, the space mark ␣ (the Korean face has none), the hyphen (its hyphen is as long
      as a minus: "GPT-2" read as "GPT minus 2"), the formulas' Greek and subscripts (its Δ is "⊿"),
      a power of ten, and whatever the Korean face lacks (the minus sign) come from the text face;
    - what the face chosen so far lacks comes from MATH_FACE, and so does a whole run of superscripts
      when one of them must ("10¹⁴": ¹ and ⁴ from one face, the same size)."""
    n = len(text)
    target: list[str | None] = [None] * n
    if font != FONT:
        for m in POWER_OF_TEN.finditer(text):
            target[m.start():m.end()] = [FONT] * (m.end() - m.start())
        for i, ch in enumerate(text):
            if ch in (SPACE_MARK, "-") or ch in FORMULA_CHARS or (not ch.isspace() and face_has(ch, font) is False
                                                                  and face_has(ch, FONT)):
                target[i] = FONT
    for i, ch in enumerate(text):
        if not ch.isspace() and face_has(ch, target[i] or font) is False and face_has(ch, MATH_FACE):
            target[i] = MATH_FACE
    i = 0
    while i < n:  # superscript runs: one face for the whole run
        j = i
        while j < n and _superscript(text[j]):
            j += 1
        if j > i and MATH_FACE in target[i:j] and all(face_has(c, MATH_FACE) for c in text[i:j]):
            target[i:j] = [MATH_FACE] * (j - i)
        i = max(j, i + 1)
    spans, i = {}, 0
    while i < n:
        j = i + 1
        while j < n and target[j] == target[i]:
            j += 1
        if target[i] is not None:
            spans[f"[{i}:{j}]"] = target[i]
        i = j
    return spans


MARKERS = ("#FE0101", "#FE0202", "#FE0303")  # colours no label is drawn in: they tag borrowed runs


@lru_cache(maxsize=256)
def baseline_gap(font: str, face: str, font_size: float, weight: str, slant: str) -> float:
    """How far above the line's baseline manim draws a run set in `face` inside a line in `font`: Pango
    lays out each run on its own, under its face's own ascent, so a run from a face with a smaller
    ascent sits high ("each word ≥ 0.98" with the ≥ raised like an exponent, "−∞" read as "_∞").
    Measured on an H of each face (it sits on the baseline)."""
    probe = Text("HH", font=font, font_size=font_size, weight=weight, slant=slant, t2f={"[1:2]": face})
    return float(probe.submobjects[1].get_bottom()[1] - probe.submobjects[0].get_bottom()[1])


def seat_borrowed(mob, font: str, faces: list[str], font_size: float, weight: str, slant: str) -> None:
    """Move the glyphs of borrowed runs (drawn in MARKERS) down onto the line's baseline."""
    from manim.utils.color import ManimColor

    tags = {ManimColor(m).to_hex().lower(): f for m, f in zip(MARKERS, faces)}
    for glyph in mob.submobjects:
        face = tags.get(ManimColor(glyph.get_fill_color()).to_hex().lower())
        if face is not None:
            glyph.shift([0, -baseline_gap(font, face, font_size, weight, slant), 0])


@lru_cache(maxsize=4096)
def _prototype(text: str, font_size: float, color: str, font: str, weight: str, slant: str) -> Text:
    saved = config.pixel_width, config.pixel_height, config.frame_width, config.frame_height
    try:
        config.pixel_width, config.pixel_height = TEXT_CANVAS
        text_class = GlyphCachedText if fast_enabled() else Text
        spans = face_spans(text, font)
        extra = {}
        if spans:  # each borrowed run drawn in a marker colour, to find its glyphs after (ligatures and all)
            faces = sorted(set(spans.values()))
            extra = {"t2f": spans, "t2c": {k: MARKERS[faces.index(f)] for k, f in spans.items()}}
        mob = text_class(text, font_size=font_size, color=color, font=font, weight=weight, slant=slant, **extra)
        if spans:
            seat_borrowed(mob, font, faces, font_size, weight, slant)
            mob.set_color(color)
    finally:
        config.pixel_width, config.pixel_height = saved[0], saved[1]
        config.frame_width, config.frame_height = saved[2], saved[3]
    drop_svg_paths(mob)
    remember_size(mob)
    return mob


APOSTROPHE = re.compile(r"(?<=[^\W\d_])'(?=[^\W\d_])|(?<=[^\W\d_]s)'(?=[\s,.;:)]|$)")  # "model's", "heads' ΔE"


def label(text: str, font_size: float = 36, color: str = "#FFFFFF", font: str = FONT,
          weight: str = "NORMAL", slant: str = "NORMAL") -> Text:
    """A fresh copy of a cached Text, in `color` (one prototype serves every colour). Text with
    Hangul is set in the Korean serif (Latin letters and digits in it come from that face too).
    A character no installed font has is drawn as a placeholder square (`coverage.drawable`)."""
    text = drawable(text)
    if font == FONT and has_hangul(text):
        # a figure or a sign in a Korean line is the serif's, as it is beside typeset math and in every other
        # language (review 46: a Hangul-face "=" and digits beside typeset ones in one panel)
        from .korean_face import MATH_SIGNS, face_runs, mixed_face

        if weight == "NORMAL" and slant == "NORMAL" and any(c.isdigit() or c in MATH_SIGNS for c in text) \
                and len(face_runs(text)) > 1:
            return mixed_face(text, font_size, color)
        font = KOREAN_FONT
    # an apostrophe inside a word is drawn as the typographer's ’ ("the model’s"): the straight one is a
    # typewriter's tick in a serif line (review 34). The text it says stays the catalog's (`original_text`)
    typeset = APOSTROPHE.sub("\u2019", text)
    mob = _prototype(typeset, float(font_size), "#FFFFFF", font, weight, slant).copy().set_color(color)
    if typeset != text:
        mob.original_text = text
    return mob


def number(value: float, kind: str = "vec", font_size: float = 28, color: str = "#FFFFFF") -> Text:
    """A number as shown on screen (`kind`: vec = signed one decimal, weight = two decimals,
    score = signed one decimal or −∞, signed2 = signed two decimals, for cosines). The mobject
    keeps the exact value in `.value` and the shown string in `.shown`, so tests can compare what is drawn with the trace.
    The string is written the way the lesson's language writes numbers (`set_number_language`)."""
    from ..i18n import localize_number

    shown = localize_number(FORMATTERS[kind](value), number_language())
    mob = label(shown, font_size=font_size, color=color)
    mob.value = float(value)
    mob.shown = shown
    return mob


def parse_shown(shown: str) -> float:
    """The number a viewer reads from a shown string ("−1.2" -> -1.2, "−∞" -> -inf, "0,48" -> 0.48:
    `number`'s kinds have no thousands separators, so a comma is a decimal one)."""
    s = shown.replace("−", "-").replace("∞", "inf").replace(",", ".")
    return float(s)


DESCENDERS = frozenset("gjpqyQ")  # letters whose foot hangs below the line


@lru_cache(maxsize=1)
def hangul_drop() -> float:
    """How far a Hangul syllable's foot hangs below the line, as a share of its height (measured on the
    Korean face against a capital H): a Korean word's own bottom is not the baseline that digits and
    typeset math beside it stand on."""
    h, k = label("H한", 100).submobjects[:2]
    return float((h.get_bottom()[1] - k.get_bottom()[1]) / k.height)


def text_baseline(mob) -> float:
    """The baseline of a line of text: the median bottom of its full-height glyphs (quotes,
    dots and dashes are left out; one descender or ligature cannot move it)."""
    import numpy as np

    seat = getattr(mob, "baseline", None)  # a piece that knows its baseline (a mark, a formula) says it
    if callable(seat):
        return float(seat())
    # a line whose glyphs are known char by char: the letters and digits that stand on the baseline (no
    # descender, no bracket). By height alone, "): 2 ×" took the bracket's foot for half its baseline and
    # stood 3 px high (review 44)
    chars = [c for c in str(getattr(mob, "original_text", "") or "") if not c.isspace()]
    if chars and len(chars) == len(mob.submobjects):
        feet = [g.get_bottom()[1] + (hangul_drop() * g.height if has_hangul(c) else 0.0)
                for c, g in zip(chars, mob.submobjects) if c.isalnum() and c not in DESCENDERS and g.has_points()]
        if feet:
            return float(np.median(feet))
    glyphs = [g for g in mob.family_members_with_points()] or [mob]
    tallest = max(g.height for g in glyphs)
    full = [g for g in glyphs if g.height >= 0.5 * tallest] or glyphs
    return float(np.median([g.get_bottom()[1] for g in full]))


def centre_figure(mob, point):
    """Put a figure's digits, not its box, centred on `point`: a decimal comma hangs below the line, and
    centred by its box "0,97" stood 4 px over the "0" beside it (review 46, pt)."""
    import numpy as np

    mob.move_to(point)
    middle = (text_baseline(mob) + mob.get_top()[1]) / 2
    mob.shift(np.array([0.0, float(point[1]) - middle, 0.0]))
    return mob


def seat_under_superscripts(mob):
    """Give a formula whose only scripts are superscripts (e^(−103.3), 1.4 × 10⁻⁴⁵) its baseline: the
    lowest bottom of its full-size glyphs. The median that suits prose lands on the exponent's digits
    when they are most of the glyphs: "e^(−103.3) =" stood 7 px below its line (review 44)."""
    def baseline() -> float:
        glyphs = mob.family_members_with_points() or [mob]
        tallest = max(g.height for g in glyphs)
        return min(g.get_bottom()[1] for g in glyphs if g.height >= 0.5 * tallest)

    mob.baseline = baseline
    return mob


def mark_glyph(mark: str, font_size: float, color: str):
    """A punctuation mark as a line of text sets it, with `set_baseline(y)` to seat it on a baseline: a
    lone comma or period, centred like a word, floats at mid-height and reads as an apostrophe or a dot."""
    from manim import UP, VGroup

    ref = label("H" + mark, font_size, color)  # the H only measures the line's baseline and cap height
    glyph = VGroup(*ref[1:])
    below = glyph.get_bottom()[1] - ref[0].get_bottom()[1]  # the mark's bottom against the baseline (< 0: a comma)
    cap, h0 = ref[0].height, max(glyph.height, 1e-9)

    def set_baseline(y: float):
        k = glyph.height / h0  # scaled since it was made
        return glyph.shift(UP * (y + below * k - glyph.get_bottom()[1]))

    def baseline() -> float:
        return glyph.get_bottom()[1] - below * glyph.height / h0

    glyph.set_baseline, glyph.baseline = set_baseline, baseline
    glyph.cap_height = lambda: cap * glyph.height / h0
    return glyph


def baseline_row(parts, buff: float = 0.14):
    """Text pieces side by side on one baseline (quotes and descenders do not lift a word)."""
    from manim import RIGHT, UP, VGroup

    row = VGroup(*parts).arrange(RIGHT, buff=buff)
    base = text_baseline(parts[0])
    for p in parts[1:]:
        p.shift(UP * (base - text_baseline(p)))
    return row


def rich_line(template: str, params: dict, *, font_size: float, color: str, colors: dict | None = None,
              numbers: dict | None = None, mobjects: dict | None = None, buff: float = 0.14):
    """One line of prose from a catalog template, with some parameters drawn as their own pieces:
    `colors` {param: colour} sets a parameter's text in its colour (a token as a query, a key), and
    `numbers` {param: (value, kind)} draws a number mobject (so tests can read `.value`), and
    `mobjects` {param: mobject} puts a ready-made piece there (typeset math such as √16). Word order
    and spacing stay the template's, whatever the language: where the template has no space (a
    comma after a word, a Korean particle), the pieces touch. Returns a VGroup with `.numbers`."""
    import string

    from manim import RIGHT, UP, VGroup

    from .korean_face import mixed_face as setter

    colors = colors or {}
    numbers = numbers or {}
    mobjects = mobjects or {}
    pieces, gaps, nums = [], [], []  # gaps[k]: the space before pieces[k]
    pending_space = False
    for literal, name, spec, _ in string.Formatter().parse(template):
        if literal:
            core = literal.strip()
            if core:
                gaps.append(buff if (literal[0].isspace() or pending_space) else 0.03)
                # a sign alone ("=", "≈") is seated by the line's baseline, not by its own bottom: an
                # "=" set on its lower bar stood 5 px low (review 44)
                alone = not any(c.isalnum() for c in core)
                # (a Korean literal's figures and signs in the serif, as the typeset pieces beside them: review 46)
                pieces.append(mark_glyph(core, font_size, color) if alone else setter(core, font_size, color))
            pending_space = literal[-1].isspace() or (not core and pending_space)
        if name is None:
            continue
        gaps.append(buff if pending_space else 0.03)
        if name in mobjects:
            pieces.append(mobjects[name])
        elif name in numbers:
            value, kind = numbers[name]
            m = number(value, kind, font_size, colors.get(name, color))
            nums.append(m)
            pieces.append(m)
        else:
            pieces.append(label(format(params[name], spec or ""), font_size, colors.get(name, color)))
        pending_space = False
    row = VGroup(*pieces)
    if pieces:
        base = text_baseline(pieces[0])
        x = pieces[0].get_right()[0]
        for p, gap in zip(pieces[1:], gaps[1:]):
            p.shift(RIGHT * (x + gap - p.get_left()[0]) + UP * (base - text_baseline(p)))
            x = p.get_right()[0]
    row.numbers = nums
    return row


def rich_lines(template: str, params: dict, width: float, **style):
    """`rich_line`s of one template, broken at its spaces into lines no wider than `width` (greedily; the
    last two words stay together, so a figure is never alone on its line). `style`: rich_line's keywords."""
    from manim import DOWN, LEFT, VGroup

    words = template.split(" ")
    if len(words) > 2:
        words = words[:-2] + [f"{words[-2]} {words[-1]}"]
    # a line is as wide as its words set alone, plus a space's gap between each two (rich_line lays its
    # pieces end to end): each word is set once, not each trial line
    space = style.get("buff", 0.14)
    widths = [rich_line(w, params, **style).width for w in words]
    lines: list[list[str]] = []
    current: list[str] = []
    used = 0.0
    for w, ww in zip(words, widths):
        if current and used + space + ww > width:
            lines.append(current)
            current, used = [w], ww
        else:
            used = used + space + ww if current else ww
            current = current + [w]
    lines.append(current)
    out = VGroup(*(rich_line(" ".join(ws), params, **style) for ws in lines)).arrange(DOWN, buff=0.12,
                                                                                          aligned_edge=LEFT)
    out.numbers = [n for line in out for n in line.numbers]
    return out
