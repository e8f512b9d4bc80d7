"""``tvrbench fire ...``: FIRE relevance labels and the paper's validity analyses (SPEC §3).

Every subcommand prints its table, writes ``--json`` (with a signature) and, given ``--plots DIR``,
the paper's figure as PNG and SVG. Models are given as ``--scores NAME=PATH`` (a ``.npy`` score
matrix or a TREC run; without ``NAME=`` the file name minus a ``scores_`` prefix is the name).
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pydantic
import typer
from rich.console import Console
from rich.table import Table

from tvrbench.cli import app
from tvrbench.cli.outputs import FILE, FOLDER, writes
from tvrbench.errors import InputError
from tvrbench.evaluation.fire import config as fire_config
from tvrbench.io.atomic import atomic_write, write_json
from tvrbench.io.outputs import name_in, safe_name
from tvrbench.signature import Signature, file_digest

fire = typer.Typer(help="FIRE relevance labels: agreement, Table 1, overlap, pooling bias, bootstrap, length, "
                        "train-test overlap, annotation queue, qrels conversion.", no_args_is_help=True)
labels_app = typer.Typer(help="Convert FIRE JSON to TREC qrels and back.", no_args_is_help=True)
app.add_typer(fire, name="fire")
fire.add_typer(labels_app, name="labels")

QUERIES = typer.Option(..., "--queries", help="Captions (rows of the score matrices): CSV/TSV/JSONL or MSR-VTT files.")
VIDEOS = typer.Option(..., "--videos", help="Video ids, one per line, in score-matrix column order.")
SCORES = typer.Option(..., "--scores", help="NAME=PATH of a model's .npy score matrix or TREC run; repeatable.")
FIRE_FILE = typer.Option(None, "--fire", help="FIRE JSON file.")
FIRE_REQUIRED = typer.Option(..., "--fire", help="FIRE JSON file.")
DATASET = typer.Option(None, "--dataset", help="Dataset of the FIRE file to use (MSRVTT, MSVD); needed if it has several.")
CONFIG = typer.Option(None, "--config", help="YAML settings (a copy of configs/fire.yaml).")
JSON_OUT = typer.Option(None, "--json", help="Write the results as JSON here.")
PLOTS = typer.Option(None, "--plots", help="Write the figure(s) as PNG and SVG into this folder.")


# --------------------------------------------------------------------------- inputs


def _settings(config: Optional[Path], section: str | None = None, **overrides):
    """The config (or its ``section``), with the command-line values that were given laid over it."""
    settings = fire_config.load_config(config)
    target = getattr(settings, section) if section else settings
    given = {key: value for key, value in overrides.items() if value is not None}
    try:
        updated = type(target).model_validate({**target.model_dump(), **given})
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        raise InputError(None, f"option {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
    return settings, updated


def _split_list(text: Optional[str], convert=str) -> Optional[list]:
    if text is None:
        return None
    try:
        return [convert(part.strip()) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(None, f"cannot read {text!r} as a comma-separated list") from None


def _captions_and_videos(queries: Path, videos: Path):
    from tvrbench.io.captions import read_captions, read_video_ids

    return read_captions(queries), read_video_ids(videos)


def _model_name(spec: str) -> tuple[str, Path]:
    name, separator, path = spec.partition("=")
    if not separator:
        path = spec
        name = Path(spec).stem.removeprefix("scores_")
    if not name or not path:
        raise InputError(None, f"--scores {spec!r}: expected NAME=PATH")
    return safe_name(name, "model name (it names plot files)"), Path(path)


def _models(specs: list[str], captions, video_ids) -> dict[str, np.ndarray]:
    """Score matrices by model name; TREC runs become matrices (unretrieved pairs rank last)."""
    from tvrbench.io.scores import read_scores
    from tvrbench.io.trec import read_run, run_to_matrix

    models: dict[str, np.ndarray] = {}
    for spec in specs:
        name, path = _model_name(spec)
        if name in models:
            raise InputError(path, f"model name {name!r} is given twice; use NAME=PATH")
        if path.suffix == ".npy":
            models[name] = read_scores(path, shape=(len(captions), len(video_ids)))
        else:
            models[name] = run_to_matrix(read_run(path), captions.caption_ids, video_ids)
    return models


def _fire_labels(path: Optional[Path], dataset: Optional[str], required: bool = True):
    from tvrbench.io.fire import read_fire

    if path is None:
        if required:
            raise InputError(None, "this analysis needs FIRE labels: give --fire F.json")
        return None
    labels = read_fire(path, dataset)
    if dataset is None and len(labels.datasets()) > 1:
        raise InputError(path, f"has datasets {', '.join(labels.datasets())}; choose one with --dataset")
    return labels


def _judgments(captions, video_ids, fire_labels, videos: Path):
    from tvrbench.evaluation import Judgments

    return Judgments.build(captions, video_ids, fire=fire_labels, videos_source=str(videos))


def _evaluate(matrix, judgments, metrics, ties="stable", ap="standard"):
    from tvrbench.evaluation import evaluate

    try:
        return evaluate(matrix, judgments, metrics=tuple(metrics), ties=ties, ap=ap)
    except ValueError as error:
        raise InputError(None, f"--metrics: {error}") from None


def _signature(command: str, inputs: dict[str, Optional[Path]], fields: dict, libraries=("numpy",)) -> str:
    signature = Signature({"analysis": f"fire-{command}"}, libraries=libraries)
    for name, path in inputs.items():
        if path is not None:
            signature.add(name, file_digest(path, algorithm="xxh3" if path.suffix == ".npy" else "sha256"))  # matrices: fast
    for key, value in fields.items():
        signature.add(key, value)
    return str(signature)


def _nested(signature: str) -> str:
    """The engine's signature as one field of ours (its ``|`` separators become ``;``)."""
    return signature.replace("|", ";")


