"""Constraints on verb contrasts (Park et al. §3.2 and App. A.3, SPEC §5).

* :class:`Perplexity` — fluency by the configured language model: ppl_diff = (ppl_m − ppl_o) / ppl_o,
  kept if ppl_diff < 0.6, or ppl_diff < 1.4 and ppl_m < 750;
* :class:`HasVerb` — the candidate sentence still has a verb;
* :class:`VerbFrequency` — its new verbs are common: more than 30 times in training captions, or
  without them frequent enough in the n-gram LM's unigram table;
* :class:`VerbChanged` and :class:`MeaningChanged` — the new verb is a WordNet antonym of the old, or
  both the verbs' (counter-fitted word vectors) and the sentences' embedding cosines are low (Park:
  < 0.4 and < 0.8; recalibrated for our encoders to 0.5 and 0.9, docs/contrast.md); the verbs'
  cosine costs nothing and is checked on every candidate, the sentences' only on those tried.

Each checks a batch of candidates and returns a :class:`~tvrbench.generators.base.Check` per
candidate whose score the record keeps. The filters read only the fill's verbs: the verb the
generator put in, when it says, else the verbs spaCy tags inside the replaced span. A fill with no
verb fails :class:`HasVerb`; frequency and meaning have nothing to judge then and pass it.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence

import numpy as np

from tvrbench.generators.base import Candidate, Check, by_target
from tvrbench.generators.config import MeaningConfig, PerplexityConfig
from tvrbench.numerics import COSINE, PERPLEXITY, RATIO, rounded, significant


class CandidateParses:
    """spaCy tags of candidate sentences, made in batches and shared by the constraints."""

    def __init__(self, nlp, limit: int = 50000):
        self.nlp = nlp
        self.limit = limit
        self.cache: dict[str, object] = {}

    def docs(self, texts: Sequence[str]) -> list:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if len(self.cache) + len(missing) > self.limit:
            self.cache.clear()
        self.cache.update(zip(missing, self.nlp.pipe(missing, disable=["parser"])))  # tags and lemmas are enough
        return [self.cache[t] for t in texts]

    def new_verbs(self, candidates: Sequence[Candidate]) -> list[list[str]]:
        """Lemmas of the verbs of each candidate's fill: the verb the generator put there when it says
        (``new_lemma``), else those spaCy tags in the new words."""
        told = {k: [c.details["new_lemma"].split("_")[0]] for k, c in enumerate(candidates) if "new_lemma" in c.details}
        tagged = iter(self.fill_verbs([c for k, c in enumerate(candidates) if k not in told]))
        return [told[k] if k in told else next(tagged) for k in range(len(candidates))]

    def fill_verbs(self, candidates: Sequence[Candidate]) -> list[list[str]]:
        """Lemmas of the tokens spaCy tags VERB inside each candidate's replaced spans."""
        result = []
        for candidate, doc in zip(candidates, self.docs([c.text for c in candidates])):
            spans = [e["contrast_chars"] for e in candidate.edit]
            result.append([t.lemma_.lower() for t in doc if t.pos_ == "VERB" and any(s <= t.idx < e for s, e in spans)])
        return result


def original_verbs(candidate: Candidate) -> list[str]:
    """Lemmas of the verbs the candidate replaced."""
    doc = candidate.request.item.doc
    spans = [(r.token_start, r.token_end) for r in candidate.replacements]  # not the edit: it rebuilds the text
    return [doc[i].lemma_.lower() for s, e in spans for i in range(s, e) if doc[i].pos_ == "VERB"]


class HasVerb:
    """The fill has a verb as spaCy tags the contrast (a pool verb tagged a noun there fails too)."""

    name = "has-verb"

    def __init__(self, parses: CandidateParses):
        self.parses = parses

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        return [Check(bool(verbs)) for verbs in self.parses.fill_verbs(candidates)]


