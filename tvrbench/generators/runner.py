"""Run a :class:`~tvrbench.generators.core.ContrastGenerator` over a captions file, chunk by chunk.

Each chunk is searched as the in-memory core searches it (here, or as a task on a Dask cluster) and
appended to the resumable partial file; the final JSONL and its sidecar (signature, counts, how a
language model reads the contrasts beside their originals, and the text-only audit of the pairs:
:func:`tvrbench.evaluation.audit.audit_pairs`) appear only when every caption is done.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.generators.core import ContrastGenerator, Job, check_texts
from tvrbench.generators.records import ContrastRecord, ResumableJsonl
from tvrbench.io.captions import Captions
from tvrbench.progress import track


def entry_of(item, outcome) -> dict:
    """One caption's entry in the partial file."""
    record = outcome.record.to_json() if outcome.record else None
    return {"caption_id": item.caption_id, "record": record, "reason": outcome.reason, "rejected": outcome.rejected}


def chunk_entries(job: Job, items: Sequence) -> list[dict]:
    """The partial-file entries of one chunk; they depend on the chunk alone (see ContrastSearch.run)."""
    return [entry_of(item, outcome) for item, outcome in zip(items, job.run(items))]


def run_contrasts(generator: ContrastGenerator, captions: Captions, out: str | Path, client=None) -> tuple[list[ContrastRecord], dict]:
    """``generator``'s contrasts of every caption written to ``out``, resuming a partial run with the
    same signature; returns records and sidecar. With a Dask ``client``, each chunk is a task on the
    cluster (its captions sent unparsed: the worker parses them).

    Chunks have fixed boundaries (:meth:`~tvrbench.generators.core.ContrastGenerator.chunks`) and a
    chunk's records depend on the chunk alone, so whichever chunks are redone after an interruption, in whatever order, the
    output is byte-identical to an uninterrupted single-process run.
    """
    from tvrbench.evaluation.audit import audit_pairs  # not at the top: that module imports this package

    check_texts(captions)
    kind = generator.kind
    items, context = generator.prepare(captions)
    job = Job(generator, context)
    signature = generator.signature(captions, job.search)
    writer = ResumableJsonl(out, str(signature))
    chunks = generator.chunks(items)
    todo = [chunk for chunk in chunks if any(item.caption_id not in writer.done for item in chunk)]
    if writer.done:
        print(f"resuming {writer.path}: {len(chunks) - len(todo)} of {len(chunks)} chunks done", file=sys.stderr)

    with writer:
        if client is None:
            for chunk in track(todo, f"{kind} contrasts", total=len(todo)):
                writer.append(chunk_entries(job, chunk))
        else:
            from dask.distributed import as_completed

            remote_job = client.scatter(job, broadcast=True)
            futures = [client.submit(chunk_entries, remote_job, [replace(item, doc=None) for item in chunk], pure=False) for chunk in todo]
            for future in track(as_completed(futures), f"{kind} contrasts", total=len(futures), enabled=True):
                writer.append(future.result())
                future.release()
        current = {item.index: writer.done[item.caption_id]["record"] for item in items}
        records = {index: ContrastRecord(**record) if record else None for index, record in current.items()}
        for index, outcome in job.spread_out(items, records).items():  # the set's cap on one substitute
            writer.done[items[index].caption_id] = entry_of(items[index], outcome)
        entries = [writer.done[caption_id] for caption_id in captions.caption_ids]
        reasons = Counter(entry["reason"] for entry in entries if entry["reason"])
        if reasons.get("no target") == len(captions):
            writer.partial.unlink(missing_ok=True)
            raise InputError(captions.source, f"no caption has a {kind} target (nothing to contrast)")
        rejected = Counter()
        for entry in entries:
            rejected.update(entry.get("rejected") or {})
        done = [entry["record"] for entry in entries if entry["record"]]
        audit = audit_pairs([r["original"] for r in done], [r["contrast"] for r in done], generator.lm, generator.config.seed)
        sidecar = {
            "signature": str(signature),
            "kind": kind,
            "captions": captions.source,
            "counts": {"captions": len(captions), "records": len(captions) - sum(reasons.values()), **dict(sorted(reasons.items()))},
            "candidates_rejected": dict(sorted(rejected.items())),
            "plausibility": audit.lm_preference.to_json(),
            "audit": audit.to_json(),
            "settings": generator.config.model_dump(),
        }
        records = writer.finish(captions.caption_ids, sidecar)
    return records, sidecar
