"""Plan of `multi_head`: every head of a layer at once, each with its own pattern and its own
proposed change ΔE for one word; the proposals add up into the embedding (no manim).

For each sentence: the word followed (the focus), every head's attention row of it, its ΔE (the
entries shown), the sum E + ΣΔE (+ the output bias, when the model has one) = E′, and, where the
model has named directions (the toy) or the user gave --axes, E and E′ projected on the directions
the heads moved the word along the most.

Focus rule (no --focus): the heads of the layer are read in turn, the lesson's head first; a head
that mostly looks one token back is skipped (every word looks away there); the first head whose
gathering word (`setting.gathering_word`) puts at least LOOKS_AWAY of its weight on other words
(the first token not counting, for a real model) gives the focus. Else the gathering word of the
heads' mean pattern.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attention_manim.model.trace import Trace

from ..setting import Setting, focus_tops, gathering_word
from .honesty import first_token_share, role_idle
from .rounding import rounding_off
from .windows import window_indices

LOOKS_AWAY = 0.5
PREVIOUS_HEAD = 0.5  # a head whose queries put this much on the token just before is "previous token"
HEAD_ENTRIES, TAIL_ENTRIES = 3, 1  # ΔE entries shown: the first three and the last
MAX_DIRECTIONS = 3
BIAS_MIN = 1e-4  # an output bias smaller than this (relative to the layer's ΔE) is float rounding, no bias


def previous_share(pattern: np.ndarray) -> float:
    p = np.asarray(pattern, float)
    n = p.shape[0]
    return float(np.mean([p[i, i - 1] for i in range(1, n)])) if n > 1 else 0.0


def pick_focus(trace: Trace, layer: int, first_head: int) -> int:
    """The word the lesson follows in this sentence (see the module doc)."""
    real = trace.model.real
    heads = trace.layers[layer].heads
    order = [first_head] + [h for h in range(len(heads)) if h != first_head]
    for h in order:
        p = np.asarray(heads[h].pattern, float)
        if p.shape[0] < 2 or previous_share(p) >= PREVIOUS_HEAD:
            continue
        i = gathering_word(p, skip_first=real, word_of=trace.word_of_token)
        away = 1.0 - p[i, i] - (p[i, 0] if real and i > 0 else 0.0)
        if away >= LOOKS_AWAY:
            return i
    mean = np.mean([h.pattern for h in heads], axis=0)
    return gathering_word(mean, skip_first=real, word_of=trace.word_of_token)


@dataclass(frozen=True)
class HeadProposal:
    head: int
    role: str  # the head's role id: its own, or the one the model's measured roles give it ("" none)
    row: np.ndarray  # the focus's attention row [n]
    tops: tuple[int, ...]  # the keys it attends to most (≥ 0.1), strongest first
    top_weights: tuple[float, ...]
    delta: np.ndarray  # its ΔE for the focus [d_model]
    habit: str  # for a head with no role: "first_token" | "previous" | "self", its strongest habit here
    habit_weight: float  # the head's mean weight on that, over this sentence's queries (but the first)
    pattern: np.ndarray  # the head's whole pattern [query, key] (its small grid)
    mask: np.ndarray  # [query, key] True = blocked
    idle: float | None = None  # a named head with nothing to do here: the least weight a word keeps on itself


@dataclass(frozen=True)
class SentenceSum:
    tokens: tuple[str, ...]
    focus: int
    heads: tuple[HeadProposal, ...]
    E: np.ndarray  # the focus's vector entering the layer [d_model]
    delta_sum: np.ndarray  # Σ heads' ΔE
    bias: np.ndarray  # the layer's ΔE minus Σ heads' ΔE: the output bias (zeros without one)
    has_bias: bool
    E_prime: np.ndarray  # E + ΣΔE (+ bias): the vector after attention (resid_mid)
    shown: tuple[int | None, ...]  # the entries shown (None: the ellipsis)
    projections: tuple[tuple[float, float], ...]  # per direction: (E, E′) projected on it
    mean_first: float  # the heads' mean weight of the focus on the first token
    rounding_off: tuple[int, ...] = ()  # shown entries whose one-decimal terms do not add up to E′'s one decimal

    def terms(self, i: int) -> list[float]:
        """Entry i of E, of every head's ΔE (and of the bias when shown): the terms drawn in row i."""
        return [float(self.E[i])] + [float(h.delta[i]) for h in self.heads] + \
            ([float(self.bias[i])] if self.has_bias else [])

    def rounded_terms(self, i: int) -> list[float]:
        """Entry i of E, of every head's ΔE (and of the bias when shown), each rounded as drawn."""
        return [round(t, 1) for t in self.terms(i)]


