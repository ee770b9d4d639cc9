"""The reusable visual pieces: built from a real trace, checked the way a viewer would check them.

Numbers shown must equal the trace's arrays at the stated rounding; colours must follow sign and
magnitude; arrows must sit at the real projections; nothing may leave the frame; Korean and
Portuguese labels must render with real glyphs. Renders are tiny (192×108) to stay fast.
"""

from __future__ import annotations

import numpy as np
import pytest
from manim import DEGREES, UP, ManimColor, MovingCameraScene, ThreeDScene, config

from attention_manim.scenes.components.bars import ProbabilityBars, round_ticks, softmax
from attention_manim.scenes.components.bubble import SpeechBubble
from attention_manim.scenes.components.formula import PARTS, AttentionFormula
from attention_manim.scenes.components.matrices import MatVecProduct, WeightMatrix, signed_color
from attention_manim.scenes.components.space3d import EmbeddingSpace, choose_axes
from attention_manim.scenes.components.text import label, parse_shown, text_baseline
from attention_manim.scenes.components.vectors import VectorColumn, shade_grey, symbol_source
from attention_manim.scenes.components.word_boxes import WordBoxes
from attention_manim.scenes.style import DARK, LIGHT, fmt_vec, fmt_weight

from .conftest import numbers_in

SENTENCE = "a fluffy blue creature roamed the verdant forest"


# --- helpers -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def trace(tracer):
    return tracer(SENTENCE)


@pytest.fixture(scope="module")
def head(trace):
    return trace.head(0, 0)


def luminance(color) -> float:
    r, g, b = ManimColor(color).to_rgb()
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def fill_hex(mob) -> str:
    """The fill colour a viewer sees for a Text/number (its glyphs share one colour)."""
    glyphs = [m for m in mob.family_members_with_points()]
    return ManimColor(glyphs[0].get_fill_color()).to_hex().upper()


def all_points(mob) -> np.ndarray:
    pts = [m.points for m in mob.family_members_with_points()]
    return np.concatenate(pts) if pts else np.zeros((0, 3))


def assert_inside_frame(*mobs, margin: float = 0.0):
    half_w, half_h = config.frame_width / 2 - margin, config.frame_height / 2 - margin
    for mob in mobs:
        p = all_points(mob)
        assert len(p), f"{mob} draws nothing"
        assert np.abs(p[:, 0]).max() <= half_w + 1e-6, f"{mob} leaves the frame horizontally"
        assert np.abs(p[:, 1]).max() <= half_h + 1e-6, f"{mob} leaves the frame vertically"


class TraceScene(MovingCameraScene):
    """A bare scene for component tests: takes (and ignores) the inputs a lesson scene takes."""

    def __init__(self, inputs=None, **kwargs):
        super().__init__(**kwargs)


class TraceScene3D(ThreeDScene):
    def __init__(self, inputs=None, **kwargs):
        super().__init__(**kwargs)


def scene_of(build):
    """A bare scene whose construct adds what `build(scene)` returns (kept as scene.built)."""

    class ComponentScene(TraceScene):
        def construct(self):
            self.built = build(self)
            for m in self.built if isinstance(self.built, (list, tuple)) else [self.built]:
                self.add(m)

    return ComponentScene


def assert_frame_edges_empty(frame: np.ndarray, background=(0, 0, 0)):
    """Nothing is cut off at the border: the outermost pixel ring is background."""
    rgb = frame[..., :3].astype(int)
    ring = np.concatenate([rgb[0], rgb[-1], rgb[:, 0], rgb[:, -1]])
    assert np.abs(ring - np.array(background)).max() <= 8, "something touches the frame's edge"


def drawn_fraction(frame: np.ndarray, background=(0, 0, 0)) -> float:
    rgb = frame[..., :3].astype(int)
    return float((np.abs(rgb - np.array(background)).max(axis=-1) > 30).mean())


# --- word boxes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("top, past_top, ticks, decimals", [
    (444.0, False, [0, 100, 200, 300, 400], 0),   # under the tallest bar
    (444.0, True, [0, 100, 200, 300, 400, 500], 0),  # the axis ends on the next round value ("444" read as stray)
    (1.51, False, [0, 0.5, 1.0, 1.5], 1),
    (1.51, True, [0, 0.5, 1.0, 1.5, 2.0], 1),
    (0.07, False, [0, 0.02, 0.04, 0.06], 2),
    (3.0, True, [0, 1, 2, 3], 0),  # a top on a round value is its own last tick
])
def test_round_ticks_pick_one_two_five_steps(top, past_top, ticks, decimals):
    values, digits = round_ticks(top, past_top=past_top)
    assert values == pytest.approx(ticks) and digits == decimals
    assert len(round_ticks(97.0, most=4)[0]) <= 4


def test_word_boxes_follow_the_tokens_in_order(trace):
    boxes = WordBoxes(trace.tokens)
    assert len(boxes) == trace.n_tokens
    assert [b.token for b in boxes] == list(trace.tokens)
    assert [b.word.text for b in boxes] == list(trace.tokens)
    lefts = [boxes.box(i).get_left()[0] for i in range(len(boxes))]
    rights = [boxes.box(i).get_right()[0] for i in range(len(boxes))]
    assert all(r < l2 for r, l2 in zip(rights, lefts[1:])), "boxes overlap or are out of order"
    for i in range(len(boxes)):  # each word inside its own box
        w, b = boxes.word(i), boxes.box(i)
        assert b.get_left()[0] < w.get_left()[0] and w.get_right()[0] < b.get_right()[0]
        assert b.get_bottom()[1] < w.get_bottom()[1] and w.get_top()[1] < b.get_top()[1]
    heights = {round(boxes.box(i).height, 6) for i in range(len(boxes))}
    assert len(heights) == 1, "boxes should share one height"


def test_word_boxes_sit_on_one_baseline():
    boxes = WordBoxes(["a", "creature", "fox", "saw"])
    # letters without descenders end on the baseline: a, c/r/e/a/t/u/r/e, o/x, s/a/w
    bottoms = [g.get_bottom()[1] for i in range(4) for g in boxes.word(i).submobjects]
    assert max(bottoms) - min(bottoms) < 0.02


def test_word_boxes_highlight_dim_recolor(trace):
    boxes = WordBoxes(trace.tokens)
    before = [ManimColor(boxes.box(i).get_stroke_color()).to_hex() for i in range(len(boxes))]
    boxes.highlight(3, DARK.query).dim_others(3)
    assert ManimColor(boxes.box(3).get_stroke_color()).to_hex().upper() == DARK.query
    assert boxes.word(3).get_fill_opacity() == pytest.approx(1)
    for i in (0, 1, 2, 4):
        assert ManimColor(boxes.box(i).get_stroke_color()).to_hex() == before[i]
        assert boxes.word(i).get_fill_opacity() < 0.5
    boxes.recolor(1, DARK.key, word=True)
    assert fill_hex(boxes.word(1)) == DARK.key
    boxes.reset()
    assert [ManimColor(boxes.box(i).get_stroke_color()).to_hex() for i in range(len(boxes))] == before
    assert all(boxes.word(i).get_fill_opacity() == pytest.approx(1) for i in range(len(boxes)))


