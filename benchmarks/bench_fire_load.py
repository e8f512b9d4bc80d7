"""Benchmark: load a FIRE file of the real size with ``read_fire`` and with plain JSON decoders.

Generates (seeded) a synthetic FIRE file shaped like the released one: ~683K labels over MSR-VTT
and MSVD (1K / 27K distinct captions, 1K / 670 videos), ~10% of pairs labelled twice and a third
label where two disagree, 16-digit response and queue ids, one pooling model per label. Each
loader runs in its own subprocess so that peak RSS (``VmHWM``) belongs to that loader alone;
tracemalloc's peak (Python allocations only) is reported too. The loaders: ``read_fire`` on an
empty cache (a file's first read: decode, validate, columns, cache entry written), ``read_fire``
again (the cache), and the plain decoders it was chosen among, untyped: ``json.load``,
``orjson.loads`` and ``msgspec.json.decode`` (docs/performance.md). The machine is shared, so each
loader is timed ``--repeats`` times, alternating, and the fastest run counts. Writes
benchmarks/results/fire_load.json.

    .venv/bin/python benchmarks/bench_fire_load.py [--labels 683000] [--repeats 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from tvrbench.signature import package_version

RESULTS = Path(__file__).parent / "results" / "fire_load.json"
LOADERS = ("read_fire", "read_fire cached", "json.load", "orjson.loads", "msgspec.json.decode")
LABELS = ("relevant", "irrelevant")
SUBJECTS = (
    "a man",
    "a woman",
    "a boy",
    "a girl",
    "two men",
    "a group of people",
    "a cat",
    "a dog",
    "someone",
    "a child",
    "the chef",
    "a band",
    "a player",
    "an old man",
    "a young woman",
    "people",
)
VERBS = (
    "is slicing",
    "is playing",
    "is riding",
    "is cooking",
    "is talking about",
    "is pouring",
    "is dancing with",
    "is driving",
    "is singing",
    "is cutting",
    "is eating",
    "is running with",
    "is holding",
    "is peeling",
)
OBJECTS = (
    "a tomato",
    "the guitar",
    "a horse",
    "some onions",
    "a car",
    "the piano",
    "a ball",
    "water",
    "a potato",
    "an egg",
    "a motorcycle",
    "the baby",
    "a bottle",
    "a cucumber",
    "the drums",
    "a bowl of noodles",
)
PLACES = (
    "",
    "",
    " in a kitchen",
    " on a stage",
    " on the road",
    " outside",
    " in a field",
    " at the beach",
    " in front of a crowd",
    " on television",
)
# Made-up queue ids (16 digits, like the release), one per (dataset, pooling model) queue.
QUEUES = {
    ("MSRVTT", "CLIP4CLIP"): 7301558214426090,
    ("MSRVTT", "SSB"): 7301558214426107,
    ("MSRVTT", "CE"): 7301558214426124,
    ("MSVD", "CLIP4CLIP"): 7301558214426141,
    ("MSVD", "CE"): 7301558214426158,
}


def _captions(rng: np.random.Generator, count: int) -> list[str]:
    captions: dict[str, None] = {}
    while len(captions) < count:
        text = (
            f"{SUBJECTS[rng.integers(len(SUBJECTS))]} {VERBS[rng.integers(len(VERBS))]} "
            f"{OBJECTS[rng.integers(len(OBJECTS))]}{PLACES[rng.integers(len(PLACES))]}"
        )
        if len(captions) % 3 == 0:  # make some longer and unique, as real captions are
            text += f" while the camera zooms in slowly {len(captions)}"
        captions[text] = None
    return list(captions)


def _video_ids(rng: np.random.Generator, dataset: str, count: int) -> list[str]:
    if dataset == "MSRVTT":
        return [f"video{7010 + i}" for i in range(count)]
    alphabet = np.array(list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"))
    ids = []
    for _ in range(count):
        start = int(rng.integers(0, 300))
        ids.append(f"{''.join(rng.choice(alphabet, 11))}_{start}_{start + int(rng.integers(4, 20))}")
    return ids


def generate_fire(path: Path, n_labels: int, seed: int = 0) -> dict:
    """Write a synthetic FIRE file with about ``n_labels`` labels; return its counts."""
    rng = np.random.default_rng(seed)
    plan = {"MSRVTT": (0.036, 1000, 1000, ("CLIP4CLIP", "SSB", "CE")), "MSVD": (0.964, 27000, 670, ("CLIP4CLIP", "CE"))}
    next_response = 4_000_000_000_000_000
    annotations, disagreements = [], []
    for dataset, (share, n_captions, n_videos, models) in plan.items():
        captions, videos = _captions(rng, n_captions), _video_ids(rng, dataset, n_videos)
        n_pairs = int(n_labels * share / 1.05)
        for _ in range(n_pairs):
            repeats = 1 if rng.random() > 0.1 else 2
            truth = LABELS[int(rng.random() > 0.09)]
            labels = [truth if rng.random() > 0.04 else LABELS[truth == "relevant"] for _ in range(repeats)]
            if repeats == 2 and labels[0] != labels[1] and rng.random() < 0.9:  # else stays a disagreement
                labels.append(truth if rng.random() > 0.02 else LABELS[truth == "relevant"])
            pool = [models[rng.integers(len(models))] for _ in labels]
            record = {
                "annotator_ids": [int(a) for a in rng.integers(0, 100, len(labels))],
                "video_id": videos[rng.integers(n_videos)],
                "query": captions[rng.integers(n_captions)],
                "annotator_labels": labels,
                "response_ids": list(range(next_response, next_response + len(labels))),
                "queue_ids": [QUEUES[dataset, model] for model in pool],
                "models": pool,
                "dataset": dataset,
            }
            next_response += len(labels) + int(rng.integers(1, 50))
            majority = max(LABELS, key=labels.count)
            if labels.count(majority) * 2 > len(labels):
                annotations.append({"annotator_ids": record.pop("annotator_ids"), "label": majority, **record})
            else:
                disagreements.append(record)
    payload = {
        "annotations": annotations,
        "disagreements": disagreements,
        "source_ds": "2022-05-23",
        "source_data_md5": "0" * 32,
        "source_annotator_map_md5": "f" * 32,
        "created_ds": "2022-06-01 12:00:00.000000",
        "email": "bench@example.org",
        "creator": "tvrbench benchmark",
        "website": "https://example.org/",
        "license": "CC0 (synthetic)",
        "datasets": ["MSVD", "MSRVTT"],
    }
    with open(path, "w", encoding="utf-8") as out:
        json.dump(payload, out)
    n_individual = sum(len(r["annotator_labels"]) for r in annotations + disagreements)
    return {
        "records": len(annotations) + len(disagreements),
        "annotations": len(annotations),
        "disagreements": len(disagreements),
        "individual_labels": n_individual,
        "bytes": path.stat().st_size,
    }


# Runs in a fresh interpreter: load the file one way, print time and memory as JSON. Peak RSS is
# VmHWM from /proc (reset by exec; ru_maxrss would carry over the parent's peak from before exec).
MEASURE = r"""
import json, sys, time, tracemalloc
path, how, trace = sys.argv[1], sys.argv[2], sys.argv[3] == "trace"
if how.startswith("read_fire"):
    from tvrbench.io.fire import read_fire
    load = read_fire
