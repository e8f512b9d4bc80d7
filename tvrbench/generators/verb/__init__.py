"""Verb-phrase contrasts: the recipe (:mod:`~tvrbench.generators.verb.recipe`) and its parts, one module each."""

from tvrbench.generators.verb.recipe import VerbContrasts

__all__ = ["VerbContrasts"]
