"""Ranks of labelled items in a score matrix, without sorting the matrix.

Every label-based metric depends only on the ranks of the items that carry a label (positives,
judged items, items with graded relevance). This module computes those ranks in one pass over the
scores, on all cores, text-to-video (rows) and video-to-text (columns) together:

* a row with up to 32 labels counts the cells above each label, one vectorized sweep per label; the
  first also checks that every cell is finite and, for the columns, keeps each column's best two
  cells of the current part of 64 rows and the row of the best, not counting the column targets;
* a row with more labels compares every cell, 64 at a time, with its lowest label and places
  only the few cells above it among the labels (most cells of a useful model score below all);
* then the columns: each column has a bound, the lowest score that can matter to its targets. Only
  the cells kept for a part that reach the bound are visited; when a part's second best reaches
  it too, the part's cells of that column are read again (rare: two high cells in one part).

Without a cutoff the bound is the column's lowest target. With one (nDCG's first m ranks, m = the
column's targets) it can be higher: a lower bound of the m-th best score, from the column's maxima
over groups of parts; a target below it is ranked beyond m, so it gets m + 1. Keeping two cells and
a row per part is what makes the columns cheap: the first design screened each tile of rows
through running bounds and read a fifth of its cells again, for 2.2 to 2.5 times the time of the
rows alone (now 1.6 to 1.9). Each strategy is tested equal to sort-based ranks
(``tests/test_evaluation_metrics.py``).

Ties (SPEC §2) — the rank of labelled item ``t`` with relevance ``g_t`` among items of equal score:

* ``stable``: column index ascending (the order of ``numpy.argsort(-s, kind="stable")``);
* ``optimistic``: more relevant items first, then column index;
* ``pessimistic``: less relevant items first, then column index;
* ``average``: the mean of the positions the tied group occupies (``scipy.stats.rankdata(-s,
  method="average")``), the "averaging" of Collaborative Experts / TeachText.

Items without a label count as relevance 0.

Two numba habits decide the speed here (checked in the generated assembly): a sum of ``int32``
values is widened to ``int64``, which halves the vector width, unless each step is cast back
(``n = np.int32(n + flag)``); and a loop over ``range(start, stop)`` indexes with wraparound for
negative indexes, which turned vector loads into gathers or kept the loop scalar, while a loop
over a slice indexed from 0 vectorizes.
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

_BLOCK = 64  # cells of a row screened together before any per-cell work
_LINEAR = 64  # a line with up to this many targets: sort them in place, place a cell by counting
# Rows with at most this many targets are counted (one sweep per target), not screened: with 10
# targets a row, counting took 11-14 ms on MSVD's shape where screening took 33-78 ms; with 30, 37
# against 72 ms (targets at random, or raised above the other cells).
_COUNTED_ROW_TARGETS = 32
_PART = 64  # rows whose best two cells of each column are kept for the column pass
_COLUMN_BLOCK = 16  # columns ranked together: one 64-byte line of float32 part maxima
_BOUND_DEPTH = 64  # columns with at most this many targets get a lower bound of their m-th best score
_BOUND_GROUPS_PER_TARGET = 2  # ... from the maxima of this many groups of parts per target
TIE_RULES = ("stable", "optimistic", "pessimistic", "average")
_TIE_CODE = {name: code for code, name in enumerate(TIE_RULES)}


# Per line (the targets of one query, ``[start, stop)`` of its CSR arrays): ``sorted_scores`` and
# ``order`` hold the targets sorted by score; ``above[start + line + k]`` counts the items that
# exceed exactly the k lowest targets; ``tied_before`` / ``tied_total`` count the items of equal
# score with a smaller column index / in all.


@numba.njit(cache=True, inline="always")
def _prepare(line, start, stop, positions, target_scores, sorted_scores, order):
    """Gather and sort the targets' scores; return the lowest (``inf`` when there is none)."""
    for t in range(start, stop):
        target_scores[t] = line[positions[t]]
    return _sort_targets(start, stop, target_scores, sorted_scores, order)


