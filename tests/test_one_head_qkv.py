"""`query`, `key`, `values`: what they draw is the trace, at the shown rounding.

Each scene is rendered once per sentence (tiny PNG: manim jumps to the end, so all the Python runs
but only the last frame is rasterized) and its recorded mobjects (`scene.qkv`) are compared with
arrays read straight from the trace. Expectations never come from the scene's own output.
"""

from __future__ import annotations

import numpy as np
import pytest
from manim import config, tempconfig

from scenes.base import SceneInputs
from scenes.components.text import FORMATTERS
from scenes.one_head_qkv import Key, Query, Values
from scenes.style import fmt_vec, fmt_weight

from .conftest import expected_focus, numbers_in, tiny_config

FLUFFY = ("a fluffy blue creature roamed the verdant forest", None)  # focus picked from the trace
FOX = ("the tiny red fox saw a huge green tower", "fox")
CASES = {"fluffy": FLUFFY, "fox": FOX}


def render(scene_cls, tracer, tmp, sentence, focus, **kw):
    with tempconfig(tiny_config(tmp)):
        scene = scene_cls(SceneInputs(tracer=tracer, sentences=[sentence], focus=focus, **kw))
        scene.render()
        frame = np.array(scene.renderer.get_frame())
    return scene, frame


@pytest.fixture(scope="module")
def rendered(tracer, tmp_path_factory):
    cache = {}

    def get(scene_cls, case, **kw):
        key = (scene_cls, case, tuple(sorted(kw.items())))
        if key not in cache:
            sentence, focus = CASES[case] if isinstance(case, str) else case
            cache[key] = render(scene_cls, tracer, tmp_path_factory.mktemp("qkv"), sentence, focus, **kw)
        return cache[key]

    return get


# --- expectations from the trace alone ----------------------------------------------------------


def expected_answers(head, i):
    """Keys the focus gives at least 0.1 of its attention (other than itself), strongest first."""
    row = head.pattern[i]
    order = [int(j) for j in np.argsort(-row) if row[j] >= 0.1 and j != i]
    return order[:3]


def assert_shows(vector_mob, values, kind="vec"):
    """Every shown entry of a VectorColumn equals values[entry.index] at the shown rounding."""
    fmt = FORMATTERS[kind]
    nums = numbers_in(vector_mob)
    assert nums, "no numbers drawn"
    for n in nums:
        want = float(values[n.index])
        assert n.value == pytest.approx(want, abs=1e-4), (n.index, n.value, want)
        assert n.shown == fmt(want), (n.index, n.shown, fmt(want))
        assert n.text == n.shown


def on_screen(scene):
    fam = set()
    for m in scene.mobjects:
        fam.update(id(x) for x in m.get_family())
    return fam


def inside_frame(scene, margin=0.0):
    half_w, half_h = config.frame_width / 2 - margin, config.frame_height / 2 - margin
    for m in scene.mobjects:
        for sub in m.family_members_with_points():
            p = sub.points
            if len(p) == 0 or sub.get_stroke_opacity() == 0 and sub.get_fill_opacity() == 0:
                continue
            assert np.abs(p[:, 0]).max() <= half_w + 1e-6, f"{sub} leaves the frame horizontally"
            assert np.abs(p[:, 1]).max() <= half_h + 1e-6, f"{sub} leaves the frame vertically"


