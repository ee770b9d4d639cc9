"""The attention grid, the softmax column and the context arcs, checked the way a viewer would:
dots grow with the weight, blocked cells stay empty, the numbers drawn are the trace's numbers,
the paper layout is the transpose of the video's, nothing leaves the frame, labels never collide,
and the softmax column's weights are the real ones and sum to 1."""

from __future__ import annotations

import numpy as np
import pytest
from manim import Scene, config

from attention_manim.scenes.components.attention_grid import AttentionGrid
from attention_manim.scenes.components.batched_shapes import WordOutline, boxes_points, circles_points, rect_points, runs
from attention_manim.scenes.components.context_arcs import ContextArcs
from attention_manim.scenes.components.softmax_column import SoftmaxColumn
from attention_manim.scenes.components.text import parse_shown
from attention_manim.scenes.style import DARK, LIGHT, fmt_score, fmt_weight

from tests.test_one_head_grid import score_format

SENTENCE = "a fluffy blue creature roamed the verdant forest"


@pytest.fixture(scope="module")
def head(toy_model):
    trace = toy_model.trace(SENTENCE)
    return trace, trace.head(0, 0)


def synthetic(n, seed=0, causal=True):
    """A real softmax of random scores (for sizes the placeholder vocabulary cannot spell)."""
    rng = np.random.default_rng(seed)
    scores = rng.normal(0, 3, (n, n))
    mask = np.triu(np.ones((n, n), bool), 1) if causal else np.zeros((n, n), bool)
    e = np.exp(np.where(mask, -np.inf, scores) - np.where(mask, -np.inf, scores).max(1, keepdims=True))
    return {"scores": scores, "pattern": e / e.sum(1, keepdims=True), "mask": mask}


def run_scene(render_scene, build, png=False, size=(192, 108)):
    """Render a throwaway scene whose construct is build(scene)."""

    class S(Scene):
        def __init__(self, _inputs):
            super().__init__()

        def construct(self):
            build(self)

    return render_scene(S, None, png=png, size=size)


def drawn_dots(grid):
    """(centres [m,3], radii [m]) of the circles actually in the dots VMobject."""
    pts = grid.dots_mobject.points.reshape(-1, 4 * grid.dot_arcs, 3)
    lo, hi = pts.min(axis=1), pts.max(axis=1)
    return (lo + hi) / 2, (hi[:, 0] - lo[:, 0]) / 2


def in_frame(mob, margin=1e-6):
    w, h = config.frame_width / 2, config.frame_height / 2
    return (mob.get_left()[0] >= -w - margin and mob.get_right()[0] <= w + margin
            and mob.get_bottom()[1] >= -h - margin and mob.get_top()[1] <= h + margin)


# ------------------------------------------------------------------------------ dots and masks
def test_dot_sizes_are_monotone_in_weight_and_match_what_is_drawn(head):
    trace, h = head
    grid = AttentionGrid(h, trace.tokens).set_content("dots")
    radii = grid.dot_radii
    w = h.pattern
    free = ~h.mask & (w >= grid.min_weight)
    order = np.argsort(w[free])
    assert np.all(np.diff(radii[free][order]) >= -1e-12), "a larger weight drew a smaller dot"
    bigger = w[free][order][1:] > w[free][order][:-1] + 1e-9
    assert np.all(np.diff(radii[free][order])[bigger] > 0)
    centres, drawn = drawn_dots(grid)
    assert len(drawn) == int(free.sum()) == len(grid.dot_cells)
    for (q, k), c, r in zip(grid.dot_cells, centres, drawn):
        assert np.allclose(c, grid.cell_center(q, k), atol=1e-9)
        assert r == pytest.approx(radii[q, k], rel=1e-6)
    assert radii.max() <= 0.5 * min(grid.cell_width, grid.cell_height)  # dots stay in their cells


def test_masked_cells_get_no_dot_and_show_outline_then_minus_infinity(head, render_scene):
    trace, h = head
    assert h.mask.any()
    grid = AttentionGrid(h, trace.tokens).set_content("dots")
    assert np.all(grid.dot_radii[h.mask] == 0)
    assert not any(h.mask[c] for c in grid.dot_cells)
    assert sorted(grid.masked_cells) == sorted(map(tuple, np.argwhere(h.mask).tolist()))

    def build(s):
        grid.set_content("scores")
        s.add(grid)
        s.play(grid.reveal_mask(run_time=0.4))
        assert grid.mask_state == "minus_inf"
        assert set(grid.mask_number_mobs) == set(grid.masked_cells)
        assert all(m.shown == "−∞" and m.value == -np.inf for m in grid.mask_number_mobs.values())
        assert not any(h.mask[c] for c in grid.number_mobs), "a blocked cell still shows its score"
        s.play(grid.show_dots(run_time=0.4))
        s.play(grid.clear_mask(run_time=0.4))
        assert not any(m.has_points() for m in grid.mask_sheet.submobjects) and grid.mask_state == "cleared"

    run_scene(render_scene, build)


