"""A thin line from a label to the point it names, drawn only while the label sits far from it."""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, ORIGIN, RIGHT, UP, Line, VMobject

from ..review import LABEL_GAP, LABEL_REACH, RIVAL_MARGIN, box_distance, strokes_crossed
from .clearance import clearance, strokes_of
from .screen_boxes import _segment_hits

# why a label in the space may sit nearer than the lint's gap to a stroke, or its line cross another label
# (said where it does, listed by the lint as declared exceptions)
CROWDED = ("crowded: no place within 1.6 units of its arrow clears every axis and arrow by the lint's gap; "
           "it takes the nearest to clear")
CROWDED_LINE = ("crowded: every place near enough to clear the strokes ties it by a line across another label, "
                "an axis or another arrow")
TIP_GAP = 0.03  # how far short of the point it names a leader ends (it touches the arrow's tip)
LEADER_FROM = 0.75 * LABEL_REACH  # a label further than this from its arrow's tip (or middle) gets a thin line to it


def leader_start(lo, hi, p: np.ndarray) -> tuple[np.ndarray, float]:
    """Where a leader from a label (its box's corners lo, hi) to the point p leaves the label (2-D), and
    how far the label's box is from p. From the side, at the words' height, a line reads as a minus sign
    ("−E⃗"): it leaves from the label's lower corner instead."""
    q = np.array([min(max(p[0], lo[0]), hi[0]), min(max(p[1], lo[1]), hi[1])])
    gap = float(np.linalg.norm(np.asarray(p, float)[:2] - q))
    q[1] = lo[1] if lo[1] < q[1] < hi[1] else q[1]
    return q, gap


def leader_path(lo, hi, p: np.ndarray):
    """Where a leader from a label (its box's corners lo, hi) to the point p runs (its two ends, 2-D), or
    None where the label sits within LEADER_FROM of p (no line): as `leader_line` draws it, for placing
    labels off it."""
    q, gap = leader_start(lo, hi, p)
    return None if gap < LEADER_FROM else (q, np.asarray(p, float)[:2])


def leader_line(lab: VMobject, anchor: VMobject, color: str, rivals=None) -> Line:
    """A thin line from `lab` to the point it names, drawn only while the label sits further than
    LEADER_FROM from it (a crowded space pushes labels out; the line keeps them tied to their arrow),
    or nearer to one of `rivals()` (the other labelled points on screen) than to its own, and only
    as visible as the label."""
    line = Line(ORIGIN, RIGHT, stroke_color=color, stroke_width=1.5, stroke_opacity=0.0)

    def follow(m):
        p = anchor.get_center()
        lo, hi = lab.get_corner(DOWN + LEFT), lab.get_corner(UP + RIGHT)
        start, gap = leader_start(lo, hi, p)
        q = np.array([*start, p[2]])
        glyphs = lab.family_members_with_points()
        seen = max((g.get_fill_opacity() for g in glyphs), default=0.0)
        rival = min((box_distance(lo, hi, r) for r in (rivals() if rivals else ())), default=np.inf)
        if (gap < LEADER_FROM and rival >= gap - RIVAL_MARGIN) or seen < 0.05:
            m.set_stroke(opacity=0.0)
            return
        m.put_start_and_end_on(*trimmed(q, p))
        m.set_stroke(opacity=0.6 * seen)

    line.add_updater(follow)
    return line


def trimmed(q: np.ndarray, p: np.ndarray):
    """A leader's drawn ends between where it leaves its label (q) and the point it names (p): it reaches
    the tip (review 37: a line stopping short of it read as a dash after the words) and stops short of the
    words. 2-D or 3-D points (measured on screen)."""
    u = (p - q) / max(float(np.linalg.norm((p - q)[:2])), 1e-9)
    return q + u * 0.06, p - u * TIP_GAP


def leader_ends(lo, hi, p: np.ndarray):
    """The two ends of the leader `leader_line` draws from a label (its box's corners lo, hi) to the point
    p (2-D), or None where none is drawn (the label within LEADER_FROM of p)."""
    tie = leader_path(lo, hi, p)
    return None if tie is None else trimmed(*tie)


def declare_crowding(lab: VMobject, p: np.ndarray, boxes, strokes, crowded: bool) -> None:
    """For the lint only: where even the best place found leaves `lab` nearer than the lint's gap to one of
    `strokes` (measured as the lint does: glyph outlines against drawn strokes), or ties it by a line
    across another label (`boxes`: (centre, half size)) or a stroke, it says so while it lasts: a declared
    exception the lint lists, not hides."""
    ends = leader_ends(lab.get_corner(DOWN + LEFT), lab.get_corner(UP + RIGHT), p)
    lined = ends is not None and (any(_segment_hits(*ends, b) for b in boxes)
                                  or bool(strokes_crossed(*ends, [s for s in strokes if s not in lab.get_family()])))
    glyphs = [g.points[:, :2] for g in lab.family_members_with_points()]
    glyph_boxes = np.array([[*q.min(axis=0), *q.max(axis=0)] for q in glyphs]) if glyphs else None
    drawn = [sm for sm in strokes_of(strokes) if sm not in lab.get_family()]
    crowded = crowded or (glyph_boxes is not None and clearance(glyph_boxes, drawn) < LABEL_GAP)
    rules = dict(getattr(lab, "lint_exempt", None) or {})
    for rule, why, now in (("label_clear", CROWDED, crowded), ("leader_clear", CROWDED_LINE, lined)):
        if now:
            rules[rule] = why
        elif rules.get(rule) == why:
            del rules[rule]
    lab.lint_exempt = rules
