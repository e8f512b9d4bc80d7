"""Ranks of labelled items in a score matrix held as row shards (:mod:`tvrbench.io.shards`).

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

from tvrbench.errors import InputError
from tvrbench.evaluation.labels import Judgments
from tvrbench.evaluation.ranking import NonFiniteScores, _check_tie_rule, target_ranks
from tvrbench.io.atomic import atomic_write
from tvrbench.io.shards import ScoreShards
from tvrbench.progress import track
from tvrbench.signature import bytes_digest, file_digest

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
    computed: int  # tasks computed in this run (the others came from the checkpoint)


@numba.njit(cache=True, parallel=True)
def _column_summary(block, first_row, pointer, values, rows, gains, tie_code, slots, before, tied, n_groups):
    """Count, for each column target, the cells of ``block`` above it and tied with it.

    Column c's targets are ``[pointer[c], pointer[c + 1])``, sorted by score. A cell above exactly
    the targets before position p of its column adds 1 to ``slots[p + c]`` (each column has one slot
    more than targets); a target's cells above are then a suffix sum of its column's slots. A tied
    cell is counted in ``tied`` and, when the tie rule puts it first, in ``before``; a tied cell that
    is itself a target carries that target's gain, any other cell gain 0.
    """
    n_columns = block.shape[1]
    for group in numba.prange(n_groups):  # threads own disjoint columns: none writes another's counts
        first, stop = group * n_columns // n_groups, (group + 1) * n_columns // n_groups
        _summarize_columns(block, first_row, first, stop, pointer, values, rows, gains, tie_code, slots, before, tied)


@numba.njit(cache=True, inline="always")
def _summarize_columns(block, first_row, first_column, stop_column, pointer, values, rows, gains, tie_code, slots, before, tied):
    for i in range(block.shape[0]):
        row = first_row + i
        for c in range(first_column, stop_column):
            start, stop = pointer[c], pointer[c + 1]
            if start == stop:
                continue
            value = block[i, c]
            if value < values[start]:  # below all the column's targets: most cells of a useful model
                slots[start + c] += 1
                continue
            low, high = start, stop
            while low < high:  # the first target not below the cell
                middle = (low + high) // 2
                if values[middle] < value:
                    low = middle + 1
                else:
                    high = middle
            slots[low + c] += 1
            if low == stop or values[low] != value:
                continue
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


@dataclass(frozen=True)
class _ColumnTable:
    """Column targets sorted by (column, score), as pass 2 reads them."""

    pointer: np.ndarray
    values: np.ndarray
    rows: np.ndarray
    gains: np.ndarray


def _column_table(n_columns: int, rows: np.ndarray, columns: np.ndarray, gains: np.ndarray, values: np.ndarray):
    """The table, and for each target in column-major (column, row) order its place in the table."""
    by_column = np.lexsort((rows, columns))
    by_score = np.lexsort((values, columns))
    place = np.empty(by_score.size, np.int64)
    place[by_score] = np.arange(by_score.size)
    table = _ColumnTable(_pointer(columns, n_columns), values[by_score], rows[by_score].astype(np.int64), gains[by_score].astype(np.float64))
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
    if tie_code == 3:  # average: the middle of the tied group's positions
        return 1.0 + above + tied / 2.0
    return (1 + above + before).astype(np.float64)


def _first_pass(shards: ScoreShards, shard: int, row_targets, positives, ties: str, graded: dict | None) -> dict:
    """Rank the shard's rows; read the scores of its column targets; graded nDCG of its rows."""
    from tvrbench.evaluation.engine import _fuse, _ranked

    start, _ = shards.bounds[shard]
    block = shards.read(shard)
    try:
        row_ranks, _ = target_ranks(block, rows=row_targets, ties=ties)
    except NonFiniteScores:
        bad_row, bad_column = np.argwhere(~np.isfinite(block))[0]
        raise InputError(shards.source, f"row {start + bad_row}, column {bad_column} is {block[bad_row, bad_column]}; "
                                        "every score must be finite (no NaN or infinity)") from None
    out = {"row_ranks": row_ranks}
    if positives is not None:
        local = positives.tocoo()
        out["positive_scores"] = block[local.row, local.col].astype(np.float64)
    if graded is not None:
        relevance = graded["relevance"]
        relevance = relevance.toarray() if sparse.issparse(relevance) else np.asarray(relevance)
        gains = sparse.csr_matrix(_fuse(relevance, graded["judgments"], slice(None), None, graded["fusion"]))
        gains.sort_indices()
        ranks, _ = target_ranks(block, rows=gains, ties=ties)
        for metric in graded["metrics"]:
            if metric.direction == "t2v":
                out[f"t2v_{metric.name}"] = metric.per_query(_ranked(gains.shape[0], gains, ranks))
        if any(metric.direction == "v2t" for metric in graded["metrics"]):
            local = gains.tocoo()
            out["graded_rows"], out["graded_columns"] = local.row + start, local.col
            out["graded_gains"], out["graded_scores"] = local.data, block[local.row, local.col].astype(np.float64)
    return out


