"""FIRE JSON ⇄ TREC qrels: the paper's rule by default, the options, and an exact round trip."""

from __future__ import annotations

import json

import ir_measures
import numpy as np
import pytest
from test_fire_agreement import labels_in_memory, write_design
from test_fire_cli import run

from tvrbench.errors import InputError
from tvrbench.evaluation.fire.labels import fire_to_qrels, qrels_to_fire, query_id, read_metadata
from tvrbench.io.captions import Captions
from tvrbench.io.trec import Qrels

DESIGN = {(1, 0): 5, (0, 1): 3, (1, 2): 2, (2, 1): 1, (1, 1): 2}  # 2 disagreements


def test_default_is_the_paper_rule():
    fire = labels_in_memory("MSVD", DESIGN)
    qrels, metadata, unmatched = fire_to_qrels(fire)
    assert unmatched == 0 and len(qrels) == 11
    assert int(np.sum(qrels.relevance == 1)) == 5 and int(np.sum(qrels.relevance == 0)) == 6
    assert qrels.query_ids[0] == query_id("MSVD", fire.query[0])
    assert metadata["queries"][qrels.query_ids[0]] == {"query": fire.query[0], "dataset": "MSVD"}


@pytest.mark.parametrize("policy, relevant, irrelevant, negative", [("irrelevant", 5, 8, 0), ("relevant", 7, 6, 0), ("negative", 5, 6, 2)])
def test_disagreement_policies(policy, relevant, irrelevant, negative):
    qrels, _, _ = fire_to_qrels(labels_in_memory("MSVD", DESIGN), disagreements=policy)
    assert [int(np.sum(qrels.relevance == v)) for v in (1, 0, -1)] == [relevant, irrelevant, negative]


def test_rule_any():
    qrels, _, _ = fire_to_qrels(labels_in_memory("MSVD", DESIGN), rule="any")
    assert int(np.sum(qrels.relevance == 1)) == 3 + 2 + 1 + 2


def test_caption_ids_as_query_ids():
    fire = labels_in_memory("MSVD", {(0, 1): 2})
    captions = Captions(["c1", "c2", "c3"], [fire.query[0], fire.query[0], "other"], ["v1", "v2", "v3"])
    qrels, metadata, unmatched = fire_to_qrels(fire, captions=captions)
    assert unmatched == 1  # the second record's text is no caption
    assert qrels.query_ids.tolist() == ["c1", "c2"] and set(metadata["queries"]) == {"c1", "c2"}


def test_round_trip_through_files(tmp_path):
    write_design(tmp_path / "fire.json", {"MSRVTT": DESIGN})
    run(
        [
            "labels",
            "to-qrels",
            "--fire",
            str(tmp_path / "fire.json"),
            "--out",
            str(tmp_path / "fire.qrels"),
            "--metadata",
            str(tmp_path / "meta.json"),
            "--disagreements",
            "negative",
        ]
    )
    run(
        [
            "labels",
            "to-fire",
            "--qrels",
            str(tmp_path / "fire.qrels"),
            "--metadata",
            str(tmp_path / "meta.json"),
            "--out",
            str(tmp_path / "back.json"),
        ]
    )
    original, back = json.loads((tmp_path / "fire.json").read_text()), json.loads((tmp_path / "back.json").read_text())
    for section in ("annotations", "disagreements"):
        key = lambda r: (r["query"], r["video_id"])  # noqa: E731
        assert sorted(original[section], key=key) == sorted(back[section], key=key)
    assert back["creator"] == original["creator"]
    # other IR tools read the qrels
    parsed = list(ir_measures.read_trec_qrels(str(tmp_path / "fire.qrels")))
    assert len(parsed) == 13 and sum(q.relevance == 1 for q in parsed) == 5


def test_new_qrels_lines_become_one_vote_records(tmp_path):
    fire = labels_in_memory("MSVD", {(0, 1): 1})
    qrels, metadata, _ = fire_to_qrels(fire)
    extra = Qrels(
        np.array([qrels.query_ids[0]] * 2, dtype=object), np.array([fire.video_id[0], "newvideo"], dtype=object), np.array([1, 0], dtype=np.int32)
    )
    back = qrels_to_fire(extra, metadata)
    assert back.annotator_labels[1] == (0,) and back.models[1] == () and back.label.tolist() == [1, 0]
    unknown = Qrels(np.array(["q-unknown"], dtype=object), np.array(["v"], dtype=object), np.array([1], dtype=np.int32))
    with pytest.raises(InputError, match="q-unknown"):
        qrels_to_fire(unknown, metadata)
    (tmp_path / "bad.json").write_text("{}")
    with pytest.raises(InputError, match="format"):
        read_metadata(tmp_path / "bad.json")


def test_without_provenance_the_way_back_has_one_vote_per_pair():
    fire = labels_in_memory("MSVD", {(1, 2): 1, (2, 0): 1})
    qrels, metadata, _ = fire_to_qrels(fire, provenance=False)
    assert metadata["provenance"] == {}
    back = qrels_to_fire(qrels, metadata)
    assert sorted(back.annotator_labels) == [(0,), (1,)] and sorted(back.label.tolist()) == [0, 1]
