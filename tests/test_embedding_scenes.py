"""Section 1 scenes (tokens_to_vectors, mole, eiffel_tower, last_token), checked against the trace.

Expectations come from the model's own trace, computed here independently of the scene: which
head is the sense head is found by name, projections by `trace.project`, the lookup columns from
`token_embeddings`. Scenes are rendered by jumping to their last frame at 192×108 (fast).
"""

from __future__ import annotations

import numpy as np
import pytest
from manim import config

from model.errors import UserError
from model.toy_world import EXAMPLES
from scenes.base import SceneInputs
from scenes.embeddings_in_context import (
    EiffelTower, LastToken, Mole, TokensToVectors, passage_lines, shown_token_indices,
)

from .conftest import numbers_in, tiny_config

MOLE = ["american shrew mole", "one mole of carbon dioxide", "take a biopsy of the mole"]
MOLE_CUSTOM = ["a wild hungry wolf chased the mole",
               "the young scientist measured five mole of gas in the old kitchen",  # 12 words
               "the nurse examined the mole"]
TOWER = ["tower", "eiffel tower", "miniature eiffel tower"]


def sense_head(trace) -> int:
    names = [h.name for h in trace.layers[0].heads]
    return next(h for h, n in enumerate(names) if "sense" in n)


def words(mob) -> str:
    """The string a Text shows, spaces included (Text.text drops them)."""
    return getattr(mob, "original_text", None) or mob.text


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
def rendered(tmp_path_factory, tracer):
    """render(SceneClass, **inputs) -> the scene after its last frame (cached per arguments)."""
    from manim import tempconfig

    cache = {}

    def render(cls, **kw):
        key = (cls, repr(sorted(kw.items())))
        if key not in cache:
            with tempconfig(tiny_config(tmp_path_factory.mktemp("media"))):
                scene = cls(SceneInputs(tracer=tracer, **kw))
                scene.render()
                scene.last_frame = np.array(scene.renderer.get_frame())
            cache[key] = scene
        return cache[key]

    return render


# --- mole and eiffel_tower: every arrow is a real projection ------------------------------------


def check_arrows(scene, tracer, sentences, focus, axes, head):
    space = scene.space
    assert space.names == list(axes)
    kinds = {}
    for k, kind, arrow in scene.drawn:
        tr = tracer(sentences[k])
        i = tr.index_of(focus)
        E = tr.embeddings[i]
        E2 = E + tr.head(0, head).delta_e[i]
        assert np.allclose(E2, tr.updated(0, head)[i])
        start, end = space.to_coords(arrow.start_point()), space.to_coords(arrow.end_point())
        if kind == "E":
            assert np.allclose(start, 0, atol=1e-6)
            assert np.allclose(end, tr.project(E, list(axes)), atol=1e-6)
        elif kind == "dE":
            assert np.allclose(start, tr.project(E, list(axes)), atol=1e-6)
            assert np.allclose(end, tr.project(E2, list(axes)), atol=1e-6)
            assert np.allclose(end - start, tr.project(tr.head(0, head).delta_e[i], list(axes)), atol=1e-6)
        else:
            assert kind == "E2"
            assert np.allclose(start, 0, atol=1e-6)
            assert np.allclose(end, tr.project(E2, list(axes)), atol=1e-6)
        kinds.setdefault(kind, []).append(k)
    # one refined arrow and one ΔE per phrase
    assert kinds["E2"] == list(range(len(sentences))) and kinds["dE"] == list(range(len(sentences)))
    assert 0 in kinds["E"]


def test_mole_arrows_are_the_real_projections(rendered, tracer):
    scene = rendered(Mole)
    h = sense_head(tracer(MOLE[0]))
    assert scene.head_index == h
    check_arrows(scene, tracer, MOLE, "mole", ["animal", "chemistry", "medicine"], h)
    # each refined mole moved furthest along its own sense
    moved = [np.argmax(tracer(s).project(tracer(s).head(0, h).delta_e[tracer(s).index_of("mole")],
                                          ["animal", "chemistry", "medicine"])) for s in MOLE]
    assert moved == [0, 1, 2]


def test_mole_table_shows_the_last_phrase_projections(rendered, tracer):
    scene = rendered(Mole)
    tr = tracer(MOLE[-1])
    i = tr.index_of("mole")
    h = sense_head(tr)
    axes = ["animal", "chemistry", "medicine"]
    rows = [tr.embeddings[i], tr.head(0, h).delta_e[i], tr.updated(0, h)[i]]
    table = next(m for m in scene.mobjects if hasattr(m, "cells"))
    for row, cells in zip(rows, table.cells):
        assert [n.value for n in numbers_in(cells)] == pytest.approx(list(tr.project(row, axes)), abs=1e-5)


