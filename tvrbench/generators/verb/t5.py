"""T5 verb-phrase candidates (Park et al. §3.2): mask the phrase with T5's first sentinel and keep
the K best distinct fills of beam search; and fine-tuning T5 on training captions.

Models load by hub name or local path through ``transformers``' Auto classes, never with remote
code, on the device ``--device`` names (:func:`tvrbench.resources.torch_device`); :func:`~tvrbench.lm.loading.pinned` names the hub
commit or the folder's digest for signatures. Each beam ends at ``<extra_id_1>`` (or EOS): its fill
is the text after ``<extra_id_0>``; a beam without ``<extra_id_0>`` (an untrained model) is taken
whole, and one cut off by ``max_new_tokens`` before it ended is dropped.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.generators.base import Candidate, Request, changed_fields, match_case, replace_tokens
from tvrbench.generators.config import Device, FinetuneConfig, T5GeneratorConfig
from tvrbench.io.atomic import atomic_folder
from tvrbench.io.writers import mark
from tvrbench.lm.loading import load_pretrained, pinned
from tvrbench.numerics import NATS, rounded

SENTINEL = "<extra_id_0>"
NEXT_SENTINEL = "<extra_id_1>"
_SENTINELS = re.compile(r"<extra_id_(\d+)>")


# --------------------------------------------------------------------------- candidates


def masked_input(doc, start: int, end: int) -> str:
    """The caption with tokens ``[start, end)`` replaced by T5's first sentinel."""
    span = doc[start:end]
    return doc.text[: span.start_char] + SENTINEL + doc.text[span.end_char :]


def parse_fill(decoded: str, special: Sequence[str]) -> str:
    """The words a beam puts in place of ``<extra_id_0>``; ``special`` (pad, eos) are dropped."""
    for token in special:
        if token:
            decoded = decoded.replace(token, " ")
    parts = _SENTINELS.split(decoded)  # [before, id, text, id, text, ...]
    if len(parts) == 1:
        fill = parts[0]
    else:
        fills = dict(zip(parts[1::2], parts[2::2]))
        fill = fills.get("0", "")
    return " ".join(fill.split())


class T5Verbs:
    """Candidates: the K best distinct fills of ``num_beams`` beams, in T5's order, other than the
    original words; each keeps T5's rank among them (``t5_rank``) and its beam score (``t5_score``,
    the length-normalised log-probability)."""

    def __init__(self, config: T5GeneratorConfig, model_name: str | None = None, device: Device = "cpu"):
        self.config = config
        self.model_name = model_name or config.model
        identity, revision = pinned(self.model_name)
        self.model, self.tokenizer = load_pretrained("seq2seq", self.model_name, device, revision)
        if SENTINEL not in self.tokenizer.get_vocab() or NEXT_SENTINEL not in self.tokenizer.get_vocab():
            raise InputError(self.model_name, f"tokenizer has no {SENTINEL} / {NEXT_SENTINEL} sentinels; not a T5 span-corruption model")
        dtype = str(self.model.dtype).removeprefix("torch.")
        self.name = f"t5={identity}" + ("" if dtype == "float32" else f"({dtype})")
        self.changed = changed_fields(config, leave_out=frozenset({"model"}))  # the model is named
        self.special = [self.tokenizer.pad_token, self.tokenizer.eos_token, self.tokenizer.unk_token]
        self.stop = [self.tokenizer.convert_tokens_to_ids(NEXT_SENTINEL), self.tokenizer.eos_token_id]

    def beams(self, inputs: Sequence[str]) -> list[list[tuple[str, float]]]:
        """For each masked input, its beams' (fill, score) in T5's order: every beam that ended at
        ``<extra_id_1>`` or EOS (duplicates and empties included)."""
        import torch

        beams = self.config.num_beams
        out: list[list[tuple[str, float]]] = []
        for start in range(0, len(inputs), self.config.batch_size):
            batch = list(inputs[start : start + self.config.batch_size])
            encoded = self.tokenizer(batch, return_tensors="pt", padding=True).to(self.model.device)
            with torch.no_grad():
                output = self.model.generate(
                    **encoded, num_beams=beams, num_return_sequences=beams, max_new_tokens=self.config.max_new_tokens,
                    do_sample=False, eos_token_id=self.stop, return_dict_in_generate=True, output_scores=True,
                )  # fmt: skip
            ended = torch.isin(output.sequences[:, 1:], torch.tensor(self.stop, device=output.sequences.device)).any(dim=1).tolist()
            decoded = self.tokenizer.batch_decode(output.sequences, skip_special_tokens=False)
            scores = output.sequences_scores.float().cpu().tolist()
            for i in range(len(batch)):
                rows = range(i * beams, (i + 1) * beams)
                out.append([(parse_fill(decoded[r], self.special), scores[r]) for r in rows if ended[r]])
        return out

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        beams = self.beams([masked_input(r.item.doc, r.target.start, r.target.end) for r in requests])
        lists = []
        for request, request_beams in zip(requests, beams):
            doc, target = request.item.doc, request.target
            original = doc[target.start : target.end].text
            seen = {original.lower(), ""}
            candidates = []
            for fill, score in request_beams:
                if fill.lower() in seen or "<" in fill:
                    continue
                seen.add(fill.lower())
                replacement = replace_tokens(doc, target.start, target.end, match_case(fill, original))
                candidates.append(Candidate(request, (replacement,), {"t5_rank": len(candidates), "t5_score": rounded(score, NATS), "fill": fill}))
                if len(candidates) == self.config.num_candidates:
                    break
            lists.append(candidates)
        return lists


