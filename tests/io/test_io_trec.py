"""TREC qrels and runs: round trips, peers (ir_measures) read what we write, the matrix rule."""

import numpy as np
import pytest

from tvrbench.errors import InputError
from tvrbench.io.trec import Qrels, Run, read_qrels, read_run, run_to_matrix, write_qrels, write_run

QUERIES = ["c1", "c2", "c3"]
VIDEOS = ["v1", "v2", "v3", "v4"]


def test_qrels_round_trip(tmp_path):
    qrels = Qrels(np.array(["c1", "c1", "c2"], dtype=object), np.array(["v2", "v3", "v1"], dtype=object), np.array([1, 0, 2], dtype=np.int32))
    path = tmp_path / "extra.qrels"
    write_qrels(path, qrels)
    assert path.read_text() == "c1 0 v2 1\nc1 0 v3 0\nc2 0 v1 2\n"
    back = read_qrels(path)
    assert back.query_ids.tolist() == ["c1", "c1", "c2"]
    assert back.doc_ids.tolist() == ["v2", "v3", "v1"]
    assert back.relevance.dtype == np.int32 and back.relevance.tolist() == [1, 0, 2]
    assert back.source == str(path)


def test_qrels_tolerate_tabs_and_blank_lines(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("c1\t0\tv1\t1\n\n  c2 Q0 v2   0\n")
    assert read_qrels(path).doc_ids.tolist() == ["v1", "v2"]


def test_write_run_orders_by_score_then_column_and_round_trips_exactly(tmp_path):
    scores = np.array([[0.5, 0.9, 0.5, 0.1], [0.2, 0.2, 0.2, 0.3], [1 / 3, 0.0, -1.0, 2.0]])
    path = tmp_path / "model.run"
    write_run(path, scores, QUERIES, VIDEOS, depth=3, tag="mymodel")
    lines = path.read_text().splitlines()
    assert lines[:3] == ["c1 Q0 v2 1 0.9 mymodel", "c1 Q0 v1 2 0.5 mymodel", "c1 Q0 v3 3 0.5 mymodel"]
    assert lines[3:6] == ["c2 Q0 v4 1 0.3 mymodel", "c2 Q0 v1 2 0.2 mymodel", "c2 Q0 v2 3 0.2 mymodel"]
    run = read_run(path)
    assert len(run) == 9
    assert run.scores[6] == 2.0 and run.scores[7] == 1 / 3  # shortest round-trip repr: exact
    full = tmp_path / "full.run"
    write_run(full, scores.astype(np.float32), QUERIES, VIDEOS)
    matrix = run_to_matrix(read_run(full), QUERIES, VIDEOS)
    assert np.array_equal(matrix, scores.astype(np.float32).astype(np.float64))


def test_ir_measures_reads_our_files(tmp_path):
    ir_measures = pytest.importorskip("ir_measures")
    scores = np.random.default_rng(1).random((3, 4))
    write_run(tmp_path / "r.run", scores, QUERIES, VIDEOS)
    write_qrels(tmp_path / "q.qrels", Qrels(np.array(QUERIES, dtype=object), np.array(["v1", "v2", "v3"], dtype=object), np.ones(3, dtype=np.int32)))
    run = list(ir_measures.read_trec_run(str(tmp_path / "r.run")))
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "q.qrels")))
    assert {(r.query_id, r.doc_id): r.score for r in run} == {(q, v): scores[i, j] for i, q in enumerate(QUERIES) for j, v in enumerate(VIDEOS)}
    assert [(q.query_id, q.doc_id, q.relevance) for q in qrels] == [("c1", "v1", 1), ("c2", "v2", 1), ("c3", "v3", 1)]


def test_run_to_matrix_puts_unretrieved_pairs_below_every_retrieved_one():
    run = Run(np.array(["c2", "c1", "c1", "c2"], dtype=object), np.array(["v4", "v3", "v1", "v2"], dtype=object), np.array([-5.0, 0.25, 0.75, -7.0]))
    matrix = run_to_matrix(run, QUERIES, VIDEOS)
    assert matrix.dtype == np.float64
    # oracle: a plain loop
    for i, query in enumerate(QUERIES):
        retrieved = {d: s for q, d, s in zip(run.query_ids, run.doc_ids, run.scores) if q == query}
        others = [matrix[i, j] for j, video in enumerate(VIDEOS) if video not in retrieved]
        for j, video in enumerate(VIDEOS):
            if video in retrieved:
                assert matrix[i, j] == retrieved[video]
        if retrieved:
            assert max(others) < min(retrieved.values())
            assert len(set(others)) == 1  # unretrieved videos tie
        else:
            assert others == [0.0] * 4
    assert np.isfinite(matrix).all()


def test_run_to_matrix_rejects_unknown_ids():
    run = Run(np.array(["c1", "c9", "c9"], dtype=object), np.array(["v1", "v1", "v2"], dtype=object), np.ones(3), "model.run")
    with pytest.raises(InputError, match=r"model.run: 1 query ids not in the queries \(captions\) given \(e.g. 'c9'"):
        run_to_matrix(run, QUERIES, VIDEOS)
    run.query_ids[1:] = "c2"
    run.doc_ids[2] = "v7"
    with pytest.raises(InputError, match="document ids not in the video ids given.*'v7'"):
        run_to_matrix(run, QUERIES, VIDEOS)


@pytest.mark.parametrize(
    "reader, content, message",
    [
        (read_qrels, "c1 0 v1\n", "line 1: expected 4 fields"),
        (read_qrels, "c1 0 v1 1\nc1 0 v2 yes\n", "line 2: relevance 'yes' is not a valid int32"),
        (read_qrels, "c1 0 v1 1\n\nc1 0 v1 0\n", r"line 3: \(c1, v1\) appears again \(first on line 1\)"),
        (read_qrels, "\n \n", "empty file"),
        (read_run, "c1 Q0 v1 1 0.5\n", "line 1: expected 6 fields"),
        (read_run, "c1 Q0 v1 1 0.5 t\nc1 Q0 v2 2 high t\n", "line 2: score 'high' is not a valid float64"),
        (read_run, "c1 Q0 v1 first 0.5 t\n", "line 1: rank 'first' is not a valid int64"),
        (read_run, "c1 Q0 v1 1 0.5 t\nc1 Q0 v2 2 nan t\n", "line 2: score nan is not finite"),
        (read_run, "c1 Q0 v1 1 0.5 t\nc1 Q0 v1 2 0.4 t\n", "line 2: .* appears again"),
    ],
)
def test_bad_files(tmp_path, reader, content, message):
    path = tmp_path / "file.txt"
    path.write_text(content)
    with pytest.raises(InputError, match=message) as caught:
        reader(path)
    assert caught.value.source == str(path)


def test_pickled_run_is_refused(tmp_path):
    path = tmp_path / "run.pkl"
    path.write_bytes(b"\x80\x04\x95 pickle")
    with pytest.raises(InputError, match="pickle"):
        read_run(path)


def test_write_run_refuses_ids_trec_cannot_hold(tmp_path):
    with pytest.raises(InputError, match="whitespace"):
        write_run(tmp_path / "r", np.zeros((1, 1)), ["a caption"], ["v1"])
    with pytest.raises(ValueError, match="shape"):
        write_run(tmp_path / "r", np.zeros((2, 1)), ["c1"], ["v1"])
    with pytest.raises(ValueError, match="NaN"):
        write_run(tmp_path / "r", np.full((1, 1), np.nan), ["c1"], ["v1"])
