"""Benchmark: proxies on a Dask cluster, and a model of wall time on 8, 32 and 128 workers.

The video-level BoW matrix at MSR-VTT's training size, 130,260 captions x 6,513 videos (20 captions
per video, generated as ``bench_proxies.py`` does for its full size: the real captions' lengths and
unigram distribution, seed 0):

* per-block cost: a block computed in this process on one thread (as a worker does), the median of
  a few blocks;
* scheduler overhead per task: no-op tasks through a 1-worker LocalCluster, wall time / tasks;
* transfer per block: a task that returns a block-sized float32 array of zeros (made at almost no
  cost), wall time / tasks: what moving a finished block from a worker to the client costs here;
* write per block: one block written in place into the .npy with its fsync and progress record;
* the whole matrix written, as float32 .npy (3.4 GB) and as Parquet of the cells >= 0.5, in this
  process (numba on every core, no Dask), then on a LocalCluster of 1 and of 2 single-threaded worker
  processes (``write_proxy(..., client=client)``), each worker first warmed with one row (numba
  loads its compiled kernels once per process; timed apart).

METEOR (video level, same captions): 17 billion caption pairs, too many to run here; a sample of
blocks of 2 video rows each goes through the same task path on 1 and 2 workers.

    .venv/bin/python benchmarks/bench_scale.py [--meteor-blocks 8]

Writes benchmarks/results/scale.json; docs/scaling.md quotes it. Run it alone on the machine
(``flock /tmp/tvrbench-bench.lock ...``): the figures are wall times.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "scale.json"
sys.path.insert(0, str(ROOT / "benchmarks"))

VIDEOS, CAPTIONS_PER_VIDEO = 6513, 20
BOW_BLOCK_MB = 256  # the default: 64 rows of 130,260 columns
METEOR_BLOCK_MB = 8  # 2 rows: a block of 2 videos x 20 references x 130,260 hypotheses (5.2M pairs)
MODEL_WORKERS = (8, 32, 128)


def noop(_):
    return None


def zeros_block(shape: tuple[int, int]):
    """A block-sized float32 array at almost no cost (zero pages): the task's time is the block's transfer."""
    return np.zeros(shape, dtype=np.float32)


def warm(client, job) -> float:
    """Each worker computes one row of the job first (numba loads its compiled kernels once per process);
    returns the seconds, kept apart from the timed runs as a per-worker start-up cost."""
    from tvrbench.distributed import on_one_thread
    from tvrbench.proxies.storage import BlockJob

    started = time.perf_counter()
    client.run(on_one_thread, BlockJob.run, job, slice(0, 1))
    return time.perf_counter() - started


def per_task_seconds(client, function, arguments: list) -> float:
    from dask.distributed import wait

    wait([client.submit(function, arguments[0], pure=False)])  # warm: function shipped, worker ready
    started = time.perf_counter()
    futures = [client.submit(function, argument, pure=False) for argument in arguments]
    for future in futures:
        future.result()
    return (time.perf_counter() - started) / len(arguments)


def one_thread_block_seconds(job, blocks: list[slice]) -> float:
    import numba

    numba.set_num_threads(1)
    job.run(blocks[0])  # compile / warm caches
    seconds = []
    for rows in blocks[1:]:
        started = time.perf_counter()
        job.run(rows)
        seconds.append(time.perf_counter() - started)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return statistics.median(seconds)


OUTPUTS = {"npy": {"name": "M.npy"}, "parquet": {"name": "M.parquet", "threshold": 0.5}}  # dense 3.4 GB; sparse, S >= 0.5


def timed_write(matrix, folder: Path, output: str, client=None) -> float:
    from tvrbench.proxies import write_proxy

    options = dict(OUTPUTS[output])
    out = folder / options.pop("name")
    started = time.perf_counter()
    write_proxy(matrix, out, block_mb=BOW_BLOCK_MB, client=client, **options)
    seconds = time.perf_counter() - started
    shutil.rmtree(out) if out.is_dir() else out.unlink()
    return seconds


def bow(texts: list[str], owners: list[str]) -> dict:
    from tvrbench.distributed import dask_client
    from tvrbench.proxies import build_proxy
    from tvrbench.proxies.storage import BlockJob

    started = time.perf_counter()
    matrix = build_proxy(texts, "bow", "video", video_ids=owners)
    prepare = time.perf_counter() - started
    step = matrix.block_rows(BOW_BLOCK_MB)
    n_blocks = -(-matrix.shape[0] // step)
    job = BlockJob(replace(matrix, row_ids=[], col_ids=[], col_videos=None), "float32", None)
    report = {
        "shape": list(matrix.shape),
        "block_rows": step,
        "blocks": n_blocks,
        "block_mb_float32": step * matrix.shape[1] * 4 / 2**20,
        "prepare_seconds": prepare,
        "job_pickle_mb": len(pickle.dumps(job)) / 2**20,
        "block_seconds_one_thread": one_thread_block_seconds(job, [slice(k * step, (k + 1) * step) for k in range(7)]),
    }
    print(
        f"bow: {matrix.shape[0]} x {matrix.shape[1]}, {n_blocks} blocks of {step} rows; block {report['block_seconds_one_thread']:.3f} s "
        f"on one thread; prepare {prepare:.1f} s; job pickles to {report['job_pickle_mb']:.1f} MB",
        flush=True,
    )
    with tempfile.TemporaryDirectory(dir=os.environ.get("TVRBENCH_BENCH_TMP")) as folder:
        for output in OUTPUTS:
            report[f"{output}_in_process_seconds"] = timed_write(matrix, Path(folder), output)
            print(f"bow {output} in process (numba on {os.cpu_count()} cores): {report[f'{output}_in_process_seconds']:.1f} s", flush=True)
        for workers in (1, 2):
            with dask_client(workers=workers) as client:
                if workers == 1:
                    report["scheduler_seconds_per_task"] = per_task_seconds(client, noop, list(range(2000)))
                    report["transfer_seconds_per_block"] = per_task_seconds(client, zeros_block, [(step, matrix.shape[1])] * 30)
                report[f"workers_{workers}_warm_up_seconds"] = warm(client, job)
                for output in OUTPUTS:
                    report[f"{output}_workers_{workers}_seconds"] = timed_write(matrix, Path(folder), output, client)
                    print(f"bow {output} on {workers} worker(s): {report[f'{output}_workers_{workers}_seconds']:.1f} s", flush=True)
    work = n_blocks * report["block_seconds_one_thread"]
    report["work_seconds"] = work
    report["scheduler_overhead_fraction"] = report["scheduler_seconds_per_task"] / report["block_seconds_one_thread"]
    report["transfer_fraction"] = report["transfer_seconds_per_block"] / report["block_seconds_one_thread"]
    for output in OUTPUTS:
        report[f"{output}_speedup_2_over_1"] = report[f"{output}_workers_1_seconds"] / report[f"{output}_workers_2_seconds"]
    return report


def meteor(texts: list[str], owners: list[str], n_blocks: int) -> dict:
    from tvrbench.distributed import dask_client
    from tvrbench.proxies import build_proxy
    from tvrbench.proxies.storage import BlockJob, computed_blocks

    started = time.perf_counter()
    matrix = build_proxy(texts, "met", "video", video_ids=owners)
    prepare = time.perf_counter() - started
    step = matrix.block_rows(METEOR_BLOCK_MB)
    job = BlockJob(replace(matrix, row_ids=[], col_ids=[], col_videos=None), "float32", None)
    todo = {k: slice(k * step, (k + 1) * step) for k in range(n_blocks)}
    first_blocks = [slice(k * step, (k + 1) * step) for k in range(3)]
    report = {
        "shape": list(matrix.shape),
        "block_rows": step,
        "blocks": -(-matrix.shape[0] // step),
        "sample_blocks": n_blocks,
        "block_mb_float32": step * matrix.shape[1] * 4 / 2**20,
        "pairs_per_block": step * CAPTIONS_PER_VIDEO * matrix.shape[1],
        "prepare_seconds": prepare,
        "block_seconds_one_thread": one_thread_block_seconds(job, first_blocks),
    }
    print(
        f"met: {matrix.shape[0]} x {matrix.shape[1]}, blocks of {step} rows; block {report['block_seconds_one_thread']:.1f} s on one thread",
        flush=True,
    )
    for workers in (1, 2):
        with dask_client(workers=workers) as client:
            report[f"sample_workers_{workers}_warm_up_seconds"] = warm(client, job)
            started = time.perf_counter()
            for _ in computed_blocks(job, todo, client):
                pass
            report[f"sample_workers_{workers}_seconds"] = time.perf_counter() - started
        print(f"met sample of {n_blocks} blocks on {workers} worker(s): {report[f'sample_workers_{workers}_seconds']:.1f} s", flush=True)
    report["speedup_2_over_1"] = report["sample_workers_1_seconds"] / report["sample_workers_2_seconds"]
    report["work_seconds"] = n_blocks * report["block_seconds_one_thread"]
    report["overhead_fraction_1_worker"] = report["sample_workers_1_seconds"] / report["work_seconds"] - 1
    return report


def model(bow: dict, met: dict) -> dict:
    """Wall time on W single-threaded workers: the client prepares, then blocks flow through W workers
    while the client stores them one at a time (fetching the next while it writes one), so the slower
    of the two stages sets the pace: prepare + max(ceil(blocks / W) x (compute + scheduler),
    blocks x max(transfer, write)).

    Assumptions: workers as fast as one core of this machine; blocks of equal cost, run in
    ceil(blocks / W) waves; the scheduler's cost per task added to each task (an upper bound: it
    overlaps the work); the client's cost per MB what this machine measured (localhost TCP, one
    local disk, fsync per block), which a cluster's network and file system may lower or raise;
    cluster start-up left out (it is up before the job); dense float32 .npy output.
    """
    client_per_mb = max(bow["transfer_seconds_per_block"], bow["write_seconds_per_block"]) / bow["block_mb_float32"]
    rows = {}
    for workers in MODEL_WORKERS:
        row = {}
        for name, job in (("bow", bow), ("met", met)):
            compute = -(-job["blocks"] // workers) * (job["block_seconds_one_thread"] + bow["scheduler_seconds_per_task"])
            client = job["blocks"] * client_per_mb * job["block_mb_float32"]
            row[f"{name}_seconds"] = job["prepare_seconds"] + max(compute, client)
            row[f"{name}_bound"] = "workers" if compute >= client else "client (receive + write)"
        rows[str(workers)] = row
    return rows


def modelled(report: dict) -> dict:
    return {"model": model(report["bow"], report["met"]), "model_assumptions": " ".join(model.__doc__.split("Assumptions:")[1].split())}


def write_seconds_per_block(bow: dict) -> float:
    """Writing one block to a .npy in place, with its fsync and progress record, as the client does."""
    from tvrbench.proxies.storage import NpyBlocks

    class Shape:  # NpyBlocks needs only the matrix's shape
        shape = tuple(bow["shape"])

    step = bow["block_rows"]
    values = np.random.default_rng(0).random((step, bow["shape"][1]), dtype=np.float32)
    with tempfile.TemporaryDirectory(dir=os.environ.get("TVRBENCH_BENCH_TMP")) as folder:
        state = {"signature": "bench", "shape": bow["shape"], "dtype": "float32", "block_rows": step}
        blocks = NpyBlocks(Path(folder) / "M.npy", state, Shape(), bow["blocks"])
        started = time.perf_counter()
        for k in range(10):
            blocks.put(k, slice(k * step, (k + 1) * step), values)
        return (time.perf_counter() - started) / 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--meteor-blocks", type=int, default=8, help="METEOR blocks (2 video rows each) in the sample")
    parser.add_argument("--videos", type=int, default=VIDEOS)
    args = parser.parse_args()
    import dask
    import numba
    from bench_proxies import generated_captions

    texts = generated_captions(args.videos * CAPTIONS_PER_VIDEO)
    owners = [f"video{i // CAPTIONS_PER_VIDEO}" for i in range(len(texts))]
    report = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "numba_threads": numba.config.NUMBA_NUM_THREADS,
            "dask": dask.__version__,
        },
        "captions": len(texts),
        "videos": args.videos,
        "load_average_at_start": os.getloadavg(),
    }
    report["bow"] = bow(texts, owners)
    report["bow"]["write_seconds_per_block"] = write_seconds_per_block(report["bow"])
    report["met"] = meteor(texts, owners, args.meteor_blocks)
    report["load_average_at_end"] = os.getloadavg()  # other work on the machine shows here
    report.update(modelled(report))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({k: report[k] for k in ("bow", "met", "model")}, indent=1))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
