"""Boxes on the screen, measured fast for labels placed on every frame of a turning space
(`space3d`): a mobject's box as (centre, half size), whether two overlap, whether a leader line
crosses one, and the centre of an anchor point."""

from __future__ import annotations

import numpy as np
from manim import VectorizedPoint, VMobject


def _box(other: VMobject) -> tuple[np.ndarray, np.ndarray]:
    """Centre and half size (x, y) of a mobject's box on screen, as manim measures them (the centre
    from the family's anchors, the size from all its points), in one pass over the family instead of
    manim's one per coordinate: labels are placed on every frame of a turning space."""
    family = [m for m in other.get_family() if len(m.points)]
    if not family or not all(isinstance(m, VMobject) for m in other.get_family()):
        return other.get_center()[:2], np.array([other.width / 2, other.height / 2])
    points = np.concatenate([m.points[:, :2] for m in family])
    anchors = np.concatenate([m.points[:, :2] if len(m.points) == 1 else
                              np.concatenate([m.points[0::4, :2], m.points[3::4, :2]]) for m in family])
    centre = (anchors.min(axis=0) + anchors.max(axis=0)) / 2
    return centre, (points.max(axis=0) - points.min(axis=0)) / 2


def centre_of(m) -> np.ndarray:
    """`m.get_center()`; for a VectorizedPoint (the space's anchors) its one point, which is what manim
    computes for it ((x + x) / 2 = x) at a fraction of the cost: placements read anchors on every frame."""
    if isinstance(m, VectorizedPoint) and len(m.points) == 1 and not m.submobjects:
        return m.points[0].copy()
    return m.get_center()


def _overlap(centre: np.ndarray, half: np.ndarray, box: tuple[np.ndarray, np.ndarray],
             margin: float = 0.04) -> bool:
    oc, oh = box
    return bool(np.all(np.abs(centre[:2] - oc) < half[:2] + oh + margin))


def _segment_hits(a: np.ndarray, b: np.ndarray, box: tuple[np.ndarray, np.ndarray], margin: float = 0.02) -> bool:
    """Whether the segment a → b (2-D) passes through `box` (centre, half-size), Liang–Barsky."""
    (cx, cy), (hx, hy) = box[0][:2], box[1][:2]
    lo, hi = np.array([cx - hx - margin, cy - hy - margin]), np.array([cx + hx + margin, cy + hy + margin])
    t0, t1 = 0.0, 1.0
    d = b - a
    for k in range(2):
        if abs(d[k]) < 1e-12:
            if a[k] < lo[k] or a[k] > hi[k]:
                return False
            continue
        u0, u1 = (lo[k] - a[k]) / d[k], (hi[k] - a[k]) / d[k]
        t0, t1 = max(t0, min(u0, u1)), min(t1, max(u0, u1))
        if t0 > t1:
            return False
    return True
