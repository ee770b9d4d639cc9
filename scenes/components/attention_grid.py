"""The attention grid: one cell per (query, key) pair, drawn from a real head trace.

Orientation: the trace is `[query, key]`. `layout="video"` draws keys as rows and queries as
columns (softmax runs down each column, as in the video); `layout="paper"` draws queries as rows
(the transpose, as in the paper). Every public lookup takes `(query, key)` whatever the layout.

Cells show one of: nothing, a symbol (K⃗ⱼ·Q⃗ᵢ), a number (raw score or weight, built with
`number()` so `.value` holds the trace value), or a dot whose radius grows with the weight
(area ∝ weight). Masked cells get a red outline, then −∞, then nothing (never a dot).

Speed. Cairo's cost is per drawn mobject per frame (~1 ms each, Python overhead), so every layer
here is a handful of VMobjects with many subpaths: all grid lines are one VMobject, all labels of
one axis one, all dots one, the numbers of a layer one per colour bin. The individual number
mobjects (with `.value`/`.shown`) are kept in `number_mobs` for inspection; what is drawn is their
outlines, merged. Dots grow by rewriting one point array per frame (numpy, no per-cell Python).

Animations are `GridStep`s: they pour new outlines into a fixed set of slots (VMobjects made once)
and fade opacities; nothing is added to or removed from the scene, so the grid stays one mobject
(`grid.animate.shift(...)`, `self.remove(grid)` keep working), and a step decides what to draw
when it starts, so steps can be built ahead and chained (`grid.succession(a, b)`). To play grid
steps together with others, pass them to `self.play(a, b)` or wrap them with `grid.group(...)`:
a bare AnimationGroup adds its own Group to the scene, which splits the grid into loose pieces.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Sequence

import numpy as np
from manim import (
    ORIGIN,
    UL,
    Animation,
    AnimationGroup,
    ManimColor,
    Rectangle,
    Succession,
    VGroup,
    VMobject,
    config,
    interpolate_color,
    linear,
    smooth,
)

from ..style import DARK, Theme, fmt_score, fmt_weight, get_theme
from .text import label, number

REF_FS = 48.0  # font size at which text is measured, then scaled


# --------------------------------------------------------------------------------------------
# slots and steps: fixed VMobjects whose points and opacities change, never their membership
# --------------------------------------------------------------------------------------------
SLOTS_PER_BANK = 16  # show_columns may need 2 score + 10 weight parts at once
WEIGHT_BINS = 5


@dataclass
class Part:
    """What one slot draws: outline points and their style."""

    points: np.ndarray
    fill: str | None = None
    fill_opacity: float = 1.0
    stroke: str | None = None
    stroke_width: float = 0.0
    stroke_opacity: float = 1.0
    masked: bool = False  # drawn in blocked cells (fades when the mask is revealed)
    dots: bool = False
    steady: bool = False  # drawn exactly as before the step: shown at full from its start (no flicker)


def _put(slot: VMobject, part: Part, alpha: float = 1.0):
    slot.set_points(part.points) if len(part.points) else slot.clear_points()
    slot.base_opacity = (part.fill_opacity if part.fill else 0.0, part.stroke_opacity if part.stroke else 0.0)
    slot.masked = part.masked
    slot.steady = part.steady
    slot.set_fill(part.fill or "#000000", opacity=slot.base_opacity[0] * alpha)
    slot.set_stroke(part.stroke or "#000000", width=part.stroke_width, opacity=slot.base_opacity[1] * alpha)


def _alpha(slot: VMobject, alpha: float):
    f, s = slot.base_opacity
    slot.set_fill(opacity=f * alpha)
    if s:
        slot.set_stroke(opacity=s * alpha)


def _clear(slot: VMobject):
    slot.clear_points()
    slot.base_opacity, slot.masked, slot.steady = (0.0, 0.0), False, False


def _outline(mobjects) -> np.ndarray:
    pts = [m.points for mob in mobjects for m in mob.family_members_with_points()]
    return np.concatenate(pts) if pts else np.zeros((0, 3))


def _runs(flags) -> list[tuple[int, int]]:
    """[start, end) of each run of True in `flags`."""
    out, i, n = [], 0, len(flags)
    while i < n:
        if not flags[i]:
            i += 1
            continue
        j = i
        while j < n and flags[j]:
            j += 1
        out.append((i, j))
        i = j
    return out


class Step(Animation):
    """An animation whose work is planned when it starts: `plan()` returns update(alpha) and
    finish(). `owner` (default: the mobject) is added to the scene if it is not there yet."""

    def __init__(self, mobject, plan, run_time: float = 1.0, rate_func=smooth, owner=None, **kwargs):
        super().__init__(mobject, run_time=run_time, rate_func=rate_func, **kwargs)
        self.owner = owner if owner is not None else mobject
        self._plan = plan
        self._update = self._finish = None

    def _setup_scene(self, scene):
        if scene is not None and self.owner not in scene.get_mobject_family_members():
            scene.add(self.owner)

    def begin(self):
        self._update, self._finish = self._plan()
        super().begin()

    def create_starting_mobject(self):
        return VMobject()  # nothing to copy: the plan knows where it starts

    def interpolate_mobject(self, alpha: float):
        if self._update is not None:
            self._update(float(self.rate_func(alpha)))

    def finish(self):
        super().finish()
        if self._finish is not None:
            self._finish()
            self._finish = None


class GridStep(Step):
    """One step of an AttentionGrid: it only rewrites the points and opacities of the grid's
    fixed slots, so the grid stays one mobject in the scene. `layer` is the first layer it
    changes (mask_layer, content or overlays): it and the layers after it are redrawn on every
    frame, the layers before it (lines, labels, and the mask unless it changes) are drawn once."""

    def __init__(self, grid, plan, run_time: float = 1.0, rate_func=smooth, layer=None, **kwargs):
        layer = grid.content if layer is None else layer
        super().__init__(layer, plan, run_time=run_time, rate_func=rate_func, owner=grid, **kwargs)
        self.grid = grid

    # ManimCE redraws, on every frame, every mobject from the first "moving" one in the scene's
    # family order, and it counts an ancestor of a moving mobject as moving: with the grid in the
    # scene as one group, its lines, labels and mask would be redrawn on every frame. For the
    # length of the step the grid's layers stand in its place in the scene's list (same order,
    # same drawing), so the layers before the changing one go into the static frame; the grid
    # is put back when the step ends. A grid nested inside another group is left alone.
    def _setup_scene(self, scene):
        super()._setup_scene(scene)
        if scene is not None and self.grid in scene.mobjects:
            i = scene.mobjects.index(self.grid)
            scene.mobjects[i:i + 1] = list(self.grid.submobjects)
            self.grid._split_in = scene

    def clean_up_from_scene(self, scene):
        super().clean_up_from_scene(scene)
        g = self.grid
        if scene is not None and getattr(g, "_split_in", None) is scene and g not in scene.mobjects:
            at = [i for i, m in enumerate(scene.mobjects) if m in g.submobjects]
            if at:
                scene.mobjects[:] = [m for m in scene.mobjects if m not in g.submobjects]
                scene.mobjects.insert(at[0], g)
            g._split_in = None


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------
def segments(pairs: Sequence[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """Points for straight segments, one cubic each (each its own subpath)."""
    if not pairs:
        return np.zeros((0, 3))
    a = np.array([p for p, _ in pairs], dtype=float)
    b = np.array([q for _, q in pairs], dtype=float)
    return np.stack([a, a + (b - a) / 3, a + 2 * (b - a) / 3, b], axis=1).reshape(-1, 3)


def rect_points(centers: np.ndarray, half_w, half_h) -> np.ndarray:
    """Closed axis-aligned rectangles (4 cubic sides each) around `centers` [m, 3]."""
    centers = np.asarray(centers, dtype=float).reshape(-1, 3)
    hw = np.broadcast_to(np.asarray(half_w, dtype=float), (len(centers),))
    hh = np.broadcast_to(np.asarray(half_h, dtype=float), (len(centers),))
    corners = np.array([[-1, 1], [1, 1], [1, -1], [-1, -1], [-1, 1]], dtype=float)  # UL UR DR DL UL
    c = np.zeros((len(centers), 5, 3))
    c[:, :, 0] = centers[:, None, 0] + corners[None, :, 0] * hw[:, None]
    c[:, :, 1] = centers[:, None, 1] + corners[None, :, 1] * hh[:, None]
    a, b = c[:, :-1], c[:, 1:]
    return np.stack([a, a + (b - a) / 3, a + 2 * (b - a) / 3, b], axis=2).reshape(-1, 3)


def _unit_circle(n_arcs: int = 4) -> np.ndarray:
    """A unit circle as n_arcs cubic Béziers, from (1, 0), counter-clockwise: [4*n_arcs, 3].
    Four arcs are exact to 0.03% of the radius; two (semicircles) to ~2%, invisible on a dot a
    few pixels wide and half the drawing work."""
    pts = []
    span = 2 * math.pi / n_arcs
    k = 4 / 3 * math.tan(span / 4)  # handle length for an arc of `span`
    for i in range(n_arcs):
        a0, a1 = i * span, (i + 1) * span
        p0 = np.array([math.cos(a0), math.sin(a0), 0])
        p3 = np.array([math.cos(a1), math.sin(a1), 0])
        t0 = np.array([-math.sin(a0), math.cos(a0), 0])
        t1 = np.array([-math.sin(a1), math.cos(a1), 0])
        pts += [p0, p0 + k * t0, p3 - k * t1, p3]
    return np.array(pts)


UNIT_CIRCLES = {4: _unit_circle(4), 2: _unit_circle(2)}


def circles_points(centers: np.ndarray, radii: np.ndarray, n_arcs: int = 4) -> np.ndarray:
    """Many circles as one point array (numpy only): [m*4*n_arcs, 3]."""
    unit = UNIT_CIRCLES[n_arcs]
    return (centers[:, None, :] + radii[:, None, None] * unit[None]).reshape(-1, 3)


def lerp_color(a: str, b: str, t: float) -> str:
    """Hex colour between `a` and `b` (t in [0, 1])."""
    return interpolate_color(ManimColor(a), ManimColor(b), float(t)).to_hex()


def _smoothstep(x):
    x = np.clip(x, 0.0, 1.0)
    return x * x * (3 - 2 * x)


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


def _short(token: str, max_chars: int) -> str:
    token = str(token) if str(token).strip() else "␣"
    return token if len(token) <= max_chars else token[: max_chars - 1] + "…"


def _text_points(text: str, font_size: float = REF_FS, slant: str = "NORMAL") -> list[np.ndarray]:
    """The outline points of each glyph of `text` (read from the cached Text, never copied)."""
    try:
        from .text import _prototype  # the cache behind label(); reading it avoids a deep copy
        from ..style import FONT

        proto = _prototype(text, float(font_size), "#FFFFFF", FONT, "NORMAL", slant)
    except (ImportError, TypeError):  # pragma: no cover - if text.py changes shape
        proto = label(text, font_size, slant=slant)
    out = []
    for g in proto.submobjects:
        parts = [m.points for m in g.family_members_with_points()]
        out.append(np.concatenate(parts) if parts else np.zeros((0, 3)))
    return out


class _Word:
    """A token label's outline, measured at REF_FS with a baseline-consistent anchor: built as
    '|word' so the bar's centre gives the same baseline for every word; the bar is dropped."""

    def __init__(self, text: str):
        glyphs = _text_points("|" + text)
        bar, rest = glyphs[0], glyphs[1:]
        self.points = np.concatenate(rest) if rest else np.zeros((0, 3))
        left = self.points[:, 0].min() if len(self.points) else bar[:, 0].max()
        self.anchor = np.array([left, (bar[:, 1].min() + bar[:, 1].max()) / 2, 0.0])
        self.width = float(np.ptp(self.points[:, 0])) if len(self.points) else 0.0  # at REF_FS
        self.line_height = float(np.ptp(bar[:, 1]))  # at REF_FS: ascender to descender

    def placed(self, font_size: float, point, rotate: bool = False, align: str = "left") -> np.ndarray:
        """Outline points scaled to font_size with the baseline anchor at `point`: align='left'
        puts the word's start there, 'right' its end, 'center' its middle (before rotation)."""
        s = font_size / REF_FS
        p = (self.points - self.anchor) * s
        p[:, 0] += {"left": 0.0, "center": -self.width * s / 2, "right": -self.width * s}[align]
        if rotate:  # a quarter turn counter-clockwise: the word reads upwards
            p = np.stack([-p[:, 1], p[:, 0], p[:, 2]], axis=1)
        return p + np.asarray(point, dtype=float)


