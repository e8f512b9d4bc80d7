"""``tvrbench demo``: the whole pipeline on the embedded sample, offline."""

from __future__ import annotations

from pathlib import Path

import typer

from tvrbench.cli import app


@app.command()
def demo(out: Path = typer.Option(..., "--out", help="Folder for every output (created; existing files are replaced).")) -> None:
    """Run proxies, evaluation with FIRE labels, the FIRE analyses, contrast sets and MC splits on the
    embedded sample, then publish a dataset folder and write report.html. Each step is printed as the
    command that does it; their output goes to OUT/logs/."""
    from tvrbench.demo import run_demo

    run_demo(out)
