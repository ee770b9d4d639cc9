"""`self_attention_steps`: the Illustrated GPT-2's three steps for one token, then the same for
every token at once as matrices.

`OneToken`: (1) its query, key and value from its vector and the real W_Q, W_K, W_V; (2) its query
against every key, q·k/√d_head, and the softmax; (3) every value times its weight (faint where the
weight is small), summed into the head's output z. `AllTokens`: Q = X·W_Qᵀ, K = X·W_Kᵀ, V = X·W_Vᵀ,
S = Q·Kᵀ/√d_k, the mask, the softmax by rows, Z = P·V, each with its shape, in the paper's
orientation (a row per token); the focus's row of Z is the z of the three steps."""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, RIGHT, UP, Arrow, FadeIn, FadeOut, ReplacementTransform, SurroundingRectangle, VGroup

from ..components.number_table import NumberTable
from ..components.text import label, number
from ..components.softmax_column import finer_kind, grid_score_kind
from ..style import fmt_weight
from ..components.vectors import VectorColumn, ellipsis_dots, math, symbol_source
from ..components.word_boxes import WordBoxes
from ..lesson import Chapter
from ..plans.rounding import drawn_misses, drawn_sum
from ..plans.walkthrough import StepsPlan, plan_steps
from ..review import declare_sum
from ..plans.windows import token_window
from ..stage import Stage
from .embedding_parts import fit_into
from .lookup import SHOWN, digits, hvec, shown_digits, weight_opacity
from .beyond_parts import sci_math, with_math
from .grid_parts import side_title
from .multi_head import table

T = "walkthrough.steps"
COLUMN = (5, 1)  # entries of a column vector shown: the first five and the last
WINDOW = (4, 1)  # columns of a wide matrix shown
SQUARE_MAX = 10  # an n×n matrix (scores, weights) shows all its columns up to this many tokens


def exact_zero(font_size: float, color: str):
    """A masked weight: exactly 0, drawn as "0" rather than a rounded "0.00"."""
    m = label("0", font_size, color)
    m.value, m.shown = 0.0, "0"
    return m


def words_row(stage: Stage, plan: StepsPlan, title) -> WordBoxes:
    th = stage.theme
    words = WordBoxes(plan.tokens, theme=th, font_size=24, max_width=stage.region("full").width)
    words.move_to([0, title.get_bottom()[1] - 0.15 - words.height / 2, 0])
    return words


def head_title(stage: Stage, plan: StepsPlan, key: str):
    th, say = stage.theme, stage.say
    title = label(say(key, head=say.role(plan.role, plan.head.layer, plan.head.head)), 30, th.text)
    return stage.region("title").fit(title)


def rounding_marks(stage: Stage, t: NumberTable, toks) -> None:
    """Every row of the weights is drawn: each must add up to 1 as drawn, or carry "≈" beside its bracket,
    with one line under the table saying what the mark means (the lint checks each row)."""
    th, say = stage.theme, stage.say
    marks, sums = {}, {}
    for r in range(len(t.shown_rows)):
        cells = list(t.row(r))
        sums[r] = drawn_sum([c.shown for c in cells])
        if drawn_misses([c.shown for c in cells], "1"):
            m = label(say("common.rounding.mark"), float(getattr(cells[0], "font_size", t.font_size)), th.dim)
            m.move_to([t.brackets.get_right()[0] + 0.12 + m.width / 2, cells[0].get_y(), 0])
            marks[r] = m
            t.add(m)
        declare_sum(t, cells, "1", [marks[r]] if r in marks else [], name=f"{toks[t.shown_rows[r]]}'s weights")
    if marks:
        missed = sorted(float(sums[r]) for r in marks)
        low, high = say.number(missed[0], ".2f"), say.number(missed[-1], ".2f")
        note = label(say(f"{T}.rows_rounded", low=low, high=high) if low != high else
                     say(f"{T}.rows_rounded_one", value=low), 22, th.dim)
        fit_into(note, stage.region("full").right - t.brackets.get_left()[0], 0.4)
        t.add(note.next_to(t.brackets, DOWN, buff=0.15).align_to(t.brackets, LEFT))


