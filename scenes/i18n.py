"""Every word a viewer reads or hears, looked up in a per-language catalog.

Catalogs are TOML files: `scenes/locales/<lang>/<domain>.toml` (Python's own `tomllib` reads them;
translators edit plain text). A key is `<domain>.<table>.<name>`, e.g. `grid.softmax.caption_lift`.
A value is a template with *named* parameters in `str.format` syntax:

    caption_lift = "{query} takes {weight:.2f} of its attention from {key}."

- Numbers are formatted by the template's own spec (`{w:.2f}`, `{cells:,}`) and then written the
  language's way in running text: Portuguese prose reads 0,48 and 1.572.864. Grids and matrices are
  not prose; they keep one convention in every language (see `scenes.style`).
- Plurals: a value may be a table of CLDR plural forms chosen by the parameter `count`:
  `{one = "{count} key", other = "{count} keys"}` (Korean needs only `other`).
- Word order, particles and agreement live in the template, never in Python helpers: a template
  places every parameter where its language wants it.
- Tokens (the user's sentence) are data: they are passed in as parameters and never translated.

`Say(lang)` is the lookup a chapter receives: `say("grid.softmax.caption_lift", query=..., ...)`.
"""

from __future__ import annotations

import re
import string
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from attention_manim.model.errors import Term, UserError

LOCALES_DIR = Path(__file__).resolve().parent / "locales"
LANGUAGES = ("en", "ko", "pt")
DEFAULT_LANGUAGE = "en"
PLURAL_FORMS = ("zero", "one", "two", "few", "many", "other")
NEWLINE_MARK = "↵"  # a line break in a token as drawn
SPACE_MARK = "␣"  # a token's leading space as drawn (the same mark as components.text.SPACE_MARK)
# tokens that are only a mark, by the name `quote_named` gives them (common.marks.<name>)
MARK_NAMES = {"-": "hyphen", ",": "comma", ".": "period", ":": "colon", ";": "semicolon", "?": "question",
              "!": "exclamation", " ": "space", "\n": "newline", "(": "open_paren", ")": "close_paren",
              '"': "quote", "'": "apostrophe", "—": "dash", "–": "dash"}


def check_language(lang: str) -> str:
    if lang not in LANGUAGES:
        raise UserError(f"unknown language {lang!r}", f"supported languages: {', '.join(LANGUAGES)}",
                        key="unknown_language", lang=lang, languages=", ".join(LANGUAGES))
    return lang


def _flatten(prefix: str, table: dict, out: dict) -> None:
    for k, v in table.items():
        key = f"{prefix}.{k}"
        if isinstance(v, dict) and not (set(v) <= set(PLURAL_FORMS) and "other" in v):
            _flatten(key, v, out)
        else:
            out[key] = v


@lru_cache(maxsize=None)
def load_catalog(lang: str) -> dict[str, str | dict]:
    """Every key of one language: {"grid.softmax.caption_lift": template or {plural form: template}}."""
    check_language(lang)
    out: dict = {}
    for path in sorted((LOCALES_DIR / lang).glob("*.toml")):
        with path.open("rb") as f:
            _flatten(path.stem, tomllib.load(f), out)
    return out


def template_fields(template: str | dict) -> set[str]:
    """The named parameters a template (or every plural form of it) uses."""
    forms = template.values() if isinstance(template, dict) else [template]
    names = set()
    for t in forms:
        for _, name, _, _ in string.Formatter().parse(t):
            if name:
                names.add(re.split(r"[.\[]", name)[0])
    return names


@lru_cache(maxsize=None)
def _locale(lang: str):
    from babel import Locale

    return Locale.parse(lang)


def plural_form(lang: str, n: float) -> str:
    """The CLDR plural category of `n` in `lang` (Babel's CLDR data: a new language needs no code).
    Portuguese: "one" for every n with integer part 0 or 1 (0,5 and 1,5 too); Korean: always "other"."""
    return _locale(lang).plural_form(abs(n))


