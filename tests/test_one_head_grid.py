"""`dot_products`, `softmax`, `masking`, `context_size`, `attention_formula`, `attention_pattern`:
what they draw is the trace, at the shown rounding.

Each scene is rendered once per sentence as a tiny PNG (manim jumps to the end: all the Python
runs, only the last frame is rasterized). The numbers it recorded (`scene.grid_rec`) and the grid
it leaves are compared with arrays read straight from the trace; expectations never come from
the scene's own output.
"""

from __future__ import annotations

import numpy as np
import pytest
from manim import DL, UR, config, tempconfig

from scenes.attention_pattern import AttentionPattern
from scenes.base import SceneInputs
from scenes.one_head_grid import (
    AttentionFormulaScene, ContextSize, DotProducts, Masking, Softmax, continuation_texts,
)
from scenes.style import fmt_score, fmt_vec, fmt_weight
from .conftest import expected_focus, tiny_config

FLUFFY = ("a fluffy blue creature roamed the verdant forest", None)  # focus picked from the trace
FOX = ("the tiny red fox saw a huge green tower", "fox")
SHEEP = ("the woolly green sheep ate a crimson apple", "apple")
CASES = {"fluffy": FLUFFY, "fox": FOX, "sheep": SHEEP}
SIZE = (192, 108)


def render(scene_cls, tracer, tmp, sentence, focus, size=SIZE, **kw):
    with tempconfig(tiny_config(tmp, size)):
        scene = scene_cls(SceneInputs(tracer=tracer, sentences=[sentence], focus=focus, **kw))
        scene.render()
        frame = np.array(scene.renderer.get_frame())
        frame_state = (scene.camera.frame.get_center().copy(), scene.camera.frame.width,
                       config.frame_width, config.frame_height)
    scene.frame_state = frame_state
    return scene, frame


@pytest.fixture(scope="module")
def rendered(tracer, tmp_path_factory):
    cache = {}

    def get(scene_cls, case, size=SIZE, **kw):
        key = (scene_cls, case, size, tuple(sorted(kw.items())))
        if key not in cache:
            sentence, focus = CASES[case] if isinstance(case, str) else case
            cache[key] = render(scene_cls, tracer, tmp_path_factory.mktemp("grid"), sentence, focus, size, **kw)
        return cache[key]

    return get


# --- expectations from the trace alone ----------------------------------------------------------


def head_of(tracer, case, layer=0, head=0):
    sentence, focus = CASES[case]
    t = tracer(sentence)
    return t, t.head(layer, head)


def expected_tops(head, i):
    """The keys (other than the query itself) with at least 0.1 of its weight, strongest first."""
    row = head.pattern[i]
    order = [int(j) for j in np.argsort(-row) if row[j] >= 0.1 and j != i]
    return order[:3] or [int(np.argmax(row))]


def check_numbers(mobs: dict, values, kind):
    """{cell: number mobject} shows values[cell] at the shown rounding."""
    fmt = {"score": fmt_score, "weight": fmt_weight, "vec": fmt_vec}[kind]
    assert mobs, "no numbers drawn"
    for cell, m in mobs.items():
        want = float(values[cell])
        assert m.value == pytest.approx(want, abs=1e-5), (cell, m.value, want)
        assert m.shown == fmt(want), (cell, m.shown, fmt(want))
        assert m.text == m.shown


def visible_cells(head):
    return {tuple(c) for c in np.argwhere(~head.mask).tolist()}


def at_default_frame(scene):
    center, width, fw, fh = scene.frame_state
    return np.allclose(center, 0, atol=1e-6) and width == pytest.approx(fw)


def pixel(frame, point):
    """RGBA of the frame at scene point (x, y)."""
    h, w = frame.shape[:2]
    x = int(round((point[0] / config.frame_width + 0.5) * (w - 1)))
    y = int(round((0.5 - point[1] / config.frame_height) * (h - 1)))
    return frame[y, x]


