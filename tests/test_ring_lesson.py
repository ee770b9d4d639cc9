"""The `ring_attention` lesson: its plans' numbers against attention written out here in numpy (every
device's running max, sum and output after every step, the final rows, the causal load of contiguous
and striped blocks, memory and traffic from the model's sizes), `--devices`, a tiny render in three
languages, and the lint in three languages on the toy and on SmolLM2."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from attention_manim.model.errors import UserError
from attention_manim.scenes.registry import load_all

NAME = "ring_attention"


def scores(q, k, causal=True):
    """q·kᵀ/√d in float64, −∞ where a key comes after its query (causal)."""
    s = q.astype(np.float64) @ k.astype(np.float64).T / np.sqrt(q.shape[1])
    if causal:
        s[np.triu_indices(len(q), 1)] = -np.inf
    return s


def full_attention(q, k, v, causal=True):
    """Ordinary attention, written out here: the whole score matrix, softmax per row, times v."""
    s = scores(q, k, causal)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v.astype(np.float64)


def running(q, k, v, rows, keys, causal=True):
    """m, l and the unnormalized O of `rows` having seen the keys `keys` (any order): the max over the
    visible scores, the sum of their exponentials and the exponentials times v."""
    s = scores(q, k, causal)[np.ix_(rows, keys)]
    m = s.max(axis=1)
    e = np.exp(s - m[:, None])
    return m, e.sum(axis=1), e @ v.astype(np.float64)[keys]


def lesson():
    return load_all()[NAME].lesson


def setting_for(make_inputs, **kw):
    return lesson().setting(make_inputs(**kw))


@pytest.mark.parametrize("devices", [None, 2, 3, 5, 6])
def test_every_step_of_the_ring_is_attention_written_out(make_inputs, devices):
    from attention_manim.scenes.plans.ring import DEVICES, plan_ring

    setting = setting_for(make_inputs, options={} if devices is None else {"devices": devices})
    plan = plan_ring(setting)
    ht = setting.head_trace()
    q, k, v = ht.q, ht.k, ht.v
    n, N = len(q), plan.n_devices
    assert N == (devices or DEVICES) and plan.causal and n == setting.trace.n_tokens
    blocks = [np.asarray(b) for b in np.array_split(np.arange(n), N)]
    assert [list(t) for t in plan.result.tokens] == [list(b) for b in blocks]
    for t in range(N):
        for i in range(N):
            st = plan.step(t, i)
            held = (i - t) % N  # the block that started on device i − t
            assert st.kv_block == held
            # causal, contiguous: a block is computed only when it is not wholly after the queries
            assert st.busy == (held <= i)
            seen = np.concatenate([blocks[(i - u) % N] for u in range(t + 1)])
            m, l, O = running(q, k, v, blocks[i], seen)
            np.testing.assert_allclose(st.m, m, rtol=1e-12)
            np.testing.assert_allclose(st.l, l, rtol=1e-10)
            np.testing.assert_allclose(st.O, O, rtol=1e-9, atol=1e-12)
            visible = np.isfinite(scores(q, k)[np.ix_(blocks[i], blocks[held])]).sum()
            assert st.cells == (visible if st.busy else 0)
            want = 0 if t == 0 else len(blocks[held]) * (k.shape[1] + v.shape[1]) * plan.bytes_per_number
            assert st.bytes_received == want
            assert plan.block_bytes(held) == len(blocks[held]) * 2 * k.shape[1] * 2
        assert plan.idle(t) == tuple(i for i in range(N) if (i - t) % N > i)
    full = full_attention(q, k, v)
    assert np.abs(plan.result.output - full).max() < 1e-12
    z = ht.z.astype(np.float64)
    assert plan.max_diff_trace == pytest.approx(np.abs(plan.result.output - z).max())
    assert 0 < plan.max_diff_trace < 1e-5
    # the first and last row of every device, and O's first two entries and its last, as shown
    # per device, the two rows whose drawn m or l change most often over the ring (ties: first, last)
    for i, (b, shown) in enumerate(zip(blocks, plan.rows_shown)):
        changes = {}
        busy = [plan.step(t, i) for t in range(N) if plan.step(t, i).busy]
        for r, p in enumerate(b):
            ms = [f"{float(st.m[r]):.1f}" for st in busy]
            ls = [f"{float(st.l[r]):.2f}" for st in busy]
            changes[int(p)] = sum(x != y for x, y in zip(ms, ms[1:])) + sum(x != y for x, y in zip(ls, ls[1:]))
        want = sorted(changes, key=lambda p: (-changes[p], p not in (b[0], b[-1]), p))[:2]
        assert shown == tuple(sorted(want))
    assert plan.o_shown == (0, 1, v.shape[1] - 1)
    d = plan.decimals
    assert d >= 5
    for rows in plan.rows_shown:
        for p in rows:
            for j in plan.o_shown:
                assert f"{full[p, j]:.{d}f}" == f"{z[p, j]:.{d}f}"


def test_the_causal_load_contiguous_and_striped(make_inputs):
    from attention_manim.scenes.plans.ring import plan_ring_causal

    setting = setting_for(make_inputs)
    plan = plan_ring_causal(setting)
    ht = setting.head_trace()
    n, N = plan.n, plan.n_devices
    c, s = plan.contiguous, plan.striped
    # contiguous: device i computes only with blocks 0..i; striped: every block meets every device
    assert c.busy_steps == tuple(range(1, N + 1))
    assert s.busy_steps == (N,) * N
    for res, parts in ((c, np.array_split(np.arange(n), N)), (s, [np.arange(i, n, N) for i in range(N)])):
        assert [list(t) for t in res.tokens] == [list(p) for p in parts]
        # a query at position p sees p + 1 keys: a device's pairs are the sum over its queries
        assert res.cells == tuple(int((p + 1).sum()) for p in parts)
        assert sum(res.cells) == plan.total_cells == n * (n + 1) // 2
        np.testing.assert_array_equal(grouped_order(res), np.concatenate(parts))
    assert plan.max_diff_striped == pytest.approx(np.abs(s.output - ht.z.astype(np.float64)).max())
    assert plan.max_diff_contiguous == pytest.approx(np.abs(c.output - ht.z.astype(np.float64)).max())
    assert np.abs(s.output - full_attention(ht.q, ht.k, ht.v)).max() < 1e-12
    # striping's gain is the busiest device's load: it sets when each step ends
    assert max(s.cells) < max(c.cells) == c.cells[-1]
    assert plan.layout == setting.layout == "video"
    assert plan_ring_causal(setting_for(make_inputs, layout="paper")).layout == "paper"


def grouped_order(res):
    from attention_manim.scenes.plans.ring import RingCausalPlan

    order = RingCausalPlan.order(res)
    dev = RingCausalPlan.device_of(res)
    for i, toks in enumerate(res.tokens):
        assert (dev[toks] == i).all()
    return order


def test_memory_and_traffic_from_the_models_sizes(make_inputs):
    from attention_manim.scenes.plans.ring import BYTES_PER_NUMBER, MEMORY_LENGTHS, plan_ring_memory

    setting = setting_for(make_inputs)
    m = setting.model
    plan = plan_ring_memory(setting)
    kv_heads = m.n_kv_heads or m.n_heads
    per_token = 2 * kv_heads * m.d_head * BYTES_PER_NUMBER  # K and V of one token in one layer
    assert plan.kv_token == per_token * m.n_layers
    assert [r.n for r in plan.rows] == list(MEMORY_LENGTHS) == [1_000, 32_000, 1_000_000]
    for r in plan.rows:
        block = math.ceil(r.n / plan.n_devices)
        assert r.full_kv == r.n * per_token * m.n_layers
        assert r.kv_per_device == block * per_token * m.n_layers
        assert r.sent_per_step == block * per_token
        # what a device holds, as the table counts it: its own block of every layer, plus the two
        # blocks of the running layer passing through (the one it computes with, the one arriving)
        assert r.peak_per_device == block * per_token * m.n_layers + 2 * block * per_token


def test_the_memory_formula_multiplies_out_to_what_it_says(make_inputs):
    """layers × key/value heads × numbers × 2 (K and V) × bytes = bytes per token, every factor drawn."""
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.ring import plan_ring_memory

    plan = plan_ring_memory(setting_for(make_inputs))
    factors = plan.kv_factors
    assert math.prod(factors) == plan.kv_token and factors[3] == 2
    layers, heads, d, kv, bpn = factors
    for lang, word in (("en", "(K and V)"), ("ko", "(K와 V)"), ("pt", "(K e V)")):
        line = Say(lang)("ring.memory.sizes", count=layers, heads=heads, d=d, kv=kv, bpn=bpn, bytes=plan.kv_token)
        assert f"× {kv} {word}" in line.replace(f"{kv}(", f"{kv} (")
        shown = [int(x) for x in re.findall(r"(?<![A-Za-z\d.,])(\d+)(?![A-Za-z\d.,])", line.split("=")[0])]
        assert math.prod(shown) == plan.kv_token, line


def test_smollm2_sizes_read_as_the_table_shows_them():
    """SmolLM2's config (30 layers, 3 key/value heads of 64, BF16) at a million tokens on 4 devices."""
    from attention_manim.model.ring import ring_memory
    from attention_manim.scenes.style import byte_text
    from attention_manim.scenes.i18n import Say

    r = ring_memory(1_000_000, 64, 3, 30, 2, 4)
    assert (r.full_kv, r.kv_per_device, r.sent_per_step) == (23_040_000_000, 5_760_000_000, 192_000_000)
    en, pt, ko = Say("en"), Say("pt"), Say("ko")
    assert [byte_text(en, b) for b in (r.full_kv, r.kv_per_device, r.sent_per_step)] == ["23.0 GB", "5.76 GB", "192 MB"]
    assert [byte_text(pt, b) for b in (r.full_kv, r.kv_per_device, r.sent_per_step)] == ["23,0 GB", "5,76 GB", "192 MB"]
    assert byte_text(ko, 6_144_000) == "6.14 MB"
    # held per device: own 5.76 GB + two passing blocks of one layer (2 × 192 MB)
    assert r.peak_per_device == 5_760_000_000 + 2 * 192_000_000 and byte_text(en, r.peak_per_device) == "6.14 GB"


