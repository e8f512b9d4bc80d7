"""Retrieval metrics as small named objects (SPEC §2), computed from the ranks of labelled items.

A metric name parses into a metric object the way ir_measures does: ``C@5`` is Correct@5, ``R@10``
Recall@10, ``P@5`` Precision@5, ``Judged@10``, ``AP``, ``MdR``, ``MnR``, ``GMR``, ``nDCG`` (mean of
both directions) with its halves ``nDCG_t2v`` and ``nDCG_v2t``; a variant other than the default is
part of the name (``AP(variant=fire)``, ``nDCG(variant=paper)``), and ``str(metric)`` gives the name
back. Every metric maps a :class:`RankedQueries` to one value per query; the aggregate is the mean
over the queries where the metric is defined (a query without any positive has no C@K, AP, rank or
nDCG, as in trec_eval), except MdR (median). GMR and nDCG are composites: their value combines their
parts' aggregates (the geometric mean of C@1, C@5, C@10; the mean of both directions).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import TYPE_CHECKING, ClassVar

import numba
import numpy as np

from tvrbench.evaluation.choices import AP_VARIANTS, NDCG_VARIANTS
from tvrbench.evaluation.elementary import cube_root, exp2m1, log2

if TYPE_CHECKING:
    from scipy import sparse

FIRE_AP_DEPTH = 20  # the released FIRE code ranks only the top 20

# Per-query loops over the labelled items, compiled: each is the plain definition, and runs in
# well under a millisecond for 60,000 queries (a dozen NumPy passes over the items cost several).


@numba.njit(cache=True)
def _positives(indptr, rank, gain, by_rank):
    """Each query's positives (gain > 0) with their gains, as CSR arrays; in increasing rank
    within each query if ``by_rank``."""
    n_queries = indptr.size - 1
    pointer = np.zeros(n_queries + 1, np.int64)
    for query in range(n_queries):
        count = 0
        for item in range(indptr[query], indptr[query + 1]):
            count += gain[item] > 0
        pointer[query + 1] = pointer[query] + count
    ranks = np.empty(pointer[n_queries], np.float64)
    gains = np.empty(pointer[n_queries], np.float64)
    for query in range(n_queries):
        first, last = pointer[query], pointer[query + 1]
        j = first
        for item in range(indptr[query], indptr[query + 1]):
            if gain[item] > 0:
                ranks[j], gains[j] = rank[item], gain[item]
                j += 1
        if not by_rank:
            continue
        if last - first > 64:
            order = np.argsort(ranks[first:last], kind="mergesort")
            ranks[first:last], gains[first:last] = ranks[first:last][order], gains[first:last][order]
        else:  # insertion sort, stable: few positives per query, often in order already
            for j in range(first + 1, last):
                r, g, i = ranks[j], gains[j], j
                while i > first and ranks[i - 1] > r:
                    ranks[i], gains[i] = ranks[i - 1], gains[i - 1]
                    i -= 1
                ranks[i], gains[i] = r, g
    return pointer, ranks, gains


@numba.njit(cache=True)
def _in_rank_order(indptr, rank):
    """Whether every query's items are in increasing rank (always, with one item per query)."""
    for query in range(indptr.size - 1):
        for item in range(indptr[query] + 1, indptr[query + 1]):
            if rank[item] < rank[item - 1]:
                return False
    return True


@numba.njit(cache=True)
def _first_ranks(pointer, ranks):
    """Per query, the first of its ranks (NaN without any)."""
    first = np.full(pointer.size - 1, np.nan)
    for query in range(pointer.size - 1):
        if pointer[query + 1] > pointer[query]:
            first[query] = ranks[pointer[query]]
    return first


@numba.njit(cache=True)
def _count_within(indptr, rank, selected, k):
    """Per query, its selected items ranked in the top ``k``."""
    counts = np.zeros(indptr.size - 1, np.float64)
    for query in range(indptr.size - 1):
        for item in range(indptr[query], indptr[query + 1]):
            counts[query] += selected[item] and rank[item] <= k
    return counts


@numba.njit(cache=True)
def _average_precision(pointer, ranks, depth):
    """Per query: the sum of precision at each positive ranked within ``depth``, and how many."""
    n_queries = pointer.size - 1
    total = np.zeros(n_queries, np.float64)
    found = np.zeros(n_queries, np.float64)
    for query in range(n_queries):
        for j in range(pointer[query], pointer[query + 1]):
            if ranks[j] <= depth:
                total[query] += (j - pointer[query] + 1) / ranks[j]
                found[query] += 1
    return total, found


