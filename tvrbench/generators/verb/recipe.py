"""Verb-phrase contrasts, as one recipe: what a verb may become, what it must satisfy, in which order the
candidates are tried and what the whole set must satisfy (:func:`verb_search`, the only place the parts
are put together: adding a source, a constraint or a filter is a new part and one line here).

* targets: the verb phrases that head a clause (:mod:`~tvrbench.generators.verb.phrases`);
* source (``generator``): the offline pool (:mod:`~tvrbench.generators.verb.pool`), which merges the
  sources listed in ``wordnet.relations`` (:data:`RELATIONS`, :mod:`~tvrbench.generators.verb.sources`), or T5;
* constraints, on every candidate: the new verb fits the original's arguments, brings in no
  profanity, is common in the form shown, is not a near-synonym (:mod:`~tvrbench.generators.verb.constraints`);
* ranker: a seeded draw that spreads the substitutes (:mod:`~tvrbench.generators.ranker`);
* filters, in that order until one candidate passes them all: the caption reads best to a language
  model among the first candidates of the draw, the meaning changed and Park et al.'s perplexity
  rule, a verb is still there (:mod:`~tvrbench.generators.verb.filters`);
* set policy: no new verb in more than 2 % of the records (:class:`~tvrbench.generators.set_policy.SubstituteCap`).

What several parts read of a candidate (its parse, the language model's scores, the verbs' change)
is measured once (:mod:`~tvrbench.generators.verb.measures`); no part reads another's verdict. Why
each part is there, and what it did to the contrasts a reader sees, is measured in docs/contrast.md.
"""

from __future__ import annotations

import functools
import weakref
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from tvrbench.generators.base import CaptionItem, ContrastSearch, Request, described, parsed_text
from tvrbench.generators.config import VerbConfig
from tvrbench.generators.core import ContrastGenerator
from tvrbench.generators.ranker import SeededDraw, substitute_prior
from tvrbench.generators.set_policy import Excluded, SubstituteCap
from tvrbench.generators.verb.constraints import FitsFrame, FormFrequency, VerbChanged, VerbFrequency
from tvrbench.generators.verb.counterfit import verb_vectors
from tvrbench.generators.verb.evidence import BIGRAM_WORDS, Usage, verbs_before, wordnet_usage
from tvrbench.generators.verb.filters import HasVerb, MeaningChanged, Perplexity, ReadsAsReal
from tvrbench.generators.verb.fit import ArgumentFit, FrameFits
from tvrbench.generators.verb.frames import NounClasses
from tvrbench.generators.verb.lexicon import LexiconSettings, VerbLexicon, verb_lexicon
from tvrbench.generators.verb.measures import CandidateParses, Embeddings, SpanScores, TrainingFrequency, UnigramFrequency, VerbChanges
from tvrbench.generators.verb.phrases import VerbPhrases
from tvrbench.generators.verb.pool import CaptionVerbs, VerbPool, new_lemma, profane_words
from tvrbench.generators.verb.sources import AttestedVerbs, ExpectedVerbs, ListedVerbs, WordNetRelation
from tvrbench.generators.verb.t5 import T5Verbs
from tvrbench.io.captions import Captions
from tvrbench.lm.models import LanguageModel, load_language_model
from tvrbench.lm.primer import Primers
from tvrbench.progress import track
from tvrbench.resources import sentence_model, sentence_model_name, spacy_pipeline, spacy_pipeline_id
from tvrbench.signature import text_digest

PREPARE_BATCH = 64  # targets whose candidates are made together (the LM proposes for them in one pass)

# Each name of ``wordnet.relations`` (the settings' ``Relation``) and the source it builds, given the
# generator's models and the caption collection.
RELATIONS: dict[str, Callable[["VerbContrasts", CaptionVerbs], object]] = {
    "antonym": lambda models, collection: WordNetRelation("antonym", models.lexicon.antonyms),
    "sister": lambda models, collection: WordNetRelation("sister", models.lexicon.sisters),
    "domain": lambda models, collection: WordNetRelation("domain", models.lexicon.domain_verbs),
    "captions": lambda models, collection: ListedVerbs(
        "captions", collection.common(models.config.wordnet.min_caption_count, models.config.wordnet.caption_verbs)
    ),
    "frequent": lambda models, collection: ListedVerbs("frequent", models.frequent_verbs),
    "attested": lambda models, collection: AttestedVerbs(models.seen_with(collection)),
    "lm": lambda models, collection: ExpectedVerbs(
        functools.partial(models.lm.next_words, top=models.config.wordnet.expected_tokens), models.lexicon
    ),
}

