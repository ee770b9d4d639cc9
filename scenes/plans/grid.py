"""Plans of the grid chapters: dot products, softmax, masking and the formula (no manim here).

Every plan names the grid it draws (head, tokens, layout), the word it follows (`focus`) and the
cells and real numbers its notes and captions show. The context-size chapter, which traces a
longer passage, has its own module (`plans/context_size.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from attention_manim.model.trace import HeadTrace

from ..setting import HeadRef, Setting, contrast_key, focus_tops
from .honesty import Honesty, read_head

MAX_PREFIX_WORDS = 14  # a prefix in the masking stair longer than this shows its last words only
MAX_STAIR_LINES = 8  # more prefixes than this: the first three, the focus's, the last two, ⋮ between


@dataclass(frozen=True)
class GridPlan:
    """What every grid chapter shares: the head and its trace, the words, the layout, the focus."""

    head: HeadRef
    head_trace: HeadTrace
    tokens: tuple[str, ...]
    layout: str  # video: keys as rows, queries as columns; paper: the transpose
    focus: int  # the query the chapter follows

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def d_head(self) -> int:
        return int(self.head_trace.q.shape[1])


def root_of(d: int) -> tuple[float, int]:
    """√d and the digits it is shown with: 0 when it is whole (√16 = 4), else 2 (√8 = 2.83)."""
    r = math.sqrt(d)
    return r, 0 if abs(r - round(r)) < 1e-9 else 2


def _base(setting: Setting) -> dict:
    return dict(head=setting.head, head_trace=setting.head_trace(), tokens=setting.trace.tokens,
                layout=setting.layout, focus=setting.focus_index())


# --- dot products -------------------------------------------------------------------------------

@dataclass(frozen=True)
class DotProductsPlan(GridPlan):
    tops: tuple[int, ...]  # the focus's strongest keys (weight ≥ 0.1, itself left out), strongest first
    contrast: int | None  # its lowest-scoring visible key besides those, for contrast (None: none left)
    root: float  # √d_head
    root_digits: int  # digits √d_head is shown with
    card_key: int  # the close-up cell is (focus, card_key): the focus's strongest key
    card_dot: float  # the real K⃗·Q⃗ of that cell (before dividing)
    card_score: float  # the real score of that cell (K⃗·Q⃗ / √d_head)
    spotlit: tuple[tuple[int, int], ...]  # the cells the spotlight picks: tops, then the contrast
    spot_scores: tuple[float, ...]  # their real scores

    @property
    def cells_by_key(self) -> dict[int, float]:
        return {k: s for (_, k), s in zip(self.spotlit, self.spot_scores)}


def plan_dot_products(setting: Setting) -> DotProductsPlan:
    base = _base(setting)
    ht, i = base["head_trace"], base["focus"]
    tops = focus_tops(ht.pattern[i], i)
    contrast = contrast_key(ht.scores[i], ht.mask[i], tops + [i])
    j = tops[0]
    cells = [(i, k) for k in tops] + ([(i, contrast)] if contrast is not None else [])
    root, digits = root_of(int(ht.q.shape[1]))
    return DotProductsPlan(**base, tops=tuple(tops), contrast=contrast, root=root, root_digits=digits,
                           card_key=j, card_dot=float(ht.q[i] @ ht.k[j]), card_score=float(ht.scores[i, j]),
                           spotlit=tuple(cells), spot_scores=tuple(float(ht.scores[c]) for c in cells))


# --- softmax ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SoftmaxPlan(GridPlan):
    columns: tuple[int, ...]  # the queries whose softmax is shown one by one: the focus first
    visible: tuple[int, ...]  # how many keys each of them may see
    first_top: int  # the key that gets the most of the first column's weight
    first_top_weight: float  # its real weight
    first_sum: float  # the real sum of the first column's weights
    honesty: Honesty  # what a real head does with the focus (a note when not what the story says)


def softmax_order(pattern: np.ndarray, focus: int) -> list[int]:
    """The focus first, then up to two other queries with several keys to weigh: the one that
    spreads its weight the most (if at all), and the last word (the most keys)."""
    n = pattern.shape[0]
    order = [focus]
    others = [q for q in range(1, n) if q != focus]
    if others:
        spread = {q: 1.0 - float(pattern[q].max()) for q in others}
        best = max(others, key=lambda q: (spread[q], q))
        if spread[best] > 0.02:
            order.append(best)
    if n - 1 not in order and n - 1 > 0:
        order.append(n - 1)
    return order[:3]


def plan_softmax(setting: Setting) -> SoftmaxPlan:
    base = _base(setting)
    ht = base["head_trace"]
    order = softmax_order(ht.pattern, base["focus"])
    q = order[0]
    visible_keys = [j for j in np.argsort(-ht.pattern[q], kind="stable") if not ht.mask[q, j]]
    top = int(visible_keys[0])
    return SoftmaxPlan(**base, columns=tuple(order), visible=tuple(int((~ht.mask[c]).sum()) for c in order),
                       first_top=top, first_top_weight=float(ht.pattern[q, top]),
                       first_sum=float(ht.pattern[q].sum()), honesty=read_head(ht, q))


# --- masking ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MaskingPlan(GridPlan):
    stair: tuple[int | None, ...]  # the prefixes shown, by their last word's index (None: ⋮ for left-out lines)
    prefix_texts: tuple[str | None, ...]  # each prefix as shown (long ones cut to their last words after "…")
    cheat: int | None  # the prefix whose next word would give the answer away (None: a single word)
    strip_query: int  # the query whose softmax shows −∞ turning into 0
    strip_visible: int  # how many keys it may see


def stair_lines(n: int, focus: int) -> list[int | None]:
    """The prefixes the stair shows (each guesses the word after it): all of them when few, else
    the first three, the focus's and the last two, with None where lines are left out."""
    lines = list(range(n - 1))
    if len(lines) <= MAX_STAIR_LINES:
        return lines
    keep = sorted(set(lines[:3] + lines[-2:] + [min(focus, n - 2)]))
    shown: list[int | None] = []
    for p in keep:
        if shown and p - shown[-1] > 1:
            shown.append(None)
        shown.append(p)
    return shown


