"""Every form we write is read by every command that reads its kind, with the same numbers (issue 25).

Relevance: ``tvrbench proxies --out`` writes the sample's video-level BoW and visual proxies as
``.npy``, ``.zarr``, ``.npz`` and ``.parquet`` (the sparse forms with ``--threshold 0``, which keeps
every cell); each command that reads a relevance matrix gets each form and must print or write what
it does for the ``.npy``. Scores: the sample's scores as ``.npy``, a TREC run, a Zarr store and a
folder of ``.npy`` row shards (what ``evaluate --scores`` accepts), given to every command that
reads scores. Real commands, in this process.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tvrbench.cli import run
from tvrbench.data import load_sample, sample_path
from tvrbench.io.relevance import RELEVANCE_FORMATS

CAPTIONS, VIDEOS, FIRE = (str(sample_path(name)) for name in ("captions.csv", "videos.txt", "fire.json"))
SCORES = sample_path("scores_strong.npy")
OTHER_SCORES = sample_path("scores_objectonly.npy")
RELEVANCE_FORMS = ("npy", "npz", "zarr", "parquet")
SCORE_FORMS = ("npy", "run", "zarr", "shards")


def ok(*args: object) -> None:
    assert run([str(arg) for arg in args]) == 0, args


@pytest.fixture(scope="module")
def proxies(tmp_path_factory) -> Path:
    """``bow.FORM`` and ``visual.FORM`` for every form, from ``tvrbench proxies``."""
    folder = tmp_path_factory.mktemp("proxies")
    n_videos = len(load_sample().video_ids)
    features = folder / "features.npy"
    np.save(features, np.random.default_rng(0).normal(size=(n_videos, 8)))
    for form in RELEVANCE_FORMS:
        sparse = ("--threshold", "0") if form in ("npz", "parquet") else ()
        for proxy, options in (("bow", ()), ("visual", ("--features", features))):
            ok("proxies", "--captions", CAPTIONS, "--proxy", proxy, *options, "--level", "video", "--out", folder / f"{proxy}.{form}", *sparse)
    return folder


def written(command: tuple, output: Path) -> object:
    """Run ``command`` with ``output`` as its last option's value; what it wrote: JSON (an evaluation's
    metrics; no signature, which names the input file's digest), a published dataset's rows, or text."""
    ok(*command, output)
    if output.suffix == ".json":
        data = json.loads(output.read_text())
        data.pop("signature", None)
        return data["metrics"] if command[0] == "evaluate" else data
    if output.is_dir():
        import pyarrow.parquet as pq

        return [pq.read_table(part).to_pylist() for part in sorted(output.glob("data/*/*.parquet"))]
    return output.read_text()


def visual(matrix: Path) -> Path:
    return matrix.with_name(f"visual{matrix.suffix}")


# Each command that reads a relevance matrix, with what it writes: (output name, command but the output).
RELEVANCE_READERS = {
    "evaluate": ("r.json", lambda m: ("evaluate", "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", SCORES, "--relevance", m, "--json")),
    "report": ("r.html", lambda m: ("report", "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", SCORES, "--relevance", m, "--out")),
    "publish": ("dataset", lambda m: ("publish", "--relevance", f"bow={m}", "--out")),
    "curve": ("s.json", lambda m: ("proxy-study", "curve", "--matrix", f"bow={m}", "--json")),
    "correlation": ("s.json", lambda m: ("proxy-study", "correlation", "--matrix", f"bow={m}", "--matrix", f"visual={visual(m)}", "--json")),
    "gmr": ("s.json", lambda m: ("proxy-study", "gmr", "--scores", SCORES, "--relevance", m, "--threshold", "0.5", "--json")),
    "human-kit": ("s.csv", lambda m: ("proxy-study", "human-kit", "--matrix", m, "--captions", CAPTIONS, "--videos", "6", "--out")),
    "triplets": ("s.csv", lambda m: ("proxy-study", "triplets", "--matrix", m, "--threshold", "0.3", "--out")),
}


@pytest.mark.parametrize("form", RELEVANCE_FORMS)
@pytest.mark.parametrize("reader", RELEVANCE_READERS)
def test_every_relevance_form_reads_as_the_npy(proxies, reader, form, tmp_path):
    output, command = RELEVANCE_READERS[reader]
    expected = written(command(proxies / "bow.npy"), tmp_path / f"npy-{output}")
    assert expected
    assert written(command(proxies / f"bow.{form}"), tmp_path / f"{form}-{output}") == expected


def test_an_unknown_relevance_format_is_one_line_naming_the_file_and_the_accepted_ones(tmp_path, capsys):
    matrix = tmp_path / "bow.csv"
    matrix.write_text("0.5\n")
    accepted = ", ".join(f"{suffix} ({form})" for suffix, form in RELEVANCE_FORMATS.items())
    for reader in ("evaluate", "publish", "curve"):
        capsys.readouterr()
        assert run([str(arg) for arg in (*RELEVANCE_READERS[reader][1](matrix), tmp_path / "out")]) == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert error == [f"tvrbench: error: {matrix}: unknown relevance matrix format '.csv'; give one of {accepted}"]


@pytest.fixture(scope="module")
def scores(tmp_path_factory) -> Path:
    """The sample's strong scores in every form ``evaluate --scores`` accepts."""
    import zarr

    from tvrbench.io.trec import write_run

    folder = tmp_path_factory.mktemp("scores")
    sample = load_sample()
    matrix = np.load(SCORES)
    np.save(folder / "strong.npy", matrix)
    write_run(folder / "strong.run", matrix, sample.captions.caption_ids, sample.video_ids)
    zarr.create_array(folder / "strong.zarr", shape=matrix.shape, chunks=(30, matrix.shape[1]), dtype=matrix.dtype)[:] = matrix
    (folder / "strong.shards").mkdir()
    for part, start in enumerate(range(0, len(matrix), 40)):
        np.save(folder / "strong.shards" / f"part-{part:05d}.npy", matrix[start : start + 40])
    return folder


# Each command that reads scores: (output name, command but the output) for scores S and proxies P.
SCORE_READERS = {
    "evaluate": ("r.json", lambda s, p: ("evaluate", "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", s, "--fire", FIRE, "--json")),
    "report": ("r.html", lambda s, p: ("report", "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", s, "--fire", FIRE, "--out")),
    "gmr": ("s.json", lambda s, p: ("proxy-study", "gmr", "--scores", s, "--relevance", p / "bow.npy", "--threshold", "0.5", "--json")),
    "fire-length": (
        "s.json",
        lambda s, p: ("fire", "length", "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", s, "--scores", OTHER_SCORES, "--fire", FIRE, "--json"),
    ),
}


@pytest.mark.parametrize("form", SCORE_FORMS)
@pytest.mark.parametrize("reader", SCORE_READERS)
def test_every_score_form_reads_as_the_npy(scores, proxies, reader, form, tmp_path):
    output, command = SCORE_READERS[reader]
    expected = written(command(scores / "strong.npy", proxies), tmp_path / f"npy-{output}")
    assert expected
    assert written(command(scores / f"strong.{form}", proxies), tmp_path / f"{form}-{output}") == expected
