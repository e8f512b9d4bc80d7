"""Data of the per-query viewer (the FIRE paper's Figure 5): each model's top k with every label.

For each query and model the report shows the ranked videos with, side by side: the original
relevance (the query's own video), the FIRE label (relevant / irrelevant / disagreement / not
judged) and the graded proxy relevance. The payload keeps only what is shown (k cells per query
and model), so it stays small for full test sets.
"""

from __future__ import annotations

import numpy as np

from tvrbench.evaluation import Judgments, rank_top_k

# FIRE codes of a cell in the payload.
FIRE_RELEVANT, FIRE_IRRELEVANT, FIRE_DISAGREEMENT, FIRE_UNJUDGED = 1, 0, -1, None


def _cell_codes(judgments: Judgments, rows: np.ndarray, columns: np.ndarray) -> list:
    """FIRE code of each (row, column) cell: labels beyond the original pairs only."""
    original = np.asarray(judgments.original[rows, columns]).ravel()
    positive = np.asarray(judgments.positive[rows, columns]).ravel()
    irrelevant = np.asarray(judgments.irrelevant[rows, columns]).ravel()
    judged = np.asarray(judgments.judged[rows, columns]).ravel()
    codes = np.select([positive & ~original, irrelevant, judged & ~original & ~positive], [FIRE_RELEVANT, FIRE_IRRELEVANT, FIRE_DISAGREEMENT], 9)
    return [None if code == 9 else int(code) for code in codes]


def viewer_payload(
    captions,
    video_ids: list[str],
    scores: dict[str, np.ndarray],
    judgments: Judgments | None = None,
    relevance: np.ndarray | None = None,
    relevance_name: str = "proxy",
    k: int = 10,
) -> dict:
    """JSON-ready viewer data; ``relevance`` is captions × videos in [0, 1] (a proxy), or None."""
    n_queries, n_videos = len(captions), len(video_ids)
    column_of = {video: column for column, video in enumerate(video_ids)}
    k = min(k, n_videos)
    payload = {
        "queries": [{"id": c, "text": t, "video": column_of.get(v)} for c, t, v in zip(captions.caption_ids, captions.texts, captions.video_ids)],
        "videos": list(video_ids),
        "models": list(scores),
        "k": k,
        "relevance_name": relevance_name if relevance is not None else None,
        "fire": judgments is not None and judgments.has_extra_labels,
        "top": {},
        "score": {},
        "label": {},
        "relevance": {},
    }
    rows = np.repeat(np.arange(n_queries), k)
    for model, matrix in scores.items():
        if matrix.shape != (n_queries, n_videos):
            raise ValueError(f"scores of {model!r} have shape {matrix.shape}, expected {(n_queries, n_videos)}")
        top = rank_top_k(np.asarray(matrix), k)
        columns = top.ravel()
        payload["top"][model] = top.tolist()
        payload["score"][model] = np.round(np.asarray(matrix)[rows, columns].astype(np.float64), 4).reshape(n_queries, k).tolist()
        if payload["fire"]:
            codes = _cell_codes(judgments, rows, columns)
            payload["label"][model] = [codes[i * k : (i + 1) * k] for i in range(n_queries)]
        if relevance is not None:
            payload["relevance"][model] = np.round(relevance[rows, columns].astype(np.float64), 3).reshape(n_queries, k).tolist()
    if payload["fire"]:
        extra = (judgments.positive > judgments.original).tocsr()
        payload["fire_positives"] = [extra.indices[extra.indptr[i] : extra.indptr[i + 1]].tolist() for i in range(n_queries)]
    return payload
