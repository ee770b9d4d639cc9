"""`query`, `key`, `values`: their plans are the trace at the shown rounding, and so is what they draw.

Plans are checked without manim against arrays read straight from the trace (numpy). Then each
lesson is rendered tiny (manim jumps to the last frame, so all the Python runs but one frame is
rasterized) and what its chapter drew (`stage.drawn`) is compared with the trace too, in en, ko
and pt. The hand-ons are checked on lessons of several chapters: query → key on one stage, and a
grid left by the chapter before values. Expectations never come from the code under test.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from manim import MovingCameraScene, config, tempconfig

from attention_manim.scenes.components.text import FORMATTERS, label
from attention_manim.scenes.i18n import Say
from attention_manim.scenes.style import fmt_vec, fmt_weight

from .conftest import expected_focus, numbers_in, tiny_config

FLUFFY = "a fluffy blue creature roamed the verdant forest"
FOX = "the tiny red fox saw a huge green tower"
CASES = {"fluffy": (FLUFFY, None), "fox": (FOX, "fox")}


def long_sentence(toy_model) -> str:
    return toy_model.info.examples["long"]


# --- expectations from the trace alone ------------------------------------------------------------


def expected_answers(head, i):
    """Keys the focus gives at least 0.1 of its attention (other than itself), strongest first."""
    row = head.pattern[i]
    order = [int(j) for j in np.argsort(-row, kind="stable") if row[j] >= 0.1 and j != i]
    return order[:3] or [int(np.argmax(row))]


def expected_contrast(head, i, answers):
    vis = [j for j in range(len(head.pattern)) if not head.mask[i, j] and j != i and j not in answers]
    return min(vis, key=lambda j: head.scores[i, j]) if vis else None


def cos(a, b):
    return float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))


def assert_shows(vector_mob, values, kind="vec"):
    """Every shown entry of a VectorColumn equals values[entry.index] at the shown rounding."""
    fmt = FORMATTERS[kind]
    nums = numbers_in(vector_mob)
    assert nums, "no numbers drawn"
    for n in nums:
        want = float(values[n.index])
        assert n.value == pytest.approx(want, abs=1e-4), (n.index, n.value, want)
        assert n.shown == fmt(want), (n.index, n.shown, fmt(want))


def assert_window(shown, vector, head, tail):
    """A plan's `Shown` is the first `head` and last `tail` entries of the real vector, as written."""
    v = np.asarray(vector, float)
    idx = list(range(len(v))) if len(v) <= head + tail + 1 else [*range(head), None, *range(len(v) - tail, len(v))]
    assert list(shown.indices) == idx
    real = [float(v[k]) for k in idx if k is not None]
    assert np.allclose(shown.values, real, atol=1e-6)
    assert list(shown.text) == [fmt_vec(x) for x in real]


def inside_frame(scene):
    """Nothing the camera shows is cut by its frame's edge (at home: nothing leaves the frame at all; away, at a
    picture a lesson ends on, what lies elsewhere is not seen)."""
    frame = scene.camera.frame
    (cx, cy, _), half_w, half_h = frame.get_center(), frame.width / 2, frame.height / 2
    home = camera_home(scene)
    for m in scene.mobjects:
        for sub in m.family_members_with_points():
            p = sub.points
            if len(p) == 0 or sub.get_stroke_opacity() == 0 and sub.get_fill_opacity() == 0:
                continue
            x, y = p[:, 0] - cx, p[:, 1] - cy
            if not home and (x.min() > half_w or x.max() < -half_w or y.min() > half_h or y.max() < -half_h):
                continue  # wholly elsewhere
            assert np.abs(x).max() <= half_w + 1e-6, f"{sub} leaves the frame horizontally"
            assert np.abs(y).max() <= half_h + 1e-6, f"{sub} leaves the frame vertically"


def camera_home(scene):
    frame = scene.camera.frame
    return np.allclose(frame.get_center(), 0, atol=1e-6) and frame.width == pytest.approx(config.frame_width)


def home_or_going(scene):
    """The camera is home, or goes home as a next chapter starts (Stage.on_leave): a lesson may end on the
    picture its last caption spoke over, away from home."""
    return camera_home(scene) or scene.stage.undo_pending > 0


