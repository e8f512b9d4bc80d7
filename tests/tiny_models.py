"""Tiny T5 and GPT-2 built from a config, with word-level tokenizers trained on synthetic captions:
the transformers paths run end to end without downloading weights."""

from __future__ import annotations

from pathlib import Path

SUBJECTS = ["a man", "a woman", "the boy", "a girl", "two people"]
VERBS = ["is playing", "is cooking", "is holding", "is cleaning", "is throwing", "is pushing"]
OBJECTS = ["a guitar", "the ball", "some food", "a car", "the door"]
SENTINELS = [f"<extra_id_{i}>" for i in range(8)]


def synthetic_captions() -> list[str]:
    return [f"{s} {v} {o}" for s in SUBJECTS for v in VERBS for o in OBJECTS]


def make_tokenizer(texts, extra_special: list[str], **names):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from tokenizers.processors import TemplateProcessing
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    specials = list(dict.fromkeys([*names.values(), "<unk>", *extra_special]))
    tokenizer.train_from_iterator(texts, trainers.WordLevelTrainer(special_tokens=specials))
    if "eos_token" in names and "bos_token" not in names:
        eos = names["eos_token"]
        tokenizer.post_processor = TemplateProcessing(single=f"$A {eos}", special_tokens=[(eos, tokenizer.token_to_id(eos))])
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", additional_special_tokens=extra_special, **names)


def build_tiny_models(folder: Path) -> tuple[Path, Path]:
    """``folder``/t5 and ``folder``/gpt2 (random weights, seed 0), and ``folder``/train.csv of the captions."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    texts = synthetic_captions()
    t5_tok = make_tokenizer(texts, SENTINELS, pad_token="<pad>", eos_token="</s>")
    t5 = T5ForConditionalGeneration(T5Config(
        vocab_size=len(t5_tok), d_model=32, d_ff=64, d_kv=8, num_layers=2, num_decoder_layers=2, num_heads=2,
        pad_token_id=t5_tok.pad_token_id, eos_token_id=t5_tok.eos_token_id, decoder_start_token_id=t5_tok.pad_token_id,
    ))  # fmt: skip
    t5.save_pretrained(folder / "t5")
    t5_tok.save_pretrained(folder / "t5")
    gpt_tok = make_tokenizer(texts, [], bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    gpt = GPT2LMHeadModel(GPT2Config(vocab_size=len(gpt_tok), n_embd=32, n_layer=2, n_head=2, n_positions=64,
                                     bos_token_id=gpt_tok.bos_token_id, eos_token_id=gpt_tok.eos_token_id))  # fmt: skip
    gpt.save_pretrained(folder / "gpt2")
    gpt_tok.save_pretrained(folder / "gpt2")
    train = folder / "train.csv"
    train.write_text("caption_id,text,video_id\n" + "".join(f"t{i},{t},v{i}\n" for i, t in enumerate(texts)))
    return folder, train
