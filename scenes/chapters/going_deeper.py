"""`going_deeper`: attention and MLP blocks alternate. The last token's vector passes through every
layer; what each attention block and each MLP adds to it is drawn as a bar (its real length), and
after each layer the model's current best guess for the next token is read out through the
unembedding (the logit lens). The layer where the final answer first leads is measured (plan).
On the toy (one layer, no MLP) the chapter says so and names a real model to try."""

from __future__ import annotations

from manim import (DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, GrowFromEdge, Indicate, LaggedStart, Line, Rectangle, ReplacementTransform,
                   SurroundingRectangle, VGroup)

from ..components.bars import round_ticks
from ..components.text import SPACE_MARK, label, number_language
from ..i18n import localize_number
from ..components.word_boxes import WordBoxes, space_key
from ..lesson import Chapter
from ..plans.next_token import GoingDeeperPlan, plan_going_deeper
from ..stage import Stage
from .embedding_parts import fit_into
from .honest import wrapped

T = "deeper.going_deeper"
WORD_FS = 32  # the tokens' size (and the ␣ in their key)
BASE_Y = 0.75  # the bars stand on this line
BAR_H = 1.55  # the height of the largest bar
BARS_LEFT = -5.0  # the bars start here; the axis titles sit left of them
TICK_Y = 0.48  # the layer numbers under the bars
LENS_TOP = 0.05  # the logit lens's title; its cards below
PER_ROW = 10  # lens cards per row
CARD_W, CARD_H, CARD_GAP = 1.28, 0.74, 0.08
NAME_MARGIN = 0.14  # a mark's name ("(comma)") keeps this much room each side inside its card


def length_scale(plan: GoingDeeperPlan) -> tuple[list[float], int]:
    """The bars' axis: round lengths (1, 2 or 5 × 10ᵏ apart, at most six from 0) ending on the first at or above the
    tallest bar, and their decimals. Every tick is a round length: a last tick at the tallest bar's own length
    ("444" over 400) read as a stray figure (review 49)."""
    return round_ticks(max(max(plan.attn_norms), max(plan.mlp_norms), 1e-9), past_top=True)


def punctuation(token: str) -> bool:
    """A token of marks alone ("," "." "␣("): no letter or digit once its space mark is set aside."""
    body = token.replace(SPACE_MARK, "").strip()
    return bool(body) and not any(c.isalnum() for c in body)


