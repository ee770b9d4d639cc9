"""How far a label is from the strokes around it (an arc it labels, the axes it sits among), measured
on what is drawn: a stroke's centre line, less half its width. Pure geometry (numpy), shared by the
components that place labels and by the lint (scenes/review.py, rule `label_clear`).

    gap = clearance(label_boxes, arc)          # units between the label's glyphs and the arc's edge
    spot = first_clear(label, centres, strokes, gap=0.08)  # the first centre that keeps that room
"""

from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

STROKE_UNIT = 0.01  # manim's Cairo camera draws a stroke of width w as w · 0.01 frame units wide


def stroke_segments(points: np.ndarray, k: int = 12) -> np.ndarray:
    """A path of cubic Bézier curves (manim's points, 4 per curve) as straight segments [m, 2, 2],
    k per curve: its drawn centre line."""
    n = len(points) // 4 * 4
    if n == 0:
        return np.zeros((0, 2, 2))
    c = np.asarray(points[:n, :2], dtype=float).reshape(-1, 4, 2)
    pts = np.einsum("kj,cjd->ckd", _bernstein(k), c)  # [curves, k+1, 2]
    return np.stack([pts[:, :-1], pts[:, 1:]], axis=2).reshape(-1, 2, 2)


_BERNSTEIN: dict[int, np.ndarray] = {}
# points along every segment, close enough (segments are short) that a box a segment crosses always
# has one of them within a few hundredths of a unit
SEGMENT_SAMPLES = np.linspace(0.0, 1.0, 9)
BOX_CHUNK = 1 << 20  # box × point distances computed at once (memory), at most


def _bernstein(k: int) -> np.ndarray:
    """The cubic Bernstein weights at k + 1 even steps [k+1, 4], made once per k (labels are placed on
    every frame of a turning 3-D space: rebuilding them was a tenth of its render)."""
    b = _BERNSTEIN.get(k)
    if b is None:
        t = np.linspace(0.0, 1.0, k + 1)
        b = _BERNSTEIN[k] = np.stack([(1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t ** 2, t ** 3], axis=1)
    return b


def segment_points(segs: np.ndarray) -> np.ndarray:
    """[m·9, 2] points sampled along the segments [m, 2, 2]: what a box's distance is measured to."""
    a, b = segs[:, 0], segs[:, 1]
    return (a[:, None, :] + (b - a)[:, None, :] * SEGMENT_SAMPLES[None, :, None]).reshape(-1, 2)


def box_distances(boxes: np.ndarray, p: np.ndarray) -> np.ndarray:
    """[points] each point's least distance to any of the boxes (x0, y0, x1, y1) (0 inside one)."""
    boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
    out = np.full(len(p), math.inf)
    step = max(1, BOX_CHUNK // max(1, len(p)))
    for i in range(0, len(boxes), step):
        bx = boxes[i:i + step]
        dx = np.maximum(np.maximum(bx[:, 0:1] - p[None, :, 0], p[None, :, 0] - bx[:, 2:3]), 0.0)
        dy = np.maximum(np.maximum(bx[:, 1:2] - p[None, :, 1], p[None, :, 1] - bx[:, 3:4]), 0.0)
        out = np.minimum(out, np.sqrt(dx * dx + dy * dy).min(axis=0))
    return out


def boxes_to_segments(boxes: np.ndarray, segs: np.ndarray) -> float:
    """The least distance between any box (x0, y0, x1, y1) and any segment (0 where they meet)."""
    boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
    if not len(boxes) or not len(segs):
        return math.inf
    return float(box_distances(boxes, segment_points(segs)).min())


class StrokeField:
    """Strokes measured once, for many boxes: every stroke's sampled centre line with its half width.
    `room(boxes)` equals `clearance(boxes, strokes)` (and `boxes_to_segments(box, seg) − half` for
    plain segments) to the last bit: the least of (distance − half width) over all points is the
    least over strokes of (least distance − its half width), rounding being monotone."""

    def __init__(self):
        self._points: list[np.ndarray] = []
        self._halves: list[np.ndarray] = []
        self._joined: tuple[np.ndarray, np.ndarray] | None = None

    def add_segments(self, segs: np.ndarray, half: float) -> "StrokeField":
        if len(segs):
            p = segment_points(segs)
            self._points.append(p)
            self._halves.append(np.full(len(p), float(half)))
            self._joined = None
        return self

    def add_strokes(self, strokes: Sequence) -> "StrokeField":
        for m in strokes:
            self.add_segments(stroke_segments(m.points), 0.5 * STROKE_UNIT * float(m.get_stroke_width()))
        return self

    def room(self, boxes) -> float:
        boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
        if not len(boxes) or not self._points:
            return math.inf
        if self._joined is None:
            self._joined = (np.concatenate(self._points), np.concatenate(self._halves))
        points, halves = self._joined
        return float((box_distances(boxes, points) - halves).min())


def strokes_of(mobs: Iterable) -> list:
    """The visible stroked pieces of `mobs` (their families): what a label must keep clear of."""
    out = []
    for mob in mobs:
        for m in mob.get_family():
            if m.has_points() and m.get_stroke_width() > 0 and m.get_stroke_opacity() > 0:
                out.append(m)
    return out


def clearance(boxes, strokes: Sequence) -> float:
    """Units between the boxes (a label's glyphs, or its box) and the nearest stroke's drawn edge."""
    return StrokeField().add_strokes(strokes).room(boxes)


def box_of(mob, centre=None) -> np.ndarray:
    """A mobject's box (x0, y0, x1, y1), or the box it would have centred at `centre`."""
    c = mob.get_center() if centre is None else np.asarray(centre, dtype=float)
    return np.array([c[0] - mob.width / 2, c[1] - mob.height / 2, c[0] + mob.width / 2, c[1] + mob.height / 2])


def room_at(mob, centre, strokes: Sequence, avoid: Sequence = ()) -> float:
    """How far `mob`'s box centred at `centre` keeps from every stroke and every box in `avoid`
    (−1 where it overlaps one of those boxes)."""
    box = box_of(mob, centre)
    room = clearance(box, strokes)
    for ox0, oy0, ox1, oy1 in avoid:
        dx = max(ox0 - box[2], box[0] - ox1, 0.0)
        dy = max(oy0 - box[3], box[1] - oy1, 0.0)
        room = min(room, math.hypot(dx, dy) if (dx > 0 or dy > 0) else -1.0)
    return room


def first_clear(mob, centres: Sequence, strokes: Sequence, gap: float, avoid: Sequence = ()) -> np.ndarray:
    """The first of `centres` where `mob`'s box keeps `gap` from every stroke and from the boxes in
    `avoid`; failing all, the one with the most room."""
    best, best_room = np.asarray(centres[0], dtype=float), -math.inf
    for c in centres:
        room = room_at(mob, c, strokes, avoid)
        if room >= gap:
            return np.asarray(c, dtype=float)
        if room > best_room:
            best, best_room = np.asarray(c, dtype=float), room
    return best


__all__ = ["STROKE_UNIT", "stroke_segments", "boxes_to_segments", "box_distances", "segment_points", "StrokeField", "strokes_of", "clearance", "box_of", "room_at", "first_clear"]
