"""Every character on screen comes from a face chosen for it, never from Pango's fallback.

CMU Serif lacks ≈ ≥ ≤ ∞ ′ and most superscripts; Pango filled them from DejaVu Sans, a sans-serif
"≈" and "10⁻⁷" in serif lines (review 33). `face_spans` sends them to FreeSerif."""

import re
from pathlib import Path

import numpy as np

import pytest

from attention_manim.scenes.components.coverage import face_has
from attention_manim.scenes.components.text import MATH_FACE, face_spans, label
from attention_manim.scenes.i18n import load_catalog
from attention_manim.scenes.style import FONT, KOREAN_FONT, has_hangul

SCENES = Path(__file__).resolve().parents[1] / "scenes"


def faces_of(text: str) -> list[str]:
    """The face each character of `text` is set in, as `label` sets it."""
    font = KOREAN_FONT if has_hangul(text) else FONT
    faces = [font] * len(text)
    for key, face in face_spans(text, font).items():
        i, j = map(int, key.strip("[]").split(":"))
        faces[i:j] = [face] * (j - i)
    return faces


def unfaced(text: str) -> set[str]:
    return {f"{ch} U+{ord(ch):04X} ({face})" for ch, face in zip(text, faces_of(text))
            if not ch.isspace() and ch not in "\u200e" and face_has(ch, face) is False}


def templates(value):
    return value.values() if isinstance(value, dict) else [value]


def test_the_faces_are_installed():
    for family in (FONT, KOREAN_FONT, MATH_FACE):
        assert face_has("A", family), family


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_every_catalog_character_comes_from_a_face_that_has_it(lang):
    missing = set()
    for key, value in load_catalog(lang).items():
        for template in templates(value):
            missing |= unfaced(template)
    assert not missing, sorted(missing)


def test_every_symbol_typed_in_the_scenes_comes_from_a_face_that_has_it():
    """Math labels and marks written in the code (W⁽ʰ⁾, ⋯, √d_k): the same rule as the catalogs."""
    missing = set()
    for path in SCENES.rglob("*.py"):
        if path.name == "i18n.py":  # its subscript letters (ₖ ₜ) are for the subtitles' plain text, never drawn
            continue
        for literal in re.findall(r'"([^"\n]*[^\x00-\x7f][^"\n]*)"', path.read_text()):
            missing |= {f"{m} in {path.name}" for m in unfaced(literal)}
    assert not missing, sorted(missing)


def test_known_strings_take_the_faces_a_reader_expects():
    assert faces_of("10⁻⁷") == [FONT, FONT, MATH_FACE, MATH_FACE]
    # ¹ is in CMU Serif, ⁴ is not: the whole exponent from one face, the same size
    assert faces_of("10¹⁴") == [FONT, FONT, MATH_FACE, MATH_FACE]
    assert faces_of("10¹²") == [FONT] * 4  # CMU Serif has both
    assert faces_of("a ≈ b")[2] == MATH_FACE
    assert faces_of("plain words") == [FONT] * 11
    ko = faces_of("합 −0.3 ≈ ΔE")  # the Korean face has no minus sign; the Greek is the formulas'
    assert ko[0] == KOREAN_FONT and ko[2] == FONT and ko[9] == FONT


def test_an_approx_sign_in_a_serif_line_is_the_serif_one():
    """The drawn ≈ has FreeSerif's outline (thin, wide), not DejaVu Sans's."""
    from manim import Text

    def width(mob):
        return mob.width

    drawn = label("a ≈ b", 48).submobjects[1]
    serif = Text("≈", font=MATH_FACE, font_size=48).submobjects[0]
    sans = Text("≈", font="DejaVu Sans", font_size=48).submobjects[0]
    assert width(drawn) == pytest.approx(width(serif), rel=0.02)
    assert abs(width(drawn) - width(sans)) > 0.03 * width(sans)


@pytest.mark.parametrize("line", ["H ≥ H", "H −∞ H"])
def test_a_borrowed_sign_sits_on_the_lines_baseline(line):
    """Pango lays each run out under its own face's ascent: last_token's "each word ≥ 0.98" drew the ≥
    raised like an exponent, and "−∞" read "_∞" (review 34). The sign sits where its own face sets it."""
    from manim import Text

    def rise(mob, sign_at):
        """The sign's bottom above the first glyph's, in heights of that glyph."""
        first, sign = mob.submobjects[0], mob.submobjects[sign_at]
        return (sign.get_bottom()[1] - first.get_bottom()[1]) / first.height

    sign_at = 2 if "∞" in line else 1
    drawn = label(line, 48)
    alone = Text(line, font=MATH_FACE, font_size=48)  # the sign in its own face, on one baseline
    assert rise(drawn, sign_at) == pytest.approx(rise(alone, sign_at), abs=0.04)


