"""Watching a lesson play: storyboards (key frames as PNG) and lint (the rules of a readable frame).

Both play a lesson with manim's animations skipped: each `play` jumps to its end state, nothing is
encoded, and a frame is rasterized only when a storyboard asks for one. An `Observer` attached to the
lesson's scene (`LessonSceneBase.observer`) hears three things: an animation finished, a caption block
ended, a chapter ended.

- `Storyboard` saves the frame at the end of every caption block and every chapter's last frame as
  `OUT/storyboard/<scene>[.<lang>]/NN_<chapter>_KK.png`, and a labelled `contact.png` of them all.
- `Linter` measures, after every animation, what a student at the back of the room would see: text and
  number sizes in pixels at 720p, texts that collide, mobjects outside the frame once the camera
  settles, a chapter's last frame left half empty, a caption's number missing from the screen, two
  decimal conventions in one panel, a title naming a role the head was not measured to play, a sum
  whose drawn parts miss its drawn total without "≈" (`declare_sum`), a label touching the stroke it
  labels (`clear_of`), a root or a subscript in the text font. The rules and thresholds are
  `../shared/design/lecture-quality.md`'s; `RULES` names them.

A mobject may carry a declared exception, `mob.lint_exempt = {"rule": "why"}` (see `exempt`): the
violation is then listed as an exception, not hidden and not counted.
"""

from __future__ import annotations

import math
import os
import hashlib
import re
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from .i18n import unspeakable
from .review_shapes import shape_findings
from .plans.rounding import drawn_sum, drawn_value

PX_PER_UNIT_720 = 90.0  # manim's frame is 8 units tall; 720 px / 8
RULES = {
    "number_size": "a digit in a grid, matrix, vector, bar label or table is at least 14 px tall at 720p",
    "text_size": "any other glyph is at least 11 px tall (cap height) at 720p",
    "overlap": "no two texts' glyphs intersect",
    "off_frame": "every mobject is inside the frame (0.1-unit margin) once the camera settles",
    "frame_used": "a chapter's last frame spans at least 55% of the frame's width and 50% of its height",
    "caption_number": "a number in a caption is on screen, rounded the same way",
    "caption_end": "a number a caption says is still on screen when the caption ends (its last frame)",
    "decimal_convention": "one decimal convention (point or comma) per panel",
    "honest_title": "a title names a head's role only if the head was measured to play it",
    "typeset_math": "no raw underscore on screen: W_Q is W with a subscript Q (typeset math); no one-letter variable "
                    "set upright beside a sign (n × n, d = 64: italic, as in the formulas), no $ of the catalog's math "
                    "marks; no text-font √: "
                    "a root is typeset with its bar over the number; no head named like code (L0H3), no model by its id "
                    "(smollm2); no embedding set as a bare E (E⃗, ΔE⃗, E⃗′ carry their arrow, Ê its hat)",
    "sum_rounding": "a sum shown beside its parts equals their sum at the shown precision, or is marked ≈; "
                    "a Σ on screen says what it adds up (declare_sum)",
    "label_clear": "a label keeps clear of the strokes it labels or sits among (an arc, an axis): its glyphs "
                   "at least 0.04 units (3.6 px at 720p) from their drawn outline",
    "label_near": "a label that names a point (an arrow's tip) sits within 0.6 units of it and no nearer another "
                  "label's point than its own, or a visible line ties it there",
    "label_apart": "two labels naming different points never stand on one line less than 0.35 units apart "
                   "(they read as one label: \"small E′ (miniature+eiffel)\"), nor one above the other, sharing "
                   "their width, less than 0.3 units apart (a label of two lines: \"ΔE⃗₄\" over \"blue\")",
    "leader_clear": "a line tying a label to its point never runs through another label (review 36: a leader "
                    "splitting \"E′ (Eiffel)\" into \"E′ | (Eiffel)\"), nor across an axis or another arrow the label "
                    "keeps clear of (review 37: ΔE⃗'s line across E′'s arrow read as naming it), but by its point, "
                    "where other tips may meet it",
    "spoken": "a caption's spoken form holds only words, numbers and punctuation (a voice never spells a symbol)",
    "legend_dot": "a dot legend's smallest dot is at least 6 px across at 720p (a speck is no key)",
    "axis_end_on": "a 3-D space drawn flat shows each of its axes at least 35% as long as its longest and every two "
                   "at least 10° apart (an axis seen end-on, or along another, hides which way a vector moves)",
    "named_twice": "a text names a head once: never \"layer 9, head 4 (layer 9 · head 4)\" (a head without a "
                   "role is not named again where the role would stand)",
    "no_change": "a caption that says a figure goes from one value to another names two different figures "
                 "(never \"from 0.99 to 0.99\": rounding hid the change it describes)",
    "still_caption": "a caption block ends on a new picture: what it points at appears, moves or is marked (two "
                     "key frames alike, the last one's caption pointing at nothing new, leave a teacher nothing to "
                     "pause on); a chapter's first caption counts from the last frame before it",
    "uncaptioned_end": "a chapter's last frame is the last caption's frame: nothing appears after the captions end "
                       "(a picture no caption explains, where the storyboard and a paused clip stop)",
    "number_locale": "a number is written the language's way: Portuguese 0,48 and 1.572.864, English and Korean "
                     "0.48 and 1,572,864, in captions, labels and figures alike (a grid's cell, a vector's entry): "
                     "a thousands comma never reads right in Portuguese (65,536 reads 65,5)",
}
CODE_HEAD_NAME = re.compile(r"\bL\d+\s?H\d+\b")  # "L0H3": a head named the way code names it
# "layer 9, head 4 (layer 9 · head 4)": a head without a role named again in the role's place, in any language
NAMED_TWICE = re.compile(r"(\d+)\D{1,12}?(\d+)\D{0,6}?\(\D{0,12}?\1\D{1,12}?\2\D{0,12}?\)")
# a one-letter variable in a text face beside a relation or an operation ("n × n", "d = 64", "n/4"): upright,
# it is not the italic n of the formulas beside it (review 46); a catalog marks it $n$
UPRIGHT_VARIABLE = re.compile(r"(?<![\w/.,])[a-zA-Z]\s?(?:[×=≤≥<>]\s?(?:\d|[a-zA-Z](?![\w]))|/\d)")
# a power of ten in a text face ("4.3×10⁻⁵"): its superscripts float apart from their 10, unspaced (review 47)
TEXT_POWER = re.compile(r"\d\s?×\s?10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]")
# an embedding typeset as a bare E (review 52: "E 0.00 → E′ +6.00", "Σ ΔE⁽ʰ⁾" beside E⃗₄ and ΔE⃗₄): in Typst source,
# an E that is not inside arrow(…) or hat(…), nor part of a name (W_E, Eiffel)
BARE_E = re.compile(r"(?<!arrow\()(?<!hat\()(?<!\w)E(?![\w(])")
MODEL_ID = re.compile(r"\b(?:smollm2|gpt3)\b")  # a built-in model by its lowercase id, not its name (SmolLM2)
MIN_NUMBER_PX = 14.0
MIN_TEXT_PX = 11.0
FRAME_MARGIN = 0.1
MIN_SPAN = (0.55, 0.50)
VISIBLE = 0.08  # fill or stroke opacity below this does not count as seen
LABEL_REACH = 0.6  # the farthest a label may sit from the point it names without a line to it (units)
LABEL_GAP = 0.04  # the least room between a label's glyphs and the outline of a stroke it labels (units)


def exempt(mob, rule: str, why: str):
    """Declare that `mob` (and its family) breaks `rule` on purpose, for the reason `why`."""
    rules = dict(getattr(mob, "lint_exempt", None) or {})
    rules[rule] = why
    mob.lint_exempt = rules
    return mob


# --- what is on screen ---------------------------------------------------------------------------

@dataclass
class SumShown:
    """A sum on screen and the parts it adds up, as the viewer reads them (see `declare_sum`)."""

    parts: object  # mobjects (their `.shown`/text) or strings, or a callable -> list[str] | None (not shown now)
    total: object  # the total's mobject or string
    marks: tuple = ()  # mobjects that, when visible, mark the sum "≈"
    name: str = ""


def declare_sum(mob, parts, total, marks=(), name: str = ""):
    """Say that `mob` (a group on screen) shows `total` as the sum of `parts`: the lint then checks,
    whenever all of them are visible, that the parts as drawn add up to the total as drawn, unless
    the total reads "≈" or one of `marks` (or of what a callable `marks` returns then) is visible. `parts` may be a callable returning the shown
    strings (None while they are not on screen, e.g. a grid showing dots). A Σ on screen outside any
    declared sum is reported too: every sum must say what it adds up."""
    sums = list(getattr(mob, "lint_sums", None) or [])
    sums.append(SumShown(parts, total, marks if callable(marks) else tuple(marks), name))
    mob.lint_sums = sums
    return mob


def clear_of(mob, strokes):
    """Say that the label `mob` must keep clear of `strokes` (mobjects, or a callable returning them):
    the arc it labels, the axes it sits among. The lint measures its glyphs against their outlines."""
    mob.lint_clear_of = strokes
    return mob


RIVAL_MARGIN = 0.05  # a label this much nearer another label's point than its own reads as naming that one


LABEL_APART = 0.35  # two labels of different points on one line, nearer than this, read as one label
LABEL_STACKED = 0.3  # one above the other, sharing their width, nearer than this: a label of two lines


def names_point(mob, point, leader=None, reach: bool = True, line=None):
    """Say that the label `mob` names `point` (a mobject: an arrow's tip, a bar's end): the lint checks
    it sits within LABEL_REACH of it, or that `leader` (a line to it) is drawn while it is not.
    `reach=False`: a name its line leads to (an axis's, at the axis's end) may stand further out; it
    still must not stand nearer another label's point than its own. `line`: the axis it names, which
    it stands nearer than any other named axis."""
    mob.lint_names_point = (point, leader)
    mob.lint_reach = reach
    mob.lint_axis_line = line
    return mob


