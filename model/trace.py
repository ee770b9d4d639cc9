"""The trace: every number one forward pass produced, as plain numpy arrays.

This module is the single contract between `model/` (torch) and `scenes/` (manim). It imports
neither: scenes read a Trace without pulling in torch, and the model fills one in.

Orientation follows torch and the papers: attention arrays are `[query, key]`. The video draws
keys as rows and queries as columns, which is the transpose; scenes transpose explicitly.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

# How tokens are shown: a token's leading space (GPT-2's "Ġ", SentencePiece's "▁") becomes this
# visible mark, so "␣tower" is the word "tower" after a space and "tower" continues a word.
SPACE_MARK = "␣"


DEFAULT_ROLE = "adjective_noun"  # the role a head is picked by when a lesson names none
# structural roles any vocabulary can be measured for (model/probes.py), the most telling first: where a
# model has no head for the role asked, the head shown is the one measured for the first of these it has
FALLBACK_ROLES = ("previous_token", "induction", "same_word", "first_token")


@dataclass(frozen=True)
class RoleGap:
    """Why a model has no head for a role, as data a lesson words its note from (model/probes.py
    `role_gaps` measures it; scenes/plans/head_choice.py says it).

    `reason`: "missing_words" (the vocabulary cannot read the role's probe words: `words`, in probe
    order), "below_threshold" (no head scored `threshold` or more on the role's probe: the best was
    `best`, on `best_head`), "unmatched" (the probe phrases were read, but their tokens could not be
    grouped back into their words), "unnamed" (a model that names its own heads, like the toy, names
    none for it) or "unmeasured" (the model's heads were not measured)."""

    reason: str
    words: tuple[str, ...] = ()
    best: float = 0.0
    best_head: tuple[int, int] | None = None
    threshold: float = 0.0


@dataclass(frozen=True)
class HeadChoice:
    """The head a lesson (or the explorer) starts on, and why that one: the head measured or named
    for the role `asked`, else (`fell_back`) the head of the first role of DEFAULT_ROLE and
    FALLBACK_ROLES the model has, `gap` saying why `asked` has none; layer 0 head 0 with `role` ""
    when the model has no head for any of them."""

    layer: int
    head: int
    asked: str  # the role asked for ("adjective_noun")
    role: str  # the role the head was measured or named for ("" when none)
    gap: RoleGap | None = None  # why `asked` has no head (None when role == asked)

    @property
    def ref(self) -> tuple[int, int]:
        return (self.layer, self.head)

    @property
    def fell_back(self) -> bool:
        return self.role != self.asked


def choose_head(roles: Mapping, role: str | None = None, gaps: Mapping | None = None,
                real: bool = True) -> HeadChoice:
    """The HeadChoice for `role` (default DEFAULT_ROLE) among `roles` (role id -> (layer, head)); `gaps`
    (role id -> RoleGap) says why a role has no head; without one, a model that names its heads
    (`real` False) names none for it, and a real one was not measured for it."""
    asked = role or DEFAULT_ROLE
    gap = (gaps or {}).get(asked) or RoleGap("unmeasured" if real else "unnamed")
    for r in dict.fromkeys((asked, DEFAULT_ROLE, *FALLBACK_ROLES)):
        hit = roles.get(r)
        if hit:
            return HeadChoice(int(hit[0]), int(hit[1]), asked, r, None if r == asked else gap)
    return HeadChoice(0, 0, asked, "", gap)


@dataclass(frozen=True)
class ModelInfo:
    """What a scene or a JSON reader needs to know about the model that made a trace."""

    name: str
    d_model: int
    n_heads: int
    d_head: int
    n_layers: int
    n_ctx: int
    causal: bool
    d_mlp: int = 0
    layernorm: bool = False
    vocab_size: int = 0
    roles: dict = field(default_factory=dict)  # role id -> (layer, head), e.g. "adjective_noun" -> (0, 0)
    role_gaps: dict = field(default_factory=dict)  # role id -> RoleGap: why a role has no head (measured models)
    examples: dict = field(default_factory=dict)  # example id -> sentence the model tells its stories with
    # the architecture (additive; the toy's values are the defaults)
    family: str = "toy"  # toy | gpt2 | llama
    norm: str = "none"  # layernorm | rmsnorm | none
    positions: str = "learned"  # learned (W_pos added to the embedding) | rotary (q and k rotated by position)
    rope_theta: float = 0.0  # rotary base θ (0 when positions are learned)
    n_kv_heads: int = 0  # key/value heads; < n_heads with grouped-query attention (0 = n_heads)
    mlp: str = ""  # "" (no MLP) | gelu | gelu_tanh | swiglu
    tied_embeddings: bool = False
    description: str = ""  # one line: what the model is and where its weights came from

    @property
    def rotary(self) -> bool:
        return self.positions == "rotary"

    @property
    def real(self) -> bool:
        """A real language model (its heads have no names; its directions are unembedding rows)."""
        return self.family != "toy"

    def head_for_role(self, role: str) -> tuple[int, int] | None:
        """(layer, head) of the head that plays `role`, or None when this model names no such head."""
        hit = self.roles.get(role)
        return (int(hit[0]), int(hit[1])) if hit is not None else None

    def head_choice(self, role: str | None = None) -> HeadChoice:
        """The head a lesson about `role` starts on, and why (see HeadChoice)."""
        return choose_head(self.roles, role, self.role_gaps, self.real)


@dataclass(frozen=True)
class HeadTrace:
    """One head of one layer. Shapes: n = number of tokens."""

    layer: int
    head: int
    name: str  # the head's role in English words if known ("adjectives → nouns"), else "L0H3"
    q: np.ndarray  # [n, d_head]
    k: np.ndarray  # [n, d_head]
    v: np.ndarray  # [n, d_head]  value-down: the attention input times W_V[h]
    scores: np.ndarray  # [n_query, n_key]  q·k / sqrt(d_head), before the mask
    mask: np.ndarray  # [n_query, n_key]  bool, True = blocked
    pattern: np.ndarray  # [n_query, n_key]  softmax of the masked scores; rows sum to 1
    z: np.ndarray  # [n, d_head]  pattern @ v
    delta_e: np.ndarray  # [n, d_model]  z @ W_O[h]: this head's proposed change to each embedding
    W_Q: np.ndarray  # [d_model, d_head]
    W_K: np.ndarray  # [d_model, d_head]
    W_V: np.ndarray  # [d_model, d_head]  the video's "value-down"
    W_O: np.ndarray  # [d_head, d_model]  the video's "value-up"
    b_Q: np.ndarray  # [d_head] (zeros when the model has no biases)
    b_K: np.ndarray  # [d_head]
    b_V: np.ndarray  # [d_head]
    role: str = ""  # language-neutral role id ("adjective_noun"); "" when the model names none
    # Rotary models: q and k above are AFTER the rotation by position (what the scores use); these are
    # before it (attention input @ W_Q + b_Q). Without rotary they are the very same arrays as q and k.
    q_unrotated: np.ndarray | None = None  # [n, d_head]
    k_unrotated: np.ndarray | None = None  # [n, d_head]
    # the key/value head this query head reads (grouped-query attention shares one among several query
    # heads; W_K, W_V, b_K, b_V, k and v are that head's). Without it: the head itself.
    kv_head: int | None = None

    # W_Q ... b_V are read-only views of one numpy copy of the model's weights (shared by every trace
    # of the model), not copies: a trace stays small even for a real model.

    def __post_init__(self):
        if self.q_unrotated is None:
            object.__setattr__(self, "q_unrotated", self.q)
        if self.k_unrotated is None:
            object.__setattr__(self, "k_unrotated", self.k)
        if self.kv_head is None:
            object.__setattr__(self, "kv_head", self.head)

    @property
    def masked_scores(self) -> np.ndarray:
        """Scores with blocked entries set to -inf: what the softmax actually sees."""
        return np.where(self.mask, -np.inf, self.scores)


@dataclass(frozen=True)
class LayerTrace:
    """One block: attention (all heads summed) then the optional MLP."""

    index: int
    heads: tuple[HeadTrace, ...]
    resid_in: np.ndarray  # [n, d_model] the residual stream entering the block
    attn_in: np.ndarray  # [n, d_model] what the heads read (resid_in, after LayerNorm if any)
    delta_e: np.ndarray  # [n, d_model] sum of the heads' delta_e plus the output bias
    resid_mid: np.ndarray  # [n, d_model] resid_in + delta_e
    mlp_out: np.ndarray  # [n, d_model] zeros when the model has no MLP
    residual_out: np.ndarray  # [n, d_model] resid_mid + mlp_out: the block's output


@dataclass(frozen=True)
class LogitLens:
    """The logit lens at the last position: after each layer, the final norm then the unembedding
    applied to that layer's residual stream (`layers[l].residual_out[-1]`), as probabilities. The
    last layer's row is the model's own prediction (`Trace.logits[-1]`)."""

    ids: np.ndarray  # [n_layers, k] the k most likely next tokens after each layer, most likely first
    probs: np.ndarray  # [n_layers, k] their probabilities
    answer_probs: np.ndarray  # [n_layers] the probability, after each layer, of the model's final top-1 token

    def first_top(self, token_id: int) -> int | None:
        """The first layer after which `token_id` is the most likely next token, or None."""
        hits = [l for l in range(len(self.ids)) if int(self.ids[l, 0]) == int(token_id)]
        return hits[0] if hits else None


@dataclass(frozen=True)
class Trace:
    """A whole forward pass on one sentence."""

    text: str
    model: ModelInfo
    tokens: tuple[str, ...]
    token_ids: tuple[int, ...]
    token_embeddings: np.ndarray  # [n, d_model] the lookup alone (identical for repeated words)
    position_embeddings: np.ndarray  # [n, d_model]
    embeddings: np.ndarray  # [n, d_model] token + position: the input to layer 0
    layers: tuple[LayerTrace, ...]
    final: np.ndarray  # [n, d_model] the last residual stream (after the final LayerNorm if any)
    logits: np.ndarray  # [n, vocab] next-token logits at every position
    vocab: tuple[str, ...] = ()  # every token id as shown (shared by the model's traces, not copied)
    # name -> unit vector [d_model]. The toy: its named semantic features. A real model: any word it
    # spells as one token (a WordDirections mapping; its unembedding row, normalized).
    directions: Mapping[str, np.ndarray] = field(default_factory=dict)
    # Words: tokens are pieces of words. `words` are the sentence's words (and punctuation marks) as
    # written; `word_of_token[i]` is the index in `words` of the word token i belongs to. For the toy
    # every token is a word. `token_texts` are the tokens as plain text (" Paris"; tokens show "␣Paris").
    words: tuple[str, ...] = ()
    word_of_token: tuple[int, ...] = ()
    token_texts: tuple[str, ...] = ()
    logit_lens: LogitLens | None = None  # the guess after each layer at the last position (None: not computed)

    def __post_init__(self):
        if not self.words and not self.word_of_token:
            object.__setattr__(self, "words", tuple(self.tokens))
            object.__setattr__(self, "word_of_token", tuple(range(len(self.tokens))))
        if not self.token_texts:
            object.__setattr__(self, "token_texts", tuple(self.tokens))

    @property
    def n_tokens(self) -> int:
        return len(self.tokens)

    def tokens_of_word(self, w: int) -> list[int]:
        """The token positions of word `w` (in order)."""
        return [i for i, wi in enumerate(self.word_of_token) if wi == w]

    def next_token(self, top: int = 10, position: int = -1) -> list[tuple[int, str, float]]:
        """The `top` most likely next tokens after `position`: (id, token as shown, probability)."""
        logits = np.asarray(self.logits[position], dtype=np.float64)
        p = np.exp(logits - logits.max())
        p /= p.sum()
        order = np.argsort(-p, kind="stable")[:top]
        return [(int(k), self.vocab[k] if k < len(self.vocab) else str(int(k)), float(p[k])) for k in order]

    def head(self, layer: int, head: int) -> HeadTrace:
        return self.layers[layer].heads[head]

    def index_of(self, word: str, occurrence: int = -1) -> int:
        """Position of `word` (last occurrence by default); ValueError if absent.

        A word of several tokens ("verdant" = ␣ver|d|ant) gives its LAST token, where a causal model
        has gathered the whole word. Words match case-insensitively; a token as shown matches too."""
        key = word.strip().lower()
        hits = [i for i, t in enumerate(self.tokens) if t == key]
        if not hits and self.words:
            last = {}
            for i, w in enumerate(self.word_of_token):
                if 0 <= w < len(self.words) and self.words[w].lower() == key:
                    last[w] = i
            hits = sorted(last.values())
        if not hits:
            plain = key.lstrip(SPACE_MARK)
            hits = [i for i, t in enumerate(self.tokens) if t.lower().lstrip(SPACE_MARK) == plain and plain]
        if not hits:
            shown = " ".join(self.words) if self.words and self.words != self.tokens else " ".join(self.tokens)
            raise ValueError(f"{word!r} is not in the sentence {self.text!r} (words: {shown})")
        return hits[occurrence]

    def direction(self, name: str) -> np.ndarray:
        try:
            return self.directions[name]
        except KeyError as e:
            if isinstance(self.directions, WordDirections):
                raise KeyError(str(e.args[0]) if e.args else name) from None
            known = ", ".join(sorted(self.directions)) or "(this model has no named directions)"
            raise KeyError(f"unknown direction {name!r}; known: {known}") from None

    def project(self, vectors: np.ndarray, names: list[str]) -> np.ndarray:
        """Coordinates of `vectors` ([..., d_model]) along the named unit directions ([..., len(names)])."""
        basis = np.stack([self.direction(n) for n in names], axis=-1)
        return np.asarray(vectors) @ basis

    def updated(self, layer: int = 0, head: int | None = None) -> np.ndarray:
        """E' = E + ΔE after `layer`'s attention: one head's ΔE, or all heads' when head is None."""
        lt = self.layers[layer]
        delta = lt.delta_e if head is None else lt.heads[head].delta_e
        return lt.resid_in + delta

    def to_dict(self, layer: int | None = None, head: int | None = None, top: int = 10) -> dict:
        """The public JSON shape of `render.py inspect --json` (documented in the README).

        `layer` / `head` restrict the layers and heads written (each keeps its `index`)."""
        m = self.model

        def arr(a):
            return np.asarray(a).tolist()

        def head_dict(h: HeadTrace) -> dict:
            d = {
                "index": h.head,
                "name": h.name,
                "kv_head": h.kv_head,
                "q": arr(h.q),
                "k": arr(h.k),
                "v": arr(h.v),
                "scores": arr(h.scores),
                "mask": arr(h.mask),
                "pattern": arr(h.pattern),
                "delta_e": arr(h.delta_e),
            }
            if m.rotary:
                d["q_unrotated"] = arr(h.q_unrotated)
                d["k_unrotated"] = arr(h.k_unrotated)
            return d

        layers = [lt for lt in self.layers if layer is None or lt.index == layer]
        return {
            "model": {
                "name": m.name,
                "d_model": m.d_model,
                "n_heads": m.n_heads,
                "d_head": m.d_head,
                "n_layers": m.n_layers,
                "causal": m.causal,
                "n_ctx": m.n_ctx,
                "family": m.family,
                "n_kv_heads": m.n_kv_heads or m.n_heads,
                "positions": m.positions,
                "norm": m.norm,
                "mlp": m.mlp,
                "vocab_size": m.vocab_size,
            },
            "text": self.text,
            "tokens": list(self.tokens),
            "token_ids": list(self.token_ids),
            "token_texts": list(self.token_texts),
            "words": list(self.words),
            "word_of_token": list(self.word_of_token),
            "embeddings": arr(self.embeddings),
            "directions": {k: arr(v) for k, v in self.directions.items()},
            "next_token": [{"token": t, "id": k, "p": p} for k, t, p in self.next_token(top)],
            "layers": [
                {
                    "index": lt.index,
                    "heads": [head_dict(h) for h in lt.heads if head is None or h.head == head],
                    "delta_e": arr(lt.delta_e),
                    "residual_out": arr(lt.residual_out),
                }
                for lt in layers
            ],
        }


class WordDirections(Mapping):
    """The named directions of a real model: any word its vocabulary spells as one token.

    A word's direction is its row of the unembedding (the vector whose dot product with the final
    residual stream is that token's logit), normalized to length 1. Which spelling: the name as
    typed, and capitalized when typed in lower case, each preferably with a leading space (a whole
    word in running text; without one only if no such token exists); of those that are single tokens,
    the one the tokenizer learned first (the lowest id: the most frequent), so "paris" means " Paris"
    and "rome" " Rome". A leading "␣" asks for exactly that spelling. `token_for(name)` says which
    token that was.

    Iterating lists only `featured` names (the vocabulary has tens of thousands); `in` and `[]`
    accept any single-token word. Built once per model and shared by its traces: nothing is copied.
    """

    def __init__(self, unembed_rows: np.ndarray, ids_by_text: Mapping[str, int], shown: tuple[str, ...] = (),
                 featured: tuple[str, ...] = ()):
        self._rows = unembed_rows  # [vocab, d_model], a view of the model's weights
        self._ids = ids_by_text  # token as plain text (" Paris") -> id
        self._shown = shown
        self._featured = tuple(featured)
        self._cache: dict[str, np.ndarray] = {}

    def token_for(self, name: str) -> tuple[int, str] | None:
        """(token id, token as plain text) of the spelling `name` stands for, or None."""
        raw = name.strip()
        if not raw:
            return None
        if raw.startswith(SPACE_MARK):
            spellings = [" " + raw[len(SPACE_MARK):]]
        elif raw == raw.lower():
            cap = raw[:1].upper() + raw[1:]
            spellings = [" " + raw, raw, " " + cap, cap]
        else:
            spellings = [" " + raw, raw]
        found = [(self._ids[s], s) for s in spellings if s in self._ids]
        words = [f for f in found if f[1].startswith(" ")]  # a whole word in running text first
        return min(words or found) if found else None

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self._cache:
            return self._cache[name]
        hit = self.token_for(name) if isinstance(name, str) else None
        if hit is None:
            raise KeyError(f"unknown direction {name!r}: a real model's directions are words it spells as one "
                           f"token (its unembedding row); {name!r} is not one token of its vocabulary")
        row = np.asarray(self._rows[hit[0]], dtype=np.float32)
        vec = row / max(float(np.linalg.norm(row)), 1e-12)
        vec.flags.writeable = False
        self._cache[name] = vec
        return vec

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and self.token_for(name) is not None

    def __iter__(self):
        return iter(self._featured)

    def __len__(self) -> int:
        return len(self._featured)

    def describe(self, name: str) -> str:
        """What the axis `name` is, in words: 'unembedding of "␣Paris"'."""
        hit = self.token_for(name)
        if hit is None:
            return name
        shown = self._shown[hit[0]] if hit[0] < len(self._shown) else hit[1]
        return f"unembedding of {shown!r}"
