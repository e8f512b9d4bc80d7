"""Ranks of labelled items in a score matrix, without sorting the matrix.

Every label-based metric depends only on the ranks of the items that carry a label (positives,
judged items, items with graded relevance). This module computes those ranks in one pass over the
scores, on all cores, text-to-video (rows) and video-to-text (columns) together:

* a row with few labels counts, per label, the cells above it with vector instructions;
* other lines compare every cell, 64 at a time, with their lowest label and place only the few
  cells above it among the labels (most cells of a useful model score below every label);
* for nDCG with a cutoff, a column may instead keep just its best m cells in a heap.

Each strategy is tested equal to sort-based ranks (``tests/test_evaluation_metrics.py``).

Ties (SPEC §2) — the rank of labelled item ``t`` with relevance ``g_t`` among items of equal score:

* ``stable``: column index ascending (the order of ``numpy.argsort(-s, kind="stable")``);
* ``optimistic``: more relevant items first, then column index;
* ``pessimistic``: less relevant items first, then column index;
* ``average``: the mean of the positions the tied group occupies (``scipy.stats.rankdata(-s,
  method="average")``), the "averaging" of Collaborative Experts / TeachText.

Items without a label count as relevance 0.
"""

from __future__ import annotations

import os

import numba
import numpy as np
from scipy import sparse

if "NUMBA_THREADING_LAYER" not in os.environ:
    # OpenMP's idle workers spin; on a machine busier than its cores that made every parallel
    # region ~100x slower (0.4 s on a 112 x 36 matrix). numba's own pool sleeps instead.
    numba.config.THREADING_LAYER = "workqueue"

_BLOCK = 64  # cells screened together before any per-cell work
_LINEAR = 32  # up to this many targets in a line, locate a cell by counting, not bisecting
_COUNTED_ROW_TARGETS = 4  # rows with at most this many targets are counted, not screened
TIE_RULES = ("stable", "optimistic", "pessimistic", "average")
_TIE_CODE = {name: code for code, name in enumerate(TIE_RULES)}


# Per line (the targets of one query, ``[start, stop)`` of its CSR arrays): ``sorted_scores`` and
# ``order`` hold the targets sorted by score; ``above[start + line + k]`` counts the items that
# exceed exactly the k lowest targets; ``tied_before`` / ``tied_total`` count the items of equal
# score with a smaller column index / in all.


@numba.njit(cache=True, inline="always")
def _prepare(line, start, stop, positions, target_scores, sorted_scores, order):
    """Gather and sort the targets' scores; return the lowest (``inf`` when there is none)."""
    if stop == start:
        return np.inf
    for t in range(start, stop):
        target_scores[t] = line[positions[t]]
    local = np.argsort(target_scores[start:stop], kind="mergesort")
    for j in range(stop - start):
        order[start + j] = local[j]
        sorted_scores[start + j] = target_scores[start + local[j]]
    return sorted_scores[start]


@numba.njit(cache=True, inline="always")
def _visit(value, item, start, stop, above_start, sorted_scores, order, positions, above, tied_before, tied_total):
    """Account for one item not below the line's lowest target."""
    if stop - start <= _LINEAR:  # branch-free count, vectorized: no mispredicted jumps
        low = start
        for j in range(start, stop):
            low += sorted_scores[j] < value
    else:  # binary search for the first sorted target >= value
        low, high = start, stop
        while low < high:
            middle = (low + high) >> 1
            if sorted_scores[middle] < value:
                low = middle + 1
            else:
                high = middle
    above[above_start + low - start] += 1
    j = low
    while j < stop and sorted_scores[j] == value:  # the item ties with these targets
        target = start + order[j]
        position = positions[target]
        if position != item:
            tied_total[target] += 1
            if item < position:
                tied_before[target] += 1
        j += 1


