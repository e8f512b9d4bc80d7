"""What several parts of the verb recipe measure of a candidate, each computed once and handed to the
parts that ask: its parse, the verbs it puts in and takes out, the language model's span scores, the
sentences' embeddings, the verbs' change of meaning and how common a verb is. A part reads these,
never another part's verdict, so any constraint or filter can be taken out of the recipe alone.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from tvrbench.generators.base import Candidate, by_target
from tvrbench.generators.verb.lexicon import VerbLexicon
from tvrbench.lm.models import LanguageModel, SpanLogprobs
from tvrbench.lm.primer import UNPRIMED, Primers
from tvrbench.numerics import COSINE, rounded


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


class VerbChange(NamedTuple):
    """What changed between a candidate's old and new verbs: the new ones (none: the fill has no verb),
    whether one is a WordNet antonym of an old one, and the cosine of their counter-fitted vectors
    (None when a lemma has none)."""

    new: list[str]
    antonym: bool
    cosine: float | None


class VerbChanges:
    """:class:`VerbChange` of candidates: WordNet's antonyms (any sense) and counter-fitted word vectors
    (Mrkšić et al. 2016), the two halves of Park et al.'s meaning rule that read the verbs alone."""

    def __init__(self, parses: CandidateParses, vectors, lexicon: VerbLexicon):
        self.parses = parses
        self.vectors = vectors
        self.lexicon = lexicon

    def of(self, candidates: Sequence[Candidate]) -> list[VerbChange]:
        new = self.parses.new_verbs(candidates)
        old = [original_verbs(c) for c in candidates]
        changes = []
        for news, olds, cosine in zip(new, old, self.vectors.cosines(list(zip(old, new)))):
            antonym = any(n in self.lexicon.antonyms(o) for o in olds for n in news)
            changes.append(VerbChange(news, antonym, None if cosine is None else rounded(cosine, COSINE)))
        return changes


class SpanScores:
    """Each candidate's and its original's :class:`~tvrbench.lm.models.SpanLogprobs`, computed once
    per target and round (the left context's key-value cache shared by a target's fills) and kept
    for the other filters of the chunk that read them (the perplexity rule). The language model reads
    each caption after its primer: a few other captions of the collection (:mod:`tvrbench.lm.primer`)."""

    def __init__(self, lm: LanguageModel, primers: Primers = UNPRIMED):
        self.base = lm
        self.primers = primers
        self.scores: dict[tuple[int, int, str], SpanLogprobs] = {}

    def lm(self, candidate: Candidate) -> LanguageModel:
        """The language model as it reads ``candidate``'s caption: after that caption's primer."""
        return self.base.primed(self.primers.text(candidate.request.item.video_id))

    def clear_cache(self) -> None:
        self.scores.clear()

    def of(self, candidates: Sequence[Candidate]) -> list[tuple[SpanLogprobs, SpanLogprobs]]:
        """(the original's, the candidate's) scores of each candidate, whose one replacement is the span."""
        for positions in by_target(candidates).values():
            first = candidates[positions[0]]
            replacement, text = first.replacements[0], first.original
            key = (first.request.item.index, first.request.target.start)
            fills = list(dict.fromkeys(f for f in [replacement.original, *(candidates[k].replacements[0].replacement for k in positions)]
                                       if (*key, f) not in self.scores))  # fmt: skip
            if fills:
                found = self.lm(first).span_logprobs(text[: replacement.char_start], fills, text[replacement.char_end :])
                self.scores.update({(*key, fill): scores for fill, scores in zip(fills, found)})
        out = []
        for candidate in candidates:
            key = (candidate.request.item.index, candidate.request.target.start)
            replacement = candidate.replacements[0]
            out.append((self.scores[(*key, replacement.original)], self.scores[(*key, replacement.replacement)]))
        return out


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
