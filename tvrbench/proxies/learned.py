"""Learned proxies (Wray et al., supplementary C): cosine similarity of sentence embeddings or video features.

Cosines below zero are clipped to 0 so that, like the other proxies, relevance lies in [0, 1].
A video with several captions is represented by the normalized mean of its captions' embeddings.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.proxies.video import VideoGroups
from tvrbench.resources import sentence_model


def unit_rows(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)


def sentence_embeddings(texts: Sequence[str], model: str, batch_size: int = 128) -> np.ndarray:
    """Unit-length float64 embeddings from a sentence-transformers model (name or local path)."""
    encoder = sentence_model(model)
    vectors = encoder.encode(list(texts), batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False)
    return unit_rows(np.asarray(vectors, dtype=np.float64))


def video_embeddings(caption_vectors: np.ndarray, groups: VideoGroups) -> np.ndarray:
    return unit_rows(np.stack([caption_vectors[members].mean(axis=0) for members in groups.members]))


def read_features(path: str | Path, n_videos: int) -> np.ndarray:
    """Video features ``.npy`` (videos x dims, rows in the order of first appearance in the captions file)."""
    try:
        features = np.load(path, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise InputError(path, f"not a readable .npy array: {error}") from None
    if features.ndim != 2 or features.shape[0] != n_videos:
        raise InputError(path, f"expected a 2-D array with {n_videos} rows (one per video), got shape {features.shape}")
    if not (np.issubdtype(features.dtype, np.integer) or np.issubdtype(features.dtype, np.floating)) or not np.isfinite(features).all():
        raise InputError(path, "features must be finite real numbers")
    return features.astype(np.float64)


class CosineKernel:
    """max(0, cos(row i, column j)) for blocks of rows; inputs are unit vectors."""

    def __init__(self, rows: np.ndarray, columns: np.ndarray):
        self.rows = rows
        self.columns_t = np.ascontiguousarray(columns.T)
        self.shape = (rows.shape[0], columns.shape[0])

    def block(self, rows: slice) -> np.ndarray:
        return np.clip(self.rows[rows] @ self.columns_t, 0.0, 1.0)
