"""The grid chapters (`dot_products`, `softmax`, `masking`, `context_size`, `attention_formula`,
`attention_pattern`): what they plan and draw is the trace, at the shown rounding.

Plans are read without rendering. Then each lesson is rendered once per case as a tiny PNG (manim
jumps to the end: all the Python runs, only the last frame is rasterized) and what its chapters
drew (`scene.stage.drawn`) is compared with arrays read straight from the trace; expectations never
come from the code under test. Chains of chapters check the hand-ons (the grid staying on stage,
the query and key columns becoming the grid's labels), and every lesson renders in ko and pt.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pytest
from manim import DL, UR, MovingCameraScene, VGroup, config, tempconfig

from attention_manim.scenes.i18n import Say
from attention_manim.scenes.plans.context_size import context_texts, plan_context_size, with_context_traces
from attention_manim.scenes.plans.grid import plan_dot_products, plan_formula, plan_masking, plan_softmax, root_of
from attention_manim.scenes.setting import resolve
from attention_manim.scenes.style import fmt_score, fmt_score2, fmt_vec, fmt_weight
from attention_manim.scenes.components.text import FORMATTERS

from .conftest import expected_focus, tiny_config

FLUFFY = ("a fluffy blue creature roamed the verdant forest", None)  # focus picked from the trace
FOX = ("the tiny red fox saw a huge green tower", "fox")
SHEEP = ("the woolly green sheep ate a crimson apple", "apple")
CASES = {"fluffy": FLUFFY, "fox": FOX, "sheep": SHEEP}
SIZE = (192, 108)


# --- expectations from the trace alone ------------------------------------------------------------

def head_of(tracer, case, layer=0, head=0):
    sentence, _ = CASES[case]
    t = tracer(sentence)
    return t, t.head(layer, head)


def expected_tops(head, i):
    """The keys (other than the query itself) with at least 0.1 of its weight, strongest first."""
    row = head.pattern[i]
    order = [int(j) for j in np.argsort(-row, kind="stable") if row[j] >= 0.1 and j != i]
    return order[:3] or [int(np.argmax(row))]


def visible_cells(head):
    return {tuple(c) for c in np.argwhere(~head.mask).tolist()}


def score_format(head):
    """The scores' rounding a reader needs: two decimals for the whole grid when, in some query's row,
    two visible keys read the same at one decimal though their weights read differently ("fluffy" and
    "blue" both +5.3 under "creature", 0.48 and 0.50); one decimal otherwise."""
    for q in range(head.scores.shape[0]):
        seen = {}
        for k in range(head.scores.shape[1]):
            if head.mask[q, k]:
                continue
            one, w = fmt_score(float(head.scores[q, k])), fmt_weight(float(head.pattern[q, k]))
            if seen.setdefault(one, w) != w:
                return fmt_score2
    return fmt_score


def check_numbers(mobs: dict, values, kind, head=None):
    """{cell: number mobject} shows values[cell] at the shown rounding (scores: `score_format(head)`)."""
    fmt = score_format(head) if kind == "score" and head is not None else \
        {"score": fmt_score, "weight": fmt_weight, "vec": fmt_vec}[kind]
    assert mobs, "no numbers drawn"
    for cell, m in mobs.items():
        want = float(values[cell])
        assert m.value == pytest.approx(want, abs=1e-5), (cell, m.value, want)
        assert m.shown == fmt(want), (cell, m.shown, fmt(want))
        assert m.text == m.shown


def setting_of(make_inputs, case=None, sentence=None, focus=None, **kw):
    if case is not None:
        sentence, focus = CASES[case]
    inputs = make_inputs(sentences=[sentence] if sentence else None, focus=focus, **kw)
    return resolve(inputs, examples=("fluffy_blue_creature",), role="adjective_noun")


def pixel(frame, point):
    """RGBA of the frame at scene point (x, y)."""
    h, w = frame.shape[:2]
    x = int(round((point[0] / config.frame_width + 0.5) * (w - 1)))
    y = int(round((0.5 - point[1] / config.frame_height) * (h - 1)))
    return frame[y, x]


def inside(mob, box, tol=1e-6):
    (x0, y0, _), (x1, y1, _) = mob.get_corner(DL), mob.get_corner(UR)
    left, right, bottom, top = box
    return x0 >= left - tol and x1 <= right + tol and y0 >= bottom - tol and y1 <= top + tol


FRAME = (-config.frame_width / 2, config.frame_width / 2, -config.frame_height / 2, config.frame_height / 2)


# --- plans (no rendering) -------------------------------------------------------------------------

def test_root_of_d_is_shown_whole_or_to_two_decimals():
    assert root_of(16) == (4.0, 0)
    r, digits = root_of(8)
    assert r == pytest.approx(np.sqrt(8)) and digits == 2


@pytest.mark.parametrize("case", ["fluffy", "fox", "sheep"])
def test_dot_products_plan_is_the_trace(make_inputs, tracer, case):
    plan = plan_dot_products(setting_of(make_inputs, case))
    t, h = head_of(tracer, case)
    i = expected_focus(t, CASES[case][1], h)
    tops = expected_tops(h, i)
    others = [j for j in range(len(t.tokens)) if not h.mask[i, j] and j not in tops + [i]]
    contrast = min(others, key=lambda j: h.scores[i, j]) if others else None
    assert plan.focus == i and list(plan.tops) == tops and plan.contrast == contrast
    # the close look: the focus's strongest key, the real dot product, divided by √d_head
    j = tops[0]
    assert plan.card_key == j
    assert plan.card_dot == pytest.approx(float(h.q[i] @ h.k[j]), abs=1e-5)
    assert plan.card_score == pytest.approx(plan.card_dot / np.sqrt(h.q.shape[1]), abs=1e-4)
    assert plan.card_score == pytest.approx(float(h.scores[i, j]), abs=1e-5)
    want = [(i, k) for k in tops] + ([(i, contrast)] if contrast is not None else [])
    assert list(plan.spotlit) == want
    assert list(plan.spot_scores) == pytest.approx([h.scores[c] for c in want], abs=1e-6)
    assert plan.d_head == h.q.shape[1] and plan.root == pytest.approx(np.sqrt(plan.d_head))


def test_dot_products_picks_other_cells_for_another_sentence(make_inputs, tracer):
    a = plan_dot_products(setting_of(make_inputs, "fluffy"))
    b = plan_dot_products(setting_of(make_inputs, "sheep"))
    t, h = head_of(tracer, "sheep")
    i = t.tokens.index("apple")
    assert b.spotlit[0] == (i, expected_tops(h, i)[0])
    assert a.spotlit != b.spotlit


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_softmax_plan_starts_with_the_focus(make_inputs, tracer, case):
    plan = plan_softmax(setting_of(make_inputs, case))
    t, h = head_of(tracer, case)
    n = len(t.tokens)
    i = expected_focus(t, CASES[case][1], h)
    assert plan.columns[0] == i and 2 <= len(plan.columns) <= 3 and len(set(plan.columns)) == len(plan.columns)
    assert n - 1 in plan.columns  # the last word, with the most keys to weigh
    assert list(plan.visible) == [int((~h.mask[q]).sum()) for q in plan.columns]
    row = np.where(h.mask[i], -1.0, h.pattern[i])
    assert plan.first_top == int(np.argmax(row))
    assert plan.first_top_weight == pytest.approx(h.pattern[i].max()) and plan.first_sum == pytest.approx(1.0)


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_masking_plan_every_prefix_guesses_its_next_word(make_inputs, tracer, case):
    plan = plan_masking(setting_of(make_inputs, case))
    t, h = head_of(tracer, case)
    n = len(t.tokens)
    i = expected_focus(t, CASES[case][1], h)
    assert list(plan.stair) == list(range(n - 1))
    assert list(plan.prefix_texts) == [" ".join(t.tokens[:p + 1]) for p in range(n - 1)]
    assert plan.cheat == min(i, n - 2)
    q = i if i < n - 1 else n - 2
    assert plan.strip_query == q and plan.strip_visible == q + 1  # the causal mask: itself and the words before


def test_masking_plan_long_sentence_keeps_a_few_prefixes(make_inputs, toy_model):
    sentence = toy_model.info.examples["long"]
    plan = plan_masking(setting_of(make_inputs, sentence=sentence, focus="rabbit"))
    n = len(plan.tokens)
    shown = [p for p in plan.stair if p is not None]
    assert shown[:3] == [0, 1, 2] and shown[-2:] == [n - 3, n - 2] and plan.tokens.index("rabbit") in shown
    assert None in plan.stair and len(plan.stair) <= 10
    for p, text in zip(plan.stair, plan.prefix_texts):
        if p is not None:
            words = text.split()
            assert words[-1] == plan.tokens[p] and len([w for w in words if w != "…"]) <= 14


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_context_plan_grows_into_the_models_long_passage(make_inputs, tracer, toy_model, case):
    plan = plan_context_size(with_context_traces(setting_of(make_inputs, case), tracer))
    t, h = head_of(tracer, case)
    n, N = plan.n, plan.N
    passage = toy_model.info.examples["long"].split()
    assert n == len(t.tokens) and 50 <= N <= t.model.n_ctx and not plan.repeated
    assert plan.long_tokens[:n] == t.tokens and plan.long_tokens[n] == "." and list(plan.long_tokens[n + 1:]) == passage[:N - n - 1]
    lh = tracer(" ".join(plan.long_tokens)).head(0, 0)
    assert np.allclose(plan.long_head.pattern, lh.pattern)
    # the short grid is the long grid's first block: the mask makes it so
    assert np.allclose(lh.pattern[:n, :n], h.pattern, atol=1e-5)
    assert plan.short_cells == n * n and plan.long_cells == N * N
    assert plan.short_open == n * (n + 1) // 2 and plan.long_open == int((~lh.mask).sum()) == N * (N + 1) // 2
    # the close look: the word of the new part with the most weight away from itself
    p = lh.pattern.copy()
    np.fill_diagonal(p, 0)
    q = max(range(n, N), key=lambda c: (p[c].sum(), -c))
    assert plan.close_query == q and list(plan.close_keys) == expected_tops(lh, q)
    assert list(plan.close_weights) == pytest.approx([lh.pattern[q, j] for j in plan.close_keys], abs=1e-6)
    # its excerpt: the query, its keys, words either side, in order, at most CLOSE_WORDS of them
    shown = [j for j in plan.close_window if j is not None]
    assert shown == sorted(shown) and q in shown and set(plan.close_keys) <= set(shown) and len(shown) <= 10
    assert q - 1 in shown and (q + 1 in shown or q + 1 == N)


def test_the_close_windows_gaps_are_marked():
    """A key far back (a first token) is shown with an ellipsis between it and the query's words;
    neighbours go before the limit does, never the query or its keys."""
    from attention_manim.scenes.plans.context_size import close_window

    assert close_window(40, [0], 60) == (0, 1, None, 34, 35, 36, 37, 38, 39, 40, 41)
    assert close_window(40, [39], 60) == (32, 33, 34, 35, 36, 37, 38, 39, 40, 41)
    tight = close_window(50, [0, 10, 20, 30, 45], 51, most=8)
    assert {0, 10, 20, 30, 45, 50} <= set(tight) and len([j for j in tight if j is not None]) == 8
    assert all(tight[k] is None or tight[k + 1] is None or tight[k + 1] == tight[k] + 1
               for k in range(len(tight) - 1))


def test_context_plan_long_sentence_grows_from_its_own_start(make_inputs, tracer, toy_model):
    sentence = toy_model.info.examples["long"]
    t = tracer(sentence)
    plan = plan_context_size(with_context_traces(setting_of(make_inputs, sentence=sentence), tracer))
    assert plan.short_tokens == t.tokens[:8] and plan.long_tokens == t.tokens and not plan.repeated
    short, long, repeated = context_texts(t.tokens, t.model.n_ctx, "anything")
    assert short.split() == list(t.tokens[:8]) and long is None and not repeated


def without_passage(tracer):
    def trace(sentence):
        tr = tracer(sentence)
        examples = {k: v for k, v in tr.model.examples.items() if k != "long"}
        return dataclasses.replace(tr, model=dataclasses.replace(tr.model, examples=examples))

    return trace


def test_context_plan_without_a_passage_repeats_the_sentence(make_inputs, tracer):
    trace = without_passage(tracer)
    s = resolve(dataclasses.replace(make_inputs(sentences=[FLUFFY[0]]), tracer=trace), role="adjective_noun")
    plan = plan_context_size(with_context_traces(s, trace))
    t = tracer(FLUFFY[0])
    n = len(t.tokens)
    assert plan.repeated and plan.short_tokens == t.tokens
    assert plan.N % (n + 1) == n and plan.N > 2 * n  # sentence . sentence . … sentence
    reps = (plan.N + 1) // (n + 1)
    assert list(plan.long_tokens) == (list(t.tokens) + ["."]) * (reps - 1) + list(t.tokens)


@pytest.mark.parametrize("case,layout", [("fluffy", "video"), ("fox", "paper")])
def test_formula_plan_mixes_the_focus_values(make_inputs, tracer, case, layout):
    plan = plan_formula(setting_of(make_inputs, case, layout=layout))
    t, h = head_of(tracer, case)
    i = expected_focus(t, CASES[case][1], h)
    keys = list(plan.mix_keys)
    assert keys == sorted(keys)
    assert set(keys) == {int(j) for j in np.argsort(-h.pattern[i])[:3] if h.pattern[i, j] >= 0.01}
    assert list(plan.mix_weights) == pytest.approx([h.pattern[i, j] for j in keys], abs=1e-6)
    assert plan.other_layout != layout and plan.layout == layout
    assert list(plan.value_labels) == list(range(len(t.tokens)))


# --- rendered: what the chapters drew ---------------------------------------------------------------

def lesson_class(name):
    from attention_manim.scenes.registry import load_all

    return load_all()[name]


def chain_class(*names):
    """A lesson of the chapters of several lessons, played on one canvas (as the flagship does)."""
    from attention_manim.scenes.lesson import LessonSceneBase

    chapters = tuple(c for n in names for c in lesson_class(n).lesson.chapters)
    lesson = type(lesson_class(names[0]).lesson)("chain", chapters, cards=True)
    return type("Chain", (LessonSceneBase, MovingCameraScene), {"lesson": lesson, "__module__": __name__})


def render(cls, inputs, tmp, size=SIZE, png=True):
    with tempconfig(tiny_config(tmp, size, png)):
        scene = cls(inputs)
        scene.render()
        frame = np.array(scene.renderer.get_frame()) if png else None
        scene.frame_state = (scene.camera.frame.get_center().copy(), scene.camera.frame.width, config.frame_width)
    return scene, frame


@pytest.fixture(scope="module")
def rendered(make_inputs, tmp_path_factory):
    cache = {}

    def get(name, case, size=SIZE, **kw):
        key = (name, case, size, tuple(sorted(kw.items())))
        if key not in cache:
            sentence, focus = CASES[case] if isinstance(case, str) else case
            cls = chain_class(*name) if isinstance(name, tuple) else lesson_class(name)
            cache[key] = render(cls, make_inputs(sentences=[sentence], focus=focus, **kw),
                                tmp_path_factory.mktemp("grid"), size)
        return cache[key]

    return get


def at_default_frame(scene):
    center, width, fw = scene.frame_state
    return np.allclose(center, 0, atol=1e-6) and width == pytest.approx(fw)


@pytest.mark.render
@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_dot_products_draws_real_scores_and_spotlight(rendered, tracer, case):
    scene, _ = rendered("dot_products", case)
    t, h = head_of(tracer, case)
    d = scene.stage.drawn["dot_products"]
    i = expected_focus(t, CASES[case][1], h)
    # every visible pair shows its real score (keys after the query wait for the masking chapter)
    assert set(d["scores"]) == visible_cells(h)
    check_numbers(d["scores"], h.scores, "score", h)
    # the close look: the real dot product of the key and the query, then divided by √d_head
    (q, k) = d["card_cell"]
    qk, sc = d["card_numbers"]
    assert (q, k) == (i, expected_tops(h, i)[0])
    assert qk.value == pytest.approx(float(h.q[i] @ h.k[k]), abs=1e-5)
    assert sc.value == pytest.approx(qk.value / np.sqrt(h.q.shape[1]), abs=1e-4)
    # two decimals both: the shown dot product divided by the root gives the shown score (to rounding)
    shown_dot, shown_score = (float(m.shown.replace("−", "-")) for m in (qk, sc))
    assert abs(shown_dot / np.sqrt(h.q.shape[1]) - shown_score) <= 0.005 + 0.005 / np.sqrt(h.q.shape[1]) + 1e-9
    assert len(qk.shown.split(".")[1]) == 2 and len(sc.shown.split(".")[1]) == 2
    # the card covers no cell that holds a product (review 49: it sat on K⃗₄·Q⃗₄ under the cell it explains)
    card, centres = d["card"], d["grid"].cell_centers()
    (x0, y0, _), (x1, y1, _) = card.get_corner(np.array([-1, -1, 0])), card.get_corner(np.array([1, 1, 0]))
    under = [(a, b) for a in range(len(t.tokens)) for b in range(len(t.tokens))
             if not h.mask[a, b] and x0 < centres[a, b, 0] < x1 and y0 < centres[a, b, 1] < y1]
    assert under == [], under
    # the card is set for the zoom the camera takes: its figures read at their own size on screen (review 51: set
    # for a closer zoom than the one taken, they read at half the cells' size)
    assert d["card_scale"] == pytest.approx(d["close_zoom"], rel=0.15)
    # the pair's words over their symbols, in their colours: the turned column labels are out of the close-up's
    # frame, and nothing else tied Q⃗ᵢ to its word (review 51)
    th = scene.stage.theme
    key_word, dot, query_word = d["card_words"]
    k_sym, q_sym = d["card_symbols"]
    assert key_word.text == scene.stage.say.quote(t.tokens[k]) and query_word.text == scene.stage.say.quote(t.tokens[q])
    assert key_word.get_color().to_hex().lower() == th.key.lower()
    assert query_word.get_color().to_hex().lower() == th.query.lower()
    assert k_sym.get_right()[0] < dot.get_x() < q_sym.get_left()[0]
    assert key_word.get_right()[0] < dot.get_left()[0] and dot.get_right()[0] < query_word.get_left()[0]
    assert key_word.get_bottom()[1] > k_sym.get_top()[1] and query_word.get_bottom()[1] > q_sym.get_top()[1]
    # ... and the card stands inside the grid's side, never over the row labels the close-up keeps (review 52)
    grid = d["grid"]
    assert grid.lines.get_left()[0] <= x0 and x1 <= grid.lines.get_right()[0]
    # ... its sides off the grid's lines (review 52: on one, the card's edge read as a doubled line)
    xs = grid.lines.get_left()[0] + np.arange(grid.n + 1) * grid.cell_width
    assert min(abs(xs - x0).min(), abs(xs - x1).min()) > 0.05
    if d["card_scale"] > 0.46:  # the whole width with the row labels: they stay, naming the rows
        assert grid.row_labels not in d["close_faded"]
    # the spotlight: the focus's largest weights, its lowest visible score for contrast, the real scores named
    tops = expected_tops(h, i)
    others = [j for j in range(len(t.tokens)) if not h.mask[i, j] and j not in tops + [i]]
    contrast = min(others, key=lambda j: h.scores[i, j]) if others else None
    want = [(i, j) for j in tops] + ([(i, contrast)] if contrast is not None else [])
    assert d["spotlit"] == want == d["spotlight_state"]
    assert [m.value for m in d["note_numbers"]] == pytest.approx([h.scores[c] for c in want], abs=1e-5)
    # written as their cells in the grid write them (+5.34 and +5.29, never "+5.3" twice beside them)
    assert [m.shown for m in d["note_numbers"]] == [d["scores"][c].shown for c in want]
    if case == "fluffy":
        assert len({m.shown for m in d["note_numbers"][:2]}) == 2
    panel = scene.stage.region("panel")
    assert panel.contains(d["note"]) and panel.contains(d["legend"])
    # the final picture: dots sized by |score| over the visible cells
    g = d["grid"]
    assert g.content_kind == "score_dots" and g in scene.mobjects and scene.stage.grid is g
    vis = ~h.mask
    s = np.where(vis, h.scores, 0.0)
    expect = np.sqrt(np.abs(s) / np.abs(s[vis]).max())
    r = g.score_dot_radii / g.score_dot_radii.max()
    assert np.allclose(r, expect / expect.max(), atol=1e-6)
    assert at_default_frame(scene)


@pytest.mark.render
@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_softmax_columns_real_and_sum_to_one(rendered, tracer, case):
    scene, _ = rendered("softmax", case)
    t, h = head_of(tracer, case)
    d = scene.stage.drawn["softmax"]
    i = expected_focus(t, CASES[case][1], h)
    assert d["strips"][0].query == i and 2 <= len(d["strips"]) <= 3
    check_numbers(d["scores"], h.scores, "score", h)
    for sm in d["strips"]:
        q, keys = sm.query, sm.shown_keys
        assert keys == [j for j in range(len(t.tokens)) if not h.mask[q, j]]  # the visible keys only
        shown = sm.shown_numbers  # after normalize: the weights
        assert [m.value for m in shown] == pytest.approx([h.pattern[q, j] for j in keys], abs=1e-6)
        assert [m.shown for m in shown] == [fmt_weight(h.pattern[q, j]) for j in keys]
        assert [m.value for m in sm.score_mobs] == pytest.approx([h.scores[q, j] for j in keys], abs=1e-6)
        assert sm.sum_mob.shown == "1.00" and sm.sum_mob.value == pytest.approx(h.pattern[q].sum())
    assert set(d["weights"]) == visible_cells(h)
    check_numbers(d["weights"], h.pattern, "weight")
    # each column turned to weights among columns of scores is tinted over its cells (review 48), and the
    # tints go once every column holds weights
    g = d["grid"]
    assert len(d["tints"]) == len(d["strips"])
    for tint, sm in zip(d["tints"], d["strips"]):
        ll, ur = g.column_region(sm.query)
        assert tint.get_center()[:2] == pytest.approx(((ll + ur) / 2)[:2], abs=1e-6)
        assert tint.width == pytest.approx(ur[0] - ll[0], abs=1e-6) and tint not in scene.mobjects
    assert [m.shown for m in d["sums"]] == ["1.00"] * len(t.tokens)
    assert [m.value for m in d["sums"]] == pytest.approx(h.pattern.sum(axis=1), abs=1e-6)
    assert inside(d["sums_group"], FRAME)
    g = d["grid"]
    assert g.content_kind == "dots"
    assert np.allclose(g.dot_radius_fraction / g.dot_radius_fraction.max(),
                       np.where(h.mask | (h.pattern < g.min_weight), 0, np.sqrt(h.pattern)) / np.sqrt(h.pattern.max()))
    # the caption names the real top weight and sum, at two decimals
    top = int(np.argmax(np.where(h.mask[i], -1, h.pattern[i])))
    real = [c for c, _ in scene.caption_log if c.startswith("Real weights")]
    assert real and f"“{t.tokens[top]}” gets {h.pattern[i, top]:.2f}" in real[0]
    # ...and frames that word's row and the Σ while it is said (review 53: its frame was the one before's);
    # they go with the column
    marks = d["marks"]
    assert len(marks) == 2 and not any(m in scene.mobjects for m in marks)
    assert at_default_frame(scene)


@pytest.mark.render
@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_masking_minus_infinity_then_zero_and_sums_of_one(rendered, tracer, case):
    scene, frame = rendered("masking", case, size=(384, 216))
    t, h = head_of(tracer, case)
    n = len(t.tokens)
    d = scene.stage.drawn["masking"]
    # the stair: one line per prefix, inside the frame
    assert [line.prefix_end for line in d["stair"]] == list(range(n - 1))
    assert inside(VGroup(d["stair"], d["heading"]), FRAME)
    # alone on the frame, it grows into its room (review 50: a third of the frame empty): fluffy's seven lines
    # as wide as 70 % of the frame, fox's eight as far as their height allows
    assert d["stair"].width > (0.7 if case == "fluffy" else 0.58) * 14.22
    # the crossed-out arc stands over the focus's box, not across its edge (review 49), under the line above it
    arc, box = d["cheat_arc"], d["cheat_box"]
    assert arc.get_bottom()[1] > box.get_top()[1]
    above = [line for line in d["stair"] if line.get_y() > box.get_y() + 0.05]
    assert all(line.get_bottom()[1] > arc.get_top()[1] for line in above)
    # real scores in every cell first, the blocked ones too
    assert set(d["scores"]) == {(q, k) for q in range(n) for k in range(n)}
    check_numbers(d["scores"], h.scores, "score", h)
    # then −∞ exactly in the blocked cells
    blocked = {tuple(c) for c in np.argwhere(h.mask).tolist()}
    assert set(d["minus_inf"]) == blocked
    assert all(m.shown == "−∞" and m.value == -np.inf for m in d["minus_inf"].values())
    assert set(d["scores_after_mask"]) == visible_cells(h)
    # one column's softmax: −∞ in, 0.00 out, Σ 1.00
    sm = d["strip"]
    q = sm.query
    written = FORMATTERS[sm.score_kind]
    assert [m.shown for m in sm.score_mobs] == ["−∞" if h.mask[q, j] else written(h.scores[q, j]) for j in sm.shown_keys]
    assert [m.value for m in sm.weight_mobs] == pytest.approx([h.pattern[q, j] for j in sm.shown_keys], abs=1e-6)
    # a masked key's weight is exactly 0, written as the masked grids write it: a "0" in the mask's colour (review 48)
    from manim.utils.color import ManimColor

    masked = [m for j, m in zip(sm.shown_keys, sm.weight_mobs) if h.mask[q, j]]
    assert masked and all(m.shown == "0" and m.value == 0.0 for m in masked)
    assert all(ManimColor(m.get_fill_color()) == ManimColor(scene.stage.theme.mask) for m in masked)
    assert sm.sum_mob.shown == "1.00"
    # the block about the visible weights outlines them (and their sum): the keys up to the query
    # (the weights have since settled into the grid; the outline kept the rows' height: one row a key)
    seen = [j for j in sm.shown_keys if not h.mask[q, j]]
    assert len(d["visible_outline"]) == 2 and len(seen) == sm.visible_count
    assert d["visible_outline"][0].height == pytest.approx(len(seen) * sm.row_h + 0.16, abs=sm.row_h / 2)
    # the end: weights only where allowed, blocked cells empty, every query sums to 1
    g = d["grid"]
    assert set(d["weights"]) == visible_cells(h) and g.mask_state == "cleared"
    check_numbers(d["weights"], h.pattern, "weight")
    assert not any(m.has_points() for m in g.mask_sheet.submobjects)
    assert [m.shown for m in d["sums"]] == ["1.00"] * n
    # and on the frame: blocked cells are background
    for (qq, kk) in blocked:
        assert np.abs(pixel(frame, g.cell_center(qq, kk))[:3].astype(int)).max() < 40, (qq, kk)
    assert at_default_frame(scene)
    # the rule in the panel (review 51: the grid at the left, the right half empty): a blocked cell as the grid
    # draws it ("−∞" in the mask's colour) beside its words while the grid shows −∞; with the weights, when no
    # −∞ is left, e^(−∞) = 0 beside theirs (review 52: the −∞ key stayed beside a grid without one)
    say = scene.stage.say
    rule, rule_all = d["rule"], d["rule_all"]
    assert rule not in scene.mobjects and rule_all in scene.mobjects
    for note, key in ((rule, "key_blocked"), (rule_all, "zero_weight")):
        (sym, words), = note
        assert " ".join(w.original_text for w in words) == say(f"grid.masking.{key}")
        assert words.get_left()[0] > sym.get_right()[0] and abs(words[0].get_y() - sym.get_y()) < 0.05
        assert note.get_left()[0] > g.get_right()[0] and inside(note, FRAME)
    cell_value = next(m for m in rule[0][0].get_family() if hasattr(m, "value"))
    assert cell_value.value == -np.inf and ManimColor(cell_value.get_fill_color()) == ManimColor(scene.stage.theme.mask)
    assert not any(hasattr(m, "value") for m in rule_all.get_family())
    # ... and e^(−∞) = 0 is on the frame while the caption says it, under the strip (review 52)
    exp_zero = d["exp_zero"]
    assert len(exp_zero) and exp_zero.get_top()[1] < sm.box.get_bottom()[1] and inside(exp_zero, FRAME)
    assert exp_zero not in scene.mobjects


@pytest.mark.render
@pytest.mark.parametrize("lang", ["ko", "pt"])
def test_masking_softmax_column_names_its_operator_in_the_lessons_language(rendered, lang):
    """The side panel's operator name comes from the catalog (ko: 소프트맥스, as the captions say),
    not the component's English default."""
    from attention_manim.scenes.i18n import Say

    scene, _ = rendered("masking", "fluffy", size=(384, 216), lang=lang)
    sm = scene.stage.drawn["masking"]["strip"]
    want = Say(lang)("grid.softmax.op")
    assert sm.op_label.text.replace(" ", "") == want.replace(" ", "")
    assert lang != "ko" or want == "소프트맥스"


