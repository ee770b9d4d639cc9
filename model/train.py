"""Train the toy world's heads: `python -m attention_manim.model.train [--seed N] [--steps N] [--out DIR]`.

What is hand-designed and what is learned:

* W_E, W_pos and the named directions come from `model/toy_world.py` (a feature dictionary seen
  through a fixed rotation, a sinusoidal position code). They are frozen.
* W_Q, W_K, W_V, W_O of the four heads start random and are trained by Adam on a generated corpus.
  For every token of every phrase the world's rules give each head a target attention pattern
  (which earlier tokens it should look at) and a target update ΔE (what it should write). The loss
  is the cross-entropy of the head's pattern against the target pattern plus the squared error of
  its ΔE against the target ΔE: both are supervised, per head. A small extra term pulls each query's
  mean score toward 0, so that a head attends by scoring its chosen keys high (query and key agree)
  rather than by pushing every other key far below zero.
* W_U is trained afterwards, everything else frozen, for next-token prediction on the same corpus,
  so that the logits mean "which word comes next" in this little world.

Seeded and deterministic: the same seed gives the same weights, bit for bit, on the same machine.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import torch

from . import toy_world as tw
from .config import ModelConfig
from .loading import ASSETS, save_model
from .transformer import AttentionModel

STEPS = 1500
CORPUS_SIZE = 3000
BATCH = 48
LR = 0.02
WEIGHT_DECAY = 1e-4
PATTERN_WEIGHT = 1.0
UPDATE_WEIGHT = 1.0
# Softmax ignores a shift of a whole row, so without this a head can attend by pushing every other
# key far below zero while the chosen key scores ~0. Pulling each row's mean score toward 0 makes the
# chosen keys score high, as the story told on screen says (query and key agree).
CENTER_WEIGHT = 0.02
UNEMBED_STEPS = 150
UNEMBED_TOKENS = 12000
THREADS = 1  # tiny matrices: one thread is fastest, and it stays fast when the machine is busy


def build_config(notes: str = "") -> ModelConfig:
    return ModelConfig(
        name="toy", vocab=list(tw.VOCAB), d_model=tw.D_MODEL, n_heads=4, d_head=16, n_layers=1,
        n_ctx=tw.N_CTX, causal=True, layernorm=False, d_mlp=0, bias=False,
        head_names=[list(tw.HEAD_NAMES)], head_roles={r: [0, h] for h, r in enumerate(tw.HEAD_ROLES)},
        examples=dict(tw.EXAMPLES), directions=list(tw.FEATURES), notes=notes,
    )


def _notes(seed: int, steps: int, n_corpus: int) -> str:
    rules = " ".join(f"Head {h} ({name}): {rule}." for h, (name, rule) in enumerate(zip(tw.HEAD_NAMES, tw.HEAD_RULES)))
    return (
        "The toy world (model/toy_world.py). Hand-designed: the token embeddings W_E (each word's named "
        "features, seen through a fixed random rotation, plus a small random identity part), the "
        f"sinusoidal position code W_pos (in {tw.N_POS} dimensions orthogonal to every named direction) and the "
        "named directions themselves. Learned by gradient descent (model/train.py, seed "
        f"{seed}, {steps} Adam steps on {n_corpus} generated phrases): W_Q, W_K, W_V, W_O "
        "of the four heads, supervised per token on both the attention pattern and the update ΔE that "
        f"the world's rules prescribe, with each query's mean score pulled toward 0 so that the keys a head "
        f"chooses score high rather than the others far below. {rules} {tw.IDENTITY_NOTE}. Then W_U, with everything else frozen, for next-token "
        "prediction on the same corpus. The phrases in toy_world.HELD_OUT (and every adjective-noun and "
        "sense-cue pair in them) never appear in training."
    )


class _Batch:
    """Phrases of similar length, padded at the end (harmless: attention is causal), with the rules'
    target patterns and target updates."""

    def __init__(self, seqs: list[list[str]]):
        n = max(len(s) for s in seqs)
        b = len(seqs)
        self.ids = torch.zeros(b, n, dtype=torch.long)
        self.qmask = torch.zeros(b, n)
        self.patterns = torch.zeros(b, 4, n, n, dtype=torch.float64)
        self.next_ids = torch.full((b, n), -100, dtype=torch.long)
        for i, s in enumerate(seqs):
            m = len(s)
            ids = [tw.WORD_INDEX[t] for t in s]
            self.ids[i, :m] = torch.tensor(ids)
            self.qmask[i, :m] = 1
            self.patterns[i, :, :m, :m] = torch.from_numpy(tw.target_patterns(s))
            self.next_ids[i, : m - 1] = torch.tensor(ids[1:])
        meanings = torch.from_numpy(tw.meaning_matrix())[self.ids]  # [b, n, N_MEANING]
        to_embedding = torch.from_numpy(tw.meaning_to_embedding(np.eye(tw.N_MEANING)))
        self.updates = ((self.patterns @ meanings[:, None]) @ torch.from_numpy(tw.value_maps())[None] @ to_embedding).float()
        self.patterns = self.patterns.float()


def _batches(seqs: list[list[str]], size: int) -> list[_Batch]:
    order = sorted(range(len(seqs)), key=lambda i: (len(seqs[i]), i))
    return [_Batch([seqs[i] for i in order[k:k + size]]) for k in range(0, len(order), size)]


def build_model(seed: int) -> AttentionModel:
    """The hand-designed parts set, the heads randomly initialized (seeded), W_U zero."""
    model = AttentionModel(build_config())
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        model.W_E.copy_(torch.from_numpy(tw.token_embeddings()).float())
        model.W_pos.copy_(torch.from_numpy(tw.position_embeddings(tw.N_CTX)).float())
        model.directions.copy_(torch.from_numpy(tw.directions()).float())
        for block in model.blocks:
            for p in (block.W_Q, block.W_K, block.W_V, block.W_O):
                p.copy_(torch.randn(p.shape, generator=g) * 0.1)
    for p in (model.W_E, model.W_pos, model.W_U):
        p.requires_grad_(False)
    return model


def head_loss(model: AttentionModel, batch: _Batch) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(total, pattern cross-entropy per head, ΔE squared error per head), averaged over tokens."""
    x = model.embed(batch.ids)
    rec: dict = {}
    model.blocks[0].attention(x, rec)
    logp = torch.log_softmax(rec["scores"].masked_fill(rec["mask"], float("-inf")), dim=-1)
    target = batch.patterns
    ce = -torch.where(target > 0, target * logp, torch.zeros_like(logp)).sum(-1)  # [b, h, q]
    se = ((rec["head_delta_e"] - batch.updates) ** 2).sum(-1) / tw.SCALE ** 2  # [b, h, q]
    w = batch.qmask[:, None, :]
    denom = w.sum()
    ce_h = (ce * w).sum((0, 2)) / denom
    se_h = (se * w).sum((0, 2)) / denom
    allowed = (~rec["mask"]).float()  # [q, k]
    row_mean = (rec["scores"] * allowed).sum(-1) / allowed.sum(-1)  # [b, h, q]
    center = ((row_mean ** 2) * w).sum() / denom
    total = PATTERN_WEIGHT * ce_h.sum() + UPDATE_WEIGHT * se_h.sum() + CENTER_WEIGHT * center
    return total, ce_h, se_h


