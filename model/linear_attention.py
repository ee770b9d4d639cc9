"""Linear attention for one head, in numpy, and how far a real model's heads are from it.

Softmax attention weighs key j for query i by exp(q_i·k_j) / Σ_j' exp(q_i·k_j'): every query meets
every key, n² scores. Linear attention (Katharopoulos et al. 2020) swaps exp(q·k) for a product of
feature maps φ(q)·φ(k), with φ positive so that the weights stay positive:

    quadratic form:  A = φ(Q)·φ(K)ᵀ, each row divided by its sum;  out = A·V      (n² numbers, as before)
    regrouped form:  out_i = φ(q_i)ᵀ·S / φ(q_i)ᵀ·z,  S = φ(K)ᵀ·V  [d_f, d_v],  z = φ(K)ᵀ·1  [d_f]

The same numbers (matrix products are associative), but the regrouped form never builds the n × n
matrix: S and z are a fixed-size state, and the cost is linear in n. Causal: query t may use keys
s ≤ t only, so the state is a running sum, an RNN:

    S_t = S_{t−1} + φ(k_t)·v_tᵀ,   z_t = z_{t−1} + φ(k_t),   out_t = φ(q_t)ᵀ·S_t / φ(q_t)ᵀ·z_t

equal to the quadratic form with the causal mask.

Feature maps: φ(x) = elu(x) + 1 (x + 1 for x > 0, eˣ otherwise), or positive random features
(Performer, Choromanski et al. 2021): φ(x) = exp(W·x − |x|²/2) / √m with the m rows of W drawn from a
standard normal (seeded), whose products approximate exp(q·k) itself: E[φ(q)·φ(k)] = exp(q·k).

The model's scaling: a real head's scores are q·k/√d_head. Both patterns here are made from the same
scaled query q' = q/√d_head and the same key: softmax(q'·kᵀ) (exactly the model's pattern) against
φ(q')·φ(k)ᵀ row-normalized. Comparisons are per query row: the total-variation distance
½·Σ_j |softmax_ij − linear_ij| (0: the same weights, 1: no overlap), and the weight each puts on its
row's top key.

Cost, in multiply-adds, for n tokens and d = d_head (φ itself not counted):
    softmax: n²·d (scores) + n²·d (weights × values) = 2·n²·d
    linear:  n·d_f·d (φ(K)ᵀV, or the running S) + n·d_f (z) + n·d_f·d (φ(q)ᵀS) + n·d_f (φ(q)ᵀz)
             = 2·n·d_f·d + 2·n·d_f,   d_f = d for elu + 1, m for random features
Linear wins once n > d_f·(d + 1)/d: from 66 tokens for d = d_f = 64; its price is the fixed-size state.

    python -m attention_manim.model.linear_attention [--model smollm2|toy] [--no-swap] [--phi elu|random]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .passages import passages_for
from .places import BUILTIN_MODELS, SMOLLM2

# --- feature maps -------------------------------------------------------------------------------------


def elu_plus_one(x: np.ndarray) -> np.ndarray:
    """φ(x) = elu(x) + 1: x + 1 for x > 0, eˣ otherwise (positive everywhere)."""
    x = np.asarray(x, dtype=np.float64)
    return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))


@dataclass(frozen=True)
class RandomFeatures:
    """Positive random features: φ(x) = exp(W·x − |x|²/2) / √m, W [m, d] standard normal (seeded).

    With them the scale s = 1/√d_head is split evenly, φ(q·√s)·φ(k·√s): the same kernel exp(s·q·k) as
    φ(q·s)·φ(k), with less variance (as the Performer does). The exponents of a real head's keys span
    hundreds, beyond what exp can hold: `pair` takes each query row's largest exponent out of that row
    and the keys' largest out of all keys, constant factors that the row normalization cancels, and the
    quadratic form is computed from the exponents (log-sum-exp), never from the features."""

    W: np.ndarray  # [m, d]
    seed: int

    def exponent(self, x: np.ndarray) -> np.ndarray:
        """W·x − |x|²/2 per row: [..., m]."""
        x = np.asarray(x, dtype=np.float64)
        return x @ self.W.T - 0.5 * (x * x).sum(axis=-1, keepdims=True)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return np.exp(self.exponent(x)) / math.sqrt(len(self.W))

    def pair(self, q: np.ndarray, k: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """φ(q) and φ(k) up to the constant factors the row normalization cancels (see the class doc)."""
        eq, ek = self.exponent(q), self.exponent(k)
        return np.exp(eq - eq.max(axis=-1, keepdims=True)), np.exp(ek - ek.max())

    @property
    def n_features(self) -> int:
        return len(self.W)


def random_features(d: int, m: int = 64, seed: int = 0) -> RandomFeatures:
    return RandomFeatures(W=np.random.default_rng(seed).standard_normal((m, d)), seed=seed)


FeatureMap = Callable[[np.ndarray], np.ndarray]


def _scale(q, scale):
    return 1.0 / math.sqrt(np.asarray(q).shape[-1]) if scale is None else float(scale)


def _features(q, k, phi, scale):
    """φ(q·s) and φ(k); random features: φ(q·√s) and φ(k·√s), stabilized (RandomFeatures)."""
    q, k = (np.asarray(a, dtype=np.float64) for a in (q, k))
    s = _scale(q, scale)
    if isinstance(phi, RandomFeatures):
        return phi.pair(q * math.sqrt(s), k * math.sqrt(s))
    return phi(q * s), phi(k)


# --- the three forms ------------------------------------------------------------------------------------


def softmax_weights(q: np.ndarray, k: np.ndarray, causal: bool = False, scale: float | None = None) -> np.ndarray:
    """softmax(q·kᵀ·scale) per row (masked when causal; scale defaults to 1/√d): [n_q, n_k]."""
    q, k = (np.asarray(a, dtype=np.float64) for a in (q, k))
    s = q @ k.T * _scale(q, scale)
    if causal:
        s = np.where(np.triu(np.ones(s.shape, bool), 1), -np.inf, s)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    return w / w.sum(axis=1, keepdims=True)


def linear_weights(q: np.ndarray, k: np.ndarray, causal: bool = False, phi: FeatureMap = elu_plus_one,
                   scale: float | None = None) -> np.ndarray:
    """The quadratic form's pattern: φ(q·scale)·φ(k)ᵀ, masked when causal, each row divided by its sum
    (random features: from the exponents, log Σ_f exp(e_q + e_k), a softmax over the keys)."""
    if isinstance(phi, RandomFeatures):
        q, k = (np.asarray(a, dtype=np.float64) for a in (q, k))
        r = math.sqrt(_scale(q, scale))
        t = phi.exponent(q * r)[:, None, :] + phi.exponent(k * r)[None, :, :]  # [n_q, n_k, m]
        mx = t.max(axis=-1)
        log_a = mx + np.log(np.exp(t - mx[..., None]).sum(axis=-1))
        if causal:
            log_a = np.where(np.triu(np.ones(log_a.shape, bool), 1), -np.inf, log_a)
        a = np.exp(log_a - log_a.max(axis=1, keepdims=True))
        return a / a.sum(axis=1, keepdims=True)
    fq, fk = _features(q, k, phi, scale)
    a = fq @ fk.T
    if causal:
        a = np.where(np.triu(np.ones(a.shape, bool), 1), 0.0, a)
    return a / a.sum(axis=1, keepdims=True)


def linear_quadratic(q, k, v, causal: bool = False, phi: FeatureMap = elu_plus_one,
                     scale: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(out, A): the n × n pattern A = rownorm(φ(Q)φ(K)ᵀ) and out = A·V."""
    a = linear_weights(q, k, causal, phi, scale)
    return a @ np.asarray(v, dtype=np.float64), a


