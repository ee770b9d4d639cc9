"""Plans of `sliding_window` (no manim, no torch at import): a causal window of w keys
(model/sliding_window.py), what real heads lose to it, how far stacked windows reach, and attention
sinks (the first token kept as well, as StreamingLLM does).

The lesson reads a long text: SmolLM2 (any real model) the passage of model/passages.py that tells one
paragraph three times and stops partway through a fourth, the toy its own long example, or the user's
--sentence. `--window w` (lesson option "window", default 8) sets the width. The measurements over
every head and the runs with every layer windowed are `ModelSession.window_study`, made once when the
lesson's setting is made (`with_window_study`).

Three chapters:
- `window_mask`: the window on the grid of the text's first tokens (a real head's pattern; the
  removed cells marked), then one layer's heads: the share of each one's weight that falls outside.
- `window_reach`: stacked windows reach L·(w − 1) tokens back after L layers, checked by composing
  the masks; a cone over the layers.
- `window_sinks`: the weight on the first token, per layer; the weight kept by the window alone and by
  the first token plus the window; the next token after the text with every layer windowed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attention_manim.model.errors import UserError
from attention_manim.model.passages import LONG_PASSAGE
from attention_manim.model.sliding_window import reach, removed, removed_count, sink_window_sees

from ..setting import SceneInputs, Setting
from .kv_cache import session_of
from .linear_attention import measured_role

WINDOW_STUDY = "window_study"  # Setting.options key: the text's WindowStudy
WINDOW = "window"  # the lesson option (render.py --window)
DEFAULT_WINDOW = 8
MIN_WINDOW, MAX_WINDOW = 2, 32
SINKS = 1  # the first token, kept beside the window
GRID_MIN = 16  # the grid shows the text's first max(GRID_MIN, 2·w) tokens
CONE_MIN_LAYERS = 4  # the cone is drawn over at least this many layers (the model's own marked)
PILES = 0.1  # a mean weight on the first token at least this large "piles up" there
FEW_LAYERS = 4  # a model with fewer layers gets a bar for every head in the sink chart, not one per layer


def window_text(inputs: SceneInputs) -> str | None:
    """The text the lesson reads when the user gives none: a real model's long passage; the toy's own
    long example (None: the lesson's examples decide)."""
    if inputs.sentences:
        return None
    if inputs.model is not None and inputs.model.real:
        return LONG_PASSAGE
    return None


def window_of(setting: Setting) -> int:
    """The window width the user asked for (lesson option "window", read through `Setting.option` so that
    the command line knows the lesson uses --window), checked."""
    w = setting.option(WINDOW, DEFAULT_WINDOW)
    if isinstance(w, bool) or not isinstance(w, (int, np.integer)) or not MIN_WINDOW <= int(w) <= MAX_WINDOW:
        raise UserError(f"--window {w}: a window is {MIN_WINDOW} to {MAX_WINDOW} tokens wide",
                        f"use --window {MIN_WINDOW}..{MAX_WINDOW}, or leave it out for {DEFAULT_WINDOW}",
                        key="window_out_of_range", window=w, least=MIN_WINDOW, most=MAX_WINDOW,
                        default=DEFAULT_WINDOW)
    return int(w)


def with_window_study(setting: Setting, inputs: SceneInputs) -> Setting:
    w = window_of(setting)
    tr = setting.trace
    if tr.n_tokens <= w + 1:
        raise UserError(f"the text has {tr.n_tokens} tokens: a window of {w} removes nothing from it",
                        "give a longer --sentence, or a smaller --window", key="window_too_wide",
                        n_tokens=tr.n_tokens, window=w)
    session = session_of(inputs, "window_study")
    study = session.window_study(tr.text, w, SINKS)
    return replace(setting, options={**setting.options, WINDOW_STUDY: study})


def _study(setting: Setting):
    if WINDOW_STUDY not in setting.options:
        raise ValueError("the sliding-window chapters need their study: make the setting with with_window_study "
                         "(WindowLesson does)")
    st = setting.options[WINDOW_STUDY]
    if st.window != window_of(setting):
        raise ValueError(f"the study was made for a window of {st.window}, the setting asks for {window_of(setting)}")
    return st


@dataclass(frozen=True)
class WindowMaskPlan:
    model_name: str
    window: int
    tokens: tuple[str, ...]  # the grid's tokens: the text's first ones
    pattern: np.ndarray  # [n, n] the grid head's real pattern on them (causal: the same as on the whole text)
    mask: np.ndarray  # [n, n] True = the future (blocked by the causal mask)
    removed: np.ndarray  # [n, n] True = a cell the window removes
    grid_causal: int  # cells of the grid's causal triangle
    grid_removed: int  # of them, removed
    n_text: int  # the whole text's tokens
    text_causal: int
    text_removed: int
    layer: int  # the layer whose heads are drawn as bars (the most weight outside, on average)
    head: int  # the grid's head: that layer's head with the most weight outside
    role: str  # its role, when the model names or measured one ("" otherwise)
    outside: np.ndarray  # [n_heads] that layer's heads: weight outside the window (mean over rows ≥ w)
    outside_all: float  # the mean over every head of every layer
    n_layers: int
    n_heads: int
    layout: str = "video"  # video: keys as rows, queries as columns; paper: the transpose


def plan_window_mask(setting: Setting) -> WindowMaskPlan:
    st = _study(setting)
    w = window_of(setting)
    tr = setting.trace
    N = tr.n_tokens
    layer = int(np.argmax(st.outside.mean(axis=1)))
    head = int(np.argmax(st.outside[layer]))
    n = min(N, max(GRID_MIN, 2 * w))
    ht = tr.head(layer, head)
    return WindowMaskPlan(model_name=tr.model.name, window=w, tokens=tuple(tr.tokens[:n]),
                          pattern=np.asarray(ht.pattern, float)[:n, :n], mask=np.asarray(ht.mask, bool)[:n, :n],
                          removed=removed(n, w), grid_causal=n * (n + 1) // 2, grid_removed=removed_count(n, w),
                          n_text=N, text_causal=N * (N + 1) // 2, text_removed=removed_count(N, w), layer=layer,
                          head=head, role=measured_role(setting, layer, head), outside=np.array(st.outside[layer]),
                          outside_all=float(st.outside.mean()), n_layers=st.outside.shape[0],
                          n_heads=st.outside.shape[1], layout=setting.layout)


@dataclass(frozen=True)
class ReachPlan:
    model_name: str
    window: int
    n_layers: int  # the model's own
    layers: int  # drawn: max(n_layers, CONE_MIN_LAYERS)
    back: tuple[int, ...]  # [layers] tokens back the last token reaches after 1, 2, ... layers, by composing masks
    n_text: int
    reach_model: int  # L·(w − 1) for the model's own L
    first_layer_all: int | None  # the first layer whose reach covers the whole text (None: none drawn does)


def composed_back(n: int, w: int, layers: int) -> list[int]:
    """How many tokens back the last of n tokens depends on after 1..layers window layers: the window
    masks composed (a boolean vector times the mask, layer after layer), not the formula."""
    sees = sink_window_sees(n, w, 0).astype(np.int64)
    r = np.zeros(n, dtype=np.int64)
    r[-1] = 1
    out = []
    for _ in range(layers):
        r = ((r @ sees) > 0).astype(np.int64)
        out.append(int(n - 1 - np.flatnonzero(r)[0]))
    return out


def plan_window_reach(setting: Setting) -> ReachPlan:
    st = _study(setting)
    w = window_of(setting)
    L = st.outside.shape[0]
    layers = max(L, CONE_MIN_LAYERS)
    # enough tokens that the composition is never cut short by the text's start
    n = max(st.n_tokens, layers * (w - 1) + 1)
    back = composed_back(n, w, layers)
    covers = [i + 1 for i, b in enumerate(back) if b >= st.n_tokens - 1]
    return ReachPlan(model_name=st.model, window=w, n_layers=L, layers=layers, back=tuple(back), n_text=st.n_tokens,
                     reach_model=reach(L, w), first_layer_all=covers[0] if covers else None)


@dataclass(frozen=True)
class SinksPlan:
    model_name: str
    window: int
    sinks: int
    sink_per_layer: np.ndarray  # [n_layers] mean weight on the first token, over the layer's heads
    sink_per_head: np.ndarray  # [n_layers, n_heads] each head's (drawn when the model has few layers)
    sink_mean: float
    sink_top_layer: int
    sink_top: float
    piles: bool  # sink_mean ≥ PILES
    per_head: bool  # the chart draws a bar per head (fewer than FEW_LAYERS layers), else one per layer
    shown_top: float  # the largest bar the chart draws: a head's weight (per_head), else a layer's mean
    shown_top_layer: int
    shown_top_head: int | None  # the head of that bar when the chart draws heads
    kept_window: float  # weight kept by the window alone, mean over every head
    kept_sinks: float  # by the first token plus the window
    tail: tuple[str, ...]  # the text's last tokens (what the next token follows)
    tail_text: str  # the same as the text reads
    token: str  # the model's own next token
    p_token: float
    windows: tuple[int, ...]
    window_kept: tuple[bool, ...]
    window_kl: tuple[float, ...]
    window_token: tuple[str, ...]
    sink_kept: tuple[bool, ...]
    sink_kl: tuple[float, ...]
    sink_token: tuple[str, ...]
    seen_back: int | None  # how many tokens before the end the model's next token last appeared (None: never)
    at: int  # the index of the lesson's window in `windows`
    back_from: int | None  # the smallest width at which sink + window keeps the token (None: none does)
    reach_model: int = 0  # L·(w − 1): how far back stacked windows could reach at most
    hops: int | None = None  # layers the token must at least be handed through: ⌈seen_back / (w − 1)⌉

    @property
    def reach_not_enough(self) -> bool:
        """The token lies within reach of the stacked windows, yet the lesson's window loses it: reach is
        only an upper bound (the information must be handed on, layer by layer, by heads that do so)."""
        lost = not self.window_kept[self.at] and not self.sink_kept[self.at]
        return lost and self.seen_back is not None and self.seen_back <= self.reach_model


TAIL = 6


def tail_text(trace, k: int) -> str:
    """The text's last `k` tokens as the text reads (a real model's pieces joined; the toy's words spaced)."""
    if trace.model.real and trace.token_texts and len(trace.token_texts) == trace.n_tokens:
        return "".join(trace.token_texts[-k:]).strip()
    return " ".join(trace.tokens[-k:])


def last_seen(tokens, token: str) -> int | None:
    """How many tokens back from the next position `token` last appeared in `tokens` (None: it did not)."""
    for back, t in enumerate(reversed(tokens), start=1):
        if t == token:
            return back
    return None


def plan_window_sinks(setting: Setting) -> SinksPlan:
    st = _study(setting)
    per_layer = st.sink.mean(axis=1)
    top = int(np.argmax(per_layer))
    per_head = len(per_layer) < FEW_LAYERS
    if per_head:  # the caption names the largest bar drawn: a head's
        hl, hh = (int(x) for x in np.unravel_index(int(np.argmax(st.sink)), np.shape(st.sink)))
        shown = dict(shown_top=float(np.asarray(st.sink)[hl, hh]), shown_top_layer=hl, shown_top_head=hh)
    else:
        shown = dict(shown_top=float(per_layer[top]), shown_top_layer=top, shown_top_head=None)
    tr = setting.trace
    at = st.windows.index(st.window)
    back = [w for w, k in zip(st.windows, st.sink_kept) if k]
    seen = last_seen(tr.tokens, st.token)
    return SinksPlan(model_name=st.model, window=st.window, sinks=st.sinks, sink_per_layer=np.array(per_layer),
                     sink_per_head=np.array(st.sink),
                     sink_mean=float(st.sink.mean()), sink_top_layer=top, sink_top=float(per_layer[top]),
                     piles=float(st.sink.mean()) >= PILES, per_head=per_head, **shown, kept_window=float(st.kept.mean()),
                     kept_sinks=float(st.kept_sinks.mean()), tail=tuple(tr.tokens[-TAIL:]),
                     tail_text=tail_text(tr, TAIL), token=st.token,
                     p_token=st.p_token, windows=st.windows, window_kept=st.window_kept, window_kl=st.window_kl,
                     window_token=st.window_token, sink_kept=st.sink_kept, sink_kl=st.sink_kl,
                     sink_token=st.sink_token, seen_back=seen, at=at, back_from=back[0] if back else None,
                     reach_model=reach(per_layer.shape[0], st.window),
                     hops=None if seen is None else -(-seen // (st.window - 1)))
