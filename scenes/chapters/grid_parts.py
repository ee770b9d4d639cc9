"""Pieces the grid chapters share: a grid of a head placed in a region with its axis titles, the
grid the chapter before left, notes in the side panel, the Σ under every query, a softmax strip."""

from __future__ import annotations

import numpy as np
from manim import DOWN, LEFT, PI, RIGHT, UL, UP, Circle, Dot, FadeIn, FadeOut, Rectangle, Restore, VGroup

from ..components.attention_grid import AttentionGrid, drawn_weights
from ..components.dot_legend import DotLegend, mask_note
from ..components.softmax_column import SoftmaxColumn
from ..components.text import baseline_row, label, mark_glyph, number, text_baseline
from ..plans.rounding import drawn_misses
from ..review import declare_sum, exempt
from ..stage import Region, Stage
from ..style import fmt_weight, has_hangul
from .honest import wrapped

NOTE_FS = 26  # notes in the side panel
SUM_MIN_FS = 18  # a Σ row's digits stay at 14 px or more at 720p (cap height ≈ 16 px)
CLOSE_UP = ("a close-up inside the grid: its lines and cells go on past the frame's edge on purpose; "
            "the labels the close-up would cut are faded while the camera is close")


def side_title(name: str, font_size: float, color: str) -> VGroup:
    """An axis name standing beside a column of labels, turned a quarter (read bottom to top), Hangul too, as
    Korean charts turn an axis's title (review 48: "쿼 / 리" stacked a syllable under another read as two
    marks; set in a row, "쿼리" beside the row labels read as one label with the first of them)."""
    side = label(name, font_size, color)
    if len(name.strip()) > 1 or not has_hangul(name):  # (one syllable, "키", stands upright: turned it lay down)
        side.rotate(PI / 2)
    side.original_text = name
    return side


def axis_titles(grid: AttentionGrid, stage: Stage, scale: float = 1.0, by_labels: bool = True) -> VGroup:
    """"queries" over the labels across the top, "keys" beside the labels down the side (or the
    other way round in the paper layout). `scale`: for a grid drawn under a camera pulled back that
    many times (the titles read at their usual size); `by_labels` False: beside the lines (a grid
    whose word labels are hidden)."""
    th, say = stage.theme, stage.say
    queries, keys = (say("grid.axes.queries"), th.query), (say("grid.axes.keys"), th.key)
    (top_name, top_color), (side_name, side_color) = (queries, keys) if grid.layout == "video" else (keys, queries)
    lines = grid.lines
    top = label(top_name, 24 * scale, top_color)
    cols, rows = (grid.col_labels, grid.row_labels) if by_labels else (VGroup(), VGroup())
    top_y = (cols.get_top()[1] if cols.has_points() else lines.get_top()[1]) + 0.14 * scale
    top.move_to([lines.get_x(), top_y + top.height / 2, 0])
    side = side_title(side_name, 24 * scale, side_color)
    side_x = (rows.get_left()[0] if rows.has_points() else lines.get_left()[0]) - 0.16 * scale
    side.move_to([side_x - side.width / 2, lines.get_y(), 0])
    return VGroup(top, side)


def grid_key(head_trace, tokens, layout: str) -> tuple:
    return (tuple(tokens), head_trace.layer, head_trace.head, layout)


TAG_FS, TAG_MIN_FS = 22, 16  # the head's name in the grid's corner: at least 14 px (cap height) at 720p


