"""``tvrbench fire ...``: The bootstrap family (§4.3): how many queries a difference needs, and which pairs to annotate next."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli.fire.group import fire
from tvrbench.cli.inputs import BOOTSTRAP_METRICS, CONFIG, JSON_OUT, PLOTS, SEED, read_fire_settings, split_list
from tvrbench.cli.models import ModelInputs, reads_models
from tvrbench.cli.outputs import FILE, FOLDER, beside, mark_beside, write_result, writes, written


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
@reads_models("one_or_embeddings", fire="optional")
def bootstrap(
    given: ModelInputs,
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
    inputs = given.read()
    name, matrix = inputs.model
    result = bootstrap_analysis(matrix, inputs.judgments, settings, name, inputs.sources)
    write_result(result, json_out, plots, settings.plots)


@fire.command()
@writes(json_out=FILE)
@reads_models(fire="optional")
def paired(
    given: ModelInputs,
    resamples: Optional[int] = typer.Option(None, "--resamples", help="Resamples [default: 10000]."),
    seed: Optional[int] = SEED,
    metrics: Optional[str] = BOOTSTRAP_METRICS,
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Paired bootstrap test of two models (first − second): difference, confidence interval, p-value."""
    from tvrbench.evaluation.fire.bootstrap import paired_analysis

    settings = read_fire_settings(config, "bootstrap", resamples=resamples, seed=seed, metrics=split_list(metrics))
    inputs = given.read()
    models = inputs.pair("the paired test")
    write_result(paired_analysis(models, inputs.judgments, settings, inputs.sources), json_out)


@fire.command()
@writes(out=beside(".json"), json_out=FILE)
@reads_models("one", scores_use="The new model, whose unjudged pairs are queued.", fire_help="FIRE JSON file with the labels collected so far.")
def queue(
    given: ModelInputs,
    out: Path = typer.Option(..., "--out", help="Queue for annotators: .csv, or JSON Lines for any other suffix."),
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
    inputs = given.read()
    name, matrix = inputs.model
    result = queue_analysis(matrix, inputs.judgments, inputs.captions, inputs.video_ids, settings, name, all_queries, inputs.sources)
    mark_beside(out)
    write_queue(out, result.records)
    written(out)
    write_result(result, json_out)
