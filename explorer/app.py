"""The explorer's web application (FastAPI): a page, a JSON API over the traces, a render queue.

Every error a user can cause comes back as 4xx `{"error": {"message", "hint", ...}}` in the CLI's
words; anything else is a 500 with a short message (never a traceback). The page names models by
id from a fixed list; it never sends a path.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel

from attention_manim.model.errors import UserError

from . import core
from .jobs import FORMATS, QUALITIES, RenderQueue

STATIC = Path(__file__).resolve().parent / "static"
MAX_FITS = 4096  # answers kept of "does this lesson take this sentence and head?"
log = logging.getLogger("explorer")


class RenderRequest(BaseModel):
    scene: str
    model: str = "toy"
    sentence: str
    layer: int | None = None
    head: int | None = None
    quality: str = "l"
    lang: str = "en"
    format: str = "mp4"
    layout: str = "video"
    voice: str | None = None  # "auto" or a voice name: the clip speaks its captions


def page_strings(lang: str) -> dict:
    """The `explorer.*` catalog of one language, flat ({"title": ..., "render.button": ...})."""
    from attention_manim.scenes.i18n import check_language, load_catalog

    cat = load_catalog(check_language(lang))
    return {k[len("explorer."):]: v for k, v in cat.items() if k.startswith("explorer.")}


def head_note(lang: str, choice, layer: int, head: int) -> str:
    """Why the page opened on this head, when it is a fallback for the lessons' own role (the note the
    lessons show, scenes/plans/head_choice.py); "" for any other head or a head of the role itself."""
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.head_choice import note_text

    if choice is None or choice.ref != (layer, head):
        return ""
    return note_text(Say(lang), choice) or ""


def role_label(lang: str, role: str, layer: int, head: int) -> str:
    from attention_manim.scenes.i18n import Say

    return Say(lang).role(role, layer, head) if role else ""


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
MAX_BODY_BYTES = 64 * 1024  # a render request is a few hundred bytes


def split_host(host: str) -> tuple[str, str]:
    """("name", "port") of a Host header ("127.0.0.1:8765", "[::1]:8765", "localhost")."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        return (host[: end + 1], host[end + 2:]) if end > 0 else (host, "")
    name, _, port = host.partition(":")
    return name, port


def host_allowed(host: str, names, port: int | None) -> bool:
    name, got_port = split_host(host)
    return name in names and (port is None or got_port in ("", str(port)))


