"""The torch side of attention-manim: the transformer, its weights, tokenizer, traces, training.

Importing `model` or `model.trace` does not import torch; `load_model` does, on first use.
"""

from .errors import UserError
from .trace import HeadTrace, LayerTrace, ModelInfo, Trace

__all__ = ["HeadTrace", "LayerTrace", "ModelInfo", "Trace", "UserError", "load_model"]


def load_model(name_or_path="toy", device="auto"):
    from .loading import load_model as _load

    return _load(name_or_path, device)
