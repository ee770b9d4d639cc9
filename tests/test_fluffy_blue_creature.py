"""The flagship is a lesson of the one-head chapters on one canvas: they play in order, hand their
pictures on (query columns → the grid's top row, keys → its side, one grid from scores to values,
values weighed inside the focus column) and every number they draw is the trace's."""

from __future__ import annotations

import re

import numpy as np
import pytest
from manim import tempconfig

from .conftest import numbers_in, tiny_config
from .test_one_head_qkv import assert_shows, expected_answers, expected_focus

SENTENCE = "a fluffy blue creature roamed the verdant forest"
ORDER = ["intro", "query", "key", "dot_products", "softmax", "masking", "values", "formula", "outro"]


@pytest.fixture(scope="module")
def flagship(toy_model, tracer, tmp_path_factory):
    from attention_manim.scenes.lessons import FLUFFY_BLUE_CREATURE
    from attention_manim.scenes.setting import SceneInputs

    scenes = {}
    for lang in ("en", "ko"):
        with tempconfig(tiny_config(tmp_path_factory.mktemp(f"flagship-{lang}"), (160, 90))):
            scene = FLUFFY_BLUE_CREATURE(SceneInputs(tracer=tracer, model=toy_model.info, lang=lang))
            scene.render()
            scene.final_frame = (scene.camera.frame.get_center().copy(), scene.camera.frame.width)
        scenes[lang] = scene
    return scenes


def test_the_flagship_lesson_is_made_of_the_one_head_chapters():
    from attention_manim.scenes.chapters.dot_products import DotProducts
    from attention_manim.scenes.chapters.query import Query
    from attention_manim.scenes.lessons import FLUFFY_BLUE_CREATURE

    lesson = FLUFFY_BLUE_CREATURE.lesson
    assert [c.key for c in lesson.all_chapters()] == ORDER
    assert isinstance(lesson.chapters[0], Query) and isinstance(lesson.chapters[2], DotProducts)
    # the default sentence and head come from the model: its example and its adjective→noun head
    assert lesson.examples == ("fluffy_blue_creature",) and lesson.role == "adjective_noun"


@pytest.mark.render
def test_flagship_plays_every_chapter_in_order_on_real_numbers(flagship, tracer):
    scene = flagship["en"]
    assert scene.chapters_played == ORDER
    center, width = scene.final_frame
    assert np.allclose(center, 0) and width == pytest.approx(14.222, abs=0.01)
    tr = tracer(SENTENCE)
    head = tr.head(0, 0)
    i = expected_focus(tr, None, head)
    assert tr.tokens[i] == "creature" and scene.plans[1].focus == i
    drawn = scene.stage.drawn
    assert_shows(drawn["query"]["product_result"], head.q[i])
    for j, col in drawn["query"]["q_columns"].items():
        assert_shows(col, head.q[j])
    assert [b.answer_for for b in drawn["key"]["answers"]] == expected_answers(head, i)
    for (qi, kj), m in drawn["dot_products"]["scores"].items():
        assert m.value == pytest.approx(float(head.scores[qi, kj]), abs=1e-4)
    assert drawn["softmax"]["strips"]
    for strip in drawn["softmax"]["strips"]:  # the real weights of that query, key by key
        for k, m in zip(strip.shown_keys, strip.weight_mobs):
            assert m.value == pytest.approx(float(head.pattern[strip.query, k]), abs=1e-6)
    assert_shows(drawn["values"]["product"].result, head.delta_e[i])
    assert_shows(drawn["values"]["updated_column"], tr.updated(0, 0)[i])
    assert len(scene.caption_log) >= 30 and all(text.strip() for text, _ in scene.caption_log)
    for m in scene.mobjects:
        for n in numbers_in(m):
            assert np.isfinite(n.value) or n.shown == "−∞"


@pytest.mark.render
def test_flagship_hands_its_pictures_on(flagship):
    """One word row from query to key; the query and key columns become the grid's labels; one grid
    object from the scores through softmax, masking and the values."""
    drawn = flagship["en"].stage.drawn
    grid = drawn["dot_products"]["grid"]
    assert drawn["softmax"]["grid"] is grid and drawn["masking"]["grid"] is grid
    assert drawn["values"]["grid"] is grid and drawn["formula"]["grid"] is grid
    # every query column became its label across the top, every key its label down the side
    # (where exactly: tests/test_one_head_grid.py, on a lesson that stops after the scores)
    morphed = drawn["dot_products"]["morphed"]
    n = len(SENTENCE.split())
    assert sorted(morphed["query"]) == list(range(n)) and sorted(morphed["key"]) == list(range(n))
    assert drawn["key"]["rows"] and flagship["en"].stage.words is None  # the row went into the grid


def test_a_chapter_card_keeps_what_names_the_pictures_it_stands_over(flagship):
    """Review 52: the card before softmax cleared the key to the score dots, the card before masking the
    weights' key and Σ row, and the card before dot_products the names of the query and key columns,
    while the pictures they explain stayed on screen. They stay through the card; the next chapter fades
    them when it changes the picture."""
    scene = flagship["en"]
    drawn, cards = scene.stage.drawn, scene.stage.drawn["cards"]

    def kept(chapter, mob):
        return any(m is mob for m in cards[chapter])

    assert kept("softmax", drawn["dot_products"]["grid"]) and kept("softmax", drawn["dot_products"]["legend"])
    assert kept("masking", drawn["softmax"]["legend"]) and kept("masking", drawn["softmax"]["sums_group"])
    assert kept("dot_products", drawn["key"]["query_names"])
    rows = list(drawn["key"]["rows"].values())
    assert any(any(r in m.get_family() for r in rows) for m in cards["dot_products"])
    gone = [drawn["dot_products"]["legend"], drawn["softmax"]["legend"], drawn["key"]["query_names"]]
    assert not any(m in scene.mobjects for m in gone)


@pytest.mark.render
def test_flagship_in_korean_has_korean_cards_and_captions(flagship):
    from attention_manim.scenes.i18n import Say

    scene = flagship["ko"]
    assert scene.chapters_played == ORDER
    captions = [c for c, _ in scene.caption_log]
    say = Say("ko")
    for key in ("query", "softmax", "masking"):
        assert say(f"lessons.chapters.{key}.travel") in captions
    assert all(re.search(r"[\uac00-\ud7a3]", c) for c in captions)
    # Korean captions are held longer per character than English ones
    en = flagship["en"].caption_log
    assert sum(d for _, d in scene.caption_log) > 0.9 * sum(d for _, d in en)
