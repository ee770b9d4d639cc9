"""The `linear_attention` and `sliding_window` lessons (issue 22): every number their plans hold against
numbers computed here in plain numpy from the model's traces (and, for the next token, a forward pass of
the one-layer toy written here), never by the code under test; `--window`; tiny renders in en, ko and pt;
`render.py lint` clean on the toy and, where it is installed, on SmolLM2."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_manim import cli as render
from attention_manim.model.errors import UserError
from attention_manim.scenes.registry import load_all

LANGS = ("en", "ko", "pt")
LESSONS = ("linear_attention", "sliding_window")


# --- plain numpy written here ------------------------------------------------------------------------


def phi(x):
    """elu(x) + 1, element by element."""
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    for idx, v in np.ndenumerate(x):
        out[idx] = v + 1.0 if v > 0 else math.exp(v)
    return out


def masked_softmax(s, keep):
    s = np.where(keep, s, -np.inf)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def two_patterns(ht):
    """The head's softmax pattern and its elu + 1 linear pattern (causal), from q/√d and k."""
    q = ht.q.astype(np.float64) / math.sqrt(ht.q.shape[1])
    k = ht.k.astype(np.float64)
    n = len(q)
    keep = np.tril(np.ones((n, n), bool))
    sm = masked_softmax(q @ k.T, keep)
    lin = np.where(keep, phi(q) @ phi(k).T, 0.0)
    return sm, lin / lin.sum(axis=1, keepdims=True)


def log_softmax(z):
    z = np.asarray(z, dtype=np.float64)
    return z - z.max() - math.log(np.exp(z - z.max()).sum())


def toy_logits(toy_model, tr, weights_of):
    """The toy's last-position logits with each head's pattern replaced by weights_of(head trace): one
    layer, no norms, no MLP: (E + Σ_h A_h·v_h·W_O[h] + b_O)·W_U."""
    x = tr.embeddings.astype(np.float64).copy()
    for h in range(len(tr.layers[0].heads)):
        ht = tr.head(0, h)
        x += weights_of(ht) @ ht.v.astype(np.float64) @ ht.W_O.astype(np.float64)
    x += toy_model.blocks[0].b_O.detach().numpy()
    return x[-1] @ toy_model.unembed().detach().numpy().astype(np.float64)


def effect(before, after):
    lp, lq = log_softmax(before), log_softmax(after)
    return int(np.argmax(lp)) == int(np.argmax(lq)), float(np.sum(np.exp(lp) * (lp - lq)))


def sees(n, w, sinks=0):
    """[query, key]: key j is in query i's window (or among the first `sinks` tokens), j ≤ i."""
    out = np.zeros((n, n), bool)
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = i - j < w or j < sinks
    return out


def outside_by_hand(p, w, sinks=0):
    n = len(p)
    return float(np.mean([sum(p[i, j] for j in range(i + 1) if i - j >= w and j >= sinks) for i in range(w, n)]))


# --- linear attention ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def linear_plans(toy_model):
    from attention_manim.model.session import ModelSession
    from attention_manim.scenes.setting import SceneInputs

    session = ModelSession(toy_model, "toy")
    lesson = load_all()["linear_attention"].lesson
    setting = lesson.setting(SceneInputs(tracer=session, model=toy_model.info))
    return session, setting, lesson.plans(setting)


def test_the_kernel_plan_against_numpy(linear_plans):
    _, setting, (kernel, _, _) = linear_plans
    ht = setting.head_trace()
    assert (kernel.layer, kernel.head) == (ht.layer, ht.head) and ht.role == "previous_token"
    d = ht.q.shape[1]
    assert kernel.d_head == d and kernel.n_demo == 4 * d and kernel.grid_numbers == (4 * d) ** 2
    assert kernel.state_numbers_d == d * d and kernel.state_numbers == d * d + d
    # the regrouping and the running sum give what the n × n form gives, here too
    q = ht.q.astype(np.float64) / math.sqrt(d)
    k, v = ht.k.astype(np.float64), ht.v.astype(np.float64)
    fq, fk = phi(q), phi(k)
    quad = (fq @ fk.T) / (fq @ fk.T).sum(1, keepdims=True) @ v
    S, z = fk.T @ v, fk.sum(0)
    assert np.abs(quad - (fq @ S) / (fq @ z)[:, None]).max() < 1e-12
    a = np.tril(fq @ fk.T)
    masked = a / a.sum(1, keepdims=True) @ v
    S, z, rnn = np.zeros((d, v.shape[1])), np.zeros(d), []
    for t in range(len(q)):
        S, z = S + np.outer(fk[t], v[t]), z + fk[t]
        rnn.append(fq[t] @ S / (fq[t] @ z))
    assert np.abs(masked - np.array(rnn)).max() < 1e-12
    assert 0 <= kernel.regroup_diff < 1e-12 and 0 <= kernel.rnn_diff < 1e-12
    # the check runs on the sentence itself, shown with its own length (not the drawing's n)
    assert kernel.sentence == setting.trace.text and kernel.n == len(q) != kernel.n_demo


