"""cross_attention: the trained head's alignments (the example and held-out pairs), its pattern
recomputed with numpy from the saved weights, the plan against the trace, a tiny render, bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from attention_manim.model import cross_attention as ca
from attention_manim.model.errors import UserError
from attention_manim.scenes.setting import SceneInputs

EN, FR = "i do not want to pet it", "je ne veux pas le caresser"


@pytest.fixture(scope="module")
def saved():
    """The saved weights and config, read straight from the files (not through the module)."""
    from safetensors.numpy import load_file

    return load_file(str(ca.WEIGHTS)), json.loads(ca.CONFIG.read_text(encoding="utf-8"))


def by_hand(saved, english: str, french: str) -> np.ndarray:
    """softmax(q·kᵀ/√d_head) over the French keys, in float64, from the saved tables and weights."""
    t, cfg = saved
    en, fr = english.split(), french.split()
    x_en = t["E_en"][[cfg["english_vocab"].index(w) for w in en]].astype(np.float64) + t["P"][: len(en)]
    x_fr = t["E_fr"][[cfg["french_vocab"].index(w) for w in fr]].astype(np.float64) + t["P"][: len(fr)]
    s = (x_en @ t["W_Q"]) @ (x_fr @ t["W_K"]).T / math.sqrt(cfg["d_head"])
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_the_example_aligns_as_the_video_says(saved):
    P = by_hand(saved, EN, FR)
    en, fr = EN.split(), FR.split()

    def top(word):
        return fr[int(np.argmax(P[en.index(word)]))]

    assert top("want") == "veux" and top("pet") == "caresser" and top("it") == "le" and top("i") == "je"
    assert top("not") in ("ne", "pas")
    not_row = P[en.index("not")]
    assert not_row[fr.index("ne")] + not_row[fr.index("pas")] > 0.9  # measured 0.998
    assert min(not_row[fr.index("ne")], not_row[fr.index("pas")]) > 0.3  # both halves of ne … pas
    # the word order differs: "it" comes after "pet", "le" before "caresser"
    assert fr.index(top("it")) < fr.index(top("pet"))
    # the example was never trained on
    assert tuple(en) not in {p.english for p in ca.corpus(saved[1]["corpus_size"], saved[1]["seed"])}


def test_held_out_pairs_align(saved):
    train = {p.english for p in ca.corpus(saved[1]["corpus_size"], saved[1]["seed"])}
    pairs = ca.held_out()
    assert len(pairs) >= 200
    hits = total = 0
    for p in pairs:
        assert p.english not in train
        P = by_hand(saved, *p.text)
        for i, aligned in enumerate(p.align):
            if aligned:
                total += 1
                hits += int(np.argmax(P[i])) in aligned
    assert total > 1000
    assert hits / total >= 0.97  # measured: 1214 of 1214 aligned tokens (100%)


def test_the_trace_is_the_softmax_of_the_scores_with_no_mask(saved):
    ct = ca.translate_trace(EN, FR)
    P = by_hand(saved, EN, FR)
    assert ct.pattern.shape == (7, 6) and ct.english_tokens == tuple(EN.split()) and ct.french_tokens == tuple(FR.split())
    np.testing.assert_allclose(ct.pattern, P, atol=1e-5)
    np.testing.assert_allclose(ct.pattern.sum(axis=1), 1.0, atol=1e-5)
    assert (ct.pattern > 0).all() and not ct.mask.any()
    t = saved[0]
    np.testing.assert_allclose(ct.delta, (P @ (ct.french_embeddings @ t["W_V"])) @ t["W_O"], atol=1e-4)


def test_unknown_words_raise_user_errors():
    with pytest.raises(UserError, match="french word 'baleine'") as e:
        ca.translate_trace("i want it", "je veux la baleine")
    assert "--vocab" in e.value.hint
    with pytest.raises(UserError, match="english word 'unicorn'"):
        ca.translate_trace("i want the unicorn", "je le veux")
    from attention_manim.scenes.plans.cross_attention import cross_setting

    with pytest.raises(UserError, match="two sentences"):
        cross_setting(SceneInputs(tracer=None, sentences=[EN]))


def test_training_is_deterministic():
    a = ca.train(seed=3, steps=4, out=None, progress=False, corpus_size=128)
    b = ca.train(seed=3, steps=4, out=None, progress=False, corpus_size=128)
    c = ca.train(seed=4, steps=4, out=None, progress=False, corpus_size=128)
    for k in ("W_Q", "W_K", "W_V", "W_O"):
        assert np.array_equal(a[k], b[k])
        assert not np.array_equal(a[k], c[k])


def test_saved_tables_are_the_lexicon_s(saved):
    t, cfg = saved
    assert cfg["french_vocab"] == ca.french_vocab() and cfg["english_vocab"] == ca.english_vocab()
    assert t["E_en"].shape == (len(cfg["english_vocab"]), 64) and t["E_fr"].shape == (len(cfg["french_vocab"]), 64)
    # a French word is near its English word in meaning: "veux" is closer to "want" than to any other
    E_en, E_fr = t["E_en"], t["E_fr"]
    veux = E_fr[cfg["french_vocab"].index("veux")]
    cos = E_en @ veux / np.linalg.norm(E_en, axis=1) / np.linalg.norm(veux)
    assert cfg["english_vocab"][int(np.argmax(cos))] == "want"


# --- the scene ---------------------------------------------------------------------------------

def cross_lesson():
    from attention_manim.scenes.registry import load_all

    return load_all()["cross_attention"]


def test_plan_numbers_equal_the_trace(saved):
    from attention_manim.scenes.plans.cross_attention import plan_cross_attention

    cls = cross_lesson()
    setting = cls.lesson.setting(SceneInputs(tracer=None))
    plan = plan_cross_attention(setting)
    P = by_hand(saved, EN, FR)
    np.testing.assert_allclose(plan.pattern, P, atol=1e-5)
    en, fr = EN.split(), FR.split()
    stories = {en[s.query]: tuple(fr[k] for k in s.keys) for s in plan.stories}
    assert stories == {"i": ("je",), "not": ("ne", "pas"), "want": ("veux",), "pet": ("caresser",), "it": ("le",)}
    for s in plan.stories:
        assert s.weights == pytest.approx([P[s.query, k] for k in s.keys], abs=1e-5)
    assert [en[i] for i in plan.spread] == ["do", "to"]
    assert plan.spread_max == pytest.approx(max(P[1].max(), P[4].max()), abs=1e-5)
    c = plan.crossing
    assert (en[c.first], en[c.second], fr[c.first_key], fr[c.second_key]) == ("pet", "it", "caresser", "le")
    assert plan.min_weight > 0 and not plan.seen_in_training and plan.pairs_trained == saved[1]["corpus_size"]
    # the setting's traces are the two sentences (English first), so their tokens are the scene's data
    assert setting.traces[0].tokens == tuple(en) and setting.traces[1].tokens == tuple(fr)


@pytest.mark.render
@pytest.mark.parametrize("layout", ["video", "paper"])
def test_tiny_render_shows_the_trace_weights(layout, render_scene, saved):
    scene, frame = render_scene(cross_lesson(), SceneInputs(tracer=None, layout=layout))
    assert frame.any() and scene.chapters_played == ["cross_attention"]
    grid = scene.stage.drawn["cross_attention"]["grid"]
    P = by_hand(saved, EN, FR)
    assert len(grid.number_mobs) == P.size
    for (q, k), m in grid.number_mobs.items():
        assert m.value == pytest.approx(P[q, k], abs=1e-5) and m.shown == f"{P[q, k]:.2f}"
    # video: French keys are the rows (down the left), English queries the columns (along the top)
    col = grid.query_label(3).get_center()
    row = grid.key_label(2).get_center()
    if layout == "video":
        assert col[1] > grid.cell_rect(3, 0).get_center()[1] and row[0] < grid.cell_rect(0, 2).get_center()[0]
        assert grid.cell_rect(3, 2).get_center()[0] == pytest.approx(col[0], abs=1e-6)
    else:
        assert row[1] > grid.cell_rect(0, 2).get_center()[1] and col[0] < grid.cell_rect(3, 0).get_center()[0]
    # a query whose weights, as drawn, do not make 1.00 ("do" and "to": 1.01) gets a "≈" beside its cells
    missed = [q for q in range(7) if round(sum(float(f"{P[q, k]:.2f}") for k in range(6)), 2) != 1.0]
    marks = scene.stage.drawn["cross_attention"]["rounding"][0]
    assert missed and sorted(marks.of) == missed
    for q, m in marks.of.items():
        cells = grid.query_cells(q)
        if layout == "video":
            assert m.get_top()[1] < cells.get_bottom()[1] and m.get_x() == pytest.approx(cells.get_x(), abs=1e-6)
        else:
            assert m.get_left()[0] > cells.get_right()[0] and m.get_y() == pytest.approx(cells.get_y(), abs=1e-6)
    lines = scene.stage.drawn["cross_attention"]["lines"]
    assert {k: l.weight for k, l in lines.items()} == pytest.approx({(q, k): P[q, k] for q in range(7) for k in range(6)},
                                                                      abs=1e-5)
    # the spread words' largest weight is tagged on its own line (drawn out from the faint others)
    q, k = scene.stage.drawn["cross_attention"]["spread_line"]
    assert P[q, k] == pytest.approx(max(P[1].max(), P[4].max()), abs=1e-6) and q in (1, 4)
    # its tag says whose weight it is, and every tag stands beside its line, not on it (review 48)
    from attention_manim.scenes.review import segment_box_distance

    plan = scene.plans[0]
    drawn = scene.stage.drawn["cross_attention"]
    spread_tag = drawn["tags"][-1][0]
    said = [m.original_text for m in spread_tag.get_family() if getattr(m, "original_text", None)]
    assert f"{plan.english[q]} → {plan.french[k]}" in said
    checked = 0
    for tags, s in zip(drawn["tags"], plan.stories):  # a story's tags: one per key, in order (then its Σ)
        for key, tag in zip(s.keys, tags):
            line = lines[(s.query, key)]
            box = (tag.get_left()[0], tag.get_bottom()[1], tag.get_right()[0], tag.get_top()[1])
            assert segment_box_distance(line.get_start(), line.get_end(), box) > 0.02  # not even its plate
            checked += 1
    assert checked >= 2
    # a split's Σ stands on an opaque plate: a faint line crossing its spot passes behind it (review 48)
    totals = [tags[-1] for tags, s in zip(drawn["tags"], plan.stories) if len(s.keys) > 1]
    assert totals and all(t.background_rectangle.get_fill_opacity() == pytest.approx(1.0) for t in totals)
    # drawn as every line is, while its figure shows too (a wider line read as the head settling on one word)
    assert scene.stage.drawn["cross_attention"]["spread_width"] == pytest.approx(lines[(0, 0)].get_stroke_width())
    # the learned alignments the last caption speaks of are outlined: every cell of 0.4 or more
    assert len(scene.stage.drawn["cross_attention"]["aligned"]) == int((P >= 0.4).sum()) >= 5
    captions = " ".join(c for c, _ in scene.caption_log)
    assert "“ne” and 0.50 on “pas”" in captions and "“le” comes before “caresser”" in captions


def test_the_command_line_names_the_unknown_word(capsys, tmp_path):
    from .test_cli import run_cli

    code, _, err = run_cli(capsys, "cross_attention", "--sentence", "i want it | je veux la baleine",
                           "--format", "png", "--out", str(tmp_path))
    assert code == 2 and "'baleine'" in err and "--vocab" in err and "Traceback" not in err
    code, out, _ = run_cli(capsys, "list")
    assert code == 0 and any(line.split()[0] == "cross_attention" for line in out.splitlines())


def test_the_module_lists_both_vocabularies(capsys):
    ca.main(["--vocab"])
    out = capsys.readouterr().out
    assert "caresser" in out and "want" in out and f"french ({len(ca.french_vocab())})" in out


def test_asked_for_a_real_model_the_lesson_says_the_weights_are_its_own_translation_model(saved):
    from types import SimpleNamespace

    from attention_manim.scenes.plans.cross_attention import plan_cross_attention

    real = SimpleNamespace(name="smollm2", real=True)
    toy = SimpleNamespace(name="toy", real=False)
    plan = plan_cross_attention(cross_lesson().lesson.setting(SceneInputs(tracer=None, model=real)))
    assert plan.asked_model == "smollm2"
    assert plan_cross_attention(cross_lesson().lesson.setting(SceneInputs(tracer=None, model=toy))).asked_model == ""
    assert plan_cross_attention(cross_lesson().lesson.setting(SceneInputs(tracer=None))).asked_model == ""


@pytest.mark.render
def test_rendered_for_a_real_model_the_frames_say_whose_weights_these_are(render_scene, saved):
    from types import SimpleNamespace

    from attention_manim.scenes.i18n import Say

    scene, _ = render_scene(cross_lesson(), SceneInputs(tracer=None, model=SimpleNamespace(name="smollm2", real=True)))
    drawn = scene.stage.drawn["cross_attention"]
    assert drawn["own_model"].original_text == Say("en")("cross.own_model", model="SmolLM2")
    captions = " ".join(c for c, _ in scene.caption_log)
    assert Say("en")("cross.caption_own_model", model="SmolLM2") in captions
