"""Errors caused by what the user asked for. The CLI prints them without a traceback and exits 2."""

from __future__ import annotations


class UserError(Exception):
    """A problem with the user's input, with an optional hint on how to fix it."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.hint = hint

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
        )


class ContextTooLongError(UserError):
    def __init__(self, n_tokens: int, n_ctx: int):
        super().__init__(
            f"the sentence has {n_tokens} tokens but the model's context holds at most {n_ctx}",
            "use a shorter sentence",
        )


class ModelFileError(UserError):
    """A model directory or weights file that is missing, incomplete or corrupt."""
