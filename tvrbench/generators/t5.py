"""T5 verb-phrase candidates (Park et al. §3.2): mask the phrase with T5's first sentinel and keep
the K = 50 beams' fills; and fine-tuning T5 on training captions with the same span corruption.

Models load by hub name or local path through ``transformers``' Auto classes, never with remote
code. A beam's fill is the text after ``<extra_id_0>`` up to the next sentinel or the end; a beam
without ``<extra_id_0>`` (an untrained model) is taken whole.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import numpy as np

from tvrbench.errors import InputError, MissingResource
from tvrbench.generators.base import Candidate, Request, match_case, replace_tokens
from tvrbench.generators.config import FinetuneConfig, T5GeneratorConfig

SENTINEL = "<extra_id_0>"
NEXT_SENTINEL = "<extra_id_1>"
_SENTINELS = re.compile(r"<extra_id_(\d+)>")


def load_pretrained(kind: Literal["seq2seq", "causal"], name_or_path: str):
    """(model in eval mode, tokenizer) from a local folder or a hub name; remote code is refused."""
    from transformers import AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    if name_or_path.startswith((".", "/", "~")) and not Path(name_or_path).expanduser().is_dir():
        raise InputError(name_or_path, "no such model folder")
    model_class = AutoModelForSeq2SeqLM if kind == "seq2seq" else AutoModelForCausalLM
    try:
        tokenizer = AutoTokenizer.from_pretrained(name_or_path, trust_remote_code=False)
        model = model_class.from_pretrained(name_or_path, trust_remote_code=False)
    except (OSError, ValueError) as error:
        raise MissingResource(
            f"{kind} model {name_or_path!r} ({type(error).__name__})",
            "pass a folder saved with save_pretrained, or a hub name on a machine that can download it",
        ) from None
    model.eval()
    return model, tokenizer


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
    """Candidates: the distinct fills of K beams, in beam order, other than the original words."""

    name = "t5"

    def __init__(self, config: T5GeneratorConfig, model_name: str | None = None):
        self.config = config
        self.model_name = model_name or config.model
        self.model, self.tokenizer = load_pretrained("seq2seq", self.model_name)
        if SENTINEL not in self.tokenizer.get_vocab():
            raise InputError(self.model_name, f"tokenizer has no {SENTINEL} sentinel; not a T5 span-corruption model")
        self.special = [self.tokenizer.pad_token, self.tokenizer.eos_token, self.tokenizer.unk_token]

    def beams(self, inputs: Sequence[str]) -> list[list[str]]:
        """For each masked input, its K fills in beam order (duplicates and empties included)."""
        import torch

        k = min(self.config.num_candidates, self.config.num_beams)
        fills: list[list[str]] = []
        for start in range(0, len(inputs), self.config.batch_size):
            batch = list(inputs[start : start + self.config.batch_size])
            encoded = self.tokenizer(batch, return_tensors="pt", padding=True)
            with torch.no_grad():
                output = self.model.generate(
                    **encoded, num_beams=self.config.num_beams, num_return_sequences=k, max_new_tokens=self.config.max_new_tokens, do_sample=False
                )
            decoded = self.tokenizer.batch_decode(output, skip_special_tokens=False)
            fills.extend([parse_fill(text, self.special) for text in decoded[i * k : (i + 1) * k]] for i in range(len(batch)))
        return fills

    def generate(self, requests: Sequence[Request]) -> list[list[Candidate]]:
        fills = self.beams([masked_input(r.item.doc, r.target.start, r.target.end) for r in requests])
        lists = []
        for request, beam_fills in zip(requests, fills):
            doc, target = request.item.doc, request.target
            original = doc[target.start : target.end].text
            seen = {original.lower(), ""}
            candidates = []
            for rank, fill in enumerate(beam_fills):
                if fill.lower() in seen or "<" in fill:
                    continue
                seen.add(fill.lower())
                replacement = replace_tokens(doc, target.start, target.end, match_case(fill, original))
                candidates.append(Candidate(request, (replacement,), {"beam_rank": rank, "fill": fill}))
            lists.append(candidates)
        return lists


def span_corruption_examples(docs, phrases) -> list[tuple[str, str]]:
    """(input, target) pairs: each verb phrase (:class:`~tvrbench.generators.verb.VerbPhrases`) of each
    caption masked by ``<extra_id_0>``."""
    examples = []
    for doc in docs:
        for target in phrases.in_doc(doc):
            phrase = doc[target.start : target.end].text
            examples.append((masked_input(doc, target.start, target.end), f"{SENTINEL} {phrase} {NEXT_SENTINEL}"))
    return examples


def finetune_t5(model_name: str, examples: list[tuple[str, str]], out: str | Path, config: FinetuneConfig) -> dict:
    """Fine-tune on span-corrupted captions with AdamW; the folder appears complete or not at all."""
    import torch

    if not examples:
        raise InputError(None, "no verb phrase in the training captions: nothing to fine-tune on")
    torch.manual_seed(config.seed)
    model, tokenizer = load_pretrained("seq2seq", model_name)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=config.learning_rate)
    rng = np.random.default_rng(config.seed)
    losses = []
    for _ in range(config.epochs):
        order = rng.permutation(len(examples))
        for start in range(0, len(order), config.batch_size):
            batch = [examples[i] for i in order[start : start + config.batch_size]]
            encoded = tokenizer(
                [source for source, _ in batch],
                text_target=[target for _, target in batch],
                return_tensors="pt",
                padding=True,
                truncation=True,
                max_length=config.max_length,
            )
            labels = encoded["labels"]
            labels[labels == tokenizer.pad_token_id] = -100
            loss = model(input_ids=encoded["input_ids"], attention_mask=encoded["attention_mask"], labels=labels).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(float(loss))
    model.eval()
    out = Path(out)
    staging = out.with_name(f".{out.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    model.save_pretrained(staging)
    tokenizer.save_pretrained(staging)
    summary = {"base_model": model_name, "examples": len(examples), "steps": len(losses),
               "loss_first": losses[0], "loss_last": losses[-1], "settings": config.model_dump()}  # fmt: skip
    (staging / "tvrbench_finetune.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    return summary