# --- plans (pure: no manim) --------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_query_plan_is_the_trace(make_inputs, tracer, case):
    from attention_manim.scenes.plans.qkv import plan_query
    from attention_manim.scenes.setting import resolve

    sentence, focus = CASES[case]
    plan = plan_query(resolve(make_inputs(sentences=[sentence], focus=focus), role="adjective_noun"))
    tr = tracer(sentence)
    head = tr.head(0, 0)
    i = expected_focus(tr, focus, head)
    x = tr.layers[0].attn_in[i]
    assert plan.focus == i and plan.tokens == tr.tokens
    assert set(expected_answers(head, i)) <= set(plan.slots) and i in plan.slots
    assert (plan.d_model, plan.d_head) == (x.shape[0], head.q.shape[1])
    assert_window(plan.embedding, x, 5, 1)
    W = head.W_Q.T  # drawn as the video does: the query's dimensions down
    rows = [r for r in plan.w_q.rows if r is not None]
    cols = [c for c in plan.w_q.cols if c is not None]
    assert np.allclose(plan.w_q.values, W[np.ix_(rows, cols)])
    assert_window(plan.query, head.q[i], 5, 1)
    assert np.allclose(W @ x + head.b_Q, head.q[i], atol=1e-5)  # the product the chapter sweeps is the query
    assert not plan.has_bias
    for j, s in plan.queries.items():
        assert_window(s, head.q[j], 5, 1)
    assert set(plan.queries) == {j for j in plan.slots if j is not None}
    assert plan.question == "qkv.lines.adjective_noun.question"


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_key_plan_is_the_trace(make_inputs, tracer, case):
    from attention_manim.scenes.plans.qkv import plan_key
    from attention_manim.scenes.setting import resolve

    sentence, focus = CASES[case]
    plan = plan_key(resolve(make_inputs(sentences=[sentence], focus=focus), role="adjective_noun"))
    tr = tracer(sentence)
    head = tr.head(0, 0)
    i = expected_focus(tr, focus, head)
    answers = expected_answers(head, i)
    assert list(plan.tops) == answers
    assert sorted(tr.tokens[j] for j in answers) == (["blue", "fluffy"] if case == "fluffy" else ["red", "tiny"])
    assert plan.contrast == expected_contrast(head, i, answers)
    assert all(j in plan.rows for j in [i, *answers, plan.contrast] if j is not None)
    for j, s in plan.keys.items():
        assert_window(s, head.k[j], 4, 1)
    for j, s in plan.strip.items():
        assert_window(s, head.q[j], 2, 1)
    assert plan.answers == tuple("qkv.lines.adjective_noun.answer" for _ in answers)
    side, x, top = plan.side, tr.layers[0].attn_in, answers[0]
    assert side.key == top
    assert side.cos_key == pytest.approx(cos(head.q[i], head.k[top]), abs=1e-6)
    assert side.cos_embeddings == pytest.approx(cos(x[i], x[top]), abs=1e-6)
    if plan.contrast is not None:
        assert side.cos_contrast == pytest.approx(cos(head.q[i], head.k[plan.contrast]), abs=1e-6)
    # captions chosen by the documented rule on the real cosines
    assert side.embeddings_caption.endswith("different" if side.cos_embeddings < 0.5 else "similar")
    assert side.contrast_caption == ("qkv.key.contrast_away" if side.cos_contrast < -0.05 else "qkv.key.contrast_off")
    assert len(side.axis_names) == 3


def test_each_head_role_has_its_own_lines_in_every_language(make_inputs):
    from attention_manim.scenes.plans.qkv import LINE_ROLES, line_keys, plan_key
    from attention_manim.scenes.setting import resolve

    head2 = plan_key(resolve(make_inputs(sentences=[FLUFFY], focus="creature", head=2)))
    assert head2.question == "qkv.lines.previous_token.question"
    assert [head2.tokens[j] for j in head2.tops] == ["blue"]  # the previous token
    assert line_keys("") == ("qkv.lines.neutral.question", "qkv.lines.neutral.answer")
    for lang in ("en", "ko", "pt"):
        say = Say(lang)
        for role in (*LINE_ROLES, "unknown"):
            q, a = line_keys(role)
            assert say(q) and say(a)
        assert say("qkv.lines.self.answer")


@pytest.mark.parametrize("case", ["fluffy", "fox"])
def test_values_plan_is_the_trace(make_inputs, tracer, case):
    from attention_manim.scenes.plans.qkv import plan_values
    from attention_manim.scenes.setting import resolve

    sentence, focus = CASES[case]
    plan = plan_values(resolve(make_inputs(sentences=[sentence], focus=focus), role="adjective_noun"))
    tr = tracer(sentence)
    head = tr.head(0, 0)
    i = expected_focus(tr, focus, head)
    w = head.pattern[i]
    assert np.allclose(plan.weights, w)
    assert list(plan.chips) == [j for j in range(len(w)) if not head.mask[i, j]]  # short: every visible key
    assert plan.hidden == 0
    for j in plan.chips:
        assert_window(plan.values[j], head.v[j], 2, 1)
        assert plan.weight_text[j] == fmt_weight(w[j])
    z = w @ head.v  # the weighted sum of the values
    assert_window(plan.z, z, 5, 1)
    assert np.allclose(head.z[i], z, atol=1e-5)
    delta = z @ head.W_O
    assert np.allclose(delta, head.delta_e[i], atol=1e-5)
    assert_window(plan.delta, delta, 5, 1)
    resid = tr.layers[0].resid_in
    assert_window(plan.embedding, resid[i], 5, 1)
    assert_window(plan.updated, resid[i] + delta, 5, 1)
    tops = [int(j) for j in np.argsort(-w, kind="stable")[:3] if w[j] >= 0.1] or [int(np.argmax(w))]
    assert list(plan.tops) == tops  # the keys the caption names, strongest first (itself included)
    assert plan.rest_weight == pytest.approx(1 - sum(w[j] for j in tops), abs=1e-6)
    for d in plan.directions:
        assert d.before == pytest.approx(float(resid[i] @ tr.direction(d.name)), abs=1e-5)
        assert d.after == pytest.approx(float((resid[i] + delta) @ tr.direction(d.name)), abs=1e-5)
        assert d.after - d.before >= 0.3
    if case == "fluffy":
        assert {d.name for d in plan.directions} == {"fluffy", "blue"}
    # the rows marked ≈: exactly those whose drawn E + ΔE (one decimal each) miss E′ drawn
    def drawn_tenths(x):  # the digits drawn, in tenths
        return int(fmt_vec(x).replace("−", "-").replace("+", "").replace(".", ""))

    want = [k for k in plan.updated.indices if k is not None
            and drawn_tenths(resid[i][k]) + drawn_tenths(head.delta_e[i][k]) != drawn_tenths((resid[i] + delta)[k])]
    assert list(plan.rounding_off) == want
    for name, arr in (("E", resid), ("dE", head.delta_e), ("E'", resid + head.delta_e)):
        assert set(plan.bands[name]) == {j for j in plan.band_slots if j is not None}
        for j, s in plan.bands[name].items():
            assert_window(s, arr[j], 3, 1)


