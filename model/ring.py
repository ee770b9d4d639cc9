"""Ring attention for one head, in numpy, with every device's every step kept; and the same ring on
Ray, one actor (a separate process) per device.

A sequence too long for one device's memory is cut into N blocks, one per device (Liu et al. 2023).
Device i keeps its block of queries for the whole computation and starts with its own block of keys
and values. Then, N times:

    1. it attends with the K/V block it holds, updating for each of its query rows the running max m,
       the running sum l and the unnormalized output O: the online softmax of model/flash.py, where a
       key block arriving from the network is what a key block streaming from memory is there:
           m_new = max(m, rowmax(S_b));  P = exp(S_b − m_new)
           l_new = exp(m − m_new)·l + rowsum(P);  O_new = exp(m − m_new)·O + P·V_b
    2. it passes the K/V block to its neighbour (device i sends to i+1 mod N) and receives the one
       device i−1 held: at step t device i holds the block that started on device (i − t) mod N.

After N steps every block has visited every device once and each device's rows are O / l: exactly
softmax(Q·Kᵀ/√d)·V for its queries, only the additions in another order (tests check 1e-6). No device
ever holds more than two K/V blocks (the one it computes with and the one arriving) nor more than one
block of scores: memory per device falls as 1/N, and the sends can hide behind the computing.

Which tokens a device holds:
    contiguous: blocks of consecutive tokens, as equal as possible (the first n mod N blocks one token
                longer, as numpy.array_split cuts);
    striped:    round-robin, token t on device t mod N (Brandon et al. 2023, "striped attention").

Causal: a query sees keys at or before its own position. A K/V block all of whose keys come after
every query of the device is skipped: the device idles that step (it still passes the block on). A
block partly in the future is computed with the mask. Contiguous blocks make the load uneven: device i
is busy only while it holds blocks 0..i (i+1 steps: device 0 one step, device N−1 all N). Striped
blocks spread the positions so that every block meets every device half masked: all devices busy all
N steps (when every device holds at least two tokens).

Traffic is in bytes: a step's received K/V block is (its tokens)·(d_k + d_v) numbers × bytes per
number. `ring_memory` counts memory and traffic for a whole model and any n (Python ints).

    python -m attention_manim.model.ring [--backend local|ray] [--devices N] [--model smollm2|toy]
                                         [--layer L --head H] [--causal | --no-causal]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .flash import ordinary_attention
from .passages import PASSAGES
from .places import BUILTIN_MODELS, SMOLLM2


@dataclass(frozen=True)
class RingStep:
    """One device at one step of the ring (the state after its computation)."""

    step: int
    device: int
    kv_block: int  # the K/V block it holds at this step (the device it started on): (device − step) mod N
    busy: bool  # it computed; False: the block lies wholly in its queries' future (causal), it idled
    bytes_received: int  # the K/V block received just before this step (0 at step 0: its own block)
    cells: int  # query·key pairs computed (not masked) at this step; 0 when idle
    m: np.ndarray  # [rows] running max after this step (-inf for a row that has seen no key yet)
    l: np.ndarray  # [rows] running sum of exp(score − m)
    O: np.ndarray  # [rows, d_v] running unnormalized output


@dataclass(frozen=True)
class RingResult:
    output: np.ndarray  # [n, d_v] the ring's output, rows in the original token order
    reference: np.ndarray  # [n, d_v] ordinary attention softmax(S)·V of the same q, k, v
    weights: np.ndarray  # [n, n] the ordinary pattern (for comparison; the ring never builds it)
    tokens: tuple[np.ndarray, ...]  # per device: the token positions of its query (and first K/V) block
    device_outputs: tuple[np.ndarray, ...]  # per device: its output rows, in the order of `tokens`
    steps: tuple[RingStep, ...]  # step-major: step 0 of devices 0..N−1, then step 1, ...
    n_devices: int
    causal: bool
    striped: bool
    n: int
    d: int  # d_k
    d_v: int
    bytes_per_number: int
    scale: float

    @property
    def max_diff(self) -> float:
        """The largest difference between the ring's output and ordinary attention."""
        return float(np.abs(self.output - self.reference).max()) if self.output.size else 0.0

    @property
    def busy_steps(self) -> tuple[int, ...]:
        """Per device: how many of the N steps it computed."""
        return tuple(sum(s.busy for s in self.steps_of(i)) for i in range(self.n_devices))

    @property
    def cells(self) -> tuple[int, ...]:
        """Per device: the query·key pairs it computed in all (its share of the work)."""
        return tuple(sum(s.cells for s in self.steps_of(i)) for i in range(self.n_devices))

    @property
    def bytes_received(self) -> tuple[int, ...]:
        """Per device: the K/V bytes it received over the whole ring."""
        return tuple(sum(s.bytes_received for s in self.steps_of(i)) for i in range(self.n_devices))

    def steps_of(self, device: int) -> list[RingStep]:
        return [s for s in self.steps if s.device == device]

    def at(self, step: int, device: int) -> RingStep:
        return self.steps[step * self.n_devices + device]


