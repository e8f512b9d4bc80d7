"""Verb-phrase contrasts: spaCy finds the phrases, a wide pool (offline) or T5 proposes replacements,
and a language model ranks them by how plausible the changed caption reads.

Targets follow Park et al. App. A.3: a verb, or a verb followed by its particle or preposition
("picking up", "walking down"), matched on spaCy's tags; only verbs that head a clause, so not
auxiliaries, passives or participles used as adjectives ("a mixing bowl").

The offline pool holds the verb's WordNet antonyms and sister terms (other hyponyms of its
hypernyms), the most common verbs of its lexicographer files ("domain": verb.motion,
verb.communication, ...), and the verbs of the caption collection itself ("captions": the input
and the training captions), inflected to the original's tag with lemminflect. A verb + particle is
replaced whole when WordNet knows it as one verb (``pick_up``); otherwise only the verb changes.
Synonyms (any lemma sharing a verb synset with the original) are never proposed.

:class:`RankedByLM` then orders any generator's candidates: first those whose verb the captions
use the way the original is used (same object, or one like it; same preposition; no object), each
group most plausible first under the language model. The search takes the first candidate that
passes every filter. Why the order has two keys, and what each did to the contrasts, is measured in
docs/contrast.md.
"""

from __future__ import annotations

import functools
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import replace

import numpy as np

from tvrbench.generators.base import Candidate, CaptionItem, ContrastSearch, Request, Target, match_case, replace_tokens
from tvrbench.generators.config import VerbConfig, WordNetGeneratorConfig
from tvrbench.generators.core import ContrastGenerator
from tvrbench.generators.lexicon import AUXILIARIES, LexiconSettings, VerbLexicon, verb_lexicon
from tvrbench.generators.lm import LanguageModel, load_language_model, total_logprobs
from tvrbench.generators.records import Replacement
from tvrbench.io.captions import Captions
from tvrbench.signature import text_digest

MAX_WORDS = 2  # a verb, or a verb and its particle: longer WordNet lemmas ("come_to_the_fore") read oddly
VERB_PATTERNS = [[{"POS": "VERB"}, {"TAG": {"IN": ["RP", "IN"]}, "OP": "?"}]]
NOT_CLAUSE_HEADS = frozenset({"amod", "compound", "aux", "auxpass"})
FUNCTION_TAGS = frozenset({"IN", "RP", "TO", "WRB", "WP", "WDT"})
GENERIC_OBJECTS = frozenset({"something", "it", "one", "thing", "this", "that", "what", "stuff", "someone", "somebody", "everything"})


class VerbPhrases:
    """Targets: spaCy matches of verb, or verb + particle / preposition (longest match wins), whose
    verb heads a clause (when the doc is parsed)."""

    def __init__(self, nlp):
        from spacy.matcher import Matcher

        self.matcher = Matcher(nlp.vocab)
        self.matcher.add("VERB_PHRASE", VERB_PATTERNS, greedy="LONGEST")

    def find(self, item: CaptionItem) -> list[Target]:
        return self.in_doc(item.doc)

    def in_doc(self, doc) -> list[Target]:
        spans = sorted(self.matcher(doc, as_spans=True), key=lambda span: span.start)
        parsed = doc.has_annotation("DEP")
        return [Target(span.start, span.end, "verb") for span in spans if not parsed or heads_a_clause(span[0])]


def heads_a_clause(verb) -> bool:
    return (
        verb.dep_ not in NOT_CLAUSE_HEADS
        and verb.lemma_.lower() not in AUXILIARIES
        and not any(child.dep_ in ("auxpass", "nsubjpass") for child in verb.children)
    )


@functools.lru_cache(maxsize=50000)
def inflect(lemma: str, tag: str) -> str:
    """``pick_up`` inflected like ``VBG`` → ``picking up``: the first word takes the inflection."""
    from lemminflect import getInflection

    head, *rest = lemma.split("_")
    forms = getInflection(head, tag=tag, inflect_oov=True) if tag.startswith("VB") else ()
    return " ".join([forms[0] if forms else head, *rest])


# --------------------------------------------------------------------------- how captions use verbs


