"""Evaluation of row-sharded scores (a folder of .npy shards, a Zarr store): every metric equal to the
in-memory engine's, for every tie rule, nDCG variant and relevance; here and on a real Dask cluster
(a LocalCluster of 2 worker processes on 127.0.0.1), through a killed worker and a killed client."""

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
from scipy import sparse

from tvrbench.evaluation import Judgments, evaluate
from tvrbench.evaluation.ranking import TIE_RULES
from tvrbench.io.scores import open_scores
from tvrbench.signature import input_digest

ROOT = Path(__file__).resolve().parents[2]


def toy(n_queries=230, n_videos=41, levels=6, seed=0):
    """Scores with many ties (few distinct values), one original positive a query, extra positives
    and judged-irrelevant pairs (as FIRE adds), and a graded relevance matrix."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, size=(n_queries, n_videos)).astype(np.float32)
    original = np.zeros((n_queries, n_videos), bool)
    original[np.arange(n_queries), rng.integers(0, n_videos, n_queries)] = True
    extra = rng.random((n_queries, n_videos)) < 0.03
    irrelevant = (rng.random((n_queries, n_videos)) < 0.05) & ~original & ~extra
    judgments = Judgments.from_matrices(original | extra, irrelevant=irrelevant, original=original)
    relevance = np.where(rng.random((n_queries, n_videos)) < 0.3, rng.random((n_queries, n_videos)), 0.0)
    return scores, judgments, relevance


def save_shards(folder: Path, scores: np.ndarray, cuts) -> Path:
    folder.mkdir()
    for number, (start, stop) in enumerate(zip(cuts, cuts[1:])):
        np.save(folder / f"part-{number:05d}.npy", scores[start:stop])
    return folder


def assert_same(expected, got):
    assert expected.metrics.keys() == got.metrics.keys()
    for name, value in expected.metrics.items():
        assert got.metrics[name] == pytest.approx(value, abs=1e-12, rel=0), name
    for name, values in expected.per_query.items():
        np.testing.assert_allclose(got.per_query[name], values, atol=1e-12, rtol=0, err_msg=name)
    assert (expected.original is None) == (got.original is None)
    if expected.original is not None:
        assert_same(expected.original, got.original)


@pytest.mark.parametrize("ties", TIE_RULES)
def test_shards_equal_the_in_memory_engine_for_every_tie_rule_and_variant(tmp_path, ties):
    scores, judgments, relevance = toy()
    shards = open_scores(save_shards(tmp_path / "parts", scores, [0, 17, 100, 101, 180, len(scores)]), *scores.shape)
    assert shards.bounds == ((0, 17), (17, 100), (100, 101), (101, 180), (180, 230))
    for ndcg in ("epic", "paper", "full"):
        for graded in (None, relevance, sparse.csr_matrix(relevance)):
            for fusion in ("judged", "relevant", "none") if graded is not None else ("judged",):
                settings = dict(ties=ties, ndcg=ndcg, relevance=graded, fusion=fusion)
                dense = settings | {"relevance": None if graded is None else relevance}
                assert_same(evaluate(scores, judgments, **dense), evaluate(shards, judgments, **settings))


def test_a_zarr_store_is_read_chunk_row_by_chunk_row(tmp_path):
    zarr = pytest.importorskip("zarr", reason="zarr is not installed (pip install 'tvrbench[scale]')")
    scores, judgments, _ = toy(seed=1)
    store = zarr.create_array(tmp_path / "S.zarr", shape=scores.shape, chunks=(50, scores.shape[1]), dtype="float64")
    store[:] = scores
    shards = open_scores(tmp_path / "S.zarr")
    assert shards.bounds == ((0, 50), (50, 100), (100, 150), (150, 200), (200, 230)) and shards.read(1).dtype == np.float64
    assert_same(evaluate(scores.astype(np.float64), judgments, ties="average"), evaluate(shards, judgments, ties="average"))


def test_column_ranks_are_the_sorted_ranks(tmp_path):
    """The video-to-text ranks merged from shard summaries, against a plain sort of each column."""
    from tvrbench.evaluation.sharded import sharded_ranks

    scores, judgments, _ = toy(n_queries=60, n_videos=9, levels=4, seed=2)
    shards = open_scores(save_shards(tmp_path / "parts", scores, [0, 7, 30, 60]))
    columns = judgments.positive.T.tocsr().astype(np.float64)
    ranks = sharded_ranks(shards, judgments.gains(), columns, "stable").column_ranks
    expected = []
    for video in range(scores.shape[1]):
        order = list(np.argsort(-scores[:, video], kind="stable"))
        expected += [order.index(query) + 1 for query in columns[video].indices]
    assert ranks.tolist() == expected
    # Cut at each column's m-th best score (m = its targets), as nDCG's cutoff needs: exact up to m.
    depth = np.repeat(np.diff(columns.indptr), np.diff(columns.indptr))
    cut = sharded_ranks(shards, judgments.gains(), columns, "stable", columns_top_only=True).column_ranks
    assert np.array_equal(np.minimum(cut, depth + 1), np.minimum(expected, depth + 1))


def test_a_checkpoint_keeps_finished_shards(tmp_path, capfd):
    scores, judgments, _ = toy(seed=3)
    shards = open_scores(save_shards(tmp_path / "parts", scores, list(range(0, 231, 46))))
    first = evaluate(shards, judgments, checkpoint=tmp_path / "state")
    runs = sorted((tmp_path / "state").iterdir())  # all labels, original pairs only: each keyed by its targets
    assert len(runs) == 2 and all(len(list(run.glob("*.npz"))) == 10 for run in runs)  # two passes over five shards
    for name in ("ranks-2.npz", "columns-4.npz"):
        (runs[0] / name).unlink()
    capfd.readouterr()
    again = evaluate(shards, judgments, checkpoint=tmp_path / "state")
    told = capfd.readouterr().err
    assert told.count("4 of 5 shards from the checkpoint") == 2 and told.count("5 of 5 shards from the checkpoint") == 2
    assert_same(first, again)


def test_bad_shards_get_one_line_and_exit_2(tmp_path):
    scores, _, _ = toy(n_queries=24, n_videos=12)
    folder = save_shards(tmp_path / "parts", scores, [0, 10, 24])
    np.save(folder / "part-00002.npy", np.zeros((3, 11)))
    with pytest.raises(Exception, match="part-00002.npy: has 11 columns but part-00000.npy has 12"):
        open_scores(folder)
    np.save(folder / "part-00002.npy", np.zeros((3, 12), np.float32).astype(np.float64))
    with pytest.raises(Exception, match="part-00002.npy: has dtype float64 but part-00000.npy is float32"):
        open_scores(folder)
    (folder / "part-00002.npy").unlink()
    with pytest.raises(Exception, match="has 24 rows but the queries file has 30 captions"):
        open_scores(folder, 30, 12)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(Exception, match="holds no .npy row shards"):
        open_scores(empty)
    np.save(folder / "part-00002.npy", np.float32([[0.0] * 11 + [np.nan]]))  # a 25th row, NaN in its last cell
    with pytest.raises(Exception, match=r"parts: row 24, column 11 is nan; every score must be finite"):
        evaluate(open_scores(folder), Judgments.from_matrices(np.eye(25, 12, dtype=bool)))
    np.save(folder / "part-00002.npy", np.zeros((1, 12), np.float16))  # half precision: ranked as float64, not float32
    with pytest.raises(Exception, match="part-00002.npy: has dtype float16 but part-00000.npy is float32"):
        open_scores(folder)
    np.save(folder / "part-00002.npy", np.zeros((1, 12), ">f4"))  # big-endian float32 is float32, as for one .npy
    assert open_scores(folder).read(2).dtype == np.float32


# --- the command line, here and on a cluster ---------------------------------------------------------


def cli_inputs(folder: Path, n_videos: int, per_video: int, shard_rows: int, seed: int = 0) -> dict[str, Path]:
    """Captions, videos, the same scores as one .npy and as row shards."""
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    videos = [f"video{v}" for v in range(n_videos)]
    rows = [(f"c{v}_{i}", f"caption {i} of clip {v}", videos[v]) for v in range(n_videos) for i in range(per_video)]
    (folder / "queries.csv").write_text("caption_id,text,video_id\n" + "".join(f"{c},{t},{v}\n" for c, t, v in rows))
    (folder / "videos.txt").write_text("\n".join(videos) + "\n")
    scores = np.round(rng.normal(size=(len(rows), n_videos)), 1).astype(np.float32)  # ties too
    scores[np.arange(len(rows)), np.arange(len(rows)) // per_video] += 1.5
    np.save(folder / "scores.npy", scores)
    save_shards(folder / "shards", scores, list(range(0, len(rows), shard_rows)) + [len(rows)])
    return {"queries": folder / "queries.csv", "videos": folder / "videos.txt", "npy": folder / "scores.npy", "shards": folder / "shards"}


def evaluate_command(files: dict[str, Path], scores: Path, out: Path, *options: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "tvrbench.cli",
        "evaluate",
        "--queries",
        str(files["queries"]),
        "--videos",
        str(files["videos"]),
        "--scores",
        str(scores),
        "--json",
        str(out),
        "--ties",
        "average",
        *options,
    ]


def test_the_command_line_gives_the_same_metrics_from_shards(tmp_path):
    files = cli_inputs(tmp_path, n_videos=30, per_video=3, shard_rows=20)
    for scores, out in ((files["npy"], tmp_path / "npy.json"), (files["shards"], tmp_path / "shards.json")):
        completed = subprocess.run(evaluate_command(files, scores, out), capture_output=True, text=True, cwd=ROOT)
        assert completed.returncode == 0, completed.stderr
    whole, sharded = (json.loads((tmp_path / name).read_text())["metrics"] for name in ("npy.json", "shards.json"))
    assert sharded == pytest.approx(whole, abs=1e-12, rel=0)
    assert not (tmp_path / ".shards.json.shards").exists()  # the checkpoint goes once the result is written


def test_relevance_as_a_zarr_store_equals_the_npy(tmp_path):
    zarr = pytest.importorskip("zarr", reason="zarr is not installed (pip install 'tvrbench[scale]')")
    files = cli_inputs(tmp_path, n_videos=12, per_video=2, shard_rows=5)
    relevance = np.random.default_rng(5).random((24, 12)).astype(np.float32)
    np.save(tmp_path / "R.npy", relevance)
    zarr.create_array(tmp_path / "R.zarr", shape=relevance.shape, chunks=(5, 12), dtype="float32")[:] = relevance
    for name in ("R.npy", "R.zarr"):
        command = evaluate_command(files, files["shards"], tmp_path / f"{name}.json", "--relevance", str(tmp_path / name))
        completed = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        assert completed.returncode == 0, completed.stderr
    from_npy, from_zarr = (json.loads((tmp_path / f"{name}.json").read_text())["metrics"] for name in ("R.npy", "R.zarr"))
    assert from_zarr == from_npy and "nDCG_v2t" in from_zarr


def test_commands_other_than_evaluate_read_sharded_scores_whole(tmp_path):
    files = cli_inputs(tmp_path, n_videos=4, per_video=2, shard_rows=3)
    ids, videos = [f"c{v}_{i}" for v in range(4) for i in range(2)], [f"video{v}" for v in range(4)]
    shards = open_scores(files["shards"], ids, videos)
    whole = shards.values()
    assert isinstance(whole, np.ndarray) and np.array_equal(whole, np.load(files["npy"]))
    assert shards.digest == input_digest("scores", files["shards"])


def test_workers_without_shards_and_a_silent_scheduler_get_one_line_and_exit_2(tmp_path):
    files = cli_inputs(tmp_path, n_videos=4, per_video=2, shard_rows=4)
    for scores, options, message in (
        (files["npy"], ("--workers", "2"), "evaluate sharded scores"),
        (files["shards"], ("--scheduler", "tcp://127.0.0.1:9"), "no Dask scheduler answers"),
    ):
        completed = subprocess.run(evaluate_command(files, scores, tmp_path / "out.json", *options), capture_output=True, text=True, cwd=ROOT)
        lines = completed.stderr.strip().splitlines()
        assert completed.returncode == 2 and len(lines) == 1 and message in lines[0], completed.stderr


pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install 'tvrbench[scale]')")


def test_on_a_cluster_through_a_killed_worker(tmp_path, client):
    """Both passes as tasks on 2 worker processes; one is killed by its pid once the first shards are
    in, and Dask reruns its tasks elsewhere: the metrics equal the in-memory engine's."""
    scores, judgments, relevance = toy(n_queries=2000, n_videos=300, levels=50, seed=4)
    shards = open_scores(save_shards(tmp_path / "parts", scores, list(range(0, 2001, 50))))
    expected = evaluate(scores, judgments, ties="optimistic", relevance=relevance)
    worker_pids = list(client.run(os.getpid).values())
    killed = threading.Event()

    def kill_one_worker():
        deadline = time.monotonic() + 300
        while len(list((tmp_path / "state").rglob("ranks-*.npz"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(worker_pids[0], signal.SIGKILL)
        killed.set()

    threading.Thread(target=kill_one_worker, daemon=True).start()
    got = evaluate(shards, judgments, ties="optimistic", relevance=relevance, client=client, checkpoint=tmp_path / "state")
    assert killed.is_set(), "the worker was not killed while the run was going"
    assert_same(expected, got)
    client.wait_for_workers(2, timeout=60)  # the nanny restarts it for the next tests


def test_a_killed_client_reruns_only_the_missing_shards(tmp_path, client, monkeypatch):
    """``tvrbench evaluate --workers 1`` killed by its pid mid-run; the rerun computes only the shards
    the checkpoint lacks, and its metrics equal an uninterrupted run's."""
    files = cli_inputs(tmp_path, n_videos=400, per_video=10, shard_rows=50)  # 80 shards
    out = tmp_path / "out.json"
    state = tmp_path / ".out.json.shards"
    child = subprocess.Popen(
        evaluate_command(files, files["shards"], out, "--workers", "1"),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 300
        while len(list(state.rglob("ranks-*.npz"))) < 3 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
    assert not out.exists()
    done_before = len(list(state.rglob("*.npz")))
    assert 3 <= done_before < 160

    submitted = []
    submit = client.submit
    monkeypatch.setattr(client, "submit", lambda *args, **kwargs: submitted.append(args) or submit(*args, **kwargs))
    from tvrbench.io.captions import read_captions, read_video_ids

    captions, videos = read_captions(files["queries"]), read_video_ids(files["videos"])
    judgments = Judgments.build(captions, videos)
    shards = open_scores(files["shards"])
    rerun = evaluate(shards, judgments, ties="average", client=client, checkpoint=state)
    assert len(submitted) == 160 - done_before
    assert_same(evaluate(np.load(files["npy"]), judgments, ties="average"), rerun)
