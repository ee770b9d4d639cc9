"""What the colours of a weight matrix or a heat map mean: a bar coloured by the same function as
the entries (`signed_color`: negative red, positive blue, brighter = larger), from the smallest to
the largest value shown, with those two real values at its ends and 0 where it falls between them.

    scale = ColorScale(values.min(), values.max(), scale=np.abs(values).max(), caption=say("common.colour.scale"))
    scale.end_mobs[0].value == values.min()

The ends are numbers from the data (pass them from the plan), written with `number()`'s `kind`.
"""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Line, Rectangle, VGroup

from ..style import DARK, Theme
from .matrices import signed_color
from .text import label, number

SCALE_FS = 18  # digits ≈ 16 px at 720p


class ColorScale(VGroup):
    """A horizontal bar from `low` to `high`, each slice coloured as an entry of that value is
    (`signed_color(value, scale)`), the two ends written under it and a tick at 0, a caption above."""

    def __init__(self, low: float, high: float, *, scale: float, caption: str, theme: Theme = DARK,
                 kind: str = "vec", width: float = 2.4, height: float = 0.24, font_size: float = SCALE_FS,
                 steps: int = 48):
        super().__init__()
        low, high = float(low), float(high)
        if not high > low:
            raise ValueError(f"a colour scale needs low < high, got {low} and {high}")
        self.low, self.high, self.scale_ref = low, high, float(scale)
        values = np.linspace(low, high, steps)
        self.slice_values = values
        w = width / steps
        bar = VGroup()
        for i, v in enumerate(values):
            r = Rectangle(width=w * 1.02, height=height, stroke_width=0)
            r.set_fill(signed_color(v, scale, theme), opacity=1.0)
            r.move_to([-width / 2 + (i + 0.5) * w, 0, 0])
            bar.add(r)
        self.bar = bar
        frame = self.frame_rect = Rectangle(width=width, height=height, stroke_width=1.0, stroke_color=theme.dim)
        self.end_mobs = [number(low, kind, font_size, theme.text), number(high, kind, font_size, theme.text)]
        self.end_mobs[0].next_to(bar, DOWN, buff=0.08).align_to(bar, LEFT)
        self.end_mobs[1].next_to(bar, DOWN, buff=0.08).align_to(bar, RIGHT)
        marks = VGroup()
        self.zero_mob = None
        if low < 0 < high:  # where 0 falls, when it is neither end
            x = -width / 2 + width * (0 - low) / (high - low)
            tick = Line([x, -height / 2 - 0.06, 0], [x, height / 2 + 0.06, 0], stroke_width=1.5, color=theme.text)
            zero = label("0", font_size, theme.text).next_to(tick, DOWN, buff=0.04)
            zero.value, zero.shown = 0.0, "0"
            ends = VGroup(*self.end_mobs)
            clear = all(abs(zero.get_x() - e.get_x()) > (zero.width + e.width) / 2 + 0.08 for e in ends)
            marks.add(tick)
            if clear:
                marks.add(zero)
                self.zero_mob = zero
        self.caption = label(caption, font_size, theme.text).next_to(bar, UP, buff=0.12)
        self.add(bar, frame, marks, *self.end_mobs, self.caption)


__all__ = ["ColorScale"]
