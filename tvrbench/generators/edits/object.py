"""Object contrasts: one noun of a thing or an animal becomes another noun of its kind ("a woman plays a
song on the *cello*" → "... on the *piano*", "a man is driving a *car*" → "... a *truck*").

* targets: nouns whose kind is one of the settings' WordNet synsets (``kinds``: musical instruments,
  motor vehicles, mammals, dishes, garments, rooms, sports, ...), the most specific one above the
  noun's first concrete sense (an artifact, an animal, a food, a body part, ...: a "shelf" is a
  support, not the continental shelf; a "table" furniture, not a table of figures). Never a person, a
  noun of a name or a compound ("grand theft *auto*", "a *fondant* baby", "hot *dogs*", "polar *bear*",
  "electric *guitar*": an adjective and noun that WordNet names together), a noun of
  ``skip`` (too general: thing, stuff; or read as something else than WordNet's first sense: a
  "queen" is an insect there), one that names a kind itself ("room", "bird": every other noun of the
  kind is a kind of it), nor a plural with a meaning of its own ("glasses" are not glass). A sport
  takes no article ("playing basketball" → "playing tennis"); with one, the noun is taken in its other
  senses ("throws a basketball" → "throws a football"). On MSR-VTT's 1k-A test captions a quarter of
  the captions have one (cars, dogs, guitars, kitchens, beaches, suits, ...).
* source: the nouns of the kind's pool (the nouns of the kind the captions use, and its commonest
  WordNet nouns that are common on the Web, each of the kind in its first concrete sense): first
  those the language model expects where the noun stands (its likeliest next words after the words
  before it, with "a" and "an" both), then those nearest to the noun (GloVe cosine), ``nearest`` of
  each; in the original's number, the article made to agree ("a dog" → "an elephant").
* constraints: the meaning changes (WordNet: no synonym, hypernym or hyponym of any sense: "car" never
  becomes "automobile" nor "jeep"), the word is new to the caption.

Whether the new noun fits the verb and the scene ("rides a horse" → "rides a snake") is the language
model's to judge, with ``max_loss`` 3 nats (4 for the attribute kind). Measured with gemma3-270m on the
1k-A captions: the original noun is usually the model's own likeliest, so a swap loses; of the best
candidate of each target only a quarter read better than the original. The model's expected nouns
and a tighter ``max_loss`` (4 → 3) brought the share of pairs the model prefers the original from 70 %
to 60 %, the share of captions with a target that get a record staying at 80 %.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

import numpy as np

from tvrbench.generators.base import Candidate, CaptionItem, Request, Target, match_case, replace_tokens
from tvrbench.generators.config import NounKinds, ObjectConfig
from tvrbench.generators.edits.constraints import MeaningChanged, NewToCaption
from tvrbench.generators.edits.grammar import ARTICLES, plural, singular, with_articles
from tvrbench.generators.edits.lexicon import WordNetFacts, kind_of_synset
from tvrbench.generators.edits.recipe import Collection, EditContrasts, Recipe
from tvrbench.lm.models import LanguageModel

# The WordNet classes of senses that name a thing one can see: a noun's first sense of one of them
# decides its kind ("shelf" is a support, not the continental shelf; "table" a piece of furniture, not
# a table of figures). An act (a sport) only where the noun is not counted ("playing basketball").
CONCRETE = frozenset({"noun.artifact", "noun.animal", "noun.food", "noun.plant", "noun.object", "noun.body", "noun.substance"})


def in_compound(token) -> bool:
    """Whether ``token`` is part of a compound or a name ("grand theft *auto*", "a *fondant* baby")."""
    return token.dep_ in ("compound", "flat") or any(child.dep_ in ("compound", "flat") for child in token.children)


def counted(token) -> bool:
    """Whether the noun is used as a countable thing: in the plural, or after an article or a determiner."""
    return token.tag_ == "NNS" or any(child.dep_ in ("det", "poss", "nummod") for child in token.children)


class ObjectNouns:
    """Targets: the nouns of a listed kind (see the module's docstring for those left out)."""

    def __init__(self, config: NounKinds, facts: WordNetFacts):
        facts.check_synsets(config.kinds, "kinds")
        self.facts = facts
        self.kinds = tuple(config.kinds)
        self.countable = tuple(kind for kind in config.kinds if kind not in config.uncountable)
        self.skip = frozenset(word.lower() for word in config.skip)

    @functools.lru_cache(maxsize=100_000)
    def names_a_kind(self, lemma: str) -> bool:
        """Whether one of the noun's first senses is a listed kind ("room", "bird", "vegetable")."""
        return any(synset.name() in self.kinds for synset in self.facts.nouns(lemma)[: self.facts.senses])

    @functools.lru_cache(maxsize=100_000)
    def own_plural(self, form: str, lemma: str) -> bool:
        """Whether a plural form means something its singular does not ("glasses", "pants")."""
        plural_senses, senses = self.facts.nouns(form), self.facts.nouns(lemma)
        return bool(plural_senses) and (not senses or plural_senses[0] != senses[0])

    def kind_of(self, token) -> str | None:
        """The kind of a noun token of the caption, or None when it is no target."""
        if token.pos_ != "NOUN" or token.tag_ not in ("NN", "NNS") or not token.is_alpha or in_compound(token):
            return None
        lemma = token.lemma_.lower()
        if lemma in self.skip or token.lower_ in self.skip or self.names_a_kind(lemma):
            return None
        if any(self.facts.nouns(f"{child.lower_} {lemma}") for child in token.lefts if child.dep_ == "amod"):
            return None  # "hot dogs", "polar bears": the adjective names the noun with it ("polar cat" was rejected blind)
        if token.tag_ == "NNS" and self.own_plural(token.lower_, lemma):
            return None
        if self.in_a_title(token):
            return None
        return self.kind(lemma, counted(token))

    def in_a_title(self, token) -> bool:
        """Whether the noun is likely a word of a title or a name: the object of "by" ("the song hero by
        *skillet*": a band) or of "of" after a game or a show ("kissing in the game of *throne*"). Read
        blind, "... in the game of bed" was rejected by both readers."""
        if token.dep_ != "pobj":
            return False
        preposition = token.head
        if preposition.lower_ == "by":
            return True
        return preposition.lower_ == "of" and preposition.head.pos_ == "NOUN" and self.facts.noun_class(preposition.head.lemma_.lower()) == "act"

    @functools.lru_cache(maxsize=100_000)
    def kind(self, lemma: str, is_counted: bool = True, senses: int | None = None) -> str | None:
        """The most specific listed kind above the noun's first concrete sense (:data:`CONCRETE`; an act
        too when it is not counted) among its first ``senses``; None when that sense has none. A plant
        with no kind gives way to the food after it ("onion": the plant, then the vegetable)."""
        classes = CONCRETE if is_counted else CONCRETE | {"noun.act"}
        kinds = self.countable if is_counted else self.kinds
        synsets = self.facts.nouns(lemma)
        if not synsets or synsets[0].lexname() == "noun.person":
            return None
        for synset in synsets[: senses or self.facts.senses]:
            if synset.lexname() in classes:
                found = kind_of_synset(synset, kinds)
                if found is not None or synset.lexname() != "noun.plant":  # the plant before its fruit ("onion")
                    return found
        return None

    def find(self, item: CaptionItem) -> list[Target]:
        return [Target(token.i, token.i + 1, token.lemma_.lower()) for token in item.doc if self.kind_of(token)]


class Similarity:
    """The cosine of two words' GloVe vectors (6B, 50d); -1 when either has none."""

    def __init__(self):
        from tvrbench.generators.verb.counterfit import glove_vectors

        self.index, self.matrix = glove_vectors()

    @functools.lru_cache(maxsize=50_000)
    def vector(self, word: str) -> np.ndarray | None:
        row = self.index.get(word)
        if row is None:
            return None
        vector = np.asarray(self.matrix[row], dtype=np.float64)
        return vector / np.linalg.norm(vector)

    def __call__(self, word: str, other: str) -> float:
        a, b = self.vector(word), self.vector(other)
        return -1.0 if a is None or b is None else float(a @ b)


class KindMembers:
    """Candidates: the other nouns of the target's kind, in its number, the article made to agree."""

    name = "kind-members"

    def __init__(self, nouns: ObjectNouns, collection: Collection, config: NounKinds, lm: LanguageModel):
        from tvrbench.generators.verb.evidence import web_log10

        self.nouns = nouns
        self.lm = lm
        self.expected_words = config.expected_words
        self.members = config.members
        self.min_web_log10 = config.min_web_log10
        self.web_log10 = web_log10
        self.similarity = Similarity()
        self.min_similarity = config.min_similarity
        self.limit = config.nearest
        self.used = sorted(lemma for (lemma, pos), _ in collection.words.items() if pos == "NOUN" and lemma.isalpha())

    def fits(self, word: str, kind: str) -> bool:
        """Whether ``word`` may come in for a noun of ``kind``."""
        return (
            word not in self.nouns.skip
            and not self.nouns.names_a_kind(word)
            and self.nouns.kind(word, kind in self.nouns.countable) == kind
            and not self.nouns.own_plural(plural(word), word)
        )

    @functools.cached_property
    def used_by_kind(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for word in self.used:
            kind = self.nouns.kind(word, True) or self.nouns.kind(word, False)
            if kind is not None and self.fits(word, kind):
                found.setdefault(kind, []).append(word)
        return found

    @functools.lru_cache(maxsize=1000)
    def pool(self, kind: str) -> tuple[str, ...]:
        """The nouns that may come in for a noun of ``kind``: the captions' own, then WordNet's commonest."""
        used = self.used_by_kind.get(kind, [])
        common = [
            word
            for word in self.nouns.facts.members(kind, self.members, used)
            if self.web_log10(word) >= self.min_web_log10 and self.fits(word, kind)
        ]
        return tuple(dict.fromkeys([*used, *common]))

    @functools.lru_cache(maxsize=20_000)
    def nearest(self, word: str, kind: str) -> tuple[str, ...]:
        """The pool's ``nearest`` nouns to ``word`` (GloVe cosine, at least ``min_similarity``), nearest first."""
        scored = [(-self.similarity(word, other), other) for other in self.pool(kind) if other != word]
        return tuple(other for score, other in sorted(scored) if -score >= self.min_similarity)[: self.limit]

    def expected(self, requests: Sequence[Request]) -> list[list[str]]:
        """Per request, the language model's likeliest next words where its noun stands (after "a" and
        after "an" when an indefinite article is right before it), likeliest first; none from an n-gram model."""
        lefts, owners = [], []
        for k, request in enumerate(requests):
            token = request.item.doc[request.target.start]
            left = request.item.text[: token.idx].rstrip()
            variants = [left]
            if token.i > 0 and token.nbor(-1).lower_ in ARTICLES:
                stem = left[: len(left) - len(token.nbor(-1).text)]
                variants = [stem + match_case(article, token.nbor(-1).text) for article in ("a", "an")]
            lefts += variants
            owners += [k] * len(variants)
        found: list[list[list[str]]] = [[] for _ in requests]
        for k, words in zip(owners, self.lm.next_words(lefts, self.expected_words) if lefts else []):
            found[k].append(words)
        return [[word for group in itertools.zip_longest(*lists) for word in group if word] for lists in found]

    def proposed(self, words: Sequence[str], token, kind: str) -> list[str]:
        """The nouns of ``kind``'s pool among the language model's ``words``, as lemmas, at most ``nearest``."""
        found = []
        for word in words:
            if not word.islower() or len(word) < 3:
                continue
            lemma = singular(word) if token.tag_ == "NNS" else word
            if len(lemma) < 3:
                continue
            form = plural(lemma) if token.tag_ == "NNS" else lemma
            if form == word and lemma in self.pool(kind):
                found.append(lemma)
        return list(dict.fromkeys(found))[: self.limit]

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        lists = []
        for request, expected in zip(requests, self.expected(requests)):
            doc, target = request.item.doc, request.target
            token = doc[target.start]
            kind = self.nouns.kind_of(token)
            candidates = []
            words = [*self.proposed(expected, token, kind), *self.nearest(target.label, kind)] if kind else []
            for word in dict.fromkeys(words):
                if word == target.label:
                    continue
                form = plural(word) if token.tag_ == "NNS" else word
                edit = with_articles(doc, (replace_tokens(doc, target.start, target.end, match_case(form, token.text)),))
                candidates.append(Candidate(request, edit, {"kind": kind, "original": target.label, "substitute": word}))
            lists.append(candidates)
        return lists


class ObjectContrasts(EditContrasts):
    """Object contrasts: ``ObjectContrasts(ObjectConfig()).contrasts(captions)``."""

    kind = "object"

    def __init__(self, config: ObjectConfig = ObjectConfig()):
        super().__init__(config)

    @functools.cached_property
    def facts(self) -> WordNetFacts:
        return WordNetFacts(self.config.senses)

    def recipe(self, collection: Collection) -> Recipe:
        nouns = ObjectNouns(self.config, self.facts)
        return Recipe(nouns, KindMembers(nouns, collection, self.config, self.lm), [MeaningChanged(self.facts, "noun"), NewToCaption()])