@numba.njit(cache=True, inline="always")
def _finish(start, stop, above_start, target_scores, gains, positions, order, above, tied_before, tied_total, tie_code, out):
    """Turn the counts of one line into 1-based ranks under the tie rule."""
    running = 0
    for p in range(stop - start - 1, -1, -1):  # items above sorted target p: above[k] for k > p
        running += above[above_start + p + 1]
        out[start + order[start + p]] = running
    for t in range(start, stop):
        rank = 1.0 + out[t]
        if tied_total[t] == 0 or tie_code == 0:  # stable: tied items of smaller column first
            out[t] = rank + tied_before[t]
            continue
        if tie_code == 3:  # average: the middle of the positions the tie group occupies
            out[t] = rank + tied_total[t] / 2.0
            continue
        # optimistic / pessimistic: order the tie group by gain; unlabelled items have gain 0.
        gain = gains[t]
        before = 0
        targets_tied = 0
        targets_tied_before = 0
        for u in range(start, stop):
            if u == t or target_scores[u] != target_scores[t]:
                continue
            targets_tied += 1
            earlier = positions[u] < positions[t]
            targets_tied_before += earlier
            if gains[u] == gain:
                before += earlier
            elif (gains[u] > gain) == (tie_code == 1):
                before += 1
        if gain == 0.0:
            before += tied_before[t] - targets_tied_before
        elif tie_code == 2:
            before += tied_total[t] - targets_tied
        out[t] = rank + before


@numba.njit(cache=True, inline="always")
def _worse(value, row, other_value, other_row):
    """Stable order: a lower score is worse; of equal scores, the larger row index."""
    return value < other_value or (value == other_value and row > other_row)


@numba.njit(cache=True)
def _offer(value, row, start, stop, column, values, rows, sizes, screen):
    """Keep a column's best ``stop - start`` cells in a heap whose root is the worst kept cell.

    Rows arrive in increasing order, so a cell equal to the root is worse than it and stays out.
    Once the heap is full, ``screen[column]`` holds the root's score: lower cells need no look.
    """
    capacity = stop - start
    size = sizes[column]
    if size == capacity:
        if not (value > values[start]):
            return
        i = 0  # replace the root, sift down
        values[start], rows[start] = value, row
        while True:
            left, right, worst = 2 * i + 1, 2 * i + 2, i
            if left < capacity and _worse(values[start + left], rows[start + left], values[start + worst], rows[start + worst]):
                worst = left
            if right < capacity and _worse(values[start + right], rows[start + right], values[start + worst], rows[start + worst]):
                worst = right
            if worst == i:
                break
            values[start + i], values[start + worst] = values[start + worst], values[start + i]
            rows[start + i], rows[start + worst] = rows[start + worst], rows[start + i]
            i = worst
    else:
        i = size  # append, sift up
        values[start + i], rows[start + i] = value, row
        while i > 0:
            parent = (i - 1) >> 1
            if not _worse(values[start + i], rows[start + i], values[start + parent], rows[start + parent]):
                break
            values[start + i], values[start + parent] = values[start + parent], values[start + i]
            rows[start + i], rows[start + parent] = rows[start + parent], rows[start + i]
            i = parent
        sizes[column] = size + 1
        if size + 1 < capacity:
            return
    screen[column] = values[start]


@numba.njit(cache=True)
def _rank_among_kept(start, stop, positions, n_chunks, kept_values, kept_rows, kept_sizes, column, out):
    """Merge the threads' kept cells of one column; a target's rank is its place among the best
    ``stop - start`` cells, or ``stop - start + 1`` when it is not among them."""
    depth = stop - start
    count = 0
    for chunk in range(n_chunks):
        count += kept_sizes[chunk, column]
    values = np.empty(count, kept_values.dtype)
    rows = np.empty(count, np.int64)
    filled = 0
    for chunk in range(n_chunks):
        for j in range(kept_sizes[chunk, column]):
            values[filled], rows[filled] = kept_values[chunk, start + j], kept_rows[chunk, start + j]
            filled += 1
    by_row = np.argsort(rows, kind="mergesort")
    order = by_row[np.argsort(-values[by_row], kind="mergesort")]  # score descending, then row
    for t in range(start, stop):
        out[t] = depth + 1.0
        for place in range(min(depth, count)):
            if rows[order[place]] == positions[t]:
                out[t] = place + 1.0
                break


