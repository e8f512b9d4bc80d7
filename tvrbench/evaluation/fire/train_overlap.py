"""Appendix D (Figure 8, Table 7): how close each test caption is to the training captions.

As in the paper: a character 5-gram TF-IDF model (scikit-learn ``TfidfVectorizer(analyzer="char",
ngram_range=(5, 5))``) fitted on the test captions (``fit_on`` may also be ``train`` or ``both``),
cosine similarity of each test caption to every train caption, and the mean of its ``top`` (10)
highest similarities. The similarities are computed in blocks of test captions so memory stays
bounded with 180K MSR-VTT train captions. Table 7 correlates that score with caption length
(Spearman's ρ and Kendall's τ-b, scipy).
"""

from __future__ import annotations

import numpy as np

from tvrbench.evaluation.fire.length import caption_lengths


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