@pytest.mark.render
@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_context_size_grows_to_a_real_long_pattern(rendered, tracer, case):
    scene, _ = rendered("context_size", case)
    t, h = head_of(tracer, case)
    d = scene.stage.drawn["context_size"]
    big = d["big"]
    N = big.n
    lh = tracer(" ".join(big.tokens)).head(0, 0)
    assert big.tokens[:len(t.tokens)] == t.tokens and N >= 50
    assert np.allclose(big.pattern, lh.pattern)
    n = len(t.tokens)
    assert d["short_count"].texts[0] == f"{n}×{n}={n * n}"  # Text drops the spaces
    # the first frame says what it is about and whose pattern it is, above the count
    # (once: the grid's corner names the head, so the heading does not again; review 51)
    heading = "".join(m.original_text for m in d["heading"])
    tag = " ".join(m.original_text for m in d["grid"].head_tag)
    assert "Context size" in heading and "layer 0" in tag and "head 0" in tag
    assert "layer" not in heading and "head" not in heading
    assert d["heading"].get_bottom()[1] > d["short_count"].get_top()[1]
    assert d["long_count"].texts[0] == f"{N}×{N}={N * N:,}" and f"{N * (N + 1) // 2:,}" in d["long_count"].texts[1]
    # the close look names the real strongest keys with their real weights
    p = lh.pattern.copy()
    np.fill_diagonal(p, 0)
    q = max(range(n, N), key=lambda c: (p[c].sum(), -c))
    ks = expected_tops(lh, q)
    assert [m.value for m in d["close_numbers"]] == pytest.approx([lh.pattern[q, j] for j in ks], abs=1e-6)
    assert [m.shown for m in d["close_numbers"]] == [fmt_weight(lh.pattern[q, j]) for j in ks]
    # ... beside the long grid, drawn large as its own grid of the real weights, its axes named
    inset, window = d["close_grid"], scene.plans[0].close_window
    rows = [j for j in window if j is not None]
    at = [window.index(j) for j in rows]
    assert np.allclose(inset.pattern[np.ix_(at, at)], lh.pattern[np.ix_(rows, rows)], atol=1e-6)
    assert inset.tokens[window.index(q)] == big.tokens[q] and all(t == "⋯" for t, j in zip(inset.tokens, window) if j is None)
    top, side = d["close_titles"]
    assert top.original_text == "queries" and side.original_text == "keys"
    assert d["close_gap"] > 0  # beside the long grid, not over it
    assert d["close_span"] == (rows[0], rows[-1])  # the box on the long grid spans the excerpt's words
    # the dots are the long pattern's, blocked cells empty; the camera is back, all in frame
    assert all(not lh.mask[c] and lh.pattern[c] >= big.min_weight for c in d["big_dots"])
    assert at_default_frame(scene)
    assert inside(big, FRAME) and inside(d["nod"], FRAME) and inside(d["long_count"], FRAME)
    # the long grid's words are hidden, so its axes are named beside its lines, inside the frame
    top, side = d["long_titles"]
    assert top.original_text == "queries" and side.original_text == "keys"
    assert 0 < top.get_bottom()[1] - big.lines.get_top()[1] < 0.5
    assert 0 < big.lines.get_left()[0] - side.get_right()[0] < 0.5
    assert inside(d["long_titles"], FRAME)
    # its faint lines read as thick while the camera is F times as far as at home (review 53: at their own
    # width they were 5/255 grey while the count spoke of them); at home, their own width again
    far, F, home = d["far_lines"]
    assert F > 1.5 and far / F == pytest.approx(home) and big.lines.get_stroke_width() == pytest.approx(home)
    # the long grid names its head too, over its top-left corner and clear of its axis title (review 52: the
    # 64-token frames named none)
    long_tag = " ".join(m.original_text for m in d["long_tag"])
    assert "layer 0" in long_tag and "head 0" in long_tag and inside(d["long_tag"], FRAME)
    assert d["long_tag"].get_bottom()[1] > top.get_top()[1] or d["long_tag"].get_right()[0] < top.get_left()[0]
    # the lesson ends on the memory table (tests/test_context_memory.py), which clears the grid away
    assert scene.chapters_played[-1] == "context_memory" and scene.stage.grid is None and big not in scene.mobjects


