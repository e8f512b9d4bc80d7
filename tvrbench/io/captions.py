"""Caption (query) files: generic CSV / TSV / JSONL and the named dataset formats of SPEC §1.

Every reader returns :class:`Captions`, parallel lists of caption id, text and video id in file
order. Row ``i`` of a score matrix is caption ``i``.

Formats (``read_captions(path, format=...)``; ``auto`` decides by extension and header):

- ``generic``: CSV / TSV / JSONL with ``caption_id, text, video_id``; other columns go to ``extra``.
- ``jsfusion``: MSR-VTT's ``MSRVTT_JSFUSION_test.csv`` (``key, vid_key, video_id, sentence``) as is.
- ``msrvtt-json``: MSR-VTT's ``MSRVTT_data.json`` (``sentences[]`` with ``caption, video_id, sen_id``).
- ``msvd``: MSVD's ``AllVideoDescriptions.txt`` layout, one ``VIDEO_ID caption words…`` per line
  (``#`` lines skipped), or the ``raw-captions.pkl`` of CLIP4Clip-style loaders (video id → token
  lists, joined with single spaces) only with ``trust_pickle=True``. MSVD has no caption ids, so
  they are made as ``VIDEO_ID#N``, N counting from 0 per video in file order.
- ``lsmdc``: LSMDC-IDs style CSV / TSV (Park et al. 2020, 2022): ``caption_id, text, video_id,
  movie, names`` and optionally ``genders``. ``names`` lists the character names of the caption in
  order of appearance, ``;``-separated (each must occur in the text); ``genders`` is parallel
  (``M`` / ``F``, also ``male`` / ``female``). Kept in ``extra`` as normalized ``;``-joined strings.

``video_list`` (e.g. MSVD's ``test_list.txt``, one id per line) keeps only those videos' captions.
"""

from __future__ import annotations

import csv
import io
import json
import pickle
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.io.files import PICKLE_MAGIC, jsonl_objects, read_text_file, require_file

GENERIC_COLUMNS = ("caption_id", "text", "video_id")
JSFUSION_COLUMNS = ("key", "vid_key", "video_id", "sentence")
LSMDC_COLUMNS = (*GENERIC_COLUMNS, "movie", "names")
FORMATS = ("auto", "generic", "jsfusion", "msrvtt-json", "msvd", "lsmdc")
GENDERS = {"m": "M", "male": "M", "f": "F", "female": "F"}


@dataclass(frozen=True)
class Captions:
    """Captions in file order; ``extra`` holds optional per-caption columns (e.g. LSMDC names)."""

    caption_ids: list[str]
    texts: list[str]
    video_ids: list[str]
    source: str = "<memory>"
    extra: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self):
        if not (len(self.caption_ids) == len(self.texts) == len(self.video_ids)):
            raise InputError(self.source, "caption ids, texts and video ids differ in length")
        if not self.caption_ids:
            raise InputError(self.source, "no captions")
        if len(set(self.caption_ids)) < len(self.caption_ids):
            counts = Counter(self.caption_ids)
            duplicate = next(caption_id for caption_id in self.caption_ids if counts[caption_id] > 1)
            raise InputError(self.source, f"duplicate caption id {duplicate!r}")

    def __len__(self) -> int:
        return len(self.caption_ids)

    def distinct_videos(self) -> list[str]:
        """Video ids in order of first appearance."""
        return list(dict.fromkeys(self.video_ids))

    def subset(self, indices: Sequence[int]) -> "Captions":
        pick = lambda values: [values[i] for i in indices]  # noqa: E731
        return Captions(
            pick(self.caption_ids), pick(self.texts), pick(self.video_ids), self.source, {name: pick(values) for name, values in self.extra.items()}
        )


def _from_columns(path: Path, columns: dict[str, list], id_col: str, text_col: str, video_col: str, lines: list[int]) -> Captions:
    """Captions from column lists (``None`` = no value); ``lines[i]`` is row i's line, for messages.
    Checked and stripped a column at a time (list comprehensions), not with Python code per row."""
    n_rows = len(lines)
    required = [columns.get(name, [None] * n_rows) for name in (id_col, text_col, video_col)]
    missing = [column.index(None) for column in required if None in column]
    if missing:
        raise InputError(path, f"line {lines[min(missing)]}: missing a value for {id_col}, {text_col} or {video_col}")
    ids, texts, videos = ([str(value).strip() for value in column] for column in required)
    empty = [(column.index(""), name) for column, name in ((ids, id_col), (videos, video_col)) if "" in column]
    if empty:
        row, name = min(empty)
        raise InputError(path, f"line {lines[row]}: empty {name}")
    extra = {
        name: ["" if value is None else str(value) for value in values]
        for name, values in columns.items()
        if name not in (id_col, text_col, video_col)
    }
    return Captions(ids, texts, videos, str(path), extra)


