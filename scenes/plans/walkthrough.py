"""Plans of the GPT-2 walkthrough, part A (issue 12; no manim): `self_attention_steps`,
`masked_self_attention` and `attention_as_lookup`.

Every number comes from the trace of the head the lesson follows, and each plan recomputes what the
head did in the way its scene tells it (numpy, float64) so the tests can compare both ways:

* steps: for the focus token, q = x·W_Q (+b_Q), k, v likewise; the scores q·k/√d_head of every key;
  the softmax over the keys it may see; z = Σ_j w_j v_j. Then all tokens at once as matrices, in
  the paper's orientation (queries as rows): Q = X·W_Q, S = Q·Kᵀ/√d, mask, softmax by rows, Z = P·V.
* masked rows: the score matrix (queries as rows), the future cells set to what our model writes
  (−∞: `masked_fill(mask, float("-inf"))` in model/transformer.py) and to GPT-2's −1e10, both put
  through a float32 softmax: the weights are bit for bit the same, because exp(−1e10 − max) underflows
  to exactly 0 in float32 as exp(−∞) is 0.
* lookup: a hard lookup (weight 1 on the best-matching key, 0 elsewhere: exactly that key's value)
  beside the real soft one (the softmax weights blend every value it may see).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_manim.model.errors import UserError

from ..setting import HeadRef, Setting
from .qkv import head_input
from .windows import token_window

MODEL_MASK = float("-inf")  # what model/transformer.py writes into the blocked cells before the softmax
# what GPT-2's own code writes into a blocked cell: `w*b - 1e10*(1-b)` replaces the score with −1e10 (the
# Illustrated GPT-2 says "−1 billion"; the code says ten billion)
GPT2_MASK = -1e10
MAX_TOKENS = 10  # a score matrix wider than this does not fit the frame: the scenes ask for a shorter sentence
MAX_ROWS = 8  # token rows drawn for the steps and the lookup (the focus and its strongest keys always)
READ_MIN = 0.005  # a weight shown in a row's read-out (it rounds to at least 1%)


def softmax_rows(scores: np.ndarray, mask: np.ndarray, fill: float, dtype=np.float32) -> np.ndarray:
    """Row-wise softmax after writing `fill` into the blocked cells, in `dtype` (float32: what the
    model computes in), subtracting each row's maximum first as every implementation does."""
    s = np.where(mask, fill, np.asarray(scores, dtype=np.float64)).astype(dtype)
    s = s - s.max(axis=1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=1, keepdims=True)


def head_setting(setting: Setting):
    ht = setting.head_trace()
    X = head_input(setting)
    return ht, X


def check_length(setting: Setting) -> None:
    n = len(setting.trace.tokens)
    if n > MAX_TOKENS:
        raise UserError(f"this scene draws the whole {n}×{n} score matrix; at most {MAX_TOKENS} tokens fit",
                        f"give a shorter --sentence (at most {MAX_TOKENS} tokens)", key="walkthrough_too_long",
                        n_tokens=n, most=MAX_TOKENS)


MASKED_ROLE = "previous_token"  # the role masked_self_attention picks its head by (scenes/lessons.py)


def head_role(setting: Setting) -> str:
    """The role the head's trace says it was measured to play ("" when none): what a title may name.
    A real model's traces name no roles; `chosen_role` says what its head was picked for."""
    return setting.head_trace().role or ""


def chosen_role(setting: Setting, role: str) -> str:
    """`role` when the model's measured roles (model/probes.py, on the command line) picked this very
    head for it, else "": the line under a title that says how the head was chosen."""
    lh = (setting.model.roles or {}).get(role) if setting.model is not None else None
    if lh is not None and tuple(int(x) for x in lh) == (setting.head.layer, setting.head.head):
        return role
    return ""


# --- self_attention_steps ---------------------------------------------------------------------


@dataclass(frozen=True)
class StepsPlan:
    head: HeadRef
    role: str
    tokens: tuple[str, ...]
    focus: int
    d_model: int
    d_head: int
    rotary: bool  # q and k are turned by position after W_Q, W_K (the scores use the turned ones)
    x: np.ndarray  # [d_model] what the head reads for the focus (its embedding, normed if the model norms)
    q: np.ndarray  # [d_head] x·W_Q + b_Q (before any rotation)
    k: np.ndarray  # [d_head] x·W_K + b_K
    v: np.ndarray  # [d_head] x·W_V + b_V
    slots: tuple[int | None, ...]  # the token rows drawn in steps 2 and 3 (None: an ellipsis row)
    scores: np.ndarray  # [n] the focus's q·k_j/√d_head (−∞ where blocked)
    blocked: np.ndarray  # [n] bool
    weights: np.ndarray  # [n] the softmax of the scores (the trace's pattern row)
    values: np.ndarray  # [n, d_head] every token's value
    weighted: np.ndarray  # [n, d_head] w_j · v_j
    z: np.ndarray  # [d_head] Σ_j w_j v_j, added up here
    # the matrix form, for every token at once (queries as rows)
    X: np.ndarray  # [n, d_model]
    Q: np.ndarray  # [n, d_head] (after rotation on a rotary model: what the scores use)
    K: np.ndarray
    V: np.ndarray
    S: np.ndarray  # [n, n] Q·Kᵀ/√d_head
    S_masked: np.ndarray  # S with −∞ in the blocked cells
    P: np.ndarray  # [n, n] row-wise softmax
    Z: np.ndarray  # [n, d_head] P·V
    trace_z: np.ndarray  # [d_head] the trace's own z of the focus
    normalized: bool = False  # the head reads E after its layer's norm: drawn Ê, as the other lessons draw it


