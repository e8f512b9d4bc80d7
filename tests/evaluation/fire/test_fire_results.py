"""From Python, every FIRE analysis returns a result whose signature and JSON equal what the command line writes,
and whose tables are rebuilt from that JSON."""

from __future__ import annotations

import json

import pytest

from tvrbench.cli import main
from tvrbench.data import load_sample, sample_path
from tvrbench.evaluation import Judgments
from tvrbench.evaluation.fire import (
    FireConfig,
    agreement_analysis,
    bootstrap_analysis,
    compare_analysis,
    length_analysis,
    overlap_analysis,
    paired_analysis,
    pooling_analysis,
    queue_analysis,
    ranks_analysis,
    train_overlap_analysis,
)
from tvrbench.signature import Signature

QUERIES, VIDEOS, FIRE = sample_path("captions.csv"), sample_path("videos.txt"), sample_path("fire.json")
INPUTS = ["--queries", str(QUERIES), "--videos", str(VIDEOS)]
BOOTSTRAP = FireConfig(bootstrap={"sizes": [20, 50], "resamples": 200, "seed": 2, "metrics": ["C@1", "C@5"]})


@pytest.fixture(scope="module")
def sample():
    return load_sample()


@pytest.fixture(scope="module")
def judgments(sample):
    return Judgments.build(sample.captions, sample.video_ids, fire=sample.fire)


def models(sample, *names):
    return {name: sample.scores[name] for name in names}


def scores_args(*names):
    return [arg for name in names for arg in ("--scores", f"{name}={sample_path(f'scores_{name}.npy')}")]


def sources(*names):
    """The files the command line pins: the captions, video ids, each model's scores, the FIRE file."""
    return {"queries": QUERIES, "videos": VIDEOS, "scores": [sample_path(f"scores_{name}.npy") for name in names], "fire": FIRE}


def written_by_cli(args, tmp_path) -> dict:
    out = tmp_path / f"{args[0]}.json"  # one file per command: another kind would not replace it
    with pytest.raises(SystemExit) as finished:
        main(["fire", *args, "--json", str(out)])
    assert finished.value.code in (0, None)
    written = json.loads(out.read_text())
    assert next(iter(written)) == "written_by" and written.pop("written_by") == f"tvrbench fire {args[0]}"  # the command, named first
    return written


def assert_same(result, written: dict, signature: str | None) -> None:
    assert json.loads(json.dumps(result.to_json())) == written
    if signature is not None:
        assert isinstance(result.signature, Signature) and str(result.signature) == signature
    assert result.tables_of(written) == result.tables  # a report rebuilds the same tables from the file
    assert result.rows and all(len(row) == len(result.columns) for row in result.rows)
    assert all(isinstance(cell, str) for row in result.rows for cell in row)


def test_agreement(sample, tmp_path):
    written = written_by_cli(["agreement", "--fire", str(FIRE)], tmp_path)
    assert_same(agreement_analysis(sample.fire, sources={"fire": FIRE}), written, written["SAMPLE"]["signature"])


def test_compare_and_pooling(sample, judgments, tmp_path):
    names = ("strong", "genderblind")
    written = written_by_cli(["compare", *INPUTS, *scores_args(*names), "--fire", str(FIRE)], tmp_path)
    result = compare_analysis(models(sample, *names), judgments, sources=sources(*names))
    assert_same(result, written, written["signature"])
    assert {name: str(s) for name, s in result.signatures.items()} == written["signatures"]
    written = written_by_cli(["pooling", *INPUTS, *scores_args(*names), "--fire", str(FIRE)], tmp_path)
    result = pooling_analysis(models(sample, *names), sample.captions, sample.video_ids, sample.fire, sources=sources(*names))
    assert_same(result, written, written["signature"])


def test_overlap(sample, tmp_path):
    written = written_by_cli(["overlap", *INPUTS, *scores_args("strong", "objectonly", "genderblind"), "--k", "5"], tmp_path)
    settings = FireConfig(overlap={"k": 5})
    result = overlap_analysis(
        models(sample, "strong", "objectonly", "genderblind"), settings, {**sources("strong", "objectonly", "genderblind"), "fire": None}
    )
    assert_same(result, written, written["signature"])


def test_bootstrap_and_paired(sample, judgments, tmp_path):
    options = ["--resamples", "200", "--seed", "2", "--metrics", "C@1,C@5", "--fire", str(FIRE)]
    written = written_by_cli(["bootstrap", *INPUTS, "--scores", str(sample_path("scores_strong.npy")), "--sizes", "20,50", *options], tmp_path)
    result = bootstrap_analysis(sample.scores["strong"], judgments, BOOTSTRAP, "strong", sources("strong"))
    assert_same(result, written, written["C@1"]["20"]["signature"])
    assert Signature.parse(result.signature.fields["engine"]).fields["ties"] == "stable"  # the engine's, nested
    written = written_by_cli(["paired", *INPUTS, *scores_args("strong", "objectonly"), *options], tmp_path)
    paired = paired_analysis(models(sample, "strong", "objectonly"), judgments, BOOTSTRAP, sources("strong", "objectonly"))
    assert_same(paired, written, written["signature"])


def test_length_ranks_and_train_overlap(sample, judgments, tmp_path):
    pair = ("strong", "objectonly")
    written = written_by_cli(["length", *INPUTS, *scores_args(*pair), "--fire", str(FIRE)], tmp_path)
    result = length_analysis(models(sample, *pair), judgments, sample.captions, dataset="SAMPLE", sources=sources(*pair))
    assert_same(result, written, written["signature"])
    written = written_by_cli(["ranks", *INPUTS, *scores_args("objectonly"), "--fire", str(FIRE), "--max-rank", "20"], tmp_path)
    result = ranks_analysis(sample.scores["objectonly"], judgments, 20, "objectonly", "SAMPLE", sources("objectonly"))
    assert_same(result, written, written["signature"])
    written = written_by_cli(["overlap-train", *INPUTS, "--train", str(QUERIES), *scores_args(*pair), "--fire", str(FIRE)], tmp_path)
    result = train_overlap_analysis(
        sample.captions,
        sample.captions,
        scores=models(sample, *pair),
        judgments=judgments,
        dataset="SAMPLE",
        sources={"queries": QUERIES, "train": QUERIES, **sources(*pair)},
    )
    assert_same(result, written, written["signature"])
    assert result.parts[0].rows and len(result.parts[0].columns) == 7  # Figure 8 under Table 7


def test_queue(sample, judgments, tmp_path):
    written = written_by_cli(
        ["queue", *INPUTS, *scores_args("strong"), "--fire", str(FIRE), "--out", str(tmp_path / "q.csv"), "--effect-size", "0.2"], tmp_path
    )
    settings = FireConfig(queue={"effect_size": 0.2})
    result = queue_analysis(sample.scores["strong"], judgments, sample.captions, sample.video_ids, settings, "strong", sources=sources("strong"))
    assert_same(result, written, written["signature"])
    assert len(result.records) == written["pairs_queued"] == len((tmp_path / "q.csv").read_text().splitlines()) - 1
