"""What the `linear_attention` and `sliding_window` lessons show of a whole model, measured once and
kept as plain numbers (no torch in the results): the scenes read these, never the model.

    study = session.linear_study()                      # every head, the passages, one layer made linear at a time
    study = session.window_study(text, window=8, sinks=1)  # every head's weight outside a window, every layer windowed

The measurements themselves are model/linear_attention.py's and model/sliding_window.py's; this module
runs them and copies out the numbers. `ModelSession` keeps each study in memory (model/session.py), and
`cached_study` on disk (`<cache>/studies/`, plain JSON), keyed by the model's weights, the device, the
study's arguments and the source of the modules that measure it: a second render of the lesson, in
another language or another process, reads the numbers instead of running the model dozens of times
(SmolLM2's linear study: some 16 s on two cores). Deleting the folder is always safe."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .linear_attention import compare_model, elu_plus_one, swap_effects
from .passages import passages_for
from .sliding_window import window_effects, window_shares

EFFECT_WINDOWS = (4, 8, 16, 32, 64)  # the widths every layer is windowed with (those shorter than the text)
STUDY_VERSION = 1  # bump when a study's fields change meaning (a changed measuring module changes the key itself)
# the modules whose code decides a study's numbers: any change to them is a new key
STUDY_SOURCES = ("studies.py", "linear_attention.py", "sliding_window.py", "swapped.py", "transformer.py",
                 "trace.py", "passages.py")


@contextmanager
def one_thread():
    """Torch on one thread while a study runs: dozens of forward passes over some 50 tokens each are
    fastest that way, and on a busy machine several threads spin-wait for one another (measured on 2
    shared cores: a layer swap took 1.8 s with two threads, 0.23 s with one)."""
    try:
        import torch
    except ImportError:  # nothing runs the model without torch anyway
        yield
        return
    saved = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(saved)


@dataclass(frozen=True)
class LinearStudy:
    """Softmax against elu + 1 linear attention over every head of a model on some passages."""

    model: str
    passages: tuple[str, ...]
    n_tokens: tuple[int, ...]
    tv: np.ndarray  # [n_layers, n_heads] mean total-variation distance per query row
    top_softmax: np.ndarray  # [n_layers, n_heads] mean weight on each row's top key, softmax
    top_linear: np.ndarray  # [n_layers, n_heads] the same, linear (its own top key)
    kept: np.ndarray  # [passages, n_layers] bool: top-1 next token unchanged with that layer's heads linear
    kl: np.ndarray  # [passages, n_layers] KL(model ‖ one layer linear) of the next token, nats
    tokens: tuple[str, ...]  # the model's own next token after each passage
    tokens_after: tuple[tuple[str, ...], ...]  # [passage][layer] the next token with that layer linear

    @property
    def tv_overall(self) -> float:
        return float(self.tv.mean())

    @property
    def top_softmax_overall(self) -> float:
        return float(self.top_softmax.mean())

    @property
    def top_linear_overall(self) -> float:
        return float(self.top_linear.mean())

    @property
    def runs(self) -> int:
        return int(self.kept.size)

    @property
    def kept_count(self) -> int:
        return int(self.kept.sum())

    @property
    def kl_mean(self) -> float:
        return float(self.kl.mean()) if self.kl.size else 0.0


def linear_study(session, passages: Sequence[str] | None = None, lock=None) -> LinearStudy:
    """Measure `session`'s model (a ModelSession: traces through it, swaps on its model; `lock`, when
    given, is held while the model runs with a layer swapped)."""
    info = session.model.info
    passages = tuple(passages) if passages is not None else passages_for(info)
    with one_thread():
        comp = compare_model(session, passages, elu_plus_one)
        with lock or nullcontext():
            sw = swap_effects(session.model, passages, elu_plus_one)
    return LinearStudy(model=info.name, passages=passages, n_tokens=tuple(comp.n_tokens), tv=np.array(comp.tv),
                       top_softmax=np.array(comp.top_softmax), top_linear=np.array(comp.top_linear),
                       kept=np.array(sw.kept), kl=np.array(sw.kl), tokens=tuple(row[0].token for row in sw.effects),
                       tokens_after=tuple(tuple(e.token_after for e in row) for row in sw.effects))


@dataclass(frozen=True)
class WindowStudy:
    """One text, one window width and a number of sinks: every head's shares of weight, and the next
    token with every layer windowed (for several widths, the lesson's among them)."""

    model: str
    text: str
    n_tokens: int
    window: int
    sinks: int
    outside: np.ndarray  # [n_layers, n_heads] weight outside the window alone (mean over rows i ≥ w)
    outside_sinks: np.ndarray  # [n_layers, n_heads] weight outside sinks + window
    sink: np.ndarray  # [n_layers, n_heads] mean weight on token 0 (rows ≥ 1)
    token: str  # the model's own next token after the text
    p_token: float  # its probability
    windows: tuple[int, ...]  # the widths every layer was windowed with
    window_kept: tuple[bool, ...]  # [windows] the window alone keeps the next token
    window_kl: tuple[float, ...]
    window_token: tuple[str, ...]  # what it predicts instead (or the same)
    sink_kept: tuple[bool, ...]  # [windows] sinks + window
    sink_kl: tuple[float, ...]
    sink_token: tuple[str, ...]

    @property
    def kept(self) -> np.ndarray:
        return 1.0 - self.outside

    @property
    def kept_sinks(self) -> np.ndarray:
        return 1.0 - self.outside_sinks


def window_study(session, text: str, window: int, sinks: int = 1,
                 windows: Sequence[int] = EFFECT_WINDOWS, lock=None) -> WindowStudy:
    """Measure `session`'s model on `text` with a window of `window` (and `sinks` first tokens kept;
    `lock`, when given, is held while the model runs windowed)."""
    with one_thread():
        tr = session.trace(text)
        sh = window_shares(tr, (window,), sinks)
        widths = tuple(sorted({w for w in windows if w < tr.n_tokens} | {window}))
        with lock or nullcontext():
            ef = window_effects(session.model, text, widths, sinks)
    first = ef.window[0]
    return WindowStudy(model=tr.model.name, text=text, n_tokens=tr.n_tokens, window=window, sinks=sinks,
                       outside=sh.outside[..., 0].copy(), outside_sinks=sh.outside_sinks[..., 0].copy(),
                       sink=sh.sink.copy(), token=first.token, p_token=float(first.p_top1), windows=ef.windows,
                       window_kept=tuple(e.kept for e in ef.window), window_kl=tuple(float(e.kl) for e in ef.window),
                       window_token=tuple(e.token_after for e in ef.window),
                       sink_kept=tuple(e.kept for e in ef.sink_window),
                       sink_kl=tuple(float(e.kl) for e in ef.sink_window),
                       sink_token=tuple(e.token_after for e in ef.sink_window))


# --- the disk cache -----------------------------------------------------------------------------------

def study_key(session, kind: str, args: tuple) -> str:
    """The study's file name: its kind and arguments, the model's weights (model/probes.py's identity),
    the device it runs on, STUDY_VERSION and the bytes of STUDY_SOURCES."""
    from .probes import weights_identity

    h = hashlib.sha256(repr((STUDY_VERSION, kind, args)).encode())
    h.update(weights_identity(session.model).encode())
    params = getattr(session.model, "parameters", None)
    first = next(iter(params()), None) if callable(params) else None
    h.update(str(getattr(first, "device", "cpu")).encode())
    here = Path(__file__).resolve().parent
    for name in STUDY_SOURCES:
        path = here / name
        h.update(path.read_bytes() if path.is_file() else name.encode())
    return h.hexdigest()[:24]


def _encode(value):
    if isinstance(value, np.ndarray):
        return {"array": value.tolist(), "dtype": str(value.dtype), "shape": list(value.shape)}
    if isinstance(value, tuple):
        return {"tuple": [_encode(v) for v in value]}
    if isinstance(value, np.generic):
        return value.item()
    return value


def _decode(value):
    if isinstance(value, dict) and "array" in value:
        return np.array(value["array"], dtype=value["dtype"]).reshape(value["shape"])
    if isinstance(value, dict) and "tuple" in value:
        return tuple(_decode(v) for v in value["tuple"])
    return value


def cached_study(session, kind: str, args: tuple, run: Callable[[], object], cls: type):
    """`run()`'s study, read from the disk cache when this model, device, arguments and code measured it
    before; else measured and written (atomically; a read-only or damaged cache costs a measurement)."""
    from .places import cache_dir
    from .probes import _write_atomic

    path = cache_dir("studies") / f"{kind}-{study_key(session, kind, args)}.json"
    if path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            names = {f.name for f in dataclasses.fields(cls)}
            if set(data) == names:
                return cls(**{k: _decode(v) for k, v in data.items()})
        except (ValueError, KeyError, TypeError, OSError):
            pass  # damaged: measured again and replaced
    study = run()
    _write_atomic(path, json.dumps({f.name: _encode(getattr(study, f.name)) for f in dataclasses.fields(cls)}))
    return study
