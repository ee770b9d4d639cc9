"""The dot legend draws each weight's dot exactly as the grid draws that weight (same width,
measured from the mobjects), writes the weight under it, and the mask note sits on masked cells
only, at a readable size."""

from __future__ import annotations

import numpy as np
import pytest

from attention_manim.scenes.components.attention_grid import AttentionGrid
from attention_manim.scenes.components.dot_legend import DotLegend, mask_note
from attention_manim.scenes.components.text import parse_shown
from attention_manim.scenes.style import DARK

WEIGHTS = (0.1, 0.5, 1.0)


def causal_pattern(n: int) -> dict:
    """A causal pattern whose cells hold 1.0, 0.5 and 0.1 exactly (query 0 → 1.0; query 1 → 0.5,
    0.5; query 2 → 0.1, 0.4, 0.5; the rest uniform)."""
    mask = np.triu(np.ones((n, n), bool), 1)
    p = np.zeros((n, n))
    p[0, 0] = 1.0
    p[1, :2] = 0.5
    p[2, :3] = (0.1, 0.4, 0.5)
    for q in range(3, n):
        p[q, : q + 1] = 1.0 / (q + 1)
    return {"pattern": p, "mask": mask}


def grid_dot_size(grid: AttentionGrid, query: int, key: int) -> tuple[float, float]:
    """(width, height) of the dot the grid draws in cell (query, key), from its one dots mobject."""
    pts = grid.dots_mobject.points
    per = len(pts) // len(grid.dot_cells)
    i = grid.dot_cells.index((query, key))
    dot = pts[i * per:(i + 1) * per]
    return float(np.ptp(dot[:, 0])), float(np.ptp(dot[:, 1]))


@pytest.mark.parametrize("layout,relative", [("video", False), ("paper", False), ("video", True)])
@pytest.mark.parametrize("n", [5, 12])
def test_legend_dots_are_the_grids_dots(n, layout, relative):
    grid = AttentionGrid(causal_pattern(n), [f"w{i}" for i in range(n)], layout=layout, theme=DARK,
                         max_width=6, max_height=4, relative_dots=relative)
    grid.scale(0.8).shift([1.0, -0.5, 0])  # the legend measures the grid where it is now
    grid.set_content("dots")
    legend = DotLegend(grid, "dot area = weight", theme=DARK)
    cells = {1.0: (0, 0), 0.5: (1, 0), 0.1: (2, 0)}
    for w, dot, num in zip(legend.weights, legend.dot_mobs, legend.number_mobs):
        width, height = grid_dot_size(grid, *cells[w])
        assert dot.width == pytest.approx(width, rel=1e-6)
        assert dot.height == pytest.approx(height, rel=1e-6)
        assert len(dot.points) == len(grid.dots_mobject.points) // len(grid.dot_cells)  # same arcs
        assert parse_shown(num.shown) == pytest.approx(w)
        assert num.get_top()[1] < dot.get_bottom()[1]  # the weight under its dot
    widths = [d.width for d in legend.dot_mobs]
    assert widths == sorted(widths) and widths[0] > 0
    # area ∝ weight: width² ratios are the weight ratios
    assert (widths[2] / widths[0]) ** 2 == pytest.approx(10.0, rel=1e-6)
    assert legend.caption.get_bottom()[1] > max(d.get_top()[1] for d in legend.dot_mobs)


