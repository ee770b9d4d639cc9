"""Plans of `mole` and `eiffel_tower`: one word in several phrases, moved by context in a 3-D space.

The space's axes are three named directions of the model; every coordinate is a real projection:
the word's vector E entering the layer, the head's change ΔE, and E′ = E + ΔE. A `ContextVariant`
says what differs between the two lessons (the word, the default axes, a comparison line).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_manim.model.errors import UserError
from attention_manim.model.trace import Trace

from ..setting import HeadRef, Setting
from .honesty import Honesty, read_head
from .space import choose_axes, choose_view, resolve_axes

ATTENTION_MIN = 0.1  # a context word is named in the attention caption from this weight up
ATTENTION_MOST = 3
DELTA_MIN = 0.3  # a ΔE component is named from this size up (and from a quarter of the largest)
STUB = 0.1  # a head whose ΔE stays under this share of the largest |E| on the axes barely moves the word
TAG_MIN = 0.2  # E′ is labelled with the context words it drew at least this much from
AFTER_MAX_CHARS = 28  # longer runs of masked words are abbreviated to three and "…"


@dataclass(frozen=True)
class ContextVariant:
    focus: str  # the word every phrase shares (the focus unless --focus names another)
    axes: tuple[str, str, str]  # the model's named directions shown, when it has them
    compare: bool = False  # a line under the table: this phrase's E′ minus the previous one's
    # a real model's directions are words (their unembedding rows): the axes are the first of these
    # triples whose words the model spells as one token each
    real_axes: tuple[tuple[str, str, str], ...] = ()
    # the story the lesson's own phrases tell (its example ids, in order): per phrase, (axis, +1 or -1),
    # the way the phrase should move the word (against the previous phrase where `compare`, else against
    # the other phrases). Measured on the model; where it runs the other way, the lesson says so.
    examples: tuple[str, ...] = ()
    story: tuple[tuple[tuple[int, int], ...], ...] = ()


MOLE = ContextVariant("mole", ("animal", "chemistry", "medicine"),
                      real_axes=(("animal", "chemistry", "skin"), ("animal", "science", "body")),
                      examples=("mole_animal", "mole_chemistry", "mole_medicine"),
                      story=(((0, 1),), ((1, 1),), ((2, 1),)))
EIFFEL_TOWER = ContextVariant("tower", ("paris", "small", "large"), compare=True,  # large last: vertical
                              real_axes=(("paris", "small", "large"), ("france", "small", "big")),
                              examples=("tower", "eiffel_tower", "miniature_eiffel_tower"),
                              story=((), ((0, 1),), ((1, 1), (2, -1))))


@dataclass(frozen=True)
class AttentionMention:
    """What the attention caption says: "first" (nothing comes before the word, it attends to
    itself), "self" (it attends to itself), or "others" (the weights on the context words)."""

    kind: str
    self_weight: float
    keys: tuple[tuple[str, float], ...] = ()  # (context word, real weight), strongest first


@dataclass(frozen=True)
class CausalNote:
    """The words after the focus are masked for it; their meaning can only flow forward."""

    later: tuple[int, ...]  # indices of the masked words
    before: tuple[str, ...]  # the words the focus can use
    after: str  # the masked words as the note quotes them


@dataclass(frozen=True)
class Comparison:
    before: tuple[str, ...]  # the previous phrase
    change: np.ndarray  # [3] this phrase's E′ minus the previous one's, on the axes
    terms: tuple[int, ...]  # the axes the caption names (see `delta_terms`)


@dataclass(frozen=True)
class Phrase:
    tokens: tuple[str, ...]
    focus: int  # index of the focus word in this phrase
    weights: np.ndarray  # the head's attention row of the focus word ([n_keys]; later keys masked)
    E: np.ndarray  # the focus word's vector entering the layer [d_model]
    dE: np.ndarray  # this head's ΔE for it
    E2: np.ndarray  # E + ΔE
    coords: np.ndarray  # [3, 3]: rows E, ΔE, E′ projected on the three axes (the table)
    own_E: bool  # E differs from the first phrase's on these axes (an arrow of its own)
    attention: AttentionMention
    delta: tuple[int, ...]  # the axes the ΔE caption names, largest first
    tag: tuple[str, ...]  # the context words E′ is labelled with, in phrase order (() = alone)
    causal: CausalNote | None  # None when no word follows the focus
    compare: Comparison | None
    honesty: Honesty | None = None  # what a real head does with the word (a note when not the story's)


@dataclass(frozen=True)
class ContextPlan:
    trace: Trace  # the first phrase's (the space takes its named directions from it)
    head: HeadRef
    role: str  # the head's role id ("" when the model names none)
    word: str  # the focus word
    axes: tuple[str, ...]  # direction names (the model's; "PC1".. when it has too few)
    named: tuple[bool, ...]
    basis: np.ndarray  # [d_model, 3]
    fit: np.ndarray  # the vectors the space is sized to (E and E′ of every phrase)
    view: tuple[float, float]  # camera angles (phi, theta), radians
    phrases: tuple[Phrase, ...]
    own_direction: bool  # every phrase moved the word furthest along a different axis
    # a real model: each axis is a word's unembedding row; the words as the model spells them ("Paris")
    unembedding: tuple[str, ...] = ()
    # the head's layer receives a different vector for the word in each phrase (earlier layers have
    # already read the phrase): no "one generic arrow, whatever the phrase"
    inputs_differ: bool = False
    # the head's ΔE is under DELTA_MIN on every shown axis in every phrase: its arrows are stubs, and
    # the lesson says the head barely moves the word here
    small_delta: bool = False
    # where the lesson's own phrases move the word against their story: (phrase, axis, the move as
    # drawn: E′ against the previous phrase's, or against the other phrases' mean), rounded as drawn
    against: tuple[tuple[int, int, float], ...] = ()


@dataclass(frozen=True)
class LookupPlan:
    """Before attention: the focus word's lookup column in every phrase."""

    word: str
    phrases: tuple[tuple[str, ...], ...]
    focus: tuple[int, ...]
    columns: np.ndarray  # [n phrases, d_model] the token embeddings of the focus word
    identical: bool
    position_visible: bool  # position moves the word on the chosen axes (else it is invisible there)
    d_model: int
    show: bool  # "identical" needs at least two phrases to compare
    rotary: bool = False  # nothing is added for position (the model rotates queries and keys instead)


