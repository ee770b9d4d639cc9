"""The memory chart that ends `context_size`: every point against the bytes of the arrays each way of
attending holds, written out here from the model's config (shapes and a float32's size, not the plan's
formula); the rows' order; full ÷ each row at the longest length; the words drawn in English and
Portuguese; and the chapter in the lesson, played without drawing."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest
from manim import DL, UR, MovingCameraScene, VGroup, tempconfig

from attention_manim.scenes.i18n import Say
from attention_manim.scenes.plans.context_size import plan_context_memory
from attention_manim.scenes.plans.ring import DEVICES, MEMORY_LENGTHS
from attention_manim.scenes.plans.sliding_window import DEFAULT_WINDOW
from attention_manim.scenes.registry import load_all
from attention_manim.scenes.style import byte_text

from .conftest import tiny_config

FLOAT32 = np.dtype(np.float32).itemsize


def shapes(way: str, n: int, heads: int, d: int) -> list[tuple[int, ...]]:
    """The arrays one layer's heads hold for their pattern at n tokens, the way `way` attends."""
    b = math.ceil(n / DEVICES)  # ring: one device's block of queries, and the key block beside it
    return {
        "full": [(heads, n, n)],  # every score
        "flash": [(heads, 128, 128), (heads, 128), (heads, 128)],  # a kernel's tile of 128 × 128, running max m, sum l
        "ring": [(heads, b, b), (heads, b), (heads, b)],  # a block against a block, its rows' m and l
        "linear": [(heads, d, d), (heads, d)],  # φ(K)ᵀV and Σφ(k)
        "window": [(heads, n, DEFAULT_WINDOW)],  # a band of w scores per query
    }[way]


def expected_bytes(way: str, n: int, heads: int, d: int) -> int:
    return sum(int(np.prod(s, dtype=np.int64)) for s in shapes(way, n, heads, d)) * FLOAT32


def three_digits(x: float, group: str = ",") -> str:
    """x to three significant digits (English), grouped unless group="": 15.9998 -> "16.0", 9.996 -> "10.0",
    240,384,615 -> "240,000,000"."""
    v = float(f"{x:.3g}")
    dec = max(0, 2 - int(math.floor(math.log10(v))))
    return f"{v:{group}.{dec}f}"


SMOLLM2 = SimpleNamespace(name="smollm2", n_heads=9, d_head=64, n_ctx=8192)  # its config


def setting_of(info) -> SimpleNamespace:
    return SimpleNamespace(model=info)


@pytest.fixture(scope="module")
def toy_setting(make_inputs):
    return load_all()["context_size"].lesson.setting(make_inputs())


def test_the_chapter_ends_the_context_size_lesson():
    keys = [c.key for c in load_all()["context_size"].lesson.chapters]
    assert keys == ["context_size", "context_memory"]


@pytest.mark.parametrize("model", ["toy", "smollm2"])
def test_every_cell_is_the_bytes_of_the_arrays_held(model, toy_setting):
    setting = toy_setting if model == "toy" else setting_of(SMOLLM2)
    m = setting.model
    plan = plan_context_memory(setting)
    assert plan.lengths == MEMORY_LENGTHS == (1_000, 32_000, 1_000_000)
    assert (plan.n_heads, plan.d_head, plan.n_ctx) == (m.n_heads, m.d_head, m.n_ctx)
    assert (plan.devices, plan.window, plan.block_q, plan.block_k) == (DEVICES, DEFAULT_WINDOW, 128, 128)
    assert plan.bytes_per_number == FLOAT32 and plan.beyond_context  # both models read far less than 1M tokens
    assert sorted(r.way for r in plan.rows) == sorted(["full", "flash", "ring", "linear", "window"])
    for r in plan.rows:
        assert r.bytes == tuple(expected_bytes(r.way, n, m.n_heads, m.d_head) for n in MEMORY_LENGTHS), r.way
    # and at 1,000 tokens, the arrays themselves (small enough to make)
    for r in plan.rows:
        made = sum(np.zeros(s, np.float32).nbytes for s in shapes(r.way, 1_000, m.n_heads, m.d_head))
        assert r.bytes[0] == made, r.way