def partition(n: int, n_devices: int, striped: bool = False) -> tuple[np.ndarray, ...]:
    """The token positions each device holds (each sorted): contiguous blocks as numpy.array_split
    cuts them (the first n mod N one longer), or striped (token t on device t mod N)."""
    check_devices(n, n_devices)
    if striped:
        return tuple(np.arange(i, n, n_devices) for i in range(n_devices))
    return tuple(np.array_split(np.arange(n), n_devices))


def check_devices(n: int, n_devices: int) -> None:
    if isinstance(n_devices, bool) or not isinstance(n_devices, (int, np.integer)):
        raise ValueError(f"the number of devices must be a whole number, not {n_devices!r}")
    if n_devices < 1:
        raise ValueError(f"a ring needs at least 1 device, not {n_devices}")
    if n_devices > n:
        raise ValueError(f"{n_devices} devices for {n} tokens: every device needs at least one token")


class RingDevice:
    """One device of the ring: its query block, the K/V block it holds, and m, l, O for its rows.

    The local ring runs N of these in this process; the Ray ring runs each inside its own actor."""

    def __init__(self, index: int, q: np.ndarray, q_pos: np.ndarray, k: np.ndarray, v: np.ndarray,
                 causal: bool, scale: float, bytes_per_number: int):
        self.index = index
        self.q = np.asarray(q, dtype=np.float64)
        self.q_pos = np.asarray(q_pos)
        # the block it holds: (block index, key positions, k, v)
        self.held = (index, self.q_pos, np.asarray(k, dtype=np.float64), np.asarray(v, dtype=np.float64))
        self.causal, self.scale, self.bytes_per_number = bool(causal), float(scale), int(bytes_per_number)
        rows = len(self.q_pos)
        self.m = np.full(rows, -np.inf)
        self.l = np.zeros(rows)
        self.O = np.zeros((rows, self.held[3].shape[1]))
        self.records: list[RingStep] = []

    def step(self, t: int, incoming: tuple | None = None) -> tuple:
        """Receive `incoming` (None at step 0), attend with the block held, and return that block:
        what goes to the neighbour."""
        received = 0
        if incoming is not None:
            self.held = incoming
            received = (incoming[2].size + incoming[3].size) * self.bytes_per_number
        block, k_pos, k, v = self.held
        busy = not (self.causal and k_pos.min() > self.q_pos.max())
        cells = 0
        if busy:
            s = self.q @ k.T * self.scale
            if self.causal:
                s = np.where(k_pos[None, :] > self.q_pos[:, None], -np.inf, s)
            cells = int(np.isfinite(s).sum())
            m_new = np.maximum(self.m, s.max(axis=1))
            # a row that has seen only -inf so far keeps m = -inf: nothing to rescale, nothing added
            safe = np.where(np.isfinite(m_new), m_new, 0.0)
            p = np.where(np.isfinite(s), np.exp(s - safe[:, None]), 0.0)
            rescale = np.where(np.isfinite(self.m), np.exp(self.m - safe), 0.0)
            self.l = rescale * self.l + p.sum(axis=1)
            self.O = rescale[:, None] * self.O + p @ v
            self.m = m_new
        self.records.append(RingStep(step=t, device=self.index, kv_block=int(block), busy=busy,
                                     bytes_received=int(received), cells=cells, m=self.m.copy(),
                                     l=self.l.copy(), O=self.O.copy()))
        return self.held

    def finish(self) -> tuple[list[RingStep], np.ndarray]:
        """Its steps and its output rows O / l."""
        return self.records, self.O / self.l[:, None]


