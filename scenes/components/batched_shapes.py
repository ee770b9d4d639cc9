"""Many shapes drawn as one VMobject: outline point arrays, slots and tweens that re-pour them.

Why. Under Cairo, a frame costs about 1 ms of Python per *moving* mobject, whatever its size
(see design/manim-notes.md, "Speed"): a 64×64 grid of separate squares, dots or numbers takes
seconds per second of video, while the same shapes as one VMobject with many subpaths take a
fraction of that. So the attention grid and the softmax column never make one mobject per cell:
they compute the outlines of all their shapes with numpy and put them into a few VMobjects.

The pieces, from the bottom up:

- point builders (numpy only): `segments`, `rect_points`, `circles_points`, `polygon_points`
  return cubic-Bézier point arrays, one closed subpath per shape, ready for `set_points`;
- text outlines: `text_points` reads the glyph outlines of a cached `Text` (never copied), and
  `WordOutline` places a word's outline at any size, on a common baseline, optionally turned;
- `Part`: what one slot draws (outline points plus fill/stroke style and a few flags);
- slots: VMobjects created once whose points and opacities change, never their membership in
  the scene: `put_part` pours a Part into a slot, `fade_slot` scales its opacities,
  `clear_slot` empties it. A component owns a fixed set of slots, so playing an animation never
  adds or removes a mobject;
- `Tween`: an Animation whose work is planned when it *starts* (`plan()` returns
  `update(alpha)` and `finish()`), so tweens can be built ahead and chained, and each decides
  what to draw from the state the previous one left.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from manim import Animation, ManimColor, VMobject, interpolate_color, smooth

from .text import label

REF_FS = 48.0  # font size at which text outlines are measured, then scaled


# --------------------------------------------------------------------------------------------
# parts and slots
# --------------------------------------------------------------------------------------------
@dataclass
class Part:
    """What one slot draws: outline points and their style."""

    points: np.ndarray
    fill: str | None = None
    fill_opacity: float = 1.0
    stroke: str | None = None
    stroke_width: float = 0.0
    stroke_opacity: float = 1.0
    masked: bool = False  # drawn in blocked cells (fades when the mask is revealed)
    dots: bool = False
    steady: bool = False  # drawn exactly as before the tween: shown at full from its start (no flicker)


def put_part(slot: VMobject, part: Part, alpha: float = 1.0):
    """Pour `part` into `slot`, at `alpha` times its opacities (kept in `slot.base_opacity`)."""
    slot.set_points(part.points) if len(part.points) else slot.clear_points()
    slot.base_opacity = (part.fill_opacity if part.fill else 0.0, part.stroke_opacity if part.stroke else 0.0)
    slot.masked = part.masked
    slot.steady = part.steady
    slot.set_fill(part.fill or "#000000", opacity=slot.base_opacity[0] * alpha)
    slot.set_stroke(part.stroke or "#000000", width=part.stroke_width, opacity=slot.base_opacity[1] * alpha)


def fade_slot(slot: VMobject, alpha: float):
    """Set the slot's opacities to `alpha` times those of the part it holds."""
    f, s = slot.base_opacity
    slot.set_fill(opacity=f * alpha)
    if s:
        slot.set_stroke(opacity=s * alpha)


def clear_slot(slot: VMobject):
    """Empty the slot (no points; it stays where it is in the scene)."""
    slot.clear_points()
    slot.base_opacity, slot.masked, slot.steady = (0.0, 0.0), False, False


def outline_points(mobjects) -> np.ndarray:
    """All points of the given mobjects' families, concatenated (their outlines, merged)."""
    pts = [m.points for mob in mobjects for m in mob.family_members_with_points()]
    return np.concatenate(pts) if pts else np.zeros((0, 3))


def points_mobject(chunks: list[np.ndarray], color: str) -> VMobject:
    """One filled VMobject drawing every outline in `chunks`."""
    out = VMobject(fill_color=color, fill_opacity=1.0, stroke_width=0)
    if chunks:
        out.set_points(np.concatenate(chunks))
    return out


