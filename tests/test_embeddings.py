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
    from tvrbench.evaluation import embeddings

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