class _LocalFormatter(string.Formatter):
    """str.format, with numbers written the language's way (decimal comma and dot thousands in pt)."""

    def __init__(self, lang: str):
        self.lang = lang

    def format_field(self, value, format_spec):
        out = super().format_field(value, format_spec)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out = localize_number(out, self.lang)
        return out


@lru_cache(maxsize=None)
def number_symbols(lang: str) -> tuple[str, str]:
    """(decimal sign, group sign) of `lang`'s numbers, from Babel's CLDR data: "." and "," in en and
    ko, "," and "." in pt; a new language needs no code."""
    symbols = _locale(lang).number_symbols
    symbols = symbols.get("latn", symbols)
    return symbols["decimal"], symbols["group"]


def localize_number(text: str, lang: str) -> str:
    """"1,572,864.5" (Python's format) as the language writes it; the minus sign is the typographic one."""
    decimal, group = number_symbols(lang)
    if (decimal, group) != (".", ","):
        text = "".join(decimal if ch == "." else group if ch == "," else ch for ch in text)
    return text.replace("-", "−")


def localized_error(error, lang: str) -> tuple[str, str]:
    """(message, hint) of a UserError in `lang`: from the catalog (`errors.<key>`) when the error has
    a key and the language has the entry, else the error's own English words. A hint the error
    leaves out stays out (the explorer's range errors have none: there is no --layer on a page).
    A parameter that is itself a keyed problem (a ConfigError inside a model-file error) or a Term
    is said in `lang` too."""
    key = getattr(error, "key", None)
    if not key or lang not in LANGUAGES:
        return error.message, error.hint
    say = Say(lang)
    if not say.has(f"errors.{key}.message"):
        return error.message, error.hint
    params = {k: _localized_param(k, v, say) for k, v in dict(getattr(error, "params", {})).items()}
    message = say(f"errors.{key}.message", **params)
    hint = say(f"errors.{key}.hint", **params) if error.hint and say.has(f"errors.{key}.hint") else error.hint
    return message, hint


def _localized_param(name: str, value, say: "Say"):
    if isinstance(value, Term):
        return say(f"errors.term.{value.key}") if say.has(f"errors.term.{value.key}") else str(value)
    if isinstance(value, BaseException) and getattr(value, "key", None):
        return localized_error(value, say.lang)[0]
    # a negative number is what the user typed ("--head -1"): written back as typed, not as "−1"
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0 and name != "count":
        return str(value)
    return value


