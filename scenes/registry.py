"""CLI name -> scene class, with a one-line description each."""

from __future__ import annotations

SCENES: dict[str, type] = {}
# modules of scenes/ that hold no scenes (lessons are registered in scenes/lessons.py)
INFRASTRUCTURE = ("base", "registry", "style", "runner", "components", "i18n", "setting", "stage", "lesson",
                  "plans", "chapters", "locales")


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
    """Import every scene module so that each registers itself."""
    import importlib
    import pkgutil

    import scenes

    for info in pkgutil.iter_modules(scenes.__path__):
        if info.name not in INFRASTRUCTURE and not info.name.startswith("_"):
            importlib.import_module(f"scenes.{info.name}")
    return SCENES


def step_scene(name: str, class_name: str, step: str, description: str, *bases):
    """Register a scene whose whole construct is one step method of its mixins (the steps that the
    flagship chains are also scenes of their own)."""

    def construct(self):
        getattr(self, step)()

    cls = type(class_name, bases, {"description": description, "construct": construct,
                                   "__module__": bases[0].__module__})
    return register(name)(cls)
