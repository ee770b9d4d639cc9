"""Keys as possible answers: the queries move up into a strip across the top (or appear there, stand
alone), W_K gives every word a key down the left, the focus's best keys answer its question, and
a side view shows the real angles in the query/key space. Hands on `stage.words`, `stage.queries`
(the strip) and `stage.keys` (the key vectors, `.tokens` in sentence order)."""

from __future__ import annotations

import numpy as np
from manim import (
    DOWN, LEFT, RIGHT, UP, Create, CurvedArrow, FadeIn, FadeOut, Indicate, LaggedStart, ReplacementTransform,
    SurroundingRectangle, Transform, VGroup, config,
)

from ..components.angle_view import AngleView
from ..components.bubble import SpeechBubble
from ..components.space3d import EmbeddingSpace
from ..components.text import label, number
from ..components.vectors import ellipsis_dots, math, symbol_source
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter
from ..plans.qkv import KeyPlan, plan_key
from ..stage import Stage
from .embedding_parts import direction_name
from .qkv_parts import camera_home, drop_below, settle, short, side_arrow, slot_row, token_group, vector

STRIP_Y = 3.6  # the word row of the query strip
ROW_TOP, ROW_BOTTOM, ROW_SPACING = 0.75, -3.52, 0.74  # key rows down the left
NOTE_ROOM = 0.22  # the last row raised this much for the note under its Ê
X_WORD_RIGHT, X_E, X_K, LEFT_EDGE = -4.75, -4.05, -2.25, -6.75
MIN_SHARE = 0.45  # the shortest arrow of the angle view, as a share of the longest
SKEW_DEG = 15.0  # the embedding picture's drawn angle may miss the real one by this much before the note says so
QUESTION_GAP, QUESTION_DROP, EDGE_ROOM = 0.35, 0.45, 0.25  # the question right of the key rows, under the names
SIDE = DOWN * (config.frame_height + 1.0)  # the side view is drawn below the frame; the camera goes there