def _points_mobject(chunks: list[np.ndarray], color: str) -> VMobject:
    out = VMobject(fill_color=color, fill_opacity=1.0, stroke_width=0)
    if chunks:
        out.set_points(np.concatenate(chunks))
    return out


def polygon_points(vertices) -> np.ndarray:
    """A closed polygon as straight cubic segments (one subpath)."""
    v = np.asarray(vertices, dtype=float)
    if v.shape[1] == 2:
        v = np.concatenate([v, np.zeros((len(v), 1))], axis=1)
    v = np.concatenate([v, v[:1]])
    return segments(list(zip(v[:-1], v[1:])))


@lru_cache(maxsize=None)
def _symbol_glyphs():
    """Glyph outlines at REF_FS with the baseline at y = 0 and each glyph's ink starting at x = 0:
    italic K and Q (math letters), upright digits and the centred dot."""
    it = _text_points("KQ", slant="ITALIC")
    up = _text_points("K·0123456789")
    base_it, base_up = it[0][:, 1].min(), up[0][:, 1].min()
    g = {}
    for name, pts, base in (("K", it[0], base_it), ("Q", it[1], base_it), ("·", up[1], base_up)):
        g[name] = pts - np.array([pts[:, 0].min(), base, 0])
    for d in range(10):
        pts = up[2 + d]
        g[str(d)] = pts - np.array([pts[:, 0].min(), base_up, 0])
    g["cap"] = float(np.ptp(up[0][:, 1]))  # cap height of an upright K
    return g


