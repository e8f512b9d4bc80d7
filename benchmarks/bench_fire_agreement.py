"""Benchmark: Table 2 (``tvrbench fire agreement``) on a FIRE file of the real size.

Generates the io benchmark's synthetic FIRE file (benchmarks/bench_fire_load.py: ~683K labels,
MSR-VTT and MSVD, ~200 MB shape) and, each in a fresh interpreter so peak RSS (VmHWM) is its own:

- ``tvrbench``: read_fire + pair grouping + Table 2 and α for both datasets (what the command does);
- ``reference``: json.load, a dict of votes per pair in plain Python (a pair's label: the majority
  of its records' labels), α from the ``krippendorff`` package; its numbers must equal ours.

Writes benchmarks/results/fire_agreement.json.

    .venv/bin/python benchmarks/bench_fire_agreement.py [--labels 683000]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_fire_load import generate_fire  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "fire_agreement.json"

OURS = r"""
import json, sys, time
start = time.perf_counter()
from tvrbench.io.fire import read_fire
from tvrbench.evaluation.fire.agreement import agreement
labels = read_fire(sys.argv[1])
loaded = time.perf_counter() - start
table = {name: stats.to_json() for name, stats in agreement(labels).items()}
seconds = time.perf_counter() - start
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({"seconds": seconds, "load_seconds": loaded, "peak_rss_mb": int(status["VmHWM"].split()[0]) / 1024,
                  "table": table}))
"""

REFERENCE = r"""
import json, sys, time
import krippendorff, numpy as np
start = time.perf_counter()
with open(sys.argv[1], encoding="utf-8") as handle:
    data = json.load(handle)
votes, labels = {}, {}
for section in ("annotations", "disagreements"):
    for record in data[section]:
        key = (record["dataset"], record["query"], record["video_id"])
        tally = votes.setdefault(key, [0, 0])
        for vote in record["annotator_labels"]:
            tally[vote == "relevant"] += 1
        records = labels.setdefault(key, [0, 0])  # relevant, irrelevant records: their majority is the label
        if record.get("label") is not None:
            records[record["label"] == "irrelevant"] += 1
table = {}
for name in sorted({key[0] for key in votes}):
    keys = [key for key in votes if key[0] == name]
    counts = np.array([votes[key] for key in keys])
    single = ["relevant" if labels[key][0] > labels[key][1] else "irrelevant" if labels[key][0] < labels[key][1]
              else None for key in keys]
    multiple = counts.sum(axis=1) >= 2
    table[name] = {"pairs": len(keys), "labels": int(counts.sum()), "relevant": single.count("relevant"),
                   "irrelevant": single.count("irrelevant"), "disagreements": single.count(None),
                   "agreement": float(((counts[:, 0] == 0) | (counts[:, 1] == 0))[multiple].mean()),
                   "alpha": float(krippendorff.alpha(value_counts=counts, level_of_measurement="nominal"))}
seconds = time.perf_counter() - start
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({"seconds": seconds, "peak_rss_mb": int(status["VmHWM"].split()[0]) / 1024, "table": table}))
"""


def run(script: str, path: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", script, str(path)], check=True, capture_output=True, text=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=683_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "fire_bench.json"
        started = time.perf_counter()
        counts = generate_fire(path, args.labels, args.seed)
        print(f"generated {counts} in {time.perf_counter() - started:.1f} s", flush=True)
        ours, reference = run(OURS, path), run(REFERENCE, path)
    for name, expected in reference["table"].items():
        got = ours["table"][name]
        for field, value in expected.items():
            assert abs(got[field] - value) <= 1e-9, (name, field, got[field], value)
    report = {
        "file": {**counts, "mb": round(counts["bytes"] / 2**20, 1), "seed": args.seed},
        "tvrbench": {key: round(ours[key], 2) for key in ("seconds", "load_seconds", "peak_rss_mb")},
        "reference": {key: round(reference[key], 2) for key in ("seconds", "peak_rss_mb")},
        "ratios_tvrbench_over_reference": {
            "seconds": round(ours["seconds"] / reference["seconds"], 3),
            "peak_rss": round(ours["peak_rss_mb"] / reference["peak_rss_mb"], 3),
        },
        "table": ours["table"],
        "load_average_1min": round(__import__("os").getloadavg()[0], 2),  # 2 cores shared: times vary with load
    }
    print(json.dumps({k: report[k] for k in ("tvrbench", "reference", "ratios_tvrbench_over_reference")}, indent=1))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
