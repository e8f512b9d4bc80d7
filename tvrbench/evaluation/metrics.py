"""Retrieval metrics as small named objects (SPEC §2), computed from the ranks of labelled items.

A metric name parses into settings the way ir_measures does: ``C@5`` is Correct@5, ``R@10``
Recall@10, ``P@5`` Precision@5, ``Judged@10``, ``AP``, ``MdR``, ``MnR``, ``GMR``, ``nDCG`` (mean of
both directions) with its halves ``nDCG_t2v`` and ``nDCG_v2t``. Every metric maps a
:class:`RankedQueries` to one value per query; the aggregate is the mean over the queries where the
metric is defined (a query without any positive has no C@K, AP, rank or nDCG, as in trec_eval),
except MdR (median) and GMR (geometric mean of the aggregated C@1, C@5, C@10).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

AP_VARIANTS = ("standard", "fire")
NDCG_VARIANTS = ("epic", "paper", "full")
FIRE_AP_DEPTH = 20  # the released FIRE code ranks only the top 20


@dataclass
class RankedQueries:
    """Labelled items of every query with their ranks; arrays are grouped by query.

    ``query``: query index of each item; ``rank``: its 1-based rank (fractional under the
    ``average`` tie rule); ``gain``: its relevance (binary positives: 1 / 0); ``judged``: whether it
    carries any label at all (for Judged@K).
    """

    n_queries: int
    query: np.ndarray
    rank: np.ndarray
    gain: np.ndarray
    judged: np.ndarray
    _first: np.ndarray | None = field(default=None, init=False, repr=False)

    def per_query_sum(self, weights: np.ndarray) -> np.ndarray:
        return np.bincount(self.query, weights=weights, minlength=self.n_queries)

    def positive_counts(self) -> np.ndarray:
        return self.per_query_sum((self.gain > 0).astype(np.float64))

    def positives_within(self, k: int) -> np.ndarray:
        """Number of positives ranked in the top ``k`` of each query."""
        return self.per_query_sum(((self.gain > 0) & (self.rank <= k)).astype(np.float64))

    def defined(self, values: np.ndarray) -> np.ndarray:
        """``values`` with NaN for queries without any positive."""
        return np.where(self.positive_counts() > 0, values, np.nan)

    def first_positive_rank(self) -> np.ndarray:
        """Rank of each query's best positive (NaN without one); computed once, read by C@K, MdR, MnR."""
        if self._first is None:
            first = np.full(self.n_queries, np.inf)
            positive = self.gain > 0
            np.minimum.at(first, self.query[positive], self.rank[positive])
            self._first = np.where(np.isfinite(first), first, np.nan)
        return self._first

    def positives_by_rank(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positives sorted by (query, rank): their query, rank and 1-based order within the query."""
        positive = np.flatnonzero(self.gain > 0)
        order = positive[np.lexsort((self.rank[positive], self.query[positive]))]
        query = self.query[order]
        counts = np.bincount(query, minlength=self.n_queries)
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        within = np.arange(order.size) - starts[query] + 1
        return query, self.rank[order], within


class Metric:
    """A named per-query measure; subclasses set ``name`` and implement :meth:`per_query`."""

    name: str
    direction = "t2v"

    def per_query(self, ranked: RankedQueries) -> np.ndarray:
        raise NotImplementedError

    def aggregate(self, values: np.ndarray) -> float:
        return float(np.nanmean(values)) if np.any(~np.isnan(values)) else float("nan")

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, repr=False)
class _AtCutoff(Metric):
    """A metric of the top ``k``, named ``<prefix>@k``."""

    k: int
    prefix = ""

    @property
    def name(self) -> str:
        return f"{self.prefix}@{self.k}"


class CorrectAt(_AtCutoff):
    """1 if a positive is in the top k (the "Recall@K" of prior text-video work)."""

    prefix = "C"

    def per_query(self, ranked):
        return ranked.defined((ranked.first_positive_rank() <= self.k).astype(np.float64))


class RecallAt(_AtCutoff):
    """Positives in the top k over all positives of the query (the textbook recall)."""

    prefix = "R"

    def per_query(self, ranked):
        with np.errstate(invalid="ignore", divide="ignore"):
            return ranked.defined(ranked.positives_within(self.k) / ranked.positive_counts())


class PrecisionAt(_AtCutoff):
    prefix = "P"

    def per_query(self, ranked):
        return ranked.defined(ranked.positives_within(self.k) / self.k)


class JudgedAt(_AtCutoff):
    """Share of the top k that carries any label: low values warn that a model was never pooled."""

    prefix = "Judged"

    def per_query(self, ranked):
        return ranked.per_query_sum((ranked.judged & (ranked.rank <= self.k)).astype(np.float64)) / self.k


@dataclass(frozen=True, repr=False)
class AveragePrecision(Metric):
    """AP over the full ranking (``standard``), or the FIRE code's AP over the top 20 divided by
    the positives retrieved there (``fire``, 0 when none)."""

    variant: str = "standard"

    name = "AP"

    def per_query(self, ranked):
        query, rank, within = ranked.positives_by_rank()
        precision = within / rank
        if self.variant == "standard":
            total = np.bincount(query, weights=precision, minlength=ranked.n_queries)
            with np.errstate(invalid="ignore", divide="ignore"):
                return ranked.defined(total / ranked.positive_counts())
        retrieved = rank <= FIRE_AP_DEPTH
        total = np.bincount(query[retrieved], weights=precision[retrieved], minlength=ranked.n_queries)
        found = np.bincount(query[retrieved], minlength=ranked.n_queries)
        return ranked.defined(np.divide(total, found, out=np.zeros(ranked.n_queries), where=found > 0))


@dataclass(frozen=True, repr=False)
class MedianRank(Metric):
    """Median over queries of the rank of the first positive."""

    name = "MdR"

    def per_query(self, ranked):
        return ranked.first_positive_rank()

    def aggregate(self, values):
        return float(np.nanmedian(values)) if np.any(~np.isnan(values)) else float("nan")


@dataclass(frozen=True, repr=False)
class MeanRank(Metric):
    name = "MnR"

    def per_query(self, ranked):
        return ranked.first_positive_rank()


@dataclass(frozen=True, repr=False)
class NDCG(Metric):
    """nDCG with graded relevance (Wray et al. eq. 2-3).

    ``epic`` (the released EPIC-KITCHENS / JPoSE code): gain = s, and only the first k ranks count,
    k = number of items with s > 0. ``paper``: the same with gain 2^s - 1 (eq. 2 as printed).
    ``full``: gain s over the whole ranking, as IR tools compute it. Discount 1 / log2(rank + 1).
    """

    variant: str = "epic"
    direction: str = "t2v"

    @property
    def name(self) -> str:
        return f"nDCG_{self.direction}"

    def per_query(self, ranked):
        positive = ranked.gain > 0
        query, rank, relevance = ranked.query[positive], ranked.rank[positive], ranked.gain[positive]
        gain = np.exp2(relevance) - 1.0 if self.variant == "paper" else relevance
        counts = np.bincount(query, minlength=ranked.n_queries)
        counted = rank <= counts[query] if self.variant != "full" else np.ones(rank.size, bool)
        dcg = np.bincount(query[counted], weights=gain[counted] / np.log2(rank[counted] + 1.0), minlength=ranked.n_queries)
        # Ideal order: each query's gains sorted in decreasing order at ranks 1, 2, ...
        order = np.lexsort((-gain, query))
        starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
        ideal_rank = np.arange(order.size) - starts[query[order]] + 1.0
        idcg = np.bincount(query[order], weights=gain[order] / np.log2(ideal_rank + 1.0), minlength=ranked.n_queries)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(idcg > 0, dcg / idcg, np.nan)


_PATTERNS = {
    r"C@(\d+)": CorrectAt,
    r"R@(\d+)": RecallAt,
    r"P@(\d+)": PrecisionAt,
    r"Judged@(\d+)": JudgedAt,
}
NAMED = ("AP", "MdR", "MnR", "GMR", "nDCG", "nDCG_t2v", "nDCG_v2t")
DEFAULT_METRICS = ("C@1", "C@5", "C@10", "R@5", "P@5", "AP", "MdR", "MnR", "GMR", "nDCG", "Judged@10")


def parse_metric(name: str, ap: str = "standard", ndcg: str = "epic") -> list[Metric]:
    """The metric objects a name needs (``nDCG`` needs both directions; ``GMR`` needs C@1/5/10)."""
    if ap not in AP_VARIANTS:
        raise ValueError(f"unknown AP variant {ap!r}; choose one of {', '.join(AP_VARIANTS)}")
    if ndcg not in NDCG_VARIANTS:
        raise ValueError(f"unknown nDCG variant {ndcg!r}; choose one of {', '.join(NDCG_VARIANTS)}")
    for pattern, kind in _PATTERNS.items():
        match = re.fullmatch(pattern, name)
        if match:
            k = int(match.group(1))
            if k < 1:
                raise ValueError(f"metric {name!r}: the cutoff must be at least 1")
            return [kind(k)]
    if name == "AP":
        return [AveragePrecision(ap)]
    if name == "MdR":
        return [MedianRank()]
    if name == "MnR":
        return [MeanRank()]
    if name == "GMR":
        return [CorrectAt(1), CorrectAt(5), CorrectAt(10)]
    if name in ("nDCG", "nDCG_t2v", "nDCG_v2t"):
        directions = ("t2v", "v2t") if name == "nDCG" else (name.split("_")[1],)
        return [NDCG(ndcg, direction) for direction in directions]
    known = "C@K, R@K, P@K, Judged@K, " + ", ".join(NAMED)
    raise ValueError(f"unknown metric {name!r}; known metrics: {known}")


def geometric_mean_rank(c1: float, c5: float, c10: float) -> float:
    """GMR: the geometric mean of the aggregated C@1, C@5 and C@10."""
    return float(np.cbrt(c1 * c5 * c10))