def test_the_memory_table_and_captions_count_what_a_device_holds(make_inputs):
    """The column and the last caption show the held bytes (own block + two passing blocks), the bar and
    the second caption the own block: the words say which."""
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.ring import plan_ring_memory
    from attention_manim.scenes.style import byte_text

    plan = plan_ring_memory(setting_for(make_inputs))
    short = plan.rows[0]
    for lang in ("en", "ko", "pt"):
        say = Say(lang)
        line = say("ring.memory.caption_table", count=plan.n_devices, short=say.number(short.n, ",d"),
                   held=byte_text(say, short.peak_per_device), full=byte_text(say, short.full_kv))
        assert byte_text(say, short.peak_per_device) in line and byte_text(say, short.full_kv) in line
    assert "held" in Say("en")("ring.memory.col_device", count=4)
    assert "passing" in Say("en")("ring.memory.caption_share", model="m", bytes=1)


@pytest.mark.parametrize("b, want", [(999, (2, "kB")), (1000, (2, "kB")), (23_040_000, (1, "MB")),
                                     (737_280_000, (0, "MB")), (999_600, (2, "MB")), (99_960, (0, "kB")),
                                     (512, (0, "B")), (12, (0, "B"))])
def test_byte_sizes_keep_three_significant_digits(b, want):
    from attention_manim.scenes.style import byte_size

    v, dec, unit = byte_size(b)
    assert (dec, unit) == want
    assert len(f"{v:.{dec}f}".replace(".", "").lstrip("0")) == 3 or unit == "B"


