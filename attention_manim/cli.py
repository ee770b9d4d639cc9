"""attention-manim's command line: render the scenes, or ask the model for its numbers.

`python render.py`, the console script `attention-manim` and `python -m attention_manim` all run
`main()` here.

    python render.py list                          every scene, one line each
    python render.py attention_pattern -qm         render one scene (more names: more scenes)
    python render.py all -ql                       render every scene
    python render.py inspect "a fluffy blue creature" [--json]
    python render.py vocab                         the words the model knows
    python render.py train                         retrain the toy world's weights

User mistakes (unknown scene, unknown word, out-of-range head...) print a message and a hint and
exit with status 2; real bugs still show their traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from attention_manim.model.errors import UserError
from attention_manim.scenes.registry import unknown_scene_error

ROOT = Path(__file__).resolve().parent.parent  # the checkout (pyproject.toml), when run from one


# --- helpers -----------------------------------------------------------------------------------

def _session(model_name: str, device: str):
    from attention_manim.model.session import open_session

    return open_session(model_name, device)


def strict_json(data) -> str:
    """JSON as the standard has it: a NaN or ∞ (which the model should never produce) is an error
    naming where it is, not a bare `NaN` no JSON reader accepts."""
    try:
        return json.dumps(data, ensure_ascii=False, allow_nan=False)
    except ValueError:
        raise UserError("the model produced a number that is not finite (NaN or ∞); no JSON written",
                        "check the model's weights, or use a shorter sentence", key="json_not_finite") from None


def split_sentences(values: tuple[str, ...]) -> list[str] | None:
    """--sentence may repeat, and one value may hold several sentences separated by '|'."""
    if not values:
        return None
    # empty pieces stay: resolve() says that a sentence is empty instead of quietly using the default
    return [s.strip() for v in values for s in v.split("|")]


def parse_list(value: str | None) -> list[str] | None:
    """A comma-separated option as given (empty names kept: the check that follows names them)."""
    return None if value is None else [p.strip() for p in value.split(",")]


class SceneGroup(click.Group):
    """A group whose unknown first word is taken as a scene name for the `render` command."""

    def resolve_command(self, ctx, args):
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["render", *args]
        return super().resolve_command(ctx, args)


def package_version() -> str:
    try:
        from importlib.metadata import version

        return version("attention-manim")
    except Exception:  # not installed as a package (a bare checkout): pyproject says
        import tomllib

        return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]


@click.group(cls=SceneGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_version(), "-V", "--version", prog_name="attention-manim",
                      message="%(prog)s %(version)s")
def cli():
    """Manim animations of transformer attention, every number from a real model.

    Run `python render.py SCENE [SCENE...]` to render, `python render.py list` to see the scenes."""


# --- list / render -----------------------------------------------------------------------------

def lang_option(f):
    return click.option("--lang", default="en", show_default=True,
                        help="language of every word on screen and in the .srt: en, ko or pt")(f)


def checked_lang(lang: str) -> str:
    from attention_manim.scenes.i18n import check_language

    return check_language(lang)


@cli.command("list")
@lang_option
def list_scenes(lang):
    """Print every scene with its one-line description."""
    from attention_manim.scenes.registry import load_all

    checked_lang(lang)
    scenes = load_all()
    width = max(map(len, scenes))
    for name in sorted(scenes):
        click.echo(f"{name:<{width}}  {describe_scene(scenes[name], lang)}")


def describe_scene(cls, lang: str) -> str:
    if hasattr(cls, "lesson"):
        from attention_manim.scenes.lesson import describe

        return describe(cls.lesson.name, lang)
    return cls.description


model_options = [
    click.option("--model", "model_name", default="toy", show_default=True,
                 help="built-in model name or a directory with config.json + model.safetensors"),
    click.option("--device", default="auto", show_default=True, help="auto (CUDA when present), cpu or cuda"),
]


devices_option = click.option(
    "--devices", type=int, default=None,
    help="devices in the ring of ring_attention (default 4; 2 to 6, at most one per token)")


def with_model_options(f):
    for opt in reversed(model_options):
        f = opt(f)
    return f


def comma_choices(value: str, known: tuple[str, ...], option: str, unknown) -> list[str]:
    """`--lang en,ko` / `-q l,h`: a comma-separated list, every item known, in the order given;
    `unknown(item, choices)` is the error for an item not known."""
    items = list(dict.fromkeys(p.strip() for p in str(value).split(",") if p.strip()))
    if not items:
        raise UserError(f"{option} is empty", f"choose from {', '.join(known)}", key="option_empty", option=option,
                        choices=", ".join(known))
    for item in items:
        if item not in known:
            raise unknown(item, ", ".join(known))
    return items


def unknown_language(item: str, choices: str) -> UserError:
    return UserError(f"unknown language {item!r}", f"choose from {choices} (several: separate with commas)",
                     key="unknown_language_listed", lang=item, choices=choices)


def unknown_quality(item: str, choices: str) -> UserError:
    return UserError(f"unknown quality {item!r}", f"choose from {choices} (several: separate with commas)",
                     key="unknown_quality", quality=item, choices=choices)


@cli.command("render")
@click.argument("names", nargs=-1, required=True)
@click.option("-q", "--quality", default="l", show_default=True,
              help="l 480p15, m 720p30, h 1080p60, p 1440p60, k 2160p60; several: -q l,h")
@click.option("--format", "fmt", type=click.Choice(["mp4", "gif", "webm", "mov", "png"]), default="mp4",
              show_default=True, help="png = the last frame")
@click.option("-t", "--transparent", is_flag=True, help="transparent background (mov, webm or png)")
@click.option("-s", "--sentence", "sentences", multiple=True,
              help="the sentence to use (repeat, or separate with '|', for scenes that take several)")
@click.option("--focus", help="the word the scene follows")
@click.option("--layer", type=int, default=None, help="default: the layer of the scene's own head")
@click.option("--head", type=int, default=None, help="default: the scene's own (by role: the adjectives→nouns head)")
@click.option("--layout", type=click.Choice(["video", "paper"]), default="video", show_default=True,
              help="video: keys as rows, queries as columns; paper: queries as rows")
@click.option("--axes", help="three named directions for 3-D scenes, e.g. animal,chemistry,medicine")
@click.option("--window", type=int, default=None,
              help="sliding_window: the window's width in tokens (2 to 32) [default: 8]")
@click.option("--theme", type=click.Choice(["dark", "light"]), default="dark", show_default=True)
@click.option("--lang", default="en", show_default=True,
              help="language of every word on screen and in the .srt: en, ko or pt; several: --lang en,ko,pt "
                   "(other languages than en land in OUT/<quality>/<scene>.<lang>.<ext>)")
@click.option("--model", "model_name", default=None,
              help="built-in model name or a directory with config.json + model.safetensors "
                   "[default: the scene's own model, else toy]")
@model_options[1]
@devices_option
@click.option("--out", type=click.Path(path_type=Path), default=Path("renders"), show_default=True,
              help="output folder; files land in OUT/<quality>/<scene>.<ext>")
@click.option("--chapters", is_flag=True,
              help="also one clip per chapter in OUT/<quality>/<scene>[.<lang>]/ with an index.json")
@click.option("-j", "--jobs", "n_jobs", type=int, default=1, show_default=True, help="worker processes")
@click.option("--backend", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local processes, or Ray tasks (pip install .[farm])")
@click.option("--ray-address", default=None, help="an existing Ray cluster (default: a local Ray for the run)")
@click.option("--force", is_flag=True, help="render even when the clip is up to date")
@click.option("--preview", is_flag=True, help="open each file when it is done")
@click.option("--voice", default=None,
              help="speak the captions: auto (the best offline voice for the clip's language) or a name "
                   "from `render.py voices`; without it the clip is silent")
@click.option("--voice-dir", "voice_dir", type=click.Path(path_type=Path), default=None,
              help="your own recordings, one file per caption block named by block id (render.py script "
                   "lists them); blocks without one are spoken by --voice, or left silent")
def render(names, quality, fmt, transparent, sentences, focus, layer, head, layout, axes, window, theme, lang,
           model_name, device, devices, out, chapters, n_jobs, backend, ray_address, force, preview, voice, voice_dir):
    """Render SCENE [SCENE...] ('all' renders every scene), in every --lang and -q given."""
    from attention_manim.scenes.batch import (Interrupted, check_jobs, make_jobs, options_tuple, progress_line, run_batch,
                              summary_table)
    from attention_manim.scenes.i18n import LANGUAGES
    from attention_manim.scenes.registry import load_all
    from attention_manim.scenes.runner import QUALITY_FLAGS, check_output_dir

    langs = [checked_lang(x) for x in comma_choices(lang, tuple(LANGUAGES), "--lang", unknown_language)]
    qualities = comma_choices(quality, tuple(QUALITY_FLAGS), "-q", unknown_quality)
    scenes = load_all()
    for name in names:  # every name is checked, "all" beside it too (`render.py foo all` is a typo, not all)
        if name != "all" and name not in scenes:
            raise unknown_scene_error(name, sorted(scenes) + ["all", "list", "inspect", "heads", "params", "vocab", "train", "storyboard", "lint", "script", "voices"])
    wanted = sorted(scenes) if "all" in names else list(dict.fromkeys(names))
    options = options_tuple(dict(sentences=split_sentences(sentences), focus=focus, layer=layer, head=head,
                                 theme=theme, layout=layout, axes=parse_list(axes),
                                 **lesson_options(window=window, devices=devices)))
    jobs = []
    for name in wanted:  # each scene with its own model unless --model names one
        lesson = getattr(scenes[name], "lesson", None)
        jobs += make_jobs([name], langs, qualities, fmt=fmt, transparent=transparent, chapters=chapters,
                          model=str(model_name or getattr(lesson, "model", None) or "toy"), device=device,
                          options=options, out=str(out), voice=voice,
                          voice_dir=str(voice_dir.resolve()) if voice_dir else None)
    check_jobs(jobs, backend, n_jobs)  # every name, language, quality, format and model before anything starts
    out_existed = Path(out).exists()
    check_output_dir(out)

    def started(job):
        click.echo(f"rendering {job.label()} ...", err=True)

    if n_jobs > 1 or backend == "ray":
        click.echo(f"rendering {len(jobs)} clip(s) with {n_jobs} {backend} worker(s) ...", err=True)

    def finished(i, n, o):
        if o.trace:
            click.echo(o.trace, err=True)
        click.echo(progress_line(i, n, o), err=True)
        for note in o.notes:
            click.echo(f"note: {note}", err=True)
        if o.ok:
            for f in o.files:
                click.echo(f)
            if preview and o.files:
                click.launch(o.files[0])

    try:
        outcomes = run_batch(jobs, n=n_jobs, backend=backend, load=None, ray_address=ray_address,
                             force=force, on_done=finished, on_start=started if n_jobs == 1 else None)
    except Interrupted:  # SIGTERM: the workers are stopped and no partial file is left
        click.echo("interrupted (SIGTERM)", err=True)
        sys.exit(143)
    except UserError:  # one clip, and the user's mistake found while planning it: no empty --out left
        if not out_existed and not any(p.is_file() for p in Path(out).rglob("*")):
            import shutil

            shutil.rmtree(out, ignore_errors=True)
        raise
    if len(outcomes) > 1:
        click.echo("", err=True)
        for line in summary_table(outcomes):
            click.echo(line, err=True)
    if not all(o.ok for o in outcomes):
        sys.exit(1)


# --- storyboard / lint: look at a lesson without encoding it (scenes/review.py) -------------------

window_option = click.option("--window", type=int, default=None,
                             help="sliding_window: the window's width in tokens (2 to 32) [default: 8]")


def lesson_options(**given) -> dict:
    """The lesson options given (`--window`, `--devices`: SceneInputs.options): only those set, so other
    clips' cache keys stay the same and the note on options a lesson does not use sees what was asked."""
    extra = {k: v for k, v in given.items() if v is not None}
    return {"options": extra} if extra else {}


