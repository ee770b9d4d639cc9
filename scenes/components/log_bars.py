"""Horizontal bars on a logarithmic scale, for counts that differ by orders of magnitude (a score
grid of n × n numbers against a tile of a few): each bar's length is log10 of its value, the axis
under the bars has a tick at every power of ten (labelled, or every second or third one where the
labels would crowd), and each bar says its value in figures.

    chart = LogBars([("this sentence: 8 tokens", [("ordinary", 64, "= 8 × 8", th.key),
                                                   ("flash", 42, "= 6 + 4 + 32", th.value)])],
                    axis_title="numbers, log scale", theme=th)

The component writes no words of its own: names, group titles and the axis title come from the
caller's catalog. `.value_of(bar)` reads a value back from a drawn bar (tests check the scale).
"""

from __future__ import annotations

import math
from typing import Sequence

from manim import DOWN, UP, Line, Rectangle, VGroup

from ..style import DARK, Theme
from .text import label
from .vectors import math as typeset

Row = tuple[str, float, str, str]  # name, value, figure drawn at the bar's end, colour


class LogBars(VGroup):
    """Groups of bars, one row each, over a shared log10 axis.

    - groups: [(group title, [(name, value ≥ 1, figure, colour), ...]), ...]
    - axis_title: the words under the axis (what is counted, and that the scale is logarithmic); a
      callable gets the factor between two labelled ticks (10, 100 or 1000: labels thin out where they
      would crowd) and returns the words, so they say the factor the ticks show
    - bar_width: the length of the axis from 1 to the top power of ten
    - font_size: names and figures (group titles and the axis title a little smaller)

    Parts: `.bars` (Rectangles, in row order), `.figures`, `.names`, `.titles`, `.axis`, `.ticks`,
    `.tick_labels`, `.axis_title`; `.decades` (the top power of ten), `.x0` and `.unit` (scene units per
    factor of ten)."""

    def __init__(self, groups: Sequence[tuple[str, Sequence[Row]]], axis_title, *, theme: Theme = DARK,
                 bar_width: float = 5.0, font_size: float = 24, row_step: float = 0.52, bar_height: float = 0.34,
                 max_width: float | None = None):
        """`max_width`: the whole chart's width (names, bars, figures): the bars get what the names and
        the widest figure leave of it (at least 2 units); `bar_width` is then ignored."""
        super().__init__()
        values = [v for _, rows in groups for _, v, _, _ in rows]
        if not values or min(values) < 1:
            raise ValueError("log bars need values of at least 1")
        self.decades = max(1, math.ceil(math.log10(max(values)) - 1e-9))
        th = theme
        small = font_size * 0.9
        self.names, self.titles, self.bars, self.figures = VGroup(), VGroup(), VGroup(), VGroup()
        names = {id(r): label(r[0], font_size, th.text) for _, rows in groups for r in rows}
        name_w = max(m.width for m in names.values())
        self.x0 = x0 = name_w + 0.25
        if max_width is not None:
            # the longest bar's figure ends at the chart's right edge at the most
            ends = [math.log10(r[1]) / self.decades for _, rows in groups for r in rows]
            figs = [label(r[2], font_size, th.text).width for _, rows in groups for r in rows]
            room = max_width - x0 - 0.15
            bar_width = max(2.0, min((room - f) / max(e, 1e-9) for e, f in zip(ends, figs)))
            bar_width = min(bar_width, room)
        self.unit = bar_width / self.decades
        y = 0.0
        for title, rows in groups:
            t = label(title, small, th.dim)
            t.move_to([t.width / 2, y - t.height / 2, 0])
            self.titles.add(t)
            y -= t.height + 0.22
            for r in rows:
                name, value, figure, color = r
                yc = y - row_step / 2
                n = names[id(r)]
                n.move_to([name_w - n.width / 2, yc, 0])
                length = max(self.unit * math.log10(value), 0.02)
                bar = Rectangle(width=length, height=bar_height, stroke_width=0)
                bar.set_fill(color, opacity=0.85).move_to([x0 + length / 2, yc, 0])
                bar.value = float(value)
                f = label(figure, font_size, th.text)
                f.move_to([x0 + length + 0.15 + f.width / 2, yc, 0])
                self.names.add(n)
                self.bars.add(bar)
                self.figures.add(f)
                y -= row_step
            y -= 0.12
        # the axis: a line from 1 to the top power of ten, a tick and a label at each power of ten
        ay = y - 0.05
        self.axis = Line([x0, ay, 0], [x0 + bar_width, ay, 0], stroke_color=th.dim, stroke_width=2)
        # a tick at every power of ten; a label at every one, or every second (third) one where they
        # would crowd (a label such as 10⁴ is about half a unit wide at this size)
        step = 1 if self.unit >= 0.65 else (2 if self.unit >= 0.33 else 3)
        self.ticks, self.tick_labels = VGroup(), VGroup()
        for k in range(0, self.decades + 1):
            x = x0 + k * self.unit
            self.ticks.add(Line([x, ay, 0], [x, ay - (0.1 if k % step == 0 else 0.06), 0], stroke_color=th.dim,
                                stroke_width=2))
            if k % step:
                continue
            src = "1" if k == 0 else ("10" if k == 1 else f"10^{k}")
            lab = typeset(src, small * 1.33, th.dim)
            lab.move_to([x, ay - 0.16 - lab.height / 2, 0])
            if k > 0:  # every power of ten on one baseline: the exponent sits above it
                lab.shift(UP * (self.tick_labels[0].get_bottom()[1] - lab.get_bottom()[1]))
            self.tick_labels.add(lab)
        self.label_step = 10 ** step  # the factor from one labelled tick to the next
        self.axis_title = label(axis_title(self.label_step) if callable(axis_title) else axis_title, small, th.dim)
        self.axis_title.next_to(self.tick_labels, DOWN, buff=0.15)
        self.axis_title.set_x(max(x0 + bar_width / 2, self.axis_title.width / 2))
        self.add(self.titles, self.names, self.bars, self.figures, self.axis, self.ticks,
                 self.tick_labels, self.axis_title)

    def value_of(self, bar) -> float:
        """The value a drawn bar stands for, read off the scale."""
        return float(10 ** (bar.width / self.unit))


__all__ = ["LogBars"]
