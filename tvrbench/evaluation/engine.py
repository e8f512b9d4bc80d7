"""Score a model's matrix with every label available, in one pass over the matrix.

Rows of ``scores`` are queries (captions), columns are videos. The ranks of all labelled cells are
found at once (:mod:`tvrbench.evaluation.ranking`), for text-to-video along rows and, when nDCG is
asked for, video-to-text along columns; every metric then reads those ranks.

With a graded relevance matrix (a semantic proxy, SPEC §4) nDCG uses it, fused with the labels
(SPEC §2): ``fusion="judged"`` sets judged-relevant pairs to 1 and judged-irrelevant pairs to 0,
``"relevant"`` only raises relevant pairs to 1, ``"none"`` keeps the proxy as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import sparse

from tvrbench.evaluation.labels import Judgments
from tvrbench.evaluation.metrics import (
    DEFAULT_METRICS,
    NDCG,
    CorrectAt,
    Metric,
    RankedQueries,
    geometric_mean_rank,
    parse_metric,
)
from tvrbench.evaluation.ranking import target_ranks
from tvrbench.io.shards import ScoreShards
from tvrbench.signature import Signature

FUSION_POLICIES = ("judged", "relevant", "none")
_RELEVANCE_BLOCK_CELLS = 1 << 24  # cells of a dense relevance matrix fused and ranked at a time


@dataclass
class EvaluationResult:
    metrics: dict[str, float]
    per_query: dict[str, np.ndarray]
    n_queries: int
    signature: str
    original: "EvaluationResult | None" = None
    settings: dict[str, str] = field(default_factory=dict)

    @property
    def delta(self) -> dict[str, float] | None:
        if self.original is None:
            return None
        return {name: value - self.original.metrics[name] for name, value in self.metrics.items()}

    def to_json(self) -> dict:
        payload = {"metrics": self.metrics, "signature": self.signature, "n_queries": self.n_queries}
        if self.original is not None:
            payload["original"] = self.original.metrics
            payload["delta"] = self.delta
        return payload


def _metric_objects(names, ap: str, ndcg: str) -> tuple[list[str], list[Metric]]:
    requested, objects = [], {}
    for name in names:
        name = name.strip()
        if not name or name in requested:
            continue
        requested.append(name)
        for metric in parse_metric(name, ap=ap, ndcg=ndcg):
            objects.setdefault(metric.name, metric)
    return requested, list(objects.values())


def _ranked(n_queries: int, targets: sparse.csr_matrix, ranks: np.ndarray, judged: np.ndarray | None = None) -> RankedQueries:
    gain = np.asarray(targets.data, dtype=np.float64)
    return RankedQueries(n_queries, targets.indptr, ranks, gain, np.ones(gain.size, bool) if judged is None else judged)


def _fuse(block: np.ndarray, judgments: Judgments, rows: slice | None, columns: slice | None, fusion: str) -> np.ndarray:
    """Relevance of a block with the labels laid over it (rows/columns select the label block)."""
    fused = np.array(block, dtype=np.float64)
    if fusion == "none":
        return fused
    positive = judgments.positive[rows] if columns is None else judgments.positive[:, columns]
    fused[positive.nonzero()] = 1.0
    if fusion == "judged":
        irrelevant = judgments.irrelevant[rows] if columns is None else judgments.irrelevant[:, columns]
        fused[irrelevant.nonzero()] = 0.0
    return fused


def _graded_ndcg(scores, relevance, judgments, ndcg_metrics, ties, fusion) -> dict[str, np.ndarray]:
    """nDCG per query with a dense relevance matrix, in blocks so memory stays bounded."""
    n_rows, n_columns = scores.shape
    values: dict[str, np.ndarray] = {}
    for metric in ndcg_metrics:
        if metric.direction == "t2v":
            step = max(1, _RELEVANCE_BLOCK_CELLS // n_columns)
            parts = []
            for start in range(0, n_rows, step):
                rows = slice(start, min(n_rows, start + step))
                gains = sparse.csr_matrix(_fuse(relevance[rows], judgments, rows, None, fusion))
                ranks, _ = target_ranks(scores[rows], rows=gains, ties=ties)
                parts.append(metric.per_query(_ranked(gains.shape[0], gains, ranks)))
            values[metric.name] = np.concatenate(parts)
        else:
            step = max(1, _RELEVANCE_BLOCK_CELLS // n_rows)
            parts = []
            for start in range(0, n_columns, step):
                columns = slice(start, min(n_columns, start + step))
                gains = sparse.csr_matrix(_fuse(relevance[:, columns], judgments, None, columns, fusion).T)
                _, ranks = target_ranks(scores[:, columns], columns=gains, ties=ties)
                parts.append(metric.per_query(_ranked(gains.shape[0], gains, ranks)))
            values[metric.name] = np.concatenate(parts)
    return values


def evaluate(
    scores: np.ndarray | ScoreShards,
    judgments: Judgments,
    metrics=DEFAULT_METRICS,
    ties: str = "stable",
    ap: str = "standard",
    ndcg: str = "epic",
    relevance: np.ndarray | None = None,
    fusion: str = "judged",
    signature_fields: dict[str, object] | None = None,
    client=None,
    checkpoint: str | Path | None = None,
) -> EvaluationResult:
    """Every requested metric of one model; with extra labels also the original-only result.

    ``metrics``: names such as ``C@1``, ``AP``, ``nDCG`` (see :mod:`tvrbench.evaluation.metrics`).
    ``relevance``: optional graded relevance, same shape as ``scores``, values in [0, 1].
    ``signature_fields``: settings the caller knows (label sources' digests, proxy name) to record.
    ``scores`` may be :class:`~tvrbench.io.shards.ScoreShards`, a matrix too big for memory: it is
    then read shard by shard (:mod:`tvrbench.evaluation.sharded`), on the Dask ``client`` if given,
    keeping finished shards' results in the ``checkpoint`` folder if given; the metrics are the same.
    """
    sharded = isinstance(scores, ScoreShards)
    scores = scores if sharded or isinstance(scores, np.memmap) else np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"scores must be a queries × videos matrix, got shape {scores.shape}")
    if judgments.shape != scores.shape:
        raise ValueError(f"labels cover {judgments.shape} query-video pairs but scores have shape {scores.shape}")
    if fusion not in FUSION_POLICIES:
        raise ValueError(f"unknown fusion policy {fusion!r}; choose one of {', '.join(FUSION_POLICIES)}")
    if relevance is not None and relevance.shape != scores.shape:
        raise ValueError(f"relevance has shape {relevance.shape} but scores have shape {scores.shape}")
    requested, objects = _metric_objects(metrics, ap, ndcg)
    n_queries, n_videos = scores.shape

    rows = judgments.gains()  # row targets: every judged cell
    ndcg_metrics = [m for m in objects if isinstance(m, NDCG)]
    binary_ndcg = ndcg_metrics and relevance is None
    columns = judgments.positive.T.tocsr() if binary_ndcg and any(m.direction == "v2t" for m in ndcg_metrics) else None
    # nDCG with a cutoff (epic, paper) needs only the column ranks within each video's cutoff.
    top_only = columns is not None and ndcg != "full"
    if sharded:
        from tvrbench.evaluation.sharded import Graded, sharded_ranks

        graded = Graded(relevance, judgments, tuple(ndcg_metrics), fusion) if ndcg_metrics and relevance is not None else None
        ranks = sharded_ranks(scores, rows, columns, ties, top_only, graded, client=client, checkpoint=checkpoint)
        row_ranks, column_ranks = ranks.row_ranks, ranks.column_ranks
    else:
        row_ranks, column_ranks = target_ranks(scores, rows=rows, columns=columns, ties=ties, columns_top_only=top_only)

    t2v = _ranked(n_queries, rows, row_ranks)
    per_query: dict[str, np.ndarray] = {}
    for metric in objects:
        if isinstance(metric, NDCG):
            if not binary_ndcg:
                continue
            if metric.direction == "t2v":
                per_query[metric.name] = metric.per_query(t2v)
            else:
                per_query[metric.name] = metric.per_query(_ranked(n_videos, columns, column_ranks))
        else:
            per_query[metric.name] = metric.per_query(t2v)
    if ndcg_metrics and relevance is not None:
        per_query.update(ranks.graded if sharded else _graded_ndcg(scores, relevance, judgments, ndcg_metrics, ties, fusion))

    aggregates = {metric.name: metric.aggregate(per_query[metric.name]) for metric in objects}
    values: dict[str, float] = {}
    for name in requested:
        if name == "GMR":
            values[name] = geometric_mean_rank(*(aggregates[CorrectAt(k).name] for k in (1, 5, 10)))
        elif name == "nDCG":
            values[name] = 0.5 * (aggregates["nDCG_t2v"] + aggregates["nDCG_v2t"])
        else:
            values[name] = aggregates[name]
    if "nDCG" in requested:
        values.update({name: aggregates[name] for name in ("nDCG_t2v", "nDCG_v2t")})

    settings = {
        "task": "t2v",
        "ties": ties,
        "ap": ap if any(name == "AP" for name in requested) else "n/a",
        "ndcg": ndcg if ndcg_metrics else "n/a",
        "labels": "+".join(judgments.sources),
        "relevance": "proxy" if relevance is not None else "labels",
        "fusion": fusion if relevance is not None else "n/a",
        "queries": n_queries,
        "videos": n_videos,
    }
    settings.update({key: str(value) for key, value in (signature_fields or {}).items()})
    signature = str(Signature(settings))
    original = None
    if judgments.has_extra_labels:
        original = evaluate(scores, judgments.original_only(), requested, ties, ap, ndcg, relevance, fusion, signature_fields,
                            client, checkpoint)
    return EvaluationResult(values, per_query, n_queries, signature, original, settings)
