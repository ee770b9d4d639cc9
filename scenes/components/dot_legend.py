"""What a grid's dots mean, and what its empty masked half means.

`DotLegend(grid, caption)`: a few dots drawn exactly as `grid` draws the weights under them (the
grid's own size function, `dot_radius_for`, its dot colour, opacity and arc count), each with its
weight written under it, and a caption ("dot area = weight") from the lesson's catalog. Build it
once the grid has its final size: the dots are measured from the grid's cells at that moment.

    legend = DotLegend(grid, say("grid.axes.dot_legend"), theme=th)
    legend.dot_mobs[i].width == 2 * grid.dot_radius_for(legend.weights[i])

`mask_note(grid, text, theme)`: a label in the corner of the grid's masked (causal) triangle, on a
plate of the background colour, as large as the triangle allows (None when it does not fit at a
readable size). Nothing in it is a number: the words come from the catalog.
"""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Rectangle, VGroup, VMobject

from ..style import DARK, Theme
from .batched_shapes import circles_points
from .text import label, number

LEGEND_WEIGHTS = (0.1, 0.5, 1.0)
# the weights shown when a small grid (nine heads side by side) draws 0.1 as a speck: the smallest dot
# a student can see from the back row is MIN_DOT_PX across at 720p (the lint's legend_dot rule)
SMALL_GRID_WEIGHTS = ((0.25, 0.5, 1.0), (0.5, 1.0))
MIN_DOT_PX = 6.0
PX_PER_UNIT = 90.0  # 720 px over the frame's 8 units
LEGEND_FS = 18  # cap height ≈ 16 px at 720p: digits ≥ 14 px, words ≥ 11 px
MIN_NOTE_FS = 14  # ≈ 12.7 px cap height: the mask note's smallest size


class DotLegend(VGroup):
    """Dots at `weights` as `grid` draws them, their weights under them, a caption above (or to
    the left with `caption_side="left"`)."""

    def __init__(self, grid, caption: str, *, weights=None, theme: Theme = DARK,
                 font_size: float = LEGEND_FS, caption_side: str = "up", smallest: float = 0.0):
        super().__init__()
        if weights is None:  # the default: trade 0.1 for larger weights when its dot is a speck
            # (`smallest`: no key under this weight, so that a lesson's keys agree from grid to grid)
            choices = [w for w in (LEGEND_WEIGHTS, *SMALL_GRID_WEIGHTS) if w[0] >= smallest] or [SMALL_GRID_WEIGHTS[-1]]
            weights = choices[0]
            for larger in choices[1:]:
                if 2 * grid.dot_radius_for(weights[0]) * PX_PER_UNIT >= MIN_DOT_PX:
                    break
                weights = larger
        self.weights = tuple(float(w) for w in weights)
        self.radii = [grid.dot_radius_for(w) for w in self.weights]
        r_max = max(max(self.radii), 0.06)
        self.dot_mobs, self.number_mobs = [], []
        slots = VGroup()
        for w, r in zip(self.weights, self.radii):
            dot = VMobject(stroke_width=0)
            dot.set_points(circles_points(np.zeros((1, 3)), np.array([r]), grid.dot_arcs))
            dot.set_fill(grid.dot_color, opacity=0.9)
            num = number(w, "weight", font_size=font_size, color=theme.text)
            slot_w = max(2 * r_max, num.width) + 0.22
            box = Rectangle(width=slot_w, height=2 * r_max, stroke_width=0, fill_opacity=0)
            dot.move_to(box)
            num.next_to(box, DOWN, buff=0.08)
            self.dot_mobs.append(dot)
            self.number_mobs.append(num)
            slots.add(VGroup(box, dot, num))
        slots.arrange(RIGHT, buff=0.0, aligned_edge=UP)
        self.caption = label(caption, font_size, theme.text)
        if caption_side == "left":
            self.caption.next_to(slots, LEFT, buff=0.2)
        else:
            self.caption.next_to(slots, UP, buff=0.12)
        self.slots = slots
        self.add(slots, self.caption)


def masked_cells_box(grid) -> tuple[np.ndarray, np.ndarray, str] | None:
    """(corner, direction into the triangle, which corner) of the grid's masked triangle: the
    corner of the cells where only masked cells meet. None if the mask is not causal."""
    n = grid.n
    causal = np.triu(np.ones((n, n), dtype=bool), 1)  # [query, key]: key after query
    if n < 3 or not np.array_equal(np.asarray(grid.mask, dtype=bool), causal):
        return None
    lines = grid.lines
    if grid.layout == "video":  # keys down the rows: key > query lies below the diagonal
        return lines.get_corner(DOWN + LEFT), np.array([1.0, 1.0, 0.0]), "down_left"
    return lines.get_corner(UP + RIGHT), np.array([-1.0, -1.0, 0.0]), "up_right"


MASK_TINT = 0.25  # the masked triangle's tint: it reads as one region, not as cells whose weights are ~0


