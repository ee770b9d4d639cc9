"""Heads measured on probes (model/probes.py), `render.py heads`, and what scenes say about a head
the model names no role for (scenes/plans/honesty.py)."""

from __future__ import annotations

import dataclasses
import functools
import json

import numpy as np
import pytest

from attention_manim.model import probes
from attention_manim.model.probes import STANDARD, STORY, STORY_PROBES

from .test_cli import run_cli


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    """Measurements are cached on disk: keep the tests' out of the user's cache folder."""
    monkeypatch.setenv("ATTENTION_MANIM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(probes, "_MEMORY", {})


@pytest.fixture(scope="module")
def toy_heads(toy_model):
    return probes.measure(toy_model)


# --- the probes, recomputed here from the patterns ------------------------------------------------

def test_the_toys_named_heads_come_out_on_top_of_their_roles(toy_model, toy_heads):
    named = toy_model.info.roles
    assert set(named) == {"adjective_noun", "sense_from_context", "previous_token", "verb_object"}
    found = probes.roles_from(toy_heads)
    for role, (layer, head) in named.items():
        assert found[role] == (layer, head), role
        hs = next(h for h in toy_heads if (h.layer, h.head) == (layer, head))
        assert hs.role == role  # its best probe is its own role
        others = [probes.role_score(h, role) for h in toy_heads if (h.layer, h.head) != (layer, head)]
        assert probes.role_score(hs, role) > max(others) + 0.3, role  # clearly on top


def test_standard_scores_match_the_patterns_recomputed_independently(toy_model, toy_heads):
    # the same sequences the module draws: words the toy knows, distinct, said twice
    L = probes.LENGTH
    pool = [toy_model.cfg.vocab.index(w) for w in probes.PROBE_WORDS if w in toy_model.cfg.vocab]
    assert pool == probes.probe_ids(toy_model)
    rng = np.random.default_rng(probes.SEED)
    seqs = []
    for _ in range(probes.N_SEQUENCES):
        ids = [pool[k] for k in rng.choice(len(pool), size=L, replace=False)]
        assert len(set(ids)) == L
        seqs.append(ids + ids)
    sums = {}
    for ids in seqs:
        tr = toy_model.trace_ids(ids)
        assert list(tr.token_ids) == ids
        for h in range(toy_model.info.n_heads):
            p = tr.head(0, h).pattern
            got = sums.setdefault(h, {k: 0.0 for k in STANDARD})
            got["previous_token"] += np.mean([p[i, i - 1] for i in range(2, 2 * L)])  # not onto token 0
            got["first_token"] += np.mean([p[i, 0] for i in range(1, 2 * L)])
            got["induction"] += np.mean([p[i, i - L + 1] for i in range(L, 2 * L)])
            got["same_word"] += np.mean([p[i, i - L] for i in range(L + 1, 2 * L)])  # not onto token 0
    for hs in toy_heads:
        for k in STANDARD:
            assert hs.scores[k] == pytest.approx(sums[hs.head][k] / len(seqs), abs=2e-6), (hs.head, k)
            assert 0.0 <= hs.scores[k] <= 1.0


def test_story_scores_are_the_weight_on_the_cue_words(toy_model, toy_heads):
    for hs in toy_heads:
        for role in STORY:
            want = []
            for pr in STORY_PROBES[role]:
                words = pr.text.split()
                tr = toy_model.trace(pr.text)
                assert list(tr.tokens) == words  # the toy: one token per word
                q = max(i for i, w in enumerate(words) if w == pr.query)
                cues = [i for i, w in enumerate(words[:q]) if w in pr.cues]
                assert cues and all(0 < c < q - 1 for c in cues)  # never the first word nor the one just before
                want.append(tr.head(0, hs.head).pattern[q, cues].sum())
            assert hs.story[role] == pytest.approx(np.mean(want), abs=2e-6)
            assert 0.0 <= hs.story[role] <= 1.0


def test_measuring_is_deterministic_and_cached_on_disk(toy_model, tmp_path, toy_heads):
    again = probes.measure(toy_model)
    assert [h.to_dict() for h in again] == [h.to_dict() for h in toy_heads]
    first = probes.measured_heads(toy_model)
    files = list((tmp_path / "cache" / "probes").glob("*.json"))
    assert len(files) == 1
    probes._MEMORY.clear()
    stored = json.loads(files[0].read_text())
    assert stored["probe_version"] == probes.PROBE_VERSION
    assert probes.measured_heads(toy_model) == first  # read back bit for bit
    assert probes.measured_roles(toy_model) == probes.roles_from(first)


def test_the_cache_key_follows_the_weights(toy_model):
    import copy

    import torch

    key = probes.weights_identity(toy_model)
    assert key == probes.weights_identity(toy_model)
    other = copy.deepcopy(toy_model)
    with torch.no_grad():
        other.blocks[0].W_Q.mul_(1.5)
    assert probes.weights_identity(other) != key


def test_a_standard_role_needs_a_head_that_does_it():
    H = probes.HeadScores
    weak = [H(0, 0, dict.fromkeys(STANDARD, 0.1), dict.fromkeys(STORY, 0.05), ""),
            H(0, 1, {**dict.fromkeys(STANDARD, 0.1), "first_token": 0.8}, dict.fromkeys(STORY, 0.02), "first_token")]
    roles = probes.roles_from(weak)
    assert roles["first_token"] == (0, 1)
    assert "induction" not in roles and "previous_token" not in roles  # nobody reaches ROLE_MIN
    assert roles["adjective_noun"] == (0, 0)  # a story role always gets its best head


# --- render.py heads -------------------------------------------------------------------------------

def test_heads_json_schema(capsys, toy_model):
    code, out, err = run_cli(capsys, "heads", "--json")
    assert code == 0, err
    rows = json.loads(out)
    info = toy_model.info
    assert [(r["layer"], r["head"]) for r in rows] == [(l, h) for l in range(info.n_layers) for h in range(info.n_heads)]
    for r in rows:
        assert set(r) >= {"layer", "head", "scores", "role"}
        assert set(r["scores"]) == set(STANDARD)
        assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in r["scores"].values())
        assert set(r["story_scores"]) == set(STORY)
        assert r["role"] is None or r["role"] in STANDARD + STORY
    by = {(r["layer"], r["head"]): r for r in rows}
    assert by[tuple(info.roles["previous_token"])]["role"] == "previous_token"


