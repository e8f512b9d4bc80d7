"""Ranks of labelled items in a score matrix, without sorting the matrix.

Every label-based metric depends only on the ranks of the items that carry a label (positives,
judged items, items with graded relevance). This module computes those ranks in one pass over the
scores, on all cores, text-to-video (rows) and video-to-text (columns) together:

* a row with up to 32 labels counts the cells above each label, one vectorized sweep per label; the
  first also checks that every cell is finite and flags the cells that reach their column's screen
  (the score of the column's lowest target still in play);
* a row with more labels compares every cell, 64 at a time, with its lowest label and places
  only the few cells above it among the labels (most cells of a useful model score below all);
* the flagged cells (about two a row) are collected, eight flags at a time, and every 4,096 of them
  are visited column by column: a column's targets and counts are then fetched from memory once a
  batch, not once a cell.

With a cutoff (nDCG's first m ranks, m = the column's targets) a column's screen rises during the
pass: it starts at a lower bound of the m-th best score, found from a sample of rows, and a target
with m cells above it leaves play (its rank is m + 1). Each strategy is tested equal to sort-based
ranks (``tests/evaluation/test_evaluation_metrics.py``).

The numba habits these kernels follow, their measurements and the variants tried and dropped:
docs/evaluation.md.

Ties (SPEC §2) — the rank of labelled item ``t`` with relevance ``g_t`` among items of equal score:

* ``stable``: column index ascending (the order of ``numpy.argsort(-s, kind="stable")``);
* ``optimistic``: more relevant items first, then column index;
* ``pessimistic``: less relevant items first, then column index;
* ``average``: the mean of the positions the tied group occupies (``scipy.stats.rankdata(-s,
  method="average")``), the "averaging" of Collaborative Experts / TeachText.

Items without a label count as relevance 0.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from scipy import sparse

from tvrbench.evaluation.choices import TIE_RULES

_BLOCK = 64  # cells of a row screened together before any per-cell work
_LINEAR = 64  # a line with up to this many targets: sort them in place, place a cell by counting
# Rows with at most this many targets are counted (one sweep per target), not screened: up to about
# this many, one sweep per target is cheaper than screening the row.
_COUNTED_ROW_TARGETS = 32
_HIT_BATCH = 4096  # cells reaching their column's screen, visited together column by column
_SEED_DEPTH = 64  # columns with at most this many targets get a lower bound from a sample of rows
_SEED_GROUPS_PER_TARGET = 2  # row groups per target in that sample (more: a tighter bound)
_TILE = 64  # rows sampled together for those bounds ...
_SEED_SAMPLE_STEP = 4  # ... one tile of rows in this many
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
    values = target_scores[start:stop]  # slices, indexed from 0: numba vectorizes their loops
    if stop - start > _LINEAR:
        local = np.argsort(values, kind="mergesort")
        for j in range(stop - start):
            order[start + j] = local[j]
            sorted_scores[start + j] = values[local[j]]
        return sorted_scores[start]
    for j in range(values.shape[0]):  # a few targets: each one's place is a vectorized count
        value = values[j]
        below = np.int32(0)
        equal = np.int32(0)
        for k in range(values.shape[0]):
            below = np.int32(below + (values[k] < value))
            equal = np.int32(equal + (values[k] == value))
        place = below if equal == 1 else _tied_place(values, j)  # another target ties, or NaN
        sorted_scores[start + place] = value
        order[start + place] = j
    return sorted_scores[start]


@numba.njit(cache=True, inline="always")
def _tied_place(values, j):
    """The place of ``values[j]`` in the stable sort of ``values``, ties and NaN included (NaN goes
    last, as in argsort: the places stay a permutation)."""
    value = values[j]
    missing = value != value
    place = np.int32(0)
    for k in range(values.shape[0]):
        other = values[k]
        before = (other < value) | ((other == other) & missing)
        same = (other == value) | ((other != other) & missing)
        place = np.int32(place + (before | (same & (k < j))))
    return place


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
def _screen_row(line, start, stop, above_start, lowest, positions, sorted_scores, order, above, tied_before, tied_total):
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
                _visit(value, item, start, stop, above_start, sorted_scores, order, positions, above, tied_before, tied_total)
    return bad


@numba.njit(cache=True, inline="always")
def _visit_column(
    value, row, column, col_ptr, col_pos, column_sorted, column_order, above, tied_before, tied_total, screen, out_of_play, above_lowest, cutoff
):
    """Account for a cell that reaches its column's screen; with ``cutoff``, raise the screen when
    the column's lowest target in play has m cells above it (it leaves play: its rank is beyond m)."""
    start, stop = col_ptr[column], col_ptr[column + 1]
    below = _visit(value, row, start, stop, start + column, column_sorted, column_order, col_pos, above, tied_before, tied_total)
    if cutoff and below > out_of_play[column]:
        m = stop - start
        above_lowest[column] += 1
        while above_lowest[column] >= m and out_of_play[column] < m:
            out_of_play[column] += 1
            above_lowest[column] -= above[start + column + out_of_play[column]]
        lowest = out_of_play[column]
        screen[column] = column_sorted[start + lowest] if lowest < m else np.inf


