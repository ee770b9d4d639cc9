"""The parameter-count chapter: how many numbers attention holds, tallied on screen as the video does.

On the left the table, every row named from the start (dimmed) and lit with its count when the
caption reaches it: W_Q, W_K, the too-big value map, value-down + value-up, one head, one layer, all
attention, then the rest of the model. On the right the matrices themselves, all drawn to one scale
and the way the suite draws them everywhere (matrix times column vector, as the video does): W_Q,
W_K and value-down W_V are d_head rows × d_model columns, value-up W_O is d_model × d_head
(lessons `query`, `output_matrix`). GPT-3's 128 × 12,288 W_Q is a hairline over its 12,288 × 12,288
value map. Then one head framed, times the heads, times the layers; at the end the whole model as
one bar, built part by part as the rows are counted, attention's share above it. Every number from
the config (plans/params.py); math is typeset (components/rich_text.py).
"""

from __future__ import annotations

from manim import (DOWN, LEFT, RIGHT, UP, Create, FadeIn, FadeOut, Line, Rectangle, ReplacementTransform,
                   SurroundingRectangle, VGroup, Write)

from ..components.rich_text import rich
from ..components.text import label
from ..lesson import Chapter
from ..plans.params import ParamsPlan, Row, plan_params
from ..stage import Stage

S = "params.screen"
ROW_FS = 24
NAME_FS = 24
DIMS_FS = 22
TIMES_FS = 28
NAME_GAP = 0.15  # between a flat matrix and its name on its left
ROW_GAP = 0.14  # between flat matrices one under another
TOP1 = 0.45  # W_Q's top under the panel's top ("drawn to scale" beside it)
SQ_GAP = 0.3  # between the flat matrices' size and the full value map's name
HEAD_ROOM = 3.55  # the head's frame, value-up's name and size, "one head" above, the two × lines below
TABLE = (-6.85, 0.75, 3.05, -3.7)  # left, right, top, bottom of the table
PANEL = (1.25, 6.85, 3.05, -3.75)  # left, right, top, bottom of the drawing


