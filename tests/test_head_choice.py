"""A lesson shown on a head that is not its role's own says why (issue 20, "trust"): a model whose
vocabulary lacks the story's probe words falls back to a measured structural head, and the lesson's
note (en, ko, pt) and the command line's stderr say which role could not be measured, why (the words
the vocabulary lacks, carried from model/probes.py as data), and which head is shown instead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
N_CTX = 32
SENTENCE = "the wild wolf found a black horse and the horse ran"


def odd_vocab_model():
    """A small real-family (GPT-2-like) model whose word vocabulary has the structural probes' common
    words but none of the story phrases' own words ("fluffy", "creature", ...), and whose head 0 looks
    one token back (positions one-hot, the key at j answering the query at j + 1): measured as a
    previous-token head; head 1 is random."""
    import torch

    from attention_manim.model.config import ModelConfig
    from attention_manim.model.probes import PROBE_WORDS, STORY_PROBES
    from attention_manim.model.transformer import random_model

    story = {w for probes in STORY_PROBES.values() for p in probes for w in p.text.split()} - {"the", "a", "and"}
    vocab = ["the", "a", "and", "."] + [w for w in PROBE_WORDS if w not in story]
    cfg = ModelConfig(name="odd words", vocab=vocab, d_model=2 * N_CTX, n_heads=2, d_head=N_CTX, n_layers=1,
                      n_ctx=N_CTX, family="gpt2", examples={"fluffy_blue_creature": SENTENCE})
    model = random_model(cfg, seed=0)
    with torch.no_grad():
        model.W_pos.zero_()
        model.W_pos[:, :N_CTX] = 6.0 * torch.eye(N_CTX)
        model.W_E[:, :N_CTX] = 0.0
        block = model.blocks[0]
        block.W_Q[0].zero_()
        block.W_K[0].zero_()
        block.W_Q[0][:N_CTX, :] = torch.eye(N_CTX)
        block.W_K[0][:N_CTX - 1, 1:] = torch.eye(N_CTX - 1)
    return model.eval()


@pytest.fixture
def odd_session(tmp_path, monkeypatch):
    from attention_manim.model.session import ModelSession

    monkeypatch.setenv("ATTENTION_MANIM_CACHE", str(tmp_path / "cache"))
    return ModelSession(odd_vocab_model(), "odd words")


def test_the_fallback_carries_the_words_the_vocabulary_lacks(odd_session):
    choice = odd_session.head_choice()
    assert choice.ref == (0, 0) == odd_session.default_head()
    assert choice.fell_back and choice.asked == "adjective_noun" and choice.role == "previous_token"
    gap = choice.gap
    assert gap.reason == "missing_words" and gap.words[:3] == ("fluffy", "blue", "creature")
    assert {"tiny", "verdant", "knight"} <= set(gap.words) and "the" not in gap.words
    assert odd_session.info.role_gaps["verb_object"].words[:2] == ("they", "crashed")
    # a role it has is its own head, no fallback
    own = odd_session.head_choice("previous_token")
    assert own.ref == (0, 0) and not own.fell_back and own.gap is None


def test_a_role_no_head_scores_enough_on_says_the_threshold_and_the_best():
    from attention_manim.model.trace import ModelInfo, RoleGap

    gap = RoleGap("below_threshold", best=0.21, best_head=(1, 3), threshold=0.3)
    info = ModelInfo(name="m", d_model=8, n_heads=4, d_head=2, n_layers=2, n_ctx=8, causal=True, family="gpt2",
                     roles={"adjective_noun": (1, 2), "induction": (0, 1)}, role_gaps={"previous_token": gap})
    choice = info.head_choice("previous_token")
    assert choice.ref == (1, 2) and choice.role == "adjective_noun" and choice.gap == gap
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.head_choice import note_text

    en = note_text(Say("en"), choice)
    assert "“previous token”" in en and "0.30" in en and "0.21" in en and "layer 1 · head 3" in en
    assert "layer 1 · head 2" in en and "“adjectives → nouns”" in en
    assert "0,30" in note_text(Say("pt"), choice) and "0,21" in note_text(Say("pt"), choice)
    # nothing measured at all: layer 0 head 0, and the note says no other role could be measured
    none = ModelInfo(name="m", d_model=8, n_heads=4, d_head=2, n_layers=2, n_ctx=8, causal=True, family="llama",
                     role_gaps={"adjective_noun": RoleGap("unmatched")}).head_choice()
    assert none.ref == (0, 0) and none.role == "" and none.fell_back
    assert "No other role" in note_text(Say("en"), none) and "grouped back" in note_text(Say("en"), none)


def test_the_note_is_in_every_language_and_names_the_missing_words(odd_session):
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.head_choice import note_text

    choice = odd_session.head_choice()
    notes = {lang: note_text(Say(lang), choice) for lang in ("en", "ko", "pt")}
    assert notes["en"].startswith("This lesson's role, “adjectives → nouns”, could not be measured")
    assert "“fluffy”, “blue” and “creature”" in notes["en"] and "“previous token”" in notes["en"]
    assert notes["en"].endswith("layer 0 · head 0.")
    assert "‘fluffy’, ‘blue’, ‘creature’" in notes["ko"] and "‘바로 앞 토큰’" in notes["ko"]
    assert "0층 · 헤드 0" in notes["ko"]
    assert "“fluffy”, “blue” e “creature”" in notes["pt"] and "“token anterior”" in notes["pt"]
    assert "camada 0 · head 0" in notes["pt"]
    count = len(choice.gap.words)
    assert f"{count} of the probe words" in notes["en"] and f"{count}개" in notes["ko"]


def _lesson_captions(render_scene, session, lang):
    from attention_manim.scenes.lessons import ATTENTION_PATTERN
    from attention_manim.scenes.setting import SceneInputs

    inputs = SceneInputs(tracer=session, model=session.info, lang=lang)
    scene, _ = render_scene(ATTENTION_PATTERN, inputs, png=False)
    return scene, [c for c, _ in scene.caption_log]


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_a_fallen_back_lesson_says_why_in_its_captions(render_scene, odd_session, lang, capsys):
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.plans.head_choice import note_text

    scene, captions = _lesson_captions(render_scene, odd_session, lang)
    note = note_text(Say(lang), odd_session.head_choice())
    assert scene.setting.head.layer == 0 and scene.setting.head.head == 0
    assert scene.setting.head_choice.fell_back and captions[0] == note
    assert "fluffy" in captions[0] and scene.head_note == note
    assert f"note: {note}" in capsys.readouterr().err


def test_no_note_where_the_model_has_the_story_head(render_scene, tracer, toy_model):
    from attention_manim.scenes.lessons import ATTENTION_PATTERN
    from attention_manim.scenes.setting import SceneInputs

    for lang in ("en", "ko", "pt"):
        scene, _ = render_scene(ATTENTION_PATTERN, SceneInputs(tracer=tracer, model=toy_model.info, lang=lang),
                                png=False)
        assert not scene.setting.head_choice.fell_back and scene.head_note is None
        assert not any("could not be measured" in c or "측정할 수 없습니다" in c or "não pôde ser medido" in c
                       for c, _ in scene.caption_log)


def test_no_note_on_smollm2(render_scene, smollm2_model):
    from attention_manim.model.session import ModelSession
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.lessons import ATTENTION_PATTERN
    from attention_manim.scenes.setting import SceneInputs

    session = ModelSession(smollm2_model, "smollm2")
    assert not session.head_choice().fell_back and not session.head_choice("previous_token").fell_back
    scene, _ = render_scene(ATTENTION_PATTERN, SceneInputs(tracer=session, model=session.info, lang="ko"), png=False)
    assert scene.head_note is None
    start = Say("ko")("common.head_choice.fallback", asked="", reason="", role="", head="")[:12]
    assert not any(c.startswith(start) for c, _ in scene.caption_log)


def test_a_head_the_user_names_gets_no_note(render_scene, odd_session):
    from attention_manim.scenes.lessons import ATTENTION_PATTERN
    from attention_manim.scenes.setting import SceneInputs

    inputs = SceneInputs(tracer=odd_session, model=odd_session.info, layer=0, head=1)
    scene, _ = render_scene(ATTENTION_PATTERN, inputs, png=False)
    assert scene.setting.head_choice is None and scene.head_note is None


def test_the_command_line_says_why_on_stderr(tmp_path):
    from attention_manim.model.loading import save_model

    folder = save_model(odd_vocab_model(), tmp_path / "odd")
    env = dict(os.environ, ATTENTION_MANIM_CACHE=str(tmp_path / "cache"))
    r = subprocess.run([sys.executable, "render.py", "attention_pattern", "--model", str(folder), "--format", "png",
                        "--out", str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr[-1500:]
    lines = [line for line in r.stderr.splitlines() if "could not be measured" in line]
    assert len(lines) == 1, r.stderr[-1500:]
    assert lines[0].startswith("note: This lesson's role, “adjectives → nouns”")
    assert "“fluffy”, “blue” and “creature”" in lines[0] and "“previous token”" in lines[0]
    assert lines[0].endswith("layer 0 · head 0.")


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_the_explorer_says_why_it_opened_on_a_fallback_head(odd_session, lang):
    from attention_manim.explorer.app import head_note
    from attention_manim.scenes.i18n import Say

    choice = odd_session.head_choice()
    note = head_note(lang, choice, *choice.ref)
    assert note and "fluffy" in note and note == note_text_of(Say(lang), choice)
    assert head_note(lang, choice, 0, 1) == ""  # a head the user picked needs no explanation


def note_text_of(say, choice):
    from attention_manim.scenes.plans.head_choice import note_text

    return note_text(say, choice)