def masked_shade(grid, theme: Theme = DARK) -> VMobject:
    """The grid's masked (causal) triangle as one tinted staircase over its cells (review 35: left
    blank, the masked half looked like the allowed cells that are blank because their weight is ~0)."""
    n, cw, ch = grid.n, grid.cell_width, grid.cell_height
    (x0, y0, _), (x1, y1, _) = grid.lines.get_corner(DOWN + LEFT), grid.lines.get_corner(UP + RIGHT)
    # queries across the top (video): key r below query c is masked where r > c, the lower left staircase
    pts = [(x0, y0), (x0, y1 - ch)]
    for c in range(n - 1):
        pts += [(x0 + (c + 1) * cw, y1 - (c + 1) * ch), (x0 + (c + 1) * cw, y1 - (c + 2) * ch)]
    if grid.layout != "video":  # queries down the side: the same staircase turned half round (upper right)
        pts = [(x0 + x1 - x, y0 + y1 - y) for x, y in pts]
    shade = VMobject(stroke_width=0).set_points_as_corners([[x, y, 0.0] for x, y in pts + pts[:1]])
    return shade.set_fill(theme.dim, opacity=MASK_TINT)


def mask_note(grid, text: str, theme: Theme = DARK, font_size: float = 20,
              min_font: float = MIN_NOTE_FS, avoid: int | None = None):
    """The words `text` in the grid's empty (masked) triangle, tucked into the corner where only
    masked cells are, on a plate of the background colour. Tries two lines, then one; shrinks to
    `min_font` at most; clear of query `avoid`'s cells (the column a lesson outlines), or None
    (a note over the outlined column would hide what the lesson points at). None too if the grid
    is not causally masked or the words do not fit."""
    where = masked_cells_box(grid)
    if where is None:
        return None
    corner, inward, _ = where
    cw, ch = grid.cell_width, grid.cell_height
    n = grid.n
    pad = 0.08

    every = getattr(grid, "line_every", 1)

    def cells(mob) -> tuple[int, int]:
        # the plate covers whole cells, to the grid lines drawn (every `every` cells): no line ends
        # inside a cell at its edge
        def span(size, cell):
            return int(np.ceil((size + 2 * pad) / (cell * every) - 1e-6)) * every
        return span(mob.width, cw), span(mob.height, ch)

    def fits(mob) -> bool:
        # a k × m block of cells in the corner stays on masked cells when k + m ≤ n (a staircase)
        k, m = cells(mob)
        return k + m <= n

    words = text.split()
    candidates = [text]
    if len(words) > 1:  # two lines first (a corner, not a band), split where they come out most even
        best = min(range(1, len(words)), key=lambda i: abs(len(" ".join(words[:i])) - len(" ".join(words[i:]))))
        candidates.insert(0, " ".join(words[:best]) + "\n" + " ".join(words[best:]))
    if len(words) > 2:  # three lines: narrower, for a corner cut short by an outlined column
        third = max(1, round(len(words) / 3))
        candidates.append("\n".join([" ".join(words[:third]), " ".join(words[third:2 * third]),
                                      " ".join(words[2 * third:])]))
    if avoid is not None:  # clear of the outlined query's cells, or not at all: the note never hides data
        (ax0, ay0, _), (ax1, ay1, _) = grid.column_region(avoid)
        e = 0.015  # a plate stops short of its cells' lines: it may share a line with the outlined column
        return _mask_note(grid, candidates, theme, font_size, min_font, corner, inward, fits, cells,
                          lambda b: b[2] <= ax0 - e or b[0] >= ax1 + e or b[3] <= ay0 - e or b[1] >= ay1 + e)
    return _mask_note(grid, candidates, theme, font_size, min_font, corner, inward, fits, cells, lambda b: True)


def _mask_note(grid, candidates, theme, font_size, min_font, corner, inward, fits, cells, clear):
    fs = font_size
    while fs >= min_font - 1e-6:
        for cand in candidates:
            lines = [label(line, fs, theme.text) for line in cand.split("\n")]
            mob = VGroup(*lines).arrange(DOWN, buff=0.08, aligned_edge=LEFT if inward[0] > 0 else RIGHT)
            if fits(mob):
                # the plate's edges lie just inside the lines around its cells: those lines stay whole
                k, m = cells(mob)
                inset = 0.01 * float(grid.lines.get_stroke_width()) + 0.005
                # (on the grid's border side it reaches the corner, and the border is drawn again over it)
                plate = Rectangle(width=k * grid.cell_width - inset, height=m * grid.cell_height - inset,
                                  stroke_width=0)
                plate.set_fill(theme.background, opacity=1.0)
                plate.move_to(corner + np.array([inward[0] * plate.width / 2, inward[1] * plate.height / 2, 0.0]))
                border = VMobject(stroke_color=grid.lines.get_stroke_color(), fill_opacity=0,
                                  stroke_width=grid.lines.get_stroke_width(),
                                  stroke_opacity=grid.lines.get_stroke_opacity())
                border.set_points_as_corners([corner + [inward[0] * k * grid.cell_width, 0, 0], corner,
                                              corner + [0, inward[1] * m * grid.cell_height, 0]])
                (x0, y0, _), (x1, y1, _) = plate.get_corner(DOWN + LEFT), plate.get_corner(UP + RIGHT)
                if not clear((x0, y0, x1, y1)):
                    continue
                mob.move_to(plate)
                note = VGroup(plate, border, masked_shade(grid, theme), mob)
                note.set_z_index(1)  # over the grid's lines and boxes, whatever is added to the scene later
                note.text, note.font_size = mob, fs
                return note
        fs -= 1
    return None


__all__ = ["DotLegend", "LEGEND_WEIGHTS", "mask_note", "masked_cells_box"]