def focus_word(setting: Setting, variant: ContextVariant) -> str:
    if setting.focus is not None:
        return setting.focus.lower()  # checked against every phrase already
    for t in setting.traces:
        try:
            t.index_of(variant.focus)  # a word of several tokens counts (its last token)
        except ValueError:
            raise UserError(f"the word {variant.focus!r} is not in the phrase {t.text!r}",
                            "give phrases that share it, or name another word with --focus", key="word_not_in_phrase",
                            word=variant.focus, phrase=t.text) from None
    return variant.focus


def attention_mention(tokens, weights: np.ndarray, focus: int) -> AttentionMention:
    """The context words with the largest real weights (≥ 0.1, at most three), strongest first."""
    order = [int(k) for k in np.argsort(-weights, kind="stable") if weights[k] >= ATTENTION_MIN][:ATTENTION_MOST]
    others = [k for k in order if k != focus]
    w_self = float(weights[focus])
    if not others:
        return AttentionMention("first" if focus == 0 else "self", w_self)
    return AttentionMention("others", w_self, tuple((tokens[k], float(weights[k])) for k in others))


def delta_terms(coords: np.ndarray, min_abs: float = DELTA_MIN, most: int = 3) -> tuple[int, ...]:
    """The components of a change on the shown axes worth naming (at least `min_abs` and at
    least a quarter of the largest), largest first."""
    top = float(np.abs(coords).max()) if len(coords) else 0.0
    order = [int(k) for k in np.argsort(-np.abs(coords), kind="stable")
             if abs(coords[k]) >= max(min_abs, 0.25 * top)]
    return tuple(order[:most])