@pytest.mark.parametrize("lang", ["en", "ko", "pt"])
def test_heads_table_in_every_language(capsys, lang):
    from attention_manim.scenes.i18n import Say

    say = Say(lang)
    code, out, err = run_cli(capsys, "heads", "--lang", lang)
    assert code == 0, err
    lines = out.splitlines()
    header = next(line for line in lines if say("cli.heads.columns.previous_token") in line)
    for k in STANDARD + STORY:
        assert say(f"cli.heads.columns.{k}") in header
    assert say("cli.heads.roles.previous_token") in out
    assert say("cli.heads.defaults") in out
    if lang != "en":
        assert "previous token" not in out and "layer" not in out


def test_heads_user_errors_exit_2(capsys, tmp_path):
    code, _, err = run_cli(capsys, "heads", "--model", str(tmp_path / "nowhere"))
    assert code == 2 and "Traceback" not in err
    code, _, err = run_cli(capsys, "heads", "--lang", "xx")
    assert code == 2 and "xx" in err


# --- scenes: default heads by measurement, honest notes for heads without a role ----------------

def test_resolve_takes_roles_from_the_models_info(make_inputs, toy_model):
    from attention_manim.scenes.setting import resolve

    info = dataclasses.replace(toy_model.info, roles={"adjective_noun": (0, 2)})
    inputs = make_inputs()
    inputs.model = info
    s = resolve(inputs, examples=("fluffy_blue_creature",), role="adjective_noun")
    assert (s.head.layer, s.head.head) == (0, 2)


def unnamed(trace, sink: float = 0.0):
    """`trace` with every head's name taken away (a stand-in for a real model) and, with `sink`,
    that share of every query's attention moved onto the first token."""
    layers = []
    for lt in trace.layers:
        heads = []
        for h in lt.heads:
            p = h.pattern.copy()
            p[1:] *= 1.0 - sink
            p[1:, 0] += sink
            heads.append(dataclasses.replace(h, pattern=p, role=""))
        layers.append(dataclasses.replace(lt, heads=tuple(heads)))
    return dataclasses.replace(trace, layers=tuple(layers))


@pytest.fixture
def unnamed_inputs(toy_model, tracer):
    from attention_manim.scenes.setting import SceneInputs

    def make(sink=0.0, **kw):
        t = functools.lru_cache(maxsize=None)(lambda s: unnamed(tracer(s), sink))
        return SceneInputs(tracer=t, model=toy_model.info, **kw)

    return make


def first_share(trace, layer, head, q):
    return float(trace.head(layer, head).pattern[q, 0])


