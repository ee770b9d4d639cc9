"""The toy's own format: config.json (a ModelConfig, with its `vocab`) and model.safetensors whose
tensor names are our own parameter names."""

from __future__ import annotations

import json
from pathlib import Path

from ..config import ModelConfig
from ..errors import ModelFileError
from ..transformer import AttentionModel
from .common import check_finite

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "model.safetensors"


def is_toy_config(data: dict) -> bool:
    return "vocab" in data and "d_model" in data and "model_type" not in data


def load(path: Path) -> AttentionModel:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    cfg_path, w_path = path / CONFIG_FILE, path / WEIGHTS_FILE
    for f in (cfg_path, w_path):
        if not f.is_file():
            raise ModelFileError(f"model file missing: {f}", f"a model directory needs {CONFIG_FILE} and {WEIGHTS_FILE}",
                                 key="toy_file_missing", path=f)
    try:
        cfg = ModelConfig.load(cfg_path)
    except (ValueError, TypeError, json.JSONDecodeError) as e:
        raise ModelFileError(f"model config {cfg_path} is not valid: {e}",
                             "fix that value in config.json, or retrain with `python render.py train --out DIR`",
                             key="toy_config_invalid", path=cfg_path, problem=e) from None
    try:
        state = load_file(str(w_path))
    except (SafetensorError, OSError, ValueError) as e:
        raise ModelFileError(f"model weights {w_path} could not be read: {e}", "the file may be corrupt; retrain or restore it",
                             key="toy_weights_unreadable", path=w_path, detail=e) from None
    check_finite(state, w_path)
    model = AttentionModel(cfg)
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as e:
        first = " ".join(str(e).splitlines()[0:3])
        raise ModelFileError(f"model weights {w_path} do not match {cfg_path}: {first}", key="toy_weights_do_not_fit",
                             path=w_path, config=cfg_path, detail=first) from None
    model.eval()
    return model
