"""A small GPT-style decoder whose forward pass can record every intermediate number.

Weights follow the per-head convention of interpretability libraries:
W_Q, W_K, W_V: [n_heads, d_model, d_head]; W_O: [n_heads, d_head, d_model].
Attention is written out by hand (einsum) so that each step is visible and recordable; the tests
check it against torch.nn.functional.scaled_dot_product_attention.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .config import ModelConfig
from .errors import ContextTooLongError
from .tokenizer import WordTokenizer
from .trace import HeadTrace, LayerTrace, ModelInfo, Trace


class LayerNorm(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.b = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return nn.functional.layer_norm(x, x.shape[-1:], self.w, self.b, eps=1e-5)


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        H, D, d = cfg.n_heads, cfg.d_model, cfg.d_head
        self.cfg = cfg
        self.ln1 = LayerNorm(D) if cfg.layernorm else nn.Identity()
        self.W_Q = nn.Parameter(torch.zeros(H, D, d))
        self.W_K = nn.Parameter(torch.zeros(H, D, d))
        self.W_V = nn.Parameter(torch.zeros(H, D, d))
        self.W_O = nn.Parameter(torch.zeros(H, d, D))
        self.b_Q = nn.Parameter(torch.zeros(H, d), requires_grad=cfg.bias)
        self.b_K = nn.Parameter(torch.zeros(H, d), requires_grad=cfg.bias)
        self.b_V = nn.Parameter(torch.zeros(H, d), requires_grad=cfg.bias)
        self.b_O = nn.Parameter(torch.zeros(D), requires_grad=cfg.bias)
        if cfg.d_mlp:
            self.ln2 = LayerNorm(D) if cfg.layernorm else nn.Identity()
            self.W_in = nn.Parameter(torch.zeros(D, cfg.d_mlp))
            self.b_in = nn.Parameter(torch.zeros(cfg.d_mlp))
            self.W_out = nn.Parameter(torch.zeros(cfg.d_mlp, D))
            self.b_out = nn.Parameter(torch.zeros(D))

    def attention(self, x, record: dict | None = None):
        """x: [batch, n, d_model] -> summed head outputs [batch, n, d_model]."""
        cfg = self.cfg
        n = x.shape[-2]
        a = self.ln1(x)
        q = torch.einsum("bnD,hDd->bhnd", a, self.W_Q) + self.b_Q[:, None, :]
        k = torch.einsum("bnD,hDd->bhnd", a, self.W_K) + self.b_K[:, None, :]
        v = torch.einsum("bnD,hDd->bhnd", a, self.W_V) + self.b_V[:, None, :]
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(cfg.d_head)
        if cfg.causal:
            mask = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1)  # key after query
        else:
            mask = torch.zeros(n, n, dtype=torch.bool, device=x.device)
        pattern = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        z = torch.einsum("bhqk,bhkd->bhqd", pattern, v)
        delta_e = torch.einsum("bhnd,hdD->bhnD", z, self.W_O)  # per head, in embedding space
        out = delta_e.sum(1) + self.b_O
        if record is not None:
            record.update(attn_in=a, q=q, k=k, v=v, scores=scores, mask=mask, pattern=pattern,
                          z=z, head_delta_e=delta_e, delta_e=out)
        return out

    def mlp(self, x):
        if not self.cfg.d_mlp:
            return torch.zeros_like(x)
        h = nn.functional.gelu(self.ln2(x) @ self.W_in + self.b_in)
        return h @ self.W_out + self.b_out

    def forward(self, x, record: dict | None = None):
        if record is not None:
            record["resid_in"] = x
        x = x + self.attention(x, record)
        m = self.mlp(x)
        if record is not None:
            record.update(resid_mid=x, mlp_out=m, residual_out=x + m)
        return x + m


class AttentionModel(nn.Module):
    """The transformer plus what makes it explainable: a tokenizer, head names, named directions."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        V, D = cfg.vocab_size, cfg.d_model
        self.W_E = nn.Parameter(torch.zeros(V, D))
        self.W_pos = nn.Parameter(torch.zeros(cfg.n_ctx, D))
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_final = LayerNorm(D) if cfg.layernorm else nn.Identity()
        self.W_U = nn.Parameter(torch.zeros(D, V))
        # unit vectors of the named semantic directions, one row per name in cfg.directions
        self.register_buffer("directions", torch.zeros(len(cfg.directions), D))
        self.tokenizer = WordTokenizer(cfg.vocab, cfg.name)

    @property
    def info(self) -> ModelInfo:
        """What scenes may know of the model before any trace: sizes, head roles, example sentences."""
        cfg = self.cfg
        return ModelInfo(name=cfg.name, d_model=cfg.d_model, n_heads=cfg.n_heads, d_head=cfg.d_head,
                         n_layers=cfg.n_layers, n_ctx=cfg.n_ctx, causal=cfg.causal, d_mlp=cfg.d_mlp,
                         layernorm=cfg.layernorm, vocab_size=cfg.vocab_size,
                         roles={r: tuple(lh) for r, lh in cfg.head_roles.items()}, examples=dict(cfg.examples))

    @property
    def device(self) -> torch.device:
        return self.W_E.device

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        n = ids.shape[-1]
        if n > self.cfg.n_ctx:
            raise ContextTooLongError(n, self.cfg.n_ctx)
        return self.W_E[ids] + self.W_pos[:n]

    def forward(self, ids: torch.Tensor, records: list | None = None) -> torch.Tensor:
        """ids: [batch, n] -> logits [batch, n, vocab]. Fills `records` with one dict per layer."""
        x = self.embed(ids)
        for block in self.blocks:
            rec = {} if records is not None else None
            x = block(x, rec)
            if records is not None:
                records.append(rec)
        return self.ln_final(x) @ self.W_U

    @torch.no_grad()
    def trace(self, text: str) -> Trace:
        """Run one forward pass on `text` and return every number it produced, on the CPU."""
        tokens, ids_list = self.tokenizer.encode(text)
        return self._trace(text, tokens, ids_list)

    @torch.no_grad()
    def trace_ids(self, ids: list[int]) -> Trace:
        """The trace of a sequence of token ids (each token shown as the vocabulary spells it)."""
        ids_list = [int(i) for i in ids]
        bad = [i for i in ids_list if not 0 <= i < self.cfg.vocab_size]
        if bad:
            from .errors import UserError

            raise UserError(f"token ids out of range: {bad[:5]}", f"ids run from 0 to {self.cfg.vocab_size - 1}")
        tokens = [self.cfg.vocab[i] for i in ids_list]
        return self._trace(" ".join(tokens), tokens, ids_list)

    def _trace(self, text: str, tokens: list[str], ids_list: list[int]) -> Trace:
        cfg = self.cfg
        if len(ids_list) > cfg.n_ctx:
            raise ContextTooLongError(len(ids_list), cfg.n_ctx)
        if not ids_list:
            from .errors import UserError

            raise UserError("the sentence has no words the model can read", "give at least one word")
        ids = torch.tensor([ids_list], device=self.device)
        records: list[dict] = []
        logits = self.forward(ids, records)
        x_final = self.ln_final(records[-1]["residual_out"]) if records else self.embed(ids)

        def np_(t):
            return t.detach().to("cpu", torch.float32).numpy().copy() if t.is_floating_point() else t.detach().cpu().numpy().copy()

        n = len(ids_list)
        layers = []
        for li, (block, rec) in enumerate(zip(self.blocks, records)):
            heads = []
            for h in range(cfg.n_heads):
                heads.append(HeadTrace(
                    layer=li, head=h, name=cfg.head_name(li, h),
                    q=np_(rec["q"][0, h]), k=np_(rec["k"][0, h]), v=np_(rec["v"][0, h]),
                    scores=np_(rec["scores"][0, h]), mask=np_(rec["mask"]),
                    pattern=np_(rec["pattern"][0, h]), z=np_(rec["z"][0, h]),
                    delta_e=np_(rec["head_delta_e"][0, h]),
                    W_Q=np_(block.W_Q[h]), W_K=np_(block.W_K[h]), W_V=np_(block.W_V[h]),
                    W_O=np_(block.W_O[h]), b_Q=np_(block.b_Q[h]), b_K=np_(block.b_K[h]),
                    b_V=np_(block.b_V[h]), role=cfg.role_of(li, h),
                ))
            layers.append(LayerTrace(
                index=li, heads=tuple(heads), resid_in=np_(rec["resid_in"][0]),
                attn_in=np_(rec["attn_in"][0]), delta_e=np_(rec["delta_e"][0]),
                resid_mid=np_(rec["resid_mid"][0]), mlp_out=np_(rec["mlp_out"][0]),
                residual_out=np_(rec["residual_out"][0]),
            ))
        info = self.info
        dirs = np_(self.directions)
        return Trace(
            text=text, model=info, tokens=tuple(tokens), token_ids=tuple(ids_list),
            token_embeddings=np_(self.W_E[ids[0]]), position_embeddings=np_(self.W_pos[:n]),
            embeddings=np_(self.embed(ids)[0]), layers=tuple(layers), final=np_(x_final[0]),
            logits=np_(logits[0]), vocab=tuple(cfg.vocab),
            directions={name: dirs[i] for i, name in enumerate(cfg.directions)},
        )


def random_model(cfg: ModelConfig, seed: int = 0, scale: float = 1.0) -> AttentionModel:
    """A seeded random model (for tests and as a stand-in before weights are trained)."""
    g = torch.Generator().manual_seed(seed)
    model = AttentionModel(cfg)
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if leaf in ("w", "b") or (leaf.startswith("b_") and not cfg.bias):
                continue  # LayerNorm gains stay 1, biases stay 0 unless the model has them
            fan_in = p.shape[-2] if p.dim() >= 2 else p.shape[-1]
            p.copy_(torch.randn(p.shape, generator=g) * scale / math.sqrt(fan_in) * (3.0 if "W_E" in name or "W_pos" in name else 1.0))
        if cfg.directions:
            d = torch.randn(len(cfg.directions), cfg.d_model, generator=g)
            model.directions.copy_(d / d.norm(dim=-1, keepdim=True))
    return model
