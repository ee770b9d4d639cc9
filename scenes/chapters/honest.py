"""The honest note of a real head (scenes/plans/honesty.py): what the head really does with the
word the chapter follows, said in the caption and written on screen, wrapped into a region."""

from __future__ import annotations

from manim import DOWN, LEFT, UP, FadeIn, FadeOut, SurroundingRectangle, VGroup

from ..components.korean_face import mixed_face
from ..components.text import text_baseline
from ..i18n import plain_text
from ..plans.honesty import Honesty, note_text
from ..stage import Region, Stage


GLUED_SIGNS = frozenset({"≥", "≤", "=", "≈", "×", "·", "→", "+", "−", "<", ">"})
# a relation or an operation between two terms stays with both: no line starts with "= 0.0" (review 44, ko)
BOUND_SIGNS = GLUED_SIGNS - {"·"}
# an arrow ends its line rather than starting one: "adjectives →" / "nouns" ("→ nouns" read as a note of its
# own, review 46), and a role still breaks where a corner is narrow
TRAILING_SIGNS = frozenset({"→"})


def wrapped(text: str, width: float, font_size: float, color: str, max_lines: int = 4, setter=None,
            break_after: str = "") -> VGroup:
    """`text` as lines of at most `width` (scene units), broken at spaces, left-aligned; scaled
    down when even that needs more than `max_lines` lines. A lone sign ("≥", "=", "×") stays with
    the word after it: a line never ends on "≥" with its number alone on the next; a relation or an
    operation ("=", "−") stays with the word before it too. `setter` sets a
    line (default `mixed_face`: a Korean line's figures and signs in the serif; beyond_parts passes the prose
    setter). A text too
    wide for one line breaks after `break_after` (": ") where both halves fit a line ("Context size: layer
    13 · head 2" broke before "· head 2")."""
    setter = setter or mixed_face
    if break_after and break_after in text and max_lines >= 2 and setter(text, font_size, color).width > width:
        first, rest = text.split(break_after, 1)
        halves = [first + break_after.rstrip(), rest]
        if all(setter(h, font_size, color).width <= width for h in halves):
            return even_lines(VGroup(*(setter(h, font_size, color) for h in halves)))
    words: list[str] = []
    glue = False  # the word before was a sign that keeps the next word
    for w in text.split(" "):
        if glue or (words and w in BOUND_SIGNS):
            words[-1] = f"{words[-1]} {w}"
        else:
            words.append(w)
        glue = w in GLUED_SIGNS and w not in TRAILING_SIGNS
    lines = _break(words, width, font_size, color, setter)
    if 1 < len(lines) <= max_lines and lines[-1] in words:
        # a last line of one word (an orphan, or a sign with its number: "≥ 0.97"): the narrowest
        # width that still needs no more lines evens them out
        for narrower in (width * k / 20 for k in range(19, 11, -1)):  # 95% down to 60%
            trial = _break(words, narrower, font_size, color, setter)
            if len(trial) != len(lines):
                break
            lines = trial
    if len(lines) > max_lines:
        return wrapped(text, width * 1.25, font_size, color, max_lines, setter)
    group = even_lines(VGroup(*(setter(line, font_size, color) for line in lines)))
    if group.width > width:
        group.scale_to_fit_width(width)
    return group


def even_lines(group: VGroup, buff: float = 0.12) -> VGroup:
    """Lines one under another, left-aligned, their baselines evenly spaced: at the widest gap that boxes `buff`
    apart would give (review 49, pt: a line without descenders stood closer to the next than the others)."""
    group.arrange(DOWN, buff=buff, aligned_edge=LEFT)
    if len(group) > 1:
        bases = [text_baseline(line) for line in group]
        pitch = max(a - b for a, b in zip(bases, bases[1:]))
        for k, line in enumerate(group):
            line.shift(UP * (bases[0] - k * pitch - bases[k]))
    return group


def _break(words: list[str], width: float, font_size: float, color: str, setter) -> list[str]:
    """`words` greedily into lines no wider than `width` (a word wider than that alone on its line)."""
    lines: list[str] = []
    current = ""
    for w in words:
        trial = f"{current} {w}" if current else w
        if current and setter(trial, font_size, color).width > width:
            lines.append(current)
            current = w
        else:
            current = trial
    if current:
        lines.append(current)
    return lines


def honest_note(stage: Stage, chapter: str, honesty: Honesty | None, tokens, area: Region,
                font_size: float = 22, hold: float = 1.5, keep: bool = True, max_lines: int = 3):
    """Say and show the note in `area` (on an opaque plate), and leave it (keep) or take it away.
    Nothing happens when the head does what the chapter says, or when an earlier chapter of the
    lesson said the very same. Records it in stage.drawn[chapter]."""
    if honesty is None:
        return None
    text = note_text(stage.say, honesty, tokens)
    if text is None or any(said == plain_text(text) for said, _ in stage.captions):  # said once in this lesson is enough
        return None
    th = stage.theme
    lines = wrapped(text, area.width - 0.4, font_size, th.text, max_lines)
    plate = SurroundingRectangle(lines, buff=0.18, corner_radius=0.08, color=th.dim, stroke_width=1.5)
    plate.set_fill(th.background, opacity=0.94)
    note = VGroup(plate, lines)
    area.fit(note)
    stage.drawn.setdefault(chapter, {})["honest"] = note
    stage.drawn[chapter]["honest_text"] = text
    with stage.narrating(text):
        stage.play(FadeIn(note, shift=UP * 0.1), run_time=0.6)
        stage.wait(hold)
    if not keep:
        stage.play(FadeOut(note), run_time=0.4)
        stage.remove(note)
    return note
