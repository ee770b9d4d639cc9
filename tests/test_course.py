"""Chapter clips (render.py --chapters): one clip per chapter beside the whole clip, and index.json.

Checked against the files themselves, decoded with PyAV: every chapter clip's frame count, the
whole clip's, and the catalog's titles in the clip's language."""

from __future__ import annotations

import json
import os
import re

import av
import pytest
from manim import MovingCameraScene

from attention_manim.scenes.chapters.masking import Masking
from attention_manim.scenes.chapters.pattern import Pattern
from attention_manim.scenes.chapters.softmax import Softmax
from attention_manim.scenes.i18n import Say
from attention_manim.scenes.lesson import Lesson, LessonSceneBase

TINY = {"pixel_width": 96, "pixel_height": 54, "frame_rate": 5}

# two chapters behind title cards, not registered (so no other test renders it)
TwoChapters = type("TwoChaptersLesson", (LessonSceneBase, MovingCameraScene),
                   {"lesson": Lesson("two_chapters", (Softmax(), Masking()), cards=True), "__module__": __name__})
OneChapter = type("OneChapterLesson", (LessonSceneBase, MovingCameraScene),
                  {"lesson": Lesson("one_chapter", (Pattern(),)), "__module__": __name__})


def frames(path) -> tuple[int, float]:
    with av.open(str(path)) as c:
        stream = c.streams.video[0]
        n = sum(1 for _ in c.decode(video=0))
        return n, float(stream.average_rate)


def render(cls, inputs, out, **kw):
    from attention_manim.scenes.runner import render_scene

    return render_scene(cls, inputs, name="two_chapters", quality="l", fmt="mp4", out=out, extra_config=TINY,
                        chapters=True, **kw)


@pytest.mark.render
def test_korean_chapter_clips_add_up_to_the_whole_clip(make_inputs, tmp_path):
    res = render(TwoChapters, make_inputs(lang="ko"), tmp_path)
    q = tmp_path / "480p15"
    assert res.files[0] == q / "two_chapters.ko.mp4" and res.index == q / "two_chapters.ko" / "index.json"
    assert sorted(os.listdir(q)) == ["two_chapters.ko", "two_chapters.ko.mp4", "two_chapters.ko.srt",
                                  "two_chapters.ko.vtt"]
    index = json.loads(res.index.read_text(encoding="utf-8"))
    assert {k: index[k] for k in ("scene", "lang", "quality", "format", "clip")} == {
        "scene": "two_chapters", "lang": "ko", "quality": "l", "format": "mp4", "clip": "../two_chapters.ko.mp4"}
    assert (res.index.parent / index["clip"]).resolve() == res.files[0].resolve()
    chapters = index["chapters"]
    assert chapters == res.chapters
    assert [(c["number"], c["key"], c["file"]) for c in chapters] == [(1, "softmax", "01_softmax.mp4"),
                                                                      (2, "masking", "02_masking.mp4")]
    assert sorted(os.listdir(res.index.parent)) == ["01_softmax.mp4", "01_softmax.vtt", "02_masking.mp4",
                                                    "02_masking.vtt", "index.json"]  # each chapter's captions too
    ko = Say("ko")
    for c in chapters:  # titles in the clip's language, from the catalog
        assert c["title"] == ko(f"lessons.chapters.{c['key']}.title")
        assert re.search(r"[\uac00-\ud7a3]", c["title"])
    whole, fps = frames(res.files[0])
    assert fps == 5 and abs(index["duration"] - whole / fps) < 1 / fps
    assert abs(sum(c["duration"] for c in chapters) - index["duration"]) < 1 / fps
    assert chapters[0]["start"] == 0 and abs(chapters[1]["start"] - chapters[0]["duration"]) < 1e-6
    counted = 0
    for c in chapters:  # each clip plays its own chapter: as many frames as its duration says
        n, rate = frames(res.index.parent / c["file"])
        assert rate == fps and abs(n / rate - c["duration"]) < 1 / fps, c["file"]
        counted += n
        assert c["captions"], c["key"]
        for cap in c["captions"]:
            assert 0 <= cap["start"] < cap["end"] <= c["duration"] + 1e-6
            assert re.search(r"[\uac00-\ud7a3]", cap["text"])
    assert counted == whole  # cut without losing or doubling a frame
    with av.open(str(res.files[0])) as c:
        all_frames = [f.to_ndarray(format="rgb24") for f in c.decode(video=0)]
    at = 0
    for c in chapters:  # each chapter clip's first and last frames are the whole clip's at its bounds
        with av.open(str(res.index.parent / c["file"])) as clip:
            own = [f.to_ndarray(format="rgb24") for f in clip.decode(video=0)]
        assert (own[0] == all_frames[at]).all() and (own[-1] == all_frames[at + len(own) - 1]).all(), c["file"]
        at += len(own)
    # the second chapter's title card caption is its first caption
    assert chapters[1]["captions"][0]["text"] == ko("lessons.chapters.masking.travel")
    # every .srt caption lands in exactly one chapter
    srt = (q / "two_chapters.ko.srt").read_text(encoding="utf-8")
    assert sum(len(c["captions"]) for c in chapters) == len(re.findall(r"^\d+\s*$", srt, re.M))


@pytest.mark.render
def test_english_names_do_not_change_and_a_failed_render_keeps_the_old_chapters(make_inputs, tmp_path):
    from attention_manim.scenes.runner import render_scene

    res = render_scene(OneChapter, make_inputs(), name="one_chapter", quality="l", fmt="mp4", out=tmp_path,
                       extra_config=TINY, chapters=True)
    q = tmp_path / "480p15"
    assert res.files[0] == q / "one_chapter.mp4" and res.index == q / "one_chapter" / "index.json"
    before = {p.name: p.stat().st_mtime_ns for p in (q / "one_chapter").iterdir()}
    assert json.loads(res.index.read_text())["chapters"][0]["title"] == Say("en")("lessons.chapters.pattern.title")

    class Broken(OneChapter):
        def construct(self):
            super().construct()
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        render_scene(Broken, make_inputs(), name="one_chapter", quality="l", fmt="mp4", out=tmp_path,
                     extra_config=TINY, chapters=True)
    assert sorted(os.listdir(q)) == ["one_chapter", "one_chapter.mp4", "one_chapter.srt", "one_chapter.vtt"]  # no temp leftovers
    assert {p.name: p.stat().st_mtime_ns for p in (q / "one_chapter").iterdir()} == before

    with pytest.raises(RuntimeError, match="boom"):  # into an empty folder: no chapter folder at all
        render_scene(Broken, make_inputs(), name="one_chapter", quality="l", fmt="mp4", out=tmp_path / "new",
                     extra_config=TINY, chapters=True)
    assert os.listdir(tmp_path / "new" / "480p15") == []


def test_png_has_no_chapters(make_inputs, tmp_path):
    from attention_manim.model.errors import UserError
    from attention_manim.scenes.runner import render_scene

    with pytest.raises(UserError, match="--chapters") as e:
        render_scene(OneChapter, make_inputs(), name="one_chapter", fmt="png", out=tmp_path, chapters=True)
    assert "mp4" in e.value.hint
    assert not (tmp_path / "480p15").exists() or os.listdir(tmp_path / "480p15") == []
