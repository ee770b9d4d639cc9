"""`going_deeper`: attention and MLP blocks alternate. The last token's vector passes through every
layer; what each attention block and each MLP adds to it is drawn as a bar (its real length), and
after each layer the model's current best guess for the next token is read out through the
unembedding (the logit lens). The layer where the final answer first leads is measured (plan).
On the toy (one layer, no MLP) the chapter says so and names a real model to try."""

from __future__ import annotations

from manim import DOWN, PI, RIGHT, UP, FadeIn, GrowFromEdge, LaggedStart, Rectangle, SurroundingRectangle, VGroup

from ..components.text import label
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter
from ..plans.next_token import GoingDeeperPlan, plan_going_deeper
from ..stage import Stage
from .embedding_parts import fit_into

T = "deeper.going_deeper"
BASE_Y = -0.2  # the bars stand on this line; the guesses hang below it
BAR_H = 2.0  # the height of the largest bar


class GoingDeeper(Chapter):
    key = "going_deeper"

    def plan(self, setting) -> GoingDeeperPlan:
        return plan_going_deeper(setting)

    def columns(self, stage: Stage, plan: GoingDeeperPlan) -> VGroup:
        """Per layer: the attention bar and the MLP bar side by side, the layer's number, the guess."""
        th = stage.theme
        full = stage.region("full")
        n = plan.n_layers
        width = min((full.width - 1.0) / n, 1.6)
        x0 = -width * (n - 1) / 2
        top = max(max(plan.attn_norms), max(plan.mlp_norms), 1e-9)
        cols = VGroup()
        for l in range(n):
            x = x0 + l * width
            bw = width * 0.36
            attn = Rectangle(width=bw, height=max(BAR_H * plan.attn_norms[l] / top, 0.01), stroke_width=0)
            attn.set_fill(th.key, opacity=0.9).move_to([x - bw / 2, BASE_Y, 0], aligned_edge=DOWN)
            mlp = Rectangle(width=bw, height=max(BAR_H * plan.mlp_norms[l] / top, 0.01), stroke_width=0)
            mlp.set_fill(th.value, opacity=0.9 if plan.has_mlp else 0.0).move_to([x + bw / 2, BASE_Y, 0],
                                                                                aligned_edge=DOWN)
            num = label(str(l + 1), font_size=16 if n > 12 else 22, color=th.dim)
            fit_into(num, width * 0.95, 0.3).move_to([x, BASE_Y - 0.2, 0])
            right = plan.guesses[l] == plan.answer
            word = label(plan.guesses[l].strip() or "␣", font_size=18 if n > 12 else 26,
                         color=th.query if right else th.text)
            # a thin box, so that a guess of one punctuation mark ("," or ".") still reads as a token
            guess = VGroup(SurroundingRectangle(word, buff=0.05, corner_radius=0.04, stroke_width=1,
                                                color=th.query if right else th.dim), word)
            if n > 6:
                guess.rotate(PI / 2)
            fit_into(guess, width * 0.95, 1.6).move_to([x, BASE_Y - 0.45, 0], aligned_edge=UP)
            col = VGroup(attn, mlp, num, guess)
            col.attn, col.mlp, col.num, col.guess = attn, mlp, num, guess
            cols.add(col)
        return cols

    def play(self, stage: Stage, plan: GoingDeeperPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        words = WordBoxes(plan.tokens, theme=th, font_size=30)
        fit_into(words, full.width - 0.4, 0.7).move_to([0, full.top - 0.4, 0])
        words.highlight(len(plan.tokens) - 1, th.query)
        legend = VGroup(*(VGroup(Rectangle(width=0.3, height=0.2, stroke_width=0).set_fill(c, opacity=0.9),
                                 label(say(f"{T}.{k}"), font_size=22, color=th.text)).arrange(RIGHT, buff=0.12)
                          for c, k in ((th.key, "attention"), (th.value, "mlp"))[:2 if plan.has_mlp else 1]))
        legend.arrange(RIGHT, buff=0.5)
        fit_into(legend, full.width - 0.4, 0.35).next_to(words, DOWN, buff=0.25)
        cols = self.columns(stage, plan)
        drawn = stage.drawn[self.key] = {"words": words, "columns": cols, "legend": legend}
        intro = "caption_intro" if plan.deep else "caption_toy"
        with stage.narrating(say(f"{T}.{intro}", count=plan.n_layers, word=say.quote(plan.tokens[-1]))):
            stage.play(FadeIn(words, lag_ratio=0.05), FadeIn(legend), run_time=1.0)
            stage.play(LaggedStart(*(FadeIn(c.num) for c in cols), lag_ratio=0.05), run_time=1.0)
        with stage.narrating(say(f"{T}.caption_blocks")):
            stage.play(LaggedStart(*(GrowFromEdge(VGroup(c.attn, c.mlp), DOWN) for c in cols), lag_ratio=0.3),
                       run_time=min(1.0 + 0.15 * plan.n_layers, 5.0))
        with stage.narrating(say(f"{T}.caption_lens")):
            stage.play(LaggedStart(*(FadeIn(c.guess, shift=DOWN * 0.1) for c in cols), lag_ratio=0.3),
                       run_time=min(1.0 + 0.15 * plan.n_layers, 5.0))
            stage.wait(0.6)
        if plan.emergence is not None:
            col = cols[plan.emergence]
            ring = SurroundingRectangle(VGroup(col.num, col.guess), color=th.query, buff=0.06)
            text = say(f"{T}.emerges", word=say.quote(plan.answer), layer=plan.emergence + 1,
                       count=plan.n_layers, p=plan.answer_probs[plan.emergence], final=plan.answer_probs[-1])
        else:
            ring = VGroup()
            text = say(f"{T}.never", word=say.quote(plan.answer), count=plan.n_layers)
        lines = [text] if plan.deep else [text, say(f"{T}.toy_note"), say(f"{T}.toy_try")]
        note = VGroup(*(label(t, font_size=24, color=th.text) for t in lines)).arrange(DOWN, buff=0.12)
        fit_into(note, full.width - 0.4, 1.0).move_to([0, full.bottom + 0.55, 0])
        drawn.update(note=note, ring=ring)
        with stage.narrating(say(f"{T}.caption_emerges" if plan.emergence is not None else f"{T}.caption_never",
                                 word=say.quote(plan.answer), layer=(plan.emergence or 0) + 1,
                                 count=plan.n_layers)):
            stage.play(FadeIn(ring), FadeIn(note), run_time=0.8)
            stage.wait(2.5)
