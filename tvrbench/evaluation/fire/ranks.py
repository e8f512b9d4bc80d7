"""Appendix G: at which ranks of a model's ranking the positives sit, split by label source.

Ranks come from the engine's :func:`~tvrbench.evaluation.rank_top_k` (same tie rule as the
metrics); positives below ``max_rank`` are reported as ``max_rank + 1`` ("further down").
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvrbench.evaluation.fire.plots import positive_ranks_figure
from tvrbench.results import Sources, Table, TablesOfJson, analysis_signature
from tvrbench.signature import Signature


def positive_ranks(scores: np.ndarray, judgments, max_rank: int = 50, ties: str = "stable") -> dict[str, np.ndarray]:
    """1-based ranks of the ``original`` positives and of the positives FIRE added (``fire``)."""
    from scipy import sparse  # numba and scipy only here: the report shows the tables without

    from tvrbench.evaluation import rank_top_k

    depth = min(max_rank, scores.shape[1])
    top = rank_top_k(scores, depth, ties=ties)
    rank_of = sparse.csr_matrix((np.tile(np.arange(1, depth + 1), top.shape[0]), top.ravel(), np.arange(0, top.size + 1, depth)), shape=scores.shape)
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


def ranks_tables(payload: dict) -> list[Table]:
    """Appendix G's counts from :class:`RanksResult`'s JSON: positives, in the top 10, beyond ``max_rank``."""
    max_rank = payload["max_rank"]
    rows = [[source, str(sum(counts)), str(sum(counts[:10])), str(counts[-1])] for source, counts in payload["counts_by_rank"].items()]
    columns = ["source", "positives", "in top 10", f"beyond {max_rank}"]
    return [Table(f"{payload['model']}: positives by rank (Appendix G)", columns, rows)]


@dataclass(frozen=True)
class RanksResult(TablesOfJson):
    """Appendix G for one model: the ranks of the original positives and of those FIRE added."""

    model: str
    dataset: str
    max_rank: int
    ranks: dict[str, np.ndarray]  # "original", "fire": 1-based ranks, max_rank + 1 beyond max_rank
    signature: Signature
    tables_of = staticmethod(ranks_tables)

    @property
    def counts_by_rank(self) -> dict[str, list[int]]:
        """Positives at ranks 1 … max_rank, then beyond, per label source."""
        return {
            source: np.bincount(np.minimum(found, self.max_rank + 1), minlength=self.max_rank + 2)[1:].tolist()
            for source, found in self.ranks.items()
        }

    def to_json(self) -> dict:
        return {"model": self.model, "max_rank": self.max_rank, "counts_by_rank": self.counts_by_rank, "signature": str(self.signature)}

    def figures(self):
        yield (
            f"appG_positive_ranks_{self.model}",
            positive_ranks_figure(self.ranks["original"], self.ranks["fire"], self.max_rank, self.dataset, self.model),
        )


def ranks_analysis(
    scores: np.ndarray, judgments, max_rank: int = 50, model: str = "model", dataset: str = "FIRE", sources: Sources | None = None
) -> RanksResult:
    """Appendix G for one model's score matrix; ``dataset`` names the figure."""
    signature = analysis_signature("fire-ranks", sources, {"max_rank": max_rank})
    return RanksResult(model, dataset, max_rank, positive_ranks(scores, judgments, max_rank), signature)
