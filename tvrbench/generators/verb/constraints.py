"""The verb recipe's constraints: what every candidate must satisfy before the draw orders them (cheap:
no language model, no sentence embedding).

* :class:`FitsFrame` — the new verb fits the original's arguments (:mod:`~tvrbench.generators.verb.fit`);
* :class:`VerbFrequency` — its new verbs are common (Park et al. §3.2): more than 30 times in training
  captions, or without them frequent enough in the n-gram LM's unigram table;
* :class:`FormFrequency` — people write the form it shows;
* :class:`VerbChanged` — the cheap half of Park et al.'s meaning rule (SPEC §5).

Each checks a batch of candidates and returns a :class:`~tvrbench.generators.base.Check` per
candidate whose score the record keeps. They read only the fill's verbs: the verb the generator put
in, when it says, else the verbs spaCy tags inside the replaced span. A fill with no verb is the
has-verb filter's to judge: these pass it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tvrbench.generators.base import Candidate, Check, changed_fields
from tvrbench.generators.config import FrequencyConfig, MeaningConfig
from tvrbench.generators.verb.evidence import web_log10
from tvrbench.generators.verb.fit import FrameFits
from tvrbench.generators.verb.measures import CandidateParses, TrainingFrequency, UnigramFrequency, VerbChanges
from tvrbench.numerics import RATIO, rounded


class FitsFrame:
    """The candidate's new verb fits the frame the original verb is used in. Its score is how well the
    verb goes with the caption's nouns (:meth:`~tvrbench.generators.verb.fit.ArgumentFit.strength`)."""

    name = "argument-fit"

    def __init__(self, frame_fits: FrameFits):
        self.frame_fits = frame_fits
        self.changed = changed_fields(frame_fits.fit.config, leave_out=frozenset({"enabled"}))

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        return [Check(fits, strength if fits else None) for fits, strength in self.frame_fits.of(candidates)]


class VerbFrequency:
    """Score: the lowest frequency among the new verbs (count or log10 probability, by the source,
    which the signature's ``frequency`` field names)."""

    name = "frequency"

    def __init__(self, parses: CandidateParses, source: TrainingFrequency | UnigramFrequency):
        self.parses = parses
        self.source = source

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        checks = []
        for verbs in self.parses.new_verbs(candidates):
            if not verbs:
                checks.append(Check(True, None))
                continue
            lowest = min(self.source.score(v) for v in verbs)
            checks.append(Check(self.source.passes(lowest), round(lowest, 6) if np.isfinite(lowest) else None))
        return checks


class FormFrequency:
    """People write the verb form the contrast shows ("rumoring", "garaging" they do not, though
    "rumor" and "garage" are common). Score: log10 of the form's share of the Web's words (Google's
    unigram counts); it passes at ``min_form_log10`` or more, or when the captions use the form. The
    lemma's frequency (:class:`VerbFrequency`) sums every form, so it cannot see this."""

    name = "form-frequency"

    def __init__(self, caption_forms: frozenset[str], settings: FrequencyConfig):
        self.caption_forms = caption_forms
        self.min_log10 = settings.min_form_log10
        self.changed = changed_fields(settings, ("min_form_log10",))

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        checks = []
        for candidate in candidates:
            form = (candidate.replacements[0].replacement.split() or [""])[0].lower()
            share = web_log10(form)
            passed = share >= self.min_log10 or form in self.caption_forms
            checks.append(Check(bool(passed), rounded(share, RATIO) if np.isfinite(share) else None, {"form": form}))
        return checks


class VerbChanged:
    """The new verb is a WordNet antonym of the old (any sense), or their counter-fitted word vectors
    have a cosine below ``verb_cosine_max`` (score: that cosine; ``antonym`` kept). A lemma with no
    vector cannot show a change, so only an antonym passes then."""

    name = "verb-changed"

    def __init__(self, changes: VerbChanges, settings: MeaningConfig):
        self.changes = changes
        self.max_cosine = settings.verb_cosine_max
        self.changed = changed_fields(settings, ("verb_cosine_max",))

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        checks = []
        for change in self.changes.of(candidates):
            passed = not change.new or change.antonym or (change.cosine is not None and change.cosine < self.max_cosine)
            checks.append(Check(bool(passed), change.cosine, {"antonym": change.antonym}))
        return checks