@pytest.mark.parametrize("layout", ["video", "paper"])
def test_mask_note_lies_on_masked_cells(layout):
    n = 8
    grid = AttentionGrid(causal_pattern(n), [f"w{i}" for i in range(n)], layout=layout, theme=DARK,
                         max_width=6, max_height=5)
    grid.set_mask("cleared")
    note = mask_note(grid, "masked: no word looks ahead", DARK)
    assert note is not None and note.font_size >= 14
    plate = note[0]
    ul, cw, ch = grid._geom()
    for x in (plate.get_left()[0] + 1e-6, plate.get_right()[0] - 1e-6):
        for y in (plate.get_bottom()[1] + 1e-6, plate.get_top()[1] - 1e-6):
            c, r = int((x - ul[0]) // cw), int((ul[1] - y) // ch)
            assert 0 <= r < n and 0 <= c < n
            q, k = (c, r) if layout == "video" else (r, c)
            assert grid.mask[q, k], f"corner ({x:.2f}, {y:.2f}) on an unmasked cell"
    # its edges lie on the grid's lines, not inside cells (a line ending mid-cell is a stub): the two
    # inner edges stop just short of a line, the two outer ones reach the border, drawn again over it
    line_xs, line_ys = ul[0] + cw * np.arange(n + 1), ul[1] - ch * np.arange(n + 1)
    for edge, lines in ((plate.get_left()[0], line_xs), (plate.get_right()[0], line_xs),
                        (plate.get_bottom()[1], line_ys), (plate.get_top()[1], line_ys)):
        assert np.abs(lines - edge).min() < 0.05, f"a plate edge at {edge:.3f} inside a cell"
    border = note[1]
    # the border drawn again runs along the grid's own border: its lower-left corner in the video
    # layout, its upper-right in the paper one
    xs, ys = border.points[:, 0], border.points[:, 1]
    if layout == "video":
        assert (xs.min(), ys.min()) == pytest.approx((ul[0], ul[1] - n * ch), abs=1e-6)
    else:
        assert (xs.max(), ys.max()) == pytest.approx((ul[0] + n * cw, ul[1]), abs=1e-6)
    assert border.get_stroke_width() == pytest.approx(grid.lines.get_stroke_width())


def test_mask_note_needs_a_causal_mask():
    n = 6
    data = causal_pattern(n)
    data["mask"] = np.zeros((n, n), bool)
    grid = AttentionGrid(data, [f"w{i}" for i in range(n)], theme=DARK)
    assert mask_note(grid, "masked", DARK) is None


def test_colour_scale_ends_and_colours():
    from attention_manim.scenes.components.color_scale import ColorScale
    from attention_manim.scenes.components.matrices import signed_color

    low, high, scale = -0.43, 0.41, 0.43
    bar = ColorScale(low, high, scale=scale, caption="colour = value", theme=DARK, kind="signed2")
    assert [m.value for m in bar.end_mobs] == [low, high]
    assert [parse_shown(m.shown) for m in bar.end_mobs] == [pytest.approx(low), pytest.approx(high)]
    # each slice is coloured as an entry of its value is, left (low) to right (high)
    first, last = bar.bar[0], bar.bar[-1]
    assert first.get_fill_color().to_hex().lower() == signed_color(low, scale, DARK).lower()
    assert last.get_fill_color().to_hex().lower() == signed_color(high, scale, DARK).lower()
    assert first.get_x() < last.get_x()
    # 0 sits where it falls on the bar, between the ends
    assert bar.zero_mob is not None
    x0, x1 = bar.frame_rect.get_left()[0], bar.frame_rect.get_right()[0]
    assert bar.zero_mob.get_x() == pytest.approx(x0 + (x1 - x0) * (0 - low) / (high - low), abs=1e-6)
    assert bar.end_mobs[0].get_x() < bar.zero_mob.get_x() < bar.end_mobs[1].get_x()
    with pytest.raises(ValueError):
        ColorScale(1.0, 1.0, scale=1.0, caption="x", theme=DARK)


def test_mask_note_keeps_clear_of_the_outlined_query():
    n = 8
    grid = AttentionGrid(causal_pattern(n), [f"w{i}" for i in range(n)], theme=DARK, max_width=6, max_height=5)
    plain = mask_note(grid, "masked: no word looks ahead", DARK)
    (ax0, _, _), (ax1, _, _) = grid.column_region(1)
    assert plain[0].get_right()[0] > ax0  # without `avoid` it runs over query 1's column
    note = mask_note(grid, "masked: no word looks ahead", DARK, avoid=1)
    (bx0, _, _), (bx1, _, _) = grid.column_region(3)
    note3 = mask_note(grid, "masked: no word looks ahead", DARK, avoid=3)
    assert note3[0].get_right()[0] <= bx0 or note3[0].get_left()[0] >= bx1
    # query 1 leaves little room: the note is clear of its column (or absent), never over it
    assert note is None or note[0].get_right()[0] <= ax0 or note[0].get_left()[0] >= ax1


def test_a_wrapped_line_never_ends_on_a_lone_sign():
    """multi_head's Korean head label broke after "≥", leaving its number alone on the next line."""
    from attention_manim.scenes.chapters.honest import wrapped

    text = "헤드 2 · 쉼: 자기 자신 ≥ 0.96"
    one_line = wrapped(text, 100, 20, "#FFFFFF")
    assert len(one_line) == 1
    for width in [one_line.width * f for f in (0.5, 0.6, 0.7, 0.8, 0.9)]:
        lines = wrapped(text, width, 20, "#FFFFFF", 4)
        texts = [getattr(line, "text", "") or getattr(line, "original_text", "") for line in lines]
        assert all(t for t in texts), texts
        assert not any(t.rstrip().endswith(("≥", "·")) for t in texts), texts
        assert not any(t.strip() == "0.96" for t in texts), texts


def test_a_wrapped_text_leaves_no_word_alone_on_its_last_line():
    """Beyond-n² frames ended a wrapped note on one orphaned word; the lines are evened out instead,
    in as many lines as the width needs."""
    from attention_manim.scenes.chapters.honest import _break, wrapped
    from attention_manim.scenes.components.text import label

    text = "the heads of the model's only layer made linear, with the same queries and keys as before"
    words = text.split(" ")
    full = label(text, 20).width
    checked = 0
    for f in (0.3, 0.35, 0.4, 0.45, 0.55, 0.6, 0.7, 0.8, 0.9):
        greedy = _break(words, full * f, 20, "#FFFFFF", label)
        if len(greedy) < 2 or " " in greedy[-1]:
            continue  # no orphan to mend at this width
        checked += 1
        lines = [line.original_text for line in wrapped(text, full * f, 20, "#FFFFFF", 6)]
        assert len(lines) == len(greedy), (f, lines)  # no more lines than the width needs
        assert " " in lines[-1], (f, lines)  # the last line holds two words or more
        assert " ".join(lines) == text
    assert checked  # the text orphans a word at some width: the test exercised the mending


def test_a_sign_and_its_number_are_not_left_alone_on_the_last_line():
    """multi_head's idle label wrapped as "헤드 0 · 유휴: 자신" over a lone "≥ 0.97"."""
    from attention_manim.scenes.chapters.honest import wrapped
    from attention_manim.scenes.components.text import label

    for text in ("헤드 0 · 유휴: 자신 ≥ 0.97", "head 2 · ocioso: em si ≥ 0.99"):
        first = text.rsplit(" ≥", 1)[0]
        width = label(first, 20).width * 1.02  # the greedy break leaves "≥ 0.97" alone
        lines = [line.original_text for line in wrapped(text, width, 20, "#FFFFFF", 2)]
        assert len(lines) == 2 and lines[-1].startswith("≥") is False, lines


@pytest.mark.parametrize("layout", ["video", "paper"])
def test_the_masked_triangle_is_tinted_cell_for_cell(layout):
    """Review 35: left blank, the masked half looked like the allowed cells whose weight is ~0. The note
    brings a tint over exactly the masked cells: every masked cell's centre inside it, no other's."""
    from attention_manim.scenes.components.dot_legend import masked_shade

    def inside(poly, x, y) -> bool:  # ray casting
        hit = False
        for (x1, y1), (x2, y2) in zip(poly, np.roll(poly, -1, axis=0)):
            if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
                hit = not hit
        return hit

    n = 6
    grid = AttentionGrid(causal_pattern(n), [f"w{i}" for i in range(n)], layout=layout, theme=DARK,
                         max_width=6, max_height=5)
    shade = masked_shade(grid, DARK)
    assert shade.get_fill_opacity() > 0.1 and shade.get_stroke_width() == 0
    outline = np.asarray(shade.get_start_anchors())[:, :2]
    ul, cw, ch = grid._geom()
    for r in range(n):
        for c in range(n):
            q, k = (c, r) if layout == "video" else (r, c)
            centre = (ul[0] + (c + 0.5) * cw, ul[1] - (r + 0.5) * ch)
            assert inside(outline, *centre) == bool(np.asarray(grid.mask)[q, k]), (q, k)
    note = mask_note(grid, "masked: no word looks ahead", DARK)
    assert note is None or any(m.points.shape == shade.points.shape and np.allclose(m.points, shade.points) for m in note)


def test_a_heading_too_wide_for_a_line_breaks_after_its_colon():
    """context_size's heading broke "Context size: layer 13" / "· head 2": the name of the lesson, then whose
    pattern, reads in two halves."""
    from attention_manim.scenes.chapters.honest import wrapped
    from attention_manim.scenes.components.text import label

    text = "Context size: layer 13 · head 2"
    full = label(text, 30).width
    for f in (0.7, 0.8, 0.95):
        lines = [line.original_text for line in wrapped(text, full * f, 30, "#FFFFFF", 2, break_after=": ")]
        assert lines == ["Context size:", "layer 13 · head 2"], (f, lines)
    assert len(wrapped(text, full * 1.01, 30, "#FFFFFF", 2, break_after=": ")) == 1  # on one line where it fits
    # where a half is too wide for a line, the words break as before
    narrow = [line.original_text for line in wrapped(text, label("layer 13 · head", 30).width, 30, "#FFFFFF", 3,
                                                     break_after=": ")]
    assert " ".join(narrow) == text and len(narrow) == 3


def test_no_wrapped_line_starts_or_ends_with_a_relation():
    """Review 44: masked_self_attention's Korean note broke "… exp(−10¹⁰ − 2.3)" / "= 0.0, 정확히 0입니다.": a
    relation or an operation stays with the terms on both sides of it; "·" still breaks a heading."""
    from attention_manim.scenes.chapters.honest import wrapped
    from attention_manim.scenes.components.text import label

    text = "32비트 부동소수점에서 exp(−10¹⁰ − 2.3) = 0.0, 정확히 0입니다."
    formula = "exp(−10¹⁰ − 2.3) = 0.0,"
    full = label(text, 24).width
    for f in (0.45, 0.55, 0.65, 0.75, 0.85, 0.95):
        lines = [line.original_text for line in wrapped(text, full * f, 24, "#FFFFFF", 4)]
        assert " ".join(lines) == text
        assert any(formula in line for line in lines), (f, lines)
        assert not any(line.startswith(("=", "−")) or line.endswith(("=", "−")) for line in lines), (f, lines)
    title = "masked self-attention · layer 11 · head 1"
    lines = [line.original_text for line in wrapped(title, label(title, 24).width * 0.7, 24, "#FFFFFF", 3)]
    assert lines == ["masked self-attention", "· layer 11 · head 1"], lines  # "·" goes with what follows it only
    # an arrow ends a line, never starts one: "adjectives" / "→ nouns" read as two notes (review 46)
    role = "head 0 adjectives → nouns"
    lines = [line.original_text for line in wrapped(role, label("head 0 adjectives →", 24).width, 24, "#FFFFFF", 3)]
    assert lines == ["head 0 adjectives →", "nouns"], lines


def test_wrapped_lines_stand_on_evenly_spaced_baselines():
    """Review 49 (last_token, pt): "Nenhum / dos 4 heads" stood closer than the lines after it, boxes 0.12
    apart whatever their descenders. A wrapped text's baselines are one pitch apart, at least the boxes' gap."""
    from attention_manim.scenes.chapters.honest import wrapped
    from attention_manim.scenes.components.text import text_baseline

    text = ("Este modelo didático tem 1 camada. Nenhum dos 4 heads mostrados aqui foi feito para mistérios. "
            "Quase nada da atenção da última palavra vai além da palavra anterior.")
    lines = wrapped(text, 6.0, 24, "#FFFFFF", 4)
    assert len(lines) >= 3
    bases = [text_baseline(line) for line in lines]
    gaps = np.diff(bases)
    assert np.ptp(gaps) < 1e-6, gaps
    for a, b in zip(lines, lines[1:]):  # and no line touches the next
        assert a.get_bottom()[1] - b.get_top()[1] >= 0.12 - 1e-6
