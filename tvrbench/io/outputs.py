"""Where outputs go, checked before any work is done.

Every command states the files it writes (main file, sidecar, ``.partial``, progress file, per-query
file); :func:`check_outputs` then refuses, with one line, an output that is an input, two outputs
that are one file, an output that cannot be written (it is a folder, a file stands where its
folder should be, the folder is read-only), and, unless told to overwrite, an output that another
kind of command wrote or that nothing says who wrote (:func:`tvrbench.io.writers.written_by`: a
random MC split over a verb split, a report over your own notes), so a run never destroys an input,
another command's work or a file of yours, or stops half-way on a path it could have checked first.
A folder a command writes whole goes only where a command wrote one, even with ``overwrite``.
:func:`name_in` builds a file name from data (a dataset, a model, a split) and refuses any name that
could leave its folder.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.io.sidecars import sidecar_path
from tvrbench.io.writers import written_by

_SAFE_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+@=-]{0,149}")


@dataclass(frozen=True)
class Output:
    """One path a command will write; ``role`` says which (``--json``, ``the sidecar of --out``);
    ``writer``: the command writing it as typed (``mc build --kind random``), the one that may have
    written what is there (:func:`written_by`); None: not checked so (the command's own partial file,
    a folder it writes files into, a call from Python)."""

    path: Path
    role: str
    folder: bool = False
    writer: str | None = None


def safe_name(name: str, what: str) -> str:
    """``name`` if it can be a file name as it is: letters, digits and ``_ . + @ = -``, no ``..``."""
    if not _SAFE_NAME.fullmatch(name) or ".." in name:
        raise InputError(
            None, f"{what} {name!r} cannot be part of a file name: use letters, digits and _ . + @ = - (no path separators, spaces or '..')"
        )
    return name


def name_in(folder: Path, name: str, what: str) -> Path:
    """``folder / name`` for a ``name`` built from data, refused unless it is a plain file name."""
    return Path(folder) / safe_name(name, what)


def same_file(a: Path, b: Path) -> bool:
    """One file under two names: the same inode when both exist, else the same resolved path."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return _key(a) == _key(b)


def _key(path: Path) -> str:
    return os.path.normcase(os.path.realpath(path))


def check_outputs(outputs: list[Output], inputs: list[tuple[str, Path]], overwrite: bool = False) -> list[Path]:
    """InputError (one line) unless every output is writable, none is an input, no two coincide and,
    without ``overwrite``, none would replace what another kind of command wrote or what nothing says
    who wrote. Returns the sidecars ``overwrite`` leaves stale, of the outputs of others it lets this
    command replace (``report.html.json`` of an MC split replaced by a report): the caller removes them
    once it has run, unless this command writes them itself."""
    for number, output in enumerate(outputs):
        _check_writable(output)
        for role, path in inputs:
            if same_file(output.path, path):
                raise InputError(output.path, f"{output.role} would overwrite the input {role}; choose another output path")
        for other in outputs[:number]:
            if same_file(output.path, other.path):
                raise InputError(output.path, f"{output.role} and {other.role} are the same file; choose distinct paths")
    sidecars = [_replaced_sidecar(output, overwrite) for output in outputs]  # after the inputs: --overwrite would not help there
    kept = [output.path for output in outputs] + [path for _, path in inputs]
    return [sidecar for sidecar in sidecars if sidecar is not None and not any(same_file(sidecar, path) for path in kept)]


def _check_writable(output: Output) -> None:
    path = output.path
    if output.folder and path.exists() and not path.is_dir():
        raise InputError(path, f"{output.role} must be a folder, and a file is there")
    if not output.folder and path.is_dir():
        raise InputError(path, f"{output.role} is a folder; give a file name")
    folder = path if output.folder and path.is_dir() else path.parent
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(path, f"cannot write {output.role}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(path, f"cannot write {output.role}: folder {existing} is not writable")


def _replaced_sidecar(output: Output, overwrite: bool) -> Path | None:
    """Refuse to let ``output`` replace what another kind of command wrote, or what nothing says who wrote,
    unless ``overwrite`` (a folder of files no command wrote whole: always). Returns the sidecar that goes
    with what ``overwrite`` lets it replace: the one that names the same writer. A command replaces its own
    earlier output; nothing is in the way of an output where nothing, or an empty folder, is."""
    path = output.path
    if output.writer is None or not path.exists() or (path.is_dir() and not any(path.iterdir())):
        return None
    theirs = written_by(path)
    if theirs == output.writer:
        return None
    if theirs is None and output.folder:
        raise InputError(
            path, f"{output.role} is a folder of files no tvrbench command wrote as one; choose a new or empty folder (nothing in it is removed)"
        )
    if overwrite:
        sidecar = sidecar_path(path)
        return sidecar if theirs is not None and written_by(sidecar) == theirs else None
    if theirs is None:
        raise InputError(
            path, "nothing in it or beside it says which command wrote it (made elsewhere, by an earlier version, or empty); --overwrite replaces it"
        )
    raise InputError(path, f"written by `tvrbench {theirs}`, another kind of command than `{output.writer}`; --overwrite replaces it")
