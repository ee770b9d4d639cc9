"""The geometry of a 3-D embedding space, without manim: which three directions are the axes, the
basis they span, the camera angles of a view. `scenes.components.space3d` draws with these; plans
use them to know every projected coordinate before anything is drawn.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


DEG = np.pi / 180


def choose_axes(trace, names: Sequence[str] | None = None, n: int = 3) -> tuple[list[str], np.ndarray, list[bool]]:
    """(axis names, basis [d_model, n] of unit columns, named?) for an n-axis space.

    Given `names`, every one must be a named direction of the trace (KeyError otherwise). Without,
    the trace's first `n` named directions are used; missing ones are filled by principal
    directions of the trace's embeddings, orthogonal to the named ones."""
    if names is not None:
        names = list(names)
        if len(names) != n:
            raise ValueError(f"need {n} axis names, got {len(names)}")
        cols = [trace.direction(nm) for nm in names]
        return names, np.stack(cols, axis=1).astype(float), [True] * n
    named = list(trace.directions)[:n]
    cols = [np.asarray(trace.directions[nm], dtype=float) for nm in named]
    out_names, flags = list(named), [True] * len(named)
    if len(cols) < n:
        X = np.asarray(trace.embeddings, dtype=float)
        X = X - X.mean(axis=0)
        if cols:
            Qb, _ = np.linalg.qr(np.stack(cols, axis=1))
            X = X - (X @ Qb) @ Qb.T
        _, _, Vt = np.linalg.svd(X, full_matrices=False)
        k = 0
        while len(cols) < n:
            v = Vt[k]
            v = v * np.sign(v[np.argmax(np.abs(v))])  # deterministic sign
            cols.append(v / np.linalg.norm(v))
            out_names.append(f"PC{k + 1}")
            flags.append(False)
            k += 1
    return out_names, np.stack(cols, axis=1), flags


def pick_axes(trace, vectors, n: int = 3) -> list[str] | None:
    """The `n` named directions along which `vectors` ([k, d_model]) reach furthest (summed
    |projection|): a data-driven axis choice for a scene given no --axes. None when the model
    has fewer than `n` named directions (then `choose_axes` fills in principal directions)."""
    names = list(trace.directions)
    if len(names) < n:
        return None
    P = np.abs(trace.project(np.asarray(vectors, float).reshape(-1, np.asarray(vectors).shape[-1]), names))
    score = P.sum(axis=0)
    order = np.argsort(-score, kind="stable")[:n]
    return [names[k] for k in sorted(order)]


def resolve_axes(trace, requested: Sequence[str] | None, defaults: Sequence[str],
                 vectors: np.ndarray | None = None) -> list[str] | None:
    """The three axis names for a 3-D scene: the user's (checked), else the scene's defaults when
    the model knows them, else the named directions the vectors reach furthest along, else None
    (principal directions; see `choose_axes`). Unknown names are a UserError listing the known."""
    if requested is not None:  # already checked by resolve(); checked again for direct callers
        from ..setting import check_directions

        return list(check_directions(trace, requested, count=3))
    if all(n in trace.directions for n in defaults):
        return list(defaults)
    if vectors is not None:
        return pick_axes(trace, vectors)
    return None