def _print_table(title: str, header: list[str], rows: list[list[str]]) -> None:
    table = Table(title=title, title_justify="left")
    for column in header:
        table.add_column(column, justify="left" if column == header[0] else "right")
    for row in rows:
        table.add_row(*row)
    Console(width=max(100, sum(len(h) + 14 for h in header))).print(table)


def _written(*paths) -> None:
    typer.echo("wrote " + ", ".join(str(p) for p in paths), err=True)


def _fmt(value) -> str:
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else f"{value:,}"


# --------------------------------------------------------------------------- agreement (Table 2)


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
    from tvrbench.evaluation.fire.agreement import agreement as table2
    from tvrbench.io.fire import read_fire

    _, labels_settings = _settings(config, "labels", rule=rule)
    stats = table2(read_fire(fire_path, dataset), rule=labels_settings.rule)
    signature = _signature("agreement", {"fire": fire_path}, {"rule": labels_settings.rule, "alpha": "nominal"})
    header = ["dataset", "pairs", "labels", "resolved", "relevant", "irrelevant", "disagreements", "agreement", "α"]
    rows = [[name, _fmt(s.pairs), _fmt(s.labels), f"{s.resolved:.1%}", _fmt(s.relevant), _fmt(s.irrelevant),
             _fmt(s.disagreements), _fmt(s.agreement), _fmt(s.alpha)] for name, s in stats.items()]
    _print_table("FIRE agreement (Table 2)", header, rows)
    if json_out:
        write_json(json_out, {name: {**s.to_json(), "signature": signature} for name, s in stats.items()})
        _written(json_out)


# --------------------------------------------------------------------------- compare (Table 1)


