"""`query`, `key`, `values`: the first and last steps of one attention head, on real numbers.

Each step is a method of `QKVSteps` (a mixin for `TraceScene`), so the flagship
`fluffy_blue_creature` can chain them on one canvas; each is also a scene of its own.

The step contract: a step assumes the camera frame at its default place and size when it starts
and restores it if it moved it; it starts with `self.clear_all()` when it needs a clean canvas;
it leaves its final picture on screen; every number it draws is read from the trace.

What a step puts on screen is also recorded in `self.qkv[step]` (a dict of the mobjects that
carry numbers), so tests can compare them with the trace.
"""

from __future__ import annotations


import numpy as np
from manim import (
    DOWN, LEFT, RIGHT, UP, Arrow, Brace, CurvedArrow, FadeIn, FadeOut, Indicate,
    LaggedStart, ReplacementTransform, Restore, Transform, VGroup, Write,
)

from .base import TraceScene
from .components.angle_view import AngleView, cosine
from .components.bubble import SpeechBubble
from .components.matrices import MatVecProduct, WeightMatrix
from .components.space3d import EmbeddingSpace, pick_axes
from .components.text import fmt_signed2, label, number
from .components.vectors import VectorColumn, ellipsis_dots, math, symbol_source, token_window
from .components.word_boxes import WordBoxes
from .registry import step_scene

MAX_SLOTS = 9  # token columns side by side (more tokens: ellipses)
MAX_ROWS = 9  # token rows down the left (keys)
SLOT_WIDTH_MAX = 1.65
ROW_SPACING = 0.74

# The question a head's query "asks" and the answer its favourite keys "give": a picture of the
# head's learned role (the toy world names its heads). Unknown heads get a neutral pair.
HEAD_LINES = (
    ("adjective", "Any adjectives in front of me?", "Me! An adjective, right here."),
    ("previous", "Who comes right before me?", "Me, just before you!"),
    ("sense", "Anyone here who settles my meaning?", "I can help with that!"),
    ("verb", "Which verb acts on me?", "Me! I'm the verb."),
)
NEUTRAL_LINES = ("Which earlier words matter to me?", "Me! I'm relevant.")


def head_lines(name: str) -> tuple[str, str]:
    low = name.lower()
    for key, question, answer in HEAD_LINES:
        if key in low:
            return question, answer
    return NEUTRAL_LINES


def top_keys(pattern_row: np.ndarray, k: int = 3, min_weight: float = 0.1) -> list[int]:
    """The keys a query attends to most: up to `k`, each with weight >= `min_weight` (at least one)."""
    order = np.argsort(-pattern_row, kind="stable")
    picked = [int(j) for j in order[:k] if pattern_row[j] >= min_weight]
    return picked or [int(order[0])]


def contrast_key(scores_row: np.ndarray, mask_row: np.ndarray, exclude) -> int | None:
    """The visible key with the lowest score (a key that does not answer), or None."""
    cands = [j for j in range(len(scores_row)) if not mask_row[j] and j not in set(exclude)]
    if not cands:
        return None
    return int(min(cands, key=lambda j: scores_row[j]))


def short(token: str, n: int = 11) -> str:
    return token if len(token) <= n else token[: n - 1] + "…"


def slot_row(tokens, shown, theme, *, slot_width: float | None = None, font_size: float = 32,
             centre_x: float = 0.0, width: float = 13.4) -> tuple[WordBoxes, list[float]]:
    """Word boxes for the shown tokens (None: an ellipsis slot), one per fixed-width slot, so
    that columns drawn under the words never collide however short the words are. The slots
    share `width` (at most SLOT_WIDTH_MAX each) unless `slot_width` is given. Returns the boxes
    and each slot's x: move the row only vertically (`set_y`) to keep them valid."""
    slot_width = slot_width or min(SLOT_WIDTH_MAX, width / len(shown))
    words = [short(tokens[j]) if j is not None else "…" for j in shown]
    boxes = WordBoxes(words, theme=theme, font_size=font_size)
    widest = max(boxes.box(s).width for s in range(len(shown)))
    gap = 0.25  # between the two widest neighbours: words that fill their slots must not touch
    if widest > slot_width - gap:
        boxes.scale((slot_width - gap) / widest)
    n = len(shown)
    xs = [centre_x + (s - (n - 1) / 2) * slot_width for s in range(n)]
    for s, x in enumerate(xs):
        boxes[s].set_x(x)
        if shown[s] is None:
            # invisible for good: no width to restore, filled with the background
            boxes.box(s).set_stroke(width=0, opacity=0).set_fill(color=theme.background, opacity=0)
            boxes.word(s).set_fill(color=theme.dim)
    boxes.shown = list(shown)
    boxes.slot_of = {j: s for s, j in enumerate(shown) if j is not None}
    return boxes, xs


