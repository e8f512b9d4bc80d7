"""The core install stays light: no PyTorch, and the evaluation engine never imports it."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).parents[1] / "pyproject.toml"
HEAVY = {"torch", "transformers", "sentence-transformers", "spacy", "datasets", "matplotlib", "scikit-learn"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower()


def test_core_dependencies_exclude_heavy_packages():
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    assert not {_name(r) for r in project["dependencies"]} & HEAVY
    extras = project["optional-dependencies"]
    listed = {_name(r) for name, requirements in extras.items() if name not in ("all", "test") for r in requirements}
    assert HEAVY <= listed, "every heavy package belongs to an extra"
    assert extras["all"] == [f"tvrbench[{','.join(n for n in extras if n not in ('all', 'test'))}]"]


def test_evaluation_does_not_import_heavy_modules():
    code = (
        "import sys, tvrbench.cli, tvrbench.evaluation, tvrbench.io.fire, tvrbench.io.trec;"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers', 'spacy', 'datasets') if m in sys.modules))"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "[]"


def test_a_command_line_imports_only_its_command_and_what_it_uses():
    """Start-up is paid on every run: `fire agreement` needs no numba or scipy, `evaluate` no other command."""
    code = (
        "import sys; from tvrbench.cli import load_commands; load_commands(sys.argv[1:]);"
        "print(sorted(m for m in ('numba', 'scipy', 'tvrbench.cli.contrast', 'tvrbench.cli.evaluate', 'tvrbench.cli.fire',"
        " 'tvrbench.cli.proxies') if m in sys.modules))"
    )

    def imported(*argv: str) -> str:
        return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, check=True).stdout.strip()

    assert imported("fire", "agreement") == "['tvrbench.cli.fire']"
    assert imported("evaluate") == "['tvrbench.cli.evaluate']"
    assert imported().endswith("'tvrbench.cli.contrast', 'tvrbench.cli.evaluate', 'tvrbench.cli.fire', 'tvrbench.cli.proxies']")


def test_no_cli_module_exceeds_250_lines():
    """The CLI declares options, calls the library and prints; computation lives in the library."""
    cli = Path(__file__).parents[1] / "tvrbench" / "cli"
    lengths = {path.relative_to(cli).as_posix(): len(path.read_text(encoding="utf-8").splitlines()) for path in cli.rglob("*.py")}
    assert {name: n for name, n in lengths.items() if n > 250} == {}


def test_every_command_reading_captions_takes_the_same_reading_options():
    """--format, --video-list and --trust-pickle wherever captions are read; --fire-dataset wherever models are
    scored with FIRE labels."""
    import typer

    from tvrbench.cli import load_commands

    def commands(command, path: str = "tvrbench"):
        if hasattr(command, "commands"):  # a group
            for name, sub in command.commands.items():
                yield from commands(sub, f"{path} {name}")
        else:
            yield path, {opt for param in command.params for opt in param.opts}

    found = dict(commands(typer.main.get_command(load_commands())))
    reading = {path for path, opts in found.items() if opts & {"--queries", "--captions", "--train-captions"}}
    assert len(reading) == 29
    assert [path for path in reading if not {"--format", "--video-list", "--trust-pickle"} <= found[path]] == []
    assert [path for path in reading if {"--scores", "--fire"} <= found[path] and "--fire-dataset" not in found[path]] == []
