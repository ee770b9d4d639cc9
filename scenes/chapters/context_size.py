"""Context size: the pattern has n² cells. The sentence's grid and its count, then the camera pulls
back while the grid grows to a long passage (its first n × n block is the sentence's own grid:
the mask makes the first words' pattern independent of what follows), a close look at a word of
the new part, and a nod to the work on longer contexts. Real patterns throughout.

`ContextMemory` ends the lesson: a chart, log scales both ways, of the memory the pattern takes (or what
stands in for it) at 1,000, 32,000 and 1,000,000 tokens for full, flash, ring (per device), linear and
sliding-window attention, one layer of the model's heads, a line each, largest first; then how many times
the full grid outweighs each of the others at the longest length (plans/context_size.py).

`ContextSizeLesson` traces the long passage when it makes the setting (see plans/context_size.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Circle, Create, DashedLine, FadeIn, FadeOut, Line, Rectangle, VGroup

from ..components.attention_grid import AttentionGrid
from ..components.loglog_chart import LogLogChart
from ..components.text import baseline_row, label, rich_lines, text_baseline
from ..lesson import Chapter, Lesson
from ..plans.context_size import (
    ContextMemoryPlan, ContextSizePlan, MemoryRow, plan_context_memory, plan_context_size, with_context_traces,
)
from ..stage import Region, Stage
from ..style import BYTE_UNITS, byte_text
from .embedding_parts import fit_into, mixed_label
from .grid_parts import NOTE_FS, axis_titles, ensure_grid, grid_key, new_grid, titles_of
from .head_split import model_name
from .beyond_parts import head_name
from .honest import wrapped


@dataclass(frozen=True)
class ContextSizeLesson(Lesson):
    """A lesson whose setting also holds the traces of the passage the grid grows into."""

    def setting(self, inputs):
        return with_context_traces(super().setting(inputs), inputs.tracer)


class ContextSize(Chapter):
    key = "context_size"
    continues = ("grid",)

    def plan(self, setting) -> ContextSizePlan:
        return plan_context_size(setting)

    def count(self, stage: Stage, n: int, cells: int, allowed: int, font_size: float = 30, every: int = 1) -> VGroup:
        """"n × n = n²", how many of those cells the mask leaves open, and (`every` > 1) how many tokens
        apart the grid's faint lines are."""
        say, th = stage.say, stage.theme
        eq = label(say("grid.context_size.count", n=n, cells=cells), font_size, th.text)
        sub = label(say("grid.context_size.open", count=allowed), font_size * 0.7, th.dim)
        parts = [eq, sub]
        if every > 1:
            parts.append(label(say("grid.context_size.lines_every", every=every), font_size * 0.7, th.dim))
        out = VGroup(*parts).arrange(DOWN, buff=0.15 * font_size / 30)
        width = stage.region("panel").width * font_size / 30
        if out.width > width:
            out.scale_to_fit_width(width)
        out.texts = (eq.text, sub.text)
        return out

    def play(self, stage: Stage, plan: ContextSizePlan) -> None:
        say, th = stage.say, stage.theme
        n, N = plan.n, plan.N
        grid, _ = ensure_grid(stage, plan.short_head, plan.short_tokens, plan.layout, "dots", "cleared")
        drawn = stage.drawn[self.key] = {"grid": grid}
        frame = stage.camera_frame
        frame.save_state()
        cnt = self.count(stage, n, plan.short_cells, plan.short_open)
        panel = stage.region("panel")
        cnt.move_to([panel.center[0], stage.region("grid").center[1], 0])
        # what the lesson is about, and whose pattern this is (unless the grid's corner names it: review 51, "layer
        # 0 · head 0" twice on one frame), over the count
        tag = getattr(grid, "head_tag", None)
        named = tag is not None and len(tag) > 0 and tag in stage.scene.get_mobject_family_members()
        text = (say("grid.context_size.heading_plain") if named else
                say("grid.context_size.heading", layer=plan.head.layer, head=plan.head.head))
        heading = wrapped(text, panel.width, 30, th.text, 2, break_after=": ")
        heading.move_to([panel.center[0], cnt.get_top()[1] + 0.6 + heading.height / 2, 0])
        drawn.update(short_count=cnt, heading=heading)
        with stage.narrating(say("grid.context_size.short", count=n, cells=plan.short_cells)):
            stage.play(FadeIn(heading), FadeIn(cnt, lag_ratio=0.1), run_time=1.0)
            stage.wait(0.8)

        # The long grid at the same cell size, placed so that its first n × n block is the short
        # grid. It is built at the size it ends at (so its lines and labels suit that size: fewer,
        # thinner lines, abbreviated labels), then blown up F times to line up with the short grid
        # while the camera pulls back F times.
        full = stage.region("full")
        fw, fh = frame.width, frame.height  # the frame at home
        end_h = fh - 1.9
        aspect = grid.cell_width / grid.cell_height
        big = AttentionGrid(plan.long_head, plan.long_tokens, layout=grid.layout, theme=th,
                            cell_size=(end_h / N * aspect * 0.92, end_h / N * 0.92))
        big.grid_key = grid_key(plan.long_head, plan.long_tokens, grid.layout)
        big.set_mask("cleared")
        F = grid.cell_height / big.cell_height
        big.scale(F)
        big.shift(grid.lines.get_corner(UP + LEFT) - big.lines.get_corner(UP + LEFT))
        every = big.line_every
        w0 = self.count(stage, N, plan.long_cells, plan.long_open, every=every).width  # the count at its normal size
        F = max(F, (big.height + 1.2) / fh, big.width / (fw - w0 - 1.2))
        big_cnt = self.count(stage, N, plan.long_cells, plan.long_open, font_size=30 * F, every=every)
        # its faint lines drawn F times as thick while the camera is F times as far (at their own width they were
        # 5/255 grey while the count spoke of them, review 53); back to it when the camera comes home
        thin = big.lines.get_stroke_width()
        big.lines.set_stroke(width=thin * F)
        frame_w = fw * F
        center = np.array([big.get_left()[0] - 0.3 * F + frame_w / 2, big.get_y(), 0])
        right = center[0] + frame_w / 2 - 0.3 * F  # the count sits between the grid and the frame's edge
        big_cnt.move_to([(big.get_right()[0] + right) / 2, big.get_y(), 0])
        # the long grid's words are hidden (too small to read): its axes are named beside its lines
        big_titles = axis_titles(big, stage, scale=F, by_labels=False)
        # which head, in the frame's top left corner as over the short grid (its tag left with the short
        # grid's titles: the 64-token frames named no head, review 52)
        lh = plan.long_head
        big_tag = wrapped(head_name(say, lh.layer, lh.head, getattr(lh, "role", "")), frame_w / 2 - 0.6 * F, 20 * F,
                          th.dim, 2)
        big_tag.move_to(center + np.array([-frame_w / 2 + 0.3 * F + big_tag.width / 2,
                                           fh * F / 2 - 0.25 * F - big_tag.height / 2, 0]))
        drawn.update(big=big, long_count=big_cnt, long_titles=big_titles, long_tag=big_tag,
                     far_lines=(big.lines.get_stroke_width(), F, thin))  # (for tests: as drawn far off, the pull-back, home)
        grow = "repeated" if plan.repeated else "grow"
        with stage.narrating(say(f"grid.context_size.{grow}", count=N, cells=plan.long_cells)):
            stage.play(FadeOut(cnt), FadeOut(heading), FadeOut(titles_of(stage)), run_time=0.5)
            # the long grid's labels stay hidden: at its full size they would be too small to read
            # (the close-up below names its words large)
            big.labels.set_opacity(0.0)
            stage.play(frame.animate.scale(F).move_to(center), grid.labels.animate.set_opacity(0.0),
                       grid.lines.animate.set_stroke(opacity=0.0), FadeIn(big), run_time=2.5)
            stage.play(FadeIn(big_titles), FadeIn(big_tag), big.show_dots(run_time=2.5, lag=0.7))
            stage.remove(grid)
            stage.play(FadeIn(big_cnt, lag_ratio=0.1), run_time=1.0)
            stage.wait(0.8)
        drawn["big_dots"] = list(big.dot_cells)
        self.close_look(stage, plan, big, (fw, fh), frame_w, center, big_cnt)

        # back to the default framing: the picture shrinks exactly as the camera returns (no
        # visible change), then settles above room for a last note
        whole = VGroup(big, big_cnt, big_titles, big_tag)
        frame.restore()
        whole.scale(1.0 / F, about_point=center).shift(-center)
        big.lines.set_stroke(width=thin)
        nod = VGroup(label(say("grid.context_size.nod_1"), 24, th.dim),
                     label(say("grid.context_size.nod_2"), 24, th.dim)).arrange(DOWN, buff=0.1)
        if nod.width > full.width:
            nod.scale_to_fit_width(full.width)
        nod.move_to([0, full.bottom + nod.height / 2, 0])
        room_top, room_bottom = full.top, nod.get_top()[1] + 0.2
        scale = min(1.0, (room_top - room_bottom) / whole.height, (full.width - 0.1) / whole.width)
        drawn["nod"] = nod
        with stage.narrating(say("grid.context_size.research")):
            stage.play(whole.animate.scale(scale).move_to([0, (room_top + room_bottom) / 2, 0]), run_time=1.0)
            stage.play(FadeIn(nod, shift=UP * 0.1), run_time=1.0)
            stage.wait(1.5)
        stage.hand_on(grid=big, grid_titles=big_titles)

    def close_look(self, stage: Stage, plan: ContextSizePlan, big: AttentionGrid, home: tuple[float, float],
                   frame_w: float, center, count: VGroup) -> None:
        """A close look at a word of the new part: a box on the long grid, and beside it that stretch
        drawn large, as a grid of its own with its words and axis names (the real weights; hidden
        words between shown ones are an ellipsis row and column), the query's column lit and a note
        naming its strongest keys."""
        say, th = stage.say, stage.theme
        fw, fh = home
        F = frame_w / fw  # the camera is pulled back this many times: built at home size, scaled by F
        q, ks, window = plan.close_query, list(plan.close_keys), plan.close_window
        tokens, lh = plan.long_tokens, plan.long_head
        idx = [j for j in window if j is not None]
        rows = np.array([j if j is not None else 0 for j in window])
        gap = np.array([j is None for j in window])
        pattern = lh.pattern[np.ix_(rows, rows)].copy()
        mask = lh.mask[np.ix_(rows, rows)].copy()
        scores = lh.scores[np.ix_(rows, rows)].copy()
        pattern[gap, :] = pattern[:, gap] = 0.0
        mask[gap, :] = mask[:, gap] = True
        excerpt = SimpleNamespace(pattern=pattern, mask=mask, scores=scores, layer=lh.layer, head=lh.head)

        # the room right of the long grid, in home units; the note under the excerpt
        left = (big.get_right()[0] - center[0]) / F + 0.5
        keys = {f"k{m}": say.quote(tokens[j]) for m, j in enumerate(ks)}
        # on as many lines as it needs rather than shrunk under 14 px (SmolLM2's real words are longer)
        note = rich_lines(say.catalog[f"grid.pattern.note_{len(ks)}"], {"query": say.quote(tokens[q]), **keys},
                          fw / 2 - 0.3 - left, font_size=NOTE_FS, color=th.text,
                          colors={"query": th.query, **{k: th.key for k in keys}},
                          numbers={f"w{m}": (w, "weight") for m, w in enumerate(plan.close_weights)})
        fit_into(note, fw / 2 - 0.3 - left, 1.0)
        room = Region("close", left, fw / 2 - 0.3, -fh / 2 + 0.35 + note.height + 0.3, fh / 2 - 0.3)
        inset, titles = new_grid(stage, excerpt, ["⋯" if j is None else tokens[j] for j in window], big.layout, room)
        inset.set_mask("cleared")
        inset.stroke_scale = F
        note.next_to(VGroup(inset, titles), DOWN, buff=0.3).set_x(inset.lines.get_x())
        note.shift(RIGHT * (min(0.0, room.right - note.get_right()[0]) + max(0.0, room.left - note.get_left()[0])))
        local = window.index(q)
        # the stretch it is on the long grid: the box spans the excerpt's first to last word
        lo, hi = idx[0], idx[-1]
        corners = np.array([big.cell_center(lo, lo), big.cell_center(hi, hi)])
        box = Rectangle(width=abs(corners[1, 0] - corners[0, 0]) + big.cell_width,
                        height=abs(corners[1, 1] - corners[0, 1]) + big.cell_height,
                        color=th.highlight, stroke_width=4 * F).move_to(corners.mean(axis=0))
        close = VGroup(inset, titles, note)
        close.scale(F, about_point=np.zeros(3)).shift(center)
        # the excerpt framed in the box's colour: the same stretch (no lines between them, which would cross its words)
        link = Rectangle(width=inset.lines.width + 0.12 * F, height=inset.lines.height + 0.12 * F, color=th.highlight,
                         stroke_width=4 * F).move_to(inset.lines)
        stage.drawn[self.key].update(close_note=note, close_numbers=note.numbers, close_grid=inset,
                                     close_titles=titles, close_box=box, close_span=(lo, hi), close_words=list(inset.tokens),
                                     close_gap=float(VGroup(inset, titles).get_left()[0] - big.get_right()[0]))
        with stage.narrating(say("grid.context_size.close", query=say.quote(tokens[q]),
                                 keys=say.quoted_words([tokens[j] for j in ks]))):
            stage.play(FadeOut(count), FadeIn(box), run_time=0.6)
            stage.play(FadeIn(link), FadeIn(inset), FadeIn(titles), run_time=1.0)
            stage.play(inset.show_dots(run_time=1.0, lag=0.3))
            stage.play(inset.highlight_column(local, color=th.query), FadeIn(note), run_time=0.8)
            stage.wait(1.5)
        stage.play(FadeOut(VGroup(inset, titles, note, link, box)), FadeIn(count), run_time=0.8)


