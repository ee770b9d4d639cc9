"""Section 1 lessons (tokens_to_vectors, mole, eiffel_tower, last_token), checked against the trace.

Plans are read without rendering; expectations come from the model's own trace, computed here
independently of the plans: the sense head from the model's head names, projections with
`trace.project`, lookups from `token_embeddings`, weights from `pattern`. Where the drawing
matters, lessons are rendered to their last frame at 192×108 and `stage.drawn` is inspected.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from manim import Text, VGroup, config, tempconfig

from attention_manim.model.errors import UserError
from attention_manim.scenes.registry import load_all

from .conftest import numbers_in, tiny_config

MOLE = ["american shrew mole", "one mole of carbon dioxide", "take a biopsy of the mole"]
MOLE_CUSTOM = ["a wild hungry wolf chased the mole",
               "the young scientist measured five mole of gas in the old kitchen",  # 12 words
               "the nurse examined the mole"]
TOWER = ["tower", "eiffel tower", "miniature eiffel tower"]
MOLE_AXES = ["animal", "chemistry", "medicine"]
TOWER_AXES = ["paris", "small", "large"]


def lesson(name):
    return load_all()[name].lesson


def plans(name, make_inputs, **kw):
    les = lesson(name)
    return les.plans(les.setting(make_inputs(**kw)))


def sense_head(trace) -> int:
    names = [h.name for h in trace.layers[0].heads]
    return next(h for h, n in enumerate(names) if "sense" in n)


def text_of(mob) -> str:
    """Every string a mobject shows, spaces kept (Text.text drops them)."""
    return " ".join(getattr(m, "original_text", None) or m.text for m in mob.get_family() if isinstance(m, Text))


def on_screen(scene, margin=1e-6):
    """Every drawn point of every mobject in the scene lies inside the frame."""
    w, h = config.frame_width / 2 + margin, config.frame_height / 2 + margin
    for m in scene.mobjects:
        for part in m.family_members_with_points():
            if part.get_stroke_opacity() == 0 and part.get_fill_opacity() == 0:
                continue
            p = part.points
            assert np.abs(p[:, 0]).max() <= w and np.abs(p[:, 1]).max() <= h, f"{part} leaves the frame"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory, make_inputs):
    """render(name, **inputs) -> the lesson's scene after its last frame (cached per arguments)."""
    cache = {}

    def render(name, size=(192, 108), **kw):
        key = (name, size, repr(sorted(kw.items())))
        if key not in cache:
            with tempconfig(tiny_config(tmp_path_factory.mktemp("media"), size)):
                scene = load_all()[name](make_inputs(**kw))
                scene.render()
                scene.last_frame = np.array(scene.renderer.get_frame())
            cache[key] = scene
        return cache[key]

    return render


# --- tokens_to_vectors: plans ----------------------------------------------------------------------


def test_tokens_plan_repeated_words_get_identical_lookups(make_inputs, tracer):
    sentence = "the fluffy creature saw the blue creature"
    (plan,) = plans("tokens_to_vectors", make_inputs, sentences=[sentence])
    tr = tracer(sentence)
    assert plan.shown == tuple(range(7)) and None not in plan.row
    assert plan.repeated == ((0, 4), (2, 6))
    for a, b in plan.repeated:
        assert np.array_equal(tr.token_embeddings[a], tr.token_embeddings[b])  # the model's claim
        assert not np.array_equal(tr.embeddings[a], tr.embeddings[b])  # undone by position
    assert np.array_equal(plan.lookups, tr.token_embeddings[:7])
    assert np.array_equal(plan.positions, tr.position_embeddings[:7])
    assert np.array_equal(plan.sums, tr.embeddings[:7])
    d = tr.model.d_model
    assert [(g.word, g.equal_lookup) for g in plan.marked] == [("the", d), ("creature", d)]
    for g in plan.marked:  # how many numbers position changed, counted here
        assert g.differ_after == int((tr.embeddings[g.positions[0]] != tr.embeddings[g.positions[1]]).sum()) > 0


def test_tokens_plan_marks_the_sums_whose_drawn_parts_miss(make_inputs, tracer):
    """The ≈ rows of word + position: exactly those whose one-decimal parts miss the one-decimal sum."""
    from attention_manim.scenes.plans.embeddings import COLUMN
    from attention_manim.scenes.plans.windows import window_indices

    sentence = "prince harry met the queen at the palace"
    (plan,) = plans("tokens_to_vectors", make_inputs, sentences=[sentence])
    tr = tracer(sentence)
    assert len(plan.sum_rounding) == len(plan.shown) and any(plan.sum_rounding)
    for k, i in enumerate(plan.shown):
        for r in window_indices(tr.model.d_model, *COLUMN):
            if r is None:
                continue
            a, b, t = (round(float(x), 1) for x in (tr.token_embeddings[i][r], tr.position_embeddings[i][r],
                                                     tr.embeddings[i][r]))
            assert (r in plan.sum_rounding[k]) == (round(a + b, 1) != t)


def test_tokens_plan_default_sentence_is_an_example_with_a_repeat(make_inputs, toy_model):
    (plan,) = plans("tokens_to_vectors", make_inputs)
    assert " ".join(plan.tokens) == toy_model.info.examples["harry_royal"]
    words = [w for w in plan.tokens if plan.tokens.count(w) > 1]
    assert plan.marked_words == tuple(dict.fromkeys(words))


def test_tokens_plan_abbreviates_long_phrases(make_inputs, tracer):
    sentence = "the wizard saw a dragon and a fox in the castle near the river"
    tr = tracer(sentence)
    assert len(tr.tokens) == 14
    (plan,) = plans("tokens_to_vectors", make_inputs, sentences=[sentence])
    assert len(plan.shown) == 10 and {0, 3, 6, 12, 13} <= set(plan.shown)  # "a" repeats first; the end is kept
    assert None in plan.row  # "…" where tokens are skipped
    assert [i for i in plan.row if i is not None] == list(plan.shown)
    assert plan.repeated and all(np.array_equal(tr.token_embeddings[g[0]], tr.token_embeddings[g[-1]])
                                 for g in plan.repeated)