@pytest.mark.render
def test_context_size_without_a_passage_says_so(make_inputs, tracer, tmp_path):
    trace = without_passage(tracer)
    scene, _ = render(lesson_class("context_size"), dataclasses.replace(make_inputs(sentences=[FLUFFY[0]]), tracer=trace), tmp_path,
                      png=False)
    N = scene.stage.drawn["context_size"]["big"].n
    assert Say("en")("grid.context_size.repeated", count=N, cells=N * N) in [c for c, _ in scene.caption_log]


@pytest.mark.render
@pytest.mark.parametrize("case,layout", [("fluffy", "video"), ("fox", "paper")])
def test_formula_ties_symbols_to_the_grid(rendered, tracer, case, layout):
    scene, _ = rendered("attention_formula", case, layout=layout)
    t, h = head_of(tracer, case)
    d = scene.stage.drawn["formula"]
    dh = h.q.shape[1]
    i = expected_focus(t, CASES[case][1], h)
    assert d["denominator"] == f"√{dh}"
    assert inside(d["formula"], FRAME) and inside(d["other_formula"], FRAME)  # fully on screen
    assert f"√{dh} = {np.sqrt(dh):g}" in d["sqrt_text"]  # the line as read (the root itself is typeset)
    assert scene.stage.region("panel").contains(d["panel"])
    check_numbers(d["scores"], h.scores, "score", h)
    # the focus mixes the values with its real weights (its largest ones)
    keys = d["mix_keys"]
    assert set(keys) == {int(j) for j in np.argsort(-h.pattern[i])[:3] if h.pattern[i, j] >= 0.01}
    assert [m.value for m in d["mix_numbers"]] == pytest.approx([h.pattern[i, j] for j in keys], abs=1e-6)
    assert [m.shown for m in d["mix_numbers"]] == [fmt_weight(h.pattern[i, j]) for j in keys]
    # the sum drawn says "+ ⋯" exactly when other values flow in too (SmolLM2 left out 0.05 V4 silently)
    rest = 1.0 - sum(h.pattern[i, j] for j in keys)
    assert (len(d["mix_row"]) == 3 * len(keys) - 1 + 2) == (rest >= 0.005)
    # the formula and grid end in the other orientation, the exact transpose of the first
    g, g2 = d["grid"], d["other_grid"]
    assert g.layout == layout and g2.layout != layout
    assert d["formula"].form == layout and d["other_formula"].form != layout
    for q in range(len(t.tokens)):
        for k in range(len(t.tokens)):
            a, b = g.cell_center(q, k) - g.cell_center(0, 0), g2.cell_center(q, k) - g2.cell_center(0, 0)
            # row/column swap: the offsets swap axes
            assert (abs(a[0]) > 1e-6) == (abs(b[1]) > 1e-6) and (abs(a[1]) > 1e-6) == (abs(b[0]) > 1e-6)
    assert g2 in scene.mobjects and scene.stage.grid is g2 and d["other_titles"] is scene.stage.grid_titles
    assert inside(g2, FRAME)
    assert at_default_frame(scene)


