"""What a head really does with the word a chapter follows, measured on this sentence (no manim).

The toy's heads were trained for the roles they are named after. A real model names none of its
heads, and many of them park most of a token's attention on the first token of the text (a
resting place: attention must sum to 1, and a head with nothing to fetch puts it there), or keep
it on the token itself. Where a chapter names what a head does (its pattern note, its softmax, its
weighted values, the question and answers of its query and keys), the chapter adds a note saying
what this head does instead: the note's catalog key and its real numbers are planned here.

Rules (for a head the model names no role for; named heads get no note):
- the focus puts at least MOSTLY of its weight on the first token (and is not that token): note
  `real.note.first_token` (or `first_token_rest`, naming the strongest other keys);
- else, over the whole sentence, the head puts at least SENTENCE_SINK of its weight on the first
  token (the mean over every query but the first): `real.note.first_token_sentence`;
- else the focus puts at least MOSTLY on itself: `real.note.self`;
- else at least MOSTLY on the token just before it: `real.note.previous`;
- else no note: the chapter's own words (its strongest keys and their real weights) say it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attention_manim.model.trace import HeadTrace

MOSTLY = 0.5  # "mostly": at least half of the focus's attention
SENTENCE_SINK = 0.4  # a head resting this much of the whole sentence's attention on the first token says so
OTHER_MIN = 0.05  # other keys named beside the first token weigh at least this
MAX_OTHERS = 2
FIRST_TOKEN_ANSWER = "qkv.lines.first_token.answer"
PREVIOUS_ANSWER = "qkv.lines.previous_token.answer"
SELF_ANSWER = "qkv.lines.self.answer"


@dataclass(frozen=True)
class Honesty:
    focus: int  # the query the chapter follows
    first: float  # its weight on the first token (0.0 when it is the first token)
    itself: float  # its weight on itself
    previous: float  # its weight on the token just before it (0.0 for the first token)
    sentence_first: float  # the head's mean weight on the first token, every query but the first
    others: tuple[int, ...]  # its strongest keys besides the first token and itself, strongest first
    other_weights: tuple[float, ...]
    unnamed: tuple[tuple[int, float], ...]  # the keys it may see that the note names not: (key, weight)
    note: str | None  # catalog key of the note (None: the head does what the chapter says)
    params: dict  # the note's parameters: tokens as indices under "word", "first", "previous", "others"

    @property
    def shows(self) -> bool:
        return self.note is not None


def first_token_share(pattern: np.ndarray) -> float:
    """The mean weight every query but the first puts on the first token (the whole sentence)."""
    p = np.asarray(pattern, dtype=float)
    return float(p[1:, 0].mean()) if p.shape[0] > 1 else 0.0


IDLE = 0.9  # a role is idle on a sentence where every word keeps at least this much on itself


def role_idle(pattern: np.ndarray, real: bool = False) -> float | None:
    """A named head with nothing to do on this sentence (the toy's adjectives → nouns head on a
    sentence with no adjective): every query but the first keeps at least IDLE of its attention on
    itself. The least such weight, as its label and caption say it; None when some word looks away
    (the role shows). `real` is accepted for symmetry; a real model's first-token head is at work
    when it rests there, so only the weight on itself counts."""
    p = np.asarray(pattern, dtype=float)
    n = p.shape[0]
    if n < 2:
        return None
    rows = np.arange(1, n)
    least = float(p[rows, rows].min())
    return least if least >= IDLE else None


ROLE_TARGETS = {"previous_token": lambda i: i - 1, "first_token": lambda i: 0}  # the key a role's query should pick


def role_hits(pattern: np.ndarray, role: str) -> tuple[int, int] | None:
    """How many queries (every one but the first) put their largest weight where `role` says (the token just
    before, the first token), out of how many; None for a role with no single target key. A head the probes
    call "previous token" over many passages may still look elsewhere on this sentence (SmolLM2's 11.1 sends
    "d" and "ant", pieces of "␣verdant", back to "␣the"): a frame that names the role says how often it held."""
    target = ROLE_TARGETS.get(role)
    p = np.asarray(pattern, dtype=float)
    if target is None or p.shape[0] < 2:
        return None
    rows = range(1, p.shape[0])
    return sum(int(np.argmax(p[i])) == target(i) for i in rows), len(rows)


def read_head(ht: HeadTrace, focus: int) -> Honesty:
    """What `ht` does with the token `focus`, and the note a chapter adds when it is not what the
    head's story says (see the module doc)."""
    w = np.asarray(ht.pattern[focus], dtype=float)
    first = float(w[0]) if focus > 0 else 0.0
    itself = float(w[focus])
    previous = float(w[focus - 1]) if focus > 0 else 0.0
    rest = [j for j in np.argsort(-w, kind="stable") if j not in (0, focus) and not ht.mask[focus, j]
            and w[j] >= OTHER_MIN][:MAX_OTHERS]
    others = tuple(int(j) for j in rest)
    unnamed = tuple((int(j), float(w[j])) for j in range(focus + 1)
                    if j != 0 and j not in others and not ht.mask[focus, j])
    note, params = None, {}
    sentence_first = first_token_share(ht.pattern)
    if not ht.role and focus > 0:
        if first >= MOSTLY:
            note = "real.note.first_token_rest" if others else "real.note.first_token"
            params = {"word": focus, "first": 0, "share": first, "others": others, "rest": 1.0 - first,
                      "count": len(others)}
        elif sentence_first >= SENTENCE_SINK:
            note = "real.note.first_token_sentence"
            params = {"word": focus, "first": 0, "share": sentence_first, "focus_share": first}
        elif itself >= MOSTLY:
            note, params = "real.note.self", {"word": focus, "share": itself}
        elif previous >= MOSTLY:
            note, params = "real.note.previous", {"word": focus, "previous": focus - 1, "share": previous}
    return Honesty(focus=focus, first=first, itself=itself, previous=previous, sentence_first=sentence_first,
                   others=others,
                   other_weights=tuple(float(w[j]) for j in others), unnamed=unnamed, note=note, params=params)