def test_tokens_plan_without_repeats(make_inputs):
    (plan,) = plans("tokens_to_vectors", make_inputs, sentences=["a fluffy blue creature"])
    assert plan.repeated == () and plan.marked == ()


# --- tokens_to_vectors: drawn ----------------------------------------------------------------------


def test_tokens_columns_show_the_real_numbers(rendered, tracer):
    sentence = "the fluffy creature saw the blue creature"
    scene = rendered("tokens_to_vectors", sentences=[sentence])
    tr = tracer(sentence)
    drawn = scene.stage.drawn["tokens_to_vectors"]
    for name, real in (("lookups", tr.token_embeddings), ("positions", tr.position_embeddings),
                       ("sums", tr.embeddings)):
        for i, col in zip(range(7), drawn[name]):
            nums = numbers_in(col)
            assert [n.value for n in nums] == pytest.approx([float(real[i][n.index]) for n in nums]), name
    shown = [[n.value for n in numbers_in(c)] for c in drawn["lookups"]]
    assert shown[0] == shown[4] and shown[2] == shown[6]
    sums = [[n.value for n in numbers_in(c)] for c in drawn["sums"]]
    assert sums[0] != sums[4] and sums[2] != sums[6]
    assert len(drawn["symbols"]) == 7
    d = tr.model.d_model
    assert "“the”" in text_of(drawn["equal_notes"]) and f"{d} of {d}" in text_of(drawn["equal_notes"])
    # a repeated word's sums are outlined with the ≈ marks beside them (the outline had cut through them)
    from manim import SurroundingRectangle

    outlines = [r for r in drawn["differ_marks"].get_family() if isinstance(r, SurroundingRectangle)]
    inside = lambda m, r: (r.get_left()[0] <= m.get_left()[0] and m.get_right()[0] <= r.get_right()[0]  # noqa: E731
                           and r.get_bottom()[1] <= m.get_bottom()[1] and m.get_top()[1] <= r.get_top()[1])
    marked = 0
    for k in (0, 4, 2, 6):
        for mark in drawn["rounding"][k]:
            assert any(inside(mark, r) for r in outlines), k
            marked += 1
    assert marked > 0


def test_tokens_long_phrase_stays_on_screen(rendered):
    scene = rendered("tokens_to_vectors", sentences=["the wizard saw a dragon and a fox in the castle near the river"])
    assert "…" in [b.token for b in scene.stage.drawn["tokens_to_vectors"]["boxes"]]
    on_screen(scene)


# --- mole and eiffel_tower: plans --------------------------------------------------------------------


def check_steps(plan, tracer, sentences, focus, axes, head):
    assert list(plan.axes) == list(axes) and plan.head.head == head
    for s, sentence in zip(plan.phrases, sentences):
        tr = tracer(sentence)
        i = tr.index_of(focus)
        ht = tr.head(0, head)
        assert s.focus == i and s.tokens == tr.tokens
        assert np.allclose(s.weights, ht.pattern[i])
        assert np.allclose(s.E2, tr.updated(0, head)[i]) and np.allclose(s.E, tr.embeddings[i])
        assert np.allclose(s.coords, tr.project(np.array([tr.embeddings[i], ht.delta_e[i], tr.updated(0, head)[i]]),
                                                list(axes)), atol=1e-6)


def test_mole_plan_follows_the_sense_head(make_inputs, tracer):
    lookup, plan = plans("mole", make_inputs)
    h = sense_head(tracer(MOLE[0]))
    check_steps(plan, tracer, MOLE, "mole", MOLE_AXES, h)
    # each refined mole moved furthest along its own sense
    assert [int(np.argmax(s.coords[1])) for s in plan.phrases] == [0, 1, 2] and plan.own_direction
    assert [s.delta[0] for s in plan.phrases] == [0, 1, 2]
    # the words the captions name: the strongest context word and its real weight
    shrew = tracer(MOLE[0]).head(0, h).pattern[2, 1]
    assert plan.phrases[0].attention.keys[0] == ("shrew", pytest.approx(shrew))
    assert plan.phrases[0].tag == ("shrew",)
    # the causal note: only the phrase whose mole has words after it
    assert [s.causal is not None for s in plan.phrases] == [False, True, False]
    assert plan.phrases[1].causal.before == ("one",) and plan.phrases[1].causal.after == "of carbon dioxide"


def test_mole_lookup_plan_identical_because_the_lookups_are(make_inputs, tracer):
    lookup, _ = plans("mole", make_inputs)
    lookups = [tracer(s).token_embeddings[tracer(s).index_of("mole")] for s in MOLE]
    assert all(np.array_equal(lookups[0], v) for v in lookups)  # the model's claim, from the trace
    inputs = [tracer(s).embeddings[tracer(s).index_of("mole")] for s in MOLE]
    assert not np.allclose(inputs[0], inputs[1])  # with position added they differ ...
    assert lookup.show and lookup.identical and np.array_equal(lookup.columns, np.array(lookups))  # ... so: lookups
    positions = [tracer(s).project(tracer(s).position_embeddings[tracer(s).index_of("mole")], MOLE_AXES) for s in MOLE]
    assert lookup.position_visible == bool(np.abs(positions).max() > 1e-4)


def test_context_plan_says_what_the_head_and_the_layer_do(make_inputs, tracer):
    """The toy's layer-0 head starts every phrase from the lookup and moves the word a lot: no
    "layer input" note, no "barely moves" closing, positions added (not rotary)."""
    lookup, plan = plans("mole", make_inputs)
    assert not lookup.rotary and not plan.inputs_differ and not plan.small_delta
    reach = max(float(np.abs(s.coords[0]).max()) for s in plan.phrases)
    assert max(float(np.abs(s.coords[1]).max()) for s in plan.phrases) >= 0.1 * reach


