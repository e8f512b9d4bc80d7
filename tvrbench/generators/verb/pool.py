"""Where verb contrasts come from: the offline pool of verbs a target may become, inflected like the
original with lemminflect, and what the captions being contrasted do with their verbs.

The pool merges what its sources propose (:mod:`~tvrbench.generators.verb.sources`; the settings'
``Relation`` names them). A verb + particle is replaced whole
when WordNet knows it as one verb (``pick_up``); otherwise only the verb changes. Synonyms (any lemma
sharing a verb synset with the original) and the caption's other verbs are never proposed.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Iterable, Sequence

from tvrbench.generators.base import Candidate, Request, changed_fields, match_case, replace_tokens
from tvrbench.generators.config import WordNetGeneratorConfig
from tvrbench.generators.records import ContrastRecord, Replacement
from tvrbench.generators.verb.evidence import Usage
from tvrbench.generators.verb.frames import NounClasses
from tvrbench.generators.verb.lexicon import AUXILIARIES, VerbLexicon
from tvrbench.lm.primer import UNPRIMED

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


class CaptionVerbs:
    """What a caption collection does with its verbs: how often each occurs, and its usage table (and
    the captions its judge reads first)."""

    def __init__(self, docs: Iterable, classes: NounClasses):
        docs = list(docs)
        self.counts: Counter = Counter(t.lemma_.lower() for doc in docs for t in doc if t.pos_ == "VERB")
        self.forms: set[str] = {t.lower_ for doc in docs for t in doc if t.pos_ == "VERB"}  # as the captions write their verbs
        self.usage = Usage.of_docs(docs, classes)
        self.prior: dict[str, float] = {}  # log draw weight per verb, filled by VerbContrasts.prepare
        self.primers = UNPRIMED  # the judge's, drawn from the captions by VerbContrasts.prepare

    def common(self, min_count: int, limit: int) -> tuple[str, ...]:
        """The ``limit`` most frequent one-word verbs seen at least ``min_count`` times."""
        counts = [(-n, v) for v, n in self.counts.items() if n >= min_count and v.isalpha() and v not in AUXILIARIES]
        return tuple(v for _, v in sorted(counts)[:limit])

    def with_docs(self, docs: Iterable, classes: NounClasses) -> "CaptionVerbs":
        """A collection of these captions and ``docs`` together."""
        merged = CaptionVerbs(docs, classes)
        merged.counts.update(self.counts)
        merged.forms |= self.forms
        merged.usage = merged.usage.merged(self.usage)
        return merged


class VerbPool:
    """The offline candidate source: what the listed sources propose for a target (:mod:`~tvrbench.generators.verb.sources`),
    merged, each verb named by the first source in the list that proposes it; never a synonym (a lemma
    sharing a verb synset with the original), never another verb of the same caption. The verbs of
    sources that read only the verb and its slot come first, sorted by name (and cached per verb);
    those of sources that read the caption's words come after them, sorted by name."""

    name = "wordnet"

    def __init__(self, sources: Sequence, lexicon: VerbLexicon, settings: WordNetGeneratorConfig = WordNetGeneratorConfig()):
        self.by_verb = [source for source in sources if not getattr(source, "reads_context", False)]
        self.by_context = [source for source in sources if getattr(source, "reads_context", False)]
        self.lexicon = lexicon
        self.changed = changed_fields(settings)

    @functools.lru_cache(maxsize=20000)
    def alternatives(self, lemma: str, head: str, slot: str | None = None) -> tuple[tuple[str, str], ...]:
        """(new lemma, relation) for ``lemma``, sorted by name; ``head`` is its first word, which must
        change; ``slot``: the original's object (``o:NOUN``) or the preposition after it (``p:WORD``)."""
        excluded = self.excluded(lemma, head)
        found: dict[str, str] = {}
        for source in self.by_verb:
            for name in source.verbs(lemma, slot):
                if name not in found and self.allowed(name, head, excluded):
                    found[name] = source.relation
        return tuple(sorted(found.items()))

    def excluded(self, lemma: str, head: str) -> frozenset[str]:
        return self.lexicon.synonyms(lemma) | self.lexicon.synonyms(head)

    @staticmethod
    def allowed(name: str, head: str, excluded: frozenset[str]) -> bool:
        """Not a synonym, the same head verb, be/have/do, a light verb, or a lemma of more than two words."""
        words = name.split("_")
        if name in excluded or name in AUXILIARIES | LIGHT_VERBS or words[0] == head:
            return False
        return len(words) <= MAX_WORDS and name.replace("_", "").isalpha()

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        lefts = [request.item.text[: request.item.doc[request.target.start].idx] for request in requests]
        places = [(left, request.item.doc[request.target.start].tag_) for left, request in zip(lefts, requests)]
        in_context = [source.verbs_at(places) for source in self.by_context]
        lists = []
        for k, request in enumerate(requests):
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
            fills = self.fills(lemma, head, verb.tag_, verb.text, slot)
            found = {name: relation for name, relation, _ in fills}
            excluded = self.excluded(lemma, head)
            added: dict[str, str] = {}
            for source, proposed in zip(self.by_context, in_context):
                for name in proposed[k]:
                    if name not in found and name not in added and self.allowed(name, head, excluded):
                        added[name] = source.relation
            fills += tuple((name, relation, match_case(inflect(name, verb.tag_), verb.text)) for name, relation in sorted(added.items()))
            lists.append(
                [
                    Candidate(
                        request,
                        (Replacement(span.token_start, span.token_end, span.char_start, span.char_end, span.original, fill),),
                        {"relation": relation, "original_lemma": lemma, "new_lemma": name},
                    )
                    for name, relation, fill in fills
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


@functools.lru_cache(maxsize=1)
def profane_words() -> frozenset[str]:
    """better-profanity's word list. No substitute brings one into a set whose captions do not use it
    as a verb themselves ("bitching about", a Web bigram, came up for "talking about"; "killing"
    stays where the captions show games)."""
    from importlib.resources import files

    lines = files("better_profanity").joinpath("profanity_wordlist.txt").read_text(encoding="utf-8").lower().splitlines()
    return frozenset(line.strip() for line in lines if line.strip().isalpha())  # single words ("call girl" is not "call")