def head_tag(stage: Stage, grid: AttentionGrid, head_trace, titles: VGroup | None = None, avoid=()) -> VGroup:
    """Which head the grid shows ("layer 0 · head 0: adjectives → nouns"), dim, in the empty corner over
    the row labels and left of the column labels; an empty group where it cannot be read there. A line
    standing above every column label may reach further right, to the grid's middle and short of the axis
    title (`titles`, axis_titles') beside it (review 52: pt's "camada 0" / "head 0" / "adjetivos →" /
    "substantivos" in a corner 1.6 units wide). `avoid`: more that stands over the grid (a formula)."""
    full = stage.region("full")
    right = min(grid.lines.get_left()[0], grid.col_labels.get_left()[0] if grid.col_labels.has_points() else 9) - 0.15
    bottom = max(grid.lines.get_top()[1], grid.row_labels.get_top()[1] if grid.row_labels.has_points() else -9) + 0.1
    labels_top = (grid.col_labels.get_top()[1] if grid.col_labels.has_points() else grid.lines.get_top()[1]) + 0.1
    over = [t for t in [*(titles or []), *avoid] if t.get_bottom()[1] > grid.lines.get_top()[1]]  # titles over the grid

    def reach(low: float, high: float) -> float:  # how far right a line from `low` to `high` may reach
        if low < labels_top:
            return right
        limit = grid.lines.get_x()
        for t in over:
            if t.get_bottom()[1] - 0.1 < high and low < t.get_top()[1] + 0.1:
                limit = min(limit, t.get_left()[0] - 0.3)
        return limit

    width, height = right - full.left, full.top - bottom
    say, role = stage.say, getattr(head_trace, "role", "")
    head = say("common.head.layer_head", layer=head_trace.layer, head=head_trace.head)
    role = say.role(role, head_trace.layer, head_trace.head) if role and say.has(f"common.roles.{role}") else ""
    # the fewest lines at any of the sizes, then the largest size: "형용사 → 명사" on one line at 18 px before
    # "형용사 →" / "명사" at 22 (review 48); each size tried in the corner's width, then as wide as the lines
    # over the column labels may reach
    best = None
    for fs in (TAG_FS, 20, 18, TAG_MIN_FS):
        for wide in (max(width, reach(full.top - 0.3, full.top) - full.left), width):  # (the top line's reach)
            # the head on its line, its role under it (wrapped): never "layer 0 · head" / "0: adjectives"
            lines = [label(head, fs, stage.theme.dim)]
            if lines[0].width > wide:  # "camada 13" over "head 2": the layer and the head, each on its line
                lines = [label(part, fs, stage.theme.dim) for part in head.split(" · ")]
            if role:  # wider than asked or scaled down where it cannot fit: refused below
                lines += list(wrapped(role, wide, fs, stage.theme.dim, max_lines=2))
            tag = VGroup(*lines).arrange(DOWN, buff=0.1, aligned_edge=LEFT)
            tag.move_to([full.left + tag.width / 2, full.top - tag.height / 2, 0])
            fits = tag.height <= height and min(t.font_size for t in lines) >= fs - 0.01
            if fits and all(t.get_right()[0] <= reach(t.get_bottom()[1], t.get_top()[1]) + 1e-6 for t in lines):
                if best is None or len(lines) < len(best):
                    best = tag
    return best if best is not None else VGroup()


def shown_token(say, token: str) -> str:
    """A token as a label: a small mark (",", ".") named, "(comma)" (review 44: quoted, a grid's rotated
    label drew a speck between two specks); any other without a letter or digit ("?") quoted."""
    if any(c.isalnum() for c in token) or token in ("⋯", "…"):  # (an excerpt's gap is drawn as it is)
        return token
    return say.mark_label(token) or say.quote(token.strip() or token)


