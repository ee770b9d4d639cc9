"""`ring_attention`: a sequence too long for one device, spread over a ring of devices.

- `Ring`: the passage cut into N blocks, one per device; each device keeps its block of queries and
  starts with its own block of keys and values (a chip K V with its token range). For N steps the
  chips travel one device on around the ring, and each device's running max m, running sum l and
  running output O (first and last query row; O₁, O₂ … O_d) change, real numbers from model/ring.py;
  a device whose new keys all lie in its queries' future idles. At the end O / l beside the model's
  own head output for the same rows, equal to the printed digit.
- `RingCausal`: the causal mask cut into N × N blocks, rows and columns grouped by device: contiguous
  blocks leave whole blocks empty (devices idle unevenly), striped blocks (token t on device t mod N)
  spread the work; busy steps and query·key pairs per device, measured.
- `RingMemory`: one device's block of keys and values against all of them, to scale, and the bytes a
  device sends per step, for 1,000, 32,000 and 1,000,000 tokens, from the model's sizes.

Devices and tokens are numbered from 0 (token t goes to device t mod N when striped); the entries of O
from 1, as the flash lesson numbers them.
"""

from __future__ import annotations

from dataclasses import replace
from math import ceil, floor, log10

import numpy as np
from manim import (
    DL, DOWN, DR, LEFT, RIGHT, UL, UP, UR, Arrow, FadeIn, FadeOut, Line, Polygon, Rectangle, RoundedRectangle, Square, VGroup,
)

from attention_manim.model.passages import PASSAGES

from ..components.batched_shapes import points_mobject, rect_points
from ..components.number_table import aligned_rows
from ..components.text import label, text_baseline
from ..components.vectors import ellipsis_dots, math
from ..components.word_boxes import WordBoxes, space_key
from ..lesson import Chapter, Lesson
from ..plans.ring import (
    RingCausalPlan, RingMemoryPlan, RingPlan, busiest_head, plan_ring, plan_ring_causal, plan_ring_memory,
)
from ..stage import Stage
from ..style import byte_text
from ..style import has_hangul
from .beyond_parts import diff_line
from .embedding_parts import fit_into
from .embedding_parts import mixed_label as text
from .grid_parts import shown_token, side_title
from .head_split import fixed, model_name, tiny
from .honest import wrapped

T = "ring"  # the catalog: scenes/locales/<lang>/ring.toml
RING_PASSAGE = PASSAGES[0]  # 46 SmolLM2 tokens: a real model reads a real passage by default
DEVICE_COLORS = ("#58C4DD", "#F0AC5F", "#B58DF0", "#83C167", "#E07BD0", "#D9C65A", "#7F9CF5", "#FF8C69")


def device_color(i: int) -> str:
    return DEVICE_COLORS[i % len(DEVICE_COLORS)]


