"""The readers' verdicts on a review kit, scored: what share of each set people accept, and how far to trust it.

A sentence is *accepted* when every reader said yes; a set's reviewed share is its accepted
sentences over its sampled ones, with Wilson's 95 % interval. Real captions measure each reader's
care: one who accepts fewer than :data:`CARE` of them is flagged (they reject what people wrote).
Agreement is over every sentence: Cohen's κ for two readers, Krippendorff's α (nominal) for more.

The verdicts must answer the kit exactly: every reader one ``yes`` or ``no`` per number, no number
the kit lacks; a verdict file that carries the sentences must carry the kit's. A kit whose input
files have changed since it was made is refused: its sentences no longer say what the files hold.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.evaluation.reliability import cohen_kappa, krippendorff_alpha_nominal, wilson_interval
from tvrbench.io.csv_tables import read_csv
from tvrbench.io.files import read_text_file
from tvrbench.results import Table, TablesOfJson, analysis_signature
from tvrbench.review.kit import ANSWERS, KEY
from tvrbench.signature import Signature, input_digest

CARE = 0.8  # a reader who accepts fewer real captions than this is flagged


def key_path(kit: Path) -> Path:
    """The hidden key of kit folder ``kit`` (or ``kit`` itself, a key file)."""
    return kit / KEY if kit.is_dir() else kit


def read_key(path: Path) -> dict:
    """The key at ``path`` (:func:`key_path`); InputError when it is missing or not a kit's, or when a
    file the kit was made from has changed since (a file no longer there is not checked)."""
    try:
        key = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, "no such file; --kit is the folder `tvrbench contrast review-kit` wrote") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(path, f"is not a review kit's key ({error})") from None
    if not isinstance(key, dict) or not isinstance(key.get("sentences"), list) or not isinstance(key.get("sources"), list):
        raise InputError(path, "is not a review kit's key (no sentences or sources)")
    for source in key["sources"]:
        file = Path(source["file"])
        if file.is_file() and input_digest("contrast", file) != source["digest"]:
            raise InputError(file, f"has changed since the review kit {path.parent} was made from it; make a new kit")
    return key


def read_verdicts(paths: Sequence[Path], key: dict) -> dict[str, dict[int, str]]:
    """Reader → number → yes/no, from CSV files with columns ``number`` and ``verdict`` (``reader``:
    optional, else the file's name; ``sentence``: optional, checked against the kit)."""
    sentences = {entry["number"]: entry["sentence"] for entry in key["sentences"]}
    verdicts: dict[str, dict[int, str]] = defaultdict(dict)
    files: dict[str, Path] = {}
    for path in paths:
        for line, row in enumerate(read_csv(path, ("number", "verdict"), {"number": int}), start=2):
            reader = (row.get("reader") or "").strip() or path.stem
            number, verdict = row["number"], (row["verdict"] or "").strip().lower()
            if number not in sentences:
                raise InputError(path, f"line {line}: number {number} is not in the kit (1 to {len(sentences)})")
            if verdict not in ANSWERS:
                raise InputError(path, f"line {line}: verdict {row['verdict']!r} for number {number}; every verdict must be yes or no")
            if row.get("sentence") is not None and " ".join(row["sentence"].split()) != " ".join(sentences[number].split()):
                raise InputError(path, f"line {line}: sentence {number} is not the kit's ({sentences[number]!r}): a verdict file of another kit?")
            if number in verdicts[reader]:
                raise InputError(path, f"line {line}: reader {reader!r} answers number {number} twice")
            if files.setdefault(reader, path) != path:
                raise InputError(path, f"reader {reader!r} also answers in {files[reader]}; one file per reader, or name readers apart")
            verdicts[reader][number] = verdict
    for reader, answers in verdicts.items():
        missing = sorted(set(sentences) - set(answers))
        if missing:
            shown = ", ".join(map(str, missing[:8])) + (" …" if len(missing) > 8 else "")
            raise InputError(files[reader], f"reader {reader!r} has no verdict for {len(missing)} of {len(sentences)} sentences: {shown}")
    return dict(verdicts)


def _share(accepted: int, total: int) -> dict:
    interval = wilson_interval(accepted, total)
    return {"sentences": total, "accepted": accepted, "share": accepted / total if total else None, "interval": list(interval) if interval else None}


def score_verdicts(key: dict, verdicts: dict[str, dict[int, str]]) -> dict:
    """The review's figures (module docstring) as JSON: per source, per reader, agreement, and each sentence's votes."""
    readers = sorted(verdicts)
    entries = key["sentences"]
    yes = np.array([[verdicts[reader][entry["number"]] == "yes" for entry in entries] for reader in readers])  # readers × sentences
    accepted = yes.all(axis=0)
    sources = {}
    for source in key["sources"]:
        mine = np.array([entry["source"] == source["name"] for entry in entries])
        sources[source["name"]] = {
            "role": source["role"],
            "file": source["file"],
            "digest": source["digest"],
            **_share(int(accepted[mine].sum()), int(mine.sum())),
            "by_reader": {reader: float(yes[r, mine].mean()) if mine.any() else None for r, reader in enumerate(readers)},
        }
    real = np.array([entry["role"] == "caption" for entry in entries])
    care = {
        reader: {"real_accepted": float(yes[r, real].mean()) if real.any() else None, "flagged": bool(real.any() and yes[r, real].mean() < CARE)}
        for r, reader in enumerate(readers)
    }
    return {
        "kit": key.get("kit_id"),
        "question": key.get("question"),
        "readers": readers,
        "sources": sources,
        "care": care,
        "agreement": agreement(yes),
        "sentences": [
            {**{k: entry[k] for k in ("number", "source", "caption_id", "sentence")}, "accepted": bool(ok), "no": list(np.asarray(readers)[~votes])}
            for entry, ok, votes in zip(entries, accepted, yes.T)
        ],
    }


def agreement(yes: np.ndarray) -> dict:
    """The readers' agreement on every sentence: the unanimous share, and κ (two readers) or α (more)."""
    if len(yes) < 2:
        return {"statistic": None, "value": None, "unanimous": None}
    unanimous = float(np.mean(yes.all(axis=0) | (~yes).all(axis=0)))
    if len(yes) == 2:
        statistic, value = "cohen_kappa", cohen_kappa(yes[0], yes[1])
    else:
        counts = np.stack([yes.sum(axis=0), (~yes).sum(axis=0)], axis=1)  # sentences × (yes, no)
        statistic, value = "krippendorff_alpha", krippendorff_alpha_nominal(counts)
    return {"statistic": statistic, "value": None if np.isnan(value) else value, "unanimous": unanimous}


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f} %"


