"""Constraints on verb contrasts (Park et al. §3.2 and App. A.3, SPEC §5).

* :class:`HasVerb` — the candidate sentence still has a verb;
* :class:`VerbFrequency` — its new verbs occur more than ``min_count`` times in training captions;
* :class:`Perplexity` — fluency by a causal LM: ppl_diff = (ppl_o − ppl_m) / ppl_o, kept if
  ppl_diff < 0.6, or ppl_diff < 1.4 and ppl_m < 750;
* :class:`MeaningChanged` — the new verb is a WordNet antonym of the old, or both the verbs' and the
  sentences' embedding cosines are low (< 0.4 and < 0.8).

Each checks a batch of candidates and returns a :class:`~tvrbench.generators.base.Check` per
candidate whose score the record keeps. "New verbs" are the verbs spaCy finds inside the replaced
span of the candidate (all verbs of the candidate when the span has none).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from tvrbench.generators.base import Candidate, Check
from tvrbench.generators.config import MeaningConfig, PerplexityConfig


class CandidateParses:
    """spaCy parses of candidate sentences, made in batches and shared by the constraints."""

    def __init__(self, nlp, limit: int = 50000):
        self.nlp = nlp
        self.limit = limit
        self.cache: dict[str, object] = {}

    def docs(self, texts: Sequence[str]) -> list:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if len(self.cache) + len(missing) > self.limit:
            self.cache.clear()
        self.cache.update(zip(missing, self.nlp.pipe(missing)))
        return [self.cache[t] for t in texts]

    def new_verbs(self, candidates: Sequence[Candidate]) -> list[list[str]]:
        """Lemmas of the verbs in each candidate's replaced spans (else of all its verbs)."""
        result = []
        for candidate, doc in zip(candidates, self.docs([c.text for c in candidates])):
            spans = [e["contrast_chars"] for e in candidate.edit]
            verbs = [t for t in doc if t.pos_ == "VERB"]
            inside = [t for t in verbs if any(s <= t.idx < e for s, e in spans)]
            result.append([t.lemma_.lower() for t in (inside or verbs)])
        return result


def original_verbs(candidate: Candidate) -> list[str]:
    """Lemmas of the verbs the candidate replaced."""
    doc = candidate.request.doc
    spans = [e["tokens"] for e in candidate.edit]
    return [doc[i].lemma_.lower() for s, e in spans for i in range(s, e) if doc[i].pos_ == "VERB"]


class HasVerb:
    name = "has-verb"

    def __init__(self, parses: CandidateParses):
        self.parses = parses

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        docs = self.parses.docs([c.text for c in candidates])
        return [Check(any(t.pos_ == "VERB" for t in doc)) for doc in docs]


def verb_counts(nlp, texts: Sequence[str]) -> Counter:
    """How often each verb lemma occurs in ``texts`` (training captions)."""
    counts: Counter = Counter()
    for doc in nlp.pipe(texts, batch_size=256):
        counts.update(t.lemma_.lower() for t in doc if t.pos_ == "VERB")
    return counts


class VerbFrequency:
    """Score: the smallest training count among the new verbs; kept when it is above ``min_count``."""

    name = "frequency"

    def __init__(self, parses: CandidateParses, counts: Counter, min_count: int):
        self.parses = parses
        self.counts = counts
        self.min_count = min_count

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        checks = []
        for verbs in self.parses.new_verbs(candidates):
            lowest = min((self.counts[v] for v in verbs), default=0)
            checks.append(Check(bool(verbs) and lowest > self.min_count, float(lowest)))
        return checks


