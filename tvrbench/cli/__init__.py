"""The ``tvrbench`` command line: a thin layer over the Python API.

Each command group lives in its own module and registers itself on :data:`app`. :func:`run` is the
one place where a failure becomes one line on stderr: bad input (:class:`~tvrbench.errors.InputError`),
a missing resource, a file the system refuses (``OSError``) and a usage error all print
``tvrbench: error: ...`` and exit with code 2; Ctrl-C prints ``tvrbench: interrupted`` (and, where
the command left a partial file, that running it again resumes from that file) and exits with 130;
anything else is a bug, printed as ``tvrbench: internal error: ...`` with exit code 1
(``TVRBENCH_TRACEBACK=1`` shows the traceback). The command runs under Click directly (Typer's
``main`` would turn Ctrl-C into a silent exit code), so every exception reaches :func:`run`.

A command line imports only the module of the command it names (:func:`load_commands`): importing
every module costs each run the start-up of libraries it does not use (NLP, plotting, the hub).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import time
from collections.abc import Sequence

import typer
from typer.core import TyperCommand, TyperOption

from tvrbench.cli.clickapi import NoArgsIsHelpError, UsageError
from tvrbench.errors import InputError, Interrupted, MissingResource

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

# Each top-level command: the module that defines it on ``app`` when imported, and its summary,
# which the program's own --help lists without importing any module (a test keeps each equal to
# the command's own help). In the order of the help.
COMMANDS = {
    "demo": ("demo", "The whole pipeline on the embedded sample, offline: results.json, a dataset folder and report.html."),
    "doctor": ("doctor", "List each optional resource as present or missing, with the command that gets it."),
    "evaluate": ("evaluate", "Score a model with every label you have: original pairs, FIRE labels, qrels, graded relevance."),
    "proxies": ("proxies", "Build a semantic-similarity relevance matrix from captions (Wray et al. §4.4) for nDCG."),
    "publish": ("publish", "Publish MC splits, contrast records, relevance matrices, qrels and results as a Hugging Face dataset."),
    "report": ("report", "One self-contained HTML page (no network): tables, plots, per-query viewer and MC items."),
    "contrast": (
        "contrast_kinds",
        "Generate contrast captions: gender, LSMDC person-ID and verb-phrase swaps, and object, attribute, relation, counting, swap, add and "
        "event-order edits.",
    ),
    "fire": (
        "fire",
        "FIRE relevance labels: agreement, Table 1, overlap, pooling bias, bootstrap, length, train-test overlap, "
        "annotation queue, qrels conversion.",
    ),
    "mc": ("mc", "Multiple-choice splits: build (Random MC, or a contrast MC of any kind), import human TSVs, score, audit."),
    "proxy-study": ("proxy_study", "Studies of Wray et al. on proxy matrices: Fig. 4 curve, Fig. 5 GMR bounds, supp. A/B, §4.3 triplets."),
    "signature": ("signature", "Signatures: compare the settings, versions and inputs behind two results."),
}


# Typer 0.29 shows a flag's type (``--fix <bool>``) in --help as if it took a value: a flag shows none.
_display_type = TyperOption.display_type_rich
TyperOption.display_type_rich = lambda option, ctx: None if option.is_flag else _display_type(option, ctx)


def _version(value: bool) -> None:
    if value:
        from tvrbench.signature import versions

        typer.echo("\n".join(f"{name} {version}" for name, version in versions().items()))
        raise typer.Exit()


@app.callback()
def _group(
    version: bool = typer.Option(
        False, "--version", is_eager=True, callback=_version, help="Print tvrbench's version and those of the libraries its signatures name."
    ),
) -> None:
    """Keeps ``app`` a group of commands when only one command module is loaded."""


def load_commands(argv: Sequence[str] = ()) -> typer.Typer:
    """``app`` with the command that ``argv`` names defined, or every command when it names none."""
    named = COMMANDS.get(argv[0]) if argv else None
    for module, _ in [named] if named else COMMANDS.values():
        importlib.import_module(f"tvrbench.cli.{module}")
    return app


def _command(argv: Sequence[str]):
    """The Click command for ``argv``: only the named command's module is imported; without one
    (``tvrbench --help``, ``--version``, a typo) every command is listed by its summary alone."""
    if argv and argv[0] in COMMANDS:
        return _defaults_shown(typer.main.get_command(load_commands(argv)))
    group = typer.main.get_command(app)
    for name, (_, summary) in COMMANDS.items():
        group.commands.setdefault(name, TyperCommand(name, help=summary))
    return group


def _defaults_shown(command):
    """Rich markup reads an option help's own ``[default: 0]`` (given where the option's value is None,
    so that a settings file can stand) as a tag and drops it; escaped, it shows."""
    for param in command.params:
        if getattr(param, "help", None):
            param.help = re.sub(r"(?<!\\)\[default:", r"\\[default:", param.help)
    for sub in getattr(command, "commands", {}).values():
        _defaults_shown(sub)
    return command


def invoke(argv: Sequence[str]) -> None:
    """Run one command line; every exception propagates (``typer.Exit`` carries an exit code)."""
    command = _command(argv)
    with command.make_context("tvrbench", list(argv)) as context:
        command.invoke(context)


def run(argv: Sequence[str]) -> int:
    """Run one command line and return its exit code, any failure printed as one line."""
    try:
        invoke(argv)
    except typer.Exit as stop:
        return stop.exit_code
    except NoArgsIsHelpError as error:
        typer.echo(error.format_message())  # a group or the program without a command: its help
        return 0
    except UsageError as error:
        where = error.ctx.command_path if error.ctx else "tvrbench"
        return _fail(f"{error.format_message().replace('Value error, ', '')} (see {where} --help)")
    except (InputError, MissingResource, typer.TyperException) as error:
        return _fail(str(error))
    except BrokenPipeError:  # the reader went away (`tvrbench ... | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's own flush must not fail again
        return 1  # as rich exits when it meets the closed pipe first
    except OSError as error:
        return _fail(_os_error(error))
    except (KeyboardInterrupt, typer.Abort) as interrupt:
        resume = f"; running the same command again resumes from {interrupt.resume_from}" if isinstance(interrupt, Interrupted) else ""
        typer.echo(f"tvrbench: interrupted{resume}", err=True)
        return 130
    except Exception as error:  # a bug, not bad input: one line too, the traceback on request
        if os.environ.get("TVRBENCH_TRACEBACK"):
            raise
        typer.echo(
            f"tvrbench: internal error: {type(error).__name__}: {' '.join(str(error).split())} (please report it; TVRBENCH_TRACEBACK=1 shows where)",
            err=True,
        )
        return 1
    return 0


def _fail(message: str) -> int:
    typer.echo(f"tvrbench: error: {' '.join(message.split())}", err=True)
    return 2


def _os_error(error: OSError) -> str:
    """``PATH: reason`` of a refused read or write (a folder where a file should be, no permission, disk full)."""
    names = [name for name in (error.filename, error.filename2) if name is not None]
    reason = error.strerror or type(error).__name__
    return f"{' -> '.join(map(str, names))}: {reason.lower()}" if names else str(error) or type(error).__name__


# time.monotonic() when this process started, where it runs as the tvrbench program (``main``): a
# command that reports its own wall time (the demo) then counts the interpreter's start-up and imports.
program_started: float | None = None


def _process_age() -> float:
    """Seconds since this process started (Linux's /proc: its start time after boot); 0 elsewhere."""
    try:
        fields = open("/proc/self/stat", encoding="ascii").read().rsplit(")", 1)[1].split()
        uptime = float(open("/proc/uptime", encoding="ascii").read().split()[0])
        return max(0.0, uptime - int(fields[19]) / os.sysconf("SC_CLK_TCK"))  # field 22, starttime, in clock ticks
    except (OSError, ValueError, IndexError):
        return 0.0


def main(argv: list[str] | None = None) -> None:
    """Entry point (the ``tvrbench`` program): exit with :func:`run`'s code."""
    global program_started
    program_started = time.monotonic() - _process_age()
    # numba's OpenMP workers spin while idle: on a busy machine every parallel region was ~100x
    # slower than with numba's own sleeping pool (docs/evaluation.md). numba reads this at import.
    os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")
    sys.exit(run(sys.argv[1:] if argv is None else argv))
