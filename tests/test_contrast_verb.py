"""Verb contrasts: the offline WordNet generator on real captions, and the T5 + causal-LM path end to
end with tiny models built here from a config and a tokenizer trained on the test captions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from tiny_models import build_tiny_models, synthetic_captions

from tvrbench.generators import verb_contrasts
from tvrbench.generators.base import CaptionItem, ContrastSearch
from tvrbench.generators.config import FrequencyConfig, PerplexityConfig, T5GeneratorConfig, VerbConfig
from tvrbench.generators.frames import VerbPhrases
from tvrbench.generators.t5 import parse_fill
from tvrbench.generators.verb import VerbContrasts
from tvrbench.io.captions import Captions, read_captions

ROOT = Path(__file__).resolve().parents[1]
MSRVTT = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")
VERB = VerbConfig(lm="ngram")  # the trigram ranks: these tests are about the generator, not the LM (test_offline_lms.py is)


@pytest.fixture(scope="module")
def nlp():
    from tvrbench.resources import spacy_pipeline

    return spacy_pipeline("en_core_web_sm", disable=("ner",))  # as verb_contrasts loads it: with the parser


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory, nlp):
    if not MSRVTT.is_file():
        pytest.skip(f"MSR-VTT sample not present: {MSRVTT}")
    captions = read_captions(MSRVTT).subset(range(40))
    out = tmp_path_factory.mktemp("verb") / "verb.jsonl"
    records, run = verb_contrasts(captions, out, VERB)
    sidecar = run.to_json()
    return captions, records, sidecar


def test_offline_verbs_cover_most_captions_with_a_verb_and_name_the_lm(offline_run, nlp):
    captions, records, sidecar = offline_run
    with_verb = [c for c, doc in zip(captions.caption_ids, nlp.pipe(captions.texts)) if any(t.pos_ == "VERB" for t in doc)]
    assert {r.caption_id for r in records} <= set(with_verb)
    assert len(records) >= 0.6 * len(with_verb)  # 70 % on all 1,000 captions (benchmarks/bench_contrast.py)
    signature = sidecar["signature"]
    assert "lm:cmu-en-us-3gram(pocketsphinx-" in signature and "skipped" not in signature
    assert "filters:perplexity,frequency,meaning-changed,has-verb" in signature and "frequency:unigram>=-6" in signature
    plausibility = sidecar["plausibility"]
    assert plausibility["pairs"] == len(records) and 0 <= plausibility["prefers_original"] <= 1
    substitutes = Counter(r.details["new_lemma"].split("_")[0] for r in records)
    assert max(substitutes.values()) <= max(1, int(VerbConfig().choice.max_share * len(records)))  # the set's cap


def test_offline_verbs_change_only_the_verb_phrase_and_never_to_a_synonym(offline_run, nlp):
    from tvrbench.resources import wordnet

    wn = wordnet()
    config = VerbConfig()
    _, records, _ = offline_run
    for record in records:
        doc = nlp(record.original)
        assert len(record.edit) == 1
        edit = record.edit[0]
        start, end = edit["tokens"]
        assert doc[start].pos_ == "VERB" and all(t.tag_ in ("RP", "IN") for t in doc[start + 1 : end])
        s, e = edit["chars"]
        cs, ce = edit["contrast_chars"]
        assert record.original[:s] == record.contrast[:cs] and record.original[e:] == record.contrast[ce:]
        new_lemma = record.details["new_lemma"]
        synonyms = {name.lower() for synset in wn.synsets(doc[start].lemma_, pos="v") for name in synset.lemma_names()}
        assert new_lemma not in synonyms and new_lemma.split("_")[0] != doc[start].lemma_
        others = {t.lemma_.lower() for t in doc if t.pos_ == "VERB" and t.i != start}
        assert new_lemma.split("_")[0] not in others  # never "running and running"
        assert "_" not in new_lemma or end - start > 1  # a one-word verb gains no particle
        checks = record.filters
        assert list(checks) == ["perplexity", "frequency", "meaning-changed", "has-verb"] and all(c["passed"] for c in checks.values())
        meaning, ppl = checks["meaning-changed"], checks["perplexity"]
        assert meaning["antonym"] or (
            meaning["verb_cosine"] < config.meaning.verb_cosine_max and meaning["sentence_cosine"] < config.meaning.sentence_cosine_max
        )
        assert ppl["score"] == pytest.approx((ppl["ppl_contrast"] - ppl["ppl_original"]) / ppl["ppl_original"], abs=1e-4)
        assert checks["frequency"]["score"] >= config.frequency.min_unigram_log10


def test_no_substitute_brings_in_a_profane_word_the_captions_do_not_use():
    from tvrbench.generators.base import Request
    from tvrbench.generators.verb import new_lemma, profane_words

    texts = ["a woman is talking about movies", "a man talking about finances", "a man is killing zombies in a game"]
    captions = Captions([f"c{k}" for k in range(3)], texts, [f"v{k}" for k in range(3)])
    generator = VerbContrasts(VERB)
    items, collection = generator.prepare(captions)
    _, candidates = generator.candidates(collection)
    finder = VerbPhrases(generator.nlp)
    requests = [Request(item, target, finder.find(item), None) for item in items for target in finder.find(item)]
    offered = {new_lemma(c) for found in candidates.generator.generate(requests) for c in found}
    kept = {new_lemma(c) for found in candidates.generate(requests) for c in found}
    assert offered & profane_words() - {"kill"}  # the Web's bigrams offer one ("bitching about")
    assert not kept & profane_words() - {"kill"} and {"kill"} <= profane_words()  # "killing" is the captions' own word


def test_candidate_blocks_do_not_change_the_result(offline_run, nlp):
    captions, _, _ = offline_run
    generator = VerbContrasts(VERB)
    items, collection = generator.prepare(captions)
    search = generator.search(collection)
    one_at_a_time = ContrastSearch("verb", search.finder, search.generator, search.constraints, search.seed, search.target_order,
                                   search.candidate_order, block=1, max_block=1)  # fmt: skip
    records = [o.record.to_json() if o.record else None for o in one_at_a_time.run(items[:12])]
    assert records == [o.record.to_json() if o.record else None for o in search.run(items[:12])] and any(records)


def test_verb_in_memory_equals_the_file(tmp_path):
    """Chunk by chunk as the file is written, with training captions (their verbs join the pool, and
    the frequency filter counts in them)."""
    if not MSRVTT.is_file():
        pytest.skip(f"MSR-VTT sample not present: {MSRVTT}")
    table = read_captions(MSRVTT)
    captions, train, config = table.subset(range(32)), table.subset(range(100, 700)), VerbConfig(chunk_size=12, lm="ngram")
    _, run = verb_contrasts(captions, tmp_path / "verb.jsonl", config, train)
    sidecar = run.to_json()
    in_memory = VerbContrasts(config, train).contrasts(captions)
    assert in_memory and sidecar["counts"]["records"] == len(in_memory) and "frequency:train-captions" in sidecar["signature"]
    assert [r.to_json() for r in in_memory] == [json.loads(line) for line in (tmp_path / "verb.jsonl").read_text().splitlines()]


def test_killed_run_resumes_byte_identical(tmp_path):
    """A real run killed by its pid after its first chunks, then resumed, ends byte-identical to an
    uninterrupted one. The last chunk repeats captions of the first: their sentence embeddings must
    not come from the first chunk's batches in one run and from their own in the other."""
    if not MSRVTT.is_file():
        pytest.skip(f"MSR-VTT sample not present: {MSRVTT}")
    first = read_captions(MSRVTT).subset(range(24))
    rows = [*zip(first.caption_ids, first.texts, first.video_ids), *((f"again{k}", first.texts[k], first.video_ids[k]) for k in range(8))]
    path = tmp_path / "captions.tsv"
    path.write_text("caption_id\ttext\tvideo_id\n" + "".join(f"{c}\t{t}\t{v}\n" for c, t, v in rows), encoding="utf-8")
    (tmp_path / "verb.yaml").write_text("chunk_size: 8\nlm: ngram\n", encoding="utf-8")
    config = VerbConfig(chunk_size=8, lm="ngram")
    reference = tmp_path / "reference.jsonl"
    verb_contrasts(read_captions(path), reference, config)

    out = tmp_path / "killed.jsonl"
    partial = out.with_name(out.name + ".partial")
    command = [
        sys.executable,
        "-m",
        "tvrbench.cli",
        "contrast",
        "verb",
        "--captions",
        str(path),
        "--out",
        str(out),
        "--config",
        str(tmp_path / "verb.yaml"),
    ]
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while child.poll() is None and time.monotonic() < deadline:
        if partial.exists() and len(partial.read_text(encoding="utf-8").splitlines()) > 2 * 8:  # a header and two chunks
            break
        time.sleep(0.05)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert not out.exists(), "the run ended before it was killed: nothing was resumed"
    done = len(partial.read_text(encoding="utf-8").splitlines()) - 1
    assert 0 < done < len(rows)
    verb_contrasts(read_captions(path), out, config)
    assert out.read_bytes() == reference.read_bytes()


