"""Softmax: a few queries one at a time lift out of the grid, their real scores turn into real
weights that visibly sum to 1 and go back; then every query at once, the sums, and the grid
becomes the attention pattern (dots sized by weight).

Goes on with the grid the dot-products chapter left (its scores stay where they are)."""

from __future__ import annotations

from manim import DOWN, RIGHT, Create, FadeIn, FadeOut, Rectangle, Restore, Write

from ..components.vectors import math
from ..lesson import Chapter
from ..plans.grid import SoftmaxPlan, plan_softmax
from ..stage import Region, Stage
from .grid_parts import dot_legend, ensure_grid, query_sums, softmax_strip
from .honest import honest_note


class Softmax(Chapter):
    key = "softmax"
    continues = ("grid",)

    def plan(self, setting) -> SoftmaxPlan:
        return plan_softmax(setting)

    def play(self, stage: Stage, plan: SoftmaxPlan) -> None:
        say, th = stage.say, stage.theme
        tokens, layout = plan.tokens, plan.layout
        grid, _ = ensure_grid(stage, plan.head_trace, tokens, layout, "scores", "cleared")
        drawn = stage.drawn[self.key] = {"grid": grid, "scores": dict(grid.number_mobs), "strips": []}

        panel = stage.region("panel")
        formula = math("w_j = e^(s_j) / (sum_k e^(s_k))", 34, th.text)
        formula.move_to([panel.center[0], panel.top - 0.75, 0])
        with stage.narrating(say("grid.softmax.intro")):
            stage.play(Write(formula), run_time=1.2)
            stage.wait(0.5)

        readable = grid.content_kind in ("scores", "columns")
        # each column's Σ comes in with its weights: the weights as drawn may make 0.99 or 1.01, and the
        # Σ row (its "≈") says so while they are on screen
        sums = query_sums(stage, grid)
        summed = readable and len(sums.numbers) == plan.n
        shown_sums: list = []
        if summed:  # in the scene from the start, unseen: each part shows as its column settles
            stage.add(sums.set_opacity(0.0))
        tints: list = []
        drawn["tints"] = tints
        for k, (q, visible) in enumerate(zip(plan.columns, plan.visible)):
            sm = softmax_strip(stage, grid, q, top=formula.get_bottom()[1] - 0.1, visible_only=True)
            drawn["strips"].append(sm)
            first = k == 0
            if first:
                caption = say(f"grid.softmax.take_{layout}", query=say.quote(tokens[q]), count=visible)
            else:
                caption = say("grid.softmax.same", query=say.quote(tokens[q]))
            # (no camera move: a close-up of the column beside its strip came to the whole frame, since the grid
            # fills its region; it only moved the grid 17 px up and back, review 51)
            with stage.narrating(caption):
                stage.play(sm.lift(), *([grid.show_columns({q: "none"}, run_time=0.6)] if readable else []))
                stage.play(sm.normalize(run_time=1.6 if first else 1.2))
                stage.wait(0.6 if first else 0.3)
            marks = None
            if first:  # the caption names one weight and the sum: both framed while it is said
                marks = drawn["marks"] = sm.marks(plan.first_top)
                with stage.narrating(say("grid.softmax.real", key_word=say.quote(tokens[plan.first_top]),
                                         weight=plan.first_top_weight, total=plan.first_sum, count=visible)):
                    stage.play(Create(marks), run_time=1.0)
            arriving = ([sums.numbers[q]] + ([] if shown_sums else [sums[0]])) if summed else []
            shown_sums += arriving
            # a column of weights is tinted while others still hold scores: 0.48 among +3.76 and −1.12, in one
            # face and colour, read as one more score (review 48)
            tint = weights_tint(grid, q, th.query) if readable else None
            if tint is not None:
                tints.append(tint)
                stage.add(tint)
                stage.scene.bring_to_back(tint)
            stage.play(sm.settle(), *([grid.show_columns({q: "weights"}, run_time=0.8)] if readable else []),
                       *([tint.animate.set_fill(opacity=TINT)] if tint is not None else []),
                       *(m.animate.set_opacity(1.0) for m in arriving),
                       *([FadeOut(marks)] if marks is not None else []))

        with stage.narrating(say(f"grid.softmax.all_{layout}")):
            if readable:
                rest = [m for m in [sums[0], *sums.numbers] if m not in shown_sums] if summed else []
                # every column holds weights now: no tint is needed to tell them apart
                stage.play(grid.show_columns({q: "weights" for q in range(plan.n)}, run_time=1.5),
                           *(m.animate.set_opacity(1.0) for m in rest), *(FadeOut(t) for t in tints))
            else:
                stage.play(grid.show_dots(run_time=1.5))
            stage.wait(0.3)
        drawn["weights"] = dict(grid.number_mobs)
        drawn["sums"] = sums.numbers
        drawn["sums_group"] = sums
        with stage.narrating(say(f"grid.softmax.sums_{layout}")):
            lit = summed
            if summed:  # the Σ row lit while the caption says every column sums to 1 (a frame round it met the
                # frame's foot under SmolLM2's grid in pt)
                sums.save_state()
                stage.play(sums.animate.set_color(th.query), FadeOut(formula), run_time=1.0)
            else:
                stage.play(FadeIn(sums, lag_ratio=0.05), FadeOut(formula), run_time=1.0)
            stage.wait(0.6)
        # what a dot's size means, in the panel's lower corner (the masked half is named by the masking
        # chapter, which follows this one in the flagship)
        panel, full = stage.region("panel"), stage.region("full")
        legend = dot_legend(stage, grid, [sums, stage.grid_titles], corners=[([panel.right, full.bottom + 0.1, 0],
                                                                               DOWN + RIGHT)])
        drawn.update(legend=legend)
        with stage.narrating(say("grid.softmax.pattern")):
            stage.play(grid.show_dots(run_time=2.0), FadeIn(legend), *([Restore(sums)] if lit else []))
            stage.wait(0.8)
        stage.attach(grid, sums, legend)  # the next chapter's card keeps the sums and the key to the dots
        above = Region("honest", panel.left, panel.right, min(legend.get_top()[1] + 0.2, panel.top - 1.0), panel.top)
        honest_note(stage, self.key, plan.honesty, tokens, above, max_lines=12)


TINT = 0.2  # the fill of a column of weights among columns of scores


def weights_tint(grid, q: int, color: str):
    """A faint fill over query q's cells, unseen until played in (its opacity to TINT)."""
    ll, ur = grid.column_region(q)
    return Rectangle(width=ur[0] - ll[0], height=ur[1] - ll[1], stroke_width=0).move_to((ll + ur) / 2).set_fill(
        color, opacity=0.0)

