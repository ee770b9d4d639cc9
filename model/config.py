"""Model configuration: a plain dataclass stored as config.json beside the weights."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path


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
        return json.dumps(asdict(self), indent=1, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown config keys: {sorted(unknown)}")
        return cls(**data)

    @classmethod
    def load(cls, path: Path) -> "ModelConfig":
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