@pytest.mark.parametrize("word", ["어텐션", "atenção", "ação", "주의"])
def test_korean_and_portuguese_labels_have_real_glyphs(word):
    # a missing glyph is drawn as a hex box: many extra submobjects (manim-notes); real glyphs give
    # one submobject per character (these words have no ligatures)
    from scenes.components.coverage import drawable

    assert drawable(word) == word  # every character has a font: none became the placeholder
    boxes = WordBoxes([word, "x"])
    glyphs = boxes.word(0).submobjects
    assert len(glyphs) == len(word.replace(" ", ""))
    for g in glyphs:  # each glyph is a filled outline of ordinary size
        assert g.has_points() and 0.05 < g.height < 0.6


def test_tofu_would_be_detected():
    # the check above must be able to fail: a code point no installed font covers becomes the
    # placeholder square (not Pango's hex box), one per missing character
    from scenes.components.coverage import PLACEHOLDER, drawable

    assert drawable("\ue000a\ue001") == f"{PLACEHOLDER}a{PLACEHOLDER}"  # private use: no font has them
    tofu = label("\ue000\ue001", font_size=32)
    assert len(tofu.submobjects) == 2 and tofu.height > 0.1


# --- vectors ------------------------------------------------------------------------------------


def test_vector_shows_real_entries_first_and_last(trace):
    E = trace.embeddings[3]
    col = VectorColumn(E, head=4, tail=1, brace=True, symbol=symbol_source("E", 4))
    shown = [i for i in col.shown_indices if i is not None]
    assert shown == [0, 1, 2, 3, len(E) - 1]
    assert col.shown_indices.count(None) == 1 and len(col.dots) == 1
    nums = numbers_in(col)
    assert [n.index for n in nums] == shown
    for n in nums:
        assert n.value == pytest.approx(float(E[n.index]))
        assert n.shown == fmt_vec(E[n.index])
        assert parse_shown(n.shown) == pytest.approx(round(float(E[n.index]), 1), abs=1e-9)
        assert n.text == n.shown  # what is drawn is the formatted string
    assert col.brace_label.text == str(len(E))  # the real length; any words come from the caller
    assert col.entry(-1).value == pytest.approx(float(E[-1]))
    with pytest.raises(IndexError):
        col.entry(10)


def test_vector_rows_stack_downward_in_order(trace):
    col = VectorColumn(trace.embeddings[0])
    ys = [r.get_center()[1] for r in col.rows]
    assert all(a > b for a, b in zip(ys, ys[1:]))
    rights = [n.get_right()[0] for n in col.entries]
    assert max(rights) - min(rights) < 1e-6  # right-aligned


@pytest.mark.parametrize("theme", [DARK, LIGHT])
def test_vector_shading_is_monotone_in_magnitude(trace, theme):
    E = trace.embeddings[3]
    col = VectorColumn(E, head=12, tail=3, theme=theme)
    nums = sorted(numbers_in(col), key=lambda n: abs(n.value))
    contrast = [abs(luminance(fill_hex(n)) - luminance(theme.background)) for n in nums]
    assert all(a <= b + 1e-9 for a, b in zip(contrast, contrast[1:])), "larger |x| must be brighter"
    assert contrast[-1] > contrast[0] + 0.2
    # greys: no hue
    for n in nums:
        r, g, b = ManimColor(fill_hex(n)).to_rgb()
        assert max(r, g, b) - min(r, g, b) < 0.02
    # the largest entry of the whole vector is full text colour
    assert shade_grey(np.abs(E).max(), np.abs(E).max(), theme).upper() == ManimColor(theme.text).to_hex().upper()


def test_short_vector_shows_everything(head):
    v = head.q[2][:5]
    col = VectorColumn(v, head=4, tail=1)
    assert col.shown_indices == [0, 1, 2, 3, 4] and len(col.dots) == 0


def test_vector_collapse_and_expand_run(trace, render_scene):
    def build(scene):
        col = VectorColumn(trace.embeddings[1], symbol=symbol_source("E", 2), show_symbol=True)
        scene.add(col)
        scene.play(col.collapse(run_time=0.2))
        assert col.collapsed_symbol in scene.mobjects
        scene.play(col.expand(run_time=0.2))
        return col

    scene, frame = render_scene(scene_of(build), None, png=True)
    col = scene.built
    assert not col.collapsed
    assert col.collapsed_symbol not in scene.mobjects
    assert drawn_fraction(frame) > 0.005
    assert_frame_edges_empty(frame)


# --- weight matrices and the product ------------------------------------------------------------


def test_weight_matrix_shows_the_transposed_trace_weights(head):
    W = WeightMatrix.from_trace(head.W_Q, name="W_Q")
    d_model, d_head = head.W_Q.shape
    assert W.values.shape == (d_head, d_model)  # drawn as the video does: d_head rows × d_model columns
    assert [i for i in W.shown_rows if i is not None] == [0, 1, 2, 3, 4, d_head - 1]
    assert [j for j in W.shown_cols if j is not None] == [0, 1, 2, 3, 4, d_model - 1]
    assert len(W.cells) == 36
    for (i, j), m in W.cells.items():
        assert m.value == pytest.approx(float(head.W_Q[j, i]))
        assert m.shown == fmt_vec(head.W_Q[j, i])
    # ⋮ in each shown column, ⋯ in each shown row, one ⋱
    assert len(W.dots) == 6 + 6 + 1


@pytest.mark.parametrize("theme", [DARK, LIGHT])
def test_weight_colours_follow_sign_and_magnitude(head, theme):
    W = WeightMatrix.from_trace(head.W_K, theme=theme)
    pos_hue = np.array(ManimColor(theme.positive).to_rgb())
    neg_hue = np.array(ManimColor(theme.negative).to_rgb())
    by_sign = {True: [], False: []}
    for m in W.cells.values():
        rgb = np.array(ManimColor(fill_hex(m)).to_rgb())
        if m.shown == "0.0":  # written without a sign: the neutral dim colour, neither red nor blue
            assert fill_hex(m).lower() == ManimColor(theme.dim).to_hex().lower()
            continue
        # closer in hue to its own sign's colour than to the other's
        own, other = (pos_hue, neg_hue) if m.value >= 0 else (neg_hue, pos_hue)
        cos = lambda a, b: a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-12)  # noqa: E731
        bg = np.array(ManimColor(theme.background).to_rgb())
        assert cos(rgb - bg, own - bg) > cos(rgb - bg, other - bg)
        by_sign[m.value >= 0].append((abs(m.value), abs(luminance(fill_hex(m)) - luminance(theme.background))))
    for entries in by_sign.values():
        entries.sort()
        c = [e[1] for e in entries]
        assert all(a <= b + 1e-9 for a, b in zip(c, c[1:])), "larger |w| must stand out more"
    assert signed_color(0.5, 1.0, theme) != signed_color(-0.5, 1.0, theme)


