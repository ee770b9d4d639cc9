"""next_token and going_deeper: plans against the traces (numpy), the logit lens against the model's
own weights (its final norm and unembedding, applied in the test), tiny renders in en, ko and pt."""

from __future__ import annotations


import numpy as np
import pytest

from tests.conftest import numbers_in

from attention_manim.scenes.plans.next_token import NEXT_TRACES, plan_going_deeper, plan_next_token
from attention_manim.scenes.registry import load_all
from attention_manim.scenes.setting import SceneInputs

EIFFEL = "The Eiffel tower is in the city of"


@pytest.fixture(scope="module")
def smol(smollm2_model):
    return smollm2_model


@pytest.fixture(scope="module")
def smol_inputs(smol):
    from attention_manim.model.session import ModelSession

    session = ModelSession(smol, "smollm2")

    def make(**kw):
        return SceneInputs(tracer=session, model=smol.info, **kw)

    return make


def lesson(name):
    return load_all()[name].lesson


def softmax(x):
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - x.max())
    return e / e.sum()


def lens_by_hand(model, trace) -> np.ndarray:
    """[n_layers, vocab]: RMSNorm (x / sqrt(mean x² + eps) · w) then the tied unembedding W_Eᵀ,
    applied here to each layer's residual stream at the last token."""
    w = model.ln_final.w.detach().double().numpy()
    eps = model.ln_final.eps
    W_E = model.W_E.detach().double().numpy()
    assert model.cfg.tied_embeddings  # SmolLM2 ties its unembedding to W_E
    out = []
    for lt in trace.layers:
        x = lt.residual_out[-1].astype(np.float64)
        y = x / np.sqrt(np.mean(x * x) + eps) * w
        out.append(softmax(y @ W_E.T))
    return np.array(out)


# --- the logit lens ---------------------------------------------------------------------------

def test_the_logit_lens_is_the_unembedding_of_each_layers_residual(smol):
    tr = smol.trace(EIFFEL)
    probs = lens_by_hand(smol, tr)
    lens = tr.logit_lens
    assert lens.ids.shape == (smol.cfg.n_layers, 10)
    for l in range(smol.cfg.n_layers):
        order = np.argsort(-probs[l], kind="stable")[:10]
        np.testing.assert_allclose(lens.probs[l], probs[l][lens.ids[l]], atol=2e-4)
        assert int(lens.ids[l, 0]) == int(order[0])
        np.testing.assert_allclose(np.sort(lens.probs[l])[::-1], probs[l][order], atol=2e-4)
    # the last layer's readout is the model's own prediction
    np.testing.assert_allclose(probs[-1], softmax(tr.logits[-1]), atol=2e-4)


def test_paris_emerges_at_a_measured_layer(smol, smol_inputs):
    tr = smol.trace(EIFFEL)
    paris = tr.directions.token_for("Paris")[0]
    assert int(np.argmax(tr.logits[-1])) == paris  # the model's answer
    probs = lens_by_hand(smol, tr)
    first = next(l for l in range(len(probs)) if int(np.argmax(probs[l])) == paris)
    plan = plan_going_deeper(lesson("going_deeper").setting(smol_inputs()))
    assert plan.emergence == first == 28  # measured: "␣Paris" first leads after layer 28 (of layers 0 to 29)
    assert plan.answer == "␣Paris" and plan.n_layers == 30 and plan.deep
    np.testing.assert_allclose(plan.answer_probs, probs[:, paris], atol=2e-4)
    assert [plan.guesses[l] == "␣Paris" for l in range(first)] == [False] * first
    for l, lt in enumerate(tr.layers):
        assert plan.attn_norms[l] == pytest.approx(float(np.linalg.norm(lt.delta_e[-1])), rel=1e-5)
        assert plan.mlp_norms[l] == pytest.approx(float(np.linalg.norm(lt.mlp_out[-1])), rel=1e-5)
        assert plan.guesses[l] == tr.vocab[int(np.argmax(probs[l]))]


def test_the_toy_says_it_has_no_depth(make_inputs, tracer):
    plan = plan_going_deeper(lesson("going_deeper").setting(make_inputs()))
    tr = tracer("eiffel tower")
    assert plan.n_layers == 1 and not plan.has_mlp and not plan.deep and plan.mlp_norms == (0.0,)
    assert plan.guesses[0] == tr.vocab[int(np.argmax(tr.logits[-1]))] == plan.answer and plan.emergence == 0


