"""``tvrbench doctor``: the resource table of :mod:`tvrbench.doctor`, shown and, with --fix, completed."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from tvrbench.cli import app
from tvrbench.doctor import RESOURCES, Status, fix_resource, resource_status


@app.command()
def doctor(fix: bool = typer.Option(False, "--fix", help="Install what is missing and can be installed from here.")) -> None:
    """List each optional resource as present or missing, with the command that gets it.

    A model resource whose library is here but whose weights are not (no T5 or causal LM in the
    Hugging Face cache) is "no weights here": pass a local folder or a hub name when you use it.

    With --fix, run those commands: Debian packages (WordNet, Chromium) when apt-get is here,
    pip packages otherwise, and NLTK's downloader for WordNet on a machine with the internet.
    """
    console = Console()
    rows, missing = [], 0
    for resource in RESOURCES:
        status = resource_status(resource)
        if not status.present and not status.label and fix:
            fixed, message = fix_resource(resource)
            status = resource_status(resource) if fixed else Status(False, message)
        missing += not status.present and not status.label
        rows.append((resource, status))
    if console.is_terminal:
        console.print(resource_table(rows))
    else:  # a log or a pipe: one line a resource, never wrapped, so a path is whole for grep and copy
        width = max(len(resource.name) for resource in RESOURCES) + 2
        typer.echo("tvrbench resources")
        for resource, status in rows:
            typer.echo(f"{resource.name:<{width}}{status.shown:<17}{status.detail} (for: {resource.purpose})")
    if missing:
        console.print(f"{missing} missing; run [bold]tvrbench doctor --fix[/bold] or the command shown.", soft_wrap=True)


def resource_table(rows) -> Table:
    """The resources as a table for a terminal: a long path or command in the detail column is wrapped, never cut."""
    table = Table(title="tvrbench resources")
    table.add_column("resource", no_wrap=True)
    table.add_column("used for", ratio=2)
    table.add_column("status", no_wrap=True)
    table.add_column("detail", ratio=3, overflow="fold")
    for resource, status in rows:
        colour = "green" if status.present else "yellow" if status.label else "red"
        table.add_row(resource.name, resource.purpose, f"[{colour}]{status.shown}[/{colour}]", status.detail)
    return table


doctor.writes = {}  # it writes no file (declared here, not with cli.outputs.writes, whose import costs numpy's start-up)
