"""``tvrbench fire ...``: FIRE relevance labels and the paper's validity analyses (SPEC §3).

Every subcommand prints its table, writes ``--json`` (with a signature) and, given ``--plots DIR``,
the paper's figure as PNG and SVG. Models are given as ``--scores NAME=PATH`` (a ``.npy`` score
matrix or a TREC run; without ``NAME=`` the file name minus a ``scores_`` prefix is the name).
Each command reads its inputs, calls its analysis in :mod:`tvrbench.evaluation.fire` and writes the result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pydantic
import typer

from tvrbench.cli import app
from tvrbench.cli.inputs import (build_judgments, captions_and_videos, model_name, option_errors, read_fire_labels,
                                 read_models, split_list)
from tvrbench.cli.outputs import FILE, FOLDER, print_result, save_figures, writes, written
from tvrbench.errors import InputError
from tvrbench.evaluation.fire import config as fire_config
from tvrbench.io.atomic import atomic_write, write_json

fire = typer.Typer(help="FIRE relevance labels: agreement, Table 1, overlap, pooling bias, bootstrap, length, "
                        "train-test overlap, annotation queue, qrels conversion.", no_args_is_help=True)
labels_app = typer.Typer(help="Convert FIRE JSON to TREC qrels and back.", no_args_is_help=True)
app.add_typer(fire, name="fire")
fire.add_typer(labels_app, name="labels")

QUERIES = typer.Option(..., "--queries", help="Captions (rows of the score matrices): CSV/TSV/JSONL or MSR-VTT files.")
VIDEOS = typer.Option(..., "--videos", help="Video ids, one per line, in score-matrix column order.")
SCORES = typer.Option(..., "--scores", help="NAME=PATH of a model's .npy score matrix or TREC run; repeatable.")
ONE_MODEL = typer.Option(..., "--scores", help="The model's .npy score matrix or TREC run (NAME=PATH allowed).")
FIRE_FILE = typer.Option(None, "--fire", help="FIRE JSON file.")
FIRE_REQUIRED = typer.Option(..., "--fire", help="FIRE JSON file.")
DATASET = typer.Option(None, "--dataset", help="Dataset of the FIRE file to use (MSRVTT, MSVD); needed if it has several.")
METRICS = typer.Option(None, "--metrics", help="Comma-separated engine metrics [default: C@1,C@5,C@10,AP].")
BOOTSTRAP_METRICS = typer.Option(None, "--metrics", help="Comma-separated metrics [default: C@1,C@5,C@10].")
SEED = typer.Option(None, "--seed", min=0, help="Random seed [default: 0].")
CONFIG = typer.Option(None, "--config", help="YAML settings (a copy of configs/fire.yaml).")
JSON_OUT = typer.Option(None, "--json", help="Write the results as JSON here.")
PLOTS = typer.Option(None, "--plots", help="Write the figure(s) as PNG and SVG into this folder.")


def _settings(config: Optional[Path], section: str | None = None, **overrides) -> fire_config.FireConfig:
    """The config with the command-line values that were given laid over it (or over its ``section``)."""
    settings = fire_config.load_config(config)
    target = getattr(settings, section) if section else settings
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        updated = type(target).model_validate({**target.model_dump(), **given})
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        raise InputError(None, f"option {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    return settings.model_copy(update={section: updated}) if section else updated


def _finish(result, json_out: Optional[Path], plots: Optional[Path] = None, settings=None) -> None:
    """Print the result's table, write its JSON and its figures."""
    print_result(result)
    if json_out:
        write_json(json_out, result.to_json())
        written(json_out)
    if plots:
        save_figures(result, plots, settings.plots.formats, settings.plots.dpi)


def _one_model(spec: str, captions, video_ids) -> tuple[str, np.ndarray]:
    (name, matrix), = read_models([spec], captions, video_ids).items()
    return name, matrix


def _two_models(specs: list[str], captions, video_ids, message: str) -> dict[str, np.ndarray]:
    models = read_models(specs, captions, video_ids)
    if len(models) != 2:
        raise InputError(None, message)
    return models


