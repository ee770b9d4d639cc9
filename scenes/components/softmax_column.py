"""The softmax of one query, shown on its own: its column lifts out of the attention grid, the
real raw scores turn into the real weights (which visibly sum to 1), and it goes back.

    sm = SoftmaxColumn(grid, query=3)
    sm.play(self)                      # lift, normalize, settle; or play the three tweens yourself:
    self.play(sm.lift()); self.play(sm.normalize()); self.play(sm.settle())

Every number comes from the grid's arrays: scores are `grid.scores[query]` (one decimal, two where one would show a tie the weights deny),
weights `grid.pattern[query]` (two decimals) and Σ is the sum of the whole row of weights (not of
the rounded ones shown): when every key is listed and the drawn weights do not add up to the drawn
Σ, it reads "Σ ≈". Blocked keys lift with what the grid shows for them: −∞ once the grid's
mask is revealed; otherwise their raw score, which turns to −∞ (what the softmax really sees) as
the softmax starts. A long column shows its largest weights in key order with ⋮ where keys are
left out (with the caller's `sum_note` under Σ, e.g. how many keys the sum covers). The three
animations are tweens planned when they start, so they can also be built ahead and chained. The
component writes no words of its own: the note comes from the chapter's catalog.
"""

from __future__ import annotations

import numpy as np
from manim import DOWN, RIGHT, UP, Line, Rectangle, SurroundingRectangle, VGroup, config, linear

from .attention_grid import AttentionGrid
from .batched_shapes import Tween, lerp_color
from ..plans.rounding import drawn_misses
from ..review import declare_sum
from .text import label, number


def finer_kind(values, meanings, keys, coarse: str, fine: str) -> str:
    """The one rounding rule for a column of figures: write them `coarse`, or `fine` where `coarse`
    would show two keys the same figure though what they stand for differs as shown (`meanings[k]`,
    strings). The softmax column's scores (`score_kind`) and the next-token chart's probabilities
    (two tokens both 0.36, one of them picked) follow it."""
    from .text import FORMATTERS

    seen: dict[str, str] = {}
    for k in keys:
        if seen.setdefault(FORMATTERS[coarse](float(values[k])), meanings[k]) != meanings[k]:
            return fine
    return coarse


def score_kind(scores, weights, keys, complete: bool = False) -> str:
    """How the column writes its scores: one decimal ("score"), or two ("signed2") where one decimal
    would show two keys the same score though their weights differ as shown ("fluffy" and "blue" both
    +5.3, weighted 0.48 and 0.50: a student checking the softmax by hand needs +5.29 and +5.34); also two
    where the softmax of the one-decimal scores, written as weights, is not the weights drawn (SmolLM2's
    "␣creature": +1.3, −1.5, −3.0, −1.1 give 0.55 beside the drawn 0.56, review 52) when `keys` are every
    key the softmax runs over (`complete`)."""
    from .text import FORMATTERS

    weight = FORMATTERS["weight"]
    shown = {k: weight(float(weights[k])) for k in keys}
    if finer_kind(scores, shown, keys, "score", "score2") == "score2":
        return "score2"
    finite = [k for k in keys if np.isfinite(scores[k])]
    if complete and finite:
        rounded = np.round(np.asarray([scores[k] for k in finite], float), 1)
        by_hand = np.exp(rounded - rounded.max())
        by_hand /= by_hand.sum()
        if any(weight(float(w)) != shown[k] for k, w in zip(finite, by_hand)):
            return "score2"
    return "score"


def grid_score_kind(scores, weights, mask, fits) -> str:
    """How a grid writes its scores: "score2" for every cell when, in some query's row of [query, key]
    `scores`, one decimal would show two visible keys the same score though their `weights` differ as
    shown ("fluffy" and "blue" both +5.3 under "creature", weighted 0.48 and 0.50) and `fits(strings)`
    says two decimals are still readable in the cells; else "score"."""
    from ..style import fmt_score2, fmt_weight

    if scores is None:
        return "score"
    S, P, M = np.asarray(scores, float), np.asarray(weights, float), np.asarray(mask, bool)
    for q in range(S.shape[0]):
        keys = [k for k in range(S.shape[1]) if not M[q, k] and np.isfinite(S[q, k])]
        if finer_kind(S[q], {k: fmt_weight(P[q, k]) for k in keys}, keys, "score", "score2") == "score2":
            return "score2" if fits(["−∞"] + [fmt_score2(x) for x in S.ravel()]) else "score"
    return "score"


