"""The parameter-count chapter: how many numbers attention holds, tallied on screen as the video does.

A table grows row by row on the left (W_Q, W_K, the too-big value map, value-down + value-up, one
head, one layer, all attention, then the rest of the model); on the right the matrices themselves,
drawn to the model's proportions (d_model tall, d_head wide), the full value map crossed out, and at
the end the whole model as one bar with attention's share. Every number from the config (plans/params.py).
"""

from __future__ import annotations

from manim import (DOWN, LEFT, RIGHT, UP, Create, FadeIn, FadeOut, Line, Rectangle, SurroundingRectangle,
                   VGroup, Write)

from ..components.text import label
from ..plans.params import ParamsPlan, Row, plan_params
from ..stage import Stage
from ..lesson import Chapter

ROW_FS = 22
MAT_H = 3.0  # the height of a d_model-tall matrix in the panel


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
        say, th = stage.say, stage.theme
        what = label(say(f"params.row.{row.what}", **row.what_params), ROW_FS, th.text)
        shown = say("params.scene.number", n=row.value) if row.value else "—"
        num = label(shown, ROW_FS, th.query if row.part in ("per_head", "per_layer", "attention") else th.text)
        num.value, num.shown = row.value, shown
        room = width - num.width - 0.3
        if what.width > room:
            what.scale_to_fit_width(room)
        what.move_to([-width / 2 + what.width / 2, 0, 0])
        num.move_to([width / 2 - num.width / 2, 0, 0])
        out = VGroup(what, num)
        out.what, out.number, out.part = what, num, row.part
        return out

    def matrix(self, stage: Stage, plan: ParamsPlan, rows: int, cols: int, name: str, color: str) -> VGroup:
        """A rectangle of rows × cols numbers, to scale (a thin one kept visible), its name and size."""
        c = plan.config
        unit = MAT_H / c.d_model
        w, h = max(rows * unit, 0.1), max(cols * unit, 0.1)
        box = Rectangle(width=h, height=w, color=color, stroke_width=2).set_fill(color, opacity=0.35)
        tag = label(name, 18, color)
        dims = label(stage.say("params.scene.times", a=rows, b=cols), 14, stage.theme.dim)
        tag.next_to(box, UP, buff=0.1)
        dims.next_to(box, DOWN, buff=0.1)
        return VGroup(box, tag, dims)

    # --- the play ----------------------------------------------------------------------------
    def play(self, stage: Stage, plan: ParamsPlan) -> None:
        say, th = stage.say, stage.theme
        c = plan.config
        name = self.name(stage, plan)
        hkey = "params.scene.heading_shared" if plan.shared_kv else "params.scene.heading"
        heading = label(say(hkey, name=name, d_model=c.d_model, d_head=c.d_head, heads=c.n_heads, kv=c.kv_heads,
                            layers=c.n_layers, count=c.n_layers), 26, th.text)
        stage.region("title").fit(heading)
        area = stage.region("grid")
        table_top = stage.region("sentence").top - 0.1
        rows = [self.table_row(stage, r, area.width) for r in plan.rows]
        VGroup(*rows).arrange(DOWN, buff=0.16)
        table = VGroup(*rows)
        if table.height > table_top - area.bottom - 0.4:
            table.scale_to_fit_height(table_top - area.bottom - 0.4)
        table.move_to([area.center[0], table_top - table.height / 2, 0])
        drawn = stage.drawn[self.key] = {"heading": heading, "rows": rows, "plan": plan}
        by = {r.part: (r, m) for r, m in zip(plan.rows, rows)}

        def show(part: str, *extra, wait: float = 0.8):
            row, mob = by[part]
            with stage.narrating(say(f"params.scene.{row.caption}", name=name, **row.caption_params)):
                stage.play(FadeIn(mob, shift=RIGHT * 0.2), *extra, run_time=0.8)
                stage.wait(wait)

        with stage.narrating(say("params.scene.intro", name=name)):
            stage.play(Write(heading), run_time=1.0)
            stage.wait(0.5)

        panel = stage.region("panel")
        wq = self.matrix(stage, plan, c.d_model, c.d_head, "W_Q", th.query)
        wk = self.matrix(stage, plan, c.d_model, c.d_head, "W_K", th.key)
        VGroup(wq, wk).arrange(RIGHT, buff=0.5).move_to(panel.center + UP * 0.4)
        show("w_q", FadeIn(wq))
        show("w_k", FadeIn(wk))
        full = self.matrix(stage, plan, c.d_model, c.d_model, "W_V", th.value)
        full.move_to(panel.center + UP * 0.4)
        if full.width > panel.width:
            full.scale_to_fit_width(panel.width)
        box = full[0]
        cross = VGroup(Line(box.get_corner(UP + LEFT), box.get_corner(DOWN + RIGHT), color=th.text, stroke_width=5),
                       Line(box.get_corner(UP + RIGHT), box.get_corner(DOWN + LEFT), color=th.text, stroke_width=5))
        show("full_value", FadeOut(VGroup(wq, wk)), FadeIn(full), Create(cross, run_time=1.2), wait=0.3)
        down = self.matrix(stage, plan, c.d_model, c.d_head, "V↓", th.value)
        up = self.matrix(stage, plan, c.d_head, c.d_model, "V↑", th.value)
        if up.width > panel.width * 0.55:
            up.scale_to_fit_width(panel.width * 0.55)
        VGroup(down, up).arrange(RIGHT, buff=0.4).move_to(panel.center + UP * 0.4)
        show("value_down_up", FadeOut(full), FadeOut(cross), FadeIn(down), FadeIn(up))

        head = VGroup(wq, wk, down, up)
        head.arrange(RIGHT, buff=0.3)
        if head.width > panel.width - 0.4:  # room for the frame around it
            head.scale_to_fit_width(panel.width - 0.4)
        head.move_to(panel.center + UP * 0.4)
        frame = SurroundingRectangle(head, buff=0.15, color=th.dim, corner_radius=0.08)
        show("per_head", FadeIn(wq), FadeIn(wk), FadeIn(frame))
        drawn.update(matrices={"w_q": wq, "w_k": wk, "full_value": full, "value_down": down, "value_up": up})
        if plan.shared_kv:  # query heads and key/value heads counted apart
            times = f"{c.n_heads} × (W_Q + V↑) + {c.kv_heads} × (W_K + V↓)"
        else:
            times = f"× {c.n_heads}"
        heads_x = label(times, 24, th.query)
        heads_x.next_to(frame, DOWN, buff=0.25)
        if heads_x.width > panel.width:
            heads_x.scale_to_fit_width(panel.width)
        layers_x = label(f"× {c.n_layers}", 24, th.query).next_to(heads_x, DOWN, buff=0.2)
        drawn.update(heads_times=heads_x, layers_times=layers_x)
        show("per_layer", FadeIn(heads_x, shift=UP * 0.1))
        show("attention", FadeIn(layers_x, shift=UP * 0.1))
        stage.play(FadeOut(VGroup(head, frame, heads_x, layers_x)), run_time=0.5)
        for part in ("embedding", "mlp", "unembedding", "total"):
            show(part, wait=0.5)
        self.share_bar(stage, plan, panel)

    def share_bar(self, stage: Stage, plan: ParamsPlan, panel) -> None:
        """The whole model's matrices as one upright bar, attention's part lit, its share beside it."""
        say, th = stage.say, stage.theme
        t = plan.tally
        H, W = panel.height - 1.6, 0.9
        colors = {"embedding": th.embedding, "attention": th.query, "mlp": th.positive, "unembedding": th.dim}
        parts = VGroup()
        names = VGroup()
        for part, n in plan.bar:
            h = max(H * n / t.total, 0.02)
            seg = Rectangle(width=W, height=h, stroke_width=1, color=th.background)
            seg.set_fill(colors[part], opacity=1.0 if part == "attention" else 0.45)
            seg.part, seg.count = part, n
            parts.add(seg)
        parts.arrange(DOWN, buff=0).move_to([panel.left + 0.3 + W / 2, panel.center[1], 0])
        for seg in parts:
            if seg.height > 0.3:
                tag = label(say(f"params.bar.{seg.part}"), 16, colors[seg.part] if seg.part != "attention" else th.text)
                tag.next_to(seg, RIGHT, buff=0.15)
                names.add(tag)
        share = label(say("params.scene.share", share=t.attention_share), 24, th.query)
        share.next_to(parts, UP, buff=0.2).align_to(parts, LEFT)
        if share.width > panel.width:
            share.scale_to_fit_width(panel.width)
        stage.drawn[self.key].update(bar=list(parts), share=share, bar_names=names)
        with stage.narrating(say("params.scene.share_line", share=t.attention_share)):
            stage.play(FadeIn(parts, lag_ratio=0.2), FadeIn(names), run_time=1.0)
            stage.play(FadeIn(share, shift=UP * 0.1), run_time=0.6)
            stage.wait(1.5)