@fire.command()
@writes(json_out=FILE)
def agreement(
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = typer.Option(None, "--dataset", help="Only this dataset (default: every dataset in the file)."),
    rule: Optional[str] = typer.Option(None, "--rule", help="Label rule: file (default), majority, any, unanimous."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Table 2: pairs, labels, relevant / irrelevant / disagreements, agreement and Krippendorff's α."""
    from tvrbench.evaluation.fire.agreement import agreement_analysis
    from tvrbench.io.fire import read_fire

    settings = _settings(config, "labels", rule=rule)
    _finish(agreement_analysis(read_fire(fire_path, dataset), settings.labels.rule, {"fire": fire_path}), json_out)


@fire.command()
@writes(json_out=FILE, csv_out=FILE)
def compare(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = DATASET,
    metrics: Optional[str] = METRICS,
    ties: Optional[str] = typer.Option(None, "--ties", help="stable (default), optimistic, pessimistic, average."),
    ap: Optional[str] = typer.Option(None, "--ap", help="standard (default) or fire."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    csv_out: Optional[Path] = typer.Option(None, "--csv", help="Write metric,model,with_fire,original,delta rows here."),
):
    """Table 1 for several models: each metric as A (B + C) = with FIRE (original + gain)."""
    from tvrbench.evaluation.fire.compare import compare_analysis

    settings = _settings(config, None, metrics=split_list(metrics), ties=ties, ap=ap)
    captions, video_ids = captions_and_videos(queries, videos)
    models = read_models(scores, captions, video_ids)
    judgments = build_judgments(captions, video_ids, read_fire_labels(fire_path, dataset), videos)
    with option_errors("--metrics"):
        result = compare_analysis(models, judgments, settings)
    _finish(result, json_out)
    if csv_out:
        with atomic_write(csv_out) as out:
            out.write(result.to_csv())
        written(csv_out)


@fire.command()
@writes(json_out=FILE)
def overlap(
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

    settings = _settings(config, "overlap", k=k, rbo_p=p, rbo_variant=variant)
    models = read_models(scores, *captions_and_videos(queries, videos))
    if len(models) < 2:
        raise InputError(None, "overlap compares models: give --scores at least twice")
    _finish(overlap_analysis(models, settings, {"queries": queries, "videos": videos}), json_out)


@fire.command()
@writes(json_out=FILE)
def pooling(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Path = typer.Option(..., "--fire", help="FIRE JSON file; model names must match its 'models' field."),
    dataset: Optional[str] = DATASET,
    metrics: Optional[str] = METRICS,
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Table 4: each model with all FIRE labels vs with only the labels other models' pools brought."""
    from tvrbench.evaluation.fire.pooling import pooling_analysis

    settings = _settings(config, None, metrics=split_list(metrics))
    captions, video_ids = captions_and_videos(queries, videos)
    models = read_models(scores, captions, video_ids)
    labels = read_fire_labels(fire_path, dataset)
    with option_errors("--metrics"):
        result = pooling_analysis(models, captions, video_ids, labels, settings)
    _finish(result, json_out)


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
def bootstrap(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: str = ONE_MODEL,
    fire_path: Optional[Path] = FIRE_FILE,
    dataset: Optional[str] = DATASET,
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

    settings = _settings(config, "bootstrap", sizes=split_list(sizes, int), resamples=resamples, seed=seed,
                         metrics=split_list(metrics))
    captions, video_ids = captions_and_videos(queries, videos)
    name, matrix = _one_model(scores, captions, video_ids)
    judgments = build_judgments(captions, video_ids, read_fire_labels(fire_path, dataset, required=False), videos)
    sources = {"queries": queries, "videos": videos, "scores": model_name(scores)[1], "fire": fire_path}
    with option_errors("--metrics"):
        result = bootstrap_analysis(matrix, judgments, settings, name, sources)
    _finish(result, json_out, plots, settings)


@fire.command()
@writes(json_out=FILE)
def paired(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Optional[Path] = FIRE_FILE,
    dataset: Optional[str] = DATASET,
    resamples: Optional[int] = typer.Option(None, "--resamples", help="Resamples [default: 10000]."),
    seed: Optional[int] = SEED,
    metrics: Optional[str] = BOOTSTRAP_METRICS,
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Paired bootstrap test of two models (first − second): difference, confidence interval, p-value."""
    from tvrbench.evaluation.fire.bootstrap import paired_analysis

    settings = _settings(config, "bootstrap", resamples=resamples, seed=seed, metrics=split_list(metrics))
    captions, video_ids = captions_and_videos(queries, videos)
    models = _two_models(scores, captions, video_ids, "the paired test compares two models: give --scores exactly twice")
    judgments = build_judgments(captions, video_ids, read_fire_labels(fire_path, dataset, required=False), videos)
    with option_errors("--metrics"):
        result = paired_analysis(models, judgments, settings, {"queries": queries, "videos": videos, "fire": fire_path})
    _finish(result, json_out)


FIGURE_MODELS = "this figure compares two models: give --scores exactly twice"


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
def length(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = DATASET,
    metric: Optional[str] = typer.Option(None, "--metric", help="Correctness metric per query [default: C@1]."),
    unit: Optional[str] = typer.Option(None, "--unit", help="Length bins of Figure 3 in characters (default) or words."),
    bin_width: Optional[int] = typer.Option(None, "--bin-width", help="Bin width [default: 20]."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    plots: Optional[Path] = PLOTS,
):
    """Figure 2 (positives per query vs length in words) and Figure 3 (who is right, per length bin)."""
    from tvrbench.evaluation.fire.length import length_analysis

    settings = _settings(config, "length", metric=metric, unit=unit, bin_width=bin_width)
    captions, video_ids = captions_and_videos(queries, videos)
    models = read_models(scores, captions, video_ids)
    labels = read_fire_labels(fire_path, dataset)
    judgments = build_judgments(captions, video_ids, labels, videos)
    if len(models) != 2:
        raise InputError(None, FIGURE_MODELS)
    with option_errors("--metrics"):
        result = length_analysis(models, judgments, captions, settings, labels.datasets()[0],
                                 {"queries": queries, "videos": videos, "fire": fire_path})
    _finish(result, json_out, plots, settings)


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
def ranks(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: str = ONE_MODEL,
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = DATASET,
    max_rank: int = typer.Option(50, "--max-rank", min=1, help="Ranks beyond this are gathered in one bar."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    plots: Optional[Path] = PLOTS,
):
    """Appendix G: histogram of the ranks of positive videos, original vs FIRE positives."""
    from tvrbench.evaluation.fire.ranks import ranks_analysis

    settings = fire_config.load_config(config)
    captions, video_ids = captions_and_videos(queries, videos)
    name, matrix = _one_model(scores, captions, video_ids)
    labels = read_fire_labels(fire_path, dataset)
    result = ranks_analysis(matrix, build_judgments(captions, video_ids, labels, videos), max_rank, name,
                            labels.datasets()[0], {"queries": queries, "videos": videos, "fire": fire_path})
    _finish(result, json_out, plots, settings)


@fire.command("overlap-train")
@writes(json_out=FILE, plots=FOLDER)
def overlap_train(
    queries: Path = QUERIES,
    train: Path = typer.Option(..., "--train", help="Training captions (any captions format)."),
    fit_on: Optional[str] = typer.Option(None, "--fit-on", help="Fit TF-IDF on test (default, the paper), train or both."),
    videos: Optional[Path] = typer.Option(None, "--videos", help="For Figure 8: video ids of the score matrices."),
    scores: Optional[list[str]] = typer.Option(None, "--scores", help="For Figure 8: NAME=PATH of two models."),
    fire_path: Optional[Path] = FIRE_FILE,
    dataset: Optional[str] = DATASET,
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    plots: Optional[Path] = PLOTS,
):
    """Appendix D: mean top-10 character 5-gram TF-IDF similarity to train captions; Table 7 correlations.

    With --videos, --fire and two --scores, also Figure 8: who is right (C@5) per similarity bin.
    """
    from tvrbench.evaluation.fire.train_overlap import train_overlap_analysis
    from tvrbench.io.captions import read_captions

    settings = _settings(config, "train_overlap", fit_on=fit_on)
    test_captions, train_captions = read_captions(queries), read_captions(train)
    models, judgments, labels = None, None, None
    if scores:
        if videos is None or fire_path is None:
            raise InputError(None, "Figure 8 needs --videos and --fire with the two --scores")
        video_ids = captions_and_videos(queries, videos)[1]
        labels = read_fire_labels(fire_path, dataset)
        judgments = build_judgments(test_captions, video_ids, labels, videos)
        models = _two_models(scores, test_captions, video_ids, FIGURE_MODELS)
    with option_errors("--metrics"):
        result = train_overlap_analysis(test_captions, train_captions, settings, models, judgments,
                                        labels.datasets()[0] if labels else "FIRE",
                                        {"queries": queries, "train": train, "fire": fire_path})
    print_result(result)
    if result.figure8 is not None:
        print_result(result.figure8)
    if plots:
        save_figures(result, plots, settings.plots.formats, settings.plots.dpi)
    if json_out:
        write_json(json_out, result.to_json())
        written(json_out)


@fire.command()
@writes(out=FILE, json_out=FILE)
def queue(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: str = typer.Option(..., "--scores", help="The new model's .npy score matrix or TREC run (NAME=PATH)."),
    fire_path: Path = typer.Option(..., "--fire", help="FIRE JSON file with the labels collected so far."),
    out: Path = typer.Option(..., "--out", help="Queue for annotators: .csv, or JSON Lines for any other suffix."),
    dataset: Optional[str] = DATASET,
    k: Optional[int] = typer.Option(None, "--k", help="Depth of the top list to annotate [default: 10]."),
    effect_size: Optional[float] = typer.Option(None, "--effect-size", help="Difference to detect [default: 0.01]."),
    metric: Optional[str] = typer.Option(None, "--metric", help="Metric of the effect size [default: C@1]."),
    all_queries: bool = typer.Option(False, "--all-queries", help="Queue every query, not the bootstrap sample."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """The unjudged pairs of a new model's top k, for the queries needed to detect --effect-size."""
    from tvrbench.evaluation.fire.queue import queue_analysis, write_queue

    settings = _settings(config, "queue", k=k, effect_size=effect_size, metric=metric)
    captions, video_ids = captions_and_videos(queries, videos)
    name, matrix = _one_model(scores, captions, video_ids)
    judgments = build_judgments(captions, video_ids, read_fire_labels(fire_path, dataset), videos)
    with option_errors("--metrics"):
        result = queue_analysis(matrix, judgments, captions, video_ids, settings, name, all_queries,
                                {"queries": queries, "videos": videos, "fire": fire_path})
    write_queue(out, result.records)
    written(out)
    _finish(result, json_out)


@labels_app.command("to-qrels")
@writes(out=FILE, metadata=FILE)
def to_qrels(
    fire_path: Path = FIRE_REQUIRED,
    out: Path = typer.Option(..., "--out", help="TREC qrels to write."),
    metadata: Optional[Path] = typer.Option(None, "--metadata", help="Also write the sidecar 'to-fire' needs (query texts, votes, ids)."),
    queries: Optional[Path] = typer.Option(None, "--queries", help="Captions: use their caption ids as query ids."),
    dataset: Optional[str] = typer.Option(None, "--dataset", help="Only this dataset."),
    rule: Optional[str] = typer.Option(None, "--rule", help="file (default), majority, any, unanimous."),
    disagreements: Optional[str] = typer.Option(None, "--disagreements", help="omit (default), irrelevant, relevant, negative."),
    config: Optional[Path] = CONFIG,
):
    """Write FIRE labels as TREC qrels (relevant 1, irrelevant 0), optionally with a metadata sidecar."""
    from tvrbench.evaluation.fire.labels import fire_to_qrels, qrels_signature, write_metadata
    from tvrbench.io.captions import read_captions
    from tvrbench.io.fire import read_fire
    from tvrbench.io.trec import write_qrels

    opts = _settings(config, "labels", rule=rule, disagreements=disagreements).labels
    captions = read_captions(queries) if queries else None
    qrels, sidecar, unmatched = fire_to_qrels(read_fire(fire_path, dataset), opts.rule, opts.disagreements, captions,
                                              provenance=metadata is not None)
    write_qrels(out, qrels)
    written(out)
    if metadata is not None:
        sidecar["signature"] = str(qrels_signature(opts.rule, opts.disagreements, {"fire": fire_path, "queries": queries}))
        write_metadata(metadata, sidecar)
        written(metadata)
    typer.echo(f"{len(qrels):,} qrels lines: {int(np.sum(qrels.relevance > 0)):,} relevant, "
               f"{int(np.sum(qrels.relevance == 0)):,} irrelevant, {int(np.sum(qrels.relevance < 0)):,} disagreements"
               + (f"; {unmatched:,} pairs skipped (text not in {queries})" if unmatched else ""))


@labels_app.command("to-fire")
@writes(out=FILE)
def to_fire(
    qrels_path: Path = typer.Option(..., "--qrels", help="TREC qrels file."),
    metadata: Path = typer.Option(..., "--metadata", help="The sidecar written by 'to-qrels'."),
    out: Path = typer.Option(..., "--out", help="FIRE JSON to write."),
):
    """Rebuild a FIRE JSON file from qrels and the metadata sidecar."""
    from tvrbench.evaluation.fire.labels import qrels_to_fire, read_metadata
    from tvrbench.io.fire import write_fire
    from tvrbench.io.trec import read_qrels

    labels = qrels_to_fire(read_qrels(qrels_path), read_metadata(metadata), source=str(qrels_path))
    write_fire(out, labels)
    written(out)
    typer.echo(f"{len(labels):,} FIRE records ({int(np.sum(labels.label == -1)):,} disagreements)")
