"""Where things are in an AttentionGrid: cell size and label fitting, cell centres and regions,
and the grid's frame (lines, token labels, ticks).

`GridGeometry` is a mixin of `AttentionGrid` (see attention_grid.py). It uses the grid's
`n`, `layout` ("video": keys as rows, queries as columns; "paper": the transpose), `tokens`,
`theme`, `show_labels` and the label-size settings; `_fit` decides the cell size, label font and
label stride, `_build_frame` draws `lines` and `labels`. Every lookup takes `(query, key)`
whatever the layout and reads the current position of `lines`, so it follows moves and scales.
"""

from __future__ import annotations

import math

import numpy as np
from manim import UL, Rectangle, VGroup, VMobject

from .batched_shapes import REF_FS, WordOutline, points_mobject, segments


def short_token(token: str, max_chars: int) -> str:
    """A token as its label shows it: at most `max_chars` characters (… marks a cut); ␣ for blanks. A mark's
    name in brackets ("(dois-pontos)": `shown_token`) is the catalog's, never cut."""
    token = str(token) if str(token).strip() else "␣"
    named = token.lstrip("␣").startswith("(") and token.endswith(")") and len(token) > 2
    return token if len(token) <= max_chars or named else token[: max_chars - 1] + "…"


class GridGeometry:
    """Cell geometry, label fitting and the static frame of an AttentionGrid."""

    # ---------------------------------------------------------------------------- lookups
    @property
    def row_tokens_are_keys(self) -> bool:
        return self.layout == "video"

    def _rc(self, query, key):
        """(row, column) in drawing order of the cell for (query, key)."""
        return (key, query) if self.layout == "video" else (query, key)

    def _geom(self):
        """(upper-left corner of the cells, cell width, cell height), in scene coordinates now."""
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

    # ---------------------------------------------------------------------------- labels
    def _label_extent(self):
        """(x of the far edge of the row labels, y of the far edge of the column labels)."""
        ul, cw, ch = self._geom()
        x = self.row_labels.get_left()[0] if self.row_labels.has_points() else ul[0]
        y = self.col_labels.get_top()[1] if self.col_labels.has_points() else ul[1]
        return x - 0.05, y + 0.05

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

    # ---------------------------------------------------------------------------- fitting
    def _fit(self, W, H, cell_size):
        """Choose the cell size, the label font and the label stride (every k-th token
        labelled) so that cells and labels fit W × H; top labels turn upright when flat ones
        would have to shrink below 72% of the nominal size."""
        n = self.n
        self._words = {}
        self._row_color = self.theme.key if self.layout == "video" else self.theme.query
        self._col_color = self.theme.query if self.layout == "video" else self.theme.key
        disp = [short_token(t, self.max_label_chars) for t in self.tokens]
        self._disp = disp

        def word(i):
            if disp[i] not in self._words:
                self._words[disp[i]] = WordOutline(disp[i])
            return self._words[disp[i]]

        line_h = word(0).line_height / REF_FS if self.show_labels else 0.0  # per font unit
        pad = 0.12

        def strides_for(fs, cw, ch):
            lh = line_h * fs
            stride_rows = max(1, math.ceil(lh * 1.05 / ch))
            stride_rot = max(1, math.ceil(lh * 1.05 / cw))
            return stride_rows, stride_rot

        def shown(stride):
            idx = list(range(0, n, stride))
            if stride > 1 and idx[-1] != n - 1 and (n - 1 - idx[-1]) >= stride * 0.75:
                idx.append(n - 1)
            if stride > 1 and len(idx) >= 2 and idx[-1] == n - 1 and idx[-1] - idx[-2] < stride * 0.75:
                idx[-2:] = [idx[-2]]
            return idx

        def solve(flat: bool):
            """Cell size, label font and strides with the top labels flat or turned; ok = the
            flat labels fit at a font no smaller than 72% of the nominal one."""
            if cell_size is not None:
                cw, ch = (cell_size, cell_size) if np.isscalar(cell_size) else map(float, cell_size)
            else:
                cw = ch = min(W, H) / n
            fs, strides, ok = self.max_label_font, (1, 1), True
            for _ in range(1 if cell_size is not None else 8):
                if self.show_labels:
                    nominal = float(np.clip(self.label_fill * ch / line_h, self.min_label_font, self.max_label_font))
                    stride_rows, stride_cols = strides_for(nominal, cw, ch)
                    cols_idx = shown(stride_cols)
                    widest_ref = max(word(i).width for i in cols_idx) / REF_FS
                    fs = nominal
                    if flat:
                        fs_flat = 0.85 * cw * stride_cols / widest_ref  # largest font that fits, with a gap
                        ok = fs_flat >= max(self.min_label_font, 0.72 * nominal)
                        fs = min(nominal, fs_flat)
                    left_w = (max(word(i).width for i in shown(stride_rows)) / REF_FS * fs + pad
                              if self.show_row_labels else 0.0)
                    top_h = (line_h * fs if flat else widest_ref * fs) + pad
                    strides = (stride_rows, stride_cols)
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
            return cw, ch, fs, strides, ok

        cw, ch, fs, strides, ok = solve(flat=True)
        rotated = False
        if self.show_labels and not ok:
            cw, ch, fs, strides, _ = solve(flat=False)
            rotated = True
        self.label_font_size = fs
        self.label_stride = strides if self.show_labels else (1, 1)  # (rows, columns): every k-th token
        self.top_labels_rotated = rotated
        self._cw0, self._ch0 = cw, ch
        self._shown_fn = shown
        self._word_fn = word

    # ---------------------------------------------------------------------------- the frame
    def _build_frame(self):
        """`lines` (one VMobject) and `labels` (row labels, column labels, ticks), with the
        cells' upper-left corner at the origin (the grid is centred afterwards)."""
        n, cw, ch = self.n, self._cw0, self._ch0
        th = self.theme
        ul = np.array([0.0, 0.0, 0.0])
        w, h = n * cw, n * ch
        pairs = [(ul + [0, -i * ch, 0], ul + [w, -i * ch, 0]) for i in range(n + 1)]
        pairs += [(ul + [i * cw, 0, 0], ul + [i * cw, -h, 0]) for i in range(n + 1)]
        # interior lines only while cells are big enough for them not to grey out the grid;
        # beyond that, the border and a faint line every `every` cells
        # (a round count of tokens, 2, 5, 10, 20, …: lines every 6 tokens counted nothing a reader could use)
        every = 1 if min(cw, ch) >= 0.09 else next(
            k * 10 ** e for e in range(9) for k in (1, 2, 5) if k * 10 ** e >= math.ceil(0.45 / min(cw, ch)))
        keep = [0, n] + [i for i in range(1, n) if i % every == 0]
        pairs = [pairs[i] for i in sorted(set(keep))] + [pairs[n + 1 + i] for i in sorted(set(keep))]
        self.line_every = every
        self.lines = VMobject(stroke_color=th.dim, fill_opacity=0,
                              stroke_width=float(np.clip(ch * 5, 0.5, 2.0)),
                              stroke_opacity=1.0 if every == 1 else 0.6)
        self.lines.set_points(segments(pairs))

        self.row_labels = VMobject()
        self.col_labels = VMobject()
        self.ticks = VMobject()
        self.shown_labels = {"rows": [], "cols": []}
        if self.show_labels:
            fs = self.label_font_size
            stride_rows, stride_cols = self.label_stride
            rows_idx, cols_idx = self._shown_fn(stride_rows), self._shown_fn(stride_cols)
            if not self.show_row_labels:
                rows_idx = []
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
            self.row_labels = points_mobject(rl, self._row_color)
            self.col_labels = points_mobject(cl, self._col_color)
            # what the lint needs to measure these merged glyph outlines as text: their font size
            # at the grid's size when built (scenes/review.py scales it by how the lines have scaled since)
            for labels in (self.row_labels, self.col_labels):
                labels.lint_text = (fs, self.lines, max(self.lines.height, 1e-9))
            self._label_slices = {"rows": np.cumsum([0] + [len(p) for p in rl]),
                                  "cols": np.cumsum([0] + [len(p) for p in cl])}
            if max(stride_rows, stride_cols) > 1:  # ticks tie every shown label to its row/column
                t = min(cw, ch) * 0.6
                tp = [([0, -(i + 0.5) * ch, 0], [-t, -(i + 0.5) * ch, 0]) for i in rows_idx]
                tp += [([(i + 0.5) * cw, 0, 0], [(i + 0.5) * cw, t, 0]) for i in cols_idx]
                self.ticks = VMobject(stroke_color=th.dim, stroke_width=1.0, fill_opacity=0)
                self.ticks.set_points(segments(tp))
        self.labels = VGroup(self.row_labels, self.col_labels, self.ticks)
