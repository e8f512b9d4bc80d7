"""TREC qrels and run files, the formats trec_eval, ranx and ir_measures read.

qrels: ``qid 0 docid rel`` (the second column is ignored, as trec_eval does). run: ``qid Q0 docid
rank score tag``. Fields are whitespace separated; blank lines are skipped. In tvrbench a query is
a caption (its caption id) and a document a video (its video id).

How a run becomes a score matrix (:func:`run_to_matrix`): retrieved pairs keep their scores; the
pairs a query did not retrieve all get one score just below that query's lowest retrieved score,
so they rank after every retrieved video and tie among themselves (the evaluator's tie rule then
orders them). A query absent from the run scores 0 everywhere. Order comes from the scores, not
from the rank column, as in trec_eval; but ties between retrieved videos are broken by the
evaluator's rule (column index by default), where trec_eval breaks them by document id.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write
from tvrbench.io.files import read_text_file


@dataclass
class Qrels:
    """Relevance judgments, one entry per (query, document) line."""

    query_ids: np.ndarray  # object array
    doc_ids: np.ndarray  # object array
    relevance: np.ndarray  # int32
    source: str = "<memory>"

    def __len__(self) -> int:
        return len(self.relevance)


@dataclass
class Run:
    """A system's retrieved (query, document, score) triples, in file order."""

    query_ids: np.ndarray  # object array
    doc_ids: np.ndarray  # object array
    scores: np.ndarray  # float64
    source: str = "<memory>"

    def __len__(self) -> int:
        return len(self.scores)


def _columns(path: Path, width: int, layout: str) -> tuple[list[int], list[list[str]]]:
    """The fields of the non-blank lines, column by column, with those lines' 1-based numbers.
    Column lists are sliced out of one token list: no per-line objects stay alive (1M-line runs)."""
    text = read_text_file(path)
    widths = [len(line.split()) for line in text.splitlines()]
    numbers = [number for number, count in enumerate(widths, start=1) if count]
    if not numbers:
        raise InputError(path, f"no {layout} lines")
    bad = next((number for number in numbers if widths[number - 1] != width), None)
    if bad is not None:
        raise InputError(path, f"line {bad}: expected {width} fields ({layout}), found {widths[bad - 1]}")
    tokens = text.split()  # the same fields, since every line break is whitespace
    return numbers, [tokens[k::width] for k in range(width)]


def _numbers(path: Path, numbers: list[int], column: list[str], name: str, dtype) -> np.ndarray:
    try:
        return np.array(column, dtype=dtype)
    except (ValueError, OverflowError):
        for number, text in zip(numbers, column):
            try:
                np.array([text], dtype=dtype)
            except (ValueError, OverflowError):
                raise InputError(path, f"line {number}: {name} {text!r} is not a valid {np.dtype(dtype).name}") from None
        raise


def _check_unique_pairs(path: Path, numbers: list[int], queries: list[str], docs: list[str]) -> None:
    pairs = list(map(" ".join, zip(queries, docs)))  # ids hold no whitespace, so the join is unambiguous
    if len(set(pairs)) == len(pairs):
        return
    first_line: dict[str, int] = {}
    for number, query, doc, pair in zip(numbers, queries, docs, pairs):
        if pair in first_line:
            raise InputError(path, f"line {number}: ({query}, {doc}) appears again (first on line {first_line[pair]})")
        first_line[pair] = number


def read_qrels(path: str | os.PathLike) -> Qrels:
    """Read ``qid 0 docid rel`` lines; a (query, document) pair may appear once."""
    path = Path(path)
    numbers, (queries, _, docs, relevance) = _columns(path, 4, "qid 0 docid rel")
    values = _numbers(path, numbers, relevance, "relevance", np.int32)
    _check_unique_pairs(path, numbers, queries, docs)
    return Qrels(np.array(queries, dtype=object), np.array(docs, dtype=object), values, str(path))


