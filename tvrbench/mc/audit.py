"""The audit of an MC split (SPEC §5, "Audit of a split"; docs/audit.md): the pair-level figures of its
contrast options (:func:`tvrbench.generators.audit.audit_pairs`: can the contrast be told from the
positive by text alone?) and the accuracy of the text-only MC scorers (:mod:`tvrbench.mc.score`),
beside a reference split's when given; what readers made of its contrasts where a review says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.generators.audit import FOLDS, audit_pairs, pair_reading, pair_rows, percent
from tvrbench.generators.config import MCConfig
from tvrbench.io.mc import read_mc, saved_contrast_options
from tvrbench.io.sidecars import read_sidecar, sidecar_path
from tvrbench.lm.models import load_language_model
from tvrbench.lm.offline import AUTO
from tvrbench.mc.refine import refinement_line, refinement_tables
from tvrbench.mc.score import SCORERS, blind_scores, lm_scores, mc_outcomes, summarize
from tvrbench.resources import sentence_model, sentence_model_name
from tvrbench.results import Table, TablesOfJson, analysis_signature
from tvrbench.review.score import review_line, share_cell
from tvrbench.signature import Signature


def audit_reading(payload: dict) -> list[str]:
    """:func:`pair_reading` of each split of a :class:`SplitAudit` JSON, each sentence with its split's
    name, then what readers made of its contrasts where a review says (``mc build --reviewed``), and
    what refinement kept where the split was refined."""
    return [
        f"{name}: {sentence}"
        for name, split in payload["splits"].items()
        for sentence in [
            *pair_reading(split["pairs"]),
            *([review_line(split["review"])] if split.get("review") else []),
            *([refinement_line(split["refinement"])] if split.get("refinement") else []),
        ]
    ]


def review_cell(review: dict | None) -> str:
    """The reviewed share of a split's contrasts as one cell: share, Wilson interval and sample size."""
    if not review:
        return "not reviewed"
    return share_cell(review)


def audit_tables(payload: dict) -> list[Table]:
    """One row per figure, one column per split; then the giveaway words, the commonest substitutes and
    what the figures say."""
    splits = payload["splits"]
    audits = [split["pairs"] for split in splits.values()]
    scorers = list(dict.fromkeys(name for split in splits.values() for name in split["scorers"]))
    rows = [
        ["instances", *(f"{split['instances']:,}" for split in splits.values())],
        *pair_rows(audits),
        *([["readers accept (blind review)", *(review_cell(split.get("review")) for split in splits.values())]] if _reviewed(splits) else []),
        *(
            [f"{name} scorer accuracy (chance 20 %)", *(percent(split["scorers"].get(name, {}).get("accuracy")) for split in splits.values())]
            for name in scorers
        ),
    ]
    giveaways = [
        [f"{entry['word']} {entry['weight']:+.2f}" for entry in (audit["hypothesis_only"] or {}).get("giveaways", {}).get(side, [])]
        for audit in audits
        for side in ("contrast", "positive")
    ]
    commonest = [[f"{entry['word']} {entry['count']:,}" for entry in audit["substitutes"]["top10"]] for audit in audits]
    return [
        Table("Text-only audit: contrast option against positive", ["figure", *splits], rows),
        Table(
            "Giveaway words (largest weights, fit on all pairs)",
            ["rank", *(f"{name}: {side}" for name in splits for side in ("contrast", "positive"))],
            _ranked(giveaways),
        ),
        Table("Commonest substitute words", ["rank", *splits], _ranked(commonest)),
        *(
            replace(table, title=f"{name}: {table.title}")
            for name, split in splits.items()
            if split.get("refinement")
            for table in refinement_tables(split["refinement"])
        ),
        Table("Reading", [], [], notes=tuple(audit_reading(payload))),
    ]


def _reviewed(splits: dict) -> bool:
    return any(split.get("review") for split in splits.values())


def _ranked(columns: list[list[str]]) -> list[list[str]]:
    """Rows ``rank, cell of each column`` (columns of unequal length padded with empty cells)."""
    return [[str(rank + 1), *(cells[rank] if rank < len(cells) else "" for cells in columns)] for rank in range(max(map(len, columns), default=0))]


