"""The attention grid: one cell per (query, key) pair, drawn from a real head trace.

Orientation: the trace is `[query, key]`. `layout="video"` draws keys as rows and queries as
columns (softmax runs down each column, as in the video); `layout="paper"` draws queries as rows
(the transpose, as in the paper). Every public lookup takes `(query, key)` whatever the layout.

Cells show one of: nothing, a symbol (K⃗ⱼ·Q⃗ᵢ), a number (raw score or weight, built with
`number()` so `.value` holds the trace value), or a dot whose radius grows with the weight
(area ∝ weight). Masked cells get a red outline, then −∞, then nothing (never a dot).

Words used here (and in the modules below):
- slot: a VMobject made once, whose points and style change (one `Part` at a time);
- sheet: one level of the grid's drawing stack, back to front: `lines`, `labels` (row labels,
  column labels, ticks), `mask_sheet` (outline, −∞), `content` (two banks of slots: the content
  shown and a spare one for the next) and `overlays` (spotlight veil, column box);
- parts: a list of Parts, what the builders compute and pour into a sheet's slots;
- tween: an animation planned when it starts (`GridTween`).

Speed. Cairo's cost is per drawn mobject per frame, so every sheet is a handful of VMobjects with
many subpaths (see batched_shapes.py): all grid lines are one VMobject, all labels of one axis one,
all dots one, the numbers one per colour bin. The individual number mobjects (with
`.value`/`.shown`) are kept in `number_mobs` for inspection; what is drawn is their outlines,
merged. Dots grow by rewriting one point array per frame (numpy, no per-cell Python).

Animations pour new outlines into the fixed slots and fade opacities; nothing is added to or
removed from the scene, so the grid stays one mobject (`grid.animate.shift(...)`,
`self.remove(grid)` keep working), and a tween decides what to draw when it starts, so tweens can
be built ahead and chained (`grid.succession(a, b)`). To play grid tweens together with others,
pass them to `self.play(a, b)` or wrap them with `grid.group(...)`: a bare AnimationGroup adds
its own Group to the scene, which splits the grid into loose pieces.

The class is put together from three mixins: `GridGeometry` (grid_geometry.py: fitting, cell
centres, regions, labels), `GridSheets` (grid_sheets.py: numbers, symbols, dots, mask) and
`GridTweens` (grid_tweens.py: transitions, mask, highlight and spotlight).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from manim import ORIGIN, AnimationGroup, Succession, VGroup, VMobject, config

from ..review import declare_sum
from ..style import DARK, Theme, fmt_weight, get_theme
from .batched_shapes import clear_slot
from .grid_geometry import GridGeometry
from .grid_sheets import GridSheets
from .grid_tweens import GridTween, GridTweens

SLOTS_PER_BANK = 16  # show_columns may need 2 score + 10 weight parts at once


def as_attention_arrays(data):
    """(scores or None, pattern, mask) as [query, key] arrays from a HeadTrace-like object, a
    dict with those keys, a (scores, pattern, mask) tuple, or a bare pattern array."""
    if hasattr(data, "pattern"):
        scores, pattern, mask = getattr(data, "scores", None), data.pattern, getattr(data, "mask", None)
    elif isinstance(data, dict):
        scores, pattern, mask = data.get("scores"), data["pattern"], data.get("mask")
    elif isinstance(data, (tuple, list)) and len(data) == 3:
        scores, pattern, mask = data
    else:
        scores, pattern, mask = None, data, None
    pattern = np.asarray(pattern, dtype=float)
    if pattern.ndim != 2 or pattern.shape[0] != pattern.shape[1]:
        raise ValueError(f"attention pattern must be square [query, key], got shape {pattern.shape}")
    n = pattern.shape[0]
    mask = np.zeros((n, n), dtype=bool) if mask is None else np.asarray(mask, dtype=bool)
    scores = None if scores is None else np.asarray(scores, dtype=float)
    for name, arr in (("mask", mask), ("scores", scores)):
        if arr is not None and arr.shape != (n, n):
            raise ValueError(f"{name} has shape {arr.shape}, expected {(n, n)}")
    return scores, pattern, mask


class AttentionGrid(GridGeometry, GridSheets, GridTweens, VGroup):
    """An attention pattern as a grid of cells (see module docstring).

    Parameters
    - data: a HeadTrace (uses .scores, .pattern, .mask), or {"scores","pattern","mask"}, or a
      (scores, pattern, mask) tuple, or a bare pattern; all `[query, key]`.
    - tokens: the n token strings (labels); None: no labels.
    - layout: "video" (keys as rows, queries as columns) or "paper" (queries as rows).
    - theme: a Theme or its name.
    - cell_size: side of a cell (or (width, height)); None: fit into max_width × max_height.
    - max_width, max_height: the box (labels included) the grid fits into; default the frame
      less a margin.
    - number_limit: numbers are drawn only when n ≤ number_limit and they fit at
      ≥ min_number_font; otherwise show_scores/show_weights fall back to dots (or use `window`).
    - min_weight: weights below this get no dot (radius < ~3% of a cell, invisible anyway).
    - relative_dots: scale dots so the largest weight in the grid gets the full-size dot (for
      long sentences, where every weight is small); default: radius = dot_fraction·√weight·cell.
    - label_fill: the share of a row's height a token label's line takes (0.62: airy; up to ~0.9
      for small grids side by side, where the labels would otherwise be too small to read).
    - show_row_labels: False draws the column labels only (the grid right of another that labels
      the same rows).

    Content, at once: set_content(kind, window=None) with kind none|symbols|scores|weights|dots;
    set_mask(hidden|outlined|minus_inf|cleared). Animated (GridTweens): show_symbols, show_scores,
    show_weights, show_dots, transition(kind), reveal_mask, clear_mask, highlight_column,
    spotlight, unhighlight, unspotlight. Compose with grid.group(...) / grid.succession(...).
    Lookups: cell_center(query, key), cell_centers(), column_region(query), label_boxes(),
    dot_radii [query, key], dot_cells, masked_cells, number_mobs, mask_number_mobs,
    content_kind, mask_state, fallbacks, label_stride, shown_labels.
    """

    def __init__(
        self,
        data,
        tokens: Sequence[str] | None = None,
        layout: str = "video",
        theme: Theme | str = DARK,
        cell_size: float | tuple[float, float] | None = None,
        max_width: float | None = None,
        max_height: float | None = None,
        max_cell: float = 1.4,
        max_aspect: float = 1.8,
        number_limit: int = 16,
        min_label_font: float = 10,
        max_label_font: float = 32,
        min_number_font: float = 9,
        max_label_chars: int = 12,
        dot_fraction: float = 0.45,
        min_weight: float = 0.004,
        dot_color: str | None = None,
        show_labels: bool = True,
        relative_dots: bool = False,
        label_fill: float = 0.62,
        show_row_labels: bool = True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if layout not in ("video", "paper"):
            raise ValueError(f"unknown layout {layout!r}: use 'video' or 'paper'")
        self.theme = get_theme(theme) if isinstance(theme, str) else theme
        self.layout = layout
        self.scores, self.pattern, self.mask = as_attention_arrays(data)
        self.n = n = self.pattern.shape[0]
        self.tokens = tuple(tokens) if tokens is not None else tuple(str(i) for i in range(n))
        if len(self.tokens) != n:
            raise ValueError(f"{len(self.tokens)} tokens for a {n}×{n} pattern")
        self.number_limit = number_limit
        self.min_number_font = min_number_font
        self.dot_fraction = dot_fraction
        self.min_weight = min_weight
        self.relative_dots = relative_dots  # True: the largest weight gets the full-size dot
        self.dot_color = dot_color or self.theme.text
        self.show_labels = show_labels and tokens is not None
        self.min_label_font, self.max_label_font = min_label_font, max_label_font
        self.label_fill = label_fill  # how much of a row's height a label's line (ascender to descender) takes
        self.show_row_labels = show_row_labels  # False: column labels only (grids side by side share one row of labels)
        self.max_label_chars = max_label_chars
        self.max_cell, self.max_aspect = max_cell, max_aspect
        # a grid seen through a camera pulled back k times draws its column box k times wider (set by the scene)
        self.stroke_scale = 1.0

        self.content_kind = "none"
        self.mask_state = "hidden"  # hidden | outlined | minus_inf | cleared
        self.number_mobs: dict[tuple[int, int], VMobject] = {}
        self.mask_number_mobs: dict[tuple[int, int], VMobject] = {}
        self.dot_cells: list[tuple[int, int]] = []  # cells with a dot, in the order drawn
        # what was simplified, as "asked->shown" (e.g. "scores->dots"): for tests and for a
        # chapter that wants to say so (in its own words, from its catalog)
        self.fallbacks: list[str] = []
        self._highlighted = None  # query index with a column box, or None
        self.spotlit: list[tuple[int, int]] = []
        self.number_font: float | None = None  # set (e.g. by use_common_number_font) to fix the numbers' size
        self.symbol_zoom = 1.0  # how many times a camera close-up enlarges the grid (its K⃗ⱼ·Q⃗ᵢ indices may read there)
        self.column_kinds: list[str] = ["none"] * n  # what each query's cells show (see show_columns)
        self.symbol_denominator: str | None = None  # e.g. "√16" under K⃗·Q⃗ (show_symbols(denominator=…))
        # what tells a viewer that a column's drawn weights miss 1 by rounding (a Σ row, a note): the lint
        # checks every column whose weights are all drawn adds up to 1 as drawn, or one of these is visible
        self.sum_marks: list = []
        for q in range(n):
            declare_sum(self, drawn_weights(self, q), "1", lambda: self.sum_marks,
                        name=f"{self.tokens[q]}'s weights (a softmax makes 1)")

        W = max_width if max_width is not None else config.frame_width - 0.8
        H = max_height if max_height is not None else config.frame_height - 0.6
        self._fit(W, H, cell_size)
        self._build_frame()
        self._build_slots()
        self.add(self.lines, self.labels, self.mask_sheet, self.content, self.overlays, self.anim_anchor)
        self.move_to(ORIGIN)

    def _build_slots(self):
        """The fixed slots, in drawing order: the mask (outline, −∞), two banks of content (old
        and new during a transition) and the overlays (veil, column box)."""
        self.content = VGroup(*(VGroup(*(VMobject() for _ in range(SLOTS_PER_BANK))) for _ in range(2)))
        self._active = 0
        self.mask_sheet = VGroup(VMobject(), VMobject())
        self.overlays = VGroup(VMobject(), VMobject())
        banks = [slot for bank in self.content.submobjects for slot in bank.submobjects]
        for slot in [*banks, *self.mask_sheet.submobjects, *self.overlays.submobjects]:
            clear_slot(slot)
        # an empty member that stands for the grid in AnimationGroups: a group's own mobject must
        # already be in the scene, or manim adds it at top level and splits the grid apart
        self.anim_anchor = VGroup()

    # ---------------------------------------------------------------------------- composing
    def group(self, *animations, **kwargs) -> AnimationGroup:
        """AnimationGroup of animations on parts of this grid that leaves the grid whole."""
        return AnimationGroup(*animations, group=self.anim_anchor, **kwargs)

    def succession(self, *animations, **kwargs) -> Succession:
        return Succession(*animations, group=self.anim_anchor, **kwargs)

    def frame_mobjects(self) -> VGroup:
        """The grid without its cells' contents (lines, labels, ticks): to bring in first."""
        return VGroup(self.lines, self.labels)

    # ---------------------------------------------------------------------------- inspection
    @property
    def drawn_content(self) -> list[VMobject]:
        """The content slots that currently draw something."""
        return self._live()

    @property
    def dots_mobject(self) -> VMobject | None:
        """The one VMobject holding every dot (16 points per dot, in `dot_cells` order)."""
        return self._live()[0] if self.content_kind == "dots" and self._live() else None

    @property
    def highlight_box(self) -> VMobject:
        """The column-box slot (no points when nothing is highlighted)."""
        return self.overlays.submobjects[1]

    @property
    def veil(self) -> VMobject:
        """The spotlight veil slot (no points when nothing is dimmed)."""
        return self.overlays.submobjects[0]

    def score_kind(self) -> str:
        """"score2" (two decimals, the whole grid) where one would show a tie the weights deny, and two
        still fit the cells readably (`softmax_column.grid_score_kind`); else "score"."""
        if getattr(self, "_score_kind", None) is None:
            from .softmax_column import grid_score_kind

            self._score_kind = grid_score_kind(self.scores, self.pattern, self.mask, lambda strings: (
                self._number_font(strings + [fmt_weight(w) for w in self.pattern.ravel()]) >= self.min_number_font))
        return self._score_kind


def drawn_weights(grid: AttentionGrid, q: int, keys: Sequence[int] | None = None):
    """A callable: what the grid draws of query q's weights over `keys` (its unmasked keys by default)
    now (strings), or None while it draws them not all (dots, scores, a window)."""
    keys = [k for k in range(grid.n) if not grid.mask[q, k]] if keys is None else list(keys)

    def shown():
        if grid.column_kinds[q] != "weights":
            return None
        mobs = [grid.number_mobs.get((q, k)) for k in keys]
        return None if any(m is None for m in mobs) else [m.shown for m in mobs]

    return shown


__all__ = ["AttentionGrid", "GridTween", "as_attention_arrays", "drawn_weights"]