def _prepare(q, k, v, n_devices, causal, striped, scale, bytes_per_number):
    arrays = [np.asarray(a) for a in (q, k, v)]
    if any(a.ndim != 2 for a in arrays):
        raise ValueError("q, k and v must be 2-D arrays [n, d]")
    q, k, v = arrays
    if not (len(q) == len(k) == len(v)):
        raise ValueError(f"q, k and v need as many rows (tokens): {len(q)}, {len(k)}, {len(v)}")
    if q.shape[1] != k.shape[1]:
        raise ValueError(f"q and k need the same width: {q.shape[1]} and {k.shape[1]}")
    n = len(q)
    check_devices(n, n_devices)
    bpn = int(bytes_per_number) if bytes_per_number is not None else int(np.result_type(k, v).itemsize)
    if bpn < 1:
        raise ValueError("bytes per number must be at least 1")
    scale = 1.0 / math.sqrt(q.shape[1]) if scale is None else float(scale)
    tokens = partition(n, int(n_devices), striped)
    devices = [RingDevice(i, q[t], t, k[t], v[t], causal, scale, bpn) for i, t in enumerate(tokens)]
    return q, k, v, n, scale, bpn, tokens, devices


def _result(q, k, v, n, scale, bpn, tokens, finished, n_devices, causal, striped) -> RingResult:
    records = [r for recs, _ in finished for r in recs]
    steps = tuple(sorted(records, key=lambda s: (s.step, s.device)))
    out = np.zeros((n, v.shape[1]))
    for t, (_, rows) in zip(tokens, finished):
        out[t] = rows
    ref, w = ordinary_attention(q, k, v, causal, scale)
    return RingResult(output=out, reference=ref, weights=w, tokens=tokens,
                      device_outputs=tuple(rows for _, rows in finished), steps=steps, n_devices=int(n_devices),
                      causal=bool(causal), striped=bool(striped), n=n, d=q.shape[1], d_v=v.shape[1],
                      bytes_per_number=bpn, scale=scale)


def ring_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, n_devices: int, causal: bool = False,
                   striped: bool = False, scale: float | None = None,
                   bytes_per_number: int | None = None) -> RingResult:
    """The ring on N simulated devices in this process; q, k: [n, d], v: [n, d_v] (float64 inside).

    `bytes_per_number`: the size of one number sent (default: the item size of k and v as given).
    ValueError when N < 1 or N > n."""
    q, k, v, n, scale, bpn, tokens, devices = _prepare(q, k, v, n_devices, causal, striped, scale, bytes_per_number)
    N = len(devices)
    incoming: list = [None] * N
    for t in range(N):
        sent = [dev.step(t, incoming[i]) for i, dev in enumerate(devices)]
        incoming = [sent[(i - 1) % N] for i in range(N)]  # device i−1 sends to device i
    return _result(q, k, v, n, scale, bpn, tokens, [dev.finish() for dev in devices], N, causal, striped)


# --- the same ring on Ray ---------------------------------------------------------------------------

def start_ray(address: str | None = None) -> bool:
    """Start Ray (a local one with 2 CPUs, or a connection to `address`) unless it runs already;
    True when started here (the caller then shuts it down)."""
    import ray

    if ray.is_initialized():
        return False
    # the workers import this module: from this checkout, as this process does
    env = {"env_vars": {"PYTHONPATH": str(Path(__file__).resolve().parent.parent)}}
    if address:
        ray.init(address=address, runtime_env=env, log_to_driver=False)
    else:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env=env)
    return True


def ring_attention_ray(q: np.ndarray, k: np.ndarray, v: np.ndarray, n_devices: int, causal: bool = False,
                       striped: bool = False, address: str | None = None, scale: float | None = None,
                       bytes_per_number: int | None = None) -> RingResult:
    """The ring with one Ray actor per device, each a separate worker process holding its query block
    and the K/V block of the moment. At each step every actor attends with its block and returns it;
    the driver hands that object reference to the next actor, which fetches the block from the
    object store (the driver passes references, never the arrays). Ray started here (a local one with
    2 CPUs, or a connection to `address`) is shut down at the end; one already running is reused.

    ImportError when Ray is missing; the result is a RingResult as the local ring's."""
    import ray

    q, k, v, n, scale, bpn, tokens, devices = _prepare(q, k, v, n_devices, causal, striped, scale, bytes_per_number)
    N = len(devices)
    started = start_ray(address)
    try:
        # num_cpus=0: N actors fit on a 2-CPU machine (each step is tiny; they take turns)
        Actor = ray.remote(num_cpus=0, max_restarts=0)(RingDevice)
        actors = [Actor.remote(i, dev.q, dev.q_pos, dev.held[2], dev.held[3], causal, scale, bpn)
                  for i, dev in enumerate(devices)]
        sent = [a.step.remote(0, None) for a in actors]
        for t in range(1, N):
            sent = [actors[i].step.remote(t, sent[(i - 1) % N]) for i in range(N)]
        finished = ray.get([a.finish.remote() for a in actors])
        for a in actors:
            ray.kill(a)
    finally:
        if started:
            ray.shutdown()
    return _result(q, k, v, n, scale, bpn, tokens, finished, N, causal, striped)


