"""Where things live, in one place: the user's cache folder and the built-in model names.

Imports neither torch nor manim, so every part of the package (the model, the scenes, the explorer,
the CLI) reads the same rule.

The cache folder is `$ATTENTION_MANIM_CACHE` when set, else the platform's user cache folder for
attention-manim (platformdirs: `$XDG_CACHE_HOME/attention-manim`, else `~/.cache/attention-manim`
on Linux; `~/Library/Caches/attention-manim` on macOS; `%LOCALAPPDATA%\\attention-manim\\Cache` on
Windows). Inside it: `smollm2/` (dequantized weights), `probes/` (measured head roles), `glyphs/`
(text outlines; `$ATTN_MANIM_GLYPHS` moves just those), `studies/` (the linear and window lessons'
whole-model measurements, model/studies.py), `renders/` keys.
"""

from __future__ import annotations

import os
from pathlib import Path

from platformdirs import user_cache_dir

APP = "attention-manim"
TOY, SMOLLM2 = "toy", "smollm2"
BUILTIN_MODELS = (TOY, SMOLLM2)  # the names `--model` takes besides a folder or a .gguf file
ASSETS = Path(__file__).resolve().parent.parent / "assets"  # the toy's weights (assets/toy)


def cache_root() -> Path:
    """The user's cache folder for attention-manim (see the module's docstring)."""
    env = os.environ.get("ATTENTION_MANIM_CACHE")
    if env:
        return Path(env)
    return Path(user_cache_dir(APP, appauthor=False))


def cache_dir(*parts: str) -> Path:
    """A folder inside the cache (not created here)."""
    return cache_root().joinpath(*parts)


def is_builtin(name) -> bool:
    return str(name) in BUILTIN_MODELS