def _second_pass(shards: ScoreShards, shard: int, tables: dict, tie_code: int) -> dict:
    """The shard's column summary for each table of column targets."""
    start, _ = shards.bounds[shard]
    block = shards.read(shard)
    out = {}
    for name, table in tables.items():
        n_targets, n_columns = table.values.size, table.pointer.size - 1
        slots = np.zeros(n_targets + n_columns, np.int64)
        before, tied = np.zeros(n_targets, np.int64), np.zeros(n_targets, np.int64)
        values = table.values.astype(block.dtype)  # compare in the scores' own precision
        n_groups = min(n_columns, 4 * numba.get_num_threads())
        _column_summary(block, start, table.pointer, values, table.rows, table.gains, tie_code, slots, before, tied, n_groups)
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


def _run(function, jobs: list[tuple], name: str, client, checkpoint: _Checkpoint) -> tuple[list[dict], int]:
    """Each job's result, from the checkpoint or computed (here or on ``client``); and how many were computed."""
    results = [checkpoint.load(f"{name}-{k}") for k in range(len(jobs))]
    missing = [k for k, result in enumerate(results) if result is None]
    if len(missing) < len(jobs):
        print(f"evaluate: {name}: {len(jobs) - len(missing)} of {len(jobs)} shards from the checkpoint", file=sys.stderr)
    if client is None:
        finished = ((k, function(*jobs[k])) for k in missing)
    else:
        from dask.distributed import as_completed

        from tvrbench.distributed import on_one_thread

        futures = {client.submit(on_one_thread, function, *jobs[k], pure=False): k for k in missing}
        finished = ((futures[future], future.result()) for future in as_completed(futures))
    for k, result in track(finished, f"evaluate: {name}", total=len(missing)):
        checkpoint.save(f"{name}-{k}", result)
        results[k] = result
    return results, len(missing)


def _checkpoint_key(shards, row_targets, column_targets, ties, graded: Graded | None) -> str:
    parts = [file_digest(shards.source, algorithm="xxh3").encode(), ties.encode(), repr(shards.bounds).encode()]
    for targets in (row_targets, column_targets):
        if targets is not None:
            parts += [np.ascontiguousarray(a).view(np.uint8) for a in (targets.indptr, targets.indices, targets.data)]
    if graded is not None:
        relevance = graded.relevance
        arrays = (relevance.data, relevance.indices, relevance.indptr) if sparse.issparse(relevance) else (relevance,)
        parts += [np.ascontiguousarray(a).view(np.uint8).reshape(-1) for a in arrays]
        parts += [graded.fusion.encode(), repr(graded.metrics).encode()]
        parts += [np.ascontiguousarray(a).view(np.uint8) for m in (graded.judgments.positive, graded.judgments.irrelevant)
                  for a in (m.indptr, m.indices)]
    return bytes_digest(parts, algorithm="xxh3").replace(":", "-")


def _judgment_rows(judgments: Judgments, start: int, stop: int) -> Judgments:
    rows = slice(start, stop)
    return Judgments(judgments.original[rows], judgments.positive[rows], judgments.irrelevant[rows], judgments.judged[rows],
                     judgments.sources)