def _interval(figures: dict) -> str:
    low, high = figures["interval"] or (None, None)
    return "—" if low is None else f"{100 * low:.0f}–{100 * high:.0f} %"


STATISTIC_NAMES = {"cohen_kappa": "Cohen's κ", "krippendorff_alpha": "Krippendorff's α"}


def agreement_line(figures: dict) -> str:
    """One sentence on the readers' agreement (empty with one reader)."""
    if figures["statistic"] is None:
        return "One reader: no agreement to measure."
    value = "undefined (every verdict the same)" if figures["value"] is None else f"{figures['value']:.2f}"
    return f"Readers agree on {_percent(figures['unanimous'])} of the sentences; {STATISTIC_NAMES[figures['statistic']]} {value}."


def review_tables(payload: dict) -> list[Table]:
    """Accepted share per source; then each reader's care."""
    readers = payload["readers"]
    rows = [
        [name, figures["role"], f"{figures['sentences']:,}", f"{figures['accepted']:,}", _percent(figures["share"]), _interval(figures),
         *(_percent(figures["by_reader"][reader]) for reader in readers)]
        for name, figures in payload["sources"].items()
    ]  # fmt: skip
    flagged = [reader for reader in readers if payload["care"][reader]["flagged"]]
    notes = (
        "accepted: every reader said yes; 95 % CI: Wilson's interval of the accepted share.",
        agreement_line(payload["agreement"]),
        *([f"Flagged (accepted under {100 * CARE:.0f} % of the real captions): {', '.join(flagged)}."] if flagged else []),
    )
    care = payload["care"]
    care_rows = [[reader, _percent(care[reader]["real_accepted"]), "flagged" if care[reader]["flagged"] else "ok"] for reader in readers]
    return [
        Table(f"Blind review: {payload['question']}", ["set", "role", "sentences", "accepted", "share", "95 % CI", *readers], rows, notes),
        Table("Readers' care", ["reader", "real captions accepted", "care"], care_rows),
    ]


