"""Which (query, video) pairs are relevant, irrelevant or judged at all (SPEC §2, §3).

Positives of a query = its original video ∪ videos whose FIRE pair (caption text, video id) is
labelled relevant ∪ videos with a positive TREC qrel. A FIRE pair seen in several records takes the
majority of their labels; a tie, or a record without majority (a FIRE "disagreement"), leaves the
pair neither relevant nor irrelevant, but judged. FIRE pairs are keyed by caption text, so a label
applies to every caption with that text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import repeat

import numpy as np
from scipy import sparse

from tvrbench.errors import InputError
from tvrbench.evaluation.fire.pairs import record_majority
from tvrbench.io.captions import Captions


def _pairs_matrix(rows: np.ndarray, columns: np.ndarray, shape: tuple[int, int]) -> sparse.csr_matrix:
    data = np.ones(rows.size, dtype=bool)
    matrix = sparse.csr_matrix((data, (rows, columns)), shape=shape, dtype=bool)
    matrix.sum_duplicates()
    matrix.sort_indices()
    return matrix


@dataclass
class Judgments:
    """Sparse boolean label matrices, queries × videos, and where the labels came from."""

    original: sparse.csr_matrix
    positive: sparse.csr_matrix
    irrelevant: sparse.csr_matrix
    judged: sparse.csr_matrix
    sources: list[str] = field(default_factory=lambda: ["original"])

    @property
    def shape(self) -> tuple[int, int]:
        return self.original.shape

    @property
    def has_extra_labels(self) -> bool:
        return len(self.sources) > 1

    def gains(self) -> sparse.csr_matrix:
        """Every judged pair, with gain 1 if it is a positive and 0 if not (float CSR)."""
        judged = self.judged
        if judged.nnz == self.positive.nnz:  # positives are judged: the same pairs, all gain 1
            return sparse.csr_matrix((np.ones(judged.nnz), judged.indices, judged.indptr), shape=judged.shape)
        both = (judged.astype(np.float64) + self.positive.astype(np.float64)).tocsr()
        both.data = (both.data > 1).astype(np.float64)  # a positive sums to 2
        return both

    def original_only(self) -> "Judgments":
        """The same queries judged by their original pairs alone."""
        empty = sparse.csr_matrix(self.shape, dtype=bool)
        return Judgments(self.original, self.original, empty, self.original, ["original"])

    def fuse(self, block: np.ndarray, rows: slice | None, columns: slice | None, fusion: str) -> np.ndarray:
        """Relevance of a block with the labels laid over it (rows/columns select the label block)."""
        fused = np.array(block, dtype=np.float64)
        if fusion == "none":
            return fused
        positive = self.positive[rows] if columns is None else self.positive[:, columns]
        fused[positive.nonzero()] = 1.0
        if fusion == "judged":
            irrelevant = self.irrelevant[rows] if columns is None else self.irrelevant[:, columns]
            fused[irrelevant.nonzero()] = 0.0
        return fused

    @classmethod
    def from_matrices(cls, positive, irrelevant=None, original=None) -> "Judgments":
        """Judgments from boolean matrices (array-level API); ``original`` defaults to ``positive``."""
        positive = sparse.csr_matrix(positive, dtype=bool)
        original = positive if original is None else sparse.csr_matrix(original, dtype=bool)
        irrelevant = sparse.csr_matrix(positive.shape, dtype=bool) if irrelevant is None else sparse.csr_matrix(irrelevant, dtype=bool)
        positive = (positive + original).astype(bool)
        irrelevant = (irrelevant > positive).astype(bool)
        judged = (positive + irrelevant).astype(bool)
        sources = ["original"] if (positive != original).nnz == 0 and irrelevant.nnz == 0 else ["original", "labels"]
        return cls(original.tocsr(), positive.tocsr(), irrelevant.tocsr(), judged.tocsr(), sources)

    @classmethod
    def build(cls, captions: Captions, video_ids: list[str], fire=None, qrels=None, videos_source: str = "videos") -> "Judgments":
        """Labels of ``captions`` (rows) against ``video_ids`` (columns) from every source given.

        ``fire``: :class:`tvrbench.io.fire.FireLabels` already restricted to one dataset;
        ``qrels``: :class:`tvrbench.io.trec.Qrels` keyed by caption id and video id.
        """
        column_of = {video_id: column for column, video_id in enumerate(video_ids)}
        shape = (len(captions), len(video_ids))
        missing = [v for v in captions.video_ids if v not in column_of]
        if missing:
            raise InputError(
                videos_source, f"video {missing[0]!r} of the captions in {captions.source} is not listed ({len(missing)} captions affected)"
            )
        original_columns = np.fromiter((column_of[v] for v in captions.video_ids), np.int64, len(captions))
        original = _pairs_matrix(np.arange(len(captions)), original_columns, shape)

        labelled = [(np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int8))]  # (rows, columns, verdicts) per source
        sources = ["original"]
        if fire is not None and len(fire):
            sources.append("fire")
            labelled.append(_fire_pairs(fire, captions, column_of))
        if qrels is not None and len(qrels.query_ids):
            sources.append("qrels")
            row_of = {caption_id: row for row, caption_id in enumerate(captions.caption_ids)}
            for query_id, doc_id in zip(qrels.query_ids, qrels.doc_ids):
                if query_id not in row_of:
                    raise InputError(qrels.source, f"query {query_id!r} is not a caption id of {captions.source}")
                if doc_id not in column_of:
                    raise InputError(qrels.source, f"document {doc_id!r} is not in {videos_source}")
            rows = np.fromiter(map(row_of.__getitem__, qrels.query_ids), np.int64, len(qrels.query_ids))
            columns = np.fromiter(map(column_of.__getitem__, qrels.doc_ids), np.int64, len(qrels.doc_ids))
            labelled.append((rows, columns, np.where(np.asarray(qrels.relevance) > 0, 1, -1).astype(np.int8)))

        rows, columns, verdicts = (np.concatenate(part) for part in zip(*labelled))
        positive = (original + _pairs_matrix(rows[verdicts > 0], columns[verdicts > 0], shape)).astype(bool)
        irrelevant = _pairs_matrix(rows[verdicts < 0], columns[verdicts < 0], shape)
        irrelevant = (irrelevant > positive).astype(bool)  # a positive from any source wins
        judged = (positive + _pairs_matrix(rows, columns, shape)).astype(bool)
        return cls(original, positive.tocsr(), irrelevant.tocsr(), judged.tocsr(), sources)


def _fire_pairs(fire, captions: Captions, column_of: dict[str, int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """FIRE records resolved per (caption row, video column): +1 relevant, -1 irrelevant, 0 no
    majority (still judged). A pair's records vote: label 1 for, label 0 against; a label applies to
    every caption with the record's text. Vectorized over the records (650K at MSR-VTT full size)."""
    code_of_text: dict[str, int] = {}
    text_codes = np.fromiter((code_of_text.setdefault(t, len(code_of_text)) for t in captions.texts), np.int64, len(captions))
    record_texts = np.fromiter(map(code_of_text.get, fire.query, repeat(-1)), np.int64, len(fire))
    record_columns = np.fromiter(map(column_of.get, fire.video_id, repeat(-1)), np.int64, len(fire))
    unknown = (record_texts < 0) | (record_columns < 0)
    if unknown.any():
        first = int(np.argmax(unknown))  # the first bad record, its text checked before its video
        if record_texts[first] < 0:
            raise InputError(fire.source, f"query {fire.query[first]!r} is not the text of any caption in {captions.source}")
        raise InputError(fire.source, f"video {fire.video_id[first]!r} is not in the videos list")
    n_columns = max(len(column_of), 1)
    pairs, record_pair = np.unique(record_texts * n_columns + record_columns, return_inverse=True)
    majority = record_majority(record_pair, fire.label, len(pairs))
    pair_texts, pair_columns = np.divmod(pairs, n_columns)
    # every caption row of each pair's text: rows grouped by text, then one run per pair
    rows_by_text = np.argsort(text_codes, kind="stable")
    text_counts = np.bincount(text_codes, minlength=len(code_of_text))
    text_starts = np.cumsum(text_counts) - text_counts
    runs = text_counts[pair_texts]
    pair_of_row = np.repeat(np.arange(len(pairs)), runs)
    within = np.arange(len(pair_of_row)) - np.repeat(np.cumsum(runs) - runs, runs)
    rows = rows_by_text[text_starts[pair_texts][pair_of_row] + within]
    return rows, pair_columns[pair_of_row], majority[pair_of_row]