def new_grid(stage: Stage, head_trace, tokens, layout: str, region: Region | str = "grid", tag: bool = False,
             tag_avoid=(), **kwargs) -> tuple[AttentionGrid, VGroup]:
    """A grid of this head filling `region` (labels and axis titles included), not yet on screen. `tag`:
    the titles also name the head, in the corner over the labels (a lesson whose frames name it nowhere
    else; `tag_avoid`: what else stands over the grid, the tag clear of it). A small mark's token is labelled by
    its name (`shown_token`)."""
    box = stage.region(region) if isinstance(region, str) else region
    room_w, room_h = box.width - 0.45, box.height - 0.4
    labels = None if tokens is None else [shown_token(stage.say, str(t)) for t in tokens]
    for _ in range(3):  # the titles need more room than guessed (upright Hangul): a smaller grid
        grid = AttentionGrid(head_trace, labels, layout=layout, theme=stage.theme,
                             max_width=room_w, max_height=room_h, **kwargs)
        titles = axis_titles(grid, stage)
        both = VGroup(grid, titles)
        over_w, over_h = both.width - box.width, both.height - box.height
        if over_w <= 1e-3 and over_h <= 1e-3:
            break
        room_w -= max(over_w, 0.0) + 0.02
        room_h -= max(over_h, 0.0) + 0.02
    grid.grid_key = grid_key(head_trace, tokens, layout)
    grid.move_to(box.center)
    grid.use_common_number_font()  # scores and weights at one size (columns can change alone)
    titles = axis_titles(grid, stage)
    shift = box.center - VGroup(grid, titles).get_center()
    grid.shift(shift)
    titles.shift(shift)
    if tag:
        titles.head_tag = grid.head_tag = head_tag(stage, grid, head_trace, titles, tag_avoid)
        titles.add(titles.head_tag)
    return grid, titles


def grid_on_stage(stage: Stage, head_trace, tokens, layout: str):
    """The grid the chapter before left, if it shows this sentence, head and layout; else None."""
    if not stage.has("grid"):
        return None
    if getattr(stage.grid, "grid_key", None) != grid_key(head_trace, tokens, layout):
        return None
    return stage.grid


def titles_of(stage: Stage) -> VGroup:
    return stage.grid_titles if stage.grid_titles is not None else VGroup()


def show_scores(grid: AttentionGrid, run_time: float = 1.0):
    """The real scores in the cells, or (too many to read) dots sized by score."""
    return grid.show_scores(run_time) if grid.numbers_readable() else grid.show_score_dots(run_time)


def ensure_grid(stage: Stage, head_trace, tokens, layout: str, content: str, mask: str = "cleared"):
    """A grid of this head on stage showing `content` with its mask `mask`: the one the chapter
    before left (everything else fades), else a new one in the grid region. Returns (grid, fresh)."""
    grid = grid_on_stage(stage, head_trace, tokens, layout)
    if grid is None:
        stage.clear()
        grid, titles = new_grid(stage, head_trace, tokens, layout, tag=True)
        grid.set_mask(mask)
        if content == "scores" and not grid.numbers_readable():
            content = "score_dots"
        if content != "none":
            grid.set_content(content)
        stage.hand_on(grid=grid, grid_titles=titles)
        stage.play(FadeIn(grid), FadeIn(titles), run_time=1.0)
        return grid, True
    titles = titles_of(stage)
    extras = [m for m in stage.mobjects if m is not grid and m is not titles]
    anims = [FadeOut(m) for m in extras]
    if grid.highlight_box.has_points() or grid.veil.has_points():
        anims.append(grid.unhighlight())
    if grid.mask_state != mask and mask == "cleared" and grid.mask_state != "hidden":
        anims.append(grid.clear_mask())
    elif grid.mask_state != mask:
        grid.set_mask(mask)
    unreadable_scores = content == "scores" and grid.content_kind == "score_dots" and not grid.numbers_readable()
    if grid.content_kind != content and not unreadable_scores:
        anims.append(show_scores(grid) if content == "scores" else grid.transition(content))
    if anims:
        stage.play(*anims, run_time=1.0)
    stage.remove(*extras)
    return grid, False


# --- the side panel ----------------------------------------------------------------------------

def panel_note(stage: Stage, rows, top: float | None = None, font_size: float = NOTE_FS) -> VGroup:
    """Lines of text in the side panel, left-aligned: each row a string or a list of mobjects and
    strings set on one baseline; at `top` (default: centred on the grid region)."""
    th = stage.theme
    panel = stage.region("panel")
    lines = VGroup()
    for row in rows:
        parts = [label(p, font_size, th.text) if isinstance(p, str) else p
                 for p in (row if isinstance(row, list) else [row])]
        lines.add(baseline_row(parts) if len(parts) > 1 else parts[0])
    lines.arrange(DOWN, buff=0.22 * font_size / NOTE_FS, aligned_edge=LEFT)
    if lines.width > panel.width:
        lines.scale_to_fit_width(panel.width)
    lines.move_to([panel.left + lines.width / 2, 0, 0])
    lines.set_y(top - lines.height / 2 if top is not None else stage.region("grid").center[1])
    return lines


