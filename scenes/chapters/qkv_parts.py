"""Pieces the query, key and values chapters share: rows of word slots with columns under them,
short arrows, vectors drawn from a plan's window, hand-on groups and the camera's zoom."""

from __future__ import annotations

import numpy as np

from manim import DOWN, LEFT, ORIGIN, RIGHT, UP, Arrow, Brace, VGroup, config

from ..components.color_scale import ColorScale
from ..components.text import label
from ..components.vectors import VectorColumn, ellipsis_dots, math
from ..components.word_boxes import WordBoxes
from ..plans.qkv import Shown
from ..stage import Stage

SLOT_WIDTH_MAX = 1.65


def short(token: str, n: int = 11) -> str:
    return token if len(token) <= n else token[: n - 1] + "…"


def slot_row(tokens, slots, theme, *, slot_width: float | None = None, font_size: float = 32,
             centre_x: float = 0.0, width: float = 13.4) -> tuple[WordBoxes, list[float]]:
    """Word boxes for the shown tokens (None: an ellipsis slot), one per fixed-width slot, so that
    columns drawn under the words never collide however short the words are. The slots share
    `width` (at most SLOT_WIDTH_MAX each) unless `slot_width` is given. Returns the boxes and each
    slot's x: move the row only vertically (`set_y`) to keep them valid."""
    slot_width = slot_width or min(SLOT_WIDTH_MAX, width / len(slots))
    boxes = WordBoxes([short(tokens[j]) if j is not None else "…" for j in slots], theme=theme,
                      font_size=font_size)
    widest = max(boxes.box(s).width for s in range(len(slots)))
    gap = 0.25  # between the two widest neighbours: words that fill their slots must not touch
    if widest > slot_width - gap:
        boxes.scale((slot_width - gap) / widest)
    n = len(slots)
    xs = [centre_x + (s - (n - 1) / 2) * slot_width for s in range(n)]
    for s, x in enumerate(xs):
        boxes[s].set_x(x)
        if slots[s] is None:  # invisible for good, filled with the background
            boxes.box(s).set_stroke(width=0, opacity=0).set_fill(color=theme.background, opacity=0)
            boxes.word(s).set_fill(color=theme.dim)
    boxes.shown = list(slots)
    boxes.slot_of = {j: s for s, j in enumerate(slots) if j is not None}
    boxes.xs = xs
    return boxes, xs


def down_arrow(top: float, bottom: float, x: float, color: str, name: str | None = None,
               name_color: str | None = None, font_size: float = 22) -> VGroup:
    """A short vertical arrow, optionally labelled by a matrix name on its right (E⃗ → W → Q⃗)."""
    arr = Arrow([x, top, 0], [x, bottom, 0], buff=0, color=color, stroke_width=3,
                max_tip_length_to_length_ratio=0.25, max_stroke_width_to_length_ratio=8)
    grp = VGroup(arr)
    if name:
        grp.add(math(name, font_size=font_size, color=name_color or color).next_to(arr, RIGHT, buff=0.06))
    return grp


def side_arrow(left: float, right: float, y: float, color: str, tip: float = 0.3) -> Arrow:
    return Arrow([left, y, 0], [right, y, 0], buff=0, color=color, stroke_width=2.5,
                 max_tip_length_to_length_ratio=tip, max_stroke_width_to_length_ratio=8)


def dots_column(x: float, top: float, bottom: float, color: str) -> VGroup:
    """A horizontal ellipsis repeated down a hidden slot."""
    n = 3
    return VGroup(*(ellipsis_dots(RIGHT, color=color).move_to([x, top + (bottom - top) * (k + 0.5) / n, 0])
                    for k in range(n)))


def entry_kind(values, window: Shown) -> str:
    """One decimal ("vec"), or two ("signed2") where one would write most of the entries `window` shows
    as 0.0: a real model's normalised head input (±0.1) drawn as zeros cannot be seen to make a query of +2.3."""
    v = np.asarray(values, dtype=float)
    shown = np.abs(np.concatenate([v[:window.head], v[len(v) - window.tail:] if window.tail else v[:0]]))
    return "signed2" if shown.size and float(np.mean(shown < 0.05)) > 0.5 else "vec"


def vector(values, window: Shown, **kwargs) -> VectorColumn:
    """A VectorColumn of the real `values` showing exactly the plan's window."""
    return VectorColumn(values, head=window.head, tail=window.tail, **kwargs)


def length_brace(stage: Stage, col: VectorColumn, count: int, font_size: float = 24, buff: float = 0.1,
                 right_limit: float = 6.9) -> VGroup:
    """A brace beside a column naming its real length ("64 numbers"), on the right unless that
    would leave the frame."""
    th = stage.theme
    text = label(stage.say("qkv.units.numbers", count=count), font_size=font_size, color=th.dim)
    brace = Brace(col.brackets, direction=RIGHT, color=th.dim, buff=buff)
    text.next_to(brace, RIGHT, buff=0.08)
    if text.get_right()[0] > right_limit:
        brace = Brace(col.brackets, direction=LEFT, color=th.dim, buff=buff)
        text.next_to(brace, LEFT, buff=0.08)
    return VGroup(brace, text)


BRACE_ON_SCREEN = 26  # the font size a length brace's words read at on screen, however close the camera


