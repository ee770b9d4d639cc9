"""`mlp`: the block's MLP on one token after attention. The model's shape (SmolLM2's gated SwiGLU
576 → 1536 → 576) drawn to scale; the focus token's real hidden neurons (the most active few, a
brace saying how many exist: gate, SiLU(gate), up, their product); the output, equal to the
model's own MLP output; GPT-2 small's plain 768 → 3072 → 768 from its config beside it."""

from __future__ import annotations

from decimal import Decimal
from math import exp as math_exp
from typing import ClassVar

from manim import DOWN, LEFT, PI, RIGHT, UP, Arrow, FadeIn, FadeOut, Line, Rectangle, VGroup

from ..components.number_table import aligned_rows
from ..components.text import label, text_baseline
from ..components.vectors import VectorColumn, math, symbol_source
from ..components.word_boxes import WordBoxes, space_key
from ..lesson import Chapter, Lesson
from ..plans.mlp import MlpPlan, plan_mlp, with_mlp_probe
from ..stage import Stage
from .beyond_parts import diff_line
from .embedding_parts import fit_into
from ..plans.rounding import drawn_value, rounding_off
from .head_split import braced, fixed, grouped, model_name, tiny
from .honest import wrapped
from .rounding_parts import declare_rows, rounding_marks

T = "blocks.mlp"


class MlpLesson(Lesson):
    """A lesson whose setting also holds the focus token's MLP activations (the model runs them).
    The toy has no MLP: on it the setting raises a UserError (`refuses_toy`)."""

    refuses_toy: ClassVar[bool] = True

    def setting(self, inputs):
        return with_mlp_probe(super().setting(inputs), inputs)


def shape_diagram(stage: Stage, sizes: tuple[int, ...], gated: bool, color_in, color_mid, title: str,
                  unit: float) -> VGroup:
    """Columns to scale (`unit` scene units of height per number): d_model, d_mlp (two of them,
    gate and up, when gated), d_model, with arrows; each column's size under it."""
    th = stage.theme

    def col(n, color):
        r = Rectangle(width=0.8, height=max(n * unit, 0.1), stroke_width=2, stroke_color=color)
        r.set_fill(color, opacity=0.5)
        return VGroup(r, label(grouped(n), 24, th.text).next_to(r, DOWN, buff=0.1))  # 1,536 beside "1,000"
    d_in, d_mid = sizes
    if gated:  # the gate g and the up projection u, each named over its column
        pair = [col(d_mid, color_mid), col(d_mid, color_mid)]
        for c, name in zip(pair, ("g", "u")):
            c.add(math(name, 28, th.text).next_to(c[0], UP, buff=0.1))
        mid = VGroup(*pair).arrange(RIGHT, buff=0.25, aligned_edge=DOWN)
    else:
        mid = col(d_mid, color_mid)
    parts = [col(d_in, color_in), mid, col(d_in, color_in)]
    row = VGroup(*parts).arrange(RIGHT, buff=1.0)
    for p in parts:  # every column's box centred on one line
        box = p[0] if isinstance(p[0], Rectangle) else p[0][0]
        p.shift(DOWN * box.get_center()[1])
    arrows = VGroup(*(Arrow([a.get_right()[0], 0, 0], [b.get_left()[0], 0, 0], buff=0.12, stroke_width=3,
                            color=th.dim, max_tip_length_to_length_ratio=0.25) for a, b in zip(parts, parts[1:])))
    head = label(title, 26, th.text)
    group = VGroup(head, VGroup(row, arrows)).arrange(DOWN, buff=0.3)
    group.columns, group.arrows = parts, arrows
    return group


def product_rows_off(plan: MlpPlan) -> set[int]:
    """The rows of the neuron table whose drawn SiLU(g) times drawn u, to two decimals, is not the drawn h."""
    off = set()
    for r in range(len(plan.neurons)):
        a, b, h = (drawn_value(fixed(c[r], 2)) for c in (plan.gate_act, plan.up, plan.hidden))
        if abs(a * b - h) > Decimal("0.005"):  # more than the last drawn digit's rounding
            off.add(r)
    return off


