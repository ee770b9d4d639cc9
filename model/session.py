"""One open model, as everything outside `model/` uses it: the CLI, the batch workers, the explorer
and the notebook.

    session = open_session("smollm2")            # loaded once per (name, device) in this process
    trace = session.trace("the Eiffel tower")     # a bounded cache of traces (by count and bytes)
    session.info                                  # sizes, and the measured roles of a real model's heads
    session.default_head("adjective_noun")        # the head the clips and the explorer both start on
    session.head_choice("adjective_noun")         # the same, with why: HeadChoice(layer, head, role, gap)

A real model's head roles are measured once per session (model/probes.py, cached on disk) the
first time `info`, `roles` or `default_head` is asked, and held by the session alone (the model
object is never written to); the toy names its own heads. Sessions are kept per (model, device).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import fields, is_dataclass, replace

import numpy as np

from .trace import DEFAULT_ROLE, FALLBACK_ROLES, HeadChoice, ModelInfo, Trace, choose_head  # noqa: F401

MAX_TRACES = 64  # traces kept per session
MAX_TRACE_BYTES = 512 * 2**20  # and at most this many bytes of their arrays
MAX_SESSIONS = 4  # models kept loaded per process (the least recently used goes first)


def nbytes(obj) -> int:
    """The bytes of the numpy arrays inside a trace (dataclasses, tuples, dicts of them)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if is_dataclass(obj) and not isinstance(obj, type):
        return sum(nbytes(getattr(obj, f.name)) for f in fields(obj))
    if isinstance(obj, (tuple, list)):
        return sum(nbytes(x) for x in obj)
    if isinstance(obj, dict):
        return sum(nbytes(x) for x in obj.values())
    return 0


class TraceCache:
    """Least-recently-used traces, bounded by count and by bytes (thread-safe)."""

    def __init__(self, max_items: int = MAX_TRACES, max_bytes: int = MAX_TRACE_BYTES):
        self.max_items, self.max_bytes = max_items, max_bytes
        self._items: OrderedDict[str, tuple[Trace, int]] = OrderedDict()
        self._lock = threading.Lock()
        self.bytes = 0

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: str):
        with self._lock:
            hit = self._items.get(key)
            if hit is None:
                return None
            self._items.move_to_end(key)
            return hit[0]

    def put(self, key: str, trace: Trace) -> None:
        size = nbytes(trace)
        with self._lock:
            if key in self._items:
                self.bytes -= self._items.pop(key)[1]
            self._items[key] = (trace, size)
            self.bytes += size
            while len(self._items) > 1 and (len(self._items) > self.max_items or self.bytes > self.max_bytes):
                self.bytes -= self._items.popitem(last=False)[1][1]


