"""A word's query: the focus word asks its question, its embedding goes through the real W_Q row by
row, then every word gets its own query under it. Hands on the word row (`stage.words`) and the
query columns (`stage.queries`, `.tokens` in sentence order)."""

from __future__ import annotations

from manim import (
    DOWN, LEFT, RIGHT, UP, Create, DashedVMobject, FadeIn, FadeOut, LaggedStart, ReplacementTransform,
    SurroundingRectangle, Transform,
    VGroup,
)

from ..components.bubble import SpeechBubble
from ..components.matrices import MatVecProduct, WeightMatrix
from ..components.text import label
from ..components.vectors import VectorColumn, math, symbol_source
from ..lesson import Chapter
from ..plans.qkv import QueryPlan, plan_query
from ..stage import Stage
from .beyond_parts import head_name
from .honest import wrapped
from .qkv_parts import (
    brace_words_for, camera_home, dots_column, down_arrow, entry_kind, length_brace, matrix_colour_key, settle, slot_row,
    token_group, up_clear_of, vector, word_tag, zoom_frame, zoom_on,
)

LIFT = 1.6  # the row starts lower (centre stage) and rises when the embedding appears
ROW_Y = 3.1  # the row's place once every word has its query
Y_SYMBOL, Y_ARROW_TOP, Y_ARROW_BOTTOM, Y_COLUMN_TOP = 2.3, 1.95, 1.2, 0.95


