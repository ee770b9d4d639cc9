"""The ≈ beside the rows of a drawn sum whose rounded terms miss the rounded total, and the one
note that says why (`common.rounding`); the rows come from the plan (`plans.rounding`)."""

from __future__ import annotations

from manim import VGroup

from ..components.text import label
from ..components.vectors import VectorColumn
from ..stage import Stage
from .honest import wrapped


def rounding_marks(stage: Stage, column: VectorColumn, rows, font_size: float = 22, scale: float = 1.0,
                   buff: float = 0.08) -> VGroup:
    """One "≈" right of `column`'s brackets on each of its entries `rows` (vector indices)."""
    th = stage.theme
    right = column.brackets.get_right()[0] + buff
    marks = VGroup()
    for i in rows:
        m = label(stage.say("common.rounding.mark"), font_size, th.dim).scale(scale)
        marks.add(m.move_to([right + m.width / 2, column.entry(i).get_y(), 0]))
    return marks


def rounding_note(stage: Stage, width: float, font_size: float = 22, max_lines: int = 2) -> VGroup:
    """The note: entries are rounded; in the rows marked ≈ the model adds the unrounded numbers."""
    return wrapped(stage.say("common.rounding.note"), width, font_size, stage.theme.dim, max_lines)