class ModelSession:
    """A loaded model with its traces, its measured head roles and its default heads."""

    def __init__(self, model, name: str, device: str = "auto", *, max_traces: int = MAX_TRACES,
                 max_trace_bytes: int = MAX_TRACE_BYTES):
        self.model = model
        self.name = name
        self.device = device
        self.traces = TraceCache(max_traces, max_trace_bytes)
        self._lock = threading.Lock()  # one forward pass at a time: torch on two cores gains nothing from more
        self._info: ModelInfo | None = None
        self._studies: dict[tuple, object] = {}  # linear_study / window_study results, by their arguments
        self._study_lock = threading.Lock()  # one study at a time (its traces take `_lock` themselves)

    @classmethod
    def open(cls, name: str, device: str = "auto", **limits) -> "ModelSession":
        from .loading import load_model

        return cls(load_model(name, device), str(name), device, **limits)

    @property
    def real(self) -> bool:
        return bool(getattr(self.model, "real", False))

    @property
    def info(self) -> ModelInfo:
        """What scenes know of the model; a real model's heads get their roles by measurement, so each
        lesson starts on a head that fits its story. The session is the one owner of those roles:
        measured once per session (model/probes.py; the disk cache makes a second session's
        measurement a read) and held here, never written onto the model object, so two sessions on
        one model (another device, a test's own) never see each other's."""
        if self._info is None:
            with self._lock:
                if self._info is None:
                    info = self.model.info
                    if info.real and not info.roles:  # a real model names no heads: measure them
                        from .probes import measured_heads, role_gaps, roles_from

                        heads = measured_heads(self.model)
                        info = replace(info, roles=dict(roles_from(heads)), role_gaps=role_gaps(self.model, heads))
                    self._info = info
        return self._info

    @property
    def roles(self) -> dict[str, tuple[int, int]]:
        """Role id -> (layer, head), as this session measured (or the toy named) them."""
        return dict(self.info.roles)

    def _with_roles(self, trace: Trace) -> Trace:
        """`trace`, carrying this session's roles once they are measured (the model's own info has
        none for a real model)."""
        info = self._info
        if info is None or (trace.model.roles == info.roles and trace.model.role_gaps == info.role_gaps):
            return trace
        return replace(trace, model=replace(trace.model, roles=dict(info.roles), role_gaps=dict(info.role_gaps)))

    def head_choice(self, role: str | None = None) -> HeadChoice:
        """The head measured or named for `role` (default: adjectives → nouns), and why that one. A model
        with none for it (a vocabulary without the story's probe words, or no head scoring enough on
        the role's probe) falls back to its structural heads, in FALLBACK_ROLES order, so the head shown
        has a measured role the lesson can name, and the choice carries the reason (`gap`, measured by
        model/probes.py) for the lesson to say; layer 0 head 0 only when nothing was measured at all."""
        info = self.info
        return choose_head(info.roles, role, getattr(info, "role_gaps", None), getattr(info, "real", True))

    def default_head(self, role: str | None = None) -> tuple[int, int]:
        """(layer, head) of `head_choice(role)`: the head the clips and the explorer both start on."""
        return self.head_choice(role).ref

    def trace(self, sentence: str) -> Trace:
        hit = self.traces.get(sentence)
        if hit is None:
            with self._lock:
                hit = self.traces.get(sentence)
                if hit is None:
                    hit = self._with_roles(self.model.trace(sentence))
                    self.traces.put(sentence, hit)
                    return hit
        stamped = self._with_roles(hit)  # traced before the roles were measured
        if stamped is not hit:
            self.traces.put(sentence, stamped)
        return stamped

    # the form scenes receive: a function sentence -> Trace
    __call__ = trace

    def generate(self, ids, new_tokens: int, layer: int, head: int):
        """Greedy generation with a KV cache, watching one head (model/kv_cache.py)."""
        from .kv_cache import generate

        with self._lock:
            return generate(self.model, ids, new_tokens, layer, head)

    def mlp_activations(self, trace: Trace, layer: int, position: int):
        """One MLP's neurons at one position of a trace (model/mlp_probe.py)."""
        from .mlp_probe import mlp_activations

        with self._lock:
            return mlp_activations(self.model, trace, layer, position)


    def _study(self, key: tuple, run):
        """A study's result by its arguments: computed once (one study at a time), then kept."""
        hit = self._studies.get(key)
        if hit is not None:
            return hit
        with self._study_lock:
            hit = self._studies.get(key)
            if hit is None:
                hit = self._studies[key] = run()
        return hit

    def linear_study(self, passages=None):
        """Softmax against linear attention over every head, and one layer at a time made linear
        (model/studies.py), measured once per session: a LinearStudy of plain numbers."""
        from .studies import LinearStudy, cached_study, linear_study

        key = ("linear", None if passages is None else tuple(passages))
        return self._study(key, lambda: cached_study(self, *key[:1], key[1:],
                                                     lambda: linear_study(self, passages, lock=self._lock),
                                                     LinearStudy))

    def window_study(self, text: str, window: int, sinks: int = 1):
        """Every head's weight outside a sliding window of `window` (and with `sinks` first tokens kept),
        and the next token after `text` with every layer windowed (model/studies.py), once per session."""
        from .studies import WindowStudy, cached_study, window_study

        key = ("window", text, int(window), int(sinks))
        return self._study(key, lambda: cached_study(self, *key[:1], key[1:],
                                                     lambda: window_study(self, text, int(window), int(sinks),
                                                                          lock=self._lock),
                                                     WindowStudy))


_sessions: OrderedDict[tuple[str, str], ModelSession] = OrderedDict()
_sessions_lock = threading.Lock()


def open_session(name: str, device: str = "auto") -> ModelSession:
    """The process's session for (name, device): loaded on first use, kept for the next (at most
    MAX_SESSIONS models stay loaded)."""
    key = (str(name), device)
    with _sessions_lock:
        session = _sessions.get(key)
        if session is not None:
            _sessions.move_to_end(key)
            return session
    session = ModelSession.open(*key)
    with _sessions_lock:
        session = _sessions.setdefault(key, session)
        while len(_sessions) > MAX_SESSIONS:
            _sessions.popitem(last=False)
    return session


def load_for_scenes(name: str, device: str = "auto") -> tuple[ModelSession, ModelInfo]:
    """A model as scenes see it: (session, info), roles measured first so every trace carries them
    (what the CLI, a batch worker and the explorer load once per model)."""
    session = open_session(name, device)
    return session, session.info
