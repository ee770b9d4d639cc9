"""Context arcs: curved arcs from source tokens into a target token, as thick and as bright as the
real attention weights, with a pulse that travels along them towards the target.

    arcs = ContextArcs([w.get_top() for w in words], words[3].get_top(), head.pattern[3], theme)
    self.play(arcs.grow()); self.play(arcs.pulse())

Stroke width and opacity are increasing functions of the weight (width ∝ weight, opacity rising
with √weight), so a weight twice as large never draws thinner or fainter. An arc from the target
to itself has no length and is not drawn (its weight is still listed).
"""

from __future__ import annotations

import numpy as np
from manim import (
    PI,
    AnimationGroup,
    ArcBetweenPoints,
    Create,
    ShowPassingFlash,
    VGroup,
    VMobject,
    Wait,
)

from ..style import DARK, Theme, get_theme


def _point(p, below: bool = False) -> np.ndarray:
    if hasattr(p, "get_top"):
        return np.asarray(p.get_bottom() if below else p.get_top(), dtype=float)
    p = np.asarray(p, dtype=float)
    return np.concatenate([p, [0.0]]) if p.shape == (2,) else p


class ContextArcs(VGroup):
    """Arcs from `sources_positions` (points or mobjects: their top is used) into
    `target_position`, one per source, weighted by `weights` (same length).

    - color: arc colour (default the theme's value colour: what flows along an arc is a value).
    - max_stroke: stroke width of a weight-1 arc (or of the largest weight if relative=True).
    - min_opacity/max_opacity: opacity range, reached at weight 0 and weight 1 (or the largest).
    - angle: how far arcs bend (radians); arcs always bulge upwards (downwards if below=True).
    - buff: gap between a word (its top, or bottom if below) and the arc's ends.
    """

    def __init__(self, sources_positions, target_position, weights, theme: Theme | str = DARK,
                 color: str | None = None, max_stroke: float = 16.0, min_opacity: float = 0.2,
                 max_opacity: float = 1.0, angle: float = PI / 2, relative: bool = False,
                 below: bool = False, buff: float = 0.08, **kwargs):
        super().__init__(**kwargs)
        self.theme = get_theme(theme) if isinstance(theme, str) else theme
        self.color = color or self.theme.value
        self.below = below
        up = np.array([0.0, -buff if below else buff, 0.0])
        self.sources = [_point(p, below) + up for p in sources_positions]
        self.target = _point(target_position, below) + up
        self.weights = np.asarray(weights, dtype=float).reshape(-1)
        if len(self.weights) != len(self.sources):
            raise ValueError(f"{len(self.weights)} weights for {len(self.sources)} sources")
        if np.any(self.weights < 0):
            raise ValueError("attention weights cannot be negative")
        # relative: against the strongest arc drawn (a word's weight on itself has no arc: scaled against
        # its 0.99, last_token's 0.01 arcs stayed hair-thin under "arc widths: against the strongest, 0.01")
        drawable = np.array([np.hypot(*(self.target - p)[:2]) >= 1e-6 for p in self.sources])
        strongest = float(self.weights[drawable].max()) if drawable.any() else 0.0
        ref = strongest if relative and strongest > 0 else 1.0
        w = np.clip(self.weights / ref, 0.0, 1.0)
        self.stroke_widths = max_stroke * w
        self.opacities = min_opacity + (max_opacity - min_opacity) * np.sqrt(w)
        self.arcs: list[VMobject | None] = []
        for src, sw, op, wt in zip(self.sources, self.stroke_widths, self.opacities, self.weights):
            d = self.target - src
            if np.hypot(d[0], d[1]) < 1e-6:
                self.arcs.append(None)
                continue
            # ArcBetweenPoints turns counter-clockwise for a positive angle, which bulges below a
            # left-to-right chord: flip the sign so arcs bulge upwards (or below, if asked)
            sign = -1.0 if d[0] >= 0 else 1.0
            if below:
                sign = -sign
            arc = ArcBetweenPoints(src, self.target, angle=sign * angle)
            arc.set_stroke(self.color, width=float(sw), opacity=float(op))
            arc.weight = float(wt)
            self.arcs.append(arc)
            self.add(arc)

    def drawn(self):
        """(arc, weight) for every arc that is drawn."""
        return [(a, wt) for a, wt in zip(self.arcs, self.weights) if a is not None]

    def grow(self, run_time: float = 1.2, lag_ratio: float = 0.08):
        """Arcs draw themselves from the sources towards the target."""
        arcs = [a for a, _ in self.drawn()]
        if not arcs:
            return Wait(run_time)
        # group=self: the arcs enter the scene as this one group, not as loose arcs
        return AnimationGroup(*[Create(a) for a in arcs], lag_ratio=lag_ratio, run_time=run_time, group=self)

    def pulse(self, run_time: float = 1.4, time_width: float = 0.35, color: str | None = None,
              min_weight: float = 0.01):
        """A bright stretch travels along each arc into the target (arcs below min_weight stay
        quiet); brighter and wider on heavier arcs."""
        flashes = []
        for a, (sw, op, wt) in zip(self.arcs, zip(self.stroke_widths, self.opacities, self.weights)):
            if a is None or wt < min_weight:
                continue
            f = a.copy().set_stroke(color or self.theme.text, width=float(sw) * 1.4 + 1.5,
                                    opacity=float(min(1.0, op + 0.2)))
            flashes.append(ShowPassingFlash(f, time_width=time_width, run_time=run_time))
        return AnimationGroup(*flashes, group=self) if flashes else Wait(run_time)
