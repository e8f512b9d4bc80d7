"""What the word-edit kinds ask of WordNet 3.0: a noun's class and kind, whether two words mean the same
or one names a kind of the other, and the common members of a kind.

* A noun's **class** is the lexicographer file of its first sense (``animal``, ``artifact``, ``food``);
  the attribute kind reads it ("red" describes things, "young" persons and animals).
* A sense's **kind** is the most specific of the settings' kinds (WordNet synsets: ``musical_instrument.n.01``,
  ``motor_vehicle.n.01``) above it: the object kind swaps a noun for another of its kind ("cello" →
  "piano"), which reads like a real caption far more often than any noun would.
* **Related** words are never a contrast (issue 45): a synonym (a shared synset), a hypernym or a
  hyponym ("dog" → "animal", "poodle") of any sense; for adjectives, a synonym or a similar word
  (WordNet's satellites: "big" and "huge").
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterable, Sequence

from tvrbench.errors import InputError
from tvrbench.resources import wordnet

THINGS = frozenset({"noun.artifact", "noun.object", "noun.substance", "noun.food", "noun.plant"})  # classes of things one can see


def kind_of_synset(synset, kinds: Collection[str]) -> str | None:
    """The most specific of ``kinds`` (synset names) that ``synset`` is or is a kind of."""
    depth: dict[str, int] = {}
    for path in synset.hypernym_paths():
        for position, ancestor in enumerate(path):
            if ancestor.name() in kinds:
                depth[ancestor.name()] = max(depth.get(ancestor.name(), -1), position)
    return max(sorted(depth), key=depth.get) if depth else None


class WordNetFacts:
    """The questions above, each answer cached (a run asks the same nouns again and again). ``senses``:
    how many of a noun's most frequent senses may give it a kind ("table" is first a table of figures)."""

    def __init__(self, senses: int = 3):
        self.wn = wordnet()
        self.senses = senses

    def nouns(self, lemma: str) -> list:
        return self.wn.synsets(lemma.replace(" ", "_"), "n")

    @functools.lru_cache(maxsize=100_000)
    def noun_class(self, lemma: str) -> str | None:
        """The lexicographer file of the noun's first sense, without ``noun.`` (None: not a WordNet noun)."""
        synsets = self.nouns(lemma)
        return synsets[0].lexname().removeprefix("noun.") if synsets else None

    @functools.lru_cache(maxsize=100_000)
    def above(self, lemma: str, senses: int) -> frozenset[str]:
        """The names of the noun's first ``senses`` senses and of every synset above one of them."""
        return frozenset(a.name() for synset in self.nouns(lemma)[:senses] for path in synset.hypernym_paths() for a in path)

    def is_kind_of(self, lemma: str, synset: str) -> bool:
        """Whether one of the noun's first ``senses`` senses is ``synset`` or a kind of it."""
        return synset in self.above(lemma, self.senses)

    def named(self, lemma: str, noun_class: str | None, names: Sequence[str], senses: int | None = None) -> bool:
        """Whether ``names`` name the noun: ``any``, its class (``noun_class``: ``artifact``), a synset one
        of its first ``senses`` senses (the facts' own by default) is a kind of (``clothing.n.01``), or
        the noun itself. The counting and swap kinds read the first sense alone: three senses make a
        person of "page" and "letter" (a page boy, a letterman)."""
        above = self.above(lemma, senses or self.senses)
        return any(name in ("any", lemma, noun_class) or (".n." in name and name in above) for name in names)

    def joined_apart(self, before: str, lemma: str) -> bool:
        """Whether the word before the noun makes with it a noun of WordNet's that is no kind of it ("hot
        dog", "teddy bear", "baby monitor"; a "young person" is a person, "red wine" a wine)."""
        joined, alone = f"{before} {lemma}", self.nouns(lemma)
        return bool(self.nouns(joined) and alone) and alone[0].name() not in self.above(joined, 1)

    def rare_first_sense(self, lemma: str) -> bool:
        """Whether the noun's first sense was seen at most once in SemCor (WordNet's order says little then)
        and a thing is among its next two senses ("stroller", "monitor": persons first, prams and screens
        in a video; "kid" and "guy" keep their persons, seen 53 and 33 times)."""
        synsets = self.nouns(lemma)
        if not synsets:
            return False
        seen = sum(name.count() for name in synsets[0].lemmas() if name.name().lower() == lemma.replace(" ", "_"))
        return seen <= 1 and any(synset.lexname() in THINGS for synset in synsets[1:3])

    def check_synsets(self, names: Iterable[str], key: str) -> None:
        """Refuse a synset name WordNet does not have, naming the settings ``key``."""
        for name in names:
            if ".n." in name:
                try:
                    self.wn.synset(name)
                except Exception:  # NLTK raises ValueError or WordNetError by what is wrong with the name
                    raise InputError("settings", f"{key}: WordNet has no synset {name!r}") from None

    @functools.lru_cache(maxsize=100_000)
    def _closure(self, lemma: str, pos: str) -> tuple[frozenset, frozenset]:
        """The word's synsets and every hypernym of them (instances' too)."""
        synsets = frozenset(self.wn.synsets(lemma.replace(" ", "_"), pos))
        above = frozenset(s for synset in synsets for s in synset.closure(lambda s: s.hypernyms() + s.instance_hypernyms()))
        return synsets, above

    def related_nouns(self, original: str, new: str) -> str | None:
        """``synonym``, ``hypernym`` (``new`` is a kind above ``original``), ``hyponym`` or None."""
        (ours, above_ours), (theirs, above_theirs) = self._closure(original, "n"), self._closure(new, "n")
        if ours & theirs:
            return "synonym"
        if theirs & above_ours:
            return "hypernym"
        if ours & above_theirs:
            return "hyponym"
        return None

    @functools.lru_cache(maxsize=100_000)
    def _adjective_meanings(self, lemma: str) -> tuple[frozenset, frozenset]:
        """The adjective's synsets, and those WordNet says are similar to one of them."""
        synsets = frozenset(self.wn.synsets(lemma.replace(" ", "_"), "a"))  # NLTK's "a" takes the satellites ("s") too
        return synsets, frozenset(similar for synset in synsets for similar in synset.similar_tos())

    def related_adjectives(self, original: str, new: str) -> str | None:
        """``synonym`` (a shared synset), ``similar`` (one of the other's similar synsets: "large", "huge")
        or None. Two words both similar to a third are not related: "red" and "blue" are each similar
        to "chromatic"."""
        (ours, near_ours), (theirs, near_theirs) = self._adjective_meanings(original), self._adjective_meanings(new)
        if ours & theirs:
            return "synonym"
        return "similar" if ours & near_theirs or theirs & near_ours else None

    def members(self, kind: str, limit: int, counts: Iterable[str] = ()) -> list[str]:
        """The ``limit`` commonest one-word nouns of ``kind`` (SemCor counts of the sense), for a source;
        ``counts`` are words to skip (already proposed)."""
        skip = set(counts)
        scored: dict[str, int] = {}
        for synset in self.wn.synset(kind).closure(lambda s: s.hyponyms()):
            for lemma in synset.lemmas():
                name = lemma.name().lower()
                if name.isalpha() and name not in skip:
                    scored[name] = max(scored.get(name, 0), lemma.count())
        ranked = sorted((-count, name) for name, count in scored.items() if count > 0)
        return [name for _, name in ranked[:limit]]