def scale_bar(stage: Stage, count: int, unit: float) -> VGroup:
    """A bar `count` numbers tall at the diagrams' scale, with its length written beside it."""
    th = stage.theme
    bar = Rectangle(width=0.12, height=count * unit, stroke_width=0).set_fill(th.dim, opacity=0.9)
    ticks = VGroup(*(Line(LEFT * 0.12, RIGHT * 0.12, stroke_width=2, color=th.dim).move_to(bar.get_edge_center(e))
                     for e in (UP, DOWN)))
    # a figure beside the diagrams' figures: the thousands comma in every language (4,096)
    text = label(stage.say(f"{T}.scale", count=grouped(count, stage.say)), 22, th.dim).next_to(bar, UP, buff=0.15)
    return VGroup(bar, ticks, text)


def legend(stage: Stage, entries) -> VGroup:
    """Colour swatches with their names, in a row."""
    th = stage.theme
    items = [VGroup(Rectangle(width=0.35, height=0.25, stroke_width=1.5, stroke_color=c).set_fill(c, opacity=0.5),
                    label(text, 22, th.text)).arrange(RIGHT, buff=0.15) for text, c in entries]
    return VGroup(*items).arrange(RIGHT, buff=0.6)


WORDS_FILL, WORDS_MAX_FS = 0.92, 40  # the word row fills this much of its width, its words up to this size


def per_token(stage: Stage, words: WordBoxes, focus: int, top: float, bottom: float) -> VGroup:
    """Under every word an arrow into an MLP box of its own, all alike, a brace under them saying the
    weights are the same: each token goes through the MLP on its own (the focus's box in its colour)."""
    th, say = stage.theme, stage.say
    box_h = min(3.4, (top - bottom) * 0.6)  # (review 50: at 2.2, the lower third of the frame stood empty)
    # one width for every box, as near as their words stand (review 48: boxes as wide as their words
    # contradicted "the same weights for every token")
    xs = [words[i].get_x() for i in range(len(words))]
    pitch = min((b - a for a, b in zip(xs, xs[1:])), default=2.0)
    widths = [max(min(pitch - 0.1, max(w.width for w in words)), 0.4)] * len(words)
    name = math('"MLP"', 26, th.text)
    turned = name.width > min(widths) - 0.12  # every box's name set alike: all across, or all turned
    boxes = VGroup()
    for i, w in enumerate(widths):
        color = th.query if i == focus else th.value
        box = Rectangle(width=w, height=box_h, stroke_width=3 if i == focus else 2, stroke_color=color)
        box.set_fill(color, opacity=0.25 if i == focus else 0.12).move_to([words[i].get_x(), 0, 0])
        n = name.copy().rotate(PI / 2) if turned else name.copy()
        boxes.add(VGroup(box, n.move_to(box)))
    note = braced(boxes, say(f"{T}.same_weights"), th, DOWN, 26)
    fit_into(note[1], stage.region("full").width - 0.4, 0.5).next_to(note[0], DOWN, buff=0.1)
    group = VGroup(boxes, note)
    group.shift(UP * (top - 0.9 - boxes.get_top()[1]))  # each box stays under its word, an arrow's length down
    arrows = VGroup(*(Arrow([w.get_x(), words.get_bottom()[1] - 0.05, 0], [w.get_x(), b.get_top()[1] + 0.05, 0],
                            buff=0, stroke_width=3, color=th.dim, max_tip_length_to_length_ratio=0.2)
                      for w, b in zip(words, boxes)))
    out = VGroup(arrows, boxes, note)
    out.boxes = boxes
    return out