class ParameterCount(Chapter):
    key = "parameter_count"

    def __init__(self, config: str | None = None):
        self.config = config  # a built-in config by name ("gpt3"), else the model in use

    def plan(self, setting) -> ParamsPlan:
        return plan_params(setting, self.config)

    # --- pieces ------------------------------------------------------------------------------
    def name(self, stage: Stage, plan: ParamsPlan) -> str:
        return stage.say(plan.name_key) if plan.name_key else plan.name

    def table_row(self, stage: Stage, row: Row, width: float) -> VGroup:
        """The row's words (typeset math in them) on the left, its count right-aligned; the words
        start dimmed (named, not yet counted) and the count is added when the row is lit."""
        say, th = stage.say, stage.theme
        what = rich(say(f"{S}.{row.what}", **row.what_params), ROW_FS, th.dim)
        shown = say("params.scene.number", n=row.value) if row.value else "—"
        lit = th.query if row.part in ("per_head", "per_layer", "attention") else th.text
        num = label(shown, ROW_FS, lit)
        num.value, num.shown = row.value, shown
        what.room = width - num.width - 0.35  # the table scales every row's words alike (`table`)
        what.natural_height = what.height
        what.shift(RIGHT * (-width / 2 - what.get_left()[0]))
        num.move_to([width / 2 - num.width / 2, 0, 0])
        out = VGroup(what, num)
        out.what, out.number, out.part, out.lit = what, num, row.part, lit
        return out

    def table(self, stage: Stage, plan: ParamsPlan, width: float) -> list[VGroup]:
        """The rows, their words all at one size: when a row's words overflow its room, every row
        shrinks by the same factor (a row shrunk alone read as a footnote); `fit` holds that factor."""
        rows = [self.table_row(stage, r, width) for r in plan.rows]
        fit = min([1.0] + [r.what.room / r.what.width for r in rows])
        for r in rows:
            if fit < 1.0:
                r.what.scale(fit, about_point=r.what.get_left())
            r.what.fit = fit
        return rows

    def matrix(self, stage: Stage, rows: int, cols: int, unit: float, color: str) -> Rectangle:
        """rows × cols numbers as a filled rectangle, to scale (`unit` per number; a hairline stays visible)."""
        box = Rectangle(width=max(cols * unit, 0.012), height=max(rows * unit, 0.012), color=color, stroke_width=1.5)
        box.set_fill(color, opacity=0.45)
        box.rows, box.cols = rows, cols
        return box

    def dims(self, stage: Stage, a: int, b: int, key: str = "params.scene.times") -> VGroup:
        mob = label(stage.say(key, a=a, b=b), DIMS_FS, stage.theme.text)
        return mob

    # --- layouts (all in one unit per number, so the sizes compare) -----------------------------
    def flats(self, stage: Stage, plan: ParamsPlan, unit: float, names: list, colors: list, left: float,
              top: float) -> VGroup:
        """Flat d_head × d_model matrices one under another from `top`, each named on its left, the
        boxes' left edges on one line."""
        c = plan.config
        tags = [rich(n, NAME_FS, col) for n, col in zip(names, colors)]
        x = left + max(t.width for t in tags) + NAME_GAP
        out = VGroup()
        y = top
        for tag, color in zip(tags, colors):
            box = self.matrix(stage, c.d_head, c.d_model, unit, color)
            pitch = max(box.height, tag.height)
            box.move_to([x + box.width / 2, y - pitch / 2, 0])
            tag.next_to(box, LEFT, buff=NAME_GAP)
            item = VGroup(box, tag)
            item.box, item.tag = box, tag
            out.add(item)
            y -= pitch + ROW_GAP
        return out

    def square_name(self, stage: Stage, plan: ParamsPlan) -> VGroup:
        """The full value map's name over its size."""
        c = plan.config
        return VGroup(label(stage.say(f"{S}.full_name"), NAME_FS, stage.theme.value),
                      self.dims(stage, c.d_model, c.d_model)).arrange(DOWN, buff=0.1)

    def sizes(self, stage: Stage, plan: ParamsPlan) -> tuple[float, float]:
        """The two scales (units per number), each as large as the panel allows: one for W_Q and W_K
        over the full value map, one for the head's four matrices (three flat, value-up tall)."""
        c, say = plan.config, stage.say
        left, right, top, bottom = PANEL
        w, h = right - left, top - bottom
        names = [rich(say(f"{S}.{k}"), NAME_FS) for k in ("w_q_name", "w_k_name", "value_down_name")]
        name_w = max(n.width for n in names) + NAME_GAP
        name_h = max(n.height for n in names)
        thin = c.d_head / c.d_model
        dims_h = self.dims(stage, c.d_head, c.d_model, f"{S}.same_size").height

        def stack(k: int, side: float) -> float:  # the height of k flat bars one under another
            return k * max(side * thin, name_h) + ROW_GAP * (k - 1)

        sq_h = self.square_name(stage, plan).height
        # 1. "drawn to scale", two flat bars, their size, the square's name and size, the square
        s1 = w - name_w - 0.1
        for _ in range(4):  # the heights depend on the side: a few rounds settle it
            s1 = min(s1, h - TOP1 - stack(2, s1) - 0.15 - dims_h - SQ_GAP - sq_h - 0.12)
        # 2. the head: three flat bars left, value-up tall right (its name over it, its size under it)
        s2 = h - HEAD_ROOM - (0.55 if plan.shared_kv else 0.0)
        for _ in range(4):  # value-up's size sits under it, right-aligned (it may reach under the flat ones)
            s2 = min(s2, w - 0.3 - name_w - 0.3 - s2 * thin - 0.3)
        return s1 / c.d_model, s2 / c.d_model

    # --- the play ----------------------------------------------------------------------------
    def play(self, stage: Stage, plan: ParamsPlan) -> None:
        say, th = stage.say, stage.theme
        c = plan.config
        name = self.name(stage, plan)
        hkey = f"{S}.heading_shared" if plan.shared_kv else f"{S}.heading"
        words = say(hkey, name=name, d_model=c.d_model, d_head=c.d_head, heads=c.n_heads, kv=c.kv_heads,
                    layers=c.n_layers, count=c.n_layers)
        if c.d_mlp:  # the MLP row counts with d_mlp: its value stands in the heading with the others
            words = say(f"{S}.heading_mlp", heading=words, d_mlp=c.d_mlp)
        heading = rich(words, 30, th.text)
        stage.region("title").fit(heading)

        t_left, t_right, t_top, t_bottom = TABLE
        width = t_right - t_left
        rows = self.table(stage, plan, width)
        step = min((t_top - t_bottom) / len(rows), 0.62)
        for i, r in enumerate(rows):
            r.shift([t_left + width / 2, t_top - step * (i + 0.5), 0])
        drawn = stage.drawn[self.key] = {"heading": heading, "rows": rows, "plan": plan}
        by = {r.part: (r, m) for r, m in zip(plan.rows, rows)}

        def show(part: str, *extra, wait: float = 0.8):
            row, mob = by[part]
            with stage.narrating(say(f"params.scene.{row.caption}", name=name, **row.caption_params)):
                stage.play(mob.what.animate.set_color(th.text), FadeIn(mob.number, shift=LEFT * 0.2), *extra,
                           run_time=0.8)
                stage.wait(wait)

        with stage.narrating(say("params.scene.intro", name=name)):
            stage.play(Write(heading), FadeIn(VGroup(*(r.what for r in rows)), lag_ratio=0.05), run_time=1.2)
            stage.wait(0.5)

        p_left, p_right, p_top, p_bottom = PANEL
        u1, u2 = self.sizes(stage, plan)
        # 1. W_Q and W_K (flat: d_head rows × d_model columns), then the full value map under them,
        # all at one scale: the same width, d_model columns
        qk = self.flats(stage, plan, u1, [say(f"{S}.w_q_name"), say(f"{S}.w_k_name")], [th.query, th.key],
                        p_left, p_top - TOP1)
        qk_dims = self.dims(stage, c.d_head, c.d_model, f"{S}.same_size")
        qk_dims.next_to(VGroup(*(b.box for b in qk)), DOWN, buff=0.15).align_to(qk[0].box, LEFT)
        note = label(say(f"{S}.to_scale"), DIMS_FS, th.dim)
        note.move_to([p_right - note.width / 2, p_top - note.height / 2, 0])
        drawn["to_scale"] = note
        show("w_q", FadeIn(qk[0]), FadeIn(qk_dims), FadeIn(note))
        show("w_k", FadeIn(qk[1]))
        square = self.matrix(stage, c.d_model, c.d_model, u1, th.value)
        sq_name = self.square_name(stage, plan)
        sq_name.next_to(qk_dims, DOWN, buff=SQ_GAP).align_to(qk[0].box, LEFT)
        square.next_to(sq_name, DOWN, buff=0.12).align_to(qk[0].box, LEFT)
        cross = VGroup(Line(square.get_corner(UP + LEFT), square.get_corner(DOWN + RIGHT), color=th.text, stroke_width=5),
                       Line(square.get_corner(UP + RIGHT), square.get_corner(DOWN + LEFT), color=th.text, stroke_width=5))
        full = VGroup(square, sq_name)
        show("full_value", FadeIn(square), FadeIn(sq_name), Create(cross, run_time=1.2), wait=0.3)

        # 2. value-down and value-up instead: the head's four matrices, at the head's scale; value-up
        # lifts d_head numbers back to d_model: d_model rows × d_head columns, tall
        top2 = p_top - 0.5 - 0.15  # under "one head"
        tall = self.flats(stage, plan, u2, [say(f"{S}.w_q_name"), say(f"{S}.w_k_name"), say(f"{S}.value_down_name")],
                          [th.query, th.key, th.value], p_left + 0.15, top2)
        tall_dims = self.dims(stage, c.d_head, c.d_model, f"{S}.same_size")
        tall_dims.next_to(VGroup(*(b.box for b in tall)), DOWN, buff=0.15).align_to(tall[0].box, LEFT)
        up_box = self.matrix(stage, c.d_model, c.d_head, u2, th.output)
        up_tag = rich(say(f"{S}.value_up_name"), NAME_FS, th.output)
        up_x = tall.get_right()[0] + 0.3
        up_tag.move_to([up_x + up_tag.width / 2, top2 - up_tag.height / 2, 0])
        up_box.move_to([up_x + up_box.width / 2, up_tag.get_bottom()[1] - 0.12 - up_box.height / 2, 0])
        up_dims = self.dims(stage, c.d_model, c.d_head).next_to(up_box, DOWN, buff=0.15).align_to(up_box, RIGHT)
        up = VGroup(up_box, up_tag)
        # the full value map's row is replaced, not added: dimmed and struck through, so the lit
        # numbers of the table's column add up to what the model holds
        _, replaced = by["full_value"]
        strike = Line(replaced.number.get_left() + LEFT * 0.08, replaced.number.get_right() + RIGHT * 0.08,
                      color=th.text, stroke_width=3)
        drawn["replaced"] = (replaced, strike)
        show("value_down_up", FadeOut(full), FadeOut(cross), ReplacementTransform(qk, VGroup(tall[0], tall[1])),
             ReplacementTransform(qk_dims, tall_dims), FadeIn(tall[2]), FadeIn(up), FadeIn(up_dims),
             replaced.animate.set_opacity(0.35), Create(strike))
        # the shapes as drawn (rows × columns), the same in every lesson that draws these matrices
        drawn["shapes"] = {"w_q": (tall[0].box.rows, tall[0].box.cols), "value_up": (up_box.rows, up_box.cols)}
        drawn["shape_labels"] = {"w_q": tall_dims, "value_up": up_dims}

        head = VGroup(tall, up, up_dims, tall_dims)
        frame = SurroundingRectangle(head, buff=0.15, color=th.dim, corner_radius=0.08)
        one = label(say(f"{S}.one_head"), NAME_FS, th.text).next_to(frame, UP, buff=0.1).align_to(frame, LEFT)
        show("per_head", FadeIn(frame), FadeIn(one))
        drawn.update(matrices={"w_q": tall[0].box, "w_k": tall[1].box, "full_value": square,
                               "value_down": tall[2].box, "value_up": up_box}, unit=u2, unit_full=u1)
        if plan.shared_kv:  # query heads and key/value heads counted apart
            heads_x = VGroup(rich(say(f"{S}.times_query_heads", count=c.n_heads), TIMES_FS, th.query),
                             rich(say(f"{S}.times_kv_heads", count=c.kv_heads), TIMES_FS, th.query)
                             ).arrange(DOWN, buff=0.15, aligned_edge=LEFT)
        else:
            heads_x = rich(say(f"{S}.times_heads", count=c.n_heads), TIMES_FS, th.query)
        heads_x.next_to(frame, DOWN, buff=0.3).align_to(frame, LEFT)
        if heads_x.get_right()[0] > p_right:
            heads_x.scale_to_fit_width(p_right - frame.get_left()[0]).align_to(frame, LEFT)
        layers_x = rich(say(f"{S}.times_layers", count=c.n_layers), TIMES_FS, th.query)
        layers_x.next_to(heads_x, DOWN, buff=0.2).align_to(frame, LEFT)
        drawn.update(heads_times=heads_x, layers_times=layers_x)
        show("per_layer", FadeIn(heads_x, shift=UP * 0.1))
        show("attention", FadeIn(layers_x, shift=UP * 0.1))

        # 3. the whole model as one bar, part by part
        segs, tags, share = self.share_bar(stage, plan)
        att = next(i for i, s in enumerate(segs) if s.part == "attention")
        stage.play(FadeOut(VGroup(head, frame, one, heads_x, layers_x, note)), FadeIn(segs[att]), FadeIn(tags[att]),
                   run_time=0.8)
        for part in ("embedding", "mlp", "unembedding"):
            extra = [a for i, s in enumerate(segs) if s.part == part for a in (FadeIn(segs[i]), FadeIn(tags[i]))]
            show(part, *extra, wait=0.5)
        outline = SurroundingRectangle(segs, buff=0.0, color=th.text, stroke_width=2)
        show("total", Create(outline), wait=0.5)
        with stage.narrating(say("params.scene.share_line", share=plan.tally.attention_share)):
            stage.play(FadeIn(share, shift=UP * 0.1), run_time=0.6)
            stage.wait(1.5)

    def share_bar(self, stage: Stage, plan: ParamsPlan):
        """The whole model's matrices as one upright bar (model order, to scale), attention's part lit."""
        say, th = stage.say, stage.theme
        t = plan.tally
        p_left, p_right, p_top, p_bottom = PANEL
        share = label(say("params.scene.share", share=t.attention_share), 30, th.query)
        H, W = p_top - p_bottom - share.height - 0.3, 1.3
        colors = {"embedding": th.embedding, "attention": th.query, "mlp": th.positive, "unembedding": th.dim}
        segs = VGroup()
        for part, n in plan.bar:
            h = max(H * n / t.total, 0.012)
            seg = Rectangle(width=W, height=h, stroke_width=0)
            seg.set_fill(colors[part], opacity=1.0 if part == "attention" else 0.5)
            seg.part, seg.count = part, n
            segs.add(seg)
        segs.arrange(DOWN, buff=0).move_to([p_left + 0.6 + W / 2, p_bottom + H / 2, 0])
        tags = VGroup()
        for k, seg in enumerate(segs):
            color = colors[seg.part] if seg.part != "attention" else th.text
            tag = label(say(f"params.bar.{seg.part}"), 26, color)
            tag.next_to(seg, RIGHT, buff=0.25)
            if seg.height < tag.height:
                # a sliver (GPT-3's embedding, 0.4 %): named with its share, beside the bar's end it sits at
                # and tied to it by a short leader (review 49: two unnamed slivers at the bar's ends)
                tag = label(say("params.bar.sliver", name=say(f"params.bar.{seg.part}"), share=seg.count / t.total),
                            24, color)
                tag.next_to(seg, RIGHT, buff=0.45)
                room = PANEL[1] - tag.get_left()[0]
                if tag.width > room:
                    tag.scale_to_fit_width(room).next_to(seg, RIGHT, buff=0.45)
                if k == 0:
                    tag.align_to(seg, UP)
                elif k == len(segs) - 1:
                    tag.align_to(seg, DOWN)
                leader = Line(seg.get_right() + RIGHT * 0.04, [tag.get_left()[0] - 0.06, tag.get_y(), 0],
                              color=color, stroke_width=2)
                tag = VGroup(leader, tag)
                tag.sliver = True
            tags.add(tag)
        share.next_to(segs, UP, buff=0.25).align_to(segs, LEFT)
        stage.drawn[self.key].update(bar=list(segs), share=share, bar_names=tags)
        return segs, tags, share