@numba.njit(cache=True, inline="always")
def _sort_targets(start, stop, target_scores, sorted_scores, order):
    """Sort the targets' scores; return the lowest (``inf`` when there is none)."""
    if stop == start:
        return np.inf
    values = target_scores[start:stop]  # slices, indexed from 0: numba vectorizes their loops
    if stop - start > _LINEAR:
        local = np.argsort(values, kind="mergesort")
        for j in range(stop - start):
            order[start + j] = local[j]
            sorted_scores[start + j] = values[local[j]]
        return sorted_scores[start]
    for j in range(values.shape[0]):  # a few targets: each one's place is a vectorized count
        value = values[j]
        missing = value != value
        place = np.int32(0)
        for k in range(values.shape[0]):
            other = values[k]  # NaN goes last, as in argsort: the places stay a permutation
            before = (other < value) | ((other == other) & missing)
            same = (other == value) | ((other != other) & missing)
            place = np.int32(place + (before | (same & (k < j))))
        sorted_scores[start + place] = value
        order[start + place] = j
    return sorted_scores[start]


@numba.njit(cache=True, inline="always")
def _visit(value, item, start, stop, above_start, sorted_scores, order, positions, above, tied_before, tied_total):
    """Account for one item not below the line's lowest target; returns how many targets it is
    strictly above."""
    if stop - start <= _LINEAR:  # branch-free count, vectorized: no mispredicted jumps
        targets = sorted_scores[start:stop]
        below = np.int32(0)
        for j in range(targets.shape[0]):
            below = np.int32(below + (targets[j] < value))
        low = start + below
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
    return low - start


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
def _raise_to(maxima, line):
    """``maxima = max(maxima, line)`` elementwise, vectorized (NaN cells leave it unchanged)."""
    for item in range(line.shape[0]):
        value = line[item]
        maxima[item] = value if value > maxima[item] else maxima[item]


@numba.njit(cache=True, inline="always")
def _keep_best_two(top, second, best_offset, item, cell, offset):
    """Column ``item`` of a part: its best two cells so far and the offset of the best's row in
    the part (the first row on a tie, whose second then equals the best). The offset has the
    scores' type, so the loops calling this stay branch-free and of one vector type."""
    best = top[item]
    lower = cell if cell < best else best
    second[item] = lower if lower > second[item] else second[item]
    top[item] = cell if cell > best else best
    best_offset[item] = offset if cell > best else best_offset[item]


@numba.njit(cache=True, inline="always")
def _screen_row(line, start, stop, above_start, lowest, positions, sorted_scores, order, above, tied_before,
                tied_total):
    """Compare every cell, 64 at a time, with the row's lowest target and place the few cells
    above it among the targets. Returns how many cells were not finite (``x - x`` is 0 only for
    a finite x)."""
    n_columns = line.shape[0]
    bad = 0
    for block in range(0, n_columns, _BLOCK):
        cells = line[block : block + _BLOCK]
        interesting = np.int32(0)
        for item in range(cells.shape[0]):  # vectorized: most cells are finite and below the lowest
            value = cells[item]
            interesting = np.int32(interesting + (value >= lowest) + (value - value != 0))
        if not interesting:
            continue
        for item in range(block, block + cells.shape[0]):
            value = line[item]
            if not (np.abs(value) < np.inf):
                bad += 1
            elif value >= lowest:
                _visit(value, item, start, stop, above_start, sorted_scores, order, positions, above, tied_before,
                       tied_total)
    return bad


@numba.njit(cache=True, inline="always")
def _sweep(line, value, top, second, best_offset, offset, keep_columns):
    """One vectorized pass over a line: the cells above ``value``, at or above it, and not finite
    (``x - x`` is 0 only for a finite x); with ``keep_columns`` also each column's best two cells.

    Doing all of it in one loop matters: each extra loop over an in-cache line cost half a pass
    over the matrix."""
    greater = np.int32(0)
    at_least = np.int32(0)
    bad = np.int32(0)
    for item in range(line.shape[0]):
        cell = line[item]
        greater = np.int32(greater + (cell > value))
        at_least = np.int32(at_least + (cell >= value))
        bad = np.int32(bad + (cell - cell != 0))
        if keep_columns:
            _keep_best_two(top, second, best_offset, item, cell, offset)
    return greater, at_least, bad


