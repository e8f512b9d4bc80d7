"""Retrieval evaluation with every label available (SPEC §2).

>>> from tvrbench.evaluation import Judgments, evaluate
>>> result = evaluate(scores, Judgments.build(captions, video_ids, fire=fire_labels))
>>> result.metrics["C@1"], result.original.metrics["C@1"]
>>> evaluate(embedding_scores(text_embeddings, video_embeddings, "cosine"), judgments)  # no matrix held
"""

from tvrbench.lazy import lazy_exports

# numba and scipy load with the first name used, not with the package.
__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "tvrbench.io.scores": ("EmbeddingScores", "embedding_scores", "open_scores"),
        "choices": ("AP_VARIANTS", "FUSION_POLICIES", "NDCG_VARIANTS", "TIE_RULES"),
        "engine": ("EvaluationResult", "EvaluationRun", "evaluate", "evaluation_result"),
        "inputs": ("Embeddings", "EvaluationFiles", "EvaluationInputs", "Inputs", "checkpoint_of", "read_inputs"),
        "labels": ("Judgments",),
        "metrics": ("DEFAULT_METRICS", "Composite", "Metric", "RankedQueries", "parse_metric"),
        "ranking": ("rank_top_k", "target_ranks"),
    },
)
