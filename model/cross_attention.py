"""Cross-attention in the toy world: English queries read French keys and values.

`python -m attention_manim.model.cross_attention --train` retrains the head; `--vocab` lists both vocabularies.

What is hand-designed and what is learned:

* The English words are the toy world's own (`model/toy_world.py`): their embeddings are its W_E
  rows, their positions its sinusoidal code.
* FRENCH below is a small French lexicon in the same 64-dimensional space. Each French word
  translates one English word ("veux = want"): it gets that word's named features and an identity
  code close to (not equal to) that word's, so a word and its translation are near neighbours in
  meaning space. A French word with no English word of its own (the auxiliary "a" of "il a vu")
  gets its own features and a random identity code.
* A phrase-pair generator (`Pairs`) writes English phrases, their French translations and the
  alignment (which French tokens each English token translates into): negation split in two
  (not → ne … pas), object pronouns that move in front of the verb (it → le, "le caresser"),
  adjectives after their noun ("la voiture rouge"), a past tense of two words (saw → a vu).
  English words with no French word of their own ("do", "to") have no target: their attention
  should spread evenly.
* ONE cross-attention head: W_Q reads the English embeddings (+ positions), W_K and W_V the French
  ones (+ positions), W_O writes back into the English space. W_Q, W_K, W_V, W_O start random and
  are trained by Adam (seeded, deterministic) on the cross-entropy of the head's pattern against
  the alignment, plus the squared error of its ΔE against the meaning of the aligned French words,
  as `model/train.py` trains the toy's heads. There is no mask: every English query may look at
  every French key.

The trained weights and the embedding tables they were trained with are saved together in
`assets/toy/cross_attention.safetensors` (+ `cross_attention.json`), so run time never trains and
later edits of the toy world cannot shift this head's inputs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .errors import Term, UserError
from .tokenizer import split_words

ASSET_DIR = Path(__file__).resolve().parent.parent / "assets" / "toy"
WEIGHTS = ASSET_DIR / "cross_attention.safetensors"
CONFIG = ASSET_DIR / "cross_attention.json"

D_HEAD = 16
SEED = 0
STEPS = 600
CORPUS_SIZE = 2000
BATCH = 64
LR = 0.02
WEIGHT_DECAY = 1e-4
UPDATE_WEIGHT = 0.5
CENTER_WEIGHT = 0.02
IDENT_JITTER = 0.35  # how far a French word's identity code sits from its English word's
FRENCH_SEED = 20240407
HELD_OUT_SEED = 777
# the two sides of a pair, as the errors name them ("the french sentence is empty"; the catalogs' words)
SIDES = {"english": Term("english", "english"), "french": Term("french", "french")}
VOCAB_HINT = "list the words it knows with `python -m attention_manim.model.cross_attention --vocab`"

EXAMPLE = ("i do not want to pet it", "je ne veux pas le caresser")

# "french = english": the English word it translates (its features are copied);
# "french = - feature feature=w": no English word of its own, these features.
_FRENCH = """
je = i
tu = you
il = he
elle = she
nous = we
vous = you
ils = they
le = it
ne = not
pas = not
veux = want
voulons = want
voulez = want
veulent = want
peux = can
peut = can
pouvons = can
pouvez = can
peuvent = can
caresser = pet
prendre = take
lire = read
a = - verb
avons = - verb
avez = - verb
ont = - verb
vu = saw
mangé = ate
pris = took
trouvé = found
aimé = loved
volé = stole
la = the
un = a
une = a
mon = my
ma = my
voiture = car
maison = house
pomme = apple
souris = mouse
clé = key
porte = door
fleur = flower
reine = queen
chat = cat
chien = dog
livre = book
gâteau = cake
renard = fox
lapin = rabbit
roi = king
dragon = dragon
rouge = red
bleu = blue
bleue = blue
vert = green
verte = green
noir = black
noire = black
petit = small
petite = small
grand = big
grande = big
vieux = old
vieille = old
magique = magic
"""


def _parse_french(text: str) -> dict[str, tuple[str | None, dict[str, float] | None]]:
    out: dict = {}
    for line in text.strip().splitlines():
        fr, _, rest = (p.strip() for p in line.partition("="))
        if rest.startswith("-"):
            feats = {}
            for item in rest[1:].split():
                name, _, w = item.partition("=")
                feats[name] = float(w) if w else 1.0
            out[fr] = (None, feats)
        else:
            out[fr] = (rest, None)
    return out


FRENCH = _parse_french(_FRENCH)

# the grammar's word classes (English word -> French forms)
SUBJECTS = {  # English subject -> [(French subject, person)]; person picks the verb's form
    "i": [("je", "1s")], "you": [("tu", "2s"), ("vous", "2p")], "he": [("il", "3s")], "she": [("elle", "3s")],
    "we": [("nous", "1p")], "they": [("ils", "3p")],
}
CONJ = {
    "want": {"1s": "veux", "2s": "veux", "1p": "voulons", "2p": "voulez", "3p": "veulent"},
    "can": {"1s": "peux", "2s": "peux", "3s": "peut", "1p": "pouvons", "2p": "pouvez", "3p": "peuvent"},
    "have": {"3s": "a", "1p": "avons", "2p": "avez", "3p": "ont"},
}
INFINITIVES = {"pet": "caresser", "take": "prendre", "read": "lire"}
PAST = {"saw": "vu", "ate": "mangé", "took": "pris", "found": "trouvé", "loved": "aimé", "stole": "volé"}
NOUNS = {  # English -> (French, gender)
    "car": ("voiture", "f"), "house": ("maison", "f"), "apple": ("pomme", "f"), "mouse": ("souris", "f"),
    "key": ("clé", "f"), "door": ("porte", "f"), "flower": ("fleur", "f"), "queen": ("reine", "f"),
    "cat": ("chat", "m"), "dog": ("chien", "m"), "book": ("livre", "m"), "cake": ("gâteau", "m"),
    "fox": ("renard", "m"), "rabbit": ("lapin", "m"), "king": ("roi", "m"), "dragon": ("dragon", "m"),
}
DETERMINERS = {"the": {"f": "la"}, "a": {"m": "un", "f": "une"}, "my": {"m": "mon", "f": "ma"}}
ADJECTIVES = {  # English -> (masculine, feminine, before the noun in French)
    "red": ("rouge", "rouge", False), "blue": ("bleu", "bleue", False), "green": ("vert", "verte", False),
    "black": ("noir", "noire", False), "magic": ("magique", "magique", False),
    "small": ("petit", "petite", True), "big": ("grand", "grande", True), "old": ("vieux", "vieille", True),
}
UNALIGNED = ("do", "to")  # English words with no French word of their own

# phrase pairs training never sees (besides every pair the held-out generator draws; see held_out())
HELD_OUT: list[tuple[str, str]] = [
    ("they do not want to read my old book", "ils ne veulent pas lire mon vieux livre"),
    ("she ate the small green apple", "elle a mangé la petite pomme verte"),
    ("we can not take it", "nous ne pouvons pas le prendre"),
    ("you want to pet a black rabbit", "tu veux caresser un lapin noir"),
    ("he found my big blue key", "il a trouvé ma grande clé bleue"),
    ("they stole the old red car", "ils ont volé la vieille voiture rouge"),
]


# --- vocabularies and embeddings -------------------------------------------------------------------

def _toy():
    from . import toy_world as tw

    return tw


def english_vocab() -> list[str]:
    words = {en for en, _ in FRENCH.values() if en} | set(UNALIGNED)
    words |= {w for s, _ in HELD_OUT + [EXAMPLE] for w in s.split()}
    return sorted(words)


def french_vocab() -> list[str]:
    return list(FRENCH)


def build_tables() -> dict[str, np.ndarray]:
    """The embedding tables (float32) from the toy world and the French lexicon: E_en [n_en, d],
    E_fr [n_fr, d] (meaning only), P [n_ctx, d] (positions), M_fr [n_fr, d] (the French words'
    meanings, the target of ΔE). Deterministic."""
    tw = _toy()
    en = english_vocab()
    E_en = tw.token_embeddings()[[tw.WORD_INDEX[w] for w in en]]
    meaning = tw.meaning_matrix()
    rng = np.random.default_rng(FRENCH_SEED)
    rows = []
    for fr, (src, feats) in FRENCH.items():
        jitter = rng.standard_normal(tw.N_IDENT)
        m = np.zeros(tw.N_MEANING)
        if src is not None:
            m[:] = meaning[tw.WORD_INDEX[src]]
            ident = m[tw.N_FEAT:] + IDENT_JITTER * tw.IDENT_NORM * jitter / np.linalg.norm(jitter)
        else:
            for name, w in feats.items():
                m[tw.FEATURE_INDEX[name]] = w
            ident = jitter
        m[tw.N_FEAT:] = tw.IDENT_NORM * ident / np.linalg.norm(ident)
        rows.append(m)
    E_fr = tw.meaning_to_embedding(np.array(rows))
    P = tw.position_embeddings(tw.N_CTX)
    return {"E_en": E_en.astype(np.float32), "E_fr": E_fr.astype(np.float32), "P": P.astype(np.float32)}


# --- the phrase pairs ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Pair:
    english: tuple[str, ...]
    french: tuple[str, ...]
    align: tuple[tuple[int, ...], ...]  # per English token: the French token positions it translates into

    @property
    def text(self) -> tuple[str, str]:
        return " ".join(self.english), " ".join(self.french)


class Pairs:
    """Seeded generator of aligned English → French phrase pairs."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)

    def c(self, seq):
        return self.r.choice(list(seq))

    def noun_phrase(self):
        """English tokens, French tokens, alignment (relative to the phrase) of 'det [adj...] noun'."""
        r = self.r
        noun = self.c(NOUNS)
        fr_noun, g = NOUNS[noun]
        det = self.c([d for d, forms in DETERMINERS.items() if g in forms])
        pre = [a for a in ADJECTIVES if ADJECTIVES[a][2]]
        post = [a for a in ADJECTIVES if not ADJECTIVES[a][2]]
        adjs = []
        if r.random() < 0.5:
            adjs.append(self.c(pre))
        if r.random() < 0.5:
            adjs.append(self.c(post))
        fr_of = {a: ADJECTIVES[a][0 if g == "m" else 1] for a in adjs}
        fr = [DETERMINERS[det][g]] + [fr_of[a] for a in adjs if ADJECTIVES[a][2]] + [fr_noun] + [
            fr_of[a] for a in adjs if not ADJECTIVES[a][2]]
        if det == "a" and (adjs + [noun])[0][0] in "aeiou":  # no "a old": this lexicon has no "an"
            det = "my"
        en = [det] + adjs + [noun]
        align = [(0,)] + [(fr.index(fr_of[a]),) for a in adjs] + [(fr.index(fr_noun),)]
        return en, fr, align

    def pair(self) -> Pair:
        r = self.r
        subj = self.c(SUBJECTS)
        fr_subj, person = self.c(SUBJECTS[subj])
        x = r.random()
        if x < 0.55:  # [do not] want / can [not] ... to VERB it|NP, or [do not] want it
            modal = "want" if r.random() < 0.6 and person != "3s" else "can"  # no "he want"
            neg = r.random() < 0.6
            en = [subj] + (["do", "not"] if neg and modal == "want" else []) + [modal] + (
                ["not"] if neg and modal == "can" else [])
            fr = [fr_subj] + (["ne"] if neg else [])
            al: list = [(0,)] + [()] * (len(en) - 1)
            i_modal = en.index(modal)
            if modal == "want" and r.random() < 0.25:  # want it: "je (ne) le veux (pas)"
                fr += ["le", CONJ[modal][person]] + (["pas"] if neg else [])
                en += ["it"]
                al[i_modal] = (fr.index(CONJ[modal][person]),)
                if neg:
                    al[en.index("not")] = (fr.index("ne"), fr.index("pas"))
                al.append((fr.index("le"),))
                return Pair(tuple(en), tuple(fr), tuple(al))
            fr += [CONJ[modal][person]] + (["pas"] if neg else [])
            al[i_modal] = (fr.index(CONJ[modal][person]),)
            if neg:
                al[en.index("not")] = (fr.index("ne"), fr.index("pas"))
            if modal == "want":
                en.append("to")
                al.append(())
            verb = self.c(INFINITIVES)
            if r.random() < 0.45:  # the object pronoun goes before the infinitive
                fr += ["le", INFINITIVES[verb]]
                en += [verb, "it"]
                al += [(len(fr) - 1,), (len(fr) - 2,)]
            else:
                fr.append(INFINITIVES[verb])
                en.append(verb)
                al.append((len(fr) - 1,))
                ne, nf, na = self.noun_phrase()
                al += [tuple(len(fr) + j for j in a) for a in na]
                en += ne
                fr += nf
            return Pair(tuple(en), tuple(fr), tuple(al))
        if person not in CONJ["have"]:  # "j'ai" / "tu as": not in this lexicon; use "il"
            subj, fr_subj, person = "he", "il", "3s"
        verb = self.c(PAST)
        aux = CONJ["have"][person]
        en, fr = [subj, verb], [fr_subj, aux, PAST[verb]]
        al = [(0,), (1, 2)]  # saw → a vu
        if r.random() < 0.85:
            ne, nf, na = self.noun_phrase()
            al += [tuple(len(fr) + j for j in a) for a in na]
            en += ne
            fr += nf
        return Pair(tuple(en), tuple(fr), tuple(al))


