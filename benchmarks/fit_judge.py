"""Which score, read after how many of the collection's captions, tells the contrasts readers accept?

Every contrast that two readers (or more) read blind in ``results/`` is one example, accepted when
all of them said yes: ``verb_read.tsv`` and the review kits with their verdict files (``review_1k``,
``review_39``, ``review_47`` for verb contrasts; ``review_45``'s rounds for the word-edit kinds),
read through ``tvrbench.review``'s own readers. The language model reads each original and contrast
after a primer of 0, 1, 2, 4 or 8 captions of MSR-VTT's 1k-A split (:class:`~tvrbench.lm.primer.Primers`,
seed 0: never the caption's own video), and three scores are compared, new minus original:

* ``after``: how much more probable the words after the changed words are (the judge of issues 37–46;
  where the caption ends with its verb, the verb's PMI with the words before it, as ``ReadsAsReal``);
* ``verb+after``: the changed words and the words after them (the same PMI at the end);
* ``whole``: the whole sentence's per-token mean.

Each (primer, score) is scored by its AUC against "accepted" on the held-out folds of 5 folds × 20
repeats; ``selected`` is the AUC of choosing the best (primer, score) on the training folds and
scoring it on the held-out one, so the choice itself is cross-validated. Verb contrasts alone and
every kind are reported apart: the judge is the verb kind's.

Writes results/judge.json.

    .venv/bin/python benchmarks/fit_judge.py [--lm gemma3-270m] [--sizes 0 1 2 4 8]
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import RepeatedStratifiedKFold

from tvrbench.io.captions import read_captions
from tvrbench.lm.models import load_language_model
from tvrbench.lm.primer import Primers
from tvrbench.review.score import key_path, read_key, read_verdicts

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MSRVTT = ROOT.parent / "shared" / "data" / "msrvtt" / "MSRVTT_JSFUSION_test.csv"
VERB_KITS = ("review_1k", "review_39", "review_47")  # each with verdicts_*.csv
EDIT_KITS = ("review_45/round2", "review_45/round3")
SCORES = ("after", "verb+after", "whole")


def table_reads(path: Path, videos: dict[str, str]) -> list[dict]:
    """The contrasts of a two-reader TSV (source, caption_id, original, sentence read, reader 1, reader 2)."""
    rows = csv.DictReader(path.open(encoding="utf-8"), delimiter="\t")
    return [{"set": f"{path.stem}:{r['source']}", "verb": True, "video": videos[r["caption_id"]], "original": r["original"],
             "contrast": r["sentence read"], "accepted": r["reader 1"] == r["reader 2"] == "yes"}
            for r in rows if r["source"] != "real"]  # fmt: skip


def kit_reads(kit: Path, verb: bool) -> list[dict]:
    """The contrasts of a review kit, accepted when every reader said yes."""
    key = read_key(key_path(kit))
    verdicts = read_verdicts(sorted(kit.glob("verdicts_*.csv")), key)
    return [{"set": f"{kit.relative_to(RESULTS)}:{s['source']}", "verb": verb, "video": s["video_id"], "original": s["original"],
             "contrast": s["sentence"], "accepted": all(reader[s["number"]] == "yes" for reader in verdicts.values())}
            for s in key["sentences"] if s["role"] == "contrast"]  # fmt: skip


def cut(original: str, contrast: str) -> tuple[str, str, str, str]:
    """(left, original words, new words, right) of a contrast: the run of words between what they share."""
    a, b = original.split(), contrast.split()
    start = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    left = " ".join(a[:start]) + (" " if start else "")
    right = (" " if end else "") + " ".join(a[len(a) - end :])
    return left, " ".join(a[start : len(a) - end]), " ".join(b[start : len(b) - end]), right


def scores(lm, read: dict) -> dict:
    """The three scores of one contrast, new minus original, as the primed ``lm`` reads them."""
    left, old, new, right = cut(read["original"], read["contrast"])
    before, after = lm.span_logprobs(left, [old, new], right)
    changed = float(after.fill.sum() - before.fill.sum())
    if right.strip():
        continuation = float(after.right.sum() - before.right.sum())
        words = changed + continuation
    else:  # as ReadsAsReal: the new words' PMI with the words before them
        alone = [float(s.fill.sum()) for s in lm.span_logprobs(left[len(left.rstrip()) :], [old, new], "")]
        continuation = words = changed - (alone[1] - alone[0])
    return {"after": continuation, "verb+after": words, "whole": float(after.tokens.mean() - before.tokens.mean())}


def cross_validated(y: np.ndarray, columns: dict[str, np.ndarray]) -> tuple[dict[str, float], float, dict[str, int]]:
    """Each column's mean held-out AUC; the held-out AUC of the column best on the training folds; how
    often each column was that best."""
    folds = RepeatedStratifiedKFold(n_splits=5, n_repeats=20, random_state=0)
    held: dict[str, list[float]] = {name: [] for name in columns}
    selected, chosen = [], dict.fromkeys(columns, 0)
    for train, test in folds.split(np.zeros(len(y)), y):
        best = max(columns, key=lambda name: roc_auc_score(y[train], columns[name][train]))
        chosen[best] += 1
        selected.append(roc_auc_score(y[test], columns[best][test]))
        for name, column in columns.items():
            held[name].append(roc_auc_score(y[test], column[test]))
    return {name: round(float(np.mean(v)), 3) for name, v in held.items()}, round(float(np.mean(selected)), 3), chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lm", default="gemma3-270m")
    parser.add_argument("--sizes", type=int, nargs="+", default=[0, 1, 2, 4, 8], help="Captions in the primer.")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    captions = read_captions(MSRVTT)
    videos = dict(zip(captions.caption_ids, captions.video_ids))
    reads = table_reads(RESULTS / "verb_read.tsv", videos)
    reads += [read for kit in VERB_KITS if (RESULTS / kit).is_dir() for read in kit_reads(RESULTS / kit, True)]
    reads += [read for kit in EDIT_KITS for read in kit_reads(RESULTS / kit, False)]
    base = load_language_model(args.lm)
    columns: dict[str, list[float]] = {}
    for size in args.sizes:
        primers = Primers.draw(captions.texts, captions.video_ids, size, args.seed)
        for read in reads:
            for name, value in scores(base.primed(primers.text(read["video"])), read).items():
                columns.setdefault(f"{size}:{name}", []).append(value)
        print(f"primer of {size} captions: scored {len(reads)} contrasts", flush=True)
    result = {"lm": base.name, "sets": sorted({read["set"] for read in reads}), "groups": {}}
    for group, members in (("verb", [k for k, r in enumerate(reads) if r["verb"]]), ("every kind", list(range(len(reads))))):
        y = np.array([reads[k]["accepted"] for k in members])
        held, selected, chosen = cross_validated(y, {name: np.array(values)[members] for name, values in columns.items()})
        result["groups"][group] = {"contrasts": len(members), "accepted": int(y.sum()), "held_out_auc": held, "selected_auc": selected,
                                   "chosen": {name: n for name, n in chosen.items() if n}}  # fmt: skip
        print(f"\n{group}: {len(members)} contrasts, {int(y.sum())} accepted by every reader; held-out AUC (5 folds x 20)")
        print(f"{'captions in the primer':<24}" + "".join(f"{score:>12}" for score in SCORES))
        for size in args.sizes:
            print(f"{size:<24}" + "".join(f"{held[f'{size}:{score}']:>12.3f}" for score in SCORES))
        print(f"chosen on the training folds, scored on the held-out: {selected:.3f} ({result['groups'][group]['chosen']})")
    rows = [{**read, **{name: round(values[k], 4) for name, values in columns.items()}} for k, read in enumerate(reads)]
    text = json.dumps(result, indent=1)[:-2] + ',\n "rows": [\n' + ",\n".join(json.dumps(row) for row in rows) + "\n ]\n}\n"  # a row a line
    (RESULTS / "judge.json").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
