"""The render farm, measured through the command line a course builder types (one run, ratios printed).

    python benchmarks/bench_farm.py                                  # 4 short scenes × en,ko at -ql
    python benchmarks/bench_farm.py --scenes softmax,query --quality l --no-ray

Four timings of `render.py SCENES -qQ --out DIR`, each a fresh process, wall clock:
  1. `--jobs 1 --force`                 (cold, one process)
  2. `--jobs 2 --force`                 (two worker processes)       goal: 1 / 2 ≥ 1.7 on 2 cores
  3. `--jobs 2 --backend ray --force`   (a local Ray of 2 workers)   goal: 2 / 3 ≥ 0.9
  4. `--jobs 1` again into run 1's folder, right after it (every clip up to date)   goal: 4 / 1 ≤ 0.1
     (the key hashes a snapshot of scenes/ and model/ taken at the start: others' edits in a shared
     tree would otherwise count as code changes)
Each run starts Python, imports manim and the scenes; runs 1–3 load the model once per worker.
On a shared machine the numbers move with the neighbours' load: say so when quoting them.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


CPU = {}  # run label -> CPU seconds (user + system) of render.py and its workers


def timed(args: list[str], label: str = "") -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run([sys.executable, str(ROOT / "render.py"), *args], cwd=ROOT, capture_output=True, text=True)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU[label] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode != 0:
        sys.exit(f"render.py {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-3000:]}")
    return took, r.stderr


def video_seconds(stderr: str) -> float:
    for line in reversed(stderr.splitlines()):
        if " clip(s): " in line and line.rstrip().endswith("s of video"):
            return float(line.rsplit(";", 1)[1].split()[0])
    return float("nan")


def parallel_ceiling(n: int = 2) -> float:
    """What the machine gives right now: n CPU-bound processes side by side vs one after another
    (2.0 on two idle cores; a shared machine gives less, and so does every --jobs speed-up)."""
    cmd = [sys.executable, "-c", "sum(range(3 * 10**7))"]
    start = time.perf_counter()
    for _ in range(n):
        subprocess.run(cmd, check=True)
    one_by_one = time.perf_counter() - start
    start = time.perf_counter()
    procs = [subprocess.Popen(cmd) for _ in range(n)]
    for p in procs:
        p.wait()
    return one_by_one / (time.perf_counter() - start)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", default="attention_pattern,softmax,masking,query")
    ap.add_argument("--langs", default="en,ko", help="languages (scenes × languages clips)")
    ap.add_argument("--quality", default="l")
    ap.add_argument("--no-ray", action="store_true", help="skip the Ray run (Ray not installed)")
    a = ap.parse_args(argv)
    scenes = [s for s in a.scenes.split(",") if s]
    common = [*scenes, "-q", a.quality, "--lang", a.langs, "--device", "cpu"]
    print(f"bench_farm: {len(scenes)} scene(s) ({', '.join(scenes)}) × --lang {a.langs} at -q{a.quality}, "
          f"{os.cpu_count()} CPU(s) seen, load average {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory(prefix="bench-farm-") as tmp:
        tmp = Path(tmp)
        # the cache key hashes scenes/ and model/: hash a snapshot, so that edits made elsewhere in the
        # tree during the run (a shared working tree) do not turn the cache hit into a render
        snapshot = tmp / "code"
        for part in ("scenes", "model"):
            shutil.copytree(ROOT / part, snapshot / part, ignore=shutil.ignore_patterns("__pycache__"))
        os.environ["ATTENTION_MANIM_CODE_ROOTS"] = os.pathsep.join(str(snapshot / p) for p in ("scenes", "model"))
        t1, err1 = timed([*common, "--jobs", "1", "--force", "--out", str(tmp / "one")], "1")
        video = video_seconds(err1)
        print(f"  --jobs 1            {t1:7.1f} s  ({video:.1f} s of video, {t1 / video:.2f} s per s; "
              f"CPU {CPU['1']:.1f} s)")
        th, errh = timed([*common, "--jobs", "1", "--out", str(tmp / "one")])
        assert errh.count("up to date") >= len(scenes), errh
        print(f"  up to date          {th:7.1f} s")
        t2, _ = timed([*common, "--jobs", "2", "--force", "--out", str(tmp / "two")], "2")
        print(f"  --jobs 2            {t2:7.1f} s  (CPU {CPU['2']:.1f} s)")
        tr = None
        if not a.no_ray:
            tr, _ = timed([*common, "--jobs", "2", "--backend", "ray", "--force", "--out", str(tmp / "ray")], "ray")
            print(f"  --backend ray (2)   {tr:7.1f} s  (CPU of the driver's children only: Ray's workers are not counted)")
        print("ratios (measured in this run):")
        print(f"  jobs 2 vs jobs 1 speed-up  {t1 / t2:5.2f}×   (goal ≥ 1.7; the machine's own ceiling "
              f"now: {parallel_ceiling():.2f}×, two busy loops side by side vs one after the other)")
        if tr is not None:
            print(f"  ray 2 vs jobs 2 speed      {t2 / tr:5.2f}×   (goal ≥ 0.9)")
        print(f"  cache hit vs cold          {th / t1:5.3f}    (goal ≤ 0.1)")
        print(f"  CPU jobs 1 / CPU jobs 2    {CPU['1'] / CPU['2']:5.2f}    (1.0: the workers cost no extra CPU; "
              "with 2 idle cores the speed-up approaches 2 × this, less the serial start)")
        print(f"  load average at the end    {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
