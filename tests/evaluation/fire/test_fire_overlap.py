"""Table 3: top-k overlap and rank-biased overlap against a plain loop of Webber et al.'s formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvrbench.evaluation.fire.overlap import prediction_overlap, rank_biased_overlap, top_k_overlap


def rbo_loop(a, b, p, variant):
    """Webber, Moffat & Zobel (2010): eq. 32 (ext), eq. 11 (min), truncated sum (trunc)."""
    k = len(a)
    x = [len(set(a[:d]) & set(b[:d])) for d in range(1, k + 1)]
    if variant == "ext":
        return x[-1] / k * p**k + (1 - p) / p * sum(x[d - 1] / d * p**d for d in range(1, k + 1))
    if variant == "trunc":
        return (1 - p) * sum(p ** (d - 1) * x[d - 1] / d for d in range(1, k + 1))
    return (1 - p) / p * (sum((x[d - 1] - x[-1]) / d * p**d for d in range(1, k + 1)) - x[-1] * math.log(1 - p))


def random_top_lists(seed, n=40, k=10, videos=25):
    rng = np.random.default_rng(seed)
    a = np.stack([rng.permutation(videos)[:k] for _ in range(n)])
    b = np.stack([rng.permutation(videos)[:k] for _ in range(n)])
    b[: n // 2, :3] = a[: n // 2, :3]  # some shared heads
    b[: n // 2] = np.stack([row if len(set(row)) == k else a[i] for i, row in enumerate(b[: n // 2])])
    return a, b


@pytest.mark.parametrize("variant", ["ext", "min", "trunc"])
@pytest.mark.parametrize("p", [0.5, 0.9, 0.98])
def test_rbo_matches_loop(variant, p):
    a, b = random_top_lists(int(p * 100))
    expected = [rbo_loop(list(x), list(y), p, variant) for x, y in zip(a, b)]
    np.testing.assert_allclose(rank_biased_overlap(a, b, p, variant), expected, rtol=0, atol=1e-12)


def test_rbo_bounds_and_extremes():
    a, b = random_top_lists(3)
    ext, low = rank_biased_overlap(a, b, 0.9, "ext"), rank_biased_overlap(a, b, 0.9, "min")
    assert np.all(low <= ext + 1e-12)
    same = rank_biased_overlap(a, a, 0.9, "ext")
    np.testing.assert_allclose(same, 1.0)
    np.testing.assert_allclose(rank_biased_overlap(a, a, 0.9, "trunc"), 1 - 0.9**10)
    disjoint = rank_biased_overlap(np.arange(10)[None], np.arange(10, 20)[None], 0.9, "ext")
    assert disjoint[0] == 0.0


def test_top_k_overlap_and_pairs():
    a, b = random_top_lists(5)
    expected = [len(set(x) & set(y)) / 10 for x, y in zip(a, b)]
    np.testing.assert_allclose(top_k_overlap(a, b), expected)
    rows = prediction_overlap({"A": a, "B": b, "C": a}, p=0.9)
    assert [(r.model_a, r.model_b) for r in rows] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert rows[1].overlap == 1.0 and rows[1].rbo == pytest.approx(1.0)
    assert rows[0].overlap == pytest.approx(np.mean(expected))


def test_bad_arguments():
    a, b = random_top_lists(1)
    with pytest.raises(ValueError):
        rank_biased_overlap(a, b, 1.0)
    with pytest.raises(ValueError):
        rank_biased_overlap(a, b, 0.9, "max")
    with pytest.raises(ValueError):
        top_k_overlap(a, b[:, :5])