class RingLesson(Lesson):
    """A real model reads a real passage by default (the toy its own long example), and its default head
    is head 0 of the middle layer, as `python -m attention_manim.model.ring` takes it (a real model's
    first layer mixes values so little that O shows only zeros at two decimals). The toy's default head is
    the one whose running m and l change most over the ring (`busiest_head`)."""

    def setting(self, inputs):
        info = inputs.model
        if info is not None and info.real:
            if not inputs.sentences:
                inputs = replace(inputs, sentences=[RING_PASSAGE])
            if inputs.layer is None:
                inputs = replace(inputs, layer=info.n_layers // 2)
            return super().setting(inputs)
        setting = super().setting(inputs)
        # the toy: the head whose m and l move most as the blocks go by (--layer/--head name another)
        return busiest_head(setting) if inputs.layer is None and inputs.head is None else setting


def figure(value: float, shown: str, font_size: float, color: str):
    """A vector's entry as a figure (m, l, an entry of O): its decimal point in every language, as the
    grids' (README, "Numbers"); `.value` and `.shown` say so, as `components.text.number` does."""
    mob = label(shown, font_size, color)
    mob.value, mob.shown = float(value), shown
    return mob


def score_text(x: float) -> str:
    return "−∞" if x == float("-inf") else fixed(x, 1)


# --- the ring's geometry ----------------------------------------------------------------------------

def ring_layout(n_devices: int, left: float, right: float, bottom: float, top: float,
                gap_x: float = 1.1, gap_y: float = 0.75, max_w: float = 7.0):
    """Centres of the devices' boxes and the boxes' size: two rows, the ring running left to right
    along the top row and back right to left along the bottom one."""
    cols = ceil(n_devices / 2)
    rows = 2
    w = min(max_w, (right - left - (cols - 1) * gap_x) / cols)
    h = (top - bottom - (rows - 1) * gap_y) / rows
    span = cols * w + (cols - 1) * gap_x
    x0 = (left + right) / 2 - span / 2 + w / 2
    centres = []
    for i in range(n_devices):
        row, col = (0, i) if i < cols else (1, cols - 1 - (i - cols))
        centres.append(np.array([x0 + col * (w + gap_x), top - h / 2 - row * (h + gap_y), 0.0]))
    return centres, w, h


def ring_arrow(a: np.ndarray, b: np.ndarray, w: float, h: float, color: str, offset: float = 0.0) -> Arrow:
    """An arrow from the box centred at `a` to the one at `b` (boxes w × h), edge to edge."""
    d = b - a
    pad = 0.08
    if abs(d[1]) < 1e-6:  # the same row
        s = np.sign(d[0])
        start, end = a + RIGHT * s * (w / 2 + pad), b - RIGHT * s * (w / 2 + pad)
    elif abs(d[0]) < 1e-6:  # the same column
        s = np.sign(d[1])
        start, end = a + UP * s * (h / 2 + pad) + RIGHT * offset, b - UP * s * (h / 2 + pad) + RIGHT * offset
    else:  # diagonal: leave and enter through the edges the line crosses
        ta = min(w / 2 / abs(d[0]), h / 2 / abs(d[1]))
        unit = d / np.linalg.norm(d)
        start, end = a + d * ta + unit * pad, b - d * ta - unit * pad
    return Arrow(start, end, buff=0, stroke_width=5, color=color, max_tip_length_to_length_ratio=0.35,
                 max_stroke_width_to_length_ratio=8)


# --- chapter 1: the sequence cut into blocks, the ring, the steps, the result -------------------------

class Ring(Chapter):
    key = "ring"
    own_space_key = True

    def plan(self, setting) -> RingPlan:
        return plan_ring(setting)

    def play(self, stage: Stage, plan: RingPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        N, res = plan.n_devices, plan.result
        drawn: dict = {"tables": [], "chips": [], "status": []}
        stage.drawn[self.key] = drawn

        title = label(say(f"{T}.steps.title", head=head_words(say, plan.layer, plan.head)), 30, th.text)
        fit_into(title, full.width * 0.55, 0.6)
        title.move_to([full.left + title.width / 2, full.top - 0.35, 0])
        top = full.top - 0.85

        # the passage, its tokens outlined in their device's colour
        words = WordBoxes(plan.tokens, theme=th, font_size=30)
        lines = wrap(words, full.width, 0.25)
        legend = VGroup(*(legend_item(stage, plan, i) for i in range(N)))
        per_row = 4 if N > 4 else N
        legend.arrange_in_grid(rows=ceil(N / per_row), cols=per_row, buff=(0.6, 0.25), flow_order="rd")
        fit_into(legend, full.width, 1.0)
        passage = VGroup(lines, legend).arrange(DOWN, buff=0.7)
        fit_into(passage, full.width, top - full.bottom - 0.2)
        passage.move_to([0, (top + full.bottom) / 2, 0])
        # the passage's own key to ␣, in the corner under it, until the passage goes (review 35: the first
        # frames showed 46 tokens with ␣ and no key; the steps' key comes later, on the tables' line)
        intro_key = space_key(plan.tokens, say, th, font_size=22, mark_size=24) or VGroup()
        intro_key.move_to([full.right - intro_key.width / 2, full.bottom + intro_key.height / 2, 0])
        with stage.narrating(say(f"{T}.steps.caption_passage", count=plan.n, model=model_name(say, plan.model))):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(words, lag_ratio=0.02), FadeIn(intro_key), run_time=1.2)
        recolor = []
        for i, toks in enumerate(res.tokens):
            for t in toks:
                recolor.append(words[int(t)].box.animate.set_stroke(device_color(i), width=3)
                               .set_fill(device_color(i), opacity=0.3))
        # the devices' token ranges count from 0, as their devices do, not from 1 as a sentence's words elsewhere:
        # said in the corner the ␣ key leaves free (review 50)
        counted = label(say(f"{T}.steps.from_zero"), 22, th.dim)
        counted.move_to([full.left + counted.width / 2, full.bottom + counted.height / 2, 0])
        drawn["from_zero"] = counted
        with stage.narrating(say(f"{T}.steps.caption_split", count=N, n=plan.n)):
            stage.play(*recolor, FadeIn(legend, shift=UP * 0.1), FadeIn(counted), run_time=1.2)
            stage.wait(0.6)

        # the key to the tables' columns (m, l, O), along the frame's foot; the ring above it
        key = column_key(stage, plan, full.width)
        key.move_to([0, full.bottom + key.height / 2, 0])
        # a line above the key for the steps where a busy device's table does not visibly change (the
        # toy's heads): which devices, and the weight their rows give the new keys
        # and the key to the tokens' ␣ (a real model's tokens), at that line's left
        spaces = space_key(plan.tokens, say, th, font_size=22, mark_size=24)
        room = full.width - (spaces.width + 0.5 if spaces is not None else 0.0)
        notes = [still_note(stage, plan, t, room) for t in range(N)]
        ring_bottom = key.get_top()[1] + 0.2
        line = [n for n in notes if n is not None] + ([spaces] if spaces is not None else [])
        if line:
            note_h = max(n.height for n in line)
            y = key.get_top()[1] + 0.15 + note_h / 2
            if spaces is not None:
                spaces.move_to([full.left + spaces.width / 2, y, 0])
            for n in notes:
                if n is not None:
                    n.move_to([full.right - n.width / 2 if spaces is not None else 0, y, 0])
            ring_bottom += note_h + 0.1
        drawn["spaces"] = spaces
        # the ring: one box per device, arrows to the next
        centres, bw, bh = ring_layout(N, full.left, full.right, ring_bottom, top - 0.1)
        self.narrow = bw < 5.0
        boxes, heads = VGroup(), []
        for i in range(N):
            box = RoundedRectangle(width=bw, height=bh, corner_radius=0.12, stroke_color=device_color(i),
                                   stroke_width=3).move_to(centres[i])
            a, b = plan.span(i)
            head = VGroup(label(say(f"{T}.steps.device", device=i), 26, device_color(i)),
                          text(say(f"{T}.steps.queries", first=a, last=b), 24, th.query)).arrange(RIGHT, buff=0.3)
            boxes.add(box)
            heads.append(head)
        arrows = VGroup()
        for i in range(N):
            j = (i + 1) % N
            offset = (0.7 if i == 0 else -0.7) if N == 2 else 0.0
            arrows.add(ring_arrow(centres[i], centres[j], bw, bh, th.dim, offset))
        slots = [self.slots(box, head, bw, bh, self.narrow) for box, head in zip(boxes, heads)]
        chips = [self.chip(stage, plan, i, slots[i]["chip_w"]) for i in range(N)]
        for i, chip in enumerate(chips):
            chip.move_to(chip_spot(slots[i], chip))
        drawn.update(boxes=boxes, arrows=arrows, chips=chips, key=key)
        with stage.narrating(say(f"{T}.steps.caption_ring", count=N)):
            stage.play(FadeOut(words), FadeOut(legend), FadeOut(intro_key), FadeOut(counted), run_time=0.5)
            stage.play(FadeIn(boxes), FadeIn(VGroup(*heads)), FadeIn(VGroup(*chips)), run_time=1.0)
            stage.play(FadeIn(arrows, lag_ratio=0.2), run_time=0.8)

        # every step's table, built first so that all of them share one scale (equal digits everywhere)
        all_tables = [[self.state_table(stage, plan, t, i) for i in range(N)] for t in range(N)]
        place_all([tab for step in all_tables for tab in step], [slots[i] for _ in range(N) for i in range(N)])
        counter = note = None
        tables: list = [None] * N
        status: list = [None] * N
        drawn["notes"] = notes
        for t in range(N):
            moves = []
            if t > 0:  # every block goes one device on: device i's chip to device i + 1
                for i, chip in enumerate(chips):
                    moves.append(chip.animate.move_to(chip_spot(slots[(i + 1) % N], chip)))
                chips = [chips[(i - 1) % N] for i in range(N)]
            new_counter = label(say(f"{T}.steps.step", step=t + 1, count=N), 26, th.dim)
            new_counter.move_to([full.right - new_counter.width / 2, title.get_center()[1], 0])
            new_tables = all_tables[t]
            new_status = [self.status(stage, plan, t, i, slots[i]) for i in range(N)]
            outs = [m for m in tables + status + [note] if m is not None]
            with stage.narrating(caption_for_step(stage, plan, t)):
                if moves:
                    stage.play(*moves, *(a.animate.set_color(th.highlight) for a in arrows), run_time=1.0)
                    stage.play(*(a.animate.set_color(th.dim) for a in arrows), run_time=0.3)
                anims = [FadeIn(m) for m in new_tables + new_status] + [FadeOut(m) for m in outs]
                anims.append(FadeIn(new_counter))
                if notes[t] is not None:
                    anims.append(FadeIn(notes[t]))
                if t == 0:  # the columns appear with their key (and the tokens' ␣ with its own)
                    anims.append(FadeIn(key))
                    if spaces is not None:
                        anims.append(FadeIn(spaces))
                if counter is not None:
                    anims.append(FadeOut(counter))
                for i in range(N):
                    busy = plan.step(t, i).busy
                    anims.append(boxes[i].animate.set_stroke(width=5 if busy else 2, opacity=1.0 if busy else 0.5))
                stage.play(*anims, run_time=0.9)
                stage.wait(0.6)
            counter, note = new_counter, notes[t]
            tables, status = new_tables, new_status
            drawn["tables"].append(new_tables)
            drawn["status"].append(new_status)

        # the end: O / l on every device, beside the model's own output for the same rows
        results = [self.result_table(stage, plan, i) for i in range(N)]
        place_all(results, slots, top_shift=0.4)
        diff = diff_line(say, f"{T}.steps.max_diff", plan.max_diff_trace, 24, th.highlight)
        diff.move_to([full.right - diff.width / 2, title.get_center()[1], 0])
        if diff.get_left()[0] < title.get_right()[0] + 0.6:  # a clear gap: two lines, not one run-on title
            fit_into(diff, full.right - title.get_right()[0] - 0.6, 0.5)
            diff.move_to([full.right - diff.width / 2, title.get_center()[1], 0])
        with stage.narrating(say(f"{T}.steps.caption_done", count=N)):
            # the results divide O by l: the key's m (the largest score so far) has nothing left to name
            stage.play(*(FadeOut(m) for m in tables + status + ([note] if note else [])), *(FadeOut(c) for c in chips),
                       FadeOut(key[0]), *(b.animate.set_stroke(width=3, opacity=1.0) for b in boxes), run_time=0.5)
            stage.play(*(FadeIn(m) for m in results), run_time=1.0)
            stage.wait(0.4)
        with stage.narrating(say(f"{T}.steps.caption_equal", decimals=plan.decimals, n=plan.n,
                                 diff=tiny(say, plan.max_diff_trace))):
            stage.play(FadeOut(counter), FadeIn(diff), run_time=0.8)
            stage.wait(0.8)
        drawn.update(results=results, diff=diff)

    # --- pieces ---------------------------------------------------------------------------------
    @staticmethod
    def slots(box, head, bw: float, bh: float, narrow: bool = False) -> dict:
        """Where a device box's parts go: its header at the top left (two lines in a narrow box), the
        K/V chip at the top right, the status line under them, the table filling the rest."""
        pad = 0.18
        x0, x1 = box.get_left()[0] + pad, box.get_right()[0] - pad
        y1 = box.get_top()[1] - pad
        if narrow:
            head.arrange(DOWN, aligned_edge=LEFT, buff=0.1)
        fit_into(head, (x1 - x0) * (0.52 if narrow else 0.62), 0.75 if narrow else 0.4)
        head.move_to([x0 + head.width / 2, y1 - head.height / 2, 0])
        chip_w = min(1.9, (x1 - x0) * (0.46 if narrow else 0.34))
        chip = np.array([x1, y1 - 0.2, 0.0])  # its right edge and its centre's height
        status_y = min(y1 - 0.62, head.get_bottom()[1] - 0.22)
        return {"x0": x0, "x1": x1, "chip": chip, "chip_w": chip_w, "status_y": status_y,
                "table_top": status_y - 0.25, "bottom": box.get_bottom()[1] + pad}

    def chip(self, stage: Stage, plan: RingPlan, j: int, width: float) -> VGroup:
        """The K/V block that started on device j: K and V and its token range, in j's colour."""
        th, say = stage.theme, stage.say
        a, b = plan.span(j)
        k = label("K", 24, th.key)
        v = label("V", 24, th.value)
        rng = label(say(f"{T}.steps.range", first=a, last=b), 22, th.text)
        inner = VGroup(k, v, rng).arrange(RIGHT, buff=0.14)
        frame = RoundedRectangle(width=inner.width + 0.3, height=0.44, corner_radius=0.08,
                                 stroke_color=device_color(j), stroke_width=3).set_fill(th.background, opacity=0.9)
        chip = VGroup(frame, inner.move_to(frame))
        return fit_into(chip, width, 0.44)

    def status(self, stage: Stage, plan: RingPlan, t: int, i: int, slot: dict) -> VGroup:
        """Under the header: busy (how many query·key pairs this step) or idle; and what arrived."""
        th, say = stage.theme, stage.say
        s = plan.step(t, i)
        left = (label(say(f"{T}.steps.busy", count=s.cells), 22, th.highlight) if s.busy else
                label(say(f"{T}.steps.idle"), 22, th.mask))
        right = (label(say(f"{T}.steps.own"), 22, th.dim) if t == 0 else
                 label(say(f"{T}.steps.received", bytes=s.bytes_received), 22, th.dim))
        width = slot["x1"] - slot["x0"]
        fit_into(left, width * 0.48, 0.3)
        fit_into(right, width * 0.48, 0.3)
        left.move_to([slot["x0"] + left.width / 2, slot["status_y"], 0])
        right.move_to([slot["x1"] - right.width / 2, slot["status_y"], 0])
        return VGroup(left, right)

    narrow = False  # boxes too narrow for every column (five or six devices): O₁ … O_d, no tokens

    def o_columns(self, plan: RingPlan, short: bool = False) -> tuple[int, ...]:
        """The entries of O in a table: O₁, O₂ and the last; O₁ and the last in a narrow box or a table
        of long numbers (`short`)."""
        cols = plan.o_shown
        return (cols[0], cols[-1]) if (self.narrow or short) and len(cols) > 2 else cols

    def header_row(self, stage: Stage, plan: RingPlan, short: bool = False, final: bool = False) -> list:
        """The heads of the O columns: O₁, O₂, …, O_d (the entries shown, an ellipsis before the last);
        `final`: the output, O₁/l … O_d/l (the running O divided by the running sum)."""
        th = stage.theme
        cols = self.o_columns(plan, short)
        name = (lambda j: f"O_({j + 1}) slash l") if final else (lambda j: f"O_({j + 1})")
        cells = [math(name(j), 30, th.value) for j in cols[:-1]]
        if len(cols) > 1:
            cells.append(ellipsis_dots(RIGHT, spacing=0.1, radius=0.025, color=th.dim))
        cells.append(math(name(cols[-1]), 30, th.value))
        return cells

    def entries(self, plan: RingPlan, values: np.ndarray, decimals: int, color: str, short: bool = False) -> list:
        cols = self.o_columns(plan, short)
        cells = [figure(float(values[j]), fixed(float(values[j]), decimals), 24, color) for j in cols[:-1]]
        if len(cols) > 1:
            cells.append(ellipsis_dots(RIGHT, spacing=0.1, radius=0.025, color="#888888"))
        cells.append(figure(float(values[cols[-1]]), fixed(float(values[cols[-1]]), decimals), 24, color))
        return cells

    def state_table(self, stage: Stage, plan: RingPlan, t: int, i: int) -> VGroup:
        """Device i after step t: its first and last query row's m, l and O₁, O₂ … O_d."""
        th = stage.theme
        s = plan.step(t, i)
        color = th.text if s.busy else th.dim
        head = [label("", 22, th.text), math("m", 30, th.highlight), math("l", 30, th.highlight)]
        head += self.header_row(stage, plan)
        rows = [head]
        position = dict(zip(plan.rows(i), plan.rows_shown[i]))
        for r in gapped(plan.rows(i), len(plan.result.tokens[i])):
            if r is None:  # rows left out here
                rows.append([ellipsis_dots(DOWN, spacing=0.07, radius=0.022, color=th.dim)])
                continue
            rows.append([self.row_name(stage, plan, position[r]), figure(float(s.m[r]), score_text(float(s.m[r])), 24, color),
                         figure(float(s.l[r]), fixed(float(s.l[r]), 2), 24, color)] + self.entries(plan, s.O[r], 2, color))
        # (rows 0.38 apart and a ⋮ half a row: a table with a ⋮ at each end as tall as one with a ⋮ between
        # its rows at 0.42, so that no table's figures shrink under 14 px)
        table = level(aligned_rows(rows, col_gap=0.2 if self.narrow else 0.26, row_step=0.38,
                                   align=["left"] + ["right"] * 7))
        return close_gaps(table, 0.38)

    def result_table(self, stage: Stage, plan: RingPlan, i: int) -> VGroup:
        """Device i's output rows O / l (ring) above the model's own head output (model), same rows."""
        th, say = stage.theme, stage.say
        last = plan.result.steps_of(i)[-1]
        rows = [[label("", 22, th.text), label("", 22, th.text)] + self.header_row(stage, plan, short=True, final=True)]
        position = dict(zip(plan.rows(i), plan.rows_shown[i]))
        for r in gapped(plan.rows(i), len(plan.result.tokens[i])):
            if r is None:  # rows left out here
                rows.append([ellipsis_dots(DOWN, spacing=0.07, radius=0.022, color=th.dim)])
                continue
            p = position[r]
            ring_row = last.O[r] / last.l[r]
            rows.append([self.row_name(stage, plan, p), label(say(f"{T}.steps.ring_name"), 22, th.value)]
                        + self.entries(plan, ring_row, plan.decimals, th.value, short=True))
            rows.append([label("", 22, th.text), label(say(f"{T}.steps.model_name"), 22, th.delta_multi)]
                        + self.entries(plan, plan.trace_z[p], plan.decimals, th.delta_multi, short=True))
        table = level(aligned_rows(rows, col_gap=0.1 if self.narrow else 0.3, row_step=0.35,
                                   align=["left", "left"] + ["right"] * 6))
        return close_gaps(table, 0.35)

    def row_name(self, stage: Stage, plan: RingPlan, p: int) -> VGroup:
        """A query row: its position (dim) and its token (in a narrow box, its position only); a token
        without a letter or digit (".") quoted, so that it is not a lone speck."""
        th = stage.theme
        if self.narrow:
            return VGroup(label(str(p), 24, th.query))
        return VGroup(label(str(p), 24, th.dim), label(shown_token(stage.say, plan.tokens[p]), 24, th.query)).arrange(
            RIGHT, buff=0.12)

def gapped(shown: tuple[int, ...], count: int) -> list[int | None]:
    """A device's rows shown (indices into its `count` rows), in order, with None wherever rows are left
    out: before the first, between two, after the last. Each None is a ⋮ in its table, so that every
    device's table says the same way which of its rows it skips (review 47: two devices' tables ended on
    a row that was not their block's last, with no ⋮ after it)."""
    out: list[int | None] = []
    previous = -1
    for r in sorted(shown):
        if r - previous > 1:
            out.append(None)
        out.append(r)
        previous = r
    if previous < count - 1:
        out.append(None)
    return out


def close_gaps(table: VGroup, row_step: float, keep: float = 0.5) -> VGroup:
    """A table's ⋮ rows (rows with no text) `keep` of a row's height, the rows under them drawn up: a
    table with a ⋮ at each end takes little more room than one with a ⋮ between its two rows."""
    from manim import Text

    shift, squeeze = 0.0, (1.0 - keep) * row_step
    for row in table:
        if any(isinstance(m, Text) for m in row.get_family()):
            row.shift(UP * shift)
        else:
            row.shift(UP * (shift + squeeze / 2))
            shift += squeeze
    return table


def level(table: VGroup, row_step: float | None = None) -> VGroup:
    """Every row's texts on one baseline (a comma or a descender does not lift a number); with
    `row_step`, the rows' baselines evenly `row_step` apart as well (a row of "6,14 MB" no lower than
    a row of "192 MB")."""
    from manim import Text

    first = None
    for k, row in enumerate(table):
        texts = [m for m in row if isinstance(m, Text) and m.text.strip()]
        if not texts:
            continue
        base = text_baseline(texts[-1])
        for m in texts[:-1]:
            if has_hangul(m.text):  # a round Hangul bottom (링) overshoots the line: centred on the figures
                m.set_y(texts[-1].get_center()[1])
            else:
                m.shift(UP * (base - text_baseline(m)))
        if row_step is not None:
            if first is None:
                first = base + k * row_step
            row.shift(UP * (first - k * row_step - base))
    return table


SYMBOL_SLOT = "\ue000"  # where a catalog line's typeset symbol goes ({l} in "not yet divided by {l}")


def words_with_symbol(said: str, symbol, font_size: float, color: str) -> VGroup:
    """A line of words with a typeset symbol where `SYMBOL_SLOT` stands ("not yet divided by l", "l로
    나누기 전"): the symbol's foot on the words' line, a space's gap where the words leave one."""
    before, _, after = said.partition(SYMBOL_SLOT)
    parts = []
    if before.strip():
        parts.append((text(before.strip(), font_size, color), before != before.rstrip()))
    parts.append((symbol, after != after.lstrip()))
    if after.strip():
        parts.append((text(after.strip(), font_size, color), False))
    row = VGroup(parts[0][0])
    for (prev, spaced), (mob, _) in zip(parts, parts[1:]):
        mob.next_to(prev, RIGHT, buff=font_size * 0.0075 if spaced else 0.03)  # a space, as mixed_label leaves
        row.add(mob)
    words = [m for m in row if m is not symbol]
    if words:
        base = text_baseline(words[0])
        for m in words[1:]:
            m.shift(UP * (base - text_baseline(m)))
        symbol.set_y(base + symbol.height / 2)
    return row


def head_words(say, layer: int, head: int) -> str:
    """A head as the suite names it on screen: "layer 15 · head 0" (layers and heads from 0)."""
    return say("common.head.layer_head", layer=layer, head=head)


def place_all(tables: list, slots: list, top_shift: float = 0.0) -> None:
    """Tables into their device boxes' table areas (under the status line; `top_shift` higher), all at
    one scale: the largest that fits every one of them."""
    def room(slot):
        top = slot["table_top"] + top_shift
        return slot["x1"] - slot["x0"], top - slot["bottom"], top

    k = min(1.0, *(min(w / t.width, h / t.height) for t, slot in zip(tables, slots) for w, h, _ in [room(slot)]))
    for t, slot in zip(tables, slots):
        t.scale(k)
        top = room(slot)[2]
        t.move_to([slot["x0"] + t.width / 2, top - t.height / 2, 0])


def chip_spot(slot: dict, chip) -> np.ndarray:
    """The centre of `chip` placed in a device box: its right edge at the box's inner right edge."""
    x1, y = slot["chip"][0], slot["chip"][1]
    return np.array([x1 - chip.width / 2, y, 0.0])


def wrap(words: WordBoxes, width: float, gap_y: float) -> WordBoxes:
    """Lay a row of word boxes out in lines no wider than `width` (in place)."""
    gap = 0.12
    lines: list[list] = [[]]
    x = 0.0
    for w in words:
        if lines[-1] and x + w.width > width:
            lines.append([])
            x = 0.0
        lines[-1].append(w)
        x += w.width + gap
    h = words[0].height
    y = 0.0
    for line in lines:
        x = 0.0
        for w in line:
            w.move_to([x + w.width / 2, y, 0])
            x += w.width + gap
        y -= h + gap_y
    words.center()
    return words


# --- chapter 1's pieces, outside the class (a chapter stays short enough to read) ---------------------

def legend_item(stage: Stage, plan: RingPlan, i: int) -> VGroup:
    th, say = stage.theme, stage.say
    a, b = plan.span(i)
    sw = RoundedRectangle(width=0.42, height=0.3, corner_radius=0.05, stroke_color=device_color(i),
                          stroke_width=3).set_fill(device_color(i), opacity=0.3)
    text = label(say(f"{T}.steps.legend", device=i, first=a, last=b), 24, th.text)
    return VGroup(sw, text).arrange(RIGHT, buff=0.15)


def column_key(stage: Stage, plan: RingPlan, width: float) -> VGroup:
    """What the tables' columns hold, in words: m the largest score so far, l the running sum of the
    exponentials, O the running output, not yet divided by l (the l in the words typeset as in the
    tables). `.symbols` (m, l, O), `.words` (each item's line of words)."""
    th, say = stage.theme, stage.say
    symbols = [math("m", 30, th.highlight), math("l", 30, th.highlight), math("O", 30, th.value)]
    words = [text(say(f"{T}.steps.key_m"), 22, th.text), text(say(f"{T}.steps.key_l"), 22, th.text),
             words_with_symbol(say(f"{T}.steps.key_o", l=SYMBOL_SLOT), math("l", 30, th.highlight), 22, th.text)]
    items = []
    for sym, word in zip(symbols, words):
        item = VGroup(sym, word).arrange(RIGHT, buff=0.15)
        sym.set_y(text_baseline(word) + sym.height / 2)  # the letter on the words' line
        items.append(item)
    key = VGroup(*items).arrange(RIGHT, buff=0.55)
    fit_into(key, width, 0.45)
    key.symbols, key.words = VGroup(*symbols), VGroup(*words)
    return key


def still_note(stage: Stage, plan: RingPlan, t: int, width: float):
    """Step t's note on the busy devices whose tables read as before (`RingPlan.still`): their
    rows give the new keys less than 0.01% (or 0.1%, 1%) of their weight. None when there are none."""
    th, say = stage.theme, stage.say
    devices, share = plan.still(t)
    if not devices:
        return None
    pct = next(p for p in (0.01, 0.1, 1.0) if share * 100 < p)
    under = say(f"{T}.steps.share_under", pct=say.number(pct, f".{max(0, -floor(log10(pct)))}f"))
    note = text(say(f"{T}.steps.still", count=len(devices), devices=say.words([str(i) for i in devices]),
                    share=under), 22, th.text)
    return fit_into(note, width, 0.4)


def caption_for_step(stage: Stage, plan: RingPlan, t: int) -> str:
    say = stage.say
    N = plan.n_devices
    if t == 0:
        return say(f"{T}.steps.caption_first", d=plan.d)
    idle = plan.idle(t)
    got = sorted({plan.step(t, i).bytes_received for i in range(N)})
    sent = (say(f"{T}.steps.bytes_one", bytes=got[0]) if len(got) == 1 else
            say(f"{T}.steps.bytes_range", low=got[0], high=got[-1]))
    devices = say.words([str(i) for i in idle])
    explained = any(plan.idle(u) for u in range(1, t))  # why a device idles is said once
    if idle and not explained:
        return say(f"{T}.steps.caption_move_idle", step=t + 1, sent=sent, count=len(idle), devices=devices)
    if t == 1:
        return say(f"{T}.steps.caption_move_all", step=t + 1, sent=sent)
    if idle:
        return say(f"{T}.steps.caption_again_idle", step=t + 1, count=len(idle), devices=devices)
    return say(f"{T}.steps.caption_again_all", step=t + 1)


# --- chapter 2: causal, contiguous against striped ---------------------------------------------------

class RingCausal(Chapter):
    key = "ring_causal"
    shows_tokens = False

    def plan(self, setting) -> RingCausalPlan:
        return plan_ring_causal(setting)

    def play(self, stage: Stage, plan: RingCausalPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        N = plan.n_devices
        drawn: dict = {}
        stage.drawn[self.key] = drawn
        title = label(say(f"{T}.causal.title"), 30, th.text)
        fit_into(title, full.width, 0.6)
        title.move_to([0, full.top - 0.35, 0])
        top = full.top - 0.9
        c, s = plan.contiguous, plan.striped
        # at the bottom: what the two codes mean, and what striping gains (the busiest device's scores)
        legend = self.legend(stage)
        gain = label(say(f"{T}.causal.busiest", before=max(c.cells), after=max(s.cells)), 24, th.highlight)
        fit_into(gain, full.width - 0.6, 0.45)
        fit_into(legend, full.width - 0.6, 0.4)
        gain.move_to([0, full.bottom + 0.1 + gain.height / 2, 0])
        legend.move_to([0, gain.get_top()[1] + 0.2 + legend.height / 2, 0])
        bottom = legend.get_top()[1] + 0.25
        half = (full.width - 0.6) / 2
        panels = [self.panel(stage, plan, res, name)
                  for res, name in ((plan.contiguous, "contiguous"), (plan.striped, "striped"))]
        # one scale for both, so that equal blocks look equal; side by side, tops level
        k = min(min(half / p.width, (top - bottom) / p.height) for p in panels)
        for p in panels:
            p.scale(k)
        y_top = top - (top - bottom - max(p.height for p in panels)) / 2
        for i, panel in enumerate(panels):
            x = full.left + half / 2 if i == 0 else full.right - half / 2
            panel.move_to([x, y_top - panel.height / 2, 0])
        left, right = panels
        # between the two grids, level with them: what their black halves are
        # (from the left grid's edge to the right grid's axis name: the panels' lines under the grids reach further)
        lo, hi = VGroup(left.matrix, left.axes).get_right()[0], VGroup(right.matrix, right.axes).get_left()[0]
        masked = self.masked_key(stage, plan.layout == "video", hi - lo - 0.4)
        masked.move_to([(lo + hi) / 2, left.matrix.get_center()[1], 0])
        drawn.update(contiguous=left, striped=right, legend=legend, gain=gain, masked=masked)
        with stage.narrating(say(f"{T}.causal.caption_mask", count=N)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(VGroup(left.heading, left.strip, left.matrix,
                                                                      left.axes)), FadeIn(masked), run_time=1.0)
            stage.wait(0.4)
        with stage.narrating(say(f"{T}.causal.caption_contiguous", count=N, low=min(c.busy_steps),
                                 high=max(c.busy_steps), least=min(c.cells), most=max(c.cells))):
            stage.play(FadeIn(left.skipped), FadeIn(legend.skip), run_time=0.6)
            stage.play(FadeIn(left.schedule), FadeIn(legend.steps), run_time=0.8)
            stage.wait(0.6)
        with stage.narrating(say(f"{T}.causal.caption_striped", count=N)):
            stage.play(FadeIn(VGroup(right.heading, right.strip, right.matrix, right.axes)), run_time=1.0)
            stage.wait(0.4)
        even = f"{T}.causal.caption_even_all" if min(s.busy_steps) == N else f"{T}.causal.caption_even"
        with stage.narrating(say(even, count=N, low=min(s.busy_steps), high=max(s.busy_steps),
                                 least=min(s.cells), most=max(s.cells), before=max(c.cells),
                                 diff=tiny(say, plan.max_diff_striped))):
            stage.play(FadeIn(right.schedule), FadeIn(right.check), run_time=0.8)
            stage.play(FadeIn(gain, shift=UP * 0.1), run_time=0.6)
            stage.wait(0.8)

    @staticmethod
    def legend(stage: Stage) -> VGroup:
        """The key to the panels' codes: a skipped block (red), a busy step (filled), an idle one (empty)."""
        th, say = stage.theme, stage.say
        swatch = Rectangle(width=0.42, height=0.3, stroke_color=th.mask, stroke_width=3).set_fill(th.mask,
                                                                                               opacity=0.22)
        skip = VGroup(swatch, text(say(f"{T}.causal.skipped_key"), 22, th.text)).arrange(RIGHT, buff=0.15)
        busy = VGroup(Rectangle(width=0.26, height=0.26, stroke_color=th.text, stroke_width=2).set_fill(
            th.text, opacity=0.85), text(say(f"{T}.causal.busy_key"), 22, th.text)).arrange(RIGHT, buff=0.15)
        idle = VGroup(Rectangle(width=0.26, height=0.26, stroke_color=th.text, stroke_width=2),
                      text(say(f"{T}.causal.idle_key"), 22, th.text)).arrange(RIGHT, buff=0.15)
        steps = VGroup(busy, idle).arrange(RIGHT, buff=0.5)
        out = VGroup(skip, steps).arrange(RIGHT, buff=0.8)
        out.skip, out.steps = skip, steps
        return out

    @staticmethod
    def masked_key(stage: Stage, video: bool, width: float) -> VGroup:
        """A diagonal block in little, its computed half in colour and the half whose keys come after their
        queries black, over what the black means, wrapped to `width` (review 50: the black half-triangles had
        no key). Video: keys as rows, so the upper right is computed."""
        th, say = stage.theme, stage.say
        corners = [UL, UR, DR] if video else [UL, DL, DR]
        kept = Polygon(*(np.array(c) * 0.2 for c in corners), stroke_width=0).set_fill(device_color(0), opacity=0.8)
        block = VGroup(Square(0.4, stroke_color=th.dim, stroke_width=2), kept)
        words = wrapped(say(f"{T}.causal.masked_key"), width, 22, th.text, 4)
        out = VGroup(block, words).arrange(DOWN, buff=0.15)
        out.block, out.words = block, words
        return out

    def panel(self, stage: Stage, plan: RingCausalPlan, res, name: str) -> VGroup:
        """One way of cutting: its heading, the tokens coloured by device, the causal mask with queries
        and keys grouped by device and cut into N × N blocks (keys as rows and queries as columns in the
        video layout, the transpose in the paper's), and per device its busy steps and scores."""
        th, say = stage.theme, stage.say
        N, n = plan.n_devices, plan.n
        video = plan.layout == "video"
        size = 3.6
        cell = size / n
        order = RingCausalPlan.order(res)
        heading = VGroup(label(say(f"{T}.causal.{name}"), 28, th.text),
                         label(say(f"{T}.causal.rule_{name}", count=N), 26, th.dim)).arrange(DOWN, buff=0.12)

        # the tokens in their own order, each in its device's colour
        strip = VGroup()
        for i in range(N):
            toks = [int(t) for t in res.tokens[i]]
            centres = np.array([[(t + 0.5) * cell, 0, 0] for t in toks])
            strip.add(points_mobject([rect_points(centres, cell * 0.42, 0.12)], device_color(i)))
        first, last = label("0", 26, th.dim), label(str(n - 1), 26, th.dim)
        tok_word = label(say(f"{T}.causal.tokens"), 26, th.dim)
        first.next_to(strip, LEFT, buff=0.12)
        last.next_to(strip, RIGHT, buff=0.12)
        tok_word.next_to(first, LEFT, buff=0.2)
        strip_group = VGroup(strip, first, last, tok_word)

        pos = np.asarray(order)  # pos[g]: the token at place g of the grouped order
        sizes = [len(t) for t in res.tokens]
        starts = np.concatenate([[0], np.cumsum(sizes)])

        def place(q: float, k: float):
            """The point of grouped query place q and key place k (video: keys as rows)."""
            r, c = (k, q) if video else (q, k)
            return [c * cell, -r * cell, 0]

        # the mask: a cell is drawn when its key is at or before its query, in the query's device colour
        matrix = VGroup()
        for i in range(N):
            centres = np.array([place(a + 0.5, b + 0.5) for a in range(starts[i], starts[i + 1]) for b in range(n)
                                if pos[b] <= pos[a]])
            if len(centres):
                matrix.add(points_mobject([rect_points(centres, cell * 0.45, cell * 0.45)], device_color(i))
                           .set_fill(opacity=0.8))
        frame = Rectangle(width=size, height=size, stroke_color=th.dim, stroke_width=2)
        frame.move_to([size / 2, -size / 2, 0])
        lines = VGroup(*(Line([starts[k] * cell, 0, 0], [starts[k] * cell, -size, 0], stroke_color=th.text,
                              stroke_width=2) for k in range(1, N)),
                       *(Line([0, -starts[k] * cell, 0], [size, -starts[k] * cell, 0], stroke_color=th.text,
                              stroke_width=2) for k in range(1, N)))
        skipped = VGroup()
        for i in range(N):  # queries of device i
            for j in range(N):  # keys of device j
                queries, keys = pos[starts[i]:starts[i + 1]], pos[starts[j]:starts[j + 1]]
                if keys.min() > queries.max():  # every key of block j after every query of device i
                    w, h = (sizes[i] * cell, sizes[j] * cell) if video else (sizes[j] * cell, sizes[i] * cell)
                    skipped.add(Rectangle(width=w, height=h, stroke_color=th.mask, stroke_width=3)
                                .set_fill(th.mask, opacity=0.22)
                                .move_to(place(starts[i] + sizes[i] / 2, starts[j] + sizes[j] / 2)))
        mat = VGroup(frame, matrix, lines)
        # device numbers along the rows and the columns (both grouped the same way)
        row_nums = VGroup(*(label(str(i), 26, device_color(i)).move_to(
            [-0.22, -(starts[i] + sizes[i] / 2) * cell, 0]) for i in range(N)))
        col_nums = VGroup(*(label(str(j), 26, device_color(j)).move_to(
            [(starts[j] + sizes[j] / 2) * cell, 0.22, 0]) for j in range(N)))
        q_axis = (say(f"{T}.causal.queries_axis"), th.query)
        k_axis = (say(f"{T}.causal.keys_axis"), th.key)
        (top_name, top_color), (side_name, side_color) = (q_axis, k_axis) if video else (k_axis, q_axis)
        top_word = text(top_name, 26, top_color).next_to(col_nums, UP, buff=0.1)
        side_word = side_title(side_name, 26, side_color).next_to(row_nums, LEFT, buff=0.12)
        axes = VGroup(row_nums, col_nums, top_word, side_word)

        # per query device: one square per step (filled: busy) and its scores. Paper: right of its rows,
        # the squares in a row; video: under its columns, in a row when they fit its width, else a column
        narrowest = min(sizes) * cell
        across = min(0.26, 0.9 * narrowest / (N + (N - 1) * 0.25))
        stacked = video and across < 0.15
        sq = min(0.26, 1.4 / N) if not video else (min(0.24, 1.0 / N) if stacked else across)
        steps_head = label(say(f"{T}.causal.busy_head", count=N), 26, th.dim)
        pairs_head = label(say(f"{T}.causal.pairs_head"), 26, th.dim)
        sched = VGroup()
        direction = DOWN if stacked else RIGHT
        for i in range(N):
            squares = VGroup(*(Rectangle(width=sq, height=sq, stroke_color=device_color(i), stroke_width=2)
                               .set_fill(device_color(i), opacity=0.85 if res.at(t, i).busy else 0.0)
                               for t in range(N))).arrange(direction, buff=sq * 0.25)
            sched.add(VGroup(squares, label(str(res.cells[i]), 26, th.text)))
        if video:
            y_sq = -size - 0.25
            y_pairs = y_sq - (N * sq + (N - 1) * sq * 0.25 if stacked else sq) - 0.3
            for i, (squares, pairs) in enumerate(sched):
                x = (starts[i] + sizes[i] / 2) * cell
                squares.move_to([x, y_sq - squares.height / 2, 0])
                pairs.move_to([x, y_pairs, 0])
            steps_head.move_to([-0.15 - steps_head.width / 2, sched[0][0].get_center()[1], 0])
            pairs_head.move_to([-0.15 - pairs_head.width / 2, y_pairs, 0])
        else:
            x_sq = size + 0.3
            squares_w = N * sq + (N - 1) * sq * 0.25
            steps_head.move_to([x_sq + steps_head.width / 2, 0.22, 0])
            x_pairs = x_sq + max(squares_w, steps_head.width) + 0.3
            pairs_head.move_to([x_pairs + pairs_head.width / 2, 0.22, 0])
            for i, (squares, pairs) in enumerate(sched):
                y = -(starts[i] + sizes[i] / 2) * cell
                squares.move_to([x_sq + squares.width / 2, y, 0])
                pairs.move_to([x_pairs + pairs.width / 2, y, 0])
        schedule = VGroup(sched, steps_head, pairs_head)

        body = VGroup(mat, skipped, axes, schedule)
        strip_group.next_to(top_word, UP, buff=0.3)
        strip_group.shift(RIGHT * (size / 2 - strip.get_center()[0]))
        heading.next_to(strip_group, UP, buff=0.25)
        heading.set_x(body.get_center()[0])
        panel = VGroup(heading, strip_group, body)
        panel.heading, panel.strip, panel.matrix, panel.axes = heading, strip_group, mat, axes
        panel.skipped, panel.schedule = skipped, schedule
        total = label(say(f"{T}.causal.total", count=sum(res.cells), steps=sum(res.busy_steps)), 26, th.dim)
        total.next_to(body, DOWN, buff=0.3).set_x(body.get_center()[0])
        panel.schedule.add(total)
        panel.add(total)
        panel.check = VGroup()  # the striped panel says its output is the same (set by the caller below)
        if name == "striped":
            check = diff_line(say, f"{T}.causal.same", plan.max_diff_striped, 26, th.highlight)
            check.next_to(total, DOWN, buff=0.15).set_x(body.get_center()[0])
            panel.check = check
            panel.add(check)
        return panel


# --- chapter 3: memory and traffic ------------------------------------------------------------------

class RingMemory(Chapter):
    key = "ring_memory"
    shows_tokens = False

    def plan(self, setting) -> RingMemoryPlan:
        return plan_ring_memory(setting)

    def play(self, stage: Stage, plan: RingMemoryPlan) -> None:
        th, say = stage.theme, stage.say
        stage.clear()
        full = stage.region("full")
        N = plan.n_devices
        big = plan.longest
        drawn: dict = {}
        stage.drawn[self.key] = drawn
        name = model_name(say, plan.model)
        title = label(say(f"{T}.memory.title", model=name), 30, th.text)
        fit_into(title, full.width, 0.6)
        title.move_to([0, full.top - 0.35, 0])
        layers, heads, d, kv, bpn = plan.kv_factors
        assert layers * heads * d * kv * bpn == plan.kv_token  # the formula multiplies out to what it says
        sizes = label(say(f"{T}.memory.sizes", count=layers, heads=heads, d=d, kv=kv, bpn=bpn,
                          bytes=plan.kv_token), 24, th.dim)
        fit_into(sizes, full.width - 0.6, 0.4)
        sizes.next_to(title, DOWN, buff=0.25)

        # to scale: all of K and V at the longest length, one device's share of it
        width = full.width - 0.4
        bar = VGroup()
        shares = VGroup()
        x = full.left + 0.2
        block = big.block_tokens
        for i in range(N):
            toks = min(block, big.n - i * block)
            w = width * toks / big.n
            seg = Rectangle(width=w, height=0.6, stroke_color=th.background, stroke_width=2).set_fill(
                device_color(i), opacity=0.75)
            seg.move_to([x + w / 2, 0, 0])
            bar.add(seg)
            x += w
        per = say(f"{T}.memory.own_share", size=byte_text(say, big.kv_per_device).replace(" ", "\u00a0"))
        for i, seg in enumerate(bar):  # under each device's share: its name, then its own block's size
            # (on two lines where one is too wide for the share: pt's "bloco próprio" shrank all to 10 px)
            size = wrapped(per, seg.width - 0.6, 26, th.text, 2)
            for line in size:
                line.set_x(size.get_x())
            t = VGroup(label(say(f"{T}.steps.device", device=i), 22, device_color(i)), size).arrange(DOWN, buff=0.1)
            fit_into(t, seg.width - 0.6, 0.8 if len(size) == 1 else 1.2)  # clear gaps: four sizes must not read as one line
            t.next_to(seg, DOWN, buff=0.15)
            shares.add(t)
        whole = label(say(f"{T}.memory.whole", n=say.number(big.n, ",d"), size=byte_text(say, big.full_kv)), 30,
                      th.text)
        fit_into(whole, width, 0.4)
        # two lines where one would shrink it (review 50, pt: the frame's claim at 10 px capitals); the size kept whole
        sent = wrapped(say(f"{T}.memory.sent", size=byte_text(say, big.sent_per_step).replace(" ", "\u00a0")), width,
                       28, th.highlight, max_lines=2)
        picture = VGroup(whole, VGroup(bar, shares), sent).arrange(DOWN, buff=0.3)
        for m in (whole, sent):
            m.align_to(bar, LEFT)

        # the table: three lengths
        head = [label(say(f"{T}.memory.col_n"), 26, th.dim), label(say(f"{T}.memory.col_full"), 26, th.dim),
                label(say(f"{T}.memory.col_device", count=N), 26, th.dim),
                label(say(f"{T}.memory.col_sent"), 26, th.dim)]
        rows = [head]
        for r in plan.rows:
            rows.append([label(say.number(r.n, ",d"), 30, th.text), label(byte_text(say, r.full_kv), 30, th.text),
                         label(byte_text(say, r.peak_per_device), 30, th.highlight),
                         label(byte_text(say, r.sent_per_step), 30, th.text)])
        table = level(aligned_rows(rows, col_gap=0.8, row_step=0.58, align=["right"] * 4), row_step=0.58)
        y = table[0].get_bottom()[1] - 0.12
        rule = Line([table.get_left()[0], y, 0], [table.get_right()[0], y, 0], stroke_color=th.dim, stroke_width=1.5)
        # what "held" adds up (its figure is not the bar's): the own block and the two passing blocks
        held = label(say(f"{T}.memory.held_note", count=plan.n_layers), 24, th.dim)
        fit_into(held, table.width, 0.4).next_to(table, DOWN, buff=0.2)
        tab = VGroup(table, rule, held)
        # the table fitted to the frame's width on its own: a wider table (pt's, ko's headers) had shrunk the
        # picture over it with it, to 81 % (review 50)
        fit_into(tab, full.width - 0.6, 10.0)
        body = VGroup(picture, tab).arrange(DOWN, buff=0.7)
        fit_into(body, full.width - 0.6, sizes.get_bottom()[1] - 0.3 - full.bottom)
        body.move_to([0, (sizes.get_bottom()[1] - 0.3 + full.bottom) / 2, 0])
        drawn.update(bar=bar, table=table, shares=shares, own_bytes=big.kv_per_device, whole_bytes=big.full_kv, sent=sent)
        with stage.narrating(say(f"{T}.memory.caption_share", model=name, layers=plan.n_layers, heads=plan.n_kv_heads,
                                 d=plan.d_head, bytes=plan.kv_token)):
            stage.play(FadeIn(title, shift=DOWN * 0.2), FadeIn(sizes), run_time=0.8)
            stage.play(FadeIn(whole), FadeIn(bar, lag_ratio=0.2), run_time=1.0)
        with stage.narrating(say(f"{T}.memory.caption_device", count=N, n=say.number(big.n, ",d"),
                                 full=byte_text(say, big.full_kv),
                                 per=byte_text(say, big.kv_per_device), sent=byte_text(say, big.sent_per_step))):
            stage.play(FadeIn(shares), FadeIn(sent, shift=UP * 0.1), run_time=0.8)
            stage.wait(0.5)
        short = plan.rows[0]
        with stage.narrating(say(f"{T}.memory.caption_table", count=N, short=say.number(short.n, ",d"),
                                 held=byte_text(say, short.peak_per_device), full=byte_text(say, short.full_kv))):
            stage.play(FadeIn(tab, shift=UP * 0.1), run_time=0.8)
            stage.wait(1.0)