def test_pixels_blocked_cells_are_background_and_outlines_are_red(head, render_scene):
    trace, h = head
    size = (384, 216)

    def px(frame, point):
        x = int(round((point[0] / config.frame_width + 0.5) * size[0]))
        y = int(round((0.5 - point[1] / config.frame_height) * size[1]))
        return frame[y, x, :3].astype(int)

    holder = {}

    def build_cleared(s):
        g = AttentionGrid(h, trace.tokens).set_content("dots").set_mask("cleared")
        holder["g"] = g
        s.add(g)

    _, frame = run_scene(render_scene, build_cleared, png=True, size=size)
    g = holder["g"]
    for q, k in g.masked_cells:
        assert np.all(px(frame, g.cell_center(q, k)) < 12), f"blocked cell {(q, k)} is not empty"
    q, k = max(((q, k) for q, k in np.argwhere(~h.mask)), key=lambda c: h.pattern[tuple(c)])
    assert px(frame, g.cell_center(q, k)).min() > 150, "the largest weight's dot is not drawn"

    def build_outlined(s):
        g = AttentionGrid(h, trace.tokens).set_content("dots").set_mask("outlined")
        holder["g"] = g
        s.add(g)

    _, frame = run_scene(render_scene, build_outlined, png=True, size=size)
    g = holder["g"]
    q, k = g.masked_cells[0]
    c = g.cell_center(q, k)
    edge = c + np.array([0, 0.44 * g.cell_height, 0])  # on the outline's top side
    pixel = config.frame_height / size[1]  # one pixel
    samples = [px(frame, edge + np.array([0, d * pixel, 0])) for d in (-2, -1, 0, 1, 2)]
    r, gr, b = max(samples, key=lambda v: v[0] - max(v[1], v[2]))
    assert r > 120 and r > gr + 50 and r > b + 50, f"no red outline at a blocked cell: {(r, gr, b)}"


# ------------------------------------------------------------------------------ numbers
def test_scores_and_weights_shown_are_the_trace_values(head):
    trace, h = head
    grid = AttentionGrid(h, trace.tokens).set_content("scores")
    assert grid.content_kind == "scores"
    assert set(grid.number_mobs) == {(q, k) for q in range(8) for k in range(8)}
    for (q, k), m in grid.number_mobs.items():
        assert m.value == h.scores[q, k]
        assert m.shown == score_format(h)(h.scores[q, k])  # one rule for the whole grid
        assert abs(parse_shown(m.shown) - h.scores[q, k]) <= 0.05 + 1e-9
        # in its cell: its box centred across, its digits (baseline to top) centred up and down (review 46)
        from attention_manim.scenes.components.text import text_baseline

        assert m.get_center()[0] == pytest.approx(grid.cell_center(q, k)[0], abs=1e-6)
        assert (text_baseline(m) + m.get_top()[1]) / 2 == pytest.approx(grid.cell_center(q, k)[1], abs=1e-6)
    grid.set_content("weights")
    assert set(grid.number_mobs) == set(map(tuple, np.argwhere(~h.mask).tolist()))
    for (q, k), m in grid.number_mobs.items():
        assert m.value == h.pattern[q, k] and m.shown == fmt_weight(h.pattern[q, k])
        assert abs(parse_shown(m.shown) - h.pattern[q, k]) <= 0.005 + 1e-9
        assert m.width < grid.cell_width and m.height < grid.cell_height  # fits its cell


def test_a_tie_the_weights_deny_is_written_to_two_decimals_in_every_cell():
    """Two keys of one query at +5.27 and +5.31 both read +5.3, though their weights read 0.49 and 0.51:
    the grid writes every score to two decimals; with no such tie, one decimal."""
    scores = np.array([[0.0, -9.0, -9.0], [0.2, 1.4, -9.0], [-1.0, 5.27, 5.31]])
    mask = np.triu(np.ones((3, 3), bool), 1)
    e = np.exp(np.where(mask, -np.inf, scores))
    data = {"scores": scores, "pattern": e / e.sum(1, keepdims=True), "mask": mask}
    grid = AttentionGrid(data, ["a", "b", "c"], max_width=6, max_height=4).set_content("scores")
    shown = {c: m.shown for c, m in grid.number_mobs.items()}
    assert shown[(2, 1)] == "+5.27" and shown[(2, 2)] == "+5.31" and shown[(1, 1)] == "+1.40", shown
    plain = dict(data, scores=np.where(np.arange(3) == 2, scores + np.array([0, 0, 0.5]), scores))
    e = np.exp(np.where(mask, -np.inf, plain["scores"]))
    plain["pattern"] = e / e.sum(1, keepdims=True)
    grid = AttentionGrid(plain, ["a", "b", "c"], max_width=6, max_height=4).set_content("scores")
    assert grid.number_mobs[(2, 2)].shown == "+5.8" and grid.number_mobs[(1, 1)].shown == "+1.4"


def test_long_sentences_fall_back_from_numbers_to_dots():
    grid = AttentionGrid(synthetic(40), [f"w{i}" for i in range(40)])
    grid.set_content("scores")
    assert grid.content_kind == "dots" and grid.number_mobs == {} and grid.fallbacks == ["scores->dots"]
    grid.set_content("symbols")
    assert grid.content_kind == "none" and grid.fallbacks[-1] == "symbols->none"
    # a window of cells can still carry numbers (the caller zooms in on it)
    small = AttentionGrid(synthetic(20), [f"w{i}" for i in range(20)], number_limit=10)
    small.set_content("weights", window=(range(3), range(3)))
    assert set(small.number_mobs) <= {(q, k) for q in range(3) for k in range(3)}


