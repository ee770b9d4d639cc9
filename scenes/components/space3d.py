"""A 3-D embedding space: three named directions as axes, real vectors as arrows.

    space = EmbeddingSpace(trace, ["animal", "chemistry", "medicine"], fit_to=[E, E2], theme=theme)
    e = space.arrow(E, theme.embedding, "E⃗"); e2 = space.arrow(E2, theme.updated, "E⃗′")
    d = space.difference_arrow(E, E2, theme.delta, "ΔE⃗")
    space.add_to(self); self.play(space.rotation(40 * DEGREES, run_time=6))

Coordinates are real projections: an arrow for a vector v ends at `trace.project(v, names)`
times `space.unit` (scene units per projection unit, chosen once so the longest fitted arrow is
`extent` long: everything stays on screen). `space.to_coords(point)` inverts the drawing (after
any moves, scalings or rotations of the space), so tests can check what is drawn.

Two ways to view it:
- in a 2-D scene (the default, `projected=True`) the space is rotated as a 3-D camera with angles
  (phi, theta) would see it (orthographic); `rotation()` turns it about its own vertical axis,
  which looks like a slow camera orbit, and labels stay upright, following their anchors;
- in a ThreeDScene, `add_to(scene)` undoes that pre-rotation, sets the camera to (phi, theta) and
  keeps labels facing the camera; `rotation()` then animates the camera's theta.

Axis names: the trace's named directions, else principal directions of the embeddings ("PC1"; real
projections too). Labels are placed on every frame: see `_attach`."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from manim import (DEGREES, DL, ORIGIN, OUT, UP, UR, Animation, AnimationGroup, FadeIn, FadeOut, GrowFromPoint, Line,
                   Rotate, ThreeDScene, VectorizedPoint, VGroup, VMobject)

from .. import review
from ..plans.space import choose_axes, pick_axes, view_matrix  # the geometry, without manim
from ..review import LABEL_GAP, clear_of, names_point, segment_crosses
from ..style import DARK, Theme
from .clearance import STROKE_UNIT, StrokeField, box_distances
from .leader import LEADER_FROM, declare_crowding, leader_line, leader_path
from .cone_tip import cone_tip
from .space_arrow import SpaceArrow
from .screen_boxes import _box, _segment_hits, centre_of, reads_as_one
from .text import label
from .vectors import math

AXIS_ROOM = 0.07  # the least room between a label and an axis line's edge (the lint asks for 0.04)
OWN_MARGIN = 0.08  # an arrow's label may sit nearer another arrow's shaft than its own by this much, no more
AXIS_MARGIN = 0.5  # an axis's name sits nearer its axis than any arrow by this much at least
POINT_ROOM = 0.5  # and this far from every point an arrow's label names (review 36: "Paris" by E′'s tip)
OWN_RINGS = 0.45  # how far out (beyond the first place) that rule holds
OWN_TIP_FREE = 0.4  # the end of a label's own arrow by its tip, where the label may stand (units), off the tip
TIP_ROOM = 0.1  # and more from another arrow's tip ("파리" by the tip of E′ read as that arrow's name)
ALONG = (0.5, 0.4, 0.6, 0.3, 0.7)  # where along a difference's shaft its name is tried, beside it (fractions)
TURNS = (0, *(s * a for a in range(15, 181, 15) for s in (1, -1) if s * a != -180))  # nearest sides first
DEFAULT_PHI = 70 * DEGREES
DEFAULT_THETA = -55 * DEGREES


class EmbeddingSpace(VGroup):
    """Axes for three directions plus arrows; see the module doc.

    Parts: `.axis_lines`, `.axis_labels` (in `.labels`, kept out of the rotating group),
    `.arrows` (name -> SpaceArrow), `.names`, `.basis`, `.named`, `.unit`."""

    def __init__(self, trace, axes: Sequence[str] | None = None, *, fit_to: np.ndarray | Sequence | None = None,
                 extent: float = 2.4, theme: Theme = DARK, phi: float = DEFAULT_PHI,
                 theta: float = DEFAULT_THETA, projected: bool = True, font_size: float = 24,
                 axis_color: str | None = None, negative: float | Sequence[float] | str = 1.0,
                 axis_text: Sequence[str] | None = None):
        """`axis_text`: the words shown at the axes' ends (the names in the viewer's language; by
        default the direction names themselves). `negative`: how much of each axis's negative half is drawn, as a fraction of the positive
        half (one number for all three axes, or one per axis); "auto" draws just enough to reach
        the most negative fitted coordinate on each axis (a short stub when none is negative)."""
        super().__init__()
        self.trace = trace
        self.theme = theme
        self.font_size = font_size
        self.phi, self.theta = phi, theta
        self.names, self.basis, self.named = choose_axes(trace, axes)
        self.extent = extent
        pts = np.zeros((1, 3)) if fit_to is None else self.coords(np.asarray(fit_to, float).reshape(-1, self.basis.shape[0]))
        longest = float(np.linalg.norm(pts, axis=1).max()) if len(pts) else 0.0
        self.unit = extent / longest if longest > 1e-9 else 1.0  # scene units per projection unit

        # tracked frame: origin and the three model unit points (transform with the group)
        self._origin = VectorizedPoint(ORIGIN)
        self._units = [VectorizedPoint(e) for e in np.identity(3)]
        self.add(self._origin, *self._units)

        axis_color = axis_color or theme.dim
        L = extent * 1.12
        if isinstance(negative, str):
            if negative != "auto":
                raise ValueError(f"negative must be a number, three numbers or 'auto', not {negative!r}")
            lowest = np.minimum(pts.min(axis=0), 0.0) if len(pts) else np.zeros(3)
            negative = np.clip(-lowest * self.unit / L + 0.12, 0.15, 1.0)
        neg = np.broadcast_to(np.asarray(negative, dtype=float), (3,))
        self.negative = neg
        self.axis_lines = VGroup(*(Line(-L * f * e, L * e, stroke_color=axis_color, stroke_width=2)
                                   for f, e in zip(neg, np.identity(3))))
        self._axis_ends = [VectorizedPoint(L * e) for e in np.identity(3)]
        self.add(self.axis_lines, *self._axis_ends)
        self.labels = VGroup()
        self._placing = False  # inside a label's placement (see _attach)
        self.axis_labels = VGroup()
        self.label_bounds: tuple[float, float, float, float] | None = None  # (x0, y0, x1, y1) labels stay in
        self.avoid: list = []  # mobjects beside the space (notes) that labels placed from now on keep off
        shown = list(axis_text) if axis_text is not None else self.names
        for name, end, line, is_named in zip(shown, self._axis_ends, self.axis_lines, self.named):
            lab = label(name, font_size=font_size, color=theme.text if is_named else theme.dim)
            self._attach(lab, end, away_from=self._origin, own_axis=True)
            # the lint checks it stands nearer its axis's end than any arrow's tip, and nearer its axis than another
            names_point(lab, end, reach=False, line=line)
            self.axis_labels.add(lab)
        self.arrows: dict[str, SpaceArrow] = {}
        self.projected = projected
        self.view = view_matrix(phi, theta)
        if projected:
            self.apply_matrix(self.view, about_point=ORIGIN)
            self._place_labels()

    # --- coordinates --------------------------------------------------------------------------
    def coords(self, vectors: np.ndarray) -> np.ndarray:
        """Projections of d_model vectors on the axes ([..., 3]); equals trace.project for named axes."""
        return np.asarray(vectors, dtype=float) @ self.basis

    def _frame(self) -> tuple[np.ndarray, np.ndarray]:
        o = centre_of(self._origin)
        M = np.stack([centre_of(u) - o for u in self._units], axis=1)  # columns: model axes on screen
        return o, M

    def point(self, coords: np.ndarray) -> np.ndarray:
        """Scene point of projection coordinates `coords` (in projection units)."""
        o, M = self._frame()
        return o + M @ (np.asarray(coords, float) * self.unit)

    def to_coords(self, point: np.ndarray) -> np.ndarray:
        """Inverse of `point`: projection coordinates of a scene point of this space's drawing."""
        o, M = self._frame()
        return np.linalg.solve(M, np.asarray(point, float) - o) / self.unit

    def drawn_angle(self, a: SpaceArrow, b: SpaceArrow) -> float:
        """The angle in degrees between two arrows as drawn on screen (after the 3-D view's projection):
        it can differ from the real one, since three axes keep only part of each vector."""
        u = (a.end_point() - a.start_point())[:2]
        v = (b.end_point() - b.start_point())[:2]
        nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
        if nu < 1e-9 or nv < 1e-9:
            return 0.0
        return float(np.degrees(np.arccos(np.clip(u @ v / (nu * nv), -1.0, 1.0))))

    # --- arrows and labels --------------------------------------------------------------------
    def shown_arrows(self, own: SpaceArrow | None = None) -> list:
        """The arrows drawn in the space now (grown into it and not faded out), but `own`."""
        return [a for a in self.__dict__.get("arrows", {}).values() if a is not own and a in self.submobjects
                and a.shaft.get_stroke_opacity() >= 0.08]

    def _attach(self, lab: VMobject, anchor: VMobject, away_from: VMobject | None = None, buff: float = 0.22,
                across: SpaceArrow | None = None, own: SpaceArrow | None = None, own_axis: bool = False):
        """Keep `lab` upright next to `anchor`, pushed away from `away_from` on screen (or, for an
        arrow given as `across`, sideways off the arrow on the side away from `away_from`). If it
        would overlap a label placed before it or come within AXIS_ROOM of an axis line, the other
        sides of the anchor are tried (turning 15° at a time, nearest first), then the same a little
        further out, ring after ring; failing all, it slides out of the earlier labels. Placement reruns only
        when the anchors, the reference points or the label itself have moved."""
        earlier = list(self.labels)
        memo: dict = {}

        def place(m, anchor=anchor, away_from=away_from, across=across, earlier=earlier):
            # skip the (costly) placement when nothing it depends on has moved since last time:
            # this label's anchor, the earlier labels' anchors, the reference points, its own box.
            # The earlier labels are placed first: updaters run in no set order, and a label placed
            # against where an axis label was a moment ago lands on top of it once that one moves.
            # Only the outermost call walks them: the earlier labels' lists are prefixes of this
            # one's, so a nested walk would redo the same work (exponentially, label after label)
            if not self._placing:
                self._placing = True
                try:
                    for o in earlier:
                        o.update()
                finally:
                    self._placing = False
            shown = [o for o in earlier if not getattr(o, "gone", False)]  # a faded-out label holds no place (review 37)
            refs = [anchor, *(getattr(o, "_space_anchor", o) for o in shown)]
            if away_from is not None:
                refs.append(away_from)
            others = self.shown_arrows(own)
            # the labels placed after this one, of arrows shown now: kept clear too (review 34: an earlier
            # label re-placed as a later arrow grew, onto that arrow's label: "E⃗" over "E′ (One mole)")
            # (an axis's name keeps its place by its axis's end: the arrows' labels make way, with a line if need be)
            later = [] if own_axis else [a.label for a in others if a.label is not None and a.label is not m
                                         and not getattr(a.label, "gone", False) and not any(a.label is o for o in earlier)]
            key = np.concatenate([centre_of(r) for r in refs]
                                 + ([across.start_point(), across.end_point()] if across is not None else [])
                                 + [p for a in others for p in (a.start_point(), a.end_point())]
                                 # where each was last placed (read from its box, it cost renders a third of their time)
                                 + [getattr(lab, "_placed_at", np.zeros(3)) for lab in later])
            pts = m.get_all_points()
            box = np.concatenate([pts.min(axis=0), pts.max(axis=0)]) if len(pts) else np.zeros(6)
            # (to a millionth: re-placing a label in the same spot drifts it in the last bits, and an exact
            # test then re-placed every label on every frame of a still picture)
            if (memo and key.shape == memo["key"].shape and np.allclose(key, memo["key"], rtol=0, atol=1e-6)
                    and np.allclose(box, memo["box"], atol=1e-9)):
                return
            p = centre_of(anchor)
            if across is not None:
                t = across.end_point() - across.start_point()
                d = np.array([-t[1], t[0], 0.0])
                if away_from is not None and np.dot(d[:2], (p - centre_of(away_from))[:2]) < 0:
                    d = -d
            elif away_from is not None:
                d = p - centre_of(away_from)
                d[2] = 0
            else:
                d = UP.astype(float)
            n = np.linalg.norm(d[:2])
            d = d / n if n > 1e-6 else UP.astype(float)
            half = np.array([m.width / 2, m.height / 2, 0])

            def beside(u):
                return p + u * (buff + abs(u[0]) * half[0] + abs(u[1]) * half[1])

            # measured once: each try below reads them all (the labels placed before, and what the
            # caller asked the labels to keep off: notes beside the space)
            boxes = ([_box(o) for o in shown] + [_box(o) for o in later]
                     + [_box(o) for o in self.avoid if o.has_points() or o.submobjects])
            # the axis lines, and the other arrows, each a segment as wide as its shaft, or its tip where wider
            field = StrokeField().add_strokes(list(self.axis_lines))
            for a in others:
                field.add_segments(np.array([[a.start_point()[:2], a.end_point()[:2]]]),
                                     0.5 * STROKE_UNIT * float(a.shaft.get_stroke_width()))
            for a in [*others, *([own] if own is not None else [])]:  # another's tip: a label by it names it; own: off it
                field.add_segments(np.array([[a.tip.get_center()[:2], a.end_point()[:2]]]),  # (review 49: ΔE⃗ on its tip)
                                     0.5 * max(a.tip.width, a.tip.height) + (TIP_ROOM if a is not own else 0.0))
            if own is not None and (run := float(np.linalg.norm((own.end_point() - own.start_point())[:2]))) > OWN_TIP_FREE:
                s0, s1 = own.start_point()[:2], own.end_point()[:2]  # its own shaft short of its tip (review 48, pt)
                field.add_segments(np.array([[s0, s1 - (s1 - s0) / run * OWN_TIP_FREE]]),
                                   0.5 * STROKE_UNIT * float(own.shaft.get_stroke_width()))

            bounds = self.label_bounds
            # an arrow's label must read as its own arrow's: nearer its shaft than any other arrow's
            # (an axis name likewise: nearer its axis than any arrow; review 36: "Paris" by E′'s tip read as its name)
            mine = theirs = None
            rivals = [[a.start_point()[:2], a.end_point()[:2]] for a in others]
            if own_axis:  # and an axis's name, nearer its axis than any other (review 37: "chemistry" against skin's)
                rivals += [[line.get_start()[:2], line.get_end()[:2]] for line, end in zip(self.axis_lines, self._axis_ends)
                           if end is not anchor]
            if (own is not None and others) or (own_axis and rivals):
                ends = (own.start_point(), own.end_point()) if own is not None else (centre_of(away_from), p)
                mine = StrokeField().add_segments(np.array([[ends[0][:2], ends[1][:2]]]), 0.0)
                theirs = StrokeField().add_segments(np.array(rivals), 0.0)
                # the points the arrows' labels name (a tip, a difference's middle): an axis's name keeps off them
                points = np.array([centre_of(a._mid if getattr(a, "_mid", None) is not None else a._end)[:2] for a in others])

            # (and the axes: review 37, ΔE⃗'s line across the medicine axis read as a move along it)
            shafts = np.array([[a.start_point()[:2], a.end_point()[:2]] for a in others]
                              + ([] if own_axis else [[ln.get_start()[:2], ln.get_end()[:2]] for ln in self.axis_lines])
                              ).reshape(-1, 2, 2)

            lines = [t for a in others if a.label is not None and a.label is not m and not a.label.gone
                     and (t := leader_path(a.label.get_corner(DL), a.label.get_corner(UR), centre_of(a.label._space_anchor)))]

            def too_near(c, loose=False):  # on or beside a label placed before, or across another's line (review 37)
                return any(reads_as_one(c, half, b, loose) for b in boxes) or any(_segment_hits(*t, (c, half)) for t in lines)

            strict = [True]  # the first rings only: further out, the old rule (a leader line ties it)

            def room(c, loose=False):
                """How far a label centred at c is from the nearest axis line's edge, or None where it
                is out of bounds (the space's part of the frame) or on a label placed before (`loose`: see reads_as_one)."""
                box = np.array([c[0] - half[0], c[1] - half[1], c[0] + half[0], c[1] + half[1]])
                if bounds is not None and (box[0] < bounds[0] or box[1] < bounds[1] or box[2] > bounds[2]
                                           or box[3] > bounds[3]):
                    return None
                # (side by side, a word's gap apart, two labels read as one: "small E′ (miniature+eiffel)")
                if too_near(c, loose):
                    return None
                # far enough out to be tied by a leader line (as leader_line starts it): a line across a label splits it
                # (review 36: "E′ | (Eiffel)"), one across another arrow names that one (37): taken when all others are
                tie = leader_path(box[:2], box[2:], p)
                end = None if tie is None else p[:2] - 0.08 * (p[:2] - tie[0]) / max(float(np.linalg.norm(p[:2] - tie[0])), 1e-9)
                if tie is not None and (any(_segment_hits(*tie, b) for b in boxes) or segment_crosses(tie[0], end, shafts)):
                    clear = field.room(box)  # (still better than words struck through by a line)
                    return LABEL_GAP - 0.001 if clear >= LABEL_GAP else clear - 1.0
                if strict[0] and mine is not None:  # reads as another's name: the least amiss, if any, is taken
                    amiss = mine.room(box) + (AXIS_MARGIN if own_axis else -OWN_MARGIN) - theirs.room(box)
                    if own_axis and len(points):
                        amiss = max(amiss, POINT_ROOM - float(box_distances(box[None], points).min()))
                    if amiss > 0:
                        return min(field.room(box), 0.5 * AXIS_ROOM) - 0.01 * min(amiss, 1.0)
                return field.room(box)

            def turned(turn):
                a = np.radians(turn)
                return np.array([d[0] * np.cos(a) - d[1] * np.sin(a), d[0] * np.sin(a) + d[1] * np.cos(a), 0.0])

            # clear of the labels placed before and of the axis lines (a label resting on an axis reads
            # as crossed out: AXIS_ROOM between its box and each line's edge): the preferred side first,
            # then the other sides of the anchor (nearest turns first), then the same a little further
            # out, ring after ring: the nearest clear place, not one far along a single direction
            centre = beside(d)
            best, best_room = None, -1.0
            r = room(centre)
            crowded = False
            # the spot it found last time, while still clear: it stays there (no search, and no jump). Clear of
            # its own arrow too, which the search keeps off by going round the tip (review 35: a spot kept as
            # the arrow turned put "E⃗₄" on its own shaft)
            kept = p + memo["offset"] if memo.get("offset") is not None and (r is None or r < AXIS_ROOM) else None
            if kept is not None and own is not None:
                shaft = StrokeField().add_segments(np.array([[own.start_point()[:2], own.end_point()[:2]]]),
                                                   0.5 * STROKE_UNIT * float(own.shaft.get_stroke_width()))
                if shaft.room(np.array([*(kept[:2] - half[:2]), *(kept[:2] + half[:2])])) < buff:
                    kept = None
            # (room None: out of bounds or on a label); a spot far enough to need a line: kept only while no nearer one clears
            far = kept is not None and np.linalg.norm(np.maximum(np.abs(kept - p)[:2] - half[:2], 0)) >= LEADER_FROM
            kept = None if kept is None or far or (room(kept) or 0.0) < AXIS_ROOM else kept
            memo["offset"] = None if kept is None else kept - p
            if kept is not None:
                centre = kept
            elif r is None or r < AXIS_ROOM:
                found = None
                # a difference's name: first beside its shaft anywhere along it, no line needed (its anchor moves there;
                # review 37: ΔE⃗ tied to its middle by a line across the other arrows, or on its own tip)
                for t, side in ((t, side) for t in ALONG for side in (1, -1)) if across is not None else ():
                    p = across.start_point() + t * (across.end_point() - across.start_point())
                    if (room(c := beside(side * d), True) or -1.0) >= LABEL_GAP:  # clear by the lint's gap
                        found = c
                        anchor.move_to(p)
                        break
                p = centre_of(anchor)
                for extra in (0.0, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0, 1.3, 1.6) if found is None else ():
                    if own_axis and extra > OWN_RINGS:  # an axis's name stays by its axis's end: the least amiss there
                        break
                    strict[0] = own_axis or extra <= OWN_RINGS
                    for turn in TURNS:
                        u = turned(turn)
                        c = beside(u) + u * extra
                        r = room(c)
                        if r is None:
                            continue
                        if r >= AXIS_ROOM:
                            found = c
                            break
                        if r > best_room:
                            best, best_room = c, r
                    if found is not None:
                        break
                crowded = found is None and best is not None
                if found is not None:
                    centre = found
                    memo["offset"] = found - p
                elif best is not None:  # nowhere clear of the axes: the place nearest to clear
                    centre = best
                else:
                    for _ in range(40):  # slide out of earlier labels
                        if not too_near(centre):
                            break
                        centre = centre + d * 0.12
            if self.label_bounds is not None:  # never past the frame's edge, even when slid out
                x0, y0, x1, y1 = self.label_bounds
                centre[0] = min(max(centre[0], x0 + half[0]), max(x1 - half[0], x0 + half[0]))
                centre[1] = min(max(centre[1], y0 + half[1]), max(y1 - half[1], y0 + half[1]))
            m.move_to(centre)
            m.set_z(p[2])
            m._placed_at = np.array(m.get_center())
            # measured as the lint measures it (glyph outlines against drawn strokes): where even the
            # best place found leaves less than the lint's gap, the label says so while it lasts
            # (listed by the lint as a declared exception, not hidden). Only the lint reads it, and
            # measuring every glyph on every frame of a turn was a tenth of a render: so only then
            if review.watching():
                shaft = [own.shaft] if own is not None and own in self.shown_arrows() else []
                declare_crowding(m, p, boxes, [*self.axis_lines, *others, *shaft], crowded)
            pts = m.get_all_points()
            memo["key"] = key
            memo["box"] = np.concatenate([pts.min(axis=0), pts.max(axis=0)]) if len(pts) else np.zeros(6)
        lab._space_anchor = anchor
        # the lint checks it (scenes/review.py, label_clear): the axes and every other arrow drawn
        # and its own arrow's shaft (review 35: "E⃗₄" kept a spot on it as the arrow turned)
        clear_of(lab, lambda: [*self.axis_lines, *self.shown_arrows(own),
                               *([own.shaft] if own is not None and own in self.shown_arrows() else [])])
        lab.add_updater(place)
        place(lab)
        self.labels.add(lab)
        return lab

    def _place_labels(self):
        for lab in self.labels:
            lab.update()

    def _make_label(self, text: str | VMobject | None, color: str, typst: bool) -> VMobject | None:
        if not isinstance(text, str) or not text:  # none, or a label built by the caller (words in two fonts)
            return None if text is None or isinstance(text, str) else text
        if typst:
            return math(text, font_size=self.font_size * 1.3, color=color)
        return label(text, font_size=self.font_size, color=color)

    def arrow(self, vector: np.ndarray, color: str | None = None, text: str | None = None, *,
              name: str | None = None, typst: bool = True, stroke_width: float = 5,
              attach: bool = True) -> SpaceArrow:
        """Arrow from the origin to the projection of `vector` (a real d_model vector). `text` is a
        label (Typst math source such as "arrow(E)'" when `typst`, else plain text). With
        `attach=False` the arrow is not yet part of the space: play `grow_arrow(a)`, which adds it.
        `text` may also be a ready-made mobject (e.g. words set in two fonts)."""
        color = color or self.theme.embedding
        c = self.coords(vector)
        a = SpaceArrow(self.point(np.zeros(3)), self.point(c), color, stroke_width=stroke_width)
        a.vector, a.coords = np.asarray(vector, float), c
        self._register(a, name or text or f"arrow{len(self.arrows)}", text, color, typst, attach,
                       away_from=self._origin)
        return a

    def difference_arrow(self, from_vector: np.ndarray, to_vector: np.ndarray, color: str | None = None,
                         text: str | None = None, *, name: str | None = None, typst: bool = True,
                         stroke_width: float = 4, attach: bool = True) -> SpaceArrow:
        """Arrow from the tip of `from_vector`'s arrow to the tip of `to_vector`'s (the ΔE arrow)."""
        color = color or self.theme.delta
        c0, c1 = self.coords(from_vector), self.coords(to_vector)
        a = SpaceArrow(self.point(c0), self.point(c1), color, stroke_width=stroke_width, tip_length=0.18,
                       tip_radius=0.065)
        a.vector = np.asarray(to_vector, float) - np.asarray(from_vector, float)
        a.coords = c1 - c0
        a._mid = mid = VectorizedPoint((a.start_point() + a.end_point()) / 2)
        a.add(mid)
        self._register(a, name or text or f"arrow{len(self.arrows)}", text, color, typst, attach, anchor=mid,
                       away_from=self._origin)
        return a

    def _register(self, a: SpaceArrow, key: str, text, color, typst, attach, anchor=None, away_from=None):
        self.arrows[key] = a
        if attach:
            self.add(a)
        lab = self._make_label(text, color, typst)
        a.label = lab
        if lab is not None:
            lab.gone = not attach  # shown when the arrow grows (grow_arrow)
            self._attach(lab, anchor or a._end, away_from=away_from, buff=0.15,
                         across=a if anchor is not None else None, own=a)
            # not part of the arrow: a dimmed or turning arrow would dim or turn it with the arrow
            # tied by a line also where it sits nearer another labelled arrow's point than its own
            a.leader = leader_line(lab, anchor or a._end, color, rivals=lambda a=a: [
                (b._mid if getattr(b, "_mid", None) is not None else b._end).get_center()
                for b in self.arrows.values() if b is not a and b.label is not None and b in self.submobjects])
            names_point(lab, anchor or a._end, a.leader)  # the lint checks it is near, or tied by the line

    def grow_arrow(self, a: SpaceArrow, **kwargs) -> AnimationGroup:
        """The arrow grows from its start (its label fades in) and joins the space."""
        if a not in self.submobjects:
            self.add(a)
        anims = [GrowFromPoint(a, a.start_point())]
        if a.label is not None:
            a.label.gone = False
            anims += [FadeIn(a.label), FadeIn(a.leader)]
        return AnimationGroup(*anims, **kwargs)

    def fade_out_label(self, a: SpaceArrow) -> AnimationGroup:
        """The arrow's label leaves the frame, and the line tying it to the arrow with it; the other labels
        may take its place from now on (a label faded out is whole again, only off the scene)."""
        a.label.gone = True
        return AnimationGroup(FadeOut(a.label), FadeOut(a.leader))

    # --- scene helpers ------------------------------------------------------------------------
    def add_to(self, scene) -> "EmbeddingSpace":
        """Add the space and its labels to `scene` (2-D or ThreeDScene; see the module doc)."""
        if isinstance(scene, ThreeDScene):
            if self.projected:
                self.apply_matrix(self.view.T, about_point=self._origin.get_center())
                self.projected = False
            scene.set_camera_orientation(phi=self.phi, theta=self.theta)
            scene.add(self)
            for lab in self.labels:
                lab.clear_updaters()
            self._place_labels_3d()
            scene.add_fixed_orientation_mobjects(*self.labels)
        else:
            scene.add(self, self.labels)
        return self

    def _place_labels_3d(self):
        # labels next to their anchors in model space (the camera keeps them facing it)
        o = self._origin.get_center()
        for lab, end in zip(self.axis_labels, self._axis_ends):
            d = end.get_center() - o
            d = d / np.linalg.norm(d)
            lab.move_to(end.get_center() + d * 0.35 + (OUT * 0.2 if abs(d[2]) < 0.9 else 0))
        for a in self.arrows.values():
            if a.label is not None:
                anchor = getattr(a, "_mid", a._end).get_center()
                a.label.move_to(anchor + OUT * 0.25)

    def rotation(self, angle: float = 30 * DEGREES, scene=None, **kwargs) -> Animation:
        """A slow orbit: in a 2-D scene the space turns about its vertical (third) axis; in a
        ThreeDScene (pass `scene`) the camera's theta moves by `angle`."""
        kwargs.setdefault("run_time", 4)
        if isinstance(scene, ThreeDScene):
            tracker = scene.camera.theta_tracker
            return tracker.animate(**kwargs).set_value(tracker.get_value() + angle)
        o, M = self._frame()
        axis = M[:, 2] / np.linalg.norm(M[:, 2])
        return Rotate(self, angle=-angle, axis=axis, about_point=o, **kwargs)  # the camera's +angle: the space's -angle


__all__ = ["EmbeddingSpace", "SpaceArrow", "choose_axes", "pick_axes", "view_matrix", "cone_tip"]

