"""A magnified view of a crowded spot of the embedding space: where a head barely moves a word, E⃗, ΔE⃗ and
E⃗′ end within a few pixels of one another and their cone tips pile into one clump (review 46). The inset
draws the same arrows, clipped to a small square around the spot and scaled by a round factor, in a framed
box elsewhere in the frame, the spot ringed in the box's colour, with its factor written over it.

    inset = TipInset.beside(space.arrows.values(), (E.end_point(), E2.end_point()), theme, "×{k}".format,
                            spots=[...], avoid=[table, notes])
    stage.play(FadeIn(inset))

Pure drawing: the arrows' own points decide what is shown, so the inset shows exactly what the space
draws, only larger.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np
from manim import Circle, DashedLine, Line, Rectangle, Square, VGroup

from .clearance import room_at, strokes_of
from .space_arrow import SpaceArrow
from .text import label

ROUND_FACTORS = (2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60, 80, 100)


def clip_segment(p: np.ndarray, q: np.ndarray, lo: np.ndarray, hi: np.ndarray):
    """The part of the segment p→q inside the box lo..hi (x and y), as (p′, q′), or None (Liang–Barsky)."""
    d = q[:2] - p[:2]
    t0, t1 = 0.0, 1.0
    for k in range(2):
        for edge, sign in ((lo[k], -1.0), (hi[k], 1.0)):
            num = sign * (edge - p[k])
            den = sign * d[k]
            if abs(den) < 1e-12:
                if num < 0:
                    return None
                continue
            t = num / den
            if den > 0:
                t1 = min(t1, t)
            else:
                t0 = max(t0, t)
    if t0 > t1:
        return None
    return p + (q - p) * t0, p + (q - p) * t1


class TipInset(VGroup):
    """`arrows` (SpaceArrows) magnified around the spot spanned by `around` (scene points), in a square box of
    half-size `half` centred at `at`. Parts: `.window` (a ring round the spot, in the box's colour), `.frame`, `.arrows`
    (the magnified ones, in the order given; None for one that misses the window), `.factor` (the round
    magnification), `.factor_label` (over the box), `.names` (the labels of
    `names`, {arrow: mobject}: each beside its magnified arrow's tip, or a difference's middle, on the side
    with more room)."""

    def __init__(self, arrows: Iterable[SpaceArrow], around: Sequence[np.ndarray], theme, factor_text: Callable[[int], str],
                 at: np.ndarray, half: float = 1.0, font_size: float = 22, names: dict | None = None):
        super().__init__()
        arrows = list(arrows)
        pts = np.array([np.asarray(p, float)[:2] for p in around])
        self.spot = centre = (pts.min(axis=0) + pts.max(axis=0)) / 2
        spread = float(np.abs(pts - centre).max())
        # the spot fills about half the box: the factor is the largest round one that keeps it so
        wanted = max(spread * 2.2, 0.015)
        fits = [f for f in ROUND_FACTORS if f * wanted <= half]
        self.factor = factor = fits[-1] if fits else ROUND_FACTORS[0]
        r = half / factor
        at = np.asarray(at, float)
        self.centre = at
        box = Square(side_length=2 * half, stroke_color=theme.text, stroke_width=2)
        box.set_fill(theme.background, opacity=1.0).move_to([at[0], at[1], 0])
        self.frame = box
        # the spot ringed where it is (a window of a few pixels would not be seen): no line across the space
        # to the box, which crossed the arrows' names (review of the inset)
        ring = max(r * 1.5, 0.16)
        window = Circle(radius=ring, stroke_color=theme.text, stroke_width=2.5).move_to([centre[0], centre[1], 0])
        self.window = window
        lo, hi = centre - r, centre + r
        drawn = VGroup()
        self.arrows: list = []
        for a in arrows:
            s, e = a.start_point(), a.end_point()
            part = clip_segment(s, e, lo, hi)
            if part is None or np.linalg.norm(part[1][:2] - part[0][:2]) < 1e-9:
                self.arrows.append(None)
                continue
            p0, p1 = (np.array([at[0] + factor * (p[0] - centre[0]), at[1] + factor * (p[1] - centre[1]), 0.0])
                      for p in part)
            opacity = float(a.shaft.get_stroke_opacity())
            width = float(a.shaft.get_stroke_width())
            if np.allclose(part[1][:2], e[:2]):  # its tip is in the window: drawn with its tip
                m = SpaceArrow(p0, p1, a.color_hex, stroke_width=width, tip_length=0.26, tip_radius=0.09)
            else:
                m = Line(p0, p1, stroke_color=a.color_hex, stroke_width=width)
            m.set_opacity(opacity)
            self.arrows.append(m)
            drawn.add(m)
        self.names = VGroup()
        strokes = strokes_of([m for m in self.arrows if m is not None])
        for a, m in zip(arrows, self.arrows):
            name = (names or {}).get(a)
            if m is None or name is None:
                continue
            p0, p1 = (m.start_point(), m.end_point()) if isinstance(m, SpaceArrow) else (m.get_start(), m.get_end())
            d = (p1 - p0) / max(float(np.linalg.norm(p1 - p0)), 1e-9)
            n = np.array([-d[1], d[0], 0.0])
            anchor = (p0 + p1) / 2 if getattr(a, "_mid", None) is not None else p1
            reach = 0.12 + abs(n[0]) * name.width / 2 + abs(n[1]) * name.height / 2
            spots = [anchor + side * n * reach for side in (1, -1)]
            spots += [anchor + d * (0.12 + abs(d[0]) * name.width / 2 + abs(d[1]) * name.height / 2)]
            inside = [c for c in spots if abs(c[0] - at[0]) + name.width / 2 <= half - 0.05
                      and abs(c[1] - at[1]) + name.height / 2 <= half - 0.05] or spots
            taken = [np.array([o.get_left()[0], o.get_bottom()[1], o.get_right()[0], o.get_top()[1]]) for o in self.names]
            name.move_to(max(inside, key=lambda c: room_at(name, c, strokes, taken)))
            self.names.add(name)
        self.factor_label = label(factor_text(factor), font_size=font_size, color=theme.text)
        self.factor_label.next_to(box, [0, 1, 0], buff=0.1).align_to(box, [-1, 0, 0])  # over the box, clear of the arrows
        # the tie from the ring to the box, for the caller to lay behind everything drawn (the labels it passes
        # under keep their backgrounds): not part of the inset, which is drawn on top (review 47: the ring and the
        # box 400 px apart were not read as one)
        wc, bc = np.array([centre[0], centre[1], 0.0]), [np.array([at[0] + sx * half, at[1] + sy * half, 0.0])
                                                         for sx in (-1, 1) for sy in (-1, 1)]
        corner = min(bc, key=lambda q: float(np.linalg.norm(q - wc)))
        u = (corner - wc) / max(float(np.linalg.norm(corner - wc)), 1e-9)
        self.tie = DashedLine(wc + u * ring, corner, stroke_color=theme.text, stroke_width=1.5, stroke_opacity=0.55,
                              dash_length=0.08)
        self.add(window, box, drawn, self.names, self.factor_label)

    @classmethod
    def beside(cls, arrows, around, theme, factor_text, spots: Sequence[np.ndarray], avoid: Sequence = (),
               strokes: Sequence = (), half: float = 1.0, smaller: Sequence = (), **kwargs) -> "TipInset":
        """The inset at the first of `spots` (box centres) whose box keeps clear of `avoid` (mobjects) and of
        `strokes`; then of `smaller` ((centre, half) pairs: a smaller box where a large one finds no room);
        failing all, the one with the most room."""
        boxes = [np.array([m.get_left()[0], m.get_bottom()[1], m.get_right()[0], m.get_top()[1]]) for m in avoid]
        lines = strokes_of(list(strokes))
        tries = [(np.asarray(s, float), half) for s in spots] + [(np.asarray(c, float), h) for c, h in smaller]
        best, best_room = tries[0], -np.inf
        for s, h in tries:
            probe = Rectangle(width=2 * h, height=2 * h + 0.5)  # and the factor over it
            room = room_at(probe, s + [0, 0.25, 0], lines, boxes)
            if room >= 0.1:
                best = (s, h)
                break
            if room > best_room:
                best, best_room = (s, h), room
        return cls(arrows, around, theme, factor_text, at=best[0], half=best[1], **kwargs)


__all__ = ["TipInset", "clip_segment", "ROUND_FACTORS"]