def plan_steps(setting: Setting) -> StepsPlan:
    ht, X = head_setting(setting)
    i = setting.focus_index()
    n = len(setting.trace.tokens)
    d = ht.q.shape[1]
    q = X[i] @ np.asarray(ht.W_Q, float) + np.asarray(ht.b_Q, float)
    k = X[i] @ np.asarray(ht.W_K, float) + np.asarray(ht.b_K, float)
    v = X[i] @ np.asarray(ht.W_V, float) + np.asarray(ht.b_V, float)
    Q, K = np.asarray(ht.q, float), np.asarray(ht.k, float)  # what the scores use (rotated, if rotary)
    V = X @ np.asarray(ht.W_V, float) + np.asarray(ht.b_V, float)
    S = Q @ K.T / np.sqrt(d)
    mask = np.asarray(ht.mask, bool)
    S_masked = np.where(mask, -np.inf, S)
    P = softmax_rows(S, mask, -np.inf, np.float64)
    Z = P @ V
    scores = S_masked[i]
    weights = P[i]
    weighted = weights[:, None] * V
    z = weighted.sum(axis=0)
    order = [int(j) for j in np.argsort(-weights, kind="stable")[:3]]
    slots = token_window(n, [i] + order, MAX_ROWS)
    return StepsPlan(head=setting.head, role=head_role(setting), tokens=setting.trace.tokens, focus=i,
                     d_model=X.shape[1], d_head=d, rotary=setting.model.rotary, x=X[i], q=q, k=k, v=v,
                     slots=tuple(slots), scores=scores, blocked=mask[i], weights=weights, values=V,
                     weighted=weighted, z=z, X=X, Q=Q, K=K, V=V, S=S, S_masked=S_masked, P=P, Z=Z,
                     trace_z=np.asarray(ht.z[i], float), normalized=setting.trace.model.norm != "none")


# --- masked_self_attention ---------------------------------------------------------------------


@dataclass(frozen=True)
class RowReading:
    query: int  # the row: the token being processed
    keys: tuple[int, ...]  # the keys read out (weight ≥ READ_MIN), in sentence order
    weights: tuple[float, ...]  # their weights (the trace's)
    rest: float  # what the keys left out add up to (0 when none is)


@dataclass(frozen=True)
class MaskedPlan:
    head: HeadRef
    role: str
    tokens: tuple[str, ...]
    scores: np.ndarray  # [query, key] q·k/√d before the mask
    mask: np.ndarray  # [query, key] True = a future key, blocked
    mask_value: float  # what our model writes in the blocked cells (−∞)
    gpt2_value: float  # what GPT-2 writes (−1e10)
    weights: np.ndarray  # [query, key] the trace's pattern
    weights_ours: np.ndarray  # float32 softmax with −∞ (recomputed here)
    weights_gpt2: np.ndarray  # float32 softmax with −1e10
    same_bits: bool  # the two are identical, bit for bit
    exp_gpt2: float  # exp(−1e10 − the row's max) in float32, for the row shown: exactly 0.0
    exp_row: int  # the row whose numbers the exp example uses (the second: the first blocked cell)
    row_max: float  # that row's largest visible score
    tiny: float  # the smallest positive float32 (below it exp gives 0)
    row_sums: tuple[float, ...]
    readings: tuple[RowReading, ...]
    chosen: str = ""  # the role the probes picked this head for ("" when it was not picked so)
    previous_share: float = 0.0  # mean weight a row puts on the token just before it (rows 1..n−1)


