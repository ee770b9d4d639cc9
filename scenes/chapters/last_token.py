"""`last_token`: a short mystery ending "therefore the murderer was". The last word's vector is all
the model has to guess the next word: the real attention of every head into it, and an honest
note on what this small model does (and does not) do."""

from __future__ import annotations

from dataclasses import dataclass, replace

from manim import DOWN, LEFT, PI, RIGHT, UP, FadeIn, FadeOut, ManimColor, VGroup, interpolate_color

from ..components.bars import ProbabilityBars
from ..components.context_arcs import ContextArcs
from ..components.text import label
from ..components.word_boxes import BOX_OPACITY, WordBoxes
from ..lesson import Chapter, Lesson
from ..plans.last_token import NOTHING, HeadInto, LastTokenPlan, plan_last_token
from ..stage import Stage
from .beyond_parts import wrapped_words
from .embedding_parts import arc_angle, fit_into, self_weight

T = "embeddings.last_token"
RELATIVE_BELOW = 0.5  # a head whose strongest arc weighs less draws its arcs against that one
CLOSING_PASSAGE, CLOSING_FONT = 0.72, 24  # the close: the passage shrunk to this, the notes at this size
NOTE_SHARE = 0.56  # the close's notes take this share of the width, the guesses the rest


@dataclass(frozen=True)
class EveryHeadLesson(Lesson):
    """A lesson that shows every head of the layer unless --head names one: the Setting alone does
    not say whether the head was asked for, so the lesson notes it in the options."""

    def setting(self, inputs):
        setting = super().setting(inputs)
        heads = None if inputs.head is None else (int(inputs.head),)
        return replace(setting, options={**setting.options, "heads": heads})


