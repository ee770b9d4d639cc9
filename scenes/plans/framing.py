"""Plans of a lesson's opening and closing (the flagship's title with the sentence, its last word)."""

from __future__ import annotations

from dataclasses import dataclass

from ..setting import HeadRef, Setting


@dataclass(frozen=True)
class IntroPlan:
    lesson: str  # catalog table of the lesson (lessons.<name>)
    tokens: tuple[str, ...]
    head: HeadRef
    role: str  # the head's role id ("" when the model names none)


@dataclass(frozen=True)
class OutroPlan:
    lesson: str


def plan_intro(setting: Setting, lesson: str) -> IntroPlan:
    ht = setting.head_trace()
    return IntroPlan(lesson=lesson, tokens=setting.trace.tokens, head=setting.head, role=ht.role)


def plan_outro(setting: Setting, lesson: str) -> OutroPlan:
    return OutroPlan(lesson=lesson)