# --------------------------------------------------------------------------------------------
# tweens
# --------------------------------------------------------------------------------------------
class Tween(Animation):
    """An animation whose work is planned when it starts: `plan()` returns update(alpha) and
    finish(). `owner` (default: the mobject) is added to the scene if it is not there yet."""

    def __init__(self, mobject, plan, run_time: float = 1.0, rate_func=smooth, owner=None, **kwargs):
        super().__init__(mobject, run_time=run_time, rate_func=rate_func, **kwargs)
        self.owner = owner if owner is not None else mobject
        self._plan = plan
        self._update = self._finish = None

    def _setup_scene(self, scene):
        if scene is not None and self.owner not in scene.get_mobject_family_members():
            scene.add(self.owner)

    def begin(self):
        self._update, self._finish = self._plan()
        super().begin()

    def create_starting_mobject(self):
        return VMobject()  # nothing to copy: the plan knows where it starts

    def interpolate_mobject(self, alpha: float):
        if self._update is not None:
            self._update(float(self.rate_func(alpha)))

    def finish(self):
        super().finish()
        if self._finish is not None:
            self._finish()
            self._finish = None


# --------------------------------------------------------------------------------------------
# point builders (numpy only)
# --------------------------------------------------------------------------------------------
def segments(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Points for straight segments, one cubic each (each its own subpath)."""
    if not pairs:
        return np.zeros((0, 3))
    a = np.array([p for p, _ in pairs], dtype=float)
    b = np.array([q for _, q in pairs], dtype=float)
    return np.stack([a, a + (b - a) / 3, a + 2 * (b - a) / 3, b], axis=1).reshape(-1, 3)


def rect_points(centers: np.ndarray, half_w, half_h) -> np.ndarray:
    """Closed axis-aligned rectangles (4 cubic sides each) around `centers` [m, 3]."""
    centers = np.asarray(centers, dtype=float).reshape(-1, 3)
    hw = np.broadcast_to(np.asarray(half_w, dtype=float), (len(centers),))
    hh = np.broadcast_to(np.asarray(half_h, dtype=float), (len(centers),))
    corners = np.array([[-1, 1], [1, 1], [1, -1], [-1, -1], [-1, 1]], dtype=float)  # UL UR DR DL UL
    c = np.zeros((len(centers), 5, 3))
    c[:, :, 0] = centers[:, None, 0] + corners[None, :, 0] * hw[:, None]
    c[:, :, 1] = centers[:, None, 1] + corners[None, :, 1] * hh[:, None]
    a, b = c[:, :-1], c[:, 1:]
    return np.stack([a, a + (b - a) / 3, a + 2 * (b - a) / 3, b], axis=2).reshape(-1, 3)


def boxes_points(boxes) -> np.ndarray:
    """Closed rectangles from their corners: `boxes` [m, 4] as (x0, y0, x1, y1)."""
    if not len(boxes):
        return np.zeros((0, 3))
    r = np.asarray(boxes, dtype=float)
    centers = np.stack([(r[:, 0] + r[:, 2]) / 2, (r[:, 1] + r[:, 3]) / 2, np.zeros(len(r))], axis=1)
    return rect_points(centers, (r[:, 2] - r[:, 0]) / 2, (r[:, 3] - r[:, 1]) / 2)


def _unit_circle(n_arcs: int = 4) -> np.ndarray:
    """A unit circle as n_arcs cubic Béziers, from (1, 0), counter-clockwise: [4*n_arcs, 3].
    Four arcs are exact to 0.03% of the radius; two (semicircles) to ~2%, invisible on a dot a
    few pixels wide and half the drawing work."""
    pts = []
    span = 2 * math.pi / n_arcs
    k = 4 / 3 * math.tan(span / 4)  # handle length for an arc of `span`
    for i in range(n_arcs):
        a0, a1 = i * span, (i + 1) * span
        p0 = np.array([math.cos(a0), math.sin(a0), 0])
        p3 = np.array([math.cos(a1), math.sin(a1), 0])
        t0 = np.array([-math.sin(a0), math.cos(a0), 0])
        t1 = np.array([-math.sin(a1), math.cos(a1), 0])
        pts += [p0, p0 + k * t0, p3 - k * t1, p3]
    return np.array(pts)


UNIT_CIRCLES = {4: _unit_circle(4), 2: _unit_circle(2)}


def circles_points(centers: np.ndarray, radii: np.ndarray, n_arcs: int = 4) -> np.ndarray:
    """Many circles as one point array (numpy only): [m*4*n_arcs, 3]."""
    unit = UNIT_CIRCLES[n_arcs]
    return (centers[:, None, :] + radii[:, None, None] * unit[None]).reshape(-1, 3)


def polygon_points(vertices) -> np.ndarray:
    """A closed polygon as straight cubic segments (one subpath)."""
    v = np.asarray(vertices, dtype=float)
    if v.shape[1] == 2:
        v = np.concatenate([v, np.zeros((len(v), 1))], axis=1)
    v = np.concatenate([v, v[:1]])
    return segments(list(zip(v[:-1], v[1:])))


def runs(flags) -> list[tuple[int, int]]:
    """[start, end) of each run of True in `flags`."""
    out, i, n = [], 0, len(flags)
    while i < n:
        if not flags[i]:
            i += 1
            continue
        j = i
        while j < n and flags[j]:
            j += 1
        out.append((i, j))
        i = j
    return out


def lerp_color(a: str, b: str, t: float) -> str:
    """Hex colour between `a` and `b` (t in [0, 1])."""
    return interpolate_color(ManimColor(a), ManimColor(b), float(t)).to_hex()


def smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3 - 2 * x)


# --------------------------------------------------------------------------------------------
# text as outlines
# --------------------------------------------------------------------------------------------
def text_points(text: str, font_size: float = REF_FS, slant: str = "NORMAL") -> list[np.ndarray]:
    """The outline points of each glyph of `text` (read from the cached Text, never copied)."""
    try:
        from .text import _prototype  # the cache behind label(); reading it avoids a deep copy
        from ..style import FONT

        proto = _prototype(text, float(font_size), "#FFFFFF", FONT, "NORMAL", slant)
    except (ImportError, TypeError):  # pragma: no cover - if text.py changes shape
        proto = label(text, font_size, slant=slant)
    out = []
    for g in proto.submobjects:
        parts = [m.points for m in g.family_members_with_points()]
        out.append(np.concatenate(parts) if parts else np.zeros((0, 3)))
    return out


def _is_bar(points: np.ndarray) -> bool:
    """Whether a glyph's outline is the '|' the anchor is measured from: tall and thin."""
    if len(points) == 0:
        return False
    w, h = np.ptp(points[:, 0]), np.ptp(points[:, 1])
    return h > 0 and w < 0.25 * h


def _lone_word(text: str) -> tuple[np.ndarray, list[np.ndarray]]:
    """(bar, glyphs) for a word measured on its own: its outline (or a visible placeholder □ when
    the fonts draw nothing for it) centred on the bar's middle, where a one-line word sits."""
    bar = text_points("|x")[0]
    rest = [g for g in text_points(text) if len(g)] or [g for g in text_points("□") if len(g)]
    if not rest:
        return bar, []
    pts = np.concatenate(rest)
    mid_word = (pts[:, 1].min() + pts[:, 1].max()) / 2
    mid_bar = (bar[:, 1].min() + bar[:, 1].max()) / 2
    return bar, [g + np.array([0.0, mid_bar - mid_word, 0.0]) for g in rest]


class WordOutline:
    """A word's outline, measured at REF_FS with a baseline-consistent anchor: built as '|word'
    so the bar's centre gives the same baseline for every word; the bar is dropped."""

    def __init__(self, text: str):
        glyphs = text_points("|" + text)
        if len(glyphs) >= 2 and _is_bar(glyphs[0]):
            bar, rest = glyphs[0], glyphs[1:]
        else:  # right-to-left scripts reorder the bar; glyphs no font has vanish: measure alone
            bar, rest = _lone_word(text)
        self.points = np.concatenate(rest) if rest else np.zeros((0, 3))
        left = self.points[:, 0].min() if len(self.points) else bar[:, 0].max()
        self.anchor = np.array([left, (bar[:, 1].min() + bar[:, 1].max()) / 2, 0.0])
        self.width = float(np.ptp(self.points[:, 0])) if len(self.points) else 0.0  # at REF_FS
        self.line_height = float(np.ptp(bar[:, 1]))  # at REF_FS: ascender to descender

    def placed(self, font_size: float, point, rotate: bool = False, align: str = "left") -> np.ndarray:
        """Outline points scaled to font_size with the baseline anchor at `point`: align='left'
        puts the word's start there, 'right' its end, 'center' its middle (before rotation)."""
        s = font_size / REF_FS
        p = (self.points - self.anchor) * s
        p[:, 0] += {"left": 0.0, "center": -self.width * s / 2, "right": -self.width * s}[align]
        if rotate:  # a quarter turn counter-clockwise: the word reads upwards
            p = np.stack([-p[:, 1], p[:, 0], p[:, 2]], axis=1)
        return p + np.asarray(point, dtype=float)


__all__ = ["REF_FS", "Part", "put_part", "fade_slot", "clear_slot", "outline_points", "points_mobject",
           "Tween", "segments", "rect_points", "boxes_points", "circles_points", "polygon_points", "runs",
           "lerp_color", "smoothstep", "text_points", "WordOutline", "UNIT_CIRCLES"]
