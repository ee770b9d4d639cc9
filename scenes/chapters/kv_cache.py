"""`kv_cache`: generation one token at a time. Each step the new token computes only its own query,
key and value; its key and value join the cache as one more column; its query attends over every
cached key (the real weights of one head shown under them). Multiply-adds with the cache and with
full recomputation are counted per step and in total, and the cached run is checked against
recomputing everything (the real largest difference of the logits printed)."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, Rectangle, SurroundingRectangle, Transform, VGroup

from ..components.text import baseline_row, label, number
from ..plans.rounding import drawn_misses
from ..review import declare_sum
from ..components.vectors import VectorColumn, math
from ..components.word_boxes import WordBoxes, space_key
from ..lesson import Chapter, Lesson
from ..plans.kv_cache import SHOWN_DIMS, KvCachePlan, KvStep, plan_kv_cache, with_generation
from ..stage import Stage
from .beyond_parts import diff_lines
from .embedding_parts import fit_into
from .honest import wrapped
from .head_split import grouped, model_name, tiny

T = "blocks.kv_cache"
WORD_FS = 26  # the tokens' size (and the ␣ in their key)
COL_W = 1.25  # the widest a cached column gets
COLS_LEFT, COLS_RIGHT = -5.35, 3.95  # the cache's columns live between these; the right panel after
NAME_X = -6.15  # the rows' names (K cache, weights, V cache)
PANEL_X = 4.2
Y_WORDS, Y_K, Y_W, Y_V = 2.6, 1.45, 0.22, -1.0  # the rows, top to bottom
Y_MACS = -2.35  # the multiply-add bars: their header, then one bar with the cache and one without
BAR_W = 7.0  # the longest bar (recomputing all, at the last step)
NOTE_W, NOTE_RIGHT = 6.4, 6.95  # a rounding note's widest and its right edge, on the work bars' heading line
FONT = 22  # the vectors' and weights' numbers (≥ 14 px at 720p)
EDGE = 0.3  # the panel's text keeps this far from the frame's right edge


class KvCacheLesson(Lesson):
    """A lesson whose setting also holds a real cached generation (the model runs when it is made)."""

    def setting(self, inputs):
        return with_generation(super().setting(inputs), inputs)


class KvCache(Chapter):
    key = "kv_cache"
    own_space_key = True

    def plan(self, setting) -> KvCachePlan:
        return plan_kv_cache(setting)

    @staticmethod
    def column_words(stage: Stage, plan: KvCachePlan, xs: list[float], col_w: float) -> WordBoxes:
        """One word box per column, centred over its own cached key and value."""
        th = stage.theme
        words = WordBoxes([s.token for s in plan.steps], theme=th, font_size=WORD_FS, pad_x=0.06)
        for i, s in enumerate(plan.steps):
            if s.generated:
                words.recolor(i, th.generated, word=True)
        widest = max(w.width for w in words)
        if widest > col_w - 0.06:
            words.scale((col_w - 0.06) / widest)
        for w, x in zip(words, xs):
            w.move_to([x, Y_WORDS, 0])
        return words

    def macs(self, stage: Stage, plan: KvCachePlan, s: KvStep) -> VGroup:
        """This step's multiply-adds as two bars to one scale: with the cache, and recomputing all."""
        th, say = stage.theme, stage.say
        full = stage.region("full")
        top = max(st.macs_full for st in plan.steps) or 1
        rows = VGroup()
        for k, (count, key, color) in enumerate(((s.macs_cached, "with_cache", th.key),
                                                 (s.macs_full, "without_cache", th.value))):
            y = Y_MACS - 0.55 - k * 0.55
            bar = Rectangle(width=max(BAR_W * count / top, 0.02), height=0.36, stroke_width=0)
            bar.set_fill(color, opacity=0.85).move_to([full.left + 0.05, y, 0], aligned_edge=LEFT)
            text = label(say(f"{T}.{key}", count=grouped(count, say)), 24, color)
            text.next_to(bar, RIGHT, buff=0.2)
            rows.add(VGroup(bar, text))
        return rows

    def play(self, stage: Stage, plan: KvCachePlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        drawn: dict = {"k_columns": [], "v_columns": [], "weights": []}
        stage.drawn[self.key] = drawn
        title = label(say(f"{T}.title", layer=plan.layer, head=plan.head), 30, th.text)
        stage.region("title").fit(title)
        n = len(plan.steps)
        col_w = min(COL_W, (COLS_RIGHT - COLS_LEFT) / n)
        xs = [COLS_LEFT + col_w * (i + 0.5) for i in range(n)]
        words = self.column_words(stage, plan, xs, col_w)
        drawn["words"] = words
        ghosts = VGroup(*(words[i].copy().set_opacity(0.3) for i in range(plan.prompt_len)))

        def name(sym, color, text):
            g = VGroup(math(sym, 34, color), label(say(f"{T}.{text}"), 22, th.dim)).arrange(DOWN, buff=0.08)
            return fit_into(g, 1.3, 1.2)

        kname = name("K", th.key, "cache").move_to([NAME_X, Y_K, 0])
        vname = name("V", th.value, "cache").move_to([NAME_X, Y_V, 0])
        wname = fit_into(label(say(f"{T}.weights"), 22, th.dim), 1.3, 0.4).move_to([NAME_X, Y_W, 0])
        # the cache's room: an empty slot for every column it will hold
        probe = VectorColumn(plan.steps[0].k, head=SHOWN_DIMS, tail=1, font_size=FONT, theme=th)
        slot_h = probe.height
        slots = VGroup(*(Rectangle(width=col_w - 0.14, height=slot_h, stroke_width=1, stroke_color=th.dim,
                                   stroke_opacity=0.5).move_to([x, y, 0]) for x in xs for y in (Y_K, Y_V)))
        header = label(say(f"{T}.total"), 24, th.dim)
        header.move_to([full.left + 0.05, Y_MACS, 0], aligned_edge=LEFT)
        qname = VGroup(math("q", 34, th.query), label(say(f"{T}.new_query"), 22, th.dim)).arrange(DOWN, buff=0.16)
        fit_into(qname, 1.4, 1.2).move_to([PANEL_X + 0.7, Y_K, 0])
        drawn.update(slots=slots, header=header)
        # a real model's tokens show their leading space as ␣: the key, between the title and the
        # tokens, at the right (the step's words come under it)
        key = space_key([s.token for s in plan.steps], say, th, mark_size=WORD_FS)
        if key is not None:
            fit_into(key, full.width / 2, 0.3)
            key.move_to([full.right - EDGE - key.width / 2, (title.get_bottom()[1] + words.get_top()[1]) / 2, 0])
            drawn["space_key"] = key
        # what the orange words are, on the key's line at the left (review 49: nothing on the frame said it)
        made = VGroup()
        if any(s.generated for s in plan.steps):
            made = label(say(f"{T}.generated_key"), 22, th.generated)
            fit_into(made, full.width / 2 - 0.3, 0.3)
            y = key.get_y() if key is not None else (title.get_bottom()[1] + words.get_top()[1]) / 2
            made.move_to([full.left + EDGE + made.width / 2, y, 0])
        drawn["generated_key"] = made
        with stage.narrating(say(f"{T}.caption_intro", model=model_name(say, plan.model_name), count=plan.prompt_len)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(kname), FadeIn(vname), FadeIn(wname),
                       *([FadeIn(key)] if key is not None else []), FadeIn(made),
                       FadeIn(ghosts, lag_ratio=0.1), FadeIn(slots, lag_ratio=0.02), FadeIn(header),
                       run_time=1.2)
        panel = macs = query = new_mark = None
        weights = total = VGroup()
        for i, s in enumerate(plan.steps):
            x = xs[i]
            kcol = VectorColumn(s.k, head=SHOWN_DIMS, tail=1, font_size=FONT, theme=th, bracket_color=th.key)
            vcol = VectorColumn(s.v, head=SHOWN_DIMS, tail=1, font_size=FONT, theme=th, bracket_color=th.value)
            for c, y in ((kcol, Y_K), (vcol, Y_V)):
                fit_into(c, col_w - 0.16, 2.0).move_to([x, y, 0])
            new_w = VGroup(*(number(w, "weight", FONT, th.text) for w in s.weights))
            for j, w in enumerate(new_w):
                fit_into(w, col_w - 0.1, 0.4).move_to([xs[j], Y_W, 0])
                w.set_opacity(0.35 + 0.65 * min(1.0, float(s.weights[j]) * 2))
            new_total = self.weight_sum(stage, new_w)
            new_panel = self.panel(stage, plan, s, i)
            new_macs = self.macs(stage, plan, s)
            qcol = VectorColumn(s.q, head=SHOWN_DIMS, tail=1, font_size=FONT, theme=th, bracket_color=th.query)
            qcol.next_to(qname, RIGHT, buff=0.2)
            # the step's column: its word and its two slots whole (not narrower than the cells beside it)
            mark = SurroundingRectangle(VGroup(words[i], kcol, vcol, slots[2 * i], slots[2 * i + 1]), buff=0.06,
                                        color=th.highlight, stroke_width=2)
            with stage.narrating(self.caption(stage, plan, s, i)):
                anims = [FadeIn(words[i]), FadeIn(kcol, shift=DOWN * 0.2), FadeIn(vcol, shift=DOWN * 0.2),
                         FadeIn(VGroup(qname, qcol)) if query is None else Transform(query, qcol),
                         FadeIn(new_w), FadeIn(new_total),
                         FadeIn(new_panel), *([FadeOut(panel)] if panel is not None else []),  # fresh text, not morphed glyphs
                         FadeIn(new_macs) if macs is None else Transform(macs, new_macs)]
                if i < len(ghosts):
                    anims.append(FadeOut(ghosts[i]))
                if len(weights):
                    anims += [FadeOut(weights), FadeOut(total)]
                anims.append(FadeIn(mark) if new_mark is None else Transform(new_mark, mark))
                stage.play(*anims, run_time=0.9 if i else 1.2)
                stage.wait(0.3)
            panel = new_panel
            query = query or qcol
            macs = macs or new_macs
            new_mark = new_mark or mark
            drawn["step_mark"] = new_mark
            weights, total = new_w, new_total
            drawn["k_columns"].append(kcol)
            drawn["v_columns"].append(vcol)
            drawn["weights"].append(new_w)
        drawn["panel"] = panel
        drawn["total"] = total
        # the last step's box goes with its query and panel: left alone it read as a leftover highlight
        # and the last step's weights with their row's name (review 34: step 8's weights stayed under the summary)
        stage.play(FadeOut(VGroup(query, qname, panel, macs, header, total, weights, wname,
                                  *([new_mark] if new_mark else []))), run_time=0.4)
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
    def weight_sum(stage: Stage, weights: VGroup) -> VGroup:
        """Right of the weights row: their sum, "Σ = 1.00", or "Σ ≈ 1.00" where the drawn weights miss it."""
        th = stage.theme
        total = number(1.0, "weight", FONT, th.text)
        approx = drawn_misses([w.shown for w in weights], total.shown)
        sigma = label("Σ ≈" if approx else "Σ =", FONT, th.text)  # symbols, as the softmax column's
        # on one baseline (centred by their boxes, pt's "1,00" stood 3 px over the Σ: review 50)
        row = baseline_row([sigma, total], buff=0.12).move_to([PANEL_X, Y_W, 0], aligned_edge=LEFT)
        declare_sum(row, list(weights), total, [sigma] if approx else [], name="kv weights")
        row.approx = approx
        row.note = VGroup()
        if approx:  # the ≈ says why on the frame (review 50): one line on the work bars' heading line, at the right
            # (under the panel, the bars' figures reached it)
            row.note = label(stage.say("common.rounding.cells"), 20, th.dim)
            fit_into(row.note, NOTE_W, 0.4)
            row.note.move_to([NOTE_RIGHT - row.note.width / 2, Y_MACS, 0])
            row.add(row.note)
        return row

    @staticmethod
    def panel(stage: Stage, plan: KvCachePlan, s: KvStep, i: int) -> VGroup:
        """The step (how many tokens the cache holds now) and what the model predicts after it; while
        it reads the prompt, that guess is thrown away (the prompt's next token comes instead), and
        the panel says so."""
        th, say = stage.theme, stage.say
        full = stage.region("full")
        room = full.right - EDGE - PANEL_X
        step = label(say(f"{T}.step", step=i + 1, count=s.position + 1), 28, th.text)
        fit_into(step, room, 0.5).move_to([PANEL_X, Y_WORDS, 0], aligned_edge=LEFT)
        nxt = wrapped(say(f"{T}.next", word=say.quote_named(s.next_token)), room, 26, th.text, 2)
        if i + 1 < plan.prompt_len:  # a guess made inside the prompt: not used
            why = wrapped(say(f"{T}.next_discarded", word=say.quote_named(plan.steps[i + 1].token)), room, 22, th.dim, 3)
            nxt = VGroup(nxt, why).arrange(DOWN, buff=0.1, aligned_edge=LEFT)
        nxt.move_to([PANEL_X, Y_V, 0], aligned_edge=LEFT)
        return VGroup(step, nxt)

    def check(self, stage: Stage, plan: KvCachePlan, drawn: dict) -> None:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        key = f"{T}.check_same" if plan.same_tokens else f"{T}.check_differ"
        # not from edge to edge; a small difference typeset, as the formulas set one (review 47)
        line = diff_lines(say, key, plan.max_diff, full.width * 0.78, 28, th.highlight, 2, count=len(plan.steps))
        saving = label(say(f"{T}.saving", cached=grouped(plan.total_cached, say), full=grouped(plan.total_full, say),
                             ratio=say.number(plan.saving, ".1f")), 26, th.text)
        # the count as a product a student can check: SmolLM2 shares 3 key/value heads among its 9 heads
        tokens = plan.steps[-1].position + 1
        kv = plan.cache_floats // (2 * plan.n_layers * plan.d_head * tokens)
        # two lines, not one from edge to edge (review 37)
        memory = wrapped(say(f"{T}.memory", floats=grouped(plan.cache_floats, say), count=plan.n_layers, kv=kv,
                             tokens=tokens, d_head=plan.d_head), full.width - 0.6, 24, th.dim, 2,
                         break_after=" = ")  # (the product whole on its own line: review 50 broke it, ko, en, pt)
        memory.product = (2, plan.n_layers, kv, tokens, plan.d_head)
        # one left edge for the three (review 49: centred lines and left-aligned blocks mixed)
        box = VGroup(line, saving, memory).arrange(DOWN, buff=0.16, aligned_edge=LEFT)
        fit_into(box, full.width - 0.2, Y_MACS + 0.2 - full.bottom)
        box.move_to([0, full.bottom + box.height / 2, 0])
        with stage.narrating(say(f"{T}.caption_check", diff=tiny(say, plan.max_diff), ratio=plan.saving)):
            stage.play(FadeIn(box, shift=UP * 0.2), run_time=1.0)
            stage.wait(1.2)
        drawn["check"] = box
