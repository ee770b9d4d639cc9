"""How many numbers a transformer holds, counted from its config the way the video counts (no torch).

The video's tally for one head: W_Q and W_K (d_model × d_head each); a full value map would be
d_model × d_model, so it is split into value-down (d_model → d_head) and value-up (d_head → d_model),
2 × d_model × d_head; so 4 × d_model × d_head per head. With grouped-query attention a layer's
query heads share fewer key/value heads: W_K and value-down are counted once per kv head, W_Q and
value-up once per query head. The whole model: embedding (vocab × d_model), attention, MLP
(2 × d_model × d_mlp per layer, 3 × with SwiGLU's gate) and unembedding (vocab × d_model; when tied
to the embedding it is the same numbers, counted once) — matrices only, without biases and norms.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class SizeConfig:
    """The sizes that decide how many numbers a model holds."""

    name: str
    d_model: int
    n_heads: int
    d_head: int
    n_layers: int
    vocab_size: int
    n_ctx: int
    d_mlp: int = 0  # 0: attention-only blocks
    mlp: str = "gelu"  # gelu | gelu_tanh | swiglu
    n_kv_heads: int = 0  # 0: one key/value head per query head
    tied_embeddings: bool = False

    @property
    def kv_heads(self) -> int:
        return self.n_kv_heads or self.n_heads


# GPT-3 175B as published (Brown et al. 2020, table 2.1): the config the video counts
GPT3 = SizeConfig(name="gpt3", d_model=12_288, n_heads=96, d_head=128, n_layers=96, vocab_size=50_257, n_ctx=2_048,
                  d_mlp=4 * 12_288, mlp="gelu")
# GPT-2 small as published (Radford et al. 2019; the released config: n_embd 768, n_head 12, n_layer 12,
# n_positions 1024, vocab 50257, MLP 4 × 768 = 3072, tied embeddings): the walkthrough's shapes
GPT2 = SizeConfig(name="gpt2", d_model=768, n_heads=12, d_head=64, n_layers=12, vocab_size=50_257, n_ctx=1_024,
                  d_mlp=4 * 768, mlp="gelu_tanh", tied_embeddings=True)
CONFIGS = {"gpt3": GPT3, "gpt2": GPT2}


def size_config(info) -> SizeConfig:
    """The sizes of a model from its ModelInfo or ModelConfig (anything with the same fields)."""
    d_mlp = int(getattr(info, "d_mlp", 0) or 0)
    return SizeConfig(name=info.name, d_model=info.d_model, n_heads=info.n_heads, d_head=info.d_head,
                      n_layers=info.n_layers, vocab_size=info.vocab_size, n_ctx=info.n_ctx, d_mlp=d_mlp,
                      mlp=(getattr(info, "mlp", "") or "gelu"), n_kv_heads=int(getattr(info, "n_kv_heads", 0) or 0),
                      tied_embeddings=bool(getattr(info, "tied_embeddings", False)))


@dataclass(frozen=True)
class Tally:
    """The video's count for one config; every field a number of numbers (matrices only)."""

    config: SizeConfig
    w_q: int  # one head's query matrix, d_model × d_head
    w_k: int  # one head's key matrix
    full_value: int  # a full value map, d_model × d_model (too big: the video splits it)
    value_down: int  # d_model × d_head
    value_up: int  # d_head × d_model
    per_head: int  # W_Q + W_K + value-down + value-up
    per_layer: int  # a layer's attention: query heads' W_Q and value-up, kv heads' W_K and value-down
    attention: int  # × n_layers
    embedding: int  # vocab × d_model
    mlp_per_layer: int  # 2 (3 with SwiGLU) × d_model × d_mlp
    mlp: int
    unembedding: int  # vocab × d_model, 0 when tied (the embedding's numbers, counted once)
    total: int  # embedding + attention + MLP + unembedding

    @property
    def shared_kv(self) -> bool:
        return self.config.kv_heads < self.config.n_heads

    @property
    def attention_share(self) -> float:
        return self.attention / self.total if self.total else 0.0

    def to_dict(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k != "config"}
        out.update(model=self.config.name, config=asdict(self.config), attention_share=self.attention_share,
                   unembedding_tied=self.config.tied_embeddings, n_kv_heads=self.config.kv_heads)
        return out


def tally(cfg: SizeConfig) -> Tally:
    dm, dh = cfg.d_model, cfg.d_head
    head_matrix = dm * dh
    per_layer = cfg.n_heads * 2 * head_matrix + cfg.kv_heads * 2 * head_matrix
    attention = cfg.n_layers * per_layer
    embedding = cfg.vocab_size * dm
    mlp_per_layer = (3 if cfg.mlp == "swiglu" else 2) * dm * cfg.d_mlp
    mlp = cfg.n_layers * mlp_per_layer
    unembedding = 0 if cfg.tied_embeddings else cfg.vocab_size * dm
    return Tally(config=cfg, w_q=head_matrix, w_k=head_matrix, full_value=dm * dm, value_down=head_matrix,
                 value_up=head_matrix, per_head=4 * head_matrix, per_layer=per_layer, attention=attention,
                 embedding=embedding, mlp_per_layer=mlp_per_layer, mlp=mlp, unembedding=unembedding,
                 total=embedding + attention + mlp + unembedding)


def weights_count(model) -> dict:
    """The numbers a loaded model really holds (duck-typed torch module, no torch import here):
    `weights`, every parameter the architecture has (a tied matrix once), split into `matrices` and
    `vectors` (norm gains, biases); `other`, stored buffers that are no weights (the toy's named
    directions). Parameters that are entirely zero are biases the architecture does not have, held as
    zeros by our one transformer: internal padding, counted in `padding` and in none of the others."""
    params = list(model.parameters())
    real = [p for p in params if p.numel() and bool(p.detach().any())]
    matrices = sum(int(p.numel()) for p in real if p.dim() >= 2)
    vectors = sum(int(p.numel()) for p in real if p.dim() < 2)
    padding = sum(int(p.numel()) for p in params) - matrices - vectors
    other = sum(int(b.numel()) for _, b in model.named_buffers())
    return {"weights": matrices + vectors, "matrices": matrices, "vectors": vectors, "other": other,
            "padding": padding}