# --- the next token ---------------------------------------------------------------------------

def check_steps(plan, traces, picked):
    for s, (step, tr) in enumerate(zip(plan.steps, traces)):
        p = softmax(tr.logits[-1])
        order = np.argsort(-p, kind="stable")[:5]
        assert step.top_ids == tuple(int(k) for k in order)
        np.testing.assert_allclose(step.top_probs, p[order], atol=1e-9)
        assert step.rest == pytest.approx(1.0 - p[order].sum())
        assert step.picked_id == picked[s] and step.picked_prob == pytest.approx(p[picked[s]])
        assert step.tokens == tr.tokens


@pytest.mark.parametrize("which", ["toy", "smollm2"])
def test_next_token_probabilities_are_the_softmax_of_the_logits(which, make_inputs, request):
    inputs = make_inputs() if which == "toy" else request.getfixturevalue("smol_inputs")()
    setting = lesson("next_token").setting(inputs)
    traces, picked = setting.options[NEXT_TRACES]
    plan = plan_next_token(setting)
    assert len(plan.steps) == 4 and plan.temperature is None
    assert list(picked) == [int(np.argmax(t.logits[-1])) for t in traces]  # greedy
    check_steps(plan, traces, picked)
    assert setting.traces == traces  # every text shown is a real trace


def test_appended_tokens_retokenize_to_themselves(smol_inputs, smol):
    setting = lesson("next_token").setting(smol_inputs())
    traces, picked = setting.options[NEXT_TRACES]
    assert traces[0].text == EIFFEL
    for s in range(len(traces) - 1):
        # the decoded token appended as text reads back as the same ids plus the picked one
        assert traces[s + 1].token_ids == traces[s].token_ids + (picked[s],)
        assert traces[s + 1].text == traces[s].text + smol.tokenizer.decode([picked[s]])
    assert all(st.retokenized for st in plan_next_token(setting).steps)
    assert plan_next_token(setting).final_tokens[9:] == ("␣Paris", ",", "␣France", ".")


def test_sampling_uses_the_seed_and_the_temperature(make_inputs):
    setting = lesson("next_token").setting(make_inputs(options={"temperature": 0.8, "seed": 3}))
    traces, picked = setting.options[NEXT_TRACES]
    rng = np.random.default_rng(3)
    for tr, tid in zip(traces, picked):
        z = np.asarray(tr.logits[-1], np.float64) / 0.8
        e = np.exp(z - z.max())
        assert tid == int(rng.choice(len(e), p=e / e.sum()))
    plan = plan_next_token(setting)
    assert plan.temperature == 0.8 and plan.seed == 3
    check_steps(plan, traces, picked)
    again = lesson("next_token").setting(make_inputs(options={"temperature": 0.8, "seed": 3}))
    assert again.options[NEXT_TRACES][1] == picked


# --- the lesson's own model -------------------------------------------------------------------