def test_long_sentence_plans_keep_the_attended_words(make_inputs, tracer, toy_model):
    from attention_manim.scenes.plans.qkv import MAX_CHIPS, MAX_ROWS, MAX_SLOTS, plan_key, plan_query, plan_values
    from attention_manim.scenes.setting import resolve

    text = long_sentence(toy_model)
    setting = resolve(make_inputs(sentences=[text], focus="rabbit"), role="adjective_noun")
    tr = tracer(text)
    head = tr.head(0, 0)
    i = tr.tokens.index("rabbit")
    answers = expected_answers(head, i)
    assert sorted(tr.tokens[j] for j in answers) == ["fluffy", "white"]
    q, k, v = plan_query(setting), plan_key(setting), plan_values(setting)
    assert len(q.slots) <= MAX_SLOTS and None in q.slots and all(j in q.slots for j in [i, *answers])
    assert len(k.rows) <= MAX_ROWS and all(j in k.rows for j in [i, *answers])
    visible = [j for j in range(tr.n_tokens) if not head.mask[i, j]]
    strongest = sorted(sorted(visible, key=lambda j: -head.pattern[i, j])[:MAX_CHIPS])
    assert list(v.chips) == strongest and v.hidden == len(visible) - MAX_CHIPS
    assert v.hidden_weight == pytest.approx(sum(head.pattern[i, j] for j in visible if j not in strongest))
    for plan_slots in (q.slots, k.rows, v.band_slots):  # a gap is one ellipsis, never two in a row
        assert all(not (a is None and b is None) for a, b in zip(plan_slots, plan_slots[1:]))


# --- renders -----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, toy_model, tracer):
    """rendered(lesson class, lang="en", **inputs) -> scene, rendered once per module."""
    from attention_manim.scenes.setting import SceneInputs

    cache = {}

    def get(cls, lang="en", **kw):
        key = (cls, lang, tuple(sorted(kw.items())))
        if key not in cache:
            inputs = SceneInputs(tracer=tracer, model=toy_model.info, lang=lang, **kw)
            with tempconfig(tiny_config(tmp_path_factory.mktemp("qkv"), (160, 90))):
                scene = cls(inputs)
                scene.render()
                scene.last_frame = np.array(scene.renderer.get_frame())
            cache[key] = scene
        return cache[key]

    return get


def lesson_class(*chapters):
    from attention_manim.scenes.lesson import Lesson, LessonSceneBase

    return type("T", (LessonSceneBase, MovingCameraScene), {"lesson": Lesson("t", tuple(chapters)), "description": ""})


def on_screen(scene):
    fam = set()
    for m in scene.mobjects:
        fam.update(id(x) for x in m.get_family())
    return fam


@pytest.mark.render
def test_query_draws_the_trace_and_hands_on_the_row_and_the_queries(rendered, tracer):
    from attention_manim.scenes.lessons import QUERY

    sentence, focus = CASES["fluffy"]
    scene = rendered(QUERY, sentences=(sentence,), focus=focus)
    tr = tracer(sentence)
    head = tr.head(0, 0)
    i = expected_focus(tr, focus, head)
    drawn = scene.stage.drawn["query"]
    prod = drawn["product"]
    for (r, c), cell in prod.matrix.cells.items():  # the drawn matrix is W_Q transposed
        assert cell.value == pytest.approx(float(head.W_Q[c, r])) and cell.shown == fmt_vec(head.W_Q[c, r])
    assert_shows(prod.vector, tr.layers[0].attn_in[i])
    assert_shows(drawn["product_result"], head.q[i])
    # the close-up names whose embedding it multiplies: the focus's word over E⃗ (review 48), gone after
    tag = drawn["word_tag"]
    assert tag.tokens[0] == tr.tokens[i] and tag.get_bottom()[1] > prod.vector.symbol.get_top()[1]
    assert abs(tag.get_x() - prod.vector.symbol.get_x()) < 0.05 and tag not in scene.mobjects
    # the close-up shows the word row wholly or not at all (review 53: its boxes' lower edge peeked in along the top)
    from manim import config

    centre, width, row_bottom, row_top = drawn["close_up"]  # the row where it stood then
    top = centre[1] + width * config.frame_height / config.frame_width / 2
    assert row_bottom >= top - 1e-6 or row_top <= top
    assert tag.get_top()[1] <= top  # and what it zooms onto is in it
    # what the entries' colours mean, under W_Q while the caption says it (review 51: blue and red unkeyed): its
    # ends the matrix's smallest and largest entry, its words the catalog's, gone with the next caption
    key = drawn["colour_key"]
    assert (key.low, key.high) == pytest.approx((float(head.W_Q.min()), float(head.W_Q.max())))
    assert key.get_top()[1] < prod.matrix.brackets.get_bottom()[1] and key not in scene.mobjects
    # ... under W_Q only, clear of E⃗ (review 52: wider, it ran under E⃗ and its note), its words on the bar's line
    assert key.get_right()[0] < prod.vector.get_left()[0] and abs(key.caption.get_y() - key.bar.get_y()) < 0.05
    assert Say("en")("common.colour.matrix_scale") in [m.original_text for m in key.get_family() if hasattr(m, "original_text")]
    row, cols = drawn["row"], drawn["q_columns"]
    assert set(cols) == set(range(tr.n_tokens))
    for j, col in cols.items():
        assert_shows(col, head.q[j])
        assert abs(col.get_x() - row.box(row.slot_of[j]).get_x()) < 1e-6  # under its own word
    assert drawn["bubble"].message == Say("en")("qkv.lines.adjective_noun.question")
    # the first frame says what the lesson is and whose query it is (it was a row of words alone)
    heading = " ".join(m.original_text for m in drawn["heading"].get_family() if hasattr(m, "original_text"))
    assert "query" in heading and "layer 0" in heading and "adjectives → nouns" in heading, heading
    assert drawn["heading"] not in scene.mobjects  # gone once the embedding comes in
    # the hand-ons: the row and the query columns, in sentence order, on stage
    stage = scene.stage
    assert stage.words is row and stage.has("words") and stage.has("queries")
    assert stage.queries.tokens == list(range(tr.n_tokens))
    assert list(stage.queries.submobjects) == [cols[j] for j in stage.queries.tokens]
    # "all computed at once" drew one box around every query column (then took it away)
    box = drawn["all_queries_box"]
    assert all(box.get_left()[0] < c.get_left()[0] and c.get_right()[0] < box.get_right()[0] for c in cols.values())
    assert box not in scene.mobjects
    assert camera_home(scene)
    inside_frame(scene)
    assert scene.last_frame[..., :3].max() > 100


