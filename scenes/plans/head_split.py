"""Plan of `head_split_merge` (no manim): one long query (key, value) vector per token cut into
n_heads pieces of d_head; each head attends on its own; the heads' outputs concatenated and
multiplied by the stacked W_O give the layer's attention output, compared with the trace's.

All numbers come from the trace of the model in use: the long query vector is the attention input
times every head's W_Q side by side (before any rotary turn), which is exactly the heads' own
queries one after another; grouped-query models have fewer key/value heads (their long key and value
vectors are n_kv_heads × d_head long). GPT-2 small's split comes from its published config
(model.params.GPT2)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_manim.model.params import GPT2

from ..setting import Setting
from .low_rank import MAX_DECIMALS
from .windows import window_indices

SHOWN_HEAD, SHOWN_TAIL = 3, 1  # entries shown of a long vector: the first three and the last
MAX_GRIDS = 4  # heads' patterns drawn side by side, large enough for their token labels
ALIKE = 0.25  # two heads whose rows differ by less than this (mean total variation) look alike


def choice_queries(masks) -> list[int]:
    """The queries that have a choice: more than one key not masked (a causal first query sees only
    itself, so every head gives it the same weights). On screen each query's weights are a column."""
    m = np.asarray(masks[0], bool)
    return [q for q in range(m.shape[0]) if (~m[q]).sum() > 1]


def head_differences(patterns, masks) -> np.ndarray:
    """[H, H]: how differently two heads spread their weight, row by row: the total-variation distance
    ½·Σ_k |p_a[q, k] − p_b[q, k]| (0: the same weights, 1: no weight in common), averaged over the query
    rows that have a choice (more than one key not masked; a causal first row always reads itself)."""
    H = len(patterns)
    rows = choice_queries(masks)
    d = np.zeros((H, H))
    if not rows:
        return d
    for a in range(H):
        for b in range(a + 1, H):
            tv = 0.5 * np.abs(np.asarray(patterns[a])[rows] - np.asarray(patterns[b])[rows]).sum(axis=1)
            d[a, b] = d[b, a] = float(tv.mean())
    return d


def extreme_pairs(d: np.ndarray) -> tuple[tuple[int, int], tuple[int, int]]:
    """The closest and the farthest pair of heads (first in index order on ties)."""
    H = d.shape[0]
    pairs = [(a, b) for a in range(H) for b in range(a + 1, H)]
    if not pairs:
        return (0, 0), (0, 0)
    return min(pairs, key=lambda p: d[p]), max(pairs, key=lambda p: d[p])


@dataclass(frozen=True)
class HeadSplitPlan:
    tokens: tuple[str, ...]
    focus: int
    layer: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    rotary: bool
    q_long: np.ndarray  # [n_heads·d_head] attn_in[focus] · [W_Q of every head] + biases
    k_long: np.ndarray  # [n_kv_heads·d_head]
    v_long: np.ndarray  # [n_kv_heads·d_head]
    q_pieces_match: float  # max |q_long piece h − head h's own query| (before rotation): 0 up to rounding
    patterns: tuple[np.ndarray, ...]  # each head's pattern [query, key]
    masks: tuple[np.ndarray, ...]
    differences: np.ndarray  # [H, H] mean total-variation distance between heads' rows (head_differences)
    averaged: int  # how many queries that mean is over (those with a choice: choice_queries)
    closest: tuple[int, int]  # the pair of heads whose patterns differ least
    farthest: tuple[int, int]  # and most
    alike: bool  # the closest pair differs by less than ALIKE: the caption says they look alike
    grid_heads: tuple[int, ...]  # heads whose patterns are drawn: all up to MAX_GRIDS, else the two pairs
    z_concat: np.ndarray  # [n_heads·d_head] the heads' outputs for the focus, one after another
    merged: np.ndarray  # [d_model] z_concat · W_O (stacked) + output bias
    trace_out: np.ndarray  # [d_model] the trace's attention output for the focus (layer delta_e)
    has_bias: bool
    max_diff: float  # max |merged − trace_out|
    decimals: int  # digits printed: the most at which every shown entry reads the same both ways
    shown: tuple[int | None, ...]  # entries of the d_model vectors shown (None: the ellipsis)
    gpt2: tuple[int, int, int]  # GPT-2 small: (d_model, n_heads, d_head)
    model_name: str


def plan_head_split(setting: Setting) -> HeadSplitPlan:
    tr = setting.trace
    m = tr.model
    layer = setting.head.layer
    lt = tr.layers[layer]
    f = setting.focus_index()
    heads = lt.heads
    a = np.asarray(lt.attn_in[f], np.float64)
    WQ = np.hstack([np.asarray(h.W_Q, np.float64) for h in heads])
    bQ = np.concatenate([np.asarray(h.b_Q, np.float64) for h in heads])
    q_long = a @ WQ + bQ
    kv = {}
    for h in heads:
        kv.setdefault(h.kv_head, h)
    kv_heads = [kv[g] for g in sorted(kv)]
    k_long = np.concatenate([a @ np.asarray(h.W_K, np.float64) + h.b_K for h in kv_heads])
    v_long = np.concatenate([a @ np.asarray(h.W_V, np.float64) + h.b_V for h in kv_heads])
    d = m.d_head
    own = np.concatenate([np.asarray(h.q_unrotated[f], np.float64) for h in heads])
    z = np.concatenate([np.asarray(h.z[f], np.float64) for h in heads])
    WO = np.vstack([np.asarray(h.W_O, np.float64) for h in heads])
    head_sum = sum(np.asarray(h.delta_e[f], np.float64) for h in heads)
    trace_out = np.asarray(lt.delta_e[f], np.float64)
    bias = trace_out - head_sum  # the output bias (zeros without one)
    merged = z @ WO + bias
    shown = tuple(window_indices(m.d_model, SHOWN_HEAD, SHOWN_TAIL))
    diff = float(np.abs(merged - trace_out).max())
    decimals = 1
    for dec in range(MAX_DECIMALS, 0, -1):  # as output_matrix writes the same sum
        if all(f"{merged[i]:.{dec}f}" == f"{trace_out[i]:.{dec}f}" for i in shown if i is not None):
            decimals = dec
            break
    patterns = tuple(np.asarray(h.pattern, float) for h in heads)
    masks = tuple(np.asarray(h.mask, bool) for h in heads)
    dist = head_differences(patterns, masks)
    closest, farthest = extreme_pairs(dist)
    grid_heads = tuple(range(len(heads))) if len(heads) <= MAX_GRIDS else tuple(sorted({*closest, *farthest}))
    return HeadSplitPlan(
        tokens=tr.tokens, focus=f, layer=layer, d_model=m.d_model, n_heads=m.n_heads, n_kv_heads=len(kv_heads),
        d_head=d, rotary=m.rotary, q_long=q_long, k_long=k_long, v_long=v_long,
        q_pieces_match=float(np.abs(q_long - own).max()),
        patterns=patterns, masks=masks, differences=dist, averaged=len(choice_queries(masks)), closest=closest, farthest=farthest,
        alike=bool(dist[closest] < ALIKE), grid_heads=grid_heads,
        z_concat=z, merged=merged, trace_out=trace_out,
        has_bias=bool(np.abs(bias).max() > 1e-4 * max(1.0, float(np.abs(trace_out).max()))),
        max_diff=diff, decimals=decimals, shown=shown, gpt2=(GPT2.d_model, GPT2.n_heads, GPT2.d_head),
        model_name=m.name)