@lru_cache(maxsize=None)
def held_out(n: int = 200) -> tuple[Pair, ...]:
    """Pairs training never sees: HELD_OUT's (aligned by the generator's rules, see _held_out_fixed)
    and n drawn by the generator with its own seed, none of them in the training corpus."""
    seen = {p.english for p in corpus(CORPUS_SIZE, SEED)}
    out, have = list(_held_out_fixed()), {p.english for p in _held_out_fixed()}
    g = Pairs(HELD_OUT_SEED)
    while len(out) < n + len(HELD_OUT):
        p = g.pair()
        if p.english not in seen and p.english not in have:
            out.append(p)
            have.add(p.english)
    return tuple(out)


def _held_out_fixed() -> list[Pair]:
    """HELD_OUT with alignments: each English word aligned to its translations in the French phrase."""
    out = []
    for en, fr in HELD_OUT:
        e, f = en.split(), fr.split()
        al = []
        for w in e:
            hits = tuple(j for j, x in enumerate(f) if FRENCH[x][0] == w)
            if w in PAST:
                hits = (hits[0] - 1,) + hits  # the auxiliary just before the participle
            al.append(hits)
        out.append(Pair(tuple(e), tuple(f), tuple(al)))
    return out


def corpus(n: int = CORPUS_SIZE, seed: int = SEED) -> list[Pair]:
    """n training pairs (seeded): none is a held-out pair, and the example is not among them either."""
    banned = {tuple(en.split()) for en, _ in HELD_OUT} | {tuple(EXAMPLE[0].split())}
    g = Pairs(seed)
    out = []
    while len(out) < n:
        p = g.pair()
        if p.english not in banned:
            out.append(p)
    return out


