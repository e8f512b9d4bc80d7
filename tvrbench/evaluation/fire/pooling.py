"""Table 4: pooling bias. A model scored with every FIRE label vs only the labels other models pooled.

FIRE annotated the top 10 of a few systems (the record's ``models`` field). A new model is judged
only where it agrees with those systems; Table 4 emulates that by dropping the records that only
model m's own top 10 brought in (a record pooled by m *and* another system stays). The original
positives are always kept.
"""

from __future__ import annotations

import numpy as np

from tvrbench.errors import InputError
from tvrbench.evaluation import Judgments, evaluate


def pooled_models(fire) -> list[str]:
    """Names of the systems whose top-k lists were pooled, sorted."""
    return sorted({name for models in fire.models for name in models})


def labels_from_other_pools(fire, model: str):
    """The records that at least one system other than ``model`` pooled."""
    if model not in pooled_models(fire):
        raise InputError(
            fire.source, f"no labels were pooled from model {model!r} (pooled models: {', '.join(pooled_models(fire))})"
        )
    keep = np.fromiter((any(name != model for name in models) for models in fire.models), dtype=bool, count=len(fire))
    return fire.subset(keep)


def pooling_bias(scores: dict, captions, video_ids, fire, metrics, ties: str = "stable", ap: str = "standard") -> list[dict]:
    """For each model (named as in the ``models`` field): metrics with all labels and with the others' only."""
    all_labels = Judgments.build(captions, video_ids, fire=fire)
    rows = []
    for model, matrix in scores.items():
        others = Judgments.build(captions, video_ids, fire=labels_from_other_pools(fire, model))
        for data, judgments in (("all", all_labels), ("others", others)):
            result = evaluate(matrix, judgments, metrics=tuple(metrics), ties=ties, ap=ap)
            rows.append({"model": model, "labels": data, **result.metrics, "signature": result.signature})
    return rows
