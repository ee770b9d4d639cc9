"""What narration costs: CPU seconds of `render.py SCENES -ql --force` silent, narrated with an empty
speech cache (every block synthesized) and narrated again (every block from the cache), per minute of
video, and the extra each costs as a share of the silent render.

    python benchmarks/bench_narration.py                        # fluffy_blue_creature and softmax, en
    python benchmarks/bench_narration.py softmax --lang pt
    python benchmarks/bench_narration.py --lang ko              # espeak-ng

Goals (issue 21): the extra at most 0.5× the silent render's time with the speech cache cold, at most
0.05× warm. Each command runs in its own process; the figures are the child's CPU seconds (user +
system) and the wall clock beside them. The speech cache is a temp folder (ATTENTION_MANIM_SPEECH_CACHE),
so the user's own cache is neither used nor touched.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str], env: dict) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run([sys.executable, str(ROOT / "render.py"), *args], cwd=ROOT, capture_output=True, text=True,
                       env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-3000:])
        raise SystemExit(f"render.py {' '.join(args)} failed ({r.returncode})")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def video_seconds(out: Path) -> float:
    import av

    total = 0.0
    for clip in out.rglob("*.mp4"):
        with av.open(str(clip)) as c:
            total += c.duration / 1_000_000
    return total


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenes", nargs="*", default=["fluffy_blue_creature", "softmax"])
    ap.add_argument("--lang", default="en")
    ap.add_argument("--voice", default="auto")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-narration-") as tmp:
        env = dict(os.environ, ATTENTION_MANIM_SPEECH_CACHE=str(Path(tmp) / "speech"))
        common = [*args.scenes, "-ql", "--force", "--lang", args.lang]
        run([*common, "--out", str(Path(tmp) / "warmup")], env)  # glyphs and model caches warm for everyone
        rows = {}
        rows["silent"] = run([*common, "--out", str(Path(tmp) / "silent")], env)
        seconds = {"silent": video_seconds(Path(tmp) / "silent")}
        rows["narrated, cold"] = run([*common, "--voice", args.voice, "--out", str(Path(tmp) / "cold")], env)
        seconds["narrated, cold"] = video_seconds(Path(tmp) / "cold")
        rows["narrated, warm"] = run([*common, "--voice", args.voice, "--out", str(Path(tmp) / "warm")], env)
        seconds["narrated, warm"] = video_seconds(Path(tmp) / "warm")
    silent_cpu = rows["silent"][0]
    silent_rate = silent_cpu / seconds["silent"]  # CPU seconds per second of silent video
    print(f"scenes: {' '.join(args.scenes)} · lang {args.lang} · voice {args.voice}")
    print(f"{'render':<16} {'video s':>8} {'cpu s':>8} {'wall s':>8} {'cpu s/min':>10} {'extra/silent':>13} "
          f"{'extra per min':>14}")
    out = {}
    for name, (cpu, wall) in rows.items():
        per_min = cpu / seconds[name] * 60
        extra = (cpu - silent_cpu) / silent_cpu
        # per minute of video: a narrated clip is longer (holds stretch to the speech), so its frames cost more
        # too; this compares like with like
        extra_per_min = (cpu / seconds[name] - silent_rate) / silent_rate
        out[name] = {"video_s": round(seconds[name], 2), "cpu_s": round(cpu, 2), "wall_s": round(wall, 2),
                     "extra_over_silent": round(extra, 3), "extra_per_minute": round(extra_per_min, 3)}
        print(f"{name:<16} {seconds[name]:8.1f} {cpu:8.1f} {wall:8.1f} {per_min:10.1f} {extra:13.2f} "
              f"{extra_per_min:14.2f}")
    print("goals (issue 21), per minute of video: extra ≤ 0.50× the silent render cold, ≤ 0.05× warm")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
