"""How far a share measured on people's verdicts can be trusted: its interval, and the readers' agreement.

Shared by the FIRE label analyses (Table 2's α) and the contrast review (:mod:`tvrbench.review`).
Each equals its peer in the tests: Cohen's κ scikit-learn's ``cohen_kappa_score``, α the
``krippendorff`` package, the Wilson interval a hand computation.
"""

from __future__ import annotations

import math

import numpy as np

Z_95 = 1.959963984540054  # the standard normal's 97.5 % quantile


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> tuple[float, float] | None:
    """Wilson's score interval for a binomial share (95 % by default); ``None`` without trials.

    Unlike the normal approximation it stays within [0, 1] and is honest for small samples and
    shares near 0 or 1, which is what a reviewed sample of a few dozen contrasts gives.
    """
    if trials <= 0:
        return None
    share = successes / trials
    denominator = 1 + z * z / trials
    centre = (share + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def cohen_kappa(first: np.ndarray, second: np.ndarray) -> float:
    """Cohen's κ of two readers' labels of the same items (any hashable labels); nan when chance
    agreement is certain (both gave one and the same label throughout)."""
    first, second = np.asarray(first), np.asarray(second)
    labels, codes = np.unique(np.concatenate([first, second]), return_inverse=True)
    a, b = codes[: len(first)], codes[len(first) :]
    observed = float(np.mean(a == b))
    expected = float(np.bincount(a, minlength=len(labels)) @ np.bincount(b, minlength=len(labels))) / len(a) ** 2
    return float("nan") if expected == 1.0 else (observed - expected) / (1.0 - expected)


def krippendorff_alpha_nominal(value_counts: np.ndarray) -> float:
    """Krippendorff's α for nominal data from a (units × categories) matrix of value counts.

    Vectorized form of Krippendorff (2011) "Computing Krippendorff's alpha-reliability": the
    coincidence matrix o_ck = Σ_u n_uc (n_uk − [c = k]) / (m_u − 1) over units with m_u ≥ 2 values,
    α = 1 − (n − 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k. Returns nan when there is no variation.
    """
    counts = np.asarray(value_counts, dtype=np.float64)
    per_unit = counts.sum(axis=1)
    pairable = per_unit >= 2
    counts, per_unit = counts[pairable], per_unit[pairable]
    if not len(counts):
        return float("nan")
    weighted = counts / (per_unit - 1)[:, None]
    coincidence = weighted.T @ counts - np.diag(weighted.sum(axis=0))
    marginals = coincidence.sum(axis=1)
    total = marginals.sum()
    observed = coincidence.sum() - np.trace(coincidence)
    expected = total**2 - np.sum(marginals**2)
    if expected == 0:
        return float("nan")
    return float(1.0 - (total - 1.0) * observed / expected)
