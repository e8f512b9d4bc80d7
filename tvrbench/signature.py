"""Signatures: one string naming every setting and version behind a number (as sacrebleu does).

A signature is an ordered list of ``key:value`` fields joined by ``|``, for example
``tvrbench:0.1.0|numpy:2.1.3|task:t2v|ties:stable|ap:standard|ndcg:epic|labels:original+fire``.
Two results are comparable when their signatures are equal; :func:`diff_signatures` says why two
are not. A signature held as one field of another (an analysis naming the engine's) is nested:
its ``|`` become ``;``.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import platform
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
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


# Every library a signature may name (the commands' ``libraries``), as ``tvrbench --version`` lists them.
LIBRARIES = (
    "numpy", "scipy", "scikit-learn", "numba", "pyarrow", "spacy", "nltk", "lemminflect", "inflect", "pocketsphinx",
    "sentence-transformers", "transformers", "torch", "datasets",
)  # fmt: skip


def versions() -> dict[str, str]:
    """tvrbench's version, Python's and each of :data:`LIBRARIES` (``none`` when not installed)."""
    return {"tvrbench": tvrbench.__version__, "python": platform.python_version(), **{name: package_version(name) for name in LIBRARIES}}


def file_digest(path: str | Path, length: int = 12, algorithm: str = "sha256") -> str:
    """Short digest of a file's bytes, so a signature pins the exact input used (which algorithm for
    which input: :func:`input_digest`).

    ``xxh3`` (XXH3-128: many times faster than SHA-256, docs/performance.md; not cryptographic,
    which a signature does not need) is for score and relevance matrices, where SHA-256 took longer
    than the ranking; its digest reads ``xxh3:<hex>`` so the signature names the algorithm. A folder (a
    Zarr store, Parquet partitions) digests as its files' relative names and bytes, in name order.
    """
    path = Path(path)
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    return bytes_digest((part for file in files for part in _file_parts(path, file)), length, algorithm)


def _file_parts(root: Path, file: Path) -> Iterator[bytes | memoryview]:
    """A file's bytes, after its name relative to ``root`` when it is inside a folder being digested."""
    if file != root:
        yield file.relative_to(root).as_posix().encode("utf-8") + b"\0"
    with open(file, "rb", buffering=0) as handle:
        yield from _chunks(handle)


def _chunks(handle, size: int = 1 << 22) -> Iterator[memoryview]:
    """A file's bytes through one reused buffer: no copy of the file held (or mapped) at once."""
    buffer = bytearray(size)
    while filled := handle.readinto(buffer):
        yield memoryview(buffer)[:filled]


def bytes_digest(parts: Iterable[bytes | memoryview], length: int = 12, algorithm: str = "sha256") -> str:
    """:func:`file_digest` of a file made of ``parts``, for bytes already in memory."""
    digest = xxhash.xxh3_128() if algorithm == "xxh3" else hashlib.new(algorithm)
    for part in parts:
        digest.update(part)
    text = digest.hexdigest()[:length]
    return text if algorithm == "sha256" else f"{algorithm}:{text}"


def text_digest(texts: Iterable[str], length: int = 12) -> str:
    """Short SHA-256 of a sequence of strings (order matters)."""
    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()[:length]


def captions_digest(captions) -> str:
    """The ``captions`` field of a command that pins the captions it read (ids, videos, texts) rather
    than their file, so two formats of the same captions sign alike."""
    return text_digest(f"{c}\t{v}\t{t}" for c, v, t in zip(captions.caption_ids, captions.video_ids, captions.texts))


# The one pinning rule. Every input file a command reads enters its signature as one field, named
# after the input (``queries``, ``videos``, ``scores``, ``fire``, ``qrels``, ``mc``, ...), whose value
# is the file's digest; several files of one input (models given by repeated ``--scores``) are their
# digests joined by ``,`` in the order given. Large arrays, whose SHA-256 would take longer than the
# analysis, are digested by xxh3 (``xxh3:<hex>``); every other input by SHA-256 (bare ``<hex>``).
BULK_INPUTS = frozenset({"scores", "relevance", "text_embeddings", "video_embeddings"})


def input_algorithm(name: str) -> str:
    """The digest algorithm of the input ``name`` (a score matrix or a TREC run alike: ``scores``)."""
    return "xxh3" if name in BULK_INPUTS else "sha256"


def input_digest(name: str, paths: str | Path | Iterable[str | Path], data: bytes | memoryview | None = None) -> str:
    """The value of the input ``name``'s field: the digest of its file, or of each of its files;
    ``data``: the one file's bytes when the caller has read them already (the same digest, no second read)."""
    if data is not None:
        return bytes_digest([data], algorithm=input_algorithm(name))
    if isinstance(paths, (str, Path)):
        return file_digest(paths, algorithm=input_algorithm(name))
    return ",".join(input_digest(name, path) for path in paths)


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

    @classmethod
    def parse(cls, text: str) -> "Signature":
        """The signature written as ``text`` (nested or not); a value keeps any ``:`` after the first."""
        signature = cls.__new__(cls)
        signature.fields = {}
        between_fields = "|" if "|" in text else ";"  # ";": a nested signature given alone
        for field in text.strip().split(between_fields):
            key, colon, value = field.partition(":")
            if not colon or not key:
                raise ValueError(f"not a signature field: {field!r} (expected key:value)")
            signature.fields[key] = value
        return signature

    def nested(self) -> str:
        """This signature as one field's value of another (``|`` → ``;``)."""
        return str(self).replace("|", ";")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Signature) and self.fields == other.fields


@dataclass(frozen=True)
class FieldChange:
    """One field that differs: its key (``outer.inner`` inside a nested signature) and both values,
    ``None`` where a signature lacks the field."""

    key: str
    left: str | None
    right: str | None


@dataclass(frozen=True)
class SignatureDiff:
    """Why two results may not be compared: the fields of their signatures that differ."""

    left: Signature
    right: Signature
    left_name: str = "A"
    right_name: str = "B"

    @property
    def changes(self) -> list[FieldChange]:
        return diff_signatures(self.left, self.right)

    @property
    def columns(self) -> list[str]:
        return ["field", self.left_name, self.right_name]

    @property
    def rows(self) -> list[list[str]]:
        return [[change.key, _shown(change.left), _shown(change.right)] for change in self.changes]

    def to_json(self) -> dict:
        return {
            "equal": not self.changes,
            "left": {"source": self.left_name, "signature": str(self.left)},
            "right": {"source": self.right_name, "signature": str(self.right)},
            "changes": [{"field": c.key, "left": c.left, "right": c.right} for c in self.changes],
        }


def _shown(value: str | None) -> str:
    return "(absent)" if value is None else value


def diff_signatures(left: Signature, right: Signature) -> list[FieldChange]:
    """The fields whose values differ, in the left signature's order, then the right's extra fields;
    a nested signature (a value holding ``;``-joined fields) is compared field by field."""
    changes = []
    for key in dict.fromkeys([*left.fields, *right.fields]):
        a, b = left.fields.get(key), right.fields.get(key)
        if a == b:
            continue
        if a is not None and b is not None and _is_nested(a) and _is_nested(b):
            inner = diff_signatures(Signature.parse(a), Signature.parse(b))
            changes += [FieldChange(f"{key}.{change.key}", change.left, change.right) for change in inner]
        else:
            changes.append(FieldChange(key, a, b))
    return changes


def _is_nested(value: str) -> bool:
    return ";" in value and all(":" in field for field in value.split(";"))