@fire.command()
@writes(json_out=FILE, csv_out=FILE)
def compare(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = DATASET,
    metrics: Optional[str] = typer.Option(None, "--metrics", help="Comma-separated engine metrics [default: C@1,C@5,C@10,AP]."),
    ties: Optional[str] = typer.Option(None, "--ties", help="stable (default), optimistic, pessimistic, average."),
    ap: Optional[str] = typer.Option(None, "--ap", help="standard (default) or fire."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    csv_out: Optional[Path] = typer.Option(None, "--csv", help="Write metric,model,with_fire,original,delta rows here."),
):
    """Table 1 for several models: each metric as A (B + C) = with FIRE (original + gain)."""
    from tvrbench.evaluation.fire.compare import comparison_csv, comparison_rows, comparison_table, compare_models

    _, settings = _settings(config, None, metrics=_split_list(metrics), ties=ties, ap=ap)
    captions, video_ids = _captions_and_videos(queries, videos)
    models = _models(scores, captions, video_ids)
    judgments = _judgments(captions, video_ids, _fire_labels(fire_path, dataset), videos)
    try:
        results = compare_models(models, judgments, settings.metrics, settings.ties, settings.ap)
    except ValueError as error:
        raise InputError(None, f"--metrics: {error}") from None
    rows = comparison_rows(results, settings.metrics)
    grid = comparison_table(rows)
    _print_table("With FIRE (original + gain), percent for bounded metrics (Table 1)", grid[0], grid[1:])
    signatures = {name: result.signature for name, result in results.items()}
    if json_out:
        write_json(json_out, {"rows": rows, "table": grid, "signatures": signatures})
        _written(json_out)
    if csv_out:
        with atomic_write(csv_out) as out:
            out.write(comparison_csv(rows))
        _written(csv_out)


# --------------------------------------------------------------------------- overlap (Table 3)


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
    from tvrbench.evaluation import rank_top_k
    from tvrbench.evaluation.fire.overlap import prediction_overlap

    _, settings = _settings(config, "overlap", k=k, rbo_p=p, rbo_variant=variant)
    captions, video_ids = _captions_and_videos(queries, videos)
    models = _models(scores, captions, video_ids)
    if len(models) < 2:
        raise InputError(None, "overlap compares models: give --scores at least twice")
    tops = {name: rank_top_k(matrix, settings.k) for name, matrix in models.items()}
    rows = prediction_overlap(tops, settings.rbo_p, settings.rbo_variant)
    rbo_name = f"RBO_{settings.rbo_variant} (p={settings.rbo_p})"
    _print_table(f"Top-{settings.k} prediction overlap (Table 3)", ["models", "overlap", rbo_name],
                 [[f"{r.model_a} & {r.model_b}", f"{r.overlap:.4f}", f"{r.rbo:.4f}"] for r in rows])
    if json_out:
        signature = _signature("overlap", {"queries": queries, "videos": videos},
                               {"k": settings.k, "rbo": settings.rbo_variant, "p": settings.rbo_p, "ties": "stable"})
        write_json(json_out, {"pairs": [r.to_json() for r in rows], "k": settings.k, "rbo_variant": settings.rbo_variant,
                              "p": settings.rbo_p, "signature": signature})
        _written(json_out)


# --------------------------------------------------------------------------- pooling (Table 4)


@fire.command()
@writes(json_out=FILE)
def pooling(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Path = typer.Option(..., "--fire", help="FIRE JSON file; model names must match its 'models' field."),
    dataset: Optional[str] = DATASET,
    metrics: Optional[str] = typer.Option(None, "--metrics", help="Comma-separated engine metrics [default: C@1,C@5,C@10,AP]."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Table 4: each model with all FIRE labels vs with only the labels other models' pools brought."""
    from tvrbench.evaluation.fire.pooling import pooling_bias

    _, settings = _settings(config, None, metrics=_split_list(metrics))
    captions, video_ids = _captions_and_videos(queries, videos)
    models = _models(scores, captions, video_ids)
    labels = _fire_labels(fire_path, dataset)
    try:
        rows = pooling_bias(models, captions, video_ids, labels, settings.metrics, settings.ties, settings.ap)
    except ValueError as error:
        raise InputError(None, f"--metrics: {error}") from None
    _print_table("Pooling bias: all labels vs other models' pools only (Table 4)", ["model", "labels", *settings.metrics],
                 [[r["model"], r["labels"], *(f"{r[m]:.3f}" for m in settings.metrics)] for r in rows])
    if json_out:
        write_json(json_out, {"rows": rows})
        _written(json_out)


# --------------------------------------------------------------------------- bootstrap (§4.3, Figure 4)


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
def bootstrap(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: str = typer.Option(..., "--scores", help="The model's .npy score matrix or TREC run (NAME=PATH allowed)."),
    fire_path: Optional[Path] = FIRE_FILE,
    dataset: Optional[str] = DATASET,
    sizes: Optional[str] = typer.Option(None, "--sizes", help="Comma-separated sample sizes [default: 500,1000,3000]."),
    resamples: Optional[int] = typer.Option(None, "--resamples", help="Resamples per size [default: 10000]."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="Random seed [default: 0]."),
    metrics: Optional[str] = typer.Option(None, "--metrics", help="Comma-separated metrics [default: C@1,C@5,C@10]."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    plots: Optional[Path] = PLOTS,
):
    """§4.3: per metric and sample size, the distribution and 95th percentile of |resample mean − full mean|."""
    from tvrbench.evaluation.fire.bootstrap import bootstrap_differences, bootstrap_json

    settings, boot = _settings(config, "bootstrap", sizes=_split_list(sizes, int), resamples=resamples, seed=seed,
                               metrics=_split_list(metrics))
    captions, video_ids = _captions_and_videos(queries, videos)
    (name, matrix), = _models([scores], captions, video_ids).items()
    judgments = _judgments(captions, video_ids, _fire_labels(fire_path, dataset, required=False), videos)
    result = _evaluate(matrix, judgments, boot.metrics, settings.ties, settings.ap)
    results = bootstrap_differences({m: result.per_query[m] for m in boot.metrics}, boot.sizes, boot.resamples,
                                    boot.seed, boot.confidence, boot.chunk_elements)
    signature = _signature("bootstrap", {"queries": queries, "videos": videos, "scores": _model_name(scores)[1],
                                         "fire": fire_path},
                           {"sizes": boot.sizes, "resamples": boot.resamples, "seed": boot.seed,
                            "confidence": boot.confidence, "engine": _nested(result.signature)})
    quantile = f"{boot.confidence:.0%} quantile"
    _print_table(f"{name}: bootstrap |resample mean − full mean|, {quantile} (§4.3)", ["metric", "full", *map(str, boot.sizes)],
                 [[m, f"{results[m][boot.sizes[0]].full_mean:.4f}", *(f"{results[m][s].quantile:.4f}" for s in boot.sizes)]
                  for m in boot.metrics])
    if json_out:
        write_json(json_out, bootstrap_json(results, signature))
        _written(json_out)
    if plots:
        from tvrbench.evaluation.fire.plots import bootstrap_figure, save_figure

        for metric in boot.metrics:
            stem = name_in(plots, f"fig4_bootstrap_{name}_{metric.replace('@', 'at')}", "plot file name")
            _written(*save_figure(bootstrap_figure(results[metric], metric, name), stem, settings.plots.formats,
                                  settings.plots.dpi))


@fire.command()
@writes(json_out=FILE)
def paired(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: list[str] = SCORES,
    fire_path: Optional[Path] = FIRE_FILE,
    dataset: Optional[str] = DATASET,
    resamples: Optional[int] = typer.Option(None, "--resamples", help="Resamples [default: 10000]."),
    seed: Optional[int] = typer.Option(None, "--seed", min=0, help="Random seed [default: 0]."),
    metrics: Optional[str] = typer.Option(None, "--metrics", help="Comma-separated metrics [default: C@1,C@5,C@10]."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
):
    """Paired bootstrap test of two models (first − second): difference, confidence interval, p-value."""
    from tvrbench.evaluation.fire.bootstrap import paired_bootstrap_test

    settings, boot = _settings(config, "bootstrap", resamples=resamples, seed=seed, metrics=_split_list(metrics))
    captions, video_ids = _captions_and_videos(queries, videos)
    models = _models(scores, captions, video_ids)
    if len(models) != 2:
        raise InputError(None, "the paired test compares two models: give --scores exactly twice")
    judgments = _judgments(captions, video_ids, _fire_labels(fire_path, dataset, required=False), videos)
    (name_a, a), (name_b, b) = models.items()
    result_a = _evaluate(a, judgments, boot.metrics, settings.ties, settings.ap)
    result_b = _evaluate(b, judgments, boot.metrics, settings.ties, settings.ap)
    tests = {m: paired_bootstrap_test(result_a.per_query[m], result_b.per_query[m], boot.resamples, boot.seed,
                                      boot.confidence, boot.chunk_elements) for m in boot.metrics}
    _print_table(f"Paired bootstrap: {name_a} − {name_b}", ["metric", "difference", f"{boot.confidence:.0%} CI", "p-value"],
                 [[m, f"{t.difference:+.4f}", f"[{t.ci_low:+.4f}, {t.ci_high:+.4f}]", f"{t.p_value:.4g}"]
                  for m, t in tests.items()])
    if json_out:
        signature = _signature("paired", {"queries": queries, "videos": videos, "fire": fire_path},
                               {"resamples": boot.resamples, "seed": boot.seed, "confidence": boot.confidence,
                                "engine": _nested(result_a.signature)})
        write_json(json_out, {"model_a": name_a, "model_b": name_b,
                              "tests": {m: t.to_json() for m, t in tests.items()}, "signature": signature})
        _written(json_out)


# --------------------------------------------------------------------------- length (Figures 2, 3)


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
    from tvrbench.evaluation.fire.length import bin_edges, caption_lengths, positives_by_length

    settings, opts = _settings(config, "length", metric=metric, unit=unit, bin_width=bin_width)
    captions, video_ids = _captions_and_videos(queries, videos)
    models = _models(scores, captions, video_ids)
    labels = _fire_labels(fire_path, dataset)
    name = labels.datasets()[0]
    fig2 = name_in(plots, f"fig2_positives_vs_length_{name}", "FIRE dataset name") if plots else None
    judgments = _judgments(captions, video_ids, labels, videos)
    words = caption_lengths(captions.texts, "words")
    positives = np.asarray(judgments.positive.sum(axis=1)).ravel()
    lengths = caption_lengths(captions.texts, opts.unit)
    name_a, name_b, tables, engine = _two_model_outcomes(models, judgments, opts.metric, lengths,
                                                         bin_edges(lengths, opts.bin_width), settings)
    _print_outcomes(f"{opts.metric} by caption length (Figure 3)", f"{opts.unit} bin", tables, name_a, name_b)
    if json_out:
        signature = _signature("length", {"queries": queries, "videos": videos, "fire": fire_path},
                               {"metric": opts.metric, "unit": opts.unit, "bin_width": opts.bin_width, "engine": engine})
        write_json(json_out, {"positives_vs_words": positives_by_length(words, positives), "model_a": name_a,
                              "model_b": name_b, "metric": opts.metric, "unit": opts.unit,
                              "outcomes": {source: table.to_json() for source, table in tables.items()},
                              "signature": signature})
        _written(json_out)
    if plots:
        from tvrbench.evaluation.fire.plots import positives_vs_length_figure, save_figure

        figure = positives_vs_length_figure(words, positives, name)
        _written(*save_figure(figure, fig2, settings.plots.formats, settings.plots.dpi))
        _save_outcome_figures(tables, name_a, name_b, f"{name}: {opts.metric} of {name_a} and {name_b} by caption length",
                              f"Caption length ({opts.unit})", plots / "fig3_outcomes_by_length", settings)


def _two_model_outcomes(models: dict, judgments, metric: str, values: np.ndarray, edges: np.ndarray, settings):
    """Both / only A / only B / neither per bin of ``values``, with FIRE and with original labels."""
    from tvrbench.evaluation.fire.length import outcomes_by_bin

    if len(models) != 2:
        raise InputError(None, "this figure compares two models: give --scores exactly twice")
    (name_a, a), (name_b, b) = models.items()
    result_a, result_b = (_evaluate(m, judgments, [metric], settings.ties, settings.ap) for m in (a, b))
    tables = {
        "fire": outcomes_by_bin(values, result_a.per_query[metric] > 0, result_b.per_query[metric] > 0, edges),
        "original": outcomes_by_bin(values, result_a.original.per_query[metric] > 0,
                                    result_b.original.per_query[metric] > 0, edges),
    }
    return name_a, name_b, tables, _nested(result_a.signature)


def _print_outcomes(title: str, bin_name: str, tables: dict, name_a: str, name_b: str) -> None:
    header = ["labels", bin_name, "queries", "both", f"only {name_a}", f"only {name_b}", "neither"]
    rows = [[source, f"[{row['low']:g}, {row['high']:g})", str(row["queries"]),
             *(f"{row[f'{o}_share']:.2f}" for o in ("both", "only_a", "only_b", "neither"))]
            for source, table in tables.items() for row in table.to_json() if row["queries"]]
    _print_table(title, header, rows)


def _save_outcome_figures(tables: dict, name_a: str, name_b: str, title: str, xlabel: str, stem: Path, settings) -> None:
    from tvrbench.evaluation.fire.plots import outcomes_figure, save_figure

    for source, table in tables.items():
        described = "with FIRE labels" if source == "fire" else "original labels only"
        figure = outcomes_figure(table, name_a, name_b, xlabel, f"{title} ({described})")
        _written(*save_figure(figure, Path(f"{stem}_{source}"), settings.plots.formats, settings.plots.dpi))


# --------------------------------------------------------------------------- rank of positives (Appendix G)


@fire.command()
@writes(json_out=FILE, plots=FOLDER)
def ranks(
    queries: Path = QUERIES,
    videos: Path = VIDEOS,
    scores: str = typer.Option(..., "--scores", help="The model's .npy score matrix or TREC run (NAME=PATH allowed)."),
    fire_path: Path = FIRE_REQUIRED,
    dataset: Optional[str] = DATASET,
    max_rank: int = typer.Option(50, "--max-rank", min=1, help="Ranks beyond this are gathered in one bar."),
    config: Optional[Path] = CONFIG,
    json_out: Optional[Path] = JSON_OUT,
    plots: Optional[Path] = PLOTS,
):
    """Appendix G: histogram of the ranks of positive videos, original vs FIRE positives."""
    from tvrbench.evaluation.fire.ranks import positive_ranks

    settings = fire_config.load_config(config)
    captions, video_ids = _captions_and_videos(queries, videos)
    (name, matrix), = _models([scores], captions, video_ids).items()
    labels = _fire_labels(fire_path, dataset)
    found = positive_ranks(matrix, _judgments(captions, video_ids, labels, videos), max_rank)
    counts = {source: np.bincount(np.minimum(r, max_rank + 1), minlength=max_rank + 2)[1:].tolist() for source, r in found.items()}
    within = {source: int(np.sum(r <= 10)) for source, r in found.items()}
    _print_table(f"{name}: positives by rank (Appendix G)", ["source", "positives", "in top 10", f"beyond {max_rank}"],
                 [[s, str(len(r)), str(within[s]), str(counts[s][-1])] for s, r in found.items()])
    if json_out:
        signature = _signature("ranks", {"queries": queries, "videos": videos, "fire": fire_path}, {"max_rank": max_rank})
        write_json(json_out, {"model": name, "max_rank": max_rank, "counts_by_rank": counts, "signature": signature})
        _written(json_out)
    if plots:
        from tvrbench.evaluation.fire.plots import positive_ranks_figure, save_figure

        figure = positive_ranks_figure(found["original"], found["fire"], max_rank, labels.datasets()[0], name)
        _written(*save_figure(figure, name_in(plots, f"appG_positive_ranks_{name}", "plot file name"), settings.plots.formats,
                              settings.plots.dpi))


# --------------------------------------------------------------------------- train-test overlap (Appendix D)


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
    from tvrbench.evaluation.fire.length import bin_edges
    from tvrbench.evaluation.fire.train_overlap import length_correlations, train_test_similarity
    from tvrbench.io.captions import read_captions

    settings, opts = _settings(config, "train_overlap", fit_on=fit_on)
    test_captions, train_captions = read_captions(queries), read_captions(train)
    similarity = train_test_similarity(test_captions.texts, train_captions.texts, opts.ngram, opts.top, opts.fit_on)
    table = length_correlations(similarity, test_captions.texts)
    _print_table(f"Train-test similarity vs caption length (Table 7); mean similarity {similarity.mean():.3f}",
                 ["length", "Spearman", "Kendall"],
                 [[unit, f"{row['spearman']['statistic']:.3f}", f"{row['kendall']['statistic']:.3f}"] for unit, row in table.items()])
    payload = {"correlations": table, "mean_similarity": float(similarity.mean()),
               "similarity": {cid: float(s) for cid, s in zip(test_captions.caption_ids, similarity)}}
    fields = {"ngram": opts.ngram, "top": opts.top, "fit_on": opts.fit_on}
    if scores:
        if videos is None or fire_path is None:
            raise InputError(None, "Figure 8 needs --videos and --fire with the two --scores")
        video_ids = _captions_and_videos(queries, videos)[1]
        labels = _fire_labels(fire_path, dataset)
        judgments = _judgments(test_captions, video_ids, labels, videos)
        edges = np.round(np.arange(0.0, 1.0 + opts.bin_width / 2, opts.bin_width), 10)
        name_a, name_b, tables, engine = _two_model_outcomes(_models(scores, test_captions, video_ids), judgments,
                                                             opts.metric, similarity, edges, settings)
        _print_outcomes(f"{opts.metric} by train-test similarity (Figure 8)", "similarity bin", tables, name_a, name_b)
        payload.update({"model_a": name_a, "model_b": name_b, "metric": opts.metric,
                        "outcomes": {source: t.to_json() for source, t in tables.items()}})
        fields.update({"metric": opts.metric, "bin_width": opts.bin_width, "engine": engine})
        if plots:
            _save_outcome_figures(tables, name_a, name_b,
                                  f"{labels.datasets()[0]}: {opts.metric} of {name_a} and {name_b} by train-test similarity",
                                  f"Mean similarity of the {opts.top} closest train captions (character {opts.ngram}-gram TF-IDF)",
                                  plots / "fig8_outcomes_by_train_similarity", settings)
    if json_out:
        payload["signature"] = _signature("overlap-train", {"queries": queries, "train": train, "fire": fire_path}, fields,
                                          libraries=("numpy", "scipy", "scikit-learn"))
        write_json(json_out, payload)
        _written(json_out)


# --------------------------------------------------------------------------- annotation queue


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
    from tvrbench.evaluation.fire.bootstrap import bootstrap_differences, queries_for_difference
    from tvrbench.evaluation.fire.queue import build_queue, queue_records, write_queue

    settings, opts = _settings(config, "queue", k=k, effect_size=effect_size, metric=metric)
    boot = settings.bootstrap
    captions, video_ids = _captions_and_videos(queries, videos)
    (name, matrix), = _models([scores], captions, video_ids).items()
    judgments = _judgments(captions, video_ids, _fire_labels(fire_path, dataset), videos)
    per_query = _evaluate(matrix, judgments, [opts.metric], settings.ties, settings.ap).per_query[opts.metric]
    by_size = bootstrap_differences({opts.metric: per_query}, boot.sizes, boot.resamples, boot.seed, boot.confidence,
                                    boot.chunk_elements)[opts.metric]
    needed = queries_for_difference(by_size, opts.effect_size)
    chosen = build_queue(matrix, judgments, opts.k, None if all_queries else needed, boot.seed)
    records = queue_records(chosen, matrix, captions, video_ids, name)
    write_queue(out, records)
    _written(out)
    summary = {
        "model": name, "k": opts.k, "metric": opts.metric, "effect_size": opts.effect_size,
        "queries_needed": needed, "queries_queued": len(chosen.selected_queries), "queries_total": len(captions),
        "pairs_queued": len(chosen), f"judged_at_{opts.k}_before": chosen.judged_before,
        f"judged_at_{opts.k}_after": chosen.judged_after,
    }
    _print_table(f"Annotation queue for {name}", ["", "value"], [[key, _fmt(value)] for key, value in summary.items()
                                                                if not isinstance(value, str)])
    if json_out:
        signature = _signature("queue", {"queries": queries, "videos": videos, "fire": fire_path},
                               {"k": opts.k, "metric": opts.metric, "effect_size": opts.effect_size,
                                "sizes": boot.sizes, "resamples": boot.resamples, "seed": boot.seed})
        write_json(json_out, {**summary, "signature": signature})
        _written(json_out)


# --------------------------------------------------------------------------- labels: FIRE ⇄ qrels


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
    from tvrbench.evaluation.fire.labels import fire_to_qrels, write_metadata
    from tvrbench.io.captions import read_captions
    from tvrbench.io.fire import read_fire
    from tvrbench.io.trec import write_qrels

    _, opts = _settings(config, "labels", rule=rule, disagreements=disagreements)
    captions = read_captions(queries) if queries else None
    qrels, sidecar, unmatched = fire_to_qrels(read_fire(fire_path, dataset), opts.rule, opts.disagreements, captions,
                                              provenance=metadata is not None)
    write_qrels(out, qrels)
    _written(out)
    if metadata is not None:
        sidecar["signature"] = _signature("labels", {"fire": fire_path, "queries": queries},
                                          {"rule": opts.rule, "disagreements": opts.disagreements})
        write_metadata(metadata, sidecar)
        _written(metadata)
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
    _written(out)
    typer.echo(f"{len(labels):,} FIRE records ({int(np.sum(labels.label == -1)):,} disagreements)")
