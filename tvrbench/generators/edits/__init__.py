"""The word-edit contrast kinds of VideoCon (Bansal et al., CVPR 2024) and SugarCrepe (Hsieh et al.,
NeurIPS 2023), made offline: object, attribute, relation, counting, swap, add and event order.

Each kind is one file of parts (its targets, its candidate source, its cheap constraints) and a
:class:`~tvrbench.generators.edits.recipe.EditContrasts` subclass; what they share (the draw that
spreads substitutes, the language model's judgement, the cap on a substitute's share) is
:mod:`~tvrbench.generators.edits.recipe`'s. Their word lists are settings (``configs/contrast/KIND.yaml``).

:data:`EDIT_KINDS` is the registry: a kind's name, where its generator and its settings are, and what
it does in one line (the command's help, the dataset card). It names modules by string, so reading
it (the command line, ``mc build``) loads none of them.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class EditKind:
    name: str  # the command (``tvrbench contrast NAME``), the records' ``kind`` and the settings file's name
    module: str  # of tvrbench.generators.edits
    generator: str  # the EditContrasts subclass in it
    settings: str  # the settings class in tvrbench.generators.config
    summary: str  # what changes, one line: the command's help
    example: str  # one real contrast of the kind, for the help and the dataset card

    def generator_class(self):
        return getattr(importlib.import_module(f"tvrbench.generators.edits.{self.module}"), self.generator)

    def settings_class(self):
        return getattr(importlib.import_module("tvrbench.generators.config"), self.settings)


EDIT_KINDS = {
    kind.name: kind
    for kind in (
        EditKind(
            "object", "object", "ObjectContrasts", "ObjectConfig",
            "Replace one noun of a thing or an animal by another of its kind (WordNet), judged by a language model.",
            '"a woman plays a song on the cello" -> "... on the piano"',
        ),
        EditKind(
            "attribute", "attribute", "AttributeContrasts", "AttributeConfig",
            "Replace one adjective by another value of its property (colour, size, material, age, state).",
            '"a man in a red shirt is singing" -> "a man in a blue shirt is singing"',
        ),
        EditKind(
            "relation", "relation", "RelationContrasts", "RelationConfig",
            "Replace a spatial or relational word by its contrast (on / under, into / out of, behind / in front of).",
            '"a cat jumps onto the table" -> "a cat jumps off the table"',
        ),
        EditKind(
            "counting", "counting", "CountingContrasts", "CountingConfig",
            "Change a number or a quantity, with the noun, verbs and pronouns made to agree.",
            '"a dog runs" -> "two dogs run"',
        ),
        EditKind(
            "swap", "swap", "SwapContrasts", "SwapConfig",
            "Let two nouns (or two adjectives) of the caption trade places.",
            '"a dog chases a cat" -> "a cat chases a dog"',
        ),
        EditKind(
            "add", "add", "AddContrasts", "AddConfig",
            "Add an object or an attribute the video does not show, where it reads naturally.",
            '"a girl sings" -> "a little girl sings"',
        ),
        EditKind(
            "event-order", "event_order", "EventOrderContrasts", "EventOrderConfig",
            "Reverse the order of two events the caption states (then, after, before, while).",
            '"a man opens the door and then walks in" -> "a man walks in and then opens the door"',
        ),
    )
}  # fmt: skip
