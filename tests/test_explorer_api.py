"""The explorer's API (issue 14): its numbers are `render.py inspect --json`'s, its errors the CLI's.

The reference numbers come from running the `inspect --json` command itself (click's CliRunner), and
q·k is recomputed here with numpy from inspect's own q and k."""

from __future__ import annotations

import json
import os
import re
import signal
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from click.testing import CliRunner  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

SENTENCE = "a fluffy blue creature roamed the verdant forest"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from attention_manim.explorer.app import create_app
    from attention_manim.explorer.core import Models

    app = create_app(Models.from_args(device="cpu"), renders=tmp_path_factory.mktemp("renders"),
                     extra_config={"pixel_width": 192, "pixel_height": 108, "frame_rate": 5})
    with TestClient(app, base_url="http://127.0.0.1:8765") as c:  # the address the server answers
        yield c


def cli(*args):
    """Run render.py's command line in-process: (exit code, stdout, stderr)."""
    from attention_manim import cli as render

    result = CliRunner().invoke(render.cli, list(args), standalone_mode=False, catch_exceptions=True)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        from attention_manim.model.errors import UserError

        assert isinstance(result.exception, UserError), result.exception
        return 2, result.stdout, f"error: {result.exception.message}"
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def inspected():
    code, out, _ = cli("inspect", SENTENCE, "--json", "--model", "toy", "--device", "cpu")
    assert code == 0
    return json.loads(out)


def test_every_head_matches_inspect_json(client, inspected):
    ref = inspected
    assert ref["model"]["n_heads"] == 4
    for layer in ref["layers"]:
        for h in layer["heads"]:
            r = client.get("/api/head", params={"sentence": SENTENCE, "model": "toy", "layer": layer["index"],
                                                "head": h["index"]})
            assert r.status_code == 200, r.text
            got = r.json()
            assert got["tokens"] == ref["tokens"]
            assert (got["layer"], got["head"]) == (layer["index"], h["index"])
            gh = got["pattern_head"]
            for name in ("scores", "pattern", "mask", "q", "k"):
                np.testing.assert_array_equal(np.array(gh[name]), np.array(h[name]), err_msg=name)
            qk = np.array(h["q"]) @ np.array(h["k"]).T
            np.testing.assert_allclose(gh["qk"], qk, rtol=1e-9, atol=1e-9)
            # the score is q·k / √d_head: the page's three numbers agree with each other
            np.testing.assert_allclose(np.array(gh["scores"]), qk / np.sqrt(ref["model"]["d_head"]), atol=1e-4)
            assert got["next_token"] == ref["next_token"]


def test_default_head_is_the_models_adjective_head(client):
    got = client.get("/api/head", params={"sentence": SENTENCE}).json()
    assert (got["layer"], got["head"]) == (0, 0)
    assert got["role_label"] == "adjectives → nouns"
    assert got["head_note"] == ""  # the toy names its heads: no fallback to explain
    ko = client.get("/api/head", params={"sentence": SENTENCE, "lang": "ko"}).json()
    assert ko["role_label"] != got["role_label"] and re.search(r"[\uac00-\ud7a3]", ko["role_label"])


def test_overview_has_every_head_of_every_layer(client, inspected):
    o = client.get("/api/overview", params={"sentence": SENTENCE, "model": "toy"}).json()
    assert (o["n_layers"], o["n_heads"]) == (1, 4)
    for layer in inspected["layers"]:
        for h in layer["heads"]:
            got = np.array(o["heads"][layer["index"]][h["index"]]["pattern"])
            want = np.where(np.array(h["mask"]), 0.0, np.array(h["pattern"]))
            np.testing.assert_allclose(got, want, atol=5e-4)


def test_unknown_word_is_the_clis_message_with_the_vocabulary_a_click_away(client):
    code, _, err = cli("inspect", "a fluffy zorble creature", "--model", "toy", "--device", "cpu")
    assert code == 2
    r = client.get("/api/head", params={"sentence": "a fluffy zorble creature"})
    assert r.status_code == 400
    body = r.json()["error"]
    assert f"error: {body['message']}" in err
    assert "zorble" in body["message"] and body["unknown_words"] == ["zorble"]
    assert "Traceback" not in r.text
    vocab = client.get("/api/vocab", params={"model": "toy"}).json()
    words = {w for ws in vocab["groups"].values() for w in ws}
    assert {"fluffy", "creature", "forest"} <= words and "zorble" not in words


