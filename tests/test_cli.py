"""The command line: what users type, what they get back, and how mistakes are reported."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from .conftest import ROOT

from attention_manim import cli as render


def run_cli(capsys, *args):
    """Run `render.py ARGS` in-process; return (exit code, stdout, stderr)."""
    try:
        render.main(list(args))
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


def test_list_prints_every_scene_with_a_description(capsys):
    from attention_manim.scenes.registry import load_all

    code, out, _ = run_cli(capsys, "list")
    assert code == 0
    scenes = load_all()
    assert "attention_pattern" in scenes
    for name, cls in scenes.items():
        line = next(line for line in out.splitlines() if line.split()[0] == name)
        assert cls.description and cls.description in line


def test_unknown_scene_suggests_close_names(capsys):
    code, out, err = run_cli(capsys, "attention_patern")
    assert code == 2
    assert "unknown scene 'attention_patern'" in err and "attention_pattern" in err
    assert "Traceback" not in err


def test_unknown_word_is_named_with_a_hint(capsys):
    code, _, err = run_cli(capsys, "inspect", "a fluffy blue xylophone")
    assert code == 2
    assert "'xylophone'" in err and "render.py vocab" in err
    code, _, err = run_cli(capsys, "attention_pattern", "--sentence", "the qwzx fox", "--format", "png")
    assert code == 2 and "'qwzx'" in err


def test_too_long_sentence_and_out_of_range_head_and_layer(capsys, toy_model):
    n_ctx = toy_model.cfg.n_ctx
    word = toy_model.cfg.vocab[0]
    code, _, err = run_cli(capsys, "inspect", " ".join([word] * (n_ctx + 1)))
    assert code == 2 and f"at most {n_ctx}" in err
    code, _, err = run_cli(capsys, "inspect", "a fluffy blue creature", "--head", "99")
    assert code == 2 and "head 99 is out of range" in err
    code, _, err = run_cli(capsys, "inspect", "a fluffy blue creature", "--layer", "7")
    assert code == 2 and "layer 7 is out of range" in err
    code, _, err = run_cli(capsys, "attention_pattern", "--head", "-1", "--format", "png")
    assert code == 2 and "head -1 is out of range" in err


def test_unwritable_out_is_a_clear_error(capsys, tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("x")
    code, _, err = run_cli(capsys, "attention_pattern", "--out", str(blocker / "sub"), "--format", "png")
    assert code == 2 and "cannot write to the output folder" in err and "--out" in err


def test_transparent_mp4_is_refused_with_a_hint(capsys, tmp_path):
    code, _, err = run_cli(capsys, "attention_pattern", "-t", "--out", str(tmp_path))
    assert code == 2 and "--format mov" in err


def test_inspect_table_shows_head_names_and_real_weights(capsys, tracer):
    code, out, _ = run_cli(capsys, "inspect", "a fluffy blue creature", "--head", "0", "--device", "cpu")
    assert code == 0
    t = tracer("a fluffy blue creature")
    assert t.head(0, 0).name in out
    rows = [line.split() for line in out.splitlines() if line.split() and line.split()[0] == "creature"]
    shown = [float(x) for x in rows[-1][1:]]
    np.testing.assert_allclose(shown, t.head(0, 0).pattern[3], atol=0.005)
    first = [line.split() for line in out.splitlines() if line.split() and line.split()[0] == "a"][-1]
    assert first[2:] == ["·", "·", "·"]  # the first word cannot look ahead


def test_inspect_json_schema(capsys, tracer):
    code, out, _ = run_cli(capsys, "inspect", "a fluffy blue creature", "--json", "--device", "cpu")
    assert code == 0
    data = json.loads(out)
    t = tracer("a fluffy blue creature")
    m = data["model"]
    assert set(m) >= {"name", "d_model", "n_heads", "d_head", "n_layers", "causal"}
    assert data["tokens"] == list(t.tokens)
    assert np.array(data["embeddings"]).shape == (4, m["d_model"])
    assert isinstance(data["directions"], dict)
    assert len(data["layers"]) == m["n_layers"] and len(data["layers"][0]["heads"]) == m["n_heads"]
    h = data["layers"][0]["heads"][0]
    assert set(h) >= {"name", "q", "k", "v", "scores", "mask", "pattern", "delta_e"}
    assert np.array(h["q"]).shape == (4, m["d_head"])
    # [query][key]: row 0 is the first word, which sees only itself
    assert h["mask"][0] == [False, True, True, True]
    np.testing.assert_allclose(np.array(h["pattern"]), t.head(0, 0).pattern, atol=1e-6)
    assert np.array(data["layers"][0]["delta_e"]).shape == (4, m["d_model"])
    assert np.array(data["layers"][0]["residual_out"]).shape == (4, m["d_model"])


def test_render_png_lands_at_the_documented_path(capsys, tmp_path):
    code, out, err = run_cli(capsys, "attention_pattern", "-ql", "--format", "png", "--out", str(tmp_path),
                             "--device", "cpu")
    assert code == 0, err
    target = tmp_path / "480p15" / "attention_pattern.png"
    assert out.strip().splitlines()[-1] == str(target)
    from PIL import Image

    assert Image.open(target).size == (854, 480)
    assert sorted(os.listdir(tmp_path / "480p15")) == ["attention_pattern.png"]  # no temp leftovers


def test_failed_render_leaves_no_file(tmp_path, make_inputs):
    from attention_manim.scenes.registry import load_all
    from attention_manim.scenes.runner import render_scene

    base = load_all()["attention_pattern"]

    class Broken(base):
        def construct(self):
            super().construct()
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        render_scene(Broken, make_inputs(), name="attention_pattern", quality="l", fmt="mp4",
                     out=tmp_path, extra_config={"pixel_width": 160, "pixel_height": 90, "frame_rate": 5})
    assert os.listdir(tmp_path / "480p15") == []


def test_render_py_runs_as_a_script_and_real_bugs_are_not_hidden():
    r = subprocess.run([sys.executable, "render.py", "--help"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0 and "render.py list" in r.stdout
    r = subprocess.run([sys.executable, "render.py", "inspect", "a fluffy blue xylophone"], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "xylophone" in r.stderr
