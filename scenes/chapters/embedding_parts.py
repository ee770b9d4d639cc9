"""Pieces the embedding chapters share: direction names in the viewer's language, arcs of context
with their weights, a 3-D space placed in a region, framed notes."""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
from manim import DOWN, LEFT, PI, RIGHT, UP, SurroundingRectangle, VGroup, config

from ..components.context_arcs import ContextArcs
from ..components.clearance import StrokeField
from ..components.space3d import EmbeddingSpace
from ..components.korean_face import mixed_face
from ..components.text import baseline_row, label, number, text_baseline
from ..i18n import Say
from ..stage import Region


def direction_name(say: Say, name: str, words: Sequence[str] = ()) -> str:
    """A named direction of the model as the viewer reads it. Direction names are the model's data:
    the catalog translates the ones it knows (embeddings.directions.<name>); any other name (a
    model's own direction, "PC1") is shown as the model spells it. A direction named for one of
    `words` (the sentence's tokens) says that word as the model writes it, in every language, after its
    name where the language names it otherwise: "mago (wizard)". Beside the token "blue", the Portuguese
    "na direção "azul"" read as another word (review 48); "wizard" alone beside "dano" and "realeza" read as
    a name left untranslated (review 49)."""
    key = f"embeddings.directions.{name}"
    named = say(key) if say.has(key) else name
    for w in words:
        word = w.strip().lstrip("␣")
        if word.lower() == name.lower():
            return word if named.lower() == word.lower() else say("common.direction_for_word", name=named, word=word)
    return named


def mixed_label(text: str, font_size: float, color: str):
    """A line of prose whose Hangul words are set in the Korean face and everything else (ΔE, E′,
    tokens, numbers) in the serif, on one baseline: symbols keep their shapes in every language. A catalog's
    $…$ is typeset math (review 46: "the n × n grid" beside italic n's in the formulas)."""
    if "$" in text:
        from ..components.rich_text import rich

        return rich(text, font_size, color)
    return mixed_face(text, font_size, color)


VECTOR_WORD = re.compile(r"(?<![A-Za-z0-9′])(ΔE′|ΔE|E′|E)(?![A-Za-z0-9′])")  # (a Korean particle may follow)


def vector_label(text: str, font_size: float, color: str):
    """`mixed_label`, with the vectors it names (E, ΔE, E′) typeset as the tables and the space write them,
    E⃗, ΔE⃗, E⃗′ (review 44: "E′ (miniature)" and a "ΔE" footer beside a table of E⃗′ and ΔE⃗ read as other
    things). Words like "Eiffel" are left alone."""
    from ..components.vectors import math, symbol_source

    parts = VECTOR_WORD.split(text)
    if len(parts) == 1:
        return mixed_label(text, font_size, color)
    pieces, gaps = [], []
    for k, part in enumerate(parts):
        if k % 2:  # a vector's name
            delta, prime = part.startswith("Δ"), part.endswith("′")
            pieces.append(math(symbol_source("E", prime=prime, delta=delta), font_size * 1.3, color))
            gaps.append(0.1 if parts[k - 1][-1:].isspace() else 0.03)
        elif part.strip():
            pieces.append(mixed_label(part.strip(), font_size, color))
            gaps.append(0.1 if part[:1].isspace() else 0.03)
    row = baseline_row(pieces[:1])
    for piece, gap in zip(pieces[1:], gaps[1:]):
        piece.next_to(row, RIGHT, buff=gap)
        piece.shift(UP * (text_baseline(pieces[0]) - text_baseline(piece)))
        row.add(piece)
    row.original_text = text  # what it says, for the lint and the tests
    return row


def fit_into(mob, width: float, height: float):
    """Scale `mob` down (never up) to fit a width × height box."""
    if mob.width > width:
        mob.scale_to_fit_width(width)
    if mob.height > height:
        mob.scale_to_fit_height(height)
    return mob


def fit_alike(mobs, width: float, height: float):
    """Scale every one of `mobs` by one factor (never up), the largest that fits each into width × height:
    labels of one axis at one size, not each long word shrunk alone (review 44: flash's "␣creature")."""
    k = min([1.0] + [min(width / m.width if m.width > 0 else 1.0, height / m.height if m.height > 0 else 1.0)
                     for m in mobs])
    for m in mobs:
        m.scale(k)
    return k


