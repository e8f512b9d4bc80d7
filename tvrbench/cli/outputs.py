"""Every command declares what it writes; its outputs are checked against its inputs before it runs.

``@writes(out=beside(".json"), json_out=FILE)`` names the options that are outputs and, for each, the
files it makes (the path itself, a sidecar, a ``.partial`` and its progress file). Every other path
the command was given is an input: ``Path`` options, text options naming an existing file (the
``PATH`` of ``NAME=PATH``, a model file), and the sidecar tvrbench reads beside a matrix, an MC split,
a contrast set or qrels (``M.json``, ``X.tsv.json``). :func:`tvrbench.io.outputs.check_outputs` then runs before
the command does anything. ``tests/test_output_safety.py`` checks every command carries ``@writes``.

So every command with an output also has ``--overwrite`` (replace what another kind of command wrote,
or what nothing says who wrote; ``kind_option`` names the option that is part of the kind, ``--kind``
of ``mc build``), and Ctrl-C names the partial file a rerun resumes from (``Writes.resumes``). While a
command runs, :func:`marked` and :func:`mark_beside` name it in what it writes, so that it, and no
other kind of command, replaces it unasked the next time (:mod:`tvrbench.io.writers`).
"""

from __future__ import annotations

import functools
import inspect
import os
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import typer

from tvrbench.cli.clickapi import get_current_context
from tvrbench.errors import Interrupted
from tvrbench.io.outputs import Output, check_outputs
from tvrbench.io.sidecars import MATRIX_SUFFIXES, sidecar_path
from tvrbench.io.writers import mark
from tvrbench.results import Result

_WRITER: ContextVar[str | None] = ContextVar("writer", default=None)  # the command running, as typed (mc build --kind verb)


@dataclass(frozen=True)
class Writes:
    """The files one output option makes, each a function of the option's value; the first is the
    option's own path, the rest its companions (a sidecar). ``scratch``: the command's own working
    files (a partial file, its progress file, a staging folder), resumed or replaced whoever wrote
    them. ``folder``: whether they are folders, or a test of each path (an output whose form depends on
    its suffix). ``told``: whether its files name their writer, which is then checked against what is
    there; not a folder the command writes files into (``--plots``, not replaced whole), nor a figure.
    ``resumes``: the scratch file a rerun of an interrupted command resumes from. ``sidecar_of``: the
    output option whose sidecar this one may be, and then is, not a second file (to-qrels' --metadata)."""

    files: tuple[Callable[[Path], Path], ...] = (lambda path: path,)
    scratch: tuple[Callable[[Path], Path], ...] = ()
    folder: bool | Callable[[Path], bool] = False
    told: bool = True
    resumes: Callable[[Path], Path] | None = None
    sidecar_of: str | None = None

    def is_folder(self, path: Path) -> bool:
        return self.folder(path) if callable(self.folder) else self.folder


# Inputs whose sidecar (tvrbench.io.sidecars.sidecar_path) is read too: a matrix's, an MC split's, a contrast set's, qrels'.
SIDECAR_SUFFIXES = (*MATRIX_SUFFIXES, ".tsv", ".jsonl", ".qrels")

FILE = Writes()
FOLDER = Writes(folder=True, told=False)  # a folder the command writes files into: --plots, the demo's, publish's
# A folder written whole, staged in .NAME.partial beside it (tvrbench.io.atomic.atomic_folder): a review kit, a fine-tuned model.
WHOLE_FOLDER = Writes(scratch=(lambda path: path.with_name(f".{path.name}.partial"),), folder=True)


def partial(path: Path) -> Path:
    """``X.partial``: where an interrupted command left its work, and a rerun takes it up."""
    return path.with_name(path.name + ".partial")


def beside(*suffixes: str, resumable: bool = False) -> Writes:
    """The file and ``FILE<suffix>`` companions (``X.tsv`` → ``X.tsv.json``); ``resumable``: also
    ``X.partial``, which a rerun resumes from."""
    files = FILE.files + tuple(lambda path, s=suffix: path.with_name(path.name + s) for suffix in suffixes)
    return Writes(files, (partial,), resumes=partial) if resumable else Writes(files)


