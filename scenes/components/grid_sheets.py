"""What an AttentionGrid's cells show, as outlines: numbers, K⃗ⱼ·Q⃗ᵢ symbols, weight dots, score
dots and the mask; poured into the grid's slots at once (`set_content`, `set_mask`).

`GridSheets` is a mixin of `AttentionGrid` (see attention_grid.py for the vocabulary). Each
builder returns a list of `Part`s (outline points + style), never mobjects in the scene:

- `_number_parts`: raw scores (one decimal) or weights (two decimals, shaded by weight in a few
  colour bins), built with `number()` so `number_mobs` keep `.value`/`.shown` for inspection;
- `_symbol_parts`: K⃗ⱼ·Q⃗ᵢ from glyph outlines and drawn arrows (no Text per cell), optionally
  as a fraction over a denominator such as "√16";
- `_dot_parts`: one dot per visible weight, area ∝ weight; `_score_dot_parts`: |score| as
  area, filled for positive scores, rings for negative ones;
- `_columns_parts`: each query's cells show scores, weights or nothing;
- `_mask_parts`: red outlines in blocked cells (a lattice when cells are small) and −∞.

The content sheet has two banks of slots: what is shown and a spare one the next content is
poured into (so a tween can fade one out while the other comes in).
"""

from __future__ import annotations

import numpy as np
from manim import VGroup, VMobject

from ..style import fmt_score, fmt_score2, fmt_weight
from .batched_shapes import (REF_FS, Part, boxes_points, circles_points, clear_slot, lerp_color, outline_points,
                             put_part, rect_points, runs, segments)
from ..review import MIN_NUMBER_PX, PX_PER_UNIT_720
from .grid_symbols import SUBSCRIPT, SUBSCRIPT_PX, denominator_glyphs, symbol_glyphs, symbol_outline
from .text import centre_figure, label, number

WEIGHT_BINS = 5  # colour bins of the weights (dim → bright)
WIDEST_SHARE = 0.86  # of its cell's width, the most the widest number takes to reach the readable size (else 0.78)