def typeset_amiss(text: str) -> str | None:
    """What a text on screen sets as plain text that should be typeset or named otherwise (rule typeset_math),
    or None."""
    if "_" in text:
        return "is drawn with a raw underscore"
    if "$" in text:
        return "shows the catalog's $…$ math marks as text (set it with rich_text.rich or embedding_parts.mixed_label)"
    if UPRIGHT_VARIABLE.search(text):
        return "sets a variable upright beside a sign: mark it $n$ in the catalog"
    if CODE_HEAD_NAME.search(text):
        return "names a head like code (L0H3): say 'layer 0 · head 3' (common.head.layer_head)"
    if MODEL_ID.search(text):
        return "names a model by its id: say its name (params.model.*, head_split.model_name)"
    if "√" in text:
        return "draws a root in the text font (a lone √ with no bar over its number): typeset it (Typst sqrt)"
    return None


TIP_SHARED = 0.2  # the end of a leader by the point it names, where other arrows' tips may meet it (units)
AXIS_NAME_MARGIN = 0.1  # an axis's name this much nearer another named axis than its own reads as that one's


def segment_box_distance(a, b, box) -> float:
    """How far the segment from a to b lies from the box (x0, y0, x1, y1) on screen (0 where it crosses it)."""
    a, b = np.asarray(a, float)[:2], np.asarray(b, float)[:2]
    x0, y0, x1, y1 = box
    ts = np.linspace(0.0, 1.0, 65)  # a segment is short on screen: 65 points find it to a 64th of its length
    pts = a + ts[:, None] * (b - a)
    dx = np.maximum(np.maximum(x0 - pts[:, 0], 0.0), pts[:, 0] - x1)
    dy = np.maximum(np.maximum(y0 - pts[:, 1], 0.0), pts[:, 1] - y1)
    return float(np.hypot(dx, dy).min())


def segment_crosses(a, b, segments: np.ndarray) -> bool:
    """Whether the segment a → b (2-D) crosses any of `segments` ([n, 2, 2]: start and end points)."""
    segments = np.asarray(segments, float).reshape(-1, 2, 2)
    if not len(segments):
        return False
    a, b = np.asarray(a, float)[:2], np.asarray(b, float)[:2]
    c, d = segments[:, 0], segments[:, 1]
    r, s = b - a, d - c
    denom = r[0] * s[:, 1] - r[1] * s[:, 0]
    ok = np.abs(denom) > 1e-12
    denom = np.where(ok, denom, 1.0)
    ca = c - a
    t = (ca[:, 0] * s[:, 1] - ca[:, 1] * s[:, 0]) / denom  # along a → b
    u = (ca[:, 0] * r[1] - ca[:, 1] * r[0]) / denom  # along each segment
    return bool(np.any(ok & (t >= 0) & (t <= 1) & (u >= 0) & (u <= 1)))


LEADER_END_ROOM = 0.1  # a stroke passing this near the point a leader names is the named arrow's (or shares its point)


def strokes_crossed(start, end, strokes) -> list:
    """The visible strokes (mobjects: axis lines, arrows) that a leader line from `start` to `end` crosses
    on screen, but any passing within LEADER_END_ROOM of `end`: the arrow it names, or one sharing that point
    (review 37: ΔE⃗'s line across E′'s arrow and the Paris axis read as naming them)."""
    b = np.asarray(end, float)[:2]
    out = []
    for stroke in strokes:
        parts = [m.points[:, :2] for m in stroke.family_members_with_points() if _opacity(m) >= VISIBLE]
        if not parts:
            continue
        segs = np.concatenate([np.stack([q[:-1], q[1:]], axis=1) for q in parts if len(q) > 1] or [np.zeros((0, 2, 2))])
        if not len(segs):
            continue
        c, v = segs[:, 0], segs[:, 1] - segs[:, 0]
        t = np.clip(np.einsum("ij,ij->i", b - c, v) / np.maximum(np.einsum("ij,ij->i", v, v), 1e-12), 0.0, 1.0)
        if np.hypot(*(c + t[:, None] * v - b).T).min() < LEADER_END_ROOM:
            continue
        if segment_crosses(start, end, segs):
            out.append(stroke)
    return out


def _opacity(m) -> float:
    try:
        return max(float(m.get_fill_opacity()), float(m.get_stroke_opacity()) if m.get_stroke_width() > 0 else 0.0)
    except Exception:
        return 1.0


def _box(m) -> tuple[float, float, float, float]:
    pts = m.points
    return float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max())


class VGroupOf:
    """The visible glyphs of a text, as one piece with points and the text's words."""

    def __init__(self, glyphs, text: str = ""):
        self.points = np.concatenate([g.points for g in glyphs])
        self.text = text


@dataclass
class TextOnScreen:
    mob: object
    text: str
    glyphs: list  # (box, char) of each visible glyph
    box: tuple[float, float, float, float]
    owner: object  # the top-level scene mobject it belongs to (its "panel")
    exempt: dict
    context: dict = field(default_factory=dict)  # what its groups declare: clear_of (strokes), in_sum


def _text_class():
    from manim import Text

    return Text


def _is_text(m) -> bool:
    from manim import Text

    return isinstance(m, Text)


def _is_formula(m) -> bool:
    return type(m).__name__ in ("MathTypst", "Typst", "TypstMobject")


def visible_texts(scene, camera_mobs=None) -> list[TextOnScreen]:
    """Every Text on screen with its visible glyphs (spaces have none), in scene order."""
    out = []
    mobs = camera_mobs if camera_mobs is not None else scene.mobjects
    for top in mobs:
        _collect(top, top, {}, out)
    return out


def in_view(texts: list[TextOnScreen], camera) -> list[TextOnScreen]:
    """The texts the camera's frame (x0, y0, x1, y1) shows at least half of: a text the camera has
    moved away from is in the scene but not on the screen."""
    x0, y0, x1, y1 = camera
    out = []
    for t in texts:
        a0, b0, a1, b1 = t.box
        w, h = max(a1 - a0, 1e-9), max(b1 - b0, 1e-9)
        seen = max(0.0, min(a1, x1) - max(a0, x0)) * max(0.0, min(b1, y1) - max(b0, y0))
        if seen >= 0.5 * w * h:
            out.append(t)
    return out


def _collect(m, owner, inherited: dict, out: list, context: dict | None = None) -> None:
    ex = {**inherited, **(getattr(m, "lint_exempt", None) or {})}
    context = dict(context or {})
    if getattr(m, "lint_clear_of", None) is not None:
        context["clear_of"] = m.lint_clear_of
    if getattr(m, "lint_sums", None):
        context["in_sum"] = True
    if _is_text(m) or _is_formula(m):
        glyph_mobs = [g for g in m.family_members_with_points() if _opacity(g) >= VISIBLE]
        if not glyph_mobs:
            return
        chars = [c for c in getattr(m, "text", "") if not c.isspace()] if _is_text(m) else []
        leaves = m.submobjects if _is_text(m) else glyph_mobs
        glyphs = []
        for k, g in enumerate(leaves):
            if not g.has_points() or _opacity(g) < VISIBLE:
                continue
            glyphs.append((_box(g), chars[k] if len(chars) == len(leaves) else ""))
        if not glyphs:
            return
        xs0, ys0, xs1, ys1 = zip(*(b for b, _ in glyphs))
        # a formula says what a reader reads in it with `.shown` ("1,1×10⁻¹⁵"), for the number rules
        text = (getattr(m, "original_text", None) or getattr(m, "text", "")) if _is_text(m) else \
            str(getattr(m, "shown", "") or "")
        out.append(TextOnScreen(m, text, glyphs, (min(xs0), min(ys0), max(xs1), max(ys1)), owner, ex, context))
        return
    for sub in m.submobjects:
        _collect(sub, owner, ex, out, context)


def visible_leaves(scene, mobs=None, whole_texts: bool = False):
    """Every visible mobject with points, with its declared exceptions: (mobject, exceptions). With
    `whole_texts`, a text or formula is one piece (a label with its last letters past the edge is cut,
    though each letter is either in or out)."""
    out = []

    def walk(m, inherited):
        ex = {**inherited, **(getattr(m, "lint_exempt", None) or {})}
        if whole_texts and (_is_text(m) or _is_formula(m)):
            seen = [g for g in m.family_members_with_points() if _opacity(g) >= VISIBLE]
            if seen:
                out.append((VGroupOf(seen, getattr(m, "original_text", "") or ""), ex))
            return
        if m.has_points() and _opacity(m) >= VISIBLE:
            out.append((m, ex))
        for sub in m.submobjects:
            walk(sub, ex)

    for top in (mobs if mobs is not None else scene.mobjects):
        walk(top, {})
    return out


# --- numbers in words -----------------------------------------------------------------------------

NUMBER_IN_TEXT = re.compile(r"[−\-+]?\d[\d.,]*(?:\s?×\s?10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?%?")
# a decimal comma (0,48, 0,00000027: not three digits after it) or a thousands point (1.572.864) is the
# Portuguese way; a decimal point (0.48) or a thousands comma (1,572,864) the English one. A thousands
# group never follows a lone 0: "0.121" is a decimal point, "0,121" a decimal comma.
DECIMAL_COMMA = re.compile(r"(?<![\d,.])(?:0,\d+|[1-9]\d*,(?!\d{3}(?!\d))\d+)(?!\d)|(?<![\d,.])[1-9]\d{0,2}(?:\.\d{3})+(?![\d.,])")
# one group of three digits after a lone mark ("7.638", "7,638") reads by the language: a decimal there in the
# language's own way (an English 7.638 is seven and a bit), never a thousands mark (review 52: eiffel's "+7.638")
ONE_GROUP_POINT = re.compile(r"(?<![\d,.])[1-9]\d{0,2}\.\d{3}(?![\d.,])")
ONE_GROUP_COMMA = re.compile(r"(?<![\d,.])[1-9]\d{0,2},\d{3}(?![\d.,])")
DECIMAL_POINT = re.compile(r"(?<![\d,.])(?:0\.\d+|[1-9]\d*\.(?!\d{3}(?!\d))\d+)(?!\d)|(?<![\d,.])[1-9]\d{0,2}(?:,\d{3})+(?![\d.,])")


