"""Subtitles are plain text: the subscripts a frame typesets (W_Q, d_k, d_head) are written by one
convention (scenes.i18n.plain_text) in the .srt, the .vtt, the chapters' captions and the script; what
a voice says is made from the catalog's own text."""

from __future__ import annotations

import json
import re

import pytest
from manim import FadeIn, MovingCameraScene

from attention_manim.scenes.components.text import label
from attention_manim.scenes.i18n import Say, plain_text
from attention_manim.scenes.lesson import Chapter, Lesson, LessonSceneBase

RAW = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]")
TINY = {"pixel_width": 96, "pixel_height": 54, "frame_rate": 5}
KEYS = ("qkv.query.encode", "grid.formula.sqrt", "params.row.w_q")  # a row label as a caption: d_model × d_head
PARAMS = {"grid.formula.sqrt": {"d": 64, "root": "8"}}


def test_plain_text_writes_one_convention():
    assert plain_text("W_Q, W_K, W_V and W_O") == "WQ, WK, WV and WO"  # no capital subscripts in Unicode
    assert plain_text("the key length d_k, x_1") == "the key length dₖ, x₁"  # Unicode subscripts where they exist
    assert plain_text("($d_model × d_head$), d_mlp") == "(d-model × d-head), d-mlp"  # a word: hyphen
    assert plain_text("d_model개로 W_V를") == "d-model개로 WV를"  # Korean particles right after
    assert plain_text("the word “my_var” and ‘a_b’") == "the word “my_var” and ‘a_b’"  # a token stays as typed
    assert plain_text("no subscripts: 3 × 4 = 12") == "no subscripts: 3 × 4 = 12"


class Says(Chapter):
    """Three captions with subscripts in them, each over a tiny play."""
    key = "softmax"

    def plan(self, setting):
        return None

    def play(self, stage, plan):
        for key in KEYS:
            with stage.narrating(stage.say(key, **PARAMS.get(key, {}))):
                stage.play(FadeIn(label("x", 20)), run_time=0.2)


Subscripts = type("SubscriptsLesson", (LessonSceneBase, MovingCameraScene),
                  {"lesson": Lesson("subscripts", (Says(),)), "__module__": __name__})


@pytest.mark.render
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_rendered_subtitles_have_no_raw_underscore(make_inputs, tmp_path, lang):
    from attention_manim.scenes.runner import render_scene

    say = Say(lang)
    raw = [say(k, **PARAMS.get(k, {})) for k in KEYS]
    assert all(RAW.search(t) for t in raw)  # the catalog's captions do mention W_Q, d_k, d_model
    res = render_scene(Subscripts, make_inputs(lang=lang), name="subscripts", quality="l", fmt="mp4", out=tmp_path,
                       extra_config=TINY, chapters=True)
    srt = next(f for f in res.files if f.suffix == ".srt").read_text(encoding="utf-8")
    vtt = next(f for f in res.files if f.suffix == ".vtt").read_text(encoding="utf-8")
    index = json.loads(res.index.read_text(encoding="utf-8"))
    chapter_captions = " ".join(c["text"] for ch in index["chapters"] for c in ch["captions"])
    for written in (srt, vtt, chapter_captions):
        assert not RAW.search(written), written
        assert "WQ" in written and "dₖ" in written and "d-head × d-model" in written
    for text in raw:
        assert " ".join(plain_text(text).split()) in " ".join(srt.split())


def test_script_writes_plain_text_and_says_the_catalog(make_inputs):
    from attention_manim.scenes.review import script_scene

    out = script_scene(Subscripts, make_inputs(lang="en"), name="subscripts")
    blocks = [b for ch in out["chapters"] for b in ch["blocks"]]
    assert [b["text"] for b in blocks] == [plain_text(Say("en")(k, **PARAMS.get(k, {}))) for k in KEYS]
    assert not any(RAW.search(b["text"]) for b in blocks)
    assert "W Q" in blocks[0]["spoken"] and "_" not in blocks[0]["spoken"]  # said from the catalog: "W Q"
    assert all(set(b) == {"id", "start", "end", "text", "spoken"} for b in blocks)  # the script's fields, no more


def test_the_space_mark_has_one_glyph_in_every_language():
    """␣ (a token's leading space) is drawn from the text face, in Korean too (the Korean face has
    none, and Pango's fallback drew another glyph)."""
    from attention_manim.scenes.components.text import label

    def mark(text, size=40):
        g = label(text, size).family_members_with_points()[0]
        return round(g.width, 3), round(g.height, 3), len(g.points)

    assert mark(Say("ko")("common.space_key")) == mark("␣Paris") == mark(Say("pt")("common.space_key")) \
        == mark(Say("en")("common.space_key"))


def test_space_key_only_where_a_token_shows_a_space():
    from attention_manim.scenes.components.word_boxes import space_key
    from attention_manim.scenes.style import DARK as theme

    assert space_key(["the", "robot"], Say("en"), theme) is None
    key = space_key(["The", "␣Paris"], Say("pt"), theme)
    assert key.original_text == "␣ = espaço antes da palavra"


def test_punctuation_guesses():
    from attention_manim.scenes.chapters.going_deeper import punctuation

    assert [punctuation(t) for t in (",", ".", "␣(", "␣Paris", "␣", "T", "3", "...")] == [
        True, True, True, False, False, False, False, True]


def test_space_key_mark_is_as_large_as_in_the_tokens():
    """The key's ␣ was a 4-px speck at the key's text size, smaller than the ␣ it explains: it is
    drawn at the tokens' size, on the key's baseline, in every language."""
    from attention_manim.scenes.components.text import label
    from attention_manim.scenes.components.word_boxes import space_key
    from attention_manim.scenes.style import DARK as theme

    in_token = label("␣Paris", 32)[0]
    for lang in ("en", "ko", "pt"):
        key = space_key(["␣Paris"], Say(lang), theme, mark_size=32)
        assert key.original_text == Say(lang)("common.space_key")
        assert key.mark.height == pytest.approx(in_token.height, rel=0.02)
        assert key.mark.width == pytest.approx(in_token.width, rel=0.02)
        words = [p for p in key if p is not key.mark]
        assert words and all(abs(key.mark.get_y() - w.get_y()) < w.height for w in words)  # on the line