@pytest.mark.parametrize("sink", [0.0, 0.6])
def test_chapters_name_what_an_unnamed_head_really_does(unnamed_inputs, sink):
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.lessons import ATTENTION_PATTERN, SOFTMAX, VALUES
    from attention_manim.scenes.plans.honesty import note_text

    for lesson in (ATTENTION_PATTERN, SOFTMAX, VALUES):
        s = lesson.lesson.setting(unnamed_inputs(sink=sink))
        plan = lesson.lesson.plans(s)[0]
        tr, L, H = s.trace, s.head.layer, s.head.head
        q = plan.honesty.focus
        assert q == s.focus_index()
        share = first_share(tr, L, H, q)
        if share >= 0.5:
            assert plan.honesty.note.startswith("real.note.first_token")
            for lang in ("en", "ko", "pt"):
                text = note_text(Say(lang), plan.honesty, tr.tokens)
                assert Say(lang).number(share, ".2f") in text and tr.tokens[0] in text
                # the other keys are named with their real weights ("get the most" beside 0.32 and 0.08
                # read as the toy's story)
                w = tr.head(L, H).pattern[q]
                for j in plan.honesty.others:
                    assert tr.tokens[j] in text and Say(lang).number(float(w[j]), ".2f") in text
                # the keys it names not come with their weights as drawn (one by its name: "0.44 − 0.32 −
                # 0.08 = 0.04" had stood beside a drawn 0.05), and the remaining share reads "≈" exactly
                # where the parts as written add up to another figure
                if "rest" in plan.honesty.params:
                    say = Say(lang)
                    unnamed = [j for j in range(1, q + 1) if j not in plan.honesty.others and round(float(w[j]), 2) >= 0.01]
                    parts = [round(float(w[j]), 2) for j in plan.honesty.others]
                    if len(unnamed) == 1:
                        assert say("real.note.other_item", word=say.quote(tr.tokens[unnamed[0]]), weight=float(w[unnamed[0]])) in text
                        parts.append(round(float(w[unnamed[0]]), 2))
                    elif unnamed:
                        parts.append(round(sum(round(float(w[j]), 2) for j in unnamed), 2))
                    rest = say.number(1.0 - share, ".2f")
                    approx = round(sum(parts), 2) != round(1.0 - share, 2)
                    assert (f"≈{rest}" in text) == approx and rest in text, (text, parts)
        else:
            assert plan.honesty.note != "real.note.first_token"


def test_the_default_focus_of_an_unnamed_head_skips_the_first_token(unnamed_inputs, tracer):
    from attention_manim.scenes.lessons import ATTENTION_PATTERN

    s = ATTENTION_PATTERN.lesson.setting(unnamed_inputs(sink=0.6))
    p = s.head_trace().pattern.copy()
    np.fill_diagonal(p, 0)
    p[:, 0] = 0  # weight on the first token is not gathering
    best = max(range(len(p)), key=lambda i: (round(p[i].sum(), 1), int((p[i] >= 0.1).sum()), -i))
    assert s.focus_index() == best
    assert s.trace.tokens[best] == "creature"


def test_named_heads_get_no_note(make_inputs):
    from attention_manim.scenes.lessons import ATTENTION_PATTERN, SOFTMAX, VALUES

    for lesson in (ATTENTION_PATTERN, SOFTMAX, VALUES):
        plan = lesson.lesson.plans(lesson.lesson.setting(make_inputs()))[0]
        assert plan.honesty.note is None


def test_an_unnamed_heads_keys_do_not_claim_a_meaning(unnamed_inputs):
    from attention_manim.scenes.lessons import KEY

    s = KEY.lesson.setting(unnamed_inputs(sink=0.6))
    plan = KEY.lesson.plans(s)[0]
    for t, answer in zip(plan.tops, plan.answers):
        if t == 0:
            assert answer == "qkv.lines.first_token.answer"
        elif t == plan.focus - 1:
            assert answer == "qkv.lines.previous_token.answer"
        elif t == plan.focus:
            assert answer == "qkv.lines.self.answer"
        else:
            assert answer == "qkv.lines.neutral.answer"
    assert 0 in plan.tops


@pytest.mark.render
@pytest.mark.parametrize("lang", ["ko", "pt"])
def test_pattern_shows_the_note_on_screen(unnamed_inputs, render_scene, lang):
    from attention_manim.scenes.lessons import ATTENTION_PATTERN

    scene, frame = render_scene(ATTENTION_PATTERN, unnamed_inputs(sink=0.6, lang=lang), size=(256, 144))
    drawn = scene.stage.drawn["pattern"]
    note = drawn["honest"]
    assert note in scene.mobjects
    assert drawn["honest_text"] in [t for t, _ in scene.caption_log]
    full = scene.stage.region("full")
    assert note.get_bottom()[1] >= full.bottom - 0.1 - 1e-6 and note.get_top()[1] <= drawn["note"].get_bottom()[1] + 1e-6
    assert note.width <= full.width + 1e-6
    # the note takes the word row's place (the grid's labels name the tokens): the grid keeps its size
    assert not scene.plans[0].word_row and scene.stage.words is None


# --- SmolLM2: probes on a real model, and lessons that say what its heads really do ---------------

@pytest.fixture(scope="session")
def smol(smollm2_model):
    """SmolLM2 loaded once, with its measured roles and a cached tracer (the user's cache folder,
    as the command line uses it: later sessions read the dequantized weights and the measurements)."""
    model = smollm2_model
    from attention_manim.model.session import ModelSession

    session = ModelSession(model, "smollm2")
    heads = probes.measured_heads(model)
    return model, session.info, session, heads


def smol_inputs(smol, **kw):
    from attention_manim.scenes.setting import SceneInputs

    model, info, tracer, _ = smol
    return SceneInputs(tracer=tracer, model=info, **kw)