@numba.njit(cache=True, inline="always")
def _scan_cells(line, row, first, last, lowest, column_lowest, row_ptr, row_pos, row_sorted, row_order, row_above,
                row_tied_before, row_tied_total, col_ptr, col_pos, column_sorted, column_order, column_above,
                column_tied_before, column_tied_total, top_only, kept_values, kept_rows, kept_sizes):
    """Per-cell work for cells ``[first, last)`` of one row; returns how many were not finite.

    ``column_lowest`` is the per-column screen: the lowest target, or with ``top_only`` the worst
    cell kept so far (see :func:`_offer`)."""
    bad = 0
    start, stop = row_ptr[row], row_ptr[row + 1]
    for item in range(first, last):
        value = line[item]
        if not (np.abs(value) < np.inf):
            bad += 1
            continue
        if value >= lowest:
            _visit(value, item, start, stop, start + row, row_sorted, row_order, row_pos, row_above,
                   row_tied_before, row_tied_total)
        if value >= column_lowest[item]:
            c_start, c_stop = col_ptr[item], col_ptr[item + 1]
            if top_only:
                _offer(value, row, c_start, c_stop, item, kept_values, kept_rows, kept_sizes, column_lowest)
            else:
                _visit(value, row, c_start, c_stop, c_start + item, column_sorted, column_order, col_pos,
                       column_above, column_tied_before, column_tied_total)
    return bad


@numba.njit(cache=True, inline="always")
def _count_above(line, value):
    """(cells > value, cells >= value) over a whole line, vectorized."""
    greater = np.int32(0)
    at_least = np.int32(0)
    for item in range(line.shape[0]):
        greater += np.int32(line[item] > value)
        at_least += np.int32(line[item] >= value)
    return greater, at_least


@numba.njit(cache=True, inline="always")
def _count_non_finite(line):
    """NaN and infinite cells of a line, vectorized."""
    bad = np.int32(0)
    for item in range(line.shape[0]):
        bad += np.int32(line[item] != line[item]) + np.int32(np.abs(line[item]) == np.inf)
    return bad


@numba.njit(cache=True)
def _rank_line_exactly(line, start, stop, above_start, positions, target_scores, sorted_scores, order, gains, above,
                       tied_before, tied_total, tie_code, out):
    """Rank one line's targets with every tie rule: visit each cell not below the lowest target."""
    above[above_start : above_start + stop - start + 1] = 0
    tied_before[start:stop] = 0
    tied_total[start:stop] = 0
    lowest = sorted_scores[start]
    for item in range(line.shape[0]):
        value = line[item]
        if value >= lowest:
            _visit(value, item, start, stop, above_start, sorted_scores, order, positions, above, tied_before, tied_total)
    _finish(start, stop, above_start, target_scores, gains, positions, order, above, tied_before, tied_total, tie_code, out)


