"""Glyph outlines on disk as data, never code: a mobject tree written as JSON plus raw arrays.

The glyph cache (text.py) used to pickle its outlines; a pickle placed in a shared or writable cache
folder runs its code when loaded. Here a tree of mobjects becomes plain values: mobjects of a few
known classes (their attributes), numpy arrays (stored as raw little-endian float64 / int64 bytes),
colours, the two style enums, strings, numbers, lists, dicts and references to an object met
before (a glyph sits both in the text and in its named group). Loading builds only those classes;
anything else in a file makes it unreadable, and the caller builds the text afresh.
"""

from __future__ import annotations

import json
import struct
import zlib

import numpy as np

MAGIC = b"AMGLYPH1"


def _classes() -> dict:
    from manim import VGroup, VMobject
    from manim.mobject.svg.svg_mobject import VMobjectFromSVGPath

    return {c.__name__: c for c in (VMobject, VGroup, VMobjectFromSVGPath)}


def _enums() -> dict:
    from manim.constants import CapStyleType, LineJointType

    return {c.__name__: c for c in (LineJointType, CapStyleType)}


class UnsupportedData(ValueError):
    """Something in the tree this store does not write (the text is then not cached)."""


def dumps(tree) -> bytes:
    from manim import ManimColor, Mobject

    classes, enums = _classes(), _enums()
    arrays: list[np.ndarray] = []
    seen: dict[int, int] = {}

    def enc(v):
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return {"f": float(v)} if isinstance(v, float) else v
        if isinstance(v, np.ndarray):
            if v.dtype.kind not in "fiub":
                raise UnsupportedData(f"array of {v.dtype}")
            arrays.append(np.ascontiguousarray(v))
            return {"a": len(arrays) - 1}
        if isinstance(v, ManimColor):
            return {"c": [float(x) for x in v.to_rgba()]}
        if type(v).__name__ in enums and isinstance(v, enums[type(v).__name__]):
            return {"e": type(v).__name__, "v": v.name}
        if isinstance(v, Mobject):
            if id(v) in seen:
                return {"r": seen[id(v)]}
            name = type(v).__name__
            if classes.get(name) is not type(v):
                raise UnsupportedData(f"mobject class {name}")
            seen[id(v)] = len(seen)
            return {"m": name, "i": seen[id(v)], "d": {k: enc(x) for k, x in v.__dict__.items()}}
        if isinstance(v, list):
            return [enc(x) for x in v]
        if isinstance(v, tuple):
            return {"t": [enc(x) for x in v]}
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return {"o": {k: enc(x) for k, x in v.items()}}
        raise UnsupportedData(type(v).__name__)

    meta = json.dumps({"tree": enc(tree), "arrays": [[a.dtype.str, list(a.shape)] for a in arrays]}).encode()
    body = b"".join(a.tobytes() for a in arrays)
    return MAGIC + zlib.compress(struct.pack("<Q", len(meta)) + meta + body, 1)


def loads(data: bytes):
    """The tree written by `dumps`; ValueError when the bytes are anything else."""
    from manim import ManimColor

    if not data.startswith(MAGIC):
        raise ValueError("not a glyph entry")
    raw = zlib.decompress(data[len(MAGIC):])
    (n,) = struct.unpack("<Q", raw[:8])
    meta = json.loads(raw[8:8 + n])
    classes, enums = _classes(), _enums()
    arrays, offset = [], 8 + n
    for dtype, shape in meta["arrays"]:
        dt = np.dtype(dtype)
        if dt.kind not in "fiub" or dt.hasobject:
            raise ValueError("bad array type")
        count = int(np.prod(shape)) if shape else 1
        size = count * dt.itemsize
        if offset + size > len(raw):
            raise ValueError("truncated")
        arrays.append(np.frombuffer(raw, dtype=dt, count=count, offset=offset).reshape(shape).copy())
        offset += size
    made: dict[int, object] = {}

    def dec(v):
        if v is None or isinstance(v, (bool, str, int)):
            return v
        if isinstance(v, list):
            return [dec(x) for x in v]
        if not isinstance(v, dict) or len(v) == 0:
            raise ValueError("bad entry")
        if "f" in v:
            return float(v["f"])
        if "a" in v:
            return arrays[int(v["a"])]
        if "c" in v:
            return ManimColor(np.array(v["c"], dtype=float))
        if "e" in v:
            return enums[v["e"]][v["v"]]
        if "r" in v:
            return made[int(v["r"])]
        if "t" in v:
            return tuple(dec(x) for x in v["t"])
        if "o" in v:
            return {str(k): dec(x) for k, x in v["o"].items()}
        if "m" in v:
            cls = classes[v["m"]]
            obj = object.__new__(cls)
            made[int(v["i"])] = obj
            obj.__dict__.update({str(k): dec(x) for k, x in v["d"].items()})
            return obj
        raise ValueError("bad entry")

    try:
        return dec(meta["tree"])
    except (KeyError, TypeError, IndexError) as e:
        raise ValueError(f"bad glyph entry: {e}") from None
