"""`mlp`: the block's MLP on one token after attention. The model's shape (SmolLM2's gated SwiGLU
576 → 1536 → 576) drawn to scale; the focus token's real hidden neurons (the most active few, a
brace saying how many exist: gate, SiLU(gate), up, their product); the output, equal to the
model's own MLP output; GPT-2 small's plain 768 → 3072 → 768 from its config beside it."""

from __future__ import annotations

from typing import ClassVar

from manim import DOWN, RIGHT, UP, Arrow, FadeIn, FadeOut, Rectangle, VGroup

from ..components.number_table import aligned_rows
from ..components.text import label
from ..components.vectors import VectorColumn, math
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter, Lesson
from ..plans.mlp import MlpPlan, plan_mlp, with_mlp_probe
from ..stage import Stage
from .embedding_parts import fit_into
from .head_split import braced, fixed, tiny

T = "blocks.mlp"
UNIT = 1.0 / 1000  # scene units of height per dimension in the shape diagrams


class MlpLesson(Lesson):
    """A lesson whose setting also holds the focus token's MLP activations (the model runs them).
    The toy has no MLP: on it the setting raises a UserError (`refuses_toy`)."""

    refuses_toy: ClassVar[bool] = True

    def setting(self, inputs):
        return with_mlp_probe(super().setting(inputs), inputs)


def shape_diagram(stage: Stage, sizes: tuple[int, ...], gated: bool, color_in, color_mid, title: str) -> VGroup:
    """Columns to scale: d_model, d_mlp (two of them, gate and up, when gated), d_model, with arrows."""
    th = stage.theme
    def col(n, color):
        r = Rectangle(width=0.35, height=max(n * UNIT * 1.0, 0.1), stroke_width=1.5, stroke_color=color)
        r.set_fill(color, opacity=0.5)
        return VGroup(r, label(str(n), 18, th.text).next_to(r, DOWN, buff=0.08))
    d_in, d_mid = sizes
    if gated:  # the gate g and the up projection u, each named over its column
        pair = [col(d_mid, color_mid), col(d_mid, color_mid)]
        for c, name in zip(pair, ("g", "u")):
            c.add(math(name, 22, th.text).next_to(c[0], UP, buff=0.08))
        mid = VGroup(*pair).arrange(RIGHT, buff=0.12)
        pair[1].shift(UP * (pair[0][0].get_y() - pair[1][0].get_y()))
    else:
        mid = col(d_mid, color_mid)
    parts = [col(d_in, color_in), mid, col(d_in, color_in)]
    row = VGroup(*parts).arrange(RIGHT, buff=0.7)
    for p in parts:  # every column's box centred on one line
        box = p[0] if isinstance(p[0], Rectangle) else p[0][0]
        p.shift(DOWN * box.get_center()[1])
    arrows = VGroup(*(Arrow(a.get_right(), b.get_left(), buff=0.1, stroke_width=2, color=th.dim,
                            max_tip_length_to_length_ratio=0.2) for a, b in zip(parts, parts[1:])))
    for a in arrows:
        a.set_y(0)
    head = label(title, 20, th.text)
    group = VGroup(head, VGroup(row, arrows)).arrange(DOWN, buff=0.2)
    group.columns, group.arrows = parts, arrows
    return group


