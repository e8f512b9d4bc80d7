"""Write a proxy matrix block by block, in this process or as tasks on a Dask cluster, resumably.

Block k is rows ``[k·step, (k+1)·step)`` with ``step = ProxyMatrix.block_rows(block_mb)``; its values
depend on those rows alone. A task computes one block and keeps what the output stores (the values in
the output dtype, or the selected cells); this process stores each finished block once, in whatever
order blocks finish, and records it. A rerun after an interruption (of a worker, of this process, of
the whole cluster) computes only the blocks not recorded and ends with the same bytes.

Outputs, by suffix:

* ``.npy``: dense, written in place into ``OUT.partial`` (``OUT.partial.json`` lists the blocks done);
* ``.zarr``: dense, a Zarr v3 store with one chunk per block (zarr's local store writes a chunk to a
  temporary file and renames it, so a chunk is there whole or not at all), built in ``OUT.partial``;
* ``.parquet``: the cells kept by ``top_k`` and/or ``threshold``, a folder with one Parquet file per
  block (``query_id, item_id, score``; rows are the matrix's rows), each written atomically, built in
  ``OUT.partial``;
* ``.npz``: the same cells as one scipy.sparse CSR matrix, written at the end (not resumable).

Each is renamed into place only when complete, and its sidecar ``OUT.json`` written beside it.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from tvrbench.distributed import on_one_thread
from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write, naming, write_json
from tvrbench.io.relevance import PARQUET_COLUMNS
from tvrbench.io.sidecars import sidecar_path
from tvrbench.progress import track
from tvrbench.proxies.matrix import ProxyMatrix

DENSE_SUFFIXES = (".npy", ".zarr")
SPARSE_SUFFIXES = (".npz", ".parquet")
FOLDER_SUFFIXES = (".zarr", ".parquet")  # these outputs (and their partial forms) are folders


@dataclass(frozen=True)
class Selection:
    """The cells of each row a sparse output keeps: the ``top_k`` largest (ties: lower column first)
    and/or those ``>= threshold``; both given, the top k among those above the threshold."""

    top_k: int | None = None
    threshold: float | None = None

    def cells(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row and column of the kept cells of a block, row by row in column order."""
        keep = np.ones(values.shape, dtype=bool) if self.threshold is None else values >= self.threshold
        if self.top_k is not None and self.top_k < values.shape[1]:
            ranked = np.where(keep, -values, np.inf)  # cells below the threshold rank last
            order = np.argsort(ranked, axis=1, kind="stable")[:, : self.top_k]
            top = np.zeros(values.shape, dtype=bool)
            np.put_along_axis(top, order, True, axis=1)
            keep &= top
        return np.nonzero(keep)

    def __str__(self) -> str:
        parts = ([f"top-{self.top_k} per row"] if self.top_k is not None else []) + (
            [f"values >= {self.threshold:g}"] if self.threshold is not None else []
        )
        return ", ".join(parts)


@dataclass
class BlockJob:
    """One block's work as it travels to a Dask worker: the prepared kernel and own pairs (plain
    arrays: the client prepares once, and no worker needs spaCy or WordNet), the output dtype and,
    for a sparse output, what to keep."""

    matrix: ProxyMatrix
    dtype: str
    selection: Selection | None

    def run(self, rows: slice):
        """The block's values in ``dtype``, or (global row, column, value) of its kept cells, chosen on
        the values as stored (so a stored row's k largest, or all its values >= T, are the ones kept)."""
        values = np.ascontiguousarray(self.matrix.block(rows), dtype=self.dtype)
        if self.selection is None:
            return values
        row, column = self.selection.cells(values)
        return row + rows.start, column, values[row, column]


def computed_blocks(job: BlockJob, todo: dict[int, slice], client=None) -> Iterator[tuple[int, object]]:
    """(block number, result) for each block of ``todo``, in the order they finish.

    On a cluster, at most two tasks per worker thread are out at once (re-counted as workers come and
    go, at least two), and a finished block is fetched while the one before is being stored: however
    large the cluster and slow the client, few finished blocks wait in memory.
    """
    if client is None:
        for number, rows in todo.items():
            yield number, job.run(rows)
        return
    from dask.distributed import as_completed

    remote_job = client.scatter(job, broadcast=True)
    waiting = iter(todo.items())
    numbers = {}
    running = as_completed(with_results=True)

    def submit_up_to_window() -> None:
        window = max(2, 2 * sum(client.nthreads().values()))
        for number, rows in itertools.islice(waiting, max(0, window - running.count())):
            future = client.submit(on_one_thread, BlockJob.run, remote_job, rows, pure=False)
            numbers[future.key] = number
            running.add(future)

    submit_up_to_window()
    for future, result in running:
        future.release()
        submit_up_to_window()
        yield numbers.pop(future.key), result


