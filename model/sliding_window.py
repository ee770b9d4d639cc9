"""Sliding-window attention and attention sinks: which cells a window removes, how much of a real
head's weight lived there, how far stacked windows reach, and what the model predicts with them.

A causal window of width w: query i sees keys i−w+1 .. i (itself and the w−1 tokens before it), w keys
at most; the n² causal triangle shrinks to a band of about n·w cells (Longformer, Mistral).
Attention sinks (StreamingLLM, Xiao et al. 2023): real models pile weight on the first tokens whatever
they say, as a place to put attention that is not needed; a window that drops them changes the
softmax's denominators everywhere. Sink + window keeps the first s tokens as well: query i sees keys
0..s−1 (those at or before i) and i−w+1..i.

Boolean arrays here are [query, key]. `*_sees` arrays are True where the query may attend (the
reachability convention); `window_mask` is True where a key is blocked, as HeadTrace.mask is.

Reach: a layer passes information one window back; stacked, L window layers let position i depend on
the tokens j with 0 ≤ i − j ≤ L·(w − 1), L·(w − 1) tokens back (plus itself), because each layer's
band spans w − 1 steps and the steps add. `reach` says that number; `reach_sees` composes the masks
(boolean matrix products) and tests hold the two together. With sinks the first s tokens are in
reach as well, from the first layer on, and nothing more (a sink sees only tokens before it).

Shares of a head's weight, per query row, averaged over the rows i ≥ w (the rows whose window removes
something; the same rows for the window and for sink + window): outside = the weight on keys the
mask removes, kept = 1 − outside. The sink share is the mean weight on token 0 over the rows i ≥ 1.

    python -m attention_manim.model.sliding_window [--model smollm2|toy] [--sinks S]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .passages import LONG_PASSAGE
from .places import BUILTIN_MODELS, SMOLLM2


def _check(n: int, w: int, sinks: int = 0) -> None:
    if n < 1 or w < 1 or sinks < 0:
        raise ValueError(f"need n ≥ 1, w ≥ 1 and sinks ≥ 0 (got n={n}, w={w}, sinks={sinks})")


def causal_sees(n: int) -> np.ndarray:
    """[n, n] True where key j ≤ query i."""
    return np.tril(np.ones((n, n), dtype=bool))


def window_sees(n: int, w: int) -> np.ndarray:
    """[n, n] True where query i sees key j: i − w + 1 ≤ j ≤ i."""
    _check(n, w)
    d = np.arange(n)[:, None] - np.arange(n)[None, :]
    return (d >= 0) & (d < w)


def sink_window_sees(n: int, w: int, sinks: int) -> np.ndarray:
    """[n, n] the window plus the first `sinks` keys (those at or before the query)."""
    _check(n, w, sinks)
    return window_sees(n, w) | (causal_sees(n) & (np.arange(n)[None, :] < sinks))


def window_mask(n: int, w: int, sinks: int = 0) -> np.ndarray:
    """[n, n] True where the key is blocked (HeadTrace.mask's convention): the future and the removed cells."""
    return ~sink_window_sees(n, w, sinks)


def removed(n: int, w: int, sinks: int = 0) -> np.ndarray:
    """[n, n] the cells the causal pattern has and the (sink +) window drops."""
    return causal_sees(n) & ~sink_window_sees(n, w, sinks)


def removed_count(n: int, w: int, sinks: int = 0) -> int:
    """How many cells are dropped, in closed form (a Python int, for any n): row i drops the
    max(0, i − w + 1 − s) keys before its window that are not sinks, so the rows drop 1, 2, ..., T
    with T = max(0, n − w − s): T·(T + 1)/2 cells."""
    _check(n, w, sinks)
    t = max(0, n - w - sinks)
    return t * (t + 1) // 2


def reach(layers: int, w: int) -> int:
    """How many tokens back L stacked window layers reach: L·(w − 1)."""
    if layers < 0 or w < 1:
        raise ValueError("need layers ≥ 0 and w ≥ 1")
    return layers * (w - 1)


def reach_sees(n: int, w: int, layers: int, sinks: int = 0) -> np.ndarray:
    """[n, n] True where position i after `layers` layers depends on token j: the layers' masks
    composed (boolean matrix products). Zero layers: each position only itself."""
    step = sink_window_sees(n, w, sinks).astype(np.int64)
    r = np.eye(n, dtype=bool)
    for _ in range(layers):
        r = (r.astype(np.int64) @ step) > 0
    return r


# --- a real head's weight ---------------------------------------------------------------------------


def rows_past(n: int, w: int) -> np.ndarray:
    """The query rows whose window removes something: i ≥ w."""
    return np.arange(w, n)


def weight_outside(pattern: np.ndarray, w: int, sinks: int = 0) -> float:
    """The mean, over rows i ≥ w, of the weight `pattern` ([n, n], causal) puts on removed cells; nan
    when no row has any (n ≤ w)."""
    p = np.asarray(pattern, dtype=np.float64)
    rows = rows_past(len(p), w)
    if not len(rows):
        return float("nan")
    cut = removed(len(p), w, sinks)
    return float((p * cut)[rows].sum(axis=1).mean())


def sink_share(pattern: np.ndarray, token: int = 0) -> float:
    """The mean weight on `token` over the rows after it (the rows that had a choice)."""
    p = np.asarray(pattern, dtype=np.float64)
    return float(p[token + 1:, token].mean()) if len(p) > token + 1 else float("nan")


@dataclass(frozen=True)
class WindowShares:
    """Every head of one trace against some window widths."""

    model: str
    n_tokens: int
    windows: tuple[int, ...]
    sinks: int
    outside: np.ndarray  # [n_layers, n_heads, len(windows)] weight outside the window alone
    outside_sinks: np.ndarray  # [n_layers, n_heads, len(windows)] weight outside sink + window
    sink: np.ndarray  # [n_layers, n_heads] mean weight on token 0 (rows ≥ 1)

    @property
    def kept(self) -> np.ndarray:
        return 1.0 - self.outside

    @property
    def kept_sinks(self) -> np.ndarray:
        return 1.0 - self.outside_sinks


def window_shares(trace, windows: Sequence[int] = (4, 8, 16), sinks: int = 4) -> WindowShares:
    """The shares of every head's weight of `trace` for each window width (module doc)."""
    L, H = len(trace.layers), len(trace.layers[0].heads)
    out = np.zeros((L, H, len(windows)))
    out_s = np.zeros((L, H, len(windows)))
    sink = np.zeros((L, H))
    for l in range(L):
        for h in range(H):
            p = trace.head(l, h).pattern
            for i, w in enumerate(windows):
                out[l, h, i] = weight_outside(p, w)
                out_s[l, h, i] = weight_outside(p, w, sinks)
            sink[l, h] = sink_share(p)
    return WindowShares(model=trace.model.name, n_tokens=trace.n_tokens, windows=tuple(windows), sinks=sinks,
                        outside=out, outside_sinks=out_s, sink=sink)


# --- running the model with every layer windowed ------------------------------------------------------


def window_override(w: int, sinks: int = 0):
    """An attention function for transformer.override_attention: softmax over the (sink +) window only."""
    import torch

    def attend(q, k, v, mask, scale):
        n = q.shape[-2]
        blocked = mask | torch.from_numpy(~sink_window_sees(n, w, sinks)).to(mask.device)
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) * scale
        pattern = torch.softmax(scores.masked_fill(blocked, float("-inf")), dim=-1)
        return pattern, torch.einsum("bhqk,bhkd->bhqd", pattern, v)

    return attend