def verb_frame(verb, end: int) -> tuple[str, str | None, str | None]:
    """How the verb token is used: ``("object", lemma, None)``; ``("prep", word, object lemma or
    None)`` for the function word at token ``end`` (right after the phrase: a preposition, particle,
    "to" or a wh-word) and the noun it governs; or ``("none", None, None)``."""
    obj = next((child for child in verb.children if child.dep_ == "dobj"), None)
    if obj is not None:
        return "object", obj.lemma_.lower(), None
    following = verb.doc[end] if end < len(verb.doc) else None
    if following is not None and following.tag_ in FUNCTION_TAGS:
        noun = next((child for child in following.children if child.dep_ == "pobj"), None)
        return "prep", following.lower_, noun.lemma_.lower() if noun is not None else None
    return "none", None, None


class CaptionVerbs:
    """What a caption collection does with its verbs: how often each occurs and in which frames."""

    def __init__(self, docs: Iterable):
        self.counts: Counter = Counter()
        self.frames: dict[str, set[tuple[str, str | None, str | None]]] = defaultdict(set)
        for doc in docs:
            for token in doc:
                if token.pos_ == "VERB":
                    lemma = token.lemma_.lower()
                    self.counts[lemma] += 1
                    self.frames[lemma].add(verb_frame(token, token.i + 1))

    def common(self, min_count: int, limit: int) -> tuple[str, ...]:
        """The ``limit`` most frequent one-word verbs seen at least ``min_count`` times."""
        counts = [(-n, v) for v, n in self.counts.items() if n >= min_count and v.isalpha() and v not in AUXILIARIES]
        return tuple(v for _, v in sorted(counts)[:limit])

    def with_docs(self, docs: Iterable) -> "CaptionVerbs":
        """A collection of these captions and ``docs`` together."""
        merged = CaptionVerbs(docs)
        merged.counts.update(self.counts)
        for lemma, frames in self.frames.items():
            merged.frames[lemma] |= frames
        return merged


class ArgumentFit:
    """Does a verb fit the original's arguments the way real captions use it? (Erk 2007's
    similarity-based selectional preference, over the caption collection.)

    A verb fits a frame the captions show it in; for an object, also an object whose GloVe cosine
    to the original's is at least ``min_similarity`` (pronoun-like objects such as "something"
    never count as evidence). The trigram LM sees two words either side of the verb, so it cannot
    tell "a woman walks a leather jacket" from "a woman wears a leather jacket"; this can.
    """

    def __init__(self, captions: CaptionVerbs, min_similarity: float):
        from tvrbench.generators.counterfit import glove_vectors

        self.captions = captions
        self.min_similarity = min_similarity
        self.index, self.matrix = glove_vectors()

    @functools.lru_cache(maxsize=200000)
    def fits(self, frame: tuple[str, str | None, str | None], lemma: str) -> bool:
        kind, word, noun = frame
        seen = self.captions.frames.get(lemma, ())
        if kind == "none":
            return frame in seen
        if kind == "object":
            return self.alike(word, ("object", None), lemma)
        if not any(k == "prep" and w == word for k, w, _ in seen):
            return False
        return noun is None or self.alike(noun, ("prep", word), lemma)  # no noun: the preposition alone

    def alike(self, noun: str, slot: tuple[str, str | None], lemma: str) -> bool:
        """Whether ``noun`` is one the captions give ``lemma`` in ``slot``, or close to one; "something"
        fits every verb, so proves nothing."""
        if noun in GENERIC_OBJECTS:
            return False
        known, rows = self.known(slot, lemma)
        return noun in known or (noun in self.index and len(rows) > 0 and float((rows @ self.unit(noun)).max()) >= self.min_similarity)

    @functools.lru_cache(maxsize=50000)
    def known(self, slot: tuple[str, str | None], lemma: str) -> tuple[frozenset[str], np.ndarray]:
        """The informative nouns the captions give ``lemma`` in ``slot``, and their unit GloVe rows."""
        kind, word = slot
        frames = self.captions.frames.get(lemma, ())
        found = {w for k, w, _ in frames if k == "object"} if kind == "object" else {n for k, w, n in frames if k == "prep" and w == word}
        nouns = sorted(found - {None} - GENERIC_OBJECTS)
        vectors = [self.unit(n) for n in nouns if n in self.index]
        return frozenset(nouns), np.stack(vectors) if vectors else np.zeros((0, self.matrix.shape[1]))

    @functools.lru_cache(maxsize=50000)
    def unit(self, word: str) -> np.ndarray:
        row = np.asarray(self.matrix[self.index[word]], dtype=np.float64)
        return row / np.linalg.norm(row)