# ------------------------------------------------------------------------------ layout
def test_paper_layout_is_the_transpose_of_the_video_layout(head):
    trace, h = head
    video = AttentionGrid(h, trace.tokens, layout="video", cell_size=0.5)
    paper = AttentionGrid(h, trace.tokens, layout="paper", cell_size=0.5)
    from manim import UL

    ov, op = video.lines.get_corner(UL), paper.lines.get_corner(UL)
    for q in range(8):
        for k in range(8):
            assert np.allclose(video.cell_center(q, k) - ov, paper.cell_center(k, q) - op)
    # video: keys run down the rows; paper: queries do
    assert video.cell_center(0, 5)[1] < video.cell_center(0, 0)[1]
    assert video.cell_center(5, 0)[0] > video.cell_center(0, 0)[0]
    assert paper.cell_center(5, 0)[1] < paper.cell_center(0, 0)[1]
    assert video.row_labels.get_fill_color().to_hex().upper() == DARK.key.upper()
    assert video.col_labels.get_fill_color().to_hex().upper() == DARK.query.upper()
    assert paper.row_labels.get_fill_color().to_hex().upper() == DARK.query.upper()
    assert np.array_equal(video.mask, h.mask)  # the arrays stay [query, key] either way


@pytest.mark.parametrize("n", [8, 24, 64, 128])
def test_grid_fits_the_frame_and_labels_never_overlap(n):
    tokens = [("extraordinarily" if i % 5 == 0 else f"w{i}") for i in range(n)]
    grid = AttentionGrid(synthetic(n), tokens).set_content("dots").set_mask("outlined")
    assert in_frame(grid)
    for which in ("rows", "cols"):
        boxes = grid.label_boxes(which)
        assert len(boxes) == len(grid.shown_labels[which]) >= min(n, 8)
        assert grid.shown_labels[which][0] == 0
        for a, b in zip(boxes, boxes[1:]):
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, f"{which} labels overlap at n={n}"
    assert grid.label_font_size >= grid.min_label_font
    if n <= 24:
        assert grid.label_stride == (1, 1)  # every token labelled while they fit


def test_light_theme_and_no_labels():
    grid = AttentionGrid(synthetic(6)["pattern"], None, theme=LIGHT).set_content("dots")
    assert not grid.row_labels.has_points()
    assert grid.dots_mobject.get_fill_color().to_hex().upper() == LIGHT.text.upper()


# ------------------------------------------------------------------------------ animations
def test_transitions_keep_the_grid_one_mobject(head, render_scene):
    trace, h = head
    kinds = []

    def build(s):
        g = AttentionGrid(h, trace.tokens)
        s.add(g)
        for anim in (g.show_symbols(0.2), g.show_scores(0.2), g.reveal_mask(0.2), g.show_weights(0.2),
                     g.highlight_column(3, dim_others=True), g.spotlight([(3, 1), (3, 2)]),
                     g.unhighlight(), g.show_dots(0.2), g.clear_mask(0.2)):
            s.play(anim)
            kinds.append(g.content_kind)
            assert s.mobjects == [g], "an animation split the grid into loose pieces"
            assert all(m.has_points() for m in g.drawn_content)
            assert len(g._live(g._spare_bank)) == 0, "the previous content was left behind"
        s.play(g.animate.shift(0.5 * np.array([1, 0, 0])))
        assert in_frame(g, margin=0.6)
        # tweens built ahead and chained decide what to draw when they start
        g2 = AttentionGrid(h, trace.tokens)
        s.add(g2)
        s.play(g2.succession(g2.show_scores(0.2), g2.reveal_mask(0.2), g2.show_dots(0.2), g2.clear_mask(0.2)))
        assert g2.content_kind == "dots" and g2.mask_state == "cleared" and s.mobjects == [g, g2]
        assert len(g2.drawn_content) == 1 and not any(m.has_points() for m in g2.mask_sheet.submobjects)

    run_scene(render_scene, build)
    assert kinds[0] == "symbols" and kinds[1] == "scores" and kinds[3] == "weights" and kinds[-1] == "dots"


def test_tweens_leave_the_static_sheets_in_the_static_frame(render_scene):
    """Speed, structurally: while dots grow, the lines, labels and mask are drawn once, not on
    every frame (manim would redraw the whole grid if it stayed one group during the tween)."""
    data = synthetic(40)

    def build(s):
        g = AttentionGrid(data, [f"w{i}" for i in range(40)]).set_mask("outlined")
        s.add(g)
        s.play(g.show_dots(run_time=0.2))
        moving = set(map(id, s.moving_mobjects))
        for static in (g.lines, g.row_labels, g.col_labels, *g.mask_sheet.submobjects):
            assert id(static) not in moving
        assert id(g.dots_mobject) in moving
        s.play(g.highlight_column(5, run_time=0.2))
        assert id(g.dots_mobject) not in set(map(id, s.moving_mobjects))
        assert s.mobjects == [g]

    run_scene(render_scene, build)


def test_highlight_and_spotlight_cover_the_right_cells(head):
    trace, h = head
    g = AttentionGrid(h, trace.tokens).set_content("dots")
    g.highlight_column(4).begin()
    box = g.highlight_box
    for k in range(8):
        c = g.cell_center(4, k)
        assert box.get_left()[0] <= c[0] <= box.get_right()[0] and box.get_bottom()[1] <= c[1] <= box.get_top()[1]
    assert box.get_right()[0] < g.cell_center(5, 0)[0]
    g.spotlight([(4, 2)]).begin()
    veil = g.veil.points.reshape(-1, 16, 3)
    lo, hi = veil.min(axis=1), veil.max(axis=1)

    def covered(p):
        return bool(np.any((lo[:, 0] < p[0]) & (p[0] < hi[:, 0]) & (lo[:, 1] < p[1]) & (p[1] < hi[:, 1])))

    assert not covered(g.cell_center(4, 2))
    assert all(covered(g.cell_center(q, k)) for q in range(8) for k in range(8) if (q, k) != (4, 2))


