"""`fluffy_blue_creature`: the flagship. One attention head, step by step, on one canvas.

query → key → dot products → softmax → masking → values (→ the formula), every step the same
method the stand-alone scene plays (`QKVSteps` from one_head_qkv.py, `GridSteps` from
one_head_grid.py). Between steps the camera travels right to a title card, leaving the old
picture behind; then it is quietly re-centred (card and camera together, so nothing visibly
jumps) and the next step builds on a clean canvas with the camera where every step expects it.
Where a grid step goes on with the grid the previous one left (softmax, masking), the grid stays
and a small chapter title shows in the corner instead.

`--sentence` / `--focus` / `--head` / `--layer` work as for the steps; `self.steps_played` lists
the steps in the order they ran (for tests).
"""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, VGroup, config

from .base import TraceScene
from .components.text import label
from .components.word_boxes import WordBoxes
from .one_head_qkv import QKVSteps
from .registry import register

from .one_head_grid import GridSteps

# (method, card title, card subtitle, caption while the camera travels) — our own words
STEPS = (
    ("step_query", "1 · Queries", "each word asks a question",
     "First, every word turns its embedding into a question: its query."),
    ("step_key", "2 · Keys", "each word offers an answer",
     "Next, every word also gets a key: the answer it can offer."),
    ("step_dot_products", "3 · Scores", "how well each key fits each query",
     "Then every key meets every query in a dot product."),
    ("step_softmax", "4 · Softmax", "scores become weights",
     "Next, the raw scores have to become weights."),
    ("step_masking", "5 · Masking", "no peeking at later words",
     "In a model that predicts the next word, no word may look ahead."),
    ("step_values", "6 · Values", "what flows along the weights",
     "Finally, the weights decide how much of each word's value flows in."),
    ("step_formula", "In one line", "the whole head as a formula",
     "All of it fits in one line of algebra."),
)


# grid steps that go on with the grid an earlier step left on screen
GRID_CONTINUES = ("step_softmax", "step_masking")


@register("fluffy_blue_creature")
class FluffyBlueCreature(QKVSteps, GridSteps, TraceScene):
    description = ("the flagship: one attention head step by step (query, key, scores, softmax, masking, "
                   "values) on one canvas, every number from the model")

    def construct(self):
        self.steps_played: list[str] = []
        self.intro()
        for k, (method, title, subtitle, caption) in enumerate(STEPS):
            step = getattr(self, method, None)
            if step is None:
                continue
            grid = getattr(self, "grid", None)
            if method in GRID_CONTINUES and grid is not None and grid in self.mobjects:
                self.chapter_in_place(title, subtitle, caption)  # the grid stays; the step goes on with it
            else:
                self.travel_to_card(title, subtitle, caption)
            step()
            self.steps_played.append(method)
        self.outro()

    # --- framing ----------------------------------------------------------------------
    def intro(self):
        th = self.theme
        tr, ht = self.trace, self.head_trace()
        title = label("One head of attention", font_size=60, color=th.text).move_to(UP * 1.2)
        words = WordBoxes(tr.tokens, theme=th, font_size=40, max_width=13).next_to(title, DOWN, buff=0.7)
        sub = label(f"layer {self.layer}, head {self.head_index}: {ht.name}", font_size=26, color=th.dim)
        sub.next_to(words, DOWN, buff=0.5)
        with self.narrating("Let's follow one attention head through a short phrase. Every number shown comes "
                            "from a small trained model."):
            self.play(FadeIn(title, shift=DOWN * 0.2), run_time=0.8)
            self.play(FadeIn(words, lag_ratio=0.08), FadeIn(sub), run_time=1.2)
            self.wait(2.2)

    def travel_to_card(self, title: str, subtitle: str, caption: str):
        """The camera glides right to a title card; the old picture stays behind and goes."""
        th = self.theme
        frame = self.camera.frame
        d = RIGHT * (config.frame_width + 1.0)
        card = VGroup(label(title, font_size=52, color=th.text),
                      label(subtitle, font_size=30, color=th.dim)).arrange(DOWN, buff=0.3)
        card.move_to(frame.get_center() + d)
        old = list(self.mobjects)
        with self.narrating(caption):
            self.add(card)
            self.play(frame.animate.shift(d), run_time=1.3)
            # nothing visible changes here: the camera and the card move back together
            self.remove(*old)
            frame.shift(-d)
            card.shift(-d)
            self.wait(1.0)
            self.play(FadeOut(card, shift=UP * 0.3), run_time=0.5)

    def chapter_in_place(self, title: str, subtitle: str, caption: str):
        """A small chapter title in the top-left corner while the picture stays (the grid
        steps continue from the grid the previous step left)."""
        th = self.theme
        card = VGroup(label(title, font_size=30, color=th.text),
                      label(subtitle, font_size=22, color=th.dim)).arrange(RIGHT, buff=0.3, aligned_edge=DOWN)
        card.to_corner(UP + LEFT, buff=0.25)
        with self.narrating(caption):
            self.play(FadeIn(card, shift=RIGHT * 0.2), run_time=0.6)
            self.wait(1.6)
            self.play(FadeOut(card), run_time=0.4)

    def outro(self):
        with self.narrating("That is one head: queries and keys decide who listens to whom; values carry the "
                            "message."):
            self.wait(3.0)
