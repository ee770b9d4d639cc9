"""render.py storyboard and lint: a lesson with planted defects is caught rule by rule, a declared
exception is listed (not counted), the fast end-state jump agrees with manim's own skipped play, and
storyboards write the frames and contact sheet they promise."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from manim import DOWN, RIGHT, UP, Dot, FadeIn, FadeOut, Transform, VGroup
from PIL import Image

from attention_manim.scenes import review
from attention_manim.scenes.components.text import label, number
from attention_manim.scenes.lesson import Chapter, Lesson, lesson_scene

from .conftest import ROOT


class Planted(Chapter):
    """Every defect the lint looks for, once (test fixture: its strings are not lesson words)."""

    key = "planted"

    def plan(self, setting):
        return setting.head

    def play(self, stage, plan):
        small = number(0.48, "weight", font_size=10).move_to([-5, 3, 0])  # digits ~9 px at 720p
        tiny = label("tiny words", 8).move_to([-5, 2, 0])  # cap height ~7 px
        a = label("alpha", 30).move_to([2, 2, 0])
        b = label("beta", 30).move_to([2.1, 2, 0])  # collides with alpha
        cut = label("cut off", 30).move_to([7.0, 0, 0])  # half past the right edge
        c = review.exempt(label("plate", 30).move_to([-3, -2, 0]), "overlap", "a label on its plate, on purpose")
        d = label("plated", 30).move_to([-3.05, -2, 0])
        panel = VGroup(label("0,25", 30), label("0.50", 30)).arrange(RIGHT, buff=0.5).move_to([2, -2, 0])
        big = label("1.25", 40).move_to([-4, 0, 0])
        raw = label("W_Q", 30).move_to([-4, -3, 0])
        title = label(stage.say.role("previous_token", plan.layer, plan.head), 30).move_to([0, 3.4, 0])
        with stage.narrating("the weights are 1.25 and 0.77 here"):  # 0.77 is on no screen
            stage.play(*(FadeIn(m) for m in (small, tiny, a, b, cut, c, d, panel, big, title, raw)), run_time=0.5)
        stage.play(Transform(a, label("alpha", 30).move_to([2, 1, 0])), run_time=0.5)  # moves clear of beta


class Small(Chapter):
    """A chapter that ends on a dot in the middle of an empty frame."""

    key = "small"

    def plan(self, setting):
        return None

    def play(self, stage, plan):
        stage.clear()
        stage.play(FadeIn(Dot()), FadeIn(label("just this", 30).next_to(ORIGIN_DOT, DOWN)), run_time=0.5)


ORIGIN_DOT = Dot()
PLANTED = lesson_scene(Lesson("planted_lesson", (Planted(), Small())))


@pytest.fixture(scope="module")
def planted(make_inputs):
    # the toy's L0H0 is its adjectives → nouns head: calling it "previous token" is dishonest
    linter = review.Linter("planted_lesson", "en", "toy")
    review.play_watched(PLANTED, make_inputs(layer=0, head=0), linter)
    return linter.violations


def test_each_planted_defect_is_found_once(planted):
    rules = sorted(v.rule for v in planted if not v.exception)
    # the planted "0,25" beside "0.48" breaks two rules: a panel's one convention, and English's own writing
    assert rules == sorted(["number_size", "text_size", "overlap", "off_frame", "decimal_convention",
                            "number_locale", "caption_number", "honest_title", "frame_used", "typeset_math",
                            "uncaptioned_end"]), \
        [v.line() for v in planted]
    by_rule = {v.rule: v for v in planted if not v.exception}
    assert "'0.48'" in by_rule["number_size"].what and "px < 14 px" in by_rule["number_size"].what
    px = float(by_rule["number_size"].what.split()[1])
    assert 6 < px < 12  # 10-point digits are about 9 px tall at 720p
    assert "'tiny words'" in by_rule["text_size"].what
    assert {"'alpha'", "'beta'"} <= set(by_rule["overlap"].what.replace(" overlaps ", " ").split())
    assert "'cut off'" in by_rule["off_frame"].what
    assert "'W_Q'" in by_rule["typeset_math"].what
    assert "0,25" in by_rule["number_locale"].what
    assert by_rule["caption_number"].what.startswith("the caption says 0.77 but")
    assert sum(v.rule == "caption_number" for v in planted) == 1  # 1.25 is on screen
    assert "L0H0" in by_rule["honest_title"].what and "adjective_noun" in by_rule["honest_title"].what
    assert by_rule["frame_used"].chapter == "small"
    assert all(v.chapter == "planted" for r, v in by_rule.items() if r != "frame_used")


def test_a_declared_exception_is_listed_with_its_reason(planted):
    exceptions = [v for v in planted if v.exception]
    assert [v.rule for v in exceptions] == ["overlap"]
    assert exceptions[0].exception == "a label on its plate, on purpose"
    assert "declared exception: a label on its plate, on purpose" in exceptions[0].line()


def test_time_runs_while_nothing_is_drawn(make_inputs):
    linter = review.Linter("planted_lesson", "en", "toy")
    scene = review.play_watched(PLANTED, make_inputs(layer=0, head=0), linter)
    # three plays of 0.5 s, the caption held until it is read (34 characters at 17 per second)
    assert scene.renderer.time == pytest.approx(0.5 + len("the weights are 1.25 and 0.77 here") / 17 - 0.5 + 0.5 + 0.5 + 0.5,
                                                abs=0.05)
    assert scene.renderer.num_plays >= 4


@pytest.mark.parametrize("name", ["dot_products", "values", "key"])
def test_the_fast_jump_leaves_what_a_skipped_play_leaves(name, make_inputs):
    """Jumping fades and transforms to their end must leave the same mobjects where manim's own
    (slower) skipped play leaves them, after every play: every text's box, every shape's box, and the
    same violations (key: labels that follow their shape by an updater; values: remover=True)."""
    from attention_manim.scenes.registry import load_all

    cls = load_all()[name]

    class Log(review.Linter):
        def __init__(self, *a):
            super().__init__(*a)
            self.log = []

        def played(self, scene, animations):
            super().played(scene, animations)
            self.log.append((round(scene.renderer.time, 3),
                             sorted((t.text, tuple(np.round(t.box, 3))) for t in review.visible_texts(scene)),
                             sorted(tuple(np.round(review._box(m), 3)) for m, _ in review.visible_leaves(scene))))

    seen = {}
    for fast in (True, False):
        watcher = Log(name, "en", "toy")
        watcher.fast = fast
        review.play_watched(cls, make_inputs(), watcher)
        seen[fast] = watcher
    assert len(seen[True].log) == len(seen[False].log) > 5
    for k, (quick, slow) in enumerate(zip(seen[True].log, seen[False].log)):
        assert quick == slow, f"play {k} at {slow[0]} s differs"
    assert [v.line() for v in seen[True].violations] == [v.line() for v in seen[False].violations]
    assert len(seen[True].log[-1][2]) > 20


def test_numbers_in_captions_are_read_the_language_s_way():
    assert review.caption_numbers("keeps 0.96 of it, 3 heads, 1,572,864 numbers", "en") == [("0.96", "0.96")]
    assert review.caption_numbers("guarda 0,96 dele; 1.572.864 números", "pt") == [("0,96", "0.96")]
    assert review.caption_numbers("2.5×10⁻⁷ apart, 48%", "en") == [("2.5×10⁻⁷", "2.5×10⁻⁷"), ("48%", "48%")]
    assert review.caption_numbers("layer 12, head 3", "en") == []


def test_storyboard_writes_key_frames_and_a_contact_sheet(make_inputs, tmp_path):
    res = review.storyboard_scene(PLANTED, make_inputs(layer=0, head=0, lang="pt"), name="planted_lesson",
                                  model="toy", out=tmp_path, quality="l")
    folder = tmp_path / "storyboard" / "planted_lesson.pt"
    names = sorted(p.name for p in folder.iterdir())
    # the caption block's end, the first chapter's last frame (a play came after the caption), the second's
    assert names == ["01_planted_01.png", "01_planted_02.png", "02_small_01.png", "contact.png"]
    assert [p.name for p in res.files] == names[:3] + ["contact.png"]
    frame = np.array(Image.open(folder / "01_planted_01.png"))
    assert frame.shape == (480, 854, 3)
    # "alpha" before it moved: bright pixels around (2, 2) in scene units -> (x 555, y 120) at 854×480
    assert frame[105:135, 520:600].max() > 200
    moved = np.array(Image.open(folder / "01_planted_02.png"))
    # then it moved down a unit, to y 1 (pixel row 180): dark there before, bright after
    assert frame[165:195, 520:575].max() < 60 and moved[165:195, 520:575].max() > 200
    sheet = Image.open(folder / "contact.png")
    assert sheet.width > 1000 and sheet.height > 200
    assert not list((tmp_path / "storyboard").glob(".*"))  # no temp folder left


def run_cli(*args, timeout=600):
    return subprocess.run([sys.executable, str(ROOT / "render.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_cli_lint_unknown_scene_is_a_clear_error():
    r = run_cli("lint", "atention_pattern")
    assert r.returncode == 2
    assert "unknown scene 'atention_pattern'" in r.stderr and "attention_pattern" in r.stderr.split("hint:")[1]
    assert "Traceback" not in r.stderr


def test_cli_lint_json_and_exit_code():
    r = run_cli("lint", "attention_pattern", "--lang", "en,ko", "--json")
    data = json.loads(r.stdout)
    assert set(data) == {"rules", "violations", "exceptions", "lessons"}
    assert [(x["scene"], x["lang"], x["model"]) for x in data["lessons"]] == [("attention_pattern", "en", "toy"),
                                                                                ("attention_pattern", "ko", "toy")]
    assert r.returncode == (1 if data["violations"] else 0)
    assert set(data["rules"]) == set(review.RULES)


def test_cli_lint_of_several_lessons_skips_one_that_refuses_the_sentence():
    """cross_attention wants an English and a French sentence: in a run of several lessons it is named as
    skipped with its reason, and the others are checked; asked for alone, it is the user's error (exit 2)."""
    sentence = "the tiny red fox saw a huge green tower"
    r = run_cli("lint", "cross_attention", "attention_pattern", "--sentence", sentence, "--json")
    data = json.loads(r.stdout)
    lessons = {x["scene"]: x for x in data["lessons"]}
    assert "English then French" in lessons["cross_attention"]["skipped"]
    assert lessons["attention_pattern"]["skipped"] is None and lessons["attention_pattern"]["seconds"] > 0
    assert r.returncode == (1 if data["violations"] else 0)
    alone = run_cli("lint", "cross_attention", "--sentence", sentence)
    assert alone.returncode == 2 and "English then French" in alone.stderr and "Traceback" not in alone.stderr


