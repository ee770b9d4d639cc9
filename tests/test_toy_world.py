"""The toy world (issue 3), asserted on the shipped weights in assets/toy.

Every expectation below is written from the world's rules (an adjective in front of a noun, a hint
in front of an ambiguous word), never read back from the model's own outputs.
"""

from __future__ import annotations

import functools
import json

import numpy as np
import pytest

from attention_manim.model import toy_world as tw
from attention_manim.model.errors import UnknownWordError
from attention_manim.model.loading import ASSETS, load_model

ADJ, SENSE, PREV, VERB = "adjectives → nouns", "sense from context", "previous token", "verb → object"


@pytest.fixture(scope="module")
def toy():
    return load_model("toy", device="cpu")


@pytest.fixture(scope="module")
def trace(toy):
    return functools.lru_cache(maxsize=None)(toy.trace)


def head(toy, name):
    return toy.cfg.head_names[0].index(name)


def cos(a, b):
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def mass(tr, h, query, keys, occurrence=-1):
    """Attention of `query` (a word of the sentence) on the listed key words."""
    i = tr.index_of(query, occurrence)
    cols = [j for j, t in enumerate(tr.tokens[:i]) if t in keys]
    return float(tr.head(0, h).pattern[i, cols].sum())


# --- the model and its named directions -------------------------------------------------------------

def test_four_causal_heads_with_their_roles_and_the_required_directions(toy):
    cfg = toy.cfg
    assert cfg.causal and cfg.n_layers == 1 and cfg.n_heads == 4
    assert (cfg.d_model, cfg.d_head, cfg.n_ctx) == (64, 16, 64)
    assert cfg.head_names == [[ADJ, SENSE, PREV, VERB]]
    required = ("noun adjective verb determiner animal chemistry medicine paris steel large small fluffy "
                "blue green red wizard royalty forest creature number").split()
    assert set(required) <= set(cfg.directions)
    D = toy.directions.numpy()
    np.testing.assert_allclose(D @ D.T, np.eye(len(D)), atol=1e-5)  # orthonormal named directions
    # position lives in its own subspace: it never moves a projection on a named direction
    assert np.abs(toy.W_pos.detach().numpy() @ D.T).max() < 1e-5
    # the token embeddings are the hand-designed ones
    np.testing.assert_allclose(toy.W_E.detach().numpy(), tw.token_embeddings(), atol=1e-5)
    assert "gradient descent" in cfg.notes and "HELD_OUT" in cfg.notes


def test_shipped_weights_are_small():
    assert (ASSETS / "toy" / "model.safetensors").stat().st_size < 600_000
    cfg = json.loads((ASSETS / "toy" / "config.json").read_text())
    assert cfg["vocab"] == tw.VOCAB


def test_each_word_is_described_by_known_features():
    for word, feats in tw.LEXICON.items():
        assert feats and set(feats) <= set(tw.FEATURES), word
        assert any(feats.get(p, 0) >= 0.5 for p in tw.POS), f"{word} has no part of speech"


# --- head 0: adjectives -> nouns ---------------------------------------------------------------------

def test_creature_attends_to_fluffy_and_blue_and_takes_on_their_qualities(toy, trace):
    tr = trace("a fluffy blue creature roamed the verdant forest")
    h = head(toy, ADJ)
    assert mass(tr, h, "creature", {"fluffy", "blue"}) >= 0.8
    assert mass(tr, h, "forest", {"verdant"}) >= 0.7
    d = tr.head(0, h).delta_e[tr.index_of("creature")]
    assert cos(d, tr.direction("fluffy")) >= 0.3
    assert cos(d, tr.direction("blue")) >= 0.3


# --- head 1: sense from context -------------------------------------------------------------------

SENSES3 = ["animal", "chemistry", "medicine"]


def sense_margin(tr, word, sense, senses, h):
    """cos(E', sense) minus the best other sense, for E' = E + ΔE (one head, or all when h is None)."""
    e2 = tr.updated(0, h)[tr.index_of(word)]
    c = {s: cos(e2, tr.direction(s)) for s in senses}
    return c[sense] - max(v for s, v in c.items() if s != sense)


@pytest.mark.parametrize("text,sense", [
    ("american shrew mole", "animal"),
    ("one mole of carbon dioxide", "chemistry"),
    ("take a biopsy of the mole", "medicine"),
])
def test_mole_takes_the_sense_its_context_implies(toy, trace, text, sense):
    tr = trace(text)
    assert sense_margin(tr, "mole", sense, SENSES3, head(toy, SENSE)) >= 0.2
    assert sense_margin(tr, "mole", sense, SENSES3, None) >= 0.2  # all heads together too