def decimal_marks(text: str, lang: str) -> tuple[bool, bool]:
    """Whether `text`, read in `lang`, writes a number the Portuguese way (decimal comma, thousands point) and
    whether the English way. One group of three digits after a lone mark reads as the language's decimal:
    "7.638" in English is seven and a bit, "7,638" in Portuguese too."""
    if lang == "pt":
        return (bool(DECIMAL_COMMA.search(text) or ONE_GROUP_COMMA.search(text)),
                bool(DECIMAL_POINT.search(ONE_GROUP_COMMA.sub(" ", text))))
    return (bool(DECIMAL_COMMA.search(ONE_GROUP_POINT.sub(" ", text))),
            bool(DECIMAL_POINT.search(text) or ONE_GROUP_POINT.search(text)))


NUMBER_TOKEN = re.compile(r"(?<![\d.,])\d+(?:[.,]\d+)*")


def foreign_number(token: str, lang: str) -> str | None:
    """Why `token` (digits and separators, "0.58", "12,561", "1.572.864") reads wrong in `lang`, or None.
    Portuguese: a thousands comma ("65,536", "1,048,576": a Portuguese reader sees 65,5 and 1,0), or a
    decimal point, in a sentence or a figure ("0.00000047", "0.45"; a thousands group "23.040" is
    Portuguese). Figures follow the language as sentences do. English and Korean: a decimal comma
    ("0,58") or thousands points ("1.572.864")."""
    has_point, has_comma = "." in token, "," in token
    if not (has_point or has_comma):
        if len(token) >= 5 and token[0] != "0":  # 49147: every language groups its thousands
            return "no thousands separator (49,147 in English and Korean, 49.147 in Portuguese)"
        return None
    last = "." if token.rfind(".") > token.rfind(",") else ","
    if lang == "pt":
        if re.fullmatch(r"[1-9]\d{0,2}(?:\.\d{3})+", token):
            return None  # thousands points: the Portuguese way
        if has_point and has_comma:
            return "English separators (thousands comma, decimal point)" if last == "." else None
        if re.fullmatch(r"\d{1,3}(?:,\d{3}){2,}", token) or re.fullmatch(r"[1-9]\d{0,2},\d{3}", token):
            return "a thousands comma (Portuguese writes a thousands point)"
        if has_point:  # in a sentence and in a figure alike (README, "Numbers")
            return "a decimal point (Portuguese writes a decimal comma)"
        return None
    if re.fullmatch(r"\d{1,3}(?:\.\d{3}){2,}", token):
        return "thousands points (English and Korean write a thousands comma)"
    if has_point and has_comma:
        return "Portuguese separators (thousands point, decimal comma)" if last == "," else None
    if has_comma and not re.fullmatch(r"[1-9]\d{0,2}(?:,\d{3})+", token):
        return "a decimal comma (English and Korean write a decimal point)"
    return None


FIGURE = r"[−+-]?\d[\d.,]*\d|[−+-]?\d"
NO_CHANGE = {  # "from A to B" in each language, A and B the same figure
    "en": re.compile(rf"\bfrom ({FIGURE}) to \1(?![\d.,]*\d)"),
    "pt": re.compile(rf"\bde ({FIGURE}) (?:a|para|até) \1(?![\d.,]*\d)"),
    "ko": re.compile(rf"({FIGURE})에서 \1(?:까지|로|으로)"),
}


def same_change(text: str, lang: str) -> str | None:
    """The figure a caption says something goes from and to, where both are the same ("0.99"), else None."""
    m = NO_CHANGE.get(lang, NO_CHANGE["en"]).search(text)
    return m.group(1) if m else None


def foreign_numbers(text: str, lang: str) -> list[tuple[str, str]]:
    """(number, why) for every number of `text` written in another language's convention."""
    out = []
    for m in NUMBER_TOKEN.finditer(text):
        why = foreign_number(m.group(0), lang)
        if why:
            out.append((m.group(0), why))
    return out


def figure_values(texts) -> list[float]:
    """The values of the figures among `texts` that say what they are (`number`'s `.value`; a label of several
    figures, its `.figures`)."""
    out = []
    for t in texts:
        mob = t.mob
        out += [float(v) for v in getattr(mob, "figures", ())]
        if isinstance(getattr(mob, "value", None), (int, float)):
            out.append(float(mob.value))
    return out


def decimal_figure(token: str, lang: str, values) -> bool:
    """Whether a Portuguese "7,638" (one group of three digits after a comma: an English thousands comma by its
    look) is a figure written to three decimals: a figure on screen has that value (review 52: eiffel's E′s to
    three decimals, where two would round back to another figure than the table's)."""
    if lang != "pt" or not ONE_GROUP_COMMA.fullmatch(token):
        return False
    read = float(token.replace(",", "."))
    return any(abs(abs(v) - read) < 6e-4 for v in values)


def _normalized(token: str, lang: str) -> str | None:
    """A number as written in `lang` ("0,48", "1.572.864", "−0.3") -> one spelling ("0.48", "1572864",
    "-0.3"); None when it is not a decimal number worth comparing (a plain count, a year, a layer)."""
    t = token.replace("−", "-").replace(" ", "").rstrip(".,")
    mant, sep, exp = t.partition("×10")
    if lang == "pt":
        mant = mant.replace(".", "").replace(",", ".")
    else:
        mant = mant.replace(",", "")
    if "." not in mant and not mant.endswith("%") and not sep:
        return None  # integers name counts, layers and heads: they need not be on screen
    return mant + (sep + exp if sep else "")


def caption_numbers(text: str, lang: str) -> list[tuple[str, str]]:
    """The decimal numbers (and percentages, and ×10ⁿ values) a caption states: (as written, normalized)."""
    out = []
    for m in NUMBER_IN_TEXT.finditer(text):
        n = _normalized(m.group(0), lang)
        if n is not None:
            out.append((m.group(0), n))
    return out


def screen_numbers(texts: list[TextOnScreen]) -> set[str]:
    """Every number spelled on screen, normalized both ways (a screen figure keeps a point in every
    language, a sentence on screen may use the language's comma)."""
    seen = set()
    for t in texts:
        s = t.text
        for m in NUMBER_IN_TEXT.finditer(s):
            for lang in ("en", "pt"):
                n = _normalized(m.group(0), lang)
                if n is not None:
                    seen.add(n.lstrip("+"))
                    seen.add(n.lstrip("+-"))
    return seen


# --- violations ------------------------------------------------------------------------------------

@dataclass
class Violation:
    scene: str
    lang: str
    model: str
    chapter: str
    time: float
    rule: str
    what: str
    where: str = ""
    exception: str | None = None  # the declared reason, when the lesson says it breaks the rule on purpose

    def line(self) -> str:
        head = f"{self.scene} {self.lang} {self.model} {self.chapter} t={self.time:.1f}s {self.rule}: {self.what}"
        if self.where:
            head += f" [{self.where}]"
        if self.exception:
            head += f" (declared exception: {self.exception})"
        return head

    def to_dict(self) -> dict:
        return asdict(self)


def _where(box) -> str:
    x0, y0, x1, y1 = box
    return f"x {x0:+.2f}..{x1:+.2f}, y {y0:+.2f}..{y1:+.2f}"


def _short(text: str, n: int = 40) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= n else text[: n - 1] + "…")


# --- jumping an animation to its end without playing it ------------------------------------------

def _kinds():
    import manim as M
    from manim.animation.transform import _MethodAnimation

    intro = {M.FadeIn, M.Write, M.Create, M.DrawBorderThenFill, M.GrowFromCenter, M.GrowArrow, M.GrowFromPoint,
             M.GrowFromEdge, M.SpinInFromNothing, M.AddTextLetterByLetter}
    out = {M.FadeOut, M.Uncreate, M.Unwrite, M.ShrinkToCenter}
    transforms = {M.Transform, M.ReplacementTransform, M.TransformFromCopy, M.ClockwiseTransform,
                  M.CounterclockwiseTransform, M.MoveToTarget, M.ApplyMethod, M.Indicate, M.FadeToColor,
                  M.ScaleInPlace, _MethodAnimation}
    groups = {M.AnimationGroup, M.LaggedStart, M.Succession}
    return intro, out, transforms, groups, M.Wait, _MethodAnimation


_KINDS = None


def _known(anim) -> bool:
    intro, out, transforms, groups, wait, _ = _KINDS
    kind = type(anim)
    if kind in groups:
        return all(_known(a) for a in anim.animations)
    return kind in intro or kind in out or kind in transforms or kind is wait


