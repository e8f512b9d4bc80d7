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


def read_sidecar(path: str | Path) -> dict:
    """The sidecar of output ``path``, or ``{}`` when it has none (made elsewhere); InputError when unreadable."""
    return checked_sidecar(open_sidecar(path), sidecar_path(path))


NUMBER = (int, float, type(None))


def _is_preference(saved) -> bool:
    """What :meth:`tvrbench.lm.models.Preference.to_json` writes."""
    return (
        isinstance(saved, dict)
        and isinstance(saved.get("lm"), str)
        and isinstance(saved.get("pairs"), int)
        and isinstance(saved.get("prefers_original"), NUMBER)
        and isinstance(saved.get("median_gap_nats_per_token"), NUMBER)
    )


def is_pair_audit(saved) -> bool:
    """What :meth:`tvrbench.generators.audit.PairAudit.to_json` writes, as far as the card and the report read it."""
    if not isinstance(saved, dict) or not isinstance(saved.get("pairs"), int) or not _is_preference(saved.get("lm_preference")):
        return False
    hypothesis, substitutes = saved.get("hypothesis_only"), saved.get("substitutes")
    return (
        (hypothesis is None or isinstance(hypothesis, dict) and isinstance(hypothesis.get("accuracy"), NUMBER))
        and isinstance(substitutes, dict)
        and isinstance(substitutes.get("distinct"), int)
        and all(isinstance(substitutes.get(key), NUMBER) for key in ("entropy_bits", "top10_share"))
    )


def checked_sidecar(data: dict, source: Path) -> dict:
    """A sidecar whose ``plausibility``, ``audit`` and per-instance entries (``contrast_option`` and
    :meth:`ContrastRecord.mc_facts`) are what tvrbench writes (the report, the card and ``mc score``
    use them); InputError otherwise."""
    if data.get("plausibility") is not None and not _is_preference(data["plausibility"]):
        raise InputError(source, "field 'plausibility' is not what tvrbench contrast writes (lm, pairs, prefers_original, median_gap_nats_per_token)")
    if data.get("audit") is not None and not is_pair_audit(data["audit"]):
        raise InputError(source, "field 'audit' is not what tvrbench contrast writes (hypothesis_only, substitutes, lm_preference)")
    entries = data.get("instances")
    if entries is not None and not (
        isinstance(entries, list)
        and all(isinstance(e, dict) and e.get("contrast_option") in (None, 0, 1, 2, 3, 4) and _are_facts(e) for e in entries)
    ):
        raise InputError(source, "field 'instances' must list contrast_option (0-4 or null) and the contrast's facts as mc build writes them")
    return data


def _are_facts(entry: dict) -> bool:
    return optional_number(entry.get("sentence_cosine")) and all(entry.get(flag) in (None, True, False) for flag in ("antonym", "rare_original"))


def optional_number(value) -> bool:
    return isinstance(value, NUMBER) and not isinstance(value, bool)  # NUMBER admits None
