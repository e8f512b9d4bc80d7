"""A command killed (SIGKILL, no clean-up) early, in the middle or during its final write leaves its
output absent, never half-written or mismatched, and the next run finishes it byte-identical to an
uninterrupted run. Each kill is placed exactly: the child process replaces one function with one
that kills the process when called with the given arguments."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tvrbench.data import sample_path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def run(argv: list[str], kill_at: tuple[str, str, str] | None = None) -> int:
    """Run ``tvrbench ARGV`` in a fresh process; ``kill_at = (module, attribute, condition)`` kills
    it at the first call of ``module.attribute`` whose arguments ``args`` meet ``condition``."""
    code = ["import os, signal, sys, importlib", "from tvrbench.cli import run"]
    if kill_at:
        module, attribute, condition = kill_at
        code += [
            f"owner = importlib.import_module({module!r})",
            f"*path, name = {attribute!r}.split('.')",
            "for part in path: owner = getattr(owner, part)",
            "real = getattr(owner, name)",
            "def killing(*args, **kwargs):",
            f"    if {condition}: os.kill(os.getpid(), signal.SIGKILL)",
            "    return real(*args, **kwargs)",
            "setattr(owner, name, killing)",
        ]
    code.append(f"sys.exit(run({argv!r}))")
    return subprocess.run([sys.executable, "-c", "\n".join(code)], env=ENV, capture_output=True).returncode


def files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def killed_then_finished(tmp_path: Path, argv, outputs: list[str], points: list[tuple[str, str, str]]) -> None:
    reference, work = tmp_path / "reference", tmp_path / "work"
    reference.mkdir(), work.mkdir()
    assert run([arg.format(out=reference) for arg in argv]) == 0
    for point in points:
        assert run([arg.format(out=work) for arg in argv], kill_at=point) == -9, f"not killed at {point}"
        assert not any((work / name).exists() for name in outputs), f"an output appeared after a kill at {point}: {sorted(files(work))}"
    assert run([arg.format(out=work) for arg in argv]) == 0
    assert files(work) == files(reference)  # byte for byte, and nothing left beside


def test_proxies_killed_at_any_point(tmp_path):
    """The visual proxy (no caption parsing: a run costs a second) goes through the same blocks and writes."""
    features = tmp_path / "features.npy"
    np.save(features, np.random.default_rng(0).standard_normal((36, 8)).astype(np.float32))
    argv = ["proxies", "--captions", str(sample_path("captions.csv")), "--proxy", "visual", "--features", str(features), "--level", "video"]
    killed_then_finished(
        tmp_path,
        [*argv, "--out", "{out}/m.npy"],
        ["m.npy"],
        [
            ("tvrbench.proxies.storage", "NpyBlocks.put", "True"),  # early: before the first block is stored
            ("tvrbench.proxies.storage", "write_json", "str(args[0]).endswith('m.json')"),  # middle: every block done, the sidecar next
            ("os", "replace", "str(args[1]).endswith('/m.npy')"),  # the final write: the matrix moved into place
        ],
    )


@pytest.fixture(scope="module")
def mc_split(tmp_path_factory) -> Path:
    mc = tmp_path_factory.mktemp("mc") / "random.tsv"
    assert run(["mc", "build", "--captions", str(sample_path("captions.csv")), "--kind", "random", "--out", str(mc)]) == 0
    return mc


def test_publish_killed_at_any_point(tmp_path, mc_split):
    argv = ["publish", "--out", "{out}/ds", "--mc", f"a={mc_split}", "--mc", f"b={mc_split}", "--license", "cc0-1.0"]
    killed_then_finished(
        tmp_path,
        argv,
        ["ds"],
        [
            ("pyarrow.parquet", "write_table", "True"),  # early: the first config's Parquet file
            ("tvrbench.publish.folder", "render_card", "True"),  # middle: every config written, the card next
            ("os", "replace", "str(args[1]).endswith('/ds')"),  # the final write: the finished folder moved into place
        ],
    )
