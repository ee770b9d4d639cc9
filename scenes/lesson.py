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

from dataclasses import dataclass
from typing import Any, ClassVar

from manim import (DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, MovingCameraScene, SurroundingRectangle, ThreeDScene,
                   VGroup, config)

from .i18n import Say
from .plans.head_choice import note_text as head_choice_note
from .registry import register
from .setting import SceneInputs, Setting, resolve
from .stage import Stage
from .style import get_theme


class Chapter:
    """One step of a lesson. Subclasses set `key` and implement `plan` and `play`."""

    key: ClassVar[str] = ""  # the chapter's name and its catalog table (e.g. "softmax")
    continues: ClassVar[tuple[str, ...]] = ()  # hand-ons it goes on with when they are on stage
    # it draws the key to a real model's ␣ itself, beside its own tokens (else the stage keeps one in the
    # frame's corner while the lesson's tokens show ␣: Stage.space_key_for)
    own_space_key: ClassVar[bool] = False
    # it draws tokens at all (a chart of costs does not: no key to ␣ in its corner, review 35)
    shows_tokens: ClassVar[bool] = True

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
    model: str | None = None  # the model `render.py` loads when the user names none (None: the toy)
    axes: tuple[int, int] = (3, 3)  # how many --axes names it takes (fewest, most): a 3-D space takes three

    def setting(self, inputs: SceneInputs) -> Setting:
        return resolve(inputs, examples=self.examples, role=self.role, max_sentences=self.max_sentences,
                       axes=self.axes)

    def all_chapters(self) -> list[Chapter]:
        return [c for c in (self.intro, *self.chapters, self.outro) if c is not None]

    def plans(self, setting: Setting) -> list:
        return [c.plan(setting) for c in self.all_chapters()]


class LessonSceneBase:
    """The manim scene that plays a lesson: plans first (bad input fails before drawing), then play."""

    lesson: ClassVar[Lesson]
    description: ClassVar[str] = ""
    observer = None  # scenes/review.py: a storyboard or the lint, watching the lesson play

    def __init__(self, inputs: SceneInputs, **kwargs):
        self.inputs = inputs
        self.say = Say(inputs.lang)
        self.theme = get_theme(inputs.theme)
        from .options import plan_lesson

        self.chapter_list = self.lesson.all_chapters()
        # options the lesson does not use are said (not silently ignored): see scenes/options.py
        self.setting, self.plans, self.unused_options = plan_lesson(self.lesson, inputs)
        # a head not measured for the lesson's role (the model has none for it): why, said before the
        # first chapter and on stderr (scenes/plans/head_choice.py)
        self.head_note = head_choice_note(self.say, self.setting.head_choice)
        if self.head_note:
            from .options import log

            log.warning("note: %s", self.head_note)
        self.narrator = make_narrator(inputs)  # after planning: a wrong sentence is said before a missing voice
        super().__init__(**kwargs)
        self.chapters_played: list[str] = []
        self.caption_log: list[tuple[str, float]] = []
        self.chapter_marks: list[tuple] = []  # (key, start time, its manim Section)

    @property
    def trace(self):
        return self.setting.trace

    def setup(self):
        super().setup()
        self.camera.background_color = self.theme.background
        if config.transparent:
            self.camera.background_opacity = 0.0

    def construct(self):
        from .components.text import reset_number_language, set_number_language

        token = set_number_language(self.say.lang)
        try:
            self._play_chapters()
        finally:
            reset_number_language(token)

    def _play_chapters(self):
        self.stage = Stage(self, self.say, self.theme)
        self.stage.captions = self.caption_log
        main = set(map(id, self.lesson.chapters))
        number = 0
        watch = self.observer
        if watch is not None:
            watch.start(self)
        for index, (chapter, plan) in enumerate(zip(self.chapter_list, self.plans), start=1):
            self.mark_chapter(chapter.key)  # its title card, if any, belongs to it
            self.stage.start_chapter(index, chapter.key)
            if watch is not None:
                watch.chapter_started(self, chapter.key, index)
            self.stage.leave()  # the last chapter's camera home, its space turned back (Stage.on_leave)
            if index == 1 and self.head_note:
                self.show_head_note(self.head_note)
            if self.lesson.cards and id(chapter) in main:
                number += 1
                self.chapter_card(chapter, number)
            self.stage.space_key_for(chapter, getattr(self.setting, "trace", None))
            chapter.play(self.stage, plan)
            self.chapters_played.append(chapter.key)
            if watch is not None:
                watch.chapter_done(self, chapter.key, index)
                if hasattr(watch, "roles_named"):
                    watch.roles_named(self, self.say.roles_named)
                self.say.roles_named.clear()
        if watch is not None:
            watch.finish(self)

    def tear_down(self):
        super().tear_down()
        if self.narrator is None:
            return
        self.narrator.check_all_used([b["id"] for b in self.stage.blocks])
        speeches = getattr(self, "speech_track", [])
        if speeches:
            from .sound import mix_speech

            # the runner muxes it into the clip and slices it for the chapters
            self.soundtrack = mix_speech(speeches, float(self.renderer.time))

    def play(self, *args, **kwargs):
        if self.observer is None or not self.observer.skip(self, args, kwargs):
            super().play(*args, **kwargs)
        key = getattr(getattr(self, "stage", None), "space_key", None)
        if key is not None and hasattr(key, "look"):  # the corner key looks at its corner as the animation ends
            key.look()
            key.update()
        if self.observer is not None:
            self.observer.played(self, self.animations)

    def mark_chapter(self, key: str) -> None:
        """Where a chapter starts: a manim section named by the chapter's key (with `save_sections`,
        manim writes it as its own video: render.py --chapters), noted with its start time and the
        section itself (the chapter's title card, played next, belongs to it)."""
        self.next_section(key)
        writer = getattr(self.renderer, "file_writer", None)
        sections = getattr(writer, "sections", None)
        self.chapter_marks.append((key, float(self.renderer.time), sections[-1] if sections else None))

    def show_head_note(self, text: str) -> None:
        """Why this head (its lesson's role could not be measured on the model): the note on an opaque
        plate in the middle of the frame while the caption says it, then gone before the first chapter."""
        from .chapters.honest import wrapped

        stage, th = self.stage, self.theme
        full = stage.region("full")
        choice = self.setting.head_choice
        head = self.say.head_name(choice.layer, choice.head)  # one line: never "layer 0 ·" / "head 0"
        shown = text.replace(head, head.replace(" ", "\u00a0"))
        lines = wrapped(shown, min(full.width - 1.0, 11.0), 28, th.text, max_lines=6)
        plate = SurroundingRectangle(lines, buff=0.3, corner_radius=0.08, color=th.dim, stroke_width=1.5)
        plate.set_fill(th.background, opacity=0.94)
        note = VGroup(plate, lines)
        full.fit(note)
        with stage.narrating(text):
            self.play(FadeIn(note, shift=UP * 0.1), run_time=0.6)
        self.play(FadeOut(note), run_time=0.4)
        self.remove(note)

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
            # sits on its own opaque plate at the top right for a moment, like a lower third
            stage.clear(keep=tuple(stage.kept_with_parts()))
            stage.drawn.setdefault("cards", {})[chapter.key] = list(stage.mobjects)  # what the card stands over
            text = VGroup(label(title, font_size=30, color=th.text),
                          label(subtitle, font_size=22, color=th.dim)).arrange(DOWN, buff=0.15, aligned_edge=LEFT)
            plate = SurroundingRectangle(text, buff=0.2, corner_radius=0.08, color=th.dim, stroke_width=1.5)
            plate.set_fill(th.background, opacity=0.94)
            card = VGroup(plate, text)
            place_clear_of(card, stage.kept_with_parts(), stage.region("full"))
            with stage.narrating(travel):  # the card is still up as the caption ends: its key frame shows it
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


