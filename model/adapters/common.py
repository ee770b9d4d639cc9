"""What every adapter shares: reading Hugging Face folders, building the model from a state dict
without copying it, the user's cache folder, atomic writes, and the example sentences of real
English models."""

from __future__ import annotations

from ..places import cache_root  # noqa: F401  (the adapters' cache folder: the one rule)

import json
import os
import tempfile
from pathlib import Path

import torch

from ..config import ModelConfig
from ..errors import ModelFileError
from ..tokenizer import SubwordTokenizer
from ..transformer import AttentionModel

SUPPORTED = "the toy's own format (config.json with a `vocab`), or a Hugging Face folder with model_type gpt2, llama or mistral"

# The toy's example ids, as sentences a real English model reads naturally (scenes default to these).
ENGLISH_EXAMPLES = {
    "fluffy_blue_creature": "A fluffy blue creature roamed the verdant forest",
    "tiny_red_fox": "The tiny red fox saw a huge green tower",
    "mole_animal": "The American shrew mole",
    "mole_chemistry": "One mole of carbon dioxide",
    "mole_medicine": "Take a biopsy of the mole",
    "tower": "The tower is in the city of",
    "eiffel_tower": "The Eiffel tower is in the city of",
    "miniature_eiffel_tower": "The miniature Eiffel tower is in the city of",
    "robot": "A robot must obey orders",
    "harry_wizard": "The wizard Harry cast a magic spell",
    "harry_royal": "Prince Harry met the Queen at the palace",
    "crashed_car": "They crashed the car",
    "murder_mystery": ("The butler had a knife. The maid saw blood in the kitchen. The cook was asleep in the "
                       "garden. Therefore the murderer was"),
    "pet_it": "I do not want to pet it",
    "pet_it_french": "Je ne veux pas le caresser",
    "long": ("The old wizard and the young prince walked through the dark forest to the ancient castle, where a "
             "fluffy white rabbit and a tiny red fox watched them from behind a huge green tree, and the brave "
             "knight told the happy queen that the Eiffel tower in Paris was made of steel."),
}


def write_atomic(path: Path, writer) -> None:
    """writer(tmp_path) writes the file; it appears at `path` whole or not at all."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    os.close(fd)
    try:
        writer(tmp)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def read_json(path: Path) -> dict:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ModelFileError(f"{path} is not valid JSON: {e}", key="json_invalid", path=path, detail=e) from None
    if not isinstance(data, dict):
        raise ModelFileError(f"{path} is not a JSON object", key="json_not_object", path=path)
    return data


def read_safetensors(folder: Path) -> dict[str, torch.Tensor]:
    """model.safetensors, or the shards model.safetensors.index.json lists; float32 on the CPU."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    single, index = folder / "model.safetensors", folder / "model.safetensors.index.json"
    if single.is_file():
        files = [single]
    elif index.is_file():
        shards = sorted(set(read_json(index).get("weight_map", {}).values()))
        files = [folder / s for s in shards]
        for f in files:
            if not f.is_file():
                raise ModelFileError(f"weights shard missing: {f}", f"{index.name} lists it", key="weights_shard_missing",
                                     path=f, index=index.name)
    else:
        bins = [p.name for p in folder.glob("*.bin")]
        if bins:
            raise ModelFileError(f"no model.safetensors in {folder} (found {', '.join(bins)})",
                                 "convert it with transformers' save_pretrained(safe_serialization=True)",
                                 key="weights_only_bin", folder=folder, found=", ".join(bins))
        raise ModelFileError(f"no model.safetensors in {folder}", key="weights_missing", folder=folder)
    state: dict[str, torch.Tensor] = {}
    for f in files:
        try:
            part = load_file(str(f))
        except (SafetensorError, OSError, ValueError, RuntimeError) as e:
            raise ModelFileError(f"model weights {f} could not be read: {e}", "the file may be corrupt or incomplete",
                                 key="weights_unreadable", path=f, detail=e) from None
        state.update(part)
    return {k: (v if v.dtype == torch.float32 else v.float()) for k, v in state.items()}


