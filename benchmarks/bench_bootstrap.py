"""Benchmark: the §4.3 bootstrap at MSVD size, vectorized vs a plain per-resample loop.

27,763 queries (the MSVD test captions), per-query C@1 / C@5 / C@10 drawn with the paper's
CLIP4CLIP rates, sizes 500 / 1,000 / 3,000, 10,000 resamples each, seed 0. The loop reference
draws ``rng.integers(0, n, N, dtype=int32)`` once per resample from the same generator, so both must give the
same numbers; the script checks that and prints the speed ratio and the vectorized run's peak
memory (tracemalloc). Writes benchmarks/results/bootstrap.json.

    .venv/bin/python benchmarks/bench_bootstrap.py [--queries 27763] [--resamples 10000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
import tracemalloc
from pathlib import Path

os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")  # as the tvrbench command does

import numpy as np

from tvrbench.evaluation.fire.bootstrap import bootstrap_differences, index_dtype

RESULTS = Path(__file__).parent / "results" / "bootstrap.json"
VIDEOS = 670  # MSVD test videos
RATES = {"C@1": 0.653, "C@5": 0.896, "C@10": 0.940}  # CLIP4CLIP on MSVD with FIRE (Table 1)


def loop_reference(per_query: dict, sizes, resamples: int, seed: int) -> dict:
    """|resample mean − full mean| with one rng call and one mean per resample."""
    out = {}
    for metric, values in per_query.items():
        out[metric] = {}
        for size in sizes:
            rng = np.random.default_rng([seed, size])
            means = np.empty(resamples)
            for r in range(resamples):
                means[r] = values[rng.integers(0, len(values), size, dtype=index_dtype(len(values)))].mean()
            out[metric][size] = np.abs(means - values.mean())
    return out


def engine_metrics(n_queries: int, seed: int) -> dict:
    """Per-query C@1/5/10 from the evaluation engine on a random MSVD-sized score matrix."""
    from scipy import sparse

    from tvrbench.evaluation import Judgments, evaluate

    rng = np.random.default_rng(seed)
    own = np.arange(n_queries) % VIDEOS
    scores = rng.random((n_queries, VIDEOS), dtype=np.float32)
    scores[np.arange(n_queries), own] += 0.002  # a weak model
    positive = sparse.csr_matrix((np.ones(n_queries, bool), (np.arange(n_queries), own)), shape=scores.shape)
    return evaluate(scores, Judgments.from_matrices(positive), metrics=tuple(RATES)).per_query


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=27_763)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = (500, 1000, 3000)
    rng = np.random.default_rng(12345)
    uniform = rng.random(args.queries)
    per_query = {metric: (uniform < rate).astype(np.float64) for metric, rate in RATES.items()}  # nested, as C@K is

    tracemalloc.start()
    started = time.perf_counter()
    fast = bootstrap_differences(per_query, sizes, args.resamples, args.seed)
    vectorized_seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    started = time.perf_counter()
    slow = loop_reference(per_query, sizes, args.resamples, args.seed)
    loop_seconds = time.perf_counter() - started

    # end to end as `tvrbench fire bootstrap` runs it: the engine's per-query C@K, then the bootstrap
    started = time.perf_counter()
    engine_per_query = engine_metrics(args.queries, args.seed)
    bootstrap_differences(engine_per_query, sizes, args.resamples, args.seed)
    end_to_end_seconds = time.perf_counter() - started

    largest = max(float(np.max(np.abs(fast[m][s].differences - slow[m][s]))) for m in RATES for s in sizes)
    p95 = {m: {str(s): fast[m][s].quantile for s in sizes} for m in RATES}
    result = {
        "queries": args.queries,
        "sizes": list(sizes),
        "resamples": args.resamples,
        "seed": args.seed,
        "metrics": list(RATES),
        "vectorized_seconds": round(vectorized_seconds, 3),
        "loop_seconds": round(loop_seconds, 3),
        "speedup": round(loop_seconds / vectorized_seconds, 1),
        "max_abs_difference_vs_loop": largest,
        "vectorized_peak_mib": round(peak / 2**20, 1),
        "end_to_end_seconds_with_engine_670_videos": round(end_to_end_seconds, 3),
        "p95": p95,
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "load_average_1min": round(os.getloadavg()[0], 2),
        },
    }
    print(f"{args.queries:,} queries, sizes {sizes}, {args.resamples:,} resamples, {len(RATES)} metrics")
    print(
        f"vectorized {vectorized_seconds:.2f} s (peak {peak / 2**20:.1f} MiB) | loop {loop_seconds:.2f} s | "
        f"{loop_seconds / vectorized_seconds:.1f}x | max |difference| {largest:.1e}"
    )
    print(f"end to end with the engine (scores {args.queries:,} x {VIDEOS}): {end_to_end_seconds:.2f} s")
    for metric in RATES:
        print(f"  {metric} p95: " + ", ".join(f"N={s}: {p95[metric][str(s)]:.4f}" for s in sizes))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