@dataclass(frozen=True)
class Say:
    """The catalog of one language, as a callable: say(key, **params) -> the sentence."""

    lang: str = DEFAULT_LANGUAGE
    # (role, layer, head) of every role named on screen since the lesson's last chapter: the lint
    # checks that each head was measured to play the role it is called by (scenes/review.py)
    roles_named: list = field(default_factory=list, compare=False, hash=False, repr=False)
    # caption -> its spoken form, for captions whose key has a spoken variant (`spoken.lines.<key>`)
    spoken_lines: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def __post_init__(self):
        check_language(self.lang)

    @property
    def catalog(self) -> dict:
        return load_catalog(self.lang)

    def __call__(self, key: str, /, **params) -> str:
        try:
            template = self.catalog[key]
        except KeyError:
            raise KeyError(f"no catalog entry {key!r} for language {self.lang!r} "
                           f"(add it to scenes/locales/{self.lang}/{key.split('.')[0]}.toml)") from None
        if isinstance(template, dict):
            if "count" not in params:
                raise KeyError(f"{key!r} has plural forms: pass count=")
            template = template.get(plural_form(self.lang, params["count"]), template["other"])
        out = _LocalFormatter(self.lang).vformat(template, (), params)
        spoken_key = f"spoken.lines.{key}"
        if spoken_key in self.catalog:
            form = self.catalog[spoken_key]
            if isinstance(form, dict):
                form = form.get(plural_form(self.lang, params["count"]), form["other"])
            self.spoken_lines[out] = _LocalFormatter(self.lang).vformat(form, (), params)
        return out

    def spoken(self, text: str) -> str:
        """How a caption is said aloud: its key's spoken variant if the catalog has one, else the
        caption with every symbol read as words (`spoken.symbols`: × → "times", W_Q → "W Q", ...)."""
        return spoken_form(self.spoken_lines.get(text, text), self.lang)

    def has(self, key: str) -> bool:
        return key in self.catalog

    def number(self, value: float, spec: str = ".2f") -> str:
        """A number in running text, the language's way."""
        return localize_number(format(value, spec), self.lang)

    def quote(self, token: str) -> str:
        """A token as prose quotes it ("“creature”"); the token itself is never translated."""
        return self("common.quote", word=token)

    def mark_name(self, token: str) -> str | None:
        """The name of a token that is only a mark, with or without its leading space ("a comma" for
        "," or "␣,"), or None (a word, or a mark the catalog does not name)."""
        bare = token.replace("\n", NEWLINE_MARK).replace(SPACE_MARK, " ").replace(NEWLINE_MARK, "\n")
        name = MARK_NAMES.get(bare.strip(" ") if bare.strip() else bare[:1])
        return self(f"common.marks.{name}") if name and self.has(f"common.marks.{name}") else None

    def mark_label(self, token: str) -> str | None:
        """A small mark's token as a label names it, "(comma)", keeping a leading ␣ ("␣(comma)"); None for
        a word and for a mark tall enough to read as itself ("?", "—", "(")."""
        bare = token.replace(SPACE_MARK, " ")
        name = MARK_NAMES.get(bare.strip(" ")) if bare.strip() else None
        if not name or not self.has(f"common.mark_labels.{name}"):
            return None
        return (SPACE_MARK if bare[:1] == " " else "") + self(f"common.mark_labels.{name}")

    def quote_named(self, token: str) -> str:
        """A token quoted, and named when it is only a mark ("“-” (a hyphen)"): a lone hyphen, comma
        or space between quotes is a speck a viewer cannot tell apart. Other tokens: `quote`."""
        shown = token.replace("\n", NEWLINE_MARK)  # a line break quoted would break the line
        name = self.mark_name(token)
        if name is not None:
            return self("common.quote_named", quoted=self.quote(shown), name=name)
        return self.quote(shown)

    def words(self, items: list[str]) -> str:
        """"a", "a and b", "a, b and c" in this language (the conjunction is the catalog's)."""
        items = list(items)
        if not items:
            return ""
        if len(items) == 1:
            return items[0]
        if len(items) == 2:
            return self("common.list_two", first=items[0], last=items[1])
        sep = self("common.list_separator")
        return self("common.list_many", rest=sep.join(items[:-1]), last=items[-1])

    def quoted_words(self, tokens: list[str]) -> str:
        return self.words([self.quote(t) for t in tokens])

    def role(self, role: str, layer: int, head: int, tokens=None, idle_said: bool = False) -> str:
        """A head's role in words ("adjectives → nouns"), or "layer 0 · head 3" when the model names none.
        `tokens`: the sentence the role is named over (default: the lesson's first); `idle_said`: the
        frame also says the head has nothing to do on it (the lint's honest_title checks both)."""
        key = f"common.roles.{role}"
        if role and self.has(key):
            self.roles_named.append((role, int(layer), int(head), tuple(tokens) if tokens else None, idle_said))
            return self(key)
        return self.head_name(layer, head)

    def head_name(self, layer: int, head: int) -> str:
        """A head named in words: "layer 0 · head 3" (never "L0H3", which reads as code)."""
        return self("common.head.layer_head", layer=int(layer), head=int(head))

    @property
    def chars_per_second(self) -> float:
        """How fast a viewer reads captions in this language (Hangul packs more per character)."""
        return float(self("common.reading.chars_per_second"))