def test_devices_is_checked_and_said_when_it_does_not_apply(make_inputs):
    from attention_manim.scenes.i18n import localized_error
    from attention_manim.scenes.options import unused_options
    from attention_manim.scenes.plans.ring import plan_ring

    assert unused_options(lesson(), make_inputs(options={"devices": 3})) == []
    assert unused_options(load_all()["softmax"].lesson, make_inputs(options={"devices": 3})) == ["--devices"]
    assert unused_options(load_all()["softmax"].lesson, make_inputs()) == []
    for bad in (1, 0, -2, 7, 100):
        with pytest.raises(UserError) as e:
            plan_ring(setting_for(make_inputs, options={"devices": bad}))
        assert e.value.key == "devices_out_of_range"
        message, hint = localized_error(e.value, "ko")
        assert "--devices" in message and "장치" in message and hint
    # never more devices than tokens: three tokens take three devices at most
    with pytest.raises(UserError) as e:
        plan_ring(setting_for(make_inputs, sentences=["the tiny fox"], options={"devices": 4}))
    assert "2 to 3" in e.value.message


def test_cli_passes_devices_to_the_lesson(capsys):
    from attention_manim import cli

    def run(*args):
        try:
            cli.main(list(args))
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        return (code, *capsys.readouterr())

    code, out, err = run("script", NAME, "--model", "toy", "--devices", "3", "--format", "txt")
    assert code == 0 and "step 3 of 3" not in out  # the counter is drawn, not said
    assert "Ring attention cuts it into 3 blocks" in out and "Step 3:" in out and "Step 4:" not in out
    code, out, err = run("lint", NAME, "--model", "toy", "--devices", "9")
    assert code == 2 and "--devices 9 is out of range" in err


