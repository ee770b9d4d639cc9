"""Plans of the `query`, `key` and `values` chapters (no manim here).

A plan says which tokens are shown (slots, with None for an ellipsis), which word the chapter
follows, and every number it draws: the real value and the string written on screen (`Shown`).
What the head's query "asks" and what its best keys "answer" are catalog keys chosen by the head's
role (`qkv.lines.<role>.question`), the neutral pair when the model names no role we have words for.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attention_manim.model.trace import HeadTrace, Trace

from ..setting import HeadRef, Setting, contrast_key, focus_tops, top_keys
from ..style import fmt_vec, fmt_weight
from .honesty import SELF_ANSWER, Honesty, answer_key, read_head  # noqa: F401  (SELF_ANSWER: re-exported)
from .space import choose_axes, pick_axes
from .rounding import rounding_off
from .windows import token_window, window_indices

MAX_SLOTS = 9  # token columns side by side (more tokens: ellipses)
MAX_ROWS = 9  # key rows down the left
MAX_CHIPS = 8  # value vectors beside the focus column (the strongest keys when there are more)
LINE_ROLES = ("adjective_noun", "sense_from_context", "previous_token", "verb_object")

# how many leading and trailing entries each picture shows (the rest is an ellipsis)
EMBEDDING = (5, 1)  # the focus word's embedding under its word
MATRIX = (5, 1)  # rows and columns of W_Q, W_V and W_O (and the vectors they multiply)
COLUMN = (5, 1)  # every word's query under its word
STRIP = (2, 1)  # the queries across the top while keys are made
KEY = (4, 1)  # a key beside its word
CHIP = (2, 1)  # a value vector beside its cell
SUM = (5, 1)  # E, ΔE and E′ of the focus word
BAND = (3, 1)  # every word's E, ΔE and E′


@dataclass(frozen=True)
class Shown:
    """A window of a real vector as drawn: which entries (None: the ⋮), their real values and
    the strings on screen (the ellipsis has no value and no string)."""

    head: int
    tail: int
    indices: tuple[int | None, ...]
    values: tuple[float, ...]
    text: tuple[str, ...]


def shown(vector, window: tuple[int, int], fmt=fmt_vec) -> Shown:
    v = np.asarray(vector, dtype=float).reshape(-1)
    idx = window_indices(len(v), *window)
    vals = tuple(float(v[k]) for k in idx if k is not None)
    return Shown(window[0], window[1], tuple(idx), vals, tuple(fmt(x) for x in vals))


@dataclass(frozen=True)
class ShownMatrix:
    """A window of a weight matrix as the video draws it (output dimension down: W.T)."""

    rows: tuple[int | None, ...]
    cols: tuple[int | None, ...]
    values: tuple[tuple[float, ...], ...]  # [shown row][shown column], ellipses left out


def shown_matrix(W_drawn: np.ndarray, window=MATRIX) -> ShownMatrix:
    rows = window_indices(W_drawn.shape[0], *window)
    cols = window_indices(W_drawn.shape[1], *window)
    vals = tuple(tuple(float(W_drawn[r, c]) for c in cols if c is not None) for r in rows if r is not None)
    return ShownMatrix(tuple(rows), tuple(cols), vals)


def line_keys(role: str) -> tuple[str, str]:
    """Catalog keys of the question a head's query asks and the answer its best keys give."""
    table = role if role in LINE_ROLES else "neutral"
    return f"qkv.lines.{table}.question", f"qkv.lines.{table}.answer"


def head_input(setting: Setting) -> np.ndarray:
    """What the head reads: its layer's attention input (the embedding, after LayerNorm if any)."""
    return np.asarray(setting.trace.layers[setting.head.layer].attn_in, dtype=float)