# ------------------------------------------------------------------------------ softmax column
def test_softmax_column_turns_real_scores_into_real_weights_summing_to_one(head, render_scene):
    trace, h = head
    q = 4
    seen = {}

    def build(s):
        g = AttentionGrid(h, trace.tokens, max_width=9).set_content("scores")
        s.add(g)
        sm = SoftmaxColumn(g, q)
        assert sm.shown_keys == list(range(8))
        s.play(sm.lift(run_time=0.4))
        assert in_frame(sm.box)
        # the grid still shows raw scores in blocked cells: so does the lifted column
        assert sm.raw_shown and h.mask[q].any()
        for k, m in zip(sm.shown_keys, sm.shown_numbers):
            assert m.value == h.scores[q, k] and m.shown == fmt_score(h.scores[q, k])
        # what the softmax sees: −∞ for the blocked keys
        for k, m in zip(sm.shown_keys, sm.score_mobs):
            expected = -np.inf if h.mask[q, k] else h.scores[q, k]
            assert m.value == expected and m.shown == fmt_score(expected)
        s.play(sm.normalize(run_time=0.4))
        def opacity(mob):  # of its most opaque glyph
            return max(g.get_fill_opacity() for g in mob.family_members_with_points())

        assert all(opacity(m) == pytest.approx(0.0) for m in sm.score_mobs), "scores still showing"
        assert all(opacity(m) == pytest.approx(0.0) for m in sm.raw)
        assert all(opacity(m) == pytest.approx(1.0) for m in sm.weight_mobs)
        assert opacity(sm.sum_mob) == pytest.approx(1.0)
        after = sm.shown_numbers
        seen["after"] = after
        for k, m in zip(sm.shown_keys, after):  # a masked key's exact 0 written as the masked grids write it
            assert m.value == h.pattern[q, k] and m.shown == ("0" if h.mask[q, k] else fmt_weight(h.pattern[q, k]))
        assert sum(m.value for m in after) == pytest.approx(1.0, abs=1e-6)
        assert sm.sum_mob.shown == "1.00" and sm.sum_mob.value == pytest.approx(1.0, abs=1e-6)
        assert sm.sum_group in sm.strip.submobjects
        assert s.mobjects == [g, sm.strip]
        s.play(sm.settle(run_time=0.4))
        assert s.mobjects == [g] and not g.highlight_box.has_points()

    run_scene(render_scene, build)


def test_softmax_column_of_a_long_sentence_lists_the_largest_weights():
    data = synthetic(40, seed=3)
    g = AttentionGrid(data, [f"w{i}" for i in range(40)])
    sm = SoftmaxColumn(g, 30, max_entries=8)
    p = data["pattern"][30]
    assert len(sm.shown_keys) == 8 and sm.shown_keys == sorted(sm.shown_keys)
    assert min(p[sm.shown_keys]) >= sorted(p, reverse=True)[7] - 1e-12
    assert sm.gaps, "left-out keys must be marked with ⋮"
    assert sm.sum_mob.value == pytest.approx(1.0) and sm.sum_mob.shown == "1.00"
    sm.strip.save_state()
    assert in_frame(VGroupOf(sm.box, sm.op_label))


def texts_in(mob):
    """Every Text drawn in `mob` (its `.text`), deepest first."""
    return [m.text for m in mob.get_family() if hasattr(m, "text") and isinstance(m.text, str)]


def test_softmax_column_writes_no_words_of_its_own():
    """Only tokens, numbers and formula symbols come from the component; the note under Σ (a
    sentence) is the caller's, and shown only when keys are left out."""
    data = synthetic(40, seed=3)
    tokens = [f"w{i}" for i in range(40)]
    g = AttentionGrid(data, tokens)
    plain = SoftmaxColumn(g, 30, max_entries=8)
    assert len(plain.sum_group) == 2  # rule and Σ row: no note without the caller's words
    numbers = {m.shown for m in [*plain.score_mobs, *plain.weight_mobs, *plain.raw_blocked.values(), plain.sum_mob]}
    allowed = set(tokens) | numbers | {"softmax", "Σ=", "⋮"}  # Text.text drops spaces
    drawn = texts_in(plain.strip)
    assert drawn and all(t in allowed for t in drawn), [t for t in drawn if t not in allowed]
    visible = int((~data["mask"][30]).sum())
    assert plain.visible_count == visible
    noted = SoftmaxColumn(g, 30, max_entries=8, sum_note=f"Σ{visible}", op_text="sm")
    assert len(noted.sum_group) == 3 and noted.sum_group[2].text == f"Σ{visible}"
    assert noted.op_label.text == "sm"
    short = SoftmaxColumn(AttentionGrid(synthetic(6), tokens[:6]), 3, sum_note="unused")
    assert len(short.sum_group) == 2  # every key listed: the note is not needed


