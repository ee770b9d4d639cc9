"""The lesson machinery: the stage's regions, where a chapter card goes, a lesson's settings."""

from __future__ import annotations

import pytest
from manim import Rectangle, Square

from attention_manim.scenes.lesson import place_clear_of
from attention_manim.scenes.stage import standard_regions


def test_regions_lie_inside_the_frame_and_the_grid_leaves_the_panel_free():
    r = standard_regions(14.222, 8.0)
    full = r["full"]
    for name, box in r.items():
        assert -7.112 <= box.left < box.right <= 7.112 and -4.0 <= box.bottom < box.top <= 4.0, name
        assert box.width > 0.5 and box.height > 0.5, name
    assert r["grid"].right < r["panel"].left  # side by side, not overlapping
    assert r["title"].bottom >= r["sentence"].top - 1e-9
    assert full.contains(Square(1).move_to(full.center))
    assert not full.contains(Square(1).move_to([7, 0, 0]))


def test_region_fit_scales_down_and_aligns():
    box = standard_regions(14.222, 8.0)["panel"]
    wide = Rectangle(width=20, height=1)
    box.fit(wide, align="top_left")
    assert wide.width == pytest.approx(box.width) and box.contains(wide)
    assert wide.get_top()[1] == pytest.approx(box.top) and wide.get_left()[0] == pytest.approx(box.left)


def card():
    return Rectangle(width=3, height=1)


def test_a_card_takes_the_first_free_corner():
    area = standard_regions(14.222, 8.0)["full"]
    c = card()
    place_clear_of(c, [], area)
    assert c.get_right()[0] == pytest.approx(area.right) and c.get_top()[1] == pytest.approx(area.top)
    top_strip = Rectangle(width=14, height=1).move_to([0, 3.3, 0])  # a word row across the top
    c = card()
    place_clear_of(c, [top_strip], area)
    assert c.get_bottom()[1] == pytest.approx(area.bottom) and c.get_right()[0] == pytest.approx(area.right)


def test_a_card_shrinks_before_it_covers_a_picture_and_falls_back_to_the_top_right():
    area = standard_regions(14.222, 8.0)["full"]
    # free only where a card at 0.8 of its size fits: 2.76 units left free at the right
    blockers = [Rectangle(width=10.5, height=8).move_to([-1.15, 0, 0])]
    c = Rectangle(width=3, height=1)
    place_clear_of(c, blockers, area)
    assert c.width == pytest.approx(2.4) and c.get_left()[0] > blockers[0].get_right()[0]
    everything = [Rectangle(width=14, height=8)]
    c = Rectangle(width=3, height=1)
    place_clear_of(c, everything, area)
    assert c.width == pytest.approx(3) and c.get_top()[1] == pytest.approx(area.top)


def test_lesson_descriptions_come_from_the_catalog():
    from attention_manim.scenes.lesson import describe
    from attention_manim.scenes.registry import load_all

    scenes = load_all()
    for name in scenes:
        assert describe(name, "en") and describe(name, "ko") != describe(name, "en")
        assert scenes[name].description == describe(name, "en")


def test_a_lesson_picks_its_head_by_role_and_its_sentence_from_the_model(make_inputs, tracer):
    from attention_manim.scenes.lessons import FLUFFY_BLUE_CREATURE, MOLE_LESSON

    s = FLUFFY_BLUE_CREATURE.lesson.setting(make_inputs())
    assert s.trace.text == "a fluffy blue creature roamed the verdant forest"
    assert s.head_trace().role == "adjective_noun" and s.trace.head(0, 0).name == "adjectives → nouns"
    m = MOLE_LESSON.lesson.setting(make_inputs())
    assert m.head_trace().role == "sense_from_context" and len(m.traces) == 3
    # --head overrides the role; a model without examples asks for a sentence
    assert FLUFFY_BLUE_CREATURE.lesson.setting(make_inputs(head=2)).head.head == 2
    from attention_manim.model.errors import UserError
    from attention_manim.scenes.setting import SceneInputs

    with pytest.raises(UserError, match="no example sentence"):
        FLUFFY_BLUE_CREATURE.lesson.setting(SceneInputs(tracer=tracer))


def test_chapters_and_components_stay_small_enough_to_read():
    """No chapter, plan or lesson class over 300 lines, no component class over 700, no step
    mixins (a scene is a lesson of chapters)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "scenes"
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        limit = 700 if "components" in path.parts else 300
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno - node.lineno < limit, (path.name, node.name)
            if isinstance(node, ast.FunctionDef):
                assert not node.name.startswith("step_"), (path.name, node.name)
