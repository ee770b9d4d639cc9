"""A word-level tokenizer: lower-cased words and punctuation marks, looked up in a fixed vocabulary."""

from __future__ import annotations

import re

from .errors import UnknownWordError
from .trace import SPACE_MARK

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


# --- subword tokenizers (real models): the `tokenizers` library, tokens shown as a reader would ----

# A word of the sentence: letters/digits (with inner apostrophes or hyphens), or one punctuation mark.
_WORD_RE = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*|_+|[^\w\s]")
_BYTE_TOKEN_RE = re.compile(r"^<0x([0-9A-Fa-f]{2})>$")


def _byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, reversed: the printable stand-in character -> the byte."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {chr(c): b for b, c in zip(bs, cs)}


_VISIBLE = str.maketrans({" ": SPACE_MARK, "\n": "\\n", "\t": "\\t", "\r": "\\r"})


def show_bytes(raw: bytes) -> str:
    """A token's bytes as a reader sees them: a leading (or any) space as "␣", a newline as "\\n", a tab
    as "\\t", and a byte that is only part of a UTF-8 character as "<0xE2>" (SentencePiece's own
    spelling of a byte token)."""
    text = raw.decode("utf-8", errors="surrogateescape").translate(_VISIBLE)
    if text.isascii() or not any("\udc80" <= ch <= "\udcff" for ch in text):
        return text
    return "".join(f"<0x{ord(ch) - 0xDC00:02X}>" if "\udc80" <= ch <= "\udcff" else ch for ch in text)


