"""Checks shared by every reader of a user's file, so each says the same thing the same way."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from tvrbench.errors import InputError

PICKLE_MAGIC = b"\x80"  # first byte of every pickle since protocol 2


def require_file(path: Path, expected: str) -> bytes:
    """InputError unless ``path`` is an existing file; returns its first bytes for format sniffing."""
    if not path.exists():
        raise InputError(path, "no such file")
    if path.is_dir():
        raise InputError(path, f"is a directory, expected {expected}")
    with open(path, "rb") as handle:
        return handle.read(4096)


def read_text_file(path: str | Path) -> str:
    """A user's text file as a string; InputError if absent, a directory, a pickle, not UTF-8 or empty."""
    path = Path(path)
    require_file(path, "a text file")
    raw = path.read_bytes()
    if raw.startswith(PICKLE_MAGIC):
        raise InputError(path, "looks like a pickle; tvrbench never unpickles input (see --trust-pickle where offered)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InputError(path, f"not UTF-8 text (byte {error.start})") from None
    if not text.strip():
        raise InputError(path, "empty file")
    return text


def jsonl_objects(path: Path, text: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON Lines text; InputError naming the line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(path, f"line {number}: malformed JSON ({error.msg})") from None
        if not isinstance(record, dict):
            raise InputError(path, f"line {number}: expected a JSON object")
        yield number, record