# --- dot products ---------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_dot_products_real_scores_and_spotlight(rendered, tracer, case):
    scene, _ = rendered(DotProducts, case)
    t, h = head_of(tracer, case)
    rec = scene.grid_rec["dot_products"]
    i = expected_focus(t, CASES[case][1], h)
    assert rec["focus"] == i
    # every visible pair shows its real score (keys after the query wait for the masking step)
    assert set(rec["scores"]) == visible_cells(h)
    check_numbers(rec["scores"], h.scores, "score")
    # the close-up: the real dot product of the key and the query, then divided by √d_head
    (q, k) = rec["card_cell"]
    qk, sc = rec["card_numbers"]
    assert (q, k) == (i, expected_tops(h, i)[0])
    assert qk.value == pytest.approx(float(h.q[i] @ h.k[k]), abs=1e-5) and qk.shown == fmt_vec(qk.value)
    assert sc.value == pytest.approx(qk.value / np.sqrt(h.q.shape[1]), abs=1e-4)
    # the spotlight: the focus's largest weights, and its lowest visible score for contrast
    tops = expected_tops(h, i)
    others = [j for j in range(len(t.tokens)) if not h.mask[i, j] and j not in tops + [i]]
    contrast = min(others, key=lambda j: h.scores[i, j]) if others else None
    want = [(i, j) for j in tops] + ([(i, contrast)] if contrast is not None else [])
    assert rec["spotlit"] == want == rec["spotlight_state"]
    assert [m.value for m in rec["note_numbers"]] == pytest.approx([h.scores[c] for c in want], abs=1e-5)
    # the final picture: dots sized by |score| over the visible cells
    g = rec["grid"]
    assert g.content_kind == "score_dots"
    vis = ~h.mask
    s = np.where(vis, h.scores, 0.0)
    expect = np.sqrt(np.abs(s) / np.abs(s[vis]).max())
    r = g.score_dot_radii / g.score_dot_radii.max()
    assert np.allclose(r, expect / expect.max(), atol=1e-6)
    assert at_default_frame(scene)


def test_dot_products_picks_other_cells_for_another_sentence(rendered, tracer):
    a, _ = rendered(DotProducts, "fluffy")
    b, _ = rendered(DotProducts, "sheep")
    t, h = head_of(tracer, "sheep")
    i = t.tokens.index("apple")
    assert b.grid_rec["dot_products"]["spotlit"][0] == (i, expected_tops(h, i)[0])
    assert a.grid_rec["dot_products"]["spotlit"] != b.grid_rec["dot_products"]["spotlit"]


# --- softmax ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_softmax_columns_real_and_sum_to_one(rendered, tracer, case):
    scene, _ = rendered(Softmax, case)
    t, h = head_of(tracer, case)
    rec = scene.grid_rec["softmax"]
    i = expected_focus(t, CASES[case][1], h)
    assert rec["columns"][0] == i and 2 <= len(rec["columns"]) <= 3
    check_numbers(rec["scores"], h.scores, "score")
    for q, sm in zip(rec["columns"], rec["strips"]):
        keys = sm.shown_keys
        assert keys == [j for j in range(len(t.tokens)) if not h.mask[q, j]]  # the visible keys only
        shown = sm.shown_numbers  # after normalize: the weights
        assert [m.value for m in shown] == pytest.approx([h.pattern[q, j] for j in keys], abs=1e-6)
        assert [m.shown for m in shown] == [fmt_weight(h.pattern[q, j]) for j in keys]
        assert [m.value for m in sm.score_mobs] == pytest.approx([h.scores[q, j] for j in keys], abs=1e-6)
        assert sm.sum_mob.shown == "1.00" and sm.sum_mob.value == pytest.approx(h.pattern[q].sum())
    assert set(rec["weights"]) == visible_cells(h)
    check_numbers(rec["weights"], h.pattern, "weight")
    assert [m.shown for m in rec["sums"]] == ["1.00"] * len(t.tokens)
    assert [m.value for m in rec["sums"]] == pytest.approx(h.pattern.sum(axis=1), abs=1e-6)
    g = rec["grid"]
    assert g.content_kind == "dots"
    assert np.allclose(g.dot_radius_fraction / g.dot_radius_fraction.max(),
                       np.where(h.mask | (h.pattern < g.min_weight), 0, np.sqrt(h.pattern)) / np.sqrt(h.pattern.max()))
    assert at_default_frame(scene)


