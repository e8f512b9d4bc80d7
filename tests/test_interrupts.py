"""A command killed (SIGKILL, no clean-up) early, in the middle or during its final write leaves its
output absent, never half-written or mismatched, and the next run finishes it byte-identical to an
uninterrupted run. Each kill is placed exactly: the child process replaces one function with one
that kills the process when called with the given arguments. The uninterrupted run and the one that
finishes run in this process (spaCy and the sentence model load once per test session)."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tvrbench.data import sample_path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def signalled(argv: list[str], at: tuple[str, str, str], signal_name: str = "SIGKILL") -> subprocess.CompletedProcess:
    """Run ``tvrbench ARGV`` in a fresh process, ``at = (module, attribute, condition)`` sending it
    ``signal_name`` at the first call of ``module.attribute`` whose arguments ``args`` meet ``condition``."""
    module, attribute, condition = at
    code = [
        "import os, signal, sys, importlib",
        "signal.signal(signal.SIGINT, signal.default_int_handler)",  # as a terminal delivers Ctrl-C, even to a test run in the background
        "from tvrbench.cli import run",
        f"owner = importlib.import_module({module!r})",
        f"*path, name = {attribute!r}.split('.')",
        "for part in path: owner = getattr(owner, part)",
        "real = getattr(owner, name)",
        "def signalling(*args, **kwargs):",
        f"    if {condition}: os.kill(os.getpid(), signal.{signal_name})",
        "    return real(*args, **kwargs)",
        "setattr(owner, name, signalling)",
        f"sys.exit(run({argv!r}))",
    ]
    return subprocess.run([sys.executable, "-c", "\n".join(code)], env=ENV, capture_output=True, text=True)


def killed(argv: list[str], kill_at: tuple[str, str, str]) -> int:
    """The exit code of ``tvrbench ARGV`` killed (SIGKILL, no clean-up) at ``kill_at`` (see :func:`signalled`)."""
    return signalled(argv, kill_at).returncode


def run_here(argv: list[str]) -> tuple[int, str]:
    """Run ``tvrbench ARGV`` in this process; its exit code and what it printed on stderr."""
    from tvrbench.cli import run as run_cli

    stderr = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(stderr):
        code = run_cli(argv)
    return code, stderr.getvalue()


def files(folder: Path) -> dict[str, bytes]:
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def killed_then_finished(tmp_path: Path, argv, outputs: list[str], points: list[tuple[str, str, str]], resumed: str = "") -> None:
    """Kill at each point in turn (each run resuming the last), then rerun: the rerun's stderr says
    ``resumed`` and the folder equals an uninterrupted run's."""
    reference, work = tmp_path / "reference", tmp_path / "work"
    reference.mkdir(), work.mkdir()
    assert run_here([arg.format(out=reference) for arg in argv])[0] == 0
    for point in points:
        assert killed([arg.format(out=work) for arg in argv], point) == -9, f"not killed at {point}"
        assert not any((work / name).exists() for name in outputs), f"an output appeared after a kill at {point}: {sorted(files(work))}"
    code, stderr = run_here([arg.format(out=work) for arg in argv])
    assert code == 0 and resumed in stderr, stderr
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


