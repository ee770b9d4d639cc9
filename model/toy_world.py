"""The toy world: a hand-designed dictionary of word meanings and the rules its attention heads learn.

Everything here is written by hand and is deterministic:

* FEATURES — named meanings ("noun", "animal", "blue", ...). Each is one unit direction in the
  64-dimensional embedding space.
* LEXICON — every word of the vocabulary, described by a few features with weights.
* The embedding of a word is its feature vector seen through a fixed random rotation (so the
  numbers on screen are dense instead of one-hot), plus a small random identity code (five
  dimensions of its own) so that two words with the same features still differ. Position is a
  sinusoidal code in eighteen more dimensions, orthogonal to every named direction: adding it never
  changes a projection on a named direction, and the three "mole"s of the mole scene are the same
  vector up to position.
* The rules — what each head should do to each token of a phrase (which earlier tokens it should
  look at, and what update ΔE it should write). `model/train.py` generates a corpus from the
  grammar below and trains the heads' W_Q, W_K, W_V, W_O by gradient descent to follow them.

Nothing here imports torch; the arrays are numpy.
"""

from __future__ import annotations

import random
from functools import lru_cache

import numpy as np

# --- the named features ---------------------------------------------------------------------------

POS = ["noun", "adjective", "verb", "determiner", "pronoun", "preposition", "number", "function",
       "punctuation"]
FLAGS = ["ambiguous"]  # the word has several senses that context must choose between
# young is "old" with a minus sign, bad is "good" with a minus sign, slow is "fast" with one
QUALITIES = ["large", "small", "fluffy", "blue", "green", "red", "white", "black", "old", "fast", "good"]
KINDS = ["animal", "creature", "person", "chemistry", "medicine", "paris", "steel", "building",
         "forest", "wizard", "royalty", "vehicle", "food", "crime", "object"]
EFFECTS = ["damage", "motion", "perception", "possession", "communication"]
FEATURES: list[str] = POS + FLAGS + QUALITIES + KINDS + EFFECTS
FEATURE_INDEX = {f: i for i, f in enumerate(FEATURES)}

FEATURE_NOTES = {
    "chemistry": "chemistry and quantity (a mole of a substance; numbers count as quantities)",
    "medicine": "medicine and skin",
    "paris": "Paris and France",
    "large": "large or tall",
    "forest": "forests, trees, gardens: growing nature",
    "creature": "creatures and monsters",
    "ambiguous": "a word with several senses (mole, tower, harry, seal)",
    "old": "old (negative: young, new)",
    "good": "good (negative: bad, evil)",
    "fast": "fast (negative: slow, asleep)",
    "object": "a made thing: key, book, crown, wand",
}

# --- the geometry -----------------------------------------------------------------------------------

