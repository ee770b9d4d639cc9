"""Batches of renders: scenes × languages × qualities, in N worker processes or as Ray tasks.

- `Job`: one clip to render (plain, hashable data; crosses process and machine boundaries).
- `Worker`: renders jobs in one process, loading each model once (`load(model, device) -> (tracer,
  info)`; render.py's `load_for_scenes`).
- `run_batch`: the cache check first (scenes/cache.py: an unchanged clip is "up to date" and costs
  neither a model load nor torch), then the remaining jobs in-process (`jobs=1`), in a local pool of
  processes, or on Ray (`backend="ray"`: each task renders into its own temporary folder and sends
  the finished files back, so workers need not share a disk). One progress line per finished job,
  a summary table at the end. A failed job does not stop the others. Ctrl-C or SIGTERM stops the
  workers; every render is atomic (scenes/runner.py), so nothing partial is left behind.
"""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import os
import queue
import shutil
import signal
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from attention_manim.model.errors import UserError
from attention_manim.model.places import is_builtin

from . import cache
from .runner import BATCH_WORKER, INDEX, check_format, clip_stem, quality_dir_name

BACKENDS = ("local", "ray")
RAY_HINT = "pip install .[farm]  (or: pip install ray)"
KEY_ENV = ("ATTN_MANIM_FAST",)  # scenes/speed.py's switch: part of a clip's cache key


@dataclass(frozen=True)
class Job:
    scene: str
    lang: str = "en"
    quality: str = "l"
    fmt: str = "mp4"
    transparent: bool = False
    chapters: bool = False
    model: str = "toy"  # a built-in name or a folder / .gguf path
    device: str = "auto"
    options: tuple = ()  # sorted (SceneInputs field, value) pairs: sentences, focus, layer, head, ...
    out: str = "renders"
    extra_config: tuple = ()  # sorted manim settings (tests and benchmarks: tiny frames)
    voice: str | None = None  # render --voice: who speaks the captions (None: silent)
    voice_dir: str | None = None  # render --voice-dir: the teacher's recordings

    @property
    def qdir(self) -> str:
        return quality_dir_name(self.quality)

    @property
    def stem(self) -> str:
        return clip_stem(self.scene, self.lang)

    def label(self) -> str:
        return f"{self.scene} {self.lang} {self.qdir}"

    def clip(self) -> Path:
        return Path(self.out) / self.qdir / f"{self.stem}.{self.fmt}"

    def needed(self) -> list[Path]:
        """What must be on disk for the clip to count as there."""
        return [self.clip()] + ([Path(self.out) / self.qdir / self.stem / INDEX] if self.chapters else [])

    def key_file(self) -> Path:
        return cache.sidecar(Path(self.out), self.qdir, self.stem, self.fmt)

    def key(self) -> str:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in ("out", "model")}
        fields["env"] = {k: os.environ.get(k) for k in KEY_ENV}  # switches that change the render
        if self.voice_dir:  # the recordings themselves, not only the folder's name
            from attention_manim.voice.narrator import recordings_stamp

            fields["recordings"] = recordings_stamp(self.voice_dir)
        return cache.cache_key(fields, self.model)


@dataclass
class Outcome:
    job: Job
    status: str  # "rendered", "up to date" or "failed"
    duration: float = 0.0  # seconds of video
    wall_time: float = 0.0  # seconds of rendering
    files: list[str] = field(default_factory=list)
    index: str | None = None
    error: str = ""
    hint: str | None = None
    user_error: bool = False
    trace: str = ""  # a real bug's traceback
    notes: list[str] = field(default_factory=list)  # said to the user after the clip (a silent gif, ...)

    @property
    def ok(self) -> bool:
        return self.status != "failed"


def make_jobs(scenes: list[str], langs: list[str], qualities: list[str], **common) -> list[Job]:
    """The cross product scenes × languages × qualities, in that order."""
    return [Job(scene=s, lang=lang, quality=q, **common) for s in scenes for lang in langs for q in qualities]


