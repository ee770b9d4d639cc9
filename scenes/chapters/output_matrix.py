"""`output_matrix`: the heads' value-up maps side by side are one matrix, the papers' output
matrix. On the real trace, that matrix times the heads' outputs one under another equals the sum of
the heads' ΔEs: a few entries of the focus's ΔE both ways, and their largest difference."""

from __future__ import annotations

from manim import DOWN, LEFT, RIGHT, UP, Brace, FadeIn, Line, VGroup

from ..components.color_scale import ColorScale
from ..components.text import label, number_language
from ..i18n import localize_number
from ..components.vectors import bracket_pair, ellipsis_dots, math
from ..lesson import Chapter
from ..plans.low_rank import OutputMatrixPlan, plan_output_matrix
from ..stage import Stage
from ..style import fmt_fixed
from .beyond_parts import sci, sci_math, with_math
from .honest import wrapped
from .low_rank import heat_map

T = "low_rank.output_matrix"
Z_NAME_GAP = 0.25  # the z note's least gap from the product's bracket


def shown_number(x: float, decimals: int, font_size: float, color: str):
    shown = localize_number(fmt_fixed(x, decimals, signed=True), number_language())  # signed, as every vector
    mob = label(shown, font_size, color)
    mob.value, mob.shown = float(x), shown
    return mob


def entry_column(values, shown, decimals: int, theme, color: str) -> VGroup:
    """The shown entries one under another, ⋮ before the last one, in brackets."""
    rows = [shown_number(values[i], decimals, 28, color) for i in shown[:-1]]
    rows.append(ellipsis_dots(DOWN, color=theme.dim))
    rows.append(shown_number(values[shown[-1]], decimals, 28, color))
    col = VGroup(*rows).arrange(DOWN, buff=0.14, aligned_edge=RIGHT)
    col.entries = [r for r in rows if hasattr(r, "value")]
    return VGroup(col, bracket_pair(col, color=theme.text))