@pytest.mark.render
def test_key_question_stands_right_of_the_keys_in_portuguese(rendered, tracer):
    """Review 50 (pt): the question did not fit the room right of the wider key rows on one line and hung under
    its query, over the names Q⃗₄–Q⃗₆. On two lines it stands right of the keys, clear of every name."""
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.lessons import KEY

    sentence, focus = CASES["fluffy"]
    scene = rendered(KEY, lang="pt", sentences=(sentence,), focus=focus)
    drawn, stage = scene.stage.drawn["key"], scene.stage
    question = drawn["question"]
    assert question.text.get_left()[0] > stage.keys.get_right()[0]
    assert question.get_right()[0] < 7.1
    for name in drawn["query_names"]:
        assert (name.get_right()[0] < question.get_left()[0] or name.get_left()[0] > question.get_right()[0]
                or name.get_bottom()[1] > question.get_top()[1])
    assert question.message.replace("\n", " ") == Say("pt")("qkv.lines.adjective_noun.question")


@pytest.mark.render
def test_key_draws_the_trace_answers_and_the_side_view(rendered, tracer):
    from attention_manim.scenes.lessons import KEY

    sentence, focus = CASES["fluffy"]
    scene = rendered(KEY, sentences=(sentence,), focus=focus)
    tr = tracer(sentence)
    head = tr.head(0, 0)
    i = expected_focus(tr, focus, head)
    answers = expected_answers(head, i)
    drawn, stage = scene.stage.drawn["key"], scene.stage
    assert stage.keys.tokens == list(range(tr.n_tokens)) and stage.queries.tokens == list(range(tr.n_tokens))
    for j, kvec in zip(stage.keys.tokens, stage.keys):
        assert_shows(kvec, head.k[j])
        assert drawn["rows"][j].word_box.word.text == tr.tokens[j]
        assert abs(kvec.get_y() - drawn["rows"][j].get_y()) < 0.05  # beside its word
    for j, qcol in zip(stage.queries.tokens, stage.queries):
        assert_shows(qcol, head.q[j])
    # each query is named under its column (unnamed, the strip read as the embeddings), visible at the end
    names = drawn["query_names"]
    assert len(names) == len(stage.queries)
    for name, qcol in zip(names, stage.queries):
        assert abs(name.get_x() - qcol.get_x()) < 0.05 and name.get_top()[1] < qcol.get_bottom()[1]
        assert max(m.get_fill_opacity() for m in name.family_members_with_points()) == pytest.approx(1.0)
    # the focus's question covers no query's name: its tail starts at the focus's own name
    question = drawn["question"]
    for name in names:
        apart = (name.get_right()[0] < question.get_left()[0] or name.get_left()[0] > question.get_right()[0] or
                 name.get_bottom()[1] > question.get_top()[1])
        assert apart, "the question bubble sits on a query's name"
    assert np.linalg.norm(question.tip - names[i].get_bottom()) < 0.1
    assert question.text.get_left()[0] > stage.keys.get_right()[0]  # the box right of the key rows
    assert [b.answer_for for b in drawn["answers"]] == answers
    for b in drawn["answers"]:  # each answer points at its own key
        kvec = stage.keys.by_token[b.answer_for]
        assert abs(b.tip[1] - kvec.get_y()) < 0.05 and b.tip[0] > kvec.get_right()[0] - 1e-6
        assert b.message == Say("en")("qkv.lines.adjective_noun.answer")
    view = drawn["angle_view"]
    assert view.cosines[0].value == pytest.approx(cos(head.q[i], head.k[answers[0]]), abs=1e-6)
    a = view.arrows[0].get_end() - view.arrows[0].get_start()
    ref = view.ref_arrow.get_end() - view.ref_arrow.get_start()
    assert np.arccos(a @ ref / np.linalg.norm(a) / np.linalg.norm(ref)) == pytest.approx(view.angles[0], abs=1e-3)
    x = tr.layers[0].attn_in
    assert drawn["embedding_cosine"].value == pytest.approx(cos(x[i], x[answers[0]]), abs=1e-6)
    # readable: the cosines' digits at least 18 px at 720p (90 px a unit), clear of the arrows; the
    # illustrative axes marked so
    from attention_manim.scenes.components.angle_view import _segment_meets

    for c, arc in zip(view.cosines, view.arcs):
        assert c.height * 90 >= 18
        assert not any(_segment_meets(arc[1], a.get_start(), a.get_end(), gap=0.0) for a in [view.ref_arrow, *view.arrows])
    # the embedding picture's drawn angle against the real one: the note says so when they part by > 15°
    drawn_deg, real_deg = drawn["embedding_angles"]
    assert real_deg == pytest.approx(np.degrees(np.arccos(cos(x[i], x[answers[0]]))), abs=1e-4)
    assert drawn_deg == pytest.approx(drawn["space"].drawn_angle(drawn["space"].arrows["Ei"],
                                                                 drawn["space"].arrows["Ej"]), abs=1e-6)
    which = "axes_note_skewed" if abs(drawn_deg - real_deg) > 15 else "axes_note"
    assert drawn["axes_note"].text == Say("en")(f"qkv.key.{which}", d_model=tr.model.d_model).replace(" ", "")
    # the lesson ends on the side view its last caption spoke over (review 53: the camera went home after it,
    # a last frame no caption explained); it comes home, the view dropped, only when a next chapter starts
    assert id(view.cosines[0]) in on_screen(scene) and not camera_home(scene) and stage.undo_pending == 1
    assert stage.has("keys") and stage.has("queries") and stage.has("words")


