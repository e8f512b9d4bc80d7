"""Small CSV tables read and written as rows of dicts: the proxies' class lists, human-study kits and
rankings, triplets, and the contrast review's verdicts."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write
from tvrbench.io.files import read_text_file


def read_csv(path: str | Path, columns: Sequence[str], types: Mapping[str, type] | None = None) -> list[dict]:
    """Rows of a UTF-8 CSV file that has (at least) ``columns``, the ``types`` columns converted
    (``{"rank": int}``); InputError naming the file and line otherwise."""
    rows = list(csv.DictReader(io.StringIO(read_text_file(path), newline="")))
    if not rows or any(column not in rows[0] for column in columns):
        raise InputError(path, f"expected CSV columns {','.join(columns)}")
    for number, row in enumerate(rows, start=2):
        for column, kind in (types or {}).items():
            try:
                row[column] = kind(row[column])
            except (TypeError, ValueError):
                raise InputError(path, f"line {number}: {column} {row[column]!r} is not a{'n' if kind is int else ''} {kind.__name__}") from None
    return rows


def write_csv(path: str | Path, rows: Iterable[dict], columns: Sequence[str]) -> None:
    with atomic_write(path) as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
