"""Plans of `ring_attention` (no manim, no torch): the ring of model/ring.py (numpy) run on a real head of
the model in use (the trace's q, k — after rotation on a rotary model — and v), its output compared with
the trace's own head output z, the causal load of contiguous and striped blocks, and the memory and
traffic of the whole model's keys and values for long sequences (ring_memory, from the model's sizes).

Three chapters read these plans:
- `ring`: the sequence cut into N blocks, one per device; N steps in which the key/value blocks travel
  around the ring while each device's running max m, running sum l and running output O change (the
  first and last query row of every device, the first O_SHOWN of d_head entries of O); then O / l beside
  the model's own output for those rows.
- `ring_causal`: the causal mask cut into N × N blocks; with contiguous blocks a block wholly in a
  device's future is skipped (busy steps 1, 2, …, N); striped blocks (token t on device t mod N) keep
  every device busy every step. Busy steps and query·key pairs computed per device, measured.
- `ring_memory`: one device's share of K and V and the bytes it sends per step, at 1,000, 32,000 and
  1,000,000 tokens, from the model's layers, key/value heads and head width (bf16).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attention_manim.model.errors import UserError
from attention_manim.model.ring import RingMemory, RingResult, RingStep, ring_attention, ring_memory

from ..setting import HeadRef, Setting

DEVICES = 4  # the ring's size when the user gives no --devices
MAX_DEVICES = 6  # the most devices the ring's picture holds with readable numbers (three boxes a row)
O_SHOWN = 2  # the first entries of a row's (running) output shown, then an ellipsis and its last entry
BYTES_PER_NUMBER = 2  # keys and values sent in bf16, as long-context models are run
KV_TENSORS = 2  # a token's keys and its values: the ×2 of the memory formula
MEMORY_LENGTHS = (1_000, 32_000, 1_000_000)  # sequence lengths of the memory table
STILL_SHARE = 0.01  # a busy device whose drawn rows give the new keys less weight than this, and whose
# drawn figures read as before, is named in a note: its table did not visibly change, and the note says why


def ring_size(setting: Setting) -> int:
    """The ring's devices: --devices, checked (2 to MAX_DEVICES, at most one per token), else DEVICES."""
    n = setting.trace.n_tokens
    given = setting.devices
    devices = DEVICES if given is None else given
    most = min(MAX_DEVICES, n)
    if isinstance(devices, bool) or not isinstance(devices, (int, np.integer)) or not 2 <= devices <= most:
        raise UserError(f"--devices {devices} is out of range: this lesson takes 2 to {most} devices",
                        f"the ring draws at most {MAX_DEVICES} devices, and each needs at least one token "
                        f"(the sentence has {n})",
                        key="devices_out_of_range", devices=devices, most=most, max_devices=MAX_DEVICES, n_tokens=n)
    return int(devices)


def shown_decimals(a: np.ndarray, b: np.ndarray) -> int:
    """The most decimals (6 at most, 1 at least) at which every entry of `a` reads as in `b`."""
    for dec in range(6, 0, -1):
        if all(f"{x:.{dec}f}" == f"{y:.{dec}f}" for x, y in zip(np.ravel(a), np.ravel(b))):
            return dec
    return 1


def shown_changes(res: RingResult, device: int) -> list[int]:
    """Per row of `device`: how often its m (one decimal) or l (two decimals), as drawn, changes from one
    busy step to the next: the running update the lesson teaches, made visible."""
    busy = [s for s in (res.at(t, device) for t in range(res.n_devices)) if s.busy]
    out = []
    for r in range(len(res.tokens[device])):
        ms = [score_text(float(s.m[r])) for s in busy]
        ls = [f"{float(s.l[r]):.2f}" for s in busy]
        out.append(sum(a != b for a, b in zip(ms, ms[1:])) + sum(a != b for a, b in zip(ls, ls[1:])))
    return out


def shown_rows(res: RingResult, device: int) -> tuple[int, ...]:
    """The two rows of a device drawn: those whose m or l change most often as the blocks go by
    (`shown_changes`), ties going to the block's first and last row, then to the earlier row."""
    toks = [int(p) for p in res.tokens[device]]
    ends = {toks[0], toks[-1]}
    changes = shown_changes(res, device)
    order = sorted(range(len(toks)), key=lambda r: (-changes[r], toks[r] not in ends, toks[r]))
    return tuple(sorted(toks[r] for r in order[:2]))


