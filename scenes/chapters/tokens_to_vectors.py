"""`tokens_to_vectors`: a phrase becomes word boxes; each drops to its real embedding column; a
repeated word gets the identical column; then position is added and the columns change."""

from __future__ import annotations

import numpy as np
from manim import (
    DOWN, RIGHT, UP, Arrow, Create, FadeIn, FadeOut, FadeTransform, Line, ReplacementTransform,
    SurroundingRectangle, VGroup, Write,
)

from ..components.text import label
from ..components.vectors import VectorColumn, symbol
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter
from ..plans.embeddings import COLUMN, TokensPlan, plan_tokens
from ..stage import Stage
from .embedding_parts import fit_into
from .honest import wrapped
from .rounding_parts import declare_rows_of, rounding_marks

FONT = 22  # the numbers of the columns
Y_BOX, Y_COL, Y_POS = 3.25, 1.05, -2.25  # rows: the boxes, the lookup (and sum) columns, the position columns


class TokensToVectors(Chapter):
    key = "tokens_to_vectors"

    def plan(self, setting) -> TokensPlan:
        return plan_tokens(setting)

    def play(self, stage: Stage, plan: TokensPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        tokens, shown, d = plan.tokens, plan.shown, plan.d_model
        display = [tokens[i] if i is not None else "…" for i in plan.row]
        boxes = WordBoxes(display, theme=th, font_size=30)

        def column(values, **kw):
            return VectorColumn(values, head=COLUMN[0], tail=COLUMN[1], font_size=FONT, theme=th, **kw)

        cols = VGroup(*(column(v) for v in plan.lookups))
        pos_cols = VGroup(*(column(v, bracket_color=th.positive) for v in plan.positions))
        sums = VGroup(*(column(v) for v in plan.sums))
        # one slot per box, wide enough for a number column; boxes centred in their slots
        col_w = max(c.width for c in [*cols, *pos_cols, *sums])
        slot_w = max(col_w + 0.35, max(b.width for b in boxes) + 0.15)
        slots = [(k - (len(display) - 1) / 2) * slot_w for k in range(len(display))]
        for k, b in enumerate(boxes):
            b.set_x(slots[k])
        boxes.set_y(Y_BOX)
        for k, i in enumerate(shown):
            for group, y in ((cols, Y_COL), (pos_cols, Y_POS), (sums, Y_COL)):
                c = group[k]
                c.shift(np.array([slots[plan.box_of[i]], y, 0]) - c.brackets.get_center())
        plus = VGroup(*(label("+", font_size=28, color=th.positive).move_to(
            [cols[k].get_x(), (cols[k].get_bottom()[1] + pos_cols[k].get_top()[1]) / 2, 0])
            for k in range(len(shown))))
        gaps = [k for k, i in enumerate(plan.row) if i is None]
        ellipses = VGroup(*(label("…", font_size=FONT, color=th.dim).move_to([slots[k], Y_COL, 0]) for k in gaps))
        pos_ellipses = VGroup(*(label("…", font_size=FONT, color=th.dim).move_to([slots[k], Y_POS, 0]) for k in gaps))
        brace_col = column(plan.lookups[-1], brace=True, brace_text=say("embeddings.tokens.brace", count=d))
        brace_col.shift(cols[-1].brackets.get_center() - brace_col.brackets.get_center())
        brace = VGroup(brace_col.brace, brace_col.brace_label)
        # row labels, right-aligned in a margin as wide as the widest of them
        row_lookup = label(say("embeddings.tokens.row_lookup"), font_size=22, color=th.dim)
        row_position = label(say("embeddings.tokens.row_position"), font_size=22, color=th.positive)
        row_sum = label(say("embeddings.tokens.row_sum"), font_size=22, color=th.text)
        right = cols.get_left()[0] - 0.3
        for lab, y in ((row_lookup, Y_COL), (row_position, Y_POS), (row_sum, Y_COL)):
            lab.move_to([right - lab.width / 2, y, 0])
        margin = VGroup(row_sum.copy(), row_lookup.copy(), row_position.copy())
        parts = (boxes, cols, pos_cols, sums, plus, ellipses, pos_ellipses, brace, row_lookup, row_position, row_sum)
        full = stage.region("full")
        whole = VGroup(*parts, margin)
        k_fit = min(1.0, (full.width - 0.1) / whole.width, 7.7 / (whole.get_top()[1] - pos_cols.get_bottom()[1] + 0.1))
        about = np.array([whole.get_center()[0], 0.5, 0])
        for m in parts + (margin,):
            m.scale(k_fit, about_point=about)
        dx = -VGroup(*parts, margin).get_center()[0]
        for m in parts:
            m.shift(RIGHT * dx)
        # until the position row arrives (and again once it has been added in) the boxes and one row
        # of columns are all there is: centre them vertically, leaving room for the notes below
        one_row = VGroup(boxes, cols)
        drop = max(0.0, (one_row.get_top()[1] + one_row.get_bottom()[1] - 0.9) / 2)
        VGroup(boxes, cols, sums, ellipses, brace, row_lookup, row_sum).shift(DOWN * drop)

        sentence = label(" ".join(tokens), font_size=30, color=th.text)
        fit_into(sentence, full.width - 1.2, 1).move_to([0, boxes.get_y(), 0])
        arrows = VGroup(*(
            Arrow(boxes.box(plan.box_of[i]).get_bottom(), cols[k].get_top(), buff=0.08, stroke_width=2.5,
                  max_tip_length_to_length_ratio=0.25, color=th.dim)
            for k, i in enumerate(shown)))
        stage.drawn[self.key] = {"boxes": boxes, "lookups": cols, "positions": pos_cols, "sums": sums}
        # where the position row stands (the E symbols take it at the end)
        below = [c.get_center() for c in pos_cols] + [e.get_center() for e in pos_ellipses]

        # 1. words
        with stage.narrating(say("real.tokens.caption_pieces" if plan.pieces else "embeddings.tokens.caption_words")):
            stage.play(Write(sentence), run_time=1.0)
            stage.play(FadeTransform(sentence, boxes), run_time=1.0)
        # 2. lookup
        with stage.narrating(say("embeddings.tokens.caption_lookup", count=d)):
            stage.play(*(Create(a) for a in arrows), run_time=0.6)
            stage.play(FadeIn(cols, shift=DOWN * 0.3, lag_ratio=0.08), FadeIn(row_lookup), FadeIn(ellipses),
                       run_time=1.4)
            stage.play(FadeIn(brace), run_time=0.6)
            stage.wait(0.8)
        # 3. repeated words: the same column
        col_at = {i: cols[k] for k, i in enumerate(shown)}
        words = say.quoted_words(list(plan.marked_words))
        if plan.marked:
            marks, notes = self.mark_groups(stage, plan, col_at, th.highlight, "note_equal")
            stage.drawn[self.key]["equal_notes"] = notes
            with stage.narrating(say("embeddings.tokens.caption_repeated", count=len(plan.marked), words=words)):
                stage.play(boxes.animate.highlight([plan.box_of[i] for g in plan.marked for i in g.positions],
                                                   th.highlight), run_time=0.6)
                stage.play(Create(marks), FadeIn(notes), run_time=1.0)
                stage.wait(1.5)
            stage.play(FadeOut(marks), FadeOut(notes), boxes.animate.reset(), run_time=0.5)
        else:  # every word its own: each box lit while the caption says none repeats (a wait showed nothing new)
            with stage.narrating(say("embeddings.tokens.caption_no_repeat")):
                stage.play(boxes.animate.highlight(list(range(len(boxes))), th.highlight), run_time=0.6)
                stage.wait(1.4)
            stage.play(boxes.animate.reset(), run_time=0.4)

        if plan.rotary:  # no position is added here: the model rotates queries and keys by position
            with stage.narrating(say("real.tokens.caption_rotary")):  # the picture makes room for the E⃗ names
                stage.play(VGroup(boxes, arrows, cols, ellipses, brace, row_lookup).animate.shift(UP * drop),
                           run_time=0.6)
                stage.wait(0.4)
            self.symbols(stage, plan, cols, below)
            return
        # 4. position
        with stage.narrating(say("embeddings.tokens.caption_position")):
            # only what is on screen moves visibly (animating the rest would add it to the scene)
            VGroup(sums, row_sum).shift(UP * drop)
            stage.play(VGroup(boxes, arrows, cols, ellipses, brace, row_lookup).animate.shift(UP * drop), run_time=0.6)
            stage.play(FadeIn(pos_cols, shift=UP * 0.3, lag_ratio=0.08), FadeIn(plus), FadeIn(row_position),
                       FadeIn(pos_ellipses), run_time=1.4)
            stage.wait(1.0)
        # ≈ beside the sums' entries whose drawn lookup + position miss them (from the plan), one note why
        approx = VGroup()
        for k in range(len(shown)):
            rows = plan.sum_rounding[k] if k < len(plan.sum_rounding) else ()
            m = rounding_marks(stage, sums[k], rows, font_size=FONT, scale=k_fit, buff=0.04, left=True)
            declare_rows_of([cols[k], pos_cols[k]], sums[k], m)
            approx.add(m)
        if any(plan.sum_rounding):
            note = wrapped(say("common.rounding.short"), full.width - 1.0, 26, th.dim, 2)
            approx.add(note.move_to([0, full.bottom + 0.35 + note.height / 2, 0]))  # under the E symbols to come
        stage.drawn[self.key]["rounding"] = approx
        with stage.narrating(say("embeddings.tokens.caption_sum")):
            # the lookup columns stay as they were (kept for inspection); copies morph into the sums
            morphing = [c.copy() for c in cols]
            stage.remove(*cols)
            stage.play(*(pc.animate.move_to(sums[k]).set_opacity(0) for k, pc in enumerate(pos_cols)),
                       FadeOut(plus), FadeOut(row_position), FadeOut(pos_ellipses),
                       *(ReplacementTransform(morphing[k], sums[k]) for k in range(len(shown))),
                       ReplacementTransform(row_lookup, row_sum), run_time=1.5)
            stage.remove(pos_cols)
            if len(approx):
                stage.play(FadeIn(approx), run_time=0.5)
        if plan.marked:
            sum_at = {i: sums[k] for k, i in enumerate(shown)}
            marks, notes = self.mark_groups(stage, plan, sum_at, th.positive, "note_differ",
                                            beside={i: approx[k] for k, i in enumerate(shown)})
            stage.drawn[self.key].update(differ_notes=notes, differ_marks=marks)
            with stage.narrating(say("embeddings.tokens.caption_baked", count=len(plan.marked), words=words)):
                stage.play(Create(marks), FadeIn(notes), run_time=0.8)
                stage.wait(1.2)
            stage.play(FadeOut(marks), FadeOut(notes), run_time=0.4)

        self.symbols(stage, plan, sums, below)

    @staticmethod
    def symbols(stage: Stage, plan: TokensPlan, sums, below) -> None:
        """5. each column is one vector: E with its position, written under it (in the row the
        position columns used), an arrow from the column to its name; the columns stay."""
        th, say = stage.theme, stage.say
        syms = VGroup(*(symbol("E", i + 1, font_size=44, color=th.embedding).move_to(
            [sums[k].brackets.get_x(), below[k][1], 0]) for k, i in enumerate(plan.shown)))
        dots = VGroup(*(label("…", font_size=FONT, color=th.dim).move_to(e) for e in below[len(plan.shown):]))
        downs = VGroup(*(Arrow(sums[k].get_bottom(), syms[k].get_top(), buff=0.15, stroke_width=2.5,
                               max_tip_length_to_length_ratio=0.1, color=th.dim)
                         for k in range(len(plan.shown))))
        with stage.narrating(say("embeddings.tokens.caption_symbols")):
            stage.play(*(Create(a) for a in downs), run_time=0.6)
            stage.play(*(FadeIn(s, shift=DOWN * 0.2) for s in syms), FadeIn(dots), run_time=1.0)
            stage.wait(1.2)
        stage.drawn[TokensToVectors.key]["symbols"] = syms

    @staticmethod
    def mark_groups(stage: Stage, plan: TokensPlan, col_at: dict, color: str, note: str, beside: dict | None = None):
        """Outline the columns of each marked group of equal words and join them with a bar
        underneath (bars of different groups at different depths); the notes sit in one row below
        the lowest bar, so no tick line crosses a note. `beside`: what stands by a column (its ≈
        marks), taken into its outline (the outline had cut through them)."""
        say = stage.say
        beside = beside or {}
        marks, notes = VGroup(), VGroup()
        low = min(c.get_bottom()[1] for c in col_at.values())
        for g_no, g in enumerate(plan.marked):
            rects = VGroup(*(SurroundingRectangle(VGroup(col_at[i], *([beside[i]] if i in beside and len(beside[i]) else [])),
                                                  color=color, buff=0.06, stroke_width=2.5)
                             for i in g.positions))
            y = low - 0.25 - 0.3 * g_no
            xs = [col_at[i].get_x() for i in g.positions]
            bar = Line([xs[0], y, 0], [xs[-1], y, 0], color=color, stroke_width=2)
            ticks = VGroup(*(Line([x, y, 0], [x, low - 0.08, 0], color=color, stroke_width=2) for x in xs))
            marks.add(rects, bar, ticks)
            key = note
            if note == "note_differ" and g.differ_after and _shown_alike(col_at, g.positions):
                key = "note_differ_rounded"  # a drawn row reads the same in both columns: differ past it
            text = say(f"embeddings.tokens.{key}", word=say.quote(g.word), count=plan.d_model,
                       equal=g.equal_lookup, differ=g.differ_after)
            notes.add(label(text, font_size=20, color=color))
        notes.arrange(RIGHT, buff=0.6)
        fit_into(notes, stage.region("full").width - 0.1, 1.0)
        notes.move_to([0, low - 0.25 - 0.3 * (len(plan.marked) - 1) - 0.12 - notes.height / 2, 0])
        return marks, notes


def _shown_alike(col_at: dict, positions) -> bool:
    """Whether some row the columns at `positions` draw reads the same in all of them (one decimal)."""
    from ..style import fmt_vec

    cols = [col_at[i] for i in positions]
    rows = [r for r in cols[0].shown_indices if r is not None]
    return any(len({fmt_vec(float(c.values[r])) for c in cols}) == 1 for r in rows)
