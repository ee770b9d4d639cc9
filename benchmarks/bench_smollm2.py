"""SmolLM2-135M on the CPU: load times, trace time and memory, against the goals of issue 10.

    python benchmarks/bench_smollm2.py            # a cold cache in a temporary folder, then a warm one
    python benchmarks/bench_smollm2.py --tokens 64 --repeat 3

Figures:
- first load: GGUF read + dequantize + rotary unpermute + tokenizer built + the cache written, with
  an empty cache folder (a temporary one, so the user's cache is left alone);
- later load: the same call again, reading the cached float32 safetensors and tokenizer.json;
- trace: one forward pass on a `--tokens`-token text, every number recorded and turned into numpy
  (the fastest of `--repeat` runs, and the median);
- peak RSS: the whole process's high-water mark (torch, the model, the dequantizing, the traces);
- trace memory: the bytes of every array one trace holds, each buffer counted once and the model's
  weights (shared by all traces, not copied) left out; the RSS growth while holding it is printed
  beside it as a cross-check.
Exits 1 when a goal is missed.
"""

from __future__ import annotations

import argparse
import gc
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GOALS = {  # name: (goal, unit, lower is better)
    "first load (cold cache)": (5.0, "s"),
    "later load": (1.5, "s"),
    "trace": (1.0, "s"),
    "peak RSS": (2048.0, "MB"),
    "trace memory": (150.0, "MB"),
}
TEXT = ("The old wizard and the young prince walked through the dark forest to the ancient castle, where a fluffy "
        "white rabbit and a tiny red fox watched them from behind a huge green tree, and the brave knight told the "
        "happy queen that the Eiffel tower in Paris was made of steel. ") * 3


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def trace_bytes(trace, model) -> int:
    """Bytes of the distinct buffers a trace's arrays use, the model's shared weights excluded."""
    import numpy as np

    def root(a):
        while isinstance(a.base, np.ndarray):
            a = a.base
        return a

    shared = {id(root(a)) for layer in model.numpy_weights() for a in layer.values()}
    seen: dict[int, int] = {}

    def add(a):
        if isinstance(a, np.ndarray):
            r = root(a)
            if id(r) not in shared:
                seen[id(r)] = r.nbytes

    for name in ("token_embeddings", "position_embeddings", "embeddings", "final", "logits"):
        add(getattr(trace, name))
    for lt in trace.layers:
        for name in ("resid_in", "attn_in", "delta_e", "resid_mid", "mlp_out", "residual_out"):
            add(getattr(lt, name))
        for h in lt.heads:
            for name in ("q", "k", "v", "q_unrotated", "k_unrotated", "scores", "mask", "pattern", "z", "delta_e",
                         "W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V"):
                add(getattr(h, name))
    return sum(seen.values())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    import torch  # noqa: F401  (imported before the clock starts: not part of a load)

    from attention_manim.model.adapters.gguf import load_smollm2

    results = {}
    with tempfile.TemporaryDirectory(prefix="bench-smollm2-") as cache:
        t = time.perf_counter()
        model = load_smollm2(cache=Path(cache))
        results["first load (cold cache)"] = time.perf_counter() - t
        del model
        gc.collect()
        t = time.perf_counter()
        model = load_smollm2(cache=Path(cache))
        results["later load"] = time.perf_counter() - t

    ids = model.tokenizer.encode_ids(TEXT)[: args.tokens]
    if len(ids) < args.tokens:
        raise SystemExit(f"the text has only {len(ids)} tokens")
    model.trace_ids(ids[:8])  # warm-up (first calls allocate thread pools)
    times = []
    for _ in range(args.repeat):
        t = time.perf_counter()
        trace = model.trace_ids(ids)
        times.append(time.perf_counter() - t)
        del trace
        gc.collect()
    results["trace"] = min(times)
    before = rss_mb()
    trace = model.trace_ids(ids)
    grown = rss_mb() - before
    results["trace memory"] = trace_bytes(trace, model) / 2**20
    results["peak RSS"] = peak_rss_mb()

    print(f"SmolLM2-135M-Instruct on the CPU ({torch.get_num_threads()} threads), {args.tokens}-token trace")
    failed = 0
    for name, (goal, unit) in GOALS.items():
        value = results[name]
        ok = value <= goal if name != "trace memory" else value < goal
        failed += not ok
        extra = ""
        if name == "trace":
            extra = f"  (median of {args.repeat}: {statistics.median(times):.2f} s)"
        elif name == "trace memory":
            extra = f"  (RSS grew {grown:.0f} MB while holding it)"
        bound = "<" if name == "trace memory" else "≤"
        fmt = f"{value:.2f}" if unit == "s" else f"{value:.0f}"
        print(f"  {name:<24} {fmt:>7} {unit:<2}  goal {bound} {goal:g} {unit}  {'PASS' if ok else 'FAIL'}{extra}")
    print(f"  next token after the trace's text: {trace.next_token(1)[0][1]!r}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