# --------------------------------------------------------------------------- candidates


class WordNetVerbs:
    """The offline pool: antonyms, sister terms, domain verbs and the collection's verbs; never synonyms."""

    name = "wordnet"

    def __init__(self, config: WordNetGeneratorConfig, lexicon: VerbLexicon, caption_verbs: Sequence[str] = (), frequent_verbs: Sequence[str] = ()):
        self.config = config
        self.lexicon = lexicon
        self.extra = {"captions": tuple(caption_verbs), "frequent": tuple(frequent_verbs)}

    def antonyms(self, lemma: str) -> frozenset[str]:
        return self.lexicon.antonyms(lemma.lower())

    @functools.lru_cache(maxsize=20000)
    def alternatives(self, lemma: str, head: str) -> tuple[tuple[str, str], ...]:
        """(new lemma, relation) for ``lemma``, sorted by name; ``head`` is its first word, which must change."""
        excluded = self.lexicon.synonyms(lemma) | self.lexicon.synonyms(head)
        relations = self.config.relations
        found: dict[str, str] = {}
        sources = [
            ("antonym", self.lexicon.antonyms(lemma)),
            ("sister", self.lexicon.sisters(lemma)),
            ("domain", self.lexicon.domain_verbs(lemma)),
            ("captions", self.extra["captions"]),
            ("frequent", self.extra["frequent"]),
        ]
        for relation, names in sources:
            if relation not in relations:
                continue
            for name in names:
                words = name.split("_")
                if name in found or name in excluded or name in AUXILIARIES or words[0] == head:
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
            span = replace_tokens(doc, target.start, end, "")  # read spaCy's offsets once, not per candidate
            lists.append(
                [
                    Candidate(
                        request,
                        (Replacement(span.token_start, span.token_end, span.char_start, span.char_end, span.original, fill),),
                        {"relation": relation, "original_lemma": lemma, "new_lemma": name},
                    )
                    for name, relation, fill in self.fills(lemma, head, verb.tag_, verb.text)
                ]
            )
        return lists

    @functools.lru_cache(maxsize=20000)
    def fills(self, lemma: str, head: str, tag: str, text: str) -> tuple[tuple[str, str, str], ...]:
        """(new lemma, relation, the words put in the caption): each alternative inflected like ``text``."""
        return tuple((name, relation, match_case(inflect(name, tag), text)) for name, relation in self.alternatives(lemma, head))


def new_lemma(candidate: Candidate) -> str:
    """The replacing verb's lemma: the pool's own, or (T5) the first word of the fill, lemmatised by lemminflect."""
    if "new_lemma" in candidate.details:
        return candidate.details["new_lemma"].split("_")[0]
    from lemminflect import getLemma

    word = (candidate.edit[0]["to"].split() or [""])[0].lower()
    lemmas = getLemma(word, upos="VERB")
    return lemmas[0] if lemmas else word