def options_tuple(options: dict) -> tuple:
    """SceneInputs fields as hashable, sorted pairs (lists become tuples; the lesson options, a dict,
    sorted (name, value) pairs)."""
    def hashable(v):
        if isinstance(v, dict):
            return tuple(sorted(v.items()))
        return tuple(v) if isinstance(v, list) else v

    return tuple(sorted((k, hashable(v)) for k, v in options.items()))


def check_model_name(model: str) -> None:
    if is_builtin(model) or Path(model).exists():
        return
    raise UserError(f"no model named {model!r}: it is neither a built-in (toy, smollm2) nor an existing "
                    "directory or .gguf file",
                    "use --model toy or smollm2, or a directory holding config.json and model.safetensors",
                    key="batch_model_not_found", model=model)


def check_jobs(jobs: list[Job], backend: str = "local", n: int = 1) -> None:
    """Everything that can be checked before anything starts (a UserError: exit 2)."""
    if backend not in BACKENDS:
        rest, last = ", ".join(BACKENDS[:-1]), BACKENDS[-1]
        raise UserError(f"unknown backend {backend!r}", f"choose {rest} or {last}", key="unknown_backend",
                        backend=backend, rest=rest, last=last)
    if n < 1:
        raise UserError(f"--jobs {n}: at least one worker is needed", "use --jobs 1 or more", key="jobs_too_few",
                        jobs=n)
    for job in jobs:
        check_format(job.fmt, job.transparent, job.chapters)
        check_model_name(job.model)
    check_voices(jobs)
    if backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise UserError("--backend ray needs Ray, which is not installed", RAY_HINT, key="ray_missing") from None


def check_voices(jobs: list[Job]) -> None:
    """--voice and --voice-dir, before anything renders: a known voice for each clip's language, its
    engine installed, the recordings folder there and holding only recordings."""
    from attention_manim.voice import pick_voice
    from attention_manim.voice.engines import engine_of
    from attention_manim.voice.narrator import find_recordings

    checked = set()
    for job in jobs:
        if job.voice and (job.voice, job.lang) not in checked:
            voice = pick_voice(job.voice, job.lang)
            if job.fmt not in ("gif", "png"):
                engine_of(voice).check()
            checked.add((job.voice, job.lang))
        if job.voice_dir and job.voice_dir not in checked:
            find_recordings(Path(job.voice_dir))
            checked.add(job.voice_dir)


# --- one process: load each model once, render jobs -------------------------------------------------

def default_loader(model: str, device: str):
    """(session, info) of a model: the process's one session per model and device."""
    from attention_manim.model.session import load_for_scenes

    return load_for_scenes(model, device)


class Worker:
    def __init__(self, load: Callable | None = None):
        self.load = load or default_loader
        self.models: dict[tuple[str, str], tuple] = {}

    def inputs(self, job: Job):
        from .setting import SceneInputs

        if (job.model, job.device) not in self.models:
            self.models[(job.model, job.device)] = self.load(job.model, job.device)
        tracer, info = self.models[(job.model, job.device)]
        opts = {k: list(v) if isinstance(v, tuple) else v for k, v in job.options if k != "options"}
        lesson_opts = dict(job.options).get("options")  # lesson options, as sorted (name, value) pairs
        if lesson_opts:
            opts["options"] = dict(lesson_opts)
        return SceneInputs(tracer=tracer, model=info, lang=job.lang, voice=job.voice, voice_dir=job.voice_dir, **opts)

    def run(self, job: Job, keep_exception: bool = False, scene_cls: type | None = None) -> Outcome:
        """Render `job` (its registered scene, or `scene_cls`: the explorer's watched subclass of it)."""
        from . import runner
        from .registry import load_all

        start = time.perf_counter()
        try:
            cls = scene_cls or load_all()[job.scene]
            res = runner.render_scene(cls, self.inputs(job), name=job.scene, quality=job.quality, fmt=job.fmt,
                                      transparent=job.transparent, out=Path(job.out),
                                      extra_config=dict(job.extra_config) or None, chapters=job.chapters)
            index = getattr(res, "index", None)
            return Outcome(job, "rendered", float(res.duration), float(res.wall_time), [str(f) for f in res.files],
                           str(index) if index else None, notes=list(getattr(res, "notes", []) or []))
        except UserError as e:
            if keep_exception:
                raise
            from .i18n import localized_error

            message, hint = localized_error(e, job.lang)  # in the clip's language, like the CLI's own
            return Outcome(job, "failed", wall_time=time.perf_counter() - start, error=message, hint=hint,
                           user_error=True)
        except Exception as e:  # a real bug: the batch goes on, the traceback is printed
            return Outcome(job, "failed", wall_time=time.perf_counter() - start, error=f"{type(e).__name__}: {e}",
                           trace=traceback.format_exc())


