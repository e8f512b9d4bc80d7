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


def read_json(path: str | Path) -> object:
    """A user's JSON file (a sidecar, an analysis, a manifest); InputError when it is not one."""
    path = Path(path)
    text = read_text_file(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(path, f"malformed JSON ({error.msg}, line {error.lineno})") from None
    except RecursionError:
        raise InputError(path, "JSON nested too deeply") from None


def read_json_object(path: str | Path) -> dict:
    """:func:`read_json` of a file that must hold one JSON object."""
    data = read_json(path)
    if not isinstance(data, dict):
        raise InputError(path, "expected a JSON object")
    return data


def string_list(data: dict, key: str, source: Path, length: int | None = None) -> list[str]:
    """``data[key]`` checked to be a list of strings (of ``length`` items when given), for sidecars read back."""
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise InputError(source, f"field {key!r} must be a list of strings")
    if length is not None and len(value) != length:
        raise InputError(source, f"field {key!r} has {len(value)} entries, expected {length}")
    return value


def jsonl_objects(path: Path, text: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of a JSON Lines text; InputError naming the line."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(path, f"line {number}: malformed JSON ({error.msg})") from None
        except RecursionError:
            raise InputError(path, f"line {number}: JSON nested too deeply") from None
        if not isinstance(record, dict):
            raise InputError(path, f"line {number}: expected a JSON object")
        yield number, record
