"""Progress on stderr for anything that can take more than a few seconds: a bar on a terminal, and a
plain line every ``PLAIN_EVERY`` seconds elsewhere (a log, a pipe, a CI job), so a long run is never
silent. Inside :func:`progress_to`, it goes to another stream: the demo's console, while each step's
own output goes to the step's log."""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import TextIO, TypeVar

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

T = TypeVar("T")
PLAIN_EVERY = 30.0  # seconds between plain progress lines; a run shorter than that prints none
_SHOWN_ON: ContextVar[tuple[TextIO, float] | None] = ContextVar("progress_shown_on", default=None)


@contextlib.contextmanager
def progress_to(stream: TextIO, every: float) -> Iterator[None]:
    """Progress made inside goes to ``stream`` (a plain line every ``every`` seconds unless it is a terminal), not stderr."""
    token = _SHOWN_ON.set((stream, every))
    try:
        yield
    finally:
        _SHOWN_ON.reset(token)


def track(
    items: Iterable[T],
    description: str,
    total: int | None = None,
    enabled: bool | None = None,
    size: Callable[[T], int] = lambda item: 1,
    unit: str = "",
    note: Callable[[], str] | None = None,
) -> Iterator[T]:
    """Iterate ``items`` showing how far: ``size(item)`` units each (a chunk: its captions), ``total`` of
    them, and ``note()`` beside (records so far). ``enabled``: the bar even when stderr is no terminal."""
    stream, every = _SHOWN_ON.get() or (sys.stderr, PLAIN_EVERY)
    terminal = stream.isatty() if enabled is None else enabled
    if terminal:
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[note]}"), TimeRemainingColumn())
        with Progress(*columns, transient=True, console=Console(file=stream)) as progress:
            task = progress.add_task(description, total=total, note="")
            for item in items:
                yield item
                progress.update(task, advance=size(item), note=note() if note else "")
        return
    start = last = time.monotonic()
    done = 0
    for item in items:
        yield item
        done += size(item)
        now = time.monotonic()
        if now - last >= every:
            last = now
            print(plain_line(description, done, total, now - start, unit, note() if note else ""), file=stream, flush=True)


def plain_line(description: str, done: int, total: int | None, elapsed: float, unit: str, note: str) -> str:
    """``verb contrasts: 48/200 captions, 19 records, 0.31/s, about 8 min left``."""
    rate = done / elapsed if elapsed > 0 else 0.0
    parts = [(f"{done}/{total}" if total else str(done)) + (f" {unit}" if unit else ""), *([note] if note else []), f"{rate:.2g}/s"]
    if total and rate > 0:
        left = (total - done) / rate
        parts.append(f"about {left / 60:.0f} min left" if left >= 90 else f"about {left:.0f} s left")
    return f"{description}: {', '.join(parts)}"
