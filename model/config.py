"""Model configuration: a plain dataclass stored as config.json beside the weights."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Annotated, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import ConfigError


NORMS = ("layernorm", "rmsnorm", "none")
POSITIONS = ("learned", "rotary")
MLPS = ("gelu", "gelu_tanh", "swiglu")
ARCH_FIELDS = ("norm", "norm_eps", "positions", "rope_theta", "n_kv_heads", "mlp", "mlp_bias", "tied_embeddings",
               "family", "source")


# The schema every config is checked against (pydantic, strict: "64" is not a number, 1 is not true),
# each field's type and range; the dataclass below stays the plain object the model code uses.
Positive = Annotated[int, Field(ge=1)]
MAX_LAYERS, MAX_HEADS = 1024, 1024  # far beyond any model we show; a config past them is a typo
Count = Annotated[int, Field(ge=0)]
HeadRef = Annotated[list[Annotated[int, Field(ge=0)]], Field(min_length=2, max_length=2)]


class ConfigSchema(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")

    name: str
    vocab: list[str]
    d_model: Positive = 64
    n_heads: Annotated[int, Field(ge=1, le=MAX_HEADS)] = 4
    d_head: Positive = 16
    n_layers: Annotated[int, Field(ge=1, le=MAX_LAYERS)] = 1
    n_ctx: Positive = 64
    causal: bool = True
    layernorm: bool = False
    d_mlp: Count = 0
    bias: bool = False
    head_names: list[list[str]] = []
    head_roles: dict[str, HeadRef] = {}
    examples: dict[str, str] = {}
    directions: list[str] = []
    notes: str = ""
    norm: Literal[("", *NORMS)] = ""
    norm_eps: Annotated[float, Field(gt=0, lt=1)] = 1e-5
    positions: Literal[POSITIONS] = "learned"
    rope_theta: Annotated[float, Field(gt=0)] = 10000.0
    n_kv_heads: Count = 0
    mlp: Literal[MLPS] = "gelu"
    mlp_bias: bool | None = None
    tied_embeddings: bool = False
    family: str = "toy"
    source: str = ""


def _field_name(loc) -> str:
    out = str(loc[0])
    for part in loc[1:]:
        out += f"[{part}]" if isinstance(part, int) else f".{part}"
    return out


def _choices(field_name: str) -> list[str]:
    """The values a Literal field allows, as quoted in the message ('learned', 'rotary')."""
    return [repr(v) for v in get_args(ConfigSchema.model_fields[field_name].annotation)]


def check_types(values: dict) -> None:
    """Check a config's values against ConfigSchema: the first bad field is a ConfigError (a
    ValueError) naming it ("'d_model' must be a whole number, not 'abc'"), not a TypeError deep
    inside torch."""
    try:
        ConfigSchema.model_validate(values)
    except ValidationError as e:
        err = e.errors(include_url=False)[0]
        raise _schema_error(_field_name(err["loc"]), err) from None


def _schema_error(name: str, err: dict) -> ConfigError:
    """The catalogued words for one schema violation (every fact a parameter)."""
    kind, ctx, got = err["type"], err.get("ctx", {}), err.get("input")
    if kind == "int_type":
        return ConfigError(f"{name!r} must be a whole number, not {got!r}", key="config_not_whole", field=name, got=got)
    if kind == "float_type":
        return ConfigError(f"{name!r} must be a number, not {got!r}", key="config_not_number", field=name, got=got)
    if kind == "bool_type":
        return ConfigError(f"{name!r} must be true or false, not {got!r}", key="config_not_bool", field=name, got=got)
    if kind == "string_type":
        return ConfigError(f"{name!r} must be a string, not {got!r}", key="config_not_string", field=name, got=got)
    if kind == "list_type":
        return ConfigError(f"{name!r} must be a list, not {got!r}", key="config_not_list", field=name, got=got)
    if kind == "dict_type":
        return ConfigError(f"{name!r} must be an object, not {got!r}", key="config_not_object", field=name, got=got)
    if kind == "greater_than_equal":
        return ConfigError(f"{name!r} must be at least {ctx['ge']}, not {got!r}", key="config_too_small",
                           field=name, bound=ctx["ge"], got=got)
    if kind == "less_than_equal":
        return ConfigError(f"{name!r} must be at most {ctx['le']}, not {got!r}", key="config_too_large",
                           field=name, bound=ctx["le"], got=got)
    if kind == "greater_than":
        return ConfigError(f"{name!r} must be more than {ctx['gt']}, not {got!r}", key="config_not_above",
                           field=name, bound=ctx["gt"], got=got)
    if kind == "less_than":
        return ConfigError(f"{name!r} must be less than {ctx['lt']}, not {got!r}", key="config_not_below",
                           field=name, bound=ctx["lt"], got=got)
    if kind == "literal_error":
        choices = _choices(str(err["loc"][0]))
        rest, last = ", ".join(choices[:-1]), choices[-1]
        return ConfigError(f"{name!r} must be one of {rest} or {last}, not {got!r}", key="config_not_a_choice",
                           field=name, rest=rest, last=last, got=got)
    if kind in ("too_short", "too_long") and name.startswith("head_roles"):
        return ConfigError(f"{name!r} must be a [layer, head] pair, not {got!r}", key="config_not_head_pair",
                           field=name, got=got)
    if kind == "extra_forbidden":
        return ConfigError(f"unknown config key {name!r}", key="config_unknown_key", field=name)
    if kind == "missing":
        return ConfigError(f"the config has no {name!r}", key="config_missing_key", field=name)
    # a check the schema gains later: pydantic's own (English) words, inside ours
    return ConfigError(f"{name!r} must be {err['msg']}, not {got!r}", key="config_other", field=name,
                       detail=err["msg"], got=got)


def implied_numbers(cfg) -> int:
    """How many float32 numbers a model of this config holds (weights and position tables): known
    before anything is allocated."""
    d, kv = cfg.d_model, cfg.n_kv_heads or cfg.n_heads
    attn = d * cfg.n_heads * cfg.d_head * 2 + d * kv * cfg.d_head * 2  # Q, O; K, V
    mlp = d * cfg.d_mlp * (3 if cfg.mlp == "swiglu" else 2) if cfg.d_mlp else 0
    per_layer = attn + mlp + 4 * d
    embed = len(cfg.vocab) * d * (1 if cfg.tied_embeddings else 2)
    positions = cfg.n_ctx * (d if cfg.positions == "learned" else cfg.d_head)
    return embed + positions + cfg.n_layers * per_layer


def physical_memory_bytes() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return 32 * 2**30


TRACE_BYTES_PER_CELL = 12  # scores, weights, mask and the forward's copies: SmolLM2 at 1,000 tokens peaks at 4.6 GB


def trace_bytes(cfg, n_tokens: int) -> int:
    """About the most memory one trace of `n_tokens` takes: every head's n × n scores, mask and
    weights (and the forward pass's own copies), plus the per-token vectors."""
    cells = cfg.n_layers * cfg.n_heads * n_tokens * n_tokens
    per_token = cfg.n_layers * (cfg.n_heads * cfg.d_head * 6 + cfg.d_model * (4 + cfg.n_heads)) * 4
    return cells * TRACE_BYTES_PER_CELL + n_tokens * per_token


def trace_limit_bytes() -> int:
    """The most one trace may take: $ATTENTION_MANIM_MAX_TRACE_GB, else half this machine's memory."""
    env = os.environ.get("ATTENTION_MANIM_MAX_TRACE_GB")
    if env:
        try:
            return int(float(env) * 2**30)
        except ValueError:
            pass
    return physical_memory_bytes() // 2


def memory_limit_bytes() -> int:
    """The most a model's weights may take: $ATTENTION_MANIM_MAX_MODEL_GB, else 3/4 of this machine's
    memory (the rest is for the trace, manim and the system)."""
    env = os.environ.get("ATTENTION_MANIM_MAX_MODEL_GB")
    if env:
        try:
            return int(float(env) * 2**30)
        except ValueError:
            pass
    return int(physical_memory_bytes() * 0.75)


def check_size(cfg) -> None:
    numbers = implied_numbers(cfg)
    limit = memory_limit_bytes()
    if numbers * 4 > limit:
        raise ConfigError(f"the config describes {numbers:,} weights, {numbers * 4 / 2**30:,.1f} GB as float32, "
                          f"more than the {limit / 2**30:,.1f} GB allowed here (ATTENTION_MANIM_MAX_MODEL_GB)",
                          key="config_too_big", weights=numbers, gb=numbers * 4 / 2**30, limit=limit / 2**30)


@dataclass
class ModelConfig:
    name: str
    vocab: list[str]
    d_model: int = 64
    n_heads: int = 4
    d_head: int = 16
    n_layers: int = 1
    n_ctx: int = 64
    causal: bool = True
    layernorm: bool = False  # a LayerNorm before attention, before the MLP and at the end
    d_mlp: int = 0  # 0 = attention-only blocks
    bias: bool = False  # biases on Q, K, V, O (and the MLP)
    head_names: list[list[str]] = field(default_factory=list)  # [layer][head] -> role, in words (JSON, inspect)
    # language-neutral role ids -> [layer, head]: which head plays which part of the story
    # ("adjective_noun"); scenes pick their default head by role and name it from the catalog
    head_roles: dict[str, list[int]] = field(default_factory=dict)
    # example id -> sentence: the sentences this model tells its stories with (scenes' defaults)
    examples: dict[str, str] = field(default_factory=dict)
    directions: list[str] = field(default_factory=list)  # names of the rows of the directions buffer
    notes: str = ""  # free text: how the weights were made
    # --- the architecture's choices (defaults: the toy's GPT-style block) ---
    norm: str = ""  # "layernorm" | "rmsnorm" | "none"; "" = LayerNorm when `layernorm` is set, else none
    norm_eps: float = 1e-5
    positions: str = "learned"  # "learned" (a W_pos row added to each embedding) | "rotary" (q, k rotated)
    rope_theta: float = 10000.0  # rotary base θ
    n_kv_heads: int = 0  # key/value heads (grouped-query attention); 0 = one per query head
    mlp: str = "gelu"  # "gelu" (exact, erf) | "gelu_tanh" (GPT-2) | "swiglu" (LLaMA); only when d_mlp > 0
    mlp_bias: bool | None = None  # None = same as `bias`
    tied_embeddings: bool = False  # the unembedding is W_E transposed (no W_U of its own)
    family: str = "toy"  # which adapter made it: toy, gpt2, llama
    source: str = ""  # where the weights came from (a folder, a GGUF file)

    def __post_init__(self):
        check_types({f.name: getattr(self, f.name) for f in fields(self)})
        if not self.norm:
            self.norm = "layernorm" if self.layernorm else "none"
        self.layernorm = self.norm == "layernorm"  # norm, positions and mlp: one of theirs (the schema)
        if not self.n_kv_heads:
            self.n_kv_heads = self.n_heads
        if self.n_heads % self.n_kv_heads:
            raise ConfigError(f"{self.n_heads} query heads cannot share {self.n_kv_heads} key/value heads evenly",
                              key="config_kv_heads", heads=self.n_heads, kv_heads=self.n_kv_heads)
        if self.positions == "rotary" and self.d_head % 2:
            raise ConfigError(f"rotary positions need an even d_head, not {self.d_head}", key="config_odd_rotary",
                              d_head=self.d_head)
        if self.mlp_bias is None:
            self.mlp_bias = self.bias
        check_size(self)  # before anything is allocated

    def kv_head(self, head: int) -> int:
        """The key/value head that query head `head` reads (itself without grouped-query attention)."""
        return head // (self.n_heads // self.n_kv_heads)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def head_name(self, layer: int, head: int) -> str:
        try:
            name = self.head_names[layer][head]
        except IndexError:
            name = ""
        return name or f"L{layer}H{head}"

    def role_of(self, layer: int, head: int) -> str:
        """The role id of a head ("" when the model names none)."""
        for role, (l, h) in self.head_roles.items():
            if (l, h) == (layer, head):
                return role
        return ""

    def to_json(self) -> str:
        data = asdict(self)
        # the architecture fields added for real models are written only where they differ from what
        # the older fields already imply, so the toy's config.json keeps its shape
        implied = {"norm": "layernorm" if self.layernorm else "none", "n_kv_heads": self.n_heads,
                   "mlp_bias": self.bias}
        defaults = {f.name: f.default for f in fields(self)}
        for key in ARCH_FIELDS:
            if data[key] == implied.get(key, defaults[key]):
                del data[key]
        return json.dumps(data, indent=1, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ConfigError(f"unknown config keys: {sorted(unknown)}", key="config_unknown_keys",
                              keys=sorted(unknown))
        return cls(**data)

    @classmethod
    def load(cls, path: Path) -> "ModelConfig":
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