def create_app(models: core.Models | None = None, renders: Path = Path("renders/explorer"),
               extra_config: dict | None = None, *, hosts=LOOPBACK_NAMES, port: int | None = None) -> FastAPI:
    """The application. `extra_config` goes to every render (tests: a tiny frame). It answers only
    requests addressed to `hosts` (on `port` when given): a page of another site that resolves its
    own name to 127.0.0.1 (DNS rebinding) gets 403, and so does a state-changing request sent from
    another origin."""
    models = models or core.Models.from_args()
    renders = Path(renders).resolve()
    renders.mkdir(parents=True, exist_ok=True)

    @asynccontextmanager
    async def lifespan(app):
        yield
        await anyio.to_thread.run_sync(app.state.queue.close)  # the render worker stops with the server

    app = FastAPI(title="attention-manim explorer", docs_url=None, redoc_url=None, openapi_url=None,
                  lifespan=lifespan)

    def inputs_for(model_id: str, sentence: str, layer, head, lang="en", layout="video", voice=None):
        from attention_manim.scenes.setting import SceneInputs

        session = models.session(model_id)
        core.check_sentence(sentence)
        return SceneInputs(tracer=session, model=session.info, sentences=[sentence.strip()],
                           layer=layer, head=head, layout=layout, lang=lang, voice=voice)

    def render_spec(job):
        """What the worker process renders for `job` (checked here first: the scene, the model, the
        sentence); the worker opens the model's session itself."""
        from attention_manim.scenes.batch import Job as ClipJob, options_tuple
        from attention_manim.scenes.registry import load_all, unknown_scene_error

        scenes = load_all()
        if job.scene not in scenes:
            raise unknown_scene_error(job.scene, sorted(scenes))
        choice = models.check(job.model)
        sentence = core.check_sentence(job.sentence)
        options = {"sentences": [sentence], "layer": job.layer, "head": job.head, "layout": job.layout}
        return ClipJob(scene=job.scene, lang=job.lang, quality=job.quality, fmt=job.fmt,
                       chapters=getattr(scenes[job.scene], "lesson", None) is not None, model=choice.source,
                       device=models.device, options=options_tuple(options),
                       extra_config=tuple(sorted((job.extra_config or {}).items())), voice=job.voice)

    queue = RenderQueue(models, renders, render_spec)
    app.state.queue = queue
    app.state.models = models

    allowed = tuple(h.lower() for h in hosts)

    @app.middleware("http")
    async def guard(request: Request, call_next):
        if not host_allowed(request.headers.get("host", ""), allowed, port):
            return JSONResponse({"error": {"message": "this server answers only its own address",
                                           "hint": "open it as http://127.0.0.1:PORT/"}}, status_code=403)
        if request.method not in ("GET", "HEAD", "OPTIONS"):
            origin = request.headers.get("origin")
            if origin is not None and not (origin.lower().startswith("http://")
                                           and host_allowed(origin[7:].rstrip("/"), allowed, port)):
                return JSONResponse({"error": {"message": "requests from other sites are refused",
                                               "hint": "use the explorer's own page"}}, status_code=403)
            if request.headers.get("sec-fetch-site") == "cross-site":
                return JSONResponse({"error": {"message": "requests from other sites are refused",
                                               "hint": "use the explorer's own page"}}, status_code=403)
            length = request.headers.get("content-length", "0" if request.method == "DELETE" else None)
            if length is None or not length.isdigit():
                return JSONResponse({"error": {"message": "the request does not say its length",
                                               "hint": "send a Content-Length"}}, status_code=411)
            if int(length) > MAX_BODY_BYTES:
                return JSONResponse({"error": {"message": f"the request is {int(length):,} bytes; at most "
                                               f"{MAX_BODY_BYTES:,} are read", "hint": "send a render request only"}},
                                    status_code=413)
        return await call_next(request)

    @app.exception_handler(UserError)
    async def user_error(request: Request, e: UserError):
        # in the page's language: ?lang= on a GET, the body's "lang" on a POST
        lang = request.query_params.get("lang")
        if lang is None and request.method == "POST":
            try:
                lang = (await request.json()).get("lang")
            except Exception:  # not JSON: English
                lang = None
        return JSONResponse({"error": core.error_body(e, lang or "en")}, status_code=getattr(e, "status", 400))

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, e: RequestValidationError):
        where = ", ".join(".".join(str(p) for p in err.get("loc", ())[1:]) or "request" for err in e.errors()[:3])
        return JSONResponse({"error": {"message": f"bad value for {where}", "hint": "check the form's fields"}},
                            status_code=422)

    @app.exception_handler(Exception)
    async def crash(request: Request, e: Exception):
        log.exception("explorer request failed")
        return JSONResponse({"error": {"message": f"the server could not answer ({type(e).__name__})",
                                       "hint": "see the server's log"}}, status_code=500)

    @app.get("/")
    def index():
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    app.mount("/renders", StaticFiles(directory=renders), name="renders")

    @app.get("/api/config")
    def config():
        from attention_manim.scenes.i18n import LANGUAGES

        from attention_manim.voice import AUTO, VOICES
        from attention_manim.voice.engines import available

        return {"models": models.ids, "languages": list(LANGUAGES), "qualities": list(QUALITIES),
                "formats": list(FORMATS),
                "voices": {lang: available(next(v for v in VOICES if v.name == name)) for lang, name in AUTO.items()}, "max_chars": core.MAX_SENTENCE_CHARS, "max_tokens": core.MAX_TOKENS}

    @app.get("/api/strings")
    def strings(lang: str = "en"):
        return page_strings(lang)

    @app.get("/api/model")
    def model_info(model: str = "toy"):
        m = models.get(model)
        info = m.info
        example = info.examples.get("fluffy_blue_creature") or next(iter(info.examples.values()), "")
        return {"id": model, "name": info.name, "n_layers": info.n_layers, "n_heads": info.n_heads,
                "d_head": info.d_head, "d_model": info.d_model, "causal": info.causal, "real": info.real,
                "example": example, "examples": info.examples}

    @app.get("/api/head")
    def head(sentence: str, model: str = "toy", layer: int | None = None, head: int | None = None,
             lang: str = "en"):
        trace = models.trace(model, sentence)
        view = core.head_view(trace, layer, head, default=models.default_head(model))
        view["role_label"] = role_label(page_lang(lang), view["pattern_head"]["role"], view["layer"], view["head"])
        view["head_note"] = head_note(page_lang(lang), models.session(model).head_choice(), view["layer"], view["head"])
        return view

    @app.get("/api/overview")
    def overview(sentence: str, model: str = "toy"):
        return core.overview(models.trace(model, sentence))

    @app.get("/api/vocab")
    def vocab(model: str = "toy"):
        return core.vocabulary(models.get(model))

    @app.get("/api/scenes")
    def scenes(sentence: str, model: str = "toy", layer: int | None = None, head: int | None = None,
               lang: str = "en"):
        """The lessons whose plans accept this sentence, model and head (each checked as render would)."""
        from attention_manim.scenes.lesson import describe
        from attention_manim.scenes.registry import load_all

        lang = page_lang(lang)
        models.trace(model, sentence)  # the sentence's own errors first
        inputs = inputs_for(model, sentence, layer, head)
        out = []
        for name, cls in sorted(load_all().items()):
            lesson = getattr(cls, "lesson", None)
            if lesson is None:
                continue
            ok, why = fits(lesson, inputs)
            if isinstance(why, UserError):  # said in the page's language
                from attention_manim.scenes.i18n import localized_error

                why = localized_error(why, lang)[0]
            out.append({"name": name, "description": describe(name, lang), "fits": ok, "why": why,
                        "chapters": len(lesson.all_chapters())})
        return {"scenes": out}

    fit_cache: OrderedDict = OrderedDict()  # bounded: the oldest answers go first

    def fits(lesson, inputs):
        key = (lesson.name, inputs.model.name, tuple(inputs.sentences), inputs.layer, inputs.head)
        if key in fit_cache:
            fit_cache.move_to_end(key)
        else:
            while len(fit_cache) >= MAX_FITS:
                fit_cache.popitem(last=False)
            try:
                lesson.plans(lesson.setting(inputs))
                fit_cache[key] = (True, "")
            except UserError as e:
                fit_cache[key] = (False, e)
            except Exception as e:  # a plan that cannot take this input is not offered
                log.warning("plan %s failed: %r", lesson.name, e)
                fit_cache[key] = (False, type(e).__name__)
        return fit_cache[key]

    def page_lang(lang: str) -> str:
        from attention_manim.scenes.i18n import check_language

        return check_language(lang)

    @app.post("/api/render")
    def render(req: RenderRequest):
        from attention_manim.scenes.registry import load_all, unknown_scene_error

        scenes = load_all()
        if req.scene not in scenes:
            raise unknown_scene_error(req.scene, sorted(scenes))
        if req.quality not in QUALITIES:
            raise UserError(f"unknown quality {req.quality!r}", f"choose one of {', '.join(QUALITIES)}",
                            key="explorer_unknown_quality", quality=req.quality, choices=", ".join(QUALITIES))
        if req.format not in FORMATS:
            raise UserError(f"unknown format {req.format!r}", f"choose one of {', '.join(FORMATS)}",
                            key="unknown_format", format=req.format, choices=", ".join(FORMATS))
        page_lang(req.lang)
        voice = req.voice or None
        if voice:  # a known voice for the page's language, its engine installed: said before queueing
            from attention_manim.scenes.batch import Job as ClipJob, check_voices

            check_voices([ClipJob(scene=req.scene, lang=req.lang, fmt=req.format, voice=voice)])
        trace = models.trace(req.model, req.sentence)
        if req.layer is not None or req.head is not None:
            core.check_head(trace, req.layer, req.head, models.default_head(req.model))
        job = queue.submit(dict(scene=req.scene, model=req.model, sentence=req.sentence.strip(), layer=req.layer,
                                head=req.head, quality=req.quality, lang=req.lang, fmt=req.format,
                                layout=req.layout, voice=voice, extra_config=extra_config))
        return queue.status(job.id)

    @app.get("/api/render/{job_id}")
    def render_status(job_id: str):
        return queue.status(job_id)

    @app.get("/api/queue")
    def render_queue():
        return queue.queue()

    @app.delete("/api/render/{job_id}")
    def cancel_render(job_id: str):
        return queue.cancel(job_id)

    return app


def serve(models: core.Models, host: str = "127.0.0.1", port: int = 8765, renders: Path = Path("renders/explorer"),
          open_browser: bool = False, on_ready=print) -> None:
    import uvicorn

    names = LOOPBACK_NAMES if host in ("0.0.0.0", "::") else tuple(dict.fromkeys((*LOOPBACK_NAMES, host.lower())))
    app = create_app(models, renders, hosts=names, port=port)
    url = f"http://{host}:{port}/"
    config = uvicorn.Config(app, host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)

    def announce():
        while not server.started:
            time.sleep(0.05)
        on_ready(f"explorer running at {url}  (Ctrl+C stops it)")
        if open_browser:
            import webbrowser

            webbrowser.open(url)

    threading.Thread(target=announce, daemon=True).start()
    server.run()