def test_smollm2_heads_measured(smol):
    model, info, _, heads = smol
    assert len(heads) == 30 * 9
    by = {(h.layer, h.head): h for h in heads}
    roles = probes.roles_from(heads)
    assert info.roles == roles  # the scenes' default heads are the measured ones
    for role, (layer, head) in roles.items():
        assert probes.role_score(by[(layer, head)], role) == max(probes.role_score(h, role) for h in heads)
    # a real model has clean previous-token and induction heads, and many heads resting on the first token
    assert probes.role_score(by[roles["previous_token"]], "previous_token") > 0.8
    assert probes.role_score(by[roles["induction"]], "induction") > 0.6
    assert roles["induction"][0] > roles["previous_token"][0] - 10  # induction sits in the middle layers
    assert np.mean([h.scores["first_token"] for h in heads]) > 0.4
    # on an ordinary sentence, the first token takes a large share of all attention
    tr = model.trace(model.info.examples["fluffy_blue_creature"])
    mean_first = np.mean([tr.head(l, h).pattern[1:, 0].mean() for l in range(30) for h in range(9)])
    assert mean_first > 0.4


@pytest.mark.parametrize("sentence", [None, "The cat sat on the mat because it was tired"])
def test_every_lesson_plans_on_smollm2(smol, sentence):
    from attention_manim.scenes.registry import load_all

    for name, cls in sorted(load_all().items()):
        if name == "context_size" and sentence is None:
            continue  # the longest; its own test below
        if name == "cross_attention" and sentence is not None:
            continue  # takes an "english | french" pair in its own vocabulary (tests/test_cross_attention.py)
        inputs = smol_inputs(smol, sentences=[sentence] if sentence else None,
                             focus=None if sentence is None or cls.lesson.name not in ("mole", "eiffel_tower")
                             else "mat")
        plans = cls.lesson.plans(cls.lesson.setting(inputs))
        assert plans, name


def expected_note(trace, layer, head, focus):
    """The note the rule of scenes/plans/honesty.py asks for, from the pattern alone."""
    p = trace.head(layer, head).pattern
    w = p[focus]
    if focus == 0:
        return None
    if w[0] >= 0.5:
        return "first_token"
    if p[1:, 0].mean() >= 0.4:
        return "first_token_sentence"
    if w[focus] >= 0.5:
        return "self"
    if w[focus - 1] >= 0.5:
        return "previous"
    return None


def smol_focus(trace, layer, head, story=None):
    """The default focus for a head without a name: the story's word (`story`, the head picked for its
    role) when it is one token; else among the whole words (one token each; else the tokens that end a
    word), the one that gathers the most from other words than its own and the first token (one
    decimal), ties to more keys ≥ 0.1, then earlier."""
    w = list(trace.word_of_token)
    if story is not None and w.count(w[trace.index_of(story)]) == 1:
        return trace.index_of(story)
    p = trace.head(layer, head).pattern.copy()
    n = len(p)
    for i in range(n):
        for j in range(n):
            if w[i] == w[j] or j == 0:
                p[i, j] = 0
    ends = [i for i in range(n) if i == n - 1 or w[i + 1] != w[i]]
    whole = [i for i in range(n) if w.count(w[i]) == 1 and round(float(p[i].sum()), 1) > 0]
    return max(whole or ends, key=lambda i: (round(float(p[i].sum()), 1), int((p[i] >= 0.1).sum()), -i))


@pytest.mark.render
@pytest.mark.parametrize("name,kw,chapter,lang", [("attention_pattern", {"layer": 3, "head": 2}, "pattern", "en"),
                                                   ("attention_pattern", {"layer": 3, "head": 2}, "pattern", "ko"),
                                                   ("softmax", {}, "softmax", "ko")])
def test_real_heads_say_where_their_attention_goes(smol, render_scene, name, kw, chapter, lang):
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.registry import load_all

    cls = load_all()[name]
    inputs = smol_inputs(smol, lang=lang, **kw)
    setting = cls.lesson.setting(inputs)
    tr, L, H = setting.trace, setting.head.layer, setting.head.head
    if not kw:
        assert (L, H) == smol[1].roles["adjective_noun"]
    focus = smol_focus(tr, L, H, story=None if kw else "creature")
    want = expected_note(tr, L, H, focus)
    scene, _ = render_scene(cls, inputs, png=(name == "attention_pattern"), size=(192, 108))
    drawn = scene.stage.drawn[chapter]
    captions = [t for t, _ in scene.caption_log]
    if want is None:
        assert "honest" not in drawn
        return
    text = drawn["honest_text"]
    say = Say(lang)
    assert text in captions
    assert tr.tokens[focus] in text
    if want.startswith("first_token"):
        assert tr.tokens[0] in text
        share = tr.head(L, H).pattern[focus, 0] if want == "first_token" else tr.head(L, H).pattern[1:, 0].mean()
        assert say.number(share, ".2f") in text
    if lang == "ko":
        assert not any(w in text for w in ("the first token", "resting", "attention"))
    if name == "attention_pattern":  # the first token's row and column stay on the grid
        assert drawn["grid"].n == tr.n_tokens


