"""The in-memory core of every contrast kind, as TextAttack's ``Augmenter``: a generator is built once
from its settings and turns captions into contrast records, in caption order, with no files::

    from tvrbench.generators import GenderContrasts, VerbContrasts
    from tvrbench.io.captions import read_captions

    gender = GenderContrasts()  # GenderConfig() defaults; models load on first use
    [r.contrast for r in gender.contrasts(["a man is cooking", "a dog runs"])]
    # ['a woman is cooking']
    verb = VerbContrasts()  # the offline pool, ranked by the CMU trigram
    records = verb.contrasts(read_captions("captions.csv"))  # a Captions object, or a list of texts

Captions without a contrast have no record; :meth:`ContrastGenerator.outcomes` tells why (one
:class:`~tvrbench.generators.base.Outcome` per caption). ``gender_contrasts``, ``verb_contrasts``
and ``id_contrasts`` (:mod:`tvrbench.generators.runner`) run the same objects chunk by chunk into a
resumable file with its sidecar, here or on a Dask cluster, and write exactly these records.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence

from tvrbench.errors import InputError
from tvrbench.generators.base import CaptionItem, ContrastSearch, Outcome, SetPolicy, changed_settings, parsed_text
from tvrbench.generators.records import ContrastRecord
from tvrbench.io.captions import Captions
from tvrbench.lm.models import LanguageModel, check_language_model, load_language_model
from tvrbench.signature import Signature, captions_digest


def check_texts(captions: Captions) -> None:
    """Every caption must have text: an empty one is a broken input, not a caption without a target."""
    for caption_id, text in zip(captions.caption_ids, captions.texts):
        if not text.strip():
            raise InputError(captions.source, f"caption {caption_id!r} has empty text")


def as_captions(captions: Captions | Sequence[str]) -> Captions:
    """``captions`` as they are, or a list of texts as captions ``"0"``, ``"1"``, ... with no video id."""
    if isinstance(captions, Captions):
        return captions
    texts = list(captions)
    return Captions([str(k) for k in range(len(texts))], texts, [""] * len(texts))


def contrast_signature(kind: str, captions: Captions, config, libraries: tuple[str, ...], **fields) -> Signature:
    """Kind, inputs (by digest), the settings that differ from the defaults (by name; all of them are in
    the sidecar) and versions."""
    settings = changed_settings(config.model_dump(), type(config)().model_dump(), frozenset(fields))
    return Signature({"kind": kind, "captions": captions_digest(captions), "n": len(captions), "settings": settings, **fields}, libraries)


class ContrastGenerator:
    """One contrast kind built from its settings: :meth:`contrasts` turns captions into records.

    A kind says how to load its spaCy pipeline (``nlp``), how to build its
    :class:`~tvrbench.generators.base.ContrastSearch` and what its signature adds. Models are cached
    properties, loaded on first use in the process that uses them; the object pickles without them,
    so each Dask worker loads its own.

    Captions are searched ``chunk_size`` at a time, as the file runner writes them.
    """

    kind: str
    libraries: tuple[str, ...] = ("spacy",)

    def __init__(self, config, chunk_size: int = 64):
        check_language_model(config.lm)  # a mistyped --lm is said before the captions are parsed, not at the end
        self.config = config
        self.chunk_size = chunk_size

    def __getstate__(self) -> dict:
        loaded = {name for cls in type(self).__mro__ for name, value in vars(cls).items() if isinstance(value, functools.cached_property)}
        return {name: value for name, value in self.__dict__.items() if name not in loaded}

    @functools.cached_property
    def lm(self) -> LanguageModel:
        """The language model of ``config.lm``: how plausible the contrasts read (the sidecar's plausibility)."""
        return load_language_model(self.config.lm)

    def contrasts(self, captions: Captions | Sequence[str]) -> list[ContrastRecord]:
        """The contrast records of ``captions``, in caption order (none for a caption without one)."""
        return [outcome.record for outcome in self.outcomes(captions) if outcome.record is not None]

    def outcomes(self, captions: Captions | Sequence[str]) -> list[Outcome]:
        """One outcome per caption, in order: its record, or the reason it has none."""
        captions = as_captions(captions)
        check_texts(captions)
        items, context = self.prepare(captions)
        job = Job(self, context)
        outcomes = [outcome for chunk in self.chunks(items) for outcome in job.run(chunk)]
        redone = job.finish(items, {o.index: o.record for o in outcomes})
        return [redone.get(o.index, o) for o in outcomes]

    def chunks(self, items: list[CaptionItem]) -> list[list[CaptionItem]]:
        """The items in the chunks they are searched in: ``[k·size, (k+1)·size)``, in memory as in a file."""
        return [items[start : start + self.chunk_size] for start in range(0, len(items), self.chunk_size)]

    def items(self, captions: Captions) -> list[CaptionItem]:
        """One item per caption, unparsed."""
        rows = zip(captions.caption_ids, captions.video_ids, captions.texts)
        return [CaptionItem(index, caption_id, video_id, text) for index, (caption_id, video_id, text) in enumerate(rows)]

    def prepare(self, captions: Captions) -> tuple[list[CaptionItem], object]:
        """The items, and the context the search needs of all the captions together (none here; the
        verb kind's: how the captions use their verbs)."""
        return self.items(captions), None

    def search(self, context) -> ContrastSearch:
        """The kind's recipe: finder, source, constraints, ranker and filters, for captions with this ``context``."""
        raise NotImplementedError

    def set_policy(self) -> SetPolicy | None:
        """What the whole set must satisfy (None: nothing)."""
        return None

    def signature_fields(self, search: ContrastSearch) -> dict:
        """What the signature names after the seed: pipeline, models, files."""
        raise NotImplementedError

    def signature(self, captions: Captions, search: ContrastSearch) -> Signature:
        return contrast_signature(self.kind, captions, self.config, self.libraries, seed=self.config.seed, **self.signature_fields(search))


class Job:
    """A generator and the context of one set of captions: what searches a chunk, in this process or
    on a Dask worker, with any number of threads (the numeric contract: :mod:`tvrbench.numerics`).
    It pickles without its search, which is built again where it lands."""

    def __init__(self, generator: ContrastGenerator, context):
        self.generator = generator
        self.context = context

    def __getstate__(self) -> dict:
        return {"generator": self.generator, "context": self.context}

    @functools.cached_property
    def search(self) -> ContrastSearch:
        return self.generator.search(self.context)

    def run(self, items: Sequence[CaptionItem], search: ContrastSearch | None = None) -> list[Outcome]:
        """Outcomes of one chunk; items that come without their parse are parsed here."""
        docs = iter(self.generator.nlp.pipe([parsed_text(item.text) for item in items if item.doc is None]))
        parsed = [item if item.doc is not None else dataclasses.replace(item, doc=next(docs)) for item in items]
        return (search or self.search).run(parsed)

    def finish(self, items: Sequence[CaptionItem], records: dict[int, ContrastRecord | None]) -> dict[int, Outcome]:
        """New outcomes for the captions the set policy searches again (none without one). It runs once
        every chunk is done, in the process that writes, on what the chunks found: so the records
        depend on the whole set, and a resumed or a Dask run still ends byte-identical."""
        policy = self.generator.set_policy()
        return {} if policy is None else policy.apply(self, items, records)
