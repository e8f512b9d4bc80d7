"""Metric names with variants (issue 15): they parse and print back, key the results, and composites
combine their parts; the evaluation's table and signature are the ones the command line prints and writes."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tvrbench.cli.outputs import print_result
from tvrbench.evaluation import EvaluationRun, Judgments, evaluate, evaluation_result, parse_metric
from tvrbench.evaluation.metrics import NDCG, AveragePrecision, CorrectAt, GeometricMeanRank, JudgedAt, MeanNDCG
from tvrbench.io.captions import read_captions, read_video_ids
from tvrbench.io.fire import read_fire
from tvrbench.signature import Signature, input_digest

SAMPLE = Path(__file__).parents[2] / "tvrbench" / "data" / "sample"
NAMES = [
    "C@1",
    "C@10",
    "R@5",
    "P@5",
    "Judged@10",
    "AP",
    "AP(variant=fire)",
    "MdR",
    "MnR",
    "GMR",
    "nDCG",
    "nDCG(variant=paper)",
    "nDCG(variant=full)",
    "nDCG_t2v",
    "nDCG_v2t(variant=paper)",
    "nDCG_t2v(variant=full)",
]


@pytest.mark.parametrize("name", NAMES)
def test_a_name_parses_and_prints_back(name):
    metric = parse_metric(name)
    assert str(metric) == name and parse_metric(str(metric)) == metric


@pytest.mark.parametrize(
    "metric", [CorrectAt(3), JudgedAt(20), AveragePrecision("fire"), NDCG("full", "v2t"), MeanNDCG("paper"), GeometricMeanRank()]
)
def test_a_metric_object_round_trips_through_its_name(metric):
    assert parse_metric(str(metric)) == metric


def test_only_parameters_other_than_the_default_are_printed():
    assert str(parse_metric("AP(variant=standard)")) == "AP"
    assert str(parse_metric("nDCG_v2t(variant=epic)")) == "nDCG_v2t"
    assert str(AveragePrecision("fire")) == "AP(variant=fire)"


def test_ap_and_ndcg_settings_are_the_variant_of_names_without_one():
    assert parse_metric("AP", ap="fire") == parse_metric("AP(variant=fire)") == AveragePrecision("fire")
    assert parse_metric("AP(variant=standard)", ap="fire") == AveragePrecision()  # a name's own variant wins
    assert parse_metric("nDCG", ndcg="paper").parts == (NDCG("paper", "t2v"), NDCG("paper", "v2t"))
    assert parse_metric("C@5", ap="fire", ndcg="full") == CorrectAt(5)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("AP(depth=3)", "metric 'AP(depth=3)': unknown parameter 'depth'; AP takes variant"),
        ("AP(variant=trec)", "metric 'AP(variant=trec)': unknown variant 'trec'; choose one of standard, fire"),
        ("nDCG(variant=fire)", "unknown variant 'fire'; choose one of epic, paper, full"),
        ("C(variant=fire)@5", "unknown parameter 'variant'; C takes no parameters"),
        ("AP(fire)", "write parameters as key=value"),
        ("AP@10", "AP takes no cutoff"),
        ("C", "C needs a cutoff, e.g. C@10"),
        ("C@0", "the cutoff must be at least 1"),
        ("mAP", "unknown metric 'mAP'; known metrics: C@K"),
    ],
)
def test_a_bad_name_says_what_is_wrong(name, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        parse_metric(name)


def random_case(seed: int = 0, n_queries: int = 40, n_videos: int = 30):
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, 8, size=(n_queries, n_videos)).astype(float)
    positive = rng.random((n_queries, n_videos)) < 0.08
    positive[np.arange(n_queries), rng.integers(0, n_videos, n_queries)] = True
    return scores, positive


def test_results_are_keyed_by_the_variant_names():
    scores, positive = random_case()
    judgments = Judgments.from_matrices(positive)
    result = evaluate(scores, judgments, metrics=["AP", "AP(variant=fire)", "nDCG(variant=paper)", "C@1"])
    assert list(result.metrics) == ["AP", "AP(variant=fire)", "nDCG(variant=paper)", "C@1", "nDCG_t2v(variant=paper)", "nDCG_v2t(variant=paper)"]
    assert list(result.per_query) == ["AP", "AP(variant=fire)", "nDCG_t2v(variant=paper)", "nDCG_v2t(variant=paper)", "C@1"]
    by_setting = evaluate(scores, judgments, metrics=["AP", "nDCG"], ap="fire", ndcg="paper")
    for name, value in by_setting.metrics.items():
        assert result.metrics[name] == value, name
    assert by_setting.signature.fields["ap"] == "fire" and result.signature.fields["ap"] == "standard,fire"
    assert result.signature.fields["ndcg"] == "paper"


def mean_of_defined(values) -> float:
    """The mean over the queries with a value, in a plain loop."""
    defined = [float(v) for v in values if not math.isnan(v)]
    return sum(defined) / len(defined)


def test_composites_equal_their_formula_over_their_parts():
    scores, positive = random_case(3)
    result = evaluate(scores, Judgments.from_matrices(positive), metrics=["GMR", "nDCG", "C@1", "C@5", "C@10"])
    c1, c5, c10 = (mean_of_defined(result.per_query[f"C@{k}"]) for k in (1, 5, 10))
    assert result.metrics["GMR"] == pytest.approx((c1 * c5 * c10) ** (1 / 3), abs=1e-12)
    t2v, v2t = mean_of_defined(result.per_query["nDCG_t2v"]), mean_of_defined(result.per_query["nDCG_v2t"])
    assert result.metrics["nDCG"] == pytest.approx((t2v + v2t) / 2, abs=1e-12)
    assert "GMR" not in result.per_query and "nDCG" not in result.per_query  # a composite has no per-query values


def test_evaluation_result_aggregates_per_query_values_computed_elsewhere():
    """The step a sharded evaluation calls with per-query values it computed itself."""
    per_query = {
        "C@1": np.array([1.0, 0.0, np.nan, 1.0]),
        "C@5": np.array([1.0, 1.0, np.nan, 1.0]),
        "C@10": np.array([1.0, 1.0, np.nan, 1.0]),
        "nDCG_t2v(variant=full)": np.array([0.5, 1.0, np.nan, 0.25]),
        "nDCG_v2t(variant=full)": np.array([1.0, 0.5, 0.75]),
    }
    metrics = [GeometricMeanRank(), MeanNDCG("full")]
    run = EvaluationRun("stable", ["original"], n_queries=4, n_videos=3, fields={"scores": "xxh3:0"})
    result = evaluation_result(per_query, metrics, run)
    assert list(result.metrics) == ["GMR", "nDCG(variant=full)", "nDCG_t2v(variant=full)", "nDCG_v2t(variant=full)"]
    assert result.metrics["GMR"] == pytest.approx((2 / 3) ** (1 / 3), abs=1e-15)
    assert result.metrics["nDCG(variant=full)"] == pytest.approx((1.75 / 3 + 0.75) / 2, abs=1e-15)
    assert str(result.signature).endswith(
        "|task:t2v|ties:stable|ap:n/a|ndcg:full|labels:original|relevance:labels|fusion:n/a|queries:4|videos:3|scores:xxh3:0"
    )


def test_the_table_shows_every_metric_as_the_command_line_prints_it(capsys):
    scores, positive = random_case(5)
    plain = evaluate(scores, Judgments.from_matrices(positive), metrics=["C@1", "AP(variant=fire)", "GMR"])
    assert plain.title == "tvrbench evaluate" and plain.columns == ["metric", "value"]
    assert plain.rows == [[name, f"{value:.4f}"] for name, value in plain.metrics.items()]
    print_result(plain)
    printed = capsys.readouterr().out
    for name, cell in plain.rows:
        assert any(name in line and cell in line for line in printed.splitlines()), name


def test_signature_and_json_from_python_equal_what_the_command_line_writes(tmp_path):
    files = {
        "queries": SAMPLE / "captions.csv",
        "videos": SAMPLE / "videos.txt",
        "scores": SAMPLE / "scores_strong.npy",
        "fire": SAMPLE / "fire.json",
    }
    metrics = "C@1,AP,nDCG(variant=paper),GMR"
    out = tmp_path / "out.json"
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "tvrbench.cli",
            "evaluate",
            *(f"--{k}={v}" for k, v in files.items()),
            "--metrics",
            metrics,
            "--ap",
            "fire",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr

    captions, video_ids = read_captions(files["queries"]), read_video_ids(files["videos"])
    fire = read_fire(files["fire"])
    fields = {"queries_file": input_digest("queries", files["queries"]), "videos_file": input_digest("videos", files["videos"])}
    fields |= {"scores": input_digest("scores", files["scores"]), "fire": input_digest("fire", files["fire"])}
    fields["fire_dataset"] = "+".join(fire.datasets())
    result = evaluate(
        np.load(files["scores"]), Judgments.build(captions, video_ids, fire=fire), metrics=metrics.split(","), ap="fire", signature_fields=fields
    )
    written = json.loads(out.read_text())
    assert Signature.parse(written["signature"]) == result.signature
    assert written == {"written_by": "tvrbench evaluate", **result.to_json()}
    assert list(written["metrics"]) == ["C@1", "AP(variant=fire)", "nDCG(variant=paper)", "GMR", "nDCG_t2v(variant=paper)", "nDCG_v2t(variant=paper)"]
    assert result.columns == ["metric", "all labels (original + delta)"]
    for name, cell in result.rows:  # the printed table is the result's
        assert any(name in line and cell in line for line in completed.stdout.splitlines()), name
    assert f"signature: {result.signature}" in completed.stdout


def test_the_command_line_refuses_an_unknown_variant_in_one_line(tmp_path):
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "tvrbench.cli",
            "evaluate",
            f"--queries={SAMPLE / 'captions.csv'}",
            f"--videos={SAMPLE / 'videos.txt'}",
            f"--scores={SAMPLE / 'scores_strong.npy'}",
            "--metrics",
            "C@1,AP(variant=x)",
            "--json",
            str(tmp_path / "out.json"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 2 and not (tmp_path / "out.json").exists()
    assert completed.stderr.strip().splitlines() == [
        "tvrbench: error: settings: metrics: metric 'AP(variant=x)': unknown variant 'x'; choose one of standard, fire"
    ]


def test_fire_analyses_name_the_ap_variant_they_used():
    from tvrbench.evaluation.fire import bootstrap_analysis, compare_analysis
    from tvrbench.evaluation.fire.config import FireConfig

    scores, positive = random_case(7)
    judgments = Judgments.from_matrices(positive)
    settings = FireConfig(ap="fire", bootstrap={"sizes": [10], "resamples": 20, "metrics": ["C@1", "AP"]})
    table = compare_analysis({"a": scores}, judgments, settings)
    assert [row[0] for row in table.rows] == ["C@1", "C@5", "C@10", "AP(variant=fire)"]
    boot = bootstrap_analysis(scores, judgments, settings, model="a")
    assert list(boot.to_json()) == ["C@1", "AP(variant=fire)"]
    assert [stem for stem, _ in boot.figures()][1] == "fig4_bootstrap_a_AP_variant=fire"