# --- the memory chart --------------------------------------------------------------------------------

M = "grid.context_memory"  # its words: scenes/locales/<lang>/grid.toml
SMALL, MIDDLE = "#83C167", "#F0AC5F"  # linear's green and ring's orange (full is the theme's red)
# the count axis's labelled powers of ten: the units byte_text writes sizes in
UNITS = {0: "B", **{len(str(size)) - 1: unit for size, unit in BYTE_UNITS}}


CHART_LEAST = 4.2  # the chart's least width, its count labels with it (scene units)


def ratio_text(say, row: MemoryRow, mark: bool) -> str:
    """How many times the full grid outweighs `row`, three significant digits, the language's way:
    drawn "≈ 240,000,000" (mark=True) and said "about 240,000,000" where rounded."""
    v, dec = row.ratio_shown
    figure = say.number(float(v), f",.{dec}f")
    if not row.about:
        return figure
    return say(f"{M}.about_mark" if mark else f"{M}.about", value=figure)


def name_over(head, what, group=None) -> VGroup:
    """A way's name with what it holds under it (a line, or wrapped lines), left-aligned, baselines 0.32 apart
    whatever their letters ("full attention" has no descender: by their boxes "n × n scores" sat on it)."""
    # (wrapped: its lines, at the same pitch; a line set in pieces, typeset n's or two faces, says what it says)
    lines = list(what) if isinstance(what, VGroup) and not hasattr(what, "original_text") else [what]
    for k, line in enumerate(lines):
        line.align_to(head, LEFT).shift(UP * (text_baseline(head) - 0.32 * (k + 1) - text_baseline(line)))
    return (group if group is not None else VGroup(head)).add(what)


