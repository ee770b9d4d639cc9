"""Errors caused by what the user asked for. The CLI prints them without a traceback and exits 2."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input, with an optional hint on how to fix it.

    `key` and `params` name the error in the catalogs (`scenes/locales/<lang>/errors.toml`,
    `errors.<key>.message` / `.hint`): the CLI's `--lang` and the explorer's language show it in
    that language (scenes.i18n.localized_error). The English `message` here is the catalog's English
    entry, word for word (a test holds them together); errors without a key stay in English."""

    def __init__(self, message: str, hint: str = "", *, key: str | None = None, **params):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.key = key
        self.params = params

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


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
