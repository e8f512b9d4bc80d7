"""Figures 2 and 3 (and Figure 8's layout): caption length, number of positives, who gets it right.

Length is counted in words (whitespace-separated tokens) or characters (of the stripped caption).
Bins are half-open [lo, lo + width); the last bin closes at the longest caption.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

OUTCOMES = ("both", "only_a", "only_b", "neither")


def caption_lengths(texts, unit: str = "words") -> np.ndarray:
    """Length of every caption in ``words`` or ``characters``."""
    if unit == "words":
        return np.fromiter((len(text.split()) for text in texts), dtype=np.int64)
    if unit == "characters":
        return np.fromiter((len(text.strip()) for text in texts), dtype=np.int64)
    raise ValueError(f"unknown length unit {unit!r}; choose words or characters")


def bin_edges(values: np.ndarray, width: float) -> np.ndarray:
    """Edges 0, width, 2·width, … covering every value."""
    if width <= 0:
        raise ValueError(f"bin width must be positive, got {width}")
    top = float(np.max(values)) if len(values) else 0.0
    return np.arange(0.0, top + width + 1e-12, width)


def positives_by_length(lengths: np.ndarray, positives: np.ndarray) -> dict:
    """Figure 2's data: how many queries have each (length, number of positives) combination."""
    lengths = np.asarray(lengths, dtype=np.int64)
    positives = np.asarray(positives, dtype=np.int64)
    pairs, counts = np.unique(np.stack([lengths, positives], axis=1), axis=0, return_counts=True)
    return {
        "cells": [{"length": int(l), "positives": int(p), "queries": int(c)} for (l, p), c in zip(pairs, counts)],
        "mean_positives_by_length": {
            str(int(length)): float(positives[lengths == length].mean()) for length in np.unique(lengths)
        },
    }


@dataclass(frozen=True)
class OutcomeTable:
    """Per bin of a caption property: queries both / only A / only B / neither model got right."""

    edges: np.ndarray
    counts: np.ndarray  # (n_bins, 4) in the order of OUTCOMES

    @property
    def totals(self) -> np.ndarray:
        return self.counts.sum(axis=1)

    @property
    def shares(self) -> np.ndarray:
        totals = self.totals[:, None]
        return np.divide(self.counts, totals, out=np.zeros(self.counts.shape), where=totals > 0)

    def to_json(self) -> list[dict]:
        rows = []
        for index, (count, share) in enumerate(zip(self.counts, self.shares)):
            row = {"low": float(self.edges[index]), "high": float(self.edges[index + 1]), "queries": int(count.sum())}
            row.update({name: int(value) for name, value in zip(OUTCOMES, count)})
            row.update({f"{name}_share": float(value) for name, value in zip(OUTCOMES, share)})
            rows.append(row)
        return rows


def outcomes_by_bin(values: np.ndarray, correct_a: np.ndarray, correct_b: np.ndarray, edges: np.ndarray) -> OutcomeTable:
    """Cross-tabulate two models' per-query correctness (bool) by bins of ``values``."""
    values = np.asarray(values, dtype=np.float64)
    a, b = np.asarray(correct_a, dtype=bool), np.asarray(correct_b, dtype=bool)
    outcome = np.select([a & b, a & ~b, ~a & b], [0, 1, 2], default=3)
    bins = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
    counts = np.zeros((len(edges) - 1, len(OUTCOMES)), dtype=np.int64)
    np.add.at(counts, (bins, outcome), 1)
    return OutcomeTable(np.asarray(edges, dtype=np.float64), counts)