def arc_angle(sources: Sequence[np.ndarray], target: np.ndarray, max_rise: float, cap: float = PI / 2) -> float:
    """The bend (radians) for arcs from `sources` into `target` such that the longest one rises
    at most `max_rise` above its chord (an arc of angle θ over a chord c rises c/2·tan(θ/4))."""
    chords = [float(np.hypot(*(np.asarray(s)[:2] - np.asarray(target)[:2]))) for s in sources]
    c = max(chords + [1e-6])
    return float(min(cap, 4 * np.arctan(2 * max_rise / c)))


LABEL_ROOM = 0.08  # the room a weight label keeps from every arc's edge (the lint asks for at least 0.04)
SELF_GAP = 0.16  # the gap between a word's own weight and "self" after it, at size 18


def word_weights(say: Say, theme, weights: Sequence[float], words: Sequence, focus: int,
                 font_size: float = 22, smallest: float = 18, after=None) -> VGroup:
    """The weight each word before the focus (and the focus itself, "0.16 self") gives into the focus word,
    under the word, on one line: which weight belongs to which arc is read from the word it leaves
    (review 46: figures set over crossing arcs were hard to pair with theirs). Every word of the arcs is
    labelled, so the line sums to 1. One size for all, the largest (down to `smallest`) at which each
    figure stays within its word's reach (half the gap to the next word on either side). `after`: the box of the
    word after the focus, if any: "self" then stands under the focus's figure, not on under that word (review 52:
    pt's "0,00 em si mesma" under "mole" ran on under "of" and read as its label)."""
    boxes = list(words)[: focus + 1]
    reach = []  # the x-range a word's figure may take: its box, widened to half the gap to each neighbour
    for j, b in enumerate(boxes):
        left = b.get_left()[0] - (b.get_left()[0] - boxes[j - 1].get_right()[0]) / 2 + 0.05 if j else b.get_left()[0] - 0.3
        following = boxes[j + 1] if j + 1 < len(boxes) else after
        right = (b.get_right()[0] + (following.get_left()[0] - b.get_right()[0]) / 2 - 0.05 if following is not None
                 else b.get_right()[0] + 1.2)  # the focus's "self" may run on where no word follows
        reach.append((left, right))
    size = font_size
    while True:
        figures = [number(float(w), "weight", font_size=size, color=theme.text) for w in weights[: focus + 1]]
        own = label(say("embeddings.self"), font_size=size, color=theme.dim)
        if after is None:  # on after its figure
            last = baseline_row([figures[-1], own], buff=SELF_GAP * size / 18)  # (at 0.06, "0.01self": review 52)
            wide = last
        else:  # under its figure, on a line of its own: only the figure keeps to the word's reach
            last = VGroup(figures[-1], own.next_to(figures[-1], DOWN, buff=0.08 * size / 18))
            wide = figures[-1]
        parts = figures[:-1] + [last]
        if size <= smallest or all(p.width <= r - l for p, (l, r) in zip(figures[:-1] + [wide], reach)):
            break
        size -= 1
    top = min(b.get_bottom()[1] for b in boxes) - 0.06
    base, edge = None, -np.inf
    for j, (p, b, (l, r)) in enumerate(zip(parts, boxes, reach)):
        x = min(max(b.get_center()[0], l + p.width / 2), r - p.width / 2)
        if j == focus and after is not None:  # the figure under its word, "self" under the figure (both centred)
            x = min(max(b.get_center()[0], l + figures[-1].width / 2), r - figures[-1].width / 2)
        elif j == focus:  # the figure under its word, "self" after it
            x = min(max(b.get_center()[0] + (p.width - figures[-1].width) / 2, l + p.width / 2), r - p.width / 2)
        # at the smallest size a figure wider than its short word's reach moves right, clear of the one before
        w = figures[-1].width if j == focus and after is not None else p.width
        x = max(x, edge + 0.1 + w / 2)
        edge = x + w / 2
        p.move_to([x, 0, 0])
        fig = figures[j]
        if base is None:
            p.shift(UP * (top - fig.get_top()[1]))
            base = text_baseline(fig)
        else:
            p.shift(UP * (base - text_baseline(fig)))
    out = VGroup(*parts)
    out.figures = figures
    out.font_size = size
    return out