def test_mole_lookup_columns_are_identical_because_the_lookups_are(rendered, tracer):
    scene = rendered(Mole)
    lookups = [tracer(s).token_embeddings[tracer(s).index_of("mole")] for s in MOLE]
    assert all(np.array_equal(lookups[0], v) for v in lookups)  # the model's claim, from the trace
    inputs = [tracer(s).embeddings[tracer(s).index_of("mole")] for s in MOLE]
    assert not np.allclose(inputs[0], inputs[1])  # with position added they differ ...
    shown = [[n.value for n in numbers_in(group[1])] for group in scene.lookup_columns]
    assert len(shown) == 3 and all(col == shown[0] for col in shown)  # ... so the scene shows lookups
    idx = [n.index for n in numbers_in(scene.lookup_columns[0][1])]
    assert shown[0] == pytest.approx([float(lookups[0][j]) for j in idx])
    assert scene.lookup_identical


def test_arc_widths_follow_the_real_weights(rendered, tracer):
    scene = rendered(Mole)
    h = sense_head(tracer(MOLE[0]))
    assert len(scene.arcs) == 3
    for sentence, arcs in zip(MOLE, scene.arcs):
        tr = tracer(sentence)
        i = tr.index_of("mole")
        real = tr.head(0, h).pattern[i][: i + 1]  # the mask: only words up to "mole"
        assert np.allclose(arcs.weights, real)
        drawn = [(w, a.get_stroke_width(), a.get_stroke_opacity()) for a, w in arcs.drawn()]
        assert len(drawn) == i  # every earlier word has an arc; no arc into itself
        for w1, s1, o1 in drawn:
            for w2, s2, o2 in drawn:
                if w1 > w2:
                    assert s1 >= s2 and o1 >= o2
        heaviest = max(drawn)
        assert heaviest[1] == max(s for _, s, _ in drawn)


def test_mole_says_which_head_and_the_causal_note(rendered, tracer):
    scene = rendered(Mole)
    texts = [words(m) for m in scene.mobjects if hasattr(m, "text")]
    assert any("head 1" in t and "sense" in t for t in texts)
    note = " ".join(words(t) for t in scene.causal_box[1])
    assert "“one”" in note and "of carbon dioxide" in note
    captions = " ".join(c for c, _ in scene.caption_log)
    shrew = tracer("american shrew mole").head(0, 1).pattern[2, 1]
    one = tracer("one mole of carbon dioxide").head(0, 1).pattern[1, 0]
    assert f"{shrew:.2f} on “shrew”" in captions and f"{one:.2f} on “one”" in captions


def test_mole_with_another_head_uses_that_heads_delta(rendered, tracer):
    scene = rendered(Mole, head=2)
    check_arrows(scene, tracer, MOLE, "mole", ["animal", "chemistry", "medicine"], 2)
    texts = [words(m) for m in scene.mobjects if hasattr(m, "text")]
    assert any("head 2" in t and "previous" in t for t in texts)


def test_mole_custom_phrases_and_axes(rendered, tracer):
    axes = ["animal", "chemistry", "medicine"]
    scene = rendered(Mole, sentences=MOLE_CUSTOM, axes=list(reversed(axes)))
    check_arrows(scene, tracer, MOLE_CUSTOM, "mole", list(reversed(axes)), sense_head(tracer(MOLE_CUSTOM[0])))
    on_screen(scene)
    assert scene.last_frame[..., :3].max() > 0


def test_eiffel_tower_arrows_and_story(rendered, tracer):
    scene = rendered(EiffelTower)
    axes = ["paris", "small", "large"]
    h = sense_head(tracer(TOWER[0]))
    check_arrows(scene, tracer, TOWER, "tower", axes, h)
    E2 = [tracer(s).project(tracer(s).updated(0, h)[tracer(s).index_of("tower")], axes) for s in TOWER]
    assert E2[1][0] > E2[0][0] + 3  # "eiffel" adds paris
    assert E2[2][2] < E2[1][2] and E2[2][1] > E2[1][1]  # "miniature": less large, more small
    on_screen(scene)


def test_eiffel_custom_phrases(rendered, tracer):
    sentences = ["the little tower", "a giant steel tower", "a french tower"]
    scene = rendered(EiffelTower, sentences=sentences, axes=["paris", "steel", "small"])
    check_arrows(scene, tracer, sentences, "tower", ["paris", "steel", "small"], sense_head(tracer(sentences[0])))


@pytest.mark.parametrize("cls", [Mole, EiffelTower])
def test_unknown_direction_lists_the_known_ones(cls, tracer):
    with pytest.raises(UserError) as err:
        cls(SceneInputs(tracer=tracer, axes=["animal", "wizardry", "medicine"]))
    msg = str(err.value)
    assert "wizardry" in msg
    for known in ("animal", "chemistry", "paris", "steel", "royalty"):
        assert known in msg
    with pytest.raises(UserError):
        cls(SceneInputs(tracer=tracer, axes=["animal", "medicine"]))


