"""Re-renders that cost nothing: an unchanged clip is "up to date" (no model load, no torch, no
render); a change to a scene's code, a catalog entry or the weights renders it again; --force too.

The key hashes a copy of the sources (ATTENTION_MANIM_CODE_ROOTS) and a copy of the toy
(--model DIR), so the tests edit copies, never the real files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time

import pytest

from attention_manim.scenes.batch import Job, run_batch

from .conftest import ROOT
from .test_cli import run_cli

TINY = tuple(sorted({"pixel_width": 96, "pixel_height": 54, "frame_rate": 5}.items()))


@pytest.fixture
def copies(tmp_path, monkeypatch):
    code = tmp_path / "code"
    for part in ("scenes", "model"):
        shutil.copytree(ROOT / part, code / part, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("ATTENTION_MANIM_CODE_ROOTS", os.pathsep.join([str(code / "scenes"), str(code / "model")]))
    monkeypatch.setenv("ATTENTION_MANIM_CACHE", str(tmp_path / "cache"))  # the weights' hash memo
    toy = tmp_path / "toy"
    toy.mkdir()
    for name in ("config.json", "model.safetensors"):
        shutil.copy2(ROOT / "assets" / "toy" / name, toy / name)
    return code, toy


def no_model(*args):
    raise AssertionError("an up-to-date clip loaded a model")


def stamp(path):
    st = os.stat(path)
    return st.st_ino, st.st_mtime_ns


def timed(jobs, **kw):
    start = time.perf_counter()
    outcomes = run_batch(jobs, **kw)
    return [o.status for o in outcomes], time.perf_counter() - start


@pytest.mark.render
def test_code_catalog_and_weights_changes_render_again_nothing_else_does(copies, tmp_path):
    code, toy = copies
    job = Job("attention_pattern", model=str(toy), device="cpu", out=str(tmp_path / "out"), extra_config=TINY)
    status, cold = timed([job])
    assert status == ["rendered"]
    before = stamp(job.clip())
    status, hit = timed([job], load=no_model)
    assert status == ["up to date"] and stamp(job.clip()) == before
    assert hit <= 0.1 * cold, (hit, cold)

    status, _ = timed([job], force=True)  # --force renders anyway
    assert status == ["rendered"] and stamp(job.clip()) != before

    def change_code():  # a scene's code
        with open(code / "scenes" / "chapters" / "pattern.py", "a") as f:
            f.write("\n# changed\n")

    def change_catalog():  # one catalog entry
        toml = code / "scenes" / "locales" / "en" / "lessons.toml"
        text = toml.read_text(encoding="utf-8")
        assert 'card_title = "{number} · {title}"' in text
        toml.write_text(text.replace('card_title = "{number} · {title}"', 'card_title = "{number}: {title}"'),
                        encoding="utf-8")

    def change_weights():  # one weight nudged: the same file size, another content
        from safetensors.numpy import load_file, save_file

        tensors = load_file(toy / "model.safetensors")
        name = sorted(tensors)[0]
        tensors[name] = tensors[name].copy()
        tensors[name].flat[0] += 1e-3
        save_file(tensors, toy / "model.safetensors")

    for change in (change_code, change_catalog, change_weights):
        change()
        previous = stamp(job.clip())
        status, _ = timed([job])
        assert status == ["rendered"], change.__name__
        assert stamp(job.clip()) != previous, change.__name__
        status, _ = timed([job], load=no_model)
        assert status == ["up to date"], change.__name__


@pytest.mark.render
def test_the_command_says_up_to_date_without_torch(copies, tmp_path, capsys):
    _, toy = copies
    out = tmp_path / "out"
    args = ("attention_pattern", "--format", "png", "--model", str(toy), "--device", "cpu", "--out", str(out))
    code, stdout, err = run_cli(capsys, *args)
    target = out / "480p15" / "attention_pattern.png"
    assert code == 0 and stdout.strip().splitlines()[-1] == str(target), err
    before = stamp(target)
    # a second call in a fresh process where torch cannot be imported at all
    fake = tmp_path / "no_torch" / "torch"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('torch was imported for an up-to-date clip')\n")
    env = dict(os.environ, PYTHONPATH=str(fake.parent))
    r = subprocess.run([sys.executable, "render.py", *args], cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert "[1/1] attention_pattern en 480p15 up to date" in r.stderr
    assert r.stdout.strip().splitlines()[-1] == str(target)
    assert stamp(target) == before
    assert sorted(os.listdir(out / "480p15")) == ["attention_pattern.png"]  # the key lives elsewhere
    code, _, err = run_cli(capsys, *args, "--force")
    assert code == 0 and "up to date" not in err and stamp(target) != before


@pytest.mark.render
def test_a_damaged_or_missing_file_is_not_up_to_date(copies, tmp_path):
    _, toy = copies
    job = Job("attention_pattern", model=str(toy), device="cpu", out=str(tmp_path / "out"), extra_config=TINY)
    (o,) = run_batch([job])
    assert o.status == "rendered" and any(f.endswith(".srt") for f in o.files)
    srt = next(f for f in o.files if f.endswith(".srt"))
    assert [x.status for x in run_batch([job], load=no_model)] == ["up to date"]
    os.remove(srt)  # the subtitles deleted
    (again,) = run_batch([job])
    assert again.status == "rendered" and os.path.exists(srt)
    with open(job.clip(), "r+b") as f:  # the clip truncated
        f.truncate(1000)
    (again,) = run_batch([job])
    assert again.status == "rendered" and os.path.getsize(job.clip()) > 1000
    assert [x.status for x in run_batch([job], load=no_model)] == ["up to date"]


def test_a_file_where_the_keys_folder_goes_does_not_break_a_render(tmp_path):
    from attention_manim.scenes import cache

    (tmp_path / ".keys").write_text("in the way")
    clip = tmp_path / "clip.mp4"
    clip.write_bytes(b"x" * 10)
    cache.store(cache.sidecar(tmp_path, "480p15", "clip", "mp4"), "k", files=[str(clip)])  # no exception
    assert (tmp_path / ".keys").read_text() == "in the way"
