"""The explorer's render worker: the process that renders the page's clips, one job at a time.

The server (explorer/jobs.py) never renders: it starts this process (multiprocessing "spawn": a fresh
interpreter, none of the server's threads, torch or manim state), hands it one job at a time over a
pipe and reads back what happens on another: started (with the worker's pid), progress, then done, or
cancelled, or the error. The render is the CLI's and a batch's: `scenes.batch.Worker.run`, which calls
`scenes.runner.render_scene` and loads each model once per process (`load_for_scenes`), so a model
(SmolLM2's load, its measured heads) stays warm from one job to the next.

Stopping a render (the server decides):
- politely: the server writes the job's number into a shared value; the render stops at its next
  animation (`Cancelled`; the runner's `finally` removes its temp folder) and the process waits for the
  next job, still warm;
- firmly: SIGTERM (the same cleanup runs, then the process exits), SIGKILL if that does not end it.
The process also stops when the server dies, however it dies (scenes.batch.die_with_parent).

This module imports nothing heavy at its top: the server imports it to name `main` as the target.
As with any "spawn" child, the server's main script is imported again in the worker as `__mp_main__`:
a script that starts the explorer itself (not `render.py explore`) keeps that under
`if __name__ == "__main__":`.
"""

from __future__ import annotations

import os
import pickle
import traceback
from pathlib import Path

from attention_manim.model.errors import UserError, rebuilt


STOPPING: list[int] = []  # SIGTERM received (an exception raised by a signal handler that fires inside a
# weakref callback or a __del__ is printed and dropped: the next animation raises it again)


class Cancelled(BaseException):
    """Raised inside a cancelled render at its next animation. A BaseException: no `except Exception`
    on the way (manim's, the batch worker's) takes it for a failure; every `finally` still runs."""


def error_payload(e: UserError) -> dict:
    """A UserError as plain data for the pipe: its English words and its catalog key and parameters, so
    the server says it in the page's language (scenes.i18n.localized_error)."""
    params = dict(getattr(e, "params", {}) or {})
    try:
        pickle.dumps(params)
    except Exception:  # noqa: BLE001  (a parameter that does not pickle travels as its text)
        params = {k: str(v) for k, v in params.items()}
    return {"message": e.message, "hint": e.hint, "key": getattr(e, "key", None), "params": params}


def user_error(payload: dict) -> UserError:
    """The UserError `error_payload` describes (on the server's side of the pipe)."""
    return rebuilt(UserError, payload["message"], payload.get("hint") or "", payload.get("key"),
                   payload.get("params") or {})


def main(tasks, events, cancel, parent: int) -> None:
    """The worker process: jobs `(seq, job_id, spec)` from `tasks` until None (or the pipe closes);
    `(kind, seq, value)` messages on `events`. `cancel.value == seq` asks the running job to stop."""
    import signal

    from attention_manim.scenes.batch import Interrupted, Worker, _raise_interrupted, die_with_parent
    from attention_manim.scenes.runner import BATCH_WORKER

    def on_sigterm(signum, frame):
        # once: an orphaned worker gets SIGTERM twice (the kernel's parent-death signal and the parent
        # watch), and a second exception raised inside the first one's cleanup would cut it short
        if STOPPING:
            return
        STOPPING.append(signum)  # seen by the next animation if the exception below is lost
        _raise_interrupted(signum, frame)  # a render's `finally` removes its temp folder

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in the server's terminal: the server decides
    signal.signal(signal.SIGTERM, on_sigterm)
    os.environ[BATCH_WORKER] = "1"  # no progress bars: the page shows the progress
    die_with_parent(parent)
    worker = Worker()  # one session per model, loaded on first use and kept
    try:
        while not STOPPING:
            try:
                item = tasks.recv()
            except EOFError:  # the server closed its end
                return
            if item is None:
                return
            seq, job_id, spec = item
            events.send(("start", seq, os.getpid()))
            events.send(run_job(worker, seq, job_id, spec, events, cancel))
    except (Interrupted, BrokenPipeError):  # stopped, or the server is gone: nobody to tell
        return


