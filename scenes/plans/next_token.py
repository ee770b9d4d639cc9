"""Plans of `next_token` and `going_deeper` (no manim).

`next_token`: the last vector's logits become probabilities (softmax of `trace.logits[-1]`), the
top few are drawn as bars and the rest summed; one token is picked (greedy by default; sampled
with `options["temperature"]` and `options["seed"]`), appended to the text, and the longer text is
traced again: each step is a real forward pass. The extra traces are made when the lesson's
setting is made (`with_next_traces`), so the plan stays a plain function of the setting.

`going_deeper`: the last token's vector through every layer: the size (norm) of what each
attention block and each MLP adds to it, and the logit lens after each layer (the model's current
best guess: final norm then unembedding of that layer's residual stream, computed by the model in
`Trace.logit_lens`). The answer emerges at the first layer where the final answer is top-1:
measured here, never chosen.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from attention_manim.model.trace import SPACE_MARK, Trace

from ..setting import Setting

STEPS = 4  # tokens appended, one forward pass each
TOP = 5  # bars drawn; the rest of the vocabulary is summed into one line
NEXT_TRACES = "next_token_traces"  # Setting.options key: (trace per step, picked id per step)


def probabilities(logits: np.ndarray, temperature: float = 1.0) -> np.ndarray:
    """softmax(logits / temperature), in float64."""
    z = np.asarray(logits, dtype=np.float64) / float(temperature)
    p = np.exp(z - z.max())
    return p / p.sum()


def pick(logits: np.ndarray, temperature: float | None, rng: np.random.Generator | None) -> int:
    """Greedy (temperature None or 0): the most likely id; else one id drawn from softmax(logits/T)."""
    if not temperature:
        return int(np.argmax(np.asarray(logits)))
    p = probabilities(logits, temperature)
    return int(rng.choice(len(p), p=p))


def appended_text(trace: Trace, token_id: int) -> str:
    """The trace's text with token `token_id` appended as plain text: a real model's token is shown
    with "␣" for its leading space ("␣Paris" -> " Paris"); the toy's tokens are words (joined by a space)."""
    shown = trace.vocab[token_id]
    if not trace.model.real:
        return f"{trace.text} {shown}"
    return trace.text + (" " + shown[len(SPACE_MARK):] if shown.startswith(SPACE_MARK) else shown)


def with_next_traces(setting: Setting, tracer: Callable[[str], Trace], steps: int = STEPS) -> Setting:
    """The setting with one trace per step (the text, then the text with each picked token
    appended), all in `traces` (so their tokens count as the sentence's), and the picks in options."""
    temperature = setting.options.get("temperature")
    rng = np.random.default_rng(int(setting.options.get("seed", 0))) if temperature else None
    traces, picked = [setting.trace], []
    for _ in range(steps):
        tr = traces[-1]
        tid = pick(tr.logits[-1], temperature, rng)
        picked.append(tid)
        if len(picked) == steps or tr.n_tokens >= tr.model.n_ctx:
            break
        traces.append(tracer(appended_text(tr, tid)))
    return replace(setting, traces=tuple(traces),
                   options={**setting.options, NEXT_TRACES: (tuple(traces), tuple(picked))})


@dataclass(frozen=True)
class NextStep:
    tokens: tuple[str, ...]  # the text so far, as tokens
    top_ids: tuple[int, ...]  # the TOP most likely next tokens
    top_tokens: tuple[str, ...]
    top_probs: tuple[float, ...]  # their real probabilities
    rest: float  # the probability of every other token, summed
    picked_id: int
    picked_token: str
    picked_prob: float
    picked_rank: int  # 0: the most likely (greedy); the bar it is, or -1 when a sample fell outside the bars
    retokenized: bool  # the longer text reads back as these token ids plus the picked one (True at the last step)
    # the last position's final vector (the last residual, after the final norm): what the guess is made from
    last_vector: np.ndarray | None = field(default=None, compare=False)


