"""The contrast search and the set policy on a synthetic contrast kind built here from the library's own
parts (a finder, a source, filters that judge candidates one by one, spaCy's blank English tokenizer):
the first survivor against a plain loop, whatever the block sizes; ``max_tried``; constraints checked
once per target; the seeded draw; the cap on a substitute's share (:class:`SubstituteCap`) against a
plain count and on a whole run; and the settings a contrast signature names."""

from __future__ import annotations

import functools
import math
import zlib
from collections import Counter

import numpy as np
import pytest

from tvrbench.generators.base import (
    AsGiven,
    Candidate,
    CaptionItem,
    Check,
    ContrastSearch,
    Request,
    SeededShuffle,
    Target,
    changed_settings,
    replace_tokens,
)
from tvrbench.generators.config import ChoiceConfig, GenderConfig, VerbConfig
from tvrbench.generators.core import ContrastGenerator, contrast_signature
from tvrbench.generators.ranker import SeededDraw
from tvrbench.generators.records import ContrastRecord
from tvrbench.generators.set_policy import SubstituteCap
from tvrbench.generators.verb.pool import new_lemma
from tvrbench.io.captions import Captions


@functools.cache
def blank():
    """spaCy's tokenizer alone: the synthetic kind needs token offsets, no model."""
    import spacy

    return spacy.blank("en")


class Marked:
    """Targets: the words that start with ``x``."""

    def find(self, item: CaptionItem) -> list[Target]:
        return [Target(t.i, t.i + 1, "x") for t in item.doc if t.text.startswith("x")]


class Numbered:
    """Candidates: ``WORD-0`` … ``WORD-(n-1)``, substitute ``s0`` … ; counts the targets it is asked for."""

    name = "numbered"

    def __init__(self, n: int):
        self.n = n
        self.asked: Counter = Counter()

    def generate(self, requests):
        self.asked.update((r.item.caption_id, r.target.start) for r in requests)
        return [[self.candidate(r, k) for k in range(self.n)] for r in requests]

    @staticmethod
    def candidate(request, k: int) -> Candidate:
        doc, target = request.item.doc, request.target
        return Candidate(request, (replace_tokens(doc, target.start, target.end, f"{doc[target.start].text}-{k}"),), {"k": k, "substitute": f"s{k}"})


def lucky(name: str, share: int):
    """Whether filter ``name`` passes candidate k of a target: a fixed pseudo-random rule, one in ``share``
    (never in caption ``c6``)."""
    return lambda caption_id, start, k: caption_id != "c6" and zlib.crc32(f"{name}:{caption_id}:{start}:{k}".encode()) % share == 0


class Judge:
    """A filter (or constraint) that judges each candidate alone by ``rule``; records what it was shown."""

    def __init__(self, name: str, rule):
        self.name = name
        self.rule = rule
        self.shown: list[tuple[str, int, int]] = []

    def check(self, candidates):
        keys = [(c.request.item.caption_id, c.request.target.start, c.details["k"]) for c in candidates]
        self.shown += keys
        return [Check(bool(self.rule(*key)), float(key[2])) for key in keys]


TEXTS = ["a xcat sees a xdog", "xone", "the xsun and the xmoon and xstars", "no target here", "a xbird sings", "xa xb xc xd", "xnever xnothing"]
RULES = {"first": lucky("first", 3), "second": lucky("second", 2)}


def items(texts=TEXTS) -> list[CaptionItem]:
    return [CaptionItem(k, f"c{k}", f"v{k}", text, blank()(text)) for k, text in enumerate(texts)]


def search(n=12, ranker=AsGiven(), order="first", constraints=(), **sizes) -> ContrastSearch:
    filters = [Judge(name, rule) for name, rule in RULES.items()]
    return ContrastSearch("synthetic", Marked(), Numbered(n), constraints, ranker, filters, seed=3, target_order=order, **sizes)


def as_json(outcomes) -> list:
    return [(o.record.to_json() if o.record else None, o.reason, o.rejected) for o in outcomes]