def test_a_chunk_does_not_depend_on_the_chunks_before_it(offline_run, nlp):
    """The sentence embeddings a chunk uses are the same, to the bit, whether an earlier chunk held the
    same captions or not (without clearing, a repeated caption's vector comes from the earlier batch)."""
    from tvrbench.generators.filters import Embeddings, MeaningChanged
    from tvrbench.generators.frames import wordnet_usage
    from tvrbench.generators.verb import CaptionVerbs

    class Recorded(Embeddings):
        def __init__(self, model):
            super().__init__(model)
            self.calls = []

        def __call__(self, texts):
            self.calls.append(super().__call__(texts))
            return self.calls[-1]

    captions, _, _ = offline_run
    docs = list(nlp.pipe(captions.texts[:24]))
    ids = [*captions.caption_ids[:24], *(f"again{k}" for k in range(12))]
    videos = [*captions.video_ids[:24], *captions.video_ids[:12]]
    docs += docs[:12]
    items = [CaptionItem(k, ids[k], videos[k], doc.text, doc) for k, doc in enumerate(docs)]

    def embeddings_of_last_chunk(chunks):
        search = VerbContrasts(VERB).search(CaptionVerbs(docs, wordnet_usage()[0]))
        (meaning,) = [c for c in search.constraints if isinstance(c, MeaningChanged)]
        meaning.embed = Recorded(meaning.embed.model)
        for chunk in chunks:
            meaning.embed.calls.clear()
            outcomes = search.run([items[i] for i in chunk])
        return meaning.embed.calls, [o.record.to_json() if o.record else None for o in outcomes]

    last = list(range(24, 36))  # the first 12 captions again, under new ids
    after, records_after = embeddings_of_last_chunk([list(range(24)), last])
    alone, records_alone = embeddings_of_last_chunk([last])
    assert records_after == records_alone and len(after) == len(alone) > 0
    assert all(np.array_equal(a, b) for a, b in zip(after, alone))