@dataclass(frozen=True)
class ReviewScore(TablesOfJson):
    """The scored review of one kit, with a signature pinning the kit's key and every verdict file."""

    figures: dict
    signature: Signature
    tables_of = staticmethod(review_tables)

    def to_json(self) -> dict:
        return {**self.figures, "signature": str(self.signature)}


def score_review(kit: Path, verdict_files: Sequence[Path]) -> ReviewScore:
    """Read kit folder ``kit``'s key and the filled ``verdict_files``, and score them."""
    key = read_key(key_path(kit))
    if not verdict_files:
        raise InputError(None, "no verdict file: give --verdicts FILE (one or more)")
    figures = score_verdicts(key, read_verdicts(verdict_files, key))
    signature = analysis_signature("review-score", {"kit": key_path(kit), "verdicts": list(verdict_files)}, {"readers": len(figures["readers"])})
    return ReviewScore(figures, signature)


def read_review(path: str | Path) -> dict:
    """A review's JSON (``review-score --json``); InputError unless it is one."""
    try:
        review = json.loads(read_text_file(path))
    except json.JSONDecodeError as error:
        raise InputError(path, f"is not JSON ({error})") from None
    if not isinstance(review, dict) or not {"sources", "sentences", "signature"} <= set(review):
        raise InputError(path, "is not a review's JSON (`tvrbench contrast review-score --json`)")
    return review


@dataclass(frozen=True)
class ContrastReview:
    """What a review says of one contrast file: the contrasts some reader rejected, and the figures an
    MC split built from it carries (``review`` in its sidecar)."""

    rejected: frozenset[tuple[str, str]]  # (caption id, contrast text)
    facts: dict


def review_of(review: dict, review_path: Path, contrast_path: Path, digest: str) -> ContrastReview:
    """The review of ``contrast_path`` (whose ``contrast`` digest is ``digest``) in ``review`` (read from
    ``review_path``); InputError when the file has changed since its kit was made, or was not reviewed there."""
    named = {name: figures for name, figures in review["sources"].items() if figures.get("role") == "contrast"}
    found = next((name for name, figures in named.items() if figures.get("digest") == digest), None)
    if found is None:
        same_file = [name for name, figures in named.items() if Path(figures.get("file", "")).resolve() == contrast_path.resolve()]
        if same_file:
            raise InputError(contrast_path, f"has changed since the review kit of {review_path} was made from it; review it again")
        raise InputError(contrast_path, f"was not reviewed in {review_path} (it reviewed {', '.join(named) or 'no contrast set'})")
    figures = named[found]
    rejected = frozenset((e["caption_id"], e["sentence"]) for e in review["sentences"] if e["source"] == found and not e["accepted"])
    facts = {
        "set": found,
        **{key: figures[key] for key in ("sentences", "accepted", "share", "interval")},
        "readers": len(review.get("readers", [])),
        "agreement": review.get("agreement"),
        "signature": review["signature"],
    }
    return ContrastReview(rejected, facts)


def reviewed_records(records: list, reviewed: Path, contrast_path: Path, contrast_digest: str) -> tuple[list, dict]:
    """The records no reader rejected in the review ``reviewed`` (``review-score --json``) of the contrast
    file ``contrast_path`` (whose digest is ``contrast_digest``), and the review's figures with how many
    were dropped: ``mc build --reviewed`` and ``contrast refine --reviewed``."""
    review = review_of(read_review(reviewed), reviewed, contrast_path, contrast_digest)
    kept = [record for record in records if (record.caption_id, record.contrast) not in review.rejected]
    return kept, {**review.facts, "dropped": len(records) - len(kept)}


def share_cell(figures: dict) -> str:
    """``62.5 % (47–76 %, n = 40)``: a reviewed share, its Wilson interval and the sentences read."""
    return f"{_percent(figures.get('share'))} ({_interval(figures)}, n = {figures['sentences']:,})"


def review_line(facts: dict) -> str:
    """One sentence on a split's reviewed share, for the audit, the card and the report."""
    readers = facts.get("readers") or 0
    line = (
        f"{readers} reader{'s' if readers != 1 else ''} accepted {_percent(facts.get('share'))} (95 % CI {_interval(facts)}) "
        f"of {facts['sentences']:,} sampled contrasts as real captions"
    )
    if "dropped" in facts:
        line += f"; the {facts['dropped']:,} contrast record(s) a reader rejected were left out of the split"
    return line + "."
