"""Plans of `linear_attention` (no manim, no torch at import): exp(q·k) replaced by φ(q)·φ(k) with
φ = elu + 1 (model/linear_attention.py), on a real head of the model in use and over every head.

Three chapters:
- `linear_kernel`: the swap, the regrouping φ(Q)(φ(K)ᵀV) that needs a d × d state instead of the
  n × n grid (both orders checked on the head's real q, k, v), and the causal form as a running sum.
- `linear_pattern`: the head's softmax pattern beside its linear one (the same queries and keys), then
  the measurement over every head of the model on its passages and one layer at a time made linear
  (`ModelSession.linear_study`, run once when the lesson's setting is made: `with_linear_study`).
- `linear_cost`: multiply-adds of both for n from 64 to about a million at the model's d_head.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attention_manim.model.linear_attention import (COST_LENGTHS, attention_cost, compare_patterns, elu_plus_one,
                                                    linear_causal, linear_quadratic, linear_regrouped)

from ..setting import SceneInputs, Setting
from .honesty import role_hits
from .kv_cache import session_of

LINEAR_STUDY = "linear_study"  # Setting.options key: the model's LinearStudy
DEMO_TOKENS_PER_D = 4  # the shapes drawn to scale have n = 4·d tokens
KEPT_MOST = 0.75  # "rarely changes the top prediction" when at least this share of swaps kept it
SHARP = 0.3  # softmax's mean top weight beats the linear one's by this much: "sharp against nearly even"


def measured_role(setting: Setting, layer: int, head: int) -> str:
    """The role the model names (the toy) or the probes measured (a real model) for this head, or ""."""
    ht = setting.trace.head(layer, head)
    if ht.role:
        return ht.role
    return next((r for r, lh in (setting.model.roles or {}).items() if tuple(lh) == (layer, head)), "")


def with_linear_study(setting: Setting, inputs: SceneInputs) -> Setting:
    session = session_of(inputs, "linear_study")
    return replace(setting, options={**setting.options, LINEAR_STUDY: session.linear_study()})


@dataclass(frozen=True)
class KernelPlan:
    model_name: str
    layer: int
    head: int
    tokens: tuple[str, ...]
    d_head: int
    n_demo: int  # the n of the shapes drawn to scale (DEMO_TOKENS_PER_D · d)
    grid_numbers: int  # n_demo²: the n × n grid
    state_numbers_d: int  # d · d: the state S of the regrouped form
    regroup_diff: float  # max |(φ(Q)φ(K)ᵀ)V − φ(Q)(φ(K)ᵀV)| per row-normalized output, on the real head
    rnn_diff: float  # max |causal quadratic − running sum|
    state_numbers: int  # S and z that the running sum carries: d·d + d
    n: int  # the sentence's tokens
    sentence: str = ""  # the sentence as the reader typed it (the check runs on it, not on n_demo tokens)


def plan_linear_kernel(setting: Setting) -> KernelPlan:
    tr, ht = setting.trace, setting.head_trace()
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (ht.q, ht.k, ht.v))
    d = q.shape[1]
    quad, _ = linear_quadratic(q, k, v, causal=False)
    reg = linear_regrouped(q, k, v)
    quad_c, _ = linear_quadratic(q, k, v, causal=True)
    rnn = linear_causal(q, k, v)
    n_demo = DEMO_TOKENS_PER_D * d
    return KernelPlan(model_name=tr.model.name, layer=ht.layer, head=ht.head, tokens=tr.tokens, d_head=d,
                      n_demo=n_demo, grid_numbers=n_demo * n_demo, state_numbers_d=d * d,
                      regroup_diff=float(np.abs(quad - reg.output).max()),
                      rnn_diff=float(np.abs(quad_c - rnn.output).max()), state_numbers=rnn.state_numbers,
                      n=tr.n_tokens, sentence=tr.text)


@dataclass(frozen=True)
class PatternPlan:
    model_name: str
    layer: int
    head: int
    role: str  # the head's role when the model names or measured one ("" otherwise)
    role_hits: tuple[int, int] | None  # queries whose top key is where the role says, of how many (None: no role
    # with one target key); the grid's head line says it when not every query does
    tokens: tuple[str, ...]
    layout: str  # video: keys as rows, queries as columns; paper: the transpose
    softmax: np.ndarray  # [n, n] softmax(q·kᵀ/√d), masked: the model's own pattern
    linear: np.ndarray  # [n, n] rownorm(φ(q/√d)·φ(k)ᵀ), masked
    mask: np.ndarray  # [n, n] True = blocked (the future)
    query: int  # the row read out
    top_key: int  # softmax's top key in that row
    row_softmax: float  # softmax's weight on it
    row_linear: float  # the linear weight on the same key
    row_linear_top: float  # the linear pattern's largest weight in the row
    head_top_softmax: float  # this head on this sentence, mean over rows: softmax's top weight
    head_top_linear: float  # linear's
    head_tv: float  # mean total-variation distance per row
    # over every head of the model on its passages (the study)
    n_layers: int
    n_heads: int
    n_passages: int
    n_rows: int  # query rows pooled: every token of every passage
    tv: float
    top_softmax: float
    top_linear: float
    kept: np.ndarray  # [passages, layers] bool
    kept_count: int
    runs: int
    kl_mean: float
    sharp: bool  # softmax's mean top weight beats linear's by at least SHARP
    kept_most: bool  # at least KEPT_MOST of the swaps kept the top prediction


def plan_linear_pattern(setting: Setting) -> PatternPlan:
    if LINEAR_STUDY not in setting.options:
        raise ValueError("the linear_pattern chapter needs its study: make the setting with with_linear_study "
                         "(LinearLesson does)")
    st = setting.options[LINEAR_STUDY]
    tr, ht = setting.trace, setting.head_trace()
    c = compare_patterns(ht.q, ht.k, causal=bool(np.asarray(ht.mask).any()), phi=elu_plus_one)
    n = tr.n_tokens
    i = setting.focus_index() if setting.focus is not None else n - 1
    j = int(np.argmax(c.softmax[i]))
    L, H = st.tv.shape
    role = measured_role(setting, ht.layer, ht.head)
    return PatternPlan(model_name=tr.model.name, layer=ht.layer, head=ht.head, role=role,
                       role_hits=role_hits(c.softmax, role), tokens=tr.tokens,
                       layout=setting.layout,
                       softmax=c.softmax, linear=c.linear, mask=np.asarray(ht.mask, bool), query=i, top_key=j,
                       row_softmax=float(c.softmax[i, j]), row_linear=float(c.linear[i, j]),
                       row_linear_top=float(c.linear[i].max()), head_top_softmax=float(c.top_softmax.mean()),
                       head_top_linear=float(c.top_linear.mean()), head_tv=float(c.tv.mean()),
                       n_layers=L, n_heads=H, n_passages=len(st.passages), n_rows=int(sum(st.n_tokens)),
                       tv=st.tv_overall, top_softmax=st.top_softmax_overall, top_linear=st.top_linear_overall,
                       kept=np.asarray(st.kept, bool), kept_count=st.kept_count, runs=st.runs, kl_mean=st.kl_mean,
                       sharp=st.top_softmax_overall - st.top_linear_overall >= SHARP,
                       kept_most=st.kept_count >= KEPT_MOST * st.runs)


@dataclass(frozen=True)
class CostPlan:
    model_name: str
    d_head: int
    lengths: tuple[int, ...]
    softmax: tuple[int, ...]  # multiply-adds of one head: 2·n²·d
    linear: tuple[int, ...]  # 2·n·d·d + 2·n·d (φ = elu + 1: as many features as d)
    crossover: int  # the first n at which linear needs fewer multiply-adds
    ratio_last: float  # softmax / linear at the longest length


def crossover(d: int) -> int:
    """The first n with 2·n·d·d + 2·n·d < 2·n²·d, i.e. n > d + 1."""
    n = 1
    while attention_cost(n, d).linear >= attention_cost(n, d).softmax:
        n += 1
    return n


def plan_linear_cost(setting: Setting) -> CostPlan:
    d = setting.model.d_head
    costs = [attention_cost(n, d) for n in COST_LENGTHS]
    return CostPlan(model_name=setting.model.name, d_head=d, lengths=tuple(COST_LENGTHS),
                    softmax=tuple(c.softmax for c in costs), linear=tuple(c.linear for c in costs),
                    crossover=crossover(d), ratio_last=costs[-1].ratio)
