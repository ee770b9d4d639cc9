"""Render speed: encoder settings and two exact shortcuts in manim's Cairo path.

Measured on the suite (`python benchmarks/bench_suite.py`, README "Speed"), a render's time went to
three places: encoding (libx264's `medium` preset, and the RGBA→YUV conversion of every frame, even
the hundreds of copies of one frame a wait writes), Python building each drawn VMobject's Cairo
path anew on every frame (~40 curve_to calls per glyph, and most drawn glyphs do not move), and
manim joining each animation's encoder before the next animation starts. What this module changes:

- `render_options(fmt)`: libx264's `veryfast` preset (same CRF 23; at these flat-coloured frames
  the files come out no larger) and up to 4 animations' encoders running beside the rendering
  instead of one at a time (`max_inflight_encoders`). Frames are untouched.
- `install()`: (1) a frame a wait repeats N times is converted to YUV once, not N times (the same
  bytes reach the encoder); (2) the camera keeps the Cairo path it built for a VMobject, keyed by
  the exact bytes of its points and the camera's matrix, and replays it (`append_path`) when the
  same points are drawn again: the path Cairo fills is the one it would have built, so the pixels
  are the same (checked frame by frame: `bench_suite.py --frames/--check-frames`); (3)
  `Mobject.copy` copies the mobjects, arrays, lists, dicts and tuples of a tree and shares the
  leaves nobody changes in place (colours, strings, functions) where `copy.deepcopy` copied those
  one by one: every label is a copy of a cached Text, and every FadeIn and Transform copies too.

`ATTN_MANIM_FAST=0` in the environment turns all of it off (manim's own behaviour), for comparing.
"""

from __future__ import annotations

import os

import numpy as np

ENCODER_THREADS_IN_FLIGHT = 4
X264_PRESET = "veryfast"
PATH_CACHE_ENTRIES = 60_000  # ~3 KB each at most for a glyph: the cache stays under ~200 MB

_installed = False
_Mobject = type(None)  # manim's Mobject once install() has run (this module imports manim lazily)


def enabled() -> bool:
    return os.environ.get("ATTN_MANIM_FAST", "1") != "0"


def render_options(fmt: str = "mp4") -> dict:
    """Manim config entries for a render in format `fmt` (empty when switched off)."""
    if not enabled():
        return {}
    install()
    opts = {"max_inflight_encoders": ENCODER_THREADS_IN_FLIGHT}
    if fmt == "mp4":  # libx264; webm (VP9), mov (qtrle) and gif keep manim's settings
        opts["video_encoder_options"] = {"preset": X264_PRESET}
    return opts


def install() -> None:
    """Patch manim's segment encoder and Cairo camera (once per process)."""
    global _installed
    if _installed or not enabled():
        return
    _installed = True
    _install_repeat_conversion()
    _install_path_cache()
    _install_structural_copy()


def uninstall() -> None:
    """Put manim's own encoder and camera methods back (tests compare both ways)."""
    global _installed
    from manim.camera.camera import Camera
    from manim.scene.video_segment_encoder import VideoSegmentEncoder

    from manim import Mobject

    for cls, name in ((VideoSegmentEncoder, "write_frame"), (Camera, "set_cairo_context_path"),
                      (Mobject, "copy")):
        original = getattr(getattr(cls, name), "original", None)
        if original is not None:
            setattr(cls, name, original)
    _installed = False


def _install_repeat_conversion() -> None:
    from fractions import Fraction

    import av
    from manim.scene.video_segment_encoder import VideoSegmentEncoder

    original = VideoSegmentEncoder.write_frame

    def write_frame(self, pixels, *, repeat: int = 1) -> None:
        if repeat == 1 or not isinstance(repeat, int):
            return original(self, pixels, repeat=repeat)
        self._validate_frame(pixels, repeat)
        time_base = Fraction(self.spec.frame_rate.denominator, self.spec.frame_rate.numerator)
        try:
            frame = av.VideoFrame.from_ndarray(pixels, format="rgba")
            if frame.format.name != self.spec.pixel_format:
                # what the stream would do to each copy, done once
                frame = frame.reformat(format=self.spec.pixel_format)
            for _ in range(repeat):
                frame.pts = self._next_pts
                frame.time_base = time_base
                self._next_pts += 1
                for packet in self._stream.encode(frame):
                    self._container.mux(packet)
        except BaseException as error:
            raise self._operation_error("encode", error) from error

    write_frame.original = original
    VideoSegmentEncoder.write_frame = write_frame


def _install_path_cache() -> None:
    from manim.camera.camera import Camera

    original = Camera.set_cairo_context_path
    base_transform = Camera.transform_points_pre_display
    cache: dict = {}

    def set_cairo_context_path(self, ctx, vmobject):
        points = vmobject.points
        # a camera that moves points itself (3-D projection) or an empty mobject: manim's own way
        if len(points) == 0 or type(self).transform_points_pre_display is not base_transform:
            return original(self, ctx, vmobject)
        m = ctx.get_matrix()
        key = (points.tobytes(), points.shape, vmobject.tolerance_for_point_equality,
               vmobject.n_points_per_cubic_curve, m.xx, m.yx, m.xy, m.yy, m.x0, m.y0)
        path = cache.get(key)
        if path is None:
            original(self, ctx, vmobject)
            if len(cache) >= PATH_CACHE_ENTRIES:
                cache.clear()
            cache[key] = ctx.copy_path()
            return self
        ctx.new_path()
        ctx.append_path(path)
        return self

    set_cairo_context_path.original = original
    set_cairo_context_path.cache = cache
    Camera.set_cairo_context_path = set_cairo_context_path


def structural_copy(obj, memo: dict):
    """A copy of a mobject tree as `Mobject.copy` makes it, but sharing the leaves nobody mutates in
    place (colours, strings, fonts, functions): only mobjects, arrays, lists, dicts and tuples are
    copied. `copy.deepcopy` spends most of a text-heavy render copying those leaves one by one."""
    found = memo.get(id(obj))
    if found is not None:
        return found
    if isinstance(obj, np.ndarray):
        out = obj.copy()
    elif isinstance(obj, _Mobject):
        out = object.__new__(type(obj))
        memo[id(obj)] = out
        out.__dict__.update({k: structural_copy(v, memo) for k, v in obj.__dict__.items()})
        out.original_id = str(id(obj))
        return out
    elif type(obj) is list:
        out = []
        memo[id(obj)] = out
        out.extend(structural_copy(v, memo) for v in obj)
        return out
    elif type(obj) is dict:
        out = {}
        memo[id(obj)] = out
        out.update({k: structural_copy(v, memo) for k, v in obj.items()})
        return out
    elif type(obj) is tuple:
        out = tuple(structural_copy(v, memo) for v in obj)
    else:
        return obj
    memo[id(obj)] = out
    return out


def _install_structural_copy() -> None:
    global _Mobject
    from manim import Mobject

    _Mobject = Mobject
    original = Mobject.copy

    def copy(self):
        return structural_copy(self, {})

    copy.original = original
    Mobject.copy = copy
