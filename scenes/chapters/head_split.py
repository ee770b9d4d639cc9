"""`head_split_merge`: one long query vector per token cut into n_heads pieces (keys and values into
n_kv_heads pieces); each head attends on its own (its real pattern, small); the heads' outputs
side by side, times the stacked W_O, give the layer's attention output, equal to the trace's."""

from __future__ import annotations

from math import floor, log10

from manim import DOWN, LEFT, RIGHT, UP, Brace, FadeIn, FadeOut, Line, Rectangle, ReplacementTransform, Transform, VGroup, VMobject

from ..components.attention_grid import AttentionGrid
from ..components.number_table import aligned_rows
from ..components.text import label, number_language
from ..i18n import localize_number
from ..components.vectors import VectorColumn, math
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter
from ..plans.head_split import SHOWN_HEAD, SHOWN_TAIL, HeadSplitPlan, plan_head_split
from ..stage import Region, Stage
from ..style import fmt_fixed
from .beyond_parts import diff_line, sci
from .embedding_parts import fit_into
from .grid_parts import axis_titles, corner_legend

T = "blocks.head_split"
BAR_W = 12.0  # the long query vector's width on screen


def fixed(x: float, decimals: int, signed: bool = False) -> str:
    """A number to a fixed count of decimals, with a real minus sign (and a plus, `signed`), written the
    lesson's way (0,48 in pt)."""
    return localize_number(fmt_fixed(x, decimals, signed=signed), number_language())


def grouped(n: int, say=None) -> str:
    """A count with thousands separators, the language's (4,096; 4.096 in Portuguese, where a thousands
    comma reads as a decimal one): `say`'s, else the lesson's being drawn."""
    return say.number(int(n), ",d") if say is not None else localize_number(f"{int(n):,}", number_language())


def tiny(say, x: float) -> str:
    """A small difference, written as every lesson writes one: "2.3×10⁻⁷" (two significant digits, no
    Latin "e", the language's decimal mark); from 0.01 up, plain decimals ("0.012")."""
    x = float(abs(x))
    if x == 0:
        return "0"
    if x < 0.01:
        return sci(x, say)
    digits = max(1, 1 - floor(log10(x)))
    return say.number(x, f".{digits}f")  # figures follow the language too (README, "Numbers")


def model_name(say, name: str) -> str:
    """The model's name as prose gives it: the toy is "the toy model" in the language; a built-in
    model by its display name from the catalog ("SmolLM2", never its lowercase id "smollm2");
    another model by the name it came with."""
    if name == "toy":
        return say("blocks.toy_model")
    key = f"params.model.{name}"
    return say(key) if say.has(key) else name


def segmented_bar(pieces: int, width: float, height: float, color: str, theme, names: bool = True,
                  font_size: float = 22) -> VGroup:
    """A long vector drawn as `pieces` equal boxes side by side, each numbered under it from 0, as heads
    are everywhere in the suite (titles, --head)."""
    w = width / pieces
    boxes = VGroup(*(Rectangle(width=w, height=height, stroke_color=theme.background, stroke_width=2)
                     .set_fill(color, opacity=0.75 if i % 2 == 0 else 0.5) for i in range(pieces)))
    boxes.arrange(RIGHT, buff=0)
    bar = VGroup(boxes)
    bar.boxes = boxes
    bar.names = VGroup()
    if names:
        bar.names = VGroup(*(label(str(i), font_size, theme.dim).next_to(b, DOWN, buff=0.08) for i, b in enumerate(boxes)))
        bar.add(bar.names)
    return bar


def braced(mob, text: str, theme, direction=UP, font_size: float = 20) -> VGroup:
    brace = Brace(mob, direction=direction, buff=0.06, color=theme.dim)
    note = label(text, font_size, theme.text).next_to(brace, direction, buff=0.08)
    return VGroup(brace, note)


