"""The input block of the commands over models (``evaluate``, the fire analyses), declared once (:func:`reads_models`):
``--queries``, ``--videos``, the models as ``--scores`` (or embeddings), ``--fire`` and
``--fire-dataset``, with the captions options of :func:`tvrbench.cli.inputs.reads_captions`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli.inputs import (
    FIRE_DATASET,
    ONE_TEXT_EMBEDDINGS,
    ONE_VIDEO_EMBEDDINGS,
    SIMILARITY,
    Embeddings,
    Inputs,
    bundle_options,
    keyword_options,
    read_inputs,
    reads_captions,
)
from tvrbench.errors import InputError
from tvrbench.io.inputs import CaptionsReading

QUERIES = typer.Option(..., "--queries", help="Captions (rows of the score matrices): CSV/TSV/JSONL or MSR-VTT files.")
VIDEOS = typer.Option(..., "--videos", help="Video ids, one per line, in score-matrix column order.")
SCORES = typer.Option(..., "--scores", help="NAME=PATH of a model's .npy score matrix or TREC run; repeatable.")
ONE_MODEL = typer.Option(..., "--scores", help="The model's .npy score matrix or TREC run (NAME=PATH allowed).")
MODELS = typer.Option(None, "--scores", help="NAME=PATH of a model's .npy score matrix or TREC run; repeatable.")
TEXT_EMBEDDINGS = typer.Option(
    None, "--text-embeddings", help="A model as embeddings: [NAME=]caption embeddings (.npy, .zarr or a folder of .npy row shards); repeatable."
)
VIDEO_EMBEDDINGS = typer.Option(None, "--video-embeddings", help="The video embeddings of the k-th --text-embeddings' model, in the same forms.")
ONE_MODEL_OR_EMBEDDINGS = typer.Option(None, "--scores", help="The model's .npy score matrix or TREC run (NAME=PATH allowed).")
FIRE_FILE = typer.Option(None, "--fire", help="FIRE JSON file.")
FIRE_REQUIRED = typer.Option(..., "--fire", help="FIRE JSON file.")


@dataclass(frozen=True)
class ModelInputs:
    """The input block of a command over models, as given: read by :meth:`read` once the command has
    checked its settings (a bad setting is refused before any file is read)."""

    reading: CaptionsReading
    queries: Path
    videos: Path
    scores: list[str]
    fire: Optional[Path]
    dataset: Optional[str]
    fire_required: bool
    embeddings: Embeddings | None

    def read(self) -> Inputs:
        return read_inputs(self.reading, self.queries, self.videos, self.scores, self.fire, self.dataset, self.fire_required, self.embeddings)


def _many_or_embeddings(scores: Optional[list[str]], text_embeddings: Optional[list[str]], video_embeddings: Optional[list[str]], similarity: str):
    return scores, Embeddings(text_embeddings or [], video_embeddings or [], similarity)


def _one_or_embeddings(scores: Optional[str], text_embeddings: Optional[str], video_embeddings: Optional[str], similarity: str):
    """One model: a score file, or one pair of embeddings (both files), not both."""
    embedded = text_embeddings is not None or video_embeddings is not None
    if embedded == (scores is not None) or embedded and None in (text_embeddings, video_embeddings):
        raise InputError(None, "give --scores, or --text-embeddings and --video-embeddings")
    return [scores] if scores else [], Embeddings(
        [text_embeddings] if text_embeddings else [], [video_embeddings] if video_embeddings else [], similarity
    )


# The forms of --scores a command over models takes: its options, and their values as (NAME=PATH list, embeddings).
MODEL_FORMS = {
    "many": (keyword_options(("scores", list[str], SCORES)), lambda scores: (scores, None)),
    "one": (keyword_options(("scores", str, ONE_MODEL)), lambda scores: ([scores], None)),
    "many_or_embeddings": (
        keyword_options(
            ("scores", Optional[list[str]], MODELS),
            ("text_embeddings", Optional[list[str]], TEXT_EMBEDDINGS),
            ("video_embeddings", Optional[list[str]], VIDEO_EMBEDDINGS),
            ("similarity", str, SIMILARITY),
        ),
        _many_or_embeddings,
    ),
    "one_or_embeddings": (
        keyword_options(
            ("scores", Optional[str], ONE_MODEL_OR_EMBEDDINGS),
            ("text_embeddings", Optional[str], ONE_TEXT_EMBEDDINGS),
            ("video_embeddings", Optional[str], ONE_VIDEO_EMBEDDINGS),
            ("similarity", str, SIMILARITY),
        ),
        _one_or_embeddings,
    ),
}


def reads_models(models: str = "many", fire: str | None = "required", scores_help: str | None = None, fire_help: str | None = None):
    """Give a command the input block of a command over models, declared once: ``--queries``,
    ``--videos``, the ``models`` form of ``--scores`` (one of :data:`MODEL_FORMS`), ``--fire``
    (``required``, ``optional`` or ``None`` for none) with ``--fire-dataset``, and the captions
    options; it receives them as one :class:`ModelInputs` in its ``given`` parameter."""
    model_options, split_models = MODEL_FORMS[models]
    model_options = list(model_options)
    if scores_help:
        model_options[0] = model_options[0].replace(default=typer.Option(model_options[0].default.default, "--scores", help=scores_help))
    fire_option = {"required": FIRE_REQUIRED, "optional": FIRE_FILE, None: None}[fire]
    if fire_help:
        fire_option = typer.Option(fire_option.default, "--fire", help=fire_help)
    fire_options = keyword_options(("fire_path", Path, fire_option), ("dataset", Optional[str], FIRE_DATASET)) if fire else []
    options = [
        *keyword_options(("reading", CaptionsReading, None), ("queries", Path, QUERIES), ("videos", Path, VIDEOS)),
        *model_options,
        *fire_options,
    ]

    def given(reading, queries, videos, fire_path=None, dataset=None, **model_values) -> ModelInputs:
        scores, embeddings = split_models(**model_values)
        return ModelInputs(reading, queries, videos, scores, fire_path, dataset, fire == "required", embeddings)

    return lambda command: reads_captions(bundle_options(command, "given", options, given))
