"""Loading and saving models: a directory with config.json and model.safetensors."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import torch

from .config import ModelConfig
from .errors import ModelFileError, UserError
from .transformer import AttentionModel

ASSETS = Path(__file__).resolve().parent.parent / "assets"
BUILTIN = {"toy": ASSETS / "toy"}
CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"


def resolve_device(device: str = "auto") -> torch.device:
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"--device {device} was asked for but torch sees no GPU", "use --device cpu or auto")
    try:
        return torch.device(device)
    except RuntimeError as e:
        raise UserError(f"unknown device {device!r}", "use auto, cpu or cuda") from e


def model_dir(name_or_path: str | os.PathLike) -> Path:
    if str(name_or_path) in BUILTIN:
        return BUILTIN[str(name_or_path)]
    path = Path(name_or_path)
    if not path.exists():
        raise ModelFileError(
            f"no model named {str(name_or_path)!r}: it is neither a built-in ({', '.join(BUILTIN)}) nor an existing directory",
            "use --model toy, or a directory holding config.json and model.safetensors",
        )
    return path


def load_model(name_or_path: str | os.PathLike = "toy", device: str = "auto") -> AttentionModel:
    """Load a model by built-in name ("toy") or from a directory; "auto" picks CUDA when present."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    path = model_dir(name_or_path)
    cfg_path, w_path = path / CONFIG_FILE, path / WEIGHTS_FILE
    for f in (cfg_path, w_path):
        if not f.is_file():
            raise ModelFileError(f"model file missing: {f}", f"a model directory needs {CONFIG_FILE} and {WEIGHTS_FILE}")
    try:
        cfg = ModelConfig.load(cfg_path)
    except (ValueError, TypeError, json.JSONDecodeError) as e:
        raise ModelFileError(f"model config {cfg_path} is not valid: {e}") from None
    try:
        state = load_file(str(w_path))
    except (SafetensorError, OSError, ValueError) as e:
        raise ModelFileError(f"model weights {w_path} could not be read: {e}", "the file may be corrupt; retrain or restore it") from None
    model = AttentionModel(cfg)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as e:
        first = str(e).splitlines()[0:3]
        raise ModelFileError(f"model weights {w_path} do not match {cfg_path}: {' '.join(first)}") from None
    model.eval()
    return model.to(resolve_device(device))


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
