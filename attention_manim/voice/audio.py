"""Sound as numpy arrays: read any recording, resample, trim silence, measure loudness the way
broadcasters do (ITU-R BS.1770-4: K-weighting, 400 ms blocks, absolute and relative gates; true peak
on a 4× oversampled signal), normalize for the web, and write or mux the result.

Everything is mono float32 in [-1, 1] at RATE (48 kHz) once it is inside the suite.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

from attention_manim.model.errors import KeyedValueError

RATE = 48_000  # every sound inside the suite: mono, 48 kHz (AAC and Opus both like it)
TARGET_LUFS = -16.0  # integrated loudness for the web (podcasts, course platforms)
PEAK_DBTP = -1.0  # the true peak may not pass this
SPARE_DB = 1.0  # kept below PEAK_DBTP before encoding: the lossy encoder's overshoot stays under it
SILENCE_DB = -45.0  # quieter than this (a 20 ms window's RMS, dBFS) counts as silence when trimming


class AudioError(KeyedValueError):
    """A sound file that cannot be used (unreadable, empty, silent)."""


# --- reading and writing ---------------------------------------------------------------------------

def resample(samples: np.ndarray, rate: int, to: int = RATE) -> np.ndarray:
    """Mono float32 from `rate` to `to` (libswresample through PyAV: no scipy import on the render path)."""
    if rate == to or samples.size == 0:
        return samples.astype(np.float32)
    import av

    frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(samples, dtype=np.float32).reshape(1, -1),
                                       format="flt", layout="mono")
    frame.sample_rate = int(rate)
    resampler = av.AudioResampler(format="flt", layout="mono", rate=int(to))
    out = [f.to_ndarray().reshape(-1) for f in resampler.resample(frame)]
    out += [f.to_ndarray().reshape(-1) for f in resampler.resample(None)]
    return np.concatenate(out).astype(np.float32) if out else np.zeros(0, np.float32)


def read_audio(path: str | Path) -> np.ndarray:
    """Any file PyAV can decode (wav, flac, mp3, m4a, ogg, ...) as mono float32 at RATE."""
    import av

    path = Path(path)
    try:
        with av.open(str(path)) as container:
            if not container.streams.audio:
                raise AudioError(f"{path.name} has no sound in it", key="audio_no_sound", file=path.name)
            resampler = av.AudioResampler(format="flt", layout="mono", rate=RATE)
            chunks = []
            for frame in container.decode(audio=0):
                for out in resampler.resample(frame):
                    chunks.append(out.to_ndarray().reshape(-1))
            for out in resampler.resample(None):
                chunks.append(out.to_ndarray().reshape(-1))
    except AudioError:
        raise
    except Exception as e:  # av.error.* for a file that is not sound at all
        raise AudioError(f"{path.name} cannot be read as sound ({type(e).__name__}: {e})", key="audio_unreadable",
                         file=path.name, kind=type(e).__name__, detail=e) from None
    samples = np.concatenate(chunks).astype(np.float32) if chunks else np.zeros(0, np.float32)
    if samples.size == 0:
        raise AudioError(f"{path.name} holds no samples", key="audio_empty", file=path.name)
    return samples


def write_wav(path: str | Path, samples: np.ndarray, rate: int = RATE) -> Path:
    """16-bit mono PCM (what manim's mixer reads), written whole then renamed into place."""
    path = Path(path)
    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).round().astype("<i2")
    tmp = path.with_name(f".{path.name}.part")
    with wave.open(str(tmp), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(pcm.tobytes())
    tmp.replace(path)
    return path


def read_wav(path: str | Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path), "rb") as w:
        raw = w.readframes(w.getnframes())
        rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
    if width != 2:
        raise AudioError(f"{Path(path).name}: expected 16-bit PCM", key="audio_not_pcm16", file=Path(path).name)
    x = np.frombuffer(raw, "<i2").astype(np.float32) / 32768.0
    if channels > 1:
        x = x.reshape(-1, channels).mean(axis=1)
    return x, rate


# --- silence ---------------------------------------------------------------------------------------

