"""Beyond n²: ring attention (model/ring.py, local and on Ray), linear attention
(model/linear_attention.py) and sliding windows with attention sinks (model/sliding_window.py),
each against numbers computed here in plain numpy, never by the code under test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from attention_manim.model.ring import partition, ring_attention, ring_memory

# --- plain numpy written here ------------------------------------------------------------------------


def softmax_attention(q, k, v, causal):
    """Ordinary attention: the whole score matrix, softmax per row, times v (float64)."""
    q, k, v = (np.asarray(a, dtype=np.float64) for a in (q, k, v))
    s = q @ k.T / np.sqrt(q.shape[1])
    if causal:
        s[np.triu_indices(len(q), 1)] = -np.inf
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ v


def softmax_rows(s):
    e = np.exp(s - s.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def elu1(x):
    x = np.asarray(x, dtype=np.float64)
    out = np.empty_like(x)
    for idx, val in np.ndenumerate(x):
        out[idx] = val + 1.0 if val > 0 else math.exp(val)
    return out


def qkv(n, d=5, d_v=3, seed=0, scale=1.5):
    rng = np.random.default_rng(seed)
    return rng.normal(scale=scale, size=(n, d)), rng.normal(scale=scale, size=(n, d)), rng.normal(size=(n, d_v))


# --- ring attention ----------------------------------------------------------------------------------


def blocks_by_hand(n, N, striped):
    if striped:
        return [[t for t in range(n) if t % N == i] for i in range(N)]
    sizes = [n // N + (1 if i < n % N else 0) for i in range(N)]
    starts = [sum(sizes[:i]) for i in range(N)]
    return [list(range(s, s + z)) for s, z in zip(starts, sizes)]


@pytest.mark.parametrize("striped", [False, True])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n", [13, 16])
@pytest.mark.parametrize("N", [1, 2, 3, 4, 7])
def test_ring_equals_full_attention(N, n, causal, striped):
    q, k, v = qkv(n, seed=N * 100 + n)
    res = ring_attention(q, k, v, N, causal=causal, striped=striped, bytes_per_number=2)
    want = softmax_attention(q, k, v, causal)
    blocks = blocks_by_hand(n, N, striped)
    assert [list(t) for t in res.tokens] == blocks
    for i, rows in enumerate(blocks):  # every device's own rows
        assert np.abs(res.device_outputs[i] - want[rows]).max() < 1e-6
    assert np.abs(res.output - want).max() < 1e-6 and res.max_diff < 1e-6
    # the block device i holds at step t started on device (i − t) mod N, and what it received
    assert len(res.steps) == N * N
    for t in range(N):
        for i in range(N):
            st = res.at(t, i)
            assert (st.step, st.device, st.kv_block) == (t, i, (i - t) % N)
            assert st.bytes_received == (0 if t == 0 else len(blocks[(i - t) % N]) * (5 + 3) * 2)
    # the work: every causal (query, key) pair once, or every pair
    for i, rows in enumerate(blocks):
        assert res.cells[i] == (sum(r + 1 for r in rows) if causal else len(rows) * n)


def test_running_max_sum_and_output_after_each_step():
    n, N = 11, 3
    q, k, v = qkv(n, seed=3)
    res = ring_attention(q, k, v, N, causal=True)
    s = q @ k.T / np.sqrt(5)
    s[np.triu_indices(n, 1)] = -np.inf
    blocks = blocks_by_hand(n, N, False)
    for i, rows in enumerate(blocks):
        seen: list[int] = []
        for t in range(N):
            seen += blocks[(i - t) % N]
            st = res.at(t, i)
            sub = s[np.ix_(rows, seen)]
            m = sub.max(axis=1)
            np.testing.assert_allclose(st.m, m, atol=1e-12)
            e = np.exp(sub - m[:, None])
            np.testing.assert_allclose(st.l, e.sum(axis=1), rtol=1e-12)
            np.testing.assert_allclose(st.O, e @ v[seen], rtol=1e-10, atol=1e-12)


def test_causal_busy_steps_contiguous_uneven_striped_even():
    q, k, v = qkv(10)
    # contiguous: device i holds blocks i, i−1, ..., 0 (busy) then N−1, ..., i+1 (all in the future)
    assert ring_attention(q, k, v, 4, causal=True).busy_steps == (1, 2, 3, 4)
    # striped with at least two tokens per device: every block has a key before some query of every device
    assert ring_attention(q, k, v, 4, causal=True, striped=True).busy_steps == (4, 4, 4, 4)
    assert ring_attention(q, k, v, 5, causal=True, striped=True).busy_steps == (5, 5, 5, 5, 5)
    assert ring_attention(q, k, v, 4).busy_steps == (4, 4, 4, 4)
    assert ring_attention(q, k, v, 7, causal=True).busy_steps == (1, 2, 3, 4, 5, 6, 7)
    # 11 tokens on 7 devices, striped: devices 4, 5, 6 hold one token each (4, 5, 6), so device 4
    # idles on the blocks starting at tokens 5 and 6, device 5 on block 6, device 6 never
    q, k, v = qkv(11)
    assert ring_attention(q, k, v, 7, causal=True, striped=True).busy_steps == (7, 7, 7, 7, 5, 6, 7)
    # idle steps compute nothing and leave m, l, O as they were
    res = ring_attention(q, k, v, 3, causal=True)
    for st in res.steps:
        if not st.busy:
            prev = res.at(st.step - 1, st.device)
            assert st.cells == 0 and np.array_equal(st.O, prev.O) and np.array_equal(st.l, prev.l)


def test_ring_refuses_bad_device_counts():
    q, k, v = qkv(5)
    for N in (0, -1, 6):
        with pytest.raises(ValueError):
            ring_attention(q, k, v, N)
    with pytest.raises(ValueError):
        partition(3, 4)
    assert ring_attention(q, k, v, 5, causal=True).busy_steps == (1, 2, 3, 4, 5)  # N == n is fine


def test_ring_memory_by_hand():
    # SmolLM2's sizes at a million tokens in bf16 on 8 devices: K and V of one token in one layer are
    # 2 · 3 kv heads · 64 · 2 bytes = 768 bytes
    m = ring_memory(1_000_000, 64, 3, 30, 2, 8)
    assert m.kv_token_layer == 768
    assert m.block_tokens == 125_000
    assert m.full_kv == 23_040_000_000
    assert m.kv_per_device == 2_880_000_000
    assert m.ring_buffers == 192_000_000
    assert m.sent_per_step == 96_000_000
    assert m.sent_per_device == 7 * 96_000_000 * 30
    assert m.sent_total == 161_280_000_000
    assert m.peak_per_device == 3_072_000_000
    # uneven: 10 tokens on 3 devices, the largest block 4 tokens
    u = ring_memory(10, 2, 1, 1, 4, 3)
    assert (u.block_tokens, u.kv_token_layer, u.sent_per_step, u.sent_total) == (4, 16, 64, 2 * 10 * 16)
    assert isinstance(ring_memory(2**40, 128, 8, 80, 2, 1024).sent_total, int)
    for bad in ((10, 2, 1, 1, 4, 11), (10, 2, 1, 1, 4, 0), (0, 2, 1, 1, 4, 1)):
        with pytest.raises(ValueError):
            ring_memory(*bad)


@pytest.mark.ray
def test_ray_ring_equals_local_ring():
    pytest.importorskip("ray")
    from attention_manim.model.ring import ring_attention_ray

    q, k, v = qkv(10, seed=5)
    got = ring_attention_ray(q, k, v, 3, causal=True, striped=True)
    local = ring_attention(q, k, v, 3, causal=True, striped=True)
    assert np.abs(got.output - local.output).max() <= 1e-6
    assert np.abs(got.output - softmax_attention(q, k, v, True)).max() < 1e-6
    assert got.busy_steps == local.busy_steps == (3, 3, 3)
    assert [(s.kv_block, s.bytes_received, s.cells) for s in got.steps] == \
           [(s.kv_block, s.bytes_received, s.cells) for s in local.steps]


def test_ring_command_line_refuses_in_one_line(capsys):
    from attention_manim.model.ring import main

    for argv in (["--devices", "0"], ["--devices", "500"], ["--layer", "9"], ["--head", "4"], ["--head", "-1"]):
        assert main(["--model", "toy", *argv]) == 2
        err = capsys.readouterr().err
        assert err.startswith("error: ") and err.count("\n") == 1, err
    assert main(["--model", "toy", "--devices", "3"]) == 0
    out = capsys.readouterr().out
    assert "busy steps:         [1, 2, 3] of 3" in out and "busy steps:         [3, 3, 3] of 3" in out


# --- linear attention --------------------------------------------------------------------------------


def test_linear_forms_agree():
    from attention_manim.model.linear_attention import (
        elu_plus_one, linear_causal, linear_quadratic, linear_regrouped, random_features)

    q, k, v = qkv(9, d=4, d_v=3, seed=11)
    x = np.linspace(-3, 3, 13)
    np.testing.assert_allclose(elu_plus_one(x), elu1(x), rtol=1e-15)
    # the quadratic form, written out here
    fq, fk = elu1(q / 2.0), elu1(k)  # scale 1/√4
    a = fq @ fk.T
    np.testing.assert_allclose(linear_quadratic(q, k, v)[0], (a / a.sum(1, keepdims=True)) @ v, rtol=1e-12)
    am = np.tril(a)
    np.testing.assert_allclose(linear_quadratic(q, k, v, causal=True)[0], (am / am.sum(1, keepdims=True)) @ v,
                               rtol=1e-12)
    for phi in (elu_plus_one, random_features(4, 16, seed=2)):
        quad, _ = linear_quadratic(q, k, v, phi=phi)
        reg = linear_regrouped(q, k, v, phi=phi)
        assert reg.S.shape == (phi(q).shape[1], 3) and reg.z.shape == (phi(q).shape[1],)
        assert np.abs(reg.output - quad).max() <= 1e-5
        masked, _ = linear_quadratic(q, k, v, causal=True, phi=phi)
        rnn = linear_causal(q, k, v, phi=phi)
        assert np.abs(rnn.output - masked).max() <= 1e-5
        if phi is elu_plus_one:
            fk = elu1(k)
        else:  # k·√(1/√4), and the keys' largest exponent taken out
            kk = k * math.sqrt(0.5)
            e = kk @ phi.W.T - 0.5 * (kk ** 2).sum(1, keepdims=True)
            fk = np.exp(e - e.max())
        t = 5
        np.testing.assert_allclose(rnn.S[t], sum(np.outer(fk[s], v[s]) for s in range(t + 1)), rtol=1e-12)
        np.testing.assert_allclose(rnn.z[t], fk[: t + 1].sum(0), rtol=1e-12)
        # the last causal row sees everything: the non-causal last row
        np.testing.assert_allclose(rnn.output[-1], reg.output[-1], rtol=1e-10)


def test_random_features_approximate_the_softmax_kernel():
    from attention_manim.model.linear_attention import random_features

    rng = np.random.default_rng(0)
    x, y = rng.normal(scale=0.3, size=(2, 8))
    rf = random_features(8, 20000, seed=1)
    assert abs(float((rf(x[None]) @ rf(y[None]).T)[0, 0]) / math.exp(x @ y) - 1) < 0.05
    assert np.array_equal(random_features(8, 4, seed=3).W, random_features(8, 4, seed=3).W)


def test_random_features_stay_finite_on_large_keys_and_match_in_torch(toy_model):
    from attention_manim.model.linear_attention import linear_override, linear_weights, random_features
    from attention_manim.model.transformer import override_attention

    rf = random_features(4, 32, seed=4)
    q, k, _ = qkv(7, d=4, seed=9, scale=40.0)  # exponents in the hundreds: exp alone overflows
    a = linear_weights(q, k, causal=True, phi=rf)
    assert np.isfinite(a).all() and np.allclose(a.sum(1), 1) and np.all(np.triu(a, 1) == 0)
    # the pattern the model records with the torch version is the numpy one
    rf16 = random_features(16, 64, seed=1)
    text = "the tiny red fox saw a huge green tower"
    with override_attention(toy_model, {0: linear_override(rf16)}):
        tr = toy_model.trace(text)
    for h in range(4):
        ht = tr.head(0, h)
        np.testing.assert_allclose(ht.pattern, linear_weights(ht.q, ht.k, True, rf16), atol=1e-5)


def measures_by_hand(trace):
    """Per layer and head, the row sums of: TV, softmax top weight, linear top weight, linear weight on
    the softmax's top key; q scaled by 1/√d_head before both."""
    L, H = len(trace.layers), len(trace.layers[0].heads)
    out = np.zeros((4, L, H))
    for l in range(L):
        for h in range(H):
            ht = trace.head(l, h)
            q = ht.q.astype(np.float64) / np.sqrt(ht.q.shape[1])
            k = ht.k.astype(np.float64)
            n = len(q)
            s = q @ k.T
            s[np.triu_indices(n, 1)] = -np.inf
            sm = softmax_rows(s)
            lin = np.tril(elu1(q) @ elu1(k).T)
            lin = lin / lin.sum(1, keepdims=True)
            out[0, l, h] = sum(0.5 * np.abs(sm[i] - lin[i]).sum() for i in range(n))
            out[1, l, h] = sm.max(1).sum()
            out[2, l, h] = lin.max(1).sum()
            out[3, l, h] = sum(lin[i, np.argmax(sm[i])] for i in range(n))
    return out


