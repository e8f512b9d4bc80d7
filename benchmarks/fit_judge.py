"""Would a judge fitted to readers' verdicts tell plausible verb contrasts better than the continuation gap?

Every contrast two readers read blind (``results/verb_read.tsv``, and review kits with their verdict
files: ``results/review_1k``, ``results/review_39``, read through ``tvrbench.review``'s own readers, so a verdict file that does not
match its kit is one line naming the file and row) is one example: accepted when both said yes.
Its features come from the generator's own parts: the continuation gap as ``ReadsAsReal`` computes
it (the verb's PMI with the words before it where the caption ends with the verb), the whole
sentence's per-token gap, the verb's own log-probability gap, and the log10 Web share of the form
the contrast shows (``form-frequency``). Logistic regressions on subsets of them are scored by
cross-validated AUC (5 folds × 20 repeats) beside the gap alone on the same folds: issue 39 keeps a
fitted judge only if it beats the gap on reads it was not fitted to.

Writes results/judge.json.

    .venv/bin/python benchmarks/fit_judge.py [--kit DIR --verdicts A.csv --verdicts B.csv] [--lm gemma3-270m]
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import RepeatedStratifiedKFold

from tvrbench.generators.verb.evidence import web_log10
from tvrbench.lm.models import load_language_model
from tvrbench.review.score import key_path, read_key, read_verdicts

RESULTS = Path(__file__).resolve().parent / "results"
SUBSETS = (["gap"], ["gap", "whole"], ["gap", "form"], ["gap", "whole", "form"], ["gap", "whole", "verb", "form"], ["whole"], ["form"])


def table_reads(path: Path) -> list[dict]:
    """The contrasts of a two-reader TSV (source, caption_id, original, sentence read, reader 1, reader 2)."""
    rows = csv.DictReader(path.open(encoding="utf-8"), delimiter="\t")
    return [{"set": f"{path.stem}:{r['source']}", "original": r["original"], "contrast": r["sentence read"],
             "accepted": r["reader 1"] == r["reader 2"] == "yes"} for r in rows if r["source"] != "real"]  # fmt: skip


def kit_reads(kit: Path, verdict_files: list[Path]) -> list[dict]:
    """The contrasts of a review kit, accepted when every reader said yes."""
    key = read_key(key_path(kit))
    verdicts = read_verdicts(verdict_files, key)
    return [{"set": f"{kit.name}:{s['source']}", "original": s["original"], "contrast": s["sentence"],
             "accepted": all(reader[s["number"]] == "yes" for reader in verdicts.values())}
            for s in key["sentences"] if s["role"] == "contrast"]  # fmt: skip


def cut(original: str, contrast: str) -> tuple[str, str, str, str]:
    """(left, original words, new words, right) of a contrast that replaced one run of words."""
    a, b = original.split(), contrast.split()
    start = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    left = " ".join(a[:start]) + (" " if start else "")
    right = (" " if end else "") + " ".join(a[len(a) - end :])
    return left, " ".join(a[start : len(a) - end]), " ".join(b[start : len(b) - end]), right


def features(lm, read: dict) -> dict:
    left, old, new, right = cut(read["original"], read["contrast"])
    before, after = lm.span_logprobs(left, [old, new], right)
    verb = float(after.fill.sum() - before.fill.sum())
    if right.strip():
        gap = float(after.right.sum() - before.right.sum())
    else:  # as ReadsAsReal: the verbs' PMI with the words before them
        alone = [float(s.fill.sum()) for s in lm.span_logprobs(left[len(left.rstrip()) :], [old, new], "")]
        gap = verb - (alone[1] - alone[0])
    form = max(web_log10(new.split()[0]), -9.0)  # a form outside the 333,333 commonest words: rarer than 10^-7.9
    return {"gap": gap, "whole": float(after.tokens.mean() - before.tokens.mean()), "verb": verb, "form": form}


def cross_validated(x: np.ndarray, y: np.ndarray, gap: np.ndarray) -> tuple[float, float]:
    folds = RepeatedStratifiedKFold(n_splits=5, n_repeats=20, random_state=0)
    fitted, alone = [], []
    for train, test in folds.split(x, y):
        model = LogisticRegression().fit(x[train], y[train])
        fitted.append(roc_auc_score(y[test], model.decision_function(x[test])))
        alone.append(roc_auc_score(y[test], gap[test]))
    return float(np.mean(fitted)), float(np.mean(alone))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kit", type=Path, action="append", default=[], help="A review kit (its key.json); with its --verdicts after it.")
    parser.add_argument("--verdicts", type=Path, action="append", default=[], help="Verdict files of the kits, two per kit, in kit order.")
    parser.add_argument("--lm", default="gemma3-270m")
    args = parser.parse_args()
    kits = args.kit or [RESULTS / "review_1k", RESULTS / "review_39"]
    verdicts = args.verdicts or [kit / f"verdicts_{reader}.csv" for kit in kits for reader in "ab"]
    per_kit = len(verdicts) // len(kits)
    reads = table_reads(RESULTS / "verb_read.tsv")
    for k, kit in enumerate(kits):
        reads += kit_reads(kit, verdicts[k * per_kit : (k + 1) * per_kit])
    lm = load_language_model(args.lm)
    rows = [{**read, **features(lm, read)} for read in reads]
    y = np.array([row["accepted"] for row in rows])
    gap = np.array([row["gap"] for row in rows])
    single = {name: round(roc_auc_score(y, [row[name] for row in rows]), 3) for name in ("gap", "whole", "verb", "form")}
    judges = []
    for names in SUBSETS:
        x = np.array([[row[name] for name in names] for row in rows])
        fitted, alone = cross_validated(x, y, gap)
        judges.append({"features": names, "cv_auc": round(fitted, 3), "gap_alone_cv_auc": round(alone, 3)})
        print(f"{'+'.join(names):<24} cross-validated AUC {fitted:.3f}   the gap alone on the same folds {alone:.3f}")
    print(f"{len(rows)} contrasts read by two readers, {int(y.sum())} accepted by both; AUC of each feature alone: {single}")
    result = {"lm": lm.name, "contrasts": len(rows), "accepted": int(y.sum()), "sets": sorted({row["set"] for row in rows}),
              "auc": single, "judges": judges, "rows": rows}  # fmt: skip
    (RESULTS / "judge.json").write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