# --- progress and summary ----------------------------------------------------------------------

def progress_line(i: int, n: int, o: Outcome) -> str:
    head = f"[{i}/{n}] {o.job.label()}"
    if o.status == "rendered":
        return f"{head} {o.duration:.1f} s video in {o.wall_time:.1f} s"
    if o.status == "up to date":
        return f"{head} up to date"
    return f"{head} FAILED: {o.error}"


def summary_table(outcomes: list[Outcome]) -> list[str]:
    """Scene, language, quality, seconds of video, seconds of rendering, the file or the error."""
    rows = [("scene", "lang", "quality", "video s", "render s", "file or error")]
    for o in outcomes:
        what = o.files[0] if o.files else ""
        if o.status == "up to date":
            what = f"{what} (up to date)"
        elif o.status == "failed":
            what = f"FAILED: {o.error}" + (f" ({o.hint})" if o.hint else "")
        rows.append((o.job.scene, o.job.lang, o.job.qdir, f"{o.duration:.1f}", f"{o.wall_time:.1f}", what))
    widths = [max(len(r[c]) for r in rows) for c in range(5)]
    lines = []
    for r in rows:
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1]), r[2].ljust(widths[2]),
                 r[3].rjust(widths[3]), r[4].rjust(widths[4]), r[5]]
        lines.append("  ".join(cells))
    lines.insert(1, "-" * len(lines[0]))
    failed = sum(not o.ok for o in outcomes)
    fresh = sum(o.status == "up to date" for o in outcomes)
    lines.append(f"{len(outcomes)} clip(s): {len(outcomes) - failed - fresh} rendered, {fresh} up to date, "
                 f"{failed} failed; {sum(o.duration for o in outcomes):.1f} s of video")
    return lines


# --- the batch -------------------------------------------------------------------------------------

ORPHAN_GRACE_S = 5.0  # a worker whose batch died: seconds to clean up after SIGTERM, then it exits


class Interrupted(BaseException):
    """SIGTERM during a batch (Ctrl-C is KeyboardInterrupt)."""


def _raise_interrupted(signum, frame):
    raise Interrupted()


_TERM_SEEN: list[int] = []


def _raise_interrupted_once(signum, frame):
    """A worker's SIGTERM handler: an orphaned worker gets SIGTERM twice (the kernel's parent-death
    signal and the parent watch), and a second exception raised inside the first one's cleanup would
    cut it short, leaving its temp folder behind."""
    if _TERM_SEEN:
        return
    _TERM_SEEN.append(signum)
    raise Interrupted()