def test_the_draw_is_seeded_among_fluent_fitting_candidates_then_the_rest_by_the_lm(nlp):
    """Only candidates that fit the original's frame reach the LM; those at most ``max_gap`` nats per
    token less fluent than the original come first, in a draw that the caption's seed alone decides;
    the rest follow, most fluent first. The oracle is the LM run on each filled caption."""
    from tvrbench.generators.base import Request, caption_rng
    from tvrbench.generators.config import ChoiceConfig, WordNetGeneratorConfig
    from tvrbench.generators.frames import ArgumentFit, frame_of, wordnet_usage
    from tvrbench.generators.lexicon import LexiconSettings, verb_lexicon
    from tvrbench.generators.lm import load_language_model, mean_logprobs, total_logprobs
    from tvrbench.generators.verb import CaptionVerbs, Fitting, SpreadChoice, WordNetVerbs

    classes, usage = wordnet_usage()
    collection = CaptionVerbs(nlp.pipe(["a man eats a pot of rice", "a girl wears a jacket", "a boy rides a horse"]), classes)
    lexicon = verb_lexicon(LexiconSettings(5, 100, 1))
    pool = WordNetVerbs(WordNetGeneratorConfig(), lexicon, collection.common(1, 300))
    fit = ArgumentFit(lexicon, usage.merged(collection.usage), classes, 1.5)
    lm, config = load_language_model(), ChoiceConfig()
    doc = nlp("a woman is cooking the soup in the kitchen")
    item = CaptionItem(0, "c0", "v0", doc.text, doc)
    (target,) = VerbPhrases(nlp).find(item)
    frame = frame_of(doc[target.start], target.end, classes)
    assert (frame.subject, frame.object, frame.object_class) == ("noun.person", "soup", "noun.food")

    def order(seed):
        choice = SpreadChoice(Fitting(pool, fit, classes), lm, config)
        return choice.generate([Request(item, target, [target], caption_rng(seed, "c0"))])[0]

    candidates = order(0)
    everything = {c.details["new_lemma"] for c in pool.generate([Request(item, target, [target], None)])[0]}
    kept = {c.details["new_lemma"] for c in candidates}
    assert kept < everything and "eat" in kept and not {"wear", "ride", "walk"} & kept  # soup is eaten, not worn
    assert all(fit.fits(frame, lemma) for lemma in kept)
    scores = total_logprobs(lm, [c.text for c in candidates])
    np.testing.assert_allclose([c.details["lm_logprob"] for c in candidates], scores, atol=1e-6)
    gaps = mean_logprobs(lm, [item.text])[0] - mean_logprobs(lm, [c.text for c in candidates])
    np.testing.assert_allclose([c.details["lm_gap"] for c in candidates], gaps, atol=1e-6)
    fluent = gaps <= config.max_gap
    assert fluent.sum() > 1 and fluent[: fluent.sum()].all()  # the drawn ones first
    rest = scores[fluent.sum() :]
    assert list(rest) == sorted(rest, reverse=True)
    again, other = order(0), order(1)
    assert [c.text for c in again] == [c.text for c in candidates] and [c.text for c in other] != [c.text for c in candidates]


