"""Plans of the `components` gallery: the real numbers each reusable piece is shown with."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_manim.model.trace import HeadTrace, Trace

from ..setting import HeadRef, Setting
from .space import choose_axes, pick_axes, resolve_axes

BARS = 6  # next-word candidates in the bar chart


@dataclass(frozen=True)
class GalleryPlan:
    """One plan serves every beat of the gallery (each beat reads what it draws)."""

    trace: Trace
    tokens: tuple[str, ...]
    focus: int  # the word the gallery follows (the head's gathering word, or --focus)
    head: HeadRef
    head_trace: HeadTrace
    layout: str
    embedding: np.ndarray  # E of the focus word entering the layer (token + position in layer 0) [d_model]
    head_input: np.ndarray  # what the head reads for it (E itself when the model has no LayerNorm)
    updated: np.ndarray  # E′ = E + this head's ΔE
    axes: tuple[str, ...]  # the space's three directions
    named: tuple[bool, ...]
    coords: np.ndarray  # [3, 3]: E, ΔE, E′ on the axes
    weights: np.ndarray  # the focus word's attention row
    next_words: tuple[tuple[str, float], ...]  # the model's top next words after the prefix, with probabilities

    @property
    def position(self) -> int:
        """The focus word's position as the video numbers words (from 1)."""
        return self.focus + 1


def plan_gallery(setting: Setting) -> GalleryPlan:
    tr = setting.trace
    ht = setting.head_trace()
    i = setting.focus_index()
    layer = setting.head.layer
    E = tr.layers[layer].resid_in[i]  # what enters the head's layer (the embedding itself in layer 0)
    E2 = tr.updated(layer, setting.head.head)[i]
    # the named directions along which E and E′ reach furthest, unless --axes chose them
    names = (resolve_axes(tr, setting.axes, (), [E, E2]) if setting.axes else pick_axes(tr, [E, E2]))
    names, basis, named = choose_axes(tr, names)
    nexts: tuple = ()
    if tr.vocab:
        logits = np.asarray(tr.logits[i], float)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        nexts = tuple((tr.vocab[k], float(p[k])) for k in np.argsort(-p, kind="stable")[: min(BARS, len(tr.vocab))])
    return GalleryPlan(trace=tr, tokens=tr.tokens, focus=i, head=setting.head, head_trace=ht, layout=setting.layout,
                       embedding=E, head_input=tr.layers[layer].attn_in[i], updated=E2, axes=tuple(names),
                       named=tuple(named), coords=np.array([E, E2 - E, E2]) @ basis, weights=ht.pattern[i],
                       next_words=nexts)
