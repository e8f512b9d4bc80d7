"""FIRE JSON ⇄ TREC qrels, so trec_eval, ranx or ir_measures can use the human labels.

``fire_to_qrels`` writes one qrels line per labelled (query, video) pair: relevance 1 for relevant,
0 for irrelevant. A pair's label follows a rule (``file`` — the released majority label — by
default; see :mod:`~tvrbench.evaluation.fire.pairs`). Disagreements are, as in the paper, neither
relevant nor irrelevant: by default they are left out (``omit``); ``irrelevant`` / ``relevant``
write them as 0 / 1, ``negative`` as −1 (judged, not relevant for trec_eval; restored as a
disagreement on the way back).

Query ids: with a captions file, the caption id(s) whose text is the FIRE query (a text shared by
several captions gets a line for each); without one, ``q`` + a 12-hex digest of (dataset, text).
The metadata sidecar (JSON) maps query ids to text and dataset and keeps every pair's annotator
votes, pooling models and ids, so ``qrels_to_fire`` rebuilds the FIRE file; qrels lines without
that provenance (new judgements from another tool) become one-vote records.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.evaluation.fire.pairs import DISAGREEMENT, IRRELEVANT, RELEVANT, pair_votes
from tvrbench.io.fire import FireLabels, RaggedInts
from tvrbench.io.trec import Qrels
from tvrbench.signature import text_digest

DISAGREEMENT_POLICIES = {"omit": None, "irrelevant": 0, "relevant": 1, "negative": -1}
METADATA_FORMAT = "tvrbench-fire-qrels/1"
PROVENANCE_FIELDS = ("annotator_ids", "annotator_labels", "models", "response_ids", "queue_ids")


def _pair_key(dataset: str, query: str, video_id: str) -> str:
    return f"{dataset}\t{query}\t{video_id}"


def query_id(dataset: str, text: str) -> str:
    """Stable id of a FIRE query without a captions file."""
    return "q" + text_digest([dataset, text])


def _provenance(fire, pairs) -> dict[int, dict]:
    """Per pair (index of :func:`pair_votes`), the pooled per-label lists of its records."""
    merged: dict[int, dict] = {}
    for record, pair in enumerate(pairs.record_pair.tolist()):
        entry = merged.setdefault(pair, {name: [] for name in PROVENANCE_FIELDS})
        entry["annotator_ids"] += fire.annotator_ids[record]
        entry["annotator_labels"] += fire.annotator_labels[record]
        entry["models"] += fire.models[record]
        entry["response_ids"] += [] if fire.response_ids is None else fire.response_ids[record]
        entry["queue_ids"] += [] if fire.queue_ids is None else fire.queue_ids[record]
    return merged


def fire_to_qrels(fire, rule: str = "file", disagreements: str = "omit", captions=None) -> tuple[Qrels, dict, int]:
    """Qrels, metadata sidecar and the number of pairs left out because no caption has their text."""
    if disagreements not in DISAGREEMENT_POLICIES:
        raise ValueError(f"unknown disagreement policy {disagreements!r}; choose {', '.join(DISAGREEMENT_POLICIES)}")
    pairs = pair_votes(fire)
    label = pairs.label(rule)
    relevance = np.select([label == RELEVANT, label == IRRELEVANT], [1, 0], default=-2)
    replacement = DISAGREEMENT_POLICIES[disagreements]
    if replacement is not None:
        relevance[label == DISAGREEMENT] = replacement
    ids_by_text: dict[str, list[str]] = {}
    if captions is not None:
        for caption_id, text in zip(captions.caption_ids, captions.texts):
            ids_by_text.setdefault(text, []).append(caption_id)
    provenance = _provenance(fire, pairs)
    query_ids, doc_ids, rels, queries, kept_provenance = [], [], [], {}, {}
    unmatched = 0
    for index in np.flatnonzero(relevance > -2).tolist():
        dataset, text, video = pairs.dataset[index], pairs.query[index], pairs.video_id[index]
        ids = ids_by_text.get(text, []) if captions is not None else [query_id(dataset, text)]
        if not ids:
            unmatched += 1
            continue
        for qid in ids:
            known = queries.setdefault(qid, {"query": text, "dataset": dataset})
            if known["query"] != text:
                raise InputError(fire.source, f"query id {qid!r} stands for two texts: {known['query']!r} and {text!r}")
            query_ids.append(qid)
            doc_ids.append(video)
            rels.append(int(relevance[index]))
        kept_provenance[_pair_key(dataset, text, video)] = provenance[index]
    qrels = Qrels(np.array(query_ids, dtype=object), np.array(doc_ids, dtype=object), np.array(rels, dtype=np.int32),
                  source=fire.source)
    metadata = {
        "format": METADATA_FORMAT, "rule": rule, "disagreements": disagreements, "fire_metadata": fire.metadata,
        "queries": queries, "provenance": kept_provenance,
    }
    return qrels, metadata, unmatched


def read_metadata(path: str | Path) -> dict:
    """The sidecar written next to the qrels; checked for the fields ``qrels_to_fire`` needs."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such metadata file")
    try:
        metadata = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(path, f"not JSON ({error})") from None
    if not isinstance(metadata, dict) or metadata.get("format") != METADATA_FORMAT:
        raise InputError(path, f"not a tvrbench FIRE qrels metadata file (expected format {METADATA_FORMAT!r})")
    for name in ("queries", "provenance", "fire_metadata"):
        if not isinstance(metadata.get(name), dict):
            raise InputError(path, f"missing or malformed field {name!r}")
    return metadata