def self_weight(say: Say, theme, weight: float, target, font_size: float = 22, arcs: ContextArcs | None = None,
                beside: bool = False) -> VGroup:
    """The weight a word keeps on itself (it has no arc), above the word: "0.12 self"; clear of the
    ends of `arcs` coming into the word (beside them when they take the space above it). `beside`:
    to the word's right on its own line first (words on a line above would claim a label above)."""
    n = number(weight, "weight", font_size=font_size, color=theme.text).next_to(target, UP, buff=0.08)
    word = label(say("embeddings.self"), font_size=font_size, color=theme.dim)  # as large as its figure (14/18 read as 12 px)
    out = VGroup(n, word.next_to(n, RIGHT, buff=SELF_GAP * font_size / 18))
    top, right = target.get_top(), target.get_right()
    right_mid = [right[0] + 0.12 + out.width / 2, target.get_center()[1], 0]
    if beside:
        out.move_to(right_mid)
    strokes = [a for a, _ in arcs.drawn()] if arcs is not None else []
    if strokes:
        from ..components.clearance import first_clear
        from ..review import clear_of

        up = top[1] + 0.08 + out.height / 2
        down = target.get_bottom()[1] - 0.08 - out.height / 2
        # over the word, then under it; over the next word only last (it read as that word's weight)
        spots = [[top[0], up, 0], [right[0] - out.width / 2, up, 0], [top[0], down, 0],
                 [right[0] + 0.1 + out.width / 2, up, 0], right_mid]
        if beside:
            spots = [right_mid, *spots[:-1]]
        out.move_to(first_clear(out, spots, strokes, LABEL_ROOM))
        clear_of(out, strokes)
    return out


def framed(lines: Sequence[str] | VGroup, theme, color: str, font_size: float = 20) -> VGroup:
    """Lines of text, left-aligned, in a rounded frame on an opaque background (`lines` as strings, or
    as labels already laid out, e.g. by `honest.wrapped`)."""
    text = lines if isinstance(lines, VGroup) else VGroup(
        *(label(t, font_size=font_size, color=theme.text) for t in lines)).arrange(DOWN, aligned_edge=LEFT, buff=0.1)
    frame = SurroundingRectangle(text, color=color, buff=0.15, stroke_width=2, corner_radius=0.08)
    frame.set_fill(theme.background, opacity=0.92)
    return VGroup(frame, text)


TIP_LABEL_ROOM = 0.65  # how far below (or above) its tip an arrow's label reaches (frame units)


def placed_space(trace, say: Say, theme, axes: Sequence[str], fit: np.ndarray, view: tuple[float, float],
                 box: Region, extent: float = 3.0, font_size: float = 24, max_scale: float = 1.8,
                 axis_text: Sequence[str] | None = None) -> EmbeddingSpace:
    """An EmbeddingSpace on `axes` (axis names in the viewer's language, or `axis_text`), sized to
    the vectors `fit`, seen from `view` (phi, theta), scaled and centred so that its axes and their
    names fill `box`."""
    space = EmbeddingSpace(trace, list(axes), fit_to=fit, theme=theme, extent=extent, font_size=font_size,
                           phi=view[0], theta=view[1], negative="auto",
                           axis_text=list(axis_text) if axis_text else [direction_name(say, n, trace.tokens) for n in axes])
    def bounds():
        """The box around the axes, their names and the tips of the fitted vectors (a vector with
        several negative coordinates reaches beyond every axis line), with room for the label an
        arrow carries beside its tip (labels keep their size when the space scales)."""
        whole = VGroup(space.axis_lines, space.axis_labels)
        tips = [space.point(c) for c in space.coords(np.asarray(fit, float).reshape(-1, space.basis.shape[0]))]
        pad = np.array([0.0, TIP_LABEL_ROOM, 0.0])
        lo = np.min([whole.get_corner(DOWN + LEFT)] + [t - pad for t in tips], axis=0)
        hi = np.max([whole.get_corner(UP + RIGHT)] + [t + pad for t in tips], axis=0)
        return lo, hi

    total = 1.0
    for _ in range(4):  # the label room does not scale with the space: settle in a few steps
        lo, hi = bounds()
        k = min(box.width / (hi[0] - lo[0]), box.height / (hi[1] - lo[1]), max_scale / total)
        if abs(k - 1) < 0.01:
            break
        space.scale(k, about_point=space.point(np.zeros(3)))
        total *= k
        space._place_labels()
    lo, hi = bounds()
    space.shift(box.center - (lo + hi) / 2 * np.array([1.0, 1.0, 0.0]))
    fw, fh = config.frame_width / 2 - 0.15, config.frame_height / 2 - 0.15
    # a label moved out of another's way (or off an axis) stays in the frame, and on the space's side
    # of it: not over the notes and the table beside the space, nor up among the sentence's words above it
    # (review 37: "E′ (eiffel)" slid onto the word "eiffel")
    space.label_bounds = (max(box.left - 0.3, -fw), -fh, fw, min(box.top + 0.3, fh))
    space._place_labels()
    return space