def run_job(worker, seq: int, job_id: str, spec, events, cancel) -> tuple:
    """Render one job; the message that ends it: done, cancelled, user_error or failed."""
    def progress(**fields):
        events.send(("progress", seq, fields))

    try:
        return ("done", seq, render_job(worker, job_id, spec, progress, lambda: cancel.value == seq))
    except Cancelled:
        return ("cancelled", seq, None)
    except UserError as e:
        return ("user_error", seq, error_payload(e))
    except Exception as e:  # noqa: BLE001  (a real bug: the server logs the traceback, the page says less)
        return ("failed", seq, {"type": type(e).__name__, "trace": traceback.format_exc()})


class RenderFailed(Exception):
    def __init__(self, kind: str, trace: str):
        super().__init__(kind)
        self.kind, self.trace = kind, trace


def render_job(worker, job_id: str, spec, progress, cancelled) -> dict:
    """`spec` (a scenes.batch.Job, `out` the job's own folder) rendered with its progress reported: the
    chapter being drawn and the seconds of video written. Returns the files the page lists."""
    from attention_manim.scenes.registry import load_all

    scene_cls = load_all()[spec.scene]
    lesson = getattr(scene_cls, "lesson", None)
    n = len(lesson.all_chapters()) if lesson else 0

    def mark_chapter(scene, key):
        scene_cls.mark_chapter(scene, key)
        i = len(scene.chapter_marks)
        progress(chapter=i, chapter_key=key, progress=min(0.99, (i - 1) / n) if n else 0.0)

    def play(scene, *args, **kwargs):
        if STOPPING:
            from attention_manim.scenes.batch import Interrupted

            raise Interrupted()
        if cancelled():
            raise Cancelled()
        scene_cls.play(scene, *args, **kwargs)
        progress(written=float(scene.renderer.time))

    extra = {"play": play}
    if hasattr(scene_cls, "mark_chapter"):
        extra["mark_chapter"] = mark_chapter
    watched = type(scene_cls.__name__, (scene_cls,), extra)
    worker.inputs(spec)  # the model's session: loaded by the first job that needs it, then kept
    if cancelled():
        raise Cancelled()
    progress(state="rendering", n_chapters=n)
    outcome = worker.run(spec, keep_exception=True, scene_cls=watched)  # a UserError comes out as itself
    if not outcome.ok:
        raise RenderFailed(outcome.error.partition(":")[0] or "Exception", outcome.trace)
    return {"files": list_files(job_id, Path(spec.out), Path(outcome.files[0]), outcome.index, spec.fmt),
            "duration": outcome.duration, "pid": os.getpid()}


def list_files(job_id: str, out: Path, clip: Path, index: str | None, fmt: str) -> list[dict]:
    """What the page offers for a finished job: the clip first, its captions, the chapters, the index,
    and the presenter (built here from the index; not for a gif: the presenter plays <video>s)."""
    clip = clip.resolve()
    present = None
    if index and fmt != "gif":
        from .presenter import build_presenter

        present = build_presenter(Path(index), out / "present")
    files = []
    for p in sorted(f.resolve() for f in out.rglob("*") if f.is_file()):
        rel = p.relative_to(out.resolve())
        if any(part.startswith(".") for part in rel.parts) or rel.parts[0] == "present":
            continue
        kind = ("clip" if p == clip else "srt" if p.suffix == ".srt" else "vtt" if p.suffix == ".vtt"
                and p.parent == clip.parent else "index" if p.name == "index.json" else "chapter")
        files.append({"name": rel.as_posix(), "url": f"/renders/{job_id}/{rel.as_posix()}", "kind": kind})
    files.sort(key=lambda f: (f["kind"] != "clip", f["kind"] != "srt", f["kind"] != "vtt", f["name"]))
    if present is not None:
        files.append({"name": "present/index.html", "url": f"/renders/{job_id}/present/index.html",
                      "kind": "presenter"})
    return files