def test_mole_with_another_head_uses_that_heads_delta(make_inputs, tracer):
    _, plan = plans("mole", make_inputs, head=2)
    check_steps(plan, tracer, MOLE, "mole", MOLE_AXES, 2)
    assert plan.role == tracer(MOLE[0]).head(0, 2).role


def test_mole_custom_phrases_and_axes(make_inputs, tracer):
    axes = list(reversed(MOLE_AXES))
    _, plan = plans("mole", make_inputs, sentences=MOLE_CUSTOM, axes=axes)
    check_steps(plan, tracer, MOLE_CUSTOM, "mole", axes, sense_head(tracer(MOLE_CUSTOM[0])))


def test_mole_with_a_single_phrase(make_inputs, tracer):
    lookup, plan = plans("mole", make_inputs, sentences=["the rabbit and the mole"])
    assert not lookup.show  # "identical" needs two phrases to compare
    check_steps(plan, tracer, ["the rabbit and the mole"], "mole", MOLE_AXES, sense_head(tracer("the rabbit and the mole")))


def test_eiffel_tower_plan_tells_the_story(make_inputs, tracer):
    (plan,) = plans("eiffel_tower", make_inputs)
    h = sense_head(tracer(TOWER[0]))
    check_steps(plan, tracer, TOWER, "tower", TOWER_AXES, h)
    E2 = [tracer(s).project(tracer(s).updated(0, h)[tracer(s).index_of("tower")], TOWER_AXES) for s in TOWER]
    assert E2[1][0] > E2[0][0] + 3  # "eiffel" adds paris
    assert E2[2][2] < E2[1][2] and E2[2][1] > E2[1][1]  # "miniature": less large, more small
    assert plan.phrases[0].compare is None
    for k in (1, 2):
        assert np.allclose(plan.phrases[k].compare.change, E2[k] - E2[k - 1], atol=1e-6)
        assert plan.phrases[k].compare.before == tracer(TOWER[k - 1]).tokens
    assert plan.phrases[0].attention.kind == "first"  # nothing comes before "tower" alone
    assert plan.phrases[2].tag == ("miniature", "eiffel")
    # the toy moves "tower" the way its story says: nothing to own up to
    assert plan.against == ()


def test_the_view_keeps_every_difference_long_and_every_tip_off_the_axes_ends(make_inputs):
    """Review 38: under the old view phrase 3's ΔE kept 0.43 of its length on screen, a stub boxed in by
    the earlier arrows (its name went out on a line across them), and phrase 2's E′ ended on the "small"
    axis's end, where that axis's name stands. Every ΔE now keeps half its length; every tip stands 0.3 of
    the longest arrow from every axis's end (where some view allows it, as the toy's phrases do)."""
    from attention_manim.scenes.plans.space import view_matrix

    for name in ("eiffel_tower", "mole"):
        plan = plans(name, make_inputs)[-1]  # (the mole's lesson first shows its lookup)
        M = view_matrix(*plan.view)[:2]
        for s in plan.phrases:
            dE = s.coords[1]
            assert np.linalg.norm(M @ dE) >= 0.5 * np.linalg.norm(dE), (name, dE)
        tips = plan.fit @ plan.basis
        longest = np.linalg.norm(tips, axis=1).max()
        if name == "eiffel_tower":  # (the mole's phrases leave no view with that room: it keeps its best)
            ends = np.identity(3) * 1.12 * longest
            assert min(np.linalg.norm(M @ t - M @ e) for t in tips for e in ends) >= 0.3 * longest


def test_choose_view_takes_the_wished_views_only_where_some_exist():
    from attention_manim.scenes.plans.space import choose_view, view_matrix

    points = np.array([[0.0, 0.0, 3.2], [7.7, -0.1, 3.3], [4.2, 2.5, 0.7]])
    short = np.array([[4.2, 2.5, -2.5]])
    M = view_matrix(*choose_view(points, differences=short))[:2]
    assert np.linalg.norm(M @ short[0]) >= 0.5 * np.linalg.norm(short[0])
    # a difference no view shows at half its length (straight at every camera) is no reason to drop them all
    assert choose_view(points, differences=np.array([[0.0, 0.0, 1e-3]])) == choose_view(points)


def test_the_view_draws_no_arrow_along_an_axis_it_does_not_follow(make_inputs):
    """Review 40: the toy mole's E⃗ = (2.4, 2.4, 2.4) was drawn 5° off the medicine axis, as if already
    "medicine". Among the views nearly as good, the chosen one draws every arrow 10° at least off the line of
    each axis it does not run along in the space; an arrow that does follow an axis may lie on it."""
    from attention_manim.scenes.plans.space import _wrap, view_matrix

    def off_axes(M, v):
        axes = np.arctan2(M.T[:, 1], M.T[:, 0])
        s = M @ v
        a = np.arctan2(s[1], s[0])
        return min(min(_wrap(a - axes[j]), _wrap(a - axes[j] + np.pi)) for j in range(3)
                   if abs(v[j]) / np.linalg.norm(v) < 0.9)

    plan = load_all()["mole"].lesson.plans(load_all()["mole"].lesson.setting(make_inputs()))[1]
    M = view_matrix(*plan.view)[:2]
    E = plan.phrases[0].coords[0]
    assert np.allclose(E, E[0], atol=0.05)  # the toy's mole: one generic arrow, as much of each sense
    assert np.degrees(off_axes(M, E)) >= 10
    for s in plan.phrases:  # each E′ runs along its own axis, and may lie on it; never along another's
        assert np.degrees(off_axes(M, s.coords[2])) >= 10