@dataclass(frozen=True)
class SplitAudit(TablesOfJson):
    """The audit of an MC split, and of a reference split beside it; ``splits``: column name → figures."""

    splits: dict[str, dict]
    signature: Signature
    tables_of = staticmethod(audit_tables)

    @property
    def reading(self) -> list[str]:
        """What the figures say, in plain sentences (:func:`pair_reading`): the audit's last part."""
        return audit_reading(self.to_json())

    def to_json(self) -> dict:
        return {"splits": self.splits, "signature": str(self.signature)}


def _contrast_pairs(path: Path) -> tuple[list, list[tuple[str, str]]]:
    """The split's instances and its (positive, contrast) pairs; InputError when no contrast option is known
    or there are too few pairs for the folds."""
    instances = read_mc(path)
    options = saved_contrast_options(path, len(instances))
    if options is None:
        sidecar = sidecar_path(path)
        why = (
            f"its sidecar {sidecar.name} names none for these {len(instances)} instances (a Random MC split, or another split's sidecar)"
            if sidecar.is_file()
            else f"it has no sidecar {sidecar.name}"
        )
        raise InputError(
            path, f"no contrast option known: {why}; build it with `tvrbench mc build --kind KIND --contrast FILE` or `tvrbench mc import`"
        )
    pairs = [(instance.positive, instance.endings[option]) for instance, option in zip(instances, options) if option is not None]
    if len(pairs) < 2 * FOLDS:
        raise InputError(
            path, f"{len(pairs)} instance(s) with a contrast option; the {FOLDS}-fold hypothesis-only baseline needs at least {2 * FOLDS}"
        )
    return instances, pairs


def _column_names(paths: Sequence[Path]) -> list[str]:
    """The files' names; a reference named as the split says so (the JSON keeps each full path)."""
    names = [path.name for path in paths]
    return names if len(set(names)) == len(names) else [names[0], f"{names[1]} (reference)"]


def audit_split(
    mc_path: str | Path,
    reference: str | Path | None = None,
    lm: str = AUTO,
    seed: int = 0,
    scorers: Sequence[str] = ("blind", "lm"),
    config: MCConfig = MCConfig(),
) -> SplitAudit:
    """The pair-level audit of an MC split's contrast options, plus the accuracy of the text-only MC
    scorers (``blind`` with no captions: each option's typicality among the instance's options), and
    the same of ``reference`` beside it. Both splits are checked before any model loads."""
    unknown = sorted(set(scorers) - set(SCORERS))
    if unknown:
        raise InputError(None, f"unknown scorer(s) {', '.join(unknown)}; the built-in scorers are {', '.join(SCORERS)}")
    paths = [Path(mc_path), *([Path(reference)] if reference is not None else [])]
    read = [_contrast_pairs(path) for path in paths]
    language_model = load_language_model(lm)
    model = sentence_model(config.blind_model) if "blind" in scorers else None
    splits = {}
    for name, path, (instances, pairs) in zip(_column_names(paths), paths, read):
        labels = np.array([instance.label for instance in instances])
        sidecar = read_sidecar(path)
        accuracy = {}
        for scorer in scorers:
            scores = blind_scores(instances, model)[0] if scorer == "blind" else lm_scores(instances, language_model)
            accuracy[scorer] = summarize(*mc_outcomes(scores, labels))
        splits[name] = {
            "file": str(path),
            "instances": len(instances),
            "pairs": audit_pairs([p for p, _ in pairs], [c for _, c in pairs], language_model, seed).to_json(),
            "scorers": accuracy,
            **{key: sidecar[key] for key in ("review", "refinement") if sidecar.get(key)},
        }
    sources = {}
    for role, path in zip(("mc", "reference"), paths):  # the sidecar says which option is the contrast
        sources[role], sources[f"{role}_sidecar"] = path, sidecar_path(path)
    fields = {"seed": seed, "folds": FOLDS, "lm": language_model.name, "scorers": list(scorers)}
    if "blind" in scorers:
        fields["similarity"] = sentence_model_name(config.blind_model)
    signature = analysis_signature("mc-audit", sources, fields, ("numpy", "scikit-learn", "sentence-transformers"))
    return SplitAudit(splits, signature)