def test_matvec_result_is_the_real_product(trace, head):
    i = 3
    x = trace.layers[0].attn_in[i]
    W = WeightMatrix.from_trace(head.W_Q, name="W_Q")
    vec = VectorColumn(x, head=W.col_head, tail=W.col_tail)
    prod = MatVecProduct(W, vec, result_symbol=symbol_source("Q", i + 1))
    expected = x.astype(np.float64) @ head.W_Q.astype(np.float64)
    np.testing.assert_allclose(prod.product, expected, rtol=1e-6, atol=1e-6)
    # and it is the head's real query (the trace adds the bias after the product)
    np.testing.assert_allclose(prod.product + head.b_Q, head.q[i], rtol=1e-4, atol=1e-4)
    for n in numbers_in(prod.result):
        assert n.value == pytest.approx(expected[n.index], abs=1e-6)
        assert n.shown == fmt_vec(expected[n.index])
    with pytest.raises(ValueError):  # windows must line up
        MatVecProduct(WeightMatrix.from_trace(head.W_Q), VectorColumn(x, head=3, tail=1))


def test_matvec_sweep_counts_up_to_the_real_values(trace, head, render_scene):
    x = trace.layers[0].attn_in[3]

    def build(scene):
        W = WeightMatrix.from_trace(head.W_Q, name="W_Q", font_size=16)
        prod = MatVecProduct(W, VectorColumn(x, head=W.col_head, tail=W.col_tail, font_size=16,
                                             symbol="sum_j w_j arrow(V)_j", show_symbol=True))
        prod.move_to([0, 0, 0])
        assert all(m.get_fill_opacity() == 0 for m in prod.result.entries)  # hidden before the sweep
        scene.add(prod)
        first = prod.shown_rows()[0]
        scene.play(prod.sweep(rows=[first], run_time_per_row=0.4, fade_boxes=False))
        # mid-sweep: the row, the vector and the entry being made are boxed; later entries still hidden
        entry = prod.result.entry(first)
        assert prod.out_box.get_y() == pytest.approx(entry.get_y(), abs=0.01)
        assert prod.out_box.get_x() == pytest.approx(prod.result.brackets.get_x(), abs=1e-3)
        assert prod.out_box.width > prod.result.brackets.width + 0.1  # its sides outside the brackets
        assert prod.out_box.height < prod.matrix.row_height  # its edges run between rows
        assert prod.row_box.get_y() == pytest.approx(entry.get_y(), abs=0.01)
        # the row's box spans the matrix, its sides clear outside both brackets (review 50: inside, they read as on
        # the brackets)
        left, right = prod.matrix.brackets
        assert prod.row_box.get_left()[0] < left.get_left()[0] - 0.05
        assert prod.row_box.get_right()[0] > right.get_right()[0] + 0.05
        # and the vector's box around its brackets, clear of them on every side (review 49: on E⃗₄'s brackets)
        b = prod.vector.brackets
        assert prod.vec_box.get_left()[0] < b.get_left()[0] - 0.05 and prod.vec_box.get_right()[0] > b.get_right()[0] + 0.05
        assert prod.vec_box.get_top()[1] > b.get_top()[1] + 0.05 and prod.vec_box.get_bottom()[1] < b.get_bottom()[1] - 0.05
        # ... and the vector's name over it clear of that box (review 51: Σⱼ's j on the box's top line)
        assert prod.vector.symbol.get_bottom()[1] > prod.vec_box.get_top()[1] + 0.19
        later = [prod.result.entry(i) for i in prod.shown_rows()[1:]]
        assert later and all(m.get_fill_opacity() == 0 for m in later)
        scene.play(prod.sweep(rows=prod.shown_rows()[1:2], run_time_per_row=0.4))
        return prod

    scene, frame = render_scene(scene_of(build), None, png=False)
    prod = scene.built
    for m in prod.result.entries:  # every shown entry visible, showing its real value
        assert m.get_fill_opacity() == pytest.approx(1)
        assert m.text == m.shown == fmt_vec(prod.product[m.index])
    assert_inside_frame(prod)


# --- speech bubble ------------------------------------------------------------------------------


def test_a_bubble_is_one_outline_whatever_side_its_tail_leaves():
    """Review 49 (key's answers): the tail, wound against the box, stayed a contour of its own and its base was
    drawn across the box ("[<|"). The box and tail are one outline for every direction, and for a box placed
    with `at`."""
    from manim import DOWN, LEFT, RIGHT, UP, Square

    for d in (RIGHT, LEFT, UP, DOWN, UP + RIGHT, DOWN + LEFT, UP + LEFT, DOWN + RIGHT):
        b = SpeechBubble("Me! An adjective.", target=Square(0.5), direction=d, font_size=19, pad=0.13, tail_length=0.4)
        assert len(b.outline.get_subpaths()) == 1, d
        # the tail still reaches its tip
        assert min(np.linalg.norm(p - b.tip) for p in b.outline.points) < 1e-6
    placed = SpeechBubble("Me!", target=np.zeros(3), at=np.array([2.0, 1.0, 0.0]), font_size=19)
    assert len(placed.outline.get_subpaths()) == 1


def test_bubble_points_at_its_target(trace):
    boxes = WordBoxes(trace.tokens).shift(np.array([0, -1.0, 0]))
    target = boxes.box(3)
    b = SpeechBubble("Any adjectives in front of me?", target=target)
    assert b.message == "Any adjectives in front of me?"
    assert b.text.text == b.message.replace(" ", "")  # manim's Text keeps the glyphs, not the spaces
    # the tail's tip touches the box's top, the bubble sits above it
    assert np.linalg.norm(b.tip - (target.get_top() + np.array([0, 0.08, 0]))) < 1e-6
    outline_pts = all_points(b.outline)
    assert np.min(np.linalg.norm(outline_pts - b.tip, axis=1)) < 0.02, "no outline point at the tip"
    assert b.text.get_bottom()[1] > target.get_top()[1]
    # text inside the outline
    assert b.outline.get_left()[0] < b.text.get_left()[0] < b.text.get_right()[0] < b.outline.get_right()[0]
    below = SpeechBubble("I'm here", target=target, direction=np.array([0, -1.0, 0]))
    assert below.text.get_top()[1] < target.get_bottom()[1]


# --- formula ------------------------------------------------------------------------------------


