"""Defaults of ``tvrbench evaluate`` (copied, commented, in ``configs/evaluate.yaml``)."""

from __future__ import annotations

from typing import Literal

from pydantic import field_validator

from tvrbench.config import Settings
from tvrbench.evaluation.metrics import DEFAULT_METRICS, parse_metric


class EvaluateSettings(Settings):
    metrics: list[str] = list(DEFAULT_METRICS)
    ties: Literal["stable", "optimistic", "pessimistic", "average"] = "stable"
    ap: Literal["standard", "fire"] = "standard"
    ndcg: Literal["epic", "paper", "full"] = "epic"
    fusion: Literal["judged", "relevant", "none"] = "judged"

    @field_validator("metrics")
    @classmethod
    def _known_metrics(cls, names: list[str]) -> list[str]:
        for name in names:
            parse_metric(name)  # raises ValueError naming the unknown metric
        if not names:
            raise ValueError("at least one metric")
        return names