# --- memory and traffic for a whole model -------------------------------------------------------------

@dataclass(frozen=True)
class RingMemory:
    """Bytes of K/V memory and traffic of ring attention over a whole model (K and V each
    n_kv_heads·d_head numbers per token per layer). Every count is a Python int."""

    n: int
    d_head: int
    n_kv_heads: int
    n_layers: int
    bytes_per_number: int
    n_devices: int
    block_tokens: int  # tokens of the largest block: ceil(n / N)
    kv_token_layer: int  # bytes of K and V of one token in one layer: 2·n_kv_heads·d_head·bytes
    full_kv: int  # the whole sequence's K and V, all layers, on one device: n·kv_token_layer·n_layers
    kv_per_device: int  # a device's own block of K and V, all layers: block_tokens·kv_token_layer·n_layers
    ring_buffers: int  # the two blocks in flight during a layer's ring (held + arriving): 2·block·kv_token_layer
    sent_per_step: int  # bytes one device sends in one step of one layer: block_tokens·kv_token_layer
    sent_per_device: int  # over every layer: (N−1) sends per layer
    sent_total: int  # all devices, all layers: every token's K/V makes N−1 hops per layer

    @property
    def peak_per_device(self) -> int:
        """The device's own K/V for every layer plus the two ring buffers of the running layer."""
        return self.kv_per_device + self.ring_buffers


