"""The worked examples of the README and docs/ run as written, and print what the page shows.

Each ``$`` line of a page's code blocks runs in page order, in one scratch folder per page, with the
page's variables (``$S`` …) as its prose defines them. A ``tvrbench …`` line runs in this process
through :func:`tvrbench.cli.run` (as the demo runs its steps: spaCy, the sentence model and the LM
load once, so the whole check costs about a minute, not the four a fresh process per line takes),
with the page's variables expanded as a shell would; any other line (``head``, ``mkdir``) runs in
bash. ``test_tvrbench_is_on_the_path_of_the_environment`` runs one of them as a real program, found
on the PATH as ``source .venv/bin/activate`` puts it. Each must exit 0 (``signature diff`` 1: the
signatures differ), and the lines the page shows below it must appear in its output, in order,
after ``normalise`` (timings, version numbers and ports vary; a page may leave out lines, such as
the ``wrote …`` lines on stderr, and a ``…`` line marks lines it shortened). Pages whose examples
need data not shipped here are in ``NOT_RUN`` with the reason.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tvrbench.cli import run
from tvrbench.data import SAMPLE_DIR
from tvrbench.home import cache_dir

ROOT = Path(__file__).resolve().parents[1]

# The page's variables, as its prose defines them; the sample is the installed one.
PAGES = {
    "README.md": {"S": str(SAMPLE_DIR)},
    "docs/fire.md": {
        "S": str(SAMPLE_DIR),
        "Q": f"--queries {SAMPLE_DIR}/captions.csv --videos {SAMPLE_DIR}/videos.txt",
        "M": " ".join(f"--scores {SAMPLE_DIR}/scores_{model}.npy" for model in ("strong", "genderblind", "objectonly")),
    },
    "docs/review.md": {"S": str(SAMPLE_DIR)},
}
# Examples that do not run here, each with why (the start of the command line identifies it).
SKIPPED = {"tvrbench fire overlap-train": "needs MSR-VTT's training captions (MSRVTT_JSFUSION_test.csv), not shipped"}
NOT_RUN = {
    "docs/contrast.md": "MSR-VTT caption files, not shipped",
    "docs/audit.md": "MSR-VTT caption files, not shipped",
    "docs/scaling.md": "MSR-VTT caption files and a cluster",
    "docs/proxies.md": "its sample run is README section 3's; the studies need MSR-VTT models' scores",
    "docs/publish.md": "the demo's transcript: tests/test_demo.py runs the demo",
}
ELLIPSIS = "…"


@dataclass(frozen=True)
class Example:
    """One ``$`` command of a page, with the output lines the page shows below it."""

    page: str
    line: int
    command: str
    shown: tuple[str, ...]

    @property
    def skipped(self) -> str | None:
        return next((why for start, why in SKIPPED.items() if self.command.startswith(start)), None)


def examples(page: str) -> list[Example]:
    """Every ``$`` command in the page's code blocks (a trailing ``\\`` continues the line)."""
    found, block, command, shown, start = [], False, None, [], 0

    def close():
        if command is not None:
            found.append(Example(page, start, command, tuple(shown)))

    for number, line in enumerate((ROOT / page).read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            close()
            block, command, shown = not block, None, []
        elif block and line.startswith("$ "):
            close()
            command, shown, start = line[2:], [], number
        elif block and command is not None and command.endswith("\\"):
            command = command[:-1].rstrip() + " " + line.strip()
        elif block and command is not None:
            shown.append(line)
    return found


def normalise(line: str) -> str:
    """A line without what varies between runs and machines: timings, versions, ports, the cache
    folder (shown as its default, ``~/.cache/tvrbench``), trailing blanks."""
    line = line.replace(str(cache_dir()), "~/.cache/tvrbench")
    line = re.sub(r"\b\d+(\.\d+)? s\b", "T s", line)  # durations
    line = re.sub(r"([\w-]+):\d+\.\d+[\w.+-]*", r"\1:V", line)  # name:version in signatures
    line = re.sub(r"(tcp://[\d.]+|http://[\d.]+):\d+", r"\1:PORT", line)
    return line.rstrip()


def missing_lines(shown: tuple[str, ...], output: str) -> list[str]:
    """The shown lines not found in order in the output (``…`` alone on a line skips any lines)."""
    lines = [normalise(line) for line in output.splitlines()]
    at, missing = 0, []
    for want in (normalise(line) for line in shown):
        if want.strip() in (ELLIPSIS, "...") or not want:
            continue
        try:
            at = lines.index(want, at) + 1
        except ValueError:
            missing.append(want)
    return missing


def _environment(page: str) -> dict[str, str]:
    env = dict(os.environ, **PAGES[page])
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"  # as `source .venv/bin/activate`
    env["PYTHONPATH"] = f"{ROOT}{os.pathsep}{env.get('PYTHONPATH', '')}"  # this tree, not an installed copy
    env["COLUMNS"] = "160"  # the pages' tables were captured in a wide terminal
    return env


def run_example(example: Example, folder: Path) -> tuple[int, str]:
    """Exit code and output of one example run in ``folder``."""
    env = _environment(example.page)
    if not example.command.startswith("tvrbench "):
        result = subprocess.run(["bash", "-c", example.command], cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return result.returncode, result.stdout
    line = re.sub(r"\$(\w+)", lambda name: PAGES[example.page][name[1]], example.command)
    output = io.StringIO()  # stdout and stderr interleaved, as a terminal shows them
    with contextlib.chdir(folder), pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", env["COLUMNS"])
        with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
            code = run(shlex.split(line)[1:])
    return code, output.getvalue()


@pytest.fixture(scope="session")
def page_runs(tmp_path_factory) -> dict[str, list[tuple[Example, tuple[int, str] | None]]]:
    """Every page's examples, run once for the session in page order (later ones read earlier outputs).

    The FIRE cache starts empty: the README's `fire cache --clear` counts the entries its own
    commands made, not those of earlier runs on other files."""
    from tvrbench.io import fire_cache

    fire_cache.clear()
    runs = {}
    for page in PAGES:
        folder = tmp_path_factory.mktemp(page.replace("/", "_"))
        runs[page] = [(example, None if example.skipped else run_example(example, folder)) for example in examples(page)]
    return runs


@pytest.mark.parametrize("page", list(PAGES))
def test_page_examples_run_and_print_what_the_page_shows(page_runs, page):
    ran = 0
    for example, result in page_runs[page]:
        if result is None:
            continue
        code, output = result
        where = f"{example.page}:{example.line}: $ {example.command}"
        assert code == (1 if example.command.startswith("tvrbench signature diff") else 0), f"{where}\nexit {code}\n{output[-2000:]}"
        missing = missing_lines(example.shown, output)
        assert not missing, f"{where}\nnot in its output:\n" + "\n".join(missing) + f"\n--- output ---\n{output}"
        ran += 1
    assert ran >= 5  # the page still has examples, and the parser found them


def test_tvrbench_is_on_the_path_of_the_environment(tmp_path):
    """One example as a real program: ``tvrbench`` from the environment's bin folder, as the README's
    ``source .venv/bin/activate`` finds it, prints what the page shows."""
    example = next(example for example in examples("README.md") if example.command.startswith("tvrbench fire agreement"))
    result = subprocess.run(["bash", "-c", example.command], cwd=tmp_path, env=_environment("README.md"), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert not missing_lines(example.shown, result.stdout)


def test_every_page_with_commands_is_run_or_says_why():
    pages = {str(path.relative_to(ROOT)) for path in [ROOT / "README.md", *ROOT.glob("docs/*.md")] if examples(str(path.relative_to(ROOT)))}
    assert pages == set(PAGES) | set(NOT_RUN)


def test_the_matching_can_fail():
    assert missing_lines(("a", "…", "c"), "a\nb\nc 1.5 s\n") == ["c"]
    assert missing_lines(("c 2.0 s", "a"), "a\nc 1.5 s\n") == ["a"]  # order matters
    assert not missing_lines(("x numpy:2.4.6 (3 s)",), "x numpy:2.5.0 (12.1 s)")