@numba.njit(cache=True)
def _rank_line_exactly(line, start, stop, above_start, positions, target_scores, sorted_scores, order, gains, above,
                       tied_before, tied_total, tie_code, out):
    """Rank one line's targets with every tie rule: visit each cell not below the lowest target."""
    lowest = _prepare(line, start, stop, positions, target_scores, sorted_scores, order)
    above[above_start : above_start + stop - start + 1] = 0
    tied_before[start:stop] = 0
    tied_total[start:stop] = 0
    _screen_row(line, start, stop, above_start, lowest, positions, sorted_scores, order, above, tied_before, tied_total)
    _finish(start, stop, above_start, target_scores, gains, positions, order, above, tied_before, tied_total, tie_code, out)


@numba.njit(cache=True, inline="always")
def _keep_part(part, top, second, best_offset, part_best):
    """Store a part's best two cells of each column and the offset of the best, and start anew."""
    kept = part_best[part]
    for item in range(top.shape[0]):
        kept[0, item] = top[item]
        kept[1, item] = second[item]
        kept[2, item] = best_offset[item]
    top[:] = -np.inf
    second[:] = -np.inf


@numba.njit(cache=True, inline="always")
def _group_of(part, n_parts, n_chunks, groups_per_chunk):
    """The group of a part: each thread's parts are split into ``groups_per_chunk`` groups, so
    each thread raises only its own groups' maxima."""
    chunk = ((part + 1) * n_chunks - 1) // n_parts
    first, last = chunk * n_parts // n_chunks, (chunk + 1) * n_parts // n_chunks
    return chunk * groups_per_chunk + (part - first) * groups_per_chunk // (last - first)


@numba.njit(cache=True, parallel=True)
def _scan_rows(scores, row_ptr, row_pos, row_gain, tie_code, row_ranks, row_scores, row_sorted, row_order, row_above,
               row_tied_before, row_tied_total, by_row_ptr, by_row_column, by_row_target, column_scores, part_best,
               group_maxima, non_finite):
    """Each thread ranks the targets of a range of rows. When columns have targets it also reads
    their scores and keeps, for every part of ``_PART`` rows, each column's best two other cells
    and the row of the best, and each column's maximum over every group of its parts.

    ``by_row_*``: the column targets listed by row (their column, and their index in the
    column-target arrays)."""
    n_rows, n_columns = scores.shape
    n_parts = part_best.shape[0]
    n_chunks = non_finite.shape[0]
    groups_per_chunk = group_maxima.shape[0] // n_chunks
    columns = part_best.shape[2] > 0
    for chunk in numba.prange(n_chunks):
        infinity = np.full(1, np.inf, scores.dtype)[0]  # typed as the scores: the sweep stays in float32
        kept = part_best.shape[2]  # padded to whole blocks: the padding stays -inf
        top = np.full(kept, -np.inf, scores.dtype)
        second = np.full(kept, -np.inf, scores.dtype)
        best_offset = np.zeros(kept, scores.dtype)
        saved = np.empty((3, kept), scores.dtype)  # the state of the columns with a target in the row
        offsets = np.arange(_PART).astype(scores.dtype)  # a row's place in its part, typed as the scores
        group_maxima[chunk * groups_per_chunk : (chunk + 1) * groups_per_chunk] = -np.inf
        bad = 0
        first, last = chunk * n_parts // n_chunks * _PART, min(n_rows, (chunk + 1) * n_parts // n_chunks * _PART)
        for row in range(first, last):
            line = scores[row]
            offset = offsets[row % _PART]
            for k in range(by_row_ptr[row], by_row_ptr[row + 1]):  # columns whose target is here
                column = by_row_column[k]
                column_scores[by_row_target[k]] = line[column]
                j = k - by_row_ptr[row]
                saved[0, j], saved[1, j], saved[2, j] = top[column], second[column], best_offset[column]
            start, stop = row_ptr[row], row_ptr[row + 1]
            if stop - start <= _COUNTED_ROW_TARGETS:  # the common case: one sweep does all
                tied = False
                for t in range(start, max(stop, start + 1)):
                    value = line[row_pos[t]] if t < stop else infinity  # no target: checks only
                    greater, at_least, bad_cells = _sweep(line, value, top, second, best_offset, offset,
                                                          columns and t == start)
                    if t < stop:
                        row_scores[t] = value
                        row_ranks[t] = 1.0 + greater
                        tied |= at_least - greater > 1  # another cell has the target's score
                bad += bad_cells
                if tied:
                    _rank_line_exactly(line, start, stop, start + row, row_pos, row_scores, row_sorted, row_order,
                                       row_gain, row_above, row_tied_before, row_tied_total, tie_code, row_ranks)
            else:
                lowest = _prepare(line, start, stop, row_pos, row_scores, row_sorted, row_order)
                bad += _screen_row(line, start, stop, start + row, lowest, row_pos, row_sorted, row_order, row_above,
                                   row_tied_before, row_tied_total)
                _finish(start, stop, start + row, row_scores, row_gain, row_pos, row_order, row_above,
                        row_tied_before, row_tied_total, tie_code, row_ranks)
                if columns:
                    for item in range(n_columns):
                        _keep_best_two(top, second, best_offset, item, line[item], offset)
            for k in range(by_row_ptr[row], by_row_ptr[row + 1]):  # the targets do not count
                column, j = by_row_column[k], k - by_row_ptr[row]
                top[column], second[column], best_offset[column] = saved[0, j], saved[1, j], saved[2, j]
            if columns and (row % _PART == _PART - 1 or row == n_rows - 1):
                part = row // _PART
                if groups_per_chunk:
                    _raise_to(group_maxima[_group_of(part, n_parts, n_chunks, groups_per_chunk)], top[:n_columns])
                _keep_part(part, top, second, best_offset, part_best)
        non_finite[chunk] = bad