def run_batch(jobs: list[Job], *, n: int = 1, backend: str = "local", load: Callable | None = None,
              ray_address: str | None = None, force: bool = False, use_cache: bool = True,
              on_done: Callable[[int, int, Outcome], None] | None = None,
              on_start: Callable[[Job], None] | None = None) -> list[Outcome]:
    """Render `jobs` and return their outcomes in job order. A single job's UserError is raised."""
    check_jobs(jobs, backend, n)
    if backend == "ray":
        check_ray_address(ray_address)  # before anything starts: ray.init would hang on a wrong one
    outcomes: dict[int, Outcome] = {}
    keys: dict[int, str] = {}
    count = [0]

    def done(i: int, o: Outcome):
        if o.status == "rendered" and use_cache and i in keys and o.files and jobs[i].clip().exists():
            cache.store(jobs[i].key_file(), keys[i], duration=o.duration, files=o.files, index=o.index)
        outcomes[i] = o
        count[0] += 1
        if on_done:
            on_done(count[0], len(jobs), o)

    pending = []
    for i, job in enumerate(jobs):  # the cache first: a hit needs no model, no torch, no worker
        if use_cache:
            keys[i] = job.key()
            record = None if force else cache.lookup(job.key_file(), keys[i], job.needed())
            if record is not None:
                done(i, Outcome(job, "up to date", float(record.get("duration", 0.0)), 0.0,
                                [str(f) for f in record.get("files", [])], record.get("index")))
                continue
        pending.append(i)

    previous = None
    try:
        previous = signal.signal(signal.SIGTERM, _raise_interrupted)
    except ValueError:  # not the main thread: the caller handles signals
        pass
    try:
        if backend == "ray":
            _run_ray(jobs, pending, n, ray_address, done)
        elif n == 1 or len(pending) <= 1:
            worker = Worker(load)
            for i in pending:
                if on_start:
                    on_start(jobs[i])
                done(i, worker.run(jobs[i], keep_exception=len(jobs) == 1))
        else:
            _run_pool(jobs, pending, min(n, len(pending)), load, done)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return [outcomes[i] for i in range(len(jobs))]


# --- local pool ----------------------------------------------------------------------------------

def die_with_parent(parent: int | None) -> None:
    """A batch's workers never go on rendering as orphans: when the process that started this worker
    dies, however it dies (SIGKILL too), the worker gets SIGTERM (its render's `finally` removes its
    temp folder). Two ways, both cheap: multiprocessing's sentinel of the starting process, watched
    by a thread (fork and forkserver alike), and on Linux the kernel's PR_SET_PDEATHSIG (fork:
    `parent` is then the pid the parent must have)."""
    import threading

    me = os.getpid()
    starter = mp.parent_process()
    if starter is not None:
        def watch():
            starter.join()  # returns when the starting process has ended
            os.kill(me, signal.SIGTERM)
            time.sleep(ORPHAN_GRACE_S)  # the render's cleanup has had its time; nothing may keep us
            os._exit(143)

        threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    if parent is None or not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # the parent died before the line above: nobody will signal us
        os.kill(me, signal.SIGTERM)


def _worker_main(tasks, results, load, threads: int, parent: int | None = None) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides; it stops us with SIGTERM
    signal.signal(signal.SIGTERM, _raise_interrupted_once)  # a render's `finally` removes its temp folder
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    os.environ[BATCH_WORKER] = "1"
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        pass
    worker = Worker(load)
    try:
        die_with_parent(parent)
        while True:
            item = tasks.get()
            if item is None:
                return
            i, job = item
            results.put(("start", i, os.getpid()))
            results.put(("done", i, worker.run(job)))
    except Interrupted:
        return


def _context():
    # fork is instant; after torch has started its thread pools in this process, a fresh forkserver
    if sys.platform.startswith("linux") and "torch" not in sys.modules:
        return mp.get_context("fork")
    return mp.get_context("forkserver" if sys.platform != "win32" else "spawn")


def _sweep(job: Job, pid: int) -> None:
    """The temp folder of a render whose worker `pid` was stopped before its `finally` ran."""
    for p in (Path(job.out) / job.qdir).glob(f".{job.scene}-rendering-{pid}-*"):
        shutil.rmtree(p, ignore_errors=True)


