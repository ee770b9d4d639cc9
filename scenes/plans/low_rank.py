"""Plans of `low_rank` and `output_matrix` (no manim).

`low_rank`: a head's value map is value-down W_V (d_model × d_head) then value-up W_O (d_head ×
d_model). Their product W_V·W_O is a d_model × d_model matrix, but its rank is at most d_head: of
its d_model singular values (numpy SVD, in float64), at most d_head are non-zero, the rest are zero
to machine precision.

`output_matrix`: the heads' value-up maps W_O[h] stacked into one matrix are the papers' single
output matrix: concatenating the heads' outputs z (n × d_head each) and multiplying by the stacked
matrix gives the sum of the heads' ΔEs. The plan computes both sides (float64) and their largest
absolute difference.

The screen draws vectors as columns, the video's way (W_O[h] shown d_model × d_head, the maps side by
side); the trace keeps rows (z @ W_O[h]): the same numbers, transposed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..setting import Setting

MAX_CELLS = 32  # a compressed heat map shows at most this many rows and columns (evenly spread)
SHOWN_ENTRIES = 3  # the first entries of the focus's ΔE shown on each side (then ⋮ and the last one)
MAX_DECIMALS = 5  # (review 37: at 6, output_matrix and head_split wrote one sum 0.469496 and 0.469497, float32 apart)


def spread(n: int, most: int = MAX_CELLS) -> tuple[int, ...]:
    """`most` indices spread evenly over range(n) (first and last included), or all of them."""
    if n <= most:
        return tuple(range(n))
    return tuple(int(round(x)) for x in np.linspace(0, n - 1, most))


def zero_tolerance(singular: np.ndarray, shape: tuple[int, int]) -> float:
    """Below this a singular value is zero to machine precision (numpy's matrix_rank rule)."""
    return float(singular.max(initial=0.0) * max(shape) * np.finfo(np.float64).eps)


@dataclass(frozen=True)
class LowRankPlan:
    layer: int
    head: int
    role: str
    d_model: int
    d_head: int
    product: np.ndarray  # [d_model, d_model] W_V @ W_O (float64)
    rows: tuple[int, ...]  # the rows (and columns) the heat map shows
    scale: float  # the largest |entry| shown: the brightest colour
    singular: np.ndarray  # [d_model] singular values, largest first (float64)
    tolerance: float  # zero to machine precision below this
    rank: int  # how many singular values are above the tolerance
    largest_zero: float  # the largest singular value past d_head (0.0 when d_model == d_head)
    bars: int  # how many singular values the bar chart shows (the first ones)
    real: bool  # a real model (a layer and head index instead of a role name)

    @property
    def cells(self) -> np.ndarray:
        return self.product[np.ix_(self.rows, self.rows)]

    @property
    def full_count(self) -> int:
        return self.d_model * self.d_model

    @property
    def factor_count(self) -> int:
        return 2 * self.d_model * self.d_head


def plan_low_rank(setting: Setting) -> LowRankPlan:
    tr = setting.trace
    ht = setting.head_trace(tr)
    W_V = np.asarray(ht.W_V, dtype=np.float64)
    W_O = np.asarray(ht.W_O, dtype=np.float64)
    product = W_V @ W_O
    d_model, d_head = product.shape[0], W_V.shape[1]
    s = np.linalg.svd(product, compute_uv=False)
    tol = zero_tolerance(s, product.shape)
    rows = spread(d_model)
    cells = product[np.ix_(rows, rows)]
    return LowRankPlan(layer=setting.head.layer, head=setting.head.head, role=ht.role, d_model=d_model,
                       d_head=d_head, product=product, rows=rows, scale=float(np.abs(cells).max()),
                       singular=s, tolerance=tol, rank=int((s > tol).sum()),
                       largest_zero=float(s[d_head:].max(initial=0.0)),
                       bars=min(d_model, 2 * d_head), real=bool(tr.model.real))


@dataclass(frozen=True)
class OutputMatrixPlan:
    tokens: tuple[str, ...]
    focus: int
    layer: int
    n_heads: int
    d_head: int
    d_model: int
    stacked: np.ndarray  # [n_heads * d_head, d_model] the W_O[h] one under another (trace's rows)
    concat: np.ndarray  # [n, n_heads * d_head] the heads' z side by side
    product: np.ndarray  # [n, d_model] concat @ stacked (float64)
    head_sum: np.ndarray  # [n, d_model] the sum of the heads' ΔE (float64, from the trace)
    max_diff: float  # max |product - head_sum| over every token and entry
    max_diff_focus: float  # the same on the focus's row
    bias: float  # max |layer ΔE - head sum|: the output bias the layer adds (0 without biases)
    shown: tuple[int, ...]  # the entries of the focus's row on screen (⋮ before the last)
    decimals: int  # decimals shown: as many (up to MAX_DECIMALS) as agree on every shown entry
    rows: tuple[int, ...]  # the d_model rows the heat maps show
    cols: tuple[int, ...]  # the d_head columns each map shows
    scale: float  # the largest |entry| shown in the maps
    real: bool
    low: float = 0.0  # the smallest entry shown in the maps (the colour scale's left end)
    high: float = 0.0  # the largest entry shown in the maps (its right end)


def agreeing_decimals(a: np.ndarray, b: np.ndarray, most: int = MAX_DECIMALS) -> int:
    """The most decimals (≤ most) at which every pair of entries reads the same."""
    for d in range(most, 0, -1):
        if all(f"{x:.{d}f}" == f"{y:.{d}f}" for x, y in zip(a, b)):
            return d
    return 1


def plan_output_matrix(setting: Setting) -> OutputMatrixPlan:
    tr = setting.trace
    layer = setting.head.layer
    heads = [tr.head(layer, h) for h in range(tr.model.n_heads)]
    stacked = np.concatenate([np.asarray(h.W_O, np.float64) for h in heads], axis=0)
    concat = np.concatenate([np.asarray(h.z, np.float64) for h in heads], axis=1)
    product = concat @ stacked
    head_sum = np.sum([np.asarray(h.delta_e, np.float64) for h in heads], axis=0)
    focus = setting.focus_index(tr)
    d_model = stacked.shape[1]
    shown = tuple(range(min(SHOWN_ENTRIES, d_model))) + ((d_model - 1,) if d_model > SHOWN_ENTRIES else ())
    d_head = heads[0].W_O.shape[0]
    rows, cols = spread(d_model, 24), spread(d_head, 8)
    maps = np.stack([np.asarray(h.W_O, np.float64)[np.ix_(cols, rows)] for h in heads])
    return OutputMatrixPlan(
        tokens=tr.tokens, focus=focus, layer=layer, n_heads=len(heads), d_head=d_head, d_model=d_model,
        stacked=stacked, concat=concat, product=product, head_sum=head_sum,
        max_diff=float(np.abs(product - head_sum).max()),
        max_diff_focus=float(np.abs(product[focus] - head_sum[focus]).max()),
        bias=float(np.abs(np.asarray(tr.layers[layer].delta_e, np.float64) - head_sum).max()),
        shown=shown, decimals=agreeing_decimals(product[focus, list(shown)], head_sum[focus, list(shown)]),
        rows=rows, cols=cols, scale=float(np.abs(maps).max()), real=bool(tr.model.real),
        low=float(maps.min()), high=float(maps.max()))