def context_tag(tokens, weights: np.ndarray, focus: int, min_weight: float = TAG_MIN, *, words=None,
                word_of=None, skip_first: bool = False) -> tuple[str, ...]:
    """The context word E′ drew most from; two, in phrase order, when the runner-up weighs at least
    half as much ("miniature", "eiffel"); () when no context word reaches `min_weight`.

    With `words` and `word_of` (a real model's: token -> word index), a word's pieces count together
    and the word is named as written ("Eiffel", never "␣E" + "iffel"); the focus's own word is left out.
    With `skip_first`, so is the first token: a real model rests attention there (an attention sink,
    which the lesson explains), and it would name the same "The" for every phrase."""
    w = np.asarray(weights, dtype=float)
    if words is None or word_of is None or len(word_of) != len(w):
        words, word_of = tuple(tokens), tuple(range(len(w)))
    own = word_of[focus]
    per_word = np.zeros(len(words))
    for t, wi in enumerate(word_of):
        if wi != own and not (skip_first and t == 0):
            per_word[wi] += w[t]
    order = [int(k) for k in np.argsort(-per_word, kind="stable") if per_word[k] >= min_weight]
    if not order:
        return ()
    picked = [order[0]] + [k for k in order[1:2] if per_word[k] >= 0.5 * per_word[order[0]]]
    return tuple(dict.fromkeys(words[k] for k in sorted(picked)))


def phrase_tags(tags, phrases, real: bool) -> tuple[tuple[str, ...], ...]:
    """Tags that tell the phrases apart: one that repeats an earlier phrase's (or, on a real model,
    names nothing: the word drew only from the first token and itself) names the phrase itself, up to
    the focus word ("The tower"), as written."""
    out = []
    for tag, phrase in zip(tags, phrases):
        if tag in out or (real and not tag):
            tag = (phrase,)
        out.append(tag)
    return tuple(out)


def causal_note(tokens, focus: int) -> CausalNote | None:
    later = tuple(range(focus + 1, len(tokens)))
    if not later:
        return None
    after = " ".join(tokens[j] for j in later)
    if len(after) > AFTER_MAX_CHARS:
        after = " ".join(tokens[j] for j in later[:3]) + " …"
    return CausalNote(later=later, before=tuple(tokens[:focus]), after=after)


def _phrase_vectors(setting: Setting, word: str):
    layer, head = setting.head.layer, setting.head.head
    out = []
    for tr in setting.traces:
        i = tr.index_of(word)
        ht = tr.head(layer, head)
        out.append((tr, i, ht.pattern[i], tr.layers[layer].resid_in[i], ht.delta_e[i], tr.updated(layer, head)[i]))
    return out


def default_axes(trace: Trace, variant: ContextVariant) -> tuple[str, str, str]:
    """The toy's named directions; for a real model, the first candidate triple of words it spells
    as one token each (else the toy's names, which resolve_axes then replaces if need be)."""
    if trace.model.real:
        for triple in variant.real_axes:
            if all(w in trace.directions for w in triple):
                return triple
    return variant.axes


def unembedding_words(trace: Trace, names) -> tuple[str, ...]:
    """A real model's axes as the words it spells ("paris" -> "Paris"); () for the toy's named directions."""
    token_for = getattr(trace.directions, "token_for", None)
    if not trace.model.real or token_for is None:
        return ()
    return tuple((token_for(n) or (0, n))[1].strip() for n in names)


def _axes(setting: Setting, variant: ContextVariant, vectors: np.ndarray):
    requested = list(setting.axes) if setting.axes else None
    names = resolve_axes(setting.trace, requested, default_axes(setting.trace, variant), vectors)
    return choose_axes(setting.trace, names)


