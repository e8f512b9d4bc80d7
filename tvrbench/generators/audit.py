"""Can a split's contrast option be told from its positive by text alone? (SPEC §5, "Audit of a split"; docs/audit.md)

A hard-negative split is worth publishing only if nothing but the video separates the contrast from
the positive. Three pair-level figures, from plain (positive, contrast) texts, so the contrast
generator puts them in its own sidecar (:func:`audit_pairs`):

- **hypothesis-only**: a bag-of-words logistic regression, 5-fold over pairs, asked which of the two
  texts is the contrast (chance 50 %), and the words it leans on most (the giveaways);
- **substitute words**: the words a contrast brings in (its side of difflib's ``replace`` and
  ``insert`` opcodes): a few words doing all the work is a regularity a model learns;
- **LM preference**: how often a language model prefers the positive (:func:`~tvrbench.lm.models.preference`).

:func:`tvrbench.mc.audit.audit_split` adds the text-only MC scorers of :mod:`tvrbench.mc.score` on a
whole split, beside a reference split's figures when given. :func:`pair_reading` says in plain words what the
three pair figures mean, against chance and tvrbench's targets (SPEC §5), so that nobody needs the
docs to answer "is it biased?".
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tvrbench.lm.models import LanguageModel, Preference, preference

FOLDS = 5
TOP = 10  # giveaway and substitute words listed
# SPEC §5's targets for a contrast set: a language model prefers the original about as often as on Park
# et al.'s own sets, and no substitute word, nor the ten commonest, bring in a large share of the words.
LM_BAND = (0.45, 0.60)
COMMONEST_AT_MOST = 0.03
TOP10_AT_MOST = 0.20
TOKEN_PATTERN = r"(?u)\b\w+\b"  # scikit-learn's default without its two-letter minimum: "a" and "s" count
_TOKENS = re.compile(TOKEN_PATTERN)


def tokens(text: str) -> list[str]:
    """Lower-cased words as the vectorizer sees them, so giveaway and substitute words are the same units."""
    return _TOKENS.findall(text.lower())


def hypothesis_only(positives: Sequence[str], contrasts: Sequence[str], seed: int = 0, folds: int = FOLDS) -> dict | None:
    """Held-out accuracy of a bag-of-words logistic regression at telling the contrast from the positive,
    and its giveaway words (fit on all pairs); None with fewer than two pairs per fold.

    Pairwise: x = bow(a) − bow(b), y = whether a is the contrast, (a, b) oriented by a seeded shuffle
    that flips exactly half the pairs (a balanced coin: every training fold then holds both classes).
    No intercept, since swapping a and b negates x and flips y; the vocabulary is fitted on the training
    folds only, so a held-out word the training pairs never used counts for nothing.
    """
    fitted = _cross_fitted(positives, contrasts, seed, folds)
    if fitted is None:
        return None
    vectorizer, model = fitted.fit_all()
    weighted = sorted(zip(vectorizer.get_feature_names_out().tolist(), model.coef_[0].tolist()), key=lambda item: (-item[1], item[0]))
    return {
        "accuracy": fitted.accuracy,
        "folds": folds,
        "giveaways": {
            "contrast": [{"word": w, "weight": v} for w, v in weighted if v > 0][:TOP],
            "positive": [{"word": w, "weight": v} for w, v in reversed(weighted) if v < 0][:TOP],
        },
    }


def hypothesis_only_gaps(positives: Sequence[str], contrasts: Sequence[str], seed: int = 0, folds: int = FOLDS) -> tuple[np.ndarray, float] | None:
    """Each pair's held-out decision of :func:`hypothesis_only`'s classifier, signed so that a positive
    value picks the right text (the contrast as the contrast), at 6 decimals: a pair is scored by the
    model fitted on the other folds (cross-fitting). 0 where the pair's differing words were never seen
    in training. Also :func:`hypothesis_only`'s accuracy, in which such a pair counts as its seeded
    orientation falls; None with fewer than two pairs per fold."""
    fitted = _cross_fitted(positives, contrasts, seed, folds)
    if fitted is None:
        return None
    gaps = np.where(fitted.y == 1, fitted.decision, -fitted.decision)
    return np.round(gaps, 6) + 0.0, fitted.accuracy  # + 0.0: no negative zero


@dataclass(frozen=True)
class _CrossFit:
    """The classifier's held-out decision on each pair as oriented (``y``: its first text is the contrast),
    and the fit on every pair, made only when asked (the giveaway words)."""

    decision: np.ndarray
    y: np.ndarray
    fit_all: Callable[[], tuple]

    @property
    def accuracy(self) -> float:
        return float(np.mean((self.decision > 0) == self.y))  # scikit-learn's predict: a zero decision is class 0


def _cross_fitted(positives: Sequence[str], contrasts: Sequence[str], seed: int, folds: int) -> _CrossFit | None:
    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import KFold

    n = len(positives)
    if n < 2 * folds:
        return None
    flipped = np.random.default_rng(seed).permutation(n) < n // 2  # a is the contrast
    first = [c if f else p for p, c, f in zip(positives, contrasts, flipped)]
    second = [p if f else c for p, c, f in zip(positives, contrasts, flipped)]
    y = flipped.astype(int)

    def fit(rows):
        vectorizer = CountVectorizer(token_pattern=TOKEN_PATTERN).fit([first[i] for i in rows] + [second[i] for i in rows])
        return vectorizer, LogisticRegression(fit_intercept=False, max_iter=10_000).fit(difference(vectorizer, rows), y[rows])

    def difference(vectorizer, rows):
        return vectorizer.transform([first[i] for i in rows]) - vectorizer.transform([second[i] for i in rows])

    decision = np.zeros(n)
    for train, test in KFold(folds, shuffle=True, random_state=seed).split(first):
        vectorizer, model = fit(train)
        decision[test] = model.decision_function(difference(vectorizer, test))
    return _CrossFit(decision, y, lambda: fit(np.arange(n)))


def substitute_words(positives: Sequence[str], contrasts: Sequence[str]) -> list[str]:
    """Every word a contrast brings in: its side of the ``replace`` and ``insert`` opcodes against its positive."""
    found = []
    for positive, contrast in zip(positives, contrasts):
        b = tokens(contrast)
        for tag, _, _, start, end in difflib.SequenceMatcher(None, tokens(positive), b, autojunk=False).get_opcodes():
            if tag in ("replace", "insert"):
                found += b[start:end]
    return found


def substitute_figures(words: Sequence[str]) -> dict:
    """Distinct count, Shannon entropy (bits), shares of the commonest ten and of the commonest one, the
    ten with their counts (ties by word)."""
    ranked = sorted(Counter(words).items(), key=lambda item: (-item[1], item[0]))
    total = len(words)
    p = np.array([count for _, count in ranked]) / max(total, 1)
    return {
        "tokens": total,
        "distinct": len(ranked),
        "entropy_bits": float(np.sum(p * np.log2(1 / p))) if total else None,
        "top10_share": sum(count for _, count in ranked[:TOP]) / total if total else None,
        "top1_share": ranked[0][1] / total if total else None,
        "top1": ranked[0][0] if total else None,
        "top10": [{"word": word, "count": count} for word, count in ranked[:TOP]],
    }


@dataclass(frozen=True)
class PairAudit:
    """The pair-level figures of (positive, contrast) texts; ``hypothesis_only`` None below 10 pairs."""

    pairs: int
    seed: int
    hypothesis_only: dict | None
    substitutes: dict
    lm_preference: Preference

    def to_json(self) -> dict:
        return {
            "pairs": self.pairs, "seed": self.seed, "hypothesis_only": self.hypothesis_only,
            "substitutes": self.substitutes, "lm_preference": self.lm_preference.to_json(),
        }  # fmt: skip


def audit_pairs(
    positives: Sequence[str], contrasts: Sequence[str], lm: LanguageModel, seed: int = 0, measured: Sequence[Sequence[float]] | None = None
) -> PairAudit:
    """Hypothesis-only baseline, substitute words and LM preference of contrasts against their positives
    (``measured``: the pairs' per-token means when the LM has scored them already)."""
    if len(positives) != len(contrasts):
        raise ValueError(f"{len(positives)} positives but {len(contrasts)} contrasts")
    return PairAudit(
        len(positives),
        seed,
        hypothesis_only(positives, contrasts, seed),
        substitute_figures(substitute_words(positives, contrasts)),
        preference(lm, positives, contrasts, measured),
    )


def percent(share) -> str:
    return "—" if share is None else f"{100 * share:.1f} %"


def _number(value, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _commonest(substitutes: dict) -> str:
    return "—" if substitutes["top1"] is None else f"{substitutes['top1']} ({percent(substitutes['top1_share'])})"


def summary_cells(audit: dict) -> dict[str, str]:
    """The headline figures of a :class:`PairAudit`'s JSON as text, for the dataset card and the report."""
    hypothesis, substitutes, lm = audit.get("hypothesis_only") or {}, audit["substitutes"], audit["lm_preference"]
    return {
        "hypothesis-only accuracy (chance 50 %)": percent(hypothesis.get("accuracy")),
        "substitute entropy (bits)": _number(substitutes["entropy_bits"], 2),
        "distinct substitutes": f"{substitutes['distinct']:,}",
        "top-10 substitute share": percent(substitutes["top10_share"]),
        "LM prefers the original": percent(lm["prefers_original"]),
    }


def pair_rows(audits: Sequence[dict]) -> list[list[str]]:
    """One row per figure of :class:`PairAudit` JSONs, one column each: the audit table's, and the dataset card's."""

    def row(label: str, cell) -> list[str]:  # cell: a pair audit -> text
        return [label, *map(cell, audits)]

    return [
        row("pairs (contrast, positive)", lambda audit: f"{audit['pairs']:,}"),
        row("hypothesis-only accuracy (chance 50 %)", lambda audit: percent((audit["hypothesis_only"] or {}).get("accuracy"))),
        row("substitute words", lambda audit: f"{audit['substitutes']['tokens']:,}"),
        *substitute_rows([audit["substitutes"] for audit in audits]),
        row("LM prefers the positive", lambda audit: percent(audit["lm_preference"]["prefers_original"])),
        row("LM median gap (nats/token)", lambda audit: _number(audit["lm_preference"]["median_gap_nats_per_token"])),
    ]


def substitute_rows(spreads: Sequence[dict]) -> list[list[str]]:
    """How varied the substitute words are (:func:`substitute_figures`), one column each: the audit
    table's rows, and a refinement's before and after."""
    return [
        ["distinct substitutes", *(f"{spread['distinct']:,}" for spread in spreads)],
        ["substitute entropy (bits)", *(_number(spread["entropy_bits"], 2) for spread in spreads)],
        ["top-10 substitute share", *(percent(spread["top10_share"]) for spread in spreads)],
        ["commonest substitute", *map(_commonest, spreads)],
    ]


def pair_reading(audit: dict) -> list[str]:
    """What a :class:`PairAudit` JSON's figures say, one plain sentence each: the wording (hypothesis-only
    against chance), the substitute words (against the targets) and fluency (against the LM band)."""
    return [_wording(audit), _substitutes(audit["substitutes"]), *([_fluency(audit["lm_preference"])] if audit["lm_preference"]["pairs"] else [])]


def _wording(audit: dict) -> str:
    """Above chance when past two standard errors of a fair coin over the pairs (a rough 95 % bar)."""
    accuracy, pairs = (audit["hypothesis_only"] or {}).get("accuracy"), audit["pairs"]
    if accuracy is None:
        return f"Too few pairs ({pairs}) for the bag-of-words test of the wording: it needs {2 * FOLDS}."
    found = f"a bag-of-words model finds it in {percent(accuracy)} of {pairs:,} pairs, chance 50 %"
    bar = 0.5 + 1 / np.sqrt(pairs)
    if accuracy > bar:
        return f"The wording gives the contrast away: {found}."
    return f"No clear sign that the wording gives the contrast away: {found} (chance alone reaches {percent(bar)} at {pairs:,} pairs)."


def _substitutes(substitutes: dict) -> str:
    needed = int(np.ceil(max(1 / COMMONEST_AT_MOST, TOP / TOP10_AT_MOST)))  # fewer words cannot meet both, however varied
    targets = f"tvrbench's targets: the commonest at most {100 * COMMONEST_AT_MOST:g} % of them, the ten commonest at most {100 * TOP10_AT_MOST:g} %"
    words = substitutes["tokens"]
    if not words:
        return "No contrast brings in a word of its own (deletions only), so no substitute word can give it away."
    if words < needed:
        return f"Too few substitute words ({words:,}) to judge their spread ({targets}, which takes at least {needed} words)."
    top1, top10 = percent(substitutes["top1_share"]), percent(substitutes["top10_share"])
    shares = f"the commonest, '{substitutes['top1']}', is {top1} of them and the ten commonest {top10}"
    if substitutes["top1_share"] <= COMMONEST_AT_MOST and substitutes["top10_share"] <= TOP10_AT_MOST:
        return f"The substitute words are varied: {shares} ({targets})."
    return f"A few substitute words do much of the work, a regularity a model can learn: {shares} ({targets})."


def _fluency(preference: dict) -> str:
    """Outside the band by less than two standard errors over the pairs is said to be not clearly so."""
    share, pairs = preference["prefers_original"], preference["pairs"]
    low, high = LM_BAND
    band = f"the {100 * low:g}–{100 * high:g} % of Park et al.'s own sets"
    found = f"a language model prefers the positive in {percent(share)} of {pairs:,} pairs"
    if low <= share <= high:
        return f"The contrasts read as fluently as real captions: {found}, within {band}."
    side, where, effect = (
        ("less", "above", "fluency helps give them away") if share > high else ("more", "below", "a model that favours fluent text picks them")
    )
    if min(abs(share - high), abs(share - low)) <= 1 / np.sqrt(pairs):
        return f"The contrasts may read {side} fluently than real captions: {found}, {where} {band}, though not clearly at {pairs:,} pairs."
    return f"The contrasts read {side} fluently than real captions, so {effect}: {found}, {where} {band}."
