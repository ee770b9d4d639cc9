"""Plan of `mlp` (no manim, no torch at import): the block's MLP applied to the focus token after
attention, with its real hidden activations (model/mlp_probe.py runs the real block on the trace's
residual stream when the lesson's setting is made; `MLP_PROBE` in the setting's options).

Shapes: the model in use (SmolLM2: gated SwiGLU 576 → 1536 → 576) and GPT-2 small's plain MLP
768 → 3072 → 768 from its published config (model.params.GPT2). The neurons shown are the focus
token's most active ones (largest |activation|), in index order; a brace says how many exist."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from attention_manim.model.errors import UserError
from attention_manim.model.params import GPT2

from ..setting import SceneInputs, Setting
from .kv_cache import session_of
from .windows import window_indices

MLP_PROBE = "mlp_probe"  # Setting.options key
NEURONS = 5  # hidden neurons shown


def mlp_focus(setting: Setting) -> int:
    """The token followed: the focus word's, else the last token (the one that predicts)."""
    return setting.trace.index_of(setting.focus) if setting.focus else setting.trace.n_tokens - 1


def with_mlp_probe(setting: Setting, inputs: SceneInputs) -> Setting:
    if not setting.model.d_mlp:
        raise UserError(f"the model {setting.model.name!r} has no MLP: its blocks are attention only",
                        "render this scene with --model smollm2 (its default) or a GPT-2 / LLaMA checkpoint folder",
                        key="scene_needs_mlp", model=setting.model.name)
    # no layer asked for: the middle of the model (the first layer's MLP is little more than a lookup)
    layer = setting.head.layer if inputs.layer is not None else setting.model.n_layers // 2
    probe = session_of(inputs, "mlp_activations").mlp_activations(setting.trace, layer, mlp_focus(setting))
    return replace(setting, options={**setting.options, MLP_PROBE: probe})


@dataclass(frozen=True)
class MlpPlan:
    tokens: tuple[str, ...]
    focus: int
    layer: int
    kind: str  # gelu | gelu_tanh | swiglu
    d_model: int
    d_mlp: int
    neurons: tuple[int, ...]  # hidden neurons shown (index order)
    up: tuple[float, ...]  # their up projections
    gate: tuple[float, ...]  # their gates (SwiGLU; empty otherwise)
    gate_act: tuple[float, ...]  # SiLU(gate)
    hidden: tuple[float, ...]  # their activations
    active: int  # neurons with |activation| ≥ 0.1 · the largest, out of d_mlp
    x: np.ndarray  # [d_model] the residual stream entering the MLP
    out: np.ndarray  # [d_model] the MLP's output for the focus
    trace_out: np.ndarray  # [d_model] the trace's mlp_out
    max_diff: float
    after: np.ndarray  # [d_model] E′ = x + out: the block's output for the focus
    after_diff: float  # max |x + out − the trace's residual_out|
    after_kind: str  # number kind of the E + MLP(E) = E′ columns: the fewest decimals at which the shown sums add up
    shown: tuple[int | None, ...]  # entries of the d_model vectors shown
    ratio: float  # d_mlp / d_model
    gpt2: tuple[int, int]  # GPT-2 small: (d_model, d_mlp)
    model_name: str
    norm: str = "none"  # the norm the MLP's input goes through first: layernorm | rmsnorm | none


def sum_kind(a: np.ndarray, b: np.ndarray, shown) -> str:
    """`vec` (one decimal) when every shown entry of a + b, rounded, is the rounded a plus the rounded b;
    else `signed2` (two decimals), so that the column of sums reads as the sum of the columns."""
    for kind, dec in (("vec", 1), ("signed2", 2)):
        def f(v, dec=dec):
            return f"{float(v):.{dec}f}"
        if all(f(float(f(a[i])) + float(f(b[i]))) == f(a[i] + b[i]) for i in shown if i is not None):
            return kind
    return "signed2"


def plan_mlp(setting: Setting) -> MlpPlan:
    if MLP_PROBE not in setting.options:
        raise ValueError("the mlp chapter needs its probe: make the setting with with_mlp_probe (MlpLesson does)")
    p = setting.options[MLP_PROBE]
    h = np.asarray(p.hidden, float)
    top = np.argsort(-np.abs(h), kind="stable")[:NEURONS]
    idx = tuple(sorted(int(i) for i in top))
    swiglu = p.gate is not None
    m = setting.model
    x, out = np.asarray(p.x, float), np.asarray(p.out, float)
    after = x + out
    trace_after = np.asarray(setting.trace.layers[p.layer].residual_out[p.position], float)
    shown = tuple(window_indices(m.d_model, 3, 1))
    return MlpPlan(
        tokens=setting.trace.tokens, focus=p.position, layer=p.layer, kind=p.kind, d_model=m.d_model,
        d_mlp=p.d_mlp, neurons=idx, up=tuple(float(p.up[i]) for i in idx),
        gate=tuple(float(p.gate[i]) for i in idx) if swiglu else (),
        gate_act=tuple(float(p.gate_act[i]) for i in idx) if swiglu else (),
        hidden=tuple(float(h[i]) for i in idx), active=int((np.abs(h) >= 0.1 * np.abs(h).max()).sum()),
        x=x, out=out, trace_out=np.asarray(p.trace_out, float),
        max_diff=p.max_diff, after=after, after_diff=float(np.abs(after - trace_after).max()),
        after_kind=sum_kind(x, out, shown), shown=shown, ratio=p.d_mlp / m.d_model,
        gpt2=(GPT2.d_model, GPT2.d_mlp), model_name=m.name, norm=getattr(setting.trace.model, "norm", "none"))
