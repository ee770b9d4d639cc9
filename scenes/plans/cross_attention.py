"""Plan of `cross_attention` (no manim): English queries, French keys and values, one trained head.

The numbers come from `model.cross_attention` (numpy only: the head's saved weights, no torch). The
lesson's setting holds the pair's `CrossTrace` under `options[CROSS]`; `cross_setting` makes it.
What the captions point at is measured on the trace:

* a word that looks at one French word (its weight ≥ ONE), or that splits its attention over two
  (the top two together ≥ ONE, the second ≥ SPLIT: not → ne … pas, saw → a vu);
* words whose attention spreads out (no weight reaches SPREAD: "do", "to" have no French word);
* a crossing: two English words in one order whose strongest French words come in the other order
  (it … pet → le caresser).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attention_manim.model.errors import UserError

from ..setting import HeadRef, Setting, SceneInputs

CROSS = "cross_trace"  # Setting.options key: the pair's CrossTrace
ONE = 0.5
SPLIT = 0.2
SPREAD = 0.4
MAX_STORIES = 5


ASKED = "cross_attention_asked_model"  # the real model the user asked for (--model), which has no cross-attention


def cross_setting(inputs: SceneInputs) -> Setting:
    """Two sentences, "english | french" (or the example pair), traced by the cross-attention head."""
    from attention_manim.model.cross_attention import EXAMPLE, as_traces, translate_trace

    sentences = list(inputs.sentences or EXAMPLE)
    if len(sentences) != 2:
        raise UserError(f"cross_attention takes two sentences, English then French; got {len(sentences)}",
                        'separate them with "|": --sentence "i do not want to pet it | je ne veux pas le caresser"',
                        key="cross_two_sentences", count=len(sentences))
    if inputs.layout not in ("video", "paper"):
        raise UserError(f"unknown layout {inputs.layout!r}", "use video or paper", key="unknown_layout",
                        layout=inputs.layout)
    ct = translate_trace(sentences[0], sentences[1])
    if inputs.focus is not None and inputs.focus.strip().lower() not in ct.english_tokens:
        raise UserError(f"the focus word {inputs.focus!r} is not in the English sentence {ct.english!r}",
                        f"pick one of: {' '.join(ct.english_tokens)}", key="cross_focus_not_found",
                        focus=inputs.focus, sentence=ct.english, words=" ".join(ct.english_tokens))
    return Setting(traces=as_traces(ct), head=HeadRef(0, 0),
                   focus=inputs.focus.strip().lower() if inputs.focus else None, layout=inputs.layout,
                   options={**inputs.options, CROSS: ct,
                            ASKED: inputs.model.name if inputs.model is not None and inputs.model.real else ""})


@dataclass(frozen=True)
class Story:
    """One English word and the French word(s) it looks at most."""

    query: int  # English token index
    keys: tuple[int, ...]  # French token indices, in French order (one or two)
    weights: tuple[float, ...]  # their real weights


@dataclass(frozen=True)
class Crossing:
    first: int  # English index of the earlier English word
    second: int  # English index of the later one
    first_key: int  # French index the earlier word looks at (comes after second_key)
    second_key: int


@dataclass(frozen=True)
class CrossPlan:
    english: tuple[str, ...]  # queries (columns in the video layout)
    french: tuple[str, ...]  # keys and values (rows in the video layout)
    pattern: np.ndarray = field(repr=False)  # [n_en, n_fr] the real weights; rows sum to 1
    layout: str
    stories: tuple[Story, ...]  # the words the captions follow, in English order
    spread: tuple[int, ...]  # English words whose attention spreads out
    spread_max: float  # the largest weight any of them gives one French word
    crossing: Crossing | None
    min_weight: float  # the smallest cell: > 0, nothing is masked
    d_head: int
    pairs_trained: int  # how many phrase pairs the head was trained on
    seen_in_training: bool  # whether this English sentence was one of them
    asked_model: str = ""  # the real model asked for (--model smollm2): it has no cross-attention, the lesson says so

    def weight(self, query: int, key: int) -> float:
        return float(self.pattern[query, key])


def _story(row: np.ndarray, i: int) -> Story | None:
    order = np.argsort(-row, kind="stable")
    a, b = int(order[0]), int(order[1]) if len(row) > 1 else None
    if b is not None and row[b] >= SPLIT and row[a] + row[b] >= ONE:
        keys = tuple(sorted((a, b)))
    elif row[a] >= ONE:
        keys = (a,)
    else:
        return None
    return Story(i, keys, tuple(float(row[k]) for k in keys))


def plan_cross_attention(setting: Setting) -> CrossPlan:
    from attention_manim.model.cross_attention import load_cross_attention, seen_in_training

    ct = setting.options[CROSS]
    P = np.asarray(ct.pattern, dtype=np.float64)
    stories = [s for s in (_story(P[i], i) for i in range(len(P))) if s is not None]
    if setting.focus is not None:
        focus = ct.english_tokens.index(setting.focus)
        stories = [s for s in stories if s.query == focus] or stories
    # the two-word splits and the crossings are the story; then the rest in English order
    crossing = None
    tops = {s.query: s.keys[0] for s in stories if len(s.keys) == 1}  # words that look at one French word
    strong = sorted(tops)
    for a in strong:
        for b in strong:
            if a < b and tops[a] > tops[b] and crossing is None:
                crossing = Crossing(a, b, tops[a], tops[b])
    key = {s.query: (0 if len(s.keys) > 1 else 1 if crossing and s.query in (crossing.first, crossing.second) else 2,
                     s.query)
           for s in stories}
    chosen = sorted(sorted(stories, key=lambda s: key[s.query])[:MAX_STORIES], key=lambda s: s.query)
    spread = tuple(i for i in range(len(P)) if P[i].max() < SPREAD)
    head = load_cross_attention()
    return CrossPlan(english=ct.english_tokens, french=ct.french_tokens, pattern=P, layout=setting.layout,
                     stories=tuple(chosen), spread=spread,
                     spread_max=float(max((P[i].max() for i in spread), default=0.0)), crossing=crossing,
                     min_weight=float(P.min()), d_head=ct.d_head, pairs_trained=head.pairs_trained,
                     seen_in_training=seen_in_training(ct.english_tokens),
                     asked_model=setting.options.get(ASKED, ""))
