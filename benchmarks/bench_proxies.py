"""Benchmark: the proxy kernels against the reference per-pair loops, and at full MSR-VTT size.

Part 1, the 1,000 MSR-VTT 1k-A test captions (1M pairs), parsing timed apart:
  * BoW / PoS / SYN: the reference code's double loop (``create_relevancy_matrix`` with ``create_iou``,
    items from the full spaCy pipeline, NLTK's lemmatizer and Lesk) against the sparse IoU kernel;
  * METEOR: NLTK's ``single_meteor_score`` called per pair against the bulk kernel.
  Every pair is compared (max |Δ|), not only timed.
Part 2, 2,990 videos x 59,800 captions (MSR-VTT's full test size, 20 captions per video) of generated
text: caption lengths drawn from the 1,000 real captions' lengths, words drawn from their unigram
distribution (seed 0). Each proxy runs in its own process, writing the video-level float32 matrix to
disk; the script reports parse / prepare / matrix time and the process's peak RSS. METEOR at that size
is 3.6 billion caption pairs: it runs on the first ``--large-meteor-videos`` video rows and the time
is extrapolated linearly (rows are independent), unless that is 2990.

    .venv/bin/python benchmarks/bench_proxies.py [--meteor-pairs 1000000] [--large-meteor-videos 50]

Writes benchmarks/results/proxies.json.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "proxies.json"
MSRVTT = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")
sys.path.insert(0, str(ROOT / "tests" / "proxies"))  # the oracles of test_proxies


def real_captions() -> list[str]:
    if not MSRVTT.is_file():
        sys.exit(f"MSR-VTT sample not present: {MSRVTT}")
    with open(MSRVTT, encoding="utf-8") as handle:
        return [row["sentence"] for row in csv.DictReader(handle)]


def generated_captions(n_captions: int, seed: int = 0) -> list[str]:
    """Captions with the real captions' length distribution and unigram word distribution."""
    real = real_captions()
    lengths = np.array([len(t.split(" ")) for t in real])
    words, counts = np.unique([w for t in real for w in t.split(" ")], return_counts=True)
    rng = np.random.default_rng(seed)
    drawn_lengths = rng.choice(lengths, size=n_captions)
    drawn_words = rng.choice(words, size=int(drawn_lengths.sum()), p=counts / counts.sum())
    ends = np.cumsum(drawn_lengths)
    return [" ".join(drawn_words[end - length : end]) for end, length in zip(ends, drawn_lengths)]


def peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM; ru_maxrss would include the parent's peak at fork)."""
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed(function, *args, repeat: int = 1, **kwargs):
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = function(*args, **kwargs)
        best = min(best, time.perf_counter() - started)
    return best, result


# --------------------------------------------------------------------------- part 1