# --- query ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class QueryPlan:
    head: HeadRef
    head_trace: HeadTrace
    tokens: tuple[str, ...]
    focus: int
    tops: tuple[int, ...]  # the keys the focus attends to most (kept in view)
    slots: tuple[int | None, ...]  # tokens across the row (None: an ellipsis slot)
    d_model: int
    d_head: int
    embedding_vector: np.ndarray  # the focus word's head input E, every entry
    embedding: Shown  # E as first shown under the word
    w_q: ShownMatrix  # W_Q as drawn (W_Q.T)
    product_input: Shown  # E as it stands beside W_Q
    query: Shown  # the focus query, in W_Q's shown rows (bias included when the model has one)
    has_bias: bool
    queries: dict  # token -> Shown: every shown word's query under it
    question: str  # catalog key of the head's question
    follow: str = "qkv.query.follow"  # catalog key of the first caption (what the head's input knows)
    rotary: bool = False  # the model rotates queries and keys by position after W_Q (shown as a step)
    piece_of: str | None = None  # the word the focus token is the last piece of ("verdant"), as written
    normalized: bool = False  # the head reads E after its layer's norm (LayerNorm, RMSNorm), not the residual


def piece_of(trace, i: int) -> str | None:
    """The word token `i` is a piece of, as written, when the tokenizer cut that word ("ant" of
    "verdant"); None for a whole word."""
    wo = list(getattr(trace, "word_of_token", ()) or ())
    if len(wo) != len(trace.tokens) or wo.count(wo[i]) < 2:
        return None
    return trace.words[wo[i]]


def plan_query(setting: Setting) -> QueryPlan:
    ht = setting.head_trace()
    i = setting.focus_index()
    X = head_input(setting)
    tops = focus_tops(ht.pattern[i], i)
    slots = token_window(len(setting.trace.tokens), [i] + tops, MAX_SLOTS)
    return QueryPlan(
        head=setting.head, head_trace=ht, tokens=setting.trace.tokens, focus=i, tops=tuple(tops),
        slots=tuple(slots), d_model=X.shape[1], d_head=ht.q.shape[1], embedding_vector=X[i],
        embedding=shown(X[i], EMBEDDING), w_q=shown_matrix(np.asarray(ht.W_Q).T), product_input=shown(X[i], MATRIX),
        query=shown(ht.q[i], MATRIX), has_bias=bool(np.abs(ht.b_Q).max() > 0),
        queries={j: shown(ht.q[j], COLUMN) for j in slots if j is not None},
        question=line_keys(ht.role)[0], follow=follow_key(setting), rotary=setting.model.rotary,
        piece_of=piece_of(setting.trace, i), normalized=setting.trace.model.norm != "none")


def follow_key(setting: Setting) -> str:
    """What the head's input knows: the word and its position (the toy's layer 0); the word alone
    (a rotary model's layer 0: position comes later, by rotation); or what earlier layers gathered."""
    if setting.head.layer > 0:
        return "real.query.follow_context"
    return "real.query.follow_rotary" if setting.model.rotary else "qkv.query.follow"


# --- key --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SideView:
    """The side view: embedding space, then the query/key space at the real angles."""

    key: int  # the focus's strongest key
    contrast: int | None  # a visible key with the lowest score (None when there is none)
    axes: tuple[str, ...] | None  # named directions asked for the embedding-space picture (None: the model's)
    axis_names: tuple[str, ...]  # the three directions its axes show
    cos_embeddings: float  # cos(E_focus, E_key)
    cos_key: float  # cos(Q_focus, K_key)
    cos_contrast: float | None
    embeddings_caption: str  # catalog keys of the captions, chosen by the real cosines
    key_caption: str
    contrast_caption: str | None


def cosine(a, b) -> float:
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return 0.0 if na < 1e-12 or nb < 1e-12 else float(np.clip(a @ b / (na * nb), -1.0, 1.0))


@dataclass(frozen=True)
class KeyPlan:
    head: HeadRef
    head_trace: HeadTrace
    tokens: tuple[str, ...]
    focus: int
    tops: tuple[int, ...]  # the keys that answer, strongest first
    contrast: int | None
    slots: tuple[int | None, ...]  # queries across the top (as the query chapter shows them)
    rows: tuple[int | None, ...]  # key rows down the left (None: an ellipsis row)
    d_model: int
    d_head: int
    strip: dict  # token -> Shown: the queries across the top
    keys: dict  # token -> Shown: every shown key
    question: str  # catalog keys
    answers: tuple[str, ...]  # one per top key (a word that answers itself says so)
    side: SideView
    head_input: np.ndarray  # [n, d_model], for the embedding-space picture
    trace: Trace  # the embedding-space picture reads its named directions
    rotary: bool = False  # the keys shown are rotated by position (a caption says so)
    normalized: bool = False  # W_K reads E after the layer's norm (drawn Ê, as query and values do)


