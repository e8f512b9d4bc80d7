"""Retrieval evaluation with every label available (SPEC §2).

>>> from tvrbench.evaluation import Judgments, evaluate
>>> result = evaluate(scores, Judgments.build(captions, video_ids, fire=fire_labels))
>>> result.metrics["C@1"], result.original.metrics["C@1"]
"""

from tvrbench.evaluation.evaluate import FUSION_POLICIES, EvaluationResult, evaluate
from tvrbench.evaluation.labels import Judgments
from tvrbench.evaluation.metrics import (
    AP_VARIANTS,
    DEFAULT_METRICS,
    NDCG_VARIANTS,
    Metric,
    RankedQueries,
    parse_metric,
)
from tvrbench.evaluation.ranking import TIE_RULES, rank_top_k, target_ranks

__all__ = [
    "AP_VARIANTS",
    "DEFAULT_METRICS",
    "FUSION_POLICIES",
    "NDCG_VARIANTS",
    "TIE_RULES",
    "EvaluationResult",
    "Judgments",
    "Metric",
    "RankedQueries",
    "evaluate",
    "parse_metric",
    "rank_top_k",
    "target_ranks",
]
