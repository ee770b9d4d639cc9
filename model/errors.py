"""Errors caused by what the user asked for. The CLI prints them without a traceback and exits 2."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input, with an optional hint on how to fix it.

    `key` and `params` name the error in the catalogs (`scenes/locales/<lang>/errors.toml`,
    `errors.<key>.message` / `.hint`): the CLI's `--lang` and the explorer's language show it in
    that language (scenes.i18n.localized_error). Every error the package raises has a key (a test
    reads the source for one without); its English `message` and `hint` are the catalog's English
    entry, word for word (a test holds them together), and every value in them is a parameter.
    A parameter may itself be a keyed error (a `ConfigError` inside a model-file error) or a `Term`:
    both are said in the catalog's language too."""

    def __init__(self, message: str, hint: str = "", *, key: str | None = None, **params):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.key = key
        self.params = params

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message

    def __reduce__(self):  # pickled whole (key and parameters too), not as Exception's bare args
        return rebuilt, (type(self), self.message, self.hint, self.key, self.params)


def rebuilt(cls, message: str, hint: str, key: str | None, params: dict):
    """A UserError (or a subclass, whatever its own constructor takes) rebuilt from its parts: how one
    crosses a process boundary (a pipe, a pickle) with its catalog key, so the other side says it in
    its own language."""
    e = Exception.__new__(cls)
    Exception.__init__(e, message)
    e.message, e.hint, e.key, e.params = message, hint, key, dict(params or {})
    return e


class KeyedValueError(ValueError):
    """A ValueError with a catalog key like a UserError's: a problem found deep down (a config value,
    a sound file) that a UserError shows as one of its parameters, so that the whole is said in the
    user's language."""

    def __init__(self, message: str, *, key: str, **params):
        super().__init__(message)
        self.message = message
        self.hint = ""
        self.key = key
        self.params = params


class ConfigError(KeyedValueError):
    """A config.json value the model cannot be built from (model/config.py)."""


class Term(str):
    """An English word an error's message takes as a parameter ("the english sentence is empty"):
    the catalogs say it in their language (`errors.term.<key>`). It is a plain string in English."""

    key: str

    def __new__(cls, text: str, key: str):
        self = super().__new__(cls, text)
        self.key = key
        return self

    def __reduce__(self):
        return Term, (str(self), self.key)


class UnknownWordError(UserError):
    def __init__(self, words: list[str], model_name: str):
        self.words = list(words)
        listed = ", ".join(repr(w) for w in self.words)
        plural = "words" if len(self.words) > 1 else "word"
        super().__init__(
            f"the model {model_name!r} does not know the {plural} {listed}",
            "list the words it knows with `python render.py vocab`",
            key="unknown_word", model=model_name, words=listed, count=len(self.words),
        )


class ContextTooLongError(UserError):
    def __init__(self, n_tokens: int, n_ctx: int):
        super().__init__(
            f"the sentence has {n_tokens} tokens but the model's context holds at most {n_ctx}",
            "use a shorter sentence",
            key="context_too_long", n_tokens=n_tokens, n_ctx=n_ctx,
        )


class ModelFileError(UserError):
    """A model directory or weights file that is missing, incomplete or corrupt."""