def test_linear_measurements_on_the_toy(tracer):
    from attention_manim.model.linear_attention import compare_model

    texts = ["the tiny red fox saw a huge green tower", "a fluffy blue creature roamed the verdant forest"]
    got = compare_model(tracer, texts)
    sums = sum(measures_by_hand(tracer(t)) for t in texts)
    rows = sum(tracer(t).n_tokens for t in texts)
    assert got.n_tokens == (9, 8)
    for i, f in enumerate(("tv", "top_softmax", "top_linear", "linear_on_softmax_top")):
        np.testing.assert_allclose(getattr(got, f), sums[i] / rows, atol=1e-9)
    # the softmax pattern here is the model's own
    ht = tracer(texts[0]).head(0, 1)
    q = ht.q / np.sqrt(ht.q.shape[1])
    s = q @ ht.k.T
    s[np.triu_indices(len(q), 1)] = -np.inf
    assert np.abs(softmax_rows(s.astype(np.float64)) - ht.pattern).max() < 1e-5


def test_linear_swap_on_the_toy_equals_a_forward_written_here(toy_model, tracer):
    """The toy is one layer, no norms, no MLP: logits = (E + Σ_h A_h·v_h·W_O[h] + b_O)·W_U."""
    from attention_manim.model.linear_attention import swap_effects

    text = "the butler had a knife . the maid saw blood in the kitchen . the cook was asleep in the garden . therefore the murderer was"
    tr = tracer(text)
    x = tr.embeddings.astype(np.float64).copy()
    for h in range(len(tr.layers[0].heads)):
        ht = tr.head(0, h)
        q = ht.q.astype(np.float64) / np.sqrt(ht.q.shape[1])
        a = np.tril(elu1(q) @ elu1(ht.k).T)
        a /= a.sum(1, keepdims=True)
        x += a @ ht.v @ ht.W_O
    x += toy_model.blocks[0].b_O.detach().numpy()
    W_U = toy_model.unembed().detach().numpy().astype(np.float64)
    after = x[-1] @ W_U
    before = tr.logits[-1].astype(np.float64)
    lp, lq = (z - z.max() - np.log(np.exp(z - z.max()).sum()) for z in (before, after))
    kl = float(np.sum(np.exp(lp) * (lp - lq)))
    eff = swap_effects(toy_model, [text]).effects[0][0]
    assert abs(eff.kl - kl) < 1e-4 and kl > 1e-3
    assert eff.top1 == int(np.argmax(before)) and eff.top1_after == int(np.argmax(after))
    assert eff.kept == (np.argmax(before) == np.argmax(after))


