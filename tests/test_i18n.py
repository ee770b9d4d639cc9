"""The catalogs: complete in every language, the same parameters everywhere, numbers and plurals
written each language's way; the CLI refuses unknown languages; plans never import manim."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from attention_manim.scenes.i18n import LANGUAGES, Say, load_catalog, missing_keys, plural_form, template_fields

from .conftest import ROOT


def test_every_language_has_every_key():
    missing = missing_keys()
    assert set(missing) == set(LANGUAGES) == {"en", "ko", "pt"}
    for lang, keys in missing.items():
        assert not keys, f"{lang} lacks {sorted(keys)[:10]}"


def test_a_missing_key_is_reported(tmp_path, monkeypatch):
    """The completeness check itself can fail: a key only English has is found missing in ko and pt."""
    import attention_manim.scenes.i18n as i18n

    for lang in LANGUAGES:
        (tmp_path / lang).mkdir()
        (tmp_path / lang / "x.toml").write_text('a = "A"\n' + ('b = "B"\n' if lang == "en" else ""), encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALES_DIR", tmp_path)
    i18n.load_catalog.cache_clear()
    try:
        assert i18n.missing_keys() == {"en": set(), "ko": {"x.b"}, "pt": {"x.b"}}
    finally:
        i18n.load_catalog.cache_clear()


def test_a_spoken_phrase_of_one_language_is_its_own(tmp_path, monkeypatch):
    """ko says "형용사 → 명사" with its particles; en and pt need no such phrase. A symbol ("√") is
    still one every language must say."""
    import attention_manim.scenes.i18n as i18n

    for lang in LANGUAGES:
        (tmp_path / lang).mkdir()
        extra = '"형용사 → 명사" = "형용사에서 명사로"\n"√" = "루트"\n' if lang == "ko" else ""
        (tmp_path / lang / "spoken.toml").write_text("[symbols]\n" + extra, encoding="utf-8")
    monkeypatch.setattr(i18n, "LOCALES_DIR", tmp_path)
    i18n.load_catalog.cache_clear()
    try:
        assert i18n.missing_keys() == {"en": {"spoken.symbols.√"}, "ko": set(), "pt": {"spoken.symbols.√"}}
    finally:
        i18n.load_catalog.cache_clear()


def test_every_key_takes_the_same_parameters_in_every_language():
    en = load_catalog("en")
    for lang in ("ko", "pt"):
        cat = load_catalog(lang)
        for key, template in en.items():
            if key in cat:
                assert template_fields(cat[key]) == template_fields(template), (lang, key)


def test_no_catalog_entry_is_left_in_english():
    """A ko entry with Latin words has Hangul too; a pt entry of three or more words differs from the
    English one (a single word or two may be spelled alike: "animal", "softmax", "tokens:")."""
    en, ko, pt = (load_catalog(lang) for lang in ("en", "ko", "pt"))

    def forms(t):
        return list(t.values()) if isinstance(t, dict) else [t]

    def prose(t):  # the words of a template: no placeholders, no model or norm names (names stay as they are),
        # no typeset math ($d_mlp$ is a symbol in every language)
        return re.sub(r"GPT-\d|SmolLM2|LLaMA|Mistral|RMSNorm|LayerNorm", "", re.sub(r"\{[^}]*\}|\$[^$]*\$", "", t))

    for key, template in en.items():
        for t in forms(ko[key]):
            if re.search(r"[A-Za-z]{3,}", prose(t)):
                assert re.search(r"[\uac00-\ud7a3]", prose(t)), (key, t)
        for e, p in zip(forms(template), forms(pt[key])):
            if len(re.findall(r"[A-Za-z]{2,}", prose(e))) >= 3:
                assert e != p, (key, p)


# A Korean particle that follows a parameter cannot follow its sound: the value (a number, a Latin
# token, the user's word) is not known when the template is written ("1.00를", "pet가"). So no
# particle may come right after a `}` or after a closing quote or bracket around one. 이 followed by
# Hangul is the copula (이고, 이며), and 가 followed by Hangul a counter (가지): those read alike
# after any sound. 으로/로 and 와/과 are flagged whatever follows (로서, 로부터, 과의).
PARTICLE_AFTER_PARAMETER = re.compile(
    r"\}[”\"’)]?(?:(?:을|를|은|는|이|가)(?![\uac00-\ud7a3])|(?:으로|로|와|과))")


def test_the_particle_check_finds_particles_after_parameters():
    bad = ["{weight:.2f}를 둡니다", "{token}가 옵니다", "“{word}”을 봅니다", "({diff})를 빼면",
           "{word}이(가) 계산합니다", "{d_head}로 나눈", "{a}와 {b}", "{word}은(는)", "{x}’는"]
    good = ["{token} 단어를 봅니다", "{count}개를", "{p:.2f}이고", "{count}가지", "{word}의 쿼리",
            "{word} 토큰이", "{w:.2f}만큼", "{layer}층에서"]
    assert all(PARTICLE_AFTER_PARAMETER.search(s) for s in bad), [s for s in bad if not PARTICLE_AFTER_PARAMETER.search(s)]
    assert not any(PARTICLE_AFTER_PARAMETER.search(s) for s in good), [s for s in good if PARTICLE_AFTER_PARAMETER.search(s)]


def test_no_korean_particle_follows_a_parameter():
    ko = load_catalog("ko")
    found = []
    for key, template in ko.items():
        for t in (template.values() if isinstance(template, dict) else [template]):
            for m in PARTICLE_AFTER_PARAMETER.finditer(t):
                found.append(f"{key}: …{t[max(0, m.start() - 20):m.end() + 5]}…")
    assert not found, "a particle follows a parameter (rephrase: put it after a noun):\n" + "\n".join(found)


# "E′" is read "E 프라임", which ends in a consonant: 이, 은, 을, 과 follow it, never 가, 는, 를, 와 (review 36)
VOWEL_PARTICLE_AFTER_PRIME = re.compile(r"[A-Za-zΔ]′(?:가|는|를|와)(?![\uac00-\ud7a3])")


def test_a_korean_particle_after_a_prime_follows_the_word_prime():
    assert VOWEL_PARTICLE_AFTER_PRIME.search("새 임베딩 E′가 됩니다") and VOWEL_PARTICLE_AFTER_PRIME.search("E′는 이제")
    assert not VOWEL_PARTICLE_AFTER_PRIME.search("새 임베딩 E′이 됩니다") and not VOWEL_PARTICLE_AFTER_PRIME.search("E′의")
    ko = load_catalog("ko")
    found = [f"{key}: {t}" for key, template in ko.items()
             for t in (template.values() if isinstance(template, dict) else [template])
             if VOWEL_PARTICLE_AFTER_PRIME.search(t)]
    assert not found, "\n".join(found)


def test_numbers_in_prose_follow_the_language():
    assert Say("pt").number(0.48) == "0,48"
    assert Say("en").number(0.48) == "0.48"
    assert Say("ko").number(-1.5, ".1f") == "−1.5"
    # through a template: the spec is the template's, the separators the language's
    en, pt = Say("en"), Say("pt")
    assert en("common.head.layer_head", layer=1234567, head=2) == "layer 1234567 · head 2"
    from attention_manim.scenes.i18n import _LocalFormatter

    assert _LocalFormatter("pt").format("{n:,} e {w:.2f}", n=1572864, w=0.4812) == "1.572.864 e 0,48"
    assert _LocalFormatter("en").format("{n:,} and {w:.2f}", n=1572864, w=0.4812) == "1,572,864 and 0.48"
    assert _LocalFormatter("pt").format("{word}", word="3.5") == "3.5"  # strings (tokens) are not touched


def test_plural_rules():
    assert [plural_form("en", n) for n in (0, 1, 2, 1.5)] == ["other", "one", "other", "other"]
    assert [plural_form("pt", n) for n in (0, 1, 2)] == ["one", "one", "other"]
    # CLDR pt: the integer part decides (i = 0..1), so 0,5 and 1,5 are "one"; English 1.5 is "other"
    assert [plural_form("pt", n) for n in (0.5, 1.5, 2.5)] == ["one", "one", "other"]
    assert plural_form("ko", 1) == "other"


def test_lists_and_quotes_in_each_language():
    assert Say("en").quoted_words(["fluffy", "blue"]) == "“fluffy” and “blue”"
    assert Say("pt").quoted_words(["a", "b", "c"]) == "“a”, “b” e “c”"
    assert Say("ko").quoted_words(["fluffy", "blue"]) == "‘fluffy’, ‘blue’"
    assert Say("ko").role("adjective_noun", 0, 0) == "형용사 → 명사"
    assert Say("pt").role("", 2, 5) == "camada 2 · head 5"  # a head with no role is named in words
    assert Say("ko").head_name(2, 5) == "2층 · 헤드 5"


def test_unknown_key_and_unknown_language_fail_clearly():
    with pytest.raises(KeyError, match="no catalog entry"):
        Say("ko")("grid.nothing_here")
    from attention_manim.model.errors import UserError

    with pytest.raises(UserError, match="unknown language 'fr'"):
        Say("fr")


def test_cli_refuses_an_unknown_language_naming_the_supported_ones():
    for args in (["list", "--lang", "fr"], ["attention_pattern", "--lang", "de", "--format", "png"]):
        r = subprocess.run([sys.executable, "render.py", *args], cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 2, r.stderr
        assert "Traceback" not in r.stderr
        assert "en, ko, pt" in r.stderr


def test_list_is_translated():
    r = subprocess.run([sys.executable, "render.py", "list", "--lang", "ko"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0
    line = next(ln for ln in r.stdout.splitlines() if ln.startswith("attention_pattern"))
    assert re.search(r"[\uac00-\ud7a3]", line)


def test_plans_and_setting_never_import_manim():
    code = ("import sys, importlib, pkgutil\n"
            "import attention_manim.scenes.plans as plans, attention_manim.scenes.setting, attention_manim.scenes.i18n\n"
            "for m in pkgutil.iter_modules(plans.__path__): importlib.import_module('attention_manim.scenes.plans.' + m.name)\n"
            "assert 'manim' not in sys.modules, 'manim imported'\nassert 'torch' not in sys.modules\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_scenes_never_import_the_toy_world():
    hits = [str(p.relative_to(ROOT)) for p in (ROOT / "scenes").rglob("*.py")
            if re.search(r"toy_world", p.read_text(encoding="utf-8"))]
    assert hits == []


def test_inspect_table_in_korean_and_portuguese_keeps_the_grid_numbers():
    out = {}
    for lang in ("en", "ko", "pt"):
        r = subprocess.run([sys.executable, "render.py", "inspect", "a fluffy blue creature", "--head", "0",
                            "--lang", lang], cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out[lang] = r.stdout
    assert "주의 패턴" in out["ko"] and "형용사 → 명사" in out["ko"] and "attention pattern," not in out["ko"]
    assert "linhas = query" in out["pt"] and "rows =" not in out["pt"]
    # the table itself is the same in every language (one convention for grids: 0.48)
    table = [ln for ln in out["en"].splitlines() if ln.strip().startswith("creature")]
    assert table and all(table[0] in out[lang] for lang in ("ko", "pt")) and "0.48" in table[0]


def test_ko_logit_lens_names_the_top_guess_one_way():
    """going_deeper ko said "첫째 추측" (the first guess in time), "가장 유력한 예측" and "1위" for the
    model's top guess: one term, 1위 추측, throughout."""
    from attention_manim.scenes.i18n import Say

    say = Say("ko")
    texts = [say.catalog[k] for k in say.catalog if k.startswith("deeper.") and isinstance(say.catalog[k], str)]
    assert not any("첫째 추측" in t or "유력한 예측" in t or "유력한 추측" in t for t in texts)
    assert "1위 추측" in say.catalog["deeper.going_deeper.lens_title"].replace("\u00a0", " ")


