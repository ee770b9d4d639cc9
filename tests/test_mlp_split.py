"""`head_split_merge` and `mlp`: the split-then-merge equals the trace's attention output, the MLP's
activations equal a numpy recomputation from the weights; GPT-2 small's shapes from its config; the
toy refuses the MLP lesson clearly; tiny renders (SmolLM2 ones skipped when it is not installed)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from attention_manim.model.params import GPT2, tally
from attention_manim.scenes.plans.head_split import plan_head_split
from attention_manim.scenes.registry import load_all


def setting_of(inputs, name):
    return load_all()[name].lesson.setting(inputs)


def check_split(plan, trace, layer):
    lt = trace.layers[layer]
    f = plan.focus
    heads = lt.heads
    a = lt.attn_in[f].astype(np.float64)
    H, d = len(heads), heads[0].W_Q.shape[1]
    # the long query: every head's W_Q side by side, then cut into pieces of d_head: each head's own query
    long_q = a @ np.hstack([h.W_Q for h in heads]).astype(np.float64) + np.concatenate([h.b_Q for h in heads])
    np.testing.assert_allclose(plan.q_long, long_q, atol=1e-9)
    for h in heads:
        piece = long_q[h.head * d:(h.head + 1) * d]
        np.testing.assert_allclose(piece, h.q_unrotated[f], atol=1e-4 * max(1.0, float(np.abs(piece).max())))
    kv = sorted({h.kv_head for h in heads})
    assert plan.k_long.shape == plan.v_long.shape == (len(kv) * d,)
    # merged: the outputs concatenated times the stacked W_O (+ the output bias) = the layer's attention output
    z = np.concatenate([h.z[f] for h in heads]).astype(np.float64)
    merged = z @ np.vstack([h.W_O for h in heads]).astype(np.float64)
    out = lt.delta_e[f].astype(np.float64)
    bias = out - sum(h.delta_e[f].astype(np.float64) for h in heads)
    np.testing.assert_allclose(plan.merged, merged + bias, atol=1e-9)
    assert np.abs(merged + bias - out).max() < 1e-5 * max(1.0, float(np.abs(out).max()))
    assert plan.max_diff == pytest.approx(float(np.abs(merged + bias - out).max()), abs=1e-12)
    for i in plan.shown:
        if i is not None:
            assert f"{plan.merged[i]:.{plan.decimals}f}" == f"{out[i]:.{plan.decimals}f}"
    assert plan.decimals >= 4 and (plan.n_heads, plan.d_head) == (H, d)


def test_head_split_on_the_toy(make_inputs):
    s = setting_of(make_inputs(), "head_split_merge")
    plan = plan_head_split(s)
    check_split(plan, s.trace, s.head.layer)
    assert plan.n_kv_heads == plan.n_heads and plan.d_model == plan.n_heads * plan.d_head
    s = setting_of(make_inputs(focus="car", sentences=["they crashed the car"]), "head_split_merge")
    check_split(plan_head_split(s), s.trace, 0)


def test_gpt2_small_config():
    assert (GPT2.d_model, GPT2.n_heads, GPT2.d_head, GPT2.d_mlp) == (768, 12, 64, 3072)
    assert GPT2.n_heads * GPT2.d_head == GPT2.d_model and GPT2.d_mlp == 4 * GPT2.d_model
    # the published size: 124,439,808 weights with biases and norms; matrices only (tied) as counted here
    t = tally(GPT2)
    assert t.embedding == 50_257 * 768 and t.mlp_per_layer == 2 * 768 * 3072 and t.unembedding == 0
    positions = 1_024 * 768
    per_layer_small = 2 * 768 + 3 * 768 + 768 + 2 * 768 + 3_072 + 768  # two LayerNorms, biases of q k v o, MLP biases
    assert t.total + positions + 12 * per_layer_small + 2 * 768 == 124_439_808  # GPT-2 small's published count


def numpy_mlp(block, x, kind):
    """The MLP recomputed here from the weights, in numpy float64."""
    W = {n: getattr(block, n).detach().double().numpy() for n in ("W_in", "b_in", "W_out", "b_out")}
    norm = block.ln2
    if hasattr(norm, "b"):  # LayerNorm
        mu, var = x.mean(), x.var()
        m = (x - mu) / np.sqrt(var + norm.eps) * norm.w.detach().double().numpy() + norm.b.detach().double().numpy()
    else:  # RMSNorm
        m = x / np.sqrt((x ** 2).mean() + norm.eps) * norm.w.detach().double().numpy()
    up = m @ W["W_in"] + W["b_in"]
    if kind == "swiglu":
        g = m @ block.W_gate.detach().double().numpy()
        h = g / (1 + np.exp(-g)) * up
    elif kind == "gelu_tanh":
        h = 0.5 * up * (1 + np.tanh(math.sqrt(2 / math.pi) * (up + 0.044715 * up ** 3)))
    else:
        h = 0.5 * up * (1 + np.vectorize(math.erf)(up / math.sqrt(2)))
    return m, up, h, h @ W["W_out"] + W["b_out"]


def check_mlp(model, trace, layer, pos, rtol=1e-4):
    from attention_manim.model.mlp_probe import mlp_activations

    act = mlp_activations(model, trace, layer, pos)
    x = trace.layers[layer].resid_mid[pos].astype(np.float64)
    m, up, h, out = numpy_mlp(model.blocks[layer], x, model.cfg.mlp)
    for got, want in ((act.m, m), (act.up, up), (act.hidden, h), (act.out, out)):
        np.testing.assert_allclose(got, want, atol=rtol * max(1.0, float(np.abs(want).max())))
    np.testing.assert_allclose(out, trace.layers[layer].mlp_out[pos], atol=rtol * max(1.0, float(np.abs(out).max())))
    assert act.max_diff < rtol * max(1.0, float(np.abs(out).max()))
    return act


def test_mlp_activations_of_a_plain_gelu_block(toy_model):
    from attention_manim.model.transformer import random_model

    for kind in ("gelu_tanh", "gelu"):
        cfg = dataclasses.replace(toy_model.cfg, d_mlp=4 * toy_model.cfg.d_model, mlp=kind, norm="layernorm",
                                  bias=True, n_layers=2)
        model = random_model(cfg, seed=3).eval()
        tr = model.trace("a fluffy blue creature")
        act = check_mlp(model, tr, 1, 3)
        assert act.gate is None and act.d_mlp == 256


def test_mlp_lesson_refuses_the_toy(make_inputs):
    from attention_manim.model.errors import UserError

    with pytest.raises(UserError) as e:
        setting_of(make_inputs(), "mlp")
    assert "no MLP" in str(e.value) and "smollm2" in (e.value.hint or "")


def test_head_differences_are_total_variation():
    from attention_manim.scenes.plans.head_split import head_differences

    mask = ~np.tril(np.ones((3, 3), bool))  # causal: the first row has no choice and is left out
    a = np.array([[1, 0, 0], [1, 0, 0], [0.5, 0.5, 0]])
    b = np.array([[1, 0, 0], [0, 1, 0], [0.5, 0.5, 0]])
    d = head_differences((a, a, b), (mask,) * 3)
    assert d[0, 1] == 0 and d[0, 2] == pytest.approx((1.0 + 0.0) / 2) and d[2, 0] == d[0, 2]


def test_head_split_claim_follows_the_measurement(make_inputs):
    """The caption says two heads look alike only when their rows really differ by less than ALIKE;
    the closest and farthest pairs are the measured extremes, the numbers the caption quotes."""
    from attention_manim.scenes.plans.head_split import ALIKE, head_differences

    plan = plan_head_split(setting_of(make_inputs(), "head_split_merge"))
    d = head_differences(plan.patterns, plan.masks)
    np.testing.assert_allclose(plan.differences, d)
    off = [d[a, b] for a in range(plan.n_heads) for b in range(a + 1, plan.n_heads)]
    assert d[plan.closest] == min(off) and d[plan.farthest] == max(off)
    assert plan.alike == (min(off) < ALIKE)
    # by hand, one row: half the summed absolute difference of the two heads' weights
    (a, b), q = plan.closest, plan.focus
    row = 0.5 * np.abs(plan.patterns[a][q] - plan.patterns[b][q]).sum()
    assert 0 <= row <= 1


def test_head_split_farthest_pair_recomputed_from_the_scores(make_inputs):
    """The toy's frame 05 says "farthest: heads 2 and 3, 1.00 ... averaged over the 7 queries that see
    more than one word". Recomputed here from each head's raw q·k/√d scores (softmax per query, the
    mask applied), not from the plan: the mean total variation over the queries with a choice, and
    the count those queries have. With the first query (which sees only itself, the same in every
    head) the mean could not reach 1: the footnote must name the queries it averages."""
    from attention_manim.scenes.chapters.head_split import fixed

    s = setting_of(make_inputs(), "head_split_merge")
    plan = plan_head_split(s)
    heads = s.trace.layers[s.head.layer].heads
    n = len(s.trace.tokens)
    w = []
    for h in heads:
        sc = np.where(np.tril(np.ones((n, n), bool)), np.asarray(h.scores, np.float64), -np.inf)
        e = np.exp(sc - sc.max(axis=1, keepdims=True))
        w.append(e / e.sum(axis=1, keepdims=True))  # [query, key]: each query's weights (a column on screen)
    chosen = [q for q in range(n) if q > 0]  # causal: query 0 sees only key 0
    assert plan.averaged == len(chosen) == n - 1 == 7
    c, e = plan.farthest
    tv = 0.5 * np.abs(w[c] - w[e]).sum(axis=1)
    assert tv[0] == pytest.approx(0.0, abs=1e-9)  # the first query: the same weight in both heads
    assert plan.differences[c, e] == pytest.approx(tv[chosen].mean(), abs=1e-6)
    assert fixed(tv[chosen].mean(), 2) == "1.00" and (c, e) == (2, 3)
    assert tv.mean() <= (n - 1) / n + 1e-9  # over all 8 queries it could not read 1.00
    # the footnote names the count and the queries, never "rows", in every language
    from attention_manim.scenes.i18n import Say

    for lang, word in (("en", "queries"), ("ko", "쿼리"), ("pt", "queries")):
        note = Say(lang)("blocks.head_split.tv_scale", count=plan.averaged)
        assert "7" in note and word in note
        assert not any(r in note for r in ("row", "행", "linha"))


@pytest.mark.render
def test_head_split_renders_on_the_toy(make_inputs, render_scene):
    scene, frame = render_scene(load_all()["head_split_merge"], make_inputs(lang="ko"))
    drawn = scene.stage.drawn["head_split"]
    plan = scene.plans[0]
    assert len(drawn["q_bar"].boxes) == plan.n_heads and len(drawn["k_bar"].boxes) == plan.n_kv_heads
    assert len(drawn["grids"]) == len(plan.grid_heads) == min(plan.n_heads, 4)
    # every grid carries its columns' token labels; the first its rows' too
    n = len(plan.tokens)
    assert all(len(g.shown_labels["cols"]) == n for g in drawn["grids"])
    assert len(drawn["grids"][0].shown_labels["rows"]) == n
    # the first grid names its axes: queries in the corner left of its column labels, keys left of its
    # row labels (review 34: unnamed, the grids read as self_attention_steps' matrices transposed)
    from attention_manim.scenes.i18n import Say
    top, side = drawn["grid_axes"]
    first = drawn["grids"][0]
    assert top.original_text == Say("ko")("grid.axes.queries")
    assert side.original_text == Say("ko")("grid.axes.keys")
    assert top.get_right()[0] < first.lines.get_left()[0] and top.get_bottom()[1] > first.lines.get_top()[1]
    assert side.get_right()[0] < first.row_labels.get_left()[0]
    assert min(top.get_left()[0], side.get_left()[0]) >= scene.stage.region("full").left - 1e-6
    # the merged output's entries are signed, as every vector's (output_matrix: "+0.852144")
    figures = [m.original_text for m in drawn["equality"].get_family()
               if hasattr(m, "original_text") and m.original_text[:1] in "+−" and m.original_text[1:2].isdigit()]
    assert len(figures) >= 2 * len([i for i in plan.shown if i is not None])
    # the caption quotes the measured numbers, and says "alike" only when they are
    from attention_manim.scenes.chapters.head_split import fixed
    from attention_manim.scenes.i18n import Say

    captions = " ".join(c for c, _ in scene.caption_log)
    low = fixed(plan.differences[plan.closest], 2)
    assert low in captions and fixed(plan.differences[plan.farthest], 2) in captions
    key = "caption_alike" if plan.alike else "caption_apart"
    a, b = plan.closest
    c, e = plan.farthest
    want = Say("ko")(f"blocks.head_split.{key}", a=a, b=b, c=c, d=e, low=low,
                     high=fixed(plan.differences[plan.farthest], 2))
    assert want in [c for c, _ in scene.caption_log]
    assert frame[..., :3].max() > 100


@pytest.fixture(scope="module")
def smol(smollm2_model):
    model = smollm2_model
    from attention_manim.model.session import ModelSession

    return model, ModelSession(model, "smollm2")


def test_smollm2_split_and_mlp(smol):
    from attention_manim.scenes.plans.mlp import plan_mlp
    from attention_manim.scenes.setting import SceneInputs

    model, tracer = smol
    inputs = SceneInputs(tracer=tracer, model=model.info, sentences=["The Eiffel tower is in"], layer=5, head=4)
    s = setting_of(inputs, "head_split_merge")
    plan = plan_head_split(s)
    check_split(plan, s.trace, 5)
    assert (plan.d_model, plan.n_heads, plan.n_kv_heads, plan.d_head) == (576, 9, 3, 64)
    s = setting_of(inputs, "mlp")
    mp = plan_mlp(s)
    act = check_mlp(model, s.trace, 5, s.trace.n_tokens - 1)
    assert (mp.d_model, mp.d_mlp, mp.kind) == (576, 1536, "swiglu") and act.gate is not None
    # the neurons shown are the most active ones, with their real numbers
    top = set(np.argsort(-np.abs(act.hidden))[:len(mp.neurons)].tolist())
    assert set(mp.neurons) == top
    for n, h, g, u in zip(mp.neurons, mp.hidden, mp.gate, mp.up):
        assert (h, g, u) == (pytest.approx(float(act.hidden[n])), pytest.approx(float(act.gate[n])),
                             pytest.approx(float(act.up[n])))
    # the residual addition E + MLP(E) = E′ is the trace's block output, and its shown sums add up
    np.testing.assert_allclose(mp.after, s.trace.layers[5].residual_out[-1], atol=1e-3)
    assert mp.after_diff < 1e-3
    dec = {"vec": 1, "signed2": 2}[mp.after_kind]
    f = lambda v: f"{float(v):.{dec}f}"  # noqa: E731
    for i in mp.shown:
        if i is not None and mp.after_kind == "vec":
            assert f(float(f(mp.x[i])) + float(f(mp.out[i]))) == f(mp.after[i])


@pytest.mark.render
@pytest.mark.parametrize("lang", ["ko", "pt"])
def test_mlp_renders_on_smollm2_without_english(lang, smol, tmp_path, monkeypatch):
    from attention_manim.scenes.setting import SceneInputs

    from .test_languages import allowed_tokens, foreign, recorded_render

    model, tracer = smol
    inputs = SceneInputs(tracer=tracer, model=model.info, sentences=["The Eiffel tower is in"], lang=lang)
    scene, seen, frame = recorded_render(load_all()["mlp"], inputs, tmp_path, monkeypatch)
    assert scene.plans[0].layer == model.cfg.n_layers // 2  # no layer asked for: the middle one
    tokens = allowed_tokens(scene)
    captions = [c for c, _ in scene.caption_log]
    assert not foreign(seen, tokens, lang) and not foreign(captions, tokens, lang)
    drawn = scene.stage.drawn["mlp"]
    plan = scene.plans[0]
    # the down projection drawn to scale: the matrix d_model × d_mlp, h d_mlp tall, MLP(E) d_model tall
    mat, h, y = drawn["down"].matrix[0], drawn["down"].hidden[0], drawn["down"].result[1]
    assert mat.width / mat.height == pytest.approx(plan.d_mlp / plan.d_model, rel=1e-3)
    assert h.height / y.height == pytest.approx(plan.d_mlp / plan.d_model, rel=1e-3)
    assert [e.value for e in drawn["after"].entries] == pytest.approx([plan.after[i] for i in plan.shown if i is not None])
    # the closing sum's figures in the text's colour, not shaded against the largest of 576 (review 51: all dim grey)
    from manim import ManimColor

    text_hex = ManimColor(scene.stage.theme.text).to_hex()
    assert all(ManimColor(e.get_fill_color()).to_hex() == text_hex for e in drawn["after"].entries)
    assert frame[..., :3].max() > 100
    # a neuron row whose drawn SiLU(g) × u misses its drawn h (two decimals) is marked ≈, and only such a row
    # (review 49: 1.23 × −1.08 = −1.33 beside a drawn −1.34, unmarked); a note says why
    from decimal import Decimal

    def two(x):
        return Decimal(f"{x:.2f}")

    off = [r for r in range(len(plan.neurons))
           if abs(two(plan.gate_act[r]) * two(plan.up[r]) - two(plan.hidden[r])) > Decimal("0.005")]
    table = drawn["neurons"]
    assert table.marked == off and (len(table.rounding) > 0) == bool(off)
    assert off, "the sentence no longer shows a row that needs the mark: pick one that does"
    # ... and a row whose SiLU, taken of the drawn g, is not its drawn SiLU(g) (review 53: SiLU(1.51) = 1.24 beside
    # a drawn 1.23): its SiLU(g) is marked ≈ too, and the note says why
    import math

    from attention_manim.scenes.i18n import Say

    silu_off = [r for r in range(len(plan.neurons))
                if f"{float(two(plan.gate[r])) / (1 + math.exp(-float(two(plan.gate[r])))):.2f}" != f"{plan.gate_act[r]:.2f}"]
    assert table.silu_marked == silu_off
    for r in silu_off:
        assert getattr(table.grid[1 + r][2], "mark", None) is not None
    assert silu_off and Say(lang)("blocks.mlp.rounding_note_silu") in table.rounding.said
    # the brace spans the neurons' rows and their ellipsis, not the header; the arrow from E ends short of the
    # rows' indices and names the norm SmolLM2 applies before the MLP (review 49)
    grid = table.grid
    assert table.brace.get_top()[1] < grid[0].get_bottom()[1] + 0.1 and table.brace.get_bottom()[1] > grid[-1].get_top()[1] - 0.05
    from attention_manim.scenes.i18n import Say

    assert plan.norm == "rmsnorm" and drawn["norm_label"].original_text == Say(lang)("blocks.mlp.norm_rmsnorm")
    indices = [row[0] for row in grid[1:-1]]
    assert all(i.get_left()[0] > drawn["norm_label"].get_right()[0] - 0.3 for i in indices)
    # the first frame: every token into an MLP box of its own, under its word, the focus's in its colour
    from manim.utils.color import ManimColor
    boxes = drawn["per_token"].boxes
    assert len(boxes) == len(plan.tokens)
    for i, b in enumerate(boxes):
        assert b[0].get_x() == pytest.approx(scene.stage.drawn["mlp"]["per_token"][0][i].get_x(), abs=1e-6)
    # the same weights for every token: every box alike, none overlapping the next (review 48)
    assert len({round(b[0].width, 6) for b in boxes}) == 1
    assert all(a[0].get_right()[0] < b[0].get_left()[0] for a, b in zip(boxes, boxes[1:]))
    assert ManimColor(boxes[plan.focus][0].get_stroke_color()) == ManimColor(scene.stage.theme.query)
    # the ␣ on SmolLM2's tokens has its key beside the row, and every count is grouped one way (1,536 beside 1,000)
    assert drawn["space_key"] is not None and "␣" in drawn["space_key"].original_text
    # ... on the title's line where it fits there, and the word row, centred, takes most of the frame's width
    # (review 51: the key on the row's line left the words and their boxes in the frame's left half)
    words, key = drawn["words"], drawn["space_key"]
    assert abs(key.get_y() - drawn["title"].get_y()) < 0.1 and key.get_left()[0] > drawn["title"].get_right()[0] + 0.3
    from attention_manim.scenes.chapters.mlp import WORDS_MAX_FS

    assert words.width > 0.6 * scene.camera.frame_width or words.font_size == pytest.approx(WORDS_MAX_FS)
    assert abs(words.get_x()) < 0.3
    assert not [t for t in seen if "1536" in str(t)] and [t for t in seen if "1,536" in str(t) or "1.536" in str(t)]


@pytest.mark.render
def test_smollm2_key_value_pieces_sit_under_the_query_heads_that_share_them(smol, render_scene):
    """Frame 03 on SmolLM2 drew the 3 key/value pieces under query heads 0-2, while the caption said each
    is shared by 3 query heads: each piece sits under the middle of its group, a bracket over the group."""
    from manim import VGroup

    from attention_manim.scenes.setting import SceneInputs

    model, tracer = smol
    scene, _ = render_scene(load_all()["head_split_merge"], SceneInputs(tracer=tracer, model=model.info,
                                                                        sentences=["The Eiffel tower is in"]),
                            size=(128, 72))
    drawn = scene.stage.drawn["head_split"]
    q, k, v, groups = drawn["q_bar"].boxes, drawn["k_bar"].boxes, drawn["v_bar"].boxes, drawn["kv_groups"]
    assert (len(q), len(k), len(groups)) == (9, 3, 3)
    for g in range(3):
        span = VGroup(*q[3 * g:3 * g + 3])
        assert k[g].get_x() == pytest.approx(span.get_x(), abs=1e-6) == v[g].get_x()
        assert groups[g].get_left()[0] > span.get_left()[0] - 1e-6 and groups[g].get_right()[0] < span.get_right()[0]
        assert groups[g].get_width() > 0.8 * span.get_width()
    # the pieces are drawn to scale (3 × 64 against 9 × 64), so no brace spans them end to end
    assert sum(b.width for b in k) == pytest.approx(sum(b.width for b in q) / 3, rel=1e-3)
    assert not any(type(m).__name__ == "Brace" for m in drawn["kv_note"].get_family())
