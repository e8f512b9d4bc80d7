"""One model evaluated from files, as ``tvrbench evaluate`` does: the files read in a fixed order (so
the first bad one is the one reported) and each named in the result's signature by its digest.
The engine itself (:func:`~tvrbench.evaluation.engine.evaluate`) takes arrays; this is the layer
that a script evaluating files shares with the command line."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import numpy as np

from tvrbench.io.inputs import CaptionsReading
from tvrbench.io.shards import ScoreShards, is_sharded
from tvrbench.signature import input_digest

if TYPE_CHECKING:
    from tvrbench.evaluation.engine import EvaluationResult
    from tvrbench.evaluation.labels import Judgments
    from tvrbench.evaluation.settings import EvaluateSettings
    from tvrbench.io.captions import Captions


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
    def sharded(self) -> bool:
        """Whether the scores are read (or computed) shard by shard: only those can run on a Dask
        cluster and resume from a checkpoint."""
        return self.text_embeddings is not None or is_sharded(self.scores)

    def read(self) -> EvaluationInputs:
        """The scores, labels and signature fields, read in the order of the command's options."""
        from tvrbench.evaluation.labels import Judgments
        from tvrbench.io.captions import read_video_ids
        from tvrbench.io.inputs import read_fire_dataset
        from tvrbench.io.relevance import load_relevance

        captions, video_ids = self.reading.read(self.queries), read_video_ids(self.videos)
        matrix, fields = self._read_scores(captions, video_ids)  # queries, videos: the engine signs their counts
        fields = {"queries_file": input_digest("queries", self.queries), "videos_file": input_digest("videos", self.videos), **fields}
        fire_labels = qrels_labels = relevance = None
        if self.fire is not None:
            fire_labels = read_fire_dataset(self.fire, captions, self.fire_dataset)
            fields["fire"], fields["fire_dataset"] = input_digest("fire", self.fire), "+".join(fire_labels.datasets())
        if self.qrels is not None:
            from tvrbench.io.trec import read_qrels

            qrels_labels, fields["qrels"] = read_qrels(self.qrels), input_digest("qrels", self.qrels)
        judgments = Judgments.build(captions, video_ids, fire=fire_labels, qrels=qrels_labels, videos_source=str(self.videos))
        if self.relevance is not None:
            relevance, fields["proxy"] = load_relevance(self.relevance, matrix.shape, captions, video_ids)
        return EvaluationInputs(self, captions, matrix, judgments, relevance, fields)

    def _read_scores(self, captions: Captions, video_ids: list[str]) -> tuple[np.ndarray | ScoreShards, dict[str, str]]:
        """The model's scores and what signs them (the engine signs embeddings and their similarity itself)."""
        if self.text_embeddings is not None:
            from tvrbench.evaluation.embeddings import read_embedding_scores

            return read_embedding_scores(self.text_embeddings, self.video_embeddings, self.similarity, len(captions), len(video_ids)), {}
        from tvrbench.io.inputs import read_score_matrix

        # check_finite=False: the ranking pass reads, and checks, every cell
        model = read_score_matrix(self.scores, captions.caption_ids, video_ids, check_finite=False, sharded=True)
        return model.values, {"scores": model.digest}


@dataclass(frozen=True)
class EvaluationInputs:
    """What :meth:`EvaluationFiles.read` read: the engine's arguments and the captions they cover."""

    files: EvaluationFiles
    captions: Captions
    scores: np.ndarray | ScoreShards
    judgments: Judgments
    relevance: Optional[np.ndarray]
    signature_fields: dict[str, str]

    def evaluate(self, settings: EvaluateSettings, client=None, checkpoint: Optional[Path] = None) -> EvaluationResult:
        """The engine's result under ``settings`` (on the Dask ``client`` and resuming from ``checkpoint``
        when given); a NaN or infinite score is reported with the file and cell it is in."""
        from tvrbench.evaluation.engine import evaluate
        from tvrbench.evaluation.ranking import NonFiniteScores
        from tvrbench.io.scores import require_finite

        try:
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
        except NonFiniteScores:
            require_finite(self.files.scores or self.files.text_embeddings, self.scores)  # names the first bad cell
            raise
