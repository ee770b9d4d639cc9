"""`linear_attention`: exp(q·k) replaced by φ(q)·φ(k), φ = elu + 1 (Katharopoulos et al. 2020).

- `LinearKernel`: the two weights as formulas and φ drawn; the regrouping φ(Q)(φ(K)ᵀV) drawn to scale
  (the n × n grid against a d × d state), both orders checked on the head's real q, k, v; the causal
  form as a running sum carried along the sentence (an RNN), checked against the masked form.
- `LinearPattern`: the head's softmax pattern and its linear pattern side by side (the same queries and
  keys), one row read out; over every head of the model: the weight on each row's top key both ways
  and the distance between the patterns; then one layer made linear at a time: the top next token kept
  or changed, run by run.
- `LinearCost`: multiply-adds of one head against n on log axes, softmax and linear.
"""

from __future__ import annotations

from math import log2, log10
from types import SimpleNamespace

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, Arrow, Circle, Dot, FadeIn, FadeOut, Line, Rectangle, Square, VGroup, VMobject)

from ..components.clearance import first_clear, strokes_of
from ..components.text import label, rich_line, text_baseline
from ..components.vectors import MATH_PER_TEXT, math, math_on_line
from ..components.word_boxes import WordBoxes, space_key
from ..lesson import Chapter, Lesson
from ..plans.linear_attention import (CostPlan, KernelPlan, PatternPlan, plan_linear_cost, plan_linear_kernel,
                                      plan_linear_pattern, with_linear_study)
from ..stage import Region, Stage
from ..review import clear_of
from .beyond_parts import (count, dec, future_cells, grid_key, head_name, model_forms, power_math, sci, sci_math,
                           share_bars, with_math)
from .head_split import model_name
from .embedding_parts import fit_into
from .embedding_parts import mixed_label as text
from .grid_parts import new_grid
from .honest import wrapped

T = "beyond.linear"
FS = 22  # notes
FIG = 20  # figures under shapes and on axes
# a token label's line takes this share of its row (two grids side by side: the default 0.62 leaves their
# labels at 13 px at 720p; the video's are 15 and more)
LABEL_FILL = 0.86


class LinearLesson(Lesson):
    """A lesson whose setting also holds the model's LinearStudy (the model runs when it is made)."""

    def setting(self, inputs):
        return with_linear_study(super().setting(inputs), inputs)


def title_of(stage: Stage, words: str):
    title = text(words, 30, stage.theme.text)
    stage.region("title").fit(title)
    return title


# --- 1. the swap, the regrouping, the running sum ---------------------------------------------------


