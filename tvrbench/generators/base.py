"""The parts every contrast kind is made of, in the spirit of TextAttack.

* a :class:`CaptionItem` is one caption as the parts see it: its position, ids, text, spaCy parse
  and whatever else a kind needs per caption (the movie, the listed names);
* a :class:`TargetFinder` says which words of a caption may change (gendered nouns, names,
  verb phrases);
* a :class:`CandidateSource` says what one target may become (a table, WordNet, T5 beams);
* :class:`Constraint` objects say what a candidate must satisfy, each returning a pass/fail and a
  score that the record keeps: the search's *constraints* are checked on every candidate (cheap
  ones: no model), its *filters* only as far as needed (a language model, sentence embeddings);
* a :class:`Ranker` says in which order a target's candidates are tried (a seeded shuffle, a
  weighted draw, the source's own rank);
* :class:`ContrastSearch` ties them together: targets in a seeded order, each target's candidates
  that pass the constraints in the ranker's order, and the first that passes every filter becomes
  the contrast. Taking the first survivor of a random order drawn with weights is a draw among the
  survivors with those weights, so filters are only evaluated until one passes.

What a whole set must satisfy (no substitute in more than a share of the records) is the generator's
set policy (:class:`~tvrbench.generators.set_policy.SubstituteCap`). A new contrast kind is a finder and a
source (and constraints, filters and a ranker if needed), put together in one recipe by a
:class:`~tvrbench.generators.core.ContrastGenerator`; nothing else changes.
"""

from __future__ import annotations