def test_going_deeper_loads_its_own_model_unless_one_is_named(monkeypatch, tmp_path):
    from attention_manim import cli as render
    from click.testing import CliRunner

    loads = []

    class Fake:
        info = None

        def trace(self, text):
            raise AssertionError("not traced here")

    def fake_load(name, device):
        loads.append(name)
        return Fake()

    class Result:
        files, duration, wall_time = [], 0.0, 0.0

    monkeypatch.setattr("attention_manim.scenes.batch.default_loader", lambda name, device: (fake_load(name, device), None))
    monkeypatch.setattr("attention_manim.scenes.runner.render_scene", lambda *a, **k: Result())
    # the generation lessons default to a model that can generate (the toy's continuations are nonsense)
    assert lesson("going_deeper").model == "smollm2" and lesson("next_token").model == "smollm2"
    r = CliRunner().invoke(render.cli, ["render", "going_deeper", "attention_pattern", "next_token",
                                        "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert loads == ["smollm2", "toy"]  # one load per model
    loads.clear()
    r = CliRunner().invoke(render.cli, ["render", "going_deeper", "--model", "toy", "--out", str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert loads == ["toy"]


# --- renders ----------------------------------------------------------------------------------

@pytest.mark.render
@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
@pytest.mark.parametrize("name", ["next_token", "going_deeper"])
def test_renders_on_the_toy(name, lang, make_inputs, render_scene):
    scene, frame = render_scene(load_all()[name], make_inputs(lang=lang), size=(128, 72))
    assert frame.any() and scene.chapters_played == [name]
    drawn = scene.stage.drawn[name]
    if name == "next_token":
        from attention_manim.scenes.components.text import text_baseline

        assert len(drawn["charts"]) == 4
        plan = scene.plans[0]
        shown = [float(n.value) for r in drawn["charts"][0].rows for n in [r.val]]
        assert shown == list(plan.steps[0].top_probs)
        # each bar's length is its probability, to one scale (a track of length 1 behind it)
        for r, p in zip(drawn["charts"][0].rows, plan.steps[0].top_probs):
            assert r.bar.width == pytest.approx(max(r.track.width * p, 0.02))
        # the first frame shows what the guess is made from: the last token's final vector, its numbers the
        # trace's (review 37: the caption spoke of it over an empty frame), braced with its real length
        col = drawn["last_vector"].column
        final = scene.setting.options[NEXT_TRACES][0][0].final[-1]  # the first pass's trace, as the model wrote it
        assert len(col.values) == plan.steps[0].last_vector.shape[0] and str(len(col.values)) in col.brace_label.original_text
        for m in numbers_in(col):
            assert m.value == pytest.approx(float(plan.steps[0].last_vector[m.index]), abs=1e-6)
            assert m.value == pytest.approx(float(final[m.index]), abs=1e-6)
        # the cards' row along the bottom, under every chart's rows and 0.3 off the frame's edge (review 42: 12 px)
        row = drawn["card_row"]
        assert row.get_bottom()[1] >= -scene.camera.frame_height / 2 + 0.3
        assert all(row.get_top()[1] < r.get_bottom()[1] for chart in drawn["charts"] for r in [*chart.rows, chart.rest])
        # one card per pass: the picked token and its real probability
        assert [c.p.value for c in drawn["cards"]] == [st.picked_prob for st in plan.steps]
        # review 44: a label says what the cards are, left of their row and level with it, clear of the frame's edge
        from attention_manim.scenes.i18n import Say

        picked = drawn["picked_label"]
        assert " ".join(m.original_text for m in picked) == Say(lang)("deeper.next_token.picked")
        assert picked.get_right()[0] <= row.get_left()[0] - 0.2
        assert picked.get_left()[0] >= -scene.camera.frame_width / 2 + 0.2
        assert picked.get_bottom()[1] < row.get_y() < picked.get_top()[1]
        # ... and on the closing frame it stays, one line under the cards brought up large (review 50: bare figures)
        closing = drawn["closing_picked"]
        assert closing.original_text == Say(lang)("deeper.next_token.picked")
        assert closing.get_top()[1] < min(c.get_bottom()[1] for c in drawn["cards"]) - 0.1
        assert abs(closing.get_x()) < 0.05 and closing.get_bottom()[1] > -scene.camera.frame_height / 2 + 0.2
        # "Σ = 1.00" on one baseline (review 44: centred, "Σ =" stood 3 px under its figure)
        for chart in drawn["charts"]:
            sigma, total = chart.sum_row[:2]
            assert abs(text_baseline(sigma) - text_baseline(total)) < 0.01
        # the closing row of cards: one height, one line for their numbers
        cards = drawn["cards"]
        assert max(c.height for c in cards) - min(c.height for c in cards) < 0.02  # (a comma in 0,58 may dip)
        assert max(c.p.get_bottom()[1] for c in cards) - min(c.p.get_bottom()[1] for c in cards) < 0.02
        # a card whose pick is only a mark draws it bare and names it (a quoted comma read as commas)
        for c, st in zip(cards, plan.steps):
            marked = not any(ch.isalnum() for ch in st.picked_token)
            assert (c.word.mark is not None) == marked
            if marked:
                glyph, name = c.word  # the mark stands on its name's baseline (centred, "." read as "·")
                assert glyph.get_bottom()[1] <= text_baseline(name) + 0.02
                assert abs(glyph.baseline() - text_baseline(name)) < 0.02
                assert glyph.height > 0.12  # the mark no speck (at 40 a comma was 8 px, a period 0.09 units: review 38)
        # the cards' words on one baseline, and their numbers at one precision (review 38: "a comma" 10 px above
        # the words beside it; 0.58 beside 0.364)
        lines = [text_baseline(c.word[1] if c.word.mark is not None else c.word) for c in cards]
        assert max(lines) - min(lines) < 0.02
        assert len({len(c.p.shown.split(".")[-1].split(",")[-1]) for c in cards}) == 1
        # and the charts at the cards' precision (review 41: a card's 0.577 beside its chart's 0.58)
        places = {len(n.shown.replace(",", ".").split(".")[-1]) for chart in drawn["charts"] for n in [r.val for r in chart.rows]}
        assert places == {len(cards[0].p.shown.replace(",", ".").split(".")[-1])}
        # the text grows in place: each longer text is the shorter one plus a box to its right
        for short, long in zip(drawn["sentences"], drawn["sentences"][1:]):
            assert len(long) == len(short) + 1 and long[-1].get_left()[0] > short[-1].get_right()[0]
            assert long[0].get_center()[0] == pytest.approx(short[0].get_center()[0])
        # every chart's figures add up to Σ 1.00 as drawn, or the Σ says ≈ (0.99, 1.01 drawn)
        for chart in drawn["charts"]:
            shown = [r.val.shown for r in chart.rows] + [chart.rest.val.shown]  # as drawn, at the lesson's precision
            places = len(shown[0].replace(",", ".").split(".")[-1])
            misses = round(sum(float(f.replace(",", ".").replace("−", "-")) for f in shown), places) != 1.0
            assert chart.approx == misses and ("≈" in chart.sum_row[0].original_text) == misses
            # a "Σ ≈" says why on the frame (review 50), under the Σ, inside the frame
            note = getattr(chart.sum_row, "note", None)
            assert (note is not None) == misses
            if misses:
                assert note.original_text == Say(lang)("common.rounding.rounded")
                assert note.get_right()[0] <= 7.1 and note.get_top()[1] < chart.sum_row[0].get_bottom()[1]
        # a title that names the model (the toy here: in words, never its id)
        from attention_manim.scenes.i18n import Say
        assert drawn["title"].original_text.endswith(Say(lang)("blocks.toy_model"))
    else:
        assert len(drawn["columns"]) == 1 and len(drawn["note"]) == 3  # the honest note and the hint
        # one layer: the note names the guess, not "after layer 0 of layers 0 to 0"
        first = " ".join(m.original_text for m in drawn["note"][0])
        assert f"{scene.plans[0].answer_probs[-1]:.2f}".replace(".", "," if lang == "pt" else ".") in first
        assert "0 to 0" not in first and "0 a 0" not in first and "0층부터 0층" not in first
        # the bars have a scale: each tick stands at the height a bar of its length would have
        from attention_manim.scenes.chapters.going_deeper import BAR_H, BASE_Y
        plan = scene.plans[0]
        tallest = max(max(plan.attn_norms), max(plan.mlp_norms))
        scale = drawn["y_scale"]
        top = scale.top
        assert 2 <= len(scale.marks) <= 5
        for k, (tick, num) in enumerate(scale.marks, start=1):
            assert float(num.original_text.replace(",", ".")) == pytest.approx(k * scale.step)
            assert tick.get_y() == pytest.approx(BASE_Y + BAR_H * k * scale.step / top)
        # every tick a round length, the last at the axis's top, the first at or above the tallest bar
        # (a "444" tick over "400" read as a stray figure, review 49)
        assert top == pytest.approx(len(scale.marks) * scale.step) and top - scale.step < tallest <= top
        assert scale.marks[-1][0].get_y() == pytest.approx(BASE_Y + BAR_H)
        col = drawn["columns"][0]
        assert col.attn.height == pytest.approx(max(BAR_H * plan.attn_norms[0] / top, 0.01))
        # no MLP: the attention bar stands alone on its layer's tick, and no caption speaks of an MLP adding
        assert col.attn.get_x() == pytest.approx(drawn["ticks"][0].get_x(), abs=1e-6)
        from attention_manim.scenes.i18n import Say
        assert Say(lang)("deeper.going_deeper.caption_blocks") not in [c for c, _ in scene.caption_log]
    assert drawn.get("space_key") is None  # the toy's tokens are words: no ␣ on screen, no key


@pytest.mark.render
def test_going_deeper_on_smollm2_rings_the_measured_layer(smol_inputs, render_scene):
    from manim import VGroup

    scene, frame = render_scene(load_all()["going_deeper"], smol_inputs(lang="ko"), size=(128, 72))
    drawn = scene.stage.drawn["going_deeper"]
    plan = scene.plans[0]
    assert len(drawn["columns"]) == 30 and len(drawn["note"]) == 1
    col = drawn["columns"][plan.emergence]
    # before the lens, the bars stand tall over the room the lens's cards take later (review 33: going_deeper's
    # first frames were a strip of chart over an empty frame); then they settle above the cards
    tall = drawn["tall"]
    settled = max(max(c.mlp.height, c.attn.height) for c in drawn["columns"])
    assert tall.bar_h > 2 * settled
    cards_top = max(c.guess.get_top()[1] for c in drawn["columns"])
    assert tall.base < min(c.guess.get_bottom()[1] for c in drawn["columns"])
    assert min(c.mlp.get_bottom()[1] for c in drawn["columns"]) > cards_top
    # the ring is around the lens card of the measured layer, and around that layer's bars
    np.testing.assert_allclose(drawn["ring"][0].get_center(), col.guess.get_center(), atol=1e-6)
    assert drawn["ring"][1].get_center()[0] == pytest.approx(VGroup(col.attn, col.mlp).get_center()[0], abs=1e-6)
    # the readout is horizontal text, the answer in the query colour where it leads
    for c, g in zip(drawn["columns"], plan.guesses):
        assert c.word.width >= c.word.height * 0.2 and c.right == (g == plan.answer)
    # the real tokens show their leading space as ␣: the key says what it means, on the lens title's line
    from attention_manim.scenes.chapters.going_deeper import punctuation
    from attention_manim.scenes.i18n import Say

    key, title = drawn["space_key"], drawn["lens_title"]
    assert key.original_text == Say("ko")("common.space_key")
    assert key.get_left()[0] > title.get_right()[0] and key.get_y() == pytest.approx(title.get_y())
    # punctuation guesses are named in a caption, not left to puzzle over, and a small mark's card names it
    # ("(comma)": a 4-6 px speck read as an empty card, review 48)
    say = Say("ko")
    shown = [c.word.token for c in drawn["columns"]]
    assert shown == list(plan.guesses)
    named = [c for c in drawn["columns"] if say.mark_label(c.word.token)]
    assert named and all(c.word.original_text == say.mark_label(c.word.token) for c in named)
    from attention_manim.scenes.chapters.going_deeper import NAME_MARGIN

    # every name at one size (review 49: "(vírgula)" smaller than "(ponto)")
    assert np.ptp([c.word.height for c in named]) < 1e-6
    for c in named:  # a name keeps its margin inside its card (edge to edge it read as the border's: review 48)
        box = c.guess[0]
        assert c.word.get_left()[0] >= box.get_left()[0] + NAME_MARGIN - 1e-6
        assert c.word.get_right()[0] <= box.get_right()[0] - NAME_MARGIN + 1e-6
    marks = drawn["punctuation"]
    assert marks and set(marks) == {w for w in shown if punctuation(w)} and all(m in shown for m in marks)
    captions = [c for c, _ in scene.caption_log]
    assert any(all(m in c for m in marks) for c in captions)
    # while the marks are blue, a key in that blue says what blue means, under the cards and clear of them
    # (review 49: blue cards with no key on a paused frame)
    blue = drawn["punctuation_key"]
    assert blue.original_text == say("deeper.going_deeper.punctuation_key")
    assert {m.get_fill_color().to_hex().lower() for m in blue.family_members_with_points()} == {scene.stage.theme.positive.lower()}
    assert blue.get_top()[1] < min(c.guess.get_bottom()[1] for c in drawn["columns"]) and blue.get_bottom()[1] > -4.0


def test_a_model_is_named_on_screen_by_its_display_name_not_its_id():
    from attention_manim.scenes.chapters.head_split import model_name
    from attention_manim.scenes.i18n import Say

    for lang in ("en", "ko", "pt"):
        assert model_name(Say(lang), "smollm2") == "SmolLM2"
        assert model_name(Say(lang), "toy") == Say(lang)("blocks.toy_model")
        assert model_name(Say(lang), "my-model") == "my-model"  # another model keeps its own name


def test_a_false_tie_with_the_picked_token_shows_three_decimals():
    """"," and "." both showed 0.36, "," picked: where two decimals tie the picked token with another,
    the chart writes three (the softmax column's rule, `finer_kind`); otherwise two."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.next_token import prob_kind
    from attention_manim.scenes.components.softmax_column import score_kind
    from attention_manim.scenes.components.text import number

    tie = SimpleNamespace(top_probs=[0.3621, 0.3583, 0.1], picked_rank=0)
    assert prob_kind(tie) == "weight3"
    assert [number(p, prob_kind(tie)).shown for p in tie.top_probs[:2]] == ["0.362", "0.358"]
    assert prob_kind(SimpleNamespace(top_probs=[0.58, 0.2, 0.1], picked_rank=0)) == "weight"
    # a tie between two tokens not picked changes nothing
    assert prob_kind(SimpleNamespace(top_probs=[0.58, 0.101, 0.099], picked_rank=0)) == "weight"
    assert prob_kind(SimpleNamespace(top_probs=[0.3621, 0.3583], picked_rank=-1)) == "weight"
    # the toy: "tower" and "mole" both 0.043 at three decimals, "tower" picked: four
    still = SimpleNamespace(top_probs=[0.04324, 0.04286, 0.01], picked_rank=0)
    assert prob_kind(still) == "weight4"
    assert [number(p, prob_kind(still)).shown for p in still.top_probs[:2]] == ["0.0432", "0.0429"]
    # the softmax column keeps its rule
    assert score_kind([5.29, 5.34], [0.48, 0.50], [0, 1]) == "score2"
    assert score_kind([5.29, 1.0], [0.48, 0.50], [0, 1]) == "score"


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_a_candidate_mark_is_named_beside_its_box(lang):
    """Frame 05 on SmolLM2: the candidates "," and "." were quoted marks scaled into a word's height,
    specks of 9 px. A mark is drawn large in its own box with its name beside it; a word is itself."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.next_token import NextToken
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.style import DARK

    from attention_manim.scenes.stage import Region

    say = Say(lang)
    full = Region("full", -7.0, 7.0, -3.9, 3.9)
    stage = SimpleNamespace(theme=DARK, say=say, region=lambda name: full)
    for tok, key in ((",", "comma"), ("␣(", "open_paren"), ("—", "dash")):
        name = NextToken.token_name(stage, tok)
        words = [m.original_text for m in name.get_family() if hasattr(m, "original_text")]
        assert say(f"common.marks.{key}") in words or " ".join(words) == say(f"common.marks.{key}"), (tok, words)
        box = name[1][0]
        assert box.height >= 0.5  # as tall as a word's row, not the mark's own height
        assert name[0].get_right()[0] < box.get_left()[0]  # the name, then the mark
    word = NextToken.token_name(stage, "␣and")
    assert word.original_text == "␣and"  # a word needs no name
    assert say.mark_name("␣and") is None and say.mark_name("␣,") == say("common.marks.comma")


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_a_long_mark_name_goes_on_two_lines_at_its_size(lang):
    """Review 43: "an exclamation mark" was shrunk to fit beside its box, smaller than "a period" above it.
    A name too long for the room left of the bars goes on two lines, right-aligned, at the others' size."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.next_token import NAME_X, NextToken
    from attention_manim.scenes.components.text import label
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.stage import Region
    from attention_manim.scenes.style import DARK

    full = Region("full", -7.0, 7.0, -3.9, 3.9)
    stage = SimpleNamespace(theme=DARK, say=Say(lang), region=lambda name: full)
    name, _ = NextToken.token_name(stage, "!")
    lines = list(name) if len(name) > 1 and not hasattr(name, "original_text") else [name]
    assert len(lines) == 2
    for line in lines:
        assert line.height == pytest.approx(label(line.original_text, 26).height, rel=1e-3)
        assert line.get_right()[0] == pytest.approx(name.get_right()[0])
    assert name.width <= NAME_X - full.left - 0.1
    # nor shrunk by the chart, which fits a name into the room left of the bars (review 44: at 0.7 units tall,
    # "ponto de exclamação" came out 10 % smaller than "ponto")
    from attention_manim.scenes.chapters.embedding_parts import fit_into

    whole = NextToken.token_name(stage, "!")
    height = whole.height
    fit_into(whole, NAME_X - full.left - 0.1, NextToken.NAME_HEIGHT)
    assert whole.height == pytest.approx(height)
    short, _ = NextToken.token_name(stage, ".")  # a short name stays on one line
    assert hasattr(short, "original_text")