@numba.njit(cache=True)
def _discount_table(n):
    table = np.empty(n, np.float64)
    for k in range(n):
        table[k] = 1.0 / log2(k + 2.0)
    return table


@cache
def _discounts_to(size: int) -> np.ndarray:
    table = _discount_table(size)
    table.flags.writeable = False
    return table


def discounts(n: int) -> np.ndarray:
    """``1 / log2(k + 2)`` for k < n, the discount of rank k + 1: a table (one log per item is slow),
    kept between calls in sizes of powers of two (a log costs 0.1 µs: it is exactly rounded)."""
    return _discounts_to(1 << max(6, (n - 1).bit_length()))[:n]


@numba.njit(cache=True)
def _ideal_dcg(gains, discounts):
    """DCG of the gains in decreasing order. A function of its own: sorting inline made every
    query of ``_ndcg`` pay for an array's reference count, doubling its time."""
    ideal = np.sort(gains)[::-1]
    total = 0.0
    for j in range(ideal.size):
        total += ideal[j] * discounts[j]
    return total


@numba.njit(cache=True)
def _ndcg(pointer, ranks, gains, discounts, exponential, cut_at_positives):
    """Per query DCG / ideal DCG over its positives (gain 2^s - 1 if ``exponential``); with
    ``cut_at_positives`` only ranks up to the number of positives count. ``discounts``: from
    :func:`discounts`, for every whole rank that counts. NaN without positives."""
    n_queries = pointer.size - 1
    values = np.full(n_queries, np.nan)
    gain = gains
    if exponential:
        gain = np.empty_like(gains)
        for j in range(gains.size):
            gain[j] = exp2m1(gains[j])
    for query in range(n_queries):
        first, last = pointer[query], pointer[query + 1]
        dcg = 0.0
        for j in range(first, last):  # without a jump on whether a rank counts: it is random
            rank = ranks[j]
            counted = not cut_at_positives or rank <= last - first
            if cut_at_positives:  # a rank that does not count may take any finite discount
                rank = min(rank, discounts.size)
            k = int(rank) - 1
            exact = k + 1 == rank and k < discounts.size  # fractional ranks: average ties
            if exact:  # a jump, but almost always taken: a select computed the log for every item
                discount = discounts[k]
            else:
                discount = 1.0 / log2(rank + 1.0)
            dcg += counted * gain[j] * discount
        decreasing = True  # binary gains always are
        for j in range(first + 1, last):
            decreasing &= gain[j] <= gain[j - 1]
        idcg = 0.0
        if decreasing:
            for j in range(first, last):
                idcg += gain[j] * discounts[j - first]
        else:
            idcg = _ideal_dcg(gain[first:last], discounts)
        if idcg > 0:
            values[query] = dcg / idcg
    return values