@dataclass(frozen=True)
class LinearState:
    """The regrouped (non-causal) form: one fixed-size state for all queries."""

    S: np.ndarray  # [d_f, d_v]  φ(K)ᵀ·V
    z: np.ndarray  # [d_f]       φ(K)ᵀ·1
    numerator: np.ndarray  # [n_q, d_v]  φ(Q)·S
    denominator: np.ndarray  # [n_q]     φ(Q)·z
    output: np.ndarray  # [n_q, d_v]


def linear_regrouped(q, k, v, phi: FeatureMap = elu_plus_one, scale: float | None = None) -> LinearState:
    """φ(Q)(φ(K)ᵀV) / φ(Q)(φ(K)ᵀ1): no n × n matrix anywhere."""
    fq, fk = _features(q, k, phi, scale)
    v = np.asarray(v, dtype=np.float64)
    S, z = fk.T @ v, fk.sum(axis=0)
    num, den = fq @ S, fq @ z
    return LinearState(S=S, z=z, numerator=num, denominator=den, output=num / den[:, None])


@dataclass(frozen=True)
class LinearRecurrence:
    """The causal form as an RNN: the state after each token."""

    S: np.ndarray  # [n, d_f, d_v]  S_t = Σ_{s≤t} φ(k_s)·v_sᵀ
    z: np.ndarray  # [n, d_f]       z_t = Σ_{s≤t} φ(k_s)
    output: np.ndarray  # [n, d_v]  φ(q_t)ᵀS_t / φ(q_t)ᵀz_t

    @property
    def state_numbers(self) -> int:
        """Numbers the RNN carries from token to token (S and z), whatever n is."""
        return int(self.S[0].size + self.z[0].size) if len(self.S) else 0


