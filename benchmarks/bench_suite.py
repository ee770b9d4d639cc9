"""The suite's render time against its video length: seconds of rendering per second of video.

Renders a chosen set of scenes (default: all) at one or more qualities, each in its own process,
and prints per scene: seconds of video, seconds of rendering (wall clock, and the CPU seconds of
the process: main thread plus encoder threads), and the ratio rendering / video. The model is
loaded and the scene imported before the clock starts, so a row is the render itself (planning,
drawing, encoding, assembling the file).

    python benchmarks/bench_suite.py                          # every scene at -ql
    python benchmarks/bench_suite.py softmax mole -q l -q h   # some scenes, two qualities
    python benchmarks/bench_suite.py --fast off               # manim's default encoder settings
    python benchmarks/bench_suite.py --compare                # --fast off vs on, alternating
    python benchmarks/bench_suite.py --baseline /tmp/old      # another checkout (e.g. `git archive`) vs this one
    python benchmarks/bench_suite.py softmax --frames /tmp/ref        # keep every frame's hash (+ some PNGs)
    python benchmarks/bench_suite.py softmax --check-frames /tmp/ref  # same pixels as then?

`--compare` and `--baseline` run the two versions of each scene back to back, in the same
conditions, and print their ratio (old / new: above 1 means faster now). `--frames` records an
MD5 of every frame manim hands to the encoder (a frame held for a wait counts once per frame) and
a PNG of every 10th; `--check-frames` renders again and reports frames that differ (with the
largest channel difference where a PNG was kept). Timings on a shared machine are noisy: compare
in one run, and read the CPU columns.

Columns: `wall s` the render's wall-clock seconds here; `cpu s` the CPU seconds of the process
(the main thread plus manim's encoder threads and x264's); `main s` the main thread's alone
(drawing is single-threaded); `wall/vid` wall seconds per second of video; `2core/vid` the best a
render can do on two idle cores, max(main, cpu / 2), per second of video (the figure the goals
are stated in: a shared machine's wall clock says more about its other users). `speedup`
compares the two versions' `2core` figures. Text outlines are cached on disk between runs
(scenes/components/text.py); `--cold-glyphs` gives each render an empty cache.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QUALITY_NAMES = {"l": "-ql 854x480@15", "m": "-qm 1280x720@30", "h": "-qh 1920x1080@60", "p": "-qp", "k": "-qk"}
PNG_EVERY = 10


# --- the child: one scene, one quality, one process ---------------------------------------------

def child(args) -> None:
    tree = Path(args.tree).resolve()
    os.chdir(tree)
    sys.path.insert(0, str(tree))
    if args.fast is not None:
        os.environ["ATTN_MANIM_FAST"] = "1" if args.fast == "on" else "0"
    if args.cold_glyphs:  # an empty glyph cache: the first render on a fresh machine
        os.environ["ATTN_MANIM_GLYPHS"] = tempfile.mkdtemp(prefix="bench-glyphs-")
    import importlib

    # the tree's own code, as its CLI would build the inputs: one package (attention_manim.*, a model
    # session) since issue 19, top-level packages and render.py's helpers before it (a --baseline)
    packaged = (tree / "model" / "session.py").is_file()
    pkg = "attention_manim." if packaged else ""
    load_all = importlib.import_module(pkg + "scenes.registry").load_all
    render_scene = importlib.import_module(pkg + "scenes.runner").render_scene
    SceneInputs = importlib.import_module(pkg + "scenes.setting").SceneInputs

    scenes = load_all()
    cls = scenes[args.scene]
    lesson = getattr(cls, "lesson", None)
    model_name = args.model or getattr(lesson, "model", None) or "toy"
    if packaged:
        from attention_manim.model.session import load_for_scenes

        session, info = load_for_scenes(model_name, "cpu")
        inputs = SceneInputs(tracer=session, model=info, lang=args.lang)
    else:
        cli = importlib.import_module("render")
        model = cli._load(model_name, "cpu")
        inputs = SceneInputs(tracer=cli.make_tracer(model), model=cli.scene_model_info(model), lang=args.lang)

    frames: list[list] = []
    ref = None
    if args.frames_out or args.frames_ref:
        import numpy as np
        from manim.scene.scene_file_writer import SceneFileWriter
        from PIL import Image

        if args.frames_ref:
            ref = json.loads((Path(args.frames_ref) / f"{args.scene}.{args.quality}.json").read_text())["frames"]
        png_dir = Path(args.frames_out or tempfile.mkdtemp()) / f"{args.scene}.{args.quality}"
        png_dir.mkdir(parents=True, exist_ok=True)
        original = SceneFileWriter.write_frame

        def write_frame(self, pixels, *, repeat=1):
            i = len(frames)
            digest = hashlib.md5(np.ascontiguousarray(pixels).tobytes()).hexdigest()
            entry = [digest, repeat]
            if args.frames_out and i % PNG_EVERY == 0:
                Image.fromarray(pixels).save(png_dir / f"{i:05d}.png")
            if ref is not None and (i >= len(ref) or ref[i][0] != digest):
                old_png = Path(args.frames_ref) / f"{args.scene}.{args.quality}" / f"{i:05d}.png"
                if old_png.is_file():
                    old = np.asarray(Image.open(old_png)).astype(int)
                    diff = np.abs(old - pixels.astype(int))
                    entry += [int(diff.max()), int((diff.max(axis=2) > 0).sum())]
            frames.append(entry)
            return original(self, pixels, repeat=repeat)

        SceneFileWriter.write_frame = write_frame

    with tempfile.TemporaryDirectory(prefix="bench-suite-") as out:
        cpu0, main0, t0 = time.process_time(), time.thread_time(), time.perf_counter()
        result = render_scene(cls, inputs, name=args.scene, quality=args.quality, out=Path(out))
        wall, cpu, main = time.perf_counter() - t0, time.process_time() - cpu0, time.thread_time() - main0
        size = result.files[0].stat().st_size
    report = {"scene": args.scene, "quality": args.quality, "video": result.duration, "wall": wall,
              "cpu": cpu, "main": main, "bytes": size, "frames": sum(r for _, r, *_ in frames)}
    if args.frames_out:
        (Path(args.frames_out) / f"{args.scene}.{args.quality}.json").write_text(
            json.dumps({"report": report, "frames": frames}))
    if ref is not None:
        bad = [(i, e) for i, e in enumerate(frames) if i >= len(ref) or ref[i][0] != e[0]]
        report["frames_checked"] = len(frames)
        report["frames_differing"] = len(bad) + max(0, len(ref) - len(frames))
        report["frame_count_ref"] = len(ref)
        measured = [e[2:] for _, e in bad if len(e) > 2]
        report["max_channel_diff"] = max((m[0] for m in measured), default=None)
        report["max_pixels_differing"] = max((m[1] for m in measured), default=None)
        report["first_differing"] = bad[0][0] if bad else None
    print("BENCH " + json.dumps(report), flush=True)


# --- the parent: many scenes, a table ----------------------------------------------------------

def run_one(tree: Path, scene: str, quality: str, args, fast: str | None = None,
            frames_out: str | None = None, frames_ref: str | None = None) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--tree", str(tree), "--scene", scene,
           "--quality", quality, "--lang", args.lang]
    if args.model:
        cmd += ["--model", args.model]
    if fast:
        cmd += ["--fast", fast]
    if args.cold_glyphs:
        cmd += ["--cold-glyphs"]
    if frames_out:
        cmd += ["--frames-out", frames_out]
    if frames_ref:
        cmd += ["--frames-ref", frames_ref]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    for line in proc.stdout.splitlines():
        if line.startswith("BENCH "):
            return json.loads(line[6:])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
    return {"scene": scene, "quality": quality, "error": " | ".join(tail) or f"exit {proc.returncode}"}


def two_core(r: dict) -> float:
    """Seconds the render would take on two idle cores, at best: the main thread cannot be split,
    and all the CPU work (main thread plus encoders) cannot run faster than on both cores. A
    total row carries the sum of its scenes' figures."""
    return r["two_core"] if "two_core" in r else max(r.get("main") or 0.0, r["cpu"] / 2)