def test_focus_must_be_in_every_phrase(tracer):
    with pytest.raises(UserError):
        Mole(SceneInputs(tracer=tracer, sentences=["american shrew mole", "the blue tower"]))


# --- tokens_to_vectors ---------------------------------------------------------------------------


def test_tokens_to_vectors_identical_columns_for_repeated_words(rendered, tracer):
    scene = rendered(TokensToVectors)
    tr = tracer("the fluffy creature saw the blue creature")
    assert scene.shown == list(range(7))
    assert scene.repeated == [[0, 4], [2, 6]]
    for a, b in scene.repeated:
        assert np.array_equal(tr.token_embeddings[a], tr.token_embeddings[b])  # the model's claim
        assert not np.array_equal(tr.embeddings[a], tr.embeddings[b])  # undone by position
    cols = {i: [n.value for n in numbers_in(c)] for i, c in zip(scene.shown, scene.token_cols)}
    sums = {i: [n.value for n in numbers_in(c)] for i, c in zip(scene.shown, scene.sum_cols)}
    pos = {i: [n.value for n in numbers_in(c)] for i, c in zip(scene.shown, scene.pos_cols)}
    for i, col in zip(scene.shown, scene.token_cols):
        idx = [n.index for n in numbers_in(col)]
        assert cols[i] == pytest.approx([float(tr.token_embeddings[i][j]) for j in idx])
        assert pos[i] == pytest.approx([float(tr.position_embeddings[i][j]) for j in idx])
        assert sums[i] == pytest.approx([float(tr.embeddings[i][j]) for j in idx])
    assert cols[0] == cols[4] and cols[2] == cols[6]
    assert sums[0] != sums[4] and sums[2] != sums[6]
    assert len(scene.symbols) == 7


def test_tokens_to_vectors_abbreviates_long_phrases(rendered, tracer):
    sentence = "the wizard saw a dragon and a fox in the castle near the river"
    tr = tracer(sentence)
    assert len(tr.tokens) == 14
    shown = shown_token_indices(tr.tokens, 10)
    assert len(shown) == 10 and {0, 3} <= set(shown)  # "the" is the first repeat; "a" follows
    scene = rendered(TokensToVectors, sentences=[sentence])
    assert scene.shown == shown
    assert "…" in [b.token for b in scene.boxes]
    assert scene.repeated and all(np.array_equal(tr.token_embeddings[g[0]], tr.token_embeddings[g[-1]])
                                  for g in scene.repeated)
    on_screen(scene)


def test_tokens_to_vectors_without_repeats(rendered):
    scene = rendered(TokensToVectors, sentences=["a fluffy blue creature"])
    assert scene.repeated == []
    on_screen(scene)


# --- last_token ----------------------------------------------------------------------------------


def test_last_token_arcs_are_each_heads_real_pattern(rendered, tracer):
    scene = rendered(LastToken)
    tr = tracer(EXAMPLES["murder_mystery"])
    last = tr.n_tokens - 1
    assert scene.heads_shown == list(range(tr.model.n_heads))
    for h, arcs in scene.arcs_by_head.items():
        w = tr.head(0, h).pattern[last]
        assert np.allclose(arcs.weights, w)
        widths = {round(wt, 9): a.get_stroke_width() for a, wt in arcs.drawn()}
        ws = sorted(widths)
        assert all(widths[a] <= widths[b] for a, b in zip(ws, ws[1:]))
        assert scene.reach[h] == pytest.approx(float(w[: last - 1].sum()))
    # the honest summary: the share of attention that reaches past the previous word, as computed
    note = " ".join(words(t) for t in scene.note)
    mean = np.mean([tr.head(0, h).pattern[last][: last - 1].sum() for h in range(tr.model.n_heads)])
    assert f"{mean:.2f}" in note


def test_last_token_custom_passage(rendered, tracer):
    text = "the cat saw the dog . the dog ate the cake . then the thief was"
    scene = rendered(LastToken, sentences=[text], head=2)
    tr = tracer(text)
    assert scene.heads_shown == [2]
    assert np.allclose(scene.arcs_by_head[2].weights, tr.head(0, 2).pattern[-1])
    assert [len(x) for x in passage_lines(tr.tokens)] == [6, 6, 4]
    on_screen(scene)


def test_mole_with_a_single_phrase(rendered, tracer):
    scene = rendered(Mole, sentences=["the rabbit and the mole"])
    assert not hasattr(scene, "lookup_columns")  # "identical" needs two phrases to compare
    check_arrows(scene, tracer, ["the rabbit and the mole"], "mole", ["animal", "chemistry", "medicine"],
                 sense_head(tracer("the rabbit and the mole")))