@pytest.mark.render
@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_attention_pattern_dots_follow_the_weights_on_pixels(rendered, tracer, case):
    scene, frame = rendered("attention_pattern", case, size=(384, 216))
    t, h = head_of(tracer, case)
    d = scene.stage.drawn["pattern"]
    g = d["grid"]
    i = expected_focus(t, CASES[case][1], h)
    tops = expected_tops(h, i)
    assert [m.value for m in d["note"].numbers] == pytest.approx([h.pattern[i, j] for j in tops], abs=1e-6)
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
    # (but for the words that name the masked half, on a plate over blocked cells only)
    masked = d.get("masked")
    plate = masked[0] if masked is not None else None
    # the caption calls the masked half what it looks like: shaded under the note, else empty (review 35)
    said = " ".join(c for c, _ in scene.caption_log)
    assert ("shaded triangle" in said) == (masked is not None) and ("empty triangle" in said) == (masked is None)

    def under_note(p):
        return plate is not None and (plate.get_left()[0] <= p[0] <= plate.get_right()[0]
                                      and plate.get_bottom()[1] <= p[1] <= plate.get_top()[1])

    for q in range(len(t.tokens)):
        for k in range(len(t.tokens)):
            px = pixel(frame, g.cell_center(q, k))[:3].astype(int)
            if under_note(g.cell_center(q, k)):
                assert h.mask[q, k], ("the masked half's note covers a visible cell", q, k)
            elif h.mask[q, k]:
                assert px.max() < 40, ("blocked cell has ink", q, k)
            elif h.pattern[q, k] > 0.4:
                assert px.min() > 150, ("a heavy weight shows no dot", q, k, h.pattern[q, k])


