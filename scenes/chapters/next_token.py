"""`next_token`: the last vector becomes a probability bar chart over the vocabulary (real
probabilities, the rest summed and said), one token is picked and appended, and the longer text
goes through the model again, a few times. `NextTokenLesson` traces the longer texts when it makes
the setting (see plans/next_token.py)."""

from __future__ import annotations

from dataclasses import dataclass

from manim import DOWN, LEFT, RIGHT, FadeIn, FadeOut, GrowFromEdge, Rectangle, SurroundingRectangle, VGroup

from ..components.text import label, number
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter, Lesson
from ..plans.next_token import NextStep, NextTokenPlan, plan_next_token, with_next_traces
from ..stage import Stage
from .embedding_parts import fit_into

T = "deeper.next_token"
BAR_MAX = 6.0  # the length of a bar of probability 1
ROW = 0.62


@dataclass(frozen=True)
class NextTokenLesson(Lesson):
    """A lesson whose setting also holds the trace of each longer text (one forward pass per step)."""

    def setting(self, inputs):
        return with_next_traces(super().setting(inputs), inputs.tracer)


class NextToken(Chapter):
    key = "next_token"

    def plan(self, setting) -> NextTokenPlan:
        return plan_next_token(setting)

    def sentence(self, stage: Stage, tokens, new: int) -> WordBoxes:
        """The text so far; the tokens the model added are drawn in the value colour."""
        th = stage.theme
        full = stage.region("full")
        boxes = WordBoxes(tokens, theme=th, font_size=32)
        for i in range(len(tokens) - new, len(tokens)):
            boxes.recolor(i, th.value, word=True)
        fit_into(boxes, full.width - 0.4, 0.8)
        boxes.move_to([0, full.top - 0.9, 0])
        return boxes

    def chart(self, stage: Stage, step: NextStep, vocab_size: int) -> VGroup:
        """One bar per likely token (its length is its probability), its number, and the rest summed."""
        th, say = stage.theme, stage.say
        rows = VGroup()
        for r, (tok, p) in enumerate(zip(step.top_tokens, step.top_probs)):
            y = 1.2 - r * ROW
            name = label(tok, font_size=28, color=th.text)
            fit_into(name, 2.6, 0.5)
            name.move_to([-3.0, y, 0], aligned_edge=RIGHT)
            bar = Rectangle(width=max(BAR_MAX * p, 0.02), height=0.38, stroke_width=0)
            bar.set_fill(th.query if r == step.picked_rank else th.key, opacity=0.85)
            bar.move_to([-2.8, y, 0], aligned_edge=LEFT)
            val = number(p, "weight", font_size=24, color=th.text).next_to(bar, RIGHT, buff=0.15)
            row = VGroup(name, bar, val)
            row.name, row.bar, row.val = name, bar, val
            rows.add(row)
        rest = label(say(f"{T}.rest", count=vocab_size - len(step.top_tokens), p=step.rest), font_size=24,
                     color=th.dim)
        fit_into(rest, 9.0, 0.5)
        rest.move_to([-3.0, 1.2 - len(step.top_tokens) * ROW - 0.1, 0], aligned_edge=LEFT)
        chart = VGroup(rows, rest)
        chart.rows, chart.rest = rows, rest
        return chart

    def play(self, stage: Stage, plan: NextTokenPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn[self.key] = {"charts": [], "sentences": []}
        n0 = len(plan.steps[0].tokens)
        words = self.sentence(stage, plan.steps[0].tokens, 0)
        words.highlight(len(plan.steps[0].tokens) - 1, th.query)
        drawn["sentences"].append(words)
        with stage.narrating(say(f"{T}.caption_intro", word=say.quote(plan.steps[0].tokens[-1]))):
            stage.play(FadeIn(words, lag_ratio=0.05), run_time=1.2)
            stage.wait(0.6)
        for s, step in enumerate(plan.steps):
            chart = self.chart(stage, step, plan.vocab_size)
            drawn["charts"].append(chart)
            with stage.narrating(say(f"{T}.caption_probs", count=plan.vocab_size, top=len(step.top_tokens),
                                     rest=step.rest)):
                stage.play(*(FadeIn(r.name) for r in chart.rows),
                           *(GrowFromEdge(r.bar, LEFT) for r in chart.rows), run_time=1.0)
                stage.play(*(FadeIn(r.val) for r in chart.rows), FadeIn(chart.rest), run_time=0.5)
                stage.wait(0.8)
            how = "caption_greedy" if plan.temperature is None else "caption_sampled"
            with stage.narrating(say(f"{T}.{how}", word=say.quote(step.picked_token), p=step.picked_prob,
                                     temperature=plan.temperature or 1.0)):
                moving = label(step.picked_token, font_size=28, color=th.value)
                if step.picked_rank >= 0:
                    row = chart.rows[step.picked_rank]
                    ring = SurroundingRectangle(VGroup(row.name, row.bar, row.val), color=th.value, buff=0.08)
                    stage.play(FadeIn(ring), run_time=0.5)
                    moving.move_to(row.name)
                else:
                    ring = VGroup()
                    moving.next_to(chart.rest, DOWN, buff=0.2)
                    stage.play(FadeIn(moving), run_time=0.4)
                longer = self.sentence(stage, step.tokens + (step.picked_token,), s + 1)
                drawn["sentences"].append(longer)
                stage.play(moving.animate.move_to(longer.word(len(longer.tokens) - 1)),
                           FadeOut(chart), FadeOut(ring), run_time=1.0)
                stage.play(FadeOut(words), FadeOut(moving), FadeIn(longer), run_time=0.5)
                words = longer
            if s + 1 < len(plan.steps):
                words.highlight(len(words.tokens) - 1, th.query)
                with stage.narrating(say(f"{T}.caption_again", count=len(words.tokens))):
                    stage.wait(0.8)
        added = len(plan.final_tokens) - n0
        note = label(say(f"{T}.summary", count=added), font_size=26, color=th.text)
        fit_into(note, stage.region("full").width - 0.4, 0.6).move_to([0, 0.2, 0])
        drawn["note"] = note
        with stage.narrating(say(f"{T}.caption_closing", count=added)):
            stage.play(FadeIn(note), run_time=0.8)
            stage.wait(2.0)
