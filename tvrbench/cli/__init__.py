"""The ``tvrbench`` command line: a thin layer over the Python API.

Each command group lives in its own module and registers itself on :data:`app`. :func:`run` is the
one place where a failure becomes one line on stderr: bad input (:class:`~tvrbench.errors.InputError`),
a missing resource, a file the system refuses (``OSError``) and a usage error all print
``tvrbench: error: ...`` and exit with code 2; Ctrl-C prints ``tvrbench: interrupted`` and exits
with 130; anything else is a bug, printed as ``tvrbench: internal error: ...`` with exit code 1
(``TVRBENCH_TRACEBACK=1`` shows the traceback). The command runs under Click directly (Typer's
``main`` would turn Ctrl-C into a silent exit code), so every exception reaches :func:`run`.

A command line imports only the module of the command it names (:func:`load_commands`): importing
every module costs each run the start-up of libraries it does not use (NLP, plotting, the hub).
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence

import typer

from tvrbench.cli.clickapi import NoArgsIsHelpError, UsageError
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

# The module that defines each top-level command on ``app`` when imported, in the order of the help.
COMMAND_MODULES = {
    "contrast": "contrast",
    "demo": "demo",
    "doctor": "doctor",
    "evaluate": "evaluate",
    "fire": "fire",
    "mc": "mc",
    "proxies": "proxies",
    "proxy-study": "proxy_study",
    "publish": "publish",
    "report": "report",
    "signature": "signature",
}


@app.callback()
def _group() -> None:
    """Keeps ``app`` a group of commands when only one command module is loaded."""


def load_commands(argv: Sequence[str] = ()) -> typer.Typer:
    """``app`` with the command that ``argv`` names defined, or every command when it names none."""
    named = COMMAND_MODULES.get(argv[0]) if argv else None
    for module in [named] if named else dict.fromkeys(COMMAND_MODULES.values()):
        importlib.import_module(f"tvrbench.cli.{module}")
    return app


def invoke(argv: Sequence[str]) -> None:
    """Run one command line; every exception propagates (``typer.Exit`` carries an exit code)."""
    command = typer.main.get_command(load_commands(argv))
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
    except OSError as error:
        return _fail(_os_error(error))
    except (KeyboardInterrupt, typer.Abort):
        typer.echo("tvrbench: interrupted", err=True)
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


def main(argv: list[str] | None = None) -> None:
    """Entry point (the ``tvrbench`` program): exit with :func:`run`'s code."""
    # numba's OpenMP workers spin while idle: on a busy machine every parallel region was ~100x
    # slower than with numba's own sleeping pool (docs/evaluation.md). numba reads this at import.
    os.environ.setdefault("NUMBA_THREADING_LAYER", "workqueue")
    sys.exit(run(sys.argv[1:] if argv is None else argv))