@pytest.mark.render
def test_key_follows_the_chosen_head(rendered, tracer):
    from attention_manim.scenes.lessons import KEY

    scene = rendered(KEY, sentences=(FLUFFY,), focus="creature", head=2)
    head = tracer(FLUFFY).head(0, 2)
    drawn = scene.stage.drawn["key"]
    assert [b.answer_for for b in drawn["answers"]] == [2]  # the previous token, "blue"
    assert drawn["answers"][0].message == Say("en")("qkv.lines.previous_token.answer")
    for j, kvec in zip(scene.stage.keys.tokens, scene.stage.keys):
        assert_shows(kvec, head.k[j])


@pytest.mark.render
def test_value_chips_stay_within_the_grids_sides_in_portuguese(rendered):
    """pt's "0,48 × V⃗₂ [...]" chips ran 5 px past the grid's right edge (review 52): they keep inside it."""
    from attention_manim.scenes.lessons import VALUES

    drawn = rendered(VALUES, lang="pt").stage.drawn["values"]
    lines = drawn["grid"].lines
    assert drawn["chips"]
    for chip in drawn["chips"].values():
        assert lines.get_left()[0] <= chip.get_left()[0] and chip.get_right()[0] <= lines.get_right()[0]
    # every word's E + ΔE = E′: the rounding note under them keeps 0.3 from the frame's foot (it stood at 15 px)
    from attention_manim.scenes.chapters.values import BELOW

    note = drawn["all_words_note"]
    assert len(note) and note.get_bottom()[1] >= BELOW[1] - config.frame_height / 2 + 0.3 - 1e-6


@pytest.mark.render
def test_values_are_weighted_inside_the_focus_column(rendered, tracer):
    from attention_manim.scenes.lessons import VALUES

    sentence, focus = CASES["fox"]
    scene = rendered(VALUES, sentences=(sentence,), focus=focus)
    tr = tracer(sentence)
    head = tr.head(0, 0)
    i = expected_focus(tr, focus, head)
    w = head.pattern[i]
    drawn, stage = scene.stage.drawn["values"], scene.stage
    grid = drawn["grid"]
    assert stage.grid is grid and stage.has("grid") and grid.mask_state == "cleared"
    ll, ur = grid.column_region(i)
    chips = drawn["chips"]
    assert sorted(chips) == [j for j in range(tr.n_tokens) if not head.mask[i, j]]
    for j, chip in chips.items():
        assert_shows(chip.vec, head.v[j])
        assert chip.weight.value == pytest.approx(float(w[j])) and chip.weight.shown == fmt_weight(w[j])
        cell = grid.cell_center(i, j)
        assert abs(chip.get_y() - cell[1]) < 1e-6  # on its key's row (rows are tall enough here)
        assert chip.box.get_left()[0] > ur[0] or chip.box.get_right()[0] < ll[0]  # beside the column
        # and within the grid's sides (review 52: pt's chips ran 5 px past its right edge)
        assert grid.lines.get_left()[0] <= chip.get_left()[0] and chip.get_right()[0] <= grid.lines.get_right()[0]
    op = {j: c.vec.entries[0].get_fill_opacity() for j, c in chips.items()}
    top = int(np.argmax(w))
    assert op[top] == pytest.approx(max(op.values()))
    assert all(op[j] < 0.5 * op[top] for j in op if w[j] < 0.01)  # faded by the real weight
    assert_shows(drawn["z_column"], w @ head.v)
    prod = drawn["product"]
    # this head's block of W_O, named with its head (review 53: plain W_O is every head's blocks, output_matrix)
    assert "W_O^((0))" in prod.matrix.label.typst_code
    # W_V's and W_O's colours keyed as W_Q's (review 53: no key), under each, from its smallest to its largest
    # entry, gone with its picture; the brace's words read at the query's size, not twice it under the close-up
    for key, W, real in ((drawn["w_v_key"], drawn["W_V"], head.W_V), (drawn["w_o_key"], prod.matrix, head.W_O)):
        assert (key.low, key.high) == pytest.approx((float(real.min()), float(real.max())))
        assert key.get_top()[1] < W.brackets.get_bottom()[1] and key not in scene.mobjects
    words = drawn["delta_brace"][1]  # (the close-up's frame is lift_width wide)
    assert words.height * config.frame_width / drawn["lift_width"] == pytest.approx(
        label(words.original_text, 26).height, rel=0.02)
    for (r, c), cell in prod.matrix.cells.items():  # W_O drawn transposed: embedding dims down
        assert cell.value == pytest.approx(float(head.W_O[c, r]))
    assert_shows(prod.result, head.delta_e[i])
    # each close-up names its word: the value's source over its E⃗, the focus over ΔE⃗ (review 48), gone after
    source = next(p for p in scene.plans if hasattr(p, "source")).source
    tag = drawn["value_tag"]
    over = drawn["value_product"].vector.symbol
    assert tag.tokens[0] == tr.tokens[source] and tag.get_bottom()[1] > over.get_top()[1]
    assert abs(tag.get_x() - over.get_x()) < 0.05 and tag not in scene.mobjects
    # (ΔE⃗ itself has moved on into E + ΔE = E′: its length brace, faded where it stood, marks the spot)
    tag, brace = drawn["delta_tag"], drawn["delta_brace"]
    assert tag.tokens[0] == tr.tokens[i] and tag.get_bottom()[1] > brace.get_top()[1]
    assert brace.get_left()[0] - 1.0 < tag.get_x() < brace.get_left()[0] and tag not in scene.mobjects
    resid = tr.layers[0].resid_in
    assert_shows(drawn["e_column"], resid[i])
    assert_shows(drawn["delta_column"], head.delta_e[i])
    assert_shows(drawn["updated_column"], resid[i] + head.delta_e[i])
    for line in drawn["direction_lines"]:
        d = tr.direction(line.direction)
        assert line.before.value == pytest.approx(float(resid[i] @ d), abs=1e-5)
        assert line.after.value == pytest.approx(float((resid[i] + head.delta_e[i]) @ d), abs=1e-5)
    for name, arr in (("E", resid), ("dE", head.delta_e), ("E'", resid + head.delta_e)):
        assert set(drawn["all_words"][name]) == set(range(tr.n_tokens))
        for j, col in drawn["all_words"][name].items():
            assert_shows(col, arr[j])
    # ≈ beside exactly the E′ rows whose drawn digits do not add up (E + ΔE as drawn vs E′ as drawn)
    def tenths(mob):
        return int(mob.shown.replace("−", "-").replace("+", "").replace(".", ""))

    e, d, n = drawn["e_column"], drawn["delta_column"], drawn["updated_column"]
    want = [m.index for m in n.entries if tenths(e.entry(m.index)) + tenths(d.entry(m.index)) != tenths(m)]
    marks = drawn["rounding"]
    assert len(marks[0] if len(marks) else []) == len(want)
    for mark, k in zip(marks[0] if len(marks) else [], want):
        assert abs(mark.get_y() - n.entry(k).get_y()) < 1e-6 and mark.get_left()[0] > n.brackets.get_right()[0]
    # the sum sits in the side panel, the grid stays; the camera is back and nothing is off-frame
    panel = stage.region("panel")
    assert panel.contains(drawn["updated_column"]) and panel.contains(drawn["e_column"])
    assert id(drawn["updated_column"].entries[0]) in on_screen(scene)
    assert home_or_going(scene)
    inside_frame(scene)