def test_the_three_moles_are_identical_before_attention(trace):
    trs = [trace(t) for t in ("american shrew mole", "one mole of carbon dioxide", "take a biopsy of the mole")]
    idx = [tr.index_of("mole") for tr in trs]
    assert len(set(idx)) == 3  # three different positions
    tok = [tr.token_embeddings[i] for tr, i in zip(trs, idx)]
    assert all(np.array_equal(tok[0], t) for t in tok[1:])
    full = [tr.embeddings[i] for tr, i in zip(trs, idx)]
    for tr, i, f in zip(trs, idx, full):
        np.testing.assert_allclose(f - tr.position_embeddings[i], tok[0], atol=1e-6)
    names = list(trs[0].directions)
    proj = [trs[0].project(f, names) for f in full]
    assert not np.allclose(full[0], full[1])  # they do differ, by position only
    for p in proj[1:]:
        np.testing.assert_allclose(p, proj[0], atol=1e-5)


def test_eiffel_tower_moves_toward_paris_and_miniature_toward_small(toy, trace):
    h = head(toy, SENSE)
    tr = trace("eiffel tower")
    i = tr.index_of("tower")
    assert cos(tr.head(0, h).delta_e[i], tr.direction("paris")) >= 0.3
    tr = trace("miniature eiffel tower")
    i = tr.index_of("tower")
    for hh in (h, None):
        e, e2 = tr.embeddings[i], tr.updated(0, hh)[i]
        small, large = tr.direction("small"), tr.direction("large")
        assert (e2 - e) @ small > 1.0
        assert e2 @ large < e @ large - 1.0
    assert cos(tr.head(0, h).delta_e[i], tr.direction("paris")) > 0.3  # still the Paris tower


@pytest.mark.parametrize("text,sense", [
    ("the wizard harry cast a magic spell", "wizard"),
    ("prince harry met the queen at the palace", "royalty"),
])
def test_the_two_harrys(toy, trace, text, sense):
    assert sense_margin(trace(text), "harry", sense, ["wizard", "royalty"], head(toy, SENSE)) >= 0.2


# --- generalization: phrases training never saw -------------------------------------------------

# (phrase, noun, its adjectives, qualities its update must point toward)
HELD_ADJ = [
    ("a blue fluffy creature roamed the forest", "creature", {"blue", "fluffy"}, ["blue", "fluffy"]),
    ("the verdant fluffy creature slept", "creature", {"verdant", "fluffy"}, ["green", "fluffy"]),
    ("an ancient crimson dragon guarded the pale cottage", "dragon", {"ancient", "crimson"}, ["old", "red"]),
    ("an ancient crimson dragon guarded the pale cottage", "cottage", {"pale"}, ["white"]),
    ("the woolly green sheep ate a crimson apple", "sheep", {"woolly", "green"}, ["fluffy", "green"]),
    ("the woolly green sheep ate a crimson apple", "apple", {"crimson"}, ["red"]),
    ("my slow azure car crashed into the tall tree", "car", {"slow", "azure"}, ["blue"]),
    ("my slow azure car crashed into the tall tree", "tree", {"tall"}, ["large"]),
    ("the tiny red fox saw a huge green tower", "fox", {"tiny", "red"}, ["small", "red"]),
    ("the tiny red fox saw a huge green tower", "tower", {"huge", "green"}, ["large", "green"]),
]

# (phrase, ambiguous word, the sense it must take, the senses it competes with)
HELD_SENSE = [
    ("a wild hungry wolf chased the mole", "mole", "animal", SENSES3),
    ("the rabbit and the mole", "mole", "animal", SENSES3),
    ("three mole of salt", "mole", "chemistry", SENSES3),
    ("the chemist measured twelve mole of oxygen", "mole", "chemistry", SENSES3),
    ("the nurse examined the mole", "mole", "medicine", SENSES3),
    ("a medical surgery on the mole", "mole", "medicine", SENSES3),
    ("the witch harry cast a spell", "harry", "wizard", ["wizard", "royalty"]),
    ("the queen and harry", "harry", "royalty", ["wizard", "royalty"]),
    ("the crown of harry", "harry", "royalty", ["wizard", "royalty"]),
    ("the frog saw the seal", "seal", "animal", ["animal", "royalty"]),
    ("the royal seal", "seal", "royalty", ["animal", "royalty"]),
]