def sharded_ranks(shards: ScoreShards, rows: sparse.csr_matrix, columns: sparse.csr_matrix | None, ties: str,
                  graded: Graded | None = None, client=None, checkpoint: str | Path | None = None) -> ShardedRanks:
    """The ranks :func:`~tvrbench.evaluation.ranking.target_ranks` gives for the whole matrix (exact
    column ranks, never cut at a cutoff), and graded nDCG per query, from the shards.

    ``rows``: the row targets (captions × videos CSR); ``columns``: the column targets (videos ×
    captions CSR) or None; ``client``: a Dask client, or None to run here; ``checkpoint``: a folder
    where task results are kept until the caller removes it.
    """
    tie_code = _check_tie_rule(ties)
    n_rows, n_columns = shards.shape
    columns = None if columns is None else columns.tocsr().sorted_indices()
    state = _Checkpoint(checkpoint, _checkpoint_key(shards, rows, columns, ties, graded) if checkpoint else "")
    positives = None if columns is None else columns.T.tocsr().sorted_indices()  # the same cells, row by row
    jobs = []
    for k, (start, stop) in enumerate(shards.bounds):
        graded_job = None
        if graded is not None:
            graded_job = {"relevance": graded.relevance[start:stop], "judgments": _judgment_rows(graded.judgments, start, stop),
                          "metrics": graded.metrics, "fusion": graded.fusion}
        jobs.append((shards, k, rows[start:stop], None if positives is None else positives[start:stop], ties, graded_job))
    first, computed = _run(_first_pass, jobs, "ranks", client, state)
    row_ranks = np.concatenate([part["row_ranks"] for part in first])
    graded_values = {key[4:]: np.concatenate([part[key] for part in first]) for key in first[0] if key.startswith("t2v_")}

    tables, places = {}, {}
    if columns is not None:
        local = positives.tocoo()
        tables["labels"], places["labels"] = _column_table(n_columns, local.row, local.col, np.ones(local.nnz),
                                                           np.concatenate([part["positive_scores"] for part in first]))
    graded_v2t = [] if graded is None else [m for m in graded.metrics if m.direction == "v2t"]
    if graded_v2t:
        cells = {name: np.concatenate([part[f"graded_{name}"] for part in first]) for name in ("rows", "columns", "gains", "scores")}
        if cells["rows"].size > _MAX_GRADED_COLUMN_TARGETS:
            raise InputError(None, f"graded video-to-text nDCG over {cells['rows'].size:,} relevant cells: "
                                   "keep a sparse proxy (tvrbench proxies --top-k/--threshold, .parquet)")
        tables["graded"], places["graded"] = _column_table(n_columns, cells["rows"], cells["columns"], cells["gains"], cells["scores"])
    column_ranks = np.zeros(0)
    if tables:
        shipped = client.scatter(tables, broadcast=True) if client is not None else tables
        counts, more = _run(_second_pass, [(shards, k, shipped, tie_code) for k in range(len(shards))], "columns", client, state)
        computed += more
        if "labels" in tables:
            column_ranks = _ranks_from_counts(tables["labels"], counts, "labels", tie_code)[places["labels"]]
        if graded_v2t:
            from tvrbench.evaluation.engine import _ranked

            ranks = _ranks_from_counts(tables["graded"], counts, "graded", tie_code)[places["graded"]]
            order = np.lexsort((cells["rows"], cells["columns"]))
            targets = sparse.csr_matrix((cells["gains"][order], cells["rows"][order], _pointer(cells["columns"], n_columns)),
                                        shape=(n_columns, n_rows))
            for metric in graded_v2t:
                graded_values[metric.name] = metric.per_query(_ranked(n_columns, targets, ranks))
    return ShardedRanks(row_ranks, column_ranks, graded_values, computed)


def _pointer(columns: np.ndarray, n_columns: int) -> np.ndarray:
    pointer = np.zeros(n_columns + 1, np.int64)
    np.cumsum(np.bincount(columns, minlength=n_columns), out=pointer[1:])
    return pointer

