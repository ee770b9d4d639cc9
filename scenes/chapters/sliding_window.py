"""`sliding_window`: a causal window of w keys, on a real model (Longformer, Mistral; StreamingLLM's sinks).

- `WindowMask`: the window on the grid of the text's first tokens, the removed cells marked in red over a
  real head's weights; how many cells go, on the grid and on the whole text; then one layer's heads as
  bars: the share of each head's real weight (on the whole text) outside the window, and the mean over
  every head of the model.
- `WindowReach`: after L stacked window layers the last token depends on L·(w − 1) tokens back (the
  masks composed): a cone over the layers, against the length of the text.
- `WindowSinks`: the mean weight on the first token, layer by layer; the weight the window alone keeps
  and the weight the first token plus the window keeps; the next token after the text with every layer
  windowed, for several widths, window alone against first token + window.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from manim import (DOWN, LEFT, RIGHT, UP, DashedLine, FadeIn, FadeOut, GrowFromEdge, Line, Rectangle, VGroup,
                   VMobject)

from ..components.batched_shapes import rect_points
from ..components.number_table import aligned_rows
from ..components.text import label, rich_line, text_baseline
from ..components.word_boxes import space_key
from ..lesson import Chapter, Lesson
from ..plans.sliding_window import (ReachPlan, SinksPlan, WindowMaskPlan, plan_window_mask, plan_window_reach,
                                    plan_window_sinks, window_text, with_window_study)
from ..setting import SceneInputs
from ..stage import Region, Stage
from .beyond_parts import (count, dec, future_cells, panel_digits, grid_key, head_name, mark_line, model_forms, share_bars,
                           shown_model, telling_digits, wrapped_words)
from .embedding_parts import fit_into
from .embedding_parts import mixed_label as text
from .grid_parts import new_grid
from .head_split import model_name

T = "beyond.window"
FS = 22
# a token label's line takes this share of its row (the grid's default 0.62 leaves 16 tokens' labels at
# 12 px at 720p; at 0.86 they read at 15 px and more, near the video's)
LABEL_FILL = 0.86
KL_BAR = 2.5  # the track a KL's bar is drawn in, for the largest KL of the table


class WindowLesson(Lesson):
    """A lesson whose setting also holds the text's WindowStudy (the model runs when it is made); a real
    model reads the long passage of model/passages.py unless the user gives a text."""

    def setting(self, inputs: SceneInputs):
        said_text = window_text(inputs)
        if said_text is not None:
            from dataclasses import replace

            inputs = replace(inputs, sentences=[said_text])
        return with_window_study(super().setting(inputs), inputs)


def title_of(stage: Stage, words: str):
    title = text(words, 30, stage.theme.text)
    stage.region("title").fit(title)
    return title


def kl_rise(plan) -> tuple[int, int] | None:
    """The first place where a wider window moves further from the full model (its KL as written rises): the
    column (0 window alone, 1 first token + window) and the row k (windows k and k + 1); None if none."""
    for c, kls in enumerate((plan.window_kl, plan.sink_kl)):
        for k in range(len(kls) - 1):
            if float(kl_text(kls[k + 1])) > float(kl_text(kls[k])):
                return c, k
    return None


def kl_text(x: float, say=None) -> str:
    """A KL divergence: two decimals, three below 0.01 (a figure, or with `say` the language's prose)."""
    digits = 3 if abs(float(x)) < 0.01 else 2
    return say.number(float(x), f".{digits}f") if say is not None else f"{float(x):.{digits}f}"


# --- 1. the window on the grid, and what real heads lose --------------------------------------------


class WindowMask(Chapter):
    key = "window_mask"
    own_space_key = True

    def plan(self, setting) -> WindowMaskPlan:
        return plan_window_mask(setting)

    def play(self, stage: Stage, plan: WindowMaskPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn[self.key] = {}
        title = title_of(stage, say(f"{T}.mask_title", w=plan.window))
        full = stage.region("full")
        hname = head_name(say, plan.layer, plan.head, plan.role)
        # an arrow role ("verb → object") said in words: the object's column reads the verb's row
        gloss = f"common.role_glosses.{plan.role}" if plan.role else None
        if gloss and say.has(gloss) and hname != say.head_name(plan.layer, plan.head):
            sub_text = say(f"{T}.mask_head_gloss", head=hname, model=model_name(say, plan.model_name), gloss=say(gloss))
        else:
            sub_text = say(f"{T}.mask_head", head=hname, model=model_name(say, plan.model_name))
        sub = text(sub_text, 24, th.dim)
        fit_into(sub, full.width - 0.6, 0.4).move_to([0, title.get_bottom()[1] - 0.1 - sub.height / 2, 0])
        top = sub.get_bottom()[1] - 0.1
        # the key to the tokens' ␣ (a real model's tokens), on the subtitle's line at the right
        spaces = space_key(plan.tokens, say, th, font_size=20, mark_size=24)
        if spaces is not None:
            fit_into(spaces, full.right - sub.get_right()[0] - 0.4, 0.4)
            spaces.move_to([full.right - spaces.width / 2, sub.get_center()[1], 0])
        drawn["spaces"] = spaces
        split = 1.0  # the grid left of this x, the notes and bars right of it
        region = Region("window_grid", full.left, split - 0.15, full.bottom + 0.55, top)
        data = SimpleNamespace(pattern=plan.pattern, mask=plan.mask, scores=None, layer=plan.layer, head=plan.head)
        grid, titles = new_grid(stage, data, list(plan.tokens), plan.layout, region=region,
                                label_fill=LABEL_FILL)
        grid.set_mask("cleared")
        grid.set_content("dots")
        cw, ch = grid.cell_width, grid.cell_height
        centers = grid.cell_centers()[plan.removed]
        cut = VMobject().set_points(rect_points(centers, cw * 0.47, ch * 0.47))
        cut.set_fill(th.mask, opacity=0.28).set_stroke(th.mask, width=float(np.clip(min(cw, ch) * 5, 0.8, 2.5)))
        cut.set_z_index(-1)  # under the dots and the grid's lines
        future = future_cells(grid, plan.mask, th)
        key = grid_key(say, grid, th, 20, removed=th.mask)
        fit_into(key, full.width - 0.6, 0.35)
        key.move_to([0, full.bottom + 0.1 + key.height / 2, 0])
        drawn.update(grid=grid, removed=cut, future=future, key=key)
        with stage.narrating(say(f"{T}.caption_window", w=plan.window, back=plan.window - 1, layer=plan.layer,
                                 head=plan.head)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(sub), *([FadeIn(spaces)] if spaces is not None else []),
                       FadeIn(VGroup(grid, titles, future)),
                       FadeIn(VGroup(key.dots, key.future)), run_time=1.0)
            stage.play(FadeIn(cut), FadeIn(key.removed), run_time=1.0)
            stage.wait(0.3)
        panel = Region("window_panel", split + 0.15, full.right - 0.3, key.get_top()[1] + 0.2, top)
        counts = VGroup(text(say(f"{T}.grid_count", n=len(plan.tokens), removed=plan.grid_removed,
                                  cells=plan.grid_causal), 24, th.text),
                        text(say(f"{T}.text_count", n=plan.n_text, removed=plan.text_removed,
                                  cells=plan.text_causal), 24, th.text)).arrange(DOWN, buff=0.15, aligned_edge=LEFT)
        fit_into(counts, panel.width, 1.0)
        counts.move_to([panel.left + counts.width / 2, panel.top - counts.height / 2, 0])
        drawn["counts"] = counts
        with stage.narrating(say(f"{T}.caption_count", n=len(plan.tokens), removed=plan.grid_removed,
                                 cells=plan.grid_causal, total=plan.n_text, text_removed=plan.text_removed,
                                 text_cells=plan.text_causal)):
            stage.play(FadeIn(counts, shift=UP * 0.1), run_time=0.8)
            stage.wait(0.3)
        # one layer's heads: the share of each one's weight outside the window
        rows = [(say(f"{T}.head_bar", head=h), float(v), th.highlight if h == plan.head else th.value)
                for h, v in enumerate(plan.outside)]
        few = len(rows) <= 6  # the toy's four heads: taller bars fill the panel's height
        digits = panel_digits([*plan.outside, plan.outside_all])  # one convention for the panel's figures
        bars = share_bars(rows, th, length=2.6, height=0.5 if few else 0.3, gap=0.3 if few else 0.12, font_size=FS,
                          highlight=plan.head, say=say, digits=digits)
        many = plan.n_layers * plan.n_heads > len(plan.outside)
        mean = mark_line(bars, plan.outside_all, th.text,
                         say(f"{T}.all_heads", count=plan.n_layers * plan.n_heads,
                             value=dec(plan.outside_all, say, digits)), FS)
        head = text(say(f"{T}.bars_title", layer=plan.layer), FS, th.text)
        block = VGroup(head, VGroup(bars, mean)).arrange(DOWN, buff=0.25, aligned_edge=LEFT)
        room = counts.get_bottom()[1] - 0.35 - panel.bottom
        fit_into(block, panel.width, room)
        if block.height < 0.6 * room:  # a few heads (the toy's four): larger bars, not a half-empty panel
            block.scale(min(1.4, panel.width / block.width, 0.8 * room / block.height))
        block.move_to([panel.left + block.width / 2, counts.get_bottom()[1] - 0.35 - block.height / 2, 0])
        drawn.update(bars=bars, mean=mean)
        key = "caption_bars" if many else "caption_bars_toy"
        with stage.narrating(say(f"{T}.{key}", layer=plan.layer, head=hname, count=plan.n_layers * plan.n_heads,
                                 value=dec(plan.outside_all, say, digits))):
            stage.play(FadeIn(head), FadeIn(bars, lag_ratio=0.1), run_time=1.2)
            stage.play(FadeIn(mean), run_time=0.6)
            stage.wait(0.4)


# --- 2. the reach of stacked windows ------------------------------------------------------------------


class WindowReach(Chapter):
    key = "window_reach"
    shows_tokens = False

    def plan(self, setting) -> ReachPlan:
        return plan_window_reach(setting)

    def play(self, stage: Stage, plan: ReachPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn[self.key] = {}
        title = title_of(stage, say(f"{T}.reach_title"))
        full = stage.region("full")
        L = plan.layers
        start_back = plan.n_text - 1
        span = max(plan.back[-1], start_back)
        probe = text(say(f"{T}.reach_value", count=L, back=plan.back[-1]), FS, th.text)
        right = full.right - probe.width - 0.3  # the last token's edge; each layer's reach named right of it
        left = full.left + 0.3
        W = right - left
        top, bottom = full.top - 1.45, full.bottom + 1.05
        row = (top - bottom) / L
        unit = W / span
        bars, values = VGroup(), VGroup()
        # the layers named on the right: the first to cover the text, the last, the first, every fifth;
        # each far enough from the others that their names do not touch
        gap_rows = int(np.ceil((probe.height + 0.06) / row))
        wanted = ([plan.first_layer_all - 1] if plan.first_layer_all is not None else []) + [L - 1, 0] + \
            [i for i in range(L) if (i + 1) % (1 if L <= 8 else 5) == 0]
        named: list[int] = []
        for i in wanted:
            if all(abs(i - j) >= gap_rows for j in named):
                named.append(i)
        for i, b in enumerate(plan.back):
            y = bottom + (i + 0.5) * row
            own = i < plan.n_layers
            first = plan.first_layer_all is not None and i == plan.first_layer_all - 1
            bar = Rectangle(width=max(b * unit, 0.02), height=row * 0.8, stroke_width=0)
            bar.set_fill(th.highlight if first else th.key, opacity=0.8 if own else 0.25)
            bar.move_to([right, y, 0], aligned_edge=RIGHT)
            bars.add(bar)
            if i in named:
                # after i + 1 layers (a count: layer i, from 0, is the (i + 1)-th)
                v = text(say(f"{T}.reach_value", count=i + 1, back=b), FS,
                         th.highlight if first else (th.text if own else th.dim))
                v.move_to([right + 0.15 + v.width / 2, y, 0])
                values.add(v)
        axis = Line([left, bottom - 0.05, 0], [right, bottom - 0.05, 0], stroke_color=th.dim, stroke_width=2)
        step = 50 if span > 120 else (10 if span > 24 else 5)
        ticks = VGroup()
        for t in range(0, span + 1, step):
            x = right - t * unit
            ticks.add(Line([x, bottom - 0.12, 0], [x, bottom + 0.02, 0], stroke_color=th.dim, stroke_width=2))
            ticks.add(label(count(t, say), 20, th.dim).move_to([x, bottom - 0.32, 0]))
        axis_name = text(say(f"{T}.tokens_back"), FS, th.dim).next_to(ticks, DOWN, buff=0.1).set_x((left + right) / 2)
        x0 = right - start_back * unit
        # (in the text's colour: yellow is the layer whose reach first covers it, review 49)
        start = DashedLine([x0, bottom - 0.1, 0], [x0, top + 0.15, 0], color=th.text, stroke_width=2.5,
                           dash_length=0.1)
        start_note = text(say(f"{T}.passage_start", back=start_back), FS, th.text)
        start_note.next_to(start, UP, buff=0.1)
        if start_note.get_left()[0] < full.left:
            start_note.shift(RIGHT * (full.left - start_note.get_left()[0]))
        if start_note.get_right()[0] > full.right:
            start_note.shift(LEFT * (start_note.get_right()[0] - full.right))
        extra = VGroup()
        if plan.layers > plan.n_layers:
            words = say(f"{T}.more_layers", model=shown_model(say, plan.model_name))
            extra = text(words, FS, th.dim)
            y = bottom + (plan.n_layers + (L - plan.n_layers) / 2) * row
            dim_left = right - plan.back[-1] * unit  # the longest drawn bar's left end
            room = dim_left - 0.25 - max(x0 + 0.25, left)
            if extra.width > room:  # two lines of about equal length (no word left alone) before a smaller font
                extra = wrapped_words(words, max(min(room, 0.6 * extra.width), 0.5), FS, th.dim, 2)
            if extra.width > room:
                extra.scale(max(room, 0.5) / extra.width)
            extra.move_to([dim_left - 0.25 - extra.width / 2, y, 0])
        axis = VGroup(axis, ticks)
        drawn.update(bars=bars, values=values, start=start)
        with stage.narrating(say(f"{T}.caption_reach", back=plan.window - 1)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(axis), FadeIn(axis_name), run_time=0.8)
            stage.play(FadeIn(bars, lag_ratio=0.08), FadeIn(values), FadeIn(extra), run_time=2.0)
        model = model_forms(say, plan.model_name)
        if plan.first_layer_all is not None and plan.first_layer_all <= plan.n_layers:
            said_text = say(f"{T}.caption_reach_covers", **model, count=plan.n_layers, reach=plan.reach_model,
                       first=plan.first_layer_all)
        else:
            said_text = say(f"{T}.caption_reach_short", **model, count=plan.n_layers, reach=plan.reach_model,
                       total=plan.n_text)
        with stage.narrating(said_text):
            stage.play(FadeIn(start), FadeIn(start_note), run_time=0.8)
            stage.wait(0.5)


# --- 3. attention sinks, and the next token ------------------------------------------------------------


class WindowSinks(Chapter):
    key = "window_sinks"
    own_space_key = True

    def plan(self, setting) -> SinksPlan:
        return plan_window_sinks(setting)

    def play(self, stage: Stage, plan: SinksPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn[self.key] = {}
        title = title_of(stage, say(f"{T}.sinks_title" if plan.piles else f"{T}.sinks_title_none"))
        full = stage.region("full")
        model = model_forms(say, plan.model_name)
        # the weight on the first token, layer by layer
        drawn_values = plan.sink_per_head.ravel() if plan.per_head else [plan.sink_top]
        digits = panel_digits([*drawn_values, plan.sink_mean])  # one convention for the chart's figures
        chart, bars, mean_note, top_note = self.sink_chart(stage, plan, digits)
        drawn.update(sink_bars=bars, sink_mean=mean_note, sink_top=top_note)
        # the caption's largest weight is the largest bar drawn: a head's when the chart draws heads
        key = ("caption_sinks" if plan.piles else "caption_no_sinks") + ("_head" if plan.per_head else "")
        with stage.narrating(say(f"{T}.{key}", **model, mean=dec(plan.sink_mean, say, digits),
                                 top=dec(plan.shown_top, say, digits),
                                 layer=plan.shown_top_layer, head=plan.shown_top_head)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(chart.frame), run_time=0.8)
            stage.play(FadeIn(bars, lag_ratio=0.05), run_time=1.2)
            stage.play(FadeIn(chart.notes), run_time=0.6)
        # the weight kept: the window alone, and the first token with it
        kept_head = text(say(f"{T}.kept_title"), FS, th.text)
        # as many decimals as it takes for the two to read differently (0.9912 and 0.9935, not 0.99 twice)
        kd = panel_digits([plan.kept_window, plan.kept_sinks])
        same = dec(plan.kept_window, None, 4) == dec(plan.kept_sinks, None, 4)  # then the caption says so
        # the bars show the digits the caption's claim rests on: "0.9936 both ways", never "0.99" twice
        kd = max(kd, 4) if same else max(kd, telling_digits(plan.kept_window, plan.kept_sinks))
        kept = share_bars([(say(f"{T}.kept_window", w=plan.window), plan.kept_window, th.value),
                           (say(f"{T}.kept_sinks"), plan.kept_sinks, th.key)], th, length=4.4, font_size=FS, say=say,
                          digits=kd)
        block = VGroup(kept_head, kept).arrange(DOWN, buff=0.25, aligned_edge=LEFT)
        room_top = chart.get_bottom()[1] - 0.45
        fit_into(block, full.width - 0.2, room_top - full.bottom)
        block.move_to([0, (room_top + full.bottom) / 2, 0])
        drawn["kept"] = kept
        with stage.narrating(say(f"{T}.caption_kept_same" if same else f"{T}.caption_kept", w=plan.window,
                                 window=dec(plan.kept_window, say, kd), sinks=dec(plan.kept_sinks, say, kd))):
            stage.play(FadeIn(kept_head), FadeIn(kept, lag_ratio=0.2), run_time=1.0)
            stage.wait(0.4)
        stage.play(FadeOut(VGroup(chart, block)), run_time=0.5)
        self.next_token(stage, plan, drawn, title)

    @staticmethod
    def sink_chart(stage: Stage, plan: SinksPlan, digits: int = 2):
        """The mean weight on the first token per layer: a bar per layer (a vertical chart when the model
        has many layers, labelled rows when it has few), the mean, the largest named."""
        th, say = stage.theme, stage.say
        full = stage.region("full")
        L = len(plan.sink_per_layer)
        top_y = full.top - 0.95
        y_name = text(say(f"{T}.sink_axis" if plan.per_head else f"{T}.sink_axis_layers"), FS, th.dim)
        if plan.per_head:  # few layers: a bar for every head, each named by layer and head
            H = plan.sink_per_head.shape[1]
            rows = [(head_name(say, l, h), float(plan.sink_per_head[l, h]), th.delta_multi)
                    for l in range(L) for h in range(H)]
            bars = share_bars(rows, th, length=6.0, height=0.36, gap=0.16, font_size=24, say=say, digits=digits)
            mean = mark_line(bars, plan.sink_mean, th.text,
                             say(f"{T}.sink_mean", value=dec(plan.sink_mean, say, digits)), 24)
            chart = VGroup(y_name, VGroup(bars, mean)).arrange(DOWN, buff=0.3, aligned_edge=LEFT)
            fit_into(chart, full.width - 0.2, top_y - full.bottom - 2.2)
            chart.move_to([0, top_y - chart.height / 2, 0])
            chart.frame = VGroup(y_name, bars.names, bars.tracks)
            chart.notes = VGroup(mean)
            bars_only = VGroup(*(VGroup(b, v) for b, v in zip(bars.bars, bars.values)))
            return chart, bars_only, mean[1], VGroup()
        left, right = full.left + 1.0, full.right - 2.0
        step = min(0.6, (right - left) / L)
        height = 2.4
        base = top_y - 0.5 - 0.3 - height
        scale = height  # a weight runs from 0 to 1: the axis does too
        y_axis = Line([left, base, 0], [left, base + height, 0], stroke_color=th.dim, stroke_width=2)
        y_ticks = VGroup()
        for v in (0.0, 0.5, 1.0):
            y = base + v * scale
            y_ticks.add(Line([left - 0.08, y, 0], [left, y, 0], stroke_color=th.dim, stroke_width=2))
            y_ticks.add(label(say.number(v, ".1f") if v % 1 else str(int(v)), 20, th.dim).next_to([left - 0.08, y, 0],
                                                                                               LEFT, buff=0.1))
        bars, ticks = VGroup(), VGroup()
        for i, v in enumerate(plan.sink_per_layer):
            x = left + (i + 0.5) * step
            bar = Rectangle(width=step * 0.75, height=max(float(v) * scale, 0.01), stroke_width=0)
            bar.set_fill(th.highlight if i == plan.sink_top_layer else th.delta_multi, opacity=0.85)
            bar.move_to([x, base, 0], aligned_edge=DOWN)
            bars.add(bar)
            if L <= 12 or i % 5 == 0:
                ticks.add(label(str(i), 20, th.dim).move_to([x, base - 0.22, 0]))
        axis = Line([left, base, 0], [left + L * step, base, 0], stroke_color=th.dim, stroke_width=2)
        axis_name = text(say(f"{T}.layer_axis"), FS, th.dim).next_to(ticks, DOWN, buff=0.1).set_x(left + L * step / 2)
        # the longer per-layer name on two lines, not from edge to edge (review 48, ko)
        y_name = wrapped_words(say(f"{T}.sink_axis_layers"), (full.right - (left - 0.5)) * 0.62, FS, th.dim, 2)
        fit_into(y_name, full.right - (left - 0.5), 0.75)
        y_name.move_to([left - 0.5 + y_name.width / 2, top_y + 0.3 - y_name.height / 2, 0])  # (its 2nd line clear of "1")
        y_mean = base + plan.sink_mean * scale
        mean = DashedLine([left, y_mean, 0], [left + L * step + 0.1, y_mean, 0], color=th.text, stroke_width=2,
                          dash_length=0.08)
        mean_note = text(say(f"{T}.sink_mean", value=dec(plan.sink_mean, say, digits)), FS, th.text).next_to(mean, RIGHT,
                                                                                                   buff=0.12)
        top_bar = bars[plan.sink_top_layer]
        top_note = text(say(f"{T}.sink_top", layer=plan.sink_top_layer, value=dec(plan.sink_top, say, digits)), FS,
                        th.highlight)
        top_note.next_to(top_bar, UP, buff=0.1)
        if top_note.get_right()[0] > full.right:
            top_note.shift(LEFT * (top_note.get_right()[0] - full.right))
        chart = VGroup(axis, y_axis, y_ticks, bars, ticks, axis_name, y_name, mean, mean_note, top_note)
        chart.frame = VGroup(axis, y_axis, y_ticks, ticks, axis_name, y_name)
        chart.notes = VGroup(mean, mean_note, top_note)
        return chart, bars, mean_note, top_note

    @staticmethod
    def kl_cell(stage: Stage, token: str, kl: float, kept: bool, top_kl: float, token_w: float) -> VGroup:
        """The token predicted (green where it is the full model's, red where not), then a track with a grey bar
        as long as its KL (`top_kl` fills the track), then the KL. `.token`, `.track`, `.bar`, `.kl`."""
        th, say = stage.theme, stage.say
        color = th.key if kept else th.mask
        tok = label(token, 30, color)
        track = Rectangle(width=KL_BAR, height=0.36, stroke_width=1.2, stroke_color=th.dim)
        track.move_to([token_w + 0.2 + KL_BAR / 2, 0, 0])
        # (the bar in the text's grey, whatever the token: its colour is the token's to say, right or not)
        bar = Rectangle(width=max(KL_BAR * kl / top_kl, 0.02), height=0.36, stroke_width=0).set_fill(th.text, 0.6)
        bar.align_to(track, LEFT).set_y(0)
        tok.move_to([tok.width / 2, 0, 0])
        num = text(say(f"{T}.kl", kl=kl_text(kl, say)), 28, th.text)
        num.next_to(track, RIGHT, buff=0.15)
        num.shift(UP * (text_baseline(tok) - text_baseline(num)))  # on the token's line (a comma hangs below it)
        cell = VGroup(tok, track, bar, num)
        cell.token, cell.track, cell.bar, cell.kl, cell.value = tok, track, bar, num, kl
        return cell

    def next_token(self, stage: Stage, plan: SinksPlan, drawn: dict, title) -> None:
        th, say = stage.theme, stage.say
        full = stage.region("full")
        quote = say.quote
        head = text(say(f"{T}.next_title"), 30, th.text)
        stage.region("title").fit(head)
        tail = "… " + plan.tail_text
        # the passage's end, then (a line of its own) what the model says next, with its probability
        lines = [label(tail, 32, th.dim),
                 text(say(f"{T}.model_says", token=quote(plan.token), p=dec(plan.p_token, say)), 30, th.text)]
        if plan.seen_back is not None:
            lines.append(text(say(f"{T}.seen", token=quote(plan.token), back=plan.seen_back), 26, th.dim))
        said = VGroup(*lines).arrange(DOWN, buff=0.18)
        table = [[text(say(f"{T}.col_width"), 26, th.dim), text(say(f"{T}.col_window"), 26, th.dim),
                  text(say(f"{T}.col_sinks"), 26, th.dim)]]
        # each result a bar as long as its KL, on one scale for the whole table, in a track: the lost
        # predictions' long bars, the kept ones' specks (review 37: a table of small figures read as a slide)
        # (a KL under 1 nat is a small move: the track holds 1 nat at least, or the toy's KLs of 0.000 drew full)
        top_kl = max(max(plan.window_kl), max(plan.sink_kl), 1.0)
        columns = ((plan.window_token, plan.window_kl, plan.window_kept), (plan.sink_token, plan.sink_kl, plan.sink_kept))
        tok_w = [max(label(quote(t), 30).width for t in toks) for toks, _, _ in columns]
        for i, w in enumerate(plan.windows):
            cells = [label(str(w), 32, th.highlight if i == plan.at else th.text)]
            for c, (toks, kls, kept) in enumerate(columns):
                cells.append(self.kl_cell(stage, quote(toks[i]), float(kls[i]), bool(kept[i]), top_kl, tok_w[c]))
            table.append(cells)
        rows = aligned_rows(table, col_gap=0.9, row_step=0.75, align=["right", "left", "left"])
        # what the bars and the colours say (review 43: with no legend, a bar beside "␣the" read as its
        # probability, and red and green had meant the two columns a frame before)
        kl_note = text(say(f"{T}.kl_bars"), 24, th.dim)
        if kl_note.width > rows.width:  # two lines rather than letters under the size a student reads
            kl_note = wrapped_words(say(f"{T}.kl_bars"), rows.width, 24, th.dim, 2)
        fit_into(kl_note, rows.width, 0.8)
        colors_note = rich_line(say.catalog[f"{T}.kl_colors"], {"kept": say(f"{T}.kept_word"), "lost": say(f"{T}.lost_word")},
                                font_size=24, color=th.dim, colors={"kept": th.key, "lost": th.mask})
        fit_into(colors_note, rows.width, 0.5)
        # "␣ = a space before the word", its ␣ at the table's size: beside the colours' line where both fit the
        # table's width (a line saved for the rise note below), else a line of its own at the end
        spaces = space_key([plan.token, *plan.window_token, *plan.sink_token], say, th, font_size=24, mark_size=32)
        beside = spaces is not None and colors_note.width + 0.6 + spaces.width <= rows.width
        colors_line = VGroup(colors_note, spaces.next_to(colors_note, RIGHT, buff=0.6)) if beside else colors_note
        notes = VGroup(kl_note, colors_line)
        # a wider window that moves further from the full model is real, and said (review 49: 10.19 at 8, then
        # 10.76 at 16, unexplained)
        rise = kl_rise(plan)
        if rise is not None:
            c, k = rise
            kls = (plan.window_kl, plan.sink_kl)[c]
            wider = say(f"{T}.kl_rise", column=say(f"{T}.{('col_window', 'col_sinks')[c]}"),
                        narrow=plan.windows[k], wide=plan.windows[k + 1],
                        a=kl_text(kls[k], say), b=kl_text(kls[k + 1], say))
            drawn["kl_rise"] = wrapped_words(wider, rows.width, 24, th.dim, 2)
            notes.add(drawn["kl_rise"])
        if spaces is not None and not beside:
            notes.add(spaces)
        notes.arrange(DOWN, buff=0.15, aligned_edge=LEFT)
        # (0.3 under the rows, a row's box, 0.12 under its row, stood 6 px over the notes: review 52, ko)
        parts = [said, VGroup(rows, notes.next_to(rows, DOWN, buff=0.45))]
        note = None
        if plan.reach_not_enough:  # the cone of chapter 2 reaches the token: why is it lost all the same?
            why = say(f"{T}.reach_bound_note", token=quote(plan.token), back=plan.seen_back, hops=plan.hops,
                      step=plan.window - 1)
            note = wrapped_words(why, full.width - 1.6, 26, th.highlight, 2)
            parts.append(note)
        body = VGroup(*parts).arrange(DOWN, buff=0.45)
        fit_into(body, full.width - 0.6, full.top - 0.95 - full.bottom)
        body.move_to([0, (full.top - 0.95 + full.bottom) / 2, 0])

        def row_box(k: int, color: str) -> Rectangle:
            """A row of the table outlined, clear of its figures, as wide as the whole table."""
            r = VGroup(*rows[1 + k])
            box = Rectangle(width=rows.width + 0.44, height=r.height + 0.24, stroke_color=color, stroke_width=2.5)
            return box.move_to([rows.get_center()[0], r.get_center()[1], 0])

        mark = row_box(plan.at, th.highlight)
        drawn.update(table=rows, said=said, mark=mark, kl_note=kl_note, kl_top=top_kl, kl_legend=(kl_note, colors_note),
                     kl_notes=notes)
        lost = (not plan.window_kept[plan.at], not plan.sink_kept[plan.at])
        key = {(True, True): "both_lost", (False, False): "both_kept", (True, False): "sinks_kept",
               (False, True): "window_kept"}[lost]
        at = plan.at
        intro = say(f"{T}.next_intro", tail=quote(tail), token=quote(plan.token))
        if plan.seen_back is not None:
            intro = f"{intro} {say(f'{T}.next_seen', back=plan.seen_back)}"
        # the headers, the widths and the empty tracks first; then the predictions, their bars growing
        frame_cells = VGroup(rows[0], *(r[0] for r in rows[1:]), *(c.track for r in rows[1:] for c in r[1:]))
        result_cells = VGroup(*(VGroup(c.token, c.kl) for r in rows[1:] for c in r[1:]))
        bars = [c.bar for r in rows[1:] for c in r[1:]]
        with stage.narrating(intro):
            stage.play(FadeOut(title), FadeIn(head), FadeIn(said), FadeIn(frame_cells), run_time=0.8)
            stage.wait(0.3)
        with stage.narrating(say(f"{T}.caption_next_{key}", w=plan.window,
                                 window=quote(plan.window_token[at]), window_kl=kl_text(plan.window_kl[at], say),
                                 sinks=quote(plan.sink_token[at]), sinks_kl=kl_text(plan.sink_kl[at], say))):
            stage.play(FadeIn(result_cells, lag_ratio=0.1), *(GrowFromEdge(b, LEFT) for b in bars), FadeIn(mark),
                       FadeIn(notes), run_time=1.2)
            stage.wait(0.4)
        if note is not None:
            drawn["reach_note"] = note
            with stage.narrating(say(f"{T}.caption_reach_bound", token=quote(plan.token), back=plan.seen_back,
                                     hops=plan.hops, step=plan.window - 1, count=len(plan.sink_per_layer),
                                     reach=plan.reach_model)):
                stage.play(FadeIn(note, shift=UP * 0.1), run_time=0.6)
                stage.wait(0.6)
        if plan.back_from is not None and plan.back_from > plan.window:
            k = plan.windows.index(plan.back_from)
            said_text = say(f"{T}.caption_back_from", token=quote(plan.token), back=plan.back_from,
                            window_kl=kl_text(plan.window_kl[k], say), sinks_kl=kl_text(plan.sink_kl[k], say))
            again = row_box(k, th.key)
            drawn["again"] = again
        elif plan.back_from is None:
            said_text = say(f"{T}.caption_never_back", token=quote(plan.token), widest=plan.windows[-1])
            again = None
        else:
            return
        with stage.narrating(said_text):
            # the reach note spoke of the first window ("here it does not arrive"): it leaves as a wider one is
            # read (review 34: at full strength beside the row where the token comes back; review 37: dimmed, it
            # was too faint to read and too plain to ignore)
            gone = [FadeOut(note)] if note is not None else []
            if again is not None or gone:
                stage.play(*([FadeIn(again)] if again is not None else []), *gone, run_time=0.6)
            stage.wait(0.8)
