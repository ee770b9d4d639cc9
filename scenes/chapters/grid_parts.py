"""Pieces the grid chapters share: a grid of a head placed in a region, with its axis titles."""

from __future__ import annotations

import numpy as np
from manim import PI, VGroup

from ..components.attention_grid import AttentionGrid
from ..components.text import label
from ..stage import Region, Stage
from ..style import has_hangul


def axis_titles(grid: AttentionGrid, stage: Stage) -> VGroup:
    """"queries" over the labels across the top, "keys" beside the labels down the side (or the
    other way round in the paper layout)."""
    th, say = stage.theme, stage.say
    queries, keys = (say("grid.axes.queries"), th.query), (say("grid.axes.keys"), th.key)
    (top_name, top_color), (side_name, side_color) = (queries, keys) if grid.layout == "video" else (keys, queries)
    lines = grid.lines
    top = label(top_name, 24, top_color)
    top_y = (grid.col_labels.get_top()[1] if grid.col_labels.has_points() else lines.get_top()[1]) + 0.14
    top.move_to([lines.get_x(), top_y + top.height / 2, 0])
    side = label(side_name, 24, side_color)
    if not has_hangul(side_name):  # Hangul stays upright (one or two syllables read best that way)
        side.rotate(PI / 2)
    side_x = (grid.row_labels.get_left()[0] if grid.row_labels.has_points() else lines.get_left()[0]) - 0.16
    side.move_to([side_x - side.width / 2, lines.get_y(), 0])
    return VGroup(top, side)


def new_grid(stage: Stage, head_trace, tokens, layout: str, region: Region | str = "grid",
             **kwargs) -> tuple[AttentionGrid, VGroup]:
    """A grid of this head filling `region` (labels and axis titles included), not yet on screen."""
    box = stage.region(region) if isinstance(region, str) else region
    grid = AttentionGrid(head_trace, tokens, layout=layout, theme=stage.theme,
                         max_width=box.width - 0.45, max_height=box.height - 0.4, **kwargs)
    grid.grid_key = (tuple(tokens), head_trace.layer, head_trace.head, layout)
    grid.move_to(box.center)
    grid.use_common_number_font()  # scores and weights at one size (columns can change alone)
    titles = axis_titles(grid, stage)
    shift = box.center - VGroup(grid, titles).get_center()
    grid.shift(shift)
    titles.shift(shift)
    return grid, titles


def grid_on_stage(stage: Stage, head_trace, tokens, layout: str):
    """The grid the chapter before left, if it shows this sentence, head and layout; else None."""
    if not stage.has("grid"):
        return None
    if getattr(stage.grid, "grid_key", None) != (tuple(tokens), head_trace.layer, head_trace.head, layout):
        return None
    return stage.grid


def region_between(left: float, right: float, bottom: float, top: float, name: str = "custom") -> Region:
    return Region(name, left, right, bottom, top)


def center_of(box: Region) -> np.ndarray:
    return box.center