@pytest.mark.render
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_real_query_says_the_rotation_comes_next(smol, render_scene, lang):
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.lessons import QUERY

    scene, _ = render_scene(QUERY, smol_inputs(smol, lang=lang), png=False)
    say = Say(lang)
    captions = [t for t, _ in scene.caption_log]
    assert say("real.query.rotary") in captions
    ht = scene.setting.head_trace()
    i = scene.plans[0].focus
    shown = scene.stage.drawn["query"]["product_result"]
    assert np.allclose(shown.values, ht.q[i], atol=1e-5)  # the rotated query, what the scores use
    assert not np.allclose(ht.q[i], ht.q_unrotated[i], atol=1e-3)
    # W_Q·Ê before the rotation has its own name, q⃗; only the rotated vector is Q⃗ (final look of review 52)
    assert scene.stage.drawn["query"]["product"].result.symbol_source == f"arrow(q)_{i + 1}"
    assert shown.symbol_source == f"arrow(Q)_{i + 1}"
    # and the frame says so: the "=" of W_Q·E = Q became an arrow that names the rotation R of this position
    drawn = scene.stage.drawn["query"]
    prod = drawn["product"]
    sign = drawn["rotation_sign"]
    assert np.allclose(prod.equals.get_center(), sign.get_center(), atol=0.05)
    assert prod.equals.get_width() > 1.5 * scene.stage.drawn["query"]["product"].vector.brackets[0].get_width()
    # what is turned is the whole product W_Q·E, framed, not E alone
    frame = drawn["rotated_product"]
    for part in (prod.matrix, prod.vector.brackets):
        assert frame.get_left()[0] < part.get_left()[0] and frame.get_right()[0] > part.get_right()[0]
    assert frame.get_right()[0] < sign.get_center()[0]
    # no dashes through the word's tag over E⃗: where the frame's top reaches it, it has gone (review 52)
    tag = drawn["word_tag"]
    assert tag.get_bottom()[1] > frame.get_top()[1] + 0.05 or tag[0].get_stroke_opacity() == 0
    # the product's E is written where one decimal would read 0.0: two decimals; and it is said to be
    # the normalised E the head reads, not the residual E other lessons draw under the same name
    assert prod.vector.kind == "signed2"
    assert scene.plans[0].normalized
    said = [m.original_text for m in prod.vector.get_family() if hasattr(m, "original_text")]
    assert say("qkv.units.normalized") in said
    X = np.asarray(scene.setting.trace.layers[ht.layer].attn_in)
    assert np.allclose(X[i] @ ht.W_Q, ht.q_unrotated[i], atol=1e-3)  # W_Q·E before the rotation


@pytest.mark.render
def test_real_keys_name_their_rotation_and_the_normed_embeddings(smol, render_scene):
    """Review 53: on SmolLM2 the caption said the keys shown are rotated while every arrow read W_K (K⃗ = W_K Ê), and the
    cosine under Ê₄ and Ê₁ named E⃗₄ and E⃗₁. Each arrow names its position's rotation, R_j W_K, as the query lesson's
    R_j W_Q; the cosine names the vectors drawn."""
    from attention_manim.scenes.lessons import KEY

    scene, _ = render_scene(KEY, smol_inputs(smol), png=False)
    drawn = scene.stage.drawn["key"]
    for j, row in drawn["rows"].items():
        codes = [str(getattr(m, "typst_code", "")) for m in row.get_family()]
        assert any(f"R_{j + 1} W_K" in c for c in codes), codes
    line = " ".join(str(getattr(m, "typst_code", "")) for m in drawn["cos_line"].get_family())
    assert "hat(E)" in line and "arrow(E)" not in line


@pytest.mark.render
def test_real_query_names_agree_across_lessons(smol, render_scene):
    """Review 53: the query lesson names W_Q·Ê q⃗ and the rotated query Q⃗, while the steps lesson called the rotated one
    q⃗₄ too (its step 1 writes q⃗₄ = W_Q Ê₄) and the gallery called W_Q·Ê Q⃗₄. The steps lesson writes the rotated one
    R₄ q⃗₄; the gallery's product is q⃗₄."""
    from attention_manim.scenes.lessons import COMPONENTS, SELF_ATTENTION_STEPS

    scene, _ = render_scene(SELF_ATTENTION_STEPS, smol_inputs(smol), png=False)
    i = scene.plans[0].focus
    code = str(scene.stage.drawn["steps_one"]["q_line"][0].typst_code)
    assert f"R_{i + 1} arrow(q)_{i + 1}" in code
    scene, _ = render_scene(COMPONENTS, smol_inputs(smol), png=False)
    prod = scene.stage.drawn["gallery_product"]["product"]
    assert prod.result.symbol_source.startswith("arrow(q)_")


