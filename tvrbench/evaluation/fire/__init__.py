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
from tvrbench.evaluation.fire.bootstrap import (
    bootstrap_differences,
    paired_bootstrap_test,
    queries_for_difference,
    resample_means,
)
from tvrbench.evaluation.fire.compare import compare_models, comparison_rows
from tvrbench.evaluation.fire.config import FireConfig, load_config
from tvrbench.evaluation.fire.labels import fire_to_qrels, qrels_to_fire
from tvrbench.evaluation.fire.length import caption_lengths, outcomes_by_bin, positives_by_length
from tvrbench.evaluation.fire.overlap import prediction_overlap, rank_biased_overlap, top_k_overlap
from tvrbench.evaluation.fire.pairs import PairVotes, pair_votes
from tvrbench.evaluation.fire.pooling import labels_from_other_pools, pooled_models, pooling_bias
from tvrbench.evaluation.fire.queue import build_queue, unjudged_top_k
from tvrbench.evaluation.fire.ranks import positive_ranks
from tvrbench.evaluation.fire.train_overlap import length_correlations, train_test_similarity

__all__ = [
    "AgreementStats", "FireConfig", "PairVotes", "agreement", "bootstrap_differences", "build_queue", "caption_lengths",
    "compare_models", "comparison_rows", "fire_to_qrels", "krippendorff_alpha_nominal", "labels_from_other_pools",
    "length_correlations", "load_config", "outcomes_by_bin", "paired_bootstrap_test", "pair_votes", "pooled_models",
    "pooling_bias", "positive_ranks", "positives_by_length", "prediction_overlap", "qrels_to_fire",
    "queries_for_difference", "rank_biased_overlap", "resample_means", "top_k_overlap", "train_test_similarity",
    "unjudged_top_k",
]