def _records_to_columns(records: list[dict]) -> dict[str, list]:
    """JSON records as columns: the first record's keys, plus the required ones."""
    names = dict.fromkeys([*(records[0] if records else ()), *GENERIC_COLUMNS])
    return {name: [record.get(name) for record in records] for name in names}


def _read_delimited(path: Path, text: str, delimiter: str, format: str) -> Captions:
    """CSV / TSV through the ``csv`` module on the whole text, so a quoted field may hold newlines."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = next(reader, [])
    rows, lines = [], []
    for row in reader:
        if row:  # blank lines carry no caption
            rows.append(row)
            lines.append(reader.line_num)
    if not rows:
        raise InputError(path, "header but no captions")
    required = {"lsmdc": LSMDC_COLUMNS, "generic": GENERIC_COLUMNS, "jsfusion": JSFUSION_COLUMNS}
    if format == "auto":
        format = next((name for name, columns in required.items() if set(columns) <= set(header)), "")
        if not format:
            raise InputError(path, f"columns {', '.join(header)} are neither caption_id,text,video_id nor the JSFUSION key,vid_key,video_id,sentence")
    missing = [column for column in required[format] if column not in header]
    if missing:
        raise InputError(path, f"{format} captions need the columns {','.join(required[format])}; missing {', '.join(missing)}")
    width = len(header)
    if any(len(row) != width for row in rows):  # short rows lack values (None); extra fields are dropped
        rows = [row[:width] + [None] * (width - len(row)) for row in rows]
    columns = dict(zip(header, map(list, zip(*rows))))
    if format == "jsfusion":  # MSR-VTT's MSRVTT_JSFUSION_test.csv, read as is
        return _from_columns(path, columns, "key", "sentence", "video_id", lines)
    captions = _from_columns(path, columns, *GENERIC_COLUMNS, lines)
    return _with_character_names(path, captions) if format == "lsmdc" else captions


def _with_character_names(path: Path, captions: Captions) -> Captions:
    """Check and normalize LSMDC's ``movie``, ``names`` and optional ``genders`` columns."""
    extra = dict(captions.extra)
    names_column, genders_column = [], []
    for row, (text, movie, names) in enumerate(zip(captions.texts, extra["movie"], extra["names"])):
        line = row + 2
        if not movie.strip():
            raise InputError(path, f"line {line}: empty movie")
        names = [name.strip() for name in names.split(";") if name.strip()]
        for name in names:
            if not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text):
                raise InputError(path, f"line {line}: character name {name!r} does not occur in the text")
        names_column.append(";".join(names))
        if "genders" in extra:
            genders = [gender.strip().lower() for gender in extra["genders"][row].split(";") if gender.strip()]
            if len(genders) != len(names) or any(gender not in GENDERS for gender in genders):
                raise InputError(path, f"line {line}: genders {extra['genders'][row]!r} must give M or F for each of the {len(names)} names")
            genders_column.append(";".join(GENDERS[gender] for gender in genders))
    extra["movie"] = [movie.strip() for movie in extra["movie"]]
    extra["names"] = names_column
    if "genders" in extra:
        extra["genders"] = genders_column
    return Captions(captions.caption_ids, captions.texts, captions.video_ids, captions.source, extra)


def _msvd_captions(path: Path, pairs: Iterable[tuple[str, str]]) -> Captions:
    """MSVD has no caption ids: caption N (from 0) of video V gets ``V#N``, in file order."""
    ids, texts, videos = [], [], []
    seen: Counter[str] = Counter()
    for video_id, text in pairs:
        ids.append(f"{video_id}#{seen[video_id]}")
        seen[video_id] += 1
        texts.append(text)
        videos.append(video_id)
    return Captions(ids, texts, videos, str(path))


def _read_msvd_text(path: Path, text: str) -> Captions:
    """``AllVideoDescriptions.txt`` layout: ``VIDEO_ID caption words…``; blank and ``#`` lines skipped."""
    pairs = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(maxsplit=1)
        if len(parts) < 2:
            raise InputError(path, f"line {number}: expected 'VIDEO_ID caption words', found only {parts[0]!r}")
        pairs.append((parts[0], parts[1].strip()))
    return _msvd_captions(path, pairs)


class _PlainDataUnpickler(pickle.Unpickler):
    """Unpickles dicts, lists and strings, which need no class, and refuses every class or function
    a pickle names: loading one is how a pickle runs code."""

    def find_class(self, module: str, name: str):
        raise pickle.UnpicklingError(f"it names {module}.{name}; only plain dicts, lists and strings are read")


