"""The manim side of attention-manim: reusable visual pieces and the scenes built from them.

Nothing here imports torch: scenes read numbers only from a `model.trace.Trace`.
"""
