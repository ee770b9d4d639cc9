"""Render a scene to a finished file, atomically.

Manim writes into a private temporary media folder beside the destination; only a complete clip
is moved (os.replace) to `OUT/<quality>/<scene>.<ext>` (`<scene>.<lang>.<ext>` for a language other
than English). A failed or interrupted render leaves no half-written file where a finished one is
expected.

With `chapters=True` the lesson's chapters also become clips of their own: each chapter is a manim
section (`next_section`, named by its key) and manim's `save_sections` writes each section's video
from the same partial movie files it concatenates into the whole clip (no re-encode: frame-exact,
and their durations add up to the whole); they are moved, renamed, into
`OUT/<q>/<scene>[.<lang>]/NN_<chapter>.<ext>` beside an `index.json` (titles in the clip's language,
start, duration, captions). The chapter folder is built in the temp folder and swapped in whole.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from manim import tempconfig
from manim.constants import QUALITIES

from attention_manim.model.errors import UserError

from .speed import render_options as speed_options

QUALITY_FLAGS = {
    "l": "low_quality",  # 854x480, 15 fps
    "m": "medium_quality",  # 1280x720, 30 fps
    "h": "high_quality",  # 1920x1080, 60 fps
    "p": "production_quality",  # 2560x1440, 60 fps
    "k": "fourk_quality",  # 3840x2160, 60 fps
}
FORMATS = ("mp4", "gif", "webm", "mov", "png")
INDEX = "index.json"
BATCH_WORKER = "ATTENTION_MANIM_BATCH_WORKER"  # set in a batch's worker processes


def quality_dir_name(flag: str) -> str:
    q = QUALITIES[QUALITY_FLAGS[flag]]
    return f"{q['pixel_height']}p{q['frame_rate']}"


def clip_stem(name: str, lang: str = "en", lang_suffix: bool = True) -> str:
    """The clip's file name without extension: `softmax` in English, `softmax.ko` in Korean."""
    return name if lang == "en" or not lang_suffix else f"{name}.{lang}"


@dataclass
class RenderResult:
    scene: str
    files: list[Path]  # the clip (or png) first, then its .srt if the scene had captions
    duration: float  # seconds of video
    wall_time: float  # seconds it took
    chapters: list[dict] = field(default_factory=list)  # index.json's chapter entries (--chapters)
    index: Path | None = None  # the chapter folder's index.json (--chapters)
    notes: list[str] = field(default_factory=list)  # what the user should know (a silent gif, a missing recording)