class TrainingFrequency:
    """Park et al.: a verb lemma is common when it occurs more than ``min_count`` times in training captions."""

    name = "train-captions"

    def __init__(self, counts: Counter, min_count: int):  # verb lemma counts of the training captions
        self.counts = counts
        self.min_count = min_count

    def score(self, lemma: str) -> float:
        return float(self.counts[lemma])

    def passes(self, score: float) -> bool:
        return score > self.min_count


class UnigramFrequency:
    """Without training captions: log10 of a verb lemma's probability, summed over its inflected forms
    (lemminflect), in the n-gram LM's unigram table; common when at least ``min_log10``."""

    def __init__(self, lm, min_log10: float):
        self.lm = lm
        self.min_log10 = min_log10
        self.name = f"unigram>={min_log10:g}"

    def score(self, lemma: str) -> float:
        return self._log10(lemma, True)

    def verb_use(self, lemma: str) -> float:
        """The same without the base form, which is often a noun too (``people``, ``time``)."""
        return self._log10(lemma, False)

    @functools.lru_cache(maxsize=50000)
    def _log10(self, lemma: str, base: bool) -> float:
        from lemminflect import getAllInflections

        forms = {form for tag, forms in getAllInflections(lemma, upos="VERB").items() if base or tag not in ("VB", "VBP") for form in forms}
        total = sum(10.0 ** self.lm.unigram_log10(form) for form in forms | ({lemma} if base else set()))
        return float(np.log10(total)) if total > 0 else -np.inf

    def passes(self, score: float) -> bool:
        return score >= self.min_log10


class VerbFrequency:
    """Score: the lowest frequency among the new verbs (count or log10 probability, by the source)."""

    name = "frequency"

    def __init__(self, parses: CandidateParses, source: TrainingFrequency | UnigramFrequency):
        self.parses = parses
        self.source = source

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        checks = []
        for verbs in self.parses.new_verbs(candidates):
            if not verbs:  # HasVerb's to judge
                checks.append(Check(True, None))
                continue
            lowest = min(self.source.score(v) for v in verbs)
            checks.append(Check(self.source.passes(lowest), round(lowest, 6) if np.isfinite(lowest) else None))
        return checks


class Perplexity:
    """Score: ppl_diff = (ppl_m − ppl_o) / ppl_o, how much less fluent the contrast reads (Park et al.
    App. A.3 prints ppl_o − ppl_m, but its rule "removes a candidate less plausible than the original"
    and its second bound 1.4 only means something for the increase); ``ppl_original`` and
    ``ppl_contrast`` are kept beside it. The sentences' token scores are the language model's span
    scores (:class:`~tvrbench.generators.verb.selection.SpanScores`), which the choice has already
    computed."""

    name = "perplexity"

    def __init__(self, spans, config: PerplexityConfig):
        self.spans = spans
        self.config = config

    def clear_cache(self) -> None:
        self.spans.clear_cache()

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        checks = []
        cfg = self.config
        for original, new in self.spans.of(candidates):
            ppl_o, ppl_m = (significant(np.exp(-scores.tokens.mean()), PERPLEXITY) for scores in (original, new))  # decided on as written
            diff = rounded((ppl_m - ppl_o) / ppl_o, RATIO)
            passed = diff < cfg.ppl_diff_max or (diff < cfg.ppl_diff_max_if_fluent and ppl_m < cfg.ppl_fluent_max)
            checks.append(Check(bool(passed), diff, {"ppl_original": ppl_o, "ppl_contrast": ppl_m}))
        return checks


class Embeddings:
    """Unit-norm sentence embeddings of one target's sentences, encoded together: an embedding differs
    in its last bits with the other sentences of its batch, so a caption's batches hold its own
    sentences alone and are the same in every run."""

    def __init__(self, model):
        self.model = model

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        unique = list(dict.fromkeys(texts))
        vectors = self.model.encode(unique, batch_size=max(1, len(unique)), normalize_embeddings=True, convert_to_numpy=True)
        row = {text: k for k, text in enumerate(unique)}
        return vectors.astype(np.float32)[[row[text] for text in texts]]


