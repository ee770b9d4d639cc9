"""Which entries of a long axis are shown: a vector's first and last entries, a sentence's tokens
around the ones that matter (no manim here; `scenes.components.vectors` draws with these)."""

from __future__ import annotations

from typing import Sequence


def window_indices(n: int, head: int, tail: int) -> list[int | None]:
    """Indices shown of a length-`n` axis: the first `head`, None (the ellipsis), the last `tail`."""
    if n <= head + tail + 1:
        return list(range(n))
    return list(range(head)) + [None] + list(range(n - tail, n))


def token_window(n: int, keep: Sequence[int], max_slots: int) -> list[int | None]:
    """Which of `n` tokens to show in at most `max_slots` slots, None marking an ellipsis slot.

    Every index in `keep` (the focus word, the words it attends to) is shown; the rest of the
    slots go to their nearest neighbours (then to the earliest tokens); each run of hidden tokens
    costs one ellipsis slot. With n <= max_slots everything is shown."""
    if n <= max_slots:
        return list(range(n))
    keep = sorted({int(k) for k in keep if 0 <= int(k) < n})
    chosen = set(keep)

    def layout(ch):
        out: list[int | None] = []
        for j in range(n):
            if j in ch:
                out.append(j)
            elif not out or out[-1] is not None:
                out.append(None)
        return out

    order = sorted(range(n), key=lambda j: (min((abs(j - k) for k in keep), default=j), j))
    for j in order:
        if j not in chosen and len(layout(chosen | {j})) <= max_slots:
            chosen.add(j)
    return layout(chosen)
