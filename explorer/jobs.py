"""The explorer's render queue: one render at a time, in a worker thread, the rest waiting in order.

A job renders with `scenes.runner.render_scene` into a folder the server owns
(`<renders>/<job id>/`); its progress is the chapter being drawn (of the lesson's chapters) and the
seconds of video written so far. (A dry run to learn the total first would cost as much as the
planning and playing itself: minutes for the long lessons on two cores.)
User mistakes end a job with the CLI's message and hint; any other failure ends it with a short
message (the traceback goes to the server's log only).
"""

from __future__ import annotations

import inspect
import itertools
import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from attention_manim.model.errors import UserError

log = logging.getLogger("explorer")
QUALITIES = ("l", "m", "h")  # the page offers up to 1080p; 4K belongs to the CLI
FORMATS = ("mp4", "webm", "gif")
MAX_WAITING = 20  # renders queued at once; more is a 429 ("try later"), not a growing list
MAX_FINISHED = 200  # finished jobs the server remembers (a long-running server's list stays bounded)


@dataclass
class Job:
    id: str
    scene: str
    model: str
    sentence: str
    layer: int | None
    head: int | None
    quality: str
    lang: str
    fmt: str
    layout: str = "video"
    voice: str | None = None  # render --voice: the clip speaks its captions
    extra_config: dict | None = None  # tests: a tiny frame size
    state: str = "queued"  # queued, planning, rendering, done, error
    progress: float = 0.0
    written: float = 0.0  # seconds of video written so far
    chapter: int = 0  # the chapter being drawn (1-based; 0 before the first)
    chapter_key: str = ""
    n_chapters: int = 0
    error: dict | None = None
    files: list[dict] = field(default_factory=list)
    chapters: bool = False
    created: float = field(default_factory=time.time)
    cancel_requested: bool = False

    def public(self, position: int | None = None) -> dict:
        out = {k: getattr(self, k) for k in ("id", "scene", "model", "sentence", "layer", "head", "quality",
                                             "lang", "voice", "state", "progress", "written", "chapter", "chapter_key",
                                             "n_chapters", "error",
                                             "files", "chapters")}
        out["format"] = self.fmt
        out["position"] = position
        return out


class QueueFullError(UserError):
    status = 429


class Cancelled(Exception):
    """Raised inside a render whose job was cancelled: the runner's cleanup removes its temp folder."""


def sweep_unfinished(out_dir: Path) -> int:
    """After a restart: remove what renders stopped mid-way left in `out_dir` (hidden temp folders,
    job folders with no finished file) and return how many renders were lost. The queue lived in
    memory: those renders are not resumed."""
    import re
    import shutil

    lost = 0
    if not out_dir.is_dir():
        return 0
    for job_dir in out_dir.iterdir():
        if not (job_dir.is_dir() and re.fullmatch(r"\d+-\d+", job_dir.name)):
            continue
        for tmp in job_dir.rglob(".*-rendering-*"):
            shutil.rmtree(tmp, ignore_errors=True)
        if not any(f.is_file() for f in job_dir.rglob("*")):
            shutil.rmtree(job_dir, ignore_errors=True)
            lost += 1
    if lost:
        log.warning("%d render(s) stopped by the last shutdown were lost; start them again from the page", lost)
    return lost


