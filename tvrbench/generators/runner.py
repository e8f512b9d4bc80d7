"""Run a :class:`~tvrbench.generators.base.ContrastSearch` over a captions file, chunk by chunk.

Each chunk is parsed with spaCy, searched (here, or as a task on a Dask cluster), and appended to
the resumable partial file; the final JSONL and its sidecar (signature, counts, and how a language
model reads the contrasts beside their originals) appear only when every caption is done.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.generators.base import ContrastSearch
from tvrbench.generators.lm import LanguageModel, preference
from tvrbench.generators.records import ContrastRecord, ResumableJsonl
from tvrbench.io.captions import Captions
from tvrbench.progress import track
from tvrbench.signature import Signature, text_digest


def check_texts(captions: Captions) -> None:
    """Every caption must have text: an empty one is a broken input, not a caption without a target."""
    for caption_id, text in zip(captions.caption_ids, captions.texts):
        if not text.strip():
            raise InputError(captions.source, f"caption {caption_id!r} has empty text")


def contrast_signature(kind: str, captions: Captions, settings: dict, libraries: tuple[str, ...], **fields) -> Signature:
    """Kind, inputs (by digest), settings (by digest, in full in the sidecar) and versions."""
    digest = text_digest(json.dumps(settings, sort_keys=True).splitlines())
    inputs = text_digest(f"{c}\t{v}\t{t}" for c, v, t in zip(captions.caption_ids, captions.video_ids, captions.texts))
    return Signature({"kind": kind, "captions": inputs, "n": len(captions), "settings": digest, **fields}, libraries)


class Job:
    """A contrast search and its spaCy pipeline, built where the chunks run: in this process, or once
    per Dask worker process. It pickles as its recipe (a module-level function and its arguments);
    the models are loaded where it lands."""

    def __init__(self, recipe: Callable[[], tuple[ContrastSearch, object]], built: tuple[ContrastSearch, object] | None = None):
        self.recipe = recipe
        self._built = built

    def __getstate__(self) -> dict:
        return {"recipe": self.recipe, "_built": None}

    @property
    def search(self) -> ContrastSearch:
        return self.built()[0]

    def built(self) -> tuple[ContrastSearch, object]:
        if self._built is None:
            self._built = self.recipe()
        return self._built

    def run_chunk(self, texts: Sequence[str], caption_ids: Sequence[str], video_ids: Sequence[str], indices: Sequence[int], docs=None) -> list[dict]:
        """The partial-file entries of one chunk; they depend on the chunk alone (see ContrastSearch.run)."""
        search, nlp = self.built()
        docs = list(docs) if docs is not None else list(nlp.pipe(texts))
        for doc, index in zip(docs, indices):
            doc.user_data["index"] = index  # lets a finder look up per-caption data (the movie)
        outcomes = search.run(docs, dict(zip(indices, caption_ids)), dict(zip(indices, video_ids)), list(indices))
        return [
            {"caption_id": caption_ids[k], "record": o.record.to_json() if o.record else None, "reason": o.reason, "rejected": o.rejected}
            for k, o in enumerate(outcomes)
        ]


def run_contrasts(
    job: Job,
    captions: Captions,
    out: str | Path,
    signature: Signature,
    settings: dict,
    lm: LanguageModel,
    chunk_size: int = 64,
    docs: list | None = None,
    client=None,
) -> tuple[list[ContrastRecord], dict]:
    """Contrasts for every caption, resuming a partial run with the same signature; returns records and
    sidecar. ``docs``: the captions already parsed, in order (else parsed chunk by chunk). With a Dask
    ``client``, each chunk is a task on the cluster.

    Chunks have fixed boundaries (captions ``[k·size, (k+1)·size)``) and a chunk's records depend on
    the chunk alone, so whichever chunks are redone after an interruption, in whatever order, the
    output is byte-identical to an uninterrupted single-process run.
    """
    check_texts(captions)
    kind = job.search.kind
    writer = ResumableJsonl(out, str(signature))
    n = len(captions)
    chunks = [range(start, min(start + chunk_size, n)) for start in range(0, n, chunk_size)]
    todo = [chunk for chunk in chunks if any(captions.caption_ids[i] not in writer.done for i in chunk)]
    if writer.done:
        print(f"resuming {writer.path}: {len(chunks) - len(todo)} of {len(chunks)} chunks done", file=sys.stderr)

    def arguments(chunk: range) -> tuple:
        return ([captions.texts[i] for i in chunk], [captions.caption_ids[i] for i in chunk], [captions.video_ids[i] for i in chunk], list(chunk))

    with writer:
        if client is None:
            for chunk in track(todo, f"{kind} contrasts", total=len(todo)):
                writer.append(job.run_chunk(*arguments(chunk), docs=[docs[i] for i in chunk] if docs is not None else None))
        else:
            from dask.distributed import as_completed

            remote_job = client.scatter(job, broadcast=True)
            futures = [client.submit(Job.run_chunk, remote_job, *arguments(chunk), pure=False) for chunk in todo]
            for future in track(as_completed(futures), f"{kind} contrasts", total=len(futures), enabled=True):
                writer.append(future.result())
                future.release()
        entries = [writer.done[caption_id] for caption_id in captions.caption_ids]
        reasons = Counter(entry["reason"] for entry in entries if entry["reason"])
        if reasons.get("no target") == len(captions):
            writer.partial.unlink(missing_ok=True)
            raise InputError(captions.source, f"no caption has a {kind} target (nothing to contrast)")
        rejected = Counter()
        for entry in entries:
            rejected.update(entry.get("rejected") or {})
        done = [entry["record"] for entry in entries if entry["record"]]
        plausibility = preference(lm, [r["original"] for r in done], [r["contrast"] for r in done])
        sidecar = {
            "signature": str(signature),
            "kind": kind,
            "captions": captions.source,
            "counts": {"captions": len(captions), "records": len(captions) - sum(reasons.values()), **dict(sorted(reasons.items()))},
            "candidates_rejected": dict(sorted(rejected.items())),
            "plausibility": plausibility.to_json(),
            "settings": settings,
        }
        records = writer.finish(captions.caption_ids, sidecar)
    return records, sidecar
