"""Table 3: how much two models' top-k lists overlap (plain overlap and rank-biased overlap).

Rank-biased overlap (Webber, Moffat & Zobel 2010, "A similarity measure for indefinite rankings")
with persistence ``p`` (default 0.9). Both lists are top-k prefixes of full rankings, so RBO is
known only within bounds; three variants are offered, named in every output:

- ``ext`` (default): the extrapolated point estimate, eq. (32) for equal-length lists,
  RBO_ext = X_k/k · p^k + (1 − p)/p · Σ_{d=1..k} X_d/d · p^d, where X_d = |A_{:d} ∩ B_{:d}|.
  Identical lists score 1, disjoint lists 0.
- ``min``: the lower bound, eq. (11),
  RBO_min = (1 − p)/p · (Σ_{d=1..k} (X_d − X_k)/d · p^d − X_k · ln(1 − p)).
- ``trunc``: the sum truncated at depth k, (1 − p) Σ_{d=1..k} p^(d−1) X_d/d (at most 1 − p^k);
  this is what ``rbo(p)`` without extrapolation returns in several Python packages.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from tvrbench.evaluation.fire.config import FireConfig
from tvrbench.results import Sources, Table, TablesOfJson, analysis_signature
from tvrbench.signature import Signature

RBO_VARIANTS = ("ext", "min", "trunc")


def _overlap_at_depth(top_a: np.ndarray, top_b: np.ndarray) -> np.ndarray:
    """X_d = |A_{:d} ∩ B_{:d}| for d = 1..k, per query: (n_queries, k).

    An item at position i of A and position j of B is shared from depth max(i, j) + 1 on.
    """
    top_a, top_b = np.asarray(top_a), np.asarray(top_b)
    if top_a.shape != top_b.shape or top_a.ndim != 2:
        raise ValueError(f"top-k lists must have the same 2-D shape, got {top_a.shape} and {top_b.shape}")
    k = top_a.shape[1]
    same = top_a[:, :, None] == top_b[:, None, :]
    position_in_b = np.where(same.any(axis=2), same.argmax(axis=2), k)
    shared_from = np.maximum(np.arange(k)[None, :], position_in_b)  # depth index (0-based); k = never
    return (shared_from[:, :, None] < np.arange(1, k + 1)[None, None, :]).sum(axis=1)


def top_k_overlap(top_a: np.ndarray, top_b: np.ndarray) -> np.ndarray:
    """|A ∩ B| / k per query."""
    shared = _overlap_at_depth(top_a, top_b)
    return shared[:, -1] / shared.shape[1]


def rank_biased_overlap(top_a: np.ndarray, top_b: np.ndarray, p: float = 0.9, variant: str = "ext") -> np.ndarray:
    """RBO of two top-k lists per query (see the module docstring for the variants)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"RBO persistence p must be in (0, 1), got {p}")
    if variant not in RBO_VARIANTS:
        raise ValueError(f"unknown RBO variant {variant!r}; choose one of {', '.join(RBO_VARIANTS)}")
    shared = _overlap_at_depth(top_a, top_b).astype(np.float64)
    k = shared.shape[1]
    depth = np.arange(1, k + 1)
    weights = p**depth
    agreement_sum = (shared / depth) @ weights
    at_k = shared[:, -1]
    if variant == "ext":
        return at_k / k * p**k + (1 - p) / p * agreement_sum
    if variant == "trunc":
        return (1 - p) / p * agreement_sum
    return (1 - p) / p * (((shared - at_k[:, None]) / depth) @ weights - at_k * np.log(1 - p))


@dataclass(frozen=True)
class PairOverlap:
    """One row of Table 3."""

    model_a: str
    model_b: str
    overlap: float
    rbo: float

    def to_json(self) -> dict:
        return {"model_a": self.model_a, "model_b": self.model_b, "overlap": self.overlap, "rbo": self.rbo}


def prediction_overlap(top_lists: dict[str, np.ndarray], p: float = 0.9, variant: str = "ext") -> list[PairOverlap]:
    """Mean top-k overlap and RBO for every pair of models, from each model's top-k indices."""
    rows = []
    for name_a, name_b in combinations(top_lists, 2):
        a, b = top_lists[name_a], top_lists[name_b]
        rows.append(PairOverlap(name_a, name_b, float(top_k_overlap(a, b).mean()), float(rank_biased_overlap(a, b, p, variant).mean())))
    return rows


def overlap_tables(payload: dict) -> list[Table]:
    """Table 3 from :class:`OverlapResult`'s JSON."""
    rows = [[f"{r['model_a']} & {r['model_b']}", f"{r['overlap']:.4f}", f"{r['rbo']:.4f}"] for r in payload["pairs"]]
    return [
        Table(f"Top-{payload['k']} prediction overlap (Table 3)", ["models", "overlap", f"RBO_{payload['rbo_variant']} (p={payload['p']})"], rows)
    ]


@dataclass(frozen=True)
class OverlapResult(TablesOfJson):
    """Table 3: a row per pair of models."""

    pairs: list[PairOverlap]
    k: int
    p: float
    variant: str
    signature: Signature
    tables_of = staticmethod(overlap_tables)

    def to_json(self) -> dict:
        return {"pairs": [r.to_json() for r in self.pairs], "k": self.k, "rbo_variant": self.variant, "p": self.p, "signature": str(self.signature)}


def overlap_analysis(scores: dict[str, np.ndarray], settings: FireConfig | None = None, sources: Sources | None = None) -> OverlapResult:
    """Table 3 for ``{model: score matrix}`` (two or more models)."""
    settings = settings or FireConfig()
    from tvrbench.evaluation import rank_top_k

    opts = settings.overlap
    tops = {name: rank_top_k(matrix, opts.k) for name, matrix in scores.items()}
    signature = analysis_signature("fire-overlap", sources, {"k": opts.k, "rbo": opts.rbo_variant, "p": opts.rbo_p, "ties": "stable"})
    return OverlapResult(prediction_overlap(tops, opts.rbo_p, opts.rbo_variant), opts.k, opts.rbo_p, opts.rbo_variant, signature)