def check_output(out: Path, top_k: int | None = None, threshold: float | None = None) -> Selection | None:
    """The selection of a sparse output, None for a dense one; the suffix must fit (before any work)."""
    sparse = top_k is not None or threshold is not None
    if threshold is not None and not 0.0 <= threshold <= 1.0:
        raise InputError("--threshold", f"{threshold} is not a similarity in [0, 1]")
    if top_k is not None and top_k < 1:
        raise InputError("--top-k", f"needs at least 1, got {top_k}")
    wanted = SPARSE_SUFFIXES if sparse else DENSE_SUFFIXES
    if Path(out).suffix not in wanted:
        kind = (
            "a sparse matrix (--top-k / --threshold) is written as scipy.sparse .npz or partitioned .parquet"
            if sparse
            else "a dense matrix is written as .npy or a chunked .zarr store"
        )
        raise InputError(out, f"{kind}: name the output FILE{' or FILE'.join(wanted)}")
    return Selection(top_k, threshold) if sparse else None


def write_proxy(
    matrix: ProxyMatrix,
    out: str | Path,
    dtype: str = "float32",
    block_mb: float = 256,
    top_k: int | None = None,
    threshold: float | None = None,
    client=None,
) -> Path:
    """Write ``out`` (format by suffix, see the module) and its sidecar ``OUT.json``; returns ``out``.

    With a Dask ``client`` each block is a task on its cluster. A rerun with the same matrix and
    settings continues an interrupted one (except ``.npz``) and computes only the missing blocks.
    """
    out = Path(out)
    selection = check_output(out, top_k, threshold)
    step = matrix.block_rows(block_mb)
    n_rows = matrix.shape[0]
    blocks = [slice(start, min(start + step, n_rows)) for start in range(0, n_rows, step)]
    state = {
        "signature": str(matrix.signature),
        "shape": list(matrix.shape),
        "dtype": dtype,
        "block_rows": step,
        **({"selection": str(selection)} if selection else {}),
    }
    store = STORES[out.suffix](out, state, matrix, len(blocks))
    todo = {number: rows for number, rows in enumerate(blocks) if number not in store.done}
    if store.done:
        print(f"resuming {out}: {len(blocks) - len(todo)} of {len(blocks)} blocks done", file=sys.stderr)
    # The ids stay here: a task needs only the kernel and the own pairs.
    job = BlockJob(replace(matrix, row_ids=[], col_ids=[], col_videos=None), dtype, selection)
    results = computed_blocks(job, todo, client)
    for number, result in track(results, f"{matrix.proxy} matrix blocks", total=len(todo), enabled=None if client is None else True):
        store.put(number, blocks[number], result)
    # The previous output goes first and the sidecar is written before the output moves into place:
    # a kill in between leaves no output, never an old matrix beside a new sidecar or none.
    _remove(out)
    write_json(sidecar_path(out), matrix.sidecar(dtype, store.storage))
    store.finish()
    return out


def _partial(out: Path) -> Path:
    return out.with_name(out.name + ".partial")


def _read_state(path: Path) -> object:
    """A progress or state file's JSON, or None when it is missing or unreadable (start over)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def _finished_blocks(previous: object, state: dict, n_blocks: int) -> set[int] | None:
    """The blocks a progress record of this very run lists, or None if it is another run's or damaged."""
    if not isinstance(previous, dict) or {key: previous.get(key) for key in state} != state:
        return None
    done = previous.get("blocks_done")
    if not isinstance(done, list) or not all(isinstance(k, int) and 0 <= k < n_blocks for k in done):
        return None
    return set(done)


def _remove(out: Path) -> None:
    """A previous output of that name, file or folder."""
    if out.is_dir() and not out.is_symlink():
        shutil.rmtree(out)
    else:
        out.unlink(missing_ok=True)


def _replace_folder(partial: Path, out: Path) -> None:
    """Move a finished folder into place (a previous output of that name is removed first)."""
    _remove(out)
    os.replace(partial, out)


class NpyBlocks:
    """A dense ``.npy`` filled in place: blocks go straight to their rows of a preallocated
    ``OUT.partial`` (positioned writes, so memory stays one block whatever the matrix size), and
    ``OUT.partial.json`` lists the blocks done."""

    storage = "dense"

    def __init__(self, out: Path, state: dict, matrix: ProxyMatrix, n_blocks: int):
        self.out, self.partial = out, _partial(out)
        self.progress = out.with_name(out.name + ".partial.json")
        self.row_bytes = matrix.shape[1] * np.dtype(state["dtype"]).itemsize
        previous = _read_state(self.progress) if self.partial.is_file() else None
        done = _finished_blocks(previous, state, n_blocks)
        offset = previous.get("offset") if done is not None else None
        if not (isinstance(offset, int) and offset > 0 and self.partial.stat().st_size == offset + matrix.shape[0] * self.row_bytes):
            out.parent.mkdir(parents=True, exist_ok=True)
            with naming(self.partial):
                header = np.lib.format.open_memmap(self.partial, mode="w+", dtype=state["dtype"], shape=matrix.shape)
            done, offset = set(), int(header.offset)
            del header
        self.state, self.offset, self.done = {**state, "offset": offset}, offset, done
        self._record()

    def _record(self) -> None:
        write_json(self.progress, {**self.state, "blocks_done": sorted(self.done)})

    def put(self, number: int, rows: slice, values: np.ndarray) -> None:
        with naming(self.partial), open(self.partial, "r+b") as handle:
            handle.seek(self.offset + rows.start * self.row_bytes)
            handle.write(values.tobytes())
            handle.flush()
            os.fsync(handle.fileno())
        self.done.add(number)
        self._record()

    def finish(self) -> None:
        os.replace(self.partial, self.out)
        self.progress.unlink()