# Each ``generator`` (``--generator``) and the candidate source it builds.
GENERATORS: dict[str, Callable[["VerbContrasts", CaptionVerbs], object]] = {
    "wordnet": lambda models, collection: VerbPool(
        [RELATIONS[name](models, collection) for name in models.config.wordnet.relations], models.lexicon, models.config.wordnet
    ),
    "t5": lambda models, collection: models.t5,
}


def verb_search(models: "VerbContrasts", collection: CaptionVerbs) -> ContrastSearch:
    """The verb recipe for captions that use their verbs as ``collection`` tells."""
    config = models.config
    frame_fits = FrameFits(models.argument_fit(collection), models.wordnet_usage[0], new_lemma)
    parses = CandidateParses(models.nlp)
    changes = VerbChanges(parses, verb_vectors(), models.lexicon)
    spans = SpanScores(models.lm, collection.primers)
    embeddings = Embeddings(sentence_model(config.meaning.embedding_model, config.device))
    return ContrastSearch(
        "verb",
        VerbPhrases(models.nlp),
        GENERATORS[config.generator](models, collection),
        constraints=[
            *([FitsFrame(frame_fits)] if config.argument_fit.enabled else []),
            Excluded(profane_words() - set(collection.counts), new_lemma, "profanity"),
            VerbFrequency(parses, models.frequency),
            FormFrequency(frozenset(collection.forms), config.frequency),
            VerbChanged(changes, config.meaning),
        ],
        ranker=SeededDraw(collection.prior, new_lemma, config.choice, frame_fits.strengths if config.argument_fit.enabled else None),
        filters=[
            ReadsAsReal(spans, config.choice),
            MeaningChanged(changes, embeddings, config.meaning),
            Perplexity(spans, config.perplexity),
            HasVerb(parses),
        ],
        seed=config.seed,
        block=config.choice.judged_at_once,  # the language model judges a target's candidates a block at a time
        max_block=config.choice.judged_at_once,
        max_tried=config.choice.judged,
    )