def target_pattern(pair: Pair) -> np.ndarray:
    """[n_en, n_fr]: the aligned French tokens share the weight; an unaligned word spreads it evenly."""
    T = np.zeros((len(pair.english), len(pair.french)))
    for i, a in enumerate(pair.align):
        if a:
            T[i, list(a)] = 1.0 / len(a)
        else:
            T[i] = 1.0 / len(pair.french)
    return T


# --- the head ---------------------------------------------------------------------------------------

def _fr_ids(words) -> list[int]:
    idx = {w: i for i, w in enumerate(french_vocab())}
    return [idx[w] for w in words]


def _en_ids(words) -> list[int]:
    idx = {w: i for i, w in enumerate(english_vocab())}
    return [idx[w] for w in words]


def train(seed: int = SEED, steps: int = STEPS, out: Path | None = WEIGHTS, progress: bool = True,
          corpus_size: int = CORPUS_SIZE) -> dict[str, np.ndarray]:
    """Train the head (seeded, deterministic, one thread); save it unless out is None. Returns the
    tensors saved: W_Q, W_K, W_V, W_O and the embedding tables."""
    import torch

    saved = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled())
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    try:
        t0 = time.perf_counter()
        tables = build_tables()
        E_en, E_fr, P = (torch.from_numpy(tables[k]) for k in ("E_en", "E_fr", "P"))
        d = E_en.shape[1]
        g = torch.Generator().manual_seed(seed)
        W = {k: (torch.randn(shape, generator=g) * 0.1).requires_grad_(True) for k, shape in
             (("W_Q", (d, D_HEAD)), ("W_K", (d, D_HEAD)), ("W_V", (d, D_HEAD)), ("W_O", (D_HEAD, d)))}
        pairs = corpus(corpus_size, seed)
        batches = [_batch(pairs[k:k + BATCH]) for k in range(0, len(pairs), BATCH)]
        opt = torch.optim.Adam(list(W.values()), lr=LR)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: 0.5 * (1 + math.cos(math.pi * min(s / max(steps, 1), 1))))
        order: list[int] = []
        for step in range(steps):
            if not order:
                order = torch.randperm(len(batches), generator=g).tolist()
            b = batches[order.pop()]
            x_en = E_en[b["en"]] + P[: b["en"].shape[1]]
            x_fr = E_fr[b["fr"]] + P[: b["fr"].shape[1]]
            scores = (x_en @ W["W_Q"]) @ (x_fr @ W["W_K"]).transpose(1, 2) / math.sqrt(D_HEAD)
            logp = torch.log_softmax(scores.masked_fill(~b["fr_mask"][:, None, :], float("-inf")), dim=-1)
            T = b["target"]
            ce = -torch.where(T > 0, T * logp, torch.zeros_like(logp)).sum(-1)
            delta = (logp.exp() @ (x_fr @ W["W_V"])) @ W["W_O"]
            update = T @ E_fr[b["fr"]]
            se = ((delta - update) ** 2).sum(-1) / 16.0
            w = b["en_mask"].float()
            keys = b["fr_mask"][:, None, :].float()
            row_mean = (scores * keys).sum(-1) / keys.sum(-1)
            loss = ((ce + UPDATE_WEIGHT * se + CENTER_WEIGHT * row_mean ** 2) * w).sum() / w.sum()
            loss = loss + WEIGHT_DECAY * sum((p ** 2).sum() for p in W.values())
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            if progress and (step % 100 == 0 or step == steps - 1):
                print(f"step {step:4d}  pattern cross-entropy {((ce * w).sum() / w.sum()).item():.3f}  "
                      f"ΔE error {((se * w).sum() / w.sum()).item():.3f}", flush=True)
        result = {k: v.detach().contiguous().numpy().copy() for k, v in W.items()} | tables
        if out is not None:
            _save(result, Path(out), seed, steps, corpus_size)
            if progress:
                print(f"wrote {out} in {time.perf_counter() - t0:.1f} s")
        return result
    finally:
        torch.set_num_threads(saved[0])
        torch.use_deterministic_algorithms(saved[1])


