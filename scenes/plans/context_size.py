"""Plans of the context-size lesson (no manim): the grid grows from the sentence to a long passage
(`plan_context_size`), then what the pattern costs in memory at long lengths (`plan_context_memory`).

The long passage is the model's own example "long" (its config's `examples`), put after the
sentence and cut to the context; a model with no such example repeats the sentence to fill the
context instead, and the chapter says so. A sentence longer than 16 words grows from its first
8 words to itself. The extra sentences are traced when the lesson's setting is made
(`with_context_traces`), so that the plan stays a plain function of the setting.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Callable

import numpy as np

from attention_manim.model.errors import UserError
from attention_manim.model.trace import HeadTrace, Trace

from ..setting import HeadRef, Setting, focus_tops
from .flash import BYTES_PER_NUMBER
from .ring import DEVICES, MEMORY_LENGTHS
from .sliding_window import DEFAULT_WINDOW

PASSAGE = "long"  # the example id of the passage the sentence grows into
CONTEXT_TRACES = "context_traces"  # Setting.options key: (short trace, long trace, repeated)
LONG_LIMIT = 64  # the long grid has at most this many words (and never more than the context)
SHORT_LIMIT = 16  # a sentence longer than this grows from its first START words
START = 8


def context_texts(tokens, n_ctx: int, passage: str | None) -> tuple[str | None, str | None, bool]:
    """(short text, long text, repeated): None for the short text means the sentence itself, None
    for the long text the sentence itself (it is already long); repeated: no passage, the sentence
    repeats to fill the context."""
    tokens = list(tokens)
    n = len(tokens)
    limit = min(n_ctx, LONG_LIMIT)
    if n > SHORT_LIMIT:
        return " ".join(tokens[:START]), None, False
    if passage is None:
        return None, repeated_text(tokens, limit), True
    room = limit - n - 1
    long_tokens = tokens + ["."] + passage.split()[:max(room, 0)]
    return None, " ".join(long_tokens[:limit]), False


def repeated_text(tokens, limit: int) -> str:
    words = " ".join(tokens)
    reps = max(2, limit // (len(tokens) + 1))
    return " . ".join([words] * reps)


def subword_context_texts(tr: Trace, passage: str | None) -> tuple[str | None, str | None, bool]:
    """`context_texts` for a model whose tokens are pieces of words (a real one): texts are cut
    from the tokens as plain text (" Paris"), so they read back into the same tokens; the long
    text is cut to the limit after tracing (`_cut`)."""
    limit = min(tr.model.n_ctx, LONG_LIMIT)
    if tr.n_tokens > SHORT_LIMIT:
        return "".join(tr.token_texts[:START]), None, False
    text = tr.text.strip().rstrip(".")
    if passage is None:
        reps = max(2, limit // (tr.n_tokens + 1))
        return None, ". ".join([text] * reps), True
    return None, f"{text}. {passage}", False


def _cut(trace: Trace, tracer: Callable[[str], Trace], limit: int) -> Trace:
    return trace if trace.n_tokens <= limit else tracer("".join(trace.token_texts[:limit]))


def with_context_traces(setting: Setting, tracer: Callable[[str], Trace]) -> Setting:
    """The setting with the short and long traces this chapter shows, in its options."""
    tr = setting.trace
    passage = setting.model.examples.get(PASSAGE)
    subword = tr.model.real
    if subword:
        short_text, long_text, repeated = subword_context_texts(tr, passage)
    else:
        short_text, long_text, repeated = context_texts(tr.tokens, tr.model.n_ctx, passage)
    if long_text is None:
        tr_long = tr
    else:
        try:
            tr_long = tracer(long_text)
        except UserError:  # the passage has words this sentence's model does not know
            tr_long, repeated = tracer(repeated_text(tr.tokens, min(tr.model.n_ctx, LONG_LIMIT))), True
    if subword:
        tr_long = _cut(tr_long, tracer, min(tr.model.n_ctx, LONG_LIMIT))
    tr_short = tr if short_text is None else tracer(short_text)
    return replace(setting, options={**setting.options, CONTEXT_TRACES: (tr_short, tr_long, repeated)})


@dataclass(frozen=True)
class ContextSizePlan:
    head: HeadRef
    layout: str
    short_tokens: tuple[str, ...]
    short_head: HeadTrace
    long_tokens: tuple[str, ...]
    long_head: HeadTrace
    repeated: bool  # no long passage: the sentence, repeated, stands in for one (the caption says so)
    short_open: int  # cells of the short grid the mask leaves open
    long_open: int
    close_query: int  # the close look: a query of the new part that looks away from itself the most
    close_keys: tuple[int, ...]  # its strongest keys
    close_window: tuple[int | None, ...]  # the words its excerpt shows (None: hidden words between)
    close_weights: tuple[float, ...]  # their real weights

    @property
    def n(self) -> int:
        return len(self.short_tokens)

    @property
    def N(self) -> int:  # noqa: N802  (the long length, as written on screen)
        return len(self.long_tokens)

    @property
    def short_cells(self) -> int:
        return self.n * self.n

    @property
    def long_cells(self) -> int:
        return self.N * self.N


def close_query(pattern: np.ndarray, n: int) -> int:
    """Among the words after the first n (all, if none), the one with the most weight away from
    itself; ties go to the earlier word."""
    p = np.array(pattern, dtype=float)
    np.fill_diagonal(p, 0.0)
    cand = list(range(n, len(p))) or list(range(len(p)))
    return max(cand, key=lambda c: (p[c].sum(), -c))


CLOSE_WORDS = 10  # the most words the close look's excerpt shows (gaps of hidden words aside)


def close_window(q: int, keys, n_tokens: int, most: int = CLOSE_WORDS) -> tuple[int | None, ...]:
    """The words the close look's excerpt shows, in order, None where hidden words lie between two
    shown ones: the query with the two words before and one after it, each strongest key with a
    word either side, then more words before the query while there is room. The excerpt's rows and
    columns are the same words, so its cells are the real pattern's, a square grid."""
    keep = {j for j in (q - 2, q - 1, q, q + 1) if 0 <= j < n_tokens}
    for k in keys:
        keep |= {j for j in (k - 1, k, k + 1) if 0 <= j < n_tokens and j <= q}
    if len(keep) > most:  # the keys and the query first, their neighbours as room allows
        core = {q, *keys}
        keep = core | set(sorted(keep - core, key=lambda j: min(abs(j - c) for c in core))[:max(0, most - len(core))])
    j = q - 3
    while len(keep) < most and j >= 0:
        keep.add(j)
        j -= 1
    shown: list[int | None] = []
    for j in sorted(keep):
        if shown and shown[-1] is not None and j > shown[-1] + 1:
            shown.append(None)
        shown.append(j)
    return tuple(shown)


