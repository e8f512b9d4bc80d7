"""FIRE (Rodriguez et al.): relevance labels, the paper's validity analyses and the annotation loop.

One module per analysis, each a function over plain arrays or the engine's results, and an
``*_analysis`` function that returns the analysis as a result object (its signature, JSON and
table, see :mod:`tvrbench.results`), as the command line writes it:
``agreement`` (Table 2), ``compare`` (Table 1), ``overlap`` (Table 3), ``pooling`` (Table 4),
``bootstrap`` (§4.3, Fig. 4, paired test), ``length`` (Figs. 2, 3), ``train_overlap`` (App. D),
``ranks`` (App. G), ``queue`` (annotating a new model's top k), ``labels`` (FIRE ⇄ TREC qrels),
``plots`` (the figures) and ``config`` (defaults, ``configs/fire.yaml``).

>>> from tvrbench.evaluation.fire import agreement, bootstrap_analysis, load_config
>>> agreement(read_fire("fire.json"))["MSRVTT"].alpha
>>> result = bootstrap_analysis(scores, judgments, load_config("fire.yaml"), "mine", sources={"fire": "fire.json"})
>>> result.signature, result.rows, result.to_json()
"""

from tvrbench.evaluation.fire.agreement import AgreementStats, agreement, agreement_analysis
from tvrbench.evaluation.reliability import krippendorff_alpha_nominal
from tvrbench.lazy import lazy_exports

# The other analyses load with their first use: reading a config or FIRE labels needs no numba.
# (``agreement`` is imported here: a function named like its module must be set after the module.)
__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "bootstrap": (
            "bootstrap_analysis",
            "bootstrap_differences",
            "paired_analysis",
            "paired_bootstrap_test",
            "queries_for_difference",
            "resample_means",
        ),
        "compare": ("compare_analysis", "comparison_rows"),
        "config": ("FireConfig", "load_config"),
        "labels": ("fire_to_qrels", "qrels_signature", "qrels_to_fire"),
        "length": ("caption_lengths", "length_analysis", "outcomes_by_bin", "positives_by_length", "two_model_outcomes"),
        "overlap": ("overlap_analysis", "prediction_overlap", "rank_biased_overlap", "top_k_overlap"),
        "pairs": ("PairVotes", "pair_votes"),
        "pooling": ("labels_from_other_pools", "pooled_models", "pooling_analysis", "pooling_bias"),
        "queue": ("build_queue", "queue_analysis", "unjudged_top_k"),
        "ranks": ("positive_ranks", "ranks_analysis"),
        "train_overlap": ("length_correlations", "train_overlap_analysis", "train_test_similarity"),
    },
)
__all__ += ["AgreementStats", "agreement", "agreement_analysis", "krippendorff_alpha_nominal"]
