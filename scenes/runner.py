"""Render a scene to a finished file, atomically.

Manim writes into a private temporary media folder beside the destination; only a complete clip
is moved (os.replace) to `OUT/<quality>/<scene>.<ext>`. A failed or interrupted render leaves no
half-written file where a finished one is expected.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from manim import tempconfig
from manim.constants import QUALITIES

from model.errors import UserError

QUALITY_FLAGS = {
    "l": "low_quality",  # 854x480, 15 fps
    "m": "medium_quality",  # 1280x720, 30 fps
    "h": "high_quality",  # 1920x1080, 60 fps
    "p": "production_quality",  # 2560x1440, 60 fps
    "k": "fourk_quality",  # 3840x2160, 60 fps
}
FORMATS = ("mp4", "gif", "webm", "mov", "png")


def quality_dir_name(flag: str) -> str:
    q = QUALITIES[QUALITY_FLAGS[flag]]
    return f"{q['pixel_height']}p{q['frame_rate']}"


@dataclass
class RenderResult:
    scene: str
    files: list[Path]  # the clip (or png) first, then its .srt if the scene had captions
    duration: float  # seconds of video
    wall_time: float  # seconds it took


def check_output_dir(out: Path) -> Path:
    """Create `out` if needed and prove it is writable, or raise a UserError."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=out, prefix=".write-test-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise UserError(f"cannot write to the output folder {str(out)!r}: {e.strerror or e}",
                        "choose another folder with --out") from None
    return out


def check_format(fmt: str, transparent: bool) -> None:
    if fmt not in FORMATS:
        raise UserError(f"unknown format {fmt!r}", f"choose one of {', '.join(FORMATS)}")
    if transparent and fmt in ("mp4", "gif"):
        raise UserError(f"--transparent cannot be written as {fmt}",
                        "use --format mov (ProRes-like qtrle with alpha), webm (VP9 with alpha) or png")


def render_scene(scene_cls, inputs, *, name: str, quality: str = "l", fmt: str = "mp4",
                 transparent: bool = False, out: Path = Path("renders"), extra_config: dict | None = None) -> RenderResult:
    """Render `scene_cls(inputs)` and move the finished file(s) into `out/<quality>/`."""
    import time

    check_format(fmt, transparent)
    dest_dir = check_output_dir(Path(out) / quality_dir_name(quality))
    work = Path(tempfile.mkdtemp(dir=dest_dir, prefix=f".{name}-rendering-"))
    start = time.perf_counter()
    try:
        opts = {
            "quality": QUALITY_FLAGS[quality],
            "media_dir": str(work),
            "transparent": transparent,
            "disable_caching": True,
            "verbosity": "WARNING",
            "output_file": name,
            # progress bars only on a terminal: in logs and CI they are thousands of \r lines
            "progress_bar": "display" if sys.stderr.isatty() else "none",
        }
        if fmt == "png":
            opts.update(save_last_frame=True, write_to_movie=False, format="png")
        else:
            opts.update(format=fmt)
        opts.update(extra_config or {})
        with tempconfig(opts):
            scene = scene_cls(inputs)
            scene.render()
            writer = scene.renderer.file_writer
            produced = Path(writer.image_file_path if fmt == "png" else writer.movie_file_path)
            duration = float(scene.renderer.time)
        if not produced.is_file():
            raise RuntimeError(f"manim reported {produced} but did not write it")
        final = dest_dir / f"{name}.{fmt}"
        moved = [final]
        srt = produced.with_suffix(".srt")
        final_srt = dest_dir / f"{name}.srt"
        if fmt != "png" and srt.is_file():
            os.replace(srt, final_srt)
            moved.append(final_srt)
        elif final_srt.exists() and fmt != "png":
            final_srt.unlink()  # a stale .srt from an older render must not pair with the new clip
        os.replace(produced, final)  # the clip appears only once it is complete
        return RenderResult(name, moved, duration, time.perf_counter() - start)
    finally:
        shutil.rmtree(work, ignore_errors=True)