class Mlp(Chapter):
    key = "mlp"
    own_space_key = True

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
        title = label(say(f"{T}.title", layer=plan.layer, model=model_name(say, plan.model_name)), 30, th.text)
        stage.region("title").fit(title)
        # a real model's tokens show their leading space as ␣: its key at the row's right, as every lesson has it
        key = space_key(plan.tokens, say, th, font_size=22, mark_size=24)
        # the key on the title's line at the right where it fits there (the title moved left as far as it must):
        # the word row then takes the frame's width (review 51: the words and their boxes in its left half)
        key_up = key is not None and title.width + key.width + 0.6 <= full.width
        if key_up:
            key.move_to([full.right - key.width / 2, title.get_y(), 0])
            title.shift(LEFT * max(0.0, title.get_right()[0] - (key.get_left()[0] - 0.4)))
        room = full.width - (key.width + 0.4 if key is not None and not key_up else 0.0)
        words = WordBoxes(plan.tokens, theme=th, font_size=24, max_width=room)
        if words.width < WORDS_FILL * room:  # a short text's row grows to the width
            words = WordBoxes(plan.tokens, theme=th, font_size=min(WORDS_MAX_FS, 24 * WORDS_FILL * room / words.width),
                              max_width=room)
        words.move_to([0, title.get_bottom()[1] - 0.2 - words.height / 2, 0])
        if key is not None and not key_up:
            words.align_to([full.left, 0, 0], LEFT)
            key.move_to([full.right - key.width / 2, words.get_y(), 0])
        drawn.update(space_key=key, title=title, words=words)
        top = words.get_bottom()[1] - 0.3
        alone = per_token(stage, words, plan.focus, top, full.bottom)
        drawn["per_token"] = alone
        with stage.narrating(say(f"{T}.caption_intro", word=word, layer=plan.layer)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(words, lag_ratio=0.08),
                       *([FadeIn(key)] if key is not None else []), run_time=0.9)
            stage.play(FadeIn(alone[0], lag_ratio=0.05), FadeIn(alone[1], lag_ratio=0.05), run_time=0.9)
            stage.play(FadeIn(alone[2]), words.animate.highlight(plan.focus, th.query), run_time=0.6)
            stage.wait(0.6)
        stage.play(FadeOut(alone), run_time=0.4)

        # the model's shape and GPT-2 small's, at one scale: the tallest column fills the room
        gd, gm = plan.gpt2
        room = top - full.bottom - 2.4  # the titles over, the sizes and the legend under the columns
        unit = room / max(gm, plan.d_mlp)
        mine = shape_diagram(stage, (plan.d_model, plan.d_mlp), gated, th.embedding, th.value,
                             say(f"{T}.shape_{'gated' if gated else 'plain'}", model=model_name(say, plan.model_name),
                                 d_model=grouped(plan.d_model, say), d_mlp=grouped(plan.d_mlp, say)), unit)
        gpt = shape_diagram(stage, (gd, gm), False, th.embedding, th.key,
                            say(f"{T}.shape_gpt2", d_model=grouped(gd, say), d_mlp=grouped(gm, say)), unit)
        bar = scale_bar(stage, 1000, unit)
        keys = legend(stage, [(say(f"{T}.legend_stream"), th.embedding),
                              (say(f"{T}.legend_hidden", model=model_name(say, plan.model_name)), th.value),
                              (say(f"{T}.legend_hidden", model="GPT-2"), th.key)])
        fit_into(keys, full.width - 0.4, 0.5)
        keys.move_to([0, full.bottom + 0.75, 0])
        y_mid = top - 0.7 - room / 2  # the columns' middle line, under the titles
        for d, x in ((mine, full.left + full.width * 0.24), (gpt, full.right - full.width * 0.22)):
            d[1].shift([x - d[1].get_x(), y_mid - d.columns[0][0].get_y(), 0])
            fit_into(d[0], full.width * 0.45, 0.5).move_to([x, top - 0.3, 0])
        gap = (mine[1].get_right()[0] + gpt[1].get_left()[0]) / 2  # the scale bar between the two
        bar.shift([gap - bar[0].get_x(), y_mid - bar[0].get_y(), 0])
        key = f"{T}.caption_shape_gated" if gated else f"{T}.caption_shape_plain"
        with stage.narrating(say(key, d_model=plan.d_model, d_mlp=grouped(plan.d_mlp, say), ratio=plan.ratio)):
            stage.play(FadeIn(mine, lag_ratio=0.2), FadeIn(bar), FadeIn(keys[:2]), run_time=1.2)
            stage.wait(0.5)
        drawn["shape"] = mine

        # GPT-2 small, from its config, beside it
        with stage.narrating(say(f"{T}.caption_gpt2", d_model=gd, d_mlp=grouped(gm, say), ratio=gm // gd)):
            stage.play(FadeIn(gpt, lag_ratio=0.2), FadeIn(keys[2]), run_time=1.2)
            stage.wait(0.5)
        drawn["gpt2"] = gpt

        # the focus token's real numbers
        x = VectorColumn(plan.x, head=3, tail=1, font_size=26, theme=th, bracket_color=th.embedding)
        xname = math(symbol_source("E"), 34, th.embedding).next_to(x, UP, buff=0.12)
        xg = VGroup(x, xname, label(str(plan.d_model), 24, th.dim).next_to(x, DOWN, buff=0.1))
        table = neuron_table(stage, plan)
        # the arrow names the norm the MLP's input goes through first (the table's g and u are computed from the
        # normed E, not E), and is long enough for that name; it ends short of the rows' indices (review 49: it
        # touched "#1254")
        norm = label(say(f"{T}.norm_{plan.norm}"), 22, th.dim) if plan.norm in ("rmsnorm", "layernorm") else None
        flow = VGroup(xg, table).arrange(RIGHT, buff=max(0.9, norm.width + 0.6 if norm is not None else 0.0))
        arrow = Arrow(xg.get_right(), table.get_left() + LEFT * 0.15, buff=0.1, stroke_width=2, color=th.dim)
        body = VGroup(flow, arrow)
        if norm is not None:
            body.add(norm.next_to(arrow, UP, buff=0.08))
            drawn["norm_label"] = norm
        fit_into(body, full.width - 0.2, top - full.bottom - 0.9)
        body.move_to([0, (top + full.bottom + 0.7) / 2, 0])
        with stage.narrating(say(f"{T}.caption_neurons_gated" if gated else f"{T}.caption_neurons_plain", word=word,
                                 shown=len(plan.neurons), d_mlp=grouped(plan.d_mlp, say))):
            stage.play(FadeOut(mine), FadeOut(gpt), FadeOut(bar), FadeOut(keys), run_time=0.5)
            stage.play(FadeIn(VGroup(*body[1:])), FadeIn(xg), FadeIn(table, lag_ratio=0.05), run_time=1.4)
            stage.wait(0.8)
        # the count the caption says, written under the brace's words
        active = label(say(f"{T}.active_note", count=plan.active, d_mlp=grouped(plan.d_mlp, say)), 26, th.highlight)
        fit_into(active, full.width, 0.5).next_to(body, DOWN, buff=0.3).set_x(table.get_x())
        if active.get_right()[0] > full.right:
            active.shift(LEFT * (active.get_right()[0] - full.right))
        drawn["active"] = active
        with stage.narrating(say(f"{T}.caption_active", count=plan.active, d_mlp=grouped(plan.d_mlp, say))):
            stage.play(table.brace.animate.set_color(th.highlight), FadeIn(active, shift=UP * 0.1), run_time=0.5)
            stage.wait(0.6)
        drawn.update(x=x, neurons=table)

        # the down projection: a d_model × d_mlp matrix times the d_mlp activations, shapes to scale
        down = self.down_projection(stage, plan, (top - full.bottom - 2.4) / plan.d_mlp)
        fit_into(down, full.width - 0.4, top - full.bottom - 1.2)
        down.move_to([0, (top + full.bottom + 0.8) / 2, 0])
        check = diff_line(say, f"{T}.check", plan.max_diff, 26, th.highlight)
        fit_into(check, full.width, 0.4).next_to(down, DOWN, buff=0.35).set_x(0)
        with stage.narrating(say(f"{T}.caption_out", d_model=plan.d_model, d_mlp=grouped(plan.d_mlp, say),
                                 diff=tiny(say, plan.max_diff))):
            stage.play(FadeOut(VGroup(xg, *body[1:], table, active)), run_time=0.5)
            stage.play(FadeIn(down.matrix), FadeIn(down.hidden), run_time=1.0)
            stage.play(FadeIn(down.result, shift=RIGHT * 0.2), run_time=1.0)
            stage.play(FadeIn(check), run_time=0.6)
            stage.wait(0.8)
        drawn.update(down=down, out=down.out, check=check)

        # the residual addition: E + MLP(E) = E′, the block's output
        add = self.residual(stage, plan)
        fit_into(add, full.width - 0.4, top - full.bottom - 1.3)
        add.move_to([0, (top + full.bottom + 0.9) / 2, 0])
        check2 = diff_line(say, f"{T}.check_after", plan.after_diff, 26, th.highlight)
        fit_into(check2, full.width, 0.4).next_to(add, DOWN, buff=0.35).set_x(0)
        if len(add.marks):  # why a row is marked ≈, under the check
            note = wrapped(say(f"{T}.rounding_note"), full.width - 1.0, 22, th.dim, 2)
            check2 = VGroup(check2, note.next_to(check2, DOWN, buff=0.15).set_x(0))
        with stage.narrating(say(f"{T}.caption_residual", word=word, diff=tiny(say, plan.after_diff))):
            stage.play(FadeOut(VGroup(down, check)), run_time=0.5)
            stage.play(FadeIn(add.terms, lag_ratio=0.3), run_time=1.2)
            stage.play(FadeIn(add.total, shift=RIGHT * 0.2), FadeIn(check2), run_time=0.9)
            stage.wait(0.8)
        drawn.update(residual=add, after=add.after, check_after=check2)

    def down_projection(self, stage: Stage, plan: MlpPlan, unit: float) -> VGroup:
        """W_down (d_model × d_mlp, a box to scale) times h (d_mlp tall) = MLP(E) (d_model tall), then
        MLP(E)'s real entries."""
        th, say = stage.theme, stage.say
        unit = min(unit, 3.6 / plan.d_mlp)
        mat = Rectangle(width=plan.d_mlp * unit, height=plan.d_model * unit, stroke_width=2, stroke_color=th.text)
        mat.set_fill(th.dim, opacity=0.35)
        mname = label(say(f"{T}.down_name"), 26, th.text).next_to(mat, UP, buff=0.15)
        msize = label(say(f"{T}.down_size", rows=plan.d_model, cols=grouped(plan.d_mlp, say)), 24, th.dim).next_to(mat, DOWN, buff=0.12)
        h = Rectangle(width=0.5, height=plan.d_mlp * unit, stroke_width=2, stroke_color=th.value).set_fill(th.value, opacity=0.5)
        h.next_to(mat, RIGHT, buff=0.35)
        hname = math("h", 32, th.value).next_to(h, UP, buff=0.12)
        hsize = label(grouped(plan.d_mlp, say), 24, th.dim).next_to(h, DOWN, buff=0.1)
        eq = label("=", 34, th.text).next_to(h, RIGHT, buff=0.35)
        y = Rectangle(width=0.5, height=plan.d_model * unit, stroke_width=2, stroke_color=th.delta_multi)
        y.set_fill(th.delta_multi, opacity=0.5).next_to(eq, RIGHT, buff=0.35)
        yname = math(f'"MLP"\\({symbol_source("E")}\\)', 30, th.delta_multi).next_to(y, UP, buff=0.12)
        ysize = label(str(plan.d_model), 24, th.dim).next_to(y, DOWN, buff=0.1)
        eq2 = label("=", 34, th.text).next_to(y, RIGHT, buff=0.35)
        out = VectorColumn(plan.out, head=3, tail=1, kind=plan.after_kind, font_size=26, theme=th,
                           bracket_color=th.delta_multi)
        out.next_to(eq2, RIGHT, buff=0.3)
        g = VGroup(mat, mname, msize, h, hname, hsize, eq, y, yname, ysize, eq2, out)
        g.matrix, g.hidden = VGroup(mat, mname, msize), VGroup(h, hname, hsize)
        g.result, g.out = VGroup(eq, y, yname, ysize, eq2, out), out
        return g

    def residual(self, stage: Stage, plan: MlpPlan) -> VGroup:
        """E + MLP(E) = E′ with their real entries, as many decimals as make the shown sums add up."""
        th = stage.theme
        cols = []
        for vec, name, color in ((plan.x, symbol_source("E"), th.embedding),
                                 (plan.out, f'"MLP"\\({symbol_source("E")}\\)', th.delta_multi),
                                 (plan.after, symbol_source("E", prime=True), th.updated)):
            # in the text's colour: shaded against the largest of the 576 entries (a real model's outlier
            # dimensions), every shown entry was a dim grey on the closing frame (review 51)
            v = VectorColumn(vec, head=3, tail=1, kind=plan.after_kind, font_size=40, theme=th, bracket_color=color,
                             shade=False)
            cols.append(VGroup(v, math(name, 44, color).next_to(v, UP, buff=0.15)))
        plus, eq = label("+", 52, th.text), label("=", 52, th.text)
        row = VGroup(cols[0], plus, cols[1], eq, cols[2]).arrange(RIGHT, buff=0.6)
        for col in cols[1:]:  # the three vectors' rows level (centred with their names, "MLP(E)" took E′'s down)
            col.shift(UP * (text_baseline(cols[0][0].entries[0]) - text_baseline(col[0].entries[0])))
        for sign in (plus, eq):  # the signs on the numbers' middle line
            sign.set_y(cols[0][0].get_y())
        # ≈ beside E′'s rows whose drawn terms miss the drawn sum (the lint checks every row), one note why
        decimals = 1 if plan.after_kind == "vec" else 2
        off = rounding_off(((i, (plan.x[i], plan.out[i]), plan.after[i]) for i in plan.shown if i is not None),
                           decimals)
        marks = rounding_marks(stage, cols[2][0], off, font_size=40)
        declare_rows([cols[0][0], cols[1][0]], cols[2][0], marks)
        row.add(marks)  # scaled and moved with the columns they sit beside
        row.total = VGroup(eq, cols[2], marks)
        row.terms, row.after, row.marks = VGroup(cols[0], plus, cols[1]), cols[2][0], marks
        return row


def silu_rows_off(plan: MlpPlan) -> set[int]:
    """The rows whose SiLU of the drawn g, to two decimals, is not the drawn SiLU(g) (review 53: g 1.51, SiLU(g)
    1.23, where SiLU(1.51) = 1.24: the model's g is 1.505)."""
    off = set()
    for r in range(len(plan.neurons)):
        g = float(drawn_value(fixed(plan.gate[r], 2)))
        if fixed(g / (1.0 + math_exp(-g)), 2) != fixed(plan.gate_act[r], 2):
            off.add(r)
    return off


def neuron_table(stage: Stage, plan: MlpPlan) -> VGroup:
    """One row per neuron shown: its index, then gate, SiLU(gate), up and the product (SwiGLU),
    or up and GELU(up); an ellipsis row and a brace naming how many neurons exist."""
    th, say = stage.theme, stage.say
    gated = plan.kind == "swiglu"
    if gated:
        head = [label("", 24, th.text), math("g", 32, th.value), math('"SiLU"(g)', 30, th.value),
                math("u", 32, th.key), math('h = "SiLU"(g) dot u', 30, th.text)]
        cols = (plan.gate, plan.gate_act, plan.up, plan.hidden)
    else:
        head = [label("", 24, th.text), math("u", 32, th.key), math('h = "GELU"(u)', 30, th.text)]
        cols = (plan.up, plan.hidden)
    rows = [head]
    off = product_rows_off(plan) if gated else set()
    silu_off = silu_rows_off(plan) if gated else set()
    for r, n in enumerate(plan.neurons):
        cells = [label(fixed(c[r], 2), 28, th.text) for c in cols]
        # the drawn factors miss the drawn product: "≈" before it (review 49: 1.23 × −1.08 ≠ −1.34); SiLU of the
        # drawn g is not the drawn SiLU(g): "≈" before that (review 53)
        for k in ([1] if r in silu_off else []) + ([len(cols) - 1] if r in off else []):
            mark = label(say("common.rounding.mark"), 28, th.dim)
            cells[k] = VGroup(mark, cells[k]).arrange(RIGHT, buff=0.12)
            cells[k].mark = mark
        rows.append([label(f"#{n}", 24, th.dim)] + cells)
    rows.append([label("⋮", 28, th.dim)] + [label("⋮", 28, th.dim) for _ in cols])
    grid = aligned_rows(rows, col_gap=0.5, row_step=0.56, align=["right"] * (len(cols) + 1))
    # the brace spans the neurons' rows only: not the header (review 49), not the ellipsis under them (review 50)
    note = braced(VGroup(*grid[1:-1]), say(f"{T}.brace", shown=len(plan.neurons), d_mlp=grouped(plan.d_mlp, say)),
                  th, RIGHT, 24)
    note[1].next_to(note[0], RIGHT, buff=0.1)
    table = VGroup(grid, note)
    table.rounding = VGroup()
    if off or silu_off:  # why a row is marked ≈, under the rows
        text = say(f"{T}.rounding_note_product") if off else ""
        text = (text + " " if text else "") + (say(f"{T}.rounding_note_silu") if silu_off else "")
        table.rounding = wrapped(text, grid.width + note.width, 22, th.dim, 4)
        table.rounding.said = text
        table.add(table.rounding.next_to(grid, DOWN, buff=0.25).align_to(grid, LEFT))
    table.brace = note[0]
    table.grid = grid
    table.marked = sorted(off)
    table.silu_marked = sorted(silu_off)
    return table

