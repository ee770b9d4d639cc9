"""The model core: the recorded trace equals torch's own attention, and the bookkeeping adds up."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from attention_manim.model.config import ModelConfig
from attention_manim.model.errors import ContextTooLongError, ModelFileError, UnknownWordError
from attention_manim.model.loading import load_model, save_model
from attention_manim.model.transformer import random_model

from .conftest import ROOT

WORDS = "the a cat dog sat on mat big red blue ran fast . ,".split()
SENTENCE = "The big red cat sat on the blue mat, the dog ran fast."


def make(causal=True, layernorm=False, d_mlp=0, bias=False, n_layers=2, seed=0):
    cfg = ModelConfig(name="test", vocab=WORDS, d_model=24, n_heads=3, d_head=8, n_layers=n_layers, n_ctx=32,
                      causal=causal, layernorm=layernorm, d_mlp=d_mlp, bias=bias, directions=["size", "colour"])
    return random_model(cfg, seed=seed, scale=2.0).eval()


CONFIGS = [
    dict(causal=True),
    dict(causal=False),
    dict(causal=True, layernorm=True, d_mlp=48, bias=True),
]


@pytest.mark.parametrize("kw", CONFIGS)
def test_pattern_and_z_match_scaled_dot_product_attention(kw):
    model = make(**kw)
    trace = model.trace(SENTENCE)
    n = trace.n_tokens
    for lt in trace.layers:
        for ht in lt.heads:
            q, k, v = (torch.from_numpy(a)[None, None] for a in (ht.q, ht.k, ht.v))
            z_ref = F.scaled_dot_product_attention(q, k, v, is_causal=kw["causal"])[0, 0].numpy()
            # attention to an identity "value" matrix returns the pattern itself
            eye = torch.eye(n)[None, None]
            pattern_ref = F.scaled_dot_product_attention(q, k, eye, is_causal=kw["causal"])[0, 0].numpy()
            np.testing.assert_allclose(ht.z, z_ref, atol=1e-5)
            np.testing.assert_allclose(ht.pattern, pattern_ref, atol=1e-5)
            np.testing.assert_allclose(ht.scores, (ht.q @ ht.k.T) / np.sqrt(ht.q.shape[1]), atol=1e-5)


@pytest.mark.parametrize("kw", CONFIGS)
def test_rows_sum_to_one_and_blocked_entries_are_exactly_zero(kw):
    trace = make(**kw).trace(SENTENCE)
    for lt in trace.layers:
        for ht in lt.heads:
            np.testing.assert_allclose(ht.pattern.sum(axis=1), 1.0, atol=1e-6)
            assert np.all(ht.pattern[ht.mask] == 0.0)
            n = len(ht.mask)
            expected_mask = np.triu(np.ones((n, n), bool), 1) if kw["causal"] else np.zeros((n, n), bool)
            np.testing.assert_array_equal(ht.mask, expected_mask)


def reference_block(block, x, cfg):
    """The paper's formulation, written independently: concatenated heads, one output matrix."""
    H, D, d = cfg.n_heads, cfg.d_model, cfg.d_head
    a = F.layer_norm(x, (D,), block.ln1.w, block.ln1.b, 1e-5) if cfg.layernorm else x
    Wq = block.W_Q.permute(1, 0, 2).reshape(D, H * d)
    Wk = block.W_K.permute(1, 0, 2).reshape(D, H * d)
    Wv = block.W_V.permute(1, 0, 2).reshape(D, H * d)
    split = lambda t: t.reshape(t.shape[0], H, d).transpose(0, 1)  # noqa: E731
    q = split(a @ Wq + block.b_Q.reshape(-1))
    k = split(a @ Wk + block.b_K.reshape(-1))
    v = split(a @ Wv + block.b_V.reshape(-1))
    z = F.scaled_dot_product_attention(q, k, v, is_causal=cfg.causal)  # [H, n, d]
    concat = z.transpose(0, 1).reshape(x.shape[0], H * d)
    mid = x + concat @ block.W_O.reshape(H * d, D) + block.b_O
    if not cfg.d_mlp:
        return mid
    m = F.layer_norm(mid, (D,), block.ln2.w, block.ln2.b, 1e-5) if cfg.layernorm else mid
    return mid + F.gelu(m @ block.W_in + block.b_in) @ block.W_out + block.b_out


@pytest.mark.parametrize("kw", CONFIGS)
def test_delta_e_summed_over_heads_plus_residual_is_the_block_output(kw):
    model = make(**kw)
    trace = model.trace(SENTENCE)
    x = torch.from_numpy(trace.embeddings)
    np.testing.assert_allclose(trace.embeddings, trace.token_embeddings + trace.position_embeddings, atol=1e-6)
    for block, lt in zip(model.blocks, trace.layers):
        np.testing.assert_allclose(lt.resid_in, x.numpy(), atol=1e-5, rtol=1e-5)
        heads_sum = sum(ht.delta_e for ht in lt.heads)
        b_O = block.b_O.detach().numpy()
        np.testing.assert_allclose(lt.resid_in + heads_sum + b_O, lt.resid_mid, atol=1e-4, rtol=1e-5)
        with torch.no_grad():
            ref = reference_block(block, x, model.cfg)
        np.testing.assert_allclose(lt.resid_mid + lt.mlp_out, ref.numpy(), atol=1e-4, rtol=1e-5)
        np.testing.assert_allclose(lt.residual_out, ref.numpy(), atol=1e-4, rtol=1e-5)
        for ht in lt.heads:
            np.testing.assert_allclose(ht.delta_e, ht.z @ ht.W_O, atol=1e-4, rtol=1e-5)
        x = torch.from_numpy(lt.residual_out)
    if not kw.get("d_mlp"):
        assert np.all(trace.layers[0].mlp_out == 0)