def test_the_override_seam_changes_nothing_by_default_and_restores(toy_model, tracer):
    import torch

    from attention_manim.model.linear_attention import linear_override
    from attention_manim.model.transformer import override_attention

    text = "the tiny red fox saw a huge green tower"
    ids = torch.tensor([list(tracer(text).token_ids)])
    with torch.no_grad():
        plain = toy_model(ids)
        with override_attention(toy_model, {0: linear_override()}):
            changed = toy_model(ids)
            t = toy_model.trace(text)
        again = toy_model(ids)
    assert torch.equal(plain, again) and not torch.allclose(plain, changed)
    assert "attention_override" not in toy_model.blocks[0].__dict__
    np.testing.assert_allclose(t.head(0, 0).pattern.sum(1), 1.0, rtol=1e-5)  # the linear pattern, recorded
    from attention_manim.model.errors import UserError

    with pytest.raises(UserError):
        with override_attention(toy_model, {5: linear_override()}):
            pass


def test_costs_by_hand():
    from attention_manim.model.linear_attention import attention_cost, cost_table

    c = attention_cost(1_048_576, 64)
    assert c.softmax == 2 * 1_048_576 ** 2 * 64 == 140_737_488_355_328
    assert c.linear == 2 * 1_048_576 * 64 * 64 + 2 * 1_048_576 * 64 == 8_724_152_320
    assert attention_cost(64, 64).softmax < attention_cost(64, 64).linear  # 64 tokens: softmax is cheaper
    assert attention_cost(66, 64).softmax > attention_cost(66, 64).linear
    assert attention_cost(100, 64, d_features=256).linear == 2 * 100 * 256 * 64 + 2 * 100 * 256
    assert [t.n for t in cost_table(64)][0] == 64 and cost_table(64)[-1].n >= 1_000_000


