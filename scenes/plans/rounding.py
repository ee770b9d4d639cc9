"""Sums drawn with rounded entries: which rows' drawn terms do not add up to the drawn total.

Every entry on screen is the real value rounded on its own; a row such as 0.6 + 0.7 = 1.2 is
right (the model adds 0.64 and 0.56) but reads wrong. A chapter marks those rows with "≈" and says
once that the model adds the unrounded numbers (`common.rounding`)."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP, Decimal
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


# --- the same question asked of what is drawn (strings such as "0.48", "−1.2", "≈1.00") -------------
_DRAWN = re.compile(r"^[≈~]?\s*([−\-+]?)(\d+)(?:[.,](\d+))?%?$")


def drawn_value(text: str) -> Decimal | None:
    """A drawn number as an exact decimal ("−0.48" -> -0.48, "≈1.00" -> 1.00); None if it is not one
    (a word, "−∞")."""
    m = _DRAWN.match(str(text).strip().replace(" ", ""))
    if not m:
        return None
    sign, whole, frac = m.groups()
    return Decimal(f"{'-' if sign in ('−', '-') else ''}{whole}.{frac or '0'}")


def drawn_sum(parts: Sequence[str]) -> Decimal | None:
    """The exact sum of drawn numbers, as a reader adding them up gets it; None if one is not a number."""
    vals = [drawn_value(p) for p in parts]
    return None if any(v is None for v in vals) else sum(vals, Decimal(0))


def drawn_misses(parts: Sequence[str], total: str) -> bool:
    """True when the drawn parts do not add up to the drawn total (so the total needs its "≈")."""
    got, want = drawn_sum(parts), drawn_value(total)
    return got is not None and want is not None and got != want


def decimals_that_round_back(values: Sequence[float], coarse: int = 1, start: int = 2, most: int = 4) -> int:
    """The fewest decimals (from `start`) at which every value, so written, rounds to the figure it has
    at `coarse` decimals whichever way a reader rounds a half: beside a table's "+3.3", the same E′
    written "3.35" rounds to 3.4 by the school rule; "3.349" rounds to 3.3 either way (review 52)."""
    def rounds_back(v: float, d: int) -> bool:
        fine, want = Decimal(f"{float(v):.{d}f}"), Decimal(f"{float(v):.{coarse}f}")
        step = Decimal(1).scaleb(-coarse)
        return all(fine.quantize(step, rounding=r) == want for r in (ROUND_HALF_UP, ROUND_HALF_DOWN))

    return next((d for d in range(start, most) if all(rounds_back(v, d) for v in values)), most)