@pytest.mark.parametrize("model", ["toy", "smollm2"])
def test_full_is_largest_and_only_n_squared_ways_grow_a_thousandfold(model, toy_setting):
    setting = toy_setting if model == "toy" else setting_of(SMOLLM2)
    plan = plan_context_memory(setting)
    last = [r.bytes[-1] for r in plan.rows]
    assert last == sorted(last, reverse=True) and plan.rows[0].way == "full"
    full = plan.row("full")
    for i in range(len(MEMORY_LENGTHS)):
        assert all(full.bytes[i] > r.bytes[i] for r in plan.rows if r.way != "full")
    # from 1,000 to 1,000,000 tokens: n² grows a million times, n a thousand times, flash and linear not at all
    grow = {r.way: r.bytes[-1] / r.bytes[0] for r in plan.rows}
    assert grow["full"] == 1e6 and grow["window"] == 1e3 and grow["flash"] == grow["linear"] == 1
    assert grow["ring"] == pytest.approx(1e6, rel=1e-2)
    for r in plan.rows:  # full ÷ this row at the longest length, exact, and as drawn
        assert r.ratio == pytest.approx(full.bytes[-1] / r.bytes[-1], rel=1e-12)
        shown = r.ratio_shown[0]
        assert f"{float(shown):,.{r.ratio_shown[1]}f}" == three_digits(full.bytes[-1] / r.bytes[-1])
        assert r.about == (shown != full.bytes[-1] / r.bytes[-1])


def test_smollm2_at_a_million_tokens():
    """SmolLM2: 9 heads of 64, float32, 4 devices, a window of 8, flash tiles of 128 × 128 (a real kernel's:
    9 × (128 × 128 + 2 × 128) × 4 bytes = 599,040)."""
    plan = plan_context_memory(setting_of(SMOLLM2))
    en, pt = Say("en"), Say("pt")
    got = {r.way: byte_text(en, r.bytes[-1]) for r in plan.rows}
    assert got == {"full": "36.0 TB", "ring": "2.25 TB", "window": "288 MB", "linear": "150 kB", "flash": "599 kB"}
    assert {r.way: byte_text(pt, r.bytes[-1]) for r in plan.rows}["full"] == "36,0 TB"
    assert [r.way for r in plan.rows] == ["full", "ring", "window", "flash", "linear"]


