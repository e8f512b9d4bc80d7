"""Ranks of labelled items in scores read as row blocks (shards), a source not held in memory
(:class:`~tvrbench.io.scores.ScoreSource`: a Zarr store, a folder of ``.npy`` row shards, embeddings).

A text-to-video rank depends on its row alone: each shard's rows are ranked by the in-memory kernel
(:func:`~tvrbench.evaluation.ranking.target_ranks`). A video-to-text rank depends on a whole
column, but it is a count over rows: 1 + the cells above the target + the tied cells its tie rule
puts before it (``average``: + half the tied cells). So each shard counts, for every column target,
its cells above and tied (the shard's column summary), and the sums over the shards are the exact
ranks, every tie rule included. Counting needs the targets' own scores, which only their shards
hold, so the shards are read twice: pass 1 ranks the rows and reads the column targets' scores,
pass 2 counts.

Each shard's work in each pass is one pure task, run here or on a Dask cluster (which reruns a task
whose worker died). With a ``checkpoint`` folder this process saves each task's result as it
arrives (``.npz``, written atomically), so a rerun after an interruption computes only the missing
ones; the folder is keyed by everything the results depend on, so a changed input starts afresh.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
from scipy import sparse

from tvrbench.distributed import on_one_thread
from tvrbench.errors import InputError
from tvrbench.evaluation.labels import Judgments
from tvrbench.evaluation.metrics import RankedQueries
from tvrbench.evaluation.ranking import check_tie_rule, target_ranks
from tvrbench.io.atomic import atomic_write
from tvrbench.io.scores import ScoreSource
from tvrbench.progress import track
from tvrbench.signature import bytes_digest

_MAX_GRADED_COLUMN_TARGETS = 1 << 27  # graded video-to-text over more cells needs a sparse proxy


@dataclass(frozen=True)
class Graded:
    """nDCG with a graded relevance matrix: what the engine's in-memory ``_graded_ndcg`` gets."""

    relevance: np.ndarray | sparse.csr_matrix  # captions × videos, in [0, 1]
    judgments: Judgments
    metrics: tuple  # NDCG metric objects
    fusion: str


@dataclass(frozen=True)
class ShardedRanks:
    row_ranks: np.ndarray  # aligned with the row targets' CSR data, as target_ranks returns
    column_ranks: np.ndarray  # aligned with the column targets' CSR data (sorted indices)
    graded: dict[str, np.ndarray]  # graded nDCG per query, by metric name


@numba.njit(cache=True)
def _column_summary(block, first_row, pointer, values, rows, gains, tie_code, screen, slots, before, tied):
    """Count, for each column target, the cells of ``block`` above it and tied with it.

    Column c's targets are ``[pointer[c], pointer[c + 1])``, sorted by score. A cell above exactly
    the targets before position p of its column adds 1 to ``slots[p + c]`` (each column has one slot
    more than targets); a target's cells above are then a suffix sum of its column's slots. A tied
    cell is counted in ``tied`` and, when the tie rule puts it first, in ``before``; a tied cell that
    is itself a target carries that target's gain, any other cell gain 0. A cell below its column's
    ``screen`` counts for no target of interest and is passed over.
    """
    for i in range(block.shape[0]):
        for c in range(block.shape[1]):
            value = block[i, c]
            if value >= screen[c]:  # most cells of a useful model are below
                _place_cell(value, first_row + i, c, pointer, values, rows, gains, tie_code, slots, before, tied)


@numba.njit(cache=True, inline="always")
def _place_cell(value, row, c, pointer, values, rows, gains, tie_code, slots, before, tied):
    """A cell not below its column's lowest target: the targets it is above, those it ties with."""
    low, stop = pointer[c], pointer[c + 1]
    while low < stop and values[low] < value:  # the first target not below the cell: most cells are
        low += 1  # above few targets, so a scan from the lowest beats a binary search
    slots[low + c] += 1
    if low == stop or values[low] != value:
        return
    end = low
    gain = 0.0
    while end < stop and values[end] == value:
        if rows[end] == row:
            gain = gains[end]
        end += 1
    for t in range(low, end):
        if rows[t] == row:
            continue
        tied[t] += 1
        placed_first = row < rows[t]
        if tie_code == 1:  # optimistic: more relevant first
            placed_first = gain > gains[t] or (gain == gains[t] and placed_first)
        elif tie_code == 2:  # pessimistic: less relevant first
            placed_first = gain < gains[t] or (gain == gains[t] and placed_first)
        before[t] += placed_first