@numba.njit(cache=True)
def _column_bounds(group_maxima, first, last, col_ptr, column_sorted, cutoff, bounds):
    """``bounds[first:last]``: the lowest score that matters in each column, the score of its lowest
    target (+inf without any), and with ``cutoff`` possibly more, a lower bound of its m-th best
    score (m = its targets), since a cell below that is never among the best m.

    The bound: a column's maxima over groups of rows, not counting its targets, are cells distinct
    from each other and from the targets, so the m-th largest of all these cells is at most the
    column's m-th best score. (In a useful model the targets score high, which makes the bound
    tight.) The group maxima are ranked with an insertion network, vectorized over columns, down
    to the most targets of a column; a column with more than ``_BOUND_DEPTH`` targets, or more
    than there are groups, gets no bound.
    """
    n_groups, width = group_maxima.shape[0], last - first
    depth = 0
    for column in range(first, last):
        m = col_ptr[column + 1] - col_ptr[column]
        depth = max(depth, m if m <= _BOUND_DEPTH else 0)
    depth = min(depth, n_groups) if cutoff else 0
    best = np.full((depth, width), -np.inf, group_maxima.dtype)  # row j: the (j+1)-th largest
    carried = np.empty(width, group_maxima.dtype)
    for group in range(n_groups if depth else 0):
        carried[:] = group_maxima[group, first:last]
        for j in range(depth):  # insert into each column's sorted best values
            kept = best[j]
            for i in range(width):
                larger = max(kept[i], carried[i])
                carried[i] = min(kept[i], carried[i])
                kept[i] = larger
    for column in range(first, last):
        start, stop = col_ptr[column], col_ptr[column + 1]
        m = stop - start
        bound = column_sorted[start] if m else np.inf
        if 0 < m <= depth:
            g, p = 0, stop - 1  # merge the group maxima and the targets, both best first
            for _ in range(m):
                if p >= start and column_sorted[p] > best[g, column - first]:
                    seed = column_sorted[p]
                    p -= 1
                else:
                    seed = best[g, column - first]
                    g += 1
            bound = max(bound, seed)
        bounds[column] = bound


@numba.njit(cache=True, inline="always")
def _holds(sorted_items, item):
    """Whether ``item`` is in the sorted array ``sorted_items``."""
    place = np.searchsorted(sorted_items, item)
    return place < sorted_items.shape[0] and sorted_items[place] == item


