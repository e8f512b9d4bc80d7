"""Benchmark: throughput of the contrast generators on the MSR-VTT 1k-A sample.

* gender (table + spaCy tags) on all captions;
* verb, offline WordNet generator with its offline filters, on the first ``--verb-captions``;
  reference in the same run: the sentence model's raw throughput on the same captions, so the
  verb cost reads as "sentence encodes per caption" (the meaning filter is the bottleneck);
* verb, T5 path with a tiny T5 and a tiny GPT-2 built here (beam search K = 50, all filters) on
  ``--t5-captions`` captions: the pipeline's own overhead, since real T5-base / GPT2-XL cost is the
  models' own.

The machine is shared, so wall times vary with load; CPU times are reported beside them.
Writes benchmarks/results/contrast.json.

    .venv/bin/python benchmarks/bench_contrast.py [--verb-captions 100] [--t5-captions 30]
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "contrast.json"
MSRVTT = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")


def timed(function):
    wall, cpu = time.perf_counter(), time.process_time()
    value = function()
    return value, time.perf_counter() - wall, time.process_time() - cpu


def tiny_models(folder: Path):
    """Tiny T5 and GPT-2 from configs, with word-level tokenizers trained on synthetic captions."""
    sys.path.insert(0, str(ROOT / "tests"))
    import torch
    from test_contrast_verb import make_tokenizer, synthetic_captions
    from transformers import GPT2Config, GPT2LMHeadModel, T5Config, T5ForConditionalGeneration

    torch.manual_seed(0)
    texts = synthetic_captions()
    t5_tok = make_tokenizer(texts, [f"<extra_id_{i}>" for i in range(4)], pad_token="<pad>", eos_token="</s>")
    T5ForConditionalGeneration(T5Config(
        vocab_size=len(t5_tok), d_model=32, d_ff=64, d_kv=8, num_layers=2, num_heads=2,
        pad_token_id=t5_tok.pad_token_id, eos_token_id=t5_tok.eos_token_id, decoder_start_token_id=t5_tok.pad_token_id,
    )).save_pretrained(folder / "t5")  # fmt: skip
    t5_tok.save_pretrained(folder / "t5")
    gpt_tok = make_tokenizer(texts, [], bos_token="<|endoftext|>", eos_token="<|endoftext|>")
    GPT2LMHeadModel(GPT2Config(vocab_size=len(gpt_tok), n_embd=32, n_layer=2, n_head=2, n_positions=64,
                               bos_token_id=gpt_tok.bos_token_id, eos_token_id=gpt_tok.eos_token_id)).save_pretrained(folder / "gpt2")  # fmt: skip
    gpt_tok.save_pretrained(folder / "gpt2")
    train = folder / "train.csv"
    train.write_text("caption_id,text,video_id\n" + "".join(f"t{i},{t},v{i}\n" for i, t in enumerate(texts)))
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--verb-captions", type=int, default=100)
    parser.add_argument("--t5-captions", type=int, default=30)
    args = parser.parse_args()
    if not MSRVTT.is_file():
        sys.exit(f"MSR-VTT sample not present: {MSRVTT}")

    from tvrbench.generators import gender_contrasts, verb_contrasts
    from tvrbench.generators.config import PerplexityConfig, T5GeneratorConfig, VerbConfig
    from tvrbench.io.captions import read_captions
    from tvrbench.resources import sentence_model, spacy_pipeline

    captions = read_captions(MSRVTT)
    spacy_pipeline("en_core_web_sm")
    model = sentence_model()
    results: dict = {"captions_file": str(MSRVTT)}
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        (records, sidecar), wall, cpu = timed(lambda: gender_contrasts(captions, work / "gender.jsonl"))
        results["gender"] = {"captions": len(captions), "records": len(records), "wall_s": wall, "cpu_s": cpu,
                             "captions_per_s": len(captions) / wall}  # fmt: skip
        print(f"gender: {len(captions)} captions, {len(records)} contrasts in {wall:.1f} s ({len(captions) / wall:.0f} captions/s)")

        subset = captions.subset(range(args.verb_captions))
        _, encode_wall, _ = timed(lambda: model.encode(subset.texts, batch_size=64))
        (records, sidecar), wall, cpu = timed(lambda: verb_contrasts(subset, work / "verb.jsonl"))
        counts = sidecar["counts"]
        with_verb = counts["captions"] - counts.get("no target", 0)
        judged = sum(sidecar["candidates_rejected"].values()) + len(records)
        encode_rate = len(subset) / encode_wall
        results["verb_offline"] = {
            "captions": len(subset), "with_verb": with_verb, "records": len(records), "coverage": len(records) / with_verb,
            "candidates_judged": judged, "wall_s": wall, "cpu_s": cpu, "captions_per_s": len(subset) / wall,
            "reference_sentence_encodes_per_s": encode_rate,
            "cost_in_sentence_encodes_per_caption": (wall / len(subset)) * encode_rate,
        }  # fmt: skip
        print(f"verb (WordNet, offline filters): {len(subset)} captions, {len(records)} contrasts "
              f"({100 * len(records) / with_verb:.1f} % of {with_verb} with a verb), {judged} candidates judged, "
              f"{wall:.1f} s ({len(subset) / wall:.2f} captions/s); sentence model alone: {encode_rate:.0f} sentences/s, "
              f"so one caption costs as much as {(wall / len(subset)) * encode_rate:.0f} encodes")  # fmt: skip

        tiny_models(work)
        t5_subset = captions.subset(range(args.t5_captions))
        config = VerbConfig(generator="t5", t5=T5GeneratorConfig(model=str(work / "t5"), max_new_tokens=4),
                            perplexity=PerplexityConfig(lm=str(work / "gpt2")))  # fmt: skip
        (records, sidecar), wall, cpu = timed(lambda: verb_contrasts(t5_subset, work / "t5.jsonl", config))
        targets = sidecar["counts"]["captions"] - sidecar["counts"].get("no target", 0)
        results["verb_t5_tiny"] = {
            "captions": len(t5_subset), "beams_per_target": 50, "records": len(records), "wall_s": wall, "cpu_s": cpu,
            "captions_per_s": len(t5_subset) / wall, "captions_with_target": targets,
        }  # fmt: skip
        print(f"verb (tiny T5, K=50 beams, tiny GPT-2 perplexity): {len(t5_subset)} captions in {wall:.1f} s "
              f"({len(t5_subset) / wall:.2f} captions/s), {len(records)} contrasts")  # fmt: skip
        offline = results["verb_offline"]["captions_per_s"]
        results["ratio_offline_over_t5_tiny_captions_per_s"] = offline / results["verb_t5_tiny"]["captions_per_s"]
        print(f"offline / tiny-T5 throughput: {results['ratio_offline_over_t5_tiny_captions_per_s']:.2f}x")
    results["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(f"peak RSS {results['peak_rss_mb']:.0f} MB; wrote {RESULTS}")


if __name__ == "__main__":
    main()
