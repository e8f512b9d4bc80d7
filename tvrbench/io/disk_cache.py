"""Values derived once from large resources and kept under tvrbench's cache folder.

The verb generator's lexicon, its verb-argument table and its counter-fitted vectors each take
seconds to minutes to build and are the same on every run: each is kept in one file keyed by what
it was built from. A missing or unreadable file is built again; the file appears atomically, so a
killed build never leaves half a cache behind.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

from tvrbench.home import cache_dir
from tvrbench.io.atomic import atomic_write

T = TypeVar("T")


def kept(folder: str, name: str, build: Callable[[], T], read: Callable[[Path], T], write: Callable[[T, IO], None], binary: bool = False) -> T:
    """The value read from ``cache_dir()/folder/name``, after ``build()`` is written there when ``read``
    raises: a missing, truncated or older file."""
    path = cache_dir() / folder / name
    try:
        return read(path)
    except (OSError, ValueError, KeyError, TypeError, EOFError, zipfile.BadZipFile):
        pass
    with atomic_write(path, "wb" if binary else "w") as out:
        write(build(), out)
    return read(path)  # as every later run sees it, so the first run's values are theirs


def kept_json(folder: str, key: str, build: Callable[[], dict], fields: frozenset[str] = frozenset()) -> dict:
    """A JSON object kept as ``cache_dir()/folder/key.json``; a file without all ``fields`` is rebuilt."""

    def read(path: Path) -> dict:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not data.keys() >= fields:
            raise ValueError(f"{path}: not a complete {folder} cache")
        return data

    return kept(folder, f"{key}.json", build, read, lambda data, out: json.dump(data, out, separators=(",", ":"), sort_keys=True))
