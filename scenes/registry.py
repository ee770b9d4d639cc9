"""CLI name -> scene class, with a one-line description each."""

from __future__ import annotations

import difflib

from attention_manim.model.errors import UserError

SCENES: dict[str, type] = {}


def register(name: str):
    """Class decorator: make a scene renderable as `python render.py NAME`."""

    def deco(cls):
        if name in SCENES:
            raise ValueError(f"scene name {name!r} registered twice")
        cls.cli_name = name
        SCENES[name] = cls
        return cls

    return deco


def load_all() -> dict[str, type]:
    """Every registered lesson (scenes/lessons.py registers them all)."""
    import attention_manim.scenes.lessons  # noqa: F401  (every lesson registers itself there)

    return SCENES


def unknown_scene_error(name: str, known: list[str]) -> UserError:
    """The error for a scene name nobody registered, with the closest names as the hint."""
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
    if close:
        return UserError(f"unknown scene {name!r}", f"did you mean {', '.join(close)}?", key="unknown_scene",
                         name=name, close=", ".join(close))
    return UserError(f"unknown scene {name!r}", "see every scene with `python render.py list`",
                     key="unknown_scene_far", name=name)
