"""Plan of the finished attention pattern (`attention_pattern`)."""

from __future__ import annotations

from dataclasses import dataclass

from attention_manim.model.trace import HeadTrace

from ..setting import HeadRef, Setting, focus_tops
from .honesty import Honesty, read_head

MAX_WORD_ROW = 16  # longer sentences show the grid's labels only, no word row above it


@dataclass(frozen=True)
class PatternPlan:
    head: HeadRef
    head_trace: HeadTrace
    tokens: tuple[str, ...]
    layout: str
    focus: int  # the query whose strongest keys are named
    tops: tuple[int, ...]  # those keys, strongest first
    top_weights: tuple[float, ...]  # their real weights
    word_row: bool  # whether the sentence is shown as a row of words above the grid
    honesty: Honesty  # what a real head does with the focus (a note when not what the story says)


def plan_pattern(setting: Setting) -> PatternPlan:
    ht = setting.head_trace()
    i = setting.focus_index()
    tops = focus_tops(ht.pattern[i], i)
    honesty = read_head(ht, i)
    # a frame that also holds a real head's note drops the word row (the grid's labels name the same
    # tokens): its height goes to the grid, whose labels were 13 px
    return PatternPlan(head=setting.head, head_trace=ht, tokens=setting.trace.tokens, layout=setting.layout,
                       focus=i, tops=tuple(tops), top_weights=tuple(float(ht.pattern[i, j]) for j in tops),
                       word_row=len(setting.trace.tokens) <= MAX_WORD_ROW and not honesty.shows, honesty=honesty)
