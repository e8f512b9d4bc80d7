"""The order a target's fitting verbs are tried in: a seeded draw that spreads the substitutes.

Each candidate's draw weight is exp(``association_weight`` · how well the new verb goes with the
caption's nouns) · ((n_o + 1) / (n_s + 1)) ** ``spread``, where n_o is how often the captions would give
up that verb and n_s how often they would take it up if every caption changed a uniform target to a
uniform fitting verb (:func:`substitute_prior`, one pass over the whole set before the search). So a
verb that fits everywhere ("walk", "buy") is not drawn everywhere, and the verbs captions use most
("talk", "play") come back as substitutes about as often as they leave: no word tells the positive
from the contrast (docs/audit.md). The draw is a Gumbel-max on the caption's own random stream; the
search then takes the first candidate in this order that passes every filter, which is a weighted
draw among those that do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np

from tvrbench.generators.base import Candidate, Request, changed_fields
from tvrbench.generators.config import ChoiceConfig


class SeededDraw:
    """A ranker: the candidates in the order of a weighted draw without replacement. ``association``
    gives each candidate's association with the caption's nouns (the argument fit's strength; none:
    the prior alone)."""

    name = "draw"

    def __init__(
        self,
        prior: dict[str, float],
        lemma_of: Callable[[Candidate], str],
        settings: ChoiceConfig,
        association: Callable[[Sequence[Candidate]], list[float]] | None = None,
    ):
        self.prior = prior
        self.lemma_of = lemma_of
        self.association_weight = settings.association_weight
        self.spread = settings.spread
        self.association = association
        self.changed = changed_fields(settings, ("association_weight", "spread"))

    def order(self, request: Request, candidates: list[Candidate]) -> list[Candidate]:
        keys = self.log_weights(candidates) + request.rng.gumbel(size=len(candidates))
        return [candidates[k] for k in np.argsort(-keys, kind="stable")]

    def log_weights(self, candidates: Sequence[Candidate]) -> np.ndarray:
        """log(draw weight): ``association_weight`` · the association, plus ``spread`` · the verb's prior."""
        strength = np.array(self.association(candidates) if self.association is not None else [0.0] * len(candidates), dtype=float)
        prior = np.array([self.prior.get(self.lemma_of(c), 0.0) for c in candidates])
        return self.association_weight * strength + self.spread * prior


def substitute_prior(originals: Counter, eligible: Sequence[tuple[int, list[str]]]) -> dict[str, float]:
    """Each verb's log draw weight, log((n_o + 1) / (n_s + 1)): ``originals`` counts each verb as an
    original (a caption's share, 1 / its targets), ``eligible`` gives each target's number of targets
    in its caption and the lemmas of its fitting candidates; a caption taking a uniform target and a
    uniform lemma gives each lemma 1 / lemmas / targets as a substitute."""
    substitutes: Counter = Counter()
    for targets, lemmas in eligible:
        distinct = set(lemmas)
        substitutes.update({lemma: 1 / len(distinct) / targets for lemma in distinct})
    return {lemma: float(np.log((originals[lemma] + 1) / (substitutes[lemma] + 1))) for lemma in substitutes}
