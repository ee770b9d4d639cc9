"""What a lesson is asked to show, checked and resolved before anything is drawn (no manim here).

`SceneInputs` is what the command line (or a test) asks for; `Setting` is the same after checking:
the traces of the sentences, the head (layer, head), the focus rule, the layout. Plans are computed
from a `Setting`, so they can be tested without manim.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from attention_manim.model.errors import UserError
from attention_manim.model.trace import HeadChoice, HeadTrace, ModelInfo, Trace, choose_head


@dataclass
class SceneInputs:
    tracer: Callable[[str], Trace]  # sentence -> Trace (one forward pass of the model in use)
    model: ModelInfo | None = None  # sizes, head roles, example sentences (None: take them from a trace)
    sentences: list[str] | None = None  # None: the lesson's own default sentence(s)
    focus: str | None = None  # the word the lesson follows (None: the plan picks one)
    layer: int | None = None  # None: the layer of the lesson's default head
    head: int | None = None  # None: the lesson's default head (by role, e.g. adjectives → nouns)
    theme: str = "dark"
    layout: str = "video"  # "video": keys as rows, queries as columns; "paper": the transpose
    axes: list[str] | None = None  # named directions for 3-D scenes
    lang: str = "en"  # the catalog every word on screen and in the .srt comes from
    voice: str | None = None  # a voice speaks each caption block (attention_manim.voice); None: silent
    voice_dir: str | None = None  # the teacher's recordings, one file per block id
    options: dict = field(default_factory=dict)  # lesson-specific extras


@dataclass(frozen=True)
class HeadRef:
    layer: int
    head: int


@dataclass(frozen=True)
class Setting:
    """A checked request: the traces to draw, the head, the focus word, the layout."""

    traces: tuple[Trace, ...]
    head: HeadRef
    focus: str | None = None
    layout: str = "video"
    axes: tuple[str, ...] | None = None
    options: dict = field(default_factory=dict)
    # how the head was picked when the lesson picked it by its role (None: the user named the head, or
    # the lesson has no role); `head_choice.fell_back`: not the role's own head, and `gap` says why
    head_choice: HeadChoice | None = None

    @property
    def trace(self) -> Trace:
        return self.traces[0]

    def option(self, name: str, default=None):
        """A lesson option the user gave (`render.py --window 8` -> option("window")), else `default`.
        Read through here, so that the command line can tell which lessons use it (scenes/options.py)."""
        return self.options.get(name, default)

    @property
    def devices(self) -> int | None:
        """`--devices`: the devices of a ring (ring_attention); None when the user gave none."""
        return self.options.get("devices")

    @property
    def model(self) -> ModelInfo:
        return self.trace.model

    def head_trace(self, trace: Trace | None = None) -> HeadTrace:
        return (trace or self.trace).head(self.head.layer, self.head.head)

    def focus_index(self, trace: Trace | None = None) -> int:
        """The token the lesson follows: the focus word's (its last token when the word is several
        tokens, where a causal model has gathered the whole word), else the gathering word."""
        trace = trace or self.trace
        if self.focus is not None:
            return trace.index_of(self.focus)
        ht = self.head_trace(trace)
        # a real model: the story's own word ("creature" of the fluffy phrase, for the head the probes
        # picked for adjectives → nouns), when its tokenizer keeps that word whole
        story = story_word(trace, self.head_choice) if trace.model.real else None
        if story is not None:
            return story
        # a head the model names no role for (a real model's) parks much weight on the first token:
        # the word worth following is the one that gathers the most from the other words
        return gathering_word(ht.pattern, skip_first=not ht.role, word_of=getattr(trace, "word_of_token", None))


def whole_words(word_of) -> list[int]:
    """The tokens that are a whole word each (the word's only token), given token -> word index."""
    w = list(word_of)
    return [i for i in range(len(w)) if w.count(w[i]) == 1]


def story_word(trace: Trace, choice: HeadChoice | None) -> int | None:
    """The token of the word a story probe follows in this very sentence (model/probes.py: the
    fluffy phrase follows "creature" for adjectives → nouns), for the role the head was picked for;
    None when no probe tells this sentence's story, or the tokenizer cuts that word into pieces."""
    from attention_manim.model.probes import STORY_PROBES

    if choice is None or not choice.role:
        return None
    text = " ".join(trace.text.lower().split())
    for probe in STORY_PROBES.get(choice.role, ()):
        if probe.text.lower() == text:
            try:
                i = trace.index_of(probe.query)
            except ValueError:
                return None
            return i if i in whole_words(trace.word_of_token) else None
    return None


def gathering_word(pattern: np.ndarray, skip_first: bool = False, word_of=None) -> int:
    """The word that looks away from itself the most (its off-diagonal weight, to one decimal), ties
    going to the word that gathers from more words (≥ 0.1 each), then to the earlier word:
    "creature" (fluffy, blue) before "forest". With `skip_first`, weight on the first token does
    not count as looking away (real models rest attention there). With `word_of` (token -> word index,
    for models that cut words into pieces), only a word's last piece can be chosen, and a piece looking
    at earlier pieces of its own word is not looking away ("ver d ant" gathering itself into "verdant");
    a whole word (one token) goes before any piece, when one looks away at all."""
    p = np.array(pattern, dtype=float)
    np.fill_diagonal(p, 0.0)
    if skip_first:
        p[:, 0] = 0.0
    candidates = list(range(len(p)))
    off_self = None
    if word_of is not None and len(word_of) == len(p):
        w = np.asarray(word_of)
        p[w[:, None] == w[None, :]] = 0.0
        candidates = [i for i in candidates if i == len(p) - 1 or w[i + 1] != w[i]]
        # a whole word ("forest") before the last piece of one ("ant" of "verdant"), whenever a whole
        # word looks away at all: a piece on screen reads as a word of its own
        off_self = np.round(p.sum(axis=1), 1)
        whole = [i for i in whole_words(word_of) if off_self[i] > 0]
        candidates = whole or candidates
    off_self = np.round(p.sum(axis=1), 1) if off_self is None else off_self
    gathered = (p >= 0.1).sum(axis=1)
    return max(candidates, key=lambda i: (off_self[i], gathered[i], -i))


def top_keys(pattern_row: np.ndarray, k: int = 3, min_weight: float = 0.1) -> list[int]:
    """The keys a query attends to most: up to `k`, each with weight >= `min_weight` (at least one),
    strongest first."""
    order = np.argsort(-np.asarray(pattern_row), kind="stable")
    picked = [int(j) for j in order[:k] if pattern_row[j] >= min_weight]
    return picked or [int(order[0])]


def check_directions(trace: Trace, names, *, count: int | tuple[int, int] | None = None,
                     option: str = "--axes") -> tuple[str, ...]:
    """Direction names as the user typed them, checked: trimmed, case-insensitive, each known to the
    model (a real model's are the words it spells as one token), none twice, and `count` of them when a
    count (or a (fewest, most) range) is given. The one check behind --axes (every scene) and inspect --project-onto."""
    given = [str(n) for n in names]
    cleaned = [n.strip().lower() for n in given]
    usual = ("animal", "chemistry", "medicine")
    example = (",".join(usual) if all(n in trace.directions for n in usual) else
               ",".join(sorted(trace.directions)[:3]) if not trace.model.real else "paris,small,large")
    if any(not n for n in cleaned) or not cleaned:
        raise UserError(f"{option} has an empty direction name: {','.join(given)!r}",
                        f"give comma-separated names, for example {option} {example}", key="axes_empty_name",
                        option=option, given=",".join(given), example=example)
    lo, hi = (count, count) if isinstance(count, int) else (count or (0, len(cleaned)))
    if not lo <= len(cleaned) <= hi:
        if lo == hi:
            raise UserError(f"{option} takes exactly {lo} direction names, got {len(cleaned)}",
                            f"for example {option} {example}", key="axes_count_exact", option=option, want=lo,
                            got=len(cleaned), example=example)
        raise UserError(f"{option} takes {lo} to {hi} direction names, got {len(cleaned)}",
                        f"for example {option} {example}", key="axes_count_range", option=option, least=lo, most=hi,
                        got=len(cleaned), example=example)
    unknown = [n for n in cleaned if n not in trace.directions]
    if unknown:
        if trace.model.real:  # its directions are words: their unembedding rows
            raise UserError(f"not a single token of {trace.model.name}: {', '.join(map(repr, unknown))}",
                            "a real model's directions are words it spells as one token (their unembedding "
                            f"rows), for example {option} {example}", key="axes_not_one_token",
                            model=trace.model.name, words=", ".join(map(repr, unknown)), option=option,
                            example=example)
        if not trace.directions:
            raise UserError(f"unknown direction(s) for {option}: {', '.join(map(repr, unknown))}",
                            "known directions: (this model has no named directions)", key="axes_none_known",
                            option=option, words=", ".join(map(repr, unknown)))
        listed = ", ".join(sorted(trace.directions))
        raise UserError(f"unknown direction(s) for {option}: {', '.join(map(repr, unknown))}",
                        f"known directions: {listed}", key="axes_unknown", option=option,
                        words=", ".join(map(repr, unknown)), known=listed)
    twice = sorted({n for n in cleaned if cleaned.count(n) > 1})
    if twice:
        raise UserError(f"{option} names {', '.join(map(repr, twice))} more than once",
                        "give different directions", key="axes_twice", option=option,
                        words=", ".join(map(repr, twice)))
    return tuple(cleaned)


def is_blank(value: str | None) -> bool:
    """An option given as empty or blank text: a mistake, not a request for the default."""
    return value is not None and not value.strip(" \t|")


def resolve(inputs: SceneInputs, *, examples: tuple[str, ...] = (), role: str | None = None,
            max_sentences: int = 1, axes: tuple[int, int] = (3, 3)) -> Setting:
    """Check `inputs` and trace the sentences: the user's, else the model's examples for this lesson.

    `examples` are example ids the model may offer (its config's `examples`); `role` is the head
    role the lesson is about (its config's `head_roles`). Bad input raises UserError with a hint."""
    info = inputs.model
    given = list(inputs.sentences or [])
    if given and all(not t.strip() for t in given):
        raise UserError(f"--sentence is empty: {' | '.join(given)!r}",
                        "give a sentence, or leave --sentence out for the scene's own", key="sentence_option_empty",
                        given=" | ".join(given))
    for k, sentence in enumerate(given):
        if not sentence.strip():
            raise UserError(f"sentence {k + 1} of {len(given)} in --sentence is empty",
                            'put a sentence between every two \'|\', e.g. --sentence "a mole of carbon | a mole on the skin"',
                            key="sentence_part_empty", number=k + 1, total=len(given))
    if is_blank(inputs.focus):
        raise UserError(f"--focus is empty: {inputs.focus!r}", "give a word of the sentence, or leave --focus out for "
                        "the scene's own", key="focus_empty", focus=inputs.focus)
    sentences = list(inputs.sentences or [])
    if not sentences:
        offered = dict(info.examples) if info is not None else {}
        sentences = [offered[e] for e in examples if e in offered]
        if not sentences:
            raise UserError("this model has no example sentence for this scene",
                            "give one with --sentence \"...\"", key="no_example_sentence")
    if len(sentences) > max_sentences == 1:
        raise UserError(f"this scene takes at most {max_sentences} sentence(s), got {len(sentences)}",
                        "separate sentences with '|' only for scenes that compare phrases (mole, eiffel_tower, "
                        "multi_head); give one --sentence here", key="one_sentence_only", most=max_sentences,
                        got=len(sentences))
    if len(sentences) > max_sentences:
        raise UserError(f"this scene takes at most {max_sentences} sentence(s), got {len(sentences)}",
                        f"give at most {max_sentences} with --sentence \"a | b\"", key="too_many_sentences",
                        most=max_sentences, got=len(sentences), count=max_sentences)
    traces = tuple(inputs.tracer(s) for s in sentences)
    m = traces[0].model
    layer, head = inputs.layer, inputs.head
    # a real model names no heads: the command line fills `inputs.model.roles` by measurement
    # (model/probes.py), so the roles asked for come from there when it has them
    # (and why a role has no head: a model without it falls back to a structural head it has, and
    # the lesson says so, from `Setting.head_choice`)
    named = info if info is not None and (info.roles or getattr(info, "role_gaps", None)) else m
    choice = None
    if (layer is None or head is None) and role:
        picked = choose_head(named.roles, role, getattr(named, "role_gaps", None), getattr(named, "real", True))
        if layer is None or layer == picked.layer:
            choice = picked if head is None else None  # the head shown is the one picked
            layer = picked.layer if layer is None else layer
            head = picked.head if head is None else head
    layer = 0 if layer is None else layer
    head = 0 if head is None else head
    if not 0 <= layer < m.n_layers:
        raise layer_error(layer, m.n_layers)
    if not 0 <= head < m.n_heads:
        raise head_error(head, m.n_heads)
    if inputs.layout not in ("video", "paper"):
        raise UserError(f"unknown layout {inputs.layout!r}", "use video or paper", key="unknown_layout",
                        layout=inputs.layout)
    focus = inputs.focus
    if focus is not None:
        for t in traces:
            try:
                t.index_of(focus)  # a word of several tokens: its last token
            except ValueError:
                raise UserError(f"the focus word {focus!r} is not in the sentence {t.text!r}",
                                f"pick one of: {' '.join(t.words or t.tokens)}", key="focus_not_found", focus=focus,
                                sentence=t.text, words=" ".join(t.words or t.tokens)) from None
    checked_axes = check_directions(traces[0], inputs.axes, count=axes) if inputs.axes is not None else None
    return Setting(traces=traces, head=HeadRef(layer, head), focus=focus, layout=inputs.layout,
                   axes=checked_axes, options=dict(inputs.options), head_choice=choice)


def layer_error(layer: int, n_layers: int) -> UserError:
    return UserError(f"layer {layer} is out of range: the model has {n_layers} layer(s) (0..{n_layers - 1})",
                     f"use --layer 0..{n_layers - 1}, or leave it out for the scene's own head; "
                     "`python render.py heads` lists every head",
                     key="layer_out_of_range", layer=layer, n_layers=n_layers, last=n_layers - 1, count=n_layers)


def head_error(head: int, n_heads: int) -> UserError:
    return UserError(f"head {head} is out of range: the model has {n_heads} heads per layer (0..{n_heads - 1})",
                     f"use --head 0..{n_heads - 1}, or leave it out for the scene's own head; "
                     "`python render.py heads` lists every head",
                     key="head_out_of_range", head=head, n_heads=n_heads, last=n_heads - 1)


def focus_tops(pattern_row: np.ndarray, focus: int) -> list[int]:
    """The keys the focus attends to most (weight ≥ 0.1, up to 3), leaving itself out unless it
    attends to nothing else: the cells a spotlight picks."""
    tops = [j for j in top_keys(pattern_row) if j != focus]
    return tops or top_keys(pattern_row)


def contrast_key(scores_row: np.ndarray, mask_row: np.ndarray, exclude) -> int | None:
    """The visible key with the lowest score (a key that does not answer), or None."""
    cands = [j for j in range(len(scores_row)) if not mask_row[j] and j not in set(exclude)]
    if not cands:
        return None
    return int(min(cands, key=lambda j: scores_row[j]))