def linear_causal(q, k, v, phi: FeatureMap = elu_plus_one, scale: float | None = None) -> LinearRecurrence:
    """The running sums, one token at a time (q, k, v: [n, ·], the same n)."""
    fq, fk = _features(q, k, phi, scale)
    v = np.asarray(v, dtype=np.float64)
    n, d_f = fk.shape
    S, z = np.zeros((d_f, v.shape[1])), np.zeros(d_f)
    Ss, zs, out = np.zeros((n, d_f, v.shape[1])), np.zeros((n, d_f)), np.zeros((n, v.shape[1]))
    for t in range(n):
        S = S + np.outer(fk[t], v[t])
        z = z + fk[t]
        Ss[t], zs[t] = S, z
        out[t] = (fq[t] @ S) / (fq[t] @ z)
    return LinearRecurrence(S=Ss, z=zs, output=out)


# --- comparing with a real head --------------------------------------------------------------------------


@dataclass(frozen=True)
class PatternComparison:
    """Softmax against linear on one head, per query row."""

    softmax: np.ndarray  # [n, n] softmax(q'·kᵀ), q' = q/√d_head (masked)
    linear: np.ndarray  # [n, n] rownorm(φ(q')·φ(k)ᵀ) (masked)
    tv: np.ndarray  # [n] ½·Σ_j |softmax − linear|
    top_softmax: np.ndarray  # [n] the softmax's largest weight (on its top key)
    top_linear: np.ndarray  # [n] the linear pattern's largest weight (on its own top key)
    linear_on_softmax_top: np.ndarray  # [n] the linear weight on the softmax's top key


def compare_patterns(q, k, causal: bool = True, phi: FeatureMap = elu_plus_one,
                     scale: float | None = None) -> PatternComparison:
    sm = softmax_weights(q, k, causal, scale)
    lin = linear_weights(q, k, causal, phi, scale)
    top = sm.argmax(axis=1)
    rows = np.arange(len(sm))
    return PatternComparison(softmax=sm, linear=lin, tv=0.5 * np.abs(sm - lin).sum(axis=1), top_softmax=sm.max(axis=1),
                             top_linear=lin.max(axis=1), linear_on_softmax_top=lin[rows, top])


@dataclass(frozen=True)
class ModelComparison:
    """Every layer and head of a model on some passages: per-row means, pooled over every query row of
    every passage (a passage of n tokens counts n rows)."""

    model: str
    passages: tuple[str, ...]
    n_tokens: tuple[int, ...]
    tv: np.ndarray  # [n_layers, n_heads] mean total-variation distance per row
    top_softmax: np.ndarray  # [n_layers, n_heads] mean weight on each row's top key, softmax
    top_linear: np.ndarray  # [n_layers, n_heads] the same, linear (its own top key)
    linear_on_softmax_top: np.ndarray  # [n_layers, n_heads] linear weight on the softmax's top key

    @property
    def tv_per_layer(self) -> np.ndarray:
        return self.tv.mean(axis=1)

    @property
    def tv_overall(self) -> float:
        return float(self.tv.mean())