def square_columns(plan: StepsPlan) -> list[int | None]:
    """The key columns of an n×n matrix (S, S′, P) drawn: all of them up to `SQUARE_MAX`; beyond, a
    window that keeps every key the focus's row puts weight on, with an ellipsis where keys are left
    out (never the column a row's weight sits on for the row discussed)."""
    n = len(plan.tokens)
    if n <= SQUARE_MAX:
        return list(range(n))
    order = [int(j) for j in np.argsort(-plan.P[plan.focus], kind="stable")[:3]]
    return list(token_window(n, [plan.focus] + order, SQUARE_MAX))


def qk_formula(name: str, rotary: bool) -> str:
    """"Q = X W_Qᵀ"; on a rotary model "Q = R(X W_Qᵀ)": the matrix drawn is the turned one. Transposed:
    lesson query's W_Q is d_head × d_model (columns, W·x), rows multiply by it turned on its side."""
    product = f"X W_{name}^T"
    return f'{name} = R({product})' if rotary else f"{name} = {product}"


class OneToken(Chapter):
    key = "steps_one"

    def plan(self, setting) -> StepsPlan:
        return plan_steps(setting)

    def play(self, stage: Stage, plan: StepsPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn.setdefault(self.key, {})
        full = stage.region("full")
        i, toks = plan.focus, plan.tokens
        word = say.quote(toks[i])
        title = head_title(stage, plan, f"{T}.title")
        words = words_row(stage, plan, title)
        top = words.get_bottom()[1] - 0.3
        # the three steps ahead, large, while the caption announces them (review 37: a title and a row of
        # words over an empty frame)
        road = VGroup(*(label(say(f"{T}.step{k}"), 36, th.highlight) for k in (1, 2, 3)))
        road.arrange(DOWN, aligned_edge=LEFT, buff=0.5)
        fit_into(road, full.width - 1.0, top - full.bottom - 0.8)
        road.move_to([0, (top + full.bottom) / 2, 0])
        drawn["road"] = road
        with stage.narrating(say(f"{T}.caption_intro", word=word)):
            stage.play(FadeIn(title), FadeIn(words, lag_ratio=0.08), run_time=1.0)
            stage.play(words.animate.highlight(i, th.query), FadeIn(road, lag_ratio=0.4), run_time=1.0)

        # 1. query, key and value of the focus
        fs = 20
        # the focus's input named as every other lesson names it, E⃗ (Ê after a norm): x⃗₄ here read as
        # another vector (review 48)
        focus_input = symbol_source("E", i + 1, normed=plan.normalized)
        x = VectorColumn(plan.x, head=COLUMN[0], tail=COLUMN[1], font_size=fs, theme=th, kind=shown_digits(plan.x, *COLUMN), symbol=focus_input,
                         symbol_color=th.embedding, show_symbol=True, brace=True,
                         brace_text=say(f"{T}.numbers", count=plan.d_model))
        made = []
        for name, vec, color in (("q", plan.q, th.query), ("k", plan.k, th.key), ("v", plan.v, th.value)):
            col = VectorColumn(vec, head=COLUMN[0], tail=COLUMN[1], font_size=fs, theme=th, bracket_color=color,
                               kind=digits(vec))
            eq = math(f"arrow({name})_{i + 1} = W_{name.upper()} {focus_input}", 26, color)  # columns: W·x, as lesson query
            made.append(VGroup(eq, col))
        step = max(max(m[0].width, m[1].width) for m in made) + 0.4  # formulas side by side, clear of each other
        for k, m in enumerate(made):
            m[1].move_to([k * step, 0, 0], aligned_edge=UP)
        for m in made:  # each formula over its column, all on one line
            m[0].next_to(m[1], UP, buff=0.25)
        base = max(m[0].get_bottom()[1] for m in made)
        for m in made:
            m[0].shift(UP * (base - m[0].get_bottom()[1]))
        trio = VGroup(*made)
        arrow = Arrow(LEFT, RIGHT, color=th.dim, stroke_width=3)
        step1 = VGroup(x, arrow, trio).arrange(RIGHT, buff=0.4)
        size = label(say(f"{T}.sizes", d_model=plan.d_model, d_head=plan.d_head), 20, th.dim)
        block = VGroup(label(say(f"{T}.step1"), 24, th.highlight), step1, size).arrange(DOWN, buff=0.3)
        block.scale(min(full.width / block.width, (top - full.bottom - 0.3) / block.height, 1.4))
        block.move_to([0, top - block.height / 2, 0])
        drawn["qkv"] = {"x": x, "q": made[0][1], "k": made[1][1], "v": made[2][1]}
        drawn["sizes"] = size
        key1 = f"{T}.caption_step1_rotary" if plan.rotary else f"{T}.caption_step1"
        with stage.narrating(say(key1, word=word, d_model=plan.d_model, d_head=plan.d_head)):
            stage.play(FadeOut(road), FadeIn(block[0]), FadeIn(x), run_time=0.8)
            stage.play(FadeIn(arrow), *(FadeIn(m, shift=RIGHT * 0.2) for m in made), run_time=1.4)
            stage.play(FadeIn(size), run_time=0.5)
            stage.wait(0.6)
        stage.play(FadeOut(block), run_time=0.5)

        # 2. the query against every key, and the softmax
        rows = [[label(say(f"{T}.col_word"), 18, th.dim),
                 label(say(f"{T}.col_key_rotary" if plan.rotary else f"{T}.col_key"), 18, th.key),
                 math("q dot k \\/ sqrt(d_k)", 24, th.dim), label(say(f"{T}.col_weight"), 18, th.dim),
                 label(say(f"{T}.col_value"), 18, th.value), VGroup(), label(say(f"{T}.col_weighted"), 18, th.value)]]
        # one decimal, or two where one would show two drawn keys the same score though their
        # weights differ as drawn (+5.3 and +5.3 weighted 0.48 and 0.50): the softmax column's rule
        seen = [j for j in plan.slots if j is not None and not plan.blocked[j]]
        score_kind = finer_kind(plan.scores, {j: fmt_weight(plan.weights[j]) for j in seen}, seen, "score", "score2")
        by = {}
        for j in plan.slots:
            if j is None:
                rows.append([ellipsis_dots(DOWN, color=th.dim)] + [VGroup() for _ in range(6)])
                continue
            masked = bool(plan.blocked[j])
            cells = [label(toks[j], 22, th.query if j == i else th.text), hvec(plan.K[j], th, th.key, fs, kind=digits(plan.K)),
                     number(plan.scores[j], score_kind, fs, th.mask if masked else th.text),
                     exact_zero(fs, th.mask) if masked else number(plan.weights[j], "weight", fs, th.text),
                     hvec(plan.values[j], th, th.value, fs, kind=digits(plan.V)), math("->", 22, th.dim),
                     hvec(plan.weighted[j], th, th.value, fs, kind=digits(plan.V))]
            rows.append(cells)
            by[j] = cells
        weights_approx, weights_total = False, None
        if by and None not in plan.slots:  # every key drawn: its weights say what they add up to
            cells = [by[j][3] for j in plan.slots]
            weights_approx = drawn_misses([c.shown for c in cells], "1")
            total = label("Σ ≈ 1" if weights_approx else "Σ = 1", fs, th.dim)
            declare_sum(total, cells, "1", [total] if weights_approx else [], name=f"{toks[i]}'s weights")
            drawn["weights_total"] = weights_total = total
            rows.append([VGroup(), VGroup(), VGroup(), total, VGroup(), VGroup(), VGroup()])
        grid = table(rows, gap=0.3, row_gap=0.1 if weights_total else 0.14)  # the Σ row costs no size
        # on a rotary model the query the scores use is q⃗ turned by its position's rotation: R q⃗, not the q⃗ of step 1
        # (review 53: q⃗₄ named both)
        q_name = f"R_{i + 1} arrow(q)_{i + 1}" if plan.rotary else f"arrow(q)_{i + 1}"
        qline = VGroup(math(q_name, 26, th.query), hvec(plan.Q[i], th, th.query, fs, kind=digits(plan.Q)))
        if plan.rotary:  # not W_Q x any more: turned by position (the scores use the turned q and k)
            qline.add(label(say(f"{T}.after_rotary"), 20, th.dim))
        qline.arrange(RIGHT, buff=0.2)
        drawn["q_line"] = qline
        zline = VGroup(label(say(f"{T}.sum"), 22, th.text),
                       VectorColumn(plan.z, head=SHOWN[0], tail=SHOWN[1], font_size=fs, theme=th, horizontal=True, kind=digits(plan.V),
                                    bracket_color=th.delta, symbol=symbol_source("z", i + 1), symbol_color=th.delta,
                                    show_symbol=True)).arrange(RIGHT, buff=0.3)
        zline.add(self.sum_marks(stage, plan, by, zline[1], fs))
        if len(zline[2]) or weights_approx:  # a "≈" says what it means, under the sum (fitted with the rest)
            zline.add(label(say("common.rounding.cells"), 20, th.dim).next_to(zline[1], DOWN, buff=0.15))
        body = VGroup(label(say(f"{T}.step2"), 24, th.highlight), qline, grid, zline).arrange(DOWN, buff=0.25)
        fit_into(body, full.width, top - full.bottom)
        body.move_to([0, top - body.height / 2, 0])
        col = lambda c: VGroup(rows[0][c], *(r[c] for r in rows[1:]))  # noqa: E731
        # the query meets every key: a masked key's raw score is shown too, then turns to −∞ (review 49: four
        # blank cells under "meets the key of every token", +6.99 on "verdant", the largest, never seen)
        seen_row = next(j for j in by if not plan.blocked[j])
        shrink = by[seen_row][2].height / number(plan.scores[seen_row], score_kind, fs, th.text).height  # as fitted
        raws = {j: number(plan.S[i, j], score_kind, fs, th.text).scale(shrink).move_to(by[j][2])
                for j in by if plan.blocked[j]}
        drawn.update(rows=by, z=zline[1], z_marks=zline[2], raw_scores=raws)
        with stage.narrating(say(f"{T}.caption_step2", word=word, d_head=plan.d_head)):
            stage.play(FadeIn(body[0]), FadeIn(qline), FadeIn(col(0)), FadeIn(col(1)), run_time=1.0)
            infs = {j: by[j][2] for j in raws}
            stage.play(FadeIn(VGroup(*(s for s in col(2) if not any(s is m for m in infs.values())), *raws.values())),
                       run_time=0.8)
            stage.wait(0.4)
        if plan.blocked.any():
            with stage.narrating(say(f"{T}.caption_masked")):
                stage.play(*(ReplacementTransform(raws[j], infs[j]) for j in raws), run_time=0.6)
                stage.wait(0.4)
        with stage.narrating(say(f"{T}.caption_softmax")):
            stage.play(FadeIn(col(3)), run_time=0.8)
            stage.wait(0.4)

        # 3. every value times its weight, added up
        stage.play(body[0].animate.become(label(say(f"{T}.step3"), 24, th.highlight).move_to(body[0])), run_time=0.4)
        with stage.narrating(say(f"{T}.caption_step3", word=word)):
            stage.play(FadeIn(col(4)), FadeIn(col(5)), run_time=0.8)
            stage.play(FadeIn(rows[0][6]), *(FadeIn(c[6].fade_to(weight_opacity(plan.weights[j], plan.weights))) for j, c in by.items()),
                       run_time=1.2)
            stage.play(FadeIn(zline, shift=DOWN * 0.1), run_time=0.8)
            stage.wait(1.0)


    @staticmethod
    def sum_marks(stage: Stage, plan: StepsPlan, by: dict, z: VectorColumn, fs: float) -> VGroup:
        """z's entries are the sums of the weight × value column above them: where every token's row is
        drawn, each entry shown in both is declared as that sum (the lint checks it), and one whose
        drawn terms miss its drawn digit gets a "≈" over it. Where rows are left out behind a "⋮" the
        drawn rows are declared all the same: a z entry they miss (the hidden rows add to it, and
        rounding) is marked "≈" too, never drawn as if the shown rows made it exactly."""
        marks = VGroup()
        weighted = [cells[6] for cells in by.values()]
        size = fs * z.entries[0].height / label(z.entries[0].shown, fs).height  # the entries' size as drawn
        for m in z.entries:
            parts = [next((e for e in w.entries if e.index == m.index), None) for w in weighted]
            if any(e is None for e in parts):
                continue
            approx = drawn_misses([e.shown for e in parts], m.shown)
            mark = None
            if approx:
                mark = label(stage.say("common.rounding.mark"), size * 0.9, stage.theme.dim).next_to(m, UP, buff=0.16)
                marks.add(mark)
            declare_sum(z, parts, m, [mark] if mark is not None else [], name=f"z entry {m.index}")
        return marks


class AllTokens(Chapter):
    key = "steps_all"

    def plan(self, setting) -> StepsPlan:
        return plan_steps(setting)

    def play(self, stage: Stage, plan: StepsPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        drawn = stage.drawn.setdefault(self.key, {})
        full = stage.region("full")
        i, toks, n = plan.focus, plan.tokens, len(plan.tokens)
        title = head_title(stage, plan, f"{T}.matrix_title")
        top = title.get_bottom()[1] - 0.3
        dm, dh = plan.d_model, plan.d_head
        shape = lambda r, c: say(f"{T}.shape", rows=r, cols=c)  # noqa: E731
        blocked = ~np.isfinite(plan.S_masked)
        score_kind = grid_score_kind(plan.S, plan.P, blocked, lambda shown: True)  # as the grid writes them
        steps = [  # (formula, shapes, matrix, kind, caption key)
            ("X", shape(n, dm), plan.X, "vec", "caption_X"),
            (qk_formula("Q", plan.rotary), say(f"{T}.product", a=shape(n, dm), b=shape(dm, dh), c=shape(n, dh)), plan.Q,
             "vec", "caption_Q_rotary" if plan.rotary else "caption_Q"),
            (qk_formula("K", plan.rotary), say(f"{T}.product", a=shape(n, dm), b=shape(dm, dh), c=shape(n, dh)), plan.K,
             "vec", "caption_K_rotary" if plan.rotary else "caption_K"),
            ("V = X W_V^T", say(f"{T}.product", a=shape(n, dm), b=shape(dm, dh), c=shape(n, dh)), plan.V, "vec", "caption_V"),
            ("S = Q K^T \\/ sqrt(d_k)", say(f"{T}.product", a=shape(n, dh), b=shape(dh, n), c=shape(n, n)), plan.S, score_kind,
             "caption_S"),
            ("S' = S + M", shape(n, n), plan.S_masked, score_kind, "caption_M"),
            ("P = \"softmax\"(S')", shape(n, n), plan.P, "weight", "caption_P"),
            ("Z = P V", say(f"{T}.product", a=shape(n, n), b=shape(n, dh), c=shape(n, dh)), plan.Z, "vec", "caption_Z"),
        ]
        lines = VGroup()
        for k, (formula, shp, _, _, _) in enumerate(steps):
            line = VGroup(math(formula, 34, th.text), label(shp, 26, th.dim)).arrange(RIGHT, buff=0.3)
            if plan.rotary and k == 1:  # "rot" said once, under Q's line: the turn by position
                line = VGroup(line, label(say(f"{T}.rot_note"), 26, th.dim)).arrange(DOWN, aligned_edge=LEFT, buff=0.1)
            lines.add(line)
        lines.arrange(DOWN, buff=0.4, aligned_edge=LEFT)
        left_w = full.width * 0.34
        natural = lines.width
        fit_into(lines, left_w, top - full.bottom - 0.4)
        k_fit = lines.width / natural  # a formula standing alone over its table is drawn at full size
        lines.move_to([full.left + lines.width / 2, top - lines.height / 2, 0])
        right = (full.left + left_w + 0.4, full.right)
        shown = shown_head = None
        listed = True  # whether the list of formulas is on screen (it steps aside for n × n tables)
        tables = []
        # the steps ahead, every formula large in the middle while the caption announces them (review 37: the
        # title over an empty frame); each then comes back in the list, one at a time
        road = lines.copy()
        road.scale(min((full.width - 1.0) / road.width, (top - full.bottom - 0.4) / road.height, 1.0 / k_fit))
        road.move_to([0, (top + full.bottom) / 2, 0])
        drawn["road"] = road
        with stage.narrating(say(f"{T}.caption_matrix_intro", count=n, d_model=plan.d_model, d_head=plan.d_head)):
            stage.play(FadeIn(title), FadeIn(road, lag_ratio=0.15), run_time=1.0)
        for k, (line, (formula, _, M, kind, cap)) in enumerate(zip(lines, steps)):
            square = M.shape[1] == n
            # a row is a query only in Q and the n × n tables: K's and V's rows in their own colours, X's and Z's
            # in the text's (review 49: K's rows in the queries' yellow, the frame before S used it for queries)
            rows_color = th.query if square else {"Q": th.query, "K": th.key, "V": th.value}.get(formula[0], th.text)
            cols = square_columns(plan) if square else (
                list(range(M.shape[1])) if M.shape[1] <= sum(WINDOW) + 1 else
                list(range(WINDOW[0])) + [None] + list(range(M.shape[1] - WINDOW[1], M.shape[1])))
            blocked = np.isinf(plan.S_masked)
            cell_kind = (lambda a, b: "zero" if blocked[a, b] else "weight") if kind == "weight" else \
                (digits(M) if kind == "vec" else kind)
            t = NumberTable(M, kind=cell_kind, rows=None, cols=cols, row_labels=toks,
                            col_labels=toks if square else None, font_size=26, theme=th,
                            color=(lambda a, b, v: th.mask if np.isinf(v) or (kind == "weight" and plan.P.shape == M.shape
                                                                                and b > a) else th.text),
                            row_label_color=rows_color, col_label_color=th.key, brackets=True)
            # as large as the room beside the formulas allows (room kept under it for the check); an
            # n × n table needs the whole width: the list of formulas steps aside for it, and only
            # this step's formula stands over the table
            anims = [FadeOut(road)] if k == 0 else []
            if square:
                head = line.copy().set_color(th.text)
                head.scale(min(1.0 / k_fit, full.width / head.width)).move_to([full.left + head.width / 2,
                                                                       top - head.height / 2, 0])
                room = (full.left + 0.75, full.right - 0.3, head.get_bottom()[1] - 0.55)  # room for the axis names
                anims += [FadeIn(head, shift=RIGHT * 0.2)]
                if listed:
                    anims.append(FadeOut(VGroup(*lines[:k])))
            else:
                head = None
                room = (right[0], right[1], top)
                anims += [FadeIn(line, shift=RIGHT * 0.2)]
                if not listed:  # back from the n × n tables: the formulas so far, dimmed
                    anims.append(FadeIn(VGroup(*lines[:k]).set_color(th.dim)))
                elif k > 0:
                    anims.append(lines[k - 1].animate.set_color(th.dim))
            room_w, room_h = room[1] - room[0], room[2] - full.bottom - 0.9
            t.scale(min(room_w / t.width, room_h / t.height, 1.6))
            t.move_to([(room[0] + room[1]) / 2, (room[2] + full.bottom + 0.7) / 2, 0])
            if square:  # the axes named, as every grid names them: here queries down the rows, keys across
                keys_name = label(say("grid.axes.keys"), 24, th.key).next_to(t.header_row(), UP, buff=0.12)
                queries_name = side_title(say("grid.axes.queries"), 24, th.query)
                queries_name.next_to(t.label_column(), LEFT, buff=0.15)
                t.add(keys_name, queries_name)
                drawn.setdefault("axis_names", []).append((keys_name, queries_name))
            if kind == "weight" and None not in cols:
                rounding_marks(stage, t, toks)
            tables.append(t)
            with stage.narrating(say(f"{T}.{cap}", d_model=dm, d_head=dh, count=n, word=say.quote(toks[i]))):
                anims += [FadeIn(t)] if shown is None else [FadeOut(shown), FadeIn(t)]
                if shown_head is not None:
                    anims.append(FadeOut(shown_head))
                stage.play(*anims, run_time=0.9)
                stage.wait(0.5)
            if shown_head is not None:
                stage.remove(shown_head)
            shown, shown_head, listed = t, head, not square
        drawn.update(lines=lines, tables=tables)

        # the focus's row of Z is the z the three steps added up
        z_table = tables[-1]
        row = VGroup(z_table.row_labels[i], z_table.row(i))
        frame = SurroundingRectangle(row, buff=0.08, color=th.highlight, stroke_width=2)
        # its right side clear outside the table's bracket (review 50: it ran down the bracket's stroke)
        bracket_right = z_table.get_right()[0]
        if frame.get_right()[0] < bracket_right + 0.08:
            x0 = frame.get_left()[0]
            frame.stretch_to_fit_width(bracket_right + 0.08 - x0).align_to([x0, 0, 0], LEFT)
        drawn["z_row_box"] = frame
        diff = float(np.abs(plan.Z[i] - plan.z).max())
        # two lines: what is equal, then the largest difference with its figure (a figure alone on a
        # line read as a stray number)
        check = VGroup(label(say(f"{T}.check", word=say.quote(toks[i])), 28, th.highlight),
                       with_math(say(f"{T}.check_diff"), sci_math(diff, say, 30, th.highlight), 28, th.highlight)
                       ).arrange(DOWN, buff=0.14)
        room = max(0.5, z_table.get_bottom()[1] - 0.2 - (full.bottom + 0.1))
        fit_into(check, right[1] - right[0], room)
        check.next_to(z_table, DOWN, buff=0.2)
        drawn["check"] = check
        with stage.narrating(say(f"{T}.caption_check", word=say.quote(toks[i]))):
            stage.play(FadeIn(frame), FadeIn(check, shift=UP * 0.1), run_time=0.8)
            stage.wait(1.2)
