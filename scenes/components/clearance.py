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
    t = np.linspace(0.0, 1.0, k + 1)
    b = np.stack([(1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t ** 2, t ** 3], axis=1)  # [k+1, 4]
    pts = np.einsum("kj,cjd->ckd", b, c)  # [curves, k+1, 2]
    return np.stack([pts[:, :-1], pts[:, 1:]], axis=2).reshape(-1, 2, 2)


def boxes_to_segments(boxes: np.ndarray, segs: np.ndarray) -> float:
    """The least distance between any box (x0, y0, x1, y1) and any segment (0 where they meet)."""
    boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
    if not len(boxes) or not len(segs):
        return math.inf
    a, b = segs[:, 0], segs[:, 1]
    # points along every segment, close enough (segments are short) that a box a segment crosses
    # always has one of them within a few hundredths of a unit
    ts = np.linspace(0.0, 1.0, 9)
    p = (a[:, None, :] + (b - a)[:, None, :] * ts[None, :, None]).reshape(-1, 2)
    best = math.inf
    for x0, y0, x1, y1 in boxes:
        dx = np.maximum(np.maximum(x0 - p[:, 0], p[:, 0] - x1), 0.0)
        dy = np.maximum(np.maximum(y0 - p[:, 1], p[:, 1] - y1), 0.0)
        best = min(best, float(np.sqrt(dx * dx + dy * dy).min()))
        if best <= 0:
            return 0.0
    return best


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
    best = math.inf
    for m in strokes:
        d = boxes_to_segments(boxes, stroke_segments(m.points)) - 0.5 * STROKE_UNIT * float(m.get_stroke_width())
        best = min(best, d)
    return best


def box_of(mob, centre=None) -> np.ndarray:
    """A mobject's box (x0, y0, x1, y1), or the box it would have centred at `centre`."""
    c = mob.get_center() if centre is None else np.asarray(centre, dtype=float)
    return np.array([c[0] - mob.width / 2, c[1] - mob.height / 2, c[0] + mob.width / 2, c[1] + mob.height / 2])


def first_clear(mob, centres: Sequence, strokes: Sequence, gap: float, avoid: Sequence = ()) -> np.ndarray:
    """The first of `centres` where `mob`'s box keeps `gap` from every stroke and from the boxes in
    `avoid`; failing all, the one with the most room."""
    best, best_room = np.asarray(centres[0], dtype=float), -math.inf
    for c in centres:
        box = box_of(mob, c)
        room = clearance(box, strokes)
        for o in avoid:
            ox0, oy0, ox1, oy1 = o
            dx = max(ox0 - box[2], box[0] - ox1, 0.0)
            dy = max(oy0 - box[3], box[1] - oy1, 0.0)
            room = min(room, math.hypot(dx, dy) if (dx > 0 or dy > 0) else -1.0)
        if room >= gap:
            return np.asarray(c, dtype=float)
        if room > best_room:
            best, best_room = np.asarray(c, dtype=float), room
    return best


__all__ = ["STROKE_UNIT", "stroke_segments", "boxes_to_segments", "strokes_of", "clearance", "box_of", "first_clear"]
