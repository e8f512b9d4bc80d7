"""``tvrbench doctor``: which optional resources are here, and the one command that gets each."""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table

from tvrbench import resources
from tvrbench.cli import app
from tvrbench.cli.outputs import writes


@app.command()
@writes()
def doctor(fix: bool = typer.Option(False, "--fix", help="Install what is missing and can be installed from here.")) -> None:
    """List each optional resource as present or missing, with the command that gets it.

    With --fix, run those commands: Debian packages (WordNet, Chromium) when apt-get is here,
    pip packages otherwise, and NLTK's downloader for WordNet on a machine with the internet.
    """
    console = Console()
    table = Table(title="tvrbench resources")
    for column in ("resource", "used for", "status", "detail"):
        table.add_column(column)
    missing = 0
    for resource in resources.RESOURCES:
        present, detail = resources.resource_status(resource)
        if not present and fix:
            fixed, message = resources.fix(resource)
            present, detail = resources.resource_status(resource) if fixed else (False, message)
        missing += not present
        status = "[green]present[/green]" if present else "[red]missing[/red]"
        table.add_row(resource.name, resource.purpose, status, detail)
    console.print(table)
    if missing:
        console.print(f"{missing} missing; run [bold]tvrbench doctor --fix[/bold] or the command shown.")