def compare_trace(trace, phi: FeatureMap = elu_plus_one) -> dict[str, np.ndarray]:
    """Row sums (not means) over one trace of every field of ModelComparison: [n_layers, n_heads]."""
    L, H = len(trace.layers), len(trace.layers[0].heads) if trace.layers else 0
    out = {f: np.zeros((L, H)) for f in ("tv", "top_softmax", "top_linear", "linear_on_softmax_top")}
    for l in range(L):
        for h in range(H):
            ht = trace.head(l, h)
            c = compare_patterns(ht.q, ht.k, causal=trace.model.causal, phi=phi)
            for f in out:
                out[f][l, h] = getattr(c, f).sum()
    return out


def compare_model(session, passages: Sequence[str] | None = None, phi: FeatureMap = elu_plus_one) -> ModelComparison:
    """Softmax against linear for every head of `session`'s model (a ModelSession, or anything with
    .trace(text) and .model) on `passages` (default: passages.passages_for the model)."""
    info = session.model.info
    passages = tuple(passages) if passages is not None else passages_for(info)
    sums, counts = None, []
    for text in passages:
        tr = session.trace(text)
        s = compare_trace(tr, phi)
        sums = s if sums is None else {f: sums[f] + s[f] for f in s}
        counts.append(tr.n_tokens)
    rows = sum(counts)
    return ModelComparison(model=info.name, passages=passages, n_tokens=tuple(counts),
                           **{f: sums[f] / rows for f in sums})


# --- running the model with a layer's heads made linear ----------------------------------------------------


def linear_override(phi: FeatureMap = elu_plus_one):
    """An attention function for transformer.override_attention: the layer's heads attend linearly
    (the quadratic form, so that the pattern can be recorded too; the same numbers as the RNN)."""
    import torch

    if isinstance(phi, RandomFeatures):
        W = torch.tensor(phi.W)

        def attend(q, k, v, mask, scale):
            r = math.sqrt(scale)
            w = W.to(q.device, q.dtype)
            eq, ek = ((x * r) @ w.T - 0.5 * (x * r).pow(2).sum(-1, keepdim=True) for x in (q, k))
            log_a = torch.logsumexp(eq.unsqueeze(-2) + ek.unsqueeze(-3), dim=-1)  # [b, h, n_q, n_k]
            a = torch.softmax(log_a.masked_fill(mask, float("-inf")), dim=-1)
            return a, torch.einsum("bhqk,bhkd->bhqd", a, v)

        return attend
    if phi is not elu_plus_one:
        raise ValueError("a feature map for the model is elu_plus_one or a RandomFeatures")

    def attend(q, k, v, mask, scale):
        f = lambda x: torch.nn.functional.elu(x) + 1.0  # noqa: E731
        a = torch.einsum("bhqf,bhkf->bhqk", f(q * scale), f(k)).masked_fill(mask, 0.0)
        a = a / a.sum(-1, keepdim=True)
        return a, torch.einsum("bhqk,bhkd->bhqd", a, v)

    return attend


@dataclass(frozen=True)
class SwapEffects:
    """Per passage and per layer: the next-token effect of that one layer attending linearly."""

    model: str
    passages: tuple[str, ...]
    effects: tuple[tuple, ...]  # [passage][layer] swapped.NextTokenEffect

    @property
    def kept(self) -> np.ndarray:
        """[passages, layers] bool: the top-1 next token survived."""
        return np.array([[e.kept for e in row] for row in self.effects], dtype=bool)

    @property
    def kl(self) -> np.ndarray:
        """[passages, layers] KL(softmax model ‖ swapped model), nats."""
        return np.array([[e.kl for e in row] for row in self.effects])


def swap_effects(model, passages: Sequence[str] | None = None, phi: FeatureMap = elu_plus_one,
                 layers: Sequence[int] | None = None) -> SwapEffects:
    """For each passage and each layer (default: all), the model run with that layer's heads linear."""
    from .swapped import encode, next_token_effect, next_token_logprobs

    passages = tuple(passages) if passages is not None else passages_for(model.info)
    layers = range(model.cfg.n_layers) if layers is None else layers
    fn = linear_override(phi)
    rows = []
    for text in passages:
        ids = encode(model, text)
        before = next_token_logprobs(model, ids)
        rows.append(tuple(next_token_effect(model, ids, {l: fn}, before) for l in layers))
    return SwapEffects(model=model.info.name, passages=passages, effects=tuple(rows))


