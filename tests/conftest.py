"""Shared fixtures: the toy model, a tracer, and helpers that render scenes tiny and fast."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def toy_model():
    from attention_manim.model import load_model

    return load_model("toy", device="cpu")


@pytest.fixture(scope="session")
def smollm2_model():
    """SmolLM2, loaded once per test process (skipped where the packaged GGUF is missing)."""
    pytest.importorskip("gguf")
    from attention_manim.model import load_model

    try:
        return load_model("smollm2", device="cpu")
    except Exception as e:  # not installed here
        pytest.skip(f"SmolLM2 is not available: {e}")


@pytest.fixture(scope="session")
def tracer(toy_model):
    """The toy's session: what scenes receive (a sentence -> trace function with a bounded cache,
    that also generates and reads MLP activations)."""
    from attention_manim.model.session import ModelSession

    return ModelSession(toy_model, "toy")


@pytest.fixture(scope="session")
def make_inputs(toy_model, tracer):
    """make_inputs(**fields) -> SceneInputs for the toy model (its examples and head roles included)."""
    from attention_manim.scenes.setting import SceneInputs

    def make(**kw):
        return SceneInputs(tracer=tracer, model=toy_model.info, **kw)

    return make


def tiny_config(media_dir, size=(192, 108), png=True) -> dict:
    """manim settings for a fast test render: a tiny last-frame PNG (png=True) or a dry run."""
    opts = {"media_dir": str(media_dir), "disable_caching": True, "pixel_width": size[0],
            "pixel_height": size[1], "frame_rate": 5, "verbosity": "ERROR", "progress_bar": "none"}
    if png:
        opts.update(save_last_frame=True, write_to_movie=False, format="png")
    else:
        opts.update(dry_run=True)
    return opts


@pytest.fixture
def render_scene(tmp_path):
    """render_scene(SceneClass, inputs, png=True, size=(192,108)) -> (scene, RGBA frame or None).

    png=True jumps to the last frame and rasterizes it once; png=False is a dry run (structure
    only, no pixels)."""
    from manim import tempconfig

    def run(scene_cls, inputs, png=True, size=(192, 108)):
        with tempconfig(tiny_config(tmp_path / "media", size, png)):
            scene = scene_cls(inputs)
            scene.render()
            frame = np.array(scene.renderer.get_frame()) if png else None
        return scene, frame

    return run


def numbers_in(mobject):
    """Every on-screen number mobject (built by scenes.components.text.number) under `mobject`."""
    return [m for m in mobject.get_family() if hasattr(m, "value") and hasattr(m, "shown")]


def expected_focus(trace, focus, head):
    """The word a scene follows, by the documented rule (independent of scenes.base): the given
    focus, else the word with the most weight away from itself (one decimal), ties going to the
    word with more keys at ≥ 0.1, then to the earlier word."""
    if focus is not None:
        return trace.tokens.index(focus)
    p = head.pattern.copy()
    np.fill_diagonal(p, 0)
    score = [(round(float(p[i].sum()), 1), int((p[i] >= 0.1).sum()), -i) for i in range(len(p))]
    return max(range(len(p)), key=lambda i: score[i])


@pytest.fixture(autouse=True)
def numbers_back_in_english_after_each_test():
    """A lesson sets the language numbers are drawn in; it must set it back, or the next test
    (whichever xdist worker runs it) would see "0,48" where it expects "0.48"."""
    from attention_manim.scenes.components.text import number_language

    yield
    assert number_language() == "en", f"the number language leaked out of this test: {number_language()}"
