"""`low_rank` and `output_matrix`: plans against numpy computed here from the trace, on the toy and
on SmolLM2 (skipped when it is not installed), and tiny renders in en, ko and pt."""

from __future__ import annotations


import numpy as np
import pytest

from attention_manim.scenes.plans.low_rank import plan_low_rank, plan_output_matrix
from attention_manim.scenes.registry import load_all


def setting_of(inputs, name):
    lesson = load_all()[name].lesson
    return lesson.setting(inputs)


def check_low_rank(plan, trace, layer, head):
    ht = trace.head(layer, head)
    product = ht.W_V.astype(np.float64) @ ht.W_O.astype(np.float64)
    s = np.linalg.svd(product, compute_uv=False)
    d_model, d_head = ht.W_V.shape
    assert (plan.layer, plan.head, plan.d_model, plan.d_head) == (layer, head, d_model, d_head)
    np.testing.assert_allclose(plan.product, product, rtol=0, atol=1e-12)
    np.testing.assert_allclose(plan.singular, s, rtol=1e-9, atol=1e-12)
    # at most d_head non-zero: past d_head, zero to machine precision (relative to the largest)
    assert np.all(s[d_head:] <= s[0] * d_model * np.finfo(np.float64).eps)
    assert plan.rank == int((s > s[0] * d_model * np.finfo(np.float64).eps).sum()) <= d_head
    assert plan.largest_zero == pytest.approx(s[d_head:].max())
    np.testing.assert_array_equal(plan.cells, product[np.ix_(plan.rows, plan.rows)])
    assert plan.rows[0] == 0 and plan.rows[-1] == d_model - 1 and len(set(plan.rows)) == len(plan.rows)
    assert plan.full_count == d_model ** 2 and plan.factor_count == 2 * d_model * d_head


def check_output_matrix(plan, trace, layer, focus):
    n_heads = trace.model.n_heads
    heads = [trace.head(layer, h) for h in range(n_heads)]
    concat = np.hstack([h.z.astype(np.float64) for h in heads])
    stacked = np.vstack([h.W_O.astype(np.float64) for h in heads])
    assert concat.shape == (trace.n_tokens, n_heads * heads[0].W_O.shape[0])
    head_sum = sum(h.delta_e.astype(np.float64) for h in heads)
    product = concat @ stacked
    np.testing.assert_allclose(plan.product, product, atol=1e-12)
    np.testing.assert_allclose(plan.head_sum, head_sum, atol=1e-12)
    # the equality itself: rounding alone (float32 weights)
    scale = np.abs(head_sum).max()
    assert np.abs(product - head_sum).max() <= 1e-5 * max(scale, 1.0)
    assert plan.max_diff == pytest.approx(np.abs(product - head_sum).max())
    assert plan.max_diff_focus == pytest.approx(np.abs(product[focus] - head_sum[focus]).max())
    # the layer's ΔE is the heads' sum plus the output bias (the same for every token)
    bias = trace.layers[layer].delta_e.astype(np.float64) - head_sum
    assert plan.bias == pytest.approx(np.abs(bias).max())
    np.testing.assert_allclose(bias, np.broadcast_to(bias[0], bias.shape), atol=1e-4)
    # the shown entries read the same on both sides, at the decimals shown
    d = plan.decimals
    assert d >= 4
    for i in plan.shown:
        assert f"{product[focus, i]:.{d}f}" == f"{head_sum[focus, i]:.{d}f}"
    assert plan.focus == focus and plan.shown[-1] == trace.model.d_model - 1
    # the heat maps' colour scale ends on the smallest and largest entry drawn
    drawn = np.stack([h.W_O.astype(np.float64)[np.ix_(plan.cols, plan.rows)] for h in heads])
    assert plan.low == pytest.approx(drawn.min()) and plan.high == pytest.approx(drawn.max())
    assert plan.scale == pytest.approx(max(-plan.low, plan.high))


def test_low_rank_plan_toy_default_and_other_heads(make_inputs):
    setting = setting_of(make_inputs(), "low_rank")
    layer, head = setting.trace.model.roles["adjective_noun"]
    plan = plan_low_rank(setting)
    check_low_rank(plan, setting.trace, layer, head)
    assert plan.rank == plan.d_head == 16 and plan.bars == 32
    for h in range(setting.trace.model.n_heads):
        s = setting_of(make_inputs(layer=0, head=h, sentences=["they crashed the car"]), "low_rank")
        check_low_rank(plan_low_rank(s), s.trace, 0, h)


