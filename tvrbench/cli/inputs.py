"""What the commands read: captions and video ids, models' scores (``--scores NAME=PATH``), FIRE labels
and settings, with the options that name them, declared once so every command takes them the same way.

Each reader turns a bad file or option into an :class:`~tvrbench.errors.InputError` (one line, exit 2).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Optional

import numpy as np
import pydantic
import typer

from tvrbench.errors import InputError
from tvrbench.io.outputs import safe_name

QUERIES = typer.Option(..., "--queries", help="Captions (rows of the score matrices): CSV/TSV/JSONL or MSR-VTT files.")
VIDEOS = typer.Option(..., "--videos", help="Video ids, one per line, in score-matrix column order.")
SCORES = typer.Option(..., "--scores", help="NAME=PATH of a model's .npy score matrix or TREC run; repeatable.")
ONE_MODEL = typer.Option(..., "--scores", help="The model's .npy score matrix or TREC run (NAME=PATH allowed).")
FIRE_FILE = typer.Option(None, "--fire", help="FIRE JSON file.")
FIRE_REQUIRED = typer.Option(..., "--fire", help="FIRE JSON file.")
DATASET = typer.Option(None, "--dataset", help="Dataset of the FIRE file to use (MSRVTT, MSVD); needed if it has several.")
METRICS = typer.Option(None, "--metrics", help="Comma-separated engine metrics [default: C@1,C@5,C@10,AP].")
BOOTSTRAP_METRICS = typer.Option(None, "--metrics", help="Comma-separated metrics [default: C@1,C@5,C@10].")
SEED = typer.Option(None, "--seed", min=0, help="Random seed [default: 0].")
CONFIG = typer.Option(None, "--config", help="YAML settings (a copy of configs/fire.yaml).")
JSON_OUT = typer.Option(None, "--json", help="Write the results as JSON here.")
PLOTS = typer.Option(None, "--plots", help="Write the figure(s) as PNG and SVG into this folder.")


def read_fire_settings(config: Optional[Path], section: str | None = None, **overrides):
    """The FIRE settings (``configs/fire.yaml`` or the defaults) with the command-line values that were
    given laid over them (or over their ``section``)."""
    from tvrbench.evaluation.fire.config import load_config

    settings = load_config(config)
    target = getattr(settings, section) if section else settings
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        updated = type(target).model_validate({**target.model_dump(), **given})
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        raise InputError(None, f"option {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    final = settings.model_copy(update={section: updated}) if section else updated
    _check_metrics([*getattr(updated, "metrics", ()), *filter(None, [getattr(updated, "metric", None)])], final.ap)
    return final


def _check_metrics(names: list[str], ap: str) -> None:
    """Refuse a metric name the engine would refuse, before any input is read."""
    if not names:
        return
    from tvrbench.evaluation.metrics import parse_metric

    for name in names:
        try:
            parse_metric(name, ap=ap)
        except ValueError as error:
            raise InputError(None, f"--metrics: {error}") from None


def split_list(text: Optional[str], convert=str) -> Optional[list]:
    """``a,b,c`` as a list (``None`` when the option was not given)."""
    if text is None:
        return None
    try:
        return [convert(part.strip()) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(None, f"cannot read {text!r} as a comma-separated list") from None


def captions_and_videos(queries: Path, videos: Path):
    from tvrbench.io.captions import read_captions, read_video_ids

    return read_captions(queries), read_video_ids(videos)


def model_name(spec: str) -> tuple[str, Path]:
    """``NAME=PATH``, or a bare path named by its file name minus a ``scores_`` prefix."""
    name, separator, path = spec.partition("=")
    if not separator:
        path = spec
        name = Path(spec).stem.removeprefix("scores_")
    if not name or not path:
        raise InputError(None, f"--scores {spec!r}: expected NAME=PATH")
    return safe_name(name, "model name (it names plot files)"), Path(path)


def read_models(specs: list[str], captions, video_ids) -> dict[str, np.ndarray]:
    """Score matrices by model name; TREC runs become matrices (unretrieved pairs rank last)."""
    from tvrbench.io.scores import read_scores
    from tvrbench.io.trec import read_run, run_to_matrix

    models: dict[str, np.ndarray] = {}
    for spec in specs:
        name, path = model_name(spec)
        if name in models:
            raise InputError(path, f"model name {name!r} is given twice; use NAME=PATH")
        if path.suffix == ".npy":
            models[name] = read_scores(path, shape=(len(captions), len(video_ids)))
        else:
            models[name] = run_to_matrix(read_run(path), captions.caption_ids, video_ids)
    return models


def read_fire_labels(path: Optional[Path], dataset: Optional[str], required: bool = True):
    """FIRE labels of one dataset (the one named, or the file's only one); ``None`` when optional and not given."""
    from tvrbench.io.fire import read_fire

    if path is None:
        if required:
            raise InputError(None, "this analysis needs FIRE labels: give --fire F.json")
        return None
    labels = read_fire(path, dataset)
    if dataset is None and len(labels.datasets()) > 1:
        raise InputError(path, f"has datasets {', '.join(labels.datasets())}; choose one with --dataset")
    return labels


@dataclass
class Inputs:
    """The files a command was given, read; ``sources`` names them for the result's signature."""

    captions: object
    video_ids: list[str]
    models: dict[str, np.ndarray]
    labels: object  # FireLabels or None
    sources: dict[str, Optional[Path]]

    @cached_property
    def judgments(self):
        """Original and FIRE labels over captions × videos (built on first use)."""
        from tvrbench.evaluation import Judgments

        return Judgments.build(self.captions, self.video_ids, fire=self.labels, videos_source=str(self.sources["videos"]))

    @property
    def model(self) -> tuple[str, np.ndarray]:
        """The one model given."""
        (name, matrix), = self.models.items()
        return name, matrix

    @property
    def dataset(self) -> str:
        """The FIRE dataset's name (it names figures)."""
        return self.labels.datasets()[0]

    def pair(self, analysis: str = "this figure") -> dict[str, np.ndarray]:
        """The two models given, which ``analysis`` compares."""
        if len(self.models) != 2:
            raise InputError(None, f"{analysis} compares two models: give --scores exactly twice")
        return self.models


def read_inputs(queries: Path, videos: Path, scores: list[str] = (), fire: Optional[Path] = None,
                dataset: Optional[str] = None, fire_required: bool = True) -> Inputs:
    """Captions, video ids, the ``--scores`` models and the FIRE labels (``None`` when optional and not given)."""
    captions, video_ids = captions_and_videos(queries, videos)
    models = read_models(scores, captions, video_ids)
    labels = read_fire_labels(fire, dataset, fire_required)
    one_model = model_name(scores[0])[1] if len(scores) == 1 else None
    return Inputs(captions, video_ids, models, labels, {"queries": queries, "videos": videos, "scores": one_model, "fire": fire})
