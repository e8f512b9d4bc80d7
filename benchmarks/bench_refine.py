"""Benchmark: adversarial refinement (issue 46) of every contrast kind made on the 1,000 MSR-VTT 1k-A
test captions, as a user runs it.

For each set (gender, verb and the word-edit kinds), in fresh processes:

* ``contrast refine --contrast SET --check lm:ngram --check lm:smollm2``: first with no cached scores
  (the language models score every pair), then again with the scores cached (the goal: ≤ 1 minute for
  1,000 pairs once the scores exist), and the two outputs compared byte for byte;
* from its sidecar: pairs in and kept, each scorer's accuracy before and after (the two it is balanced
  against, Gemma's whole-sentence preference and the cross-fitted hypothesis-only classifier, and the
  two it is not, CMU's trigram and SmolLM2), and the substitutes' entropy and top-10 share;
* the MC splits: Random MC, the kind's MC, and the kind's MC built with ``--refine``, each scored by
  the blind and the lm scorers (for MC, chance is what the Random split gives);
* the grid: kept share and every scorer after, for 1 to 5 cells a side (in process, on the cached scores).

A set that is missing from ``--sets`` is made first (``contrast KIND``). Writes benchmarks/results/refine.json.

    .venv/bin/python benchmarks/bench_refine.py --sets DIR [--kinds gender,verb]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_contrast import MSRVTT, RESULTS, cli  # noqa: E402  the same fresh-process runner

from tvrbench.generators.edits import EDIT_KINDS  # noqa: E402

CHECKS = ("--check", "lm:ngram", "--check", "lm:smollm2")


def attempt(*arguments: str) -> dict:
    """:func:`cli`, with a failure (exit 2: a set too small or too biased to balance) kept as its message."""
    try:
        return cli(*arguments)
    except SystemExit as failed:
        return {"error": str(failed).splitlines()[-1]}


def mc_accuracy(folder: Path, split: Path) -> dict:
    """The blind and lm scorers' accuracy on ``split`` (the Random split's, scored once, kept for every kind)."""
    scored = {}
    for scorer in ("blind", "lm"):
        result = folder / f"{split.stem}_{scorer}.json"
        if split.stem != "random" or not result.is_file():
            cli("mc", "score", "--mc", str(split), "--scorer", scorer, "--json", str(result))
        scored[scorer] = json.loads(result.read_text())["accuracy"]
    return {"instances": sum(1 for _ in split.open()) - 1, **scored}


def grid(records: Path) -> list[dict]:
    """Kept share and each scorer after, for 1 to 5 cells a side, from the scores the command cached."""
    from tvrbench.errors import InputError
    from tvrbench.generators.config import RefineConfig
    from tvrbench.generators.records import read_contrast_records
    from tvrbench.mc.refine import Pairs, refine_pairs

    read = read_contrast_records(records)
    pairs = Pairs([r.original for r in read], [r.contrast for r in read], np.arange(len(read)), len(read))
    rows = []
    for bins in range(1, 6):
        config = RefineConfig(bins=bins, checks=["lm:ngram", "lm:smollm2"])
        try:
            refinement = refine_pairs(pairs, config, {})
        except InputError as failed:  # a set too small or too biased to balance: the bench records why
            rows.append({"bins": bins, "error": str(failed)})
            continue
        payload = refinement.payload
        rows.append({"bins": bins, "kept": payload["kept"], "kept_share": payload["kept_share"],
                     "after": {s["name"].split("(")[0]: s["after"]["accuracy"] for s in payload["scorers"]}})  # fmt: skip
    return rows


def measure(kind: str, sets: Path, work: Path) -> dict:
    from tvrbench.home import cache_dir

    records = sets / f"{kind}.jsonl"
    made = None
    if not records.is_file():
        made = cli("contrast", kind, "--captions", str(MSRVTT), "--out", str(records))
    shutil.rmtree(cache_dir() / "refine", ignore_errors=True)  # the first call scores every pair
    out, again = work / f"{kind}.refined.jsonl", work / f"{kind}.again.jsonl"
    first = attempt("contrast", "refine", "--contrast", str(records), "--out", str(out), *CHECKS)
    if "error" in first:
        return {"pairs": len(records.read_text().splitlines()), "error": first["error"], "wall_s_first": None}
    cached = cli("contrast", "refine", "--contrast", str(records), "--out", str(again), *CHECKS)
    sidecar = json.loads(Path(f"{out}.json").read_text())
    refinement = sidecar["refinement"]
    splits = {"random": work / "random.tsv", "plain": work / f"{kind}.tsv", "refined": work / f"{kind}.refined.tsv"}
    if not splits["random"].is_file():
        cli("mc", "build", "--captions", str(MSRVTT), "--kind", "random", "--out", str(splits["random"]))
    build = ("mc", "build", "--captions", str(MSRVTT), "--kind", kind, "--contrast", str(records))
    cli(*build, "--out", str(splits["plain"]))
    refined_mc = attempt(*build, "--refine", "--out", str(splits["refined"]))
    return {
        "pairs": refinement["pairs"],
        "kept": refinement["kept"],
        "kept_share": refinement["kept_share"],
        "scorers": {
            s["name"].split("(")[0]: {
                "role": s["role"],
                "before": s["before"]["accuracy"],
                "after": s["after"]["accuracy"],
                "after_interval": s["after"]["interval"],
            }
            for s in refinement["scorers"]
        },  # fmt: skip
        "substitutes": {
            side: {key: refinement["substitutes"][side][key] for key in ("entropy_bits", "top10_share", "distinct", "top1", "top1_share")}
            for side in ("before", "after")
        },
        "wall_s_first": round(first["wall_s"], 1),
        "peak_rss_mb_first": round(first["peak_rss_mb"]),
        "wall_s_cached": round(cached["wall_s"], 1),
        "peak_rss_mb_cached": round(cached["peak_rss_mb"]),
        "same_bytes_twice": out.read_bytes() == again.read_bytes() and Path(f"{out}.json").read_bytes() == Path(f"{again}.json").read_bytes(),
        "mc": {
            name: mc_accuracy(work, path) if path.is_file() and (name != "refined" or "error" not in refined_mc) else refined_mc.get("error")
            for name, path in splits.items()
        },
        "grid": grid(records),
        **({"generated_in_s": round(made["wall_s"], 1)} if made else {}),
        "signature": sidecar["signature"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", type=Path, required=True, help="Folder of KIND.jsonl contrast files on the 1k-A captions.")
    parser.add_argument("--kinds", default=",".join(["gender", "verb", *EDIT_KINDS]))
    args = parser.parse_args()
    args.sets.mkdir(parents=True, exist_ok=True)
    work = args.sets / "refine"
    work.mkdir(exist_ok=True)
    written = RESULTS / "refine.json"
    results = json.loads(written.read_text()) if written.is_file() else {"sets": {}}  # --kinds updates those kinds only
    results.update(machine={"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(), "python": platform.python_version()},
                   captions=str(MSRVTT))  # fmt: skip
    for kind in args.kinds.split(","):
        results["sets"][kind] = measure(kind, args.sets, work)
        print(kind, json.dumps({k: v for k, v in results["sets"][kind].items() if k not in ("grid", "signature")}), flush=True)
        RESULTS.mkdir(exist_ok=True)
        written.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