def _finish(scene, anim) -> None:
    """Leave the scene as `anim` would at its end, without its start copies and frames."""
    intro, out, transforms, groups, wait, method_animation = _KINDS
    kind = type(anim)
    if kind in groups:
        for a in anim.animations:
            _finish(scene, a)
    elif kind is wait:
        pass
    elif kind in intro:
        scene.add(anim.mobject)
    elif kind in out:
        scene.remove(anim.mobject)
    elif kind is method_animation:
        for item in anim.methods:
            item.method.__func__(anim.mobject, *item.args, **item.kwargs)
    elif anim.rate_func(1.0) < 0.5:
        pass  # there and back (Indicate): it ends where it began
    else:
        target = anim.target_mobject if anim.target_mobject is not None else anim.create_target()
        if anim.replace_mobject_with_target_in_scene:
            scene.replace(anim.mobject, target)
        else:
            anim.mobject.become(target)
    if kind not in intro and anim.is_remover():  # any animation may be told to leave (remover=True)
        scene.remove(anim.mobject)


def fast_forward(scene, args, kwargs) -> bool:
    """Jump `scene.play(*args, **kwargs)` to its end state when every animation in it is of a kind
    whose end is known (fades, writes, transforms, `.animate`, groups of them, waits): a skipped
    manim play still builds each animation's start copies, which is most of a lesson's cost. Returns
    False (and does nothing) for anything else; the caller plays it the usual way."""
    global _KINDS
    if _KINDS is None:
        _KINDS = _kinds()
    if not args or kwargs.get("subcaption"):
        return False
    anims = scene.compile_animations(*args, **kwargs)
    if not all(_known(a) for a in anims):
        return False
    scene.animations = anims
    scene.add_mobjects_from_animations(anims)
    for a in anims:
        _finish(scene, a)
    run_time = scene.get_run_time(anims)
    scene.update_mobjects(run_time)  # updaters run once, as in a skipped play (labels that follow a shape)
    scene.renderer.time += run_time
    scene.renderer.num_plays += 1
    return True


class Observer:
    """Hears a lesson play. Subclasses override what they need."""

    def start(self, scene) -> None:
        self.scene = scene
        self.chapter = ""
        self.chapter_number = 0

    def chapter_started(self, scene, key: str, number: int) -> None:
        self.chapter, self.chapter_number = key, number

    fast = True  # jump known animations to their end (fast_forward) instead of playing them skipped

    def skip(self, scene, args, kwargs) -> bool:
        return self.fast and fast_forward(scene, args, kwargs)

    def played(self, scene, animations) -> None:
        pass

    def caption_done(self, scene, text: str, start: float, end: float) -> None:
        pass

    def chapter_done(self, scene, key: str, number: int) -> None:
        pass

    def finish(self, scene) -> None:
        pass


def spoken_caption(scene, text: str) -> str:
    """The spoken form of the caption just shown: its block's, made from the catalog's own text (the
    written caption has its subscripts in plain text, scenes.i18n.plain_text)."""
    blocks = getattr(getattr(scene, "stage", None), "blocks", None)
    return blocks[-1]["spoken"] if blocks and "spoken" in blocks[-1] else scene.say.spoken(text)


def _frame_box(scene) -> tuple[float, float, float, float]:
    frame = getattr(scene.camera, "frame", None)
    if frame is not None:
        c = frame.get_center()
        w, h = frame.width, frame.height
    else:
        from manim import config

        c, w, h = np.zeros(3), config.frame_width, config.frame_height
    return c[0] - w / 2, c[1] - h / 2, c[0] + w / 2, c[1] + h / 2


def _camera_state(scene) -> tuple:
    return tuple(round(v, 4) for v in _frame_box(scene))


def _flat_mobjects(scene) -> list:
    """What is drawn flat on the frame: everything in a 2-D scene; in a 3-D scene only what is fixed
    in the frame (the rest is projected, and its size on screen is the camera's to decide)."""
    fixed = getattr(scene.camera, "fixed_in_frame_mobjects", None)
    if fixed is None or not hasattr(scene.camera, "phi"):
        return list(scene.mobjects)
    fixed_ids = {id(m) for m in fixed}
    return [m for m in scene.mobjects if id(m) in fixed_ids]


def picture_print(scene) -> tuple[tuple, frozenset]:
    """What the frame shows (captions are not mobjects), as (the camera, the set of every visible piece's
    extent and colours to 0.01 units). Two key frames with one print look alike; a print whose pieces are
    a subset of another's shows nothing the other does not."""
    cam = scene.camera
    view = _camera_state(scene) + tuple(round(float(getattr(cam, a)()), 3)
                                        for a in ("get_phi", "get_theta", "get_gamma", "get_zoom") if hasattr(cam, a))
    pieces = set()
    for m, _ in picture_leaves(scene, scene.mobjects):
        pts = m.points
        digest = hashlib.blake2b(np.round(np.concatenate([pts.min(0), pts.max(0)]), 2).tobytes(), digest_size=12)
        for rgbas in (getattr(m, "fill_rgbas", None), getattr(m, "stroke_rgbas", None)):
            if rgbas is not None and len(rgbas):
                digest.update(np.round(np.asarray(rgbas, dtype=float), 2).tobytes())
        digest.update(repr(round(float(getattr(m, "stroke_width", 0) or 0), 1)).encode())
        pieces.add(digest.digest())
    return view, frozenset(pieces)


def picture_leaves(scene, mobs) -> list:
    """`visible_leaves`, without the corner key to ␣ (Stage.space_key_for): no part of the picture, a
    chapter that ends on it alone ends on nothing."""
    corner = getattr(getattr(scene, "stage", None), "space_key", None)
    aside = set(map(id, corner.get_family())) if corner is not None else set()
    return [(m, ex) for m, ex in visible_leaves(scene, mobs) if id(m) not in aside]


