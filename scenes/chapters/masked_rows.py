"""`masked_self_attention`: the score matrix with queries as rows (the paper's and the Illustrated
GPT-2's orientation), the future cells set to the value our model writes (−∞) next to GPT-2's −1e10
(the same weights: exp underflows to exactly 0 in float32), the softmax of every row, and every
row read out in words with the model's real percentages."""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Arrow, FadeIn, FadeOut, Indicate, Line, Rectangle, Restore, VGroup

from ..components.attention_grid import AttentionGrid
from ..components.text import label, number, number_language, rich_lines, seat_under_superscripts
from ..i18n import localize_number
from ..components.vectors import MATH_PER_TEXT, math
from ..lesson import Chapter
from ..plans.rounding import drawn_misses
from ..plans.walkthrough import MaskedPlan, plan_masked
from ..review import declare_sum
from ..stage import Region, Stage
from .embedding_parts import fit_into
from .grid_parts import axis_titles, dot_legend, query_sums, rows_missing_their_sum, shown_token
from .beyond_parts import sci_math
from .honest import wrapped

T = "walkthrough.masked"


def figure(x: float, spec: str) -> str:
    """A number drawn as a figure: the lesson's language's decimal mark and a real minus sign."""
    return localize_number(format(x, spec), number_language())


def percent(say, w: float) -> str:
    """48%: whole percents (a sentence on screen beside the grid's figures has no decimal mark);
    "under 1%" / "over 99%" where whole percents would round a weight to 0% or 100%."""
    p = 100 * w
    if 0 < p < 0.5:
        return say(f"{T}.percent_under")
    if 99.5 <= p < 100:
        return say(f"{T}.percent_over")
    return say(f"{T}.percent", weight=say.number(p, ".0f"))


def reading_percents(say, r) -> list[str]:
    """The percents a row's reading shows, in order (the rest last, when it is named)."""
    shown = [percent(say, w) for w in r.weights]
    return shown + [percent(say, r.rest)] if r.rest >= 0.0005 else shown


def reading_text(say, plan: MaskedPlan, r) -> str:
    """"while processing 'must': 48% on 'robot', 52% on 'must'" (every key of weight ≥ 0.5%); where the
    whole percents shown miss 100% (14% + 80% + 5%) the sentence says they are rounded (≈ 100%)."""
    tokens = plan.tokens
    parts = [say(f"{T}.share", weight=percent(say, w), word=say.quote(tokens[j])) for j, w in zip(r.keys, r.weights)]
    if r.rest >= 0.0005:
        parts.append(say(f"{T}.share_rest", weight=percent(say, r.rest)))
    key = "reading_rounded" if drawn_misses(reading_percents(say, r), "100%") else "reading"
    return say(f"{T}.{key}", word=say.quote(tokens[r.query]), shares=say.words(parts))


