"""attention_pattern: the model's real attention pattern for one head, as a grid of dots."""

from __future__ import annotations

from manim import DOWN, UP, FadeIn, Write

from .base import TraceScene
from .components.text import label
from .components.word_boxes import WordBoxes
from .components.attention_grid import AttentionGrid
from .registry import register


@register("attention_pattern")
class AttentionPattern(TraceScene):
    description = "the finished attention pattern of one head on any sentence (dots sized by weight)"

    def construct(self):
        th = self.theme
        ht = self.head_trace()
        tokens = self.trace.tokens
        title = label(f"layer {self.layer}, head {self.head_index}: {ht.name}", font_size=30, color=th.text)
        title.to_edge(UP, buff=0.25)
        words = WordBoxes(tokens, theme=th)
        words.scale_to_fit_width(min(words.width, 12.5)).next_to(title, DOWN, buff=0.25)
        grid = AttentionGrid(ht, tokens, layout=self.inputs.layout, theme=th)
        grid.scale_to_fit_height(min(grid.height, 7.8 - 0.9 - words.height - title.height - 0.6))
        grid.next_to(words, DOWN, buff=0.3)
        self.grid = grid
        self.caption(f"The sentence: {' '.join(tokens)}.", 2)
        self.play(Write(title), FadeIn(words), run_time=1)
        self.play(FadeIn(grid.frame_mobjects()), run_time=1)
        self.play(grid.grow_dots(), run_time=2)
        self.wait(1)