def figures(r: dict) -> list[str]:
    return [f"{r['video']:.1f}", f"{r['wall']:.1f}", f"{r['cpu']:.1f}", f"{r.get('main') or 0:.1f}",
            f"{r['wall'] / r['video']:.3f}", f"{two_core(r) / r['video']:.3f}"]


def old_figures(old: dict, new: dict) -> list[str]:
    return [f"{old['wall']:.1f}", f"{old['cpu']:.1f}", f"{old.get('main') or 0:.1f}",
            f"{two_core(old) / old['video']:.3f}", f"{two_core(old) / two_core(new):.2f}x"]


def fmt_row(cells, widths) -> str:
    return "  ".join(str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("scenes", nargs="*", help="scene names (default: every registered scene)")
    p.add_argument("-q", "--quality", action="append", choices=sorted(QUALITY_NAMES),
                   help="l, m, h, p or k; repeat for several (default: l)")
    p.add_argument("--lang", default="en")
    p.add_argument("--model", help="render every scene on this model (default: each scene's own)")
    p.add_argument("--fast", choices=["on", "off"], help="scenes/speed.py's settings (default: on)")
    p.add_argument("--compare", action="store_true", help="--fast off vs on, each scene back to back")
    p.add_argument("--baseline", help="another checkout of the project: its render vs this one's")
    p.add_argument("--frames", help="record every frame's hash (and some PNGs) into this folder")
    p.add_argument("--check-frames", help="compare every frame with a --frames folder")
    p.add_argument("--cold-glyphs", action="store_true",
                   help="each render starts with an empty glyph-outline cache (a fresh machine)")
    p.add_argument("--skip", action="append", default=[], help="leave this scene out (repeatable)")
    p.add_argument("--json", help="also write the rows to this file")
    # the child's own options
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--tree", default=str(ROOT), help=argparse.SUPPRESS)
    p.add_argument("--scene", help=argparse.SUPPRESS)
    p.add_argument("--frames-out", help=argparse.SUPPRESS)
    p.add_argument("--frames-ref", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        args.quality = args.quality[0]
        child(args)
        return 0

    qualities = args.quality or ["l"]
    if args.scenes:
        names = args.scenes
    else:
        out = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, '.'); from attention_manim.scenes."
                              "registry import load_all; print(' '.join(sorted(load_all())))"],
                             capture_output=True, text=True, cwd=ROOT, check=True).stdout
        names = out.split()
    names = [n for n in names if n not in args.skip]
    paired = args.compare or args.baseline
    old_tree = Path(args.baseline).resolve() if args.baseline else ROOT
    head = ["scene", "q", "video s", "wall s", "cpu s", "main s", "wall/vid", "2core/vid"]
    widths = [22, 2, 7, 7, 7, 7, 8, 9]
    if paired:
        head += ["old wall", "old cpu", "old main", "old 2core", "speedup"]
        widths += [8, 7, 8, 9, 7]
    if args.check_frames:
        head += ["frames"]
        widths += [24]
    print(fmt_row(head, widths), flush=True)
    rows = []
    for q in qualities:
        for name in names:
            old = None
            if paired:
                old = run_one(old_tree, name, q, args, fast="off" if args.compare else None)
            new = run_one(ROOT, name, q, args, fast=args.fast or ("on" if args.compare else None),
                          frames_out=args.frames, frames_ref=args.check_frames)
            if "error" in new:
                print(f"{name:22}  {q}  failed: {new['error']}", flush=True)
                rows.append(new)
                continue
            cells = [name, q] + figures(new)
            if paired:
                if old and "error" not in old:
                    new["old"] = old
                    cells += old_figures(old, new)
                else:
                    cells += ["-"] * 4 + ["failed"]
            if args.check_frames:
                if new.get("frames_differing") == 0:
                    cells.append(f"{new['frames_checked']} identical")
                else:
                    cells.append(f"{new.get('frames_differing')} differ (max {new.get('max_channel_diff')})")
            rows.append(new)
            print(fmt_row(cells, widths), flush=True)
        done = [r for r in rows if r.get("quality") == q and "error" not in r]
        if done:
            total = {k: sum(r.get(k) or 0.0 for r in done) for k in ("video", "wall", "cpu", "main")}
            total["two_core"] = sum(two_core(r) for r in done)
            cells = ["TOTAL", q] + figures(total)
            if paired and all("old" in r for r in done):
                old_total = {k: sum(r["old"].get(k) or 0.0 for r in done) for k in ("video", "wall", "cpu", "main")}
                old_total["two_core"] = sum(two_core(r["old"]) for r in done)
                cells += old_figures(old_total, total)
            print(fmt_row(cells, widths), flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
