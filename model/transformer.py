"""A decoder-only transformer whose forward pass can record every intermediate number.

One transformer, written out by hand, for every model we load; the config says which parts it has:
- norm: LayerNorm (GPT-2, the toy when `layernorm` is set), RMSNorm (LLaMA) or none (the toy);
- positions: learned (a W_pos row added to each token's embedding: GPT-2, the toy) or rotary (q and k
  rotated by position inside every head, θ from the config: LLaMA, SmolLM2);
- grouped-query attention: `n_kv_heads` key/value heads shared by the `n_heads` query heads;
- MLP: none, GELU (exact or GPT-2's tanh form) or SwiGLU;
- biases, a final norm, an unembedding tied to W_E or its own W_U.

Weights follow the per-head convention of interpretability libraries:
W_Q: [n_heads, d_model, d_head]; W_K, W_V: [n_kv_heads, d_model, d_head]; W_O: [n_heads, d_head, d_model].
Attention is written out by hand (einsum) so that each step is visible and recordable; the tests
check it against torch.nn.functional.scaled_dot_product_attention and against `transformers`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from contextlib import contextmanager

import numpy as np
import torch
from torch import nn

from .config import ModelConfig, trace_bytes, trace_limit_bytes
from .errors import ContextTooLongError, UserError
from .tokenizer import WordTokenizer
from .trace import HeadTrace, LayerTrace, LogitLens, ModelInfo, Trace, WordDirections


class LayerNorm(nn.Module):
    def __init__(self, d: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.w = nn.Parameter(torch.ones(d))
        self.b = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        return nn.functional.layer_norm(x, x.shape[-1:], self.w, self.b, eps=self.eps)


class RMSNorm(nn.Module):
    """x / sqrt(mean(x²) + eps) * w, computed in float32 (as LLaMA does)."""

    def __init__(self, d: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.w = nn.Parameter(torch.ones(d))

    def forward(self, x):
        x32 = x.float()
        y = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.w * y.to(x.dtype)


def make_norm(cfg: ModelConfig, d: int) -> nn.Module:
    if cfg.norm == "layernorm":
        return LayerNorm(d, cfg.norm_eps)
    if cfg.norm == "rmsnorm":
        return RMSNorm(d, cfg.norm_eps)
    return nn.Identity()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    """[x1, x2] -> [-x2, x1] over the last dimension (the pairing LLaMA's weights are written for:
    dimension i turns with dimension i + d_head/2)."""
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotary_cos_sin(n: int, d_head: int, theta: float, device) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin [n, d_head] of the rotation angles pos · θ^(-2i/d_head), each angle used twice."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, d_head, 2, dtype=torch.int64, device=device).float() / d_head))
    pos = torch.arange(n, device=device, dtype=torch.float32)
    freqs = pos[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


class Block(nn.Module):
    # What replaces the softmax of this layer's heads; None (the default) is ordinary attention.
    # Called as fn(q, k, v, mask, scale): q, k, v [batch, n_heads, n, d_head] (q and k after the
    # rotation, k and v already repeated per query head), mask [n, n] bool (True = blocked by the
    # causal mask), scale = 1/sqrt(d_head); it returns (pattern [batch, n_heads, n, n], z [batch,
    # n_heads, n, d_head]). Linear attention and sliding windows (model/linear_attention.py,
    # model/sliding_window.py) are run through it. Set it for a while with `override_attention`.
    attention_override = None

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        H, D, d, G = cfg.n_heads, cfg.d_model, cfg.d_head, cfg.n_kv_heads
        self.cfg = cfg
        self.ln1 = make_norm(cfg, D)
        self.W_Q = nn.Parameter(torch.zeros(H, D, d))
        self.W_K = nn.Parameter(torch.zeros(G, D, d))
        self.W_V = nn.Parameter(torch.zeros(G, D, d))
        self.W_O = nn.Parameter(torch.zeros(H, d, D))
        self.b_Q = nn.Parameter(torch.zeros(H, d), requires_grad=cfg.bias)
        self.b_K = nn.Parameter(torch.zeros(G, d), requires_grad=cfg.bias)
        self.b_V = nn.Parameter(torch.zeros(G, d), requires_grad=cfg.bias)
        self.b_O = nn.Parameter(torch.zeros(D), requires_grad=cfg.bias)
        if cfg.d_mlp:
            self.ln2 = make_norm(cfg, D)
            self.W_in = nn.Parameter(torch.zeros(D, cfg.d_mlp))
            self.b_in = nn.Parameter(torch.zeros(cfg.d_mlp), requires_grad=cfg.mlp_bias)
            if cfg.mlp == "swiglu":
                self.W_gate = nn.Parameter(torch.zeros(D, cfg.d_mlp))
            self.W_out = nn.Parameter(torch.zeros(cfg.d_mlp, D))
            self.b_out = nn.Parameter(torch.zeros(D), requires_grad=cfg.mlp_bias)

    def attention(self, x, record: dict | None = None, rotary: tuple | None = None):
        """x: [batch, n, d_model] -> summed head outputs [batch, n, d_model].

        `rotary`: (cos, sin) [n, d_head] when the model rotates q and k by position."""
        cfg = self.cfg
        n = x.shape[-2]
        a = self.ln1(x)
        q = torch.einsum("bnD,hDd->bhnd", a, self.W_Q) + self.b_Q[:, None, :]
        k = torch.einsum("bnD,hDd->bhnd", a, self.W_K) + self.b_K[:, None, :]  # [b, kv heads, n, d]
        v = torch.einsum("bnD,hDd->bhnd", a, self.W_V) + self.b_V[:, None, :]
        q_unrot, k_unrot = q, k
        if rotary is not None:
            cos, sin = rotary
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
        if cfg.n_kv_heads != cfg.n_heads:  # query head h reads key/value head h // group
            group = cfg.n_heads // cfg.n_kv_heads
            k_h, v_h = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        else:
            k_h, v_h = k, v
        scores = torch.einsum("bhqd,bhkd->bhqk", q, k_h) / math.sqrt(cfg.d_head)
        if cfg.causal:
            mask = torch.ones(n, n, dtype=torch.bool, device=x.device).triu(1)  # key after query
        else:
            mask = torch.zeros(n, n, dtype=torch.bool, device=x.device)
        if self.attention_override is None:
            pattern = torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
            z = torch.einsum("bhqk,bhkd->bhqd", pattern, v_h)
        else:
            pattern, z = self.attention_override(q, k_h, v_h, mask, 1.0 / math.sqrt(cfg.d_head))
        delta_e = torch.einsum("bhnd,hdD->bhnD", z, self.W_O)  # per head, in embedding space
        out = delta_e.sum(1) + self.b_O
        if record is not None:
            # k and v (and k_unrot) are recorded per key/value head: query head h reads cfg.kv_head(h)
            record.update(attn_in=a, q=q, k=k, v=v, q_unrot=q_unrot, k_unrot=k_unrot, scores=scores,
                          mask=mask, pattern=pattern, z=z, head_delta_e=delta_e, delta_e=out)
        return out

    def mlp(self, x):
        cfg = self.cfg
        if not cfg.d_mlp:
            return torch.zeros_like(x)
        m = self.ln2(x)
        if cfg.mlp == "swiglu":
            h = nn.functional.silu(m @ self.W_gate) * (m @ self.W_in + self.b_in)
        elif cfg.mlp == "gelu_tanh":
            h = nn.functional.gelu(m @ self.W_in + self.b_in, approximate="tanh")
        else:
            h = nn.functional.gelu(m @ self.W_in + self.b_in)
        return h @ self.W_out + self.b_out

    def forward(self, x, record: dict | None = None, rotary: tuple | None = None):
        if record is not None:
            record["resid_in"] = x
        x = x + self.attention(x, record, rotary)
        m = self.mlp(x)
        if record is not None:
            record.update(resid_mid=x, mlp_out=m, residual_out=x + m)
        return x + m


class AttentionModel(nn.Module):
    """The transformer plus what makes it explainable: a tokenizer, head names, named directions."""

    def __init__(self, cfg: ModelConfig, tokenizer=None):
        super().__init__()
        self.cfg = cfg
        V, D = cfg.vocab_size, cfg.d_model
        self.W_E = nn.Parameter(torch.zeros(V, D))
        if cfg.positions == "learned":
            self.W_pos = nn.Parameter(torch.zeros(cfg.n_ctx, D))
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_final = make_norm(cfg, D)
        if not cfg.tied_embeddings:
            self.W_U = nn.Parameter(torch.zeros(D, V))
        # unit vectors of the named semantic directions, one row per name in cfg.directions
        self.register_buffer("directions", torch.zeros(len(cfg.directions), D))
        self.tokenizer = tokenizer if tokenizer is not None else WordTokenizer(cfg.vocab, cfg.name)
        self.weights_id: str | None = None  # set by loaders: a key that changes when the weights do
        self.description = ""  # one line for ModelInfo: what the model is
        self._np_cache: tuple | None = None
        self._directions_cache: tuple | None = None

    # --- what scenes may know before any trace ---------------------------------------------------

    @property
    def real(self) -> bool:
        return self.cfg.family != "toy"

    @property
    def info(self) -> ModelInfo:
        """What scenes may know of the model before any trace: sizes, head roles, example sentences.

        The toy's roles are its named heads (config.json's `head_roles`); a real model names none here:
        its roles are measured and held by the session that opened it (model/session.py), never
        stored on this object."""
        cfg = self.cfg
        roles = {} if self.real else {r: tuple(lh) for r, lh in cfg.head_roles.items()}
        gaps: dict = {}  # why a role has no head: measured by the session, like the roles
        return ModelInfo(name=cfg.name, d_model=cfg.d_model, n_heads=cfg.n_heads, d_head=cfg.d_head,
                         n_layers=cfg.n_layers, n_ctx=cfg.n_ctx, causal=cfg.causal, d_mlp=cfg.d_mlp,
                         layernorm=cfg.layernorm, vocab_size=cfg.vocab_size, roles=roles, role_gaps=gaps,
                         examples=dict(cfg.examples), family=cfg.family, norm=cfg.norm, positions=cfg.positions,
                         rope_theta=cfg.rope_theta if cfg.positions == "rotary" else 0.0,
                         n_kv_heads=cfg.n_kv_heads, mlp=cfg.mlp if cfg.d_mlp else "",
                         tied_embeddings=cfg.tied_embeddings, description=self.description)

    @property
    def device(self) -> torch.device:
        return self.W_E.device

    def kv_head(self, head: int) -> int:
        return self.cfg.kv_head(head)

    # --- the forward pass ------------------------------------------------------------------------

    def unembed(self) -> torch.Tensor:
        """The unembedding [d_model, vocab]: W_U, or W_E transposed when they are tied."""
        return self.W_E.T if self.cfg.tied_embeddings else self.W_U

    def position_embeddings(self, n: int) -> torch.Tensor:
        if self.cfg.positions == "learned":
            return self.W_pos[:n]
        return torch.zeros(n, self.cfg.d_model, device=self.device, dtype=self.W_E.dtype)

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        n = ids.shape[-1]
        if n > self.cfg.n_ctx:
            raise ContextTooLongError(n, self.cfg.n_ctx)
        if self.cfg.positions == "learned":
            return self.W_E[ids] + self.W_pos[:n]
        return self.W_E[ids]

    def rotary(self, n: int):
        if self.cfg.positions != "rotary":
            return None
        return rotary_cos_sin(n, self.cfg.d_head, self.cfg.rope_theta, self.device)

    def forward(self, ids: torch.Tensor, records: list | None = None) -> torch.Tensor:
        """ids: [batch, n] -> logits [batch, n, vocab]. Fills `records` with one dict per layer."""
        x = self.embed(ids)
        rot = self.rotary(ids.shape[-1])
        for block in self.blocks:
            rec = {} if records is not None else None
            x = block(x, rec, rot)
            if records is not None:
                records.append(rec)
        return self.ln_final(x) @ self.unembed()

    # --- traces ----------------------------------------------------------------------------------

    @torch.no_grad()
    def trace(self, text: str) -> Trace:
        """Run one forward pass on `text` and return every number it produced, on the CPU."""
        tokens, ids_list = self.tokenizer.encode(text)
        return self._trace(text, tokens, ids_list)

    @torch.no_grad()
    def trace_ids(self, ids: list[int]) -> Trace:
        """The trace of a sequence of token ids (each token shown as the tokenizer spells it)."""
        ids_list = [int(i) for i in ids]
        bad = [i for i in ids_list if not 0 <= i < self.cfg.vocab_size]
        if bad:
            raise UserError(f"token ids out of range: {bad[:5]}", f"ids run from 0 to {self.cfg.vocab_size - 1}",
                            key="token_ids_out_of_range", ids=bad[:5], last=self.cfg.vocab_size - 1)
        if isinstance(self.tokenizer, WordTokenizer):
            tokens = [self.cfg.vocab[i] for i in ids_list]
            return self._trace(" ".join(tokens), tokens, ids_list)
        tokens = [self.tokenizer.shown[i] for i in ids_list]
        return self._trace(self.tokenizer.decode(ids_list), tokens, ids_list)

    def numpy_weights(self) -> list[dict[str, np.ndarray]]:
        """Per layer: W_Q, W_K, W_V, W_O, b_Q, b_K, b_V as read-only numpy arrays: ONE copy per model
        (on the CPU, views of the parameters themselves), shared by every trace."""
        params = [p for b in self.blocks for p in (b.W_Q, b.W_K, b.W_V, b.W_O, b.b_Q, b.b_K, b.b_V)]
        key = tuple((p.data_ptr(), p._version, p.device.type) for p in params)
        if self._np_cache is None or self._np_cache[0] != key:
            layers = []
            for b in self.blocks:
                d = {}
                for name in ("W_Q", "W_K", "W_V", "W_O", "b_Q", "b_K", "b_V"):
                    t = getattr(b, name).detach()
                    if t.device.type != "cpu" or t.dtype != torch.float32:
                        t = t.to("cpu", torch.float32)
                    a = t.numpy().view()
                    a.flags.writeable = False
                    d[name] = a
                layers.append(d)
            self._np_cache = (key, layers)
        return self._np_cache[1]

    def word_directions(self) -> WordDirections | None:
        """A real model's named directions: the unembedding row of any single-token word (shared)."""
        if isinstance(self.tokenizer, WordTokenizer):
            return None
        U = self.unembed().detach()
        key = (U.data_ptr(), U._version, U.device.type)
        if self._directions_cache is None or self._directions_cache[0] != key:
            rows = U.T.to("cpu", torch.float32).numpy().view()
            rows.flags.writeable = False
            dirs = WordDirections(rows, self.tokenizer.ids_by_text, self.tokenizer.shown)
            self._directions_cache = (key, dirs)
        return self._directions_cache[1]

    def _trace(self, text: str, tokens: list[str], ids_list: list[int]) -> Trace:
        cfg = self.cfg
        if len(ids_list) > cfg.n_ctx:
            raise ContextTooLongError(len(ids_list), cfg.n_ctx)
        if not ids_list:
            raise UserError("the sentence has no words the model can read", "give at least one word", key="empty_sentence")
        need, limit = trace_bytes(cfg, len(ids_list)), trace_limit_bytes()
        if need > limit:  # before the forward pass allocates it
            gb, lim = (round(x, 1) if x >= 1 else float(f"{x:.2g}") for x in (need / 2**30, limit / 2**30))
            raise UserError(f"a trace of {len(ids_list)} tokens would take about {gb} GB of memory "
                            f"({cfg.n_layers} layers × {cfg.n_heads} heads × {len(ids_list)}² attention weights); "
                            f"the limit here is {lim} GB", "use a shorter text, or raise ATTENTION_MANIM_MAX_TRACE_GB",
                            key="trace_too_big", n_tokens=len(ids_list), gb=gb, limit=lim, layers=cfg.n_layers,
                            heads=cfg.n_heads)
        if max(ids_list) >= cfg.vocab_size:
            raise UserError(f"the tokenizer gave token id {max(ids_list)}, but the model has only {cfg.vocab_size} "
                            "embeddings", "the tokenizer.json does not belong to these weights",
                            key="tokenizer_mismatch", id=max(ids_list), vocab_size=cfg.vocab_size)
        ids = torch.tensor([ids_list], device=self.device)
        records: list[dict] = []
        logits = self.forward(ids, records)
        x_final = self.ln_final(records[-1]["residual_out"]) if records else self.embed(ids)

        def np_(t):
            """One CPU numpy array (no copy when the tensor already is a CPU float32 one: the forward
            pass made it fresh, nothing else holds it)."""
            t = t.detach()
            if t.is_floating_point():
                return t.to("cpu", torch.float32).numpy()
            return t.cpu().numpy()

        n = len(ids_list)
        lens = self._logit_lens(records, logits) if records else None
        weights = self.numpy_weights()
        layers = []
        for li, rec in enumerate(records):
            w = weights[li]
            q, k, v = np_(rec["q"][0]), np_(rec["k"][0]), np_(rec["v"][0])
            rotary = cfg.positions == "rotary"
            q0 = np_(rec["q_unrot"][0]) if rotary else q
            k0 = np_(rec["k_unrot"][0]) if rotary else k
            scores, pattern, z = np_(rec["scores"][0]), np_(rec["pattern"][0]), np_(rec["z"][0])
            delta = np_(rec["head_delta_e"][0])
            mask = np_(rec["mask"])
            heads = []
            for h in range(cfg.n_heads):
                g = cfg.kv_head(h)
                heads.append(HeadTrace(
                    layer=li, head=h, name=cfg.head_name(li, h),
                    q=q[h], k=k[g], v=v[g], scores=scores[h], mask=mask, pattern=pattern[h], z=z[h],
                    delta_e=delta[h],
                    W_Q=w["W_Q"][h], W_K=w["W_K"][g], W_V=w["W_V"][g], W_O=w["W_O"][h],
                    b_Q=w["b_Q"][h], b_K=w["b_K"][g], b_V=w["b_V"][g], role=cfg.role_of(li, h),
                    q_unrotated=q0[h], k_unrotated=k0[g], kv_head=g,
                ))
            layers.append(LayerTrace(
                index=li, heads=tuple(heads), resid_in=np_(rec["resid_in"][0]),
                attn_in=np_(rec["attn_in"][0]), delta_e=np_(rec["delta_e"][0]),
                resid_mid=np_(rec["resid_mid"][0]), mlp_out=np_(rec["mlp_out"][0]),
                residual_out=np_(rec["residual_out"][0]),
            ))
        info = self.info
        if isinstance(self.tokenizer, WordTokenizer):
            words, word_of_token, texts = (), (), ()
            dirs_np = np_(self.directions)
            directions = {name: dirs_np[i] for i, name in enumerate(cfg.directions)}
            vocab = tuple(cfg.vocab)
        else:
            words, word_of_token = self.tokenizer.words(ids_list)
            texts = tuple(self.tokenizer.texts[i] for i in ids_list)
            directions = self.word_directions()
            vocab = self.tokenizer.shown
        tok_emb = np_(self.W_E[ids[0]])
        pos_emb = np_(self.position_embeddings(n))
        return Trace(
            text=text, model=info, tokens=tuple(tokens), token_ids=tuple(ids_list),
            token_embeddings=tok_emb, position_embeddings=pos_emb,
            embeddings=np_(self.embed(ids)[0]), layers=tuple(layers), final=np_(x_final[0]),
            logits=np_(logits[0]), vocab=vocab, directions=directions,
            words=tuple(words), word_of_token=tuple(word_of_token), token_texts=texts, logit_lens=lens,
        )

    LENS_TOP = 10  # tokens kept per layer by the logit lens

    def _logit_lens(self, records: list[dict], logits: torch.Tensor) -> LogitLens:
        """The final norm then the unembedding of each layer's residual stream at the last position
        (one small matrix product: [n_layers, d_model] @ [d_model, vocab]); only the top tokens are kept."""
        resid = torch.stack([rec["residual_out"][0, -1] for rec in records])
        p = torch.softmax((self.ln_final(resid) @ self.unembed()).float(), dim=-1)
        top = p.topk(min(self.LENS_TOP, p.shape[-1]), dim=-1)
        answer = int(logits[0, -1].argmax())
        return LogitLens(ids=top.indices.cpu().numpy(), probs=top.values.cpu().numpy(),
                         answer_probs=p[:, answer].cpu().numpy())


