"""Shared fixtures: the toy model, a tracer, and helpers that render scenes tiny and fast."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def toy_model():
    from model import load_model

    return load_model("toy", device="cpu")


@pytest.fixture(scope="session")
def tracer(toy_model):
    return functools.lru_cache(maxsize=None)(toy_model.trace)


@pytest.fixture
def render_scene(tmp_path):
    """render_scene(SceneClass, inputs, png=True, size=(192,108)) -> (scene, RGBA frame or None).

    png=True jumps to the last frame and rasterizes it once; png=False is a dry run (structure
    only, no pixels)."""
    from manim import tempconfig

    def run(scene_cls, inputs, png=True, size=(192, 108)):
        opts = {
            "media_dir": str(tmp_path / "media"),
            "disable_caching": True,
            "pixel_width": size[0],
            "pixel_height": size[1],
            "frame_rate": 5,
            "verbosity": "ERROR",
            "progress_bar": "none",
        }
        if png:
            opts.update(save_last_frame=True, write_to_movie=False, format="png")
        else:
            opts.update(dry_run=True)
        with tempconfig(opts):
            scene = scene_cls(inputs)
            scene.render()
            frame = np.array(scene.renderer.get_frame()) if png else None
        return scene, frame

    return run


def numbers_in(mobject):
    """Every on-screen number mobject (built by scenes.components.text.number) under `mobject`."""
    return [m for m in mobject.get_family() if hasattr(m, "value") and hasattr(m, "shown")]
