"""A model's inputs read from files, the one reader that ``tvrbench evaluate``, the fire analyses and a
script share: captions and video ids, the models' scores (a file each, ``NAME=PATH``, or pairs of
embeddings), FIRE labels of one dataset, TREC qrels and graded relevance.

:class:`EvaluationFiles` is one model through the engine (:func:`~tvrbench.evaluation.engine.evaluate`
takes arrays or score sources): files read in a fixed order, so the first bad one is the one
reported, each named in the result's signature by its digest, and a sharded run resuming from
:func:`checkpoint_of` its result. :func:`read_inputs` reads the models the papers' analyses compare.
Every reader raises :class:`~tvrbench.errors.InputError` naming the file or option and the problem.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import numpy as np

from tvrbench.errors import InputError
from tvrbench.evaluation.labels import Judgments
from tvrbench.io.captions import Captions, read_video_ids
from tvrbench.io.inputs import CaptionsReading, default_name, named_paths, split_named_path
from tvrbench.io.outputs import safe_name
from tvrbench.io.relevance import load_relevance
from tvrbench.io.scores import ScoreSource, open_scores, score_format
from tvrbench.io.trec import read_qrels
from tvrbench.signature import input_digest

if TYPE_CHECKING:
    from tvrbench.evaluation.engine import EvaluationResult
    from tvrbench.evaluation.settings import EvaluateSettings
    from tvrbench.io.fire import FireLabels


# --------------------------------------------------------------------------- FIRE labels and scores


def select_fire_dataset(fire: FireLabels, captions: Captions, wanted: str | None) -> FireLabels:
    """The FIRE labels of one dataset: the one named, else the one whose queries match the captions."""
    if wanted is not None:
        return fire.select(wanted)
    names = fire.datasets()
    if len(names) <= 1:
        return fire
    texts = set(captions.texts)
    matches = {name: sum(text in texts for text in fire.select(name).query) for name in names}
    best = max(matches, key=matches.get)
    if list(matches.values()).count(matches[best]) > 1:
        raise InputError(fire.source, f"holds datasets {', '.join(names)} and the captions match none best; pass --fire-dataset")
    return fire.select(best)


def read_fire_dataset(path: str | Path, captions: Captions, wanted: str | None) -> FireLabels:
    """:func:`select_fire_dataset` of a FIRE file (only the named dataset's records are kept while reading)."""
    from tvrbench.io.fire import read_fire  # pydantic: only where FIRE labels are given

    return read_fire(path, wanted) if wanted is not None else select_fire_dataset(read_fire(path), captions, None)


def open_named_scores(specs: Iterable[str], option: str, caption_ids: list[str], video_ids: list[str]) -> dict[str, ScoreSource]:
    """The ``NAME=PATH`` models of one option, by name, each opened by :func:`~tvrbench.io.scores.open_scores`."""
    return {name: open_scores(path, caption_ids, video_ids) for name, path in named_paths(specs, option).items()}


@dataclass(frozen=True)
class Embeddings:
    """Models given as embeddings: the k-th ``--text-embeddings`` with the k-th ``--video-embeddings``,
    named by the ``NAME=`` of either (the same if both) or the text file's name."""

    text: list[str]
    video: list[str]
    similarity: str = "dot"

    def read(self, caption_ids: list[str], video_ids: list[str]) -> dict[str, ScoreSource]:
        if len(self.text) != len(self.video):
            raise InputError(None, "give --video-embeddings once for each --text-embeddings: the k-th of each are one model")
        models = {}
        for text, video in zip(self.text, self.video):
            text_name, text_path = split_named_path(text, "--text-embeddings")
            video_name, video_path = split_named_path(video, "--video-embeddings")
            if text_name and video_name and text_name != video_name:
                raise InputError(None, f"--text-embeddings {text_name} is paired with --video-embeddings {video_name}: give them in the same order")
            name = text_name or video_name or default_name(text_path)
            if name in models:
                raise InputError(None, f"--text-embeddings: the name {name!r} is given twice; name each model with NAME=PATH")
            models[name] = open_scores((text_path, video_path), caption_ids, video_ids, self.similarity)
        return models


# --------------------------------------------------------------------------- the models the analyses compare


@dataclass
class Inputs:
    """The files an analysis was given, read; ``sources`` names them for the result's signature."""

    captions: Captions
    video_ids: list[str]
    scores: dict[str, ScoreSource]
    labels: FireLabels | None
    sources: dict[str, Optional[Path] | list[Path]]  # scores: one file per --scores, in the order given

    @cached_property
    def models(self) -> dict[str, np.ndarray | ScoreSource]:
        """Scores by model name: each matrix read whole, every value checked; embeddings stay a source,
        scored block by block (only the analyses that take them through the engine are given them)."""
        return {name: scores if scores.computed else scores.values() for name, scores in self.scores.items()}

    @cached_property
    def judgments(self) -> Judgments:
        """Original and FIRE labels over captions × videos (built on first use)."""
        return Judgments.build(self.captions, self.video_ids, fire=self.labels, videos_source=str(self.sources["videos"]))

    @property
    def model(self) -> tuple[str, np.ndarray]:
        """The one model given."""
        ((name, matrix),) = self.models.items()
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


def read_inputs(
    reading: CaptionsReading,
    queries: Path,
    videos: Path,
    scores: Iterable[str] = (),
    fire: Optional[Path] = None,
    dataset: Optional[str] = None,
    fire_required: bool = True,
    embeddings: Embeddings | None = None,
) -> Inputs:
    """Captions, video ids, the ``--scores`` models and those given as ``embeddings`` (their names
    name plot files), and the FIRE labels of one dataset (``None`` when optional and not given)."""
    if embeddings is not None and not (scores or embeddings.text or embeddings.video):
        raise InputError(None, "give a model: --scores, or --text-embeddings and --video-embeddings")
    captions, video_ids = reading.read(queries), read_video_ids(videos)
    models = open_named_scores(scores or (), "--scores", captions.caption_ids, video_ids)
    score_files = [model.source for model in models.values()]  # embeddings: the engine signs them
    for name, model in (embeddings.read(captions.caption_ids, video_ids) if embeddings else {}).items():
        if name in models:
            raise InputError(None, f"the model name {name!r} is given to --scores and to --text-embeddings; name each model with NAME=PATH")
        models[name] = model
    for name in models:
        safe_name(name, "model name (it names plot files)")
    if fire is None and fire_required:
        raise InputError(None, "this analysis needs FIRE labels: give --fire F.json")
    labels = None if fire is None else read_fire_dataset(fire, captions, dataset)
    return Inputs(captions, video_ids, models, labels, {"queries": queries, "videos": videos, "scores": score_files, "fire": fire})


# --------------------------------------------------------------------------- one model through the engine


def checkpoint_of(result: Path) -> Path:
    """The folder where a sharded evaluation keeps each finished shard until its ``result`` is written:
    a rerun resumes from it; remove it once the result is safe."""
    return result.with_name(f".{result.name}.shards")


@dataclass(frozen=True)
class EvaluationFiles:
    """One model, as a score file (``scores``) or a pair of embeddings scored by ``similarity``, over
    the captions of ``queries`` and the videos of ``videos``, with the labels beyond the original
    pairs: FIRE (one ``fire_dataset``), TREC ``qrels`` and graded ``relevance`` for nDCG."""

    queries: Path
    videos: Path
    scores: Optional[Path] = None
    text_embeddings: Optional[Path] = None
    video_embeddings: Optional[Path] = None
    similarity: str = "dot"
    fire: Optional[Path] = None
    fire_dataset: Optional[str] = None
    qrels: Optional[Path] = None
    relevance: Optional[Path] = None
    reading: CaptionsReading = field(default_factory=CaptionsReading)

    @property
    def score_input(self) -> Path | tuple[Path, Path]:
        """What :func:`~tvrbench.io.scores.open_scores` opens: the score file, or the pair of embeddings."""
        return (self.text_embeddings, self.video_embeddings) if self.text_embeddings is not None else self.scores

    @property
    def sharded(self) -> bool:
        """Whether the scores are read (or computed) shard by shard: only those can run on a Dask
        cluster and resume from a checkpoint. Decided by the form alone, before anything is read."""
        return not score_format(self.score_input).kind.whole

    def checkpoint(self, result: Path) -> Optional[Path]:
        """:func:`checkpoint_of` ``result`` for sharded scores; ``None`` for scores read whole (nothing to resume)."""
        return checkpoint_of(result) if self.sharded else None

    def read(self) -> EvaluationInputs:
        """The scores, labels and signature fields, read in the order of the command's options."""
        captions, video_ids = self.reading.read(self.queries), read_video_ids(self.videos)
        scores = open_scores(self.score_input, captions.caption_ids, video_ids, self.similarity)  # the engine signs their counts
        fields = {"queries_file": input_digest("queries", self.queries), "videos_file": input_digest("videos", self.videos)}
        if self.scores is not None:  # a score file is signed after the captions and videos; embeddings lead, as the engine puts them
            fields.update(scores.signature_fields)
        fire_labels = qrels_labels = relevance = None
        if self.fire is not None:
            fire_labels = read_fire_dataset(self.fire, captions, self.fire_dataset)
            fields["fire"], fields["fire_dataset"] = input_digest("fire", self.fire), "+".join(fire_labels.datasets())
        if self.qrels is not None:
            qrels_labels, fields["qrels"] = read_qrels(self.qrels), input_digest("qrels", self.qrels)
        judgments = Judgments.build(captions, video_ids, fire=fire_labels, qrels=qrels_labels, videos_source=str(self.videos))
        if self.relevance is not None:
            relevance, fields["proxy"] = load_relevance(self.relevance, scores.shape, captions, video_ids)
        return EvaluationInputs(self, captions, scores, judgments, relevance, fields)


@dataclass(frozen=True)
class EvaluationInputs:
    """What :meth:`EvaluationFiles.read` read: the engine's arguments and the captions they cover."""

    files: EvaluationFiles
    captions: Captions
    scores: ScoreSource
    judgments: Judgments
    relevance: Optional[np.ndarray]
    signature_fields: dict[str, str]

    def evaluate(self, settings: EvaluateSettings, client=None, checkpoint: Optional[Path] = None) -> EvaluationResult:
        """The engine's result under ``settings`` (on the Dask ``client`` and resuming from ``checkpoint``
        when given); a NaN or infinite score is reported with the file and cell it is in."""
        from tvrbench.evaluation.engine import evaluate  # numba: not for a script that only reads

        return evaluate(
            self.scores,
            self.judgments,
            metrics=settings.metrics,
            ties=settings.ties,
            ap=settings.ap,
            ndcg=settings.ndcg,
            relevance=self.relevance,
            fusion=settings.fusion,
            signature_fields=self.signature_fields,
            client=client,
            checkpoint=checkpoint,
        )
