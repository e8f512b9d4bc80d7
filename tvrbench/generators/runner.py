"""Run a :class:`~tvrbench.generators.core.ContrastGenerator` over a captions file, chunk by chunk.

Each chunk is searched as the in-memory core searches it (here, or as a task on a Dask cluster) and
appended to the resumable partial file; the final JSONL and its sidecar (signature, counts, how a
language model reads the contrasts beside their originals, and the text-only audit of the pairs:
:func:`tvrbench.generators.audit.audit_pairs`) appear only when every caption is done.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.generators.audit import PairAudit, audit_pairs, summary_cells
from tvrbench.generators.config import GenderConfig, PersonIdConfig, VerbConfig
from tvrbench.generators.core import ContrastGenerator, Job, check_texts
from tvrbench.generators.edits import EDIT_KINDS
from tvrbench.generators.gender import GenderContrasts
from tvrbench.generators.person_id import PersonIdContrasts
from tvrbench.generators.records import ContrastRecord, ResumableJsonl
from tvrbench.generators.verb.recipe import VerbContrasts
from tvrbench.io.captions import Captions
from tvrbench.lm.models import Preference
from tvrbench.progress import track
from tvrbench.results import Table, TablesOfJson
from tvrbench.signature import Signature


def contrast_run_tables(payload: dict) -> list[Table]:
    """What became of the captions, then how a language model and text alone read the contrasts."""
    rows = [[name, f"{count:,}"] for name, count in payload["counts"].items()]
    rows += [[f"candidates rejected: {name}", f"{count:,}"] for name, count in payload["candidates_rejected"].items()]
    rows += [[name, cell] for name, cell in summary_cells(payload["audit"]).items()]
    return [Table(f"{payload['kind']} contrast set", ["figure", "value"], rows)]


@dataclass(frozen=True)
class ContrastRun(TablesOfJson):
    """One contrast run over a captions file: what it did with each caption and how its contrasts read.
    Its JSON is the sidecar written beside the records (``OUT.json``)."""

    signature: Signature
    kind: str
    captions: str | None
    counts: dict[str, int]
    candidates_rejected: dict[str, int]
    audit: PairAudit
    settings: dict
    tables_of = staticmethod(contrast_run_tables)

    @property
    def plausibility(self) -> Preference:
        """How often a language model prefers the original to its contrast (the audit's LM preference)."""
        return self.audit.lm_preference

    def to_json(self) -> dict:
        return {
            "signature": str(self.signature), "kind": self.kind, "captions": self.captions, "counts": self.counts,
            "candidates_rejected": self.candidates_rejected, "plausibility": self.plausibility.to_json(),
            "audit": self.audit.to_json(), "settings": self.settings,
        }  # fmt: skip


def entry_of(item, outcome) -> dict:
    """One caption's entry in the partial file."""
    record = outcome.record.to_json() if outcome.record else None
    return {"caption_id": item.caption_id, "record": record, "reason": outcome.reason, "rejected": outcome.rejected}


def chunk_entries(job: Job, items: Sequence) -> list[dict]:
    """The partial-file entries of one chunk; they depend on the chunk alone (see ContrastSearch.run)."""
    return [entry_of(item, outcome) for item, outcome in zip(items, job.run(items))]


def run_contrasts(generator: ContrastGenerator, captions: Captions, out: str | Path, client=None) -> tuple[list[ContrastRecord], ContrastRun]:
    """``generator``'s contrasts of every caption written to ``out``, resuming a partial run with the
    same signature; returns the records and the run (its JSON is the sidecar: the records and their
    sidecar are written together, so a kill never leaves one without the other). With a Dask ``client``, each chunk is a task on the
    cluster (its captions sent unparsed: the worker parses them).

    Chunks have fixed boundaries (:meth:`~tvrbench.generators.core.ContrastGenerator.chunks`) and a
    chunk's records depend on the chunk alone, so whichever chunks are redone after an interruption, in whatever order, the
    output is byte-identical to an uninterrupted single-process run.
    """
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

    def records() -> str:
        return f"{sum(entry['record'] is not None for entry in writer.done.values())} records"

    shown = {"description": f"{kind} contrasts", "total": sum(map(len, todo)), "unit": "captions", "note": records}
    with writer:
        if client is None:
            for chunk in track(todo, size=len, **shown):
                writer.append(chunk_entries(job, chunk))
        else:
            from dask.distributed import as_completed

            remote_job = client.scatter(job, broadcast=True)
            futures = {
                client.submit(chunk_entries, remote_job, [replace(item, doc=None) for item in chunk], pure=False): len(chunk) for chunk in todo
            }
            for future in track(as_completed(futures), size=futures.get, enabled=True, **shown):
                writer.append(future.result())
                future.release()
        current = {item.index: writer.done[item.caption_id]["record"] for item in items}
        records = {index: ContrastRecord(**record) if record else None for index, record in current.items()}
        for index, outcome in job.finish(items, records).items():  # the set policy (the verb kind: the cap on one substitute)
            writer.done[items[index].caption_id] = entry_of(items[index], outcome)
        entries = [writer.done[caption_id] for caption_id in captions.caption_ids]
        reasons = Counter(entry["reason"] for entry in entries if entry["reason"])
        if reasons.get("no target") == len(captions):
            writer.partial.unlink(missing_ok=True)
            raise InputError(captions.source, f"no caption has a target of the {kind} kind (nothing to contrast)")
        rejected = Counter()
        for entry in entries:
            rejected.update(entry.get("rejected") or {})
        done = [entry["record"] for entry in entries if entry["record"]]
        measured = [r["filters"].get("reads-as-real", {}).get("per_token") for r in done]  # the word-edit kinds' judge measured them
        measured = measured if done and all(measured) else None
        audit = audit_pairs([r["original"] for r in done], [r["contrast"] for r in done], generator.lm, generator.config.seed, measured)
        counts = {"captions": len(captions), "records": len(captions) - sum(reasons.values()), **dict(sorted(reasons.items()))}
        run = ContrastRun(signature, kind, captions.source, counts, dict(sorted(rejected.items())), audit, generator.config.model_dump())
        records = writer.finish(captions.caption_ids, run.to_json())
    return records, run


def gender_contrasts(captions: Captions, out: str | Path, config: GenderConfig = GenderConfig(), client=None):
    """One gender contrast per caption with a gendered noun of the table; returns (records, ContrastRun).
    ``client``: a Dask client to run the chunks on (:func:`tvrbench.distributed.dask_client`)."""
    return run_contrasts(GenderContrasts(config), captions, out, client)


def verb_contrasts(captions: Captions, out: str | Path, config: VerbConfig = VerbConfig(), train_captions: Captions | None = None, client=None):
    """Verb-phrase contrasts (an offline pool, or T5): the verbs that fit, drawn in a seeded order and
    judged by a language model, through Park et al.'s filters; (records, ContrastRun). ``client``: a
    Dask client to run the chunks on."""
    check_texts(captions)  # before the training captions are parsed
    return run_contrasts(VerbContrasts(config, train_captions), captions, out, client)


def edit_contrasts(kind: str, captions: Captions, out: str | Path, config=None, client=None):
    """Contrasts of a word-edit kind (``object``, ``attribute``, ... :data:`~tvrbench.generators.edits.EDIT_KINDS`),
    with ``config`` its settings (the defaults when None); (records, ContrastRun). ``client``: a Dask
    client to run the chunks on."""
    found = EDIT_KINDS[kind]
    generator = found.generator_class()(config if config is not None else found.settings_class()())
    return run_contrasts(generator, captions, out, client)


def id_contrasts(
    captions: Captions,
    characters_path: str | Path,
    out: str | Path,
    config: PersonIdConfig = PersonIdConfig(),
    train_captions: Captions | None = None,
    client=None,
):
    """LSMDC-IDs person swaps; with training captions, records say whether the new name is more frequent.
    ``client``: a Dask client to run the chunks on."""
    return run_contrasts(PersonIdContrasts(characters_path, config, train_captions), captions, out, client)
