"""Verb-phrase contrasts: spaCy finds the phrases, a wide pool (offline) or T5 proposes replacements,
only those that fit the original's arguments are kept, and the contrast is drawn among the ones that
read about as fluently as the original under a language model.

Targets follow Park et al. App. A.3: a verb, or a verb followed by its particle or preposition
("picking up", "walking down"), matched on spaCy's tags; only verbs that head a clause, so not
auxiliaries, modals, passives, names read as verbs or past participles describing a noun.

The offline pool holds the verb's WordNet antonyms and sister terms (other hyponyms of its
hypernyms), the most common verbs of its lexicographer files ("domain": verb.motion,
verb.communication, ...), the verbs of the caption collection ("captions": the input and the
training captions) and the verbs seen with the original's object ("attested"), inflected to the
original's tag with lemminflect. A verb + particle is replaced whole when WordNet knows it as one
verb (``pick_up``); otherwise only the verb changes. Synonyms (any lemma sharing a verb synset with
the original) and the caption's other verbs are never proposed.

:class:`Fitting` drops the candidates whose verb does not fit the original's frame
(:mod:`tvrbench.generators.frames`); :class:`SpreadChoice` orders the rest for the search, which
takes the first that passes every filter. Why, and what each step did to the contrasts a reader
sees, is measured in docs/contrast.md.
"""

from __future__ import annotations

import dataclasses
import functools
import weakref
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from tvrbench.generators.base import Candidate, CaptionItem, ContrastSearch, Request, match_case, replace_tokens
from tvrbench.generators.config import ChoiceConfig, VerbConfig, WordNetGeneratorConfig
from tvrbench.generators.core import ContrastGenerator
from tvrbench.generators.frames import BIGRAM_WORDS, ArgumentFit, NounClasses, Usage, VerbPhrases, frame_of
from tvrbench.generators.lexicon import AUXILIARIES, LexiconSettings, VerbLexicon, verb_lexicon
from tvrbench.generators.lm import LanguageModel, load_language_model, mean_logprobs
from tvrbench.generators.records import ContrastRecord, Replacement
from tvrbench.io.captions import Captions
from tvrbench.signature import text_digest

# Light verbs say little on their own: "taking his opinion", "going and dancing" (never proposed).
LIGHT_VERBS = frozenset({"go", "come", "get", "give", "take", "make", "put", "set", "keep", "let"})
MAX_WORDS = 2  # a verb, or a verb and its particle: longer WordNet lemmas ("come_to_the_fore") read oddly


@functools.lru_cache(maxsize=50000)
def inflect(lemma: str, tag: str) -> str:
    """``pick_up`` inflected like ``VBG`` → ``picking up``: the first word takes the inflection."""
    from lemminflect import getInflection

    head, *rest = lemma.split("_")
    forms = getInflection(head, tag=tag, inflect_oov=True) if tag.startswith("VB") else ()
    return " ".join([forms[0] if forms else head, *rest])


# --------------------------------------------------------------------------- how captions use verbs


class CaptionVerbs:
    """What a caption collection does with its verbs: how often each occurs, and its usage table."""

    def __init__(self, docs: Iterable, classes: NounClasses):
        docs = list(docs)
        self.counts: Counter = Counter(t.lemma_.lower() for doc in docs for t in doc if t.pos_ == "VERB")
        self.usage = Usage.of_docs(docs, classes)
        self.prior: dict[str, float] = {}  # log draw weight per verb, filled by VerbContrasts.prepare

    def common(self, min_count: int, limit: int) -> tuple[str, ...]:
        """The ``limit`` most frequent one-word verbs seen at least ``min_count`` times."""
        counts = [(-n, v) for v, n in self.counts.items() if n >= min_count and v.isalpha() and v not in AUXILIARIES]
        return tuple(v for _, v in sorted(counts)[:limit])

    def with_docs(self, docs: Iterable, classes: NounClasses) -> "CaptionVerbs":
        """A collection of these captions and ``docs`` together."""
        merged = CaptionVerbs(docs, classes)
        merged.counts.update(self.counts)
        merged.usage = merged.usage.merged(self.usage)
        return merged


# --------------------------------------------------------------------------- candidates


