"""The ``tvrbench`` command line: a thin layer over the Python API.

Each command group lives in its own module and registers itself on :data:`app`. Bad input raises
:class:`~tvrbench.errors.InputError`; :func:`main` prints it as one line and exits with code 2.
"""

from __future__ import annotations

import sys

import typer

from tvrbench.errors import InputError, MissingResource

app = typer.Typer(
    name="tvrbench",
    help=(
        "Honest text-video retrieval benchmarks.\n\n"
        "Score models with every label you have (original pairs, FIRE human labels, TREC qrels), "
        "build graded relevance from caption similarity for nDCG, and probe models with "
        "hard-negative contrast sets."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)

# Command modules; each defines its commands on ``app`` (or adds a sub-Typer) when imported.
from tvrbench.cli import contrast, demo, doctor, evaluate, fire, mc, proxies, publish, report  # noqa: E402,F401


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning input problems into one line on stderr and exit code 2."""
    try:
        app(args=argv, standalone_mode=True)
    except (InputError, MissingResource) as error:
        typer.echo(f"tvrbench: error: {error}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.echo("tvrbench: interrupted", err=True)
        sys.exit(130)
