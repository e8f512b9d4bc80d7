"""The parts every contrast kind is made of, in the spirit of TextAttack.

* a :class:`CaptionItem` is one caption as the parts see it: its position, ids, text, spaCy parse
  and whatever else a kind needs per caption (the movie, the listed names);
* a :class:`TargetFinder` says which words of a caption may change (gendered nouns, names,
  verb phrases);
* a :class:`CandidateGenerator` says what one target may become (a table, WordNet, T5 beams);
* :class:`Constraint` objects say what a candidate must satisfy (has a verb, fluent, meaning
  changed), each returning a pass/fail and a score that the record keeps;
* :class:`ContrastSearch` ties them together: targets in a seeded order, each target's candidates
  in a seeded order (or in the generator's rank order), and the first candidate that passes every
  constraint becomes the contrast. Taking the first survivor of a uniform random permutation is a
  uniform choice among the survivors, so constraints are only evaluated until one passes.

A new contrast kind is a finder and a generator (and constraints if needed), put together by a
:class:`~tvrbench.generators.core.ContrastGenerator`; nothing else changes.
"""

from __future__ import annotations

import functools
import zlib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

import numpy as np

from tvrbench.generators.records import ContrastRecord, Replacement, apply_replacements, replaced_text


@dataclass(frozen=True)
class Target:
    """Tokens ``[start, end)`` of a caption that may change; ``label`` says what they are."""

    start: int
    end: int
    label: str


@dataclass(frozen=True)
class CaptionItem:
    """One caption and what the parts of a search may need of it (TextAttack's ``AttackedText``).

    ``doc`` is filled where the search runs (a Dask worker parses its own chunk); ``movie`` and
    ``names`` are the person-ID kind's (the caption's movie, and its LSMDC-listed names if given).
    """

    index: int  # position in the input captions
    caption_id: str
    video_id: str
    text: str
    doc: object = None  # spaCy Doc of ``text``
    movie: str | None = None
    names: tuple[str, ...] | None = None


@dataclass
class Request:
    """One target of one caption handed to a generator, with the caption's seeded random stream."""

    item: CaptionItem
    target: Target
    targets: Sequence[Target]  # all targets of the caption, for generators that change several
    rng: np.random.Generator


@dataclass
class Candidate:
    """One possible contrast: the original with ``replacements`` applied (``edit`` is built when read:
    a search makes hundreds of candidates per caption and keeps one)."""

    request: Request
    replacements: tuple[Replacement, ...]
    details: dict = field(default_factory=dict)

    @functools.cached_property
    def text(self) -> str:
        return replaced_text(self.request.item.text, self.replacements)

    @functools.cached_property
    def edit(self) -> list[dict]:
        return apply_replacements(self.request.item.text, self.replacements)[1]

    @property
    def original(self) -> str:
        return self.request.item.text


@dataclass(frozen=True)
class Check:
    """A constraint's verdict on one candidate; ``extra`` holds named sub-scores for the record."""

    passed: bool
    score: float | None = None
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"passed": bool(self.passed), "score": None if self.score is None else float(self.score), **self.extra}


class TargetFinder(Protocol):
    def find(self, item: CaptionItem) -> list[Target]: ...


class CandidateGenerator(Protocol):
    name: str

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]: ...


class Constraint(Protocol):
    """A generator or constraint may also have ``clear_cache()`` (as in TextAttack): the search calls
    it before each chunk, so that values a model computes in batches (sentence embeddings, causal-LM
    scores, which differ in the last float bits with the batch's other texts) depend only on the chunk."""

    name: str

    def check(self, candidates: Sequence[Candidate]) -> list[Check]: ...


def caption_rng(seed: int, caption_id: str) -> np.random.Generator:
    """A random stream that depends only on the seed and the caption, not on batch or run order."""
    return np.random.default_rng([seed, zlib.crc32(caption_id.encode("utf-8"))])


def replace_tokens(doc, start: int, end: int, replacement: str) -> Replacement:
    """Replace tokens ``[start, end)`` of ``doc`` (their text, not the whitespace after the last)."""
    span = doc[start:end]
    return Replacement(start, end, span.start_char, span.end_char, span.text, replacement)


