"""Benchmark: ``tvrbench demo`` against its budget (the whole pipeline in under 2 minutes on 2 cores).

Runs the demo in a subprocess twice: ``cold`` (an empty numba cache, as on a fresh clone: the
ranking and proxy kernels compile) and ``warm`` (the cache that run left). Records wall time, the
child's CPU time and peak RSS, the per-step times the demo prints, and the load average before and
after (the machine may be shared: CPU time is the figure that does not depend on the neighbours).
Prints each run's ratio to the 120 s budget. Writes benchmarks/results/demo.json.

    .venv/bin/python benchmarks/bench_demo.py
"""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).parent / "results" / "demo.json"
BUDGET_SECONDS = 120.0
STEP = re.compile(r"^\$ tvrbench (?P<command>.+)\n  \((?P<seconds>[0-9.]+) s\)$", re.MULTILINE)


def run(out: Path, numba_cache: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load_before = os.getloadavg()
    started = time.perf_counter()
    env = {**os.environ, "NUMBA_CACHE_DIR": str(numba_cache)}
    result = subprocess.run([sys.executable, "-m", "tvrbench", "demo", "--out", str(out)], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        raise SystemExit(f"demo failed:\n{result.stderr[-2000:]}")
    steps = [(m["command"].split(" --")[0], float(m["seconds"])) for m in STEP.finditer(result.stderr)]
    return {
        "wall_s": round(wall, 2),
        "cpu_s": round((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), 2),
        "peak_rss_mb": round(after.ru_maxrss / 1024, 1),
        "ratio_to_budget": round(wall / BUDGET_SECONDS, 3),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "slowest_steps": sorted(({"command": c, "seconds": s} for c, s in steps), key=lambda x: -x["seconds"])[:5],
    }


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        runs = {name: run(scratch / name, scratch / "numba-cache") for name in ("cold", "warm")}
    for name, figures in runs.items():
        print(
            f"{name}: {figures['wall_s']:.1f} s wall ({figures['ratio_to_budget']:.2f} of the {BUDGET_SECONDS:.0f} s budget), "
            f"{figures['cpu_s']:.1f} s CPU, peak RSS {figures['peak_rss_mb']:.0f} MB, load {figures['load_average_before'][0]:.1f}"
        )
    payload = {
        "benchmark": "tvrbench demo on the embedded sample",
        "budget_s": BUDGET_SECONDS,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "runs": runs,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
