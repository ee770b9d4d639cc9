"""A narrated clip's sound track: manim mixes each block's speech at the block's start (pydub, in
the scene's file writer); here the mix is made exactly as long as the video and normalized for the
web before manim muxes it (AAC in mp4, Opus in webm), and chapter clips get their slice of it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attention_manim.voice.audio import RATE, mux_audio, normalize


class _QuietMux:
    """manim warns that PyAV ignored two muxer options whenever a clip has sound; the clip is right."""

    def filter(self, record) -> bool:
        return "Some options were not used" not in str(record.getMessage())


def quiet_mux_warning() -> None:
    import logging

    # PyAV's own log records reach manim's handler (it prints them as if from the file writer)
    for log in (logging.getLogger("manim"), logging.getLogger("libav"), logging.getLogger()):
        for target in (log, *log.handlers):
            if not any(isinstance(f, _QuietMux) for f in target.filters):
                target.addFilter(_QuietMux())


def segment_samples(segment) -> np.ndarray:
    """A pydub AudioSegment as mono float32 at RATE."""
    seg = segment.set_channels(1).set_frame_rate(RATE).set_sample_width(2)
    return np.frombuffer(seg.raw_data, "<i2").astype(np.float32) / 32768.0


def samples_segment(samples: np.ndarray):
    from pydub import AudioSegment

    pcm = (np.clip(samples, -1, 1) * 32767).round().astype("<i2")
    return AudioSegment(data=pcm.tobytes(), sample_width=2, frame_rate=RATE, channels=1)


def finish_soundtrack(writer, duration: float) -> np.ndarray:
    """Pad or cut the writer's mix to `duration` seconds, normalize it (−16 LUFS, true peak ≤ −1 dBTP)
    and put it back; returns the samples (the chapter clips are cut from them)."""
    x = segment_samples(writer.audio_segment)
    n = int(round(duration * RATE))
    mix = np.zeros(n, np.float32)
    mix[: min(n, len(x))] = x[:n]
    mix = normalize(mix)
    writer.audio_segment = samples_segment(mix)
    quiet_mux_warning()
    writer.soundtrack = mix
    return mix


def chapter_sound(video: Path, soundtrack: np.ndarray, start: float, end: float) -> None:
    """Give a chapter clip its slice [start, end) of the whole clip's sound track, in place."""
    piece = soundtrack[int(round(start * RATE)): int(round(end * RATE))]
    mux_audio(video, piece, video.with_name(f".{video.stem}.sound{video.suffix}"))
    video.with_name(f".{video.stem}.sound{video.suffix}").replace(video)