# --- query ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_query_product_and_every_query_are_the_trace(rendered, tracer, case):
    sentence, focus = CASES[case]
    scene, frame = rendered(Query, case)
    tr = tracer(sentence)
    head = tr.head(0, 0)  # the default head is the adjectives → nouns head
    assert "adjective" in head.name
    i = expected_focus(tr, focus, head)
    rec = scene.qkv["query"]
    assert scene.focus_index() == i

    prod = rec["product"]
    W_Q, x = head.W_Q, tr.layers[0].attn_in[i]
    for (r, c), cell in prod.matrix.cells.items():  # the drawn matrix is W_Q transposed
        assert cell.value == pytest.approx(float(W_Q[c, r])) and cell.shown == fmt_vec(W_Q[c, r])
    assert_shows(prod.vector, x)
    assert_shows(rec["product_result"], head.q[i])  # the swept result is the real query
    assert len(numbers_in(prod.result)) == 6

    cols = rec["q_columns"]
    assert i in cols and set(cols) == set(range(tr.n_tokens))
    visible = on_screen(scene)
    for j, col in cols.items():
        assert_shows(col, head.q[j])
        assert id(col.entries[0]) in visible, "every query column is in the final picture"
    row = rec["row"]
    for j, col in cols.items():  # each query sits right under its own word
        assert abs(col.get_x() - row.box(row.slot_of[j]).get_x()) < 1e-6
    # the question bubble sits on the focus word
    bubble, row = rec["bubble"], rec["row"]
    assert "adjectives" in bubble.message
    box = row.box(row.slot_of[i])
    # (the row has moved up since; the bubble stays where it was asked: above the focus word's box)
    assert box.get_left()[0] < bubble.tip[0] < box.get_right()[0]
    others = [row.box(s) for s in range(len(row)) if s != row.slot_of[i]]
    assert all(not (b.get_left()[0] < bubble.tip[0] < b.get_right()[0]) for b in others)
    inside_frame(scene)
    assert frame[..., :3].max() > 100  # something is drawn


# --- key -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_key_rows_bubbles_and_side_view_are_the_trace(rendered, tracer, case):
    sentence, focus = CASES[case]
    scene, _ = rendered(Key, case)
    tr = tracer(sentence)
    head = tr.head(0, 0)
    i = expected_focus(tr, focus, head)
    rec = scene.qkv["key"]
    for j, kvec in rec["k_vectors"].items():
        assert_shows(kvec, head.k[j])
        assert rec["rows"][j].word_box.word.text == tr.tokens[j]
    assert_shows(rec["q_column"], head.q[i])

    answers = expected_answers(head, i)
    assert answers, "the focus attends to someone else"
    assert [b.answer_for for b in rec["bubbles"]] == answers
    for b in rec["bubbles"]:  # each answer bubble points at its own word's key row
        r = rec["rows"][b.answer_for]
        assert abs(b.tip[1] - r.k_vec.get_y()) < 0.05
        assert b.tip[0] > r.k_vec.get_right()[0] - 1e-6
    if case == "fluffy":
        assert sorted(tr.tokens[j] for j in answers) == ["blue", "fluffy"]
    else:
        assert sorted(tr.tokens[j] for j in answers) == ["red", "tiny"]

    view = rec["angle_view"]
    top = answers[0]
    q = head.q[i]
    cos = lambda a, b: float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))  # noqa: E731
    assert view.cosines[0].value == pytest.approx(cos(q, head.k[top]), abs=1e-6)
    assert view.angles[0] == pytest.approx(np.arccos(cos(q, head.k[top])), abs=1e-6)
    # the arrow is drawn at that angle to the query's arrow
    a = view.arrows[0].get_end() - view.arrows[0].get_start()
    ref = view.ref_arrow.get_end() - view.ref_arrow.get_start()
    drawn = np.arccos(a @ ref / np.linalg.norm(a) / np.linalg.norm(ref))
    assert drawn == pytest.approx(view.angles[0], abs=1e-3)
    contrast = rec["contrast"]
    vis = [j for j in range(tr.n_tokens) if not head.mask[i, j] and j != i and j not in answers]
    if vis:
        assert contrast == min(vis, key=lambda j: head.scores[i, j])
        assert view.cosines[1].value == pytest.approx(cos(q, head.k[contrast]), abs=1e-6)
    x = tr.layers[0].attn_in
    assert rec["embedding_cosine"].value == pytest.approx(cos(x[i], x[top]), abs=1e-6)
    visible = on_screen(scene)
    assert id(view.cosines[0]) in visible  # the side view is the final picture
    inside_frame(scene)


