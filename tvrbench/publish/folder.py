"""Write artifacts as a Hugging Face dataset folder: ``data/<config>/<split>-00000-of-00001.parquet`` + README.md.

``datasets.load_dataset(folder, config, split=split)`` reads each config back row for row: the
card's ``configs:`` block points every config at its Parquet file, so no loading script is needed.
The whole dataset is built in a hidden folder beside ``out`` and moved into place only when
complete, so a failure (a full disk) or an interruption leaves ``out`` as it was.

The folder may hold other things (raw videos, notes), so publish removes only what it wrote itself:
the hidden manifest ``.tvrbench-publish.json`` (never uploaded) lists the files of the last run, and
of those, the ones this run does not write again are removed, so the data files match the card. A
non-empty folder without a manifest is refused unless ``overwrite`` (then files are only written,
never removed); nothing is written or removed through a symbolic link inside the folder.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pyarrow.parquet as pq

from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write, naming, write_json
from tvrbench.io.outputs import Output, check_outputs, safe_name
from tvrbench.publish.artifacts import Artifact
from tvrbench.publish.card import render_card
from tvrbench.signature import Signature, input_digest

MANIFEST = ".tvrbench-publish.json"
_WRITTEN = re.compile(r"README\.md|data/[a-z0-9][a-z0-9_-]*/[A-Za-z0-9_][A-Za-z0-9_.+@=-]*-00000-of-00001\.parquet")


def parquet_path(config: str, split: str) -> str:
    """Path of a config's split inside the folder (the hub's own naming)."""
    return f"data/{config}/{split}-00000-of-00001.parquet"


def write_dataset(
    out: str | Path,
    artifacts: list[Artifact],
    split: str = "test",
    license: str | None = None,
    pretty_name: str = "tvrbench derived evaluation data",
    overwrite: bool = False,
) -> dict:
    """Write every artifact and the card; returns a manifest ``{signature, configs: {config: {...}}}``.

    ``overwrite``: write into a non-empty folder that publish did not make (replacing only its own files)."""
    if not artifacts:
        raise InputError(out, "nothing to publish: give at least one artifact (--mc, --contrast, --relevance, --qrels, --fire, --results)")
    seen: dict[str, str] = {}
    for artifact in artifacts:
        if artifact.config in seen:
            raise InputError(artifact.source, f"config name {artifact.config!r} is also used by {seen[artifact.config]}; name one with NAME=PATH")
        seen[artifact.config] = artifact.source
    safe_name(split, "split")
    out = Path(out)
    files = {a.config: {split: parquet_path(a.config, split)} for a in artifacts}
    written = ["README.md", *(names[split] for names in files.values())]
    previous = _previously_written(out, overwrite)
    _refuse_links(out, [*written, MANIFEST])
    check_outputs([Output(out / name, f"publish's {name}") for name in [*written, MANIFEST]], [(f"--{a.kind}", Path(a.source)) for a in artifacts])
    signature = Signature(
        {"split": split, "license": license or "unset", "configs": ",".join(f"{a.config}={a.kind}:{a.table.num_rows}" for a in artifacts)},
        libraries=("pyarrow",),
    )
    for artifact in artifacts:  # each input file, pinned under its config's name
        signature.add(artifact.config, input_digest(artifact.kind, artifact.source))
    staging = _staging(out)
    try:
        for artifact in artifacts:
            with atomic_write(staging / files[artifact.config][split], "wb") as handle:
                pq.write_table(artifact.table, handle, compression="zstd")
        with atomic_write(staging / "README.md") as handle:
            handle.write(render_card(artifacts, files, split, license, pretty_name, signature))
        write_json(staging / MANIFEST, {"written_by": "tvrbench publish", "files": sorted(written)})
        _move_into_place(staging, out, written, previous - set(written))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {
        "signature": str(signature),
        "configs": {
            a.config: {
                "kind": a.kind,
                "rows": a.table.num_rows,
                "files": files[a.config],
                "source": a.source,
                "signature": None if a.signature is None else str(a.signature),
            }
            for a in artifacts
        },
    }


def _staging(out: Path) -> Path:
    """An empty folder beside ``out`` (same file system, so moving out of it is a rename), where the
    whole dataset is built before any of it appears in ``out``; one left by an interrupted run is removed."""
    staging = out.with_name(f".{out.name}.publish-partial")
    shutil.rmtree(staging, ignore_errors=True)
    with naming(staging):
        staging.mkdir(parents=True)
    return staging


def _move_into_place(staging: Path, out: Path, written: list[str], stale: set[str]) -> None:
    """A new ``out`` is the finished folder renamed; into an existing one each file is renamed into
    place (atomically, one by one), the stale ones removed, and the manifest moved last."""
    if not out.exists():
        with naming(out):
            os.replace(staging, out)
        return
    for name in written:
        with naming(out / name):
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / name, out / name)
    _remove_stale(out, stale)
    with naming(out / MANIFEST):
        os.replace(staging / MANIFEST, out / MANIFEST)


def _previously_written(out: Path, overwrite: bool) -> set[str]:
    """The files the last publish into ``out`` wrote, from its manifest; refuses a folder it did not make."""
    manifest = out / MANIFEST
    if manifest.is_file() and not manifest.is_symlink():
        try:
            listed = json.loads(manifest.read_text(encoding="utf-8")).get("files")
        except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
            listed = None
        if not isinstance(listed, list) or not all(isinstance(name, str) and _WRITTEN.fullmatch(name) for name in listed):
            raise InputError(manifest, "is not a manifest written by tvrbench publish; remove it to publish here")
        return set(listed)
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise InputError(
            out,
            "is not empty and was not written by tvrbench publish (no .tvrbench-publish.json); "
            "choose an empty folder, or pass --overwrite to write into it (nothing in it is removed)",
        )
    return set()


def _refuse_links(out: Path, names: list[str]) -> None:
    """Nothing is written through a symbolic link below ``out`` (a linked ``data/`` could point anywhere)."""
    for name in names:
        path = out
        for part in Path(name).parts:
            path = path / part
            if path.is_symlink():
                raise InputError(path, "is a symbolic link; publish does not write or remove through links (remove the link or choose another --out)")


def _remove_stale(out: Path, names: set[str]) -> None:
    """Remove files a previous publish wrote that this one did not, and their folders once empty."""
    _refuse_links(out, sorted(names))
    for name in sorted(names):
        path = out / name
        path.unlink(missing_ok=True)
        if path.parent.is_dir() and not any(path.parent.iterdir()):
            path.parent.rmdir()


def folder_files(folder: str | Path) -> list[tuple[str, int]]:
    """The files an upload would send (relative path, bytes), sorted; hidden and temporary files left out."""
    folder = Path(folder)
    return sorted(
        (path.relative_to(folder).as_posix(), path.stat().st_size)
        for path in folder.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )
