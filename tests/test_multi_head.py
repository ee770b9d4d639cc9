"""multi_head: every head of a layer side by side, their ΔE proposals added into the embedding.

Plans are checked against the trace with numpy (each head's focus row and ΔE, the sum E + ΣΔE = E′,
the heads' ΔE summing to the layer's ΔE less the output bias, the projections on the named
directions); tiny renders in en, ko and pt check that the numbers drawn are the trace's. SmolLM2:
its 9 heads of a layer, labelled by measured role or by their strongest habit on the sentence."""

from __future__ import annotations

import numpy as np
import pytest
from manim import config

from tests.conftest import numbers_in

from attention_manim.scenes.chapters.multi_head import TITLE_GAP
from attention_manim.scenes.i18n import Say
from attention_manim.scenes.lessons import MULTI_HEAD
from attention_manim.scenes.plans.multi_head import plan_multi_head

LESSON = MULTI_HEAD.lesson


def toy_plan(make_inputs, **kw):
    setting = LESSON.setting(make_inputs(**kw))
    return setting, plan_multi_head(setting)


def test_toy_defaults_are_the_story_sentences_and_words(make_inputs, toy_model):
    setting, plan = toy_plan(make_inputs)
    ex = toy_model.info.examples
    assert [t.text for t in setting.traces] == [ex["crashed_car"], ex["harry_wizard"], ex["harry_royal"]]
    # the story: the verb's object in the first sentence, the same name in the two others
    assert [s.tokens[s.focus] for s in plan.sentences] == ["car", "harry", "harry"]
    assert plan.n_heads == toy_model.info.n_heads == 4 and plan.layer == 0
    roles = {tuple(lh): r for r, lh in toy_model.info.roles.items()}
    for s in plan.sentences:
        assert [h.role for h in s.heads] == [roles[(0, h)] for h in range(4)]


def test_every_head_row_and_delta_is_the_trace(make_inputs):
    setting, plan = toy_plan(make_inputs)
    for tr, s in zip(setting.traces, plan.sentences):
        f = s.focus
        lt = tr.layers[0]
        for h, ht in zip(s.heads, lt.heads):
            np.testing.assert_array_equal(h.row, ht.pattern[f])
            np.testing.assert_allclose(h.row.sum(), 1.0, atol=1e-5)
            np.testing.assert_array_equal(h.delta, ht.delta_e[f])
            # the keys named: weight ≥ 0.1, strongest first, itself left out unless it is all
            others = [j for j in np.argsort(-ht.pattern[f], kind="stable")[:3] if ht.pattern[f, j] >= 0.1 and j != f]
            assert list(h.tops) == (others or [int(np.argmax(ht.pattern[f]))])
        heads_sum = np.sum([ht.delta_e[f] for ht in lt.heads], axis=0)
        np.testing.assert_allclose(s.delta_sum, heads_sum, atol=1e-5)
        # Σ heads' ΔE = the layer's ΔE minus the output bias; the toy has none
        np.testing.assert_allclose(heads_sum + s.bias, lt.delta_e[f], atol=1e-5)
        assert not s.has_bias and np.abs(lt.delta_e[f] - heads_sum).max() < 1e-4
        np.testing.assert_array_equal(s.E, lt.resid_in[f])
        np.testing.assert_allclose(s.E + heads_sum, s.E_prime, atol=1e-4)
        np.testing.assert_array_equal(s.E_prime, lt.resid_mid[f])
        np.testing.assert_allclose(s.E, tr.embeddings[f], atol=1e-6)  # layer 0: E is the embedding