def _vector_letter(letter: str, index: int) -> tuple[np.ndarray, float]:
    """A letter with an arrow over it and a subscript index, at REF_FS: (points, width)."""
    g = _symbol_glyphs()
    cap = g["cap"]
    body = g[letter]
    wl = float(np.ptp(body[:, 0]))
    # the arrow: a thin shaft with a triangular head, over the letter (shifted right: italic)
    x0, x1 = 0.22 * wl, 1.05 * wl
    y, t, hl, hw = cap * 1.2, cap * 0.055, cap * 0.22, cap * 0.13
    arrow = polygon_points([[x0, y - t], [x1 - hl, y - t], [x1 - hl, y - hw], [x1, y],
                            [x1 - hl, y + hw], [x1 - hl, y + t], [x0, y + t]])
    parts, x = [body, arrow], wl + 0.04 * cap
    for ch in str(index):
        d = g[ch] * 0.62
        parts.append(d + np.array([x, -0.28 * cap, 0]))
        x += float(np.ptp(d[:, 0])) + 0.05 * cap
    return np.concatenate(parts), x


@lru_cache(maxsize=64)
def _denominator_glyphs(text: str) -> dict:
    """`text` (e.g. "√16") as outline points at REF_FS, centred on x = 0 with its bottom at y = 0."""
    pts = np.concatenate(_text_points(text))
    pts = pts - np.array([(pts[:, 0].min() + pts[:, 0].max()) / 2, pts[:, 1].min(), 0])
    return {"points": pts, "width": float(np.ptp(pts[:, 0])), "height": float(np.ptp(pts[:, 1]))}


@lru_cache(maxsize=4096)
def symbol_parts(key_index: int, query_index: int) -> dict:
    """K⃗ⱼ·Q⃗ᵢ as outline points at REF_FS: {'key', 'dot', 'query', 'width', 'height', 'mid_y'}."""
    g = _symbol_glyphs()
    cap = g["cap"]
    k, wk = _vector_letter("K", key_index)
    q, wq = _vector_letter("Q", query_index)
    dot = g["·"]
    wd = float(np.ptp(dot[:, 0]))
    gap = 0.14 * cap
    dot = dot + np.array([wk + gap, 0, 0])
    q = q + np.array([wk + 2 * gap + wd, 0, 0])
    allp = np.concatenate([k, dot, q])
    y0, y1 = allp[:, 1].min(), allp[:, 1].max()
    return {"key": k, "dot": dot, "query": q, "width": wk + 2 * gap + wd + wq,
            "height": float(y1 - y0), "mid_y": float((y0 + y1) / 2)}


