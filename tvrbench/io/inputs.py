"""What commands and the Python API read beside captions: named files, models' scores, FIRE labels of
one dataset, graded relevance, and the sidecar that travels with an output.

One rule each, so every command reads the same file the same way:

* ``NAME=PATH`` (:func:`split_named_path`, :func:`named_paths`): the text before the first ``=``
  names the file, unless the whole text is an existing path (a path may contain ``=``). A bare path
  is named by its file name up to the first dot, without a ``scores_`` prefix (``scores_clip.npy``
  → ``clip``). Two files of one option may not share a name.
* Scores (:func:`read_score_matrix`): a file ending in one of :data:`RUN_SUFFIXES` is a TREC run,
  anything else a ``.npy`` matrix (rows = captions, columns = videos).
* Sidecars (:func:`sidecar_path`): ``M.json`` beside a matrix, ``X.tsv.json`` beside anything else.
* Sparse proxies (:func:`read_proxy_cells`): the Parquet folder ``tvrbench proxies`` writes, read here
  below the proxies so that ``evaluate --relevance`` and ``publish`` need none of their builders.

Every reader raises :class:`~tvrbench.errors.InputError` naming the file or option and the problem.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from tvrbench.errors import InputError
from tvrbench.io.captions import Captions, read_captions
from tvrbench.io.files import read_json_object, string_list
from tvrbench.io.shards import ScoreShards, is_sharded, open_shards, read_zarr_matrix

if TYPE_CHECKING:
    import scipy.sparse

    from tvrbench.io.fire import FireLabels

RUN_SUFFIXES = (".run", ".trec", ".txt", ".tsv")
# Outputs whose sidecar replaces their suffix (M.npy → M.json); every other output's sidecar adds .json.
MATRIX_SUFFIXES = (".npy", ".npz", ".zarr", ".parquet")
PARQUET_COLUMNS = ("query_id", "item_id", "score")  # a sparse proxy's Parquet parts (tvrbench proxies --out M.parquet)


def sidecar_path(path: str | Path) -> Path:
    """Where the signature and settings of output ``path`` go, and where readers look for them.

    A matrix (``.npy``, ``.npz``, ``.zarr``, ``.parquet``) has ``M.json``; any other file (an MC
    split, contrast records, qrels) has its full name plus ``.json`` (``X.jsonl.json``), because
    ``X.json`` could be a second output of another kind. Both forms are what earlier versions wrote.
    """
    path = Path(path)
    if path.suffix.lower() in MATRIX_SUFFIXES:
        return path.with_suffix(".json")
    return path.with_name(path.name + ".json")


# --------------------------------------------------------------------------- NAME=PATH


def default_name(path: Path) -> str:
    """A file's name up to its first dot, without a ``scores_`` prefix."""
    return path.name.split(".")[0].removeprefix("scores_")


def split_named_path(value: str | Path, option: str) -> tuple[str | None, Path]:
    """``NAME=PATH`` → (NAME, PATH); a bare path → (None, PATH). ``option`` names the flag in errors."""
    text = str(value)
    name, separator, path = text.partition("=")
    if not separator or os.path.exists(text):
        return None, Path(text)
    if not name or not path:
        raise InputError(None, f"{option} {text!r}: expected NAME=PATH")
    return name, Path(path)


def named_paths(values: Iterable[str | Path], option: str, name_required: bool = False) -> dict[str, Path]:
    """Paths by name (bare paths named by :func:`default_name`, unless ``name_required``); a name given
    twice is refused."""
    named: dict[str, Path] = {}
    for value in values:
        name, path = split_named_path(value, option)
        if name is None:
            if name_required:
                raise InputError(None, f"{option} {str(value)!r}: expected NAME=PATH")
            name = default_name(path)
        if name in named:
            raise InputError(None, f"{option}: the name {name!r} is given twice; name each file with NAME=PATH")
        named[name] = path
    return named


# --------------------------------------------------------------------------- captions and scores


@dataclass(frozen=True)
class CaptionsReading:
    """How to read captions files: the ``--format``, ``--video-list`` and ``--trust-pickle`` of a command."""

    format: str = "auto"
    video_list: Path | None = None
    trust_pickle: bool = False

    def read(self, path: str | Path, filter_videos: bool = True) -> Captions:
        """The captions of ``path``; ``filter_videos=False`` for a second file (training captions) that
        the video list of the evaluated split does not describe."""
        video_list = self.video_list if filter_videos else None
        return read_captions(path, format=self.format, video_list=video_list, trust_pickle=self.trust_pickle)


@dataclass(frozen=True)
class ScoreMatrix:
    """One model's scores, captions × videos, with what identifies them (as ranx's ``Run``)."""

    name: str
    values: np.ndarray | ScoreShards  # shards: a matrix too big for memory, read shard by shard
    digest: str  # the signature's ``scores`` field (:func:`~tvrbench.signature.input_digest`)
    source: Path