D_MODEL = 64
N_CTX = 64
N_FEAT = len(FEATURES)  # 41 named directions
N_IDENT = 5  # a small random "which word exactly" code, orthogonal to the named directions
N_POS = D_MODEL - N_FEAT - N_IDENT  # 18: position lives here (9 sine/cosine pairs)
SCALE = 4.0  # one unit of a feature = this length in embedding space (readable numbers, mostly ±3)
IDENT_NORM = 0.5  # in feature units
POS_NORM = 1.0  # in feature units
ROTATION_SEED = 20240406
# geometric frequencies from three radians per token down to one turn per ~140 tokens: a
# shift-invariant code in which a head can express "the previous token" or "the last three"
POS_FREQS = 3.0 * (0.045 / 3.0) ** (np.arange(N_POS // 2) / (N_POS // 2 - 1))

# --- the lexicon ----------------------------------------------------------------------------------
# "word: feature feature=weight ...": a bare feature has weight 1.

_LEXICON = """
.: punctuation
,: punctuation
?: punctuation
!: punctuation

a: determiner
an: determiner
the: determiner
this: determiner
that: determiner
every: determiner
some: determiner
no: determiner
my: determiner
his: determiner
her: determiner
its: determiner
our: determiner
your: determiner
their: determiner

i: pronoun
you: pronoun
he: pronoun
she: pronoun
it: pronoun
we: pronoun
they: pronoun
me: pronoun
him: pronoun
us: pronoun
them: pronoun

of: preposition
in: preposition
on: preposition
at: preposition
to: preposition
with: preposition
from: preposition
by: preposition
near: preposition
under: preposition
over: preposition
into: preposition
behind: preposition
through: preposition
for: preposition

and: function
but: function
or: function
not: function
must: function
can: function
will: function
do: function
did: function
very: function
then: function
therefore: function
because: function
who: function
where: function

one: number chemistry=.4
two: number chemistry=.4
three: number chemistry=.4
four: number chemistry=.4
five: number chemistry=.4
ten: number chemistry=.4
twelve: number chemistry=.4
hundred: number chemistry=.4

big: adjective large
large: adjective large
huge: adjective large
giant: adjective large creature=.3
tall: adjective large=.8
enormous: adjective large
tiny: adjective small
small: adjective small
little: adjective small
miniature: adjective small
fluffy: adjective fluffy
soft: adjective fluffy=.6 good=.2
woolly: adjective fluffy=.8 white=.3
blue: adjective blue
azure: adjective blue
green: adjective green
verdant: adjective green forest=.6
red: adjective red
crimson: adjective red good=-.2
white: adjective white
pale: adjective white=.8
black: adjective black
dark: adjective black=.8 good=-.2
old: adjective old
ancient: adjective old
young: adjective old=-1
new: adjective old=-.8
fast: adjective fast
quick: adjective fast
slow: adjective fast=-.8
good: adjective good
happy: adjective good=.8
brave: adjective good=.6 fast=.2
beautiful: adjective good=.8
friendly: adjective good=.8
wise: adjective good=.5 old=.4
bad: adjective good=-1
evil: adjective good=-1 wizard=.2
angry: adjective good=-.8
cruel: adjective good=-1
wicked: adjective good=-1 wizard=.2
hungry: adjective good=-.3
asleep: adjective fast=-.6
wild: adjective animal=.5 good=-.2
american: adjective
french: adjective paris
royal: adjective royalty
magic: adjective wizard
magical: adjective wizard
medical: adjective medicine
chemical: adjective chemistry
wooden: adjective forest=.4
metal: adjective steel=.8

fox: noun animal red=.4 fast=.3
shrew: noun animal small=.4
cat: noun animal fluffy=.3
dog: noun animal good=.3
wolf: noun animal good=-.3 fast=.3
bear: noun animal large=.5
rabbit: noun animal fluffy=.4 small=.3
bird: noun animal small=.3
owl: noun animal old=.3
mouse: noun animal small=.5
horse: noun animal fast=.4 large=.3
fish: noun animal blue=.3
sheep: noun animal fluffy=.5 white=.4
deer: noun animal fast=.3
frog: noun animal green=.5
snake: noun animal good=-.3
lion: noun animal royalty=.3 large=.3
creature: noun creature
monster: noun creature good=-.5 large=.3
dragon: noun creature large=.5 red=.3
beast: noun creature animal=.3 good=-.3
unicorn: noun creature white=.4 wizard=.3
troll: noun creature good=-.4 large=.3
man: noun person
woman: noun person
child: noun person old=-.6
boy: noun person old=-.5
girl: noun person old=-.5
friend: noun person good=.4
king: noun person royalty
queen: noun person royalty
prince: noun person royalty old=-.3
princess: noun person royalty old=-.3
knight: noun person royalty=.4 steel=.3
wizard: noun person wizard
witch: noun person wizard good=-.2
doctor: noun person medicine
nurse: noun person medicine
chemist: noun person chemistry
scientist: noun person chemistry=.7
butler: noun person
maid: noun person
cook: noun person food=.5
gardener: noun person forest=.5
murderer: noun person crime good=-.5
detective: noun person crime=.6
thief: noun person crime
farmer: noun person food=.3 animal=.3
teacher: noun person
robot: noun person=.4 steel=.6
harry: noun person ambiguous wizard=.5 royalty=.5
mole: noun ambiguous animal=.6 chemistry=.6 medicine=.6
tower: noun ambiguous building large=.8
seal: noun ambiguous animal=.5 royalty=.5
paris: noun paris
france: noun paris
eiffel: noun paris steel=.6 building=.3
carbon: noun chemistry black=.3
dioxide: noun chemistry
oxygen: noun chemistry
atom: noun chemistry small=.3
acid: noun chemistry good=-.2
gas: noun chemistry
salt: noun chemistry=.8 food=.3
water: noun chemistry=.4 blue=.3
gold: noun chemistry=.3 royalty=.3
iron: noun steel=.8 chemistry=.4
steel: noun steel
biopsy: noun medicine
skin: noun medicine=.6
hospital: noun medicine building=.6
surgery: noun medicine damage=.3
patient: noun person medicine=.7
medicine: noun medicine
wound: noun medicine=.7 damage=.5
house: noun building
castle: noun building royalty=.6
palace: noun building royalty
bridge: noun building=.7 steel=.4
city: noun building=.6 large=.4
cottage: noun building small=.4
kitchen: noun building=.5 food=.4
forest: noun forest green=.4 large=.3
tree: noun forest green=.3
river: noun forest=.3 blue=.4
mountain: noun large=.8 forest=.3
garden: noun forest=.6 green=.4
grass: noun forest=.6 green=.6
flower: noun forest=.5 red=.3
sea: noun blue=.6
sky: noun blue=.6
moon: noun white=.4
sun: noun good=.3
car: noun vehicle fast=.4
train: noun vehicle fast=.3
bus: noun vehicle
ship: noun vehicle large=.4
boat: noun vehicle
plane: noun vehicle fast=.6
apple: noun food red=.4
bread: noun food
cake: noun food good=.3
cheese: noun food
milk: noun food white=.5
knife: noun object crime=.4 steel=.5 damage=.3
sword: noun object steel=.6 royalty=.2 damage=.3
poison: noun crime=.7 chemistry=.5
key: noun object
book: noun object
letter: noun object=.6 communication=.4
box: noun object
ball: noun object
door: noun object
window: noun object
ring: noun object royalty=.3
crown: noun object royalty
wand: noun object wizard
spell: noun wizard
potion: noun wizard=.7 chemistry=.5
orders: noun communication=.6 royalty=.2
night: noun black=.6
morning: noun old=-.3
murder: noun crime damage=.5
blood: noun medicine=.5 red=.6 crime=.3
story: noun communication=.5

crashed: verb damage motion=.6
broke: verb damage
burned: verb damage red=.3
killed: verb damage crime
attacked: verb damage=.8 good=-.3
ate: verb damage=.5 food
removed: verb possession=-.5 damage=.3
roamed: verb motion forest=.3
ran: verb motion fast=.5
walked: verb motion
flew: verb motion
drove: verb motion vehicle=.6
swam: verb motion blue=.3
climbed: verb motion
chased: verb motion fast=.3
visited: verb motion=.6
dug: verb motion=.4 forest=.3
arrived: verb motion=.7
saw: verb perception
watched: verb perception
heard: verb perception
found: verb perception=.6 possession=.4
examined: verb perception medicine=.4
measured: verb perception=.6 chemistry=.5
met: verb perception=.5 communication=.5
guarded: verb perception=.4 royalty=.2
took: verb possession
take: verb possession
had: verb possession
has: verb possession
bought: verb possession
stole: verb possession crime
gave: verb possession=.8 communication=.3
want: verb possession=.5
wanted: verb possession=.5
said: verb communication
told: verb communication
read: verb communication=.6 perception=.4
sang: verb communication good=.3
cast: verb communication=.4 wizard=.8
obey: verb communication=.6
obeyed: verb communication=.6
ordered: verb communication royalty=.4
ruled: verb royalty
crowned: verb royalty
loved: verb good=.6
hated: verb good=-.6
pet: verb good=.5 animal=.3
built: verb building=.6
made: verb
protected: verb good=.4
slept: verb fast=-.5
was: verb
is: verb
were: verb
are: verb

je: pronoun
ne: function
veux: verb possession=.5
pas: function
le: pronoun
caresser: verb good=.5 animal=.3

given: verb possession=.8 communication=.3
"""
FRENCH = ["je", "ne", "veux", "pas", "le", "caresser"]  # only for the cross-attention example


def _parse(text: str) -> dict[str, dict[str, float]]:
    lex: dict[str, dict[str, float]] = {}
    for line in text.strip().splitlines():
        line = line.strip()
        if not line:
            continue
        word, _, rest = line.partition(": ")
        feats: dict[str, float] = {}
        for item in rest.split():
            name, _, w = item.partition("=")
            if name not in FEATURE_INDEX:
                raise ValueError(f"lexicon: unknown feature {name!r} for {word!r}")
            feats[name] = float(w) if w else 1.0
        if word in lex:
            raise ValueError(f"lexicon: {word!r} twice")
        lex[word] = feats
    return lex


LEXICON: dict[str, dict[str, float]] = _parse(_LEXICON)
VOCAB: list[str] = list(LEXICON)
WORD_INDEX = {w: i for i, w in enumerate(VOCAB)}


def features(word: str) -> dict[str, float]:
    return LEXICON[word]


def pos_of(word: str) -> str:
    """The word's part of speech: its strongest POS feature."""
    f = LEXICON[word]
    return max(POS, key=lambda p: f.get(p, 0.0))


def is_(word: str, feature: str, threshold: float = 0.5) -> bool:
    return LEXICON[word].get(feature, 0.0) >= threshold


@lru_cache(maxsize=None)
def feature_matrix() -> np.ndarray:
    """[vocab, n_features] in feature units."""
    F = np.zeros((len(VOCAB), N_FEAT))
    for w, feats in LEXICON.items():
        for name, val in feats.items():
            F[WORD_INDEX[w], FEATURE_INDEX[name]] = val
    return F


# --- meaning vectors and embeddings ---------------------------------------------------------------
# A word's meaning vector is [its features (N_FEAT), its identity code (N_IDENT)], in feature units.

N_MEANING = N_FEAT + N_IDENT


@lru_cache(maxsize=None)
def _basis() -> np.ndarray:
    """A fixed random orthogonal matrix [D_MODEL, D_MODEL]: its first N_FEAT columns are the named
    directions, the next N_IDENT hold the identity codes, the last N_POS the position code."""
    rng = np.random.default_rng(ROTATION_SEED)
    q, r = np.linalg.qr(rng.standard_normal((D_MODEL, D_MODEL)))
    return q * np.sign(np.diag(r))  # the unique QR with a positive diagonal in R


@lru_cache(maxsize=None)
def meaning_matrix() -> np.ndarray:
    """[vocab, N_MEANING]: features then identity code, in feature units."""
    rng = np.random.default_rng(ROTATION_SEED + 1)
    ident = rng.standard_normal((len(VOCAB), N_IDENT))
    ident *= IDENT_NORM / np.linalg.norm(ident, axis=1, keepdims=True)
    return np.concatenate([feature_matrix(), ident], axis=1)


def directions() -> np.ndarray:
    """[n_features, d_model]: the unit vector of each named feature (rows, in FEATURES order)."""
    return _basis()[:, :N_FEAT].T.copy()


def meaning_to_embedding(m: np.ndarray) -> np.ndarray:
    """Meaning vectors [..., N_MEANING] (or features only, [..., N_FEAT]) -> embedding space."""
    m = np.asarray(m)
    return SCALE * m @ _basis()[:, : m.shape[-1]].T


def token_embeddings() -> np.ndarray:
    """W_E [vocab, d_model]: each word's meaning vector through the fixed rotation."""
    return meaning_to_embedding(meaning_matrix())


def position_embeddings(n_ctx: int = N_CTX) -> np.ndarray:
    """W_pos [n_ctx, d_model]: a sinusoidal code in the position subspace only."""
    t = np.arange(n_ctx)[:, None] * POS_FREQS[None, :]
    code = np.empty((n_ctx, N_POS))
    code[:, 0::2], code[:, 1::2] = np.cos(t), np.sin(t)
    code *= POS_NORM / np.sqrt(N_POS // 2)
    return SCALE * code @ _basis()[:, N_MEANING:].T


# --- the rules the heads learn ----------------------------------------------------------------------

HEAD_NAMES = ["adjectives → nouns", "sense from context", "previous token", "verb → object"]
# the same roles as language-neutral ids (scenes name them from their catalogs)
HEAD_ROLES = ["adjective_noun", "sense_from_context", "previous_token", "verb_object"]
HEAD_RULES = [
    "a noun looks at the adjectives among the three words before it and takes on their qualities "
    "(size, colour, texture, age, speed, good or bad); with none there it looks at itself",
    "an ambiguous word looks at the earlier words that hint at one of its senses and moves toward that "
    "sense: mole toward animal, chemistry (quantity; numbers count) or medicine; tower toward paris or "
    "steel (hints anywhere before it) and toward small or large (size adjectives among the three "
    "words before it); harry toward wizard or royalty; seal toward animal or royalty. Every other word, and an "
    "ambiguous word with no hint, looks at itself (and so sharpens its own sense)",
    "every word looks at the word just before it and takes on half of its part of speech",
    "a noun or pronoun looks at the nearest verb or punctuation mark among the eight words before it and "
    "takes on what the verb does to it (damage, motion, perception, possession, communication); "
    "with none there it looks at itself",
]
IDENTITY_NOTE = "Every head also passes on the identity code of the word it looks at"

SENSES = {  # ambiguous word -> its senses
    "mole": ["animal", "chemistry", "medicine"],
    "tower": ["paris", "steel", "small", "large"],
    "harry": ["wizard", "royalty"],
    "seal": ["animal", "royalty"],
}
NEAR_SENSES = {"small", "large"}  # hints for these: adjectives among the three words before
ADJ_WINDOW = 3
VERB_WINDOW = 8

GAINS = {"adjectives": 1.5, "sense": 2.0, "size": 1.5, "previous": 0.5, "verb": 1.5, "identity": 1.0}


@lru_cache(maxsize=None)
def _word_tables() -> dict[str, np.ndarray]:
    F = feature_matrix()

    def has(f):
        return F[:, FEATURE_INDEX[f]] >= 0.5

    amb = has("ambiguous")
    n = len(VOCAB)
    far, near = np.zeros((n, n), bool), np.zeros((n, n), bool)
    for word, senses in SENSES.items():
        for s in senses:
            cue = (has(s) | (has("number") if s == "chemistry" else False)) & ~amb
            if s in NEAR_SENSES:
                near[WORD_INDEX[word]] |= cue & has("adjective")
            else:
                far[WORD_INDEX[word]] |= cue
    return {
        "noun": has("noun"), "adjective": has("adjective"), "object": has("noun") | has("pronoun"),
        "verb_or_stop": has("verb") | has("punctuation"),
        "far_cue": far, "near_cue": near | far,
    }


def target_patterns(tokens: list[str]) -> np.ndarray:
    """[n_heads, n, n] (query, key): where each head should look, by the world's rules."""
    T = _word_tables()
    ids = np.array([WORD_INDEX[t] for t in tokens])
    n = len(ids)
    d = np.arange(n)[:, None] - np.arange(n)[None, :]  # query position minus key position
    before = d >= 1
    near = before & (d <= ADJ_WINDOW)
    P = np.zeros((4, n, n), bool)
    P[0] = T["noun"][ids][:, None] & T["adjective"][ids][None, :] & near
    P[1] = (T["far_cue"][ids][:, ids] & before) | (T["near_cue"][ids][:, ids] & near)
    P[2] = d == 1
    cand = T["object"][ids][:, None] & T["verb_or_stop"][ids][None, :] & before & (d <= VERB_WINDOW)
    rows = np.nonzero(cand.any(1))[0]
    P[3, rows, n - 1 - np.argmax(cand[rows, ::-1], axis=1)] = True  # the nearest one only
    diag = np.arange(n)
    P[:, diag, diag] |= ~P.any(-1)  # nothing to look at: look at yourself
    P = P.astype(float)
    return P / P.sum(-1, keepdims=True)


@lru_cache(maxsize=None)
def value_maps() -> np.ndarray:
    """[n_heads, N_MEANING, N_MEANING]: what each head writes per unit of attention on a token, as a
    linear map of the attended token's meaning vector m (out = m @ M), in feature units."""
    M = np.zeros((4, N_MEANING, N_MEANING))
    ix = FEATURE_INDEX
    for q in QUALITIES:
        M[0, ix[q], ix[q]] = GAINS["adjectives"]
    for s in ["animal", "chemistry", "medicine", "paris", "steel", "wizard", "royalty"]:
        M[1, ix[s], ix[s]] = GAINS["sense"]
    M[1, ix["number"], ix["chemistry"]] = GAINS["sense"]  # a number before "mole": the unit of quantity
    for a, b in (("small", "large"), ("large", "small")):
        M[1, ix[a], ix[a]] = GAINS["size"]
        M[1, ix[a], ix[b]] = -GAINS["size"]  # toward small is away from large
    for p in POS:
        M[2, ix[p], ix[p]] = GAINS["previous"]
    for e in EFFECTS:
        M[3, ix[e], ix[e]] = GAINS["verb"]
    ident = np.arange(N_FEAT, N_MEANING)
    M[:, ident, ident] = GAINS["identity"]
    return M


def target_updates(tokens: list[str]) -> np.ndarray:
    """[n_heads, n, d_model]: each head's target ΔE for each token, in embedding space."""
    m = meaning_matrix()[[WORD_INDEX[t] for t in tokens]]
    return meaning_to_embedding((target_patterns(tokens) @ m) @ value_maps())


# --- examples and the held-out set --------------------------------------------------------------

EXAMPLES: dict[str, str] = {
    "fluffy_blue_creature": "a fluffy blue creature roamed the verdant forest",
    "tiny_red_fox": "the tiny red fox saw a huge green tower",
    "mole_animal": "american shrew mole",
    "mole_chemistry": "one mole of carbon dioxide",
    "mole_medicine": "take a biopsy of the mole",
    "tower": "tower",
    "eiffel_tower": "eiffel tower",
    "miniature_eiffel_tower": "miniature eiffel tower",
    "robot": "robot must obey orders",
    "harry_wizard": "the wizard harry cast a magic spell",
    "harry_royal": "prince harry met the queen at the palace",
    "crashed_car": "they crashed the car",
    "murder_mystery": ("the butler had a knife . the maid saw blood in the kitchen . the cook was "
                       "asleep in the garden . therefore the murderer was"),
    "pet_it": "i do not want to pet it",
    "pet_it_french": "je ne veux pas le caresser",  # the same sentence in French, for cross-attention
    "long": ("the old wizard and the young prince walked through the dark forest to the ancient castle , "
             "where a fluffy white rabbit and a tiny red fox watched them from behind a huge green tree , "
             "and the brave knight told the happy queen that the eiffel tower in paris was made of steel ."),
}

# Phrases that training never sees. More than the phrases themselves: the generator rejects every
# phrase in which any of their rule pairs occurs (an adjective in front of a noun, a hint in front
# of an ambiguous word; see `held_out_pairs`), so these are new combinations for the model.
HELD_OUT: list[str] = [
    EXAMPLES["fluffy_blue_creature"],
    EXAMPLES["tiny_red_fox"],
    "a blue fluffy creature roamed the forest",  # the flagship's adjectives in the other order
    "the verdant fluffy creature slept",
    "an ancient crimson dragon guarded the pale cottage",
    "the woolly green sheep ate a crimson apple",
    "my slow azure car crashed into the tall tree",
    "a wild hungry wolf chased the mole",
    "the rabbit and the mole",
    "three mole of salt",
    "the chemist measured twelve mole of oxygen",
    "the nurse examined the mole",
    "a medical surgery on the mole",
    "the little tower",
    "a giant steel tower",
    "a french tower",
    "the witch harry cast a spell",
    "the queen and harry",
    "the crown of harry",
    "the frog saw the seal",
    "the royal seal",
    ("the angry old troll walked through the dark verdant forest with a crimson apple , and a giant "
     "green dragon saw him from the ancient castle . the wise witch told the happy child that a huge "
     "fluffy monster ate the azure boat near the pale river in the morning . then the royal seal"),
    ("the young scientist measured five mole of gas , and the hungry black bear and the quick little "
     "mouse ran to the enormous wooden house , where the friendly nurse had a soft white cake . the old "
     "farmer saw a huge red fox . then a brave young knight drove the fast blue car into the river"),
]


def tokenize(text: str) -> list[str]:
    from .tokenizer import WordTokenizer

    return WordTokenizer(VOCAB, "toy").tokenize(text)


def rule_pairs(tokens: list[str]) -> set[tuple[int, str, str]]:
    """(head, key word, query word) for every rule target of heads 0 and 1 other than "itself"."""
    P = target_patterns(tokens)
    return {(h, tokens[j], tokens[i]) for h in (0, 1) for i, j in zip(*np.nonzero(P[h])) if i != j}


@lru_cache(maxsize=None)
def held_out_pairs() -> frozenset[tuple[int, str, str]]:
    pairs: set = set()
    for phrase in HELD_OUT:
        pairs |= rule_pairs(tokenize(phrase))
    return frozenset(pairs)


# --- the vocabulary by kind -----------------------------------------------------------------------

def vocab_groups() -> dict[str, list[str]]:
    """The words by kind, for `render.py vocab`."""
    groups: dict[str, list[str]] = {"nouns": [], "adjectives": [], "verbs": [],
                                    "determiners and function words": [], "numbers": [], "punctuation": []}
    kind = {"noun": "nouns", "adjective": "adjectives", "verb": "verbs", "number": "numbers",
            "punctuation": "punctuation"}
    for w in VOCAB:
        groups[kind.get(pos_of(w), "determiners and function words")].append(w)
    return {k: sorted(v) for k, v in groups.items()}


# --- the corpus generator -------------------------------------------------------------------------

def _words(pred) -> list[str]:
    return [w for w in VOCAB if w not in FRENCH and pred(w)]


_QUALITY_ORDER = ["good", "large", "small", "old", "fast", "fluffy", "red", "green", "blue", "white", "black"]


def _adj_rank(w: str) -> int:
    """Usual English order: opinion, size, age, texture, colour, then origin and the rest."""
    f = LEXICON[w]
    present = [q for q in _QUALITY_ORDER if q in f]
    return min(_QUALITY_ORDER.index(q) for q in present) if present else len(_QUALITY_ORDER)


class Grammar:
    """Generates English-like phrases from the lexicon (seeded). The grammar is loose on purpose:
    the rules care about word kinds and distances, and the heads must learn them for any words."""

    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.dets = ["a", "the", "the", "the", "this", "that", "every", "some", "my", "his", "her",
                     "its", "our", "your", "their"]
        self.adjs = _words(lambda w: pos_of(w) == "adjective")
        self.nouns = _words(lambda w: pos_of(w) == "noun" and w not in ("paris", "france", "harry", "eiffel"))
        self.names = ["harry", "paris", "france"]
        self.animals = _words(lambda w: pos_of(w) == "noun" and is_(w, "animal") and not is_(w, "ambiguous"))
        self.chem = _words(lambda w: pos_of(w) == "noun" and is_(w, "chemistry") and not is_(w, "ambiguous"))
        self.med = _words(lambda w: is_(w, "medicine") and pos_of(w) == "noun")
        self.wiz = _words(lambda w: is_(w, "wizard") and pos_of(w) in ("noun", "adjective"))
        self.roy = _words(lambda w: is_(w, "royalty") and pos_of(w) in ("noun", "adjective"))
        self.numbers = _words(lambda w: pos_of(w) == "number")
        self.sizes = _words(lambda w: pos_of(w) == "adjective" and (is_(w, "small") or is_(w, "large")))
        self.verbs = _words(lambda w: pos_of(w) == "verb" and w not in ("was", "is", "were", "are"))
        self.preps = _words(lambda w: pos_of(w) == "preposition")
        self.subj = ["i", "you", "he", "she", "it", "we", "they"]
        self.obj = ["me", "you", "him", "her", "it", "us", "them"]

    def c(self, seq):
        return self.r.choice(seq)

    def adj_run(self, k: int) -> list[str]:
        return sorted(self.r.sample(self.adjs, k), key=_adj_rank)

    def np(self, noun: str | None = None, k: int | None = None) -> list[str]:
        r = self.r
        if noun is None:
            x = r.random()
            if x < 0.08:
                return [self.c(self.obj)]
            if x < 0.12:
                return [self.c(self.names)]
            if x < 0.17:
                return [self.c(self.numbers), self.c(self.nouns)]
            noun = self.c(self.nouns)
        if k is None:
            k = r.choices([0, 1, 2, 3], [0.3, 0.35, 0.23, 0.12])[0]
        det = [] if r.random() < 0.12 else [self.c(self.dets)]
        return det + self.adj_run(k) + [noun]

    def clause(self) -> list[str]:
        r, c = self.r, self.c
        x = r.random()
        subj = self.np() if r.random() < 0.8 else [c(self.subj)]
        if x < 0.55:
            out = subj + [c(self.verbs)] + self.np()
        elif x < 0.7:
            out = subj + [c(["must", "can", "will", "did"])] + (["not"] if r.random() < 0.3 else []) + [
                c(self.verbs)] + self.np()
        elif x < 0.8:
            out = subj + [c(["was", "is", "were", "are"])] + self.adj_run(r.choice([1, 1, 2]))
        elif x < 0.87:
            out = [c(self.subj), "do", "not", c(["want", "wanted"]), "to", c(self.verbs)] + self.np()
        else:
            out = subj + [c(self.verbs)]
        if r.random() < 0.35:
            out += [c(self.preps)] + self.np()
        if r.random() < 0.12:
            out += [c(["and", "but", "because", "then"])] + self.clause()
        return out

    def sense_phrase(self) -> list[str]:
        """A phrase around an ambiguous word, with a hint before it or without one."""
        r, c = self.r, self.c
        word = c(["mole", "mole", "mole", "tower", "tower", "tower", "harry", "seal"])
        det = [c(["the", "the", "a", "that", "his"])] if r.random() < 0.6 else []
        x = r.random()
        if word == "mole":
            if x < 0.28:
                phrase = c([[c(["american", "wild", "tiny", "hungry"]), c(self.animals)], [c(self.animals)],
                            ["the", c(self.animals), "and", "the"], ["a", c(self.animals), c(self.verbs), "the"]])
            elif x < 0.56:
                phrase = c([[c(self.numbers)], [c(self.numbers)],
                            ["the", c(["chemist", "scientist"]), c(["measured", "had", "took"]), c(self.numbers)],
                            ["a", c(["chemical", "chemist"])], [c(self.chem), "and", "the"]])
            elif x < 0.84:
                phrase = c([["take", "a", "biopsy", "of", "the"],
                            ["the", c(["doctor", "nurse"]), c(["removed", "examined", "saw"]), "the"],
                            ["a", c(self.med), "of", "the"],
                            ["the", c(["medical", "dark"]), c(self.med), "and", "the"]])
            else:
                phrase = det + self.adj_run(r.choice([0, 1]))
            phrase = phrase + [word]
            if len(phrase) > 1 and phrase[-2] in self.numbers and r.random() < 0.7:
                phrase += ["of", c(self.chem)] + ([c(self.chem)] if r.random() < 0.4 else [])
        elif word == "tower":
            pre = []
            if r.random() < 0.5:
                pre.append(c(self.sizes))
            if r.random() < 0.5:
                pre.append(c(["eiffel", "eiffel", "steel", "metal", "french", "iron"]))
            if r.random() < 0.3:
                pre.insert(0, c(self.adjs))
            phrase = (det or ["the"]) + pre + [word]
            if r.random() < 0.35:  # a size word further back is not a hint for this tower
                phrase = [c(self.dets), c(self.sizes), c(self.nouns), c(self.verbs)] + phrase
            elif r.random() < 0.15:
                phrase = [c(["paris", "france"]), c(["has", "had", "built"])] + phrase
        elif word == "harry":
            cues = c([self.wiz, self.roy, []])
            phrase = (["the"] if r.random() < 0.5 else []) + ([c(cues)] if cues else []) + [word]
        else:  # seal
            cues = c([self.animals, self.roy, []])
            phrase = (det or ["the"]) + ([c(cues)] if cues else []) + (
                ["and", "the"] if cues and r.random() < 0.4 else []) + [word]
        if r.random() < 0.5:
            phrase = phrase + [c(self.verbs)] + self.np()
        if r.random() < 0.3:
            phrase = self.np() + [c(self.verbs)] + phrase
        return phrase

    def sentence(self) -> list[str]:
        s = self.sense_phrase() if self.r.random() < 0.3 else self.clause()
        if self.r.random() < 0.2:
            s = [self.c(["therefore", "then", "and"])] + s
        return s

    def passage(self, max_len: int = N_CTX) -> list[str]:
        """One to several sentences, joined by full stops and commas, at most max_len tokens."""
        r = self.r
        target = r.choice([r.randint(3, 16)] * 5 + [r.randint(16, 40)] * 3 + [r.randint(40, max_len)] * 2)
        out: list[str] = []
        while len(out) < target:
            s = self.sentence()
            if r.random() < 0.4:
                s = s + [self.c([".", ".", ".", ",", "?", "!"])]
            if len(out) + len(s) > max_len:
                break
            out += s
        return out or self.sentence()[:max_len]


def corpus(n: int, seed: int = 0, max_len: int = N_CTX) -> list[list[str]]:
    """n generated phrases (token lists), seeded. It starts with the examples that are not held out
    and never contains a held-out rule pair."""
    banned = held_out_pairs()
    held = {tuple(tokenize(p)) for p in HELD_OUT}
    out = [tokenize(t) for t in EXAMPLES.values()]
    out = [t for t in out if tuple(t) not in held and not (rule_pairs(t) & banned)][:n]
    g = Grammar(seed)
    while len(out) < n:
        t = g.passage(max_len)
        if not (rule_pairs(t) & banned):
            out.append(t)
    return out
