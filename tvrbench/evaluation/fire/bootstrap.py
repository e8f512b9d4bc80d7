"""§4.3 / Figure 4: how many annotated queries detect a given score difference, by bootstrap.

For each sample size N, N queries are drawn with replacement ``resamples`` times; each resample's
mean of a per-query metric is compared with the full-set mean, and the distribution of
|resample mean − full mean| is reported with its ``confidence`` quantile (the paper's 95th
percentile: with 1,000 queries a C@1 difference above that value is unlikely to be noise).

Everything is vectorized: resample indices are drawn in chunks of at most ``chunk_elements``
(bounded memory) from ``numpy.random.default_rng([seed, N])``, so a size's numbers depend only on
the seed and N, not on which other sizes or metrics were asked for, and they equal a plain loop
that draws ``rng.integers(0, n, N, dtype=int32)`` once per resample (benchmarks/bench_bootstrap.py). Queries where a metric is undefined (nan)
are left out of that metric.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tvrbench.evaluation.fire.config import FireConfig
from tvrbench.evaluation.fire.plots import bootstrap_figure
from tvrbench.results import Sources, Table, TablesOfJson, analysis_signature
from tvrbench.signature import Signature

HISTOGRAM_BINS = 50


def index_dtype(n: int):
    """32-bit resample indices when they fit: numpy draws them about three times faster."""
    return np.int32 if n < 2**31 else np.int64


def resample_means(values: np.ndarray, size: int, resamples: int, seed: int, chunk_elements: int = 4_000_000) -> np.ndarray:
    """Means of ``resamples`` bootstrap resamples of ``size`` entries, for each row of ``values``.

    ``values`` is (n,) or (m, n); the same resample indices serve every row (paired across
    metrics). Returns (resamples,) or (m, resamples). Resample r equals
    ``values[rng.integers(0, n, size, dtype=index_dtype(n))].mean()`` drawn in order from
    ``rng = numpy.random.default_rng([seed, size])``.
    """
    values = np.asarray(values, dtype=np.float64)
    rows = np.atleast_2d(values)
    n = rows.shape[1]
    if n == 0:
        raise ValueError("no queries to resample")
    if size < 1 or resamples < 1:
        raise ValueError(f"bootstrap size and resamples must be positive, got {size} and {resamples}")
    rng = np.random.default_rng([seed, size])
    per_chunk = max(1, chunk_elements // size)
    means = np.empty((rows.shape[0], resamples))
    for start in range(0, resamples, per_chunk):
        stop = min(resamples, start + per_chunk)
        # drawn as int32 (fast), gathered as intp (np.take converts other index types per call)
        indices = rng.integers(0, n, size=(stop - start, size), dtype=index_dtype(n)).astype(np.intp)
        for row, line in enumerate(rows):
            means[row, start:stop] = np.take(line, indices).sum(axis=1) / size
    return means if values.ndim == 2 else means[0]


@dataclass(frozen=True)
class SizeResult:
    """Distribution of |resample mean − full mean| for one metric and sample size."""

    size: int
    full_mean: float
    differences: np.ndarray
    confidence: float
    n_queries: int

    @property
    def quantile(self) -> float:
        return float(np.quantile(self.differences, self.confidence))

    def to_json(self) -> dict:
        counts, edges = np.histogram(self.differences, bins=HISTOGRAM_BINS)
        key = f"p{round(self.confidence * 100):d}"
        return {
            key: self.quantile,
            "confidence": self.confidence,
            "full_mean": self.full_mean,
            "mean": float(self.differences.mean()),
            "median": float(np.median(self.differences)),
            "max": float(self.differences.max()),
            "resamples": len(self.differences),
            "n_queries": self.n_queries,
            "histogram": {"edges": edges.tolist(), "counts": counts.tolist()},
        }


def bootstrap_differences(
    per_query: dict[str, np.ndarray],
    sizes=(500, 1000, 3000),
    resamples: int = 10_000,
    seed: int = 0,
    confidence: float = 0.95,
    chunk_elements: int = 4_000_000,
) -> dict[str, dict[int, SizeResult]]:
    """The §4.3 experiment for several per-query metric arrays: ``{metric: {N: SizeResult}}``."""
    metrics = list(per_query)
    groups: dict[bytes, list[str]] = {}
    for metric in metrics:
        groups.setdefault(np.isfinite(per_query[metric]).tobytes(), []).append(metric)
    results: dict[str, dict[int, SizeResult]] = {metric: {} for metric in metrics}
    for members in groups.values():
        finite = np.isfinite(per_query[members[0]])
        rows = np.stack([np.asarray(per_query[m], dtype=np.float64)[finite] for m in members])
        if rows.shape[1] == 0:
            raise ValueError(f"metric {members[0]} is undefined for every query")
        full = rows.mean(axis=1)
        for size in sizes:
            means = resample_means(rows, size, resamples, seed, chunk_elements)
            for row, metric in enumerate(members):
                differences = np.abs(means[row] - full[row])
                results[metric][size] = SizeResult(size, float(full[row]), differences, confidence, rows.shape[1])
    return results


def bootstrap_json(results: dict[str, dict[int, SizeResult]], signature: str) -> dict:
    """``{metric: {"N": {...}}}`` with sizes as strings; every entry carries the signature."""
    return {
        metric: {str(size): {**result.to_json(), "signature": signature} for size, result in by_size.items()} for metric, by_size in results.items()
    }


def queries_for_difference(by_size: dict[int, SizeResult], difference: float) -> int:
    """Queries needed for the bootstrap quantile to fall to ``difference``.

    The quantile shrinks as 1/√N, so c = mean over sizes of quantile·√N and N = ⌈(c / difference)²⌉.
    """
    if difference <= 0:
        raise ValueError(f"the detectable difference must be positive, got {difference}")
    scale = np.mean([result.quantile * math.sqrt(size) for size, result in by_size.items()])
    return max(1, math.ceil((scale / difference) ** 2))


@dataclass(frozen=True)
class PairedTest:
    """Paired bootstrap test of mean(a) − mean(b) over the same queries."""

    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    confidence: float
    resamples: int
    n_queries: int

    def to_json(self) -> dict:
        return dict(self.__dict__)


def paired_bootstrap_test(
    a: np.ndarray, b: np.ndarray, resamples: int = 10_000, seed: int = 0, confidence: float = 0.95, chunk_elements: int = 4_000_000
) -> PairedTest:
    """Resample queries (paired) to test whether two models' mean per-query scores differ.

    The confidence interval is the percentile interval of the resampled mean differences. The
    two-sided p-value uses the null distribution obtained by centring those resampled means on
    zero (Efron & Tibshirani 1993, §16.4): p = (1 + #{|d*_r − d| ≥ |d|}) / (R + 1).
    Queries where either score is nan are left out.
    """
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"the two models were scored on different query sets ({a.shape} vs {b.shape})")
    keep = np.isfinite(a) & np.isfinite(b)
    differences = a[keep] - b[keep]
    observed = float(differences.mean())
    means = resample_means(differences, len(differences), resamples, seed, chunk_elements)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    extreme = int(np.sum(np.abs(means - observed) >= abs(observed)))
    return PairedTest(observed, float(low), float(high), (1 + extreme) / (resamples + 1), confidence, resamples, len(differences))


def bootstrap_tables(payload: dict, model: str | None = None) -> list[Table]:
    """The §4.3 table from :class:`BootstrapResult`'s JSON: per metric the full mean and the quantile per size."""
    first = next(iter(payload.values()))
    sizes = list(first)
    confidence = first[sizes[0]]["confidence"]
    quantile = f"p{round(confidence * 100):d}"
    rows = [[metric, f"{by_size[sizes[0]]['full_mean']:.4f}", *(f"{by_size[s][quantile]:.4f}" for s in sizes)] for metric, by_size in payload.items()]
    title = f"bootstrap |resample mean − full mean|, {confidence:.0%} quantile (§4.3)"
    return [Table(f"{model}: {title}" if model else title, ["metric", "full", *sizes], rows)]


@dataclass(frozen=True)
class BootstrapResult(TablesOfJson):
    """§4.3 for one model: per metric and sample size, how far a resample's mean strays from the full mean."""

    model: str
    by_metric: dict[str, dict[int, SizeResult]]
    signature: Signature

    def tables_of(self, payload: dict) -> list[Table]:
        return bootstrap_tables(payload, self.model)

    def to_json(self) -> dict:
        return bootstrap_json(self.by_metric, str(self.signature))

    def figures(self):
        """Figure 4 per metric."""
        for metric, by_size in self.by_metric.items():
            yield f"fig4_bootstrap_{self.model}_{_file_part(metric)}", bootstrap_figure(by_size, metric, self.model)


def _file_part(metric: str) -> str:
    """A metric's name as part of a file name: ``C@1`` → ``Cat1``, ``AP(variant=fire)`` → ``AP_variant=fire``."""
    return metric.replace("@", "at").replace("(", "_").replace(")", "")


def bootstrap_analysis(
    scores: np.ndarray, judgments, settings: FireConfig | None = None, model: str = "model", sources: Sources | None = None
) -> BootstrapResult:
    """§4.3 / Figure 4 for one model's score matrix: the engine's per-query metrics, resampled."""
    settings = settings or FireConfig()
    boot = settings.bootstrap
    result = settings.evaluate(scores, judgments, boot.metrics)
    names = [settings.metric_name(metric) for metric in boot.metrics]
    by_metric = bootstrap_differences(
        {m: result.per_query[m] for m in names}, boot.sizes, boot.resamples, boot.seed, boot.confidence, boot.chunk_elements
    )
    signature = analysis_signature(
        "fire-bootstrap",
        sources,
        {"sizes": boot.sizes, "resamples": boot.resamples, "seed": boot.seed, "confidence": boot.confidence, "engine": result.signature.nested()},
    )
    return BootstrapResult(model, by_metric, signature)


def paired_tables(payload: dict) -> list[Table]:
    """The paired test's table from :class:`PairedResult`'s JSON."""
    tests = payload["tests"]
    confidence = next(iter(tests.values()))["confidence"]
    rows = [[m, f"{t['difference']:+.4f}", f"[{t['ci_low']:+.4f}, {t['ci_high']:+.4f}]", f"{t['p_value']:.4g}"] for m, t in tests.items()]
    return [
        Table(f"Paired bootstrap: {payload['model_a']} − {payload['model_b']}", ["metric", "difference", f"{confidence:.0%} CI", "p-value"], rows)
    ]


@dataclass(frozen=True)
class PairedResult(TablesOfJson):
    """The paired bootstrap test of two models (first − second), per metric."""

    model_a: str
    model_b: str
    tests: dict[str, PairedTest]
    signature: Signature
    tables_of = staticmethod(paired_tables)

    def to_json(self) -> dict:
        return {
            "model_a": self.model_a,
            "model_b": self.model_b,
            "tests": {m: t.to_json() for m, t in self.tests.items()},
            "signature": str(self.signature),
        }


def paired_analysis(scores: dict[str, np.ndarray], judgments, settings: FireConfig | None = None, sources: Sources | None = None) -> PairedResult:
    """The paired test of the two models of ``{model: score matrix}`` on every bootstrap metric."""
    settings = settings or FireConfig()
    boot = settings.bootstrap
    (name_a, a), (name_b, b) = scores.items()
    result_a, result_b = (settings.evaluate(matrix, judgments, boot.metrics) for matrix in (a, b))
    names = [settings.metric_name(metric) for metric in boot.metrics]
    tests = {
        m: paired_bootstrap_test(result_a.per_query[m], result_b.per_query[m], boot.resamples, boot.seed, boot.confidence, boot.chunk_elements)
        for m in names
    }
    signature = analysis_signature(
        "fire-paired", sources, {"resamples": boot.resamples, "seed": boot.seed, "confidence": boot.confidence, "engine": result_a.signature.nested()}
    )
    return PairedResult(name_a, name_b, tests, signature)
