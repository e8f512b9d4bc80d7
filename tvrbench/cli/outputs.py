"""Every command declares what it writes; its outputs are checked against its inputs before it runs.

``@writes(out=beside(".json"), json_out=FILE)`` names the options that are outputs and, for each, the
files it makes (the path itself, a sidecar, a ``.partial`` and its progress file). Every other path
the command was given is an input: ``Path`` options, text options naming an existing file (the
``PATH`` of ``NAME=PATH``, a model file), and the sidecar tvrbench reads beside a matrix, an MC split,
a contrast set or qrels (``M.json``, ``X.tsv.json``). :func:`tvrbench.io.outputs.check_outputs` then runs before
the command does anything. ``tests/test_output_safety.py`` checks every command carries ``@writes``.

So every command with an output also has ``--overwrite`` (replace what another kind of command
wrote; ``kind_option`` names the option that is part of the kind, ``--kind`` of ``mc build``), and
Ctrl-C names the partial file a rerun resumes from (``Writes.resumes``).
"""

from __future__ import annotations

import functools
import inspect
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import typer

from tvrbench.cli.clickapi import get_current_context
from tvrbench.errors import Interrupted
from tvrbench.io.outputs import Output, check_outputs
from tvrbench.io.sidecars import MATRIX_SUFFIXES, sidecar_path
from tvrbench.results import Result


@dataclass(frozen=True)
class Writes:
    """The files one output option makes, each a function of the option's value; the first is the
    option's own path, the rest its companions (sidecar, partial file, progress file). ``folder``:
    whether they are folders, or a test of each path (an output whose form depends on its suffix).
    ``resumes``: the companion a rerun of an interrupted command resumes from."""

    files: tuple[Callable[[Path], Path], ...] = (lambda path: path,)
    folder: bool | Callable[[Path], bool] = False
    resumes: Callable[[Path], Path] | None = None

    def is_folder(self, path: Path) -> bool:
        return self.folder(path) if callable(self.folder) else self.folder


# Inputs whose sidecar (tvrbench.io.sidecars.sidecar_path) is read too: a matrix's, an MC split's, a contrast set's, qrels'.
SIDECAR_SUFFIXES = (*MATRIX_SUFFIXES, ".tsv", ".jsonl", ".qrels")

FILE = Writes()
FOLDER = Writes(folder=True)


def partial(path: Path) -> Path:
    """``X.partial``: where an interrupted command left its work, and a rerun takes it up."""
    return path.with_name(path.name + ".partial")


def beside(*suffixes: str, resumable: bool = False) -> Writes:
    """The file and ``FILE<suffix>`` companions (``X.tsv`` → ``X.tsv.json``); ``resumable``: also
    ``X.partial``, which a rerun resumes from."""
    files = FILE.files + tuple(lambda path, s=suffix: path.with_name(path.name + s) for suffix in suffixes)
    return Writes(files + (partial,), resumes=partial) if resumable else Writes(files)


OVERWRITE = typer.Option(False, "--overwrite", help="Replace an output that another kind of command wrote (its sidecar says which).")


def writes(kind_option: str | None = None, **declared: Writes):
    """Check the outputs named in ``declared`` against each other and every input, and, without
    ``--overwrite``, against what another kind of command wrote there; then run the command."""

    def decorate(command):
        parameters = inspect.signature(command).parameters
        own_overwrite = "overwrite" in parameters  # publish's: it also decides what publish does in its folder

        @functools.wraps(command)
        def guarded(**kwargs):
            overwrite = kwargs.get("overwrite", False) if own_overwrite else kwargs.pop("overwrite", False)
            flags, writer = _invocation(kwargs, kind_option)
            flag = lambda name: flags.get(name, name)  # noqa: E731
            outputs = [
                Output(path, flag(name) if number == 0 else f"{flag(name)} companion {path.name}", spec.is_folder(path), writer)
                for name, spec in declared.items()
                if kwargs.get(name) is not None
                for number, path in enumerate(make(Path(kwargs[name])) for make in spec.files)
            ]
            inputs = [(flag(name), path) for name, value in kwargs.items() if name not in declared for path in _paths(value)]
            check_outputs(outputs, inputs, overwrite)
            try:
                return command(**kwargs)
            except KeyboardInterrupt as interrupt:
                resumable = [spec.resumes(Path(kwargs[name])) for name, spec in declared.items() if spec.resumes and kwargs.get(name) is not None]
                left = next((path for path in resumable if path.exists()), None)
                if left is None or isinstance(interrupt, Interrupted):
                    raise
                raise Interrupted(left) from interrupt

        if declared and not own_overwrite:  # Typer builds the options from the signature and the type hints
            added = inspect.Parameter("overwrite", inspect.Parameter.KEYWORD_ONLY, default=OVERWRITE, annotation=bool)
            guarded.__signature__ = inspect.Signature([*parameters.values(), added])
            guarded.__annotations__ = {**{p.name: p.annotation for p in parameters.values()}, "overwrite": bool}
        guarded.writes = declared
        return guarded

    return decorate


def _invocation(kwargs: dict, kind_option: str | None) -> tuple[dict[str, str], str | None]:
    """Parameter name → the option as typed (``json_out`` → ``--json``), and the command as typed
    with its kind (``mc build --kind random``); empty and ``None`` outside a command line."""
    context = get_current_context(silent=True)
    if context is None:
        return {}, None
    flags = {param.name: max(param.opts, key=len) for param in context.command.params if param.opts}
    writer = context.command_path.split(maxsplit=1)[1] if " " in context.command_path else context.command_path
    if kind_option is not None:
        writer += f" {flags[kind_option]} {getattr(kwargs[kind_option], 'value', kwargs[kind_option])}"
    return flags, writer


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


def print_result(result: Result, file=None) -> None:
    """A result's table (:mod:`tvrbench.results`), then its parts', on stdout (or ``file``)."""
    for shown in (result, *getattr(result, "parts", ())):
        print_table(shown, file)


def print_table(shown, file=None) -> None:
    """One table: its title, first column left and the others right, and its notes under it (a table of
    notes alone prints as its title and paragraphs)."""
    from rich.console import Console
    from rich.table import Table

    console = Console(file=file, width=max(100, sum(len(column) + 14 for column in shown.columns)), highlight=False)
    notes = "\n".join(getattr(shown, "notes", ()))
    if not shown.columns:
        console.print(shown.title, notes, sep="\n", markup=False)
        return
    table = Table(title=shown.title, title_justify="left", caption=notes or None, caption_justify="left")
    for column in shown.columns:
        table.add_column(column, justify="left" if column == shown.columns[0] else "right")
    for row in shown.rows:
        table.add_row(*row)
    console.print(table)


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
        save_figures(result.figures(), plots, plot_settings)


def save_figures(figures: Iterable[tuple[str, object]], folder: Path, plot_settings) -> None:
    """Each ``(stem, figure)`` of a result's ``figures()`` as ``folder/STEM.FORMAT`` for the settings'
    formats (PNG and SVG unless told), at their dpi; stems built from data are checked."""
    from tvrbench.io.figures import save_figure
    from tvrbench.io.outputs import name_in

    for stem, figure in figures:
        written(*save_figure(figure, name_in(folder, stem, "plot file name"), plot_settings.formats, plot_settings.dpi))
