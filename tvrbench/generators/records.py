"""Contrast records and their JSONL files, written as they are made so a long run can resume.

One record per contrast caption (SPEC §5)::

    {"caption_id", "video_id", "original", "contrast", "kind",
     "edit": [{"from", "to", "tokens": [start, end], "chars": [start, end], "contrast_chars": [start, end]}],
     "filters": {name: {"passed": true, "score": float | null, ...}},
     "details": {...}}

``tokens`` are spaCy token indices in the original (end exclusive), ``chars`` the character span in
the original and ``contrast_chars`` the span of the new words in the contrast. The signature and
the run's counts go to a sidecar ``X.jsonl.json``, so every line stays one record.

While a run is going, :class:`ResumableJsonl` appends each finished caption (with its record, or
the reason it has none) to ``X.jsonl.partial``, headed by the run's signature. A rerun with the same
signature skips the captions already there; at the end the records are written to ``X.jsonl`` in
caption order, atomically, and the partial file is removed. Every choice is seeded per caption, so
an interrupted and resumed run writes the same file as an uninterrupted one.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write, write_json
from tvrbench.io.files import jsonl_objects, read_text_file
from tvrbench.io.sidecars import optional_number, sidecar_path
from tvrbench.numerics import CONTRACT, regimes_in
from tvrbench.signature import Signature, diff_signatures

REQUIRED_FIELDS = ("caption_id", "video_id", "original", "contrast", "kind")


@dataclass(frozen=True)
class Replacement:
    """Words ``original`` at tokens ``[token_start, token_end)`` / chars ``[char_start, char_end)`` become ``replacement``."""

    token_start: int
    token_end: int
    char_start: int
    char_end: int
    original: str
    replacement: str


@dataclass
class ContrastRecord:
    caption_id: str
    video_id: str
    original: str
    contrast: str
    kind: str
    edit: list[dict] = field(default_factory=list)
    filters: dict[str, dict] = field(default_factory=dict)
    details: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)

    def mc_facts(self) -> dict:
        """What ``mc score``'s subsets need of the record (SPEC Tables 4-5): an antonym swap, the
        sentence cosine the meaning filter measured, an ID contrast's rarer original name. ``mc
        build`` keeps them in the split's sidecar, so scoring needs neither the records nor a
        sentence model."""
        meaning = self.filters.get("meaning-changed") or {}
        return {
            "antonym": bool(meaning.get("antonym")),
            **({"sentence_cosine": meaning["sentence_cosine"]} if meaning.get("sentence_cosine") is not None else {}),
            **({"rare_original": bool(self.details["rare_original"])} if "rare_original" in self.details else {}),
        }

    @classmethod
    def from_json(cls, data: dict, source: str, line: int) -> "ContrastRecord":
        missing = [name for name in REQUIRED_FIELDS if not isinstance(data.get(name), str)]
        if missing:
            raise InputError(source, f"line {line}: missing or non-text field(s) {', '.join(missing)}")
        edit, filters, details = (data.get(name) or empty for name, empty in (("edit", []), ("filters", {}), ("details", {})))
        if not (isinstance(edit, list) and all(isinstance(e, dict) for e in edit)):
            raise InputError(source, f"line {line}: field 'edit' must be a list of objects")
        if not (isinstance(filters, dict) and isinstance(details, dict)):
            raise InputError(source, f"line {line}: fields 'filters' and 'details' must be objects")
        for name, check in filters.items():
            if not isinstance(check, dict):
                raise InputError(source, f"line {line}: filters.{name} must be an object")
            if not optional_number(check.get("sentence_cosine")):
                raise InputError(source, f"line {line}: filters.{name}.sentence_cosine must be a number")
        return cls(**{name: data[name] for name in REQUIRED_FIELDS}, edit=list(edit), filters=dict(filters), details=dict(details))


def replaced_text(text: str, replacements: Iterable[Replacement]) -> str:
    """``text`` with non-overlapping ``replacements`` applied."""
    pieces, cursor = [], 0
    for rep in sorted(replacements, key=lambda r: r.char_start):
        if rep.char_start < cursor:
            raise ValueError(f"overlapping replacements in {text!r}")
        pieces += [text[cursor : rep.char_start], rep.replacement]
        cursor = rep.char_end
    pieces.append(text[cursor:])
    return "".join(pieces)


def apply_replacements(text: str, replacements: Iterable[Replacement]) -> tuple[str, list[dict]]:
    """The contrast text and its ``edit`` list; replacements must not overlap."""
    ordered = sorted(replacements, key=lambda r: r.char_start)
    edit, shift = [], 0
    for rep in ordered:
        start = rep.char_start + shift
        edit.append(
            {
                "from": rep.original,
                "to": rep.replacement,
                "tokens": [rep.token_start, rep.token_end],
                "chars": [rep.char_start, rep.char_end],
                "contrast_chars": [start, start + len(rep.replacement)],
            }
        )
        shift += len(rep.replacement) - (rep.char_end - rep.char_start)
    return replaced_text(text, ordered), edit


def record_line(record: ContrastRecord) -> str:
    """A record as its line of a contrast JSONL file."""
    return json.dumps(record.to_json(), ensure_ascii=False) + "\n"


def read_contrast_records(path: str | Path) -> list[ContrastRecord]:
    """Records of a contrast JSONL file; InputError naming the line on anything malformed."""
    path = Path(path)
    records = [ContrastRecord.from_json(data, str(path), number) for number, data in jsonl_objects(path, read_text_file(path))]
    if not records:
        raise InputError(path, "no contrast records")
    return records


def _json_line(line: str):
    try:
        return json.loads(line)
    except (json.JSONDecodeError, RecursionError):
        return None


def _partial_entry(entry, source: str) -> bool:
    """A line of a partial file as :meth:`ResumableJsonl.append` wrote it (its record well formed)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("caption_id"), str):
        return False
    record = entry.get("record")
    try:
        if record is not None and ContrastRecord.from_json(record, source, 0).to_json() != record:
            return False
    except (InputError, AttributeError):
        return False
    return isinstance(entry.get("reason"), (str, type(None))) and isinstance(entry.get("rejected"), (dict, type(None)))


