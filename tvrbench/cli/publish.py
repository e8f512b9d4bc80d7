"""``tvrbench publish``: write outputs as a Hugging Face dataset folder, optionally push it."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli import app
from tvrbench.cli.inputs import reads_captions
from tvrbench.cli.outputs import FOLDER, writes
from tvrbench.io.inputs import CaptionsReading

NAMED = "Repeatable; NAME=PATH names the config (default: KIND_<file stem>)."


@app.command()
@writes(out=FOLDER)
@reads_captions
def publish(
    reading: CaptionsReading,
    out: Path = typer.Option(..., "--out", help="Dataset folder to write (README.md card + data/<config>/*.parquet)."),
    mc: list[str] = typer.Option([], "--mc", help=f"Multiple-choice TSV (clip, ending0..4, label). {NAMED}"),
    contrast: list[str] = typer.Option([], "--contrast", help=f"Contrast records JSONL. {NAMED}"),
    relevance: list[str] = typer.Option(
        [], "--relevance", help=f"Relevance matrix .npy, .npz, .zarr or .parquet (sidecar M.json names rows and columns). {NAMED}"
    ),
    relevance_form: str = typer.Option("long", "--relevance-form", help="long: every cell above 0; top-k: each row's k largest."),
    top_k: int = typer.Option(10, "--top-k", min=1, help="k of --relevance-form top-k."),
    qrels: list[str] = typer.Option([], "--qrels", help=f"TREC qrels (the to-qrels metadata saved as Q.qrels.json adds query texts). {NAMED}"),
    fire: list[str] = typer.Option([], "--fire", help=f"FIRE labels JSON, published as qrels. {NAMED}"),
    results: list[str] = typer.Option([], "--results", help=f"Evaluation JSON (tvrbench evaluate --json, or the demo's results.json). {NAMED}"),
    queries: Optional[Path] = typer.Option(
        None, "--queries", help="Captions: ids of a relevance matrix's rows when it has no sidecar; FIRE query ids."
    ),
    videos: Optional[Path] = typer.Option(None, "--videos", help="Video ids of a relevance matrix's columns when it has no sidecar."),
    split: str = typer.Option("test", "--split", help="Split name of every config."),
    license: Optional[str] = typer.Option(None, "--license", help="Licence id for the card (e.g. cc-by-4.0); unset → 'other', marked to fill in."),
    title: str = typer.Option("tvrbench derived evaluation data", "--title", help="pretty_name of the card."),
    overwrite: bool = typer.Option(
        False, "--overwrite", help="Write into a non-empty folder publish did not make (only its own files are replaced; nothing is removed)."
    ),
    push_to: Optional[str] = typer.Option(None, "--push", metavar="REPO_ID", help="Upload the folder to this dataset repo (token from HF_TOKEN)."),
    private: bool = typer.Option(False, "--private", help="Create the repo private."),
    endpoint: Optional[str] = typer.Option(None, "--endpoint", help="Hub URL (default: HF_ENDPOINT, else https://huggingface.co)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="With --push: show what would be uploaded, send nothing."),
) -> None:
    """Publish MC splits, contrast records, relevance matrices, qrels and results as a Hugging Face dataset.

    One config per artifact, Parquet files, and a README.md dataset card with the configs block,
    licence, signatures, counts and a datasheet (fill in the parts marked "More Information Needed").
    `datasets.load_dataset(OUT, CONFIG, split=SPLIT)` reads every row back unchanged.
    """
    from tvrbench.errors import InputError
    from tvrbench.io.captions import read_video_ids
    from tvrbench.io.inputs import split_named_path
    from tvrbench.publish import (
        RELEVANCE_FORMS,
        contrast_artifact,
        fire_qrels_artifact,
        hub_endpoint,
        mc_artifact,
        plan_push,
        push,
        qrels_artifact,
        relevance_artifact,
        results_artifact,
        write_dataset,
    )

    if relevance_form not in RELEVANCE_FORMS:
        raise InputError("--relevance-form", f"{relevance_form!r} is not one of {', '.join(RELEVANCE_FORMS)}")
    if dry_run and not push_to:
        raise InputError("--dry-run", "only makes sense with --push REPO_ID")
    if push_to:
        hub_endpoint(push_to, endpoint)
    captions = reading.read(queries) if queries else None
    video_ids = read_video_ids(videos) if videos else None

    def named(values: list[str], option: str) -> list[tuple[str | None, Path]]:
        return [split_named_path(value, option) for value in values]

    artifacts = [mc_artifact(p, n) for n, p in named(mc, "--mc")]
    artifacts += [contrast_artifact(p, n) for n, p in named(contrast, "--contrast")]
    artifacts += [
        relevance_artifact(p, n, relevance_form, top_k, captions.caption_ids if captions else None, video_ids)
        for n, p in named(relevance, "--relevance")
    ]
    artifacts += [qrels_artifact(p, n) for n, p in named(qrels, "--qrels")]
    artifacts += [fire_qrels_artifact(p, n, captions) for n, p in named(fire, "--fire")]
    artifacts += [results_artifact(p, n) for n, p in named(results, "--results")]
    manifest = write_dataset(out, artifacts, split, license, title, overwrite)
    for config, entry in manifest["configs"].items():
        typer.echo(f"{config}: {entry['kind']}, {entry['rows']:,} rows → {out / entry['files'][split]}", err=True)
    typer.echo(f"wrote {out / 'README.md'} ({len(artifacts)} configs)", err=True)
    if license is None:
        typer.echo("tvrbench: warning: no --license, so the card reads `license: other`; pass --license ID (e.g. cc-by-4.0)", err=True)
    typer.echo(manifest["signature"])
    if push_to:
        plan = plan_push(out, push_to, private, endpoint)
        if dry_run:
            typer.echo("dry run, nothing sent; would upload to " + "\n".join(plan.describe()))
            return
        url = push(out, plan, commit_message=f"tvrbench publish: {', '.join(manifest['configs'])}")
        typer.echo(f"pushed {len(plan.files)} files to {plan.endpoint}/datasets/{plan.repo_id}: {url}")