def read_tokenizer(folder: Path, name: str) -> SubwordTokenizer:
    from tokenizers import Tokenizer

    path = folder / "tokenizer.json"
    if not path.is_file():
        raise ModelFileError(f"no tokenizer in {folder}: tokenizer.json is missing",
                             "a real model's folder needs the tokenizer.json that transformers or the tokenizers "
                             "library writes (tokenizer.save(...) or save_pretrained)", key="tokenizer_missing", folder=folder)
    try:
        tk = Tokenizer.from_file(str(path))
    except Exception as e:  # the library raises plain Exceptions on a malformed file
        raise ModelFileError(f"{path} could not be read by the tokenizers library: {e}", key="tokenizer_unreadable",
                             path=path, detail=e) from None
    return SubwordTokenizer(tk, name)


def vocab_list(tokenizer: SubwordTokenizer, size: int) -> list[str]:
    """The vocabulary as shown, padded to the model's size (embedding tables are often rounded up)."""
    shown = list(tokenizer.shown[:size])
    return shown + [f"<unused {i}>" for i in range(len(shown), size)]


def need(state: dict, key: str, source: str) -> torch.Tensor:
    try:
        return state[key]
    except KeyError:
        raise ModelFileError(f"{source} has no tensor {key!r}",
                             "the weights do not match the architecture its config.json names", key="tensor_missing",
                             source=source, tensor=key) from None


def check_finite(state: dict, source) -> None:
    """Refuse weights holding NaN or ±∞ (a damaged file or cache): every number on screen would be
    `nan`, or quietly wrong. Names the first bad tensor."""
    for name, t in state.items():
        if t.is_floating_point() and not bool(torch.isfinite(t).all()):
            bad = int((~torch.isfinite(t)).sum())
            raise ModelFileError(f"the weights from {source} are damaged: {name} holds {bad:,} non-finite "
                                 "value(s) (NaN or ∞)", "restore or re-export the weights (a cache is rebuilt "
                                 "when you delete it)", key="weights_not_finite", source=source, tensor=name,
                                 count=bad)


def build_model(cfg: ModelConfig, state: dict[str, torch.Tensor], tokenizer, source: str,
                description: str = "", weights_id: str | None = None) -> AttentionModel:
    """An AttentionModel holding `state`'s tensors themselves (no copy). Shapes are checked first."""
    with torch.device("meta"):
        model = AttentionModel(cfg, tokenizer=tokenizer)
    expected = {k: tuple(v.shape) for k, v in model.state_dict().items()}
    state = dict(state)
    state.setdefault("directions", torch.zeros(len(cfg.directions), cfg.d_model))
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    if missing or extra:
        raise ModelFileError(f"the weights from {source} do not fit the model its config describes: "
                             f"missing {missing[:4]}, unexpected {extra[:4]}", key="weights_do_not_fit", source=source,
                             missing=missing[:4], unexpected=extra[:4])
    for k, shape in expected.items():
        if tuple(state[k].shape) != shape:
            raise ModelFileError(f"shape mismatch in {source}: {k} is {list(state[k].shape)}, the config says {list(shape)}",
                                 "config.json and the weights come from different models", key="shape_mismatch",
                                 source=source, tensor=k, shape=list(state[k].shape), expected=list(shape))
    check_finite(state, source)
    # the tensors themselves become the parameters (a transposed view stays a view: matrix products
    # read it as it is)
    model.load_state_dict(state, strict=True, assign=True)
    for p in model.parameters():
        p.requires_grad_(False)
    model.eval()
    model.description = description
    model.weights_id = weights_id
    return model


def folder_identity(folder: Path, names: list[str]) -> str:
    """A key that changes when the folder's files do (name, size, modification time)."""
    import hashlib

    h = hashlib.sha256()
    for n in names:
        p = folder / n
        if p.exists():
            st = p.stat()
            h.update(f"{p.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()[:20]
