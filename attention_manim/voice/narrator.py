"""What a clip says, block by block: synthesized by a voice, or the teacher's own recording.

A lesson's caption blocks have ids (`NN_<chapter>_KK`: chapter number, chapter key, block number in
the chapter; `render.py script` prints them). For each block the narrator gives a `Speech`: a 48 kHz
mono wav, trimmed of silence at both ends and levelled, and its duration, which the stage makes the
block last at least.

Synthesized speech is cached by (engine, engine version, voice, text), verified by sha256 before it
is reused, so a second render of a clip speaks nothing again.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from attention_manim.model.errors import UserError

from .audio import RATE, AudioError, integrated_loudness, read_audio, read_wav, trim_silence, write_wav
from .engines import Voice, engine_of, engine_version, pick_voice

RECORDING_TYPES = (".wav", ".flac", ".mp3", ".m4a", ".ogg")
CACHE_FORMAT = 1
BLOCK_LUFS = -18.0  # each block is levelled to this; the whole clip is normalized at the end
SPOKEN_CHARS_PER_S = {"en": 14.0, "pt": 14.0, "ko": 6.0}  # a calm lecture pace, for "too long" warnings
TOO_LONG = 2.0  # a recording this many times longer than its words suggest (plus 3 s) is reported

STATS = {"synthesized": 0, "from_cache": 0, "recorded": 0}  # this process's counts (tests, benchmarks)
_stats_lock = threading.Lock()


def _count(what: str) -> None:
    with _stats_lock:
        STATS[what] += 1


@dataclass
class Speech:
    block: str
    text: str  # the words spoken (the caption's spoken form)
    path: Path  # mono 16-bit 48 kHz wav
    duration: float  # seconds
    source: str  # "voice" or "recording"


def speech_cache_dir() -> Path:
    """$ATTENTION_MANIM_SPEECH_CACHE, else `speech/` in the suite's cache folder."""
    import os

    from attention_manim.model.places import cache_root

    env = os.environ.get("ATTENTION_MANIM_SPEECH_CACHE")
    return Path(env) if env else cache_root() / "speech"


def level(samples: np.ndarray, target: float = BLOCK_LUFS) -> np.ndarray:
    loud = integrated_loudness(samples)
    if not np.isfinite(loud):  # shorter than 0.4 s: level by RMS instead
        rms = float(np.sqrt(np.mean(samples.astype(np.float64) ** 2)))
        if rms <= 0:
            return samples
        loud = 20 * np.log10(rms) - 0.7
    gain = 10 ** ((target - loud) / 20)
    peak = float(np.abs(samples).max()) * gain
    if peak > 0.95:  # the final limiter handles true peaks; here only keep clear of clipping
        gain *= 0.95 / peak
    return (samples * gain).astype(np.float32)