@pytest.mark.render
def test_attention_pattern_paper_layout_is_the_transpose(rendered):
    scene, _ = rendered("attention_pattern", "fluffy", layout="paper")
    g = scene.stage.drawn["pattern"]["grid"]
    assert g.layout == "paper"
    # in the paper layout a query's weights run along its row: same y, growing x
    c0, c1 = g.cell_center(3, 1), g.cell_center(3, 2)
    assert c0[1] == pytest.approx(c1[1]) and c1[0] > c0[0]


@pytest.mark.render
def test_long_sentence_lessons_run_and_abbreviate(make_inputs, tracer, toy_model, tmp_path):
    sentence = toy_model.info.examples["long"]
    for name in ("dot_products", "softmax"):
        scene, _ = render(lesson_class(name), make_inputs(sentences=[sentence], focus="rabbit"), tmp_path / name,
                          size=(160, 90))
        g = scene.stage.grid
        assert g.n == len(tracer(sentence).tokens)
        assert g.label_stride != (1, 1) or g.top_labels_rotated
        for which in ("rows", "cols"):  # labels never overlap
            b = g.label_boxes(which)
            if which == "rows":
                b = b[np.argsort(-b[:, 1])]
                assert np.all(b[:-1, 1] >= b[1:, 3] - 1e-6)
            else:
                b = b[np.argsort(b[:, 0])]
                assert np.all(b[1:, 0] >= b[:-1, 2] - 1e-6)
        assert at_default_frame(scene)