def make_narrator(inputs: SceneInputs):
    """The clip's narrator (render --voice / --voice-dir), or None for a silent clip."""
    if not (inputs.voice or inputs.voice_dir):
        return None
    from attention_manim.voice import Narrator

    return Narrator(inputs.lang, voice=inputs.voice, voice_dir=inputs.voice_dir)


def _boxes(mobjects) -> list[tuple[float, float, float, float]]:
    out = []
    for m in mobjects:
        for sub in m.family_members_with_points():
            if sub.get_fill_opacity() == 0 and sub.get_stroke_opacity() == 0:
                continue
            (x0, y0, _), (x1, y1, _) = sub.get_corner(DOWN + LEFT), sub.get_corner(UP + RIGHT)
            out.append((x0, y0, x1, y1))
    return out


def place_clear_of(card, pictures, area) -> None:
    """Put `card` in the first corner of `area` (top right, bottom right, bottom left, top left)
    where it covers none of `pictures`; if every corner is taken, top right (its plate is opaque)."""
    boxes = _boxes(pictures)
    corners = (UP + RIGHT, DOWN + RIGHT, DOWN + LEFT, UP + LEFT)
    for size in (1.0, 0.8, 0.65):  # a smaller card before one that covers anything
        card.scale(size / getattr(card, "placed_size", 1.0))
        card.placed_size = size
        for corner in corners:
            card.move_to(area.center)
            card.shift(corner * [(area.width - card.width) / 2, (area.height - card.height) / 2, 0])
            (cx0, cy0, _), (cx1, cy1, _) = card.get_corner(DOWN + LEFT), card.get_corner(UP + RIGHT)
            if not any(x0 < cx1 and cx0 < x1 and y0 < cy1 and cy0 < y1 for x0, y0, x1, y1 in boxes):
                return
    card.scale(1.0 / card.placed_size)
    card.move_to(area.center).shift(UP * (area.height - card.height) / 2 + RIGHT * (area.width - card.width) / 2)


def lesson_scene(lesson: Lesson, description: str = "") -> type:
    """The manim scene class that plays `lesson` (not registered: tests build lessons of their own)."""
    base = ThreeDScene if lesson.three_d else MovingCameraScene
    cls_name = "".join(p.title() for p in lesson.name.split("_")) + "Lesson"
    return type(cls_name, (LessonSceneBase, base), {"lesson": lesson, "description": description,
                                                      "__module__": __name__})


def register_lesson(lesson: Lesson) -> type:
    """Make `lesson` renderable as `python render.py NAME`; returns its scene class."""
    cls = lesson_scene(lesson, Say("en")(f"lessons.{lesson.name}.description"))
    return register(lesson.name)(cls)


def describe(name: str, lang: str = "en") -> str:
    """A lesson's one-line description in `lang` (for `render.py list`)."""
    return Say(lang)(f"lessons.{name}.description")
