"""`kv_cache`: generation one token at a time. Each step the new token computes only its own query,
key and value; its key and value join the cache as one more column; its query attends over every
cached key (the real weights of one head shown under them). Multiply-adds with the cache and with
full recomputation are counted per step and in total, and the cached run is checked against
recomputing everything (the real largest difference of the logits printed)."""

from __future__ import annotations

from manim import DOWN, LEFT, UP, FadeIn, FadeOut, SurroundingRectangle, Transform, VGroup

from ..components.text import label, number
from ..components.vectors import VectorColumn, math
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter, Lesson
from ..plans.kv_cache import SHOWN_DIMS, KvCachePlan, KvStep, plan_kv_cache, with_generation
from ..stage import Stage
from .embedding_parts import fit_into
from .head_split import model_name, tiny

T = "blocks.kv_cache"
COL_W = 0.78  # width of one cached column


class KvCacheLesson(Lesson):
    """A lesson whose setting also holds a real cached generation (the model runs when it is made)."""

    def setting(self, inputs):
        return with_generation(super().setting(inputs), inputs)


class KvCache(Chapter):
    key = "kv_cache"

    def plan(self, setting) -> KvCachePlan:
        return plan_kv_cache(setting)

    def play(self, stage: Stage, plan: KvCachePlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        drawn: dict = {"k_columns": [], "v_columns": [], "weights": []}
        stage.drawn[self.key] = drawn
        title = label(say(f"{T}.title", layer=plan.layer, head=plan.head), 30, th.text)
        stage.region("title").fit(title)
        tokens = [s.token for s in plan.steps]
        words = WordBoxes(tokens, theme=th, font_size=24, max_width=full.width)
        for i, s in enumerate(plan.steps):
            if s.generated:
                words.recolor(i, th.value, word=True)
        words.move_to([0, title.get_bottom()[1] - 0.2 - words.height / 2, 0])
        n = len(plan.steps)
        left = full.left + 0.9
        cache_w = min(COL_W * n, 8.6)
        col_w = cache_w / n
        y_k = words.get_bottom()[1] - 1.25
        kname = VGroup(math("K", 28, th.key), label(say(f"{T}.cache"), 18, th.dim)).arrange(DOWN, buff=0.06)
        kname.move_to([left - 0.45, y_k, 0])
        y_w = y_k - 1.0
        y_v = y_w - 1.1
        vname = VGroup(math("V", 28, th.value), label(say(f"{T}.cache"), 18, th.dim)).arrange(DOWN, buff=0.06)
        vname.move_to([left - 0.45, y_v, 0])
        y_q = y_v - 1.2
        qname = VGroup(math("q", 28, th.query), label(say(f"{T}.new_query"), 16, th.dim)).arrange(DOWN, buff=0.06)
        qname.move_to([left - 0.45, y_q, 0])
        fit_into(qname, 1.0, 0.8)
        wname = label(say(f"{T}.weights"), 16, th.dim).move_to([left - 0.45, y_w, 0])
        fit_into(wname, 1.0, 0.4)
        panel_x = left + cache_w + 0.4
        panel_w = full.right - panel_x
        with stage.narrating(say(f"{T}.caption_intro", model=model_name(say, plan.model_name), count=plan.prompt_len)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(kname), FadeIn(vname), FadeIn(wname),
                       FadeIn(qname), run_time=1.0)
        panel = None
        weights = VGroup()
        new_mark = None
        query = None
        for i, s in enumerate(plan.steps):
            x = left + col_w * (i + 0.5)
            kcol = VectorColumn(s.k, head=SHOWN_DIMS, tail=1, font_size=15, theme=th, bracket_color=th.key)
            vcol = VectorColumn(s.v, head=SHOWN_DIMS, tail=1, font_size=15, theme=th, bracket_color=th.value)
            for c, y in ((kcol, y_k), (vcol, y_v)):
                fit_into(c, col_w - 0.06, 1.0).move_to([x, y, 0])
            new_w = VGroup(*(number(w, "weight", 15, th.text) for w in s.weights))
            for j, w in enumerate(new_w):
                fit_into(w, col_w - 0.1, 0.3).move_to([left + col_w * (j + 0.5), y_w, 0])
                w.set_opacity(0.35 + 0.65 * min(1.0, float(s.weights[j]) * 2))
            new_panel = self.panel(stage, plan, s, i, panel_w)
            fit_into(new_panel, panel_w, 4.0)
            new_panel.move_to([panel_x + new_panel.width / 2, y_w, 0])
            qcol = VectorColumn(s.q, head=SHOWN_DIMS, tail=1, font_size=15, theme=th, bracket_color=th.query)
            fit_into(qcol, col_w - 0.06, 1.0).move_to([x, y_q, 0])
            mark = SurroundingRectangle(VGroup(kcol, vcol), buff=0.05, color=th.highlight, stroke_width=2)
            with stage.narrating(self.caption(stage, plan, s, i)):
                anims = [FadeIn(words[i]), FadeIn(kcol, shift=LEFT * 0.2), FadeIn(vcol, shift=LEFT * 0.2),
                         FadeIn(qcol) if query is None else Transform(query, qcol),
                         FadeIn(new_w), FadeIn(new_panel) if panel is None else Transform(panel, new_panel)]
                if len(weights):
                    anims.append(FadeOut(weights))
                if new_mark is not None:
                    anims.append(Transform(new_mark, mark))
                else:
                    anims.append(FadeIn(mark))
                stage.play(*anims, run_time=0.9 if i else 1.2)
                stage.wait(0.3)
            if panel is None:
                panel = new_panel
            if query is None:
                query = qcol
            if new_mark is None:
                new_mark = mark
            weights = new_w
            drawn["k_columns"].append(kcol)
            drawn["v_columns"].append(vcol)
            drawn["weights"].append(new_w)
        drawn["panel"] = panel
        stage.play(FadeOut(VGroup(query, qname)), run_time=0.4)
        self.check(stage, plan, drawn)

    @staticmethod
    def caption(stage: Stage, plan: KvCachePlan, s: KvStep, i: int) -> str:
        say = stage.say
        word = say.quote(s.token)
        if i == 0:
            return say(f"{T}.caption_first", word=word)
        if s.generated:
            return say(f"{T}.caption_generated", word=word, count=i)
        return say(f"{T}.caption_prompt", word=word, count=i)

    @staticmethod
    def panel(stage: Stage, plan: KvCachePlan, s: KvStep, i: int, width: float) -> VGroup:
        th, say = stage.theme, stage.say
        lines = [
            label(say(f"{T}.step", step=i + 1, count=s.position + 1), 20, th.text),
            label(say(f"{T}.total"), 18, th.dim),
            label(say(f"{T}.with_cache", count=s.macs_cached), 18, th.key),
            label(say(f"{T}.without_cache", count=s.macs_full), 18, th.value),
            label(say(f"{T}.next", word=say.quote(s.next_token)), 18, th.dim),
        ]
        group = VGroup(*lines).arrange(DOWN, buff=0.12, aligned_edge=LEFT)
        group[4].shift(DOWN * 0.12)
        return fit_into(group, width, 4.0)

    def check(self, stage: Stage, plan: KvCachePlan, drawn: dict) -> None:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        key = f"{T}.check_same" if plan.same_tokens else f"{T}.check_differ"
        text = say(key, diff=tiny(say, plan.max_diff), count=len(plan.steps))
        line = label(text, 22, th.highlight)
        saving = label(say(f"{T}.saving", cached=plan.total_cached, full=plan.total_full, ratio=plan.saving), 20, th.text)
        memory = label(say(f"{T}.memory", floats=plan.cache_floats, count=plan.n_layers), 18, th.dim)
        box = VGroup(line, saving, memory).arrange(DOWN, buff=0.14)
        fit_into(box, full.width - 0.4, 1.2)
        box.move_to([0, full.bottom + 0.15 + box.height / 2, 0])
        with stage.narrating(say(f"{T}.caption_check", diff=tiny(say, plan.max_diff), ratio=plan.saving)):
            stage.play(FadeIn(box, shift=UP * 0.2), run_time=1.0)
            stage.wait(1.2)
        drawn["check"] = box
