"""Model scores, captions × videos (rows = captions, columns = videos, higher = better), in every form
a user gives them, through one opener: :func:`open_scores` picks the form from one table
(:data:`FORMATS`) and returns a :class:`ScoreSource`. The forms:

* ``.npy`` (any path no other form claims): one read of the file's bytes serves both the values and
  the digest, and the header is checked first (memory-mapped), so a wrong shape or type costs no
  read. Never unpickled. float32 and float64 stay as they are (a float32 model is evaluated on its
  own numbers); other integer and float types become float64.
* TREC run (by suffix, :data:`RUN_SUFFIXES`): :mod:`tvrbench.io.trec` (unretrieved pairs rank last).
* Zarr store (``M.zarr``, the array at its root, as ``tvrbench proxies --out M.zarr`` writes one) and
  folder of ``.npy`` row shards (``part-00000.npy``, ``part-00001.npy``, ... in file-name order, one
  width, one precision): a matrix too big for memory, read one shard at a time. The source holds
  paths only, so a Dask task that receives it reads its own shard where it runs (a shared filesystem).
* text and video embeddings (a pair of paths, each ``.npy``, Zarr store or folder, read whole):
  scores computed block by block as ``text[rows] @ video.T``, never held whole (MSR-VTT's full test
  product is 715 MB, its training product 3.4 GB). ``similarity``: ``dot`` (the product as it is) or
  ``cosine`` (rows first divided by their L2 norm). A block's products are computed by BLAS, so they
  may differ from a whole-matrix product in the last bit (tests/evaluation/test_embeddings.py).

Embeddings live here rather than in :mod:`tvrbench.evaluation`: the one table names every form, and
``io`` sits below ``evaluation``, so the table may not reach up to it.

A source gives its shape, its rows block by block with every value checked finite
(:meth:`ScoreSource.blocks`: one message naming the file, row and column of the first bad cell),
its digest and the fields an evaluation's signature records of it. Where the ranking kernel reads
every cell anyway the engine reads blocks unchecked (:meth:`ScoreSource.read`) and asks the source
to name the bad cell only when the kernel finds one.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import ClassVar

import numpy as np

from tvrbench.errors import InputError
from tvrbench.io.files import PICKLE_MAGIC, require_file
from tvrbench.io.trec import read_run, run_to_matrix
from tvrbench.signature import bytes_digest, input_digest

PICKLE_MESSAGE = "contains Python objects (pickle); tvrbench never unpickles input"
BLOCK_VALUES = 1 << 22  # values checked per block: bounded extra memory whatever the matrix size
BLOCK_CELLS = 1 << 23  # embedding scores computed at a time: 32 MB of float32
RUN_SUFFIXES = (".run", ".trec", ".txt", ".tsv")
SIMILARITIES = ("dot", "cosine")

Ids = Sequence[str] | int | None  # the ids of the rows or columns (a TREC run needs them), their count, or unchecked


# --------------------------------------------------------------------------- .npy files


def _check_container(path: Path) -> None:
    magic = require_file(path, "a .npy score matrix")[:6]
    if magic == b"\x93NUMPY":
        return
    if not magic:
        raise InputError(path, "empty file")
    if magic.startswith(PICKLE_MAGIC):
        raise InputError(path, f"is a pickle, not a .npy file; {PICKLE_MESSAGE}")
    if magic.startswith(b"PK"):
        raise InputError(path, "is an .npz archive; save the one score matrix with numpy.save(path, matrix)")
    raise InputError(path, "is not a .npy file (save the matrix with numpy.save; TREC runs are read as runs)")


def score_header(path: str | os.PathLike, shape: tuple[int, int] | None = None) -> np.memmap:
    """A score file's memory map after every check that needs no values: a .npy, no objects, 2-D,
    real, not empty, and ``shape`` (captions, videos) when given."""
    path = Path(path)
    _check_container(path)
    header = _load(path, mmap_mode="r")
    if header.dtype.hasobject:
        raise InputError(path, PICKLE_MESSAGE)
    if header.ndim != 2:
        raise InputError(path, f"must be a 2-D matrix (captions x videos), has shape {header.shape}")
    if header.dtype.kind not in "iuf":
        raise InputError(path, f"has dtype {header.dtype}; scores must be real numbers (integer or float)")
    if shape is not None:
        check_shape(path, header.shape, shape)
    if 0 in header.shape:
        raise InputError(path, f"is empty (shape {header.shape})")
    return header


def check_shape(path: str | os.PathLike, found: tuple[int, int], shape: tuple[int | None, int | None]) -> None:
    """InputError unless a score matrix of shape ``found`` has the (captions, videos) ``shape`` (None: either)."""
    if shape[0] is not None and found[0] != shape[0]:
        raise InputError(path, f"has {found[0]} rows but the queries file has {shape[0]} captions")
    if shape[1] is not None and found[1] != shape[1]:
        raise InputError(path, f"has {found[1]} columns but the videos file has {shape[1]} videos")


def score_dtype(stored: np.dtype) -> np.dtype:
    """The type scores are ranked in: float32 stays float32, any other real type becomes float64
    (native byte order either way)."""
    return np.dtype(np.float32 if stored.kind == "f" and stored.itemsize == 4 else np.float64)


def _load(path: Path, mmap_mode: str | None = None) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False, mmap_mode=mmap_mode)
    except ValueError as error:
        if "object" in str(error).lower() or "pickle" in str(error).lower():
            raise InputError(path, PICKLE_MESSAGE) from None
        raise InputError(path, f"unreadable .npy file ({error})") from None
    except (OSError, EOFError) as error:
        raise InputError(path, f"unreadable .npy file ({error})") from None


def _npy_matrix(path: Path, shape: tuple[int | None, int | None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A ``.npy`` file's matrix (C-ordered float32 / float64, unchecked) and the file's bytes, from
    one read: the digest is of those bytes, so the file is never read a second time for it."""
    header = score_header(path, shape)
    stored, offset, order = header.dtype, header.offset, "F" if header.flags.f_contiguous and not header.flags.c_contiguous else "C"
    rows, columns = header.shape
    del header
    data = _read_bytes(path)
    end = offset + stored.itemsize * rows * columns
    if data.size < end:  # changed since its header was read
        raise InputError(path, f"unreadable .npy file (it holds {data.size} bytes, its header says {end})")
    matrix = data[offset:end].view(stored).reshape((rows, columns), order=order)
    return np.ascontiguousarray(matrix, dtype=score_dtype(stored)), data  # a copy only for other types or Fortran order


