"""The MLP of one block for one token, every intermediate kept (torch; no manim).

The trace keeps each block's MLP output but not its hidden neurons. `mlp_activations` runs the
real block's MLP on the trace's residual stream after attention (`resid_mid`, what the MLP reads)
and returns, as numpy: the normed input m, the up projection m·W_in + b_in, for SwiGLU the gate
m·W_gate and its SiLU, the hidden activation h (GELU(up), or SiLU(gate)·up) and the output h·W_out + b_out
(which equals the trace's `mlp_out` of that token)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from .errors import UserError


@dataclass(frozen=True)
class MlpActivations:
    layer: int
    position: int
    kind: str  # gelu | gelu_tanh | swiglu
    x: np.ndarray  # [d_model] the residual stream entering the MLP (resid_mid)
    m: np.ndarray  # [d_model] after the block's second norm
    up: np.ndarray  # [d_mlp] m·W_in + b_in (GELU's pre-activation; SwiGLU's "up")
    gate: np.ndarray | None  # [d_mlp] SwiGLU: m·W_gate (None for a plain MLP)
    gate_act: np.ndarray | None  # [d_mlp] SiLU(gate)
    hidden: np.ndarray  # [d_mlp] the activation that W_out reads
    out: np.ndarray  # [d_model] h·W_out + b_out
    trace_out: np.ndarray  # [d_model] the trace's mlp_out for the same token

    @property
    def d_mlp(self) -> int:
        return int(self.hidden.shape[0])

    @property
    def max_diff(self) -> float:
        return float(np.abs(self.out - self.trace_out).max())


@torch.no_grad()
def mlp_activations(model, trace, layer: int, position: int) -> MlpActivations:
    cfg = model.cfg
    if not cfg.d_mlp:
        raise UserError(f"the model {cfg.name!r} has no MLP: its blocks are attention only",
                        "use --model smollm2 (or a GPT-2 / LLaMA checkpoint folder) for this scene", key="no_mlp",
                        model=cfg.name)
    block = model.blocks[layer]
    x = torch.tensor(np.asarray(trace.layers[layer].resid_mid[position]), device=model.device,
                     dtype=model.W_E.dtype)[None, :]
    m = block.ln2(x)
    up = m @ block.W_in + block.b_in
    gate = gate_act = None
    if cfg.mlp == "swiglu":
        gate = m @ block.W_gate
        gate_act = nn.functional.silu(gate)
        hidden = gate_act * up
    elif cfg.mlp == "gelu_tanh":
        hidden = nn.functional.gelu(up, approximate="tanh")
    else:
        hidden = nn.functional.gelu(up)
    out = hidden @ block.W_out + block.b_out

    def np_(t):
        return None if t is None else t[0].detach().to("cpu", torch.float32).numpy().copy()

    return MlpActivations(layer=layer, position=position, kind=cfg.mlp, x=np_(x), m=np_(m), up=np_(up),
                          gate=np_(gate), gate_act=np_(gate_act), hidden=np_(hidden), out=np_(out),
                          trace_out=np.asarray(trace.layers[layer].mlp_out[position], dtype=np.float32))