def read_run(path: str | os.PathLike) -> Run:
    """Read ``qid Q0 docid rank score tag`` lines; scores must be finite, pairs unique."""
    path = Path(path)
    numbers, (queries, _, docs, ranks, scores, _) = _columns(path, 6, "qid Q0 docid rank score tag")
    _numbers(path, numbers, ranks, "rank", np.int64)
    values = _numbers(path, numbers, scores, "score", np.float64)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        raise InputError(path, f"line {numbers[bad[0]]}: score {scores[bad[0]]} is not finite")
    _check_unique_pairs(path, numbers, queries, docs)
    return Run(np.array(queries, dtype=object), np.array(docs, dtype=object), values, str(path))


def _positions(source: str, ids: np.ndarray, order, what: str, where: str) -> np.ndarray:
    index = {identifier: position for position, identifier in enumerate(order)}
    positions = np.fromiter((index.get(identifier, -1) for identifier in ids), dtype=np.int64, count=len(ids))
    unknown = np.flatnonzero(positions < 0)
    if unknown.size:
        examples = ", ".join(repr(ids[i]) for i in unknown[:3])
        count = len(set(ids[unknown].tolist()))
        raise InputError(source, f"{count} {what} not in {where} (e.g. {examples})")
    return positions


def run_to_matrix(run: Run, query_ids, doc_ids) -> np.ndarray:
    """Scores as a (queries × documents) float64 matrix; unretrieved pairs per the module rule."""
    rows = _positions(run.source, run.query_ids, query_ids, "query ids", "the queries (captions) given")
    columns = _positions(run.source, run.doc_ids, doc_ids, "document ids", "the video ids given")
    lowest = np.full(len(query_ids), np.inf)
    np.minimum.at(lowest, rows, run.scores)
    floor = np.where(np.isfinite(lowest), np.nextafter(lowest, -np.inf), 0.0)
    matrix = np.repeat(floor[:, None], len(doc_ids), axis=1)
    matrix[rows, columns] = run.scores
    return matrix


def _check_writable_ids(ids, what: str, path) -> list[str]:
    """Ids as text; InputError (naming the file to write) for one a whitespace-separated line cannot hold."""
    ids = [str(identifier) for identifier in ids]
    for identifier in ids:
        if not identifier or identifier != "".join(identifier.split()):
            raise InputError(path, f"{what} {identifier!r} is empty or contains whitespace, which a TREC file cannot hold")
    return ids


def write_qrels(path: str | os.PathLike, qrels: Qrels) -> None:
    """Write ``qid 0 docid rel`` lines, atomically."""
    queries = _check_writable_ids(qrels.query_ids, "query id", path)
    docs = _check_writable_ids(qrels.doc_ids, "document id", path)
    with atomic_write(path) as out:
        for query, doc, relevance in zip(queries, docs, qrels.relevance.tolist()):
            out.write(f"{query} 0 {doc} {relevance}\n")


def write_run(path: str | os.PathLike, scores: np.ndarray, query_ids, doc_ids, depth: int | None = None, tag: str = "tvrbench") -> None:
    """Write each query's top ``depth`` documents (all when None) by descending score, ties by
    column index ascending; rank is 1-based and scores are written exactly (shortest round-trip)."""
    scores = np.asarray(scores)
    queries = _check_writable_ids(query_ids, "query id", path)
    docs = _check_writable_ids(doc_ids, "document id", path)
    (tag,) = _check_writable_ids([tag], "tag", path)
    if scores.shape != (len(queries), len(docs)):
        raise ValueError(f"scores have shape {scores.shape}, expected ({len(queries)}, {len(docs)})")
    if not np.isfinite(scores).all():
        raise ValueError("scores contain NaN or infinity")
    depth = len(docs) if depth is None else min(depth, len(docs))
    if depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    block = max(1, (1 << 22) // max(1, len(docs)))  # rows per block: bounded memory for the sort
    with atomic_write(path) as out:
        for start in range(0, len(queries), block):
            chunk = scores[start : start + block].astype(np.float64)
            order = np.argsort(-chunk, axis=1, kind="stable")[:, :depth]
            top = np.take_along_axis(chunk, order, axis=1)
            for offset, (columns, values) in enumerate(zip(order.tolist(), top.tolist())):
                query = queries[start + offset]
                out.writelines(
                    f"{query} Q0 {docs[column]} {rank} {value!r} {tag}\n" for rank, (column, value) in enumerate(zip(columns, values), start=1)
                )
