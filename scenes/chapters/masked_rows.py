"""`masked_self_attention`: the score matrix with queries as rows (the paper's and the Illustrated
GPT-2's orientation), the future cells set to the value our model writes (−∞) next to GPT-2's −1e9
(the same weights: exp underflows to exactly 0 in float32), the softmax of every row, and every
row read out in words with the model's real percentages."""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, Indicate, SurroundingRectangle, VGroup

from ..components.number_table import NumberTable
from ..components.text import label, number
from ..components.vectors import math
from ..lesson import Chapter
from ..plans.walkthrough import MaskedPlan, plan_masked
from ..stage import Stage
from .embedding_parts import fit_into
from .honest import wrapped

T = "walkthrough.masked"


def scientific(say, x: float, font_size: float, color: str):
    """1.4 × 10⁻⁴⁵ as math (real superscripts in every language; the language's decimal mark)."""
    if x == 0:
        return math("0", font_size, color)
    mant, exp = f"{x:.1e}".split("e")
    return math(f'"{say.number(float(mant), ".1f")}" times 10^({int(exp)})', font_size, color)


def percent(say, w: float) -> str:
    """48%; one decimal where whole percents would hide something (99.9%, 0.4%)."""
    p = 100 * w
    return say(f"{T}.percent", weight=say.number(p, ".0f" if 1 <= p <= 99 or p == 100 else ".1f"))