def test_a_minus_in_korean_text_sits_at_its_digits_middle():
    """The Korean face has no "−": it comes from the text face, seated on the Korean line's baseline."""
    from manim import Text

    def middle(mob):  # the minus's height against its digit's middle, in digit heights
        minus, one = mob.family_members_with_points()[-2:]  # (a Korean line's figures are a piece of their own)
        return (minus.get_y() - one.get_center()[1]) / one.height

    assert middle(label("값 −1", 48)) == pytest.approx(middle(Text("−1", font=FONT, font_size=48)), abs=0.08)


def test_an_apostrophe_inside_a_word_is_the_typographers():
    """Review 34: "one head's query matrix" showed a straight typewriter tick in the serif line. Inside a
    word the catalogs' straight apostrophe is set as ’; quotes around a word and a token's own "'s" stay."""
    from attention_manim.scenes.components.text import label

    def drawn_like(a: str, b: str) -> bool:
        ma, mb = label(a, 24), label(b, 24)
        return len(ma.submobjects) == len(mb.submobjects) and all(
            g.points.shape == h.points.shape and np.allclose(g.points, h.points, atol=1e-4)
            for g, h in zip(ma.submobjects, mb.submobjects))

    assert drawn_like("one head's query", "one head\u2019s query")
    assert drawn_like("all 4 heads' ΔE", "all 4 heads\u2019 ΔE")  # a plural's too (review 49)
    assert not drawn_like("one head\u2019s query", "one head`s query")  # (the comparison can tell glyphs apart)
    assert label("one head's query", 24).original_text == "one head's query"  # the text it says: the catalog's
    assert drawn_like("'s", "'s") and not drawn_like("'s", "\u2019s")  # a token's own "'s" stays straight


def test_a_lines_baseline_is_its_letters_feet_not_its_brackets_or_hangul():
    """Review 44: "): 2 ×" stood 3 px over the line beside it (the bracket's foot counted for half its
    baseline), and a Korean word's own bottom hangs under the line its digits and formulas stand on."""
    from attention_manim.scenes.components.text import label, text_baseline

    for text in ("): 2\u00a0×", "(it)", "(l): 2", "typing"):
        line = label(text, 24)  # a digit's or a flat-footed letter's foot is the line
        foot = [g for c, g in zip([c for c in text if not c.isspace()], line.submobjects) if c in "2it"][0]
        assert text_baseline(line) == pytest.approx(foot.get_bottom()[1], abs=0.004), text
    # a Korean word with a Latin capital in one line: the baseline is the capital's foot, not the syllables'
    mixed = label("H한국어", 48)
    h = mixed.submobjects[0]
    assert text_baseline(mixed) == pytest.approx(h.get_bottom()[1], abs=0.013)  # (syllables differ by a pixel)
    korean = label("한국어", 48)
    assert text_baseline(korean) > korean.get_bottom()[1] + 0.01  # over the syllables' feet


@pytest.mark.parametrize("text, vectors, words", [
    ("E′ (miniature)", ["arrow(E)'"], ["(miniature)"]),
    ("ΔE: layer 9, head 4", ["Delta arrow(E)"], [": layer 9, head 4"]),
    ("그중 두 구절 사이 헤드 ΔE의 변화: 많아야 0.3", ["Delta arrow(E)"], ["그중 두 구절 사이 헤드", "의 변화: 많아야 0.3"]),
    ("E′ (Eiffel)", ["arrow(E)'"], ["(Eiffel)"]),
    ("of which the change in the head's ΔE between", ["Delta arrow(E)"], ["of which the change in the head's", "between"]),
])
def test_a_label_types_the_vectors_it_names_as_the_table_does(text, vectors, words):
    """Review 44: eiffel_tower's labels said "E′ (miniature)" and "ΔE: layer 9" beside a table of E⃗′ and ΔE⃗.
    A label types E, ΔE and E′ as the table does (a Korean particle may follow), on its text's baseline, and
    leaves a word that starts with E ("Eiffel") alone."""
    from manim import MathTypst, Text

    from attention_manim.scenes.chapters.embedding_parts import VECTOR_WORD, vector_label
    from attention_manim.scenes.components.text import text_baseline

    row = vector_label(text, 22, "#FFFFFF")
    typeset = [m for m in row if isinstance(m, MathTypst)]
    assert len(typeset) == len(vectors)
    said = ["".join(getattr(t, "original_text", None) or t.text for t in m.get_family() if isinstance(t, Text))
            for m in row if not isinstance(m, MathTypst)]  # (its pieces: a Korean line's figures are one of their own)
    assert [s.replace(" ", "") for s in said] == [w.replace(" ", "") for w in words]
    first = next(m for m in row if not isinstance(m, MathTypst))
    base = text_baseline(next((t for t in first.get_family() if hasattr(t, "original_text")
                               and any(c.isascii() and c.isalnum() for c in t.original_text)), first))
    for m in typeset:
        assert text_baseline(m) == pytest.approx(base, abs=0.01)
    assert row.original_text == text
    # a space in the text is a space on screen (review 46: "head'sΔE"), none where the text has none ("ΔE의")
    parts = [p for p in VECTOR_WORD.split(text) if p.strip()]  # one per piece of the row, in order
    assert len(parts) == len(row)
    for k in range(len(row) - 1):
        gap = row[k + 1].get_left()[0] - row[k].get_right()[0]
        spaced = parts[k].endswith(" ") or parts[k + 1].startswith(" ")
        assert (gap > 0.06) == spaced, (text, k, gap)


