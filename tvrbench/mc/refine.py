"""Adversarial refinement of contrast sets and MC splits (SugarCrepe, Hsieh et al. NeurIPS 2023; SPEC §5
"Refinement"; docs/refine.md): keep a subset on which text-only scorers are at chance.

A scorer's *gap* on an (original, contrast) pair is how much more it favours the original: the language
model's per-token log-probability of the original minus the contrast's; the hypothesis-only classifier's
held-out decision, signed so that it is positive when it names the right text. A positive gap is a pair
the scorer gets right without the video.

Each scorer's gap falls in a cell by its sign and its size (``bins`` quantiles of the nonzero sizes,
over all pairs; a gap of 0 is a cell of its own), and a pair's cell is the tuple of its scorers' cells.
A cell is kept with as many pairs as its mirror holds, the cell with every sign flipped: a seeded draw
within the fuller one. Every pair a scorer gets right is then matched by one it gets wrong at the same
size of gap, for every scorer at once, so each is at chance on the kept pairs (a tie counts half). A
cell and its mirror constrain no other cell, so keeping min(|cell|, |mirror|) of each is the largest
subset so balanced (``tests/mc/test_refine.py`` checks it against every subset of small cases).

The language model's scores are cached under ``$TVRBENCH_HOME/refine`` by the pairs' texts and the
model's name, so a second run (another grid, another seed, the MC split of the same contrasts) takes
seconds.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.evaluation.reliability import wilson_interval
from tvrbench.generators.audit import audit_pairs, hypothesis_only_gaps, percent, substitute_figures, substitute_rows, substitute_words
from tvrbench.generators.config import RefineConfig
from tvrbench.generators.records import ContrastRecord, read_contrast_records, record_line
from tvrbench.home import cache_dir
from tvrbench.io.atomic import atomic_write, write_json, write_npy
from tvrbench.io.sidecars import read_sidecar, sidecar_path
from tvrbench.lm.models import load_language_model, mean_logprobs
from tvrbench.numerics import NATS_PER_TOKEN
from tvrbench.progress import track
from tvrbench.results import Table, TablesOfJson
from tvrbench.review.score import reviewed_records
from tvrbench.signature import Signature, input_digest, text_digest

HYPOTHESIS_ONLY = "hypothesis-only"
SCORED_AT_ONCE = 64  # texts a language model scores between two progress updates
# What the kept pairs depend on beside the settings: the classifier, and the language models' libraries.
REFINE_LIBRARIES = ("numpy", "scikit-learn", "transformers", "torch", "pocketsphinx")


# --------------------------------------------------------------------------- the grid


def grid_cells(gaps: np.ndarray, bins: int) -> np.ndarray:
    """Each pair's cell (pairs × scorers): ± (1 + the quantile bin of the gap's size), 0 for a gap of 0."""
    gaps = np.asarray(gaps, dtype=float).reshape(len(gaps), -1)
    cells = np.zeros(gaps.shape, dtype=np.int64)
    for column, gap in enumerate(gaps.T):
        size = np.abs(gap)
        nonzero = size > 0
        if not nonzero.any():
            continue
        edges = np.quantile(size[nonzero], np.linspace(0, 1, bins + 1)[1:-1])
        cells[:, column] = np.sign(gap).astype(np.int64) * (1 + np.searchsorted(edges, size, side="right"))
    return cells


def balanced_subset(gaps: np.ndarray, bins: int, seed: int) -> np.ndarray:
    """The indices (ascending) of the largest subset in which every cell of :func:`grid_cells` holds as
    many pairs as its mirror; within the fuller of the two, a seeded draw."""
    cells = grid_cells(gaps, bins)
    members: dict[tuple, list[int]] = {}
    for index, cell in enumerate(map(tuple, cells.tolist())):
        members.setdefault(cell, []).append(index)
    rng = np.random.default_rng(seed)
    kept: list[int] = []
    for cell in sorted(members):
        mirror = tuple(-c for c in cell)
        if mirror == cell:  # every gap 0: no scorer is right or wrong here
            kept += members[cell]
        elif cell < mirror:
            count = min(len(members[cell]), len(members.get(mirror, [])))
            for side in (cell, mirror):
                if count:
                    kept += rng.choice(members[side], count, replace=False).tolist()
    return np.array(sorted(kept), dtype=np.int64)


def scorer_accuracy(gaps: np.ndarray, correct: float | None = None) -> dict:
    """How often a scorer picks the original: right (gap > 0), ties (gap 0, counted half unless the scorer
    has its own rule: ``correct`` pairs), the share and its Wilson 95 % interval."""
    gaps = np.asarray(gaps, dtype=float)
    right, ties = int(np.sum(gaps > 0)), int(np.sum(gaps == 0))
    correct = right + ties / 2 if correct is None else correct
    interval = wilson_interval(correct, len(gaps))
    return {
        "pairs": len(gaps), "right": right, "ties": ties,
        "accuracy": correct / len(gaps) if len(gaps) else None, "interval": list(interval) if interval else None,
    }  # fmt: skip


# --------------------------------------------------------------------------- the scorers


@dataclass(frozen=True)
class Pairs:
    """The (original, contrast) texts refined, and each one's place among the input file's records
    (where a user's ``.npy`` of gaps, one per record, is read)."""

    originals: list[str]
    contrasts: list[str]
    positions: np.ndarray
    records_in_file: int


def lm_means(spec: str, pairs: Pairs) -> tuple[str, np.ndarray]:
    """(the model's name, pairs × 2 per-token mean log-probabilities of original and contrast at
    ``NATS_PER_TOKEN`` decimals), cached by the texts and the model's name."""
    lm = load_language_model(spec)
    path = cache_dir() / "refine" / f"{text_digest([lm.name, *pairs.originals, *pairs.contrasts], 24)}.npy"
    if path.is_file():
        try:
            cached = np.load(path, allow_pickle=False)
            if cached.shape == (len(pairs.originals), 2):
                return lm.name, cached
        except (OSError, ValueError):
            pass  # a damaged cache is scored again
    texts = list(dict.fromkeys([*pairs.originals, *pairs.contrasts]))
    chunks = [texts[start : start + SCORED_AT_ONCE] for start in range(0, len(texts), SCORED_AT_ONCE)]
    scored = [mean_logprobs(lm, chunk) for chunk in track(chunks, f"scoring with {spec}", total=len(texts), size=len, unit="texts")]
    mean = dict(zip(texts, np.round(np.concatenate(scored) if scored else np.zeros(0), NATS_PER_TOKEN)))
    means = np.array([[mean[o], mean[c]] for o, c in zip(pairs.originals, pairs.contrasts)]).reshape(-1, 2)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_npy(path, means)
    return lm.name, means


@dataclass(frozen=True)
class Scored:
    """A scorer's gap on each pair, what it is (for the signature and the table), and its accuracy."""

    described: str
    gaps: np.ndarray
    accuracy: dict


def scorer_label(described: str) -> str:
    """A scorer as a table shows it: its model without the pins (the JSON and the signature keep them)."""
    head = described.split("(")[0]
    return head.removeprefix("file=").split(":")[0] if head.startswith("file=") else head.replace("lm:causal=", "lm:")


def scorer_gaps(name: str, pairs: Pairs, config: RefineConfig, repeats: int | None = None) -> Scored:
    """A scorer's gaps on ``pairs``. The hypothesis-only classifier's gap is the mean of ``repeats``
    cross-fittings (seeds ``seed``, ``seed + 1``, ...: docs/refine.md, "The grid"), its accuracy ``mc
    audit``'s at ``seed`` (a pair it has no evidence on counts as its seeded orientation falls), so the
    two agree; the others count a tie half."""
    if name == HYPOTHESIS_ONLY:
        repeats = config.repeats if repeats is None else repeats
        fits = [
            hypothesis_only_gaps(pairs.originals, pairs.contrasts, config.seed + r, config.folds) for r in range(repeats)
        ]  # enough pairs: checked
        gaps = np.round(np.mean([gaps for gaps, _ in fits], axis=0), 6) + 0.0
        described = f"{HYPOTHESIS_ONLY}({config.folds}-fold,{repeats}x,seed={config.seed})"
        return Scored(described, gaps, scorer_accuracy(gaps, fits[0][1] * len(gaps)))
    if name == "lm" or name.startswith("lm:"):
        model, means = lm_means(config.lm if name == "lm" else name[3:], pairs)
        gaps = np.round(means[:, 0] - means[:, 1], NATS_PER_TOKEN)
        return Scored(f"lm:{model}", gaps, scorer_accuracy(gaps))
    described, gaps = _saved_gaps(Path(name), pairs)
    return Scored(described, gaps, scorer_accuracy(gaps))


def _saved_gaps(path: Path, pairs: Pairs) -> tuple[str, np.ndarray]:
    """A user's gaps: a ``.npy`` of one float per record of the contrast file, positive where the scorer
    favours the original (never unpickled)."""
    if not path.is_file():
        raise InputError(path, "no such file of gaps")
    try:
        gaps = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        raise InputError(path, "not a .npy array of numbers (saved without pickle)") from None
    if gaps.ndim != 1 or gaps.dtype.kind not in "fiu" or len(gaps) != pairs.records_in_file:
        raise InputError(path, f"expected one gap per contrast record ({pairs.records_in_file}), found an array of shape {gaps.shape}")
    if not np.isfinite(gaps).all():
        raise InputError(path, "has gaps that are not finite numbers")
    return f"file={path.name}:{input_digest('gaps', path)}", gaps.astype(float)[pairs.positions]


# --------------------------------------------------------------------------- the result


def refinement_tables(payload: dict) -> list[Table]:
    """Each scorer's accuracy before and after, then the substitute words' spread before and after."""
    kept, pairs, substitutes = payload["kept"], payload["pairs"], payload["substitutes"]
    rows = [[s["label"], s["role"], _accuracy_cell(s["before"]), _accuracy_cell(s["after"])] for s in payload["scorers"]]
    title = f"Adversarial refinement: {pairs:,} pairs in, {kept:,} kept ({percent(kept / pairs if pairs else None)})"
    return [
        Table(title, ["scorer (accuracy: picks the original; chance 50 %)", "role", "before (95 % CI)", "after (95 % CI)"], rows,
              notes=tuple(refinement_reading(payload))),
        Table("Substitute words before and after", ["figure", "before", "after"], substitute_rows([substitutes["before"], substitutes["after"]])),
    ]  # fmt: skip


def _accuracy_cell(figures: dict) -> str:
    if figures.get("accuracy") is None:
        return "—"
    low, high = figures["interval"]
    return f"{percent(figures['accuracy'])} ({100 * low:.1f}–{100 * high:.1f} %)"


def refinement_reading(payload: dict) -> list[str]:
    """What the table says: how the pairs were kept, and which scorers they leave at chance (50 % inside
    the interval)."""
    settings = payload["settings"]
    lines = [
        f"Balanced on {settings['bins']} cell(s) a side of each balanced scorer's gap (seed {settings['seed']}); a tie counts half, "
        "the hypothesis-only classifier's as mc audit counts it. After: the same scores on the kept pairs; the classifier fitted again on them."
    ]
    for scorer in payload["scorers"]:
        if scorer["after"].get("interval") is not None:
            low, high = scorer["after"]["interval"]
            lines.append(f"{scorer['label']}: {'at chance' if low <= 0.5 <= high else 'not at chance'} on the kept pairs.")
    return lines


def refinement_line(payload: dict) -> str:
    """One sentence on a refined set, for the audit, the card and the report: what was kept, against
    which scorers, and each scorer before → after."""
    scorers = "; ".join(
        f"{s['label']} ({s['role']}) {percent(s['before']['accuracy'])} → {percent(s['after']['accuracy'])}" for s in payload["scorers"]
    )
    return (
        f"Adversarially refined: {payload['kept']:,} of {payload['pairs']:,} pairs kept ({percent(payload['kept_share'])}), "
        f"balanced against {' and '.join(payload['settings']['scorers'])}; how often each picks the original, before → after: {scorers}."
    )


@dataclass(frozen=True)
class Refinement(TablesOfJson):
    """What a refinement did: pairs in and kept, each scorer's accuracy before and after, the substitutes'
    spread before and after (``payload``), and the kept pairs' indices among those given."""

    payload: dict
    kept: np.ndarray
    signature: Signature
    tables_of = staticmethod(refinement_tables)

    def to_json(self) -> dict:
        return {**self.payload, "signature": str(self.signature)}

    @property
    def summary(self) -> str:
        """One line for the console: pairs in, kept, each balanced scorer before → after."""
        scorers = "; ".join(f"{s['label']} {percent(s['before']['accuracy'])} → {percent(s['after']['accuracy'])}" for s in self.payload["scorers"])
        return f"kept {self.payload['kept']:,} of {self.payload['pairs']:,} pairs ({scorers})"


def refine_pairs(pairs: Pairs, config: RefineConfig, sources: dict[str, str], source: Path | None = None) -> Refinement:
    """Balance ``pairs`` against ``config.scorers``, measure ``config.checks`` beside; ``sources``: the
    inputs' digests for the signature. InputError (naming ``source``) when no pair can be kept."""
    needed = 2 * config.folds if HYPOTHESIS_ONLY in [*config.scorers, *config.checks] else 2
    if len(pairs.originals) < needed:
        why = f"the {config.folds}-fold hypothesis-only scorer needs {needed}" if needed > 2 else "a balanced subset needs 2"
        raise InputError(source, f"{len(pairs.originals)} pair(s) to refine: too few to balance ({why})")
    scored = {name: scorer_gaps(name, pairs, config) for name in dict.fromkeys([*config.scorers, *config.checks])}
    gaps = np.stack([scored[name].gaps for name in config.scorers], axis=1)
    kept = balanced_subset(gaps, config.bins, config.seed)
    if not len(kept):
        best = max(config.scorers, key=lambda name: scored[name].accuracy["accuracy"])
        raise InputError(
            source,
            f"no balanced subset of its {len(pairs.originals)} pairs: {best} picks the original in "
            f"{percent(scored[best].accuracy['accuracy'])} of them, with no pair to match against; "
            "refine against other scorers (contrast refine --scorer), or make more contrasts",
        )
    kept_pairs = Pairs([pairs.originals[i] for i in kept], [pairs.contrasts[i] for i in kept], pairs.positions[kept], pairs.records_in_file)
    rows = []
    for name, before in scored.items():
        if name == HYPOTHESIS_ONLY:  # fitted again on the kept pairs: what an audit of the refined set finds
            refit = scorer_gaps(name, kept_pairs, config, repeats=1) if len(kept) >= 2 * config.folds else None
            after = refit.accuracy if refit else {"pairs": len(kept), "accuracy": None, "interval": None}
        else:
            after = scorer_accuracy(before.gaps[kept])
        rows.append(
            {
                "name": before.described,
                "label": scorer_label(before.described),
                "role": "balanced" if name in config.scorers else "check",
                "before": before.accuracy,
                "after": after,
            }
        )
    words = [substitute_figures(substitute_words(p.originals, p.contrasts)) for p in (pairs, kept_pairs)]
    described = [scored[name].described for name in config.scorers]
    payload = {
        "pairs": len(pairs.originals), "kept": len(kept), "kept_share": len(kept) / len(pairs.originals),
        "settings": {"scorers": described, "checks": [scored[name].described for name in config.checks], "bins": config.bins,
                     "seed": config.seed, "folds": config.folds},
        "scorers": rows,
        "substitutes": {"before": words[0], "after": words[1]},
    }  # fmt: skip
    checks = {"checks": "+".join(payload["settings"]["checks"])} if config.checks else {}
    signature = Signature({"refine": "+".join(described), **checks, "bins": config.bins, "seed": config.seed}, libraries=REFINE_LIBRARIES)
    for name, value in sources.items():
        signature.add(name, value)
    return Refinement(payload, kept, signature)


# --------------------------------------------------------------------------- files


def refined_audit(pairs: Pairs, refinement: Refinement, config: RefineConfig) -> tuple[dict, dict]:
    """The plausibility line and text-only audit of the kept pairs (the judge's cached scores)."""
    kept = refinement.kept
    originals, contrasts = [pairs.originals[i] for i in kept], [pairs.contrasts[i] for i in kept]
    lm = load_language_model(config.lm)
    _, means = lm_means(config.lm, pairs)
    audit = audit_pairs(originals, contrasts, lm, config.seed, measured=means[kept].tolist())
    return audit.lm_preference.to_json(), audit.to_json()


def refine_contrast_file(
    contrast: str | Path, out: str | Path, config: RefineConfig = RefineConfig(), reviewed: str | Path | None = None
) -> Refinement:
    """Write the kept records of ``contrast`` (after leaving out what readers rejected in ``reviewed``)
    to ``out``, in the file's order, with a sidecar: the refinement, and the kept set's plausibility
    and audit, which ``mc build`` carries into the split."""
    contrast, out = Path(contrast), Path(out)
    records = read_contrast_records(contrast)
    digest = input_digest("contrast", contrast)
    sources = {"contrast": digest}
    review = None
    chosen = records
    if reviewed is not None:
        chosen, review = reviewed_records(records, Path(reviewed), contrast, digest)
        sources["reviewed"] = input_digest("review", reviewed)
    place = {id(record): index for index, record in enumerate(records)}
    pairs = Pairs([r.original for r in chosen], [r.contrast for r in chosen], np.array([place[id(r)] for r in chosen], dtype=np.int64), len(records))
    refinement = refine_pairs(pairs, config, sources, contrast)
    plausibility, audit = refined_audit(pairs, refinement, config)
    kept: list[ContrastRecord] = [chosen[i] for i in refinement.kept]
    saved = read_sidecar(contrast)
    sidecar = {
        "signature": str(refinement.signature),
        "kind": kept[0].kind,
        "source": {"file": str(contrast), "signature": saved.get("signature")},
        "counts": {"records in": len(records), **({"rejected by readers": review["dropped"]} if review else {}), "records kept": len(kept)},
        "refinement": refinement.to_json(),
        "plausibility": plausibility,
        "audit": audit,
        **({"review": review} if review else {}),
    }
    out.unlink(missing_ok=True)  # as a contrast run: no records beside an old sidecar
    write_json(sidecar_path(out), sidecar)
    with atomic_write(out) as handle:
        for record in kept:
            handle.write(record_line(record))
    return refinement
