"""Defaults of ``tvrbench evaluate`` (copied, commented, in ``configs/evaluate.yaml``)."""

from __future__ import annotations

from pydantic import field_validator

from tvrbench.config import Settings
from tvrbench.evaluation.choices import ApVariant, FusionPolicy, NdcgVariant, TieRule
from tvrbench.evaluation.metrics import DEFAULT_METRICS, parse_metric


class EvaluateSettings(Settings):
    metrics: list[str] = list(DEFAULT_METRICS)
    ties: TieRule = "stable"
    ap: ApVariant = "standard"
    ndcg: NdcgVariant = "epic"
    fusion: FusionPolicy = "judged"

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, names: list[str]) -> list[str]:
        for name in names:
            parse_metric(name)  # raises ValueError naming the unknown metric
        if not names:
            raise ValueError("at least one metric")
        return names