class GoingDeeper(Chapter):
    key = "going_deeper"
    own_space_key = True

    def plan(self, setting) -> GoingDeeperPlan:
        return plan_going_deeper(setting)

    def columns(self, stage: Stage, plan: GoingDeeperPlan, base_y: float = BASE_Y, bar_h: float = BAR_H) -> VGroup:
        """Per layer: the attention bar and the MLP bar side by side (their real lengths, to one
        scale, standing on `base_y`, the largest `bar_h` tall), and the logit lens's card: the layer's
        number over the model's top guess after it."""
        th, say = stage.theme, stage.say
        full = stage.region("full")
        n = plan.n_layers
        width = min((full.right - BARS_LEFT) / n, 1.6)
        x0 = BARS_LEFT + width / 2 if n > 1 else (BARS_LEFT + full.right) / 2
        top = length_scale(plan)[0][-1]
        per_row = min(PER_ROW, n)
        cols = VGroup()
        for l in range(n):
            x = x0 + l * width
            bw = width * 0.4
            attn = Rectangle(width=bw, height=max(bar_h * plan.attn_norms[l] / top, 0.01), stroke_width=0)
            # a model without MLPs: the attention bar alone, centred on its layer (its highlight box then
            # fits it, not the empty half where an MLP bar would stand)
            side = bw / 2 if plan.has_mlp else 0.0
            attn.set_fill(th.key, opacity=0.9).move_to([x - side, base_y, 0], aligned_edge=DOWN)
            mlp = Rectangle(width=bw, height=max(bar_h * plan.mlp_norms[l] / top, 0.01), stroke_width=0)
            mlp.set_fill(th.value, opacity=0.9 if plan.has_mlp else 0.0).move_to([x + side, base_y, 0],
                                                                                aligned_edge=DOWN)
            right = plan.guesses[l] == plan.answer
            r, c = divmod(l, per_row)
            cx = (c - (per_row - 1) / 2) * (CARD_W + CARD_GAP)
            cy = LENS_TOP - 0.45 - CARD_H / 2 - r * (CARD_H + CARD_GAP)
            box = Rectangle(width=CARD_W, height=CARD_H, stroke_width=2.5 if right else 1,
                            stroke_color=th.query if right else th.dim)
            box.set_fill(th.query if right else th.box_fill, opacity=0.18 if right else 0.0).move_to([cx, cy, 0])
            num = label(str(l), font_size=20, color=th.dim)  # layers from 0, as in every lesson
            num.move_to([cx - CARD_W / 2 + 0.08, cy + CARD_H / 2 - 0.06, 0], aligned_edge=UP + LEFT)
            # a small mark named, "(comma)": a 4-6 px speck on a card read as nothing (review 48)
            token = plan.guesses[l]
            named = say.mark_label(token)
            word = label(named or token.strip() or "␣", font_size=24 if named else 30, color=th.query if right else th.text)
            word.token = token
            # (under the layer's number, clear of it: "1(vírgula)" read as one)
            # a name keeps a margin inside its card ("(comma)" edge to edge read as part of the border: review 48)
            fit_into(word, CARD_W - (2 * NAME_MARGIN if named else 0.14), CARD_H - 0.4).move_to([cx, cy - 0.14, 0])
            guess = VGroup(box, word)
            col = VGroup(attn, mlp, num, guess)
            col.attn, col.mlp, col.num, col.guess, col.word, col.right = attn, mlp, num, guess, word, right
            col.named = bool(named)
            cols.add(col)
        # every mark's name at one size, the smallest any card needed ("(vírgula)" beside a larger "(ponto)"
        # read as two kinds of card: review 49)
        names = [c.word for c in cols if c.named]
        if names:
            size = min(w.height for w in names)
            for w in names:
                w.scale(size / w.height, about_point=w.get_center())
        return cols

    @staticmethod
    def ticks(stage: Stage, plan: GoingDeeperPlan, cols: VGroup, tick_y: float = TICK_Y) -> VGroup:
        """Layer numbers under the bars, from 0: the first, every fifth and the last (all of them up to 12)."""
        th = stage.theme
        n = plan.n_layers
        shown = range(n) if n <= 12 else sorted({0, n - 1, *range(5, n - 2, 5)})
        return VGroup(*(label(str(l), font_size=22, color=th.dim).move_to(
            [VGroup(cols[l].attn, cols[l].mlp).get_center()[0], tick_y, 0]) for l in shown))

    @staticmethod
    def y_scale(stage: Stage, plan: GoingDeeperPlan, base_y: float = BASE_Y, bar_h: float = BAR_H) -> VGroup:
        """Left of the bars: a vertical axis with ticks at round lengths (`length_scale`), the last at its
        top, so a bar's height reads as a number."""
        th = stage.theme
        values, digits = length_scale(plan)
        step, top = values[1], values[-1]
        x = BARS_LEFT - 0.08
        axis = Line([x, base_y, 0], [x, base_y + bar_h, 0], stroke_color=th.dim, stroke_width=2)
        marks = VGroup()
        for value in values[1:]:
            y = base_y + bar_h * value / top
            tick = Line([x - 0.08, y, 0], [x, y, 0], stroke_color=th.dim, stroke_width=2)
            num = label(localize_number(f"{value:.{digits}f}", number_language()), 20, th.dim)
            num.next_to(tick, LEFT, buff=0.06)
            marks.add(VGroup(tick, num))
        out = VGroup(axis, marks)
        out.step, out.top, out.marks = step, top, marks
        return out

    def tall_chart(self, stage: Stage, plan: GoingDeeperPlan, x_title, top: float) -> VGroup:
        """The bars, their ticks, scale and layer title as they first stand: from `top` (under the
        legend) down to the foot of the frame."""
        full = stage.region("full")
        base = full.bottom + 0.75
        bar_h = top - base
        cols = self.columns(stage, plan, base, bar_h)
        ticks = self.ticks(stage, plan, cols, base - (BASE_Y - TICK_Y))
        scale = self.y_scale(stage, plan, base, bar_h)
        title = x_title.copy().shift(UP * (ticks[0].get_y() - x_title.get_y()))
        out = VGroup(*(VGroup(c.attn, c.mlp) for c in cols), ticks, scale, title)
        out.cols, out.ticks, out.scale, out.x_title = cols, ticks, scale, title
        out.base, out.bar_h = base, bar_h  # as they stand (they turn into the settled bars later)
        return out

    def play(self, stage: Stage, plan: GoingDeeperPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        words = WordBoxes(plan.tokens, theme=th, font_size=WORD_FS)
        fit_into(words, full.width - 0.2, 0.7)
        words.move_to([0, full.top - words.height / 2, 0])
        words.highlight(len(plan.tokens) - 1, th.query)
        # the bars' axis titles: what their height is (with the legend), and the layer under them
        y_title = label(say(f"{T}.axis_size"), font_size=24, color=th.dim)
        keys = VGroup(*(VGroup(Rectangle(width=0.3, height=0.22, stroke_width=0).set_fill(c, opacity=0.9),
                               label(say(f"{T}.{k}"), font_size=24, color=th.text)).arrange(RIGHT, buff=0.12)
                        for c, k in ((th.key, "attention"), (th.value, "mlp"))[:2 if plan.has_mlp else 1]))
        legend = VGroup(y_title, *keys).arrange(RIGHT, buff=0.45)
        fit_into(legend, full.width - 0.2, 0.4)
        legend.move_to([full.left + legend.width / 2, BASE_Y + BAR_H + 0.35, 0])
        cols = self.columns(stage, plan)
        ticks = self.ticks(stage, plan, cols)
        scale = self.y_scale(stage, plan)
        x_title = label(say(f"{T}.axis_layer"), font_size=24, color=th.dim)
        fit_into(x_title, BARS_LEFT - full.left - 0.2, 0.4).move_to([BARS_LEFT - 0.2, TICK_Y, 0], aligned_edge=RIGHT)
        lens_title = label(say(f"{T}.lens_title"), font_size=28, color=th.text)
        # a real model's tokens show their leading space as ␣: the key on the lens title's line, at the
        # right (the title moves left to make room)
        key = space_key([*plan.tokens, *plan.guesses], say, th, mark_size=WORD_FS)
        room = full.width - 0.2 - (key.width + 0.5 if key is not None else 0.0)
        fit_into(lens_title, room, 0.45).move_to([0, LENS_TOP - lens_title.height / 2, 0])
        if key is not None:
            lens_title.align_to([full.left + 0.1, 0, 0], LEFT)
            key.move_to([full.right - 0.1 - key.width / 2, lens_title.get_y(), 0])
        drawn = stage.drawn[self.key] = {"words": words, "columns": cols, "legend": legend, "ticks": ticks,
                                         "axis_titles": VGroup(y_title, x_title), "lens_title": lens_title,
                                         "y_scale": scale, "space_key": key}
        # until the lens comes, the bars stand tall, from the same top down to the frame's foot: the
        # frame is the chart's (not a strip of it over an empty frame); then they settle to their place
        # the key (with the first ␣) waits on the legend's line, or under it at the right, until the lens's
        # title takes it onto its own line
        settled = key.get_center() if key is not None else None
        top = BASE_Y + BAR_H
        if key is not None:
            if legend.get_right()[0] + 0.4 < full.right - 0.1 - key.width:
                key.set_y(legend.get_y())
            else:
                key.set_y(legend.get_bottom()[1] - 0.12 - key.height / 2)
                top = key.get_bottom()[1] - 0.12
        tall = self.tall_chart(stage, plan, x_title, top)
        intro = "caption_intro" if plan.deep else "caption_toy"
        with stage.narrating(say(f"{T}.{intro}", count=plan.n_layers, word=say.quote(plan.tokens[-1]))):
            stage.play(FadeIn(words, lag_ratio=0.05), FadeIn(legend), FadeIn(tall.x_title), FadeIn(tall.scale),
                       *([FadeIn(key)] if key is not None else []), run_time=1.0)  # the key with the first ␣
            stage.play(LaggedStart(*(FadeIn(t) for t in tall.ticks), lag_ratio=0.05), run_time=1.0)
        with stage.narrating(say(f"{T}.caption_blocks" if plan.has_mlp else f"{T}.caption_blocks_attention")):
            stage.play(LaggedStart(*(GrowFromEdge(VGroup(c.attn, c.mlp), DOWN) for c in tall.cols), lag_ratio=0.3),
                       run_time=min(1.0 + 0.15 * plan.n_layers, 5.0))
            stage.wait(0.6)
        drawn["tall"] = tall
        with stage.narrating(say(f"{T}.caption_lens")):
            pairs = [(VGroup(t.attn, t.mlp), VGroup(c.attn, c.mlp)) for t, c in zip(tall.cols, cols)]
            pairs += [(tall.ticks, ticks), (tall.scale, scale), (tall.x_title, x_title)]
            stage.play(*(ReplacementTransform(a, b) for a, b in pairs),
                       *([key.animate.move_to(settled)] if key is not None else []), run_time=1.0)
            stage.play(FadeIn(lens_title), run_time=0.5)
            stage.play(LaggedStart(*(FadeIn(VGroup(c.num, c.guess), shift=DOWN * 0.1) for c in cols), lag_ratio=0.3),
                       run_time=min(1.0 + 0.15 * plan.n_layers, 5.0))
            stage.wait(0.6)
        marks = [w for w in dict.fromkeys(c.word.token for c in cols) if punctuation(w)]
        if marks:  # a punctuation mark as a layer's top guess is real, and said so (not left to puzzle over)
            drawn["punctuation"] = marks
            with stage.narrating(say(f"{T}.caption_punctuation", marks=say.words([say.quote(m) for m in marks]))):
                # the marks stay coloured while the caption speaks of them (a pulse would leave the frame
                # as it was, and a paused frame would not show what the caption points at)
                said = [c.word for c in cols if c.word.token in marks]
                # (in blue: yellow is the answer's colour on this frame); a key under the cards says what
                # the blue means while it lasts (review 49: blue cards with no key on a paused frame)
                blue_key = label(say(f"{T}.punctuation_key"), font_size=26, color=th.positive)
                fit_into(blue_key, full.width - 0.2, 0.45)
                cards_foot = min(c.guess.get_bottom()[1] for c in cols)
                blue_key.move_to([full.left + 0.1 + blue_key.width / 2, cards_foot - 0.2 - blue_key.height / 2, 0])
                drawn["punctuation_key"] = blue_key
                stage.play(*(Indicate(w, color=th.positive, scale_factor=1.15) for w in said), FadeIn(blue_key),
                           run_time=1.0)
                stage.play(*(w.animate.set_color(th.positive) for w in said), run_time=0.3)
                stage.wait(0.5)
            stage.play(*(w.animate.set_color(th.text) for w in said), FadeOut(blue_key), run_time=0.3)
        if plan.emergence is not None:
            col = cols[plan.emergence]
            # the card where the answer first leads, and that layer's bars above
            ring = VGroup(SurroundingRectangle(col.guess, color=th.query, buff=0.06, stroke_width=5),
                          SurroundingRectangle(VGroup(col.attn, col.mlp), color=th.query, buff=0.05))
            text = say(f"{T}.emerges", word=say.quote(plan.answer), layer=plan.emergence,
                       count=plan.n_layers, last=plan.n_layers - 1, p=plan.answer_probs[plan.emergence], final=plan.answer_probs[-1])
        else:
            ring = VGroup()
            text = say(f"{T}.never", word=say.quote(plan.answer), count=plan.n_layers)
        if not plan.deep:  # one layer: "first leads after layer 0 of layers 0 to 0" says nothing
            text = say(f"{T}.toy_guess", word=say.quote(plan.answer), p=plan.answer_probs[-1])
        lines = [text] if plan.deep else [text, say(f"{T}.toy_note"), say(f"{T}.toy_try")]
        # a long sentence wraps to a second line rather than shrinking to fit the one line
        note = VGroup(*(wrapped(t, full.width - 0.6, 28, th.text, max_lines=2) for t in lines))
        for part in note:
            for line in part:
                line.set_x(0)
        note.arrange(DOWN, buff=0.14)
        cards_bottom = min(c.guess.get_bottom()[1] for c in cols)
        fit_into(note, full.width - 0.2, cards_bottom - 0.2 - full.bottom)
        note.move_to([0, cards_bottom - 0.2 - note.height / 2, 0])
        drawn.update(note=note, ring=ring)
        closing = ("caption_toy_guess" if not plan.deep else
                   "caption_emerges" if plan.emergence is not None else "caption_never")
        with stage.narrating(say(f"{T}.{closing}", word=say.quote(plan.answer), layer=plan.emergence or 0,
                                 last=plan.n_layers - 1, count=plan.n_layers)):
            stage.play(FadeIn(ring), FadeIn(note), run_time=0.8)
            stage.wait(2.5)
