"""CLI name -> scene class, with a one-line description each."""

from __future__ import annotations

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
    import scenes.lessons  # noqa: F401  (every lesson registers itself there)

    return SCENES
