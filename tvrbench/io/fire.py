"""FIRE relevance labels (Rodriguez et al.): a fast reader with a cache, a columnar table and a writer.

A FIRE file is one JSON object: ``annotations`` (pairs whose labels have a majority), ``disagreements``
(pairs without one, so no ``label``) and a few metadata fields (``source_ds``, ``created_ds``,
``creator``, ``license``, ``datasets``, ...). A record keys a pair by caption *text* and video id,
because MSVD has no caption ids. Real files hold 650K+ records in up to 200 MB. :func:`read_fire`
decodes the file in one call into typed msgspec structs (validated as they are built, faster than
``json.load``; docs/performance.md) and stores the records in compact columns: repeated strings and
tuples are shared, labels are ``int8``, response and queue ids packed ``int64`` arrays. The columns
are then kept under the cache folder, keyed by the file's digest (:mod:`tvrbench.io.fire_cache`), so
the next command on the same file skips the parse.

Only when msgspec rejects a file does the streaming reader (ijson events, one pydantic
:class:`FireRecord` per record, :func:`iter_fire`) run: to name the first bad record and field, or to
read a file whose nesting is deeper than msgspec can follow (it recurses once per level, up to
Python's recursion limit; ijson does not), so that deep values in fields tvrbench does not read are
accepted. Whatever a file holds, the reader returns labels or raises one :class:`InputError`.

In the released data the per-label lists (``annotator_ids``, ``annotator_labels``,
``response_ids``, ``queue_ids``, ``models``) have one entry per individual label, so ``models``
may repeat a name (a pair pooled twice by one model's queue); read it as a set for pooling.
"""

from __future__ import annotations

import codecs
import json
import math
import os
import reprlib
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import partial
from itertools import chain, islice
from operator import attrgetter
from pathlib import Path
from typing import Annotated, Literal

import ijson
import msgspec
import numpy as np
import pydantic
from ijson.common import ObjectBuilder

from tvrbench.errors import InputError
from tvrbench.io import fire_cache
from tvrbench.io.atomic import atomic_write
from tvrbench.io.files import PICKLE_MAGIC, require_file
from tvrbench.progress import track

FIRE_LABELS = ("relevant", "irrelevant")
LABEL_CODES = {"relevant": 1, "irrelevant": 0}
LABEL_NAMES = {code: name for name, code in LABEL_CODES.items()}
DISAGREEMENT = -1
SECTIONS = ("annotations", "disagreements")

Label = Literal["relevant", "irrelevant"]


class FireRecord(pydantic.BaseModel):
    """One annotation, or one disagreement (``label`` None). Strict: ``"3"`` is not an int."""

    model_config = pydantic.ConfigDict(strict=True, frozen=True)

    annotator_ids: list[int]
    label: Label | None = None
    video_id: str
    query: str
    annotator_labels: list[Label]
    response_ids: list[int]
    queue_ids: list[int]
    models: list[str]
    dataset: str


@dataclass(frozen=True)
class RaggedInts:
    """A list of integer tuples packed as one ``int64`` array plus offsets (row ``i`` is
    ``values[offsets[i]:offsets[i+1]]``): 650K one-element tuples of Python ints would cost ~60 MB."""

    values: np.ndarray
    offsets: np.ndarray

    @classmethod
    def from_rows(cls, rows) -> "RaggedInts":
        """Pack rows of ints; OverflowError if one does not fit in 64 bits."""
        rows = list(rows)
        lengths = np.fromiter(map(len, rows), np.int64, count=len(rows))
        offsets = np.zeros(len(rows) + 1, np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return cls(np.fromiter(chain.from_iterable(rows), np.int64, count=int(offsets[-1])), offsets)

    @classmethod
    def concatenate(cls, parts: list["RaggedInts"]) -> "RaggedInts":
        """The rows of ``parts``, one after another."""
        ends = np.cumsum([0] + [len(part.values) for part in parts])
        offsets = [part.offsets[1:] + end for part, end in zip(parts, ends)]
        return cls(np.concatenate([np.empty(0, np.int64)] + [part.values for part in parts]), np.concatenate([np.zeros(1, np.int64), *offsets]))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, index: int) -> tuple[int, ...]:
        return tuple(self.values[self.offsets[index] : self.offsets[index + 1]].tolist())

    def take(self, indices: np.ndarray) -> "RaggedInts":
        starts, ends = self.offsets[indices], self.offsets[np.asarray(indices) + 1]
        lengths = ends - starts
        offsets = np.concatenate(([0], np.cumsum(lengths))).astype(np.int64)
        # position of every kept value: its row's start plus its rank inside the row
        within = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1], lengths)
        return RaggedInts(self.values[np.repeat(starts, lengths) + within], offsets)