def panel_row(stage: Stage, row, top: float, font_size: float = 24) -> VGroup:
    """One row of the panel (mobjects on a baseline), its top at `top`."""
    return panel_note(stage, [row], top=top, font_size=font_size)


def softmax_strip(stage: Stage, grid: AttentionGrid, query: int, top: float | None = None,
                  **kwargs) -> SoftmaxColumn:
    """The softmax column of one query in the side panel, at the largest font (≤ 26) that keeps it
    between `top` (default: the panel's top) and the panel's bottom."""
    panel = stage.region("panel")
    top = panel.top - 0.25 if top is None else top
    bottom = panel.bottom
    target = np.array([panel.center[0], (top + bottom) / 2, 0])
    visible = int((~grid.mask[query]).sum())
    kwargs.setdefault("sum_note", stage.say("grid.sums.over_visible", count=visible))
    kwargs.setdefault("op_text", stage.say("grid.softmax.op"))  # the operator's name in the lesson's language
    sm = SoftmaxColumn(grid, query, target=target, font_size=26, **kwargs)
    room = top - bottom
    if sm.box.height > room:
        sm = SoftmaxColumn(grid, query, target=target, font_size=26 * room / sm.box.height * 0.98, **kwargs)
    return sm


def rows_missing_their_sum(pattern, mask) -> list[int]:
    """The queries whose weights, as a grid draws them (two decimals), do not add up to their drawn Σ."""
    n = len(pattern)
    return [q for q in range(n)
            if drawn_misses([fmt_weight(pattern[q, k]) for k in range(n) if not mask[q, k]], fmt_weight(float(pattern[q].sum())))]


def query_sums(stage: Stage, grid: AttentionGrid) -> VGroup:
    """Σ of every query's weights (the real sums), under each column (video) or beside each row
    (paper), with a Σ in front; one line for all when the grid is too dense. `.numbers` holds
    the number mobjects. When some query's weights, as the grid draws them (two decimals), do not add
    up to its drawn Σ, the Σ reads "Σ ≈" (`.missed` lists those queries); the lint checks every
    query's sum while the grid shows its weights."""
    th, say = stage.theme, stage.say
    totals = grid.pattern.sum(axis=1)
    if not grid.numbers_readable():  # too many columns to label one by one: one line for all
        m = number(float(totals.min()), "weight", 24, th.text)
        line = baseline_row([label(say(f"grid.sums.every_{grid.layout}"), 24, th.dim), m])
        line.next_to(grid.lines, DOWN, buff=0.12)
        line.numbers = [m]
        line.missed = []
        declare_sum(line, lambda: None, m, name="every query")  # the cells are too small for their numbers
        grid.sum_marks.append(line)
        return line
    fs = min(grid.number_font or 22, 24)
    shown = next(iter(grid.number_mobs.values()), None)
    if shown is not None:  # the grid may have been scaled since its font was chosen: match its digits as drawn
        fs *= shown.height / label(shown.shown, fs).height
    fs = max(fs, SUM_MIN_FS)
    sums, missed = VGroup(), rows_missing_their_sum(grid.pattern, grid.mask)
    out = VGroup()
    for q in range(grid.n):
        m = number(float(totals[q]), "weight", fs, th.text)
        ll, ur = grid.column_region(q)
        if grid.layout == "video":
            m.move_to([(ll[0] + ur[0]) / 2, ll[1] - 0.12 - m.height / 2, 0])
        else:
            m.move_to([ur[0] + 0.12 + m.width / 2, (ll[1] + ur[1]) / 2, 0])
        sums.add(m)
    sigma = VGroup(label("Σ", fs * 1.1, th.dim))
    marks: dict[int, object] = {}
    if missed and grid.layout == "video":
        # one "≈" after the Σ when some query's weights, as drawn, miss its drawn sum (a cell is too
        # narrow for "≈1.00" beside its neighbours); centred on the Σ, a space apart: on its baseline the ≈
        # sat low, read as a subscript (review 39)
        mark = label(say("common.rounding.mark"), fs, th.dim)
        sigma = VGroup(sigma[0], mark.next_to(sigma[0], RIGHT, buff=0.14))
        marks = {q: mark for q in missed}
    elif missed:
        # sums in a column (paper): each missing row's own "≈" before its figure, the figures right-aligned
        # (review 44: the header's "Σ ≈" alone did not say which rows' weights miss)
        # (and a little further: 0.12 from the grid, a row's "≈" read as touching its line, review 51)
        room = label(say("common.rounding.mark"), fs, th.dim).width + 0.08 + 0.1
        sums.shift(RIGHT * room)
        for q in missed:
            mark = mark_glyph(say("common.rounding.mark"), fs, th.dim)
            mark.next_to(sums[q], LEFT, buff=0.08).set_baseline(text_baseline(sums[q]))
            marks[q] = mark
            out.add(mark)
    if grid.layout == "video":
        sigma.next_to(sums[0], LEFT, buff=0.25)
    else:  # over the column, above the grid's top line: a box around the first row (and its Σ) ran through it
        sigma.next_to(sums[0], UP, buff=0.2)
        sigma.shift(UP * max(0.0, grid.lines.get_top()[1] + 0.12 - sigma.get_bottom()[1]))
    out.add(sigma, sums)
    for q in range(grid.n):
        keys = [k for k in range(grid.n) if not grid.mask[q, k]]
        declare_sum(out, drawn_weights(grid, q, keys), sums[q], [marks[q]] if q in marks else [], name=f"query {q}")
    out.numbers = list(sums)
    out.missed = missed
    out.row_marks = marks  # query -> the "≈" that says its drawn weights miss its Σ
    grid.sum_marks.append(out)  # a visible Σ row says what the columns add up to, "≈" and all
    return out


