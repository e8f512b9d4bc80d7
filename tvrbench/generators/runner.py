"""Run a :class:`~tvrbench.generators.base.ContrastSearch` over a captions file, chunk by chunk.

Each chunk is parsed with spaCy, searched, and appended to the resumable partial file; the final
JSONL and its sidecar (signature, counts, and how a language model reads the contrasts beside their
originals) appear only when every caption is done.
"""

from __future__ import annotations

import json
from collections import Counter
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


def run_contrasts(
    search: ContrastSearch,
    captions: Captions,
    nlp,
    out: str | Path,
    signature: Signature,
    settings: dict,
    lm: LanguageModel,
    chunk_size: int = 64,
    docs: list | None = None,
) -> tuple[list[ContrastRecord], dict]:
    """Contrasts for every caption, resuming a partial run with the same signature; returns records and
    sidecar. ``docs``: the captions already parsed by ``nlp``, in order (else parsed chunk by chunk)."""
    check_texts(captions)
    writer = ResumableJsonl(out, str(signature))
    remaining = [i for i, caption_id in enumerate(captions.caption_ids) if caption_id not in writer.done]
    chunks = [remaining[start : start + chunk_size] for start in range(0, len(remaining), chunk_size)]
    with writer:
        for chunk in track(chunks, f"{search.kind} contrasts", total=len(chunks)):
            chunk_docs = [docs[i] for i in chunk] if docs is not None else list(nlp.pipe([captions.texts[i] for i in chunk]))
            for doc, index in zip(chunk_docs, chunk):
                doc.user_data["index"] = index  # lets a finder look up per-caption data (the movie)
            outcomes = search.run(chunk_docs, captions.caption_ids, captions.video_ids, chunk)
            writer.append(
                {
                    "caption_id": captions.caption_ids[o.index],
                    "record": o.record.to_json() if o.record else None,
                    "reason": o.reason,
                    "rejected": o.rejected,
                }
                for o in outcomes
            )
        entries = [writer.done[caption_id] for caption_id in captions.caption_ids]
        reasons = Counter(entry["reason"] for entry in entries if entry["reason"])
        if reasons.get("no target") == len(captions):
            writer.partial.unlink(missing_ok=True)
            raise InputError(captions.source, f"no caption has a {search.kind} target (nothing to contrast)")
        rejected = Counter()
        for entry in entries:
            rejected.update(entry.get("rejected") or {})
        done = [entry["record"] for entry in entries if entry["record"]]
        plausibility = preference(lm, [r["original"] for r in done], [r["contrast"] for r in done])
        sidecar = {
            "signature": str(signature),
            "kind": search.kind,
            "captions": captions.source,
            "counts": {"captions": len(captions), "records": len(captions) - sum(reasons.values()), **dict(sorted(reasons.items()))},
            "candidates_rejected": dict(sorted(rejected.items())),
            "plausibility": plausibility.to_json(),
            "settings": settings,
        }
        records = writer.finish(captions.caption_ids, sidecar)
    return records, sidecar