class CausalLM:
    """Per-sentence perplexity under a causal LM (hub name or local path), computed in batches."""

    def __init__(self, name_or_path: str, batch_size: int = 16):
        from tvrbench.generators.t5 import load_pretrained

        self.name = name_or_path
        self.model, self.tokenizer = load_pretrained("causal", name_or_path)
        self.batch_size = batch_size
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token

    def perplexity(self, texts: Sequence[str]) -> np.ndarray:
        """exp(mean negative log-likelihood of the tokens); the first token is conditioned on BOS."""
        import torch

        prefix = self.tokenizer.bos_token or ""
        out = np.empty(len(texts))
        for start in range(0, len(texts), self.batch_size):
            batch = [prefix + t for t in texts[start : start + self.batch_size]]
            encoded = self.tokenizer(batch, return_tensors="pt", padding=True)
            ids, mask = encoded["input_ids"], encoded["attention_mask"]
            with torch.no_grad():
                logits = self.model(input_ids=ids, attention_mask=mask).logits
            logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1)
            target_logprobs = logprobs.gather(-1, ids[:, 1:, None])[..., 0]
            target_mask = mask[:, 1:].float()
            nll = -(target_logprobs * target_mask).sum(1) / target_mask.sum(1).clamp(min=1)
            out[start : start + len(batch)] = torch.exp(nll).numpy()
        return out


class Perplexity:
    """Score: ppl_diff; ``ppl_original`` and ``ppl_contrast`` are kept beside it."""

    name = "perplexity"

    def __init__(self, lm: CausalLM, config: PerplexityConfig):
        self.lm = lm
        self.config = config
        self.original_ppl: dict[str, float] = {}

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        originals = list(dict.fromkeys(c.original for c in candidates if c.original not in self.original_ppl))
        self.original_ppl.update(zip(originals, self.lm.perplexity(originals)))
        contrast_ppl = self.lm.perplexity([c.text for c in candidates])
        checks = []
        for candidate, ppl_m in zip(candidates, contrast_ppl):
            ppl_o = self.original_ppl[candidate.original]
            diff = (ppl_o - ppl_m) / ppl_o
            cfg = self.config
            passed = diff < cfg.ppl_diff_max or (diff < cfg.ppl_diff_max_if_fluent and ppl_m < cfg.ppl_fluent_max)
            checks.append(Check(bool(passed), float(diff), {"ppl_original": float(ppl_o), "ppl_contrast": float(ppl_m)}))
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


class MeaningChanged:
    """Score: the sentence cosine; ``antonym``, ``verb_cosine`` and ``sentence_cosine`` are kept.

    Verb embeddings: the configured sentence model run on the bare verb lemmas ("pick up"), since no
    word vectors (the paper's counter-fitted GloVe) are available offline.
    """

    name = "meaning-changed"

    def __init__(self, parses: CandidateParses, embed: Embeddings, wordnet_verbs, config: MeaningConfig):
        self.parses = parses
        self.embed = embed
        self.wordnet_verbs = wordnet_verbs
        self.config = config

    def check(self, candidates: Sequence[Candidate]) -> list[Check]:
        """Verb cosines first; sentences are embedded only where the verb test or an antonym can pass."""
        new = [" ".join(verbs) for verbs in self.parses.new_verbs(candidates)]
        old = [original_verbs(c) for c in candidates]
        verb_cos = np.einsum("ij,ij->i", self.embed([" ".join(o) or "none" for o in old]), self.embed([n or "none" for n in new]))
        antonym = [any(n in self.wordnet_verbs.antonyms(o) for o in olds for n in news.split()) for olds, news in zip(old, new)]
        open_ = [k for k in range(len(candidates)) if antonym[k] or verb_cos[k] < self.config.verb_cosine_max]
        sent_cos = np.full(len(candidates), np.nan)
        if open_:
            originals = self.embed([candidates[k].original for k in open_])
            sent_cos[open_] = np.einsum("ij,ij->i", originals, self.embed([candidates[k].text for k in open_]))
        checks = []
        for k in range(len(candidates)):
            sentence = None if np.isnan(sent_cos[k]) else round(float(sent_cos[k]), 6)
            low = sentence is not None and verb_cos[k] < self.config.verb_cosine_max and sentence < self.config.sentence_cosine_max
            extra = {"antonym": antonym[k], "verb_cosine": round(float(verb_cos[k]), 6), "sentence_cosine": sentence}
            checks.append(Check(bool(antonym[k] or low), sentence, extra))
        return checks