def ring_memory(n: int, d_head: int, n_kv_heads: int, n_layers: int, bytes_per_number: int,
                n_devices: int) -> RingMemory:
    """Memory and traffic of ring attention for n tokens on N devices (any n: 1M tokens is fine)."""
    for name, x in (("n", n), ("d_head", d_head), ("n_kv_heads", n_kv_heads), ("n_layers", n_layers),
                    ("bytes_per_number", bytes_per_number)):
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or x < 1:
            raise ValueError(f"{name} must be a whole number ≥ 1, not {x!r}")
    n, d_head, n_kv_heads, n_layers, bytes_per_number = map(int, (n, d_head, n_kv_heads, n_layers, bytes_per_number))
    check_devices(n, n_devices)
    N = int(n_devices)
    block = -(-n // N)
    per_tok = 2 * n_kv_heads * d_head * bytes_per_number
    return RingMemory(n=n, d_head=d_head, n_kv_heads=n_kv_heads, n_layers=n_layers, bytes_per_number=bytes_per_number,
                      n_devices=N, block_tokens=block, kv_token_layer=per_tok, full_kv=n * per_tok * n_layers,
                      kv_per_device=block * per_tok * n_layers, ring_buffers=2 * block * per_tok,
                      sent_per_step=block * per_tok, sent_per_device=(N - 1) * block * per_tok * n_layers,
                      sent_total=(N - 1) * n * per_tok * n_layers)


# --- the command line ---------------------------------------------------------------------------------

PASSAGE = PASSAGES[0]  # 46 SmolLM2 tokens


def head_qkv(session, text: str, layer: int, head: int):
    """(q, k, v, z, trace) of one head: q and k after the rotation (what the scores use), the key/value
    head the query head reads, and the model's own head output z = pattern·v. UserError out of range."""
    from .errors import UserError

    info = session.model.info if hasattr(session, "model") else session.info
    if not 0 <= layer < info.n_layers:
        raise UserError(f"no layer {layer}: the model has layers 0..{info.n_layers - 1}", key="no_such_layer",
                        layer=layer, last=info.n_layers - 1)
    if not 0 <= head < info.n_heads:
        raise UserError(f"no head {head}: each layer has heads 0..{info.n_heads - 1}", key="no_such_head", head=head,
                        last=info.n_heads - 1)
    tr = session.trace(text)
    h = tr.head(layer, head)
    return h.q, h.k, h.v, h.z, tr


def _fmt_bytes(b: int) -> str:
    for unit, size in (("GB", 2**30), ("MB", 2**20), ("kB", 2**10)):
        if b >= size:
            return f"{b / size:.1f} {unit}"
    return f"{b} B"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m attention_manim.model.ring",
                                 description="Ring attention on a real head: the ring's output against the full one.")
    ap.add_argument("--backend", choices=("local", "ray"), default="local")
    ap.add_argument("--devices", type=int, default=4, help="devices in the ring (default 4)")
    ap.add_argument("--model", choices=BUILTIN_MODELS, default=SMOLLM2)
    ap.add_argument("--layer", type=int, default=None, help="default: the middle layer")
    ap.add_argument("--head", type=int, default=0)
    ap.add_argument("--causal", action=argparse.BooleanOptionalAction, default=None,
                    help="mask future keys (default: as the model does; both models are causal)")
    ap.add_argument("--address", default=None, help="a Ray cluster to use (default: a local one)")
    args = ap.parse_args(argv)

    def fail(msg: str) -> int:
        print(f"error: {msg}", file=sys.stderr)
        return 2

    if args.devices < 1:
        return fail(f"--devices must be at least 1, not {args.devices}")
    try:
        from .errors import UserError
        from .session import open_session

        session = open_session(args.model, "cpu")
        info = session.model.info
        layer = info.n_layers // 2 if args.layer is None else args.layer
        text = PASSAGE if info.real else info.examples["long"]
        q, k, v, z, tr = head_qkv(session, text, layer, args.head)
    except UserError as e:
        return fail(e.message + (f" ({e.hint})" if e.hint else ""))
    n = len(q)
    if args.devices > n:
        return fail(f"--devices {args.devices} is more than the passage's {n} tokens")
    causal = info.causal if args.causal is None else args.causal
    run, started = ring_attention, False
    if args.backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            return fail("the ray backend needs Ray: pip install 'attention-manim[farm]'")
        run = ring_attention_ray
        t0 = time.perf_counter()
        try:
            started = start_ray(args.address)  # once for both rings
        except Exception as e:  # noqa: BLE001  (an address nothing answers at, ...)
            return fail(f"Ray did not start: {str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__}")
        print(f"Ray ready in {time.perf_counter() - t0:.1f} s")
    try:
        _report(run, args, info, layer, tr, q, k, v, z, causal)
    finally:
        if started:
            import ray

            ray.shutdown()
    return 0


def _report(run, args, info, layer, tr, q, k, v, z, causal) -> None:
    print(f"{args.model}, layer {layer} head {args.head} (key/value head {tr.head(layer, args.head).kv_head}), "
          f"{len(q)} tokens, d_head {q.shape[1]}, {args.devices} devices, {'causal' if causal else 'not causal'}, "
          f"backend {args.backend}")
    for striped in (False, True):
        t0 = time.perf_counter()
        res = run(q, k, v, args.devices, causal=causal, striped=striped)
        secs = time.perf_counter() - t0
        print(f"\n{'striped' if striped else 'contiguous'} ({secs:.2f} s):")
        print(f"  tokens per device:  {[len(t) for t in res.tokens]}")
        print(f"  busy steps:         {list(res.busy_steps)} of {res.n_devices}")
        print(f"  cells computed:     {list(res.cells)}")
        print(f"  bytes received:     {list(res.bytes_received)}")
        print(f"  max |ring - full attention (float64)|: {res.max_diff:.3g}")
        if causal == info.causal:
            print(f"  max |ring - the model's own head output|: {float(np.abs(res.output - z).max()):.3g}")
    mem = ring_memory(1_000_000, info.d_head, info.n_kv_heads or info.n_heads, info.n_layers, 2, args.devices)
    print(f"\nat 1M tokens, bf16, {args.devices} devices: K/V {_fmt_bytes(mem.full_kv)} in all, "
          f"{_fmt_bytes(mem.kv_per_device)} per device; each sends {_fmt_bytes(mem.sent_per_step)} per step of a layer, "
          f"{_fmt_bytes(mem.sent_per_device)} over all layers")


if __name__ == "__main__":
    sys.exit(main())
