"""The key to ␣ ("␣ = a space before the word") wherever a real model's tokens show their leading space.

Review 34: the flagship on SmolLM2 drew "␣fluffy" in every frame and never said what the mark is; only
the lessons that drew a key of their own had one. The stage now keeps one in the frame's lower right
corner, for every chapter without its own, and it waits unseen while something else takes the corner."""

import pytest

from attention_manim.scenes.registry import load_all
from attention_manim.scenes.setting import SceneInputs

pytestmark = pytest.mark.render


@pytest.fixture(scope="module")
def session(smollm2_model):
    from attention_manim.model.session import ModelSession

    return ModelSession(smollm2_model, "smollm2")


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_a_real_models_tokens_come_with_the_key(lang, smollm2_model, session, render_scene):
    from attention_manim.scenes.i18n import Say

    scene, _ = render_scene(load_all()["masked_self_attention"],
                            SceneInputs(tracer=session, model=smollm2_model.info, lang=lang), png=False)
    key = scene.stage.space_key
    assert key is not None and key in scene.mobjects
    assert "".join(key.original_text.split()) == "".join(Say(lang)("common.space_key").split())
    full = scene.stage.region("full")
    # in the lower right corner, inside the frame
    assert key.get_right()[0] <= full.right + 1e-6 and key.get_bottom()[1] >= full.bottom - 1e-6
    assert key.get_x() > 0 and key.get_y() < -2.5
    # the notes and the readings beside the grid stop above it: its corner stays free while ␣-tokens are on
    # screen (review 37: ko frame 03's notes ran down into the corner and the key waited, hidden)
    drawn = scene.stage.drawn["masked_rows"]
    for notes in (drawn["why"], *drawn["readings"], drawn["legend"]):  # (review 39: the last frame's dot legend)
        assert notes.get_bottom()[1] >= key.get_top()[1] + 0.1
    # a row whose Σ reads "≈1.00" is explained on the frame while the Σ column shows (review 50),
    # above the key, and no reading runs into it
    why = drawn["rounding_note"]
    assert bool(drawn["sums_group"].missed) == bool(len(why))
    if not len(why):
        return
    said = " ".join(line.original_text for line in why).replace("\u00a0", " ")
    assert said.replace(" ", "") == Say(lang)("common.rounding.rows").replace("\u00a0", " ").replace(" ", "")
    assert why.get_bottom()[1] >= key.get_top()[1] + 0.1
    assert all(r.get_bottom()[1] > why.get_top()[1] for r in drawn["readings"])


def test_the_toys_words_have_no_key(make_inputs, render_scene):
    scene, _ = render_scene(load_all()["masked_self_attention"], make_inputs(), png=False)
    assert scene.stage.space_key is None


def test_a_chapter_with_its_own_key_has_no_second_one(smollm2_model, session, render_scene):
    scene, _ = render_scene(load_all()["mlp"], SceneInputs(tracer=session, model=smollm2_model.info,
                                                          sentences=["The Eiffel tower is in"]), png=False)
    assert scene.stage.drawn["mlp"]["space_key"] is not None
    assert scene.stage.space_key is None or scene.stage.space_key not in scene.mobjects


def test_the_key_waits_while_a_note_takes_its_corner(smollm2_model, session, render_scene):
    from manim import Square

    scene, _ = render_scene(load_all()["masked_self_attention"],
                            SceneInputs(tracer=session, model=smollm2_model.info), png=False)
    key = scene.stage.space_key
    scene.remove(*[m for m in scene.mobjects if m is not key])  # an empty frame: the corner is free
    key.look()
    key.update()
    assert key.get_fill_opacity() == pytest.approx(1.0)
    note = Square(0.4).set_fill("#FFFFFF", 1.0).move_to(key)
    scene.add(note)
    key.look()
    key.update()
    assert key.get_fill_opacity() == pytest.approx(0.0)
    scene.remove(note)
    key.look()
    key.update()
    assert key.get_fill_opacity() == pytest.approx(1.0)


def test_a_chapter_without_tokens_has_no_key(smollm2_model, session, render_scene):
    """Review 35: the key stood on charts with no token at all (the cost chart, ring's memory table); a
    chapter that shows no tokens (`shows_tokens = False`) takes it away, the next one with tokens brings
    it back."""
    from attention_manim.scenes.chapters.linear_attention import LinearCost, LinearPattern

    scene, _ = render_scene(load_all()["masked_self_attention"],
                            SceneInputs(tracer=session, model=smollm2_model.info), png=False)
    stage, key = scene.stage, scene.stage.space_key
    assert key in scene.mobjects and not LinearCost.shows_tokens and LinearPattern.shows_tokens
    stage.space_key_for(LinearCost(), session)
    assert key not in scene.mobjects
    stage.space_key_for(type("Tokens", (LinearPattern,), {"own_space_key": False})(), session)
    assert key in scene.mobjects