class LinearKernel(Chapter):
    key = "linear_kernel"
    own_space_key = True

    def plan(self, setting) -> KernelPlan:
        return plan_linear_kernel(setting)

    def play(self, stage: Stage, plan: KernelPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn[self.key] = {}
        # φ typeset as the formulas under it write it (review 37: the title's text φ was the other form)
        title = rich_line(say.catalog[f"{T}.kernel_title"], {}, font_size=30, color=th.text,
                          mobjects={"phi": math("phi", 30 * MATH_PER_TEXT, th.text)}, buff=0.2)  # (ko "맵φ" touched)
        stage.region("title").fit(title)
        # the two weights, one above the other, each named on its left
        # as the model computes them: the scores scaled by √d, the linear form's query scaled the same way
        sm = math(r"w_(i j) = exp(q_i dot k_j \/ sqrt(d)) / (sum_(j') exp(q_i dot k_(j') \/ sqrt(d)))", 34, th.text)
        ln = math(r"w_(i j) = (phi(q_i \/ sqrt(d)) dot phi(k_j)) / (sum_(j') phi(q_i \/ sqrt(d)) dot phi(k_(j')))", 34,
                  th.text)
        names = VGroup(text(say(f"{T}.softmax_name"), 26, th.value), text(say(f"{T}.linear_name"), 26, th.key))
        rows = VGroup(VGroup(names[0], sm).arrange(RIGHT, buff=0.4), VGroup(names[1], ln).arrange(RIGHT, buff=0.4))
        rows.arrange(DOWN, buff=0.6, aligned_edge=LEFT)
        for r, name in zip(rows, names):  # the formulas start at one x, whatever the names' widths
            r[1].shift(RIGHT * (max(n.width for n in names) - name.width))
        # the frames that follow write φ(q): say once that q there is already scaled
        # (q typeset in the words as in the formula: upright, "q stands for" read as a word: review 43)
        words = rich_line(say.catalog[f"{T}.scaled_note"], {}, font_size=22, color=th.dim,
                          mobjects={"q": math_on_line("q", 22 * MATH_PER_TEXT, th.dim)})
        scaled = with_math(words, math(r"q \/ sqrt(d)", 22 * MATH_PER_TEXT, th.dim), 22, th.dim, centred=True)
        scaled.next_to(rows[1][1], DOWN, buff=0.3).align_to(rows[1][1], LEFT)
        rows.add(scaled)
        phi = self.phi_plot(stage)
        body = VGroup(rows, phi).arrange(RIGHT, buff=0.8)
        full = stage.region("full")
        # as large as the frame allows (at most 1.3 times), centred under the title: not a band across the top
        body.scale(min(1.3, (full.width - 0.8) / body.width, 5.2 / body.height))
        body.move_to([0, (title.get_bottom()[1] + full.bottom) / 2, 0])
        drawn.update(formulas=rows, phi=phi, title=title)
        with stage.narrating(say(f"{T}.caption_swap")):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(rows[0]), run_time=1.0)
            stage.play(FadeIn(rows[1], shift=UP * 0.1), FadeIn(rows[2]), FadeIn(phi), run_time=1.0)
            stage.wait(0.5)
        stage.play(FadeOut(VGroup(rows, phi)), run_time=0.5)
        self.regroup(stage, plan, drawn)
        self.running_sum(stage, plan, drawn, title)

    @staticmethod
    def phi_plot(stage: Stage) -> VGroup:
        """φ(x) = elu(x) + 1 from −3 to 2: always above zero."""
        th, say = stage.theme, stage.say
        sx, sy = 0.55, 0.55  # units per 1 on each axis
        xs = np.linspace(-3, 2, 60)
        ys = np.where(xs > 0, xs + 1, np.exp(np.minimum(xs, 0)))
        curve = VMobject(stroke_color=th.key, stroke_width=4).set_points_smoothly(
            [[x * sx, y * sy, 0] for x, y in zip(xs, ys)])
        x_axis = Line([-3.2 * sx, 0, 0], [2.3 * sx, 0, 0], stroke_color=th.dim, stroke_width=2)
        y_axis = Line([0, -0.2 * sy, 0], [0, 3.3 * sy, 0], stroke_color=th.dim, stroke_width=2)
        ticks, marks = VGroup(), VGroup()
        for v in (-2, 1):
            marks.add(Line([v * sx, -0.06, 0], [v * sx, 0.06, 0], stroke_color=th.dim, stroke_width=2))
            ticks.add(label(str(v).replace("-", "−"), FIG, th.dim).next_to([v * sx, 0, 0], DOWN, buff=0.14))
        for v in (1, 2):
            marks.add(Line([-0.06, v * sy, 0], [0.06, v * sy, 0], stroke_color=th.dim, stroke_width=2))
            # left of the axis, where the curve is low (eˣ < 0.6 there): clear of it
            ticks.add(clear_of(label(str(v), FIG, th.dim).next_to([-0.1, v * sy, 0], LEFT, buff=0.12), [curve]))
        x_name = math("x", 26, th.dim).next_to(x_axis, RIGHT, buff=0.1)
        y_name = math("phi(x)", 26, th.dim).next_to(y_axis, UP, buff=0.1)
        name = math('phi(x) = op("elu")(x) + 1', 30, th.key).next_to(VGroup(curve, y_axis, y_name), UP, buff=0.25)
        note = text(say(f"{T}.phi_note"), FIG, th.dim).next_to(x_axis, DOWN, buff=0.55)
        return VGroup(x_axis, y_axis, marks, curve, ticks, x_name, y_name, name, note)

    @staticmethod
    def shape(w_tokens: float, h_tokens: float, unit: float, color: str, symbol: str, th, fill: float = 0.35):
        rect = Rectangle(width=w_tokens * unit, height=h_tokens * unit, stroke_color=color, stroke_width=2)
        rect.set_fill(color, opacity=fill)
        sym = math(symbol, 28, th.text)
        fit_into(sym, rect.width * 1.6, 0.5)
        if sym.width < rect.width - 0.1 and sym.height < rect.height - 0.1:
            sym.move_to(rect)
        else:
            sym.next_to(rect, UP, buff=0.1)
        return VGroup(rect, sym)

    def regroup(self, stage: Stage, plan: KernelPlan, drawn: dict) -> None:
        th, say = stage.theme, stage.say
        n, d = plan.n_demo, plan.d_head
        unit = 1.9 / n  # scene units per token: n tokens are 1.9 units
        op = lambda s: math(s, 34, th.text)  # noqa: E731

        def paren(s, height):
            """A bracket as tall as the shapes it holds."""
            m = op(s)
            return m.stretch_to_fit_height(height).stretch_to_fit_width(max(m.width, 0.12))

        def dims(mob, rows, cols):
            t = text(say(f"{T}.shape", rows=rows, cols=cols), FIG + 1, th.dim)
            return t.next_to(mob[0], DOWN, buff=0.12)

        # (φ(Q) · φ(K)ᵀ) · V = [the n × n grid] · V
        fq = self.shape(d, n, unit, th.query, "phi(Q)", th)
        fkt = self.shape(n, d, unit, th.key, "phi(K)^T", th)
        grid = self.shape(n, n, unit, th.value, "", th, fill=0.22)
        v1 = self.shape(d, n, unit, th.value, "V", th)
        v1b = self.shape(d, n, unit, th.value, "V", th)
        h1 = n * unit + 0.1
        row1 = VGroup(paren("(", h1), fq, op("dot"), fkt, paren(")", h1), op("dot"), v1, op("="), grid, op("dot"),
                      v1b).arrange(RIGHT, buff=0.2)
        # φ(Q) · (φ(K)ᵀ · V) = φ(Q) · [the d × d state S]
        fq2 = self.shape(d, n, unit, th.query, "phi(Q)", th)
        fkt2 = self.shape(n, d, unit, th.key, "phi(K)^T", th)
        v2 = self.shape(d, n, unit, th.value, "V", th)
        fq3 = self.shape(d, n, unit, th.query, "phi(Q)", th)
        state = self.shape(d, d, unit, th.highlight, "S", th, fill=0.5)
        row2 = VGroup(fq2, op("dot"), paren("(", h1), fkt2, op("dot"), v2, paren(")", h1), op("="), fq3, op("dot"),
                      state).arrange(RIGHT, buff=0.2)
        # the shapes of a row centred on one line, not their names over them (review 46: φ(Q) stood 14 px low)
        for row in (row1, row2):
            middle = next(m for m in row if m in (v1, v2)).get_center()[1]
            for m in row:
                if m in (fq, fkt, grid, v1b, fq2, fkt2, fq3, state):
                    m.shift(UP * (middle - m[0].get_center()[1]))
        grid_note = VGroup(text(say(f"{T}.grid_order"), FS, th.text),
                           text(say(f"{T}.numbers", count=plan.grid_numbers), FS, th.value)).arrange(
            DOWN, buff=0.1, aligned_edge=LEFT)
        state_note = VGroup(text(say(f"{T}.state_order"), FS, th.text),
                            text(say(f"{T}.numbers", count=plan.state_numbers_d), FS, th.highlight)).arrange(
            DOWN, buff=0.1, aligned_edge=LEFT)
        full = stage.region("full")
        d1 = VGroup(dims(fq, n, d), dims(fkt, d, n), dims(v1, n, d), dims(grid, n, n), dims(v1b, n, d))
        d2 = VGroup(dims(fq2, n, d), dims(fkt2, d, n), dims(v2, n, d), dims(fq3, n, d), dims(state, d, d))
        block1 = VGroup(grid_note, VGroup(row1, d1)).arrange(RIGHT, buff=0.5)
        block2 = VGroup(state_note, VGroup(row2, d2)).arrange(RIGHT, buff=0.5)
        left = full.left + 0.1
        note_w = max(grid_note.width, state_note.width)
        for b, note in ((block1, grid_note), (block2, state_note)):
            note.move_to([left + note.width / 2, note.get_y(), 0])
            b[1].move_to([left + note_w + 0.5 + b[1].width / 2, b[1].get_y(), 0])
        both = VGroup(block1, block2).arrange(DOWN, buff=0.45, aligned_edge=LEFT)
        # what the drawing leaves out: each output row is divided by its weights' sum (the normalizer)
        # (its Σ set inline and its brackets at the text's size, not grown around a subscript: a display Σ stood
        # half as tall again as the words, review 47)
        norm = with_math(say(f"{T}.normalizer"), math(r"phi\(q_i\) dot z, quad z = inline(sum_j) phi\(k_j\)",
                                                      FS * MATH_PER_TEXT, th.dim), FS, th.dim, centred=True)
        at = text(say(f"{T}.at_length", n=n, d=d), FS, th.dim)
        fit_into(both, full.width - 0.4, 4.6)
        both.move_to([full.center[0], 0.75, 0])
        notes = VGroup(at, norm).arrange(DOWN, buff=0.15, aligned_edge=LEFT)
        fit_into(notes, full.width - 0.4, 0.9)
        notes.next_to(both, DOWN, buff=0.25).align_to(both, LEFT)
        drawn.update(grid_row=block1, state_row=block2, normalizer=norm,
                     shapes=([fq, fkt, v1, grid, v1b], [fq2, fkt2, v2, fq3, state]))
        with stage.narrating(say(f"{T}.caption_regroup", state=plan.state_numbers_d, grid=plan.grid_numbers, n=n)):
            stage.play(FadeIn(block1), FadeIn(notes), run_time=1.0)
            stage.wait(0.4)
            stage.play(FadeIn(block2, shift=UP * 0.1), run_time=1.0)
            stage.wait(0.6)
        # the check on a real sentence, shown: its tokens are not the n of the drawing
        hname = head_name(say, plan.layer, plan.head)
        sentence = text(say(f"{T}.real_sentence", n=plan.n, sentence=say.quote(plan.sentence)), FS, th.text)
        check = with_math(say(f"{T}.same_output", head=hname), sci_math(plan.regroup_diff, say, FS, th.highlight), FS,
                          th.highlight)
        lines = VGroup(sentence, check).arrange(DOWN, buff=0.12, aligned_edge=LEFT)
        fit_into(lines, full.width - 0.4, max(notes.get_bottom()[1] - 0.2 - full.bottom, 0.5))
        lines.next_to(notes, DOWN, buff=0.2).align_to(notes, LEFT)
        drawn["regroup_check"] = check
        with stage.narrating(say(f"{T}.caption_same", layer=plan.layer, head=plan.head, n=plan.n,
                                 diff=sci(plan.regroup_diff, say))):
            stage.play(FadeIn(lines, shift=UP * 0.1), run_time=0.8)
            stage.wait(0.4)
        stage.play(FadeOut(VGroup(block1, block2, notes, lines)), run_time=0.5)

    def running_sum(self, stage: Stage, plan: KernelPlan, drawn: dict, title) -> None:
        """The causal form unrolled along the sentence: each token adds φ(k_t)v_tᵀ into a state of one
        fixed size, handed on to the next token; each state gives that token's output."""
        th, say = stage.theme, stage.say
        full = stage.region("full")
        sub = text(say(f"{T}.rnn_title"), 26, th.text).move_to([0, 2.6, 0])
        n = len(plan.tokens)
        name_w = 1.7
        left = full.left + name_w
        col = min(1.25, (full.right - left) / n)
        xs = [left + col * (i + 0.5) for i in range(n)]
        words = WordBoxes(plan.tokens, theme=th, font_size=24, pad_x=0.06)
        widest = max(w.width for w in words)
        if widest > col - 0.08:
            words.scale((col - 0.08) / widest)
        y_word, y_state, y_out = 1.75, 0.55, -0.55
        for w, x in zip(words, xs):
            w.move_to([x, y_word, 0])
        side = min(0.62, col * 0.62)
        boxes, downs, links, outs, ups = VGroup(), VGroup(), VGroup(), VGroup(), VGroup()
        for i, x in enumerate(xs):
            b = Square(side, stroke_color=th.highlight, stroke_width=2.5).set_fill(th.highlight, opacity=0.3)
            b.move_to([x, y_state, 0])
            boxes.add(b)
            downs.add(Arrow([x, words[i].get_bottom()[1] - 0.04, 0], [x, b.get_top()[1] + 0.04, 0], buff=0,
                            stroke_width=2.5, color=th.dim, max_tip_length_to_length_ratio=0.25))
            o = math(f"o_{i + 1}", 26, th.text).move_to([x, y_out, 0])
            outs.add(o)
            ups.add(Arrow([x, b.get_bottom()[1] - 0.04, 0], [x, o.get_top()[1] + 0.06, 0], buff=0, stroke_width=2.5,
                          color=th.dim, max_tip_length_to_length_ratio=0.3))
            if i:
                links.add(Arrow(boxes[i - 1].get_right() + RIGHT * 0.03, b.get_left() + LEFT * 0.03, buff=0,
                                stroke_width=3, color=th.highlight, max_tip_length_to_length_ratio=0.35))
        sname = text(say(f"{T}.state_label"), FS, th.highlight)
        fit_into(sname, name_w - 0.2, 0.6).move_to([full.left + (name_w - 0.1) / 2, y_state, 0])
        eqs = VGroup(math(r"S_t = S_(t-1) + phi(k_t) v_t^T", 30, th.text),
                     math(r"z_t = z_(t-1) + phi(k_t)", 30, th.text),
                     math(r"o_t = (phi(q_t)^T S_t) / (phi(q_t)^T z_t)", 30, th.text)).arrange(DOWN, buff=0.2,
                                                                                          aligned_edge=LEFT)
        size = text(say(f"{T}.state_size", d=plan.d_head, count=plan.state_numbers), 24, th.highlight)
        same = with_math(say(f"{T}.rnn_same"), sci_math(plan.rnn_diff, say, 24, th.highlight), 24, th.highlight)
        notes = VGroup(size, same).arrange(DOWN, buff=0.2, aligned_edge=LEFT)
        lower = VGroup(eqs, notes).arrange(RIGHT, buff=0.8)
        fit_into(lower, full.width - 0.6, full.top - full.bottom)
        lower.move_to([0, (y_out - 0.45 + full.bottom) / 2, 0])
        # the key to the tokens' ␣ (a real model's tokens), on the subtitle's line at the right
        spaces = space_key(plan.tokens, say, th, font_size=22, mark_size=24)
        if spaces is not None:
            fit_into(spaces, full.right - sub.get_right()[0] - 0.4, 0.4)
            spaces.move_to([full.right - spaces.width / 2, sub.get_center()[1], 0])
        drawn.update(words=words, states=boxes, outputs=outs, equations=eqs, state_size=size, rnn_check=same,
                     spaces=spaces)
        with stage.narrating(say(f"{T}.caption_rnn")):
            stage.play(FadeIn(sub), FadeIn(words), FadeIn(sname), FadeIn(eqs),
                       *([FadeIn(spaces)] if spaces is not None else []), run_time=1.0)
            step = max(0.2, min(0.5, 4.0 / n))
            for i in range(n):
                parts = [FadeIn(downs[i]), FadeIn(boxes[i]), FadeIn(ups[i]), FadeIn(outs[i])]
                if i:
                    parts.append(FadeIn(links[i - 1]))
                stage.play(*parts, run_time=step)
        with stage.narrating(say(f"{T}.caption_rnn_check", count=plan.state_numbers, diff=sci(plan.rnn_diff, say))):
            stage.play(FadeIn(notes, shift=UP * 0.1), run_time=0.8)
            stage.wait(0.4)