def review_options(f):
    opts = [
        click.option("--lang", default="en", show_default=True, help="en, ko or pt; several: --lang en,ko,pt"),
        click.option("--model", "model_name", default=None,
                     help="built-in model name or a folder [default: the scene's own model, else toy]"),
        click.option("-s", "--sentence", "sentences", multiple=True, help="the sentence to use (as for render)"),
        click.option("--focus", help="the word the scene follows"),
        click.option("--layer", type=int, default=None, help="default: the layer of the scene's own head"),
        click.option("--head", type=int, default=None, help="default: the scene's own head"),
        click.option("--layout", type=click.Choice(["video", "paper"]), default="video", show_default=True),
        click.option("--axes", help="three named directions for 3-D scenes"),
        window_option,
        model_options[1],
        devices_option,
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def review_request(names, lang, model_name, sentences, focus, layer, head, layout, axes, window=None, devices=None):
    """The scenes, languages and options a storyboard or lint asks for, checked like a render's."""
    from attention_manim.scenes.batch import check_model_name, options_tuple
    from attention_manim.scenes.i18n import LANGUAGES
    from attention_manim.scenes.registry import load_all

    langs = [checked_lang(x) for x in comma_choices(lang, tuple(LANGUAGES), "--lang", unknown_language)]
    scenes = load_all()
    for name in names:
        if name != "all" and name not in scenes:
            raise unknown_scene_error(name, sorted(scenes) + ["all"])
    wanted = sorted(scenes) if "all" in names else list(dict.fromkeys(names))
    if model_name is not None:
        check_model_name(model_name)
    options = options_tuple(dict(sentences=split_sentences(sentences), focus=focus, layer=layer, head=head,
                                 layout=layout, axes=parse_list(axes),
                                 **lesson_options(window=window, devices=devices)))
    return wanted, langs, options


@cli.command("script")
@click.argument("name", metavar="LESSON")
@review_options
@click.option("--format", "fmt", type=click.Choice(["md", "txt", "json"]), default="md", show_default=True)
def script_cmd(name, lang, model_name, sentences, focus, layer, head, layout, axes, window, device, devices, fmt):
    """The narration script of LESSON: every caption block, chapter by chapter, with its block id and
    the time it starts at without a voice. Record one file per block (named by its id) and render
    with --voice-dir."""
    from attention_manim.scenes.batch import Job, Worker
    from attention_manim.scenes.registry import load_all
    from attention_manim.scenes.review import script_scene

    wanted, langs, options = review_request((name,), lang, model_name, sentences, focus, layer, head, layout, axes, window, devices)
    if len(wanted) != 1 or len(langs) != 1:
        raise UserError("a script is one lesson in one language", "e.g. render.py script softmax --lang ko",
                        key="script_one_lesson")
    cls = load_all()[wanted[0]]
    model = str(model_name or getattr(getattr(cls, "lesson", None), "model", None) or "toy")
    inputs = Worker().inputs(Job(scene=wanted[0], lang=langs[0], model=model, device=device, options=options))
    click.echo(format_script(script_scene(cls, inputs, name=wanted[0]), fmt), nl=False)


def format_script(script: dict, fmt: str) -> str:
    from attention_manim.scenes.i18n import Say

    if fmt == "json":
        return strict_json(script) + "\n"
    say = Say(script["lang"])

    def clock(t: float) -> str:
        return f"{int(t // 60)}:{t % 60:04.1f}"

    lines = []
    head = say("cli.script.title", scene=script["scene"], minutes=clock(script["duration"]))
    lines += [f"# {head}", "", say("cli.script.how"), ""] if fmt == "md" else [head, "", say("cli.script.how"), ""]
    for ch in script["chapters"]:
        lines += [f"## {ch['number']}. {ch['title']}", ""] if fmt == "md" else [f"{ch['number']}. {ch['title']}", ""]
        for b in ch["blocks"]:
            if fmt == "md":
                lines += [f"**{b['id']}** · {clock(b['start'])}", "", b["spoken"], ""]
            else:
                lines += [f"[{b['id']}] {clock(b['start'])}", b["spoken"], ""]
    return "\n".join(lines)


@cli.command("voices")
@click.option("--json", "as_json", is_flag=True, help="print the list as JSON")
def voices_cmd(as_json):
    """The offline voices --voice takes, their language and engine, and whether they are installed."""
    from attention_manim.voice import AUTO, VOICES
    from attention_manim.voice.engines import available

    rows = [{"name": v.name, "lang": v.lang, "engine": v.engine, "description": v.description,
             "auto": AUTO.get(v.lang) == v.name, "installed": available(v)} for v in VOICES]
    if as_json:
        click.echo(strict_json(rows))
        return
    click.echo(f"{'voice':<12} {'lang':<5} {'engine':<7} {'installed':<10} description")
    for r in rows:
        mark = " (auto)" if r["auto"] else ""
        click.echo(f"{r['name']:<12} {r['lang']:<5} {r['engine']:<7} {'yes' if r['installed'] else 'no':<10} "
                   f"{r['description']}{mark}")
    if not all(r["installed"] for r in rows):
        from attention_manim.voice.engines import INSTALL_HINT

        click.echo(f"not installed: {INSTALL_HINT}", err=True)


@cli.command("storyboard")
@click.argument("names", nargs=-1, required=True)
@review_options
@click.option("-q", "--quality", type=click.Choice(["l", "m", "h", "p", "k"]), default="m", show_default=True,
              help="the frames' size: l 480p, m 720p, h 1080p, p 1440p, k 2160p")
@click.option("--out", type=click.Path(path_type=Path), default=Path("renders"), show_default=True,
              help="frames land in OUT/storyboard/<scene>[.<lang>]/")
def storyboard_cmd(names, lang, model_name, sentences, focus, layer, head, layout, axes, window, device, devices, quality, out):
    """Key frames of SCENE... ('all': every scene) as PNG, without encoding a video: every caption
    block's last frame and every chapter's, and a labelled contact.png per lesson."""
    from attention_manim.scenes.review import review
    from attention_manim.scenes.runner import check_output_dir

    wanted, langs, options = review_request(names, lang, model_name, sentences, focus, layer, head, layout, axes, window, devices)
    check_output_dir(out)

    def done(res):
        if res.skipped:
            click.echo(f"{res.scene} {res.lang} {res.model}: skipped, {res.skipped}", err=True)
            return
        click.echo(f"{res.scene} {res.lang} {res.model}: {len(res.files) - 1} frames in {res.seconds:.1f} s", err=True)
        for f in res.files:
            click.echo(str(f))

    review("storyboard", wanted, langs, model=model_name, options=options, out=out, quality=quality,
           load=None, on_result=done)


@cli.command("lint")
@click.argument("names", nargs=-1, required=True)
@review_options
@click.option("--json", "as_json", is_flag=True, help="print one JSON object: violations, exceptions, lessons")
def lint_cmd(names, lang, model_name, sentences, focus, layer, head, layout, axes, window, device, devices, as_json):
    """Play SCENE... ('all': every scene) without drawing and check the rules of a readable frame after
    every animation (sizes, overlaps, the frame, numbers in captions, titles). Exit 1 on any violation;
    declared exceptions are listed too."""
    from attention_manim.scenes.review import RULES, review

    wanted, langs, options = review_request(names, lang, model_name, sentences, focus, layer, head, layout, axes, window, devices)
    found = []

    def done(res):
        found.extend(res.violations)
        if not as_json:
            if res.skipped:
                click.echo(f"{res.scene} {res.lang} {res.model}: skipped, {res.skipped}", err=True)
            for v in res.violations:
                click.echo(v.line())

    results = review("lint", wanted, langs, model=model_name, options=options, out=Path("."), load=None,
                     on_result=done)
    bad = [v for v in found if not v.exception]
    if as_json:
        click.echo(json.dumps({"rules": RULES, "violations": [v.to_dict() for v in bad],
                               "exceptions": [v.to_dict() for v in found if v.exception],
                               "lessons": [{"scene": r.scene, "lang": r.lang, "model": r.model,
                                            "violations": sum(not v.exception for v in r.violations),
                                            "seconds": round(r.seconds, 2), "skipped": r.skipped}
                                           for r in results]},
                              ensure_ascii=False))
    else:
        skipped = sum(r.skipped is not None for r in results)
        click.echo(f"{len(results) - skipped} lesson(s) checked: {len(bad)} violation(s), "
                   f"{len(found) - len(bad)} declared exception(s)"
                   + (f", {skipped} skipped (they do not take these inputs)" if skipped else ""), err=True)
    if bad:
        sys.exit(1)


# --- inspect / vocab / train -------------------------------------------------------------------

def pattern_table(head_trace, tokens) -> str:
    """The pattern as text: one row per query (the attending token), one column per key."""
    width = max(5, *(len(t) for t in tokens))
    head = " " * (width + 2) + " ".join(f"{t[:width]:>{width}}" for t in tokens)
    lines = [head]
    for qi, tok in enumerate(tokens):
        cells = []
        for ki in range(len(tokens)):
            cells.append(f"{'·':>{width}}" if head_trace.mask[qi, ki] else f"{head_trace.pattern[qi, ki]:>{width}.2f}")
        lines.append(f"{tok:>{width}}  " + " ".join(cells))
    return "\n".join(lines)


@cli.command("inspect")
@click.argument("sentence")
@click.option("--layer", type=int, default=None, help="only this layer (default: all)")
@click.option("--head", type=int, default=None, help="only this head (default: all)")
@click.option("--json", "as_json", is_flag=True, help="print the whole trace as one JSON object (schema in README)")
@click.option("--project-onto", "project_onto",
              help="comma-separated direction names: print each token's E and E′ projected on them")
@lang_option
@with_model_options
def inspect_cmd(sentence, layer, head, as_json, project_onto, lang, model_name, device):
    """Print the model's numbers for SENTENCE."""
    from attention_manim.scenes.i18n import Say

    from attention_manim.scenes.setting import check_directions, head_error, is_blank, layer_error

    say = Say(checked_lang(lang))
    if is_blank(sentence):
        raise UserError(f"the sentence is empty: {sentence!r}", 'for example: python render.py inspect "a fluffy blue '
                        'creature"', key="inspect_sentence_empty", sentence=sentence)
    trace = _session(model_name, device).trace(sentence)
    m = trace.model
    if layer is not None and not 0 <= layer < m.n_layers:
        raise layer_error(layer, m.n_layers)
    if head is not None and not 0 <= head < m.n_heads:
        raise head_error(head, m.n_heads)
    # every option is checked before anything is printed
    names = (list(check_directions(trace, project_onto.split(","), option="--project-onto"))
             if project_onto is not None else [])
    li = layer if layer is not None else 0
    if names:
        E = trace.project(trace.layers[li].resid_in, names)
        E2 = trace.project(trace.updated(li, head), names)
    if as_json:
        data = trace.to_dict(layer=layer, head=head)
        if names:  # E and E′ of every token along each direction (E′: after one head, or all)
            data["projections"] = {"layer": li, "head": head, "directions": names,
                                   "E": E.tolist(), "E_updated": E2.tolist()}
        click.echo(strict_json(data))
        return
    click.echo(say("cli.inspect.model", name=m.name) + f": d_model={m.d_model} n_heads={m.n_heads} "
               f"d_head={m.d_head} n_layers={m.n_layers} causal={m.causal}")
    click.echo(say("cli.inspect.tokens", tokens=" | ".join(trace.tokens)))
    layers = [layer] if layer is not None else range(m.n_layers)
    for li in layers:
        heads = [head] if head is not None else range(m.n_heads)
        for hi in heads:
            ht = trace.head(li, hi)
            role = say.role(ht.role, li, hi) if ht.role else ht.name
            click.echo("\n" + say("cli.inspect.pattern_heading", layer=li, head=hi, role=role))
            click.echo(pattern_table(ht, trace.tokens))
    if names:
        which = say("cli.inspect.one_head", head=head) if head is not None else say("cli.inspect.all_heads")
        click.echo("\n" + say("cli.inspect.projections", names=", ".join(names), layer=li, which=which))
        width = max(len(t) for t in trace.tokens)
        click.echo(" " * width + "  " + "  ".join(f"{'E·' + n:>12} {'E′·' + n:>12}" for n in names))
        for i, tok in enumerate(trace.tokens):
            click.echo(f"{tok:>{width}}  " + "  ".join(f"{E[i, j] + 0.0:>+12.2f} {E2[i, j] + 0.0:>+12.2f}".replace("-0.00", "+0.00")
                                                       for j in range(len(names))))


@cli.command("vocab")
@with_model_options
def vocab_cmd(model_name, device):
    """List the words the model knows."""
    model = _session(model_name, "cpu" if device == "auto" else device).model
    groups = None
    if model_name == "toy":
        try:
            from attention_manim.model.toy_world import vocab_groups

            groups = vocab_groups()
        except ImportError:
            groups = None
    if not groups:
        groups = {"words": sorted(model.cfg.vocab)}
    if model.real:  # subword pieces, in id order: any text can be read, no word is unknown
        groups = {"tokens": list(model.cfg.vocab)}
        click.echo(f"{model.cfg.name}: {model.cfg.vocab_size} subword tokens (any text can be read; "
                   "␣ marks a leading space, <0x..> a single byte)")
    else:
        click.echo(f"{model.cfg.name}: {model.cfg.vocab_size} tokens (case-insensitive; other punctuation is ignored)")
    for kind, words in groups.items():
        click.echo(f"\n{kind} ({len(words)}):")
        click.echo("  " + " ".join(words))


@cli.command("train")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--steps", type=int, default=None, help="default: the training script's own")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="default: assets/toy")
def train_cmd(seed, steps, out):
    """Retrain the toy world's heads (seeded, deterministic, about a minute on two cores)."""
    from attention_manim.model.train import train

    train(seed=seed, steps=steps, out=out, progress=True)


# --- heads: every head's measured role ----------------------------------------------------------

def text_width(text: str) -> int:
    """Columns a terminal gives `text` (wide East Asian characters take two)."""
    import unicodedata

    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def pad(text: str, width: int, right: bool = True) -> str:
    gap = " " * max(0, width - text_width(text))
    return gap + text if right else text + gap


def heads_table(heads, say) -> list[str]:
    """One line per head: layer, head, the standard scores, the story scores, the role (catalog words)."""
    from attention_manim.model.probes import STANDARD, STORY

    cols = [say("cli.heads.layer"), say("cli.heads.head")] + [say(f"cli.heads.columns.{k}") for k in STANDARD + STORY]
    rows = []
    for hs in heads:
        role = say(f"cli.heads.roles.{hs.role}") if hs.role else say("cli.heads.no_role")
        rows.append([str(hs.layer), str(hs.head)] + [f"{hs.scores[k]:.2f}" for k in STANDARD]
                    + [f"{hs.story[k]:.2f}" if k in hs.story else "—" for k in STORY] + [role])
    widths = [max(text_width(c), 4) for c in cols]
    split = 2 + len(STANDARD)  # a bar between the standard probes and the story probes
    lines = ["  ".join(pad(c, w) for c, w in zip(cols[:split], widths)) + " │ "
             + "  ".join(pad(c, w) for c, w in zip(cols[split:], widths[split:])) + " │ " + say("cli.heads.role")]
    for r in rows:
        lines.append("  ".join(pad(c, w) for c, w in zip(r[:split], widths)) + " │ "
                     + "  ".join(pad(c, w) for c, w in zip(r[split:-1], widths[split:])) + " │ " + r[-1])
    return lines


@cli.command("heads")
@click.option("--json", "as_json", is_flag=True,
              help="print a JSON list of {layer, head, scores: {previous_token, first_token, induction, same_word}, "
                   "role, story_scores}")
@lang_option
@with_model_options
def heads_cmd(as_json, lang, model_name, device):
    """Measure every head on standard probes and print its scores and role."""
    from attention_manim.model.probes import (LENGTH, N_SEQUENCES, STORY_PROBES, measured_heads, role_score,
                              roles_from)
    from attention_manim.scenes.i18n import Say

    say = Say(checked_lang(lang))
    model = _session(model_name, device).model
    heads = measured_heads(model)
    if as_json:
        click.echo(strict_json([hs.to_dict() for hs in heads]))
        return
    m = model.info
    click.echo(say("cli.heads.summary", name=m.name, layers=m.n_layers, heads=m.n_heads, sequences=N_SEQUENCES,
                   length=LENGTH, phrases=sum(len(v) for v in STORY_PROBES.values())))
    click.echo("")
    for line in heads_table(heads, say):
        click.echo(line)
    click.echo("\n" + say("cli.heads.legend"))
    click.echo("\n" + say("cli.heads.defaults"))
    by_ref = {(hs.layer, hs.head): hs for hs in heads}
    for role, (li, hi) in roles_from(heads).items():
        click.echo("  " + say("cli.heads.default_line", role=say(f"cli.heads.roles.{role}"), layer=li, head=hi,
                              score=role_score(by_ref[(li, hi)], role)))


# --- params: how many numbers a model holds ------------------------------------------------------

def params_table(plan, say, weights: dict | None) -> list[str]:
    """The tally as text: catalog words on the left, counts on the right (one convention: 1,572,864)."""
    rows = [(say(f"params.row.{r.what}", **r.what_params), f"{r.value:,}" if r.value else "—") for r in plan.rows]
    rows.append((say("params.row.share"), f"{plan.tally.attention_share:.1%}"))
    if weights is not None:
        rows.append((say("params.row.weights"), f"{weights['weights']:,}"))
        rows.append(("  " + say("params.row.matrices"), f"{weights['matrices']:,}"))
        if weights["vectors"]:
            rows.append(("  " + say("params.row.vectors"), f"{weights['vectors']:,}"))
        if weights["other"]:
            rows.append((say("params.row.other"), f"{weights['other']:,}"))
    width = max(text_width(w) for w, _ in rows)
    nwidth = max(len(n) for _, n in rows)
    head = pad(say("params.cli.what"), width, right=False) + "  " + pad(say("params.cli.count"), nwidth)
    return [head] + [pad(w, width, right=False) + "  " + pad(n, nwidth) for w, n in rows]


@cli.command("params")
@click.argument("model_name", metavar="MODEL")
@click.option("--json", "as_json", is_flag=True, help="print the tally as one JSON object")
@lang_option
def params_cmd(model_name, as_json, lang):
    """How many numbers MODEL holds (gpt3, toy, smollm2 or a folder), counted as the video counts."""
    from attention_manim.model.loading import BUILTINS
    from attention_manim.model.params import CONFIGS, size_config, weights_count
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.params import plan_params, tally_rows
    from attention_manim.scenes.plans.params import ParamsPlan, model_name_key

    say = Say(checked_lang(lang))
    weights = None
    if model_name in CONFIGS:
        plan = plan_params(None, model_name)
    else:
        if model_name not in BUILTINS and not Path(model_name).exists():
            raise UserError(f"unknown model {model_name!r}",
                            f"choose {', '.join((*CONFIGS, *BUILTINS))}, or a folder with config.json and weights",
                            key="params_unknown_model", model=model_name, choices=", ".join((*CONFIGS, *BUILTINS)))
        model = _session(model_name, "cpu").model
        from attention_manim.model.params import tally

        t = tally(size_config(model.info))
        plan = ParamsPlan(tally=t, rows=tally_rows(t), name_key=model_name_key(model.info.name), name=model.info.name)
        weights = weights_count(model)
    if as_json:
        out = plan.tally.to_dict()
        if weights is not None:  # what the model holds; our internal zero padding stays out
            out["weights_file"] = {k: v for k, v in weights.items() if k != "padding"}
        click.echo(json.dumps(out, ensure_ascii=False))
        return
    c = plan.config
    name = say(plan.name_key) if plan.name_key else plan.name
    key = "params.cli.heading_shared" if plan.shared_kv else "params.cli.heading"
    click.echo(say(key, name=name, d_model=c.d_model, heads=c.n_heads, kv=c.kv_heads, d_head=c.d_head,
                   layers=c.n_layers, count=c.n_layers, vocab=c.vocab_size, ctx=c.n_ctx))
    click.echo("")
    for line in params_table(plan, say, weights):
        click.echo(line)


# --- explore / present: the web page and the classroom presenter (explorer/cli.py) ---------------
from attention_manim.explorer.cli import explore_cmd, present_cmd  # noqa: E402

cli.add_command(explore_cmd)
cli.add_command(present_cmd)


def error_language(argv) -> str:
    """The language a command's errors are shown in: its --lang (the first of a list), else English."""
    from attention_manim.scenes.i18n import LANGUAGES

    args = list(sys.argv[1:] if argv is None else argv)
    for i, a in enumerate(args):
        value = args[i + 1] if a == "--lang" and i + 1 < len(args) else a[7:] if a.startswith("--lang=") else None
        if value is not None:
            first = value.split(",")[0].strip()
            return first if first in LANGUAGES else "en"
    return "en"


def main(argv=None):
    try:
        cli.main(args=argv, prog_name="render.py", standalone_mode=False)
    except UserError as e:
        from attention_manim.scenes.i18n import localized_error

        message, hint = localized_error(e, error_language(argv))
        click.echo(f"error: {message}", err=True)
        if hint:
            click.echo(f"hint: {hint}", err=True)
        sys.exit(2)
    except click.exceptions.Abort:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)


if __name__ == "__main__":
    main()
