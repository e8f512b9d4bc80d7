"""Sidecars: the JSON file beside an output that holds its signature and settings (``M.json`` beside
``M.npy``), written by the command that made the output and read back by every command that takes it;
they also tell which command made an output that has no room to say it (:mod:`tvrbench.io.writers`).
"""

from __future__ import annotations

from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.io.files import read_json_object

# Outputs whose sidecar replaces their suffix (M.npy → M.json); every other output's sidecar adds .json.
MATRIX_SUFFIXES = (".npy", ".npz", ".zarr", ".parquet")


def sidecar_path(path: str | Path) -> Path:
    """Where the signature and settings of output ``path`` go, and where readers look for them.

    A matrix (``.npy``, ``.npz``, ``.zarr``, ``.parquet``) has ``M.json``; any other file (an MC
    split, contrast records, qrels) has its full name plus ``.json`` (``X.jsonl.json``), because
    ``X.json`` could be a second output of another kind. Both forms are what earlier versions wrote.
    """
    path = Path(path)
    if path.suffix.lower() in MATRIX_SUFFIXES:
        return path.with_suffix(".json")
    return path.with_name(path.name + ".json")


def open_sidecar(path: str | Path, required: bool = False) -> dict:
    """The sidecar of output ``path`` as a JSON object, ``{}`` when there is none (an output made
    elsewhere) unless ``required``; InputError naming the file when it is missing or unreadable."""
    sidecar = sidecar_path(path)
    if sidecar.is_file():
        return read_json_object(sidecar)
    if required:
        if not Path(path).exists():
            raise InputError(path, "no such file")
        raise InputError(path, f"no sidecar {sidecar.name} beside it (written by tvrbench)")
    return {}
