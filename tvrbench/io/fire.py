"""FIRE relevance labels (Rodriguez et al.): a streaming reader, a columnar table and a writer.

A FIRE file is one JSON object: ``annotations`` (pairs whose labels have a majority), ``disagreements``
(pairs without one, so no ``label``) and a few metadata fields (``source_ds``, ``created_ds``,
``creator``, ``license``, ``datasets``, ...). A record keys a pair by caption *text* and video id,
because MSVD has no caption ids. Real files hold 650K+ records in up to 200 MB, so the reader
parses the file once, event by event (ijson, C backend when installed), validates each record
with :class:`FireRecord` and stores it in compact columns: repeated strings and tuples are shared,
labels are ``int8``, response and queue ids packed ``int64`` arrays. Loading the 200 MB release
this way takes a small fraction of ``json.load``'s memory (benchmarks/bench_fire_load.py).

In the released data the per-label lists (``annotator_ids``, ``annotator_labels``,
``response_ids``, ``queue_ids``, ``models``) have one entry per individual label, so ``models``
may repeat a name (a pair pooled twice by one model's queue); read it as a set for pooling.
"""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterator
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Literal

import ijson
import numpy as np
import pydantic
from ijson.common import ObjectBuilder

from tvrbench.errors import InputError
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
        packer = _IntPacker()
        for row in rows:
            packer.add(row)
        return packer.packed()

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


class _IntPacker:
    """Builds a :class:`RaggedInts` row by row without keeping Python int objects alive."""

    def __init__(self):
        self.values, self.offsets = array("q"), array("q", [0])

    def add(self, row) -> None:
        self.values.extend(row)  # OverflowError beyond 64 bits
        self.offsets.append(len(self.values))

    def packed(self) -> RaggedInts:
        return RaggedInts(np.frombuffer(self.values, np.int64).copy(), np.frombuffer(self.offsets, np.int64).copy())


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


def _validation_problem(error: pydantic.ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(str(part) for part in first["loc"]) or "record"
    if first["type"] == "missing":
        return f"is missing field {where!r}"
    got = first["input"]
    return f"field {where!r}: {first['msg']} (got {str(got) if isinstance(got, Decimal) else repr(got)})"


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
            try:
                yield from self._walk(ijson.basic_parse(handle))
            except (ijson.JSONError, UnicodeDecodeError) as error:
                raise InputError(self.path, f"malformed JSON {self.where()}: {_json_problem(error)}") from None
        missing = [name for name in SECTIONS if name not in self.seen_sections]
        if missing:
            raise InputError(self.path, f"not a FIRE file: no {' or '.join(repr(m) for m in missing)} list at the top level")

    def _walk(self, events) -> Iterator[tuple[str, int, dict]]:
        event, _ = next(events)
        if event != "start_map":
            raise InputError(self.path, "not a FIRE file: expected a JSON object with 'annotations' and 'disagreements'")
        top_key = None
        for event, value in events:
            if event == "map_key":
                top_key = value
            elif event == "end_map":
                return
            elif top_key in SECTIONS:
                if event != "start_array":
                    raise InputError(self.path, f"'{top_key}' must be a list of records")
                self.section, self.index = top_key, -1
                self.seen_sections.add(top_key)
                yield from self._section(events)
                self.section = None
            else:
                self.metadata[top_key] = _build(events, event, value)

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
    return record


def iter_fire(path: str | os.PathLike) -> Iterator[FireRecord]:
    """Validated records one at a time (annotations, then disagreements), in file order."""
    path = Path(path)
    _check_readable(path)
    for section, index, raw in _Parser(path).records():
        yield _validated(path, section, index, raw)


def read_fire(path: str | os.PathLike, dataset: str | None = None) -> FireLabels:
    """Read a FIRE file into :class:`FireLabels`, keeping only ``dataset``'s records if given."""
    path = Path(path)
    _check_readable(path)
    parser = _Parser(path)
    share = {}.setdefault  # share(x, x): one object per distinct string or tuple, shared by every row
    query, video_id, dataset_column, models, annotator_labels, annotator_ids = [], [], [], [], [], []
    label = array("b")
    response_ids, queue_ids = _IntPacker(), _IntPacker()
    present: set[str] = set()
    for section, index, raw in track(parser.records(), f"reading {path.name}"):
        record = _validated(path, section, index, raw)
        present.add(record.dataset)
        if dataset is not None and record.dataset != dataset:
            continue
        query.append(share(record.query, record.query))
        video_id.append(share(record.video_id, record.video_id))
        dataset_column.append(share(record.dataset, record.dataset))
        label.append(DISAGREEMENT if record.label is None else LABEL_CODES[record.label])
        pooled, votes, annotators = (tuple(record.models), tuple(LABEL_CODES[v] for v in record.annotator_labels), tuple(record.annotator_ids))
        models.append(share(pooled, pooled))
        annotator_labels.append(share(votes, votes))
        annotator_ids.append(share(annotators, annotators))
        try:
            response_ids.add(record.response_ids)
            queue_ids.add(record.queue_ids)
        except OverflowError:
            raise InputError(path, f"{section}[{index}]: a response or queue id does not fit in 64 bits") from None
    if dataset is not None and dataset not in present:
        raise InputError(path, _no_dataset_message(dataset, sorted(present)))
    metadata = dict(parser.metadata)
    if dataset is not None:
        metadata["datasets"] = [dataset]
    return FireLabels(
        query=np.array(query, dtype=object),
        video_id=np.array(video_id, dtype=object),
        label=np.frombuffer(label, np.int8).copy(),
        dataset=np.array(dataset_column, dtype=object),
        models=models,
        annotator_labels=annotator_labels,
        annotator_ids=annotator_ids,
        metadata=metadata,
        source=str(path),
        response_ids=response_ids.packed(),
        queue_ids=queue_ids.packed(),
    )


def write_fire(path: str | os.PathLike, labels: FireLabels) -> None:
    """Write ``labels`` in the FIRE schema, atomically and record by record: labelled rows under
    ``annotations``, label -1 under ``disagreements`` (no ``label`` key), then the metadata."""
    sections = {"annotations": np.flatnonzero(labels.label != DISAGREEMENT), "disagreements": np.flatnonzero(labels.label == DISAGREEMENT)}
    with atomic_write(path) as out:
        out.write("{")
        for position, (name, indices) in enumerate(sections.items()):
            out.write(f'{", " if position else ""}"{name}": [')
            for count, index in enumerate(indices.tolist()):
                out.write(", " if count else "")
                out.write(json.dumps(labels.row(index)))
            out.write("]")
        for key, value in labels.metadata.items():
            if key not in SECTIONS:
                out.write(f", {json.dumps(key)}: {json.dumps(value)}")
        out.write("}\n")
