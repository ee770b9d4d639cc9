"""scenes/speed.py and the glyph cache in scenes/components/text.py: faster, and the same output.

Each shortcut is compared with manim's own way on the same input: the frames drawn (every pixel),
the bytes the encoder writes, the glyph outlines."""

from __future__ import annotations

import hashlib
import pickle
import zlib
from pathlib import Path

import numpy as np
import pytest

from attention_manim.scenes.components import glyph_store

from tests.conftest import tiny_config


@pytest.fixture
def manim_own():
    """Run with manim's own methods, and restore whatever was installed before."""
    from attention_manim.scenes import speed

    was = speed._installed
    speed.uninstall()
    yield speed
    speed.uninstall()
    if was:
        speed.install()


def frames_of(scene_cls, media_dir, size=(192, 108)):
    """Every frame manim hands to the encoder, as arrays (a held frame once per repeat)."""
    from manim import tempconfig
    from manim.scene.scene_file_writer import SceneFileWriter

    got = []
    original = SceneFileWriter.write_frame

    def keep(self, pixels, *, repeat=1):
        got.extend([np.array(pixels)] * repeat)
        return original(self, pixels, repeat=repeat)

    SceneFileWriter.write_frame = keep
    try:
        opts = tiny_config(media_dir, size, png=False)
        opts.pop("dry_run")
        opts.update(format="mp4", frame_rate=10)
        with tempconfig(opts):
            scene_cls().render()
    finally:
        SceneFileWriter.write_frame = original
    return got


def busy_scene():
    """Text that fades, moves and recolours over static shapes, a camera zoom, and a held wait."""
    from manim import (BLUE, DOWN, RED, Circle, FadeIn, MovingCameraScene, Square, Transform, VGroup)

    from attention_manim.scenes.components.text import label

    class Busy(MovingCameraScene):
        def construct(self):
            back = VGroup(*(Square(0.5).shift(0.6 * i * DOWN + 2 * DOWN) for i in range(3)))
            words = label("attention −0.42", 40, color="#FFCC00")
            self.add(back)
            self.play(FadeIn(words), run_time=0.5)
            self.play(words.animate.shift(DOWN).set_color(BLUE), run_time=0.5)
            self.play(Transform(back[0], Circle(0.3, color=RED)), run_time=0.5)
            self.play(self.camera.frame.animate.scale(0.6).move_to(words), run_time=0.5)
            self.wait(0.5)

    return Busy


def test_path_cache_draws_the_same_pixels(tmp_path, manim_own):
    speed = manim_own
    before = frames_of(busy_scene(), tmp_path / "a")
    speed._install_path_cache()
    from manim.camera.camera import Camera

    cache = Camera.set_cairo_context_path.cache
    after = frames_of(busy_scene(), tmp_path / "b")
    assert len(before) == len(after) == 25  # 2.5 s at 10 fps
    for i, (a, b) in enumerate(zip(before, after)):
        assert np.array_equal(a, b), f"frame {i} differs"
    assert len(cache) > 0  # the cache was used, not bypassed
    assert len({f.tobytes() for f in after}) > 10  # and the frames did change


def test_structural_copy_draws_the_same_pixels_and_copies_are_independent(tmp_path, manim_own):
    speed = manim_own
    from manim import Mobject, VGroup

    from attention_manim.scenes.components.text import label

    before = frames_of(busy_scene(), tmp_path / "a")
    speed._install_structural_copy()
    assert Mobject.copy is not Mobject.copy.original
    after = frames_of(busy_scene(), tmp_path / "b")
    assert len(before) == len(after) == 25
    for i, (a, b) in enumerate(zip(before, after)):
        assert np.array_equal(a, b), f"frame {i} differs"
    # a copy shares no mobject, array or list with its original: changing one leaves the other
    word = label("fluffy", 30, color="#FFCC00")
    group = VGroup(word, word.copy().shift(1))
    twin = group.copy()
    originals = {id(m) for m in group.get_family()}
    assert not originals & {id(m) for m in twin.get_family()}
    assert len(twin.get_family()) == len(group.get_family())
    points = word.get_all_points().copy()
    twin.shift(2).set_color("#00FF00")
    twin[0].submobjects.pop()
    assert np.array_equal(word.get_all_points(), points)
    assert word.get_color().to_hex().upper() == "#FFCC00"
    assert len(group[0].submobjects) == len(twin[0].submobjects) + 1
    # the same object reached twice is copied once (Text keeps its glyphs in `chars` too)
    assert twin[0].chars[0] is twin[0].submobjects[0]
    speed.uninstall()
    assert not hasattr(Mobject.copy, "original")


def _encode(frames, repeats, target: Path, options):
    from manim._config.output import OutputFormat, OutputSpec
    from manim._config.video_encoder import resolve_video_encoder
    from manim.scene.video_segment_encoder import VideoSegmentEncoder

    h, w = frames[0].shape[:2]
    spec = resolve_video_encoder(OutputSpec(OutputFormat.MP4, False, False, False), width=w, height=h,
                                 frame_rate=15, options=options)
    enc = VideoSegmentEncoder(target=target, spec=spec)
    for f, r in zip(frames, repeats):
        enc.write_frame(f, repeat=r)
    enc.finish()
    return hashlib.sha256(target.read_bytes()).hexdigest()


