"""A flat picture of how vectors point relative to one reference vector, at their real angles.

    view = AngleView(head.q[3], [(head.k[1], theme.key, "arrow(K)_2"),
                                 (head.k[0], theme.key, "arrow(K)_1")], theme=theme)
    self.play(view.grow())

High-dimensional vectors cannot be drawn, but the angle between two of them can: the reference
(say a query) lies along +x and every other vector is drawn at its true angle to it,
θ = arccos(cos(reference, other)), computed in the full space; lengths follow the real norms,
except that an arrow shorter than `min_share` of the longest is drawn at that share (a stub with
no visible head reads as a glitch): its direction stays real, and `length_note` (a second line under
the picture, in the chapter's words) says the lengths are then not to scale.
Only angles *to the reference* are real. The first other vector is drawn above; each later one on
the side where its drawn angle to those before it comes nearest their real angle (two keys at 69°
and 108° from a query, 40° apart in the full space, go on the same side, not 177° apart); a small
note under the picture says only the angles to the reference are measured. Each arc carries its real cosine (a `number` of kind "signed2", so tests can
read `.value`).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from manim import (
    DL, DOWN, ORIGIN, RIGHT, UR, AnimationGroup, Arc, Arrow, FadeIn, GrowArrow, VGroup,
)

from ..style import DARK, Theme
from .text import baseline_row, label, number
from .vectors import math


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    if na < 1e-12 or nb < 1e-12:
        return 0.0
    return float(np.clip(a @ b / (na * nb), -1.0, 1.0))


class AngleView(VGroup):
    """Reference arrow along +x; each of `others` (vector, colour, Typst label) at its real angle.

    Parts: `.ref_arrow`, `.ref_label`, `.arrows`, `.labels`, `.arcs`, `.cosines` (number mobjects,
    `.value` = the real cosine), `.angles` (radians), `.note` (the caveat line, or None).
    `sides` optionally fixes each other vector's side (+1 above, -1 below); by default the first is
    above and each later one on the side nearest its real angles to those before it (`nearest_sides`). `note`: a caveat line
    under the drawing, in the chapter's words (from its catalog); None: no line. `number_scale` and
    `note_scale`: the cosines' and the note's size, as a share of `font_size`. `min_share`: the shortest
    drawn arrow, as a share of `extent`; `.stretched` lists the arrows drawn longer than to scale
    ("ref" or the index in `others`), and `length_note` is added under `note` only when it is not empty.
    Every label keeps `label_gap` clear of every cosine (the cosines may be boxed later)."""

    def __init__(self, reference: np.ndarray, others: Sequence[tuple[np.ndarray, str, str]], *,
                 ref_color: str | None = None, ref_label: str | None = None, extent: float = 2.4,
                 theme: Theme = DARK, font_size: float = 24, sides: Sequence[int] | None = None,
                 note: str | None = None, number_scale: float = 0.8, note_scale: float = 0.8,
                 arc_radii: Sequence[float] | None = None, min_share: float = 0.0,
                 length_note: str | None = None, label_gap: float = 0.04):
        super().__init__()
        self.theme = theme
        ref = np.asarray(reference, float)
        norms = [np.linalg.norm(ref)] + [np.linalg.norm(np.asarray(v, float)) for v, _, _ in others]
        unit = extent / max(max(norms), 1e-9)
        ref_color = ref_color or theme.query
        shortest = min_share * extent
        self.stretched: list = []
        drawn = []  # the drawn length of each arrow: the real one, or `shortest` when that is longer
        for k, n in enumerate(norms):
            drawn.append(max(n * unit, shortest))
            if n * unit < shortest - 1e-9:
                self.stretched.append("ref" if k == 0 else k - 1)
        self.ref_arrow = Arrow(ORIGIN, RIGHT * drawn[0], buff=0, color=ref_color, stroke_width=5,
                               max_tip_length_to_length_ratio=0.12)
        self.add(self.ref_arrow)
        self.ref_label = None
        if ref_label:
            self.ref_label = math(ref_label, font_size=font_size * 1.3, color=ref_color)
            self.ref_label.next_to(self.ref_arrow.get_end(), RIGHT, buff=0.12)
            self.add(self.ref_label)
        self.arrows, self.labels, self.arcs, self.cosines, self.angles = VGroup(), VGroup(), VGroup(), VGroup(), []
        self.sides = list(sides) if sides is not None else nearest_sides(ref, [v for v, _, _ in others])
        for k, (v, color, text) in enumerate(others):
            c = cosine(ref, v)
            theta = float(np.arccos(c))
            side = self.sides[k]
            direction = np.array([np.cos(theta), side * np.sin(theta), 0.0])
            end = direction * drawn[k + 1]
            arr = Arrow(ORIGIN, end, buff=0, color=color, stroke_width=5, max_tip_length_to_length_ratio=0.12)
            lab = math(text, font_size=font_size * 1.3, color=color)
            lab.move_to(end + direction * (0.18 + 0.5 * max(lab.width, lab.height)))
            r = (arc_radii[k] if arc_radii is not None else 0.45 + 0.22 * k)
            arc = Arc(radius=r, start_angle=0, angle=side * theta, color=color, stroke_width=2.5,
                      stroke_opacity=0.8)
            cos_num = number(c, "signed2", font_size=font_size * number_scale, color=color)
            cos_word = label("cos =", font_size=font_size * number_scale, color=color)
            # ("cos −0.31" read as the cosine of −0.31, review 53)
            # one baseline: by their boxes, a decimal comma's tail ("−0,31") lifted the digits over "cos" (review 50)
            cos_grp = baseline_row([cos_word, cos_num], buff=0.08)
            # the cosine sits outside its arc: on the bisector when the wedge is wide enough and empty, else
            # just past the far arrow (a wedge with an earlier arrow inside it, a second key on the same side,
            # would put it on that arrow or on the first key's cosine)
            crowded = any(s_ == side and t < theta for t, s_ in zip(self.angles, self.sides))
            at = side * theta / 2 if theta >= 0.7 and not crowded else side * (theta + 0.35)
            b = np.array([np.cos(at), np.sin(at), 0.0])
            reach = r + 0.1 + abs(b[0]) * cos_grp.width / 2 + abs(b[1]) * cos_grp.height / 2
            cos_grp.move_to(b * reach)
            # two keys at close angles: a cosine that would run into a label already placed moves out
            # along its own direction until it clears
            placed = [*self.labels, *(a[1] for a in self.arcs), lab]
            if self.ref_label is not None:
                placed.append(self.ref_label)
            # nor may it sit on the two arrows that bound its wedge
            segments = [(ORIGIN, self.ref_arrow.get_end()), (ORIGIN, end),
                        *((a.get_start(), a.get_end()) for a in self.arrows)]
            for _ in range(30):
                if not any(_boxes_meet(cos_grp, m, label_gap) for m in placed) and \
                        not any(_segment_meets(cos_grp, p, q, label_gap) for p, q in segments):
                    break
                # (past a steep arrow it moves sideways, off the arrow, rather than up along it)
                cos_grp.shift((np.array([np.sign(b[0]), 0.0, 0.0]) if crowded and abs(b[0]) > 0.3 else b) * 0.1)
            self.arrows.add(arr)
            self.labels.add(lab)
            # a label placed now keeps clear of the cosines and the labels placed before it (two keys on one side at
            # close angles: SmolLM2's K⃗ labels met), out along its arrow
            before = [a[1] for a in self.arcs] + list(self.labels[:-1]) + ([self.ref_label] if self.ref_label else [])
            for _ in range(30):
                if not any(_boxes_meet(lab, m, label_gap) for m in before):
                    break
                lab.shift(direction * 0.1)
            self.arcs.add(VGroup(arc, cos_grp))
            self.cosines.add(cos_num)
            self.angles.append(theta)
            arr.cosine, arr.vector = c, np.asarray(v, float)
        self.add(self.arrows, self.labels, self.arcs)
        self.note = None
        lines = [t for t in (note, length_note if self.stretched else None) if t]
        if lines:
            parts = [label(t, font_size=font_size * note_scale, color=theme.dim) for t in lines]
            self.note = parts[0] if len(parts) == 1 else VGroup(*parts).arrange(DOWN, buff=0.12)
            self.note.next_to(VGroup(self.ref_arrow, self.arrows, self.labels), DOWN, buff=0.25)
            self.add(self.note)

    def grow(self, **kwargs) -> AnimationGroup:
        anims = [GrowArrow(self.ref_arrow)]
        if self.ref_label is not None:
            anims.append(FadeIn(self.ref_label))
        for arr, lab, arc in zip(self.arrows, self.labels, self.arcs):
            anims += [GrowArrow(arr), FadeIn(lab), FadeIn(arc)]
        if self.note is not None:
            anims.append(FadeIn(self.note))
        return AnimationGroup(*anims, **kwargs)


def nearest_sides(reference: np.ndarray, others: Sequence[np.ndarray]) -> list[int]:
    """+1 (above) or -1 (below) for each of `others` drawn at its real angle to `reference`: the first
    above, each later one on the side where its drawn angles to those before it miss their real
    angles least (in total, in degrees)."""
    thetas = [float(np.arccos(cosine(reference, v))) for v in others]
    sides: list[int] = []
    for k, v in enumerate(others):
        def miss(side: int) -> float:
            total = 0.0
            for m, s in enumerate(sides):
                apart = abs(side * thetas[k] - s * thetas[m])
                total += abs(min(apart, 2 * np.pi - apart) - np.arccos(cosine(v, others[m])))
            return total
        sides.append(1 if not sides or miss(1) <= miss(-1) else -1)
    return sides


def _boxes_meet(a, b, gap: float = 0.04) -> bool:
    """Whether the bounding boxes of `a` and `b` come within `gap` of each other."""
    return bool(a.get_left()[0] < b.get_right()[0] + gap and b.get_left()[0] < a.get_right()[0] + gap
                and a.get_bottom()[1] < b.get_top()[1] + gap and b.get_bottom()[1] < a.get_top()[1] + gap)


def _segment_meets(box, p, q, gap: float = 0.05, samples: int = 60) -> bool:
    """Whether the segment p→q passes within `gap` of `box`'s bounding box (sampled along it)."""
    lo, hi = box.get_corner(DL) - gap, box.get_corner(UR) + gap
    for t in np.linspace(0.0, 1.0, samples):
        x = np.asarray(p, float) + t * (np.asarray(q, float) - np.asarray(p, float))
        if lo[0] <= x[0] <= hi[0] and lo[1] <= x[1] <= hi[1]:
            return True
    return False


__all__ = ["AngleView", "cosine"]
