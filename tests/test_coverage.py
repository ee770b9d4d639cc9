"""Any text renders: right-to-left words have glyphs, characters no font has become a placeholder."""

from scenes.components import coverage
from scenes.components.coverage import LRM, PLACEHOLDER, covered, drawable, merge, parse_charset


def test_fontconfig_charsets_parse_and_merge():
    ranges = parse_charset("20-7e a0-17f 192 2010-2011 zz")
    assert ranges == [(0x20, 0x7E), (0xA0, 0x17F), (0x192, 0x192), (0x2010, 0x2011)]
    starts, ends = merge(ranges + [(0x7F, 0x9F), (0x30, 0x40)])
    assert starts == (0x20, 0x192, 0x2010) and ends == (0x17F, 0x192, 0x2011)
    cov = (starts, ends)
    assert covered("A", cov) and covered("ƒ", cov) and not covered("Ɠ", cov) and not covered("\x10", cov)


def test_missing_characters_become_the_placeholder(monkeypatch):
    fake = merge([(0x20, 0x7E), (ord(PLACEHOLDER), ord(PLACEHOLDER))])
    monkeypatch.setattr(coverage, "installed_coverage", lambda: fake)
    drawable.cache_clear()
    try:
        assert drawable("ab ᚠc\u200d") == f"ab {PLACEHOLDER}c\u200d"  # a joiner is left alone
        assert drawable("plain text") == "plain text"
    finally:
        drawable.cache_clear()


def test_right_to_left_words_are_drawn():
    from scenes.components.text import label

    for word in ("مرحبا", "שלום"):
        assert drawable(word).startswith(LRM)
        mob = label(word, 30)
        assert len(mob.submobjects) >= 3 and mob.width > 0.3, word  # manim drew nothing before the mark
    assert not drawable("fluffy").startswith(LRM)