class Linter(Observer):
    """Checks the rules after every animation; collects `Violation`s (each one once per chapter)."""

    def __init__(self, scene_name: str, lang: str, model: str):
        self.scene_name, self.lang, self.model = scene_name, lang, model
        self.violations: list[Violation] = []
        self._seen: set[tuple] = set()
        self._last_camera = None
        self._block_numbers: set[str] = set()
        self._last_print: tuple | None = None  # the last key frame's picture_print (a caption's end, a chapter's)
        self._chapter_print: tuple | None = None  # this chapter's last caption's, None before its first
        self.checks = 0

    def start(self, scene) -> None:
        super().start(scene)
        self.cap_per_point = _cap_heights()
        self._last_camera = _camera_state(scene)  # the camera starts settled

    def add(self, scene, rule: str, what: str, where: str = "", exception: str | None = None,
            key: tuple = ()) -> None:
        dedupe = (self.chapter, rule, exception is not None) + (key or (what,))
        if dedupe in self._seen:
            return
        self._seen.add(dedupe)
        self.violations.append(Violation(self.scene_name, self.lang, self.model, self.chapter,
                                         round(float(scene.renderer.time), 2), rule, what, where, exception))

    # --- after every animation --------------------------------------------------------------
    def played(self, scene, animations) -> None:
        from manim import Wait

        if animations and all(isinstance(a, Wait) for a in animations):
            return  # nothing moved
        self.checks += 1
        camera = _camera_state(scene)
        settled = camera == self._last_camera
        self._last_camera = camera
        mobs = _flat_mobjects(scene)
        texts = visible_texts(scene, mobs)
        self._block_numbers |= screen_numbers(in_view(texts, camera))
        scale = 720.0 / (camera[3] - camera[1])  # px at 720p per unit, with the camera's zoom
        self.check_sizes(scene, texts, scale)
        self.check_merged_labels(scene, mobs, scale)
        for px, box, why in small_subscripts(mobs, scale):  # a grid's K⃗ⱼ·Q⃗ᵢ subscripts
            self.add(scene, "text_size", f"K·Q subscripts {px:.1f} px < 11 px", _where(box), why, key=("sub", round(px)))
        self.check_overlaps(scene, texts)
        self.check_decimals(scene, texts)
        self.check_number_locale(scene, texts)
        self.check_underscores(scene, texts)
        self.check_sums(scene, mobs, texts)
        self.check_label_clear(scene, texts)
        for rule, what, box, why, key in label_findings(mobs):  # label_near, leader_clear, label_apart
            self.add(scene, rule, what, _where(box), why, key=key)
        for rule, what, box, key in shape_findings(mobs, scale):  # legend dots, 3-D axes (review_shapes.py)
            self.add(scene, rule, what, _where(box), key=key)
        if settled or not hasattr(scene.camera, "frame"):
            self.check_frame(scene, mobs, camera)

    def check_sizes(self, scene, texts, scale: float) -> None:
        small = {"number_size": [], "text_size": []}
        for t in texts:
            rule, px = text_px(t, self.cap_per_point, scale)
            limit = MIN_NUMBER_PX if rule == "number_size" else MIN_TEXT_PX
            if rule and 0 < px < limit - 0.05:
                small[rule].append((px, t))
        for rule, found in small.items():  # one line per rule and animation: the smallest, and how many
            for exempted in (False, True):
                group = sorted(((px, t) for px, t in found if bool(t.exempt.get(rule)) == exempted),
                               key=lambda e: e[0])
                if not group:
                    continue
                px, t = group[0]
                limit = MIN_NUMBER_PX if rule == "number_size" else MIN_TEXT_PX
                more = f" (and {len(group) - 1} more under {limit:.0f} px)" if len(group) > 1 else ""
                self.add(scene, rule, f"{_short(t.text)} {px:.1f} px < {limit:.0f} px{more}", _where(t.box),
                         t.exempt.get(rule), key=(round(px),))

    def check_merged_labels(self, scene, mobs, scale: float) -> None:
        """Labels drawn as one merged outline (a grid's row and column words, for speed) say their font
        size at build time (`lint_text`); their size now follows how their grid has been scaled."""
        for mob, ex in visible_leaves(scene, mobs):
            info = getattr(mob, "lint_text", None)
            if info is None:
                continue
            fs, ref, ref_height = info
            px = fs * (ref.height / ref_height) * self.cap_per_point["latin"] * scale
            if px < MIN_TEXT_PX - 0.05:
                self.add(scene, "text_size", f"a grid's labels {px:.1f} px < {MIN_TEXT_PX:.0f} px", _where(_box(mob)),
                         ex.get("text_size"), key=("grid labels", round(px)))

    def check_overlaps(self, scene, texts) -> None:
        if len(texts) < 2:
            return
        boxes = np.array([t.box for t in texts])
        order = np.argsort(boxes[:, 0], kind="stable")
        shrink = 0.01  # touching glyphs are not a collision
        for a_pos, i in enumerate(order):
            x1 = boxes[i, 2]
            for j in order[a_pos + 1:]:
                if boxes[j, 0] >= x1 - shrink:
                    break
                if boxes[j, 1] >= boxes[i, 3] - shrink or boxes[i, 1] >= boxes[j, 3] - shrink:
                    continue
                a, b = texts[i], texts[j]
                if a.mob is b.mob or _related(a.mob, b.mob):
                    continue
                if a.text == b.text and np.allclose(boxes[i], boxes[j], atol=0.02):
                    continue  # the same label stacked on itself (a copy under its original) reads as one
                hit = _glyphs_intersect(a.glyphs, b.glyphs, shrink)
                if hit is not None:
                    reason = a.exempt.get("overlap") or b.exempt.get("overlap")
                    self.add(scene, "overlap", f"{_short(a.text, 24)} overlaps {_short(b.text, 24)}", _where(hit),
                             reason, key=tuple(sorted((a.text, b.text))))

    def check_underscores(self, scene, texts) -> None:
        for t in texts:
            if NAMED_TWICE.search(t.text):
                self.add(scene, "named_twice", f"{_short(t.text)} names its head twice", _where(t.box),
                         t.exempt.get("named_twice"), key=("twice", t.text))
            why = typeset_amiss(t.text)
            code = str(getattr(t.mob, "typst_code", "")).strip("$ ") if _is_formula(t.mob) else ""
            if not why and BARE_E.search(code):
                why = "sets the vector E without its arrow: typeset arrow(E) (vectors.symbol_source)"
            if not why and _is_text(t.mob) and TEXT_POWER.search(t.text):
                why = "writes a power of ten in a text face: typeset it (beyond_parts.sci_math, diff_line)"
            if why:
                self.add(scene, "typeset_math", f"{_short(t.text or code)} {why}", _where(t.box),
                         t.exempt.get("typeset_math"), key=(t.text, code))

    def check_sums(self, scene, mobs, texts) -> None:
        """Declared sums add up as drawn (or say ≈); a Σ outside any declared sum is reported."""
        for m, sums in _declared_sums(mobs):
            for d in sums:
                total = _shown_of(d.total)
                parts = d.parts() if callable(d.parts) else ([_shown_of(p) for p in d.parts]
                                                              if all(_seen(p) for p in d.parts) else None)
                if total is None or parts is None:
                    continue
                got, want = drawn_sum(parts), drawn_value(total)
                if got is None or want is None or got == want:
                    continue
                if "≈" in total or any(_seen(mk) for mk in (d.marks() if callable(d.marks) else d.marks)):
                    continue
                shown = " + ".join(parts) if len(parts) <= 6 else f"{' + '.join(parts[:5])} + … ({len(parts)} parts)"
                ex = dict(getattr(m, "lint_exempt", None) or {})
                self.add(scene, "sum_rounding", f"{shown} = {format(got, 'f')} drawn as {total} without ≈"
                                                f"{' (' + d.name + ')' if d.name else ''}",
                         _where(_box(d.total)) if hasattr(d.total, "points") and d.total.has_points() else "",
                         ex.get("sum_rounding"), key=(d.name, tuple(parts), total))
        for t in texts:
            if SIGMA_LABEL.search(t.text) and not t.context.get("in_sum") and not getattr(t.mob, "in_prose", False):
                self.add(scene, "sum_rounding", f"{_short(t.text)}: a Σ with no declared parts (declare_sum)",
                         _where(t.box), t.exempt.get("sum_rounding"), key=("undeclared", t.text))

    def check_label_clear(self, scene, texts) -> None:
        """A label declared clear of some strokes (`clear_of`) keeps LABEL_GAP from their outline."""
        from .components.clearance import clearance, strokes_of

        for t in texts:
            strokes = t.context.get("clear_of")
            if strokes is None:
                continue
            strokes = strokes() if callable(strokes) else strokes
            seen = [m for m in strokes_of(strokes) if _opacity(m) >= VISIBLE and not _related(m, t.mob)]
            gap = clearance(np.array([b for b, _ in t.glyphs]), seen)
            if gap < LABEL_GAP - 1e-3:
                self.add(scene, "label_clear", f"{_short(t.text or type(t.mob).__name__)} is {max(gap, 0):.3f} units "
                                               f"from a stroke it must clear (at least {LABEL_GAP})",
                         _where(t.box), t.exempt.get("label_clear"), key=(id(t.mob),))

    def check_decimals(self, scene, texts) -> None:
        by_owner: dict[int, list[TextOnScreen]] = {}
        for t in texts:
            by_owner.setdefault(id(t.owner), []).append(t)
        for group in by_owner.values():
            marks = [(t, decimal_marks(t.text, self.lang)) for t in group]
            commas = [t for t, (comma, _) in marks if comma]
            points = [t for t, (_, point) in marks if point]
            if commas and points:
                reason = commas[0].exempt.get("decimal_convention") or points[0].exempt.get("decimal_convention")
                self.add(scene, "decimal_convention",
                         f"{_short(commas[0].text, 24)} (comma) beside {_short(points[0].text, 24)} (point)",
                         _where(points[0].box), reason)

    def check_number_locale(self, scene, texts) -> None:
        """Numbers drawn in the other language's convention (65,536 in Portuguese reads 65,5)."""
        for t in texts:  # a grid's cell as much as a caption
            for token, why in [f for f in foreign_numbers(t.text, self.lang)
                               if not decimal_figure(f[0], self.lang, figure_values([t]))][:1]:
                self.add(scene, "number_locale", f"{token} in {_short(t.text)}: {why}", _where(t.box),
                         t.exempt.get("number_locale"), key=(t.text,))

    def check_frame(self, scene, mobs, camera) -> None:
        """What is partly in the frame must be wholly in it (a mobject wholly outside is not seen)."""
        from manim import config

        fx0, fy0, fx1, fy1 = camera
        m = FRAME_MARGIN * (fy1 - fy0) / 8.0
        # a close-up crops the shapes it zooms into (that is what a close-up is); a cut word still reads as a bug
        close_up = (fx1 - fx0) < 0.98 * config.frame_width
        for top in mobs:
            cut = []
            for mob, ex in visible_leaves(scene, [top], whole_texts=True):
                if close_up and not isinstance(mob, VGroupOf):
                    continue
                x0, y0, x1, y1 = _box(mob)
                if x1 <= fx0 or x0 >= fx1 or y1 <= fy0 or y0 >= fy1:
                    continue  # out of sight
                if x0 < fx0 + m - 1e-3 or x1 > fx1 - m + 1e-3 or y0 < fy0 + m - 1e-3 or y1 > fy1 - m + 1e-3:
                    cut.append((mob, ex, (x0, y0, x1, y1)))
            if not cut:
                continue
            mob, ex, box = cut[0]
            texts = [str(getattr(c[0], "text", "")) for c in cut if getattr(c[0], "text", "")]
            name = texts[0] if texts else (getattr(top, "text", None) or type(top).__name__)
            more = f" (and {len(cut) - 1} more pieces)" if len(cut) > 1 else ""
            self.add(scene, "off_frame", f"{_short(str(name), 30)} cut by the frame's edge{more}", _where(box),
                     ex.get("off_frame"), key=(id(top),))

    # --- captions and chapters -------------------------------------------------------------
    def caption_done(self, scene, text: str, start: float, end: float) -> None:
        odd = unspeakable(spoken_caption(scene, text))
        if odd:
            self.add(scene, "spoken", f"a voice cannot say {' '.join(sorted(odd))} in ({_short(text, 50)}): "
                                      f"add them to scenes/locales/{self.lang}/spoken.toml", key=tuple(sorted(odd)))
        if NAMED_TWICE.search(text):
            self.add(scene, "named_twice", f"the caption names its head twice ({_short(text, 50)})", key=("twice", text))
        same = same_change(text, self.lang)
        if same is not None:
            self.add(scene, "no_change", f"the caption says {same} changes into {same} ({_short(text, 50)}): write the "
                                         f"figures to the decimals that tell them apart, or say they are the same",
                     key=("same", same))
        shown_now = picture_print(scene)
        if shown_now == self._last_print:
            self.add(scene, "still_caption", f"the picture has not changed since the last key frame when this "
                                             f"caption ends ({_short(text, 50)}): show what it points at",
                     key=("still", text))
        self._last_print = self._chapter_print = shown_now
        seen = in_view(visible_texts(scene, _flat_mobjects(scene)), _frame_box(scene))
        for token, why in [f for f in foreign_numbers(text, self.lang)
                           if not decimal_figure(f[0], self.lang, figure_values(seen))][:1]:
            self.add(scene, "number_locale", f"{token} in the caption ({_short(text, 50)}): {why}",
                     key=("caption", token))
        now = screen_numbers(seen)
        shown = self._block_numbers | now
        for written, n in caption_numbers(text, self.lang):
            if n.lstrip("+") not in shown and n.lstrip("+-") not in shown:
                self.add(scene, "caption_number", f"the caption says {written} but the screen does not "
                                                  f"({_short(text, 50)})", key=(written,))
            elif n.lstrip("+") not in now and n.lstrip("+-") not in now:
                # shown, then gone before the caption ends (the camera went home, the panel faded): the
                # frame a teacher pauses on at the caption's end no longer shows what it says
                self.add(scene, "caption_end", f"the caption says {written}, gone from the screen before it "
                                               f"ends ({_short(text, 50)})", key=("end", written))
        self._block_numbers = set()

    def chapter_started(self, scene, key: str, number: int) -> None:
        super().chapter_started(scene, key, number)
        self._chapter_print = None

    def chapter_done(self, scene, key: str, number: int) -> None:
        shown_now = picture_print(scene)
        said = self._chapter_print
        if said is not None and (shown_now[0] != said[0] or not shown_now[1] <= said[1]):  # a fade-out adds nothing
            self.add(scene, "uncaptioned_end", "the chapter goes on after its last caption: its last frame shows "
                                               "what no caption explains", key=("uncaptioned",))
        self._last_print = shown_now
        if key in ("outro",):
            return
        mobs = _flat_mobjects(scene)
        self.check_frame(scene, mobs, _camera_state(scene))  # however it got there, the last frame counts
        boxes = [(_box(m), ex) for m, ex in picture_leaves(scene, mobs)]
        if not boxes:
            return
        if any("frame_used" in ex for _, ex in boxes):
            reason = next(ex["frame_used"] for _, ex in boxes if "frame_used" in ex)
        else:
            reason = None
        fx0, fy0, fx1, fy1 = _camera_state(scene)
        xs0, ys0, xs1, ys1 = zip(*(b for b, _ in boxes))
        wide = (min(max(xs1), fx1) - max(min(xs0), fx0)) / (fx1 - fx0)
        tall = (min(max(ys1), fy1) - max(min(ys0), fy0)) / (fy1 - fy0)
        if wide < MIN_SPAN[0] or tall < MIN_SPAN[1]:
            self.add(scene, "frame_used", f"the chapter ends on {wide:.0%} of the width and {tall:.0%} of the "
                                          f"height (at least {MIN_SPAN[0]:.0%} × {MIN_SPAN[1]:.0%})",
                     _where((min(xs0), min(ys0), max(xs1), max(ys1))), reason)

    def roles_named(self, scene, named: list[tuple]) -> None:
        check_roles_named(self, scene, named)