# --- sliding windows and sinks ----------------------------------------------------------------------------


def test_masks_by_construction():
    from attention_manim.model.sliding_window import (
        removed, removed_count, sink_window_sees, window_mask, window_sees)

    for n, w, s in ((9, 3, 2), (6, 1, 0), (5, 8, 1), (12, 4, 4)):
        win = np.zeros((n, n), bool)
        sw = np.zeros((n, n), bool)
        for i in range(n):
            for j in range(n):
                win[i, j] = i - w + 1 <= j <= i
                sw[i, j] = win[i, j] or (j < s and j <= i)
        assert np.array_equal(window_sees(n, w), win)
        assert np.array_equal(sink_window_sees(n, w, s), sw)
        assert np.array_equal(window_mask(n, w, s), ~sw)
        cut = np.array([[j <= i and not sw[i, j] for j in range(n)] for i in range(n)])
        assert np.array_equal(removed(n, w, s), cut)
        assert removed_count(n, w, s) == int(cut.sum())
    # a million tokens, by formula (the rows drop 1, 2, ..., n − w − s keys)
    n, w, s = 1_000_000, 4096, 4
    assert removed_count(n, w, s) == sum(range(n - w - s + 1))


@pytest.mark.parametrize("w,s", [(2, 0), (3, 0), (5, 0), (3, 2), (4, 1)])
def test_reach_is_the_composed_masks(w, s):
    from attention_manim.model.sliding_window import reach, reach_sees

    n = 40
    step = np.array([[(i - w + 1 <= j <= i) or (j < s and j <= i) for j in range(n)] for i in range(n)], dtype=int)
    r = np.eye(n, dtype=int)
    for L in range(1, 7):
        r = ((r @ step) > 0).astype(int)
        by_formula = np.array([[0 <= i - j <= reach(L, w) or (j < s and j <= i) for j in range(n)] for i in range(n)])
        assert np.array_equal(r.astype(bool), by_formula), (L, w, s)
        assert np.array_equal(reach_sees(n, w, L, s), by_formula)
    assert reach(30, 4) == 90 and reach(0, 9) == 0


