"""Score a model's matrix with every label available, in one pass over the matrix.

Rows of ``scores`` are queries (captions), columns are videos. The ranks of all labelled cells are
found at once (:mod:`tvrbench.evaluation.ranking`), for text-to-video along rows and, when nDCG is
asked for, video-to-text along columns; every metric then reads those ranks.

With a graded relevance matrix (a semantic proxy, SPEC §4) nDCG uses it, fused with the labels
(SPEC §2): ``fusion="judged"`` sets judged-relevant pairs to 1 and judged-irrelevant pairs to 0,
``"relevant"`` only raises relevant pairs to 1, ``"none"`` keeps the proxy as it is.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy import sparse

from tvrbench.evaluation.choices import FUSION_POLICIES
from tvrbench.evaluation.labels import Judgments
from tvrbench.evaluation.metrics import DEFAULT_METRICS, NDCG, AveragePrecision, Composite, MeanNDCG, Metric, RankedQueries, parse_metric
from tvrbench.evaluation.ranking import NonFiniteScores, target_ranks
from tvrbench.evaluation.sharded import Graded, sharded_ranks
from tvrbench.evaluation.tables import evaluation_tables
from tvrbench.io.atomic import atomic_write
from tvrbench.io.captions import Captions
from tvrbench.io.scores import ScoreSource, as_source
from tvrbench.results import TablesOfJson
from tvrbench.signature import Signature

_RELEVANCE_BLOCK_CELLS = 1 << 24  # cells of a dense relevance matrix fused and ranked at a time


@dataclass(frozen=True)
class EvaluationResult(TablesOfJson):
    """One model's metrics keyed by metric name (``C@1``, ``AP(variant=fire)``), their per-query values
    (composites such as GMR have none), and, with extra labels, the result on the original pairs only."""

    metrics: dict[str, float]
    per_query: dict[str, np.ndarray]
    n_queries: int
    signature: Signature
    original: EvaluationResult | None = None
    tables_of = staticmethod(evaluation_tables)

    @property
    def delta(self) -> dict[str, float] | None:
        if self.original is None:
            return None
        return {name: value - self.original.metrics[name] for name, value in self.metrics.items()}

    def to_json(self) -> dict:
        payload = {"metrics": self.metrics, "signature": str(self.signature), "n_queries": self.n_queries}
        if self.original is not None:
            payload["original"] = self.original.metrics
            payload["delta"] = self.delta
        return payload

    def write_per_query(self, path: Path, captions: Captions) -> None:
        """One CSV row per caption (``captions``: the rows scored) with every text-to-video metric, and
        the original-only values when there are extra labels."""
        names = [name for name, values in self.per_query.items() if values.shape[0] == len(captions)]
        header = ["caption_id", "video_id", *names]
        if self.original is not None:
            header += [f"{name}_original" for name in names]
        with atomic_write(path) as out:
            writer = csv.writer(out)
            writer.writerow(header)
            for row, (caption_id, video_id) in enumerate(zip(captions.caption_ids, captions.video_ids)):
                values = [self.per_query[name][row] for name in names]
                if self.original is not None:
                    values += [self.original.per_query[name][row] for name in names]
                writer.writerow([caption_id, video_id, *("" if np.isnan(v) else f"{v:.10g}" for v in values)])


@dataclass(frozen=True)
class EvaluationRun:
    """How per-query values were computed, as an evaluation's signature records it.

    ``labels``: the label sources (``Judgments.sources``); ``graded``: whether nDCG read a graded
    relevance matrix (a proxy, laid under the labels by ``fusion``) rather than the labels;
    ``fields``: settings the caller knows (input digests, the proxy's name).
    """

    ties: str
    labels: Sequence[str]
    n_queries: int
    n_videos: int
    graded: bool = False
    fusion: str = "judged"
    fields: Mapping[str, object] = field(default_factory=dict)


def metric_objects(metrics: Iterable[str | Metric], ap: str = "standard", ndcg: str = "epic") -> list[Metric]:
    """The metrics asked for, in order and once each; names without a variant take ``ap`` / ``ndcg``."""
    objects: dict[str, Metric] = {}
    for metric in metrics:
        if isinstance(metric, str):
            if not metric.strip():
                continue
            metric = parse_metric(metric.strip(), ap, ndcg)
        objects.setdefault(str(metric), metric)
    return list(objects.values())


def measured(metrics: Iterable[Metric]) -> list[Metric]:
    """The metrics with per-query values that ``metrics`` need: each one, or a composite's parts."""
    parts = (part for metric in metrics for part in (metric.parts if isinstance(metric, Composite) else (metric,)))
    return list({str(part): part for part in parts}.values())


def evaluation_result(
    per_query: dict[str, np.ndarray], metrics: Sequence[Metric], run: EvaluationRun, original: EvaluationResult | None = None
) -> EvaluationResult:
    """The result of ``metrics`` from their per-query values, however these were computed.

    ``per_query`` holds the values of every metric of :func:`measured` (``metrics``), keyed by name;
    each metric aggregates its own, a composite combines its parts' aggregates, and a composite that
    shows its parts (nDCG) is followed by them. The signature records ``run`` and the metrics' variants.
    """
    aggregates: dict[str, float] = {}

    def value(metric: Metric) -> float:
        name = str(metric)
        if name not in aggregates:
            aggregates[name] = (
                metric.combine([value(part) for part in metric.parts]) if isinstance(metric, Composite) else metric.aggregate(per_query[name])
            )
        return aggregates[name]

    values = {str(metric): value(metric) for metric in metrics}
    for metric in metrics:
        if isinstance(metric, Composite) and metric.shows_parts:
            values.update({str(part): value(part) for part in metric.parts})
    return EvaluationResult(values, per_query, run.n_queries, evaluation_signature(metrics, run), original)


def evaluation_signature(metrics: Sequence[Metric], run: EvaluationRun) -> Signature:
    """The settings behind an evaluation: ``ap`` and ``ndcg`` name the variants used (``n/a`` for none)."""
    signature = Signature(
        {
            "task": "t2v",
            "ties": run.ties,
            "ap": _variants(metrics, AveragePrecision),
            "ndcg": _variants(metrics, (NDCG, MeanNDCG)),
            "labels": "+".join(run.labels),
            "relevance": "proxy" if run.graded else "labels",
            "fusion": run.fusion if run.graded else "n/a",
            "queries": run.n_queries,
            "videos": run.n_videos,
        }
    )
    for key, setting in run.fields.items():
        signature.add(key, str(setting))
    return signature


def _variants(metrics: Sequence[Metric], kinds) -> str:
    """The variants of the metrics of ``kinds``, comma-separated in order (``n/a`` for none)."""
    return ",".join(dict.fromkeys(metric.variant for metric in metrics if isinstance(metric, kinds))) or "n/a"


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
                gains = sparse.csr_matrix(judgments.fuse(relevance[rows], rows, None, fusion))
                ranks, _ = target_ranks(scores[rows], rows=gains, ties=ties)
                parts.append(metric.per_query(RankedQueries.from_targets(gains.shape[0], gains, ranks)))
            values[str(metric)] = np.concatenate(parts)
        else:
            step = max(1, _RELEVANCE_BLOCK_CELLS // n_rows)
            parts = []
            for start in range(0, n_columns, step):
                columns = slice(start, min(n_columns, start + step))
                gains = sparse.csr_matrix(judgments.fuse(relevance[:, columns], None, columns, fusion).T)
                _, ranks = target_ranks(scores[:, columns], columns=gains, ties=ties)
                parts.append(metric.per_query(RankedQueries.from_targets(gains.shape[0], gains, ranks)))
            values[str(metric)] = np.concatenate(parts)
    return values


def evaluate(
    scores: np.ndarray | ScoreSource,
    judgments: Judgments,
    metrics: Iterable[str | Metric] = DEFAULT_METRICS,
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

    ``metrics``: names such as ``C@1``, ``AP(variant=fire)``, ``nDCG`` (see
    :mod:`tvrbench.evaluation.metrics`), or metric objects; ``ap`` / ``ndcg``: the variant of a name
    given without one. ``relevance``: optional graded relevance, same shape as ``scores``, values in
    [0, 1]. ``signature_fields``: settings the caller knows (label sources' digests, proxy name) to
    record; the source's own fields (:attr:`~tvrbench.io.scores.ScoreSource.signature_fields`) lead
    them unless the caller placed them itself.
    ``scores``: a matrix, or any :class:`~tvrbench.io.scores.ScoreSource`
    (:func:`~tvrbench.io.scores.open_scores`). One not held in memory (shards, embeddings) is read
    block by block (:mod:`tvrbench.evaluation.sharded`), on the Dask ``client`` if given, keeping
    finished blocks' results in the ``checkpoint`` folder if given; the metrics are the same.
    """
    scores = as_source(scores)  # the one place an array becomes a source
    if judgments.shape != scores.shape:
        raise ValueError(f"labels cover {judgments.shape} query-video pairs but scores have shape {scores.shape}")
    if fusion not in FUSION_POLICIES:
        raise ValueError(f"unknown fusion policy {fusion!r}; choose one of {', '.join(FUSION_POLICIES)}")
    if relevance is not None and relevance.shape != scores.shape:
        raise ValueError(f"relevance has shape {relevance.shape} but scores have shape {scores.shape}")
    signature_fields = _signed(scores, signature_fields or {})
    requested = metric_objects(metrics, ap, ndcg)
    try:
        per_query = per_query_values(scores, judgments, measured(requested), ties, relevance, fusion, client, checkpoint)
    except NonFiniteScores:  # the kernel checks every cell as it ranks; the source names the first bad one
        scores.name_bad_cell()
        raise
    n_queries, n_videos = scores.shape
    run = EvaluationRun(ties, judgments.sources, n_queries, n_videos, relevance is not None, fusion, signature_fields or {})
    original = None
    if judgments.has_extra_labels:
        original = evaluate(scores, judgments.original_only(), requested, ties, ap, ndcg, relevance, fusion, signature_fields, client, checkpoint)
    return evaluation_result(per_query, requested, run, original)


def _signed(scores: ScoreSource, fields: dict[str, object]) -> dict[str, object]:
    """The signature fields: the source's first, unless the caller signed them itself, in its own order."""
    return fields if scores.signature_fields.keys() <= fields.keys() else {**scores.signature_fields, **fields}


def per_query_values(
    scores: ScoreSource,
    judgments: Judgments,
    metrics: list[Metric],
    ties: str,
    relevance: np.ndarray | None,
    fusion: str,
    client=None,
    checkpoint: str | Path | None = None,
) -> dict[str, np.ndarray]:
    """Each metric's value per query (per video for ``nDCG_v2t``), keyed by name, from one ranking pass
    (nDCG with ``relevance`` ranks it block by block, apart from the others)."""
    n_queries, n_videos = scores.shape
    rows = judgments.gains()  # row targets: every judged cell
    ndcg_metrics = [m for m in metrics if isinstance(m, NDCG)]
    binary_ndcg = ndcg_metrics and relevance is None
    video_to_text = [m for m in ndcg_metrics if m.direction == "v2t"]
    columns = judgments.positive.T.tocsr() if binary_ndcg and video_to_text else None
    # nDCG with a cutoff (epic, paper) needs only the column ranks within each video's cutoff.
    top_only = columns is not None and all(m.variant != "full" for m in video_to_text)
    graded_ndcg = bool(ndcg_metrics) and relevance is not None
    if scores.whole:
        matrix = scores.read(0)
        row_ranks, column_ranks = target_ranks(matrix, rows=rows, columns=columns, ties=ties, columns_top_only=top_only)
        graded_values = _graded_ndcg(matrix, relevance, judgments, ndcg_metrics, ties, fusion) if graded_ndcg else {}
    else:
        graded = Graded(relevance, judgments, tuple(ndcg_metrics), fusion) if graded_ndcg else None
        ranks = sharded_ranks(scores, rows, columns, ties, top_only, graded, client=client, checkpoint=checkpoint)
        row_ranks, column_ranks, graded_values = ranks.row_ranks, ranks.column_ranks, ranks.graded

    t2v = RankedQueries.from_targets(n_queries, rows, row_ranks)
    per_query: dict[str, np.ndarray] = {}
    for metric in metrics:
        if isinstance(metric, NDCG):
            if not binary_ndcg:
                continue
            if metric.direction == "t2v":
                per_query[str(metric)] = metric.per_query(t2v)
            else:
                per_query[str(metric)] = metric.per_query(RankedQueries.from_targets(n_videos, columns, column_ranks))
        else:
            per_query[str(metric)] = metric.per_query(t2v)
    per_query.update(graded_values)
    return per_query