def plain_loop(caption_items, n, max_tried=None) -> list:
    """The first candidate passing both rules, target by target in sentence order, and what each filter
    turned down before it (a candidate the first filter turns down is not shown to the second)."""
    results = []
    for item in caption_items:
        targets = Marked().find(item)
        if not targets:
            results.append((None, "no target", {}))
            continue
        turned_down: Counter = Counter()
        found = None
        for target in targets:
            for k in range(min(n, max_tried or n)):
                failed = next((name for name, rule in RULES.items() if not rule(item.caption_id, target.start, k)), None)
                if failed is None:
                    found = (target.start, k)
                    break
                turned_down[failed] += 1
            if found:
                break
        if found is None:
            results.append((None, "no candidate passed the filters", dict(turned_down)))
            continue
        start, k = found
        words = [t.text for t in item.doc]
        words[start] = f"{words[start]}-{k}"
        results.append((" ".join(words), None, dict(turned_down)))
    return results


@pytest.mark.parametrize("block, max_block", [(1, 1), (2, 32), (3, 4), (64, 64)])
def test_the_first_survivor_is_the_plain_loop_s_whatever_the_blocks(block, max_block):
    """Filters that judge candidates one by one give the first candidate passing them all, and the same
    turned-down counts, however many are checked per round."""
    outcomes = search(block=block, max_block=max_block).run(items())
    got = [(o.record.contrast if o.record else None, o.reason, o.rejected) for o in outcomes]
    assert got == plain_loop(items(), 12)
    assert {o.reason for o in outcomes} == {None, "no target", "no candidate passed the filters"}  # every branch is taken


def test_a_seeded_search_does_not_depend_on_the_blocks():
    """With a random target order and a shuffled ranker, the records are the same for any block sizes."""
    runs = [as_json(search(30, SeededShuffle(), "random", block=b, max_block=m).run(items())) for b, m in [(1, 1), (2, 32), (5, 7), (64, 64)]]
    assert all(run == runs[0] for run in runs) and sum(record is not None for record, _, _ in runs[0]) >= 3


def test_filters_run_lazily_and_max_tried_stops_there():
    """Block by block, the filters see no candidate past the first survivor's round; with ``max_tried`` the
    filters see at most that many candidates of a target, and a survivor beyond them is not found."""
    one_by_one = search(block=1, max_block=1)
    one_by_one.run(items())
    shown = Counter((caption, start) for caption, start, _ in one_by_one.filters[0].shown)
    for item in items():
        for target in Marked().find(item):
            tried = next((k + 1 for k in range(12) if all(rule(item.caption_id, target.start, k) for rule in RULES.values())), 12)
            assert shown[(item.caption_id, target.start)] in (tried, 0)  # 0: a target after the one that gave the contrast
    for max_tried in (1, 2, 4):
        limited = search(block=3, max_block=3, max_tried=max_tried)
        outcomes = limited.run(items())
        assert max(Counter((c, s) for c, s, _ in limited.filters[0].shown).values()) <= max_tried
        assert [(o.record.contrast if o.record else None, o.reason, o.rejected) for o in outcomes] == plain_loop(items(), 12, max_tried)
    unlimited = {o.record.caption_id for o in search().run(items()) if o.record}
    assert {o.record.caption_id for o in search(max_tried=1).run(items()) if o.record} < unlimited  # the limit cost some records


def test_constraints_see_every_candidate_once_per_target():
    """The constraints judge every candidate of a target, eagerly, and a target's eligible candidates are
    computed once: asked again (the verb kind's prior pass, then the search), the source is not called."""
    constraint = Judge("cheap", lambda caption, start, k: k % 2 == 0)
    synthetic = search(constraints=[constraint])
    requests = [Request(item, target, Marked().find(item), None) for item in items() for target in Marked().find(item)]
    first = synthetic.eligible(requests)
    assert Counter(constraint.shown) == Counter((r.item.caption_id, r.target.start, k) for r in requests for k in range(12))
    assert all([c.details["k"] for c in found] == list(range(0, 12, 2)) and down == {"cheap": 6} for found, down in first)
    again = synthetic.eligible(requests)
    assert set(synthetic.source.asked.values()) == {1} and len(constraint.shown) == 12 * len(requests)
    assert [[c.text for c in found] for found, _ in again] == [[c.text for c in found] for found, _ in first]
    assert all(a is not b for (x, _), (y, _) in zip(first, again) for a, b in zip(x, y))  # copies: a search fills in its own checks
    outcomes = synthetic.run(items())
    assert all(set(o.record.filters) == {"cheap", "first", "second"} and o.record.filters["cheap"]["passed"] for o in outcomes if o.record)
    assert all(int(o.record.contrast.split("-")[-1].split()[0]) % 2 == 0 for o in outcomes if o.record)