# --------------------------------------------------------------------------------------------
# the mixin
# --------------------------------------------------------------------------------------------
class GridSheets:
    """Content and mask of an AttentionGrid, built as Parts and poured into its slots."""

    COLUMN_KINDS = ("scores", "weights", "none")

    # ---------------------------------------------------------------------------- cells and dots
    @property
    def masked_cells(self) -> list[tuple[int, int]]:
        return [tuple(map(int, c)) for c in np.argwhere(self.mask)]

    @property
    def dot_radius_fraction(self) -> np.ndarray:
        """Radius of each dot as a fraction of the smaller cell side, [query, key]: r ∝ √weight
        (area ∝ weight); 0 for masked cells and weights below min_weight."""
        frac = self.dot_fraction_for(self.pattern)
        frac[self.mask | (self.pattern < self.min_weight)] = 0.0
        return frac

    def dot_fraction_for(self, weights) -> np.ndarray:
        """The one size function of the dots (the cells' and the legend's, dot_legend.py): radius
        over the smaller cell side for `weights`, ∝ √weight (relative to the largest unmasked
        weight when `relative_dots`)."""
        w = np.clip(np.asarray(weights, dtype=float), 0.0, 1.0)
        if self.relative_dots:
            shown = np.clip(self.pattern, 0.0, 1.0)[~self.mask]
            top = shown.max() if shown.size else 1.0
            w = w / top if top > 0 else w
        return self.dot_fraction * np.sqrt(w)

    def dot_radius_for(self, weight: float) -> float:
        """The radius, in scene units now, of the dot this grid draws for `weight`."""
        return float(self.dot_fraction_for(weight)) * min(self.cell_width, self.cell_height)

    @property
    def dot_radii(self) -> np.ndarray:
        """Dot radius per cell in scene units, [query, key] (0 = no dot)."""
        return self.dot_radius_fraction * min(self.cell_width, self.cell_height)

    @property
    def dot_arcs(self) -> int:
        """Cubic arcs per dot: 4 while cells are large, 2 once dots are only a few pixels."""
        return 4 if min(self.cell_width, self.cell_height) > 0.3 else 2

    def _dot_cells(self):
        """Cells that get a dot, in drawing order: query by query (column by column in the video
        layout, the order in which the video reads them)."""
        q, k = np.nonzero(self.dot_radius_fraction > 0)
        order = np.lexsort((k, q))
        return q[order], k[order]

    def _dot_geometry(self):
        q, k = self._dot_cells()
        return self.cell_centers()[q, k], self.dot_radii[q, k]

    def _dot_points(self, progress=1.0, geometry=None):
        centers, radii = geometry if geometry is not None else self._dot_geometry()
        r = radii * progress
        if np.ndim(progress):  # dots that have not started growing are left out entirely
            keep = r > 0
            centers, r = centers[keep], r[keep]
        return circles_points(centers, r, self.dot_arcs)

    # ---------------------------------------------------------------------------- number size
    def _number_font(self, strings: list[str], frac_w=0.78, frac_h=0.5) -> float:
        if not strings:
            return 0.0
        cands = sorted(set(strings), key=len)[-4:]
        wmax = max(label(s, REF_FS).width for s in cands) / REF_FS
        hmax = label("0", REF_FS).height / REF_FS
        fs = frac_w * self.cell_width / wmax
        # short of the readable size (digits 14 px tall at 720p), the widest number may take up to
        # WIDEST_SHARE of its cell rather than be set too small to read (SmolLM2's own sentence: 13.8 px)
        readable = 1.01 * MIN_NUMBER_PX / (hmax * PX_PER_UNIT_720)  # (a glyph's height is not quite linear in its size)
        if fs < readable:
            fs = max(fs, min(readable, WIDEST_SHARE * self.cell_width / wmax))
        return float(min(fs, frac_h * self.cell_height / hmax, 30.0))

    def common_number_font(self) -> float:
        """One font size at which every score (−∞ included) and every weight fits its cell."""
        strings = [fmt_weight(w) for w in self.pattern.ravel()] + ["−∞"]
        if self.scores is not None:
            strings += [(fmt_score2 if self.score_kind() == "score2" else fmt_score)(x) for x in self.scores.ravel()]
        return round(self._number_font(strings), 1)

    def numbers_readable(self) -> bool:
        """Whether scores and weights can be written in the cells (else they fall back to dots)."""
        if self.n > self.number_limit:
            return False
        return (self.number_font or self.common_number_font()) >= self.min_number_font

    def use_common_number_font(self):
        """Draw scores and weights at one size from now on (so a cell keeps its size when its
        content changes, and show_columns can leave unchanged columns untouched)."""
        self.number_font = self.common_number_font()
        return self

    # ---------------------------------------------------------------------------- content parts
    def _number_parts(self, which: str, window=None, steady: bool = False):
        """(parts, number mobjects) for `which` in ('scores', 'weights'); None if unreadable.
        `window` = (queries, keys) limits the cells; `steady` marks the parts as unchanged."""
        if which == "scores" and self.scores is None:
            raise ValueError("this grid was built without scores")
        values = self.scores if which == "scores" else self.pattern
        kind = self.score_kind() if which == "scores" else "weight"
        show_masked = which == "scores" and self.mask_state == "hidden"
        sel = ~self.mask | (self.mask & show_masked)
        if window is not None:
            win = np.zeros_like(sel)
            win[np.ix_(list(window[0]), list(window[1]))] = True
            sel &= win
        elif self.n > self.number_limit:
            return None
        cells = [tuple(c) for c in np.argwhere(sel).tolist()]
        fmt = {"score": fmt_score, "score2": fmt_score2}.get(kind, fmt_weight)
        fs = self.number_font or self._number_font([fmt(values[c]) for c in cells])
        if not cells or fs < self.min_number_font:
            return None
        fs = round(fs, 1)
        centers = self.cell_centers()
        mobs = {}
        for c in cells:
            m = number(values[c], kind, font_size=fs, color=self.theme.text)
            centre_figure(m, centers[c])  # (by its digits: a decimal comma hangs below them)
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
                        parts.append(Part(outline_points(sel_i),
                                          fill=lerp_color(th.dim, th.text, (i + 1) / WEIGHT_BINS),
                                          masked=masked, steady=steady))
            else:
                parts.append(Part(outline_points([mobs[c] for c in group]), fill=th.text, masked=masked,
                                  steady=steady))
        return parts, mobs

    def _symbol_parts(self):
        """Parts for K⃗ⱼ·Q⃗ᵢ in every cell (1-based indices, j = key, i = query), or None when
        too small to read."""
        th = self.theme
        den = getattr(self, "symbol_denominator", None)
        digit = float(np.ptp(symbol_glyphs()["0"][:, 1])) * SUBSCRIPT  # at REF_FS

        def fitted(ref) -> float:
            if den:  # a fraction: symbol, rule, denominator
                dg = denominator_glyphs(den)
                gap = 0.12 * symbol_glyphs()["cap"]
                rule_h = 0.06 * symbol_glyphs()["cap"]
                frac_h = ref["height"] + 2 * gap + rule_h + dg["height"]
                return min(0.84 * self.cell_width / (max(ref["width"], dg["width"]) / REF_FS),
                           0.78 * self.cell_height / (frac_h / REF_FS), 30.0)
            return min(0.84 * self.cell_width / (ref["width"] / REF_FS),
                       0.6 * self.cell_height / (ref["height"] / REF_FS), 30.0)

        # subscripts where their digits read at the text size at 720p; else K⃗·Q⃗, larger, in every cell
        # (its row's and column's words say which key and query), and the grid says so (symbol_indexed)
        fs = fitted(symbol_outline(self.n, self.n))
        self.symbol_indexed = digit * fs / REF_FS * PX_PER_UNIT_720 * self.symbol_zoom >= SUBSCRIPT_PX
        if not self.symbol_indexed:
            fs = fitted(symbol_outline(None, None))
        if fs < self.min_number_font:
            return None
        if den:
            dg = denominator_glyphs(den)
            gap = 0.12 * symbol_glyphs()["cap"]
            rule_h = 0.06 * symbol_glyphs()["cap"]
            ref = symbol_outline(self.n, self.n) if self.symbol_indexed else symbol_outline(None, None)
            frac_h = ref["height"] + 2 * gap + rule_h + dg["height"]
        s = fs / REF_FS
        self.symbol_font_size = fs
        # the subscripts' digit height, for the lint (which follows the grid's later scaling by its lines)
        self.lint_subscript = (digit * s, self.lines, float(self.lines.height)) if self.symbol_indexed else None
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
                sym = symbol_outline(int(j) + 1, int(i) + 1) if self.symbol_indexed else symbol_outline(None, None)
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

    def _dot_parts(self):
        q, k = self._dot_cells()
        self.dot_cells = list(zip(q.tolist(), k.tolist()))
        pts = self._dot_points() if len(q) else np.zeros((0, 3))
        return [Part(pts, fill=self.dot_color, fill_opacity=0.9, dots=True)]

    def _score_dot_parts(self):
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

    def _content_parts(self, kind, window=None, columns=None):
        """(parts, kind actually shown, number mobjects). Unreadable numbers fall back to dots
        and unreadable symbols to nothing; each fallback is noted in `fallbacks`."""
        nums = {}
        if kind == "columns":
            return self._columns_parts(columns or {})
        if kind == "none":
            parts = []
        elif kind == "score_dots":
            if self.scores is None:
                raise ValueError("this grid was built without scores")
            parts = self._score_dot_parts()
        elif kind == "symbols":
            parts = self._symbol_parts()
            if parts is None:
                self.fallbacks.append("symbols->none")
                parts, kind = [], "none"
        elif kind in ("scores", "weights"):
            built = self._number_parts(kind, window)
            if built is None:
                self.fallbacks.append(f"{kind}->dots")
                parts, kind = self._dot_parts(), "dots"
            else:
                parts, nums = built
        elif kind == "dots":
            parts = self._dot_parts()
        else:
            raise ValueError(f"unknown content {kind!r}: none, symbols, scores, weights, dots, score_dots "
                             "or columns")
        self.column_kinds = [kind] * self.n
        return parts, kind, nums

    def _columns_parts(self, columns: dict):
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
                built = self._number_parts(kind, window=(qs, range(self.n)), steady=steady)
                if built is None:
                    self.fallbacks.append(f"{kind}->dots")
                    self.column_kinds = ["dots"] * self.n
                    return self._dot_parts(), "dots", {}
                parts += built[0]
                nums.update(built[1])
        self.column_kinds = new
        shown = new[0] if len(set(new)) == 1 else "columns"
        return parts, shown, nums

    # ---------------------------------------------------------------------------- mask parts
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
        return outline, Part(outline_points(mobs.values()), fill=self.theme.mask), mobs

    def _mask_lattice(self) -> np.ndarray:
        """Blocked cells as a filled region with a line between every two cells: row runs as
        rectangles, plus the inner lines as segments spanning runs (drawing order rows/cols)."""
        blocked = np.zeros((self.n, self.n), dtype=bool)  # [row, col]
        for q, k in self.masked_cells:
            blocked[self._rc(q, k)] = True
        ul, cw, ch = self._geom()
        rects, segs = [], []
        for r in range(self.n):
            for a, b in runs(blocked[r]):
                y1 = ul[1] - r * ch
                rects.append((ul[0] + a * cw, y1 - ch, ul[0] + b * cw, y1))
        for c in range(1, self.n):  # vertical lines between blocked neighbours
            for a, b in runs(blocked[:, c - 1] & blocked[:, c]):
                x = ul[0] + c * cw
                segs.append(([x, ul[1] - a * ch, 0], [x, ul[1] - b * ch, 0]))
        for r in range(1, self.n):  # horizontal ones
            for a, b in runs(blocked[r - 1] & blocked[r]):
                y = ul[1] - r * ch
                segs.append(([ul[0] + a * cw, y, 0], [ul[0] + b * cw, y, 0]))
        return np.concatenate([boxes_points(rects), segments(segs)])

    # ---------------------------------------------------------------------------- slots
    @property
    def _bank(self) -> VGroup:
        """The content bank now shown."""
        return self.content.submobjects[self._active]

    @property
    def _spare_bank(self) -> VGroup:
        """The other content bank: the next content is poured into it."""
        return self.content.submobjects[1 - self._active]

    def _pour(self, bank: VGroup, parts, alpha: float = 1.0):
        if len(parts) > len(bank.submobjects):
            raise RuntimeError(f"{len(parts)} parts for {len(bank.submobjects)} slots")
        for i, slot in enumerate(bank.submobjects):
            if i < len(parts):
                put_part(slot, parts[i], alpha)
            else:
                clear_slot(slot)

    def _live(self, bank=None, masked=None) -> list[VMobject]:
        """The slots of `bank` (default: the shown one) that draw something."""
        bank = self._bank if bank is None else bank
        return [s for s in bank.submobjects if s.has_points() and (masked is None or s.masked == masked)]

    # ---------------------------------------------------------------------------- at once
    def set_content(self, kind: str, window=None, columns=None):
        """Show `kind` (none|symbols|scores|weights|dots|score_dots, or columns with `columns`) at
        once, without animation."""
        parts, kind, nums = self._content_parts(kind, window, columns)
        self._pour(self._spare_bank, parts)
        self._pour(self._bank, [])
        self._active = 1 - self._active
        self.content_kind, self.number_mobs = kind, nums
        return self

    def set_mask(self, state: str):
        """Mask display at once: hidden | outlined | minus_inf | cleared."""
        if state not in ("hidden", "outlined", "minus_inf", "cleared"):
            raise ValueError(f"unknown mask state {state!r}")
        outline_slot, inf_slot = self.mask_sheet.submobjects
        clear_slot(outline_slot), clear_slot(inf_slot)
        self.mask_number_mobs = {}
        if state != "hidden":
            for s in self._live(masked=True):
                clear_slot(s)
            self.number_mobs = {c: m for c, m in self.number_mobs.items() if not self.mask[c]}
        if state in ("outlined", "minus_inf"):
            outline, inf, mobs = self._mask_parts()
            put_part(outline_slot, outline)
            if state == "minus_inf" and inf is not None:
                put_part(inf_slot, inf)
                self.mask_number_mobs = mobs
            elif state == "minus_inf":
                state = "outlined"
        self.mask_state = state
        return self
