"""An arrow of the 3-D embedding space (`space3d.EmbeddingSpace`): a straight shaft and a cone tip."""

from __future__ import annotations

import numpy as np
from manim import OUT, Line, VectorizedPoint, VGroup

from .cone_tip import cone_tip
from .screen_boxes import centre_of


class SpaceArrow(VGroup):
    """A straight arrow with a cone tip. `.vector` is the real d_model vector it stands for (or
    the difference), `.coords` its projection; `start_point()`/`end_point()` follow the drawing."""

    def __init__(self, start: np.ndarray, end: np.ndarray, color: str, *, stroke_width: float = 5,
                 tip_length: float = 0.22, tip_radius: float = 0.08):
        super().__init__()
        start, end = np.asarray(start, float), np.asarray(end, float)
        d = end - start
        length = float(np.linalg.norm(d))
        u = d / length if length > 1e-9 else OUT
        tl = min(tip_length, 0.45 * length) if length > 1e-9 else 0.0
        self.shaft = Line(start, end - u * tl, stroke_color=color, stroke_width=stroke_width)
        self.tip = cone_tip(end, u, max(tl, 1e-3), tip_radius * (tl / tip_length if tip_length else 1), color)
        self._start = VectorizedPoint(start)
        self._end = VectorizedPoint(end)
        self.add(self.shaft, self.tip, self._start, self._end)
        self.color_hex = color

    def start_point(self) -> np.ndarray:
        return centre_of(self._start)

    def end_point(self) -> np.ndarray:
        return centre_of(self._end)
