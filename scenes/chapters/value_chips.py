"""Value vectors beside the focus column of the grid: one chip per key (its weight, V⃗ⱼ and a few
real entries), on the key's row next to its cell (spread apart, with a thin leader line, when the
rows are too close), faded to its real weight by `weigh()`."""

from __future__ import annotations

import numpy as np
from manim import LEFT, RIGHT, UP, BackgroundRectangle, Line, RoundedRectangle, VGroup

from ..components.attention_grid import AttentionGrid
from ..components.text import label, number
from ..components.vectors import math, symbol_source
from ..plans.qkv import ValuesPlan
from ..stage import Stage
from .grid_parts import titles_of
from .qkv_parts import vector

CHIP_FONT = 17.5  # its digits stay at 14 px or more once the chips are fitted beside the column
GAP = 0.06  # between stacked chips


class ValueChip(VGroup):
    """Parts: `.weight` (the number, hidden until weighed), `.symbol` (V⃗ⱼ), `.vec` (the real value
    vector, horizontal), `.box` (an opaque backing over the dimmed cells), `.leader` (or None)."""

    def __init__(self, token: int, values, window, weight: float, opacity: float, theme, font_size=CHIP_FONT):
        super().__init__()
        self.token, self.opacity = token, opacity
        self.weight = number(weight, "weight", font_size, theme.text)
        times = label("×", font_size, theme.dim)
        self.weight_part = VGroup(self.weight, times).arrange(RIGHT, buff=0.06)
        self.symbol = math(symbol_source("V", token + 1), font_size=font_size * 1.3, color=theme.value)
        self.vec = vector(values, window, font_size=font_size, theme=theme, bracket_color=theme.value,
                          horizontal=True, entry_gap=0.09)
        body = VGroup(self.weight_part, self.symbol, self.vec).arrange(RIGHT, buff=0.08)
        self.box = RoundedRectangle(width=body.width + 0.16, height=body.height + 0.12, corner_radius=0.06,
                                    stroke_color=theme.value, stroke_width=1.2, stroke_opacity=0.6,
                                    fill_color=theme.background, fill_opacity=1.0).move_to(body)
        self.leader = None
        self.add(self.box, body)
        self.box.set_z_index(1)  # over every leader line, which are over the grid
        body.set_z_index(1)
        self.weight_part.set_opacity(0)  # the weight comes in when the value is weighed

    def add_leader(self, anchor: np.ndarray, color: str) -> None:
        near = np.clip(anchor, self.box.get_corner([-1, -1, 0]), self.box.get_corner([1, 1, 0]))
        self.leader = Line(anchor, near, stroke_color=color, stroke_width=1.5, stroke_opacity=0.7)
        self.add_to_back(self.leader)

    def weigh(self) -> list:
        op = self.opacity
        return [self.vec.animate.fade_to(op), self.symbol.animate.set_fill(opacity=op),
                self.weight_part.animate.set_fill(opacity=max(op, 0.45))]


def spread(ys: list[float], h: float, lo: float, hi: float) -> list[float]:
    """Centres for boxes of height `h` wanted at `ys` (top to bottom): kept when they do not
    overlap, else stacked `h` apart around their mean, inside [lo, hi]."""
    if all(a - b >= h for a, b in zip(ys, ys[1:])):
        return list(ys)
    n = len(ys)
    top = float(np.mean(ys)) + (n - 1) / 2 * h
    top = min(top, hi - h / 2)
    top = max(top, lo + h / 2 + (n - 1) * h)
    return [top - k * h for k in range(n)]


def fit_grid(stage: Stage, grid: AttentionGrid) -> None:
    """Bring the grid (and its titles) into the grid region if the chapter before left it
    elsewhere: the side panel must be free."""
    box, both = stage.region("grid"), VGroup(grid, titles_of(stage))
    if box.contains(both, tol=0.15):
        return
    k = min(1.0, box.width / both.width, box.height / both.height)
    stage.play(both.animate.scale(k).move_to(box.center), run_time=0.8)
    stage.remove(both)  # the grid and its titles stay on stage on their own (hand-ons)
    stage.add(*both.submobjects)


def value_chips(stage: Stage, plan: ValuesPlan, grid: AttentionGrid) -> VGroup:
    """The chips of `plan.chips`, placed (not yet on screen). `.by_token`, `.note` (how many
    keys are left out, or None); each chip's `.enter` is the side it comes in from."""
    th, say, i = stage.theme, stage.say, plan.focus
    w = np.asarray(plan.weights)
    wmax = max(float(w[j]) for j in plan.chips) or 1.0
    chips = VGroup(*(ValueChip(j, plan.head_trace.v[j], plan.values[j], w[j], 0.2 + 0.8 * float(w[j]) / wmax, th)
                     for j in plan.chips))
    anchors = [grid.cell_center(i, j) for j in plan.chips]
    ll, ur = grid.column_region(i)
    lines = grid.lines
    L, R, B, T = lines.get_left()[0], lines.get_right()[0], lines.get_bottom()[1], lines.get_top()[1]
    width, h = max(c.width for c in chips), max(c.height for c in chips) + GAP
    if grid.layout == "video":
        # inside the grid's right edge: 5 px past it read as a slip (review 52, pt)
        room_right = min(R - 0.04, stage.region("panel").left - 0.15) - ur[0] - 0.1
        room_left = ll[0] - 0.1 - L
        side = RIGHT if room_right >= room_left else LEFT
        k = min(1.0, max(room_right, room_left) / width, (T - B) / (h * len(chips)))
        chips.scale(k)
        for c in chips:  # as tall as a row: the dots of the cells a chip lies over stay under it
            c.box.stretch_to_fit_height(max(c.box.height, grid.cell_height - 0.04))
        ys = spread([a[1] for a in anchors], max(c.height for c in chips) + 0.02, B, T)
        x_edge = ur[0] + 0.1 if side is RIGHT else ll[0] - 0.1
        for c, y in zip(chips, ys):
            c.move_to([x_edge + side[0] * c.width / 2, y, 0])
            c.enter = side
    else:  # paper: the focus is a row; the chips stack under it (over it when it is low)
        row_y = (ll[1] + ur[1]) / 2
        below = row_y > (B + T) / 2
        room = (ll[1] - B if below else T - ur[1]) - 0.2
        k = min(1.0, room / (h * len(chips)), (R - L) / width)
        chips.scale(k)
        x = float(np.clip(np.mean([a[0] for a in anchors]), L + chips.width / 2, R - chips.width / 2))
        start = (ll[1] - 0.2 if below else ur[1] + 0.2)
        for n, c in enumerate(chips):
            c.move_to([x, start + (-1 if below else 1) * (n + 0.5) * h * k, 0])
            c.enter = -UP if below else UP
    for c, a in zip(chips, anchors):
        if grid.layout != "video" or abs(c.get_y() - a[1]) > 0.05:
            c.add_leader(a, th.value)
    chips.by_token = {c.token: c for c in chips}
    chips.note = None
    if plan.hidden:
        note = label(say("qkv.values.hidden_keys", count=plan.hidden, weight=plan.hidden_weight), 18, th.dim)
        note.next_to(chips, -UP, buff=0.12)
        if note.get_bottom()[1] < B - 0.3:
            note.next_to(chips, UP, buff=0.12)
        note.set_x(chips.get_x())
        backing = BackgroundRectangle(note, color=th.background, fill_opacity=0.9, buff=0.06)
        chips.note = VGroup(backing, note).set_z_index(1)
    return chips

