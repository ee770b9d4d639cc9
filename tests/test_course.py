"""Chapter clips (render.py --chapters): one clip per chapter beside the whole clip, and index.json.

Checked against the files themselves, decoded with PyAV: every chapter clip's frame count, the
whole clip's, and the catalog's titles in the clip's language."""

from __future__ import annotations

import json
import os
import re

import av
import numpy as np
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


def decoded(path) -> tuple[list, float]:
    """Every frame of a clip (RGB arrays) and its frame rate."""
    with av.open(str(path)) as c:
        rate = float(c.streams.video[0].average_rate or c.streams.video[0].guessed_rate)
        return [f.to_ndarray(format="rgb24") for f in c.decode(video=0)], rate


@pytest.mark.render
@pytest.mark.parametrize("fmt", ["mp4", "gif"])
def test_chapter_clips_are_manims_sections_even_when_its_cache_is_pruned(make_inputs, tmp_path, fmt):
    """Chapters are manim's sections (joined inside its writer's `finish`), not partial movie files read
    after the render: with max_files_cached=0 manim deletes every partial movie file as the render ends,
    and every chapter is still there, starting on the whole clip's frame at its start time, the
    durations adding up to the whole clip's within a frame. A gif's chapters are gifs."""
    from attention_manim.scenes.runner import render_scene

    res = render_scene(TwoChapters, make_inputs(lang="pt"), name="two_chapters", quality="l", fmt=fmt, out=tmp_path,
                       extra_config={**TINY, "max_files_cached": 0}, chapters=True)
    index = json.loads(res.index.read_text(encoding="utf-8"))
    assert [c["file"] for c in index["chapters"]] == [f"01_softmax.{fmt}", f"02_masking.{fmt}"]
    whole, fps = decoded(res.files[0])
    assert abs(len(whole) / fps - index["duration"]) < 1 / fps
    assert abs(sum(c["duration"] for c in index["chapters"]) - len(whole) / fps) < 1 / fps
    total = 0
    for c in index["chapters"]:
        own, rate = decoded(res.index.parent / c["file"])
        if fmt == "mp4":
            assert (res.index.parent / c["file"]).read_bytes()[4:8] == b"ftyp"
        else:
            assert (res.index.parent / c["file"]).read_bytes()[:6] in (b"GIF89a", b"GIF87a")
        assert rate == fps and abs(len(own) / rate - c["duration"]) < 1 / fps, c["file"]
        at = round(c["start"] * fps)  # the whole clip's frame at the chapter's start
        assert at == total
        first = own[0].astype(int) - whole[at].astype(int)
        if fmt == "mp4":  # the same encoded frames: equal to the bit
            assert not first.any(), c["file"]
        else:  # each gif has its own palette: the same picture, within the palettes' rounding
            assert abs(first).mean() < 6, c["file"]
        total += len(own)
    assert total == len(whole)


@pytest.mark.render
def test_narrated_chapter_clips_carry_their_slice_of_the_sound(make_inputs, tmp_path, monkeypatch):
    """A narrated lesson (Korean, espeak-ng: quick): the whole clip is muxed with the sound track after
    the sections are cut, and each chapter clip gets its own slice of it, as long as its video."""
    from attention_manim.scenes.runner import render_scene
    from attention_manim.voice import audio as A
    from attention_manim.voice.engines import available, pick_voice

    if not available(pick_voice("auto", "ko")):
        pytest.skip("espeak-ng is not installed")
    monkeypatch.setenv("ATTENTION_MANIM_CACHE", str(tmp_path / "cache"))
    res = render_scene(TwoChapters, make_inputs(lang="ko", voice="auto"), name="two_chapters", quality="l",
                       out=tmp_path, extra_config=TINY, chapters=True)
    index = json.loads(res.index.read_text(encoding="utf-8"))
    assert index["narration"]["engine"] == "espeak"
    whole, length = A.audio_of(res.files[0])
    assert abs(len(whole) / A.RATE - length) <= 0.1 and np.abs(whole).max() > 0.01
    total = 0.0
    for c in index["chapters"]:
        piece, seconds = A.audio_of(res.index.parent / c["file"])
        assert abs(seconds - c["duration"]) < 1 / TINY["frame_rate"] + 1e-6, c["file"]
        assert abs(len(piece) / A.RATE - seconds) <= 0.1, c["file"]
        assert np.abs(piece).max() > 0.01, c["file"]  # it speaks
        total += len(piece) / A.RATE
    assert total == pytest.approx(len(whole) / A.RATE, abs=0.1)