@dataclass
class FireLabels:
    """FIRE records as columns; one entry per record, annotations first, then disagreements."""

    query: np.ndarray  # object array of caption texts (shared string objects)
    video_id: np.ndarray  # object array of video ids
    label: np.ndarray  # int8: 1 relevant, 0 irrelevant, -1 disagreement (no majority)
    dataset: np.ndarray  # object array of dataset names ("MSRVTT", "MSVD", ...)
    models: list[tuple[str, ...]]  # systems whose top-10 pooled the pair, one per label
    annotator_labels: list[tuple[int, ...]]  # per-annotator labels, 1 relevant / 0 irrelevant
    annotator_ids: list[tuple[int, ...]]
    metadata: dict  # top-level fields other than annotations / disagreements
    source: str  # file path
    response_ids: RaggedInts | None = None  # kept so write_fire reproduces the file; None → written as []
    queue_ids: RaggedInts | None = None

    def __post_init__(self):
        columns = {
            "query": self.query,
            "video_id": self.video_id,
            "label": self.label,
            "dataset": self.dataset,
            "models": self.models,
            "annotator_labels": self.annotator_labels,
            "annotator_ids": self.annotator_ids,
            "response_ids": self.response_ids,
            "queue_ids": self.queue_ids,
        }
        lengths = {name: len(column) for name, column in columns.items() if column is not None}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"FireLabels columns differ in length: {lengths}")

    def __len__(self) -> int:
        return len(self.label)

    def datasets(self) -> list[str]:
        """Dataset names that have at least one record, sorted."""
        return sorted(set(self.dataset.tolist()))

    def select(self, dataset: str) -> "FireLabels":
        """The records of one dataset; InputError if the file has none."""
        if dataset not in self.datasets():
            raise InputError(self.source, _no_dataset_message(dataset, self.datasets()))
        chosen = self.subset(self.dataset == dataset)
        chosen.metadata["datasets"] = [dataset]
        return chosen

    def subset(self, mask: np.ndarray) -> "FireLabels":
        """The records picked by a boolean mask or by indices, in that order."""
        mask = np.asarray(mask)
        if mask.dtype == bool:
            if mask.shape != (len(self),):
                raise ValueError(f"boolean mask has shape {mask.shape}, expected ({len(self)},)")
            indices = np.flatnonzero(mask)
        else:
            indices = mask.astype(np.intp, copy=False)
        pick = lambda rows: [rows[i] for i in indices.tolist()]  # noqa: E731
        return replace(
            self,
            query=self.query[indices],
            video_id=self.video_id[indices],
            label=self.label[indices],
            dataset=self.dataset[indices],
            models=pick(self.models),
            annotator_labels=pick(self.annotator_labels),
            annotator_ids=pick(self.annotator_ids),
            metadata=dict(self.metadata),
            response_ids=None if self.response_ids is None else self.response_ids.take(indices),
            queue_ids=None if self.queue_ids is None else self.queue_ids.take(indices),
        )

    def row(self, index: int) -> dict:
        """Record ``index`` as the FIRE JSON object (a disagreement has no ``label`` key)."""
        code = int(self.label[index])
        row = {
            "annotator_ids": list(self.annotator_ids[index]),
            "label": LABEL_NAMES.get(code),
            "video_id": self.video_id[index],
            "query": self.query[index],
            "annotator_labels": [LABEL_NAMES[v] for v in self.annotator_labels[index]],
            "response_ids": [] if self.response_ids is None else list(self.response_ids[index]),
            "queue_ids": [] if self.queue_ids is None else list(self.queue_ids[index]),
            "models": list(self.models[index]),
            "dataset": self.dataset[index],
        }
        if code == DISAGREEMENT:
            del row["label"]
        return row

    def records(self) -> Iterator[FireRecord]:
        """The rows back as validated :class:`FireRecord` objects."""
        for index in range(len(self)):
            yield FireRecord.model_validate(self.row(index))