def test_the_pattern_plan_against_numpy(linear_plans, toy_model):
    session, setting, (_, pattern, _) = linear_plans
    ht = setting.head_trace()
    sm, lin = two_patterns(ht)
    np.testing.assert_allclose(pattern.softmax, sm, atol=1e-9)
    np.testing.assert_allclose(pattern.softmax, ht.pattern, atol=1e-5)  # the model's own pattern
    np.testing.assert_allclose(pattern.linear, lin, atol=1e-9)
    i = len(sm) - 1
    j = int(np.argmax(sm[i]))
    assert (pattern.query, pattern.top_key) == (i, j)
    assert pattern.row_softmax == pytest.approx(sm[i, j]) and pattern.row_linear == pytest.approx(lin[i, j])
    assert pattern.row_linear_top == pytest.approx(lin[i].max())
    assert pattern.head_tv == pytest.approx(np.mean(0.5 * np.abs(sm - lin).sum(1)))
    # every head of the model, pooled over every query row of its passages
    texts = [toy_model.info.examples[e] for e in ("long", "murder_mystery", "fluffy_blue_creature")]
    tv = top_s = top_l = rows = 0.0
    kept, kls = [], []
    for text in texts:
        tr = session.trace(text)
        for h in range(len(tr.layers[0].heads)):
            s, l = two_patterns(tr.head(0, h))
            tv += (0.5 * np.abs(s - l).sum(1)).sum()
            top_s += s.max(1).sum()
            top_l += l.max(1).sum()
        rows += tr.n_tokens
        # the layer made linear: the next token from a forward pass written here
        ok, kl = effect(tr.logits[-1], toy_logits(toy_model, tr, lambda h: two_patterns(h)[1]))
        kept.append(ok)
        kls.append(kl)
    H = len(tr.layers[0].heads)
    assert pattern.n_rows == rows and pattern.n_passages == 3 and (pattern.n_layers, pattern.n_heads) == (1, H)
    assert pattern.tv == pytest.approx(tv / rows / H, abs=1e-9)
    assert pattern.top_softmax == pytest.approx(top_s / rows / H, abs=1e-9)
    assert pattern.top_linear == pytest.approx(top_l / rows / H, abs=1e-9)
    assert pattern.kept[:, 0].tolist() == kept and pattern.kept_count == sum(kept) and pattern.runs == 3
    assert pattern.kl_mean == pytest.approx(np.mean(kls), abs=1e-4)
    assert pattern.sharp == (pattern.top_softmax - pattern.top_linear >= 0.3)
    assert pattern.kept_most == (sum(kept) >= 0.75 * 3)


def test_the_cost_plan_against_the_formula(linear_plans):
    _, setting, (_, _, cost) = linear_plans
    d = setting.model.d_head
    assert cost.lengths[0] == 64 and cost.lengths[-1] == 1_048_576
    for n, s, lin in zip(cost.lengths, cost.softmax, cost.linear):
        assert s == 2 * n * n * d and lin == 2 * n * d * d + 2 * n * d
    first = next(n for n in range(1, 10_000) if 2 * n * d * d + 2 * n * d < 2 * n * n * d)
    assert cost.crossover == first == d + 2
    assert cost.ratio_last == pytest.approx(cost.softmax[-1] / cost.linear[-1])


# --- sliding windows --------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def window_plans(toy_model):
    from attention_manim.model.session import ModelSession
    from attention_manim.scenes.setting import SceneInputs

    session = ModelSession(toy_model, "toy")
    lesson = load_all()["sliding_window"].lesson

    def plans(**options):
        setting = lesson.setting(SceneInputs(tracer=session, model=toy_model.info, options=options))
        return setting, lesson.plans(setting)

    return plans


