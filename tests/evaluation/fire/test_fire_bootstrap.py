"""§4.3 bootstrap: the vectorized resampler equals a plain loop with the same seed; the paired test."""

from __future__ import annotations

import numpy as np
import pytest

from tvrbench.evaluation.fire.bootstrap import (
    bootstrap_differences,
    bootstrap_json,
    index_dtype,
    paired_bootstrap_test,
    queries_for_difference,
    resample_means,
)


def loop_means(values, size, resamples, seed):
    rng = np.random.default_rng([seed, size])
    return np.array([values[rng.integers(0, len(values), size, dtype=index_dtype(len(values)))].mean() for _ in range(resamples)])


@pytest.fixture(scope="module")
def correct():
    rng = np.random.default_rng(7)
    return {"C@1": (rng.random(2000) < 0.45).astype(float), "C@5": (rng.random(2000) < 0.75).astype(float)}


@pytest.mark.parametrize("chunk", [1, 999, 10**7])
def test_vectorized_equals_loop(correct, chunk):
    expected = loop_means(correct["C@1"], 300, 200, seed=3)
    got = resample_means(correct["C@1"], 300, 200, seed=3, chunk_elements=chunk)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)


def test_rows_share_resamples(correct):
    rows = np.stack([correct["C@1"], correct["C@5"]])
    both = resample_means(rows, 100, 50, seed=1)
    np.testing.assert_allclose(both[1], loop_means(correct["C@5"], 100, 50, seed=1), atol=1e-15)


def test_differences_quantile_and_json(correct):
    results = bootstrap_differences(correct, sizes=(100, 1000), resamples=500, seed=0)
    for metric in correct:
        for size in (100, 1000):
            result = results[metric][size]
            expected = np.abs(loop_means(correct[metric], size, 500, 0) - correct[metric].mean())
            np.testing.assert_allclose(result.differences, expected, atol=1e-15)
            assert result.quantile == pytest.approx(np.quantile(expected, 0.95))
    assert results["C@1"][1000].quantile < results["C@1"][100].quantile
    payload = bootstrap_json(results, "sig")
    assert set(payload) == {"C@1", "C@5"} and set(payload["C@1"]) == {"100", "1000"}
    assert payload["C@1"]["100"]["p95"] == results["C@1"][100].quantile
    assert sum(payload["C@1"]["100"]["histogram"]["counts"]) == 500
    # asking for another size or metric does not change these numbers
    alone = bootstrap_differences({"C@1": correct["C@1"]}, sizes=(1000,), resamples=500, seed=0)
    np.testing.assert_array_equal(alone["C@1"][1000].differences, results["C@1"][1000].differences)


def test_nan_queries_are_left_out(correct):
    values = correct["C@1"].copy()
    values[::10] = np.nan
    result = bootstrap_differences({"AP": values}, sizes=(50,), resamples=100, seed=2)["AP"][50]
    finite = values[np.isfinite(values)]
    assert result.n_queries == len(finite)
    np.testing.assert_allclose(result.differences, np.abs(loop_means(finite, 50, 100, 2) - finite.mean()), atol=1e-15)


def test_queries_for_difference_follows_inverse_square_root(correct):
    results = bootstrap_differences({"C@1": correct["C@1"]}, sizes=(200, 800), resamples=2000, seed=0)["C@1"]
    needed = queries_for_difference(results, results[800].quantile)
    assert 650 < needed < 1000
    assert queries_for_difference(results, 0.01) > queries_for_difference(results, 0.02)
    with pytest.raises(ValueError):
        queries_for_difference(results, 0.0)


def test_paired_test():
    rng = np.random.default_rng(0)
    a = (rng.random(3000) < 0.5).astype(float)
    same = paired_bootstrap_test(a, a, resamples=500, seed=0)
    assert same.difference == 0 and same.p_value == 1.0
    better = np.maximum(a, (rng.random(3000) < 0.1))
    test = paired_bootstrap_test(better, a, resamples=2000, seed=0)
    assert test.difference == pytest.approx(better.mean() - a.mean())
    assert test.ci_low < test.difference < test.ci_high and test.ci_low > 0
    assert test.p_value == pytest.approx(1 / 2001)
    noise = paired_bootstrap_test(a, rng.permutation(a), resamples=2000, seed=0)
    assert noise.p_value > 0.05
    # the p-value is the centred-null tail count, checked by a loop
    d = better - a
    means = loop_means(d, len(d), 2000, 0)
    assert test.p_value == (1 + np.sum(np.abs(means - d.mean()) >= abs(d.mean()))) / 2001
    with pytest.raises(ValueError):
        paired_bootstrap_test(a, a[:10])
