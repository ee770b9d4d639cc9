"""Section 1 of the story: embeddings, and how context moves them.

- `tokens_to_vectors`: a phrase becomes word boxes; each drops to its real embedding column; a
  repeated word gets the identical column; then position is added and the columns change.
- `mole`: three phrases with the same ambiguous word. Its lookup columns are identical; in a 3-D
  space whose axes are three of the model's named directions, the generic arrow, then per phrase
  the real attention (arcs), the head's real ΔE and the refined E′.
- `eiffel_tower`: "tower" → "eiffel tower" → "miniature eiffel tower", the same machinery, each
  step's arrow the real E′ of "tower" in that phrase.
- `last_token`: a short mystery ending "therefore the murderer was": the real pattern of every
  head for the last position, and an honest note on what this toy model does (and does not) do.

Every number on screen is read from the trace: embeddings, weights, projections, ΔE, E′.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
from manim import (
    DEGREES, DOWN, LEFT, PI, RIGHT, UP, Arrow, Create, FadeIn, FadeOut, FadeTransform, Line,
    ReplacementTransform, SurroundingRectangle, VGroup, Write,
)

from model.errors import UserError
from model.toy_world import EXAMPLES
from model.trace import Trace

from .base import TraceScene
from .components.context_arcs import ContextArcs
from .components.space3d import EmbeddingSpace, pick_axes
from .components.text import label, number
from .components.vectors import VectorColumn, math, symbol, symbol_source
from .components.word_boxes import WordBoxes
from .registry import register
from .style import fmt_vec, fmt_weight

FRAME_W, FRAME_H = 14.2, 8.0  # usable frame (manim's is 14.22 × 8)


# --------------------------------------------------------------------------------------------
# shared helpers


def quoted(word: str) -> str:
    return f"“{word}”"


def resolve_axes(trace: Trace, requested: Sequence[str] | None, defaults: Sequence[str],
                 vectors: np.ndarray | None = None) -> list[str] | None:
    """The three axis names for a 3-D scene: the user's (checked), else the scene's defaults when
    the model knows them, else the named directions the vectors reach furthest along, else None
    (principal directions; see EmbeddingSpace). Unknown names are a UserError listing the known."""
    known = list(trace.directions)
    if requested is not None:
        names = [n.strip().lower() for n in requested if n.strip()]
        if len(names) != 3:
            raise UserError(f"--axes takes exactly three direction names, got {len(names)}",
                            f"for example --axes {','.join(defaults)}")
        unknown = [n for n in names if n not in trace.directions]
        if unknown:
            listed = ", ".join(sorted(known)) or "(this model has no named directions)"
            raise UserError(f"unknown direction{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}",
                            f"known directions: {listed}")
        if len(set(names)) != 3:
            raise UserError("--axes names a direction twice", "give three different directions")
        return names
    if all(n in trace.directions for n in defaults):
        return list(defaults)
    if vectors is not None:
        return pick_axes(trace, vectors)
    return None


def arc_angle(sources: Sequence[np.ndarray], target: np.ndarray, max_rise: float, cap: float = PI / 2) -> float:
    """The bend (radians) for arcs from `sources` into `target` such that the longest one rises
    at most `max_rise` above its chord (an arc of angle θ over a chord c rises c/2·tan(θ/4))."""
    chords = [float(np.hypot(*(np.asarray(s)[:2] - np.asarray(target)[:2]))) for s in sources]
    c = max(chords + [1e-6])
    return float(min(cap, 4 * np.arctan(2 * max_rise / c)))


def weight_labels(arcs: ContextArcs, theme, min_weight: float = 0.05, font_size: float = 18) -> VGroup:
    """The real weight of every arc at or above `min_weight`, above the arc's apex."""
    out = VGroup()
    for arc, w in arcs.drawn():
        if w < min_weight:
            continue
        n = number(w, "weight", font_size=font_size, color=theme.text)
        apex = arc.point_from_proportion(0.5)
        n.next_to(apex, UP, buff=0.06)
        out.add(n)
    return out


