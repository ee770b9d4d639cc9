"""Bar charts of probabilities with word labels (next-token predictions).

    bars = ProbabilityBars.from_logits(trace.logits[-1], trace.vocab, top_k=6, theme=theme)
    self.play(bars.grow())

Horizontal bars, one per word, longest first: word on the left, bar, then the real probability
with two decimals. Bar lengths are proportional to the probabilities (`bars.unit` scene units per
1.0 of probability, the same for every bar), so equal-looking bars really are equal.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, AnimationGroup, FadeIn, GrowFromEdge, Line, Rectangle, VGroup

from ..style import DARK, Theme
from .text import label, number, text_baseline


def round_ticks(top: float, most: int = 6, past_top: bool = False) -> tuple[list[float], int]:
    """Round values from 0 for a bar chart's axis, 1, 2 or 5 times a power of ten apart: the closest spacing that
    gives at most `most` of them; and the decimals that write them. They stop at or under `top`, or, with
    `past_top`, the last one is the first round value at or above `top` (the axis then ends on a tick)."""
    if top <= 0:
        return [0.0], 0
    power = 10.0 ** np.floor(np.log10(top) - 1)
    for step in (power * f for f in (1, 2, 5, 10, 20, 50)):
        count = int(np.ceil(top / step - 1e-9) if past_top else int(top / step + 1e-9)) + 1
        if count <= most:
            break
    return [float(round(k * step, 12)) for k in range(count)], max(0, int(-np.floor(np.log10(step) + 1e-9)))


def softmax(logits: np.ndarray) -> np.ndarray:
    z = np.asarray(logits, dtype=np.float64)
    z = z - z.max()
    e = np.exp(z)
    return e / e.sum()


class ProbabilityBars(VGroup):
    """One bar per (word, probability). `max_length`: length of the longest bar.

    Parts: `.bars` (Rectangles), `.words`, `.values` (number mobjects, kind "weight"), `.rows`
    (one VGroup per entry), `.probs` (as given), `.unit`. `color` is one colour or one per bar."""

    def __init__(self, words: Sequence[str], probs: Sequence[float], *, theme: Theme = DARK,
                 max_length: float = 4.0, bar_height: float = 0.32, gap: float = 0.14,
                 font_size: float = 26, color: str | Sequence[str] | None = None,
                 highlight: int | None = None):
        super().__init__()
        self.theme = theme
        self.words_text = [str(w) for w in words]
        self.probs = np.asarray(probs, dtype=float)
        if len(self.words_text) != len(self.probs):
            raise ValueError("one probability per word")
        top = float(self.probs.max()) if len(self.probs) else 1.0
        self.unit = max_length / top if top > 0 else max_length
        colors = [color] * len(self.probs) if (color is None or isinstance(color, str)) else list(color)
        cap = label("H", font_size=font_size, color=theme.text).height  # words sit on one baseline per bar
        self.words, self.bars, self.values, self.rows = VGroup(), VGroup(), VGroup(), VGroup()
        for k, (w, p) in enumerate(zip(self.words_text, self.probs)):
            c = colors[k] or (theme.highlight if k == highlight else theme.delta_multi)
            y = -k * (bar_height + gap)
            bar = Rectangle(width=max(p * self.unit, 1e-4), height=bar_height, stroke_width=0,
                            fill_color=c, fill_opacity=0.85)
            bar.move_to([0, y, 0], aligned_edge=LEFT)
            word = label(w, font_size=font_size, color=theme.text)
            word.next_to([0, y, 0], LEFT, buff=0.18)
            word.shift(UP * (y - cap / 2 - text_baseline(word)))  # "your" centred by its box stood high
            val = number(p, "weight", font_size=font_size * 0.85, color=theme.text)
            val.next_to(bar, RIGHT, buff=0.15)
            self.bars.add(bar)
            self.words.add(word)
            self.values.add(val)
            self.rows.add(VGroup(word, bar, val))
        self.axis = VGroup()
        if len(self.probs):
            self.axis = Line(self.bars.get_corner(UP + LEFT) + UP * gap / 2,
                             self.bars.get_corner(DOWN + LEFT) + DOWN * gap / 2,
                             stroke_color=theme.dim, stroke_width=1.5)
        self.add(self.axis, self.rows)
        self.center()

    @classmethod
    def from_logits(cls, logits: np.ndarray, vocab: Sequence[str], top_k: int = 8, **kwargs) -> "ProbabilityBars":
        """The `top_k` most likely next words from one position's real logits (softmax over the
        whole vocabulary, so the shown probabilities are the model's, not renormalized)."""
        p = softmax(logits)
        if len(vocab) != len(p):
            raise ValueError(f"vocabulary has {len(vocab)} words but the logits {len(p)} entries")
        order = np.argsort(-p, kind="stable")[:top_k]
        bars = cls([vocab[i] for i in order], p[order], **kwargs)
        bars.token_ids = [int(i) for i in order]
        return bars

    def bar_length(self, k: int) -> float:
        return self.bars[k].width

    def grow(self, lag_ratio: float = 0.1, **kwargs) -> AnimationGroup:
        """Bars grow from the left, the numbers fade in behind them."""
        anims = [AnimationGroup(GrowFromEdge(b, LEFT), FadeIn(v, shift=RIGHT * 0.2))
                 for b, v in zip(self.bars, self.values)]
        return AnimationGroup(FadeIn(self.words), FadeIn(self.axis), AnimationGroup(*anims, lag_ratio=lag_ratio), **kwargs)


__all__ = ["ProbabilityBars", "softmax"]