def score_legend(stage: Stage, grid: AttentionGrid) -> VGroup:
    """What the score dots mean: filled for a positive score, a ring for a negative one."""
    th, say = stage.theme, stage.say
    r = grid.dot_fraction * min(grid.cell_width, grid.cell_height) * 0.8
    r = float(np.clip(r, 0.08, 0.2))
    dot = Dot(radius=r, color=th.text, fill_opacity=0.9)
    ring = Circle(radius=r, color=th.negative, stroke_width=2.5)
    rows = [[dot, label(say("grid.dot_products.legend_positive"), 24, th.text)],
            [ring, label(say("grid.dot_products.legend_negative"), 24, th.text)],
            [label(say("grid.dot_products.legend_area"), 22, th.dim)]]
    return panel_note(stage, rows, font_size=24)


# --- legends ---------------------------------------------------------------------------------------

def _box(mob, buff: float = 0.0):
    (x0, y0, _), (x1, y1, _) = mob.get_corner([-1, -1, 0]), mob.get_corner([1, 1, 0])
    return x0 - buff, y0 - buff, x1 + buff, y1 + buff


def free_spot(stage: Stage, mob, corners, obstacles=(), region: Region | str = "full", buff: float = 0.12) -> bool:
    """Move `mob` to the first of `corners` (points where its own corner `anchor` goes, as
    (point, anchor direction) pairs) where it stays inside `region` and clear of every obstacle's
    box (by `buff`). Returns whether a free spot was found (else it stays at the last one)."""
    box = stage.region(region) if isinstance(region, str) else region
    boxes = [_box(o, buff) for o in obstacles if o is not None and (o.has_points() or o.submobjects)]
    for point, anchor in corners:
        mob.shift(np.asarray(point, dtype=float) - mob.get_corner(anchor))
        x0, y0, x1, y1 = _box(mob)
        if not box.contains(mob):
            continue
        if all(x1 <= a0 or x0 >= a1 or y1 <= b0 or y0 >= b1 for a0, b0, a1, b1 in boxes):
            return True
    return False


