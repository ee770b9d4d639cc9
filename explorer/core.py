"""What the explorer shows, computed from the trace (no web framework, no manim here).

The numbers of one head are `Trace.to_dict` (the very JSON of `render.py inspect --json`), plus the
raw dot products q·k recomputed from the trace's own q and k. Models come from a fixed list made at
start: the built-ins and the folders given with `--model`; the page names a model by its id only.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attention_manim.model.errors import UnknownWordError, UserError
from attention_manim.model.places import BUILTIN_MODELS

MAX_SENTENCE_CHARS = 300  # what one sentence box may hold
MAX_TOKENS = 64  # a grid of 64 x 64 cells is still readable; longer texts belong to the CLI


@dataclass
class ModelChoice:
    id: str  # what the page sends ("toy", "smollm2", or the folder's name)
    source: str  # what load_model receives (a built-in name or a path)


@dataclass
class Models:
    """The fixed list of models on offer, each loaded once on first use (thread-safe)."""

    choices: list[ModelChoice]
    device: str = "auto"
    _loaded: dict = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def from_args(cls, folders=(), device: str = "auto") -> "Models":
        choices = [ModelChoice(n, n) for n in BUILTIN_MODELS]
        for f in folders:
            p = Path(f).expanduser().resolve()
            if not p.exists():
                raise UserError(f"no model folder {str(f)!r}", "give a directory with config.json and model.safetensors",
                                key="explorer_no_folder", folder=str(f))
            name, n = p.name, 2
            while any(c.id == name for c in choices):
                name, n = f"{p.name}-{n}", n + 1
            choices.append(ModelChoice(name, str(p)))
        return cls(choices, device)

    @property
    def ids(self) -> list[str]:
        return [c.id for c in self.choices]

    def check(self, model_id: str) -> ModelChoice:
        for c in self.choices:
            if c.id == model_id:
                return c
        raise UserError(f"unknown model {str(model_id)[:40]!r}", f"choose {', '.join(self.ids)}",
                        key="explorer_unknown_model", model=str(model_id)[:40], choices=", ".join(self.ids))

    def session(self, model_id: str):
        """The model's session (model/session.py): loaded once, its head roles measured before the
        first trace, so the page opens on the head the clips use."""
        choice = self.check(model_id)
        with self._lock:
            if choice.id not in self._loaded:
                from attention_manim.model.session import open_session

                session = open_session(choice.source, self.device)
                session.info  # noqa: B018  (measures a real model's roles once; cached on disk)
                self._loaded[choice.id] = session
            return self._loaded[choice.id]

    def get(self, model_id: str):
        """The loaded model itself (its vocabulary, its config)."""
        return self.session(model_id).model

    def default_head(self, model_id: str) -> tuple[int, int]:
        return self.session(model_id).default_head()

    def trace(self, model_id: str, sentence: str):
        session = self.session(model_id)
        trace = session.trace(check_sentence(sentence))  # a bounded cache (by count and bytes)
        if trace.n_tokens > MAX_TOKENS:
            raise UserError(f"the sentence has {trace.n_tokens} tokens; the explorer shows at most {MAX_TOKENS}",
                            "shorten it, or look at it with `python render.py inspect`",
                            key="explorer_too_many_tokens", n_tokens=trace.n_tokens, max_tokens=MAX_TOKENS)
        return trace


def check_sentence(sentence) -> str:
    if not isinstance(sentence, str) or not sentence.strip():
        raise UserError("the sentence has no words the model can read", "give at least one word",
                        key="empty_sentence")
    if len(sentence) > MAX_SENTENCE_CHARS:
        raise UserError(f"the sentence is {len(sentence)} characters long; the explorer takes at most "
                        f"{MAX_SENTENCE_CHARS}", "shorten it",
                        key="explorer_sentence_too_long", chars=len(sentence), max_chars=MAX_SENTENCE_CHARS)
    return sentence.strip()


def check_head(trace, layer: int | None, head: int | None,
               default: tuple[int, int] | None = None) -> tuple[int, int]:
    """The head to show (the same range checks and words as `render.py inspect`); None picks
    `default` (the session's default head: what the clips use), else the adjectives→nouns head the
    trace names, else layer 0 head 0."""
    m = trace.model
    if layer is None or head is None:
        li, hi = default or m.head_for_role("adjective_noun") or (0, 0)
        layer = li if layer is None else layer
        head = hi if head is None else head
    if not 0 <= layer < m.n_layers:
        raise UserError(f"layer {layer} is out of range: the model has {m.n_layers} layer(s) (0..{m.n_layers - 1})",
                        key="layer_out_of_range", layer=layer, n_layers=m.n_layers, last=m.n_layers - 1,
                        count=m.n_layers)
    if not 0 <= head < m.n_heads:
        raise UserError(f"head {head} is out of range: the model has {m.n_heads} heads per layer (0..{m.n_heads - 1})",
                        key="head_out_of_range", head=head, n_heads=m.n_heads, last=m.n_heads - 1)
    return layer, head


def head_view(trace, layer: int | None = None, head: int | None = None, top: int = 10,
              default: tuple[int, int] | None = None) -> dict:
    """One head's numbers for the page: `inspect --json` restricted to that head, plus `qk`."""
    layer, head = check_head(trace, layer, head, default)
    d = trace.to_dict(layer=layer, head=head, top=top)
    ht = trace.head(layer, head)
    h = d["layers"][0]["heads"][0]
    h["qk"] = (np.asarray(ht.q, dtype=np.float64) @ np.asarray(ht.k, dtype=np.float64).T).tolist()
    h["role"] = ht.role
    for big in ("delta_e", "v"):
        h.pop(big, None)
    return {
        "model": d["model"],
        "text": d["text"],
        "tokens": d["tokens"],
        "token_ids": d["token_ids"],
        "next_token": d["next_token"],
        "layer": layer,
        "head": head,
        "d_head": trace.model.d_head,
        "pattern_head": h,
    }


def overview(trace, digits: int = 3) -> dict:
    """Every head of every layer, rounded (thumbnails only; the head view has the exact numbers)."""
    return {
        "tokens": list(trace.tokens),
        "n_layers": trace.model.n_layers,
        "n_heads": trace.model.n_heads,
        "heads": [[{"layer": lt.index, "head": h.head, "role": h.role,
                    "pattern": np.round(np.where(h.mask, 0.0, np.float64(h.pattern)), digits).tolist()}
                   for h in lt.heads] for lt in trace.layers],
    }


def vocabulary(model) -> dict:
    """The words the model knows, grouped as `render.py vocab` groups them."""
    if model.real:
        return {"real": True, "size": model.cfg.vocab_size, "groups": {}}
    groups = None
    if model.info.family == "toy":
        try:
            from attention_manim.model.toy_world import vocab_groups

            groups = vocab_groups()
        except ImportError:
            groups = None
    return {"real": False, "size": model.cfg.vocab_size,
            "groups": {k: list(v) for k, v in (groups or {"words": sorted(model.cfg.vocab)}).items()}}


def error_body(e: UserError, lang: str = "en") -> dict:
    from attention_manim.scenes.i18n import localized_error

    message, hint = localized_error(e, lang)
    body = {"message": message, "hint": hint}
    if isinstance(e, UnknownWordError):
        body["unknown_words"] = list(e.words)
    return body