# --------------------------------------------------------------------------- fine-tuning


def random_spans_noise_mask(length: int, noise_density: float, mean_span_length: float, rng: np.random.Generator) -> np.ndarray:
    """T5's noise mask (Raffel et al. 2020; ``t5.data.preprocessors.random_spans_noise_mask``):
    round(length · density) noise tokens in round(that / mean span length) spans, alternating with
    as many non-noise spans, the first span non-noise; span lengths are a random segmentation."""
    noise = min(max(int(np.round(length * noise_density)), 1), length - 1)
    spans = max(int(np.round(noise / mean_span_length)), 1)

    def segment(items: int) -> np.ndarray:
        first = np.concatenate([[False], rng.permutation(np.arange(items - 1) < spans - 1)])
        return np.bincount(np.cumsum(first), minlength=spans)

    lengths = np.stack([segment(length - noise), segment(noise)], axis=1).reshape(-1)  # non-noise, noise, ...
    return np.repeat(np.arange(2 * spans) % 2 == 1, lengths)


def corrupt(tokens: Sequence, mask: np.ndarray, sentinels: Sequence) -> tuple[list, list]:
    """T5's (inputs, targets): each noise span replaced by the next sentinel in the input, and the
    target the sentinels each followed by the span it hides."""
    inputs, targets = [], []
    span = -1
    for k, (token, noisy) in enumerate(zip(tokens, mask)):
        if noisy and (k == 0 or not mask[k - 1]):
            span += 1
            inputs.append(sentinels[span])
            targets.append(sentinels[span])
        (targets if noisy else inputs).append(token)
    return inputs, targets


def span_corruption_examples(docs, phrases) -> list[tuple[str, str]]:
    """The ``verb-phrases`` masking: (input, target) pairs, each verb phrase
    (:class:`~tvrbench.generators.verb.phrases.VerbPhrases`) of each caption masked by ``<extra_id_0>``,
    the target ``<extra_id_0> phrase <extra_id_1>``, as the candidates are asked for."""
    examples = []
    for doc in docs:
        for target in phrases.in_doc(doc):
            phrase = doc[target.start : target.end].text
            examples.append((masked_input(doc, target.start, target.end), f"{SENTINEL} {phrase} {NEXT_SENTINEL}"))
    return examples