@pytest.mark.parametrize("params, cli_args", [
    ({"layer": 3, "head": 0}, ("--layer", "3")),
    ({"layer": 0, "head": 9}, ("--head", "9")),
])
def test_out_of_range_head_is_the_clis_message(client, params, cli_args):
    code, _, err = cli("inspect", SENTENCE, "--model", "toy", "--device", "cpu", *cli_args)
    assert code == 2
    r = client.get("/api/head", params={"sentence": SENTENCE, **params})
    assert r.status_code == 400
    assert f"error: {r.json()['error']['message']}" in err


def test_errors_come_back_in_the_pages_language(client):
    r = client.get("/api/head", params={"sentence": SENTENCE, "layer": 3, "head": 0, "lang": "pt"})
    assert r.status_code == 400 and r.json()["error"]["message"].startswith("a camada 3 está fora do intervalo")
    r = client.get("/api/head", params={"sentence": "   ", "lang": "ko"})
    assert r.status_code == 400 and r.json()["error"]["message"] == "문장에 모델이 읽을 수 있는 단어가 없습니다"
    r = client.post("/api/render", json={"scene": "mole_x", "sentence": SENTENCE, "model": "toy", "lang": "pt",
                                         "quality": "l", "format": "mp4"})
    assert r.status_code == 400 and r.json()["error"]["message"] == "cena desconhecida: 'mole_x'"
    assert "mole" in r.json()["error"]["hint"] and r.json()["error"]["hint"].startswith("você quis dizer")


@pytest.mark.parametrize("params, status, words", [
    ({"sentence": SENTENCE, "model": "../../etc/passwd"}, 400, "unknown model"),
    ({"sentence": SENTENCE, "model": "/tmp"}, 400, "unknown model"),
    ({"sentence": "a " * 200}, 400, "at most 300"),
    ({"sentence": "   "}, 400, "no words"),
    ({"sentence": SENTENCE, "layer": "x"}, 422, "bad value for layer"),
    ({"sentence": SENTENCE, "lang": "xx"}, 400, "unknown language"),
])
def test_bad_input_is_a_4xx_with_a_message(client, params, status, words):
    r = client.get("/api/head", params=params)
    assert r.status_code == status, r.text
    assert words in r.json()["error"]["message"]
    assert "Traceback" not in r.text


def test_the_page_and_its_files_are_served_locally(client):
    page = client.get("/")
    assert page.status_code == 200
    srcs = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert srcs and all(s.startswith("/static/") or s.startswith("data:") for s in srcs), srcs
    for s in srcs:
        if s.startswith("/static/"):
            assert client.get(s).status_code == 200
    js = client.get("/static/app.js").text
    assert "http://" not in js.replace("http://www.w3.org/2000/svg", "") and "https://" not in js


def test_page_words_come_from_the_catalog_in_each_language(client):
    from attention_manim.scenes.i18n import load_catalog

    en = client.get("/api/strings", params={"lang": "en"}).json()
    ko = client.get("/api/strings", params={"lang": "ko"}).json()
    pt = client.get("/api/strings", params={"lang": "pt"}).json()
    assert set(en) == set(ko) == set(pt) and len(en) > 40
    assert en["title"] == load_catalog("en")["explorer.title"]
    assert ko["render_button"] != en["render_button"] and pt["render_button"] != en["render_button"]
    # every data-i18n key of the page exists
    page = client.get("/").text
    for key in re.findall(r'data-i18n="([^"]+)"', page):
        assert key in en, key


def test_scenes_that_fit_the_sentence(client):
    r = client.get("/api/scenes", params={"sentence": SENTENCE, "model": "toy"}).json()
    fits = {s["name"]: s["fits"] for s in r["scenes"]}
    assert fits["attention_pattern"] and fits["softmax"]
    assert not fits["mole"]  # its plan needs the word "mole"
    r = client.get("/api/scenes", params={"sentence": "one mole of carbon dioxide", "model": "toy"}).json()
    assert {s["name"]: s["fits"] for s in r["scenes"]}["mole"]


