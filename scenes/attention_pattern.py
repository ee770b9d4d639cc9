"""attention_pattern: the finished attention pattern of one head on any sentence (the quick
end-to-end scene). The drawing is `GridSteps.step_pattern` (scenes/one_head_grid.py), so the
flagship can play it too."""

from __future__ import annotations

from .base import TraceScene
from .one_head_grid import GridSteps
from .registry import register


@register("attention_pattern")
class AttentionPattern(GridSteps, TraceScene):
    description = "the finished attention pattern of one head on any sentence (dots sized by weight)"

    def construct(self):
        self.step_pattern()