class LastToken(Chapter):
    key = "last_token"

    def plan(self, setting) -> LastTokenPlan:
        return plan_last_token(setting, setting.options.get("heads"))

    def play(self, stage: Stage, plan: LastTokenPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        toks, last = plan.tokens, plan.last
        full = stage.region("full")
        # the passage, one sentence per line
        rows, box_of = [], {}
        for r, idx in enumerate(plan.lines):
            rows.append(WordBoxes([toks[i] for i in idx], theme=th, font_size=34))
            for c, i in enumerate(idx):
                box_of[i] = (r, c)
        passage = VGroup(*rows).arrange(DOWN, buff=0.5, aligned_edge=[-1, 0, 0])
        # opaque boxes, as dark as the translucent ones look: the arcs pass behind the words, never
        # through their letters
        shade = interpolate_color(ManimColor(th.background), ManimColor(th.box_fill), BOX_OPACITY)
        for r in rows:
            for b in r:
                b.box.set_fill(shade, opacity=1)
        title = label(say(f"{T}.title", layer=plan.layer), 30, th.text)
        stage.region("title").fit(title)
        fit_into(passage, full.width - 0.9, 3.9)
        passage.move_to([0, 0.95, 0])

        def box(i):
            r, c = box_of[i]
            return rows[r].box(c)

        target = box(last)
        r_last, c_last = box_of[last]
        drawn = {"passage": passage, "arcs": {}, "panels": {}}
        stage.drawn[self.key] = drawn
        drawn["title"] = title
        with stage.narrating(say(f"{T}.caption_intro")):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(passage, lag_ratio=0.05), run_time=1.8)
            stage.play(rows[r_last].animate.highlight(c_last, th.query), run_time=0.6)
            stage.wait(0.8)
        need = label(say(f"{T}.need"), font_size=24, color=th.query)
        fit_into(need, full.width, 1).next_to(passage, DOWN, buff=0.45)
        with stage.narrating(say(f"{T}.caption_need", word=say.quote(toks[last]))):
            stage.play(FadeIn(need), run_time=0.6)
            stage.wait(1.2)
        stage.play(FadeOut(need), run_time=0.4)

        srcs = [box(j) for j in range(len(toks))]
        # arcs: within a line they bulge a little; from lines above they come nearly straight
        ang = arc_angle([b.get_top() for b in srcs[:last]] or [target.get_top()], target.get_top(),
                        max_rise=0.45, cap=PI / 3)
        for h in plan.heads:
            # a head that spreads its weight thin (0.13 at most) drew hair-thin arcs nobody could see:
            # then the arcs are drawn against its strongest one, and the panel says so
            strongest = float(max(h.weights[:last], default=0.0))
            # below what two decimals show ("against the strongest, 0.00") there is no arc worth scaling up:
            # the head keeps its weight at home, and its self weight says so
            # and a head that keeps its weight on the word itself draws its arcs to scale, thin as they are:
            # scaled up, its 0.01 arcs stood as thick as another head's 1.00 (review 35)
            relative = 0.005 <= strongest < RELATIVE_BELOW and h.weights[last] < RELATIVE_BELOW
            arcs = ContextArcs(srcs, target, h.weights, theme=th, angle=ang, max_stroke=12, relative=relative)
            arcs.set_z_index(-1)  # behind the opaque word boxes
            arcs.relative = relative
            panel = self.head_panel(stage, plan, h)
            if relative:
                panel.add(label(say(f"{T}.arcs_relative", weight=say.number(strongest, ".2f")), 22, th.dim)
                          .next_to(panel, DOWN, buff=0.12))
            fit_into(panel, full.width - 0.9, 1.8).move_to([0, -2.35, 0])
            drawn["arcs"][h.head], drawn["panels"][h.head] = arcs, panel
            own = VGroup()
            if h.weights[last] >= 0.01:  # the weight a word keeps on itself has no arc: say it in numbers
                own = self_weight(say, th, h.weights[last], target, font_size=28, arcs=arcs, beside=True)
            with stage.narrating(self.head_caption(stage, plan, h)):
                stage.play(FadeIn(panel), arcs.grow(run_time=1.0), FadeIn(own), run_time=1.0)
                stage.play(arcs.pulse(run_time=1.0))
                stage.wait(1.0)
            stage.play(FadeOut(panel), FadeOut(arcs), FadeOut(own), run_time=0.4)

        self.closing(stage, plan, passage, title)

    def closing(self, stage: Stage, plan: LastTokenPlan, passage, title) -> None:
        """The honest close: the passage steps up and shrinks; left, what this model is and what a large one
        does, left-aligned as a short read; right, the model's own best next words as bars to scale (six
        centred lines read as a wall: review 48)."""
        th, say = stage.theme, stage.say
        full = stage.region("full")
        own = "real.last_token" if plan.real else T  # a real model is no toy, and nobody built its heads
        # "0.00 reaches past" reads oddly: below what two decimals show, the words say "almost none"
        reach = (say(f"{T}.summary_reach_none") if plan.mean_reach < 0.005
                 else say(f"{T}.summary_reach", weight=plan.mean_reach))
        facts = [say(f"{own}.summary_layers", count=plan.n_layers, layer=plan.layer),
                 say(f"{own}.summary_heads", count=len(plan.heads)), reach]
        if plan.real and plan.mean_first >= 0.1:  # much of that "reach" is resting on the first token
            facts.append(say("real.last_token.summary_first", weight=plan.mean_first,
                             word=say.quote(plan.tokens[0])))
        deep = say(f"{T}.summary_deep").replace("\n", " ")
        small = passage.copy().scale(CLOSING_PASSAGE).next_to(title, DOWN, buff=0.3)
        top = small.get_bottom()[1] - 0.45
        text_width = (full.width - 0.9) * (NOTE_SHARE if plan.guesses else 1.0)
        paragraphs = VGroup(*(wrapped_words(" ".join(para), text_width, CLOSING_FONT, th.text, max_lines=6)
                              for para in (facts, [deep]))).arrange(DOWN, buff=0.34, aligned_edge=LEFT)
        fit_into(paragraphs, text_width, top - full.bottom - 0.2)
        guesses = VGroup()
        if plan.guesses:
            paragraphs.move_to([full.left + 0.45, top, 0], aligned_edge=LEFT + UP)
            words = [say.mark_label(w) or w for w, _ in plan.guesses]
            bars = ProbabilityBars(words, [p for _, p in plan.guesses], theme=th, highlight=0, max_length=2.4,
                                   font_size=28)
            room = full.right - 0.45 - (paragraphs.get_right()[0] + 0.6)  # right of the notes
            heading = wrapped_words(say(f"{own}.guesses_title", word=say.quote(plan.tokens[plan.last])),
                                    room, CLOSING_FONT, th.highlight, max_lines=2)
            guesses = VGroup(heading, bars).arrange(DOWN, buff=0.3, aligned_edge=LEFT)
            fit_into(guesses, room, top - full.bottom - 0.2)
            guesses.move_to([full.right - 0.45, top, 0], aligned_edge=RIGHT + UP)
            guesses.bars = bars
        else:
            paragraphs.move_to([0, top, 0], aligned_edge=UP)
        drawn = stage.drawn[self.key]
        drawn.update(note=paragraphs, guesses=guesses)
        with stage.narrating(say(f"{own}.caption_closing")):
            stage.play(passage.animate.become(small), run_time=0.8)
            stage.play(FadeIn(paragraphs, lag_ratio=0.1), run_time=1.2)
            if plan.guesses:
                stage.play(FadeIn(guesses[0]), guesses.bars.grow(), run_time=1.2)
            stage.wait(3.5)

    @staticmethod
    def head_panel(stage: Stage, plan: LastTokenPlan, h: HeadInto) -> VGroup:
        """Under the passage: the head's name, its strongest keys and how far back it reaches. Its weights
        are figures beside the arcs' figures, so they keep the decimal point in every language."""
        th, say = stage.theme, stage.say
        if not h.role:
            text = say.head_name(plan.layer, h.head)
        elif h.idle is not None:
            text = say(f"{T}.head_title_idle", head=h.head, weight=say.number(h.idle, ".2f"),
                       role=say.role(h.role, plan.layer, h.head, tokens=plan.tokens, idle_said=True))
        elif h.idle_word is not None:
            text = say(f"{T}.head_title_idle_word", head=h.head, weight=say.number(h.idle_word, ".2f"),
                       word=say.quote(plan.tokens[plan.last]),
                       role=say.role(h.role, plan.layer, h.head, tokens=plan.tokens, idle_said=True))
        else:
            text = say(f"{T}.head_title", head=h.head, role=say.role(h.role, plan.layer, h.head, tokens=plan.tokens))
        title = label(text, font_size=26, color=th.text)
        items = {}
        for n, k in enumerate(h.strongest):
            # a word the passage has more than once ("␣the" three times) is told apart by how far back it is
            twice = plan.tokens[:plan.last + 1].count(plan.tokens[k]) > 1
            item = f"{T}.item_self" if k == plan.last else f"{T}.item_back" if twice else f"{T}.item"
            items[f"i{n}"] = say(item, word=say.quote(plan.tokens[k]), weight=say.number(float(h.weights[k]), ".2f"),
                                 back=plan.last - k)
        detail = label(say(f"{T}.strongest_{len(h.strongest)}", **items), font_size=24, color=th.text)
        far = label(say(f"{T}.reach", weight=say.number(h.reach, ".2f")), font_size=24, color=th.text)
        return VGroup(title, detail, far).arrange(DOWN, buff=0.14)

    @staticmethod
    def head_caption(stage: Stage, plan: LastTokenPlan, h: HeadInto) -> str:
        say = stage.say
        if not h.role:
            who = say(f"{T}.who", layer=plan.layer, head=h.head)
        else:
            idle = h.idle is not None or h.idle_word is not None
            role = say.role(h.role, plan.layer, h.head, tokens=plan.tokens, idle_said=idle)
            who = say(f"{T}.who_idle" if h.idle is not None else f"{T}.who_idle_word" if idle else f"{T}.who_role",
                      head=h.head, role=role, word=say.quote(plan.tokens[plan.last]))
        if h.top == plan.last:  # the caption follows the measured pattern: what stays, what flows in
            w = float(h.weights[plan.last])
            key = ("caption_head_self" if 1.0 - w < NOTHING else
                   "caption_head_self_some" if h.reach >= NOTHING else "caption_head_self_prev")
            return say(f"{T}.{key}", who=who, word=say.quote(plan.tokens[plan.last]), weight=w, reach=h.reach)
        return say(f"{T}.caption_head", who=who, word=say.quote(plan.tokens[h.top]), weight=float(h.weights[h.top]))

