"""The explorer: a local web page over the same traces the clips draw (issue 14).

- `explorer.core`: the models on offer (a fixed list), the numbers of one sentence, the vocabulary.
- `explorer.app`: the FastAPI application (`python render.py explore`), with a one-at-a-time render queue
  (`explorer.jobs`) whose jobs one worker process renders (`explorer.worker`).
- `explorer.presenter`: a self-contained folder that plays a lesson's chapter clips in class.
- `explorer.notebook`: the same pattern view inline in Jupyter (`attention_manim.explore`).
"""
