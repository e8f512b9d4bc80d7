"""The disk cache of values derived once (tvrbench.io.disk_cache), in a temporary tvrbench home: the first
run returns what later runs read, a good file is reused, a missing, corrupt, truncated or incomplete
one is built again, and a failed or killed build leaves nothing that a later run would read. The
caches that use it are checked on their own values in test_contrast_verb.py (the verb lexicon) and
test_counterfit.py (the counter-fitted vectors, a binary file)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from tvrbench.io.atomic import atomic_write
from tvrbench.io.disk_cache import kept, kept_json


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("TVRBENCH_HOME", str(tmp_path))
    return tmp_path


def counted(value):
    """A build that returns ``value`` and counts its calls."""

    def build():
        build.calls += 1
        return value

    build.calls = 0
    return build


# Tuples: JSON gives them back as lists.
BUILT = {"rows": (1, 2, 3), "nested": {"a": (1.5, None)}}
READ = {"rows": [1, 2, 3], "nested": {"a": [1.5, None]}}


def test_the_first_run_returns_what_later_runs_read_and_a_good_file_is_reused(home):
    """The value built is written and read back before it is returned, so the first run sees the same
    value as every later one; a second call reads the file and builds nothing."""
    build = counted(BUILT)
    first = kept_json("things", "key", build, frozenset({"rows"}))
    path = home / "things" / "key.json"
    assert first == READ and build.calls == 1 and json.loads(path.read_text()) == READ
    stamp = path.stat().st_mtime_ns
    assert kept_json("things", "key", build, frozenset({"rows"})) == first and build.calls == 1 and path.stat().st_mtime_ns == stamp
    assert kept_json("things", "other", counted({"rows": 0})) == {"rows": 0}  # another key, another file
    assert sorted(p.name for p in (home / "things").iterdir()) == ["key.json", "other.json"]


@pytest.mark.parametrize(
    "damage",
    [
        lambda good: b"",  # empty
        lambda good: good[: len(good) // 2],  # truncated
        lambda good: b"\xff\xfe\x00garbage",  # not UTF-8
        lambda good: b"[1, 2, 3]",  # JSON, not an object
        lambda good: b'{"nested": {}}',  # an object without every field (an older cache)
    ],
    ids=["empty", "truncated", "not-utf8", "not-an-object", "missing-field"],
)
def test_a_damaged_file_is_built_again(home, damage):
    """A file that does not read as a complete cache is rebuilt, and the rebuilt value is the first run's."""
    build = counted(BUILT)
    first = kept_json("things", "key", build, frozenset({"rows", "nested"}))
    path = home / "things" / "key.json"
    path.write_bytes(damage(path.read_bytes()))
    assert kept_json("things", "key", build, frozenset({"rows", "nested"})) == first and build.calls == 2
    assert json.loads(path.read_text()) == READ
    assert kept_json("things", "key", build, frozenset({"rows", "nested"})) == first and build.calls == 2  # and then reused


def test_a_failed_or_killed_build_leaves_nothing_a_later_run_reads(home):
    """A build that raises writes no file and no temporary; the leftover temporary of a killed build does
    not stop the next one."""

    def failing():
        raise RuntimeError("no resource")

    with pytest.raises(RuntimeError, match="no resource"):
        kept_json("things", "key", failing)
    assert not any((home / "things").iterdir())
    (home / "things" / f".key.json.{socket.gethostname()}-99999999.tmp").write_text('{"rows": [9]}')  # a build killed while writing
    build = counted(BUILT)
    assert kept_json("things", "key", build) == READ and build.calls == 1
    assert sorted(p.name for p in (home / "things").iterdir()) == ["key.json"]


PRINT_BUILT = "print(json.dumps(kept('things', 'key', lambda: json.loads(sys.argv[1]))))"


def test_two_processes_building_one_file_at_once_both_get_it(home):
    """Each writer has its own temporary file: a second process that writes the same cache file while
    the first is still writing it replaces nothing under the first (both once crashed on the rename)."""
    with atomic_write(home / "things" / "key.json") as out:
        out.write(json.dumps(READ))
        script = "import json, sys\nfrom tvrbench.io.disk_cache import kept_json as kept\n" + PRINT_BUILT
        environment = {**os.environ, "TVRBENCH_HOME": str(home)}
        other = subprocess.run([sys.executable, "-c", script, json.dumps(READ)], capture_output=True, text=True, env=environment)
        assert other.returncode == 0, other.stderr
    assert json.loads(other.stdout) == READ and json.loads((home / "things" / "key.json").read_text()) == READ
    assert sorted(p.name for p in (home / "things").iterdir()) == ["key.json"]


def test_kept_reads_with_its_own_reader_and_rebuilds_on_its_errors(home):
    """:func:`kept` with a reader of its own (a binary file): a reader's error is a file to rebuild; the
    value returned is the reader's, not the builder's."""
    build = counted(b"\x01\x02\x03\x04")

    def read(path):
        data = path.read_bytes()
        if len(data) != 4:
            raise EOFError(f"{path}: {len(data)} bytes")
        return list(data)

    def write(value, out):
        out.write(value)

    assert kept("blobs", "one.bin", build, read, write, binary=True) == [1, 2, 3, 4] and build.calls == 1
    assert kept("blobs", "one.bin", build, read, write, binary=True) == [1, 2, 3, 4] and build.calls == 1
    (home / "blobs" / "one.bin").write_bytes(b"\x01")
    assert kept("blobs", "one.bin", build, read, write, binary=True) == [1, 2, 3, 4] and build.calls == 2
