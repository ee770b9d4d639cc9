"""Batches (render.py --jobs N, --lang en,ko -q l,h, --backend ray): every clip of the cross product,
one progress line per clip, a summary table, failures that do not stop the others, interrupts that
leave nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
import time

import av
import pytest
from click.testing import CliRunner

from attention_manim.scenes.batch import Job, make_jobs, progress_line, run_batch, summary_table

from .conftest import ROOT

TINY = tuple(sorted({"pixel_width": 96, "pixel_height": 54, "frame_rate": 5}.items()))


@pytest.fixture(autouse=True)
def steady_code(tmp_path, monkeypatch):
    """The cache key hashes the source; others edit it while the tests run: hash a still copy."""
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "a.py").write_text("x = 1\n")
    monkeypatch.setenv("ATTENTION_MANIM_CODE_ROOTS", str(tmp_path / "code"))


def seconds(path) -> float:
    with av.open(str(path)) as c:
        s = c.streams.video[0]
        return sum(1 for _ in c.decode(video=0)) / float(s.average_rate)


def test_the_cross_product_in_order():
    jobs = make_jobs(["softmax", "query"], ["en", "ko"], ["l", "h"], out="o")
    assert [(j.scene, j.lang, j.quality) for j in jobs] == [
        (s, lang, q) for s in ("softmax", "query") for lang in ("en", "ko") for q in ("l", "h")]
    assert jobs[1].label() == "softmax en 1080p60" and str(jobs[2].clip()) == "o/480p15/softmax.ko.mp4"


@pytest.mark.render
def test_two_workers_render_every_language_and_a_failure_does_not_stop_them(tmp_path):
    good = make_jobs(["attention_pattern"], ["en", "ko"], ["l"], out=str(tmp_path), extra_config=TINY,
                     device="cpu")
    bad = Job("attention_pattern", out=str(tmp_path), extra_config=TINY, device="cpu",
              options=(("focus", "xylophone"),))
    lines = []
    outcomes = run_batch([good[0], bad, good[1]], n=2, on_done=lambda i, n, o: lines.append(progress_line(i, n, o)))
    assert [o.status for o in outcomes] == ["rendered", "failed", "rendered"]
    assert outcomes[1].user_error and "xylophone" in outcomes[1].error
    q = tmp_path / "480p15"
    assert sorted(p.name for p in q.iterdir()) == ["attention_pattern.ko.mp4", "attention_pattern.ko.srt",
                                                   "attention_pattern.ko.vtt", "attention_pattern.mp4",
                                                   "attention_pattern.srt", "attention_pattern.vtt"]
    for o in (outcomes[0], outcomes[2]):
        assert o.files[0] == str(o.job.clip()) and abs(seconds(o.files[0]) - o.duration) < 0.2 + 1e-9
        assert o.duration > 1 and o.wall_time > 0
    assert len(lines) == 3 and [line.split()[0] for line in lines] == ["[1/3]", "[2/3]", "[3/3]"]
    assert any("FAILED" in line and "xylophone" in line for line in lines)
    assert any(line.startswith("[") and " ko 480p15 " in line and " s video in " in line for line in lines)
    table = summary_table(outcomes)
    assert table[0].split()[:5] == ["scene", "lang", "quality", "video", "s"]
    assert "FAILED" in table[3] and table[-1].startswith("3 clip(s): 2 rendered, 0 up to date, 1 failed")


def test_cli_exit_status_says_something_failed(tmp_path, monkeypatch):
    from attention_manim import cli as render

    class Result:
        def __init__(self, out, name):
            self.files, self.duration, self.wall_time = [out / f"{name}.mp4"], 1.5, 0.1

    def fake_render(cls, inputs, *, name, out, **kw):
        if name == "softmax":
            raise RuntimeError("boom")
        return Result(out, name)

    monkeypatch.setattr("attention_manim.scenes.batch.default_loader", lambda m, d: (None, None))
    monkeypatch.setattr("attention_manim.scenes.runner.render_scene", fake_render)
    r = CliRunner().invoke(render.cli, ["render", "softmax", "query", "--lang", "en,pt", "--out", str(tmp_path)])
    assert r.exit_code == 1, r.output
    assert "RuntimeError: boom" in r.output and "[4/4] query pt 480p15 1.5 s video in 0.1 s" in r.output
    lines = r.output.splitlines()
    table = lines[next(i for i, line in enumerate(lines) if line.split()[:2] == ["scene", "lang"]):]
    assert [line.split()[:3] for line in table[2:6]] == [["softmax", "en", "480p15"], ["softmax", "pt", "480p15"],
                                                          ["query", "en", "480p15"], ["query", "pt", "480p15"]]
    assert "FAILED: RuntimeError: boom" in table[2] and table[-1].startswith("4 clip(s): 2 rendered, 0 up to date, 2")


@pytest.mark.parametrize("args,needle", [
    (["attention_pattern", "nope", "-q", "l,h"], "unknown scene 'nope'"),
    (["attention_pattern", "--lang", "en,xx"], "unknown language 'xx'"),
    (["attention_pattern", "-q", "l,x"], "unknown quality 'x'"),
    (["attention_pattern", "--jobs", "0"], "--jobs 0"),
    (["attention_pattern", "--model", "/no/such/folder", "--lang", "en,ko"], "no model named"),
    (["attention_pattern", "--chapters", "--format", "png"], "--chapters"),
])
def test_everything_is_checked_before_anything_starts(tmp_path, args, needle):
    r = subprocess.run([sys.executable, "render.py", *args, "--out", str(tmp_path / "out")], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert needle in r.stderr and "hint: " in r.stderr
    assert not (tmp_path / "out").exists() or not any(p.is_file() for p in (tmp_path / "out").rglob("*"))


def test_ray_missing_exits_2_with_the_install_hint(tmp_path, monkeypatch):
    from attention_manim import cli as render

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as if it were not installed
    r = CliRunner().invoke(render.cli, ["render", "softmax", "--backend", "ray", "--out", str(tmp_path)])
    from attention_manim.model.errors import UserError

    assert isinstance(r.exception, UserError) and "pip install .[farm]" in r.exception.hint


@pytest.mark.render
def test_sigterm_stops_the_workers_and_leaves_nothing(tmp_path):
    out = tmp_path / "out"
    p = subprocess.Popen([sys.executable, "render.py", "fluffy_blue_creature", "softmax", "--jobs", "2",
                          "--device", "cpu", "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    q = out / "480p15"
    deadline = time.time() + 120
    while time.time() < deadline:  # both workers are rendering: their temp folders exist
        if q.is_dir() and len(list(q.glob(".*-rendering-*"))) == 2:
            break
        time.sleep(0.2)
    else:
        p.kill()
        pytest.fail("the workers never started")
    time.sleep(1.0)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 143, err
    assert "interrupted" in err and "Traceback" not in err
    assert list(q.iterdir()) == [], list(q.iterdir())
    left = subprocess.run(["pgrep", "-f", "--", f"--out {out}"], capture_output=True, text=True).stdout.split()
    assert left == [], "worker processes are still running"


@pytest.mark.ray
@pytest.mark.render
def test_ray_with_two_local_workers_sends_the_files_back(tmp_path):
    jobs = make_jobs(["attention_pattern"], ["en", "pt"], ["l"], out=str(tmp_path), extra_config=TINY, device="cpu",
                     chapters=True)
    outcomes = run_batch(jobs, n=2, backend="ray")
    assert [o.status for o in outcomes] == ["rendered", "rendered"], [o.error for o in outcomes]
    q = tmp_path / "480p15"
    assert sorted(p.name for p in q.iterdir()) == ["attention_pattern", "attention_pattern.mp4", "attention_pattern.pt",
                                                   "attention_pattern.pt.mp4", "attention_pattern.pt.srt",
                                                   "attention_pattern.pt.vtt", "attention_pattern.srt",
                                                   "attention_pattern.vtt"]
    import json

    for o in outcomes:
        assert o.files[0] == str(o.job.clip()) and abs(seconds(o.files[0]) - o.duration) < 0.2 + 1e-9
        index = json.loads((q / o.job.stem / "index.json").read_text(encoding="utf-8"))
        assert index["lang"] == o.job.lang and index["clip"] == f"../{o.job.stem}.mp4"
        assert abs(seconds(q / o.job.stem / index["chapters"][0]["file"]) - o.duration) < 0.2 + 1e-9
    # a second run: up to date, nothing sent
    again = run_batch(jobs, n=2, backend="ray")
    assert [o.status for o in again] == ["up to date", "up to date"]


def test_a_killed_renders_temp_folder_is_swept_by_the_next_render(tmp_path, make_inputs):
    from attention_manim.scenes.lessons import ATTENTION_PATTERN
    from attention_manim.scenes.runner import render_scene

    q = tmp_path / "480p15"
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # a pid that no longer runs
    stale = q / f".attention_pattern-rendering-{dead.pid}-abc"
    live = q / f".softmax-rendering-{os.getpid()}-xyz"  # a render still running (this process)
    for d in (stale, live):
        (d / "videos").mkdir(parents=True)
        (d / "videos" / "partial.mp4").write_bytes(b"0" * 10)
    render_scene(ATTENTION_PATTERN, make_inputs(), name="attention_pattern", fmt="png", out=tmp_path,
                 extra_config=dict(TINY))
    assert sorted(p.name for p in q.iterdir()) == [live.name, "attention_pattern.png"]


SLOW_BATCH = """
import sys, time
{imports}
from attention_manim.scenes.batch import Job, _context, run_batch

