"""``tvrbench fire ...``: FIRE relevance labels and the paper's validity analyses (SPEC §3).

Every subcommand prints its table, writes ``--json`` (with a signature) and, given ``--plots DIR``,
the paper's figure as PNG and SVG. Models are given as ``--scores NAME=PATH`` (a ``.npy`` score
matrix or a TREC run, named as :mod:`tvrbench.io.inputs` says).
Each command reads its inputs, calls its analysis in :mod:`tvrbench.evaluation.fire` and writes its result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli import app
from tvrbench.cli.fire_labels import labels_app
from tvrbench.cli.inputs import (
    BOOTSTRAP_METRICS,
    CONFIG,
    FIRE_DATASET,
    FIRE_DATASET_FILTER,
    FIRE_FILE,
    FIRE_REQUIRED,
    JSON_OUT,
    METRICS,
    ONE_MODEL,
    PLOTS,
    QUERIES,
    SCORES,
    SEED,
    VIDEOS,
    read_fire_settings,
    read_inputs,
    reads_captions,
    split_list,
)
from tvrbench.cli.outputs import FILE, FOLDER, write_result, writes, written
from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write
from tvrbench.io.inputs import CaptionsReading

fire = typer.Typer(
    help="FIRE relevance labels: agreement, Table 1, overlap, pooling bias, bootstrap, length, "
    "train-test overlap, annotation queue, qrels conversion.",
    no_args_is_help=True,
)
app.add_typer(fire, name="fire")
fire.add_typer(labels_app, name="labels")


@fire.command()
@writes(json_out=FILE)
def agreement(
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = FIRE_DATASET_FILTER,
    rule: Optional[str] = typer.Option(None, "--rule", help="Label rule: file (default), majority, any, unanimous."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Table 2: pairs, labels, relevant / irrelevant / disagreements, agreement and Krippendorff's α."""
    from tvrbench.evaluation.fire.agreement import agreement_analysis
    from tvrbench.io.fire import read_fire

    rule = read_fire_settings(config, "labels", rule=rule).labels.rule
    write_result(agreement_analysis(read_fire(fire_path, dataset), rule, {"fire": fire_path}), json_out)