# ------------------------------------------------------------------------------ batched shapes
def test_batched_shape_builders():
    centers = np.array([[0.0, 0.0, 0.0], [2.0, 1.0, 0.0]])
    pts = circles_points(centers, np.array([0.5, 0.25]), 4).reshape(2, 16, 3)
    for p, c, r in zip(pts, centers, (0.5, 0.25)):
        assert np.allclose(np.linalg.norm(p[::4] - c, axis=1), r)  # arc ends on the circle
    assert np.array_equal(boxes_points([(0, 0, 2, 1)]), rect_points(np.array([[1, 0.5, 0]]), 1, 0.5))
    assert boxes_points([]).shape == (0, 3)
    assert runs([False, True, True, False, True]) == [(1, 3), (4, 5)]
    word = WordOutline("blue")
    right = word.placed(24, [1.0, 2.0, 0.0], align="right")
    left = word.placed(24, [1.0, 2.0, 0.0], align="left")
    assert right[:, 0].max() == pytest.approx(1.0) and left[:, 0].min() == pytest.approx(1.0)


def test_component_modules_and_classes_stay_small():
    """Readable parts: no module of scenes/components over 500 lines, no class over 700."""
    import ast
    from pathlib import Path

    for path in sorted((Path(__file__).parent.parent / "scenes" / "components").glob("*.py")):
        source = path.read_text()
        assert source.count("\n") <= 500, f"{path.name} has {source.count(chr(10))} lines"
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef):
                assert node.end_lineno - node.lineno < 700, f"{path.name}: class {node.name} is too long"


def VGroupOf(*mobs):
    from manim import VGroup

    return VGroup(*mobs)


# ------------------------------------------------------------------------------ context arcs
def test_arc_width_and_opacity_are_monotone_in_weight_and_arcs_bulge_upwards():
    xs = np.linspace(-5, 5, 6)
    sources = [np.array([x, 0, 0]) for x in xs]
    target = np.array([xs[3], 0, 0])
    weights = np.array([0.05, 0.3, 0.1, 0.2, 0.25, 0.1])
    arcs = ContextArcs(sources, target, weights)
    assert arcs.arcs[3] is None  # the target itself: no arc
    drawn = arcs.drawn()
    assert len(drawn) == 5 and len(arcs.submobjects) == 5
    ws = np.array([w for _, w in drawn])
    widths = np.array([a.get_stroke_width() for a, _ in drawn])
    opac = np.array([a.get_stroke_opacity() for a, _ in drawn])
    order = np.argsort(ws)
    assert np.all(np.diff(widths[order]) >= 0) and np.all(np.diff(opac[order]) >= 0)
    assert widths[np.argmax(ws)] > widths[np.argmin(ws)] and opac[np.argmax(ws)] > opac[np.argmin(ws)]
    for (a, _), src in zip(drawn, [s for i, s in enumerate(sources) if i != 3]):
        assert np.allclose(a.get_start(), src + [0, 0.08, 0]) and np.allclose(a.get_end(), target + [0, 0.08, 0])
        assert a.get_top()[1] > src[1] + 0.2, "arcs must bulge upwards"
    with pytest.raises(ValueError):
        ContextArcs(sources, target, weights[:3])


def test_arcs_pulse_and_grow_play(render_scene, head):
    trace, h = head

    def build(s):
        arcs = ContextArcs([np.array([x, -1, 0]) for x in range(-3, 1)], np.array([2, -1, 0]), h.pattern[3, :4])
        s.play(arcs.grow(run_time=0.2))
        s.play(arcs.pulse(run_time=0.2))
        assert arcs in s.mobjects and in_frame(arcs)

    run_scene(render_scene, build)


def test_the_softmax_column_writes_two_decimals_where_one_would_show_a_false_tie():
    """fluffy +5.29 and blue +5.34 both read +5.3 at one decimal, weighted 0.48 and 0.50: the column
    says +5.29 and +5.34; scores that tie at one decimal with tied weights keep one decimal."""
    import numpy as np

    from attention_manim.scenes.components.softmax_column import score_kind

    scores = np.array([5.29, 5.34, 2.07, -3.84])
    weights = np.exp(scores) / np.exp(scores).sum()
    assert score_kind(scores, weights, [0, 1, 2, 3]) == "score2"
    assert score_kind(scores, weights, [2, 3]) == "score"
    assert score_kind(np.array([1.01, 1.02]), np.array([0.5, 0.5]), [0, 1]) == "score"


def test_the_softmax_column_writes_two_decimals_where_one_gives_other_weights():
    """SmolLM2's "␣creature": its one-decimal scores give 0.55 where the column shows 0.56 (review 52). Where
    every key the softmax runs over is listed, the column's scores are written so that their softmax, by
    hand, gives the weights drawn: +1.04 and 0.00 weigh 0.74 and 0.26; +1.0 and 0.0 would weigh 0.73."""
    import numpy as np

    from attention_manim.scenes.components.softmax_column import score_kind

    scores = np.array([1.04, 0.0])
    weights = np.exp(scores) / np.exp(scores).sum()
    assert score_kind(scores, weights, [0, 1], complete=True) == "score2"
    assert score_kind(scores, weights, [0, 1], complete=False) == "score"  # some keys not listed: no check
    exact = np.array([1.0, 0.0])
    assert score_kind(exact, np.exp(exact) / np.exp(exact).sum(), [0, 1], complete=True) == "score"
    blocked = np.array([1.0, 0.0, -np.inf])  # a −∞ key weighs 0 and changes nothing
    assert score_kind(blocked, np.exp(blocked) / np.exp(blocked).sum(), [0, 1, 2], complete=True) == "score"


