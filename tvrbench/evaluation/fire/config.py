"""Settings of the FIRE analyses: defaults live here; ``configs/fire.yaml`` is a commented copy.

Every field is named after the paper's experiment it drives, so a user can copy the YAML, change
one number (say the bootstrap sizes) and pass it with ``--config``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from tvrbench.config import Seed, Settings, load_settings
from tvrbench.evaluation.choices import ApVariant, TieRule


class OverlapConfig(Settings):
    """Table 3: agreement of two models' top-k lists."""

    k: int = Field(10, ge=1)
    rbo_p: float = Field(0.9, gt=0.0, lt=1.0)
    rbo_variant: Literal["ext", "min", "trunc"] = "ext"


class BootstrapConfig(Settings):
    """§4.3 / Figure 4: how far a mean over N resampled queries strays from the full-set mean."""

    sizes: list[Annotated[int, Field(ge=1, le=10_000_000)]] = Field([500, 1000, 3000], min_length=1)  # beyond any test set
    resamples: int = Field(10_000, ge=1)
    seed: Seed = 0
    confidence: float = Field(0.95, gt=0.0, lt=1.0)
    metrics: list[str] = ["C@1", "C@5", "C@10"]
    chunk_elements: int = Field(4_000_000, ge=1)


class LengthConfig(Settings):
    """Figures 2 and 3: positives and correctness against caption length."""

    unit: Literal["characters", "words"] = "characters"
    bin_width: int = Field(20, ge=1)
    metric: str = "C@1"


class TrainOverlapConfig(Settings):
    """Appendix D: character n-gram TF-IDF similarity of each test caption to the train captions."""

    ngram: int = Field(5, ge=1)
    top: int = Field(10, ge=1)
    fit_on: Literal["test", "train", "both"] = "test"
    metric: str = "C@5"
    bin_width: float = Field(0.1, gt=0.0, le=1.0)


class QueueConfig(Settings):
    """§4.2 / §4.3: which pairs of a new model's top k still need a human label."""

    k: int = Field(10, ge=1)
    effect_size: float = Field(0.01, gt=0.0, lt=1.0)
    metric: str = "C@1"


class LabelsConfig(Settings):
    """FIRE ⇄ TREC qrels: how a pair's label is decided and what a disagreement becomes."""

    rule: Literal["file", "majority", "any", "unanimous"] = "file"
    disagreements: Literal["omit", "irrelevant", "relevant", "negative"] = "omit"


class PlotConfig(Settings):
    formats: list[Literal["png", "svg"]] = ["png", "svg"]
    dpi: int = Field(200, ge=50)


class FireConfig(Settings):
    """All FIRE analysis settings; ``metrics``, ``ties`` and ``ap`` are passed to the engine."""

    metrics: list[str] = ["C@1", "C@5", "C@10", "AP"]
    ties: TieRule = "stable"
    ap: ApVariant = "standard"
    overlap: OverlapConfig = OverlapConfig()
    bootstrap: BootstrapConfig = BootstrapConfig()
    length: LengthConfig = LengthConfig()
    train_overlap: TrainOverlapConfig = TrainOverlapConfig()
    queue: QueueConfig = QueueConfig()
    labels: LabelsConfig = LabelsConfig()
    plots: PlotConfig = PlotConfig()

    def evaluate(self, scores, judgments, metrics):
        """The engine's result for ``scores`` with these settings' tie rule and AP variant."""
        from tvrbench.evaluation import evaluate

        return evaluate(scores, judgments, metrics=tuple(metrics), ties=self.ties, ap=self.ap)

    def metric_name(self, name: str) -> str:
        """The key of metric ``name``'s values in the engine's results under these settings: ``AP`` is
        ``AP(variant=fire)`` with ``ap: fire``."""
        from tvrbench.evaluation.metrics import parse_metric

        return str(parse_metric(name, ap=self.ap))


def load_config(path: str | Path | None) -> FireConfig:
    """The defaults, or a YAML file validated against them (unknown keys and wrong types rejected)."""
    return load_settings(FireConfig, path)