@fire.command()
@writes(json_out=FILE, csv_out=FILE)
@reads_captions
def compare(
    reading: CaptionsReading,
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = FIRE_DATASET,
    metrics: Optional[str] = METRICS,
    ties: Optional[str] = typer.Option(None, "--ties", help="stable (default), optimistic, pessimistic, average."),
    ap: Optional[str] = typer.Option(None, "--ap", help="standard (default) or fire."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    csv_out: Optional[Path] = typer.Option(None, "--csv", help="Write metric,model,with_fire,original,delta rows here."),
):
    """Table 1 for several models: each metric as A (B + C) = with FIRE (original + gain)."""
    from tvrbench.evaluation.fire.compare import compare_analysis

    settings = read_fire_settings(config, None, metrics=split_list(metrics), ties=ties, ap=ap)
    inputs = read_inputs(reading, queries, videos, scores, fire_path, dataset)
    result = compare_analysis(inputs.models, inputs.judgments, settings)
    write_result(result, json_out)
    if csv_out:
        with atomic_write(csv_out) as out:
            out.write(result.to_csv())
        written(csv_out)


@fire.command()
@writes(json_out=FILE)
@reads_captions
def overlap(
    reading: CaptionsReading,
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    k: Optional[int] = typer.Option(None, "--k", help="Depth of the compared lists [default: 10]."),
    p: Optional[float] = typer.Option(None, "--p", help="RBO persistence [default: 0.9]."),
    variant: Optional[str] = typer.Option(None, "--variant", help="RBO variant: ext (default), min, trunc."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Table 3: mean top-k overlap and rank-biased overlap for every pair of models."""
    from tvrbench.evaluation.fire.overlap import overlap_analysis

    settings = read_fire_settings(config, "overlap", k=k, rbo_p=p, rbo_variant=variant)
    inputs = read_inputs(reading, queries, videos, scores, fire_required=False)
    if len(inputs.models) < 2:
        raise InputError(None, "overlap compares models: give --scores at least twice")
    write_result(overlap_analysis(inputs.models, settings, inputs.sources), json_out)


@fire.command()
@writes(json_out=FILE)
@reads_captions
def pooling(
    reading: CaptionsReading,
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Path = typer.Option(..., "--fire", help="FIRE JSON file; model names must match its 'models' field."),
    dataset: Optional[str] = FIRE_DATASET,
    metrics: Optional[str] = METRICS,
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Table 4: each model with all FIRE labels vs with only the labels other models' pools brought."""
    from tvrbench.evaluation.fire.pooling import pooling_analysis

    settings = read_fire_settings(config, None, metrics=split_list(metrics))
    inputs = read_inputs(reading, queries, videos, scores, fire_path, dataset)
    write_result(pooling_analysis(inputs.models, inputs.captions, inputs.video_ids, inputs.labels, settings), json_out)


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
@reads_captions
def bootstrap(
    reading: CaptionsReading,
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: str = ONE_MODEL,
    fire_path: Optional[Path] = FIRE_FILE,
    dataset: Optional[str] = FIRE_DATASET,
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Comma-separated sample sizes [default: 500,1000,3000]."),
    resamples: Optional[int] = typer.Option(None, "--resamples", help="Resamples per size [default: 10000]."),
    seed: Optional[int] = SEED,
    metrics: Optional[str] = BOOTSTRAP_METRICS,
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    plots: Optional[Path] = PLOTS,
):
    """§4.3: per metric and sample size, the distribution and 95th percentile of |resample mean − full mean|."""
    from tvrbench.evaluation.fire.bootstrap import bootstrap_analysis

    settings = read_fire_settings(config, "bootstrap", sizes=split_list(sizes, int), resamples=resamples, seed=seed, metrics=split_list(metrics))
    inputs = read_inputs(reading, queries, videos, [scores], fire_path, dataset, fire_required=False)
    name, matrix = inputs.model
    result = bootstrap_analysis(matrix, inputs.judgments, settings, name, inputs.sources)
    write_result(result, json_out, plots, settings.plots)


@fire.command()
@writes(json_out=FILE)
@reads_captions
def paired(
    reading: CaptionsReading,
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Optional[Path] = FIRE_FILE,
    dataset: Optional[str] = FIRE_DATASET,
    resamples: Optional[int] = typer.Option(None, "--resamples", help="Resamples [default: 10000]."),
    seed: Optional[int] = SEED,
    metrics: Optional[str] = BOOTSTRAP_METRICS,
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Paired bootstrap test of two models (first − second): difference, confidence interval, p-value."""
    from tvrbench.evaluation.fire.bootstrap import paired_analysis

    settings = read_fire_settings(config, "bootstrap", resamples=resamples, seed=seed, metrics=split_list(metrics))
    inputs = read_inputs(reading, queries, videos, scores, fire_path, dataset, fire_required=False)
    models = inputs.pair("the paired test")
    write_result(paired_analysis(models, inputs.judgments, settings, inputs.sources), json_out)


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
@reads_captions
def length(
    reading: CaptionsReading,
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = FIRE_DATASET,
    metric: Optional[str] = typer.Option(None, "--metric", help="Correctness metric per query [default: C@1]."),
    unit: Optional[str] = typer.Option(None, "--unit", help="Length bins of Figure 3 in characters (default) or words."),
    bin_width: Optional[int] = typer.Option(None, "--bin-width", help="Bin width [default: 20]."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    plots: Optional[Path] = PLOTS,
):
    """Figure 2 (positives per query vs length in words) and Figure 3 (who is right, per length bin)."""
    from tvrbench.evaluation.fire.length import length_analysis

    settings = read_fire_settings(config, "length", metric=metric, unit=unit, bin_width=bin_width)
    inputs = read_inputs(reading, queries, videos, scores, fire_path, dataset)
    result = length_analysis(inputs.pair(), inputs.judgments, inputs.captions, settings, inputs.dataset, inputs.sources)
    write_result(result, json_out, plots, settings.plots)


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
@reads_captions
def ranks(
    reading: CaptionsReading,
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: str = ONE_MODEL,
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = FIRE_DATASET,
    max_rank: int = typer.Option(50, "--max-rank", min=1, help="Ranks beyond this are gathered in one bar."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    plots: Optional[Path] = PLOTS,
):
    """Appendix G: histogram of the ranks of positive videos, original vs FIRE positives."""
    from tvrbench.evaluation.fire.config import load_config
    from tvrbench.evaluation.fire.ranks import ranks_analysis

    settings = load_config(config)  # for the plots only: no metric of it is used
    inputs = read_inputs(reading, queries, videos, [scores], fire_path, dataset)
    name, matrix = inputs.model
    write_result(ranks_analysis(matrix, inputs.judgments, max_rank, name, inputs.dataset, inputs.sources), json_out, plots, settings.plots)


@fire.command("overlap-train")
@writes(json_out=FILE, plots=FOLDER)
@reads_captions
def overlap_train(
    reading: CaptionsReading,
    queries: Path = QUERIES,
    train: Path = typer.Option(..., "--train", help="Training captions (any captions format)."),
    fit_on: Optional[str] = typer.Option(None, "--fit-on", help="Fit TF-IDF on test (default, the paper), train or both."),
    videos: Optional[Path] = typer.Option(None, "--videos", help="For Figure 8: video ids of the score matrices."),
    scores: Optional[list[str]] = typer.Option(None, "--scores", help="For Figure 8: NAME=PATH of two models."),
    fire_path: Optional[Path] = FIRE_FILE,
    dataset: Optional[str] = FIRE_DATASET,
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    plots: Optional[Path] = PLOTS,
):
    """Appendix D: mean top-10 character 5-gram TF-IDF similarity to train captions; Table 7 correlations.

    With --videos, --fire and two --scores, also Figure 8: who is right (C@5) per similarity bin.
    """
    from tvrbench.evaluation.fire.train_overlap import train_overlap_analysis

    settings = read_fire_settings(config, "train_overlap", fit_on=fit_on)
    inputs = None
    if scores:
        if videos is None or fire_path is None:
            raise InputError(None, "Figure 8 needs --videos and --fire with the two --scores")
        inputs = read_inputs(reading, queries, videos, scores, fire_path, dataset)
    figure8 = {"scores": inputs.pair(), "judgments": inputs.judgments, "dataset": inputs.dataset} if inputs else {}
    test_captions, train_captions = inputs.captions if inputs else reading.read(queries), reading.read(train, filter_videos=False)
    result = train_overlap_analysis(
        test_captions, train_captions, settings, sources={"queries": queries, "train": train, "fire": fire_path}, **figure8
    )
    write_result(result, json_out, plots, settings.plots)


@fire.command()
@writes(out=FILE, json_out=FILE)
@reads_captions
def queue(
    reading: CaptionsReading,
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: str = typer.Option(..., "--scores", help="The new model's .npy score matrix or TREC run (NAME=PATH)."),
    fire_path: Path = typer.Option(..., "--fire", help="FIRE JSON file with the labels collected so far."),
    out: Path = typer.Option(..., "--out", help="Queue for annotators: .csv, or JSON Lines for any other suffix."),
    dataset: Optional[str] = FIRE_DATASET,
    k: Optional[int] = typer.Option(None, "--k", help="Depth of the top list to annotate [default: 10]."),
    effect_size: Optional[float] = typer.Option(None, "--effect-size", help="Difference to detect [default: 0.01]."),
    metric: Optional[str] = typer.Option(None, "--metric", help="Metric of the effect size [default: C@1]."),
    all_queries: bool = typer.Option(False, "--all-queries", help="Queue every query, not the bootstrap sample."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """The unjudged pairs of a new model's top k, for the queries needed to detect --effect-size."""
    from tvrbench.evaluation.fire.queue import queue_analysis, write_queue

    settings = read_fire_settings(config, "queue", k=k, effect_size=effect_size, metric=metric)
    inputs = read_inputs(reading, queries, videos, [scores], fire_path, dataset)
    name, matrix = inputs.model
    result = queue_analysis(matrix, inputs.judgments, inputs.captions, inputs.video_ids, settings, name, all_queries, inputs.sources)
    write_queue(out, result.records)
    written(out)
    write_result(result, json_out)
