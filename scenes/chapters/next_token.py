"""`next_token`: the last vector becomes a probability bar chart over the vocabulary (real
probabilities, the rest summed and said), one token is picked and appended, and the longer text
goes through the model again, a few times. `NextTokenLesson` traces the longer texts when it makes
the setting (see plans/next_token.py)."""

from __future__ import annotations

from dataclasses import dataclass

from manim import (
    DOWN, LEFT, RIGHT, UP, Arrow, DashedVMobject, FadeIn, FadeOut, GrowFromEdge, Rectangle, RoundedRectangle, SurroundingRectangle,
    VGroup,
)

from ..components.text import baseline_row, label, mark_glyph, number, text_baseline
from ..components.vectors import VectorColumn
from ..components.softmax_column import finer_kind
from ..plans.rounding import drawn_misses
from ..review import declare_sum
from ..components.word_boxes import WordBoxes, space_key
from ..lesson import Chapter, Lesson
from ..plans.next_token import NextStep, NextTokenPlan, plan_next_token, with_next_traces
from ..stage import Stage
from .embedding_parts import fit_into
from .head_split import model_name
from .honest import wrapped

T = "deeper.next_token"
WORD_FS = 36  # the tokens' size (and the ␣ in their key)
BAR_MAX = 8.2  # the length of a bar of probability 1 (its track is drawn: the bars are to scale)
ROW = 0.74
TOP_Y = 1.66  # the first bar's centre
NAME_X = -3.55  # the token names end here; the tracks start just right of it
VAL_X = NAME_X + 0.25 + BAR_MAX + 0.2  # the probabilities, in one column right of the tracks
CARD_Y = -3.05  # the picked tokens, one card per pass, along the bottom (0.3 off the edge: review 42)


def prob_kind(step: NextStep) -> str:
    """Two decimals, or three where two would show the picked token's probability tied with another's
    ("," and "." both 0.36, "," picked): the softmax column's rule (`finer_kind`)."""
    picked = {r: ("picked" if r == step.picked_rank else "") for r in range(len(step.top_probs))}
    kind = finer_kind(step.top_probs, picked, range(len(step.top_probs)), "weight", "weight3")
    if kind == "weight3":  # three still tie ("tower" and "mole" both 0.043, "tower" picked): four
        kind = finer_kind(step.top_probs, picked, range(len(step.top_probs)), "weight3", "weight4")
    return kind


def lesson_kind(steps) -> str:
    """One precision for the whole lesson, the finest any pass needs: its charts, its cards and its captions
    (review 38: cards at 0.58 beside 0.364; review 41: a card's 0.577 beside its chart's 0.58)."""
    return max((prob_kind(step) for step in steps), key=["weight", "weight3", "weight4"].index)


def prob_spec(kind: str) -> str:
    """The format spec a caption says probabilities written `kind` with: as the chart writes them."""
    return {"weight3": ".3f", "weight4": ".4f"}.get(kind, ".2f")


@dataclass(frozen=True)
class NextTokenLesson(Lesson):
    """A lesson whose setting also holds the trace of each longer text (one forward pass per step)."""

    def setting(self, inputs):
        return with_next_traces(super().setting(inputs), inputs.tracer)


