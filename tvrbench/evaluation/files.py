"""One model evaluated from files, as ``tvrbench evaluate`` does: the files read in a fixed order (so
the first bad one is the one reported) and each named in the result's signature by its digest.
The engine itself (:func:`~tvrbench.evaluation.engine.evaluate`) takes arrays or score sources; this
is the layer that a script evaluating files shares with the command line."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import numpy as np

from tvrbench.io.captions import read_video_ids
from tvrbench.io.inputs import CaptionsReading, read_fire_dataset
from tvrbench.io.relevance import load_relevance
from tvrbench.io.scores import open_scores, score_format
from tvrbench.io.trec import read_qrels
from tvrbench.signature import input_digest

if TYPE_CHECKING:
    from tvrbench.evaluation.engine import EvaluationResult
    from tvrbench.evaluation.labels import Judgments
    from tvrbench.evaluation.settings import EvaluateSettings
    from tvrbench.io.captions import Captions
    from tvrbench.io.scores import ScoreSource


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

    def read(self) -> EvaluationInputs:
        """The scores, labels and signature fields, read in the order of the command's options."""
        from tvrbench.evaluation.labels import Judgments

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
        from tvrbench.evaluation.engine import evaluate

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