def test_symbol_subscripts_read_at_the_text_size_or_are_left_out():
    """The K⃗ⱼ·Q⃗ᵢ cells of dot_products and attention_formula had 7-9 px subscripts: a cell large
    enough writes them at 11.5 px or more; a smaller one writes K⃗·Q⃗ (its row and column say which)."""
    from attention_manim.scenes.components.grid_symbols import SUBSCRIPT_PX, symbol_outline

    data = synthetic(10)
    big = AttentionGrid(data["pattern"], None, cell_size=1.2)
    big._symbol_parts()
    assert big.symbol_indexed
    digit, ref, height = big.lint_subscript
    assert digit * 90 >= SUBSCRIPT_PX and ref is big.lines
    small = AttentionGrid(data["pattern"], None, cell_size=0.6)
    parts = small._symbol_parts()
    assert parts and not small.symbol_indexed and small.lint_subscript is None
    # without indices the symbol is narrower, so it is drawn larger than the indexed one would be
    assert symbol_outline(None, None)["width"] < 0.7 * symbol_outline(10, 10)["width"]


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_a_small_marks_token_is_labelled_by_its_name(lang):
    """Review 44: a comma token in a grid was quoted, "“,”": turned on its side in a column label, a speck
    between two specks. A small mark is labelled by its name in brackets, a leading space kept; a mark tall
    enough to read ("?") stays quoted; a word, and an excerpt's gap, stay as they are."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.grid_parts import new_grid, shown_token
    from attention_manim.scenes.components.grid_geometry import short_token
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.stage import Region
    from attention_manim.scenes.style import DARK

    say = Say(lang)
    comma = say.catalog["common.mark_labels.comma"]
    assert comma.startswith("(") and comma.endswith(")") and "," not in comma
    assert shown_token(say, ",") == comma and shown_token(say, "␣,") == "␣" + comma
    assert shown_token(say, ":") == say.catalog["common.mark_labels.colon"]
    assert shown_token(say, "?") == say.quote("?")
    assert shown_token(say, "␣robot") == "␣robot" and shown_token(say, "⋯") == "⋯"
    # a mark's name is the catalog's, never cut like a long word ("(dois-pontos)" has 13 characters)
    for name in say.catalog:
        if name.startswith("common.mark_labels."):
            assert short_token(say.catalog[name], 12) == say.catalog[name]
    assert short_token("extraordinarily", 12) == "extraordina…"
    # a grid built for a lesson labels the comma so
    tokens = ["The", "␣baker", ",", "␣lit", "␣the", "␣oven"]
    n = len(tokens)
    pattern = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    data = SimpleNamespace(pattern=pattern, mask=np.tril(np.ones((n, n), bool)), scores=None, layer=0, head=0)
    stage = SimpleNamespace(say=say, theme=DARK, region=lambda name: Region("grid", -6, 6, -3.5, 3.5))
    grid, _ = new_grid(stage, data, tokens, "video", region=Region("grid", -6, 6, -3.5, 3.5))
    assert grid._disp == ["The", "␣baker", comma, "␣lit", "␣the", "␣oven"]


def test_a_grids_figures_are_centred_by_their_digits_in_every_language():
    """Review 46: in pt, "0,97" stood 4 px over the "0" beside it: centred by its box, whose comma hangs under
    the line. Every figure's digits are centred on its cell, a decimal comma or not."""
    from attention_manim.scenes.components.attention_grid import AttentionGrid
    from attention_manim.scenes.components.text import reset_number_language, set_number_language, text_baseline

    pattern = np.array([[1.0, 0.0, 0.0], [0.97, 0.03, 0.0], [0.02, 0.82, 0.16]])
    mask = np.triu(np.ones((3, 3), bool), 1)
    for lang in ("en", "pt"):
        token = set_number_language(lang)
        try:
            g = AttentionGrid((np.log(np.maximum(pattern, 1e-9)), pattern, mask), ["a", "b", "c"], layout="paper")
            g.set_content("weights")
            centres = g.cell_centers()
            for (q, k), m in g.number_mobs.items():
                middle = (text_baseline(m) + m.get_top()[1]) / 2
                assert middle == pytest.approx(centres[q, k][1], abs=0.004), (lang, m.shown)
            assert any("," in m.shown for m in g.number_mobs.values()) == (lang == "pt")
        finally:
            reset_number_language(token)


def test_a_cells_numbers_take_more_of_its_width_rather_than_fall_under_14_px():
    """SmolLM2 on our own sentence: the masked grid's figures stood 13.8 px tall, sized so that the widest
    score took 78 % of a cell. Short of 14 px, the widest number may take up to 86 % (WIDEST_SHARE), and
    no more; a cell roomy enough keeps 78 %."""
    from attention_manim.scenes.components.grid_sheets import WIDEST_SHARE
    from attention_manim.scenes.components.text import label

    strings = ["0.00", "−∞"]

    def digit_px(fs):
        return label("0", fs).height * 90

    def widest(fs):
        return max(label(s, fs).width for s in strings)

    fs14 = 14 / (digit_px(48) / 48)  # about the size whose digits stand 14 px tall
    w14 = widest(fs14)  # the widest number at that size
    data = synthetic(6)
    for share_at_14, expect in ((0.5, "usual"), (0.82, "stretched"), (0.95, "capped")):
        cell_w = w14 / share_at_14
        grid = AttentionGrid(data["pattern"], None, layout="paper", cell_size=(cell_w, 0.6))
        fs = grid._number_font(strings)
        share = widest(fs) / cell_w
        if expect == "usual":  # room to spare: 78 %, over 14 px
            assert share == pytest.approx(0.78, abs=0.005) and digit_px(fs) > 14
        elif expect == "stretched":  # 78 % reads under 14 px, 82 % reaches it: just over 14 px
            assert 14.0 <= digit_px(fs) < 14.4 and 0.8 < share < WIDEST_SHARE
        else:  # too narrow even at 86 %: 86 %, no more
            assert share == pytest.approx(WIDEST_SHARE, abs=0.005) and digit_px(fs) < 14


