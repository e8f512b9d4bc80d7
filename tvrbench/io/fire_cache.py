"""Parsed FIRE columns kept under the cache folder, so a file is parsed once, not once per command.

An entry is named by the reader's format version and the XXH3-128 digest of the file's bytes (the
whole file is hashed on every read, at disk speed), so an edited file, even one of the same size and
time, is parsed afresh and never served from the cache. An entry is one msgpack document (msgspec):
each column as its distinct values plus ``int32`` codes, the ids as raw ``int64`` bytes. Nothing is
unpickled. An unreadable entry is parsed again and replaced. ``tvrbench fire cache --clear``
deletes every entry (or delete ``cache_folder()``).
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import numpy as np

from tvrbench.home import cache_dir
from tvrbench.io.atomic import atomic_write
from tvrbench.signature import file_digest

VERSION = 1  # bump when the stored layout or what the reader puts in the columns changes


class _Column(msgspec.Struct, array_like=True):
    values: list  # distinct values (strings, or tuples as lists)
    codes: bytes  # int32 index into values, one per record


class _Entry(msgspec.Struct, array_like=True):
    query: _Column
    video_id: _Column
    dataset: _Column
    models: _Column
    annotator_labels: _Column
    annotator_ids: _Column
    label: bytes  # int8
    response_ids: tuple[bytes, bytes]  # int64 values, offsets
    queue_ids: tuple[bytes, bytes]
    metadata: dict


def cache_folder() -> Path:
    return cache_dir() / "fire"


def key(path: Path) -> str:
    """The entry name for the file's current bytes."""
    return f"v{VERSION}-{file_digest(path, 32, 'xxh3').removeprefix('xxh3:')}"


def _encode(column) -> _Column:
    index: dict = {}
    codes = np.fromiter((index.setdefault(value, len(index)) for value in column), np.int32, count=len(column))
    return _Column(list(index), codes.tobytes())


def _strings(column: _Column) -> np.ndarray:
    values = np.empty(len(column.values), dtype=object)
    values[:] = column.values
    return values[np.frombuffer(column.codes, np.int32)]


def _tuples(column: _Column) -> list[tuple]:
    values = [tuple(value) for value in column.values]
    return [values[code] for code in np.frombuffer(column.codes, np.int32).tolist()]


def _ragged(parts: tuple[bytes, bytes]) -> tuple[np.ndarray, np.ndarray]:
    return np.frombuffer(parts[0], np.int64).copy(), np.frombuffer(parts[1], np.int64).copy()


def store(name: str, labels) -> None:
    """Keep the columns of ``labels`` (a :class:`~tvrbench.io.fire.FireLabels`) under ``name``; skipped
    (the next read parses again) if they cannot be encoded."""
    try:
        entry = _Entry(
            *(_encode(getattr(labels, column)) for column in ("query", "video_id", "dataset", "models", "annotator_labels", "annotator_ids")),
            label=labels.label.tobytes(),
            response_ids=(labels.response_ids.values.tobytes(), labels.response_ids.offsets.tobytes()),
            queue_ids=(labels.queue_ids.values.tobytes(), labels.queue_ids.offsets.tobytes()),
            metadata=labels.metadata,
        )
        payload = msgspec.msgpack.encode(entry)
    except (OverflowError, TypeError, RecursionError):  # an annotator id beyond 64 bits; metadata msgpack lacks or cannot nest so deep
        return
    try:
        with atomic_write(cache_folder() / f"{name}.msgpack", "wb") as out:
            out.write(payload)
    except OSError:  # a read-only or full cache folder costs a parse next time, nothing more
        return


def load(name: str) -> dict | None:
    """The columns kept under ``name`` as ``FireLabels`` fields but ``source`` (each id column as its
    values and offsets), or None when there is no readable entry. Plain arrays, because
    :mod:`tvrbench.io.fire` imports this module and so this one imports nothing of it."""
    try:
        entry = msgspec.msgpack.decode((cache_folder() / f"{name}.msgpack").read_bytes(), type=_Entry)
        return dict(
            query=_strings(entry.query),
            video_id=_strings(entry.video_id),
            label=np.frombuffer(entry.label, np.int8).copy(),
            dataset=_strings(entry.dataset),
            models=_tuples(entry.models),
            annotator_labels=_tuples(entry.annotator_labels),
            annotator_ids=_tuples(entry.annotator_ids),
            metadata=entry.metadata,
            response_ids=_ragged(entry.response_ids),
            queue_ids=_ragged(entry.queue_ids),
        )
    except (OSError, msgspec.DecodeError, ValueError, IndexError):
        return None


def clear() -> tuple[int, int]:
    """Delete every entry; returns (files, bytes) removed."""
    files = removed = 0
    for entry in cache_folder().glob("*.msgpack"):
        size = entry.stat().st_size
        entry.unlink(missing_ok=True)
        files, removed = files + 1, removed + size
    return files, removed