@pytest.mark.render
def test_values_shows_w_v_making_a_value_while_the_caption_says_so(tmp_path, toy_model, tracer):
    """While the caption says W_V turns each embedding into a value vector, the screen shows W_V (the
    head's real one, transposed as drawn) times the head input of the focus's strongest key, giving
    that key's real value vector, windowed like W_Q · E⃗ = Q⃗ and never hiding an entry its chip shows."""
    from attention_manim.scenes.lessons import VALUES
    from attention_manim.scenes.review import Observer
    from attention_manim.scenes.setting import SceneInputs

    seen = {}

    class Watch(Observer):
        fast = False  # play as the fixture does; only listen

        def caption_done(self, scene, text, start, end):
            w_v = scene.stage.drawn.get("values", {}).get("W_V")
            frame = scene.camera.frame
            x0, x1 = frame.get_x() - frame.width / 2, frame.get_x() + frame.width / 2
            seen[text] = (w_v is not None and id(w_v.label) in on_screen(scene)
                          and min(m.get_fill_opacity() for m in w_v.label.family_members_with_points()) > 0.9
                          and x0 < w_v.label.get_x() < x1)

    inputs = SceneInputs(tracer=tracer, model=toy_model.info, lang="en", sentences=(FLUFFY,))
    with tempconfig(tiny_config(tmp_path, (160, 90))):
        scene = VALUES(inputs)
        scene.observer = Watch()
        scene.render()
    tr = tracer(FLUFFY)
    head = tr.head(0, 0)
    i = expected_focus(tr, None, head)
    j = int(np.argmax(head.pattern[i]))  # the focus's strongest key
    from attention_manim.scenes.i18n import plain_text

    # as written ("WV"); the lesson opens here, so its first caption (review 35: not "A third matrix")
    caption = plain_text(Say("en")("qkv.values.values_first", d_head=head.v.shape[1]))
    assert seen[caption], "W_V is not on screen when its caption ends"
    drawn = scene.stage.drawn["values"]
    W, prod = drawn["W_V"], drawn["value_product"]
    assert prod.matrix is W and "W_V" in W.label.typst_code
    assert W.cells
    for (r, c), cell in W.cells.items():  # drawn transposed: the value's dimensions down
        assert cell.value == pytest.approx(float(head.W_V[c, r])) and cell.shown == fmt_vec(head.W_V[c, r])
    x = tr.layers[0].attn_in[j]
    assert_shows(prod.vector, x)
    assert_shows(prod.result, x @ head.W_V)
    assert_shows(drawn["value_column"], head.v[j])
    assert [m.index for m in prod.result.entries] == [k for k in range(5)] + [head.v.shape[1] - 1]
    chip = drawn["chips"][j]
    assert {m.index for m in chip.vec.entries} <= {m.index for m in prod.result.entries}
    assert id(W.label) not in on_screen(scene) and home_or_going(scene)  # gone before the grid part


