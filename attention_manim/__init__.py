"""attention-manim in a notebook.

    from attention_manim import explore, render_clip
    explore("a fluffy blue creature roamed the verdant forest")      # the pattern, inline
    render_clip("attention_pattern", "a fluffy blue creature")       # the clip, inline

Both return objects Jupyter displays (`_repr_html_`); every number comes from the model's trace.
"""

from explorer.notebook import Clip, PatternView, explore, render_clip

__all__ = ["Clip", "PatternView", "explore", "render_clip"]