def dot_legend(stage: Stage, grid: AttentionGrid, obstacles=(), corners=None, region: Region | str = "full",
               caption_side: str = "up") -> DotLegend:
    """What a dot's size means, drawn by `grid`'s own size function (build it once the grid has its
    final size), placed beside the grid (right, then left, then under it) or in a corner of
    `region`, wherever nothing in `obstacles` is."""
    caption = stage.say("grid.axes.dot_legend")
    legend = DotLegend(grid, caption, theme=stage.theme, caption_side=caption_side)
    box = stage.region(region) if isinstance(region, str) else region
    lines = grid.lines
    gap = 0.3
    if corners is None:
        # right of the grid first in every language: a caption too wide there ("área do ponto = peso")
        # breaks before its "=" rather than send the legend to the other side
        beside = [(lines.get_corner(DOWN + RIGHT) + RIGHT * gap, DOWN + LEFT)]
        if " = " in caption and caption_side == "up" and not free_spot(stage, legend, beside, [grid, *obstacles], box):
            two = DotLegend(grid, caption.replace(" = ", "\n= ", 1), theme=stage.theme, caption_side=caption_side)
            if free_spot(stage, two, beside, [grid, *obstacles], box):
                return two
        corners = [(lines.get_corner(DOWN + RIGHT) + RIGHT * gap, DOWN + LEFT),
                   (grid.get_corner(DOWN + LEFT) + LEFT * gap, DOWN + RIGHT),
                   (lines.get_corner(UP + RIGHT) + RIGHT * gap, UP + LEFT),
                   ([box.right, box.bottom, 0], DOWN + RIGHT), ([box.left, box.bottom, 0], DOWN + LEFT),
                   ([box.right, box.top, 0], UP + RIGHT), ([box.left, box.top, 0], UP + LEFT)]
    free_spot(stage, legend, corners, [grid, *obstacles], box)
    return legend


def corner_legend(stage: Stage, grid: AttentionGrid, obstacles=(), region: Region | str = "full",
                  smallest: float = 0.0) -> DotLegend | None:
    """The dot legend in a free corner of `region` (for a frame with no room beside the grid): the
    caption over the dots in a lower corner, else the caption beside them in any corner, else over them in
    an upper corner; None when no corner is free. `smallest`: its smallest weight at least this."""
    box = stage.region(region) if isinstance(region, str) else region
    low = [([box.left, box.bottom, 0], DOWN + LEFT), ([box.right, box.bottom, 0], DOWN + RIGHT)]
    high = [([box.left, box.top, 0], UP + LEFT), ([box.right, box.top, 0], UP + RIGHT)]
    for side, corners in (("up", low), ("left", low + high), ("up", high)):
        legend = DotLegend(grid, stage.say("grid.axes.dot_legend"), theme=stage.theme, caption_side=side,
                           smallest=smallest)
        if free_spot(stage, legend, corners, obstacles, box):
            return legend
    return None


def masked_note(stage: Stage, grid: AttentionGrid, focus: int | None = None):
    """"masked: no word looks ahead" in the grid's empty causal triangle, clear of the `focus`
    query's outlined cells where it can be (None where the grid has no causal mask or the words do
    not fit there)."""
    return mask_note(grid, stage.say("grid.axes.masked_half"), stage.theme, avoid=focus)


# --- close-ups inside the grid --------------------------------------------------------------------

