"""attention-manim: transformer attention explained with Manim, every number from a real model.

One installed package; inside it `model` (torch, no manim), `scenes` (manim, no torch), `explorer`
(the web page and the presenter) and `cli` (the command line). In a notebook:

    from attention_manim import explore, render_clip
    explore("a fluffy blue creature roamed the verdant forest")      # the pattern, inline
    render_clip("attention_pattern", "a fluffy blue creature")       # the clip, inline

Both return objects Jupyter displays (`_repr_html_`); every number comes from the model's trace.
"""

from pathlib import Path

# In a checkout the subpackages sit beside this folder (model/, scenes/, explorer/ at the top, as
# the installed package maps them); a wheel puts them inside it.
_checkout = Path(__file__).resolve().parent.parent
if (_checkout / "pyproject.toml").is_file() and (_checkout / "model" / "session.py").is_file():
    __path__.append(str(_checkout))  # noqa: F821  (the package's own __path__)

__all__ = ["Clip", "PatternView", "explore", "render_clip"]


def __getattr__(name: str):
    # the notebook helpers load on first use: importing a subpackage must not pull in the explorer
    if name in __all__:
        from attention_manim.explorer import notebook

        return getattr(notebook, name)
    raise AttributeError(f"module 'attention_manim' has no attribute {name!r}")
