"""Constraints on verb contrasts (Park et al. §3.2 and App. A.3, SPEC §5).

* :class:`Perplexity` — fluency by the configured language model: ppl_diff = (ppl_m − ppl_o) / ppl_o,
  kept if ppl_diff < 0.6, or ppl_diff < 1.4 and ppl_m < 750;
* :class:`HasVerb` — the candidate sentence still has a verb;
* :class:`VerbFrequency` — its new verbs are common: more than 30 times in training captions, or
  without them frequent enough in the n-gram LM's unigram table;
* :class:`MeaningChanged` — the new verb is a WordNet antonym of the old, or both the verbs'
  (counter-fitted word vectors) and the sentences' embedding cosines are low (Park: < 0.4 and
  < 0.8; recalibrated for our encoders to 0.5 and 0.9, docs/contrast.md).

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

from tvrbench.generators.base import Candidate, Check
from tvrbench.generators.config import MeaningConfig, PerplexityConfig
from tvrbench.generators.lm import LanguageModel, mean_logprobs


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
    ``ppl_contrast`` are kept beside it."""

    name = "perplexity"

    def __init__(self, lm: LanguageModel, config: PerplexityConfig):
        self.lm = lm
        self.config = config

    def clear_cache(self) -> None:
        self.lm.clear_cache()

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        texts = list(dict.fromkeys(t for c in candidates for t in (c.original, c.text)))
        ppl = dict(zip(texts, np.exp(-mean_logprobs(self.lm, texts))))
        checks = []
        cfg = self.config
        for candidate in candidates:
            ppl_o, ppl_m = ppl[candidate.original], ppl[candidate.text]
            diff = (ppl_m - ppl_o) / ppl_o
            passed = diff < cfg.ppl_diff_max or (diff < cfg.ppl_diff_max_if_fluent and ppl_m < cfg.ppl_fluent_max)
            checks.append(
                Check(bool(passed), round(float(diff), 6), {"ppl_original": round(float(ppl_o), 4), "ppl_contrast": round(float(ppl_m), 4)})
            )
        return checks


class Embeddings:
    """Unit-norm sentence embeddings, cached by text."""

    def __init__(self, model, limit: int = 100000):
        self.model = model
        self.limit = limit
        self.cache: dict[str, np.ndarray] = {}

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            if len(self.cache) + len(missing) > self.limit:
                self.cache.clear()
            vectors = self.model.encode(missing, batch_size=64, normalize_embeddings=True, convert_to_numpy=True)
            self.cache.update(zip(missing, vectors.astype(np.float32)))
        return np.stack([self.cache[t] for t in texts])

    def clear_cache(self) -> None:
        self.cache.clear()


class MeaningChanged:
    """Score: the sentence cosine; ``antonym``, ``verb_cosine`` and ``sentence_cosine`` are kept.

    Verb cosine: counter-fitted word vectors (Mrkšić et al. 2016) of the old and new verb lemmas, as
    Park et al.; a lemma with no vector cannot show a change, so only an antonym passes then.
    Embedding a sentence costs as much as everything else a candidate goes through, so each target
    gets at most ``max_sentence_tests`` of them (a query budget, as TextAttack's searches have; None, as Park et al.: no budget): a
    caption whose first candidates all still read alike is one a single verb barely changes. An
    antonym passes whatever its sentence cosine (Park et al.), so it is not embedded.
    """

    name = "meaning-changed"

    def __init__(self, parses: CandidateParses, embed: Embeddings, vectors, wordnet_verbs, config: MeaningConfig):
        self.parses = parses
        self.embed = embed
        self.vectors = vectors
        self.wordnet_verbs = wordnet_verbs
        self.config = config
        self.sentence_tests: Counter = Counter()  # per (caption index, target start)

    def clear_cache(self) -> None:
        self.embed.clear_cache()
        self.sentence_tests.clear()

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        """Verb cosines first; a sentence is embedded only where its verb changed and is no antonym."""
        new = self.parses.new_verbs(candidates)
        old = [original_verbs(c) for c in candidates]
        verb_cos = self.vectors.cosines(list(zip(old, new)))
        antonym = [any(n in self.wordnet_verbs.antonyms(o) for o in olds for n in news) for olds, news in zip(old, new)]
        low_verb = [cos is not None and cos < self.config.verb_cosine_max for cos in verb_cos]
        open_ = []
        for k, candidate in enumerate(candidates):  # in list order, so the budget does not depend on batching
            target = (candidate.request.item.index, candidate.request.target.start)
            budget = self.config.max_sentence_tests
            if low_verb[k] and not antonym[k] and (budget is None or self.sentence_tests[target] < budget):
                self.sentence_tests[target] += 1
                open_.append(k)
        sent_cos = np.full(len(candidates), np.nan)
        if open_:
            vectors = self.embed([*(candidates[k].original for k in open_), *(candidates[k].text for k in open_)])
            sent_cos[open_] = np.einsum("ij,ij->i", vectors[: len(open_)], vectors[len(open_) :])
        checks = []
        for k in range(len(candidates)):
            sentence = None if np.isnan(sent_cos[k]) else round(float(sent_cos[k]), 6)
            passed = not new[k] or antonym[k] or (sentence is not None and sentence < self.config.sentence_cosine_max)  # no verb: HasVerb's
            verb = None if verb_cos[k] is None else round(float(verb_cos[k]), 6)
            checks.append(Check(bool(passed), sentence, {"antonym": antonym[k], "verb_cosine": verb, "sentence_cosine": sentence}))
        return checks
