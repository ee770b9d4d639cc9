"""A storyboard against a render: CPU seconds of `render.py storyboard` and `render.py lint` for a set
of scenes in one language, against `render.py SCENES -ql --force` of the same scenes, and the ratios.

    python benchmarks/bench_storyboard.py                 # every scene, en
    python benchmarks/bench_storyboard.py softmax values  # some scenes
    python benchmarks/bench_storyboard.py --lang ko

The goal (issue 18): the whole suite's storyboard in one language costs at most a quarter of what
`all -ql` costs. Each command runs in its own process, one after the other, with a warm glyph cache
(a first run warms it); the figures are the child's CPU seconds (user + system), which a busy machine
disturbs less than the wall clock, and the wall clock beside them.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(args: list[str]) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    r = subprocess.run([sys.executable, str(ROOT / "render.py"), *args], cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if r.returncode not in (0, 1):
        sys.stderr.write(r.stderr[-2000:])
    return cpu, wall, r.returncode


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scenes", nargs="*", default=["all"])
    ap.add_argument("--lang", default="en")
    a = ap.parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="bench-storyboard-"))
    rows = []
    for what, args in (("storyboard -ql", ["storyboard", *a.scenes, "--lang", a.lang, "-q", "l", "--out", str(out)]),
                       ("lint", ["lint", *a.scenes, "--lang", a.lang]),
                       ("render -ql", [*a.scenes, "--lang", a.lang, "-q", "l", "--force", "--out", str(out)])):
        cpu, wall, rc = run(args)
        rows.append((what, cpu, wall, rc))
        print(f"{what:<15} cpu {cpu:8.1f} s  wall {wall:8.1f} s  (exit {rc})", flush=True)
    render_cpu = rows[2][1]
    print(f"\nstoryboard / render: {rows[0][1] / render_cpu:.2f} (goal ≤ 0.25);  lint / render: {rows[1][1] / render_cpu:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