def _train_unembed(model: AttentionModel, batches: list[_Batch], steps: int, g: torch.Generator, progress) -> None:
    with torch.no_grad():
        xs, ys = [], []
        for b in batches:
            resid = model.ln_final(model.blocks[0](model.embed(b.ids)))
            keep = b.next_ids >= 0
            xs.append(resid[keep])
            ys.append(b.next_ids[keep])
        X, Y = torch.cat(xs), torch.cat(ys)
        if len(X) > UNEMBED_TOKENS:
            pick = torch.randperm(len(X), generator=g)[:UNEMBED_TOKENS]
            X, Y = X[pick], Y[pick]
    W = torch.zeros_like(model.W_U, requires_grad=True)
    opt = torch.optim.Adam([W], lr=0.05)
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(X @ W, Y) + 1e-4 * (W ** 2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
        progress(loss.item())
    with torch.no_grad():
        model.W_U.copy_(W)


def check_train_args(steps: int, out: Path) -> None:
    """A number of steps that trains something, and an output folder that can be written."""
    from .errors import UserError

    if steps < 1:
        raise UserError(f"--steps must be at least 1, not {steps}", f"leave it out for the script's own ({STEPS})",
                        key="train_steps", steps=steps, default=STEPS)
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {str(out)!r} is a file, not a folder",
                        "give a folder: config.json and model.safetensors are written into it", key="train_out_is_file",
                        out=str(out))
    try:
        out.mkdir(parents=True, exist_ok=True)
        probe = out / ".write-test"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as e:
        raise UserError(f"cannot write to {str(out)!r}: {e.strerror or e}", "choose another folder with --out",
                        key="train_out_unwritable", out=str(out), reason=e.strerror or e) from None


