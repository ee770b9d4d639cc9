"""A word-level tokenizer: lower-cased words and punctuation marks, looked up in a fixed vocabulary."""

from __future__ import annotations

import re

from .errors import UnknownWordError

# words (with inner apostrophes or hyphens) or single punctuation marks
_TOKEN_RE = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*|[^\w\s]")


def split_words(text: str) -> list[str]:
    return _TOKEN_RE.findall(text.lower().replace("’", "'"))


class WordTokenizer:
    def __init__(self, vocab: list[str], model_name: str = "model"):
        self.vocab = list(vocab)
        self.model_name = model_name
        self.index = {w: i for i, w in enumerate(self.vocab)}

    def tokenize(self, text: str) -> list[str]:
        """The tokens of `text`. Punctuation the vocabulary lacks is dropped; unknown words raise."""
        tokens, unknown = [], []
        for piece in split_words(text):
            if piece in self.index:
                tokens.append(piece)
            elif piece[0].isalnum():
                if piece not in unknown:
                    unknown.append(piece)
            # punctuation outside the vocabulary carries no meaning for the model: skip it
        if unknown:
            raise UnknownWordError(unknown, self.model_name)
        return tokens

    def encode(self, text: str) -> tuple[list[str], list[int]]:
        tokens = self.tokenize(text)
        return tokens, [self.index[t] for t in tokens]