def scene_of(lang: str, tmp_path, inputs):
    """The chapter alone, played without drawing."""
    from attention_manim.scenes.chapters.context_size import ContextMemory
    from attention_manim.scenes.lesson import Lesson, LessonSceneBase

    lesson = Lesson("context_memory_only", (ContextMemory(),), role=None)
    cls = type("MemoryOnly", (LessonSceneBase, MovingCameraScene), {"lesson": lesson, "__module__": __name__})
    with tempconfig(tiny_config(tmp_path, png=False)):
        scene = cls(inputs(lang=lang))
        scene.render()
    return scene


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_the_chart_draws_every_size_to_scale_and_the_numbers_the_languages_way(lang, make_inputs, tmp_path):
    """A line per way of attending, its dots at the bytes held at each length on log scales both ways (review
    37: the table of small figures read as a slide); beside each line's end its size at the longest length."""
    scene = scene_of(lang, tmp_path, make_inputs)
    m = scene.setting.model
    drawn = scene.stage.drawn["context_memory"]
    rows, chart = scene.plans[0].rows, drawn["chart"]
    sep = (lambda s: s.replace(",", "\0").replace(".", ",").replace("\0", ".")) if lang == "pt" else (lambda s: s)
    for r, dots, size in zip(rows, chart.dots, drawn["sizes"]):
        for dot, n in zip(dots, MEMORY_LENGTHS):  # each dot where its length and its bytes are, read off the scales
            length, b = chart.value_of(dot.get_center())
            assert length == pytest.approx(n, rel=1e-6) and b == pytest.approx(expected_bytes(r.way, n, m.n_heads, m.d_head), rel=1e-6)
        b = expected_bytes(r.way, MEMORY_LENGTHS[-1], m.n_heads, m.d_head)
        for unit_size, unit in ((10**12, "TB"), (10**9, "GB"), (10**6, "MB"), (10**3, "kB"), (1, "B")):
            if float(f"{b / unit_size:.2f}") >= 1 or unit_size == 1:  # bytes in decimal units, written out here
                assert size.text == sep(str(b) if unit_size == 1 else three_digits(b / unit_size, group="")) + unit, r.way
                break
    # a dot on another series' dot is a ring around it, so both show (review 49: window and flash at 1,000)
    from manim import Circle

    seen = []
    for dots in chart.dots:
        for dot in dots:
            near = any(np.linalg.norm(dot.get_center() - q) < 0.16 for q in seen)
            assert (type(dot) is Circle and dot.get_fill_opacity() == 0 and dot.width > 0.2) == near
        seen += [d.get_center() for d in dots]
    assert any(type(d) is Circle for dots in chart.dots for d in dots)  # (the toy's window and flash at 1,000)
    # ... and the frame says what a ring is, in the language, with a ring beside it (review 51: unkeyed)
    from attention_manim.scenes.i18n import Say

    ring_key = drawn["ring_key"]
    assert type(ring_key[0]) is Circle and ring_key[1].original_text == Say(lang)("grid.context_memory.ring_key")
    assert ring_key.get_right()[0] <= scene.camera.frame_width / 2 - 0.1
    # ... shown with the first line drawn with a ring, its ring in that line's colour (review 52: a grey key came
    # with the first line, three lines before any ring)
    first = next(k for k, dots in enumerate(chart.dots) if any(type(d) is Circle for d in dots))
    assert drawn["ring_key_with"] == first
    ring = next(d for d in chart.dots[first] if type(d) is Circle)
    assert ring_key[0].get_stroke_color().to_hex() == ring.get_stroke_color().to_hex()
    # no ring touches an axis's label (review 52: the ring at 1,000 tokens on "1 MB")
    for dots in chart.dots:
        for d in (d for d in dots if type(d) is Circle):
            for lab in chart.y_tick_labels:
                assert lab.get_right()[0] <= d.get_left()[0] - 0.05 or abs(lab.get_y() - d.get_y()) > (lab.height + d.height) / 2
    assert all(ring_key.get_top()[1] < t.get_bottom()[1] or ring_key.get_left()[0] > t.get_right()[0] for t in drawn["tags"])
    # n² climbs twice as steeply as n; flash and linear lie flat
    slope = {r.way: (chart.value_of(d[-1].get_center())[1] / chart.value_of(d[0].get_center())[1]) for r, d in zip(rows, chart.dots)}
    assert slope["full"] == pytest.approx(1e6) and slope["window"] == pytest.approx(1e3) and slope["flash"] == pytest.approx(1)
    # each name level with its line's end, or tied to it by a line where two ends are close; names never overlap
    tags = drawn["tags"]
    for t, tie, end in zip(tags, drawn["ties"], chart.ends):
        assert np.linalg.norm(tie.get_start() - end.get_center()) < 1e-6 and tie.get_end()[0] < t.get_left()[0]
        # a name's first line stands over the lengths' labels (level with them, "1,000,000 linear attention" read
        # as one line) and its tie crosses none of them (review 42)
        assert t[0].get_bottom()[1] > chart.x_tick_labels.get_top()[1]
        for lab in chart.x_tick_labels:
            (x0, y0, _), (x1, y1, _) = lab.get_corner(DL), lab.get_corner(UR)
            on_tie = [tie.get_start() + f * (tie.get_end() - tie.get_start()) for f in np.linspace(0, 1, 101)]
            assert not any(x0 < p[0] < x1 and y0 < p[1] < y1 for p in on_tie), lab.text
    # the lowest count's label stands a decade over the lengths' axis, not on its line in the corner (review 48)
    lowest = min(chart.y_tick_labels, key=lambda m: m.get_y())
    assert lowest.get_bottom()[1] > chart.axes[0].get_start()[1] + 0.1
    # what a way holds keeps 0.85 of its size at least: it wraps first (review 42: pt's ring line shrank to 15 px)
    from attention_manim.scenes.components.text import label
    for what in drawn["whats"]:  # (wrapped lines, or one line: a line set in pieces, its n typeset, says its words)
        for line in (what if isinstance(what, VGroup) and not hasattr(what, "original_text") else [what]):
            words = getattr(line, "original_text", None) or line.text
            assert line.height >= 0.85 * label(words, 21).height - 1e-6, words
    # and every name at one size: none shrunk alone to fit (review 43: pt's ring name at 80 % of the others)
    scales = [t[0][0].height / label(t[0][0].text, 26).height for t in tags]
    assert max(scales) - min(scales) < 0.01, scales
    boxes = sorted((t.get_bottom()[1], t.get_top()[1]) for t in tags)
    assert all(lo2 > hi1 for (_, hi1), (lo2, _) in zip(boxes, boxes[1:]))
    assert all(t.get_right()[0] < r.get_left()[0] for t, r in zip(tags, drawn["ratios"]) if len(r))
    # the model's own context named over the chart, clear of its lines and of the names (review 44)
    here = drawn["context_mark"].text
    assert here.get_right()[0] < min(t.get_left()[0] for t in tags) and here.get_bottom()[1] > chart.axes[1].get_end()[1]
    # the column's heading over every name, on no line's level (review 41: beside full's line it read as its value)
    assert drawn["ratio_head"].get_bottom()[1] > max(t.get_top()[1] for t in tags)
    full = next(r for r in rows if r.way == "full")
    for r, mob in zip(rows, drawn["ratios"]):
        if r.way == "full":
            continue
        ratio = three_digits(full.bytes[-1] / r.bytes[-1])
        assert mob.text == ("≈" if r.about else "") + sep(ratio)
    # the last caption says the same ratios, the language's way, and every caption is the catalog's
    point = scene.caption_log[-1][0]
    for r in rows:
        if r.way != "full":
            assert sep(three_digits(full.bytes[-1] / r.bytes[-1])) in point
    if lang == "pt":
        assert "1.000.000" in point and "cerca de" in point