# --------------------------------------------------------------------------------------------
# the grid
# --------------------------------------------------------------------------------------------
class AttentionGrid(VGroup):
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

    Content, at once: set_content(kind, window=None) with kind none|symbols|scores|weights|dots;
    set_mask(hidden|outlined|minus_inf|cleared). Animated (GridSteps): show_symbols, show_scores,
    show_weights, show_dots, transition(kind), reveal_mask, clear_mask, highlight_column,
    spotlight, unhighlight, unspotlight. Compose with grid.group(...) / grid.succession(...).
    Lookups: cell_center(query, key), cell_centers(), column_region(query), label_boxes(),
    dot_radii [query, key], dot_cells, masked_cells, number_mobs, mask_number_mobs,
    content_kind, mask_state, fallbacks, label_step, shown_labels.
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
        self.max_label_chars = max_label_chars
        self.max_cell, self.max_aspect = max_cell, max_aspect

        self.content_kind = "none"
        self.mask_state = "hidden"  # hidden | outlined | minus_inf | cleared
        self.number_mobs: dict[tuple[int, int], VMobject] = {}
        self.mask_number_mobs: dict[tuple[int, int], VMobject] = {}
        self.dot_cells: list[tuple[int, int]] = []  # cells with a dot, in the order drawn
        self.fallbacks: list[str] = []  # what was simplified, in words (for captions/tests)
        self._highlighted = None  # query index with a column box, or None
        self.spotlit: list[tuple[int, int]] = []
        self.number_font: float | None = None  # set (e.g. by use_common_number_font) to fix the numbers' size
        self.column_kinds: list[str] = ["none"] * n  # what each query's cells show (see show_columns)
        self.symbol_denominator: str | None = None  # e.g. "√16" under K⃗·Q⃗ (show_symbols(denominator=…))

        W = max_width if max_width is not None else config.frame_width - 0.8
        H = max_height if max_height is not None else config.frame_height - 0.6
        self._fit(W, H, cell_size)
        self._build_static()
        self.move_to(ORIGIN)

    # ---------------------------------------------------------------------------- geometry
    @property
    def row_tokens_are_keys(self) -> bool:
        return self.layout == "video"

    def _rc(self, query, key):
        return (key, query) if self.layout == "video" else (query, key)

    def _geom(self):
        ul = self.lines.get_corner(UL)
        return ul, self.lines.width / self.n, self.lines.height / self.n

    @property
    def cell_width(self) -> float:
        return self.lines.width / self.n

    @property
    def cell_height(self) -> float:
        return self.lines.height / self.n

    def cell_center(self, query: int, key: int) -> np.ndarray:
        """Centre of the cell for (query, key), in scene coordinates (follows moves/scales)."""
        ul, cw, ch = self._geom()
        r, c = self._rc(query, key)
        return ul + np.array([(c + 0.5) * cw, -(r + 0.5) * ch, 0.0])

    def cell_centers(self) -> np.ndarray:
        """All cell centres as an array [query, key, 3]."""
        ul, cw, ch = self._geom()
        q, k = np.meshgrid(np.arange(self.n), np.arange(self.n), indexing="ij")
        r, c = (k, q) if self.layout == "video" else (q, k)
        out = np.zeros((self.n, self.n, 3))
        out[..., 0] = ul[0] + (c + 0.5) * cw
        out[..., 1] = ul[1] - (r + 0.5) * ch
        return out

    def cell_rect(self, query: int, key: int, color: str | None = None, buff: float = 0.0) -> Rectangle:
        """A rectangle outlining one cell (for focus boxes in scenes)."""
        return Rectangle(width=self.cell_width + 2 * buff, height=self.cell_height + 2 * buff,
                         stroke_color=color or self.theme.highlight, stroke_width=3).move_to(
            self.cell_center(query, key))

    def column_region(self, query: int) -> tuple[np.ndarray, np.ndarray]:
        """(lower-left, upper-right) corners of the cells of one query (a column in the video
        layout, a row in the paper layout)."""
        ul, cw, ch = self._geom()
        if self.layout == "video":
            x0 = ul[0] + query * cw
            return np.array([x0, ul[1] - self.n * ch, 0]), np.array([x0 + cw, ul[1], 0])
        y1 = ul[1] - query * ch
        return np.array([ul[0], y1 - ch, 0]), np.array([ul[0] + self.n * cw, y1, 0])

    @property
    def masked_cells(self) -> list[tuple[int, int]]:
        return [tuple(map(int, c)) for c in np.argwhere(self.mask)]

    @property
    def dot_radius_fraction(self) -> np.ndarray:
        """Radius of each dot as a fraction of the smaller cell side, [query, key]: r ∝ √weight
        (area ∝ weight); 0 for masked cells and weights below min_weight."""
        w = np.clip(self.pattern, 0.0, 1.0)
        if self.relative_dots:
            top = w[~self.mask].max() if (~self.mask).any() else 1.0
            w = w / top if top > 0 else w
        frac = self.dot_fraction * np.sqrt(w)
        frac[self.mask | (self.pattern < self.min_weight)] = 0.0
        return frac

    @property
    def dot_radii(self) -> np.ndarray:
        """Dot radius per cell in scene units, [query, key] (0 = no dot)."""
        return self.dot_radius_fraction * min(self.cell_width, self.cell_height)

    # ---------------------------------------------------------------------------- layout fit
    def _fit(self, W, H, cell_size):
        n = self.n
        self._words = {}
        row_color = self.theme.key if self.layout == "video" else self.theme.query
        col_color = self.theme.query if self.layout == "video" else self.theme.key
        self._row_color, self._col_color = row_color, col_color
        disp = [_short(t, self.max_label_chars) for t in self.tokens]
        self._disp = disp

        def word(i, color=None):
            if disp[i] not in self._words:
                self._words[disp[i]] = _Word(disp[i])
            return self._words[disp[i]]

        line_h = word(0, row_color).line_height / REF_FS if self.show_labels else 0.0  # per font unit
        pad = 0.12

        def steps_for(fs, cw, ch):
            lh = line_h * fs
            step_rows = max(1, math.ceil(lh * 1.05 / ch))
            step_rot = max(1, math.ceil(lh * 1.05 / cw))
            return step_rows, step_rot

        def shown(step):
            idx = list(range(0, n, step))
            if step > 1 and idx[-1] != n - 1 and (n - 1 - idx[-1]) >= step * 0.75:
                idx.append(n - 1)
            if step > 1 and len(idx) >= 2 and idx[-1] == n - 1 and idx[-1] - idx[-2] < step * 0.75:
                idx[-2:] = [idx[-2]]
            return idx

        def solve(flat: bool):
            """Cell size, label font and steps with the top labels flat or turned; ok = the
            flat labels fit at a font no smaller than 72% of the nominal one."""
            if cell_size is not None:
                cw, ch = (cell_size, cell_size) if np.isscalar(cell_size) else map(float, cell_size)
            else:
                cw = ch = min(W, H) / n
            fs, steps, ok = self.max_label_font, (1, 1), True
            for _ in range(1 if cell_size is not None else 8):
                if self.show_labels:
                    nominal = float(np.clip(0.62 * ch / line_h, self.min_label_font, self.max_label_font))
                    step_rows, step_cols = steps_for(nominal, cw, ch)
                    cols_idx = shown(step_cols)
                    widest_ref = max(word(i).width for i in cols_idx) / REF_FS
                    fs = nominal
                    if flat:
                        fs_flat = 0.85 * cw * step_cols / widest_ref  # largest font that fits, with a gap
                        ok = fs_flat >= max(self.min_label_font, 0.72 * nominal)
                        fs = min(nominal, fs_flat)
                    left_w = max(word(i).width for i in shown(step_rows)) / REF_FS * fs + pad
                    top_h = (line_h * fs if flat else widest_ref * fs) + pad
                    steps = (step_rows, step_cols)
                else:
                    left_w = top_h = 0.0
                if cell_size is not None:
                    break
                cw = (W - left_w) / n
                ch = (H - top_h) / n
                c = min(cw, ch, self.max_cell)
                if n <= self.number_limit:  # readable cells: let them be wider than tall
                    ch = c
                    cw = min(cw, c * self.max_aspect)
                else:
                    cw = ch = c
            return cw, ch, fs, steps, ok

        cw, ch, fs, steps, ok = solve(flat=True)
        rotated = False
        if self.show_labels and not ok:
            cw, ch, fs, steps, _ = solve(flat=False)
            rotated = True
        step_rows, step_cols_h = steps
        self.label_font_size = fs
        self.label_step = (step_rows, step_cols_h) if self.show_labels else (1, 1)
        self.top_labels_rotated = rotated
        self._cw0, self._ch0 = cw, ch
        self._shown_fn = shown
        self._word_fn = word

    # ---------------------------------------------------------------------------- static parts
    def _build_static(self):
        n, cw, ch = self.n, self._cw0, self._ch0
        th = self.theme
        ul = np.array([0.0, 0.0, 0.0])
        w, h = n * cw, n * ch
        pairs = [(ul + [0, -i * ch, 0], ul + [w, -i * ch, 0]) for i in range(n + 1)]
        pairs += [(ul + [i * cw, 0, 0], ul + [i * cw, -h, 0]) for i in range(n + 1)]
        # interior lines only while cells are big enough for them not to grey out the grid;
        # beyond that, the border and a faint line every `every` cells
        every = 1 if min(cw, ch) >= 0.09 else math.ceil(0.45 / min(cw, ch))
        keep = [0, n] + [i for i in range(1, n) if i % every == 0]
        pairs = [pairs[i] for i in sorted(set(keep))] + [pairs[n + 1 + i] for i in sorted(set(keep))]
        self.line_every = every
        self.lines = VMobject(stroke_color=th.dim, fill_opacity=0,
                              stroke_width=float(np.clip(ch * 5, 0.5, 2.0)),
                              stroke_opacity=1.0 if every == 1 else 0.6)
        self.lines.set_points(segments(pairs))
        self.add(self.lines)

        self.row_labels = VMobject()
        self.col_labels = VMobject()
        self.ticks = VMobject()
        self.shown_labels = {"rows": [], "cols": []}
        if self.show_labels:
            fs = self.label_font_size
            step_rows, step_cols = self.label_step
            rows_idx, cols_idx = self._shown_fn(step_rows), self._shown_fn(step_cols)
            self.shown_labels = {"rows": rows_idx, "cols": cols_idx}
            gap = 0.12
            rl = [self._word_fn(i).placed(fs, [-gap, -(i + 0.5) * ch, 0], align="right") for i in rows_idx]
            # the anchor is the centre of the line box: row labels are centred on their rows
            line_h = self._word_fn(0).line_height / REF_FS * fs
            cl = []
            for i in cols_idx:
                x = (i + 0.5) * cw
                if self.top_labels_rotated:
                    cl.append(self._word_fn(i).placed(fs, [x, gap, 0], rotate=True, align="left"))
                else:
                    cl.append(self._word_fn(i).placed(fs, [x, gap + line_h * 0.5, 0], align="center"))
            self.row_labels = _points_mobject(rl, self._row_color)
            self.col_labels = _points_mobject(cl, self._col_color)
            self._label_slices = {"rows": np.cumsum([0] + [len(p) for p in rl]),
                                  "cols": np.cumsum([0] + [len(p) for p in cl])}
            if max(step_rows, step_cols) > 1:  # ticks tie every shown label to its row/column
                t = min(cw, ch) * 0.6
                tp = [([0, -(i + 0.5) * ch, 0], [-t, -(i + 0.5) * ch, 0]) for i in rows_idx]
                tp += [([(i + 0.5) * cw, 0, 0], [(i + 0.5) * cw, t, 0]) for i in cols_idx]
                self.ticks = VMobject(stroke_color=th.dim, stroke_width=1.0, fill_opacity=0)
                self.ticks.set_points(segments(tp))
        self.labels = VGroup(self.row_labels, self.col_labels, self.ticks)
        self.add(self.labels)
        # fixed slots, in drawing order: the mask (outline, −∞), two banks of content (old and
        # new during a transition) and the overlays (veil, column box)
        self.content = VGroup(*(VGroup(*(VMobject() for _ in range(SLOTS_PER_BANK))) for _ in range(2)))
        self._active = 0
        self.mask_layer = VGroup(VMobject(), VMobject())
        self.overlays = VGroup(VMobject(), VMobject())
        banks = [slot for bank in self.content.submobjects for slot in bank.submobjects]
        for slot in [*banks, *self.mask_layer.submobjects, *self.overlays.submobjects]:
            _clear(slot)
        # an empty member that stands for the grid in AnimationGroups: a group's own mobject must
        # already be in the scene, or manim adds it at top level and splits the grid apart
        self.anim_anchor = VGroup()
        self.add(self.mask_layer, self.content, self.overlays, self.anim_anchor)

    def group(self, *animations, **kwargs) -> AnimationGroup:
        """AnimationGroup of animations on parts of this grid that leaves the grid whole."""
        return AnimationGroup(*animations, group=self.anim_anchor, **kwargs)

    def succession(self, *animations, **kwargs) -> Succession:
        return Succession(*animations, group=self.anim_anchor, **kwargs)

    # ---------------------------------------------------------------------------- layer builders
    # A layer is a list of Parts (outline points + style). Parts are poured into fixed slots
    # (VMobjects created once), so playing a step never adds or removes a mobject.
    def _number_font(self, strings: list[str], frac_w=0.78, frac_h=0.5) -> float:
        if not strings:
            return 0.0
        cands = sorted(set(strings), key=len)[-4:]
        wmax = max(label(s, REF_FS).width for s in cands) / REF_FS
        hmax = label("0", REF_FS).height / REF_FS
        return float(min(frac_w * self.cell_width / wmax, frac_h * self.cell_height / hmax, 30.0))

    def common_number_font(self) -> float:
        """One font size at which every score (−∞ included) and every weight fits its cell."""
        strings = [fmt_weight(w) for w in self.pattern.ravel()] + ["−∞"]
        if self.scores is not None:
            strings += [fmt_score(x) for x in self.scores.ravel()]
        return round(self._number_font(strings), 1)

    def numbers_readable(self) -> bool:
        """Whether scores and weights can be written in the cells (else they fall back to dots)."""
        if self.n > self.number_limit:
            return False
        return (self.number_font or self.common_number_font()) >= self.min_number_font

    def use_common_number_font(self) -> "AttentionGrid":
        """Draw scores and weights at one size from now on (so a cell keeps its size when its
        content changes, and show_columns can leave unchanged columns untouched)."""
        self.number_font = self.common_number_font()
        return self

    def _number_layer(self, which: str, window=None, steady: bool = False):
        """(parts, number mobjects) for `which` in ('scores', 'weights'); None if unreadable.
        `window` = (queries, keys) limits the cells; `steady` marks the parts as unchanged."""
        if which == "scores" and self.scores is None:
            raise ValueError("this grid was built without scores")
        values = self.scores if which == "scores" else self.pattern
        kind = "score" if which == "scores" else "weight"
        show_masked = which == "scores" and self.mask_state == "hidden"
        sel = ~self.mask | (self.mask & show_masked)
        if window is not None:
            win = np.zeros_like(sel)
            win[np.ix_(list(window[0]), list(window[1]))] = True
            sel &= win
        elif self.n > self.number_limit:
            return None
        cells = [tuple(c) for c in np.argwhere(sel).tolist()]
        fmt = fmt_score if kind == "score" else fmt_weight
        fs = self.number_font or self._number_font([fmt(values[c]) for c in cells])
        if not cells or fs < self.min_number_font:
            return None
        fs = round(fs, 1)
        centers = self.cell_centers()
        mobs = {}
        for c in cells:
            m = number(values[c], kind, font_size=fs, color=self.theme.text)
            m.move_to(centers[c])
            mobs[c] = m
        th = self.theme
        parts = []
        for masked in (False, True):
            group = [c for c in cells if bool(self.mask[c]) == masked]
            if not group:
                continue
            if which == "weights":  # shaded dim → bright by weight, in a few bins
                w = np.array([self.pattern[c] for c in group])
                b = np.minimum((np.sqrt(np.clip(w, 0, 1)) * WEIGHT_BINS).astype(int), WEIGHT_BINS - 1)
                for i in range(WEIGHT_BINS):
                    sel_i = [mobs[c] for c, bi in zip(group, b) if bi == i]
                    if sel_i:
                        parts.append(Part(_outline(sel_i), fill=lerp_color(th.dim, th.text, (i + 1) / WEIGHT_BINS),
                                          masked=masked, steady=steady))
            else:
                parts.append(Part(_outline([mobs[c] for c in group]), fill=th.text, masked=masked, steady=steady))
        return parts, mobs

    def _symbol_layer(self):
        """Parts for K⃗ⱼ·Q⃗ᵢ in every cell (1-based indices, j = key, i = query), or None when
        too small to read. Built from glyph outlines and drawn arrows (no Text per cell)."""
        th = self.theme
        ref = symbol_parts(self.n, self.n)
        den = getattr(self, "symbol_denominator", None)
        if den:  # a fraction: symbol, rule, denominator
            dg = _denominator_glyphs(den)
            gap = 0.12 * _symbol_glyphs()["cap"]
            rule_h = 0.06 * _symbol_glyphs()["cap"]
            frac_h = ref["height"] + 2 * gap + rule_h + dg["height"]
            fs = min(0.84 * self.cell_width / (max(ref["width"], dg["width"]) / REF_FS),
                     0.78 * self.cell_height / (frac_h / REF_FS), 30.0)
        else:
            fs = min(0.84 * self.cell_width / (ref["width"] / REF_FS),
                     0.6 * self.cell_height / (ref["height"] / REF_FS), 30.0)
        if fs < self.min_number_font:
            return None
        s = fs / REF_FS
        self.symbol_font_size = fs
        centers = self.cell_centers()
        if den:
            # offsets at REF_FS from the cell centre: numerator middle up, denominator down
            num_dy = (frac_h / 2 - ref["height"] / 2)
            rule_y = frac_h / 2 - ref["height"] - gap - rule_h / 2
            den_dy = -frac_h / 2  # the denominator's bottom
        parts = []
        show_masked = self.mask_state == "hidden"
        for masked in (False, True):
            sel = self.mask if masked else ~self.mask
            if masked and not show_masked:
                continue
            ks, ds, qs, fr = [], [], [], []
            for i, j in zip(*np.nonzero(sel)):
                sym = symbol_parts(int(j) + 1, int(i) + 1)
                shift = centers[i, j] - np.array([sym["width"] / 2, sym["mid_y"], 0]) * s
                if den:
                    shift = shift + np.array([0, num_dy, 0]) * s
                    c = centers[i, j]
                    half = max(sym["width"], dg["width"]) / 2 * s
                    fr.append(rect_points(np.array([[c[0], c[1] + rule_y * s, 0]]), half, rule_h / 2 * s))
                    fr.append(dg["points"] * s + np.array([c[0], c[1] + den_dy * s, 0]))
                ks.append(sym["key"] * s + shift)
                ds.append(sym["dot"] * s + shift)
                qs.append(sym["query"] * s + shift)
            if ks:
                parts += [Part(np.concatenate(ks), fill=th.key, masked=masked),
                          Part(np.concatenate(ds), fill=th.text, masked=masked),
                          Part(np.concatenate(qs), fill=th.query, masked=masked)]
            if fr:
                color = getattr(self, "symbol_denominator_color", None) or th.text
                parts.append(Part(np.concatenate(fr), fill=color, masked=masked))
        return parts

    def _dot_cells(self):
        """Cells that get a dot, in drawing order: query by query (column by column in the video
        layout, the order in which the video reads them)."""
        q, k = np.nonzero(self.dot_radius_fraction > 0)
        order = np.lexsort((k, q))
        return q[order], k[order]

    @property
    def dot_arcs(self) -> int:
        """Cubic arcs per dot: 4 while cells are large, 2 once dots are only a few pixels."""
        return 4 if min(self.cell_width, self.cell_height) > 0.3 else 2

    def _dot_points(self, progress=1.0, geometry=None):
        centers, radii = geometry if geometry is not None else self._dot_geometry()
        r = radii * progress
        if np.ndim(progress):  # dots that have not started growing are left out entirely
            keep = r > 0
            centers, r = centers[keep], r[keep]
        return circles_points(centers, r, self.dot_arcs)

    def _dot_geometry(self):
        q, k = self._dot_cells()
        return self.cell_centers()[q, k], self.dot_radii[q, k]

    def _dot_layer(self):
        q, k = self._dot_cells()
        self.dot_cells = list(zip(q.tolist(), k.tolist()))
        pts = self._dot_points() if len(q) else np.zeros((0, 3))
        return [Part(pts, fill=self.dot_color, fill_opacity=0.9, dots=True)]

    def _build(self, kind, window=None, columns=None):
        """(parts, kind actually shown, number mobjects)."""
        nums = {}
        if kind == "columns":
            return self._columns_build(columns or {})
        if kind == "none":
            parts = []
        elif kind == "score_dots":
            if self.scores is None:
                raise ValueError("this grid was built without scores")
            parts = self._score_dot_layer()
        elif kind == "symbols":
            parts = self._symbol_layer()
            if parts is None:
                self.fallbacks.append(f"symbols unreadable at {self.n} tokens: cells left empty")
                parts, kind = [], "none"
        elif kind in ("scores", "weights"):
            built = self._number_layer(kind, window)
            if built is None:
                self.fallbacks.append(f"{kind} unreadable at {self.n} tokens: showing dots instead")
                parts, kind = self._dot_layer(), "dots"
            else:
                parts, nums = built
        elif kind == "dots":
            parts = self._dot_layer()
        else:
            raise ValueError(f"unknown content {kind!r}: none, symbols, scores, weights, dots, score_dots "
                             "or columns")
        self.column_kinds = [kind] * self.n
        return parts, kind, nums

    COLUMN_KINDS = ("scores", "weights", "none")

    def _columns_build(self, columns: dict):
        """Mixed content: each query's cells show scores, weights or nothing (see show_columns).
        Queries whose content does not change get `steady` parts (drawn at full from the start)."""
        prev = list(self.column_kinds)
        new = list(prev)
        for q, k in columns.items():
            if k not in self.COLUMN_KINDS:
                raise ValueError(f"column content {k!r}: use one of {', '.join(self.COLUMN_KINDS)}")
            new[int(q)] = k
        bad = sorted({new[q] for q in range(self.n) if new[q] not in self.COLUMN_KINDS})
        if bad:
            raise ValueError(f"show_columns mixes {', '.join(self.COLUMN_KINDS)}; the grid shows {', '.join(bad)} "
                             "in columns not given: name every column")
        if self.number_font is None:
            self.use_common_number_font()
        parts, nums = [], {}
        for kind in ("scores", "weights"):
            for steady in (True, False):
                qs = [q for q in range(self.n) if new[q] == kind and (prev[q] == kind) == steady]
                if not qs:
                    continue
                built = self._number_layer(kind, window=(qs, range(self.n)), steady=steady)
                if built is None:
                    self.fallbacks.append(f"{kind} unreadable at {self.n} tokens: showing dots instead")
                    self.column_kinds = ["dots"] * self.n
                    return self._dot_layer(), "dots", {}
                parts += built[0]
                nums.update(built[1])
        self.column_kinds = new
        shown = new[0] if len(set(new)) == 1 else "columns"
        return parts, shown, nums

    def _score_dot_layer(self):
        """The raw scores as dots: area ∝ |score| / the largest |score| shown, filled for positive
        scores, rings (in the negative colour) for negative ones. Blocked cells get none once the
        mask shows. Radii per cell are kept in `score_dot_radii` [query, key]."""
        th = self.theme
        show_masked = self.mask_state == "hidden"
        sel = ~self.mask | (self.mask & show_masked)
        s = np.where(sel, self.scores, 0.0)
        top = float(np.abs(s[sel]).max()) if sel.any() else 1.0
        frac = self.dot_fraction * np.sqrt(np.abs(s) / (top or 1.0))
        frac[~sel] = 0.0
        radii = frac * min(self.cell_width, self.cell_height)
        self.score_dot_radii = radii
        centers = self.cell_centers()
        ring_w = float(np.clip(min(self.cell_width, self.cell_height) * 4, 0.8, 2.5))
        parts = []
        for masked in (False, True):
            for positive in (True, False):
                cells = sel & (self.mask == masked) & ((s > 0) if positive else (s < 0)) & (radii > 1e-4)
                if not cells.any():
                    continue
                pts = circles_points(centers[cells], radii[cells], self.dot_arcs)
                if positive:
                    parts.append(Part(pts, fill=self.dot_color, fill_opacity=0.9, masked=masked, dots=True))
                else:
                    parts.append(Part(pts, stroke=th.negative, stroke_width=ring_w, masked=masked))
        return parts

    def _mask_parts(self):
        """(outline part, −∞ part or None, −∞ number mobjects)."""
        cw, ch = self.cell_width, self.cell_height
        if not self.mask.any():
            pts = np.zeros((0, 3))
        elif min(cw, ch) > 0.3:  # the video's look: an inset red square in every blocked cell
            pts = rect_points(self.cell_centers()[self.mask], cw * 0.44, ch * 0.44)
        else:  # small cells: the same red lattice from O(n) runs instead of O(n²) squares
            pts = self._mask_lattice()
        outline = Part(pts, fill=self.theme.mask, fill_opacity=0.12, stroke=self.theme.mask,
                       stroke_width=float(np.clip(min(cw, ch) * 6, 0.5, 3.0)))
        fs = self._number_font(["−∞"], frac_w=0.6, frac_h=0.5)
        if not self.mask.any() or fs < self.min_number_font or self.n > self.number_limit:
            return outline, None, {}
        centers = self.cell_centers()
        mobs = {}
        for c in self.masked_cells:
            m = number(float("-inf"), "score", font_size=round(fs, 1), color=self.theme.mask)
            m.move_to(centers[c])
            mobs[c] = m
        return outline, Part(_outline(mobs.values()), fill=self.theme.mask), mobs

    def _mask_lattice(self) -> np.ndarray:
        """Blocked cells as a filled region with a line between every two cells: row runs as
        rectangles, plus the inner lines as segments spanning runs (drawing order rows/cols)."""
        blocked = np.zeros((self.n, self.n), dtype=bool)  # [row, col]
        for q, k in self.masked_cells:
            blocked[self._rc(q, k)] = True
        ul, cw, ch = self._geom()
        rects, segs = [], []
        for r in range(self.n):
            for a, b in _runs(blocked[r]):
                y1 = ul[1] - r * ch
                rects.append((ul[0] + a * cw, y1 - ch, ul[0] + b * cw, y1))
        for c in range(1, self.n):  # vertical lines between blocked neighbours
            for a, b in _runs(blocked[:, c - 1] & blocked[:, c]):
                x = ul[0] + c * cw
                segs.append(([x, ul[1] - a * ch, 0], [x, ul[1] - b * ch, 0]))
        for r in range(1, self.n):  # horizontal ones
            for a, b in _runs(blocked[r - 1] & blocked[r]):
                y = ul[1] - r * ch
                segs.append(([ul[0] + a * cw, y, 0], [ul[0] + b * cw, y, 0]))
        r = np.array(rects)
        centers = np.stack([(r[:, 0] + r[:, 2]) / 2, (r[:, 1] + r[:, 3]) / 2, np.zeros(len(r))], axis=1)
        return np.concatenate([rect_points(centers, (r[:, 2] - r[:, 0]) / 2, (r[:, 3] - r[:, 1]) / 2),
                               segments(segs)])

    # ---------------------------------------------------------------------------- slots
    @property
    def _bank(self) -> VGroup:
        return self.content.submobjects[self._active]

    @property
    def _spare_bank(self) -> VGroup:
        return self.content.submobjects[1 - self._active]

    def _pour(self, bank: VGroup, parts, alpha: float = 1.0):
        if len(parts) > len(bank.submobjects):
            raise RuntimeError(f"{len(parts)} parts for {len(bank.submobjects)} slots")
        for i, slot in enumerate(bank.submobjects):
            if i < len(parts):
                _put(slot, parts[i], alpha)
            else:
                _clear(slot)

    def _live(self, bank=None, masked=None):
        bank = self._bank if bank is None else bank
        return [s for s in bank.submobjects if s.has_points() and (masked is None or s.masked == masked)]

    # ---------------------------------------------------------------------------- content: static
    def set_content(self, kind: str, window=None, columns=None) -> "AttentionGrid":
        """Show `kind` (none|symbols|scores|weights|dots|score_dots, or columns with `columns`) at
        once, without animation."""
        parts, kind, nums = self._build(kind, window, columns)
        self._pour(self._spare_bank, parts)
        self._pour(self._bank, [])
        self._active = 1 - self._active
        self.content_kind, self.number_mobs = kind, nums
        return self

    def set_mask(self, state: str) -> "AttentionGrid":
        """Mask display at once: hidden | outlined | minus_inf | cleared."""
        if state not in ("hidden", "outlined", "minus_inf", "cleared"):
            raise ValueError(f"unknown mask state {state!r}")
        outline_slot, inf_slot = self.mask_layer.submobjects
        _clear(outline_slot), _clear(inf_slot)
        self.mask_number_mobs = {}
        if state != "hidden":
            for s in self._live(masked=True):
                _clear(s)
            self.number_mobs = {c: m for c, m in self.number_mobs.items() if not self.mask[c]}
        if state in ("outlined", "minus_inf"):
            outline, inf, mobs = self._mask_parts()
            _put(outline_slot, outline)
            if state == "minus_inf" and inf is not None:
                _put(inf_slot, inf)
                self.mask_number_mobs = mobs
            elif state == "minus_inf":
                state = "outlined"
        self.mask_state = state
        return self

    # ---------------------------------------------------------------------------- content: animated
    # Every animation below is a GridStep: it decides what to draw when it *starts* (so steps can
    # be built ahead of time and chained in a Succession) and only changes points and opacities.
    def transition(self, kind: str, run_time: float = 1.0, lag: float = 0.5, window=None,
                   columns=None) -> "GridStep":
        """Animation: the current content fades out while `kind` comes in (dots grow in, query
        after query when lag > 0). Parts marked steady (unchanged columns) stay at full."""

        def plan():
            old = self._live()
            parts, shown, nums = self._build(kind, window, columns)
            new_bank = self._spare_bank
            self._pour(new_bank, parts, alpha=0.0)
            self._active = 1 - self._active
            self.content_kind, self.number_mobs = shown, nums
            grow = shown == "dots" and len(parts) and parts[0].points.size
            if grow:
                q, _ = self._dot_cells()
                order = q / max(self.n - 1, 1)
                lg = float(np.clip(lag, 0.0, 0.95))
                dots = new_bank.submobjects[0]
                _alpha(dots, 1.0)
                geometry = self._dot_geometry()  # fixed for the step: no per-frame lookups

            def update(a):
                fo = min(1.0, a / 0.6)
                for s in old:
                    _alpha(s, 1.0 - fo)
                if grow:
                    p = _smoothstep((a - lg * order) / (1.0 - lg))
                    pts = self._dot_points(progress=p, geometry=geometry)
                    dots.set_points(pts) if len(pts) else dots.clear_points()
                else:
                    for s in self._live(new_bank):
                        _alpha(s, 1.0 if getattr(s, "steady", False) else a)

            def finish():
                for s in old:
                    _clear(s)

            return update, finish

        return GridStep(self, plan, run_time, rate_func=linear if kind == "dots" else smooth)

    def show_symbols(self, run_time: float = 1.0, denominator: str | None = None,
                     denominator_color: str | None = None):
        """K⃗ⱼ·Q⃗ᵢ in every cell; with `denominator` (e.g. "√16") each becomes a fraction over it."""
        self.symbol_denominator = denominator
        self.symbol_denominator_color = denominator_color
        return self.transition("symbols", run_time)

    def show_score_dots(self, run_time: float = 1.0):
        """The raw scores as dots (filled: positive, rings: negative; area ∝ |score|)."""
        return self.transition("score_dots", run_time)

    def show_columns(self, columns: dict, run_time: float = 1.0) -> "GridStep":
        """Animation: set what single queries show, {query: 'scores' | 'weights' | 'none'} (a column
        in the video layout, a row in the paper one); the others keep theirs and do not flicker.
        Every column must end up as one of those three (name them all when leaving dots or
        symbols). Uses one number size for scores and weights (use_common_number_font)."""
        return self.transition("columns", run_time, columns=dict(columns))

    def show_scores(self, run_time: float = 1.0, window=None):
        """Raw scores q·k/√d (one decimal). Falls back to dots when unreadable (see fallbacks)."""
        return self.transition("scores", run_time, window=window)

    def show_weights(self, run_time: float = 1.0, window=None):
        """Weights after softmax (two decimals), brighter for larger weights."""
        return self.transition("weights", run_time, window=window)

    def show_dots(self, run_time: float = 1.0, lag: float = 0.5):
        return self.transition("dots", run_time, lag=lag)

    def grow_dots(self, run_time: float = 1.0, lag: float = 0.5) -> "GridStep":
        """The dots grow in, query after query (same as show_dots)."""
        return self.show_dots(run_time, lag)

    def frame_mobjects(self) -> VGroup:
        """The grid without its cells' contents (lines, labels, ticks): to bring in first."""
        return VGroup(self.lines, self.labels)

    def reveal_mask(self, run_time: float = 2.0) -> "GridStep":
        """Animation: red outlines on the blocked cells, then −∞ written in them (whatever the
        blocked cells showed fades away)."""

        def plan():
            going = self._live(masked=True)
            self.number_mobs = {c: m for c, m in self.number_mobs.items() if not self.mask[c]}
            outline, inf, mobs = self._mask_parts()
            o_slot, i_slot = self.mask_layer.submobjects
            _put(o_slot, outline, 0.0)
            if inf is not None:
                _put(i_slot, inf, 0.0)
            self.mask_number_mobs = mobs
            self.mask_state = "minus_inf" if inf is not None else "outlined"
            split = 0.45 if inf is not None else 1.0

            def update(a):
                for s in going:
                    _alpha(s, 1.0 - min(1.0, a / (0.6 * split)))
                _alpha(o_slot, min(1.0, a / split))
                if inf is not None:
                    _alpha(i_slot, float(np.clip((a - 0.55) / 0.45, 0.0, 1.0)))

            def finish():
                for s in going:
                    _clear(s)

            return update, finish

        return GridStep(self, plan, run_time, layer=self.mask_layer)

    def clear_mask(self, run_time: float = 1.0) -> "GridStep":
        """Animation: the blocked cells become empty (no outline, no −∞; they never get a dot)."""

        def plan():
            going = [s for s in self.mask_layer.submobjects if s.has_points()] + self._live(masked=True)
            self.mask_state, self.mask_number_mobs = "cleared", {}
            self.number_mobs = {c: m for c, m in self.number_mobs.items() if not self.mask[c]}

            def update(a):
                for s in going:
                    _alpha(s, 1.0 - a)

            def finish():
                for s in going:
                    _clear(s)

            return update, finish

        return GridStep(self, plan, run_time, layer=self.mask_layer)

    # ---------------------------------------------------------------------------- highlight / spotlight
    def _label_extent(self):
        """(x of the far edge of the row labels, y of the far edge of the column labels)."""
        ul, cw, ch = self._geom()
        x = self.row_labels.get_left()[0] if self.row_labels.has_points() else ul[0]
        y = self.col_labels.get_top()[1] if self.col_labels.has_points() else ul[1]
        return x - 0.05, y + 0.05

    def _column_box(self, query: int, color: str | None) -> "Part":
        ll, ur = self.column_region(query)
        lx, ty = self._label_extent()
        if self.layout == "video":
            ur = ur.copy()
            ur[1] = max(ur[1], ty)
        else:
            ll = ll.copy()
            ll[0] = min(ll[0], lx)
        pts = rect_points((ll + ur)[None] / 2, (ur[0] - ll[0]) / 2, (ur[1] - ll[1]) / 2)
        return Part(pts, stroke=color or self.theme.query,
                    stroke_width=float(np.clip(min(self.cell_width, self.cell_height) * 8, 1.5, 4.0)))

    def _veil(self, cells, dim: float) -> "Part":
        keep = np.zeros((self.n, self.n), dtype=bool)  # [row, col] in drawing order
        for q, k in cells:
            keep[self._rc(q, k)] = True
        ul, cw, ch = self._geom()
        lx, ty = self._label_extent()
        rects = []  # (x0, y0, x1, y1): runs of dimmed cells, row by row
        for r in range(self.n):
            for a, b in _runs(~keep[r]):
                y1 = ul[1] - r * ch
                rects.append((ul[0] + a * cw, y1 - ch, ul[0] + b * cw, y1))
        for a, b in _runs(~keep.any(axis=1)):  # labels of rows without a kept cell
            rects.append((lx, ul[1] - b * ch, ul[0], ul[1] - a * ch))
        for a, b in _runs(~keep.any(axis=0)):
            rects.append((ul[0] + a * cw, ul[1], ul[0] + b * cw, ty))
        pts = np.zeros((0, 3))
        if rects:
            r = np.array(rects)
            centers = np.stack([(r[:, 0] + r[:, 2]) / 2, (r[:, 1] + r[:, 3]) / 2, np.zeros(len(r))], axis=1)
            pts = rect_points(centers, (r[:, 2] - r[:, 0]) / 2, (r[:, 3] - r[:, 1]) / 2)
        return Part(pts, fill=self.theme.background, fill_opacity=dim)

    def _overlay_step(self, box=None, veil=None, run_time=0.8) -> "GridStep":
        """Fade the box and/or veil slots to new contents (None: leave as is; False: remove)."""

        def plan():
            moves = []  # (slot, old points or None, new part or False)
            for slot, new in ((self.overlays.submobjects[1], box), (self.overlays.submobjects[0], veil)):
                if new is None:
                    continue
                new = new() if callable(new) else new
                had = slot.has_points()
                if new is False and not had:
                    continue
                if new is not False and had and len(slot.points) == len(new.points):
                    moves.append((slot, slot.points.copy(), new))  # slide from the old shape
                    _put(slot, new, 1.0)
                elif new is not False:
                    if had:
                        _put(slot, new, 1.0)
                        moves.append((slot, None, "keep"))
                    else:
                        _put(slot, new, 0.0)
                        moves.append((slot, None, new))
                else:
                    moves.append((slot, None, False))

            def update(a):
                for slot, old_pts, new in moves:
                    if new is False:
                        _alpha(slot, 1.0 - a)
                    elif isinstance(new, Part) and old_pts is not None:
                        e = float(_smoothstep(a))
                        slot.set_points(old_pts + (new.points - old_pts) * e)
                    elif isinstance(new, Part):
                        _alpha(slot, a)

            def finish():
                for slot, _, new in moves:
                    if new is False:
                        _clear(slot)

            return update, finish

        return GridStep(self, plan, run_time, layer=self.overlays)

    def highlight_column(self, query: int, color: str | None = None, dim_others: bool = False,
                         run_time: float = 0.8) -> "GridStep":
        """Animation: a box around one query's cells and its label (a column in the video
        layout, a row in the paper layout); it slides over from a previous highlight. With
        dim_others, every other query dims behind a veil."""
        self._highlighted = query
        veil = (lambda: self._veil([(query, k) for k in range(self.n)], 0.78)) if dim_others else None
        return self._overlay_step(box=lambda: self._column_box(query, color), veil=veil, run_time=run_time)

    def spotlight(self, cells: Iterable[tuple[int, int]], dim: float = 0.78, run_time: float = 0.8) -> "GridStep":
        """Animation: everything but `cells` (and their labels) dims behind a veil."""
        cells = [tuple(c) for c in cells]
        self.spotlit = cells
        return self._overlay_step(veil=lambda: self._veil(cells, dim), run_time=run_time)

    def unhighlight(self, run_time: float = 0.6) -> "GridStep":
        """Animation: the column box and any veil go away."""
        self._highlighted = None
        self.spotlit = []
        return self._overlay_step(box=False, veil=False, run_time=run_time)

    def unspotlight(self, run_time: float = 0.6) -> "GridStep":
        self.spotlit = []
        return self._overlay_step(veil=False, run_time=run_time)

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

    def label_boxes(self, which: str = "rows") -> np.ndarray:
        """Bounding boxes [m, 4] (x0, y0, x1, y1) of the drawn labels on `which` ('rows' on the
        left, 'cols' on top), in the order of shown_labels[which]; current coordinates."""
        mob = self.row_labels if which == "rows" else self.col_labels
        sl = getattr(self, "_label_slices", {}).get(which)
        if sl is None or not mob.has_points():
            return np.zeros((0, 4))
        p = mob.points
        return np.array([[p[a:b, 0].min(), p[a:b, 1].min(), p[a:b, 0].max(), p[a:b, 1].max()]
                         for a, b in zip(sl[:-1], sl[1:])])

    def label_position(self, index: int, axis: str) -> np.ndarray:
        """Where token `index`'s label sits: axis 'query' or 'key' (whatever the layout)."""
        ul, cw, ch = self._geom()
        on_rows = (axis == "key") == (self.layout == "video")
        if on_rows:
            return np.array([ul[0] - 0.1, ul[1] - (index + 0.5) * ch, 0])
        return np.array([ul[0] + (index + 0.5) * cw, ul[1] + 0.1, 0])
