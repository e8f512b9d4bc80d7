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

from tvrbench.errors import InputError
from tvrbench.generators.config import GenderConfig, MCConfig, PersonIdConfig, VerbConfig
from tvrbench.generators.core import check_texts
from tvrbench.generators.gender import GenderContrasts
from tvrbench.generators.person_id import PersonIdContrasts
from tvrbench.generators.records import ContrastRecord, read_contrast_records, sidecar_path
from tvrbench.generators.runner import run_contrasts
from tvrbench.generators.verb import VerbContrasts
from tvrbench.io.captions import Captions

CONTRAST_KINDS = ("gender", "id", "verb")
MC_KINDS = ("random", *CONTRAST_KINDS)

__all__ = [
    "CONTRAST_KINDS", "MC_KINDS", "ContrastRecord", "read_contrast_records", "GenderContrasts", "VerbContrasts",
    "PersonIdContrasts", "gender_contrasts", "verb_contrasts", "id_contrasts", "build_mc_file", "import_mc_file",
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


def build_mc_file(
    captions: Captions,
    kind: str,
    out: str | Path,
    config: MCConfig = MCConfig(),
    contrast_path: str | Path | None = None,
    reviewed: str | Path | None = None,
):
    """Write an MC split as Park et al.'s TSV plus ``OUT.json``; returns the split.

    A contrast split's sidecar carries the contrast file's ``plausibility`` (how a language model
    reads the contrasts beside their originals) and ``audit`` (whether text alone gives them away),
    so the measures travel with the split. With ``reviewed`` (a review's JSON, ``contrast review-score
    --json``) the split is built only from contrasts no reader rejected, and its sidecar carries the
    reviewed share (``review``).
    """
    from tvrbench.generators.mc import build_mc, check_contrasts
    from tvrbench.generators.person_id import caption_movies
    from tvrbench.generators.records import read_sidecar
    from tvrbench.io.atomic import write_json
    from tvrbench.io.mc import write_mc
    from tvrbench.signature import Signature, captions_digest, input_digest

    if kind not in MC_KINDS:
        raise InputError(None, f"unknown MC kind {kind!r}; choose one of {', '.join(MC_KINDS)}")
    check_texts(captions)
    contrasts, saved, review = None, {}, None
    contrast_digest = input_digest("contrast", contrast_path) if contrast_path else "none"
    if kind != "random":
        if contrast_path is None:
            raise InputError(None, f"--kind {kind} needs --contrast, the {kind} contrast records (JSONL)")
        records = read_contrast_records(contrast_path)
        if reviewed is not None:
            records, review = _reviewed_records(records, Path(reviewed), Path(contrast_path), contrast_digest)
        contrasts = check_contrasts(records, captions, kind, str(contrast_path))
        saved = read_sidecar(contrast_path)
    elif reviewed is not None:
        raise InputError(None, "--reviewed applies to a contrast MC (--kind gender, verb or id with --contrast)")
    movies = caption_movies(captions, config.movie_column) if config.negatives_from == "same_movie" else None
    split = build_mc(captions, config, kind, contrasts, movies)
    split.review = review
    if not split.instances:
        raise InputError(captions.source, f"no video can make a {kind} MC instance ({dict(split.dropped)})")
    signature = Signature({
        "kind": kind, "seed": config.seed, "options": config.n_options, "negatives": config.negatives_from,
        "captions": captions_digest(captions),
        "contrast": contrast_digest,
        **({"reviewed": input_digest("review", reviewed)} if reviewed is not None else {}),
    })  # fmt: skip
    write_mc(out, split.instances)
    write_json(sidecar_path(out), split.sidecar(str(signature), kind, saved.get("plausibility"), saved.get("audit")))
    return split


def _reviewed_records(records: list, reviewed: Path, contrast_path: Path, contrast_digest: str) -> tuple[list, dict]:
    """The records no reader rejected in the review ``reviewed`` of the contrast file (whose digest is
    ``contrast_digest``), and the review's figures with how many were dropped."""
    from tvrbench.evaluation.review import read_review
    from tvrbench.evaluation.review.score import review_of

    review = review_of(read_review(reviewed), reviewed, contrast_path, contrast_digest)
    kept = [record for record in records if (record.caption_id, record.contrast) not in review.rejected]
    return kept, {**review.facts, "dropped": len(records) - len(kept)}


def import_mc_file(tsv: str | Path, out: str | Path, name: str):
    """Copy a human-made MC TSV in as split ``name``, with a sidecar naming its contrast options."""
    from tvrbench.generators.mc import infer_contrast_option
    from tvrbench.io.atomic import write_json
    from tvrbench.io.mc import read_mc, write_mc
    from tvrbench.signature import Signature, input_digest

    instances = read_mc(tsv)
    signature = Signature({"kind": name, "imported": input_digest("imported", tsv)})
    write_mc(out, instances)
    write_json(sidecar_path(out), {
        "signature": str(signature), "kind": name, "source": str(tsv), "counts": {"instances": len(instances)},
        "instances": [{"caption_id": None, "contrast_option": infer_contrast_option(i)} for i in instances],
        "contrast_option_rule": "the negative with the most words in common with the positive (difflib ratio)",
    })  # fmt: skip
    return instances