def plan_key(setting: Setting) -> KeyPlan:
    tr, ht = setting.trace, setting.head_trace()
    i = setting.focus_index()
    X = head_input(setting)
    tops = focus_tops(ht.pattern[i], i)
    contrast = contrast_key(ht.scores[i], ht.mask[i], tops + [i])
    n = len(tr.tokens)
    slots = token_window(n, [i] + tops, MAX_SLOTS)
    rows = token_window(n, [i] + tops + ([contrast] if contrast is not None else []), MAX_ROWS)
    question, answer = line_keys(ht.role)
    j = tops[0]
    c_key = cosine(ht.q[i], ht.k[j])
    c_con = cosine(ht.q[i], ht.k[contrast]) if contrast is not None else None
    c_emb = cosine(X[i], X[j])
    if c_con is None:
        key_caption, contrast_caption = "qkv.key.top_only", None
    else:
        key_caption = ("qkv.key.top_along" if c_key > 0.5 else "qkv.key.top_closest" if c_key > c_con + 0.1
                       else "qkv.key.top_near")
        contrast_caption = "qkv.key.contrast_away" if c_con < -0.05 else "qkv.key.contrast_off"
    axes = setting.axes or pick_axes(tr, np.stack([X[i], X[j]]))
    axes = tuple(axes) if axes else None
    side = SideView(key=j, contrast=contrast, axes=axes, axis_names=tuple(choose_axes(tr, axes)[0]),
                    cos_embeddings=c_emb,
                    cos_key=c_key, cos_contrast=c_con,
                    embeddings_caption="qkv.key.side_different" if c_emb < 0.5 else "qkv.key.side_similar",
                    key_caption=key_caption, contrast_caption=contrast_caption)
    return KeyPlan(
        head=setting.head, head_trace=ht, tokens=tr.tokens, focus=i, tops=tuple(tops), contrast=contrast,
        slots=tuple(slots), rows=tuple(rows), d_model=X.shape[1], d_head=ht.k.shape[1],
        strip={t: shown(ht.q[t], STRIP) for t in slots if t is not None},
        keys={t: shown(ht.k[t], KEY) for t in rows if t is not None},
        question=question, answers=tuple(answer_key(ht, i, t, answer) for t in tops), side=side,
        head_input=X, trace=tr, rotary=tr.model.rotary, normalized=tr.model.norm != "none")


# --- values -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Direction:
    name: str  # a named direction of the model
    before: float  # E·d
    after: float  # E′·d


@dataclass(frozen=True)
class ValuesPlan:
    head: HeadRef
    head_trace: HeadTrace
    tokens: tuple[str, ...]
    layout: str
    focus: int
    tops: tuple[int, ...]  # the keys the focus attends to most, strongest first
    d_model: int
    d_head: int
    weights: tuple[float, ...]  # the focus's real weights, one per key
    chips: tuple[int, ...]  # keys whose value vector is drawn beside its cell (sentence order)
    values: dict  # key -> Shown: those value vectors
    weight_text: dict  # key -> its weight as written ("0.48")
    hidden: int  # visible keys without a drawn value (a long sentence)
    hidden_weight: float  # their weight together
    rest_weight: float  # the weight of every key but the tops (named in the caption)
    z: Shown  # Σ w_j V_j: the weighted sum, in the small space
    w_o: ShownMatrix  # W_O as drawn (W_O.T)
    delta: Shown  # ΔE = W_O z, in W_O's shown rows
    embedding: Shown  # E (the residual stream entering the layer)
    updated: Shown  # E′ = E + ΔE
    directions: tuple[Direction, ...]  # named directions E′ gained along most (up to 2, gain ≥ 0.3)
    band_slots: tuple[int | None, ...]  # every word at once: the tokens shown
    bands: dict  # "E" | "dE" | "E'" -> {token: Shown}
    residual: np.ndarray  # [n, d_model] E of every word (for drawing)
    updated_all: np.ndarray  # [n, d_model] E′ of every word
    honesty: Honesty  # what a real head does with the focus (a note when not what the story says)
    source: int  # the word whose value W_V makes on screen: the focus's strongest key
    source_input: np.ndarray  # its head input E (what W_V multiplies), every entry
    w_v: ShownMatrix  # W_V as drawn (W_V.T)
    value_input: Shown  # that E as it stands beside W_V
    value: Shown  # its value V = W_V E (+ b_V), in W_V's shown rows
    has_bias: bool  # the model adds b_V after W_V (a step of its own)
    rounding_off: tuple[int, ...] = ()  # E′'s shown entries whose drawn E + ΔE miss E′ as drawn (marked ≈)
    band_rounding: dict = field(default_factory=dict)  # every word at once: token -> its E′ rows marked ≈
    normalized: bool = False  # W_V reads E after the layer's norm: the E beside it is not the residual E
    n_heads: int = 1  # the layer's heads: with more than one, E + this head's ΔE is this head alone (said so)