@pytest.mark.parametrize("body, words", [
    ({"scene": "nope", "sentence": SENTENCE}, "unknown scene 'nope'"),
    ({"scene": "attention_pattern", "sentence": SENTENCE, "quality": "k"}, "unknown quality"),
    ({"scene": "attention_pattern", "sentence": SENTENCE, "format": "exe"}, "unknown format"),
    ({"scene": "attention_pattern", "sentence": "a fluffy zorble"}, "does not know the word 'zorble'"),
    ({"scene": "attention_pattern", "sentence": SENTENCE, "model": "../x"}, "unknown model"),
    ({"scene": "attention_pattern", "sentence": SENTENCE, "voice": "robot9"}, "unknown voice 'robot9'"),
    ({"scene": "attention_pattern", "sentence": SENTENCE, "voice": "pf_dora", "lang": "en"}, "speaks pt"),
])
def test_bad_render_requests_are_refused_before_queueing(client, body, words):
    r = client.post("/api/render", json=body)
    assert r.status_code == 400 and words in r.json()["error"]["message"]


@pytest.mark.render
def test_a_render_runs_in_the_background_and_its_files_are_served(client):
    r = client.post("/api/render", json={"scene": "attention_pattern", "sentence": "a fluffy blue creature",
                                         "model": "toy", "quality": "l", "lang": "pt"})
    assert r.status_code == 200, r.text
    job = r.json()
    assert job["state"] in ("queued", "planning", "rendering")
    deadline = time.time() + 240
    while job["state"] not in ("done", "error") and time.time() < deadline:
        time.sleep(0.3)
        job = client.get(f"/api/render/{job['id']}").json()
    assert job["state"] == "done", job
    # rendered by the worker process, not by the server (this test process runs the app)
    assert job["pid"] and job["pid"] != os.getpid()
    assert client.app.state.queue.worker_pid() == job["pid"]  # and it stays, warm, for the next job
    kinds = {f["kind"]: f for f in job["files"]}
    assert {"clip", "srt", "vtt", "chapter", "index", "presenter"} <= set(kinds)
    assert client.get(kinds["vtt"]["url"]).text.startswith("WEBVTT")
    clip = client.get(kinds["clip"]["url"])
    assert clip.status_code == 200 and clip.content[4:8] == b"ftyp"  # an mp4
    assert kinds["clip"]["name"].endswith("attention_pattern.pt.mp4")
    index = client.get(kinds["index"]["url"]).json()
    assert index["lang"] == "pt" and index["chapters"][0]["key"] == "pattern"
    assert "Traceback" not in client.get(kinds["srt"]["url"]).text
    page = client.get(kinds["presenter"]["url"])
    assert page.status_code == 200 and "01_pattern.mp4" in page.text
    q = client.get("/api/queue").json()
    assert q["current"] is None and q["waiting"] == [] and q["done"][0]["id"] == job["id"]
    assert client.get("/api/render/nope").status_code == 400


def test_notebook_pattern_view_carries_the_traces_weights(toy_model):
    from attention_manim import explore

    view = explore(SENTENCE, layer=0, head=2)
    page = view._repr_html_()
    ht = toy_model.trace(SENTENCE).head(0, 2)
    n = len(view.tokens)
    cells = re.findall(r'<g class="cell"[^>]*data-q="(\d+)" data-k="(\d+)" data-weight="([^"]+)"', page)
    assert len(cells) == n * n
    for q, k, w in cells:
        want = 0.0 if ht.mask[int(q), int(k)] else float(ht.pattern[int(q), int(k)])
        assert float(w) == pytest.approx(want, abs=1e-12)
    assert f"{ht.pattern[3, 2]:.4f}" in page  # in the aria-label of that cell
    assert "<script" not in page and "http" not in page.replace("http://www.w3.org/2000/svg", "")
    from attention_manim.model.errors import UserError

    with pytest.raises(UserError, match="unknown model"):
        explore(SENTENCE, model="no-such-model")


