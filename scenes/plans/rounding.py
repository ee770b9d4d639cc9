"""Sums drawn with rounded entries: which rows' drawn terms do not add up to the drawn total.

Every entry on screen is the real value rounded on its own; a row such as 0.6 + 0.7 = 1.2 is
right (the model adds 0.64 and 0.56) but reads wrong. A chapter marks those rows with "≈" and says
once that the model adds the unrounded numbers (`common.rounding`)."""

from __future__ import annotations

from typing import Iterable, Sequence


def tenths(x: float, decimals: int = 1) -> int:
    """x as drawn, in units of its last decimal (−0.64 → −6 at one decimal)."""
    return int(round(round(float(x), decimals) * 10 ** decimals))


def misses(terms: Sequence[float], total: float, decimals: int = 1) -> bool:
    """True when the terms rounded as drawn do not add up to the total rounded as drawn."""
    return sum(tenths(t, decimals) for t in terms) != tenths(total, decimals)


def rounding_off(rows: Iterable[tuple[object, Sequence[float], float]], decimals: int = 1) -> tuple:
    """The keys of the rows (key, terms, total) whose drawn terms miss their drawn total."""
    return tuple(key for key, terms, total in rows if misses(terms, total, decimals))