@pytest.mark.render
def test_real_softmax_weights_follow_from_the_scores_the_column_shows(smol, render_scene):
    """SmolLM2's "␣creature": +1.3, −1.5, −3.0, −1.1 as drawn give 0.55, the column drew 0.56 (review 52). Where
    a column lists every key its softmax runs over, the softmax of its scores as written is its weights as
    written."""
    from attention_manim.scenes.components.text import parse_shown
    from attention_manim.scenes.lessons import SOFTMAX

    scene, _ = render_scene(SOFTMAX, smol_inputs(smol), png=False)
    strips = scene.stage.drawn["softmax"]["strips"]
    complete = [sm for sm in strips if len(sm.shown_keys) == sm.visible_count]
    assert complete
    for sm in complete:
        shown = np.array([parse_shown(m.shown) for m in sm.score_mobs])
        by_hand = np.exp(shown - shown.max())
        by_hand /= by_hand.sum()
        assert [f"{w:.2f}" for w in by_hand] == [m.shown for m in sm.weight_mobs]


@pytest.mark.render
@pytest.mark.parametrize("lang", ["ko"])
def test_real_mole_axes_are_words(smol, render_scene, lang):
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.lessons import MOLE_LESSON

    scene, _ = render_scene(MOLE_LESSON, smol_inputs(smol, lang=lang), png=False)
    say = Say(lang)
    plan = scene.plans[-1]
    words = plan.unembedding
    assert words == ("animal", "chemistry", "skin")
    note = scene.stage.drawn["context_space"]["axes_note"]
    assert note is not None and note in scene.mobjects
    # the axes' definition reads from the back row: over two lines rather than shrunk (it read 11 px)
    glyph_h = max(m.height for m in note.family_members_with_points())
    assert glyph_h * 90 >= 14, glyph_h * 90
    # SmolLM2's three senses do not separate along these words: the closing frame says so, in words
    plan_ = scene.plans[-1]
    assert plan_.against and all(move < 0 for _, _, move in plan_.against)  # each less along its own axis
    # the story first, then the moves against it (review 34: the note never said what the story was)
    after_word = say("embeddings.context.against", items="x", word="W").split(":")[0].split("W")[-1]
    assert after_word.strip() and after_word in scene.caption_log[-1][0]
    assert scene.stage.drawn["context_space"]["against"] in scene.mobjects
    assert say("real.axes.caption", axes=say.quoted_words(words)) in [t for t, _ in scene.caption_log]
    tr = scene.setting.trace
    for name, col in zip(plan.axes, plan.basis.T):  # each axis is the word's unembedding row, normalized
        tid = tr.directions.token_for(name)[0]
        row = smol[0].unembed()[:, tid].detach().cpu().numpy().astype(float)
        assert np.allclose(col, row / np.linalg.norm(row), atol=1e-5)


def test_focus_on_a_word_of_several_tokens_is_its_last_token(smol):
    from attention_manim.model.errors import UserError
    from attention_manim.scenes.lessons import ATTENTION_PATTERN

    s = ATTENTION_PATTERN.lesson.setting(smol_inputs(smol, focus="verdant"))
    tr = s.trace
    pieces = [i for i, w in enumerate(tr.word_of_token) if tr.words[w] == "verdant"]
    assert len(pieces) > 1  # "verdant" is several tokens
    assert s.focus_index() == pieces[-1]
    with pytest.raises(UserError) as e:
        ATTENTION_PATTERN.lesson.setting(smol_inputs(smol, focus="xylophone"))
    assert "verdant" in e.value.hint  # the words to pick from, as written


@pytest.mark.parametrize("lesson", ["FLUFFY_BLUE_CREATURE", "ATTENTION_PATTERN", "ATTENTION_AS_LOOKUP"])
def test_smollm2_follows_a_whole_word_in_the_fluffy_phrase(smol, lesson):
    """SmolLM2 cuts "verdant" into "␣ver d ant": the default focus is never such a piece ("ant" read
    as if the phrase had an ant in it), but the story's own word, "creature", kept whole."""
    from attention_manim.scenes import lessons

    s = getattr(lessons, lesson).lesson.setting(smol_inputs(smol))
    tr = s.trace
    q = s.focus_index()
    word = tr.word_of_token[q]
    assert tr.word_of_token.count(word) == 1  # a whole word: its only token
    assert tr.words[word] == "creature"


def test_default_focus_prefers_a_whole_word_to_a_words_last_piece():
    from attention_manim.scenes.setting import gathering_word

    # tokens: A fluffy ver d ant forest ; "ant" gathers more than "forest", but is a piece of "verdant"
    word_of = [0, 1, 2, 2, 2, 3]
    p = np.eye(6)
    p[4] = [0.0, 0.9, 0.0, 0.0, 0.1, 0.0]
    p[5] = [0.0, 0.3, 0.0, 0.0, 0.0, 0.7]
    assert gathering_word(p, word_of=word_of) == 5