def small(meteor_pairs: int) -> dict:
    import nltk
    import spacy
    from nltk.translate.meteor_score import single_meteor_score
    from test_proxies import reference_matrix, reference_non_stop, reference_pos, reference_synsets, with_unit_diagonal

    from tvrbench.proxies import build_proxy, parse_captions
    from tvrbench.resources import cache_dir, spacy_package_for, wordnet

    texts = real_captions()
    wn = wordnet()
    nltk.data.path.insert(0, str(cache_dir() / "nltk_data"))  # the reference uses NLTK's global loader
    report: dict = {"captions": len(texts), "pairs": len(texts) ** 2}

    parse_seconds, parsed = timed(parse_captions, texts, use_cache=False)
    full = spacy.load(spacy_package_for("en_core_web_sm"))
    reference_parse_seconds, docs = timed(lambda: [full(t) for t in texts])
    cached_seconds, _ = timed(parse_captions, texts)
    report["parse"] = {
        "ours_seconds": parse_seconds,
        "ours_from_cache_seconds": cached_seconds,
        "reference_seconds": reference_parse_seconds,
        "pipeline": parsed.pipeline,
    }
    print(f"parse: ours {parse_seconds:.2f} s (from cache {cached_seconds:.2f} s), reference full pipeline {reference_parse_seconds:.2f} s")

    reference_items = {
        "bow": lambda: [[reference_non_stop(t, full.Defaults.stop_words) for t in texts]],
        "pos": lambda: [[reference_pos(d, tag) for d in docs] for tag in ("VERB", "NOUN")],
        "syn": lambda: [[reference_synsets(t, reference_pos(d, tag), p) for t, d in zip(texts, docs)] for tag, p in (("VERB", "v"), ("NOUN", "n"))],
    }
    for proxy, items in reference_items.items():
        reference_prepare, columns = timed(items)
        reference_seconds, expected = timed(reference_matrix, columns)
        expected = with_unit_diagonal(expected)
        prepare_seconds, matrix = timed(build_proxy, parsed, proxy, wordnet=wn)
        matrix_seconds, got = timed(matrix.compute, np.float64, repeat=5)
        delta = float(np.abs(got - expected).max())
        report[proxy] = {
            "reference_loop_seconds": reference_seconds,
            "reference_prepare_seconds": reference_prepare,
            "ours_prepare_seconds": prepare_seconds,
            "ours_matrix_seconds": matrix_seconds,
            "speedup_matrix": reference_seconds / matrix_seconds,
            "speedup_prepare_plus_matrix": (reference_seconds + reference_prepare) / (prepare_seconds + matrix_seconds),
            "max_abs_difference": delta,
            "pairs_compared": expected.size,
        }
        print(
            f"{proxy}: reference loop {reference_seconds:.3f} s, ours {matrix_seconds * 1e3:.2f} ms "
            f"(prepare {prepare_seconds:.3f} s vs reference {reference_prepare:.3f} s): {reference_seconds / matrix_seconds:.0f}x, "
            f"max |Δ| {delta:.1e}"
        )

    compile_started = time.perf_counter()
    matrix = build_proxy(texts, "met", wordnet=wn)
    matrix.block(slice(0, 1))
    first_call_seconds = time.perf_counter() - compile_started
    prepare_seconds, matrix = timed(build_proxy, texts, "met", wordnet=wn)
    matrix_seconds, got = timed(matrix.compute, np.float64, repeat=3)
    rng = np.random.default_rng(0)
    all_pairs = len(texts) ** 2
    pairs = np.arange(all_pairs) if meteor_pairs >= all_pairs else np.sort(rng.choice(all_pairs, meteor_pairs, replace=False))
    tokens = [t.split() for t in texts]
    delta = 0.0
    started = time.perf_counter()
    for pair in pairs:
        i, j = divmod(int(pair), len(texts))
        score = 1.0 if i == j else single_meteor_score(tokens[i], tokens[j], wordnet=wn)
        delta = max(delta, abs(score - got[i, j]))
    nltk_seconds = (time.perf_counter() - started) * all_pairs / len(pairs)
    report["met"] = {
        "nltk_loop_seconds": nltk_seconds,
        "nltk_pairs_run": int(len(pairs)),
        "nltk_extrapolated": bool(len(pairs) < all_pairs),
        "ours_prepare_seconds": prepare_seconds,
        "ours_matrix_seconds": matrix_seconds,
        "ours_first_call_seconds_with_compile": first_call_seconds,
        "speedup_matrix": nltk_seconds / matrix_seconds,
        "speedup_prepare_plus_matrix": nltk_seconds / (prepare_seconds + matrix_seconds),
        "max_abs_difference": float(delta),
        "pairs_compared": int(len(pairs)),
    }
    print(
        f"met: NLTK loop {nltk_seconds:.1f} s ({len(pairs)} pairs run), ours {matrix_seconds:.2f} s + prepare {prepare_seconds:.2f} s: "
        f"{nltk_seconds / matrix_seconds:.0f}x, max |Δ| {delta:.1e}"
    )
    return report