def underflow_line(say, th, tiny: float, width: float, font_size: float = 24) -> VGroup:
    """Where exp runs out in float32, on a line of the exponent x (from −120 to 0): at x = ln(tiny) it gives
    the smallest positive float32; left of it, and on to −10¹⁰ and −∞ (an arrow off the line's end), exactly 0
    (a red band). `.tiny_x`: that x; `.at(x)`: where x is drawn (review 40: the frame said it in four
    paragraphs of text)."""
    lo, hi = -120.0, 0.0
    x_tiny = float(np.log(tiny))
    left, length = 0.7, width - 0.9

    def at(x: float) -> np.ndarray:
        return np.array([left + (x - lo) / (hi - lo) * length, 0.0, 0.0])

    # exp gives exactly 0 only where its value would round below half the smallest float32: from ln(tiny / 2),
    # 0.7 short of the tick (between the two it still gives the smallest float, review 49)
    x_zero = x_tiny - float(np.log(2.0))
    line = Line(at(lo), at(hi), stroke_color=th.dim, stroke_width=2)
    zone = Rectangle(width=at(x_zero)[0] - at(lo)[0], height=0.22, stroke_width=0).set_fill(th.mask, 0.55)
    zone.move_to((at(lo) + at(x_zero)) / 2)
    far = Arrow(at(lo), at(lo) - np.array([left, 0, 0]), buff=0, stroke_width=6, color=th.mask,
                max_tip_length_to_length_ratio=0.35)
    ticks, marks = VGroup(), VGroup()
    for x in (-50.0, 0.0):
        ticks.add(Line(at(x) + UP * 0.08, at(x) + DOWN * 0.08, stroke_color=th.dim, stroke_width=2))
        marks.add(label(figure(x, ".0f"), font_size, th.dim).next_to(at(x), DOWN, buff=0.16))
    # the tick where exp runs out, named over the line (e^(−103.3) = 1.4 × 10⁻⁴⁵) and read under it like the
    # others, in white (review 44: it had no figure); under the marks, below the red, "exp(x) = 0"
    # (it reaches up to its formula, and down no further than the others: to 0.2 it ran into "−103.3", review 46)
    tick = Line(at(x_tiny) + UP * 0.2, at(x_tiny) + DOWN * 0.08, stroke_color=th.text, stroke_width=3)
    marks.add(label(figure(x_tiny, ".1f"), font_size, th.text).next_to(at(x_tiny), DOWN, buff=0.16))
    e = seat_under_superscripts(math(f'e^("{figure(x_tiny, ".1f")}")', font_size * MATH_PER_TEXT, th.text))
    said = rich_lines(say.catalog[f"{T}.tiny_mark"], {}, width, font_size=font_size, color=th.text,
                      mobjects={"e": e, "tiny": sci_math(tiny, say, font_size, th.text)})
    said.next_to(tick, UP, buff=0.15).align_to(far, LEFT)
    zero = math(f'exp(x) = 0 quad (x < "{figure(x_zero, ".1f")}")', font_size * MATH_PER_TEXT, th.mask)
    zero.next_to(marks, DOWN, buff=0.14).align_to(far, LEFT)
    x_name = math("x", font_size * MATH_PER_TEXT, th.dim).next_to(at(hi), RIGHT, buff=0.12)
    out = VGroup(zone, line, far, ticks, marks, tick, said, zero, x_name)
    out.tiny_x, out.zero_x, out.at, out.said, out.tiny_figure, out.zero = x_tiny, x_zero, at, said, marks[-1], zero
    return out