@dataclass(frozen=True)
class MultiHeadPlan:
    layer: int
    n_layers: int
    n_heads: int
    d_model: int
    real: bool
    sentences: tuple[SentenceSum, ...]
    directions: tuple[str, ...]  # named directions shown (empty: none)
    n_kv_heads: int = 0  # key/value heads of the layer (fewer than n_heads: query heads share them)


def head_roles(setting: Setting, layer: int) -> dict[int, str]:
    """head -> role id in this layer: the head's own role, else the model's measured roles."""
    out = {}
    for role, lh in (setting.model.roles or {}).items():
        if int(lh[0]) == layer:
            out.setdefault(int(lh[1]), role)
    for ht in setting.trace.layers[layer].heads:
        if ht.role:
            out[ht.head] = ht.role
    return out


def habit_of(pattern: np.ndarray) -> tuple[str, float]:
    """The strongest of three habits measured on this sentence: resting on the first token, looking
    one token back, keeping to itself (mean weights over every query but the first)."""
    p = np.asarray(pattern, float)
    n = p.shape[0]
    if n < 2:
        return "self", 1.0
    rows = np.arange(1, n)
    habits = {"first_token": first_token_share(p), "previous": float(p[rows, rows - 1].mean()),
              "self": float(p[rows, rows].mean())}
    name = max(habits, key=lambda k: habits[k])
    return name, habits[name]


def pick_directions(setting: Setting, sums: list[tuple[Trace, int, np.ndarray]]) -> tuple[str, ...]:
    """--axes if given; else, on a model with named directions (the toy), the direction each
    sentence's ΣΔE moves the focus along the most (in order, without repeats, at most 3)."""
    if setting.axes:
        return tuple(setting.axes)[:MAX_DIRECTIONS]
    tr = setting.trace
    if tr.model.real or not isinstance(tr.directions, dict) or not tr.directions:
        return ()
    names = list(tr.directions)
    out: list[str] = []
    for t, _, delta in sums:
        proj = t.project(delta, names)
        best = names[int(np.argmax(proj))]
        if best not in out and len(out) < MAX_DIRECTIONS:
            out.append(best)
    return tuple(out)


def plan_multi_head(setting: Setting) -> MultiHeadPlan:
    layer = setting.head.layer
    roles = head_roles(setting, layer)
    made = []
    for tr in setting.traces:
        f = tr.index_of(setting.focus) if setting.focus else pick_focus(tr, layer, setting.head.head)
        lt = tr.layers[layer]
        heads = []
        for ht in lt.heads:
            row = np.asarray(ht.pattern[f], float)
            tops = focus_tops(row, f)
            habit, hw = habit_of(ht.pattern)
            heads.append(HeadProposal(head=ht.head, role=roles.get(ht.head, ""), row=row, tops=tuple(tops),
                                      top_weights=tuple(float(row[j]) for j in tops),
                                      delta=np.asarray(ht.delta_e[f], float), habit=habit, habit_weight=hw,
                                      pattern=np.asarray(ht.pattern, float), mask=np.asarray(ht.mask, bool),
                                      idle=role_idle(ht.pattern, tr.model.real) if roles.get(ht.head) else None))
        total = np.sum([h.delta for h in heads], axis=0)
        made.append((tr, f, total, heads, lt))
    directions = pick_directions(setting, [(t, f, d) for t, f, d, _, _ in made])
    sentences = []
    for tr, f, total, heads, lt in made:
        E = np.asarray(lt.resid_in[f], float)
        bias = np.asarray(lt.delta_e[f], float) - total
        E_prime = np.asarray(lt.resid_mid[f], float)
        proj = tuple((float(a), float(b)) for a, b in zip(tr.project(E, list(directions)),
                                                          tr.project(E_prime, list(directions)))) \
            if directions else ()
        sentences.append(SentenceSum(
            tokens=tr.tokens, focus=f, heads=tuple(heads), E=E, delta_sum=total, bias=bias,
            has_bias=bool(np.abs(bias).max() >= BIAS_MIN * max(1.0, float(np.abs(lt.delta_e[f]).max()))), E_prime=E_prime,
            shown=tuple(window_indices(len(E), HEAD_ENTRIES, TAIL_ENTRIES)), projections=proj,
            mean_first=float(np.mean([h.row[0] for h in heads])) if f > 0 else 0.0))
        s = sentences[-1]
        off = rounding_off((i, s.terms(i), s.E_prime[i]) for i in s.shown if i is not None)
        sentences[-1] = replace(s, rounding_off=off)
    m = setting.model
    return MultiHeadPlan(layer=layer, n_layers=m.n_layers, n_heads=m.n_heads, d_model=m.d_model, real=m.real,
                         sentences=tuple(sentences), directions=directions,
                         n_kv_heads=len({h.kv_head for h in made[0][0].layers[layer].heads}))