def plan_values(setting: Setting) -> ValuesPlan:
    tr, ht = setting.trace, setting.head_trace()
    layer, head = setting.head.layer, setting.head.head
    i = setting.focus_index()
    n = len(tr.tokens)
    w = np.asarray(ht.pattern[i], dtype=float)
    tops = top_keys(w)
    visible = [j for j in range(n) if not ht.mask[i, j]]
    strongest = sorted(sorted(visible, key=lambda j: -w[j])[:MAX_CHIPS])
    hidden = [j for j in visible if j not in strongest]
    resid = np.asarray(tr.layers[layer].resid_in, dtype=float)
    updated = np.asarray(tr.updated(layer, head), dtype=float)
    X, source = head_input(setting), tops[0]
    directions = []
    if tr.directions:
        names = list(tr.directions)
        before, after = tr.project(resid[i], names), tr.project(updated[i], names)
        for k in np.argsort(-(after - before), kind="stable")[:2]:
            if after[k] - before[k] >= 0.3:
                directions.append(Direction(names[int(k)], float(before[k]), float(after[k])))
    band_slots = token_window(n, [i] + tops, MAX_SLOTS)
    bands = {name: {j: shown(arr[j], BAND) for j in band_slots if j is not None}
             for name, arr in (("E", resid), ("dE", ht.delta_e), ("E'", updated))}
    return ValuesPlan(
        head=setting.head, head_trace=ht, tokens=tr.tokens, layout=setting.layout, focus=i, tops=tuple(tops),
        d_model=resid.shape[1], d_head=ht.v.shape[1], weights=tuple(float(x) for x in w),
        chips=tuple(strongest), values={j: shown(ht.v[j], CHIP) for j in strongest},
        weight_text={j: fmt_weight(w[j]) for j in strongest}, hidden=len(hidden),
        hidden_weight=float(sum(w[j] for j in hidden)), rest_weight=float(1.0 - sum(w[j] for j in tops)),
        z=shown(ht.z[i], MATRIX), w_o=shown_matrix(np.asarray(ht.W_O).T),
        delta=shown(np.asarray(ht.W_O).T @ ht.z[i], MATRIX), embedding=shown(resid[i], SUM),
        updated=shown(updated[i], SUM), directions=tuple(directions), band_slots=tuple(band_slots), bands=bands,
        residual=resid, updated_all=updated, honesty=read_head(ht, i),
        source=source, source_input=X[source], w_v=shown_matrix(np.asarray(ht.W_V).T),
        value_input=shown(X[source], MATRIX), value=shown(ht.v[source], MATRIX),
        has_bias=bool(np.abs(ht.b_V).max() > 0),
        rounding_off=rounding_off((k, (resid[i][k], ht.delta_e[i][k]), updated[i][k])
                                  for k in window_indices(resid.shape[1], *SUM) if k is not None),
        band_rounding={j: rounding_off((k, (resid[j][k], ht.delta_e[j][k]), updated[j][k])
                                       for k in window_indices(resid.shape[1], *BAND) if k is not None)
                       for j in band_slots if j is not None},
        normalized=tr.model.norm != "none", n_heads=int(tr.model.n_heads))