class SoftmaxColumn:
    """One query's scores → weights, beside the grid (see module docstring).

    - grid: the AttentionGrid (must have scores).
    - query: the query index (a column in the video layout, a row in the paper layout).
    - target: where the lifted column's centre goes (None: beside the grid, inside the frame).
    - max_entries: most keys listed; longer columns list their largest weights.
    - font_size: of the numbers (None: as large as fits the frame height, at most 28).
    - visible_only: list only the keys the mask lets this query see (no −∞ rows), for telling
      the softmax before the mask has been explained.
    - sum_note: a line under Σ when the column lists only some keys (e.g. the chapter's
      "over all 37 visible keys", with the count `visible_count`); None: no line.
    - op_text: the operator's name over the column (a formula symbol, "softmax" by default).

    `phase` says how far it has played: built, lifted, normalized, settled.
    """

    def __init__(self, grid: AttentionGrid, query: int, target=None, max_entries: int = 10,
                 font_size: float | None = None, theme=None, visible_only: bool = False,
                 sum_note: str | None = None, op_text: str = "softmax"):
        if grid.scores is None:
            raise ValueError("the softmax column needs raw scores: build the grid from a HeadTrace")
        self.grid, self.query = grid, int(query)
        self.theme = th = theme or grid.theme
        n = grid.n
        scores, weights, mask = grid.scores[query], grid.pattern[query], grid.mask[query]
        self.row_sum = float(weights.sum())
        self.visible_count = int((~mask).sum())  # keys the sum runs over
        allowed = np.nonzero(~mask)[0]
        universe = [int(k) for k in allowed] if visible_only else list(range(n))
        last_key = universe[-1]
        if len(universe) <= max_entries:
            keys = universe
        else:  # the largest weights, in key order
            top = allowed[np.argsort(-weights[allowed], kind="stable")[:max_entries]]
            keys = sorted(int(k) for k in top)
        self.shown_keys = keys
        listed = [k for k in keys if not mask[k]]
        self.score_kind = score_kind(scores, weights, listed, complete=len(listed) == self.visible_count)

        rows = len(keys) + sum(1 for a, b in zip(keys, keys[1:]) if b - a > 1) + (keys[0] > 0) + (keys[-1] < last_key)
        avail = config.frame_height - 1.2
        fs = font_size or float(np.clip(avail / ((rows + 3.2) * 0.0125 * 1.45), 10, 28))
        self.font_size = fs
        row_h = fs * 0.0125 * 1.45  # ~ line height of CMU Serif at this size, plus leading

        # blocked keys: the raw score while the grid still shows raw scores, then −∞ (what the
        # softmax really sees); unblocked keys: the raw score throughout
        self.key_labels, self.score_mobs, self.weight_mobs, self.gaps = [], [], [], []
        self.raw_blocked: dict[int, object] = {}  # key -> raw-score mobject of a blocked key
        row_ys = []
        y = 0.0
        prev = -1
        for k in keys:
            if k - prev > 1:
                dots = label("⋮", fs, th.dim).move_to([0.35, y - row_h / 2, 0])
                self.gaps.append(dots)
                y -= row_h
            kl = label(grid.tokens[k], fs * 0.85, th.key)
            kl.move_to([0, y - row_h / 2, 0]).align_to([-0.15, 0, 0], RIGHT)
            row_ys.append(y - row_h / 2)
            sm = number(-np.inf if mask[k] else scores[k], self.score_kind, fs, th.mask if mask[k] else th.text)
            if mask[k]:
                self.raw_blocked[k] = number(scores[k], self.score_kind, fs, th.text)
            if mask[k]:  # exactly 0, written as every masked cell writes it (review 48: "0.00" here, red "0" in the grids)
                wm = label("0", fs, th.mask)
                wm.value, wm.shown = 0.0, "0"
            else:
                wm = number(weights[k], "weight", fs, lerp_color(th.dim, th.text, np.sqrt(np.clip(weights[k], 0, 1))))
            self.key_labels.append(kl)
            self.score_mobs.append(sm)
            self.weight_mobs.append(wm)
            y -= row_h
            prev = k
        if prev < last_key:
            dots = label("⋮", fs, th.dim).move_to([0.35, y - row_h / 2, 0])
            self.gaps.append(dots)
            y -= row_h
        slot_w = max(m.width for m in self.score_mobs + self.weight_mobs + list(self.raw_blocked.values()))
        slot_x = 0.15 + slot_w / 2
        for i, k in enumerate(keys):
            yk = row_ys[i]
            self.score_mobs[i].move_to([slot_x, yk, 0])
            self.weight_mobs[i].move_to([slot_x, yk, 0])
            if k in self.raw_blocked:
                self.raw_blocked[k].move_to([slot_x, yk, 0])
        for g in self.gaps:
            g.set_x(slot_x)
        self.values = VGroup(*self.score_mobs)
        self.raw = VGroup(*self.raw_blocked.values())
        self.raw_shown = False  # decided when the column lifts (from the grid's mask state)
        self.header = label(grid.tokens[query], fs, th.query).move_to([slot_x, row_h * 0.6, 0])
        # Σ of the whole row of weights (not of the rounded numbers shown)
        rule_y = y - row_h * 0.2
        left = min(m.get_left()[0] for m in self.key_labels)
        self.rule = Line([left, rule_y, 0], [slot_x + slot_w / 2, rule_y, 0], stroke_color=th.dim, stroke_width=1.5)
        self.sum_mob = number(self.row_sum, "weight", fs, th.text)
        # every key listed: its weights as drawn must add up to the Σ as drawn, or the Σ says "≈"
        self.complete = len(keys) == len(universe)
        self.sum_approx = self.complete and drawn_misses([m.shown for m in self.weight_mobs], self.sum_mob.shown)
        sigma = label("Σ ≈" if self.sum_approx else "Σ =", fs, th.text)
        self.sum_row = VGroup(sigma, self.sum_mob).arrange(RIGHT, buff=0.12)
        self.sum_row.move_to([0, rule_y - row_h * 0.65, 0]).align_to([slot_x + slot_w / 2, 0, 0], RIGHT)
        note = None
        if len(keys) < len(universe) and sum_note:
            note = label(sum_note, fs * 0.6, th.dim)
            note.next_to(self.sum_row, DOWN, buff=0.08).align_to(self.sum_row, RIGHT)
        self.sum_group = VGroup(self.rule, self.sum_row, *([note] if note else []))
        declare_sum(self.sum_row, self.weight_mobs if self.complete else (lambda: None), self.sum_mob,
                    [sigma] if self.sum_approx else [], name="softmax column")
        # "softmax" sits inside the box, above the query word, so nothing pokes out of the box
        self.op_label = label(op_text, fs * 0.7, th.dim)
        self.op_label.next_to(self.header, UP, buff=0.1)

        content = VGroup(self.op_label, self.header, *self.key_labels, *self.gaps, self.values, self.sum_group)
        self.box = Rectangle(width=content.width + 0.5, height=content.height + 0.4,
                             stroke_color=th.query, stroke_width=3,
                             fill_color=th.background, fill_opacity=1.0).move_to(content)
        self.weights = VGroup(*self.weight_mobs)
        # everything is in the strip from the start; weights, Σ and the softmax label wait unseen
        self.strip = VGroup(self.box, self.header, *self.key_labels, *self.gaps, self.values, self.raw,
                            self.weights, self.op_label, self.sum_group)
        for m in (self.weights, self.op_label, self.sum_group, self.raw):
            m.set_opacity(0.0)
        self.strip.shift(self._target(target) - self.box.get_center())
        self.row_h = row_h
        self.phase = "built"

    # ------------------------------------------------------------------------------- placement
    def _target(self, target):
        if target is not None:
            return np.asarray(target, dtype=float)
        g = self.grid
        half_w = self.box.width / 2
        half_h = self.box.height / 2
        fw, fh = config.frame_width / 2 - 0.15, config.frame_height / 2 - 0.15
        ll, ur = g.column_region(self.query)
        y = float(np.clip((ll[1] + ur[1]) / 2, -fh + half_h, fh - half_h))
        right = g.get_right()[0] + 0.3 + half_w
        left = g.get_left()[0] - 0.3 - half_w
        if right + half_w <= fw:
            x = right
        elif left - half_w >= -fw:
            x = left
        else:  # no room beside the grid: over it, on the side away from the column
            col_x = (ll[0] + ur[0]) / 2
            x = -fw + half_w if col_x > 0 else fw - half_w
            x = float(np.clip(x, -fw + half_w, fw - half_w))
        return np.array([x, y, 0.0])

    def _column_state(self):
        """The strip shrunk onto the grid column it stands for."""
        ll, ur = self.grid.column_region(self.query)
        w, h = ur[0] - ll[0], ur[1] - ll[1]
        s = min(w / self.strip.width, h / self.strip.height) * 1.6
        return s, (ll + ur) / 2

    # ------------------------------------------------------------------------------- animations
    # Each tween is planned when it starts (so all three can be built ahead and chained).
    def lift(self, run_time: float = 1.2):
        """The column is outlined in the grid and its copy, with the raw scores, moves out."""

        def plan():
            # blocked keys show what the grid's cells show: their raw score while the grid's mask
            # is hidden (normalize then turns them to −∞), else −∞ straight away
            self.raw_shown = self.grid.mask_state == "hidden" and bool(self.raw_blocked)
            for k, raw in self.raw_blocked.items():
                raw.set_opacity(1.0 if self.raw_shown else 0.0)
                self.score_mobs[self.shown_keys.index(k)].set_opacity(0.0 if self.raw_shown else 1.0)
            home = self.strip.copy()
            s, c = self._column_state()
            start = home.copy().scale(s).move_to(c).set_opacity(0.0)
            self.phase = "lifted"
            return _tracks_update([(self.strip, start, home, 0.0, 1.0)]), None

        return self.grid.group(self.grid.highlight_column(self.query, run_time=run_time * 0.5),
                               Tween(self.strip, plan, run_time=run_time), lag_ratio=0.3)

    def normalize(self, run_time: float = 1.6):
        """Scores turn into weights (softmax), then Σ = 1.00 appears under them."""

        def plan():
            lift = 0.35 * self.row_h
            tracks = []
            # the softmax label (and blocked keys' raw scores turn to −∞), then the scores leave
            # upwards, then the weights rise into their place (never both at once: they would
            # overprint), then Σ
            blocked = [self.score_mobs[self.shown_keys.index(k)] for k in self.raw_blocked]
            t = 0.2 if self.raw_shown else 0.0  # time for the raw → −∞ change
            if self.raw_shown:
                tracks.append((self.raw, self.raw.copy(), self.raw.copy().set_opacity(0.0), 0.0, 0.2))
                for m in blocked:
                    tracks.append((m, m.copy(), m.copy().set_opacity(1.0), 0.05, 0.25))
            for group, t0, t1, dy_in, dy_out in ((self.op_label, 0.0, 0.2, -0.1, 0.0),
                                                 (self.values, 0.15 + t, 0.4 + t * 0.5, 0.0, lift),
                                                 (self.weights, 0.42 + t * 0.5, 0.74, -lift, 0.0),
                                                 (self.sum_group, 0.74, 1.0, -0.1, 0.0)):
                start, end = group.copy(), group.copy()
                if group is self.values:
                    end.set_opacity(0.0).shift(UP * dy_out)
                    if self.raw_shown:  # −∞ will be fully in by then: start from it
                        for m0 in start.submobjects:
                            m0.set_opacity(1.0)
                else:
                    start.shift(UP * dy_in)
                    end.set_opacity(1.0)
                tracks.append((group, start, end, t0, t1))
            self.phase = "normalized"
            return _tracks_update(tracks), None

        return Tween(self.strip, plan, run_time=run_time, rate_func=linear)

    def settle(self, run_time: float = 1.0):
        """The column goes back into the grid and the outline goes away."""

        def plan():
            start = self.strip.copy()
            s, c = self._column_state()
            end = start.copy().scale(s).move_to(c).set_opacity(0.0)
            self.phase = "settled"
            return _tracks_update([(self.strip, start, end, 0.0, 1.0)]), None

        return self.grid.group(Tween(self.strip, plan, run_time=run_time, remover=True),
                               self.grid.unhighlight(run_time=run_time * 0.6))

    def marks(self, key: int) -> VGroup:
        """Frames around key's row (its word and weight) and around the Σ row: what a caption about that
        weight and the sum points at, kept on screen while it is said (an Indicate flashes and leaves the
        frame as it was)."""
        i = self.shown_keys.index(int(key))
        frame = dict(color=self.theme.query, buff=0.06, stroke_width=2.5)
        return VGroup(SurroundingRectangle(VGroup(self.key_labels[i], self.weight_mobs[i]), **frame),
                      SurroundingRectangle(self.sum_row, **frame))

    def play(self, scene, pause: float = 0.8):
        """Play lift, normalize and settle on `scene`, with pauses between."""
        scene.play(self.lift())
        scene.wait(pause)
        scene.play(self.normalize())
        scene.wait(pause * 1.5)
        scene.play(self.settle())

    # ------------------------------------------------------------------------------- inspection
    @property
    def shown_numbers(self):
        """The number mobjects a viewer sees in the strip: the scores until normalize has
        played, the weights after."""
        if self.phase in ("normalized", "settled"):
            return list(self.weight_mobs)
        if self.raw_shown:
            return [self.raw_blocked.get(k, m) for k, m in zip(self.shown_keys, self.score_mobs)]
        return list(self.score_mobs)


def _tracks_update(tracks):
    """update(alpha) moving each mobject's family from `start` to `end` (copies with the same
    structure) during its own window [t0, t1] of the tween. A track leaves its mobject alone
    until its window opens; tracks that have opened apply in order of opening, so a later track
    on the same mobject takes over from an earlier one."""
    tracks = sorted(tracks, key=lambda tr: tr[3])

    def update(a):
        for mob, start, end, t0, t1 in tracks:
            if a < t0:
                continue
            t = float(np.clip((a - t0) / max(t1 - t0, 1e-9), 0.0, 1.0))
            t = t * t * (3 - 2 * t)
            for m, m0, m1 in zip(mob.family_members_with_points(), start.family_members_with_points(),
                                 end.family_members_with_points()):
                m.interpolate(m0, m1, t)

    return update