def room_left_of(space: EmbeddingSpace, margin: float = 0.3) -> float:
    """The x left of which nothing of the space (axes, their names, arrow labels) is drawn."""
    return VGroup(space.axis_lines, space.labels).get_left()[0] - margin


def label_boxes_turned(space: EmbeddingSpace, turns: Sequence[float]) -> list[tuple[float, float, float, float]]:
    """The boxes (x0, y0, x1, y1) of the space's labels at each of `turns` (angles as given to
    `space.rotation`): the space is turned there, measured and turned back."""
    out = []
    for angle in turns:
        o, M = space._frame()
        axis = M[:, 2] / np.linalg.norm(M[:, 2])
        space.rotate(-angle, axis=axis, about_point=o)  # as `space.rotation(angle)` turns it
        space._place_labels()
        for lab in space.labels:
            lo, hi = lab.get_corner(DOWN + LEFT), lab.get_corner(UP + RIGHT)
            out.append((float(lo[0]), float(lo[1]), float(hi[0]), float(hi[1])))
        space.rotate(angle, axis=axis, about_point=o)
        space._place_labels()
    return out


def axis_lines_turned(space: EmbeddingSpace, turns: Sequence[float]) -> list:
    """Copies of the space's axis lines as they stand at each of `turns` (as `label_boxes_turned`)."""
    out = []
    for angle in turns:
        o, M = space._frame()
        axis = M[:, 2] / np.linalg.norm(M[:, 2])
        out += [line.copy().rotate(-angle, axis=axis, about_point=o) for line in space.axis_lines]
    return out


def clear_at(space: EmbeddingSpace, angle: float, beside: Sequence) -> bool:
    """Whether the space turned by `angle` keeps its axis lines (0.1 off) and its labels clear of the
    mobjects `beside` it (a table, notes)."""
    from ..components.clearance import box_of, clearance

    lines = axis_lines_turned(space, (angle,))
    labels = label_boxes_turned(space, (angle,))
    for m in beside:
        x0, y0, x1, y1 = box_of(m)
        if clearance(np.array([[x0, y0, x1, y1]]), lines) < 0.1:
            return False
        if any(a < x1 and c > x0 and b < y1 and d > y0 for a, b, c, d in labels):
            return False
    return True


# --- the words of the context chapters: catalog sentences chosen by the plan's data ----------------

CONTEXT = "embeddings.context"


def attention_caption(say: Say, phrase) -> str:
    """"“mole” puts 0.99 on “shrew”": the context words with the largest real weights."""
    a, word = phrase.attention, say.quote(phrase.tokens[phrase.focus])
    if a.kind in ("first", "self"):
        return say(f"{CONTEXT}.attention_{a.kind}", word=word, weight=a.self_weight)
    params = {}
    for n, (token, w) in enumerate(a.keys):
        params[f"k{n}"], params[f"w{n}"] = say.quote(token), w
    return say(f"{CONTEXT}.attention_{len(a.keys)}", word=word, **params)