def test_a_korean_lines_figures_and_signs_are_the_serifs_spaced_as_the_korean_face_spaces_them():
    """Review 46: "exp(−∞) = 0" beside typeset math, "2 × 3 = 6", "토큰 64개" set their "=" and digits in the
    Korean face, unlike the same figures in every other line. A Korean label's figures and signs are the
    serif's (a figure glued to its particle too), spaced ink to ink as the Korean face spaces them (review 47:
    one space's advance between boxes read as no space: "에서16,132배")."""
    from attention_manim.scenes.components.korean_face import face_runs
    from attention_manim.scenes.components.text import rich_line
    from attention_manim.scenes.style import KOREAN_FONT

    assert face_runs("n = 1,048,576에서 16,132배 적음") == [
        (False, "n = 1,048,576", False), (True, "에서", False), (False, "16,132", True), (True, "배 적음", False)]
    assert face_runs("(그래프의 첫 n인 64보다 앞)") == [
        (True, "(그래프의 첫", False), (False, "n", True), (True, "인", False), (False, "64", True), (True, "보다 앞)", False)]
    assert face_runs("'␣must'에 80%") == [(False, "'␣must'", False), (True, "에", False), (False, "80%", True)]
    line = label("8 × 8 = 점수 64개", 22)
    pieces = [(p.text, p.font) for p in line.submobjects]
    assert pieces == [("8×8=", FONT), ("점수", KOREAN_FONT), ("64", FONT), ("개", KOREAN_FONT)]  # (Text.text drops spaces)
    assert line.original_text == "8 × 8 = 점수 64개" and line.font_size == pytest.approx(22)
    assert line.submobjects[2].height == pytest.approx(label("64", 22).height, rel=1e-6)  # as the serif sets them
    # ink to ink as the Korean face spaces them: a space where the text has one, none glued ("64개")
    from attention_manim.scenes.components.korean_face import ink_gap

    gaps = [b.get_left()[0] - a.get_right()[0] for a, b in zip(line.submobjects, line.submobjects[1:])]
    assert gaps == pytest.approx([ink_gap("=", "점", True, 22), ink_gap("수", "6", True, 22), ink_gap("4", "개", False, 22)])
    assert min(gaps[:2]) > 2.5 * gaps[2] > 0
    # a line without a figure or a sign stays one piece in one face; a catalog literal of rich_line too
    assert label("우리 모델이 쓰는 값", 22).font == KOREAN_FONT
    row = rich_line("{e} = 0: 마스킹된 칸", {"e": "exp(−∞)"}, font_size=22, color="#FFFFFF")
    literal = row.submobjects[1]
    assert [p.font for p in literal.submobjects] == [FONT, KOREAN_FONT] and literal.submobjects[0].text.startswith("=")


def test_a_no_break_space_in_a_korean_line_is_set_as_a_space():
    """kv_cache in Korean: "× 층\u00a030개" (a no-break space keeps a number with its word on one line) was set
    "층30개", the figure glued to the word. It is set as wide as a plain space."""
    from attention_manim.scenes.components.korean_face import mixed_face

    def gap(text):
        line = mixed_face(text, 24, "#FFFFFF")
        return line[1].get_left()[0] - line[0].get_right()[0]

    spaced, kept, glued = gap("층 30개"), gap("층\u00a030개"), gap("층30개")
    assert kept == pytest.approx(spaced, abs=1e-6) and kept > glued + 0.03
