"""What every scene shares: its inputs, the trace it draws, the theme, captions.

A scene receives a `SceneInputs` at construction. It never runs the model itself: `inputs.tracer`
is a function from a sentence to a Trace (the CLI and the tests pass one that runs the model), so
this package never imports torch.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from manim import FadeOut, MovingCameraScene, ThreeDScene, config

from model.errors import UserError
from model.trace import HeadTrace, Trace

from .style import Theme, get_theme

READING_CHARS_PER_SECOND = 17.0  # how long a caption stays up, at least


from .setting import SceneInputs  # noqa: E402  (re-exported)


def find_head(trace: Trace, layer: int, keyword: str) -> int:
    """The first head of `layer` whose name contains `keyword`, else 0."""
    for h in trace.layers[layer].heads:
        if keyword in h.name.lower():
            return h.head
    return 0


class TraceMixin:
    """Inputs, trace access, validation and captions for scenes of any manim base class."""

    description = ""  # one line for `render.py list`
    default_sentences: tuple[str, ...] = ("a fluffy blue creature roamed the verdant forest",)
    default_focus: str | None = None  # None: pick from the trace (e.g. the most-attending noun)
    default_head_keyword = "adjective"
    max_sentences = 1

    def __init__(self, inputs: SceneInputs, **kwargs):
        self.inputs = inputs
        self.theme: Theme = get_theme(inputs.theme)
        self.sentences = list(inputs.sentences or self.default_sentences)
        if len(self.sentences) > self.max_sentences:
            raise UserError(f"this scene takes at most {self.max_sentences} sentence(s), got {len(self.sentences)}")
        self.traces = [inputs.tracer(s) for s in self.sentences]
        self.trace = self.traces[0]
        self.layer = inputs.layer or 0
        n_layers = self.trace.model.n_layers
        if not 0 <= self.layer < n_layers:
            raise UserError(f"layer {self.layer} is out of range: the model has {n_layers} layer(s) (0..{n_layers - 1})")
        n_heads = self.trace.model.n_heads
        if inputs.head is None:
            self.head_index = find_head(self.trace, self.layer, self.default_head_keyword)
        else:
            self.head_index = inputs.head
            if not 0 <= self.head_index < n_heads:
                raise UserError(f"head {self.head_index} is out of range: the model has {n_heads} heads per layer (0..{n_heads - 1})")
        if inputs.layout not in ("video", "paper"):
            raise UserError(f"unknown layout {inputs.layout!r}", "use video or paper")
        self.focus = inputs.focus or self.default_focus
        if self.focus is not None:
            for t in self.traces:
                if self.focus.lower() not in t.tokens:
                    raise UserError(f"the focus word {self.focus!r} is not in the sentence {t.text!r}",
                                    f"pick one of: {' '.join(t.tokens)}")
        super().__init__(**kwargs)
        self.caption_log: list[tuple[str, float]] = []

    # --- data -------------------------------------------------------------------------------
    def head_trace(self, trace: Trace | None = None) -> HeadTrace:
        return (trace or self.trace).head(self.layer, self.head_index)

    def focus_index(self, trace: Trace | None = None) -> int:
        """Index of the focus word; without one, the word that looks away from itself the most
        (its off-diagonal weight, to one decimal), ties going to the word that gathers from more
        words (≥ 0.1 each), then to the earlier word: "creature" (fluffy, blue) before "forest"."""
        trace = trace or self.trace
        if self.focus is not None:
            return trace.index_of(self.focus)
        pattern = self.head_trace(trace).pattern.copy()
        np.fill_diagonal(pattern, 0.0)
        off_self = np.round(pattern.sum(axis=1), 1)
        gathered = (pattern >= 0.1).sum(axis=1)
        return max(range(len(pattern)), key=lambda i: (off_self[i], gathered[i], -i))

    # --- presentation -----------------------------------------------------------------------
    def setup(self):
        super().setup()
        self.camera.background_color = self.theme.background
        if config.transparent:
            self.camera.background_opacity = 0.0

    @contextmanager
    def narrating(self, text: str):
        """A sub-caption spanning exactly the plays inside the block, held on screen (by waiting at
        the end) at least as long as it takes to read: READING_CHARS_PER_SECOND."""
        start = self.renderer.time
        yield
        rest = len(text) / READING_CHARS_PER_SECOND - (self.renderer.time - start)
        if rest > 0.05:
            self.wait(rest)
        duration = self.renderer.time - start
        self.add_subcaption(text, duration=duration, offset=start - self.renderer.time)
        self.caption_log.append((text, duration))

    def clear_all(self, run_time: float = 0.5):
        """Fade out everything on screen."""
        if self.mobjects:
            self.play(*(FadeOut(m) for m in self.mobjects), run_time=run_time)
        self.clear()


class TraceScene(TraceMixin, MovingCameraScene):
    pass


class TraceScene3D(TraceMixin, ThreeDScene):
    pass
