"""The GPT-2 walkthrough, part A: self_attention_steps, masked_self_attention, attention_as_lookup.

Plans are checked against numbers recomputed here from the head's weights with numpy (and torch for
the mask), never against the code under test: the three steps for one token equal the matrix form
equal the trace; masked rows sum to 1 with exact zeros; −1e10 (GPT-2's code) and −∞ give identical float32 weights;
the read-out percentages are the trace's; the hard lookup returns exactly one value row and the soft
one is pattern·V. Tiny renders check that what is drawn is the trace's; one plan on SmolLM2."""

from __future__ import annotations

import numpy as np
import pytest
from manim import config

from tests.conftest import ROOT, numbers_in

from attention_manim.scenes.components.text import text_baseline
from attention_manim.scenes.i18n import Say
from attention_manim.scenes.lessons import ATTENTION_AS_LOOKUP, MASKED_SELF_ATTENTION, SELF_ATTENTION_STEPS
from attention_manim.scenes.plans.walkthrough import plan_lookup, plan_masked, plan_steps

SEED_SENTENCE = "a robot must obey the orders given it"


def setting_of(lesson_cls, make_inputs, **kw):
    return lesson_cls.lesson.setting(make_inputs(**kw))


def independent_head(trace, layer, head):
    """q, k, v, pattern and z of a (non-rotary) head, recomputed from its weights and its input."""
    ht = trace.head(layer, head)
    X = np.asarray(trace.layers[layer].attn_in, np.float64)
    q = X @ ht.W_Q + ht.b_Q
    k = X @ ht.W_K + ht.b_K
    v = X @ ht.W_V + ht.b_V
    n, d = q.shape
    s = q @ k.T / np.sqrt(d)
    s[np.triu(np.ones((n, n), bool), 1)] = -np.inf
    p = np.exp(s - s.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    return q, k, v, p, p @ v


# --- self_attention_steps ----------------------------------------------------------------------

@pytest.mark.parametrize("sentence", [None, SEED_SENTENCE])
def test_three_steps_equal_the_matrices_equal_the_trace(make_inputs, sentence):
    setting = setting_of(SELF_ATTENTION_STEPS, make_inputs, sentences=[sentence] if sentence else None)
    plan = plan_steps(setting)
    tr, i = setting.trace, plan.focus
    q, k, v, p, z = independent_head(tr, plan.head.layer, plan.head.head)
    if sentence is None:
        assert tr.tokens[i] == "creature" and plan.role == "adjective_noun"
    np.testing.assert_allclose(plan.q, q[i], atol=1e-4)
    np.testing.assert_allclose(plan.k, k[i], atol=1e-4)
    np.testing.assert_allclose(plan.v, v[i], atol=1e-4)
    np.testing.assert_allclose(plan.weights, p[i], atol=1e-5)
    # step 3 (Σ w_j v_j for the focus) = row i of Z = P·V = the trace's z = the recomputation
    np.testing.assert_allclose(plan.z, plan.Z[i], atol=1e-9)
    np.testing.assert_allclose(plan.z, tr.head(plan.head.layer, plan.head.head).z[i], atol=1e-4)
    np.testing.assert_allclose(plan.Z, z, atol=1e-4)
    np.testing.assert_allclose(plan.trace_z, z[i], atol=1e-4)
    # the shapes the scene prints
    n = len(tr.tokens)
    assert plan.X.shape == (n, 64) and plan.Q.shape == plan.K.shape == plan.V.shape == (n, 16)
    assert plan.S.shape == plan.P.shape == (n, n) and plan.Z.shape == (n, 16)
    assert np.isneginf(plan.S_masked[np.triu_indices(n, 1)]).all()
    # the masked keys of the focus are the ones after it, and their weight is exactly 0
    assert list(np.flatnonzero(plan.blocked)) == list(range(i + 1, n))
    assert (plan.weights[i + 1:] == 0).all()
    # the rows drawn: the focus and its strongest keys always among them
    assert i in plan.slots and int(np.argmax(p[i])) in plan.slots


def test_the_given_word_is_in_the_toy_vocabulary(toy_model):
    from attention_manim.model import toy_world as tw

    assert "given" in tw.VOCAB and tw.pos_of("given") == "verb"
    assert toy_model.trace(SEED_SENTENCE).tokens == tuple(SEED_SENTENCE.split())


# --- masked_self_attention ---------------------------------------------------------------------

def test_masked_rows_sum_to_one_with_exact_zeros(make_inputs, toy_model):
    setting = setting_of(MASKED_SELF_ATTENTION, make_inputs)
    plan = plan_masked(setting)
    assert plan.tokens == ("robot", "must", "obey", "orders")
    n = len(plan.tokens)
    future = np.triu(np.ones((n, n), bool), 1)
    np.testing.assert_array_equal(plan.mask, future)
    assert (plan.weights[future] == 0.0).all()  # exact zeros, not small numbers
    np.testing.assert_allclose(plan.weights.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(plan.row_sums, 1.0, atol=1e-6)
    # the pattern is the softmax of the real scores (recomputed from the weights)
    _, _, _, p, _ = independent_head(setting.trace, plan.head.layer, plan.head.head)
    np.testing.assert_allclose(plan.weights, p, atol=1e-5)


def test_gpt2s_minus_ten_billion_and_minus_infinity_give_identical_weights(make_inputs):
    import torch

    plan = plan_masked(setting_of(MASKED_SELF_ATTENTION, make_inputs))
    assert plan.mask_value == float("-inf") and plan.gpt2_value == -1e10
    s = torch.tensor(plan.scores, dtype=torch.float32)
    m = torch.tensor(plan.mask)
    inf = torch.softmax(s.masked_fill(m, float("-inf")), dim=-1).numpy()
    big = torch.softmax(s.masked_fill(m, -1e10), dim=-1).numpy()
    assert np.array_equal(inf, big) and plan.same_bits
    np.testing.assert_allclose(plan.weights_ours, inf, atol=1e-6)
    np.testing.assert_allclose(plan.weights_gpt2, big, atol=1e-6)
    assert plan.exp_gpt2 == 0.0 == float(np.exp(np.float32(-1e10) - np.float32(plan.row_max)))
    assert plan.tiny == pytest.approx(1.4e-45, rel=0.01)


def test_our_model_really_masks_with_minus_infinity():
    src = (ROOT / "model" / "transformer.py").read_text()
    assert 'masked_fill(mask, float("-inf"))' in src


def test_row_readings_are_the_traces_percentages(make_inputs):
    from attention_manim.scenes.chapters.masked_rows import reading_text

    setting = setting_of(MASKED_SELF_ATTENTION, make_inputs)
    plan = plan_masked(setting)
    pattern = setting.head_trace().pattern
    say = Say("en")
    for r in plan.readings:
        keys = [j for j in range(r.query + 1) if pattern[r.query, j] >= 0.005]
        assert list(r.keys) == keys
        np.testing.assert_array_equal(r.weights, [pattern[r.query, j] for j in keys])
        assert r.rest == pytest.approx(1.0 - sum(r.weights), abs=1e-5)
        text = reading_text(say, plan, r)
        assert text.startswith(f"While processing “{plan.tokens[r.query]}”")
        for j, w in zip(keys, r.weights):
            pct = 100 * w
            # whole percents (no decimal mark beside the grid's figures); the ends said in words
            shown = "under 1%" if pct < 0.5 else "over 99%" if 99.5 <= pct < 100 else f"{pct:.0f}%"
            assert f"{shown} on “{plan.tokens[j]}”" in text
    # the lesson's head is the toy's previous-token head: every row's largest weight is on the token before it
    assert plan.role == "previous_token"
    for r in plan.readings[1:]:
        assert max(zip(r.weights, r.keys))[1] == r.query - 1


def test_a_long_sentence_is_refused_with_a_hint(make_inputs):
    from attention_manim.model.errors import UserError

    long = " ".join(["the fluffy creature"] * 4)
    with pytest.raises(UserError) as e:
        plan_masked(setting_of(MASKED_SELF_ATTENTION, make_inputs, sentences=[long]))
    assert "12×12" in str(e.value) and "shorter" in e.value.hint


# --- attention_as_lookup -----------------------------------------------------------------------

def test_hard_lookup_is_one_value_row_and_soft_is_pattern_times_values(make_inputs):
    setting = setting_of(ATTENTION_AS_LOOKUP, make_inputs)
    plan = plan_lookup(setting)
    tr, i = setting.trace, plan.focus
    q, k, v, p, z = independent_head(tr, plan.head.layer, plan.head.head)
    assert tr.tokens[i] == "creature"
    scores = k[: i + 1] @ q[i] / np.sqrt(q.shape[1])
    best = int(np.argmax(scores))
    assert plan.best == best and tr.tokens[best] in ("fluffy", "blue")
    assert np.count_nonzero(plan.hard) == 1 and plan.hard[best] == 1.0
    np.testing.assert_array_equal(plan.hard_result, plan.values[best])  # exactly its value
    np.testing.assert_allclose(plan.hard_result, v[best], atol=1e-4)
    np.testing.assert_allclose(plan.soft, p[i], atol=1e-5)
    np.testing.assert_allclose(plan.soft_result, p[i] @ v, atol=1e-4)
    np.testing.assert_allclose(plan.soft_result, tr.head(0, plan.head.head).z[i], atol=1e-4)
    assert plan.distance == pytest.approx(float(np.linalg.norm(p[i] @ v - v[best])), abs=1e-4)
    assert plan.distance > 0.5  # "creature" splits its weight between two adjectives: far from a hard lookup
    assert all(j is None or j <= i for j in plan.slots)  # only the keys it may see are entries
    # the scores as printed show which key wins (two decimals where one would tie "+5.3" with "+5.3")
    from attention_manim.scenes.components.text import FORMATTERS, parse_shown

    shown = {j: parse_shown(FORMATTERS[plan.score_kind](plan.scores[j])) for j in range(i + 1)}
    assert plan.tie or all(shown[best] > v for j, v in shown.items() if j != best)
    one = {j: round(float(plan.scores[j]), 1) for j in range(i + 1)}
    if any(one[best] == v for j, v in one.items() if j != best):
        assert plan.score_kind == "signed2"


# --- renders -----------------------------------------------------------------------------------

@pytest.mark.render
def test_masked_render_draws_the_traces_weights(make_inputs, render_scene):
    scene, frame = render_scene(MASKED_SELF_ATTENTION, make_inputs(lang="ko"))
    drawn = scene.stage.drawn["masked_rows"]
    grid = drawn["grid"]
    ht = scene.setting.head_trace()
    pattern, scores = ht.pattern, ht.scores
    n = len(pattern)
    assert grid.layout == "paper" and np.array_equal(grid.pattern, pattern)  # queries as rows
    # the scores as drawn, every cell; the blocked ones then −∞
    assert set(drawn["scores"]) == {(i, j) for i in range(n) for j in range(n)}
    for (i, j), m in drawn["scores"].items():
        assert m.value == pytest.approx(float(scores[i, j]), abs=1e-6)
    assert set(drawn["minus_inf"]) == {(i, j) for i in range(n) for j in range(n) if j > i}
    # the weights: every visible cell to two decimals, every masked one an exact "0"
    assert set(drawn["weights"]) == {(i, j) for i in range(n) for j in range(n) if j <= i}
    for (i, j), m in drawn["weights"].items():
        assert m.value == pytest.approx(float(pattern[i, j]), abs=1e-6)
        assert m.shown == f"{pattern[i, j]:.2f}"
    assert sorted(z.index for z in drawn["zeros"]) == [(i, j) for i in range(n) for j in range(n) if j > i]
    assert all(z.shown == "0" and pattern[z.index] == 0 for z in drawn["zeros"])
    assert grid.content_kind == "dots"  # the lesson ends on the grid of dots
    assert [m.value for m in drawn["sums"]] == pytest.approx([1.0] * n, abs=1e-5)
    # the Σ over the sums stands above the grid's top line: the box around the first row ran through it (review 50)
    sigma = drawn["sums_group"][-2]
    assert sigma.get_bottom()[1] >= grid.lines.get_top()[1] + 0.1
    assert drawn["mask_value"].shown == "−∞"
    assert frame[..., :3].any()
    assert len(scene.caption_log) == 5 + n


@pytest.mark.render
def test_steps_render_draws_the_focus_numbers(make_inputs, render_scene):
    scene, frame = render_scene(SELF_ATTENTION_STEPS, make_inputs(lang="pt"))
    plan = scene.plans[0]
    one = scene.stage.drawn["steps_one"]
    # the query meets every key: a masked key's raw score is shown first, then turns to −∞ (review 49)
    raws = one["raw_scores"]
    assert sorted(raws) == [j for j in range(len(plan.tokens)) if plan.blocked[j]] and raws
    for j, m in raws.items():
        assert m.value == pytest.approx(float(plan.S[plan.focus, j])) and m not in scene.mobjects
        assert one["rows"][j][2].value == -np.inf
    # the focus's input is named as every other lesson names it (x⃗₄ read as another vector: review 48)
    assert one["qkv"]["x"].symbol_source == f"arrow(E)_{plan.focus + 1}"
    for name in ("q", "k", "v"):
        for m in one["qkv"][name].entries:
            assert m.value == pytest.approx(float(getattr(plan, name)[m.index]))
    for m in one["z"].entries:
        assert m.value == pytest.approx(float(plan.trace_z[m.index]), abs=1e-4)
    # z⃗ shows the entries the weighted values above it show, so each can be added up down its column
    # the focus's weights say what they add up to: "Σ = 1" where the drawn ones make 1.00, else "Σ ≈ 1"
    weights = [cells[3].shown for cells in one["rows"].values()]
    drawn_total = round(sum(float(w.replace(",", ".")) for w in weights), 2)
    assert len(weights) == len(plan.tokens)
    assert one["weights_total"].original_text == ("Σ = 1" if drawn_total == 1 else "Σ ≈ 1")
    row = next(iter(one["rows"].values()))
    assert [m.index for m in one["z"].entries] == [m.index for m in row[-1].entries]
    # a z entry's "≈" stands clear over its digits (review 49: it sat on them)
    for mark in one["z_marks"]:
        under = min(one["z"].entries, key=lambda m: abs(m.get_x() - mark.get_x()))
        assert mark.get_bottom()[1] - under.get_top()[1] >= 0.12  # (0.16 before the panel is fitted)
    z_table = scene.stage.drawn["steps_all"]["tables"][-1]
    row = [(j, cell) for (i, j), cell in z_table.cells.items() if i == plan.focus]
    assert len(row) == 5  # four columns and the last, of 16
    for j, cell in row:
        assert cell.value == pytest.approx(float(plan.trace_z[j]), abs=1e-4)
    # the focus's row of Z is boxed with its label, the box's right side clear outside the bracket (review 50)
    box = scene.stage.drawn["steps_all"]["z_row_box"]
    assert box.get_right()[0] >= z_table.get_right()[0] + 0.06
    assert box.get_left()[0] < z_table.row_labels[plan.focus].get_left()[0]
    # P: every column of every row drawn (8 tokens): the row's weights, as drawn, add up to 1
    p_table = scene.stage.drawn["steps_all"]["tables"][6]
    n = len(plan.tokens)
    assert {j for (_, j) in p_table.cells} == set(range(n))
    for r in range(n):
        cells = [c for (i, j), c in p_table.cells.items() if i == r]
        assert sum(c.value for c in cells) == pytest.approx(1.0, abs=1e-5)
        assert all(c.shown == "0" for c in cells if c.index[1] > r)  # masked: an exact 0
    # no two drawn scores of one query read the same while their drawn weights differ: "creature"'s
    # "fluffy" and "blue" (5.29 and 5.34, weighted 0.48 and 0.50) take two decimals, as in the grid
    s_table = scene.stage.drawn["steps_all"]["tables"][4]
    for r in range(n):
        shown = {}
        for (i, j), c in s_table.cells.items():
            if i == r and j <= r:
                w = next(p.shown for (a, b), p in p_table.cells.items() if (a, b) == (i, j))
                assert shown.setdefault(c.shown, w) == w, (r, c.shown)
    assert any(c.shown.count(",") == 1 and len(c.shown.split(",")[1]) == 2 for c in s_table.cells.values())
    assert scene.chapters_played == ["steps_one", "steps_all"]
    # a table's rows are queries only in Q and the n × n tables: K's and V's in their colours, X's and Z's in the
    # text's (review 49: every table's rows in the queries' yellow)
    from manim import ManimColor

    th = scene.stage.theme
    want = [th.text, th.query, th.key, th.value, th.query, th.query, th.query, th.text]  # X Q K V S S′ P Z
    tables = scene.stage.drawn["steps_all"]["tables"]
    assert len(tables) == len(want)
    for t, color in zip(tables, want):
        assert {ManimColor(m.get_fill_color()).to_hex() for m in t.row_labels.values()} == {ManimColor(color).to_hex()}
    # the square tables (S, S′, P) name their axes: queries down the rows, keys across the top (a reviewer
    # read them as the softmax lesson's columns transposed)
    names = scene.stage.drawn["steps_all"]["axis_names"]
    assert len(names) == 3
    for keys_name, queries_name in names:
        assert keys_name.original_text and queries_name.original_text
        assert queries_name.get_right()[0] <= p_table.label_column().get_left()[0] + 1e-6
    # one convention with lesson query: columns, W·x, W_Q d_head × d_model; the paper's rows are
    # said to turn each matrix on its side
    d, dm = plan.d_head, plan.d_model
    assert one["sizes"].original_text.endswith(f"{d}×{dm}")
    assert any("artigo" in c and f"{dm}×{d}" in c for c, _ in scene.caption_log)
    # and on screen the rows' matrices are written transposed (W_Q 16×64 above, W_Qᵀ 64×16 here)
    from attention_manim.scenes.chapters.self_attention_steps import qk_formula

    assert qk_formula("Q", False) == "Q = X W_Q^T" and qk_formula("K", True) == "K = R(X W_K^T)"
    assert any("X·WVᵀ" in c for c, _ in scene.caption_log)  # (captions write W_V as WV)
    # each chapter opens on the steps ahead, large, over what would be an empty frame (review 37): the
    # three steps' headings, then every formula of the list; both gone once the first step is drawn
    from attention_manim.scenes.i18n import Say

    say = Say("pt")
    road_one, road_all = one["road"], scene.stage.drawn["steps_all"]["road"]
    assert [m.original_text for m in road_one] == [say(f"walkthrough.steps.step{k}") for k in (1, 2, 3)]
    assert len(road_all) == len(scene.stage.drawn["steps_all"]["lines"]) == 8
    assert road_one.height > 2.0 and road_all.height > 4.0
    assert all(m not in scene.mobjects for m in (road_one, road_all))


@pytest.mark.render
def test_lookup_render_draws_both_results(make_inputs, render_scene):
    scene, frame = render_scene(ATTENTION_AS_LOOKUP, make_inputs(lang="pt"))  # (pt: the longest legend)
    plan = scene.plans[0]
    drawn = scene.stage.drawn["lookup"]
    for m in numbers_in(drawn["hard"]):
        assert m.value == plan.values[plan.best][m.index]
    for m in numbers_in(drawn["soft"]):
        assert m.value == pytest.approx(float(plan.soft_result[m.index]))
    assert drawn["distance"].shown == f"{plan.distance:.2f}".replace(".", ",")  # pt's decimal comma
    assert drawn["hard"].get_left()[0] == pytest.approx(drawn["soft"].get_left()[0], abs=1e-6)  # one left edge
    assert any("“blue”" in c or "“fluffy”" in c for c, _ in scene.caption_log)
    # every key is listed: the soft column's Σ is the real sum, with "≈" exactly when its drawn weights miss it
    from attention_manim.scenes.plans.rounding import drawn_sum

    cell = drawn["soft_sum"]
    shown = [drawn["rows"][j][4].shown.replace(",", ".") for j in drawn["rows"]]
    total = cell[-1]
    assert total.value == pytest.approx(float(plan.soft[list(drawn["rows"])].sum())) and total.shown == "1,00"
    assert (len(cell) == 2) == (float(drawn_sum(shown)) != 1.0)
    # the header's √d_k given its value once, on the query's line (review 39: no frame said what d_k was)
    d_k = drawn["d_k"]
    assert d_k.typst_code.replace(" ", "") == f"$d_k={plan.d_head}$" and plan.d_head == len(plan.query)
    assert d_k.get_center()[1] == pytest.approx(drawn["query"].get_center()[1], abs=0.1)
    # the legend: the three colours on one baseline, what the fading means on its own line under them, inside
    # the frame with a margin (review 39: in pt the four ran from edge to edge)
    legend = drawn["legend"]
    assert len({round(text_baseline(m), 3) for m in legend[:3]}) == 1
    assert legend[3].get_top()[1] < min(m.get_bottom()[1] for m in legend[:3])
    assert legend.width < config.frame_width - 0.6
    # the distance on its label's baseline (review 39: "3,59" stood higher than "distância entre os dois:")
    line = drawn["distance_line"]
    assert text_baseline(line[1]) == pytest.approx(text_baseline(line[0]), abs=1e-3)


def test_the_lookup_table_stands_in_the_middle_until_the_results_come(make_inputs):
    """Review 39: the first frames' lower half was empty (the table waited at the top for the results)."""
    from attention_manim.scenes import review

    class Watch(review.Observer):
        gaps = []

        def caption_done(self, scene, text, start, end):
            d = scene.stage.drawn.get("lookup")
            if d and "distance" not in d:  # before the results
                above = d["title"].get_bottom()[1] - d["query"].get_top()[1]
                below = d["legend"].get_bottom()[1] + config.frame_height / 2
                Watch.gaps.append((above, below))

    review.play_watched(ATTENTION_AS_LOOKUP, make_inputs(), Watch())
    assert Watch.gaps and all(below > 1.0 and abs(below - above) < 1.0 for above, below in Watch.gaps), Watch.gaps


# --- SmolLM2 -----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def smol(smollm2_model):
    return smollm2_model


def test_smollm2_steps_and_mask_plans_are_its_trace(smol):
    from attention_manim.scenes.setting import SceneInputs

    inputs = SceneInputs(tracer=smol.trace, model=smol.info, layer=3, head=4)
    setting = SELF_ATTENTION_STEPS.lesson.setting(inputs)
    plan = plan_steps(setting)
    ht = setting.head_trace()
    assert plan.rotary and plan.d_model == 576 and plan.d_head == 64
    # before rotation, q is the head's input times W_Q; the scores use the rotated q and k
    X = np.asarray(setting.trace.layers[3].attn_in, np.float64)
    np.testing.assert_allclose(plan.q, X[plan.focus] @ ht.W_Q + ht.b_Q, atol=1e-3)
    np.testing.assert_allclose(plan.S, ht.scores, atol=1e-3)
    np.testing.assert_allclose(plan.Z, ht.z, atol=1e-4)
    np.testing.assert_allclose(plan.z, ht.z[plan.focus], atol=1e-4)
    masked = plan_masked(MASKED_SELF_ATTENTION.lesson.setting(inputs))
    assert len(masked.tokens) >= 4 and "obey" in "".join(masked.tokens)
    assert (masked.weights[masked.mask] == 0).all() and masked.same_bits
    np.testing.assert_allclose(masked.weights.sum(axis=1), 1.0, atol=1e-5)


def test_the_heaviest_value_is_drawn_at_full_brightness():
    """SmolLM2's lookup drew the value of "A", weight 0.56 and the largest, at 0.56 of its faint
    colours, under a legend saying "a value drawn faint counts little"."""
    from attention_manim.scenes.chapters.lookup import weight_opacity

    weights = [0.56, 0.32, 0.08, 0.04, 0.0]
    assert weight_opacity(0.56, weights) == 1.0
    assert weight_opacity(0.32, weights) == pytest.approx(0.32 / 0.56)
    assert weight_opacity(0.0, weights) == 0.15 and weight_opacity(0.04, weights) == 0.15
    assert weight_opacity(0.5, [0.5, 0.48, 0.02]) == 1.0


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_where_exp_runs_out_in_float32_is_drawn_on_a_line(lang):
    """Review 40: the frame said in four paragraphs why −10¹⁰ and −∞ give the same weights. The third is now a
    line of the exponent x: a tick at ln of the smallest positive float32 (e^−103.3 = 1.4 × 10⁻⁴⁵, named
    over it), the red band of exp(x) = 0 from the line's left end to where exp gives 0, an arrow on to −10¹⁰ and −∞."""
    from manim import MathTypst

    from attention_manim.scenes.chapters.masked_rows import underflow_line
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.style import DARK

    tiny = float(np.finfo(np.float32).smallest_subnormal)
    assert np.float32(tiny) / np.float32(2) == 0  # (below it, float32 has nothing: under half of it exp gives 0)
    from attention_manim.scenes.components.text import reset_number_language, set_number_language

    say = Say(lang)
    token = set_number_language(lang)  # as a render sets it: the figures the language's way
    try:
        line = underflow_line(say, DARK, tiny, 6.0)
    finally:
        reset_number_language(token)
    zone, axis, far, ticks, marks, tick, said, zero, x_name = line
    assert line.tiny_x == pytest.approx(np.log(tiny)) and round(line.tiny_x, 1) == -103.3
    # the scale: 0 at the axis's right end, −50 half way to −100, the tick at −103.3
    assert line.at(0.0)[0] == pytest.approx(axis.get_right()[0]) and line.at(-120.0)[0] == pytest.approx(axis.get_left()[0])
    assert tick.get_x() == pytest.approx(line.at(line.tiny_x)[0])
    for t, x in zip(ticks, (-50.0, 0.0)):
        assert t.get_x() == pytest.approx(line.at(x)[0])
    tiny_shown = "−103,3" if lang == "pt" else "−103.3"
    assert [m.original_text for m in marks] == ["−50", "0", tiny_shown]
    # review 44: the tick where exp runs out is read under it, on the row of the others; "exp(x) = 0" under that row
    assert marks[2].get_x() == pytest.approx(tick.get_x(), abs=0.01) and line.tiny_figure is marks[2]
    assert tick.get_bottom()[1] > marks[2].get_top()[1] + 0.03  # clear of its figure (review 46: "−1|03.3")
    assert max(m.get_top()[1] for m in marks) - min(m.get_top()[1] for m in marks) < 0.01
    assert zero.get_top()[1] < min(m.get_bottom()[1] for m in marks)
    # the formula over the tick sits on its line: e's baseline is the figures', the "=" centred between
    # the baseline and the digits' tops (review 44: "e^−103.3 =" stood 7 px below the line)
    from attention_manim.scenes.components.text import text_baseline
    first = said[0]
    e, eq, figure = first[0], first[1], first[2]
    digits = [g for g in figure.family_members_with_points() if g.height > 0.8 * figure.height * 0.5][:1]
    assert text_baseline(e) == pytest.approx(digits[0].get_bottom()[1], abs=0.012)
    cap = digits[0].height
    assert 0.3 * cap < eq.get_y() - text_baseline(e) < 0.7 * cap
    # the red band runs from the axis's left end to where float32's exp really gives 0 (review 49: from the tick,
    # it claimed 0 where exp still gives 1.4 × 10⁻⁴⁵), and the arrow on to the left
    right = line.zero_x
    assert np.exp(np.float32(right - 0.01)) == 0 and np.exp(np.float32(right + 0.01)) > 0
    assert zone.get_left()[0] == pytest.approx(axis.get_left()[0]) and zone.get_right()[0] == pytest.approx(line.at(right)[0])
    assert zone.get_right()[0] < tick.get_x()
    assert far.get_end()[0] < axis.get_left()[0] and zero.get_top()[1] < axis.get_y() < said.get_bottom()[1]
    # the smallest float32, the language's way, with its words from the catalog
    shown = [m.shown for m in said.get_family() if hasattr(m, "shown") and isinstance(m, MathTypst)]
    assert shown == [("1,4" if lang == "pt" else "1.4") + "×10⁻⁴⁵"]
    words = " ".join(m.original_text for m in said.get_family() if hasattr(m, "original_text"))
    assert words.replace(" ", "") in say.catalog["walkthrough.masked.tiny_mark"].replace("{e} = {tiny}", "=").replace(" ", "")