def frame_db(samples: np.ndarray, rate: int = RATE, window_s: float = 0.02) -> np.ndarray:
    """RMS level (dBFS) of consecutive windows."""
    n = max(1, int(rate * window_s))
    m = len(samples) // n
    if m == 0:
        return np.array([-np.inf])
    blocks = samples[: m * n].astype(np.float64).reshape(m, n)
    rms = np.sqrt((blocks ** 2).mean(axis=1))
    with np.errstate(divide="ignore"):
        return 20 * np.log10(rms)


def trim_silence(samples: np.ndarray, rate: int = RATE, threshold_db: float = SILENCE_DB,
                 keep_s: float = 0.03) -> np.ndarray:
    """Cut leading and trailing silence, keeping `keep_s` of it either side; all silence → AudioError."""
    window = 0.01
    db = frame_db(samples, rate, window)
    loud = np.flatnonzero(db > threshold_db)
    if loud.size == 0:
        raise AudioError("the recording is silent", key="audio_silent")
    n = int(rate * window)
    keep = int(rate * keep_s)
    start = max(0, loud[0] * n - keep)
    end = min(len(samples), (loud[-1] + 1) * n + keep)
    return samples[start:end]


# --- loudness (ITU-R BS.1770-4 / EBU R128) ---------------------------------------------------------

def _k_weighting(rate: int):
    """The two biquads of BS.1770's K-weighting (a high shelf and a high pass), for any rate."""
    # the standard's filters as analogue prototypes, bilinear-transformed for `rate` (at 48 kHz they are
    # the coefficients printed in BS.1770's annex)
    f0, g, q = 1681.974450955533, 3.999843853973347, 0.7071752369554196
    k = np.tan(np.pi * f0 / rate)
    vh = 10 ** (g / 20)
    vb = vh ** 0.4996667741545416
    a0 = 1 + k / q + k * k
    shelf_b = [(vh + vb * k / q + k * k) / a0, 2 * (k * k - vh) / a0, (vh - vb * k / q + k * k) / a0]
    shelf_a = [1.0, 2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0]
    f0, q = 38.13547087602444, 0.5003270373238773
    k = np.tan(np.pi * f0 / rate)
    a0 = 1 + k / q + k * k
    hp_b = [1.0, -2.0, 1.0]
    hp_a = [1.0, 2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0]
    return (shelf_b, shelf_a), (hp_b, hp_a)


_FIR_SIZE = 1 << 16  # FFT size of the overlap-add K-weighting
_FIRS: dict[int, tuple[np.ndarray, int]] = {}


