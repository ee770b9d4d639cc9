"""K⃗ⱼ·Q⃗ᵢ as glyph outlines for an AttentionGrid's cells (grid_sheets draws them): italic K and Q
with an arrow over each and a subscript index, the centred dot, and a denominator such as √16."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .batched_shapes import REF_FS, polygon_points, text_points
from .vectors import MATH_PER_TEXT, math_points

# --------------------------------------------------------------------------------------------
# K⃗ⱼ·Q⃗ᵢ from glyph outlines
# --------------------------------------------------------------------------------------------
SUBSCRIPT = 0.78  # a subscript digit's size against the letter's: the index says which key and query (0.62 read 9 px)
SUBSCRIPT_PX = 11.5  # the least a subscript digit may stand at 720p (the lint's text size, and a margin)


@lru_cache(maxsize=None)
def symbol_glyphs():
    """Glyph outlines at REF_FS with the baseline at y = 0 and each glyph's ink starting at x = 0:
    italic K and Q (math letters), upright digits and the centred dot."""
    it = text_points("KQ", slant="ITALIC")
    up = text_points("K·0123456789")
    base_it, base_up = it[0][:, 1].min(), up[0][:, 1].min()
    g = {}
    for name, pts, base in (("K", it[0], base_it), ("Q", it[1], base_it), ("·", up[1], base_up)):
        g[name] = pts - np.array([pts[:, 0].min(), base, 0])
    for d in range(10):
        pts = up[2 + d]
        g[str(d)] = pts - np.array([pts[:, 0].min(), base_up, 0])
    g["cap"] = float(np.ptp(up[0][:, 1]))  # cap height of an upright K
    return g


def _vector_letter(letter: str, index: int | None) -> tuple[np.ndarray, float]:
    """A letter with an arrow over it and a subscript index (none for None), at REF_FS: (points, width)."""
    g = symbol_glyphs()
    cap = g["cap"]
    body = g[letter]
    wl = float(np.ptp(body[:, 0]))
    # the arrow: a thin shaft with a triangular head, over the letter (shifted right: italic)
    x0, x1 = 0.22 * wl, 1.05 * wl
    y, t, hl, hw = cap * 1.2, cap * 0.055, cap * 0.22, cap * 0.13
    arrow = polygon_points([[x0, y - t], [x1 - hl, y - t], [x1 - hl, y - hw], [x1, y],
                            [x1 - hl, y + hw], [x1 - hl, y + t], [x0, y + t]])
    parts, x = [body, arrow], wl + 0.04 * cap
    for ch in ("" if index is None else str(index)):
        d = g[ch] * SUBSCRIPT
        parts.append(d + np.array([x, -0.3 * cap, 0]))
        x += float(np.ptp(d[:, 0])) + 0.04 * cap
    return np.concatenate(parts), x


ROOT_RULE = 3.0  # the root's bar, thickened upward: at a cell's size Typst's rule drew a dim hairline (review 49)


def thicker_rules(pts: np.ndarray, factor: float) -> np.ndarray:
    """`pts` (cubic outlines, 4 points a curve) with each thin horizontal rule (a closed path far wider than
    tall: a root's bar) `factor` times as thick, grown upward from its bottom edge (clear of what is under it)."""
    pts = pts.copy()
    starts = [0] + [k for k in range(4, len(pts), 4) if np.linalg.norm(pts[k] - pts[k - 1]) > 1e-6] + [len(pts)]
    for a, b in zip(starts, starts[1:]):
        path = pts[a:b]
        if np.ptp(path[:, 1]) < 0.1 * np.ptp(path[:, 0]):
            bottom = path[:, 1].min()
            pts[a:b, 1] = bottom + (path[:, 1] - bottom) * factor
    return pts


@lru_cache(maxsize=64)
def denominator_glyphs(text: str) -> dict:
    """`text` (e.g. "√16") as outline points at REF_FS, centred on x = 0 with its bottom at y = 0. A
    root is typeset (Typst math: the radical with its bar over the number, as in the formula), not
    the text font's lone "√"."""
    if text.startswith("√"):
        pts = math_points(f"sqrt({text[1:]})", REF_FS * MATH_PER_TEXT)
        pts = thicker_rules(pts, ROOT_RULE)
    else:
        pts = np.concatenate(text_points(text))
    pts = pts - np.array([(pts[:, 0].min() + pts[:, 0].max()) / 2, pts[:, 1].min(), 0])
    return {"points": pts, "width": float(np.ptp(pts[:, 0])), "height": float(np.ptp(pts[:, 1]))}


@lru_cache(maxsize=4096)
def symbol_outline(key_index: int | None, query_index: int | None) -> dict:
    """K⃗ⱼ·Q⃗ᵢ as outline points at REF_FS: {'key', 'dot', 'query', 'width', 'height', 'mid_y'}; with
    None for both, K⃗·Q⃗ (a cell too small for readable subscripts: its row and column name them)."""
    g = symbol_glyphs()
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