OVERWRITE = typer.Option(
    False, "--overwrite", help="Replace an output that another kind of command wrote, or that says no command wrote it (a file of your own)."
)


def writes(kind_option: str | None = None, **declared: Writes):
    """Check the outputs named in ``declared`` against each other and every input, and, without
    ``--overwrite``, against what another kind of command wrote there; then run the command, and remove
    the sidecars of the outputs ``--overwrite`` replaced that the command has not written again."""

    def decorate(command):
        parameters = inspect.signature(command).parameters
        own_overwrite = "overwrite" in parameters  # publish's: it also decides what publish does in its folder

        @functools.wraps(command)
        def guarded(**kwargs):
            overwrite = kwargs.get("overwrite", False) if own_overwrite else kwargs.pop("overwrite", False)
            flags, writer = _invocation(kwargs, kind_option)
            flag = lambda name: flags.get(name, name)  # noqa: E731
            outputs = _outputs({name: (spec, Path(kwargs[name])) for name, spec in declared.items() if kwargs.get(name) is not None}, flag, writer)
            inputs = [(flag(name), path) for name, value in kwargs.items() if name not in declared for path in _paths(value)]
            stale = check_outputs(outputs, inputs, overwrite)
            running = _WRITER.set(writer)
            try:
                done = command(**kwargs)
            except KeyboardInterrupt as interrupt:
                resumable = [spec.resumes(Path(kwargs[name])) for name, spec in declared.items() if spec.resumes and kwargs.get(name) is not None]
                left = next((path for path in resumable if path.exists()), None)
                if left is None or isinstance(interrupt, Interrupted):
                    raise
                raise Interrupted(left) from interrupt
            finally:
                _WRITER.reset(running)
            for sidecar in stale:
                sidecar.unlink(missing_ok=True)
            return done

        if declared and not own_overwrite:  # Typer builds the options from the signature and the type hints
            added = inspect.Parameter("overwrite", inspect.Parameter.KEYWORD_ONLY, default=OVERWRITE, annotation=bool)
            guarded.__signature__ = inspect.Signature([*parameters.values(), added])
            guarded.__annotations__ = {**{p.name: p.annotation for p in parameters.values()}, "overwrite": bool}
        guarded.writes = declared
        return guarded

    return decorate


def _outputs(given: dict[str, tuple[Writes, Path]], flag: Callable[[str], str], writer: str | None) -> list[Output]:
    """Every file the given output options make, each checked against ``writer`` unless it is scratch or
    untold (a folder written into, a figure); a sidecar that another option is (``Writes.sidecar_of``) once."""
    serving = [(spec.sidecar_of, path) for spec, path in given.values() if spec.sidecar_of]
    return [
        Output(
            path,
            flag(name) if number == 0 else f"{flag(name)} companion {path.name}",
            spec.is_folder(path),
            writer if spec.told and number < len(spec.files) else None,
        )
        for name, (spec, value) in given.items()
        for number, path in enumerate(make(value) for make in spec.files + spec.scratch)
        if number == 0 or (name, path) not in serving
    ]


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


def marked(payload: dict) -> dict:
    """A JSON object as the running command writes it: under the line that names the command."""
    return mark(payload, _WRITER.get())


def mark_beside(path: Path) -> None:
    """Name the running command in the sidecar of ``path``, an output with no room for it (a CSV, qrels);
    called before ``path`` is written, so that a run killed in between leaves no output that names no writer."""
    from tvrbench.io.atomic import write_json

    write_json(sidecar_path(path), marked({}))


def write_result(
    result: Result, json_out: Path | None, plots: Path | None = None, plot_settings=None, show: Callable[[Result], None] = print_result
) -> None:
    """Show a result (its tables, unless the command prints less), write its JSON (``--json``) and its figures (``--plots``)."""
    show(result)
    if json_out:
        from tvrbench.io.atomic import write_json

        write_json(json_out, marked(result.to_json()))
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
