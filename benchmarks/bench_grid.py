"""Attention-grid speed: this component versus a naive one-Mobject-per-cell grid, side by side.

The animation measured is the one scenes use most: a full grid (lines, labels) on screen and the
attention dots growing in over one second. Both versions draw the same real pattern (a seeded
random model's trace on "w1 … wn", so any n works).

    python benchmarks/bench_grid.py                       # n = 16 32 64 128, -ql and -qh
    python benchmarks/bench_grid.py --sizes 64 --qualities h --naive grow --naive-frames 10

Figures: `play s/s` = seconds of rendering per second of video for the animation itself
(frames drawn and encoded); `total` = wall time of the whole render of a 1-second clip (grid
construction, frames, encoding, file assembly; the model trace is made beforehand). The naive
versions are timed in full when a probe of their first `--naive-frames` frames says one second
costs at most `--naive-budget` seconds; otherwise the probe's set-up plus its time per frame ×
frames per second stands for one second (marked ≥: it leaves out most of the encoding, which runs
in the background, so it is a lower bound and the ratio an under-estimate).
Two naive variants: `fade` fades the group of per-cell dots in (the cheapest naive animation),
`grow` grows each dot from its centre (the same animation the component plays).
Each quality first times the floor, an empty 1-second animation (frame copies and encoding, which
every scene pays: ~0.1 s at -ql, ~2 s at -qh on two cores); ratios in [] compare what each version
costs above it. The component is run `--repeat` times and its fastest run kept.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUALITIES = {"l": ("-ql", 854, 480, 15), "m": ("-qm", 1280, 720, 30), "h": ("-qh", 1920, 1080, 60)}


def empty_scene(run_time):
    """The floor: what any 1-second animation costs at this quality (one dot fading in)."""
    from manim import Dot, FadeIn, Scene

    class Empty(Scene):
        def construct(self):
            self.t_build = time.perf_counter()
            dot = Dot()
            self.t_play = time.perf_counter()
            self.play(FadeIn(dot, run_time=run_time))
            self.t_end = time.perf_counter()

    return Empty


def make_trace(n: int):
    from attention_manim.model.config import ModelConfig
    from attention_manim.model.transformer import random_model

    cfg = ModelConfig(name="bench", vocab=[f"w{i}" for i in range(max(200, n + 2))], n_ctx=max(160, n + 2))
    model = random_model(cfg, seed=0, scale=2.0)
    return model.trace(" ".join(f"w{i}" for i in range(1, n + 1)))


def component_scene(head, tokens, run_time):
    from manim import Scene

    from attention_manim.scenes.components.attention_grid import AttentionGrid

    class ComponentGrid(Scene):
        def construct(self):
            self.t_build = time.perf_counter()
            grid = AttentionGrid(head, tokens)
            grid.set_mask("outlined")
            self.add(grid)
            self.t_play = time.perf_counter()
            self.play(grid.show_dots(run_time=run_time))
            self.t_end = time.perf_counter()

    return ComponentGrid


def naive_scene(head, tokens, run_time, anim="fade"):
    """What one would write first: a Square per cell, a Text per label, a Circle per cell; the
    dots fade in as one group (anim="fade", the cheaper naive way) or each grows from its centre
    (anim="grow", one GrowFromCenter per dot)."""
    import numpy as np
    from manim import LEFT, UP, AnimationGroup, Circle, FadeIn, GrowFromCenter, Scene, Square, Text, VGroup

    from attention_manim.scenes.style import DARK

    class NaiveGrid(Scene):
        def construct(self):
            self.t_build = time.perf_counter()
            n = len(tokens)
            cell = 6.6 / n
            origin = np.array([-cell * n / 2 + 0.6, cell * n / 2 - 0.35, 0])
            squares, dots = VGroup(), VGroup()
            pattern, mask = head.pattern, head.mask
            for q in range(n):  # video layout: keys are rows, queries are columns
                for k in range(n):
                    center = origin + np.array([(q + 0.5) * cell, -(k + 0.5) * cell, 0])
                    sq = Square(side_length=cell, stroke_color=DARK.dim, stroke_width=1).move_to(center)
                    if mask[q, k]:
                        sq.set_stroke(DARK.mask)
                    squares.add(sq)
                    r = 0.45 * cell * float(np.sqrt(pattern[q, k]))
                    if not mask[q, k] and pattern[q, k] >= 0.004:
                        dot = Circle(radius=r, fill_color=DARK.text, fill_opacity=0.9, stroke_width=0)
                        dots.add(dot.move_to(center))
            fs = max(6, min(28, cell * 40))
            labels = VGroup()
            for i, t in enumerate(tokens):
                labels.add(Text(t, font_size=fs, color=DARK.key).next_to(
                    origin + np.array([0, -(i + 0.5) * cell, 0]), LEFT, buff=0.1))
                labels.add(Text(t, font_size=fs, color=DARK.query).rotate(np.pi / 2).next_to(
                    origin + np.array([(i + 0.5) * cell, 0, 0]), UP, buff=0.1))
            self.add(squares, labels)
            self.t_play = time.perf_counter()
            if anim == "grow":
                self.play(AnimationGroup(*[GrowFromCenter(d) for d in dots], run_time=run_time))
            else:
                self.play(FadeIn(dots, run_time=run_time))
            self.t_end = time.perf_counter()

    return NaiveGrid


class FrameClock:
    """Time stamps of every frame the renderer draws during the scene's play."""

    def __init__(self, scene):
        self.stamps = []
        inner = scene.renderer.render

        def render(*args, **kwargs):
            self.stamps.append(time.perf_counter())
            return inner(*args, **kwargs)

        scene.renderer.render = render

    def per_frame(self):
        s = self.stamps
        return (s[-1] - s[0]) / (len(s) - 1) if len(s) >= 2 else float("nan")