class BackToStart(Chapter):
    """A caption over a label; then, with no caption, the label leaves and comes back to where it was
    (as values's camera flies back over the grid): the chapter ends on a frame already saved."""

    key = "back"

    def plan(self, setting):
        return None

    def play(self, stage, plan):
        stage.clear()
        word = label("alpha", 40).move_to([2, 2, 0])
        with stage.narrating("alpha"):
            stage.play(FadeIn(word), run_time=0.5)
        stage.play(word.animate.shift(DOWN), run_time=0.3)
        stage.play(word.animate.shift(UP), run_time=0.3)


def test_a_chapter_ending_on_a_frame_already_saved_adds_no_frame(make_inputs, tmp_path):
    review.storyboard_scene(lesson_scene(Lesson("back_lesson", (BackToStart(),))), make_inputs(lang="en"), name="back_lesson",
                            model="toy", out=tmp_path, quality="l")
    names = sorted(p.name for p in (tmp_path / "storyboard" / "back_lesson").iterdir())
    assert names == ["01_back_01.png", "contact.png"]  # not a second, identical, caption-less frame


def test_cli_storyboard_prints_its_files(tmp_path):
    r = run_cli("storyboard", "softmax", "--lang", "ko", "-q", "l", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    files = r.stdout.split()
    assert files and all(tmp_path.joinpath(f).exists() or (tmp_path / f).exists() or __import__("os").path.exists(f)
                         for f in files)
    assert files[-1].endswith("storyboard/softmax.ko/contact.png")
    assert any(f.endswith("01_softmax_01.png") for f in files)


def test_cli_storyboard_unwritable_out(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    r = run_cli("storyboard", "softmax", "--out", str(blocker / "sub"))
    assert r.returncode == 2 and "cannot write" in r.stderr and "--out" in r.stderr


@pytest.mark.parametrize("text, comma, point", [
    ("0,48", True, False), ("0.48", False, True),
    ("1.572.864", True, False), ("1,572,864", False, True),
    ("0.121", False, True), ("0,121", True, False),  # no thousands group after a lone 0
    ("12,5", True, False), ("12.5", False, True),
    ("1,234", False, True), ("1.234", True, False),  # three digits after 1-999: a thousands mark
    ("layer 12", False, False), ("0,00000027", True, False),
])
def test_decimal_conventions_are_told_apart(text, comma, point):
    assert bool(review.DECIMAL_COMMA.search(text)) is comma
    assert bool(review.DECIMAL_POINT.search(text)) is point


@pytest.mark.parametrize("text, lang, comma, point", [
    # one group of three digits after a lone mark reads as the language's own decimal (review 52: eiffel's
    # "+7.638 (0.021 → 7.659)" was called a Portuguese thousands point beside English decimals)
    ("+7.638", "en", False, True), ("+7,638", "pt", True, False),
    ("1,234", "en", False, True), ("1.234", "pt", True, False),  # a thousands mark in its own language
    ("1.572.864", "en", True, False), ("1,572,864", "pt", False, True),  # two groups: the other language's
    ("0.48", "pt", False, True), ("0,48", "en", True, False),
])
def test_decimal_marks_read_by_the_language(text, lang, comma, point):
    assert review.decimal_marks(text, lang) == (comma, point)


def test_a_portuguese_three_decimal_figure_is_not_a_thousands_comma_where_a_figure_says_so():
    """"8,154" in Portuguese looks like an English thousands comma; written as eiffel's E′ to three decimals
    (review 52), a figure on screen says it is 8.154 and the number_locale rule lets it be."""
    assert review.foreign_numbers("(8,154 → 3,349)", "pt")  # by its look alone
    assert review.decimal_figure("8,154", "pt", [8.1537, -3.3492])
    assert review.decimal_figure("3,349", "pt", [8.1537, -3.3492])  # a negative figure's digits
    assert not review.decimal_figure("65,536", "pt", [8.1537])  # no such figure: still a thousands comma
    assert not review.decimal_figure("8,154", "pt", [])
    assert not review.decimal_figure("8,154", "en", [8.154])  # English: its own rules


def test_the_contact_sheet_draws_every_caption_glyph():
    """Korean from NanumGothic; the rest (ã, ␣, −, →) from a face that has it, not a missing-glyph box,
    and not NanumGothic's arrow, which draws as a stub at the sheet's sizes (the reviewers read "adjectives  nouns")."""
    font = review.SheetFont(15)
    if len(font.faces) < 2:
        pytest.skip("the sheet's fonts are not installed")
    korean = font.face_for("가")
    assert korean.path.endswith("NanumGothic.ttf")
    for ch in "ã␣−→":
        face = font.face_for(ch)
        assert face is not korean and font._mask(ch, face) != font._missing[font.faces.index(face)], ch
    arrow = np.array(font.face_for("→").getmask("→")).reshape(font.face_for("→").getmask("→").size[::-1])
    inked = np.nonzero((arrow > 128).any(axis=0))[0]
    assert inked.size and inked[-1] - inked[0] >= 10  # a shaft across the glyph, not a 2-pixel stub
    assert len(font.runs("atenção ␣the 가 →")) >= 3  # the face changes inside a line


def test_the_contact_sheet_shows_a_long_caption_whole(tmp_path):
    """Long captions were cut after two lines: the text band grows to the longest caption."""
    from PIL import Image

    Image.new("RGB", (160, 90), (0, 0, 0)).save(tmp_path / "a.png")
    Image.new("RGB", (160, 90), (0, 0, 0)).save(tmp_path / "b.png")
    long = " ".join(["word"] * 60)
    short = [{"file": "a.png", "time": 1.0, "caption": "short"}, {"file": "b.png", "time": 2.0, "caption": "short"}]
    plain = np.asarray(Image.open(review.contact_sheet(short, tmp_path, "t", columns=2, width=160)))
    sheet = np.asarray(Image.open(review.contact_sheet([short[0], {**short[1], "caption": long}], tmp_path, "t",
                                                       columns=2, width=160)))
    assert sheet.shape[0] >= plain.shape[0] + 18 * 5  # 60 words at 160 px: many more lines than two
    band = sheet[48 + 90 + 24 + 18 * 4:, 12 + 160 + 12:]  # the long caption's fifth line and below
    assert (band > 150).any()


class Gone(Chapter):
    """A caption's number shown, then taken away (or left where the camera no longer looks) before the
    caption ends; and one shown only off camera."""

    key = "gone"

    def plan(self, setting):
        return None

    def play(self, stage, plan):
        stage.clear()
        big = VGroup(*(label(f"{k}.5{k}", 40).move_to([-5 + 2.5 * k, 0, 0]) for k in range(5)))
        stay, fade, away = label("3.75", 40).move_to([0, 2, 0]), label("6.25", 40).move_to([0, -2, 0]), \
            label("8.125", 40).move_to([0, -12, 0])  # far below the frame: in the scene, never on screen
        with stage.narrating("stays 3.75, then fades 6.25, and 8.125 is never seen"):
            stage.play(FadeIn(big), FadeIn(stay), FadeIn(fade), FadeIn(away), run_time=0.5)
            stage.play(FadeOut(fade), run_time=0.5)
        stage.play(FadeOut(stay), run_time=0.5)  # after the caption: fine


def test_a_caption_number_gone_before_the_caption_ends_is_found(make_inputs):
    linter = review.Linter("gone_lesson", "en", "toy")
    review.play_watched(lesson_scene(Lesson("gone_lesson", (Gone(),))), make_inputs(), linter)
    found = sorted((v.rule, v.what.split()[3].rstrip(",")) for v in linter.violations if v.rule.startswith("caption"))
    assert found == [("caption_end", "6.25"), ("caption_number", "8.125")], [v.line() for v in linter.violations]


def test_storyboard_skips_a_cleared_stage_showing_only_the_corner_key(tmp_path):
    """SmolLM2's gallery saved an all-black frame at a chapter's end (review 36): the stage was cleared
    and only the corner key to ␣ was left. That is no key frame."""
    from types import SimpleNamespace


    key = label("␣ = a space before the word", 20)
    scene = SimpleNamespace(mobjects=[key], stage=SimpleNamespace(space_key=key))
    assert review.visible_leaves(scene)  # something is drawn: the key
    board = review.Storyboard(tmp_path)
    board.capture(scene, "")  # returns before rendering anything
    assert board.frames == [] and not list(tmp_path.iterdir())


class StillCaptions(Chapter):
    """Review 53: captions that point at nothing new. The second caption ends on the first one's picture
    (still); the third moves a label (new); after the last caption a label fades (adds nothing) and a
    new one comes (a picture no caption explains)."""

    key = "still"
    after = "new"  # what the chapter does after its last caption: "new", "fade", "leave" (Stage.on_leave)

    def plan(self, setting):
        return None

    def play(self, stage, plan):
        stage.clear()
        a, b = label("alpha", 40).move_to([-3, 2, 0]), label("beta", 40).move_to([3, -2, 0])
        with stage.narrating("one"):
            stage.play(FadeIn(a), FadeIn(b), run_time=0.5)
        with stage.narrating("two"):
            stage.wait(0.5)
        with stage.narrating("three"):
            stage.play(a.animate.shift(DOWN), run_time=0.5)
        stage.play(FadeOut(b), run_time=0.3)  # only takes away: nothing unexplained
        if self.after == "new":
            stage.play(FadeIn(label("gamma", 40).move_to([0, -3, 0])), run_time=0.3)
        elif self.after == "leave":  # played when a next chapter starts, never at this one's end
            stage.on_leave(lambda: stage.play(FadeIn(label("gamma", 40).move_to([0, -3, 0])), run_time=0.3))


class StillThenLeave(StillCaptions):
    after = "leave"


class NextCaption(Chapter):
    """A chapter whose first caption ends on the last chapter's picture, then one over a new one."""

    key = "next"

    def plan(self, setting):
        return None

    def play(self, stage, plan):
        with stage.narrating("four"):
            stage.wait(0.5)
        with stage.narrating("five"):
            stage.play(FadeIn(label("delta", 40).move_to([0, 3, 0])), run_time=0.3)


def still_findings(make_inputs, *chapters):
    linter = review.Linter("still_lesson", "en", "toy")
    scene = review.play_watched(lesson_scene(Lesson("still_lesson", chapters)), make_inputs(), linter)
    return sorted((v.chapter, v.rule) for v in linter.violations
                  if v.rule in ("still_caption", "uncaptioned_end")), scene


def test_a_caption_over_an_unchanged_picture_and_a_picture_after_the_captions_are_found(make_inputs):
    found, _ = still_findings(make_inputs, StillCaptions())
    assert found == [("still", "still_caption"), ("still", "uncaptioned_end")]
    # the still one is the second caption, the first over the same picture
    linter = review.Linter("still_lesson", "en", "toy")
    review.play_watched(lesson_scene(Lesson("still_lesson", (StillCaptions(),))), make_inputs(), linter)
    assert "('two')" in next(v.what for v in linter.violations if v.rule == "still_caption")


def test_what_a_chapter_leaves_to_undo_plays_when_the_next_starts(make_inputs):
    found, scene = still_findings(make_inputs, StillThenLeave())
    assert found == [("still", "still_caption")]  # the chapter ends on its last caption's picture
    assert not any(getattr(m, "text", "") == "gamma" for m in scene.mobjects)  # no next chapter: never played
    found, scene = still_findings(make_inputs, StillThenLeave(), NextCaption())
    # the undo plays as the next chapter starts: its first caption ends on a new picture (gamma), not a still
    assert found == [("still", "still_caption")]
    assert any(getattr(m, "text", "") == "gamma" for m in scene.mobjects)
    found, _ = still_findings(make_inputs, StillCaptions(), NextCaption())
    assert ("next", "still_caption") in found  # "four" over the picture the chapter before ended on
