"""Flash attention's tiled online softmax (model/flash.py) against ordinary attention computed here,
its intermediates, its memory counts, the plan on a real head of the toy, and a tiny render."""

from __future__ import annotations

import numpy as np
import pytest
from manim import VGroup

from attention_manim.model.flash import flash_attention, peak_floats


def softmax_attention(q, k, v, causal):
    """Ordinary attention, written out here: the whole score matrix, softmax per row, times v."""
    s = (q.astype(np.float64) @ k.T.astype(np.float64)) / np.sqrt(q.shape[1])
    if causal:
        s[np.triu_indices(len(q), 1)] = -np.inf
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n", [1, 5, 7, 8, 13])
@pytest.mark.parametrize("blocks", [(1, 1), (2, 3), (3, 2), (4, 4), (5, 7), (16, 16)])
def test_tiled_equals_ordinary(n, blocks, causal):
    rng = np.random.default_rng(n * 100 + blocks[0] * 10 + blocks[1])
    q, k, v = (rng.normal(scale=2.0, size=(n, 6)).astype(np.float32) for _ in range(3))
    res = flash_attention(q, k, v, *blocks, causal=causal)
    want = softmax_attention(q, k, v, causal)
    assert np.abs(res.output - want).max() < 1e-6
    assert res.max_diff < 1e-6
    # every (query block, key block) pair once; the causal ones wholly in the future skipped
    bq, bk = blocks
    nq, nk = -(-n // bq), -(-n // bk)
    assert len(res.steps) == nq * nk
    future = sum(1 for a in range(nq) for b in range(nk) if b * bk > min((a + 1) * bq, n) - 1)
    assert sum(s.skipped for s in res.steps) == (future if causal else 0)


def test_intermediates_are_the_running_max_sum_and_output():
    rng = np.random.default_rng(7)
    n, d = 7, 4
    q, k, v = (rng.normal(size=(n, d)) for _ in range(3))
    res = flash_attention(q, k, v, 3, 2, causal=True)
    s = q @ k.T / np.sqrt(d)
    s[np.triu_indices(n, 1)] = -np.inf
    for st in res.steps:
        if st.skipped:
            continue
        (r0, r1), (c0, c1) = st.rows, st.cols
        np.testing.assert_array_equal(np.isinf(st.scores), np.isinf(s[r0:r1, c0:c1]))
        seen = s[r0:r1, :c1]
        m = seen.max(axis=1)
        np.testing.assert_allclose(st.m, m, atol=1e-12)
        l = np.exp(seen - m[:, None]).sum(axis=1)
        np.testing.assert_allclose(st.l, l, rtol=1e-12)
        np.testing.assert_allclose(st.O, np.exp(seen - m[:, None]) @ v[:c1], rtol=1e-10, atol=1e-12)
        fin = np.isfinite(st.m_before)
        np.testing.assert_allclose(st.rescale[fin], np.exp(st.m_before[fin] - st.m[fin]), rtol=1e-12)
    # the last step of each query block, divided by l, is the output
    for qb in range(3):
        last = [st for st in res.steps_of(qb) if not st.skipped][-1]
        np.testing.assert_allclose(last.O / last.l[:, None], res.output[slice(*last.rows)], atol=1e-12)


def test_peak_memory_counts():
    # the output (and a query block's running O, rows of it) is counted in neither way: ordinary
    # attention writes its output too (reviewers: "flash 138 with O against ordinary 100 without")
    assert peak_floats(8, 8, 16, 2, 3) == (64, 2 * 3 + 2 * 2)
    assert peak_floats(4096, 4096, 64, 64, 64) == (4096 ** 2, 64 * 64 + 128)
    res = flash_attention(np.ones((5, 3)), np.ones((5, 3)), np.ones((5, 3)), 2, 4)
    assert (res.peak_ordinary, res.peak_tiled) == (25, 2 * 4 + 4)
    with pytest.raises(ValueError):
        flash_attention(np.ones((2, 3)), np.ones((2, 3)), np.ones((2, 3)), 0, 1)


def test_plan_on_a_real_toy_head(make_inputs):
    from attention_manim.scenes.plans.flash import plan_flash
    from attention_manim.scenes.registry import load_all

    setting = load_all()["flash_attention"].lesson.setting(make_inputs())
    plan = plan_flash(setting)
    ht = setting.head_trace()
    # the model's own head output z (ordinary attention in torch) equals the tiled result
    assert np.abs(plan.result.output - ht.z).max() < 1e-6
    assert plan.max_diff_trace == pytest.approx(np.abs(plan.result.output - ht.z.astype(np.float64)).max())
    assert plan.result.causal and plan.result.n_q == setting.trace.n_tokens
    assert plan.q_block == setting.focus_index() // plan.result.block_q
    assert plan.decimals >= 5
    n = setting.trace.n_tokens
    assert plan.result.peak_ordinary == n * n
    assert plan.ctx_ordinary == setting.model.n_ctx ** 2
    # the tiled count said in words: one tile of scores, the running m and l, the running O
    assert plan.mem_tile + plan.mem_ml == plan.result.peak_tiled  # the running O: the output's rows, not counted
    assert (plan.mem_tile, plan.mem_ml, plan.mem_o) == (2 * 3, 2 * 2, 2 * plan.result.d)


@pytest.mark.render
@pytest.mark.parametrize("lang", ["en", "pt"])
def test_flash_renders(lang, make_inputs, render_scene):
    from attention_manim.scenes.registry import load_all

    scene, frame = render_scene(load_all()["flash_attention"], make_inputs(lang=lang))
    drawn = scene.stage.drawn["flash"]
    plan = scene.plans[0]
    assert [t[:2] for t in drawn["tiles"]] == [(s.rows, s.cols) for s in plan.steps]
    # every step's panel stands with its top in one place (review 52: centred, a step with a longer note moved
    # the table up and down as a teacher stepped through)
    tops = drawn["panel_tops"]
    assert len(tops) > 3 and max(tops) - min(tops) < 1e-6
    # while the blocks are told, the grid is drawn cut into tiles of the plan's own block sizes
    n, bq, bk = len(plan.tokens), plan.result.block_q, plan.result.block_k
    assert len(drawn["outlines"]) == -(-n // bq) * -(-n // bk) == plan.n_query_blocks * plan.n_key_blocks
    # the first tile holds bq queries by bk keys (the sentence is longer than either block)
    w, h = drawn["outlines"][0].width, drawn["outlines"][0].height
    assert n >= max(bq, bk) and min(w, h) / max(w, h) == pytest.approx(min(bq, bk) / max(bq, bk), rel=1e-3)
    assert frame[..., :3].max() > 100 and len(scene.caption_log) >= 6
    # the grid names its axes (colour alone had said which were the queries): the queries' name over the
    # row labels, pointing along the columns (video), the keys' name beside the rows
    from attention_manim.scenes.i18n import Say

    top, side = drawn["axis_names"]
    say = Say(lang)
    video = scene.setting.layout == "video" if hasattr(scene.setting, "layout") else True
    assert say("grid.axes.queries" if video else "grid.axes.keys").replace(" ", "") in top.original_text.replace(" ", "")
    assert side.get_right()[0] < top.get_right()[0] + 1e-6 and top.get_bottom()[1] > side.get_top()[1]
    # the memory chart's last line stands above the grid's line under it (review 37: on one baseline they
    # read as one sentence)
    assert drawn["ghost"].original_text.startswith(f"{n} × {n}")
    assert drawn["memory"].get_bottom()[1] > drawn["ghost"].get_top()[1] + 0.1
    # the grid shows what the bars count, in their colours: every cell held by ordinary attention, one tile of
    # mem_bq × mem_bk cells by flash (review 48: the chart stood beside an empty grid)
    from manim import ManimColor

    th = scene.stage.theme
    held, one_tile = drawn["held"], drawn["one_tile"]
    assert len(held) == n * n and all(c.get_fill_opacity() > 0.1 for c in held)
    assert {c.get_fill_color().to_hex() for c in held} == {ManimColor(th.delta_multi).to_hex()}
    cell = held[0].width
    assert sorted([round(one_tile.width / cell), round(one_tile.height / cell)]) == sorted([plan.mem_bq, plan.mem_bk])
    assert one_tile.get_fill_color().to_hex() == ManimColor(th.highlight).to_hex() and one_tile.get_fill_opacity() > 0.1
    # review 44: what flash's count is made of types m, l and O as the table's headers do (upright, "max m
    # and sum l" read as words), and the note's sums stay whole
    from manim import MathTypst

    from attention_manim.scenes.components.text import label

    tag, parts, out_note = drawn["memory"].legend
    typeset = [m for m in VGroup(parts, out_note).get_family() if isinstance(m, MathTypst)]
    assert len(typeset) == 3
    words = [m.original_text for m in VGroup(parts, out_note).get_family() if hasattr(m, "original_text")]
    assert not any(w.strip() in ("m", "l", "O") or " m " in f" {w} " or " l " in f" {w} " for w in words), words
    # the final tiled / the model table is headed by the O entries it shows, over their columns (review 46)
    from attention_manim.scenes.chapters.flash import O_SHOWN

    head, first = drawn["result"][0], drawn["result"][1]
    heads = [m for m in head.get_family() if isinstance(m, MathTypst)]
    assert len(heads) == O_SHOWN
    # as what they are, O divided by l: "O₁" over 0.53 after the panel's O₁ read 1.06 (review 49)
    assert all(len(h.family_members_with_points()) == 6 for h in heads)  # ( O / l ) and the index
    for h, cell in zip(heads, first[2:]):
        assert abs(h.get_right()[0] - cell.get_right()[0]) < 0.05 and h.get_bottom()[1] > cell.get_top()[1]
    # an axis's token labels at one size (review 44: "␣creature" alone shrunk to fit)
    for labels in drawn["token_labels"]:
        ratios = [max(m.width, m.height) / label(m.original_text, 20).width for m in labels if len(m.original_text) > 1]
        assert max(ratios) - min(ratios) < 0.01, ratios


def test_rescale_note_names_its_row():
    """The rescale factor is one row's own (each row's maximum rises by its own amount): the note
    says which query word it is for, in every language."""
    from attention_manim.scenes.i18n import LANGUAGES, load_catalog, template_fields

    for lang in LANGUAGES:
        assert {"word", "rescale", "l", "O"} == template_fields(load_catalog(lang)["blocks.flash.rescaled"]), lang


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_the_rescale_note_sets_l_and_o_as_the_table_does(lang, make_inputs):
    """Review 37: the note's upright "l" read as "old 1" beside the table's italic l. The note types l and O
    as math, as the table's headers do, and keeps its factor on the line of the word before it."""
    from types import SimpleNamespace

    from manim import MathTypst

    from attention_manim.scenes.chapters.flash import Flash
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.flash import plan_flash
    from attention_manim.scenes.registry import load_all
    from attention_manim.scenes.style import DARK

    plan = plan_flash(load_all()["flash_attention"].lesson.setting(make_inputs(lang=lang)))
    steps = [s for s in plan.result.steps if not s.skipped and np.isfinite(s.m_before).any()
             and float(s.rescale[np.isfinite(s.m_before)].min()) < 1.0]
    assert steps, "the toy's sentence rescales at some step"
    panel = Flash.panel(SimpleNamespace(theme=DARK, say=Say(lang)), plan, steps[0])
    note = panel[3]
    symbols = [m for m in note.get_family() if isinstance(m, MathTypst)]
    assert len(symbols) == 2  # l and O, typeset
    words = [m.original_text for m in note.get_family() if hasattr(m, "original_text")]
    assert not any(w.strip() in ("l", "O") or " l " in f" {w} " for w in words), words
    last = note[-1]  # the factor shares its line with a word
    assert len([m for m in last if hasattr(m, "original_text")]) >= 2
    # and the note on O's entries types O₁, O₂ and O as the headers do (review 43)
    entries = panel[2]
    assert len([m for m in entries.get_family() if isinstance(m, MathTypst)]) == 3
    words = [m.original_text for m in entries.get_family() if hasattr(m, "original_text")]
    assert not any("O₁" in w or "O₂" in w or w.strip() == "O" for w in words), words


def test_the_flash_panel_names_a_tie_it_cannot_write(make_inputs):
    """Where two decimals do not fit, the step's panel names the tied query's two scores; where they
    do, it does not, and its m column is written to the tiles' decimals."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.flash import Flash, tied_queries
    from attention_manim.scenes.i18n import LANGUAGES, Say, load_catalog, template_fields
    from attention_manim.scenes.plans.flash import plan_flash
    from attention_manim.scenes.registry import load_all
    from attention_manim.scenes.style import DARK

    for lang in LANGUAGES:
        assert {"word", "shown", "a", "b"} == template_fields(load_catalog(lang)["blocks.flash.tie"]), lang
    plan = plan_flash(load_all()["flash_attention"].lesson.setting(make_inputs(lang="en")))
    tied = tied_queries(plan.result.steps)
    assert tied, "the toy's default sentence has a tie (creature's 5.29 and 5.34)"
    i, (a, b) = next(iter(tied.items()))
    step = next(s for s in plan.result.steps if not s.skipped and s.rows[0] <= i < s.rows[1]
                and np.isclose(np.ravel(s.scores[i - s.rows[0]]), a).any()
                and np.isclose(np.ravel(s.scores[i - s.rows[0]]), b).any())
    stage = SimpleNamespace(theme=DARK, say=Say("en"))

    def texts(decimals, tie):
        return [m.original_text for m in Flash.panel(stage, plan, step, decimals, tie).get_family()
                if hasattr(m, "original_text")]
    named = " ".join(texts(1, tied))
    assert f"{a:.2f}" in named and f"{b:.2f}" in named and f"{a:.1f}" in named
    two = texts(2, {})
    assert not any(f"{a:.2f} and" in t for t in two)
    m = float(step.m[i - step.rows[0]])
    assert f"{m:.2f}".replace("-", "−") in two


def test_the_flash_panel_says_when_its_rounded_scores_give_another_l(make_inputs):
    """creature's tile shows 5.29 and 5.34, whose exponentials sum to 1.95, beside l = 1.96 from the unrounded
    scores (review 50): the panel gives both sums; a row whose rounded scores give its l gets no note."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.flash import Flash, tied_queries
    from attention_manim.scenes.i18n import LANGUAGES, Say, load_catalog, template_fields
    from attention_manim.scenes.plans.flash import plan_flash
    from attention_manim.scenes.registry import load_all
    from attention_manim.scenes.style import DARK

    for lang in LANGUAGES:
        assert {"word", "l", "sum", "value", "shown"} == template_fields(load_catalog(lang)["blocks.flash.l_unrounded"])
        assert {"word", "l", "sum", "value", "shown", "others"} == template_fields(
            load_catalog(lang)["blocks.flash.l_unrounded_more"])
    plan = plan_flash(load_all()["flash_attention"].lesson.setting(make_inputs(lang="en")))
    stage = SimpleNamespace(theme=DARK, say=Say("en"))
    steps = [s for s in plan.result.steps if not s.skipped]
    noted = quiet = 0
    for s in steps:  # l by hand: Σ exp(score − m) over the row's rounded scores of this tile and the earlier ones
        decimals = 2 if any(s.rows[0] <= i < s.rows[1] for i in tied_queries(plan.result.steps)) else 1
        texts = " ".join(m.original_text for m in Flash.panel(stage, plan, s, decimals, {}).get_family()
                         if hasattr(m, "original_text"))
        said = texts.replace("\u00a0", " ")
        seen = [t for t in steps if t.q_block == s.q_block and t.k_block <= s.k_block]
        missed = []
        for a in range(s.rows[1] - s.rows[0]):
            row = np.concatenate([np.asarray(t.scores[a], dtype=float) for t in seen])
            row = np.round(row[np.isfinite(row)], decimals)
            if not len(row):
                continue
            by_hand = np.exp(row - row.max()).sum()
            written = f"{float(s.l[a]):.2f}"
            if f"{by_hand:.2f}" != written:
                missed.append((a, by_hand, written))
        if missed:  # the first such row with both sums, the others named in the same note
            noted += 1
            a, by_hand, written = missed[0]
            note = said[said.index("unrounded"):]
            assert f" {by_hand:.2f}" in note and written in note, texts
            assert all(f"“{plan.tokens[s.rows[0] + b]}”" in note for b, _, _ in missed[1:]), texts
        else:
            quiet += 1
            assert "unrounded" not in texts
    assert noted and quiet, "the toy's sentence has both cases (creature's 1.96 against 1.95)"
