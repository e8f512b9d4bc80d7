"""Graded relevance matrices (values in [0, 1]), read one way by every command that takes one:
``evaluate --relevance``, ``report --relevance``, ``publish --relevance`` and the ``proxy-study``
commands' ``--matrix`` / ``--relevance``.

:func:`open_relevance` accepts every form ``tvrbench proxies --out`` writes (:data:`RELEVANCE_FORMATS`),
so a proxy written in one form gives the same numbers as in any other. The sidecar ``M.json``
beside it (:func:`~tvrbench.io.sidecars.sidecar_path`) names its rows and columns; it is checked
against the matrix here, once, for every reader. Nothing is unpickled.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tvrbench.errors import InputError
from tvrbench.io.captions import Captions
from tvrbench.io.files import string_list
from tvrbench.io.scores import read_zarr_matrix, score_header
from tvrbench.io.sidecars import open_sidecar, sidecar_path
from tvrbench.signature import input_digest

if TYPE_CHECKING:
    import scipy.sparse as sp

RELEVANCE_FORMATS = {".npy": "dense", ".npz": "scipy.sparse CSR", ".zarr": "dense Zarr store", ".parquet": "folder of sparse Parquet parts"}
PARQUET_COLUMNS = ("query_id", "item_id", "score")  # a sparse proxy's Parquet parts (tvrbench proxies --out M.parquet)


@dataclass(frozen=True)
class Relevance:
    """A relevance matrix as stored (rows × columns in the file's order) and its sidecar (``{}`` when none)."""

    values: np.ndarray | sp.csr_matrix  # a .npy memory-mapped, sparse forms sparse (cells not stored are 0)
    sidecar: dict
    source: Path

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape

    def dense(self) -> np.ndarray:
        """The matrix as an array, cells not stored as 0 (a .npy stays memory-mapped: the studies read it in row blocks)."""
        return self.values if isinstance(self.values, np.ndarray) else self.values.toarray()

    @cached_property
    def digest(self) -> str:
        """The file's, store's or folder's ``xxh3`` digest, read when asked for (the signature's)."""
        return input_digest("relevance", self.source)


def open_relevance(path: str | Path, require_sidecar: bool = False) -> Relevance:
    """The relevance matrix at ``path``, in the form its suffix names (:data:`RELEVANCE_FORMATS`).

    Its values must lie in [0, 1]. With ``require_sidecar`` (and always for Parquet, whose cells name
    their rows and columns by id) the sidecar must be there and name every row and column.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in RELEVANCE_FORMATS:
        accepted = ", ".join(f"{known} ({form})" for known, form in RELEVANCE_FORMATS.items())
        raise InputError(path, f"unknown relevance matrix format {path.suffix or '(no suffix)'!r}; give one of {accepted}")
    sidecar_file = sidecar_path(path)
    sidecar = open_sidecar(path, required=require_sidecar or suffix == ".parquet")
    if suffix == ".npy":
        values = score_header(path)  # memory-mapped after every check that needs no values
    elif suffix == ".zarr":
        values = read_zarr_matrix(path)
    elif suffix == ".npz":
        values = _read_npz(path)
    else:
        values = read_proxy_cells(path, sidecar)[0]
    if "shape" in sidecar and list(values.shape) != sidecar["shape"]:
        raise InputError(path, f"shape {values.shape} does not match its sidecar {sidecar['shape']}")
    if require_sidecar or "row_ids" in sidecar or "col_ids" in sidecar:
        string_list(sidecar, "row_ids", sidecar_file, values.shape[0])
        string_list(sidecar, "col_ids", sidecar_file, values.shape[1])
    stored = values if isinstance(values, np.ndarray) else values.data
    if stored.size and not (stored.min() >= 0 and stored.max() <= 1):  # NaN fails both; no cell-sized temporaries
        raise InputError(path, "relevance values must lie in [0, 1]")
    return Relevance(values, sidecar, path)


def _read_npz(path: Path) -> sp.csr_matrix:
    import scipy.sparse as sp

    if not path.is_file():
        raise InputError(path, "no such file")
    try:
        matrix = sp.load_npz(path).tocsr()
    except (OSError, ValueError, KeyError, EOFError) as error:
        raise InputError(path, f"not a scipy.sparse .npz matrix: {error}") from None
    if matrix.ndim != 2 or matrix.dtype.kind not in "iuf":
        raise InputError(path, f"has dtype {matrix.dtype}; relevance values must be real numbers")
    return matrix


def read_proxy_cells(path: str | Path, sidecar: dict | None = None) -> tuple[sp.csr_matrix, dict]:
    """A Parquet proxy (the folder of part files ``tvrbench proxies --out M.parquet`` writes) as a CSR
    matrix in the row and column order of its sidecar (read here unless given), and the sidecar;
    cells not stored are 0."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    import scipy.sparse as sp

    path = Path(path)
    parts = sorted(path.glob("part-*.parquet")) if path.is_dir() else []
    if not parts:
        raise InputError(path, "not a Parquet proxy folder (part-*.parquet files, written by tvrbench proxies --out M.parquet)")
    sidecar_file = sidecar_path(path)
    if sidecar is None:
        sidecar = open_sidecar(path, required=True)
    row_ids = string_list(sidecar, "row_ids", sidecar_file)
    col_ids = string_list(sidecar, "col_ids", sidecar_file)
    try:
        table = pa.concat_tables(pq.read_table(part, columns=list(PARQUET_COLUMNS)) for part in parts)
        rows = pc.index_in(table["query_id"], value_set=pa.array(row_ids, pa.string()))
        columns = pc.index_in(table["item_id"], value_set=pa.array(col_ids, pa.string()))
        scores = table["score"].to_numpy()
    except (OSError, KeyError, pa.ArrowException) as error:
        raise InputError(path, f"not readable as {', '.join(PARQUET_COLUMNS)} Parquet: {error}") from None
    if rows.null_count or columns.null_count:
        raise InputError(path, f"names a query or item that is not in {sidecar_file.name}")
    matrix = sp.coo_matrix((scores, (rows.to_numpy(), columns.to_numpy())), shape=(len(row_ids), len(col_ids))).tocsr()
    if matrix.nnz != len(scores):
        raise InputError(path, "holds a (query_id, item_id) pair twice")
    return matrix, sidecar


def load_relevance(path: Path, shape: tuple[int, int], captions: Captions, video_ids: list[str]) -> tuple[np.ndarray, str]:
    """A graded relevance matrix oriented and ordered like the scores, and its name for the signature.

    A proxy's sidecar ``M.json`` (from ``tvrbench proxies``) names its rows (``videos`` or
    ``captions``) and their ids; the matrix is transposed and reordered to captions × videos.
    """
    relevance = open_relevance(path)
    matrix, digest = relevance.dense(), relevance.digest
    name = f"{path.name}:{digest}"
    sidecar = sidecar_path(path)
    if sidecar.is_file():
        meta = relevance.sidecar
        proxy, rows = meta.get("proxy", "proxy"), meta.get("rows", "captions")
        if not isinstance(proxy, str) or rows not in ("videos", "captions"):
            raise InputError(sidecar, "not a proxy sidecar: 'proxy' must be a name and 'rows' videos or captions")
        name = f"{proxy}:{digest}"
        if meta.get("level") == "caption":
            raise InputError(path, "is a caption × caption proxy; build a video-level one (tvrbench proxies --level video)")
        if "row_ids" in meta or "col_ids" in meta:
            row_ids, col_ids = meta["row_ids"], meta["col_ids"]
            caption_ids, videos_of = (col_ids, row_ids) if rows == "videos" else (row_ids, col_ids)
            matrix = reorder(matrix.T if rows == "videos" else matrix, caption_ids, captions.caption_ids, videos_of, video_ids, sidecar)
        elif rows == "videos":
            matrix = matrix.T
    if matrix.shape != shape:
        raise InputError(path, f"has shape {matrix.shape}, expected {shape} (captions × videos)")
    return np.require(matrix, requirements=("C_CONTIGUOUS", "WRITEABLE", "ENSUREARRAY")), name  # a memory map is read here


def reorder(
    matrix: np.ndarray, caption_ids: list[str], wanted_captions: list[str], video_ids: list[str], wanted_videos: list[str], source: Path
) -> np.ndarray:
    """The rows and columns of ``matrix`` (labelled ``caption_ids`` × ``video_ids``) in the wanted order."""
    row_of = {caption_id: row for row, caption_id in enumerate(caption_ids)}
    column_of = {video_id: column for column, video_id in enumerate(video_ids)}
    missing = [c for c in wanted_captions if c not in row_of] or [v for v in wanted_videos if v not in column_of]
    if missing:
        raise InputError(source, f"has no relevance for {missing[0]!r} of the queries / videos given")
    rows = np.fromiter((row_of[c] for c in wanted_captions), np.int64)
    columns = np.fromiter((column_of[v] for v in wanted_videos), np.int64)
    return matrix[np.ix_(rows, columns)]