def _batch(pairs: list[Pair]) -> dict:
    import torch

    n_en = max(len(p.english) for p in pairs)
    n_fr = max(len(p.french) for p in pairs)
    b = len(pairs)
    en = torch.zeros(b, n_en, dtype=torch.long)
    fr = torch.zeros(b, n_fr, dtype=torch.long)
    en_mask = torch.zeros(b, n_en, dtype=torch.bool)
    fr_mask = torch.zeros(b, n_fr, dtype=torch.bool)
    target = torch.zeros(b, n_en, n_fr)
    for i, p in enumerate(pairs):
        en[i, : len(p.english)] = torch.tensor(_en_ids(p.english))
        fr[i, : len(p.french)] = torch.tensor(_fr_ids(p.french))
        en_mask[i, : len(p.english)] = True
        fr_mask[i, : len(p.french)] = True
        target[i, : len(p.english), : len(p.french)] = torch.from_numpy(target_pattern(p)).float()
    return {"en": en, "fr": fr, "en_mask": en_mask, "fr_mask": fr_mask, "target": target}


def _save(tensors: dict[str, np.ndarray], out: Path, seed: int, steps: int, corpus_size: int) -> None:
    from safetensors.numpy import save_file

    out.parent.mkdir(parents=True, exist_ok=True)
    save_file({k: np.ascontiguousarray(v, dtype=np.float32) for k, v in tensors.items()}, str(out))
    cfg = {"d_head": D_HEAD, "seed": seed, "steps": steps, "corpus_size": corpus_size,
           "english_vocab": english_vocab(), "french_vocab": french_vocab(),
           "lexicon_sha256": hashlib.sha256(_FRENCH.encode()).hexdigest(),
           "notes": "One cross-attention head of the toy world (model/cross_attention.py): W_Q on English "
                    "embeddings + positions, W_K and W_V on French embeddings + positions, W_O back to the "
                    f"English space; trained by Adam (seed {seed}, {steps} steps, {corpus_size} generated "
                    "phrase pairs) on the alignment of each English word with its French translation. "
                    "No mask. E_en, E_fr and P are the embedding tables it was trained with."}
    out.with_suffix(".json").write_text(json.dumps(cfg, ensure_ascii=False, indent=1), encoding="utf-8")