@contextmanager
def override_attention(model: AttentionModel, overrides: Mapping[int, Callable]):
    """Within the block, layer l's heads attend with overrides[l] instead of the softmax (see
    `Block.attention_override`); every other layer, and every layer after the block, as before.

        with override_attention(model, {3: linear_fn}):
            logits = model(ids)
    """
    n = len(model.blocks)
    bad = [l for l in overrides if not (isinstance(l, int) and 0 <= l < n)]
    if bad:
        raise UserError(f"no layer {bad[0]}: the model has layers 0..{n - 1}", key="no_such_layer", layer=bad[0],
                        last=n - 1)
    before = {l: model.blocks[l].__dict__.get("attention_override") for l in overrides}
    try:
        for l, fn in overrides.items():
            model.blocks[l].attention_override = fn
        yield model
    finally:
        for l, old in before.items():
            if old is None:
                model.blocks[l].__dict__.pop("attention_override", None)
            else:
                model.blocks[l].attention_override = old


def random_model(cfg: ModelConfig, seed: int = 0, scale: float = 1.0, tokenizer=None) -> AttentionModel:
    """A seeded random model (for tests and as a stand-in before weights are trained)."""
    g = torch.Generator().manual_seed(seed)
    model = AttentionModel(cfg, tokenizer=tokenizer)
    with torch.no_grad():
        for name, p in model.named_parameters():
            leaf = name.rsplit(".", 1)[-1]
            if leaf in ("w", "b") or (leaf.startswith("b_") and not p.requires_grad):
                continue  # norm gains stay 1, biases stay 0 unless the model has them
            fan_in = p.shape[-2] if p.dim() >= 2 else p.shape[-1]
            p.copy_(torch.randn(p.shape, generator=g) * scale / math.sqrt(fan_in) * (3.0 if "W_E" in name or "W_pos" in name else 1.0))
        if cfg.directions:
            d = torch.randn(len(cfg.directions), cfg.d_model, generator=g)
            model.directions.copy_(d / d.norm(dim=-1, keepdim=True))
    return model
