"""Appendix D (Figure 8, Table 7): how close each test caption is to the training captions.

As in the paper: a character 5-gram TF-IDF model (scikit-learn ``TfidfVectorizer(analyzer="char",
ngram_range=(5, 5))``) fitted on the test captions (``fit_on`` may also be ``train`` or ``both``),
cosine similarity of each test caption to every train caption, and the mean of its ``top`` (10)
highest similarities. The similarities are computed in blocks of test captions so memory stays
bounded with 180K MSR-VTT train captions. Table 7 correlates that score with caption length
(Spearman's ρ and Kendall's τ-b, scipy).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvrbench.evaluation.fire.config import FireConfig
from tvrbench.evaluation.fire.length import TwoModelOutcomes, caption_lengths, outcomes_table, two_model_outcomes
from tvrbench.results import Sources, Table, TablesOfJson, analysis_signature
from tvrbench.signature import Signature


def train_test_similarity(
    test_texts, train_texts, ngram: int = 5, top: int = 10, fit_on: str = "test", block_elements: int = 20_000_000
) -> np.ndarray:
    """Mean of the ``top`` cosine similarities of each test caption to the train captions."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    test_texts, train_texts = list(test_texts), list(train_texts)
    if not train_texts:
        raise ValueError("no train captions")
    fit_texts = {"test": test_texts, "train": train_texts, "both": test_texts + train_texts}.get(fit_on)
    if fit_texts is None:
        raise ValueError(f"fit_on must be test, train or both, got {fit_on!r}")
    vectorizer = TfidfVectorizer(analyzer="char", ngram_range=(ngram, ngram)).fit(fit_texts)
    test_matrix = vectorizer.transform(test_texts)  # rows are L2-normalized: dot product = cosine
    train_matrix_t = vectorizer.transform(train_texts).T.tocsc()
    top = min(top, len(train_texts))
    rows_per_block = max(1, block_elements // len(train_texts))
    means = np.empty(len(test_texts))
    for start in range(0, len(test_texts), rows_per_block):
        block = (test_matrix[start : start + rows_per_block] @ train_matrix_t).toarray()
        best = np.partition(block, block.shape[1] - top, axis=1)[:, -top:]
        means[start : start + len(block)] = best.mean(axis=1)
    return means


def length_correlations(similarity: np.ndarray, test_texts) -> dict[str, dict[str, dict[str, float]]]:
    """Table 7: Spearman and Kendall correlation of the similarity with length in words and characters."""
    from scipy import stats  # slow to import; only this analysis needs it

    test_texts = list(test_texts)
    table = {}
    for unit in ("words", "characters"):
        lengths = caption_lengths(test_texts, unit)
        spearman = stats.spearmanr(similarity, lengths)
        kendall = stats.kendalltau(similarity, lengths)
        table[unit] = {
            "spearman": {"statistic": float(spearman.statistic), "p_value": float(spearman.pvalue)},
            "kendall": {"statistic": float(kendall.statistic), "p_value": float(kendall.pvalue)},
        }
    return table


def train_overlap_tables(payload: dict) -> list[Table]:
    """Table 7 from :class:`TrainOverlapResult`'s JSON, then Figure 8's table when it has two models' outcomes."""
    rows = [[unit, f"{row['spearman']['statistic']:.3f}", f"{row['kendall']['statistic']:.3f}"] for unit, row in payload["correlations"].items()]
    tables = [
        Table(
            f"Train-test similarity vs caption length (Table 7); mean similarity {payload['mean_similarity']:.3f}",
            ["length", "Spearman", "Kendall"],
            rows,
        )
    ]
    if "outcomes" in payload:
        tables.append(outcomes_table(payload, f"{payload['metric']} by train-test similarity (Figure 8)", "similarity bin"))
    return tables


@dataclass(frozen=True)
class TrainOverlapResult(TablesOfJson):
    """Appendix D: each test caption's similarity to the train captions, Table 7 and, given two models, Figure 8."""

    caption_ids: list[str]
    similarity: np.ndarray
    correlations: dict
    figure8: TwoModelOutcomes | None
    signature: Signature
    tables_of = staticmethod(train_overlap_tables)

    def to_json(self) -> dict:
        payload = {
            "correlations": self.correlations,
            "mean_similarity": float(self.similarity.mean()),
            "similarity": {cid: float(s) for cid, s in zip(self.caption_ids, self.similarity)},
        }
        if self.figure8 is not None:
            payload.update(self.figure8.to_json())
        return {**payload, "signature": str(self.signature)}

    def figures(self):
        return self.figure8.figures() if self.figure8 is not None else iter(())


def train_overlap_analysis(
    test_captions,
    train_captions,
    settings: FireConfig | None = None,
    scores: dict | None = None,
    judgments=None,
    dataset: str = "FIRE",
    sources: Sources | None = None,
) -> TrainOverlapResult:
    """Appendix D; with the two models of ``scores`` (``{model: score matrix}``) and their ``judgments``, Figure 8
    too (``dataset`` names it)."""
    settings = settings or FireConfig()
    opts = settings.train_overlap
    similarity = train_test_similarity(test_captions.texts, train_captions.texts, opts.ngram, opts.top, opts.fit_on)
    fields = {"ngram": opts.ngram, "top": opts.top, "fit_on": opts.fit_on}
    figure8 = None
    if scores:
        name_a, name_b = scores
        edges = np.round(np.arange(0.0, 1.0 + opts.bin_width / 2, opts.bin_width), 10)
        metric = settings.metric_name(opts.metric)
        figure8 = two_model_outcomes(
            scores,
            judgments,
            metric,
            similarity,
            edges,
            settings,
            "fig8_outcomes_by_train_similarity",
            f"{dataset}: {metric} of {name_a} and {name_b} by train-test similarity",
            f"Mean similarity of the {opts.top} closest train captions (character {opts.ngram}-gram TF-IDF)",
        )
        fields.update({"metric": metric, "bin_width": opts.bin_width, "engine": figure8.engine.nested()})
    signature = analysis_signature("fire-overlap-train", sources, fields, libraries=("numpy", "scipy", "scikit-learn"))
    return TrainOverlapResult(test_captions.caption_ids, similarity, length_correlations(similarity, test_captions.texts), figure8, signature)