@pytest.mark.parametrize("w", [8, 4])
def test_the_window_plans_against_numpy(window_plans, toy_model, w):
    setting, (mask, reach, sinks) = window_plans(**({} if w == 8 else {"window": w}))
    tr = setting.trace
    assert tr.text == toy_model.info.examples["long"]
    N, H = tr.n_tokens, len(tr.layers[0].heads)
    outside = np.array([outside_by_hand(tr.head(0, h).pattern.astype(np.float64), w) for h in range(H)])
    # the grid: the text's first tokens, one real head, the cells the window removes
    n = len(mask.tokens)
    assert mask.window == w and n == min(N, max(16, 2 * w)) and mask.tokens == tr.tokens[:n]
    gone = np.tril(np.ones((n, n), bool)) & ~sees(n, w)
    np.testing.assert_array_equal(mask.removed, gone)
    assert mask.grid_removed == gone.sum() and mask.grid_causal == n * (n + 1) // 2
    full = np.tril(np.ones((N, N), bool)) & ~sees(N, w)
    assert (mask.n_text, mask.text_removed, mask.text_causal) == (N, full.sum(), N * (N + 1) // 2)
    assert mask.layer == 0 and mask.head == int(np.argmax(outside))
    np.testing.assert_allclose(mask.outside, outside, atol=1e-9)
    assert mask.outside_all == pytest.approx(outside.mean(), abs=1e-9)
    np.testing.assert_allclose(mask.pattern, tr.head(0, mask.head).pattern[:n, :n])
    # the reach: the last token's dependencies after each layer, grown here one window at a time
    reached, back = {N + 40 - 1}, []
    for _ in range(reach.layers):
        reached = {j for i in reached for j in range(max(0, i - w + 1), i + 1)}
        back.append(N + 40 - 1 - min(reached))
    assert reach.layers == 4 and reach.n_layers == 1 and list(reach.back) == back == [L * (w - 1) for L in range(1, 5)]
    assert reach.reach_model == w - 1
    covers = [L for L, b in enumerate(back, 1) if b >= N - 1]
    assert reach.first_layer_all == (covers[0] if covers else None)
    # sinks: the first token's weight, the weight kept, the next token with every layer windowed
    first = [float(np.mean(tr.head(0, h).pattern[1:, 0])) for h in range(H)]
    assert sinks.sink_mean == pytest.approx(np.mean(first), abs=1e-9)
    np.testing.assert_allclose(sinks.sink_per_head[0], first, atol=1e-9)
    assert sinks.kept_window == pytest.approx(1 - outside.mean(), abs=1e-9)
    kept_sinks = 1 - np.mean([outside_by_hand(tr.head(0, h).pattern.astype(np.float64), w, 1) for h in range(H)])
    assert sinks.kept_sinks == pytest.approx(kept_sinks, abs=1e-9)
    assert sinks.windows == tuple(sorted({x for x in (4, 8, 16, 32, 64) if x < N} | {w}))
    assert sinks.windows[sinks.at] == w
    for k, x in enumerate(sinks.windows):
        for s, got_kept, got_kl in ((0, sinks.window_kept[k], sinks.window_kl[k]),
                                    (1, sinks.sink_kept[k], sinks.sink_kl[k])):
            def windowed(ht, x=x, s=s):
                return masked_softmax(ht.scores.astype(np.float64), sees(N, x, s))

            ok, kl = effect(tr.logits[-1], toy_logits(toy_model, tr, windowed))
            assert got_kept == ok and got_kl == pytest.approx(kl, abs=1e-5)
    assert sinks.token == tr.vocab[int(np.argmax(tr.logits[-1]))]
    assert sinks.tail_text == " ".join(tr.tokens[-6:])
    # how far the windows could reach, and the layers a token seen_back tokens back must be handed through
    assert sinks.reach_model == reach.reach_model == w - 1
    seen = next((b for b, t in enumerate(reversed(tr.tokens), 1) if t == sinks.token), None)
    assert sinks.seen_back == seen and sinks.hops == (None if seen is None else math.ceil(seen / (w - 1)))
    lost = not sinks.window_kept[sinks.at] and not sinks.sink_kept[sinks.at]
    assert sinks.reach_not_enough == (lost and seen is not None and seen <= w - 1)
    assert mask.layout == setting.layout == "video"


@pytest.mark.parametrize("lang", LANGS)
def test_the_sink_captions_largest_weight_is_the_largest_bar_drawn(lang, make_inputs, render_scene):
    """The toy's sink chart draws a bar per head: the caption's "at most" is the largest of those bars, with
    its layer and head, as the bar labels print it."""
    from attention_manim.scenes.chapters.beyond_parts import dec, panel_digits
    from attention_manim.scenes.i18n import Say

    scene, _ = render_scene(load_all()["sliding_window"], make_inputs(lang=lang), png=False)
    drawn = scene.stage.drawn["window_sinks"]["sink_bars"]
    setting = load_all()["sliding_window"].lesson.setting(make_inputs(lang=lang))
    sinks = load_all()["sliding_window"].lesson.plans(setting)[2]
    assert sinks.per_head and len(drawn) == sinks.sink_per_head.size
    say = Say(lang)
    values = [float(v) for v in np.ravel(sinks.sink_per_head)]
    layer, head = np.unravel_index(int(np.argmax(sinks.sink_per_head)), sinks.sink_per_head.shape)
    assert sinks.shown_top == max(values) and (sinks.shown_top_layer, sinks.shown_top_head) == (layer, head)
    # one convention for the chart: three decimals for all when any non-zero weight would read 0.00
    digits = 3 if any(0 < v < 0.005 for v in [*values, sinks.sink_mean]) else 2
    assert panel_digits([*values, sinks.sink_mean]) == digits
    printed = [m.original_text for _, m in drawn]
    assert {len(t.split("." if lang != "pt" else ",")[1]) for t in printed} == {digits}, printed
    top = dec(max(values), say, digits)
    assert top == max(printed, key=lambda t: float(t.replace(",", ".")))
    said = [c for c, _ in scene.caption_log if dec(sinks.sink_mean, say, digits) in c]
    assert len(said) == 1 and top in said[0], said


def test_the_heads_are_named_in_words_and_numbers_the_languages_way(toy_model):
    """A head is "layer 11 · head 1" (the suite's common.head), never "L11H1"; counts and shares are
    written the language's way (Portuguese: 65.536 and 0,58), bare figures keep their point."""
    from attention_manim.scenes.chapters.beyond_parts import count, dec, head_name, sci
    from attention_manim.scenes.i18n import Say

    en, ko, pt = Say("en"), Say("ko"), Say("pt")
    assert head_name(en, 11, 1) == "layer 11 · head 1" and head_name(ko, 11, 1) == "11층 · 헤드 1"
    assert head_name(pt, 24, 0) == "camada 24 · head 0"
    assert head_name(en, 0, 1, "previous_token") == "layer 0 · head 1: previous token"
    assert (count(65_536, pt), count(65_536, en), count(65_536)) == ("65.536", "65,536", "65,536")
    assert (dec(0.58, pt), dec(0.58, ko), dec(0.58)) == ("0,58", "0.58", "0.58")
    assert sci(1.1e-15, pt) == "1,1×10⁻¹⁵" and sci(8.7e9, en) == "8.7×10⁹"


def test_the_window_option_is_checked_and_tracked(window_plans, make_inputs):
    from attention_manim.scenes.lessons import SLIDING_WINDOW, SOFTMAX
    from attention_manim.scenes.options import unused_options

    for bad in (1, 33, "8", True):
        with pytest.raises(UserError, match="--window"):
            window_plans(window=bad)
    assert unused_options(SLIDING_WINDOW.lesson, make_inputs(options={"window": 4})) == []
    assert unused_options(SOFTMAX.lesson, make_inputs(options={"window": 4})) == ["--window"]
    with pytest.raises(UserError, match="removes nothing"):
        SLIDING_WINDOW.lesson.setting(make_inputs(sentences=["the tiny red fox saw a huge green tower"]))


def test_the_command_line_passes_window_on(capsys):
    def run(*args):
        try:
            render.main(list(args))
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        out, err = capsys.readouterr()
        return code, out, err

    code, out, err = run("lint", "sliding_window", "--model", "toy", "--window", "4", "--lang", "en")
    assert code == 0 and "0 violation" in err + out
    code, _, err = run("lint", "sliding_window", "--model", "toy", "--window", "99")
    assert code == 2 and "--window 99" in err and "Traceback" not in err
    code, _, err = run("lint", "softmax", "--window", "4")
    assert code == 0 and "--window does not apply to softmax" in err


# --- rendered, and linted ---------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", LESSONS)
def test_the_lessons_render_tiny(name, lang, make_inputs, render_scene):
    scene, frame = render_scene(load_all()[name], make_inputs(lang=lang))
    assert frame[..., :3].max() > 100
    assert scene.chapters_played == [c.key for c in load_all()[name].lesson.chapters]
    seconds = float(scene.renderer.time)
    assert 60 <= seconds <= 120, seconds
    if lang == "ko":
        assert all(any("\uac00" <= ch <= "\ud7a3" for ch in c) for c, _ in scene.caption_log)
    if name == "sliding_window":  # never "goes from 0.99 to 0.99": the two read apart, or it says they are the same
        kept = scene.stage.drawn["window_sinks"]["kept"]
        shown = [v.original_text for v in kept.values]
        plan = scene.plans[2]
        same = f"{plan.kept_window:.4f}" == f"{plan.kept_sinks:.4f}"
        assert (shown[0] == shown[1]) == same
        if same:  # the bars write the four decimals the caption's "does not change" rests on
            assert len(shown[0].replace(",", ".").split(".")[1]) == 4, shown


def test_two_figures_take_the_decimals_that_tell_them_apart():
    from attention_manim.scenes.chapters.beyond_parts import telling_digits

    assert telling_digits(0.27, 0.61) == 2 and telling_digits(0.9912, 0.9935) == 3
    assert telling_digits(0.99361, 0.99364) == 4  # as far as it goes


def lint(name, lang, model):
    from attention_manim.scenes import review
    from attention_manim.scenes.batch import Job, Worker

    global _WORKER
    if _WORKER is None:
        _WORKER = Worker()
    inputs = _WORKER.inputs(Job(scene=name, lang=lang, model=model))
    return [v.line() for v in review.lint_scene(load_all()[name], inputs, name=name, model=model).violations
            if not v.exception]


_WORKER = None


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", LESSONS)
def test_lint_is_clean_on_the_toy(name, lang):
    assert lint(name, lang, "toy") == []


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("name", LESSONS)
def test_lint_is_clean_on_smollm2(name, lang, smollm2_model):
    assert lint(name, lang, "smollm2") == []


def test_smollm2_numbers_are_measured_where_the_lesson_shows_them(smollm2_model):
    """The passage's real numbers, recomputed here from the session's traces (the heavy model runs are
    the session's, cached: read back through the plans)."""
    from attention_manim.model.passages import LONG_PASSAGE, PASSAGES
    from attention_manim.scenes.batch import Job

    lint("sliding_window", "en", "smollm2")  # loads the session once
    session, info = _WORKER.models[("smollm2", "auto")]
    setting = load_all()["sliding_window"].lesson.setting(_WORKER.inputs(Job(scene="sliding_window", model="smollm2")))
    mask, reach, sinks = load_all()["sliding_window"].lesson.plans(setting)
    tr = session.trace(LONG_PASSAGE)
    assert setting.trace.text == LONG_PASSAGE and tr.n_tokens == 166
    L, H = info.n_layers, info.n_heads
    first = np.array([[float(np.mean(tr.head(l, h).pattern[1:, 0])) for h in range(H)] for l in range(L)])
    assert sinks.sink_mean == pytest.approx(first.mean(), abs=1e-6)
    assert sinks.sink_top == pytest.approx(first.mean(1).max(), abs=1e-6)
    out = np.array([outside_by_hand(tr.head(mask.layer, h).pattern.astype(np.float64), 8) for h in range(H)])
    np.testing.assert_allclose(mask.outside, out, atol=1e-6)
    assert reach.back[:L] == tuple(l * 7 for l in range(1, L + 1)) and reach.reach_model == 210
    # linear: the pooled measures over the passages, by hand
    lsetting = load_all()["linear_attention"].lesson.setting(_WORKER.inputs(Job(scene="linear_attention", model="smollm2")))
    pattern = load_all()["linear_attention"].lesson.plans(lsetting)[1]
    tv = rows = 0.0
    for text in PASSAGES:
        t = session.trace(text)
        for l in range(L):
            for h in range(H):
                s, lin = two_patterns(t.head(l, h))
                tv += (0.5 * np.abs(s - lin).sum(1)).sum()
        rows += t.n_tokens
    assert pattern.tv == pytest.approx(tv / rows / (L * H), abs=1e-6)
    assert pattern.runs == 3 * L and 0 <= pattern.kept_count <= pattern.runs


# --- the window's grid: every token labelled, at the video's size -------------------------------------


def grid_at_chapter_end(inputs):
    """The sliding window's grid as the `window_mask` chapter leaves it (played with the lint's
    observer machinery, nothing drawn), and whether its labels are on screen then."""
    from attention_manim.scenes import review

    class Watch(review.Observer):
        def chapter_done(self, scene, key, number):
            if key == "window_mask":
                self.grid = scene.stage.drawn[key]["grid"]
                self.seen = {id(m) for top in scene.mobjects for m in top.get_family()}

    watch = Watch()
    review.play_watched(load_all()["sliding_window"], inputs, watch)
    return watch


def label_px(labels) -> float:
    """The cap height (px at 720p) of a grid's merged labels, measured as the lint measures them: the
    font size they were built at, times how much the grid has been scaled since."""
    from attention_manim.scenes import review

    fs, ref, ref_height = labels.lint_text
    return fs * (ref.height / ref_height) * review._cap_heights()["latin"] * 90


def check_grid_labels(watch):
    grid = watch.grid
    n = grid.n
    assert grid.shown_labels == {"rows": list(range(n)), "cols": list(range(n))}  # none dropped
    assert grid.label_stride == (1, 1) and n >= 16
    for labels in (grid.row_labels, grid.col_labels):
        assert id(labels) in watch.seen
        assert label_px(labels) >= 14.5, label_px(labels)  # the video's size, not the 11 px floor


@pytest.mark.parametrize("lang", LANGS)
def test_the_window_grid_labels_every_token_at_a_readable_size(lang, make_inputs):
    check_grid_labels(grid_at_chapter_end(make_inputs(lang=lang)))


def test_the_window_grid_labels_smollm2_tokens_at_a_readable_size(smollm2_model):
    """SmolLM2's long pieces ("␣sunrise") were 12 px at the grid's default label size."""
    from attention_manim.scenes.batch import Job

    lint("sliding_window", "en", "smollm2")  # loads the session once
    check_grid_labels(grid_at_chapter_end(_WORKER.inputs(Job(scene="sliding_window", model="smollm2"))))


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_linear_grids_label_every_token_at_a_readable_size(lang, make_inputs):
    """The softmax and the linear pattern side by side: both grids label every token at the video's size
    (two grids share the frame's width: at the default label size they read at 13 px)."""
    from attention_manim.scenes import review

    class Watch(review.Observer):
        def chapter_done(self, scene, key, number):
            if key == "linear_pattern":
                self.grids = scene.stage.drawn[key]["grids"]

    watch = Watch()
    review.play_watched(load_all()["linear_attention"], make_inputs(lang=lang), watch)
    assert len(watch.grids) == 2
    for grid in watch.grids:
        assert grid.shown_labels == {"rows": list(range(grid.n)), "cols": list(range(grid.n))}
        assert min(label_px(grid.row_labels), label_px(grid.col_labels)) >= 14.5


def _chapter_drawn(scene_name: str, inputs, key: str) -> dict:
    from attention_manim.scenes import review

    class Watch(review.Observer):
        def chapter_done(self, scene, k, number):
            if k == key:
                self.drawn = dict(scene.stage.drawn[k])

    watch = Watch()
    review.play_watched(load_all()[scene_name], inputs, watch)
    return watch.drawn


def _distance_to_polyline(p, line) -> float:
    pts = np.asarray(line.points)[:, :2]  # a polyline's handles lie on its segments
    best = np.inf
    for a, b in zip(pts[:-1], pts[1:]):
        t = np.clip(np.dot(p - a, b - a) / max(np.dot(b - a, b - a), 1e-12), 0, 1)
        best = min(best, float(np.linalg.norm(p - (a + t * (b - a)))))
    return best


def test_the_crossover_is_marked_where_the_curves_meet(smollm2_model, make_inputs):
    """SmolLM2 (d = 64): the curves cross at n = 66, just right of the first length drawn; the mark sits
    on both curves and its note beside it (it sat far to the right). The toy's heads cross before the
    first length drawn: no mark, the note only."""
    from attention_manim.scenes.batch import Job

    lint("linear_attention", "en", "smollm2")  # loads the session once
    drawn = _chapter_drawn("linear_attention", _WORKER.inputs(Job(scene="linear_attention", model="smollm2")),
                           "linear_cost")
    mark, note = drawn["crossover"]
    centre = mark.get_center()[:2]
    for curve in drawn["curves"]:
        assert _distance_to_polyline(centre, curve[0]) < 0.03
    gap = np.linalg.norm(note.get_left()[:2] - centre)
    assert gap < 1.5, gap
    assert "66" in " ".join(getattr(m, "original_text", "") for m in note.get_family())
    toy = _chapter_drawn("linear_attention", make_inputs(), "linear_cost")
    assert len(toy["crossover"]) == 1  # the note alone


def test_every_length_tick_of_the_cost_chart_is_named(make_inputs):
    """Review 34: a bare tick stood between "16,384" and "1,048,576" (its label was left out, as it would
    touch the next one). Each tick on the length axis has its number under it, or is not drawn."""
    from manim import Line, Text

    ticks = _chapter_drawn("linear_attention", make_inputs(), "linear_cost")["ticks"]
    marks = [m for m in ticks if isinstance(m, Line) and m.width < 1e-6]  # the length axis's ticks stand upright
    names = [m for m in ticks if isinstance(m, Text)]
    assert len(marks) >= 3
    for mark in marks:
        under = [n for n in names if abs(n.get_x() - mark.get_x()) < 0.05 and n.get_top()[1] < mark.get_bottom()[1]]
        assert len(under) == 1, f"a tick at x={mark.get_x():.2f} has {len(under)} numbers under it"


def test_real_tokens_come_with_the_space_key(smollm2_model, make_inputs):
    """SmolLM2's tokens show their leading space as ␣: the ring's steps and the window's grid and table
    say what it means; the toy's words have none, and no key is drawn."""
    from attention_manim.scenes.batch import Job

    lint("sliding_window", "en", "smollm2")  # loads the session once
    for scene_name, key in (("ring_attention", "ring"), ("sliding_window", "window_mask")):
        real = _chapter_drawn(scene_name, _WORKER.inputs(Job(scene=scene_name, model="smollm2")), key)
        assert real["spaces"] is not None and real["spaces"].original_text == "␣ = a space before the word"
        toy = _chapter_drawn(scene_name, make_inputs(), key)
        assert toy["spaces"] is None


def test_the_windowed_next_token_draws_each_kl_as_a_bar_on_one_scale(smollm2_model, make_inputs):
    """The next token with every layer windowed (review 37: a table of small figures read as a slide): each
    prediction's KL a bar in a track, on one scale for the table, the largest filling its track (SmolLM2:
    KL 13.50); a KL under 1 nat never fills it (the toy's KLs of 0.000 drew full tracks); green where the
    prediction is the full model's, red where not (said in a legend), and the KL written beside it."""
    from attention_manim.scenes.batch import Job
    from attention_manim.scenes.chapters.sliding_window import KL_BAR, kl_text
    from attention_manim.scenes.i18n import Say

    lint("sliding_window", "en", "smollm2")  # loads the session once
    for inputs, lang in ((_WORKER.inputs(Job(scene="sliding_window", model="smollm2", lang="pt")), "pt"),
                         (make_inputs(lang="en"), "en")):
        drawn = _chapter_drawn("sliding_window", inputs, "window_sinks")
        setting = load_all()["sliding_window"].lesson.setting(inputs)
        plan = load_all()["sliding_window"].lesson.plans(setting)[2]
        kls = [float(v) for v in (*plan.window_kl, *plan.sink_kl)]
        top = max(kls)
        rows = drawn["table"]
        assert len(rows) == 1 + len(plan.windows)
        widths = []
        for i, row in enumerate(rows[1:]):
            for cell, kl, ok in ((row[1], plan.window_kl[i], plan.window_kept[i]), (row[2], plan.sink_kl[i], plan.sink_kept[i])):
                s = cell.track.width / KL_BAR  # (the table is scaled to fit the frame)
                assert cell.track.width == pytest.approx(rows[1][1].track.width)  # one track for all
                assert cell.bar.get_left()[0] == pytest.approx(cell.track.get_left()[0])
                widths.append(cell.bar.width / cell.track.width)
                assert cell.bar.width == pytest.approx(s * max(KL_BAR * float(kl) / max(top, 1.0), 0.02), abs=1e-6)
                color = _theme().key if ok else _theme().mask  # the token says right or not; the bars are grey
                assert cell.token.get_fill_color().to_hex().lower() == color.lower()
                assert cell.bar.get_fill_color().to_hex().lower() == _theme().text.lower()
                assert cell.kl.original_text == f"KL {kl_text(kl, Say(lang))}"
                assert cell.kl.get_left()[0] > cell.track.get_right()[0] and cell.token.get_right()[0] < cell.track.get_left()[0]
                # the token and its KL on one baseline (review 46: pt's "KL 13,50" stood 4 px high, its comma boxed)
                from attention_manim.scenes.components.text import text_baseline

                assert text_baseline(cell.kl) == pytest.approx(text_baseline(cell.token), abs=0.01)
        # a row's box keeps clear of the notes under the table (review 52: ko's stood 6 px over them)
        for box in (drawn["mark"], drawn.get("again")):
            if box is not None:
                assert box.get_bottom()[1] - drawn["kl_notes"].get_top()[1] >= 0.12
        # a legend says what a bar's length and a token's colour mean (review 43), its colour words in their colours
        legend = drawn["kl_legend"]
        said = " ".join(m.original_text for m in legend[0].get_family() if hasattr(m, "original_text"))
        assert said == Say(lang)("beyond.window.kl_bars")
        coloured = {m.original_text: m.get_fill_color().to_hex().lower() for m in legend[1].get_family()
                    if hasattr(m, "original_text")}
        assert coloured[Say(lang)("beyond.window.kept_word")] == _theme().key.lower()
        assert coloured[Say(lang)("beyond.window.lost_word")] == _theme().mask.lower()
        # a wider window whose KL (as written) rises is said, with the first such pair (review 49: 10.19 at 8,
        # 10.76 at 16); a table where no KL rises says nothing of it
        rises = [(c, k) for c, col in enumerate((plan.window_kl, plan.sink_kl)) for k in range(len(col) - 1)
                 if float(kl_text(col[k + 1])) > float(kl_text(col[k]))]
        if rises:
            c, k = rises[0]
            col = (plan.window_kl, plan.sink_kl)[c]
            say = Say(lang)
            wanted = say("beyond.window.kl_rise", column=say(f"beyond.window.{('col_window', 'col_sinks')[c]}"),
                         narrow=plan.windows[k], wide=plan.windows[k + 1], a=kl_text(col[k], say), b=kl_text(col[k + 1], say))
            written = " ".join(m.original_text for m in drawn["kl_rise"].get_family() if hasattr(m, "original_text"))
            assert written.replace(" ", "") == wanted.replace(" ", "")
            assert drawn["kl_rise"].get_bottom()[1] > -4.0
        else:
            assert "kl_rise" not in drawn
        if top >= 1.0:  # the largest fills its track
            assert max(widths) == pytest.approx(1.0)
        else:
            assert max(widths) < 0.05
    assert lang == "en" and top < 0.01  # the toy: every KL near 0, every bar a speck


def _theme():
    from attention_manim.scenes.style import DARK

    return DARK


@pytest.mark.parametrize("lang", ["ko"])  # (the Korean title: its Hangul and the math on one line)
def test_the_linear_title_writes_phi_as_its_formulas_do(lang, make_inputs):
    """Review 37: the title's text φ was the other form of the letter than the formulas' φ under it. The
    title types it as math, as they do, and no piece of its text holds a φ of its own."""
    from manim import MathTypst

    title = _chapter_drawn("linear_attention", make_inputs(lang=lang), "linear_kernel")["title"]
    assert len([m for m in title.get_family() if isinstance(m, MathTypst)]) == 1
    texts = [m.original_text for m in title.get_family() if hasattr(m, "original_text")]
    assert texts and not any("φ" in t or "ϕ" in t for t in texts), texts


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_scaled_note_types_q_as_its_formula_does(lang, make_inputs):
    """Review 43: "from here on, q stands for q/√d" set its first q upright beside the formula's italic q. The
    note types both as math, and no piece of its words holds a q of its own."""
    from manim import MathTypst

    scaled = _chapter_drawn("linear_attention", make_inputs(lang=lang), "linear_kernel")["formulas"][-1]
    assert len([m for m in scaled.get_family() if isinstance(m, MathTypst)]) == 2  # q, and q/√d
    texts = [m.original_text for m in scaled.get_family() if hasattr(m, "original_text")]
    assert texts and not any(w in ("q", "q:") or " q " in f" {t} " for t in texts for w in t.split()), texts
    # the q hangs its tail under the words' line, as a q does (review 46: seated by its tail, it stood high)
    from attention_manim.scenes.components.text import text_baseline

    q = next(m for m in scaled.get_family() if isinstance(m, MathTypst))
    words = next(m for m in scaled.get_family() if hasattr(m, "original_text") and any(c.isalpha() for c in m.original_text))
    x_height = q.height * 0.6
    assert text_baseline(words) - 0.6 * x_height < q.get_bottom()[1] < text_baseline(words) - 0.15 * x_height


def test_the_regrouped_products_stand_on_one_line_and_type_their_sizes(make_inputs):
    """Review 46: φ(Q), whose name stands over its bar, was centred with its name and stood 14 px under the
    matrices beside it; "the n × n grid first" and "n = 256 tokens, d = 64" set n and d upright beside the
    italic ones of the formulas. Each row's shapes are centred on one line, and the notes type n and d."""
    from manim import MathTypst

    drawn = _chapter_drawn("linear_attention", make_inputs(lang="en"), "linear_kernel")
    for shapes in drawn["shapes"]:
        middles = [s[0].get_center()[1] for s in shapes]
        assert max(middles) - min(middles) < 1e-6, middles
    for row in (drawn["grid_row"], drawn["state_row"]):
        note = row[0][0]  # "the n × n grid first", "a d × d state first"
        assert len([m for m in note.get_family() if isinstance(m, MathTypst)]) == 1
        words = " ".join(m.original_text for m in note.submobjects if not isinstance(m, MathTypst))
        assert not ({"n", "d"} & set(words.split())), words


def test_the_normalizer_formula_is_set_as_tall_as_its_sentence(make_inputs):
    """Review 47: the "not drawn: each output row is then divided by φ(qᵢ)·z, z = Σⱼ φ(kⱼ)" note set its Σ
    display-size: the formula stood 1.7 times as tall as the words' line (ascenders to descenders). With
    its subscripts hanging under the line, it stands less than 1.5 times."""
    drawn = _chapter_drawn("linear_attention", make_inputs(lang="en"), "linear_kernel")
    words, formula = drawn["normalizer"]
    assert formula.height < 1.5 * words.height, (formula.height, words.height)


def test_the_reach_charts_passage_start_is_not_in_the_highlighted_layers_colour(make_inputs):
    """Review 49 (ko): yellow named both the passage's start and the layer whose reach first covers it. The
    start is drawn in the text's colour; yellow is left to that layer's bar."""
    drawn = _chapter_drawn("sliding_window", make_inputs(lang="ko"), "window_reach")
    th = _theme()
    start = drawn["start"]
    assert start.get_stroke_color().to_hex().lower() == th.text.lower() != th.highlight.lower()
    lit = [b for b in drawn["bars"] if b.get_fill_color().to_hex().lower() == th.highlight.lower()]
    assert len(lit) <= 1


def test_role_hits_count_the_queries_whose_top_key_is_the_roles():
    from attention_manim.scenes.plans.honesty import role_hits

    p = np.array([[1, 0, 0, 0], [0.9, 0.1, 0, 0], [0.1, 0.6, 0.3, 0], [0.5, 0.2, 0.1, 0.2]])
    assert role_hits(p, "previous_token") == (2, 3)  # rows 1 and 2 pick the token before; row 3 the first
    assert role_hits(p, "first_token") == (2, 3)  # rows 1 and 3
    assert role_hits(p, "induction") is None and role_hits(p, "") is None


def test_a_previous_token_head_says_how_often_it_is_one_on_this_sentence(smollm2_model):
    """SmolLM2's 11.1, measured a previous-token head over many passages, sends "d" and "ant" (pieces of
    "␣verdant") back to "␣the" on the lesson's sentence (review 50): the head line under the title says for how
    many of the queries the token before is the top key, counted here from the drawn softmax pattern."""
    from attention_manim.scenes.batch import Job

    lint("sliding_window", "en", "smollm2")  # loads the session once
    drawn = _chapter_drawn("linear_attention", _WORKER.inputs(Job(scene="linear_attention", model="smollm2")),
                           "linear_pattern")
    setting = load_all()["linear_attention"].lesson.setting(_WORKER.inputs(Job(scene="linear_attention", model="smollm2")))
    plan = load_all()["linear_attention"].lesson.plans(setting)[1]
    assert plan.role == "previous_token"
    p = plan.softmax
    hits = sum(int(np.argmax(p[i])) == i - 1 for i in range(1, len(p)))
    assert 0 < hits < len(p) - 1
    assert drawn["head_line"].original_text.endswith(f"(the top key for {hits} of {len(p) - 1} queries)")