# --- hand-ons: chapters going on from one another ----------------------------------------------------

@pytest.mark.render
def test_query_and_key_columns_become_the_grid_labels(make_inputs, tracer, tmp_path):
    scene, _ = render(chain_class("query", "key", "dot_products"), make_inputs(), tmp_path, png=False)
    t = tracer(FLUFFY[0])
    d = scene.stage.drawn["dot_products"]
    g = d["grid"]
    morphed = d["morphed"]
    n = len(t.tokens)
    assert sorted(morphed["query"]) == list(range(n)) and sorted(morphed["key"]) == list(range(n))
    # each column landed exactly on its label: queries across the top, keys down the side (video)
    for axis, which in (("query", "cols"), ("key", "rows")):
        boxes = g.label_boxes(which)
        for tok, mob in morphed[axis].items():
            x0, y0, x1, y1 = boxes[list(g.shown_labels[which]).index(tok)]
            assert np.allclose(mob.get_center()[:2], [(x0 + x1) / 2, (y0 + y1) / 2], atol=1e-3), (axis, tok)
            assert mob not in scene.mobjects  # handed over to the grid's own labels
    assert scene.stage.queries is None and scene.stage.keys is None and scene.stage.grid is g
    assert scene.chapters_played == ["query", "key", "dot_products"]


