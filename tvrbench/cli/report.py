"""``tvrbench report``: build one self-contained report.html from any run's outputs."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli import app
from tvrbench.cli.inputs import FIRE_DATASET, reads_captions, scores_option
from tvrbench.cli.outputs import FILE, writes
from tvrbench.errors import InputError
from tvrbench.io.files import read_json
from tvrbench.io.inputs import CaptionsReading, named_paths

PLOT_SUFFIXES = (".png", ".svg", ".jpg", ".jpeg")


def read_results(path: Path) -> dict:
    """Results JSON of ``tvrbench evaluate`` or ``{"models": {name: that}}``, checked before it is shown."""
    from tvrbench.report.html import results_models

    data = read_json(path)
    if not isinstance(data, dict) or not all(isinstance(r, dict) and isinstance(r.get("metrics"), dict) for r in results_models(data).values()):
        raise InputError(path, 'expected the JSON of `tvrbench evaluate` ({metrics, signature, ...}) or {"models": {...}}')
    return data


def plot_files(paths: list[Path]) -> list[Path]:
    """Images given directly, or every image of a directory (PNG preferred when a figure is also SVG)."""
    found = []
    for path in paths:
        if path.is_dir():
            images = sorted(p for p in path.iterdir() if p.suffix.lower() in PLOT_SUFFIXES)
            stems_with_png = {p.stem for p in images if p.suffix.lower() == ".png"}
            found += [p for p in images if p.suffix.lower() == ".png" or p.stem not in stems_with_png]
        elif path.is_file() and path.suffix.lower() in PLOT_SUFFIXES:
            found.append(path)
        else:
            raise InputError(path, f"not a directory or an image ({', '.join(PLOT_SUFFIXES)})")
    return found


def mc_picks(digest: str, analyses: dict[str, object], n: int) -> dict[str, list[int]]:
    """Each ``mc score`` JSON among the analyses that scored the split of this ``digest`` (its signature
    names it): the option it chose for every instance, under its scorer's name in the table of MC scores
    (a model's scores, or a second run of one scorer, under the name its file was given)."""
    from tvrbench.mc.score import scorer_column
    from tvrbench.report.tables import is_mc_score

    picks: dict[str, list[int]] = {}
    for name, value in analyses.items():
        if is_mc_score(value) and isinstance(value["picks"], list) and len(value["picks"]) == n and f"|mc:{digest}|" in f"|{value['signature']}|":
            column = scorer_column(value)
            picks[column if column and column not in picks else name] = value["picks"]
    return picks


def audited_pairs(digest: str, analyses: dict[str, object]) -> dict | None:
    """The pair figures of the split of this ``digest`` in an ``mc audit`` among the analyses (its signature
    names the split as ``mc`` or ``reference``), or None. Shown above the items, they are the audit table's
    own: the sidecar's are the contrast file's, of which a split holds one caption a video."""
    from tvrbench.io.sidecars import is_pair_audit
    from tvrbench.signature import Signature

    for value in analyses.values():
        if not (isinstance(value, dict) and isinstance(value.get("splits"), dict) and isinstance(value.get("signature"), str)):
            continue
        try:
            fields = Signature.parse(value["signature"]).fields
        except ValueError:
            continue
        if fields.get("analysis") == "mc-audit":
            for role, split in zip(("mc", "reference"), value["splits"].values()):
                if fields.get(role) == digest and isinstance(split, dict) and is_pair_audit(split.get("pairs")):
                    return split["pairs"]
    return None


def mc_items(path: Path):
    """An MC split and, from its sidecar ``MC.tsv.json`` when present, which option is the contrast,
    how plausible the contrasts read, whether text alone gives them away and what readers made of them."""
    from tvrbench.io.mc import read_mc
    from tvrbench.io.sidecars import read_sidecar
    from tvrbench.report import MCItems
    from tvrbench.signature import input_digest

    instances = read_mc(path)
    sidecar = read_sidecar(path)
    entries = sidecar.get("instances")
    options = [entry.get("contrast_option") for entry in entries] if isinstance(entries, list) and len(entries) == len(instances) else None
    return MCItems(
        instances,
        options,
        sidecar.get("plausibility"),
        sidecar.get("audit"),
        sidecar.get("review"),
        sidecar.get("refinement"),
        digest=input_digest("mc", path),
    )


@app.command()
@writes(out=FILE)
@reads_captions
def report(
    reading: CaptionsReading,
    out: Path = typer.Option(..., "--out", help="The HTML page to write."),
    title: str = typer.Option("tvrbench report", "--title"),
    subtitle: str = typer.Option("", "--subtitle", help="A line under the title: what the models or the data are."),
    results: list[str] = typer.Option([], "--results", help='NAME=R.json (repeatable): tvrbench evaluate --json output or {"models": {...}}.'),
    analysis: list[str] = typer.Option(
        [], "--analysis", help="NAME=A.json (repeatable): any analysis JSON; tvrbench fire ... --json as the paper's tables."
    ),
    plots: list[Path] = typer.Option([], "--plots", help="Image file or directory of PNG/SVG plots (repeatable)."),
    queries: Optional[Path] = typer.Option(None, "--queries", help="Captions, for the per-query viewer."),
    videos: Optional[Path] = typer.Option(None, "--videos", help="Video ids in the column order of the scores."),
    scores: list[str] = scores_option([], use="The models in the viewer."),
    fire: Optional[Path] = typer.Option(None, "--fire", help="FIRE labels for the viewer's FIRE column."),
    fire_dataset: Optional[str] = FIRE_DATASET,
    relevance: Optional[Path] = typer.Option(None, "--relevance", help="Graded relevance (a proxy from tvrbench proxies, any form) for the viewer."),
    top_k: int = typer.Option(10, "--top-k", min=1, help="Videos per model shown in the viewer."),
    mc: list[str] = typer.Option(
        [], "--mc", help="NAME=MC.tsv (repeatable): MC items with the contrast highlighted; NAME also names the split in the table of MC scores."
    ),
) -> None:
    """One self-contained HTML page (no network): tables, plots, per-query viewer and MC items."""
    from tvrbench.report import ReportContent, write_report

    content = ReportContent(
        title=title,
        subtitle=subtitle,
        results={name: read_results(path) for name, path in named_paths(results, "--results").items()},
        analyses={name: read_json(path) for name, path in named_paths(analysis, "--analysis").items()},
        plots=plot_files(plots),
        mc={name: mc_items(path) for name, path in named_paths(mc, "--mc").items()},
    )
    for items in content.mc.values():
        items.picks = mc_picks(items.digest, content.analyses, len(items.instances))
        audited = audited_pairs(items.digest, content.analyses)
        if audited is not None:
            items.audit, items.plausibility, items.audited = audited, audited["lm_preference"], True
    if scores:
        if queries is None or videos is None:
            raise InputError("--scores", "the viewer needs --queries and --videos too")
        from tvrbench.evaluation import Judgments
        from tvrbench.evaluation.inputs import open_named_scores, read_fire_dataset
        from tvrbench.io.captions import read_video_ids
        from tvrbench.io.relevance import load_relevance
        from tvrbench.report import viewer_payload

        captions = reading.read(queries)
        video_ids = read_video_ids(videos)
        models = {name: model.values() for name, model in open_named_scores(scores, "--scores", captions.caption_ids, video_ids).items()}
        judgments = None
        if fire is not None:
            judgments = Judgments.build(captions, video_ids, fire=read_fire_dataset(fire, captions, fire_dataset), videos_source=str(videos))
        matrix, name = (None, "proxy")
        if relevance is not None:
            matrix, name = load_relevance(relevance, (len(captions), len(video_ids)), captions, video_ids)
            name = name.split(":")[0]
        content.viewer = viewer_payload(captions, video_ids, models, judgments, matrix, name, top_k)
    if not (content.results or content.analyses or content.plots or content.mc or content.viewer):
        raise InputError("report", "nothing to show: give --results, --analysis, --plots, --scores or --mc")
    write_report(out, content)
    typer.echo(f"wrote {out}", err=True)
