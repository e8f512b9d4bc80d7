"""Model score matrices: ``.npy``, rows = captions (queries), columns = videos, higher = better.

The file is read with one ``np.load(..., allow_pickle=False)`` (never unpickled); a memory map
first checks its header, so a wrong shape or type costs no read. :func:`read_scores_digest` digests
the bytes it loaded rather than reading the file a second time. Every value must be finite: a bad
file gets one message naming the first bad cell. Where the ranking kernel reads every cell anyway,
the caller may leave that check to it (``check_finite=False``) and call :func:`require_finite` only
when the kernel finds a bad cell. float32 and float64 stay as they are (a float32 model is
evaluated on its own numbers); other integer and float types become float64.
(TREC run files are read by :mod:`tvrbench.io.trec`.)
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.io.files import PICKLE_MAGIC, require_file
from tvrbench.signature import bytes_digest, input_algorithm, input_digest

PICKLE_MESSAGE = "contains Python objects (pickle); tvrbench never unpickles input"
BLOCK_VALUES = 1 << 22  # values checked per block: bounded extra memory whatever the matrix size


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


def read_scores(path: str | os.PathLike, shape: tuple[int, int] | None = None, check_finite: bool = True) -> np.ndarray:
    """Load a 2-D, real score matrix; ``shape`` (captions, videos) is checked when given, and with
    ``check_finite`` that every value is finite."""
    return _read(Path(path), shape, check_finite, digest=False)[0]


def read_scores_digest(path: str | os.PathLike, shape: tuple[int, int] | None = None, check_finite: bool = True) -> tuple[np.ndarray, str]:
    """:func:`read_scores` and the file's digest as an input matrix (:func:`~tvrbench.signature.input_digest`)."""
    return _read(Path(path), shape, check_finite, digest=True)


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


def check_shape(path: str | os.PathLike, found: tuple[int, int], shape: tuple[int, int]) -> None:
    """InputError unless a score matrix of shape ``found`` has the (captions, videos) ``shape``."""
    if found[0] != shape[0]:
        raise InputError(path, f"has {found[0]} rows but the queries file has {shape[0]} captions")
    if found[1] != shape[1]:
        raise InputError(path, f"has {found[1]} columns but the videos file has {shape[1]} videos")


def score_dtype(stored: np.dtype) -> np.dtype:
    """The type scores are ranked in: float32 stays float32, any other real type becomes float64
    (native byte order either way)."""
    return np.dtype(np.float32 if stored.kind == "f" and stored.itemsize == 4 else np.float64)


def _read(path: Path, shape: tuple[int, int] | None, check_finite: bool, digest: bool) -> tuple[np.ndarray, str | None]:
    header = score_header(path, shape)
    dtype = score_dtype(header.dtype)
    offset = header.offset
    del header
    stored = _load(path)
    name = _loaded_digest(path, offset, stored) if digest else None
    scores = np.ascontiguousarray(stored, dtype=dtype)  # a copy only for other types or Fortran order
    if check_finite:
        require_finite(path, scores)
    return scores, name


def _loaded_digest(path: Path, offset: int, stored: np.ndarray) -> str:
    """The file's digest as an input matrix (:func:`~tvrbench.signature.input_digest`), from the
    header's bytes and the loaded array's (the file's data, in the file's order); read again only if
    the file holds bytes past the array."""
    with open(path, "rb") as handle:
        head = handle.read(offset)
        if handle.seek(0, os.SEEK_END) != offset + stored.nbytes:
            return input_digest("scores", path)
    return bytes_digest((head, stored.reshape(-1, order="A").view(np.uint8)), algorithm=input_algorithm("scores"))


def _load(path: Path, mmap_mode: str | None = None) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False, mmap_mode=mmap_mode)
    except ValueError as error:
        if "object" in str(error).lower() or "pickle" in str(error).lower():
            raise InputError(path, PICKLE_MESSAGE) from None
        raise InputError(path, f"unreadable .npy file ({error})") from None
    except (OSError, EOFError) as error:
        raise InputError(path, f"unreadable .npy file ({error})") from None


def require_finite(path: str | os.PathLike, scores: np.ndarray, first_row: int = 0) -> None:
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