# --- loading and tracing ----------------------------------------------------------------------------

@dataclass(frozen=True)
class CrossAttention:
    """The trained head and the tables it reads (numpy, float32)."""

    W_Q: np.ndarray  # [d_model, d_head]  reads the English (decoder) side
    W_K: np.ndarray  # [d_model, d_head]  reads the French (encoder) side
    W_V: np.ndarray  # [d_model, d_head]
    W_O: np.ndarray  # [d_head, d_model]
    E_en: np.ndarray  # [n_en_vocab, d_model]
    E_fr: np.ndarray  # [n_fr_vocab, d_model]
    P: np.ndarray  # [n_ctx, d_model]
    english_vocab: tuple[str, ...]
    french_vocab: tuple[str, ...]
    d_head: int
    pairs_trained: int = CORPUS_SIZE
    seed: int = SEED

    def tokens(self, text: str, side: str) -> list[str]:
        vocab = self.english_vocab if side == "english" else self.french_vocab
        words = [w for w in split_words(text) if w[0].isalnum()]
        unknown = [w for w in dict.fromkeys(words) if w not in vocab]
        language = SIDES[side]
        if unknown:
            listed = ", ".join(repr(w) for w in unknown)
            raise UserError(f"the cross-attention model does not know the {language} word{'s' if len(unknown) > 1 else ''} "
                            f"{listed}", VOCAB_HINT, key="cross_unknown_word", language=language, words=listed,
                            count=len(unknown))
        if not words:
            raise UserError(f"the {language} sentence is empty", "give two sentences: --sentence \"english | french\"",
                            key="cross_sentence_empty", language=language)
        if len(words) > len(self.P):
            raise UserError(f"the {language} sentence has {len(words)} words; this head reads at most {len(self.P)}",
                            "use a shorter sentence", key="cross_sentence_too_long", language=language,
                            n_words=len(words), most=len(self.P))
        return words

    def trace(self, english: str, french: str) -> "CrossTrace":
        en = self.tokens(english, "english")
        fr = self.tokens(french, "french")
        ei = {w: i for i, w in enumerate(self.english_vocab)}
        fi = {w: i for i, w in enumerate(self.french_vocab)}
        x_en = self.E_en[[ei[w] for w in en]] + self.P[: len(en)]
        x_fr = self.E_fr[[fi[w] for w in fr]] + self.P[: len(fr)]
        q, k, v = x_en @ self.W_Q, x_fr @ self.W_K, x_fr @ self.W_V
        scores = q @ k.T / np.float32(math.sqrt(self.d_head))
        e = np.exp(scores - scores.max(axis=1, keepdims=True))
        pattern = e / e.sum(axis=1, keepdims=True)
        z = pattern @ v
        return CrossTrace(english=english, french=french, english_tokens=tuple(en), french_tokens=tuple(fr),
                          english_embeddings=x_en, french_embeddings=x_fr, q=q, k=k, v=v, scores=scores,
                          pattern=pattern, z=z, delta=z @ self.W_O, d_head=self.d_head)


