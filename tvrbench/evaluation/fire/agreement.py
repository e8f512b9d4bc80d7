"""Table 2 of the FIRE paper: size and reliability of the relevance labels, per dataset.

Definitions (checked against the paper's MSR-VTT figures, see the notes in ``fire-readme.md``):

- ``pairs``: distinct (caption text, video) pairs, disagreements included;
- ``labels``: individual annotator labels (votes) over those pairs;
- ``relevant`` / ``irrelevant`` / ``disagreements``: pairs by their resolved label;
  ``resolved`` = (relevant + irrelevant) / pairs (the "Agreement 99.9 %" row of Table 2);
- ``agreement``: among pairs with two or more votes, the share whose votes are unanimous (the
  per-example rate of the paper's Appendix C / Figure 7); ``pairwise_agreement`` is the share of
  agreeing ordered vote pairs (Krippendorff's observed agreement, 1 − D_o), given for reference;
- ``alpha``: Krippendorff's α, nominal, over the multiply-labelled pairs (units with one vote are
  not pairable and drop out of α by definition). ``None`` when every vote has the same value.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from tvrbench.evaluation.fire.pairs import DISAGREEMENT, IRRELEVANT, RELEVANT, pair_votes
from tvrbench.evaluation.reliability import krippendorff_alpha_nominal
from tvrbench.results import Sources, Table, TablesOfJson, analysis_signature, count_or_share
from tvrbench.signature import Signature


@dataclass(frozen=True)
class AgreementStats:
    """One row of Table 2."""

    dataset: str
    pairs: int
    labels: int
    relevant: int
    irrelevant: int
    disagreements: int
    resolved: float
    multiply_labelled: int
    agreement: float | None
    pairwise_agreement: float | None
    alpha: float | None
    by_label_count: dict[str, dict] = field(default_factory=dict)

    def to_json(self) -> dict:
        row = asdict(self)
        row.pop("dataset")
        return row


def _nan_to_none(value: float) -> float | None:
    return None if np.isnan(value) else float(value)


def agreement_from_votes(dataset: str, label: np.ndarray, votes: np.ndarray) -> AgreementStats:
    """Table 2 row from per-pair resolved labels and (irrelevant, relevant) vote counts."""
    label = np.asarray(label)
    votes = np.asarray(votes, dtype=np.int64)
    per_pair = votes.sum(axis=1)
    multiple = per_pair >= 2
    unanimous = (votes[:, 0] == 0) | (votes[:, 1] == 0)
    relevant = int(np.sum(label == RELEVANT))
    irrelevant = int(np.sum(label == IRRELEVANT))
    n_multiple = int(multiple.sum())
    agreeing_pairs = np.sum(votes * (votes - 1), axis=1)  # ordered pairs of equal votes per unit
    all_pairs = per_pair * (per_pair - 1)
    by_count = {}
    for count in np.unique(per_pair[multiple]):
        members = per_pair == count
        by_count[str(int(count))] = {"pairs": int(members.sum()), "agreement": float(unanimous[members].mean())}
    return AgreementStats(
        dataset=dataset,
        pairs=len(label),
        labels=int(per_pair.sum()),
        relevant=relevant,
        irrelevant=irrelevant,
        disagreements=int(np.sum(label == DISAGREEMENT)),
        resolved=(relevant + irrelevant) / len(label) if len(label) else float("nan"),
        multiply_labelled=n_multiple,
        agreement=float(unanimous[multiple].mean()) if n_multiple else None,
        pairwise_agreement=float(agreeing_pairs[multiple].sum() / all_pairs[multiple].sum()) if n_multiple else None,
        alpha=_nan_to_none(krippendorff_alpha_nominal(votes)),
        by_label_count=by_count,
    )


def agreement(fire, rule: str = "file") -> dict[str, AgreementStats]:
    """Table 2 for every dataset of a FIRE file (``fire`` is a :class:`~tvrbench.io.fire.FireLabels`)."""
    pairs = pair_votes(fire)
    label = pairs.label(rule)
    return {
        name: agreement_from_votes(name, label[pairs.dataset == name], pairs.votes[pairs.dataset == name])
        for name in sorted(set(pairs.dataset.tolist()))
    }


def agreement_tables(payload: dict) -> list[Table]:
    """Table 2 from :class:`AgreementResult`'s JSON."""
    rows = [
        [
            name,
            *(count_or_share(s[key]) for key in ("pairs", "labels")),
            f"{s['resolved']:.1%}",
            *(count_or_share(s[key]) for key in ("relevant", "irrelevant", "disagreements", "agreement", "alpha")),
        ]
        for name, s in payload.items()
    ]
    columns = ["dataset", "pairs", "labels", "resolved", "relevant", "irrelevant", "disagreements", "agreement", "α"]
    return [Table("FIRE agreement (Table 2)", columns, rows)]


@dataclass(frozen=True)
class AgreementResult(TablesOfJson):
    """Table 2, a row per dataset."""

    stats: dict[str, AgreementStats]
    signature: Signature
    tables_of = staticmethod(agreement_tables)

    def to_json(self) -> dict:
        return {name: {**s.to_json(), "signature": str(self.signature)} for name, s in self.stats.items()}


def agreement_analysis(fire, rule: str = "file", sources: Sources | None = None) -> AgreementResult:
    """Table 2 with its signature (``sources["fire"]``: the FIRE file, whose digest the signature pins)."""
    return AgreementResult(agreement(fire, rule), analysis_signature("fire-agreement", sources, {"rule": rule, "alpha": "nominal"}))
