"""Table 4: pooling bias. A model scored with every FIRE label vs only the labels other models pooled.

FIRE annotated the top 10 of a few systems (the record's ``models`` field). A new model is judged
only where it agrees with those systems; Table 4 emulates that by dropping the records that only
model m's own top 10 brought in (a record pooled by m *and* another system stays). The original
positives are always kept.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvrbench.errors import InputError
from tvrbench.evaluation.fire.config import FireConfig
from tvrbench.results import Sources, Table, TablesOfJson, analysis_signature
from tvrbench.signature import Signature


def pooled_models(fire) -> list[str]:
    """Names of the systems whose top-k lists were pooled, sorted."""
    return sorted({name for models in fire.models for name in models})


def labels_from_other_pools(fire, model: str):
    """The records that at least one system other than ``model`` pooled."""
    if model not in pooled_models(fire):
        raise InputError(fire.source, f"no labels were pooled from model {model!r} (pooled models: {', '.join(pooled_models(fire))})")
    keep = np.fromiter((any(name != model for name in models) for models in fire.models), dtype=bool, count=len(fire))
    return fire.subset(keep)


def pooling_bias(scores: dict, captions, video_ids, fire, metrics, ties: str = "stable", ap: str = "standard") -> list[dict]:
    """For each model (named as in the ``models`` field): metrics with all labels and with the others' only."""
    from tvrbench.evaluation import Judgments, evaluate  # numba and scipy only here: the report shows the tables without

    all_labels = Judgments.build(captions, video_ids, fire=fire)
    rows = []
    for model, matrix in scores.items():
        others = Judgments.build(captions, video_ids, fire=labels_from_other_pools(fire, model))
        for data, judgments in (("all", all_labels), ("others", others)):
            result = evaluate(matrix, judgments, metrics=tuple(metrics), ties=ties, ap=ap)
            rows.append({"model": model, "labels": data, **result.metrics, "signature": result.signature})
    return rows


def pooling_tables(payload: dict) -> list[Table]:
    """Table 4 from :class:`PoolingResult`'s JSON (the metrics are the rows' other keys)."""
    rows = payload["rows"]
    metrics = [key for key in (rows[0] if rows else {}) if key not in ("model", "labels", "signature")]
    return [
        Table(
            "Pooling bias: all labels vs other models' pools only (Table 4)",
            ["model", "labels", *metrics],
            [[row["model"], row["labels"], *(f"{row[m]:.3f}" for m in metrics)] for row in rows],
        )
    ]


@dataclass(frozen=True)
class PoolingResult(TablesOfJson):
    """Table 4: two rows per model (all labels, the others' pools only), each with the engine's
    signature, and the table's ``signature``, which pins the inputs."""

    long_rows: list[dict]
    signature: Signature
    tables_of = staticmethod(pooling_tables)

    @property
    def signatures(self) -> dict[tuple[str, str], Signature]:
        return {(row["model"], row["labels"]): row["signature"] for row in self.long_rows}

    def to_json(self) -> dict:
        return {"rows": [{**row, "signature": str(row["signature"])} for row in self.long_rows], "signature": str(self.signature)}


def pooling_analysis(scores: dict, captions, video_ids, fire, settings: FireConfig | None = None, sources: Sources | None = None) -> PoolingResult:
    """Table 4 for ``{model: score matrix}``, models named as in the FIRE records' ``models`` field
    (``sources``: the files they were read from, which the signature pins)."""
    settings = settings or FireConfig()
    rows = pooling_bias(scores, captions, video_ids, fire, settings.metrics, settings.ties, settings.ap)
    metrics = [settings.metric_name(metric) for metric in settings.metrics]
    return PoolingResult(rows, analysis_signature("fire-pooling", sources, {"models": list(scores), "metrics": metrics, "ties": settings.ties}))
