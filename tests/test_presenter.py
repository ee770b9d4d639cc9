"""The presenter (issue 14): a self-contained folder that plays a lesson chapter by chapter.

The folder is built from a real chapter render (two gallery chapters, tiny frames), and driven in
Debian's chromium from file:// (skipped, with the reason, where chromium or Playwright is absent)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]
TINY = {"pixel_width": 192, "pixel_height": 108, "frame_rate": 5}


@pytest.fixture(scope="module")
def presented(tmp_path_factory):
    """Two chapters of the components gallery rendered with chapters=True, then the presenter."""
    from manim import MovingCameraScene

    from attention_manim.explorer.presenter import build_presenter
    from attention_manim.model import load_model
    from attention_manim.model.session import ModelSession
    from attention_manim.scenes.chapters.gallery import GALLERY
    from attention_manim.scenes.lesson import Lesson, LessonSceneBase
    from attention_manim.scenes.runner import render_scene
    from attention_manim.scenes.setting import SceneInputs

    lesson = Lesson("components", GALLERY[:2], examples=("fluffy_blue_creature",), role="adjective_noun")
    scene = type("TwoChaptersLesson", (LessonSceneBase, MovingCameraScene), {"lesson": lesson})
    model = load_model("toy", "cpu")
    out = tmp_path_factory.mktemp("present")
    inputs = SceneInputs(tracer=ModelSession(model, "toy"), model=model.info, lang="ko")
    result = render_scene(scene, inputs, name="components", quality="l", out=out, chapters=True, extra_config=TINY)
    page = build_presenter(result.index, out / "present")
    return result, page


def inline_data(page: Path) -> dict:
    m = re.search(r'<script id="data" type="application/json">(.*?)</script>', page.read_text(encoding="utf-8"), re.S)
    return json.loads(m.group(1))


@pytest.mark.render
def test_folder_holds_the_page_the_clips_and_the_index(presented):
    result, page = presented
    folder = page.parent
    index = json.loads(Path(result.index).read_text(encoding="utf-8"))
    assert [c["number"] for c in index["chapters"]] == [1, 2]
    assert {p.name for p in folder.iterdir()} == {"index.html", "present.js", "present.css",
                                                  *(c["file"] for c in index["chapters"]),
                                                  *(c["vtt"] for c in index["chapters"])}
    for c in index["chapters"]:  # each chapter's captions as WebVTT beside its clip, for a course platform
        vtt = (folder / c["vtt"]).read_text(encoding="utf-8")
        assert vtt.startswith("WEBVTT") and all(cap["text"] in vtt for cap in c["captions"])
    for c in index["chapters"]:  # the very clips the render cut, byte for byte
        assert (folder / c["file"]).read_bytes() == (Path(result.index).parent / c["file"]).read_bytes()
    data = inline_data(page)
    assert data["index"] == index  # inlined: a page opened from file:// cannot fetch index.json
    assert re.search(r"[\uac00-\ud7a3]", data["strings"]["chapter_of"])  # the clip's language (ko)
    for f in ("index.html", "present.js", "present.css"):
        text = (folder / f).read_text(encoding="utf-8")
        assert not re.search(r"https?://", text), f  # nothing from the network


def test_present_refuses_what_it_cannot_do(tmp_path):
    from click.testing import CliRunner

    from attention_manim import cli as render
    from attention_manim.model.errors import UserError

    for args, words in ((["present", "nope"], "unknown scene 'nope'"),
                        (["present", "attention_pattern", "--chapters"], "present does not take --chapters"),
                        (["present", "attention_pattern", "--lang", "xx"], "unknown language")):
        r = CliRunner().invoke(render.cli, args + ["--out", str(tmp_path)], standalone_mode=False)
        assert isinstance(r.exception, UserError) and words in r.exception.message, (args, r.exception)


@pytest.mark.render
def test_present_command_writes_the_folder(tmp_path):
    from click.testing import CliRunner

    from attention_manim import cli as render

    r = CliRunner().invoke(render.cli, ["present", "attention_pattern", "-ql", "--lang", "pt", "--out", str(tmp_path),
                                        "--sentence", "a fluffy blue creature"], standalone_mode=False)
    assert r.exit_code == 0 and r.exception is None, (r.output, r.exception)
    page = Path(r.stdout.strip().splitlines()[-1])
    assert page == tmp_path / "480p15" / "attention_pattern.pt.present" / "index.html"
    data = inline_data(page)
    assert data["index"]["lang"] == "pt" and data["index"]["chapters"][0]["file"] == "01_pattern.mp4"
    assert (page.parent / "01_pattern.mp4").stat().st_size > 1000
    assert data["index"]["chapters"][0]["captions"], "the chapter's captions travel with it"


def browser():
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed (make test installs it: apt-get install chromium)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the dev extra)")
    return sync_api.sync_playwright()


@pytest.mark.render
def test_presenter_plays_from_file_and_keys_move_between_chapters(presented, tmp_path):
    result, page = presented
    folder = tmp_path / "copied elsewhere"  # a folder that travels: nothing points back to the render
    shutil.copytree(page.parent, folder)
    with browser() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            pg = b.new_page()
            pg.goto((folder / "index.html").as_uri())
            pg.wait_for_selector('body[data-chapter="1"]')
            pg.wait_for_function("document.getElementById('clip').currentTime > 0.2", timeout=20000)
            assert pg.evaluate("document.getElementById('clip').duration") > 1
            assert "01_" in pg.evaluate("document.getElementById('clip').currentSrc")
            title1 = pg.inner_text("#title")
            assert title1 == result.chapters[0]["title"]
            # the captions are a WebVTT track the browser plays (no polling): its cues are the chapter's
            want = result.chapters[0]["captions"]
            pg.wait_for_function("(() => { const t = document.getElementById('clip').textTracks[0];"
                                 " return t && t.cues && t.cues.length > 0; })()", timeout=20000)
            cues = pg.evaluate("Array.from(document.getElementById('clip').textTracks[0].cues)"
                               ".map(c => [c.startTime, c.endTime, c.text])")
            assert [c[2] for c in cues] == [c["text"] for c in want]
            assert [round(c[0], 2) for c in cues] == [round(c["start"], 2) for c in want]
            assert pg.evaluate("document.getElementById('clip').textTracks[0].mode") == "showing"
            pg.click("#show-captions")
            assert pg.evaluate("document.getElementById('clip').textTracks[0].mode") == "hidden"
            pg.click("#show-captions")
            assert pg.evaluate("document.getElementById('clip').muted")  # a silent lesson: muted, so it autoplays
            # at its end a chapter holds its last frame: no automatic next chapter
            pg.evaluate("document.getElementById('clip').playbackRate = 16")
            pg.wait_for_selector('body[data-ended="1"]', timeout=20000)
            assert pg.evaluate("document.body.dataset.chapter") == "1"
            assert pg.evaluate("document.getElementById('clip').paused")
            pg.keyboard.press("ArrowRight")
            pg.wait_for_selector('body[data-chapter="2"]')
            pg.wait_for_function("document.getElementById('clip').currentTime > 0.2", timeout=20000)
            assert "02_" in pg.evaluate("document.getElementById('clip').currentSrc")
            assert pg.inner_text("#title") == result.chapters[1]["title"] != title1
            pg.keyboard.press("ArrowLeft")
            pg.wait_for_selector('body[data-chapter="1"]')
            pg.keyboard.press(" ")
            pg.wait_for_selector('body[data-chapter="2"]')
        finally:
            b.close()
