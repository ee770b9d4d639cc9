"""Narration: offline voices (Kokoro, espeak-ng), the teacher's recordings, and the sound of a clip
(loudness for the web, muxed into mp4/webm). No manim and no torch in here: the stage asks a
`Narrator` for each caption block's speech and lasts as long as it."""

from .engines import AUTO, VOICES, Voice, pick_voice
from .narrator import STATS, Narrator, Speech

__all__ = ["AUTO", "VOICES", "Voice", "pick_voice", "Narrator", "Speech", "STATS"]
