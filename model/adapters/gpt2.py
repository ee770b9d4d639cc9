"""GPT-2 folders as Hugging Face writes them (model_type "gpt2").

Fused c_attn, Conv1D weights stored [in, out] (so x @ W, no transpose), LayerNorm, the tanh GELU
("gelu_new"), learned positions, the unembedding tied to the token embedding."""

from __future__ import annotations

from pathlib import Path

from ..config import ModelConfig
from ..errors import ModelFileError
from .common import ENGLISH_EXAMPLES, build_model, folder_identity, need, read_safetensors, read_tokenizer, vocab_list

ACTIVATIONS = {"gelu_new": "gelu_tanh", "gelu_pytorch_tanh": "gelu_tanh", "gelu_fast": "gelu_tanh", "gelu": "gelu"}


def load(folder: Path, hf: dict):
    name = folder.name
    act = hf.get("activation_function", "gelu_new")
    if act not in ACTIVATIONS:
        raise ModelFileError(f"{folder}: GPT-2 activation {act!r} is not supported", f"supported: {', '.join(ACTIVATIONS)}",
                             key="gpt2_activation", folder=folder, activation=act, supported=", ".join(ACTIVATIONS))
    try:
        D, H, L = int(hf["n_embd"]), int(hf["n_head"]), int(hf["n_layer"])
    except (KeyError, TypeError, ValueError) as e:
        raise ModelFileError(f"{folder}/config.json lacks a GPT-2 size: {e}", key="gpt2_size_missing", folder=folder,
                             detail=e) from None
    if D % H:
        raise ModelFileError(f"{folder}/config.json: n_embd {D} is not divisible by n_head {H}", key="gpt2_heads_uneven",
                             folder=folder, d_model=D, heads=H)
    d = D // H
    tokenizer = read_tokenizer(folder, name)
    raw = read_safetensors(folder)
    src = str(folder)
    s = {k.removeprefix("transformer."): v for k, v in raw.items()}
    W_E = need(s, "wte.weight", src)
    V = W_E.shape[0]
    W_pos = need(s, "wpe.weight", src)
    n_ctx = int(hf.get("n_positions", hf.get("n_ctx", W_pos.shape[0])))
    d_mlp = int(hf.get("n_inner") or 4 * D)
    tied = "lm_head.weight" not in s or hf.get("tie_word_embeddings", True)
    cfg = ModelConfig(name=name, vocab=vocab_list(tokenizer, V), d_model=D, n_heads=H, d_head=d, n_layers=L,
                      n_ctx=n_ctx, causal=True, norm="layernorm", norm_eps=float(hf.get("layer_norm_epsilon", 1e-5)),
                      d_mlp=d_mlp, bias=True, mlp=ACTIVATIONS[act], positions="learned", tied_embeddings=bool(tied),
                      family="gpt2", source=src, examples=dict(ENGLISH_EXAMPLES))
    out = {"W_E": W_E, "W_pos": W_pos, "ln_final.w": need(s, "ln_f.weight", src), "ln_final.b": need(s, "ln_f.bias", src)}
    if not tied:
        out["W_U"] = need(s, "lm_head.weight", src).T
    for i in range(L):
        p = f"h.{i}."
        Wqkv = need(s, p + "attn.c_attn.weight", src)  # [D, 3D] (Conv1D: in, out)
        bqkv = need(s, p + "attn.c_attn.bias", src)
        if tuple(Wqkv.shape) != (D, 3 * D):
            tensor = f"{p}attn.c_attn.weight"
            raise ModelFileError(f"shape mismatch in {src}: {tensor} is {list(Wqkv.shape)}, "
                                 f"the config says {[D, 3 * D]}", "config.json and the weights come from different models",
                                 key="shape_mismatch", source=src, tensor=tensor, shape=list(Wqkv.shape),
                                 expected=[D, 3 * D])
        Wq, Wk, Wv = Wqkv.split(D, dim=1)
        bq, bk, bv = bqkv.split(D)
        per_head = lambda w: w.reshape(D, H, d).permute(1, 0, 2).contiguous()  # noqa: E731  [D, H*d] -> [H, D, d]
        b = f"blocks.{i}."
        out.update({
            b + "ln1.w": need(s, p + "ln_1.weight", src), b + "ln1.b": need(s, p + "ln_1.bias", src),
            b + "W_Q": per_head(Wq), b + "W_K": per_head(Wk), b + "W_V": per_head(Wv),
            b + "b_Q": bq.reshape(H, d), b + "b_K": bk.reshape(H, d), b + "b_V": bv.reshape(H, d),
            b + "W_O": need(s, p + "attn.c_proj.weight", src).reshape(H, d, D), b + "b_O": need(s, p + "attn.c_proj.bias", src),
            b + "ln2.w": need(s, p + "ln_2.weight", src), b + "ln2.b": need(s, p + "ln_2.bias", src),
            b + "W_in": need(s, p + "mlp.c_fc.weight", src), b + "b_in": need(s, p + "mlp.c_fc.bias", src),
            b + "W_out": need(s, p + "mlp.c_proj.weight", src), b + "b_out": need(s, p + "mlp.c_proj.bias", src),
        })
    desc = f"GPT-2 checkpoint {name} ({L} layers, {H} heads, d_model {D}) from {folder}"
    return build_model(cfg, out, tokenizer, src, desc,
                       folder_identity(folder, ["config.json", "model.safetensors", "model.safetensors.index.json"]))
