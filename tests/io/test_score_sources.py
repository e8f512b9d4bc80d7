"""The one opener of scores (:func:`tvrbench.io.scores.open_scores`): every form of its table opens to
the matrix and digest the form's own reader gives, blocks are checked finite one by one, and a form
that cannot serve is refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from tvrbench.errors import InputError
from tvrbench.evaluation import Judgments, evaluate
from tvrbench.io.scores import FORMATS, open_scores, score_format
from tvrbench.io.trec import read_run, run_to_matrix, write_run
from tvrbench.signature import input_digest

CAPTIONS, VIDEOS = [f"c{i}" for i in range(9)], [f"v{j}" for j in range(4)]


@pytest.fixture
def forms(tmp_path):
    """One matrix in every form of the table, keyed by the form's name: (input, the expected values)."""
    zarr = pytest.importorskip("zarr", reason="zarr is not installed (pip install 'tvrbench[scale]')")
    rng = np.random.default_rng(3)
    matrix = rng.random((len(CAPTIONS), len(VIDEOS))).astype(np.float32)
    np.save(tmp_path / "S.npy", matrix)
    write_run(tmp_path / "S.run", matrix, CAPTIONS, VIDEOS)
    folder = tmp_path / "parts"
    folder.mkdir()
    for k, (start, stop) in enumerate([(0, 2), (2, 7), (7, 9)]):
        np.save(folder / f"part-{k:05d}.npy", matrix[start:stop])
    zarr.create_array(tmp_path / "S.zarr", shape=matrix.shape, chunks=(4, 4), dtype="float32")[:] = matrix
    text, video = rng.random((len(CAPTIONS), 5)), rng.random((len(VIDEOS), 5))
    np.save(tmp_path / "T.npy", text)
    np.save(tmp_path / "V.npy", video)
    return {
        ".npy": (tmp_path / "S.npy", matrix),
        "TREC run": (tmp_path / "S.run", run_to_matrix(read_run(tmp_path / "S.run"), CAPTIONS, VIDEOS)),
        "folder of .npy row shards": (folder, matrix),
        "Zarr store": (tmp_path / "S.zarr", matrix),
        "text and video embeddings": ((tmp_path / "T.npy", tmp_path / "V.npy"), text @ video.T),
    }


def test_every_form_of_the_table_opens_to_its_values_and_digest(forms):
    assert set(forms) == {form.name for form in FORMATS}
    for name, (given, expected) in forms.items():
        assert score_format(given).name == name
        source = open_scores(given, CAPTIONS, VIDEOS)
        assert source.shape == expected.shape and np.allclose(source.values(), expected, rtol=0, atol=1e-12), name
        assert source.whole == (name in (".npy", "TREC run")), name
    pair = forms["text and video embeddings"][0]
    assert open_scores(pair, CAPTIONS, VIDEOS).digest == f"{input_digest('scores', pair[0])}+{input_digest('scores', pair[1])}:dot"
    for name in (".npy", "TREC run", "folder of .npy row shards", "Zarr store"):  # a file's digest is the pinning rule's
        path = forms[name][0]
        assert open_scores(path, CAPTIONS, VIDEOS).signature_fields == {"scores": input_digest("scores", path)}, name


def test_evaluate_signs_a_source_it_is_given(forms):
    path, matrix = forms[".npy"]
    judgments = Judgments.from_matrices(np.eye(len(CAPTIONS), len(VIDEOS), dtype=bool))
    opened, plain = evaluate(open_scores(path, CAPTIONS, VIDEOS), judgments), evaluate(matrix, judgments)
    assert opened.metrics == plain.metrics
    assert opened.signature.fields["scores"] == input_digest("scores", path) and "scores" not in plain.signature.fields


def test_a_nan_in_a_later_block_is_named_by_row_and_column(forms):
    folder, matrix = forms["folder of .npy row shards"]
    broken = matrix[7:9].copy()
    broken[1, 3] = np.nan
    np.save(folder / "part-00002.npy", broken)
    blocks = open_scores(folder, CAPTIONS, VIDEOS).blocks()
    assert [start for start, _ in (next(blocks), next(blocks))] == [0, 2]  # the clean blocks come first
    with pytest.raises(InputError, match=r"parts: row 8, column 3 is nan; every score must be finite") as caught:
        next(blocks)
    assert "\n" not in str(caught.value)
    judgments = Judgments.from_matrices(np.eye(len(CAPTIONS), len(VIDEOS), dtype=bool))
    with pytest.raises(InputError, match=r"row 8, column 3 is nan"):  # the engine names it too, after its kernel finds it
        evaluate(open_scores(folder), judgments)


@pytest.mark.parametrize(
    "name, ids, message",
    [
        ("S.npz", (CAPTIONS, VIDEOS), "is an .npz archive; save the one score matrix with numpy.save"),
        ("S.run", (None, None), "is read as a TREC run (suffix .run), which names captions and videos by id"),
        ("S.npy", (len(CAPTIONS) + 1, None), f"has {len(CAPTIONS)} rows but the queries file has {len(CAPTIONS) + 1} captions"),
        ("absent.zarr", (None, None), "not found: sharded scores are a Zarr store or a folder of .npy row shards"),
    ],
)
def test_a_form_that_cannot_serve_is_refused_in_one_line(forms, tmp_path, name, ids, message):
    np.savez(tmp_path / "S.npz", scores=np.zeros((2, 2)))
    with pytest.raises(InputError) as caught:
        open_scores(tmp_path / name, *ids)
    assert message in str(caught.value) and caught.value.source == str(tmp_path / name) and "\n" not in str(caught.value)


def test_embeddings_in_a_run_file_are_refused(forms, tmp_path):
    (tmp_path / "T.txt").write_text("c0 Q0 v0 1 0.5 tag\n")
    with pytest.raises(InputError, match="T.txt: is read as a TREC run"):
        open_scores((tmp_path / "T.txt", tmp_path / "V.npy"), CAPTIONS, VIDEOS)
