"""Plan of the context-size chapter: the grid grows from the sentence to a long passage (no manim).

The long passage is the model's own example "long" (its config's `examples`), put after the
sentence and cut to the context; a model with no such example repeats the sentence to fill the
context instead, and the chapter says so. A sentence longer than 16 words grows from its first
8 words to itself. The extra sentences are traced when the lesson's setting is made
(`with_context_traces`), so that the plan stays a plain function of the setting.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from attention_manim.model.errors import UserError
from attention_manim.model.trace import HeadTrace, Trace

from ..setting import HeadRef, Setting, focus_tops

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
                           close_query=q, close_keys=tuple(ks),
                           close_weights=tuple(float(hl.pattern[q, j]) for j in ks))
