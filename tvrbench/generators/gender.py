"""Gender contrasts for MSR-VTT (Park et al. App. A.1, SPEC §5).

Exactly one gendered noun of the table changes (chosen uniformly, seeded), so that "a man and a
woman" does not become a caption that still fits the video; then every pronoun of the noun's gender
changes too, ``her`` by its part-of-speech tag (``PRP$`` → ``his``, ``PRP`` → ``him``). Nouns are
matched by their lower-cased word whatever spaCy's tag, so a mis-tagged "guy" is not missed.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

from tvrbench.generators.base import Candidate, CaptionItem, ContrastSearch, Request, Target, match_case, replace_tokens
from tvrbench.generators.config import GenderConfig
from tvrbench.generators.core import ContrastGenerator
from tvrbench.resources import spacy_pipeline, spacy_pipeline_id


class GenderedNouns:
    """Targets: the tokens that are nouns of the table."""

    def __init__(self, config: GenderConfig):
        self.gender = {word: "male" for word in config.male_nouns} | {word: "female" for word in config.female_nouns}

    def find(self, item: CaptionItem) -> list[Target]:
        return [Target(token.i, token.i + 1, self.gender[token.lower_]) for token in item.doc if token.lower_ in self.gender]


class GenderSwap:
    """Candidates: each counterpart of the noun, with every same-gender pronoun swapped."""

    name = "gender-table"

    def __init__(self, config: GenderConfig):
        self.nouns = {**config.male_nouns, **config.female_nouns}
        self.pronouns = {"male": config.male_pronouns, "female": config.female_pronouns}

    def _pronoun(self, token, gender: str) -> str | None:
        table = self.pronouns[gender]
        return table.get(f"{token.lower_}/{token.tag_}", table.get(token.lower_))

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        lists = []
        for request in requests:
            doc, target = request.item.doc, request.target
            pronoun_swaps = tuple(
                replace_tokens(doc, token.i, token.i + 1, match_case(new, token.text))
                for token in doc
                if (new := self._pronoun(token, target.label)) is not None
            )
            noun = doc[target.start]
            lists.append(
                [
                    Candidate(
                        request,
                        (replace_tokens(doc, target.start, target.end, match_case(counterpart, noun.text)), *pronoun_swaps),
                        {"noun": noun.lower_, "gender": target.label, "pronouns": len(pronoun_swaps)},
                    )
                    for counterpart in self.nouns[noun.lower_]
                ]
            )
        return lists


class GenderContrasts(ContrastGenerator):
    """Gender contrasts of any captions: ``GenderContrasts(config).contrasts(captions)``."""

    kind = "gender"

    def __init__(self, config: GenderConfig = GenderConfig()):
        super().__init__(config)

    @functools.cached_property
    def nlp(self):
        return spacy_pipeline(self.config.spacy_model)

    def search(self, context=None) -> ContrastSearch:
        return ContrastSearch("gender", GenderedNouns(self.config), GenderSwap(self.config), (), seed=self.config.seed)

    def signature_fields(self, search: ContrastSearch) -> dict:
        return {"pipeline": spacy_pipeline_id(self.nlp), "lm": self.lm.name}
