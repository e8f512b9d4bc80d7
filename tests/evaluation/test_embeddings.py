"""Evaluation from embeddings equals evaluating their saved product; bad embeddings are one line, exit 2."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tvrbench.cli import run
from tvrbench.data import sample_path
from tvrbench.evaluation import Judgments, embedding_scores, evaluate
from tvrbench.io.captions import read_captions, read_video_ids
from tvrbench.io.fire import read_fire

METRICS = ("C@1", "C@5", "R@5", "AP", "MdR", "MnR", "GMR", "nDCG", "nDCG_v2t", "Judged@10")


@pytest.fixture(scope="module")
def sample():
    captions, videos = read_captions(sample_path("captions.csv")), read_video_ids(sample_path("videos.txt"))
    judgments = Judgments.build(captions, videos, fire=read_fire(sample_path("fire.json"), cache=False))
    rng = np.random.default_rng(7)
    text, video = rng.standard_normal((len(captions), 24)), rng.standard_normal((len(videos), 24))
    return captions, videos, judgments, text, video


def product(text, video, similarity):
    if similarity == "cosine":
        text, video = (x / np.linalg.norm(x, axis=1, keepdims=True) for x in (text, video))
    return text @ video.T


@pytest.mark.parametrize("similarity", ["dot", "cosine"])
def test_float64_metrics_equal_the_saved_product_exactly(sample, similarity, monkeypatch):
    from tvrbench.io import scores as embeddings

    _, _, judgments, text, video = sample
    monkeypatch.setattr(embeddings, "BLOCK_CELLS", 36 * 10)  # 10 rows a block: several blocks at the sample size
    scores = embedding_scores(text, video, similarity)
    assert len(scores) > 5 and scores.read(0).dtype == np.float64
    ours = evaluate(scores, judgments, METRICS)
    saved = evaluate(product(text, video, similarity), judgments, METRICS)
    assert ours.metrics == saved.metrics
    assert ours.original.metrics == saved.original.metrics
    assert all(np.array_equal(ours.per_query[name], saved.per_query[name], equal_nan=True) for name in saved.per_query)


def test_float32_metrics_equal_the_saved_product_within_rounding(sample):
    _, _, judgments, text, video = sample
    text, video = text.astype(np.float32), video.astype(np.float32)
    scores = embedding_scores(text, video, "cosine")
    assert scores.read(0).dtype == np.float32
    ours, saved = evaluate(scores, judgments, METRICS).metrics, evaluate(product(text, video, "cosine"), judgments, METRICS).metrics
    assert ours.keys() == saved.keys()
    assert all(ours[name] == pytest.approx(saved[name], rel=1e-6) for name in saved)


def cli_inputs(tmp_path, sample):
    captions, videos, _, text, video = sample
    np.save(tmp_path / "T.npy", text)
    np.save(tmp_path / "V.npy", video)
    np.save(tmp_path / "S.npy", product(text, video, "cosine"))
    return ["evaluate", "--queries", str(sample_path("captions.csv")), "--videos", str(sample_path("videos.txt"))]


def test_cli_from_embeddings_names_both_files_and_the_similarity(tmp_path, sample):
    base = cli_inputs(tmp_path, sample) + ["--fire", str(sample_path("fire.json"))]
    embedded = base + ["--text-embeddings", str(tmp_path / "T.npy"), "--video-embeddings", str(tmp_path / "V.npy"), "--similarity", "cosine"]
    assert run(embedded + ["--json", str(tmp_path / "e.json")]) == 0
    assert run(base + ["--scores", str(tmp_path / "S.npy"), "--json", str(tmp_path / "s.json")]) == 0
    ours, saved = (json.loads((tmp_path / name).read_text()) for name in ("e.json", "s.json"))
    assert ours["metrics"] == saved["metrics"] and ours["original"] == saved["original"]
    assert "|text_embeddings:xxh3:" in ours["signature"] and "|video_embeddings:xxh3:" in ours["signature"]
    assert "|similarity:cosine" in ours["signature"] and "|scores:" not in ours["signature"]


@pytest.mark.parametrize(
    "case, message",
    [
        ("width", "V.npy: has width 5 but .*T.npy has width 24"),
        ("nan", r"T.npy: row 3, column 2 is nan"),
        ("rows", "T.npy: has 111 rows but there are 112 captions"),
        ("dtype", "V.npy: is float32 but .*T.npy is float64"),
        ("zero", "V.npy: row 0 is all zeros"),
        ("both", "give --scores, or --text-embeddings and --video-embeddings"),
    ],
)
def test_bad_embeddings_are_one_line_and_exit_2(tmp_path, sample, capsys, case, message):
    base = cli_inputs(tmp_path, sample)
    text, video = sample[3].copy(), sample[4].copy()
    if case == "width":
        video = video[:, :5]
    elif case == "nan":
        text[3, 2] = np.nan
    elif case == "rows":
        text = text[:-1]
    elif case == "dtype":
        video = video.astype(np.float32)
    elif case == "zero":
        video[0] = 0
    np.save(tmp_path / "T.npy", text)
    np.save(tmp_path / "V.npy", video)
    given = ["--text-embeddings", str(tmp_path / "T.npy"), "--video-embeddings", str(tmp_path / "V.npy"), "--similarity", "cosine"]
    if case == "both":
        given += ["--scores", str(tmp_path / "S.npy")]
    capsys.readouterr()
    assert run(base + given + ["--json", str(tmp_path / "o.json")]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert re.search(message, error), error
    assert not (tmp_path / "o.json").exists()


def fire_command(command, tmp_path, model, *options):
    """``tvrbench fire COMMAND`` on the sample with one model's options; its JSON, under the line naming it."""
    base = ["fire", command, "--queries", str(sample_path("captions.csv")), "--videos", str(sample_path("videos.txt"))]
    out = tmp_path / f"{command}-{len(list(tmp_path.glob('*.json')))}.json"
    assert run(base + ["--fire", str(sample_path("fire.json")), *model, *options, "--json", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert payload.pop("written_by") == f"tvrbench fire {command}"
    return payload


def test_fire_compare_and_bootstrap_from_embeddings_equal_the_saved_product(tmp_path, sample):
    cli_inputs(tmp_path, sample)
    embedded = ["--text-embeddings", f"emb={tmp_path / 'T.npy'}", "--video-embeddings", str(tmp_path / "V.npy"), "--similarity", "cosine"]
    table = fire_command("compare", tmp_path, ["--scores", f"saved={tmp_path / 'S.npy'}", *embedded], "--metrics", "C@1,C@5,AP,MnR")
    rows = {model: [row for row in table["rows"] if row["model"] == model] for model in ("saved", "emb")}
    assert len(rows["emb"]) == 4 and [{**row, "model": "saved"} for row in rows["emb"]] == rows["saved"]
    signature = table["signatures"]["emb"]
    assert "|text_embeddings:xxh3:" in signature and "|video_embeddings:xxh3:" in signature and "|similarity:cosine" in signature

    options = ("--sizes", "40,80", "--resamples", "200", "--seed", "3")
    unnamed = ["--text-embeddings", str(tmp_path / "T.npy"), *embedded[2:]]  # one model: a NAME= is not needed
    ours = fire_command("bootstrap", tmp_path, unnamed, *options)
    saved = fire_command("bootstrap", tmp_path, ["--scores", str(tmp_path / "S.npy")], *options)
    signatures = {entry.pop("signature") for result in (ours, saved) for by_size in result.values() for entry in by_size.values()}
    assert ours == saved and len(signatures) == 2
    (signature,) = {entry for entry in signatures if "text_embeddings" in entry}
    assert "video_embeddings:xxh3:" in signature and "similarity:cosine" in signature


def test_embeddings_as_shard_folders_and_zarr_stores_equal_the_npy(tmp_path, sample):
    zarr = pytest.importorskip("zarr", reason="zarr is not installed (pip install 'tvrbench[scale]')")
    base = cli_inputs(tmp_path, sample)
    text, video = sample[3], sample[4]
    (tmp_path / "T").mkdir()
    for number, start in enumerate(range(0, len(text), 40)):
        np.save(tmp_path / "T" / f"part-{number:05d}.npy", text[start : start + 40])
    zarr.create_array(tmp_path / "V.zarr", shape=video.shape, chunks=(10, video.shape[1]), dtype="float64")[:] = video
    for name, text_path, video_path in (("npy", "T.npy", "V.npy"), ("sharded", "T", "V.zarr")):
        given = ["--text-embeddings", str(tmp_path / text_path), "--video-embeddings", str(tmp_path / video_path), "--similarity", "cosine"]
        assert run(base + given + ["--metrics", "C@1,AP,nDCG_v2t", "--json", str(tmp_path / f"{name}.json")]) == 0
    npy, sharded = (json.loads((tmp_path / f"{name}.json").read_text()) for name in ("npy", "sharded"))
    assert sharded["metrics"] == npy["metrics"] and sharded["signature"] != npy["signature"]


def test_embedding_shards_of_two_dtypes_are_one_line_and_exit_2(tmp_path, sample, capsys):
    base = cli_inputs(tmp_path, sample)
    (tmp_path / "T").mkdir()
    np.save(tmp_path / "T" / "part-00000.npy", sample[3][:60])
    np.save(tmp_path / "T" / "part-00001.npy", sample[3][60:].astype(np.float32))
    capsys.readouterr()
    given = ["--text-embeddings", str(tmp_path / "T"), "--video-embeddings", str(tmp_path / "V.npy"), "--json", str(tmp_path / "o.json")]
    assert run(base + given) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1
    assert re.search(r"T/part-00001.npy: has dtype float32 but part-00000.npy is not float32", error), error
    assert not (tmp_path / "o.json").exists()


def test_on_a_cluster_equal_to_the_in_memory_engine(sample, client, monkeypatch):
    """Every block of scores computed on a 2-worker LocalCluster (127.0.0.1), both passes; the
    embeddings are sent to each worker once."""
    from tvrbench.io import scores as embeddings

    _, _, judgments, text, video = sample
    monkeypatch.setattr(embeddings, "BLOCK_CELLS", 36 * 10)
    for similarity in ("dot", "cosine"):
        scores = embedding_scores(text, video, similarity)
        got = evaluate(scores, judgments, METRICS, client=client)
        expected = evaluate(product(text, video, similarity), judgments, METRICS)
        assert len(scores) > 5 and got.metrics == expected.metrics and got.original.metrics == expected.original.metrics
        assert all(np.array_equal(got.per_query[name], expected.per_query[name], equal_nan=True) for name in expected.per_query)
        assert f"similarity:{similarity}" in str(got.signature)


def test_a_checkpoint_serves_only_the_same_similarity(sample, tmp_path):
    _, _, judgments, text, video = sample
    state = tmp_path / "state"
    evaluate(embedding_scores(text, video, "dot"), judgments, METRICS, checkpoint=state)
    cosine = evaluate(embedding_scores(text, video, "cosine"), judgments, METRICS, checkpoint=state)
    assert cosine.metrics == evaluate(product(text, video, "cosine"), judgments, METRICS).metrics


@pytest.mark.parametrize(
    "command, given, message",
    [
        ("compare", ["--text-embeddings", "T.npy", "--text-embeddings", "b=T.npy", "--video-embeddings", "V.npy"], "give --video-embeddings once"),
        ("compare", ["--text-embeddings", "a=T.npy", "--video-embeddings", "b=V.npy"], "--text-embeddings a is paired with --video-embeddings b"),
        ("compare", ["--scores", "T=S.npy", "--text-embeddings", "T.npy", "--video-embeddings", "V.npy"], "'T' is given to --scores and to"),
        ("compare", [], "give a model: --scores, or --text-embeddings and --video-embeddings"),
        ("bootstrap", ["--scores", "S.npy", "--text-embeddings", "T.npy", "--video-embeddings", "V.npy"], "give --scores, or --text-embeddings"),
    ],
)
def test_bad_fire_models_are_one_line_and_exit_2(tmp_path, sample, capsys, monkeypatch, command, given, message):
    cli_inputs(tmp_path, sample)
    monkeypatch.chdir(tmp_path)
    base = ["fire", command, "--queries", str(sample_path("captions.csv")), "--videos", str(sample_path("videos.txt"))]
    capsys.readouterr()
    assert run(base + ["--fire", str(sample_path("fire.json")), *given, "--json", str(tmp_path / "o.json")]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and message in error, error
    assert not (tmp_path / "o.json").exists()