def read_score_matrix(
    path: str | Path, caption_ids: list[str], video_ids: list[str], name: str | None = None, check_finite: bool = True, sharded: bool = False
) -> ScoreMatrix:
    """A TREC run (by suffix, see :data:`RUN_SUFFIXES`; unretrieved pairs rank last) or a ``.npy`` matrix,
    rows in the order of ``caption_ids``, columns in that of ``video_ids``; with ``sharded``, also a
    Zarr store or a folder of ``.npy`` row shards (:mod:`tvrbench.io.shards`), opened, not read.

    ``check_finite=False`` leaves the check of every cell to a ranking pass that reads them anyway.
    """
    from tvrbench.signature import input_digest

    path = Path(path)
    if is_sharded(path):
        if not sharded:
            raise InputError(
                path,
                "sharded scores (a Zarr store or a folder of row shards) are read by `tvrbench evaluate`; give this command one .npy or a TREC run",
            )
        values = open_shards(path, (len(caption_ids), len(video_ids)))
        digest = values.digest
    elif path.suffix.lower() in RUN_SUFFIXES:
        from tvrbench.io.trec import read_run, run_to_matrix

        values, digest = run_to_matrix(read_run(path), caption_ids, video_ids), input_digest("scores", path)
    else:
        from tvrbench.io.scores import read_scores_digest

        values, digest = read_scores_digest(path, shape=(len(caption_ids), len(video_ids)), check_finite=check_finite)
    return ScoreMatrix(name or default_name(path), values, digest, path)


def read_score_matrices(specs: Iterable[str], option: str, caption_ids: list[str], video_ids: list[str]) -> dict[str, ScoreMatrix]:
    """The ``NAME=PATH`` models of one option, by name."""
    return {name: read_score_matrix(path, caption_ids, video_ids, name) for name, path in named_paths(specs, option).items()}


# --------------------------------------------------------------------------- FIRE labels


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
    from tvrbench.io.fire import read_fire

    return read_fire(path, wanted) if wanted is not None else select_fire_dataset(read_fire(path), captions, None)


# --------------------------------------------------------------------------- graded relevance


def load_relevance(path: Path, shape: tuple[int, int], captions: Captions, video_ids: list[str]) -> tuple[np.ndarray, str]:
    """A graded relevance matrix oriented and ordered like the scores, and its name for the signature.

    A proxy's sidecar ``M.json`` (from ``tvrbench proxies``) names its rows (``videos`` or
    ``captions``) and their ids; the matrix is transposed and reordered to captions × videos.
    """
    from tvrbench.io.scores import read_scores_digest
    from tvrbench.signature import input_digest

    if path.suffix.lower() == ".zarr":  # a Zarr proxy (tvrbench proxies --out M.zarr), read whole
        matrix, digest = read_zarr_matrix(path), input_digest("relevance", path)
    elif path.is_dir():  # a Parquet proxy (tvrbench proxies --out M.parquet): cells not stored are 0
        matrix, digest = read_proxy_cells(path)[0].toarray(), input_digest("relevance", path)
    else:
        matrix, digest = read_scores_digest(path)
    name = f"{path.name}:{digest}"
    sidecar = sidecar_path(path)
    if sidecar.is_file():
        meta = read_json_object(sidecar)
        proxy, rows = meta.get("proxy", "proxy"), meta.get("rows", "captions")
        if not isinstance(proxy, str) or rows not in ("videos", "captions"):
            raise InputError(sidecar, "not a proxy sidecar: 'proxy' must be a name and 'rows' videos or captions")
        name = f"{proxy}:{digest}"
        if meta.get("level") == "caption":
            raise InputError(path, "is a caption × caption proxy; build a video-level one (tvrbench proxies --level video)")
        if "row_ids" in meta or "col_ids" in meta:
            row_ids = string_list(meta, "row_ids", sidecar, matrix.shape[0])
            col_ids = string_list(meta, "col_ids", sidecar, matrix.shape[1])
            caption_ids, videos_of = (col_ids, row_ids) if rows == "videos" else (row_ids, col_ids)
            matrix = reorder(matrix.T if rows == "videos" else matrix, caption_ids, captions.caption_ids, videos_of, video_ids, sidecar)
        elif rows == "videos":
            matrix = matrix.T
    if matrix.shape != shape:
        raise InputError(path, f"has shape {matrix.shape}, expected {shape} (captions × videos)")
    if matrix.min() < 0 or matrix.max() > 1:
        raise InputError(path, "relevance values must lie in [0, 1]")
    return np.ascontiguousarray(matrix), name


def read_proxy_cells(path: str | Path) -> tuple[scipy.sparse.csr_matrix, dict]:
    """A Parquet proxy (the folder of part files and its sidecar ``OUT.json``) as a CSR matrix in the
    sidecar's row and column order; cells not stored are 0."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq
    import scipy.sparse as sp

    path = Path(path)
    parts = sorted(path.glob("part-*.parquet")) if path.is_dir() else []
    if not parts:
        raise InputError(path, "not a Parquet proxy folder (part-*.parquet files, written by tvrbench proxies --out M.parquet)")
    sidecar_file = sidecar_path(path)
    if not sidecar_file.is_file():
        raise InputError(path, f"no sidecar {sidecar_file.name} beside it (written by tvrbench proxies)")
    sidecar = read_json_object(sidecar_file)
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