# --- 2. on a real head, and over every head -------------------------------------------------------


class LinearPattern(Chapter):
    key = "linear_pattern"
    own_space_key = True

    def plan(self, setting) -> PatternPlan:
        return plan_linear_pattern(setting)

    def play(self, stage: Stage, plan: PatternPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn[self.key] = {}
        model = model_forms(say, plan.model_name)
        hname = head_name(say, plan.layer, plan.head, plan.role)
        title = title_of(stage, say(f"{T}.pattern_title"))
        full = stage.region("full")
        hits = plan.role_hits
        if hits and hits[0] < hits[1]:  # the role held on only some of this sentence's queries: said beside it
            sub = text(say(f"{T}.pattern_head_partly", head=hname, model=model_name(say, plan.model_name),
                           hits=hits[0], total=hits[1]), 24, th.dim)
        else:
            sub = text(say(f"{T}.pattern_head", head=hname, model=model_name(say, plan.model_name)), 24, th.dim)
        fit_into(sub, full.width - 0.6, 0.4).move_to([0, title.get_bottom()[1] - 0.1 - sub.height / 2, 0])
        top = sub.get_bottom()[1] - 0.1
        bottom = full.bottom + 1.0  # the row notes and the key under the grids
        halves = (Region("left_half", full.left, -0.15, bottom, top - 0.45),
                  Region("right_half", 0.15, full.right, bottom, top - 0.45))
        grids, heads = [], VGroup()
        layout = plan.layout
        tokens = list(plan.tokens)  # (new_grid names a small mark)
        for pattern, header, color, region in ((plan.softmax, "softmax_header", th.value, halves[0]),
                                               (plan.linear, "linear_header", th.key, halves[1])):
            data = SimpleNamespace(pattern=pattern, mask=plan.mask, scores=None, layer=plan.layer, head=plan.head)
            grid, titles = new_grid(stage, data, tokens, layout, region=region, label_fill=LABEL_FILL)
            grid.set_mask("cleared")
            grid.set_content("dots")
            future = future_cells(grid, plan.mask, th)
            head = text(say(f"{T}.{header}"), 26, color)
            head.move_to([region.center[0], top - 0.2, 0])
            grids.append((grid, VGroup(titles, future)))
            heads.add(head)
        key = grid_key(say, grids[0][0], th, FS)
        spaces = space_key(plan.tokens, say, th, font_size=FS, mark_size=FS + 4)
        if spaces is not None:  # a real model's tokens: what their ␣ means, on the key's line
            key = VGroup(key, spaces).arrange(RIGHT, buff=0.6)
        drawn["spaces"] = spaces
        fit_into(key, full.width - 0.6, 0.4).move_to([0, full.bottom + 0.1 + key.height / 2, 0])
        drawn.update(grids=[g for g, _ in grids], headers=heads, key=key, head_line=sub)
        caption = "caption_pattern_sharp" if plan.sharp else "caption_pattern_flat"
        with stage.narrating(say(f"{T}.{caption}")):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(sub), *(FadeIn(VGroup(g, t)) for g, t in grids),
                       FadeIn(heads), FadeIn(key), run_time=1.2)
            stage.wait(0.8)
        # one row read out under each grid
        q, k = plan.tokens[plan.query], plan.tokens[plan.top_key]
        quote = say.quote
        notes = VGroup(
            text(say(f"{T}.row_softmax", query=quote(q), weight=dec(plan.row_softmax, say), key=quote(k)), FS,
                 th.text),
            text(say(f"{T}.row_linear", query=quote(q), weight=dec(plan.row_linear, say), key=quote(k),
                      top=dec(plan.row_linear_top, say)), FS, th.text))
        for note, (grid, titles), region in zip(notes, grids, halves):
            fit_into(note, region.width - 0.1, 0.45)
            note.move_to([region.center[0], key.get_top()[1] + 0.2 + note.height / 2, 0])
        drawn["row_notes"] = notes
        with stage.narrating(say(f"{T}.caption_row", query=quote(q), key=quote(k), softmax=dec(plan.row_softmax, say),
                                 linear=dec(plan.row_linear, say), top=dec(plan.row_linear_top, say))):
            stage.play(*(g.highlight_column(plan.query, color=th.query) for g, _ in grids), FadeIn(notes), run_time=0.8)
            stage.wait(0.8)
        stage.play(FadeOut(VGroup(*(VGroup(g, t) for g, t in grids), heads, notes, key, sub)), run_time=0.5)
        stage.remove(*(g for g, _ in grids))
        self.measured(stage, plan, drawn, model, title)

    def measured(self, stage: Stage, plan: PatternPlan, drawn: dict, model: dict, title) -> None:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        header = text(say(f"{T}.every_head", **model, layers=plan.n_layers, heads=plan.n_heads,
                           passages=plan.n_passages, rows=plan.n_rows), 30, th.text)
        stage.region("title").fit(header)
        fit_into(header, full.width - 0.6, 0.6)
        rows = [(say(f"{T}.top_softmax"), plan.top_softmax, th.value), (say(f"{T}.top_linear"), plan.top_linear, th.key),
                (say(f"{T}.tv"), plan.tv, th.highlight)]
        bars = share_bars(rows, th, length=4.6, font_size=24, say=say)
        fit_into(bars, full.width - 0.6, 2.0)
        bars.move_to([0, full.top - 0.95 - bars.height / 2, 0])
        drawn.update(measured=bars, measured_header=header)
        with stage.narrating(say(f"{T}.caption_measured", **model, passages=plan.n_passages,
                                 softmax=dec(plan.top_softmax, say), linear=dec(plan.top_linear, say),
                                 tv=dec(plan.tv, say))):
            stage.play(FadeOut(title), FadeIn(header), run_time=0.6)
            stage.play(FadeIn(bars, lag_ratio=0.2), run_time=1.0)
            stage.wait(0.5)
        self.swaps(stage, plan, drawn, bars)

    def swaps(self, stage: Stage, plan: PatternPlan, drawn: dict, above) -> None:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        P, L = plan.kept.shape
        names = VGroup(*(text(say(f"{T}.swap_passage", number=p + 1), FS, th.text) for p in range(P)))
        room_w = full.width - 0.6 - names.width - 0.3
        cell = min(0.42, room_w / L)
        left = full.center[0] - (names.width + 0.3 + L * cell) / 2 + names.width + 0.3
        title = text(say(f"{T}.swap_title", count=plan.n_layers), FS, th.text)
        if title.width > full.width - 0.6:  # a long question on two lines, not squeezed onto one
            title = wrapped(say(f"{T}.swap_title", count=plan.n_layers), full.width - 1.2, FS, th.text, 2)
        fit_into(title, full.width - 0.6, 0.8)
        top = above.get_bottom()[1] - 0.4
        title.move_to([full.center[0], top - title.height / 2, 0])
        y0 = title.get_bottom()[1] - 0.25 - cell / 2
        cells = VGroup()
        for p in range(P):
            for l in range(L):
                ok = bool(plan.kept[p, l])
                sq = Square(cell * 0.86, stroke_width=1.5, stroke_color=th.key if ok else th.mask)
                sq.set_fill(th.key if ok else th.mask, opacity=0.55 if ok else 0.85)
                sq.move_to([left + (l + 0.5) * cell, y0 - p * cell, 0])
                cells.add(sq)
            names[p].move_to([left - 0.2 - names[p].width / 2, y0 - p * cell, 0])
        # layer numbers under the columns (every fifth when there are many)
        stride = 1 if L <= 12 else 5
        layer_name = text(say(f"{T}.swap_layer"), FS, th.dim)
        nums = VGroup(*(label(str(l), 18, th.dim).move_to([left + (l + 0.5) * cell, y0 - (P - 0.5) * cell - 0.22, 0])
                        for l in range(0, L, stride)))
        layer_name.next_to(nums, DOWN, buff=0.12).set_x(left + L * cell / 2)
        items = [VGroup(Square(0.26, stroke_width=0).set_fill(th.key, opacity=0.55), text(say(f"{T}.kept"), FS, th.text)),
                 VGroup(Square(0.26, stroke_width=0).set_fill(th.mask, opacity=0.85), text(say(f"{T}.lost"), FS, th.text))]
        cap = label("H", FS).height
        for sw, words in items:  # the swatch centred on the words' capitals, whatever their descenders
            words.next_to(sw, RIGHT, buff=0.12)
            sw.set_y(text_baseline(words) + cap / 2)
        legend = VGroup(*items).arrange(RIGHT, buff=0.5)
        items[1].shift(UP * (text_baseline(items[0][1]) - text_baseline(items[1][1])))  # one line: "changed" has a g
        total = text(say(f"{T}.swap_count", kept=plan.kept_count, runs=plan.runs, kl=say.number(plan.kl_mean, ".3f")), 24,
                     th.highlight)
        foot = VGroup(total, legend).arrange(RIGHT, buff=0.8)
        fit_into(foot, full.width - 0.6, 0.5)
        foot.next_to(layer_name, DOWN, buff=0.2).set_x(full.center[0])
        kl_note = text(say("beyond.kl_note"), 20, th.dim)
        fit_into(kl_note, full.width - 0.6, 0.4).next_to(foot, DOWN, buff=0.12).set_x(full.center[0])
        drawn.update(swap_cells=cells, swap_total=total, kl_note=kl_note)
        with stage.narrating(say(f"{T}.caption_swap_runs", count=plan.n_layers, kept=plan.kept_count, runs=plan.runs,
                                 kl=say.number(plan.kl_mean, ".3f"))):
            stage.play(FadeIn(title), FadeIn(VGroup(names, nums, layer_name)), run_time=0.6)
            stage.play(FadeIn(cells, lag_ratio=0.01), run_time=1.2)
            stage.play(FadeIn(foot, shift=UP * 0.1), FadeIn(kl_note), run_time=0.6)
            stage.wait(0.5)
        verdict = ("verdict_far_kept" if plan.kept_most else "verdict_far_changed") if plan.sharp else \
            ("verdict_near_kept" if plan.kept_most else "verdict_near_changed")
        drawn["verdict"] = verdict
        said_text = say(f"{T}.{verdict}", count=plan.n_layers, lost=plan.runs - plan.kept_count, runs=plan.runs)
        line = wrapped(said_text, full.width - 1.0, 24, th.highlight, 2)
        fit_into(line, full.width - 0.6, max(kl_note.get_bottom()[1] - 0.15 - full.bottom, 0.4))
        line.move_to([0, (kl_note.get_bottom()[1] - 0.15 + full.bottom) / 2, 0])
        drawn["verdict_line"] = line
        with stage.narrating(said_text):
            stage.play(FadeIn(line, shift=UP * 0.1), run_time=0.6)
            stage.wait(0.6)


