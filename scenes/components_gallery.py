"""`components`: every reusable piece on real numbers from the model, in a few short beats.

A look-book for the visual language (word boxes, vectors, weight matrices and the product,
speech bubble, formula, 3-D space, bar chart, attention grid, softmax column and context arcs). Every number drawn comes from the trace.
"""

from __future__ import annotations

from manim import (
    DEGREES, DOWN, LEFT, RIGHT, UP, FadeIn, Indicate, ReplacementTransform, Write,
)

from .base import TraceScene
from .components.attention_grid import AttentionGrid
from .components.bars import ProbabilityBars
from .components.bubble import SpeechBubble
from .components.context_arcs import ContextArcs
from .components.formula import AttentionFormula
from .components.matrices import MatVecProduct, WeightMatrix
from .components.softmax_column import SoftmaxColumn
from .components.space3d import EmbeddingSpace, pick_axes
from .components.text import label
from .components.vectors import VectorColumn, symbol_source
from .components.word_boxes import WordBoxes
from .registry import register


@register("components")
class ComponentsGallery(TraceScene):
    description = "a gallery of the reusable pieces (word boxes, vectors, matrices, grid, bubble, formula, 3-D space, bars) on real numbers"

    def construct(self):
        tr = self.trace
        ht = self.head_trace()
        i = self.focus_index()
        pos = i + 1  # the video numbers words from 1
        self.beat_words_and_vector(tr, i, pos)
        self.beat_product(tr, ht, i, pos)
        self.beat_grid(tr, ht, i)
        self.beat_arcs(tr, ht, i)
        self.beat_formula()
        self.beat_space(tr, i, pos)
        self.beat_bars(tr, i)

    def title(self, text: str):
        t = label(text, font_size=28, color=self.theme.dim).to_corner(UP + LEFT, buff=0.3)
        return t

    # --- 1. word boxes, a vector, its symbol, a speech bubble ---------------------------------
    def beat_words_and_vector(self, tr, i, pos):
        th = self.theme
        boxes = WordBoxes(tr.tokens, theme=th, font_size=30, max_width=12.5).move_to(UP * 1.1)
        col = VectorColumn(tr.embeddings[i], theme=th, brace=True, font_size=22,
                           symbol=symbol_source("E", pos), show_symbol=True)
        col.next_to(boxes, DOWN, buff=0.35)
        col.shift(RIGHT * (boxes.box(i).get_x() - col.brackets.get_x()))
        # the bubble above the word, leaning toward the side with more room
        lean = RIGHT if boxes.box(i).get_x() < 0 else LEFT
        bubble = SpeechBubble("Any adjectives in front of me?", target=boxes.box(i), direction=UP + lean,
                              theme=th, font_size=26)
        with self.narrating("A phrase becomes a row of word boxes, one per token."):
            self.play(FadeIn(self.title("word boxes · vectors · bubble")), FadeIn(boxes, lag_ratio=0.1), run_time=1)
            self.play(boxes.animate.highlight(i, th.query).dim_others(i), run_time=0.6)
            self.wait(0.3)
        with self.narrating(f"Each token's embedding: {len(tr.embeddings[i])} real numbers, a few of them shown."):
            self.play(FadeIn(col, shift=DOWN * 0.3), run_time=0.8)
            self.wait(1.0)
        with self.narrating("The column folds into its symbol and unfolds again."):
            self.play(col.collapse(run_time=0.8))
            self.wait(0.3)
            self.play(col.expand(run_time=0.8))
        with self.narrating("A word can ask a question of the words before it."):
            self.play(bubble.grow(), run_time=0.6)
            self.wait(1.2)
            self.clear_all()

    # --- 2. W_Q times E = Q ---------------------------------------------------------------------
    def beat_product(self, tr, ht, i, pos):
        th = self.theme
        x = tr.layers[self.layer].attn_in[i]  # what the head reads (E itself when there is no LayerNorm)
        # drawn as the video does: a d_head × d_model matrix (W_Q.T) times a column vector
        W = WeightMatrix.from_trace(ht.W_Q, name="W_Q", name_color=th.query, theme=th, font_size=20)
        vec = VectorColumn(x, head=W.col_head, tail=W.col_tail, theme=th, font_size=22,
                           symbol=symbol_source("E", pos), show_symbol=True)
        prod = MatVecProduct(W, vec, result_symbol=symbol_source("Q", pos), result_color=th.query)
        prod.move_to(DOWN * 0.2)
        if prod.width > 13:
            prod.scale_to_fit_width(13)
        with self.narrating("The query matrix turns the embedding into a query, one row at a time."):
            self.play(FadeIn(self.title("weight matrix · matrix–vector product")), FadeIn(prod), run_time=0.8)
            self.play(prod.sweep(rows=prod.shown_rows()[:2], run_time_per_row=1.0))
        with self.narrating("Blue entries are positive, red negative; brighter means larger."):
            self.wait(1.8)
            self.clear_all()

    # --- 3. attention grid, softmax column, context arcs -----------------------------------------
    def beat_grid(self, tr, ht, i):
        th = self.theme
        grid = AttentionGrid(ht, tokens=tr.tokens, layout=self.inputs.layout, theme=th, max_width=8.6, max_height=6.4)
        grid.move_to(DOWN * 0.25).to_edge(LEFT, buff=0.6)
        with self.narrating("Every key meets every query: one cell per pair, holding the real score."):
            self.play(FadeIn(self.title("attention grid")), FadeIn(grid), run_time=0.8)
            self.play(grid.show_scores(run_time=1.0))
            self.wait(0.8)
        with self.narrating("One column at a time, the softmax turns scores into weights that sum to 1."):
            SoftmaxColumn(grid, query=i).play(self, pause=0.6)
        with self.narrating("The weights as dots: the bigger the dot, the more attention."):
            self.play(grid.show_dots(run_time=1.2))
            self.play(grid.highlight_column(i, color=th.query), run_time=0.8)
            self.wait(0.8)
            self.clear_all()

    def beat_arcs(self, tr, ht, i):
        th = self.theme
        boxes = WordBoxes(tr.tokens, theme=th, font_size=30, max_width=12.5).move_to(DOWN * 1.0)
        boxes.highlight(i, th.query)
        weights = ht.pattern[i]  # how much word i attends to each word (its row of the pattern)
        arcs = ContextArcs([boxes.box(k) for k in range(len(boxes))], boxes.box(i), weights, theme=th)
        with self.narrating("Context flows into a word along arcs as strong as the real weights."):
            self.play(FadeIn(self.title("context arcs")), FadeIn(boxes), run_time=0.6)
            self.play(arcs.grow(run_time=1.0))
            self.play(arcs.pulse(run_time=1.2))
            self.wait(0.4)
            self.clear_all()

    # --- 4. formula -------------------------------------------------------------------------------
    def beat_formula(self):
        th = self.theme
        f = AttentionFormula("video", theme=th, font_size=44)
        paper = AttentionFormula("paper", theme=th, font_size=44).move_to(f)
        with self.narrating("The whole head in one line, as the video draws it: keys times queries."):
            self.play(FadeIn(self.title("formula")), Write(f), run_time=1.2)
            self.play(Indicate(f.part("Q"), color=th.query), Indicate(f.part("KT"), color=th.key), run_time=0.8)
            self.play(Indicate(f.part("sqrt"), color=th.highlight), run_time=0.6)
        with self.narrating("The paper writes the same thing transposed: queries times keys."):
            self.play(ReplacementTransform(f, paper), run_time=1)
            self.wait(1.0)
            self.clear_all()

    # --- 5. 3-D embedding space -------------------------------------------------------------------
    def beat_space(self, tr, i, pos):
        th = self.theme
        E = tr.embeddings[i]
        E2 = tr.updated(self.layer, self.head_index)[i]
        # the named directions along which E and E′ reach furthest, unless --axes chose them
        axes = self.inputs.axes or pick_axes(tr, [E, E2])
        space = EmbeddingSpace(tr, axes, fit_to=[E, E2], theme=th, extent=2.4)
        space.shift(DOWN * 0.3)
        e = space.arrow(E, th.embedding, symbol_source("E", pos), name="E", attach=False)
        e2 = space.arrow(E2, th.updated, symbol_source("E", pos, prime=True), name="E'", attach=False)
        d = space.difference_arrow(E, E2, th.delta, symbol_source("E", pos, delta=True), name="dE", attach=False)
        with self.narrating("Three directions of embedding space as axes; each arrow is a real projection."):
            self.play(FadeIn(self.title("3-D embedding space")), FadeIn(space), FadeIn(space.axis_labels), run_time=0.8)
            self.play(space.grow_arrow(e), run_time=0.7)
            self.wait(0.5)
        with self.narrating("The head's change ΔE runs from the tip of E to the tip of E′."):
            self.play(space.grow_arrow(d), run_time=0.7)
            self.play(space.grow_arrow(e2), run_time=0.7)
            self.wait(0.4)
        with self.narrating("Turning the view shows all three coordinates."):
            self.play(space.rotation(35 * DEGREES, run_time=2.5))
            self.clear_all()

    # --- 6. bar chart -------------------------------------------------------------------------------
    def beat_bars(self, tr, i):
        th = self.theme
        if not tr.vocab:
            return
        k = min(6, len(tr.vocab))
        bars = ProbabilityBars.from_logits(tr.logits[i], tr.vocab, top_k=k, theme=th, highlight=0, max_length=4.5)
        prompt = WordBoxes(tr.tokens[: i + 1], theme=th, font_size=28).to_edge(UP, buff=1.0)
        prompt.highlight(i, th.query)
        bars.next_to(prompt, DOWN, buff=0.6)
        with self.narrating("What the model expects next after this prefix, with its real probabilities."):
            self.play(FadeIn(self.title("bar chart")), FadeIn(prompt), run_time=0.6)
            self.play(bars.grow(), run_time=1.2)
            self.wait(1.4)
            self.clear_all(run_time=0.4)