@pytest.mark.render
@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_ring_renders(lang, make_inputs, render_scene):
    scene, frame = render_scene(load_all()[NAME], make_inputs(lang=lang))
    ring, causal, memory = scene.plans
    N = ring.n_devices
    drawn = scene.stage.drawn["ring"]
    assert len(drawn["tables"]) == N and all(len(t) == N for t in drawn["tables"])
    assert len(drawn["results"]) == N and len(drawn["boxes"]) == N and len(drawn["arrows"]) == N
    assert scene.chapters_played == ["ring", "ring_causal", "ring_memory"]
    # a block for the passage, the split, the ring, each step, the end and the check; 4 + 3
    assert len(scene.caption_log) == 3 + N + 2 + 4 + 3
    assert frame[..., :3].max() > 100
    assert 60 <= scene.renderer.time <= 135  # a bound on the toy ring's length (about two minutes), not a goal
    # under each device's share of the bar: its own block, said to be its own (the table's column adds
    # the passing blocks; a bare size under the bar read as a contradiction of it)
    from attention_manim.scenes.chapters.ring import byte_text
    from attention_manim.scenes.i18n import Say

    say = Say(lang)
    mem = scene.stage.drawn["ring_memory"]
    own = say("ring.memory.own_share", size=byte_text(say, mem["own_bytes"]))
    def lines_said(size):  # its lines (pt's "bloco próprio:" over "5,76 GB" where one line would shrink it)
        return " ".join(line.original_text for line in size).replace("\u00a0", " ")

    assert len(mem["shares"]) == N and all(lines_said(t[1]) == own for t in mem["shares"])
    assert all(len(t[1]) <= 2 for t in mem["shares"])
    assert mem["own_bytes"] * N >= mem["whole_bytes"] > mem["own_bytes"] * (N - 1)
    # the traffic line, the frame's claim, is one line at its size, as wide as the bar at most (review 50, pt: shrunk
    # to fit, its capitals stood 10 px tall and the whole frame shrank with it)
    assert len(mem["sent"]) == 1 and mem["sent"].width <= mem["bar"].width + 1e-6
    # and the picture keeps its size in every language (review 50: pt's wider table shrank it to 81 %)
    # (the table is fitted on its own: the bar, the picture's widest part, is never narrower than the table)
    assert mem["bar"].width >= mem["table"].width - 1e-6
    # a busy device whose table reads as the step before is named in the step's note (the toy's heads put
    # nearly all weight on one key: steps 3 and 4 of its ring), with the weight its rows give the new keys
    notes = drawn["notes"]
    assert len(notes) == N and notes[0] is None
    for t in range(1, N):
        devices, share = ring.still(t)
        assert (notes[t] is None) == (not devices)
        if devices:  # Korean sets its words and figures apart (mixed_label): read the pieces in order
            from manim import Text  # (its glyph runs: a Korean line's figures are pieces of their own)

            said = " ".join(getattr(m, "original_text", None) or m.text for m in notes[t].get_family()
                            if isinstance(m, Text))
            assert said.replace(" ", "") == say("ring.steps.still", count=len(devices), share=said_share(say, share),
                                                devices=say.words([str(i) for i in devices])).replace(" ", "")
    assert any(n is not None for n in notes)  # the toy's default head has such steps


