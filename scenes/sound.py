"""A narrated clip's sound track: each block's speech laid at the block's start on a track exactly
as long as the video, normalized for the web, and muxed into the finished clip (AAC in mp4, Opus in
webm); chapter clips get their slice of it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attention_manim.voice.audio import RATE, mux_audio, normalize, read_wav


def mix_speech(speeches, duration: float) -> np.ndarray:
    """Each block's speech (start in seconds, wav path) laid at its start on a track exactly
    `duration` seconds long, then normalized for the web (−16 LUFS, true peak ≤ −1 dBTP).

    The mix is ours, not manim's: manim's own sound path (pydub overlays, then an AAC encode inside
    its file writer) cost more than the whole rest of a warm narrated render; here the clip is
    written silent and the track is muxed in once (`mux_audio`)."""
    n = int(round(duration * RATE))
    mix = np.zeros(n, np.float32)
    for start, path in speeches:
        x, rate = read_wav(path)
        if rate != RATE:
            raise ValueError(f"{path}: speech at {rate} Hz, expected {RATE}")
        i = int(round(start * RATE))
        piece = x[: max(0, n - i)]
        mix[i:i + len(piece)] += piece
    return normalize(mix)


def add_soundtrack(video: Path, soundtrack: np.ndarray) -> None:
    """Mux `soundtrack` into `video` in place (AAC in mp4/mov, Opus in webm)."""
    tmp = video.with_name(f".{video.stem}.sound{video.suffix}")
    mux_audio(video, soundtrack, tmp)
    tmp.replace(video)


def chapter_sound(video: Path, soundtrack: np.ndarray, start: float, end: float) -> None:
    """Give a chapter clip its slice [start, end) of the whole clip's sound track, in place."""
    add_soundtrack(video, soundtrack[int(round(start * RATE)): int(round(end * RATE))])
