"""`cross_attention`: translation. The English sentence asks (queries), the French sentence answers
(keys and values). First a line from every English word to every French word, its opacity the
real weight of the trained head; the captions follow the words the plan picked (one French word,
two of them as in ne … pas, a crossing where the word order differs, words with no French word of
their own). Then the same weights as a grid, French keys in the rows and English queries in the
columns (the paper layout transposes), with no mask: every cell is a weight."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, Line, Rectangle, ReplacementTransform, Square, VGroup

from ..components.text import label, number
from ..components.weight_grid import WeightGrid
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter, Lesson
from ..plans.cross_attention import CrossPlan, cross_setting, plan_cross_attention
from ..plans.rounding import drawn_misses, tenths
from ..review import declare_sum
from ..style import fmt_weight
from ..stage import Stage
from .embedding_parts import fit_into
from .grid_parts import side_title
from .head_split import model_name
from .honest import wrapped

T = "cross"
EN_Y, FR_Y = 1.25, -1.95  # the two sentences' rows
LINE_WIDTH = 5.0
DIMMED = 0.12  # a line that is not being talked about keeps this share of its opacity


@dataclass(frozen=True)
class CrossLesson(Lesson):
    """A lesson whose setting is the pair's cross-attention trace (two sentences, two vocabularies)."""

    def setting(self, inputs):
        return cross_setting(inputs)


