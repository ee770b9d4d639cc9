"""Plan of `flash_attention` (no manim): the tiled online softmax of model/flash.py (numpy) run on
a real head of the model in use (the trace's q, k — after rotation on a rotary model — and v), its
result compared with the trace's own head output z, and the peak memory of both ways counted.

The block followed on screen is the query block holding the focus token; its rows' running max m,
running sum l and the first entries of the running output O are shown after every key block."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_manim.model.flash import FlashResult, flash_attention, peak_floats

from ..setting import Setting

BLOCK_Q, BLOCK_K = 2, 3  # key blocks of 3 on most sentences leave a ragged last block
O_SHOWN = 2  # entries of the running output shown per row
BYTES_PER_NUMBER = 4  # a float32 (the memory count in bytes)


@dataclass(frozen=True)
class FlashPlan:
    tokens: tuple[str, ...]
    layer: int
    head: int
    focus: int
    q_block: int  # the query block followed (holds the focus)
    result: FlashResult
    trace_z: np.ndarray  # [n, d_head] the trace's head output (ordinary attention, in the model)
    max_diff_trace: float  # max |tiled − trace z|
    max_diff_ordinary: float  # max |tiled − ordinary (float64)|
    decimals: int  # digits at which the shown entries read the same both ways
    n_key_blocks: int
    n_query_blocks: int
    skipped: int  # causal blocks wholly in the future, never computed
    layout: str  # video: keys as rows, queries as columns; paper: the transpose
    n_ctx: int  # the model's context length, for the memory count at full length
    ctx_ordinary: int  # floats of the score matrix at n_ctx tokens
    ctx_tiled: int  # floats of the tiled way at n_ctx tokens (the same blocks)
    mem_bq: int = 0  # the tiled count's terms: a block of mem_bq queries against mem_bk keys
    mem_bk: int = 0
    mem_tile: int = 0  # the tile of scores: mem_bq · mem_bk
    mem_ml: int = 0  # the running maximum m and sum l: 2 · mem_bq
    mem_o: int = 0  # the running output O: mem_bq · d
    ctx_terms: tuple[int, int, int] = (0, 0, 0)  # the tiled count at n_ctx tokens: tile, m and l, O
    ctx_bytes_ordinary: int = 0  # bytes of the score grid at n_ctx tokens, as float32
    ctx_bytes_tiled: int = 0  # bytes of the tiled way's numbers at n_ctx tokens

    @property
    def steps(self):
        return self.result.steps_of(self.q_block)


def plan_flash(setting: Setting, block_q: int = BLOCK_Q, block_k: int = BLOCK_K) -> FlashPlan:
    tr = setting.trace
    ht = setting.head_trace()
    f = setting.focus_index()
    causal = bool(np.asarray(ht.mask).any()) or tr.model.causal
    res = flash_attention(ht.q, ht.k, ht.v, block_q, block_k, causal=causal and tr.n_tokens > 0)
    z = np.asarray(ht.z, np.float64)
    qb = f // block_q
    bq, bk = min(block_q, tr.n_tokens), min(block_k, tr.n_tokens)  # as peak_floats counts them
    r0, r1 = qb * block_q, min((qb + 1) * block_q, tr.n_tokens)
    ctx = peak_floats(tr.model.n_ctx, tr.model.n_ctx, res.d, block_q, block_k)  # the model's full context
    cq, ck = min(block_q, tr.model.n_ctx), min(block_k, tr.model.n_ctx)  # as peak_floats counts them
    decimals = 1
    for dec in range(6, 0, -1):
        if all(f"{res.output[i, j]:.{dec}f}" == f"{z[i, j]:.{dec}f}" for i in range(r0, r1) for j in range(O_SHOWN)):
            decimals = dec
            break
    return FlashPlan(tokens=tr.tokens, layer=ht.layer, head=ht.head, focus=f, q_block=qb, result=res, trace_z=z,
                     max_diff_trace=float(np.abs(res.output - z).max()), max_diff_ordinary=res.max_diff,
                     decimals=decimals, n_key_blocks=-(-tr.n_tokens // block_k),
                     n_query_blocks=-(-tr.n_tokens // block_q), skipped=sum(s.skipped for s in res.steps),
                     layout=setting.layout, n_ctx=tr.model.n_ctx,
                     ctx_ordinary=ctx[0], ctx_tiled=ctx[1],
                     mem_bq=bq, mem_bk=bk, mem_tile=bq * bk, mem_ml=2 * bq, mem_o=bq * res.d,
                     ctx_terms=(cq * ck, 2 * cq, cq * res.d),
                     ctx_bytes_ordinary=ctx[0] * BYTES_PER_NUMBER,
                     ctx_bytes_tiled=ctx[1] * BYTES_PER_NUMBER)
