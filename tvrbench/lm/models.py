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
  (:mod:`tvrbench.lm.offline`); ``auto`` is the preferred one installed, else ``ngram``.
"""

from __future__ import annotations

import difflib
import functools
import re
import sys
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from tvrbench.config import Device
from tvrbench.errors import InputError, MissingResource
from tvrbench.lm.loading import inference_dtype, load_pretrained, pinned, within_reach
from tvrbench.lm.offline import AUTO, OFFLINE_LMS, REGISTRY, is_gguf, offline_model, resolve
from tvrbench.numerics import NATS_PER_TOKEN, regime, rounded
from tvrbench.resources import torch_device
from tvrbench.signature import file_digest, package_version

NGRAM = "ngram"  # the bundled CMU model
CMU_MODEL = "en-us/en-us.lm.bin"
UNKNOWN_LOG10 = -10.0  # an unknown word, when the model has no <unk>
NGRAM_SUFFIXES = (".arpa", ".lm", ".bin", ".dmp", ".lm.bin")
_WORDS = re.compile(r"[a-z0-9]+(?:'[a-z]+)*")
OUTPUT_ROWS = 128  # positions through a causal LM's output layer at once
MIN_ROWS = 8  # fewest rows of a product: below 4, MKL takes other kernels
MAX_TOKENS = 256  # a text's tokens a causal LM scores (MSR-VTT's longest caption has about 40)
LEFT_CONTEXTS = 64  # left contexts whose states a causal LM keeps (a target's blocks of fills share one)


class LanguageModel(Protocol):
    name: str  # for signatures: says which model and which file

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Natural-log probability of each token of each text (words, then the end of the sentence)."""
        ...

    def span_logprobs(self, left: str, fills: Sequence[str], right: str, with_left: bool = True) -> list[SpanLogprobs]:
        """The tokens of ``left + fill + right`` for each fill, cut where the fill starts and ends (the
        left context's may be left out, empty, with ``with_left=False``)."""
        ...

    def next_words(self, lefts: Sequence[str], top: int) -> list[list[str]]:
        """For each left context, the whole words among the ``top`` likeliest next tokens, likeliest first."""
        ...

    def primed(self, primer: str) -> "LanguageModel":
        """The model reading every text after ``primer`` (:mod:`tvrbench.lm.primer`)."""
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


def preference(
    lm: LanguageModel, originals: Sequence[str], contrasts: Sequence[str], measured: Sequence[Sequence[float]] | None = None
) -> Preference:
    """``measured``: each pair's per-token means (original, contrast) when the LM has scored them already
    (the word-edit kinds' judge records them); else the LM scores the texts."""
    if measured is None:
        texts = list(dict.fromkeys([*originals, *contrasts]))
        means = dict(zip(texts, mean_logprobs(lm, texts)))
        measured = [(means[o], means[c]) for o, c in zip(originals, contrasts)]
    gaps = np.array([original - contrast for original, contrast in measured])
    if not gaps.size:
        return Preference(lm.name, 0, None, None)
    return Preference(lm.name, int(gaps.size), float(np.mean(gaps > 0)), rounded(np.median(gaps), NATS_PER_TOKEN))


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

    def span_logprobs(self, left: str, fills: Sequence[str], right: str, with_left: bool = True) -> list[SpanLogprobs]:
        left_words, right_words = words(left), words(right)
        out = []
        for fill in fills:
            fill_words = words(fill)
            logprobs = self.token_logprobs([" ".join([*left_words, *fill_words, *right_words])])[0]
            cut = [len(left_words), len(left_words) + len(fill_words)]
            out.append(SpanLogprobs(*np.split(logprobs, cut)))
        return out

    def next_words(self, lefts: Sequence[str], top: int) -> list[list[str]]:
        """None: proposing words would mean ranking the whole vocabulary after every history."""
        return [[] for _ in lefts]

    def primed(self, primer: str) -> "NGramLM":
        """The model itself: a trigram's history is two words, and every sentence starts afresh at ``<s>``."""
        return self

    def unigram_log10(self, word: str) -> float:
        """log10 P(word) from the unigram table (-inf outside the vocabulary)."""
        value = self.model.prob([word.lower()])
        return -np.inf if value <= self._zero else self.logmath.log_to_log10(value)

    def clear_cache(self) -> None:
        """Nothing to forget: an n-gram score does not depend on the batch."""


# --------------------------------------------------------------------------- transformers