class VerbContrasts(ContrastGenerator):
    """Verb contrasts: ``VerbContrasts(config, train_captions).contrasts(captions)``.

    The pool, the argument fit and the draw read how the captions being contrasted (and the training
    captions) use their verbs, so the search is assembled per caption collection from the models,
    loaded once. The frequency filter counts the new verbs in the training captions when given (Park
    et al.), else looks them up in the n-gram LM's unigram table; the signature fields say which.
    """

    kind = "verb"
    libraries = ("spacy", "nltk", "lemminflect", "sentence-transformers", "transformers", "torch", "pocketsphinx")

    def __init__(self, config: VerbConfig = VerbConfig(), train_captions: Captions | None = None):
        super().__init__(config, config.chunk_size)
        self.train = (
            CaptionVerbs(self.nlp.pipe(map(parsed_text, train_captions.texts), batch_size=256), self.wordnet_usage[0])
            if train_captions is not None
            else None
        )
        self.train_digest = text_digest(train_captions.texts) if train_captions is not None else None

    @functools.cached_property
    def nlp(self):
        return spacy_pipeline(self.config.spacy_model, disable=("ner",))  # the parser tells clause heads and objects

    @functools.cached_property
    def lm(self) -> LanguageModel:
        """Judges each candidate in its caption and runs the perplexity filter, in batches of ``lm_batch_size``."""
        return load_language_model(self.config.lm, self.config.lm_batch_size, self.config.device)

    @functools.cached_property
    def unigrams(self) -> UnigramFrequency:
        return UnigramFrequency(load_language_model("ngram"), self.config.frequency.min_unigram_log10)

    @functools.cached_property
    def wordnet_usage(self) -> tuple[NounClasses, Usage]:
        """Noun classes and the verb–argument table of WordNet's example sentences (cached on disk)."""
        return wordnet_usage(self.config.spacy_model)

    @functools.cached_property
    def lexicon(self) -> VerbLexicon:
        return verb_lexicon(LexiconSettings.of(self.config.wordnet))

    @functools.cached_property
    def frequent_verbs(self) -> list[str]:
        """The most common WordNet verbs by the unigram table (the "frequent" source)."""
        by_use = sorted(self.lexicon.one_word_verbs(), key=lambda name: (-self.unigrams.verb_use(name), name))
        return by_use[: self.config.wordnet.frequent_verbs]

    @functools.cached_property
    def t5(self) -> T5Verbs:
        return T5Verbs(self.config.t5, device=self.config.device)

    @functools.cached_property
    def frequency(self) -> TrainingFrequency | UnigramFrequency:
        return TrainingFrequency(self.train.counts, self.config.frequency.min_train_count) if self.train is not None else self.unigrams

    @functools.cached_property
    def usages(self) -> weakref.WeakKeyDictionary:
        return weakref.WeakKeyDictionary()

    def usage(self, collection: CaptionVerbs) -> Usage:
        """WordNet's examples' verb–argument table with the collection's own (merged once: the fit and
        the attested verbs read it)."""
        if collection not in self.usages:
            self.usages[collection] = self.wordnet_usage[1].merged(collection.usage)
        return self.usages[collection]

    def argument_fit(self, collection: CaptionVerbs) -> ArgumentFit:
        return ArgumentFit(self.lexicon, self.usage(collection), self.wordnet_usage[0], self.config.argument_fit)

    def seen_with(self, collection: CaptionVerbs) -> dict[str, list[str]]:
        """``o:NOUN`` / ``p:WORD`` → the verbs texts show with that object or preposition: the usage
        table's, and the WordNet verbs before the preposition in a common Web bigram ("bragging about")."""
        seen_with = self.usage(collection).verbs_seen_with()
        for word in BIGRAM_WORDS:
            before = (lemma for lemma in verbs_before(word) if self.lexicon.known(lemma))
            seen_with[f"p:{word}"] = sorted({*seen_with.get(f"p:{word}", ()), *before})
        return seen_with

    def prepare(self, captions: Captions) -> tuple[list[CaptionItem], CaptionVerbs]:
        """The items parsed, and how these captions and the training captions use their verbs, with
        each verb's draw prior (:func:`~tvrbench.generators.ranker.substitute_prior`): one pass of
        the source and the constraints over every target, which the search then reuses."""
        docs = list(self.nlp.pipe(map(parsed_text, captions.texts), batch_size=256))
        items = [replace(item, doc=doc) for item, doc in zip(self.items(captions), docs)]
        classes = self.wordnet_usage[0]
        collection = self.train.with_docs(docs, classes) if self.train is not None else CaptionVerbs(docs, classes)
        collection.primers = Primers.draw(captions.texts, captions.video_ids, self.config.choice.primer, self.config.seed)
        search = self.search(collection)
        originals: Counter = Counter()
        requests = []
        for item in items:
            targets = search.finder.find(item)
            originals.update({item.doc[t.start].lemma_.lower(): 1 / len(targets) for t in targets})
            requests += [Request(item, target, targets, None) for target in targets]
        found = []
        batches = [requests[start : start + PREPARE_BATCH] for start in range(0, len(requests), PREPARE_BATCH)]
        for batch in track(batches, "verb candidates", total=len(requests), size=len, unit="targets"):
            found += search.eligible(batch)
        eligible = [(len(r.targets), [new_lemma(c) for c in candidates]) for r, (candidates, _) in zip(requests, found)]
        collection.prior.update(substitute_prior(originals, eligible))
        return items, collection

    @functools.cached_property
    def searches(self) -> weakref.WeakKeyDictionary:
        """The search built for each collection, so the prior's pass and the search share its eligible
        candidates (not pickled: a Dask worker builds its own)."""
        return weakref.WeakKeyDictionary()

    def search(self, collection: CaptionVerbs) -> ContrastSearch:
        if collection not in self.searches:
            self.searches[collection] = verb_search(self, collection)
        return self.searches[collection]

    def set_policy(self) -> SubstituteCap:
        return SubstituteCap(self.config.choice.max_share, new_lemma, self.config.seed)

    def signature_fields(self, search: ContrastSearch) -> dict:
        fields = {
            "pipeline": spacy_pipeline_id(self.nlp),
            "generator": described(search.source),
            "lm": self.lm.name,
            "constraints": [described(c) for c in search.constraints],
            "ranker": described(search.ranker),
            "filters": [described(c) for c in search.filters],
            "set": self.set_policy().name,
            "frequency": self.frequency.name,
            "verb_vectors": verb_vectors().name,
        }
        fields |= {"preset": self.config.preset} if self.config.preset else {}
        if self.config.choice.primer:  # the captions the judge read first ("none": the collection had no other video)
            fields["primer"] = next(c for c in search.filters if isinstance(c, ReadsAsReal)).spans.primers.name
        encoder = sentence_model_name(self.config.meaning.embedding_model, self.config.device)  # named when outside the numeric contract
        fields |= {"encoder": encoder} if encoder != self.config.meaning.embedding_model else {}
        return fields | ({"train": self.train_digest} if self.train_digest is not None else {})
