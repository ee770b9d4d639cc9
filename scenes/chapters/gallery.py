"""`components`: every reusable piece on real numbers from the model, one short chapter each. A
look-book for the visual language: word boxes, vectors and a speech bubble; a weight matrix times
a vector; the attention grid with a softmax column; context arcs; the formula; the 3-D space; the
bar chart of next words."""

from __future__ import annotations

import numpy as np
from manim import DEGREES, DOWN, LEFT, RIGHT, UP, FadeIn, FadeOut, Indicate, ReplacementTransform, Write

from ..components.attention_grid import AttentionGrid
from ..components.bars import ProbabilityBars
from ..components.bubble import SpeechBubble
from ..components.color_scale import ColorScale
from ..components.context_arcs import ContextArcs
from ..components.formula import AttentionFormula
from ..components.matrices import MatVecProduct, WeightMatrix
from ..components.softmax_column import SoftmaxColumn
from ..components.space3d import EmbeddingSpace
from ..components.text import label
from ..components.vectors import VectorColumn, symbol_source
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter
from ..plans.gallery import GalleryPlan, plan_gallery
from ..plans.qkv import line_keys
from ..stage import Stage
from .embedding_parts import clearest_turn, direction_name, fit_into
from .grid_parts import axis_titles, dot_legend, masked_note, query_sums
from .honest import wrapped
from .lookup import shown_digits


class Beat(Chapter):
    """One piece of the gallery: a title in the corner, the piece on real numbers, then a clean stage."""

    beat = ""  # its table in gallery.toml

    @property
    def key(self) -> str:
        return f"gallery_{self.beat}"

    def plan(self, setting) -> GalleryPlan:
        return plan_gallery(setting)

    def say(self, stage: Stage, name: str, **params) -> str:
        return stage.say(f"gallery.{self.beat}.{name}", **params)

    def title(self, stage: Stage):
        t = label(self.say(stage, "title"), font_size=28, color=stage.theme.dim)
        return fit_into(t, stage.region("title").width, 0.6).to_corner(UP + LEFT, buff=0.3)


class WordsAndVector(Beat):
    beat = "words"

    def play(self, stage: Stage, plan: GalleryPlan) -> None:
        th = stage.theme
        i = plan.focus
        stage.clear()
        boxes = WordBoxes(plan.tokens, theme=th, font_size=30, max_width=12.5).move_to(UP * 1.1)
        col = VectorColumn(plan.embedding, theme=th, brace=True, font_size=22, symbol=symbol_source("E", plan.position),
                           show_symbol=True, brace_text=stage.say("embeddings.tokens.brace", count=len(plan.embedding)))
        col.next_to(boxes, DOWN, buff=0.35)
        col.shift(RIGHT * (boxes.box(i).get_x() - col.brackets.get_x()))
        # the bubble above the word, leaning toward the side with more room
        lean = RIGHT if boxes.box(i).get_x() < 0 else LEFT
        # the question this head's query asks (its role's line; a real head's neutral one): "Any
        # adjectives in front of me?" over a head that looks mostly at the first token was the toy's story
        bubble = SpeechBubble(stage.say(line_keys(plan.head_trace.role)[0]), target=boxes.box(i), direction=UP + lean,
                              theme=th, font_size=26)
        stage.drawn[self.key] = {"boxes": boxes, "column": col, "bubble": bubble}
        with stage.narrating(self.say(stage, "caption_boxes")):
            stage.play(FadeIn(self.title(stage)), FadeIn(boxes, lag_ratio=0.1), run_time=1)
            stage.play(boxes.animate.highlight(i, th.query).dim_others(i), run_time=0.6)
            stage.wait(0.3)
        with stage.narrating(self.say(stage, "caption_vector", count=len(plan.embedding))):
            stage.play(FadeIn(col, shift=DOWN * 0.3), run_time=0.8)
            stage.wait(1.0)
        # two captions: the storyboard's frame at the end of each shows the column folded, then unfolded
        with stage.narrating(self.say(stage, "caption_fold")):
            stage.play(col.collapse(run_time=0.8))
            stage.wait(0.6)
        with stage.narrating(self.say(stage, "caption_unfold")):
            stage.play(col.expand(run_time=0.8))
            stage.wait(0.3)
        with stage.narrating(self.say(stage, "caption_bubble")):
            stage.play(bubble.grow(), run_time=0.6)
            stage.wait(1.2)
        stage.clear()