@pytest.mark.render
def test_values_in_the_last_column_in_the_paper_layout_and_on_a_long_sentence(rendered, tracer, toy_model):
    from attention_manim.scenes.lessons import VALUES

    scene = rendered(VALUES, sentences=(FLUFFY,), focus="forest")  # no room on the right: the chips go left
    drawn = scene.stage.drawn["values"]
    grid = drawn["grid"]
    ll, _ = grid.column_region(7)
    assert sorted(drawn["chips"]) == list(range(8))
    for j, chip in drawn["chips"].items():
        assert chip.box.get_right()[0] < ll[0] and abs(chip.get_y() - grid.cell_center(7, j)[1]) < 1e-6
        assert chip.box.height >= grid.cell_height - 0.05  # it covers the dots of the cells it lies over
    inside_frame(scene)

    scene = rendered(VALUES, sentences=(FLUFFY,), layout="paper")
    head = tracer(FLUFFY).head(0, 0)
    drawn = scene.stage.drawn["values"]
    i = 3
    ll, ur = drawn["grid"].column_region(i)  # a row in the paper layout
    for j, chip in drawn["chips"].items():
        assert chip.leader is not None and chip.box.get_top()[1] < ll[1]  # under the focus row, tied to its cell
        assert np.allclose(chip.leader.get_start(), drawn["grid"].cell_center(i, j))
        assert_shows(chip.vec, head.v[j])
    inside_frame(scene)

    text = long_sentence(toy_model)
    scene = rendered(VALUES, sentences=(text,), focus="rabbit")
    drawn = scene.stage.drawn["values"]
    chips = sorted(drawn["chips"].values(), key=lambda c: -c.get_y())
    for a, b in zip(chips, chips[1:]):
        assert a.box.get_bottom()[1] >= b.box.get_top()[1] - 1e-6, "chips overlap"
    assert_shows(drawn["updated_column"], tracer(text).updated(0, 0)[tracer(text).tokens.index("rabbit")])
    inside_frame(scene)


@pytest.mark.render
def test_long_sentence_columns_never_overlap(rendered, toy_model, tracer):
    from attention_manim.scenes.lessons import KEY, QUERY

    text = long_sentence(toy_model)
    for cls in (QUERY, KEY):
        scene = rendered(cls, sentences=(text,), focus="rabbit")
        cols = sorted(scene.stage.queries, key=lambda c: c.get_x())
        for a, b in zip(cols, cols[1:]):
            assert a.get_right()[0] < b.get_left()[0], "columns overlap"
        inside_frame(scene)


# --- hand-ons across chapters --------------------------------------------------------------------------


@pytest.mark.render
def test_key_goes_on_with_the_query_picture(rendered, tracer):
    from attention_manim.scenes.chapters.key import Key
    from attention_manim.scenes.chapters.query import Query

    scene = rendered(lesson_class(Query(), Key()), sentences=(FLUFFY,))
    stage = scene.stage
    assert scene.chapters_played == ["query", "key"]
    head = tracer(FLUFFY).head(0, 0)
    q_plan, k_plan = scene.plans
    # the word row is the query chapter's row, moved (morphed, not rebuilt)
    assert stage.words is stage.drawn["query"]["row"] and stage.has("words")
    assert stage.queries.tokens == [j for j in q_plan.slots if j is not None]
    assert stage.keys.tokens == [j for j in k_plan.rows if j is not None]
    for j, col in zip(stage.queries.tokens, stage.queries):
        assert_shows(col, head.q[j])
    for j, kvec in zip(stage.keys.tokens, stage.keys):
        assert_shows(kvec, head.k[j])
    # nothing of the query chapter's picture is left but its hand-ons
    gone = stage.drawn["query"]["q_symbols"]
    assert id(gone[0]) not in on_screen(scene)
    assert stage.has("queries") and stage.has("keys")
    inside_frame(scene)
    # going on from the queries, it counts W_K as the second matrix; opening a lesson, it first says what
    # the top row is (review 35: "key" opened with "A second matrix", mid-story)
    from attention_manim.scenes.i18n import plain_text
    from attention_manim.scenes.lessons import KEY

    say = Say("en")
    assert plain_text(say("qkv.key.keys")) in [c for c, _ in scene.caption_log]
    alone = [c for c, _ in rendered(KEY).caption_log]
    assert alone[0] == plain_text(say("qkv.key.keys_first")) and plain_text(say("qkv.key.keys")) not in alone


@pytest.mark.render
def test_values_goes_on_with_the_grid_on_stage(rendered):
    from attention_manim.scenes.chapters.pattern import Pattern
    from attention_manim.scenes.chapters.values import Values

    scene = rendered(lesson_class(Pattern(), Values()), sentences=(FLUFFY,))
    stage = scene.stage
    assert stage.drawn["values"]["grid"] is stage.drawn["pattern"]["grid"] is stage.grid
    assert stage.has("grid") and home_or_going(scene)
    inside_frame(scene)
    from attention_manim.scenes.i18n import plain_text
    from attention_manim.scenes.lessons import VALUES

    say, d = Say("en"), scene.plans[1].d_head
    said = [c for c, _ in scene.caption_log]
    assert plain_text(say("qkv.values.values", d_head=d)) in said
    alone = [c for c, _ in rendered(VALUES).caption_log]
    assert plain_text(say("qkv.values.values_first", d_head=d)) in alone
    assert plain_text(say("qkv.values.values", d_head=d)) not in alone


# --- every language ------------------------------------------------------------------------------------


