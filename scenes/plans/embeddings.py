"""Plan of `tokens_to_vectors`: which tokens get a column, the repeated words, the real numbers.

A phrase becomes word boxes; each shown token drops to its lookup column (the token embedding);
words that repeat get the identical column; then position is added and the columns differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..setting import Setting
from .rounding import rounding_off
from .windows import window_indices

MAX_COLUMNS = 10  # longer phrases show this many columns, with "…" where tokens are skipped
MARKED_GROUPS = 2  # at most this many groups of repeated words are marked and named


def shown_token_indices(tokens: Sequence[str], limit: int = MAX_COLUMNS) -> list[int]:
    """Which tokens get a column when there are more than `limit`: both occurrences of the first
    repeated word (the point of the scene), then the first tokens, then the last ones."""
    n = len(tokens)
    if n <= limit:
        return list(range(n))
    required: list[int] = []
    seen: dict[str, int] = {}
    for j, t in enumerate(tokens):
        if t in seen:
            required = [seen[t], j]
            break
        seen[t] = j
    chosen = set(required)
    head = [i for i in range(n) if i not in chosen]
    # fill from the start, keeping the last two tokens for the end of the phrase
    tail = [i for i in (n - 2, n - 1) if i not in chosen]
    for i in head:
        if len(chosen) + len(tail) >= limit:
            break
        chosen.add(i)
    chosen.update(tail[: max(0, limit - len(chosen))])
    return sorted(chosen)


def repeated_groups(tokens: Sequence[str], indices: Sequence[int]) -> list[list[int]]:
    """Groups of shown positions holding the same word (each group ≥ 2), in order of appearance."""
    groups: dict[str, list[int]] = {}
    for i in indices:
        groups.setdefault(tokens[i], []).append(i)
    return [g for g in groups.values() if len(g) > 1]


def box_row(shown: Sequence[int]) -> tuple[tuple[int | None, ...], dict[int, int]]:
    """The row of boxes: the shown token indices, None ("…") wherever tokens are skipped; and the
    box of each shown token."""
    row: list[int | None] = []
    box_of: dict[int, int] = {}
    for k, i in enumerate(shown):
        if k > 0 and i != shown[k - 1] + 1:
            row.append(None)
        box_of[i] = len(row)
        row.append(i)
    return tuple(row), box_of


COLUMN = (4, 1)  # a column shows its first 4 entries and its last (chapters/tokens_to_vectors.py)


@dataclass(frozen=True)
class RepeatGroup:
    """One repeated word: where it stands and what the columns show about it."""

    word: str
    positions: tuple[int, ...]  # token indices, in order
    equal_lookup: int  # how many of the d_model lookup numbers are equal in every occurrence
    differ_after: int  # how many of the d_model numbers differ once position is added


@dataclass(frozen=True)
class TokensPlan:
    tokens: tuple[str, ...]
    d_model: int
    shown: tuple[int, ...]  # token indices that get a column
    row: tuple[int | None, ...]  # the box row: token index, or None for "…"
    box_of: dict  # token index -> its box in `row`
    lookups: np.ndarray  # [len(shown), d_model] token embeddings (the lookup alone)
    positions: np.ndarray  # [len(shown), d_model] position embeddings
    sums: np.ndarray  # [len(shown), d_model] lookup + position: what enters attention
    repeated: tuple[tuple[int, ...], ...]  # every group of shown positions holding one word
    marked: tuple[RepeatGroup, ...]  # the first groups, marked on screen and named in captions
    rotary: bool = False  # position is not added to the embedding (queries and keys are rotated instead)
    pieces: bool = False  # some words are several tokens (the first caption says so)
    sum_rounding: tuple = ()  # per shown column: its entries whose drawn lookup + position miss the drawn sum (≈)

    @property
    def marked_words(self) -> tuple[str, ...]:
        return tuple(g.word for g in self.marked)


def plan_tokens(setting: Setting) -> TokensPlan:
    tr = setting.trace
    tokens = tr.tokens
    shown = shown_token_indices(tokens)
    row, box_of = box_row(shown)
    groups = repeated_groups(tokens, shown)
    marked = tuple(
        RepeatGroup(word=tokens[g[0]], positions=tuple(g),
                    equal_lookup=int(np.sum(np.all(tr.token_embeddings[g] == tr.token_embeddings[g[0]], axis=0))),
                    differ_after=int(np.sum(np.any(tr.embeddings[g] != tr.embeddings[g[0]], axis=0))))
        for g in groups[:MARKED_GROUPS])
    return TokensPlan(tokens=tokens, d_model=tr.model.d_model, shown=tuple(shown), row=row, box_of=box_of,
                      lookups=tr.token_embeddings[shown], positions=tr.position_embeddings[shown],
                      sums=tr.embeddings[shown], repeated=tuple(tuple(g) for g in groups), marked=marked,
                      rotary=tr.model.rotary, pieces=len(set(tr.word_of_token)) < tr.n_tokens,
                      sum_rounding=() if tr.model.rotary else tuple(
                          rounding_off((k, (tr.token_embeddings[i][k], tr.position_embeddings[i][k]),
                                        tr.embeddings[i][k])
                                       for k in window_indices(tr.model.d_model, *COLUMN) if k is not None)
                          for i in shown))
