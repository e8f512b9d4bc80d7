"""Language models that say how plausible a caption reads: one interface, two backends.

A :class:`LanguageModel` gives the natural-log probability of every token of a batch of sentences.
Everything else is built on that: the plausibility ranking of verb candidates, Park et al.'s
perplexity filter, the frequency filter's unigram table, the text-only MC scorer and the
"does the LM prefer the original?" measure every contrast run reports.

* :class:`NGramLM` (``ngram``, the offline default): CMU's generic US-English trigram model shipped
  in the ``pocketsphinx`` wheel, or any ARPA / binary n-gram file. Its vocabulary is lower case, so
  captions are lower-cased and split into words (apostrophes kept: ``man's``, ``isn't``). A word
  outside the vocabulary gets the model's ``<unk>`` probability, or log10 −10 when it has none (the
  CMU model's rarest words have −9.47), so an unknown verb never ranks above a known one; the words
  after it back off as after ``<unk>``. Every sentence ends with ``</s>``, which is scored; ``<s>``
  starts the history.
* :class:`CausalLM` (``causal``): any transformers causal LM by hub name or local path (Park et al.:
  ``gpt2-xl``); its own sub-word tokens, the first conditioned on BOS. The offline neural models
  (``gemma3-270m``, ``smollm2``) and GGUF files load through it, converted once
  (:mod:`tvrbench.offline_lms`); ``auto`` is the preferred one installed, else ``ngram``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from tvrbench.errors import InputError, MissingResource
from tvrbench.generators.config import Device
from tvrbench.offline_lms import OFFLINE_LMS, is_gguf, offline_model, resolve
from tvrbench.resources import torch_device

NGRAM = "ngram"  # the bundled CMU model
CMU_MODEL = "en-us/en-us.lm.bin"
UNKNOWN_LOG10 = -10.0  # an unknown word, when the model has no <unk>
NGRAM_SUFFIXES = (".arpa", ".lm", ".bin", ".dmp", ".lm.bin")
_WORDS = re.compile(r"[a-z0-9]+(?:'[a-z]+)*")


class LanguageModel(Protocol):
    name: str  # for signatures: says which model and which file

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Natural-log probability of each token of each text (words, then the end of the sentence)."""
        ...

    def clear_cache(self) -> None:
        """Forget cached scores that depend on what else was in their batch."""
        ...


def mean_logprobs(lm: LanguageModel, texts: Sequence[str]) -> np.ndarray:
    """Per-token mean log-probability of each text: minus the log of its perplexity."""
    return np.array([logprobs.mean() for logprobs in lm.token_logprobs(texts)])


def total_logprobs(lm: LanguageModel, texts: Sequence[str]) -> np.ndarray:
    """Log-probability of each whole text."""
    return np.array([logprobs.sum() for logprobs in lm.token_logprobs(texts)])


@dataclass(frozen=True)
class Preference:
    """How a language model reads contrasts beside their originals (Park et al.: about half the time).

    ``prefers_original``: share of pairs whose original has the higher per-token log-probability;
    ``median_gap``: median of original minus contrast, in nats per token (positive: the contrast
    reads worse).
    """

    lm: str
    pairs: int
    prefers_original: float | None
    median_gap: float | None

    def to_json(self) -> dict:
        return {"lm": self.lm, "pairs": self.pairs, "prefers_original": self.prefers_original, "median_gap_nats_per_token": self.median_gap}

    @classmethod
    def from_json(cls, data: dict) -> "Preference":
        return cls(data["lm"], data["pairs"], data["prefers_original"], data["median_gap_nats_per_token"])

    def __str__(self) -> str:
        if not self.pairs:
            return f"LM ({self.lm}): no pairs"
        return f"LM prefers the original in {100 * self.prefers_original:.1f} % of {self.pairs} pairs, median gap {self.median_gap:.3f} nats/token"


def preference(lm: LanguageModel, originals: Sequence[str], contrasts: Sequence[str]) -> Preference:
    texts = list(dict.fromkeys([*originals, *contrasts]))
    means = dict(zip(texts, mean_logprobs(lm, texts)))
    gaps = np.array([means[o] - means[c] for o, c in zip(originals, contrasts)])
    if not gaps.size:
        return Preference(lm.name, 0, None, None)
    return Preference(lm.name, int(gaps.size), float(np.mean(gaps > 0)), float(np.median(gaps)))


# --------------------------------------------------------------------------- n-gram


def words(text: str) -> list[str]:
    """The n-gram model's tokens of a caption: lower-cased words, apostrophes kept."""
    return _WORDS.findall(text.lower())


