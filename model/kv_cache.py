"""Generation one token at a time with a key/value cache, on any loaded model (torch, no manim).

Each step feeds ONE token: its embedding goes through every block, where only its own query, key
and value are computed; the keys and values of every earlier token come from the cache (per layer,
per key/value head; with rotary positions keys are cached AFTER their rotation, so they never need
touching again), the new key and value are appended, and the new token's query attends to all of
them. No mask is needed: the cache holds only the past. The prompt is fed the same way, one token
per step; after it the most likely next token (greedy) is fed back.

`generate` also runs the full recomputation (the whole text so far through `model.forward`, as if
there were no cache) at every step and keeps both logits, so the equality can be checked.

Multiply-adds (one multiplication and one addition) are counted from the shapes, for matrix
products only (norms, softmax, rotary and the activation are left out in both ways):
with D = d_model, d = d_head, H query heads, G key/value heads, F = d_mlp (×2 for a plain MLP,
×3 for SwiGLU's gate), V = vocab, L = the tokens so far (the new one included), per layer:
    cached step:  D·d·(H + 2G)   + 2·H·L·d          + H·d·D  + mlp·D·F
                  (q,k,v of 1)     (scores, weighted sum over L keys)  (W_O)   (MLP of 1)
    full step:    L·D·d·(H + 2G) + 2·H·L·L·d        + L·H·d·D + L·mlp·D·F
and, once per step in both ways, the unembedding of the last position, D·V.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from .errors import UserError
from .transformer import rotate_half


@dataclass(frozen=True)
class CacheStep:
    position: int  # the position of the token fed at this step
    token_id: int
    token: str  # as shown
    generated: bool  # False: a prompt token; True: the previous step's most likely next token
    q: np.ndarray  # [d_head] its query at the chosen layer/head (after rotation)
    k: np.ndarray  # [d_head] its key (the chosen head's key/value head, after rotation): appended to the cache
    v: np.ndarray  # [d_head] its value, appended to the cache
    weights: np.ndarray  # [position + 1] the chosen head's attention of the new token over the cache
    cache_len: int  # positions in the cache after this step
    cache_floats: int  # numbers held by the whole cache (every layer, k and v) after this step
    macs_cached: int  # multiply-adds of this step with the cache
    macs_full: int  # multiply-adds of recomputing everything for this step
    logits: np.ndarray  # [vocab] next-token logits from the cached step
    logits_full: np.ndarray  # [vocab] the same from the full recomputation
    next_id: int  # argmax of the cached logits
    next_id_full: int  # argmax of the recomputed logits

    @property
    def max_diff(self) -> float:
        return float(np.abs(self.logits - self.logits_full).max())


@dataclass(frozen=True)
class Generation:
    steps: tuple[CacheStep, ...]
    prompt_len: int
    layer: int
    head: int
    kv_head: int
    n_layers: int
    d_head: int

    @property
    def max_diff(self) -> float:
        return max(s.max_diff for s in self.steps)

    @property
    def same_tokens(self) -> bool:
        return all(s.next_id == s.next_id_full for s in self.steps)

    @property
    def keys(self) -> np.ndarray:
        """[positions, d_head] the chosen head's key cache at the end."""
        return np.stack([s.k for s in self.steps])

    @property
    def values(self) -> np.ndarray:
        return np.stack([s.v for s in self.steps])

    @property
    def total_cached(self) -> int:
        return sum(s.macs_cached for s in self.steps)

    @property
    def total_full(self) -> int:
        return sum(s.macs_full for s in self.steps)


def step_macs(cfg, L: int) -> tuple[int, int]:
    """(cached, full) multiply-adds of one step at context length L (the formula in the module doc)."""
    D, d, H, G, V = cfg.d_model, cfg.d_head, cfg.n_heads, cfg.n_kv_heads, cfg.vocab_size
    mlp = (3 if cfg.mlp == "swiglu" else 2) * D * cfg.d_mlp if cfg.d_mlp else 0
    proj = D * d * (H + 2 * G)
    cached = cfg.n_layers * (proj + 2 * H * L * d + H * d * D + mlp) + D * V
    full = cfg.n_layers * (L * proj + 2 * H * L * L * d + L * H * d * D + L * mlp) + D * V
    return cached, full