def prefix_text(tokens, end: int) -> str:
    words = list(tokens[:end + 1])
    if len(words) <= MAX_PREFIX_WORDS:
        return " ".join(words)
    return "… " + " ".join(words[-MAX_PREFIX_WORDS:])


def plan_masking(setting: Setting) -> MaskingPlan:
    base = _base(setting)
    ht, i, tokens = base["head_trace"], base["focus"], base["tokens"]
    n = len(tokens)
    stair = stair_lines(n, i)
    cheat = min(i, n - 2) if n > 1 else None
    q = i if i < n - 1 else max(n - 2, 0)
    return MaskingPlan(**base, stair=tuple(stair),
                       prefix_texts=tuple(None if p is None else prefix_text(tokens, p) for p in stair),
                       cheat=cheat, strip_query=q, strip_visible=int((~ht.mask[q]).sum()))


# --- the formula --------------------------------------------------------------------------------

@dataclass(frozen=True)
class FormulaPlan(GridPlan):
    root: float
    root_digits: int
    mix_keys: tuple[int, ...]  # the values the focus mixes most (weight ≥ 0.01, up to 3), in key order
    mix_weights: tuple[float, ...]  # their real weights
    mix_rest: float  # the weight of the values left out of the sum drawn (≥ 0.005: it says "+ …")
    value_labels: tuple[int, ...]  # the keys whose V⃗ is labelled beside the grid
    other_layout: str  # the orientation the chapter ends in (the transpose)


def plan_formula(setting: Setting) -> FormulaPlan:
    base = _base(setting)
    ht, i = base["head_trace"], base["focus"]
    n = len(base["tokens"])
    w = ht.pattern[i]
    picks = sorted(int(j) for j in [j for j in np.argsort(-w, kind="stable") if w[j] >= 0.01][:3])
    root, digits = root_of(int(ht.q.shape[1]))
    labels = tuple(range(n)) if n <= 16 else tuple(picks)
    return FormulaPlan(**base, root=root, root_digits=digits, mix_keys=tuple(picks),
                       mix_weights=tuple(float(w[j]) for j in picks), value_labels=labels,
                       mix_rest=float(max(0.0, 1.0 - sum(float(w[j]) for j in picks))),
                       other_layout="paper" if base["layout"] == "video" else "video")