class Product(Beat):
    beat = "product"

    def play(self, stage: Stage, plan: GalleryPlan) -> None:
        th = stage.theme
        # drawn as the video does: a d_head × d_model matrix (W_Q.T) times a column vector
        W = WeightMatrix.from_trace(plan.head_trace.W_Q, name="W_Q", name_color=th.query, theme=th, font_size=20)
        vec = VectorColumn(plan.head_input, head=W.col_head, tail=W.col_tail, theme=th, font_size=22,
                           kind=shown_digits(plan.head_input, W.col_head, W.col_tail), symbol=symbol_source("E", plan.position, normed=plan.trace.model.norm != "none"), show_symbol=True)
        if plan.trace.model.norm != "none":  # the head reads E after its layer's norm, not the E drawn before
            vec.add(label(stage.say("qkv.units.normalized"), 16, th.dim).next_to(vec.brackets, DOWN, buff=0.1))
        # W_Q Ê is the query itself only where no bias or rotation follows (query lesson: q⃗ before, Q⃗ after; review 53)
        final = np.allclose(np.asarray(plan.head_input) @ np.asarray(plan.head_trace.W_Q),
                            plan.head_trace.q[plan.position - 1], atol=1e-4)
        prod = MatVecProduct(W, vec, result_symbol=symbol_source("Q" if final else "q", plan.position),
                             result_color=th.query)
        prod.move_to(DOWN * 0.2)
        fit_into(prod, 13, stage.region("full").height - 1.0)
        # what the entries' colours mean: the whole matrix's smallest to largest entry, coloured alike
        full = stage.region("full")
        scale = ColorScale(W.values.min(), W.values.max(), scale=W.scale_ref, caption=stage.say("common.colour.matrix_scale"),
                           theme=th, kind="vec")
        scale.move_to([full.right - scale.width / 2, full.bottom + scale.height / 2, 0])
        stage.drawn[self.key] = {"product": prod, "colour_scale": scale}
        with stage.narrating(self.say(stage, "caption_rows")):
            stage.play(FadeIn(self.title(stage)), FadeIn(prod), run_time=0.8)
            stage.play(prod.sweep(rows=prod.shown_rows()[:2], run_time_per_row=1.0))
        with stage.narrating(self.say(stage, "caption_colours")):
            stage.play(FadeIn(scale), run_time=0.6)
            stage.wait(1.2)
        stage.clear()


class GridAndSoftmax(Beat):
    beat = "grid"

    def play(self, stage: Stage, plan: GalleryPlan) -> None:
        th = stage.theme
        grid = AttentionGrid(plan.head_trace, tokens=plan.tokens, layout=plan.layout, theme=th, max_width=8.2,
                             max_height=5.9)
        grid.set_mask("cleared")  # the future cells stay empty throughout: no sudden mask later
        grid.move_to(DOWN * 0.45).to_edge(LEFT, buff=1.1)
        titles = axis_titles(grid, stage)
        masked = masked_note(stage, grid, plan.focus)  # the empty half, named from the start
        stage.drawn[self.key] = {"grid": grid, "titles": titles, "masked": masked}
        with stage.narrating(self.say(stage, "caption_scores")):
            stage.play(FadeIn(self.title(stage)), FadeIn(grid), FadeIn(titles),
                       *([FadeIn(masked)] if masked is not None else []), run_time=0.8)
            stage.play(grid.show_scores(run_time=1.0))
            stage.wait(0.8)
        with stage.narrating(self.say(stage, f"caption_softmax_{grid.layout}")):
            SoftmaxColumn(grid, query=plan.focus, op_text=stage.say("grid.softmax.op")).play(stage.scene, pause=0.6)
            sums = query_sums(stage, grid)  # each column's Σ, "≈" where its drawn weights miss 1
            stage.play(grid.show_weights(run_time=1.0), FadeIn(sums))  # every column: the scores become weights
            stage.wait(0.6)
        legend = dot_legend(stage, grid, [titles, self.title(stage)])
        stage.drawn[self.key].update(legend=legend, sums=sums)
        with stage.narrating(self.say(stage, "caption_dots")):
            stage.play(grid.show_dots(run_time=1.2), FadeIn(legend), FadeOut(sums))
            stage.play(grid.highlight_column(plan.focus, color=th.query), run_time=0.8)
            stage.wait(0.8)
        stage.clear()


