"""The evaluation engine against ranx, ir_measures and one plain pass over the matrix.

Sizes: MSR-VTT full test (59,800 captions × 2,990 videos, 20 captions per video) and MSVD
(27,763 × 670, about 41 per video). Scores are float32 from a simulated model: standard normal
noise plus a boost on the true pair calibrated to a CLIP4Clip-like Correct@1 near 0.45.

Measured in one run, best of ``--repeat``:
* ``tvrbench``: ``evaluate()`` with all metrics (C@1/5/10, R@5, P@5, AP, MdR, MnR, GMR, nDCG both
  directions, Judged@10) on the in-memory matrix;
* ``argmax``: ``numpy.argmax(S, axis=1)``, the floor any metric pays (timed in turns with tvrbench);
* ``ranx`` and ``ir_measures``: conversion of the matrix to their dict inputs plus their
  evaluation of the same metrics. Their dicts need ~100 bytes per cell, so they run on the first
  ``--peer-rows`` queries and the time is scaled by rows (their cost is linear in rows; the script
  checks that with two sizes); tvrbench is timed on the same rows too, for a like-for-like ratio.
* peak memory of ``evaluate()`` in a fresh process: (matrix + what evaluate adds) / matrix;
* on the MSVD shape with 10 and 30 judged videos per caption (the positive plus judged-irrelevant
  ones at random, as FIRE-style labels give): ``evaluate()`` with all metrics, which then also
  reports the original-only result, against ``argmax``.

Usage: ``python benchmarks/bench_evaluation.py [--repeat 3] [--peer-rows 1000]``; writes
``benchmarks/results/evaluation.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")  # as the tvrbench command does

import numpy as np
from scipy import sparse

from tvrbench.evaluation import Judgments, evaluate
from tvrbench.signature import Signature

METRICS = ["C@1", "C@5", "C@10", "R@5", "P@5", "AP", "MdR", "MnR", "GMR", "nDCG", "Judged@10"]
T2V_METRICS = [name for name in METRICS if name != "nDCG"]  # every metric but the two-direction nDCG
SIZES = {"msrvtt-full": (59_800, 2_990), "msvd": (27_763, 670)}
JUDGED_PER_CAPTION = (10, 30)  # FIRE-style labels: many labelled cells per row
RESULTS = Path(__file__).parent / "results" / "evaluation.json"


def simulated(n_queries: int, n_videos: int, seed: int = 0):
    """Scores and labels of a plausible model: each caption's video gets a boost."""
    rng = np.random.default_rng(seed)
    video_of = np.minimum(np.arange(n_queries) * n_videos // n_queries, n_videos - 1)
    scores = rng.standard_normal((n_queries, n_videos), dtype=np.float32)
    scores[np.arange(n_queries), video_of] += np.float32(3.0)
    positive = sparse.csr_matrix((np.ones(n_queries, bool), (np.arange(n_queries), video_of)), shape=(n_queries, n_videos))
    return scores, Judgments.from_matrices(positive)


def with_judged_videos(judgments: Judgments, per_caption: int, seed: int = 1) -> Judgments:
    """The same positives, plus judged-irrelevant videos at random up to ``per_caption`` judged
    videos per caption, as FIRE-style labels give: every row then has that many labelled cells."""
    rng = np.random.default_rng(seed)
    n_queries, n_videos = judgments.shape
    columns = rng.integers(0, n_videos, (n_queries, per_caption - 1))
    irrelevant = sparse.csr_matrix(
        (np.ones(columns.size, bool), (np.repeat(np.arange(n_queries), per_caption - 1), columns.ravel())), shape=judgments.shape
    )
    return Judgments.from_matrices(judgments.positive, irrelevant=irrelevant)


def best_of(repeat: int, function) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        times.append(time.perf_counter() - start)
    return min(times), value


def best_of_interleaved(repeat: int, functions: dict) -> dict[str, float]:
    """Best time of each function, the functions taking turns: a slow spell of the machine then
    touches all of them alike, so their ratios stay honest."""
    times: dict[str, list[float]] = {name: [] for name in functions}
    for _ in range(repeat):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            times[name].append(time.perf_counter() - start)
    return {name: min(values) for name, values in times.items()}


def peer_inputs(scores: np.ndarray, judgments: Judgments):
    positive = judgments.positive.tocoo()
    qrels: dict[str, dict[str, int]] = {}
    for row, column in zip(positive.row, positive.col):
        qrels.setdefault(f"q{row}", {})[f"v{column}"] = 1
    names = [f"v{c}" for c in range(scores.shape[1])]
    run = {f"q{row}": dict(zip(names, scores[row].tolist())) for row in range(scores.shape[0])}
    return qrels, run


def time_ranx(scores, judgments):
    import ranx

    qrels, run = peer_inputs(scores, judgments)
    names = ["hit_rate@1", "hit_rate@5", "hit_rate@10", "recall@5", "precision@5", "map", "ndcg"]
    return ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), names)