def plan_context_size(setting: Setting) -> ContextSizePlan:
    if CONTEXT_TRACES not in setting.options:
        raise ValueError("the context-size chapter needs its traces: make the setting with "
                         "with_context_traces (ContextSizeLesson does)")
    tr_short, tr_long, repeated = setting.options[CONTEXT_TRACES]
    hs, hl = setting.head_trace(tr_short), setting.head_trace(tr_long)
    n = len(tr_short.tokens)
    q = close_query(hl.pattern, n)
    ks = focus_tops(hl.pattern[q], q)
    return ContextSizePlan(head=setting.head, layout=setting.layout, short_tokens=tr_short.tokens, short_head=hs,
                           long_tokens=tr_long.tokens, long_head=hl, repeated=repeated,
                           short_open=int((~hs.mask).sum()), long_open=int((~hl.mask).sum()),
                           close_query=q, close_keys=tuple(ks), close_window=close_window(q, ks, len(tr_long.tokens)),
                           close_weights=tuple(float(hl.pattern[q, j]) for j in ks))


# --- the memory table: what the pattern (or what stands in for it) holds at long lengths -------------
#
# One layer, all of the model's (query) heads, BYTES_PER_NUMBER (flash's: float32) a number, at the
# lengths of ring's memory table. Per head, at n tokens:
#   full    the whole n × n grid of scores
#   flash   one tile of KERNEL_BLOCK_Q × KERNEL_BLOCK_K scores and its KERNEL_BLOCK_Q rows' running max m and sum l
#   ring    on one of DEVICES devices: its block of n/N queries against one block of n/N keys, and those
#           rows' m and l (blocks of ceil(n/N) tokens, as model/ring.py cuts them)
#   linear  the d × d state φ(K)ᵀV and the normalizer Σφ(k) of d numbers; no n at all
#   window  n × w scores, w the sliding-window lesson's default width
# The output (n × d) is left out of every row: every way writes it.