def _read_bytes(path: Path) -> np.ndarray:
    """A file's bytes in one uninitialised buffer (no zero-filling, no copy); a read returns at most 2 GB on Linux."""
    with open(path, "rb", buffering=0) as handle:
        data = np.empty(os.fstat(handle.fileno()).st_size, np.uint8)
        view, filled = memoryview(data), 0
        while filled < data.size and (count := handle.readinto(view[filled:])):
            filled += count
    return data[:filled]


def read_scores(path: str | os.PathLike, shape: tuple[int, int] | None = None, check_finite: bool = True) -> np.ndarray:
    """A ``.npy`` score matrix alone, where no ids are known (the sample, a caller's own file):
    ``shape`` (captions, videos) is checked when given, and with ``check_finite`` every value.
    :func:`open_scores` reads every form, with the digest."""
    matrix, _ = _npy_matrix(Path(path), shape)
    return MatrixScores.of(matrix, path).values() if check_finite else matrix


def require_finite(path: str | os.PathLike | None, scores: np.ndarray, first_row: int = 0) -> None:
    """InputError naming the first NaN or infinite cell of ``scores`` (read from ``path``, where its
    rows start at ``first_row``)."""
    step = max(1, BLOCK_VALUES // scores.shape[1])
    for start in range(0, scores.shape[0], step):
        block = scores[start : start + step]
        if not np.isfinite(block).all():
            row, column = np.argwhere(~np.isfinite(block))[0]
            raise InputError(
                path, f"row {first_row + start + row}, column {column} is {block[row, column]}; every score must be finite (no NaN or infinity)"
            )


# --------------------------------------------------------------------------- sources


@dataclass(frozen=True, eq=False)
class ScoreSource:
    """A model's scores as row blocks: ``bounds[k]`` = (first row, end row) of block k; ``source``
    names the input in errors (None: an array given in Python, which names no file)."""

    source: Path | None
    bounds: tuple[tuple[int, int], ...]
    n_videos: int

    whole: ClassVar[bool] = False  # held in memory: the engine ranks it at once, else block by block (on Dask, resumable)
    computed: ClassVar[bool] = False  # computed block by block (embeddings): never read whole, however small
    ndim: ClassVar[int] = 2

    @property
    def shape(self) -> tuple[int, int]:
        return self.bounds[-1][1], self.n_videos

    def __len__(self) -> int:
        return len(self.bounds)

    def read(self, block: int) -> np.ndarray:
        """The rows of block ``block`` as a C-ordered float32 / float64 array, unchecked."""
        raise NotImplementedError

    def blocks(self) -> Iterator[tuple[int, np.ndarray]]:
        """(first row, rows) of every block in order, each checked finite: an InputError names the first bad cell."""
        for k, (start, _) in enumerate(self.bounds):
            block = self.read(k)
            require_finite(self.source, block, start)
            yield start, block

    def values(self) -> np.ndarray:
        """The whole matrix in memory, checked finite, for a reader that needs every row at once
        (memory holds it and one block)."""
        blocks = self.blocks()
        _, first = next(blocks)
        if len(self.bounds) == 1:
            return first
        values = np.empty(self.shape, first.dtype)
        values[: len(first)] = first
        for start, block in blocks:
            values[start : start + len(block)] = block
        return values

    def name_bad_cell(self) -> None:
        """After the ranking kernel found a NaN or infinite score: an InputError naming the first
        one's file, row and column (an array given in Python names no file: the kernel's error stands)."""
        if self.source is not None:
            for _ in self.blocks():
                pass

    @cached_property
    def digest(self) -> str:
        """The signature's ``scores`` value (:func:`~tvrbench.signature.input_digest`), read once
        (the signature and a checkpoint both use it)."""
        return input_digest("scores", self.source)

    @property
    def signature_fields(self) -> dict[str, str]:
        """What an evaluation's signature records of these scores (the engine adds it)."""
        return {"scores": self.digest}


@dataclass(frozen=True, eq=False)
class MatrixScores(ScoreSource):
    """Scores held in memory as one block: a ``.npy`` file, a TREC run, or an array given in Python."""

    matrix: np.ndarray | None = None
    file_digest: str | None = None  # None: an array, which the signature does not name

    whole = True

    @classmethod
    def of(cls, matrix: np.ndarray, source: str | os.PathLike | None = None, digest: str | None = None) -> MatrixScores:
        return cls(None if source is None else Path(source), ((0, matrix.shape[0]),), matrix.shape[1], matrix, digest)

    def read(self, block: int) -> np.ndarray:
        return self.matrix

    @cached_property
    def digest(self) -> str:
        """The file's digest, or for an array its bytes' (how the Python API's embeddings are signed)."""
        return self.file_digest or bytes_digest([np.ascontiguousarray(self.matrix).view(np.uint8).reshape(-1)], algorithm="xxh3")

    @property
    def signature_fields(self) -> dict[str, str]:
        return {} if self.file_digest is None else {"scores": self.file_digest}


@dataclass(frozen=True, eq=False)
class ScoreShards(ScoreSource):
    """A Zarr store (a shard is one chunk row, read whole from its own files) or a folder of ``.npy`` row shards."""

    files: tuple[str, ...] = ()  # the .npy shards, in row order; empty for a Zarr store

    def read(self, block: int) -> np.ndarray:
        if self.files:
            return _npy_matrix(self.source / self.files[block])[0]
        start, stop = self.bounds[block]
        rows = _open_zarr(self.source)[start:stop]
        return np.ascontiguousarray(rows, dtype=score_dtype(rows.dtype))


@dataclass(frozen=True, eq=False)
class EmbeddingScores(ScoreSource):
    """Block ``k`` is ``text[bounds[k]] @ video.T``; ``source`` names the text embeddings."""

    text: np.ndarray | None = None  # captions × width, unit rows for cosine
    video: np.ndarray | None = None  # videos × width, same type
    digests: tuple[str, str] = ("", "")  # the two files' (or arrays') digests
    similarity: str = "dot"

    computed = True

    def read(self, block: int) -> np.ndarray:
        start, stop = self.bounds[block]
        return self.text[start:stop] @ self.video.T

    @cached_property
    def digest(self) -> str:
        """Both inputs and the similarity: a checkpoint of a dot run is not a cosine run's."""
        return f"{'+'.join(self.digests)}:{self.similarity}"

    @property
    def signature_fields(self) -> dict[str, str]:
        return {"text_embeddings": self.digests[0], "video_embeddings": self.digests[1], "similarity": self.similarity}


def as_source(scores: np.ndarray | ScoreSource) -> ScoreSource:
    """``scores`` as a source: a source as it is, an array (the Python API) held as it is."""
    if isinstance(scores, ScoreSource):
        return scores
    matrix = scores if isinstance(scores, np.memmap) else np.asarray(scores)
    if matrix.ndim != 2:
        raise ValueError(f"scores must be a queries × videos matrix, got shape {matrix.shape}")
    return MatrixScores.of(matrix)


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
    arrays = []
    for values, source in zip((text, video), sources):
        values = np.asarray(values)
        if values.ndim != 2 or 0 in values.shape or values.dtype.kind not in "iuf":
            raise InputError(source, f"must be a non-empty 2-D array of real numbers (rows x width), not shape {values.shape}, dtype {values.dtype}")
        arrays.append(MatrixScores.of(np.ascontiguousarray(values, dtype=np.float32 if values.dtype == np.float32 else np.float64), source).values())
    if digests is None:
        digests = tuple(MatrixScores.of(values).digest for values in arrays)
    return _embedding_scores(*arrays, similarity, sources, digests)


def _embedding_scores(text: np.ndarray, video: np.ndarray, similarity: str, sources: tuple, digests: tuple[str, str]) -> EmbeddingScores:
    """Checked, finite embeddings as scores: one width, one precision, unit rows for ``cosine``."""
    if similarity not in SIMILARITIES:
        raise InputError(None, f"unknown similarity {similarity!r}; choose {' or '.join(SIMILARITIES)}")
    if text.shape[1] != video.shape[1]:
        raise InputError(sources[1], f"has width {video.shape[1]} but {sources[0]} has width {text.shape[1]}: embeddings must share one space")
    if text.dtype != video.dtype:
        raise InputError(sources[1], f"is {video.dtype} but {sources[0]} is {text.dtype}: give both in one precision")
    if similarity == "cosine":
        text, video = (_unit_rows(values, source) for values, source in zip((text, video), sources))
    step = max(1, BLOCK_CELLS // video.shape[0])
    bounds = tuple((start, min(text.shape[0], start + step)) for start in range(0, text.shape[0], step))
    return EmbeddingScores(Path(sources[0]), bounds, video.shape[0], text, video, tuple(digests), similarity)


def _unit_rows(values: np.ndarray, source) -> np.ndarray:
    norms = np.linalg.norm(values, axis=1, keepdims=True)
    if not norms.all():
        raise InputError(source, f"row {int(np.flatnonzero(norms == 0)[0])} is all zeros: it has no cosine")
    return values / norms


# --------------------------------------------------------------------------- the forms, and the opener


def _count(ids: Ids) -> int | None:
    return ids if ids is None or isinstance(ids, int) else len(ids)


def _open_npy(path: Path, rows: Ids, columns: Ids, similarity: str) -> MatrixScores:
    shape = None if rows is None and columns is None else (_count(rows), _count(columns))
    matrix, data = _npy_matrix(path, shape)
    return MatrixScores.of(matrix, path, input_digest("scores", path, data=data))


def _open_run(path: Path, rows: Ids, columns: Ids, similarity: str) -> MatrixScores:
    if not all(isinstance(ids, Sequence) for ids in (rows, columns)):
        raise InputError(path, f"is read as a TREC run (suffix {path.suffix}), which names captions and videos by id; a matrix is needed here (.npy)")

    return MatrixScores.of(run_to_matrix(read_run(path), rows, columns), path, input_digest("scores", path))


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


def _open_zarr_store(path: Path, rows: Ids, columns: Ids, similarity: str) -> ScoreShards:
    if not path.is_dir():
        raise InputError(path, "not found: sharded scores are a Zarr store or a folder of .npy row shards")
    array = _checked_zarr(path)
    n_rows, n_columns = array.shape
    step = array.chunks[0]
    return _checked_shards(ScoreShards(path, tuple((start, min(n_rows, start + step)) for start in range(0, n_rows, step)), n_columns), rows, columns)


def _open_npy_folder(path: Path, rows: Ids, columns: Ids, similarity: str) -> ScoreShards:
    """Every shard's header checked (no values read): one width, one precision."""
    files = sorted(p.name for p in path.iterdir() if p.suffix.lower() == ".npy")
    if not files:
        raise InputError(path, "holds no .npy row shards (and is not a Zarr store)")
    bounds, start, width, single = [], 0, None, None
    for name in files:
        header = score_header(path / name)
        (n_rows, n_columns), is_single = header.shape, score_dtype(header.dtype) == np.float32
        if width is not None and n_columns != width:
            raise InputError(path / name, f"has {n_columns} columns but {files[0]} has {width}")
        if single is not None and is_single != single:  # a column's scores are compared in one precision
            raise InputError(path / name, f"has dtype {header.dtype} but {files[0]} is {'' if single else 'not '}float32")
        width, single = n_columns, is_single
        bounds.append((start, start + n_rows))
        start += n_rows
    return _checked_shards(ScoreShards(path, tuple(bounds), width, tuple(files)), rows, columns)


def _checked_shards(shards: ScoreShards, rows: Ids, columns: Ids) -> ScoreShards:
    check_shape(shards.source, shards.shape, (_count(rows), _count(columns)))
    return shards


def _open_embeddings(paths: tuple[Path, Path], rows: Ids, columns: Ids, similarity: str) -> EmbeddingScores:
    """Each file in any matrix form but a run, read whole (embeddings are small beside their
    product: 267 MB of float32 at MSR-VTT's training size), its rows checked against the captions or videos."""
    loaded, digests = [], []
    for path, ids, what in ((paths[0], rows, "captions in the queries file"), (paths[1], columns, "videos in the videos file")):
        part = open_scores(path)
        if ids is not None and part.shape[0] != _count(ids):
            raise InputError(path, f"has {part.shape[0]} rows but there are {_count(ids)} {what}: one embedding per row")
        loaded.append(part.values())
        digests.append(part.digest)
    return _embedding_scores(*loaded, similarity, paths, tuple(digests))


@dataclass(frozen=True)
class ScoreFormat:
    """One form of scores: its name, whether a given input is in it, how it opens, and the kind of source it opens to."""

    name: str
    matches: Callable[[object], bool]
    open: Callable[[object, Ids, Ids, str], ScoreSource]
    kind: type[ScoreSource]


def _is_pair(given: object) -> bool:
    return isinstance(given, tuple)


# In order: the first form that claims an input reads it; a .npy claims whatever is left (its header says whether it is one).
FORMATS = (
    ScoreFormat("text and video embeddings", _is_pair, _open_embeddings, EmbeddingScores),
    ScoreFormat("Zarr store", lambda path: _is_zarr(path) or path.suffix.lower() == ".zarr" and not path.is_dir(), _open_zarr_store, ScoreShards),
    ScoreFormat("folder of .npy row shards", Path.is_dir, _open_npy_folder, ScoreShards),
    ScoreFormat("TREC run", lambda path: path.suffix.lower() in RUN_SUFFIXES, _open_run, MatrixScores),
    ScoreFormat(".npy", lambda path: True, _open_npy, MatrixScores),
)


def _as_input(given: str | os.PathLike | tuple) -> Path | tuple[Path, Path]:
    return tuple(map(Path, given)) if _is_pair(given) else Path(given)


def score_format(given: str | os.PathLike | tuple) -> ScoreFormat:
    """The form of ``given`` (a path, or a (text, video) pair of embeddings), by :data:`FORMATS`; nothing is read."""
    given = _as_input(given)
    return next(form for form in FORMATS if form.matches(given))


def open_scores(given: str | os.PathLike | tuple, rows: Ids = None, columns: Ids = None, similarity: str = "dot") -> ScoreSource:
    """The scores of ``given``: a path in one of the :data:`FORMATS`, or a (text, video) pair of
    embedding paths scored by ``similarity``.

    ``rows`` and ``columns``: the caption and video ids (a TREC run maps its lines through them), or
    their counts; either checks the shape (``None``: not checked). Only headers are read for shards;
    a ``.npy`` or a run is read whole, embeddings are read and their products left to each block.
    """
    given = _as_input(given)
    return score_format(given).open(given, rows, columns, similarity)