def stack_names(tags, ends: list[float], x: float, ceiling: float, floor: float, bottom: float) -> None:
    """Sets each name (a VGroup: its first line, then what it holds) left-aligned at `x`, its first line level
    with its line's end (`ends`, the ends' heights) where it can be: pushed down from `ceiling` by the names
    above, then up so that no name sinks under `floor` (where the stack has no room for that, no first line's
    bottom) nor under `bottom`. The gap between names narrows (down to 0.1) until the stack stands under
    `ceiling`."""
    order = sorted(range(len(tags)), key=lambda k: -ends[k])
    lift = [t.get_top()[1] - t[0].get_y() for t in tags]  # from a first line's middle to its name's top
    whole = [t.height for t in tags]
    first = [t.get_top()[1] - t[0].get_bottom()[1] for t in tags]  # from a first line's bottom to its name's top

    def attempt(over: list[float], gap: float) -> dict[int, float]:  # each name's top
        tops, above = {}, ceiling + gap
        for k in order:  # down from the ceiling
            tops[k] = min(ends[k] + lift[k], above - gap)
            above = tops[k] - tags[k].height
        below = -np.inf
        for k in reversed(order):  # up from the floor
            h = tags[k].height
            tops[k] = max(tops[k], floor + over[k], bottom + h, below + gap + h)
            below = tops[k]
        return tops

    for over, gap in ((o, g) for o in (whole, first) for g in (0.22, 0.18, 0.14, 0.1)):
        tops = attempt(over, gap)
        if max(tops.values()) <= ceiling + 1e-9:
            break
    for k, t in enumerate(tags):
        t.move_to([x + t.width / 2, tops[k] - t.height / 2, 0])