def shares_by_hand(p, w, s):
    n = len(p)
    outside = []
    for i in range(w, n):
        outside.append(sum(p[i, j] for j in range(i + 1) if j < i - w + 1 and j >= s))
    return float(np.mean(outside))


def test_weight_outside_and_sinks_on_the_toy(tracer):
    from attention_manim.model.sliding_window import sink_share, weight_outside, window_shares

    tr = tracer(tracer.model.info.examples["long"])
    sh = window_shares(tr, (4, 8), sinks=2)
    for h in range(4):
        p = tr.head(0, h).pattern.astype(np.float64)
        for i, w in enumerate((4, 8)):
            assert abs(sh.outside[0, h, i] - shares_by_hand(p, w, 0)) < 1e-9
            assert abs(sh.outside_sinks[0, h, i] - shares_by_hand(p, w, 2)) < 1e-9
            assert sh.kept_sinks[0, h, i] >= sh.kept[0, h, i] - 1e-12
        assert abs(sh.sink[0, h] - float(np.mean(p[1:, 0]))) < 1e-9
    assert math.isnan(weight_outside(np.eye(3), 3)) and sink_share(np.eye(3)) == 0.0


def test_a_window_as_long_as_the_passage_changes_nothing(toy_model):
    from attention_manim.model.sliding_window import window_effects

    text = toy_model.cfg.examples["long"]
    n = len(toy_model.tokenizer.encode(text)[1])
    ef = window_effects(toy_model, text, windows=(n, 1), sinks=1)
    for e in (ef.window[0], ef.sink_window[0]):
        assert e.kept and e.kl < 1e-9
    assert ef.window[1].kl > 1e-2  # each token alone with itself does change it (the toy's heads look 1-2 back)


