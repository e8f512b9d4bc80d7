"""Contrast sets and hard-negative multiple-choice splits (Park et al. 2022, SPEC §5).

In memory (a notebook), a generator per kind is built once and returns the records of any captions
(see :mod:`tvrbench.generators.core`)::

    from tvrbench.generators import GenderContrasts
    records = GenderContrasts().contrasts(["a man is cooking", "a dog runs"])

Each function below wraps one of them: it reads nothing but what it is given, writes its output
atomically with a sidecar ``OUT.json`` (signature, counts, settings), resuming an interrupted run,
and returns what it wrote. The parts they are made of (target finders, candidate generators,
constraints, the search) live in the submodules and compose into new contrast kinds; see
:mod:`tvrbench.generators.base`.
"""

from __future__ import annotations

from pathlib import Path

from tvrbench.generators.config import GenderConfig, PersonIdConfig, VerbConfig
from tvrbench.generators.core import check_texts
from tvrbench.generators.gender import GenderContrasts
from tvrbench.generators.person_id import PersonIdContrasts
from tvrbench.generators.records import ContrastRecord, read_contrast_records
from tvrbench.generators.runner import run_contrasts
from tvrbench.generators.verb import VerbContrasts
from tvrbench.io.captions import Captions

CONTRAST_KINDS = ("gender", "id", "verb")

__all__ = [
    "CONTRAST_KINDS", "ContrastRecord", "read_contrast_records", "GenderContrasts", "VerbContrasts",
    "PersonIdContrasts", "gender_contrasts", "verb_contrasts", "id_contrasts",
]  # fmt: skip


def gender_contrasts(captions: Captions, out: str | Path, config: GenderConfig = GenderConfig(), client=None):
    """One gender contrast per caption with a gendered noun of the table; returns (records, ContrastRun).
    ``client``: a Dask client to run the chunks on (:func:`tvrbench.distributed.dask_client`)."""
    return run_contrasts(GenderContrasts(config), captions, out, client)


def verb_contrasts(captions: Captions, out: str | Path, config: VerbConfig = VerbConfig(), train_captions: Captions | None = None, client=None):
    """Verb-phrase contrasts (an offline pool, or T5): the verbs that fit, drawn in a seeded order and
    judged by a language model, through Park et al.'s filters; (records, ContrastRun). ``client``: a
    Dask client to run the chunks on."""
    check_texts(captions)  # before the training captions are parsed
    return run_contrasts(VerbContrasts(config, train_captions), captions, out, client)


def id_contrasts(
    captions: Captions,
    characters_path: str | Path,
    out: str | Path,
    config: PersonIdConfig = PersonIdConfig(),
    train_captions: Captions | None = None,
    client=None,
):
    """LSMDC-IDs person swaps; with training captions, records say whether the new name is more frequent.
    ``client``: a Dask client to run the chunks on."""
    return run_contrasts(PersonIdContrasts(characters_path, config, train_captions), captions, out, client)
