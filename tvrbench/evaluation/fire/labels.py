"""FIRE JSON ⇄ TREC qrels, so trec_eval, ranx or ir_measures can use the human labels.

``fire_to_qrels`` writes one qrels line per labelled (query, video) pair: relevance 1 for relevant,
0 for irrelevant. A pair's label follows a rule (``file`` — the released majority label — by
default; see :mod:`~tvrbench.evaluation.fire.pairs`). Disagreements are, as in the paper, neither
relevant nor irrelevant: by default they are left out (``omit``); ``irrelevant`` / ``relevant``
write them as 0 / 1, ``negative`` as −1 (judged, not relevant for trec_eval; restored as a
disagreement on the way back).

Query ids: with a captions file, the caption id(s) whose text is the FIRE query (a text shared by
several captions gets a line for each); without one, ``q`` + a 12-hex digest of (dataset, text).
The metadata sidecar (compact JSON) maps query ids to text and dataset and keeps, per pair, its
annotator ids, votes, pooling models, response and queue ids (in ``provenance_fields`` order), so
``qrels_to_fire`` rebuilds the FIRE file; qrels lines without that provenance (new judgements from
another tool) become one-vote records.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.evaluation.fire.pairs import DISAGREEMENT, IRRELEVANT, RELEVANT, pair_votes
from tvrbench.io.atomic import atomic_write
from tvrbench.io.files import read_json
from tvrbench.io.fire import FireLabels, RaggedInts
from tvrbench.io.trec import Qrels
from tvrbench.results import Sources, analysis_signature
from tvrbench.signature import Signature, text_digest

DISAGREEMENT_POLICIES = {"omit": None, "irrelevant": 0, "relevant": 1, "negative": -1}
METADATA_FORMAT = "tvrbench-fire-qrels/1"
PROVENANCE_FIELDS = ("annotator_ids", "annotator_labels", "models", "response_ids", "queue_ids")


def _pair_key(dataset: str, query: str, video_id: str) -> str:
    return f"{dataset}\t{query}\t{video_id}"


@functools.lru_cache(maxsize=1 << 16)  # one digest per distinct query, not per pair
def query_id(dataset: str, text: str) -> str:
    """Stable id of a FIRE query without a captions file."""
    return "q" + text_digest([dataset, text])


def _ragged_rows(ragged, n: int) -> list[list[int]]:
    """Rows of a packed id column as lists (one ``tolist`` instead of a numpy slice per row)."""
    if ragged is None:
        return [[] for _ in range(n)]
    values, offsets = ragged.values.tolist(), ragged.offsets.tolist()
    return [values[start:stop] for start, stop in zip(offsets, offsets[1:])]


def _provenance(fire, pairs) -> list[tuple]:
    """Per pair (index of :func:`pair_votes`), its records' per-label lists in PROVENANCE_FIELDS order."""
    rows = list(
        zip(
            fire.annotator_ids,
            fire.annotator_labels,
            fire.models,
            _ragged_rows(fire.response_ids, len(fire)),
            _ragged_rows(fire.queue_ids, len(fire)),
        )
    )
    merged: list = [None] * len(pairs)
    for record, pair in enumerate(pairs.record_pair.tolist()):
        if merged[pair] is None:
            merged[pair] = rows[record]
        else:  # a pair repeated over several records: concatenate their lists
            merged[pair] = tuple([*kept, *more] for kept, more in zip(merged[pair], rows[record]))
    return merged


