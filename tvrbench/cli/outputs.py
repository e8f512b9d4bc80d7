"""Every command declares what it writes; its outputs are checked against its inputs before it runs.

``@writes(out=beside(".json"), json_out=FILE)`` names the options that are outputs and, for each, the
files it makes (the path itself, a sidecar, a ``.partial`` and its progress file). Every other path
the command was given is an input: ``Path`` options, text options naming an existing file (the
``PATH`` of ``NAME=PATH``, a model file), and the sidecar tvrbench reads beside a matrix, an MC split,
a contrast set or qrels (``M.json``, ``X.tsv.json``). :func:`tvrbench.io.outputs.check_outputs` then runs before
the command does anything. ``tests/test_output_safety.py`` checks every command carries ``@writes``.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import typer

from tvrbench.cli.clickapi import get_current_context
from tvrbench.io.outputs import Output, check_outputs
from tvrbench.io.sidecars import MATRIX_SUFFIXES, sidecar_path
from tvrbench.results import Result


@dataclass(frozen=True)
class Writes:
    """The files one output option makes, each a function of the option's value; the first is the
    option's own path, the rest its companions (sidecar, partial file, progress file). ``folder``:
    whether they are folders, or a test of each path (an output whose form depends on its suffix)."""

    files: tuple[Callable[[Path], Path], ...] = (lambda path: path,)
    folder: bool | Callable[[Path], bool] = False

    def is_folder(self, path: Path) -> bool:
        return self.folder(path) if callable(self.folder) else self.folder


# Inputs whose sidecar (tvrbench.io.sidecars.sidecar_path) is read too: a matrix's, an MC split's, a contrast set's, qrels'.
SIDECAR_SUFFIXES = (*MATRIX_SUFFIXES, ".tsv", ".jsonl", ".qrels")

FILE = Writes()
FOLDER = Writes(folder=True)


def beside(*suffixes: str) -> Writes:
    """The file and ``FILE<suffix>`` companions (``X.jsonl`` → ``X.jsonl.json``, ``X.jsonl.partial``)."""
    return Writes(FILE.files + tuple(lambda path, s=suffix: path.with_name(path.name + s) for suffix in suffixes))


def writes(**declared: Writes):
    """Check the outputs named in ``declared`` against each other and every input, then run the command."""

    def decorate(command):
        @functools.wraps(command)
        def guarded(**kwargs):
            flags = _flags()
            flag = lambda name: flags.get(name, name)  # noqa: E731
            outputs = [
                Output(path, flag(name) if number == 0 else f"{flag(name)} companion {path.name}", spec.is_folder(path))
                for name, spec in declared.items()
                if kwargs.get(name) is not None
                for number, path in enumerate(make(Path(kwargs[name])) for make in spec.files)
            ]
            inputs = [(flag(name), path) for name, value in kwargs.items() if name not in declared for path in _paths(value)]
            check_outputs(outputs, inputs)
            return command(**kwargs)

        guarded.writes = declared
        return guarded

    return decorate


def _flags() -> dict[str, str]:
    """Parameter name → the option as typed (``json_out`` → ``--json``); empty outside a command line."""
    context = get_current_context(silent=True)
    return {param.name: max(param.opts, key=len) for param in context.command.params if param.opts} if context else {}


def _paths(value) -> list[Path]:
    """The input paths in one option's value, with the sidecars tvrbench reads beside them."""
    if isinstance(value, Path):
        if value.suffix not in SIDECAR_SUFFIXES:
            return [value]
        sidecar = sidecar_path(value)
        return [value, sidecar] if sidecar.is_file() else [value]
    if isinstance(value, (list, tuple)):
        return [path for item in value for path in _paths(item)]
    if isinstance(value, str):
        candidates = {value, value.partition("=")[2], value.rpartition("=")[2]}
        return [path for text in candidates if text and os.path.isfile(text) for path in _paths(Path(text))]
    return []


def print_result(result: Result) -> None:
    """A result's table (:mod:`tvrbench.results`), then its parts', on stdout: first column left, the others right."""
    from rich.console import Console
    from rich.table import Table

    for shown in (result, *getattr(result, "parts", ())):
        table = Table(title=shown.title, title_justify="left")
        for column in shown.columns:
            table.add_column(column, justify="left" if column == shown.columns[0] else "right")
        for row in shown.rows:
            table.add_row(*row)
        Console(width=max(100, sum(len(column) + 14 for column in shown.columns))).print(table)


def written(*paths) -> None:
    typer.echo("wrote " + ", ".join(str(p) for p in paths), err=True)


def write_result(
    result: Result, json_out: Path | None, plots: Path | None = None, plot_settings=None, show: Callable[[Result], None] = print_result
) -> None:
    """Show a result (its tables, unless the command prints less), write its JSON (``--json``) and its figures (``--plots``)."""
    show(result)
    if json_out:
        from tvrbench.io.atomic import write_json

        write_json(json_out, result.to_json())
        written(json_out)
    if plots:
        save_figures(result, plots, plot_settings)


def save_figures(result, folder: Path, plot_settings) -> None:
    """Each of a result's figures as ``folder/STEM.png`` and ``.svg`` (stems built from data are checked)."""
    from tvrbench.io.figures import save_figure
    from tvrbench.io.outputs import name_in

    for stem, figure in result.figures():
        written(*save_figure(figure, name_in(folder, stem, "plot file name"), plot_settings.formats, plot_settings.dpi))