def test_each_difference_is_drawn_over_its_refined_arrow_after_every_animation(make_inputs):
    """Review 38: E′ (biopsy), grown over the mole's ΔE along medicine, hid it in the frame that says
    E′ = E + ΔE; review 40: every ΔE's head, on its E′'s, was drawn under it. Watched after every animation
    (the scene draws in the order its mobjects were added, and a turn of the space adds it anew)."""
    from attention_manim.scenes import review
    from attention_manim.scenes.lessons import MOLE_LESSON

    class Order(review.Observer):
        checked = 0

        def played(self, scene, animations):
            from manim import Wait

            drawn = getattr(scene, "stage", None) and scene.stage.drawn.get("context_space")
            if not drawn or not all(isinstance(a, Wait) for a in animations):
                return  # (the frames held: E′ grows over ΔE, then ΔE comes back on top before the wait)
            order = {id(m): k for k, m in enumerate(scene.get_mobject_family_members())}
            for k in {j for j, kind, _ in drawn["arrows"] if kind == "E2"}:
                dE, E2 = (next(a for j, kind, a in drawn["arrows"] if j == k and kind == want) for want in ("dE", "E2"))
                if id(E2) in order and E2.get_stroke_opacity() > 0:
                    assert order[id(dE)] > order[id(E2)], (k, scene.renderer.time)
                    Order.checked += 1

    review.play_watched(MOLE_LESSON, make_inputs(), Order())
    assert Order.checked > 10


