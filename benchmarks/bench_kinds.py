"""Benchmark: every word-edit contrast kind (object, attribute, relation, counting, swap, add, event order)
on the 1,000 MSR-VTT 1k-A test captions, as a user runs it (issue 45).

Each kind runs as a fresh process (``python -m tvrbench.cli contrast KIND``) with the default judge,
first call and model loading included; the figures are read from the files it writes:

* captions with a target, records, coverage (records / captions with a target; goal ≥ 80 %);
* captions per second of the whole command (goal ≥ 5 on 2 cores) and its peak memory (the child's max RSS);
* the LM preference: the share of pairs where the default LM prefers the original (goal ≤ 60 %);
* the hypothesis-only accuracy of the bag-of-words audit (goal ≤ 65 %);
* the substitutes' spread: the commonest substitute's share of the records (goal: none over 5 %),
  the number of distinct substitutes, and the audit's top-10 share of the words contrasts bring in;
* the blind scorer and the LM scorer on the kind's MC split (chance 20 %).

Writes benchmarks/results/kinds.json; ``--keep DIR`` keeps the contrast files (for a review kit).

    .venv/bin/python benchmarks/bench_kinds.py [--kinds object,attribute] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_contrast import MSRVTT, RESULTS, cli  # noqa: E402  the same fresh-process runner

from tvrbench.generators.edits import EDIT_KINDS  # noqa: E402


def share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def measure(kind: str, folder: Path) -> dict:
    out = folder / f"{kind}.jsonl"
    run = cli("contrast", kind, "--captions", str(MSRVTT), "--out", str(out))
    sidecar = json.loads(Path(f"{out}.json").read_text())
    records = [json.loads(line) for line in out.read_text().splitlines()]
    counts = sidecar["counts"]
    with_target = counts["captions"] - counts.get("no target", 0) - counts.get("longer than 100 words", 0)
    substitutes = Counter(record["details"]["substitute"] for record in records)
    commonest, top = substitutes.most_common(1)[0] if substitutes else (None, 0)
    audit = sidecar["audit"]
    split = folder / f"{kind}.tsv"
    cli("mc", "build", "--captions", str(MSRVTT), "--kind", kind, "--contrast", str(out), "--out", str(split))
    scorers = {}
    for scorer in ("blind", "lm"):
        cli("mc", "score", "--mc", str(split), "--scorer", scorer, "--json", str(folder / f"{kind}_{scorer}.json"))
        scorers[scorer] = json.loads((folder / f"{kind}_{scorer}.json").read_text())["accuracy"]
    return {
        "counts": counts,
        "captions_with_target": with_target,
        "records": counts["records"],
        "coverage": counts["records"] / with_target if with_target else None,
        "wall_s": round(run["wall_s"], 1),
        "captions_per_s": round(counts["captions"] / run["wall_s"], 2),
        "peak_rss_mb": round(run["peak_rss_mb"]),
        "lm_prefers_original": sidecar["plausibility"]["prefers_original"],
        "lm": sidecar["plausibility"]["lm"],
        "hypothesis_only_accuracy": (audit["hypothesis_only"] or {}).get("accuracy"),
        "commonest_substitute": commonest,
        "commonest_substitute_share_of_records": top / len(records) if records else None,
        "distinct_substitutes": len(substitutes),
        "substitute_words_top10_share": audit["substitutes"]["top10_share"],
        "mc_instances": sum(1 for _ in split.open()) - 1,
        "mc_blind_accuracy": scorers["blind"],
        "mc_lm_accuracy": scorers["lm"],
        "signature": run["stdout"].splitlines()[-1],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", default=",".join(EDIT_KINDS), help="comma-separated kinds (default: all)")
    parser.add_argument("--keep", type=Path, help="keep the contrast files and MC splits here")
    args = parser.parse_args()
    if not MSRVTT.is_file():
        sys.exit(f"MSR-VTT 1k-A captions not found: {MSRVTT}")
    folder = Path(tempfile.mkdtemp(prefix="tvrbench-kinds-"))
    results = {
        "benchmark": "word-edit contrast kinds on MSR-VTT 1k-A (1,000 captions)",
        "cpus": os.cpu_count(),
        "machine": platform.processor() or platform.machine(),
    }
    results["kinds"] = {}
    for kind in args.kinds.split(","):
        results["kinds"][kind] = found = measure(kind, folder)
        print(
            f"{kind}: {found['records']}/{found['captions_with_target']} = {share(found['coverage'])} coverage, {found['captions_per_s']} "
            f"captions/s, {found['peak_rss_mb']} MB, LM prefers original {share(found['lm_prefers_original'])}, "
            f"hypothesis-only {share(found['hypothesis_only_accuracy'])}, commonest {found['commonest_substitute']} "
            f"{share(found['commonest_substitute_share_of_records'])}",
            flush=True,
        )
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        for path in folder.iterdir():
            shutil.copy2(path, args.keep / path.name)
    shutil.rmtree(folder)
    target = RESULTS / "kinds.json"
    previous = json.loads(target.read_text()) if target.is_file() else {}
    results["kinds"] = {**previous.get("kinds", {}), **results["kinds"]}  # a run of some kinds keeps the others' figures
    target.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