class OutputMatrix(Chapter):
    key = "output_matrix"

    def plan(self, setting) -> OutputMatrixPlan:
        return plan_output_matrix(setting)

    def play(self, stage: Stage, plan: OutputMatrixPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn.setdefault(self.key, {})
        full = stage.region("full")
        title = label(say(f"{T}.title", layer=plan.layer, count=plan.n_heads), 30, th.text)
        stage.region("title").fit(title)
        stage.play(FadeIn(title), run_time=0.5)

        # 1. each head's value-up map (drawn d_model tall, d_head wide: vectors are columns)
        maps = VGroup()
        for h in range(plan.n_heads):
            block = plan.stacked[h * plan.d_head:(h + 1) * plan.d_head]
            cells = block[list(plan.cols)][:, list(plan.rows)].T
            maps.add(heat_map(cells, plan.scale, th, 4.2))
        maps.arrange(RIGHT, buff=0.35)
        names = VGroup(*(math(f"W_O^(({h}))", 30, th.output).next_to(m, UP, buff=0.1) for h, m in enumerate(maps)))
        group = VGroup(maps, names)
        if group.width > full.width - 0.4:
            group.scale_to_fit_width(full.width - 0.4)
        if group.height > full.top - 1.0 - full.bottom - 1.4:
            group.scale_to_fit_height(full.top - 1.0 - full.bottom - 1.4)
        group.move_to([0, title.get_bottom()[1] - 0.3 - group.height / 2, 0])
        each = label(say(f"{T}.each", rows=plan.d_model, cols=plan.d_head), 24, th.text).next_to(group, DOWN, buff=0.15)
        # the shape as drawn (rows × columns), the same as lesson parameter_count's value-up
        key = self.key_to_maps(stage, plan)  # what a cell's colour means, and which cells are drawn
        drawn.update(maps=maps, names=names, each=each, key=key, shapes={"value_up": (plan.d_model, plan.d_head)})
        with stage.narrating(say(f"{T}.caption_each", count=plan.n_heads, d_model=plan.d_model, d_head=plan.d_head)):
            stage.play(FadeIn(names), FadeIn(maps, lag_ratio=0.02), FadeIn(each), FadeIn(key), run_time=1.2)

        # 2. side by side, without gaps: one matrix
        joined = maps.copy().arrange(RIGHT, buff=0).move_to(maps)
        brace = Brace(joined, DOWN, color=th.output, buff=0.08)
        one = VGroup(math("W_O", 34, th.output),
                     label(say(f"{T}.size", rows=plan.d_model, cols=plan.n_heads * plan.d_head), 24, th.text)
                     ).arrange(RIGHT, buff=0.25).next_to(brace, DOWN, buff=0.08)
        drawn.update(joined=joined, one=one)
        with stage.narrating(say(f"{T}.caption_join", count=plan.n_heads, cols=plan.n_heads * plan.d_head)):
            stage.play(maps.animate.arrange(RIGHT, buff=0).move_to(joined), names.animate.set_opacity(0.0),
                       each.animate.set_opacity(0.0), run_time=1.0)
            seams = VGroup(*(Line(m.get_corner(UP + RIGHT), m.get_corner(DOWN + RIGHT), color=th.text, stroke_width=1.5)
                             for m in maps[:-1]))
            stage.play(FadeIn(brace), FadeIn(one), FadeIn(seams), run_time=0.6)
        stage.remove(names, each)

        # 3. on the real trace: W_O times the heads' outputs, one under another, = the sum of ΔEs
        word = plan.tokens[plan.focus]
        left = entry_column(plan.product[plan.focus], plan.shown, plan.decimals, th, th.output)
        right = entry_column(plan.head_sum[plan.focus], plan.shown, plan.decimals, th, th.delta_multi)
        lhs = math("W_O dot mat(delim: \"[\", z^((0)); dots.v; z^((" + str(plan.n_heads - 1) + ")))", 32, th.output)
        rhs = math("sum_h Delta arrow(E)^((h))", 34, th.delta_multi)
        # W_O · [z⁽⁰⁾ … z⁽³⁾] = (its product) = (the sum of ΔEs), the sum's name under its vector
        eq = VGroup(lhs, math("=", 30, th.text), left, math("=", 30, th.text), right).arrange(RIGHT, buff=0.3)
        rhs.next_to(right, DOWN, buff=0.15)
        # what the z's are, under them (review 50: named only in the caption)
        # (two lines where they fit, broken after the comma: "the 4 heads' outputs," / "16 numbers each", review 51)
        z_name = wrapped(say(f"{T}.z_name", count=plan.n_heads, d_head=plan.d_head), max(lhs.width + 1.2, 3.1), 22,
                         th.dim, 3, break_after=", ")
        for line in z_name:  # each line centred under the z's
            line.set_x(z_name.get_x())
        z_name.next_to(lhs, DOWN, buff=0.2)
        # clear of the product's bracket (review 51: pt's "heads," touched it)
        z_name.shift(LEFT * max(0.0, z_name.get_right()[0] - (left.get_left()[0] - Z_NAME_GAP)))
        eq.add(rhs, z_name)
        # one value for the screen and the caption: a figure beside the vectors (decimal point in every
        # language), in the caption the language's decimal mark
        largest = sci(plan.max_diff_focus, say)
        # the figure typeset, as the formulas beside it (a text face's "4.3×10⁻⁵" has no spaces: review 47)
        figure = sci_math(plan.max_diff_focus, say, 26, th.text)
        diff = with_math(label(say(f"{T}.max_diff"), 26, th.text), figure, 26, th.text)
        of = label(say(f"{T}.for_word", word=say.quote(word)), 26, th.text)
        bottom = VGroup(of, eq, diff).arrange(DOWN, buff=0.3)
        # the joined matrix steps to the left; the equation takes the right
        matrix = VGroup(maps, seams, brace)  # its name and size keep their type size
        target = matrix.copy()
        target.scale_to_fit_height(min(full.height - 1.2 - one.height, target.height))
        if target.width > 5.4:
            target.scale_to_fit_width(5.4)
        mid = (title.get_bottom()[1] - 0.2 + full.bottom) / 2
        target.move_to([full.left + max(target.width, one.width) / 2, mid + (one.height + 0.08) / 2, 0])
        one_at = one.copy().next_to(target, DOWN, buff=0.08)
        room_left, room_right = max(target.get_right()[0], one_at.get_right()[0]) + 0.5, full.right
        if bottom.width > room_right - room_left:
            bottom.scale_to_fit_width(room_right - room_left)
        bottom.move_to([(room_left + room_right) / 2, mid, 0])
        k, where = target.height / matrix.height, target.get_center()
        stage.play(matrix.animate.scale(k).move_to(where), one.animate.move_to(one_at), run_time=0.8)
        drawn.update(left=left, right=right, diff=diff, word=of, z_name=z_name)
        with stage.narrating(say(f"{T}.caption_concat", word=say.quote(word), count=plan.n_heads,
                                 d_head=plan.d_head, total=plan.n_heads * plan.d_head)):
            stage.play(FadeIn(of), FadeIn(lhs), FadeIn(z_name), FadeIn(eq[1]), FadeIn(left), run_time=0.8)
        with stage.narrating(say(f"{T}.caption_equal", decimals=plan.decimals, value=largest)):
            stage.play(FadeIn(eq[3]), FadeIn(right), FadeIn(rhs), run_time=0.8)
            stage.play(FadeIn(diff, shift=UP * 0.1), run_time=0.5)
            stage.wait(1.0)
        # this block's own step: the one matrix's blocks named again as the heads' value-up maps
        again = VGroup(*(math(f"W_O^(({h}))", 30, th.output).next_to(m, UP, buff=0.1) for h, m in enumerate(maps)))
        widest = max(n.width for n in again)
        room = min(m.width for m in maps) * 0.95
        if widest > room:
            for n, m in zip(again, maps):
                n.scale(room / widest).next_to(m, UP, buff=0.1)
        drawn["names_again"] = again
        with stage.narrating(say(f"{T}.caption_closing")):
            stage.play(FadeIn(again, shift=DOWN * 0.1, lag_ratio=0.15), run_time=0.8)
            stage.wait(0.8)

    @staticmethod
    def key_to_maps(stage: Stage, plan: OutputMatrixPlan) -> VGroup:
        """In the frame's lower corners, for as long as the maps are on screen: which rows and
        columns the maps sample (left; only when they leave some out) and the colour scale from the
        smallest to the largest entry drawn (right)."""
        th, say = stage.theme, stage.say
        full = stage.region("full")
        scale = ColorScale(plan.low, plan.high, scale=plan.scale, caption=say("common.colour.scale"), theme=th,
                           kind="signed2")
        scale.move_to([full.right - scale.width / 2, full.bottom + scale.height / 2, 0])
        key = VGroup(scale)
        key.scale_bar = scale
        key.sampled = None
        if len(plan.rows) < plan.d_model or len(plan.cols) < plan.d_head:
            note = label(say(f"{T}.sampled", rows=len(plan.rows), d_model=plan.d_model, cols=len(plan.cols),
                             d_head=plan.d_head), 20, th.text)
            room = scale.get_left()[0] - 0.4 - full.left
            if note.width > room:
                note.scale(max(room / note.width, 0.7))
            note.move_to([full.left + note.width / 2, full.bottom + note.height / 2 + 0.05, 0])
            key.add(note)
            key.sampled = note
        return key
