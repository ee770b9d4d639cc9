"""`attention_as_lookup`: attention as a soft dictionary. The words the focus may see are the
entries of a lookup table (each word's key → its value, the head's real vectors); a hard lookup
puts weight 1 on the best-matching key and returns exactly its value; the real head compares the
query with every key and its softmax weights blend all the values. Both results, and how far apart
they are."""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, SurroundingRectangle, UpdateFromAlphaFunc, VectorizedPoint, VGroup

from ..components.text import baseline_row, label, number
from ..components.vectors import VectorColumn, ellipsis_dots, math
from ..lesson import Chapter
from ..plans.rounding import drawn_misses
from ..plans.walkthrough import LookupPlan, plan_lookup
from ..review import declare_sum
from ..stage import Stage
from .embedding_parts import fit_into
from .multi_head import table

T = "walkthrough.lookup"
SHOWN = (3, 1)  # entries of a key or value shown: the first three and the last
RESULT = (6, 1)


def digits(values) -> str:
    """The number kind for these entries: one decimal, or two where they are all below 1 (a real
    model's normed vectors would read as rows of 0.0)."""
    return "vec" if float(np.abs(np.asarray(values, float)).max(initial=0.0)) >= 1 else "signed2"


def shown_digits(values, head: int, tail: int) -> str:
    """`digits` of the entries a column shows (its first `head` and last `tail`): a normed vector with one
    large entry among those left out read as "0.0, −0.1, 0.0" (review 35, beside the big query it makes)."""
    v = np.asarray(values, float).ravel()
    return digits(np.concatenate([v[:head], v[len(v) - tail:] if tail else v[:0]]) if len(v) > head + tail else v)


def hvec(values, th, color, fs=20, head=SHOWN[0], tail=SHOWN[1], kind: str | None = None) -> VectorColumn:
    return VectorColumn(values, head=head, tail=tail, font_size=fs, theme=th, horizontal=True, bracket_color=color,
                        kind=kind or digits(values))


def weight_opacity(weight: float, weights) -> float:
    """How bright a value is drawn by its weight, against the largest weight of its query: the heaviest
    value at full brightness (SmolLM2's "A", weight 0.56, was drawn at 0.56 of its faint colours), the
    smallest no fainter than 0.15."""
    top = max((float(w) for w in weights), default=1.0) or 1.0
    return max(0.15, min(1.0, float(weight) / top))


def dim(cells, opacity: float) -> list:
    """Animations that dim a table row (vectors by their own rule: brackets stay thin lines)."""
    return [c.animate.fade_to(opacity) if isinstance(c, VectorColumn) else c.animate.set_fill(opacity=opacity)
            for c in cells]


def shown(cells) -> list:
    """A row's cells on screen before the soft weights come in (the fifth cell)."""
    return [c for k, c in enumerate(cells) if k != 4]


