"""The table of an evaluation's JSON (:class:`~tvrbench.evaluation.engine.EvaluationResult`), apart from
the engine: the report rebuilds it from a written file without loading the engine's numba kernels."""

from __future__ import annotations

from tvrbench.results import Table


def evaluation_tables(payload: dict) -> list[Table]:
    """The table of an evaluation's JSON: a value per metric, or ``A (B C)`` when extra labels were
    used (with all labels, with the original pairs only, and the difference)."""
    metrics, original = payload["metrics"], payload.get("original")
    if original is None:
        return [Table("tvrbench evaluate", ["metric", "value"], [[name, f"{value:.4f}"] for name, value in metrics.items()])]
    delta = payload["delta"]
    rows = [[name, f"{value:.4f} ({original[name]:.4f} {delta[name]:+.4f})"] for name, value in metrics.items()]
    return [Table("tvrbench evaluate", ["metric", "all labels (original + delta)"], rows)]
