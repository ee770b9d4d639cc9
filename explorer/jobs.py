"""The explorer's render queue: one render at a time, in a worker process, the rest waiting in order.

The server process never renders. A job is checked here (`prepare`: the scene, the model, the
sentence; a mistake ends it with the CLI's message in the page's language) and handed to one
long-lived worker process (explorer/worker.py, started with "spawn" on the first render) that renders
it with the CLI's and a batch's own render path (`scenes.batch.Worker.run` -> `scenes.runner.render_scene`)
into a folder the server owns (`<renders>/<job id>/`), keeping each model loaded for the next job.
The worker reports its pid, then its progress: the chapter being drawn (of the lesson's chapters) and
the seconds of video written so far. (A dry run to learn the total first would cost as much as the
planning and playing itself: minutes for the long lessons on two cores.)

Cancelling the running job asks the worker to stop at its next animation; a worker that has not
stopped after CANCEL_GRACE_S (planning a long lesson, one long animation) is terminated (SIGTERM, its
render's `finally` removes the temp folder; SIGKILL after TERM_GRACE_S). A worker that dies mid-job
(killed, out of memory) ends that job with a clear error, and the next job starts a fresh worker.
A job that does not finish leaves nothing: its folder is removed.
User mistakes end a job with the CLI's message and hint (the error crosses the pipe with its catalog
key); any other failure ends it with a short message (the traceback goes to the server's log only).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import multiprocessing as mp
import os
import shutil
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from attention_manim.model.errors import UserError

from .worker import Cancelled, RenderFailed, user_error

log = logging.getLogger("explorer")
QUALITIES = ("l", "m", "h")  # the page offers up to 1080p; 4K belongs to the CLI
FORMATS = ("mp4", "webm", "gif")
MAX_WAITING = 20  # renders queued at once; more is a 429 ("try later"), not a growing list
MAX_FINISHED = 200  # finished jobs the server remembers (a long-running server's list stays bounded)
CANCEL_GRACE_S = 3.0  # a cancelled render's time to stop at its next animation before its worker is stopped
TERM_GRACE_S = 8.0  # a worker's time to clean up after SIGTERM before SIGKILL
POLL_S = 0.2  # how often the queue looks at a cancel request and at the worker's health
PROGRESS_FIELDS = ("state", "n_chapters", "chapter", "chapter_key", "progress", "written", "pid")


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
    state: str = "queued"  # queued, planning, rendering, done, error, cancelled
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
    pid: int | None = None  # the worker process that renders it (never the server's)

    def public(self, position: int | None = None) -> dict:
        out = {k: getattr(self, k) for k in ("id", "scene", "model", "sentence", "layer", "head", "quality",
                                             "lang", "voice", "state", "progress", "written", "chapter", "chapter_key",
                                             "n_chapters", "error",
                                             "files", "chapters", "pid")}
        out["format"] = self.fmt
        out["position"] = position
        return out


class QueueFullError(UserError):
    status = 429


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


class WorkerProcess:
    """The server's end of one render worker (explorer/worker.py): a process started with "spawn", a
    pipe for jobs, a pipe for what happens, and a shared value that asks a job to stop."""

    def __init__(self):
        from .worker import main

        ctx = mp.get_context("spawn")
        self._lock = threading.Lock()
        self.cancel = ctx.Value("q", 0, lock=False)  # one writer (the server), one reader: no lock, no semaphore
        tasks_r, self.tasks = ctx.Pipe(duplex=False)
        self.events, events_w = ctx.Pipe(duplex=False)
        self.process = ctx.Process(target=main, args=(tasks_r, events_w, self.cancel, os.getpid()),
                                   name="explorer-render", daemon=True)
        self.process.start()
        tasks_r.close()  # the worker's ends: closed here, so its death reads as the end of the pipe
        events_w.close()

    @property
    def pid(self) -> int | None:
        return self.process.pid

    def alive(self) -> bool:
        return self.process.is_alive()

    def run(self, seq: int, job_id: str, spec, on_progress, cancel_requested) -> tuple[str, object]:
        """Hand one job to the worker and follow it to its end: ("done", result), ("cancelled", None),
        ("user_error", payload), ("failed", payload) or ("died", exit code)."""
        try:
            self.tasks.send((seq, job_id, spec))
        except OSError:
            return "died", self._exit_code()
        asked = None
        while True:
            if cancel_requested():
                if asked is None:
                    asked = time.monotonic()
                    self.cancel.value = seq  # stop at the next animation
                if time.monotonic() - asked >= CANCEL_GRACE_S:
                    self.stop()  # still planning, or in one long animation: the process goes
                    return "cancelled", None
            try:
                if not self.events.poll(POLL_S):
                    if not self.alive():
                        return "died", self._exit_code()
                    continue
                kind, got, value = self.events.recv()
            except (EOFError, OSError):  # the worker is gone
                return "died", self._exit_code()
            except Exception:  # noqa: BLE001  (a message cut off as the worker was killed)
                self.stop()
                return "died", self._exit_code()
            if got != seq:
                continue  # what an earlier job said after the server stopped listening to it
            if kind == "start":
                on_progress({"pid": value})
            elif kind == "progress":
                on_progress(value)
            else:
                return kind, value

    def _exit_code(self):
        self.process.join(TERM_GRACE_S)
        return self.process.exitcode

    def stop(self) -> None:
        """SIGTERM (the render's `finally` removes its temp folder), then SIGKILL if it does not end.
        Safe from any thread, and more than once (the queue's thread and the server's shutdown)."""
        with self._lock:
            if self.process.is_alive():
                self.process.terminate()
                self.process.join(TERM_GRACE_S)
            if self.process.is_alive():
                self.process.kill()
                self.process.join(5)
            for conn in (self.tasks, self.events):
                try:
                    conn.close()
                except OSError:
                    pass

    def close(self) -> None:
        """Ask the worker to exit once idle (a render under way is stopped), then make sure it has."""
        with self._lock:
            try:
                self.tasks.send(None)
            except OSError:
                pass
            self.process.join(2)
        self.stop()


class RenderQueue:
    """Jobs in order, one at a time, each rendered by the worker process.

    `prepare(job)` runs in the server before a job is handed on: it checks the job (a UserError ends it
    in the page's language) and returns what the worker renders, a `scenes.batch.Job` (its `out` is set
    here: the job's own folder)."""

    def __init__(self, models, out_dir: Path, prepare):
        self.models = models
        self.out_dir = Path(out_dir)
        self.lost_at_start = sweep_unfinished(self.out_dir)
        self.prepare = prepare  # (job) -> scenes.batch.Job
        self.jobs: dict[str, Job] = {}
        self.waiting: deque[str] = deque()
        self.current: str | None = None
        self._ids = itertools.count(1)
        self._seq = itertools.count(1)
        self._cv = threading.Condition()
        self._proc: WorkerProcess | None = None
        self._closing = False  # close() stopped the worker (the server shuts down): its job is cancelled
        # the worker is started from this thread, which lives as long as the queue: on Linux a child
        # set to die with its parent (PR_SET_PDEATHSIG) dies when the *thread* that started it ends
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
        """A waiting job leaves the queue; the running one is stopped (at its next animation, or its
        worker process is) and leaves no file behind."""
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

    def worker_pid(self) -> int | None:
        """The worker process's pid while one runs (None before the first render)."""
        proc = self._proc
        return proc.pid if proc is not None and proc.alive() else None

    def close(self) -> None:
        """Stop the worker process (the server is shutting down). A later job starts a fresh one."""
        with self._cv:
            proc, self._proc = self._proc, None
            self._closing = True
        if proc is not None:
            proc.close()

    def _run(self):
        while True:
            with self._cv:
                while not self.waiting:
                    self._cv.wait()
                self.current = self.waiting.popleft()
                job = self.jobs[self.current]
            state, error = "done", None
            try:
                self._render(job)
            except Cancelled:
                state = "cancelled"
            except UserError as e:  # in the language the clip was asked in
                from attention_manim.scenes.i18n import localized_error

                message, hint = localized_error(e, job.lang)
                state, error = "error", {"message": message, "hint": hint}
            except RenderFailed as e:  # a bug in the worker: its traceback to the log, not to the page
                log.error("render %s failed in the worker process:\n%s", job.id, e.trace)
                state, error = "error", {"message": f"the render failed ({e.kind})", "hint": "see the server's log"}
            except Exception as e:  # never a traceback on the page; the log keeps it
                log.exception("render %s failed", job.id)
                state, error = "error", {"message": f"the render failed ({type(e).__name__})",
                                         "hint": "see the server's log"}
            if state != "done":  # a job that did not finish leaves nothing behind (before it says so)
                shutil.rmtree(self.out_dir / job.id, ignore_errors=True)
            with self._cv:
                job.state, job.error = state, error
                if state == "done":
                    job.progress = 1.0
                self.current = None
                self._forget_old()

    def _forget_old(self) -> None:
        """Keep the record of at most MAX_FINISHED finished jobs (their files stay on disk)."""
        finished = sorted((j for j in self.jobs.values() if j.state in ("done", "error", "cancelled")),
                          key=lambda j: j.created)
        for j in finished[: max(0, len(finished) - MAX_FINISHED)]:
            del self.jobs[j.id]

    def _process(self) -> WorkerProcess:
        """The worker process, started on first use and again after one died or was stopped."""
        with self._cv:
            if self._proc is None or not self._proc.alive():
                if self._proc is not None:
                    self._proc.stop()
                self._proc = WorkerProcess()
                self._closing = False
            return self._proc

    def _update(self, job: Job, fields: dict) -> None:
        for k, v in fields.items():
            if k in PROGRESS_FIELDS:
                setattr(job, k, v)

    def _render(self, job: Job):
        job.state = "planning"
        spec = self.prepare(job)
        spec = dataclasses.replace(spec, out=str(self.out_dir / job.id))
        job.chapters = bool(spec.chapters)
        if job.cancel_requested:
            raise Cancelled()
        proc = self._process()
        kind, value = proc.run(next(self._seq), job.id, spec, lambda f: self._update(job, f),
                               lambda: job.cancel_requested)
        if kind == "done":
            job.files, job.pid = value["files"], value["pid"]
            return
        if kind == "cancelled":
            raise Cancelled()
        if kind == "user_error":
            raise user_error(value)
        if kind == "failed":
            raise RenderFailed(value["type"], value["trace"])
        # the worker died mid-job (killed, out of memory, a crash): the next job starts a fresh one
        with self._cv:
            if self._proc is proc:
                self._proc = None
            closing = self._closing
        proc.stop()
        if closing:  # the server is shutting down and stopped it
            raise Cancelled()
        log.error("render %s: the worker process (pid %s) stopped with exit code %s", job.id, proc.pid, value)
        raise UserError(f"the render process stopped before the clip was finished (exit code {value})",
                        "render it again: the next render starts a fresh process",
                        key="explorer_worker_died", code=value)