@pytest.mark.render
@pytest.mark.parametrize("lang", ["ko", "pt"])
def test_every_lesson_speaks_the_language(rendered, lang):
    from attention_manim.scenes.lessons import KEY, QUERY, VALUES

    for cls in (QUERY, KEY, VALUES):
        scene = rendered(cls, lang=lang)
        captions = [c for c, _ in scene.caption_log]
        assert captions and scene.last_frame[..., :3].max() > 100
        if lang == "ko":
            assert all(re.search(r"[\uac00-\ud7a3]", c) for c in captions)
        for c in captions:
            assert not re.search(r"\b(the|and|of|each|every|its|weight|word)\b", c.replace("the verdant", "")), c
    say = Say(lang)
    q = rendered(QUERY, lang=lang).stage.drawn["query"]
    assert q["bubble"].message == say("qkv.lines.adjective_noun.question")
    k = rendered(KEY, lang=lang).stage.drawn["key"]
    assert all(b.message == say("qkv.lines.adjective_noun.answer") for b in k["answers"])
    if lang == "pt":  # numbers in prose are written the Portuguese way
        caps = " ".join(c for c, _ in rendered(KEY, lang=lang).caption_log)
        assert re.search(r"cos [+−]0,\d\d", caps)


# --- the component pieces these chapters rely on ------------------------------------------------------


def test_token_window_keeps_the_asked_tokens_and_marks_gaps():
    from attention_manim.scenes.plans.windows import token_window

    assert token_window(8, [3], 9) == list(range(8))
    w = token_window(55, [21, 19, 20, 12], 9)
    assert len(w) <= 9 and all(k in w for k in (12, 19, 20, 21))
    shown = [j for j in w if j is not None]
    assert shown == sorted(shown)
    for a, b in zip(w, w[1:]):  # a gap is marked by exactly one None, never two in a row
        assert not (a is None and b is None)
        if a is not None and b is not None:
            assert b == a + 1


def test_spread_keeps_rows_apart_inside_the_grid():
    from attention_manim.scenes.chapters.value_chips import spread

    assert spread([3.0, 2.0, 1.0], 0.5, -4, 4) == [3.0, 2.0, 1.0]  # far enough: unchanged
    ys = spread([1.0, 0.9, 0.8, 0.7], 0.5, -1.0, 1.0)
    assert all(a - b == pytest.approx(0.5) for a, b in zip(ys, ys[1:]))
    assert ys[0] <= 1.0 - 0.25 + 1e-9 and ys[-1] >= -1.0 + 0.25 - 1e-9


def test_horizontal_vector_lays_entries_left_to_right(tracer):
    from attention_manim.scenes.components.vectors import VectorColumn

    k = tracer(FLUFFY).head(0, 0).k[1]
    row = VectorColumn(k, head=4, tail=1, horizontal=True)
    xs = [m.get_x() for m in row.rows]
    assert all(a < b for a, b in zip(xs, xs[1:]))
    assert max(m.get_y() for m in row.entries) - min(m.get_y() for m in row.entries) < 0.05
    assert_shows(row, k)


def test_fade_to_dims_numbers_and_brackets_without_filling_brackets(tracer):
    from attention_manim.scenes.components.vectors import VectorColumn

    col = VectorColumn(tracer(FLUFFY).head(0, 0).v[2]).fade_to(0.3)
    assert all(m.get_fill_opacity() == pytest.approx(0.3) for m in col.entries)
    for b in col.brackets:
        assert b.get_stroke_opacity() == pytest.approx(0.3) and b.get_fill_opacity() == 0


def test_the_rest_of_the_weight_says_approx_where_its_drawn_chips_miss_it():
    """SmolLM2's values frame 03 read "0.12 on the rest" beside chips of 0.08 and 0.05 (0.13 as drawn)."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.values import rest_share
    from attention_manim.scenes.i18n import Say

    plan = SimpleNamespace(weights=(0.5581, 0.3170, 0.0769, 0.0480), tops=(0, 1), chips=(0, 1, 2, 3), hidden=0,
                           rest_weight=0.0769 + 0.0480)
    assert rest_share(plan, Say("en")) == "≈ 0.12" and rest_share(plan, Say("pt")) == "≈ 0,12"
    exact = SimpleNamespace(**{**vars(plan), "weights": (0.56, 0.32, 0.07, 0.05), "rest_weight": 0.12})
    assert rest_share(exact, Say("en")) == "0.12"  # 0.07 + 0.05 = 0.12 as drawn: no mark
    for lang, shown in (("en", "≈ 0.12"), ("ko", "≈ 0.12"), ("pt", "≈ 0,12")):  # the caption says what the tally says
        say = Say(lang)
        assert shown in say("qkv.values.weigh_rest", word="w", tops="t", rest=rest_share(plan, say))


def test_a_head_input_that_would_read_as_zeros_is_written_to_two_decimals():
    """SmolLM2's normalised head input (±0.1) was drawn 0.0, −0.1, 0.0, 0.0 … beside a query entry of +2.3."""
    from attention_manim.scenes.chapters.qkv_parts import entry_kind
    from attention_manim.scenes.plans.qkv import Shown

    window = Shown(head=5, tail=1, indices=(0, 1, 2, 3, 4, None, 9), values=(), text=())
    small = [-0.03, -0.08, 0.02, -0.04, 0.09, 5.0, 5.0, 5.0, 5.0, -0.04]  # the shown ones small, the hidden not
    assert entry_kind(small, window) == "signed2"
    assert entry_kind([-3.6, -1.5, 1.0, -3.9, 1.9, 0, 0, 0, 0, -0.6], window) == "vec"  # a residual reads fine