# --- values --------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_values_weights_sum_delta_and_update_are_the_trace(rendered, tracer, case):
    sentence, focus = CASES[case]
    scene, _ = rendered(Values, case)
    tr = tracer(sentence)
    head = tr.head(0, 0)
    i = expected_focus(tr, focus, head)
    rec = scene.qkv["values"]
    w = head.pattern[i]
    for j, col in rec["v_columns"].items():
        assert_shows(col, head.v[j])
        wl = rec["weights"][j].weight
        assert wl.value == pytest.approx(float(w[j])) and wl.shown == fmt_weight(w[j])
    row = rec["row"]
    for j, col in rec["v_columns"].items():  # each value sits right under its own word
        assert abs(col.get_x() - row.box(row.slot_of[j]).get_x()) < 1e-6
    # opacity follows weight: the most attended value is the most opaque, unattended ones faint
    op = {j: col.entries[0].get_fill_opacity() for j, col in rec["v_columns"].items()}
    top = int(np.argmax(w))
    assert op[top] == pytest.approx(max(op.values()))
    for j in op:
        if w[j] < 0.01:
            assert op[j] < 0.5 * op[top]
    assert_shows(rec["z_column"], head.z[i])
    prod = rec["product"]
    for (r, c), cell in prod.matrix.cells.items():  # W_O drawn transposed: embedding dims down
        assert cell.value == pytest.approx(float(head.W_O[c, r]))
    assert_shows(prod.result, head.delta_e[i])
    resid = tr.layers[0].resid_in
    updated = tr.updated(0, 0)
    assert np.allclose(updated[i], resid[i] + head.delta_e[i], atol=1e-5)
    assert_shows(rec["e_column"], resid[i])
    assert_shows(rec["delta_column"], head.delta_e[i])
    assert_shows(rec["updated_column"], updated[i])
    # the named directions E′ gained, with real projections
    lines = rec["direction_lines"]
    assert lines
    for line in lines:
        d = tr.direction(line.direction)
        assert line.before.value == pytest.approx(float(resid[i] @ d), abs=1e-5)
        assert line.after.value == pytest.approx(float(updated[i] @ d), abs=1e-5)
    if case == "fluffy":
        assert {ln.direction for ln in lines} == {"fluffy", "blue"}
    # then every word at once: the final picture
    cols = rec["all_words"]
    visible = on_screen(scene)
    for name, arr in (("E", resid), ("dE", head.delta_e), ("E'", updated)):
        assert set(cols[name]) == set(range(tr.n_tokens))
        for j, col in cols[name].items():
            assert_shows(col, arr[j])
            assert id(col.entries[0]) in visible
    inside_frame(scene)


# --- parameters: another head, a long sentence ----------------------------------------------------


def test_key_follows_the_chosen_head(rendered, tracer):
    scene, _ = rendered(Key, ("a fluffy blue creature roamed the verdant forest", "creature"), head=2)
    head = tracer("a fluffy blue creature roamed the verdant forest").head(0, 2)
    assert "previous" in head.name
    rec = scene.qkv["key"]
    assert [b.answer_for for b in rec["bubbles"]] == [2]  # the previous token, "blue"
    assert "before" in rec["bubbles"][0].message.lower()
    for j, kvec in rec["k_vectors"].items():
        assert_shows(kvec, head.k[j])


