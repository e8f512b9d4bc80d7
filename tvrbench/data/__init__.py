"""Data shipped with tvrbench: the embedded sample (``tvrbench/data/sample``, see its README.md).

The sample is small, invented for the project (no dataset content), and complete: captions,
video order, three models' score matrices, FIRE-format labels and a graded relevance matrix. It
lets every command run, and every tutorial work, without downloading anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tvrbench.io.captions import Captions, read_captions, read_video_ids
from tvrbench.io.fire import FireLabels, read_fire
from tvrbench.io.scores import read_scores

SAMPLE_DIR = Path(__file__).parent / "sample"
SAMPLE_FILES = (
    "captions.csv",
    "videos.txt",
    "fire.json",
    "relevance.npy",
    "facets.json",
    "README.md",
    "scores_strong.npy",
    "scores_genderblind.npy",
    "scores_objectonly.npy",
)


def sample_path(name: str) -> Path:
    """Path of one file of the sample, e.g. ``sample_path("captions.csv")``."""
    if name not in SAMPLE_FILES:
        raise ValueError(f"the sample has no file {name!r}; it has {', '.join(SAMPLE_FILES)}")
    return SAMPLE_DIR / name


@dataclass(frozen=True)
class Sample:
    captions: Captions
    video_ids: list[str]
    scores: dict[str, np.ndarray]  # model name -> (captions x videos) float32
    fire: FireLabels
    relevance: np.ndarray  # (captions x videos) float32 in [0, 1]


def load_sample() -> Sample:
    """Every file of the sample, read with tvrbench's own readers."""
    captions = read_captions(sample_path("captions.csv"))
    video_ids = read_video_ids(sample_path("videos.txt"))
    shape = (len(captions), len(video_ids))
    models = [name.removeprefix("scores_").removesuffix(".npy") for name in SAMPLE_FILES if name.startswith("scores_")]
    return Sample(
        captions=captions,
        video_ids=video_ids,
        scores={model: read_scores(sample_path(f"scores_{model}.npy"), shape) for model in models},
        fire=read_fire(sample_path("fire.json")),
        relevance=read_scores(sample_path("relevance.npy"), shape),
    )