@pytest.mark.parametrize("model", ["toy", "smollm2"])
def test_every_devices_table_marks_each_run_of_rows_it_leaves_out(model, make_inputs, render_scene, request):
    """Review 47: the tables show each device's two busiest rows; two devices' tables ended on a row that
    was not their block's last (24, 25 of 24–34) with nothing to say rows were left out. Every table, as
    the steps go and at the end, has a ⋮ for each run of rows it leaves out: before its first row shown,
    between two, after its last."""
    from manim import MathTypst, Text

    if model == "toy":
        inputs = make_inputs(lang="en")
    else:
        from attention_manim.model.session import ModelSession
        from attention_manim.scenes.setting import SceneInputs

        smol = request.getfixturevalue("smollm2_model")
        inputs = SceneInputs(tracer=ModelSession(smol, "smollm2"), model=smol.info, lang="en")
    scene, _ = render_scene(load_all()[NAME], inputs)
    ring = scene.plans[0]
    drawn = scene.stage.drawn["ring"]

    def dots_row(row):
        return not any(isinstance(m, (Text, MathTypst)) for m in row.get_family())

    for i in range(ring.n_devices):
        toks = [int(t) for t in ring.result.tokens[i]]
        idx = sorted(toks.index(p) for p in ring.rows_shown[i])
        before, after = idx[0] > 0, idx[-1] < len(toks) - 1
        between = sum(b - a > 1 for a, b in zip(idx, idx[1:]))
        for table in [step[i] for step in drawn["tables"]] + [drawn["results"][i]]:
            body = list(table)[1:]
            assert sum(dots_row(r) for r in body) == before + between + after, (i, idx, len(toks))
            assert dots_row(body[0]) == before and dots_row(body[-1]) == after
            ys = [r.get_center()[1] for r in body]
            assert ys == sorted(ys, reverse=True)  # top to bottom, a ⋮ between the rows it stands for


def said_share(say, share: float) -> str:
    pct = 0.01 if share < 1e-4 else 0.1 if share < 1e-3 else 1.0
    return say("ring.steps.share_under", pct=say.number(pct, {0.01: ".2f", 0.1: ".1f", 1.0: ".0f"}[pct]))