def test_the_two_harrys_move_toward_wizardry_and_royalty(make_inputs):
    setting, plan = toy_plan(make_inputs)
    assert {"wizard", "royalty"} <= set(plan.directions)
    w, r = plan.directions.index("wizard"), plan.directions.index("royalty")
    wizard_tr, royal_tr = setting.traces[1], setting.traces[2]
    for tr, s in zip(setting.traces, plan.sentences):
        for d, (a, b) in zip(plan.directions, s.projections):
            assert a == pytest.approx(float(s.E @ tr.direction(d)), abs=1e-5)
            assert b == pytest.approx(float(tr.layers[0].resid_mid[s.focus] @ tr.direction(d)), abs=1e-5)
    hw, hr = plan.sentences[1], plan.sentences[2]
    # the same name starts from the same lookup along both directions (position is orthogonal to them)
    assert hw.projections[w][0] == pytest.approx(hr.projections[w][0], abs=1e-4)
    assert hw.projections[r][0] == pytest.approx(hr.projections[r][0], abs=1e-4)
    # ... and its context moves it: toward wizardry after "wizard", toward royalty after "prince"
    e_w = wizard_tr.layers[0].resid_mid[hw.focus]
    e_r = royal_tr.layers[0].resid_mid[hr.focus]
    assert e_w @ wizard_tr.direction("wizard") > e_w @ wizard_tr.direction("royalty") + 5
    assert e_r @ royal_tr.direction("royalty") > e_r @ royal_tr.direction("wizard") + 5
    # each sentence's strongest direction of ΣΔE is among those shown
    for tr, s in zip(setting.traces, plan.sentences):
        names = list(tr.directions)
        proj = np.array([s.delta_sum @ tr.direction(n) for n in names])
        assert names[int(np.argmax(proj))] in plan.directions


def test_focus_and_axes_from_the_user(make_inputs, toy_model):
    _, plan = toy_plan(make_inputs, sentences=[toy_model.info.examples["harry_royal"]], focus="queen",
                       axes=["royalty", "person"])
    s = plan.sentences[0]
    assert s.tokens[s.focus] == "queen" and plan.directions == ("royalty", "person")


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_renders_with_the_trace_numbers(render_scene, make_inputs, lang):
    scene, frame = render_scene(MULTI_HEAD, make_inputs(lang=lang))
    assert scene.chapters_played == ["multi_head"]
    assert frame is not None and frame[..., :3].max() > 0
    drawn = scene.stage.drawn["multi_head"]
    plan = scene.plans[0]
    assert len(drawn["sentences"]) == 3 and "compare" in drawn
    for tr, s, d in zip(scene.setting.traces, plan.sentences, drawn["sentences"]):
        f = s.focus
        assert len(d["grids"]) == 4
        for g, ht in zip(d["grids"], tr.layers[0].heads):
            np.testing.assert_array_equal(g.pattern, ht.pattern)
        eq = d["sum"]
        for col, ht in zip(eq.columns, tr.layers[0].heads):
            for m in numbers_in(col):
                assert m.value == pytest.approx(float(ht.delta_e[f][m.index]), abs=1e-6)
        for m in numbers_in(eq.E_prime):
            assert m.value == pytest.approx(float(tr.layers[0].resid_mid[f][m.index]), abs=1e-6)
        for m in numbers_in(eq.E):
            assert m.value == pytest.approx(float(tr.layers[0].resid_in[f][m.index]), abs=1e-6)
        # the heads' second lines stand on one line (review 37: "head 2" 5 px above "head 3")
        heads = [c[0] for c in d["cells"]]
        assert np.ptp([h[1].get_top()[1] for h in heads]) < 1e-6
        # each head's title stands over its own grid's cells, nearer their centre than any other grid's, and
        # TITLE_GAP from the next (review 37: pt "adjetivos → substantivos" centred over the row labels, 22 px
        # from "sentido pelo contexto"); the grids at one pitch
        centres = [g.lines.get_x() for g in d["grids"]]
        for k, h in enumerate(heads):
            assert int(np.argmin([abs(h.get_x() - c) for c in centres])) == k
        for a, b in zip(heads, heads[1:]):
            assert b.get_left()[0] - a.get_right()[0] >= TITLE_GAP - 1e-6
        assert np.ptp(np.diff(centres)) < 1e-6
        # the axes named once, by the first grid (review 38: only the colours said which words attend):
        # "queries" level with its column labels, left of them; "keys" left of its row labels; both on screen
        g, (top, side) = d["grids"][0], d["axis_names"]
        assert top.get_right()[0] <= g.lines.get_left()[0] and abs(top.get_y() - g.col_labels.get_y()) < 1e-6
        assert side.get_right()[0] <= g.row_labels.get_left()[0] - 0.25 and side.get_left()[0] > -config.frame_width / 2
        # between two rows, never level with one row's label (review 41: "키" beside "cast" read as "키 cast")
        rows_y = {round(float(y), 4) for y in g.cell_centers()[..., 1].ravel()}
        assert min(abs(side.get_y() - y) for y in rows_y) >= 0.3 * g.cell_height
        # an arrow from the word to the columns (review 42: over the row labels it read as naming them)
        word, pointer = top
        assert pointer.get_start()[0] >= word.get_right()[0] and pointer.get_end()[0] > pointer.get_start()[0]
        assert top.original_text == Say(lang)("grid.axes.queries") and side.original_text == Say(lang)("grid.axes.keys")
    # one dot key for every sentence (review 49: 0.10 beside the first sentence, 0.25 beside the next)
    keys = {d["legend"].weights for d in drawn["sentences"] if d["legend"] is not None}
    assert len(keys) == 1 and len(drawn["sentences"]) == 3
    shown = sorted(round(m.value, 4) for m in numbers_in(drawn["compare"]))
    expected = sorted(round(v, 4) for s in plan.sentences for pair in s.projections for v in pair)
    assert shown == expected
    # a direction has one name in every frame of the lesson: "wizard", a word of the second sentence, is "mago
    # (wizard)" beside every sentence (review 48: "마법사" beside one sentence, "wizard" beside the next; review 49:
    # "wizard" alone beside "dano" and "realeza")
    def names_of(rows):
        return [t for m in rows.get_family() for t in [getattr(m, "original_text", None)] if t]

    said = Say(lang)
    words = [t for s in plan.sentences for t in s.tokens]
    for d in drawn["sentences"]:
        for name in plan.directions:
            own = said(f"embeddings.directions.{name}")
            want = (own if own == name else said("common.direction_for_word", name=own, word=name)) if name in words else own
            assert want in names_of(d["moved"]), (name, names_of(d["moved"]))
    assert "wizard" in plan.directions and "wizard" in words
    # the two "harry"s enter with different E (their positions differ): the caption never says "the same
    # lookup" without saying why the Es drawn differ
    harrys = [s for s in plan.sentences if s.tokens[s.focus] == "harry"]
    assert not np.allclose(harrys[0].E, harrys[1].E, atol=0.005)
    captions = [c for c, _ in scene.caption_log]
    assert Say(lang)("multi_head.caption_compare_same") not in captions
    # the table shows their projections, the same here: the caption says the change is not along them
    same_proj = np.allclose(np.round([v for v, _ in harrys[0].projections], 2),
                            np.round([v for v, _ in harrys[1].projections], 2))
    hidden = Say(lang)("multi_head.caption_compare_same_hidden")
    assert (hidden in captions) == same_proj
    # a head's ΔE names the word's position, as E⃗ beside it does, and its head apart from it
    for s, d in zip(plan.sentences, drawn["sentences"]):
        for col, h in zip(d["sum"].columns, s.heads):
            assert col.symbol_source == f"Delta arrow(E)_{s.focus + 1}^(({h.head}))"