@numba.njit(cache=True, inline="always")
def _sweep(line, value, screen, reached, watch):
    """One vectorized pass over a line: the cells above ``value``, at or above it, and not finite
    (``x - x`` is 0 only for a finite x); with ``watch`` also which cells reach their column's
    screen (``reached``, one byte a cell) and how many.

    Doing all of it in one loop matters: each extra loop over an in-cache line cost half a pass
    over the matrix."""
    greater = np.int32(0)
    at_least = np.int32(0)
    bad = np.int32(0)
    count = np.int32(0)
    for item in range(line.shape[0]):
        cell = line[item]
        greater = np.int32(greater + (cell > value))
        at_least = np.int32(at_least + (cell >= value))
        bad = np.int32(bad + (cell - cell != 0))
        if watch:
            hit = cell >= screen[item]
            reached[item] = hit
            count = np.int32(count + hit)
    return greater, at_least, bad, count


@numba.njit(cache=True, inline="always")
def _collect(line, row, reached, words, count, hit_value, hit_row, hit_column, n_hits):
    """Append the ``count`` cells of a row flagged in ``reached`` (found eight flags at a time) to
    the hit buffers; returns the new number of hits."""
    end = n_hits + count
    for word in range(words.shape[0]):
        if not words[word]:
            continue
        for column in range(8 * word, 8 * word + 8):
            if reached[column]:
                hit_value[n_hits] = line[column]
                hit_row[n_hits] = row
                hit_column[n_hits] = column
                n_hits += 1
        if n_hits == end:
            break
    return n_hits


@numba.njit(cache=True)
def _visit_hits(
    n_hits,
    hit_value,
    hit_row,
    hit_column,
    sorted_value,
    sorted_row,
    column_end,
    col_ptr,
    col_pos,
    column_sorted,
    column_order,
    above,
    tied_before,
    tied_total,
    screen,
    out_of_play,
    above_lowest,
    cutoff,
):
    """Visit the buffered cells column by column, each column's in row order (a counting sort): a
    column's targets and counts are then fetched once a batch, not once a cell."""
    n_columns = column_end.shape[0] - 1
    column_end[:] = 0
    for h in range(n_hits):
        column_end[hit_column[h] + 1] += 1
    for column in range(n_columns):
        column_end[column + 1] += column_end[column]
    for h in range(n_hits):
        column = hit_column[h]
        place = column_end[column]
        sorted_value[place] = hit_value[h]
        sorted_row[place] = hit_row[h]
        column_end[column] = place + 1
    first = 0
    for column in range(n_columns):
        for h in range(first, column_end[column]):
            if sorted_value[h] >= screen[column]:  # the screen may have risen since the cell was flagged
                _visit_column(
                    sorted_value[h],
                    sorted_row[h],
                    column,
                    col_ptr,
                    col_pos,
                    column_sorted,
                    column_order,
                    above,
                    tied_before,
                    tied_total,
                    screen,
                    out_of_play,
                    above_lowest,
                    cutoff,
                )
        first = column_end[column]