class MaskedRows(Chapter):
    key = "masked_rows"

    def plan(self, setting) -> MaskedPlan:
        return plan_masked(setting)

    def play(self, stage: Stage, plan: MaskedPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn.setdefault(self.key, {})
        full = stage.region("full")
        n = len(plan.tokens)
        head = say.role(plan.role, plan.head.layer, plan.head.head)
        title = label(say(f"{T}.title", head=head), 30, th.text)
        stage.region("title").fit(title)
        notes = [say(f"{T}.orientation")]
        if plan.chosen:
            notes.append(say(f"{T}.chosen", head=say.head_name(plan.head.layer, plan.head.head),
                             role=say(f"common.roles.{plan.chosen}"), share=percent(say, plan.previous_share)))
        # the grid of the head, queries as rows (the paper's layout), on the left two thirds; how it
        # is oriented and how the head was chosen in the panel beside it until the mask comes
        panel = stage.region("panel")
        sub = VGroup(*(wrapped(t, panel.width, 24, th.dim if k == 0 else th.text, 6) for k, t in enumerate(notes)))
        sub.arrange(DOWN, buff=0.35, aligned_edge=LEFT)
        fit_into(sub, panel.width, title.get_bottom()[1] - full.bottom - 0.6)
        sub.move_to([panel.left + sub.width / 2, title.get_bottom()[1] - 0.5 - sub.height / 2, 0])
        area = Region("masked", full.left, panel.left - 0.35, full.bottom + 0.1, title.get_bottom()[1] - 0.15)
        grid, titles = self.grid(stage, plan, area)
        drawn.update(title=title, grid=grid)
        with stage.narrating(say(f"{T}.caption_scores", count=n)):
            stage.play(FadeIn(title), FadeIn(sub), run_time=0.6)
            stage.play(FadeIn(grid), FadeIn(titles), run_time=0.8)
            stage.play(grid.show_scores(run_time=1.2))
            stage.wait(0.8)
        drawn["scores"] = dict(grid.number_mobs)

        # the mask: the future cells get the value our model writes
        pw = panel.width
        ours = VGroup(label(say(f"{T}.ours"), 24, th.text), number(plan.mask_value, "score", 28, th.mask)
                      ).arrange(RIGHT, buff=0.2)
        theirs = VGroup(label(say(f"{T}.gpt2"), 24, th.text), math("-10^10", 34, th.mask)).arrange(RIGHT, buff=0.2)
        values = VGroup(ours, theirs).arrange(DOWN, buff=0.22, aligned_edge=LEFT)
        fit_into(values, pw, 1.2)
        top = grid.lines.get_top()[1]
        values.move_to([panel.left + values.width / 2, top - values.height / 2, 0])
        drawn["mask_value"] = ours[1]
        with stage.narrating(say(f"{T}.caption_mask")):
            stage.play(grid.reveal_mask(run_time=1.6), FadeOut(sub))
            stage.play(FadeIn(values, shift=LEFT * 0.2), run_time=0.8)
            stage.wait(0.6)
        drawn["minus_inf"] = dict(grid.mask_number_mobs)

        # why −1e10 and −∞ give the same weights: notes beside the grid, so their numbers are figures
        # (a decimal point in every language, like the grid's scores)
        r = plan.exp_row
        lines = [say(f"{T}.exp_inf"),
                 say(f"{T}.exp_gpt2", high=figure(plan.row_max, ".1f"), word=say.quote(plan.tokens[r]),
                     term=figure(plan.row_max, "+.1f" if plan.row_max >= 0 else ".1f").join("()" if plan.row_max < 0 else ("", "")).replace("+", ""),
                     result=figure(plan.exp_gpt2, ".1f")),
                 say(f"{T}.same") if plan.same_bits else say(f"{T}.differ")]
        # four short paragraphs need more room than the panel: the grid steps back (smaller, to the
        # left, its numbers still readable) while they are read, and returns for the softmax
        board = VGroup(grid, titles)
        board.save_state()
        shrink = 0.72
        left_edge = board.get_left()[0]
        wide = full.right - (left_edge + board.width * shrink) - 0.5
        diff = float(np.abs(plan.weights_ours - plan.weights_gpt2).max())

        def notes(fs: float) -> VGroup:
            why = VGroup(*(wrapped(t, wide, fs, th.text if k < 2 else th.highlight, 4) for k, t in enumerate(lines)))
            # where float32's exp runs out, drawn: the third of the notes
            why.insert(2, underflow_line(say, th, plan.tiny, wide, fs))
            if not plan.same_bits:
                why[3].add(sci_math(diff, say, fs * 1.25, th.highlight).next_to(why[3], DOWN, buff=0.12)
                           .align_to(why[3], LEFT))
            return why.arrange(DOWN, buff=0.25, aligned_edge=LEFT)

        # a language whose notes need more lines (ko) sets them smaller and wraps them again at the
        # panel's width, rather than shrinking the whole panel into a narrow column (review 44)
        room = values.get_bottom()[1] - stage.floor() - 0.4
        for fs in (24, 23, 22, 21, 20):
            why = notes(fs)
            if why.height <= room:
                break
        x_why = full.right - wide
        fit_into(why, wide, room)
        why.next_to(values, DOWN, buff=0.4)
        why.shift(RIGHT * (x_why - why.get_left()[0]))
        values_home = values.get_center()
        drawn["why"] = why
        with stage.narrating(say(f"{T}.caption_same")):
            stage.play(board.animate.scale(shrink, about_point=[left_edge, board.get_top()[1], 0]),
                       values.animate.shift(RIGHT * (x_why - values.get_left()[0])), run_time=0.8)
            for part in why:
                stage.play(FadeIn(part, shift=UP * 0.1), run_time=0.6)
            stage.wait(1.0)
        # the grid comes back before anything is placed on its cells again
        stage.play(FadeOut(why), Restore(board), values.animate.move_to(values_home), run_time=0.6)
        stage.remove(board)
        stage.add(grid, titles)  # on stage on their own again, as before

        # softmax of every row: the weights (two decimals), the masked cells exactly 0, Σ of each row 1
        fs = grid.number_font or 24
        zeros = VGroup()
        for c in grid.masked_cells:
            z = label("0", fs, th.mask).move_to(grid.cell_center(*c))
            z.value, z.shown, z.index = 0.0, "0", tuple(c)
            zeros.add(z)
        sums = query_sums(stage, grid)
        # a row whose Σ reads "≈1.00" is explained on the frame from the moment it shows, at the panel's foot
        # (review 50: only the one row's reading said why; the last caption's "every row sums to 1" beside it)
        why = VGroup()
        if sums.missed:
            why = wrapped(say("common.rounding.rows"), pw, 23, th.dim, 4)  # (at 20, fitted into 1.2: 15 px, review 51)
            fit_into(why, pw, 1.7)
            why.move_to([panel.left + why.width / 2, stage.floor() + 0.1 + why.height / 2, 0])
        with stage.narrating(say(f"{T}.caption_softmax")):
            stage.play(grid.show_weights(run_time=1.4), grid.clear_mask(run_time=1.4), FadeIn(zeros))
            stage.play(FadeIn(sums), FadeIn(why), run_time=0.8)
            stage.wait(0.6)
        drawn.update(weights=dict(grid.number_mobs), zeros=list(zeros), sums=sums.numbers, sums_group=sums,
                     rounding_note=why)

        # every row read out (above the note, if there is one)
        box = None
        readings = VGroup()
        room_top = values.get_bottom()[1] - 0.45
        for reading in plan.readings:
            i = reading.query
            ll, ur = grid.column_region(i)  # the query's row in the paper layout
            left, right = ll[0] - 0.04, sums.numbers[i].get_right()[0] + 0.14  # the row and its Σ ("≈" and all)
            frame = Rectangle(width=right - left, height=ur[1] - ll[1], color=th.highlight, stroke_width=3)
            frame.move_to([(left + right) / 2, (ll[1] + ur[1]) / 2, 0])
            text = reading_text(say, plan, reading)
            line = wrapped(text, pw, 26, th.text, 5)
            fit_into(line, pw, room_top - (why.get_top()[1] + 0.1 if len(why) else stage.floor()) - 0.2)
            line.move_to([panel.left + line.width / 2, room_top - line.height / 2, 0])
            readings.add(line)
            # the percents add up to 100% as drawn, or the sentence says ≈ (the lint checks it)
            declare_sum(line, reading_percents(say, reading), "100%", [line] if "≈" in text else [],
                        name="reading")
            with stage.narrating(text):
                anims = [FadeIn(line, shift=UP * 0.1)]
                anims.append(FadeIn(frame) if box is None else box.animate.become(frame))
                if len(readings) > 1:
                    anims.append(FadeOut(readings[-2]))
                stage.play(*anims, run_time=0.6)
                box = box or frame
                stage.wait(0.8)
        drawn["readings"] = readings

        # the end: the weights as the grid of dots, the blocked cells outlined and empty, every Σ 1
        with stage.narrating(say(f"{T}.caption_end")):
            stage.play(FadeOut(box), FadeOut(readings[-1]), run_time=0.5)
            grid.set_mask("outlined")
            # what a dot's size means, in the panel's lower corner, clear of what is on screen
            panel = stage.region("panel")
            low = max(stage.floor(), full.bottom + 0.1)  # above the corner key to ␣ (review 39: it hid the key)
            if len(why):  # and above the rounding note, a clear gap apart (at 0.15 the two read as one block)
                low = why.get_top()[1] + 0.45
            legend = dot_legend(stage, grid, [m for m in stage.mobjects if m is not grid and m is not zeros],
                                corners=[([panel.right, low, 0], DOWN + RIGHT), ([panel.left, low, 0], DOWN + LEFT)])
            drawn["legend"] = legend
            stage.play(grid.show_dots(run_time=1.4), FadeOut(zeros), FadeIn(legend), run_time=1.4)
            stage.play(Indicate(sums, color=th.highlight, scale_factor=1.1), run_time=0.8)
            stage.wait(0.8)

    @staticmethod
    def grid(stage: Stage, plan: MaskedPlan, area: Region):
        """The head's grid (scores, mask, weights of the trace) filling `area` with its axis titles."""
        # room for the Σ column (wider by a "≈" where a row's drawn weights miss its Σ) and the axis titles
        sigma = 1.3 if rows_missing_their_sum(plan.weights, plan.mask) else 0.9
        w, h = area.width - sigma - 0.1, area.height - 0.5
        for _ in range(3):
            grid = AttentionGrid((plan.scores, plan.weights, plan.mask), [shown_token(stage.say, t) for t in plan.tokens],
                                 layout="paper",
                                 theme=stage.theme, max_width=w, max_height=h, max_cell=1.3)
            grid.use_common_number_font()
            titles = axis_titles(grid, stage)
            both = VGroup(grid, titles)
            over_w, over_h = both.width + sigma - area.width, both.height - area.height
            if over_w <= 1e-3 and over_h <= 1e-3:
                break
            w -= max(over_w, 0.0) + 0.02
            h -= max(over_h, 0.0) + 0.02
        both = VGroup(grid, titles)
        shift = area.center - both.get_center() + LEFT * sigma / 2
        grid.shift(shift)
        titles.shift(shift)
        return grid, titles