@dataclass(frozen=True)
class WindowEffects:
    """The next-token effect of every layer windowed, for each width: window alone and sink + window."""

    model: str
    text: str
    n_tokens: int
    windows: tuple[int, ...]
    sinks: int
    window: tuple  # [len(windows)] swapped.NextTokenEffect
    sink_window: tuple  # [len(windows)] swapped.NextTokenEffect


def window_effects(model, text: str = LONG_PASSAGE, windows: Sequence[int] = (4, 8, 16, 32, 64),
                   sinks: int = 4) -> WindowEffects:
    from .swapped import encode, next_token_effect, next_token_logprobs

    ids = encode(model, text)
    before = next_token_logprobs(model, ids)
    layers = range(model.cfg.n_layers)
    win = tuple(next_token_effect(model, ids, {l: window_override(w) for l in layers}, before) for w in windows)
    sw = tuple(next_token_effect(model, ids, {l: window_override(w, sinks) for l in layers}, before) for w in windows)
    return WindowEffects(model=model.info.name, text=text, n_tokens=len(ids), windows=tuple(windows), sinks=sinks,
                         window=win, sink_window=sw)


# --- the command line -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m attention_manim.model.sliding_window",
                                 description="Sliding windows and attention sinks on a real model.")
    ap.add_argument("--model", choices=BUILTIN_MODELS, default=SMOLLM2)
    ap.add_argument("--sinks", type=int, default=4)
    args = ap.parse_args(argv)
    if args.sinks < 0:
        print("error: --sinks must be 0 or more", file=sys.stderr)
        return 2
    from .session import open_session

    sinks_named = f"{args.sinks} sink{'' if args.sinks == 1 else 's'}"
    t0 = time.perf_counter()
    session = open_session(args.model, "cpu")
    info = session.model.info
    text = LONG_PASSAGE if info.real else info.examples["long"]
    tr = session.trace(text)
    sh = window_shares(tr, (4, 8, 16), args.sinks)
    print(f"{info.name}, {tr.n_tokens} tokens, all {info.n_layers}×{info.n_heads} heads ({time.perf_counter() - t0:.1f} s)")
    print(f"mean weight on token 0 (the sink): {sh.sink.mean():.3f}  (per layer: "
          + " ".join(f"{x:.2f}" for x in sh.sink.mean(axis=1)) + ")")
    for i, w in enumerate(sh.windows):
        print(f"w = {w:2d}: weight outside the window {sh.outside[..., i].mean():.3f}; kept: window {sh.kept[..., i].mean():.3f}, "
              f"{sinks_named} + window {sh.kept_sinks[..., i].mean():.3f}")
    print(f"reach of {info.n_layers} layers: " + ", ".join(f"w={w}: {reach(info.n_layers, w)} tokens back" for w in (4, 8, 16)))
    t1 = time.perf_counter()
    windows = tuple(w for w in (4, 8, 16, 32, 64) if w < tr.n_tokens) + (tr.n_tokens,)
    ef = window_effects(session.model, text, windows, args.sinks)
    print(f"\nevery layer windowed, next token after the passage (model's own: {ef.window[0].token!r}, "
          f"p = {ef.window[0].p_top1:.3f}) ({time.perf_counter() - t1:.1f} s):")
    for w, a, b in zip(ef.windows, ef.window, ef.sink_window):
        print(f"w = {w:3d}: window {'kept' if a.kept else 'LOST'} ({a.token_after!r}, KL {a.kl:.3f}); "
              f"{sinks_named} + window {'kept' if b.kept else 'LOST'} ({b.token_after!r}, KL {b.kl:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
