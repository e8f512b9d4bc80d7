"""A full disk: one line naming the file, exit code 2, and nothing half-written.

The disk is a real one: a 12 KiB tmpfs mounted in a private mount namespace (``unshare -rm``, which
needs no root: a user namespace), so every write past it fails with ENOSPC as on a full volume."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tvrbench.data import sample_path

ROOT = Path(__file__).resolve().parents[1]


def _full_disk_run(mount: Path, *args: str) -> tuple[int, str, list[str]]:
    """Exit code and stderr of ``tvrbench ARGS`` with a full tmpfs at ``mount``, and the files left on it."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespace here (unshare -rm) for a small tmpfs")
    mount.mkdir()
    command = " ".join(map(shlex.quote, [sys.executable, "-m", "tvrbench", *args]))
    where = shlex.quote(str(mount))
    script = f'mount -t tmpfs -o size=12k none {where} || exit 99; {command} 2>&1 >/dev/null; echo "exit=$?"; cd {where} && find . -mindepth 1'
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    completed = subprocess.run(["unshare", "-rm", "sh", "-c", script], capture_output=True, text=True, env=env)
    assert completed.returncode == 0, completed.stderr
    stderr, code, files = re.fullmatch(r"(.*?)exit=(\d+)\n(.*)", completed.stdout, re.S).groups()
    return int(code), stderr, sorted(files.split())


def test_publish_on_a_full_disk_names_the_file_and_leaves_nothing(tmp_path):
    mc = tmp_path / "random.tsv"
    assert (
        subprocess.run(
            [sys.executable, "-m", "tvrbench", "mc", "build", "--captions", sample_path("captions.csv"), "--kind", "random", "--out", mc]
        ).returncode
        == 0
    )
    mount = tmp_path / "disk"
    code, stderr, files = _full_disk_run(mount, "publish", "--out", str(mount / "ds"), "--mc", f"mc_random={mc}", "--license", "cc0-1.0")
    assert code == 2
    assert re.fullmatch(rf"tvrbench: error: {re.escape(str(mount))}/\S+: no space left on device\n", stderr), stderr
    assert files == []  # no half-made ds/ and no staging folder


def test_proxies_on_a_full_disk_names_the_file_and_leaves_only_its_resume_state(tmp_path):
    mount = tmp_path / "disk"
    code, stderr, files = _full_disk_run(
        mount, "proxies", "--captions", str(sample_path("captions.csv")), "--proxy", "bow", "--out", str(mount / "bow.npy")
    )
    assert code == 2
    assert re.fullmatch(rf"tvrbench: error: {re.escape(str(mount))}/bow\.npy\S*: no space left on device\n", stderr), stderr
    assert "./bow.npy" not in files  # never a half-written matrix; a rerun with space resumes from these
    assert set(files) <= {"./bow.npy.partial", "./bow.npy.partial.json"}