# --- masking ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_masking_minus_infinity_then_zero_and_sums_of_one(rendered, tracer, case):
    scene, frame = rendered(Masking, case, size=(384, 216))
    t, h = head_of(tracer, case)
    n = len(t.tokens)
    rec = scene.grid_rec["masking"]
    # real scores in every cell first, the blocked ones too
    assert set(rec["scores"]) == {(q, k) for q in range(n) for k in range(n)}
    check_numbers(rec["scores"], h.scores, "score")
    # then −∞ exactly in the blocked cells
    blocked = {tuple(c) for c in np.argwhere(h.mask).tolist()}
    assert set(rec["minus_inf"]) == blocked
    assert all(m.shown == "−∞" and m.value == -np.inf for m in rec["minus_inf"].values())
    assert set(rec["scores_after_mask"]) == visible_cells(h)
    # one column's softmax: −∞ in, 0.00 out, Σ 1.00
    sm = rec["strip"]
    q = sm.query
    assert [m.shown for m in sm.score_mobs] == ["−∞" if h.mask[q, j] else fmt_score(h.scores[q, j]) for j in sm.shown_keys]
    assert [m.value for m in sm.weight_mobs] == pytest.approx([h.pattern[q, j] for j in sm.shown_keys], abs=1e-6)
    assert all(m.shown == "0.00" for j, m in zip(sm.shown_keys, sm.weight_mobs) if h.mask[q, j])
    assert sm.sum_mob.shown == "1.00"
    # the end: weights only where allowed, blocked cells empty, every query sums to 1
    g = rec["grid"]
    assert set(rec["weights"]) == visible_cells(h) and g.mask_state == "cleared"
    check_numbers(rec["weights"], h.pattern, "weight")
    assert not any(m.has_points() for m in g.mask_layer.submobjects)
    assert [m.shown for m in rec["sums"]] == ["1.00"] * n
    # and on the frame: blocked cells are background, allowed cells with weight 1 have ink
    bg = np.array([0, 0, 0])
    for (qq, kk) in blocked:
        box = g.cell_center(qq, kk)
        assert np.abs(pixel(frame, box)[:3].astype(int) - bg).max() < 40, (qq, kk)
    assert at_default_frame(scene)


# --- context size -----------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_context_size_grows_to_a_real_long_pattern(rendered, tracer, case):
    scene, _ = rendered(ContextSize, case)
    t, h = head_of(tracer, case)
    rec = scene.grid_rec["context_size"]
    n, N = rec["n"], rec["N"]
    assert n == len(t.tokens) and N >= 50 and N <= t.model.n_ctx
    _, long_text = continuation_texts(t.tokens, t.model.n_ctx)
    lt = tracer(long_text)
    lh = lt.head(0, 0)
    assert tuple(rec["long_trace"].tokens) == lt.tokens and lt.tokens[:n] == t.tokens
    # the short grid is the long grid's first block: the mask makes it so
    assert np.allclose(lh.pattern[:n, :n], h.pattern, atol=1e-5)
    big = rec["big"]
    assert np.allclose(big.pattern, lh.pattern) and big.n == N
    assert rec["short_count"]["cells"] == n * n and rec["long_count"]["cells"] == N * N
    assert rec["long_count"]["open"] == int((~lh.mask).sum()) == N * (N + 1) // 2
    assert f"{N * N:,}" in rec["long_count"]["texts"][0]
    # the close-up names the real strongest keys with their real weights
    q, ks = rec["close_query"], rec["close_keys"]
    assert [m.value for m in rec["close_numbers"]] == pytest.approx([lh.pattern[q, j] for j in ks], abs=1e-6)
    assert ks == expected_tops(lh, q)
    # the dots are the long pattern's, blocked cells empty; the camera is back, all in frame
    assert all(not lh.mask[c] and lh.pattern[c] >= big.min_weight for c in rec["big_dots"])
    assert at_default_frame(scene)
    w, hh = config.frame_width / 2, config.frame_height / 2
    assert big.get_left()[0] >= -w and big.get_right()[0] <= w and big.get_bottom()[1] >= -hh and big.get_top()[1] <= hh


def test_context_size_long_sentence_grows_from_its_own_start(tracer):
    from model.toy_world import EXAMPLES

    t = tracer(EXAMPLES["long"])
    short, long = continuation_texts(t.tokens, t.model.n_ctx)
    assert short.split() == list(t.tokens[:8]) and long.split() == list(t.tokens)


