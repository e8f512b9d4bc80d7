"""FIRE records grouped into distinct (dataset, caption text, video) pairs with their votes.

The released file holds one record per pair (several annotators' labels in ``annotator_labels``),
but a merged or hand-made file may repeat a pair; grouping first makes every count a count of
pairs, as in the paper's Table 2. A pair's label follows a *rule*:

- ``file`` (default, the paper): the record's ``label`` (majority vote of the annotators; records
  without a majority are disagreements). A pair repeated over several records takes the majority
  of their labels, a tie being a disagreement (the evaluation engine's rule).
- ``majority``: recomputed from the pooled votes; a tie is a disagreement.
- ``any``: relevant as soon as one annotator said relevant.
- ``unanimous``: relevant or irrelevant only when every vote agrees; otherwise a disagreement.

Pairs without any annotator vote keep their file label under every rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import chain

import numpy as np

RELEVANT, IRRELEVANT, DISAGREEMENT = 1, 0, -1
RULES = ("file", "majority", "any", "unanimous")


@dataclass(frozen=True)
class PairVotes:
    """One entry per distinct pair; ``votes[:, 0]`` irrelevant and ``votes[:, 1]`` relevant votes."""

    dataset: np.ndarray
    query: np.ndarray
    video_id: np.ndarray
    file_label: np.ndarray  # int8: 1, 0, or -1 (disagreement, or repeated records tied)
    votes: np.ndarray  # (n_pairs, 2) int64
    record_pair: np.ndarray  # pair index of every record of the source FireLabels

    def __len__(self) -> int:
        return len(self.file_label)

    def label(self, rule: str = "file") -> np.ndarray:
        """The label of every pair under ``rule`` (int8: 1 relevant, 0 irrelevant, -1 disagreement)."""
        if rule not in RULES:
            raise ValueError(f"unknown label rule {rule!r}; choose one of {', '.join(RULES)}")
        if rule == "file":
            return self.file_label
        irrelevant, relevant = self.votes[:, 0], self.votes[:, 1]
        if rule == "majority":
            label = np.where(relevant > irrelevant, RELEVANT, np.where(irrelevant > relevant, IRRELEVANT, DISAGREEMENT))
        elif rule == "any":
            label = np.where(relevant > 0, RELEVANT, IRRELEVANT)
        else:
            label = np.where(irrelevant == 0, RELEVANT, np.where(relevant == 0, IRRELEVANT, DISAGREEMENT))
        unvoted = (relevant + irrelevant) == 0
        return np.where(unvoted, self.file_label, label).astype(np.int8)


def record_majority(record_pair: np.ndarray, label, n_pairs: int) -> np.ndarray:
    """Each pair's majority over its records: +1 more relevant records, -1 more irrelevant ones, 0 a
    tie (disagreement records count for neither side). The one rule for a pair repeated over several
    records, here and in :meth:`~tvrbench.evaluation.labels.Judgments.build`."""
    label = np.asarray(label)
    relevant, irrelevant = (np.bincount(record_pair[label == value], minlength=n_pairs) for value in (RELEVANT, IRRELEVANT))
    return np.sign(relevant - irrelevant).astype(np.int8)


def _codes(values) -> np.ndarray:
    """Integer code of each value in order of first appearance (hashing; no fixed-width string copies)."""
    index: dict = {}
    return np.fromiter((index.setdefault(value, len(index)) for value in values), dtype=np.int64, count=len(values))


def pair_votes(fire) -> PairVotes:
    """Group a :class:`~tvrbench.io.fire.FireLabels` by (dataset, query, video) and pool its votes."""
    n_records = len(fire)
    dataset_code, query_code, video_code = (_codes(fire.dataset), _codes(fire.query), _codes(fire.video_id))
    key = (dataset_code * (query_code.max(initial=0) + 1) + query_code) * (video_code.max(initial=0) + 1) + video_code
    _, first, record_pair = np.unique(key, return_index=True, return_inverse=True)
    n_pairs = len(first)

    majority = record_majority(record_pair, fire.label, n_pairs)
    file_label = np.where(majority > 0, RELEVANT, np.where(majority < 0, IRRELEVANT, DISAGREEMENT)).astype(np.int8)

    per_record = np.fromiter((len(v) for v in fire.annotator_labels), dtype=np.int64, count=n_records)
    flat = np.fromiter(chain.from_iterable(fire.annotator_labels), dtype=np.int8, count=int(per_record.sum()))
    vote_pair = np.repeat(record_pair, per_record)
    votes = np.stack([np.bincount(vote_pair[flat == value], minlength=n_pairs) for value in (0, 1)], axis=1).astype(np.int64)
    return PairVotes(
        dataset=np.asarray(fire.dataset, dtype=object)[first],
        query=np.asarray(fire.query, dtype=object)[first],
        video_id=np.asarray(fire.video_id, dtype=object)[first],
        file_label=file_label,
        votes=votes,
        record_pair=record_pair,
    )