def check_roles_named(linter: "Linter", scene, named: list[tuple]) -> None:
    """A head is called by a role only where the model names it so (the toy's trained heads) or
    the probes measured it (a real model's roles, model/probes.py, in the lesson's model info);
    and, over a sentence where the head has nothing to do (every word keeps to itself: no
    adjective for "adjectives → nouns"), only if the frame says so (`say.role(..., idle_said=True)`)."""
    from .plans.honesty import role_idle

    traces = getattr(getattr(scene, "setting", None), "traces", ())
    info = getattr(getattr(scene, "inputs", None), "model", None)
    for role, layer, head, tokens, idle_said in named:
        if not role or not traces:
            continue
        trace = next((t for t in traces if tokens is not None and tuple(t.tokens) == tokens), traces[0])
        in_trace = trace.head(layer, head).role if layer < trace.model.n_layers else ""
        measured = info.head_for_role(role) if info is not None else None
        if in_trace != role and measured != (layer, head):
            linter.add(scene, "honest_title", f"L{layer}H{head} is called {role!r} but was measured as "
                                            f"{in_trace or 'nothing in particular'!r}", key=(role, layer, head))
            continue
        if layer >= trace.model.n_layers or idle_said:
            continue
        kept = role_idle(trace.head(layer, head).pattern, trace.model.real)
        if kept is not None:
            linter.add(scene, "honest_title", f"L{layer}H{head} is called {role!r} over "
                                            f"{' '.join(trace.tokens)[:40]!r}, where every word keeps at least "
                                            f"{kept:.2f} on itself, and nothing says so",
                     key=(role, layer, head, trace.tokens))


# a Σ that labels a sum: alone, "Σ =", "Σ ≈ 1.00", "every column: Σ =" (not "Σ weight × value", a formula)
SIGMA_LABEL = re.compile(r"[Σ∑]\s*[=≈]?\s*(?:[−\-+]?\d[\d.,]*)?\s*$")


def _shown_of(x) -> str | None:
    """What a viewer reads of a number: a string as given, a mobject's `.shown` or text; None when
    the mobject is not visible."""
    if isinstance(x, str):
        return x
    if not _seen(x):
        return None
    return str(getattr(x, "shown", None) or getattr(x, "original_text", None) or getattr(x, "text", "") or "")


def box_distance(lo, hi, p) -> float:
    """How far the point p lies from the box with corners lo and hi (0 inside it)."""
    return float(np.hypot(max(lo[0] - p[0], 0, p[0] - hi[0]), max(lo[1] - p[1], 0, p[1] - hi[1])))


def small_subscripts(mobs, scale: float) -> list:
    """(px, box, declared exception) for each visible grid showing K⃗ⱼ·Q⃗ᵢ whose subscripts stand under the
    text size: they say which key and which query, so their digits are text (they read 7-9 px before)."""
    out = []
    for top in mobs:
        for m in top.get_family():
            info = getattr(m, "lint_subscript", None)
            if info is None or getattr(m, "content_kind", None) != "symbols" or not _seen(m):
                continue
            digit, ref, ref_height = info
            px = digit * (ref.height / ref_height) * scale
            if px < MIN_TEXT_PX - 0.05:
                out.append((px, _box(VGroupOf(ref.family_members_with_points(), "")),
                            (getattr(m, "lint_exempt", None) or {}).get("text_size")))
    return out


def labels_far_from_their_points(mobs) -> list:
    """(label, its text, distance, box) for each visible label declared to name a point (`names_point`)
    that sits further than LABEL_REACH from it, or nearer to another label's point than to its own
    (it reads as naming that one), or, an axis's name, nearer to a label's point than that point's own
    label is (review 36: "Paris" beside the tip of E′ (eiffel), nearer it than "E′ (eiffel)", read as its
    name), with no visible line tying it there."""
    shown = {id(m) for top in mobs for m in top.get_family()}
    named = [(m, *m.lint_names_point) for top in mobs for m in top.get_family()
             if getattr(m, "lint_names_point", None) is not None and _seen(m)]
    boxes = {id(m): _box(VGroupOf(m.family_members_with_points(), "")) for m, _, _ in named}
    tied = {id(m) for m, _, leader in named if leader is not None and id(leader) in shown and _seen(leader)}

    def to(m, point) -> float:
        x0, y0, x1, y1 = boxes[id(m)]
        return box_distance((x0, y0), (x1, y1), point.get_center())

    out, found = [], set()
    for m, point, _ in named:
        far = to(m, point)
        # (an axis's end, named with reach=False, is no point a label is read against: only its line ends there)
        rival = min((to(m, o) for o_m, o, _ in named if o_m is not m and o is not point
                     and getattr(o_m, "lint_reach", True)), default=np.inf)
        # the axes' names standing nearer this point than its own label does (unless a line ties its own).
        # Among arrows' labels, crowded about nearby tips, the rival test above and the lines suffice
        usurpers = [] if id(m) in tied or not getattr(m, "lint_reach", True) else [
            (o_m, d) for o_m, o, _ in named if o_m is not m and o is not point and not getattr(o_m, "lint_reach", True)
            and (d := to(o_m, point)) < far - RIVAL_MARGIN]
        if ((far > LABEL_REACH and getattr(m, "lint_reach", True)) or rival < far - RIVAL_MARGIN) and id(m) not in tied:
            usurpers.append((m, far))
        own_line = getattr(m, "lint_axis_line", None)
        if own_line is not None:  # an axis's name beside another axis reads as its (review 37: "chemistry" by skin's)
            mine = segment_box_distance(own_line.get_start(), own_line.get_end(), boxes[id(m)])
            for o_m, _, _ in named:
                line = getattr(o_m, "lint_axis_line", None)
                if o_m is not m and line is not None and line is not own_line and _seen(line):
                    if segment_box_distance(line.get_start(), line.get_end(), boxes[id(m)]) < mine - AXIS_NAME_MARGIN:
                        usurpers.append((m, mine))
                        break
        for o_m, d in usurpers:
            if id(o_m) not in found:
                found.add(id(o_m))
                text = getattr(o_m, "original_text", None) or getattr(o_m, "text", None) or type(o_m).__name__
                out.append((o_m, text, d, boxes[id(o_m)]))
    return out


def labels_run_together(mobs) -> list:
    """(label, its text, gap, box) for each pair of visible labels naming different points that stand
    on one line less than LABEL_APART apart, or one above the other less than LABEL_STACKED apart: they
    read as one label (review 36: "small" beside "E′ (miniature+eiffel)" read as "small E′
    (miniature+eiffel)"; review 37: "ΔE⃗₄" over "blue" as a label of two lines)."""
    named = [(m, m.lint_names_point[0], _box(VGroupOf(m.family_members_with_points(), "")))
             for top in mobs for m in top.get_family()
             if getattr(m, "lint_names_point", None) is not None and _seen(m)]
    out = []
    for i, (a, pa, (ax0, ay0, ax1, ay1)) in enumerate(named):
        for b, pb, (bx0, by0, bx1, by1) in named[i + 1:]:
            if pa is pb:
                continue
            shared = min(ay1, by1) - max(ay0, by0)  # how much of their height they share
            gap = max(bx0 - ax1, ax0 - bx1)
            if not (shared > 0.5 * min(ay1 - ay0, by1 - by0) and gap < LABEL_APART):
                # or stacked: sharing half the narrower's width, a line's gap apart (review 37: "ΔE⃗₄" over "blue")
                shared = min(ax1, bx1) - max(ax0, bx0)
                gap = max(by0 - ay1, ay0 - by1)
                if not (shared > 0.5 * min(ax1 - ax0, bx1 - bx0) and gap < LABEL_STACKED):
                    continue
            text = " | ".join(str(getattr(m, "original_text", None) or getattr(m, "text", "")) for m in (a, b))
            out.append((a, text, gap, (min(ax0, bx0), min(ay0, by0), max(ax1, bx1), max(ay1, by1))))
    return out