elif how == "json.load":
    def load(p):
        with open(p, encoding="utf-8") as handle:
            return json.load(handle)
else:
    import msgspec, orjson
    decode = orjson.loads if how == "orjson.loads" else msgspec.json.decode
    def load(p):
        with open(p, "rb") as handle:
            return decode(handle.read())
if trace:
    tracemalloc.start()
start = time.perf_counter()
result = load(path)
seconds = time.perf_counter() - start
peak = tracemalloc.get_traced_memory()[1] if trace else None
n = len(result) if how.startswith("read_fire") else len(result["annotations"]) + len(result["disagreements"])
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print(json.dumps({"seconds": seconds, "maxrss_bytes": int(status["VmHWM"].split()[0]) * 1024,
                  "tracemalloc_peak_bytes": peak, "records": n}))
"""


def measure(path: Path, how: str, trace: bool, home: Path) -> dict:
    """One loader in a fresh process; ``read_fire`` with an empty cache, ``read_fire cached`` after one read."""
    if how == "read_fire":
        shutil.rmtree(home, ignore_errors=True)
    elif how == "read_fire cached" and not home.is_dir():
        measure(path, "read_fire", False, home)
    env = {**os.environ, "TVRBENCH_HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(path), how, "trace" if trace else "plain"], check=True, capture_output=True, text=True, env=env
    )
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labels", type=int, default=683_000, help="individual labels to generate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per loader; the fastest counts")
    parser.add_argument("--keep", type=Path, help="write the generated file here instead of a temp dir")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        path, home = (args.keep or Path(scratch)) / "fire_bench.json", Path(scratch) / "home"
        path.parent.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        counts = generate_fire(path, args.labels, args.seed)
        print(f"generated {counts} in {time.perf_counter() - start:.1f}s", flush=True)
        runs = {}
        timed = {how: [] for how in LOADERS}
        for _ in range(args.repeats):  # alternate the loaders so both see the same machine load
            for how in LOADERS:
                timed[how].append(measure(path, how, False, home))  # time and RSS without tracemalloc
        for how in LOADERS:
            traced = measure(path, how, True, home)
            runs[how] = {
                "seconds": round(min(t["seconds"] for t in timed[how]), 2),
                "seconds_each": [round(t["seconds"], 2) for t in timed[how]],
                "maxrss_mb": round(max(t["maxrss_bytes"] for t in timed[how]) / 2**20, 1),
                "tracemalloc_peak_mb": round(traced["tracemalloc_peak_bytes"] / 2**20, 1),
                "records": traced["records"],
            }
            print(how, runs[how], flush=True)
    plain = runs["json.load"]  # same machine state: compare these ratios
    ratios = {
        f"{how} / json.load": {
            "seconds": round(runs[how]["seconds"] / plain["seconds"], 3),
            "maxrss": round(runs[how]["maxrss_mb"] / plain["maxrss_mb"], 3),
            "tracemalloc_peak": round(runs[how]["tracemalloc_peak_mb"] / plain["tracemalloc_peak_mb"], 3),
        }
        for how in LOADERS
        if how != "json.load"
    }
    ratios["read_fire maxrss / file size"] = round(runs["read_fire"]["maxrss_mb"] * 2**20 / counts["bytes"], 3)
    report = {
        "file": {**counts, "mb": round(counts["bytes"] / 2**20, 1), "seed": args.seed},
        "runs": runs,
        "ratios": ratios,
        "environment": {
            "python": platform.python_version(),
            **{name: package_version(name) for name in ("msgspec", "orjson")},
            "numpy": np.__version__,
            "cpus": os.cpu_count(),
            "load_average_1_5_15min_at_end": [round(x, 2) for x in os.getloadavg()],
        },
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report["ratios"], indent=2))


if __name__ == "__main__":
    main()
