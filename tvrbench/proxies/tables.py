"""Small CSV tables the proxies read and write (class lists, human-study kits and rankings, triplets)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write
from tvrbench.io.files import read_text_file


def read_csv(path: str | Path, columns: Sequence[str]) -> list[dict[str, str]]:
    """Rows of a UTF-8 CSV file that has (at least) ``columns``; InputError naming the file otherwise."""
    rows = list(csv.DictReader(io.StringIO(read_text_file(path), newline="")))
    if not rows or any(column not in rows[0] for column in columns):
        raise InputError(path, f"expected CSV columns {','.join(columns)}")
    return rows


def write_csv(path: str | Path, rows: Iterable[dict], columns: Sequence[str]) -> None:
    with atomic_write(path) as handle:
        writer = csv.DictWriter(handle, fieldnames=list(columns), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