def plan_masked(setting: Setting) -> MaskedPlan:
    check_length(setting)
    ht = setting.head_trace()
    scores = np.asarray(ht.scores, float)
    mask = np.asarray(ht.mask, bool)
    pattern = np.asarray(ht.pattern, float)
    ours = softmax_rows(scores, mask, MODEL_MASK)
    gpt2 = softmax_rows(scores, mask, GPT2_MASK)
    n = len(scores)
    blocked_rows = [r for r in range(n) if mask[r].any()]
    row = blocked_rows[0] if blocked_rows else 0
    row_max = float(np.max(np.where(mask[row], -np.inf, scores[row])))
    exp_gpt2 = float(np.exp(np.float32(GPT2_MASK) - np.float32(row_max)))
    readings = []
    for r in range(n):
        seen = [j for j in range(n) if not mask[r, j]]
        keys = tuple(j for j in seen if pattern[r, j] >= READ_MIN)
        rest = float(sum(pattern[r, j] for j in seen if j not in keys))
        readings.append(RowReading(query=r, keys=keys, weights=tuple(float(pattern[r, j]) for j in keys), rest=rest))
    ht_role = head_role(setting)
    prev = float(np.mean([pattern[r, r - 1] for r in range(1, n)])) if n > 1 else 0.0
    return MaskedPlan(head=setting.head, role=ht_role if ht_role == MASKED_ROLE else "",
                      chosen=chosen_role(setting, MASKED_ROLE) if ht_role != MASKED_ROLE else "",
                      previous_share=prev, tokens=setting.trace.tokens, scores=scores,
                      mask=mask, mask_value=MODEL_MASK, gpt2_value=GPT2_MASK, weights=pattern, weights_ours=ours,
                      weights_gpt2=gpt2, same_bits=bool(np.array_equal(ours, gpt2)), exp_gpt2=exp_gpt2,
                      exp_row=row, row_max=row_max, tiny=float(np.finfo(np.float32).smallest_subnormal),
                      row_sums=tuple(float(s) for s in pattern.sum(axis=1)), readings=tuple(readings))


# --- attention_as_lookup ------------------------------------------------------------------------


@dataclass(frozen=True)
class LookupPlan:
    head: HeadRef
    role: str
    tokens: tuple[str, ...]
    focus: int
    d_head: int
    slots: tuple[int | None, ...]  # the dictionary rows drawn (None: an ellipsis row); only keys ≤ focus
    query: np.ndarray  # [d_head] the focus's query
    keys: np.ndarray  # [n, d_head]
    values: np.ndarray  # [n, d_head]
    scores: np.ndarray  # [n] q·k/√d (−∞ for the blocked keys)
    best: int  # the best-matching key: what a hard lookup returns
    hard: np.ndarray  # [n] one-hot at `best`
    soft: np.ndarray  # [n] the real softmax weights (the trace's pattern row)
    hard_result: np.ndarray  # [d_head] the value of `best`, exactly
    soft_result: np.ndarray  # [d_head] Σ_j soft_j v_j
    distance: float  # |soft − hard|
    hard_norm: float  # |hard result|, for scale
    best_weight: float  # the soft weight on `best`
    score_kind: str = "score"  # how the scores are printed: one decimal, or two ("signed2") where one would tie the best
    tie: bool = False  # the best score still ties another at two decimals: the first of them is taken, and said so


def plan_lookup(setting: Setting) -> LookupPlan:
    ht = setting.head_trace()
    i = setting.focus_index()
    n = len(setting.trace.tokens)
    q, K, V = (np.asarray(a, float) for a in (ht.q[i], ht.k, ht.v))
    blocked = np.asarray(ht.mask[i], bool)
    scores = np.where(blocked, -np.inf, K @ q / np.sqrt(q.shape[0]))
    best = int(np.argmax(scores))
    hard = np.zeros(n)
    hard[best] = 1.0
    soft = np.asarray(ht.pattern[i], float)
    hard_result = V[best].copy()
    soft_result = soft @ V
    visible = [j for j in range(n) if not blocked[j]]
    order = [int(j) for j in np.argsort(-soft, kind="stable")[:3]]
    slots = token_window(len(visible), [visible.index(j) for j in [i, best] + order if j in visible], MAX_ROWS)
    others = [float(scores[j]) for j in visible if j != best]
    score_kind, tie = "score", False
    if any(f"{scores[best]:.1f}" == f"{o:.1f}" for o in others):
        score_kind = "signed2"  # "+5.3" twice would hide which key wins: two decimals show it
        tie = any(f"{scores[best]:.2f}" == f"{o:.2f}" for o in others)
    return LookupPlan(score_kind=score_kind, tie=tie,
                      head=setting.head, role=head_role(setting), tokens=setting.trace.tokens, focus=i,
                      d_head=q.shape[0], slots=tuple(visible[s] if s is not None else None for s in slots),
                      query=q, keys=K, values=V, scores=scores, best=best, hard=hard, soft=soft,
                      hard_result=hard_result, soft_result=soft_result,
                      distance=float(np.linalg.norm(soft_result - hard_result)),
                      hard_norm=float(np.linalg.norm(hard_result)), best_weight=float(soft[best]))
