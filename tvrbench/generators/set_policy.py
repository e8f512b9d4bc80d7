"""What a whole contrast set must satisfy, checked once every chunk is searched
(:meth:`~tvrbench.generators.core.Job.finish`): no substitute in more than a share of the records.
"""

from __future__ import annotations

import math
import zlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tvrbench.generators.base import Candidate, CaptionItem, Check, Outcome
from tvrbench.generators.records import ContrastRecord


class Excluded:
    """A constraint: the candidate's substitute is not one of ``substitutes`` (a set's over-used ones, profanity)."""

    def __init__(self, substitutes: frozenset[str], substitute_of: Callable[[Candidate], str], name: str = "over the set's cap"):
        self.substitutes = substitutes
        self.substitute_of = substitute_of
        self.name = name

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        return [Check(self.substitute_of(candidate) not in self.substitutes) for candidate in candidates]


@dataclass(frozen=True)
class SubstituteCap:
    """A set policy: no substitute (the verb kind: the new verb's lemma) in more than ``max_share`` of the
    set's records, so that no word gives the negatives away. The captions beyond the cap, in a seeded
    order, are searched again without the over-used substitutes, up to ``rounds`` times; those still
    over it then lose their record (a record over the cap is worse than none)."""

    max_share: float
    substitute_of: Callable[[Candidate | ContrastRecord], str]
    seed: int = 0
    rounds: int = 3

    @property
    def name(self) -> str:
        return f"cap({self.max_share:g})"

    def apply(self, job, items: Sequence[CaptionItem], records: dict[int, ContrastRecord | None]) -> dict[int, Outcome]:
        by_index = {item.index: item for item in items}
        redone: dict[int, Outcome] = {}
        excluded: set[str] = set()
        for round_ in range(self.rounds + 1):
            over = self.over(records)
            if not over:
                break
            if round_ == self.rounds:
                while over:  # each record dropped lowers the cap of the records left: drop until none is over it
                    for index in over:
                        redone[index], records[index] = Outcome(index, None, "substitute over the set's cap", {}), None
                    over = self.over(records)
                break
            excluded |= {self.substitute_of(records[index]) for index in over}
            search = job.search.with_constraint(Excluded(frozenset(excluded), self.substitute_of))
            for outcome in job.run([by_index[index] for index in over], search):
                redone[outcome.index] = outcome
                records[outcome.index] = outcome.record
        return redone

    def over(self, records: dict[int, ContrastRecord | None]) -> list[int]:
        """Indices of the records beyond the cap of their substitute; which ones is a seeded choice."""
        by_substitute: dict[str, list[int]] = defaultdict(list)
        for index, record in records.items():
            if record is not None:
                by_substitute[self.substitute_of(record)].append(index)
        limit = max(1, math.floor(self.max_share * sum(len(v) for v in by_substitute.values())))
        over = []
        for indices in by_substitute.values():
            ordered = sorted(indices, key=lambda index: zlib.crc32(f"{self.seed}:{records[index].caption_id}".encode()))
            over += ordered[limit:]
        return sorted(over)