def test_wordnet_candidates_do_not_depend_on_python_hash_order(tmp_path):
    """The verb lexicon is built from NLTK's sets; the candidates must not follow their iteration order."""
    code = ("from tvrbench.generators.lexicon import LexiconSettings, verb_lexicon; "
            "from tvrbench.generators.config import WordNetGeneratorConfig; from tvrbench.generators.verb import WordNetVerbs; "
            "w = WordNetVerbs(WordNetGeneratorConfig(), verb_lexicon(LexiconSettings(5, 100, 1))); "
            "print([w.alternatives(v, v) for v in ('give', 'talk', 'walk', 'play', 'open')])")  # fmt: skip
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed, "TVRBENCH_HOME": str(tmp_path / seed)},
        ).stdout  # fmt: skip
        for seed in ("1", "2")
    }
    assert len(outputs) == 1 and "('close', 'antonym')" in outputs.pop()


def test_parse_fill_reads_the_first_sentinel():
    special = ["<pad>", "</s>", "<unk>"]
    assert parse_fill("<pad> <extra_id_0> running down<extra_id_1> the</s>", special) == "running down"
    assert parse_fill("<pad><extra_id_0> jumps</s><pad>", special) == "jumps"
    assert parse_fill("<pad> plays</s>", special) == "plays"
    assert parse_fill("<pad><extra_id_1> x <extra_id_2></s>", special) == ""


# --------------------------------------------------------------------------- tiny T5 and GPT-2


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory):
    return build_tiny_models(tmp_path_factory.mktemp("tiny"))