# --------------------------------------------------------------------------- part 2


def large_child(proxy: str, videos: int, meteor_videos: int, home: str) -> dict:
    """One proxy at full size, in this process (called through a subprocess for a clean peak RSS)."""
    os.environ["TVRBENCH_HOME"] = home  # a fresh parse cache: parsing is timed for real
    from tvrbench.proxies import build_proxy, write_proxy
    from tvrbench.resources import wordnet

    captions_per_video = 20
    texts = generated_captions(videos * captions_per_video)
    owners = [f"video{i // captions_per_video}" for i in range(len(texts))]
    if proxy in ("syn", "met"):
        wordnet()
    baseline = peak_rss_mb()
    started = time.perf_counter()
    matrix = build_proxy(texts, proxy, "video", video_ids=owners)
    built = time.perf_counter() - started
    peak_after_build = peak_rss_mb()
    rows = matrix.shape[0] if proxy != "met" else min(meteor_videos, matrix.shape[0])
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        if rows == matrix.shape[0]:
            write_proxy(matrix, Path(folder) / "M.npy")
        else:
            for _ in matrix.blocks(start=matrix.shape[0] - rows):
                pass
        matrix_seconds = time.perf_counter() - started
    return {
        "shape": list(matrix.shape),
        "rows_computed": rows,
        "parse_seconds": matrix.seconds.get("parse", 0.0),
        "prepare_seconds": matrix.seconds["prepare"],
        "build_seconds": built,
        "matrix_seconds": matrix_seconds,
        "matrix_seconds_all_rows": matrix_seconds * matrix.shape[0] / rows,
        "extrapolated": rows < matrix.shape[0],
        "rss_before_mb": baseline,
        "peak_rss_after_build_mb": peak_after_build,
        "peak_rss_mb": peak_rss_mb(),
        "output_mb": matrix.shape[0] * matrix.shape[1] * 4 / 2**20,
    }


def large(videos: int, meteor_videos: int) -> dict:
    report = {"videos": videos, "captions": videos * 20, "captions_per_video": 20, "dtype": "float32", "block_mb": 256}
    with tempfile.TemporaryDirectory() as home:
        for proxy in ("bow", "pos", "syn", "met"):
            completed = subprocess.run(
                [sys.executable, __file__, "--child", proxy, "--videos", str(videos), "--large-meteor-videos", str(meteor_videos), "--home", home],
                capture_output=True,
                text=True,
                check=True,
            )
            report[proxy] = json.loads(completed.stdout.strip().splitlines()[-1])
            r = report[proxy]
            print(
                f"large {proxy}: {r['shape'][0]} x {r['shape'][1]}: parse {r['parse_seconds']:.1f} s, prepare {r['prepare_seconds']:.1f} s, "
                f"matrix {r['matrix_seconds_all_rows']:.1f} s{' (extrapolated from %d rows)' % r['rows_computed'] if r['extrapolated'] else ''}, "
                f"peak RSS {r['peak_rss_mb']:.0f} MB (at start {r['rss_before_mb']:.0f} MB, "
                f"after parse and prepare {r['peak_rss_after_build_mb']:.0f} MB), "
                f"output {r['output_mb']:.0f} MB"
            )
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--meteor-pairs", type=int, default=1_000_000, help="NLTK pairs to run (all 1M by default)")
    parser.add_argument("--videos", type=int, default=2990)
    parser.add_argument("--large-meteor-videos", type=int, default=50)
    parser.add_argument("--skip-small", action="store_true")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--home", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(large_child(args.child, args.videos, args.large_meteor_videos, args.home)))
        return
    import numba

    report = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "numba_threads": numba.get_num_threads()}}
    previous = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    report["small"] = previous.get("small") if args.skip_small else small(args.meteor_pairs)
    report["large"] = large(args.videos, args.large_meteor_videos)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