def test_a_close_up_is_snapped_to_the_grids_lines():
    """Review 48: dot_products' close-up cut the first row of K⃗₁·Q⃗… through at the frame's top. The close-up is a
    whole number of rows tall, its top on a row's line and, in the video layout, its right edge on a column's
    line; what it must keep stays inside; a close-up that cannot keep it is left as asked."""
    from types import SimpleNamespace

    from manim import Square

    from attention_manim.scenes.chapters.grid_parts import snapped_close_up

    data = synthetic(8)
    grid = AttentionGrid(data["pattern"], None, layout="video", cell_size=(1.2, 0.9))
    frame = SimpleNamespace(width=14.222, height=8.0)
    cell = grid.cell_rect(3, 2)
    centre, z = snapped_close_up(grid, cell.get_center() + np.array([0.37, -0.21, 0.0]), 0.45, frame, keep=cell)
    h, w = z * frame.height, z * frame.width
    rows = h / grid.cell_height
    assert rows == pytest.approx(round(rows), abs=1e-6) and abs(z - 0.45) <= 0.25 * 0.45
    top = grid.lines.get_top()[1]
    assert ((top - (centre[1] + h / 2)) / grid.cell_height) == pytest.approx(round((top - (centre[1] + h / 2)) / grid.cell_height), abs=1e-6)
    left = grid.lines.get_left()[0]
    assert ((centre[0] + w / 2 - left) / grid.cell_width) == pytest.approx(round((centre[0] + w / 2 - left) / grid.cell_width), abs=1e-6)
    assert centre[0] - w / 2 < cell.get_left()[0] and cell.get_right()[0] < centre[0] + w / 2
    assert centre[1] - h / 2 < cell.get_bottom()[1] and cell.get_top()[1] < centre[1] + h / 2
    # something too big to keep inside any snapped frame: the close-up as asked
    huge = Square(side_length=20).move_to(cell)
    asked = cell.get_center()
    kept_at, kept_z = snapped_close_up(grid, asked, 0.45, frame, keep=huge)
    assert np.allclose(kept_at, asked) and kept_z == 0.45


def test_a_close_ups_cut_cells_at_its_edges_are_veiled():
    """Review 49: attention_formula's close-up showed a sliver of the first column, a "Q₁" fragment and its
    fraction bar, at the frame's left edge. A cell the frame's edge cuts, showing less than ALMOST_WHOLE of
    itself, is covered by a plate of the background while the camera is close; a cell showing nearly all of
    itself is left; the plates go with `close_up_done`."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.grid_parts import ALMOST_WHOLE, close_up, close_up_done

    data = synthetic(8)
    grid = AttentionGrid(data["pattern"], None, layout="video", cell_size=(1.2, 0.9))
    frame = SimpleNamespace(width=14.222, height=8.0)
    left, top = grid.lines.get_left()[0], grid.lines.get_top()[1]
    z = 4 * 0.9 / 8.0  # four rows tall: 7.1 units wide, 5.9 cells
    w, h = z * frame.width, z * frame.height
    # the right edge on a column's line, the left edge cutting a column with 0.9 of it shown (a sliver) ...
    right = left + 7 * 1.2
    centre = np.array([right - w / 2, top - h / 2, 0.0])
    close_up(grid, centre, z, frame)
    veils = grid.close_up_veils
    shown = (left + 2 * 1.2) - (right - w)  # the cut column's part inside the frame
    assert 0 < shown < ALMOST_WHOLE * 1.2 and len(veils) == 1
    (v,) = veils
    assert right - w - 0.06 < v.get_left()[0] <= right - w  # from just past the frame's edge ...
    assert left + 2 * 1.2 - 0.03 < v.get_right()[0] < left + 2 * 1.2  # ... to the first whole column's line
    assert v.get_fill_opacity() == 1.0 and v.z_index > grid.z_index
    assert len(close_up_done(grid)) >= 1 and grid.close_up_veils == []
    # ... and a frame whose cut cell shows nearly all of itself: nothing is veiled
    centre = np.array([left + 1.2 + 0.05 + w / 2, top - h / 2, 0.0])  # column 1 shows 1.15 of its 1.2
    close_up(grid, centre, z, frame)
    assert not [v for v in grid.close_up_veils if v.get_x() < centre[0] - w / 2 + 1.2]


def test_a_close_up_keeps_row_labels_near_its_top_edge_on_the_grids_line():
    """Review 52: on SmolLM2, dot_products' close-up had its top on the grid's top line, and the first row's label
    "A" stood a few pixels under it, inside the margin kept from the frame's edge: every row label faded and the
    left sixth of the frame was black. Along its own axis a label lies inside its row, and a snapped edge lies on
    a line: a label wholly inside the frame there is whole. Across the axis the margin still holds."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.grid_parts import close_up, close_up_done

    data = synthetic(8)
    grid = AttentionGrid(data["pattern"], [f"w{i}" for i in range(8)], layout="video", cell_size=(1.2, 0.9))
    frame = SimpleNamespace(width=14.222, height=8.0)
    top = grid.lines.get_top()[1]
    gap = top - grid.label_boxes("rows")[0][3]  # from the first label's top up to the grid's top line
    h = max(gap * 8 / 0.12 * 1.2, 8 * 0.9 + 0.5)  # a frame whose edge margin (0.12 h / 8) is wider than the gap
    z = h / frame.height
    w = z * frame.width
    labels_left, m = grid.row_labels.get_left()[0], 0.12 * h / 8
    centre = np.array([labels_left - 2 * m + w / 2, top - h / 2, 0.0])
    assert 0 < gap < m
    close_up(grid, centre, z, frame)
    assert grid.row_labels not in grid.close_up_faded
    close_up_done(grid)
    # the frame's left edge within the margin of the labels' left: across their axis, they still fade
    close_up(grid, centre + np.array([1.5 * m, 0.0, 0.0]), z, frame)
    assert grid.row_labels in grid.close_up_faded
    close_up_done(grid)


