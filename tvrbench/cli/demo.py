"""``tvrbench demo``: the whole pipeline on the embedded sample, offline."""

from __future__ import annotations

from pathlib import Path

import typer

from tvrbench.cli import app
from tvrbench.cli.outputs import FOLDER, writes


@app.command()
@writes(out=FOLDER)
def demo(out: Path = typer.Option(..., "--out", help="Folder for every output (created; existing files are replaced).")) -> None:
    """The whole pipeline on the embedded sample, offline: results.json, a dataset folder and report.html.

    Proxies, evaluation with FIRE labels and proxy nDCG, the FIRE analyses, contrast sets and MC
    splits, publishing and the report: each step is printed as the command that does it (rerun any
    of them on your data); what the commands print goes to OUT/logs/.
    """
    from tvrbench.demo import run_demo

    run_demo(out)
