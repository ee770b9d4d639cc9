"""What a change to attention does to the model's next-token prediction.

The model runs twice on the same tokens: as it is, and with some layers' attention replaced
(`transformer.override_attention`: linear attention, a sliding window...). At the last position:
is the most likely next token still the same, and how far apart are the two distributions
(KL(original ‖ changed), in nats)?"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NextTokenEffect:
    top1: int  # the model's own most likely next token (id)
    top1_after: int  # the most likely next token with the change
    token: str  # top1 as shown
    token_after: str
    p_top1: float  # top1's probability, as the model is
    p_top1_after: float  # the same token's probability with the change
    kl: float  # KL(original ‖ changed) of the last position's next-token distribution, in nats

    @property
    def kept(self) -> bool:
        """The most likely next token is still the same."""
        return self.top1 == self.top1_after


def _shown(model, token_id: int) -> str:
    tok = model.tokenizer
    shown = getattr(tok, "shown", None)
    if shown is not None and token_id < len(shown):
        return shown[token_id]
    vocab = getattr(model.cfg, "vocab", None)
    return vocab[token_id] if vocab and token_id < len(vocab) else str(token_id)


def encode(model, text: str) -> list[int]:
    return list(model.tokenizer.encode(text)[1])


def next_token_logprobs(model, ids, overrides: Mapping[int, Callable] | None = None) -> np.ndarray:
    """log p(next token) at the last position [vocab] (float64), with `overrides` (layer -> attention
    function, see transformer.Block.attention_override) in place during the forward pass."""
    import torch

    from .transformer import override_attention

    ids = torch.tensor([list(ids)], device=model.device)
    with torch.no_grad(), override_attention(model, dict(overrides or {})):
        # model.forward, unembedding the last position only (the rest is most of the time for 49k tokens)
        x = model.embed(ids)
        rot = model.rotary(ids.shape[-1])
        for block in model.blocks:
            x = block(x, None, rot)
        logits = model.ln_final(x[0, -1]) @ model.unembed()
    return torch.log_softmax(logits.double(), dim=-1).cpu().numpy()


def compare_logprobs(model, before: np.ndarray, after: np.ndarray) -> NextTokenEffect:
    p = np.exp(before)
    kl = float(np.sum(p * (before - after)))
    t0, t1 = int(np.argmax(before)), int(np.argmax(after))
    return NextTokenEffect(top1=t0, top1_after=t1, token=_shown(model, t0), token_after=_shown(model, t1),
                           p_top1=float(p[t0]), p_top1_after=float(np.exp(after[t0])), kl=max(kl, 0.0))


def next_token_effect(model, ids, overrides: Mapping[int, Callable],
                      before: np.ndarray | None = None) -> NextTokenEffect:
    """The effect of `overrides` on the next-token prediction after `ids` (`before`: the unchanged
    model's log-probabilities, when already computed)."""
    if before is None:
        before = next_token_logprobs(model, ids)
    return compare_logprobs(model, before, next_token_logprobs(model, ids, overrides))