def test_smollm2_eiffel_tags_are_distinct_words_not_the_sink(smol):
    """The E′ tags name the context word each phrase drew from: never the first token "The" (a sink
    every phrase rests on), never a token's space mark, and no two phrases alike."""
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.lessons import EIFFEL_TOWER_LESSON as EIFFEL_TOWER
    from attention_manim.scenes.chapters.embedding_parts import tag_text

    s = EIFFEL_TOWER.lesson.setting(smol_inputs(smol))
    plan = [p for p in EIFFEL_TOWER.lesson.plans(s) if hasattr(p, "phrases") and hasattr(p.phrases[0], "tag")][0]
    tags = [p.tag for p in plan.phrases]
    assert len(set(tags)) == len(tags), tags
    assert all(tag and "The" not in tag for tag in tags), tags  # "The tower" (the phrase) may be a tag
    for lang in ("en", "ko", "pt"):
        texts = [tag_text(Say(lang), t) for t in tags]
        assert len(set(texts)) == len(texts)
        assert not any(m in t for t in texts for m in ("␣", "‿")), texts
    assert tags[-1] == ("miniature",)


def test_smollm2_names_a_followed_piece_as_a_piece_of_its_word(smol):
    """--focus verdant follows "ant", its last piece: the query chapter says so, never "one word, ant"."""
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.lessons import FLUFFY_BLUE_CREATURE
    from attention_manim.scenes.plans.qkv import plan_query

    plan = plan_query(FLUFFY_BLUE_CREATURE.lesson.setting(smol_inputs(smol, focus="verdant")))
    assert plan.tokens[plan.focus] == "ant" and plan.piece_of == "verdant"
    say = Say("en")
    assert say("common.piece_of", piece=say.quote("ant"), word=say.quote("verdant")) == "“ant”, the last piece of “verdant”"
    assert plan_query(FLUFFY_BLUE_CREATURE.lesson.setting(smol_inputs(smol))).piece_of is None


@pytest.mark.render
def test_the_intro_names_a_head_without_a_role_once(unnamed_inputs, render_scene):
    """SmolLM2's flagship intro read "layer 13 · head 2: layer 13 · head 2"."""
    from attention_manim.scenes.chapters.framing import Intro
    from attention_manim.scenes.lesson import Lesson, lesson_scene

    cls = lesson_scene(Lesson("t", (), intro=Intro("fluffy_blue_creature")))
    scene, _ = render_scene(cls, unnamed_inputs(sink=0.6), size=(128, 72), png=False)
    text = scene.stage.drawn["intro"]["head"].original_text
    assert text.count("head") == 1 and text.count("layer") == 1, text


@pytest.mark.render
def test_values_says_the_e_it_updates_is_the_residual(smol, render_scene):
    """SmolLM2: W_V read the normalised E⃗₄ (entries ±0.1) and E⃗₄ + ΔE⃗₄ = E⃗′₄ then showed the residual
    E⃗₄ (−3.6, …) under the same name: the update says which E it is."""
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.lessons import VALUES

    scene, _ = render_scene(VALUES, smol_inputs(smol, lang="pt"), png=False, size=(128, 72))
    drawn = scene.stage.drawn["values"]
    assert scene.plans[0].normalized
    note = " ".join(m.original_text for m in drawn["residual_note"])
    assert note.replace(" ", "") == Say("pt")("qkv.units.residual").replace(" ", "")
    assert drawn["residual_note"].get_top()[1] < drawn["e_column"].brackets.get_bottom()[1]
    # under E⃗ and the "+", short of ΔE⃗ (review 52: under E⃗ alone, "the layer's / input, / before its / norm")
    res = drawn["residual_note"]
    assert abs(res.get_left()[0] - drawn["e_column"].get_left()[0]) < 1e-6
    assert drawn["e_column"].get_right()[0] < res.get_right()[0] < drawn["delta_column"].brackets.get_left()[0] - 0.2
    # and the two are two symbols: Ê⃗ for what W_V reads, E⃗ for the residual the update adds to
    assert drawn["value_input"].symbol_source.startswith("hat(E)")
    assert drawn["e_column"].symbol_source.startswith("arrow(E)")
    # the caption's "back up to 576 numbers" is on screen, beside ΔE
    brace_text = drawn["delta_brace"][1].original_text
    assert str(scene.plans[0].d_model) in brace_text.replace(".", "").replace(",", "")
    # E′ here is E plus this one head's change; SmolLM2's layer adds 9 heads' (a reviewer compared it with
    # output_matrix's sum of all heads): the frame says it is this head alone
    alone = " ".join(m.original_text for m in drawn["one_head_note"])
    assert scene.plans[0].n_heads == 9 and "9" in alone
    # read from the back row (it was 8 px lowercase in grey): its letters as tall as E′'s figures, in E′'s colour,
    # and the caption says it too
    fig = drawn["updated_column"].entries[0]
    line = drawn["one_head_note"][0]
    assert line.get_color().to_hex().lower() == scene.stage.theme.updated.lower()
    assert line.height >= 0.8 * fig.height
    # under ΔE and E′ both, in at most three lines (review 49: four narrow lines against the frame's edge), clear
    # of the residual note under E
    note, d_col, n_col = drawn["one_head_note"], drawn["delta_column"], drawn["updated_column"]
    assert len(note) <= 3 and note.get_left()[0] >= d_col.get_left()[0] - 0.2
    assert note.get_right()[0] <= n_col.get_right()[0] + 0.6 and note.get_left()[0] > drawn["residual_note"].get_right()[0]
    assert any("9 heads" in c or "9" in c and "head" in c for c, _ in scene.caption_log)


