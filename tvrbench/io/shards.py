"""Score matrices too big for memory, read one row shard at a time.

Two layouts, both captions × videos, rows = captions:

* a **Zarr store** (``M.zarr``, the array at its root, as ``tvrbench proxies --out M.zarr`` writes
  one): a shard is one chunk row, so each shard is read whole from its own files;
* a **folder of ``.npy`` files**, the row shards in file-name order (``part-00000.npy``,
  ``part-00001.npy``, ...), each with the same number of columns.

A shard holds ``float32`` or ``float64`` as stored, other real types as ``float64`` (as
:func:`tvrbench.io.scores.read_scores`). The object holds paths only, so a Dask task that receives it
reads its own shard where it runs (the files must be visible there: a shared filesystem).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.io.scores import check_shape, read_scores, score_dtype, score_header
from tvrbench.signature import input_digest

SHARD_SUFFIXES = (".zarr",)  # besides folders of .npy files


@dataclass(frozen=True)
class ScoreShards:
    """A score matrix as row shards: ``bounds[k]`` = (first row, end row) of shard k."""

    source: Path
    bounds: tuple[tuple[int, int], ...]
    n_videos: int
    files: tuple[str, ...] = ()  # the .npy shards, in row order; empty for a Zarr store

    @cached_property
    def digest(self) -> str:
        """The store's or folder's digest as scores, read once (the signature and a checkpoint both use it)."""
        return input_digest("scores", self.source)

    @property
    def shape(self) -> tuple[int, int]:
        return self.bounds[-1][1], self.n_videos

    ndim = 2

    def __len__(self) -> int:
        return len(self.bounds)

    def read(self, shard: int) -> np.ndarray:
        """The rows of shard ``shard`` as a C-ordered float32 / float64 array."""
        if self.files:
            return read_scores(self.source / self.files[shard], check_finite=False)
        start, stop = self.bounds[shard]
        block = _open_zarr(self.source)[start:stop]
        return np.ascontiguousarray(block, dtype=score_dtype(block.dtype))

    def read_all(self) -> np.ndarray:
        """The whole matrix in memory, for a reader that needs every row at once; memory holds it and one shard."""
        values = None
        for shard, (start, stop) in enumerate(self.bounds):
            block = self.read(shard)
            if values is None:
                values = np.empty(self.shape, block.dtype)
            values[start:stop] = block
        return values


def is_sharded(path: str | os.PathLike) -> bool:
    """Whether ``path`` names sharded scores (a Zarr store or a folder) rather than one file."""
    return Path(path).is_dir() or Path(path).suffix.lower() in SHARD_SUFFIXES


def open_shards(path: str | os.PathLike, shape: tuple[int, int] | None = None) -> ScoreShards:
    """Check the layout and every shard's header (no values are read); ``shape`` as (captions, videos)."""
    path = Path(path)
    if not path.is_dir():
        raise InputError(path, "not found: sharded scores are a Zarr store or a folder of .npy row shards")
    shards = _zarr_shards(path) if _is_zarr(path) else _npy_shards(path)
    if shape is not None:
        check_shape(path, shards.shape, shape)
    return shards


def _is_zarr(path: Path) -> bool:
    return (path / "zarr.json").is_file() or (path / ".zarray").is_file()


def _open_zarr(path: Path):
    import zarr

    try:
        return zarr.open_array(path, mode="r")
    except Exception as error:  # zarr raises many kinds on a damaged store
        raise InputError(path, f"unreadable Zarr array ({type(error).__name__}: {error})") from None


def _checked_zarr(path: Path):
    array = _open_zarr(path)
    if array.ndim != 2:
        raise InputError(path, f"must hold a 2-D matrix (captions x videos), has shape {array.shape}")
    if array.dtype.kind not in "iuf":
        raise InputError(path, f"has dtype {array.dtype}; values must be real numbers (integer or float)")
    if 0 in array.shape:
        raise InputError(path, f"is empty (shape {array.shape})")
    return array


def read_zarr_matrix(path: str | os.PathLike) -> np.ndarray:
    """A whole 2-D Zarr array in memory (a proxy written with ``tvrbench proxies --out M.zarr``)."""
    return _checked_zarr(Path(path))[:]


def _zarr_shards(path: Path) -> ScoreShards:
    array = _checked_zarr(path)
    rows, columns = array.shape
    step = array.chunks[0]
    return ScoreShards(path, tuple((start, min(rows, start + step)) for start in range(0, rows, step)), columns)


def _npy_shards(path: Path) -> ScoreShards:
    files = sorted(p.name for p in path.iterdir() if p.suffix.lower() == ".npy")
    if not files:
        raise InputError(path, "holds no .npy row shards (and is not a Zarr store)")
    bounds, start, columns, single = [], 0, None, None
    for name in files:
        header = score_header(path / name)
        (rows, width), is_single = header.shape, score_dtype(header.dtype) == np.float32
        if columns is not None and width != columns:
            raise InputError(path / name, f"has {width} columns but {files[0]} has {columns}")
        if single is not None and is_single != single:  # a column's scores are compared in one precision
            raise InputError(path / name, f"has dtype {header.dtype} but {files[0]} is {'' if single else 'not '}float32")
        columns, single = width, is_single
        bounds.append((start, start + rows))
        start += rows
    return ScoreShards(path, tuple(bounds), columns, tuple(files))