@pytest.mark.render
def test_the_grid_stays_from_scores_through_softmax_and_masking(make_inputs, tmp_path):
    scene, _ = render(chain_class("dot_products", "softmax", "masking"), make_inputs(), tmp_path, png=False)
    drawn = scene.stage.drawn
    g = drawn["dot_products"]["grid"]
    assert drawn["softmax"]["grid"] is g and drawn["masking"]["grid"] is g and scene.stage.grid is g
    # the softmax went on from the scores on screen: the same cells, not a new grid
    assert drawn["softmax"]["scores"].keys() == drawn["dot_products"]["scores"].keys()
    # masking steps the grid aside for its explanation and brings it back to where it stood
    alone, _ = render(lesson_class("masking"), make_inputs(), tmp_path / "alone", png=False)
    assert np.allclose(g.lines.get_center(), alone.stage.drawn["masking"]["grid"].lines.get_center())
    assert g.lines.width == pytest.approx(alone.stage.drawn["masking"]["grid"].lines.width)
    # the grid waits out of sight while the stair shows: the stair takes the frame, as alone (review 51: in the
    # flagship it kept left of the hidden grid's place, a third of the frame empty)
    alone_stair = alone.stage.drawn["masking"]["stair"]
    assert drawn["masking"]["stair"].width == pytest.approx(alone_stair.width, rel=0.02)


@pytest.mark.render
def test_the_formula_goes_on_with_the_grid(make_inputs, tmp_path):
    scene, _ = render(chain_class("softmax", "attention_formula"), make_inputs(), tmp_path, png=False)
    drawn = scene.stage.drawn
    assert drawn["formula"]["grid"] is drawn["softmax"]["grid"]
    titles = drawn["formula"]["other_titles"]
    top = VGroup(drawn["formula"]["other_grid"], *titles[:2]).get_top()[1]
    assert top < drawn["formula"]["formula"].get_bottom()[1]  # the grid below the formula
    # the head's name in the corner beside it: on screen, left of the formula, the head and its role
    tag, formula = titles.head_tag, drawn["formula"]["formula"]
    assert len(tag) >= 2 and tag.get_right()[0] < formula.get_left()[0]
    said = "".join(t.original_text for t in tag).replace(" ", "")
    assert said.startswith("layer0") and "head0" in said and "adjectives" in said
    assert scene.stage.grid is drawn["formula"]["other_grid"]


# --- other languages ------------------------------------------------------------------------------

GRID_LESSONS = ("dot_products", "softmax", "masking", "context_size", "attention_formula", "attention_pattern")