class FormFrequency:
    """A constraint: people write the verb form the contrast shows ("rumoring", "garaging" they do not,
    though "rumor" and "garage" are common). Score: log10 of the form's share of the Web's words
    (Google's unigram counts); it passes at ``min_log10`` or more, or when the captions use the form.
    The lemma's frequency (:class:`VerbFrequency`) sums every form, so it cannot see this."""

    name = "form-frequency"

    def __init__(self, caption_forms: frozenset[str], min_log10: float):
        self.caption_forms = caption_forms
        self.min_log10 = min_log10

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        from tvrbench.generators.verb.evidence import web_log10

        checks = []
        for candidate in candidates:
            form = (candidate.replacements[0].replacement.split() or [""])[0].lower()
            share = web_log10(form)
            passed = share >= self.min_log10 or form in self.caption_forms
            checks.append(Check(bool(passed), rounded(share, RATIO) if np.isfinite(share) else None, {"form": form}))
        return checks


class VerbChanged:
    """A constraint, the cheap half of Park et al.'s meaning rule: the new verb is a WordNet antonym of the
    old (any sense), or their counter-fitted word vectors (Mrkšić et al. 2016) have a cosine below
    ``verb_cosine_max`` (score: that cosine; ``antonym`` kept). A lemma with no vector cannot show a
    change, so only an antonym passes then; a fill with no verb is :class:`HasVerb`'s to judge."""

    name = "verb-changed"

    def __init__(self, parses: CandidateParses, vectors, wordnet_verbs, config: MeaningConfig):
        self.parses = parses
        self.vectors = vectors
        self.wordnet_verbs = wordnet_verbs
        self.config = config

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        new = self.parses.new_verbs(candidates)
        old = [original_verbs(c) for c in candidates]
        cosines = self.vectors.cosines(list(zip(old, new)))
        checks = []
        for news, olds, cosine in zip(new, old, cosines):
            antonym = any(n in self.wordnet_verbs.antonyms(o) for o in olds for n in news)
            cosine = None if cosine is None else rounded(cosine, COSINE)
            passed = not news or antonym or (cosine is not None and cosine < self.config.verb_cosine_max)
            checks.append(Check(bool(passed), cosine, {"antonym": antonym}))
        return checks


class MeaningChanged:
    """A filter, Park et al.'s meaning rule whole: an antonym, or (the verb cosine below
    ``verb_cosine_max``, which :class:`VerbChanged` has checked, and) the sentences' embedding cosine
    below ``sentence_cosine_max`` (score: the sentence cosine; ``antonym``, ``verb_cosine`` and
    ``sentence_cosine`` kept). An antonym passes whatever its sentence cosine (Park et al.), so it is
    not embedded; nor is a fill with no verb, :class:`HasVerb`'s to judge."""

    name = "meaning-changed"

    def __init__(self, parses: CandidateParses, embed: Embeddings, config: MeaningConfig):
        self.parses = parses
        self.embed = embed
        self.config = config

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        verbs = self.parses.new_verbs(candidates)
        changed = [candidate.checks["verb-changed"] for candidate in candidates]
        open_ = [k for k, (news, verb) in enumerate(zip(verbs, changed)) if news and not verb["antonym"]]
        sentence = np.full(len(candidates), np.nan)
        for positions in by_target([candidates[k] for k in open_]).values():
            group = [open_[k] for k in positions]
            vectors = self.embed([candidates[group[0]].original, *(candidates[k].text for k in group)])
            sentence[group] = np.einsum("ij,j->i", vectors[1:], vectors[0])  # NumPy's own loop, not BLAS: the same bits on any CPU
        checks = []
        for news, verb, cosine in zip(verbs, changed, sentence):
            cosine = None if np.isnan(cosine) else rounded(cosine, COSINE)
            passed = not news or verb["antonym"] or (cosine is not None and cosine < self.config.sentence_cosine_max)
            checks.append(Check(bool(passed), cosine, {"antonym": verb["antonym"], "verb_cosine": verb["score"], "sentence_cosine": cosine}))
        return checks
