"""Which command wrote a file: the mark every output carries, and :func:`written_by`, which reads it back.

A command replaces unasked only what the same kind of command wrote (:func:`tvrbench.io.outputs.check_outputs`),
so every output says who wrote it, where reading it back costs the first few KiB and no sidecar can
contradict it: a JSON object starts with ``"written_by": "tvrbench mc audit"`` (:func:`mark`), an HTML
report names itself in ``<meta name="generator" content="tvrbench report">``, and a folder a command
writes whole holds a marked JSON file (the review kit's ``key.json``, finetune-t5's ``tvrbench_finetune.json``).
Files with no room for a mark (a matrix, an MC TSV, contrast JSON Lines, a CSV, qrels) have a sidecar
that has it, or whose keys say it (:data:`WRITERS`: the sidecars of ``mc build``, ``contrast``, ``proxies``).
"""

from __future__ import annotations

import re
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.io.files import read_json_object
from tvrbench.io.sidecars import MATRIX_SUFFIXES, sidecar_path

WRITTEN_BY = "written_by"
PROGRAM = "tvrbench "
_HEAD = 4096  # where a mark must be: the first bytes, so telling a 100 MB file's writer reads no more of it
_MARK = re.compile(rb'\A\s*\{\s*"written_by"\s*:\s*"tvrbench ([^"\\]+)"|<meta name="generator" content="tvrbench ([^"<>]+)">')
# The marked file inside a folder a command writes whole (as one, in tvrbench.io.atomic.atomic_folder).
FOLDER_MARKS = ("key.json", "tvrbench_finetune.json")

# The keys a command's sidecar always holds -> that command as typed, with the kind its sidecar records.
# Most specific first: an MC split's sidecar is known by "kind" and "instances" alone.
WRITERS = (
    ({"proxy", "level", "storage"}, "proxies --proxy {proxy}"),
    ({"kind", "counts", "candidates_rejected"}, "contrast {kind}"),
    ({"kind", "source", "counts", "refinement"}, "contrast refine"),
    ({"kind", "source", "contrast_option_rule"}, "mc import"),
    ({"kind", "instances"}, "mc build --kind {kind}"),
)


def mark(payload: dict, writer: str | None) -> dict:
    """``payload`` under ``"written_by": "tvrbench WRITER"``, first, where :func:`written_by` reads it (an
    earlier mark, as in a file read and written again, dropped); ``payload`` itself when ``writer`` is None."""
    if writer is None:
        return payload
    return {WRITTEN_BY: PROGRAM + writer, **{key: value for key, value in payload.items() if key != WRITTEN_BY}}


def unmarked(payload):
    """A JSON value read back as its result made it: without the mark, which no result's tables know."""
    if isinstance(payload, dict) and WRITTEN_BY in payload:
        return {key: value for key, value in payload.items() if key != WRITTEN_BY}
    return payload


def written_by(path: str | Path) -> str | None:
    """The command that wrote ``path`` as typed after ``tvrbench`` (``mc audit``, ``mc build --kind verb``,
    ``proxies --proxy syn``); for a sidecar, the command that wrote its output. ``None`` when nothing
    says (a file made elsewhere or by an earlier version, an empty or unreadable file, an ordinary folder)."""
    path = Path(path)
    if path.is_dir():  # a folder a command wrote whole, or a matrix store (M.zarr) whose sidecar M.json says it
        marks = [path / name for name in FOLDER_MARKS] + ([sidecar_path(path)] if path.suffix.lower() in MATRIX_SUFFIXES else [])
        return next(filter(None, map(_told, marks)), None)
    return (_told(path) or _told(sidecar_path(path))) if path.exists() else None


def _told(path: Path) -> str | None:
    """The writer a file names in its first bytes, or, for a sidecar without a mark, by its keys."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(_HEAD)
    except OSError:  # absent, a folder, unreadable
        return None
    found = _MARK.search(head)
    if found:
        return (found.group(1) or found.group(2)).decode("utf-8", "replace")
    if path.suffix != ".json":
        return None
    try:
        sidecar = read_json_object(path)
    except InputError:
        return None
    return next((command.format(**{key: sidecar[key] for key in keys}) for keys, command in WRITERS if keys <= sidecar.keys()), None)