def test_a_held_frame_converted_once_encodes_to_the_same_bytes(tmp_path, manim_own):
    speed = manim_own
    rng = np.random.default_rng(0)
    frames = []
    for i in range(6):  # smooth-ish frames with a moving block, so the encoder has work to do
        f = np.zeros((96, 160, 4), np.uint8)
        f[..., 3] = 255
        f[..., 0] = np.linspace(0, 255, 160, dtype=np.uint8)[None, :]
        f[20:40, 10 + 15 * i:40 + 15 * i, 1] = 200
        f[..., 2] = rng.integers(0, 8, (96, 160), dtype=np.uint8)
        frames.append(f)
    repeats = [1, 12, 1, 1, 30, 3]
    for options in ({}, {"preset": speed.X264_PRESET}):
        own = _encode(frames, repeats, tmp_path / "own.mp4", options)
        speed._install_repeat_conversion()
        try:
            fast = _encode(frames, repeats, tmp_path / "fast.mp4", options)
        finally:
            speed.uninstall()
        assert own == fast, options


def test_render_options(monkeypatch):
    from attention_manim.scenes import speed

    monkeypatch.setenv("ATTN_MANIM_FAST", "1")
    mp4 = speed.render_options("mp4")
    assert mp4["video_encoder_options"] == {"preset": "veryfast"}
    assert mp4["max_inflight_encoders"] == 4
    assert "video_encoder_options" not in speed.render_options("webm")  # VP9 has no x264 preset
    monkeypatch.setenv("ATTN_MANIM_FAST", "0")
    assert speed.render_options("mp4") == {}


def test_glyph_cache_gives_the_same_outlines_and_is_reused(tmp_path, monkeypatch):
    from manim import Text

    from attention_manim.scenes.components.text import GlyphCachedText, glyph_cache_dir

    monkeypatch.setenv("ATTENTION_MANIM_CACHE", str(tmp_path / "cache"))
    assert glyph_cache_dir() == tmp_path / "cache" / "glyphs"
    text, kw = "queries −0.42 ∞", dict(font_size=36, font="CMU Serif")
    plain = Text(text, **kw)
    first = GlyphCachedText(text, **kw)
    entries = list(glyph_cache_dir().rglob("*.glyphs"))
    assert len(entries) == 1

    def outlines(mob):
        return [(m.points, m.get_fill_rgbas(), m.get_stroke_rgbas()) for m in mob.family_members_with_points()]

    # the entry now holds poisoned points: a second Text must come from it, not from the SVG
    subs, ids = glyph_store.loads(entries[0].read_bytes())
    assert len(subs) == len(plain.submobjects)
    second = GlyphCachedText(text, **kw)
    for mob in (first, second):
        got, want = outlines(mob), outlines(plain)
        assert len(got) == len(want)
        for (p, f, s), (p0, f0, s0) in zip(got, want):
            assert np.array_equal(p, p0) and np.array_equal(f, f0) and np.array_equal(s, s0)
    subs[0].points[:] += 1.0
    entries[0].write_bytes(glyph_store.dumps([subs, ids]))
    poisoned = GlyphCachedText(text, **kw)
    assert not np.array_equal(poisoned.submobjects[0].points, plain.submobjects[0].points)
    # a damaged entry is rebuilt from the SVG
    entries[0].write_bytes(b"not a glyph entry")
    rebuilt = GlyphCachedText(text, **kw)
    assert np.array_equal(rebuilt.submobjects[0].points, plain.submobjects[0].points)
    # another text, size or colour is another entry
    GlyphCachedText(text, font_size=24, font="CMU Serif")
    GlyphCachedText(text + "!", **kw)
    assert len(list(glyph_cache_dir().rglob("*.glyphs"))) == 3
    # the named groups hold the very glyphs of the text (one object, not a copy)
    assert any(m is second.submobjects[0] for g in second.id_to_vgroup_dict.values() for m in g.get_family())


def test_a_pickle_in_the_glyph_cache_is_never_run(tmp_path, monkeypatch):
    import os

    from attention_manim.scenes.components.text import GlyphCachedText, glyph_cache_dir

    monkeypatch.setenv("ATTENTION_MANIM_CACHE", str(tmp_path / "cache"))
    text, kw = "never run", dict(font_size=30, font="CMU Serif")
    GlyphCachedText(text, **kw)
    (entry,) = glyph_cache_dir().rglob("*.glyphs")
    marker = tmp_path / "ran"

    class Payload:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    for poison in (pickle.dumps(Payload()), zlib.compress(pickle.dumps(Payload())),
                   glyph_store.MAGIC + zlib.compress(pickle.dumps(Payload()))):
        entry.write_bytes(poison)
        again = GlyphCachedText(text, **kw)
        assert not marker.exists() and len(again.submobjects) == len("neverrun")
    # and the tree store refuses classes it does not know, writing or reading
    from manim import Circle

    with pytest.raises(glyph_store.UnsupportedData):
        glyph_store.dumps([Circle()])


def test_glyph_cache_is_trimmed_oldest_first(tmp_path):
    import os

    from attention_manim.scenes.components.text import trim_glyph_cache

    sub = tmp_path / "ab"
    sub.mkdir()
    for k in range(10):  # 10 entries of 100 kB, the oldest first
        f = sub / f"{k:02d}.glyphs"
        f.write_bytes(b"x" * 100_000)
        os.utime(f, (1000 + k, 1000 + k))
    removed = trim_glyph_cache(tmp_path, max_mb=0.5)  # 0.5 MiB: keep at most 0.4 MiB
    left = sorted(p.name for p in sub.iterdir())
    assert removed == 6 and left == ["06.glyphs", "07.glyphs", "08.glyphs", "09.glyphs"]
    assert trim_glyph_cache(tmp_path, max_mb=10) == 0