class WordNetVerbs:
    """The offline pool: antonyms, sister terms, domain verbs, the collection's verbs and the verbs seen
    with the original's object ("attested"); never synonyms, never another verb of the same caption."""

    name = "wordnet"

    def __init__(
        self,
        config: WordNetGeneratorConfig,
        lexicon: VerbLexicon,
        caption_verbs: Sequence[str] = (),
        frequent_verbs: Sequence[str] = (),
        seen_with: dict[str, Sequence[str]] | None = None,
    ):
        self.config = config
        self.lexicon = lexicon
        self.extra = {"captions": tuple(caption_verbs), "frequent": tuple(frequent_verbs)}
        self.seen_with = seen_with or {}  # "o:NOUN" / "p:WORD" -> verbs seen with it

    def antonyms(self, lemma: str) -> frozenset[str]:
        return self.lexicon.antonyms(lemma.lower())

    @functools.lru_cache(maxsize=20000)
    def alternatives(self, lemma: str, head: str, slot: str | None = None) -> tuple[tuple[str, str], ...]:
        """(new lemma, relation) for ``lemma``, sorted by name; ``head`` is its first word, which must
        change; ``slot``: the original's object (``o:NOUN``) or the preposition after it (``p:WORD``),
        whose attested verbs join the pool."""
        excluded = self.lexicon.synonyms(lemma) | self.lexicon.synonyms(head)
        relations = self.config.relations
        found: dict[str, str] = {}
        sources = [
            ("antonym", self.lexicon.antonyms(lemma)),
            ("sister", self.lexicon.sisters(lemma)),
            ("domain", self.lexicon.domain_verbs(lemma)),
            ("captions", self.extra["captions"]),
            ("frequent", self.extra["frequent"]),
            ("attested", self.seen_with.get(slot, ()) if slot else ()),
        ]
        for relation, names in sources:
            if relation not in relations:
                continue
            for name in names:
                words = name.split("_")
                if name in found or name in excluded or name in AUXILIARIES | LIGHT_VERBS or words[0] == head:
                    continue
                if len(words) <= MAX_WORDS and name.replace("_", "").isalpha():
                    found[name] = relation
        return tuple(sorted(found.items()))

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        lists = []
        for request in requests:
            doc, target = request.item.doc, request.target
            verb = doc[target.start]
            head = verb.lemma_.lower()
            phrase = "_".join([head, *(t.lower_ for t in doc[target.start + 1 : target.end])])
            particle = target.end - target.start > 1 and doc[target.end - 1].tag_ == "RP"
            whole = particle and self.lexicon.known(phrase)
            lemma, end = (phrase, target.end) if whole else (head, target.start + 1)
            obj = next((child.lemma_.lower() for child in verb.children if child.dep_ == "dobj"), None)
            after = doc[end] if end < len(doc) and doc[end].tag_ in ("IN", "RP") else None
            slot = f"o:{obj}" if obj else f"p:{after.lower_}" if after is not None else None
            others = {t.lemma_.lower() for t in doc if t.pos_ == "VERB" and t.i != verb.i}  # "running and *running*"
            span = replace_tokens(doc, target.start, end, "")  # read spaCy's offsets once, not per candidate
            lists.append(
                [
                    Candidate(
                        request,
                        (Replacement(span.token_start, span.token_end, span.char_start, span.char_end, span.original, fill),),
                        {"relation": relation, "original_lemma": lemma, "new_lemma": name},
                    )
                    for name, relation, fill in self.fills(lemma, head, verb.tag_, verb.text, slot)
                    if name.split("_")[0] not in others and (whole or "_" not in name)  # a one-word verb gains no particle
                ]
            )
        return lists

    @functools.lru_cache(maxsize=20000)
    def fills(self, lemma: str, head: str, tag: str, text: str, slot: str | None) -> tuple[tuple[str, str, str], ...]:
        """(new lemma, relation, the words put in the caption): each alternative inflected like ``text``."""
        return tuple((name, relation, match_case(inflect(name, tag), text)) for name, relation in self.alternatives(lemma, head, slot))


def new_lemma(candidate: Candidate | ContrastRecord) -> str:
    """The replacing verb's lemma (of a candidate or of a record): the pool's own, or (T5) the first word
    of the fill, lemmatised by lemminflect."""
    if "new_lemma" in candidate.details:
        return candidate.details["new_lemma"].split("_")[0]
    from lemminflect import getLemma

    word = (candidate.edit[0]["to"].split() or [""])[0].lower()
    lemmas = getLemma(word, upos="VERB")
    return lemmas[0] if lemmas else word


