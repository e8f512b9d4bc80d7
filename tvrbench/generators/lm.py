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

import difflib
import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from tvrbench.errors import InputError, MissingResource
from tvrbench.generators.config import Device
from tvrbench.offline_lms import AUTO, OFFLINE_LMS, REGISTRY, is_gguf, offline_model, resolve
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

    def span_logprobs(self, left: str, fills: Sequence[str], right: str) -> list[SpanLogprobs]:
        """The tokens of ``left + fill + right`` for each fill, cut where the fill starts and ends."""
        ...

    def next_words(self, left: str, top: int) -> list[str]:
        """The whole words among the ``top`` likeliest next tokens after ``left``, likeliest first."""
        ...


@dataclass(frozen=True)
class SpanLogprobs:
    """Natural-log probabilities of a sentence's tokens cut in three where a fill was put in: the left
    context, the fill given it, and the words after the fill given both (the n-gram: and ``</s>``).

    Comparing a verb's ``right`` with the original verb's asks how well the rest of the caption follows
    it (its object, its preposition): what a reader judges. The whole sentence's probability favours
    frequent verbs, a single sub-word token beating a rare verb split in several (docs/contrast.md)."""

    left: np.ndarray
    fill: np.ndarray
    right: np.ndarray

    @property
    def tokens(self) -> np.ndarray:
        return np.concatenate([self.left, self.fill, self.right])


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

    def span_logprobs(self, left: str, fills: Sequence[str], right: str) -> list[SpanLogprobs]:
        left_words, right_words = words(left), words(right)
        out = []
        for fill in fills:
            fill_words = words(fill)
            logprobs = self.token_logprobs([" ".join([*left_words, *fill_words, *right_words])])[0]
            cut = [len(left_words), len(left_words) + len(fill_words)]
            out.append(SpanLogprobs(*np.split(logprobs, cut)))
        return out

    def next_words(self, left: str, top: int) -> list[str]:
        """None: proposing words would mean ranking the whole vocabulary after every history."""
        return []

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
        return model, tokenizer

    @property
    def model(self):
        return self.loaded[0]

    @functools.cached_property
    def cache_keyword(self) -> str:
        """transformers 5.x renamed ``past_key_values`` (still accepted, with a warning) to ``cache``."""
        import inspect

        return "cache" if "cache" in inspect.signature(self.model.base_model.forward).parameters else "past_key_values"

    @property
    def tokenizer(self):
        return self.loaded[1]

    @functools.cached_property
    def start(self) -> list[int]:
        """The token every text is conditioned on: BOS, else EOS (GPT-2's ``<|endoftext|>`` is both)."""
        token = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.eos_token_id
        return [] if token is None else [token]

    def ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if len(self.cache) + len(missing) > self.cache_limit:
            self.cache.clear()
        rows = [self.start + self.ids(text) for text in missing]
        self.cache.update(zip(missing, self._row_logprobs(rows, prefix=None)))
        return [self.cache[t] for t in texts]

    def clear_cache(self) -> None:
        """Scores never depend on their batch (no padding ever enters one); this only frees memory."""
        self.cache.clear()

    def span_logprobs(self, left: str, fills: Sequence[str], right: str) -> list[SpanLogprobs]:
        """The left context is run once and its key-value cache shared by every fill; a fill's text
        begins with the whitespace before it and ends with ``right``, which begins with its own, so the
        cut tokenizes as the whole sentence does (word-initial space, as in SentencePiece and GPT-2)."""
        import torch

        head = left.rstrip()
        prefix = self.start + self.ids(head)
        with torch.no_grad():
            out = self.model(input_ids=torch.tensor([prefix], device=self.model.device), use_cache=True)
        first = torch.log_softmax(out.logits[0].float(), dim=-1)  # the prefix's own tokens, and the first of each fill
        left_logprobs = first[:-1].gather(-1, torch.tensor(prefix[1:], device=first.device)[:, None])[:, 0].double().cpu().numpy()
        cache = [(layer.keys, layer.values) for layer in getattr(out, self.cache_keyword).layers]
        rows, cuts = [], []
        for fill in fills:
            text = left[len(head) :] + fill
            encoded = self.tokenizer(text + right, add_special_tokens=False, return_offsets_mapping=True)
            rows.append(encoded["input_ids"])
            cuts.append(sum(end <= len(text) for _, end in encoded["offset_mapping"]))
        scored = self._row_logprobs(rows, prefix=(cache, first[-1]))
        return [SpanLogprobs(left_logprobs, logprobs[:cut], logprobs[cut:]) for logprobs, cut in zip(scored, cuts)]

    def next_words(self, left: str, top: int) -> list[str]:
        """A token is a whole word when the text it adds starts with a space (or starts the sentence)
        and is letters only; a word split in several tokens is not proposed."""
        import torch

        head = left.rstrip()
        prefix = self.start + self.ids(head)
        with torch.no_grad():
            logits = self.model(input_ids=torch.tensor([prefix], device=self.model.device)).logits[0, -1].float()
        before = self.tokenizer.decode(prefix, skip_special_tokens=True)
        words = []
        for token in torch.topk(logits, top).indices.tolist():
            added = self.tokenizer.decode([*prefix, token], skip_special_tokens=True)[len(before) :]
            word = added.strip()
            if word.isalpha() and added in (f" {word}", word if not head else None):
                words.append(word)
        return words

    def _next_logprobs(self, hidden, tokens):
        """ln P of each of ``tokens`` given the hidden state before it: the output layer row by row, so a
        batch never holds its logits over the whole vocabulary at once (Gemma's: 262,144 a token)."""
        import torch

        logits = self.model.get_output_embeddings()(hidden).float()
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        if cap:
            logits = torch.tanh(logits / cap) * cap
        return torch.log_softmax(logits, dim=-1).gather(-1, tokens[:, None])[:, 0]

    def _row_logprobs(self, rows: list[list[int]], prefix) -> list[np.ndarray]:
        """Log-probability of every token of each row (after the first, or all of them after a shared
        ``prefix``: its key-value cache and the log-probabilities of the token after it).

        Rows are batched only with rows of the same length, ``batch_size`` at a time, so no padding ever
        enters a batch. A row's score can still differ in its last bits with the other rows of its batch
        (a batch of one takes other kernels), so a caller that must give the same bits in every run
        (the verb generator) scores one target's texts at a time."""
        import torch
        from transformers import DynamicCache

        by_length: dict[int, list[int]] = {}
        for k, row in enumerate(rows):
            by_length.setdefault(len(row), []).append(k)
        out: list[np.ndarray] = [np.zeros(0)] * len(rows)
        for length, members in sorted(by_length.items()):
            for start in range(0, len(members), self.batch_size):
                batch = members[start : start + self.batch_size]
                ids = torch.tensor([rows[k] for k in batch], device=self.model.device)
                cache, past = None, 0
                if prefix is not None and length:
                    cache, past = DynamicCache(config=self.model.config), prefix[0][0][0].shape[2]
                    for index, (keys, values) in enumerate(prefix[0]):
                        cache.update(keys.expand(len(batch), -1, -1, -1).contiguous(), values.expand(len(batch), -1, -1, -1).contiguous(), index)
                mask = torch.ones((len(batch), past + length), dtype=torch.long, device=ids.device)  # a batch of one takes the same kernels
                with torch.no_grad():
                    inputs = {"input_ids": ids, "attention_mask": mask, self.cache_keyword: cache}
                    hidden = self.model.base_model(**inputs).last_hidden_state if length else None
                    for row, k in enumerate(batch):
                        values = self._next_logprobs(hidden[row, :-1], ids[row, 1:]) if length > 1 else torch.zeros(0)
                        if prefix is not None and length:  # the first token, after the shared prefix
                            values = torch.cat([prefix[1][ids[row, :1]], values])
                        out[k] = values.double().cpu().numpy()
        return out


