"""Plan of `last_token`: a passage whose last word must gather the clues, and what each head of
the model really sends into that last word."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..setting import Setting
from .honesty import IDLE, role_idle

LINE_CHARS = 46  # a passage line ends after ".", "!" or "?", or before it grows longer than this
STRONGEST = 3  # the keys a head's note names (each ≥ STRONGEST_MIN)
STRONGEST_MIN = 0.01
NOTHING = 0.005  # below this (0.00 at two decimals) a weight is "nothing"
GUESSES = 3  # the model's top next-word guesses in the closing note


def passage_lines(tokens: Sequence[str], max_chars: int = LINE_CHARS) -> list[list[int]]:
    """Token indices per line: a line ends after '.', '!' or '?', or before it grows too long."""
    lines: list[list[int]] = [[]]
    chars = 0
    for i, t in enumerate(tokens):
        if lines[-1] and chars + len(t) + 1 > max_chars:
            lines.append([])
            chars = 0
        lines[-1].append(i)
        chars += len(t) + 1
        if t in (".", "!", "?") and i < len(tokens) - 1:
            lines.append([])
            chars = 0
    return [ln for ln in lines if ln]


@dataclass(frozen=True)
class HeadInto:
    """One head's attention into the last word."""

    head: int
    role: str  # role id ("" when the model names none)
    weights: np.ndarray  # the last word's attention row [n]
    strongest: tuple[int, ...]  # the keys the note names, strongest first
    reach: float  # weight on the words before the previous one: how far back this head reaches
    top: int  # the key with the largest weight (the caption names it; the last word itself: none flows in)
    idle: float | None = None  # a named role with nothing to act on in the passage: the least weight a word keeps on itself
    # a named role with nothing to act on for the last word (which the lesson follows), though some
    # word of the passage looks away: the last word's weight on itself
    idle_word: float | None = None


@dataclass(frozen=True)
class LastTokenPlan:
    tokens: tuple[str, ...]
    last: int
    lines: tuple[tuple[int, ...], ...]  # the passage, one sentence (or a line's worth) per line
    layer: int
    n_layers: int
    heads: tuple[HeadInto, ...]  # every head of the layer, or the one asked for
    mean_reach: float
    guesses: tuple[tuple[str, float], ...]  # the model's best next words and their probabilities
    real: bool = False  # a real model: no toy, its heads built by nobody; says how much rests on the first token
    mean_first: float = 0.0  # the last word's mean weight on the first token, over the heads shown


def plan_last_token(setting: Setting, heads: Sequence[int] | None = None) -> LastTokenPlan:
    """`heads`: the heads to show (None: every head of the layer)."""
    tr = setting.trace
    last = tr.n_tokens - 1
    layer = setting.head.layer
    shown = list(heads) if heads is not None else list(range(tr.model.n_heads))
    into = []
    for h in shown:
        ht = tr.head(layer, h)
        w = np.asarray(ht.pattern[last], float)
        strongest = tuple(int(k) for k in np.argsort(-w, kind="stable")[:STRONGEST] if w[k] >= STRONGEST_MIN)
        idle = role_idle(ht.pattern, tr.model.real) if ht.role else None
        idle_word = float(w[last]) if ht.role and idle is None and w[last] >= IDLE else None
        into.append(HeadInto(head=h, role=ht.role, weights=w, strongest=strongest,
                             reach=float(w[: max(last - 1, 0)].sum()), top=int(np.argmax(w)),
                             idle=idle, idle_word=idle_word))
    guesses: tuple = ()
    if tr.vocab:
        logits = np.asarray(tr.logits[last], float)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        guesses = tuple((tr.vocab[k], float(p[k])) for k in np.argsort(-p, kind="stable")[:GUESSES])
    return LastTokenPlan(tokens=tr.tokens, last=last, lines=tuple(tuple(x) for x in passage_lines(tr.tokens)),
                         layer=layer, n_layers=tr.model.n_layers, heads=tuple(into),
                         mean_reach=float(np.mean([h.reach for h in into])), guesses=guesses,
                         real=tr.model.real, mean_first=float(np.mean([h.weights[0] for h in into])) if last > 1 else 0.0)