def _about_z(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _about_x(a: float) -> np.ndarray:
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def view_matrix(phi: float, theta: float, gamma: float = 0.0) -> np.ndarray:
    """The rotation manim's ThreeDCamera applies for (phi, theta, gamma) (radians)."""
    m = np.identity(3)
    for r in (_about_z(-theta - np.pi / 2), _about_x(-phi), _about_z(gamma)):
        m = r @ m
    return m


def _wrap(a: float) -> float:
    return abs((a + np.pi) % (2 * np.pi) - np.pi)


def _shortened(vectors: np.ndarray, M: np.ndarray) -> float:
    """The least fraction of its length any of `vectors` keeps on screen under the view `M` (2 × 3)."""
    return float((np.linalg.norm(vectors @ M.T, axis=1) / np.linalg.norm(vectors, axis=1)).min())


def _falsely_along(vectors: np.ndarray, M: np.ndarray, least: float = 10 * DEG) -> bool:
    """Whether an arrow is drawn within `least` of an axis's line on screen that it does not run along in
    the space (its cosine with that axis under 0.9): review 40, the mole's E⃗ = (2.4, 2.4, 2.4) drawn straight
    up the medicine axis read as "already medicine"."""
    axes = np.arctan2(M.T[:, 1], M.T[:, 0])
    for v in vectors:
        s = M @ v
        if np.linalg.norm(s) < 1e-9:
            continue
        a = np.arctan2(s[1], s[0])
        for j in range(3):
            if abs(v[j]) / np.linalg.norm(v) < 0.9 and min(_wrap(a - axes[j]), _wrap(a - axes[j] + np.pi)) < least:
                return True
    return False


def _tip_on_axis_end(tips2d: np.ndarray, axes2d: np.ndarray, longest: float) -> bool:
    """Whether an arrow's tip lands on screen within 0.3 of the longest arrow of an axis's end
    (drawn at 1.12 × it, where the axis's name stands: review 38, "small" under ΔE's tip)."""
    ends = axes2d * 1.12 * longest
    return bool((np.linalg.norm(tips2d[:, None, :] - ends[None, :, :], axis=2) < 0.3 * longest).any())


def choose_view(points: np.ndarray, spread: np.ndarray | None = None,
                default: tuple[float, float] = (70, -55), differences: np.ndarray | None = None) -> tuple[float, float]:
    """Camera angles (phi, theta, radians) under which the arrows `spread` ([k, 3] axis
    coordinates; default `points`) point in clearly different directions on screen (the largest
    smallest angle between any two), with none of `points` (arrows from the origin) foreshortened below
    half its length, no axis seen end-on and no two axes within 40° on screen; among views nearly as good
    as the best (85 % of its separation), the one closest to the default (degrees). Where some of those
    also keep every tip of `points` off the axes' ends and none of `differences` (arrows drawn from one
    tip to another) below half its length, only those are taken; and among the views taken, those that draw
    no arrow of `points` along an axis's line it does not follow in the space."""
    P = np.asarray(points, float)
    P = P[np.linalg.norm(P, axis=1) > 1e-9]
    Q = np.zeros((0, 3)) if differences is None else np.asarray(differences, float).reshape(-1, 3)
    Q = Q[np.linalg.norm(Q, axis=1) > 1e-9]
    D = np.asarray(points if spread is None else spread, float)
    D = D[np.linalg.norm(D, axis=1) > 1e-9]
    longest = float(np.linalg.norm(P, axis=1).max()) if len(P) else 1.0
    scored = []
    for phi in (60, 65, 70, 75, 80):
        for theta in range(-175, 0, 5):
            M = view_matrix(phi * DEG, theta * DEG)[:2]
            if len(P) and _shortened(P, M) < 0.5:
                continue
            axes2d = M.T  # rows: the three unit axes on screen
            if np.linalg.norm(axes2d, axis=1).min() < 0.5:
                continue
            ax_ang = np.arctan2(axes2d[:, 1], axes2d[:, 0])
            if min(_wrap(x - y) for i, x in enumerate(ax_ang) for y in ax_ang[i + 1:]) < 40 * DEG:
                continue
            wished = not ((len(Q) and _shortened(Q, M) < 0.5)
                          or (len(P) and _tip_on_axis_end(P @ M.T, axes2d, longest)))
            apart = not (len(P) and _falsely_along(P, M))
            QD = D @ M.T
            a = np.arctan2(QD[:, 1], QD[:, 0])
            sep = min((_wrap(x - y) for i, x in enumerate(a) for y in a[i + 1:]), default=np.pi)
            # how far apart the `spread` arrows' tips stand, for the longest arrow
            tips = min((float(np.linalg.norm(x - y)) for i, x in enumerate(QD) for y in QD[i + 1:]), default=longest)
            scored.append((wished, float(sep), phi, theta, tips / max(longest, 1e-9), apart))
    best = default
    if scored:
        top = max(sc[1] for sc in scored)
        near = [sc for sc in scored if sc[1] >= 0.85 * top]
        # the wishes narrow the views nearly as good as the best, never trade the arrows' separation away
        # (review 40: taken first, they left E′ (eiffel) and E′ (miniature+eiffel) 16 px apart)
        # (or, where none is, those at 40 % of the best whose tips stand well apart: 0.3 of the longest arrow);
        # within each, the views that draw no arrow along an axis it does not follow go first
        far = [sc for sc in scored if sc[1] >= 0.4 * top and sc[4] >= 0.3]
        taken = [sc for sc in near if sc[0]] or [sc for sc in far if sc[0]] or near
        taken = [sc for sc in taken if sc[5]] or taken
        _, _, phi, theta, _, _ = min(taken, key=lambda sc: (abs(sc[2] - default[0]) + abs(sc[3] - default[1]) / 3,
                                                           sc[2], sc[3]))
        best = (phi, theta)
    return best[0] * DEG, best[1] * DEG