def _run_pool(jobs, pending, n, load, done) -> None:
    ctx = _context()
    tasks, results = ctx.Queue(), ctx.Queue()
    threads = max(1, (os.cpu_count() or 1) // n)
    if ctx.get_start_method() != "fork" and load is not None and getattr(load, "__module__", "") == "__main__":
        load = None  # not importable by a fresh process: workers use default_loader
    for i in pending:
        tasks.put((i, jobs[i]))
    procs = []
    for _ in range(n):
        tasks.put(None)
        parent = os.getpid() if ctx.get_start_method() == "fork" else None  # else: the forkserver
        p = ctx.Process(target=_worker_main, args=(tasks, results, load, threads, parent), daemon=True)
        p.start()
        procs.append(p)
    running: dict[int, int] = {}  # job index -> worker pid
    left = set(pending)
    try:
        while left:
            try:
                kind, i, value = results.get(timeout=1.0)
            except queue.Empty:
                alive = {p.pid for p in procs if p.is_alive()}
                for i, pid in list(running.items()):
                    if pid not in alive:  # the worker died mid-render (killed, out of memory, a crash)
                        running.pop(i)
                        left.discard(i)
                        _sweep(jobs[i], pid)
                        done(i, Outcome(jobs[i], "failed", error="the worker process died"))
                if not alive and left:
                    for i in sorted(left):
                        done(i, Outcome(jobs[i], "failed", error="no worker left"))
                    left.clear()
                continue
            if kind == "start":
                running[i] = value
            else:
                running.pop(i, None)
                if i in left:
                    left.discard(i)
                    done(i, value)
    except BaseException:
        for p in procs:
            if p.is_alive():
                p.terminate()  # SIGTERM: the render's finally removes its temp folder
        for p in procs:
            p.join(timeout=15)
            if p.is_alive():
                p.kill()
                p.join()
        for i, pid in running.items():
            _sweep(jobs[i], pid)
        raise
    for p in procs:
        p.join(timeout=15)


# --- Ray -------------------------------------------------------------------------------------------

_RAY_WORKER: Worker | None = None
RAY_BATCH = "ATTN_MANIM_RAY_BATCH"  # names the batch's temp folders, so a local batch can sweep them


def _ray_render(job: Job) -> tuple[Outcome, dict[str, bytes]]:
    """A Ray task: render into a private folder, return the outcome and the finished files' bytes."""
    global _RAY_WORKER
    if _RAY_WORKER is None:  # one model load per worker process per model
        _RAY_WORKER = Worker()
    tmp = Path(tempfile.mkdtemp(prefix=f"attention-manim-ray-{os.environ.get(RAY_BATCH, 'x')}-"))
    try:
        local = dataclasses.replace(job, out=str(tmp))
        o = _RAY_WORKER.run(local)
        payload = {}
        if o.ok:
            for p in tmp.rglob("*"):
                if p.is_file():
                    payload[p.relative_to(tmp).as_posix()] = p.read_bytes()
        real = Path(job.out)
        o.files = [str(real / Path(f).relative_to(tmp)) for f in o.files]
        o.index = str(real / Path(o.index).relative_to(tmp)) if o.index else None
        o.job = job
        return o, payload
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def install(job: Job, payload: dict[str, bytes]) -> None:
    """Put files rendered elsewhere into `job.out`, as atomically as a local render: written into a
    temp folder beside the destination, then the chapter folder swapped in and the clip moved last."""
    from .runner import _swap_in

    dest = Path(job.out) / job.qdir
    dest.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(dir=dest, prefix=f".{job.scene}-arriving-"))
    try:
        for rel, data in payload.items():
            p = work / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        src = work / job.qdir
        for caption in (dest / f"{job.stem}.srt", dest / f"{job.stem}.vtt"):
            if (src / caption.name).is_file():
                os.replace(src / caption.name, caption)
            elif caption.exists():
                caption.unlink()
        if (src / job.stem).is_dir():
            _swap_in(src / job.stem, dest / job.stem, work / "old-chapters")
        elif (dest / job.stem / INDEX).is_file():
            shutil.rmtree(dest / job.stem, ignore_errors=True)
        os.replace(src / job.clip().name, job.clip())
    finally:
        shutil.rmtree(work, ignore_errors=True)


RAY_CONNECT_TIMEOUT_S = 10.0
RAY_CANCEL_GRACE_S = 8.0  # a cancelled Ray task's time to remove its temp folder before it is killed