class RankedByLM:
    """Any generator's candidates in the order the search tries them: those that fit the original's
    arguments first (when an :class:`ArgumentFit` is given), each group by the log-probability of the
    filled caption under the LM, most plausible first; ties keep the generator's order.

    The whole caption's log-probability, not per token, so a longer phrase pays for its extra words.
    The record keeps ``lm_logprob`` and ``fits_arguments`` in its ``details``.
    """

    def __init__(self, generator, lm: LanguageModel, fit: ArgumentFit | None = None):
        self.generator = generator
        self.lm = lm
        self.fit = fit
        self.name = generator.name

    def clear_cache(self) -> None:
        self.lm.clear_cache()

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        ranked = []
        for request, candidates in zip(requests, self.generator.generate(requests)):
            frame = verb_frame(request.item.doc[request.target.start], request.target.end) if self.fit else None
            keyed = []
            for position, (candidate, score) in enumerate(zip(candidates, self.scores(request, candidates))):
                fits = self.fit is None or self.fit.fits(frame, new_lemma(candidate))
                candidate.details["lm_logprob"] = round(float(score), 6)
                candidate.details["fits_arguments"] = fits
                keyed.append(((not fits, -score, position), candidate))
            keyed.sort(key=lambda item: item[0])
            ranked.append([candidate for _, candidate in keyed])
        return ranked

    def scores(self, request: Request, candidates: Sequence[Candidate]) -> np.ndarray:
        """Log-probabilities of the candidates' texts; one span replaced in each: as variants of the caption."""
        spans = {(r.char_start, r.char_end) for c in candidates for r in c.replacements}
        if len(spans) == 1 and all(len(c.replacements) == 1 for c in candidates):
            ((start, end),) = spans
            return self.lm.variant_totals(request.item.text, start, end, [c.replacements[0].replacement for c in candidates])
        return total_logprobs(self.lm, [c.text for c in candidates])


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
        self.train = CaptionVerbs(self.nlp.pipe(train_captions.texts, batch_size=256)) if train_captions is not None else None
        self.train_digest = text_digest(train_captions.texts) if train_captions is not None else None

    @functools.cached_property
    def nlp(self):
        from tvrbench.resources import spacy_pipeline

        return spacy_pipeline(self.config.spacy_model, disable=("ner",))  # the parser tells clause heads and objects

    @functools.cached_property
    def lm(self) -> LanguageModel:
        """Ranks the candidates and runs the perplexity filter, in batches of ``lm_batch_size``."""
        return load_language_model(self.config.lm, self.config.lm_batch_size)

    @functools.cached_property
    def unigrams(self):
        from tvrbench.generators.filters import UnigramFrequency

        return UnigramFrequency(load_language_model("ngram"), self.config.frequency.min_unigram_log10)

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

        return T5Verbs(self.config.t5)

    @functools.cached_property
    def frequency(self):
        from tvrbench.generators.filters import TrainingFrequency

        return TrainingFrequency(self.train.counts, self.config.frequency.min_train_count) if self.train is not None else self.unigrams

    def prepare(self, captions: Captions) -> tuple[list[CaptionItem], CaptionVerbs]:
        """The items parsed, and how these captions and the training captions use their verbs."""
        docs = list(self.nlp.pipe(captions.texts, batch_size=256))
        items = [replace(item, doc=doc) for item, doc in zip(self.items(captions), docs)]
        return items, self.train.with_docs(docs) if self.train is not None else CaptionVerbs(docs)

    def search(self, collection: CaptionVerbs) -> ContrastSearch:
        """Finder, ranked generator and filters; ``collection``: how the captions use their verbs."""
        from tvrbench.generators import filters
        from tvrbench.generators.counterfit import verb_vectors
        from tvrbench.resources import sentence_model

        config, pool = self.config, self.config.wordnet
        wordnet_verbs = WordNetVerbs(pool, self.lexicon, collection.common(pool.min_caption_count, pool.caption_verbs), self.frequent_verbs)
        generator = self.t5 if config.generator == "t5" else wordnet_verbs
        parses = filters.CandidateParses(self.nlp)
        # Cheapest first (the result does not depend on the order): the ranking has already scored every
        # candidate with the LM; frequency and the verb cosine need no parse; sentences are embedded only
        # for candidates whose verb changed; tagging is last.
        constraints = [
            filters.Perplexity(self.lm, config.perplexity),
            filters.VerbFrequency(parses, self.frequency),
            filters.MeaningChanged(parses, filters.Embeddings(sentence_model(config.meaning.embedding_model)), verb_vectors(),
                                   wordnet_verbs, config.meaning),
            filters.HasVerb(parses),
        ]  # fmt: skip
        fit = ArgumentFit(collection, config.argument_fit.min_object_similarity) if config.argument_fit.enabled else None
        return ContrastSearch("verb", VerbPhrases(self.nlp), RankedByLM(generator, self.lm, fit), constraints, config.seed, "random", "rank")

    def signature_fields(self, search: ContrastSearch) -> dict:
        from tvrbench.generators.counterfit import verb_vectors
        from tvrbench.resources import spacy_pipeline_id

        fields = {
            "pipeline": spacy_pipeline_id(self.nlp),
            "generator": search.generator.name if self.config.generator == "wordnet" else f"t5={self.config.t5.model}",
            "lm": self.lm.name,
            "order": "fits-arguments,lm" if search.generator.fit else "lm",
            "filters": [c.name for c in search.constraints],
            "frequency": self.frequency.name,
            "verb_vectors": verb_vectors().name,
        }
        return fields | ({"train": self.train_digest} if self.train_digest is not None else {})