def qrels_to_fire(qrels: Qrels, metadata: dict, source: str = "<qrels>") -> FireLabels:
    """FIRE records from qrels lines and the sidecar: relevance > 0 relevant, 0 irrelevant, < 0 disagreement."""
    label_of_pair: dict[str, int] = {}
    identity: dict[str, tuple[str, str, str]] = {}
    for qid, video, rel in zip(qrels.query_ids.tolist(), qrels.doc_ids.tolist(), qrels.relevance.tolist()):
        query = metadata["queries"].get(qid)
        if query is None:
            raise InputError(qrels.source, f"query id {qid!r} is not in the metadata file")
        key = _pair_key(query["dataset"], query["query"], video)
        label = RELEVANT if rel > 0 else IRRELEVANT if rel == 0 else DISAGREEMENT
        if label_of_pair.setdefault(key, label) != label:
            raise InputError(qrels.source, f"pair ({qid}, {video}) has two different relevance values")
        identity[key] = (query["dataset"], query["query"], video)
    order = sorted(label_of_pair, key=lambda key: label_of_pair[key] == DISAGREEMENT)  # annotations first
    columns = {name: [] for name in PROVENANCE_FIELDS}
    for key in order:
        kept = metadata["provenance"].get(key)
        if kept is None:
            if label_of_pair[key] == DISAGREEMENT:
                raise InputError(qrels.source, f"pair {identity[key][1:]} is a disagreement with no annotator votes")
            kept = {"annotator_ids": [], "annotator_labels": [label_of_pair[key]], "models": [], "response_ids": [],
                    "queue_ids": []}
        for name in PROVENANCE_FIELDS:
            columns[name].append(tuple(kept[name]))
    as_objects = lambda values: np.array(values + [None], dtype=object)[:-1]  # noqa: E731  (1-D even for tuples)
    return FireLabels(
        query=as_objects([identity[key][1] for key in order]),
        video_id=as_objects([identity[key][2] for key in order]),
        label=np.array([label_of_pair[key] for key in order], dtype=np.int8),
        dataset=as_objects([identity[key][0] for key in order]),
        models=columns["models"], annotator_labels=columns["annotator_labels"],
        annotator_ids=columns["annotator_ids"], metadata=dict(metadata["fire_metadata"]), source=source,
        response_ids=RaggedInts.from_rows(columns["response_ids"]), queue_ids=RaggedInts.from_rows(columns["queue_ids"]),
    )