@numba.njit(cache=True)
def _rank_line_exactly(
    line, start, stop, above_start, positions, target_scores, sorted_scores, order, gains, above, tied_before, tied_total, tie_code, out
):
    """Rank one line's targets with every tie rule: visit each cell not below the lowest target."""
    lowest = _prepare(line, start, stop, positions, target_scores, sorted_scores, order)
    above[above_start : above_start + stop - start + 1] = 0
    tied_before[start:stop] = 0
    tied_total[start:stop] = 0
    _screen_row(line, start, stop, above_start, lowest, positions, sorted_scores, order, above, tied_before, tied_total)
    _finish(start, stop, above_start, target_scores, gains, positions, order, above, tied_before, tied_total, tie_code, out)


@numba.njit(cache=True, parallel=True)
def _column_seeds(scores, col_ptr, col_pos, column_sorted, column_order, step, n_groups, depth, n_threads):
    """A lower bound of each column's m-th best score (m = its targets), from a sample of rows.

    The sample takes every ``step``-th tile of ``_TILE`` rows; it is split into ``n_groups`` groups
    and each column's maximum in every group is taken, with vector instructions. Those maxima are
    cells of distinct rows, and so are the column's targets that are not a group's maximum: the
    m-th largest of all these cells is at most the column's m-th best score, so a cell below it
    can never be among the best m and needs no look. (In a useful model the targets score high,
    which makes the bound tight.) The group maxima are ranked with an insertion network,
    vectorized over columns, down to ``depth`` (the most targets of a column, at most
    ``n_groups``). Columns with more targets than that get -inf; empty ones +inf.
    """
    n_rows, n_columns = scores.shape
    n_sampled = 0
    for tile in range(0, n_rows, _TILE * step):
        n_sampled += min(_TILE, n_rows - tile)
    maxima = np.empty((n_groups, n_columns), scores.dtype)
    for group in numba.prange(n_groups):
        maxima[group] = -np.inf
        for k in range(group * n_sampled // n_groups, (group + 1) * n_sampled // n_groups):
            _raise_to(maxima[group], scores[(k // _TILE) * _TILE * step + k % _TILE])
    seeds = np.empty(n_columns, scores.dtype)
    for thread in numba.prange(n_threads):
        first, last = thread * n_columns // n_threads, (thread + 1) * n_columns // n_threads
        best = np.full((depth, last - first), -np.inf, scores.dtype)  # row j: the (j+1)-th largest
        carried = np.empty(last - first, scores.dtype)
        for group in range(n_groups):
            carried[:] = maxima[group, first:last]
            for j in range(depth):  # insert into each column's sorted best values
                kept = best[j]
                for i in range(last - first):
                    larger = max(kept[i], carried[i])
                    carried[i] = min(kept[i], carried[i])
                    kept[i] = larger
        for column in range(first, last):
            start, stop = col_ptr[column], col_ptr[column + 1]
            m = stop - start
            if m == 0 or m > depth:
                seeds[column] = np.inf if m == 0 else -np.inf
                continue
            g, p = 0, stop - 1  # merge the group maxima and the targets, both best first
            for _ in range(m):
                while p >= start:  # skip a target that is its group's maximum: already counted
                    row = col_pos[start + column_order[p]]
                    k = (row // (_TILE * step)) * _TILE + row % _TILE  # its place in the sample
                    if (row // _TILE) % step or column_sorted[p] < maxima[((k + 1) * n_groups - 1) // n_sampled, column]:
                        break
                    p -= 1
                if p >= start and (g == depth or column_sorted[p] > best[g, column - first]):
                    seed = column_sorted[p]
                    p -= 1
                else:
                    seed = best[g, column - first]
                    g += 1
            seeds[column] = seed
    return seeds


@numba.njit(cache=True, parallel=True)
def _prepare_columns(scores, col_ptr, col_pos, column_scores, column_sorted, column_order):
    """Gather and sort every column's targets (a few cells each: random reads are cheap here)."""
    for column in numba.prange(scores.shape[1]):
        _prepare(scores[:, column], col_ptr[column], col_ptr[column + 1], col_pos, column_scores, column_sorted, column_order)


class _Scan(NamedTuple):
    """The inputs, outputs and counts of ``_scan_chunks``, passed as one argument.

    Written once here rather than as two lists of 24 arguments (the kernel's and its call's) that had to
    stay in step. Numba takes a named tuple as a tuple of its fields: reading ``scan.row_ranks`` is as
    cheap as an argument. ``_rank_pass`` makes it; the arrays the scan writes are read there afterwards.
    """

    scores: np.ndarray
    row_ptr: np.ndarray  # CSR of the row targets: a row's targets are row_pos[row_ptr[row]:row_ptr[row + 1]]
    row_pos: np.ndarray
    row_gain: np.ndarray
    col_ptr: np.ndarray  # CSR of the column targets, as above
    col_pos: np.ndarray
    tie_code: int
    cutoff: bool
    row_ranks: np.ndarray  # the row targets' ranks, then the rows' working arrays
    row_scores: np.ndarray
    row_sorted: np.ndarray
    row_order: np.ndarray
    row_above: np.ndarray
    row_tied_before: np.ndarray
    row_tied_total: np.ndarray
    column_sorted: np.ndarray  # the column targets' scores sorted, and their order (from _prepare_columns)
    column_order: np.ndarray
    column_above: np.ndarray  # counts of each thread (chunk) for the column targets, summed afterwards
    column_tied_before: np.ndarray
    column_tied_total: np.ndarray
    screens: np.ndarray  # per chunk and column: the score a cell must reach to matter to the column
    out_of_play: np.ndarray
    above_lowest: np.ndarray
    non_finite: np.ndarray  # per chunk: the NaN or infinite cells met


@numba.njit(cache=True)
def _scan_chunk(scan, chunk):
    """The rows of thread ``chunk``: ranks their targets and counts, in the thread's own rows of
    ``scan.column_above`` and the like, the cells above the column targets."""
    n_rows = scan.scores.shape[0]
    n_chunks = scan.non_finite.shape[0]
    columns = scan.col_pos.shape[0] > 0
    infinity = np.full(1, np.inf, scan.scores.dtype)[0]  # typed as the scores: the sweep stays in float32
    screen = scan.screens[chunk]
    above = scan.column_above[chunk]
    tied_before = scan.column_tied_before[chunk]
    tied_total = scan.column_tied_total[chunk]
    play = scan.out_of_play[chunk]
    lowest_above = scan.above_lowest[chunk]
    # Buffers of this thread, made in the thread (serial code here: they start no parallel region).
    reached = np.zeros(-(-scan.scores.shape[1] // 8) * 8, np.uint8)  # whole words: the tail stays 0
    words = reached.view(np.uint64)
    capacity = _HIT_BATCH + scan.scores.shape[1] if columns else 0  # a batch, then one more row
    hit_value = np.empty(capacity, scan.scores.dtype)
    hit_row = np.empty(capacity, np.int32)
    hit_column = np.empty(capacity, np.int32)
    sorted_value = np.empty(capacity, scan.scores.dtype)
    sorted_row = np.empty(capacity, np.int32)
    column_end = np.empty(scan.scores.shape[1] + 1, np.int64)
    n_hits = 0
    bad = 0
    first_row, last_row = chunk * n_rows // n_chunks, (chunk + 1) * n_rows // n_chunks
    # The targets' scores first: these loads then overlap, where read at the start of each row's
    # sweep each one stalled it.
    for row in range(first_row, last_row):
        for t in range(scan.row_ptr[row], scan.row_ptr[row + 1]):
            scan.row_scores[t] = scan.scores[row, scan.row_pos[t]]
    for row in range(first_row, last_row):
        line = scan.scores[row]
        start, stop = scan.row_ptr[row], scan.row_ptr[row + 1]
        flagged = np.int32(0)  # cells of the row that reach their column's screen
        if stop - start <= _COUNTED_ROW_TARGETS:  # the common case: one sweep does all
            tied = False
            for t in range(start, max(stop, start + 1)):
                value = scan.row_scores[t] if t < stop else infinity  # no target: checks only
                # ``watch`` as a constant gives each case a loop of its own: a flag read in the loop
                # cost the rows' pass 10%.
                if columns and t == start:
                    greater, at_least, bad_cells, flagged = _sweep(line, value, screen, reached, True)
                else:
                    greater, at_least, bad_cells, _ = _sweep(line, value, screen, reached, False)
                if t < stop:
                    scan.row_ranks[t] = 1.0 + greater
                    tied |= at_least - greater > 1  # another cell has the target's score
            bad += bad_cells
            if tied:
                _rank_line_exactly(
                    line,
                    start,
                    stop,
                    start + row,
                    scan.row_pos,
                    scan.row_scores,
                    scan.row_sorted,
                    scan.row_order,
                    scan.row_gain,
                    scan.row_above,
                    scan.row_tied_before,
                    scan.row_tied_total,
                    scan.tie_code,
                    scan.row_ranks,
                )
        else:
            lowest = _prepare(line, start, stop, scan.row_pos, scan.row_scores, scan.row_sorted, scan.row_order)
            bad += _screen_row(
                line,
                start,
                stop,
                start + row,
                lowest,
                scan.row_pos,
                scan.row_sorted,
                scan.row_order,
                scan.row_above,
                scan.row_tied_before,
                scan.row_tied_total,
            )
            _finish(
                start,
                stop,
                start + row,
                scan.row_scores,
                scan.row_gain,
                scan.row_pos,
                scan.row_order,
                scan.row_above,
                scan.row_tied_before,
                scan.row_tied_total,
                scan.tie_code,
                scan.row_ranks,
            )
            if columns:
                flagged = _sweep(line, infinity, screen, reached, True)[3]
        if flagged:
            n_hits = _collect(line, row, reached, words, flagged, hit_value, hit_row, hit_column, n_hits)
        if n_hits > _HIT_BATCH or row == last_row - 1:
            _visit_hits(
                n_hits,
                hit_value,
                hit_row,
                hit_column,
                sorted_value,
                sorted_row,
                column_end,
                scan.col_ptr,
                scan.col_pos,
                scan.column_sorted,
                scan.column_order,
                above,
                tied_before,
                tied_total,
                screen,
                play,
                lowest_above,
                scan.cutoff,
            )
            n_hits = 0
    scan.non_finite[chunk] = bad


@numba.njit(cache=True, parallel=True)
def _scan_chunks(scan):
    """Each thread owns a range of rows: it ranks their targets and keeps its own column counts.

    The loop's body is a function of its own: in a ``prange`` body numba loses the writes made
    through a named tuple's fields (numba issues 7135 and 10338, seen in 0.68.1); through a call they land.
    """
    for chunk in numba.prange(scan.non_finite.shape[0]):
        _scan_chunk(scan, chunk)


@numba.njit(cache=True, parallel=True)
def _finish_columns(
    col_ptr, col_pos, col_gain, tie_code, cutoff, column_scores, column_order, column_above, column_tied_before, column_tied_total, out_of_play, out
):
    """Ranks of the column targets from the counts of all threads; with ``cutoff``, the targets
    out of play in any thread or ranked beyond m get m + 1."""
    for column in numba.prange(col_ptr.shape[0] - 1):
        start, stop = col_ptr[column], col_ptr[column + 1]
        _finish(
            start,
            stop,
            start + column,
            column_scores,
            col_gain,
            col_pos,
            column_order,
            column_above,
            column_tied_before,
            column_tied_total,
            tie_code,
            out,
        )
        if cutoff:
            m = stop - start
            for p in range(out_of_play[:, column].max()):
                out[start + column_order[start + p]] = m + 1.0
            for t in range(start, stop):
                if out[t] > m:
                    out[t] = m + 1.0


@numba.njit(cache=True)
def _rank_pass(scores, row_ptr, row_pos, row_gain, col_ptr, col_pos, col_gain, tie_code, n_chunks, cutoff):
    """Ranks of the row targets (queries = rows) and the column targets (queries = columns) in one
    pass over the matrix. Returns (row ranks, column ranks, non-finite cells).

    Arrays are made here, in serial code: in a parallel function each would start its own
    parallel region, and waking the threads for each costs more than small inputs' work. Counts and
    orders are 32-bit (a line of 2^31 cells would be 8 GB): every visit updates them, and at half
    the size more of them stay in the cache.
    """
    n_rows, n_columns = scores.shape
    n_row_targets, n_column_targets = row_pos.shape[0], col_pos.shape[0]
    scan = _Scan(
        scores=scores,
        row_ptr=row_ptr,
        row_pos=row_pos,
        row_gain=row_gain,
        col_ptr=col_ptr,
        col_pos=col_pos,
        tie_code=tie_code,
        cutoff=cutoff,
        row_ranks=np.empty(n_row_targets, np.float64),
        row_scores=np.empty(n_row_targets, scores.dtype),
        row_sorted=np.empty(n_row_targets, scores.dtype),
        row_order=np.empty(n_row_targets, np.int32),
        row_above=np.zeros(n_row_targets + n_rows, np.int32),
        row_tied_before=np.zeros(n_row_targets, np.int32),
        row_tied_total=np.zeros(n_row_targets, np.int32),
        column_sorted=np.empty(n_column_targets, scores.dtype),
        column_order=np.empty(n_column_targets, np.int32),
        column_above=np.zeros((n_chunks, n_column_targets + n_columns), np.int32),
        column_tied_before=np.zeros((n_chunks, n_column_targets), np.int32),
        column_tied_total=np.zeros((n_chunks, n_column_targets), np.int32),
        screens=np.empty((n_chunks, n_columns), scores.dtype),
        out_of_play=np.zeros((n_chunks, n_columns), np.int64),
        above_lowest=np.zeros((n_chunks, n_columns), np.int64),
        non_finite=np.zeros(n_chunks, np.int64),
    )
    column_ranks = np.empty(n_column_targets, np.float64)
    column_scores = np.empty(n_column_targets, scores.dtype)
    if n_column_targets:
        _prepare_columns(scores, col_ptr, col_pos, column_scores, scan.column_sorted, scan.column_order)
        seeds = np.full(n_columns, -np.inf, scores.dtype)
        if cutoff:
            depth = 0
            for column in range(n_columns):
                depth = max(depth, col_ptr[column + 1] - col_ptr[column])
            n_groups = min(n_rows, _SEED_GROUPS_PER_TARGET * min(depth, _SEED_DEPTH))
            step = max(1, min(_SEED_SAMPLE_STEP, n_rows // (n_groups * _TILE)))
            seeds = _column_seeds(scores, col_ptr, col_pos, scan.column_sorted, scan.column_order, step, n_groups, min(depth, n_groups), n_chunks)
        for column in range(n_columns):  # targets below the seed are out of play from the start
            start, stop = col_ptr[column], col_ptr[column + 1]
            below = np.searchsorted(scan.column_sorted[start:stop], seeds[column])
            scan.out_of_play[:, column] = below
            scan.screens[:, column] = scan.column_sorted[start + below] if below < stop - start else np.inf
    _scan_chunks(scan)
    if n_column_targets:
        for chunk in range(1, n_chunks):
            scan.column_above[0] += scan.column_above[chunk]
            scan.column_tied_before[0] += scan.column_tied_before[chunk]
            scan.column_tied_total[0] += scan.column_tied_total[chunk]
        _finish_columns(
            col_ptr,
            col_pos,
            col_gain,
            tie_code,
            cutoff,
            column_scores,
            scan.column_order,
            scan.column_above[0],
            scan.column_tied_before[0],
            scan.column_tied_total[0],
            scan.out_of_play,
            column_ranks,
        )
    return scan.row_ranks, column_ranks, scan.non_finite.sum()


class NonFiniteScores(ValueError):
    """The scores hold NaN or infinite values (found by the ranking pass, which reads every cell)."""


def check_tie_rule(ties: str) -> int:
    """The kernels' code for tie rule ``ties``; ValueError naming the rules when it is none of them."""
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
    :class:`NonFiniteScores` (a ``ValueError``) if ``scores`` holds NaN or infinite values.

    ``columns_top_only``: a column target's rank is exact when it is within the column's first m
    ranks (m = the column's number of targets) and m + 1 otherwise, which is all that nDCG with
    its cutoff at m needs, for a fraction of the work.
    """
    tie_code = check_tie_rule(ties)
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
        raise NonFiniteScores(f"scores hold {non_finite} NaN or infinite values")
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