class Arcs(Beat):
    beat = "arcs"

    def play(self, stage: Stage, plan: GalleryPlan) -> None:
        th = stage.theme
        boxes = WordBoxes(plan.tokens, theme=th, font_size=30, max_width=12.5).move_to(DOWN * 1.0)
        boxes.highlight(plan.focus, th.query)
        # how much the focus word attends to each word (its row of the pattern)
        arcs = ContextArcs([boxes.box(k) for k in range(len(boxes))], boxes.box(plan.focus), plan.weights, theme=th)
        stage.drawn[self.key] = {"arcs": arcs}
        with stage.narrating(self.say(stage, "caption")):
            stage.play(FadeIn(self.title(stage)), FadeIn(boxes), run_time=0.6)
            stage.play(arcs.grow(run_time=1.0))
            stage.play(arcs.pulse(run_time=1.2))
            stage.wait(0.4)
        stage.clear()


class Formula(Beat):
    beat = "formula"

    def play(self, stage: Stage, plan: GalleryPlan) -> None:
        th = stage.theme
        f = AttentionFormula("video", theme=th, font_size=44)
        paper = AttentionFormula("paper", theme=th, font_size=44).move_to(f)
        with stage.narrating(self.say(stage, "caption_video")):
            stage.play(FadeIn(self.title(stage)), Write(f), run_time=1.2)
            stage.play(Indicate(f.part("Q"), color=th.query), Indicate(f.part("KT"), color=th.key), run_time=0.8)
            stage.play(Indicate(f.part("sqrt"), color=th.highlight), run_time=0.6)
        with stage.narrating(self.say(stage, "caption_paper")):
            stage.play(ReplacementTransform(f, paper), run_time=1)
            stage.wait(1.0)
        stage.clear()


SPACE_ROOM = (9.0, 5.0)  # the widest and tallest the space's axes are drawn (units), their names around them
START_TURNS = tuple(a * DEGREES for a in range(-60, 61, 15))  # the first views tried (as turns from the default)
SHOW_TURN = 30 * DEGREES  # the turn the caption shows, one way or the other
ALONG_TURN_AXIS = 0.9  # arrows this nearly along the axis the view turns about (cosine) barely move as it turns
TINY_ARROW = 0.15  # a ΔE drawn shorter than this (scene units, about 13 px at 720p) reads as a speck


