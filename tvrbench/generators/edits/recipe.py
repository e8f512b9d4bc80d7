"""What every word-edit kind is built on: a kind gives its targets, its candidate source and its cheap
constraints (:class:`Recipe`); :class:`EditContrasts` adds what they share and puts the search together:

* a first pass over every target (the source and the constraints, no model), which counts how often
  each word is an original and would be a substitute: the draw's prior (:func:`~tvrbench.generators.ranker.substitute_prior`);
* the seeded draw (:class:`~tvrbench.generators.ranker.SeededDraw`), so substitutes come back about as
  often as they leave and no word gives a contrast away;
* the language model's judgement of the candidates the draw puts first (:class:`~tvrbench.generators.edits.judge.ReadsAsWell`),
  a block at a time: the model runs only on candidates that passed the cheap constraints;
* the set policy: no substitute in more than ``choice.max_share`` of the records (:class:`~tvrbench.generators.set_policy.SubstituteCap`).

A target's ``label`` is its original word as the substitutes are named (the prior counts it); a
candidate's ``details["substitute"]`` names what it brings in.
"""

from __future__ import annotations

import functools
import weakref
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from tvrbench.generators.base import CandidateSource, CaptionItem, Constraint, ContrastSearch, Request, TargetFinder, described, parsed_text
from tvrbench.generators.config import EditConfig
from tvrbench.generators.core import ContrastGenerator
from tvrbench.generators.edits.judge import EditScores, ReadsAsWell
from tvrbench.generators.edits.lexicon import WordNetFacts
from tvrbench.generators.ranker import SeededDraw, substitute_prior
from tvrbench.generators.set_policy import SubstituteCap
from tvrbench.io.captions import Captions
from tvrbench.lm.models import LanguageModel, load_language_model
from tvrbench.progress import track
from tvrbench.resources import spacy_pipeline, spacy_pipeline_id

PREPARE_BATCH = 256  # targets whose candidates are made together in the first pass


def substitute_of(candidate) -> str:
    """What a candidate or a record brings in, as the prior and the cap count it."""
    return candidate.details["substitute"]


@dataclass(frozen=True)
class Recipe:
    """A kind's own parts: which words may change, what they may become, and the cheap checks (no model)
    every candidate must pass."""

    finder: TargetFinder
    source: CandidateSource
    constraints: Sequence[Constraint] = ()


@dataclass(eq=False)
class Collection:
    """What the search knows of the whole caption set: how often its captions use each word (lemma and
    part of speech: ``("guitar", "NOUN")``), which a source may draw on, and each substitute's log draw
    weight (the prior, filled by the first pass)."""

    words: Counter = field(default_factory=Counter)
    prior: dict[str, float] = field(default_factory=dict)

    @classmethod
    def of(cls, docs) -> "Collection":
        return cls(Counter((token.lemma_.lower(), token.pos_) for doc in docs for token in doc if token.is_alpha))


class EditContrasts(ContrastGenerator):
    """A word-edit kind: ``Kind(config).contrasts(captions)``. A subclass sets ``kind`` and builds its
    :class:`Recipe` (:meth:`recipe`); models load on first use, in the process that uses them."""

    libraries = ("spacy", "nltk", "lemminflect", "inflect", "transformers", "torch", "pocketsphinx")

    def __init__(self, config: EditConfig):
        super().__init__(config, config.chunk_size)

    @functools.cached_property
    def nlp(self):
        return spacy_pipeline(self.config.spacy_model, disable=("ner",))  # the parser tells heads, subjects and objects

    @functools.cached_property
    def lm(self) -> LanguageModel:
        """Judges the candidates, in batches of ``lm_batch_size``."""
        return load_language_model(self.config.lm, self.config.lm_batch_size, self.config.device)

    @functools.cached_property
    def facts(self) -> WordNetFacts:
        """WordNet, for the kinds that ask it (a noun's class and kind, related words)."""
        return WordNetFacts()

    def recipe(self, collection: Collection) -> Recipe:
        """The kind's targets, source and constraints, for the captions of ``collection``."""
        raise NotImplementedError

    @functools.cached_property
    def searches(self) -> weakref.WeakKeyDictionary:
        """The search of each collection, so the first pass and the search share its eligible candidates."""
        return weakref.WeakKeyDictionary()

    def search(self, collection: Collection) -> ContrastSearch:
        if collection not in self.searches:
            recipe, choice = self.recipe(collection), self.config.choice
            self.searches[collection] = ContrastSearch(
                self.kind,
                recipe.finder,
                recipe.source,
                recipe.constraints,
                ranker=SeededDraw(collection.prior, substitute_of, choice),
                filters=[ReadsAsWell(EditScores(self.lm), choice)],
                seed=self.config.seed,
                block=choice.judged_at_once,
                max_block=choice.judged_at_once,
                max_tried=choice.judged,
            )
        return self.searches[collection]

    def prepare(self, captions: Captions) -> tuple[list[CaptionItem], Collection]:
        """The items parsed, and the draw's prior: one pass of the source and the constraints over every
        target, whose eligible candidates the search then reuses."""
        docs = list(self.nlp.pipe(map(parsed_text, captions.texts), batch_size=256))
        items = [replace(item, doc=doc) for item, doc in zip(self.items(captions), docs)]
        collection = Collection.of(docs)
        search = self.search(collection)
        originals: Counter = Counter()
        requests = []
        for item in items:
            targets = search.finder.find(item) if item.doc.text else []
            originals.update({t.label: 1 / len(targets) for t in targets})
            requests += [Request(item, target, targets, None) for target in targets]
        found = []
        batches = [requests[start : start + PREPARE_BATCH] for start in range(0, len(requests), PREPARE_BATCH)]
        for batch in track(batches, f"{self.kind} candidates", total=len(requests), size=len, unit="targets"):
            found += search.eligible(batch)
        eligible = [(len(r.targets), [substitute_of(c) for c in candidates]) for r, (candidates, _) in zip(requests, found)]
        collection.prior.update(substitute_prior(originals, eligible))
        return items, collection

    def set_policy(self) -> SubstituteCap:
        return SubstituteCap(self.config.choice.max_share, substitute_of, self.config.seed)

    def signature_fields(self, search: ContrastSearch) -> dict:
        return {
            "pipeline": spacy_pipeline_id(self.nlp),
            "lm": self.lm.name,
            "source": described(search.source),
            "constraints": [described(c) for c in search.constraints],
            "ranker": described(search.ranker),
            "filters": [described(c) for c in search.filters],
            "set": self.set_policy().name,
        }