LONG1, LONG2 = tw.HELD_OUT[-2], tw.HELD_OUT[-1]
# nouns of the two long held-out passages and the adjectives right in front of them
HELD_LONG = [
    (LONG1, "troll", {"angry", "old"}), (LONG1, "forest", {"dark", "verdant"}), (LONG1, "apple", {"crimson"}),
    (LONG1, "dragon", {"giant", "green"}), (LONG1, "castle", {"ancient"}), (LONG1, "witch", {"wise"}),
    (LONG1, "child", {"happy"}), (LONG1, "monster", {"huge", "fluffy"}), (LONG1, "boat", {"azure"}),
    (LONG1, "river", {"pale"}), (LONG1, "seal", {"royal"}),
    (LONG2, "scientist", {"young"}), (LONG2, "bear", {"hungry", "black"}), (LONG2, "mouse", {"quick", "little"}),
    (LONG2, "house", {"enormous", "wooden"}), (LONG2, "nurse", {"friendly"}), (LONG2, "cake", {"soft", "white"}),
    (LONG2, "farmer", {"old"}), (LONG2, "fox", {"huge", "red"}), (LONG2, "knight", {"brave", "young"}),
    (LONG2, "car", {"fast", "blue"}),
]


def test_held_out_phrases_are_in_the_world_and_long_ones_fill_the_context():
    held = {" ".join(tw.tokenize(p)) for p in tw.HELD_OUT}
    for phrase, *_ in HELD_ADJ + HELD_SENSE:
        assert " ".join(tw.tokenize(phrase)) in held
    assert 50 <= len(tw.tokenize(LONG1)) <= 64 and 50 <= len(tw.tokenize(LONG2)) <= 64


def test_training_never_saw_the_held_out_combinations():
    pairs = {(a, noun) for _, noun, adjs, _ in HELD_ADJ for a in adjs}
    pairs |= {(a, noun) for _, noun, adjs in HELD_LONG for a in adjs}
    hints = {("wolf", "mole"), ("rabbit", "mole"), ("three", "mole"), ("twelve", "mole"), ("nurse", "mole"),
             ("surgery", "mole"), ("witch", "harry"), ("queen", "harry"), ("crown", "harry"),
             ("frog", "seal"), ("royal", "seal")}
    from attention_manim.model.train import CORPUS_SIZE

    for toks in tw.corpus(CORPUS_SIZE, seed=0):
        for i, w in enumerate(toks):
            assert not any((a, w) in pairs for a in toks[max(0, i - 3):i]), " ".join(toks)
            assert not any((a, w) in hints for a in toks[:i]), " ".join(toks)


@pytest.mark.parametrize("text,noun,adjs,qualities", HELD_ADJ)
def test_adjective_rule_on_new_combinations(toy, trace, text, noun, adjs, qualities):
    tr = trace(text)
    h = head(toy, ADJ)
    assert mass(tr, h, noun, adjs) >= 0.7
    d = tr.head(0, h).delta_e[tr.index_of(noun)]
    for q in qualities:
        assert cos(d, tr.direction(q)) >= 0.3, q


@pytest.mark.parametrize("text,word,sense,senses", HELD_SENSE)
def test_sense_rule_on_new_combinations(toy, trace, text, word, sense, senses):
    assert sense_margin(trace(text), word, sense, senses, head(toy, SENSE)) >= 0.2


def test_held_out_towers(toy, trace):
    h = head(toy, SENSE)
    for text, toward in [("a french tower", "paris"), ("a giant steel tower", "steel")]:
        tr = trace(text)
        assert cos(tr.head(0, h).delta_e[tr.index_of("tower")], tr.direction(toward)) >= 0.3, text
    tr = trace("the little tower")
    i = tr.index_of("tower")
    e, e2 = tr.embeddings[i], tr.updated(0, h)[i]
    assert (e2 - e) @ tr.direction("small") > 1.0 and e2 @ tr.direction("large") < e @ tr.direction("large")
    # a size word further back belongs to another noun: the huge green tower is not tiny
    tr = trace("the tiny red fox saw a huge green tower")
    assert mass(tr, h, "tower", {"huge"}) >= 0.7


def test_rules_hold_across_long_held_out_passages(toy, trace):
    h = head(toy, ADJ)
    for text, noun, adjs in HELD_LONG:
        assert mass(trace(text), h, noun, adjs) >= 0.7, (noun, adjs)
    # deep into the passage, the sense head still reads its hints: a royal seal, five mole of gas
    assert sense_margin(trace(LONG1), "seal", "royalty", ["animal", "royalty"], head(toy, SENSE)) >= 0.2
    assert sense_margin(trace(LONG2), "mole", "chemistry", SENSES3, head(toy, SENSE)) >= 0.2
    # and the previous-token head stays on the previous token at every position
    for text in (LONG1, LONG2):
        p = trace(text).head(0, head(toy, PREV)).pattern
        assert np.diag(p, -1).min() >= 0.8


# --- heads 2 and 3 --------------------------------------------------------------------------------

