"""Atomic output: a file appears complete or not at all, never half-written."""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import socket
from pathlib import Path
from typing import IO, TYPE_CHECKING, Iterator

if TYPE_CHECKING:  # numpy loads where an array is written: `tvrbench doctor` and --help import none of it
    import numpy as np


@contextlib.contextmanager
def naming(path: str | os.PathLike) -> Iterator[None]:
    """Give ``path`` to an OS error raised inside that names no file (a full disk or a failed device
    on ``write``), so its one-line message says which file could not be written."""
    try:
        yield
    except OSError as error:
        if error.filename is None:
            raise OSError(error.errno, error.strerror or str(error) or type(error).__name__, os.fspath(path)) from error
        raise


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", encoding: str | None = "utf-8") -> Iterator[IO]:
    """Write to ``.NAME.HOST-PID.tmp`` beside ``path`` and rename it into place on success.

    The temporary file is the writing process's own, so two processes writing one file at once (two
    commands filling the same cache, Dask workers on one machine) each rename a whole file into place;
    the leftovers of this machine's killed writers (no clean-up runs on SIGKILL) are removed by the
    next write of the same file.
    """
    target = Path(path)
    with naming(target):
        target.parent.mkdir(parents=True, exist_ok=True)
        binary = "b" in mode
        remove_leftovers(target)
        temporary = target.with_name(f".{target.name}.{socket.gethostname()}-{os.getpid()}.tmp")
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)  # the umask applies
        try:
            with os.fdopen(handle, mode, encoding=None if binary else encoding, newline=None if binary else "") as out:
                yield out
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary)
            raise


def remove_leftovers(target: Path) -> None:
    """The temporary files of ``target`` that writers on this machine, no longer running, left behind."""
    host = socket.gethostname()
    for leftover in target.parent.glob(f".{glob.escape(target.name)}.{glob.escape(host)}-*.tmp"):
        pid = leftover.name[len(target.name) + len(host) + 3 : -len(".tmp")]
        if pid.isdigit() and not running(int(pid)):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(leftover)


def running(pid: int) -> bool:
    """Whether a process with this id runs on this machine (another user's counts)."""
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):  # none, or a number no PID can be
        return False
    except PermissionError:  # another user's
        pass
    return True


def remove_abandoned(root: Path) -> None:
    """Staging folders ``.NAME.partial-PID`` in ``root`` whose process is gone (killed mid-build)."""
    for staging in root.glob(".*.partial-*"):
        pid = staging.name.rpartition("-")[2]
        if pid.isdigit() and not running(int(pid)):
            shutil.rmtree(staging, ignore_errors=True)


@contextlib.contextmanager
def atomic_folder(path: str | os.PathLike) -> Iterator[Path]:
    """Build a folder in ``.NAME.partial`` beside ``path`` and move it into place when the block ends
    without error; a folder already at ``path`` (the caller checked it may go) is replaced."""
    target = Path(path)
    staging = target.with_name(f".{target.name}.partial")
    with naming(target):
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            yield staging
            if target.exists():
                previous = target.with_name(f".{target.name}.previous")
                shutil.rmtree(previous, ignore_errors=True)
                os.replace(target, previous)
                os.replace(staging, target)
                shutil.rmtree(previous)
            else:
                os.replace(staging, target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise


def _json_default(value):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def write_json(path: str | os.PathLike, payload: object) -> None:
    """Write ``payload`` as indented JSON, atomically; numpy scalars and arrays are converted."""
    with atomic_write(path) as out:
        json.dump(payload, out, indent=2, default=_json_default, allow_nan=False)
        out.write("\n")


def write_npy(path: str | os.PathLike, array: np.ndarray) -> None:
    """Save an array as ``.npy`` (never pickled), atomically."""
    import numpy as np

    with atomic_write(path, "wb") as out:
        np.save(out, np.asarray(array), allow_pickle=False)