def match_case(word: str, like: str) -> str:
    """``word`` capitalised like ``like`` (``Man`` → ``Woman``, ``MAN`` → ``WOMAN``)."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


@dataclass
class Outcome:
    """What happened to one caption: its record, or why it has none."""

    index: int
    record: ContrastRecord | None
    reason: str | None
    rejected: dict[str, int]  # candidates each constraint turned down


class ContrastSearch:
    """Targets → candidates → constraints → one contrast per caption (or a reason for none).

    ``target_order``: ``random`` tries a caption's targets in a seeded random order (a uniform choice
    of target), ``first`` in sentence order. ``candidate_order``: ``random`` or ``rank`` (the
    generator's order, e.g. beam score). ``block`` candidates per caption are checked in the first
    round, twice as many in each next one up to ``max_block``; the result does not depend on either.
    """

    def __init__(
        self,
        kind: str,
        finder: TargetFinder,
        generator: CandidateGenerator,
        constraints: Sequence[Constraint] = (),
        seed: int = 0,
        target_order: Literal["random", "first"] = "random",
        candidate_order: Literal["random", "rank"] = "random",
        block: int = 2,
        max_block: int = 32,
    ):
        self.kind = kind
        self.finder = finder
        self.generator = generator
        self.constraints = list(constraints)
        self.seed = seed
        self.target_order = target_order
        self.candidate_order = candidate_order
        self.block = block
        self.max_block = max(block, max_block)

    def run(self, items: Sequence[CaptionItem]) -> list[Outcome]:
        """Contrasts for ``items`` (a chunk, parsed), in their order. The result depends only on the
        chunk, so a resumed run ends byte-identical to an uninterrupted one."""
        for part in (self.generator, *self.constraints):
            if hasattr(part, "clear_cache"):
                part.clear_cache()
        outcomes: dict[int, Outcome] = {}
        queues: dict[int, list[Request]] = {}
        for item in items:
            rng = caption_rng(self.seed, item.caption_id)
            targets = self.finder.find(item)
            if not targets:
                outcomes[item.index] = Outcome(item.index, None, "no target", {})
                continue
            order = rng.permutation(len(targets)) if self.target_order == "random" else range(len(targets))
            queues[item.index] = [Request(item, targets[i], targets, rng) for i in order]
        had_candidates: set[int] = set()
        rejected = {index: Counter() for index in queues}
        while queues:  # one round per target rank: every caption's next target
            requests = [queue.pop(0) for queue in queues.values()]
            candidate_lists = [
                [candidates[i] for i in request.rng.permutation(len(candidates))] if self.candidate_order == "random" else candidates
                for request, candidates in zip(requests, self.generator.generate(requests))
            ]
            had_candidates.update(request.item.index for request, candidates in zip(requests, candidate_lists) if candidates)
            for request, (candidate, checks, turned_down) in zip(requests, self._first_survivors(candidate_lists)):
                index = request.item.index
                rejected[index].update(turned_down)
                if candidate is not None:
                    record = self._record(candidate, checks)
                    outcomes[index] = Outcome(index, record, None, dict(rejected[index]))
                    del queues[index]
                elif not queues[index]:
                    reason = "no candidate passed the filters" if index in had_candidates else "no candidate"
                    outcomes[index] = Outcome(index, None, reason, dict(rejected[index]))
                    del queues[index]
        return [outcomes[item.index] for item in items]

    def _first_survivors(self, candidate_lists: list[list[Candidate]]) -> list[tuple[Candidate | None, dict, Counter]]:
        """Per list: its first candidate passing every constraint (checked a growing block at a time), that
        candidate's checks, and how many candidates each constraint turned down before it."""
        found: list[tuple[Candidate | None, dict]] = [(None, {})] * len(candidate_lists)
        turned_down = [Counter() for _ in candidate_lists]
        open_lists = [i for i, candidates in enumerate(candidate_lists) if candidates]
        offset, block = 0, self.block
        while open_lists:
            window = [(i, c) for i in open_lists for c in candidate_lists[i][offset : offset + block]]
            alive = list(range(len(window)))
            checks: list[dict] = [{} for _ in window]
            for constraint in self.constraints:
                if not alive:
                    break
                verdicts = constraint.check([window[k][1] for k in alive])
                for k, verdict in zip(alive, verdicts):
                    checks[k][constraint.name] = verdict.to_json()
                alive = [k for k, verdict in zip(alive, verdicts) if verdict.passed]
            for k, (i, candidate) in enumerate(window):  # in list order: the first hit is the first survivor
                if found[i][0] is not None:
                    continue
                if len(checks[k]) == len(self.constraints) and all(c["passed"] for c in checks[k].values()):
                    found[i] = (candidate, checks[k])
                else:
                    turned_down[i].update(name for name, c in checks[k].items() if not c["passed"])
            offset += block
            block = min(2 * block, self.max_block)  # captions still open are the hard ones: bigger batches
            open_lists = [i for i in open_lists if found[i][0] is None and offset < len(candidate_lists[i])]
        return [(candidate, checks, turned) for (candidate, checks), turned in zip(found, turned_down)]

    def _record(self, candidate: Candidate, checks: dict) -> ContrastRecord:
        item = candidate.request.item
        return ContrastRecord(
            caption_id=item.caption_id,
            video_id=item.video_id,
            original=candidate.original,
            contrast=candidate.text,
            kind=self.kind,
            edit=candidate.edit,
            filters=checks,
            details=candidate.details,
        )