def test_ko_says_attention_one_way_for_each_meaning():
    """Reviewers read 주의 and 어텐션 side by side as two things. The rule: 주의 for the amount a word
    gives (주의 패턴, 주의 가중치, 주의를 두다), 어텐션 for the mechanism and its kinds (어텐션 블록,
    플래시 어텐션, 어텐션 메커니즘)."""
    catalog = load_catalog("ko")
    texts = [v for v in catalog.values() if isinstance(v, str)] + \
        [f for v in catalog.values() if isinstance(v, dict) for f in v.values() if isinstance(f, str)]
    mixed = [t for t in texts if re.search(r"주의 (메커니즘|블록)|어텐션 패턴|(?<!교차 )어텐션 가중치|어텐션을 (두|둡)", t)]
    assert not mixed, mixed[:3]
    assert sum("어텐션 메커니즘" in t for t in texts) >= 1 and sum("주의 패턴" in t for t in texts) >= 5
    # and no third word: 주목 ("attends to") read beside 주의 as another quantity
    assert not [t for t in texts if "주목" in t]


def test_pt_says_score_in_portuguese():
    """A reviewer read flash's "scores" beside self_attention_steps' "pontuações" as two things.
    The glossary keeps query/key/value/head in English, not score: Portuguese says pontuação."""
    catalog = load_catalog("pt")
    texts = [v for v in catalog.values() if isinstance(v, str)] + \
        [f for v in catalog.values() if isinstance(v, dict) for f in v.values() if isinstance(f, str)]
    english = [t for t in texts if re.search(r"\bscores?\b", re.sub(r"\{[^}]*\}", "", t))]
    assert not english, english[:3]
    # "traço" is a matrix's trace (or a stroke): a reviewer read "neste mesmo traço" as nonsense in a
    # lesson about matrices; the model's recorded run is "execução"
    assert not [t for t in texts if "traço" in t]
    assert sum("pontuações" in t for t in texts) >= 10
