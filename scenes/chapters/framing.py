"""A lesson's opening (its title over the sentence and the head it follows) and its closing words."""

from __future__ import annotations

from manim import DOWN, UP, FadeIn, SurroundingRectangle, VGroup

from ..components.pictures import picture_for
from ..components.text import label
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter
from ..plans.framing import IntroPlan, OutroPlan, plan_intro, plan_outro
from ..stage import Stage


class Intro(Chapter):
    key = "intro"

    def __init__(self, lesson: str):
        self.lesson = lesson

    def plan(self, setting) -> IntroPlan:
        return plan_intro(setting, self.lesson)

    def play(self, stage: Stage, plan: IntroPlan) -> None:
        th, say = stage.theme, stage.say
        title = label(say(f"lessons.{plan.lesson}.title"), font_size=60, color=th.text)
        full = stage.region("full")
        if title.width > full.width:
            title.scale_to_fit_width(full.width)
        title.move_to([0, 1.2, 0])
        words = WordBoxes(plan.tokens, theme=th, font_size=40, max_width=full.width - 0.5)
        words.next_to(title, DOWN, buff=0.7)
        if plan.role and say.has(f"common.roles.{plan.role}"):
            role = say.role(plan.role, plan.head.layer, plan.head.head)
            sub_text = say("common.head.layer_head_role", layer=plan.head.layer, head=plan.head.head, role=role)
        else:  # a head with no named role: "layer 13 · head 2", not "layer 13 · head 2: layer 13 · head 2"
            sub_text = say.head_name(plan.head.layer, plan.head.head)
        sub = label(sub_text, font_size=26, color=th.dim)
        sub.next_to(words, DOWN, buff=0.5)
        stage.drawn["intro"] = {"title": title, "words": words, "head": sub}
        picture = picture_for(plan.lesson, th, height=1.5)
        if picture is not None:  # above the title, clear of it and of the frame's top
            picture.scale_to_fit_height(min(1.5, full.top - title.get_top()[1] - 0.45))
            picture.next_to(title, UP, buff=0.3)
            stage.drawn["intro"]["picture"] = picture
        with stage.narrating(say(f"lessons.{plan.lesson}.intro")):
            stage.play(FadeIn(title, shift=DOWN * 0.2), *([FadeIn(picture, scale=0.8)] if picture is not None else []),
                       run_time=0.8)
            stage.play(FadeIn(words, lag_ratio=0.08), FadeIn(sub), run_time=1.2)
            stage.wait(2.2)


class Outro(Chapter):
    key = "outro"

    def __init__(self, lesson: str):
        self.lesson = lesson

    def plan(self, setting) -> OutroPlan:
        return plan_outro(setting, self.lesson)

    def play(self, stage: Stage, plan: OutroPlan) -> None:
        """The lesson's title comes back as a closing card while the closing words are said (the words over
        the unchanged last picture left the clip's last key frame a copy of the one before)."""
        th = stage.theme
        frame = stage.camera_frame
        title = label(stage.say(f"lessons.{plan.lesson}.title"), font_size=52, color=th.text)
        title.scale_to_fit_width(min(title.width, frame.width * 0.8))
        plate = SurroundingRectangle(title, buff=0.35, corner_radius=0.08, color=th.dim, stroke_width=1.5)
        card = VGroup(plate, title).move_to(frame.get_center())
        stage.drawn[self.key] = {"card": card}
        with stage.narrating(stage.say(f"lessons.{plan.lesson}.outro")):
            stage.clear(run_time=0.5)
            stage.play(FadeIn(card, shift=UP * 0.2), run_time=0.8)
            stage.wait(1.7)
