"""Write artifacts as a Hugging Face dataset folder: ``data/<config>/<split>-00000-of-00001.parquet`` + README.md.

``datasets.load_dataset(folder, config, split=split)`` reads each config back row for row: the
card's ``configs:`` block points every config at its Parquet file, so no loading script is needed.
Every file is written atomically; Parquet files of configs no longer published are removed, so the
folder always matches its card.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq

from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write
from tvrbench.publish.artifacts import Artifact
from tvrbench.publish.card import render_card
from tvrbench.signature import Signature


def parquet_path(config: str, split: str) -> str:
    """Path of a config's split inside the folder (the hub's own naming)."""
    return f"data/{config}/{split}-00000-of-00001.parquet"


def write_dataset(
    out: str | Path,
    artifacts: list[Artifact],
    split: str = "test",
    license: str | None = None,
    pretty_name: str = "tvrbench derived evaluation data",
) -> dict:
    """Write every artifact and the card; returns a manifest ``{signature, configs: {config: {...}}}``."""
    if not artifacts:
        raise InputError(out, "nothing to publish: give at least one artifact (--mc, --contrast, --relevance, --qrels, --fire, --results)")
    seen: dict[str, str] = {}
    for artifact in artifacts:
        if artifact.config in seen:
            raise InputError(artifact.source, f"config name {artifact.config!r} is also used by {seen[artifact.config]}; "
                                              "name one with NAME=PATH")
        seen[artifact.config] = artifact.source
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    files = {a.config: {split: parquet_path(a.config, split)} for a in artifacts}
    for artifact in artifacts:
        with atomic_write(out / files[artifact.config][split], "wb") as handle:
            pq.write_table(artifact.table, handle, compression="zstd")
    _remove_stale_configs(out, set(files))
    signature = str(Signature({"split": split, "license": license or "unset",
                               "configs": ",".join(f"{a.config}={a.kind}:{a.table.num_rows}" for a in artifacts)},
                              libraries=("pyarrow",)))
    with atomic_write(out / "README.md") as handle:
        handle.write(render_card(artifacts, files, split, license, pretty_name, signature))
    return {
        "signature": signature,
        "configs": {a.config: {"kind": a.kind, "rows": a.table.num_rows, "files": files[a.config], "source": a.source,
                               "signature": a.signature} for a in artifacts},
    }


def _remove_stale_configs(out: Path, configs: set[str]) -> None:
    data = out / "data"
    for folder in data.iterdir() if data.is_dir() else ():
        if folder.is_dir() and folder.name not in configs:
            shutil.rmtree(folder)


def folder_files(folder: str | Path) -> list[tuple[str, int]]:
    """The files an upload would send (relative path, bytes), sorted; hidden and temporary files left out."""
    folder = Path(folder)
    return sorted(
        (path.relative_to(folder).as_posix(), path.stat().st_size)
        for path in folder.rglob("*")
        if path.is_file() and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )
