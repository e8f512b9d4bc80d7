"""The annotation loop (§4.2, §4.3): what a new model needs labelled before its scores can be trusted.

A new model's top-k holds pairs no annotator has seen; treating them as negatives biases its
scores down (Table 4). The queue lists those unjudged pairs. Rather than all queries, §4.3 shows a
sample of N queries is enough to detect a chosen difference: N comes from the bootstrap
(:func:`~tvrbench.evaluation.fire.bootstrap.queries_for_difference`), and the N queries are drawn
with the given seed. Judged@K is reported before annotation and after (every queued pair judged).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass

import numpy as np

from tvrbench.evaluation.fire.bootstrap import bootstrap_differences, queries_for_difference
from tvrbench.evaluation.fire.config import FireConfig
from tvrbench.io.atomic import atomic_write
from tvrbench.results import Sources, Table, TablesOfJson, analysis_signature, count_or_share
from tvrbench.signature import Signature

QUEUE_FIELDS = ("caption_id", "query", "video_id", "rank", "score", "model")


@dataclass(frozen=True)
class AnnotationQueue:
    query_index: np.ndarray  # caption row of each queued pair
    video_index: np.ndarray  # video column of each queued pair
    rank: np.ndarray  # 1-based rank in the model's ranking
    judged_before: float
    judged_after: float
    selected_queries: np.ndarray  # caption rows whose top k is queued

    def __len__(self) -> int:
        return len(self.query_index)


def unjudged_top_k(scores: np.ndarray, judged, k: int, ties: str = "stable") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(query row, video column, 1-based rank) of every pair in the top ``k`` with no label."""
    from tvrbench.evaluation import rank_top_k  # numba only where pairs are ranked: the report shows the tables without

    top = rank_top_k(scores, k, ties=ties)
    rows = np.repeat(np.arange(top.shape[0]), top.shape[1])
    columns = top.ravel()
    labelled = np.asarray(judged[rows, columns]).ravel().astype(bool)
    ranks = np.tile(np.arange(1, top.shape[1] + 1), top.shape[0])
    return rows[~labelled], columns[~labelled], ranks[~labelled]


def build_queue(scores: np.ndarray, judgments, k: int = 10, n_queries: int | None = None, seed: int = 0, ties: str = "stable") -> AnnotationQueue:
    """Unjudged top-k pairs of ``n_queries`` randomly drawn queries (all queries when None)."""
    from tvrbench.evaluation import evaluate

    n_total = scores.shape[0]
    if n_queries is None or n_queries >= n_total:
        selected = np.arange(n_total)
    else:
        selected = np.sort(np.random.default_rng(seed).choice(n_total, size=n_queries, replace=False))
    rows, columns, ranks = unjudged_top_k(scores, judgments.judged, k, ties)
    keep = np.isin(rows, selected)
    judged = evaluate(scores, judgments, metrics=(f"Judged@{k}",), ties=ties).per_query[f"Judged@{k}"]
    after = judged.copy()
    after[selected] = 1.0
    return AnnotationQueue(rows[keep], columns[keep], ranks[keep], float(np.nanmean(judged)), float(np.nanmean(after)), selected)


def queue_records(queue: AnnotationQueue, scores: np.ndarray, captions, video_ids, model: str) -> list[dict]:
    """The queue as rows for annotators, ordered by query then rank."""
    return [
        {
            "caption_id": captions.caption_ids[q],
            "query": captions.texts[q],
            "video_id": video_ids[v],
            "rank": int(r),
            "score": float(scores[q, v]),
            "model": model,
        }
        for q, v, r in zip(queue.query_index.tolist(), queue.video_index.tolist(), queue.rank.tolist())
    ]


def write_queue(path, records: list[dict]) -> None:
    """CSV (``.csv``) or JSON Lines (anything else), atomically."""
    with atomic_write(path) as out:
        if str(path).endswith(".csv"):
            writer = csv.DictWriter(out, fieldnames=QUEUE_FIELDS, lineterminator="\n")
            writer.writeheader()
            writer.writerows(records)
        else:
            for record in records:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")


def queue_tables(payload: dict) -> list[Table]:
    """The queue's summary (its numbers) from :class:`QueueResult`'s JSON."""
    rows = [[key, count_or_share(value)] for key, value in payload.items() if not isinstance(value, str)]
    return [Table(f"Annotation queue for {payload['model']}", ["", "value"], rows)]


@dataclass(frozen=True)
class QueueResult(TablesOfJson):
    """What a new model needs annotated: the queue's records and its summary (queries needed, Judged@k before and after)."""

    model: str
    records: list[dict]
    summary: dict
    signature: Signature
    tables_of = staticmethod(queue_tables)

    def to_json(self) -> dict:
        return {**self.summary, "signature": str(self.signature)}


def queue_analysis(
    scores: np.ndarray,
    judgments,
    captions,
    video_ids,
    settings: FireConfig | None = None,
    model: str = "model",
    all_queries: bool = False,
    sources: Sources | None = None,
) -> QueueResult:
    """The unjudged top-k pairs of a new model, for the queries the bootstrap says detect the effect size
    (every query with ``all_queries``)."""
    settings = settings or FireConfig()
    opts, boot = settings.queue, settings.bootstrap
    metric = settings.metric_name(opts.metric)
    per_query = settings.evaluate(scores, judgments, [metric]).per_query[metric]
    by_size = bootstrap_differences({metric: per_query}, boot.sizes, boot.resamples, boot.seed, boot.confidence, boot.chunk_elements)[metric]
    needed = queries_for_difference(by_size, opts.effect_size)
    chosen = build_queue(scores, judgments, opts.k, None if all_queries else needed, boot.seed)
    summary = {
        "model": model,
        "k": opts.k,
        "metric": metric,
        "effect_size": opts.effect_size,
        "queries_needed": needed,
        "queries_queued": len(chosen.selected_queries),
        "queries_total": len(captions),
        "pairs_queued": len(chosen),
        f"judged_at_{opts.k}_before": chosen.judged_before,
        f"judged_at_{opts.k}_after": chosen.judged_after,
    }
    signature = analysis_signature(
        "fire-queue",
        sources,
        {"k": opts.k, "metric": metric, "effect_size": opts.effect_size, "sizes": boot.sizes, "resamples": boot.resamples, "seed": boot.seed},
    )
    return QueueResult(model, queue_records(chosen, scores, captions, video_ids, model), summary, signature)