# --- formula ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case,layout", [("fluffy", "video"), ("fox", "paper")])
def test_formula_ties_symbols_to_the_grid(rendered, tracer, case, layout):
    scene, _ = rendered(AttentionFormulaScene, case, layout=layout)
    t, h = head_of(tracer, case)
    rec = scene.grid_rec["formula"]
    d = h.q.shape[1]
    i = expected_focus(t, CASES[case][1], h)
    assert rec["d_head"] == d and rec["denominator"] == f"√{d}"
    half_h = scene.frame_state[3] / 2
    assert -half_h <= rec["formula"].get_bottom()[1] and rec["formula"].get_top()[1] <= half_h  # fully on screen
    assert f"√{d}={np.sqrt(d):g}" in rec["sqrt_text"]  # Text drops the spaces
    check_numbers(rec["scores"], h.scores, "score")
    # the focus mixes the values with its real weights (its largest ones)
    keys = rec["mix_keys"]
    assert set(keys) == {int(j) for j in np.argsort(-h.pattern[i])[:3] if h.pattern[i, j] >= 0.01}
    assert [m.value for m in rec["mix_numbers"]] == pytest.approx([h.pattern[i, j] for j in keys], abs=1e-6)
    # the formula and grid end in the other orientation, the exact transpose of the first
    g, g2 = rec["grid"], rec["other_grid"]
    assert g.layout == layout and g2.layout != layout
    assert rec["formula"].form == ("video" if layout == "video" else "paper")
    assert rec["other_formula"].form != rec["formula"].form
    for q in range(len(t.tokens)):
        for k in range(len(t.tokens)):
            a, b = g.cell_center(q, k) - g.cell_center(0, 0), g2.cell_center(q, k) - g2.cell_center(0, 0)
            # row/column swap: the sign pattern of the offsets swaps axes
            assert (abs(a[0]) > 1e-6) == (abs(b[1]) > 1e-6) and (abs(a[1]) > 1e-6) == (abs(b[0]) > 1e-6)
    assert g2 in scene.mobjects and scene.grid is g2
    assert at_default_frame(scene)


# --- the finished pattern -----------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_attention_pattern_dots_follow_the_weights_on_pixels(rendered, tracer, case):
    scene, frame = rendered(AttentionPattern, case, size=(384, 216))
    t, h = head_of(tracer, case)
    rec = scene.grid_rec["pattern"]
    g = rec["grid"]
    i = expected_focus(t, CASES[case][1], h)
    assert rec["tops"] == expected_tops(h, i)
    assert [m.value for m in rec["note_numbers"]] == pytest.approx([h.pattern[i, j] for j in rec["tops"]], abs=1e-6)
    # the drawn circles: one per cell with weight, radius ∝ √weight (area ∝ weight)
    pts = g.dots_mobject.points.reshape(-1, 4 * g.dot_arcs, 3)
    radii = (pts.max(axis=1)[:, 0] - pts.min(axis=1)[:, 0]) / 2
    cells = [(q, k) for q in range(len(t.tokens)) for k in range(len(t.tokens))
             if not h.mask[q, k] and h.pattern[q, k] >= g.min_weight]
    assert len(radii) == len(cells)
    want = {c: np.sqrt(h.pattern[c]) for c in cells}
    for c, r in zip(g.dot_cells, radii):
        assert r / radii.max() == pytest.approx(want[c] / max(want.values()), rel=1e-3)
    # pixels: the biggest weights are bright at their cell centres, blocked cells are background
    for q in range(len(t.tokens)):
        for k in range(len(t.tokens)):
            px = pixel(frame, g.cell_center(q, k))[:3].astype(int)
            if h.mask[q, k]:
                assert px.max() < 40, ("blocked cell has ink", q, k)
            elif h.pattern[q, k] > 0.4:
                assert px.min() > 150, ("a heavy weight shows no dot", q, k, h.pattern[q, k])


def test_attention_pattern_paper_layout_is_the_transpose(rendered, tracer):
    scene, _ = rendered(AttentionPattern, "fluffy", layout="paper")
    g = scene.grid_rec["pattern"]["grid"]
    assert g.layout == "paper"
    t, h = head_of(tracer, "fluffy")
    # in the paper layout a query's weights run along its row: same y, growing x
    c0, c1 = g.cell_center(3, 1), g.cell_center(3, 2)
    assert c0[1] == pytest.approx(c1[1]) and c1[0] > c0[0]


# --- long sentences stay legible ----------------------------------------------------------------------


