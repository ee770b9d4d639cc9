"""Values, inside the pattern: W_V turns the embedding of the focus's strongest key into its
value vector (drawn as the query chapter draws W_Q); then in the focus word's column of the grid
each key's value vector appears beside its cell and fades to its real weight; they add up, in the
side panel, to the weighted sum, which W_O lifts to ΔE; then E + ΔE = E′, and every word at once. Goes on with the
grid the chapter before left (`continues = ("grid",)`), else first draws that grid itself."""

from __future__ import annotations

from manim import (
    DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, LaggedStart, ReplacementTransform, Transform, VGroup, Write, config,
    smooth,
)

from ..components.matrices import MatVecProduct, WeightMatrix
from ..plans.rounding import drawn_misses
from ..components.text import label, number
from ..components.vectors import VectorColumn, math, symbol_source
from ..lesson import Chapter
from ..plans.qkv import ValuesPlan, plan_values
from ..stage import Stage
from .embedding_parts import direction_name, fit_into
from .grid_parts import ensure_grid
from .honest import honest_note, wrapped
from .rounding_parts import declare_rows, rounding_marks
from .qkv_parts import (
    brace_words_for, camera_home, drop_below, dots_column, entry_kind, length_brace, matrix_colour_key, slot_row, vector,
    word_tag, zoom_frame, zoom_on,
)
from .value_chips import fit_grid, value_chips

BELOW = DOWN * (config.frame_height + 1.0)  # every word at once is drawn below the frame
SUM_SYMBOL = "sum_j w_j arrow(V)_j"


FOOT = 0.3  # the least room under the last line of every_word's frame


def rest_share(plan, say) -> str:
    """The weight of every key but the strongest, as the tally writes it: "≈ 0.12" where the chips of
    the rest, as drawn, add up to another figure (0.08 + 0.05 beside 0.12)."""
    rest = say.number(plan.rest_weight, ".2f")
    drawn = [f"{plan.weights[j]:.2f}" for j in plan.chips if j not in plan.tops]
    if not plan.hidden and drawn_misses(drawn, f"{plan.rest_weight:.2f}"):
        rest = f"{say('common.rounding.mark')} {rest}"
    return rest


def tally_of(stage: Stage, plan: ValuesPlan) -> VGroup:
    """The focus's strongest weights and what is left for the rest, in the panel, as the caption says them."""
    th, say, panel = stage.theme, stage.say, stage.region("panel")
    # figures beside the chips' figures: the decimal point in every language, as the chips write it
    lines = [label(say("walkthrough.masked.share", word=say.quote(plan.tokens[j]), weight=say.number(plan.weights[j], ".2f")),
                   28, th.value) for j in plan.tops]
    if plan.rest_weight >= 0.005:
        lines.append(label(say("walkthrough.masked.share_rest", weight=rest_share(plan, say)), 28, th.dim))
    tally = VGroup(*lines).arrange(DOWN, aligned_edge=LEFT, buff=0.22)
    if tally.width > panel.width - 0.3:
        tally.scale_to_fit_width(panel.width - 0.3)
    return tally.move_to(panel.center)


