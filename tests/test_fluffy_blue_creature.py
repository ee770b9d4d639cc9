"""The flagship chains the steps on one canvas: the sequence ran, and its numbers are the trace's."""

from __future__ import annotations

import numpy as np
import pytest
from manim import tempconfig

from scenes.base import SceneInputs

from .conftest import numbers_in, tiny_config
from .test_one_head_qkv import assert_shows, expected_answers, expected_focus

flagship = pytest.importorskip("scenes.fluffy_blue_creature")
if getattr(flagship, "GridSteps", None) is None:  # pragma: no cover
    pytest.skip("the grid steps (scenes/one_head_grid.py) are not there yet", allow_module_level=True)

SENTENCE = "a fluffy blue creature roamed the verdant forest"
ORDER = ["step_query", "step_key", "step_dot_products", "step_softmax", "step_masking", "step_values"]


def test_flagship_plays_the_steps_in_order_on_real_numbers(tracer, tmp_path):
    with tempconfig(tiny_config(tmp_path)):
        scene = flagship.FluffyBlueCreature(SceneInputs(tracer=tracer, sentences=[SENTENCE]))
        scene.render()
        frame_center = scene.camera.frame.get_center().copy()
        frame_width = scene.camera.frame.width
    played = scene.steps_played
    assert played[: len(ORDER)] == ORDER  # (an optional formula beat may follow)
    assert np.allclose(frame_center, 0) and frame_width == pytest.approx(14.222, abs=0.01)

    tr = tracer(SENTENCE)
    head = tr.head(0, 0)
    i = expected_focus(tr, None, head)
    assert tr.tokens[i] == "creature"
    q = scene.qkv["query"]
    assert_shows(q["product_result"], head.q[i])
    for j, col in q["q_columns"].items():
        assert_shows(col, head.q[j])
    k = scene.qkv["key"]
    assert [b.answer_for for b in k["bubbles"]] == expected_answers(head, i)
    for j, kvec in k["k_vectors"].items():
        assert_shows(kvec, head.k[j])
    v = scene.qkv["values"]
    assert_shows(v["product"].result, head.delta_e[i])
    assert_shows(v["updated_column"], tr.updated(0, 0)[i])
    # the grid steps' numbers too (cells keyed [query, key], as the trace)
    g = scene.grid_rec
    assert g["dot_products"]["scores"] and g["softmax"]["weights"]
    for (qi, kj), m in g["dot_products"]["scores"].items():
        assert m.value == pytest.approx(float(head.scores[qi, kj]), abs=1e-4)
    for (qi, kj), m in g["softmax"]["weights"].items():
        assert m.value == pytest.approx(float(head.pattern[qi, kj]), abs=1e-6)
    for (qi, kj), m in g["masking"]["weights"].items():
        assert m.value == pytest.approx(float(head.pattern[qi, kj]), abs=1e-6)
    # captions: one per beat, in our words, none empty
    assert len(scene.caption_log) >= 30 and all(text.strip() for text, _ in scene.caption_log)
    # every number still on screen at the end is a real one (it carries its source value)
    for m in scene.mobjects:
        for n in numbers_in(m):
            assert np.isfinite(n.value) or n.shown == "−∞"