# --------------------------------------------------------------------------- the seeded draw


def drawn(weights: dict[str, float], seed: int) -> list[str]:
    """The order SeededDraw puts candidates of lemmas with these prior weights in, for one seed."""
    item = items(["a xcat"])[0]
    request = Request(item, Marked().find(item)[0], [], np.random.default_rng(seed))
    candidates = [Candidate(request, (), {"new_lemma": lemma}) for lemma in weights]
    ranker = SeededDraw({lemma: math.log(w) for lemma, w in weights.items()}, new_lemma, ChoiceConfig())
    return [c.details["new_lemma"] for c in ranker.order(request, candidates)]


def test_the_draw_is_seeded_and_follows_its_weights():
    """The same seed gives the same order, another seed another; each lemma comes first as often as its
    weight's share says (a Gumbel-max draw), and the association weighs it too."""
    weights = {"walk": 1.0, "run": 2.0, "jump": 4.0, "swim": 1.0}
    assert drawn(weights, 7) == drawn(weights, 7) and len({tuple(drawn(weights, seed)) for seed in range(10)}) > 1
    firsts = Counter(drawn(weights, seed)[0] for seed in range(4000))
    for lemma, weight in weights.items():
        share = weight / sum(weights.values())
        assert abs(firsts[lemma] / 4000 - share) < 4 * math.sqrt(share * (1 - share) / 4000), (lemma, firsts)
    item = items(["a xcat"])[0]
    request = Request(item, Marked().find(item)[0], [], np.random.default_rng(0))
    fitted = [Candidate(request, (), {"new_lemma": lemma}) for lemma in ("cut", "dig")]
    ranker = SeededDraw({"cut": 0.5}, new_lemma, ChoiceConfig(spread=2.0), association=lambda candidates: [2.0, 0.0])
    np.testing.assert_allclose(ranker.log_weights(fitted), [1.5 * 2.0 + 2.0 * 0.5, 0.0])  # no association, no prior: weight 1
    assert ranker.changed == "spread=2.0" and SeededDraw({}, new_lemma, ChoiceConfig()).log_weights(fitted).tolist() == [0.0, 0.0]


# --------------------------------------------------------------------------- the set's cap


def record(index: int, substitute: str) -> ContrastRecord:
    return ContrastRecord(f"c{index}", f"v{index}", "a", "b", "synthetic", details={"new_lemma": substitute})


def test_records_over_the_cap_against_a_plain_count():
    """Each substitute keeps exactly min(its records, max(1, ⌊share · records⌋)), whichever records it
    keeps is a choice by caption id and seed alone (not by position or dict order)."""
    rng = np.random.default_rng(0)
    lemmas = [f"verb{k}" for k in rng.zipf(1.6, size=600) % 40]
    records = {index: None if index % 7 == 0 else record(index, lemma) for index, lemma in enumerate(lemmas)}
    cap = SubstituteCap(0.02, new_lemma, seed=5)
    over = cap.over(records)
    counts = Counter(r.details["new_lemma"] for r in records.values() if r is not None)
    limit = max(1, math.floor(0.02 * sum(counts.values())))
    assert limit == 10 and over == sorted(over) and all(records[index] is not None for index in over)
    kept = Counter(records[index].details["new_lemma"] for index in records if records[index] is not None and index not in over)
    assert kept == {lemma: min(count, limit) for lemma, count in counts.items()} and len(over) == sum(max(0, n - limit) for n in counts.values())
    shuffled = {index: records[index] for index in rng.permutation(list(records))}
    assert cap.over(shuffled) == over
    moved = {index + 1000: value for index, value in records.items()}  # the same captions at other positions
    assert {moved[index].caption_id for index in cap.over(moved)} == {records[index].caption_id for index in over}
    assert SubstituteCap(0.02, new_lemma, seed=6).over(records) != over
    assert SubstituteCap(1.0, new_lemma).over(records) == [] and SubstituteCap(0.001, new_lemma).over({1: record(1, "a"), 2: record(2, "b")}) == []