def test_a_story_run_the_other_way_is_found_only_on_the_lessons_own_phrases():
    """SmolLM2 moved "tower" away from Paris with "Eiffel": the plan finds where the lesson's own phrases
    run against their story (then the lesson says so), and tells no story for a user's phrases."""
    from types import SimpleNamespace

    from attention_manim.scenes.plans.context_space import EIFFEL_TOWER, MOLE, against_story

    setting = SimpleNamespace(model=SimpleNamespace(examples={"tower": "a", "eiffel_tower": "b",
                                                               "miniature_eiffel_tower": "c"}),
                              traces=[SimpleNamespace(text=t) for t in "abc"])
    story_way = [np.array([0.0, 0.0, 3.0]), np.array([4.0, 0.0, 3.0]), np.array([4.0, 2.0, 1.0])]
    assert against_story(setting, EIFFEL_TOWER, story_way) == ()
    other_way = [np.array([0.0, 0.0, 3.0]), np.array([-1.7, 2.5, 4.3]), np.array([-2.6, 2.1, 5.1])]
    assert against_story(setting, EIFFEL_TOWER, other_way) == ((1, 0, -1.7), (2, 1, -0.4), (2, 2, 0.8))
    mine = SimpleNamespace(model=setting.model, traces=[SimpleNamespace(text=t) for t in "abd"])
    assert against_story(mine, EIFFEL_TOWER, other_way) == ()  # a user's phrases: no story to check
    senses = SimpleNamespace(model=SimpleNamespace(examples={"mole_animal": "a", "mole_chemistry": "b",
                                                             "mole_medicine": "c"}),
                             traces=[SimpleNamespace(text=t) for t in "abc"])
    same_way = [np.array([2.0, -7.0, -3.0]), np.array([3.4, -7.1, -2.8]), np.array([2.8, -10.4, -4.5])]
    # against the other phrases: the shrew phrase is least along animal, the biopsy one least along skin;
    # the chemistry phrase (−7.1 against a mean of −8.7) is still the most along chemistry
    assert [(k, a) for k, a, _ in against_story(senses, MOLE, same_way)] == [(0, 0), (2, 2)]


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_the_against_note_names_each_phrase_once(lang):
    """Review 40: "with phrase 3, "tower" moves away from "small"; with phrase 3, "tower" moves toward
    "large"" read as a copy slip: a phrase's second move joins its first."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.context_space import against_text
    from attention_manim.scenes.i18n import Say

    say = Say(lang)
    plan = SimpleNamespace(against=((1, 0, -1.7), (2, 1, -0.4), (2, 2, 0.8)),
                           phrases=(SimpleNamespace(compare=None), SimpleNamespace(compare=object()), SimpleNamespace(compare=object())))
    text = against_text(SimpleNamespace(say=say), plan, ["Paris", "small", "large"], say.quote("tower"))
    assert text.count(say.quote("tower")) == 3  # the story's sentence, phrase 2's move and phrase 3's two moves
    assert all(text.count(say.quote(a)) == 1 for a in ("Paris", "small", "large"))
    assert text.index(say.quote("small")) < text.index(say.quote("large"))
    # each move with its figure, as the tables draw it, and against which phrase (review 46)
    for figure in ("−1.7", "−0.4", "+0.8"):
        assert figure.replace(".", "," if lang == "pt" else ".") in text
    assert say("embeddings.context.against_away", phrase=2, word="w", axis="a", move="m", previous=1).count("1") == 1


def test_eiffel_custom_phrases(make_inputs, tracer):
    sentences = ["the little tower", "a giant steel tower", "a french tower"]
    (plan,) = plans("eiffel_tower", make_inputs, sentences=sentences, axes=["paris", "steel", "small"])
    check_steps(plan, tracer, sentences, "tower", ["paris", "steel", "small"], sense_head(tracer(sentences[0])))


@pytest.mark.parametrize("name", ["mole", "eiffel_tower"])
def test_unknown_direction_lists_the_known_ones(name, make_inputs):
    with pytest.raises(UserError) as err:
        plans(name, make_inputs, axes=["animal", "wizardry", "medicine"])
    msg = str(err.value)
    assert "wizardry" in msg
    for known in ("animal", "chemistry", "paris", "steel", "royalty"):
        assert known in msg
    with pytest.raises(UserError):
        plans(name, make_inputs, axes=["animal", "medicine"])


def test_focus_must_be_in_every_phrase(make_inputs):
    with pytest.raises(UserError):
        plans("mole", make_inputs, sentences=["american shrew mole", "the blue tower"])


# --- mole and eiffel_tower: drawn --------------------------------------------------------------------


def check_arrows(scene, tracer, sentences, focus, axes, head):
    drawn = scene.stage.drawn["context_space"]
    space = drawn["space"]
    assert space.names == list(axes)
    kinds = {}
    for k, kind, arrow in drawn["arrows"]:
        tr = tracer(sentences[k])
        i = tr.index_of(focus)
        E, dE = tr.embeddings[i], tr.head(0, head).delta_e[i]
        start, end = space.to_coords(arrow.start_point()), space.to_coords(arrow.end_point())
        if kind == "E":
            assert np.allclose(start, 0, atol=1e-6) and np.allclose(end, tr.project(E, list(axes)), atol=1e-6)
        elif kind == "dE":
            assert np.allclose(start, tr.project(E, list(axes)), atol=1e-6)
            assert np.allclose(end - start, tr.project(dE, list(axes)), atol=1e-6)
        else:
            assert kind == "E2"
            assert np.allclose(start, 0, atol=1e-6) and np.allclose(end, tr.project(E + dE, list(axes)), atol=1e-6)
        kinds.setdefault(kind, []).append(k)
    # one refined arrow and one ΔE per phrase
    assert kinds["E2"] == list(range(len(sentences))) and kinds["dE"] == list(range(len(sentences)))
    assert 0 in kinds["E"]


def test_mole_drawing(rendered, tracer):
    scene = rendered("mole")
    h = sense_head(tracer(MOLE[0]))
    check_arrows(scene, tracer, MOLE, "mole", MOLE_AXES, h)
    drawn = scene.stage.drawn
    # the lookup columns: the same real numbers in every phrase
    lookup = tracer(MOLE[0]).token_embeddings[tracer(MOLE[0]).index_of("mole")]
    shown = [numbers_in(group[1]) for group in drawn["same_lookup"]["columns"]]
    assert len(shown) == 3 and all([n.value for n in s] == [n.value for n in shown[0]] for s in shown)
    assert [n.value for n in shown[0]] == pytest.approx([float(lookup[n.index]) for n in shown[0]])
    # the table shows the last phrase's projections
    tr = tracer(MOLE[-1])
    i = tr.index_of("mole")
    rows = [tr.embeddings[i], tr.head(0, h).delta_e[i], tr.updated(0, h)[i]]
    for row, cells in zip(rows, drawn["context_space"]["tables"][-1].cells):
        assert [n.value for n in numbers_in(cells)] == pytest.approx(list(tr.project(row, MOLE_AXES)), abs=1e-5)
    # arcs as wide as the real weights, only from words up to "mole" (the mask)
    for sentence, arcs in zip(MOLE, drawn["context_space"]["arcs"]):
        t = tracer(sentence)
        j = t.index_of("mole")
        assert np.allclose(arcs.weights, t.head(0, h).pattern[j][: j + 1])
        widths = [(w, a.get_stroke_width(), a.get_stroke_opacity()) for a, w in arcs.drawn()]
        assert len(widths) == j  # every earlier word has an arc; no arc into itself
        for w1, s1, o1 in widths:
            for w2, s2, o2 in widths:
                if w1 > w2:
                    assert s1 >= s2 and o1 >= o2
    # and each arc's weight written under the word it leaves (review 46), the focus's own too
    for sentence, weights, arcs in zip(MOLE, drawn["context_space"]["weights"], drawn["context_space"]["arcs"]):
        t = tracer(sentence)
        j = t.index_of("mole")
        assert [f.value for f in weights.figures] == pytest.approx(list(t.head(0, h).pattern[j][: j + 1]))
        for src, f in zip(arcs.sources, weights.figures):
            assert abs(f.get_center()[0] - src[0]) < 0.6 and f.get_top()[1] < src[1]
    # which head, the causal note, and the captions' real weights
    note = text_of(drawn["context_space"]["head_note"])
    assert "head 1" in note and "sense" in note
    (box,) = drawn["context_space"]["causal"]
    assert "“one”" in text_of(box) and "of carbon dioxide" in text_of(box)
    # left of everything the space draws, its axis names included (in Korean it ran into "화학")
    space = drawn["context_space"]["space"]
    # the lesson ends on the closing turn its last caption speaks over; it turns back only for a next chapter
    assert scene.stage.undo_pending == 1
    refined = [a for _, kind, a in drawn["context_space"]["arrows"] if kind == "E2"]
    o, M = space._frame()
    axis = M[:, 2] / np.linalg.norm(M[:, 2])
    flat = [(a.end_point() - a.start_point())[:2] for a in refined]  # as the turned space shows them
    space.rotate(drawn["context_space"]["turn"], axis=axis, about_point=o)  # back to the view of the causal note
    space._place_labels()  # its axis names follow their axes (kept out of the rotating group)
    full = [a.end_point() - a.start_point() for a in refined]
    # (0.35 at least: 17 px from "화학" read as one line with it, review 51)
    assert box.get_right()[0] < VGroup(space.axis_lines, space.axis_labels).get_left()[0] - 0.35
    space.rotate(-drawn["context_space"]["turn"], axis=axis, about_point=o)
    space._place_labels()
    # the closing turn shows each refined "mole" its own way (review 34: at a fixed 35° E′ (shrew) shrank to
    # a stub beside E′ (biopsy), under "each has moved toward its own direction")
    assert min(np.linalg.norm(f) / np.linalg.norm(v) for f, v in zip(flat, full)) > 0.4
    angles = [np.degrees(np.arccos(np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v)))
              for i, u in enumerate(flat) for v in flat[i + 1:]]
    assert min(angles) > 20, angles
    captions = " ".join(c for c, _ in scene.caption_log)
    shrew = tracer(MOLE[0]).head(0, h).pattern[2, 1]
    one = tracer(MOLE[1]).head(0, h).pattern[1, 0]
    assert f"{shrew:.2f} on “shrew”" in captions and f"{one:.2f} on “one”" in captions


def test_eiffel_turns_until_no_axis_name_stands_by_a_refined_arrow(rendered):
    """Review 35: at the old turns (±50° at most) the end of the "Paris" axis, where its name stands, lay
    on E′ (alone), whose Paris is 0.0. The closing turn now keeps every axis's end 0.5 units or more from
    every refined E′ (a wider turn, the comparison under the table making room), and the E′s apart."""
    scene = rendered("eiffel_tower")
    drawn = scene.stage.drawn["context_space"]
    space = drawn["space"]
    refined = [a for _, kind, a in drawn["arrows"] if kind == "E2"]
    # the lesson ends turned, as its last caption says (Stage.on_leave turns it back for a next chapter)
    assert scene.stage.undo_pending == 1
    ends = [e.get_center()[:2] for e in space._axis_ends]
    segs = [(a.start_point()[:2], a.end_point()[:2]) for a in refined]
    flat = [b - a for a, b in segs]

    def to_segment(q, a, b):
        t = np.clip(np.dot(q - a, b - a) / np.dot(b - a, b - a), 0, 1)
        return float(np.linalg.norm(q - (a + t * (b - a))))

    assert min(to_segment(q, a, b) for q in ends for a, b in segs) >= 0.5
    angles = [np.degrees(np.arccos(np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v)))
              for i, u in enumerate(flat) for v in flat[i + 1:]]
    assert min(angles) > 20, angles
    for c in drawn.get("comparisons", []):  # the wide turn's room: no comparison left under the table
        assert c not in scene.mobjects or abs(np.degrees(drawn["turn"])) <= 50
    # the captions name the axes as the screen does, quoted (review 35: "no eixo pequeno" beside "small")
    import re

    names = {lab.original_text.replace(" ", "") for lab in space.axis_labels}
    said = [m for c, _ in scene.caption_log for m in re.findall(r"along “([^”]+)”", c)]
    assert said and all(m.replace(" ", "") in names for m in said), (said, names)


def test_mole_with_another_head_names_it(rendered, tracer):
    scene = rendered("mole", head=2)
    check_arrows(scene, tracer, MOLE, "mole", MOLE_AXES, 2)
    note = text_of(scene.stage.drawn["context_space"]["head_note"])
    assert "head 2" in note and "previous" in note


def test_mole_custom_phrases_stay_on_screen(rendered, tracer):
    axes = list(reversed(MOLE_AXES))
    scene = rendered("mole", sentences=MOLE_CUSTOM, axes=axes)
    check_arrows(scene, tracer, MOLE_CUSTOM, "mole", axes, sense_head(tracer(MOLE_CUSTOM[0])))
    on_screen(scene)
    assert scene.last_frame[..., :3].max() > 0


def test_mole_single_phrase_skips_the_lookup(rendered, tracer):
    scene = rendered("mole", sentences=["the rabbit and the mole"])
    assert "same_lookup" not in scene.stage.drawn
    check_arrows(scene, tracer, ["the rabbit and the mole"], "mole", MOLE_AXES, sense_head(tracer("the rabbit and the mole")))


def test_eiffel_tower_drawing(rendered, tracer):
    scene = rendered("eiffel_tower")
    check_arrows(scene, tracer, TOWER, "tower", TOWER_AXES, sense_head(tracer(TOWER[0])))
    cmp = scene.stage.drawn["context_space"]["comparisons"]
    assert len(cmp) == 2
    # a line's gap above the notes under it (review 37: 10 px apart, they read as one paragraph)
    drawn = scene.stage.drawn["context_space"]
    notes = [drawn[k] for k in ("head_note", "axes_note", "input_note") if drawn.get(k) is not None]
    assert all(c.get_bottom()[1] >= max(n.get_top()[1] for n in notes) + 0.25 for c in cmp)
    h = sense_head(tracer(TOWER[0]))
    E2 = [tracer(s).project(tracer(s).updated(0, h)[tracer(s).index_of("tower")], TOWER_AXES) for s in TOWER]
    assert [n.value for n in numbers_in(cmp[-1])] == pytest.approx(list(E2[2] - E2[1]), abs=1e-5)
    # every phrase's ΔE is back at the end, the earlier ones dimmed (while a later phrase was read they had
    # left: review 38, they boxed in the new ΔE)
    dEs = [a for k, kind, a in drawn["arrows"] if kind == "dE"]
    assert [round(a.shaft.get_stroke_opacity(), 2) for a in dEs] == [0.35, 0.35, 1.0]
    # the toy's heads move "tower" far enough to see: no enlarged inset of the tips
    assert all(np.linalg.norm((a.end_point() - a.start_point())[:2]) > 0.45 for a in dEs) and "insets" not in drawn
    # a change taken before rounding, whose figures the rounded tables would not give (7.7 − 0.0 drawn,
    # 7.64 measured), is written to two decimals, on screen and in the caption
    for c, (a, b) in zip(cmp, [(E2[0], E2[1]), (E2[1], E2[2])]):
        drawn_diff = [round(float(y), 1) - round(float(x), 1) for x, y in zip(a, b)]
        shown = [n.shown for n in numbers_in(c)]
        if any(f"{d:+.1f}" != f"{t:+.1f}" for d, t in zip(drawn_diff, b - a)):
            assert all(len(s.split(".")[1]) >= 2 for s in shown), shown
            assert len({len(s.split(".")[1]) for s in shown}) == 1, shown
            assert any(shown[0].replace("-", "−") in t.replace("-", "−") for t, _ in scene.caption_log)
    # the two E′s each change comes from, to as many decimals as the change (reviews 51-52: "−0.1493" and "3.3492"
    # among two-decimal figures read as a formatting slip), and each rounds, by either rule for a half, to its
    # table's one-decimal E′ (review 52: "3.35" beside the table's +3.3 rounds to 3.4 by the school rule)
    import re
    from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP, Decimal

    for c, (a, b) in zip(cmp, [(E2[0], E2[1]), (E2[1], E2[2])]):
        pairs = [m.original_text for m in c.get_family() if "→" in getattr(m, "original_text", "")]
        if not pairs:
            continue
        places = {len(s.split(".")[1]) for s in (n.shown for n in numbers_in(c))}
        assert len(places) == 1
        changes = [n.shown.replace("−", "-") for n in numbers_in(c)]
        for p, x, y, change in zip(pairs, a, b, changes):
            figures = [f.replace("−", "-") for f in re.findall(r"[−-]?\d+\.\d+", p)]
            assert {len(f.split(".")[1]) for f in figures} == places, p
            # the change is the difference of its two figures as written (review 53: "−4.804 (8.154 → 3.349)")
            assert Decimal(change) == Decimal(figures[1]) - Decimal(figures[0]), (change, p)
            for f, v in zip(figures, (x, y)):
                for rule in (ROUND_HALF_UP, ROUND_HALF_DOWN):
                    assert Decimal(f).quantize(Decimal("0.1"), rounding=rule) == Decimal(f"{v:.1f}"), (p, v)
    on_screen(scene)


# --- last_token ------------------------------------------------------------------------------------


def test_last_token_plan_is_each_heads_real_pattern(make_inputs, tracer, toy_model):
    (plan,) = plans("last_token", make_inputs)
    tr = tracer(toy_model.info.examples["murder_mystery"])
    last = tr.n_tokens - 1
    assert plan.last == last and [h.head for h in plan.heads] == list(range(tr.model.n_heads))
    for h in plan.heads:
        w = tr.head(0, h.head).pattern[last]
        assert np.allclose(h.weights, w)
        assert h.reach == pytest.approx(float(w[: last - 1].sum()))
        assert h.top == int(np.argmax(w)) and h.strongest[0] == h.top
    mean = np.mean([tr.head(0, h).pattern[last][: last - 1].sum() for h in range(tr.model.n_heads)])
    assert plan.mean_reach == pytest.approx(mean)
    logits = tr.logits[last]
    p = np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()
    assert [w for w, _ in plan.guesses] == [tr.vocab[k] for k in np.argsort(-p)[:3]]
    # one line per sentence: every line but the last ends with its full stop
    assert all(tr.tokens[line[-1]] == "." for line in plan.lines[:-1]) and plan.lines[-1][-1] == last


def test_last_token_custom_passage_and_head(make_inputs, tracer):
    text = "the cat saw the dog . the dog ate the cake . then the thief was"
    (plan,) = plans("last_token", make_inputs, sentences=[text], head=2)
    tr = tracer(text)
    assert [h.head for h in plan.heads] == [2]
    assert np.allclose(plan.heads[0].weights, tr.head(0, 2).pattern[-1])
    assert [len(x) for x in plan.lines] == [6, 6, 4]


def test_last_token_drawing(rendered, tracer, toy_model):
    scene = rendered("last_token")
    tr = tracer(toy_model.info.examples["murder_mystery"])
    last = tr.n_tokens - 1
    drawn = scene.stage.drawn["last_token"]
    assert sorted(drawn["arcs"]) == list(range(tr.model.n_heads))
    for h, arcs in drawn["arcs"].items():
        assert np.allclose(arcs.weights, tr.head(0, h).pattern[last])
        widths = {round(wt, 9): a.get_stroke_width() for a, wt in arcs.drawn()}
        ws = sorted(widths)
        assert all(widths[a] <= widths[b] for a, b in zip(ws, ws[1:]))
        # a head spreading its weight thin draws against its strongest arc, and its panel says so
        strongest = float(arcs.weights[:last].max())
        # (not below what two decimals show: "against the strongest, 0.00" stood over a frame with no arc)
        # (nor where the word keeps its weight on itself: its 0.01 arcs then stood as thick as 1.00: review 35)
        assert arcs.relative == (0.005 <= strongest < 0.5 and arcs.weights[last] < 0.5)
        if arcs.relative:  # the strongest arc drawn is full width (the word's own weight has no arc: review 34)
            assert max(a.get_stroke_width() for a, _ in arcs.drawn()) == pytest.approx(12.0)
            assert "scaled to the strongest arc" in text_of(drawn["panels"][h])
        else:
            assert "scaled to the strongest arc" not in text_of(drawn["panels"][h])
    # the honest summary: the share of attention that reaches past the previous word, as computed
    mean = np.mean([tr.head(0, h).pattern[last][: last - 1].sum() for h in range(tr.model.n_heads)])
    if mean < 0.005:  # below what two decimals show, the words say "almost none", not "0.00"
        from attention_manim.scenes.i18n import Say

        assert Say("en")("embeddings.last_token.summary_reach_none") in text_of(drawn["note"])
        assert "0.00 of" not in text_of(drawn["note"])
    else:
        assert f"{mean:.2f}" in text_of(drawn["note"])
    on_screen(scene)
    # the close: the notes left-aligned on the left, the model's own best next words as bars to scale on the
    # right, both under the shrunk passage (six centred lines read as a wall: review 48)
    plan = scene.plans[0]
    note, guesses = drawn["note"], drawn["guesses"]
    assert guesses.bars.probs.tolist() == pytest.approx([p for _, p in plan.guesses])
    assert [w.text for w in guesses.bars.words] == [w.replace(" ", "") for w, _ in plan.guesses]
    for k, p in enumerate(guesses.bars.probs):
        assert guesses.bars.bar_length(k) == pytest.approx(p * guesses.bars.unit, rel=1e-3)
    assert note.get_right()[0] < guesses.get_left()[0]
    assert max(note.get_top()[1], guesses.get_top()[1]) < drawn["passage"].get_bottom()[1]
    assert len({round(line.get_left()[0], 3) for para in note for line in para}) == 1  # one left edge
    from attention_manim.scenes.components.text import text_baseline

    feet = [text_baseline(w) - b.get_y() for w, b in zip(guesses.bars.words, guesses.bars.bars)]
    assert max(feet) - min(feet) < 0.01, "the guesses' words do not sit on one baseline beside their bars"
    # a word the passage holds more than once is named with how far back it is ("␣the" three times read
    # as one word): every strongest key that repeats says its distance, the others do not
    for h, panel in drawn["panels"].items():
        text = text_of(panel)
        for k in plan.heads[h].strongest:
            if k != last and tr.tokens[:last + 1].count(tr.tokens[k]) > 1:
                assert f"({last - k} back)" in text, text


def test_last_token_custom_passage_stays_on_screen(rendered):
    scene = rendered("last_token", sentences=["the cat saw the dog . the dog ate the cake . then the thief was"], head=2)
    assert list(scene.stage.drawn["last_token"]["arcs"]) == [2]
    on_screen(scene)


# --- every lesson in Korean and Portuguese -----------------------------------------------------------


@pytest.mark.render
@pytest.mark.parametrize("lang", ["ko", "pt"])
@pytest.mark.parametrize("name", ["tokens_to_vectors", "mole", "eiffel_tower", "last_token", "components"])
def test_lessons_render_in_korean_and_portuguese(name, lang, rendered):
    scene = rendered(name, size=(128, 72), lang=lang)
    assert scene.stage.drawn
    if name != "components":  # the gallery ends on an empty stage
        assert scene.last_frame[..., :3].max() > 0
    captions = [c for c, _ in scene.caption_log]
    assert captions
    if lang == "ko":
        assert all(re.search(r"[\uac00-\ud7a3]", c) for c in captions)
    else:
        english = {"the", "and", "of", "is", "its", "each", "every", "word", "weight", "moves", "along"}
        tokens = {t for tr in scene.setting.traces for t in tr.tokens}
        words = {w.lower() for c in captions for w in re.findall(r"[A-Za-z]+", c)} - tokens
        assert not words & english, sorted(words & english)
    on_screen(scene)


@pytest.mark.parametrize("lang, names", [("ko", ["동물", "화학", "의학"]), ("pt", ["animal", "química", "medicina"]),
                                         ("en", ["animal", "chemistry", "medicine"])])
def test_axis_names_are_in_the_viewers_language(lang, names, rendered):
    space = rendered("mole", size=(128, 72), lang=lang).stage.drawn["context_space"]["space"]
    assert space.names == MOLE_AXES  # the model's directions ...
    assert [text_of(lab) for lab in space.axis_labels] == names  # ... as the viewer reads them


def test_unknown_direction_names_fall_back_to_the_models_spelling():
    from attention_manim.scenes.chapters.embedding_parts import direction_name
    from attention_manim.scenes.i18n import Say

    assert direction_name(Say("ko"), "animal") == "동물"
    assert direction_name(Say("ko"), "PC1") == "PC1"


def test_a_direction_named_for_a_word_of_the_sentence_says_that_word_in_every_language():
    """Review 48: fluffy_blue_creature in Portuguese said "na direção "azul"" beside the token "blue"; review
    49: multi_head's "wizard" stood untranslated beside "dano" and "realeza". A direction named for a word of the
    sentence says its name, then the word as the model writes it; any other is translated as before."""
    from attention_manim.scenes.chapters.embedding_parts import direction_name
    from attention_manim.scenes.i18n import Say

    words = ["a", "fluffy", "␣blue", "creature"]
    assert direction_name(Say("pt"), "blue", words) == "azul (blue)"
    assert direction_name(Say("en"), "blue", words) == "blue"
    ko = Say("ko")("embeddings.directions.fluffy")
    assert ko != "fluffy" and direction_name(Say("ko"), "fluffy", words) == f"{ko}(fluffy)"
    assert direction_name(Say("pt"), "blue") == "azul"
    assert direction_name(Say("pt"), "noun", words) == "substantivo"


@pytest.mark.render
def test_the_values_lines_name_the_sentences_words_in_portuguese(rendered):
    drawn = rendered("values", size=(128, 72), lang="pt").stage.drawn["values"]
    lines = drawn.get("direction_lines") or []
    assert lines, sorted(drawn)
    for line in lines:
        said = getattr(line[0], "original_text", None) or line[0].text
        assert f"({line.direction})”" in said, said  # “azul (blue)”: its name, then the sentence's word


def test_last_token_caption_follows_the_measured_pattern():
    """The caption of a head whose strongest key is the last word itself says what flows in, as
    measured: "nothing" only when nothing does; 0.70 reaching past the previous word is said."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.last_token import LastToken
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.last_token import HeadInto, LastTokenPlan

    def caption(weights, role=""):
        w = np.asarray(weights, float)
        last = len(w) - 1
        h = HeadInto(head=4, role=role, weights=w, strongest=(last,), reach=float(w[: last - 1].sum()), top=last)
        plan = LastTokenPlan(tokens=("a", "b", "c", "was"), last=last, lines=((0, 1, 2, 3),), layer=0, n_layers=1,
                             heads=(h,), mean_reach=h.reach, guesses=())
        return LastToken.head_caption(SimpleNamespace(say=Say("en")), plan, h)

    kept = caption([0.0, 0.0, 0.0, 1.0])
    assert "nothing flows in" in kept and "1.00" in kept
    spread = caption([0.40, 0.30, 0.02, 0.28])  # SmolLM2's head 4: 0.28 on itself, 0.70 from far back
    assert "nothing" not in spread and "0.28" in spread and "0.70" in spread
    near = caption([0.0, 0.0, 0.02, 0.98])
    assert "nothing" not in near and "just before" in near
    assert "layer 0" not in kept.lower().split(":")[1]  # the head is named once, in words
