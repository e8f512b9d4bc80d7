"""Attribute contrasts: one adjective becomes another value of the same property ("a man in a *red*
shirt" → "... a *blue* shirt", "a *young* man" → "an *old* man").

* targets: adjectives of a property in the settings that describe a noun of the property's classes
  ("red" of a thing, not of a person; "young" of a person or an animal);
* source: the words of the property's other values, with the article made to agree;
* constraints: the meaning changes (WordNet: no synonym or similar word), the word is new to the caption.

The properties are settings (``configs/contrast/attribute.yaml``): a new one ("weather": sunny, rainy,
snowy for a day or a scene) is a few lines there, no code.
"""

from __future__ import annotations

from collections.abc import Sequence

from tvrbench.generators.base import Candidate, CaptionItem, Request, Target, match_case, replace_tokens
from tvrbench.generators.config import AttributeConfig, Property
from tvrbench.generators.edits.constraints import MeaningChanged, NewToCaption
from tvrbench.generators.edits.grammar import with_articles
from tvrbench.generators.edits.lexicon import WordNetFacts
from tvrbench.generators.edits.recipe import Collection, EditContrasts, Recipe

NOUNS = ("NOUN", "PROPN", "PRON")
PERSON_WORDS = frozenset({"he", "she", "someone", "somebody", "person", "people", "they", "everyone"})


def described_noun(adjective):
    """The noun ``adjective`` describes: the noun it modifies ("a *red* shirt", "a red and *white* shirt"),
    or the subject it is said of ("the car is *red*"); None otherwise."""
    token = adjective
    while token.dep_ == "conj" and token.head is not token:
        token = token.head
    if token.dep_ in ("amod", "compound", "nmod") and token.head.pos_ in NOUNS:
        return token.head
    if token.dep_ in ("acomp", "attr", "oprd"):
        return next((child for child in token.head.children if child.dep_ in ("nsubj", "nsubjpass")), None)
    return None


def noun_class(noun, facts: WordNetFacts) -> str | None:
    """A noun token's class (``person`` for names and personal pronouns, else WordNet's first sense)."""
    if noun.pos_ == "PROPN" or noun.lower_ in PERSON_WORDS:
        return "person"
    return facts.noun_class(noun.lemma_.lower())


class Adjectives:
    """Targets: the adjectives of a property that describe a noun of the property's classes."""

    def __init__(self, properties: dict[str, Property], facts: WordNetFacts):
        self.properties = properties
        self.facts = facts
        for name, p in properties.items():
            facts.check_synsets([*p.nouns, *p.except_], f"properties.{name}")

    def applicable(self, token) -> list[str]:
        """The properties ``token`` is a value of and may describe its noun with."""
        word = token.lower_
        named = [name for name, p in self.properties.items() if any(word in (w.lower() for w in value) for value in p.values)]
        if not named or token.pos_ not in ("ADJ", "NOUN", "VERB"):
            return []
        noun = described_noun(token)
        if noun is None:
            return []
        lemma, found = noun.lemma_.lower(), noun_class(noun, self.facts)
        named_by = self.facts.named
        return [
            name
            for name in named
            if named_by(lemma, found, self.properties[name].nouns) and not named_by(lemma, found, self.properties[name].except_)
        ]

    def find(self, item: CaptionItem) -> list[Target]:
        return [Target(token.i, token.i + 1, token.lower_) for token in item.doc if self.applicable(token)]


class OtherValues:
    """Candidates: every word of the property's other values, the article before it made to agree."""

    name = "property-values"

    def __init__(self, adjectives: Adjectives):
        self.adjectives = adjectives

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        lists = []
        for request in requests:
            doc, target = request.item.doc, request.target
            token = doc[target.start]
            candidates, seen = [], {token.lower_}
            for name in self.adjectives.applicable(token):
                for value in self.adjectives.properties[name].values:
                    if token.lower_ in (w.lower() for w in value):
                        continue
                    for word in value:
                        if word.lower() in seen:
                            continue
                        seen.add(word.lower())
                        edit = with_articles(doc, (replace_tokens(doc, target.start, target.end, match_case(word, token.text)),))
                        details = {"property": name, "original": token.lower_, "substitute": word.lower()}
                        candidates.append(Candidate(request, edit, details))
            lists.append(candidates)
        return lists


class AttributeContrasts(EditContrasts):
    """Attribute contrasts: ``AttributeContrasts(AttributeConfig()).contrasts(captions)``."""

    kind = "attribute"

    def __init__(self, config: AttributeConfig = AttributeConfig()):
        super().__init__(config)

    def recipe(self, collection: Collection) -> Recipe:
        adjectives = Adjectives(self.config.properties, self.facts)
        return Recipe(adjectives, OtherValues(adjectives), [MeaningChanged(self.facts, "adjective"), NewToCaption()])