def close_up(grid: AttentionGrid, center, scale: float, frame, others=()) -> list:
    """What to play with the camera's move into a close-up of `grid` (the frame scaled by `scale`
    and centred on `center`): each axis of labels that the close-up would cut (a label partly in
    the frame) fades out, so that no word is cut at the frame's edge. The grid's lines and cells do
    go on past the edge (a declared exception while the camera is close). Undo with `close_up_done`."""
    w, h = frame.width * scale, frame.height * scale
    m = 0.12 * h / 8.0
    fx0, fx1, fy0, fy1 = center[0] - w / 2, center[0] + w / 2, center[1] - h / 2, center[1] + h / 2
    veils = edge_veils(grid, (fx0, fy0, fx1, fy1), grid.get_z_index() + 1)

    def veiled(x0, y0, x1, y1) -> bool:  # what the frame shows of a label lies under one of the edge's plates
        seen = (max(x0, fx0), max(y0, fy0), min(x1, fx1), min(y1, fy1))
        return any(v.get_left()[0] <= seen[0] + 1e-6 and seen[2] <= v.get_right()[0] + 1e-6 and
                   v.get_bottom()[1] <= seen[1] + 1e-6 and seen[3] <= v.get_top()[1] + 1e-6 for v in veils)

    faded = []
    for which, sheet in (("rows", grid.row_labels), ("cols", grid.col_labels)):
        if not sheet.has_points():
            continue
        # along its own axis a label stands inside its row (column), and a snapped close-up's edge lies on a line:
        # a label wholly in the frame there is whole, however near the edge (review 52: SmolLM2's "A", 10 px
        # under the frame's top, faded every row label and left a black band at the left)
        mx, my = (m, 0.0) if which == "rows" else (0.0, m)
        for x0, y0, x1, y1 in grid.label_boxes(which):
            seen = x1 > fx0 and x0 < fx1 and y1 > fy0 and y0 < fy1
            whole = x0 >= fx0 + mx and x1 <= fx1 - mx and y0 >= fy0 + my and y1 <= fy1 - my
            # (a label in a row the frame cuts is hidden with the row: the others stay, naming the rows shown)
            if seen and not whole and not veiled(x0, y0, x1, y1):
                faded.append(sheet)
                break
    if grid.ticks.has_points() and grid.row_labels in faded:
        faded.append(grid.ticks)
    tag = getattr(grid, "head_tag", None)  # the head's name in the corner (new_grid's tag)
    if tag is not None and len(tag):
        x0, y0, x1, y1 = tag.get_left()[0], tag.get_bottom()[1], tag.get_right()[0], tag.get_top()[1]
        if not (x0 >= fx0 + m and x1 <= fx1 - m and y0 >= fy0 + m and y1 <= fy1 - m):
            faded.append(tag)
    for mob in others:  # the axis names ("keys"): faded where the frame's edge would cut them
        x0, y0, x1, y1 = mob.get_left()[0], mob.get_bottom()[1], mob.get_right()[0], mob.get_top()[1]
        seen = x1 > fx0 and x0 < fx1 and y1 > fy0 and y0 < fy1
        if seen and not (x0 >= fx0 + m and x1 <= fx1 - m and y0 >= fy0 + m and y1 <= fy1 - m):
            faded.append(mob)
    for sheet in faded:
        sheet.save_state()
    grid.close_up_faded = faded
    grid.close_up_veils = veils
    exempt(grid, "off_frame", CLOSE_UP)
    return [sheet.animate.set_opacity(0.0) for sheet in faded] + [FadeIn(v) for v in grid.close_up_veils]


ALMOST_WHOLE = 0.92  # a cell cut by a close-up's edge but showing this much of itself is left as it is


