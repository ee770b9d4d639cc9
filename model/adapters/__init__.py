"""One small adapter per architecture, each mapping a checkpoint onto our one transformer.

- toy:   our own format (config.json is a ModelConfig with its vocabulary; tensor names are ours)
- gpt2:  Hugging Face GPT-2 folders (model_type "gpt2")
- llama: Hugging Face LLaMA-style folders (model_type "llama" or "mistral"; SmolLM too)
- gguf:  GGUF files of LLaMA-architecture models; the packaged SmolLM2-135M-Instruct

Each returns an AttentionModel on the CPU whose weights follow the per-head convention
W_Q: [n_heads, d_model, d_head], W_K/W_V: [n_kv_heads, d_model, d_head], W_O: [n_heads, d_head, d_model].
"""

from __future__ import annotations

from pathlib import Path

from ..errors import ConfigError, ModelFileError
from .common import SUPPORTED, read_json

HF_TYPES = ("gpt2", "llama", "mistral")
HF_CONFIG_HINT = "compare it with the config.json Hugging Face writes for this model"


def load_path(path: Path):
    """The model in a folder (toy format or Hugging Face) or a .gguf file."""
    path = Path(path)
    if path.is_file() and path.suffix.lower() == ".gguf":
        from .gguf import load_gguf

        return load_gguf(path)
    if not path.is_dir():
        raise ModelFileError(f"{path} is neither a model folder nor a .gguf file", f"supported: {SUPPORTED}, or a .gguf file",
                             key="not_a_model_path", path=path)
    cfg_path = path / "config.json"
    if not cfg_path.is_file():
        raise ModelFileError(f"model file missing: {cfg_path}",
                             "a model directory needs config.json and model.safetensors (and tokenizer.json for a real model)",
                             key="model_config_missing", path=cfg_path)
    data = read_json(cfg_path)
    from .toy import is_toy_config

    if is_toy_config(data):
        from .toy import load

        return load(path)
    kind = data.get("model_type")
    if kind in ("gpt2", "llama", "mistral"):
        if kind == "gpt2":
            from .gpt2 import load
        else:
            from .llama import load
        try:
            return load(path, data)
        except KeyError as e:  # a missing value
            raise ModelFileError(f"{cfg_path} is not a valid {kind} config: missing value {e}", HF_CONFIG_HINT,
                                 key="hf_config_missing_value", path=cfg_path, kind=kind, value=e) from None
        except ConfigError as e:  # a value our model cannot be built from (in the catalogs' words)
            raise ModelFileError(f"{cfg_path} is not a valid {kind} config: {e}", HF_CONFIG_HINT,
                                 key="hf_config_invalid", path=cfg_path, kind=kind, problem=e) from None
        except (TypeError, ValueError, ZeroDivisionError) as e:  # a wrongly typed value (Python's words)
            detail = str(e).splitlines()[0]
            raise ModelFileError(f"{cfg_path} is not a valid {kind} config: {detail}", HF_CONFIG_HINT,
                                 key="hf_config_invalid", path=cfg_path, kind=kind, problem=detail) from None
    if kind:
        raise ModelFileError(f"{path}: model_type {kind!r} is not supported", f"supported: {SUPPORTED}",
                             key="model_type_unsupported", path=path, kind=kind)
    raise ModelFileError(f"{path}: a config.json with no model_type is not supported", f"supported: {SUPPORTED}",
                         key="model_type_missing", path=path)
