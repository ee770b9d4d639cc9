"""Damaged data is refused, not shown (issue 20): weights with NaN or ∞, JSON that would hold NaN."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


def small_folder(tmp_path):
    from attention_manim.model.config import ModelConfig
    from attention_manim.model.loading import save_model
    from attention_manim.model.transformer import random_model

    save_model(random_model(ModelConfig(name="t", vocab=["a", "b", "c"], d_model=8, n_heads=2, d_head=4)), tmp_path)
    return tmp_path


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_weights_are_refused_naming_the_tensor(tmp_path, bad):
    import torch
    from safetensors.torch import load_file, save_file

    folder = small_folder(tmp_path)
    state = load_file(str(folder / "model.safetensors"))
    name = sorted(k for k, v in state.items() if v.is_floating_point() and v.numel() > 3)[0]
    state[name].view(-1)[2] = bad
    save_file(state, str(folder / "model.safetensors"))
    r = subprocess.run([sys.executable, "render.py", "inspect", "a b", "--model", str(folder), "--device", "cpu",
                        "--json"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"{name} holds 1 non-finite value(s)" in r.stderr and r.stdout == ""


def test_json_output_never_holds_nan():
    from attention_manim.cli import strict_json
    from attention_manim.model.errors import UserError

    assert json.loads(strict_json({"a": [1.5, -2]})) == {"a": [1.5, -2]}
    with pytest.raises(UserError) as e:
        strict_json({"a": [float("nan")]})
    assert "not finite" in e.value.message


def test_an_unknown_name_beside_all_is_refused(tmp_path):
    r = subprocess.run([sys.executable, "render.py", "mloe", "all", "--out", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "unknown scene 'mloe'" in r.stderr and "mole" in r.stderr, r.stderr
    assert not any(p.is_file() for p in tmp_path.rglob("*"))


@pytest.mark.parametrize("field, value, words", [
    ("d_mlp", 10**10, "weights, "), ("d_model", 10**9, "GB as float32"), ("n_ctx", 10**9, "allowed here"),
    ("n_layers", 100000, "'n_layers' must be at most 1024"), ("d_mlp", -5, "'d_mlp' must be at least 0"),
])
def test_sizes_are_refused_before_anything_is_allocated(tmp_path, field, value, words):
    import resource
    import time

    folder = small_folder(tmp_path)
    cfg = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**cfg, field: value}))
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "render.py", "inspect", "a b", "--model", str(folder), "--device", "cpu"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss < 2 * 2**20  # KB: under 2 GB at its peak
    assert time.perf_counter() - start < 60


def test_smollm2_fits_its_own_size_estimate(smollm2_model):
    from attention_manim.model.config import implied_numbers

    real = sum(p.numel() for p in smollm2_model.parameters())
    assert abs(implied_numbers(smollm2_model.cfg) - real) / real < 0.01


@pytest.mark.parametrize("text", ["wait -- what ... ok", "The Eiffel tower.", "l'été à Paris, c'est... bien!",
                                  "مرحبا بالعالم", "a 🙂 b", "café naïve"])
def test_words_keep_the_text_as_written(smollm2_model, text):
    t = smollm2_model.trace(text)
    assert "".join(t.words) == "".join(text.split())  # every character, in order, once
    assert len(t.word_of_token) == t.n_tokens and sorted(set(t.word_of_token)) == list(range(len(t.words)))


@pytest.mark.parametrize("word", ["مرحبا", "ب", "🙂", "\u0301", "x"])
def test_any_word_has_an_outline_to_draw(word):
    from attention_manim.scenes.components.batched_shapes import WordOutline

    w = WordOutline(word)
    assert len(w.points) > 0 and np.isfinite(w.points).all() and w.line_height > 0
    assert np.isfinite(w.placed(20, (1.0, 2.0, 0.0))).all()


def test_a_right_to_left_sentence_renders_on_smollm2(tmp_path):
    r = subprocess.run([sys.executable, "render.py", "attention_pattern", "--model", "smollm2", "--sentence",
                        "مرحبا بالعالم", "--format", "png", "--out", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-1500:]
    assert (tmp_path / "480p15" / "attention_pattern.png").stat().st_size > 5000


def test_a_model_without_the_probe_words_still_renders(tmp_path):
    """A small GPT-2 whose vocabulary lacks the story's words: the structural probes are measured on
    its own tokens, `heads` prints what it could measure, and a lesson renders on a head it picks."""
    pytest.importorskip("transformers")
    from tests.test_real_models import save_gpt2

    folder = save_gpt2(tmp_path / "gpt2")
    env = dict(os.environ, ATTENTION_MANIM_CACHE=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "render.py", "heads", "--model", str(folder), "--json"], cwd=ROOT,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr[-1500:]
    heads = json.loads(r.stdout)
    assert len(heads) == 2 * 4 and all(0 <= h["scores"]["previous_token"] <= 1 for h in heads)
    assert any(h["scores"]["first_token"] > 0 for h in heads)
    r = subprocess.run([sys.executable, "render.py", "attention_pattern", "--model", str(folder), "--sentence",
                        "the tower is in paris", "--format", "png", "--out", str(tmp_path / "out")], cwd=ROOT,
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-1500:]


def test_a_damaged_smollm2_cache_is_rebuilt_not_trusted(tmp_path, capsys):
    pytest.importorskip("gguf")
    from attention_manim.model.adapters.gguf import load_smollm2

    text = "The Eiffel tower is in the city of"
    try:
        clean = load_smollm2(cache=tmp_path).trace(text).next_token(1)[0]
    except Exception as e:  # not installed here
        pytest.skip(f"SmolLM2 is not available: {e}")
    (folder,) = (tmp_path / "gguf").iterdir()
    weights, meta = folder / "model.safetensors", folder / "meta.json"

    def flip(f):  # random bytes in the middle of the weights
        with open(f, "r+b") as h:
            h.seek(weights.stat().st_size // 2)
            h.write(bytes(range(7, 247, 3)))

    def zero(f):  # 4 MB zeroed
        with open(f, "r+b") as h:
            h.seek(weights.stat().st_size // 3)
            h.write(b"\0" * (4 * 2**20))

    def edit(_):  # a hyperparameter edited by hand
        record = json.loads(meta.read_text())
        record["hp"]["rope_theta"] = record["hp"]["rope_theta"] * 1.5
        meta.write_text(json.dumps(record))

    def layers(_):
        record = json.loads(meta.read_text())
        record["hp"]["n_layers"] -= 1
        meta.write_text(json.dumps(record))

    for damage in (flip, zero, edit, layers):
        capsys.readouterr()
        damage(weights)
        again = load_smollm2(cache=tmp_path).trace(text).next_token(1)[0]
        assert "not what was written there; rebuilding" in capsys.readouterr().err, damage.__name__
        assert again == clean, damage.__name__  # the same answer and probability, to the bit
    load_smollm2(cache=tmp_path)  # rebuilt and sealed: no note the next time
    assert "rebuilding" not in capsys.readouterr().err


def test_a_trace_too_big_for_memory_is_refused_before_the_forward_pass(tmp_path):
    from attention_manim.model.config import ModelConfig, trace_bytes

    cfg = ModelConfig(name="t", vocab=["a"], n_layers=30, n_heads=9, d_head=64, d_model=576, n_ctx=8192)
    assert 4.0e9 < trace_bytes(cfg, 1000) < 5.2e9  # SmolLM2 at 1,000 tokens: 4.6 GB measured (issue 20)
    text = " ".join(["the tower is tall"] * 60)  # about 240 tokens
    env = dict(os.environ, ATTENTION_MANIM_MAX_TRACE_GB="0.05")
    import re

    for lang, pattern in (("en", r"about (0\.\d+) GB of memory \(30 layers × 9 heads × (\d+)² attention weights\); "
                                 r"the limit here is 0\.05 GB"),
                          ("pt", r"cerca de (0,\d+) GB de memória \(30 camadas × 9 heads × (\d+)² pesos de atenção\); "
                                 r"o limite aqui é 0,05 GB")):
        r = subprocess.run([sys.executable, "render.py", "inspect", text, "--model", "smollm2", "--device", "cpu",
                            "--lang", lang], cwd=ROOT, capture_output=True, text=True, env=env)
        m = re.search(pattern, r.stderr)
        assert r.returncode == 2 and m and "ATTENTION_MANIM_MAX_TRACE_GB" in r.stderr, r.stderr
        n = int(m.group(2))
        assert 200 < n < 300 and 0.3 < float(m.group(1).replace(",", ".")) < 0.7  # 30·9·n²·12 B and the vectors
        assert "Traceback" not in r.stderr