class HeadSplit(Chapter):
    key = "head_split"

    def plan(self, setting) -> HeadSplitPlan:
        return plan_head_split(setting)

    def play(self, stage: Stage, plan: HeadSplitPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        drawn: dict = {}
        stage.drawn[self.key] = drawn
        word = say.quote(plan.tokens[plan.focus])
        H, G, d = plan.n_heads, plan.n_kv_heads, plan.d_head
        title = label(say(f"{T}.title", layer=plan.layer), 30, th.text)
        stage.region("title").fit(title)
        words = WordBoxes(plan.tokens, theme=th, font_size=24, max_width=full.width)
        words.move_to([0, title.get_bottom()[1] - 0.2 - words.height / 2, 0])
        top = words.get_bottom()[1] - 0.35

        # 1. one long query vector, cut into H pieces of d
        qbar = segmented_bar(H, BAR_W, 0.6, th.query, th)
        qbar.move_to([0, top - 1.2, 0])
        qvals = VectorColumn(plan.q_long, head=SHOWN_HEAD, tail=SHOWN_TAIL, font_size=26, theme=th, horizontal=True)
        fit_into(qvals, BAR_W, 0.7).next_to(qbar.boxes, UP, buff=0.18)
        qname = math("q", 44, th.query).next_to(qbar.boxes, LEFT, buff=0.15)
        qbrace = braced(qbar.boxes, say(f"{T}.split", total=H * d, heads=H, d_head=d), th, DOWN, font_size=26)
        qbrace.shift(DOWN * 0.25)
        with stage.narrating(say(f"{T}.caption_long", word=word, total=H * d, model=model_name(say, plan.model_name))):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(words, lag_ratio=0.08), run_time=0.9)
            stage.play(words.animate.highlight(plan.focus, th.query), run_time=0.6)
            stage.play(FadeIn(qbar.boxes), FadeIn(qname), FadeIn(qvals), run_time=1.0)
        with stage.narrating(say(f"{T}.caption_cut", count=H, d_head=d)):
            stage.play(FadeIn(qbar.names, lag_ratio=0.1), FadeIn(qbrace), run_time=1.2)
            stage.wait(0.5)

        # keys and values: as many pieces as key/value heads
        kw = BAR_W * G / H
        kbar = segmented_bar(G, kw, 0.5, th.key, th, names=False)
        vbar = segmented_bar(G, kw, 0.5, th.value, th, names=False)
        kv = VGroup(kbar, vbar).arrange(DOWN, buff=0.2)
        kv.next_to(qbrace, DOWN, buff=0.45).align_to(qbar.boxes, LEFT)
        groups = VGroup()
        if G < H:  # each key/value piece under the middle of the query heads that share it, bracketed
            r = H // G
            for g in range(G):
                span = VGroup(*qbar.boxes[g * r:(g + 1) * r])
                for bar in (kbar, vbar):
                    bar.boxes[g].set_x(span.get_x())
                x0, x1, y = span.get_left()[0] + 0.06, span.get_right()[0] - 0.06, kbar.get_top()[1] + 0.14
                groups.add(VMobject(stroke_color=th.key, stroke_width=2.5).set_points_as_corners(
                    [[x0, y - 0.09, 0], [x0, y, 0], [x1, y, 0], [x1, y - 0.09, 0]]))
            kv.add(groups)
        drawn["kv_groups"] = groups
        kname = math("k", 44, th.key).next_to(kbar, LEFT, buff=0.15)
        vname = math("v", 44, th.value).next_to(vbar, LEFT, buff=0.15)
        kv_text = say(f"{T}.kv_size", total=G * d, heads=G, d_head=d)
        if G < H:  # spread out under their groups: a brace from end to end would say 192 is as long as 576
            kvnote = VGroup(label(kv_text, 26, th.text).next_to(kv, DOWN, buff=0.2))
        else:
            kvnote = braced(kv, kv_text, th, DOWN, font_size=26)
        drawn["kv_note"] = kvnote
        key = f"{T}.caption_kv_shared" if G < H else f"{T}.caption_kv"
        with stage.narrating(say(key, count=G, group=H // G, total=G * d)):
            stage.play(FadeIn(kv), FadeIn(kname), FadeIn(vname), FadeIn(kvnote), run_time=1.0)
            stage.wait(0.6)
        drawn.update(q_bar=qbar, q_values=qvals, k_bar=kbar, v_bar=vbar)

        # 2. each head attends on its own: up to MAX_GRIDS heads' real patterns, large enough for their
        # token labels (more heads: the closest and the farthest pair, a note says how many of how many)
        shown = plan.grid_heads
        bar_home = qbar.get_center()
        # the bar moves up under the words, thinner: room for the grids; under them the measurement's two
        # lines (three when not every head is drawn)
        bar_top, bar_h = top - 0.4, 0.35
        elided = len(shown) < H
        room_h = bar_top - bar_h - 0.6 - (1.25 if elided else 0.85) - full.bottom
        cell_w = (full.width - 0.3 * (len(shown) - 1)) / len(shown)
        grids = VGroup()
        cell = None  # every grid's cells the size of the first's (the one that carries the rows' labels)
        for k, hd in enumerate(shown):
            g = AttentionGrid((None, plan.patterns[hd], plan.masks[hd]), plan.tokens, theme=th, max_width=cell_w,
                              max_height=room_h, max_label_font=24, label_fill=0.95, show_row_labels=k == 0,
                              cell_size=cell, layout=stage.scene.setting.layout)
            g.set_mask("cleared")
            g.set_content("dots")
            grids.add(g)
            cell = (g.cell_width, g.cell_height)
        grids.arrange(RIGHT, buff=0.3, aligned_edge=DOWN)
        grow = min(full.width / grids.width, room_h / grids.height)
        if grow > 1:  # the room the narrower grids leave: the whole row grows into it (labels too)
            grids.scale(grow)
        # the first grid names its axes (review 34: the row of grids read as the transpose of
        # self_attention_steps' matrices): the keys beside its row labels, room kept for them at the left
        side = 0.45
        fit_into(grids, full.width - side, room_h)
        grids.move_to([side / 2, bar_top - bar_h - 0.6 - grids.height / 2, 0])
        axes = axis_titles(grids[0], stage)
        # the queries' name in the corner over the row labels, left of the column labels it names
        first = grids[0]
        corner_right = first.lines.get_left()[0] - 0.12
        fit_into(axes[0], max(corner_right - full.left, 0.5), 0.35)
        axes[0].move_to([corner_right - axes[0].width / 2, first.col_labels.get_center()[1], 0])
        # "head 3", not a bare "3" over a grid (the bar's pieces above are numbered the same way)
        names = VGroup(*(label(say("common.head.head_only", head=hd), 24, th.dim).next_to(g, UP, buff=0.12)
                         for hd, g in zip(shown, grids)))
        # each piece of q becomes the outline of its head's grid (rectangle to rectangle: no smear)
        frames = VGroup(*(Rectangle(width=g.width + 0.1, height=g.height + 0.1, stroke_color=th.query, stroke_width=2.5)
                          .set_fill(th.query, opacity=0).move_to(g) for g in grids))
        extra = VGroup()
        if elided:
            extra = label(say(f"{T}.grids_shown", shown=len(shown), count=H), 24, th.dim)
            fit_into(extra, full.width, 0.4).next_to(grids, DOWN, buff=0.2).set_x(0)
        lifted = qbar.boxes.copy().stretch_to_fit_height(bar_h)
        lifted.shift(UP * (bar_top - lifted.get_top()[1]))
        # what a dot's size means (the grids share one size), in a corner the grids leave free
        crowd = [grids, axes, names, frames, extra, lifted, qname, title, words]
        legend = corner_legend(stage, grids[0], crowd)
        if legend is None:  # the grids take the frame's width: the band between the words and the bar
            band = Region("legend", full.left, full.right, lifted.get_top()[1] + 0.15, words.get_bottom()[1] - 0.15)
            legend = corner_legend(stage, grids[0], crowd, band)
        shown_legend = [legend] if legend is not None else []
        with stage.narrating(say(f"{T}.caption_heads", count=H)):
            stage.play(FadeOut(VGroup(qvals, qbrace, kv, kname, vname, kvnote, qbar.names)), run_time=0.5)
            stage.play(Transform(qbar.boxes, lifted), qname.animate.set_y(lifted.get_y()), run_time=0.5)
            stage.play(*(ReplacementTransform(qbar.boxes[hd].copy(), f) for hd, f in zip(shown, frames)),
                       FadeIn(names), FadeIn(extra), run_time=1.0)
            stage.play(FadeIn(grids), FadeIn(axes), *(FadeIn(m) for m in shown_legend), run_time=0.8)
            stage.play(*(g.highlight_column(plan.focus, color=th.query) for g in grids), run_time=0.8)
            stage.wait(0.5)
        drawn["grids"] = grids
        drawn["legend"] = legend
        drawn["grid_axes"] = axes

        # how different the patterns really are: the closest and the farthest pair, measured
        measure = self.compare(stage, plan, grids, frames, extra, shown_legend) if H > 1 else VGroup()
        drawn.update(measure=measure, frames=frames)

        # 3. the outputs side by side, times W_O, equal the trace's attention output
        zbar = segmented_bar(H, BAR_W, 0.6, th.value, th)
        zbar.move_to(bar_home)
        zname = math("z", 44, th.value).next_to(zbar.boxes, LEFT, buff=0.15)
        zvals = VectorColumn(plan.z_concat, head=SHOWN_HEAD, tail=SHOWN_TAIL, font_size=26, theme=th, horizontal=True)
        fit_into(zvals, BAR_W, 0.7).next_to(zbar.boxes, UP, buff=0.18)
        # under each piece of z, the head's own output: its d numbers (first three, last), one size for all
        pieces = VGroup(*(VectorColumn(plan.z_concat[h * d:(h + 1) * d], head=3, tail=1, font_size=26, theme=th)
                          for h in range(H)))
        piece_top = zbar.names.get_bottom()[1] - 0.3
        room_h = piece_top - (full.bottom + 1.0)  # and a brace under them: the pieces make the long vector
        box_w = zbar.boxes[0].width
        shrink = min(1.0, 0.9 * box_w / max(p.width for p in pieces), room_h / max(p.height for p in pieces))
        for p, box in zip(pieces, zbar.boxes):
            p.scale(shrink)
            p.move_to([box.get_x(), piece_top - p.height / 2, 0])
        span = Line(zbar.boxes.get_left(), zbar.boxes.get_right(), stroke_width=0)
        span.set_y(min(p.get_bottom()[1] for p in pieces) - 0.1)
        pieces_brace = braced(span, say(f"{T}.split", total=H * d, heads=H, d_head=d), th, DOWN, font_size=26)
        pieces.add(pieces_brace)
        with stage.narrating(say(f"{T}.caption_concat", count=H, total=H * d)):
            stage.play(FadeOut(qbar), FadeOut(qname), run_time=0.4)
            stage.play(*(ReplacementTransform(f, zbar.boxes[hd]) for hd, f in zip(shown, frames)),
                       *(FadeIn(zbar.boxes[hd]) for hd in range(H) if hd not in shown), FadeIn(zbar.names),
                       FadeIn(zname), FadeIn(zvals), FadeOut(measure), FadeOut(extra), FadeOut(grids), FadeOut(names),
                       FadeOut(axes),
                       *(FadeOut(m) for m in shown_legend if H == 1), run_time=1.2)
            stage.play(FadeIn(pieces, shift=UP * 0.15, lag_ratio=0.1), run_time=0.8)
            stage.wait(0.4)
        eq = self.equality(stage, plan)
        drawn["equality"] = eq
        fit_into(eq, full.width, max(0.5, zbar.get_bottom()[1] - 0.5 - full.bottom))
        eq.move_to([0, (zbar.get_bottom()[1] - 0.3 + full.bottom) / 2, 0])
        with stage.narrating(say(f"{T}.caption_merge", word=word, d_model=plan.d_model, total=H * d,
                                 decimals=plan.decimals, diff=tiny(say, plan.max_diff))):
            stage.play(FadeOut(pieces), FadeIn(eq, shift=DOWN * 0.2), run_time=1.2)
            stage.wait(1.0)
        drawn.update(z_bar=zbar, z_pieces=pieces, equality=eq)

        # 4. GPT-2 small, from its config
        gd, gh, gdh = plan.gpt2
        gbar = segmented_bar(gh, BAR_W, 0.6, th.query, th, font_size=22)
        gnote = label(say(f"{T}.gpt2", total=gd, heads=gh, d_head=gdh), 30, th.text)
        gpt = VGroup(gnote, gbar).arrange(DOWN, buff=0.25)
        fit_into(gpt, full.width, 2.0).move_to([0, (zbar.get_bottom()[1] - 0.3 + full.bottom) / 2, 0])
        with stage.narrating(say(f"{T}.caption_gpt2", total=gd, heads=gh, d_head=gdh)):
            stage.play(FadeOut(eq), FadeIn(gpt), run_time=0.8)
            stage.wait(0.8)
        drawn["gpt2"] = gpt

    def compare(self, stage: Stage, plan: HeadSplitPlan, grids, frames, extra, legend=()) -> VGroup:
        """The measured difference between the heads' patterns: the closest pair (its grids outlined) and
        the farthest, in numbers on screen and in the caption (alike or apart, as the plan measured)."""
        th, say = stage.theme, stage.say
        full = stage.region("full")
        shown = plan.grid_heads
        (a, b), (c, e) = plan.closest, plan.farthest
        dist = plan.differences
        nums = dict(a=a, b=b, c=c, d=e, low=fixed(dist[a, b], 2), high=fixed(dist[c, e], 2))
        pair = VGroup(label(say(f"{T}.closest", **nums), 26, th.highlight),
                      label(say(f"{T}.farthest", **nums), 26, th.text)).arrange(RIGHT, buff=0.6)
        measure = VGroup(pair, label(say(f"{T}.tv_scale", count=plan.averaged), 22, th.dim)).arrange(DOWN, buff=0.12)
        below = extra if len(extra) else grids
        fit_into(measure, full.width, max(0.6, below.get_bottom()[1] - full.bottom - 0.15))
        measure.next_to(below, DOWN, buff=0.12 if len(extra) else 0.2).set_x(0)  # the frame's middle: the grids
        # sit right of it by the room their axis name takes
        with stage.narrating(say(f"{T}.caption_{'alike' if plan.alike else 'apart'}", **nums)):
            # the closest pair's outlines in the measurement's colour, the others dimmed
            # the dot legend has been read by now, and the measurement takes the foot of the frame
            stage.play(FadeIn(measure), *(FadeOut(m) for m in legend),
                       *(f.animate.set_stroke(th.highlight if hd in (a, b) else th.dim, width=4 if hd in (a, b) else 2)
                         for hd, f in zip(shown, frames)), run_time=0.8)
            stage.wait(1.0)
        return measure

    @staticmethod
    def equality(stage: Stage, plan: HeadSplitPlan) -> VGroup:
        """W_O · z (+ b_O) beside the trace's attention output: the shown entries and the largest difference.
        W_O is written d_model × (heads · d_head) and multiplies from the left, as in lesson output_matrix."""
        th, say = stage.theme, stage.say
        rows = []
        for name, vec, color in ((math("W_O dot z" + (" + b_O" if plan.has_bias else ""), 36, th.output),
                                  plan.merged, th.output),
                                 (label(say(f"{T}.trace_out"), 28, th.delta_multi), plan.trace_out, th.delta_multi)):
            cells = [name]
            for i in plan.shown:
                # signed, as every vector's entries (output_matrix writes this same vector "+0.852144")
                cells.append(label("…" if i is None else fixed(vec[i], plan.decimals, signed=True), 28, th.text))
            rows.append(cells)
        lines = aligned_rows(rows, col_gap=0.4, row_step=0.65)  # the two rows' entries in the same columns
        size = VGroup(math("W_O", 32, th.output),
                      label(say(f"{T}.wo_size", rows=plan.d_model, cols=plan.n_heads * plan.d_head), 28, th.dim))
        size.arrange(RIGHT, buff=0.15)
        # in the panel of the merged figures: their decimal point, in every language (README, "Numbers")
        diff = diff_line(say, f"{T}.max_diff", plan.max_diff, 28, th.highlight)
        return VGroup(size, lines, diff).arrange(DOWN, buff=0.35)