def attention_phrase(tokens: Sequence[str], weights: np.ndarray, focus: int, min_weight: float = 0.1,
                     most: int = 3) -> str:
    """“mole” puts 0.99 on “shrew” — the context words with the largest real weights, in words."""
    order = [int(k) for k in np.argsort(-weights, kind="stable") if weights[k] >= min_weight][:most]
    others = [k for k in order if k != focus]
    if not others:
        if focus == 0:
            return f"nothing comes before {quoted(tokens[focus])}, so it attends to itself ({fmt_weight(weights[focus])})"
        return f"{quoted(tokens[focus])} attends to itself ({fmt_weight(weights[focus])})"
    parts = [f"{fmt_weight(weights[k])} on {quoted(tokens[k])}" for k in others]
    text = f"{quoted(tokens[focus])} puts " + (", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0])
    return text


def delta_phrase(coords: np.ndarray, names: Sequence[str], min_abs: float = 0.3, most: int = 3) -> str:
    """'+8.0 along animal' — the components of ΔE on the shown axes that matter (at least
    `min_abs` and at least a quarter of the largest), largest first, as shown on screen."""
    top = float(np.abs(coords).max()) if len(coords) else 0.0
    order = [int(k) for k in np.argsort(-np.abs(coords), kind="stable")
             if abs(coords[k]) >= max(min_abs, 0.25 * top)][:most]
    if not order:
        return "almost nothing on these three axes"
    parts = [f"{fmt_vec(coords[k])} along {names[k]}" for k in order]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def context_tag(tokens: Sequence[str], weights: np.ndarray, focus: int, min_weight: float = 0.2) -> str:
    """A short name for an E′ arrow: the context word it drew most from ("shrew"), two words in
    phrase order when the runner-up weighs at least half as much ("miniature+eiffel"), else "alone"."""
    order = [int(k) for k in np.argsort(-weights, kind="stable") if k != focus and weights[k] >= min_weight]
    if not order:
        return "alone"
    picked = [order[0]] + [k for k in order[1:2] if weights[k] >= 0.5 * weights[order[0]]]
    return "+".join(dict.fromkeys(tokens[k] for k in sorted(picked)))


def fit_into(mob, width: float, height: float):
    """Scale `mob` down (never up) to fit a width × height box."""
    if mob.width > width:
        mob.scale_to_fit_width(width)
    if mob.height > height:
        mob.scale_to_fit_height(height)
    return mob


def choose_view(points: np.ndarray, spread: np.ndarray | None = None, default=(70, -55)) -> tuple[float, float]:
    """Camera angles (phi, theta, radians) under which the arrows `spread` ([k, 3] axis
    coordinates; default `points`) point in clearly different directions on screen (the largest
    smallest angle between any two), with none of `points` foreshortened below half its length;
    ties go to the default view."""
    from .components.space3d import view_matrix

    P = np.asarray(points, float)
    P = P[np.linalg.norm(P, axis=1) > 1e-9]
    D = np.asarray(points if spread is None else spread, float)
    D = D[np.linalg.norm(D, axis=1) > 1e-9]
    scored = []
    for phi in (60, 65, 70, 75, 80):
        for theta in range(-175, 0, 5):
            M = view_matrix(phi * DEGREES, theta * DEGREES)[:2]
            Q = P @ M.T
            ratio = np.linalg.norm(Q, axis=1) / np.linalg.norm(P, axis=1)
            if len(P) and ratio.min() < 0.5:
                continue
            # the axes themselves: none seen end-on, no two pointing the same way on screen
            axes2d = M.T  # rows: the three unit axes on screen
            if np.linalg.norm(axes2d, axis=1).min() < 0.5:
                continue
            ax_ang = np.arctan2(axes2d[:, 1], axes2d[:, 0])
            if min(abs((x - y + PI) % (2 * PI) - PI) for i, x in enumerate(ax_ang) for y in ax_ang[i + 1:]) < 40 * DEGREES:
                continue
            QD = D @ M.T
            a = np.arctan2(QD[:, 1], QD[:, 0])
            sep = min((abs((x - y + PI) % (2 * PI) - PI) for i, x in enumerate(a) for y in a[i + 1:]), default=PI)
            scored.append((float(sep), phi, theta))
    best = default
    if scored:
        top = max(sc[0] for sc in scored)
        # among the views nearly as good as the best (85 % of its separation), the one closest
        # to the default
        near = [sc for sc in scored if sc[0] >= 0.85 * top]
        _, phi, theta = min(near, key=lambda sc: (abs(sc[1] - default[0]) + abs(sc[2] - default[1]) / 3, sc[1], sc[2]))
        best = (phi, theta)
    return best[0] * DEGREES, best[1] * DEGREES




# --------------------------------------------------------------------------------------------
# tokens_to_vectors


def shown_token_indices(tokens: Sequence[str], limit: int = 10) -> list[int]:
    """Which tokens get a column when there are more than `limit`: both occurrences of the first
    repeated word (the point of the scene), then the first tokens, then the last ones."""
    n = len(tokens)
    if n <= limit:
        return list(range(n))
    required: list[int] = []
    seen: dict[str, int] = {}
    for j, t in enumerate(tokens):
        if t in seen:
            required = [seen[t], j]
            break
        seen[t] = j
    chosen = set(required)
    head = [i for i in range(n) if i not in chosen]
    # fill from the start, keeping the last two tokens for the end of the phrase
    tail = [i for i in (n - 2, n - 1) if i not in chosen]
    for i in head:
        if len(chosen) + len(tail) >= limit:
            break
        chosen.add(i)
    chosen.update(tail[: max(0, limit - len(chosen))])
    return sorted(chosen)


def repeated_groups(tokens: Sequence[str], indices: Sequence[int]) -> list[list[int]]:
    """Groups of shown positions holding the same word (each group ≥ 2), in order of appearance."""
    groups: dict[str, list[int]] = {}
    for i in indices:
        groups.setdefault(tokens[i], []).append(i)
    return [g for g in groups.values() if len(g) > 1]


@register("tokens_to_vectors")
class TokensToVectors(TraceScene):
    description = "a phrase becomes word boxes, each with its real embedding column; a repeated word gets the same column; then position is added"
    default_sentences = ("the fluffy creature saw the blue creature",)
    max_columns = 10

    def construct(self):
        th = self.theme
        tr = self.trace
        tokens = tr.tokens
        d = tr.model.d_model
        shown = shown_token_indices(tokens, self.max_columns)
        self.shown = shown
        # the row of boxes: shown tokens, with "…" wherever tokens are skipped
        display: list[str] = []
        box_of: dict[int, int] = {}
        for k, i in enumerate(shown):
            if k > 0 and i != shown[k - 1] + 1:
                display.append("…")
            box_of[i] = len(display)
            display.append(tokens[i])
        boxes = WordBoxes(display, theme=th, font_size=30)
        self.boxes, self.box_of = boxes, box_of

        # one slot per box, wide enough for a number column; boxes centred in their slots
        font = 22
        Y_BOX, Y_COL, Y_POS = 3.25, 1.05, -2.25
        cols = VGroup(*(VectorColumn(tr.token_embeddings[i], head=4, tail=1, font_size=font, theme=th)
                        for i in shown))
        pos_cols = VGroup(*(VectorColumn(tr.position_embeddings[i], head=4, tail=1, font_size=font, theme=th,
                                         bracket_color=th.positive) for i in shown))
        sums = VGroup(*(VectorColumn(tr.embeddings[i], head=4, tail=1, font_size=font, theme=th) for i in shown))
        col_w = max(c.width for c in [*cols, *pos_cols, *sums])
        slot_w = max(col_w + 0.35, max(b.width for b in boxes) + 0.15)
        slots = [(k - (len(display) - 1) / 2) * slot_w for k in range(len(display))]
        for k, b in enumerate(boxes):
            b.set_x(slots[k])
        boxes.set_y(Y_BOX)
        for k, i in enumerate(shown):
            x = slots[box_of[i]]
            for group, y in ((cols, Y_COL), (pos_cols, Y_POS), (sums, Y_COL)):
                c = group[k]
                c.shift(np.array([x, y, 0]) - c.brackets.get_center())
        plus = VGroup(*(label("+", font_size=28, color=th.positive).move_to(
            [cols[k].get_x(), (cols[k].get_bottom()[1] + pos_cols[k].get_top()[1]) / 2, 0])
            for k in range(len(shown))))
        gaps = [k for k, t in enumerate(display) if t == "…" and k not in box_of.values()]
        ellipses = VGroup(*(label("…", font_size=font, color=th.dim).move_to([slots[k], Y_COL, 0]) for k in gaps))
        pos_ellipses = VGroup(*(label("…", font_size=font, color=th.dim).move_to([slots[k], Y_POS, 0]) for k in gaps))
        brace_col = VectorColumn(tr.token_embeddings[shown[-1]], head=4, tail=1, font_size=font, theme=th,
                                 brace=True, brace_text=f"{d} numbers")
        brace_col.shift(cols[-1].brackets.get_center() - brace_col.brackets.get_center())
        brace = VGroup(brace_col.brace, brace_col.brace_label)
        # row labels, right-aligned in a margin as wide as the widest of them
        row_label_1 = label("lookup", font_size=22, color=th.dim)
        row_label_2 = label("position", font_size=22, color=th.positive)
        label_sum = label("word + position", font_size=22, color=th.text)
        right = cols.get_left()[0] - 0.3
        for lab, y in ((row_label_1, Y_COL), (row_label_2, Y_POS), (label_sum, Y_COL)):
            lab.move_to([right - lab.width / 2, y, 0])
        margin = VGroup(label_sum.copy(), row_label_1.copy(), row_label_2.copy())
        parts = (boxes, cols, pos_cols, sums, plus, ellipses, pos_ellipses, brace, row_label_1, row_label_2, label_sum)
        whole = VGroup(*parts, margin)
        k_fit = min(1.0, 13.8 / whole.width, 7.7 / (whole.get_top()[1] - pos_cols.get_bottom()[1] + 0.1))
        about = np.array([whole.get_center()[0], 0.5, 0])
        for m in parts + (margin,):
            m.scale(k_fit, about_point=about)
        dx = -VGroup(*parts, margin).get_center()[0]
        for m in parts:
            m.shift(RIGHT * dx)
        self.token_cols, self.pos_cols, self.sum_cols = cols, pos_cols, sums
        # until the position row arrives (and again once it has been added in) the boxes and one row
        # of columns are all there is: centre them vertically, leaving room for the notes below
        one_row = VGroup(boxes, cols)
        drop = max(0.0, (one_row.get_top()[1] + one_row.get_bottom()[1] - 0.9) / 2)
        VGroup(boxes, cols, sums, ellipses, brace, row_label_1, label_sum).shift(DOWN * drop)

        sentence = label(" ".join(tokens), font_size=30, color=th.text)
        fit_into(sentence, 12.5, 1).move_to([0, boxes.get_y(), 0])
        arrows = VGroup(*(
            Arrow(boxes.box(box_of[i]).get_bottom(), cols[k].get_top(), buff=0.08, stroke_width=2.5,
                  max_tip_length_to_length_ratio=0.25, color=th.dim)
            for k, i in enumerate(shown)))

        # 1. words -------------------------------------------------------------------------------
        with self.narrating("The model first cuts the text into tokens; here every token is a word."):
            self.play(Write(sentence), run_time=1.0)
            self.play(FadeTransform(sentence, boxes), run_time=1.0)
        # 2. lookup ------------------------------------------------------------------------------
        with self.narrating(f"Each token is looked up in a table and becomes a list of {d} numbers, "
                            f"its embedding. A few of them are shown."):
            self.play(*(Create(a) for a in arrows), run_time=0.6)
            self.play(FadeIn(cols, shift=DOWN * 0.3, lag_ratio=0.08), FadeIn(row_label_1), FadeIn(ellipses),
                      run_time=1.4)
            self.play(FadeIn(brace), run_time=0.6)
            self.wait(0.8)

        # 3. repeated words ----------------------------------------------------------------------
        groups = repeated_groups(tokens, shown)
        self.repeated = groups
        col_at = {i: cols[k] for k, i in enumerate(shown)}
        if groups:
            marks, notes = self.mark_groups(
                groups[:2], col_at, th.highlight,
                lambda g: f"{quoted(tokens[g[0]])}: "
                          f"{int(np.sum(np.all(tr.token_embeddings[g] == tr.token_embeddings[g[0]], axis=0)))}"
                          f" of {d} numbers equal")
            words = ", ".join(quoted(tokens[g[0]]) for g in groups[:2])
            with self.narrating(f"The same word gets the very same column, wherever it stands ({words}): "
                                f"the lookup knows nothing about context."):
                self.play(boxes.animate.highlight([box_of[i] for g in groups[:2] for i in g], th.highlight),
                          run_time=0.6)
                self.play(Create(marks), FadeIn(notes), run_time=1.0)
                self.wait(1.5)
            self.play(FadeOut(marks), FadeOut(notes), boxes.animate.reset(), run_time=0.5)
        else:
            with self.narrating("No word repeats here; if one did, it would get exactly the same column."):
                self.wait(2.0)

        # 4. position ----------------------------------------------------------------------------
        with self.narrating("Position is added as well: each place in the sequence has its own list of numbers."):
            # only what is on screen moves visibly (animating the rest would add it to the scene)
            VGroup(sums, label_sum).shift(UP * drop)
            self.play(VGroup(boxes, arrows, cols, ellipses, brace, row_label_1).animate.shift(UP * drop),
                      run_time=0.6)
            self.play(FadeIn(pos_cols, shift=UP * 0.3, lag_ratio=0.08), FadeIn(plus), FadeIn(row_label_2),
                      FadeIn(pos_ellipses), run_time=1.4)
            self.wait(1.0)
        with self.narrating("Adding the two gives the embedding that enters attention: the word, and where it stands."):
            # the lookup columns stay as they were (kept for inspection); copies morph into the sums
            morphing = [c.copy() for c in cols]
            self.remove(*cols)
            self.play(*(pc.animate.move_to(sums[k]).set_opacity(0) for k, pc in enumerate(pos_cols)),
                      FadeOut(plus), FadeOut(row_label_2), FadeOut(pos_ellipses),
                      *(ReplacementTransform(morphing[k], sums[k]) for k in range(len(shown))),
                      ReplacementTransform(row_label_1, label_sum), run_time=1.5)
            self.remove(pos_cols)
            self.play(VGroup(boxes, arrows, sums, ellipses, brace, label_sum).animate.shift(DOWN * drop), run_time=0.6)
        if groups:
            sum_at = {i: sums[k] for k, i in enumerate(shown)}
            marks, notes = self.mark_groups(
                groups[:2], sum_at, th.positive,
                lambda g: f"{quoted(tokens[g[0]])}: now "
                          f"{int(np.sum(np.any(tr.embeddings[g] != tr.embeddings[g[0]], axis=0)))}"
                          f" of {d} numbers differ")
            which = " and ".join(quoted(tokens[g[0]]) for g in groups[:2])
            with self.narrating(f"The columns for {which} are no longer equal: position is baked in."):
                self.play(Create(marks), FadeIn(notes), run_time=0.8)
                self.wait(1.2)
            self.play(FadeOut(marks), FadeOut(notes), run_time=0.4)

        # 5. symbols -----------------------------------------------------------------------------
        syms = VGroup()
        for k, i in enumerate(shown):
            s = symbol("E", i + 1, font_size=34, color=th.embedding).move_to(sums[k])
            syms.add(s)
        with self.narrating("From here on each column is one vector, written E with its position."):
            self.play(*(FadeOut(sums[k], scale=0.3) for k in range(len(shown))),
                      *(FadeIn(s, scale=2) for s in syms), FadeOut(brace), FadeOut(arrows), run_time=1.2)
            self.wait(1.2)
        self.symbols = syms

    def mark_groups(self, groups, col_at, color, text_fn):
        """Outline the columns of each group of equal words and join them with a bar underneath
        (bars of different groups at different depths); the notes `text_fn(group)` sit in one
        row below the lowest bar, so no tick line crosses a note."""
        marks, notes = VGroup(), VGroup()
        low = min(c.get_bottom()[1] for c in col_at.values())
        for g_no, g in enumerate(groups):
            rects = VGroup(*(SurroundingRectangle(col_at[i], color=color, buff=0.06, stroke_width=2.5) for i in g))
            y = low - 0.25 - 0.3 * g_no
            xs = [col_at[i].get_x() for i in g]
            bar = Line([xs[0], y, 0], [xs[-1], y, 0], color=color, stroke_width=2)
            ticks = VGroup(*(Line([x, y, 0], [x, low - 0.08, 0], color=color, stroke_width=2) for x in xs))
            marks.add(rects, bar, ticks)
            notes.add(label(text_fn(g), font_size=20, color=color))
        notes.arrange(RIGHT, buff=0.6)
        fit_into(notes, 13.6, 1.0)
        notes.move_to([0, low - 0.25 - 0.3 * (len(groups) - 1) - 0.12 - notes.height / 2, 0])
        return marks, notes


# --------------------------------------------------------------------------------------------
# mole and eiffel_tower: one ambiguous word, several phrases, a 3-D space of named directions


@dataclass
class PhraseStep:
    """One phrase's numbers for the focus word (all from the trace)."""

    trace: Trace
    focus: int  # index of the focus word in the phrase
    weights: np.ndarray  # the head's attention row of the focus word ([n_keys])
    E: np.ndarray  # the focus word's vector entering the layer
    dE: np.ndarray  # this head's ΔE for it
    E2: np.ndarray  # E + ΔE


class ContextSpaceScene(TraceScene):
    """Shared by `mole` and `eiffel_tower` (see the module doc)."""

    default_head_keyword = "sense"
    max_sentences = 4
    default_axes: tuple[str, ...] = ()
    show_lookup_columns = True  # beat 1: the identical lookup columns of the focus word
    compare_steps = False  # a line under the table: this step's E′ minus the previous step's

    def __init__(self, inputs, **kwargs):
        super().__init__(inputs, **kwargs)
        self.steps = [self.make_step(t) for t in self.traces]
        vecs = np.array([v for s in self.steps for v in (s.E, s.E2)])
        self.axes_names = resolve_axes(self.trace, inputs.axes, self.default_axes, vecs)

    def make_step(self, tr: Trace) -> PhraseStep:
        i = self.focus_index(tr)
        ht = self.head_trace(tr)
        E = tr.layers[self.layer].resid_in[i]
        return PhraseStep(tr, i, ht.pattern[i], E, ht.delta_e[i], tr.updated(self.layer, self.head_index)[i])

    # --- pieces ---------------------------------------------------------------------------------
    def head_note(self):
        ht = self.head_trace()
        t = label(f"ΔE: layer {self.layer}, head {self.head_index} ({ht.name})", font_size=20, color=self.theme.delta)
        return t.to_corner(DOWN + LEFT, buff=0.3)

    def phrase_row(self, step: PhraseStep, y: float = 2.68, max_width: float = 12.6) -> WordBoxes:
        boxes = WordBoxes(step.trace.tokens, theme=self.theme, font_size=32, max_width=max_width)
        boxes.move_to([0, y, 0])
        return boxes

    def table(self, step: PhraseStep, names: list[str]) -> VGroup:
        """Rows E, ΔE, E′ × the three axes: the real projections (what the arrows show)."""
        th = self.theme
        coords = [self.space.coords(v) for v in (step.E, step.dE, step.E2)]
        col_x = [0.0, 1.45, 2.9]
        header = VGroup(*(label(n, font_size=20, color=th.text).move_to([col_x[k], 0, 0])
                          for k, n in enumerate(names)))
        rows = VGroup()
        cells = []
        for r, (src, color, c) in enumerate(zip(
                (symbol_source("E"), symbol_source("E", delta=True), symbol_source("E", prime=True)),
                (th.embedding, th.delta, th.updated), coords)):
            y = -0.5 * (r + 1)
            sym = math(src, font_size=26, color=color).move_to([-1.2, y, 0])
            nums = VGroup(*(number(c[k], "vec", font_size=22, color=color).move_to([col_x[k], y, 0])
                            for k in range(3)))
            cells.append(nums)
            rows.add(VGroup(sym, nums))
        t = VGroup(header, rows)
        t.cells = cells
        return t

    # --- beats ----------------------------------------------------------------------------------
    def beat_lookup(self):
        """The phrases, stacked, and the focus word's identical lookup columns."""
        th = self.theme
        focus = self.steps[0].trace.tokens[self.steps[0].focus]
        n = len(self.steps)
        ys = np.linspace(3.3, 3.3 - 0.75 * (n - 1), n)
        rows = VGroup()
        for s, y in zip(self.steps, ys):
            r = WordBoxes(s.trace.tokens, theme=th, font_size=28, max_width=12.0).move_to([0.4, y, 0])
            r.highlight(s.focus, th.query)
            tag = label(str(len(rows) + 1), font_size=22, color=th.dim).next_to(r, LEFT, buff=0.3)
            rows.add(VGroup(tag, r))
        cols = VGroup()
        xs = np.linspace(-2.4 * (n - 1) / 2, 2.4 * (n - 1) / 2, n)
        top = ys[-1] - 0.75
        for k, (s, x) in enumerate(zip(self.steps, xs)):
            c = VectorColumn(s.trace.token_embeddings[s.focus], head=4, tail=1, font_size=22, theme=th,
                             brace=(k == n - 1), brace_text=f"{s.trace.model.d_model} numbers")
            c.move_to([x, 0, 0])
            c.shift(RIGHT * (x - c.brackets.get_x()))
            c.set_y(top - 0.35 - c.brackets.height / 2 - (c.get_top()[1] - c.brackets.get_top()[1]))
            tag = label(f"{quoted(focus)} in {k + 1}", font_size=20, color=th.query).next_to(c.brackets, UP, buff=0.12)
            cols.add(VGroup(tag, c))
        cols.set_x(0)
        eqs = VGroup(*(label("=", font_size=34, color=th.text).move_to(
            (cols[k][1].brackets.get_right() + cols[k + 1][1].brackets.get_left()) / 2) for k in range(n - 1)))
        tok = np.array([s.trace.token_embeddings[s.focus] for s in self.steps])
        identical = bool(np.all(tok == tok[0]))
        self.lookup_identical = identical
        self.lookup_columns = cols
        note_text = ("identical: the lookup ignores the context" if identical
                     else "these columns differ: this model's lookup is not a plain table")
        note = label(note_text, font_size=24, color=th.highlight if identical else th.value)
        note.next_to(cols, DOWN, buff=0.35)
        pos_note = label("(position is added too, but along directions none of the axes below can see)",
                         font_size=18, color=th.dim).next_to(note, DOWN, buff=0.15)
        if not self._position_invisible():
            pos_note = label("(position is added too, and it shifts these arrows a little)", font_size=18,
                             color=th.dim).next_to(note, DOWN, buff=0.15)
        count = {2: "Two", 3: "Three", 4: "Four"}.get(len(self.steps), str(len(self.steps)))
        with self.narrating(f"{count} phrases; {quoted(focus)} means something else in each."):
            self.play(FadeIn(rows, lag_ratio=0.25), run_time=1.5)
            self.wait(0.8)
        with self.narrating(f"Before attention, {quoted(focus)} is just looked up: "
                            + ("the same column of numbers in every phrase." if identical else
                               "and here the columns differ.")):
            self.play(FadeIn(cols, lag_ratio=0.15, shift=DOWN * 0.2), run_time=1.2)
            self.play(FadeIn(eqs), Write(note), run_time=0.8)
            self.play(FadeIn(pos_note), run_time=0.5)
            self.wait(1.6)
        self.play(FadeOut(VGroup(rows, cols, eqs, note, pos_note)), run_time=0.6)

    def _position_invisible(self) -> bool:
        """True when position never moves a projection on the chosen axes (the toy model's design)."""
        for s in self.steps:
            p = s.trace.position_embeddings[s.focus]
            if np.abs(self.space_coords(p)).max() > 1e-4:
                return False
        return True

    def space_coords(self, v):
        from .components.space3d import choose_axes

        _, basis, _ = choose_axes(self.trace, self.axes_names)
        return np.asarray(v, float) @ basis

    space_region = (-0.9, 6.0, -3.55, 2.2)  # x0, x1, y0, y1: where the space (axes and labels) goes

    def build_space(self):
        th = self.theme
        vecs = np.array([v for s in self.steps for v in (s.E, s.E2)])
        probe = EmbeddingSpace(self.trace, self.axes_names, fit_to=vecs, theme=th)
        phi, theta = choose_view(probe.coords(vecs), probe.coords(np.array([s.E2 for s in self.steps])))
        space = EmbeddingSpace(self.trace, self.axes_names, fit_to=vecs, theme=th, extent=3.0, font_size=24,
                               phi=phi, theta=theta, negative="auto")
        x0, x1, y0, y1 = self.space_region
        whole = VGroup(space.axis_lines, space.axis_labels)
        k = min((x1 - x0) / whole.width, (y1 - y0) / whole.height, 1.8)
        space.scale(k, about_point=space.point(np.zeros(3)))
        space._place_labels()
        whole = VGroup(space.axis_lines, space.axis_labels)
        space.shift(np.array([(x0 + x1) / 2, (y0 + y1) / 2, 0]) - whole.get_center())
        space._place_labels()
        self.space = space
        return space

    def construct(self):
        th = self.theme
        steps = self.steps
        focus = steps[0].trace.tokens[steps[0].focus]
        if self.show_lookup_columns and len(steps) > 1:  # "identical" needs at least two phrases
            self.beat_lookup()
        space = self.build_space()
        names = space.names
        self.drawn = []  # (step index, kind, SpaceArrow): every arrow drawn, for tests
        head_note = self.head_note()

        # the generic arrow(s): one per distinct E on these axes
        E0 = steps[0].E
        generic = space.arrow(E0, th.embedding, symbol_source("E"), name="E", attach=False)
        self.drawn.append((0, "E", generic))
        axes_caption = ", ".join(names[:2]) + " and " + names[2]
        with self.narrating(f"Axes: three of the model's named directions, {axes_caption}."):
            self.play(FadeIn(space), FadeIn(space.axis_labels), FadeIn(head_note), run_time=1.0)
        with self.narrating(f"Before attention, {quoted(focus)} is this one generic arrow, whatever the phrase."):
            self.play(space.grow_arrow(generic), run_time=0.9)
            self.wait(0.8)

        row = None
        table = None
        prev: list = []
        for k, s in enumerate(steps):
            toks = s.trace.tokens
            new_row = self.phrase_row(s)
            new_row.highlight(s.focus, th.query)
            new_table = self.table(s, names).to_edge(LEFT, buff=0.55).set_y(0.55)
            t_title = label(f"{quoted(focus)} on the three axes", font_size=20, color=th.dim)
            t_title.next_to(new_table, UP, buff=0.25).align_to(new_table, LEFT)
            new_table.add(t_title)
            new_table.cells[1].set_opacity(0)
            new_table.cells[2].set_opacity(0)
            # this phrase's own E when it differs from the generic one on these axes
            own_E = None
            if np.abs(space.coords(s.E) - space.coords(E0)).max() > 1e-3:
                own_E = space.arrow(s.E, th.embedding, None, name=f"E{k}", attach=False)
                self.drawn.append((k, "E", own_E))
            intro = [FadeIn(new_row) if row is None else FadeTransform(row, new_row),
                     FadeIn(new_table) if table is None else FadeTransform(table, new_table)]
            if prev:
                intro += [a.animate.set_opacity(0.35) for a in prev]
                intro += [FadeOut(a.label) for a in prev if getattr(a, "label", None) is not None and a.kind == "dE"]
            with self.narrating(f"Phrase {k + 1}: {' '.join(toks)}."):
                self.play(*intro, run_time=0.9)
                if own_E is not None:
                    self.play(space.grow_arrow(own_E), run_time=0.6)
            row, table = new_row, new_table

            # arcs into the focus word from the words before it (the mask hides the rest)
            srcs = [row.box(j) for j in range(s.focus + 1)]
            tgt = row.box(s.focus)
            ang = arc_angle([b.get_top() for b in srcs], tgt.get_top(), max_rise=0.62)
            arcs = ContextArcs(srcs, tgt, s.weights[: s.focus + 1], theme=th, angle=ang, max_stroke=12)
            wl = weight_labels(arcs, th)
            self_w = None
            if s.weights[s.focus] >= 0.05:
                self_w = number(s.weights[s.focus], "weight", font_size=18, color=th.text)
                self_w.next_to(tgt, UP, buff=0.08)
                self_w.add(label("self", font_size=14, color=th.dim).next_to(self_w, RIGHT, buff=0.06))
            self.arcs = getattr(self, "arcs", []) + [arcs]
            later = list(range(s.focus + 1, len(toks)))
            with self.narrating(f"Attention (real weights): {attention_phrase(toks, s.weights, s.focus)}."):
                self.play(arcs.grow(run_time=1.0), FadeIn(wl), *( [FadeIn(self_w)] if self_w is not None else []))
                self.play(arcs.pulse(run_time=1.0))
            if later:
                self.causal_note(s, row, new_table)

            dE = space.difference_arrow(s.E, s.E2, th.delta, symbol_source("E", delta=True), name=f"dE{k}",
                                        attach=False)
            tag = context_tag(toks, s.weights, s.focus)
            E2 = space.arrow(s.E2, th.updated, f"E′ ({tag})", name=f"E2_{k}", typst=False, attach=False)
            for a in (dE, E2):  # labels stay readable where they cross an arrow or an axis
                a.label.add_background_rectangle(color=th.background, opacity=0.7, buff=0.05)
            dE.kind, E2.kind = "dE", "E2"
            self.drawn += [(k, "dE", dE), (k, "E2", E2)]
            dcoords = space.coords(s.dE)
            with self.narrating(f"The head's change ΔE moves it {delta_phrase(dcoords, names)}."):
                self.play(space.grow_arrow(dE), table.cells[1].animate.set_opacity(1), run_time=1.0)
            with self.narrating(f"E′ = E + ΔE: {quoted(focus)} as this phrase means it."):
                self.play(space.grow_arrow(E2), table.cells[2].animate.set_opacity(1), run_time=0.9)
                self.wait(0.9)
            if self.compare_steps and k > 0:
                before = steps[k - 1]
                change = space.coords(s.E2) - space.coords(before.E2)
                vs = label(f"E′ from {quoted(' '.join(before.trace.tokens))} to {quoted(' '.join(toks))}:",
                           font_size=20, color=th.dim)
                nums = VGroup(*(VGroup(label(n, font_size=20, color=th.dim),
                                       number(c, "vec", font_size=20, color=th.updated)).arrange(RIGHT, buff=0.12)
                                for n, c in zip(names, change))).arrange(RIGHT, buff=0.4)
                cmp = VGroup(vs, nums).arrange(DOWN, aligned_edge=LEFT, buff=0.12)
                fit_into(cmp, 5.6, 1.0).next_to(table, DOWN, buff=0.45).align_to(table, LEFT)
                table.add(cmp)
                with self.narrating(f"Compared with {quoted(' '.join(before.trace.tokens))}: "
                                  f"{delta_phrase(change, names)}."):
                    self.play(FadeIn(cmp), run_time=0.6)
                    self.wait(0.6)
            self.play(FadeOut(arcs), FadeOut(wl), *([FadeOut(self_w)] if self_w is not None else []), run_time=0.4)
            prev = [dE, E2]

        # the end: all refined arrows, the space turning
        with self.narrating(self.closing_caption(focus, names)):
            self.play(*(a.animate.set_opacity(1) for _, kind, a in self.drawn if kind == "E2"),
                      *(FadeOut(a.label) for a in prev if a.kind == "dE" and a.label is not None), run_time=0.5)
            self.play(space.rotation(-35 * DEGREES, run_time=2.5))
            self.play(space.rotation(35 * DEGREES, run_time=2.5))
            self.wait(0.5)

    def closing_caption(self, focus, names) -> str:
        best = [names[int(np.argmax(np.abs(self.space.coords(s.dE))))] for s in self.steps]
        if len(set(best)) == len(best) and len(best) > 1:
            return f"Turned around: each refined {quoted(focus)} has moved toward its own direction."
        return f"Turned around: each phrase moved {quoted(focus)} by its own real ΔE."

    def causal_note(self, s: PhraseStep, row: WordBoxes, table: VGroup):
        """The words after the focus are masked for it; what they say can only flow forward."""
        th = self.theme
        toks = s.trace.tokens
        focus = toks[s.focus]
        later = list(range(s.focus + 1, len(toks)))
        before = [toks[j] for j in range(s.focus)]
        seen = (quoted(before[0]) if len(before) == 1 else f"the {len(before)} words before it") if before else "itself"
        after = " ".join(toks[j] for j in later)
        if len(after) > 28:
            after = " ".join(toks[j] for j in later[:3]) + " …"
        lines = [
            "A causal model lets each word look only backward.",
            f"{quoted(focus)} can use {seen},",
            f"but not {quoted(after)}:",
            "that meaning can only flow forward,",
            "into the words that come after it.",
        ]
        note = VGroup(*(label(t, font_size=20, color=th.text) for t in lines)).arrange(DOWN, aligned_edge=LEFT, buff=0.1)
        frame = SurroundingRectangle(note, color=th.mask, buff=0.15, stroke_width=2, corner_radius=0.08)
        frame.set_fill(th.background, opacity=0.92)
        box = VGroup(frame, note)
        fit_into(box, 5.5, 2.3)
        box.to_edge(LEFT, buff=0.4).set_y(-2.2)
        self.causal_box = box
        with self.narrating(f"Causal: {quoted(focus)} sees only earlier words; "
                            f"{quoted(after)} can only inform later ones."):
            self.play(row.animate.recolor(later, th.mask), FadeIn(box), run_time=0.7)
            self.wait(2.5)
        self.play(FadeOut(box), row.animate.recolor(later, th.dim), run_time=0.5)


@register("mole")
class Mole(ContextSpaceScene):
    description = "three meanings of 'mole': identical lookups, then real attention and ΔE move each toward its sense (3-D)"
    default_sentences = ("american shrew mole", "one mole of carbon dioxide", "take a biopsy of the mole")
    default_focus = "mole"
    default_axes = ("animal", "chemistry", "medicine")


@register("eiffel_tower")
class EiffelTower(ContextSpaceScene):
    description = "'tower' → 'eiffel tower' → 'miniature eiffel tower': each step's real E′ in a paris/large/small space"
    default_sentences = ("tower", "eiffel tower", "miniature eiffel tower")
    default_focus = "tower"
    default_axes = ("paris", "small", "large")  # large last: the vertical axis, so "large" is up
    show_lookup_columns = False
    compare_steps = True


# --------------------------------------------------------------------------------------------
# last_token


def passage_lines(tokens: Sequence[str], max_chars: int = 46) -> list[list[int]]:
    """Token indices per line: a line ends after '.', '!' or '?', or before it grows too long."""
    lines: list[list[int]] = [[]]
    chars = 0
    for i, t in enumerate(tokens):
        if lines[-1] and chars + len(t) + 1 > max_chars:
            lines.append([])
            chars = 0
        lines[-1].append(i)
        chars += len(t) + 1
        if t in (".", "!", "?") and i < len(tokens) - 1:
            lines.append([])
            chars = 0
    return [ln for ln in lines if ln]


@register("last_token")
class LastToken(TraceScene):
    description = "a short mystery ending 'therefore the murderer was': the real attention of every head into the last word"
    max_sentences = 1

    default_sentences = (EXAMPLES["murder_mystery"],)

    def construct(self):
        th = self.theme
        tr = self.trace
        toks = tr.tokens
        n = len(toks)
        last = n - 1
        heads = [self.inputs.head] if self.inputs.head is not None else list(range(tr.model.n_heads))
        self.heads_shown = heads

        # the passage, one sentence per line
        lines = passage_lines(toks)
        rows = []
        box_of: dict[int, tuple[int, int]] = {}
        for r, idx in enumerate(lines):
            wb = WordBoxes([toks[i] for i in idx], theme=th, font_size=34)
            rows.append(wb)
            for c, i in enumerate(idx):
                box_of[i] = (r, c)
        passage = VGroup(*rows).arrange(DOWN, buff=0.62, aligned_edge=LEFT)
        fit_into(passage, 12.8, 4.2)
        passage.move_to([0, 1.1, 0])
        self.rows, self.box_of = rows, box_of

        def box(i):
            r, c = box_of[i]
            return rows[r].box(c)

        target = box(last)
        tr_row, tr_col = box_of[last]
        with self.narrating("A short mystery. To guess the next word, the model uses only the vector at the last position."):
            self.play(FadeIn(passage, lag_ratio=0.05), run_time=1.8)
            self.play(rows[tr_row].animate.highlight(tr_col, th.query), run_time=0.6)
            self.wait(0.8)
        need = label("that one vector would need the whole story in it", font_size=24, color=th.query)
        need.next_to(passage, DOWN, buff=0.45)
        with self.narrating(f"So {quoted(toks[last])} would have to gather clues from all over the passage."):
            self.play(FadeIn(need), run_time=0.6)
            self.wait(1.2)
        self.play(FadeOut(need), run_time=0.4)

        srcs = [box(j) for j in range(n)]
        panel_y = -2.35
        self.arcs_by_head = {}
        reach = {}
        for h in heads:
            ht = tr.head(self.layer, h)
            w = ht.pattern[last]
            # arcs: within a line they bulge a little; from lines above they come nearly straight
            ang = arc_angle([b.get_top() for b in srcs[:last]] or [target.get_top()], target.get_top(),
                            max_rise=0.45, cap=PI / 3)
            arcs = ContextArcs(srcs, target, w, theme=th, angle=ang, max_stroke=12)
            self.arcs_by_head[h] = arcs
            far = float(w[: max(last - 1, 0)].sum())  # weight on words before the previous one
            reach[h] = far
            title = label(f"head {h} · {ht.name}", font_size=26, color=th.text)
            top = [int(k) for k in np.argsort(-w, kind="stable")[:3] if w[k] >= 0.01]
            parts = [f"{quoted(toks[k])}{' (itself)' if k == last else ''} {fmt_weight(w[k])}" for k in top]
            detail = label("strongest: " + ",  ".join(parts), font_size=22, color=th.dim)
            far_l = label(f"attention reaching past the previous word: {fmt_weight(far)}",
                          font_size=22, color=th.dim)
            panel = VGroup(title, detail, far_l).arrange(DOWN, buff=0.14)
            fit_into(panel, 12.8, 1.8).move_to([0, panel_y, 0])
            self_w = VGroup()
            if w[last] >= 0.01:  # the weight a word keeps on itself has no arc: say it in numbers
                self_w = number(w[last], "weight", font_size=18, color=th.text).next_to(target, UP, buff=0.08)
                self_w.add(label("self", font_size=14, color=th.dim).next_to(self_w, RIGHT, buff=0.06))
            with self.narrating(self.head_caption(h, ht.name, toks, w, last)):
                self.play(FadeIn(panel), arcs.grow(run_time=1.0), FadeIn(self_w), run_time=1.0)
                self.play(arcs.pulse(run_time=1.0))
                self.wait(1.0)
            self.play(FadeOut(panel), FadeOut(arcs), FadeOut(self_w), run_time=0.4)
        self.reach = reach

        mean_far = float(np.mean([reach[h] for h in heads]))
        n_words = {1: "one", 2: "two", 3: "three", 4: "four"}
        heads_txt = (f"{n_words.get(len(heads), len(heads))} heads, none" if len(heads) > 1
                     else "this head is not")
        lines_txt = [
            f"This toy has one layer; {heads_txt} built for mysteries.",
            f"On average {fmt_weight(mean_far)} of the last word's attention reaches past the word before it.",
            "A large model stacks many layers of many heads:",
            "that is how clues from the whole passage can reach this last vector.",
        ]
        if tr.vocab:
            logits = tr.logits[last]
            p = np.exp(logits - logits.max())
            p /= p.sum()
            top = [int(k) for k in np.argsort(-p, kind="stable")[:3]]
            guesses = ", ".join(f"{quoted(tr.vocab[k])} {fmt_weight(p[k])}" for k in top)
            lines_txt.append(f"The toy's own best guesses for the next word: {guesses}.")
        note = VGroup(*(label(t, font_size=22, color=th.text) for t in lines_txt)).arrange(DOWN, buff=0.12)
        fit_into(note, 12.8, 2.2).move_to([0, -2.6, 0])
        self.note = note
        with self.narrating("Honestly: in this one-layer toy almost nothing from the passage reaches the last word. "
                            "A big model, layer after layer, has to pack the clues into that last vector."):
            self.play(FadeIn(note, lag_ratio=0.1), run_time=1.5)
            self.wait(4.0)

    @staticmethod
    def head_caption(h, name, toks, w, last) -> str:
        k = int(np.argmax(w))
        if k == last:
            return f"Head {h} ({name}): {quoted(toks[last])} keeps {fmt_weight(w[last])} on itself; nothing flows in."
        return f"Head {h} ({name}): {fmt_weight(w[k])} of the attention comes from {quoted(toks[k])}."
