"""Signatures: one string naming every setting and version behind a number (as sacrebleu does).

A signature is an ordered list of ``key:value`` fields joined by ``|``, for example
``tvrbench:0.1.0|numpy:2.1.3|task:t2v|ties:stable|ap:standard|ndcg:epic|labels:original+fire``.
Two results are comparable when their signatures are equal.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
from collections.abc import Iterable, Mapping
from pathlib import Path

import xxhash

import tvrbench


@functools.cache
def package_version(name: str) -> str:
    """Installed version of a distribution, or ``none`` (read once per process: it parses files)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "none"


def file_digest(path: str | Path, length: int = 12, algorithm: str = "sha256") -> str:
    """Short digest of a file's bytes, so a signature pins the exact input used.

    ``xxh3`` (XXH3-128: ~25 GB/s here against SHA-256's ~1.7 GB/s; not cryptographic, which a
    signature does not need) is for score and relevance matrices, where SHA-256 took longer than
    the ranking; its digest reads ``xxh3:<hex>`` so the signature names the algorithm. A folder (a
    Zarr store, Parquet partitions) digests as its files' relative names and bytes, in name order.
    """
    digest = xxhash.xxh3_128() if algorithm == "xxh3" else hashlib.new(algorithm)
    buffer = bytearray(1 << 22)  # read into one buffer: no copy of the file held (or mapped) at once
    path = Path(path)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        if file != path:
            digest.update(file.relative_to(path).as_posix().encode("utf-8") + b"\0")
        with open(file, "rb", buffering=0) as handle:
            while size := handle.readinto(buffer):
                digest.update(memoryview(buffer)[:size])
    text = digest.hexdigest()[:length]
    return text if algorithm == "sha256" else f"{algorithm}:{text}"


def text_digest(texts: Iterable[str], length: int = 12) -> str:
    """Short SHA-256 of a sequence of strings (order matters)."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:length]


class Signature:
    """Ordered ``key:value`` fields; starts with tvrbench's version and the given libraries'."""

    def __init__(self, fields: Mapping[str, object] | None = None, libraries: Iterable[str] = ("numpy",)):
        self.fields: dict[str, str] = {"tvrbench": tvrbench.__version__}
        for library in libraries:
            self.fields[library] = package_version(library)
        for key, value in (fields or {}).items():
            self.add(key, value)

    def add(self, key: str, value: object) -> "Signature":
        if isinstance(value, bool):
            value = "yes" if value else "no"
        elif isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        text = str(value)
        if "|" in text or "|" in key:
            raise ValueError(f"signature field {key!r} may not contain '|'")
        self.fields[key] = text
        return self

    def __str__(self) -> str:
        return "|".join(f"{key}:{value}" for key, value in self.fields.items())