def test_explore_command_binds_localhost_and_prints_the_address(tmp_path):
    import socket
    import subprocess
    import sys
    import urllib.request
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "render.py", "explore", "--port", str(port), "--renders",
                             str(tmp_path / "r")], cwd=root, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert f"http://127.0.0.1:{port}/" in line, line
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/config", timeout=10) as r:
            assert json.load(r)["models"] == ["toy", "smollm2"]
    finally:
        proc.terminate()
        proc.wait(10)
    bad = subprocess.run([sys.executable, "render.py", "explore", "--model", str(tmp_path / "nowhere")], cwd=root,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "no model folder" in bad.stderr and "Traceback" not in bad.stderr


@pytest.mark.render
def test_notebook_render_clip_displays_as_a_video(tmp_path):
    import base64

    from attention_manim import render_clip

    clip = render_clip("attention_pattern", "a fluffy blue creature", quality="l", out=tmp_path,
                       extra_config={"pixel_width": 192, "pixel_height": 108, "frame_rate": 5})
    assert clip.path == tmp_path / "480p15" / "attention_pattern.mp4" and clip.duration > 1
    page = clip._repr_html_()
    m = re.search(r'<video controls[^>]* src="data:video/mp4;base64,([^"]+)"', page)
    assert m and base64.b64decode(m.group(1)) == clip.path.read_bytes()
    clip.inline_limit = 0  # a clip too big to inline is shown from its file
    assert f'src="{clip.path}"' in clip._repr_html_()


# --- the explorer is closed to other sites and bounded (issue 20) -----------------------------------

@pytest.mark.parametrize("host, ok", [
    ("127.0.0.1:8765", True), ("localhost:8765", True), ("[::1]:8765", True), ("LOCALHOST", True),
    ("evil.example:8765", False), ("127.0.0.1.evil.example", False), ("localhost.:8765", False), ("", False),
])
def test_only_its_own_host_names_are_answered(client, host, ok):
    r = client.get("/api/config", headers={"host": host})
    assert r.status_code == (200 if ok else 403), (host, r.status_code)
    if not ok:
        assert r.json()["error"]["message"] == "this server answers only its own address"


def test_a_port_is_checked_when_the_server_knows_it(tmp_path):
    from attention_manim.explorer.app import create_app, host_allowed
    from attention_manim.explorer.core import Models

    assert host_allowed("127.0.0.1:8765", ("127.0.0.1",), 8765) and not host_allowed("127.0.0.1:9999", ("127.0.0.1",), 8765)
    app = create_app(Models.from_args(device="cpu"), renders=tmp_path, port=8765)
    with TestClient(app, base_url="http://127.0.0.1:9999") as c:
        assert c.get("/api/config").status_code == 403
    with TestClient(app, base_url="http://127.0.0.1:8765") as c:
        assert c.get("/api/config").status_code == 200


def test_cross_site_posts_and_big_bodies_are_refused(client):
    body = {"scene": "softmax", "sentence": SENTENCE, "model": "toy", "quality": "l", "format": "mp4"}
    r = client.post("/api/render", json=body, headers={"origin": "http://evil.example"})
    assert r.status_code == 403 and "other sites" in r.json()["error"]["message"]
    r = client.post("/api/render", json=body, headers={"sec-fetch-site": "cross-site"})
    assert r.status_code == 403
    r = client.post("/api/render", content=b"{" + b" " * (70 * 1024) + b"}",
                    headers={"content-type": "application/json"})
    assert r.status_code == 413 and "at most 65,536" in r.json()["error"]["message"]


def test_the_queue_is_capped_and_jobs_can_be_cancelled(client, monkeypatch):
    from attention_manim.explorer import jobs

    queue = client.app.state.queue
    gate = jobs.threading.Event()
    monkeypatch.setattr(queue, "_render", lambda job: gate.wait(10))  # renders held until released
    monkeypatch.setattr(jobs, "MAX_WAITING", 2)
    body = {"scene": "softmax", "sentence": SENTENCE, "model": "toy", "quality": "l", "format": "mp4"}
    ids = []
    try:
        for _ in range(40):
            r = client.post("/api/render", json=body, headers={"origin": "http://127.0.0.1:8765"})
            if r.status_code != 200:
                break
            ids.append(r.json()["id"])
        assert r.status_code == 429 and "already waiting" in r.json()["error"]["message"], r.text
        assert len(ids) <= 3  # one running, two waiting
        waiting = ids[-1]
        r = client.delete(f"/api/render/{waiting}")
        assert r.status_code == 200 and r.json()["state"] == "cancelled"
        assert waiting not in [j["id"] for j in client.get("/api/queue").json()["waiting"]]
    finally:
        gate.set()


@pytest.mark.render
def test_render_this_can_narrate(client):
    from attention_manim.voice.engines import available, pick_voice

    if not available(pick_voice("auto", "en")):
        pytest.skip("the Kokoro voice is not installed")
    assert client.get("/api/config").json()["voices"]["en"] is True
    r = client.post("/api/render", json={"scene": "softmax", "sentence": "a fluffy blue creature", "model": "toy",
                                         "quality": "l", "lang": "en", "voice": "auto"})
    assert r.status_code == 200, r.text
    job = r.json()
    deadline = time.time() + 300
    while job["state"] not in ("done", "error") and time.time() < deadline:
        time.sleep(0.5)
        job = client.get(f"/api/render/{job['id']}").json()
    assert job["state"] == "done", job
    assert job["voice"] == "auto"
    clip = next(f for f in job["files"] if f["kind"] == "clip")
    index = client.get(next(f for f in job["files"] if f["kind"] == "index")["url"]).json()
    assert index["narration"]["voice"] == "af_heart"
    import av
    import io

    with av.open(io.BytesIO(client.get(clip["url"]).content)) as c:
        assert [s.codec_context.name for s in c.streams.audio] == ["aac"]


# --- renders run in a worker process (issue 19) ------------------------------------------------------

LONG = {"scene": "fluffy_blue_creature", "sentence": SENTENCE, "model": "toy", "quality": "l", "format": "mp4"}
SHORT = {"scene": "attention_pattern", "sentence": "a fluffy blue creature", "model": "toy", "quality": "l",
         "format": "mp4"}


def submit(client, body) -> dict:
    r = client.post("/api/render", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def wait_for(client, job_id, states, until=lambda job: True, timeout=240) -> dict:
    deadline = time.time() + timeout
    while True:
        job = client.get(f"/api/render/{job_id}").json()
        if (job["state"] in states and until(job)) or time.time() > deadline:
            return job
        time.sleep(0.2)


def alive(pid) -> bool:
    """Whether process `pid` runs (a zombie nobody has reaped yet does not: in a container without an
    init, an orphan that exited stays one)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return True


def leftovers(renders, job_id) -> list:
    """Anything a job left: its folder, or a temp folder of a render anywhere."""
    return ([renders / job_id] if (renders / job_id).exists() else []) + list(renders.rglob(".*-rendering-*"))


@pytest.mark.render
def test_the_next_render_reuses_the_warm_worker_and_the_server_answers_meanwhile(client, monkeypatch):
    from attention_manim.scenes import batch, runner

    def not_here(*args, **kwargs):
        raise AssertionError("the server process rendered")

    monkeypatch.setattr(runner, "render_scene", not_here)  # in this process only: renders happen elsewhere
    monkeypatch.setattr(batch.Worker, "run", not_here)
    first = wait_for(client, submit(client, SHORT)["id"], {"done", "error"})
    assert first["state"] == "done", first
    job = submit(client, LONG)
    job = wait_for(client, job["id"], {"rendering"}, until=lambda j: j["written"] > 0)
    assert job["state"] == "rendering" and job["pid"] == first["pid"]  # the same process: the model stays loaded
    for _ in range(5):  # the server is not the process that renders: it answers at once
        t = time.perf_counter()
        assert client.get("/api/queue").json()["current"]["id"] == job["id"]
        assert time.perf_counter() - t < 1.0
    client.delete(f"/api/render/{job['id']}")
    assert wait_for(client, job["id"], {"cancelled", "done", "error"}, timeout=60)["state"] == "cancelled"


@pytest.mark.render
def test_cancelling_a_running_render_stops_its_work_and_leaves_nothing(client, monkeypatch):
    from attention_manim.explorer import jobs

    queue = client.app.state.queue
    renders = queue.out_dir
    # politely: the render stops at its next animation; its worker stays for the next job
    job = submit(client, LONG)
    job = wait_for(client, job["id"], {"rendering"}, until=lambda j: j["written"] > 0)
    pid = job["pid"]
    assert job["state"] == "rendering" and pid != os.getpid() and alive(pid)
    assert (renders / job["id"]).is_dir()  # its temp folder is being written
    assert client.delete(f"/api/render/{job['id']}").status_code == 200
    job = wait_for(client, job["id"], {"cancelled", "done", "error"}, timeout=60)
    assert job["state"] == "cancelled", job
    assert leftovers(renders, job["id"]) == [] and job["files"] == []
    assert queue.worker_pid() == pid and alive(pid)
    # firmly: a render that does not stop in time (here: at once) has its worker process stopped
    monkeypatch.setattr(jobs, "CANCEL_GRACE_S", 0.0)
    job = submit(client, LONG)
    job = wait_for(client, job["id"], {"rendering"}, until=lambda j: j["written"] > 0)
    assert job["pid"] == pid
    client.delete(f"/api/render/{job['id']}")
    job = wait_for(client, job["id"], {"cancelled", "done", "error"}, timeout=60)
    assert job["state"] == "cancelled", job
    assert not alive(pid)  # the work is killed with its process
    assert leftovers(renders, job["id"]) == []  # its `finally` removed the temp folder; the job's folder went too
    monkeypatch.undo()
    nxt = wait_for(client, submit(client, SHORT)["id"], {"done", "error"})
    assert nxt["state"] == "done" and nxt["pid"] not in (None, pid)  # a fresh worker


@pytest.mark.render
def test_a_killed_worker_fails_its_job_in_the_pages_language_and_the_next_job_starts_a_fresh_one(client):
    renders = client.app.state.queue.out_dir
    job = submit(client, {**LONG, "lang": "pt"})
    job = wait_for(client, job["id"], {"rendering"}, until=lambda j: j["written"] > 0)
    pid = job["pid"]
    assert job["state"] == "rendering" and pid and pid != os.getpid()
    os.kill(pid, signal.SIGKILL)  # no cleanup of its own: the server's
    job = wait_for(client, job["id"], {"error", "done", "cancelled"}, timeout=60)
    assert job["state"] == "error", job
    assert job["error"]["message"] == "o processo de renderização parou antes de terminar o clipe (código de saída -9)"
    assert job["error"]["hint"].startswith("renderize de novo")
    assert leftovers(renders, job["id"]) == []
    nxt = wait_for(client, submit(client, SHORT)["id"], {"done", "error"})
    assert nxt["state"] == "done", nxt
    assert nxt["pid"] not in (None, pid) and alive(nxt["pid"])
    clip = next(f for f in nxt["files"] if f["kind"] == "clip")
    assert client.get(clip["url"]).content[4:8] == b"ftyp"


@pytest.mark.render
def test_a_mistake_found_by_the_worker_crosses_back_with_its_catalog_key(client):
    """The server cannot see this one (the ring needs a token per device; the plan, in the worker, finds
    three): the UserError crosses the pipe with its key and parameters and is said in Portuguese."""
    job = submit(client, {"scene": "ring_attention", "sentence": "a fluffy creature", "model": "toy", "lang": "pt",
                          "quality": "l", "format": "mp4"})
    job = wait_for(client, job["id"], {"error", "done", "cancelled"})
    assert job["state"] == "error", job
    assert job["error"] == {"message": "--devices 4 está fora do intervalo: esta lição aceita de 2 a 3 dispositivos",
                            "hint": "o anel desenha no máximo 6 dispositivos, e cada um precisa de pelo menos um "
                                    "token (a frase tem 3)"}
    assert not (client.app.state.queue.out_dir / job["id"]).exists()


@pytest.mark.render
def test_the_worker_does_not_outlive_a_killed_server(tmp_path):
    """The server killed outright (SIGKILL: no shutdown of its own) mid-render: its worker process
    stops too (batch's orphan watch) and removes its temp folder."""
    import socket
    import subprocess
    import sys
    import urllib.request
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    renders = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "render.py", "explore", "--port", str(port), "--renders", str(renders),
                             "--device", "cpu"], cwd=root, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"

    def call(path, body=None):
        req = urllib.request.Request(base + path, data=json.dumps(body).encode() if body else None,
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.load(r)

    try:
        assert f"{base}/" in proc.stderr.readline()
        job = call("/api/render", LONG)
        deadline = time.time() + 120
        while time.time() < deadline:
            job = call(f"/api/render/{job['id']}")
            if job["state"] == "rendering" and job["written"] > 0:
                break
            time.sleep(0.3)
        pid = job["pid"]
        assert job["state"] == "rendering" and pid not in (None, proc.pid) and alive(pid)
        assert list(renders.rglob(".*-rendering-*"))
    finally:
        proc.kill()
        proc.wait(10)
    deadline = time.time() + 20
    while alive(pid) and time.time() < deadline:
        time.sleep(0.2)
    assert not alive(pid), "the worker outlived its server"
    assert list(renders.rglob(".*-rendering-*")) == []  # its render's `finally` ran