@dataclass
class RankedQueries:
    """Labelled items of every query with their ranks, grouped by query as CSR arrays.

    ``indptr``: query q's items are ``[indptr[q], indptr[q + 1])``; ``rank``: each item's 1-based
    rank (fractional under the ``average`` tie rule); ``gain``: its relevance (binary positives:
    1 / 0); ``judged``: whether it carries any label at all (for Judged@K).
    """

    n_queries: int
    indptr: np.ndarray
    rank: np.ndarray
    gain: np.ndarray
    judged: np.ndarray
    _by_rank: tuple | None = field(default=None, init=False, repr=False)
    _grouped: tuple | None = field(default=None, init=False, repr=False)
    _first: np.ndarray | None = field(default=None, init=False, repr=False)
    _counts: np.ndarray | None = field(default=None, init=False, repr=False)
    _without_positive: np.ndarray | None = field(default=None, init=False, repr=False)
    _within: dict = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def from_targets(cls, n_queries: int, targets: sparse.csr_matrix, ranks: np.ndarray, judged: np.ndarray | None = None) -> RankedQueries:
        """The labelled items of ``targets`` (their values are the gains) at ``ranks``, every one judged unless ``judged`` says."""
        gain = np.asarray(targets.data, dtype=np.float64)
        return cls(n_queries, targets.indptr, ranks, gain, np.ones(gain.size, bool) if judged is None else judged)

    def positives(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(pointer, ranks, gains): each query's positives as CSR arrays; computed once."""
        if self._grouped is None:
            self._grouped = self._by_rank or self._own_positives or _positives(self.indptr, self.rank, self.gain, False)
        return self._grouped

    def positives_by_rank(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The same, in increasing rank within each query; computed once."""
        if self._by_rank is None:
            own = self._own_positives
            in_order = own is not None and _in_rank_order(self.indptr, self.rank)
            self._by_rank = own if in_order else _positives(self.indptr, self.rank, self.gain, True)
        return self._by_rank

    @cached_property
    def _own_positives(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """The items as CSR arrays when every one is a positive (no extra labels), else None."""
        return (self.indptr.astype(np.int64), self.rank, self.gain) if (self.gain > 0).all() else None

    def positive_counts(self) -> np.ndarray:
        if self._counts is None:
            self._counts = np.diff(self.positives()[0])
        return self._counts

    def positives_within(self, k: int) -> np.ndarray:
        """Number of positives ranked in the top ``k`` of each query; computed once per k."""
        if k not in self._within:
            self._within[k] = _count_within(self.indptr, self.rank, self.gain > 0, k)
        return self._within[k]

    def defined(self, values: np.ndarray) -> np.ndarray:
        """``values`` with NaN for queries without any positive."""
        if self._without_positive is None:
            self._without_positive = np.flatnonzero(self.positive_counts() == 0)
        if self._without_positive.size:
            values = values.copy()
            values[self._without_positive] = np.nan
        return values

    def first_positive_rank(self) -> np.ndarray:
        """Rank of each query's best positive (NaN without one); read by C@K, MdR, MnR."""
        if self._first is None:
            self._first = _first_ranks(*self.positives_by_rank()[:2])
        return self._first


def _median_rank(ranks: np.ndarray) -> float:
    """``numpy.median`` of ranks, by counting. Ranks are whole or, under average ties, half numbers,
    mostly small and repeated a lot, and NumPy's selection is slow on repeats. Anything else, NaN
    included, goes to ``numpy.median``."""
    halves = ranks * 2.0
    if not ranks.size or not (np.isfinite(halves).all() and (halves == np.floor(halves)).all() and halves.min() >= 0):
        return float(np.median(ranks))
    below = np.cumsum(np.bincount(halves.astype(np.int64)))  # values at most h / 2, for each h
    middle = np.searchsorted(below, [(ranks.size - 1) // 2, ranks.size // 2], side="right")
    return float(middle.sum() / 4.0)


def _over_defined(summary, values: np.ndarray) -> float:
    """``summary`` (mean, median) of the values of the queries where a metric is defined (not
    NaN). Usually that is all of them, and the summary of all values, NaN-free, is the answer."""
    value = float(summary(values)) if values.size else float("nan")
    if not np.isnan(value):
        return value
    defined = values[~np.isnan(values)]
    return float(summary(defined)) if defined.size else float("nan")


class Metric:
    """A named per-query measure; subclasses set ``family`` and implement :meth:`per_query`.

    Its name (``str(metric)``, the key of its value in a result) is ir_measures' form: the family, its
    parameters that differ from their defaults in parentheses, then the cutoff, e.g. ``C@5``, ``AP``,
    ``AP(variant=fire)``, ``nDCG_t2v(variant=paper)``. :func:`parse_metric` reads the name back.
    """

    family: str
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {}  # parameter -> its allowed values, the default first
    cutoff: int | None = None
    direction = "t2v"

    def per_query(self, ranked: RankedQueries) -> np.ndarray:
        raise NotImplementedError

    def aggregate(self, values: np.ndarray) -> float:
        return _over_defined(np.mean, values)

    def __str__(self) -> str:
        changed = [f"{name}={getattr(self, name)}" for name, allowed in self.parameters.items() if getattr(self, name) != allowed[0]]
        return self.family + (f"({','.join(changed)})" if changed else "") + ("" if self.cutoff is None else f"@{self.cutoff}")

    __repr__ = __str__


@dataclass(frozen=True, repr=False)
class _AtCutoff(Metric):
    """A metric of the top ``k``, named ``<family>@k``."""

    k: int

    @property
    def cutoff(self) -> int:
        return self.k


class CorrectAt(_AtCutoff):
    """1 if a positive is in the top k (the "Recall@K" of prior text-video work)."""

    family = "C"

    def per_query(self, ranked):
        return ranked.defined((ranked.first_positive_rank() <= self.k).astype(np.float64))


class RecallAt(_AtCutoff):
    """Positives in the top k over all positives of the query (the textbook recall)."""

    family = "R"

    def per_query(self, ranked):
        with np.errstate(invalid="ignore", divide="ignore"):
            return ranked.defined(ranked.positives_within(self.k) / ranked.positive_counts())


class PrecisionAt(_AtCutoff):
    family = "P"

    def per_query(self, ranked):
        return ranked.defined(ranked.positives_within(self.k) / self.k)


class JudgedAt(_AtCutoff):
    """Share of the top k that carries any label: low values warn that a model was never pooled."""

    family = "Judged"

    def per_query(self, ranked):
        return _count_within(ranked.indptr, ranked.rank, ranked.judged, self.k) / self.k


@dataclass(frozen=True, repr=False)
class AveragePrecision(Metric):
    """AP over the full ranking (``standard``), or the FIRE code's AP over the top 20 divided by
    the positives retrieved there (``fire``, 0 when none)."""

    variant: str = AP_VARIANTS[0]

    family = "AP"
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {"variant": AP_VARIANTS}

    def per_query(self, ranked):
        pointer, ranks, _ = ranked.positives_by_rank()
        if self.variant == "standard":
            total, _ = _average_precision(pointer, ranks, np.inf)
            with np.errstate(invalid="ignore", divide="ignore"):
                return ranked.defined(total / ranked.positive_counts())
        total, found = _average_precision(pointer, ranks, FIRE_AP_DEPTH)
        return ranked.defined(np.divide(total, found, out=np.zeros(ranked.n_queries), where=found > 0))


@dataclass(frozen=True, repr=False)
class MedianRank(Metric):
    """Median over queries of the rank of the first positive."""

    family = "MdR"

    def per_query(self, ranked):
        return ranked.first_positive_rank()

    def aggregate(self, values):
        return _over_defined(_median_rank, values)


@dataclass(frozen=True, repr=False)
class MeanRank(Metric):
    family = "MnR"

    def per_query(self, ranked):
        return ranked.first_positive_rank()


@dataclass(frozen=True, repr=False)
class NDCG(Metric):
    """nDCG with graded relevance (Wray et al. eq. 2-3) in one direction (``nDCG_t2v``, ``nDCG_v2t``).

    ``epic`` (the released EPIC-KITCHENS / JPoSE code): gain = s, and only the first k ranks count,
    k = number of items with s > 0. ``paper``: the same with gain 2^s - 1 (eq. 2 as printed).
    ``full``: gain s over the whole ranking, as IR tools compute it. Discount 1 / log2(rank + 1).
    """

    variant: str = NDCG_VARIANTS[0]
    direction: str = "t2v"

    parameters: ClassVar[dict[str, tuple[str, ...]]] = {"variant": NDCG_VARIANTS}

    @property
    def family(self) -> str:
        return f"nDCG_{self.direction}"

    def per_query(self, ranked):
        pointer, ranks, gains = ranked.positives()
        depth = np.diff(pointer).max(initial=0)  # the ranks that count: up to the positives' number, all in ``full``
        if self.variant == "full" and ranks.size:
            depth = max(depth, int(ranks.max()))
        return _ndcg(pointer, ranks, gains, discounts(int(depth)), self.variant == "paper", self.variant != "full")


class Composite(Metric):
    """A metric made of other metrics: its value is :meth:`combine` of their aggregates, and it has no
    value per query. ``shows_parts``: whether a result lists the parts' values beside it."""

    shows_parts = False

    @property
    def parts(self) -> tuple[Metric, ...]:
        raise NotImplementedError

    def combine(self, values: list[float]) -> float:
        raise NotImplementedError


@dataclass(frozen=True, repr=False)
class GeometricMeanRank(Composite):
    """GMR: the geometric mean of the aggregated C@1, C@5 and C@10."""

    family = "GMR"

    @property
    def parts(self):
        return CorrectAt(1), CorrectAt(5), CorrectAt(10)

    def combine(self, values):
        c1, c5, c10 = values
        return cube_root(c1 * c5 * c10)


@dataclass(frozen=True, repr=False)
class MeanNDCG(Composite):
    """``nDCG``: the mean of its two directions' aggregates, ``nDCG_t2v`` and ``nDCG_v2t``, which a
    result shows beside it."""

    variant: str = NDCG_VARIANTS[0]

    family = "nDCG"
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {"variant": NDCG_VARIANTS}
    shows_parts = True

    @property
    def parts(self):
        return NDCG(self.variant, "t2v"), NDCG(self.variant, "v2t")

    def combine(self, values):
        t2v, v2t = values
        return 0.5 * (t2v + v2t)


# Name -> (class, the fields the name fixes). A class with a ``k`` field needs a cutoff (``C@5``).
_FAMILIES: dict[str, tuple[type[Metric], dict]] = {
    "C": (CorrectAt, {}),
    "R": (RecallAt, {}),
    "P": (PrecisionAt, {}),
    "Judged": (JudgedAt, {}),
    "AP": (AveragePrecision, {}),
    "MdR": (MedianRank, {}),
    "MnR": (MeanRank, {}),
    "GMR": (GeometricMeanRank, {}),
    "nDCG": (MeanNDCG, {}),
    "nDCG_t2v": (NDCG, {"direction": "t2v"}),
    "nDCG_v2t": (NDCG, {"direction": "v2t"}),
}
_NAME = re.compile(r"(?P<family>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<parameters>[^()]*)\))?(?:@(?P<cutoff>\d+))?")
KNOWN = "C@K, R@K, P@K, Judged@K, AP, MdR, MnR, GMR, nDCG, nDCG_t2v, nDCG_v2t; AP and nDCG take (variant=...)"
DEFAULT_METRICS = ("C@1", "C@5", "C@10", "R@5", "P@5", "AP", "MdR", "MnR", "GMR", "nDCG", "Judged@10")


def parse_metric(name: str, ap: str = "standard", ndcg: str = "epic") -> Metric:
    """The metric a name denotes; ``ap`` and ``ndcg`` are the variants of AP and nDCG named without one
    (``parse_metric("AP", ap="fire") == parse_metric("AP(variant=fire)")``)."""
    if ap not in AP_VARIANTS:
        raise ValueError(f"unknown AP variant {ap!r}; choose one of {', '.join(AP_VARIANTS)}")
    if ndcg not in NDCG_VARIANTS:
        raise ValueError(f"unknown nDCG variant {ndcg!r}; choose one of {', '.join(NDCG_VARIANTS)}")
    match = _NAME.fullmatch(name)
    if not match or match["family"] not in _FAMILIES:
        raise ValueError(f"unknown metric {name!r}; known metrics: {KNOWN}")
    kind, fields = _FAMILIES[match["family"]]
    takes_cutoff = "k" in kind.__dataclass_fields__
    if takes_cutoff != (match["cutoff"] is not None):
        needs = f"needs a cutoff, e.g. {match['family']}@10" if takes_cutoff else "takes no cutoff"
        raise ValueError(f"metric {name!r}: {match['family']} {needs}")
    arguments = dict(fields)
    if takes_cutoff:
        arguments["k"] = int(match["cutoff"])
        if arguments["k"] < 1:
            raise ValueError(f"metric {name!r}: the cutoff must be at least 1")
    if "variant" in kind.parameters:
        arguments["variant"] = ap if kind is AveragePrecision else ndcg
    arguments.update(_parameters(name, match["family"], kind.parameters, match["parameters"]))
    return kind(**arguments)


def _parameters(name: str, family: str, accepted: dict[str, tuple[str, ...]], text: str | None) -> dict[str, str]:
    """The ``key=value`` parameters written in a name, each checked against the ``accepted`` ones."""
    given = {}
    for part in filter(None, (text or "").split(",")):
        key, equals, value = (piece.strip() for piece in part.partition("="))
        if not equals:
            raise ValueError(f"metric {name!r}: write parameters as key=value, e.g. AP(variant=fire)")
        if key not in accepted:
            takes = f"takes {', '.join(accepted)}" if accepted else "takes no parameters"
            raise ValueError(f"metric {name!r}: unknown parameter {key!r}; {family} {takes}")
        if value not in accepted[key]:
            raise ValueError(f"metric {name!r}: unknown {key} {value!r}; choose one of {', '.join(accepted[key])}")
        given[key] = value
    return given
