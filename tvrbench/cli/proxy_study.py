"""``tvrbench proxy-study ...``: the studies of Wray et al. on proxy matrices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli import app
from tvrbench.cli.inputs import PLOTS, captions_option, reads_captions, scores_option, seed_option
from tvrbench.cli.outputs import FILE, FOLDER, Writes, beside, mark_beside, writes
from tvrbench.errors import InputError
from tvrbench.io.inputs import CaptionsReading, named_paths

study = typer.Typer(help="Studies of Wray et al. on proxy matrices: Fig. 4 curve, Fig. 5 GMR bounds, supp. A/B, §4.3 triplets.", no_args_is_help=True)
app.add_typer(study, name="proxy-study")

VIDEO_MATRIX = typer.Option(..., "--matrix", help="Video-level proxy matrix.")
STUDY_SEED = seed_option("Random seed.", default=0)  # the studies have no config file to hold a seed
# --plot FILE, the option before --plots DIR: deprecated, kept for one release (_deprecated_plot); gmr's writes FILE_t2v and FILE_v2t.
# A figure does not name the command that drew it, so it is not checked against one.
DEPRECATED_PLOT = typer.Option(None, "--plot", hidden=True, help="Deprecated: use --plots DIR.")
PLOT = Writes(told=False)
GMR_PLOTS = Writes(tuple(lambda path, d=direction: path.with_name(f"{path.stem}_{d}{path.suffix}") for direction in ("t2v", "v2t")), told=False)


def _similarity(value: float) -> float:
    """A threshold on proxy values, which lie in [0, 1] (NaN or a value outside would select nothing)."""
    if not 0.0 <= value <= 1.0:
        raise typer.BadParameter(f"{value} is not a similarity in [0, 1]")
    return value


def _plot_settings(formats=("png", "svg")):
    """The studies' figures at 150 dpi, the resolution they have always had (FIRE's config says 200 for its own)."""
    from tvrbench.evaluation.fire.config import PlotConfig

    return PlotConfig(formats=list(formats), dpi=150)


def _emit(result, json_out: Optional[Path], plots: Optional[Path] = None, plot: Optional[Path] = None) -> None:
    """Print the study's JSON (what scripts read from these commands), write it to ``--json`` and its figures to ``--plots``."""
    from tvrbench.cli.outputs import write_result

    if plot is not None:
        _deprecated_plot(result, plot)
    show = lambda shown: typer.echo(json.dumps(shown.to_json(), indent=2))  # noqa: E731
    write_result(result, json_out, plots, _plot_settings() if plots else None, show=show)


def _deprecated_plot(result, plot: Path) -> None:
    """``--plot FILE`` as before ``--plots DIR``, for one release: the figure as FILE, in its format only
    (gmr's as ``FILE_t2v`` and ``FILE_v2t``)."""
    from tvrbench.cli.outputs import save_figures

    typer.echo("tvrbench: --plot FILE is deprecated and goes in the next release; use --plots DIR (PNG and SVG)", err=True)
    fmt = plot.suffix.lower().removeprefix(".")
    if fmt not in ("png", "svg"):
        raise InputError(plot, "plots are written as .png or .svg")
    renamed = ((plot.stem + stem.removeprefix(result.stem), figure) for stem, figure in result.figures())
    save_figures(renamed, plot.parent, _plot_settings((fmt,)))


@study.command("curve")
@writes(plots=FOLDER, plot=PLOT, json_out=FILE)
def study_curve(
    matrix: list[str] = typer.Option(..., "--matrix", help="NAME=M.npy (repeatable): video-level proxy matrices."),
    plots: Optional[Path] = PLOTS,
    json_out: Optional[Path] = typer.Option(None, "--json", help="Write the numbers as JSON."),
    steps: int = typer.Option(21, "--steps", min=2, help="Thresholds evenly spaced in [0, 1]."),
    plot: Optional[Path] = DEPRECATED_PLOT,
):
    """Fig. 4: mean number of captions with S >= T per video, as T varies (figure proxy_curve)."""
    from tvrbench.proxies.study_files import curve_study

    _emit(curve_study(named_paths(matrix, "--matrix"), steps), json_out, plots, plot)


