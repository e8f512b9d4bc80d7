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

With ``--embeddings``, instead: a model given as embeddings at that size (float32, ``--width`` 512:
each caption its video's embedding plus standard-normal noise, seed 0), evaluated on a LocalCluster of
2 worker processes (``evaluate(embedding_scores(text, video), client=...)``: every score block
computed on a worker, none written), against the in-memory engine on the saved product
``text @ video.T`` (3.4 GB); the metrics must agree within float32 rounding (1e-6), and the largest
difference is recorded.

    .venv/bin/python benchmarks/bench_sharded.py [--captions 130260] [--shard-rows 4096] [--embeddings [--width 512]]

Writes benchmarks/results/sharded.json (or sharded_embeddings.json); docs/scaling.md quotes them. Run it alone on the machine
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
    parser.add_argument("--embeddings", action="store_true", help="Evaluate a model given as embeddings on 2 workers instead.")
    parser.add_argument("--width", type=int, default=512)
    args = parser.parse_args()
    if args.embeddings:
        return embeddings_on_a_cluster(args.captions, args.width)
    from scipy import sparse

    from tvrbench.distributed import dask_client
    from tvrbench.evaluation import Judgments, evaluate
    from tvrbench.io.scores import open_scores

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
        shards = open_scores(parts)
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


def embeddings_on_a_cluster(n_captions: int, width: int) -> None:
    from scipy import sparse

    from tvrbench.distributed import dask_client
    from tvrbench.evaluation import Judgments, embedding_scores, evaluate

    rng = np.random.default_rng(0)
    n_videos = -(-n_captions // CAPTIONS_PER_VIDEO)
    video_embeddings = rng.standard_normal((n_videos, width), dtype=np.float32)
    video = np.arange(n_captions) // CAPTIONS_PER_VIDEO
    text_embeddings = video_embeddings[video] + 4 * rng.standard_normal((n_captions, width), dtype=np.float32)
    positive = sparse.csr_matrix((np.ones(video.size, bool), video, np.arange(video.size + 1)), shape=(n_captions, n_videos))
    judgments = Judgments.from_matrices(positive)
    report = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "text_embeddings": list(text_embeddings.shape),
        "video_embeddings": list(video_embeddings.shape),
        "load_average_at_start": os.getloadavg(),
    }
    started = time.perf_counter()
    reference = evaluate(text_embeddings @ video_embeddings.T, judgments)  # the saved product, in memory
    report["in_memory_product_seconds"] = time.perf_counter() - started
    scores = embedding_scores(text_embeddings, video_embeddings)
    report["blocks"] = len(scores)
    with dask_client(workers=2) as client:
        started = time.perf_counter()
        result = evaluate(scores, judgments, client=client)
        report["workers_2_seconds"] = time.perf_counter() - started  # first call: the scatter included
    difference = max(abs(result.metrics[key] - reference.metrics[key]) for key in reference.metrics)
    report["largest_metric_difference"] = difference
    report["metrics_equal"] = result.metrics == reference.metrics
    assert difference <= 1e-6 * max(1.0, max(abs(value) for value in reference.metrics.values())), f"metrics differ by {difference}"
    report["load_average_at_end"] = os.getloadavg()
    report["metrics"] = result.metrics
    path = RESULTS.with_name("sharded_embeddings.json")
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "metrics"}, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