def _column_top(block: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Row c: the ``depth[c]`` largest scores of column c, ascending, after -inf padding to the widest."""
    top = np.full((block.shape[1], max(1, depth.max(initial=0))), -np.inf, dtype=np.float64)
    _keep_largest(block, depth, top, np.where(depth > 0, -np.inf, np.inf))
    return top


@numba.njit(cache=True)
def _keep_largest(block, depth, top, floor):
    """Insert each cell above its column's ``floor`` (the least value kept) into the column's row of
    ``top``, kept ascending in its last ``depth[c]`` places; few cells pass the floor once it rises."""
    width = top.shape[1]
    for i in range(block.shape[0]):
        for c in range(block.shape[1]):
            value = block[i, c]
            if value > floor[c]:
                j = width - depth[c]
                while j + 1 < width and top[c, j + 1] < value:
                    top[c, j] = top[c, j + 1]
                    j += 1
                top[c, j] = value
                floor[c] = top[c, width - depth[c]]


@dataclass(frozen=True)
class _ColumnTable:
    """Column targets sorted by (column, score), as pass 2 reads them. ``cut``: each column's m-th best
    score (m = its targets) when only the first m ranks matter, else -inf; ``screen``: the lowest
    score that can still rank a target of interest (its lowest target, or ``cut`` if higher)."""

    pointer: np.ndarray
    values: np.ndarray
    rows: np.ndarray
    gains: np.ndarray
    cut: np.ndarray
    screen: np.ndarray


def _column_table(n_columns: int, rows: np.ndarray, columns: np.ndarray, gains: np.ndarray, values: np.ndarray, cut: np.ndarray | None = None):
    """The table, and for each target in column-major (column, row) order its place in the table."""
    by_column = np.lexsort((rows, columns))
    by_score = np.lexsort((values, columns))
    place = np.empty(by_score.size, np.int64)
    place[by_score] = np.arange(by_score.size)
    pointer = _pointer(columns, n_columns)
    cut = np.full(n_columns, -np.inf) if cut is None else cut
    lowest = np.full(n_columns, np.inf)  # a column without targets: no cell counts
    has_targets = pointer[1:] > pointer[:-1]
    lowest[has_targets] = values[by_score][pointer[:-1][has_targets]]
    table = _ColumnTable(pointer, values[by_score], rows[by_score].astype(np.int64), gains[by_score].astype(np.float64), cut, np.maximum(lowest, cut))
    return table, place[by_column]


def _ranks_from_counts(table: _ColumnTable, counts: list[dict], name: str, tie_code: int) -> np.ndarray:
    """Each target's rank (in table order) from the summed column summaries of every shard."""
    slots = sum(part[f"{name}_slots"] for part in counts)
    before = sum(part[f"{name}_before"] for part in counts)
    tied = sum(part[f"{name}_tied"] for part in counts)
    n_targets = table.values.size
    column = np.repeat(np.arange(table.pointer.size - 1), np.diff(table.pointer))
    running = np.cumsum(slots)  # cells above target p of column c: slots[p + c + 1 .. column end]
    above = running[table.pointer[column + 1] + column] - running[np.arange(n_targets) + column]
    ranks = 1.0 + above + tied / 2.0 if tie_code == 3 else (1 + above + before).astype(np.float64)  # average: the tied group's middle
    depth = np.diff(table.pointer)[column]
    return np.where(table.values < table.cut[column], depth + 1.0, ranks)  # below the m-th best score: rank m + 1 at least


def _first_pass(shards: ScoreSource, shard: int, row_targets, positives, depth, ties: str, graded: dict | None) -> dict:
    """Rank the shard's rows; read the scores of its column targets (and with ``depth``, each column's
    ``depth[c]`` best scores); graded nDCG of its rows. A NaN or infinite score raises the kernel's
    ``NonFiniteScores``; the engine has the source name the cell."""
    start, _ = shards.bounds[shard]
    block = shards.read(shard)
    row_ranks, _ = target_ranks(block, rows=row_targets, ties=ties)
    out = {"row_ranks": row_ranks}
    if positives is not None:
        local = positives.tocoo()
        out["positive_scores"] = block[local.row, local.col].astype(np.float64)
    if depth is not None:
        out["column_top"] = _column_top(block, depth)
    if graded is not None:
        relevance = graded["relevance"]
        relevance = relevance.toarray() if sparse.issparse(relevance) else np.asarray(relevance)
        gains = sparse.csr_matrix(graded["judgments"].fuse(relevance, slice(None), None, graded["fusion"]))
        gains.sort_indices()
        ranks, _ = target_ranks(block, rows=gains, ties=ties)
        for metric in graded["metrics"]:
            if metric.direction == "t2v":
                out[f"t2v_{metric}"] = metric.per_query(RankedQueries.from_targets(gains.shape[0], gains, ranks))
        if any(metric.direction == "v2t" for metric in graded["metrics"]):
            local = gains.tocoo()
            out["graded_rows"], out["graded_columns"] = local.row + start, local.col
            out["graded_gains"], out["graded_scores"] = local.data, block[local.row, local.col].astype(np.float64)
    return out


def _second_pass(shards: ScoreSource, shard: int, tables: dict, tie_code: int) -> dict:
    """The shard's column summary for each table of column targets."""
    start, _ = shards.bounds[shard]
    block = shards.read(shard)
    out = {}
    for name, table in tables.items():
        n_targets, n_columns = table.values.size, table.pointer.size - 1
        slots = np.zeros(n_targets + n_columns, np.int64)
        before, tied = np.zeros(n_targets, np.int64), np.zeros(n_targets, np.int64)
        values, screen = table.values.astype(block.dtype), table.screen.astype(block.dtype)  # scores read from the shards: exact
        _column_summary(block, start, table.pointer, values, table.rows, table.gains, tie_code, screen, slots, before, tied)
        out.update({f"{name}_slots": slots, f"{name}_before": before, f"{name}_tied": tied})
    return out


class _Checkpoint:
    """Task results saved as ``<key>/<pass>-<shard>.npz``; ``None``: nothing saved."""

    def __init__(self, folder: Path | None, key: str):
        self.folder = None if folder is None else Path(folder) / key

    def load(self, name: str) -> dict | None:
        path = None if self.folder is None else self.folder / f"{name}.npz"
        if path is None or not path.is_file():
            return None
        try:
            with np.load(path, allow_pickle=False) as stored:
                return {key: stored[key] for key in stored.files}
        except (OSError, ValueError, EOFError):  # cut short by a kill before the rename: recompute
            return None

    def save(self, name: str, result: dict) -> None:
        if self.folder is None:
            return
        self.folder.mkdir(parents=True, exist_ok=True)
        with atomic_write(self.folder / f"{name}.npz", "wb") as out:
            np.savez(out, **result)


def _run(function, jobs: list[tuple], name: str, client, checkpoint: _Checkpoint) -> list[dict]:
    """Each job's result, from the checkpoint or computed (here or on ``client``)."""
    results = [checkpoint.load(f"{name}-{k}") for k in range(len(jobs))]
    missing = [k for k, result in enumerate(results) if result is None]
    if len(missing) < len(jobs):
        print(f"evaluate: {name}: {len(jobs) - len(missing)} of {len(jobs)} shards from the checkpoint", file=sys.stderr)
    if client is None:
        finished = ((k, function(*jobs[k])) for k in missing)
    else:
        from dask.distributed import as_completed

        futures = {client.submit(on_one_thread, function, *jobs[k], pure=False): k for k in missing}
        finished = ((futures[future], future.result()) for future in as_completed(futures))
    for k, result in track(finished, f"evaluate: {name}", total=len(missing)):
        checkpoint.save(f"{name}-{k}", result)
        results[k] = result
    return results


def _checkpoint_key(shards, row_targets, column_targets, ties, columns_top_only, graded: Graded | None) -> str:
    parts = [shards.digest.encode(), f"{ties}:{columns_top_only}".encode(), repr(shards.bounds).encode()]
    for targets in (row_targets, column_targets):
        if targets is not None:
            parts += [np.ascontiguousarray(a).view(np.uint8) for a in (targets.indptr, targets.indices, targets.data)]
    if graded is not None:
        relevance = graded.relevance
        arrays = (relevance.data, relevance.indices, relevance.indptr) if sparse.issparse(relevance) else (relevance,)
        parts += [np.ascontiguousarray(a).view(np.uint8).reshape(-1) for a in arrays]
        parts += [graded.fusion.encode(), repr(graded.metrics).encode()]
        parts += [
            np.ascontiguousarray(a).view(np.uint8) for m in (graded.judgments.positive, graded.judgments.irrelevant) for a in (m.indptr, m.indices)
        ]
    return bytes_digest(parts, algorithm="xxh3").replace(":", "-")


def _judgment_rows(judgments: Judgments, start: int, stop: int) -> Judgments:
    rows = slice(start, stop)
    return Judgments(judgments.original[rows], judgments.positive[rows], judgments.irrelevant[rows], judgments.judged[rows], judgments.sources)


def sharded_ranks(
    shards: ScoreSource,
    rows: sparse.csr_matrix,
    columns: sparse.csr_matrix | None,
    ties: str,
    columns_top_only: bool = False,
    graded: Graded | None = None,
    client=None,
    checkpoint: str | Path | None = None,
) -> ShardedRanks:
    """The ranks :func:`~tvrbench.evaluation.ranking.target_ranks` gives for the whole matrix, and
    graded nDCG per query, from the shards.

    ``rows``: the row targets (captions × videos CSR); ``columns``: the column targets (videos ×
    captions CSR) or None; ``columns_top_only``: as for ``target_ranks``, a column target below its
    column's m-th best score (m = the column's targets) gets rank m + 1 (any other is exact), and
    pass 2 reads only the cells at or above that score; ``client``: a Dask client, or None to run
    here; ``checkpoint``: a folder where task results are kept until the caller removes it.
    """
    tie_code = check_tie_rule(ties)
    n_rows, n_columns = shards.shape
    columns = None if columns is None else columns.tocsr().sorted_indices()
    state = _Checkpoint(checkpoint, _checkpoint_key(shards, rows, columns, ties, columns_top_only, graded) if checkpoint else "")
    positives = None if columns is None else columns.T.tocsr().sorted_indices()  # the same cells, row by row
    depth = np.diff(columns.indptr) if columns is not None and columns_top_only else None
    # Sent to each worker once, not with every task: embeddings' scores hold their arrays.
    shipped_shards = client.scatter(shards, broadcast=True, hash=False) if client is not None else shards
    jobs = []
    for k, (start, stop) in enumerate(shards.bounds):
        graded_job = None
        if graded is not None:
            graded_job = {
                "relevance": graded.relevance[start:stop],
                "judgments": _judgment_rows(graded.judgments, start, stop),
                "metrics": graded.metrics,
                "fusion": graded.fusion,
            }
        jobs.append((shipped_shards, k, rows[start:stop], None if positives is None else positives[start:stop], depth, ties, graded_job))
    first = _run(_first_pass, jobs, "ranks", client, state)
    row_ranks = np.concatenate([part["row_ranks"] for part in first])
    graded_values = {key[4:]: np.concatenate([part[key] for part in first]) for key in first[0] if key.startswith("t2v_")}

    tables, places = {}, {}
    if columns is not None:
        local = positives.tocoo()
        cut = None if depth is None else _mth_best(np.concatenate([part["column_top"] for part in first], axis=1), depth)
        tables["labels"], places["labels"] = _column_table(
            n_columns, local.row, local.col, np.ones(local.nnz), np.concatenate([part["positive_scores"] for part in first]), cut
        )
    graded_v2t = [] if graded is None else [m for m in graded.metrics if m.direction == "v2t"]
    if graded_v2t:
        cells = {name: np.concatenate([part[f"graded_{name}"] for part in first]) for name in ("rows", "columns", "gains", "scores")}
        if cells["rows"].size > _MAX_GRADED_COLUMN_TARGETS:
            raise InputError(
                None,
                f"graded video-to-text nDCG over {cells['rows'].size:,} relevant cells: "
                "keep a sparse proxy (tvrbench proxies --top-k/--threshold, .parquet)",
            )
        tables["graded"], places["graded"] = _column_table(n_columns, cells["rows"], cells["columns"], cells["gains"], cells["scores"])
    column_ranks = np.zeros(0)
    if tables:
        shipped = client.scatter(tables, broadcast=True) if client is not None else tables
        counts = _run(_second_pass, [(shipped_shards, k, shipped, tie_code) for k in range(len(shards))], "columns", client, state)
        if "labels" in tables:
            column_ranks = _ranks_from_counts(tables["labels"], counts, "labels", tie_code)[places["labels"]]
        if graded_v2t:
            ranks = _ranks_from_counts(tables["graded"], counts, "graded", tie_code)[places["graded"]]
            order = np.lexsort((cells["rows"], cells["columns"]))
            targets = sparse.csr_matrix(
                (cells["gains"][order], cells["rows"][order], _pointer(cells["columns"], n_columns)), shape=(n_columns, n_rows)
            )
            for metric in graded_v2t:
                graded_values[str(metric)] = metric.per_query(RankedQueries.from_targets(n_columns, targets, ranks))
    return ShardedRanks(row_ranks, column_ranks, graded_values)


def _mth_best(tops: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Each column's ``depth[c]``-th best score, from every shard's best ``depth[c]`` (columns without
    targets: -inf)."""
    best_first = -np.sort(-tops, axis=1)
    return np.where(depth > 0, best_first[np.arange(depth.size), np.maximum(depth, 1) - 1], -np.inf)


def _pointer(columns: np.ndarray, n_columns: int) -> np.ndarray:
    pointer = np.zeros(n_columns + 1, np.int64)
    np.cumsum(np.bincount(columns, minlength=n_columns), out=pointer[1:])
    return pointer
