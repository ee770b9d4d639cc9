"""Plan of the parameter-count chapter: the video's tally of how many numbers attention holds, from a
config (model/params.py), row by row, each row with the words that name it and the caption that
says it (no manim, no torch).

The config is the model in use (`setting.model`), or a built-in one by name (`gpt3`: the video's
own numbers). With grouped-query attention (SmolLM2: 9 query heads over 3 key/value heads) the
key and value-down rows say they are shared and the layer's count is smaller than heads × per head.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from attention_manim.model.params import CONFIGS, SizeConfig, Tally, size_config, tally

from ..setting import Setting


@dataclass(frozen=True)
class Row:
    """One line of the tally: `what` (the catalog key under params.row, with its params), the count,
    and the caption (params.scene key and params) that says it; `part` is the step it belongs to."""

    part: str  # w_q, w_k, full_value, value_down_up, per_head, per_layer, attention, embedding, mlp, unembedding, total
    what: str
    value: int
    caption: str
    what_params: dict = field(default_factory=dict)
    caption_params: dict = field(default_factory=dict)


@dataclass(frozen=True)
class ParamsPlan:
    tally: Tally
    rows: tuple[Row, ...]
    name_key: str | None  # params.model.<id> when the model has a name in the catalog, else None
    name: str  # the model's own name (for a folder)

    @property
    def config(self) -> SizeConfig:
        return self.tally.config

    @property
    def shared_kv(self) -> bool:
        return self.tally.shared_kv

    def row(self, part: str) -> Row:
        return next(r for r in self.rows if r.part == part)

    @property
    def bar(self) -> tuple[tuple[str, int], ...]:
        """The whole model's matrices as a bar: (part, count) in the model's order."""
        t = self.tally
        parts = (("embedding", t.embedding), ("attention", t.attention), ("mlp", t.mlp), ("unembedding", t.unembedding))
        return tuple((p, n) for p, n in parts if n)


NAMED = ("toy", "gpt3", "smollm2")


def tally_rows(t: Tally) -> tuple[Row, ...]:
    """Every row of the tally, in the video's order (shared by the scene and `render.py params`)."""
    c = t.config
    shared = t.shared_kv
    group = c.n_heads // c.kv_heads
    dims = dict(d_model=c.d_model, d_head=c.d_head)
    rows = [
        Row("w_q", "w_q", t.w_q, "w_q", {}, dict(n=t.w_q, **dims)),
        Row("w_k", "w_k", t.w_k, "w_k_shared" if shared else "w_k", {},
            dict(n=t.w_k, heads=c.n_heads, kv=c.kv_heads)),
        Row("full_value", "full_value", t.full_value, "full_value", {}, dict(n=t.full_value, **dims)),
        Row("value_down_up", "value_down_up", t.value_down + t.value_up,
            "value_down_up_shared" if shared else "value_down_up", {},
            dict(n=t.value_down + t.value_up, one=t.value_down, group=group, **dims)),
        Row("per_head", "per_head", t.per_head, "per_head", {}, dict(n=t.per_head)),
        Row("per_layer", "per_layer_shared" if shared else "per_layer", t.per_layer,
            "per_layer_shared" if shared else "per_layer", dict(heads=c.n_heads, kv=c.kv_heads),
            dict(n=t.per_layer, heads=c.n_heads, kv=c.kv_heads, per_head=t.per_head)),
        Row("attention", "attention", t.attention, "attention", dict(layers=c.n_layers, count=c.n_layers),
            dict(n=t.attention, layers=c.n_layers, count=c.n_layers)),
        Row("embedding", "embedding", t.embedding, "embedding", dict(vocab=c.vocab_size),
            dict(n=t.embedding, vocab=c.vocab_size)),
    ]
    if t.mlp:
        rows.append(Row("mlp", "mlp_swiglu" if c.mlp == "swiglu" else "mlp", t.mlp, "mlp",
                        dict(layers=c.n_layers, count=c.n_layers), dict(n=t.mlp)))
    else:
        rows.append(Row("mlp", "no_mlp", 0, "no_mlp"))
    if c.tied_embeddings:
        rows.append(Row("unembedding", "unembedding_tied", 0, "unembedding_tied"))
    else:
        rows.append(Row("unembedding", "unembedding", t.unembedding, "unembedding", dict(vocab=c.vocab_size),
                        dict(n=t.unembedding)))
    rows.append(Row("total", "total", t.total, "total", {}, dict(n=t.total)))
    return tuple(rows)


def model_name_key(name: str) -> str | None:
    return f"params.model.{name}" if name in NAMED else None


def plan_params(setting: Setting | None, config: str | None = None) -> ParamsPlan:
    """The tally of the model in use, or of the built-in config `config` (e.g. "gpt3")."""
    cfg = CONFIGS[config] if config else size_config(setting.model)
    t = tally(cfg)
    return ParamsPlan(tally=t, rows=tally_rows(t), name_key=model_name_key(cfg.name), name=cfg.name)
