"""Flash attention's tiled online softmax for one head, in numpy, with every intermediate kept.

Ordinary attention builds the whole n_q × n_k score matrix S = Q·Kᵀ/√d, softmaxes each row and
multiplies by V: n_q·n_k numbers of scores live in memory at once. The tiled way (Dao et al. 2022)
never holds S: queries are cut into blocks of `block_q` rows; for each query block, keys and values
stream past in blocks of `block_k` rows, and three running quantities per query row are updated:

    m  — the running maximum of the scores seen so far
    l  — the running sum of exp(score − m)
    O  — the running output: Σ exp(score − m)·v so far (unnormalized)

For a new key block with scores S_b (masked entries −∞):
    m_new = max(m, rowmax(S_b));  P = exp(S_b − m_new)
    l_new = exp(m − m_new)·l + rowsum(P)
    O_new = exp(m − m_new)·O + P·V_b
and after the last block the output row is O / l. It is the same number as softmax(S)·V, only the
order of the additions differs (rounding only: tests check 1e-6).

Peak memory, counted in floats of working storage for attention itself (Q, K, V and the output
are counted in neither way, they exist in both):
    ordinary: n_q·n_k (the score matrix; the weights overwrite it in place)
    tiled:    block_q·block_k (one block of scores, reused) + block_q·2 (m and l); the running O of a
              query block (block_q·d) is rows of the output being made, counted in neither way
A causal mask: key j is blocked for query i when j > i; a key block entirely in the future of a
query block is skipped (its step is recorded with `skipped=True`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class BlockStep:
    """One query block meeting one key/value block."""

    q_block: int  # index of the query block
    k_block: int  # index of the key/value block
    rows: tuple[int, int]  # query rows [start, stop)
    cols: tuple[int, int]  # key rows [start, stop)
    scores: np.ndarray  # [rows, cols] this block's scores, masked entries -inf
    block_max: np.ndarray  # [rows] the block's row maximum (-inf for a row fully masked here)
    m_before: np.ndarray  # [rows] running max before this block
    m: np.ndarray  # [rows] running max after
    rescale: np.ndarray  # [rows] exp(m_before - m): how much the old l and O shrink
    p: np.ndarray  # [rows, cols] exp(scores - m)
    l_before: np.ndarray  # [rows]
    l: np.ndarray  # [rows] running sum after
    O_before: np.ndarray  # [rows, d] unnormalized running output before
    O: np.ndarray  # [rows, d] after
    skipped: bool = False  # a causal block wholly in the future: not computed


@dataclass(frozen=True)
class FlashResult:
    output: np.ndarray  # [n_q, d] the tiled result (O / l)
    reference: np.ndarray  # [n_q, d] ordinary attention softmax(S)·V
    weights: np.ndarray  # [n_q, n_k] the ordinary pattern (for comparison only; the tiled way never builds it)
    steps: tuple[BlockStep, ...]
    block_q: int
    block_k: int
    causal: bool
    n_q: int
    n_k: int
    d: int
    peak_ordinary: int  # floats: n_q·n_k
    peak_tiled: int  # floats: block_q·block_k + 2·block_q + block_q·d

    @property
    def max_diff(self) -> float:
        return float(np.abs(self.output - self.reference).max()) if self.output.size else 0.0

    def steps_of(self, q_block: int) -> list[BlockStep]:
        return [s for s in self.steps if s.q_block == q_block]


def peak_floats(n_q: int, n_k: int, d: int, block_q: int, block_k: int) -> tuple[int, int]:
    """(ordinary, tiled) working floats, see the module doc."""
    bq, bk = min(block_q, n_q), min(block_k, n_k)
    return n_q * n_k, bq * bk + 2 * bq  # d: the output's width, counted in neither way


def ordinary_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool = False,
                       scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """softmax(q·kᵀ·scale (masked)) · v, the whole matrix at once: (output, weights)."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ k.T * scale
    if causal:
        s = np.where(np.triu(np.ones(s.shape, bool), 1), -np.inf, s)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return w @ v, w


def flash_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, block_q: int = 2, block_k: int = 2,
                    causal: bool = False, scale: float | None = None) -> FlashResult:
    """The tiled online softmax of one head; q: [n_q, d], k and v: [n_k, d] (float64 inside).

    With `causal`, query i may see keys 0..i (n_q == n_k, both counted from position 0)."""
    if block_q < 1 or block_k < 1:
        raise ValueError("block sizes must be at least 1")
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    n_q, d = q.shape
    n_k = k.shape[0]
    if causal and n_q != n_k:
        raise ValueError("a causal mask needs as many queries as keys")
    scale = 1.0 / math.sqrt(d) if scale is None else scale
    out = np.zeros((n_q, v.shape[1]))
    steps = []
    for qb, r0 in enumerate(range(0, n_q, block_q)):
        r1 = min(r0 + block_q, n_q)
        m = np.full(r1 - r0, -np.inf)
        l = np.zeros(r1 - r0)
        O = np.zeros((r1 - r0, v.shape[1]))
        for kb, c0 in enumerate(range(0, n_k, block_k)):
            c1 = min(c0 + block_k, n_k)
            if causal and c0 > r1 - 1:  # every key of the block comes after every query of the block
                empty = np.full((r1 - r0, c1 - c0), -np.inf)
                steps.append(BlockStep(qb, kb, (r0, r1), (c0, c1), empty, np.full(r1 - r0, -np.inf), m, m,
                                       np.ones(r1 - r0), np.zeros_like(empty), l, l, O, O, skipped=True))
                continue
            s = q[r0:r1] @ k[c0:c1].T * scale
            if causal:
                rows = np.arange(r0, r1)[:, None]
                cols = np.arange(c0, c1)[None, :]
                s = np.where(cols > rows, -np.inf, s)
            bmax = s.max(axis=1)
            m_new = np.maximum(m, bmax)
            # a row that has seen only -inf so far keeps m = -inf: nothing to rescale, nothing added
            safe = np.where(np.isfinite(m_new), m_new, 0.0)
            p = np.where(np.isfinite(s), np.exp(s - safe[:, None]), 0.0)
            rescale = np.where(np.isfinite(m), np.exp(m - safe), 0.0)
            l_new = rescale * l + p.sum(axis=1)
            O_new = rescale[:, None] * O + p @ v[c0:c1]
            steps.append(BlockStep(qb, kb, (r0, r1), (c0, c1), s, bmax, m, m_new, rescale, p, l, l_new, O, O_new))
            m, l, O = m_new, l_new, O_new
        out[r0:r1] = O / l[:, None]
    ref, w = ordinary_attention(q, k, v, causal, scale)
    po, pt = peak_floats(n_q, n_k, v.shape[1], block_q, block_k)
    return FlashResult(output=out, reference=ref, weights=w, steps=tuple(steps), block_q=block_q, block_k=block_k,
                       causal=causal, n_q=n_q, n_k=n_k, d=v.shape[1], peak_ordinary=po, peak_tiled=pt)