def down_arrow(top: float, bottom: float, x: float, color: str, name: str | None = None,
               name_color: str | None = None, font_size: float = 22) -> VGroup:
    """A short vertical arrow, optionally labelled by a matrix name on its right (E⃗ → W → Q⃗)."""
    arr = Arrow([x, top, 0], [x, bottom, 0], buff=0, color=color, stroke_width=3,
                max_tip_length_to_length_ratio=0.25, max_stroke_width_to_length_ratio=8)
    grp = VGroup(arr)
    if name:
        lab = math(name, font_size=font_size, color=name_color or color)
        lab.next_to(arr, RIGHT, buff=0.06)
        grp.add(lab)
    return grp


def dots_column(x: float, top: float, bottom: float, color: str) -> VGroup:
    """A horizontal ellipsis repeated down a hidden slot."""
    n = 3
    return VGroup(*(ellipsis_dots(RIGHT, color=color).move_to([x, top + (bottom - top) * (k + 0.5) / n, 0])
                    for k in range(n)))


class QKVSteps:
    """The query, key and value steps of one head (mix into a TraceScene)."""

    # --- shared data ------------------------------------------------------------------------
    def _qkv_data(self):
        tr = self.trace
        ht = self.head_trace()
        i = self.focus_index()
        if not hasattr(self, "qkv"):
            self.qkv = {}
        return tr, ht, i

    def _qkv_head_input(self):
        """What the head reads: the layer's attention input (the embedding, after LayerNorm if any)."""
        return np.asarray(self.trace.layers[self.layer].attn_in, dtype=float)

    def _qkv_frame_save(self):
        self.camera.frame.save_state()

    def _qkv_frame_restore(self, run_time: float = 1.0):
        return Restore(self.camera.frame, run_time=run_time)

    def _qkv_focus_top(self, ht, i):
        tops = [j for j in top_keys(ht.pattern[i]) if j != i] or top_keys(ht.pattern[i])
        return tops

    # ========================================================================================
    # query
    # ========================================================================================
    def step_query(self):
        th = self.theme
        tr, ht, i = self._qkv_data()
        X = self._qkv_head_input()
        pos = i + 1  # words are numbered from 1 on screen, as in the video
        word = tr.tokens[i]
        d_model, d_head = X.shape[1], ht.q.shape[1]
        question, _ = head_lines(ht.name)
        rec = self.qkv.setdefault("query", {})
        self.clear_all()

        shown = token_window(len(tr.tokens), [i] + self._qkv_focus_top(ht, i), MAX_SLOTS)
        row, xs = slot_row(tr.tokens, shown, th)
        row.set_y(2.15)
        s_i = row.slot_of[i]
        box = row.box(s_i)
        lean = RIGHT if box.get_x() < 2.5 else LEFT
        bubble = SpeechBubble(question, target=box, direction=UP + lean, theme=th, font_size=24,
                              color=th.query, tail_length=0.35)
        rec.update(row=row, bubble=bubble)
        lift = 1.6  # the row starts lower (centre stage) and rises when the embedding appears
        VGroup(row, bubble).shift(DOWN * lift)

        with self.narrating(f"Follow one word, “{word}”. On its own, its embedding knows only the word and its position."):
            self.play(FadeIn(row, lag_ratio=0.05), run_time=1.0)
            self.play(row.animate.highlight(s_i, th.query).dim_others(s_i, 0.55), run_time=0.6)
        with self.narrating("Attention lets it gather meaning from the words before it. Picture it asking them a question:"):
            self.play(bubble.grow(), run_time=0.7)
            self.wait(1.3)

        # the embedding under the word
        col = VectorColumn(X[i], head=5, tail=1, font_size=24, theme=th, symbol=symbol_source("E", pos),
                           show_symbol=True)
        col.next_to(box, DOWN, buff=0.3).set_x(box.get_x()).shift(UP * lift)
        if col.get_right()[0] > 6.6:
            col.shift(LEFT * (col.get_right()[0] - 6.6))
        brace = Brace(col.brackets, direction=RIGHT, color=th.dim, buff=0.1)
        brace_text = label(f"{d_model} numbers", font_size=24, color=th.dim).next_to(brace, RIGHT, buff=0.08)
        side = RIGHT
        if brace_text.get_right()[0] > 6.9:
            brace = Brace(col.brackets, direction=LEFT, color=th.dim, buff=0.1)
            brace_text.next_to(brace, LEFT, buff=0.08)
            side = LEFT
        with self.narrating(f"Its embedding E is a list of {d_model} numbers; a few are shown here."):
            self.play(VGroup(row, bubble).animate.shift(UP * lift), run_time=0.7)
            self.play(FadeIn(col, shift=DOWN * 0.2), run_time=0.7)
            self.play(FadeIn(brace), FadeIn(brace_text, shift=side * 0.1), run_time=0.5)
            self.wait(0.6)

        # W_Q times E, row by row
        W = WeightMatrix.from_trace(ht.W_Q, name="W_Q", name_color=th.query, theme=th, font_size=20)
        vec = VectorColumn(X[i], head=W.col_head, tail=W.col_tail, font_size=20, theme=th,
                           symbol=symbol_source("E", pos), show_symbol=True)
        prod = MatVecProduct(W, vec, result_symbol=symbol_source("Q", pos), result_color=th.query)
        if prod.width > 12.8:
            prod.scale_to_fit_width(12.8)
        prod.move_to(DOWN * 1.55)
        rec.update(product=prod, W=W, E=vec)
        q_brace = Brace(prod.result.brackets, direction=RIGHT, color=th.dim, buff=0.08)
        q_text = label(f"{d_head} numbers", font_size=18, color=th.dim).next_to(q_brace, RIGHT, buff=0.06)
        zoom_on = VGroup(prod, q_brace, q_text)
        self._qkv_frame_save()
        with self.narrating("The question is encoded as another vector, the query: a matrix W_Q times the embedding."):
            self.play(FadeOut(brace), FadeOut(brace_text), FadeOut(bubble), run_time=0.4)
            self.play(ReplacementTransform(col, vec), FadeIn(W, shift=RIGHT * 0.3), FadeIn(prod.equals),
                      FadeIn(prod.result), run_time=1.0)
            self.play(self.camera.frame.animate.set(width=max(zoom_on.width * 1.12, 9.0)).move_to(zoom_on.get_center() + UP * 0.3),
                      run_time=0.9)
        with self.narrating("Each entry of the query is one row of W_Q times the embedding: multiply entry by entry, then add."):
            rows = prod.shown_rows()
            self.play(prod.sweep(rows=rows[:2], run_time_per_row=1.1, fade_boxes=False))
        with self.narrating("The matrix entries are learned weights: blue positive, red negative, brighter larger."):
            self.play(prod.sweep(rows=rows[2:], run_time_per_row=0.45))
        with self.narrating(f"The query is short: {d_head} numbers, against the embedding's {d_model}."):
            self.play(FadeIn(q_brace), FadeIn(q_text), run_time=0.6)
            self.wait(1.0)
        if np.abs(ht.b_Q).max() > 0:  # a model with biases: the query is W_Q E plus b_Q
            q_real = VectorColumn(ht.q[i], head=W.row_head, tail=W.row_tail, font_size=prod.result.font_size,
                                  theme=th, symbol=symbol_source("Q", pos), symbol_color=th.query, show_symbol=True,
                                  row_height=W.row_height).move_to(prod.result)
            with self.narrating("Adding the learned bias b_Q gives the query itself."):
                self.play(Transform(prod.result, q_real), run_time=0.8)
            rec["product_result"] = q_real
        else:
            rec["product_result"] = prod.result

        # every word gets its query
        row_target = row.copy().set_y(3.1)
        col_font = 22 if len(shown) <= 8 else 20
        y_sym, y_arrow_top, y_arrow_bot, y_col_top = 2.3, 1.95, 1.2, 0.95
        e_syms, arrows, q_cols, q_syms, dots = VGroup(), VGroup(), VGroup(), VGroup(), VGroup()
        cols_by_token = {}
        for s, j in enumerate(shown):
            x = xs[s]
            if j is None:
                dots.add(dots_column(x, y_sym, y_col_top - 2.6, th.dim))
                continue
            e_syms.add(math(symbol_source("E", j + 1), font_size=32, color=th.embedding).move_to([x, y_sym, 0]))
            arrows.add(down_arrow(y_arrow_top, y_arrow_bot, x - 0.15, th.dim, "W_Q", th.query, font_size=24))
            qc = VectorColumn(ht.q[j], head=5, tail=1, font_size=col_font, theme=th, bracket_color=th.query)
            qc.move_to([x, 0, 0]).align_to([0, y_col_top, 0], UP)
            qs = math(symbol_source("Q", j + 1), font_size=32, color=th.query).next_to(qc, DOWN, buff=0.15)
            q_cols.add(qc)
            q_syms.add(qs)
            cols_by_token[j] = qc
        rec.update(q_columns=cols_by_token)
        focus_col = cols_by_token[i]
        others = [c for j, c in cols_by_token.items() if j != i]
        with self.narrating("The same matrix W_Q turns every word's embedding into that word's own query."):
            self.play(self._qkv_frame_restore(run_time=0.9),
                      FadeOut(VGroup(W, vec, prod.equals, q_brace, q_text)),
                      Transform(row, row_target),
                      ReplacementTransform(prod.result, focus_col), run_time=1.0)
            self.play(FadeIn(e_syms, lag_ratio=0.1), FadeIn(arrows, lag_ratio=0.1), FadeIn(dots), run_time=0.9)
            self.play(LaggedStart(*(FadeIn(c, shift=DOWN * 0.2) for c in others), lag_ratio=0.12),
                      FadeIn(q_syms, lag_ratio=0.1), run_time=1.4)
        with self.narrating(f"One query per word, each {d_head} numbers long, all computed at once."):
            self.play(Indicate(q_syms[list(cols_by_token).index(i)], color=th.query), run_time=0.8)
            self.wait(1.0)

    # ========================================================================================
    # key
    # ========================================================================================
    def step_key(self):
        th = self.theme
        tr, ht, i = self._qkv_data()
        X = self._qkv_head_input()
        pos = i + 1
        word = tr.tokens[i]
        question, answer = head_lines(ht.name)
        rec = self.qkv.setdefault("key", {})
        tops = self._qkv_focus_top(ht, i)
        contrast = contrast_key(ht.scores[i], ht.mask[i], tops + [i])
        self.clear_all()

        keep = [i] + tops + ([contrast] if contrast is not None else [])
        shown = token_window(len(tr.tokens), keep, MAX_ROWS)
        n = len(shown)
        spacing = min(ROW_SPACING, 6.6 / max(n - 1, 1))
        y0 = (n - 1) / 2 * spacing + 0.15
        rows = VGroup()
        row_of = {}
        key_rows = {}
        x_word_right, x_e, x_k = -4.75, -4.05, -2.25
        word_boxes = WordBoxes([short(tr.tokens[j]) for j in shown if j is not None], theme=th, font_size=26)
        widest = max(b.width for b in word_boxes)
        if widest > 2.1:
            word_boxes.scale(2.1 / widest)
        wb_iter = iter(word_boxes)
        for s, j in enumerate(shown):
            y = y0 - s * spacing
            if j is None:
                d = ellipsis_dots(DOWN, color=th.dim).move_to([x_word_right - 0.4, y, 0])
                d2 = ellipsis_dots(DOWN, color=th.dim).move_to([0.0, y, 0])
                grp = VGroup(d, d2)
                grp.token = None
                rows.add(grp)
                continue
            wb = next(wb_iter)
            wb.move_to([x_word_right - wb.width / 2, y, 0])
            a1 = Arrow([x_word_right + 0.05, y, 0], [x_e - 0.32, y, 0], buff=0, color=th.dim, stroke_width=2.5,
                       max_tip_length_to_length_ratio=0.3, max_stroke_width_to_length_ratio=8)
            e = math(symbol_source("E", j + 1), font_size=26, color=th.embedding).move_to([x_e, y, 0])
            a2 = Arrow([x_e + 0.35, y, 0], [x_k - 0.35, y, 0], buff=0, color=th.dim, stroke_width=2.5,
                       max_tip_length_to_length_ratio=0.15, max_stroke_width_to_length_ratio=8)
            wk = math("W_K", font_size=22, color=th.key).next_to(a2, UP, buff=0.03)
            ksym = math(symbol_source("K", j + 1), font_size=26, color=th.key).move_to([x_k, y, 0])
            eq = label("=", font_size=24, color=th.text).next_to(ksym, RIGHT, buff=0.15)
            kvec = VectorColumn(ht.k[j], head=4, tail=1, font_size=18, theme=th, bracket_color=th.key,
                                horizontal=True, entry_gap=0.16)
            kvec.next_to(eq, RIGHT, buff=0.15)
            grp = VGroup(wb, a1, e, a2, wk, ksym, eq, kvec)
            grp.token = j
            grp.word_box, grp.e, grp.k_symbol, grp.k_vec = wb, e, ksym, kvec
            rows.add(grp)
            row_of[j] = grp
            key_rows[j] = kvec
        rows.set_x(rows.get_x() - (rows.get_left()[0] + 6.75))  # flush left
        rec.update(rows=row_of, k_vectors=key_rows, tops=tops, contrast=contrast)

        # the focus query, top right, asking its question
        q_col = VectorColumn(ht.q[i], head=4, tail=1, font_size=22, theme=th, bracket_color=th.query,
                             symbol=symbol_source("Q", pos), symbol_color=th.query, show_symbol=True)
        q_col.to_corner(UP + RIGHT, buff=0.5).shift(DOWN * 0.55)
        q_word = label(f"“{short(word)}”", font_size=22, color=th.query).next_to(q_col.symbol, LEFT, buff=0.15)
        q_bubble = SpeechBubble(question, target=q_col.brackets, direction=LEFT + DOWN, theme=th, font_size=20,
                                color=th.query, tail_length=0.3, max_width=3.6)
        rec.update(q_column=q_col)

        with self.narrating("A second matrix, W_K, turns every embedding into a key: think of it as a possible answer."):
            self.play(LaggedStart(*(FadeIn(r, shift=RIGHT * 0.2) for r in rows), lag_ratio=0.12), run_time=2.2)
            self.wait(0.5)
        with self.narrating(f"Keys live in the same {ht.k.shape[1]}-number space as the queries, so the two can be compared."):
            self.play(FadeIn(q_col), FadeIn(q_word), run_time=0.7)
            self.play(q_bubble.grow(), row_of[i].word_box.animate.set_stroke(th.query, width=3), run_time=0.7)
            self.wait(0.6)

        # answers from the words the focus really attends to most
        bubbles = VGroup()
        right_edge = max(row_of[j].get_right()[0] for j in tops)
        for j in tops:
            r = row_of[j]
            b = SpeechBubble(answer if j != i else "Just me, myself.", target=r.k_vec.brackets, direction=RIGHT, theme=th, font_size=19,
                             color=th.key, tail_length=0.25 + right_edge - r.get_right()[0], pad=0.13,
                             max_width=2.9)
            b.answer_for = j
            bubbles.add(b)
        rec.update(bubbles=list(bubbles))
        top_words = " and ".join(f"“{tr.tokens[j]}”" for j in tops)
        with self.narrating(f"The keys of {top_words} are the ones that best answer the query of “{word}”."):
            self.play(FadeOut(q_bubble), run_time=0.3)
            self.play(LaggedStart(*(b.grow() for b in bubbles), lag_ratio=0.4),
                      *(row_of[j].word_box.animate.set_stroke(th.key, width=3) for j in tops), run_time=1.2)
            self.wait(1.6)

        # side view: embedding space -> query/key space
        j = tops[0]
        E_i, E_j = X[i], X[j]
        axes = self.inputs.axes or pick_axes(tr, [E_i, E_j])
        space = EmbeddingSpace(tr, axes, fit_to=[E_i, E_j], theme=th, extent=1.75, font_size=20)
        space.move_to(LEFT * 3.9 + DOWN * 0.35)
        ea = space.arrow(E_i, th.query, symbol_source("E", pos), name="Ei", attach=False)
        eb = space.arrow(E_j, th.key, symbol_source("E", j + 1), name="Ej", attach=False)
        others = [(ht.k[j], th.key, symbol_source("K", j + 1))]
        if contrast is not None:
            others.append((ht.k[contrast], th.dim, symbol_source("K", contrast + 1)))
        view = AngleView(ht.q[i], others, ref_label=symbol_source("Q", pos), theme=th, extent=2.3, font_size=22,
                         note=f"angles to the query are the real ones, measured in {ht.q.shape[1]} dimensions")
        view.move_to(RIGHT * 3.6 + DOWN * 0.2)
        if view.get_right()[0] > 6.8:
            view.shift(LEFT * (view.get_right()[0] - 6.8))
        t_left = label(f"embedding space ({X.shape[1]} numbers)", font_size=24, color=th.text)
        t_left.move_to([-3.9, 3.0, 0])
        t_right = label(f"query / key space ({ht.q.shape[1]} numbers)", font_size=24, color=th.text)
        t_right.move_to([view.get_x(), 3.0, 0])
        maps = VGroup(
            CurvedArrow(t_left.get_right() + RIGHT * 0.2 + DOWN * 0.35, t_right.get_left() + LEFT * 0.2 + DOWN * 0.35,
                        angle=0.5, color=th.dim, stroke_width=3),
        )
        map_label = VGroup(math("W_Q", font_size=24, color=th.query), label(",", font_size=22, color=th.dim),
                           math("W_K", font_size=24, color=th.key)).arrange(RIGHT, buff=0.08)
        map_label.next_to(maps, DOWN, buff=0.08)
        rec.update(angle_view=view, space=space)
        cos_e = cosine(E_i, E_j)
        cos_e_num = number(cos_e, "signed2", font_size=24, color=th.text)
        cos_e_line = VGroup(math(f"cos({symbol_source('E', pos)}, {symbol_source('E', j + 1)}) =", font_size=26,
                                 color=th.text), cos_e_num)
        cos_e_line.arrange(RIGHT, buff=0.12).move_to([-3.9, -3.2, 0])
        rec.update(embedding_cosine=cos_e_num)

        how = "quite different directions" if cos_e < 0.5 else "fairly similar directions"
        with self.narrating(f"A side view. In embedding space, “{word}” and “{tr.tokens[j]}” point in {how}."):
            self.clear_all(run_time=0.6)
            self.play(FadeIn(t_left), FadeIn(space), FadeIn(space.axis_labels), run_time=0.8)
            self.play(space.grow_arrow(ea), space.grow_arrow(eb), run_time=0.9)
            self.play(FadeIn(cos_e_line), run_time=0.5)
            self.wait(0.6)
        c_top = cosine(ht.q[i], ht.k[j])
        with self.narrating("W_Q and W_K carry them into the smaller query/key space; there, angle and length set their dot product."):
            self.play(FadeIn(t_right), FadeIn(maps), FadeIn(map_label), run_time=0.8)
            self.play(view.grow(), run_time=1.2)
            self.wait(0.6)
        if contrast is not None:
            c_con = cosine(ht.q[i], ht.k[contrast])
            rel = ("points along it" if c_top > 0.5 else "is closest to it" if c_top > c_con + 0.1 else "sits near it")
            away = "points away from it" if c_con < -0.05 else "is further off"
            msg = (f"The key of “{tr.tokens[j]}” {rel} (cos {fmt_signed2(c_top)}); the key of “{tr.tokens[contrast]}” "
                   f"{away} (cos {fmt_signed2(c_con)}). That gap is what the scores will measure.")
        else:
            msg = f"The key of “{tr.tokens[j]}” meets the query at cos {fmt_signed2(c_top)}."
        with self.narrating(msg):
            self.play(Indicate(view.arrows[0], color=th.key), Indicate(view.arcs[0], color=th.key), run_time=1.0)
            self.wait(1.6)

    # ========================================================================================
    # values
    # ========================================================================================
    def step_values(self):
        th = self.theme
        tr, ht, i = self._qkv_data()
        X = self._qkv_head_input()
        pos = i + 1
        word = tr.tokens[i]
        d_model, d_head = X.shape[1], ht.v.shape[1]
        rec = self.qkv.setdefault("values", {})
        w = ht.pattern[i]
        tops = top_keys(w)
        self.clear_all()

        shown = token_window(len(tr.tokens), [i] + tops, MAX_SLOTS)
        row, xs = slot_row(tr.tokens, shown, th)
        row.set_y(3.3)
        s_i = row.slot_of[i]
        y_sym, y_arrow_top, y_arrow_bot, y_col_top = 2.55, 2.2, 1.5, 1.25
        col_font = 22 if len(shown) <= 8 else 20
        e_syms, arrows, v_cols, dots = VGroup(), VGroup(), {}, VGroup()
        for s, j in enumerate(shown):
            x = xs[s]
            if j is None:
                dots.add(dots_column(x, y_sym, y_col_top - 2.2, th.dim))
                continue
            e_syms.add(math(symbol_source("E", j + 1), font_size=32, color=th.embedding).move_to([x, y_sym, 0]))
            arrows.add(down_arrow(y_arrow_top, y_arrow_bot, x - 0.15, th.dim, "W_V", th.value, font_size=24))
            vc = VectorColumn(ht.v[j], head=3, tail=1, font_size=col_font, theme=th, bracket_color=th.value)
            vc.move_to([x, 0, 0]).align_to([0, y_col_top, 0], UP)
            v_cols[j] = vc
        v_syms = VGroup(*(math(symbol_source("V", j + 1), font_size=30, color=th.value).next_to(c, DOWN, buff=0.1)
                          for j, c in v_cols.items()))
        rec.update(row=row, v_columns=v_cols)
        with self.narrating(f"A third matrix, W_V, turns each embedding into a value vector: what that word can "
                           f"pass on ({d_head} numbers here)."):
            self.play(FadeIn(row, lag_ratio=0.05), FadeIn(e_syms, lag_ratio=0.05), FadeIn(dots), run_time=1.0)
            self.play(FadeIn(VGroup(*arrows), lag_ratio=0.1), run_time=0.6)
            self.play(LaggedStart(*(FadeIn(c, shift=DOWN * 0.2) for c in v_cols.values()), lag_ratio=0.1),
                      FadeIn(v_syms, lag_ratio=0.1), run_time=1.4)

        # weights of the focus word's column scale the values (opacity follows weight)
        wmax = float(max(w[j] for j in v_cols))
        w_labels = {}
        for j, c in v_cols.items():
            wl = number(w[j], "weight", font_size=24, color=th.text)
            times = label("×", font_size=24, color=th.dim)
            g = VGroup(times, wl).arrange(RIGHT, buff=0.06).next_to(v_syms[list(v_cols).index(j)], DOWN, buff=0.15)
            g.weight = wl
            w_labels[j] = g
        rec.update(weights=w_labels)

        def op(j):
            return 0.2 + 0.8 * float(w[j]) / wmax if wmax > 0 else 1.0

        fade_anims = []
        for k, (j, c) in enumerate(v_cols.items()):
            fade_anims += [c.animate.fade_to(op(j)), v_syms[k].animate.set_fill(opacity=op(j)),
                           w_labels[j].animate.set_fill(opacity=max(op(j), 0.45))]
        top_desc = ", ".join(f"“{tr.tokens[j]}” {w[j]:.2f}" for j in tops)
        rest = 1.0 - float(sum(w[j] for j in tops))
        rest_desc = "the rest next to nothing" if rest < 0.05 else f"the rest {rest:.2f} together"
        with self.narrating(f"“{word}” weighs each value by its attention weight: {top_desc}, {rest_desc}."):
            self.play(row.animate.highlight(s_i, th.query), FadeIn(VGroup(*w_labels.values()), lag_ratio=0.05),
                      run_time=0.9)
            self.play(*fade_anims, run_time=1.0)
            self.wait(0.8)

        # the weighted sum in the focus column
        z_col = VectorColumn(ht.z[i], head=3, tail=1, font_size=col_font, theme=th, bracket_color=th.delta)
        z_label = math("sum_j w_j arrow(V)_j", font_size=28, color=th.delta)
        z_col.move_to([np.clip(xs[s_i], -4.5, 6.0), -2.75, 0])
        z_label.next_to(z_col, LEFT, buff=0.2)
        rec.update(z_column=z_col)
        movers = [c.copy() for j, c in v_cols.items() if w[j] >= 0.005]
        with self.narrating("Adding up the weighted values gives one summary of the context, still in the small space."):
            self.play(*(m.animate.move_to(z_col).fade_to(0.3) for m in movers), run_time=1.0)
            self.play(*(FadeOut(m) for m in movers), FadeIn(z_col), Write(z_label), run_time=0.7)
            self.wait(0.8)

        # value-up: W_O lifts the sum back to embedding space
        Wo = WeightMatrix.from_trace(ht.W_O, name="W_O", name_color=th.output, theme=th, font_size=20)
        zvec = VectorColumn(ht.z[i], head=Wo.col_head, tail=Wo.col_tail, font_size=20, theme=th,
                            bracket_color=th.delta, symbol="sum_j w_j arrow(V)_j", symbol_color=th.delta,
                            show_symbol=True)
        prod = MatVecProduct(Wo, zvec, result_symbol=symbol_source("E", pos, delta=True), result_color=th.delta)
        if prod.width > 12.8:
            prod.scale_to_fit_width(12.8)
        prod.move_to(DOWN * 0.2)
        rec.update(product=prod)
        self._qkv_frame_save()
        with self.narrating(f"Then a second matrix, W_O, lifts that summary back up to {d_model} numbers."):
            self.play(FadeOut(VGroup(row, e_syms, dots, arrows, v_syms, *v_cols.values(), *w_labels.values())),
                      FadeOut(z_label), ReplacementTransform(z_col, zvec), FadeIn(Wo, shift=RIGHT * 0.3),
                      FadeIn(prod.equals), FadeIn(prod.result), run_time=1.0)
            self.play(self.camera.frame.animate.set(width=max(prod.width * 1.15, 9.0)).move_to(prod), run_time=0.8)
            rows_o = prod.shown_rows()
            self.play(prod.sweep(rows=rows_o[:2], run_time_per_row=0.9, fade_boxes=False))
        with self.narrating(f"The result, ΔE, is the change this head proposes for “{word}”. Lifting each value "
                           "first and then adding would give the same vector."):
            self.play(prod.sweep(rows=rows_o[2:], run_time_per_row=0.4))
            self.wait(1.0)

        # E + ΔE = E'
        E_new = tr.updated(self.layer, self.head_index)
        resid = tr.layers[self.layer].resid_in
        e_col = VectorColumn(resid[i], head=5, tail=1, font_size=26, theme=th, symbol=symbol_source("E", pos),
                             show_symbol=True)
        d_col = VectorColumn(ht.delta_e[i], head=5, tail=1, font_size=26, theme=th, bracket_color=th.delta,
                             symbol=symbol_source("E", pos, delta=True), symbol_color=th.delta, show_symbol=True)
        n_col = VectorColumn(E_new[i], head=5, tail=1, font_size=26, theme=th, bracket_color=th.updated,
                             symbol=symbol_source("E", pos, prime=True), symbol_color=th.updated, show_symbol=True)
        plus = label("+", font_size=40, color=th.text)
        eq = label("=", font_size=40, color=th.text)
        sumgrp = VGroup(e_col, plus, d_col, eq, n_col).arrange(RIGHT, buff=0.45).move_to(UP * 0.4)
        plus.match_y(e_col.brackets)
        eq.match_y(e_col.brackets)
        rec.update(e_column=e_col, delta_column=d_col, updated_column=n_col)
        extras = VGroup()
        delta_names = []
        if tr.directions:
            names = list(tr.directions)
            P_old = tr.project(resid[i], names)
            P_new = tr.project(E_new[i], names)
            order = np.argsort(-(P_new - P_old), kind="stable")[:2]
            for k in order:
                nm = names[int(k)]
                if P_new[k] - P_old[k] < 0.3:
                    continue
                a = number(P_old[k], "vec", font_size=26, color=th.embedding)
                b = number(P_new[k], "vec", font_size=26, color=th.updated)
                line = VGroup(label(f"along “{nm}”:", font_size=26, color=th.text), a,
                              label("→", font_size=26, color=th.dim), b).arrange(RIGHT, buff=0.12)
                line.direction, line.before, line.after = nm, a, b
                extras.add(line)
                delta_names.append(nm)
            extras.arrange(DOWN, aligned_edge=LEFT, buff=0.18).next_to(sumgrp, DOWN, buff=0.5)
        rec.update(direction_lines=list(extras))
        with self.narrating(f"Added to the original embedding, it gives the updated embedding E′ for “{word}”."):
            self.play(self._qkv_frame_restore(), FadeOut(VGroup(Wo, zvec, prod.equals)),
                      ReplacementTransform(prod.result, d_col), FadeIn(e_col), FadeIn(plus), run_time=1.0)
            self.play(FadeIn(eq), FadeIn(n_col, shift=RIGHT * 0.2), run_time=0.8)
            self.wait(0.6)
        if len(extras):
            names_txt = " and ".join(f"“{nm}”" for nm in delta_names)
            with self.narrating(f"Measured along the model's named directions, E′ now leans toward {names_txt}: "
                               "the context has moved in."):
                self.play(FadeIn(extras, lag_ratio=0.3), run_time=1.0)
                self.wait(1.8)

        # every word at once
        self._qkv_values_all_words(tr, ht, shown, rec)

    def _qkv_values_all_words(self, tr, ht, shown, rec):
        th = self.theme
        E_new = tr.updated(self.layer, self.head_index)
        resid = tr.layers[self.layer].resid_in
        row, xs = slot_row(tr.tokens, shown, th, width=12.3, centre_x=0.45)
        row.set_y(3.35)
        bands = [("E", resid, th.embedding, dict(), 2.55), ("dE", ht.delta_e, th.delta, dict(delta=True), 0.35),
                 ("E'", E_new, th.updated, dict(prime=True), -1.85)]
        cols = {name: {} for name, *_ in bands}
        grid, dots = VGroup(), VGroup()
        for name, arr, color, sym_kw, y_top in bands:
            for s, j in enumerate(shown):
                if j is None:
                    dots.add(dots_column(xs[s], y_top, y_top - 1.5, th.dim))
                    continue
                c = VectorColumn(arr[j], head=3, tail=1, font_size=19, theme=th,
                                 bracket_color=th.text if name == "E" else color)
                c.move_to([xs[s], 0, 0]).align_to([0, y_top, 0], UP)
                cols[name][j] = c
                grid.add(c)
        # the symbols beside the middle of their bands, the operators in the gaps between bands
        mids = [VGroup(*cols[name].values()).get_y() for name, *_ in bands]
        gaps = [(VGroup(*cols[a].values()).get_bottom()[1] + VGroup(*cols[b].values()).get_top()[1]) / 2
                for a, b in (("E", "dE"), ("dE", "E'"))]
        row_syms = VGroup(
            math("arrow(E)", font_size=34, color=th.embedding).move_to([-6.5, mids[0], 0]),
            math("Delta arrow(E)", font_size=30, color=th.delta).move_to([-6.5, mids[1], 0]),
            math("arrow(E)'", font_size=34, color=th.updated).move_to([-6.5, mids[2], 0]),
        )
        ops = VGroup(label("+", font_size=34, color=th.text).move_to([-6.5, gaps[0], 0]),
                     label("=", font_size=34, color=th.text).move_to([-6.5, gaps[1], 0]))
        rec.update(all_words=cols, all_row=row)
        with self.narrating("Every word goes through the same steps at the same time, each with its own weights."):
            self.clear_all(run_time=0.6)
            self.play(FadeIn(row, lag_ratio=0.05), FadeIn(row_syms), FadeIn(ops), FadeIn(dots), run_time=0.8)
            self.play(LaggedStart(*(FadeIn(c) for c in cols["E"].values()), lag_ratio=0.05), run_time=0.9)
            self.play(LaggedStart(*(FadeIn(c, shift=DOWN * 0.15) for c in cols["dE"].values()), lag_ratio=0.05),
                      run_time=0.9)
        with self.narrating("Each embedding plus its change gives its updated embedding: the whole sequence, refined by context."):
            self.play(LaggedStart(*(FadeIn(c, shift=DOWN * 0.15) for c in cols["E'"].values()), lag_ratio=0.05),
                      run_time=1.2)
            self.wait(1.5)


# --------------------------------------------------------------------------------------------
# the three scenes


Query = step_scene(
    "query", "Query", "step_query",
    "a word's query: the real W_Q times its embedding, row by row, then every word's query",
    QKVSteps, TraceScene)
Key = step_scene(
    "key", "Key", "step_key",
    "keys as possible answers: W_K gives every word a key; the best-matching keys answer; query/key space side view",
    QKVSteps, TraceScene)
Values = step_scene(
    "values", "Values", "step_values",
    "value vectors weighted by attention, summed and lifted by W_O into ΔE; E + ΔE = E′ for one word, then all",
    QKVSteps, TraceScene)
