"""A self-contained folder that presents a lesson chapter by chapter (no server, no network).

`build_presenter(index_json, dest)` reads the chapter index `render_scene(..., chapters=True)` wrote
(`{"scene", "lang", "quality", "format", "clip", "duration", "chapters": [{"number", "key", "title",
"start", "duration", "file", "captions": [{"start", "end", "text"}]}]}`) and writes into `dest`:
`index.html` (the index inlined: a page opened from file:// may not fetch files), `present.js`,
`present.css` and a copy of every chapter clip. The page plays one chapter, holds its last frame,
and goes on with space / → / PageDown, back with ← / PageUp, F for full screen.
"""

from __future__ import annotations

import html
import json
import shutil
from pathlib import Path

FILES = Path(__file__).resolve().parent / "presenter_files"


def build_presenter(index_json: Path, dest: Path, strings: dict | None = None) -> Path:
    """Write the presenter folder; returns its index.html."""
    index_json = Path(index_json)
    index = json.loads(index_json.read_text(encoding="utf-8"))
    strings = strings or presenter_strings(index.get("lang", "en"))
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for ch in index["chapters"]:
        src = index_json.parent / ch["file"]
        if src.is_file():
            shutil.copyfile(src, dest / Path(ch["file"]).name)
        vtt = index_json.parent / ch.get("vtt", "")
        if ch.get("vtt") and vtt.is_file():  # for a course platform; the page itself carries its cues inline
            shutil.copyfile(vtt, dest / vtt.name)
    for name in ("present.js", "present.css"):
        shutil.copyfile(FILES / name, dest / name)
    data = json.dumps({"index": index, "strings": strings}, ensure_ascii=False).replace("</", "<\\/")
    page = (FILES / "index.html").read_text(encoding="utf-8")
    page = page.replace("{{lang}}", html.escape(index.get("lang", "en")))
    page = page.replace("{{title}}", html.escape(strings.get("title", index["scene"]).format(scene=index["scene"])))
    page = page.replace("{{data}}", data)
    out = dest / "index.html"
    out.write_text(page, encoding="utf-8")
    return out


def presenter_strings(lang: str) -> dict:
    from attention_manim.scenes.i18n import Say

    say = Say(lang)
    keys = ("title", "chapter_of", "help", "previous", "next", "fullscreen", "captions", "ended", "missing")
    return {k: say.catalog[f"explorer.presenter.{k}"] for k in keys}