def test_trace_is_deterministic_across_runs():
    a = make().trace(SENTENCE)
    b = make().trace(SENTENCE)
    assert a.tokens == b.tokens
    for la, lb in zip(a.layers, b.layers):
        for ha, hb in zip(la.heads, lb.heads):
            for f in ("q", "k", "v", "scores", "pattern", "z", "delta_e"):
                np.testing.assert_array_equal(getattr(ha, f), getattr(hb, f))
    np.testing.assert_array_equal(a.logits, b.logits)


def test_trace_shapes_and_orientation():
    t = make().trace("the big cat sat")
    assert t.tokens == ("the", "big", "cat", "sat")
    ht = t.head(1, 2)
    assert ht.q.shape == ht.k.shape == ht.v.shape == (4, 8)
    assert ht.scores.shape == ht.pattern.shape == (4, 4)
    assert ht.delta_e.shape == (4, 24)
    assert ht.W_Q.shape == (24, 8) and ht.W_O.shape == (8, 24)
    # [query, key]: the first query can only see itself
    assert ht.pattern[0, 0] == pytest.approx(1.0) and ht.pattern[0, 1:].sum() == 0
    assert t.logits.shape == (4, len(WORDS))
    assert set(t.directions) == {"size", "colour"}
    np.testing.assert_allclose(np.linalg.norm(t.directions["size"]), 1.0, atol=1e-6)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@pytest.mark.cuda
def test_cuda_matches_cpu():
    cpu = make(layernorm=True, d_mlp=48, bias=True)
    gpu = make(layernorm=True, d_mlp=48, bias=True).to("cuda")
    a, b = cpu.trace(SENTENCE), gpu.trace(SENTENCE)
    for la, lb in zip(a.layers, b.layers):
        for ha, hb in zip(la.heads, lb.heads):
            np.testing.assert_allclose(ha.pattern, hb.pattern, atol=1e-4, rtol=1e-5)
            np.testing.assert_allclose(ha.delta_e, hb.delta_e, atol=1e-3)
    assert isinstance(b.layers[0].heads[0].pattern, np.ndarray)


# --- tokenizer and errors ------------------------------------------------------------------------

def test_tokenizer_is_case_insensitive_and_handles_punctuation():
    t = make().trace("THE Cat; sat!! on the MAT.")
    assert t.tokens == ("the", "cat", "sat", "on", "the", "mat", ".")


def test_unknown_words_are_named():
    with pytest.raises(UnknownWordError) as e:
        make().trace("the zebra sat on the sofa with the zebra")
    assert e.value.words == ["zebra", "sofa", "with"]
    assert "'zebra'" in str(e.value) and "render.py vocab" in str(e.value)


def test_sentence_longer_than_context_is_an_error():
    with pytest.raises(ContextTooLongError, match="33 tokens .* at most 32"):
        make().trace(" ".join(["cat"] * 33))


# --- files ----------------------------------------------------------------------------------------

def test_save_and_load_round_trip(tmp_path):
    model = make(layernorm=True, d_mlp=48, bias=True)
    save_model(model, tmp_path / "m")
    loaded = load_model(tmp_path / "m", device="cpu")
    assert loaded.cfg == model.cfg
    np.testing.assert_array_equal(loaded.trace(SENTENCE).logits, model.trace(SENTENCE).logits)


def test_missing_and_corrupt_model_files_are_clear_errors(tmp_path):
    with pytest.raises(ModelFileError, match="no model named"):
        load_model(tmp_path / "nowhere", device="cpu")
    save_model(make(), tmp_path / "m")
    (tmp_path / "m" / "model.safetensors").write_bytes(b"not a safetensors file")
    with pytest.raises(ModelFileError, match="could not be read"):
        load_model(tmp_path / "m", device="cpu")
    save_model(make(), tmp_path / "m2")
    (tmp_path / "m2" / "config.json").write_text("{not json")
    with pytest.raises(ModelFileError, match="not valid"):
        load_model(tmp_path / "m2", device="cpu")
    (tmp_path / "m2" / "config.json").unlink()
    with pytest.raises(ModelFileError, match="missing"):
        load_model(tmp_path / "m2", device="cpu")
    # weights that do not fit the config
    save_model(make(), tmp_path / "m3")
    cfg = json.loads((tmp_path / "m3" / "config.json").read_text())
    cfg["d_model"] = 32
    (tmp_path / "m3" / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(ModelFileError, match="do not match"):
        load_model(tmp_path / "m3", device="cpu")


def test_shipped_toy_model_loads_on_auto_device():
    model = load_model("toy")
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert model.device.type == expected
    assert model.cfg.causal


# --- the two worlds stay apart ---------------------------------------------------------------------

def _imports(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "; import sys; print(' '.join(sorted(sys.modules)))"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return set(out.split())


def test_model_does_not_import_manim_and_scenes_do_not_import_torch():
    assert "manim" not in _imports("import attention_manim.model, attention_manim.model.loading, "
                                   "attention_manim.model.transformer, attention_manim.model.session")
    mods = _imports("import attention_manim.scenes.registry as r; r.load_all(); import attention_manim.scenes.runner")
    assert "manim" in mods and "torch" not in mods