class Lookup(Chapter):
    key = "lookup"

    def plan(self, setting) -> LookupPlan:
        return plan_lookup(setting)

    def play(self, stage: Stage, plan: LookupPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn.setdefault(self.key, {})
        full = stage.region("full")
        toks = plan.tokens
        word = say.quote(toks[plan.focus])
        title = label(say(f"{T}.title", head=say.role(plan.role, plan.head.layer, plan.head.head)), 30, th.text)
        stage.region("title").fit(title)

        fs = 20
        heads = [label(say(f"{T}.col_word"), 18, th.dim), label(say(f"{T}.col_key"), 18, th.key),
                 math("q dot k \\/ sqrt(d_k)", 24, th.dim), label(say(f"{T}.col_hard"), 18, th.dim),
                 label(say(f"{T}.col_soft"), 18, th.dim), label(say(f"{T}.col_value"), 18, th.value)]
        rows, by_token = [heads], {}
        for j in plan.slots:
            if j is None:
                rows.append([ellipsis_dots(DOWN, color=th.dim)] + [VGroup() for _ in range(5)])
                continue
            cells = [label(toks[j], 22, th.query if j == plan.focus else th.text), hvec(plan.keys[j], th, th.key, fs, kind=digits(plan.keys)),
                     number(plan.scores[j], plan.score_kind, fs, th.text), number(plan.hard[j], "weight", fs, th.text),
                     number(plan.soft[j], "weight", fs, th.text), hvec(plan.values[j], th, th.value, fs, kind=digits(plan.values))]
            rows.append(cells)
            by_token[j] = cells
        sum_row = None
        if None not in plan.slots:  # every key the focus sees is listed: each weight column shows its Σ
            seen = list(by_token)
            soft_sum = number(float(plan.soft[seen].sum()), "weight", fs, th.text)
            # the drawn soft weights may make 0.99 or 1.01: then the Σ reads "≈"
            approx = drawn_misses([by_token[j][4].shown for j in seen], soft_sum.shown)
            soft_cell = (baseline_row([label(say("common.rounding.mark"), fs, th.dim), soft_sum], buff=0.06)
                         if approx else VGroup(soft_sum))
            hard_sum = number(float(plan.hard[seen].sum()), "weight", fs, th.text)
            sum_row = [VGroup(), VGroup(), label("Σ", 22, th.dim), hard_sum, soft_cell, VGroup()]
            rows.append(sum_row)
            drawn["soft_sum"] = soft_cell
        grid = table(rows, gap=0.35, row_gap=0.06)
        sigma_block = None
        if sum_row is not None:  # the Σ with the hard sum, one group in the scene: its Σ reads as part of the sums
            sigma_block = VGroup(sum_row[2], sum_row[3])
            declare_sum(sigma_block, [by_token[j][4] for j in seen], soft_sum, [soft_cell[0]] if approx else [],
                        name="soft weights")
            declare_sum(sigma_block, [by_token[j][3] for j in seen], hard_sum, name="hard weights")
        qvec = hvec(plan.query, th, th.query, fs)
        # what the header's √d_k stands for, once, by the vector it is the length of (review 39)
        qline = VGroup(label(say(f"{T}.query", word=word), 22, th.query), qvec,
                       math(f"d_k = {plan.d_head}", 24, th.dim)).arrange(RIGHT, buff=0.25)
        # the dictionary as code writes it: {k₁: v₁, k₂: v₂, …}
        literal = math(r"\{ arrow(k)_1 : arrow(v)_1, space arrow(k)_2 : arrow(v)_2, space dots \}", 26, th.dim)
        body = VGroup(qline, grid).arrange(DOWN, buff=0.35, aligned_edge=LEFT)
        literal.next_to(grid, UP, buff=0.35).align_to(grid, RIGHT)
        body.add(literal)
        # what the colours and the fading mean, under the table
        # the colours on one line, on one baseline; what the fading means under them (review 39: in pt the
        # four ran edge to edge)
        legend = VGroup(*baseline_row([label(say(f"{T}.legend_{k}"), 20, c) for k, c in
                                       (("query", th.query), ("key", th.key), ("value", th.value))], buff=0.45),
                        label(say(f"{T}.legend_faint"), 20, th.dim))
        legend[3].next_to(legend[:3], DOWN, buff=0.15)
        out, res, dist, hard, soft, names = self.results(stage, plan)
        top = title.get_bottom()[1] - 0.25
        room = top - full.bottom - 0.1
        fit_into(legend, full.width, 0.8)  # its height as drawn counts in the room the table gets
        s = min(full.width / body.width, (room - 0.3 - legend.height - 0.35 - out.height) / body.height, 1.9)
        body.scale(s)
        body.move_to([0, top - body.height / 2, 0])
        fit_into(legend, full.width, 0.8)
        legend.next_to(body, DOWN, buff=0.3)
        fit_into(out, full.width, legend.get_bottom()[1] - full.bottom - 0.3)
        out.move_to([0, (legend.get_bottom()[1] + full.bottom) / 2, 0])
        drawn["legend"] = legend
        drawn.update(title=title, rows=by_token, query=qvec, d_k=qline[2])
        # until the results come, the table stands in the middle of the room they will share (review 39: the
        # lower half of the first frames was empty); it rises to its place as they come in
        table_part = VGroup(body, legend)
        lift = table_part.get_y() - (top + full.bottom) / 2
        table_part.shift(DOWN * lift)
        def col(c):
            """Column c with its heading; the Σ row's cells come with the weight columns (Σ with the first)."""
            cells = [r[c] for r in rows[1:] if r is not sum_row] + [rows[0][c]]
            if sum_row is not None and c in (3, 4):
                cells += [sigma_block] if c == 3 else [sum_row[4]]
            return VGroup(*cells)

        with stage.narrating(say(f"{T}.caption_dict", count=len(by_token))):
            stage.play(FadeIn(title), run_time=0.5)
            stage.play(FadeIn(literal), FadeIn(col(0)), FadeIn(col(1)), FadeIn(col(5)), FadeIn(legend[1:3]),
                       run_time=1.2)
            stage.wait(0.8)
        with stage.narrating(say(f"{T}.caption_query", word=word, dk=plan.d_head)):
            stage.play(FadeIn(qline, shift=DOWN * 0.1), FadeIn(legend[0]), run_time=0.8)
            stage.play(FadeIn(col(2)), run_time=0.8)
            stage.wait(0.5)

        best = by_token[plan.best]
        frame = SurroundingRectangle(VGroup(*best), buff=0.08, color=th.highlight, stroke_width=2)
        with stage.narrating(say(f"{T}.caption_hard", best=say.quote(toks[plan.best]))):
            tie = []
            if plan.tie:  # equal scores as printed: the first of them is taken, and the frame says so
                tie = [label(say(f"{T}.tie"), 20, th.highlight).next_to(frame, DOWN, buff=0.08).align_to(frame, RIGHT)]
            stage.play(FadeIn(col(3)), FadeIn(frame), *(FadeIn(m) for m in tie), run_time=1.0)
            stage.play(*(a for j, cells in by_token.items() if j != plan.best for a in dim(shown(cells), 0.3)),
                       run_time=0.8)
            stage.wait(0.6)
        with stage.narrating(say(f"{T}.caption_soft", word=word)):
            stage.play(FadeOut(frame), *(FadeOut(m) for m in tie), *(a for j, cells in by_token.items() if j != plan.best
                                         for a in dim(shown(cells), 1.0)), run_time=0.6)
            stage.play(FadeIn(col(4)), *(cells[5].animate.fade_to(weight_opacity(plan.soft[j], plan.soft))
                                         for j, cells in by_token.items()), FadeIn(legend[3]), run_time=1.2)
            stage.wait(0.6)

        drawn.update(hard=hard, soft=soft, distance=dist[1], distance_line=dist)
        key = f"{T}.caption_results_close" if plan.best_weight >= 0.9 else f"{T}.caption_results"
        with stage.narrating(say(key, distance=say.number(plan.distance, ".2f"), weight=plan.best_weight,
                                 best=say.quote(toks[plan.best]))):
            # shifted in place, driven by a point the scene holds instead (the table's parts are already on
            # stage, in groups whose Σ declares its sum: a new group around them holds a Σ the lint cannot place)
            risen = [0.0]

            def rise(_, alpha):
                table_part.shift(UP * (lift * alpha - risen[0]))
                risen[0] = lift * alpha
            stage.play(UpdateFromAlphaFunc(VectorizedPoint(), rise), run_time=0.8)
            stage.play(FadeIn(res, shift=UP * 0.1), run_time=1.0)
            stage.play(FadeIn(dist), run_time=0.6)
            stage.wait(1.2)

    @staticmethod
    def results(stage: Stage, plan: LookupPlan):
        """The hard and the soft result side by side with their names, and the distance between them."""
        th, say, toks = stage.theme, stage.say, plan.tokens
        fr = 24
        kind = digits(plan.values)
        hard = VectorColumn(plan.hard_result, head=RESULT[0], tail=RESULT[1], font_size=fr, theme=th, horizontal=True,
                            kind=kind, bracket_color=th.value)
        soft = VectorColumn(plan.soft_result, head=RESULT[0], tail=RESULT[1], font_size=fr, theme=th, kind=kind,
                            horizontal=True, bracket_color=th.value)
        names = [label(say(f"{T}.result_hard", best=say.quote(toks[plan.best])), fr, th.text),
                 label(say(f"{T}.result_soft"), fr, th.text)]
        res = table([[names[0], hard], [names[1], soft]], gap=0.35, row_gap=0.18, first_left=True)
        soft.align_to(hard, LEFT)  # the two results start at one edge, to be compared entry by entry
        dist = baseline_row([label(say(f"{T}.distance"), fr, th.highlight), number(plan.distance, "weight", fr, th.highlight),
                             label(say(f"{T}.norm", norm=say.number(plan.hard_norm, ".2f")), fr, th.dim)], buff=0.2)
        out = VGroup(res, dist).arrange(DOWN, buff=0.25, aligned_edge=LEFT)
        return out, res, dist, hard, soft, names