def fire_to_qrels(fire, rule: str = "file", disagreements: str = "omit", captions=None, provenance: bool = True) -> tuple[Qrels, dict, int]:
    """Qrels, metadata sidecar and the number of pairs left out because no caption has their text.

    ``provenance=False`` leaves the per-pair votes and ids out of the sidecar (faster, smaller; the
    way back then makes one-vote records).
    """
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
    per_pair = _provenance(fire, pairs) if provenance else None
    query_ids, doc_ids, rels, queries, kept_provenance = [], [], [], {}, {}
    unmatched = 0
    kept = np.flatnonzero(relevance > -2)
    columns = (pairs.dataset[kept].tolist(), pairs.query[kept].tolist(), pairs.video_id[kept].tolist(), relevance[kept].tolist(), kept.tolist())
    for dataset, text, video, rel, index in zip(*columns):
        ids = ids_by_text.get(text, []) if captions is not None else [query_id(dataset, text)]
        if not ids:
            unmatched += 1
            continue
        for qid in ids:
            if qid not in queries:
                queries[qid] = {"query": text, "dataset": dataset}
            elif queries[qid]["query"] != text:
                raise InputError(fire.source, f"query id {qid!r} stands for two texts: {queries[qid]['query']!r} and {text!r}")
            query_ids.append(qid)
            doc_ids.append(video)
            rels.append(rel)
        if per_pair is not None:
            kept_provenance[_pair_key(dataset, text, video)] = per_pair[index]
    qrels = Qrels(np.array(query_ids, dtype=object), np.array(doc_ids, dtype=object), np.array(rels, dtype=np.int32), source=fire.source)
    metadata = {
        "format": METADATA_FORMAT,
        "rule": rule,
        "disagreements": disagreements,
        "fire_metadata": fire.metadata,
        "queries": queries,
        "provenance_fields": list(PROVENANCE_FIELDS),
        "provenance": kept_provenance,
    }
    return qrels, metadata, unmatched


def qrels_signature(rule: str = "file", disagreements: str = "omit", sources: Sources | None = None) -> Signature:
    """The signature of a qrels conversion, kept in its metadata sidecar (``sources``: the FIRE file and captions)."""
    return analysis_signature("fire-labels", sources, {"rule": rule, "disagreements": disagreements})


def write_metadata(path: str | Path, metadata: dict) -> None:
    """The sidecar as compact JSON in one string, atomically (indenting makes json fall back to
    its pure-Python encoder: minutes for the 600K pairs of the release)."""
    with atomic_write(path) as out:
        out.write(json.dumps(metadata, ensure_ascii=False, separators=(",", ":")) + "\n")


def read_metadata(path: str | Path) -> dict:
    """The sidecar written next to the qrels; checked for the fields ``qrels_to_fire`` needs."""
    path = Path(path)
    metadata = read_json(path)
    if not isinstance(metadata, dict) or metadata.get("format") != METADATA_FORMAT:
        raise InputError(path, f"not a tvrbench FIRE qrels metadata file (expected format {METADATA_FORMAT!r})")
    for name in ("queries", "provenance", "fire_metadata"):
        if not isinstance(metadata.get(name), dict):
            raise InputError(path, f"missing or malformed field {name!r}")
    if metadata.get("provenance_fields") != list(PROVENANCE_FIELDS):
        raise InputError(path, f"provenance_fields must be {list(PROVENANCE_FIELDS)}")
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
            kept = [[], [label_of_pair[key]], [], [], []]  # one vote: the qrels judgement
        for name, values in zip(PROVENANCE_FIELDS, kept):
            columns[name].append(tuple(values))
    as_objects = lambda values: np.array(values + [None], dtype=object)[:-1]  # noqa: E731  (1-D even for tuples)
    return FireLabels(
        query=as_objects([identity[key][1] for key in order]),
        video_id=as_objects([identity[key][2] for key in order]),
        label=np.array([label_of_pair[key] for key in order], dtype=np.int8),
        dataset=as_objects([identity[key][0] for key in order]),
        models=columns["models"],
        annotator_labels=columns["annotator_labels"],
        annotator_ids=columns["annotator_ids"],
        metadata=dict(metadata["fire_metadata"]),
        source=source,
        response_ids=RaggedInts.from_rows(columns["response_ids"]),
        queue_ids=RaggedInts.from_rows(columns["queue_ids"]),
    )
