"""Mistakes a new user makes: each exits 2 with one clear line and a hint, before any work, and
leaves nothing behind (issue 13's list)."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from .conftest import ROOT
from .test_cli import run_cli


def assert_user_error(code, err, *needles):
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip() and not line.startswith("rendering ")]
    assert lines[0].startswith("error: "), err
    assert any(line.startswith("hint: ") for line in lines), f"no hint in {err!r}"
    for needle in needles:
        assert needle in err, (needle, err)


def nothing_written(path):
    return not path.exists() or not any(p.is_file() for p in path.rglob("*"))


@pytest.mark.parametrize("scene,axes,needle", [
    ("key", "animal,chemistry,nope", "'nope'"),
    ("key", "animal,chemistry", "exactly 3"),
    ("key", "animal,animal,animal", "'animal' more than once"),
    ("components", "animal,chemistry,nope", "'nope'"),
    ("fluffy_blue_creature", "animal,,medicine", "empty direction"),
    ("softmax", "animal,chemistry", "exactly 3"),  # checked the same way where the scene ignores it
])
def test_axes_are_checked_the_same_way_for_every_scene(capsys, tmp_path, scene, axes, needle):
    code, _, err = run_cli(capsys, scene, "--axes", axes, "--format", "png", "--out", str(tmp_path / "out"))
    assert_user_error(code, err, needle)
    assert nothing_written(tmp_path / "out")


def test_axes_ignore_case_and_spaces(make_inputs):
    from attention_manim.scenes.lessons import KEY

    setting = KEY.lesson.setting(make_inputs(axes=[" ANIMAL", "Chemistry ", "medicine"]))
    assert setting.axes == ("animal", "chemistry", "medicine")


@pytest.mark.parametrize("device", ["mps", "xpu", "meta", "tpu", "cuda:x"])
def test_unsupported_devices_are_named(capsys, device):
    code, _, err = run_cli(capsys, "inspect", "a fluffy blue creature", "--device", device)
    assert_user_error(code, err, repr(device), "--device auto, cpu")


def test_project_onto_is_checked_before_anything_is_printed(capsys):
    for extra in ([], ["--json"]):
        code, out, err = run_cli(capsys, "inspect", "a fluffy blue creature", "--project-onto", "animal,nope", *extra)
        assert_user_error(code, err, "'nope'", "known directions")
        assert out == ""


def test_project_onto_ignores_case_like_axes_and_lands_in_the_json(capsys, tracer):
    code, out, _ = run_cli(capsys, "inspect", "a fluffy blue creature", "--json", "--project-onto", "Animal,BLUE")
    assert code == 0
    data = json.loads(out)["projections"]
    assert data["directions"] == ["animal", "blue"]
    tr = tracer("a fluffy blue creature")
    expected = tr.project(tr.layers[0].resid_in, ["animal", "blue"])
    assert np.allclose(np.array(data["E"]), expected, atol=1e-6)


def test_a_wrongly_typed_config_value_is_named(capsys, tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(ROOT / "assets" / "toy", folder)
    cfg = json.loads((folder / "config.json").read_text())
    for key, value, needle in (("d_model", "abc", "'d_model' must be a whole number"),
                               ("n_heads", 0, "'n_heads' must be at least 1"),
                               ("causal", "yes", "'causal' must be true or false")):
        bad = dict(cfg, **{key: value})
        (folder / "config.json").write_text(json.dumps(bad))
        code, _, err = run_cli(capsys, "inspect", "a cat", "--model", str(folder))
        assert_user_error(code, err, needle, "config.json")


def test_train_refuses_bad_arguments_before_training(capsys, tmp_path):
    out = tmp_path / "weights"
    code, _, err = run_cli(capsys, "train", "--steps", "-1", "--out", str(out))
    assert_user_error(code, err, "--steps must be at least 1")
    assert nothing_written(out)
    a_file = tmp_path / "taken"
    a_file.write_text("x")
    code, _, err = run_cli(capsys, "train", "--steps", "5", "--out", str(a_file))
    assert_user_error(code, err, "is a file, not a folder")
    assert a_file.read_text() == "x"


@pytest.mark.parametrize("args,needle", [
    (["--sentence", ""], "--sentence is empty"),
    (["--sentence", "   "], "--sentence is empty"),
    (["--sentence", "|"], "--sentence is empty"),
    (["--sentence", "a cat | "], "sentence 2 of 2"),
    (["--focus", ""], "--focus is empty"),
])
def test_empty_sentence_or_focus_is_not_the_default(capsys, tmp_path, args, needle):
    code, _, err = run_cli(capsys, "softmax", *args, "--format", "png", "--out", str(tmp_path / "out"))
    assert_user_error(code, err, needle)
    assert nothing_written(tmp_path / "out")


def test_inspect_of_an_empty_sentence(capsys):
    code, _, err = run_cli(capsys, "inspect", "   ")
    assert_user_error(code, err, "the sentence is empty")


@pytest.mark.parametrize("args,needle", [
    (["--head", "9"], "head 9 is out of range"),
    (["--layer", "3"], "layer 3 is out of range"),
    (["--sentence", "a cat | a dog"], "at most 1 sentence"),
])
def test_range_and_count_errors_have_hints(capsys, tmp_path, args, needle):
    code, _, err = run_cli(capsys, "softmax", *args, "--format", "png", "--out", str(tmp_path / "out"))
    assert_user_error(code, err, needle)


def test_version(capsys):
    import tomllib

    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0 and out.strip() == f"attention-manim {version}"


def test_options_a_scene_does_not_use_are_measured(make_inputs):
    from attention_manim.scenes.lessons import KEY, PARAMETER_COUNT, SOFTMAX
    from attention_manim.scenes.options import unused_options

    axes = ["animal", "chemistry", "medicine"]
    assert unused_options(SOFTMAX.lesson, make_inputs(axes=axes, layout="paper")) == ["--axes"]
    assert unused_options(KEY.lesson, make_inputs(axes=axes, layout="paper")) == ["--layout"]
    assert unused_options(PARAMETER_COUNT.lesson, make_inputs(head=1, focus="blue")) == ["--focus", "--head"]
    assert unused_options(SOFTMAX.lesson, make_inputs()) == []


def test_default_focus_is_a_whole_word_not_a_piece_gathering_its_own_word():
    """A real model cuts "verdant" into "ver d ant"; the last piece looking at the first two is the
    word reading itself, not a word gathering context: it is not the default focus."""
    from attention_manim.scenes.setting import gathering_word

    # tokens: A fluffy ver d ant forest ; word of each token:
    word_of = [0, 1, 2, 2, 2, 3]
    p = np.eye(6)
    p[4] = [0.0, 0.0, 0.5, 0.4, 0.1, 0.0]  # "ant" gathers its own word's pieces
    p[5] = [0.0, 0.3, 0.0, 0.0, 0.3, 0.4]  # "forest" gathers "fluffy" and "verdant"
    p[3] = [0.0, 0.0, 0.9, 0.1, 0.0, 0.0]  # "d" is not a word's last piece
    assert gathering_word(p) == 4  # counting pieces as words, "ant" would win
    assert gathering_word(p, word_of=word_of) == 5


def test_render_says_which_options_a_scene_ignores(capsys, tmp_path):
    code, _, err = run_cli(capsys, "softmax", "--axes", "animal,chemistry,medicine", "--layout", "paper",
                           "--format", "png", "--out", str(tmp_path / "out"))
    assert code == 0
    assert "note: --axes does not apply to softmax; it was ignored" in err
    assert "--layout does not apply" not in err  # softmax draws its grid in either layout


def test_a_user_error_leaves_no_empty_folders(capsys, tmp_path):
    out = tmp_path / "fresh"
    code, _, err = run_cli(capsys, "softmax", "--head", "9", "--format", "png", "--out", str(out))
    assert code == 2
    assert not out.exists()
    code, _, err = run_cli(capsys, "no_such_scene", "--out", str(out))
    assert code == 2 and not out.exists()
