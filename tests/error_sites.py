"""Every place the package makes a user-facing error, read from its source (no running needed).

A *site* is a call that builds an error the user reads: `UserError(...)`, a subclass's (`ModelFileError`,
`QueueFullError`, ...), a `KeyedValueError` subclass's (a config or sound-file problem, shown inside a UserError), or a
subclass's own `super().__init__(...)`. From each site's message and hint — string literals and
f-strings — the English catalog template follows: every `{expression}` is the keyword parameter
passed with the same expression (`{len(words)}` with `n_words=len(words)`), keeping its conversion and
format spec (`{name!r}`, `{gb:,.1f}`); an ALL_CAPS module constant of prose is written out. So the
catalog's English entry can be compared with the code's words, word for word, without raising the
error. The tests that use this live in test_package.py ("errors in the user's language").
"""

from __future__ import annotations

import ast
import importlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = {"attention_manim": ROOT / "attention_manim", "attention_manim.model": ROOT / "model",
                "attention_manim.scenes": ROOT / "scenes", "attention_manim.explorer": ROOT / "explorer"}
ROOTS = {"UserError", "KeyedValueError"}  # the errors whose words the user reads
CONVERSIONS = {-1: "", 115: "!s", 114: "!r", 97: "!a"}


@dataclass
class Site:
    path: Path
    line: int
    cls: str  # the error class called (or the subclass whose super().__init__ it is)
    key: str | None  # None: no key (or not a plain string)
    message: str | None  # the English template, or None when the code's words cannot be read as one
    hint: str | None
    params: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)  # why a template could not be read

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def module_files() -> dict[str, Path]:
    out = {}
    for pkg, folder in PACKAGE_DIRS.items():
        for f in sorted(folder.rglob("*.py")):
            rel = f.relative_to(folder).with_suffix("")
            out[".".join([pkg, *[p for p in rel.parts if p != "__init__"]])] = f
    return out


@lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _name(func) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None


def error_classes() -> tuple[set[str], set[str]]:
    """(every error class of the family, those that pass their own key in their super().__init__)."""
    family = set(ROOTS)
    classes = [n for f in module_files().values() for n in ast.walk(_tree(f)) if isinstance(n, ast.ClassDef)]
    grew = True
    while grew:
        grew = False
        for c in classes:
            if c.name not in family and any(_name(b) in family for b in c.bases):
                family.add(c.name)
                grew = True
    keyed = set()
    for c in classes:
        if c.name in family and c.name not in ROOTS:
            for n in ast.walk(c):
                if _is_super_init(n) and any(k.arg == "key" for k in n.keywords):
                    keyed.add(c.name)
    return family, keyed


def _is_super_init(n) -> bool:
    return (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
            and isinstance(n.func.value, ast.Call) and _name(n.func.value.func) == "super")


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


class _Reader:
    def __init__(self, module: str, kwargs: dict[str, ast.expr]):
        self.module = module
        self.kwargs = kwargs
        self.used: set[str] = set()
        self.problems: list[str] = []

    def constant(self, name: str):
        try:
            value = getattr(importlib.import_module(self.module), name)
        except (ImportError, AttributeError):
            return None
        return value if isinstance(value, str) else None

    def template(self, node) -> str | None:
        if node is None:
            return ""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return _escape(node.value)
        if isinstance(node, ast.Name) and node.id.isupper():
            value = self.constant(node.id)
            if value is not None:
                return _escape(value)
        if isinstance(node, ast.JoinedStr):
            out = []
            for part in node.values:
                if isinstance(part, ast.Constant):
                    out.append(_escape(part.value))
                    continue
                piece = self.field(part)
                if piece is None:
                    return None
                out.append(piece)
            return "".join(out)
        self.problems.append(f"not a string or f-string: {ast.unparse(node)[:80]}")
        return None

    def field(self, part: ast.FormattedValue) -> str | None:
        spec = ""
        if part.format_spec is not None:
            if not all(isinstance(v, ast.Constant) for v in part.format_spec.values):
                self.problems.append(f"a computed format spec: {ast.unparse(part)[:80]}")
                return None
            spec = ":" + "".join(v.value for v in part.format_spec.values)
        conv = CONVERSIONS[part.conversion]
        dump = ast.dump(part.value)
        for name, value in self.kwargs.items():
            if ast.dump(value) == dump:
                self.used.add(name)
                return "{" + name + conv + spec + "}"
        if isinstance(part.value, ast.Name) and part.value.id.isupper() and not conv and not spec:
            value = self.constant(part.value.id)
            if value is not None:
                return _escape(value)
        self.problems.append(f"{{{ast.unparse(part.value)}}} is no parameter of the error")
        return None