def test_output_matrix_plan_toy(make_inputs):
    from attention_manim.scenes.setting import gathering_word

    setting = setting_of(make_inputs(), "output_matrix")
    tr = setting.trace
    ht = tr.head(*tr.model.roles["adjective_noun"])
    plan = plan_output_matrix(setting)
    check_output_matrix(plan, tr, 0, gathering_word(ht.pattern))
    assert tr.tokens[plan.focus] == "creature" and plan.n_heads == 4
    s = setting_of(make_inputs(focus="car", sentences=["they crashed the car"]), "output_matrix")
    check_output_matrix(plan_output_matrix(s), s.trace, 0, s.trace.index_of("car"))
    # head_split_merge writes the same sum (W_O times the heads' outputs side by side) for the same word: the
    # two lessons never differ in a digit they both show (review 37: +0.469496 against +0.469497 at 6 decimals)
    from attention_manim.scenes.plans.head_split import plan_head_split

    split = plan_head_split(setting_of(make_inputs(), "head_split_merge"))
    assert split.focus == plan.focus
    for i in set(plan.shown) & set(split.shown) - {None}:
        d = min(plan.decimals, split.decimals)
        assert f"{plan.product[plan.focus][i]:.{d}f}" == f"{split.merged[i]:.{d}f}" == f"{split.trace_out[i]:.{d}f}"
    assert max(plan.decimals, split.decimals) <= 5


@pytest.fixture(scope="module")
def smol(smollm2_model):
    model = smollm2_model
    from attention_manim.model.session import ModelSession

    session = ModelSession(model, "smollm2")
    return session.info, session


def test_plans_on_smollm2(smol):
    from attention_manim.scenes.setting import SceneInputs

    info, tracer = smol
    inputs = SceneInputs(tracer=tracer, model=info, sentences=["The cat sat on the mat because it was tired"],
                         layer=5, head=4, focus="mat")
    s = setting_of(inputs, "low_rank")
    plan = plan_low_rank(s)
    check_low_rank(plan, s.trace, 5, 4)
    assert (plan.d_model, plan.d_head) == (576, 64) and plan.rank == 64 and plan.bars == 128
    s = setting_of(inputs, "output_matrix")
    om = plan_output_matrix(s)
    check_output_matrix(om, s.trace, 5, s.trace.index_of("mat"))
    assert om.n_heads == 9 and om.stacked.shape == (9 * 64, 576)


@pytest.mark.render
@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_low_rank_renders(lang, make_inputs, render_scene):
    scene, frame = render_scene(load_all()["low_rank"], make_inputs(lang=lang))
    assert frame.any() and scene.chapters_played == ["low_rank"]
    plan = scene.plans[0]
    d = scene.stage.drawn["low_rank"]
    heights = np.array([b.height for b in d["bars"].bars])
    shown = plan.singular[: plan.bars]
    # bar heights follow the singular values; the zero ones are hairlines
    nz = shown > plan.tolerance
    np.testing.assert_allclose(heights[nz] / heights[0], shown[nz] / shown[0], rtol=1e-6)
    assert np.all(heights[~nz] < 0.02) and nz.sum() == plan.d_head
    from manim import Text

    assert len(d["heat"]) == len(plan.rows) ** 2
    # an upright axis with round ticks from 0 (review 49: a lone tick at the largest value), each at its height
    ticks = d["bars"].axis.tick_labels
    values = [t.value for t in ticks]
    assert values[0] == 0 and len(values) >= 3 and values[-1] <= shown[0]
    base = d["bars"].bars[0].get_bottom()[1]
    for tick, value in zip(d["bars"].axis.ticks, values):
        assert tick.get_y() - base == pytest.approx(heights[0] * value / shown[0], abs=1e-6)
    # σᵢ names the heights: left of the tick labels, halfway up (review 50: under the first bar it named the x line)
    name = d["bars"].axis_name
    assert name.get_right()[0] < ticks.get_left()[0]
    assert ticks[0].get_y() < name.get_y() < ticks[-1].get_y()
    # the non-zero bars' heading clears the tick labels (pt's ran over "1.51")
    heading = d["bars"].notes[0]
    assert heading.get_left()[0] > ticks.get_right()[0] + 0.1 or heading.get_bottom()[1] > ticks.get_top()[1]
    # and short of the divider after the non-zero bars (review 50, pt)
    assert heading.get_right()[0] < d["bars"].divider.get_x()
    # the toy's equal bars are explained on the frame, inside it
    from attention_manim.scenes.i18n import Say

    note = d["bars"].groups
    shown_text = "".join(m.text for m in note.get_family() if isinstance(m, Text))
    assert shown_text.replace(" ", "") == \
        Say(lang)("low_rank.low_rank.toy_groups").replace(" ", "").replace("\u00a0", "")
    assert note.get_bottom()[1] > d["rank_note"].get_top()[1] and note.get_right()[0] < 7.1
    # within the chart's width, clear of the heat map's notes on the left (review 50, pt: they touched)
    assert note.get_left()[0] >= d["bars"].bars.get_left()[0] - 1e-6 > d["heat_notes"].get_right()[0]
    # the colour key runs from the smallest to the largest entry drawn, coloured as the cells are, 0 marked
    # (a three-swatch key had drawn 0 in the positive colour)
    key = d["legend"]
    assert (key.low, key.high) == (pytest.approx(plan.cells.min()), pytest.approx(plan.cells.max()))
    assert [m.value for m in key.end_mobs] == pytest.approx([plan.cells.min(), plan.cells.max()])
    assert key.zero_mob is not None and key.zero_mob.shown == "0"
    # the last caption block has its own step on screen: the rank, written under the chart
    rank_text = "".join(m.text for m in d["rank_note"].get_family() if isinstance(m, Text))
    assert d["rank_note"].get_top()[1] < d["bars"].get_bottom()[1] and str(plan.rank) in rank_text
    if lang == "ko":
        assert all(any("\uac00" <= ch <= "\ud7a3" for ch in c) for c, _ in scene.caption_log)