def test_long_sentence_is_abbreviated_never_overlapping(rendered, tracer):
    from model import toy_world as tw

    text = tw.EXAMPLES["long"]
    tr = tracer(text)
    assert tr.n_tokens > 50
    scene, _ = rendered(Values, (text, "rabbit"))
    rec = scene.qkv["values"]
    i = tr.tokens.index("rabbit")
    head = tr.head(0, 0)
    shown = rec["row"].shown
    assert None in shown and i in shown
    assert all(j in shown for j in expected_answers(head, i))  # the attended words stay in view
    for name in ("E", "dE", "E'"):
        cols = sorted(rec["all_words"][name].values(), key=lambda c: c.get_x())
        for a, b in zip(cols, cols[1:]):
            assert a.get_right()[0] < b.get_left()[0], "columns overlap"
    for j, col in rec["all_words"]["E'"].items():
        assert_shows(col, tr.updated(0, 0)[j])
    inside_frame(scene)
    scene_k, _ = rendered(Key, (text, "rabbit"))
    assert [b.answer_for for b in scene_k.qkv["key"]["bubbles"]] == expected_answers(head, i)
    assert sorted(tr.tokens[j] for j in expected_answers(head, i)) == ["fluffy", "white"]
    for j, kvec in scene_k.qkv["key"]["k_vectors"].items():
        assert_shows(kvec, head.k[j])
    inside_frame(scene_k)
    scene_q, _ = rendered(Query, (text, "rabbit"))
    cols = sorted(scene_q.qkv["query"]["q_columns"].values(), key=lambda c: c.get_x())
    for a, b in zip(cols, cols[1:]):
        assert a.get_right()[0] < b.get_left()[0], "columns overlap"
    inside_frame(scene_q)


# --- the component additions this file relies on ------------------------------------------------


def test_token_window_keeps_the_asked_tokens_and_marks_gaps():
    from scenes.components.vectors import token_window

    assert token_window(8, [3], 9) == list(range(8))
    w = token_window(55, [21, 19, 20, 12], 9)
    assert len(w) <= 9 and all(k in w for k in (12, 19, 20, 21))
    shown = [j for j in w if j is not None]
    assert shown == sorted(shown)
    for a, b in zip(w, w[1:]):  # a gap is marked by exactly one None, never two in a row
        assert not (a is None and b is None)
        if a is not None and b is not None:
            assert b == a + 1


def test_horizontal_vector_lays_entries_left_to_right(tracer):
    from scenes.components.vectors import VectorColumn

    k = tracer(FLUFFY[0]).head(0, 0).k[1]
    row = VectorColumn(k, head=4, tail=1, horizontal=True)
    xs = [m.get_x() for m in row.rows]
    assert all(a < b for a, b in zip(xs, xs[1:]))
    ys = [m.get_y() for m in row.entries]
    assert max(ys) - min(ys) < 0.05
    assert_shows(row, k)
    col = VectorColumn(k, head=4, tail=1)  # the default is unchanged: a column
    assert col.width < row.width and col.height > row.height


def test_fade_to_dims_numbers_and_brackets_without_filling_brackets(tracer):
    from scenes.components.vectors import VectorColumn

    col = VectorColumn(tracer(FLUFFY[0]).head(0, 0).v[2]).fade_to(0.3)
    assert all(m.get_fill_opacity() == pytest.approx(0.3) for m in col.entries)
    for b in col.brackets:
        assert b.get_stroke_opacity() == pytest.approx(0.3) and b.get_fill_opacity() == 0


def test_angle_view_draws_the_real_angle_and_cosine(tracer):
    from scenes.components.angle_view import AngleView

    h = tracer(FLUFFY[0]).head(0, 0)
    view = AngleView(h.q[3], [(h.k[0], "#FFFFFF", "arrow(K)_1"), (h.k[5], "#FFFFFF", "arrow(K)_6")])
    ref = view.ref_arrow.get_end() - view.ref_arrow.get_start()
    for arr, kv, cos_mob in zip(view.arrows, (h.k[0], h.k[5]), view.cosines):
        c = float(h.q[3] @ kv / np.linalg.norm(h.q[3]) / np.linalg.norm(kv))
        a = arr.get_end() - arr.get_start()
        assert np.arccos(a @ ref / np.linalg.norm(a) / np.linalg.norm(ref)) == pytest.approx(np.arccos(c), abs=1e-3)
        assert cos_mob.value == pytest.approx(c) and cos_mob.shown == FORMATTERS["signed2"](c)
        # lengths follow the real norms
        assert np.linalg.norm(a) / np.linalg.norm(ref) == pytest.approx(np.linalg.norm(kv) / np.linalg.norm(h.q[3]), rel=1e-3)