def check_ray_address(address: str | None, timeout: float = RAY_CONNECT_TIMEOUT_S) -> None:
    """Fail fast, in one line, where ray.init would hang or print a traceback: an address nothing
    answers at (a TCP connection tried for `timeout` seconds), or the ray:// form without Ray's
    client installed."""
    import socket

    if not address or address == "auto":
        return
    target = address
    if address.startswith("ray://"):
        try:
            import grpc  # noqa: F401  (what Ray's client needs)
        except ImportError:
            raise UserError(f"the ray:// address form ({address}) needs Ray's client, which is not installed",
                            "pip install 'ray[client]'  (or give the cluster's GCS address, host:6379)",
                            key="ray_client_missing", address=address) from None
        target = address[len("ray://"):]
    host, _, port = target.rstrip("/").rpartition(":")
    if not host or not port.isdigit():
        raise UserError(f"not a Ray address: {address!r}", "give host:port (e.g. 127.0.0.1:6379) or ray://host:10001",
                        key="ray_bad_address", address=address)
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout):
            pass
    except OSError as e:
        raise UserError(f"no Ray cluster answers at {address} (tried for {timeout:g} s: {e.strerror or e})",
                        "start one with `ray start --head`, or check --ray-address", key="ray_no_answer",
                        address=address, timeout=timeout, reason=e.strerror or e) from None


def _run_ray(jobs, pending, n, address, done) -> None:
    import ray

    root = str(Path(__file__).resolve().parent.parent)
    started = False
    batch = f"{os.getpid()}x{int(time.time())}"
    if not ray.is_initialized():
        env = {"env_vars": {"PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep),
                            BATCH_WORKER: "1", RAY_BATCH: batch}}
        if address:
            ray.init(address=address, runtime_env=env, log_to_driver=False)
        else:
            ray.init(num_cpus=n, include_dashboard=False, log_to_driver=False, runtime_env=env)
        started = True
    # Ray's own SIGTERM handler exits 1 with a stack dump, and an exception raised from a handler
    # inside ray.wait comes out as a SystemError: the handler only notes the signal, and the loop
    # below stops the batch as a local one stops (tasks cancelled, exit 143)
    stop: list[int] = []
    try:
        signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))
    except ValueError:  # not the main thread
        pass
    refs: dict = {}
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(_ray_render)
        refs.update({task.remote(jobs[i]): i for i in pending})
        while refs:
            if stop:
                raise Interrupted()
            ready, _ = ray.wait(list(refs), num_returns=1, timeout=0.5)
            for ref in ready:
                i = refs.pop(ref)
                try:
                    o, payload = ray.get(ref)
                    if o.ok:
                        install(jobs[i], payload)
                except Exception as e:  # the task or its worker failed
                    o = Outcome(jobs[i], "failed", error=f"{type(e).__name__}: {e}", trace=traceback.format_exc())
                done(i, o)
    except BaseException:  # interrupted
        if not started:  # someone else's cluster outlives us: its tasks still running are cancelled
            _cancel_ray_tasks(ray, refs)
        # our own local cluster is shut down below, which stops its workers; cancelling them first
        # races, in Ray 2.60, with a task's reply arriving and crashes the driver (exit 1, a C++ stack)
        raise
    finally:
        if started:
            ray.shutdown()
            if not address:  # our own local cluster: a task killed mid-render left its folder here
                _remove_task_folders(batch)


def _cancel_ray_tasks(ray, refs) -> None:
    for ref in refs:  # first politely: the task gets KeyboardInterrupt and its `finally` runs
        ray.cancel(ref, force=False)
    try:
        ray.wait(list(refs), num_returns=len(refs), timeout=RAY_CANCEL_GRACE_S)
    except Exception:  # noqa: BLE001  (cancelled tasks answer with errors; we only wait)
        pass
    for ref in refs:  # then whatever is still running is stopped
        try:
            ray.cancel(ref, force=True)
        except Exception:  # noqa: BLE001  (already finished)
            pass


def _remove_task_folders(batch: str, settle_s: float = 5.0) -> None:
    """Remove the temp folders this batch's Ray tasks left; a worker still dying may write one
    more file, so look again until none is left (or `settle_s` has passed)."""
    deadline = time.time() + settle_s
    while True:
        left = list(Path(tempfile.gettempdir()).glob(f"attention-manim-ray-{batch}-*"))
        for folder in left:
            shutil.rmtree(folder, ignore_errors=True)
        if not left or time.time() > deadline:
            return
        time.sleep(0.2)