def drawn_figures(step: RingStep, r: int, cols: tuple[int, ...]) -> tuple[str, ...]:
    """Row r of a device's table as drawn: m (one decimal), l and the shown entries of O (two)."""
    return (score_text(float(step.m[r])), f"{float(step.l[r]):.2f}", *(f"{float(step.O[r][j]):.2f}" for j in cols))


def score_text(x: float) -> str:
    """m as drawn: one decimal, −∞ for a row that has seen no key."""
    return "−∞" if x == float("-inf") else f"{x:.1f}"


def ring_updates(res: RingResult) -> int:
    """How often a drawn m or l changes over the whole ring: the toy's head is picked to make it most."""
    return sum(sum(shown_changes(res, i)) for i in range(res.n_devices))


def busiest_head(setting: Setting) -> Setting:
    """The setting on the head whose ring shows its running update most (`ring_updates`: how often a drawn
    m or l changes over the ring, every row of every device), over every layer and head of the model;
    ties go to the earlier layer, then head. For the toy, whose heads put almost all of each row's weight
    on one key: on most heads m and l never move after the first step."""
    tr = setting.trace
    causal = tr.model.causal
    N = ring_size(setting)
    best, most = setting.head, -1
    for layer in range(tr.model.n_layers):
        for head in range(tr.model.n_heads):
            ht = tr.head(layer, head)
            res = ring_attention(ht.q, ht.k, ht.v, N, causal=bool(np.asarray(ht.mask).any()) or causal,
                                 bytes_per_number=BYTES_PER_NUMBER)
            n = ring_updates(res)
            if n > most:
                best, most = HeadRef(layer, head), n
    return replace(setting, head=best)


@dataclass(frozen=True)
class RingPlan:
    model: str  # the model's name (prose says the toy's as "the toy model")
    tokens: tuple[str, ...]
    layer: int
    head: int
    kv_head: int  # the key/value head the query head reads (grouped-query attention)
    n_devices: int
    causal: bool  # as the model: both built-in models are causal
    result: RingResult  # contiguous blocks, the model's mask
    trace_z: np.ndarray  # [n, d_head] the model's own head output
    rows_shown: tuple[tuple[int, ...], ...]  # per device: the token positions of the rows shown (first, last)
    o_shown: tuple[int, ...]  # the entries of O shown: the first O_SHOWN and the last (d_head − 1)
    max_diff_trace: float  # max |ring − the model's own output| over every row and entry
    max_diff_reference: float  # max |ring − ordinary attention in float64|
    decimals: int  # digits at which the shown entries read the same both ways
    bytes_per_number: int

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def d(self) -> int:
        return self.result.d_v

    def step(self, t: int, device: int) -> RingStep:
        return self.result.at(t, device)

    def rows(self, device: int) -> tuple[int, ...]:
        """Indices into the device's rows (its RingStep m, l, O) of the rows shown."""
        toks = list(self.result.tokens[device])
        return tuple(toks.index(p) for p in self.rows_shown[device])

    def span(self, device: int) -> tuple[int, int]:
        """First and last token position of the device's (contiguous) block."""
        t = self.result.tokens[device]
        return int(t[0]), int(t[-1])

    def new_key_share(self, t: int, device: int) -> float:
        """The largest share of weight, in the head's own pattern, that a drawn row of `device` gives the
        keys of the block it holds at step t."""
        keys = self.result.tokens[self.step(t, device).kv_block]
        return float(self.result.weights[np.ix_(list(self.rows_shown[device]), keys)].sum(axis=1).max())

    def still(self, t: int) -> tuple[tuple[int, ...], float]:
        """The busy devices at step t (after the first) whose drawn figures all read as at step t − 1
        because their drawn rows give the new keys less than STILL_SHARE of their weight, and the largest
        such share: the toy's heads put nearly all of a row's weight on one key, so a busy device's table
        can stay the same, and the screen says why."""
        if t == 0:
            return (), 0.0
        devices, share = [], 0.0
        for i in range(self.n_devices):
            now, before = self.step(t, i), self.step(t - 1, i)
            if not now.busy:
                continue
            same = all(drawn_figures(now, r, self.o_shown) == drawn_figures(before, r, self.o_shown)
                       for r in self.rows(i))
            w = self.new_key_share(t, i)
            if same and w < STILL_SHARE:
                devices.append(i)
                share = max(share, w)
        return tuple(devices), share

    def idle(self, t: int) -> tuple[int, ...]:
        return tuple(i for i in range(self.n_devices) if not self.step(t, i).busy)

    def block_bytes(self, device: int) -> int:
        """Bytes of the K/V block that starts on `device`: its tokens × (d_k + d_v) numbers."""
        return len(self.result.tokens[device]) * (self.result.d + self.result.d_v) * self.bytes_per_number


