"""Plan of `kv_cache` (no manim, no torch at import): generation one token at a time with a
key/value cache, run by the model itself (model/kv_cache.py) when the lesson's setting is made.

The lesson needs more than traces: the model session it is given (`SceneInputs.tracer`, a
`model.session.ModelSession`) generates. The generation is stored in the setting's options
(`KV_GENERATION`), so the plan stays a plain function of the setting."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attention_manim.model.errors import UserError

from ..setting import SceneInputs, Setting

NEW_TOKENS = 3  # tokens generated after the prompt
MAX_PROMPT = 8  # prompt tokens fed (a longer sentence is cut: every step is drawn)
KV_GENERATION = "kv_cache_generation"  # Setting.options key
SHOWN_DIMS = 2  # entries of each cached key/value shown (then an ellipsis and the last)


def session_of(inputs: SceneInputs, does: str):
    """The model session the scene was given, which must be able to `does` (generate, ...)."""
    if not callable(getattr(inputs.tracer, does, None)):
        raise UserError("this scene runs the model itself, but it was given only a tracer",
                        "pass a model session (attention_manim.model.session.open_session) as SceneInputs.tracer",
                        key="needs_session")
    return inputs.tracer


def with_generation(setting: Setting, inputs: SceneInputs, new_tokens: int = NEW_TOKENS) -> Setting:
    session = session_of(inputs, "generate")
    ids = list(setting.trace.token_ids)[:MAX_PROMPT]
    new = max(0, min(new_tokens, setting.model.n_ctx - len(ids)))
    gen = session.generate(ids, new, setting.head.layer, setting.head.head)
    return replace(setting, options={**setting.options, KV_GENERATION: gen})


@dataclass(frozen=True)
class KvStep:
    position: int
    token: str
    generated: bool
    next_token: str  # what the model predicts after this step (greedy)
    q: np.ndarray  # [d_head] the new token's query (the chosen head; after rotation on a rotary model)
    k: np.ndarray  # [d_head] the new key, appended to the cache
    v: np.ndarray  # [d_head]
    weights: np.ndarray  # [position + 1] the new token's attention over the cache (chosen head)
    macs_cached: int
    macs_full: int
    max_diff: float  # |logits cached − logits recomputed|, max over the vocabulary
    same: bool  # the same most likely next token both ways


@dataclass(frozen=True)
class KvCachePlan:
    steps: tuple[KvStep, ...]
    prompt_len: int
    layer: int
    head: int
    kv_head: int
    n_layers: int
    d_head: int
    total_cached: int
    total_full: int
    max_diff: float
    same_tokens: bool
    cache_floats: int  # numbers in the whole cache (every layer, keys and values) at the end
    model_name: str

    @property
    def saving(self) -> float:
        return self.total_full / self.total_cached if self.total_cached else 1.0


def plan_kv_cache(setting: Setting) -> KvCachePlan:
    if KV_GENERATION not in setting.options:
        raise ValueError("the kv_cache chapter needs its generation: make the setting with with_generation "
                         "(KvCacheLesson does)")
    gen = setting.options[KV_GENERATION]
    out = []
    for i, s in enumerate(gen.steps):
        nxt = gen.steps[i + 1].token if i + 1 < len(gen.steps) else None
        if nxt is None or gen.steps[i + 1].token_id != s.next_id:
            vocab = setting.trace.vocab
            nxt = vocab[s.next_id] if s.next_id < len(vocab) else str(s.next_id)
        out.append(KvStep(position=s.position, token=s.token, generated=s.generated, next_token=nxt,
                          q=s.q.astype(float), k=s.k.astype(float), v=s.v.astype(float), weights=s.weights.astype(float),
                          macs_cached=s.macs_cached, macs_full=s.macs_full, max_diff=s.max_diff,
                          same=s.next_id == s.next_id_full))
    return KvCachePlan(steps=tuple(out), prompt_len=gen.prompt_len, layer=gen.layer, head=gen.head,
                       kv_head=gen.kv_head, n_layers=gen.n_layers, d_head=gen.d_head,
                       total_cached=gen.total_cached, total_full=gen.total_full, max_diff=gen.max_diff,
                       same_tokens=gen.same_tokens, cache_floats=gen.steps[-1].cache_floats,
                       model_name=setting.model.name)