def test_long_sentence_scenes_run_and_abbreviate(tracer, tmp_path):
    from model.toy_world import EXAMPLES

    sentence = EXAMPLES["long"]
    for cls in (DotProducts, Softmax):
        scene, _ = render(cls, tracer, tmp_path / cls.__name__, sentence, "rabbit", size=(160, 90))
        g = scene.grid
        assert g.n == len(tracer(sentence).tokens)
        assert g.label_step != (1, 1) or g.top_labels_rotated
        for which in ("rows", "cols"):  # labels never overlap
            b = g.label_boxes(which)
            if which == "rows":
                b = b[np.argsort(-b[:, 1])]
                assert np.all(b[:-1, 1] >= b[1:, 3] - 1e-6)
            else:
                b = b[np.argsort(b[:, 0])]
                assert np.all(b[1:, 0] >= b[:-1, 2] - 1e-6)
        assert at_default_frame(scene)


# --- the component pieces these scenes added ------------------------------------------------------------


def test_show_columns_changes_one_column_and_leaves_the_others_steady(tracer):
    from scenes.components.attention_grid import AttentionGrid

    t, h = head_of(tracer, "fluffy")
    g = AttentionGrid(h, t.tokens).set_mask("cleared")
    g.use_common_number_font()
    g.set_content("scores")
    step = g.show_columns({3: "weights"})
    step.begin()  # plans the step: pours the new content, at alpha 0
    live = g.drawn_content
    steady = [s for s in live if s.steady]
    fading = [s for s in live if not s.steady]
    assert steady and fading
    assert all(s.get_fill_opacity() > 0.5 for s in steady)  # unchanged columns: at full from the start
    assert all(s.get_fill_opacity() == 0 for s in fading)  # the changed column fades in
    step.finish()
    assert g.column_kinds[3] == "weights" and g.column_kinds[0] == "scores"
    for (q, k), m in g.number_mobs.items():
        assert m.value == pytest.approx(h.pattern[q, k] if q == 3 else h.scores[q, k])
    with pytest.raises(ValueError):
        g.set_content("dots")
        g.set_content("columns", columns={0: "weights"})  # the others show dots: name every column


def test_score_dots_signed_and_sized_by_the_real_scores(tracer):
    from scenes.components.attention_grid import AttentionGrid

    t, h = head_of(tracer, "fox")
    g = AttentionGrid(h, t.tokens).set_mask("cleared").set_content("score_dots")
    vis = ~h.mask
    pos = [s for s in g.drawn_content if s.get_fill_opacity() > 0]
    rings = [s for s in g.drawn_content if s.get_fill_opacity() == 0]
    n_pos = int((vis & (h.scores > 0)).sum())
    n_neg = int((vis & (h.scores < 0)).sum())
    assert sum(len(s.points) for s in pos) == n_pos * 4 * g.dot_arcs
    assert sum(len(s.points) for s in rings) == n_neg * 4 * g.dot_arcs
    r = g.score_dot_radii
    assert np.all(r[h.mask] == 0)
    top = np.abs(h.scores[vis]).max()
    assert np.allclose(r[vis] / r.max(), np.sqrt(np.abs(h.scores[vis]) / top))


def test_symbols_over_the_root_of_d_stay_inside_their_cells(tracer):
    from scenes.components.attention_grid import AttentionGrid

    t, h = head_of(tracer, "fluffy")
    g = AttentionGrid(h, t.tokens).set_mask("cleared")
    g.symbol_denominator = "√16"
    g.set_content("symbols")
    assert len(g.drawn_content) == 4  # K, ·, Q and the fraction bar with √16
    lo, hi = g.lines.get_corner(DL), g.lines.get_corner(UR)
    for s in g.drawn_content:
        assert np.all(s.points[:, 0] >= lo[0]) and np.all(s.points[:, 0] <= hi[0])
        assert np.all(s.points[:, 1] >= lo[1]) and np.all(s.points[:, 1] <= hi[1])


def test_softmax_column_visible_only_lists_the_allowed_keys(tracer):
    from scenes.components.attention_grid import AttentionGrid
    from scenes.components.softmax_column import SoftmaxColumn

    t, h = head_of(tracer, "fluffy")
    g = AttentionGrid(h, t.tokens)
    sm = SoftmaxColumn(g, 3, visible_only=True)
    assert sm.shown_keys == [0, 1, 2, 3] and not sm.gaps
    assert SoftmaxColumn(g, 3).shown_keys == list(range(8))