def _read_msvd_pickle(path: Path, trust_pickle: bool) -> Captions:
    """CLIP4Clip-style ``raw-captions.pkl``: ``{video_id: [[token, ...], ...]}``. Unpickling can run
    arbitrary code, so only for a file the user trusts and says so, and then with an unpickler that
    loads no class or function at all."""
    if not trust_pickle:
        raise InputError(
            path,
            "is a pickle (MSVD raw-captions.pkl?); tvrbench never unpickles input unless told "
            "to: pass --trust-pickle (trust_pickle=True) if you trust this file",
        )
    with open(path, "rb") as handle:
        try:
            data = _PlainDataUnpickler(handle).load()  # noqa: S301 - vouched for, and no class or function is loaded
        except Exception as error:  # a damaged pickle can raise almost anything
            raise InputError(path, f"cannot unpickle ({type(error).__name__}: {error})") from None
    if not isinstance(data, dict):
        raise InputError(path, f"expected a dict of video id -> list of token lists, found {type(data).__name__}")
    pairs = []
    for video_id, captions in data.items():
        if not isinstance(video_id, str) or not isinstance(captions, (list, tuple)):
            raise InputError(path, f"video {video_id!r}: expected a string id and a list of captions")
        for caption in captions:
            words = [caption] if isinstance(caption, str) else caption
            if not isinstance(words, (list, tuple)) or not all(isinstance(word, str) for word in words):
                raise InputError(path, f"video {video_id!r}: a caption is neither text nor a list of tokens")
            pairs.append((video_id, " ".join(words).strip()))
    return _msvd_captions(path, pairs)


def _is_pickle(path: Path) -> bool:
    return path.is_file() and require_file(path, "a captions file").startswith(PICKLE_MAGIC)


def _read_jsonl(path: Path, text: str) -> Captions:
    numbered = list(jsonl_objects(path, text))
    columns = _records_to_columns([record for _, record in numbered])
    return _from_columns(path, columns, *GENERIC_COLUMNS, [number for number, _ in numbered])


def _read_msrvtt_json(path: Path, text: str) -> Captions:
    """MSR-VTT's ``MSRVTT_data.json``: ``sentences[]`` with ``caption, video_id, sen_id``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(path, f"malformed JSON at line {error.lineno} ({error.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("sentences"), list):
        raise InputError(path, "expected MSR-VTT's MSRVTT_data.json with a 'sentences' list")
    rows = [
        {
            "caption_id": str(s.get("sen_id")) if isinstance(s, dict) and "sen_id" in s else None,
            "text": s.get("caption") if isinstance(s, dict) else None,
            "video_id": s.get("video_id") if isinstance(s, dict) else None,
        }
        for s in data["sentences"]
    ]
    return _from_columns(path, _records_to_columns(rows), *GENERIC_COLUMNS, list(range(1, len(rows) + 1)))


def _detect_format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in (".txt", ".pkl", ".pickle"):
        return "msvd"
    if suffix == ".json":
        return "msrvtt-json"
    return "auto"  # CSV / TSV / JSONL: decided by the columns


def read_captions(path: str | Path, format: str = "auto", video_list: str | Path | None = None, trust_pickle: bool = False) -> Captions:
    """Read captions in one of :data:`FORMATS` (see the module docstring).

    ``auto``: ``.txt`` / ``.pkl`` are MSVD, ``.json`` is ``MSRVTT_data.json``, ``.jsonl`` generic,
    ``.csv`` / ``.tsv`` by header (LSMDC when it has ``movie`` and ``names``, else generic, else
    JSFUSION). ``video_list`` keeps only the listed videos' captions; every listed video must have one.
    """
    path = Path(path)
    if format not in FORMATS:
        raise InputError(path, f"unknown captions format {format!r}; choose one of {', '.join(FORMATS)}")
    if format == "auto":
        format = _detect_format(path)
    if format == "msvd" and _is_pickle(path):
        captions = _read_msvd_pickle(path, trust_pickle)
    else:
        text = read_text_file(path)
        suffix = path.suffix.lower()
        if format == "msvd":
            captions = _read_msvd_text(path, text)
        elif format == "msrvtt-json":
            captions = _read_msrvtt_json(path, text)
        elif suffix == ".jsonl" and format in ("auto", "generic"):
            captions = _read_jsonl(path, text)
        else:
            captions = _read_delimited(path, text, "\t" if suffix == ".tsv" else ",", format)
    return captions if video_list is None else _keep_videos(captions, Path(video_list))


def _keep_videos(captions: Captions, video_list: Path) -> Captions:
    wanted = read_video_ids(video_list)
    present = set(captions.video_ids)
    absent = [video_id for video_id in wanted if video_id not in present]
    if absent:
        raise InputError(
            video_list, f"{len(absent)} of its {len(wanted)} videos have no captions in {captions.source} (e.g. {', '.join(map(repr, absent[:3]))})"
        )
    keep = set(wanted)
    return captions.subset([i for i, video_id in enumerate(captions.video_ids) if video_id in keep])


def read_video_ids(path: str | Path) -> list[str]:
    """One video id per line, in the column order of the score matrix."""
    path = Path(path)
    lines = [line.strip() for line in read_text_file(path).splitlines()]
    ids = [line for line in lines if line]
    seen: set[str] = set()
    for video_id in ids:
        if video_id in seen:
            raise InputError(path, f"duplicate video id {video_id!r}")
        seen.add(video_id)
    return ids
