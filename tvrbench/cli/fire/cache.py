"""``tvrbench fire cache``: where the parsed FIRE files are kept, and emptying it."""

from __future__ import annotations

import typer

from tvrbench.cli.fire.group import fire
from tvrbench.cli.outputs import writes


@fire.command("cache")
@writes()
def cache(clear: bool = typer.Option(False, "--clear", help="Delete every kept parse; the next read of each file parses it again.")) -> None:
    """Show the folder of parsed FIRE files (one per file digest read), or empty it with --clear."""
    from tvrbench.io import fire_cache

    folder = fire_cache.cache_folder()
    if clear:
        files, size = fire_cache.clear()
        typer.echo(f"removed {files:,} parsed FIRE file(s), {size / 2**20:,.1f} MB, from {folder}")
        return
    entries = list(folder.glob("*.msgpack"))
    typer.echo(f"{folder}: {len(entries):,} parsed FIRE file(s), {sum(e.stat().st_size for e in entries) / 2**20:,.1f} MB")