def check_output_dir(out: Path) -> Path:
    """Create `out` if needed and prove it is writable, or raise a UserError."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UserError(f"cannot write to the output folder {str(out)!r}: {e.strerror or e}",
                        "choose another folder with --out", key="out_unwritable", out=str(out),
                        reason=e.strerror or e) from None
    return out


def check_format(fmt: str, transparent: bool, chapters: bool = False) -> None:
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}", f"choose one of {', '.join(FORMATS)}", key="unknown_format",
                        format=fmt, choices=", ".join(FORMATS))
    if transparent and fmt in ("mp4", "gif"):
        raise UserError(f"--transparent cannot be written as {fmt}",
                        "use --format mov (ProRes-like qtrle with alpha), webm (VP9 with alpha) or png",
                        key="transparent_format", format=fmt)
    if chapters and fmt == "png":
        raise UserError("--chapters needs a video: --format png is a single frame",
                        "drop --chapters, or use --format mp4, webm, gif or mov", key="chapters_png")


def chapter_title(say, key: str) -> str:
    """A chapter's title in `say`'s language: lessons.chapters.<key>.title (a gallery piece: its own)."""
    for k in (f"lessons.chapters.{key}.title",
              f"gallery.{key.removeprefix('gallery_')}.title" if key.startswith("gallery_") else None):
        if k and say.has(k):
            return say(k)
    return key.replace("_", " ")


def _chapter_captions(subcaptions, start: float, end: float) -> list[dict]:
    """The captions that begin inside [start, end), in seconds from `start`, clipped to the chapter."""
    out = []
    for sub in subcaptions:
        s, e = sub.start.total_seconds(), sub.end.total_seconds()
        if start - 1e-6 <= s < end - 1e-6:
            out.append({"start": round(s - start, 3), "end": round(min(e, end) - start, 3), "text": sub.content})
    return out


def _chapter_video(writer, section, dest: Path, fmt: str) -> bool:
    """Put the chapter's section video (manim's `save_sections` output, written inside the writer's
    `finish`) at `dest`: moved and renamed as it is, or, for a gif, its frames made into a gif
    (manim writes a gif's sections as the segments' mp4). False when the section has no video (a
    chapter that played nothing: manim drops an empty section)."""
    if section is None or section not in writer.sections or section.video is None:
        return False
    video = Path(writer.sections_output_dir) / section.video
    if not video.is_file():
        return False
    if fmt == "gif":
        writer.combine_files([str(video)], dest, create_gif=True)
    else:
        os.replace(video, dest)
    return True


def _write_chapters(scene, writer, produced: Path, *, name: str, stem: str, lang: str, quality: str, fmt: str,
                    duration: float, folder: Path) -> list[dict]:
    """The lesson's chapters as clips in `folder`, with index.json: each chapter opened a manim section
    named by its key (`LessonSceneBase.mark_chapter`), and manim wrote each section as its own video
    from the very partial movie files of the whole clip (no re-encode: frame-exact, the durations add up
    to the whole). A scene that is not a lesson is one chapter: the whole clip."""
    from .i18n import Say

    say = Say(lang)
    marks = list(getattr(scene, "chapter_marks", ()) or [])
    folder.mkdir(parents=True)
    soundtrack = getattr(scene, "soundtrack", None)
    chapters = []
    for i, mark in enumerate(marks or [(name, 0.0, None)]):
        key, start, section = mark[:3]
        end = marks[i + 1][1] if i + 1 < len(marks) else duration
        file = f"{i + 1:02d}_{key}.{fmt}"
        if marks:
            made = _chapter_video(writer, section, folder / file, fmt)
        else:  # not a lesson: the whole clip (still silent here) is its one chapter
            shutil.copyfile(produced, folder / file)
            made = True
        if made and soundtrack is not None and fmt != "gif":
            from .sound import chapter_sound

            chapter_sound(folder / file, soundtrack, start, end)
        captions = _chapter_captions(writer.subcaptions, start, end)
        vtt = f"{i + 1:02d}_{key}.vtt"
        write_vtt_cues([(c["start"], c["end"], c["text"]) for c in captions], folder / vtt)
        chapters.append({"number": i + 1, "key": key, "title": chapter_title(say, key), "start": round(start, 4),
                         "duration": round(end - start, 4), "file": file, "vtt": vtt, "captions": captions})
    narrator = getattr(scene, "narrator", None)
    index = {"scene": name, "lang": lang, "quality": quality, "format": fmt, "clip": f"../{stem}.{fmt}",
             "duration": round(duration, 4),
             "narration": narrator.describe() if narrator is not None and fmt != "gif" else None,
             "chapters": chapters}
    (folder / INDEX).write_text(json.dumps(index, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    return chapters


def vtt_time(seconds: float) -> str:
    ms = int(round(seconds * 1000))
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}.{ms:03d}"


def write_vtt(subtitles, path: Path) -> Path:
    """The captions as WebVTT (what a browser's <track> plays), the same cues as the .srt."""
    return write_vtt_cues([(s.start.total_seconds(), s.end.total_seconds(), s.content) for s in subtitles], path)


def write_vtt_cues(cues, path: Path) -> Path:
    lines = ["WEBVTT", ""]
    for i, (start, end, text) in enumerate(cues, start=1):
        lines += [str(i), f"{vtt_time(start)} --> {vtt_time(end)}", text.replace("-->", "→"), ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def sweep_stale(folder: Path) -> None:
    """Remove temp folders of renders whose process is gone (killed with SIGKILL, a power cut):
    `.<scene>-rendering-<pid>-*` whose pid no longer runs. A live render's folder is left alone."""
    for p in folder.glob(".*-rendering-*"):
        pid = p.name.rsplit("-rendering-", 1)[1].split("-", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            shutil.rmtree(p, ignore_errors=True)
        except OSError:
            pass  # it runs (as another user): not ours to remove


def _swap_in(new: Path, final: Path, trash: Path) -> None:
    """Put folder `new` at `final`, whole: an old folder there is moved aside first, then removed."""
    if final.exists():
        os.replace(final, trash)
    os.replace(new, final)
    shutil.rmtree(trash, ignore_errors=True)


def render_scene(scene_cls, inputs, *, name: str, quality: str = "l", fmt: str = "mp4",
                 transparent: bool = False, out: Path = Path("renders"), extra_config: dict | None = None,
                 chapters: bool = False, lang_suffix: bool = True) -> RenderResult:
    """Render `scene_cls(inputs)` and move the finished file(s) into `out/<quality>/`."""
    import time

    check_format(fmt, transparent, chapters)
    lang = getattr(inputs, "lang", None) or "en"
    notes = []
    if fmt in ("gif", "png") and (getattr(inputs, "voice", None) or getattr(inputs, "voice_dir", None)):
        import dataclasses

        notes.append(f"a {fmt} has no sound: this {fmt} is silent (use mp4 or webm for the narration)")
        inputs = dataclasses.replace(inputs, voice=None, voice_dir=None)
    stem = clip_stem(name, lang, lang_suffix)
    dest_dir = Path(out) / quality_dir_name(quality)
    created = [d for d in (dest_dir, Path(out)) if not d.exists()]  # removed again after a UserError
    check_output_dir(dest_dir)
    sweep_stale(dest_dir)
    work = Path(tempfile.mkdtemp(dir=dest_dir, prefix=f".{name}-rendering-{os.getpid()}-"))
    start = time.perf_counter()
    try:
        opts = {
            "quality": QUALITY_FLAGS[quality],
            "media_dir": str(work),
            "transparent": transparent,
            "disable_caching": True,
            # nothing to prune: the temp folder goes whole (and chapters do not need the partial movie
            # files after the render: manim joins each section inside `finish`, before it prunes)
            "max_files_cached": -1,
            "verbosity": "WARNING",
            "output_file": name,
            # progress bars only on a terminal: in logs and CI they are thousands of \r lines
            # (and not in a batch's worker processes: their bars would tangle; the batch shows one line a clip)
            "progress_bar": "display" if sys.stderr.isatty() and not os.environ.get(BATCH_WORKER) else "none",
        }
        if fmt == "png":
            opts.update(save_last_frame=True, write_to_movie=False, format="png")
        else:
            opts.update(format=fmt)
        opts.update(speed_options(fmt))  # scenes/speed.py: faster encoding, same frames
        opts.update(extra_config or {})
        if chapters:  # each chapter is a manim section (LessonSceneBase.mark_chapter): one video each
            opts["save_sections"] = True
        chapter_dir = work / "chapters"
        with tempconfig(opts):
            scene = scene_cls(inputs)
            scene.render()
            writer = scene.renderer.file_writer
            produced = Path(writer.image_file_path if fmt == "png" else writer.movie_file_path)
            if fmt == "gif":
                produced = Path(writer.gif_file_path)
            duration = float(scene.renderer.time)
            entries = []
            if chapters:
                entries = _write_chapters(scene, writer, produced, name=name, stem=stem, lang=lang, quality=quality,
                                          fmt=fmt, duration=duration, folder=chapter_dir)
            soundtrack = getattr(scene, "soundtrack", None)
            if soundtrack is not None and fmt in ("mp4", "webm", "mov") and produced.is_file():
                from .sound import add_soundtrack

                add_soundtrack(produced, soundtrack)
        if not produced.is_file():
            raise RuntimeError(f"manim reported {produced} but did not write it")
        final = dest_dir / f"{stem}.{fmt}"
        moved = [final]
        srt = produced.with_suffix(".srt")
        final_srt = dest_dir / f"{stem}.srt"
        final_vtt = final_srt.with_suffix(".vtt")
        if fmt != "png" and srt.is_file():
            vtt = srt.with_suffix(".vtt")
            write_vtt(writer.subcaptions, vtt)
            os.replace(srt, final_srt)
            os.replace(vtt, final_vtt)
            moved += [final_srt, final_vtt]
        elif fmt != "png":
            for stale in (final_srt, final_vtt):  # captions of an older render must not pair with the new clip
                if stale.exists():
                    stale.unlink()
        narrator = getattr(scene, "narrator", None)
        if narrator is not None:
            notes += narrator.notes
        final_chapters = dest_dir / stem
        index = None
        if chapters:
            _swap_in(chapter_dir, final_chapters, work / "old-chapters")
            index = final_chapters / INDEX
        elif fmt != "png" and (final_chapters / INDEX).is_file():
            shutil.rmtree(final_chapters, ignore_errors=True)  # chapters of an older clip would not match it
        os.replace(produced, final)  # the clip appears only once it is complete
        return RenderResult(name, moved, duration, time.perf_counter() - start, entries, index, notes)
    except UserError:
        shutil.rmtree(work, ignore_errors=True)
        for d in created:  # a user's mistake leaves no empty folders either
            try:
                d.rmdir()
            except OSError:
                break
        raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