class CrossAttention(Chapter):
    key = "cross_attention"

    def plan(self, setting) -> CrossPlan:
        return plan_cross_attention(setting)

    # --- pictures ---------------------------------------------------------------------------
    def rows(self, stage: Stage, plan: CrossPlan) -> tuple[WordBoxes, WordBoxes, VGroup]:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        en = WordBoxes(plan.english, theme=th, font_size=40, colors=[th.query] * len(plan.english), gap=0.35)
        fr = WordBoxes(plan.french, theme=th, font_size=40, colors=[th.key] * len(plan.french), gap=0.35)
        for row, y in ((en, EN_Y), (fr, FR_Y)):
            fit_into(row, full.width - 0.6, 0.9)
            row.move_to([0, y, 0])
        en_title = label(say(f"{T}.english_title"), font_size=24, color=th.query)
        fr_title = label(say(f"{T}.french_title"), font_size=24, color=th.key)
        fit_into(en_title, full.width - 0.6, 0.5).next_to(en, UP, buff=0.22)
        fit_into(fr_title, full.width - 0.6, 0.5).next_to(fr, DOWN, buff=0.22)
        return en, fr, VGroup(en_title, fr_title)

    def lines(self, stage: Stage, plan: CrossPlan, en: WordBoxes, fr: WordBoxes) -> dict:
        """One line per (English, French) pair; its opacity is the weight."""
        out = {}
        for q in range(len(plan.english)):
            for k in range(len(plan.french)):
                line = Line(en.anchor(q, DOWN, 0.06), fr.anchor(k, UP, 0.06))
                line.set_stroke(stage.theme.text, width=LINE_WIDTH, opacity=plan.weight(q, k))
                line.weight = plan.weight(q, k)
                out[(q, k)] = line
        return out

    def weight_tag(self, stage: Stage, line: Line, w: float, color: str, pair: tuple[str, str] | None = None):
        """A line's weight beside it, three quarters of the way down, on the side it leans to (review 48: set on
        the line, "0.50" read as struck through, and two tags did not say which line was whose); with `pair`,
        the two words it joins before it ("do → veux 0.18")."""
        tag = number(w, "weight", font_size=24, color=color)
        if pair is not None:
            words = label(f"{pair[0]} → {pair[1]}", font_size=24, color=stage.theme.text)
            tag = VGroup(words, tag).arrange(RIGHT, buff=0.14)
        start, end = line.get_start(), line.get_end()
        at = line.point_from_proportion(0.72)
        side = 1.0 if end[0] >= start[0] else -1.0
        # clear of the slanted line over the tag's whole height
        slope = abs(end[0] - start[0]) / max(abs(end[1] - start[1]), 1e-9)
        tag.move_to(at + RIGHT * side * (tag.width / 2 + 0.14 + slope * tag.height / 2))
        tag.add_background_rectangle(color=stage.theme.background, opacity=0.85, buff=0.05)
        return tag

    def focus_lines(self, stage, lines, active, color=None):
        """Animations: the lines of `active` queries at full weight (in `color`), the others dimmed."""
        anims = []
        for (q, k), line in lines.items():
            on = q in active
            op = line.weight if on else line.weight * DIMMED
            anims.append(line.animate.set_stroke(color=(color if on and color else stage.theme.text), opacity=op))
        return anims

    # --- the story --------------------------------------------------------------------------
    def play(self, stage: Stage, plan: CrossPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn[self.key] = {}
        title = label(say(f"{T}.title"), font_size=40, color=th.text)
        stage.region("title").fit(title)
        en, fr, titles = self.rows(stage, plan)
        drawn.update(title=title, english=en, french=fr, titles=titles)
        with stage.narrating(say(f"{T}.caption_intro")):
            stage.play(FadeIn(title), FadeIn(en), FadeIn(titles[0]), run_time=1.0)
            stage.play(FadeIn(fr), FadeIn(titles[1]), run_time=0.8)
        if plan.asked_model:  # asked for a real model: it has no cross-attention, and the frame says whose weights these are
            name = model_name(say, plan.asked_model)
            own = label(say(f"{T}.own_model", model=name), font_size=24, color=th.highlight)
            fit_into(own, stage.region("full").width - 0.6, 0.5)
            own.move_to([0, (title.get_bottom()[1] + titles[0].get_top()[1]) / 2, 0])
            drawn["own_model"] = own
            with stage.narrating(say(f"{T}.caption_own_model", model=name)):
                stage.play(FadeIn(own), run_time=0.6)
                stage.wait(0.8)
        lines = self.lines(stage, plan, en, fr)
        drawn["lines"] = lines
        with stage.narrating(say(f"{T}.caption_lines", count=len(plan.english) * len(plan.french))):
            stage.play(*(FadeIn(l) for l in lines.values()), run_time=1.5)
            stage.wait(0.5)
        self.stories(stage, plan, en, fr, lines)
        stage.play(*self.focus_lines(stage, lines, range(len(plan.english))),
                   en.animate.reset(), fr.animate.reset(), run_time=0.6)
        self.grid(stage, plan, en, fr, titles, lines)

    def stories(self, stage, plan: CrossPlan, en, fr, lines) -> None:
        th, say = stage.theme, stage.say
        q_ = say.quote
        tags_drawn = stage.drawn[self.key]["tags"] = []
        for s in plan.stories:
            word = q_(plan.english[s.query])
            if len(s.keys) == 1:
                text = say(f"{T}.caption_one", en=word, fr=q_(plan.french[s.keys[0]]), weight=s.weights[0])
            else:
                text = say(f"{T}.caption_split", en=word, fr1=q_(plan.french[s.keys[0]]),
                           fr2=q_(plan.french[s.keys[1]]), w1=s.weights[0], w2=s.weights[1], total=sum(s.weights))
            tags = VGroup(*(self.weight_tag(stage, lines[(s.query, k)], w, th.query) for k, w in zip(s.keys, s.weights)))
            if len(s.keys) > 1:  # the total the caption reads, between the two tags
                parts = list(tags)
                value = number(sum(s.weights), "weight", font_size=24, color=th.query)
                # "Σ ≈" where the two weights as drawn do not add up to the total as drawn
                approx = drawn_misses([t.shown for t in parts], value.shown)
                sign = [label(say("common.rounding.mark"), font_size=24, color=th.query)] if approx else []
                total = VGroup(label(say(f"{T}.split_total"), font_size=24, color=th.query), *sign,
                               value).arrange(RIGHT, buff=0.1)
                declare_sum(total, parts, value, sign, name="split")
                a, b = sorted(tags, key=lambda m: m.get_x())
                total.move_to([(a.get_right()[0] + b.get_left()[0]) / 2, a.get_y(), 0])
                if b.get_left()[0] - a.get_right()[0] < total.width + 0.2:  # no room between them: above
                    total.move_to([(a.get_x() + b.get_x()) / 2, max(a.get_top()[1], b.get_top()[1]) + 0.1 + total.height / 2, 0])
                # on an opaque plate: a faint line that crosses its spot passes behind it, not through its figures
                total.add_background_rectangle(color=th.background, opacity=1.0, buff=0.08)
                tags.add(total)
            tags_drawn.append(tags)
            with stage.narrating(text):
                stage.play(*self.focus_lines(stage, lines, [s.query], th.query),
                           en.animate.reset().highlight(s.query, th.query),
                           fr.animate.reset().highlight(list(s.keys), th.key), run_time=0.8)
                stage.play(FadeIn(tags), run_time=0.4)
                stage.wait(0.6)
            stage.play(FadeOut(tags), run_time=0.3)
        if plan.crossing is not None:
            c = plan.crossing
            with stage.narrating(say(f"{T}.caption_order", a=q_(plan.english[c.first]), b=q_(plan.english[c.second]),
                                     fa=q_(plan.french[c.first_key]), fb=q_(plan.french[c.second_key]))):
                stage.play(*self.focus_lines(stage, lines, [c.first, c.second], th.highlight),
                           en.animate.reset().highlight([c.first, c.second], th.query),
                           fr.animate.reset().highlight([c.first_key, c.second_key], th.key), run_time=0.8)
                stage.wait(1.0)
        if plan.spread:
            words = say.quoted_words([plan.english[i] for i in plan.spread])
            # the largest weight the caption reads, on its own line
            q, k = max(((q, k) for q in plan.spread for k in range(len(plan.french))), key=lambda p: plan.weight(*p))
            # whose weight it is, among a dozen lines: "do → veux 0.18" (review 48: a bare 0.18 floated among them)
            tag = self.weight_tag(stage, lines[(q, k)], plan.weight(q, k), th.query,
                                  pair=(plan.english[q], plan.french[k]))
            tags_drawn.append(VGroup(tag))
            stage.drawn[self.key]["spread_line"] = (q, k)
            with stage.narrating(say(f"{T}.caption_spread", count=len(plan.spread), words=words, weight=plan.spread_max)):
                stage.play(*self.focus_lines(stage, lines, plan.spread, th.query),
                           en.animate.reset().highlight(list(plan.spread), th.query), fr.animate.reset(), run_time=0.8)
                # the figure sits on its own line and its French word lights up; the line keeps its width and
                # opacity, as every line does (drawn solid, then 2.5× wide, 0.18 read as "do settles on veux",
                # the opposite of the spread the caption speaks of)
                stage.play(FadeIn(tag), fr.animate.highlight(k, th.key), run_time=0.4)
                stage.drawn[self.key]["spread_width"] = lines[(q, k)].get_stroke_width()
                stage.wait(0.6)
            stage.play(FadeOut(tag), run_time=0.3)

    def grid(self, stage, plan: CrossPlan, en, fr, titles, lines) -> None:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        # a column whose drawn weights make 0.99 or 1.01 gets a "≈" under it and a line saying why: room for both
        # (under the columns in the video layout, after the rows in the paper one)
        rounded = any(drawn_misses([fmt_weight(w) for w in row], "1") for row in plan.pattern)
        video = plan.layout == "video"
        grid = WeightGrid(plan.pattern, plan.english, plan.french, layout=plan.layout, theme=th,
                          max_width=full.width * 0.62 - (1.4 if rounded and not video else 0),
                          max_height=full.height - (3.1 if rounded and video else 2.2))
        grid.move_to([full.left + 0.3 + grid.width / 2, -0.15 if rounded and video else -0.35, 0])
        if grid.get_left()[0] < full.left:
            grid.shift([full.left - grid.get_left()[0], 0, 0])
        stage.drawn[self.key]["grid"] = grid
        (top_key, top_color), (side_key, side_color) = ((("grid_queries", th.query), ("grid_keys", th.key)) if video
                                                        else (("grid_keys", th.key), ("grid_queries", th.query)))
        cols = label(say(f"{T}.{top_key}"), font_size=22, color=top_color)
        # the side's name as every grid's (Latin turned a quarter, Hangul upright: review 37, "키 (프랑스어)" turned)
        rows = side_title(say(f"{T}.{side_key}"), 22, side_color)
        fit_into(cols, grid.width, 0.4).next_to(grid, UP, buff=0.12).set_x(grid.lines.get_x())  # over the cells
        fit_into(rows, 0.4, 3.0).next_to(grid, LEFT, buff=0.12)
        moves = [ReplacementTransform(en.word(i), grid.query_label(i)) for i in range(len(plan.english))]
        moves += [ReplacementTransform(fr.word(k), grid.key_label(k)) for k in range(len(plan.french))]
        boxes = [wb.box for wb in en] + [wb.box for wb in fr]
        layout = "caption_grid_video" if plan.layout == "video" else "caption_grid_paper"
        with stage.narrating(say(f"{T}.{layout}")):
            own = stage.drawn[self.key].get("own_model")
            stage.play(*(FadeOut(l) for l in lines.values()), *(FadeOut(b) for b in boxes), FadeOut(titles),
                       *([FadeOut(own)] if own is not None else []),
                       *moves, run_time=1.4)
            stage.play(FadeIn(grid.lines), FadeIn(grid.cells), FadeIn(cols), FadeIn(rows), run_time=0.8)
            stage.play(FadeIn(grid.numbers), run_time=0.6)
            if grid.missed_queries():  # a column whose drawn weights make 0.99 or 1.01 says so
                marks = grid.rounding_marks(say("common.rounding.mark"))
                # what the ≈ says, of which columns (review 48, ko: an "≈" under two columns, nothing said what of)
                why = wrapped(say(f"common.rounding.{'columns' if video else 'rows'}"), grid.lines.width, 20, th.dim, 2)
                below = marks if video else grid
                why.next_to(below, DOWN, buff=0.6 if video else 0.12).align_to(grid.lines, LEFT)  # room for a Σ
                stage.drawn[self.key]["rounding"] = VGroup(marks, why)
                stage.play(FadeIn(marks), FadeIn(why), run_time=0.5)
        # in the paper layout a row's "≈" and its drawn Σ come after the row: the note keeps clear of them
        after = 1.6 if plan.layout == "paper" and "rounding" in stage.drawn[self.key] else 0.0
        panel = self.note(stage, plan, grid, after)
        stage.drawn[self.key]["note"] = panel
        with stage.narrating(say(f"{T}.caption_no_mask", count=len(plan.english) * len(plan.french))):
            stage.play(FadeIn(panel), run_time=0.6)
            stage.wait(1.0)
        # a column worth adding up: a spread-out word (many small weights), else a split one
        splits = [s.query for s in plan.stories if len(s.keys) > 1]
        first = (list(plan.spread) + splits + [s.query for s in plan.stories] + [0])[0]
        box = grid.outline(first, th.query)
        # the weights add up to 1; their two-decimal roundings, as drawn, may make 0.99 or 1.01
        drawn = sum(tenths(w, 2) for w in plan.pattern[first]) / 100
        words = dict(word=say.quote(plan.english[first]))
        caption = (say(f"{T}.caption_sum", **words) if round(drawn, 2) == 1.0
                   else say(f"{T}.caption_sum_rounded", drawn=drawn, **words))
        # the column's drawn sum under it (beside the row in the paper layout), as a reader adds it up
        total = label(f"{say(f'{T}.split_total')} {say.number(drawn, '.2f')}", font_size=24, color=th.query)
        total.shown = say.number(drawn, ".2f")  # what the sum rule reads (the Σ aside)
        mark = getattr(stage.drawn[self.key].get("rounding", [None])[0], "of", {}).get(first)
        total.next_to(mark if mark is not None else box, DOWN if plan.layout == "video" else RIGHT, buff=0.12)
        shown = [grid.number_mobs[(first, k)] for k in range(len(plan.french)) if (first, k) in grid.number_mobs]
        if len(shown) == len(plan.french):
            declare_sum(total, shown, total, name="caption_sum")
        with stage.narrating(caption):
            stage.play(FadeIn(box), FadeIn(total), run_time=0.5)
            stage.wait(0.8)
        learned = "caption_learned_seen" if plan.seen_in_training else "caption_learned_unseen"
        # "these alignments": every cell that holds 0.4 or more of its English word's attention (a word
        # split in two, "not" → "ne" and "pas", shows both)
        P = np.asarray(plan.pattern)
        cells = [grid.cell_rect(q, k) for q in range(len(plan.english)) for k in range(len(plan.french)) if P[q, k] >= 0.4]
        aligned = VGroup(*(Rectangle(width=c.width, height=c.height).move_to(c).set_stroke(th.highlight, width=3)
                           .set_fill(opacity=0) for c in cells))
        stage.drawn[self.key]["aligned"] = aligned
        with stage.narrating(say(f"{T}.{learned}", pairs=plan.pairs_trained)):
            stage.play(FadeOut(box), FadeOut(total), FadeIn(aligned), run_time=0.4)
            stage.wait(1.0)

    def causal_icon(self, stage, n: int) -> VGroup:
        """A small self-attention grid for contrast (a picture, no numbers): keys as rows, queries
        as columns in the video layout; the cells where the key comes after the query are masked."""
        th = stage.theme
        n = max(3, min(n, 6))
        side = 0.28
        cells = VGroup()
        for r in range(n):
            for c in range(n):
                key, query = (r, c) if stage.drawn[self.key]["grid"].layout == "video" else (c, r)
                sq = Square(side).move_to([c * side, -r * side, 0])
                if key > query:
                    sq.set_fill(th.mask, opacity=0.55).set_stroke(th.mask, width=1)
                else:
                    sq.set_fill(th.positive, opacity=0.25).set_stroke(th.dim, width=1)
                cells.add(sq)
        return cells

    def note(self, stage, plan: CrossPlan, grid, after: float = 0.0) -> VGroup:
        """Beside the grid (`after` further right): no mask, every cell a weight; self-attention's causal
        mask in contrast."""
        th, say = stage.theme, stage.say
        full = stage.region("full")
        width = full.right - grid.get_right()[0] - after - 0.5
        first = []
        if plan.asked_model:  # whose weights these are stays on screen with the grid
            first = [wrapped(say(f"{T}.own_model_short", model=model_name(say, plan.asked_model)), width, 22,
                             th.highlight, 2)]
        lines = VGroup(*first, label(say(f"{T}.note_no_mask"), font_size=28, color=th.text),
                       label(say(f"{T}.note_cells", count=len(plan.english) * len(plan.french)), font_size=22,
                             color=th.dim),
                       label(say(f"{T}.note_self"), font_size=22, color=th.mask)).arrange(DOWN, buff=0.25)
        for m in lines:
            fit_into(m, width, 0.6)
        lines.add(self.causal_icon(stage, len(plan.english)))
        lines.arrange(DOWN, buff=0.25, aligned_edge=np.array([-1.0, 0, 0]))
        lines.move_to([grid.get_right()[0] + after + 0.35 + lines.width / 2, grid.get_center()[1], 0])
        return lines
