"""The explorer in a notebook: `explore(...)` and `render_clip(...)` display inline (Jupyter's
display protocol: objects with `_repr_html_`). The HTML is self-contained: inline SVG and CSS, no
script, no network, so it shows in Jupyter, VS Code and an exported HTML file alike."""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path

from . import core

def _session(name: str, device: str = "cpu"):
    from attention_manim.model.session import open_session

    return open_session(name, device)


def _fmt(x: float) -> str:
    return f"{x:.4f}"


@dataclass
class PatternView:
    """One head's attention pattern for one sentence (`view.data` holds the numbers the page shows)."""

    data: dict
    layout: str = "video"
    lang: str = "en"
    strings: dict = field(default_factory=dict)

    @property
    def tokens(self) -> list[str]:
        return self.data["tokens"]

    @property
    def pattern(self) -> list[list[float]]:
        return self.data["pattern_head"]["pattern"]

    def t(self, name: str, /, **params) -> str:
        return self.strings.get(name, name).format(**params)

    def _repr_html_(self) -> str:
        d, h = self.data, self.data["pattern_head"]
        toks, n = self.tokens, len(self.tokens)
        cell = max(22, min(48, 480 // n))
        lw = 14 + 8 * max(len(s) for s in toks)
        top, left = lw + 10, lw + 8
        W, H = left + n * cell + 6, top + n * cell + 6
        paper = self.layout == "paper"
        e = html.escape
        parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
                 f'role="group" aria-label="{e(self.t("pattern_heading", layer=d["layer"], head=d["head"]))}" '
                 'style="background:#000;font-family:serif">']
        for i, s in enumerate(toks):
            cx = left + i * cell + cell / 2
            col, row = ("#5CD0B3", "#FFFF00") if paper else ("#FFFF00", "#5CD0B3")
            parts.append(f'<text x="{cx:.1f}" y="{top - 5}" fill="{col}" font-size="13" '
                         f'transform="rotate(-60 {cx:.1f} {top - 5})">{e(s)}</text>')
            parts.append(f'<text x="{left - 5}" y="{top + i * cell + cell / 2 + 4:.1f}" fill="{row}" font-size="13" '
                         f'text-anchor="end">{e(s)}</text>')
        for r in range(n):
            for c in range(n):
                q, k = (r, c) if paper else (c, r)
                masked = bool(h["mask"][q][k])
                w = 0.0 if masked else h["pattern"][q][k]
                label = (self.t("cell_masked", query=toks[q], key=toks[k]) if masked else
                         self.t("cell", query=toks[q], key=toks[k], weight=_fmt(w)))
                tip = label if masked else (f"{label}\n{self.t('detail_qk')} = {_fmt(h['qk'][q][k])}\n"
                                            f"{self.t('detail_score', d_head=d['d_head'])} = {_fmt(h['scores'][q][k])}")
                x, y = left + c * cell, top + r * cell
                dot = (f'<circle cx="{x + cell / 2:.1f}" cy="{y + cell / 2:.1f}" r="{0.45 * w ** 0.5 * cell:.2f}" '
                       'fill="#fff"/>' if not masked and w > 0.002 else "")
                parts.append(f'<g class="cell" tabindex="0" role="img" aria-label="{e(label)}" data-q="{q}" data-k="{k}" '
                             f'data-weight="{w!r}"><title>{e(tip)}</title><rect x="{x + 1}" y="{y + 1}" '
                             f'width="{cell - 2}" height="{cell - 2}" fill="none" stroke="#444"/>{dot}</g>')
        parts.append("</svg>")
        heading = e(self.t("pattern_heading", layer=d["layer"], head=d["head"]))
        role = e(d.get("role_label") or "")
        nxt = ", ".join(f"{e(x['token'])} {x['p']:.1%}" for x in d["next_token"][:5])
        return (f'<div class="attention-manim-pattern" style="background:#000;color:#fff;padding:8px;'
                f'font-family:serif;display:inline-block"><div>{heading}</div><div style="color:#888">{role}</div>'
                f'{"".join(parts)}<div style="color:#888">{e(self.t("next_heading"))}: {nxt}</div></div>')


def explore(sentence: str, model: str = "toy", layer: int | None = None, head: int | None = None,
            layout: str = "video", lang: str = "en") -> PatternView:
    """The pattern of one head (default: the model's adjectives→nouns head, else layer 0 head 0)."""
    from attention_manim.model.errors import UserError
    from attention_manim.scenes.i18n import Say, check_language

    from .app import page_strings

    check_language(lang)
    if layout not in ("video", "paper"):
        raise UserError(f"unknown layout {layout!r}", "use video or paper", key="unknown_layout", layout=layout)
    if model not in core.BUILTIN_MODELS and not Path(model).exists():
        raise UserError(f"unknown model {model!r}", f"choose {', '.join(core.BUILTIN_MODELS)} or a model folder",
                        key="notebook_unknown_model", model=model, builtins=", ".join(core.BUILTIN_MODELS))
    session = _session(model)
    session.info  # noqa: B018  (a real model's head roles, measured once: the head the clips use)
    trace = session.trace(core.check_sentence(sentence))
    data = core.head_view(trace, layer, head, default=session.default_head())
    role = data["pattern_head"]["role"]
    data["role_label"] = Say(lang).role(role, data["layer"], data["head"]) if role else ""
    return PatternView(data, layout, lang, page_strings(lang))


@dataclass
class Clip:
    """A rendered clip; in a notebook it shows as a <video> (inline data for clips up to 25 MB)."""

    path: Path
    files: list[Path]
    duration: float
    inline_limit: int = 25 * 2 ** 20

    def _repr_html_(self) -> str:
        mime = {".mp4": "video/mp4", ".webm": "video/webm", ".gif": "image/gif", ".png": "image/png"}[self.path.suffix]
        if self.path.stat().st_size <= self.inline_limit:
            src = f"data:{mime};base64," + base64.b64encode(self.path.read_bytes()).decode("ascii")
        else:
            src = html.escape(str(self.path))
        if mime.startswith("image/"):
            return f'<img src="{src}" alt="{html.escape(self.path.name)}" style="max-width:100%">'
        return f'<video controls style="max-width:100%" src="{src}"></video>'


def render_clip(scene: str, sentence: str | None = None, model: str | None = None, *, quality: str = "l",
                lang: str = "en", fmt: str = "mp4", out: Path | str = Path("renders/notebook"),
                layer: int | None = None, head: int | None = None, layout: str = "video", theme: str = "dark",
                focus: str | None = None, chapters: bool = False, extra_config: dict | None = None,
                voice: str | None = None, voice_dir: Path | str | None = None) -> Clip:
    """Render `scene` as `render.py` would (files under OUT/<quality>/) and return it for display.
    `voice="auto"` (or a name from `render.py voices`) narrates it; `voice_dir` holds your recordings."""
    from attention_manim.scenes.i18n import check_language
    from attention_manim.scenes.registry import load_all, unknown_scene_error
    from attention_manim.scenes.runner import render_scene
    from attention_manim.scenes.setting import SceneInputs

    check_language(lang)
    scenes = load_all()
    if scene not in scenes:
        raise unknown_scene_error(scene, sorted(scenes))
    name = model or getattr(getattr(scenes[scene], "lesson", None), "model", None) or "toy"
    session = _session(name)
    inputs = SceneInputs(tracer=session, model=session.info,
                         sentences=[core.check_sentence(sentence)] if sentence is not None else None,
                         focus=focus, layer=layer, head=head, theme=theme, layout=layout, lang=lang,
                         voice=voice, voice_dir=str(voice_dir) if voice_dir else None)
    if voice or voice_dir:
        from attention_manim.scenes.batch import Job, check_voices

        check_voices([Job(scene=scene, lang=lang, fmt=fmt, voice=voice, voice_dir=str(voice_dir) if voice_dir else None)])
    result = render_scene(scenes[scene], inputs, name=scene, quality=quality, fmt=fmt, out=Path(out),
                          chapters=chapters, extra_config=extra_config)
    return Clip(Path(result.files[0]), [Path(f) for f in result.files], result.duration)