@pytest.mark.parametrize("b, en, pt", [(994_999, "995 kB", "995 kB"), (996_000, "1.00 MB", "1,00 MB"),
                                       (999_600, "1.00 MB", "1,00 MB"), (9_996_000, "10.0 MB", "10,0 MB"),
                                       (36 * 10**12, "36.0 TB", "36,0 TB"), (360, "360 B", "360 B")])
def test_one_byte_formatter_for_every_lesson(b, en, pt):
    """scenes/style.py's byte_text, shared by flash, ring and this table: three significant digits in the
    largest decimal unit the count reads at least 1.00 in (to two decimals: 996 kB reads "1.00 MB", never
    "1000 kB"); prose and figures alike take the language's decimal mark (README, "Numbers")."""
    assert byte_text(Say("en"), b) == en and byte_text(Say("pt"), b) == pt
    assert byte_text(Say("pt"), b) == pt


@pytest.mark.parametrize("info", [SMOLLM2, SimpleNamespace(name="toy", n_heads=4, d_head=16, n_ctx=64)])
def test_the_models_own_context_is_marked_on_the_chart(info):
    """Review 44: the chart opened on bare axes for two captions, the second saying the model reads at most
    n_ctx tokens. Where n_ctx is on the lengths' axis (SmolLM2's 8,192), a dashed line stands at it up to its
    name over the chart; where the chart starts past it (the toy's 64), the name stands over the axis's start
    with an arrow to the left. The name stays clear of the names' column and of the chart's lines."""
    from attention_manim.scenes.chapters.context_size import ContextMemory
    from attention_manim.scenes.components.loglog_chart import LogLogChart
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.context_size import plan_context_memory
    from attention_manim.scenes.style import DARK

    plan = plan_context_memory(setting_of(info))
    assert plan.beyond_context
    chart = LogLogChart(plan.lengths, [(r.bytes, "#FFFFFF") for r in plan.rows], x_label=str, y_label=lambda k: None,
                        width=5.0, height=4.0, theme=DARK, font_size=22, x_labelled=plan.lengths).shift([-2.0, -1.0, 0])
    say = Say("pt")
    top, right = chart.axes[1].get_end()[1] + 0.7, chart.axes[0].get_end()[0] + 0.3
    mark = ContextMemory.context_mark(SimpleNamespace(theme=DARK, say=say), chart, plan, top, right)
    text = mark.text
    shown = " ".join(line.original_text for line in text)
    assert text.get_top()[1] == pytest.approx(top) and text.get_right()[0] <= right + 1e-6
    assert text.get_bottom()[1] > chart.axes[1].get_end()[1]  # over the chart: on no line
    if info.n_ctx >= plan.lengths[0]:
        assert "8.192" in shown and len(mark) == 2
        dash = mark[1]
        assert chart.value_of(dash.get_start())[0] == pytest.approx(8192, rel=1e-3)
        assert dash.get_start()[1] == pytest.approx(chart.axes[0].get_start()[1]) and dash.get_end()[1] < text.get_bottom()[1]
        assert text.get_left()[0] == pytest.approx(dash.get_x())
    else:
        assert shown.startswith("←") and "64" in shown and len(mark) == 1
        assert text.get_left()[0] == pytest.approx(chart.axes[0].get_start()[0])
