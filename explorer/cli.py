"""`render.py explore` (the web page) and `render.py present` (a chapter-by-chapter folder for class)."""

from __future__ import annotations

from pathlib import Path

import click

from attention_manim.model.errors import UserError


@click.command("explore")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
@click.option("--model", "folders", multiple=True,
              help="a model folder to offer besides toy and smollm2 (repeat for more)")
@click.option("--device", default="auto", show_default=True, help="auto (CUDA when present), cpu or cuda")
@click.option("--renders", type=click.Path(path_type=Path), default=Path("renders/explorer"), show_default=True,
              help="where the page's renders are written")
@click.option("--open", "open_browser", is_flag=True, help="open the page in a browser")
def explore_cmd(port, folders, device, renders, open_browser):
    """Start the explorer on http://127.0.0.1:PORT/ (try sentences, heads, render a clip)."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise UserError("the explorer needs fastapi and uvicorn", "install them: pip install -e .",
                        key="explorer_not_installed") from None
    from attention_manim.scenes.runner import check_output_dir

    from .app import serve
    from .core import Models

    models = Models.from_args(folders, device)
    check_output_dir(renders)
    serve(models, port=port, renders=renders, open_browser=open_browser, on_ready=lambda m: click.echo(m, err=True))


@click.command("present", context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("scene")
@click.option("-q", "--quality", type=click.Choice(["l", "m", "h", "p", "k"]), default="l", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["mp4", "webm"]), default="mp4", show_default=True)
@click.option("--lang", default="en", show_default=True, help="en, ko or pt")
@click.option("--out", type=click.Path(path_type=Path), default=Path("renders"), show_default=True,
              help="output folder: the clips land in OUT/<quality>/, the presenter in OUT/<quality>/<scene>.present/")
@click.option("--open", "open_browser", is_flag=True, help="open the presenter when it is written")
@click.pass_context
def present_cmd(ctx, scene, quality, fmt, lang, out, open_browser):
    """Render SCENE's chapters and write a folder that presents them one by one (space / arrows / F).

    Every other option of `render` (--sentence, --layer, --head, --model, --theme...) is passed on."""
    from attention_manim.scenes.i18n import check_language
    from attention_manim.scenes.runner import INDEX, clip_stem, quality_dir_name

    from .presenter import build_presenter

    check_language(lang)
    for bad in ("--chapters", "-j", "--jobs", "--backend"):
        if bad in ctx.args:
            raise UserError(f"present does not take {bad}", "it renders one scene, with its chapters",
                            key="present_option", option=bad)
    args = [scene, "-q", quality, "--format", fmt, "--lang", lang, "--out", str(out), "--chapters", *ctx.args]
    # the `render` command of the group this one belongs to (the CLI imports this module, not back)
    render_cmd = ctx.find_root().command.get_command(ctx, "render")
    render_cmd.main(args=args, prog_name="render.py present", standalone_mode=False)
    stem = clip_stem(scene, lang)
    index = Path(out) / quality_dir_name(quality) / stem / INDEX
    if not index.is_file():
        raise UserError(f"no chapter index at {index}", "render the scene again with `python render.py present`",
                        key="present_no_index", path=index)
    page = build_presenter(index, Path(out) / quality_dir_name(quality) / f"{stem}.present")
    click.echo(str(page))
    click.echo(f"open {page.resolve().as_uri()} (space or → next chapter, ← back, F full screen)", err=True)
    if open_browser:
        click.launch(str(page))