@pytest.mark.render
@pytest.mark.parametrize("lang", ["ko", "pt"])
@pytest.mark.parametrize("name", GRID_LESSONS)
def test_lessons_in_korean_and_portuguese(make_inputs, tracer, tmp_path, name, lang):
    scene, frame = render(lesson_class(name), make_inputs(lang=lang), tmp_path, size=(128, 72))
    captions = [c for c, _ in scene.caption_log]
    assert frame.any() and captions
    if lang == "ko":
        assert all(re.search(r"[\uac00-\ud7a3]", c) for c in captions)
    # nothing left outside the frame at the end
    for m in scene.mobjects:
        if m.has_points() or m.submobjects:
            assert inside(m, FRAME, tol=0.05), (name, lang, type(m).__name__)
    t, h = head_of(tracer, "fluffy")
    i = expected_focus(t, None, h)
    if name == "softmax" and lang == "pt":  # numbers in prose the Portuguese way, from the trace
        top = int(np.argmax(h.pattern[i]))
        assert any(f"{h.pattern[i, top]:.2f}".replace(".", ",") in c for c in captions)
    if name == "context_size" and lang == "pt":
        N = scene.stage.drawn["context_size"]["big"].n
        assert any(f"{N * N:,}".replace(",", ".") in c for c in captions)
    if name == "attention_formula":
        d = scene.stage.drawn["formula"]
        assert inside(d["formula"], FRAME) and scene.stage.region("panel").contains(d["panel"])


# --- the component pieces these chapters use ------------------------------------------------------------

def test_show_columns_changes_one_column_and_leaves_the_others_steady(tracer):
    from attention_manim.scenes.components.attention_grid import AttentionGrid

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
    from attention_manim.scenes.components.attention_grid import AttentionGrid

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
    from attention_manim.scenes.components.attention_grid import AttentionGrid

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
    from attention_manim.scenes.components.attention_grid import AttentionGrid
    from attention_manim.scenes.components.softmax_column import SoftmaxColumn

    t, h = head_of(tracer, "fluffy")
    g = AttentionGrid(h, t.tokens)
    sm = SoftmaxColumn(g, 3, visible_only=True)
    assert sm.shown_keys == [0, 1, 2, 3] and not sm.gaps
    assert SoftmaxColumn(g, 3).shown_keys == list(range(8))


@pytest.mark.render
@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_dot_legend_stands_right_of_the_grid_in_every_language(lang, make_inputs, render_scene):
    """In Portuguese the legend's longer caption sent it to the left of the grid, in English and Korean
    it stood at the right: its caption now breaks before "=" instead."""
    from attention_manim.scenes.registry import load_all

    scene, _ = render_scene(load_all()["attention_pattern"], make_inputs(lang=lang), png=False)
    d = scene.stage.drawn["pattern"]
    assert d["legend"].get_left()[0] > d["grid"].lines.get_right()[0]
    assert d["legend"].get_right()[0] <= scene.stage.region("full").right + 1e-6


@pytest.mark.render
def test_softmax_keeps_the_camera_still(make_inputs, tmp_path, monkeypatch):
    """Review 51: softmax's "close-up" of the first column beside its strip came to the whole frame (the grid fills
    its region) and only moved the grid 17 px up and back. The camera stays where it is, after every animation."""
    from attention_manim.scenes.stage import Stage

    seen = []
    play = Stage.play

    def recording(self, *a, **kw):
        out = play(self, *a, **kw)
        seen.append((*self.camera_frame.get_center()[:2], self.camera_frame.width))
        return out

    monkeypatch.setattr(Stage, "play", recording)
    sentence, focus = CASES["fluffy"]
    render(lesson_class("softmax"), make_inputs(sentences=[sentence], focus=focus), tmp_path, png=False)
    assert len(seen) > 10
    assert np.allclose(np.array(seen), np.array(seen[0]), atol=1e-6), seen


@pytest.mark.parametrize("layout", ["video", "paper"])
def test_the_roots_note_stands_boxed_on_a_masked_cell_wholly_in_the_close_up(layout):
    """Review 53: the formula's close-up said "√16 = 4 here" with only √16 on screen; review 54: the note then
    stood half under the close-up's edge veil ("16 = 4"). It is boxed on a masked (empty) cell wholly in view,
    the one nearest the corner where the masked cells are, above the veils."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.formula import root_callout
    from attention_manim.scenes.components.attention_grid import AttentionGrid
    from attention_manim.scenes.components.text import label
    from attention_manim.scenes.style import DARK

    n = 8
    mask = np.triu(np.ones((n, n), bool), 1)  # [query, key]: a key after its query
    pattern = np.where(mask, 0.0, 1.0) / np.arange(1, n + 1)[:, None]
    g = AttentionGrid((np.log(np.maximum(pattern, 1e-9)), pattern, mask), [f"w{k}" for k in range(n)], layout=layout)
    frame = SimpleNamespace(width=config.frame_width, height=config.frame_height)
    z = 5.5 * g.cell_width / frame.width
    near = g.cell_center(4, 3)
    note = root_callout(g, near, z, frame, label("√16 = 4", 40 * z), DARK)
    q, k = next((q, k) for q in range(n) for k in range(n)
                if np.allclose(g.cell_center(q, k)[:2], note.get_center()[:2]))
    assert mask[q, k]  # an empty cell: the note covers no figure
    half = np.array([frame.width, frame.height]) * z / 2
    assert np.all(np.abs(note.get_center()[:2] - near[:2]) + [note.width / 2, note.height / 2] <= half)
    assert note.width <= g.cell_width and note.get_z_index() > g.get_z_index() + 1
    # the masked cell nearest the masked corner: bottom left in the video layout, top right in the paper one
    corner = near[:2] + (np.array([-1, -1]) if layout == "video" else np.array([1, 1])) * half
    others = [(a, b) for a in range(n) for b in range(n) if mask[a, b] and np.all(
        np.abs(g.cell_center(a, b)[:2] - near[:2]) + [g.cell_width / 2, g.cell_height / 2] <= half - 0.02 * z)]
    assert min(np.linalg.norm(g.cell_center(a, b)[:2] - corner) for a, b in others) == pytest.approx(
        np.linalg.norm(note.get_center()[:2] - corner))
    # nowhere to stand: no note
    assert root_callout(g, g.cell_center(0, 0), 0.05, frame, label("x", 10), DARK) is None