@numba.njit(cache=True, parallel=True)
def _rank_columns(scores, part_best, group_maxima, col_ptr, col_pos, col_gain, tie_code, cutoff, column_scores,
                  column_sorted, column_order, above, tied_before, tied_total, bounds, out):
    """Rank the column targets, in three steps on all threads:

    * each thread sorts the targets and finds the bounds of a range of columns;
    * each thread reads the kept cells of a range of parts, in memory order, into its own counts:
      a part whose best cell of a column is below the column's bound is skipped; when only its
      best cell reaches the bound, that cell is visited without reading the matrix; otherwise the
      part's cells of the column are read again;
    * each thread adds up the counts of a range of columns, visits their targets not below the
      bound (they count among each other's cells) and ranks them. With ``cutoff``, a target
      ranked beyond m (or below the bound, so beyond m as well) gets m + 1.

    ``above``, ``tied_before`` and ``tied_total`` have a row per thread."""
    n_rows, n_columns = scores.shape
    n_parts, n_threads = part_best.shape[0], above.shape[0]
    for thread in numba.prange(n_threads):
        first, last = thread * n_columns // n_threads, (thread + 1) * n_columns // n_threads
        for column in range(first, last):
            _sort_targets(col_ptr[column], col_ptr[column + 1], column_scores, column_sorted, column_order)
        _column_bounds(group_maxima, first, last, col_ptr, column_sorted, cutoff, bounds)
    for thread in numba.prange(n_threads):
        counts, before, total = above[thread], tied_before[thread], tied_total[thread]
        cells = np.empty(_PART, scores.dtype)
        for part in range(thread * n_parts // n_threads, (thread + 1) * n_parts // n_threads):
            tops, seconds, offsets = part_best[part, 0], part_best[part, 1], part_best[part, 2]
            for first in range(0, n_columns, _COLUMN_BLOCK):
                reached = np.int32(0)
                for j in range(first, first + _COLUMN_BLOCK):  # padded: vectorized, most reach no bound
                    reached = np.int32(reached + (tops[j] >= bounds[j]))
                if not reached:
                    continue
                for column in range(first, min(n_columns, first + _COLUMN_BLOCK)):
                    bound = bounds[column]
                    if not tops[column] >= bound:
                        continue
                    start, stop = col_ptr[column], col_ptr[column + 1]
                    if seconds[column] < bound:
                        _visit(tops[column], part * _PART + int(offsets[column]), start, stop, start + column,
                               column_sorted, column_order, col_pos, counts, before, total)
                        continue
                    # Read the part's cells of the column first, without a jump: the reads overlap.
                    first_row, n_cells = part * _PART, min(n_rows - part * _PART, _PART)
                    for k in range(n_cells):
                        cells[k] = scores[first_row + k, column]
                    targets = col_pos[start:stop]  # in increasing row: visited in the last step
                    for k in range(n_cells):
                        if cells[k] >= bound and not _holds(targets, first_row + k):
                            _visit(cells[k], first_row + k, start, stop, start + column, column_sorted,
                                   column_order, col_pos, counts, before, total)
    for thread in numba.prange(n_threads):
        counts, before, total = above[0], tied_before[0], tied_total[0]
        for column in range(thread * n_columns // n_threads, (thread + 1) * n_columns // n_threads):
            start, stop = col_ptr[column], col_ptr[column + 1]
            for other in range(1, n_threads):
                counts[start + column : stop + column + 1] += above[other, start + column : stop + column + 1]
                before[start:stop] += tied_before[other, start:stop]
                total[start:stop] += tied_total[other, start:stop]
            for t in range(start, stop):
                if column_scores[t] >= bounds[column]:
                    _visit(column_scores[t], col_pos[t], start, stop, start + column, column_sorted, column_order,
                           col_pos, counts, before, total)
            _finish(start, stop, start + column, column_scores, col_gain, col_pos, column_order, counts, before,
                    total, tie_code, out)
            if cutoff:
                for t in range(start, stop):
                    if out[t] > stop - start or column_scores[t] < bounds[column]:
                        out[t] = stop - start + 1.0


@numba.njit(cache=True)
def _by_row(col_ptr, col_pos, n_rows):
    """The column targets listed by row: for each, its column and its index in the column arrays."""
    by_row_ptr = np.zeros(n_rows + 1, np.int64)
    for t in range(col_pos.shape[0]):
        by_row_ptr[col_pos[t] + 1] += 1
    by_row_ptr = np.cumsum(by_row_ptr)
    filled = by_row_ptr[:-1].copy()
    by_row_column = np.empty(col_pos.shape[0], np.int64)
    by_row_target = np.empty(col_pos.shape[0], np.int64)
    for column in range(col_ptr.shape[0] - 1):
        for t in range(col_ptr[column], col_ptr[column + 1]):
            k = filled[col_pos[t]]
            by_row_column[k], by_row_target[k] = column, t
            filled[col_pos[t]] += 1
    return by_row_ptr, by_row_column, by_row_target


@numba.njit(cache=True)
def _rank_pass(scores, row_ptr, row_pos, row_gain, col_ptr, col_pos, col_gain, tie_code, n_chunks, cutoff):
    """Ranks of the row targets (queries = rows) and the column targets (queries = columns): one
    pass over the matrix ranks the rows and keeps each part's best two cells per column, then a
    pass over those ranks the columns. Returns (row ranks, column ranks, non-finite cells).

    Arrays are made here, in serial code: in a parallel function each would start its own
    parallel region, and waking the threads ~15 times cost ~0.7 ms on every call. Counts and
    orders are 32-bit (a line of 2^31 cells would be 8 GB): every visit updates them, and at half
    the size more of them stay in the cache.
    """
    n_rows, n_columns = scores.shape
    n_row_targets, n_column_targets = row_pos.shape[0], col_pos.shape[0]
    row_ranks = np.empty(n_row_targets, np.float64)
    row_scores = np.empty(n_row_targets, scores.dtype)
    row_sorted = np.empty(n_row_targets, scores.dtype)
    row_order = np.empty(n_row_targets, np.int32)
    row_above = np.zeros(n_row_targets + n_rows, np.int32)
    row_tied_before = np.zeros(n_row_targets, np.int32)
    row_tied_total = np.zeros(n_row_targets, np.int32)
    n_parts = (n_rows + _PART - 1) // _PART
    kept = n_columns if n_column_targets else 0  # columns whose best cells are kept
    n_blocks = (kept + _COLUMN_BLOCK - 1) // _COLUMN_BLOCK
    depth = 0
    for column in range(n_columns if cutoff else 0):
        m = col_ptr[column + 1] - col_ptr[column]
        depth = max(depth, m if m <= _BOUND_DEPTH else 0)
    groups_per_chunk = -(-min(n_parts, _BOUND_GROUPS_PER_TARGET * depth) // n_chunks)
    group_maxima = np.empty((n_chunks * groups_per_chunk, kept), scores.dtype)
    part_best = np.empty((n_parts, 3, n_blocks * _COLUMN_BLOCK), scores.dtype)
    column_scores = np.empty(n_column_targets, scores.dtype)
    non_finite = np.zeros(n_chunks, np.int64)
    _scan_rows(scores, row_ptr, row_pos, row_gain, tie_code, row_ranks, row_scores, row_sorted, row_order, row_above,
               row_tied_before, row_tied_total, *_by_row(col_ptr, col_pos, n_rows), column_scores, part_best,
               group_maxima, non_finite)
    column_ranks = np.empty(n_column_targets, np.float64)
    if n_column_targets and not non_finite.sum():
        bounds = np.full(n_blocks * _COLUMN_BLOCK, np.inf, scores.dtype)
        _rank_columns(scores, part_best, group_maxima, col_ptr, col_pos, col_gain, tie_code, cutoff, column_scores,
                      np.empty(n_column_targets, scores.dtype), np.empty(n_column_targets, np.int32),
                      np.zeros((n_chunks, n_column_targets + n_columns), np.int32),
                      np.zeros((n_chunks, n_column_targets), np.int32), np.zeros((n_chunks, n_column_targets), np.int32),
                      bounds, column_ranks)
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

    ``columns_top_only``: a column target's rank is exact when it is within the column's first m
    ranks (m = the column's number of targets) and m + 1 otherwise, which is all that nDCG with
    its cutoff at m needs, for a fraction of the work.
    """
    tie_code = _check_tie_rule(ties)
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
