"""Lessons of chapters.

A **chapter** is one step of the story in three separate parts:
- `plan(setting) -> Plan`: plain data computed from the trace and the head (which cells, which
  numbers rounded how, which words a caption names). Plans live in `scenes/plans/` (no manim).
- `play(stage, plan)`: the animation only, on the stage, from the plan.
- words: every caption and label from the catalog (`stage.say(key, **params)`).

A **lesson** is a list of chapters; a registered lesson is what `render.py NAME` renders. A lesson
of several chapters shows a title card between chapters: the camera travels to it when the next
chapter starts afresh, or a small title appears in a corner when the next chapter goes on with
what is on stage (`Chapter.continues`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, MovingCameraScene, ThreeDScene, VGroup, config

from .i18n import Say
from .registry import register
from .setting import SceneInputs, Setting, resolve
from .stage import Stage
from .style import get_theme


class Chapter:
    """One step of a lesson. Subclasses set `key` and implement `plan` and `play`."""

    key: ClassVar[str] = ""  # the chapter's name and its catalog table (e.g. "softmax")
    continues: ClassVar[tuple[str, ...]] = ()  # hand-ons it goes on with when they are on stage

    def plan(self, setting: Setting) -> Any:
        raise NotImplementedError

    def play(self, stage: Stage, plan: Any) -> None:
        raise NotImplementedError

    def goes_on_from(self, stage: Stage) -> bool:
        return any(stage.has(name) for name in self.continues)


@dataclass(frozen=True)
class Lesson:
    name: str  # the CLI name; its catalog table is lessons.<name>
    chapters: tuple[Chapter, ...]
    examples: tuple[str, ...] = ("fluffy_blue_creature",)  # example ids the model may offer as defaults
    role: str | None = "adjective_noun"  # the head role the lesson is about (default head)
    max_sentences: int = 1
    three_d: bool = False
    cards: bool = False  # title cards between chapters (lessons of several chapters)
    intro: Chapter | None = None
    outro: Chapter | None = None

    def setting(self, inputs: SceneInputs) -> Setting:
        return resolve(inputs, examples=self.examples, role=self.role, max_sentences=self.max_sentences)

    def all_chapters(self) -> list[Chapter]:
        return [c for c in (self.intro, *self.chapters, self.outro) if c is not None]

    def plans(self, setting: Setting) -> list:
        return [c.plan(setting) for c in self.all_chapters()]


class LessonSceneBase:
    """The manim scene that plays a lesson: plans first (bad input fails before drawing), then play."""

    lesson: ClassVar[Lesson]
    description: ClassVar[str] = ""

    def __init__(self, inputs: SceneInputs, **kwargs):
        self.inputs = inputs
        self.say = Say(inputs.lang)
        self.theme = get_theme(inputs.theme)
        self.setting = self.lesson.setting(inputs)
        self.chapter_list = self.lesson.all_chapters()
        self.plans = [c.plan(self.setting) for c in self.chapter_list]
        super().__init__(**kwargs)
        self.chapters_played: list[str] = []
        self.caption_log: list[tuple[str, float]] = []

    @property
    def trace(self):
        return self.setting.trace

    def setup(self):
        super().setup()
        self.camera.background_color = self.theme.background
        if config.transparent:
            self.camera.background_opacity = 0.0

    def construct(self):
        self.stage = Stage(self, self.say, self.theme)
        self.stage.captions = self.caption_log
        main = set(map(id, self.lesson.chapters))
        number = 0
        for chapter, plan in zip(self.chapter_list, self.plans):
            if self.lesson.cards and id(chapter) in main:
                number += 1
                self.chapter_card(chapter, number)
            chapter.play(self.stage, plan)
            self.chapters_played.append(chapter.key)

    # --- between chapters ------------------------------------------------------------------
    def chapter_card(self, chapter: Chapter, number: int):
        """A title card: in a corner when the chapter goes on with the stage, else the camera
        travels right to a full card and the old picture stays behind."""
        say, th = self.say, self.theme
        key = f"lessons.chapters.{chapter.key}"
        title = say("lessons.card_title", number=number, title=say(f"{key}.title"))
        subtitle, travel = say(f"{key}.subtitle"), say(f"{key}.travel")
        from .components.text import label

        stage = self.stage
        if chapter.goes_on_from(stage):
            # what the last chapter noted beside its pictures goes; the pictures stay, and the card
            # takes the top of the side panel, clear of the grid and the word row
            stage.clear(keep=tuple(stage.kept()))
            card = VGroup(label(title, font_size=30, color=th.text),
                          label(subtitle, font_size=22, color=th.dim)).arrange(DOWN, buff=0.15, aligned_edge=LEFT)
            stage.region("panel").fit(card, align="top_left")
            with stage.narrating(travel):
                self.play(FadeIn(card, shift=RIGHT * 0.2), run_time=0.6)
                self.wait(1.6)
                self.play(FadeOut(card), run_time=0.4)
            return
        frame = self.camera.frame
        d = RIGHT * (config.frame_width + 1.0)
        card = VGroup(label(title, font_size=52, color=th.text),
                      label(subtitle, font_size=30, color=th.dim)).arrange(DOWN, buff=0.3)
        card.move_to(frame.get_center() + d)
        old = list(self.mobjects)
        with stage.narrating(travel):
            self.add(card)
            self.play(frame.animate.shift(d), run_time=1.3)
            # nothing visible changes here: the camera and the card move back together
            self.remove(*old)
            stage.forget()
            frame.shift(-d)
            card.shift(-d)
            self.wait(1.0)
            self.play(FadeOut(card, shift=UP * 0.3), run_time=0.5)


def register_lesson(lesson: Lesson) -> type:
    """Make `lesson` renderable as `python render.py NAME`; returns its scene class."""
    base = ThreeDScene if lesson.three_d else MovingCameraScene
    cls_name = "".join(p.title() for p in lesson.name.split("_")) + "Lesson"
    cls = type(cls_name, (LessonSceneBase, base), {
        "lesson": lesson,
        "description": Say("en")(f"lessons.{lesson.name}.description"),
        "__module__": __name__,
    })
    return register(lesson.name)(cls)


def describe(name: str, lang: str = "en") -> str:
    """A lesson's one-line description in `lang` (for `render.py list`)."""
    return Say(lang)(f"lessons.{name}.description")