def reading_text(say, plan: MaskedPlan, r) -> str:
    """"while processing 'must': 48% on 'robot', 52% on 'must'" (every key of weight ≥ 0.5%)."""
    tokens = plan.tokens
    parts = [say(f"{T}.share", weight=percent(say, w), word=say.quote(tokens[j])) for j, w in zip(r.keys, r.weights)]
    if r.rest >= 0.0005:
        parts.append(say(f"{T}.share_rest", weight=say.number(100 * r.rest, ".1f")))
    return say(f"{T}.reading", word=say.quote(tokens[r.query]), shares=say.words(parts))


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
        orient = label(say(f"{T}.orientation"), 20, th.dim)
        fit_into(orient, full.width, 0.4)
        orient.next_to(title, DOWN, buff=0.12)

        def score_color(i, j, v):
            return th.dim if plan.mask[i, j] else th.text

        table = NumberTable(plan.scores, kind="score", color=score_color, row_labels=plan.tokens,
                            col_labels=plan.tokens, font_size=30, theme=th, row_label_color=th.query,
                            col_label_color=th.key, row_height=0.85 if n <= 6 else 0.6)
        left_w = full.width * (0.55 if n <= 5 else 0.64)
        top = orient.get_bottom()[1] - 0.35
        # room for the Σ column at its right; centred in the height left under the title
        table.scale(min((left_w - 2.0) / table.width, (top - full.bottom - 1.6) / table.height, 1.6))
        table.move_to([full.left + 0.3 + table.width / 2, (top - 0.2 + full.bottom + 0.6) / 2, 0])
        q_note = label(say(f"{T}.rows_are"), 18, th.query)
        k_note = label(say(f"{T}.cols_are"), 18, th.key)
        k_note.next_to(table.header_row(), UP, buff=0.12)
        q_note.next_to(table, DOWN, buff=0.15).align_to(table, LEFT)
        drawn.update(title=title, table=table)
        with stage.narrating(say(f"{T}.caption_scores", count=n)):
            stage.play(FadeIn(title), FadeIn(orient), run_time=0.6)
            stage.play(FadeIn(table), FadeIn(q_note), FadeIn(k_note), run_time=1.2)
            stage.wait(0.8)

        # the mask: the future cells get the value our model writes
        panel_left = full.left + left_w + 0.2
        pw = full.right - panel_left
        blocked = [(i, j) for i in range(n) for j in range(n) if plan.mask[i, j]]
        ours = VGroup(label(say(f"{T}.ours"), 22, th.text), number(plan.mask_value, "score", 26, th.mask)
                      ).arrange(RIGHT, buff=0.2)
        theirs = VGroup(label(say(f"{T}.gpt2"), 22, th.text), math("-10^9", 26, th.mask)).arrange(RIGHT, buff=0.2)
        values = VGroup(ours, theirs).arrange(DOWN, buff=0.2, aligned_edge=LEFT)
        fit_into(values, pw, 1.2)
        values.move_to([panel_left + values.width / 2, table.get_top()[1] - values.height / 2, 0])
        drawn["mask_value"] = ours[1]
        with stage.narrating(say(f"{T}.caption_mask")):
            stage.play(*(table.swap(i, j, plan.mask_value, "score", th.mask) for i, j in blocked), run_time=1.2)
            stage.play(FadeIn(values, shift=LEFT * 0.2), run_time=0.8)
            stage.wait(0.6)

        # why −1e9 and −∞ give the same weights
        r = plan.exp_row
        lines = [say(f"{T}.exp_inf"),
                 say(f"{T}.exp_gpt2", high=say.number(plan.row_max, ".1f"), word=say.quote(plan.tokens[r]),
                     term=say.number(plan.row_max, "+.1f" if plan.row_max >= 0 else ".1f").join("()" if plan.row_max < 0 else ("", "")).replace("+", ""),
                     result=say.number(plan.exp_gpt2, ".1f")),
                 say(f"{T}.tiny"),
                 say(f"{T}.same") if plan.same_bits else say(f"{T}.differ")]
        why = VGroup(*(wrapped(t, pw, 20, th.text if k < 3 else th.highlight, 3) for k, t in enumerate(lines)))
        diff = float(np.abs(plan.weights_ours - plan.weights_gpt2).max())
        why[2].add(scientific(say, plan.tiny, 30, th.text).next_to(why[2], DOWN, buff=0.12).align_to(why[2], LEFT))
        if not plan.same_bits:
            why[3].add(scientific(say, diff, 30, th.highlight).next_to(why[3], DOWN, buff=0.12).align_to(why[3], LEFT))
        why.arrange(DOWN, buff=0.18, aligned_edge=LEFT)
        fit_into(why, pw, values.get_bottom()[1] - full.bottom - 1.2)
        why.next_to(values, DOWN, buff=0.3).align_to(values, LEFT)
        drawn["why"] = why
        with stage.narrating(say(f"{T}.caption_same")):
            for part in why:
                stage.play(FadeIn(part, shift=UP * 0.1), run_time=0.6)
            stage.wait(1.0)

        # softmax of every row: the weights, the masked cells exactly 0, each row summing to 1
        with stage.narrating(say(f"{T}.caption_softmax")):
            stage.play(FadeOut(why), run_time=0.4)
            stage.play(*(table.swap(i, j, plan.weights[i, j], "zero" if plan.mask[i, j] else "weight",
                                    th.mask if plan.mask[i, j] else th.text)
                         for i in range(n) for j in range(n)), run_time=1.5)
            sums = VGroup(*(table.number_like(s, "weight", th.highlight) for s in plan.row_sums))
            for i, s in enumerate(sums):
                s.move_to([table.right_of_rows(0.55) + s.width / 2, table.row_labels[i].get_y(), 0])
            sigma = math("sum", 22, th.highlight)
            sigma.scale_to_fit_height(sums[0].height * 1.8).next_to(sums, UP, buff=0.2)
            sigma.match_y(table.header_row())
            stage.play(FadeIn(sums), FadeIn(sigma), run_time=0.8)
            stage.wait(0.6)
        drawn["sums"] = sums

        # every row read out
        box = None
        readings = VGroup()
        room_top = values.get_bottom()[1] - 0.3
        for reading in plan.readings:
            i = reading.query
            row = VGroup(table.row_labels[i], table.row(i), sums[i])
            frame = SurroundingRectangle(row, buff=0.08, color=th.highlight, stroke_width=2)
            text = reading_text(say, plan, reading)
            line = wrapped(text, pw, 24, th.text, 4)
            line.move_to([panel_left + line.width / 2, room_top - line.height / 2, 0])
            readings.add(line)
            with stage.narrating(text):
                anims = [FadeIn(line, shift=UP * 0.1)]
                anims.append(FadeIn(frame) if box is None else box.animate.become(frame))
                if len(readings) > 1:
                    anims.append(FadeOut(readings[-2]))
                stage.play(*anims, run_time=0.6)
                box = box or frame
                stage.wait(0.8)
        drawn["readings"] = readings
        with stage.narrating(say(f"{T}.caption_end")):
            stage.play(FadeOut(box), FadeOut(readings[-1]), run_time=0.5)
            if blocked:
                stage.play(*(Indicate(table.cell(i, j), color=th.mask, scale_factor=1.3) for i, j in blocked),
                           Indicate(sums, color=th.highlight, scale_factor=1.15), run_time=1.0)
            stage.wait(0.8)