def load_language_model(spec: str = NGRAM, batch_size: int = 16, device: Device = "cpu") -> LanguageModel:
    """``ngram`` (the bundled CMU model), an n-gram file (``.arpa``, ``.lm.bin``, ...), an offline
    model by name (``gemma3-270m``, ``smollm2``) or a ``.gguf`` file (converted once), ``auto`` (the
    preferred offline model installed, else ``ngram``), or a causal LM on ``device``; one per process
    (a Dask worker loads its own, on first use)."""
    return _language_model(resolve(spec, NGRAM), batch_size, device)


def check_language_model(spec: str) -> None:
    """Refuse at once, in one line, a spec that names nothing here (not ``auto``, ``ngram``, an offline
    model, a file or a folder) while the hub that would have to serve it cannot be reached: the names
    that exist here, and the nearest, instead of the hub library's retries. Commands call it before
    their slow start (spaCy, torch); :func:`load_language_model` calls it too."""
    if spec in (AUTO, NGRAM) or spec in OFFLINE_LMS or is_gguf(spec) or spec.lower().endswith(NGRAM_SUFFIXES):
        return
    from tvrbench.generators.t5 import within_reach

    if within_reach(spec):
        return
    names = [model.name for model in REGISTRY if model.installed()] + [NGRAM, AUTO]
    nearest = difflib.get_close_matches(spec.lower(), names, n=1)
    problem = "not an installed language model, a file or a folder, and the Hugging Face hub cannot be reached"
    raise InputError(spec, f"{problem}; installed: {', '.join(names)}" + (f" (did you mean {nearest[0]}?)" if nearest else ""))


@functools.lru_cache(maxsize=4)
def _language_model(spec: str, batch_size: int, device: Device) -> LanguageModel:
    if spec == NGRAM:
        return _bundled_ngram()
    if spec in OFFLINE_LMS or is_gguf(spec):
        converted = offline_model(spec)
        return CausalLM(str(converted.folder), batch_size, device=device, pin=converted.pin)
    if spec.lower().endswith(NGRAM_SUFFIXES) and not Path(spec).expanduser().is_dir():
        return NGramLM(spec)
    check_language_model(spec)
    return CausalLM(spec, batch_size, device=device)


@functools.lru_cache(maxsize=1)
def _bundled_ngram() -> NGramLM:
    return NGramLM()
