"""Benchmark: evaluating a score matrix held as row shards, against the in-memory engine.

Scores at MSR-VTT's training size, 130,260 captions x 6,513 videos (20 captions per video), float32
(3.4 GB), a useful model (each caption's video raised by 2 over standard-normal noise, seed 0); the
original pairs as labels, the default metrics (text-to-video, and nDCG both ways). The same matrix
as one ``.npy`` and as a folder of ``.npy`` row shards of ``--shard-rows`` rows. Timed, each after
one warm-up call (numba loads its kernels once per process) and with the files in the page cache:

* the in-memory engine on the whole matrix (``np.load`` + ``evaluate``: all cores, column ranks cut
  at nDCG's cutoff);
* the sharded path in this process (two passes over the shards, all cores);
* the sharded path on a LocalCluster of 1 and of 2 single-threaded worker processes.

Every result is checked equal to the in-memory one (1e-12).

    .venv/bin/python benchmarks/bench_sharded.py [--captions 130260] [--shard-rows 4096]

Writes benchmarks/results/sharded.json; docs/scaling.md quotes it. Run it alone on the machine
(``flock /tmp/tvrbench-bench.lock ...``): the figures are wall times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "sharded.json"
CAPTIONS_PER_VIDEO = 20


def matrix(n_captions: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    n_videos = -(-n_captions // CAPTIONS_PER_VIDEO)
    scores = rng.standard_normal((n_captions, n_videos), dtype=np.float32)
    video = np.arange(n_captions) // CAPTIONS_PER_VIDEO
    scores[np.arange(n_captions), video] += 2.0
    return scores, video


def timed(function) -> tuple[float, object]:
    function()  # warm-up
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--captions", type=int, default=130_260)
    parser.add_argument("--shard-rows", type=int, default=4096)
    args = parser.parse_args()
    from scipy import sparse

    from tvrbench.distributed import dask_client
    from tvrbench.evaluation import Judgments, evaluate
    from tvrbench.io.shards import open_shards

    scores, video = matrix(args.captions)
    positive = sparse.csr_matrix((np.ones(video.size, bool), video, np.arange(video.size + 1)), shape=scores.shape)
    judgments = Judgments.from_matrices(positive)
    report = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "shape": list(scores.shape),
        "shard_rows": args.shard_rows,
        "load_average_at_start": os.getloadavg(),
    }
    with tempfile.TemporaryDirectory(dir=os.environ.get("TVRBENCH_BENCH_TMP")) as folder:
        whole, parts = Path(folder) / "scores.npy", Path(folder) / "shards"
        np.save(whole, scores)
        parts.mkdir()
        for number, start in enumerate(range(0, scores.shape[0], args.shard_rows)):
            np.save(parts / f"part-{number:05d}.npy", scores[start : start + args.shard_rows])
        del scores
        shards = open_shards(parts)
        report["shards"] = len(shards)
        seconds, reference = timed(lambda: evaluate(np.load(whole), judgments))
        report["in_memory_seconds"] = seconds
        runs = {"in_process": None, "workers_1": 1, "workers_2": 2}
        for name, workers in runs.items():
            with dask_client(workers=workers) as client:
                seconds, result = timed(lambda: evaluate(shards, judgments, client=client))
            difference = max(abs(result.metrics[key] - reference.metrics[key]) for key in reference.metrics)
            assert difference <= 1e-12, f"{name}: metrics differ by {difference}"
            report[f"{name}_seconds"] = seconds
    report["speedup_2_workers_over_1"] = report["workers_1_seconds"] / report["workers_2_seconds"]
    report["load_average_at_end"] = os.getloadavg()
    report["metrics"] = reference.metrics
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "metrics"}, indent=1))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
