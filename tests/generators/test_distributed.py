"""Contrast sets on a real Dask cluster (a LocalCluster of 2 worker processes on 127.0.0.1): the same
bytes as a single-process run, through a killed worker, a killed client and a rerun."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tvrbench.generators import gender_contrasts, verb_contrasts
from tvrbench.generators.config import GenderConfig, VerbConfig
from tvrbench.io.captions import read_captions

distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install 'tvrbench[scale]')")

ROOT = Path(__file__).resolve().parents[2]
MSRVTT = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")
CHUNK = 64  # the gender runner's chunk size


@pytest.fixture(scope="module")
def captions():
    if not MSRVTT.is_file():
        pytest.skip(f"MSR-VTT sample not present: {MSRVTT}")
    return read_captions(MSRVTT)


def wait_for_lines(path: Path, count: int, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and len(path.read_text(encoding="utf-8").splitlines()) > count:
            return
        time.sleep(0.05)
    raise TimeoutError(f"{path} never reached {count} lines")


def test_verb_contrasts_on_a_cluster_equal_the_single_process_run_through_a_killed_worker(captions, client, tmp_path):
    """Every chunk is a task on the cluster; one worker is killed by its pid once the first chunks are
    in, and Dask reruns its task elsewhere: the file equals the in-process one, byte for byte."""
    subset = captions.subset(range(48))
    config = VerbConfig(chunk_size=8, lm="ngram")
    local = tmp_path / "local.jsonl"
    verb_contrasts(subset, local, config)

    out = tmp_path / "cluster.jsonl"
    worker_pids = list(client.run(os.getpid).values())
    assert len(worker_pids) == 2 and os.getpid() not in worker_pids

    killed = threading.Event()

    def kill_one_worker():
        wait_for_lines(out.with_name(out.name + ".partial"), 8)  # the partial file exists only while the run does
        os.kill(worker_pids[0], signal.SIGKILL)
        killed.set()

    threading.Thread(target=kill_one_worker, daemon=True).start()
    verb_contrasts(subset, out, config, client=client)
    assert killed.is_set(), "the worker was not killed while the run was going"
    assert out.read_bytes() == local.read_bytes()
    assert out.with_name(out.name + ".json").read_bytes() == local.with_name(local.name + ".json").read_bytes()


def test_a_word_edit_kind_on_a_cluster_equals_the_single_process_run(captions, client, tmp_path):
    """The word-edit kinds share one runner and one search (its collection, the draw's prior, travels
    with the job): the attribute kind's file from the cluster equals the in-process one, byte for byte."""
    from tvrbench.generators import edit_contrasts
    from tvrbench.generators.config import AttributeConfig

    subset, config = captions.subset(range(160)), AttributeConfig(chunk_size=16, lm="ngram")
    records, _ = edit_contrasts("attribute", subset, tmp_path / "local.jsonl", config)
    edit_contrasts("attribute", subset, tmp_path / "cluster.jsonl", config, client)
    assert records and (tmp_path / "cluster.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert Path(f"{tmp_path / 'cluster.jsonl'}.json").read_text() == Path(f"{tmp_path / 'local.jsonl'}.json").read_text()


def test_a_killed_client_reruns_only_the_missing_chunks(captions, client, tmp_path, monkeypatch):
    """The command (client and its local cluster) killed by pid mid-run; the rerun on the cluster
    computes only the chunks not in the partial file and ends byte-identical."""
    reference = tmp_path / "reference.jsonl"
    gender_contrasts(captions, reference, GenderConfig(lm="ngram"))

    out = tmp_path / "killed.jsonl"
    partial = out.with_name(out.name + ".partial")
    command = [sys.executable, "-m", "tvrbench.cli", "contrast", "gender", "--captions", str(MSRVTT), "--lm", "ngram", "--out", str(out)]
    command += ["--workers", "1"]
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_for_lines(partial, CHUNK)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert not out.exists()
    done_before = len(partial.read_text(encoding="utf-8").splitlines()) - 1

    submitted = []
    submit = client.submit
    monkeypatch.setattr(client, "submit", lambda *args, **kwargs: submitted.append(args) or submit(*args, **kwargs))
    gender_contrasts(captions, out, GenderConfig(lm="ngram"), client=client)
    chunks = -(-len(captions) // CHUNK)
    fully_done = done_before // CHUNK  # chunks are appended whole
    assert len(submitted) == chunks - fully_done < chunks
    assert out.read_bytes() == reference.read_bytes()


@pytest.mark.parametrize("command, out", [(["contrast", "gender"], "g.jsonl"), (["proxies", "--proxy", "bow"], "M.npy")])
def test_a_scheduler_that_does_not_answer_is_one_line_and_exit_2(tmp_path, command, out):
    captions = tmp_path / "captions.tsv"
    captions.write_text("caption_id\ttext\tvideo_id\nc0\ta man is cooking\tv0\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "tvrbench.cli", *command, "--captions", str(captions), "--out", str(tmp_path / out),
         "--scheduler", "tcp://127.0.0.1:9"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tvrbench: error: tcp://127.0.0.1:9: no Dask scheduler answers")
    assert not (tmp_path / out).exists()