class ZarrBlocks:
    """A dense Zarr v3 store with one chunk per block, built in ``OUT.partial``: a chunk present is a
    block done (chunks of zeros are written too, so none is mistaken for missing)."""

    def __init__(self, out: Path, state: dict, matrix: ProxyMatrix, n_blocks: int):
        import zarr

        self.out, self.partial = out, _partial(out)
        self.storage = f"dense (Zarr v3 store, one chunk per {state['block_rows']} rows)"
        array = None
        if self.partial.is_dir():
            try:
                array = zarr.open_array(self.partial, mode="r+")
            except (OSError, ValueError, KeyError, TypeError):  # not a readable store: start over
                array = None
            if array is not None and array.attrs.get("tvrbench") != state:
                array = None
        if array is None:
            if self.partial.is_dir():
                shutil.rmtree(self.partial)
            array = zarr.create_array(
                self.partial,
                shape=matrix.shape,
                chunks=(state["block_rows"], max(1, matrix.shape[1])),
                dtype=state["dtype"],
                fill_value=0,
                attributes={"tvrbench": state},
                config={"write_empty_chunks": True},
            )
        self.array = array
        self.done = {k for k in range(n_blocks) if (self.partial / array.metadata.encode_chunk_key((k, 0))).is_file()}

    def put(self, number: int, rows: slice, values: np.ndarray) -> None:
        self.array[rows] = values

    def finish(self) -> None:
        for leftover in self.partial.rglob("*.partial"):  # a chunk write cut short by a kill
            leftover.unlink()
        _replace_folder(self.partial, self.out)


class ParquetBlocks:
    """The kept cells as a folder of Parquet files, ``part-NNNNN.parquet`` for block NNNNN, each
    written atomically into ``OUT.partial/`` (whose ``progress.json`` names the run): a file present
    is a block done."""

    def __init__(self, out: Path, state: dict, matrix: ProxyMatrix, n_blocks: int):
        self.out, self.partial = out, _partial(out)
        self.storage = f"{state['selection']} (Parquet, one file per {state['block_rows']} rows: {', '.join(PARQUET_COLUMNS)})"
        self.progress = self.partial / "progress.json"
        self.width = max(5, len(str(n_blocks - 1)))
        self.row_ids = np.asarray(matrix.row_ids, dtype=object)
        self.col_ids = np.asarray(matrix.col_ids, dtype=object)
        if _read_state(self.progress) == state:
            self.done = {k for k in range(n_blocks) if self._part(k).is_file()}
        else:
            if self.partial.is_dir():
                shutil.rmtree(self.partial)
            write_json(self.progress, state)
            self.done = set()

    def _part(self, number: int) -> Path:
        return self.partial / f"part-{number:0{self.width}d}.parquet"

    def put(self, number: int, rows: slice, cells: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        row, column, score = cells
        table = pa.table(
            {"query_id": pa.array(self.row_ids[row], pa.string()), "item_id": pa.array(self.col_ids[column], pa.string()), "score": pa.array(score)}
        )
        with atomic_write(self._part(number), "wb") as handle:
            pq.write_table(table, handle)

    def finish(self) -> None:
        self.progress.unlink()
        for leftover in self.partial.glob(".*.tmp"):  # a part write cut short by a kill
            leftover.unlink()
        _replace_folder(self.partial, self.out)


class NpzCells:
    """The kept cells as one scipy.sparse CSR ``.npz``, assembled in memory and written at the end."""

    def __init__(self, out: Path, state: dict, matrix: ProxyMatrix, n_blocks: int):
        self.out, self.shape, self.done = out, matrix.shape, set()
        self.storage = f"{state['selection']} (scipy.sparse CSR .npz)"
        self.blocks: dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def put(self, number: int, rows: slice, cells: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
        self.blocks[number] = cells

    def finish(self) -> None:
        row, column, data = (np.concatenate([self.blocks[k][part] for k in sorted(self.blocks)]) for part in range(3))
        indptr = np.concatenate([[0], np.cumsum(np.bincount(row, minlength=self.shape[0]))])
        sparse = sp.csr_matrix((data, column, indptr), shape=self.shape)
        with atomic_write(self.out, "wb") as handle:
            sp.save_npz(handle, sparse, compressed=True)


STORES = {".npy": NpyBlocks, ".zarr": ZarrBlocks, ".parquet": ParquetBlocks, ".npz": NpzCells}
