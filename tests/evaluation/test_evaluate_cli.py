"""``tvrbench evaluate`` end to end: the contract's JSON, labels from every source, bad input."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tvrbench.evaluation import Judgments, evaluate
from tvrbench.io.captions import read_captions

N_VIDEOS = 12


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tvrbench.cli", *args], capture_output=True, text=True)


@pytest.fixture
def inputs(tmp_path: Path) -> dict[str, Path]:
    """Two captions per video, a noisy score matrix, FIRE labels and qrels on them."""
    rng = np.random.default_rng(0)
    videos = [f"video{v}" for v in range(N_VIDEOS)]
    rows = [(f"c{v}_{i}", f"caption {i} of clip {v}", videos[v]) for v in range(N_VIDEOS) for i in range(2)]
    queries = tmp_path / "queries.csv"
    queries.write_text("caption_id,text,video_id\n" + "".join(f"{c},{t},{v}\n" for c, t, v in rows))
    (tmp_path / "videos.txt").write_text("\n".join(videos) + "\n")
    scores = rng.normal(size=(len(rows), N_VIDEOS))
    scores[np.arange(len(rows)), np.arange(len(rows)) // 2] += 1.5
    np.save(tmp_path / "scores.npy", scores)
    annotation = dict(annotator_ids=[1], annotator_labels=["relevant"], response_ids=[1], queue_ids=[1], models=["A"], dataset="TOY")
    fire = {
        "annotations": [
            {**annotation, "query": rows[0][1], "video_id": "video5", "label": "relevant"},
            {**annotation, "query": rows[2][1], "video_id": "video7", "label": "irrelevant", "annotator_labels": ["irrelevant"]},
        ],
        "disagreements": [],
        "source_ds": "toy",
        "source_data_md5": "0",
        "source_annotator_map_md5": "0",
        "created_ds": "2026-11-21",
        "email": "",
        "creator": "tests",
        "website": "",
        "license": "CC-BY-4.0",
        "datasets": ["TOY"],
    }
    (tmp_path / "fire.json").write_text(json.dumps(fire))
    (tmp_path / "qrels.txt").write_text("c3_1 0 video9 1\nc4_0 0 video1 0\n")
    return {
        "queries": queries,
        "videos": tmp_path / "videos.txt",
        "scores": tmp_path / "scores.npy",
        "fire": tmp_path / "fire.json",
        "qrels": tmp_path / "qrels.txt",
        "dir": tmp_path,
    }


def test_contract_json(inputs):
    out = inputs["dir"] / "out.json"
    completed = run_cli(
        "evaluate", "--queries", str(inputs["queries"]), "--videos", str(inputs["videos"]), "--scores", str(inputs["scores"]), "--json", str(out)
    )
    assert completed.returncode == 0, completed.stderr
    payload = json.loads(out.read_text())
    assert list(payload)[0] == "written_by" and set(payload) == {"written_by", "metrics", "signature", "n_queries"}
    assert payload["n_queries"] == 2 * N_VIDEOS
    assert {"C@1", "AP", "nDCG", "nDCG_t2v", "nDCG_v2t", "Judged@10"} <= set(payload["metrics"])
    assert payload["metrics"]["nDCG"] == pytest.approx((payload["metrics"]["nDCG_t2v"] + payload["metrics"]["nDCG_v2t"]) / 2)
    assert payload["signature"].startswith("tvrbench:")
    # The command equals the API on the same arrays.
    captions = read_captions(inputs["queries"])
    videos = inputs["videos"].read_text().split()
    api = evaluate(np.load(inputs["scores"]), Judgments.build(captions, videos))
    assert payload["metrics"] == pytest.approx(api.metrics)


def test_fire_and_qrels_give_original_and_delta(inputs):
    out, per_query = inputs["dir"] / "out.json", inputs["dir"] / "per_query.csv"
    completed = run_cli(
        "evaluate",
        "--queries",
        str(inputs["queries"]),
        "--videos",
        str(inputs["videos"]),
        "--scores",
        str(inputs["scores"]),
        "--fire",
        str(inputs["fire"]),
        "--qrels",
        str(inputs["qrels"]),
        "--metrics",
        "C@1,C@5,AP,Judged@10",
        "--ap",
        "fire",
        "--per-query",
        str(per_query),
        "--json",
        str(out),
    )
    assert completed.returncode == 0, completed.stderr
    payload = json.loads(out.read_text())
    assert set(payload) == {"written_by", "metrics", "signature", "n_queries", "original", "delta"}
    assert "labels:original+fire+qrels" in payload["signature"] and "ap:fire" in payload["signature"]
    for name, value in payload["metrics"].items():
        assert payload["delta"][name] == pytest.approx(value - payload["original"][name])
    assert payload["metrics"]["Judged@10"] > payload["original"]["Judged@10"]
    lines = per_query.read_text().splitlines()
    assert lines[0].startswith("caption_id,video_id,C@1") and len(lines) == 1 + 2 * N_VIDEOS


def test_labels_from_fire_and_qrels_reach_the_right_cells(inputs):
    from tvrbench.io.fire import read_fire
    from tvrbench.io.trec import read_qrels

    captions = read_captions(inputs["queries"])
    videos = inputs["videos"].read_text().split()
    judgments = Judgments.build(captions, videos, fire=read_fire(inputs["fire"]), qrels=read_qrels(inputs["qrels"]))
    positive, irrelevant = judgments.positive.toarray(), judgments.irrelevant.toarray()
    assert positive[0, 5] and positive[7, 9] and positive[0, 0]  # FIRE, qrels, original
    assert irrelevant[2, 7] and irrelevant[8, 1]
    assert positive.sum() == 2 * N_VIDEOS + 2 and irrelevant.sum() == 2
    assert judgments.sources == ["original", "fire", "qrels"]


def _bad(inputs, *replace: tuple[str, str]) -> subprocess.CompletedProcess:
    args = {"--queries": str(inputs["queries"]), "--videos": str(inputs["videos"]), "--scores": str(inputs["scores"])}
    args.update(dict(replace))
    flat = [part for pair in args.items() for part in pair]
    return run_cli("evaluate", *flat, "--json", str(inputs["dir"] / "never.json"))


def _assert_one_line_error(completed, *fragments: str):
    assert completed.returncode == 2
    lines = completed.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in completed.stderr, completed.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def test_bad_inputs_get_one_line_and_exit_2(inputs):
    d = inputs["dir"]
    np.save(d / "short.npy", np.zeros((5, N_VIDEOS)))
    nan = np.load(inputs["scores"])
    nan[3, 2] = np.nan
    np.save(d / "nan.npy", nan)
    with open(d / "pickled.npy", "wb") as handle:
        pickle.dump({"scores": [1, 2]}, handle)
    np.save(d / "objects.npy", np.array([[object()]], dtype=object), allow_pickle=True)
    (d / "empty.csv").write_text("")
    (d / "dup_videos.txt").write_text("video0\nvideo0\n")
    (d / "few_videos.txt").write_text("video0\nvideo1\n")
    (d / "bad.json").write_text('{"annotations": [')
    (d / "bad_qrels.txt").write_text("c0_0 0 video99 1\n")
    cases = [
        ((("--scores", str(d / "short.npy")),), ("short.npy", "rows")),
        ((("--scores", str(d / "nan.npy")),), ("nan.npy", "row 3, column 2")),
        ((("--scores", str(d / "pickled.npy")),), ("pickled.npy", "pickle")),
        ((("--scores", str(d / "objects.npy")),), ("objects.npy", "pickle")),
        ((("--queries", str(d / "empty.csv")),), ("empty.csv", "empty")),
        ((("--videos", str(d / "dup_videos.txt")),), ("dup_videos.txt", "duplicate")),
        ((("--videos", str(d / "few_videos.txt")),), ("scores.npy", "12 columns but the videos file has 2")),
        ((("--fire", str(d / "bad.json")),), ("bad.json",)),
        ((("--qrels", str(d / "bad_qrels.txt")),), ("bad_qrels.txt", "video99")),
        ((("--scores", str(d / "missing.npy")),), ("missing.npy", "no such file")),
        ((("--metrics", "C@1,Bogus@3"),), ("Bogus@3",)),
    ]
    for replace, fragments in cases:
        _assert_one_line_error(_bad(inputs, *replace), *fragments)
    assert not (d / "never.json").exists()


def test_fire_labels_naming_unknown_captions_are_rejected(inputs):
    fire = json.loads(inputs["fire"].read_text())
    fire["annotations"][0]["query"] = "a caption that is not in the queries"
    inputs["fire"].write_text(json.dumps(fire))
    _assert_one_line_error(_bad(inputs, ("--fire", str(inputs["fire"]))), "fire.json", "not the text of any caption")


def test_relevance_sidecar_with_videos_as_rows_is_transposed(inputs):
    captions = read_captions(inputs["queries"])
    videos = inputs["videos"].read_text().split()
    rng = np.random.default_rng(1)
    relevance = rng.random((len(captions), len(videos))) * (rng.random((len(captions), len(videos))) < 0.3)
    order = rng.permutation(len(videos))
    np.save(inputs["dir"] / "rel.npy", relevance[:, order].T.astype(np.float32))
    (inputs["dir"] / "rel.json").write_text(
        json.dumps({"proxy": "syn", "level": "video", "rows": "videos", "row_ids": [videos[i] for i in order], "col_ids": captions.caption_ids})
    )
    out = inputs["dir"] / "out.json"
    completed = run_cli(
        "evaluate",
        "--queries",
        str(inputs["queries"]),
        "--videos",
        str(inputs["videos"]),
        "--scores",
        str(inputs["scores"]),
        "--relevance",
        str(inputs["dir"] / "rel.npy"),
        "--metrics",
        "nDCG",
        "--json",
        str(out),
    )
    assert completed.returncode == 0, completed.stderr
    payload = json.loads(out.read_text())
    api = evaluate(
        np.load(inputs["scores"]), Judgments.build(captions, videos), metrics=["nDCG"], relevance=relevance.astype(np.float32).astype(np.float64)
    )
    assert payload["metrics"]["nDCG"] == pytest.approx(api.metrics["nDCG"], abs=1e-12)
    assert "proxy:syn:" in payload["signature"]