def note_text(say, honesty: Honesty, tokens) -> str | None:
    """The note in words (tokens quoted, numbers the language's way), or None."""
    if honesty.note is None:
        return None
    p = dict(honesty.params)
    for name in ("word", "first", "previous"):
        if name in p:
            p[name] = say.quote(tokens[p[name]])
    if "others" in p:  # each with its weight: "get the most" read as the toy's story beside 0.32 and 0.08
        items = [say("real.note.other_item", word=say.quote(tokens[j]), weight=w)
                 for j, w in zip(honesty.others, honesty.other_weights)]
        parts = [round(w, 2) for w in honesty.other_weights]
        # the keys it names not, with their weights as every frame draws them: one by its name
        # ("␣creature" 0.05), several together; never a difference of rounded figures (0.44 − 0.32 −
        # 0.08 = "0.04" beside a drawn 0.05)
        rest = [(j, w) for j, w in honesty.unnamed if round(w, 2) >= 0.01]
        if len(rest) == 1:
            items.append(say("real.note.other_item", word=say.quote(tokens[rest[0][0]]), weight=rest[0][1]))
            parts.append(round(rest[0][1], 2))
        elif rest:
            together = round(sum(round(w, 2) for _, w in rest), 2)
            items.append(say("real.note.rest_item", weight=together))
            parts.append(together)
        p["others"] = say.words(items)
        if "rest" in p:  # the remaining share, "≈" where its drawn parts add up to another figure
            shown = say.number(float(p["rest"]), ".2f")
            exact = round(sum(parts), 2) == round(float(p["rest"]), 2)
            p["rest"] = shown if exact else f"{say('common.rounding.mark')}{shown}"
    return say(honesty.note, **p)


def answer_key(ht: HeadTrace, query: int, key: int, answer: str) -> str:
    """The catalog key of what `key` answers the query of `query`: the head's own line; a word
    answering itself says so; for a head the model names no role for (a real one), the first token
    says it is the resting place and the word just before says just that, instead of claiming a
    meaning."""
    if key == query:
        return SELF_ANSWER
    if not ht.role:
        if key == 0:
            return FIRST_TOKEN_ANSWER
        if key == query - 1:
            return PREVIOUS_ANSWER
    return answer