def test_still_devices_are_the_busy_ones_whose_drawn_numbers_stay(make_inputs):
    """`RingPlan.still` against the tables recomputed here: a busy device is named exactly when every
    figure drawn for its rows (m to one decimal, l and O to two) reads as the step before and its rows give
    the new block's keys under 1% of their weight in the pattern written out here."""
    from attention_manim.scenes.plans.ring import plan_ring

    setting = setting_for(make_inputs)
    plan = plan_ring(setting)
    ht = setting.head_trace()
    s = scores(ht.q, ht.k)
    w = np.exp(s - s.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    named = 0
    for t in range(1, plan.n_devices):
        devices, share = plan.still(t)
        expected, most = [], 0.0
        for i in range(plan.n_devices):
            if not plan.step(t, i).busy:
                continue
            keys = plan.result.tokens[(i - t) % plan.n_devices]  # the block that started t devices back
            weight = w[np.ix_(list(plan.rows_shown[i]), keys)].sum(axis=1).max()
            def drawn(step):
                return [(f"{step.m[r]:.1f}", f"{step.l[r]:.2f}", *(f"{step.O[r][j]:.2f}" for j in plan.o_shown))
                        for r in plan.rows(i)]
            if drawn(plan.step(t, i)) == drawn(plan.step(t - 1, i)) and weight < 0.01:
                expected.append(i)
                most = max(most, weight)
        assert devices == tuple(expected)
        assert share == pytest.approx(most, abs=1e-9)
        named += len(devices)
    assert named >= 2  # on the toy's default head, devices 2 and 3 stand still in steps 3 and 4


def lint_result(lang, model):
    from attention_manim.scenes import review
    from attention_manim.scenes.batch import Job, Worker

    inputs = Worker().inputs(Job(scene=NAME, lang=lang, model=model))
    return review.lint_scene(load_all()[NAME], inputs, name=NAME, model=model)


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_lint_on_the_toy(lang):
    res = lint_result(lang, "toy")
    assert not [v.line() for v in res.violations], [v.line() for v in res.violations]


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_lint_on_smollm2(lang, smollm2_model):
    res = lint_result(lang, "smollm2")
    assert not [v.line() for v in res.violations], [v.line() for v in res.violations]


def test_smollm2_reads_a_real_passage_and_the_ring_is_its_head(smollm2_model):
    from attention_manim.model.passages import PASSAGES
    from attention_manim.model.session import ModelSession
    from attention_manim.scenes.plans.ring import plan_ring
    from attention_manim.scenes.setting import SceneInputs

    inputs = SceneInputs(tracer=ModelSession(smollm2_model, "smollm2"), model=smollm2_model.info)
    setting = lesson().setting(inputs)
    assert setting.trace.text == PASSAGES[0]
    assert (setting.head.layer, setting.head.head) == (smollm2_model.info.n_layers // 2, 0)
    assert 32 <= setting.trace.n_tokens <= 64
    plan = plan_ring(setting)
    ht = setting.head_trace()
    assert np.abs(plan.result.output - full_attention(ht.q, ht.k, ht.v)).max() < 1e-12
    assert plan.max_diff_trace < 1e-5
    # a sentence of the user's own is read instead
    mine = lesson().setting(SceneInputs(tracer=inputs.tracer, model=inputs.model,
                                        sentences=["The cat sat on the warm mat by the door"]))
    assert mine.trace.text == "The cat sat on the warm mat by the door"


# --- the key to the tables' columns: m, l and O in words, on screen, readable -------------------------


class AtChapterEnd:
    """An observer (scenes.review.Observer) that keeps, at the end of chapter `key`, the texts on screen
    and what the chapter drew."""

    def __new__(cls, key):
        from attention_manim.scenes import review

        class Watch(review.Observer):
            def chapter_done(self, scene, done, number):
                if done == key:
                    self.texts = review.visible_texts(scene)
                    self.drawn = dict(scene.stage.drawn[key])

        return Watch()


def text_px(mob) -> float:
    """A text's cap height in pixels at 720p (90 px a unit), measured as the lint measures it."""
    from attention_manim.scenes import review
    from attention_manim.scenes.style import has_hangul

    cap = review._cap_heights()["ko" if has_hangul(mob.text) else "latin"]
    return review._font_size(mob) * cap * 90


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_the_columns_m_l_and_o_are_said_in_words_on_screen(lang, make_inputs):
    """Under the ring a key says what the tables' m, l and O are, from the catalog in each language, each
    symbol beside its words; at the chapter's end (the O / l rows) l and O are still on screen, at a readable
    size (cap height ≥ 13 px at 720p, the floor being 11), and m is gone with the tables that had an m
    column (review 34: a leftover)."""
    from manim import Text

    from attention_manim.scenes import review
    from attention_manim.scenes.chapters.ring import SYMBOL_SLOT
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.style import has_hangul

    say, en = Say(lang), Say("en")
    said = [say(f"ring.steps.key_{k}", l=SYMBOL_SLOT) for k in "mlo"]
    assert all(s.strip() for s in said) and SYMBOL_SLOT in said[2]
    if lang == "ko":
        assert all(has_hangul(s) for s in said)
    elif lang == "pt":
        assert all(s != en(f"ring.steps.key_{k}", l=SYMBOL_SLOT) for s, k in zip(said, "mlo"))
    watch = AtChapterEnd("ring")
    review.play_watched(load_all()[NAME], make_inputs(lang=lang), watch)
    key = watch.drawn["key"]
    assert len(key.symbols) == 3 and len(key.words) == 3
    on_screen = {id(t.mob): t for t in watch.texts}
    m_pieces = [m for m in key.words[0].get_family() if isinstance(m, Text)]
    assert m_pieces and not any(id(p) in on_screen for p in m_pieces)
    for words, catalog in list(zip(key.words, said))[1:]:
        pieces = [m for m in words.get_family() if isinstance(m, Text)]
        assert pieces and all(id(p) in on_screen for p in pieces), catalog
        assert "".join(p.text for p in pieces).replace(" ", "") == catalog.replace(SYMBOL_SLOT, "").replace(" ", "")
        assert min(text_px(p) for p in pieces) >= 13, catalog
    # each symbol stands left of its words, on their line, inside the frame
    for sym, words in zip(key.symbols, key.words):
        assert sym.get_right()[0] < words.get_left()[0] + 1e-6
        assert abs(sym.get_bottom()[1] - words.get_bottom()[1]) < 0.12
    assert key.get_bottom()[1] > -4 + 0.1 and key.width < 14.2 - 0.2
    boxes = watch.drawn["boxes"]
    assert key.get_top()[1] < boxes.get_bottom()[1]  # under the ring, clear of every device's box


def test_the_toys_head_is_the_one_whose_running_update_shows(make_inputs):
    """The toy's heads put almost all weight on one key: the ring lesson takes the head whose drawn m or l
    change most over the ring, counted here from ring runs of every head; --layer/--head still choose."""
    from dataclasses import replace

    from attention_manim.scenes.plans.ring import DEVICES, plan_ring, ring_updates
    from attention_manim.scenes.setting import HeadRef

    base = setting_for(make_inputs, layer=0, head=0)
    m = base.model
    counts = {}
    for layer in range(m.n_layers):
        for head in range(m.n_heads):
            plan = plan_ring(replace(base, head=HeadRef(layer, head)))
            assert plan.n_devices == DEVICES
            counts[(layer, head)] = ring_updates(plan.result)
    best = max(counts, key=lambda lh: (counts[lh], -lh[0], -lh[1]))
    picked = setting_for(make_inputs)
    assert (picked.head.layer, picked.head.head) == best
    assert counts[best] > counts[(0, 0)] and counts[best] > 0
    # the rows drawn show it: on the picked head, m or l changes in a drawn row of some device
    plan = plan_ring(picked)
    moved = 0
    for i in range(1, plan.n_devices):
        busy = [plan.step(t, i) for t in range(plan.n_devices) if plan.step(t, i).busy]
        for r in plan.rows(i):
            moved += any(f"{a.l[r]:.2f}" != f"{b.l[r]:.2f}" or f"{a.m[r]:.1f}" != f"{b.m[r]:.1f}"
                         for a, b in zip(busy, busy[1:]))
    assert moved >= plan.n_devices - 1
    # the user's head wins
    assert setting_for(make_inputs, layer=0, head=1).head == HeadRef(0, 1)
    assert setting_for(make_inputs, head=2).head == HeadRef(0, 2)


@pytest.mark.parametrize("lang", ["en", "pt", "ko"])
def test_the_causal_key_names_the_masked_half_of_a_block(lang, make_inputs):
    """The causal panels' blocks on the diagonal are half coloured, half black; a key between the two grids
    names the black half (review 50: unkeyed), its little block coloured on the side the panels keep (video:
    keys as rows, so the upper right), clear of both panels, at a readable size."""
    from manim import Polygon, Text, VGroup

    from attention_manim.scenes import review
    from attention_manim.scenes.i18n import Say

    watch = AtChapterEnd("ring_causal")
    review.play_watched(load_all()[NAME], make_inputs(lang=lang), watch)
    masked = watch.drawn["masked"]
    words = [m for m in masked.words.get_family() if isinstance(m, Text)]
    assert "".join(w.text for w in words).replace(" ", "") == Say(lang)("ring.causal.masked_key").replace(" ", "")
    on_screen = {id(t.mob) for t in watch.texts}
    assert all(id(w) in on_screen for w in words)
    assert min(text_px(w) for w in words) >= 13
    kept = next(m for m in masked.block.get_family() if type(m) is Polygon)  # (a Square is a Polygon too)
    centroid = kept.get_vertices().mean(axis=0)  # (a triangle's bounding box is centred on the square's)
    square = masked.block[0]
    assert centroid[0] > square.get_center()[0] + 0.03 and centroid[1] > square.get_center()[1] + 0.03
    left, right = watch.drawn["contiguous"], watch.drawn["striped"]
    lo, hi = VGroup(left.matrix, left.axes).get_right()[0], VGroup(right.matrix, right.axes).get_left()[0]
    assert lo + 0.1 < masked.get_left()[0] and masked.get_right()[0] < hi - 0.1
    assert left.matrix.get_bottom()[1] < masked.get_bottom()[1] and masked.get_top()[1] < left.matrix.get_top()[1]
    mine = {id(w) for w in words}
    for t in watch.texts:  # no other text on screen runs into it
        if id(t.mob) not in mine:
            apart = (t.mob.get_right()[0] < masked.get_left()[0] or t.mob.get_left()[0] > masked.get_right()[0]
                     or t.mob.get_top()[1] < masked.get_bottom()[1] or t.mob.get_bottom()[1] > masked.get_top()[1])
            assert apart, t.mob


@pytest.mark.parametrize("lang", ["en", "pt", "ko"])
def test_the_passage_says_its_token_ranges_count_from_zero(lang, make_inputs):
    """The devices' token ranges ("tokens 0–11") count from 0, where the suite's sentences count words from 1
    (review 50): the passage's frame says so, in the language, in the bottom-left corner clear of the ␣ key."""
    from attention_manim.scenes import review
    from attention_manim.scenes.i18n import Say

    watch = AtChapterEnd("ring")
    review.play_watched(load_all()[NAME], make_inputs(lang=lang), watch)
    counted = watch.drawn["from_zero"]
    assert counted.original_text == Say(lang)("ring.steps.from_zero") and "0" in counted.original_text
    assert counted.get_left()[0] < -6.5 and counted.get_bottom()[1] < -3.5
    assert text_px(counted) >= 11