@pytest.mark.render
@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_output_matrix_renders(lang, make_inputs, render_scene):
    scene, frame = render_scene(load_all()["output_matrix"], make_inputs(lang=lang))
    assert frame.any() and scene.chapters_played == ["output_matrix"]
    plan = scene.plans[0]
    d = scene.stage.drawn["output_matrix"]
    tr = scene.setting.trace
    heads = [tr.head(0, h) for h in range(tr.model.n_heads)]
    product = np.hstack([h.z for h in heads]).astype(np.float64) @ np.vstack([h.W_O for h in heads]).astype(np.float64)
    head_sum = sum(h.delta_e.astype(np.float64) for h in heads)
    left, right = d["left"][0].entries, d["right"][0].entries
    assert [m.value for m in left] == pytest.approx(list(product[plan.focus, list(plan.shown)]))
    assert [m.value for m in right] == pytest.approx(list(head_sum[plan.focus, list(plan.shown)]))
    assert [m.shown for m in left] == [m.shown for m in right]  # the same to the last digit shown
    assert len(d["maps"]) == tr.model.n_heads
    # the largest difference is typeset beside its words, as the formulas are (review 47), and is the plan's
    from manim import Text

    from attention_manim.scenes.chapters.beyond_parts import sci
    from attention_manim.scenes.i18n import Say

    figure = d["diff"][1]
    assert not isinstance(figure, Text) and figure.shown == sci(plan.max_diff_focus, Say(lang))
    assert figure.get_left()[0] > d["diff"][0].get_right()[0]
    # the closing block names the one matrix's blocks again, one value-up map over each
    assert len(d["names_again"]) == tr.model.n_heads
    for n, m in zip(d["names_again"], d["maps"]):
        assert abs(n.get_x() - m.get_x()) < 1e-6 and n.get_bottom()[1] > m.get_top()[1]
    # the z's are named under them, in the language, clear of the product's column (review 50: caption only)
    def bare(x):  # (spaces, no-break spaces and the typeset apostrophe aside)
        return x.replace(" ", "").replace("\u00a0", "").replace("’", "'")

    words = bare("".join(m.text for m in d["z_name"].get_family() if isinstance(m, Text)))
    said = Say(lang)("low_rank.output_matrix.z_name", count=tr.model.n_heads, d_head=plan.d_head)
    assert words == bare(said) and str(plan.d_head) in words
    lhs_z = d["z_name"]
    assert lhs_z.get_top()[1] < d["left"].get_center()[1] and lhs_z.get_right()[0] <= d["left"].get_left()[0] - 0.25 + 1e-6


def test_every_lesson_writes_a_tiny_difference_one_way():
    """Reviewers found four ways to write "largest difference" (0.00000023, 2.3×10⁻⁷, 2.3 × 10⁻⁷ typeset,
    1.4e-07): one way now, the language's decimal mark, plain decimals only from 0.01 up."""
    import attention_manim.scenes.registry as registry

    registry.load_all()
    from attention_manim.scenes.chapters.beyond_parts import sci
    from attention_manim.scenes.chapters.beyond_parts import sci_math as typeset
    from attention_manim.scenes.chapters.head_split import tiny
    from attention_manim.scenes.i18n import Say

    for lang, want in (("en", "2.3×10⁻⁷"), ("ko", "2.3×10⁻⁷"), ("pt", "2,3×10⁻⁷")):
        say = Say(lang)
        assert tiny(say, 2.34e-7) == tiny(say, -2.34e-7) == sci(2.34e-7, say) == want
        assert typeset(2.34e-7, say, 28, "#FFFFFF").shown == want
    assert tiny(Say("en"), 0.0123) == "0.012" and tiny(Say("en"), 0.0) == "0"