@numba.njit(cache=True, parallel=True)
def _rank_pass(scores, row_ptr, row_pos, row_gain, col_ptr, col_pos, col_gain, tie_code, n_chunks, top_only):
    """Ranks of the row targets (queries = rows) and the column targets (queries = columns) in one
    pass over the matrix; threads own row ranges, column counts are kept per thread and summed.

    A row with few targets is *counted*: for each target, the cells above it and at-or-above it
    are counted with vector instructions; when no other cell ties with a target, its rank is 1 +
    the cells above (the same under every tie rule), else the row is ranked again exactly. Other
    lines are *screened*: each cell is compared with the line's lowest target and only the cells
    above are placed among the targets. With ``top_only`` (stable ties), a column only keeps its
    best m cells (m = its number of targets), so far fewer cells need a look; targets beyond rank m
    get rank m + 1. Returns (row ranks, column ranks, non-finite cells).
    """
    n_rows, n_columns = scores.shape
    n_row_targets, n_column_targets = row_pos.shape[0], col_pos.shape[0]
    row_ranks = np.empty(n_row_targets, np.float64)
    column_ranks = np.empty(n_column_targets, np.float64)
    row_scores = np.empty(n_row_targets, scores.dtype)
    row_sorted = np.empty(n_row_targets, scores.dtype)
    row_order = np.empty(n_row_targets, np.int64)
    row_above = np.zeros(n_row_targets + n_rows, np.int64)
    row_tied_before = np.zeros(n_row_targets, np.int64)
    row_tied_total = np.zeros(n_row_targets, np.int64)
    row_lowest = np.empty(n_rows, scores.dtype)  # screened rows only; +inf for counted rows
    row_greater = np.zeros(n_row_targets, np.int64)
    row_at_least = np.zeros(n_row_targets, np.int64)
    column_scores = np.empty(n_column_targets, scores.dtype)
    column_sorted = np.empty(n_column_targets, scores.dtype)
    column_order = np.empty(n_column_targets, np.int64)
    column_lowest = np.empty(n_columns, scores.dtype)
    column_above = np.zeros((n_chunks, n_column_targets + n_columns), np.int64)
    column_tied_before = np.zeros((n_chunks, n_column_targets), np.int64)
    column_tied_total = np.zeros((n_chunks, n_column_targets), np.int64)
    non_finite = np.zeros(n_chunks, np.int64)
    kept_values = np.empty((n_chunks, n_column_targets if top_only else 0), scores.dtype)
    kept_rows = np.empty((n_chunks, n_column_targets if top_only else 0), np.int64)
    kept_sizes = np.zeros((n_chunks, n_columns), np.int64)
    screens = np.empty((n_chunks, n_columns), scores.dtype)  # per-thread column screens

    for row in numba.prange(n_rows):
        start, stop = row_ptr[row], row_ptr[row + 1]
        lowest = _prepare(scores[row], start, stop, row_pos, row_scores, row_sorted, row_order)
        row_lowest[row] = np.inf if stop - start <= _COUNTED_ROW_TARGETS else lowest
    for column in numba.prange(n_columns):
        column_lowest[column] = _prepare(
            scores[:, column], col_ptr[column], col_ptr[column + 1], col_pos, column_scores, column_sorted, column_order
        )

    for chunk in range(n_chunks):
        for column in range(n_columns):
            empty = col_ptr[column + 1] == col_ptr[column]
            screens[chunk, column] = (np.inf if empty else -np.inf) if top_only else column_lowest[column]
    infinity = np.empty(1, scores.dtype)
    infinity[0] = np.inf
    whole_blocks = n_columns - n_columns % _BLOCK
    for chunk in numba.prange(n_chunks):
        above, tied_before, tied_total = column_above[chunk], column_tied_before[chunk], column_tied_total[chunk]
        screen, values, rows, sizes = screens[chunk], kept_values[chunk], kept_rows[chunk], kept_sizes[chunk]
        bad = 0
        for row in range(chunk * n_rows // n_chunks, (chunk + 1) * n_rows // n_chunks):
            line = scores[row]
            start, stop = row_ptr[row], row_ptr[row + 1]
            lowest = row_lowest[row]
            if stop - start <= _COUNTED_ROW_TARGETS:
                for t in range(start, stop):
                    row_greater[t], row_at_least[t] = _count_above(line, row_scores[t])
                if n_column_targets == 0:  # nothing to screen for: only check the cells are finite
                    bad += _count_non_finite(line)
                    continue
            for block in range(0, whole_blocks, _BLOCK):
                # Vectorized screen (fixed trip count): most cells are finite and below both the
                # row's lowest screened target and the column's lowest target, and need no more work.
                cells, column_cells = line[block : block + _BLOCK], screen[block : block + _BLOCK]
                interesting = np.int32(0)
                for i in range(_BLOCK):
                    value = cells[i]
                    interesting += (
                        np.int32(value >= lowest) + np.int32(value >= column_cells[i])
                        + np.int32(value != value) + np.int32(np.abs(value) == infinity[0])
                    )
                if interesting:
                    bad += _scan_cells(line, row, block, block + _BLOCK, lowest, screen, row_ptr, row_pos,
                                       row_sorted, row_order, row_above, row_tied_before, row_tied_total, col_ptr,
                                       col_pos, column_sorted, column_order, above, tied_before, tied_total,
                                       top_only, values, rows, sizes)
            interesting = np.int32(0)
            for item in range(whole_blocks, n_columns):
                value = line[item]
                interesting += (
                    np.int32(value >= lowest) + np.int32(value >= screen[item])
                    + np.int32(value != value) + np.int32(np.abs(value) == infinity[0])
                )
            if interesting:
                bad += _scan_cells(line, row, whole_blocks, n_columns, lowest, screen, row_ptr, row_pos,
                                   row_sorted, row_order, row_above, row_tied_before, row_tied_total, col_ptr,
                                   col_pos, column_sorted, column_order, above, tied_before, tied_total,
                                       top_only, values, rows, sizes)
        non_finite[chunk] = bad

    for chunk in range(1, n_chunks):
        column_above[0] += column_above[chunk]
        column_tied_before[0] += column_tied_before[chunk]
        column_tied_total[0] += column_tied_total[chunk]
    for row in numba.prange(n_rows):
        start, stop = row_ptr[row], row_ptr[row + 1]
        if stop - start > _COUNTED_ROW_TARGETS:
            _finish(start, stop, start + row, row_scores, row_gain, row_pos, row_order, row_above, row_tied_before,
                    row_tied_total, tie_code, row_ranks)
            continue
        tied = False
        for t in range(start, stop):
            row_ranks[t] = 1.0 + row_greater[t]
            tied |= row_at_least[t] - row_greater[t] > 1  # another cell has the target's score
        if tied:
            _rank_line_exactly(scores[row], start, stop, start + row, row_pos, row_scores, row_sorted, row_order,
                               row_gain, row_above, row_tied_before, row_tied_total, tie_code, row_ranks)
    for column in numba.prange(n_columns):
        start, stop = col_ptr[column], col_ptr[column + 1]
        if top_only:
            _rank_among_kept(start, stop, col_pos, n_chunks, kept_values, kept_rows, kept_sizes, column, column_ranks)
        else:
            _finish(start, stop, start + column, column_scores, col_gain, col_pos, column_order, column_above[0],
                    column_tied_before[0], column_tied_total[0], tie_code, column_ranks)
    return row_ranks, column_ranks, non_finite.sum()


def _check_tie_rule(ties: str) -> int:
    if ties not in _TIE_CODE:
        raise ValueError(f"unknown tie rule {ties!r}; choose one of {', '.join(TIE_RULES)}")
    return _TIE_CODE[ties]


def _csr_parts(targets: sparse.csr_matrix | None, lines: int, length: int):
    if targets is None:
        return np.zeros(lines + 1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
    if targets.shape != (lines, length):
        raise ValueError(f"targets have shape {targets.shape}, expected {(lines, length)}")
    if not targets.has_sorted_indices:
        targets = targets.sorted_indices()
    gains = np.asarray(targets.data, dtype=np.float64)
    if gains.size and gains.min() < 0:
        raise ValueError("relevance of a target must not be negative")
    return targets.indptr.astype(np.int64), targets.indices.astype(np.int64), gains


def target_ranks(
    scores: np.ndarray,
    rows: sparse.csr_matrix | None = None,
    columns: sparse.csr_matrix | None = None,
    ties: str = "stable",
    columns_top_only: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """1-based ranks of labelled items, for queries along rows and/or along columns, in one pass.

    ``rows`` (CSR, shape of ``scores``): targets of each row query (text-to-video). ``columns``
    (CSR, transposed shape): targets of each column query (video-to-text). Stored values are the
    targets' relevance, used only by the ``optimistic`` and ``pessimistic`` rules. Returns the ranks
    aligned with each matrix's sorted ``data`` (empty when that side is ``None``). Raises
    ``ValueError`` if ``scores`` holds NaN or infinite values.

    ``columns_top_only`` (stable ties only): a column target's rank is exact when it is within the
    column's first m ranks (m = the column's number of targets) and m + 1 otherwise, which is all
    that nDCG with its cutoff at m needs, for a fraction of the work.
    """
    tie_code = _check_tie_rule(ties)
    if columns_top_only and ties != "stable":
        raise ValueError("columns_top_only needs the stable tie rule")
    scores = np.asarray(scores)
    if scores.ndim != 2:
        raise ValueError(f"scores must be a 2-D matrix, got {scores.ndim} dimensions")
    if scores.dtype not in (np.float32, np.float64):
        scores = scores.astype(np.float64)
    n_rows, n_columns = scores.shape
    row_parts = _csr_parts(rows, n_rows, n_columns)
    column_parts = _csr_parts(columns, n_columns, n_rows)
    n_chunks = max(1, min(n_rows, numba.get_num_threads()))
    row_ranks, column_ranks, non_finite = _rank_pass(scores, *row_parts, *column_parts, tie_code, n_chunks, columns_top_only)
    if non_finite:
        raise ValueError(f"scores hold {non_finite} NaN or infinite values")
    return row_ranks, column_ranks


def rank_top_k(scores: np.ndarray, k: int, ties: str = "stable") -> np.ndarray:
    """Column indices of each row's top ``k`` items, best first, ties by column index ascending.

    Only the ``stable`` rule defines a single list without labels; other rules need relevance.
    """
    if ties != "stable":
        raise ValueError("a top-k list without labels is defined for the stable tie rule only")
    k = min(k, scores.shape[1])
    top = np.empty((scores.shape[0], k), np.int64)
    block = max(1, (1 << 24) // max(1, scores.shape[1]))
    for start in range(0, scores.shape[0], block):
        part = np.asarray(scores[start : start + block])
        # Negating keeps the stable order of equal scores: ascending column index.
        top[start : start + block] = np.argsort(-part, axis=1, kind="stable")[:, :k]
    return top
