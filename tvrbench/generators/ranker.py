"""The order a target's candidates are tried in: a seeded draw that spreads the substitutes (every kind
with a substitute word: verb, object, attribute, ...).

Each candidate's draw weight is exp(``association_weight`` · how well the new word goes with the
caption's nouns, for the verb kind) · ((n_o + 1) / (n_s + 1)) ** ``spread``, where n_o is how often the
captions would give up that word and n_s how often they would take it up if every caption changed a
uniform target to a uniform fitting candidate (:func:`substitute_prior`, one pass over the whole set
before the search). So a word that fits everywhere ("walk", "blue") is not drawn everywhere, and the
words captions use most ("talk", "black") come back as substitutes about as often as they leave: no
word tells the positive from the contrast (docs/audit.md). The draw is a Gumbel-max on the caption's
own random stream; the search then takes the first candidate in this order that passes every filter,
which is a weighted draw among those that do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from tvrbench.generators.base import Candidate, Request, changed_fields


class SeededDraw:
    """A ranker: the candidates in the order of a weighted draw without replacement. ``settings`` gives
    the ``spread`` (and ``association_weight``, read only with an ``association``: each candidate's
    association with the caption's nouns, the verbs' argument fit; none: the prior alone)."""

    name = "draw"

    def __init__(
        self,
        prior: dict[str, float],
        lemma_of: Callable[[Candidate], str],
        settings,
        association: Callable[[Sequence[Candidate]], list[float]] | None = None,
    ):
        self.prior = prior
        self.lemma_of = lemma_of
        self.association_weight = settings.association_weight if association is not None else 0.0
        self.spread = settings.spread
        self.association = association
        self.changed = changed_fields(settings, ("association_weight", "spread") if association is not None else ("spread",))

    def order(self, request: Request, candidates: list[Candidate]) -> list[Candidate]:
        keys = self.log_weights(candidates) + request.rng.gumbel(size=len(candidates))
        return [candidates[k] for k in np.argsort(-keys, kind="stable")]

    def log_weights(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """log(draw weight): ``association_weight`` · the association, plus ``spread`` · the word's prior."""
        strength = np.array(self.association(candidates) if self.association is not None else [0.0] * len(candidates), dtype=float)
        prior = np.array([self.prior.get(self.lemma_of(c), 0.0) for c in candidates])
        return self.association_weight * strength + self.spread * prior


def substitute_prior(originals: Counter, eligible: Sequence[tuple[int, list[str]]]) -> dict[str, float]:
    """Each word's log draw weight, log((n_o + 1) / (n_s + 1)): ``originals`` counts each word as an
    original (a caption's share, 1 / its targets), ``eligible`` gives each target's number of targets
    in its caption and the words of its fitting candidates; a caption taking a uniform target and a
    uniform lemma gives each lemma 1 / lemmas / targets as a substitute."""
    substitutes: Counter = Counter()
    for targets, lemmas in eligible:
        distinct = set(lemmas)
        substitutes.update({lemma: 1 / len(distinct) / targets for lemma in distinct})
    return {lemma: float(np.log((originals[lemma] + 1) / (substitutes[lemma] + 1))) for lemma in substitutes}
