"""``tvrbench signature diff``: why two results differ (the settings, versions and inputs behind them)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

from tvrbench.cli import app
from tvrbench.cli.outputs import FILE, marked, writes
from tvrbench.errors import InputError
from tvrbench.io.atomic import write_json
from tvrbench.io.files import read_json_object
from tvrbench.signature import Signature, SignatureDiff

signature_app = typer.Typer(help="Signatures: compare the settings, versions and inputs behind two results.", no_args_is_help=True)
app.add_typer(signature_app, name="signature")


def read_signature(source: str) -> Signature:
    """The signature of a tvrbench output (any JSON object with a ``signature``: results, sidecars),
    or ``source`` itself when it is a signature rather than a file."""
    path = Path(source)
    if not path.exists() and "|" in source:
        text = source
    else:
        text = read_json_object(path).get("signature")
        if not isinstance(text, str):
            raise InputError(path, "has no signature (a 'signature' string at the top of the JSON object)")
    try:
        return Signature.parse(text)
    except ValueError as error:
        raise InputError(source if text is source else path, str(error)) from None


@signature_app.command("diff")
@writes(json_out=FILE)
def diff(
    left: str = typer.Argument(..., help="A result or sidecar JSON (or a signature string)."),
    right: str = typer.Argument(..., help="The other one."),
    json_out: Path = typer.Option(None, "--json", help="Also write the differences as JSON."),
) -> None:
    """Show the signature fields in which two results differ; exit code 0 when equal, 1 when not (as diff)."""
    comparison = SignatureDiff(read_signature(left), read_signature(right), _name(left, "A"), _name(right, "B"))
    if json_out is not None:
        write_json(json_out, marked(comparison.to_json()))
    console = Console()
    if not comparison.rows:
        console.print("the signatures are equal")
        return
    table = Table(title=f"signatures differ in {len(comparison.rows)} field(s)", title_justify="left")
    for column in comparison.columns:
        table.add_column(column, overflow="fold")
    for row in comparison.rows:
        table.add_row(*row)
    console.print(table)
    raise typer.Exit(1)


def _name(source: str, otherwise: str) -> str:
    """A file as the user named it; a signature given as text by its side."""
    return source if Path(source).exists() else otherwise