class Synthetic(ContrastGenerator):
    """A contrast kind of the synthetic parts under a cap: every caption's first choice is the same substitute."""

    kind = "synthetic"

    def __init__(self, substitutes: int, max_share: float, rounds: int = 3):
        super().__init__(VerbConfig(), chunk_size=16)
        self.substitutes, self.max_share, self.rounds = substitutes, max_share, rounds

    @property
    def nlp(self):
        return blank()

    def search(self, context=None) -> ContrastSearch:
        return ContrastSearch("synthetic", Marked(), Numbered(self.substitutes), ranker=AsGiven())

    def set_policy(self) -> SubstituteCap:
        return SubstituteCap(self.max_share, lambda found: found.details["substitute"], seed=0, rounds=self.rounds)


@pytest.mark.parametrize("captions, substitutes", [(150, 5), (150, 60), (40, 2)])
def test_the_cap_holds_on_the_records_a_run_keeps(captions, substitutes):
    """After the set policy, no substitute is in more than max(1, ⌊2 % of the records left⌋) of them,
    also when the records dropped in its last round lower that bound."""
    generator = Synthetic(substitutes, 0.02)
    outcomes = generator.outcomes([f"a xthing number {k}" for k in range(captions)])
    kept = [o.record for o in outcomes if o.record is not None]
    counts = Counter(r.details["substitute"] for r in kept)
    assert kept and max(counts.values()) <= max(1, math.floor(0.02 * len(kept))), (len(kept), counts)
    assert {o.reason for o in outcomes if o.record is None} <= {"substitute over the set's cap", "no candidate"}  # none left under the cap
    redone = [r for r in kept if "over the set's cap" in r.filters]
    assert all(list(r.filters)[0] == "over the set's cap" and r.details["substitute"] != "s0" for r in redone) and redone


# --------------------------------------------------------------------------- the settings a signature names


def test_changed_settings_name_what_differs_from_the_defaults():
    """``settings:default`` for the defaults; a changed nested field by its dotted name, a list joined by
    ``+``; the fields the signature has of its own (seed, lm) are not repeated."""
    defaults = VerbConfig().model_dump()
    assert changed_settings(defaults, defaults) == "default"
    changed = VerbConfig(seed=3, lm="ngram", choice={"judged": 8}, argument_fit={"evidence": "seen"}, wordnet={"relations": ["antonym", "lm"]})
    named = "wordnet.relations=antonym+lm,argument_fit.evidence=seen,choice.judged=8"
    assert changed_settings(changed.model_dump(), defaults, frozenset({"seed", "lm"})) == named
    assert changed_settings(changed.model_dump(), defaults) == f"seed=3,lm=ngram,{named}"
    captions = Captions(["c0"], ["a man is cooking"], ["v0"])
    for config, settings in [(VerbConfig(seed=3, lm="ngram"), "default"), (changed, named)]:
        signature = str(contrast_signature("verb", captions, config, ("spacy",), seed=config.seed, lm="cmu"))
        assert f"|settings:{settings}|seed:3|lm:cmu" in signature and "seed=" not in signature and "lm=" not in signature


def test_a_smaller_table_is_not_signed_as_the_default():
    """A table setting (the gender nouns) with entries removed differs from the default: two runs with
    different tables must not share a signature."""
    defaults = GenderConfig().model_dump()
    fewer = GenderConfig(male_nouns={"man": ["woman"]}).model_dump()
    assert changed_settings(fewer, defaults) not in ("default", changed_settings(defaults, defaults))
    assert changed_settings(GenderConfig(male_nouns={}).model_dump(), defaults) != changed_settings(fewer, defaults)
    assert changed_settings(GenderConfig(male_nouns={**GenderConfig().male_nouns, "lad": ["lass"]}).model_dump(), defaults) == "male_nouns.lad=lass"