class RenderQueue:
    def __init__(self, models, out_dir: Path, render_inputs):
        self.models = models
        self.out_dir = Path(out_dir)
        self.lost_at_start = sweep_unfinished(self.out_dir)
        self.render_inputs = render_inputs  # (job) -> (scene class, SceneInputs)
        self.jobs: dict[str, Job] = {}
        self.waiting: deque[str] = deque()
        self.current: str | None = None
        self._ids = itertools.count(1)
        self._cv = threading.Condition()
        self._worker = threading.Thread(target=self._run, name="explorer-render", daemon=True)
        self._worker.start()

    def submit(self, job_kw: dict) -> Job:
        with self._cv:
            if len(self.waiting) >= MAX_WAITING:
                raise QueueFullError(f"{len(self.waiting)} renders are already waiting",
                                     "wait for one to finish, or cancel one", key="queue_full",
                                     count=len(self.waiting))
            job = Job(id=f"{int(time.time())}-{next(self._ids)}", **job_kw)
            self.jobs[job.id] = job
            self.waiting.append(job.id)
            self._cv.notify()
            return job

    def status(self, job_id: str) -> dict:
        with self._cv:
            job = self.jobs.get(job_id)
            if job is None:
                raise UserError(f"no render {job_id[:40]!r}", "start one with the Render button", key="no_render",
                                job=job_id[:40])
            pos = list(self.waiting).index(job_id) + 1 if job_id in self.waiting else None
            return job.public(pos)

    def cancel(self, job_id: str) -> dict:
        """A waiting job leaves the queue; the running one stops at its next animation."""
        with self._cv:
            job = self.jobs.get(job_id)
            if job is None:
                raise UserError(f"no render {job_id[:40]!r}", "start one with the Render button", key="no_render",
                                job=job_id[:40])
            if job_id in self.waiting:
                self.waiting.remove(job_id)
                job.state = "cancelled"
            elif job.state in ("queued", "planning", "rendering"):
                job.cancel_requested = True
            return job.public()

    def queue(self) -> dict:
        with self._cv:
            return {"lost_at_start": self.lost_at_start,
                    "current": self.jobs[self.current].public(0) if self.current else None,
                    "waiting": [self.jobs[j].public(i + 1) for i, j in enumerate(self.waiting)],
                    "done": [j.public() for j in sorted(self.jobs.values(), key=lambda j: -j.created)
                             if j.state in ("done", "error", "cancelled")][:10]}

    def _run(self):
        while True:
            with self._cv:
                while not self.waiting:
                    self._cv.wait()
                self.current = self.waiting.popleft()
                job = self.jobs[self.current]
            try:
                self._render(job)
                job.state, job.progress = "done", 1.0
            except Cancelled:
                job.state = "cancelled"
            except UserError as e:  # in the language the clip was asked in
                from attention_manim.scenes.i18n import localized_error

                message, hint = localized_error(e, job.lang)
                job.state, job.error = "error", {"message": message, "hint": hint}
            except Exception as e:  # never a traceback on the page; the log keeps it
                log.exception("render %s failed", job.id)
                job.state, job.error = "error", {"message": f"the render failed ({type(e).__name__})",
                                                 "hint": "see the server's log"}
            finally:
                with self._cv:
                    self.current = None
                    self._forget_old()

    def _forget_old(self) -> None:
        """Keep the record of at most MAX_FINISHED finished jobs (their files stay on disk)."""
        finished = sorted((j for j in self.jobs.values() if j.state in ("done", "error", "cancelled")),
                          key=lambda j: j.created)
        for j in finished[: max(0, len(finished) - MAX_FINISHED)]:
            del self.jobs[j.id]

    def _render(self, job: Job):
        from manim import tempconfig

        from attention_manim.scenes.runner import render_scene

        job.state = "planning"
        scene_cls, inputs = self.render_inputs(job)
        lesson = getattr(scene_cls, "lesson", None)
        job.n_chapters = len(lesson.all_chapters()) if lesson else 0
        job.state = "rendering"

        def mark_chapter(scene, key):
            scene_cls.mark_chapter(scene, key)
            job.chapter = len(scene.chapter_marks)
            job.chapter_key = key
            job.progress = min(0.99, (job.chapter - 1) / job.n_chapters) if job.n_chapters else 0.0

        def play(scene, *args, **kwargs):
            if job.cancel_requested:
                raise Cancelled(job.id)
            scene_cls.play(scene, *args, **kwargs)
            job.written = float(scene.renderer.time)

        extra = {"play": play}
        if hasattr(scene_cls, "mark_chapter"):
            extra["mark_chapter"] = mark_chapter
        watched = type(scene_cls.__name__, (scene_cls,), extra)
        out = self.out_dir / job.id
        kw = dict(name=job.scene, quality=job.quality, fmt=job.fmt, out=out, extra_config=job.extra_config)
        if "chapters" in inspect.signature(render_scene).parameters and getattr(scene_cls, "lesson", None):
            kw["chapters"] = True
            job.chapters = True
        result = render_scene(watched, inputs, **kw)
        clip = Path(result.files[0]).resolve()
        present = None
        if getattr(result, "index", None) and job.fmt != "gif":  # the presenter plays <video>s
            from .presenter import build_presenter

            present = build_presenter(result.index, out / "present")
        files = []
        for p in sorted(f.resolve() for f in out.rglob("*") if f.is_file()):
            rel = p.relative_to(out.resolve())
            if any(part.startswith(".") for part in rel.parts) or rel.parts[0] == "present":
                continue
            kind = ("clip" if p == clip else "srt" if p.suffix == ".srt" else "vtt" if p.suffix == ".vtt"
                    and p.parent == clip.parent else "index" if p.name == "index.json" else "chapter")
            files.append({"name": rel.as_posix(), "url": f"/renders/{job.id}/{rel.as_posix()}", "kind": kind})
        files.sort(key=lambda f: (f["kind"] != "clip", f["kind"] != "srt", f["kind"] != "vtt", f["name"]))
        if present is not None:
            files.append({"name": "present/index.html", "url": f"/renders/{job.id}/present/index.html",
                          "kind": "presenter"})
        job.files = files
