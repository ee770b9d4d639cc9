"""What every head does, measured: each head's score on standard probes, and the story roles
scenes ask for, picked by measurement (no torch here: the probes read Traces, with numpy).

A real model names none of its heads. To let a scene default to a head whose behaviour fits its
story, every head is measured on the same inputs, seeded and deterministic:

Standard probes, on `N_SEQUENCES` random sequences of `LENGTH` distinct common words, each
repeated once (2 × LENGTH tokens; a word's second copy sits LENGTH tokens after its first):

- `previous_token`: the weight a token puts on the token just before it;
- `first_token`: the weight a token puts on the first token of the sequence (every query but the
  first). Real models park much attention there, an "attention sink";
- `induction`: the weight a token of the second copy puts on the token that FOLLOWED its first
  occurrence (what an induction head does: "last time t came, u came next");
- `same_word`: the weight a token of the second copy puts on its own first occurrence.

`previous_token` and `same_word` leave out the one query whose target is the trace's first token,
so that a head resting on the first token does not score there.

Each score is a mean of attention weights, so it lies in [0, 1].

Story probes measure what the toy's named heads were trained for, on short annotated English
phrases (`STORY_PROBES`): the weight a word's query (its last token) puts on its cue words (all of
their tokens). Cues are never the word just before the query nor the phrase's first word, so a
previous-token head or an attention sink does not pass for one of them; what scores is looking
back at earlier content words:

- `adjective_noun`: a noun's weight on an adjective two or more words before it;
- `sense_from_context`: an ambiguous word's (mole, tower, harry) weight on the earlier word that
  settles its sense;
- `verb_object`: a noun's weight on the verb that acts on it.

A head's `role` is the probe, standard or story, it scores highest on, when that score is at least
`ROLE_MIN`; "" when no probe explains it. `measured_roles(model)` maps every role to the head that
scores highest on it. Results are cached in memory and on disk (the user's cache folder), keyed by the identity of
the weights and the probe version, so that renders after the first do not measure again.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import UserError
from .places import cache_dir
from .trace import RoleGap, Trace

PROBE_VERSION = 4  # bump whenever the probes change (the disk cache is keyed by it)
STANDARD = ("previous_token", "first_token", "induction", "same_word")
STORY = ("adjective_noun", "sense_from_context", "verb_object")
ROLES = STANDARD + STORY
ROLE_MIN = 0.3  # a head's role is its best probe when it scores at least this
SEED = 0
N_SEQUENCES = 4
LENGTH = 12
DIGITS = 6  # scores are kept to this many decimals

# common English words that the toy knows and byte-level BPE vocabularies hold as single tokens
# (with their leading space); the random sequences are drawn from those the model has
PROBE_WORDS = (
    "fox", "cat", "dog", "wolf", "bear", "rabbit", "bird", "owl", "mouse", "horse", "fish", "sheep",
    "deer", "frog", "snake", "lion", "man", "woman", "child", "boy", "girl", "friend", "king", "queen",
    "prince", "knight", "doctor", "nurse", "cook", "farmer", "teacher", "house", "castle", "palace",
    "bridge", "city", "kitchen", "forest", "tree", "river", "mountain", "garden", "grass", "flower",
    "sea", "sky", "moon", "sun", "car", "train", "bus", "ship", "boat", "plane", "apple", "bread",
    "cake", "cheese", "milk", "knife", "sword", "key", "book", "letter", "box", "ball", "door",
    "window", "ring", "night", "morning", "story", "water", "gold", "iron", "salt", "big", "large",
    "small", "little", "old", "young", "new", "fast", "slow", "good", "bad", "happy", "red", "blue",
    "green", "white", "black", "dark", "soft", "wild", "saw", "ran", "took", "gave", "made", "said",
    "told", "found", "heard", "ate",
)


@dataclass(frozen=True)
class StoryProbe:
    text: str  # plain words separated by spaces (no punctuation)
    query: str  # the word whose query is read (its last token, where a causal model gathers)
    cues: tuple[str, ...]  # the earlier words it should look at (all of their tokens count)


STORY_PROBES: dict[str, tuple[StoryProbe, ...]] = {
    "adjective_noun": (
        StoryProbe("a fluffy blue creature roamed the verdant forest", "creature", ("fluffy",)),
        StoryProbe("the tiny red fox saw a huge green tower", "fox", ("tiny",)),
        StoryProbe("a big friendly dog", "dog", ("big",)),
        StoryProbe("the old wise owl", "owl", ("old",)),
        StoryProbe("a small white rabbit", "rabbit", ("small",)),
        StoryProbe("the brave young knight", "knight", ("brave",)),
        StoryProbe("a dark and ancient castle", "castle", ("dark",)),
        StoryProbe("the happy little girl", "girl", ("happy",)),
    ),
    "sense_from_context": (
        StoryProbe("take a biopsy of the mole", "mole", ("biopsy",)),
        StoryProbe("a shrew and a mole", "mole", ("shrew",)),
        StoryProbe("the chemist measured one mole", "mole", ("chemist",)),
        StoryProbe("the city of paris has a tower", "tower", ("paris",)),
        StoryProbe("the wizard met harry", "harry", ("wizard",)),
        StoryProbe("the queen and harry", "harry", ("queen",)),
    ),
    "verb_object": (
        StoryProbe("they crashed the car", "car", ("crashed",)),
        StoryProbe("the fox saw a huge green tower", "tower", ("saw",)),
        StoryProbe("the knight killed the dragon", "dragon", ("killed",)),
        StoryProbe("the thief stole the gold", "gold", ("stole",)),
        StoryProbe("the wizard cast a spell", "spell", ("cast",)),
        StoryProbe("the dog chased the cat", "cat", ("chased",)),
        StoryProbe("the cook ate the cake", "cake", ("ate",)),
    ),
}


@dataclass(frozen=True)
class HeadScores:
    """One head, measured."""

    layer: int
    head: int
    scores: dict  # standard probe -> mean weight in [0, 1]
    story: dict  # story probe -> mean weight in [0, 1]
    role: str  # the probe (standard or story) it does best ("" when none reaches ROLE_MIN)

    def to_dict(self) -> dict:
        """The shape `render.py heads --json` writes (scores: the four standard probes; story_scores
        and a role that may be a story role are additions)."""
        return {"layer": self.layer, "head": self.head,
                "scores": {k: float(self.scores[k]) for k in STANDARD},
                "role": self.role or None,
                "story_scores": {k: (float(self.story[k]) if k in self.story else None) for k in STORY}}

    @classmethod
    def from_dict(cls, d: dict) -> "HeadScores":
        story = {k: v for k, v in dict(d["story_scores"]).items() if v is not None}  # None: not measurable
        return cls(int(d["layer"]), int(d["head"]), dict(d["scores"]), story, d["role"] or "")


# --- the probes, on patterns --------------------------------------------------------------------

def previous_token_score(pattern: np.ndarray, start: int = 0) -> float:
    """Mean weight on the token just before, over queries after `start` (the sequence's first token)
    whose previous token is not the trace's first token (weight there may be a resting place)."""
    p = np.asarray(pattern, dtype=float)
    rows = np.arange(max(start + 1, 2), p.shape[0])
    return float(p[rows, rows - 1].mean()) if len(rows) else 0.0


def first_token_score(pattern: np.ndarray, start: int = 0) -> float:
    """Mean weight on the trace's first token (position 0), over queries after `start`."""
    p = np.asarray(pattern, dtype=float)
    rows = np.arange(start + 1, p.shape[0])
    return float(p[rows, 0].mean()) if len(rows) else 0.0


def induction_score(pattern: np.ndarray, length: int, start: int = 0) -> float:
    """Mean weight a second-copy token puts on the token after its first occurrence."""
    p = np.asarray(pattern, dtype=float)
    rows = np.arange(start + length, start + 2 * length)
    return float(p[rows, rows - length + 1].mean())


def same_word_score(pattern: np.ndarray, length: int, start: int = 0) -> float:
    """Mean weight a second-copy token puts on its own first occurrence (not counting the token
    whose first occurrence is the trace's first token: weight there may be a resting place)."""
    p = np.asarray(pattern, dtype=float)
    rows = np.arange(max(start + length, length + 1), start + 2 * length)
    return float(p[rows, rows - length].mean())


def standard_scores(pattern: np.ndarray, length: int, start: int = 0) -> dict:
    return {"previous_token": previous_token_score(pattern, start), "first_token": first_token_score(pattern, start),
            "induction": induction_score(pattern, length, start), "same_word": same_word_score(pattern, length, start)}


def word_tokens(trace: Trace, special=()) -> list[list[int]]:
    """The token positions of each word of `trace.text` (split on spaces), in order.

    Uses the trace's word↔token mapping when it has one (`word_of_token`: the word index of each
    token, -1 for a token of no word); otherwise a token is a word. A word made only of `special`
    token ids (a BOS marker such as LLaMA's <s>, which the tokenizer puts before the text) is not one
    of the text's words and is left out."""
    mapping = getattr(trace, "word_of_token", None)
    ids = list(getattr(trace, "token_ids", ()) or ())
    special = set(special)
    if mapping is None or len(mapping) == 0:
        groups = {i: [i] for i in range(trace.n_tokens)}
    else:
        groups = {}
        for t, w in enumerate(mapping):
            if w is not None and int(w) >= 0:
                groups.setdefault(int(w), []).append(t)
    if special and len(ids) == trace.n_tokens:
        groups = {w: ts for w, ts in groups.items() if not all(int(ids[t]) in special for t in ts)}
    return [groups[w] for w in sorted(groups)]


def special_ids(model) -> set[int]:
    """The ids of the model tokenizer's special tokens (BOS, EOS, padding); empty for the toy."""
    return {int(i) for i in (getattr(model.tokenizer, "special", ()) or ())}


def story_weight(trace: Trace, probe: StoryProbe, layer: int, head: int, special=()) -> float:
    """The weight the probe's query word (its last token) puts on all tokens of its cue words."""
    words = probe.text.split()
    groups = word_tokens(trace, special)
    if len(groups) != len(words):
        raise ValueError(f"probe {probe.text!r}: {len(words)} words but the trace groups its tokens into "
                         f"{len(groups)} words ({' '.join(trace.tokens)})")
    q = len(words) - 1 - words[::-1].index(probe.query)
    cue_tokens = [t for w, word in enumerate(words[:q]) if word in probe.cues for t in groups[w]]
    p = trace.head(layer, head).pattern
    return float(p[groups[q][-1], cue_tokens].sum())


# --- measuring a model --------------------------------------------------------------------------

def _encode_ids(model, text: str) -> list[int]:
    enc = model.tokenizer.encode(text)
    if isinstance(enc, tuple):  # the toy's WordTokenizer: (tokens, ids)
        return [int(i) for i in enc[1]]
    ids = getattr(enc, "ids", enc)  # a `tokenizers` Encoding, or a plain list
    return [int(i) for i in ids]


def probe_ids(model) -> list[int]:
    """Token ids of the PROBE_WORDS the model reads as one token each (with a leading space, as in
    running text), in PROBE_WORDS order, without repeats."""
    out: list[int] = []
    for w in PROBE_WORDS:
        try:
            ids = _encode_ids(model, " " + w)
        except Exception:  # a word the model cannot read at all is simply not used
            continue
        if len(ids) == 1 and ids[0] not in out:
            out.append(ids[0])
    return out


def random_sequences(pool: list[int], n: int = N_SEQUENCES, length: int = LENGTH, seed: int = SEED) -> list[list[int]]:
    """`n` seeded sequences of `length` distinct ids from `pool`, each repeated once."""
    if len(pool) < length:
        raise ValueError(f"only {len(pool)} probe words are single tokens for this model; need {length}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        ids = [int(pool[k]) for k in rng.choice(len(pool), size=length, replace=False)]
        out.append(ids + ids)
    return out


def fallback_pool(model, length: int) -> list[int]:
    """Token ids for the structural probes when too few probe words are single tokens (a small or
    foreign vocabulary): ids spread evenly over the vocabulary, special tokens left out. Previous
    token, first token, induction and same word need distinct tokens, not English words."""
    special = special_ids(model)
    ids = [i for i in range(model.info.vocab_size) if i not in special]
    if len(ids) <= 2 * length:
        return ids
    step = len(ids) / (2 * length)
    return sorted({ids[int(k * step)] for k in range(2 * length)})


def measure(model, *, seed: int = SEED, n_sequences: int = N_SEQUENCES, length: int = LENGTH) -> list[HeadScores]:
    """Every head of `model`, measured on the standard and story probes (see the module doc). A model
    whose vocabulary lacks the probe words is measured on what it has: the structural probes on
    other tokens; a story role none of whose phrases it can read is left unmeasured (no score, no
    head for it)."""
    info = model.info
    L, H = info.n_layers, info.n_heads
    std = np.zeros((L, H, len(STANDARD)))
    pool = probe_ids(model)
    if len(pool) < length:
        pool = fallback_pool(model, length)
    length = min(length, len(pool))
    seqs = random_sequences(pool, n_sequences, length, seed) if length >= 2 else []
    for ids in seqs:
        tr = model.trace_ids(ids)
        start = tr.n_tokens - len(ids)  # tokens the model put before the sequence (a BOS marker)
        for li in range(L):
            for h in range(H):
                s = standard_scores(tr.head(li, h).pattern, length, start)
                std[li, h] += [s[k] for k in STANDARD]
    std /= max(1, len(seqs))
    story = np.zeros((L, H, len(STORY)))
    measured = [False] * len(STORY)
    special = special_ids(model)
    for r, role in enumerate(STORY):
        weights = []
        for probe in STORY_PROBES[role]:
            try:
                tr = model.trace(probe.text)
                weights.append([[story_weight(tr, probe, li, h, special) for h in range(H)] for li in range(L)])
            except (ValueError, KeyError, UserError):  # a word it cannot read, or split otherwise: not this phrase
                continue
        if weights:
            story[:, :, r] = np.mean(np.asarray(weights), axis=0)
            measured[r] = True
    out = []
    for li in range(L):
        for h in range(H):
            # rounded, so that a measurement read back from the disk cache is the same to the bit
            scores = {k: round(float(std[li, h, n]), DIGITS) for n, k in enumerate(STANDARD)}
            stories = {k: round(float(story[li, h, n]), DIGITS) for n, k in enumerate(STORY) if measured[n]}
            every = {**scores, **stories}
            best = max((k for k in ROLES if k in every), key=lambda k: every[k])  # the first listed on a tie
            out.append(HeadScores(li, h, scores, stories, best if every[best] >= ROLE_MIN else ""))
    return out


def role_score(hs: HeadScores, role: str) -> float:
    return hs.scores[role] if role in STANDARD else hs.story.get(role, float("-inf"))


def roles_from(heads: list[HeadScores]) -> dict[str, tuple[int, int]]:
    """Role -> the head scoring highest on it (ties: the earliest head). A story role always gets
    a head (a lesson needs a default; its scenes say what the head really does); a standard role
    only when its best head reaches ROLE_MIN."""
    out = {}
    for role in ROLES:
        best = max(heads, key=lambda hs: (role_score(hs, role), -hs.layer, -hs.head))
        if (role in STORY and role in best.story) or role_score(best, role) >= ROLE_MIN:
            out[role] = (best.layer, best.head)
    return out


def unreadable_words(model, role: str) -> tuple[str, ...]:
    """The words of `role`'s probe phrases that the model's vocabulary cannot read (a word-level
    vocabulary without them), in probe order, each once. A byte-level tokenizer reads every word."""
    out: list[str] = []
    for probe in STORY_PROBES[role]:
        for word in probe.text.split():
            if word in out:
                continue
            try:
                readable = bool(_encode_ids(model, word))
            except Exception:  # the tokenizer refuses it (UnknownWordError): the vocabulary lacks it
                readable = False
            if not readable:
                out.append(word)
    return tuple(out)


def role_gaps(model, heads: list[HeadScores]) -> dict[str, RoleGap]:
    """Role id -> why `roles_from(heads)` has no head for it: a story role whose phrases the model
    could not read (the words its vocabulary lacks; "unmatched" when it read them but their tokens did
    not group back into the phrase's words), a standard role no head reached ROLE_MIN on (the best
    score and head). What a lesson shown on another head says (model/trace.py HeadChoice)."""
    have = roles_from(heads)
    out: dict[str, RoleGap] = {}
    for role in ROLES:
        if role in have or not heads:
            continue
        if role in STORY:
            words = unreadable_words(model, role)
            out[role] = RoleGap("missing_words", words=words) if words else RoleGap("unmatched")
        else:
            best = max(heads, key=lambda hs: (role_score(hs, role), -hs.layer, -hs.head))
            out[role] = RoleGap("below_threshold", best=round(float(role_score(best, role)), DIGITS),
                                best_head=(best.layer, best.head), threshold=ROLE_MIN)
    return out


# --- caching ------------------------------------------------------------------------------------

def weights_identity(model) -> str:
    """A short hash that changes when the model's weights or sizes change (or the probes do): the
    model's own `weights_id` when it has one, else every parameter's name and shape and a strided
    sample of its values (cheap even for 135M parameters)."""
    h = hashlib.sha256()
    # the probes themselves: a changed phrase or sequence is a new measurement
    h.update(repr((PROBE_VERSION, SEED, N_SEQUENCES, LENGTH, ROLE_MIN, DIGITS, PROBE_WORDS, STORY_PROBES)).encode())
    own = getattr(model, "weights_id", None)
    if own:
        h.update(str(own).encode())
    else:
        info = model.info
        h.update(repr((info.name, info.d_model, info.n_heads, info.d_head, info.n_layers, info.vocab_size)).encode())
        for name, t in model.state_dict().items():
            flat = t.detach().reshape(-1)
            step = max(1, flat.numel() // 64)
            sample = flat[::step][:64].float().cpu().numpy()
            h.update(name.encode())
            h.update(repr(tuple(t.shape)).encode())
            h.update(np.round(sample.astype(np.float64), 6).tobytes())
    return h.hexdigest()[:20]


_MEMORY: dict[str, list[HeadScores]] = {}


def measured_heads(model, *, use_disk: bool = True) -> list[HeadScores]:
    """`measure(model)`, cached in memory and (unless use_disk=False) on disk."""
    key = weights_identity(model)
    if key in _MEMORY:
        return _MEMORY[key]
    path = cache_dir("probes") / f"{key}.json"
    heads = None
    if use_disk and path.is_file():
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            heads = [HeadScores.from_dict(d) for d in data["heads"]]
        except (ValueError, KeyError, TypeError, OSError):
            heads = None  # a damaged cache file is measured again and replaced
    if heads is None:
        heads = measure(model)
        if use_disk:
            _write_atomic(path, json.dumps({"model": model.info.name, "probe_version": PROBE_VERSION,
                                            "heads": [hs.to_dict() for hs in heads]}, indent=1))
    _MEMORY[key] = heads
    return heads


def measured_roles(model, *, use_disk: bool = True) -> dict[str, tuple[int, int]]:
    """Role id -> (layer, head): the head measured to fit each role best (see the module doc)."""
    return roles_from(measured_heads(model, use_disk=use_disk))


def _write_atomic(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only cache folder only costs a measurement next time
