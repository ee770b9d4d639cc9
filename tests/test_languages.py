"""Every lesson in Korean and Portuguese: nothing on screen or in the captions is English prose.

Each lesson is rendered tiny (the last frame only: all of its Python runs) while every piece of text
it creates is recorded; captions come from the scene's caption log. In Korean, a Latin word must be
a token of the sentence, a math symbol or a head's fallback name (L0H3). In Portuguese, no English
function word may appear outside the tokens. The same check on English output finds its English,
so the check can fail.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from manim import tempconfig

from attention_manim.scenes.registry import load_all

from .conftest import tiny_config

# "MLP" too: the name of the function MLP(E) drawn on screen, which the Korean text introduces once,
# after 다층 퍼셉트론 (review 34: the screen's "MLP" was never tied to the captions' 다층 퍼셉트론)
MATH_WORDS = {"softmax", "cos", "max", "exp", "sqrt", "dk", "d_k", "d_head", "d_model", "elu", "mlp"}
# names of models (and of methods: StreamingLLM, RMSNorm) are names, in every language (Korean writers keep "GPT-3"
# and "SmolLM2" as they are)
MODEL_NAMES = {"gpt", "smollm", "smollm2", "llama", "mistral", "streamingllm", "rmsnorm", "layernorm"}
ENGLISH_WORDS = {"the", "and", "of", "is", "looks", "at", "with", "each", "every", "its", "from", "word",
                 "words", "weight", "weights", "which", "this", "that", "into", "becomes", "next", "first"}


def recorded_render(cls, inputs, tmp_path, monkeypatch):
    import attention_manim.scenes.components.text as text

    seen: list[str] = []
    original = text._prototype

    def recording(s, *args):
        seen.append(s)
        return original(s, *args)

    monkeypatch.setattr(text, "_prototype", recording)
    with tempconfig(tiny_config(tmp_path / "media", (128, 72))):
        scene = cls(inputs)
        scene.render()
        frame = np.array(scene.renderer.get_frame())
    monkeypatch.setattr(text, "_prototype", original)
    # rich_text measures a baseline beside a capital H ("H" + piece): a measurement, never drawn
    drawn = set(seen)
    seen = [s for s in seen if not (s.startswith("H") and s[1:] in drawn)]
    return scene, seen, frame


def allowed_tokens(scene) -> set[str]:
    words = set()
    for t in scene.setting.traces:
        words |= set(t.tokens)
        # the model's own next-word guesses (bar charts of predictions) are data, not prose
        top = np.argsort(-t.logits, axis=-1)[:, :12]
        words |= {t.vocab[j] for j in top.ravel()}
    for s in scene.setting.model.examples.values():  # passages a lesson may add (context size)
        words |= set(s.lower().split())
    return words


def latin_words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z_]*", text)


def foreign(strings, tokens, lang) -> list[str]:
    bad = []
    for s in strings:
        # a subscripted name as plain text writes it (scenes.i18n.plain_text: d_model -> "d-model") is
        # the symbol, as d_model is
        s = re.sub(r"(?<![A-Za-z])([A-Za-z])-([A-Za-z]{2,5})(?![A-Za-z])", r"\1_\2", s)
        for w in latin_words(s):
            lw = w.lower()
            if lw in tokens or lw in MATH_WORDS or lw in MODEL_NAMES or re.fullmatch(r"L\d+H\d+|[A-Za-z]_[A-Za-z]{1,5}", w):
                continue
            if lang == "ko":
                # symbols: Q, K, V, E, W, QK, and one-letter names of running values (m, l)
                if len(w) == 1 or (len(w) <= 2 and not w.islower()):
                    continue
                bad.append(w)
            elif lw in ENGLISH_WORDS:
                bad.append(w)
    return bad


# a real model's lesson that refuses the toy (mlp) is rendered in ko and pt on SmolLM2 in its own file
LESSONS = sorted(n for n, cls in load_all().items() if not getattr(cls.lesson, "refuses_toy", False))


@pytest.mark.render
@pytest.mark.parametrize("lang", ["ko", "pt"])
@pytest.mark.parametrize("name", LESSONS)
def test_no_english_on_screen_or_in_captions(name, lang, make_inputs, tmp_path, monkeypatch):
    cls = load_all()[name]
    scene, seen, frame = recorded_render(cls, make_inputs(lang=lang), tmp_path, monkeypatch)
    captions = [c for c, _ in scene.caption_log]
    tokens = allowed_tokens(scene)
    assert seen and frame.any()
    assert not foreign(seen, tokens, lang), (name, lang, sorted(set(foreign(seen, tokens, lang))))
    assert not foreign(captions, tokens, lang), (name, lang, sorted(set(foreign(captions, tokens, lang))))
    if lang == "ko":
        assert captions and all(re.search(r"[\uac00-\ud7a3]", c) for c in captions)


@pytest.mark.render
def test_the_check_finds_english(make_inputs, tmp_path, monkeypatch):
    cls = load_all()["attention_pattern"]
    scene, seen, _ = recorded_render(cls, make_inputs(lang="en"), tmp_path, monkeypatch)
    tokens = allowed_tokens(scene)
    assert foreign(seen + [c for c, _ in scene.caption_log], tokens, "ko")
    assert foreign([c for c, _ in scene.caption_log], tokens, "pt")


def test_korean_is_set_in_a_korean_font_without_missing_glyphs():
    import manimpango

    from attention_manim.scenes.components.text import label
    from attention_manim.scenes.style import KOREAN_FONT

    assert KOREAN_FONT in manimpango.list_fonts()
    for s in ("쿼리와 키", "주의 패턴", "마스킹된 가중치"):
        m = label(s, 30)
        assert m.font == KOREAN_FONT
        assert len(m.submobjects) == len(s.replace(" ", ""))  # one glyph per syllable: no tofu boxes


def test_a_power_of_ten_in_korean_text_is_set_as_in_english():
    """head_split ko drew "가장 큰 차이: 2.5×10⁻  ⁷": the Korean face has no superscripts and the
    fallback set the minus apart from its digit. The power of ten is borrowed from the text face."""
    from attention_manim.scenes.components.text import label

    def last_gaps(s, size=28):
        glyphs = label(s, size).family_members_with_points()
        return [b.get_left()[0] - a.get_right()[0] for a, b in zip(glyphs[-4:], glyphs[-3:])]

    english, korean = last_gaps("largest: 2.5×10⁻⁷"), last_gaps("가장 큰 차이: 2.5×10⁻⁷")
    assert korean == pytest.approx(english, abs=0.01) and max(korean) < 0.1


def test_a_greek_letter_in_korean_text_is_the_formulas_letter():
    """values ko wrote "⊿E" in "층은 헤드 9개의 ΔE를 모두 더함": the Korean face's Δ is a right triangle.
    The letter is borrowed from the text face: the same outline as in English."""
    import numpy as np

    from attention_manim.scenes.components.text import label

    def delta(s):
        g = label(s, 28).submobjects[0]
        return np.round((g.points - g.get_center())[:, :2], 3)

    english, korean = delta("ΔE of the heads"), delta("ΔE를 모두 더함")
    assert english.shape == korean.shape and np.allclose(english, korean, atol=0.01)


def test_portuguese_accents_render_in_the_serif():
    from attention_manim.scenes.components.text import label
    from attention_manim.scenes.style import FONT

    s = "ação máscara é"
    m = label(s, 30)
    assert m.font == FONT and len(m.submobjects) == len(s.replace(" ", ""))


@pytest.mark.render
def test_srt_is_in_the_chosen_language(tmp_path, make_inputs):
    from attention_manim.scenes.runner import render_scene

    cls = load_all()["attention_pattern"]
    res = render_scene(cls, make_inputs(lang="ko"), name="attention_pattern", quality="l", fmt="mp4", out=tmp_path,
                       extra_config={"pixel_width": 128, "pixel_height": 72, "frame_rate": 5})
    srt = (tmp_path / "480p15" / "attention_pattern.ko.srt").read_text(encoding="utf-8")  # <scene>.<lang>.srt
    assert re.search(r"[\uac00-\ud7a3]", srt) and "looks" not in srt and "weight" not in srt
    assert any(f.suffix == ".mp4" for f in res.files)


@pytest.mark.render
def test_captions_stay_longer_for_slower_reading(make_inputs, tmp_path, monkeypatch):
    """A caption is held at least len(text) / (the language's characters per second)."""
    from attention_manim.scenes.i18n import Say

    for lang in ("en", "ko"):
        cls = load_all()["attention_pattern"]
        scene, _, _ = recorded_render(cls, make_inputs(lang=lang), tmp_path / lang, monkeypatch)
        cps = Say(lang).chars_per_second
        for text, duration in scene.caption_log:
            assert duration >= len(text) / cps - 0.07, (lang, text, duration)
    assert Say("ko").chars_per_second < Say("en").chars_per_second