# --- subscripts in plain text (.srt, .vtt, the chapters' captions, render.py script) -----------------
# Frames typeset W_Q, d_k, d_head as math; a subtitle is plain text, so a raw underscore must not reach
# it. One convention, chosen for a student reading along:
#   - a one-character subscript with a Unicode subscript form is written with it: d_k -> dₖ, x_1 -> x₁;
#   - a capital subscript (Unicode has none) follows its letter at full size, as plain-text copies of
#     the papers write it: W_Q -> WQ, W_O -> WO (the case stays: Q, K, V, O name query, key, value, output);
#   - a word subscript is joined by a hyphen: d_model -> d-model, d_head -> d-head (no subscript "d"
#     exists, so no word could be written in subscripts alone, and one rule for every word reads best).
# Tokens inside quotes (“my_var”) are the user's words and stay as typed. The spoken form is made from
# the catalog's text itself (W_Q is said "W Q"), never from this.
SUBSCRIPT_FORMS = dict(zip("0123456789aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ"))
SUBSCRIPTED = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z])_([A-Za-z0-9]+)(?![A-Za-z0-9_])")
QUOTED = re.compile(r"(“[^”]*”|‘[^’]*’|\"[^\"]*\")")


def _subscript(m: re.Match) -> str:
    base, sub = m.group(1), m.group(2)
    if len(sub) == 1:
        return base + SUBSCRIPT_FORMS.get(sub, sub)
    return f"{base}-{sub}"


def plain_text(text: str) -> str:
    """A caption as plain text writes it (the subtitles, the script): typeset math's dollars dropped and
    every subscript written by the convention above (W_Q -> WQ, d_k -> dₖ, d_model -> d-model)."""
    parts = QUOTED.split(text.replace("$", ""))
    return "".join(p if i % 2 else SUBSCRIPTED.sub(_subscript, p) for i, p in enumerate(parts))


SPEAKABLE = re.compile(r"[\w\s.,;:!?'\"“”‘’()\-–—%]*")


@lru_cache(maxsize=None)
def _spoken_symbols(lang: str) -> tuple[tuple[str, str], ...]:
    """(symbol, words) of `spoken.symbols`, longest symbol first (so "−∞" wins over "−")."""
    prefix = "spoken.symbols."
    table = {k[len(prefix):]: v for k, v in load_catalog(lang).items() if k.startswith(prefix)}
    return tuple(sorted(table.items(), key=lambda kv: -len(kv[0])))


DECIMAL = re.compile(r"(\d+)\.(\d+)")
SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789−")
POWER = re.compile(r"(\d+(?:[.,]\d+)?)([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)")


def spoken_form(text: str, lang: str) -> str:
    """`text` with the catalog's symbol words in place of symbols (10⁻¹⁶ through `spoken.power`),
    spaces tidied."""
    if POWER.search(text):
        power = load_catalog(lang)["spoken.power"]
        text = POWER.sub(lambda m: power.format(base=m.group(1), exponent=m.group(2).translate(SUPERSCRIPTS)), text)
    decimal = load_catalog(lang).get("spoken.decimal")
    if decimal:  # a voice that skips the decimal point (espeak's Korean): "0.48" is said "0 점 4 8"
        text = DECIMAL.sub(lambda m: f"{m.group(1)} {decimal} {' '.join(m.group(2))}", text)
    for symbol, words in _spoken_symbols(lang):
        if symbol in text:
            text = text.replace(symbol, f" {words} " if words else " ")
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"([“‘(])\s+", r"\1", text)  # “␣of” is said “of”
    return re.sub(r"\s+([.,;:!?)”’])", r"\1", text)


def unspeakable(text: str) -> set[str]:
    """The characters of a spoken form a voice would spell out or skip (empty when all is words)."""
    return {ch for ch in text if ch == "_" or not SPEAKABLE.fullmatch(ch)}


def _own_phrase(key: str) -> bool:
    """A spoken phrase only one language writes (`spoken.symbols."형용사 → 명사"`: a role name said with
    its particles): words around a symbol, not a symbol every language must say."""
    return key.startswith("spoken.symbols.") and any(c.isalpha() for c in key[len("spoken.symbols."):])


def missing_keys() -> dict[str, set[str]]:
    """For each language, the keys another language has and it lacks (empty sets when complete).
    A language's own spoken phrases (`_own_phrase`) are its own."""
    cats = {lang: load_catalog(lang) for lang in LANGUAGES}
    every = {k for cat in cats.values() for k in cat if not _own_phrase(k)}
    return {lang: every - set(cat) for lang, cat in cats.items()}
