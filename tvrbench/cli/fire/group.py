"""The ``tvrbench fire`` group, which each module of this package adds its commands to."""

from __future__ import annotations

import typer

from tvrbench.cli import app

fire = typer.Typer(
    help="FIRE relevance labels: agreement, Table 1, overlap, pooling bias, bootstrap, length, "
    "train-test overlap, annotation queue, qrels conversion.",
    no_args_is_help=True,
)
app.add_typer(fire, name="fire")
