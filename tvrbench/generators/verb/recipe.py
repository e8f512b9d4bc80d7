"""Verb-phrase contrasts, as one recipe: what a verb may become, what it must satisfy, in which order the
candidates are tried and what the whole set must satisfy (:func:`verb_search`, the only place they are
wired together: adding a constraint or swapping the source is a line there).

* targets: the verb phrases that head a clause (:mod:`~tvrbench.generators.verb.phrases`);
* source: the offline pool of WordNet and caption verbs (:mod:`~tvrbench.generators.verb.pool`), or T5;
* constraints, on every candidate: the new verb fits the original's arguments
  (:mod:`~tvrbench.generators.verb.fit`), brings in no profanity, is common, is not a near-synonym;
* ranker: a seeded draw that spreads the substitutes (:mod:`~tvrbench.generators.verb.choice`);
* filters, in that order until one candidate passes them all: the caption reads best to a language
  model among the first candidates of the draw (:mod:`~tvrbench.generators.verb.selection`), the
  meaning changed and Park et al.'s perplexity rule, a verb is still there
  (:mod:`~tvrbench.generators.verb.filters`);
* set policy: no new verb in more than 2 % of the records (:class:`~tvrbench.generators.core.SubstituteCap`).

Why each part is there, and what it did to the contrasts a reader sees, is measured in docs/contrast.md.
"""

from __future__ import annotations

import functools
import weakref
from collections import Counter
from dataclasses import replace

from tvrbench.generators.base import CaptionItem, ContrastSearch, Request, parsed_text
from tvrbench.generators.config import VerbConfig
from tvrbench.generators.core import ContrastGenerator, Excluded, SubstituteCap
from tvrbench.generators.verb.choice import SeededDraw, substitute_prior
from tvrbench.generators.verb.evidence import BIGRAM_WORDS, Usage
from tvrbench.generators.verb.fit import ArgumentFit, FitsFrame
from tvrbench.generators.verb.frames import NounClasses
from tvrbench.generators.verb.lexicon import LexiconSettings, VerbLexicon, verb_lexicon
from tvrbench.generators.verb.phrases import VerbPhrases
from tvrbench.generators.verb.pool import CaptionVerbs, WordNetVerbs, new_lemma, profane_words
from tvrbench.generators.verb.selection import ReadsAsReal, SpanScores
from tvrbench.io.captions import Captions
from tvrbench.lm.models import LanguageModel, load_language_model
from tvrbench.progress import track
from tvrbench.signature import text_digest

PREPARE_BATCH = 64  # targets whose candidates are made together (the LM proposes for them in one pass)