class Key(Chapter):
    key = "key"
    continues = ("queries", "words")

    def plan(self, setting) -> KeyPlan:
        return plan_key(setting)

    def play(self, stage: Stage, plan: KeyPlan) -> None:
        th, say = stage.theme, stage.say
        i, tokens = plan.focus, plan.tokens
        word = say.quote(tokens[i])
        drawn = stage.drawn.setdefault("key", {})
        rows, keys = self.key_rows(stage, plan)
        # a lesson that opens here has not met the queries: its first caption says what the top row is
        with stage.narrating(say("qkv.key.keys" if self.goes_on_from(stage) else "qkv.key.keys_first")):
            words, queries = self.strip(stage, plan)
            entering = [VGroup(r, keys.by_token[r.token]) if r.token is not None else r for r in rows]
            stage.play(LaggedStart(*(FadeIn(g, shift=RIGHT * 0.2) for g in entering), lag_ratio=0.12), run_time=2.2)
            stage.remove(*entering)
            row_names = VGroup(*rows)  # each key's word, E⃗ and name, one mobject the stage can keep with the keys
            stage.add(row_names)
            settle(stage, keys)
            stage.wait(0.5)
        if plan.rotary:  # the keys (and queries) shown are the rotated ones the scores use: outlined
            rotated = SurroundingRectangle(keys, color=th.key, buff=0.1, stroke_width=2.5)
            with stage.narrating(say("real.key.rotary")):
                stage.play(Create(rotated), run_time=0.6)
                stage.wait(0.3)
            stage.play(FadeOut(rotated), run_time=0.3)
        stage.hand_on(words=words, queries=queries, keys=keys)
        # what names the columns and rows stays with them through the next chapter's card (review 52)
        stage.attach(keys, row_names)
        stage.attach(queries, drawn.get("query_names"))

        # the focus query asks its question
        q_col = queries.by_token[i]
        names = drawn.get("query_names", VGroup())
        question = self.question_bubble(stage, plan, q_col, keys, names)
        row_of = {r.token: r for r in rows if r.token is not None}
        drawn.update(rows=row_of, keys=keys, queries=queries, words=words, question=question)
        with stage.narrating(say("qkv.key.compare", d_head=plan.d_head)):
            stage.play(words.animate.highlight(words.slot_of[i], th.query), Indicate(q_col, color=th.query),
                       row_of[i].word_box.box.animate.set_stroke(th.query, width=3), run_time=0.8)
            # where the bubble had to go under its query, the names it sits on step aside while it speaks
            under = [m for m in names if m.get_left()[0] < question.get_right()[0] and
                     m.get_right()[0] > question.get_left()[0] and m.get_bottom()[1] < question.get_top()[1]]
            stage.play(question.grow(), *(m.animate.set_opacity(0) for m in under), run_time=0.7)
            stage.wait(0.6)

        # answers from the words the focus really attends to most
        right_edge = max(keys.by_token[j].get_right()[0] for j in plan.tops)
        answers = VGroup()
        for j, line in zip(plan.tops, plan.answers):
            kv = keys.by_token[j]
            b = SpeechBubble(say(line), target=kv.brackets, direction=RIGHT, theme=th, font_size=19, color=th.key,
                             tail_length=0.25 + right_edge - kv.get_right()[0], pad=0.13, max_width=3.2, buff=0.14)
            b.answer_for = j
            answers.add(b)
        drawn["answers"] = list(answers)
        with stage.narrating(say("qkv.key.answers", count=len(plan.tops), word=word,
                                 keys=say.quoted_words([tokens[j] for j in plan.tops]))):
            stage.play(FadeOut(question), *(m.animate.set_opacity(1) for m in under), run_time=0.3)
            stage.play(LaggedStart(*(b.grow() for b in answers), lag_ratio=0.4),
                       *(row_of[j].word_box.box.animate.set_stroke(th.key, width=3) for j in plan.tops), run_time=1.2)
            stage.wait(1.6)
        self.side_view(stage, plan, answers)

    @staticmethod
    def question_bubble(stage: Stage, plan: KeyPlan, q_col, keys, names) -> SpeechBubble:
        """The focus query's question. It stands in the room right of the key rows, a little under the
        queries' names, its tail from the focus's own name, so it covers no name. Where that room is too
        narrow, it hangs under its query (and the names under it step aside while it speaks)."""
        th, say = stage.theme, stage.say
        style = dict(theme=th, font_size=20, color=th.query, pad=0.14, max_width=4.2)
        lean = RIGHT if q_col.get_x() < 2.5 else LEFT
        under_query = SpeechBubble(say(plan.question), target=q_col.brackets, direction=DOWN + lean,
                                   tail_length=0.22, **style)
        name = dict(zip(getattr(names, "tokens", ()), names)).get(plan.focus)
        if name is None:
            return under_query
        left = keys.get_right()[0] + QUESTION_GAP
        room = config.frame_width / 2 - EDGE_ROOM - left
        # in the room right of the keys on one line, else on two (review 50, pt: the one line did not fit and
        # the bubble hung under its query, over the names Q⃗₄–Q⃗₆)
        text = say(plan.question)
        words = text.split(" ")
        tries = [text] + [" ".join(words[:k]) + "\n" + " ".join(words[k:]) for k in range(1, len(words))]
        fitting = [t for t in tries if SpeechBubble(t, **style).box_size[0] <= room]
        if not fitting:
            return under_query
        text = min(fitting, key=lambda t: (t.count("\n"), SpeechBubble(t, **style).box_size[0]))
        probe = SpeechBubble(text, **style)
        w, h = probe.box_size
        tip = name.get_bottom() + DOWN * 0.06
        centre = np.array([left + w / 2, names.get_bottom()[1] - QUESTION_DROP - h / 2, 0])
        return SpeechBubble(text, target=tip, at=centre, **style)

    # --- the queries across the top ------------------------------------------------------------
    def strip(self, stage: Stage, plan: KeyPlan):
        """The word row and the queries across the top: morphed from the query chapter's picture
        when it is on stage, else faded in. Returns (words, queries)."""
        th, ht = stage.theme, plan.head_trace
        row, xs = slot_row(plan.tokens, plan.slots, th, font_size=24)
        row.set_y(STRIP_Y)
        top = row.get_bottom()[1] - 0.12
        cols, dots = {}, VGroup()
        for s, j in enumerate(plan.slots):
            if j is None:
                continue
            c = vector(ht.q[j], plan.strip[j], font_size=18, theme=th, bracket_color=th.query)
            cols[j] = c.move_to([xs[s], 0, 0]).align_to([0, top, 0], UP)
        y_mid = VGroup(*cols.values()).get_y()
        for s, j in enumerate(plan.slots):
            if j is None:
                dots.add(ellipsis_dots(RIGHT, color=th.dim).move_to([xs[s], y_mid, 0]))
        queries = token_group(cols)
        # each query named under its column: unnamed, the strip read as the embeddings W_K is about to turn
        names = VGroup(*(math(symbol_source("Q", j + 1), font_size=22, color=th.query).next_to(c, DOWN, buff=0.08)
                         for j, c in cols.items()))
        names.tokens = list(cols)
        stage.drawn.setdefault(self.key, {})["query_names"] = names
        if not self.goes_on_from(stage):
            stage.clear()
            stage.play(FadeIn(row, lag_ratio=0.05), FadeIn(queries, lag_ratio=0.05), FadeIn(dots), FadeIn(names),
                       run_time=1.0)
            return row, queries
        old_w = stage.words if stage.has("words") else None
        old_q = stage.queries if stage.has("queries") else None
        extras = [m for m in stage.mobjects if m is not old_w and m is not old_q]
        anims = [FadeOut(m) for m in extras] + [FadeIn(dots), FadeIn(names)]
        words = row
        if old_w is not None and len(old_w) == len(row):
            anims.append(Transform(old_w, row))
            words = old_w
            words.slot_of, words.xs, words.shown = row.slot_of, row.xs, row.shown
        else:
            anims += [FadeIn(row)] + ([FadeOut(old_w)] if old_w is not None else [])
        old_cols = dict(zip(old_q.tokens, old_q.submobjects)) if old_q is not None else {}
        for j, c in cols.items():
            anims.append(ReplacementTransform(old_cols.pop(j), c) if j in old_cols else FadeIn(c))
        anims += [FadeOut(c) for c in old_cols.values()]
        stage.play(*anims, run_time=1.2)
        stage.remove(*extras, *old_cols.values())
        settle(stage, queries)
        return words, queries

    # --- word → E → W_K → K down the left --------------------------------------------------------
    def key_rows(self, stage: Stage, plan: KeyPlan):
        th, ht = stage.theme, plan.head_trace
        n = len(plan.rows)
        # (with Ê, room under the last row for its note: nine rows left it cut by the frame's foot)
        bottom = ROW_BOTTOM + (NOTE_ROOM if plan.normalized else 0.0)
        spacing = min(ROW_SPACING, (ROW_TOP - bottom) / max(n - 1, 1))
        y0 = (ROW_TOP + bottom) / 2 + (n - 1) / 2 * spacing
        boxes = WordBoxes([short(plan.tokens[j]) for j in plan.rows if j is not None], theme=th, font_size=26)
        widest = max(b.width for b in boxes)
        if widest > 2.1:
            boxes.scale(2.1 / widest)
        tallest = max(b.height for b in boxes)
        if tallest > 0.9 * spacing:  # a gap between two rows' boxes
            boxes.scale(0.9 * spacing / tallest)
        box_of = iter(boxes)
        rows, kvecs = VGroup(), {}
        for s, j in enumerate(plan.rows):
            y = y0 - s * spacing
            if j is None:
                grp = VGroup(ellipsis_dots(DOWN, color=th.dim).move_to([X_WORD_RIGHT - 0.4, y, 0]),
                             ellipsis_dots(DOWN, color=th.dim).move_to([0.0, y, 0]))
                grp.token = None
                rows.add(grp)
                continue
            wb = next(box_of)
            wb.move_to([X_WORD_RIGHT - wb.width / 2, y, 0])
            e = math(symbol_source("E", j + 1, normed=plan.normalized), font_size=26, color=th.embedding).move_to([X_E, y, 0])
            a2 = side_arrow(X_E + 0.35, X_K - 0.35, y, th.dim, tip=0.15)
            ksym = math(symbol_source("K", j + 1), font_size=26, color=th.key).move_to([X_K, y, 0])
            eq = label("=", font_size=24, color=th.text).next_to(ksym, RIGHT, buff=0.15)
            kvec = vector(ht.k[j], plan.keys[j], font_size=18, theme=th, bracket_color=th.key, horizontal=True,
                          entry_gap=0.16).next_to(eq, RIGHT, buff=0.15)
            grp = VGroup(wb, side_arrow(X_WORD_RIGHT + 0.05, X_E - 0.32, y, th.dim), e, a2,
                         # a rotary model turns each key by its position: R_j W_K, as the query lesson writes R_j W_Q
                         math(f"R_{j + 1} W_K" if plan.rotary else "W_K", font_size=22, color=th.key)
                         .next_to(a2, UP, buff=0.03), ksym, eq)
            grp.token, grp.word_box = j, wb
            rows.add(grp)
            kvecs[j] = kvec
        keys = token_group(kvecs)
        dx = LEFT_EDGE - VGroup(rows, keys).get_left()[0]  # flush left
        rows.shift(RIGHT * dx)
        keys.shift(RIGHT * dx)
        if plan.normalized:  # Ê: what W_K reads after the layer's norm, as the query lesson labels it
            last = next(g for g in reversed(rows) if g.token is not None)
            note = label(stage.say("qkv.units.normalized"), 18, th.dim).next_to(last[2], DOWN, buff=0.12)
            note.align_to(last[2], LEFT)
            last.add(note)
        return rows, keys

    # --- side view: embedding space → query/key space ----------------------------------------------
    def side_view(self, stage: Stage, plan: KeyPlan, answers) -> None:
        th, say, ht = stage.theme, stage.say, plan.head_trace
        side, tokens, i = plan.side, plan.tokens, plan.focus
        j, c = side.key, side.contrast
        X = plan.head_input
        space = EmbeddingSpace(plan.trace, list(side.axes) if side.axes else None, fit_to=[X[i], X[j]], theme=th,
                               extent=1.75, font_size=20, axis_text=[direction_name(say, a, tokens) for a in side.axis_names])
        space.move_to(LEFT * 3.9 + DOWN * 0.35 + SIDE)
        ea = space.arrow(X[i], th.query, symbol_source("E", i + 1, normed=plan.normalized), name="Ei", attach=False)
        eb = space.arrow(X[j], th.key, symbol_source("E", j + 1, normed=plan.normalized), name="Ej", attach=False)
        others = [(ht.k[j], th.key, symbol_source("K", j + 1))]
        if c is not None:
            others.append((ht.k[c], th.dim, symbol_source("K", c + 1)))
        # directions are what the view is about: a key far shorter than the query (a first token's, say)
        # is drawn at MIN_SHARE of the longest arrow, with its head; the note then says so. Labels stay
        # clear of the cosines' boxes (drawn around them later, 0.06 out).
        view = AngleView(ht.q[i], others, ref_label=symbol_source("Q", i + 1), theme=th, extent=2.3, font_size=22,
                         note=say("qkv.key.angle_note", d_head=plan.d_head), number_scale=1.1, note_scale=0.95,
                         min_share=MIN_SHARE, length_note=say("qkv.key.length_note"), label_gap=0.18)
        if view.note is not None and view.note.width > 6.6:
            view.note.scale_to_fit_width(6.6)
        view.move_to(RIGHT * 3.6 + DOWN * 0.2 + SIDE)
        if view.get_right()[0] > 6.8:
            view.shift(LEFT * (view.get_right()[0] - 6.8))
        t_left = label(say("qkv.key.space_embedding", d_model=plan.d_model), font_size=24, color=th.text)
        t_left.move_to([-3.9, 3.0, 0] + SIDE)
        t_right = label(say("qkv.key.space_query_key", d_head=plan.d_head), font_size=24, color=th.text)
        t_right.move_to([view.get_x(), 3.0, 0] + SIDE)
        maps = CurvedArrow(t_left.get_right() + RIGHT * 0.2 + DOWN * 0.35,
                           t_right.get_left() + LEFT * 0.2 + DOWN * 0.35, angle=0.5, color=th.dim, stroke_width=3)
        map_label = VGroup(math("W_Q", font_size=24, color=th.query), label(",", font_size=22, color=th.dim),
                           math("W_K", font_size=24, color=th.key)).arrange(RIGHT, buff=0.08)
        map_label.next_to(maps, DOWN, buff=0.08)
        # the three axes are chosen for the picture, not the model's own dimensions: the frame says so
        # three axes cannot keep every angle of 576 (or 64) dimensions: when the drawn angle between the two
        # embeddings misses the one their cosine says by more than SKEW_DEG, the note says the angle is not real
        drawn_deg = space.drawn_angle(ea, eb)
        real_deg = float(np.degrees(np.arccos(np.clip(side.cos_embeddings, -1.0, 1.0))))
        skewed = abs(drawn_deg - real_deg) > SKEW_DEG
        axes_note = label(say("qkv.key.axes_note_skewed" if skewed else "qkv.key.axes_note", d_model=plan.d_model),
                          font_size=20, color=th.dim)
        if axes_note.width > 6.0:
            axes_note.scale_to_fit_width(6.0)
        axes_note.next_to(space, DOWN, buff=0.2)
        cos_e = number(side.cos_embeddings, "signed2", font_size=24, color=th.text)
        e_i, e_j = (symbol_source("E", k + 1, normed=plan.normalized) for k in (i, j))  # as the arrows are named
        cos_line = VGroup(math(f"cos\\({e_i}, {e_j}\\) =", font_size=26,
                               color=th.text), cos_e).arrange(RIGHT, buff=0.12).move_to([-3.9, -3.2, 0] + SIDE)
        stage.drawn["key"].update(angle_view=view, space=space, embedding_cosine=cos_e, axes_note=axes_note, cos_line=cos_line,
                                  embedding_angles=(drawn_deg, real_deg))
        home = stage.camera_frame.get_center()
        with stage.narrating(say(side.embeddings_caption, word=say.quote(tokens[i]), other=say.quote(tokens[j]))):
            stage.play(stage.camera_frame.animate.move_to(home + SIDE), FadeOut(answers), run_time=1.0)
            stage.play(FadeIn(t_left), FadeIn(space), FadeIn(space.axis_labels), FadeIn(axes_note), run_time=0.8)
            stage.play(space.grow_arrow(ea), space.grow_arrow(eb), run_time=0.9)
            stage.play(FadeIn(cos_line), run_time=0.5)
            stage.wait(0.6)
        with stage.narrating(say("qkv.key.side_map")):
            stage.play(FadeIn(t_right), FadeIn(maps), FadeIn(map_label), run_time=0.8)
            stage.play(view.grow(), run_time=1.2)
            stage.wait(0.6)
        text = say(side.key_caption, token=say.quote(tokens[j]), cos=side.cos_key)
        if c is not None:
            text = say("qkv.key.two_sentences", first=text,
                       second=say(side.contrast_caption, token=say.quote(tokens[c]), cos=side.cos_contrast))
        # this block's own step: the cosines it reads out, boxed (they stay boxed until the camera leaves)
        boxes = VGroup(*(SurroundingRectangle(arc[1], color=color, buff=0.06, stroke_width=2.5)
                         for arc, color in zip(view.arcs, (th.key, th.dim))))
        with stage.narrating(text):
            stage.play(Indicate(view.arrows[0], color=th.key), Indicate(view.arcs[0], color=th.key), run_time=1.0)
            stage.play(Create(boxes), run_time=0.6)
            stage.wait(1.0)
        def home():  # when the next chapter starts: the last frame is the angles the caption spoke of
            stage.play(camera_home(stage, run_time=1.0))
            drop_below(stage, SIDE[1] / 2)

        stage.on_leave(home)
