"""Boxes on the screen, measured fast for labels placed on every frame of a turning space
(`space3d`): a mobject's box as (centre, half size), whether two labels stand too near to read apart, whether a leader line
crosses one, and the centre of an anchor point."""

from __future__ import annotations

import numpy as np
from manim import VectorizedPoint, VMobject

from ..review import LABEL_APART, LABEL_STACKED


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


APART = np.array([LABEL_APART + 0.25, 0.2])  # the least room beside and above another label (closer, two read as one)
STACKED = LABEL_STACKED + 0.05  # and above one it shares half its width with (closer, a label of two lines: "ΔE⃗₄"
# over "blue"); the lint's measure, a little wider


LOOSE = np.array([LABEL_APART + 0.05, 0.0])  # the lint's measure, a little wider: beside on one line only


def reads_as_one(centre: np.ndarray, half: np.ndarray, box: tuple[np.ndarray, np.ndarray], loose: bool = False) -> bool:
    """Whether a label of half size `half` centred at `centre` stands on or too near the label `box`
    (centre, half size): side by side a word's gap apart, or one above the other sharing its width,
    two labels read as one. `loose`: side by side only where they share a line (a label beside its own
    shaft may stand diagonally off another)."""
    off, reach = np.abs(centre[:2] - box[0][:2]), half[:2] + box[1][:2]
    shared = reach[0] - off[0]  # how much of their width they share
    return bool(np.all(off < reach + (LOOSE if loose else APART))
                # (a little stricter than the lint's half: at exactly half, a rounding bit decided, review 40)
                or (shared > min(half[0], box[1][0]) - 0.02 and off[1] < reach[1] + STACKED))


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