def delta_caption(say: Say, key: str, terms, coords, names, spec: str = "+.1f", **params) -> str:
    """`key`_<number of terms>: a change named by its largest components ("+8.0 along “animal”"), each
    written to `spec` (as the screen writes it) the language's way. `names` are the axes' names as the
    screen writes them, quoted (review 35: "no eixo pequeno" read as "on the short axis", beside an axis
    the screen names "small")."""
    for n, k in enumerate(terms):
        params[f"a{n}"], params[f"v{n}"] = say.quote(names[k]), say.number(float(coords[k]), spec)
    return say(f"{key}_{len(terms)}", **params)


def tag_text(say: Say, tag) -> str:
    """The E′ arrow's label: the context words it drew from ("E′ (shrew)"), or alone."""
    return say(f"{CONTEXT}.tag_{len(tag)}", **{f"w{n}": t for n, t in enumerate(tag)})


def causal_lines(say: Say, phrase) -> list[str]:
    """The lines of the causal note: what the focus word can use, and what it cannot."""
    c, word = phrase.causal, say.quote(phrase.tokens[phrase.focus])
    after = say.quote(c.after)
    if not c.before:
        text = say(f"{CONTEXT}.causal_alone", word=word, after=after)
    elif len(c.before) == 1:
        text = say(f"{CONTEXT}.causal_one", word=word, before=say.quote(c.before[0]), after=after)
    else:
        text = say(f"{CONTEXT}.causal_many", word=word, count=len(c.before), after=after)
    return text.split("\n")


SPECK = 0.3  # a ΔE arrow drawn shorter than this (units) is left unnamed: its name would point at nothing


def speck_free(space: EmbeddingSpace, E, E2, text):
    """`text`, the ΔE arrow's name, unless the arrow from E to E2 is drawn shorter than SPECK: then
    None (review 36: "ΔE⃗" over a 5-px speck on SmolLM2; the table and the caption give its values)."""
    drawn = space.point(space.coords(E2)) - space.point(space.coords(E))
    return text if float(np.linalg.norm(drawn[:2])) >= SPECK else None


AXIS_NAME_CLEAR = 0.8  # an axis's end this far from every refined E′ counts as clear of them (`clearest_turn`)


def clearest_turn(space: EmbeddingSpace, arrows, turns: Sequence[float]) -> float:
    """Of `turns` (angles as given to `space.rotation`), the one where `arrows` (the refined E′s) stand
    furthest apart on screen: the smallest angle between two of them, and the most foreshortened
    one's share of its length (review 34: mole's turn pointed "animal" into the screen, and E′ (shrew)
    shrank to a stub beside E′ (biopsy), while the caption said each had moved its own way)."""
    def spread(angle: float) -> float:
        o, M = space._frame()
        axis = M[:, 2] / np.linalg.norm(M[:, 2])
        before = [a.end_point() - a.start_point() for a in arrows]
        space.rotate(-angle, axis=axis, about_point=o)  # as `space.rotation(angle)` turns it
        after = [a.end_point() - a.start_point() for a in arrows]
        # an axis's end (its name stands there) away from every arrow: beside one, the axis's name reads as
        # the arrow's (review 35: "Paris" by E′ (alone), whose Paris is 0.0)
        shafts = StrokeField().add_segments(np.array([[a.start_point()[:2], a.end_point()[:2]] for a in arrows]), 0.0)
        near = min((shafts.room([*e.get_center()[:2], *e.get_center()[:2]]) if arrows else AXIS_NAME_CLEAR
                    for e in space._axis_ends), default=AXIS_NAME_CLEAR)
        space.rotate(angle, axis=axis, about_point=o)
        flat = [v[:2] for v in after]
        share = min(np.linalg.norm(f) / max(np.linalg.norm(b), 1e-9) for f, b in zip(flat, before))
        apart = min((np.arccos(np.clip(np.dot(u, v) / max(np.linalg.norm(u) * np.linalg.norm(v), 1e-9), -1, 1))
                     for i, u in enumerate(flat) for v in flat[i + 1:]), default=np.pi)
        return min(share, apart / (np.pi / 4), near / AXIS_NAME_CLEAR)  # 45° apart counts as fully apart

    return max(turns, key=spread)