import copy
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
    a search makes hundreds of candidates per caption and keeps one). ``checks`` gathers what each
    constraint and filter said of it, as the record keeps it."""

    request: Request
    replacements: tuple[Replacement, ...]
    details: dict = field(default_factory=dict)
    checks: dict[str, dict] = field(default_factory=dict)

    @functools.cached_property
    def text(self) -> str:
        return replaced_text(self.request.item.text, self.replacements)

    @functools.cached_property
    def edit(self) -> list[dict]:
        return apply_replacements(self.request.item.text, self.replacements)[1]

    @property
    def original(self) -> str:
        return self.request.item.text

    def copy(self) -> "Candidate":
        """The same candidate with its own details and checks, for another search to fill in."""
        return Candidate(self.request, self.replacements, dict(self.details), dict(self.checks))


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


class CandidateSource(Protocol):
    name: str

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]: ...


class Constraint(Protocol):
    """Checks a batch of candidates. A part whose results depend on what else shares a model's batch
    (sentence embeddings, language-model scores) batches each target's candidates alone, so that a
    caption's contrast never depends on the captions around it (:func:`by_target`); a part that
    keeps such results per target has ``clear_cache()``, which the search calls before each chunk."""

    name: str

    def check(self, candidates: Sequence[Candidate]) -> list[Check]: ...


class Ranker(Protocol):
    """The order a target's candidates are tried in; a random one draws from the caption's own stream."""

    name: str

    def order(self, request: Request, candidates: list[Candidate]) -> list[Candidate]: ...


class SeededShuffle:
    """A uniform random order: the first survivor is a uniform choice among the survivors."""

    name = "random"

    def order(self, request: Request, candidates: list[Candidate]) -> list[Candidate]:
        return [candidates[i] for i in request.rng.permutation(len(candidates))]


class AsGiven:
    """The source's own order (e.g. T5's beam scores)."""

    name = "rank"

    def order(self, request: Request, candidates: list[Candidate]) -> list[Candidate]:
        return candidates


class SetPolicy(Protocol):
    """What a whole set must satisfy: given a :class:`~tvrbench.generators.core.Job` and every chunk's
    records, the outcomes of the captions it searched again (:mod:`tvrbench.generators.set_policy`)."""

    name: str

    def apply(self, job, items: Sequence[CaptionItem], records: dict[int, ContrastRecord | None]) -> dict[int, "Outcome"]: ...


def setting_text(value) -> str:
    """A setting as a signature writes it: a list joined by ``+``."""
    return "+".join(map(str, value)) if isinstance(value, list) else str(value)


def changed_settings(settings: dict, defaults: dict, named: frozenset[str] = frozenset()) -> str:
    """The settings that differ from their defaults, by name (``choice.max_share=0.03``), as ir_measures
    names a measure's parameters; ``default`` when none does. ``named`` are left out: the signature
    has a field of their own (seed, lm)."""

    def leaves(values: dict, prefix: str = "") -> dict[str, object]:
        flat = {}
        for key, value in values.items():
            flat |= leaves(value, f"{prefix}{key}.") if isinstance(value, dict) else {f"{prefix}{key}": value}
        return flat

    ours, theirs = leaves(settings), leaves(defaults)
    ours |= {key: None for key in theirs if key not in ours}  # a table's entry taken out (GenderConfig.male_nouns) is a change too
    changed = [f"{key}={setting_text(value)}" for key, value in ours.items() if key not in named and value != theirs.get(key)]
    return ",".join(changed) or "default"


def changed_fields(settings, fields: Sequence[str] | None = None, leave_out: frozenset[str] = frozenset()) -> str:
    """:func:`changed_settings` of one settings object, or of those of its ``fields``, as a part adds them
    to its name in the signature (``max_loss=2.0``); empty when none differs."""
    include = set(fields) if fields is not None else None
    changed = changed_settings(settings.model_dump(include=include), type(settings)().model_dump(include=include), leave_out)
    return "" if changed == "default" else changed


def described(part) -> str:
    """A part as the signature names it, as ir_measures names a measure: its name, and in brackets its
    settings that differ from their defaults (``reads-as-real(max_loss=2)``). The record's checks are
    keyed by the name alone, which readers of records look up."""
    changed = getattr(part, "changed", "")
    return f"{part.name}({changed})" if changed else part.name


def by_target(candidates: Sequence[Candidate]) -> dict[tuple[int, int], list[int]]:
    """Positions of ``candidates`` grouped by their caption and target, in order: the batches a model
    scores, so its results for a caption depend on that caption alone."""
    groups: dict[tuple[int, int], list[int]] = {}
    for k, candidate in enumerate(candidates):
        groups.setdefault((candidate.request.item.index, candidate.request.target.start), []).append(k)
    return groups


MAX_WORDS = 100  # a longer caption (MSR-VTT's longest has 30 words) is left out: no parse, no model sees it
TOO_LONG = f"longer than {MAX_WORDS} words"


def parsed_text(text: str) -> str:
    """What spaCy parses of a caption: nothing of one over ``MAX_WORDS`` (100,000 words took 1.9 GB)."""
    return "" if len(text.split()) > MAX_WORDS else text


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
    """Targets → candidates → constraints → ranker → filters: one contrast per caption (or a reason for none).

    ``target_order``: ``random`` tries a caption's targets in a seeded random order (a uniform choice
    of target), ``first`` in sentence order. Every candidate of a target is checked against the
    ``constraints``; the ranker orders those that pass; ``block`` of them per caption go through the
    ``filters`` in the first round, twice as many in each next one up to ``max_block``, until one
    passes them all or ``max_tried`` have been tried. With filters that judge each candidate alone
    the result does not depend on the block sizes; a filter that compares a target's candidates
    with each other (the verb's reads-as-real) sees them a block at a time, so there the blocks are
    a setting. A model filter's batches are made of one target's candidates of one round, the same
    in every run.
    """

    def __init__(
        self,
        kind: str,
        finder: TargetFinder,
        source: CandidateSource,
        constraints: Sequence[Constraint] = (),
        ranker: Ranker = SeededShuffle(),
        filters: Sequence[Constraint] = (),
        seed: int = 0,
        target_order: Literal["random", "first"] = "random",
        block: int = 2,
        max_block: int = 32,
        max_tried: int | None = None,
    ):
        self.kind = kind
        self.finder = finder
        self.source = source
        self.constraints = list(constraints)
        self.ranker = ranker
        self.filters = list(filters)
        self.seed = seed
        self.target_order = target_order
        self.block = block
        self.max_block = max(block, max_block)
        self.max_tried = max_tried  # candidates per target the filters see (None: all)
        self.eligible_lists: dict[tuple, tuple[list[Candidate], Counter]] = {}

    def with_constraint(self, constraint: Constraint) -> "ContrastSearch":
        """The same search with one more constraint, checked first (a set's over-used substitutes), and
        its own eligible lists."""
        search = copy.copy(self)
        search.constraints = [constraint, *self.constraints]
        search.eligible_lists = {}
        return search

    def eligible(self, requests: Sequence[Request]) -> list[tuple[list[Candidate], Counter]]:
        """Each request's candidates that pass every constraint, and how many each constraint turned
        down. Kept per target: a whole-set pass (the verb kind's prior) and the search share them."""
        keys = [(r.item.caption_id, r.item.text, r.target.start, r.target.end) for r in requests]
        todo = {key: request for key, request in zip(keys, requests) if key not in self.eligible_lists}
        todo_requests = list(todo.values())
        for key, candidates in zip(todo, self.source.generate(todo_requests) if todo_requests else []):
            turned_down: Counter = Counter()
            for constraint in self.constraints:
                if not candidates:
                    break
                verdicts = constraint.check(candidates)
                for candidate, verdict in zip(candidates, verdicts):
                    candidate.checks[constraint.name] = verdict.to_json()
                turned_down[constraint.name] += sum(not verdict.passed for verdict in verdicts)
                candidates = [candidate for candidate, verdict in zip(candidates, verdicts) if verdict.passed]
            self.eligible_lists[key] = (candidates, turned_down)
        return [([c.copy() for c in self.eligible_lists[key][0]], self.eligible_lists[key][1]) for key in keys]

    def run(self, items: Sequence[CaptionItem]) -> list[Outcome]:
        """Contrasts for ``items`` (a chunk, parsed), in their order. The result depends only on the
        chunk, so a resumed run ends byte-identical to an uninterrupted one."""
        for part in (self.source, *self.constraints, self.ranker, *self.filters):
            if hasattr(part, "clear_cache"):
                part.clear_cache()
        outcomes: dict[int, Outcome] = {}
        queues: dict[int, list[Request]] = {}
        for item in items:
            if not parsed_text(item.text):
                outcomes[item.index] = Outcome(item.index, None, TOO_LONG if item.text.strip() else "no target", {})
                continue
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
            candidate_lists = []
            for request, (candidates, turned_down) in zip(requests, self.eligible(requests)):
                rejected[request.item.index].update(turned_down)
                if candidates:
                    had_candidates.add(request.item.index)
                candidate_lists.append(self.ranker.order(request, candidates)[: self.max_tried])
            for request, (candidate, turned_down) in zip(requests, self._first_survivors(candidate_lists)):
                index = request.item.index
                rejected[index].update(turned_down)
                if candidate is not None:
                    outcomes[index] = Outcome(index, self._record(candidate), None, dict(rejected[index]))
                    del queues[index]
                elif not queues[index]:
                    reason = "no candidate passed the filters" if index in had_candidates else "no candidate"
                    outcomes[index] = Outcome(index, None, reason, dict(rejected[index]))
                    del queues[index]
        return [outcomes[item.index] for item in items]

    def _first_survivors(self, candidate_lists: list[list[Candidate]]) -> list[tuple[Candidate | None, Counter]]:
        """Per list: its first candidate passing every filter (checked a growing block at a time), and
        how many candidates each filter turned down before it."""
        found: list[Candidate | None] = [None] * len(candidate_lists)
        turned_down = [Counter() for _ in candidate_lists]
        open_lists = [i for i, candidates in enumerate(candidate_lists) if candidates]
        offset, block = 0, self.block
        while open_lists:
            window = [(i, c) for i in open_lists for c in candidate_lists[i][offset : offset + block]]
            alive = list(range(len(window)))
            for constraint in self.filters:
                if not alive:
                    break
                verdicts = constraint.check([window[k][1] for k in alive])
                for k, verdict in zip(alive, verdicts):
                    window[k][1].checks[constraint.name] = verdict.to_json()
                alive = [k for k, verdict in zip(alive, verdicts) if verdict.passed]
            passed = set(alive)
            for k, (i, candidate) in enumerate(window):  # in list order: the first hit is the first survivor
                if found[i] is not None:
                    continue
                if k in passed:
                    found[i] = candidate
                else:
                    turned_down[i].update(name for name, c in candidate.checks.items() if not c["passed"])
            offset += block
            block = min(2 * block, self.max_block)  # captions still open are the hard ones: bigger batches
            open_lists = [i for i in open_lists if found[i] is None and offset < len(candidate_lists[i])]
        return list(zip(found, turned_down))

    def _record(self, candidate: Candidate) -> ContrastRecord:
        item = candidate.request.item
        return ContrastRecord(
            caption_id=item.caption_id,
            video_id=item.video_id,
            original=candidate.original,
            contrast=candidate.text,
            kind=self.kind,
            edit=candidate.edit,
            filters=candidate.checks,
            details=candidate.details,
        )