class NextToken(Chapter):
    key = "next_token"
    own_space_key = True
    NAME_HEIGHT = 0.8  # a bar's name may be this tall: two lines at their size (0.7 shrank them: review 44)

    def plan(self, setting) -> NextTokenPlan:
        return plan_next_token(setting)

    def sentence(self, stage: Stage, plan: NextTokenPlan, top: float) -> WordBoxes:
        """The whole final text, laid out once (each pass shows one more box of it: the text grows to
        the right and never moves); the tokens the model added are drawn in the value colour."""
        th = stage.theme
        full = stage.region("full")
        tokens = plan.final_tokens
        boxes = WordBoxes(tokens, theme=th, font_size=WORD_FS)
        for i in range(len(plan.steps[0].tokens), len(tokens)):
            boxes.recolor(i, th.generated, word=True)
        fit_into(boxes, full.width - 0.2, 0.7)
        boxes.move_to([0, top - boxes.height / 2, 0])
        return boxes

    @staticmethod
    def next_slot(stage: Stage, words: WordBoxes, n0: int) -> VGroup:
        """A dashed box as tall as a word's box, a question mark in it, right after the given text."""
        th = stage.theme
        h = words[0].height
        box = DashedVMobject(RoundedRectangle(width=h * 1.1, height=h, corner_radius=0.08, stroke_width=2,
                                              color=th.query), num_dashes=18)
        if n0 < len(words):  # the place the first pick's box takes
            box.move_to(words[n0 - 1]).align_to(words[n0], LEFT)
        else:
            box.next_to(words[n0 - 1], RIGHT, buff=0.12)
        mark = label("?", 34, th.query).move_to(box)
        return VGroup(box, mark)

    @staticmethod
    def token_name(stage: Stage, tok: str):
        """A candidate token as its bar's name; one without a letter or digit (",", ".", ";") in a box
        as tall as a word's, with its name beside it ("comma"): a lone comma is a speck."""
        th, say = stage.theme, stage.say
        if any(c.isalnum() for c in tok):
            return label(tok, font_size=34, color=th.text)
        word = mark_glyph(tok.strip() or tok, 40, th.text)
        box = Rectangle(width=max(word.width + 0.2, 0.5), height=0.52, stroke_width=1.2, stroke_color=th.dim)
        box.round_corners(0.06)
        word.move_to(box)
        word.set_baseline(box.get_y() - word.cap_height() / 2)  # where a capital letter's foot would stand
        mark = say.mark_name(tok)
        if mark is None:
            return VGroup(box, word)
        name = label(mark, font_size=26, color=th.dim)
        room = NAME_X - stage.region("full").left - 0.1 - box.width - 0.15
        if name.width > room:  # on two lines, right-aligned, rather than shrunk ("an exclamation mark": review 43)
            name = wrapped(mark, room, 26, th.dim, 2)
            for line in name:
                line.align_to(name, RIGHT)
        return VGroup(name, VGroup(box, word)).arrange(RIGHT, buff=0.15)

    def chart(self, stage: Stage, step: NextStep, vocab_size: int, kind: str) -> VGroup:
        """One bar per likely token in a track of length 1 (its length is its probability), its
        number (written `kind`), and the rest of the vocabulary summed."""
        th, say = stage.theme, stage.say
        rows = VGroup()
        for r, (tok, p) in enumerate(zip(step.top_tokens, step.top_probs)):
            y = TOP_Y - r * ROW
            name = self.token_name(stage, tok)
            fit_into(name, NAME_X - stage.region("full").left - 0.1, self.NAME_HEIGHT)
            name.move_to([NAME_X, y, 0], aligned_edge=RIGHT)
            track = Rectangle(width=BAR_MAX, height=0.52, stroke_width=1.2, stroke_color=th.dim)
            track.move_to([NAME_X + 0.25, y, 0], aligned_edge=LEFT)
            bar = Rectangle(width=max(BAR_MAX * p, 0.02), height=0.52, stroke_width=0)
            bar.set_fill(th.query if r == step.picked_rank else th.key, opacity=0.85)
            bar.move_to([NAME_X + 0.25, y, 0], aligned_edge=LEFT)
            val = number(p, kind, font_size=30, color=th.text).move_to([VAL_X, y, 0], aligned_edge=LEFT)
            row = VGroup(name, track, bar, val)
            row.name, row.track, row.bar, row.val = name, track, bar, val
            rows.add(row)
        # every other token of the vocabulary, summed: one more bar, in the same track, grey
        y = TOP_Y - len(step.top_tokens) * ROW
        words = VGroup(label(say(f"{T}.rest", count=vocab_size - len(step.top_tokens)), font_size=26, color=th.dim),
                       label(say(f"{T}.rest_all"), font_size=26, color=th.dim)).arrange(DOWN, buff=0.08,
                                                                                        aligned_edge=RIGHT)
        fit_into(words, NAME_X - stage.region("full").left - 0.1, 0.75)
        words.move_to([NAME_X, y, 0], aligned_edge=RIGHT)
        track = Rectangle(width=BAR_MAX, height=0.52, stroke_width=1.2, stroke_color=th.dim)
        track.move_to([NAME_X + 0.25, y, 0], aligned_edge=LEFT)
        bar = Rectangle(width=max(BAR_MAX * step.rest, 0.02), height=0.52, stroke_width=0)
        bar.set_fill(th.dim, opacity=0.6).move_to([NAME_X + 0.25, y, 0], aligned_edge=LEFT)
        val = number(step.rest, kind, font_size=30, color=th.dim).move_to([VAL_X, y, 0], aligned_edge=LEFT)
        rest = VGroup(words, track, bar, val)
        rest.name, rest.track, rest.bar, rest.val = words, track, bar, val
        # the column of probabilities adds up to 1: "Σ = 1.00" under it, "Σ ≈ 1.00" where the
        # rounded figures drawn miss it (0.99, 1.01)
        total = number(1.0, "weight", font_size=30, color=th.text)  # 1.00: "1.000" reads as a thousand
        vals = [r.val for r in rows] + [val]
        approx = drawn_misses([m.shown for m in vals], total.shown)
        sigma = label("Σ ≈" if approx else "Σ =", font_size=30, color=th.text)  # symbols, as the softmax column's
        sum_row = baseline_row([sigma, total], buff=0.2)  # (at 0.12 "≈1,00" touched; centred, "Σ =" stood 3 px low)
        sum_row.shift([val.get_left()[0] - total.get_left()[0], y - ROW * 0.75 - total.get_y(), 0])  # under the figures
        declare_sum(sum_row, vals, total, [sigma] if approx else [], name="next-token probabilities")
        if approx:  # the ≈ says why, in a word under it, clear of the picks' row (review 50: "Σ ≈ 1.00" unexplained)
            why = label(stage.say("common.rounding.rounded"), font_size=22, color=th.dim)
            why.next_to(sum_row, DOWN, buff=0.1).align_to(sum_row, RIGHT)
            sum_row.add(why)
            sum_row.note = why
        chart = VGroup(rows, rest, sum_row)
        chart.rows, chart.rest, chart.sum_row, chart.approx, chart.kind = rows, rest, sum_row, approx, kind
        return chart

    @staticmethod
    def unmark(words: WordBoxes, i: int, n0: int) -> None:
        """Box i back to its plain look (a token the model added keeps the colour of what it wrote)."""
        words.reset(i)
        if i >= n0:
            words.recolor(i, words.theme.generated, word=True)

    @staticmethod
    def card(stage: Stage, step: NextStep, kind: str) -> VGroup:
        """The token one pass picked, over its probability (written `kind`, one precision for every card)."""
        th, tok = stage.theme, step.picked_token
        mark = None if any(c.isalnum() for c in tok) else stage.say.mark_name(tok)
        if mark is not None:  # a mark drawn large and named (", a comma"): a quoted comma reads as commas
            # (at 40 the comma was 8 px: review 38)
            glyph, name = mark_glyph(tok.strip() or tok, 60, th.generated), label(mark, font_size=24, color=th.dim)
            word = VGroup(glyph, name).arrange(RIGHT, buff=0.15)
            glyph.set_baseline(text_baseline(name))
        else:
            word = label(tok if any(c.isalnum() for c in tok) else stage.say.quote(tok.strip() or tok),
                         font_size=30, color=th.generated)
        word.mark = mark
        fit_into(word, 2.4, 0.6)
        p = number(step.picked_prob, kind, font_size=24, color=th.text)
        # every card as tall as the others, its word on one baseline with the other cards' words and its
        # number on one line: a comma's card is no shorter and no higher than a word's (review 38: "a comma"
        # stood 10 px above the words beside it)
        slot = Rectangle(width=max(word.width, p.width), height=0.6, stroke_width=0).set_fill(opacity=0)
        word.move_to(slot)
        line = label("x", font_size=30).move_to(slot)  # where a word's baseline falls in the slot
        word.shift(UP * (text_baseline(line) - text_baseline(word[1] if mark is not None else word)))
        p.next_to(slot, DOWN, buff=0.1)
        body = VGroup(word, p)
        frame = SurroundingRectangle(VGroup(slot, word, p), buff=0.12, corner_radius=0.08, stroke_width=1.5, color=th.generated)
        card = VGroup(frame, body)
        card.word, card.p = word, p
        return card

    @staticmethod
    def last_vector(stage: Stage, step: NextStep, word, top: float) -> VGroup:
        """What the guess is made from, under the last token: its final vector (a few of its numbers, braced
        with how many it has), an arrow down to it and its name beside it (review 37: the caption spoke of
        the last vector over an empty frame)."""
        th, say = stage.theme, stage.say
        col = VectorColumn(step.last_vector, head=4, tail=1, font_size=32, theme=th, brace=True, shade=False,
                           brace_text=say(f"{T}.vector_count", count=len(step.last_vector)), bracket_color=th.query)
        col.next_to([word.get_x(), top - 0.7, 0], DOWN, buff=0)
        col.shift(RIGHT * (word.get_x() - col.brackets.get_x()))  # the numbers under the word, the brace beside them
        arrow = Arrow([word.get_x(), word.get_bottom()[1] - 0.08, 0], [word.get_x(), col.get_top()[1] + 0.08, 0], buff=0,
                      stroke_width=3, color=th.query, max_tip_length_to_length_ratio=0.3)
        name = label(say(f"{T}.last_vector", word=say.quote(step.tokens[-1])), 28, th.query)
        name.next_to(col.brackets, LEFT, buff=0.4)
        out = VGroup(arrow, col, name)
        out.column, out.name = col, name
        return out

    def play(self, stage: Stage, plan: NextTokenPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn[self.key] = {"charts": [], "sentences": [], "cards": []}
        n0 = len(plan.steps[0].tokens)
        title = label(say(f"{T}.title", model=model_name(say, plan.model_name)), 30, th.text)
        stage.region("title").fit(title)
        drawn["title"] = title
        words = self.sentence(stage, plan, title.get_bottom()[1] - 0.2)
        drawn["words"] = words
        shown = VGroup(*words[:n0])
        words.highlight(n0 - 1, th.query)
        drawn["sentences"].append(shown)
        # the cards' places, decided once: one per pass, centred along the bottom
        kind = lesson_kind(plan.steps)
        cards = [self.card(stage, step, kind) for step in plan.steps]
        row = VGroup(*(c.copy() for c in cards)).arrange(RIGHT, buff=0.5).move_to([0, CARD_Y, 0])
        for c, place in zip(cards, row):
            c.move_to(place)
        drawn["card_row"] = row
        # what the cards are, left of their row in the names' column (review 44: nothing said so)
        full = stage.region("full")
        picked = wrapped(say(f"{T}.picked"), row.get_left()[0] - full.left - 0.45, 24, th.dim, 2)
        for line in picked:
            line.align_to(picked, RIGHT)
        picked.move_to([row.get_left()[0] - 0.3, CARD_Y, 0], aligned_edge=RIGHT)
        drawn["picked_label"] = picked
        # a real model's tokens show their leading space as ␣: the key, under the text's right end
        key = space_key(plan.final_tokens, say, th, mark_size=WORD_FS)
        if key is not None:
            key.next_to(words, DOWN, buff=0.12).align_to(words, RIGHT)
            drawn["space_key"] = key
        # where the next token will go: a dashed box with a question mark, until the first pick fills it
        ask = self.next_slot(stage, words, n0)
        drawn["ask"] = ask
        vector = None
        if plan.steps[0].last_vector is not None:
            vector = self.last_vector(stage, plan.steps[0], words[n0 - 1], (key if key is not None else words).get_bottom()[1])
            drawn["last_vector"] = vector
        with stage.narrating(say(f"{T}.caption_intro", word=say.quote(plan.steps[0].tokens[-1]))):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(shown, lag_ratio=0.05),
                       *([FadeIn(key)] if key is not None else []), run_time=1.2)
            stage.play(FadeIn(ask, scale=0.8), *([FadeIn(vector)] if vector is not None else []), run_time=0.5)
            stage.wait(0.4)
        old = None  # the last pass's chart: it stays (dimmed) until the next one replaces it
        for s, step in enumerate(plan.steps):
            chart = self.chart(stage, step, plan.vocab_size, kind)
            drawn["charts"].append(chart)
            with stage.narrating(say(f"{T}.caption_probs", count=plan.vocab_size, top=len(step.top_tokens),
                                     rest=say.number(step.rest, prob_spec(kind)))):
                gone = [FadeOut(old)] if old is not None else ([FadeOut(vector)] if vector is not None else [])
                stage.play(*gone, *(FadeIn(VGroup(r.name, r.track)) for r in chart.rows),
                           *(GrowFromEdge(r.bar, LEFT) for r in chart.rows), run_time=1.0)
                stage.play(*(FadeIn(r.val) for r in chart.rows), FadeIn(VGroup(chart.rest.name, chart.rest.track)),
                           GrowFromEdge(chart.rest.bar, LEFT), FadeIn(chart.rest.val), FadeIn(chart.sum_row),
                           run_time=0.5)
                stage.wait(0.8)
            how = "caption_greedy" if plan.temperature is None else "caption_sampled"
            i = n0 + s  # the box the picked token takes
            with stage.narrating(say(f"{T}.{how}", word=say.quote(step.picked_token),
                                     p=say.number(step.picked_prob, prob_spec(kind)),
                                     temperature=plan.temperature or 1.0)):
                moving = words[i].copy()
                if step.picked_rank >= 0:
                    r = chart.rows[step.picked_rank]
                    ring = SurroundingRectangle(r, color=th.generated, buff=0.08)
                    stage.play(FadeIn(ring), run_time=0.5)
                    moving.move_to(r.name, aligned_edge=RIGHT)
                else:
                    ring = VGroup()
                    moving.next_to(chart.rest, DOWN, buff=0.2)
                    stage.play(FadeIn(moving), run_time=0.4)
                self.unmark(words, i - 1, n0)
                stage.play(moving.animate.move_to(words[i]), FadeIn(cards[s], shift=DOWN * 0.2),
                           *([FadeOut(ask), FadeIn(picked)] if s == 0 else []),
                           chart.animate.fade(0.65), FadeOut(ring), run_time=1.0)
                old = chart
                stage.remove(moving)
                stage.add(words[i])
                shown = VGroup(*words[:i + 1])
                drawn["sentences"].append(shown)
                drawn["cards"].append(cards[s])
            if s + 1 < len(plan.steps):
                words.highlight(i, th.query)
                with stage.narrating(say(f"{T}.caption_again", count=i + 1)):
                    stage.wait(0.8)
        added = len(plan.final_tokens) - n0
        note = label(say(f"{T}.summary", count=added), font_size=32, color=th.text)
        fit_into(note, stage.region("full").width - 0.4, 0.7)
        # the closing frame: the text, the note, and the picks brought up large into the middle
        picks = VGroup(*cards[:len(plan.steps)])
        target = picks.copy().scale(1.6).move_to([0, -0.9, 0])
        note.move_to([0, 1.1, 0])
        drawn["note"] = note
        # what the numbers on the cards are stays said, one line under them (review 50: bare "0.577"s on the
        # closing frame, its lower third empty)
        said = label(say(f"{T}.picked"), 28, th.dim)
        fit_into(said, stage.region("full").width - 0.6, 0.6).next_to(target, DOWN, buff=0.35)
        drawn["closing_picked"] = said
        with stage.narrating(say(f"{T}.caption_closing", count=added)):
            stage.play(FadeOut(old), FadeOut(picked), FadeIn(said), FadeIn(note),
                       picks.animate.scale(1.6).move_to(target), run_time=0.8)
            stage.wait(2.0)