@pytest.mark.parametrize("key", ["robot", "long", "murder_mystery", "pet_it"])
def test_previous_token_head(toy, trace, key):
    p = trace(tw.EXAMPLES[key]).head(0, head(toy, PREV)).pattern
    assert np.diag(p, -1).min() >= 0.8


def test_verb_to_object_head(toy, trace):
    h = head(toy, VERB)
    assert mass(trace("they crashed the car"), h, "car", {"crashed"}) >= 0.7
    assert mass(trace("robot must obey orders"), h, "orders", {"obey"}) >= 0.7
    assert mass(trace("i do not want to pet it"), h, "it", {"pet"}) >= 0.7
    tr = trace("they crashed the car")
    assert cos(tr.head(0, h).delta_e[tr.index_of("car")], tr.direction("damage")) >= 0.5


def test_next_token_logits_follow_the_grammar(trace):
    """After a determiner come adjectives and nouns; after "do not" comes "want"."""
    groups = tw.vocab_groups()
    vocab = tw.VOCAB

    def probs(text):
        logits = trace(text).logits[-1]
        p = np.exp(logits - logits.max())
        return p / p.sum()

    content = [vocab.index(w) for w in groups["nouns"] + groups["adjectives"]]
    for text in ("the", "a fluffy", "the murderer saw the"):
        assert probs(text)[content].sum() >= 0.7, text
    p = probs("i do not")
    assert p[vocab.index("want")] + p[vocab.index("wanted")] >= 0.5


# --- readable numbers ------------------------------------------------------------------------------

def test_numbers_on_screen_are_readable(trace):
    texts = [tw.EXAMPLES[k] for k in ("fluffy_blue_creature", "tiny_red_fox", "mole_chemistry", "harry_royal", "long")]
    arrays = {"embedding": [], "q": [], "k": [], "v": []}
    for t in texts:
        tr = trace(t)
        arrays["embedding"].append(tr.embeddings.ravel())
        for ht in tr.layers[0].heads:
            for name in ("q", "k", "v"):
                arrays[name].append(getattr(ht, name).ravel())
    for name, parts in arrays.items():
        a = np.concatenate(parts)
        assert np.mean(np.abs(a) <= 10) >= 0.9, name
        assert np.mean(np.abs(a) >= 0.05) >= 0.7, name  # not 0.0 at one decimal


# --- words, case and punctuation --------------------------------------------------------------------

def test_every_example_is_in_the_vocabulary():
    for key, text in tw.EXAMPLES.items():
        assert tw.tokenize(text), key
    assert 50 <= len(tw.tokenize(tw.EXAMPLES["long"])) <= 64
    mystery = tw.tokenize(tw.EXAMPLES["murder_mystery"])
    assert mystery[-4:] == ["therefore", "the", "murderer", "was"] and mystery.count(".") >= 2


def test_vocab_groups_cover_every_word_once():
    groups = tw.vocab_groups()
    words = [w for ws in groups.values() for w in ws]
    assert sorted(words) == sorted(tw.VOCAB)
    assert "creature" in groups["nouns"] and "fluffy" in groups["adjectives"] and "roamed" in groups["verbs"]
    assert "the" in groups["determiners and function words"] and "one" in groups["numbers"]
    assert "." in groups["punctuation"]
    assert 150 <= len(tw.VOCAB) <= 320


def test_unknown_words_are_named(toy):
    with pytest.raises(UnknownWordError) as err:
        toy.trace("the flibbertigibbet saw a wug and a wug")
    assert err.value.words == ["flibbertigibbet", "wug"]
    assert "flibbertigibbet" in str(err.value) and "wug" in str(err.value)


def test_case_and_punctuation(toy, trace):
    a = toy.trace("A Fluffy BLUE creature; roamed the Verdant forest!")
    b = trace("a fluffy blue creature roamed the verdant forest !")
    assert a.tokens == b.tokens and a.tokens[-1] == "!"
    np.testing.assert_allclose(a.head(0, 0).pattern, b.head(0, 0).pattern)
    assert toy.trace("Eiffel Tower.").tokens == ("eiffel", "tower", ".")


# --- training ---------------------------------------------------------------------------------------

def test_training_is_deterministic(tmp_path):
    from attention_manim.model.train import train

    def run(seed, name):
        m = train(seed=seed, steps=4, out=tmp_path / name, progress=False, corpus_size=40)
        return {k: v.clone() for k, v in m.state_dict().items()}

    a, b, c = run(0, "a"), run(0, "b"), run(1, "c")
    assert a.keys() == b.keys()
    assert all(np.array_equal(a[k].numpy(), b[k].numpy()) for k in a)
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()
    assert not np.array_equal(a["blocks.0.W_Q"].numpy(), c["blocks.0.W_Q"].numpy())