def _label_text(m) -> str:
    """A label's words as the lint names it (typeset math by its source: "arrow(E)'")."""
    return str(getattr(m, "original_text", None) or getattr(m, "text", None) or getattr(m, "typst_code", None)
               or type(m).__name__)


def leaders_through_labels(mobs) -> list:
    """(leader's label, text, what it crosses, its box) for each visible leader line that runs through
    another visible label's box (shrunk by LABEL_GAP: touching a corner is no crossing), or across an axis
    or another arrow the label keeps clear of."""
    named = [m for top in mobs for m in top.get_family() if getattr(m, "lint_names_point", None) is not None and _seen(m)]
    shown = {id(m) for top in mobs for m in top.get_family()}
    boxes = {id(m): _box(VGroupOf(m.family_members_with_points(), "")) for m in named}
    out = []
    for m in named:
        leader = m.lint_names_point[1]
        if leader is None or id(leader) not in shown or not _seen(leader) or leader.get_stroke_opacity() < 0.05:
            continue
        for o in named:
            x0, y0, x1, y1 = boxes[id(o)]
            inner = (x0 + LABEL_GAP, y0 + LABEL_GAP, x1 - LABEL_GAP, y1 - LABEL_GAP)
            if o is not m and segment_box_distance(leader.get_start(), leader.get_end(), inner) == 0.0:
                out.append((m, _label_text(m), _label_text(o), boxes[id(o)]))
        # and across the strokes it keeps clear of (the axes, the other arrows): it reads as naming those
        strokes = getattr(m, "lint_clear_of", None)
        strokes = [s for s in ((strokes() if callable(strokes) else strokes) or ()) if id(s) in shown]
        # (but for its last TIP_SHARED by the point it names: where tips meet, as they do where a head barely
        # moves a word, every leader into the spot touches the others' tips; it runs across none of them)
        a, b = np.asarray(leader.get_start(), float), np.asarray(leader.get_end(), float)
        point = m.lint_names_point[0]
        at = np.asarray(point.get_center() if hasattr(point, "get_center") else point, float)
        if np.linalg.norm((a - at)[:2]) < np.linalg.norm((b - at)[:2]):
            a, b = b, a  # b: the end at the point
        length = float(np.linalg.norm((b - a)[:2]))
        if length > 1e-9:
            b = b - (b - a) * min(TIP_SHARED, 0.8 * length) / length
        for s in strokes_crossed(a, b, strokes):
            out.append((m, _label_text(m), f"a line ({type(s).__name__})", boxes[id(m)]))
    return out


def label_findings(mobs) -> list:
    """(rule, what, box, declared exception, key) for the labels of points: label_near (near its point,
    or tied by a line) and label_apart (two names never read as one)."""
    out = [("label_near", f"{_short(text)}: {far:.2f} units from its point, or nearer another's, no line", box,
            (getattr(m, "lint_exempt", None) or {}).get("label_near"), (id(m),))
           for m, text, far, box in labels_far_from_their_points(mobs)]
    out += [("leader_clear", f"{_short(text)}: its line runs through {_short(crossed)}", box,
             (getattr(m, "lint_exempt", None) or {}).get("leader_clear"), ("leader", id(m)))
            for m, text, crossed, box in leaders_through_labels(mobs)]
    return out + [("label_apart", f"{_short(text, 60)}: {gap:.2f} units apart, read as one label", box,
                   (getattr(m, "lint_exempt", None) or {}).get("label_apart"), ("apart", id(m)))
                  for m, text, gap, box in labels_run_together(mobs)]


def _seen(m) -> bool:
    if isinstance(m, str):
        return True
    return any(_opacity(g) >= VISIBLE for g in m.family_members_with_points())


def _declared_sums(mobs):
    """(mobject, its declared sums) for every visible mobject that declares some."""
    out = []

    def walk(m):
        if getattr(m, "lint_sums", None) and _seen(m):
            out.append((m, m.lint_sums))
        for sub in m.submobjects:
            walk(sub)

    for top in mobs:
        walk(top)
    return out


def _rms(m) -> float:
    pts = [g.points for g in m.family_members_with_points()]
    if not pts:
        return 0.0
    p = np.concatenate(pts)[:, :2]
    return float(np.sqrt(((p - p.mean(axis=0)) ** 2).sum(axis=1).mean()))


def _font_size(m) -> float:
    """The font size a text is drawn at now: its nominal size times how much it has been scaled since it
    was made, measured so that turning it (a label turned upright over a column) does not count as
    growing (manim's own `font_size` reads the height, which a quarter turn swaps for the width)."""
    from .components.vectors import MATH_PER_TEXT

    ref = getattr(m, "ref_rms", None)
    nominal = getattr(m, "_font_size", None)
    if getattr(m, "math_font_size", None) is not None:  # typeset math, as the text size it stands as tall as
        nominal = m.math_font_size / MATH_PER_TEXT
    if ref and nominal:
        now = _rms(m)
        if now > 0:
            return float(nominal) * now / ref
    return float(getattr(m, "font_size", 0.0))


def text_px(t: TextOnScreen, cap_per_point: dict, scale: float) -> tuple[str | None, float]:
    """(the size rule a text on screen answers to, its size in px at 720p): a figure's digits by their
    drawn height; other text, and typeset math (as the text it stands as tall as), by its font size."""
    digits = [b for b, c in t.glyphs if c.isdigit()]
    if _is_formula(t.mob):
        if getattr(t.mob, "math_font_size", None) is None:
            return None, 0.0
        rule = "number_size" if t.text and _is_number_text(t.text) else "text_size"
        return rule, _font_size(t.mob) * cap_per_point["latin"] * scale
    if digits and _is_number_text(t.text) and not getattr(t.mob, "in_prose", False):  # (a Korean line's "2" is prose)
        return "number_size", float(np.median([b[3] - b[1] for b in digits])) * scale
    font = getattr(t.mob, "font", "") or ""
    return "text_size", _font_size(t.mob) * cap_per_point.get("ko" if "Nanum" in font else "latin", 0.0101) * scale


def _is_number_text(text: str) -> bool:
    """A figure (a cell, an entry, a count), not a sentence with a number in it."""
    s = text.strip()
    letters = sum(ch.isalpha() for ch in s if ch not in "eE×")
    return letters == 0 or (letters <= 2 and sum(ch.isdigit() for ch in s) >= 2)


def _related(a, b) -> bool:
    return a in b.get_family() or b in a.get_family()


def _glyphs_intersect(ga, gb, shrink: float):
    for (a0, a1, a2, a3), _ in ga:
        for (b0, b1, b2, b3), _ in gb:
            if a0 < b2 - shrink and b0 < a2 - shrink and a1 < b3 - shrink and b1 < a3 - shrink:
                return (max(a0, b0), max(a1, b1), min(a2, b2), min(a3, b3))
    return None


_CAPS: dict | None = None


def _cap_heights() -> dict:
    """Cap height per font point of the suite's Latin and Korean faces, measured once (units)."""
    global _CAPS
    if _CAPS is None:
        from .components.text import label
        from .style import FONT, KOREAN_FONT

        _CAPS = {"latin": label("H", 100, font=FONT)[0].height / 100,
                 "ko": label("H", 100, font=KOREAN_FONT)[0].height / 100}
    return _CAPS


# --- storyboards -------------------------------------------------------------------------------------