class SpanCorruption:
    """T5's objective on captions: their tokens concatenated (in a seeded order per epoch), cut into
    pieces of ``max_length - 1`` and corrupted with :func:`random_spans_noise_mask`; EOS ends both sides."""

    def __init__(self, tokenizer, texts: Sequence[str], config: FinetuneConfig):
        self.tokens = [tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
        self.eos = tokenizer.eos_token_id
        self.config = config
        self.piece = config.max_length - 1
        spans = max(1, round(round(self.piece * config.noise_density) / config.mean_noise_span_length))
        vocab = tokenizer.get_vocab()
        names = [f"<extra_id_{i}>" for i in range(spans + 1)]
        if any(name not in vocab for name in names):
            raise InputError(None, f"the tokenizer has fewer than {len(names)} <extra_id_N> sentinels; lower max_length")
        self.sentinels = [vocab[name] for name in names]

    def __len__(self) -> int:
        return math.ceil(sum(map(len, self.tokens)) / self.piece)

    def pairs(self, rng: np.random.Generator) -> list[tuple[list[int], list[int]]]:
        stream = [token for k in rng.permutation(len(self.tokens)) for token in self.tokens[k]]
        pairs = []
        for start in range(0, len(stream), self.piece):
            piece = stream[start : start + self.piece]
            if len(piece) >= 2:
                mask = random_spans_noise_mask(len(piece), self.config.noise_density, self.config.mean_noise_span_length, rng)
                inputs, targets = corrupt(piece, mask, self.sentinels)
                pairs.append((inputs + [self.eos], targets + [self.eos]))
        return pairs


class VerbPhraseMasking:
    """The ``verb-phrases`` option: :func:`span_corruption_examples`, tokenized."""

    def __init__(self, tokenizer, examples: Sequence[tuple[str, str]], config: FinetuneConfig):
        cut = {"truncation": True, "max_length": config.max_length}
        self.fixed = [(tokenizer(s, **cut)["input_ids"], tokenizer(t, **cut)["input_ids"]) for s, t in examples]

    def __len__(self) -> int:
        return len(self.fixed)

    def pairs(self, rng: np.random.Generator) -> list[tuple[list[int], list[int]]]:
        return [self.fixed[k] for k in rng.permutation(len(self.fixed))]


def _batch(pairs, pad: int, place: str) -> dict:
    import torch

    width_in, width_out = max(len(s) for s, _ in pairs), max(len(t) for _, t in pairs)
    ids = torch.tensor([s + [pad] * (width_in - len(s)) for s, _ in pairs])
    labels = torch.tensor([t + [-100] * (width_out - len(t)) for _, t in pairs])
    return {"input_ids": ids.to(place), "attention_mask": (ids != pad).long().to(place), "labels": labels.to(place)}


def objective(tokenizer, texts: Sequence[str], config: FinetuneConfig) -> SpanCorruption | VerbPhraseMasking:
    """The examples ``config.masking`` makes of ``texts``."""
    if config.masking == "span-corruption":
        return SpanCorruption(tokenizer, texts, config)
    from tvrbench.generators.verb.phrases import VerbPhrases
    from tvrbench.resources import spacy_pipeline

    nlp = spacy_pipeline("en_core_web_sm")
    return VerbPhraseMasking(tokenizer, span_corruption_examples(nlp.pipe(texts, batch_size=256), VerbPhrases(nlp)), config)


def finetune_t5(model_name: str, texts: Sequence[str], out: str | Path, config: FinetuneConfig) -> dict:
    """Fine-tune on ``texts`` with AdamW and a linear schedule after ``warmup_fraction`` of the steps
    of warm-up; a seeded ``held_out`` share of the captions gives a loss after every epoch. Same
    seed, same weights (on the CPU). The folder appears complete or not at all."""
    import torch
    from transformers import get_linear_schedule_with_warmup

    torch.manual_seed(config.seed)
    model, tokenizer = load_pretrained("seq2seq", model_name, config.device)
    model.float()  # training stays in fp32
    order = np.random.default_rng(config.seed).permutation(len(texts))
    cut = round(config.held_out * len(texts)) if len(texts) > 1 else 0
    held_out = objective(tokenizer, [texts[k] for k in order[:cut]], config)
    train = objective(tokenizer, [texts[k] for k in order[cut:]], config)
    if not len(train):
        raise InputError(None, "nothing to fine-tune on in the training captions")
    total = math.ceil(len(train) / config.batch_size) * config.epochs
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
    schedule = get_linear_schedule_with_warmup(optimizer, math.ceil(config.warmup_fraction * total), total)
    rng = np.random.default_rng(config.seed)
    validation = held_out.pairs(np.random.default_rng(config.seed + 1))  # the same pieces every epoch
    place = str(model.device)
    losses, validation_losses = [], []
    for _ in range(config.epochs):
        model.train()
        pairs = train.pairs(rng)
        for start in range(0, len(pairs), config.batch_size):
            loss = model(**_batch(pairs[start : start + config.batch_size], tokenizer.pad_token_id, place)).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            schedule.step()
            losses.append(loss.item())
        validation_losses.append(held_out_loss(model, validation, tokenizer.pad_token_id, config.batch_size))
    model.eval()
    summary = {"base_model": pinned(model_name)[0], "masking": config.masking, "examples": len(train), "held_out_examples": len(validation),
               "steps": len(losses), "loss_first": losses[0], "loss_last": losses[-1], "held_out_loss": validation_losses,
               "settings": config.model_dump()}  # fmt: skip
    with atomic_folder(out) as staging:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "tvrbench_finetune.json").write_text(json.dumps(mark(summary, "contrast finetune-t5"), indent=2) + "\n", encoding="utf-8")
    return summary


def held_out_loss(model, pairs, pad: int, batch_size: int) -> float | None:
    """Mean token loss of the model on ``pairs`` (None without any)."""
    import torch

    if not pairs:
        return None
    model.eval()
    total, tokens = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(pairs), batch_size):
            batch = _batch(pairs[start : start + batch_size], pad, str(model.device))
            count = int((batch["labels"] != -100).sum())
            total += float(model(**batch).loss) * count
            tokens += count
    return total / tokens