def plan_context(setting: Setting, variant: ContextVariant) -> ContextPlan:
    word = focus_word(setting, variant)
    raw = _phrase_vectors(setting, word)
    fit = np.array([v for r in raw for v in (r[3], r[5])])
    names, basis, named = _axes(setting, variant, fit)
    E0 = raw[0][3]
    phrases = []
    real = setting.trace.model.real
    tags = phrase_tags(
        [context_tag(tr.tokens, w, i, words=tr.words, word_of=tr.word_of_token,
                     skip_first=not tr.head(setting.head.layer, setting.head.head).role and i > 0)
         for tr, i, w, *_ in raw],
        [" ".join(tr.words[:tr.word_of_token[i] + 1]) for tr, i, *_ in raw], real)
    for k, (tr, i, w, E, dE, E2) in enumerate(raw):
        coords = np.array([E, dE, E2]) @ basis
        compare = None
        if variant.compare and k > 0:
            change = coords[2] - raw[k - 1][5] @ basis
            compare = Comparison(before=raw[k - 1][0].tokens, change=change, terms=delta_terms(change))
        phrases.append(Phrase(
            tokens=tr.tokens, focus=i, weights=w, E=E, dE=dE, E2=E2, coords=coords,
            own_E=bool(np.abs((E - E0) @ basis).max() > 1e-3), attention=attention_mention(tr.tokens, w, i),
            delta=delta_terms(coords[1]), tag=tags[k], causal=causal_note(tr.tokens, i),
            compare=compare, honesty=read_head(tr.head(setting.head.layer, setting.head.head), i)))
    against = against_story(setting, variant, [np.round(s.coords[2], 1) for s in phrases])
    # no arrow drawn foreshortened below half its length: the ΔEs too (review 38: phrase 3's ΔE, at 0.43 of its
    # length, was a stub boxed in by the earlier arrows, its name on a line across them)
    view = choose_view(fit @ basis, np.array([s.E2 for s in phrases]) @ basis,
                       differences=np.array([s.coords[1] for s in phrases]))
    best = [int(np.argmax(np.abs(s.coords[1]))) for s in phrases]
    reach = max(float(np.abs(s.coords[0]).max()) for s in phrases)  # the largest |E| on the axes
    return ContextPlan(trace=setting.trace, head=setting.head, role=setting.head_trace().role, word=word, axes=tuple(names),
                       named=tuple(named), basis=basis, fit=fit, view=view, phrases=tuple(phrases),
                       own_direction=len(best) > 1 and len(set(best)) == len(best),
                       unembedding=unembedding_words(setting.trace, names),
                       inputs_differ=setting.head.layer > 0 and any(s.own_E for s in phrases),
                       small_delta=all(float(np.abs(s.coords[1]).max()) < max(DELTA_MIN, STUB * reach)
                                       for s in phrases), against=against)


def against_story(setting: Setting, variant: ContextVariant, drawn: list) -> tuple:
    """(phrase, axis, move) wherever the lesson's own phrases (its examples, in order: a user's phrases
    tell no story we know) move the word against the variant's story. `drawn`: each phrase's E′ on
    the axes as its table writes it (one decimal), so the figure said is one a student can check."""
    offered = dict(setting.model.examples) if setting.model is not None else {}
    own = [offered.get(e) for e in variant.examples]
    if not variant.story or [tr.text for tr in setting.traces] != own:
        return ()
    out = []
    for k, expected in enumerate(variant.story):
        for axis, sign in expected:
            if variant.compare:
                if k == 0:
                    continue
                move = float(drawn[k][axis] - drawn[k - 1][axis])
            else:
                others = [drawn[j][axis] for j in range(len(drawn)) if j != k]
                move = float(drawn[k][axis] - np.mean(others))
            if move * sign < 0:
                out.append((k, axis, round(move, 2)))
    return tuple(out)


def plan_lookup(setting: Setting, variant: ContextVariant) -> LookupPlan:
    word = focus_word(setting, variant)
    raw = _phrase_vectors(setting, word)
    _, basis, _ = _axes(setting, variant, np.array([v for r in raw for v in (r[3], r[5])]))
    cols = np.array([tr.token_embeddings[i] for tr, i, *_ in raw])
    visible = any(np.abs(tr.position_embeddings[i] @ basis).max() > 1e-4 for tr, i, *_ in raw)
    return LookupPlan(word=word, phrases=tuple(r[0].tokens for r in raw), focus=tuple(r[1] for r in raw),
                      columns=cols, identical=bool(np.all(cols == cols[0])), position_visible=visible,
                      rotary=bool(setting.trace.model.rotary),
                      d_model=setting.model.d_model, show=len(raw) > 1)