def train(seed: int = 0, steps: int | None = None, out: str | Path | None = None, progress: bool = True,
          corpus_size: int | None = None) -> AttentionModel:
    """Train the toy world (seeded, deterministic) and save it to `out` (default assets/toy)."""
    from tqdm import tqdm

    steps = STEPS if steps is None else int(steps)
    n_corpus = CORPUS_SIZE if corpus_size is None else int(corpus_size)
    unembed_steps = min(UNEMBED_STEPS, max(steps, 1))
    out = ASSETS / "toy" if out is None else Path(out)
    check_train_args(steps, out)  # before a minute of training, not after

    saved = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled())
    torch.set_num_threads(THREADS)
    torch.use_deterministic_algorithms(True)
    try:
        t0 = time.perf_counter()
        torch.manual_seed(seed)
        g = torch.Generator().manual_seed(seed)
        seqs = tw.corpus(n_corpus, seed=seed)
        batches = _batches(seqs, BATCH)
        model = build_model(seed)
        params = [p for b in model.blocks for p in (b.W_Q, b.W_K, b.W_V, b.W_O)]
        opt = torch.optim.Adam(params, lr=LR)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s / max(steps, 1), 1.0))))
        bar = tqdm(total=steps + unembed_steps, desc="toy world", unit="step", disable=not progress,
                   bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} [{elapsed}<{remaining}] {postfix}")
        order: list[int] = []
        for step in range(steps):
            if not order:
                order = torch.randperm(len(batches), generator=g).tolist()
            loss, ce_h, se_h = head_loss(model, batches[order.pop()])
            loss = loss + WEIGHT_DECAY * sum((p ** 2).sum() for p in params)
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            bar.update(1)
            if step % 50 == 0 or step == steps - 1:
                bar.set_postfix_str("heads: pattern " + " ".join(f"{v:.2f}" for v in ce_h.tolist())
                                    + " | ΔE " + " ".join(f"{v:.2f}" for v in se_h.tolist()))

        def tick(loss):
            bar.update(1)
            bar.set_postfix_str(f"next-token loss {loss:.2f}")

        _train_unembed(model, batches, unembed_steps, g, tick)
        bar.close()
        seconds = time.perf_counter() - t0
        model.cfg.notes = _notes(seed, steps, n_corpus)
        model.eval()
        save_model(model, out)
        if progress:
            print(f"wrote {out} in {seconds:.1f} s")
        return model
    finally:
        torch.set_num_threads(saved[0])
        torch.use_deterministic_algorithms(saved[1])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m attention_manim.model.train", description="Train the toy world's attention heads.")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--steps", type=int, default=None, help=f"head-training steps (default {STEPS})")
    ap.add_argument("--out", type=Path, default=None, help="output directory (default assets/toy)")
    ap.add_argument("--quiet", action="store_true", help="no progress bar")
    args = ap.parse_args(argv)
    from .errors import UserError

    try:
        train(seed=args.seed, steps=args.steps, out=args.out, progress=not args.quiet)
    except UserError as e:
        ap.exit(2, f"error: {e.message}\n" + (f"hint: {e.hint}\n" if e.hint else ""))


if __name__ == "__main__":
    main()