def plan_ring(setting: Setting) -> RingPlan:
    tr = setting.trace
    ht = setting.head_trace()
    N = ring_size(setting)
    causal = bool(np.asarray(ht.mask).any()) or tr.model.causal
    res = ring_attention(ht.q, ht.k, ht.v, N, causal=causal, bytes_per_number=BYTES_PER_NUMBER)
    z = np.asarray(ht.z, np.float64)
    rows = tuple(shown_rows(res, i) for i in range(N))
    picked = [p for r in rows for p in r]
    cols = tuple(sorted(set(range(min(O_SHOWN, res.d_v))) | {res.d_v - 1}))
    decimals = shown_decimals(res.output[np.ix_(picked, cols)], z[np.ix_(picked, cols)])
    return RingPlan(model=tr.model.name, tokens=tr.tokens, layer=ht.layer, head=ht.head, kv_head=int(ht.kv_head),
                    n_devices=N,
                    causal=causal, result=res, trace_z=z, rows_shown=rows, o_shown=cols,
                    max_diff_trace=float(np.abs(res.output - z).max()), max_diff_reference=res.max_diff,
                    decimals=decimals, bytes_per_number=BYTES_PER_NUMBER)


@dataclass(frozen=True)
class RingCausalPlan:
    tokens: tuple[str, ...]
    n_devices: int
    contiguous: RingResult  # causal, contiguous blocks
    striped: RingResult  # causal, token t on device t mod N
    max_diff_striped: float  # max |striped ring − the model's own output|
    max_diff_contiguous: float  # the same for contiguous blocks (chapter 1's ring)
    layout: str = "video"  # video: keys as rows, queries as columns; paper: the transpose

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def total_cells(self) -> int:
        """Query·key pairs the causal mask leaves open: n(n + 1)/2, however they are shared out."""
        return self.n * (self.n + 1) // 2

    @staticmethod
    def device_of(result: RingResult) -> np.ndarray:
        """[n] the device each token is on."""
        out = np.zeros(result.n, dtype=int)
        for i, t in enumerate(result.tokens):
            out[t] = i
        return out

    @staticmethod
    def order(result: RingResult) -> np.ndarray:
        """Token positions grouped by device (device 1's, then device 2's, ...): the rows and columns of
        the mask as the devices hold them."""
        return np.concatenate(result.tokens)


def plan_ring_causal(setting: Setting) -> RingCausalPlan:
    tr = setting.trace
    ht = setting.head_trace()
    N = ring_size(setting)
    both = [ring_attention(ht.q, ht.k, ht.v, N, causal=True, striped=s, bytes_per_number=BYTES_PER_NUMBER)
            for s in (False, True)]
    z = np.asarray(ht.z, np.float64)
    return RingCausalPlan(tokens=tr.tokens, n_devices=N, contiguous=both[0], striped=both[1],
                          max_diff_striped=float(np.abs(both[1].output - z).max()),
                          max_diff_contiguous=float(np.abs(both[0].output - z).max()), layout=setting.layout)


@dataclass(frozen=True)
class RingMemoryPlan:
    model: str
    n_layers: int
    n_kv_heads: int
    d_head: int
    bytes_per_number: int
    n_devices: int
    rows: tuple[RingMemory, ...]  # one per MEMORY_LENGTHS entry

    @property
    def kv_token(self) -> int:
        """Bytes of one token's keys and values over every layer."""
        return self.rows[0].kv_token_layer * self.n_layers

    @property
    def kv_factors(self) -> tuple[int, int, int, int, int]:
        """The memory formula's factors, as drawn: layers × key/value heads × numbers per head × 2 (keys
        and values) × bytes per number; their product is `kv_token`."""
        return (self.n_layers, self.n_kv_heads, self.d_head, KV_TENSORS, self.bytes_per_number)

    @property
    def longest(self) -> RingMemory:
        return self.rows[-1]


def plan_ring_memory(setting: Setting) -> RingMemoryPlan:
    m = setting.model
    N = ring_size(setting)
    kv_heads = m.n_kv_heads or m.n_heads
    rows = tuple(ring_memory(n, m.d_head, kv_heads, m.n_layers, BYTES_PER_NUMBER, N) for n in MEMORY_LENGTHS)
    return RingMemoryPlan(model=m.name, n_layers=m.n_layers, n_kv_heads=kv_heads, d_head=m.d_head,
                          bytes_per_number=BYTES_PER_NUMBER, n_devices=N, rows=rows)

