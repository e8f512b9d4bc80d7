"""Where the offline pool's verbs come from, one source per relation (``wordnet.relations`` lists those
used; the recipe builds each, :data:`~tvrbench.generators.verb.recipe.RELATIONS`). A source proposes
verb lemmas; the pool (:class:`~tvrbench.generators.verb.pool.VerbPool`) merges them, turns down
synonyms and the like, and inflects what is left.

A :class:`VerbSource` proposes from the verb and its object or preposition alone; a
:class:`ContextSource` reads the caption's words before the verb, for a batch of targets at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import ClassVar, Protocol

from tvrbench.generators.verb.lexicon import VerbLexicon
from tvrbench.generators.verb.pool import inflect


class VerbSource(Protocol):
    relation: str  # its name in ``wordnet.relations`` and in each candidate's ``relation``

    def verbs(self, lemma: str, slot: str | None) -> Iterable[str]:
        """The lemmas it proposes for ``lemma`` used with ``slot`` (``o:NOUN``, its object, or ``p:WORD``,
        the preposition after it)."""
        ...


class ContextSource(Protocol):
    relation: str
    reads_context: ClassVar[bool]  # True: the pool asks it per batch, and lists its verbs after the others'

    def verbs_at(self, places: Sequence[tuple[str, str]]) -> list[Iterable[str]]:
        """The lemmas it proposes for each (the caption up to the verb, the verb's tag)."""
        ...


class WordNetRelation:
    """The verbs WordNet relates to the verb by ``related``: its antonyms (any sense), its sister terms
    (other hyponyms of the hypernyms of its first senses), or its domain's verbs (the most common, by
    SemCor, of the lexicographer files of its senses: verb.motion, ...)."""

    def __init__(self, relation: str, related: Callable[[str], Iterable[str]]):
        self.relation = relation
        self.related = related

    def verbs(self, lemma: str, slot: str | None) -> Iterable[str]:
        return self.related(lemma)


class ListedVerbs:
    """The same verbs for every target: the caption collection's common verbs ("captions"), or
    WordNet's most frequent by the n-gram LM's unigrams ("frequent")."""

    def __init__(self, relation: str, verbs: Sequence[str]):
        self.relation = relation
        self.listed = tuple(verbs)

    def verbs(self, lemma: str, slot: str | None) -> Iterable[str]:
        return self.listed


class AttestedVerbs:
    """The verbs seen with the original's object or the preposition after it: in WordNet's examples, the
    captions, or before the preposition in a common Web bigram (``seen_with``: ``o:NOUN`` / ``p:WORD``
    → verbs)."""

    relation = "attested"

    def __init__(self, seen_with: dict[str, Sequence[str]]):
        self.seen_with = seen_with

    def verbs(self, lemma: str, slot: str | None) -> Iterable[str]:
        return self.seen_with.get(slot, ()) if slot else ()


class ExpectedVerbs:
    """The verbs a language model expects where the verb stands, given the words before it: of its
    likeliest next words, the one-word WordNet verbs in the form of the original."""

    relation = "lm"
    reads_context = True

    def __init__(self, next_words: Callable[[Sequence[str]], list[list[str]]], lexicon: VerbLexicon):
        self.next_words = next_words  # the likeliest next words after each of some left contexts
        self.lexicon = lexicon

    def verbs_at(self, places: Sequence[tuple[str, str]]) -> list[Iterable[str]]:
        from lemminflect import getLemma

        unique = list(dict.fromkeys(left for left, _ in places))
        expected = dict(zip(unique, self.next_words(unique))) if unique else {}  # the LM runs every context of the batch together
        found = []
        for left, tag in places:
            names = []
            for word in expected[left]:
                name = (getLemma(word.lower(), upos="VERB") or [""])[0]
                if name and self.lexicon.known(name) and inflect(name, tag) == word.lower():
                    names.append(name)
            found.append(names)
        return found