@study.command("gmr")
@writes(plots=FOLDER, plot=GMR_PLOTS, json_out=FILE)
def study_gmr(
    scores: list[str] = scores_option(...),
    relevance: Path = typer.Option(..., "--relevance", help="Video-level SYN matrix (videos x captions) from tvrbench proxies."),
    threshold: float = typer.Option(0.8, "--threshold", callback=_similarity, help="Items with S > threshold count as equivalent."),
    plots: Optional[Path] = PLOTS,
    json_out: Optional[Path] = typer.Option(None, "--json"),
    plot: Optional[Path] = DEPRECATED_PLOT,
):
    """Fig. 5: GMR as reported and its bounds when highly similar captions count as equivalent (figures proxy_gmr_t2v, proxy_gmr_v2t)."""
    from tvrbench.proxies.study_files import gmr_study

    _emit(gmr_study(named_paths(scores, "--scores"), relevance, threshold), json_out, plots, plot)


@study.command("correlation")
@writes(plots=FOLDER, plot=PLOT, json_out=FILE)
def study_correlation(
    matrix: list[str] = typer.Option(..., "--matrix", help="NAME=M.npy (repeatable), same shape."),
    plots: Optional[Path] = PLOTS,
    json_out: Optional[Path] = typer.Option(None, "--json"),
    plot: Optional[Path] = DEPRECATED_PLOT,
):
    """Supp. B: mean per-video Pearson correlation between every two proxies (heat map proxy_correlation)."""
    from tvrbench.proxies.study_files import correlation_study

    _emit(correlation_study(named_paths(matrix, "--matrix")), json_out, plots, plot)


@study.command("human-kit")
@writes(out=beside(".json"))
@reads_captions
def study_human_kit(
    reading: CaptionsReading,
    matrix: Path = VIDEO_MATRIX,
    captions: Path = captions_option(use="The file the matrix was built from."),
    out: Path = typer.Option(..., "--out", help="Kit CSV: video_id, presented, caption_id, text, slot, proxy_score."),
    videos: int = typer.Option(100, "--videos", min=1),
    seed: int = STUDY_SEED,
):
    """Supp. A: 5 captions per sampled video (most, quartiles, least) for annotators to order.

    Show annotators video_id, presented and text only; slot and proxy_score are for scoring.
    """
    from tvrbench.io.csv_tables import write_csv
    from tvrbench.proxies.study_files import human_kit_study

    kit = human_kit_study(matrix, reading.read(captions), captions, videos, seed)
    mark_beside(out)
    write_csv(out, kit, ["video_id", "presented", "caption_id", "text", "slot", "proxy_score"])
    typer.echo(f"wrote {out}: {len(kit)} rows for {len(kit) // 5} videos", err=True)


@study.command("human-score")
@writes(json_out=FILE)
def study_human_score(
    kit: Path = typer.Option(..., "--kit", help="The kit CSV from human-kit."),
    rankings: Path = typer.Option(..., "--rankings", help="CSV annotator,video_id,caption_id,rank (1 = most relevant)."),
    json_out: Optional[Path] = typer.Option(None, "--json"),
):
    """Supp. A: % consistently ordered pairs and the proxy's agreement with them."""
    from tvrbench.proxies.study_files import human_score_study

    _emit(human_score_study(kit, rankings), json_out)


@study.command("triplets")
@writes(out=beside(".json"))
def study_triplets(
    matrix: Path = VIDEO_MATRIX,
    threshold: float = typer.Option(..., "--threshold", callback=_similarity, help="Positives: S >= T; negatives: S < T."),
    out: Path = typer.Option(..., "--out", help="CSV video_id, positive_caption_id, negative_caption_id."),
    per_video: int = typer.Option(10, "--per-video", min=1),
    seed: int = STUDY_SEED,
):
    """§4.3: training triplets thresholded on semantic similarity."""
    from tvrbench.io.csv_tables import write_csv
    from tvrbench.proxies.study_files import triplets_study

    mark_beside(out)
    write_csv(out, triplets_study(matrix, threshold, per_video, seed), ["video_id", "positive_caption_id", "negative_caption_id"])
    typer.echo(f"wrote {out}", err=True)