def _k_filter(rate: int) -> tuple[np.ndarray, int]:
    """(the spectrum of the K-weighting's impulse response at _FIR_SIZE, its length): the two biquads'
    response sampled on a fine grid, turned into an impulse response and cut where its tail has died
    (a quarter second: the 38 Hz high pass is down by more than 120 dB long before)."""
    hit = _FIRS.get(rate)
    if hit is None:
        (b1, a1), (b2, a2) = _k_weighting(rate)
        grid = 1 << 17  # 2.7 s at 48 kHz: the response dies long before, so the sampled response does not alias (1 << 20 cost 0.3-0.4 s per process for the same taps to 1e-13)
        z = np.exp(-2j * np.pi * np.arange(grid // 2 + 1) / grid)  # e^{-jω} at each bin

        def response(b, a):
            return (b[0] + b[1] * z + b[2] * z * z) / (a[0] + a[1] * z + a[2] * z * z)

        taps = min(rate // 4, _FIR_SIZE // 2)
        h = np.fft.irfft(response(b1, a1) * response(b2, a2), grid)[:taps]
        hit = _FIRS[rate] = (np.fft.rfft(h, _FIR_SIZE), taps)
    return hit


def _k_weighted(samples: np.ndarray, rate: int) -> np.ndarray:
    """The signal through BS.1770's K-weighting (numpy only): overlap-add of the filters' impulse
    response over segments, all segments in one batched FFT. One FFT as long as the clip cost seconds
    for a few minutes of speech (its frequency response alone, on millions of bins); this costs a
    fraction of a second and agrees with scipy's lfilter to within 0.01 LU (tests/test_narration.py)."""
    H, taps = _k_filter(rate)
    x = samples.astype(np.float64)
    m = _FIR_SIZE - taps + 1  # new samples per segment
    count = max(1, -(-len(x) // m))
    segs = np.zeros((count, m))
    segs.reshape(-1)[: len(x)] = x
    out = np.fft.irfft(np.fft.rfft(segs, _FIR_SIZE, axis=1) * H[None, :], _FIR_SIZE, axis=1)
    y = out[:, :m].copy()
    y[1:, : taps - 1] += out[:-1, m:]  # each segment's tail rings on into the next
    return y.reshape(-1)[: len(x)]


def integrated_loudness(samples: np.ndarray, rate: int = RATE) -> float:
    """Integrated loudness in LUFS (mono); -inf for silence or anything shorter than one 400 ms block."""
    y = _k_weighted(samples, rate)
    block, step = int(0.4 * rate), int(0.1 * rate)
    if len(y) < block:
        return -np.inf
    sq = np.concatenate([[0.0], np.cumsum(y * y)])
    starts = np.arange(0, len(y) - block + 1, step)
    z = (sq[starts + block] - sq[starts]) / block
    with np.errstate(divide="ignore"):
        loud = -0.691 + 10 * np.log10(z)
    z = z[loud > -70.0]  # absolute gate
    if z.size == 0:
        return -np.inf
    relative = -0.691 + 10 * np.log10(z.mean()) - 10.0
    z = z[-0.691 + 10 * np.log10(z) > relative]  # relative gate
    return float(-0.691 + 10 * np.log10(z.mean()))


OVERSAMPLE = 4  # true peak: the signal between samples, at 4× the rate (BS.1770 annex 2)
_TAPS = 24  # half-length of the windowed-sinc interpolator, in input samples


def _between(samples: np.ndarray, centres: np.ndarray) -> np.ndarray:
    """The band-limited signal at the OVERSAMPLE-1 points after each sample in `centres`
    (a Kaiser-windowed sinc over ±_TAPS samples; beyond the ends the signal is silence). Only the
    neighbourhoods are gathered: the whole clip is never copied."""
    k = np.arange(-_TAPS + 1, _TAPS + 1)  # the neighbours used for a point between c and c+1
    idx = centres[:, None] + k[None, :]
    inside = (idx >= 0) & (idx < len(samples))
    near = np.where(inside, samples[np.clip(idx, 0, len(samples) - 1)], 0.0).astype(np.float64)
    out = []
    for j in range(1, OVERSAMPLE):
        t = k - j / OVERSAMPLE
        w = np.sinc(t) * np.kaiser(len(k), 8.0)
        out.append(near @ w)
    return np.stack(out, axis=1)


def true_peak_db(samples: np.ndarray, rate: int = RATE) -> float:
    """The true peak in dBTP: the largest magnitude of the signal, between its samples too. Only the
    neighbourhoods of the loudest samples are oversampled (a peak between samples is at most a few dB
    above the samples around it), so a long clip costs little."""
    if samples.size == 0:
        return -np.inf
    mag = np.abs(samples)
    peak = float(mag.max())
    if peak <= 0:
        return -np.inf
    centres = np.flatnonzero(mag >= peak * 10 ** (-6 / 20))  # within 6 dB of the sample peak
    for lo in range(0, len(centres), 65536):
        chunk = centres[lo: lo + 65536]
        peak = max(peak, float(np.abs(_between(samples, chunk)).max()))
        chunk = np.maximum(chunk - 1, 0)  # and the gap before each loud sample
        peak = max(peak, float(np.abs(_between(samples, chunk)).max()))
    return float(20 * np.log10(peak))


def _limit(samples: np.ndarray, ceiling: float, rate: int = RATE) -> np.ndarray:
    """A look-ahead peak limiter: around each sample above `ceiling` the gain dips smoothly (a raised
    cosine over ±5 ms) just enough; elsewhere it stays 1."""
    x = samples.astype(np.float64)
    over = np.flatnonzero(np.abs(x) > ceiling)
    if over.size == 0:
        return samples.astype(np.float32)
    half = max(1, int(0.005 * rate))
    shape = 0.5 - 0.5 * np.cos(np.linspace(0, 2 * np.pi, 2 * half + 1))  # 0 at the edges, 1 in the middle
    gain = np.ones(len(x))
    for i in over:  # the dips only where needed; each one deep enough for its own sample
        depth = 1.0 - ceiling / abs(x[i])
        lo, hi = max(0, i - half), min(len(x), i + half + 1)
        dip = 1.0 - depth * shape[lo - (i - half): hi - (i - half)]
        np.minimum(gain[lo:hi], dip, out=gain[lo:hi])
    return (x * gain).astype(np.float32)


def normalize(samples: np.ndarray, rate: int = RATE, target_lufs: float = TARGET_LUFS,
              peak_dbtp: float = PEAK_DBTP) -> np.ndarray:
    """Gain to `target_lufs` integrated, then a limiter keeping the true peak under `peak_dbtp`
    (with 1 dB to spare: AAC and Opus encoding add a little overshoot); repeated once, since limiting
    lowers the loudness a little."""
    y = samples.astype(np.float32)
    loud = integrated_loudness(y, rate)
    for _ in range(3):
        if not np.isfinite(loud):
            return y
        y = (y * 10 ** ((target_lufs - loud) / 20)).astype(np.float32)  # a gain moves the loudness by itself
        if true_peak_db(y, rate) <= peak_dbtp - SPARE_DB:
            break
        ceiling = 10 ** ((peak_dbtp - SPARE_DB - 0.3) / 20)
        for _ in range(4):  # the oversampled peak may still poke above after one pass
            y = _limit(y, ceiling, rate)
            if true_peak_db(y, rate) <= peak_dbtp - SPARE_DB:
                break
            ceiling *= 10 ** (-0.3 / 20)
        loud = integrated_loudness(y, rate)
        if abs(loud - target_lufs) <= 0.5:
            break
    return y


# --- into a video file -----------------------------------------------------------------------------

def mux_audio(video: Path, samples: np.ndarray, out: Path, rate: int = RATE) -> Path:
    """`video` with `samples` as its sound track (AAC in mp4/mov, Opus in webm), written to `out`.
    The sound is padded with silence or cut to the video's length."""
    import av

    codec = "libopus" if video.suffix == ".webm" else "aac"
    with av.open(str(video)) as vin:
        vstream = vin.streams.video[0]
        length = float(vstream.duration * vstream.time_base) if vstream.duration else float(
            vin.duration / 1_000_000)
        n = int(round(length * rate))
        pcm = np.zeros(n, np.float32)
        pcm[: min(n, len(samples))] = samples[:n]
        tmp = out.with_name(f".{out.name}.part{out.suffix}")
        with av.open(str(tmp), "w", format=None) as cout:
            vout = cout.add_stream_from_template(vstream)
            # the native AAC encoder's "fast" coder: half the CPU of its default for speech that sounds
            # the same at this bit rate (a warm narrated render's largest extra cost was this encode)
            aout = cout.add_stream(codec, rate=rate, options={"aac_coder": "fast"} if codec == "aac" else {})
            aout.layout = "mono"
            for packet in vin.demux(vstream):
                if packet.dts is None:
                    continue
                packet.stream = vout
                cout.mux(packet)
            step = 960 if codec == "libopus" else 1024
            pts = 0
            for i in range(0, n, step):
                chunk = pcm[i:i + step]
                if len(chunk) < step:
                    chunk = np.pad(chunk, (0, step - len(chunk)))
                frame = av.AudioFrame.from_ndarray(chunk.reshape(1, -1), format="flt", layout="mono")
                frame.sample_rate = rate
                frame.pts = pts
                pts += step
                for packet in aout.encode(frame):
                    cout.mux(packet)
            for packet in aout.encode(None):
                cout.mux(packet)
    tmp.replace(out)
    return out


def audio_of(path: Path) -> tuple[np.ndarray, float]:
    """The sound track of a clip (mono float32 at RATE) and its video stream's length in seconds."""
    import av

    with av.open(str(path)) as c:
        v = c.streams.video[0]
        length = float(v.duration * v.time_base) if v.duration else float(c.duration / 1_000_000)
    return read_audio(path), length