# --- SmolLM2 ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def smol(smollm2_model):
    """SmolLM2's session: its measured roles are the session's (the model object holds none)."""
    from attention_manim.model.session import ModelSession

    session = ModelSession(smollm2_model, "smollm2")
    session.info  # measured here, once
    return session


def test_smollm2_nine_heads_of_a_layer(smol):
    from attention_manim.scenes.setting import SceneInputs

    info = smol.info
    inputs = SceneInputs(tracer=smol.trace, model=info, axes=["wizard", "royalty"])
    setting = LESSON.setting(inputs)
    plan = plan_multi_head(setting)
    layer = info.roles["sense_from_context"][0]  # the lesson's head role picks the layer
    assert plan.layer == layer and plan.n_heads == 9 and plan.real
    named = {}  # the roles measured for heads of this layer (the first role listed, when a head has two)
    for r, (l, h) in info.roles.items():
        if l == layer:
            named.setdefault(int(h), r)
    for tr, s in zip(setting.traces, plan.sentences):
        f = s.focus
        lt = tr.layers[layer]
        assert len(s.heads) == 9
        heads_sum = np.sum([ht.delta_e[f] for ht in lt.heads], axis=0)
        np.testing.assert_allclose(s.delta_sum, heads_sum, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose(heads_sum + s.bias, lt.delta_e[f], rtol=1e-5, atol=1e-4)
        assert not s.has_bias  # a LLaMA-style model has no output bias
        np.testing.assert_allclose(s.E_prime, lt.resid_in[f] + lt.delta_e[f], rtol=1e-4, atol=1e-3)
        for h, ht in zip(s.heads, lt.heads):
            np.testing.assert_array_equal(h.row, ht.pattern[f])
            assert h.role == named.get(h.head, "")
            p = ht.pattern
            rows = np.arange(1, p.shape[0])
            habits = {"first_token": p[rows, 0].mean(), "previous": p[rows, rows - 1].mean(),
                      "self": p[rows, rows].mean()}
            assert h.habit == max(habits, key=habits.get)
            assert h.habit_weight == pytest.approx(habits[h.habit], abs=1e-6)
        assert s.mean_first == pytest.approx(float(np.mean([ht.pattern[f, 0] for ht in lt.heads])), abs=1e-6)
        for d, (a, b) in zip(("wizard", "royalty"), s.projections):
            assert b == pytest.approx(float(lt.resid_mid[f] @ tr.direction(d)), rel=1e-4, abs=1e-4)


def test_smollm2_renders_with_an_honest_note(smol, render_scene):
    from attention_manim.scenes.setting import SceneInputs

    inputs = SceneInputs(tracer=smol.trace, model=smol.info, lang="ko",
                         sentences=[smol.info.examples["crashed_car"]])
    scene, frame = render_scene(MULTI_HEAD, inputs)
    plan = scene.plans[0]
    d = scene.stage.drawn["multi_head"]["sentences"][0]
    assert len(d["grids"]) == 9
    s = plan.sentences[0]
    assert (d["note"] is not None) == (s.mean_first >= 0.5)
    # SmolLM2's 9 query heads share 3 key/value heads: the first caption says so, not "each its own W_K"
    from attention_manim.scenes.i18n import Say

    assert plan.n_kv_heads == 3 and plan.n_heads == 9
    said = Say("ko")("multi_head.caption_intro_real_shared", layer=plan.layer, count=9, kv=3)
    assert scene.caption_log[0][0] == said.replace("W_", "W") and "3쌍" in said


def test_rows_whose_rounded_terms_miss_e_prime_are_the_ones_marked(make_inputs):
    """The ≈ marks: exactly the shown entries where the one-decimal terms drawn (E, every ΔE) do
    not add up to E′ drawn to one decimal; the first story sentence has such rows."""
    _, plan = toy_plan(make_inputs)
    for s in plan.sentences:
        want = []
        for i in s.shown:
            if i is None:
                continue
            terms = [round(float(s.E[i]), 1)] + [round(float(h.delta[i]), 1) for h in s.heads]
            if round(sum(terms), 1) != round(float(s.E_prime[i]), 1):
                want.append(i)
        assert list(s.rounding_off) == want
    assert plan.sentences[0].rounding_off  # "car": 1.0 − 0.1 − 0.1 + 0.0 + 1.6 is 2.4, E′ shows 2.3


def test_an_idle_heads_lower_bound_never_reads_above_what_a_weight_can_be():
    """"itself ≥ 0.99" for a least self-weight of 0.996 (it read "≥ 1.00", impossible-sounding for a
    weight); bounds already at two decimals stay as they are."""
    from attention_manim.scenes.chapters.multi_head import at_least

    assert at_least(0.996) == 0.99 and at_least(0.9999999) == 0.99
    assert at_least(0.5) == 0.5 and at_least(0.87) == 0.87 and at_least(1.0) == 1.0
    assert f"{at_least(0.996):.2f}" == "0.99"


def test_the_strongest_cell_framed_skips_the_first_token_on_a_real_model_only():
    """caption_heads_many frames each head's strongest key for the word (review 53: the caption said the
    heads look in different places over grids that did not change); on a real model the first token, where
    most heads park their weight, is not the place the caption means."""
    from attention_manim.scenes.chapters.multi_head import strongest_key

    row = [0.7, 0.05, 0.2, 0.05, 0.9]  # keys past the focus (index 3) are not the row's
    assert strongest_key(row, 3, real=False) == 0
    assert strongest_key(row, 3, real=True) == 2
    assert strongest_key([1.0], 0, real=True) == 0  # the first word has no other key