def verb_search(models: "VerbContrasts", collection: CaptionVerbs) -> ContrastSearch:
    """The verb recipe for captions that use their verbs as ``collection`` tells."""
    from tvrbench.generators.verb import filters
    from tvrbench.generators.verb.counterfit import verb_vectors
    from tvrbench.resources import sentence_model

    config, pool_config = models.config, models.config.wordnet
    classes, usage = models.wordnet_usage
    usage = usage.merged(collection.usage)
    fit = ArgumentFit(models.lexicon, usage, classes, config.argument_fit)
    seen_with = usage.verbs_seen_with()
    for word in BIGRAM_WORDS:  # and the Web's "verb + preposition"
        seen_with[f"p:{word}"] = sorted({*seen_with.get(f"p:{word}", ()), *fit.verbs_before(word)})
    pool = WordNetVerbs(pool_config, models.lexicon, collection.common(pool_config.min_caption_count, pool_config.caption_verbs),
                        models.frequent_verbs, seen_with, functools.partial(models.lm.next_words, top=pool_config.expected_tokens))  # fmt: skip
    parses = filters.CandidateParses(models.nlp)
    spans = SpanScores(models.lm)
    fitting = [FitsFrame(fit, classes, new_lemma)] if config.argument_fit.enabled else []
    return ContrastSearch(
        "verb",
        VerbPhrases(models.nlp),
        models.t5 if config.generator == "t5" else pool,
        constraints=[
            *fitting,
            Excluded(profane_words() - set(collection.counts), new_lemma, "profanity"),
            filters.VerbFrequency(parses, models.frequency),
            filters.FormFrequency(frozenset(collection.forms), config.frequency.min_form_log10),
            filters.VerbChanged(parses, verb_vectors(), pool, config.meaning),
        ],
        ranker=SeededDraw(collection.prior, new_lemma, config.choice.association_weight, config.choice.spread),
        filters=[
            ReadsAsReal(spans, config.choice.max_behind_best, config.choice.max_loss),
            filters.MeaningChanged(parses, filters.Embeddings(sentence_model(config.meaning.embedding_model, config.device)), config.meaning),
            filters.Perplexity(spans, config.perplexity),
            filters.HasVerb(parses),
        ],
        seed=config.seed,
        block=config.choice.judged_at_once,  # the language model judges a target's candidates a block at a time
        max_block=config.choice.judged_at_once,
        max_tried=config.choice.judged,
    )  # fmt: skip


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
        from tvrbench.resources import spacy_pipeline

        return spacy_pipeline(self.config.spacy_model, disable=("ner",))  # the parser tells clause heads and objects

    @functools.cached_property
    def lm(self) -> LanguageModel:
        """Judges each candidate in its caption and runs the perplexity filter, in batches of ``lm_batch_size``."""
        return load_language_model(self.config.lm, self.config.lm_batch_size, self.config.device)

    @functools.cached_property
    def unigrams(self):
        from tvrbench.generators.verb.filters import UnigramFrequency

        return UnigramFrequency(load_language_model("ngram"), self.config.frequency.min_unigram_log10)

    @functools.cached_property
    def wordnet_usage(self) -> tuple[NounClasses, Usage]:
        """Noun classes and the verb–argument table of WordNet's example sentences (cached on disk)."""
        from tvrbench.generators.verb.evidence import wordnet_usage

        return wordnet_usage(self.config.spacy_model)

    @functools.cached_property
    def lexicon(self) -> VerbLexicon:
        return verb_lexicon(LexiconSettings.of(self.config.wordnet))

    @functools.cached_property
    def frequent_verbs(self) -> list[str]:
        """The pool's most common WordNet verbs by the unigram table (when the pool has them)."""
        pool = self.config.wordnet
        if "frequent" not in pool.relations:
            return []
        return sorted(self.lexicon.one_word_verbs(), key=lambda name: (-self.unigrams.verb_use(name), name))[: pool.frequent_verbs]

    @functools.cached_property
    def t5(self):
        from tvrbench.generators.verb.t5 import T5Verbs

        return T5Verbs(self.config.t5, device=self.config.device)

    @functools.cached_property
    def frequency(self):
        from tvrbench.generators.verb.filters import TrainingFrequency

        return TrainingFrequency(self.train.counts, self.config.frequency.min_train_count) if self.train is not None else self.unigrams

    def prepare(self, captions: Captions) -> tuple[list[CaptionItem], CaptionVerbs]:
        """The items parsed, and how these captions and the training captions use their verbs, with
        each verb's draw prior (:func:`~tvrbench.generators.verb.choice.substitute_prior`): one pass of
        the source and the constraints over every target, which the search then reuses."""
        docs = list(self.nlp.pipe(map(parsed_text, captions.texts), batch_size=256))
        items = [replace(item, doc=doc) for item, doc in zip(self.items(captions), docs)]
        classes = self.wordnet_usage[0]
        collection = self.train.with_docs(docs, classes) if self.train is not None else CaptionVerbs(docs, classes)
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
        from tvrbench.generators.verb.counterfit import verb_vectors
        from tvrbench.resources import sentence_model_name, spacy_pipeline_id

        fields = {
            "pipeline": spacy_pipeline_id(self.nlp),
            "generator": search.source.name,
            "lm": self.lm.name,
            "constraints": [c.name for c in search.constraints],
            "ranker": search.ranker.name,
            "filters": [c.name for c in search.filters],
            "set": f"cap({self.config.choice.max_share:g})",
            "frequency": self.frequency.name,
            "verb_vectors": verb_vectors().name,
        }
        fields |= {"preset": self.config.preset} if self.config.preset else {}
        encoder = sentence_model_name(self.config.meaning.embedding_model, self.config.device)  # named when outside the numeric contract
        fields |= {"encoder": encoder} if encoder != self.config.meaning.embedding_model else {}
        return fields | ({"train": self.train_digest} if self.train_digest is not None else {})