def slow(model, device):
    time.sleep(120)  # a worker busy "loading" when its parent is killed

if __name__ == "__main__":
    print(_context().get_start_method(), flush=True)
    jobs = [Job("fluffy_blue_creature", out=sys.argv[1]), Job("multi_head", out=sys.argv[1])]
    run_batch(jobs, n=2, load={load}, use_cache=False)
"""


def descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        f = Path(f"/proc/{p}/task/{p}/children")
        kids = [int(k) for k in f.read_text().split()] if f.exists() else []
        out += kids
        todo += kids
    return out


def running(pid: int) -> bool:
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text().lower()
    except OSError:
        return False


# fork: the workers are the batch's children; forkserver (torch already imported): the forkserver's
@pytest.mark.parametrize("start", ["fork", "forkserver"])
def test_workers_die_when_their_parent_is_killed(tmp_path, start):
    import signal
    import time

    script = tmp_path / "slow.py"
    script.write_text(SLOW_BATCH.format(imports="import torch" if start == "forkserver" else "",
                                        load="None" if start == "forkserver" else "slow"))
    env = dict(os.environ, PYTHONPATH=str(ROOT))  # this checkout's package, whatever is installed
    out = tmp_path / "out"
    parent = subprocess.Popen([sys.executable, str(script), str(out)], cwd=ROOT, env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == start
        deadline, tree = time.time() + 90, []
        while time.time() < deadline:
            time.sleep(0.3)
            tree = descendants(parent.pid)
            if start == "fork" and len(tree) >= 2:
                break
            if start == "forkserver" and out.exists() and len(list(out.rglob(".*-rendering-*"))) >= 2:
                break  # both workers are rendering
        assert len(tree) >= 2, "the batch did not start its workers"
        parent.send_signal(signal.SIGKILL)
        parent.wait(10)
        deadline = time.time() + 20
        while time.time() < deadline and any(running(p) for p in tree):
            time.sleep(0.2)
        assert not [p for p in tree if running(p)], "orphaned workers still running"
        assert not list(out.rglob(".*-rendering-*")), "a killed batch left its temp folders"
    finally:
        if parent.poll() is None:
            parent.kill()


@pytest.mark.parametrize("address, words", [
    ("127.0.0.1:1", "no Ray cluster answers at 127.0.0.1:1"),
    ("ray://127.0.0.1:1", "ray://"),
    ("nonsense", "not a Ray address"),
])
def test_a_ray_address_nothing_answers_at_fails_fast_in_one_line(tmp_path, address, words):
    import time

    pytest.importorskip("ray")
    start = time.perf_counter()
    r = subprocess.run([sys.executable, "render.py", "softmax", "--backend", "ray", "--ray-address", address,
                        "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr[-1500:]
    assert "hint: " in r.stderr and time.perf_counter() - start < 60
    assert not [p for p in (tmp_path / "out").rglob("*") if p.is_file()]


@pytest.mark.ray
@pytest.mark.render
def test_sigterm_stops_a_ray_batch_like_a_local_one(tmp_path):
    """Exit 143, one line, no stack dump, no file in OUT and no task's temp folder left."""
    import tempfile

    pytest.importorskip("ray")
    out = tmp_path / "out"
    before = set(Path(tempfile.gettempdir()).glob("attention-manim-ray-*"))
    p = subprocess.Popen([sys.executable, "render.py", "fluffy_blue_creature", "multi_head", "--backend", "ray",
                          "--jobs", "2", "--device", "cpu", "--out", str(out)], cwd=ROOT, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(set(Path(tempfile.gettempdir()).glob("attention-manim-ray-*")) - before) < 2:
        time.sleep(0.3)  # both tasks are rendering: their private folders exist
    assert p.poll() is None, "the batch ended before it could be stopped"
    time.sleep(2.0)
    p.send_signal(signal.SIGTERM)
    _, err = p.communicate(timeout=90)
    assert p.returncode == 143, err[:3000] + "\n...\n" + err[-1000:]
    assert "interrupted" in err and "Traceback" not in err and "SystemError" not in err
    assert not [f for f in out.rglob("*") if f.is_file()]
    assert not set(Path(tempfile.gettempdir()).glob("attention-manim-ray-*")) - before