def edge_veils(grid: AttentionGrid, frame_box, z: float) -> list:
    """Plates of the background over the cells a close-up's frame cuts through at its edges, so that a
    sliver of a column shows no piece of its figures (review 49: a "Q₁" fragment and its fraction bar at the
    frame's left edge). A plate covers from the edge in to the first whole cell's line."""
    fx0, fy0, fx1, fy1 = frame_box
    ul, cw, ch, n = grid.lines.get_corner(UL), grid.cell_width, grid.cell_height, grid.n
    xs, ys = ul[0] + np.arange(n + 1) * cw, ul[1] - np.arange(n + 1) * ch
    tol = 0.02 * min(cw, ch)
    plates = []

    def plate(x0, x1, y0, y1):
        # the strip's depth into the grid: a strip that shows nearly all of its cell shows its figure whole
        depth, cell = (x1 - x0, cw) if y1 - y0 > x1 - x0 else (y1 - y0, ch)
        if tol < depth < ALMOST_WHOLE * cell:
            r = Rectangle(width=x1 - x0, height=y1 - y0, stroke_width=0).set_fill(grid.theme.background, opacity=1.0)
            plates.append(r.move_to([(x0 + x1) / 2, (y0 + y1) / 2, 0]).set_z_index(z))

    inside_x = xs[(xs > fx0 + tol) & (xs < fx1 - tol)]
    inside_y = ys[(ys > fy0 + tol) & (ys < fy1 - tol)]
    if len(inside_x):
        if xs[0] < fx0 - tol:  # the left edge cuts a column
            plate(fx0 - 0.05, inside_x.min() - 0.02, fy0 - 0.05, fy1 + 0.05)
        if xs[-1] > fx1 + tol:
            plate(inside_x.max() + 0.02, fx1 + 0.05, fy0 - 0.05, fy1 + 0.05)
    if len(inside_y):
        if ys[0] > fy1 + tol:  # the top edge cuts a row
            plate(fx0 - 0.05, fx1 + 0.05, inside_y.max() + 0.02, fy1 + 0.05)
        if ys[-1] < fy0 - tol:
            plate(fx0 - 0.05, fx1 + 0.05, fy0 - 0.05, inside_y.min() - 0.02)
    return plates


def close_up_done(grid: AttentionGrid) -> list:
    """What to play with the camera's move back from a close-up: the faded labels come back."""
    faded = getattr(grid, "close_up_faded", [])
    veils = getattr(grid, "close_up_veils", [])
    grid.close_up_faded, grid.close_up_veils = [], []
    rules = dict(getattr(grid, "lint_exempt", None) or {})
    rules.pop("off_frame", None)
    grid.lint_exempt = rules
    return [Restore(sheet) for sheet in faded] + [FadeOut(v) for v in veils]


def snapped_close_up(grid: AttentionGrid, center, scale: float, frame, keep=None,
                     at_least: bool = False) -> tuple[np.ndarray, float]:
    """A close-up's centre and scale, moved a little so that the frame's edges fall on the grid's lines where
    the grid runs past them: a whole number of rows tall, its top on a row's line, and on the side where the
    grid's figures are (the upper triangle's right in the video layout, the lower's left in the paper one) a
    column's line. No row or column of figures is cut in half at the frame's edge (review 48: "K₁·Q" cut
    through at the frame's top). `keep` (a mobject) stays inside the frame, else the close-up is left as it was.
    `at_least`: never closer than `scale` (whole rows added, not taken away: a close-up sized to hold a width
    keeps it)."""
    center = np.asarray(center, dtype=float)
    ul, cw, ch = grid.lines.get_corner(UL), grid.cell_width, grid.cell_height
    n, H, W = grid.n, frame.height, frame.width
    rows = max(1, int(np.ceil(scale * H / ch - 1e-6)) if at_least else round(scale * H / ch))
    z = rows * ch / H if abs(rows * ch / H - scale) <= 0.25 * scale else scale
    h, w = z * H, z * W
    ys, xs = ul[1] - np.arange(n + 1) * ch, ul[0] + np.arange(n + 1) * cw

    def snap(value, lines):  # the two lines nearest an edge that cuts the grid; the edge itself, off it
        if not (lines.min() < value < lines.max()):
            return [value]
        return sorted(lines, key=lambda v: abs(v - value))[:2]

    tops = snap(center[1] + h / 2, ys)
    right_side = grid.layout == "video"
    sides = snap(center[0] + (w / 2 if right_side else -w / 2), xs)
    box = None if keep is None else (keep.get_left()[0], keep.get_bottom()[1], keep.get_right()[0], keep.get_top()[1])
    for top in tops:
        for x in sides:
            c = np.array([x - w / 2 if right_side else x + w / 2, top - h / 2, 0.0])
            if box is None or (box[0] >= c[0] - w / 2 + 0.05 and box[2] <= c[0] + w / 2 - 0.05
                               and box[1] >= c[1] - h / 2 + 0.05 and box[3] <= c[1] + h / 2 - 0.05):
                return c, z
    return center, scale