@pytest.mark.render
def test_components_says_how_short_a_speck_of_a_delta_is(smol, render_scene):
    """SmolLM2's ΔE⃗₄ was a 1-2 px speck at the tip of E⃗₄, its label on E's: the frame now says how
    long it is against E (lengths over all 576 dimensions) instead of drawing the speck."""
    from attention_manim.scenes.chapters.gallery import TINY_ARROW
    from attention_manim.scenes.i18n import Say
    from attention_manim.scenes.lessons import COMPONENTS

    scene, _ = render_scene(COMPONENTS, smol_inputs(smol, lang="pt"), png=False, size=(128, 72))
    drawn = scene.stage.drawn["gallery_space"]
    plan = scene.plans[0]
    share = 100 * np.linalg.norm(plan.updated - plan.embedding) / np.linalg.norm(plan.embedding)
    assert max(drawn["dE"].width, drawn["dE"].height) < TINY_ARROW
    text = " ".join(m.original_text for m in drawn["tiny_note"])
    # Portuguese writes the share with a decimal comma on screen
    expected = Say("pt")("gallery.space.tiny_delta", share=share).replace(f"{share:.1f}", f"{share:.1f}".replace(".", ","))
    assert text.replace(" ", "") == expected.replace(" ", "") and f"{share:.1f}".replace(".", ",") in text
    assert drawn["dE"] not in scene.mobjects
    # and the caption does not describe the arrow it leaves out (review 37: "ΔE runs from the tip of E…")
    captions = [c for c, _ in scene.caption_log]
    assert Say("pt")("gallery.space.caption_delta_tiny") in captions
    assert Say("pt")("gallery.space.caption_delta") not in captions
    # its E lies along the third axis, which the view turns about: the caption says the turn barely moves it
    # (review 36: "Turning the view shows all three coordinates" over an arrow along −PC3)
    c = drawn["E"].coords
    assert abs(c[2]) / np.linalg.norm(c) > 0.9
    turn = [text for text, _ in scene.caption_log if "PC3" in text]
    assert turn == [Say("pt")("gallery.space.caption_turn_along", axis="PC3")]


@pytest.mark.render
def test_eiffel_says_the_heads_share_as_its_tables_draw_it(smol, render_scene):
    """SmolLM2's eiffel_tower said the head's ΔE "accounts for at most 0.1" of the change while its
    tables drew ΔE along Paris as −0.1 and then +0.1: the figure is now the drawn difference."""
    import re

    from attention_manim.scenes.lessons import EIFFEL_TOWER_LESSON

    scene, _ = render_scene(EIFFEL_TOWER_LESSON, smol_inputs(smol), png=False, size=(128, 72))
    tables = scene.stage.drawn["context_space"]["tables"]
    rows = [[float(m.shown.replace("−", "-")) for m in t.cells[1][:3]] for t in tables]
    said = [c for c, _ in scene.caption_log if "accounts for at most" in c]
    assert said, "the real model's inputs differ: the caption says how much is the head's"
    for caption in said:
        most = float(re.search(r"at most ([0-9.]+)", caption).group(1))
        drawn = [max(abs(a - b) for a, b in zip(r1, r0)) for r0, r1 in zip(rows, rows[1:])]
        assert any(abs(most - d) < 1e-9 for d in drawn), (caption, rows)
    # each phrase's own E takes the name E⃗ (the table's E⃗ row is its); the earlier Es drop theirs
    es = [a for _, kind, a in scene.stage.drawn["context_space"]["arrows"] if kind == "E"]
    assert len(es) == 3 and all(a.label is not None for a in es)
    # (the closing turn is about the refined E′s: the last E's name leaves then too, review 37)
    assert all(a.label not in scene.mobjects and a.label.gone for a in es)


@pytest.mark.render
def test_last_token_tells_a_repeated_word_apart(smol, render_scene):
    """SmolLM2's panels read "strongest: ␣the 0.10, ␣the 0.10": which "␣the"? Each repeated word is
    named with how far back it stands."""
    from attention_manim.scenes.lessons import LAST_TOKEN

    scene, _ = render_scene(LAST_TOKEN, smol_inputs(smol), png=False, size=(128, 72))
    plan, drawn = scene.plans[0], scene.stage.drawn["last_token"]
    tokens, last = plan.tokens, plan.last
    repeated = 0
    for h, panel in drawn["panels"].items():
        text = " ".join(m.original_text for m in panel.get_family() if hasattr(m, "original_text"))
        head = next(x for x in plan.heads if x.head == h)
        for k in head.strongest:
            if k != last and tokens[:last + 1].count(tokens[k]) > 1:
                repeated += 1
                assert f"({last - k} back)" in text, text
    assert repeated, "the murder mystery repeats ␣the among the strongest keys"
