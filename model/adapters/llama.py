"""LLaMA-style folders as Hugging Face writes them (model_type "llama" or "mistral"; SmolLM too).

RMSNorm, rotary positions (θ = `rope_theta` at the top of config.json, or under `rope_parameters`
as newer writers put it), grouped-query attention (`num_key_value_heads`, `head_dim`), a SwiGLU MLP,
embeddings tied to the unembedding or not. Linear layers are stored [out, in]."""

from __future__ import annotations

from pathlib import Path

import torch

from ..config import ModelConfig
from ..errors import ModelFileError
from .common import ENGLISH_EXAMPLES, build_model, folder_identity, need, read_safetensors, read_tokenizer, vocab_list

MODEL_TYPES = ("llama", "mistral")


def rope_theta(hf: dict, where: str) -> float:
    """θ and a check that the rotary embedding is the plain kind (no scaling) we implement."""
    params = hf.get("rope_parameters") or {}
    scaling = hf.get("rope_scaling") or {}
    kind = params.get("rope_type") or params.get("type") or scaling.get("rope_type") or scaling.get("type") or "default"
    if kind != "default":
        raise ModelFileError(f"{where}: rotary scaling {kind!r} is not supported",
                             "supported: plain rotary embeddings (rope_type default)", key="rope_scaling",
                             folder=where, kind=kind)
    theta = params.get("rope_theta", hf.get("rope_theta", 10000.0))
    return float(theta)


def attention_weights(Wq, Wk, Wv, Wo, H: int, G: int, d: int, D: int) -> dict[str, torch.Tensor]:
    """nn.Linear weights [out, in] -> our per-head W_Q [H, D, d], W_K/W_V [G, D, d], W_O [H, d, D]."""
    return {
        "W_Q": Wq.reshape(H, d, D).transpose(1, 2).contiguous(),
        "W_K": Wk.reshape(G, d, D).transpose(1, 2).contiguous(),
        "W_V": Wv.reshape(G, d, D).transpose(1, 2).contiguous(),
        "W_O": Wo.T.reshape(H, d, D).contiguous(),
    }


def load(folder: Path, hf: dict):
    name = folder.name
    src = str(folder)
    act = hf.get("hidden_act", "silu")
    if act != "silu":
        raise ModelFileError(f"{folder}: LLaMA MLP activation {act!r} is not supported", "supported: silu (SwiGLU)",
                             key="llama_activation", folder=folder, activation=act)
    try:
        D, H, L = int(hf["hidden_size"]), int(hf["num_attention_heads"]), int(hf["num_hidden_layers"])
        d_mlp = int(hf["intermediate_size"])
    except (KeyError, TypeError, ValueError) as e:
        raise ModelFileError(f"{folder}/config.json lacks a LLaMA size: {e}", key="llama_size_missing", folder=folder,
                             detail=e) from None
    G = int(hf.get("num_key_value_heads") or H)
    d = int(hf.get("head_dim") or D // H)
    if H % G:
        raise ModelFileError(f"{folder}/config.json: {H} attention heads cannot share {G} key/value heads",
                             key="llama_kv_heads", folder=folder, heads=H, kv_heads=G)
    theta = rope_theta(hf, src)
    n_ctx = int(hf.get("max_position_embeddings", 2048))
    if hf.get("sliding_window"):
        n_ctx = min(n_ctx, int(hf["sliding_window"]))  # within the window, full causal attention is exact
    attn_bias, mlp_bias = bool(hf.get("attention_bias", False)), bool(hf.get("mlp_bias", False))
    if mlp_bias:
        raise ModelFileError(f"{folder}: an MLP with biases (mlp_bias) is not supported",
                             "supported: LLaMA's bias-free SwiGLU", key="llama_mlp_bias", folder=folder)
    tokenizer = read_tokenizer(folder, name)
    s = read_safetensors(folder)
    W_E = need(s, "model.embed_tokens.weight", src)
    V = W_E.shape[0]
    tied = bool(hf.get("tie_word_embeddings", False)) or "lm_head.weight" not in s
    cfg = ModelConfig(name=name, vocab=vocab_list(tokenizer, V), d_model=D, n_heads=H, d_head=d, n_layers=L,
                      n_ctx=n_ctx, causal=True, norm="rmsnorm", norm_eps=float(hf.get("rms_norm_eps", 1e-6)),
                      d_mlp=d_mlp, bias=attn_bias, mlp_bias=mlp_bias, mlp="swiglu", positions="rotary",
                      rope_theta=theta, n_kv_heads=G, tied_embeddings=tied, family="llama", source=src,
                      examples=dict(ENGLISH_EXAMPLES))
    out = {"W_E": W_E, "ln_final.w": need(s, "model.norm.weight", src)}
    if not tied:
        out["W_U"] = need(s, "lm_head.weight", src).T
    for i in range(L):
        p, b = f"model.layers.{i}.", f"blocks.{i}."
        Wq, Wk = need(s, p + "self_attn.q_proj.weight", src), need(s, p + "self_attn.k_proj.weight", src)
        Wv, Wo = need(s, p + "self_attn.v_proj.weight", src), need(s, p + "self_attn.o_proj.weight", src)
        for key, w, shape in (("q_proj", Wq, (H * d, D)), ("k_proj", Wk, (G * d, D)), ("v_proj", Wv, (G * d, D)),
                              ("o_proj", Wo, (D, H * d))):
            if tuple(w.shape) != shape:
                tensor = f"{p}self_attn.{key}.weight"
                raise ModelFileError(f"shape mismatch in {src}: {tensor} is {list(w.shape)}, "
                                     f"the config says {list(shape)}", "config.json and the weights come from different models",
                                     key="shape_mismatch", source=src, tensor=tensor, shape=list(w.shape),
                                     expected=list(shape))
        out.update({b + k: v for k, v in attention_weights(Wq, Wk, Wv, Wo, H, G, d, D).items()})
        zeros = lambda *shape: torch.zeros(*shape)  # noqa: E731
        out[b + "b_Q"] = s[p + "self_attn.q_proj.bias"].reshape(H, d) if attn_bias else zeros(H, d)
        out[b + "b_K"] = s[p + "self_attn.k_proj.bias"].reshape(G, d) if attn_bias else zeros(G, d)
        out[b + "b_V"] = s[p + "self_attn.v_proj.bias"].reshape(G, d) if attn_bias else zeros(G, d)
        out[b + "b_O"] = s[p + "self_attn.o_proj.bias"] if attn_bias else zeros(D)
        out.update({
            b + "ln1.w": need(s, p + "input_layernorm.weight", src),
            b + "ln2.w": need(s, p + "post_attention_layernorm.weight", src),
            # the MLP's matrices are used transposed, as views (no copy)
            b + "W_gate": need(s, p + "mlp.gate_proj.weight", src).T,
            b + "W_in": need(s, p + "mlp.up_proj.weight", src).T,
            b + "W_out": need(s, p + "mlp.down_proj.weight", src).T,
            b + "b_in": zeros(d_mlp),
            b + "b_out": zeros(D),
        })
    kind = "Mistral" if hf.get("model_type") == "mistral" else "LLaMA"
    desc = f"{kind}-style checkpoint {name} ({L} layers, {H} query heads over {G} key/value heads, d_model {D}) from {folder}"
    return build_model(cfg, out, tokenizer, src, desc,
                       folder_identity(folder, ["config.json", "model.safetensors", "model.safetensors.index.json"]))