@dataclass(frozen=True)
class CrossTrace:
    """One pass of the head over a pair. Arrays are [English query, French key] like the toy's."""

    english: str
    french: str
    english_tokens: tuple[str, ...]  # the queries (decoder side)
    french_tokens: tuple[str, ...]  # the keys and values (encoder side)
    english_embeddings: np.ndarray  # [n_en, d_model] token + position
    french_embeddings: np.ndarray  # [n_fr, d_model]
    q: np.ndarray  # [n_en, d_head]
    k: np.ndarray  # [n_fr, d_head]
    v: np.ndarray  # [n_fr, d_head]
    scores: np.ndarray  # [n_en, n_fr] q·k / sqrt(d_head); nothing is masked
    pattern: np.ndarray  # [n_en, n_fr] softmax over the French keys: rows sum to 1
    z: np.ndarray  # [n_en, d_head]
    delta: np.ndarray  # [n_en, d_model] ΔE: what the head adds to each English embedding
    d_head: int

    @property
    def mask(self) -> np.ndarray:
        return np.zeros(self.pattern.shape, dtype=bool)


@lru_cache(maxsize=2)
def load_cross_attention(path: str | None = None) -> CrossAttention:
    from safetensors.numpy import load_file

    p = Path(path) if path else WEIGHTS
    if not p.exists():
        raise UserError(f"the cross-attention weights {p} are missing",
                        "train them with `python -m attention_manim.model.cross_attention --train`",
                        key="cross_weights_missing", path=p)
    t = load_file(str(p))
    cfg = json.loads(p.with_suffix(".json").read_text(encoding="utf-8"))
    return CrossAttention(W_Q=t["W_Q"], W_K=t["W_K"], W_V=t["W_V"], W_O=t["W_O"], E_en=t["E_en"], E_fr=t["E_fr"],
                          P=t["P"], english_vocab=tuple(cfg["english_vocab"]), french_vocab=tuple(cfg["french_vocab"]),
                          d_head=int(cfg["d_head"]), pairs_trained=int(cfg["corpus_size"]), seed=int(cfg["seed"]))


