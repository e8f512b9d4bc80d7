"""``tvrbench fire ...``: Tables 1-3 and the pooling bias: what the labels are and how they change a ranking of models."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli.fire.group import fire
from tvrbench.cli.inputs import AP, CONFIG, FIRE_DATASET_FILTER, JSON_OUT, LABEL_RULE, METRICS, TIES, read_fire_settings, split_list
from tvrbench.cli.models import FIRE_REQUIRED, ModelInputs, reads_models
from tvrbench.cli.outputs import FILE, beside, mark_beside, write_result, writes, written
from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write


@fire.command()
@writes(json_out=FILE)
def agreement(
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = FIRE_DATASET_FILTER,
    rule: Optional[str] = LABEL_RULE,
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Table 2: pairs, labels, relevant / irrelevant / disagreements, agreement and Krippendorff's α."""
    from tvrbench.evaluation.fire.agreement import agreement_analysis
    from tvrbench.io.fire import read_fire

    rule = read_fire_settings(config, "labels", rule=rule).labels.rule
    write_result(agreement_analysis(read_fire(fire_path, dataset), rule, {"fire": fire_path}), json_out)


@fire.command()
@writes(json_out=FILE, csv_out=beside(".json"))
@reads_models("many_or_embeddings")
def compare(
    given: ModelInputs,
    metrics: Optional[str] = METRICS,
    ties: Optional[str] = TIES,
    ap: Optional[str] = AP,
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    csv_out: Optional[Path] = typer.Option(None, "--csv", help="Write metric,model,with_fire,original,delta rows here."),
):
    """Table 1 for several models: each metric as A (B + C) = with FIRE (original + gain).

    A model is a score matrix (--scores) or a pair of embeddings (--text-embeddings with
    --video-embeddings, scored block by block as `tvrbench evaluate` does).
    """
    from tvrbench.evaluation.fire.compare import compare_analysis

    settings = read_fire_settings(config, None, metrics=split_list(metrics), ties=ties, ap=ap)
    inputs = given.read()
    result = compare_analysis(inputs.models, inputs.judgments, settings, inputs.sources)
    write_result(result, json_out)
    if csv_out:
        mark_beside(csv_out)
        with atomic_write(csv_out) as out:
            out.write(result.to_csv())
        written(csv_out)


@fire.command()
@writes(json_out=FILE)
@reads_models(fire=None)
def overlap(
    given: ModelInputs,
    k: Optional[int] = typer.Option(None, "--k", help="Depth of the compared lists [default: 10]."),
    p: Optional[float] = typer.Option(None, "--p", help="RBO persistence [default: 0.9]."),
    variant: Optional[str] = typer.Option(None, "--variant", help="RBO variant: ext (default), min, trunc."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Table 3: mean top-k overlap and rank-biased overlap for every pair of models."""
    from tvrbench.evaluation.fire.overlap import overlap_analysis

    settings = read_fire_settings(config, "overlap", k=k, rbo_p=p, rbo_variant=variant)
    inputs = given.read()
    if len(inputs.models) < 2:
        raise InputError(None, "overlap compares models: give --scores at least twice")
    write_result(overlap_analysis(inputs.models, settings, inputs.sources), json_out)


@fire.command()
@writes(json_out=FILE)
@reads_models(fire_help="FIRE JSON file; model names must match its 'models' field.")
def pooling(given: ModelInputs, metrics: Optional[str] = METRICS, config: Optional[Path] = CONFIG, json_out: Optional[Path] = JSON_OUT):
    """Table 4: each model with all FIRE labels vs with only the labels other models' pools brought."""
    from tvrbench.evaluation.fire.pooling import pooling_analysis

    settings = read_fire_settings(config, None, metrics=split_list(metrics))
    inputs = given.read()
    write_result(pooling_analysis(inputs.models, inputs.captions, inputs.video_ids, inputs.labels, settings, inputs.sources), json_out)
