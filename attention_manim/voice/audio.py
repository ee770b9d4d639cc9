"""Sound as numpy arrays: read any recording, resample, trim silence, measure loudness the way
broadcasters do (ITU-R BS.1770-4: K-weighting, 400 ms blocks, absolute and relative gates; true peak
on a 4× oversampled signal), normalize for the web, and write or mux the result.

Everything is mono float32 in [-1, 1] at RATE (48 kHz) once it is inside the suite.
"""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

RATE = 48_000  # every sound inside the suite: mono, 48 kHz (AAC and Opus both like it)
TARGET_LUFS = -16.0  # integrated loudness for the web (podcasts, course platforms)
PEAK_DBTP = -1.0  # the true peak may not pass this
SILENCE_DB = -45.0  # quieter than this (a 20 ms window's RMS, dBFS) counts as silence when trimming


class AudioError(ValueError):
    """A sound file that cannot be used (unreadable, empty, silent)."""


# --- reading and writing ---------------------------------------------------------------------------

def resample(samples: np.ndarray, rate: int, to: int = RATE) -> np.ndarray:
    if rate == to or samples.size == 0:
        return samples.astype(np.float32)
    from math import gcd

    from scipy.signal import resample_poly

    g = gcd(int(rate), int(to))
    return resample_poly(samples.astype(np.float64), to // g, rate // g).astype(np.float32)


def read_audio(path: str | Path) -> np.ndarray:
    """Any file PyAV can decode (wav, flac, mp3, m4a, ogg, ...) as mono float32 at RATE."""
    import av

    path = Path(path)
    try:
        with av.open(str(path)) as container:
            if not container.streams.audio:
                raise AudioError(f"{path.name} has no sound in it")
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
        raise AudioError(f"{path.name} cannot be read as sound ({type(e).__name__}: {e})") from None
    samples = np.concatenate(chunks).astype(np.float32) if chunks else np.zeros(0, np.float32)
    if samples.size == 0:
        raise AudioError(f"{path.name} holds no samples")
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
        raise AudioError(f"{Path(path).name}: expected 16-bit PCM")
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
        raise AudioError("the recording is silent")
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


def integrated_loudness(samples: np.ndarray, rate: int = RATE) -> float:
    """Integrated loudness in LUFS (mono); -inf for silence or anything shorter than one 400 ms block."""
    from scipy.signal import lfilter

    (b1, a1), (b2, a2) = _k_weighting(rate)
    y = lfilter(b2, a2, lfilter(b1, a1, samples.astype(np.float64)))
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


def true_peak_db(samples: np.ndarray, rate: int = RATE) -> float:
    """The true peak in dBTP: the largest magnitude of the signal oversampled to at least 192 kHz."""
    from scipy.signal import resample_poly

    if samples.size == 0:
        return -np.inf
    factor = max(2, int(np.ceil(192_000 / rate)))
    peak = np.abs(resample_poly(samples.astype(np.float64), factor, 1)).max()
    peak = max(peak, float(np.abs(samples).max()))
    return float(20 * np.log10(peak)) if peak > 0 else -np.inf


def _limit(samples: np.ndarray, ceiling: float, rate: int = RATE) -> np.ndarray:
    """A look-ahead peak limiter: a smooth gain that dips around each peak above `ceiling`."""
    from scipy.ndimage import maximum_filter1d, uniform_filter1d

    x = samples.astype(np.float64)
    need = np.minimum(1.0, ceiling / np.maximum(np.abs(x), 1e-12))
    attack = max(1, int(0.005 * rate))
    gain = -maximum_filter1d(-need, size=2 * attack + 1)  # the lowest gain within ±5 ms
    gain = uniform_filter1d(gain, size=attack)  # smoothed, so it does not click
    gain = np.minimum(gain, -maximum_filter1d(-need, size=2 * attack + 1))
    return (x * gain).astype(np.float32)


def normalize(samples: np.ndarray, rate: int = RATE, target_lufs: float = TARGET_LUFS,
              peak_dbtp: float = PEAK_DBTP) -> np.ndarray:
    """Gain to `target_lufs` integrated, then a limiter keeping the true peak under `peak_dbtp`
    (with 0.5 dB to spare); repeated once, since limiting lowers the loudness a little."""
    y = samples.astype(np.float32)
    for _ in range(3):
        loud = integrated_loudness(y, rate)
        if not np.isfinite(loud):
            return y
        y = (y * 10 ** ((target_lufs - loud) / 20)).astype(np.float32)
        if true_peak_db(y, rate) <= peak_dbtp - 0.3:
            break
        ceiling = 10 ** ((peak_dbtp - 0.6) / 20)
        for _ in range(4):  # the oversampled peak may still poke above after one pass
            y = _limit(y, ceiling, rate)
            if true_peak_db(y, rate) <= peak_dbtp - 0.3:
                break
            ceiling *= 10 ** (-0.3 / 20)
        if abs(integrated_loudness(y, rate) - target_lufs) <= 0.5:
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
            aout = cout.add_stream(codec, rate=rate)
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