class CausalLM:
    """A transformers causal LM (hub name or local path), batched with padding; results cached by text.

    Its name pins the weights (:func:`~tvrbench.lm.loading.pinned`, or ``pin`` when the caller
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
        self.lefts: dict[tuple[int, ...], tuple] = {}  # the last LEFT_CONTEXTS left contexts: states, cache, log-probabilities
        self.windowed = 0  # texts scored on their first MAX_TOKENS tokens
        self.base = self  # the model whose weights this one reads (itself, or the model it primes: :meth:`primed`)
        self.primer = ""  # text read before every text, never scored
        self.views: dict[str, CausalLM] = {}

    def primed(self, primer: str) -> "CausalLM":
        """This model reading every text after ``primer`` (a few real captions, one a line: it then
        knows what kind of text follows), whose tokens are run once and never scored. A text's tokens
        are the primer's, then the text's own as when it is read alone. The same weights, loaded once;
        an empty primer is the model itself."""
        if not primer:
            return self
        if primer not in self.views:
            view = CausalLM(self.source, self.batch_size, self.cache_limit, self.device, self.pin)
            view.base, view.primer = self, primer
            self.views[primer] = view
        return self.views[primer]

    @functools.cached_property
    def pinned(self) -> tuple[str, str | None]:
        """The weights' id and the hub revision that loads exactly them (None: a folder)."""
        return (self.pin, None) if self.pin is not None else pinned(self.source)

    @functools.cached_property
    def name(self) -> str:
        """The weights' pin, and what the scores depend on when they are made outside the numeric contract."""
        place = torch_device(self.device)
        outside = regime(place, str(inference_dtype(place, "causal")).removeprefix("torch."))
        return f"causal={self.pinned[0]}" + (f"({outside})" if outside else "")

    @functools.cached_property
    def loaded(self) -> "_Weights":
        """The model and tokenizer, loaded on first use, once per process for every model of these
        weights while one of them is alive (the demo's gender step asked for Gemma on ``cpu`` and its
        verb step on ``auto``: two copies of its 1.1 GB of weights, before)."""
        if self.base is not self:
            return self.base.loaded
        key = (self.source, torch_device(self.device), self.pinned[1])
        weights = _LOADED.get(key)
        if weights is None:
            weights = _LOADED[key] = _Weights(*load_pretrained("causal", *key))
        return weights

    @property
    def model(self):
        return self.loaded.model

    @functools.cached_property
    def cache_keyword(self) -> str:
        """transformers 5.x renamed ``past_key_values`` (still accepted, with a warning) to ``cache``."""
        import inspect

        return "cache" if "cache" in inspect.signature(self.model.base_model.forward).parameters else "past_key_values"

    @property
    def tokenizer(self):
        return self.loaded.tokenizer

    @functools.cached_property
    def start(self) -> list[int]:
        """The token every text is conditioned on: BOS, else EOS (GPT-2's ``<|endoftext|>`` is both)."""
        token = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.tokenizer.eos_token_id
        return [] if token is None else [token]

    def ids(self, text: str) -> list[int]:
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    @functools.cached_property
    def context(self) -> tuple | None:
        """(key-value cache, last hidden state) of the start token and the primer, run once; None
        unprimed, where each text runs from its start token as it always has (the same bits)."""
        if not self.primer:
            return None
        hidden, cache = self._prefix(self.start + self.ids(self.primer))
        return cache, hidden[-1:]

    @functools.cached_property
    def context_length(self) -> int:
        """Tokens before a text's own that count against ``MAX_TOKENS``: the primer's (and the start token)."""
        return self.context[0][0][0].shape[2] if self.context else 0

    @functools.cached_property
    def lead(self) -> list[int]:
        """The tokens a text's own row begins with: the start token, or none after a primer (its cache holds it)."""
        return [] if self.context else self.start

    def _row(self, text: str) -> list[int]:
        """The tokens ``text`` runs on after the context's cache (none unprimed): ``lead`` and its own, windowed."""
        return self._window(self.lead + self.ids(text), self.context_length)

    def token_logprobs(self, texts: Sequence[str]) -> list[np.ndarray]:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if len(self.cache) + len(missing) > self.cache_limit:
            self.cache.clear()
        states = self._states([self._row(text) for text in missing], self.context)  # primed, the first token is scored too
        self.cache.update(zip(missing, self._logprobs(states)))
        return [self.cache[t] for t in texts]

    def clear_cache(self) -> None:
        """Scores never depend on their batch (no padding ever enters one); this only frees memory."""
        self.cache.clear()
        self.lefts.clear()

    def span_logprobs(self, left: str, fills: Sequence[str], right: str, with_left: bool = True) -> list[SpanLogprobs]:
        """The left context is run once and its key-value cache shared by every fill; a fill's text
        begins with the whitespace before it and ends with ``right``, which begins with its own, so the
        cut tokenizes as the whole sentence does (word-initial space, as in SentencePiece and GPT-2).
        ``with_left=False`` leaves the left context's own scores out (empty) when only the fills' are
        read: its positions never go through the output layer, the dearest part of a small model."""
        import torch

        head = left.rstrip()
        prefix = self._row(head)
        key = tuple(prefix)
        known = self.lefts.get(key)  # the same bits as running it again: a state never depends on its batch
        hidden, cache = known[:2] if known else self._prefix(prefix, self.context)
        rows, cuts = [], []
        for fill in fills:
            text = left[len(head) :] + fill
            encoded = self.tokenizer(text + right, add_special_tokens=False, return_offsets_mapping=True)
            rows.append(self._window(encoded["input_ids"], self.context_length + len(prefix)))
            cuts.append(sum(end <= len(text) for _, end in encoded["offset_mapping"]))
        last = hidden[-1:] if len(hidden) else self.context[1]  # primed, an empty left context's last state is the primer's
        states = self._states(rows, (cache, last))
        left_logprobs = known[2] if known else None
        if left_logprobs is not None or not with_left:
            scored = self._logprobs(states)
        else:  # with the fills' positions, through the output layer together
            left_tokens = torch.tensor(prefix[len(self.lead) :], dtype=torch.long, device=last.device)
            left_states = torch.cat([self.context[1], hidden])[: len(prefix)] if self.context else hidden[:-1]
            left_logprobs, *scored = self._logprobs([(left_states, left_tokens), *states])
        if not known or known[2] is None:
            if not known and len(self.lefts) >= LEFT_CONTEXTS:
                del self.lefts[next(iter(self.lefts))]
            self.lefts[key] = (hidden, cache, left_logprobs)
        left_scores = left_logprobs if left_logprobs is not None else np.zeros(0)
        return [SpanLogprobs(left_scores, logprobs[:cut], logprobs[cut:]) for logprobs, cut in zip(scored, cuts)]

    def next_words(self, lefts: Sequence[str], top: int) -> list[list[str]]:
        """A token is a whole word when the text it adds starts with a space (or starts the sentence)
        and is letters only; a word split in several tokens is not proposed. The contexts run together
        (rows of one length a batch) and their last states through the output layer at once."""
        import torch

        prefixes = [self._row(left.rstrip()) for left in lefts]
        last = [hidden[-1:] if len(hidden) else self.context[1] for hidden in self._hidden(prefixes, self.context)]
        proposed = []
        for first, logits in self._output(torch.cat(last)) if last else ():
            for prefix, row in zip(prefixes[first:], logits):
                before = self.tokenizer.decode(prefix, skip_special_tokens=True)
                words = []
                for token in torch.topk(row, top).indices.tolist():
                    added = self.tokenizer.decode([*prefix, token], skip_special_tokens=True)[len(before) :]
                    word = added.strip()
                    if word.isalpha() and added in (f" {word}", word if len(prefix) == len(self.lead) else None):  # a sentence's first word
                        words.append(word)
                proposed.append(words)
        return proposed

    def _window(self, ids: list[int], before: int = 0) -> list[int]:
        """The first ``MAX_TOKENS`` tokens of a text (``before`` of them already given): a longer one
        is scored on that window, said once, so memory and time stay bounded whatever the input."""
        if before + len(ids) <= MAX_TOKENS:
            return ids
        if not self.windowed:
            print(f"tvrbench: a text longer than {MAX_TOKENS} tokens is scored on its first {MAX_TOKENS} (docs/numerics.md)", file=sys.stderr)
        self.windowed += 1
        return ids[: max(MAX_TOKENS - before, 0)]

    def _prefix(self, prefix: list[int], context: tuple | None = None):
        """The hidden states of a shared left context, and its key-value cache (one tensor pair per layer),
        after the ``context``'s cache when given (the primer's)."""
        import torch

        if context is not None and not prefix:
            return context[1][:0], context[0]
        ids = torch.tensor([prefix], device=self.model.device)
        past = {self.cache_keyword: self._cache(context[0], 1)} if context is not None else {}
        with torch.no_grad():
            out = self.model.base_model(input_ids=ids, use_cache=True, **past)
        return out.last_hidden_state[0], [(layer.keys, layer.values) for layer in getattr(out, self.cache_keyword).layers]

    def _cache(self, layers: list[tuple], rows: int):
        """A transformers cache holding ``layers``' keys and values, one copy per row of a batch."""
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        for index, (keys, values) in enumerate(layers):
            cache.update(keys.expand(rows, -1, -1, -1).contiguous(), values.expand(rows, -1, -1, -1).contiguous(), index)
        return cache

    def _hidden(self, rows: list[list[int]], prefix=None) -> list:
        """Each row's last hidden states, one per token, after a shared ``prefix`` when given (its
        key-value cache and its last hidden state).

        Rows are batched only with rows of the same length, ``batch_size`` at a time, so no padding ever
        enters a batch; a batch of fewer than ``MIN_ROWS`` tokens repeats its first row up to that, so
        every product takes the kernels that give a row the same bits in any batch."""
        import torch

        by_length: dict[int, list[int]] = {}
        for k, row in enumerate(rows):
            by_length.setdefault(len(row), []).append(k)
        hidden: list = [None] * len(rows)
        for length, members in sorted(by_length.items()):
            for start in range(0, len(members), self.batch_size):
                batch = members[start : start + self.batch_size]
                if not length:  # an empty row has no state
                    for k in batch:
                        hidden[k] = torch.zeros((0, self.model.config.hidden_size), device=self.model.device)
                    continue
                repeats = max(0, -(-MIN_ROWS // length) - len(batch))
                ids = torch.tensor([rows[k] for k in [*batch, *[batch[0]] * repeats]], dtype=torch.long, device=self.model.device)
                cache, past = (self._cache(prefix[0], len(ids)), prefix[0][0][0].shape[2]) if prefix is not None else (None, 0)
                mask = torch.ones((len(ids), past + length), dtype=torch.long, device=ids.device)  # a batch of one takes the same kernels
                with torch.no_grad():
                    states = self.model.base_model(input_ids=ids, attention_mask=mask, **{self.cache_keyword: cache}).last_hidden_state
                for row, k in enumerate(batch):
                    hidden[k] = states[row]
        return hidden

    def _states(self, rows: list[list[int]], prefix=None) -> list[tuple]:
        """Each row's hidden states before each of its tokens, and those tokens: after the first token, or
        all of them after a shared ``prefix``."""
        import torch

        states = []
        for row, hidden in zip(rows, self._hidden(rows, prefix)):
            tokens = torch.tensor(row, dtype=torch.long, device=hidden.device)
            states.append((torch.cat([prefix[1], hidden[:-1]]), tokens) if prefix is not None and row else (hidden[:-1], tokens[1:]))
        return states

    def _output(self, hidden):
        """(first position, float32 logits) of ``hidden``'s positions through the output layer, ``OUTPUT_ROWS``
        at a time. The output layer (Gemma's: 262,144 words) reads its whole weight matrix per product,
        so positions go through it together; a chunk bounds the logits held at once (128 MB) whatever
        the texts' length. A product has at least ``MIN_ROWS`` rows (zeros pad it): MKL takes other
        kernels for fewer, and under the numeric contract a position's bits then do not depend on the
        positions beside it (strict mode: the same bits for any row count from 4 up)."""
        import torch

        output = self.model.get_output_embeddings()
        cap = getattr(self.model.config, "final_logit_softcapping", None)
        with torch.no_grad():
            for start in range(0, len(hidden), OUTPUT_ROWS):
                chunk = hidden[start : start + OUTPUT_ROWS]
                padded = torch.cat([chunk, chunk.new_zeros(MIN_ROWS - len(chunk), chunk.shape[1])]) if len(chunk) < MIN_ROWS else chunk
                logits = output(padded)[: len(chunk)].float()
                yield start, torch.tanh(logits / cap) * cap if cap else logits

    def _logprobs(self, states: list[tuple]) -> list[np.ndarray]:
        """ln P of each state's tokens given the hidden states before them, every position of the call
        through the output layer together (:meth:`_output`)."""
        import torch

        if not states:
            return []
        tokens = torch.cat([t for _, t in states])
        out = [torch.log_softmax(logits, dim=-1).gather(-1, tokens[start : start + len(logits), None])[:, 0]
               for start, logits in self._output(torch.cat([h for h, _ in states]))]  # fmt: skip
        flat = torch.cat(out).double().cpu().numpy() if out else np.zeros(0)
        return np.split(flat, np.cumsum([len(t) for _, t in states])[:-1])


class _Weights:
    """A causal LM's model and tokenizer on one place, shared by the :class:`CausalLM` objects that read
    them and held by them alone: ``_LOADED`` forgets it when the last one goes."""

    def __init__(self, model, tokenizer):
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        self.model, self.tokenizer = model, tokenizer


_LOADED: weakref.WeakValueDictionary[tuple, _Weights] = weakref.WeakValueDictionary()  # (source, place, revision)


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
