"""Proxy matrices on a real Dask cluster (a LocalCluster of 2 worker processes on 127.0.0.1): for every
proxy, level and output form the same bytes as a single-process run, through a killed worker, and
through a killed client whose rerun computes only the missing blocks."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from test_proxies_output import output_bytes

from tvrbench.io.captions import read_captions
from tvrbench.proxies import build_proxy, read_proxy_cells, write_proxy
from tvrbench.proxies.config import load_config

pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install 'tvrbench[scale]')")

ROOT = Path(__file__).resolve().parents[2]
MSRVTT = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")
BLOCK_MB = 1  # 32 rows of 1,000 columns per block: 32 blocks, so tasks finish at different times
CAPTIONS_PER_VIDEO = 4  # MSR-VTT's test file has one caption per video; grouped, the video level differs


@pytest.fixture(scope="module")
def captions():
    if not MSRVTT.is_file():
        pytest.skip(f"MSR-VTT sample not present: {MSRVTT}")
    return read_captions(MSRVTT)


def proxy(captions, name: str, level: str):
    videos = [f"v{i // CAPTIONS_PER_VIDEO}" for i in range(len(captions))] if level == "video" else captions.video_ids
    return build_proxy(captions.texts, name, level, caption_ids=captions.caption_ids, video_ids=videos, config=load_config(None))


def blocks_done(out: Path) -> int:
    """Blocks an interrupted run has recorded: listed in the .npy progress file, chunks or part files present."""
    partial = out.with_name(out.name + ".partial")
    if out.suffix == ".npy":
        progress = out.with_name(out.name + ".partial.json")
        try:
            return len(json.loads(progress.read_text(encoding="utf-8"))["blocks_done"])
        except (OSError, ValueError, KeyError):
            return 0
    pattern = "c/*/0" if out.suffix == ".zarr" else "part-*.parquet"
    return len(list(partial.glob(pattern)))


def wait_for_blocks(out: Path, count: int, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if blocks_done(out) >= count:
            return
        time.sleep(0.02)
    raise TimeoutError(f"{out} never had {count} blocks done")


@pytest.mark.parametrize("name", ["bow", "pos", "syn", "met"])
def test_every_proxy_on_the_cluster_equals_the_single_process_run(captions, client, tmp_path, name):
    for level in ("caption", "video"):
        matrix = proxy(captions, name, level)
        local = write_proxy(matrix, tmp_path / f"local-{level}.npy", block_mb=BLOCK_MB)
        cluster = write_proxy(matrix, tmp_path / f"cluster-{level}.npy", block_mb=BLOCK_MB, client=client)
        assert output_bytes(cluster) == output_bytes(local)
        assert np.load(local).shape == ((1000 if level == "caption" else 250), 1000)


@pytest.mark.parametrize("suffix, options", [(".zarr", {}), (".parquet", {"top_k": 20, "threshold": 0.25}), (".npz", {"top_k": 20})])
def test_every_output_form_on_the_cluster_equals_the_single_process_run(captions, client, tmp_path, suffix, options):
    matrix = proxy(captions, "bow", "video")
    local = write_proxy(matrix, tmp_path / f"local{suffix}", block_mb=BLOCK_MB, **options)
    cluster = write_proxy(matrix, tmp_path / f"cluster{suffix}", block_mb=BLOCK_MB, client=client, **options)
    assert output_bytes(cluster) == output_bytes(local)
    assert not list(tmp_path.glob("*.partial*"))


def test_a_killed_worker_loses_nothing(captions, client, tmp_path):
    """One worker is killed by its pid once the first blocks are in; Dask reruns its task elsewhere and
    the matrix equals the in-process one, byte for byte."""
    matrix = proxy(captions, "met", "caption")
    local = write_proxy(matrix, tmp_path / "local.npy", block_mb=BLOCK_MB)
    out = tmp_path / "cluster.npy"
    worker_pids = list(client.run(os.getpid).values())
    assert len(worker_pids) == 2 and os.getpid() not in worker_pids
    killed = threading.Event()

    def kill_one_worker():
        wait_for_blocks(out, 2)
        os.kill(worker_pids[0], signal.SIGKILL)
        killed.set()

    threading.Thread(target=kill_one_worker, daemon=True).start()
    write_proxy(matrix, out, block_mb=BLOCK_MB, client=client)
    assert killed.is_set(), "the worker was not killed while the run was going"
    assert output_bytes(out) == output_bytes(local)
    client.wait_for_workers(2, timeout=60)  # the nanny restarts it for the next tests


@pytest.mark.parametrize("suffix, options", [(".npy", []), (".zarr", []), (".parquet", ["--top-k", "20"])])
def test_a_killed_client_reruns_only_the_missing_blocks(captions, client, tmp_path, monkeypatch, suffix, options):
    """``tvrbench proxies --workers 1`` killed by its pid mid-run; the rerun on the cluster computes only
    the blocks the interrupted run did not record, and the output equals an uninterrupted run's."""
    matrix = proxy(captions, "met", "caption")
    selection = {"top_k": 20} if options else {}
    reference = write_proxy(matrix, tmp_path / f"reference{suffix}", block_mb=BLOCK_MB, **selection)

    out = tmp_path / f"killed{suffix}"
    command = [
        sys.executable,
        "-m",
        "tvrbench.cli",
        "proxies",
        "--captions",
        str(MSRVTT),
        "--proxy",
        "met",
        "--out",
        str(out),
        "--block-mb",
        str(BLOCK_MB),
        "--workers",
        "1",
        *options,
    ]
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_blocks(out, 3)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert not out.exists()
    done_before = blocks_done(out)

    submitted = []
    submit = client.submit
    monkeypatch.setattr(client, "submit", lambda *args, **kwargs: submitted.append(args) or submit(*args, **kwargs))
    write_proxy(matrix, out, block_mb=BLOCK_MB, client=client, **selection)
    n_blocks = -(-matrix.shape[0] // matrix.block_rows(BLOCK_MB))
    assert len(submitted) == n_blocks - done_before < n_blocks
    assert output_bytes(out) == output_bytes(reference)


def test_parquet_cells_and_zarr_values_are_the_matrix(captions, client, tmp_path):
    """What the sparse and chunked forms hold, read back: the dense matrix's values, the selection's cells."""
    import zarr

    matrix = proxy(captions, "pos", "video")
    dense = np.load(write_proxy(matrix, tmp_path / "M.npy", block_mb=BLOCK_MB))
    stored = zarr.open_array(write_proxy(matrix, tmp_path / "M.zarr", block_mb=BLOCK_MB, client=client), mode="r")
    assert stored.chunks == (32, 1000) and np.array_equal(stored[:], dense)
    cells, sidecar = read_proxy_cells(write_proxy(matrix, tmp_path / "M.parquet", block_mb=BLOCK_MB, top_k=5, threshold=0.2, client=client))
    assert sidecar["storage"].startswith("top-5 per row, values >= 0.2 (Parquet")
    counts = np.diff(cells.indptr)
    assert counts.max() == 5 and np.array_equal(counts, np.minimum(5, (dense >= 0.2).sum(axis=1)))
    for row in (0, 17, 249):
        kept = cells[row].toarray().ravel()
        assert np.array_equal(np.sort(kept[kept > 0])[::-1], np.sort(dense[row][dense[row] >= 0.2])[::-1][:5])


def test_only_two_tasks_per_worker_thread_are_out_at_once(captions, client, monkeypatch):
    """Finished blocks cannot pile up: when the first block comes back, 2 per thread were submitted,
    and one more to replace it."""
    from tvrbench.proxies.storage import BlockJob, computed_blocks

    matrix = proxy(captions, "bow", "caption")
    step = matrix.block_rows(BLOCK_MB)
    todo = {k: slice(k * step, (k + 1) * step) for k in range(-(-matrix.shape[0] // step))}
    submitted = []
    submit = client.submit
    monkeypatch.setattr(client, "submit", lambda *args, **kwargs: submitted.append(args) or submit(*args, **kwargs))
    blocks = computed_blocks(BlockJob(matrix, "float32", None), todo, client)
    next(blocks)
    threads = sum(client.nthreads().values())
    assert len(submitted) == 2 * threads + 1 < len(todo)
    assert len(list(blocks)) == len(todo) - 1 and len(submitted) == len(todo)
