"""Lint rules measured on shapes rather than texts (scenes/review.py's Linter calls `shape_findings`):
a dot legend's smallest dot (`legend_dot`) and the axes of a 3-D space drawn flat (`axis_end_on`)."""

from __future__ import annotations

import math

import numpy as np

MIN_AXIS_SHARE = 0.35  # a flat-drawn 3-D axis shorter than this share of the longest reads as end-on
MIN_AXIS_ANGLE = 10.0  # degrees: two flat-drawn axes closer than this on screen read as one line
VISIBLE = 0.08  # as review.VISIBLE: fill or stroke opacity below this does not count as seen


def _box(m) -> tuple[float, float, float, float]:
    pts = m.points
    return float(pts[:, 0].min()), float(pts[:, 1].min()), float(pts[:, 0].max()), float(pts[:, 1].max())


def shape_findings(mobs, scale: float):
    """(rule, what, box, dedupe key) for each finding among `mobs` (scale: px at 720p per unit)."""
    from .components.dot_legend import MIN_DOT_PX, DotLegend
    from .components.space3d import EmbeddingSpace

    for top in mobs:
        for m in top.get_family():
            if isinstance(m, DotLegend):
                yield from _legend_dots(m, scale, MIN_DOT_PX)
            elif isinstance(m, EmbeddingSpace) and m.axis_lines[0].get_stroke_opacity() >= VISIBLE:
                yield from _space_axes(m)


def _legend_dots(legend, scale: float, min_px: float):
    seen = [d for d in legend.dot_mobs if d.get_fill_opacity() >= VISIBLE]
    if seen:
        px = min(d.width for d in seen) * scale
        if px < min_px - 0.05:
            yield ("legend_dot", f"a legend's dot {px:.1f} px < {min_px:.0f} px",
                   _box(min(seen, key=lambda d: d.width)), ("legend dot", round(px)))


def _space_axes(space):
    _, axes = space._frame()  # columns: each model axis's unit on screen
    lengths = [float(np.linalg.norm(axes[:2, k])) for k in range(axes.shape[1])]
    if max(lengths) > 0 and min(lengths) < MIN_AXIS_SHARE * max(lengths):
        k = int(np.argmin(lengths))
        yield ("axis_end_on", f"axis {k} drawn {min(lengths) / max(lengths):.0%} as long as the longest "
               f"(< {MIN_AXIS_SHARE:.0%})", _box(space.axis_lines[k]), ("axis end-on", k))
    for i in range(len(lengths)):  # two axes along one line on screen read as one
        for j in range(i + 1, len(lengths)):
            if min(lengths[i], lengths[j]) <= 1e-9:
                continue
            cos = abs(float(axes[:2, i] @ axes[:2, j])) / (lengths[i] * lengths[j])
            angle = math.degrees(math.acos(min(1.0, cos)))
            if angle < MIN_AXIS_ANGLE:
                yield ("axis_end_on", f"axes {i} and {j} drawn {angle:.0f}° apart (< {MIN_AXIS_ANGLE:.0f}°)",
                       _box(space.axis_lines[i]), ("axes along one line", i, j))
