"""Pictures where the video has pictures (scenes/components/pictures.py): each builds from manim shapes
only, at the requested height, in the theme's palette; and in the lessons they sit inside the frame,
clear of the words, titles and numbers around them."""

from __future__ import annotations

import numpy as np
import pytest
from manim import MarkupText, MovingCameraScene, Paragraph, SVGMobject, Text, VMobject, config

from attention_manim.scenes.components.pictures import PICTURES, fluffy_creature, mole_animal, picture_for, tower
from attention_manim.scenes.style import DARK, LIGHT

MAKERS = [fluffy_creature, tower, mole_animal]


def palette(theme) -> set[str]:
    return {v.upper() for v in vars(theme).values() if isinstance(v, str) and v.startswith("#")}


def colours(mob) -> set[str]:
    out = set()
    for m in mob.get_family():
        if not isinstance(m, VMobject) or not m.has_points():
            continue
        if m.get_stroke_width() > 0 and m.get_stroke_opacity() > 0:
            out.add(m.get_stroke_color().to_hex().upper())
        if m.get_fill_opacity() > 0:
            out.add(m.get_fill_color().to_hex().upper())
    return out


def box(m):
    (x0, y0, _), (x1, y1, _) = m.get_corner([-1, -1, 0]), m.get_corner([1, 1, 0])
    return x0, y0, x1, y1


def overlaps(a, b) -> bool:
    ax0, ay0, ax1, ay1 = box(a)
    bx0, by0, bx1, by1 = box(b)
    return ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1


def inside_frame(m) -> bool:
    x0, y0, x1, y1 = box(m)
    w, h = config.frame_width / 2, config.frame_height / 2
    return -w <= x0 and x1 <= w and -h <= y0 and y1 <= h


@pytest.mark.parametrize("make", MAKERS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("theme", [DARK, LIGHT], ids=["dark", "light"])
@pytest.mark.parametrize("height", [0.8, 2.0])
def test_picture_builds_at_height_in_palette_without_text(make, theme, height):
    pic = make(theme, height=height)
    assert pic.height == pytest.approx(height, rel=1e-6)
    shapes = [m for m in pic.get_family() if isinstance(m, VMobject) and m.has_points()]
    assert 3 <= len(shapes) <= 60  # a few dozen shapes at most
    assert not any(isinstance(m, (Text, MarkupText, Paragraph, SVGMobject)) for m in pic.get_family())
    used = colours(pic)
    assert used and used <= palette(theme), used - palette(theme)


def test_fluffy_creature_is_blue_and_takes_a_colour():
    assert DARK.delta_multi.upper() in colours(fluffy_creature(DARK))
    assert DARK.value.upper() in colours(fluffy_creature(DARK, color=DARK.value))


def test_picture_for_names_the_lessons():
    assert set(PICTURES) == {"fluffy_blue_creature", "mole", "eiffel_tower"}
    assert picture_for("fluffy_blue_creature", DARK, height=1.2).height == pytest.approx(1.2)
    assert picture_for("tokens_to_vectors") is None


def lesson_scene(lesson):
    from attention_manim.scenes.lesson import LessonSceneBase

    return type("T", (LessonSceneBase, MovingCameraScene), {"lesson": lesson, "description": ""})


def pixel(frame, point):
    h, w = frame.shape[:2]
    col = int((point[0] / config.frame_width + 0.5) * w)
    row = int((0.5 - point[1] / config.frame_height) * h)
    return frame[row, col, :3].astype(int)


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_flagship_intro_shows_the_creature_clear_of_title_and_words(make_inputs, render_scene, lang):
    from attention_manim.scenes.chapters.framing import Intro
    from attention_manim.scenes.lesson import Lesson

    cls = lesson_scene(Lesson("t", (), intro=Intro("fluffy_blue_creature")))
    scene, frame = render_scene(cls, make_inputs(lang=lang), size=(384, 216))
    drawn = scene.stage.drawn["intro"]
    pic = drawn["picture"]
    on_screen = {id(m) for top in scene.mobjects for m in top.get_family()}
    assert id(pic) in on_screen
    assert inside_frame(pic)
    for other in ("title", "words", "head"):
        assert not overlaps(pic, drawn[other]), other
    # the body's middle is drawn in the creature's blue
    body = pic[1]
    blue = np.array([int(DARK.delta_multi[k:k + 2], 16) for k in (1, 3, 5)])
    assert np.abs(pixel(frame, body.get_center() + np.array([0, -0.3 * body.height, 0])) - blue).max() < 40


def test_mole_lookup_shows_a_mole_beside_the_phrases(make_inputs, render_scene):
    from attention_manim.scenes.chapters.context_space import SameLookup
    from attention_manim.scenes.lesson import Lesson
    from attention_manim.scenes.lessons import MOLE_LESSON
    from attention_manim.scenes.plans.context_space import MOLE

    base = MOLE_LESSON.lesson
    cls = lesson_scene(Lesson("t", (SameLookup(MOLE),), role=base.role, examples=base.examples,
                              max_sentences=base.max_sentences))
    scene, _ = render_scene(cls, make_inputs(), png=False)
    drawn = scene.stage.drawn["same_lookup"]
    pic = drawn["picture"]
    assert inside_frame(pic)
    assert pic.height > 0.3
    for row in drawn["rows"]:
        assert not overlaps(pic, row)
    assert not overlaps(pic, drawn["columns"]) and not overlaps(pic, drawn["note"])
    assert colours(pic) <= palette(DARK)


def test_eiffel_tower_shows_a_tower_clear_of_the_space_and_tables(make_inputs, render_scene):
    from attention_manim.scenes.lessons import EIFFEL_TOWER_LESSON

    scene, _ = render_scene(EIFFEL_TOWER_LESSON, make_inputs(), png=False)
    drawn = scene.stage.drawn["context_space"]
    pic = drawn["picture"]
    assert inside_frame(pic)
    for other in [drawn["space"], drawn["head_note"], *drawn["tables"], *drawn["arcs"]]:
        assert not overlaps(pic, other)
    assert "picture" not in scene.stage.drawn.get("same_lookup", {})


def test_mole_space_chapter_has_no_tower(make_inputs, render_scene):
    from attention_manim.scenes.lessons import MOLE_LESSON

    scene, _ = render_scene(MOLE_LESSON, make_inputs(), png=False)
    assert "picture" in scene.stage.drawn["same_lookup"]
    assert "picture" not in scene.stage.drawn["context_space"]