# --- cost -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttentionCost:
    """Multiply-adds of one head over n tokens (Python ints: n up to millions is fine)."""

    n: int
    d_head: int
    d_features: int
    softmax: int  # 2·n²·d
    linear: int  # 2·n·d_f·d + 2·n·d_f

    @property
    def ratio(self) -> float:
        return self.softmax / self.linear


def attention_cost(n: int, d_head: int, d_features: int | None = None) -> AttentionCost:
    n, d = int(n), int(d_head)
    f = d if d_features is None else int(d_features)
    if n < 1 or d < 1 or f < 1:
        raise ValueError("n, d_head and the feature count must be at least 1")
    return AttentionCost(n=n, d_head=d, d_features=f, softmax=2 * n * n * d, linear=2 * n * f * d + 2 * n * f)


COST_LENGTHS = (64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)


def cost_table(d_head: int, lengths: Sequence[int] = COST_LENGTHS, d_features: int | None = None) -> list[AttentionCost]:
    return [attention_cost(n, d_head, d_features) for n in lengths]


# --- the command line -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m attention_manim.model.linear_attention",
                                 description="Softmax against linear attention on every head of a model.")
    ap.add_argument("--model", choices=BUILTIN_MODELS, default=SMOLLM2)
    ap.add_argument("--no-swap", action="store_true", help="skip running the model with each layer made linear")
    ap.add_argument("--phi", choices=("elu", "random"), default="elu",
                    help="the feature map: elu(x) + 1 (default) or positive random features")
    ap.add_argument("--features", type=int, default=64, help="random features: how many (default 64)")
    ap.add_argument("--seed", type=int, default=0, help="random features: the seed")
    args = ap.parse_args(argv)
    if args.features < 1:
        print("error: --features must be at least 1", file=sys.stderr)
        return 2
    from .session import open_session

    t0 = time.perf_counter()
    session = open_session(args.model, "cpu")
    info = session.model.info
    phi = elu_plus_one if args.phi == "elu" else random_features(info.d_head, args.features, args.seed)
    named = "elu + 1" if args.phi == "elu" else f"{args.features} positive random features (seed {args.seed})"
    comp = compare_model(session, phi=phi)
    t1 = time.perf_counter()
    print(f"{info.name}: {info.n_layers} layers × {info.n_heads} heads, {len(comp.passages)} passages of "
          f"{list(comp.n_tokens)} tokens, φ = {named}, q scaled by 1/√{info.d_head} ({t1 - t0:.1f} s)")
    print("layer  TV(softmax, linear)  top-key weight softmax  linear  linear on softmax's top")
    for l in range(info.n_layers):
        print(f"{l:5d}  {comp.tv[l].mean():19.3f}  {comp.top_softmax[l].mean():22.3f}  {comp.top_linear[l].mean():6.3f}"
              f"  {comp.linear_on_softmax_top[l].mean():23.3f}")
    print(f"  all  {comp.tv_overall:19.3f}  {comp.top_softmax.mean():22.3f}  {comp.top_linear.mean():6.3f}"
          f"  {comp.linear_on_softmax_top.mean():23.3f}")
    if not args.no_swap:
        t2 = time.perf_counter()
        sw = swap_effects(session.model, comp.passages, phi)
        print(f"\none layer's heads made linear, next token at the end of each passage ({time.perf_counter() - t2:.1f} s):")
        print("layer  " + "  ".join(f"passage {i}: kept  KL" for i in range(len(sw.passages))))
        for l in range(info.n_layers):
            print(f"{l:5d}  " + "  ".join(f"{'yes' if row[l].kept else 'NO ':>14}  {row[l].kl:.3f}" for row in sw.effects))
        print("the model's own next tokens: " + ", ".join(repr(row[0].token) for row in sw.effects))
        print(f"top-1 kept in {int(sw.kept.sum())} of {sw.kept.size}; mean KL {sw.kl.mean():.3f} nats, max {sw.kl.max():.3f}")
    print(f"\nmultiply-adds of one head, d_head = {info.d_head}:")
    for c in cost_table(info.d_head, d_features=None if args.phi == "elu" else args.features):
        print(f"  n = {c.n:>9,}: softmax {c.softmax:>22,}  linear {c.linear:>16,}  ratio {c.ratio:,.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