def _step_block(block, x, cache: list, pos: int, rot, record: dict | None):
    """One block on the new token x [1, 1, D]; cache = [K, V] ([1, G, pos, d] or None), extended in place."""
    cfg = block.cfg
    a = block.ln1(x)
    q = torch.einsum("bnD,hDd->bhnd", a, block.W_Q) + block.b_Q[:, None, :]
    k = torch.einsum("bnD,hDd->bhnd", a, block.W_K) + block.b_K[:, None, :]
    v = torch.einsum("bnD,hDd->bhnd", a, block.W_V) + block.b_V[:, None, :]
    if rot is not None:
        cos, sin = rot[0][pos:pos + 1], rot[1][pos:pos + 1]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
    K = k if cache[0] is None else torch.cat((cache[0], k), dim=2)
    V = v if cache[1] is None else torch.cat((cache[1], v), dim=2)
    cache[0], cache[1] = K, V
    if cfg.n_kv_heads != cfg.n_heads:
        group = cfg.n_heads // cfg.n_kv_heads
        K_h, V_h = K.repeat_interleave(group, dim=1), V.repeat_interleave(group, dim=1)
    else:
        K_h, V_h = K, V
    scores = torch.einsum("bhqd,bhkd->bhqk", q, K_h) / math.sqrt(cfg.d_head)
    pattern = torch.softmax(scores, dim=-1)
    z = torch.einsum("bhqk,bhkd->bhqd", pattern, V_h)
    out = torch.einsum("bhnd,hdD->bhnD", z, block.W_O).sum(1) + block.b_O
    if record is not None:
        record.update(q=q, k=k, v=v, pattern=pattern)
    x = x + out
    return x + block.mlp(x)


@torch.no_grad()
def generate(model, prompt_ids: list[int], new_tokens: int = 3, layer: int = 0, head: int = 0) -> Generation:
    """Feed the prompt one token at a time, then `new_tokens` greedy tokens, with a key/value cache;
    record the chosen layer/head's q, k, v and weights per step, and check against full recomputation."""
    cfg = model.cfg
    prompt_ids = [int(i) for i in prompt_ids]
    if not prompt_ids:
        raise UserError("the prompt has no tokens", "give at least one word", key="prompt_empty")
    total = len(prompt_ids) + new_tokens
    if total > cfg.n_ctx:
        raise UserError(f"{total} tokens would not fit the model's context of {cfg.n_ctx}",
                        "use a shorter sentence", key="generation_too_long", total=total, n_ctx=cfg.n_ctx)
    if not (0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads):
        raise UserError(f"no head L{layer}H{head} in this model", key="generation_no_head", layer=layer, head=head)
    dev = model.device
    rot = model.rotary(total)
    caches = [[None, None] for _ in model.blocks]
    g = cfg.kv_head(head)
    shown = model.tokenizer.shown if hasattr(model.tokenizer, "shown") else None
    ids = list(prompt_ids)
    steps = []
    pos = 0
    while pos < total:
        tid = ids[pos]
        x = model.W_E[tid][None, None, :]
        if cfg.positions == "learned":
            x = x + model.W_pos[pos][None, None, :]
        rec: dict = {}
        for li, block in enumerate(model.blocks):
            x = _step_block(block, x, caches[li], pos, rot, rec if li == layer else None)
        logits = (model.ln_final(x) @ model.unembed())[0, -1]
        full = model.forward(torch.tensor([ids[:pos + 1]], device=dev))[0, -1]
        L = pos + 1
        mc, mf = step_macs(cfg, L)

        def np_(t):
            return t.detach().to("cpu", torch.float32).numpy().copy()

        nxt = int(logits.argmax())
        steps.append(CacheStep(
            position=pos, token_id=tid, token=shown[tid] if shown is not None else cfg.vocab[tid],
            generated=pos >= len(prompt_ids), q=np_(rec["q"][0, head, 0]), k=np_(rec["k"][0, g, 0]),
            v=np_(rec["v"][0, g, 0]), weights=np_(rec["pattern"][0, head, 0]), cache_len=L,
            cache_floats=2 * cfg.n_layers * cfg.n_kv_heads * cfg.d_head * L, macs_cached=mc, macs_full=mf,
            logits=np_(logits), logits_full=np_(full), next_id=nxt, next_id_full=int(full.argmax())))
        if pos + 1 >= len(ids):
            ids.append(nxt)
        pos += 1
    return Generation(steps=tuple(steps[:total]), prompt_len=len(prompt_ids), layer=layer, head=head, kv_head=g,
                      n_layers=cfg.n_layers, d_head=cfg.d_head)