class Query(Chapter):
    key = "query"

    def plan(self, setting) -> QueryPlan:
        return plan_query(setting)

    def play(self, stage: Stage, plan: QueryPlan) -> None:
        th, say = stage.theme, stage.say
        i = plan.focus
        word, pos = say.quote(plan.tokens[i]), i + 1  # words are numbered from 1 on screen, as in the video
        stage.clear()
        drawn = stage.drawn.setdefault("query", {})

        row, xs = slot_row(plan.tokens, plan.slots, th)
        row.set_y(2.15)
        s_i = row.slot_of[i]
        box = row.box(s_i)
        lean = RIGHT if box.get_x() < 2.5 else LEFT
        bubble = SpeechBubble(say(plan.question), target=box, direction=UP + lean, theme=th, font_size=24,
                              color=th.query, tail_length=0.35, max_width=6.0)
        VGroup(row, bubble).shift(DOWN * LIFT)
        # what the lesson is about, and whose query it is, over the words while they stand alone
        width = stage.region("full").width - 1.0
        heading = VGroup(wrapped(say("qkv.query.heading"), width, 32, th.text, 2),
                         wrapped(head_name(say, plan.head.layer, plan.head.head, plan.head_trace.role), width, 24,
                                 th.dim, 2)).arrange(DOWN, buff=0.15)
        heading.move_to([0, stage.region("full").top - 0.2 - heading.height / 2, 0])
        drawn.update(row=row, bubble=bubble, heading=heading)
        # a piece of a word is named as one ("‘ant’, the last piece of ‘verdant’"), never as a word of its own
        followed = (say("common.piece_of", piece=word, word=say.quote(plan.piece_of)) if plan.piece_of else word)
        with stage.narrating(say(plan.follow, word=followed, layer=plan.head.layer)):
            stage.play(FadeIn(heading), FadeIn(row, lag_ratio=0.05), run_time=1.0)
            stage.play(row.animate.highlight(s_i, th.query).dim_others(s_i, 0.55), run_time=0.6)
        with stage.narrating(say("qkv.query.question")):
            stage.play(bubble.grow(), run_time=0.7)
            stage.wait(1.3)

        # the embedding under the word
        col = vector(plan.embedding_vector, plan.embedding, font_size=24, theme=th, symbol=symbol_source("E", pos, normed=plan.normalized),
                     kind=entry_kind(plan.embedding_vector, plan.embedding),
                     show_symbol=True)
        col.next_to(box, DOWN, buff=0.3).set_x(box.get_x()).shift(UP * LIFT)
        if col.get_right()[0] > 6.6:
            col.shift(LEFT * (col.get_right()[0] - 6.6))
        brace = length_brace(stage, col, plan.d_model)
        if plan.normalized:  # the head reads E after its layer's norm: not the residual E other lessons show
            brace.add(label(say("qkv.units.normalized"), 20, th.dim).next_to(brace[1], DOWN, buff=0.08,
                                                                              aligned_edge=LEFT))
        drawn["embedding"] = col
        with stage.narrating(say("qkv.query.embedding", d_model=plan.d_model)):
            stage.play(VGroup(row, bubble).animate.shift(UP * LIFT), FadeOut(heading), run_time=0.7)
            stage.play(FadeIn(col, shift=DOWN * 0.2), run_time=0.7)
            stage.play(FadeIn(brace), run_time=0.5)
            stage.wait(0.6)

        prod, q_brace = self.product(stage, plan, col, brace, bubble)
        self.every_query(stage, plan, row, xs, prod, q_brace)

    # --- W_Q times the embedding, row by row ---------------------------------------------------
    def product(self, stage: Stage, plan: QueryPlan, col, brace, bubble):
        th, say = stage.theme, stage.say
        ht, i, pos = plan.head_trace, plan.focus, plan.focus + 1
        drawn = stage.drawn["query"]
        W = WeightMatrix.from_trace(ht.W_Q, name="W_Q", name_color=th.query, theme=th, font_size=20)
        vec = vector(plan.embedding_vector, plan.product_input, font_size=20, theme=th,
                     symbol=symbol_source("E", pos, normed=plan.normalized), show_symbol=True,
                     kind=entry_kind(plan.embedding_vector, plan.product_input))
        # W_Q Ê before a bias or a rotation is not yet the query that meets the keys: its own name, q⃗ (the final
        # review of 52: SmolLM2 named W_Q Ê₄ and the rotated vector both Q⃗₄)
        steps = ([(ht.q_unrotated[i], "qkv.query.bias")] if plan.has_bias else []) + (
            [(ht.q[i], "real.query.rotary")] if plan.rotary else [])
        prod = MatVecProduct(W, vec, result_symbol=symbol_source("q" if steps else "Q", pos), result_color=th.query)
        if prod.width > 12.8:
            prod.scale_to_fit_width(12.8)
        prod.move_to(DOWN * 1.55)
        if plan.normalized:
            vec.add(label(say("qkv.units.normalized"), 16, th.dim).next_to(vec.brackets, DOWN, buff=0.1))
        tag = word_tag(stage, plan.tokens[i], vec.symbol, th.query)
        drawn.update(product=prod, W=W, E=vec, word_tag=tag)
        q_brace = length_brace(stage, prod.result, plan.d_head, font_size=18, buff=0.08)
        zoom_to = VGroup(prod, q_brace, tag)
        brace_words_for(q_brace, zoom_frame(zoom_to)[1])
        up = up_clear_of(zoom_to, drawn["row"], up=0.3)  # the word row wholly out of the close-up, or wholly in
        with stage.narrating(say("qkv.query.encode")):
            stage.play(FadeOut(brace), FadeOut(bubble), run_time=0.4)
            stage.play(ReplacementTransform(col, vec), FadeIn(W, shift=RIGHT * 0.3), FadeIn(prod.equals),
                       FadeIn(prod.result), FadeIn(tag), run_time=1.0)
            stage.play(zoom_on(stage, zoom_to, up=up), run_time=0.9)
        rows = prod.shown_rows()
        with stage.narrating(say("qkv.query.rows")):
            stage.play(prod.sweep(rows=rows[:2], run_time_per_row=1.1, fade_boxes=False))
        # what the entries' colours mean, under W_Q, as the caption says it (matrix_colour_key)
        centre, width = zoom_frame(zoom_to, up=up)  # the frame zoom_on takes
        drawn["close_up"] = (centre, width, drawn["row"].get_bottom()[1], drawn["row"].get_top()[1])  # (for tests)
        key = matrix_colour_key(stage, W, vec.get_left()[0], centre, width)
        drawn["colour_key"] = key
        with stage.narrating(say("qkv.query.weights")):
            stage.play(prod.sweep(rows=rows[2:], run_time_per_row=0.45), FadeIn(key, run_time=0.6))
        with stage.narrating(say("qkv.query.short", d_head=plan.d_head, d_model=plan.d_model)):
            stage.play(FadeIn(q_brace), FadeOut(key), run_time=0.6)
            stage.wait(1.0)
        stage.remove(key)
        drawn["product_result"] = prod.result
        # a model with biases: the query is W_Q E plus b_Q; a rotary model then turns it by position. Only the
        # last step's vector is the query Q⃗
        for step, (values, caption) in enumerate(steps):
            name = symbol_source("Q" if step == len(steps) - 1 else "q", pos)
            q_real = VectorColumn(values, head=W.row_head, tail=W.row_tail, font_size=prod.result.font_size,
                                  theme=th, symbol=name, symbol_color=th.query, show_symbol=True,
                                  row_height=W.row_height).move_to(prod.result)
            turn = []
            if caption == "real.query.rotary":  # "=" no longer holds: W_Q E⃗ is then turned by R, its position's rotation
                rot = math(f"attach(arrow.r.long, t: R_{pos})", 34, th.query).move_to(prod.equals)
                # the whole product W_Q E⃗ in one dashed frame, the arrow from it: what R turns is the
                # product, not E⃗ (an arrow after E⃗ alone read as "E⃗ turned")
                body = VGroup(W, *(vec.submobjects[:-1] if plan.normalized else [vec]))  # not the note under E⃗
                turned = DashedVMobject(SurroundingRectangle(body, buff=0.08, corner_radius=0.1, color=th.query,
                                                             stroke_width=2), num_dashes=60)
                # the word's tag over E⃗ goes: the frame's top dashes ran through it (review 52, SmolLM2)
                turned_top = turned.get_top()[1]
                tag_cut = tag.get_bottom()[1] < turned_top + 0.05
                turn = [Transform(prod.equals, rot), Create(turned), *([tag.animate.set_opacity(0.0)] if tag_cut else [])]
                drawn.update(rotation_sign=rot, rotated_product=turned)
            with stage.narrating(say(caption)):
                stage.play(Transform(prod.result, q_real), *turn, run_time=0.8)
            drawn["product_result"] = q_real
        return prod, q_brace

    # --- every word gets its query ------------------------------------------------------------
    def every_query(self, stage: Stage, plan: QueryPlan, row, xs, prod, q_brace):
        th, say = stage.theme, stage.say
        ht, i = plan.head_trace, plan.focus
        drawn = stage.drawn["query"]
        row_target = row.copy().set_y(ROW_Y)
        col_font = 22 if len(plan.slots) <= 8 else 20
        e_syms, arrows, q_syms, dots = VGroup(), VGroup(), VGroup(), VGroup()
        columns = {}
        for s, j in enumerate(plan.slots):
            x = xs[s]
            if j is None:
                dots.add(dots_column(x, Y_SYMBOL, Y_COLUMN_TOP - 2.6, th.dim))
                continue
            e_syms.add(math(symbol_source("E", j + 1, normed=plan.normalized), font_size=32, color=th.embedding).move_to([x, Y_SYMBOL, 0]))
            name = f"R_{j + 1} W_Q" if plan.rotary else "W_Q"  # a rotary model turns each query by its position
            arrows.add(down_arrow(Y_ARROW_TOP, Y_ARROW_BOTTOM, x - 0.15, th.dim, name, th.query, font_size=24))
            qc = vector(ht.q[j], plan.queries[j], font_size=col_font, theme=th, bracket_color=th.query)
            qc.move_to([x, 0, 0]).align_to([0, Y_COLUMN_TOP, 0], UP)
            q_syms.add(math(symbol_source("Q", j + 1), font_size=32, color=th.query).next_to(qc, DOWN, buff=0.15))
            columns[j] = qc
        queries = token_group(columns)
        drawn.update(q_columns=columns, queries=queries, q_symbols=q_syms)
        others = [c for j, c in columns.items() if j != i]
        with stage.narrating(say("qkv.query.every")):
            stage.play(camera_home(stage, run_time=0.9),
                       FadeOut(VGroup(prod.matrix, prod.vector, prod.equals, q_brace, drawn["word_tag"],
                                      *([drawn["rotated_product"]] if "rotated_product" in drawn else []))),
                       Transform(row, row_target), ReplacementTransform(prod.result, columns[i]), run_time=1.0)
            stage.play(FadeIn(e_syms, lag_ratio=0.1), FadeIn(arrows, lag_ratio=0.1), FadeIn(dots), run_time=0.9)
            stage.play(LaggedStart(*(FadeIn(c, shift=DOWN * 0.2) for c in others), lag_ratio=0.12),
                       FadeIn(q_syms, lag_ratio=0.1), run_time=1.4)
        settle(stage, queries)
        stage.hand_on(words=row, queries=queries)
        # "all computed at once": every query in one box (a pulse would leave the frame as it was)
        together = SurroundingRectangle(VGroup(queries, q_syms), color=th.query, buff=0.15, stroke_width=3)
        drawn["all_queries_box"] = together
        with stage.narrating(say("qkv.query.all", d_head=plan.d_head)):
            stage.play(Create(together), run_time=0.8)
            stage.wait(1.0)
        stage.play(FadeOut(together), run_time=0.4)