def test_ctrl_c_says_that_a_rerun_resumes_from_the_partial_file(tmp_path):
    """Ctrl-C where a command has begun its partial file names it (it used to print "interrupted" alone);
    where it has not, or the command keeps none, the line is as it was. Exit code 130 either way."""
    features = tmp_path / "features.npy"
    np.save(features, np.random.default_rng(0).standard_normal((36, 8)).astype(np.float32))
    argv = ["proxies", "--captions", str(sample_path("captions.csv")), "--proxy", "visual", "--features", str(features), "--level", "video"]
    argv += ["--out", str(tmp_path / "m.npy")]
    done = signalled(argv, ("tvrbench.proxies.storage", "NpyBlocks.put", "True"), "SIGINT")  # the partial matrix begun, no block stored
    partial = tmp_path / "m.npy.partial"
    assert (done.returncode, done.stderr.splitlines()[-1]) == (130, f"tvrbench: interrupted; running the same command again resumes from {partial}")
    assert partial.is_file() and not (tmp_path / "m.npy").exists()
    code, stderr = run_here(argv)
    assert code == 0 and (tmp_path / "m.npy").is_file() and not partial.exists(), stderr
    # the other commands that resume: contrast sets from X.jsonl.partial, sharded evaluation from its checkpoint
    shards = tmp_path / "shards"
    shards.mkdir()
    for number, start in enumerate(range(0, 112, 40)):
        np.save(shards / f"{number}.npy", np.load(sample_path("scores_strong.npy"))[start : start + 40])
    queries = ["--queries", str(sample_path("captions.csv")), "--videos", str(sample_path("videos.txt"))]
    for command, at, left in (
        (
            ["contrast", "gender", "--captions", str(sample_path("captions.csv")), "--out", str(tmp_path / "g.jsonl")],
            ("tvrbench.generators.records", "ResumableJsonl.append", "args[1][0]['caption_id'] != 'cap000'"),  # the second chunk of 64
            tmp_path / "g.jsonl.partial",
        ),
        (
            ["evaluate", *queries, "--scores", str(shards), "--json", str(tmp_path / "strong.json")],
            ("tvrbench.evaluation.sharded", "_second_pass", "args[1] == 1"),
            tmp_path / ".strong.json.shards",
        ),
    ):
        done = signalled(command, at, "SIGINT")
        assert (done.returncode, done.stderr.splitlines()[-1]) == (130, f"tvrbench: interrupted; running the same command again resumes from {left}")
    # before the partial file is begun, and in a command that keeps none: the line as it was
    early = [*argv[:-1], str(tmp_path / "again.npy")]
    split = ["mc", "build", "--captions", str(sample_path("captions.csv")), "--kind", "random", "--out", str(tmp_path / "r.tsv")]
    for command, at in ((early, ("tvrbench.proxies.storage", "NpyBlocks.__init__", "True")), (split, ("tvrbench.mc.build", "build_mc_file", "True"))):
        done = signalled(command, at, "SIGINT")
        assert (done.returncode, done.stderr.splitlines()[-1]) == (130, "tvrbench: interrupted")


@pytest.fixture(scope="module")
def mc_split(tmp_path_factory) -> Path:
    mc = tmp_path_factory.mktemp("mc") / "random.tsv"
    assert run_here(["mc", "build", "--captions", str(sample_path("captions.csv")), "--kind", "random", "--out", str(mc)])[0] == 0
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


def test_verb_contrasts_killed_at_any_point(tmp_path):
    """32 captions in 4 chunks of 8: killed before the first chunk is appended to the partial file, at
    the third (two done), and at the rename that completes the records and their sidecar (the
    records moved into place before their sidecar was written until this test)."""
    captions, config = tmp_path / "captions.csv", tmp_path / "verb.yaml"
    captions.write_text("".join(sample_path("captions.csv").read_text(encoding="utf-8").splitlines(keepends=True)[:33]), encoding="utf-8")
    config.write_text("chunk_size: 8\nlm: ngram\n", encoding="utf-8")
    pair = "{'v.jsonl', 'v.jsonl.json'}"
    killed_then_finished(
        tmp_path,
        ["contrast", "verb", "--captions", str(captions), "--config", str(config), "--out", "{out}/v.jsonl"],
        ["v.jsonl"],
        [
            ("tvrbench.generators.records", "ResumableJsonl.append", "True"),  # early: nothing appended yet
            ("tvrbench.generators.records", "ResumableJsonl.append", "args[1][0]['caption_id'] == 'cap016'"),  # middle
            # the final write: the rename after which both files are there
            ("os", "replace", f"os.path.basename(args[1]) in {pair} and len({pair} & set(os.listdir(os.path.dirname(args[1])))) == 1"),
        ],
        resumed="4 of 4 chunks done",
    )


def test_sharded_evaluation_killed_at_any_point(tmp_path):
    """The README's three shards of the strong model: killed at the first shard's ranking, in the
    second pass (the first pass and one shard of the second checkpointed) and at the JSON's rename."""
    shards = tmp_path / "shards"
    shards.mkdir()
    scores = np.load(sample_path("scores_strong.npy"))
    for number, start in enumerate(range(0, len(scores), 40)):
        np.save(shards / f"{number}.npy", scores[start : start + 40])
    queries = ["--queries", str(sample_path("captions.csv")), "--videos", str(sample_path("videos.txt"))]
    killed_then_finished(
        tmp_path,
        ["evaluate", *queries, "--scores", str(shards), "--fire", str(sample_path("fire.json")), "--json", "{out}/strong.json"],
        ["strong.json"],
        [
            ("tvrbench.evaluation.sharded", "_first_pass", "True"),  # early: no shard ranked
            ("tvrbench.evaluation.sharded", "_second_pass", "args[1] == 1"),  # middle: shard 0 of the second pass kept
            ("os", "replace", "str(args[1]).endswith('/strong.json')"),  # the final write
        ],
        resumed="columns: 3 of 3 shards from the checkpoint",
    )