class Narrator:
    """Speech for the blocks of one clip: `speak(block_id, spoken_text)` → Speech or None (silent)."""

    def __init__(self, lang: str, voice: str | None = None, voice_dir: str | Path | None = None,
                 cache_dir: Path | None = None):
        self.lang = lang
        self.voice: Voice | None = pick_voice(voice, lang) if voice else None
        if self.voice is not None:
            engine_of(self.voice).check()  # a missing engine is said before anything renders
        self.cache_dir = Path(cache_dir) if cache_dir else speech_cache_dir()
        self.voice_dir = Path(voice_dir) if voice_dir else None
        self.recordings: dict[str, Path] = {}
        if self.voice_dir is not None:
            self.recordings = find_recordings(self.voice_dir)
        self.used: set[str] = set()
        self.notes: list[str] = []  # warnings for the user (missing or overlong recordings)
        self.spoken: list[Speech] = []
        self._worker = None  # one background thread for speak_later

    @property
    def speaks(self) -> bool:
        return self.voice is not None or self.voice_dir is not None

    def describe(self) -> dict:
        """What index.json and the render cache record about who spoke."""
        return {"voice": self.voice.name if self.voice else None,
                "engine": self.voice.engine if self.voice else None,
                "recordings": str(self.voice_dir) if self.voice_dir else None}

    # --- one block ---------------------------------------------------------------------------------
    def speak_later(self, block: str, text: str):
        """`speak` in the narrator's one background thread, as a Future: the block's animations render
        while its speech is synthesized (onnxruntime and espeak-ng run outside the GIL); the block asks
        for the result at its end, when it needs the speech's length. One thread keeps blocks in order."""
        if self._worker is None:
            from concurrent.futures import ThreadPoolExecutor

            self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="narrator")
        return self._worker.submit(self.speak, block, text)

    def speak(self, block: str, text: str) -> Speech | None:
        if not text.strip():
            return None
        rec = self.recordings.get(block)
        if rec is not None:
            self.used.add(block)
            speech = self._recording(block, text, rec)
        elif self.voice is not None:
            if self.voice_dir is not None:
                self.notes.append(f"no recording for block {block}: spoken by {self.voice.name}")
            speech = self._synthesized(block, text)
        else:
            self.notes.append(f"no recording for block {block}: left silent")
            return None
        self.spoken.append(speech)
        return speech

    def _recording(self, block: str, text: str, path: Path) -> Speech:
        try:
            samples = trim_silence(read_audio(path))
        except AudioError as e:
            raise UserError(f"recording {path}: {e}", "record it again, or remove it to leave the block to the voice",
                            key="recording_unusable", path=path, problem=e) from None
        samples = level(samples)
        out = self._cache_path("recording", hashlib.sha256(path.read_bytes()).hexdigest())
        if not self._valid(out):
            self._store(out, samples, text)
        duration = len(samples) / RATE
        expected = len(text) / SPOKEN_CHARS_PER_S.get(self.lang, 12.0)
        if duration > TOO_LONG * expected + 3.0:
            self.notes.append(f"recording {path.name} lasts {duration:.1f} s; its words suggest about "
                              f"{expected:.0f} s (is it the right block?)")
        _count("recorded")
        return Speech(block, text, out, duration, "recording")

    def _synthesized(self, block: str, text: str) -> Speech:
        v = self.voice
        key = json.dumps([CACHE_FORMAT, v.engine, engine_version(v), v.engine_voice, v.engine_lang, text],
                         ensure_ascii=False)
        out = self._cache_path(v.engine, hashlib.sha256(key.encode()).hexdigest())
        if self._valid(out):
            _count("from_cache")
        else:
            samples = engine_of(v).speak(v, text)
            try:
                samples = trim_silence(samples)
            except AudioError:
                raise UserError(f"the voice {v.name} said nothing for block {block}: {text!r}", key="voice_silent",
                                voice=v.name, block=block, text=text) from None
            self._store(out, level(samples), text)
            _count("synthesized")
        samples, rate = read_wav(out)
        return Speech(block, text, out, len(samples) / rate, "voice")

    # --- the cache -----------------------------------------------------------------------------------
    def _cache_path(self, kind: str, digest: str) -> Path:
        return self.cache_dir / kind / digest[:2] / f"{digest}.wav"

    @staticmethod
    def _valid(path: Path) -> bool:
        """A cached wav is used only if its sidecar's sha256 matches its bytes."""
        meta = path.with_suffix(".json")
        try:
            want = json.loads(meta.read_text())["sha256"]
            return hashlib.sha256(path.read_bytes()).hexdigest() == want
        except (OSError, ValueError, KeyError, TypeError):
            return False

    @staticmethod
    def _store(path: Path, samples: np.ndarray, text: str) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_wav(path, samples)
        meta = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest(), "seconds": round(len(samples) / RATE, 3),
                "text": text}
        tmp = path.with_name(f".{path.stem}.json.part")
        tmp.write_text(json.dumps(meta, ensure_ascii=False))
        tmp.replace(path.with_suffix(".json"))

    # --- after the clip --------------------------------------------------------------------------------
    def check_all_used(self, blocks: list[str]) -> None:
        """Recordings named after no block of this clip are a mistake (a typo, another lesson's)."""
        unknown = sorted(set(self.recordings) - set(blocks))
        if unknown:
            import difflib

            close = difflib.get_close_matches(unknown[0], blocks, n=1)
            listed = ", ".join(unknown[:5]) + (" …" if len(unknown) > 5 else "")
            if close:
                raise UserError(f"{len(unknown)} recording(s) in {self.voice_dir} name no block of this clip: {listed}",
                                f"did you mean {close[0]}? render.py script LESSON --lang {self.lang} lists the block ids",
                                key="recordings_unused_close", count=len(unknown), folder=self.voice_dir, names=listed,
                                close=close[0], lang=self.lang)
            raise UserError(f"{len(unknown)} recording(s) in {self.voice_dir} name no block of this clip: {listed}",
                            f"render.py script LESSON --lang {self.lang} lists the block ids", key="recordings_unused",
                            count=len(unknown), folder=self.voice_dir, names=listed, lang=self.lang)


def find_recordings(folder: Path) -> dict[str, Path]:
    """{block id: file} of a recordings folder; a missing folder, a block recorded twice or a file of
    another kind is a UserError."""
    if not folder.is_dir():
        raise UserError(f"no recordings folder {str(folder)!r}",
                        "--voice-dir takes a folder of recordings named by block id (render.py script lists them)",
                        key="recordings_no_folder", folder=str(folder))
    out: dict[str, Path] = {}
    for p in sorted(folder.iterdir()):
        if p.name.startswith(".") or p.is_dir():
            continue
        if p.suffix.lower() not in RECORDING_TYPES:
            raise UserError(f"{p.name} in {folder} is not a recording",
                            f"name recordings <block id>.<{'|'.join(t[1:] for t in RECORDING_TYPES)}>",
                            key="recording_wrong_type", file=p.name, folder=folder,
                            types="|".join(t[1:] for t in RECORDING_TYPES))
        if p.stem in out:
            raise UserError(f"block {p.stem} is recorded twice in {folder}: {out[p.stem].name} and {p.name}",
                            "keep one", key="recording_twice", block=p.stem, folder=folder, first=out[p.stem].name,
                            second=p.name)
        if p.stat().st_size == 0:
            raise UserError(f"recording {p} is empty", "record it again, or remove it", key="recording_empty", path=p)
        out[p.stem] = p
    return out


def recordings_stamp(folder: str | Path | None) -> list | None:
    """What the render cache keys a --voice-dir by: each file's name, size and content hash."""
    if not folder:
        return None
    folder = Path(folder)
    if not folder.is_dir():
        return [str(folder), "missing"]
    return sorted((p.name, p.stat().st_size, hashlib.sha256(p.read_bytes()).hexdigest()[:16])
                  for p in folder.iterdir() if p.is_file())


__all__ = ["Narrator", "Speech", "STATS", "find_recordings", "recordings_stamp", "speech_cache_dir"]
