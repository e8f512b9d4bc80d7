"""Score matrices: kept dtypes, shape checks, every bad-input case gives one InputError."""

import pickle

import numpy as np
import pytest

from tvrbench.errors import InputError
from tvrbench.io import scores as scores_module
from tvrbench.io.scores import open_scores, read_scores
from tvrbench.signature import input_digest


def save(tmp_path, array, name="scores.npy"):
    path = tmp_path / name
    np.save(path, array, allow_pickle=True)
    return path


@pytest.mark.parametrize(
    "dtype, expected",
    [
        (np.float32, np.float32),
        (np.float64, np.float64),
        (np.float16, np.float64),
        (np.int32, np.float64),
        (np.uint8, np.float64),
        (">f4", np.float32),
    ],
)
def test_values_and_dtypes(tmp_path, dtype, expected):
    matrix = np.arange(12).reshape(3, 4).astype(dtype)
    loaded = read_scores(save(tmp_path, matrix), shape=(3, 4))
    assert loaded.dtype == expected
    assert np.array_equal(loaded, matrix.astype(expected))
    assert not isinstance(loaded, np.memmap)


def test_fortran_order_is_read_as_the_same_matrix(tmp_path):
    matrix = np.asfortranarray(np.random.default_rng(0).random((5, 7)))
    assert np.array_equal(read_scores(save(tmp_path, matrix)), matrix)


@pytest.mark.parametrize(
    "matrix",
    [
        np.arange(12, dtype=np.float32).reshape(3, 4),
        np.asfortranarray(np.random.default_rng(0).random((5, 7))),
        np.arange(12, dtype=">i2").reshape(3, 4),
    ],
)
@pytest.mark.parametrize("trailing", [b"", b"extra bytes after the array"])
def test_digest_of_the_loaded_bytes_equals_the_file_digest(tmp_path, matrix, trailing):
    path = save(tmp_path, matrix)
    with open(path, "ab") as handle:
        handle.write(trailing)
    source = open_scores(path)
    assert source.digest == input_digest("scores", path)
    assert np.array_equal(source.values(), read_scores(path))
    path.write_bytes(path.read_bytes()[:-1] + b"\x01")  # one byte changed: another digest
    assert open_scores(path).digest != source.digest


def test_first_bad_cell_is_reported_across_blocks(tmp_path, monkeypatch):
    monkeypatch.setattr(scores_module, "BLOCK_VALUES", 8)  # 2 rows per block: the bad cells sit in later blocks
    matrix = np.zeros((9, 4), dtype=np.float32)
    matrix[6, 2] = np.inf
    matrix[7, 0] = np.nan
    with pytest.raises(InputError, match=r"row 6, column 2 is inf") as caught:
        read_scores(save(tmp_path, matrix))
    assert "\n" not in str(caught.value)
    matrix[6, 2] = 0
    with pytest.raises(InputError, match=r"row 7, column 0 is nan"):
        read_scores(save(tmp_path, matrix))


def test_finite_check_can_be_left_to_the_ranking_pass(tmp_path):
    """``check_finite=False`` returns the matrix as stored; the ranking pass finds the bad cell, then
    ``require_finite`` names it (what ``tvrbench evaluate`` does)."""
    from tvrbench.evaluation.ranking import NonFiniteScores, target_ranks
    from tvrbench.io.scores import require_finite

    matrix = np.zeros((4, 3), dtype=np.float32)
    matrix[2, 1] = np.nan
    path = save(tmp_path, matrix)
    loaded = read_scores(path, check_finite=False)
    assert loaded.flags.c_contiguous and np.array_equal(loaded, matrix, equal_nan=True)
    with pytest.raises(NonFiniteScores):
        target_ranks(loaded)
    with pytest.raises(InputError, match=r"row 2, column 1 is nan"):
        require_finite(path, loaded)


@pytest.mark.parametrize(
    "array, message",
    [
        (np.array([[1, None]], dtype=object), "contains Python objects \\(pickle\\); tvrbench never unpickles input"),
        (np.zeros(4), "must be a 2-D matrix.*\\(4,\\)"),
        (np.zeros((2, 2, 2)), "must be a 2-D matrix"),
        (np.zeros((2, 2), dtype=bool), "dtype bool"),
        (np.zeros((2, 2), dtype=complex), "dtype complex128"),
        (np.array([["a", "b"]]), "dtype <U1"),
        (np.zeros((0, 3)), "is empty"),
    ],
)
def test_bad_arrays(tmp_path, array, message):
    path = save(tmp_path, array)
    with pytest.raises(InputError, match=message) as caught:
        read_scores(path)
    assert caught.value.source == str(path)


def test_wrong_shape_names_both_counts(tmp_path):
    path = save(tmp_path, np.zeros((999, 5)))
    with pytest.raises(InputError, match="has 999 rows but the queries file has 1000 captions"):
        read_scores(path, shape=(1000, 5))
    with pytest.raises(InputError, match="has 5 columns but the videos file has 6 videos"):
        read_scores(path, shape=(999, 6))


@pytest.mark.parametrize(
    "content, message",
    [
        (pickle.dumps(np.zeros((2, 2))), "is a pickle"),
        (b"", "empty file"),
        (b"q1 Q0 v1 1 0.5 run\n", "is not a .npy file"),
        (b"\x93NUMPY\x01\x00garbage", "unreadable .npy"),
    ],
)
def test_not_npy_files(tmp_path, content, message):
    path = tmp_path / "scores.npy"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_scores(path)


def test_npz_and_missing(tmp_path):
    path = tmp_path / "scores.npz"
    np.savez(path, scores=np.zeros((2, 2)))
    with pytest.raises(InputError, match="npz archive"):
        read_scores(path)
    with pytest.raises(InputError, match="no such file"):
        read_scores(tmp_path / "absent.npy")