def test_a_close_up_keeps_the_row_labels_whose_cut_rows_are_veiled():
    """Review 50: dot_products' close-up faded every row label because the frame's edge cut the last row's,
    leaving a band of black at the left. A label in a row the frame cuts lies under that row's plate: the
    others stay and name the rows shown; a label the frame cuts outside any plate still fades the sheet."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.grid_parts import close_up, close_up_done, snapped_close_up

    data = synthetic(8)
    grid = AttentionGrid(data["pattern"], [f"w{i}" for i in range(8)], layout="video", cell_size=(1.2, 0.9))
    frame = SimpleNamespace(width=14.222, height=8.0)
    labels_left, top = grid.row_labels.get_left()[0], grid.lines.get_top()[1]
    z = 5.5 * 0.9 / 8.0  # five and a half rows tall: the sixth row cut in half
    w, h = z * frame.width, z * frame.height
    centre = np.array([labels_left - 0.2 + w / 2, top - h / 2, 0.0])
    close_up(grid, centre, z, frame)
    assert grid.row_labels not in grid.close_up_faded and len(grid.close_up_veils) >= 1
    close_up_done(grid)
    # the frame's left edge through the labels: cut outside any plate, the sheet fades
    close_up(grid, centre + np.array([0.5, 0.0, 0.0]), z, frame)
    assert grid.row_labels in grid.close_up_faded
    close_up_done(grid)
    # asked to hold a width, a snapped close-up is never closer than asked (whole rows added)
    at, zz = snapped_close_up(grid, centre, 0.61, frame, at_least=True)
    assert zz >= 0.61 and (zz * frame.height / 0.9) == pytest.approx(round(zz * frame.height / 0.9), abs=1e-6)


@pytest.mark.parametrize("lang", ["en", "pt", "ko"])
def test_the_corner_head_tag_takes_the_fewest_lines(lang):
    """Review 52: in pt the corner tag stood in four lines ("camada 0" / "head 0" / "adjetivos →" / "substantivos")
    at 22 px, where at 16 px it takes three. The tag takes the fewest lines at any of its sizes, then the largest
    size; the head's name stays whole on its line wherever the role is wrapped; never under the least size."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.grid_parts import TAG_MIN_FS, new_grid
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.stage import Region
    from attention_manim.scenes.style import DARK

    tokens = "a fluffy blue creature roamed the verdant forest".split()
    n = len(tokens)
    pattern = np.tril(np.ones((n, n))) / np.arange(1, n + 1)[:, None]
    data = SimpleNamespace(pattern=pattern, mask=np.tril(np.ones((n, n), bool)), scores=None, layer=0, head=0,
                           role="adjective_noun")
    regions = {"full": Region("full", -6.9, 6.9, -3.8, 3.8), "grid": Region("grid", -6.9, 2.3, -3.8, 3.2)}
    say = Say(lang)
    stage = SimpleNamespace(say=say, theme=DARK, region=lambda name: regions[name])
    grid, titles = new_grid(stage, data, tokens, "video", region=regions["grid"], tag=True)
    lines = list(titles.head_tag)
    head = say("common.head.layer_head", layer=0, head=0)
    role = say.role("adjective_noun", 0, 0)
    assert 2 <= len(lines) <= 3 and lines[0].original_text == head  # the head on one line
    assert " ".join(t.original_text for t in lines[1:]) == role
    assert min(t.font_size for t in lines) >= TAG_MIN_FS - 0.01
    # a line over every column label may reach past the corner (review 52: pt's four lines in attention_formula),
    # short of the grid's middle and of the axis title beside it; one under them keeps to the corner
    labels_top = grid.col_labels.get_top()[1]
    for t in lines:
        if t.get_bottom()[1] < labels_top + 0.1:
            assert t.get_right()[0] < grid.lines.get_left()[0]
        assert t.get_right()[0] <= grid.lines.get_x() + 1e-6
        for title in titles[:2]:
            if title.get_bottom()[1] - 0.1 < t.get_top()[1] and t.get_bottom()[1] < title.get_top()[1] + 0.1:
                assert t.get_right()[0] <= title.get_left()[0] - 0.3 + 1e-6
    # ... and clear of what else stands over the grid (attention_formula's formula)
    from manim import Rectangle

    formula = Rectangle(width=9.0, height=1.0).move_to([0.5, 3.3, 0])
    _, titled = new_grid(stage, data, tokens, "video", region=regions["grid"], tag=True, tag_avoid=[formula])
    for t in titled.head_tag:
        if formula.get_bottom()[1] - 0.1 < t.get_top()[1]:
            assert t.get_right()[0] <= formula.get_left()[0] - 0.3 + 1e-6
