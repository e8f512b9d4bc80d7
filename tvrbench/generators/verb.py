"""Verb-phrase contrasts: spaCy finds the phrases; WordNet (offline) or T5 proposes replacements.

Targets follow Park et al. App. A.3: a verb, or a verb followed by its particle or preposition
("picking up", "walking down"), matched on spaCy's tags. The offline generator proposes WordNet
antonyms and sister terms (other hyponyms of the verb's hypernyms) of the verb's most frequent
senses, and the most common verbs of the same lexicographer file ("domain": verb.motion,
verb.communication, ...), which differ more than sister terms and so pass the meaning filter more
often; all inflected to the original's tag with lemminflect. A verb + particle is replaced whole when
WordNet knows it as one verb (``pick_up``); otherwise only the verb changes and its particle or
preposition stays.
Synonyms (any lemma sharing a verb synset with the original) are never proposed.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from tvrbench.generators.base import Candidate, ContrastSearch, Request, Target, match_case, replace_tokens
from tvrbench.generators.config import VerbConfig, WordNetGeneratorConfig

RELATION_RANK = {"antonym": 0, "sister": 1, "domain": 1}  # antonyms first; the rest by SemCor count
AUXILIARIES = frozenset({"be", "have", "do"})  # never proposed: they make no new action
VERB_PATTERNS = [[{"POS": "VERB"}, {"TAG": {"IN": ["RP", "IN"]}, "OP": "?"}]]


class VerbPhrases:
    """Targets: spaCy matches of verb, or verb + particle / preposition (longest match wins)."""

    def __init__(self, nlp):
        from spacy.matcher import Matcher

        self.matcher = Matcher(nlp.vocab)
        self.matcher.add("VERB_PHRASE", VERB_PATTERNS, greedy="LONGEST")

    def find(self, doc) -> list[Target]:
        spans = sorted(self.matcher(doc, as_spans=True), key=lambda span: span.start)
        return [Target(span.start, span.end, "verb") for span in spans]


def inflect(lemma: str, tag: str) -> str:
    """``pick_up`` inflected like ``VBG`` → ``picking up``: the first word takes the inflection."""
    from lemminflect import getInflection

    head, *rest = lemma.split("_")
    forms = getInflection(head, tag=tag, inflect_oov=True) if tag.startswith("VB") else ()
    return " ".join([forms[0] if forms else head, *rest])


class WordNetVerbs:
    """Candidates: antonyms, then sister terms and domain verbs by SemCor frequency, never synonyms."""

    name = "wordnet"

    def __init__(self, config: WordNetGeneratorConfig, wordnet):
        self.config = config
        self.wn = wordnet

    @functools.lru_cache(maxsize=20000)
    def synonyms(self, lemma: str) -> frozenset[str]:
        """Every lemma sharing any verb sense with ``lemma`` (and ``lemma`` itself)."""
        names = {lemma.lower()}
        for synset in self.wn.synsets(lemma, pos="v"):
            names.update(name.lower() for name in synset.lemma_names())
        return frozenset(names)

    @functools.lru_cache(maxsize=20000)
    def antonyms(self, lemma: str) -> frozenset[str]:
        """WordNet antonyms of any verb sense of ``lemma``."""
        return frozenset(
            antonym.name().lower()
            for synset in self.wn.synsets(lemma, pos="v")
            for own in synset.lemmas()
            if own.name().lower() == lemma.lower()
            for antonym in own.antonyms()
        )

    @functools.lru_cache(maxsize=64)
    def common_verbs(self, lexname: str) -> tuple[tuple[str, int], ...]:
        """The ``domain_verbs`` most frequent (SemCor) one-word verbs of a lexicographer file (verb.motion, …)."""
        counts: dict[str, int] = {}
        for synset in self.wn.all_synsets(pos="v"):
            if synset.lexname() == lexname:
                for lemma in synset.lemmas():
                    if "_" not in lemma.name() and lemma.name() not in AUXILIARIES:
                        counts[lemma.name().lower()] = counts.get(lemma.name().lower(), 0) + lemma.count()
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        return tuple(ranked[: self.config.domain_verbs])

    @functools.lru_cache(maxsize=20000)
    def alternatives(self, lemma: str, head: str) -> tuple[tuple[str, str], ...]:
        """(new lemma, relation) for ``lemma``; ``head`` is its first word, which must change.

        Each name keeps its best (relation, count) over every place it was found, and the list is
        sorted on a total order, so it never depends on the order WordNet returns related synsets.
        """
        excluded = self.synonyms(lemma) | self.synonyms(head)
        found: dict[str, tuple[int, int, str]] = {}  # name -> (relation rank, -count, relation)

        def add(name: str, relation: str, count: int) -> None:
            key = (RELATION_RANK[relation], -count, relation)
            if name not in excluded and name.split("_")[0] != head and name.replace("_", "").isalpha():
                found[name] = min(found.get(name, key), key)

        senses = self.wn.synsets(lemma, pos="v")[: self.config.senses]
        for synset in senses:
            if "antonym" in self.config.relations:
                for own in synset.lemmas():
                    if own.name().lower() == lemma:
                        for antonym in own.antonyms():
                            add(antonym.name().lower(), "antonym", antonym.count())
            if "domain" in self.config.relations:
                for name, count in self.common_verbs(synset.lexname()):
                    add(name, "domain", count)
            if "sister" in self.config.relations:
                for hypernym in synset.hypernyms():
                    for sister in hypernym.hyponyms():
                        if sister in senses:
                            continue
                        for candidate in sister.lemmas():
                            if candidate.count() >= self.config.min_semcor_count:
                                add(candidate.name().lower(), "sister", candidate.count())
        keep = sorted((rank, minus_count, name, relation) for name, (rank, minus_count, relation) in found.items())
        return tuple((name, relation) for _, _, name, relation in keep[: self.config.max_candidates])

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        lists = []
        for request in requests:
            doc, target = request.doc, request.target
            verb = doc[target.start]
            head = verb.lemma_.lower()
            phrase = "_".join([head, *(t.lower_ for t in doc[target.start + 1 : target.end])])
            particle = target.end - target.start > 1 and doc[target.end - 1].tag_ == "RP"
            whole = particle and bool(self.wn.synsets(phrase, pos="v"))
            lemma, end = (phrase, target.end) if whole else (head, target.start + 1)
            lists.append(
                [
                    Candidate(
                        request,
                        (replace_tokens(doc, target.start, end, match_case(inflect(name, verb.tag_), verb.text)),),
                        {"relation": relation, "original_lemma": lemma, "new_lemma": name},
                    )
                    for name, relation in self.alternatives(lemma, head)
                ]
            )
        return lists


def verb_search(config: VerbConfig, nlp, train_texts: Sequence[str] | None = None) -> tuple[ContrastSearch, dict]:
    """The verb pipeline of ``config``: finder, generator, and the filters that can run.

    The frequency filter needs training captions and the perplexity filter a causal LM; each is
    skipped without them, and the returned signature fields say which filters ran.
    """
    from tvrbench.generators import filters
    from tvrbench.resources import sentence_model, wordnet

    wordnet_verbs = WordNetVerbs(config.wordnet, wordnet())
    if config.generator == "t5":
        from tvrbench.generators.t5 import T5Verbs

        generator = T5Verbs(config.t5)
    else:
        generator = wordnet_verbs
    parses = filters.CandidateParses(nlp)
    constraints: list = [filters.HasVerb(parses)]
    skipped = []
    if train_texts is not None:
        constraints.append(filters.VerbFrequency(parses, filters.verb_counts(nlp, train_texts), config.min_verb_count))
    else:
        skipped.append("frequency")
    embed = filters.Embeddings(sentence_model(config.meaning.embedding_model))
    constraints.append(filters.MeaningChanged(parses, embed, wordnet_verbs, config.meaning))
    if config.perplexity.lm:
        lm = filters.CausalLM(config.perplexity.lm, config.perplexity.batch_size)
        constraints.append(filters.Perplexity(lm, config.perplexity))
    else:
        skipped.append("perplexity")
    fields = {
        "generator": generator.name if config.generator == "wordnet" else f"t5={config.t5.model}",
        "lm": config.perplexity.lm or "none",
        "filters": [c.name for c in constraints],
        "skipped": skipped or "none",
    }
    search = ContrastSearch("verb", VerbPhrases(nlp), generator, constraints, config.seed, "random", config.candidate_order)
    return search, fields