def test_causal_lm_in_batches_equals_one_sentence_at_a_time(tiny_models):
    import torch

    from tvrbench.generators.lm import CausalLM, mean_logprobs

    folder, _ = tiny_models
    lm = CausalLM(str(folder / "gpt2"), batch_size=4)
    texts = ["a man is playing a guitar", "two people is cooking", "the boy is holding the door by a car", "a girl"]
    batched = np.exp(-mean_logprobs(lm, texts))
    for text, value in zip(texts, batched):
        ids = lm.tokenizer(lm.tokenizer.bos_token + text, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            loss = lm.model(input_ids=ids, labels=ids).loss  # mean NLL of tokens 2..n given the prefix
        assert value == pytest.approx(float(torch.exp(loss)), rel=1e-4)


def test_t5_and_causal_lm_path_end_to_end(tiny_models, tmp_path, capsys):
    """Fine-tune, contrast with the saved folder; a rerun with other weights (``--model PATH``, the
    park2022 preset) does not resume the first model's partial records."""
    folder, train = tiny_models
    tuned = tmp_path / "t5-tuned"
    masking = tmp_path / "finetune.yaml"  # the masking the candidates are asked for: a tiny model learns it in a few epochs
    masking.write_text("masking: verb-phrases\nepochs: 4\nlearning_rate: 0.01\n")
    quiet = {**os.environ, "TRANSFORMERS_VERBOSITY": "error", "OMP_NUM_THREADS": "1"}  # tiny models: one thread is faster
    done = subprocess.run(
        [sys.executable, "-m", "tvrbench.cli", "contrast", "finetune-t5", "--train-captions", str(train),
         "--model", str(folder / "t5"), "--out", str(tuned), "--device", "cpu", "--seed", "1", "--config", str(masking)],
        capture_output=True, text=True, cwd=ROOT, env=quiet,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    summary = json.loads((tuned / "tvrbench_finetune.json").read_text())
    assert summary["masking"] == "verb-phrases" and len(summary["held_out_loss"]) == 4 and summary["settings"]["seed"] == 1

    captions = Captions([f"c{i}" for i in range(6)], synthetic_captions()[::25], [f"v{i}" for i in range(6)])
    config = VerbConfig(
        generator="t5",
        t5=T5GeneratorConfig(model=str(tuned), num_beams=8, num_candidates=8),
        lm=str(folder / "gpt2"),
        perplexity=PerplexityConfig(ppl_diff_max=10.0),
        frequency=FrequencyConfig(min_train_count=2),
        chunk_size=3,
        device="cpu",
    )
    from tvrbench.generators.t5 import T5Verbs, masked_input
    from tvrbench.resources import spacy_pipeline

    generator = T5Verbs(config.t5)
    doc = spacy_pipeline("en_core_web_sm")(captions.texts[0])
    (beams,) = generator.beams([masked_input(doc, 2, 4)])
    assert 0 < len(beams) <= 8  # the beams that ended at <extra_id_1> or EOS, parsed

    out = tmp_path / "verb.jsonl"
    records, run = verb_contrasts(captions, out, config, read_captions(train))
    sidecar = run.to_json()
    signature = sidecar["signature"]
    assert f"generator:t5={tuned}:" in signature and f"lm:causal={folder / 'gpt2'}:" in signature and "frequency:train-captions" in signature
    rejected = sidecar["candidates_rejected"]
    assert records or rejected, "candidates were generated and judged"
    for record in records:
        assert list(record.filters) == ["perplexity", "frequency", "meaning-changed", "has-verb"]
        assert all(check["passed"] for check in record.filters.values())
        ppl = record.filters["perplexity"]
        assert ppl["score"] == pytest.approx((ppl["ppl_contrast"] - ppl["ppl_original"]) / ppl["ppl_original"], abs=1e-4)
        assert record.filters["frequency"]["score"] > 2
        assert 0 <= record.details["t5_rank"] < 8
    lines = out.read_text().splitlines()
    assert len(lines) == len(records)
    assert np.isfinite([r.filters["perplexity"]["ppl_contrast"] for r in records]).all()
    assert sidecar["plausibility"]["lm"].startswith(f"causal={folder / 'gpt2'}:") and sidecar["plausibility"]["pairs"] == len(records)

    # an interrupted run of the tuned model, rerun with the untuned one: its record is not resumed
    planted = {"caption_id": "c0", "record": None, "reason": "planted"}
    (tmp_path / "verb.jsonl.partial").write_text(json.dumps({"signature": signature}) + "\n" + json.dumps(planted) + "\n")
    (tmp_path / "c.csv").write_text(
        "caption_id,text,video_id\n" + "".join(f"{c},{t},{v}\n" for c, t, v in zip(captions.caption_ids, captions.texts, captions.video_ids))
    )
    settings = tmp_path / "loose.yaml"
    settings.write_text("perplexity: {ppl_diff_max: 10.0}\nfrequency: {min_train_count: 2}\nt5: {num_beams: 8, num_candidates: 8}\nchunk_size: 3\n")
    from tvrbench.cli import run

    code = run(["contrast", "verb", "--captions", str(tmp_path / "c.csv"), "--out", str(out), "--model", str(folder / "t5"),
                "--lm", str(folder / "gpt2"), "--train-captions", str(train), "--preset", "park2022", "--config", str(settings),
                "--device", "cpu"])  # fmt: skip
    stderr = capsys.readouterr().err
    assert code == 0, stderr
    assert [line for line in stderr.splitlines() if line.startswith("not resuming")] == [
        f"not resuming {out}.partial: its records were made with another settings, generator, preset; starting over"
    ]
    rerun = json.loads(Path(f"{out}.json").read_text())
    assert "preset:park2022" in rerun["signature"] and f"generator:t5={folder / 't5'}:" in rerun["signature"]
    assert "planted" not in json.dumps(rerun["counts"])


def test_verb_lexicon_equals_wordnet_and_is_cached_on_disk(tmp_path, monkeypatch):
    """The lexicon answers as NLTK's WordNet does; a second process reads the file; a corrupt one is rebuilt."""
    from tvrbench.generators.lexicon import LexiconSettings, verb_lexicon
    from tvrbench.resources import wordnet

    monkeypatch.setenv("TVRBENCH_HOME", str(tmp_path))
    settings = LexiconSettings(senses=2, domain_verbs=20, min_semcor_count=1)
    verb_lexicon.cache_clear()
    lexicon = verb_lexicon(settings)
    wn = wordnet()
    for verb in ("cook", "give", "walk", "pick_up"):
        assert lexicon.synonyms(verb) == {n.lower() for s in wn.synsets(verb, pos="v") for n in s.lemma_names()}
        senses = wn.synsets(verb, pos="v")[:2]
        sisters = {
            lemma.name().lower()
            for s in senses
            for h in s.hypernyms()
            for x in h.hyponyms()
            if x not in senses
            for lemma in x.lemmas()
            if lemma.count() >= 1
        }
        assert set(lexicon.sisters(verb)) == sisters
        assert len(lexicon.domain_verbs(verb)) <= 20 * len({s.lexname() for s in senses})
        assert lexicon.files(verb, 2) == {s.lexname() for s in senses}  # "cook": creation only, not creation and change
    assert lexicon.antonyms("give") == {"take"} and "close" in lexicon.antonyms("open")
    (path,) = (tmp_path / "verb-lexicon").glob("*.json")
    written = path.stat().st_mtime_ns
    verb_lexicon.cache_clear()
    assert verb_lexicon(settings).data == lexicon.data and path.stat().st_mtime_ns == written
    path.write_text('{"synonyms": ', encoding="utf-8")
    verb_lexicon.cache_clear()
    assert verb_lexicon(settings).data == lexicon.data and path.stat().st_mtime_ns != written
    verb_lexicon.cache_clear()
