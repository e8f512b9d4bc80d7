"""FIRE (Rodriguez et al.): relevance labels, the paper's validity analyses and the annotation loop.

One module per analysis, each a function over plain arrays or the engine's results:
``agreement`` (Table 2), ``compare`` (Table 1), ``overlap`` (Table 3), ``pooling`` (Table 4),
``bootstrap`` (§4.3, Fig. 4, paired test), ``length`` (Figs. 2, 3), ``train_overlap`` (App. D),
``ranks`` (App. G), ``queue`` (annotating a new model's top k), ``labels`` (FIRE ⇄ TREC qrels),
``plots`` (the figures) and ``config`` (defaults, ``configs/fire.yaml``).

>>> from tvrbench.evaluation.fire import agreement, bootstrap_differences
>>> agreement(read_fire("fire.json"))["MSRVTT"].alpha
"""

from tvrbench.evaluation.fire.agreement import AgreementStats, agreement, krippendorff_alpha_nominal
from tvrbench.lazy import lazy_exports

# The other analyses load with their first use: reading a config or FIRE labels needs no numba.
# (``agreement`` is imported here: a function named like its module must be set after the module.)
__getattr__, __dir__, __all__ = lazy_exports(__name__, {
    "bootstrap": ("bootstrap_differences", "paired_bootstrap_test", "queries_for_difference", "resample_means"),
    "compare": ("compare_models", "comparison_rows"),
    "config": ("FireConfig", "load_config"),
    "labels": ("fire_to_qrels", "qrels_to_fire"),
    "length": ("caption_lengths", "outcomes_by_bin", "positives_by_length"),
    "overlap": ("prediction_overlap", "rank_biased_overlap", "top_k_overlap"),
    "pairs": ("PairVotes", "pair_votes"),
    "pooling": ("labels_from_other_pools", "pooled_models", "pooling_bias"),
    "queue": ("build_queue", "unjudged_top_k"),
    "ranks": ("positive_ranks",),
    "train_overlap": ("length_correlations", "train_test_similarity"),
})
__all__ += ["AgreementStats", "agreement", "krippendorff_alpha_nominal"]
