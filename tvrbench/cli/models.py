"""The input block of the commands over models (``evaluate``, the fire analyses), declared once (:func:`reads_models`):
``--queries``, ``--videos``, the models as ``--scores`` (or embeddings), ``--fire`` and
``--fire-dataset``, with the captions options of :func:`tvrbench.cli.inputs.reads_captions`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from tvrbench.cli.inputs import (
    FIRE_DATASET,
    ONE_TEXT_EMBEDDINGS,
    ONE_VIDEO_EMBEDDINGS,
    SIMILARITY,
    bundle_options,
    keyword_options,
    reads_captions,
    scores_option,
)
from tvrbench.errors import InputError
from tvrbench.io.inputs import CaptionsReading

if TYPE_CHECKING:
    from tvrbench.evaluation.inputs import Embeddings, Inputs


def existing(path: Optional[Path]) -> Optional[Path]:
    """An input file that is not there is named as soon as its option is read: options are read in the
    order typed, so before an option left out ("Missing option '--videos'")."""
    if path is not None and not path.exists():
        raise InputError(path, "no such file")
    return path


QUERIES = typer.Option(..., "--queries", callback=existing, help="Captions (rows of the score matrices): CSV/TSV/JSONL or MSR-VTT files.")
VIDEOS = typer.Option(..., "--videos", callback=existing, help="Video ids, one per line, in score-matrix column order.")
TEXT_EMBEDDINGS = typer.Option(
    None, "--text-embeddings", help="A model as embeddings: [NAME=]caption embeddings (.npy, .zarr or a folder of .npy row shards); repeatable."
)
VIDEO_EMBEDDINGS = typer.Option(None, "--video-embeddings", help="The video embeddings of the k-th --text-embeddings' model, in the same forms.")
FIRE_FILE = typer.Option(None, "--fire", callback=existing, help="FIRE JSON file.")
FIRE_REQUIRED = typer.Option(..., "--fire", callback=existing, help="FIRE JSON file.")


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
        from tvrbench.evaluation.inputs import read_inputs

        return read_inputs(self.reading, self.queries, self.videos, self.scores, self.fire, self.dataset, self.fire_required, self.embeddings)


def _many_or_embeddings(scores: Optional[list[str]], text_embeddings: Optional[list[str]], video_embeddings: Optional[list[str]], similarity: str):
    from tvrbench.evaluation.inputs import Embeddings

    return scores, Embeddings(text_embeddings or [], video_embeddings or [], similarity)


def _one_or_embeddings(scores: Optional[str], text_embeddings: Optional[str], video_embeddings: Optional[str], similarity: str):
    """One model: a score file, or one pair of embeddings (both files), not both."""
    embedded = text_embeddings is not None or video_embeddings is not None
    if embedded == (scores is not None) or embedded and None in (text_embeddings, video_embeddings):
        raise InputError(None, "give --scores, or --text-embeddings and --video-embeddings")
    from tvrbench.evaluation.inputs import Embeddings

    return [scores] if scores else [], Embeddings(
        [text_embeddings] if text_embeddings else [], [video_embeddings] if video_embeddings else [], similarity
    )


# The forms of --scores a command over models takes: (its type, its default, one model?), the
# embedding options beside it, and their values as (NAME=PATH list, embeddings).
MODEL_FORMS = {
    "many": ((list[str], ..., False), [], lambda scores: (scores, None)),
    "one": ((str, ..., True), [], lambda scores: ([scores], None)),
    "many_or_embeddings": (
        (Optional[list[str]], None, False),
        keyword_options(
            ("text_embeddings", Optional[list[str]], TEXT_EMBEDDINGS),
            ("video_embeddings", Optional[list[str]], VIDEO_EMBEDDINGS),
            ("similarity", str, SIMILARITY),
        ),
        _many_or_embeddings,
    ),
    "one_or_embeddings": (
        (Optional[str], None, True),
        keyword_options(
            ("text_embeddings", Optional[str], ONE_TEXT_EMBEDDINGS),
            ("video_embeddings", Optional[str], ONE_VIDEO_EMBEDDINGS),
            ("similarity", str, SIMILARITY),
        ),
        _one_or_embeddings,
    ),
}


def reads_models(models: str = "many", fire: str | None = "required", scores_use: str = "", fire_help: str | None = None):
    """Give a command the input block of a command over models, declared once: ``--queries``,
    ``--videos``, the ``models`` form of ``--scores`` (one of :data:`MODEL_FORMS`; ``scores_use`` says
    what the command does with them), ``--fire`` (``required``, ``optional`` or ``None`` for none) with
    ``--fire-dataset``, and the captions options; it receives them as one :class:`ModelInputs` in its ``given`` parameter."""
    (kind, default, one), embedding_options, split_models = MODEL_FORMS[models]
    model_options = [*keyword_options(("scores", kind, scores_option(default, one=one, use=scores_use))), *embedding_options]
    fire_option = {"required": FIRE_REQUIRED, "optional": FIRE_FILE, None: None}[fire]
    if fire_help:
        fire_option = typer.Option(fire_option.default, "--fire", callback=existing, help=fire_help)
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