class Values(Chapter):
    key = "values"
    continues = ("grid",)

    def plan(self, setting) -> ValuesPlan:
        return plan_values(setting)

    def play(self, stage: Stage, plan: ValuesPlan) -> None:
        th, say = stage.theme, stage.say
        ht, i, tokens = plan.head_trace, plan.focus, plan.tokens
        word = say.quote(tokens[i])
        # a lesson that opens here has not met W_Q and W_K: its first caption does not count them
        first = "values" if self.goes_on_from(stage) else "values_first"
        grid, _ = ensure_grid(stage, ht, tokens, plan.layout, "dots")
        fit_grid(stage, grid)
        chips = value_chips(stage, plan, grid)
        drawn = stage.drawn.setdefault("values", {})
        drawn.update(grid=grid, chips=chips.by_token)
        with stage.narrating(say(f"qkv.values.{first}", d_head=plan.d_head)):
            stage.play(grid.highlight_column(i, color=th.query, dim_others=True), run_time=0.8)
            picture, aside = self.make_value(stage, plan)
        picture, aside = self.value_bias(stage, plan, picture, aside)
        with stage.narrating(say(f"qkv.values.beside_{grid.layout}", word=word)):
            # back to the grid: the picture of W_V goes, what it covered comes back
            stage.play(camera_home(stage), FadeOut(picture), *(FadeIn(m) for m in aside), run_time=1.0)
            stage.play(LaggedStart(*(FadeIn(c, shift=c.enter * 0.2) for c in chips), lag_ratio=0.15),
                       *([FadeIn(chips.note)] if chips.note is not None else []), run_time=1.5)
        items = [say("qkv.values.weight_item", word=say.quote(tokens[j]), weight=plan.weights[j]) for j in plan.tops]
        weigh = "qkv.values.weigh_rest_small" if plan.rest_weight < 0.05 else "qkv.values.weigh_rest"
        tally = tally_of(stage, plan)
        with stage.narrating(say(weigh, word=word, tops=say.words(items), rest=rest_share(plan, say))):
            stage.play(*(a for c in chips for a in c.weigh()), FadeIn(tally, shift=UP * 0.1), run_time=1.2)
            stage.wait(0.8)
        stage.play(FadeOut(tally), run_time=0.4)  # the panel is free for the note and the sum
        stage.remove(tally)
        honest_note(stage, self.key, plan.honesty, tokens, stage.region("panel"), keep=False, max_lines=12)
        z_group = self.weighted_sum(stage, plan, chips)
        delta = self.lift(stage, plan, z_group)
        self.update(stage, plan, delta)
        self.every_word(stage, plan)

    # --- W_V times one word's embedding gives its value, in the panel --------------------------------
    def make_value(self, stage: Stage, plan: ValuesPlan):
        """W_V · E⃗ⱼ = V⃗ⱼ for the focus's strongest key j, drawn as the query chapter draws W_Q · E⃗ = Q⃗
        (the real W_V and head input, the same window), in the panel with the camera close; everything
        else fades while it is shown. Returns the picture (product and length brace) and what faded."""
        th, panel = stage.theme, stage.region("panel")
        ht, j = plan.head_trace, plan.source
        W = WeightMatrix.from_trace(ht.W_V, name="W_V", name_color=th.value, theme=th, font_size=20)
        vec = vector(plan.source_input, plan.value_input, font_size=20, theme=th, symbol=symbol_source("E", j + 1, normed=plan.normalized),
                     kind=entry_kind(plan.source_input, plan.value_input),
                     show_symbol=True)
        prod = MatVecProduct(W, vec, result_symbol=symbol_source("V", j + 1), result_color=th.value)
        if plan.normalized:  # W_V reads E after the layer's norm: not the residual E the update adds to
            vec.add(label(stage.say("qkv.units.normalized"), 16, th.dim).next_to(vec.brackets, DOWN, buff=0.1))
        v_brace = length_brace(stage, prod.result, plan.d_head, font_size=18, buff=0.08, right_limit=float("inf"))
        tag = word_tag(stage, plan.tokens[j], vec.symbol, th.value)
        picture = VGroup(prod, v_brace, tag)
        picture.scale_to_fit_width(panel.width)
        picture.move_to(panel.center)
        centre, width = zoom_frame(picture, 5.5, 1.15)  # the frame zoom_on takes
        brace_words_for(v_brace, width)  # its words read as the query's brace's
        key = matrix_colour_key(stage, W, vec.get_left()[0], centre, width)  # what W_V's colours mean, as W_Q's
        aside = list(stage.mobjects)
        stage.drawn["values"].update(value_product=prod, W_V=W, value_input=vec, value_aside=aside, value_tag=tag,
                                     w_v_key=key)
        # the camera closes in first, then the product appears: its numbers are read at the close-up's scale
        stage.play(zoom_on(stage, picture, min_width=5.5, pad=1.15), *(FadeOut(m) for m in aside), run_time=0.8)
        stage.play(FadeIn(W, shift=RIGHT * 0.2), FadeIn(vec), FadeIn(prod.equals), FadeIn(prod.result), FadeIn(tag),
                   run_time=0.8)
        rows = prod.shown_rows()
        stage.play(prod.sweep(rows=rows[:2], run_time_per_row=0.8, fade_boxes=False))
        stage.play(prod.sweep(rows=rows[2:], run_time_per_row=0.35), FadeIn(key, run_time=0.6))
        stage.play(FadeIn(v_brace), run_time=0.5)
        picture.add(key)  # it goes with the picture
        stage.drawn["values"]["value_column"] = prod.result
        return picture, aside

    def value_bias(self, stage: Stage, plan: ValuesPlan, picture, aside):
        """A model with biases: the value is W_V E⃗ plus b_V (its own step, as the query's b_Q)."""
        if not plan.has_bias:
            return picture, aside
        th, prod = stage.theme, stage.drawn["values"]["value_product"]
        j = plan.source
        real = VectorColumn(plan.head_trace.v[j], head=prod.matrix.row_head, tail=prod.matrix.row_tail,
                            font_size=prod.result.font_size, theme=th, symbol=symbol_source("V", j + 1),
                            symbol_color=th.value, show_symbol=True, row_height=prod.matrix.row_height)
        real.scale(prod.result.brackets.height / real.brackets.height).move_to(prod.result)
        with stage.narrating(stage.say("qkv.values.bias")):
            stage.play(Transform(prod.result, real), run_time=0.8)
        stage.drawn["values"]["value_column"] = real
        return picture, aside

    # --- Σ w_j V_j in the panel -------------------------------------------------------------------
    def weighted_sum(self, stage: Stage, plan: ValuesPlan, chips) -> VGroup:
        th, say, panel = stage.theme, stage.say, stage.region("panel")
        z_col = vector(plan.head_trace.z[plan.focus], plan.z, font_size=20, theme=th, bracket_color=th.delta)
        z_label = math(SUM_SYMBOL, font_size=26, color=th.delta)
        z_group = VGroup(z_label, z_col).arrange(RIGHT, buff=0.2)
        z_group.move_to([panel.center[0], panel.top - 0.2 - z_group.height / 2, 0])
        z_group.column = z_col
        stage.drawn["values"]["z_column"] = z_col
        movers = [c.vec.copy() for c in chips if plan.weights[c.token] >= 0.005]
        with stage.narrating(say("qkv.values.sum")):
            # the weighted values fly into the sum and become it (none is left stacked on another)
            stage.play(*(Transform(m, z_col.copy().fade_to(0.35), remover=True) for m in movers),
                       FadeIn(z_col, rate_func=lambda t: smooth(max(0.0, (t - 0.55) / 0.45))), run_time=1.2)
            stage.play(Write(z_label), run_time=0.7)
            stage.wait(0.8)
        return z_group

    # --- W_O lifts the sum to ΔE ----------------------------------------------------------------------
    def lift(self, stage: Stage, plan: ValuesPlan, z_group: VGroup):
        th, say, panel = stage.theme, stage.say, stage.region("panel")
        ht, i = plan.head_trace, plan.focus
        # this head's block of W_O: W_O alone names every head's blocks together (output_matrix, review 53)
        Wo = WeightMatrix.from_trace(ht.W_O, name=f"W_O^(({ht.head}))", name_color=th.output, theme=th, font_size=20)
        zvec = vector(ht.z[i], plan.z, font_size=20, theme=th, bracket_color=th.delta, symbol=SUM_SYMBOL,
                      symbol_color=th.delta, show_symbol=True)
        prod = MatVecProduct(Wo, zvec, result_symbol=symbol_source("E", i + 1, delta=True), result_color=th.delta)
        prod.scale_to_fit_width(panel.width)
        prod.move_to([panel.center[0], z_group.get_bottom()[1] - 0.3 - prod.height / 2, 0])
        # ΔE's real length, as V's is named: the caption's "back up to 576 numbers" is on screen
        d_brace = length_brace(stage, prod.result, plan.d_model, font_size=18, buff=0.08, right_limit=float("inf"))
        tag = word_tag(stage, plan.tokens[i], prod.result.symbol, th.query)
        centre, width = zoom_frame(VGroup(prod, d_brace, tag), 5.5, 1.15)
        brace_words_for(d_brace, width)
        key = matrix_colour_key(stage, Wo, zvec.get_left()[0], centre, width)  # what W_O's colours mean
        stage.drawn["values"].update(product=prod, delta_brace=d_brace, delta_tag=tag, w_o_key=key, lift_width=width)
        # the camera closes in on the product: the grid side (grid, titles, chips) would be cut at the
        # frame's left edge, so it fades while the camera is close and comes back with it (update)
        aside = [m for m in stage.mobjects if m is not z_group and m.get_center()[0] < panel.left]
        stage.drawn["values"]["aside"] = aside
        with stage.narrating(say("qkv.values.lift", d_model=plan.d_model)):
            stage.play(ReplacementTransform(z_group.column, zvec), FadeOut(z_group[0]), FadeIn(Wo, shift=RIGHT * 0.2),
                       FadeIn(prod.equals), FadeIn(prod.result), FadeIn(d_brace), FadeIn(tag),
                       zoom_on(stage, VGroup(prod, d_brace, tag), min_width=5.5, pad=1.15),
                       *(FadeOut(m) for m in aside), run_time=1.2)
            rows = prod.shown_rows()
            stage.play(prod.sweep(rows=rows[:2], run_time_per_row=0.9, fade_boxes=False))
        with stage.narrating(say("qkv.values.delta", word=say.quote(plan.tokens[i]))):
            stage.play(prod.sweep(rows=rows[2:], run_time_per_row=0.4), FadeIn(key, run_time=0.6))
            stage.wait(1.0)
        return prod

    # --- E + ΔE = E′ ----------------------------------------------------------------------------------
    def update(self, stage: Stage, plan: ValuesPlan, prod) -> None:
        th, say, panel = stage.theme, stage.say, stage.region("panel")
        ht, i, pos = plan.head_trace, plan.focus, plan.focus + 1
        e_col = vector(plan.residual[i], plan.embedding, font_size=22, theme=th, symbol=symbol_source("E", pos),
                       show_symbol=True)
        d_col = vector(ht.delta_e[i], plan.delta, font_size=22, theme=th, bracket_color=th.delta,
                       symbol=symbol_source("E", pos, delta=True), symbol_color=th.delta, show_symbol=True)
        n_col = vector(plan.updated_all[i], plan.updated, font_size=22, theme=th, bracket_color=th.updated,
                       symbol=symbol_source("E", pos, prime=True), symbol_color=th.updated, show_symbol=True)
        plus, eq = label("+", font_size=36, color=th.text), label("=", font_size=36, color=th.text)
        total = VGroup(e_col, plus, d_col, eq, n_col).arrange(RIGHT, buff=0.3)
        if plan.normalized:  # E here is the residual, not the normalised E the head read (query, W_V above)
            # under E⃗ and the "+", short of ΔE⃗ (under E⃗ alone it broke "the layer's / input, / before its / norm":
            # review 52)
            room = d_col.brackets.get_left()[0] - 0.25 - e_col.get_left()[0]
            residual = wrapped(say("qkv.units.residual"), max(e_col.width + 0.3, room), 22, th.dim, 4)
            residual.next_to(e_col.brackets, DOWN, buff=0.12).align_to(e_col, LEFT)
            total.add(residual)
            stage.drawn["values"]["residual_note"] = residual
        if plan.n_heads > 1:  # E′ here is E plus one head's change: the layer adds every head's (multi_head)
            # the one thing that says this E′ is not the layer's: as large as the figures, in E′'s colour
            # under ΔE and E′ both, a line or two: under E′ alone it stood in four lines against the frame's edge
            # (review 49)
            span = VGroup(d_col.brackets, n_col.brackets)
            alone = wrapped(say("qkv.units.one_head", count=plan.n_heads), span.width + 0.3, 22, th.updated, 3)
            alone.next_to(span, DOWN, buff=0.12).set_x(span.get_x())
            total.add(alone)
            stage.drawn["values"]["one_head_note"] = alone
        plus.match_y(e_col.brackets)
        eq.match_y(e_col.brackets)
        # ≈ beside the rows whose drawn digits do not add up (from the plan), and one note saying why
        marks = rounding_marks(stage, n_col, plan.rounding_off) if plan.rounding_off else VGroup()
        declare_rows([e_col, d_col], n_col, marks)
        block = VGroup(total, marks)
        if block.width > panel.width:
            block.scale_to_fit_width(panel.width)
        block.move_to([panel.center[0], panel.top - 0.3 - block.height / 2, 0])
        rounding = VGroup()
        if plan.rounding_off:
            # the one-line note, at a readable size (≥ 16 px) in every language
            note = wrapped(say("common.rounding.short"), panel.width, 20, th.dim, 5)  # a footnote, under the lines it qualifies
            fit_into(note, panel.width, 2.0).next_to(block, DOWN, buff=0.25).set_x(panel.center[0])
            rounding = VGroup(marks, note)
        lines = VGroup()
        for d in plan.directions:
            a = number(d.before, "vec", font_size=24, color=th.embedding)
            b = number(d.after, "vec", font_size=24, color=th.updated)
            line = VGroup(label(say("qkv.values.along", name=say.quote(direction_name(say, d.name, plan.tokens))), font_size=24,
                                color=th.text), a,
                          label("→", font_size=24, color=th.dim), b).arrange(RIGHT, buff=0.12)
            line.direction, line.before, line.after = d.name, a, b
            lines.add(line)
        if len(lines):
            lines.arrange(DOWN, aligned_edge=LEFT, buff=0.18)
            if lines.width > panel.width:
                lines.scale_to_fit_width(panel.width)
            lines.next_to(VGroup(total, rounding), DOWN, buff=0.45).set_x(panel.center[0])
            floor = stage.region("full").bottom + 0.1  # (ko: the last line had reached the frame's foot)
            if lines.get_bottom()[1] < floor:
                top = lines.get_top()[1]
                lines.scale((top - floor) / lines.height).move_to([panel.center[0], top - (top - floor) / 2, 0])
        stage.drawn["values"].update(e_column=e_col, delta_column=d_col, updated_column=n_col, rounding=rounding,
                                     direction_lines=list(lines))
        update = (say("qkv.values.update_one_head", word=say.quote(plan.tokens[i]), count=plan.n_heads)
                  if plan.n_heads > 1 else say("qkv.values.update", word=say.quote(plan.tokens[i])))
        with stage.narrating(update):
            stage.play(camera_home(stage), FadeOut(VGroup(prod.matrix, prod.vector, prod.equals)),
                       *(FadeOut(stage.drawn["values"][k]) for k in ("delta_brace", "delta_tag", "w_o_key") if k in stage.drawn["values"]),
                       ReplacementTransform(prod.result, d_col), FadeIn(e_col), FadeIn(plus),
                       *([FadeIn(stage.drawn["values"]["residual_note"])] if plan.normalized else []),
                       *(FadeIn(m) for m in stage.drawn["values"].get("aside", [])), run_time=1.0)
            stage.play(FadeIn(eq), FadeIn(n_col, shift=RIGHT * 0.2), *([FadeIn(rounding)] if len(rounding) else []),
                       *([FadeIn(stage.drawn["values"]["one_head_note"])] if plan.n_heads > 1 else []),
                       run_time=0.8)
            stage.wait(0.6)
        if len(lines):
            names = say.quoted_words([direction_name(say, d.name, plan.tokens) for d in plan.directions])
            with stage.narrating(say("qkv.values.leans", names=names)):
                stage.play(FadeIn(lines, lag_ratio=0.3), run_time=1.0)
                stage.wait(1.8)

    # --- every word at once, below the frame; then back to the grid -------------------------------------
    def every_word(self, stage: Stage, plan: ValuesPlan) -> None:
        """Every word's E + ΔE = E′ in three bands, under the camera moved down (BELOW); the rounding note
        under them keeps FOOT from the frame's foot."""
        th, say = stage.theme, stage.say
        ht = plan.head_trace
        row, xs = slot_row(plan.tokens, plan.band_slots, th, width=12.3, centre_x=0.45)
        row.set_y(3.35)
        arrays = {"E": plan.residual, "dE": ht.delta_e, "E'": plan.updated_all}
        # (a little up from 2.75 / 0.6 / −1.5: the rounding note under E′ stood 15 px over the frame's foot, review 52)
        bands = (("E", th.text, 2.85), ("dE", th.delta, 0.68), ("E'", th.updated, -1.4))
        cols = {name: {} for name, *_ in bands}
        dots = VGroup()
        for name, color, y_top in bands:
            for s, j in enumerate(plan.band_slots):
                if j is None:
                    dots.add(dots_column(xs[s], y_top, y_top - 1.5, th.dim))
                    continue
                c = vector(arrays[name][j], plan.bands[name][j], font_size=19, theme=th, bracket_color=color)
                cols[name][j] = c.move_to([xs[s], 0, 0]).align_to([0, y_top, 0], UP)
        mids = [VGroup(*cols[name].values()).get_y() for name, *_ in bands]
        gaps = [(VGroup(*cols[a].values()).get_bottom()[1] + VGroup(*cols[b].values()).get_top()[1]) / 2
                for a, b in (("E", "dE"), ("dE", "E'"))]
        side = VGroup(math("arrow(E)", font_size=34, color=th.embedding).move_to([-6.5, mids[0], 0]),
                      math("Delta arrow(E)", font_size=30, color=th.delta).move_to([-6.5, mids[1], 0]),
                      math("arrow(E)'", font_size=34, color=th.updated).move_to([-6.5, mids[2], 0]),
                      label("+", font_size=34, color=th.text).move_to([-6.5, gaps[0], 0]),
                      label("=", font_size=34, color=th.text).move_to([-6.5, gaps[1], 0]))
        # ≈ beside each word's E′ rows whose drawn E + ΔE miss it (from the plan), and the one note why
        marks = VGroup()
        for j, n_col in cols["E'"].items():
            rows = plan.band_rounding.get(j, ())
            m = rounding_marks(stage, n_col, rows, font_size=19, buff=0.05) if rows else VGroup()
            declare_rows([cols["E"][j], cols["dE"][j]], n_col, m)
            marks.add(m)
        note = VGroup()
        if any(plan.band_rounding.get(j) for j in cols["E'"]):
            bottom = VGroup(*cols["E'"].values()).get_bottom()[1]
            room = bottom - 0.15 - (-config.frame_height / 2 + FOOT)
            note = wrapped(say("common.rounding.short"), 12.6, 26, th.dim, 2)
            fit_into(note, 12.6, room).next_to([0.2, bottom, 0], DOWN, buff=0.15)
        everything = VGroup(row, side, dots, marks, note, *(c for band in cols.values() for c in band.values()))
        everything.shift(BELOW)
        stage.drawn["values"].update(all_words=cols, all_row=row, all_words_note=note)
        with stage.narrating(say("qkv.values.every")):
            stage.play(stage.camera_frame.animate.move_to(BELOW), run_time=1.0)
            stage.play(FadeIn(row, lag_ratio=0.05), FadeIn(side), FadeIn(dots), run_time=0.8)
            stage.play(LaggedStart(*(FadeIn(c) for c in cols["E"].values()), lag_ratio=0.05), run_time=0.9)
            stage.play(LaggedStart(*(FadeIn(c, shift=DOWN * 0.15) for c in cols["dE"].values()), lag_ratio=0.05),
                       run_time=0.9)
        with stage.narrating(say("qkv.values.refined")):
            stage.play(LaggedStart(*(FadeIn(c, shift=DOWN * 0.15) for c in cols["E'"].values()), lag_ratio=0.05),
                       run_time=1.2)
            if len(note):
                stage.play(FadeIn(marks), FadeIn(note), run_time=0.6)
            stage.wait(1.5)
        # back home only once the caption about every word has been read over every word
        def home():  # when the next chapter starts: the last frame is every word's E′ the caption spoke of
            stage.play(camera_home(stage, run_time=1.2))
            drop_below(stage, BELOW[1] / 2)

        stage.on_leave(home)