def _no_dataset_message(dataset: str, present: list[str]) -> str:
    return f"has no labels for dataset {dataset!r} (datasets in the file: {', '.join(present) or 'none'})"


def _json_problem(error: Exception) -> str:
    """yajl's message is three lines (problem, nearby text, a caret); make it one."""
    text = str(error)
    if text.startswith(("b'", 'b"')):  # some yajl errors arrive as the repr of bytes
        text = text[2:-1].encode().decode("unicode_escape", errors="replace")
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    problem = lines[0] if lines else type(error).__name__
    if len(lines) > 1 and not lines[1].startswith("(right here)"):
        problem += f" near {lines[1]!r}"
    return problem


_SHORT = reprlib.Repr()  # a bad value as it shows in the error: a few levels deep (a value nested
_SHORT.maxlevel = 3  # 200,000 levels would exhaust repr's recursion) and a line long
_SHORT.maxstring = _SHORT.maxother = 80


def _validation_problem(error: pydantic.ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "record"
    if first["type"] == "missing":
        return f"is missing field {where!r}"
    got = first["input"]
    return f"field {where!r}: {first['msg']} (got {str(got) if isinstance(got, Decimal) else _SHORT.repr(got)})"


class _Parser:
    """One pass over the file's JSON events: yields ``(section, index, raw record)`` and fills
    ``metadata`` with the other top-level fields. Tracks where it is, so errors can say so."""

    def __init__(self, path: Path):
        self.path = path
        self.metadata: dict = {}
        self.section: str | None = None
        self.index = -1
        self.seen_sections: set[str] = set()

    def where(self) -> str:
        if self.section is None:
            return "at the top level"
        return f"in {self.section}[{self.index}]" if self.index >= 0 else f"at the start of {self.section}"

    def records(self) -> Iterator[tuple[str, int, dict]]:
        with open(self.path, "rb") as handle:
            # yajl2_c returns events with int()'s ValueError still pending when a number has over 4,300
            # digits; a for loop would let it out later, anywhere. Each event through next(), a call
            # CPython checks, raises it here, as a SystemError, before its buffer's events.
            events = iter(partial(next, ijson.basic_parse(handle)), None)
            try:
                yield from self._walk(events)
            except (ijson.JSONError, UnicodeDecodeError) as error:
                raise InputError(self.path, f"malformed JSON {self.where()}: {_json_problem(error)}") from None
            except SystemError as error:
                if not isinstance(error.__cause__, ValueError):
                    raise
                raise InputError(self.path, f"malformed JSON: {str(error.__cause__).split(';')[0]}") from None
        missing = [name for name in SECTIONS if name not in self.seen_sections]
        if missing:
            raise InputError(self.path, f"not a FIRE file: no {' or '.join(repr(m) for m in missing)} list at the top level")

    def _as_msgspec_reads(self, events) -> Iterator[tuple[str, object]]:
        """A metadata value's events with its numbers as msgspec decodes them: a float a float (ijson
        gives a Decimal), and one beyond a float's range an error. Records need neither: their fields
        take no floats, and msgspec skips the fields tvrbench does not read."""
        for event, value in events:
            if event == "number" and type(value) is Decimal:
                value = float(value)
                if not math.isfinite(value):
                    raise InputError(self.path, f"malformed JSON {self.where()}: a number beyond the range of a float")
            yield event, value

    def _walk(self, events) -> Iterator[tuple[str, int, dict]]:
        event, _ = next(events)
        if event != "start_map":
            raise InputError(self.path, "not a FIRE file: expected a JSON object with 'annotations' and 'disagreements'")
        top_key = None
        for event, value in events:
            if event == "map_key":
                top_key = value
            elif event == "end_map":
                for _ in events:  # yajl raises on anything but whitespace after the object, as msgspec does
                    pass
                return
            elif top_key in SECTIONS:
                if event != "start_array":
                    raise InputError(self.path, f"'{top_key}' must be a list of records")
                self.section, self.index = top_key, -1
                self.seen_sections.add(top_key)
                yield from self._section(events)
                self.section = None
            else:
                metadata_events = self._as_msgspec_reads(chain([(event, value)], events))
                self.metadata[top_key] = _build(metadata_events, *next(metadata_events))

    def _section(self, events) -> Iterator[tuple[str, int, dict]]:
        """Events of one records list, from after its ``[`` to its ``]``. The hot loop: records
        are flat objects of scalars and lists of scalars, so those take the short branches."""
        record = None  # the record being built
        items = None  # the list being filled inside it
        key = None
        for event, value in events:
            if items is not None:
                if event == "end_array":
                    items = None
                else:
                    items.append(_build(events, event, value) if event in OPENERS else value)
            elif record is not None:
                if event == "map_key":
                    key = value
                elif event == "end_map":
                    yield self.section, self.index, record
                    record = None
                elif event == "start_array":
                    items = record[key] = []
                else:
                    record[key] = _build(events, event, value) if event == "start_map" else value
            elif event == "start_map":
                record = {}
                self.index += 1
            elif event == "end_array":
                return
            else:
                found = "a list" if event == "start_array" else repr(value)
                raise InputError(self.path, f"{self.section}[{self.index + 1}] is {found}, expected a record object")


OPENERS = ("start_map", "start_array")
CLOSERS = ("end_map", "end_array")


def _build(events, event: str, value):
    """The JSON value starting with ``(event, value)``: a scalar, or a whole nested container."""
    if event not in OPENERS:
        return value
    builder = ObjectBuilder()
    builder.event(event, value)
    depth = 1
    for event, value in events:
        builder.event(event, value)
        depth += (event in OPENERS) - (event in CLOSERS)
        if depth == 0:
            return builder.value
    raise ijson.IncompleteJSONError("premature EOF")


def _check_readable(path: Path) -> None:
    start = require_file(path, "a FIRE JSON file")
    if start.startswith(PICKLE_MAGIC):
        raise InputError(path, "looks like a pickle, not FIRE JSON; tvrbench never unpickles input")
    if not start.strip():
        raise InputError(path, "empty file")


def _validated(path: Path, section: str, index: int, raw: dict) -> FireRecord:
    where = f"{section}[{index}]"
    if section == "annotations" and raw.get("label") is None:
        problem = "has label null" if "label" in raw else "is missing field 'label'"
        raise InputError(path, f"{where} {problem}; annotations need one (pairs without a majority are disagreements)")
    if section == "disagreements" and raw.get("label") is not None:
        raise InputError(path, f"{where} has a label, but disagreements are the pairs without a majority label")
    try:
        record = FireRecord.model_validate(raw)
    except pydantic.ValidationError as error:
        raise InputError(path, f"{where} {_validation_problem(error)}") from None
    if not record.annotator_labels:
        raise InputError(path, f"{where} has no annotator_labels")
    if not all(INT64_MIN <= value <= INT64_MAX for value in chain(record.response_ids, record.queue_ids)):
        raise InputError(path, f"{where}: a response or queue id does not fit in 64 bits")
    return record


def iter_fire(path: str | os.PathLike) -> Iterator[FireRecord]:
    """Validated records one at a time (annotations, then disagreements), in file order."""
    path = Path(path)
    _check_readable(path)
    for section, index, raw in _Parser(path).records():
        yield _validated(path, section, index, raw)


def read_fire(path: str | os.PathLike, dataset: str | None = None, cache: bool = True) -> FireLabels:
    """Read a FIRE file into :class:`FireLabels`, keeping only ``dataset``'s records if given.

    With ``cache`` the columns come from (and go to) the cache when the file's digest has been read
    before; ``tvrbench fire cache --clear`` empties it.
    """
    path = Path(path)
    _check_readable(path)
    key = fire_cache.key(path) if cache else None
    labels = _cached(key, path) if key else None
    if labels is None:
        labels = _parse(path)
        if key:
            fire_cache.store(key, labels)
    return labels if dataset is None else labels.select(dataset)


def _cached(key: str, path: Path) -> FireLabels | None:
    """The labels kept under ``key``, or None when there is no entry or a damaged one (columns of different lengths)."""
    kept = fire_cache.load(key)
    if kept is None:
        return None
    ids = {name: RaggedInts(*kept.pop(name)) for name in ("response_ids", "queue_ids")}
    try:
        return FireLabels(**kept, **ids, source=str(path))
    except ValueError:
        return None


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
Int64 = Annotated[int, msgspec.Meta(ge=INT64_MIN, le=INT64_MAX)]


class _Pair(msgspec.Struct, gc=False):
    """A record as msgspec decodes it: the checks of :func:`_validated`, as types."""

    annotator_ids: tuple[int, ...]
    video_id: str
    query: str
    annotator_labels: Annotated[tuple[Label, ...], msgspec.Meta(min_length=1)]
    response_ids: tuple[Int64, ...]
    queue_ids: tuple[Int64, ...]
    models: tuple[str, ...]
    dataset: str


class _Annotation(_Pair, gc=False):
    label: Label


class _Disagreement(_Pair, gc=False):
    label: None = None


_TOP = msgspec.json.Decoder(dict[str, msgspec.Raw])
_RAW_LIST = msgspec.json.Decoder(list[msgspec.Raw])
_SECTIONS = {"annotations": msgspec.json.Decoder(list[_Annotation]), "disagreements": msgspec.json.Decoder(list[_Disagreement])}
_LABEL_OR_NONE = {**LABEL_CODES, None: DISAGREEMENT}
BATCH = 1 << 14  # records decoded at once: the structs of one batch live only until its columns are taken
SHARED = ("query", "video_id", "dataset", "models", "annotator_labels", "annotator_ids")


class _Columns:
    """The columns of :class:`FireLabels`, filled a batch of records at a time (records with the
    fields of :class:`_Pair`, lists as tuples)."""

    def __init__(self):
        self.share = {}.setdefault  # share(x, x): one object per distinct string or tuple, shared by every row
        self.shared = {name: [] for name in SHARED}
        self.label, self.response_ids, self.queue_ids = [], [], []

    def add(self, records: list[_Pair]) -> None:
        for column, values in self.shared.items():
            batch = list(map(attrgetter(column), records))
            values.extend(map(self.share, batch, batch))
        self.label.append(np.fromiter(map(_LABEL_OR_NONE.__getitem__, map(attrgetter("label"), records)), np.int8, count=len(records)))
        self.response_ids.append(RaggedInts.from_rows(list(map(attrgetter("response_ids"), records))))
        self.queue_ids.append(RaggedInts.from_rows(list(map(attrgetter("queue_ids"), records))))

    def labels(self, metadata: dict, path: Path) -> FireLabels:
        codes = {names: tuple(LABEL_CODES[v] for v in names) for names in set(self.shared["annotator_labels"])}
        return FireLabels(
            query=np.array(self.shared["query"], dtype=object),
            video_id=np.array(self.shared["video_id"], dtype=object),
            label=np.concatenate([np.empty(0, np.int8), *self.label]),
            dataset=np.array(self.shared["dataset"], dtype=object),
            models=self.shared["models"],
            annotator_labels=[codes[names] for names in self.shared["annotator_labels"]],
            annotator_ids=self.shared["annotator_ids"],
            metadata=metadata,
            source=str(path),
            response_ids=RaggedInts.concatenate(self.response_ids),
            queue_ids=RaggedInts.concatenate(self.queue_ids),
        )


def _parse(path: Path) -> FireLabels:
    """Decode the file with msgspec; where it refuses, the streaming reader names the first problem,
    or reads the file if the refusal was only nesting deeper than msgspec follows."""
    try:
        return _decode(path)
    except RecursionError:
        return _read_streaming(path)
    except (msgspec.DecodeError, UnicodeDecodeError, KeyError) as error:
        for _ in iter_fire(path):  # raises InputError at the first bad record, as it always did
            pass
        raise InputError(path, f"malformed JSON: {error}") from None  # a lone surrogate escape: yajl garbles what msgspec refuses


def _decode(path: Path) -> FireLabels:
    """The fast path: msgspec decodes each batch of records into typed structs, validated as it goes."""
    data = path.read_bytes()
    _require_utf8(data)
    top = _TOP.decode(data)
    columns = _Columns()
    for name in SECTIONS:
        raws = _RAW_LIST.decode(top[name])  # each record's bytes, not yet decoded
        for start in track(range(0, len(raws), BATCH), f"reading {path.name} {name}"):
            columns.add(_SECTIONS[name].decode(b"[" + b",".join(raws[start : start + BATCH]) + b"]"))
    metadata = {key: msgspec.json.decode(value) for key, value in top.items() if key not in SECTIONS}
    return columns.labels(metadata, path)


UTF8_CHUNK = 1 << 24  # bytes checked at once, so that a non-ASCII file is never one str in memory


def _require_utf8(data: bytes) -> None:
    """UnicodeDecodeError unless ``data`` is UTF-8 throughout: msgspec checks the strings it decodes,
    not the fields it skips. An ASCII file (``json.dump``'s default) costs one quick scan."""
    if data.isascii():
        return
    view, start = memoryview(data), 0
    while start < len(data):
        end = start + UTF8_CHUNK
        start += codecs.utf_8_decode(view[start:end], "strict", end >= len(data))[1]  # a split character waits for the next chunk


def _read_streaming(path: Path) -> FireLabels:
    """The streaming reader's labels, batch by batch into the same columns as the fast path."""
    parser = _Parser(path)
    records = (_validated(path, *item) for item in track(parser.records(), f"reading {path.name}"))
    columns = _Columns()
    while batch := [_as_struct(record) for record in islice(records, BATCH)]:
        columns.add(batch)
    return columns.labels(parser.metadata, path)


def _as_struct(record: FireRecord) -> _Pair:
    """A validated record as msgspec decodes one: tuples where pydantic has lists."""
    return (_Disagreement if record.label is None else _Annotation)(
        annotator_ids=tuple(record.annotator_ids),
        video_id=record.video_id,
        query=record.query,
        annotator_labels=tuple(record.annotator_labels),
        response_ids=tuple(record.response_ids),
        queue_ids=tuple(record.queue_ids),
        models=tuple(record.models),
        dataset=record.dataset,
        label=record.label,
    )


def write_fire(path: str | os.PathLike, labels: FireLabels, first: dict | None = None) -> None:
    """Write ``labels`` in the FIRE schema, atomically and record by record: labelled rows under
    ``annotations``, label -1 under ``disagreements`` (no ``label`` key), then the metadata. ``first``:
    fields written before them, in place of the metadata's own (the mark of the command writing the file)."""
    first = first or {}
    sections = {"annotations": np.flatnonzero(labels.label != DISAGREEMENT), "disagreements": np.flatnonzero(labels.label == DISAGREEMENT)}
    with atomic_write(path) as out:
        out.write("{" + "".join(f"{json.dumps(key)}: {json.dumps(value)}, " for key, value in first.items()))
        for position, (name, indices) in enumerate(sections.items()):
            out.write(f'{", " if position else ""}"{name}": [')
            for count, index in enumerate(indices.tolist()):
                out.write(", " if count else "")
                out.write(json.dumps(labels.row(index)))
            out.write("]")
        for key, value in labels.metadata.items():
            if key not in SECTIONS and key not in first:
                out.write(f", {json.dumps(key)}: {json.dumps(value)}")
        out.write("}\n")
