"""How counts grow with a length, on logarithmic scales both ways: one line per series through its
points, a dot at each. A count that grows with the square of the length climbs twice as steeply as
one that grows in step with it; one that stays the same lies flat (shapes to scale, not a table).

    chart = LogLogChart([1_000, 32_000, 1_000_000], [(full_bytes, th.value), (flash_bytes, th.highlight)],
                        x_label=lambda n: say.number(n, ",d"), y_label=lambda k: f"1 {UNITS[k]}",
                        width=6.0, height=4.5, theme=th)

The component writes no words of its own: tick labels come from the caller (`x_label(10**k)`;
`y_label(k)` for 10**k, None where a tick goes unlabelled). `.point(x, v)` is where a value is drawn;
`.value_of(p)` reads a value back from a drawn point (tests check the scales).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
from manim import Circle, Dot, Line, VGroup, VMobject

from ..style import DARK, Theme
from .text import label

RING_RADIUS = 0.12  # a dot on another series' dot is drawn as a ring this wide


class LogLogChart(VGroup):
    """Parts: `.axes` (x, y), `.x_ticks`, `.x_tick_labels`, `.y_ticks`, `.y_tick_labels`, `.lines` (one
    per series), `.dots` (a VGroup per series), `.ends` (each series' last dot); `.kx`, `.ky` (the
    lowest powers of ten on each axis), `.ux`, `.uy` (scene units per factor of ten)."""

    def __init__(self, xs: Sequence[float], series: Sequence[tuple[Sequence[float], str]], *,
                 x_label: Callable[[float], str], y_label: Callable[[int], str | None], width: float, height: float,
                 theme: Theme = DARK, font_size: float = 22, y_step: int = 3, x_labelled: Sequence[float] | None = None):
        """`x_labelled`: the lengths whose ticks are labelled (by default every power of ten); a length that is
        no power of ten gets a tick of its own."""
        super().__init__()
        values = [v for vs, _ in series for v in vs]
        if min(xs) <= 0 or min(values) <= 0:
            raise ValueError("a log-log chart needs positive lengths and counts")
        th = theme
        self.kx = math.floor(math.log10(min(xs)) + 1e-9)
        top_x = math.ceil(math.log10(max(xs)) - 1e-9)
        # the count axis from a decade under the labelled power (every `y_step` decades) below the least count,
        # up to the power of ten above the largest: the lowest label stands clear of the lengths' axis ("1 kB"
        # sat on its line, in the corner with "1,000": review 48)
        self.ky = y_step * math.floor(math.log10(min(values)) / y_step) - 1
        top_y = math.ceil(math.log10(max(values)) + 1e-9)
        # the tick labels left of the y axis take their own width out of `width`
        y_texts = {k: y_label(k) for k in range(self.ky, top_y + 1)}
        y_labels = {k: label(t, font_size, th.dim) for k, t in y_texts.items() if t}
        room = max((m.width for m in y_labels.values()), default=0.0) + 0.2
        self.ux = (width - room) / max(top_x - self.kx, 1)
        x_probe = label(x_label(10 ** top_x), font_size, th.dim)
        self.uy = (height - x_probe.height - 0.25) / max(top_y - self.ky, 1)
        self.x0, self.y0 = room, x_probe.height + 0.25  # the origin (the lowest powers), the chart's corner at 0, 0
        self.top_x, self.top_y = top_x, top_y
        x1, y1 = self.x0 + self.ux * (top_x - self.kx), self.y0 + self.uy * (top_y - self.ky)
        self.axes = VGroup(Line([self.x0, self.y0, 0], [x1, self.y0, 0], stroke_color=th.dim, stroke_width=2),
                           Line([self.x0, self.y0, 0], [self.x0, y1, 0], stroke_color=th.dim, stroke_width=2))
        self.x_ticks, self.x_tick_labels = VGroup(), VGroup()
        decades = [10 ** k for k in range(self.kx, top_x + 1)]
        shown = list(decades if x_labelled is None else x_labelled)
        for v in sorted(set(decades) | set(shown)):
            x = self.x0 + self.ux * (math.log10(v) - self.kx)
            self.x_ticks.add(Line([x, self.y0, 0], [x, self.y0 - (0.1 if v in shown else 0.06), 0], stroke_color=th.dim,
                                  stroke_width=2))
            if v in shown:
                lab = label(x_label(v), font_size, th.dim)
                self.x_tick_labels.add(lab.move_to([x, self.y0 - 0.15 - lab.height / 2, 0]))
        self.y_ticks, self.y_tick_labels = VGroup(), VGroup()
        for k in range(self.ky, top_y + 1):
            y = self.y0 + self.uy * (k - self.ky)
            labelled = k in y_labels
            self.y_ticks.add(Line([self.x0, y, 0], [self.x0 - (0.1 if labelled else 0.05), y, 0], stroke_color=th.dim,
                                  stroke_width=2))
            if labelled:
                lab = y_labels[k]
                # (clear of a ring on the first length's dot, round the axis: review 52, a ring on "1 MB")
                self.y_tick_labels.add(lab.move_to([self.x0 - RING_RADIUS - 0.12 - lab.width / 2, y, 0]))
        # a faint line at each labelled count, across the chart: a series is read against them
        self.grid_lines = VGroup(*(Line([self.x0, self.y0 + self.uy * (k - self.ky), 0],
                                        [x1, self.y0 + self.uy * (k - self.ky), 0], stroke_color=th.dim,
                                        stroke_width=1, stroke_opacity=0.35) for k in y_labels if k > self.ky))
        self.lines, self.dots, self.ends = VGroup(), VGroup(), VGroup()
        placed: list[np.ndarray] = []
        for vs, color in series:
            pts = [self.point(x, v) for x, v in zip(xs, vs)]
            line = VMobject(stroke_color=color, stroke_width=5).set_points_as_corners(pts)
            # a point on another series' dot is drawn as a ring around it, so both show (review 49: the window's
            # and flash's dots as one at 1,000 tokens)
            dots = VGroup(*(Circle(radius=RING_RADIUS, stroke_color=color, stroke_width=4).move_to(p)
                            if any(np.linalg.norm(p - q) < 0.16 for q in placed) else Dot(p, radius=0.07, color=color)
                            for p in pts))
            placed += pts
            for d, v in zip(dots, vs):
                d.value = float(v)
            self.lines.add(line)
            self.dots.add(dots)
            self.ends.add(dots[-1])
        self.add(self.grid_lines, self.axes, self.x_ticks, self.x_tick_labels, self.y_ticks, self.y_tick_labels,
                 self.lines, self.dots)

    def point(self, x: float, v: float) -> np.ndarray:
        """Where (x, v) is drawn, in the chart's own coordinates (before the chart is moved)."""
        return np.array([self.x0 + self.ux * (math.log10(x) - self.kx), self.y0 + self.uy * (math.log10(v) - self.ky), 0.0])

    def value_of(self, p: np.ndarray) -> tuple[float, float]:
        """The (length, count) a drawn point stands for, read off the scales (after any move of the chart)."""
        o = self.axes[0].get_start()
        ux = (self.axes[0].get_end()[0] - o[0]) / (self.top_x - self.kx)  # (scaled with the chart, if it was)
        uy = (self.axes[1].get_end()[1] - o[1]) / (self.top_y - self.ky)
        return (float(10 ** ((p[0] - o[0]) / ux + self.kx)), float(10 ** ((p[1] - o[1]) / uy + self.ky)))


__all__ = ["LogLogChart"]