def translate_trace(english: str = EXAMPLE[0], french: str = EXAMPLE[1]) -> CrossTrace:
    """The trace of the saved head on one pair (UserError for a word either side does not know)."""
    return load_cross_attention().trace(english, french)


@lru_cache(maxsize=4)
def _training_sentences(n: int, seed: int) -> frozenset[tuple[str, ...]]:
    return frozenset(p.english for p in corpus(n, seed))


def seen_in_training(english_tokens) -> bool:
    """Whether the saved head was trained on this English sentence (its corpus is regenerated)."""
    head = load_cross_attention()
    return tuple(english_tokens) in _training_sentences(head.pairs_trained, head.seed)


def as_traces(ct: CrossTrace) -> tuple:
    """The two sentences as `Trace`s of the embedding layer alone (English, then French): tokens, ids
    and embeddings, no layers and no logits. What a lesson's setting holds besides the CrossTrace."""
    from .trace import ModelInfo, Trace

    head = load_cross_attention()
    d = head.E_en.shape[1]
    info = ModelInfo(name="toy cross-attention", d_model=d, n_heads=1, d_head=head.d_head, n_layers=1,
                     n_ctx=len(head.P), causal=False, examples={"pet_it": EXAMPLE[0], "pet_it_french": EXAMPLE[1]},
                     description="one cross-attention head of the toy world: English queries, French keys and values")
    out = []
    for text, toks, vocab, E, X in ((ct.english, ct.english_tokens, head.english_vocab, head.E_en, ct.english_embeddings),
                                    (ct.french, ct.french_tokens, head.french_vocab, head.E_fr, ct.french_embeddings)):
        ids = tuple(vocab.index(t) for t in toks)
        n = len(toks)
        out.append(Trace(text=text, model=info, tokens=tuple(toks), token_ids=ids, token_embeddings=E[list(ids)],
                         position_embeddings=head.P[:n], embeddings=X, layers=(), final=X,
                         logits=np.zeros((n, 0), dtype=np.float32), vocab=tuple(vocab)))
    return tuple(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m attention_manim.model.cross_attention", description=__doc__.split("\n")[0])
    ap.add_argument("--train", action="store_true", help="retrain the head and save it to assets/toy/")
    ap.add_argument("--vocab", action="store_true", help="list the English and French words it knows")
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--steps", type=int, default=STEPS)
    args = ap.parse_args(argv)
    if args.vocab:
        print(f"english ({len(english_vocab())}):\n  " + " ".join(english_vocab()))
        print(f"\nfrench ({len(french_vocab())}):\n  " + " ".join(french_vocab()))
    if args.train:
        train(seed=args.seed, steps=args.steps)
    if not (args.vocab or args.train):
        ap.print_help()


if __name__ == "__main__":
    main()
