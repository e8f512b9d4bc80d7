"""Cheap checks the word-edit kinds share (no model): a candidate reaches the language model only when
it passes them. Each reads a candidate's ``details``: ``original`` and ``substitute``, the words
given up and brought in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from tvrbench.generators.base import Candidate, Check
from tvrbench.generators.edits.lexicon import WordNetFacts


class MeaningChanged:
    """The meaning changes: the substitute is no synonym, hypernym or hyponym of the original noun ("dog"
    → "animal", "poodle"), nor a synonym or similar word of the original adjective ("big" → "huge").
    The settings' word lists already keep such words apart; this catches what they miss (a user's list,
    a noun's other senses). ``relation`` says what it found."""

    name = "meaning-changed"

    def __init__(self, facts: WordNetFacts, pos: Literal["noun", "adjective"]):
        self.related = facts.related_nouns if pos == "noun" else facts.related_adjectives

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        checks = []
        for candidate in candidates:
            relation = self.related(candidate.details["original"], candidate.details["substitute"])
            checks.append(Check(relation is None, None, {"relation": relation}))
        return checks


class NewToCaption:
    """The substitute is not a word of the caption already: "a black and white dog" must not become "a
    white and white dog", nor "a cat chases a dog" "a dog chases a dog"."""

    name = "new-word"

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        checks = []
        for candidate in candidates:
            words = {token.lower_ for token in candidate.request.item.doc} | {token.lemma_.lower() for token in candidate.request.item.doc}
            checks.append(Check(candidate.details["substitute"].lower() not in words))
        return checks
