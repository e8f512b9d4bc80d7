"""Table 1 for any number of models: every metric with FIRE labels, with original labels, and the gain.

A cell reads ``A (B + C)`` as in the paper: A with FIRE positives, B with the original positives
only, C = A − B. Metrics bounded by 1 are shown in percent; ranks (MdR, MnR) as they are.
The numbers come from the evaluation engine (``tvrbench.evaluation.evaluate``, in ``engine.py``); this module only
arranges them.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from tvrbench.evaluation.fire.config import FireConfig
from tvrbench.results import Sources, Table, TablesOfJson, analysis_signature
from tvrbench.signature import Signature

RANK_METRICS = ("MdR", "MnR")


def comparison_rows(results: dict, metrics) -> list[dict]:
    """One row per (metric, model): ``with_fire``, ``original`` and ``delta``."""
    rows = []
    for metric in metrics:
        for model, result in results.items():
            with_fire = result.metrics[metric]
            original = result.original.metrics[metric] if result.original is not None else None
            rows.append(
                {
                    "metric": metric,
                    "model": model,
                    "with_fire": with_fire,
                    "original": original,
                    "delta": None if original is None else with_fire - original,
                }
            )
    return rows


def format_cell(metric: str, with_fire: float, original: float | None) -> str:
    """``67.4 (42.4 + 25.0)`` for bounded metrics (percent), ``3.0 (5.0 − 2.0)`` for ranks."""
    scale = 1.0 if metric.startswith(RANK_METRICS) else 100.0
    if original is None:
        return f"{scale * with_fire:.1f}"
    delta = with_fire - original
    sign = "+" if delta >= 0 else "−"
    return f"{scale * with_fire:.1f} ({scale * original:.1f} {sign} {scale * abs(delta):.1f})"


def comparison_table(rows: list[dict]) -> list[list[str]]:
    """Rows × models grid of formatted cells, header first (``metric``, then model names)."""
    models = list(dict.fromkeys(row["model"] for row in rows))
    metrics = list(dict.fromkeys(row["metric"] for row in rows))
    cells = {(row["metric"], row["model"]): format_cell(row["metric"], row["with_fire"], row["original"]) for row in rows}
    return [["metric", *models], *([metric, *(cells[metric, model] for model in models)] for metric in metrics)]


def comparison_csv(rows: list[dict]) -> str:
    """Long-form CSV: metric, model, with_fire, original, delta."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=["metric", "model", "with_fire", "original", "delta"], lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def comparison_tables(payload: dict) -> list[Table]:
    """Table 1 from :class:`ComparisonResult`'s JSON."""
    header, *rows = payload["table"]
    return [Table("With FIRE (original + gain), percent for bounded metrics (Table 1)", header, rows)]


@dataclass(frozen=True)
class ComparisonResult(TablesOfJson):
    """Table 1: the engine's result per model, each with its own signature (one run per model), and
    the table's ``signature``, which pins the inputs."""

    results: dict
    metrics: list[str]
    signature: Signature
    tables_of = staticmethod(comparison_tables)

    @property
    def signatures(self) -> dict[str, Signature]:
        return {name: result.signature for name, result in self.results.items()}

    @property
    def long_rows(self) -> list[dict]:
        return comparison_rows(self.results, self.metrics)

    def to_json(self) -> dict:
        rows = self.long_rows
        signatures = {name: str(signature) for name, signature in self.signatures.items()}
        return {"rows": rows, "table": comparison_table(rows), "signatures": signatures, "signature": str(self.signature)}

    def to_csv(self) -> str:
        return comparison_csv(self.long_rows)


def compare_analysis(scores: dict, judgments, settings: FireConfig | None = None, sources: Sources | None = None) -> ComparisonResult:
    """Table 1 for ``{model: score matrix}`` (``sources``: the files they were read from, which the signature pins)."""
    settings = settings or FireConfig()
    results = {name: settings.evaluate(matrix, judgments, settings.metrics) for name, matrix in scores.items()}  # with original labels too
    metrics = [settings.metric_name(metric) for metric in settings.metrics]
    signature = analysis_signature("fire-compare", sources, {"models": list(results), "metrics": metrics, "ties": settings.ties})
    return ComparisonResult(results, metrics, signature)
