"""``tvrbench fire ...``: Per-query analyses: caption length (Figures 2-3), ranks of positives (Appendix G), train-test overlap (Appendix D)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli.fire.group import fire
from tvrbench.cli.inputs import CONFIG, FIRE_DATASET, JSON_OUT, PLOTS, read_fire_settings, reads_captions, scores_option
from tvrbench.cli.models import FIRE_FILE, QUERIES, ModelInputs, reads_models
from tvrbench.cli.outputs import FILE, FOLDER, write_result, writes
from tvrbench.errors import InputError
from tvrbench.io.inputs import CaptionsReading


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
@reads_models()
def length(
    given: ModelInputs,
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
    inputs = given.read()
    result = length_analysis(inputs.pair(), inputs.judgments, inputs.captions, settings, inputs.dataset, inputs.sources)
    write_result(result, json_out, plots, settings.plots)


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
@reads_models("one")
def ranks(
    given: ModelInputs,
    max_rank: int = typer.Option(50, "--max-rank", min=1, help="Ranks beyond this are gathered in one bar."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    plots: Optional[Path] = PLOTS,
):
    """Appendix G: histogram of the ranks of positive videos, original vs FIRE positives."""
    from tvrbench.evaluation.fire.config import load_config
    from tvrbench.evaluation.fire.ranks import ranks_analysis

    settings = load_config(config)  # for the plots only: no metric of it is used
    inputs = given.read()
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
    scores: Optional[list[str]] = scores_option(use="For Figure 8: two models."),
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
    from tvrbench.evaluation.inputs import read_inputs

    settings = read_fire_settings(config, "train_overlap", fit_on=fit_on)
    inputs = None
    if scores:
        if videos is None or fire_path is None:
            raise InputError(None, "Figure 8 needs --videos and --fire with the two --scores")
        inputs = read_inputs(reading, queries, videos, scores, fire_path, dataset)
    figure8 = {"scores": inputs.pair(), "judgments": inputs.judgments, "dataset": inputs.dataset} if inputs else {}
    test_captions, train_captions = inputs.captions if inputs else reading.read(queries), reading.read(train, filter_videos=False)
    read = {"videos": videos, "scores": inputs.sources["scores"], "fire": fire_path} if inputs else {}  # Figure 8's inputs
    result = train_overlap_analysis(test_captions, train_captions, settings, sources={"queries": queries, "train": train, **read}, **figure8)
    write_result(result, json_out, plots, settings.plots)
