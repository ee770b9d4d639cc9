"""The animations an AttentionGrid offers: content transitions, the mask, and the column box and
spotlight veil over the cells.

Every animation is a `GridTween`: it decides what to draw when it *starts* (so tweens can be
built ahead and chained with `grid.succession(...)`) and only rewrites the points and opacities
of the grid's fixed slots, so the grid stays one mobject in the scene. `GridTweens` is a mixin of
`AttentionGrid` (see attention_grid.py); the content itself is built by `GridSheets`.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
from manim import linear, smooth

from .batched_shapes import Part, Tween, boxes_points, clear_slot, fade_slot, put_part, rect_points, runs, smoothstep


class GridTween(Tween):
    """One animation of an AttentionGrid: it only rewrites the points and opacities of the
    grid's fixed slots, so the grid stays one mobject in the scene. `sheet` is the first sheet it
    changes (mask_sheet, content or overlays): it and the sheets after it are redrawn on every
    frame, the sheets before it (lines, labels, and the mask unless it changes) are drawn once."""

    def __init__(self, grid, plan, run_time: float = 1.0, rate_func=smooth, sheet=None, **kwargs):
        sheet = grid.content if sheet is None else sheet
        super().__init__(sheet, plan, run_time=run_time, rate_func=rate_func, owner=grid, **kwargs)
        self.grid = grid

    # ManimCE redraws, on every frame, every mobject from the first "moving" one in the scene's
    # family order, and it counts an ancestor of a moving mobject as moving: with the grid in the
    # scene as one group, its lines, labels and mask would be redrawn on every frame. For the
    # length of the tween the grid's sheets stand in its place in the scene's list (same order,
    # same drawing), so the sheets before the changing one go into the static frame; the grid
    # is put back when the tween ends. A grid nested inside another group is left alone.
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


class GridTweens:
    """Animated changes of an AttentionGrid (each returns a GridTween)."""

    # ---------------------------------------------------------------------------- content
    def transition(self, kind: str, run_time: float = 1.0, lag: float = 0.5, window=None,
                   columns=None) -> GridTween:
        """Animation: the current content fades out while `kind` comes in (dots grow in, query
        after query when lag > 0). Parts marked steady (unchanged columns) stay at full."""

        def plan():
            old = self._live()
            parts, shown, nums = self._content_parts(kind, window, columns)
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
                fade_slot(dots, 1.0)
                geometry = self._dot_geometry()  # fixed for the tween: no per-frame lookups

            def update(a):
                fo = min(1.0, a / 0.6)
                for s in old:
                    fade_slot(s, 1.0 - fo)
                if grow:
                    p = smoothstep((a - lg * order) / (1.0 - lg))
                    pts = self._dot_points(progress=p, geometry=geometry)
                    dots.set_points(pts) if len(pts) else dots.clear_points()
                else:
                    for s in self._live(new_bank):
                        fade_slot(s, 1.0 if getattr(s, "steady", False) else a)

            def finish():
                for s in old:
                    clear_slot(s)

            return update, finish

        return GridTween(self, plan, run_time, rate_func=linear if kind == "dots" else smooth)

    def show_symbols(self, run_time: float = 1.0, denominator: str | None = None,
                     denominator_color: str | None = None) -> GridTween:
        """K⃗ⱼ·Q⃗ᵢ in every cell; with `denominator` (e.g. "√16") each becomes a fraction over it."""
        self.symbol_denominator = denominator
        self.symbol_denominator_color = denominator_color
        return self.transition("symbols", run_time)

    def show_score_dots(self, run_time: float = 1.0) -> GridTween:
        """The raw scores as dots (filled: positive, rings: negative; area ∝ |score|)."""
        return self.transition("score_dots", run_time)

    def show_columns(self, columns: dict, run_time: float = 1.0) -> GridTween:
        """Animation: set what single queries show, {query: 'scores' | 'weights' | 'none'} (a column
        in the video layout, a row in the paper one); the others keep theirs and do not flicker.
        Every column must end up as one of those three (name them all when leaving dots or
        symbols). Uses one number size for scores and weights (use_common_number_font)."""
        return self.transition("columns", run_time, columns=dict(columns))

    def show_scores(self, run_time: float = 1.0, window=None) -> GridTween:
        """Raw scores q·k/√d (one decimal). Falls back to dots when unreadable (see fallbacks)."""
        return self.transition("scores", run_time, window=window)

    def show_weights(self, run_time: float = 1.0, window=None) -> GridTween:
        """Weights after softmax (two decimals), brighter for larger weights."""
        return self.transition("weights", run_time, window=window)

    def show_dots(self, run_time: float = 1.0, lag: float = 0.5) -> GridTween:
        return self.transition("dots", run_time, lag=lag)

    def grow_dots(self, run_time: float = 1.0, lag: float = 0.5) -> GridTween:
        """The dots grow in, query after query (same as show_dots)."""
        return self.show_dots(run_time, lag)

    # ---------------------------------------------------------------------------- mask
    def reveal_mask(self, run_time: float = 2.0) -> GridTween:
        """Animation: red outlines on the blocked cells, then −∞ written in them (whatever the
        blocked cells showed fades away)."""

        def plan():
            going = self._live(masked=True)
            self.number_mobs = {c: m for c, m in self.number_mobs.items() if not self.mask[c]}
            outline, inf, mobs = self._mask_parts()
            o_slot, i_slot = self.mask_sheet.submobjects
            put_part(o_slot, outline, 0.0)
            if inf is not None:
                put_part(i_slot, inf, 0.0)
            self.mask_number_mobs = mobs
            self.mask_state = "minus_inf" if inf is not None else "outlined"
            split = 0.45 if inf is not None else 1.0

            def update(a):
                for s in going:
                    fade_slot(s, 1.0 - min(1.0, a / (0.6 * split)))
                fade_slot(o_slot, min(1.0, a / split))
                if inf is not None:
                    fade_slot(i_slot, float(np.clip((a - 0.55) / 0.45, 0.0, 1.0)))

            def finish():
                for s in going:
                    clear_slot(s)

            return update, finish

        return GridTween(self, plan, run_time, sheet=self.mask_sheet)

    def clear_mask(self, run_time: float = 1.0) -> GridTween:
        """Animation: the blocked cells become empty (no outline, no −∞; they never get a dot)."""

        def plan():
            going = [s for s in self.mask_sheet.submobjects if s.has_points()] + self._live(masked=True)
            self.mask_state, self.mask_number_mobs = "cleared", {}
            self.number_mobs = {c: m for c, m in self.number_mobs.items() if not self.mask[c]}

            def update(a):
                for s in going:
                    fade_slot(s, 1.0 - a)

            def finish():
                for s in going:
                    clear_slot(s)

            return update, finish

        return GridTween(self, plan, run_time, sheet=self.mask_sheet)

    # ---------------------------------------------------------------------------- box and veil
    def _column_box(self, query: int, color: str | None) -> Part:
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
                    stroke_width=float(np.clip(min(self.cell_width, self.cell_height) * 8 / self.stroke_scale, 1.5, 4.0))
                    * self.stroke_scale)

    def _veil(self, cells, dim: float) -> Part:
        keep = np.zeros((self.n, self.n), dtype=bool)  # [row, col] in drawing order
        for q, k in cells:
            keep[self._rc(q, k)] = True
        ul, cw, ch = self._geom()
        lx, ty = self._label_extent()
        rects = []  # (x0, y0, x1, y1): runs of dimmed cells, row by row
        for r in range(self.n):
            for a, b in runs(~keep[r]):
                y1 = ul[1] - r * ch
                rects.append((ul[0] + a * cw, y1 - ch, ul[0] + b * cw, y1))
        for a, b in runs(~keep.any(axis=1)):  # labels of rows without a kept cell
            rects.append((lx, ul[1] - b * ch, ul[0], ul[1] - a * ch))
        for a, b in runs(~keep.any(axis=0)):
            rects.append((ul[0] + a * cw, ul[1], ul[0] + b * cw, ty))
        return Part(boxes_points(rects), fill=self.theme.background, fill_opacity=dim)

    def _overlay_tween(self, box=None, veil=None, run_time=0.8) -> GridTween:
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
                    put_part(slot, new, 1.0)
                elif new is not False:
                    if had:
                        put_part(slot, new, 1.0)
                        moves.append((slot, None, "keep"))
                    else:
                        put_part(slot, new, 0.0)
                        moves.append((slot, None, new))
                else:
                    moves.append((slot, None, False))

            def update(a):
                for slot, old_pts, new in moves:
                    if new is False:
                        fade_slot(slot, 1.0 - a)
                    elif isinstance(new, Part) and old_pts is not None:
                        e = float(smoothstep(a))
                        slot.set_points(old_pts + (new.points - old_pts) * e)
                    elif isinstance(new, Part):
                        fade_slot(slot, a)

            def finish():
                for slot, _, new in moves:
                    if new is False:
                        clear_slot(slot)

            return update, finish

        return GridTween(self, plan, run_time, sheet=self.overlays)

    def highlight_column(self, query: int, color: str | None = None, dim_others: bool = False,
                         run_time: float = 0.8) -> GridTween:
        """Animation: a box around one query's cells and its label (a column in the video
        layout, a row in the paper layout); it slides over from a previous highlight. With
        dim_others, every other query dims behind a veil."""
        self._highlighted = query
        veil = (lambda: self._veil([(query, k) for k in range(self.n)], 0.78)) if dim_others else None
        return self._overlay_tween(box=lambda: self._column_box(query, color), veil=veil, run_time=run_time)

    def spotlight(self, cells: Iterable[tuple[int, int]], dim: float = 0.78, run_time: float = 0.8) -> GridTween:
        """Animation: everything but `cells` (and their labels) dims behind a veil."""
        cells = [tuple(c) for c in cells]
        self.spotlit = cells
        return self._overlay_tween(veil=lambda: self._veil(cells, dim), run_time=run_time)

    def unhighlight(self, run_time: float = 0.6) -> GridTween:
        """Animation: the column box and any veil go away."""
        self._highlighted = None
        self.spotlit = []
        return self._overlay_tween(box=False, veil=False, run_time=run_time)

    def unspotlight(self, run_time: float = 0.6) -> GridTween:
        self.spotlit = []
        return self._overlay_tween(veil=False, run_time=run_time)