class Mlp(Chapter):
    key = "mlp"

    def plan(self, setting) -> MlpPlan:
        return plan_mlp(setting)

    def play(self, stage: Stage, plan: MlpPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        drawn: dict = {}
        stage.drawn[self.key] = drawn
        word = say.quote(plan.tokens[plan.focus])
        gated = plan.kind == "swiglu"
        title = label(say(f"{T}.title", layer=plan.layer, model=plan.model_name), 30, th.text)
        stage.region("title").fit(title)
        words = WordBoxes(plan.tokens, theme=th, font_size=24, max_width=full.width)
        words.move_to([0, title.get_bottom()[1] - 0.2 - words.height / 2, 0])
        top = words.get_bottom()[1] - 0.3
        with stage.narrating(say(f"{T}.caption_intro", word=word, layer=plan.layer)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(words, lag_ratio=0.08), run_time=0.9)
            stage.play(words.animate.highlight(plan.focus, th.query), run_time=0.6)

        # the model's shape, to scale
        mine = shape_diagram(stage, (plan.d_model, plan.d_mlp), gated, th.embedding, th.value,
                             say(f"{T}.shape_{'gated' if gated else 'plain'}", model=plan.model_name,
                                 d_model=plan.d_model, d_mlp=plan.d_mlp))
        fit_into(mine, full.width / 2 - 0.3, top - full.bottom - 0.3)
        mine.move_to([full.left + full.width / 4, top - 0.2 - mine.height / 2, 0])
        key = f"{T}.caption_shape_gated" if gated else f"{T}.caption_shape_plain"
        with stage.narrating(say(key, d_model=plan.d_model, d_mlp=plan.d_mlp, ratio=plan.ratio)):
            stage.play(FadeIn(mine, lag_ratio=0.2), run_time=1.2)
            stage.wait(0.5)
        drawn["shape"] = mine

        # GPT-2 small, from its config, beside it
        gd, gm = plan.gpt2
        gpt = shape_diagram(stage, (gd, gm), False, th.embedding, th.key,
                            say(f"{T}.shape_gpt2", d_model=gd, d_mlp=gm))
        fit_into(gpt, full.width / 2 - 0.3, top - full.bottom - 0.3)
        gpt.move_to([full.right - full.width / 4, top - 0.2 - gpt.height / 2, 0])
        with stage.narrating(say(f"{T}.caption_gpt2", d_model=gd, d_mlp=gm, ratio=gm // gd)):
            stage.play(FadeIn(gpt, lag_ratio=0.2), run_time=1.2)
            stage.wait(0.5)
        drawn["gpt2"] = gpt

        # the focus token's real numbers
        x = VectorColumn(plan.x, head=3, tail=1, font_size=18, theme=th, bracket_color=th.embedding)
        xname = math("x", 26, th.embedding).next_to(x, UP, buff=0.12)
        xg = VGroup(x, xname, label(str(plan.d_model), 16, th.dim).next_to(x, DOWN, buff=0.1))
        table = self.neurons(stage, plan)
        out = VectorColumn(plan.out, head=3, tail=1, font_size=18, theme=th, bracket_color=th.delta_multi)
        oname = math("y", 26, th.delta_multi).next_to(out, UP, buff=0.12)
        og = VGroup(out, oname, label(str(plan.d_model), 16, th.dim).next_to(out, DOWN, buff=0.1))
        flow = VGroup(xg, table, og).arrange(RIGHT, buff=0.6)
        arrows = VGroup(Arrow(xg.get_right(), table.get_left(), buff=0.1, stroke_width=2, color=th.dim),
                        Arrow(table.get_right(), og.get_left(), buff=0.1, stroke_width=2, color=th.dim))
        body = VGroup(flow, arrows)
        fit_into(body, full.width, top - full.bottom - 1.2)
        body.move_to([0, (top + full.bottom + 0.8) / 2, 0])
        with stage.narrating(say(f"{T}.caption_neurons_gated" if gated else f"{T}.caption_neurons_plain", word=word,
                                 shown=len(plan.neurons), d_mlp=plan.d_mlp)):
            stage.play(FadeOut(mine), FadeOut(gpt), run_time=0.5)
            stage.play(FadeIn(xg), FadeIn(arrows[0]), FadeIn(table, lag_ratio=0.05), run_time=1.4)
            stage.wait(0.8)
        with stage.narrating(say(f"{T}.caption_active", count=plan.active, d_mlp=plan.d_mlp)):
            stage.play(table.brace.animate.set_color(th.highlight), run_time=0.5)
            stage.wait(0.6)
        check = label(say(f"{T}.check", diff=tiny(say, plan.max_diff)), 20, th.highlight)
        fit_into(check, full.width, 0.4).next_to(body, DOWN, buff=0.3)
        with stage.narrating(say(f"{T}.caption_out", d_model=plan.d_model, word=word, diff=tiny(say, plan.max_diff))):
            stage.play(FadeIn(arrows[1]), FadeIn(og), run_time=1.0)
            stage.play(FadeIn(check), run_time=0.6)
            stage.wait(0.8)
        drawn.update(x=x, neurons=table, out=out, check=check)

    @staticmethod
    def neurons(stage: Stage, plan: MlpPlan) -> VGroup:
        """One row per neuron shown: its index, then gate, SiLU(gate), up and the product (SwiGLU),
        or up and GELU(up); an ellipsis row and a brace naming how many neurons exist."""
        th, say = stage.theme, stage.say
        gated = plan.kind == "swiglu"
        if gated:
            head = [label("", 18, th.text), math("g", 24, th.value), math('"SiLU"(g)', 22, th.value),
                    math("u", 24, th.key), math('h = "SiLU"(g) dot u', 22, th.text)]
            cols = (plan.gate, plan.gate_act, plan.up, plan.hidden)
        else:
            head = [label("", 18, th.text), math("u", 24, th.key), math('h = "GELU"(u)', 22, th.text)]
            cols = (plan.up, plan.hidden)
        rows = [head]
        for r, n in enumerate(plan.neurons):
            rows.append([label(f"#{n}", 18, th.dim)] + [label(fixed(c[r], 2), 20, th.text) for c in cols])
        rows.append([label("⋮", 20, th.dim)] + [label("⋮", 20, th.dim) for _ in cols])
        grid = aligned_rows(rows, col_gap=0.35, row_step=0.42)
        note = braced(grid, say(f"{T}.brace", shown=len(plan.neurons), d_mlp=plan.d_mlp), th, RIGHT, 18)
        note[1].next_to(note[0], RIGHT, buff=0.1)
        table = VGroup(grid, note)
        table.brace = note[0]
        table.grid = grid
        return table