# --- 3. the cost ---------------------------------------------------------------------------------


class LinearCost(Chapter):
    key = "linear_cost"
    shows_tokens = False

    def plan(self, setting) -> CostPlan:
        return plan_linear_cost(setting)

    def play(self, stage: Stage, plan: CostPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn[self.key] = {}
        title = title_of(stage, say(f"{T}.cost_title", d=plan.d_head))
        full = stage.region("full")
        # log axes: x = log2 n, y = log10 multiply-adds
        x_lo, x_hi = log2(plan.lengths[0]), log2(plan.lengths[-1])
        y_lo = int(np.floor(log10(min(plan.linear[0], plan.softmax[0]))))
        y_hi = int(np.ceil(log10(max(plan.softmax[-1], plan.linear[-1]))))
        ox, oy = full.left + 1.6, full.bottom + 1.1
        W, H = 8.0, full.top - 1.0 - oy
        X = lambda n: ox + (log2(n) - x_lo) / (x_hi - x_lo) * W  # noqa: E731
        Y = lambda c: oy + (log10(c) - y_lo) / (y_hi - y_lo) * H  # noqa: E731
        axes = VGroup(Line([ox, oy, 0], [ox + W + 0.2, oy, 0], stroke_color=th.dim, stroke_width=2),
                      Line([ox, oy, 0], [ox, oy + H + 0.2, 0], stroke_color=th.dim, stroke_width=2))
        ticks = VGroup()
        # the left edge of the last tick label: a tick whose label would touch it is left out, label and
        # tick (review 34: a bare tick between "16,384" and "1,048,576" named nothing)
        named_right = None
        for n in sorted(set(plan.lengths[::2] + (plan.lengths[-1],)), reverse=True):
            x = X(n)
            name = label(count(n, say), FIG, th.text).next_to([x, oy, 0], DOWN, buff=0.15)
            if named_right is None or name.get_right()[0] < named_right - 0.3:
                ticks.add(Line([x, oy - 0.08, 0], [x, oy + 0.08, 0], stroke_color=th.dim, stroke_width=2), name)
                named_right = name.get_left()[0]
        for e in range(y_lo + (y_lo % 2), y_hi + 1, 2):
            y = Y(10 ** e)
            ticks.add(Line([ox - 0.08, y, 0], [ox + 0.08, y, 0], stroke_color=th.dim, stroke_width=2))
            ticks.add(power_math(e, 26, th.text).next_to([ox, y, 0], LEFT, buff=0.15))
        x_name = text(say(f"{T}.axis_n"), FS, th.dim).next_to(ticks, DOWN, buff=0.15).set_x(ox + W / 2)
        y_name = text(say(f"{T}.axis_cost"), FS, th.dim).move_to([ox, oy + H + 0.45, 0])
        curves = VGroup()
        ends = VGroup()
        for costs, color, name, formula in ((plan.softmax, th.value, "softmax_curve", "2 dot n^2 dot d"),
                                            (plan.linear, th.key, "linear_curve", "2 dot n dot d^2 + 2 dot n dot d")):
            pts = [[X(n), Y(c), 0] for n, c in zip(plan.lengths, costs)]
            line = VMobject(stroke_color=color, stroke_width=4).set_points_as_corners(pts)
            dots = VGroup(*(Dot(p, radius=0.06, color=color) for p in pts))
            curves.add(VGroup(line, dots))
            end = VGroup(with_math(say(f"{T}.{name}"), math(formula, FS * MATH_PER_TEXT, color), FS, color),
                         sci_math(costs[-1], say, FIG + 2, color)).arrange(DOWN, buff=0.12, aligned_edge=LEFT)
            end.next_to(pts[-1], RIGHT, buff=0.2)
            ends.add(end)
        if ends[0].get_bottom()[1] < ends[1].get_top()[1] + 0.15:  # keep the two end notes apart
            ends[1].shift(DOWN * (ends[1].get_top()[1] + 0.15 - ends[0].get_bottom()[1]))
        # where the curves cross, marked, and its note beside the mark, clear of both curves and the axes
        # (a crossover left of the first length drawn, as the toy's small heads have, is only said)
        inside = plan.lengths[0] <= plan.crossover <= plan.lengths[-1]
        note = text(say(f"{T}.crossover" if inside else f"{T}.crossover_left", n=plan.crossover,
                        first=plan.lengths[0]), FS, th.text)
        if inside:
            meet = np.array([X(plan.crossover), Y(2 * plan.crossover ** 2 * plan.d_head), 0.0])
            mark = Circle(radius=0.11, stroke_color=th.text, stroke_width=3).move_to(meet)
            spots = [meet + np.array([dx + note.width / 2, dy, 0.0]) for dx in (0.35, 0.6, 0.9)
                     for dy in (-0.22, -0.12, 0.0, 0.35, 0.6, 0.9)]
            note.move_to(first_clear(note, spots, strokes_of([axes, *curves]), gap=0.08))
            cross = VGroup(mark, note)
        ratio = text(say(f"{T}.at_end", n=plan.lengths[-1], ratio=round(plan.ratio_last)), 24, th.highlight)
        ratio.move_to([ox + 0.3 + ratio.width / 2, oy + H - 0.1, 0])
        if not inside:  # said in the empty corner under the lower curve: the note names no point of the chart
            note = wrapped(say(f"{T}.crossover_left", n=plan.crossover, first=plan.lengths[0]), 0.5 * W, FS, th.text, 2,
                           setter=text)
            note.move_to([ox + 0.45 * W + note.width / 2, oy + 0.3 + note.height / 2, 0])
            cross = VGroup(note)
        plot = VGroup(axes, ticks, x_name, y_name, curves, ends, cross, ratio)
        fit_into(plot, full.width - 0.2, full.top - 0.85 - full.bottom)
        plot.move_to([0, (full.top - 0.85 + full.bottom) / 2, 0])
        drawn.update(curves=curves, ends=ends, ticks=ticks, ratio=ratio, crossover=cross)
        with stage.narrating(say(f"{T}.caption_cost", d=plan.d_head, n=plan.crossover)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(VGroup(axes, ticks, x_name, y_name)), run_time=1.0)
            stage.play(FadeIn(curves[0]), FadeIn(ends[0]), run_time=0.8)
            stage.play(FadeIn(curves[1]), FadeIn(ends[1]), FadeIn(cross), run_time=0.8)
            stage.wait(0.5)
        with stage.narrating(say(f"{T}.caption_cost_end", n=plan.lengths[-1], softmax=sci(plan.softmax[-1], say),
                                 linear=sci(plan.linear[-1], say), ratio=round(plan.ratio_last))):
            stage.play(FadeIn(ratio, shift=UP * 0.1), run_time=0.8)
            stage.wait(0.8)