class Space(Beat):
    beat = "space"

    def play(self, stage: Stage, plan: GalleryPlan) -> None:
        th, say = stage.theme, stage.say
        E, E2, pos = plan.embedding, plan.updated, plan.position
        # principal directions (a model without named ones) are recomputed from the trace, as the plan did
        space = EmbeddingSpace(plan.trace, list(plan.axes) if all(plan.named) else None, fit_to=[E, E2], theme=th,
                               extent=3.2, negative="auto",
                               axis_text=[direction_name(say, n, plan.trace.tokens) for n in plan.axes])
        e = space.arrow(E, th.embedding, symbol_source("E", pos), name="E", attach=False)
        e2 = space.arrow(E2, th.updated, symbol_source("E", pos, prime=True), name="E'", attach=False)
        d = space.difference_arrow(E, E2, th.delta, symbol_source("E", pos, delta=True), name="dE", attach=False)
        # the view that keeps the arrows furthest apart, first (review 37: ΔE⃗₄ all but along E⃗′₄, its name
        # pushed onto E⃗′₄'s shaft), and the turn that keeps them so; the arrows turn with the space meanwhile
        space.add(e, e2, d)
        apart = [e, e2, *([d] if max(d.width, d.height) >= TINY_ARROW else [])]
        start = clearest_turn(space, apart, START_TURNS)
        o, M = space._frame()
        space.rotate(-start, axis=M[:, 2] / np.linalg.norm(M[:, 2]), about_point=o)  # as space.rotation(start)
        turn = clearest_turn(space, apart, (-SHOW_TURN, SHOW_TURN))
        # the vectors fill the frame (review 35: with whole negative halves they sat in a corner of it), and
        # no more of it than there is under the title (a vector along an axis's negative half reaches far down)
        space.scale(min(1.0, SPACE_ROOM[0] / space.axis_lines.width, SPACE_ROOM[1] / space.axis_lines.height),
                    about_point=space.axis_lines.get_center())
        space.shift(DOWN * 0.3 - space.axis_lines.get_center() * [1, 1, 0])
        space.remove(e, e2, d)
        stage.drawn[self.key] = {"space": space, "E": e, "E2": e2, "dE": d, "turns": (start, turn)}
        # a real head's ΔE can be a speck beside E at the scale that shows E: then the frame says how
        # short it is (lengths over all the model's dimensions), instead of leaving a dot to puzzle over
        tiny = None
        if max(d.width, d.height) < TINY_ARROW:
            share = 100 * float(np.linalg.norm(E2 - E)) / max(float(np.linalg.norm(E)), 1e-12)
            full = stage.region("full")
            tiny = wrapped(self.say(stage, "tiny_delta", share=share),
                           3.6, 22, th.delta, 3)
            tiny.move_to([full.right - 0.2 - tiny.width / 2, 1.2, 0])
            stage.drawn[self.key]["tiny_note"] = tiny
        with stage.narrating(self.say(stage, "caption_axes")):
            stage.play(FadeIn(self.title(stage)), FadeIn(space), FadeIn(space.axis_labels), run_time=0.8)
            stage.play(space.grow_arrow(e), run_time=0.7)
            stage.wait(0.5)
        with stage.narrating(self.say(stage, "caption_delta" if tiny is None else "caption_delta_tiny")):
            if tiny is None:
                stage.play(space.grow_arrow(d), run_time=0.7)
            # a speck of a ΔE is not drawn (its label would sit on E's): the note says how short it is
            stage.play(space.grow_arrow(e2), *([FadeIn(tiny)] if tiny is not None else []), run_time=0.7)
            stage.wait(0.4)
        # a turn about the third axis shows nothing new of arrows lying along it (review 36, SmolLM2: along −PC3,
        # under "Turning the view shows all three coordinates"): the caption says so instead
        along = min(abs(c[2]) / max(float(np.linalg.norm(c)), 1e-12) for c in (e.coords, e2.coords))
        turn_caption = (self.say(stage, "caption_turn_along", axis=direction_name(say, plan.axes[2], plan.trace.tokens))
                        if along > ALONG_TURN_AXIS else self.say(stage, "caption_turn"))
        with stage.narrating(turn_caption):
            stage.play(space.rotation(turn, run_time=2.5))
        stage.clear()


class Bars(Beat):
    beat = "bars"

    def play(self, stage: Stage, plan: GalleryPlan) -> None:
        th = stage.theme
        if not plan.next_words:
            return
        words, probs = zip(*plan.next_words)
        # the chart as large as the frame allows, named over it (review 51: small and untitled)
        bars = ProbabilityBars(words, probs, theme=th, highlight=0, max_length=7.0, bar_height=0.42, gap=0.18,
                               font_size=30)
        prompt = WordBoxes(plan.tokens[: plan.focus + 1], theme=th, font_size=30).to_edge(UP, buff=1.0)
        prompt.highlight(plan.focus, th.query)
        heading = label(self.say(stage, "heading"), 26, th.dim).next_to(prompt, DOWN, buff=0.45)
        fit_into(bars, stage.region("full").width - 1.0, heading.get_bottom()[1] - 0.35 - stage.region("full").bottom)
        bars.next_to(heading, DOWN, buff=0.35)
        stage.drawn[self.key] = {"bars": bars, "heading": heading}
        with stage.narrating(self.say(stage, "caption")):
            stage.play(FadeIn(self.title(stage)), FadeIn(prompt), FadeIn(heading), run_time=0.6)
            stage.play(bars.grow(), run_time=1.2)
            stage.wait(1.4)
        stage.clear(run_time=0.4)


GALLERY = (WordsAndVector(), Product(), GridAndSoftmax(), Arcs(), Formula(), Space(), Bars())