class Fitting:
    """Any generator's candidates, without those whose verb does not fit the original's frame
    (:class:`~tvrbench.generators.frames.ArgumentFit`): a hard constraint, checked before the LM."""

    def __init__(self, generator, fit: ArgumentFit, classes: NounClasses):
        self.generator = generator
        self.fit = fit
        self.classes = classes
        self.name = generator.name
        self.kept: dict[tuple, list[Candidate]] = {}  # per caption and target: the prior pass's lists serve the search

    def clear_cache(self) -> None:
        if hasattr(self.generator, "clear_cache"):
            self.generator.clear_cache()

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        keys = [(r.item.caption_id, r.item.text, r.target.start, r.target.end) for r in requests]
        todo = [request for request, key in zip(requests, keys) if key not in self.kept]
        for request, candidates in zip(todo, self.generator.generate(todo)):
            doc, target = request.item.doc, request.target
            frames = {}
            fitting = []
            for candidate in candidates:
                end = candidate.replacements[0].token_end
                if end not in frames:
                    frames[end] = frame_of(doc[target.start], end, self.classes)
                lemma = candidate.details.get("new_lemma") or new_lemma(candidate)
                if self.fit.fits(frames[end], lemma):
                    candidate.details["association"] = round(self.fit.strength(frames[end], lemma), 6)
                    fitting.append(candidate)
            self.kept[(request.item.caption_id, request.item.text, target.start, target.end)] = fitting
        return [[dataclasses.replace(c, details=dict(c.details)) for c in self.kept[key]] for key in keys]


