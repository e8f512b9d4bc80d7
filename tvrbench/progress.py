"""Progress bars on stderr for anything that can take more than a few seconds."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from typing import TypeVar

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

T = TypeVar("T")


def track(items: Iterable[T], description: str, total: int | None = None, enabled: bool | None = None) -> Iterator[T]:
    """Iterate ``items`` with a progress bar, shown only when stderr is a terminal."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield from items
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(*columns, transient=True) as progress:
        yield from progress.track(items, total=total, description=description)