@dataclass(frozen=True)
class NextTokenPlan:
    steps: tuple[NextStep, ...]
    vocab_size: int
    temperature: float | None  # None: greedy
    seed: int | None
    real: bool
    model_name: str = ""  # the model's id (its name on screen comes from the catalog)

    @property
    def final_tokens(self) -> tuple[str, ...]:
        return self.steps[-1].tokens + (self.steps[-1].picked_token,)


def plan_next_token(setting: Setting, top: int = TOP) -> NextTokenPlan:
    if NEXT_TRACES not in setting.options:
        raise ValueError("the next-token chapter needs its traces: make the setting with with_next_traces "
                         "(NextTokenLesson does)")
    traces, picked = setting.options[NEXT_TRACES]
    temperature = setting.options.get("temperature") or None
    steps = []
    for s, (tr, tid) in enumerate(zip(traces, picked)):
        p = probabilities(tr.logits[-1])
        order = np.argsort(-p, kind="stable")[:top]
        nxt = traces[s + 1] if s + 1 < len(traces) else None
        same = nxt is None or tuple(nxt.token_ids) == tuple(tr.token_ids) + (tid,)
        ids = tuple(int(k) for k in order)
        steps.append(NextStep(tokens=tr.tokens, top_ids=ids, top_tokens=tuple(tr.vocab[k] for k in ids),
                              top_probs=tuple(float(p[k]) for k in ids), rest=float(1.0 - p[list(ids)].sum()),
                              picked_id=tid, picked_token=tr.vocab[tid], picked_prob=float(p[tid]),
                              picked_rank=ids.index(tid) if tid in ids else -1, retokenized=same,
                              last_vector=np.asarray(tr.final[-1], dtype=float)))
    return NextTokenPlan(steps=tuple(steps), vocab_size=len(traces[0].vocab) or traces[0].model.vocab_size,
                         temperature=temperature,
                         seed=int(setting.options.get("seed", 0)) if temperature else None,
                         real=traces[0].model.real, model_name=setting.model.name)


# --- going deeper --------------------------------------------------------------------------------

@dataclass(frozen=True)
class GoingDeeperPlan:
    tokens: tuple[str, ...]
    n_layers: int
    has_mlp: bool
    deep: bool  # the model has more than one layer and an MLP: the story can be told on it
    attn_norms: tuple[float, ...]  # per layer: |attention's ΔE| at the last token
    mlp_norms: tuple[float, ...]  # per layer: |MLP output| at the last token (0 without an MLP)
    guesses: tuple[str, ...]  # per layer: the logit lens's top-1 token after that layer
    guess_probs: tuple[float, ...]
    answer: str  # the model's own final top-1 token
    answer_probs: tuple[float, ...]  # per layer: the lens's probability of that answer
    emergence: int | None  # the first layer after which the answer is top-1 (measured)
    model_name: str


def plan_going_deeper(setting: Setting) -> GoingDeeperPlan:
    tr = setting.trace
    m = tr.model
    lens = tr.logit_lens
    if lens is None:
        raise ValueError("the trace has no logit lens (a model/ that predates Trace.logit_lens)")
    answer_id = int(np.argmax(tr.logits[-1]))
    return GoingDeeperPlan(
        tokens=tr.tokens, n_layers=len(tr.layers), has_mlp=bool(m.mlp),
        deep=bool(m.mlp) and len(tr.layers) > 1,
        attn_norms=tuple(float(np.linalg.norm(lt.delta_e[-1])) for lt in tr.layers),
        mlp_norms=tuple(float(np.linalg.norm(lt.mlp_out[-1])) for lt in tr.layers),
        guesses=tuple(tr.vocab[int(i)] for i in lens.ids[:, 0]),
        guess_probs=tuple(float(p) for p in lens.probs[:, 0]),
        answer=tr.vocab[answer_id], answer_probs=tuple(float(p) for p in lens.answer_probs),
        emergence=lens.first_top(answer_id), model_name=m.name)