# --- SmolLM2: a real head ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def smol_trace(smollm2_model):
    from attention_manim.model.passages import PASSAGES

    return smollm2_model, smollm2_model.trace(PASSAGES[0])


def test_smollm2_ring_equals_the_models_own_head_output(smol_trace):
    model, tr = smol_trace
    assert 32 <= tr.n_tokens <= 64
    for layer, head in ((0, 0), (14, 4), (29, 8)):
        ht = tr.head(layer, head)
        assert ht.kv_head == head // 3  # grouped-query attention: 9 query heads share 3 key/value heads
        full = softmax_attention(ht.q, ht.k, ht.v, True)
        assert np.abs(full - ht.z).max() < 1e-5
        for N, striped in ((4, False), (5, True)):
            res = ring_attention(ht.q, ht.k, ht.v, N, causal=True, striped=striped)
            assert np.abs(res.output - ht.z).max() < 1e-5


def test_smollm2_linear_measurements_and_a_full_window(smol_trace):
    from attention_manim.model.linear_attention import compare_trace
    from attention_manim.model.sliding_window import window_effects

    model, tr = smol_trace
    got = compare_trace(tr)
    want = measures_by_hand(tr)
    for i, f in enumerate(("tv", "top_softmax", "top_linear", "linear_on_softmax_top")):
        np.testing.assert_allclose(got[f], want[i], atol=1e-8)
    ef = window_effects(model, tr.text, windows=(tr.n_tokens,), sinks=4)
    assert ef.window[0].kept and ef.window[0].kl < 1e-9 and ef.sink_window[0].kl < 1e-9