def brace_words_for(brace_group: VGroup, frame_width: float, font_size: float = BRACE_ON_SCREEN) -> VGroup:
    """Size a `length_brace`'s words to read at `font_size` on a camera frame `frame_width` wide, next to their
    brace (a close-up magnifies: values' "64 numbers", built at 18 in a picture scaled to the panel, read at
    about 40 px under its close-up, twice the query's; review 53)."""
    brace, words = brace_group
    want = label(words.original_text, font_size * frame_width / config.frame_width).height
    side = LEFT if words.get_center()[0] > brace.get_center()[0] else RIGHT
    words.scale(want / words.height, about_edge=side)
    return brace_group


def matrix_colour_key(stage: Stage, W, right: float, centre, width: float) -> VGroup:
    """What a weight matrix's entries' colours mean, under W: its smallest to largest entry, at the close-up's
    scale (the camera frame `width` wide about `centre`) or a little over, within W's left and `right` (the
    vector beside it), 0.4 over the frame's foot (review 52: 10 px from the edge); its words on the bar's line,
    else over it. Where none fits, no key (an empty group: the caption says it). Never shrunk to fit: its
    figures would read under 14 px (review 52, on SmolLM2). Review 51: blue and red entries with no key."""
    zoom = width / config.frame_width
    bottom = centre[1] - width * config.frame_height / config.frame_width / 2
    room = min(W.brackets.get_right()[0], right - 0.2 * zoom) - W.brackets.get_left()[0]
    for beside, k in ((True, 1.2), (True, 1.0), (False, 1.2), (False, 1.0)):
        trial = ColorScale(W.values.min(), W.values.max(), scale=W.scale_ref,
                           caption=stage.say("common.colour.matrix_scale"), theme=stage.theme, kind="vec")
        if beside:
            trial.caption.next_to(trial.bar, LEFT, buff=0.25)
        trial.scale(k * zoom).next_to(W.brackets, DOWN, buff=0.3 * zoom).align_to(W.brackets, LEFT)
        if trial.width <= room and trial.get_bottom()[1] >= bottom + 0.4 * zoom:
            return trial
    return VGroup()


def token_group(mobs_by_token: dict) -> VGroup:
    """A hand-on group: the mobjects in the given (sentence) order, `.tokens` their token indices."""
    group = VGroup(*mobs_by_token.values())
    group.tokens = list(mobs_by_token)
    group.by_token = dict(mobs_by_token)
    return group


def settle(stage: Stage, group: VGroup) -> VGroup:
    """Put `group` on stage as one mobject (its parts may have been animated in one by one), so
    that `stage.has(...)` sees it and the next chapter can take it whole."""
    stage.remove(*group.submobjects)
    stage.add(group)
    return group


def zoom_frame(mob, min_width: float = 9.0, pad: float = 1.12, up: float = 0.0) -> tuple[np.ndarray, float]:
    """The camera frame's centre and width that `zoom_on` takes (a piece placed in that frame ahead of it)."""
    return mob.get_center() + np.array([0.0, up, 0.0]), max(mob.width * pad, min_width)


def up_clear_of(mob, above, up: float = 0.0, min_width: float = 9.0, pad: float = 1.12) -> float:
    """The `up` for zoom_frame(mob, ...) that keeps `above` (a row over `mob`) wholly out of the close-up: its
    frame's top under `above`'s bottom where `mob` still fits under it (review 53: the word row's lower edge
    peeked in along the frame's top, a sliver of boxes); else `up` as given."""
    centre, width = zoom_frame(mob, min_width, pad, up)
    half = width * config.frame_height / config.frame_width / 2
    top, limit = centre[1] + half, above.get_bottom()[1] - 0.05
    if top <= limit or top >= above.get_top()[1] + 0.05:
        return up
    lowered = up - (top - limit)
    return lowered if mob.get_top()[1] + 0.1 <= limit and mob.get_bottom()[1] - 0.1 >= limit - 2 * half else up


def zoom_on(stage: Stage, mob, min_width: float = 9.0, pad: float = 1.12, up: float = 0.0):
    centre, width = zoom_frame(mob, min_width, pad, up)
    return stage.camera_frame.animate.set(width=width).move_to(centre)


TAG_OVER_SYMBOL = 1.4  # a close-up's word tag: this many times its vector symbol's height


def word_tag(stage: Stage, token: str, over, color: str, font_size: float = 24) -> WordBoxes:
    """The word a close-up's vector belongs to, as a word box over it (`over`: the vector's symbol): with
    the sentence out of the frame, "E⃗₃" alone did not say whose vector it was (review 48)."""
    tag = WordBoxes([token], theme=stage.theme, font_size=font_size)
    tag.highlight(0, color)
    tag.scale(TAG_OVER_SYMBOL * over.height / tag.height)  # at the close-up's scale, as tall as its symbol allows
    return tag.next_to(over, UP, buff=0.4 * over.height)


def camera_home(stage: Stage, run_time: float = 1.0):
    """The camera back at its default place and size (where every chapter starts and ends)."""
    return stage.camera_frame.animate(run_time=run_time).set(width=config.frame_width).move_to(ORIGIN)



def drop_below(stage: Stage, y: float) -> None:
    """Forget everything drawn below `y` (a picture the camera visited under the frame)."""
    stage.remove(*[m for m in stage.mobjects if m.get_center()[1] < y])