class SubwordTokenizer:
    """A `tokenizers.Tokenizer` (byte-level BPE like GPT-2 and SmolLM2, or SentencePiece-style with
    "▁" and <0x..> byte tokens) that also says how each token reads and which word it belongs to."""

    def __init__(self, tokenizer, model_name: str = "model"):
        self.tk = tokenizer
        self.model_name = model_name
        kinds = [(part.__getstate__() if part is not None else b"") for part in (tokenizer.decoder, tokenizer.pre_tokenizer)]
        self.byte_level = any(b'"ByteLevel"' in k for k in kinds)
        self.size = tokenizer.get_vocab_size(with_added_tokens=True)
        self.special = {i for i, t in tokenizer.get_added_tokens_decoder().items() if t.special}
        self._bytes: list[bytes] | None = None
        self._shown: tuple[str, ...] | None = None
        self._texts: tuple[str, ...] | None = None
        self._ids_by_text: dict[str, int] | None = None

    # per-id views, computed once
    @property
    def token_bytes(self) -> list[bytes]:
        if self._bytes is None:
            by_id: list[str | None] = [None] * self.size
            for tok, i in self.tk.get_vocab(with_added_tokens=True).items():
                if 0 <= i < self.size:
                    by_id[i] = tok
            inverse = _byte_decoder() if self.byte_level else {}
            to_latin1 = str.maketrans({c: chr(b) for c, b in inverse.items()})
            out = []
            for i, tok in enumerate(by_id):
                if tok is None:
                    out.append(b"")
                elif i in self.special:
                    out.append(tok.encode("utf-8"))
                elif self.byte_level:
                    try:  # every character a byte of GPT-2's alphabet
                        out.append(tok.translate(to_latin1).encode("latin-1"))
                    except UnicodeEncodeError:
                        out.append(tok.encode("utf-8"))
                elif (m := _BYTE_TOKEN_RE.match(tok)) is not None:
                    out.append(bytes([int(m.group(1), 16)]))
                else:
                    out.append(tok.replace("▁", " ").encode("utf-8"))
            self._bytes = out
        return self._bytes

    @property
    def shown(self) -> tuple[str, ...]:
        """Every token id as shown on screen ("␣Paris")."""
        if self._shown is None:
            self._shown = tuple(self.tk.id_to_token(i) if i in self.special else show_bytes(b)
                                for i, b in enumerate(self.token_bytes))
        return self._shown

    @property
    def texts(self) -> tuple[str, ...]:
        """Every token id as plain text (" Paris"); a partial UTF-8 byte becomes U+FFFD."""
        if self._texts is None:
            self._texts = tuple(b.decode("utf-8", errors="replace") for b in self.token_bytes)
        return self._texts

    @property
    def ids_by_text(self) -> dict[str, int]:
        """Plain text -> the lowest id that spells it (ordinary tokens only)."""
        if self._ids_by_text is None:
            d: dict[str, int] = {}
            for i, t in enumerate(self.texts):
                if i not in self.special and "\ufffd" not in t and t not in d:
                    d[t] = i
            self._ids_by_text = d
        return self._ids_by_text

    def encode_ids(self, text: str) -> list[int]:
        return list(self.tk.encode(text).ids)

    def encode(self, text: str) -> tuple[list[str], list[int]]:
        ids = self.encode_ids(text)
        return [self.shown[i] for i in ids], ids

    def decode(self, ids: list[int]) -> str:
        """The text the ids spell (special tokens written out)."""
        parts = []
        buf = b""
        for i in ids:
            if i in self.special:
                parts.append(buf.decode("utf-8", errors="replace"))
                buf = b""
                parts.append(self.tk.id_to_token(i))
            else:
                buf += self.token_bytes[i]
        parts.append(buf.decode("utf-8", errors="replace"))
        return "".join(parts)

    def words(self, ids: list[int]) -> tuple[list[str], list[int]]:
        """(words, word_of_token): the words the tokens spell, as written, and for each token the index
        of its word. A word is letters and digits (inner ' or - allowed) or one punctuation mark; a
        token belongs to the word of its first non-blank character; a blank token ("\\n") to the next
        word (the previous at the end); a special token (<s>) is a word of its own."""
        # byte offsets first, characters after (a token may hold half of a character)
        raw = b"".join(self.token_bytes[i] for i in ids if i not in self.special)
        text = raw.decode("utf-8", errors="surrogateescape")
        char_at_byte = []
        for ci, ch in enumerate(text):
            char_at_byte.extend([ci] * len(ch.encode("utf-8", errors="surrogateescape")))
        char_at_byte.append(len(text))
        spans: list[tuple[int, int] | None] = []
        pos = 0
        for i in ids:
            if i in self.special:
                spans.append(None)
                continue
            b0, b1 = pos, pos + len(self.token_bytes[i])
            pos = b1
            spans.append((char_at_byte[b0], char_at_byte[b1] if b1 > b0 else char_at_byte[b0]))
        matches = list(_WORD_RE.finditer(text))
        word_at_char = {}
        for wi, m in enumerate(matches):
            for c in range(m.start(), m.end()):
                word_at_char[c] = wi

        def match_of(span):
            c0, c1 = span
            for c in range(c0, max(c1, c0 + 1)):
                if c in word_at_char:
                    return word_at_char[c]
            later = [wi for wi, m in enumerate(matches) if m.start() >= c0]
            if later:
                return later[0]
            earlier = [wi for wi, m in enumerate(matches) if m.end() <= c0]
            return earlier[-1] if earlier else None

        # a token that covers several words ("␣--", "tower.") joins them into one: every character of
        # the text stays in exactly one word, as written
        group = list(range(len(matches)))
        for span in spans:
            if span is None:
                continue
            covered = sorted({word_at_char[c] for c in range(span[0], span[1]) if c in word_at_char})
            for mi in range(covered[0] + 1, covered[-1] + 1) if covered else ():
                group[mi] = group[covered[0]]
        for mi in range(len(group)):  # a chain of joins: every match points at its group's first match
            group[mi] = group[group[mi]]
        last_of = {}
        for mi, g in enumerate(group):
            last_of[g] = mi

        words: list[str] = []
        word_of_token: list[int] = []
        index_of_group: dict[int, int] = {}
        for i, span in zip(ids, spans):
            mi = match_of(span) if span is not None else None
            if mi is None:
                words.append(self.tk.id_to_token(i) if span is None else self.shown[i])
                word_of_token.append(len(words) - 1)
                continue
            g = group[mi]
            if g not in index_of_group:
                index_of_group[g] = len(words)
                piece = text[matches[g].start():matches[last_of[g]].end()]
                words.append(piece.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
            word_of_token.append(index_of_group[g])
        return words, word_of_token
