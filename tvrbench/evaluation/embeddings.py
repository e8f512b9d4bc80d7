"""Scores from a model's text and video embeddings, without their product ever held or written whole.

CLIP-style models give embeddings, not score matrices: at MSR-VTT's full test size the product is
715 MB, at training size 3.4 GB. :class:`EmbeddingScores` is a :class:`~tvrbench.io.shards.ScoreShards`
whose row shard is ``text[rows] @ video.T``, computed when the ranking reads it (the sharded engine,
:mod:`tvrbench.evaluation.sharded`), so memory holds the embeddings and one block of scores.

``similarity``: ``dot`` (the product as it is) or ``cosine`` (each row first divided by its L2 norm,
``numpy.linalg.norm`` in the embeddings' own type). A block's products are computed by BLAS in the
embeddings' type, so they may differ from a whole-matrix product in the last bit: the metrics equal
those of the saved product to the last digit for float64, and within float32 rounding for float32
(a rank changes only where two scores lie within rounding of each other; tests/test_embeddings.py).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.io.scores import read_scores_digest, require_finite
from tvrbench.io.shards import ScoreShards, is_sharded, open_shards
from tvrbench.signature import bytes_digest

SIMILARITIES = ("dot", "cosine")
BLOCK_CELLS = 1 << 23  # scores computed at a time: 32 MB of float32


@dataclass(frozen=True, eq=False)
class EmbeddingScores(ScoreShards):
    """Row shard ``k`` is ``text[bounds[k]] @ video.T``; ``source`` names the text embeddings."""

    text: np.ndarray | None = None  # captions × width, unit rows for cosine
    video: np.ndarray | None = None  # videos × width, same type
    digests: tuple[str, str] = ("", "")  # the two files' (or arrays') digests
    similarity: str = "dot"

    def read(self, shard: int) -> np.ndarray:
        start, stop = self.bounds[shard]
        return self.text[start:stop] @ self.video.T

    @cached_property
    def digest(self) -> str:
        """Both inputs and the similarity: a checkpoint of a dot run is not a cosine run's."""
        return f"{'+'.join(self.digests)}:{self.similarity}"

    @property
    def signature_fields(self) -> dict[str, str]:
        """What an evaluation's signature records of these scores (the engine adds it)."""
        return {"text_embeddings": self.digests[0], "video_embeddings": self.digests[1], "similarity": self.similarity}


def embedding_scores(
    text: np.ndarray,
    video: np.ndarray,
    similarity: str = "dot",
    sources: tuple[str | os.PathLike, str | os.PathLike] = ("text embeddings", "video embeddings"),
    digests: tuple[str, str] | None = None,
) -> EmbeddingScores:
    """Scores of ``text`` (captions × width) against ``video`` (videos × width), for :func:`~tvrbench.evaluation.evaluate`.

    Both float32 or both float64 (integers count as float64); every value finite; ``sources`` name
    them in errors, ``digests`` in the signature (default: digests of the arrays' bytes).
    """
    if similarity not in SIMILARITIES:
        raise InputError(None, f"unknown similarity {similarity!r}; choose {' or '.join(SIMILARITIES)}")
    arrays = []
    for values, source in zip((text, video), sources):
        values = np.asarray(values)
        if values.ndim != 2 or 0 in values.shape or values.dtype.kind not in "iuf":
            raise InputError(source, f"must be a non-empty 2-D array of real numbers (rows x width), not shape {values.shape}, dtype {values.dtype}")
        values = np.ascontiguousarray(values, dtype=np.float32 if values.dtype == np.float32 else np.float64)
        require_finite(source, values)
        arrays.append(values)
    text, video = arrays
    if text.shape[1] != video.shape[1]:
        raise InputError(sources[1], f"has width {video.shape[1]} but {sources[0]} has width {text.shape[1]}: embeddings must share one space")
    if text.dtype != video.dtype:
        raise InputError(sources[1], f"is {video.dtype} but {sources[0]} is {text.dtype}: give both in one precision")
    if similarity == "cosine":
        text, video = (_unit_rows(values, source) for values, source in zip((text, video), sources))
    if digests is None:
        digests = tuple(bytes_digest([np.ascontiguousarray(values).view(np.uint8).reshape(-1)], algorithm="xxh3") for values in arrays)
    step = max(1, BLOCK_CELLS // video.shape[0])
    bounds = tuple((start, min(text.shape[0], start + step)) for start in range(0, text.shape[0], step))
    return EmbeddingScores(Path(sources[0]), bounds, video.shape[0], (), text, video, tuple(digests), similarity)


def _unit_rows(values: np.ndarray, source) -> np.ndarray:
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    if not norms.all():
        raise InputError(source, f"row {int(np.flatnonzero(norms == 0)[0])} is all zeros: it has no cosine")
    return values / norms


def read_embedding_scores(
    text_path: str | os.PathLike, video_path: str | os.PathLike, similarity: str, n_captions: int, n_videos: int
) -> EmbeddingScores:
    """:func:`embedding_scores` of two files, rows checked against the captions and videos.

    Each is a ``.npy`` or, as sharded scores are (:mod:`tvrbench.io.shards`), a Zarr store or a folder
    of ``.npy`` row shards of one width and one precision; either is read whole (embeddings are
    small beside their product: 267 MB of float32 at MSR-VTT's training size)."""
    loaded = []
    for path, rows, what in ((text_path, n_captions, "captions in the queries file"), (video_path, n_videos, "videos in the videos file")):
        values, digest = _read_embeddings(Path(path))
        if values.shape[0] != rows:
            raise InputError(path, f"has {values.shape[0]} rows but there are {rows} {what}: one embedding per row")
        loaded.append((values, digest))
    (text, text_digest), (video, video_digest) = loaded
    return embedding_scores(text, video, similarity, (text_path, video_path), (text_digest, video_digest))


def _read_embeddings(path: Path) -> tuple[np.ndarray, str]:
    """One embeddings file, store or folder, and its ``xxh3`` digest; memory holds the rows and one shard."""
    if not is_sharded(path):
        return read_scores_digest(path, check_finite=False)
    shards = open_shards(path)  # the layout and every shard's header: one width, one precision
    return shards.read_all(), shards.digest
