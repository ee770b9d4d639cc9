"""Small pictures where the video has pictures: a fluffy blue creature, a tower, a mole.

Our own designs, drawn from manim primitives (no images, no text), in the theme's palette, each a
`VGroup` scaled to the requested `height`. `picture_for(name)` maps a lesson to its picture.
"""

from __future__ import annotations

import numpy as np
from manim import Arc, Circle, Ellipse, Line, Polygon, VGroup

from ..style import DARK, Theme


def _sized(group: VGroup, height: float) -> VGroup:
    group.scale_to_fit_height(height)
    group.move_to([0, 0, 0])
    return group


def fluffy_creature(theme: Theme = DARK, *, color: str | None = None, height: float = 1.5) -> VGroup:
    """A round blue body with a fuzzy outline (a many-pointed star), two eyes and two small feet."""
    body_color = color or theme.delta_multi
    n, r_out, r_in = 28, 1.0, 0.9
    angles = np.linspace(0, 2 * np.pi, 2 * n, endpoint=False) + np.pi / 2
    radii = np.where(np.arange(2 * n) % 2 == 0, r_out, r_in)
    fur = Polygon(*[[r * np.cos(a), r * np.sin(a), 0] for r, a in zip(radii, angles)],
                  color=body_color, fill_color=body_color, fill_opacity=1.0, stroke_width=2)
    feet = VGroup(*(Ellipse(width=0.42, height=0.2, color=body_color, fill_color=body_color, fill_opacity=1.0,
                            stroke_width=2).move_to([x, -0.98, 0]) for x in (-0.36, 0.36)))
    eyes = VGroup()
    for x in (-0.32, 0.32):
        white = Circle(radius=0.22, color=theme.background, fill_color=theme.text, fill_opacity=1.0,
                       stroke_width=1.5).move_to([x, 0.22, 0])
        pupil = Circle(radius=0.1, color=theme.background, fill_color=theme.background, fill_opacity=1.0,
                       stroke_width=0).move_to([x + 0.05, 0.18, 0])
        eyes.add(VGroup(white, pupil))
    mouth = Arc(radius=0.22, start_angle=-np.pi * 0.8, angle=np.pi * 0.6, color=theme.background,
                stroke_width=3).move_to([0, -0.25, 0])
    return _sized(VGroup(feet, fur, eyes, mouth), height)


def tower(theme: Theme = DARK, *, color: str | None = None, height: float = 1.5) -> VGroup:
    """An Eiffel-like lattice: two curved legs meeting at a spire, an arch, platforms and cross-bracing."""
    c = color or theme.embedding
    ys = np.linspace(0.0, 3.0, 9)

    def half_width(y):  # the legs flare out towards the ground
        return 0.08 + 0.92 * (1 - y / 3.0) ** 2.2

    left = [[-half_width(y), y, 0] for y in ys]
    right = [[half_width(y), y, 0] for y in ys]
    legs = VGroup(*(Line(a, b, color=c, stroke_width=3) for pts in (left, right)
                    for a, b in zip(pts[:-1], pts[1:])))
    bracing = VGroup()
    for k in range(len(ys) - 2):  # an X between each pair of levels
        bracing.add(Line(left[k], right[k + 1], color=c, stroke_width=1.2),
                    Line(right[k], left[k + 1], color=c, stroke_width=1.2))
    arch = Arc(radius=0.42, start_angle=0, angle=np.pi, color=c, stroke_width=3).move_to([0, 0.2, 0])
    platforms = VGroup(*(Line([-half_width(y) - 0.08, y, 0], [half_width(y) + 0.08, y, 0], color=c,
                              stroke_width=4) for y in (ys[2], ys[5])))
    spire = Line([0, 3.0, 0], [0, 3.45, 0], color=c, stroke_width=3)
    top = Polygon([-0.1, 2.95, 0], [0.1, 2.95, 0], [0, 3.15, 0], color=c, fill_color=c, fill_opacity=1.0,
                  stroke_width=1)
    return _sized(VGroup(legs, bracing, arch, platforms, spire, top), height)


def mole_animal(theme: Theme = DARK, *, color: str | None = None, height: float = 1.0) -> VGroup:
    """A dark oval body, a pointed snout with a pink nose, small pale paws, a tiny eye."""
    body_color = color or theme.box_fill
    paw_color = theme.embedding
    body = Ellipse(width=2.2, height=1.2, color=theme.dim, fill_color=body_color, fill_opacity=1.0,
                   stroke_width=2)
    snout = Polygon([0.95, 0.3, 0], [1.55, 0.02, 0], [0.95, -0.25, 0], color=theme.dim, fill_color=body_color,
                    fill_opacity=1.0, stroke_width=2)
    nose = Circle(radius=0.1, color=theme.output, fill_color=theme.output, fill_opacity=1.0,
                  stroke_width=0).move_to([1.55, 0.02, 0])
    eye = Circle(radius=0.05, color=theme.text, fill_color=theme.text, fill_opacity=1.0,
                 stroke_width=0).move_to([0.78, 0.2, 0])
    paws = VGroup()
    for x in (0.55, -0.55):
        paw = Ellipse(width=0.42, height=0.22, color=paw_color, fill_color=paw_color, fill_opacity=1.0,
                      stroke_width=1).move_to([x, -0.6, 0])
        claws = VGroup(*(Line([x + dx, -0.66, 0], [x + dx + 0.04, -0.78, 0], color=paw_color, stroke_width=2)
                         for dx in (-0.12, 0.0, 0.12)))
        paws.add(VGroup(paw, claws))
    tail = Arc(radius=0.3, start_angle=np.pi * 0.9, angle=np.pi * 0.4, color=theme.dim,
               stroke_width=3).move_to([-1.2, 0.05, 0])
    return _sized(VGroup(tail, body, snout, nose, eye, paws), height)


PICTURES = {"fluffy_blue_creature": fluffy_creature, "mole": mole_animal, "eiffel_tower": tower}


def picture_for(lesson: str, theme: Theme = DARK, *, height: float = 1.5) -> VGroup | None:
    """The picture of a lesson, or None when it has none."""
    make = PICTURES.get(lesson)
    return make(theme, height=height) if make is not None else None