class SpreadChoice:
    """The order the search tries a target's candidates in: first a seeded draw (per caption) among
    those that read about as fluently as the original under the LM, at most ``max_gap`` nats per
    token worse, each with weight exp(``association_weight`` · how well it goes with the caption's
    nouns); then the rest, most fluent first.

    Drawing rather than always taking the most fluent spreads the substitutes over many verbs (a set
    whose negatives share a few verbs teaches a text-only model which verbs are fake), and keeps the
    LM's preference for the original near what it is for real captions. Records keep ``lm_logprob``
    (the whole contrast's) and ``lm_gap`` (original minus contrast, nats per token).
    """

    def __init__(self, generator, lm: LanguageModel, config: ChoiceConfig, prior: dict[str, float] | None = None):
        self.generator = generator
        self.lm = lm
        self.config = config
        self.prior = prior or {}  # see VerbContrasts.prior
        self.name = generator.name

    def clear_cache(self) -> None:
        self.lm.clear_cache()

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        ordered = []
        for request, candidates in zip(requests, self.generator.generate(requests)):
            if not candidates:
                ordered.append([])
                continue
            logprobs = self.lm.token_logprobs([c.text for c in candidates])  # the LM's own tokens, whatever it is
            totals = np.array([row.sum() for row in logprobs])
            gaps = mean_logprobs(self.lm, [request.item.text])[0] - np.array([row.mean() for row in logprobs])
            for candidate, total, gap in zip(candidates, totals, gaps):
                candidate.details["lm_logprob"] = round(float(total), 6)
                candidate.details["lm_gap"] = round(float(gap), 6)
            fluent = np.flatnonzero(gaps <= self.config.max_gap)
            rest = np.setdiff1d(np.arange(len(candidates)), fluent)
            keys = self.log_weights([candidates[k] for k in fluent]) + request.rng.gumbel(size=len(fluent))  # Gumbel-max: a weighted draw
            order = [*fluent[np.argsort(-keys, kind="stable")], *rest[np.argsort(-totals[rest], kind="stable")]]
            ordered.append([candidates[k] for k in order])
        return ordered

    def log_weights(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """log(draw weight): ``association_weight`` · how well the verb goes with the caption's nouns,
        plus ``spread`` · the verb's prior (:meth:`VerbContrasts.prior`)."""
        strength = np.array([c.details.get("association", 0.0) for c in candidates])
        prior = np.array([self.prior.get(new_lemma(c), 0.0) for c in candidates])
        return self.config.association_weight * strength + self.config.spread * prior


@functools.lru_cache(maxsize=1)
def profane_words() -> frozenset[str]:
    """better-profanity's word list. No substitute brings one into a set whose captions do not use it
    as a verb themselves ("bitching about", a Web bigram, came up for "talking about"; "killing"
    stays where the captions show games)."""
    from importlib.resources import files

    lines = files("better_profanity").joinpath("profanity_wordlist.txt").read_text(encoding="utf-8").lower().splitlines()
    return frozenset(line.strip() for line in lines if line.strip().isalpha())  # single words ("call girl" is not "call")


class Without:
    """A generator's candidates, less those whose new verb is one of ``lemmas`` (a set's over-used substitutes)."""

    def __init__(self, generator, lemmas: frozenset[str]):
        self.generator = generator
        self.lemmas = lemmas
        self.name = generator.name

    def clear_cache(self) -> None:
        self.generator.clear_cache()

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        return [[c for c in candidates if new_lemma(c) not in self.lemmas] for candidates in self.generator.generate(requests)]


class VerbContrasts(ContrastGenerator):
    """Verb contrasts: ``VerbContrasts(config, train_captions).contrasts(captions)``.

    The pool and the argument fit read how the captions being contrasted (and the training captions)
    use their verbs, so each call assembles its search from the models loaded once. The frequency
    filter counts the new verbs in the training captions when given (Park et al.), else looks them up
    in the n-gram LM's unigram table; the signature fields say which.
    """

    kind = "verb"
    libraries = ("spacy", "nltk", "lemminflect", "sentence-transformers", "transformers", "torch", "pocketsphinx")

    def __init__(self, config: VerbConfig = VerbConfig(), train_captions: Captions | None = None):
        super().__init__(config, config.chunk_size)
        self.train = CaptionVerbs(self.nlp.pipe(train_captions.texts, batch_size=256), self.wordnet_usage[0]) if train_captions is not None else None
        self.train_digest = text_digest(train_captions.texts) if train_captions is not None else None

    @functools.cached_property
    def nlp(self):
        from tvrbench.resources import spacy_pipeline

        return spacy_pipeline(self.config.spacy_model, disable=("ner",))  # the parser tells clause heads and objects

    @functools.cached_property
    def lm(self) -> LanguageModel:
        """Ranks the candidates and runs the perplexity filter, in batches of ``lm_batch_size``."""
        return load_language_model(self.config.lm, self.config.lm_batch_size, self.config.device)

    @functools.cached_property
    def unigrams(self):
        from tvrbench.generators.filters import UnigramFrequency

        return UnigramFrequency(load_language_model("ngram"), self.config.frequency.min_unigram_log10)

    @functools.cached_property
    def wordnet_usage(self) -> tuple[NounClasses, Usage]:
        """Noun classes and the verb–argument table of WordNet's example sentences (cached on disk)."""
        from tvrbench.generators.frames import wordnet_usage

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
        from tvrbench.generators.t5 import T5Verbs

        return T5Verbs(self.config.t5, device=self.config.device)

    @functools.cached_property
    def frequency(self):
        from tvrbench.generators.filters import TrainingFrequency

        return TrainingFrequency(self.train.counts, self.config.frequency.min_train_count) if self.train is not None else self.unigrams

    def prepare(self, captions: Captions) -> tuple[list[CaptionItem], CaptionVerbs]:
        """The items parsed, and how these captions and the training captions use their verbs."""
        docs = list(self.nlp.pipe(captions.texts, batch_size=256))
        items = [replace(item, doc=doc) for item, doc in zip(self.items(captions), docs)]
        classes = self.wordnet_usage[0]
        collection = self.train.with_docs(docs, classes) if self.train is not None else CaptionVerbs(docs, classes)
        collection.prior = self.prior(items, collection)
        return items, collection

    def prior(self, items: Sequence[CaptionItem], collection: CaptionVerbs) -> dict[str, float]:
        """Each verb's log draw weight: log((its expected count as an original + 1) / (its expected
        count as a substitute + 1)), both as if every caption changed a uniform target to a uniform
        fitting verb. A verb that fits everywhere ("walk", "buy") is not drawn everywhere, and the
        verbs captions use most ("talk", "play") come back as substitutes about as often as they are
        replaced, so that no word tells the positive from the contrast (docs/audit.md). Computed once
        over all the captions, so a chunk's records still depend on the chunk alone."""
        _, generator = self.candidates(collection)
        finder = VerbPhrases(self.nlp)
        originals: Counter = Counter()
        requests = []
        for item in items:
            targets = finder.find(item)
            originals.update({item.doc[t.start].lemma_.lower(): 1 / len(targets) for t in targets})
            requests += [Request(item, target, targets, None) for target in targets]
        substitutes: Counter = Counter()
        for request, candidates in zip(requests, generator.generate(requests)):
            lemmas = {new_lemma(c) for c in candidates}
            substitutes.update({lemma: 1 / len(lemmas) / len(request.targets) for lemma in lemmas})
        return {lemma: float(np.log((originals[lemma] + 1) / (substitutes[lemma] + 1))) for lemma in substitutes}

    @functools.cached_property
    def built(self) -> weakref.WeakKeyDictionary:
        """What :meth:`candidates` built for each collection, so the prior's pass and the search share
        one argument fit and its caches (not pickled: a Dask worker builds its own)."""
        return weakref.WeakKeyDictionary()

    def candidates(self, collection: CaptionVerbs):
        """The offline pool, and the generator whose candidates the search orders: the pool (or T5),
        without the candidates that do not fit the original's arguments."""
        if collection not in self.built:
            self.built[collection] = self._candidates(collection)
        return self.built[collection]

    def _candidates(self, collection: CaptionVerbs):
        config, pool = self.config, self.config.wordnet
        classes, usage = self.wordnet_usage
        usage = usage.merged(collection.usage)
        fit = ArgumentFit(self.lexicon, usage, classes, config.argument_fit.min_association, config.argument_fit.frame_senses)
        seen_with = usage.verbs_seen_with()
        for word in BIGRAM_WORDS:  # and the Web's "verb + preposition"
            seen_with[f"p:{word}"] = sorted({*seen_with.get(f"p:{word}", ()), *fit.verbs_before(word)})
        common = collection.common(pool.min_caption_count, pool.caption_verbs)
        wordnet_verbs = WordNetVerbs(pool, self.lexicon, common, self.frequent_verbs, seen_with)
        generator = self.t5 if config.generator == "t5" else wordnet_verbs
        if config.argument_fit.enabled:
            generator = Fitting(generator, fit, classes)
        return wordnet_verbs, Without(generator, profane_words() - set(collection.counts))

    def search(self, collection: CaptionVerbs) -> ContrastSearch:
        """Finder, ranked generator and filters; ``collection``: how the captions use their verbs."""
        from tvrbench.generators import filters
        from tvrbench.generators.counterfit import verb_vectors
        from tvrbench.resources import sentence_model

        config = self.config
        wordnet_verbs, generator = self.candidates(collection)
        parses = filters.CandidateParses(self.nlp)
        # Cheapest first (the result does not depend on the order): the choice has already scored every
        # candidate with the LM; frequency and the verb cosine need no parse; sentences are embedded only
        # for candidates whose verb changed; tagging is last.
        constraints = [
            filters.Perplexity(self.lm, config.perplexity),
            filters.VerbFrequency(parses, self.frequency),
            filters.MeaningChanged(parses, filters.Embeddings(sentence_model(config.meaning.embedding_model, config.device)), verb_vectors(),
                                   wordnet_verbs, config.meaning),
            filters.HasVerb(parses),
        ]  # fmt: skip
        choice = SpreadChoice(generator, self.lm, config.choice, collection.prior)
        return ContrastSearch("verb", VerbPhrases(self.nlp), choice, constraints, config.seed, "random", "rank", block=1)

    @property
    def max_share(self) -> float:
        return self.config.choice.max_share

    def substitute(self, record) -> str:
        return new_lemma(record)  # as Without reads a candidate's, so a T5 fill's word is lemmatised alike

    def without(self, search: ContrastSearch, substitutes: frozenset[str]) -> ContrastSearch:
        generator = Without(search.generator, substitutes)
        return ContrastSearch(search.kind, search.finder, generator, search.constraints, search.seed, search.target_order,
                              search.candidate_order, search.block, search.max_block)  # fmt: skip

    def signature_fields(self, search: ContrastSearch) -> dict:
        from tvrbench.generators.counterfit import verb_vectors
        from tvrbench.resources import spacy_pipeline_id

        choice = self.config.choice
        fields = {
            "pipeline": spacy_pipeline_id(self.nlp),
            "generator": search.generator.name if self.config.generator == "wordnet" else self.t5.name,
            "lm": self.lm.name,
            "order": f"{'fit,' if self.config.argument_fit.enabled else ''}draw({choice.max_gap:g},{choice.association_weight:g},"
            f"{choice.spread:g}),lm,cap({choice.max_share:g})",
            "filters": [c.name for c in search.constraints],
            "frequency": self.frequency.name,
            "verb_vectors": verb_vectors().name,
        }
        fields |= {"preset": self.config.preset} if self.config.preset else {}
        return fields | ({"train": self.train_digest} if self.train_digest is not None else {})
