"""The studies' disk cache (model/studies.py, `cached_study`): a second session reads the same numbers
without running the model; other arguments, another model's weights or a damaged file are measured."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest


class Ran(Exception):
    """Raised by a stand-in measurement: the model would have run."""


def same(a, b) -> bool:
    """Field by field, exactly: arrays with their dtype and shape, tuples and plain values equal."""
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            if not (isinstance(y, np.ndarray) and x.dtype == y.dtype and x.shape == y.shape
                    and np.array_equal(x, y, equal_nan=True)):
                return False
        elif x != y:
            return False
    return True


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTENTION_MANIM_CACHE", str(tmp_path))
    return tmp_path / "studies"


def fresh_session(toy_model):
    from attention_manim.model.session import ModelSession

    return ModelSession(toy_model, "toy")


def test_a_second_session_reads_the_studies_without_running_the_model(cache, toy_model, monkeypatch):
    from attention_manim.model import studies
    from attention_manim.model.passages import passages_for

    text = passages_for(toy_model.info)[0]
    linear = fresh_session(toy_model).linear_study()
    window = fresh_session(toy_model).window_study(text, 4)
    assert sorted(p.name.split("-")[0] for p in cache.glob("*.json")) == ["linear", "window"]

    def ran(*a, **k):
        raise Ran

    monkeypatch.setattr(studies, "linear_study", ran)
    monkeypatch.setattr(studies, "window_study", ran)
    again = fresh_session(toy_model)
    assert same(again.linear_study(), linear) and same(again.window_study(text, 4), window)
    assert linear.kept.dtype == bool and linear.tv.shape == (toy_model.info.n_layers, toy_model.info.n_heads)
    # other arguments are another study: measured (here: the stand-in runs)
    with pytest.raises(Ran):
        again.window_study(text, 5)
    with pytest.raises(Ran):
        again.linear_study([text])


def test_a_damaged_or_foreign_file_is_measured_again(cache, toy_model, monkeypatch):
    from attention_manim.model import studies

    first = fresh_session(toy_model).linear_study()
    (path,) = cache.glob("linear-*.json")
    path.write_text("{ not json", encoding="utf-8")
    again = fresh_session(toy_model).linear_study()
    assert same(again, first)
    assert path.read_text(encoding="utf-8").startswith("{\"model\"")  # rewritten whole
    # a file with other fields (an older layout) is not trusted either
    path.write_text('{"model": "toy"}', encoding="utf-8")
    calls = []
    real = studies.linear_study
    monkeypatch.setattr(studies, "linear_study", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert same(fresh_session(toy_model).linear_study(), first) and calls == [1]


def test_the_key_follows_the_weights_and_the_measuring_code(cache, toy_model, monkeypatch):
    """Changed weights (a model with its own weights id) or a changed measuring module is a new file."""
    from attention_manim.model import studies

    session = fresh_session(toy_model)
    key = studies.study_key(session, "linear", (None,))
    assert key == studies.study_key(fresh_session(toy_model), "linear", (None,))
    assert key != studies.study_key(session, "linear", (("one passage",),))
    monkeypatch.setattr(studies, "STUDY_SOURCES", studies.STUDY_SOURCES[:-1])
    assert key != studies.study_key(session, "linear", (None,))
    monkeypatch.undo()
    monkeypatch.setattr(toy_model, "weights_id", "other-weights", raising=False)
    assert key != studies.study_key(session, "linear", (None,))