def time_ir_measures(scores, judgments):
    import ir_measures
    from ir_measures import AP, P, R, Success, nDCG

    qrels, run = peer_inputs(scores, judgments)
    return ir_measures.calc_aggregate([Success @ 1, Success @ 5, Success @ 10, R @ 5, P @ 5, AP, nDCG], qrels, run)


def memory_probe(name: str) -> dict:
    """Run one evaluation in a fresh process; its resident-memory peak over the loaded matrix.

    The peak (VmHWM) is reset through /proc/self/clear_refs after the matrix is built, so it
    counts what ``evaluate`` adds on top of the matrix and the interpreter.
    """
    code = (
        "import json, re, sys; sys.path.insert(0, %r);"
        "from bench_evaluation import simulated, METRICS; from tvrbench.evaluation import evaluate;"
        "s, j = simulated(*%r); evaluate(s[:50], j.__class__.from_matrices(j.positive[:50]), METRICS);"
        "status = lambda key: int(re.search(key + r':\\s+(\\d+)', open('/proc/self/status').read()).group(1)) / 1024;"
        "open('/proc/self/clear_refs', 'w').write('5');"
        "before = status('VmRSS'); evaluate(s, j, METRICS); peak = status('VmHWM');"
        "print(json.dumps({'matrix_mb': s.nbytes / 2**20, 'before_mb': before, 'peak_mb': peak}))"
    ) % (str(Path(__file__).parent), SIZES[name])
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    figures = json.loads(output)
    figures["peak_over_matrix"] = (figures["peak_mb"] - figures["before_mb"] + figures["matrix_mb"]) / figures["matrix_mb"]
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peer-rows", type=int, default=1000)
    args = parser.parse_args()
    report = {
        "signature": str(
            Signature({"bench": "evaluation", "python": platform.python_version()}, libraries=("numpy", "numba", "ranx", "ir_measures"))
        ),
        "sizes": {},
    }
    evaluate(*simulated(100, 50), metrics=METRICS)  # compile the kernels once, and the peers'
    for warm_up in (time_ranx, time_ir_measures):
        warm_up(*simulated(20, 30))
    for name, (n_queries, n_videos) in SIZES.items():
        scores, judgments = simulated(n_queries, n_videos)
        result = evaluate(scores, judgments, metrics=METRICS)
        best = best_of_interleaved(
            args.repeat,
            {
                "all": lambda: evaluate(scores, judgments, metrics=METRICS),
                "t2v": lambda: evaluate(scores, judgments, metrics=T2V_METRICS),
                "argmax": lambda: np.argmax(scores, axis=1),
            },
        )
        ours, t2v_only, floor = best["all"], best["t2v"], best["argmax"]
        rows = min(args.peer_rows, n_queries)
        part_scores = np.ascontiguousarray(scores[:rows])
        part = Judgments.from_matrices(judgments.positive[:rows])
        ours_part, _ = best_of(args.repeat, lambda: evaluate(part_scores, part, metrics=METRICS))
        peers = {}
        for peer, function in (("ranx", time_ranx), ("ir_measures", time_ir_measures)):
            half, _ = best_of(1, lambda: function(part_scores[: rows // 2], Judgments.from_matrices(part.positive[: rows // 2])))
            seconds, _ = best_of(1, lambda: function(part_scores, part))
            peers[peer] = {
                "seconds_on_peer_rows": seconds,
                "seconds_on_half": half,
                "linearity": seconds / (2 * half),
                "seconds_full_scaled": seconds * n_queries / rows,
            }
        fastest = min(p["seconds_full_scaled"] for p in peers.values())
        fastest_part = min(p["seconds_on_peer_rows"] for p in peers.values())
        entry = {
            "shape": [n_queries, n_videos],
            "tvrbench_seconds": ours,
            "argmax_seconds": floor,
            "ratio_to_argmax": ours / floor,
            "tvrbench_t2v_metrics_seconds": t2v_only,
            "t2v_metrics_ratio_to_argmax": t2v_only / floor,
            "peer_rows": rows,
            "tvrbench_seconds_on_peer_rows": ours_part,
            "peers": peers,
            "speedup_vs_fastest_peer_full_scaled": fastest / ours,
            "speedup_vs_fastest_peer_same_rows": fastest_part / ours_part,
            "memory": memory_probe(name),
            "metrics": result.metrics,
        }
        report["sizes"][name] = entry
        print(json.dumps({name: {k: v for k, v in entry.items() if k != "metrics"}}, indent=2))
    report["judged_per_caption"] = {}
    scores, judgments = simulated(*SIZES["msvd"])
    for per_caption in JUDGED_PER_CAPTION:
        labelled = with_judged_videos(judgments, per_caption)
        best = best_of_interleaved(
            args.repeat, {"all": lambda: evaluate(scores, labelled, metrics=METRICS), "argmax": lambda: np.argmax(scores, axis=1)}
        )
        entry = {
            "shape": list(scores.shape),
            "tvrbench_seconds": best["all"],
            "argmax_seconds": best["argmax"],
            "ratio_to_argmax": best["all"] / best["argmax"],
        }
        report["judged_per_caption"][str(per_caption)] = entry
        print(json.dumps({f"msvd, {per_caption} judged videos per caption": entry}, indent=2))
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