def render(scene_cls, quality: str, media: Path):
    from manim import tempconfig

    _, w, h, fps = QUALITIES[quality]
    opts = {"pixel_width": w, "pixel_height": h, "frame_rate": fps, "media_dir": str(media),
            "disable_caching": True, "verbosity": "ERROR", "progress_bar": "none", "format": "mp4",
            "write_to_movie": True}
    with tempconfig(opts):
        t0 = time.perf_counter()
        scene = scene_cls()
        clock = FrameClock(scene)
        scene.render()
        total = time.perf_counter() - t0
    play = scene.t_end - scene.t_play
    frames = len(clock.stamps)
    per_frame = clock.per_frame()
    return {"build": scene.t_play - scene.t_build, "play": play, "total": total, "frames": frames,
            "per_frame": per_frame, "fixed": play - per_frame * frames}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="16,32,64,128", help="comma-separated token counts")
    ap.add_argument("--qualities", default="l,h", help="comma-separated: l (-ql), m (-qm), h (-qh)")
    ap.add_argument("--naive-frames", type=int, default=3,
                    help="frames the naive versions are timed on (their rate is extrapolated to 1 s)")
    ap.add_argument("--naive", default="fade,grow",
                    help="naive variants to time: fade (FadeIn of the group of dots), grow "
                         "(GrowFromCenter per dot, the same animation as the component), or none")
    ap.add_argument("--naive-budget", type=float, default=15.0,
                    help="naive runs estimated to take at most this many seconds are timed in full")
    ap.add_argument("--grow-max-n", type=int, default=64,
                    help="largest n for the naive grow variant (its cost grows faster than n²: "
                         "~21 s per frame at n=128)")
    ap.add_argument("--repeat", type=int, default=2,
                    help="runs of the component and of the floor; the fastest is kept (shared cores)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    qualities = [q for q in args.qualities.split(",") if q]
    variants = [v for v in args.naive.split(",") if v in ("fade", "grow")]

    traces = {n: make_trace(n) for n in sizes}
    import manim  # noqa: F401  (import cost kept out of the timings)

    print("attention grid with the dots coming in over 1 s: this component (one VMobject of dots) "
          "vs naive grids (one Mobject per cell)")
    print("play s/s = render seconds per second of video for the animation; total = whole 1-s clip "
          "(build, frames, encoding); ≥ = extrapolated from the first frames (a lower bound); "
          "timings on shared cores vary")
    head_line = f"{'q':>3} {'n':>4} | {'component: build':>16} {'play s/s':>9} {'total':>7}"
    for v in variants:
        head_line += f" | {'naive ' + v + ': play s/s':>22} {'total':>7} {'ratio':>6} {'[above]':>8}"
    print(head_line)
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        for quality in qualities:
            flag, _, _, fps = QUALITIES[quality]
            floor = min(render(empty_scene(1.0), quality, Path(tmp) / f"e{quality}{r}")["play"]
                        for r in range(args.repeat))
            print(f"{flag:>3} floor: an empty 1-s animation costs {floor:.2f} s (frame copies, encoding); "
                  f"ratios in [] compare the cost above that floor", flush=True)
            for n in sizes:
                tr = traces[n]
                head = tr.head(0, 0)
                runs = [render(component_scene(head, tr.tokens, 1.0), quality, Path(tmp) / f"c{quality}{n}{r}")
                        for r in range(args.repeat)]
                c = min(runs, key=lambda r: r["total"])
                summary.append((flag, n, c))
                line = f"{flag:>3} {n:>4} | {c['build']:>15.2f}s {c['play']:>8.2f}s {c['total']:>6.1f}s"
                for v in variants:
                    if v == "grow" and n > args.grow_max_n:
                        line += f" | {'(skipped, --grow-max-n)':>22} {'':>7} {'':>6} {'':>8}"
                        continue
                    frames = max(3, min(fps, args.naive_frames))
                    nv = render(naive_scene(head, tr.tokens, frames / fps, v), quality, Path(tmp) / f"n{v}{quality}{n}")
                    # one second of it: the play's set-up once, plus fps frames at the measured rate
                    per_second = nv["play"] if frames >= fps else nv["fixed"] + nv["per_frame"] * fps
                    if frames < fps and per_second <= args.naive_budget:  # cheap enough: time it for real
                        nv = render(naive_scene(head, tr.tokens, 1.0, v), quality, Path(tmp) / f"N{v}{quality}{n}")
                        per_second, frames = nv["play"], fps
                    est_total = nv["total"] - nv["play"] + per_second
                    # an extrapolation leaves out most of the (background) encoding: a lower bound
                    approx = "≥" if frames < fps else " "
                    extra = c["play"] - floor
                    above = f"{(per_second - floor) / extra:>5.1f}×" if extra > 0.05 * floor else "≈floor"
                    line += (f" | {per_second:>21.2f}s {approx}{est_total:>5.1f}s {per_second / c['play']:>5.1f}×"
                             f" [{above:>6}]")
                print(line, flush=True)
    for flag, n, c in summary:
        if flag == "-qh" and n == 128:
            verdict = "met" if c["total"] < 30 else "NOT met"
            print(f"goal: n=128 grid animation at 1080p60 under 30 s wall: {c['total']:.1f} s ({verdict})")


if __name__ == "__main__":
    main()