class ResumableJsonl:
    """Append finished captions to ``OUT.partial``; :meth:`finish` writes ``OUT`` atomically.

    Each partial line is ``{"caption_id": ..., "record": {...} | null, "reason": str | null}``; the
    first line is ``{"signature": ...}``. A partial file from a run with another signature (other
    settings, or other weights: a model's signature pins them) is discarded with one line saying which
    fields differ, so records of two models never mix; a torn last line (the run was killed mid-write) is dropped.
    """

    def __init__(self, path: str | Path, signature: str):
        self.path = Path(path)
        self.partial = self.path.with_name(self.path.name + ".partial")
        self.signature = signature
        self.done: dict[str, dict] = self._load()

    def _load(self) -> dict[str, dict]:
        if not self.partial.is_file():
            return {}
        lines = self.partial.read_bytes().decode("utf-8", errors="replace").split("\n")
        header = _json_line(lines[0])
        if not isinstance(header, dict) or header.get("signature") != self.signature:
            if isinstance(header, dict) and isinstance(header.get("signature"), str):
                self._check_regime(header["signature"])
                print(f"not resuming {self.partial}: its records were made with another {self._changed(header['signature'])}; starting over",
                      file=sys.stderr)  # fmt: skip
            return {}
        done = {}
        for line in lines[1:]:
            entry = _json_line(line)
            if not _partial_entry(entry, str(self.partial)):
                break  # torn tail of an interrupted write (or damage): everything before it is complete
            done[entry["caption_id"]] = entry
        return done

    def _check_regime(self, other: str) -> None:
        """A partial file whose scores were made under another numeric regime is refused: its records
        and this run's would not be the same bytes, nor could a rerun tell them apart."""
        theirs, ours = regimes_in(other), regimes_in(self.signature)
        if theirs != ours:
            made, now = (", ".join(sorted(names)) or CONTRACT for names in (theirs, ours))
            raise InputError(self.partial, f"its scores were made under {made}, this run's under {now}; resume it there, or remove it to start over")

    def _changed(self, other: str) -> str:
        """The signature fields ``other`` differs in (``signature`` when it is not one)."""
        try:
            return ", ".join(change.key for change in diff_signatures(Signature.parse(other), Signature.parse(self.signature)))
        except ValueError:
            return "signature"

    def __enter__(self) -> "ResumableJsonl":
        self.partial.parent.mkdir(parents=True, exist_ok=True)
        # Rewrite the partial file with only its complete lines, so appends start on a clean line.
        with atomic_write(self.partial) as out:
            out.write(json.dumps({"signature": self.signature}) + "\n")
            for entry in self.done.values():
                out.write(json.dumps(entry) + "\n")
        self._handle = open(self.partial, "a", encoding="utf-8")
        return self

    def __exit__(self, *exc) -> None:
        self._handle.close()

    def append(self, entries: Iterable[dict]) -> None:
        """Record finished captions and force them to disk."""
        for entry in entries:
            self.done[entry["caption_id"]] = entry
            self._handle.write(json.dumps(entry) + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def finish(self, caption_order: list[str], sidecar: dict) -> list[ContrastRecord]:
        """Write the records in caption order and the sidecar; remove the partial file."""
        records = [ContrastRecord(**self.done[caption_id]["record"]) for caption_id in caption_order if self.done.get(caption_id, {}).get("record")]
        # The previous output goes first and the sidecar is written before the records move into
        # place: a kill in between leaves no output, never records beside an old sidecar or none.
        self.path.unlink(missing_ok=True)
        write_json(sidecar_path(self.path), sidecar)
        with atomic_write(self.path) as out:
            for record in records:
                out.write(record_line(record))
        self._handle.close()
        self.partial.unlink(missing_ok=True)
        return records