class ContextMemory(Chapter):
    key = "context_memory"

    def plan(self, setting) -> ContextMemoryPlan:
        return plan_context_memory(setting)

    @staticmethod
    def context_mark(stage: Stage, chart: LogLogChart, plan: ContextMemoryPlan, top: float, right: float) -> VGroup:
        """Where the model's own context ends on the chart: a dashed line at its length up to its name, over
        the chart from `top` down, clear of the names' column (from `right`); where the chart starts past it
        (the toy's 64 tokens), the name over the lengths' axis's start, with an arrow to the left. The chart's
        opening frames had been bare axes for two captions (review 44)."""
        th, say = stage.theme, stage.say
        o = chart.axes[0].get_start()
        lo = 10 ** chart.kx
        inside = plan.n_ctx >= lo
        x = o[0] + (chart.point(plan.n_ctx, 1.0)[0] - chart.point(lo, 1.0)[0] if inside else 0.0)
        n_ctx = say.number(plan.n_ctx, ",d")
        words = say(f"{M}.context_here" if inside else f"{M}.context_left", n_ctx=n_ctx)
        text = wrapped(words, right - x, 20, th.dim, 2, break_after=": ")
        text.move_to([x + text.width / 2, top - text.height / 2, 0])
        out = VGroup(text)
        if inside:
            out.add(DashedLine([x, o[1], 0], [x, text.get_bottom()[1] - 0.08, 0], stroke_color=th.dim,
                               stroke_width=2, dash_length=0.08))
        out.x, out.text = x, text
        return out

    def play(self, stage: Stage, plan: ContextMemoryPlan) -> None:
        say, th = stage.say, stage.theme
        stage.clear()
        full = stage.region("full")
        name = model_name(say, plan.model)
        N, w, d, n = plan.devices, plan.window, plan.d_head, plan.longest
        longest = say.number(n, ",d")
        drawn: dict = {}
        stage.drawn[self.key] = drawn

        title = label(say(f"{M}.title", model=name), 32, th.text)
        # (on two even lines where one would run from edge to edge: review 46)
        counted = wrapped(say(f"{M}.counted", count=plan.n_heads, bpn=plan.bytes_per_number), 0.8 * full.width, 23,
                          th.dim, 2)
        for line in counted:
            line.set_x(0)
        for m in (title, counted):
            fit_into(m, 0.94 * full.width, 0.6 if m is title else 1.0)  # (not edge to edge: pt's title, review 47)
        title.move_to([0, full.top - title.height / 2 - 0.05, 0])
        counted.next_to(title, DOWN, buff=0.2)
        beyond = VGroup()
        if plan.beyond_context:
            beyond = wrapped(say(f"{M}.beyond", model=name, n_ctx=say.number(plan.n_ctx, ",d")), full.width, 23,
                             th.dim, 2)
            beyond.move_to([0, full.bottom + beyond.height / 2 + 0.05, 0])

        # a line per way of attending, through its memory at each length, on log scales both ways: n² climbs
        # twice as steeply as n, a fixed size lies flat (review 37: the table of small figures read as a slide)
        words = {"full": {}, "flash": {"bq": plan.block_q, "bk": plan.block_k}, "ring": {"count": N},
                 "linear": {"d": d}, "window": {"w": w}}
        colors = {"full": th.value, "ring": MIDDLE, "window": th.key, "flash": th.highlight, "linear": SMALL}
        tags, sizes, whats, ratios = [], [], [], []
        for r in plan.rows:  # beside each line's end: its name and size at the longest length, what it holds
            size = label(byte_text(say, r.bytes[-1]), 28, colors[r.way])
            head = baseline_row([label(say(f"{M}.way_{r.way}", **words[r.way]), 26, th.text), size], buff=0.25)
            what = mixed_label(say(f"{M}.what_{r.way}", **words[r.way]), 21, th.dim)  # (its n typeset: review 46)
            tags.append(name_over(head, what))
            sizes.append(size)
            whats.append(what)
            # (white: in yellow, "≈ 60,100,000" read as a figure of flash's yellow line, review 41)
            ratios.append(label(ratio_text(say, r, mark=True), 28, th.text) if r.way != "full" else VGroup())
        # one heading row: the length the sizes are at, over the names; the ratios' heading over their column
        at_head = label(say(f"{M}.ratio_at", n=longest), 22, th.dim)
        ratio_head = label(say(f"{M}.ratio_head"), 24, th.text)
        ratio_w = max([m.width for m in ratios] + [ratio_head.width])
        # a name may reach under the column of ratios as far as its own ratio leaves room (ring's "≈ 16.0" is
        # short: its long name needs no shrinking, review 43); `spare[k]`: that room
        spare = [ratio_w - m.width for m in ratios]

        def column(ts) -> float:  # the width the names' column takes out of the chart's
            return max(t.width - sp for t, sp in zip(ts, spare))

        tag_w = column(tags)
        top = counted.get_bottom()[1] - 0.3
        head_top, top = top, top - max(ratio_head.height, at_head.height) - 0.2  # headings on no line's level
        if plan.beyond_context:  # the model's own context is named over the chart, in the headings' row
            top -= 0.3
        bottom = (beyond.get_top()[1] if plan.beyond_context else full.bottom) + 0.25
        # (the longest length's label, centred under the axis's end, keeps the names off its side of the chart)
        # (0.4 clear of it: at 0.15, "1,000,000" read on into the linear line's "16 × 16 state", review 47)
        reach = label(longest, 22, th.dim).width / 2 + 0.4
        room = full.width - max(0.35, reach) - 0.45 - ratio_w
        if room - tag_w < CHART_LEAST:  # the chart keeps its least width: what a way holds wraps where its name
            # is far too wide, then the names shrink, all alike (a name shrunk alone read as a footnote: pt's
            # "bloco n/4 × n/4 …" at 15 px, review 42), by 0.85 at most
            limit = room - CHART_LEAST
            for k, (t, r) in enumerate(zip(tags, plan.rows)):
                if t.width * 0.85 > limit + spare[k]:
                    fit_into(t[0], limit + spare[k], t[0].height)
                    what = wrapped(say(f"{M}.what_{r.way}", **words[r.way]), limit + spare[k], 21, th.dim, 2,
                                   setter=mixed_label)
                    whats[k] = what
                    t.remove(t[1])
                    name_over(t[0], what, t)
            f = max(0.85, min(1.0, min((limit + sp) / t.width for t, sp in zip(tags, spare))))
            if f < 1:
                for t in tags:
                    t.scale(f)
            tag_w = column(tags)
        chart = LogLogChart(plan.lengths, [(r.bytes, colors[r.way]) for r in plan.rows],
                            x_label=lambda v: say.number(round(v), ",d"),
                            y_label=lambda k: say("common.bytes.size", value="1", unit=say(f"common.bytes.{UNITS[k]}"))
                            if k in UNITS else None,
                            width=room - tag_w, height=top - bottom - 0.45, theme=th, font_size=22, x_labelled=plan.lengths)
        chart.shift(RIGHT * (full.left - chart.get_left()[0]) + UP * (bottom + 0.45 - chart.get_bottom()[1]))
        tokens = label(say(f"{M}.tokens"), 22, th.dim)
        tokens.next_to(chart.x_tick_labels, DOWN, buff=0.12).align_to(chart.axes[0], RIGHT)
        # the names at their lines' ends, pushed apart where two ends are close (ring under full), tied by a line
        x_tags = chart.axes[0].get_right()[0] + max(0.35, reach)
        # a name's tie ends level with its first line; level with the axis's labels a name read on from them
        # ("1,000,000 linear attention") and its tie crossed the last (review 42), so names stand over them
        floor = chart.x_tick_labels.get_top()[1] + 0.08
        stack_names(tags, [e.get_y() for e in chart.ends], x_tags, top, floor, bottom)
        ties = VGroup(*(Line(e.get_center(), [x_tags - 0.08, t[0].get_y(), 0], stroke_color=th.dim, stroke_width=1.5)
                        for e, t in zip(chart.ends, tags)))
        x_ratio = x_tags + tag_w + 0.45 + ratio_w
        for m, t in zip(ratios, tags):
            if len(m):
                m.move_to([x_ratio - m.width / 2, 0, 0]).shift(UP * (text_baseline(t[0]) - text_baseline(m)))
        ratio_head.move_to([x_ratio - ratio_head.width / 2, head_top - ratio_head.height / 2, 0])
        at_head.move_to([x_tags + at_head.width / 2, 0, 0]).shift(UP * (text_baseline(ratio_head) - text_baseline(at_head)))
        # a ring (a dot on another line's dot) is said, on the axis name's line at the right (review 51: unkeyed)
        # (`type is`: a Dot is a Circle too, and with isinstance the key came with the first line: review 52)
        ringed = [k for k, dots in enumerate(chart.dots) if any(type(d) is Circle for d in dots)]
        ring_key = VGroup()
        if ringed:  # its ring in the colour of the first line drawn with one, and shown with that line
            ring_key = VGroup(Circle(radius=0.1, stroke_color=colors[plan.rows[ringed[0]].way], stroke_width=3),
                              label(say(f"{M}.ring_key"), 20, th.dim)).arrange(RIGHT, buff=0.12)
            ring_key.move_to([full.right - ring_key.width / 2, tokens.get_y(), 0])  # (apart from the last name's note)
        drawn.update(chart=chart, tags=tags, sizes=sizes, ratios=ratios, whats=whats, title=title, counted=counted,
                     beyond=beyond, ratio_head=ratio_head, at_head=at_head, ties=ties, ring_key=ring_key,
                     ring_key_with=ringed[0] if ringed else None)

        frame = VGroup(chart.axes, chart.grid_lines, chart.x_ticks, chart.x_tick_labels, chart.y_ticks,
                       chart.y_tick_labels, tokens, at_head)
        here = self.context_mark(stage, chart, plan, head_top, x_tags - 0.3) if plan.beyond_context else VGroup()
        drawn["context_mark"] = here
        with stage.narrating(say(f"{M}.caption_intro", count=plan.n_heads, model=name, bpn=plan.bytes_per_number)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(counted), run_time=0.8)
            stage.play(FadeIn(frame), run_time=0.8)
        if plan.beyond_context:
            with stage.narrating(say(f"{M}.caption_beyond", model=name, n_ctx=say.number(plan.n_ctx, ",d"))):
                stage.play(FadeIn(beyond, shift=UP * 0.1), FadeIn(here), run_time=0.8)
                stage.wait(0.4)
        for k, r in enumerate(plan.rows):
            with stage.narrating(say(f"{M}.caption_{r.way}", n=longest, size=byte_text(say, r.bytes[-1]),
                                     **words[r.way])):
                stage.play(Create(chart.lines[k]), FadeIn(chart.dots[k], lag_ratio=0.3), run_time=1.0)
                stage.play(FadeIn(ties[k]), FadeIn(tags[k], shift=RIGHT * 0.2),
                           *([FadeIn(ring_key)] if ringed and k == ringed[0] else []), run_time=0.6)
                stage.wait(0.4)
        others = {r.way: ratio_text(say, r, mark=False) for r in plan.rows if r.way != "full"}
        with stage.narrating(say(f"{M}.caption_point", n=longest, **others)):
            stage.play(FadeIn(ratio_head), FadeIn(VGroup(*ratios), lag_ratio=0.2), run_time=1.2)
            stage.wait(1.5)
