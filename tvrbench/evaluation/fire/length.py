"""Figures 2 and 3 (and Figure 8's layout): caption length, number of positives, who gets it right.

Length is counted in words (whitespace-separated tokens) or characters (of the stripped caption).
Bins are half-open [lo, lo + width); the last bin closes at the longest caption.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from tvrbench.evaluation.fire.config import FireConfig
from tvrbench.evaluation.fire.plots import outcomes_figure, positives_vs_length_figure
from tvrbench.results import Sources, Table, TablesOfJson, analysis_signature
from tvrbench.signature import Signature

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
        "cells": [{"length": int(n), "positives": int(p), "queries": int(c)} for (n, p), c in zip(pairs, counts)],
        "mean_positives_by_length": {str(int(length)): float(positives[lengths == length].mean()) for length in np.unique(lengths)},
    }


@dataclass(frozen=True)
class OutcomeTable:
    """Per bin of a caption property: queries both / only A / only B / neither model got right."""

    edges: np.ndarray
    counts: np.ndarray  # (n_bins, 4) in the order of outcomes
    outcomes: ClassVar[tuple[str, ...]] = OUTCOMES  # the columns, for plots.outcomes_figure (plots imports nothing of this module)

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


@dataclass(frozen=True)
class TwoModelOutcomes:
    """Figure 3 / 8: per bin of a caption property, who of two models is right, with FIRE and with original labels."""

    model_a: str
    model_b: str
    metric: str
    tables: dict[str, OutcomeTable]  # "fire", "original"
    engine: Signature  # model A's engine result
    figure_stem: str
    figure_title: str
    xlabel: str

    def to_json(self) -> dict:
        return {
            "model_a": self.model_a,
            "model_b": self.model_b,
            "metric": self.metric,
            "outcomes": {source: table.to_json() for source, table in self.tables.items()},
        }

    def figures(self):
        for source, table in self.tables.items():
            described = "with FIRE labels" if source == "fire" else "original labels only"
            yield (
                f"{self.figure_stem}_{source}",
                outcomes_figure(table, self.model_a, self.model_b, self.xlabel, f"{self.figure_title} ({described})"),
            )


def outcomes_table(payload: dict, title: str, bin_name: str) -> Table:
    """Figure 3's / 8's data as a table, from the JSON of :class:`TwoModelOutcomes` (non-empty bins only)."""
    columns = ["labels", bin_name, "queries", "both", f"only {payload['model_a']}", f"only {payload['model_b']}", "neither"]
    rows = [
        [source, f"[{row['low']:g}, {row['high']:g})", str(row["queries"]), *(f"{row[f'{outcome}_share']:.2f}" for outcome in OUTCOMES)]
        for source, table in payload["outcomes"].items()
        for row in table
        if row["queries"]
    ]
    return Table(title, columns, rows)


def two_model_outcomes(
    scores: dict[str, np.ndarray],
    judgments,
    metric: str,
    values: np.ndarray,
    edges: np.ndarray,
    settings: FireConfig,
    figure_stem: str,
    figure_title: str,
    xlabel: str,
) -> TwoModelOutcomes:
    """Both / only A / only B / neither per bin of ``values`` for the two models of ``scores`` (a query counts as
    right when ``metric``, a name as the engine's results key it, is > 0), and how its figures are named, titled and their x axis labelled."""
    (name_a, a), (name_b, b) = scores.items()
    result_a, result_b = (settings.evaluate(matrix, judgments, [metric]) for matrix in (a, b))
    tables = {
        "fire": outcomes_by_bin(values, result_a.per_query[metric] > 0, result_b.per_query[metric] > 0, edges),
        "original": outcomes_by_bin(values, result_a.original.per_query[metric] > 0, result_b.original.per_query[metric] > 0, edges),
    }
    return TwoModelOutcomes(name_a, name_b, metric, tables, result_a.signature, figure_stem, figure_title, xlabel)


def length_tables(payload: dict) -> list[Table]:
    """Figure 3's table from :class:`LengthResult`'s JSON."""
    return [outcomes_table(payload, f"{payload['metric']} by caption length (Figure 3)", f"{payload['unit']} bin")]


@dataclass(frozen=True)
class LengthResult(TablesOfJson):
    """Figure 2 (positives per query against length in words) and Figure 3 (who is right, per length bin)."""

    dataset: str
    words: np.ndarray  # caption lengths in words
    positives: np.ndarray  # positive videos per caption
    unit: str
    outcomes: TwoModelOutcomes
    signature: Signature
    tables_of = staticmethod(length_tables)

    def to_json(self) -> dict:
        outcomes = self.outcomes.to_json()
        return {
            "positives_vs_words": positives_by_length(self.words, self.positives),
            "model_a": outcomes["model_a"],
            "model_b": outcomes["model_b"],
            "metric": outcomes["metric"],
            "unit": self.unit,
            "outcomes": outcomes["outcomes"],
            "signature": str(self.signature),
        }

    def figures(self):
        yield f"fig2_positives_vs_length_{self.dataset}", positives_vs_length_figure(self.words, self.positives, self.dataset)
        yield from self.outcomes.figures()


def length_analysis(
    scores: dict[str, np.ndarray], judgments, captions, settings: FireConfig | None = None, dataset: str = "FIRE", sources: Sources | None = None
) -> LengthResult:
    """Figures 2 and 3 for the two models of ``{model: score matrix}``; ``dataset`` names the figures."""
    settings = settings or FireConfig()
    opts = settings.length
    name_a, name_b = scores
    lengths = caption_lengths(captions.texts, opts.unit)
    metric = settings.metric_name(opts.metric)
    outcomes = two_model_outcomes(
        scores,
        judgments,
        metric,
        lengths,
        bin_edges(lengths, opts.bin_width),
        settings,
        "fig3_outcomes_by_length",
        f"{dataset}: {metric} of {name_a} and {name_b} by caption length",
        f"Caption length ({opts.unit})",
    )
    signature = analysis_signature(
        "fire-length", sources, {"metric": metric, "unit": opts.unit, "bin_width": opts.bin_width, "engine": outcomes.engine.nested()}
    )
    positives = np.asarray(judgments.positive.sum(axis=1)).ravel()
    return LengthResult(dataset, caption_lengths(captions.texts, "words"), positives, opts.unit, outcomes, signature)