class Storyboard(Observer):
    """Saves the frame at each caption block's end and each chapter's last frame."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.frames: list[dict] = []
        self._plays_since = 0
        self._k = 0
        self._seen: set[bytes] = set()  # digests of the frames saved: a chapter's end is kept only if new

    def chapter_started(self, scene, key: str, number: int) -> None:
        super().chapter_started(scene, key, number)
        self._k = 0

    def played(self, scene, animations) -> None:
        self._plays_since += 1

    def caption_done(self, scene, text: str, start: float, end: float) -> None:
        self.capture(scene, text)

    def chapter_done(self, scene, key: str, number: int) -> None:
        if self._plays_since:
            self.capture(scene, "")

    def capture(self, scene, caption: str) -> None:
        from PIL import Image

        key = getattr(getattr(scene, "stage", None), "space_key", None)  # the corner key alone is no picture
        if not visible_leaves(scene, [m for m in scene.mobjects if m is not key]):
            return  # a blank moment between chapters (a card faded out, the stage cleared) is not a key frame

        self._plays_since = 0
        renderer = scene.renderer
        renderer.static_image = None
        type(renderer).update_frame(renderer, scene, ignore_skipping=True)
        pixels = renderer.get_frame()
        digest = hashlib.sha256(pixels.tobytes()).digest()
        if not caption and digest in self._seen:
            return  # a chapter ending on a frame already saved (the camera back over the grid) adds nothing
        self._seen.add(digest)
        self._k += 1
        path = self.folder / f"{self.chapter_number:02d}_{self.chapter}_{self._k:02d}.png"
        Image.fromarray(pixels).convert("RGB").save(path, compress_level=1)  # fast: these are previews
        self.frames.append({"file": path.name, "chapter": self.chapter, "time": round(float(renderer.time), 2),
                            "caption": caption})


def contact_sheet(frames: list[dict], folder: Path, title: str, columns: int = 4, width: int = 480) -> Path:
    """The storyboard's frames in a labelled grid (file name, time, the caption under each)."""
    from PIL import Image, ImageDraw

    font, small = _sheet_fonts()
    thumbs = [Image.open(folder / f["file"]).convert("RGB") for f in frames]
    if not thumbs:
        thumbs, frames = [Image.new("RGB", (width, width * 9 // 16))], [{"file": "(no frames)", "time": 0, "caption": ""}]
    h = round(width * thumbs[0].height / thumbs[0].width)
    # every caption whole, however long: the text band is as tall as the longest caption needs
    measure = ImageDraw.Draw(Image.new("RGB", (1, 1)))
    wrapped = [_wrap(f.get("caption", ""), measure, small, width) for f in frames]
    pad, text_h = 12, 28 + 18 * max([2] + [len(w) for w in wrapped])
    rows = math.ceil(len(thumbs) / columns)
    sheet = Image.new("RGB", (pad + columns * (width + pad), 48 + rows * (h + text_h + pad)), (24, 24, 24))
    draw = ImageDraw.Draw(sheet)
    font.draw(draw, (pad, 12), title, fill=(235, 235, 235))
    for k, (img, f) in enumerate(zip(thumbs, frames)):
        r, c = divmod(k, columns)
        x, y = pad + c * (width + pad), 48 + r * (h + text_h + pad)
        sheet.paste(img.resize((width, h)), (x, y))
        small.draw(draw, (x, y + h + 4), f"{f['file']}  {f['time']:.1f} s", fill=(255, 220, 90))
        for n, line in enumerate(wrapped[k]):
            small.draw(draw, (x, y + h + 24 + 18 * n), line, fill=(210, 210, 210))
    path = folder / "contact.png"
    sheet.save(path)
    return path


# DejaVu first: NanumGothic has an arrow (→) that draws as a stub at the sheet's sizes
SHEET_FACES = ("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "/usr/share/fonts/truetype/nanum/NanumGothic.ttf",
               "/usr/share/fonts/truetype/nanum/NanumMyeongjo.ttf")


class SheetFont:
    """The contact sheet's text face: DejaVu Sans, and what it lacks (Hangul) from NanumGothic,
    character by character, so no caption shows a missing-glyph box."""

    def __init__(self, size: int):
        from PIL import ImageFont

        self.faces = [ImageFont.truetype(p, size) for p in SHEET_FACES if os.path.exists(p)] or [ImageFont.load_default()]
        self._missing = [self._mask("\U0010fffd", f) for f in self.faces]  # what a face draws for a glyph it lacks
        self._memo: dict[str, object] = {}

    @staticmethod
    def _mask(ch, face):
        try:
            m = face.getmask(ch)
            return (m.size, bytes(m))
        except Exception:
            return None

    def face_for(self, ch: str):
        if ch not in self._memo:
            self._memo[ch] = next((f for f, miss in zip(self.faces, self._missing)
                                   if ch.isspace() or self._mask(ch, f) != miss), self.faces[0])
        return self._memo[ch]

    def runs(self, text: str):
        out: list[tuple[str, object]] = []
        for ch in text:
            f = self.face_for(ch)
            if out and out[-1][1] is f:
                out[-1] = (out[-1][0] + ch, f)
            else:
                out.append((ch, f))
        return out

    def length(self, draw, text: str) -> float:
        return sum(draw.textlength(t, font=f) for t, f in self.runs(text))

    def draw(self, draw, xy, text: str, fill) -> None:
        x, y = xy
        for t, f in self.runs(text):
            draw.text((x, y), t, fill=fill, font=f)
            x += draw.textlength(t, font=f)


def _sheet_fonts():
    return SheetFont(22), SheetFont(15)


def _wrap(text: str, draw, font, width: int) -> list[str]:
    lines, line = [], ""
    for word in text.split():
        trial = f"{line} {word}".strip()
        if font.length(draw, trial) <= width or not line:
            line = trial
        else:
            lines.append(line)
            line = word
    return lines + ([line] if line else [])


# --- playing a lesson with an observer ---------------------------------------------------------------

QUALITY_PIXELS = {"l": (854, 480), "m": (1280, 720), "h": (1920, 1080), "p": (2560, 1440), "k": (3840, 2160)}


_watched = 0  # lessons being played by play_watched now (the lint or a storyboard)


def watching() -> bool:
    """Whether a lesson is being played for the lint or a storyboard: what only the lint reads (a
    label's declared exception that is measured on every frame) is worth computing only then."""
    return _watched > 0


def play_watched(scene_cls, inputs, observer: Observer, *, pixels: tuple[int, int] = (192, 108)) -> object:
    """Play a lesson with every animation skipped to its end and `observer` listening; nothing is
    written but what the observer writes. Returns the scene."""
    from manim import tempconfig

    global _watched
    work = tempfile.mkdtemp(prefix=".attention-manim-review-")
    _watched += 1
    try:
        opts = {"media_dir": work, "disable_caching": True, "write_to_movie": False, "save_last_frame": False,
                "verbosity": "ERROR", "progress_bar": "none",
                "pixel_width": pixels[0], "pixel_height": pixels[1], "frame_rate": 15}
        with tempconfig(opts):
            scene = scene_cls(inputs, skip_animations=True)  # each play jumps to its end; time still runs
            scene.observer = observer
            renderer = scene.renderer
            # with animations skipped manim still rasterizes each play's end state (and its static
            # part): nothing here needs those frames, a storyboard rasterizes its own
            renderer.update_frame = lambda *a, **k: None
            renderer.save_static_frame_data = lambda *a, **k: None
            renderer.scene_finished = lambda *a, **k: None  # no movie to combine, no frame to save
            scene.render()
        return scene
    finally:
        _watched -= 1
        shutil.rmtree(work, ignore_errors=True)


@dataclass
class ReviewResult:
    scene: str
    lang: str
    model: str
    seconds: float
    video_seconds: float
    violations: list[Violation] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    skipped: str | None = None  # why the lesson does not take these inputs (in a run of several lessons)


def lint_scene(scene_cls, inputs, *, name: str, model: str) -> ReviewResult:
    start = time.perf_counter()
    linter = Linter(name, inputs.lang, model)
    scene = play_watched(scene_cls, inputs, linter)
    return ReviewResult(name, inputs.lang, model, time.perf_counter() - start, float(scene.renderer.time),
                        linter.violations)


def storyboard_scene(scene_cls, inputs, *, name: str, model: str, out: Path, quality: str = "l") -> ReviewResult:
    """Key frames of a lesson in OUT/storyboard/<scene>[.<lang>]/, written whole or not at all."""
    from .runner import check_output_dir, clip_stem

    start = time.perf_counter()
    base = check_output_dir(Path(out) / "storyboard")
    final = base / clip_stem(name, inputs.lang)
    work = Path(tempfile.mkdtemp(dir=base, prefix=f".{final.name}-storyboard-{os.getpid()}-"))
    try:
        board = Storyboard(work)
        scene = play_watched(scene_cls, inputs, board, pixels=QUALITY_PIXELS[quality])
        contact_sheet(board.frames, work, f"{name} · {inputs.lang} · {model}")
        if final.exists():
            shutil.rmtree(final)
        os.replace(work, final)
        files = [final / f["file"] for f in board.frames] + [final / "contact.png"]
        return ReviewResult(name, inputs.lang, model, time.perf_counter() - start, float(scene.renderer.time),
                            files=files)
    finally:
        shutil.rmtree(work, ignore_errors=True)


# --- many lessons, many languages -----------------------------------------------------------------

def review(kind: str, names: list[str], langs: list[str], *, model: str | None, options: tuple, out: Path,
           quality: str = "l", load=None, on_result=None) -> list[ReviewResult]:
    """Lint or storyboard each lesson in each language; each lesson on its own model unless `model`
    names one. Models load once. `on_result(result)` hears each as it finishes."""
    from .batch import Job, Worker
    from .registry import load_all

    from attention_manim.model.errors import UserError

    scenes = load_all()
    worker = Worker(load)
    results = []
    for name in names:
        cls = scenes[name]
        lesson_model = str(model or getattr(getattr(cls, "lesson", None), "model", None) or "toy")
        for lang in langs:
            label = "smollm2" if lesson_model == "smollm2" else Path(lesson_model).name
            try:
                inputs = worker.inputs(Job(scene=name, lang=lang, model=lesson_model, options=options))
                if kind == "lint":
                    res = lint_scene(cls, inputs, name=name, model=label)
                else:
                    res = storyboard_scene(cls, inputs, name=name, model=label, out=out, quality=quality)
            except UserError as e:
                if len(names) == 1:
                    raise  # the one lesson asked for: the user's mistake, said as such
                # one of many lessons that does not take this sentence or model (cross_attention wants two
                # languages, mlp a real model): said, and the others go on
                from .i18n import localized_error

                res = ReviewResult(name, lang, label, 0.0, 0.0, skipped=localized_error(e, lang)[0])
            results.append(res)
            if on_result:
                on_result(res)
    return results


# --- the narration script: what a teacher reads into a microphone ----------------------------------

def script_scene(scene_cls, inputs, *, name: str) -> dict:
    """Every caption block of a lesson, chapter by chapter, with its id, its start and end without a
    voice, the caption and its spoken form (render.py script)."""
    from .runner import chapter_title

    scene = play_watched(scene_cls, inputs, Observer())
    say = scene.say
    chapters: dict[str, dict] = {}
    for block in scene.stage.blocks:
        number, rest = block["id"].split("_", 1)
        key = rest.rsplit("_", 1)[0]
        ch = chapters.setdefault(block["id"].rsplit("_", 1)[0], {
            "number": int(number), "key": key, "title": chapter_title(say, key), "blocks": []})
        ch["blocks"].append({**{k: block[k] for k in ("id", "start", "end", "text")},
                             "spoken": block.get("spoken") or say.spoken(block["text"])})
    return {"scene": name, "lang": inputs.lang, "duration": round(float(scene.renderer.time), 3),
            "chapters": list(chapters.values())}
