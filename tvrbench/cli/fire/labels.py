"""``tvrbench fire labels ...``: FIRE JSON to TREC qrels and back (a group of ``tvrbench fire``)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import typer

from tvrbench.cli.fire.group import fire
from tvrbench.cli.inputs import CONFIG, FIRE_DATASET_FILTER, LABEL_RULE, read_fire_settings, reads_captions
from tvrbench.cli.models import FIRE_REQUIRED
from tvrbench.cli.outputs import FILE, Writes, beside, mark_beside, marked, writes, written
from tvrbench.io.inputs import CaptionsReading

labels_app = typer.Typer(help="Convert FIRE JSON to TREC qrels and back.", no_args_is_help=True)
fire.add_typer(labels_app, name="labels")


@labels_app.command("to-qrels")
@writes(out=beside(".json"), metadata=Writes(sidecar_of="out"))
@reads_captions
def to_qrels(
    reading: CaptionsReading,
    fire_path: Path = FIRE_REQUIRED,
    out: Path = typer.Option(..., "--out", help="TREC qrels to write."),
    metadata: Optional[Path] = typer.Option(None, "--metadata", help="Also write the sidecar 'to-fire' needs (query texts, votes, ids)."),
    queries: Optional[Path] = typer.Option(None, "--queries", help="Captions: use their caption ids as query ids."),
    dataset: Optional[str] = FIRE_DATASET_FILTER,
    rule: Optional[str] = LABEL_RULE,
    disagreements: Optional[str] = typer.Option(None, "--disagreements", help="omit (default), irrelevant, relevant, negative."),
    config: Optional[Path] = CONFIG,
):
    """Write FIRE labels as TREC qrels (relevant 1, irrelevant 0), optionally with a metadata sidecar."""
    from tvrbench.evaluation.fire.labels import fire_to_qrels, qrels_signature, write_metadata
    from tvrbench.io.fire import read_fire
    from tvrbench.io.sidecars import sidecar_path
    from tvrbench.io.trec import write_qrels

    opts = read_fire_settings(config, "labels", rule=rule, disagreements=disagreements).labels
    captions = reading.read(queries) if queries else None
    qrels, sidecar, unmatched = fire_to_qrels(read_fire(fire_path, dataset), opts.rule, opts.disagreements, captions, provenance=metadata is not None)
    if metadata is not None:  # the marks first (mark_beside)
        sidecar["signature"] = str(qrels_signature(opts.rule, opts.disagreements, {"fire": fire_path, "queries": queries}))
        write_metadata(metadata, marked(sidecar))
        written(metadata)
    if metadata != sidecar_path(out):  # metadata saved as Q.qrels.json is the qrels' sidecar, and names the command itself
        mark_beside(out)
    write_qrels(out, qrels)
    written(out)
    typer.echo(
        f"{len(qrels):,} qrels lines: {int(np.sum(qrels.relevance > 0)):,} relevant, "
        f"{int(np.sum(qrels.relevance == 0)):,} irrelevant, {int(np.sum(qrels.relevance < 0)):,} disagreements"
        + (f"; {unmatched:,} pairs skipped (text not in {queries})" if unmatched else "")
    )


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
    write_fire(out, labels, marked({}))
    written(out)
    typer.echo(f"{len(labels):,} FIRE records ({int(np.sum(labels.label == -1)):,} disagreements)")