def test_formula_parts_are_addressable_and_coloured():
    f = AttentionFormula("video", theme=DARK)
    for p in PARTS:
        assert len(f.part(p)) > 0, p
    assert len(f.part("Q")) == 2 and len(f.part("K")) == 2 and len(f.part("V")) == 2
    assert len(f.part("Q_lhs")) == 1 and len(f.part("Q_rhs")) == 1
    for name, color in (("Q", DARK.query), ("K", DARK.key), ("V", DARK.value), ("KT", DARK.key)):
        for g in f.part(name):
            assert ManimColor(g.get_fill_color()).to_hex().upper() == color
    assert ManimColor(f.part("softmax")[0].get_fill_color()).to_hex().upper() == DARK.text
    with pytest.raises(KeyError):
        f.part("nope")


def test_formula_orientations():
    video = AttentionFormula("video")
    paper = AttentionFormula("paper")
    # video: Kᵀ then Q in the numerator; paper: Q then Kᵀ
    assert video.part("KT").get_x() < video.part("Q_rhs").get_x()
    assert paper.part("Q_rhs").get_x() < paper.part("KT").get_x()
    # numerator above √d_k
    assert video.part("scores").get_y() > video.part("sqrt").get_y()
    with pytest.raises(ValueError):
        AttentionFormula("other")


# --- bars ---------------------------------------------------------------------------------------


def test_bars_show_real_probabilities_proportionally(trace):
    pos = 3
    bars = ProbabilityBars.from_logits(trace.logits[pos], trace.vocab, top_k=6)
    p = softmax(trace.logits[pos])
    assert p.sum() == pytest.approx(1.0)
    order = np.argsort(-p, kind="stable")[:6]
    assert bars.token_ids == list(order)
    assert [w.text for w in bars.words] == [trace.vocab[k] for k in order]
    np.testing.assert_allclose(bars.probs, p[order])
    for k, v in enumerate(numbers_in(bars)):
        assert v.value == pytest.approx(p[order][k])
        assert v.shown == fmt_weight(p[order][k])
    widths = np.array([bars.bar_length(k) for k in range(len(order))])
    big = bars.probs > 0.01  # tiny bars are clamped to a hairline
    np.testing.assert_allclose(widths[big], bars.probs[big] * bars.unit, rtol=1e-6)
    assert all(a >= b for a, b in zip(widths, widths[1:]))


def test_bars_proportional_for_given_values():
    bars = ProbabilityBars(["x", "y", "z"], [0.5, 0.25, 0.125], max_length=4)
    w = [bars.bar_length(k) for k in range(3)]
    assert w[0] == pytest.approx(4) and w[1] == pytest.approx(2) and w[2] == pytest.approx(1)


# --- 3-D embedding space -----------------------------------------------------------------------


def test_space_axes_use_named_directions(trace):
    names, basis, named = choose_axes(trace)
    known = list(trace.directions)
    assert names[: min(3, len(known))] == known[:3]
    assert named == [True] * min(3, len(known)) + [False] * (3 - min(3, len(known)))
    np.testing.assert_allclose(np.linalg.norm(basis, axis=0), 1.0, atol=1e-5)
    with pytest.raises(KeyError):
        choose_axes(trace, ["noun", "adjective", "no-such-direction"])


def _space_scene(trace, phi_rot=0.0):
    i = 3
    E, E2 = trace.embeddings[i], trace.updated(0, 0)[i]

    def build(scene):
        space = EmbeddingSpace(trace, fit_to=[E, E2])
        space.arrow(E, DARK.embedding, symbol_source("E", 4), name="E")
        space.arrow(E2, DARK.updated, symbol_source("E", 4, prime=True), name="E2")
        space.difference_arrow(E, E2, DARK.delta, symbol_source("E", 4, delta=True), name="dE")
        space.add_to(scene)
        if phi_rot:
            scene.play(space.rotation(phi_rot, run_time=0.4))
        return space

    return scene_of(build), E, E2


