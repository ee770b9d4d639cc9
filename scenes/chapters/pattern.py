"""The finished attention pattern of one head: title, words, the grid of dots, the masked half
empty, the focus word's strongest keys named with their real weights."""

from __future__ import annotations

from manim import DOWN, UP, FadeIn

from ..components.text import label, rich_line
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter
from ..plans.pattern import PatternPlan, plan_pattern
from ..stage import Region, Stage
from .grid_parts import dot_legend, masked_note, new_grid
from .honest import honest_note

NOTE_FS = 26


class Pattern(Chapter):
    key = "pattern"

    def plan(self, setting) -> PatternPlan:
        return plan_pattern(setting)

    def play(self, stage: Stage, plan: PatternPlan) -> None:
        th, say = stage.theme, stage.say
        tokens, ht = plan.tokens, plan.head_trace
        stage.clear()
        role = say.role(ht.role, plan.head.layer, plan.head.head)
        named = "common.head.layer_head_role" if ht.role else "common.head.layer_head"  # a real head has no name
        title = label(say(named, layer=plan.head.layer, head=plan.head.head, role=role), 30, th.text)
        stage.region("title").fit(title)
        top = title.get_bottom()[1] - 0.2
        words = None
        if plan.word_row:
            words = WordBoxes(tokens, theme=th, font_size=28, max_width=stage.region("full").width)
            words.move_to([0, top - words.height / 2, 0])
            top = words.get_bottom()[1] - 0.15
        full = stage.region("full")
        note_room = 0.65
        honest_room = 1.0 if plan.honesty.shows else 0.0  # a real head's note, under the focus note
        area = Region("pattern", full.left, full.right, full.bottom + note_room + honest_room, top)
        grid, titles = new_grid(stage, ht, tokens, plan.layout, area)
        grid.set_mask("cleared")
        stage.hand_on(grid=grid, grid_titles=titles, words=words)
        stage.drawn["pattern"] = {"grid": grid, "title": title}

        intro = "grid.pattern.intro" if ht.role else "real.pattern.intro"
        with stage.narrating(say(intro, layer=plan.head.layer, head=plan.head.head, role=role)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), *([FadeIn(words, lag_ratio=0.08)] if words else []),
                       run_time=1.0)
            stage.play(FadeIn(grid), run_time=0.8)  # the empty grid, under the title that names it
        axis = "grid.pattern.columns" if grid.layout == "video" else "grid.pattern.rows"
        with stage.narrating(say(axis)):
            stage.play(FadeIn(titles), run_time=1.0)
        legend = dot_legend(stage, grid, [title, titles, words])
        masked = masked_note(stage, grid, plan.focus)
        extra = [FadeIn(masked)] if masked is not None else []
        stage.drawn["pattern"].update(legend=legend, masked=masked)
        # (the note shades the masked half; where it found no room, the half is left empty and the caption says so)
        with stage.narrating(say("grid.pattern.dots" if masked is not None else "grid.pattern.dots_empty")):
            stage.play(grid.show_dots(run_time=2.5, lag=0.6), FadeIn(legend), *extra)
            stage.wait(0.5)
        i, tops = plan.focus, list(plan.tops)
        keys = {f"k{n}": say.quote(tokens[j]) for n, j in enumerate(tops)}
        template = say.catalog[f"grid.pattern.note_{len(tops)}"]
        note = rich_line(template, {"query": say.quote(tokens[i]), **keys}, font_size=NOTE_FS, color=th.text,
                         colors={"query": th.query, **{k: th.key for k in keys}},
                         numbers={f"w{n}": (w, "weight") for n, w in enumerate(plan.top_weights)})
        caption_band = Region("note", full.left, full.right, full.bottom + honest_room,
                              full.bottom + honest_room + note_room)
        caption_band.fit(note)
        stage.drawn["pattern"]["note"] = note
        anims = [grid.highlight_column(i, color=th.query), FadeIn(note, shift=UP * 0.1)]
        if words is not None:
            anims.append(words.animate.highlight(i, th.query).recolor(tops, th.key))
        with stage.narrating(say("grid.pattern.caption_focus", query=say.quote(tokens[i]),
                                 keys=say.quoted_words([tokens[j] for j in tops]))):
            stage.play(*anims, run_time=1.0)
            stage.wait(1.5)
        honest_note(stage, self.key, plan.honesty, tokens,
                    Region("honest", full.left, full.right, full.bottom - 0.1, full.bottom + honest_room), font_size=20)
