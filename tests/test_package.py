"""One installed package, `attention_manim`: what the wheel holds, the ways in, the import graph,
and the model session everyone shares (model/session.py)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import time
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_DIRS = {"attention_manim": ROOT / "attention_manim", "attention_manim.model": ROOT / "model",
                "attention_manim.scenes": ROOT / "scenes", "attention_manim.explorer": ROOT / "explorer"}


def package_modules() -> dict[str, Path]:
    """Every module of the installed package, by its dotted name, from the checkout's folders."""
    out = {}
    for pkg, folder in PACKAGE_DIRS.items():
        for f in folder.rglob("*.py"):
            rel = f.relative_to(folder).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([pkg, *parts])
            if pkg == "attention_manim" or name not in out:
                out[name] = f
    return out


def imports_of(name: str, path: Path) -> set[str]:
    """Absolute names of what a module imports (anywhere in it: top level or inside functions)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = here[: len(here) - node.level + 1] if node.level else []
            mod = ".".join(base + ([node.module] if node.module else []))
            found.add(mod)
            found.update(f"{mod}.{a.name}" for a in node.names)  # `from pkg import module`
    return found


def test_the_wheel_installs_one_top_level_package(tmp_path):
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                        "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True,
                       env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PIP_NO_INDEX": "1"})
    assert r.returncode == 0, r.stderr[-2000:]
    (wheel,) = tmp_path.glob("attention_manim-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"attention_manim"}, top
    for needed in ("attention_manim/cli.py", "attention_manim/model/session.py", "attention_manim/scenes/lesson.py",
                   "attention_manim/explorer/static/index.html", "attention_manim/scenes/locales/ko/common.toml",
                   "attention_manim/model/adapters/common.py", "attention_manim/scenes/plans/kv_cache.py"):
        assert needed in names, needed
    assert not any(n.endswith("render.py") for n in names)  # the checkout's shim is not installed
    entry = next(n for n in names if n.endswith("entry_points.txt"))
    assert "attention-manim = attention_manim.cli:main" in zipfile.ZipFile(wheel).read(entry).decode()


def test_no_module_of_the_package_imports_the_shim_or_the_old_top_level_names():
    for name, path in package_modules().items():
        for imported in imports_of(name, path):
            root = imported.split(".")[0]
            assert root not in ("render", "model", "scenes", "explorer"), f"{name} imports {imported}"


def test_cli_batch_and_explorer_import_in_one_direction():
    modules = package_modules()
    graph = {n: {i for i in imports_of(n, p) if i in modules} for n, p in modules.items()}

    def group(n):
        if n == "attention_manim.cli":
            return "cli"
        if n == "attention_manim.scenes.batch":
            return "batch"
        if n.startswith("attention_manim.explorer"):
            return "explorer"
        return None

    edges = {(group(a), group(b)) for a, bs in graph.items() for b in bs
             if group(a) and group(b) and group(a) != group(b)}
    # reach: everything a group's modules import, through modules of no group too
    reach = {}
    for g in ("cli", "batch", "explorer"):
        seen, todo = set(), [n for n in modules if group(n) == g]
        while todo:
            n = todo.pop()
            for m in graph[n]:
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        reach[g] = {group(m) for m in seen} - {None, g}
    assert "cli" not in reach["batch"] | reach["explorer"], reach  # nothing reaches back into the CLI
    assert not ("batch" in reach["explorer"] and "explorer" in reach["batch"]), reach
    assert ("cli", "explorer") in edges  # the CLI offers the explorer's commands, not the other way


@pytest.mark.parametrize("how", ["shim", "module", "script"])
def test_every_way_in_runs_the_same_command_line(how):
    if how == "shim":
        cmd = [sys.executable, "render.py", "list", "--lang", "ko"]
    elif how == "module":
        cmd = [sys.executable, "-m", "attention_manim", "list", "--lang", "ko"]
    else:
        script = Path(sys.executable).parent / "attention-manim"
        assert script.exists() or shutil.which("attention-manim"), "make setup installs the console script"
        cmd = [str(script if script.exists() else shutil.which("attention-manim")), "list", "--lang", "ko"]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("attention_as_lookup") and "mole" in r.stdout
    bad = subprocess.run(cmd[:-3] + ["render", "mole_x"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown scene 'mole_x'" in bad.stderr and "mole" in bad.stderr


def test_notebook_names_load_without_the_shim():
    code = ("import sys; from attention_manim import explore, render_clip, Clip; "
            "assert 'render' not in sys.modules; print(explore.__module__)")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT / "tests", capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "attention_manim.explorer.notebook", r.stderr


# --- the model session ----------------------------------------------------------------------------

def test_trace_cache_is_bounded_by_count_and_by_bytes(toy_model):
    from attention_manim.model.session import ModelSession, nbytes

    s = ModelSession(toy_model, "toy", max_traces=3)
    words = ["a fluffy blue creature", "the mole", "a robot must obey", "the eiffel tower"]
    first = s.trace(words[0])
    assert s.trace(words[0]) is first  # a hit is the same object
    for w in words[1:]:
        s(w)
    assert len(s.traces) == 3 and s.traces.get(words[0]) is None  # the oldest went first
    s.trace(words[1])  # used again: now the newest
    s.trace(words[0])
    assert s.traces.get(words[2]) is None and s.traces.get(words[1]) is not None
    size = nbytes(first)
    assert size > first.n_tokens * toy_model.info.d_model * 4
    small = ModelSession(toy_model, "toy", max_trace_bytes=int(size * 1.5))
    small.trace(words[0])
    small.trace(words[1])
    assert len(small.traces) == 1 and small.traces.bytes <= size * 1.5


def test_default_head_is_the_role_the_clips_use(toy_model):
    from attention_manim.explorer import core
    from attention_manim.model.session import ModelSession

    s = ModelSession(toy_model, "toy")
    want = toy_model.info.head_for_role("adjective_noun")
    assert s.default_head() == tuple(want) and s.default_head("no_such_role") == tuple(want)
    view = core.head_view(s.trace("a fluffy blue creature"), default=s.default_head())
    assert (view["layer"], view["head"]) == tuple(want)


def tiny_real_model(toy_model):
    """A random model the session treats as real (its heads named by nobody: measured), in the toy's
    vocabulary so that measuring it takes a fraction of a second."""
    import dataclasses

    from attention_manim.model.transformer import random_model

    return random_model(dataclasses.replace(toy_model.cfg, family="gpt2", head_roles={}, name="tiny-real"), seed=3)


def test_measured_roles_are_the_sessions_and_never_written_onto_the_model(toy_model, monkeypatch, tmp_path):
    from attention_manim.model.session import ModelSession

    monkeypatch.setenv("ATTENTION_MANIM_CACHE", str(tmp_path))  # the probes' disk cache: this test's own
    model = tiny_real_model(toy_model)
    keys = set(vars(model))
    early = ModelSession(model, "tiny-real", "cpu").trace("a fluffy blue creature")  # before any measurement
    session = ModelSession(model, "tiny-real", "cpu")
    first = session.trace("a fluffy blue creature")  # traced before the roles are measured
    assert first.model.roles == {}
    roles = session.info.roles
    assert roles and session.roles == roles and session.default_head() == roles["adjective_noun"]
    assert set(vars(model)) == keys  # nothing set as an attribute on the model object
    assert not hasattr(model, "measured_roles") and not hasattr(model, "_roles")
    assert model.info.roles == {} and model.trace("a fluffy blue creature").model.roles == {}
    # the session's traces carry its roles, also one cached before they were measured
    again = session.trace("a fluffy blue creature")
    assert again.model.roles == roles and session.trace("a fluffy blue creature") is again
    assert early.model.roles == {}


def test_two_sessions_on_one_model_keep_their_own_roles(toy_model, monkeypatch):
    from collections import OrderedDict

    from attention_manim.model import probes, session as sessions
    from attention_manim.model.session import ModelSession, open_session

    model = tiny_real_model(toy_model)
    keys = set(vars(model))
    measured = []

    def measure(m, **kw):  # each measurement distinguishable from the last
        measured.append(m)
        return [len(measured)]

    monkeypatch.setattr(probes, "measured_heads", measure)
    monkeypatch.setattr(probes, "roles_from", lambda heads: {"previous_token": (0, heads[0])})
    monkeypatch.setattr(probes, "role_gaps", lambda model, heads: {})
    a, b = ModelSession(model, "tiny-real", "cpu"), ModelSession(model, "tiny-real", "cpu")
    assert a.roles == {"previous_token": (0, 1)}
    assert b._info is None  # b has measured nothing, and sees nothing of a's
    assert b.roles == {"previous_token": (0, 2)} and a.roles == {"previous_token": (0, 1)}
    assert a.default_head() == (0, 1) and b.default_head() == (0, 2)
    assert a.trace("the mole").model.roles != b.trace("the mole").model.roles
    # sessions are kept per (model, device): the same key shares one session, and so its roles
    monkeypatch.setattr(sessions, "_sessions", OrderedDict())
    monkeypatch.setattr(ModelSession, "open", classmethod(lambda cls, name, device="auto": cls(model, name, device)))
    cpu = open_session("tiny-real", "cpu")
    assert open_session("tiny-real", "cpu") is cpu and cpu.roles == open_session("tiny-real", "cpu").roles
    other = open_session("tiny-real", "cuda")
    assert other is not cpu and other.roles != cpu.roles and len(measured) == 4
    assert set(vars(model)) == keys


def test_explorer_opens_smollm2_on_the_measured_head(smollm2_model, monkeypatch):
    from attention_manim.explorer import core
    from attention_manim.model import session as sessions
    from attention_manim.model.session import ModelSession

    monkeypatch.setattr(sessions, "_sessions", OrderedDict({("smollm2", "auto"): ModelSession(smollm2_model, "smollm2")}))
    models = core.Models.from_args()
    measured = models.session("smollm2").info.roles["adjective_noun"]
    assert tuple(measured) != (0, 0)
    view = core.head_view(models.trace("smollm2", "a fluffy blue creature"), default=models.default_head("smollm2"))
    assert (view["layer"], view["head"]) == tuple(measured)
    assert np.isclose(np.sum(view["pattern_head"]["pattern"][-1]), 1.0, atol=1e-3)


def test_plans_that_generate_need_a_session(toy_model):
    from attention_manim.model.errors import UserError
    from attention_manim.scenes.registry import load_all
    from attention_manim.scenes.setting import SceneInputs

    lesson = load_all()["kv_cache"].lesson
    bare = SceneInputs(tracer=toy_model.trace, model=toy_model.info, lang="en")
    with pytest.raises(UserError) as e:
        lesson.plans(lesson.setting(bare))
    assert "only a tracer" in e.value.message and "open_session" in e.value.hint


def test_one_cache_rule_for_every_part(monkeypatch, tmp_path):
    from attention_manim.model import probes
    from attention_manim.model.adapters import common
    from attention_manim.model.places import cache_dir, cache_root
    from attention_manim.scenes import cache
    from attention_manim.scenes.components.text import glyph_cache_dir

    monkeypatch.delenv("ATTN_MANIM_GLYPHS", raising=False)
    monkeypatch.setenv("ATTENTION_MANIM_CACHE", str(tmp_path / "mine"))
    assert cache_root() == common.cache_root() == cache.cache_root() == tmp_path / "mine"
    assert glyph_cache_dir() == tmp_path / "mine" / "glyphs" and probes.cache_dir("probes") == cache_dir("probes")
    monkeypatch.delenv("ATTENTION_MANIM_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_root() == tmp_path / "xdg" / "attention-manim" == glyph_cache_dir().parent
    monkeypatch.setenv("ATTN_MANIM_GLYPHS", str(tmp_path / "g"))
    assert glyph_cache_dir() == tmp_path / "g"


def test_model_names_come_from_one_place():
    from attention_manim.explorer import core
    from attention_manim.model import loading
    from attention_manim.model.places import BUILTIN_MODELS

    assert core.BUILTIN_MODELS is BUILTIN_MODELS and loading.BUILTINS is BUILTIN_MODELS
    assert [c.id for c in core.Models.from_args().choices] == list(BUILTIN_MODELS)
    # nowhere else spells the list out
    for path in (ROOT / "model").rglob("*.py"):
        if path.name != "places.py":
            assert '("toy", "smollm2")' not in path.read_text(encoding="utf-8"), path
    for folder in ("scenes", "explorer", "attention_manim"):
        for path in (ROOT / folder).rglob("*.py"):
            assert '("toy", "smollm2")' not in path.read_text(encoding="utf-8"), path


def test_fixed_point_numbers_never_show_a_signed_zero():
    from attention_manim.scenes.chapters.output_matrix import shown_number
    from attention_manim.scenes.style import fmt_fixed, fmt_vec

    assert [fmt_fixed(x, 2) for x in (-0.004, 0.004, -0.0, -1.236, 2.5)] == ["0.00", "0.00", "0.00", "−1.24", "2.50"]
    assert [fmt_fixed(x, 2, signed=True) for x in (-0.004, 0.3)] == ["0.00", "+0.30"]
    assert fmt_vec(-0.04) == "0.0" and fmt_vec(-0.06) == "−0.1"
    assert shown_number(-0.001, 2, 20, "#FFFFFF").shown == "0.00"  # output_matrix printed "−0.00"
    # its entries are signed as every vector's are (a column of "0.852144" beside "+0.3" read as unsigned)
    assert [shown_number(x, 6, 20, "#FFFFFF").shown for x in (0.8521444, -0.25)] == ["+0.852144", "−0.250000"]


# --- errors in the user's language ----------------------------------------------------------------

def _errors(tmp_path):
    """Catalogued errors, each made by the code that raises it: the common ones, every English plural
    form of the errors that have them, and a sample of the rarer ones (model files, a config value
    inside a model-file error, option checks)."""
    import json

    from attention_manim import cli
    from attention_manim.explorer import core
    from attention_manim.model.cross_attention import load_cross_attention
    from attention_manim.model.errors import ContextTooLongError, UnknownWordError, UserError
    from attention_manim.model.loading import load_model, resolve_device
    from attention_manim.model.train import check_train_args
    from attention_manim.scenes.batch import check_jobs, check_model_name, check_ray_address
    from attention_manim.scenes.i18n import check_language
    from attention_manim.scenes.registry import unknown_scene_error
    from attention_manim.scenes.runner import check_format
    from attention_manim.scenes.setting import head_error, layer_error
    from attention_manim.voice import pick_voice
    from attention_manim.voice.narrator import find_recordings

    made = [unknown_scene_error("mole_x", ["mole", "masking"]), unknown_scene_error("zzzz", ["mole"]),
            UnknownWordError(["zorp"], "toy"), UnknownWordError(["zorp", "blix"], "toy"),
            ContextTooLongError(300, 256), layer_error(7, 3), layer_error(4, 1), head_error(9, 4),
            head_error(-1, 4)]
    folders = {n: tmp_path / n for n in ("bad", "empty", "notjson", "bert")}
    for d in folders.values():
        d.mkdir()
    toy = json.loads((ROOT / "assets" / "toy" / "config.json").read_text(encoding="utf-8"))
    (folders["bad"] / "config.json").write_text(json.dumps({**toy, "n_heads": "two"}))
    (folders["bad"] / "model.safetensors").write_bytes(b"")
    (folders["notjson"] / "config.json").write_text("{nope")
    (folders["bert"] / "config.json").write_text(json.dumps({"model_type": "bert"}))
    cross = load_cross_attention()
    nowhere = str(tmp_path / "nothing")
    calls = [
        lambda: check_language("xx"), lambda: core.check_sentence("  "),
        lambda: core.check_sentence("a" * (core.MAX_SENTENCE_CHARS + 1)),
        # model files, and a config value inside one
        lambda: load_model(nowhere, device="cpu"), lambda: load_model(str(folders["bad"]), device="cpu"),
        lambda: load_model(str(folders["empty"]), device="cpu"),
        lambda: load_model(str(folders["notjson"]), device="cpu"),
        lambda: load_model(str(folders["bert"]), device="cpu"), lambda: resolve_device("tpu"),
        lambda: check_train_args(0, tmp_path),
        # the cross-attention model: one unknown word and two (both English forms), an empty side
        lambda: cross.tokens("zorp", "english"), lambda: cross.tokens("zorp blix", "french"),
        lambda: cross.tokens("  ", "french"),
        # option checks
        lambda: cli.comma_choices("en,xx", ("en", "ko", "pt"), "--lang", cli.unknown_language),
        lambda: cli.comma_choices(" , ", ("l", "m", "h"), "-q", cli.unknown_quality),
        lambda: check_format("avi", False), lambda: check_format("mp4", True),
        lambda: check_format("png", False, chapters=True), lambda: check_jobs([], backend="slurm"),
        lambda: check_jobs([], n=0), lambda: check_model_name(nowhere), lambda: check_ray_address("no-port-here"),
        lambda: pick_voice("nosuch", "en"), lambda: find_recordings(tmp_path / "no-recordings"),
        lambda: core.Models.from_args([nowhere]), lambda: core.Models.from_args().check("zzz"),
    ]
    for call in calls:
        with pytest.raises(UserError) as e:
            call()
        made.append(e.value)
    return made


def _facts(e):
    """The values of an error's parameters that every language writes as they are (names, paths,
    the user's own words), a keyed problem's inside it too."""
    import os

    from attention_manim.model.errors import Term

    for value in e.params.values():
        if isinstance(value, Term):
            continue  # a word the catalogs translate
        if isinstance(value, BaseException) and getattr(value, "key", None):
            yield from _facts(value)
            continue
        if isinstance(value, (os.PathLike, BaseException)):
            value = str(value)
        if isinstance(value, str) and value.isascii() and "," not in value:
            yield value


def test_catalogued_errors_read_the_same_in_english_and_are_translated(tmp_path):
    from attention_manim.scenes.i18n import load_catalog, localized_error, plural_form

    made = _errors(tmp_path)
    for e in made:
        assert e.key, e.message
        assert localized_error(e, "en") == (e.message, e.hint), e.key  # the catalog is the code's words
        for lang in ("ko", "pt"):
            message, hint = localized_error(e, lang)
            assert message != e.message and (hint and hint != e.hint if e.hint else not hint), (lang, e.key, message)
            for value in _facts(e):  # the facts survive translation
                assert value in message + hint, (lang, e.key, value)
    # the English entries with plural forms are held to the code here, one error per form (the source
    # reader below cannot pick a form)
    en = load_catalog("en")
    plural = {k.split(".")[1] for k, t in en.items() if k.startswith("errors.") and isinstance(t, dict)}
    assert plural >= {"unknown_word", "cross_unknown_word"}
    for key in plural:
        forms = {plural_form("en", e.params["count"]) for e in made if e.key == key}
        assert forms == set(en[f"errors.{key}.message"]), key
    assert localized_error(made[5], "pt")[0].endswith("3 camadas (0..2)")
    assert localized_error(made[6], "pt")[0].endswith("1 camada (0..0)")  # CLDR "one"
    # a config value inside a model-file error is said in the same language, every fact kept
    bad = next(e for e in made if e.key == "toy_config_invalid")
    assert bad.message.endswith("is not valid: 'n_heads' must be a whole number, not 'two'")
    assert localized_error(bad, "pt")[0].endswith("não é válida: 'n_heads' precisa ser um número inteiro, não 'two'")
    assert localized_error(bad, "ko")[0].endswith("값이 올바르지 않습니다: 'n_heads' 값은 정수여야 합니다. 받은 값: 'two'")
    side = next(e for e in made if e.key == "cross_sentence_empty")
    assert localized_error(side, "ko")[0] == "프랑스어 문장이 비어 있습니다"


def test_every_error_the_package_raises_has_a_catalog_key(tmp_path):
    """Read from the source: a UserError (or a subclass's, or a keyed problem's) made without a
    catalog key fails here. The reader itself is checked on a module of mistakes."""
    from .error_sites import sites

    found = sites()
    assert len(found) > 150 and {s.cls for s in found} >= {"UserError", "ModelFileError", "ConfigError",
                                                             "AudioError", "UnknownWordError", "QueueFullError"}
    unkeyed = [f"{s.where()}: {s.cls}({s.message!r})" for s in found if not s.key]
    assert not unkeyed, ("errors without a catalog key (give each key=... and an entry in every "
                         "scenes/locales/<lang>/errors.toml):\n" + "\n".join(unkeyed))
    bad = tmp_path / "mistakes.py"
    bad.write_text("from attention_manim.model.errors import ModelFileError, UserError\n"
                   "def f(x, k):\n"
                   "    raise UserError(f'no {x}')\n"
                   "def g(x, k):\n"
                   "    return ModelFileError('gone', key=k)\n"
                   "def h(x):\n"
                   "    raise UserError(f'no {x}', key='no_x')\n", encoding="utf-8")
    read = sites({"mistakes": bad})
    assert [(s.line, s.key) for s in read] == [(3, None), (5, None), (7, "no_x")]
    assert read[2].problems == ["{x} is no parameter of the error"]


def test_english_catalog_entries_are_the_codes_own_words():
    """Every error site's message and hint, read from the source as a template (each {expression} the
    parameter passed with it), is its key's English entry word for word; every parameter an entry
    uses in any language is passed; no entry is left without a site."""
    from collections import defaultdict

    from attention_manim.scenes.i18n import load_catalog, template_fields

    from .error_sites import sites, term_sites

    cats = {lang: load_catalog(lang) for lang in ("en", "ko", "pt")}
    en = cats["en"]
    by_key = defaultdict(list)
    for s in sites():
        by_key[s.key].append(s)
    wrong = []
    for key, found in by_key.items():
        message, hint = en.get(f"errors.{key}.message"), en.get(f"errors.{key}.hint")
        if message is None:
            wrong.append(f"{key}: no English entry")
            continue
        entries = [c[f"errors.{key}.{part}"] for c in cats.values() for part in ("message", "hint")
                   if f"errors.{key}.{part}" in c]
        for s in found:
            where = f"{s.where()} [{key}]"
            if not isinstance(message, dict):  # plural forms: held to the code by the test above
                if s.problems:
                    wrong.append(f"{where}: {'; '.join(s.problems)}")
                elif s.message != message:
                    wrong.append(f"{where}: the code says {s.message!r}, the catalog {message!r}")
            if s.hint and s.hint != hint:
                wrong.append(f"{where}: the code's hint is {s.hint!r}, the catalog's {hint!r}")
            used = set().union(*(template_fields(t) for t in entries))
            if any(isinstance(t, dict) for t in entries):
                used.add("count")  # a language's plural forms pick by count
            if used - s.params:
                wrong.append(f"{where}: the catalog uses {sorted(used - s.params)}, the code does not pass them")
    assert not wrong, "\n".join(wrong)
    keys = {k.split(".")[1] for k in en if k.startswith("errors.") and not k.startswith("errors.term.")}
    assert keys == set(by_key), f"entries no code raises: {sorted(keys - set(by_key))}"
    terms = term_sites()
    assert terms and all(en.get(f"errors.term.{key}") == word for _, _, word, key in terms), terms
    assert {k for k in en if k.startswith("errors.term.")} == {f"errors.term.{key}" for *_, key in terms}


def test_every_translation_keeps_each_parameter_and_fact():
    """ko and pt entries of every error: each of the English placeholders, with its conversion and
    format spec, in every plural form; each fact the English spells out (options, commands, files,
    environment variables, numbers) written as it is; and the sentence itself translated."""
    import string

    from attention_manim.scenes.i18n import load_catalog

    from .error_sites import literal_facts

    def forms(t):
        return list(t.values()) if isinstance(t, dict) else [t]

    def placeholders(t):
        return {(name, conv or "", spec or "") for _, name, spec, conv in string.Formatter().parse(t) if name}

    en, ko, pt = (load_catalog(lang) for lang in ("en", "ko", "pt"))
    keys = [k for k in en if k.startswith("errors.") and not k.startswith("errors.term.")]
    assert len(keys) > 250
    wrong = []
    for key in keys:
        want = set().union(*(placeholders(t) for t in forms(en[key]))) - {("count", "", "")}
        facts = set().union(*(literal_facts(t) for t in forms(en[key])))
        for lang, cat in (("ko", ko), ("pt", pt)):
            for t in forms(cat[key]):
                if not want <= placeholders(t) <= want | {("count", "", "")}:
                    wrong.append(f"{lang} {key}: placeholders {sorted(placeholders(t))}, English {sorted(want)}")
                lost = sorted(f for f in facts if f not in t)
                if lost:
                    wrong.append(f"{lang} {key}: loses {lost}")
                if t in forms(en[key]):
                    wrong.append(f"{lang} {key}: left in English")
    assert not wrong, "\n".join(wrong)


def test_a_batch_says_a_clips_error_in_the_clips_language(tmp_path, tracer, toy_model):
    from attention_manim.scenes.batch import Job, Worker

    worker = Worker(load=lambda model, device: (tracer, toy_model.info))
    o = worker.run(Job("attention_pattern", lang="pt", out=str(tmp_path), device="cpu",
                       options=(("focus", "xylophone"),)))
    assert o.user_error and o.error.startswith("a palavra em foco 'xylophone' não está na frase"), o.error
    assert o.hint.startswith("escolha uma destas:"), o.hint


def test_cli_errors_follow_lang_with_the_same_exit_code(tmp_path):
    for lang, words in (("ko", "알 수 없는 장면: 'mole_x'"), ("pt", "cena desconhecida: 'mole_x'"),
                        ("en", "unknown scene 'mole_x'")):
        r = subprocess.run([sys.executable, "render.py", "mole_x", "--lang", lang], cwd=ROOT,
                           capture_output=True, text=True)
        assert r.returncode == 2 and words in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert "mole" in r.stderr.split("hint:")[1]
    # the rarer ones too: a model that is not there, and a bad value in a model's config.json
    r = subprocess.run([sys.executable, "render.py", "fluffy_blue_creature", "--lang", "ko", "--model", "/nonexistent"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert "error: '/nonexistent' 모델이 없습니다: 내장 모델(toy, smollm2)도" in r.stderr, r.stderr
    assert "hint: --model toy 또는 smollm2를 쓰거나" in r.stderr, r.stderr


@pytest.mark.parametrize("field, value, words", [
    ("d_model", "64", "'d_model' must be a whole number, not '64'"),  # strict: no quiet conversion
    ("d_head", True, "'d_head' must be a whole number, not True"),
    ("n_ctx", -3, "'n_ctx' must be at least 1, not -3"),
    ("d_mlp", -1, "'d_mlp' must be at least 0, not -1"),
    ("norm_eps", 0.0, "'norm_eps' must be more than 0"),
    ("positions", "alibi", "'positions' must be one of 'learned' or 'rotary', not 'alibi'"),
    ("head_roles", {"adjective_noun": [0]}, "'head_roles.adjective_noun' must be a [layer, head] pair"),
    ("head_roles", {"adjective_noun": [0, -1]}, "'head_roles.adjective_noun[1]' must be at least 0"),
    ("vocab", ["a", 3], "'vocab[1]' must be a string, not 3"),
])
def test_config_schema_names_the_bad_field(field, value, words):
    from attention_manim.model.config import ModelConfig

    good = {"name": "t", "vocab": ["a", "b"]}
    ModelConfig.from_dict(good)
    with pytest.raises(ValueError) as e:
        ModelConfig.from_dict({**good, field: value})
    assert words in str(e.value)


def test_a_bad_config_file_is_a_clear_cli_error(tmp_path):
    import json

    from attention_manim.model.loading import load_model, save_model
    from attention_manim.model.transformer import random_model
    from attention_manim.model.config import ModelConfig

    save_model(random_model(ModelConfig(name="t", vocab=["a", "b", "c"], d_model=8, n_heads=2, d_head=4)), tmp_path)
    cfg = json.loads((tmp_path / "config.json").read_text())
    load_model(tmp_path, device="cpu")
    (tmp_path / "config.json").write_text(json.dumps({**cfg, "n_heads": "two"}))
    r = subprocess.run([sys.executable, "render.py", "inspect", "a b", "--model", str(tmp_path), "--device", "cpu"],
                       cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 2 and "'n_heads' must be a whole number, not 'two'" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr


def test_the_explorers_job_list_is_bounded(monkeypatch, tmp_path):
    from attention_manim.explorer import jobs
    from attention_manim.model.errors import UserError

    monkeypatch.setattr(jobs, "MAX_FINISHED", 3)

    def inputs(job):
        raise UserError("nope", key="empty_sentence") if job.lang == "pt" else UserError("plain")

    q = jobs.RenderQueue(None, tmp_path, inputs)
    made = [q.submit(dict(scene="mole", model="toy", sentence="x", layer=None, head=None, quality="l",
                          lang="pt" if i == 0 else "en", fmt="mp4")) for i in range(6)]
    for _ in range(200):
        if all(j.state == "error" for j in made) and q.current is None:
            break
        time.sleep(0.02)
    assert made[0].error["message"] == "a frase não tem nenhuma palavra que o modelo consiga ler"
    assert len(q.jobs) == 3 and set(q.jobs) == {j.id for j in made[-3:]}


def test_a_restart_sweeps_what_stopped_renders_left_and_says_so(tmp_path):
    from attention_manim.explorer import jobs

    stopped = tmp_path / "1764800000-3"
    (stopped / "480p15" / ".softmax-rendering-123-abcd" / "partial").mkdir(parents=True)
    (stopped / "480p15" / ".softmax-rendering-123-abcd" / "partial" / "0001.mp4").write_bytes(b"x")
    done = tmp_path / "1764800000-2"
    (done / "480p15").mkdir(parents=True)
    (done / "480p15" / "softmax.mp4").write_bytes(b"clip")
    (done / "480p15" / ".query-rendering-9-zz").mkdir()
    other = tmp_path / "notes"
    other.mkdir()
    q = jobs.RenderQueue(None, tmp_path, lambda job: None)
    assert q.queue()["lost_at_start"] == 1
    assert not stopped.exists() and (done / "480p15" / "softmax.mp4").read_bytes() == b"clip"
    assert not (done / "480p15" / ".query-rendering-9-zz").exists() and other.is_dir()


def test_a_model_without_story_heads_falls_back_to_a_measured_structural_head():
    """A vocabulary without the story's probe words: the head shown is one measured for a structural
    role (previous token first), never an unexplained layer 0 head 0."""
    from types import SimpleNamespace

    from attention_manim.model.session import ModelSession

    def session(roles):
        s = ModelSession(SimpleNamespace(info=SimpleNamespace(roles=roles)), "fake")
        s._info = SimpleNamespace(roles=roles)
        return s

    assert session({"induction": (3, 1), "previous_token": (2, 4)}).default_head() == (2, 4)
    assert session({"first_token": (0, 2), "induction": (5, 0)}).default_head("verb_object") == (5, 0)
    assert session({"adjective_noun": (1, 1), "previous_token": (2, 4)}).default_head("no_such") == (1, 1)
    assert session({}).default_head() == (0, 0)