@pytest.mark.parametrize("turn", [0.0, 40 * DEGREES])
def test_space_arrows_sit_at_real_projections(trace, render_scene, turn):
    cls, E, E2 = _space_scene(trace, turn)
    scene, frame = render_scene(cls, None, png=True)
    space = scene.built
    named = [n for n, f in zip(space.names, space.named) if f]
    e, e2, d = space.arrows["E"], space.arrows["E2"], space.arrows["dE"]
    for arrow, vec in ((e, E), (e2, E2)):
        got = space.to_coords(arrow.end_point())
        np.testing.assert_allclose(got, space.coords(vec), rtol=1e-5, atol=1e-5)
        if named:  # the named axes are exactly trace.project
            np.testing.assert_allclose(got[: len(named)], trace.project(vec, named), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(space.to_coords(arrow.start_point()), 0, atol=1e-6)
    # the ΔE arrow runs tip to tip and is the real head's ΔE
    np.testing.assert_allclose(space.to_coords(d.start_point()), space.coords(E), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(space.to_coords(d.end_point()), space.coords(E2), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(space.to_coords(d.end_point()) - space.to_coords(d.start_point()),
                               space.coords(trace.head(0, 0).delta_e[3]), rtol=1e-4, atol=1e-4)
    # the scale keeps everything on screen: longest fitted arrow = extent
    longest = max(np.linalg.norm(space.coords(E)), np.linalg.norm(space.coords(E2))) * space.unit
    assert longest == pytest.approx(space.extent)
    assert_inside_frame(space, space.labels)
    assert_frame_edges_empty(frame)
    assert drawn_fraction(frame) > 0.005


def test_space_in_a_three_d_scene_uses_the_camera(trace, render_scene):
    i = 3
    E, E2 = trace.embeddings[i], trace.updated(0, 0)[i]

    class Space3D(TraceScene3D):
        def construct(self):
            space = EmbeddingSpace(trace, fit_to=[E, E2])
            space.arrow(E2, DARK.updated, symbol_source("E", 4, prime=True), name="E2")
            space.add_to(self)
            theta0 = self.camera.get_theta()
            self.play(space.rotation(30 * DEGREES, scene=self, run_time=0.4))
            self.turned = self.camera.get_theta() - theta0
            self.built = space

    scene, frame = render_scene(Space3D, None, png=False)
    space = scene.built
    assert not space.projected  # model coordinates; the camera does the viewing
    assert scene.turned == pytest.approx(30 * DEGREES)
    end = space.arrows["E2"].end_point()
    np.testing.assert_allclose(end, space.coords(E2) * space.unit, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(space.to_coords(end), space.coords(E2), rtol=1e-5, atol=1e-5)
    assert all(lab in scene.camera.fixed_orientation_mobjects for lab in space.labels)


def test_space_with_three_named_directions_projects_exactly(trace):
    if len(trace.directions) < 3:
        pytest.skip("this model has fewer than three named directions")
    names = list(trace.directions)[:3]
    E = trace.embeddings[2]
    space = EmbeddingSpace(trace, names, fit_to=[E])
    a = space.arrow(E, text=None)
    np.testing.assert_allclose(space.to_coords(a.end_point()), trace.project(E, names), rtol=1e-5, atol=1e-5)


def test_a_faded_out_label_leaves_its_place_to_the_others(trace):
    """A label faded out (FadeOut leaves it whole, only off the scene) held its place in the space for
    good, and so did the label of an arrow not grown yet: the labels placed after it kept out of an empty
    spot and crowded (review 37: mole's closing turn, "E′ (shrew)" a long line away from its tip)."""
    E = trace.embeddings[2]
    alone = EmbeddingSpace(trace, fit_to=[E])  # where the second label goes with no other arrow at all
    only = alone.arrow(E, DARK.updated, "B", typst=False, name="second")
    only.label.update()
    spot = only.label.get_center()
    space = EmbeddingSpace(trace, fit_to=[E])
    first = space.arrow(E, DARK.embedding, "A", typst=False, name="first", attach=False)  # not grown yet
    second = space.arrow(E, DARK.updated, "B", typst=False, name="second")
    second.label.update()
    np.testing.assert_allclose(second.label.get_center(), spot, atol=0.03)  # the same place: the first holds none
    space.grow_arrow(first)
    second.label.update()
    assert np.linalg.norm(second.label.get_center() - spot) > 0.1  # shown, it holds its place (the second moves)
    space.fade_out_label(first)  # faded out, it holds no place again (the same test as before it grew)
    assert first.label.gone and not second.label.gone


# --- the gallery --------------------------------------------------------------------------------


def test_gallery_plan_reads_the_trace(make_inputs, tracer, toy_model):
    from attention_manim.scenes.registry import load_all

    from .conftest import expected_focus

    lesson = load_all()["components"].lesson
    plans = lesson.plans(lesson.setting(make_inputs()))
    assert len(plans) == len(lesson.chapters) == 7
    plan = plans[0]
    tr = tracer(toy_model.info.examples["fluffy_blue_creature"])
    head = tr.head(*toy_model.info.roles["adjective_noun"])
    i = expected_focus(tr, None, head)
    assert plan.focus == i and plan.head_trace is head and tr.tokens[i] == "creature"
    E, E2 = tr.embeddings[i], tr.updated(0, head.head)[i]
    # the axes: the three named directions E and E′ reach furthest along (in the model's order)
    names = list(tr.directions)
    reach = np.abs(tr.project(np.array([E, E2]), names)).sum(axis=0)
    assert list(plan.axes) == [names[k] for k in sorted(np.argsort(-reach)[:3])]
    assert np.allclose(plan.coords, tr.project(np.array([E, E2 - E, E2]), list(plan.axes)), atol=1e-5)
    p = softmax(tr.logits[i])
    assert [w for w, _ in plan.next_words] == [tr.vocab[k] for k in np.argsort(-p)[:6]]
    assert [q for _, q in plan.next_words] == pytest.approx(list(np.sort(p)[::-1][:6]))


def test_gallery_is_registered_and_runs_with_captions(make_inputs, tracer, render_scene, toy_model):
    from attention_manim.scenes.registry import load_all

    cls = load_all()["components"]
    assert cls.description
    seen_outside = []

    class Checked(cls):
        def play(self, *anims, **kw):
            super().play(*anims, **kw)
            for m in self.mobjects:
                if m.family_members_with_points():
                    p = all_points(m)
                    if np.abs(p[:, 0]).max() > config.frame_width / 2 or np.abs(p[:, 1]).max() > config.frame_height / 2:
                        seen_outside.append(m)

    scene, frame = render_scene(Checked, make_inputs(), png=True)
    assert len(scene.caption_log) >= 6
    assert not seen_outside, f"drawn outside the frame: {seen_outside[:3]}"
    assert scene.chapters_played == [c.key for c in cls.lesson.chapters]
    # the space's arrows sit at the real projections, the bars show the real probabilities
    plan = scene.plans[0]
    drawn = scene.stage.drawn
    space = drawn["gallery_space"]["space"]
    E, dE, E2 = plan.coords
    for name, start, end in (("E", 0 * E, E), ("dE", E, E2), ("E2", 0 * E, E2)):
        arrow = drawn["gallery_space"][name]
        assert np.allclose(space.to_coords(arrow.start_point()), start, atol=1e-6)
        assert np.allclose(space.to_coords(arrow.end_point()), end, atol=1e-6)
    # the bubble asks the question of this head's own role (a real head's would be the neutral one)
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.qkv import line_keys

    assert drawn["gallery_words"]["bubble"].message == Say("en")(line_keys(plan.head_trace.role)[0])
    # the toy's arrows lie well off the axis the view turns about: the turn shows all three coordinates, and it
    # starts from the view that keeps them furthest apart (review 37: ΔE⃗₄ all but along E⃗′₄)
    assert Say("en")("gallery.space.caption_turn") in [c for c, _ in scene.caption_log]
    g = drawn["gallery_space"]
    assert min(space.drawn_angle(g[a], g[b]) for a, b in (("E", "dE"), ("E", "E2"), ("dE", "E2"))) > 30
    tr = tracer(toy_model.info.examples["fluffy_blue_creature"])
    p = softmax(tr.logits[plan.focus])
    assert [n.value for n in drawn["gallery_bars"]["bars"].values] == pytest.approx(list(np.sort(p)[::-1][:6]))
    # named over it, and as large as the frame allows (review 51: small and untitled; half the frame empty)
    bars, heading = drawn["gallery_bars"]["bars"], drawn["gallery_bars"]["heading"]
    assert heading.original_text == Say("en")("gallery.bars.heading") and heading.get_bottom()[1] > bars.get_top()[1]
    assert bars.width > 0.5 * 14.22 or bars.height > 0.4 * 8.0


def test_angle_view_draws_a_short_vector_long_enough_with_its_labels_clear():
    """A key far shorter than the query (SmolLM2's first token: a ~30 px stub with no head) is drawn
    at min_share of the longest arrow, in its real direction, and the note says lengths are not to
    scale; every label keeps label_gap clear of every cosine (which the key lesson boxes 0.06 out)."""
    from attention_manim.scenes.components.angle_view import AngleView, _boxes_meet

    q = np.array([10.0, 0.0, 0.0, 0.0])
    k1 = 0.12 * np.array([0.24, np.sqrt(1 - 0.24 ** 2), 0.0, 0.0])  # cos +0.24, 1/80 of |q|
    k3 = np.array([-0.02, 0.0, 0.0, -np.sqrt(1 - 0.02 ** 2)]) * 9.0
    view = AngleView(q, [(k1, "#00ff00", "arrow(K)_1"), (k3, "#888888", "arrow(K)_3")], ref_label="arrow(Q)_4",
                     extent=2.3, font_size=22, note="angles real", number_scale=1.1, min_share=0.45,
                     length_note="lengths not to scale", label_gap=0.18)
    assert view.stretched == [0]
    a = view.arrows[0].get_end() - view.arrows[0].get_start()
    assert np.linalg.norm(a) == pytest.approx(0.45 * 2.3, abs=1e-6)
    assert np.arccos(a[0] / np.linalg.norm(a)) == pytest.approx(np.arccos(0.24), abs=1e-6)  # direction real
    assert view.arrows[0].get_tip().height * 90 > 8  # a visible head
    k3d = view.arrows[1].get_end() - view.arrows[1].get_start()
    assert np.linalg.norm(k3d) == pytest.approx(0.9 * 2.3, abs=1e-6)  # to scale where long enough
    for lab in [view.ref_label, *view.labels]:
        for arc in view.arcs:
            assert not _boxes_meet(lab, arc[1], 0.15)
    from attention_manim.scenes.components.angle_view import _segment_meets

    for arc in view.arcs:  # nor does a cosine's box (0.06 out) touch an arrow
        assert not any(_segment_meets(arc[1], a.get_start(), a.get_end(), 0.15) for a in [view.ref_arrow, *view.arrows])
    assert len(view.note) == 2 and view.note[1].text.replace(" ", "") == "lengthsnottoscale"
    plain = AngleView(q, [(k3, "#888888", "arrow(K)_3")], extent=2.3, note="angles real", min_share=0.45,
                      length_note="lengths not to scale")
    assert plain.stretched == [] and plain.note.text.replace(" ", "") == "anglesreal"


def test_angle_view_draws_two_keys_on_the_side_nearest_their_real_angle():
    """Two keys at 69° and 108° to the query, 39° apart in the full space, go on the same side (the
    key lesson drew them 177° apart, one above and one below); two that are 177° apart go on opposite
    sides."""
    from attention_manim.scenes.components.angle_view import AngleView

    def unit(deg, lift=0.0):
        r = np.radians(deg)
        return np.array([np.cos(r), np.sin(r) * np.sqrt(1 - lift ** 2), np.sin(r) * lift, 0.0])

    q = np.array([1.0, 0.0, 0.0, 0.0])
    near = AngleView(q, [(unit(69), "#00ff00", "arrow(K)_3"), (unit(108), "#888888", "arrow(K)_1")])
    ends = [a.get_end() for a in near.arrows]
    assert near.sides == [1, 1] and ends[0][1] > 0 and ends[1][1] > 0
    drawn = np.degrees(np.arccos(ends[0] @ ends[1] / np.linalg.norm(ends[0]) / np.linalg.norm(ends[1])))
    assert drawn == pytest.approx(39, abs=0.5)
    # the second key's cosine sits past its own arrow, off the first key's arrow (its wedge holds it) and
    # off the first key's cosine, not on their bisector
    from attention_manim.scenes.components.angle_view import _boxes_meet, _segment_meets

    for arc in near.arcs:
        assert not any(_segment_meets(arc[1], a.get_start(), a.get_end(), 0.04)
                       for a in [near.ref_arrow, *near.arrows])
    assert not _boxes_meet(near.arcs[0][1], near.arcs[1][1]) and near.arcs[1][1].get_x() < ends[1][0]
    k1 = unit(108) * np.array([1, -1, 1, 1])  # the same angle to q, mirrored: 177° from the first key
    far = AngleView(q, [(unit(69), "#00ff00", "arrow(K)_3"), (k1, "#888888", "arrow(K)_1")])
    assert far.sides == [1, -1] and far.arrows[1].get_end()[1] < 0


def test_embedding_space_measures_the_angle_it_draws(trace):
    """drawn_angle is the angle on screen: two vectors along the first two axes, unprojected, 90°;
    projected by the 3-D view, no longer (the key lesson compares it with the real cosine)."""
    for projected in (False, True):
        space = EmbeddingSpace(trace, projected=projected)
        inv = np.linalg.pinv(space.basis)  # rows: vectors whose coordinates are (1,0,0), (0,1,0), ...
        a = space.arrow(inv[0], "#ffffff", attach=False)
        b = space.arrow(inv[1], "#ffffff", attach=False)
        if not projected:
            assert space.drawn_angle(a, b) == pytest.approx(90.0, abs=1e-6)
        else:
            assert abs(space.drawn_angle(a, b) - 90.0) > 1.0


def test_an_axis_name_keeps_off_the_tip_of_an_arrow_beside_its_end(trace):
    """eiffel_tower (review 36): an arrow reaching just past an axis's end put the axis's name beside
    its tip, where it read as the arrow's name. The name stays by its axis's end, nearer its axis than
    the arrow, and off the tip; the lint finds no label nearer another's point."""
    from attention_manim.scenes import review
    from attention_manim.scenes.components import space3d

    inv = np.linalg.pinv(EmbeddingSpace(trace).basis)  # rows: vectors whose coordinates are (1,0,0), ...
    v = 1.05 * inv[0] + 0.25 * inv[2]  # along axis 0 to about its end, a little towards axis 2
    space = EmbeddingSpace(trace, fit_to=[inv[0]])  # axis 0's end at 1.12 units of it: v's tip beyond
    a = space.arrow(v, "#FFFFFF", "E")
    space._place_labels()
    name, end = space.axis_labels[0], space._axis_ends[0]
    box = np.array([*name.get_corner([-1, -1, 0])[:2], *name.get_corner([1, 1, 0])[:2]])
    tip = a.end_point()[:2]
    # (where no spot by the end clears it fully, the least amiss: nearly POINT_ROOM; it sat at 0.1 before)
    assert review.box_distance(box[:2], box[2:], tip) >= 0.8 * space3d.POINT_ROOM
    assert review.box_distance(box[:2], box[2:], end.get_center()) < 0.8  # still by its end (not thrown afar)
    assert not review.labels_far_from_their_points([space, *space.labels])


def test_segment_crosses_finds_a_leader_across_another_arrow():
    """A label's line across another arrow's shaft named that arrow (review 37: ΔE⃗'s line across E′'s):
    placement tests each line against the other arrows' shafts."""
    from attention_manim.scenes.review import segment_crosses

    shafts = np.array([[[0.0, 0.0], [2.0, 2.0]], [[3.0, 0.0], [3.0, 1.0]]])
    assert segment_crosses([0.0, 2.0], [2.0, 0.0], shafts)  # an X with the first
    assert not segment_crosses([0.0, 2.0], [0.8, 1.5], shafts)  # stops before it
    assert not segment_crosses([1.0, 0.0], [2.0, 1.0], shafts)  # parallel beside it
    assert segment_crosses([2.5, 0.5], [3.5, 0.5], shafts)  # across the second
    assert not segment_crosses([0.0, 2.0], [2.0, 0.0], np.zeros((0, 2, 2)))


def test_a_difference_is_named_beside_its_shaft_where_its_middle_is_taken(trace):
    """mole and eiffel_tower (reviews 37, 38): with the spots by ΔE⃗'s middle taken, its name went out on a
    line to the middle, across the other arrows and the axes, or sat on its own tip. It now stands beside
    its own shaft further along it, its anchor moved there, with no line."""
    from manim import DL, UR, Dot

    from attention_manim.scenes.components.leader import LEADER_FROM
    from attention_manim.scenes.components.screen_boxes import _box, reads_as_one

    E, E2 = trace.embeddings[3], trace.embeddings[0]  # two vectors far apart on screen (the geometry is the test)
    space = EmbeddingSpace(trace, fit_to=[E, E2])
    space.arrow(E, DARK.embedding, symbol_source("E", 4), name="E")
    space.arrow(E2, DARK.updated, symbol_source("E", 4, prime=True), name="E2")
    s0, s1 = space.point(space.coords(E)), space.point(space.coords(E2))
    blocker = Dot((s0 + s1) / 2, radius=0.05)  # something beside the space, on the middle
    space.avoid.append(blocker)
    d = space.difference_arrow(E, E2, DARK.delta, symbol_source("E", 4, delta=True), name="dE")
    d.label.update()
    p = d._mid.get_center()
    t = float(np.dot(p - s0, s1 - s0) / np.dot(s1 - s0, s1 - s0))
    assert np.linalg.norm(s0 + t * (s1 - s0) - p) < 1e-6 and 0.25 <= t <= 0.75 and abs(t - 0.5) > 0.05
    lo, hi = d.label.get_corner(DL), d.label.get_corner(UR)
    assert np.linalg.norm(np.maximum(np.maximum(lo - p, p - hi), 0)[:2]) < LEADER_FROM  # near: no line
    centre, half = _box(d.label)
    assert not reads_as_one(centre, half, _box(blocker), loose=True)


def test_clip_segment_keeps_exactly_the_part_inside_the_box():
    """The inset draws each arrow's part inside its window: checked against points sampled on the segment."""
    from attention_manim.scenes.components.tip_inset import clip_segment

    rng = np.random.default_rng(7)
    lo, hi = np.array([-1.0, -0.5]), np.array([1.0, 0.5])
    for _ in range(200):
        p, q = (np.append(rng.uniform(-2.5, 2.5, 2), 0.0) for _ in range(2))
        ts = np.linspace(0, 1, 2001)
        pts = p[None, :2] + (q - p)[None, :2] * ts[:, None]
        inside = ts[np.all((pts >= lo) & (pts <= hi), axis=1)]
        part = clip_segment(p, q, lo, hi)
        if len(inside) == 0:
            assert part is None or np.linalg.norm(part[1] - part[0]) < 3e-3 * np.linalg.norm(q - p)
            continue
        a, b = part
        assert np.linalg.norm(a - (p + (q - p) * inside[0])) <= 1e-3 * np.linalg.norm(q - p) + 1e-9
        assert np.linalg.norm(b - (p + (q - p) * inside[-1])) <= 1e-3 * np.linalg.norm(q - p) + 1e-9


def test_a_tip_inset_enlarges_the_spot_by_a_round_factor_and_keeps_its_geometry(trace):
    """eiffel_tower on SmolLM2 (review 46): a head that barely moves "tower" left E⃗'s, ΔE⃗'s and E⃗′'s tips in one
    clump. The inset draws them enlarged: tips apart by the factor times their drawn distance, directions
    kept, the spot filling at most half the box, the factor one of the round ones, each name in the box."""
    from manim import ORIGIN, RIGHT, Line

    from attention_manim.scenes.components.tip_inset import ROUND_FACTORS, TipInset

    E = trace.embeddings[3]
    space = EmbeddingSpace(trace, fit_to=[E])
    inv = np.linalg.pinv(space.basis)
    E2 = E + 0.03 * inv[1] - 0.02 * inv[0]  # a move of a few hundredths: a few pixels on screen
    a = space.arrow(E, DARK.embedding, name="E")
    d = space.difference_arrow(E, E2, DARK.delta, name="dE")
    b = space.arrow(E2, DARK.updated, name="E2")
    names = {x: symbol_label for x, symbol_label in zip((a, d, b), (Line(ORIGIN, RIGHT * 0.3) for _ in range(3)))}
    at = np.array([4.0, -1.0, 0.0])
    inset = TipInset([a, d, b], (d.start_point(), d.end_point()), DARK, lambda k: f"×{k}", at=at, names=names)
    k = inset.factor
    assert k in ROUND_FACTORS and k >= 10
    spread = np.abs(d.end_point() - d.start_point())[:2].max()
    assert k * spread <= 1.0 / 1.1 + 1e-9  # the spot takes at most about half the box
    big = dict(zip(("E", "dE", "E2"), inset.arrows))
    assert all(m is not None for m in big.values())
    # ΔE⃗ whole, scaled by k, in its own direction, its start at E⃗'s tip and its end at E⃗′'s
    # (on screen: x and y; the inset is flat)
    assert np.allclose((big["dE"].end_point() - big["dE"].start_point())[:2], k * (d.end_point() - d.start_point())[:2],
                       atol=1e-6)
    assert np.allclose(big["E"].end_point()[:2], big["dE"].start_point()[:2], atol=1e-6)
    assert np.allclose(big["E2"].end_point()[:2], big["dE"].end_point()[:2], atol=1e-6)
    for m, orig in ((big["E"], a), (big["E2"], b)):  # the long ones, clipped to the window, same direction
        u = (m.end_point() - m.start_point())[:2]
        v = (orig.end_point() - orig.start_point())[:2]
        assert np.dot(u, v) / np.linalg.norm(u) / np.linalg.norm(v) == pytest.approx(1.0, abs=1e-6)
    frame = inset.frame
    for m in [*inset.arrows, *inset.names]:
        assert frame.get_left()[0] - 1e-6 <= m.get_left()[0] and m.get_right()[0] <= frame.get_right()[0] + 1e-6
        assert frame.get_bottom()[1] - 1e-6 <= m.get_bottom()[1] and m.get_top()[1] <= frame.get_top()[1] + 1e-6
    assert inset.factor_label.get_bottom()[1] > frame.get_top()[1]  # over the box, not on its arrows
    assert inset.window.width >= 2.0 / k  # the spot ringed, the whole window inside the ring


def test_a_difference_too_short_even_enlarged_gets_no_inset(trace):
    """Review 47: SmolLM2's mole, a ΔE⃗ of 0.0 on every axis, got a box "enlarged ×15" whose E⃗, ΔE⃗ and E⃗′ piled on
    one point. A ΔE⃗ drawn shorter than two cone tips is enlarged when the largest round factor makes it long
    enough to read; a stub even then gets no inset (the table's zeros say it)."""
    from types import SimpleNamespace

    from attention_manim.scenes.chapters.context_space import CLUMP, ENLARGED_LEAST, tip_inset
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.stage import Region

    E = trace.embeddings[3]
    space = EmbeddingSpace(trace, fit_to=[E])
    inv = np.linalg.pinv(space.basis)
    stage = SimpleNamespace(region=lambda name: Region("full", -7.0, 7.0, -3.8, 3.8), say=Say("en"), theme=DARK,
                            space_key=None, mobjects=[])
    out = {}
    for name, step in (("short", 0.03), ("stub", 1e-5)):
        E2 = E + step * inv[1]
        a = space.arrow(E, DARK.embedding, name=f"E{name}")
        d = space.difference_arrow(E, E2, DARK.delta, name=f"dE{name}")
        b = space.arrow(E2, DARK.updated, name=f"E2{name}")
        length = float(np.linalg.norm((d.end_point() - d.start_point())[:2]))
        assert length < CLUMP
        out[name] = (tip_inset(stage, space, a, d, b, []), length)
    inset, length = out["short"]
    assert inset is not None and inset.factor * length >= ENLARGED_LEAST
    assert "×" in inset.factor_label.original_text or "×" in inset.factor_label.text
    assert out["stub"][0] is None


def test_a_tip_inset_with_no_room_on_the_right_takes_a_smaller_box_elsewhere(trace):
    """SmolLM2's eiffel_tower on our own sentence: every spot right of the space was crossed by its axes, and
    the box fell on the axis name "small". A smaller box in a clear place is taken before a crowded large one;
    where nothing is clear either, the place with the most room."""
    from manim import ORIGIN, RIGHT, Line, Rectangle

    from attention_manim.scenes.components.tip_inset import TipInset

    E = trace.embeddings[3]
    space = EmbeddingSpace(trace, fit_to=[E])
    inv = np.linalg.pinv(space.basis)
    E2 = E + 0.03 * inv[1]
    a = space.arrow(E, DARK.embedding, name="E")
    d = space.difference_arrow(E, E2, DARK.delta, name="dE")
    b = space.arrow(E2, DARK.updated, name="E2")
    names = {x: Line(ORIGIN, RIGHT * 0.3) for x in (a, d, b)}
    right = [np.array([5.5, y, 0.0]) for y in (-1.5, 0.0)]
    wall = Rectangle(width=3.0, height=7.0).move_to([5.5, 0.0, 0.0])  # the right taken
    left = (np.array([-5.8, -1.5, 0.0]), 0.75)
    inset = TipInset.beside([a, d, b], (d.start_point(), d.end_point()), DARK, lambda k: f"×{k}", right,
                            avoid=[wall], half=0.9, smaller=[left], names=names)
    assert inset.frame.get_center()[:2] == pytest.approx(left[0][:2]) and inset.frame.width == pytest.approx(1.5)
    # with a clear spot on the right, the large box there
    inset = TipInset.beside([a, d, b], (d.start_point(), d.end_point()), DARK, lambda k: f"×{k}", right,
                            avoid=[], half=0.9, smaller=[left], names=names)
    assert inset.frame.get_center()[:2] == pytest.approx(right[0][:2]) and inset.frame.width == pytest.approx(1.8)


def test_a_row_vector_spaces_its_entries_wider_where_the_decimal_mark_is_a_comma():
    """Review 49 (pt): "+1,5 −2,0 0,0" read tight, the commas inside the entries like the list's own. In a
    decimal-comma language a row vector's entries stand COMMA_GAP times further apart; a column is unchanged."""
    from attention_manim.scenes.components.text import reset_number_language, set_number_language
    from attention_manim.scenes.components.vectors import COMMA_GAP

    values = np.array([1.5, -2.0, 0.0, 0.4, -1.2])

    def gaps(lang, horizontal=True):
        token = set_number_language(lang)
        try:
            v = VectorColumn(values, head=5, tail=0, horizontal=horizontal, entry_gap=0.14)
        finally:
            reset_number_language(token)
        e = v.entries
        if not horizontal:  # (baselines: a "+" is taller than a "−", so middles differ)
            return [text_baseline(a) - text_baseline(b) for a, b in zip(e, e[1:])]
        return [b.get_left()[0] - a.get_right()[0] for a, b in zip(e, e[1:])]

    assert gaps("en") == pytest.approx([0.14] * 4)
    assert gaps("pt") == pytest.approx([0.14 * COMMA_GAP] * 4)
    assert gaps("ko") == pytest.approx([0.14] * 4)
    assert gaps("pt", horizontal=False) == pytest.approx(gaps("en", horizontal=False))


def test_a_columns_entries_stand_on_evenly_spaced_baselines():
    """Review 50 (mlp 07): centred on their rows, "−0.10" stood 6 px lower than "+5.18" beside it (a plus is
    taller than a minus), so E, MLP(E) and E′ did not share their rows. Every entry of a column sits on its row's
    baseline: one pitch apart, and level with the same row of a column of other signs."""
    a = VectorColumn(np.array([5.18, -2.22, 4.51, 0.14]), head=4, tail=0, kind="signed2", font_size=40)
    b = VectorColumn(np.array([0.37, -0.10, -1.07, 0.42]), head=4, tail=0, kind="signed2", font_size=40)
    for v in (a, b):
        feet = [text_baseline(m) for m in v.entries]
        assert np.diff(feet) == pytest.approx([-v.row_height] * 3, abs=1e-6)
    b.shift(UP * (text_baseline(a.entries[0]) - text_baseline(b.entries[0])))  # first rows level: all rows level
    assert [text_baseline(m) for m in a.entries] == pytest.approx([text_baseline(m) for m in b.entries], abs=1e-6)


def test_a_cosine_and_its_word_share_a_baseline_with_a_decimal_comma():
    """Review 50 (pt): "cos −0,31" aligned by its box, the comma's tail lifted the digits 5 px over "cos"."""
    from attention_manim.scenes.components.angle_view import AngleView
    from attention_manim.scenes.components.text import reset_number_language, set_number_language, text_baseline

    q = np.array([1.0, 0.0, 0.0])
    token = set_number_language("pt")
    try:
        view = AngleView(q, [(np.array([0.36, 0.93, 0.0]), "#00ff00", "arrow(K)_3"),
                             (np.array([-0.31, 0.95, 0.1]), "#888888", "arrow(K)_1")])
    finally:
        reset_number_language(token)
    for arc in view.arcs:
        word, num = arc[1]
        assert "," in num.shown
        assert text_baseline(word) == pytest.approx(text_baseline(num), abs=1e-3)
        assert word.original_text == "cos ="  # review 53: "cos −0,31" read as the cosine of −0,31