class NGramLM:
    """A pocketsphinx n-gram model; trigram probabilities are memoised (captions share most of them)."""

    def __init__(self, path: str | Path | None = None):
        try:
            import pocketsphinx
        except ImportError:
            raise MissingResource("the n-gram language model (pocketsphinx)", "pip install pocketsphinx") from None
        from pocketsphinx import LogMath, NGramModel

        bundled = path is None
        path = Path(pocketsphinx.get_model_path()) / CMU_MODEL if bundled else Path(path).expanduser()
        if not path.is_file():
            if bundled:
                raise MissingResource(f"the CMU trigram model {path}", "pip install --force-reinstall pocketsphinx")
            raise InputError(path, "no such language model file")
        pocketsphinx.set_loglevel("FATAL")  # its own error lines would break our one-line errors
        self.logmath = LogMath()
        try:
            self.model = NGramModel(None, self.logmath, str(path))
        except (ValueError, RuntimeError):
            raise InputError(path, "not an ARPA or binary n-gram language model pocketsphinx can read") from None
        from tvrbench.signature import file_digest, package_version

        self.path = path
        self.name = f"cmu-en-us-3gram(pocketsphinx-{package_version('pocketsphinx')})" if bundled else f"ngram={path.name}:{file_digest(path)}"
        self._zero = self.logmath.get_zero()
        unknown = self.model.prob(["<unk>"])
        self.unknown = UNKNOWN_LOG10 * np.log(10) if unknown <= self._zero else self.logmath.log_to_ln(unknown)
        self.trigram = functools.lru_cache(maxsize=1 << 18)(self._trigram)

    def _trigram(self, word: str, previous: str, before: str) -> float:
        """ln P(word | before previous)."""
        value = self.model.prob([word, previous, before])
        return self.unknown if value <= self._zero else self.logmath.log_to_ln(value)

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        trigram = self.trigram
        out = []
        for text in texts:
            tokens = ["<s>", "<s>", *words(text), "</s>"]
            out.append(np.array([trigram(tokens[i], tokens[i - 1], tokens[i - 2]) for i in range(2, len(tokens))]))
        return out

    def unigram_log10(self, word: str) -> float:
        """log10 P(word) from the unigram table (-inf outside the vocabulary)."""
        value = self.model.prob([word.lower()])
        return -np.inf if value <= self._zero else self.logmath.log_to_log10(value)

    def clear_cache(self) -> None:
        """Nothing to forget: an n-gram score does not depend on the batch."""


# --------------------------------------------------------------------------- transformers


class CausalLM:
    """A transformers causal LM (hub name or local path), batched with padding; results cached by text.

    Its name pins the weights (:func:`~tvrbench.generators.t5.pinned`, or ``pin`` when the caller
    knows their id: a converted offline model) without loading them; the weights load on the first
    score, on ``device``, so a process that only signs never holds them and a Dask worker that only
    scores never digests them.
    """

    def __init__(self, name_or_path: str, batch_size: int = 16, cache_limit: int = 100_000, device: Device = "cpu", pin: str | None = None):
        torch_device(device)  # a GPU asked for and missing is said now, not at the first score
        self.source = name_or_path
        self.pin = pin
        self.device = device
        self.batch_size = batch_size
        self.cache: dict[str, np.ndarray] = {}
        self.cache_limit = cache_limit

    @functools.cached_property
    def pinned(self) -> tuple[str, str | None]:
        """The weights' id and the hub revision that loads exactly them (None: a folder)."""
        from tvrbench.generators.t5 import pinned

        return (self.pin, None) if self.pin is not None else pinned(self.source)

    @functools.cached_property
    def name(self) -> str:
        from tvrbench.generators.t5 import inference_dtype

        dtype = str(inference_dtype(torch_device(self.device), "causal")).removeprefix("torch.")
        return f"causal={self.pinned[0]}" + ("" if dtype == "float32" else f"({dtype})")

    @functools.cached_property
    def loaded(self):
        """(model, tokenizer), loaded on first use."""
        from tvrbench.generators.t5 import load_pretrained

        model, tokenizer = load_pretrained("causal", self.source, self.device, self.pinned[1])
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        tokenizer.padding_side = "right"  # tokens are read from the left of each row (Gemma's pads on the left)
        return model, tokenizer

    @functools.cached_property
    def prefix(self) -> str:
        """What every text is scored after: BOS, unless the tokenizer adds it itself (Gemma's does)."""
        bos = self.tokenizer.bos_token
        return "" if bos is None or self.tokenizer("x")["input_ids"][:1] == [self.tokenizer.bos_token_id] else bos

    @property
    def model(self):
        return self.loaded[0]

    @property
    def tokenizer(self):
        return self.loaded[1]

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if len(self.cache) + len(missing) > self.cache_limit:
            self.cache.clear()
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            self.cache.update(zip(batch, self._score(batch)))
        return [self.cache[t] for t in texts]

    def clear_cache(self) -> None:
        self.cache.clear()

    def _score(self, texts: Sequence[str]) -> list[np.ndarray]:
        import torch

        encoded = self.tokenizer([self.prefix + t for t in texts], return_tensors="pt", padding=True).to(self.model.device)
        ids, mask = encoded["input_ids"], encoded["attention_mask"]
        with torch.no_grad():
            logits = self.model(input_ids=ids, attention_mask=mask).logits
        logprobs = torch.log_softmax(logits[:, :-1].float(), dim=-1).gather(-1, ids[:, 1:, None])[..., 0]
        keep = mask[:, 1:].bool()
        return [row[row_mask].double().cpu().numpy() for row, row_mask in zip(logprobs, keep)]


def load_language_model(spec: str = NGRAM, batch_size: int = 16, device: Device = "cpu") -> LanguageModel:
    """``ngram`` (the bundled CMU model), an n-gram file (``.arpa``, ``.lm.bin``, ...), an offline
    model by name (``gemma3-270m``, ``smollm2``) or a ``.gguf`` file (converted once), ``auto`` (the
    preferred offline model installed, else ``ngram``), or a causal LM on ``device``; one per process
    (a Dask worker loads its own, on first use)."""
    return _language_model(resolve(spec, NGRAM), batch_size, device)


@functools.lru_cache(maxsize=4)
def _language_model(spec: str, batch_size: int, device: Device) -> LanguageModel:
    if spec == NGRAM:
        return _bundled_ngram()
    if spec in OFFLINE_LMS or is_gguf(spec):
        converted = offline_model(spec)
        return CausalLM(str(converted.folder), batch_size, device=device, pin=converted.pin)
    if spec.lower().endswith(NGRAM_SUFFIXES) and not Path(spec).expanduser().is_dir():
        return NGramLM(spec)
    return CausalLM(spec, batch_size, device=device)


@functools.lru_cache(maxsize=1)
def _bundled_ngram() -> NGramLM:
    return NGramLM()