def sites(files: dict[str, Path] | None = None) -> list[Site]:
    """Every error site of the package (or of `files`: {module name: path})."""
    family, keyed = error_classes()
    out = []
    for module, path in (module_files() if files is None else files).items():
        tree = _tree(path)
        owners = {}  # super().__init__ call -> the class it is in
        for c in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            for n in ast.walk(c):
                if _is_super_init(n):
                    owners[id(n)] = c.name
        for n in ast.walk(tree):
            if not isinstance(n, ast.Call):
                continue
            if _is_super_init(n):
                cls = owners.get(id(n))
                if cls not in keyed:
                    continue
            else:
                cls = _name(n.func)
                if cls not in family or cls in keyed or isinstance(n.func, ast.Attribute) and cls == "__init__":
                    continue
            kw = {k.arg: k.value for k in n.keywords if k.arg is not None}
            key = kw.pop("key", None)
            key = key.value if isinstance(key, ast.Constant) and isinstance(key.value, str) else None
            hint_node = kw.pop("hint", None) or (n.args[1] if len(n.args) > 1 else None)
            reader = _Reader(module, kw)
            message = reader.template(n.args[0] if n.args else None)
            hint = reader.template(hint_node)
            out.append(Site(path, n.lineno, cls, key, message, hint, set(kw), reader.problems))
    return sorted(out, key=lambda s: (str(s.path), s.line))


def term_sites() -> list[tuple[Path, int, str | None, str | None]]:
    """Every `Term("word", "key")`: (file, line, English word, key)."""
    out = []
    for path in module_files().values():
        for n in ast.walk(_tree(path)):
            if isinstance(n, ast.Call) and _name(n.func) == "Term":
                args = [a.value if isinstance(a, ast.Constant) else None for a in n.args]
                args += [None] * (2 - len(args))
                out.append((path, n.lineno, args[0], args[1]))
    return out


# --- the facts a translation keeps ---------------------------------------------------------------

CODE = re.compile(r"`[^`]+`")  # a command or code: `python render.py list`, `pip install {pin}`
FACT = re.compile(r"""
      (?<![\w-])--?[a-zA-Z][\w-]*             # an option: --window, -q
    | \b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b         # an environment variable: ATTENTION_MANIM_MAX_MODEL_GB
    | [\w-]*\w[.:][\w./:-]*\w                  # a file, a module, an address: config.json, cuda:N, ray://h
    | \b\w+_\w+\b                               # a name in code: model_type, head_roles
    | '[^'\s]*'                                 # a quoted value: '|'
    | \b\d[\d.,]*\b                             # a number
""", re.VERBOSE)
NOT_FACTS = {"e.g", "i.e"}


def literal_facts(template: str) -> set[str]:
    """The facts an English template spells out itself: commands and code (with any {parameter} inside
    them), options, files, names in code, quoted values and numbers."""
    facts = set(CODE.findall(template))
    text = re.sub(r"\{[^{}]*\}", " ", CODE.sub(" ", template).replace("{{", "").replace("}}", ""))
    facts |= {m.group(0) for m in FACT.finditer(text)}
    return facts - NOT_FACTS
