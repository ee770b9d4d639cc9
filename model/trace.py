"""The trace: every number one forward pass produced, as plain numpy arrays.

This module is the single contract between `model/` (torch) and `scenes/` (manim). It imports
neither: scenes read a Trace without pulling in torch, and the model fills one in.

Orientation follows torch and the papers: attention arrays are `[query, key]`. The video draws
keys as rows and queries as columns, which is the transpose; scenes transpose explicitly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ModelInfo:
    """What a scene or a JSON reader needs to know about the model that made a trace."""

    name: str
    d_model: int
    n_heads: int
    d_head: int
    n_layers: int
    n_ctx: int
    causal: bool
    d_mlp: int = 0
    layernorm: bool = False
    vocab_size: int = 0
    roles: dict = field(default_factory=dict)  # role id -> (layer, head), e.g. "adjective_noun" -> (0, 0)
    examples: dict = field(default_factory=dict)  # example id -> sentence the model tells its stories with

    def head_for_role(self, role: str) -> tuple[int, int] | None:
        """(layer, head) of the head that plays `role`, or None when this model names no such head."""
        hit = self.roles.get(role)
        return (int(hit[0]), int(hit[1])) if hit is not None else None


@dataclass(frozen=True)
class HeadTrace:
    """One head of one layer. Shapes: n = number of tokens."""

    layer: int
    head: int
    name: str  # the head's role in English words if known ("adjectives → nouns"), else "L0H3"
    q: np.ndarray  # [n, d_head]
    k: np.ndarray  # [n, d_head]
    v: np.ndarray  # [n, d_head]  value-down: the attention input times W_V[h]
    scores: np.ndarray  # [n_query, n_key]  q·k / sqrt(d_head), before the mask
    mask: np.ndarray  # [n_query, n_key]  bool, True = blocked
    pattern: np.ndarray  # [n_query, n_key]  softmax of the masked scores; rows sum to 1
    z: np.ndarray  # [n, d_head]  pattern @ v
    delta_e: np.ndarray  # [n, d_model]  z @ W_O[h]: this head's proposed change to each embedding
    W_Q: np.ndarray  # [d_model, d_head]
    W_K: np.ndarray  # [d_model, d_head]
    W_V: np.ndarray  # [d_model, d_head]  the video's "value-down"
    W_O: np.ndarray  # [d_head, d_model]  the video's "value-up"
    b_Q: np.ndarray  # [d_head] (zeros when the model has no biases)
    b_K: np.ndarray  # [d_head]
    b_V: np.ndarray  # [d_head]
    role: str = ""  # language-neutral role id ("adjective_noun"); "" when the model names none

    @property
    def masked_scores(self) -> np.ndarray:
        """Scores with blocked entries set to -inf: what the softmax actually sees."""
        return np.where(self.mask, -np.inf, self.scores)


@dataclass(frozen=True)
class LayerTrace:
    """One block: attention (all heads summed) then the optional MLP."""

    index: int
    heads: tuple[HeadTrace, ...]
    resid_in: np.ndarray  # [n, d_model] the residual stream entering the block
    attn_in: np.ndarray  # [n, d_model] what the heads read (resid_in, after LayerNorm if any)
    delta_e: np.ndarray  # [n, d_model] sum of the heads' delta_e plus the output bias
    resid_mid: np.ndarray  # [n, d_model] resid_in + delta_e
    mlp_out: np.ndarray  # [n, d_model] zeros when the model has no MLP
    residual_out: np.ndarray  # [n, d_model] resid_mid + mlp_out: the block's output


@dataclass(frozen=True)
class Trace:
    """A whole forward pass on one sentence."""

    text: str
    model: ModelInfo
    tokens: tuple[str, ...]
    token_ids: tuple[int, ...]
    token_embeddings: np.ndarray  # [n, d_model] the lookup alone (identical for repeated words)
    position_embeddings: np.ndarray  # [n, d_model]
    embeddings: np.ndarray  # [n, d_model] token + position: the input to layer 0
    layers: tuple[LayerTrace, ...]
    final: np.ndarray  # [n, d_model] the last residual stream (after the final LayerNorm if any)
    logits: np.ndarray  # [n, vocab] next-token logits at every position
    vocab: tuple[str, ...] = ()
    directions: dict[str, np.ndarray] = field(default_factory=dict)  # name -> unit vector [d_model]

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    def head(self, layer: int, head: int) -> HeadTrace:
        return self.layers[layer].heads[head]

    def index_of(self, word: str, occurrence: int = -1) -> int:
        """Position of `word` in the tokens (last occurrence by default); ValueError if absent."""
        hits = [i for i, t in enumerate(self.tokens) if t == word.lower()]
        if not hits:
            raise ValueError(f"{word!r} is not in the sentence {self.text!r} (tokens: {' '.join(self.tokens)})")
        return hits[occurrence]

    def direction(self, name: str) -> np.ndarray:
        try:
            return self.directions[name]
        except KeyError:
            known = ", ".join(sorted(self.directions)) or "(this model has no named directions)"
            raise KeyError(f"unknown direction {name!r}; known: {known}") from None

    def project(self, vectors: np.ndarray, names: list[str]) -> np.ndarray:
        """Coordinates of `vectors` ([..., d_model]) along the named unit directions ([..., len(names)])."""
        basis = np.stack([self.direction(n) for n in names], axis=-1)
        return np.asarray(vectors) @ basis

    def updated(self, layer: int = 0, head: int | None = None) -> np.ndarray:
        """E' = E + ΔE after `layer`'s attention: one head's ΔE, or all heads' when head is None."""
        lt = self.layers[layer]
        delta = lt.delta_e if head is None else lt.heads[head].delta_e
        return lt.resid_in + delta

    def to_dict(self) -> dict:
        """The public JSON shape of `render.py inspect --json` (documented in the README)."""
        m = self.model

        def arr(a):
            return np.asarray(a).tolist()

        return {
            "model": {
                "name": m.name,
                "d_model": m.d_model,
                "n_heads": m.n_heads,
                "d_head": m.d_head,
                "n_layers": m.n_layers,
                "causal": m.causal,
                "n_ctx": m.n_ctx,
            },
            "text": self.text,
            "tokens": list(self.tokens),
            "embeddings": arr(self.embeddings),
            "directions": {k: arr(v) for k, v in self.directions.items()},
            "layers": [
                {
                    "heads": [
                        {
                            "name": h.name,
                            "q": arr(h.q),
                            "k": arr(h.k),
                            "v": arr(h.v),
                            "scores": arr(h.scores),
                            "mask": arr(h.mask),
                            "pattern": arr(h.pattern),
                            "delta_e": arr(h.delta_e),
                        }
                        for h in lt.heads
                    ],
                    "delta_e": arr(lt.delta_e),
                    "residual_out": arr(lt.residual_out),
                }
                for lt in self.layers
            ],
        }
