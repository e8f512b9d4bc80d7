"""Appendix G: at which ranks of a model's ranking the positives sit, split by label source.

Ranks come from the engine's :func:`~tvrbench.evaluation.rank_top_k` (same tie rule as the
metrics); positives below ``max_rank`` are reported as ``max_rank + 1`` ("further down").
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from tvrbench.evaluation import rank_top_k


def positive_ranks(scores: np.ndarray, judgments, max_rank: int = 50, ties: str = "stable") -> dict[str, np.ndarray]:
    """1-based ranks of the ``original`` positives and of the positives FIRE added (``fire``)."""
    depth = min(max_rank, scores.shape[1])
    top = rank_top_k(scores, depth, ties=ties)
    rank_of = sparse.csr_matrix(
        (np.tile(np.arange(1, depth + 1), top.shape[0]), top.ravel(), np.arange(0, top.size + 1, depth)),
        shape=scores.shape,
    )
    positive = sparse.csr_matrix(judgments.positive, dtype=np.int8)
    original = positive.multiply(sparse.csr_matrix(judgments.original, dtype=np.int8)).tocsr()
    added = (positive - original).tocsr()
    ranks = {}
    for source, members in (("original", original), ("fire", added)):
        members.eliminate_zeros()
        rows, columns = members.nonzero()
        found = np.asarray(rank_of[rows, columns]).ravel()
        ranks[source] = np.where(found > 0, found, max_rank + 1).astype(np.int64)
    return ranks
