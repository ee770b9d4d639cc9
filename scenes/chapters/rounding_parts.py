"""The ≈ beside the rows of a drawn sum whose rounded terms miss the rounded total, and the one
note that says why (`common.rounding`); the rows come from the plan (`plans.rounding`)."""

from __future__ import annotations

from manim import VGroup

from ..components.text import label
from ..components.vectors import VectorColumn
from ..review import declare_sum
from ..stage import Stage
from .honest import wrapped


def rounding_marks(stage: Stage, column: VectorColumn, rows, font_size: float = 22, scale: float = 1.0,
                   buff: float = 0.08, left: bool = False) -> VGroup:
    """One "≈" right (or `left`) of `column`'s brackets on each of its entries `rows` (vector indices)."""
    th = stage.theme
    right = column.brackets.get_right()[0] + buff
    start = column.brackets.get_left()[0] - buff
    marks = VGroup()
    marks.by_row = {}
    for i in rows:
        m = label(stage.say("common.rounding.mark"), font_size, th.dim).scale(scale)
        x = start - m.width / 2 if left else right + m.width / 2
        marks.add(m.move_to([x, column.entry(i).get_y(), 0]))
        marks.by_row[i % len(column.values)] = m
    return marks


def declare_rows(terms, total: VectorColumn, marks: VGroup | None = None) -> VectorColumn:
    """Tell the lint that each shown row of `total` is the sum of the same rows of the `terms`
    columns (E + ΔE = E′), marked by `marks` (from `rounding_marks`) where the drawn digits miss."""
    by_row = getattr(marks, "by_row", {}) if marks is not None else {}
    for m in total.entries:
        idx = m.index
        parts = [next((e for e in t.entries if e.index == idx), None) for t in terms]
        if any(e is None for e in parts):
            continue  # a term hides this row behind its ellipsis: nothing to add up on screen
        declare_sum(total, parts, m, [by_row[idx]] if idx in by_row else [], name=f"row {idx}")
    return total


def declare_rows_of(terms, total: VectorColumn, marks: VGroup | None = None) -> VectorColumn:
    """As `declare_rows`, for terms drawn earlier and gone by now (a lookup and a position column that
    morphed into their sum): the lint checks the sum against the terms' drawn digits all the same."""
    by_row = getattr(marks, "by_row", {}) if marks is not None else {}
    for m in total.entries:
        idx = m.index
        parts = [next((e for e in t.entries if e.index == idx), None) for t in terms]
        if any(e is None for e in parts):
            continue
        texts = [str(getattr(e, "shown", None) or getattr(e, "original_text", None) or e.text) for e in parts]
        declare_sum(total, (lambda texts=texts: list(texts)), m, [by_row[idx]] if idx in by_row else [],
                    name=f"row {idx}")
    return total


def rounding_note(stage: Stage, width: float, font_size: float = 22, max_lines: int = 2) -> VGroup:
    """The note: entries are rounded; in the rows marked ≈ the model adds the unrounded numbers."""
    return wrapped(stage.say("common.rounding.note"), width, font_size, stage.theme.dim, max_lines)