MEMORY_WAYS = ("full", "flash", "ring", "linear", "window")
# flash's tile in this table: a real kernel's (FlashAttention-2 runs a head of 64 in tiles of 128 queries
# × 128 keys), not the 2 × 3 tile the flash lesson draws to be read (review 35: that tile, in a table of
# SmolLM2's real sizes, made flash look 400 times lighter than linear attention)
KERNEL_BLOCK_Q, KERNEL_BLOCK_K = 128, 128


def pattern_numbers(way: str, n: int, d: int, devices: int = DEVICES, window: int = DEFAULT_WINDOW,
                    block_q: int = KERNEL_BLOCK_Q, block_k: int = KERNEL_BLOCK_K) -> int:
    """Numbers one head holds for its pattern at n tokens, the way `way` attends (see above)."""
    if way == "full":
        return n * n
    if way == "flash":
        bq, bk = min(block_q, n), min(block_k, n)
        return bq * bk + 2 * bq
    if way == "ring":
        b = -(-n // devices)
        return b * b + 2 * b
    if way == "linear":
        return d * d + d
    if way == "window":
        return n * min(window, n)
    raise ValueError(f"unknown way of attending {way!r}: one of {', '.join(MEMORY_WAYS)}")


def rounded_ratio(x: Fraction, digits: int = 3) -> tuple[Fraction, int]:
    """`x` (≥ 1) to `digits` significant digits, as (the rounded value, its decimals): 240,384,615.4 ->
    (240,000,000, 0), 15.9998 -> (16.0, 1). The value is exact: compare it with `x` to know whether to
    say "about"."""
    x = Fraction(x)
    e = len(str(int(x))) - 1  # the power of ten of the leading digit (x ≥ 1)
    v = round(x / Fraction(10) ** (e - digits + 1)) * Fraction(10) ** (e - digits + 1)
    if v >= 10 ** (e + 1):  # 99.96 rounds up to 100: one digit more before the point
        e += 1
    return v, max(digits - 1 - e, 0)


@dataclass(frozen=True)
class MemoryRow:
    way: str  # one of MEMORY_WAYS
    numbers: tuple[int, ...]  # one head's numbers at each length
    bytes: tuple[int, ...]  # all heads of one layer, BYTES_PER_NUMBER a number, at each length
    ratio: Fraction  # the full grid's bytes over this row's, at the longest length (exact)
    ratio_shown: tuple[Fraction, int]  # that ratio to three significant digits: (value, decimals)

    @property
    def about(self) -> bool:
        """Whether the ratio shown is rounded (said "about", drawn "≈")."""
        return self.ratio_shown[0] != self.ratio


@dataclass(frozen=True)
class ContextMemoryPlan:
    model: str
    n_ctx: int  # the model's own context: the table goes beyond it (it says so)
    n_heads: int
    d_head: int
    bytes_per_number: int
    devices: int  # ring's default device count
    window: int  # the sliding window's default width
    block_q: int  # flash's blocks
    block_k: int
    lengths: tuple[int, ...]  # ring's MEMORY_LENGTHS
    rows: tuple[MemoryRow, ...]  # largest first at the longest length (full attention's at the top)

    @property
    def longest(self) -> int:
        return self.lengths[-1]

    @property
    def beyond_context(self) -> bool:
        """Whether the table's lengths go past what the model itself reads."""
        return self.longest > self.n_ctx

    def row(self, way: str) -> MemoryRow:
        return next(r for r in self.rows if r.way == way)


def plan_context_memory(setting: Setting) -> ContextMemoryPlan:
    m = setting.model
    heads, d = m.n_heads, m.d_head
    full_last = pattern_numbers("full", MEMORY_LENGTHS[-1], d) * heads * BYTES_PER_NUMBER
    rows = []
    for way in MEMORY_WAYS:
        numbers = tuple(pattern_numbers(way, n, d) for n in MEMORY_LENGTHS)
        b = tuple(k * heads * BYTES_PER_NUMBER for k in numbers)
        ratio = Fraction(full_last, b[-1])
        rows.append(MemoryRow(way=way, numbers=numbers, bytes=b, ratio=ratio, ratio_shown=rounded_ratio(ratio)))
    rows.sort(key=lambda r: (-r.bytes[-1], MEMORY_WAYS.index(r.way)))
    return ContextMemoryPlan(model=m.name, n_ctx=m.n_ctx, n_heads=heads, d_head=d, bytes_per_number=BYTES_PER_NUMBER,
                             devices=DEVICES, window=DEFAULT_WINDOW, block_q=KERNEL_BLOCK_Q, block_k=KERNEL_BLOCK_K,
                             lengths=tuple(MEMORY_LENGTHS), rows=tuple(rows))
