"""Verb contrasts: the offline WordNet generator on real captions (its records and checks, the set's cap,
the argument fit's two kinds of evidence, chunk independence, the language model's judgement against
a plain loop), and the T5 + causal-LM path end to end with tiny models built here from a config and a
tokenizer trained on the test captions."""

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
from tvrbench.generators.base import Candidate, CaptionItem, ContrastSearch, Request, caption_rng, replace_tokens
from tvrbench.generators.config import ChoiceConfig, FrequencyConfig, PerplexityConfig, T5GeneratorConfig, VerbConfig
from tvrbench.generators.records import Replacement
from tvrbench.generators.verb import VerbContrasts
from tvrbench.generators.verb.phrases import VerbPhrases
from tvrbench.generators.verb.t5 import parse_fill
from tvrbench.io.captions import Captions, read_captions
from tvrbench.lm.primer import Primers
from tvrbench.numerics import NATS

ROOT = Path(__file__).resolve().parents[2]
MSRVTT = Path("/work/shared/data/msrvtt/MSRVTT_JSFUSION_test.csv")
VERB = VerbConfig(lm="ngram")  # the trigram judges: these tests are about the generator, not the LM (test_offline_lms.py is)
# What a record's ``filters`` holds, in order: the constraints every candidate went through, then the filters
# (a caption searched again under the set's cap has the cap's check first).
CONSTRAINTS = ["argument-fit", "profanity", "frequency", "form-frequency", "verb-changed"]
FILTERS = ["reads-as-real", "meaning-changed", "perplexity", "has-verb"]
CAPPED = "over the set's cap"


def checks_in_order(record) -> bool:
    names = list(record.filters)
    return names in (CONSTRAINTS + FILTERS, [CAPPED, *CONSTRAINTS, *FILTERS])


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
    """Most captions with a verb get a contrast; the signature names the LM and the recipe's parts, and
    the set's cap holds on the records written."""
    captions, records, sidecar = offline_run
    with_verb = [c for c, doc in zip(captions.caption_ids, nlp.pipe(captions.texts)) if any(t.pos_ == "VERB" for t in doc)]
    assert {r.caption_id for r in records} <= set(with_verb)
    assert len(records) >= 0.5 * len(with_verb)  # 52 % of the first 200 with a verb, with the n-gram judging the first 16 of the draw
    signature = sidecar["signature"]
    assert "lm:cmu-en-us-3gram(pocketsphinx-" in signature and "skipped" not in signature
    assert f"|constraints:{','.join(CONSTRAINTS)}|ranker:draw|filters:{','.join(FILTERS)}|set:cap(0.02)|" in signature
    assert "frequency:unigram>=-6" in signature and "|settings:default|" in signature  # lm=ngram is the signature's own field
    plausibility = sidecar["plausibility"]
    assert plausibility["pairs"] == len(records) and 0 <= plausibility["prefers_original"] <= 1
    substitutes = Counter(r.details["new_lemma"].split("_")[0] for r in records)
    assert max(substitutes.values()) <= max(1, int(VerbConfig().choice.max_share * len(records)))  # the set's cap
    assert sidecar["counts"]["records"] == len(records) and all(checks_in_order(r) for r in records)


def test_offline_verbs_change_only_the_verb_phrase_and_never_to_a_synonym(offline_run, nlp):
    """One edit, of the verb phrase, to no synonym and no other verb of the caption; every check the record
    keeps passed, and each says what its rule says (meaning, perplexity, frequency, the LM's judgement)."""
    from tvrbench.resources import wordnet

    wn = wordnet()
    config = VerbConfig()
    captions, records, _ = offline_run
    caption_words = {word.lower() for text in captions.texts for word in text.split()}
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
        assert checks_in_order(record) and all(c["passed"] for c in checks.values())
        meaning, ppl, changed = checks["meaning-changed"], checks["perplexity"], checks["verb-changed"]
        assert meaning["antonym"] or (
            meaning["verb_cosine"] < config.meaning.verb_cosine_max and meaning["sentence_cosine"] < config.meaning.sentence_cosine_max
        )
        assert (meaning["antonym"], meaning["verb_cosine"]) == (changed["antonym"], changed["score"])
        assert ppl["score"] == round((ppl["ppl_contrast"] - ppl["ppl_original"]) / ppl["ppl_original"], 3)  # from the record's own figures
        assert checks["frequency"]["score"] >= config.frequency.min_unigram_log10
        form = checks["form-frequency"]
        assert record.contrast[edit["contrast_chars"][0] :].lower().startswith(form["form"])  # the form the contrast shows
        assert (form["score"] or -99) >= config.frequency.min_form_log10 or form["form"] in caption_words
        judged, choice = checks["reads-as-real"], config.choice
        assert judged["compared"] in ("continuation", "verb") and judged["score"] >= max(judged["best"] - choice.max_behind_best, -choice.max_loss)
        assert checks["argument-fit"]["score"] is not None and checks["profanity"]["passed"]


def test_no_substitute_brings_in_a_profane_word_the_captions_do_not_use():
    """The pool offers profane verbs (the Web's bigrams); the constraints keep none the captions do not use."""
    from tvrbench.generators.verb.pool import new_lemma, profane_words

    texts = ["a woman is talking about movies", "a man talking about finances", "a man is killing zombies in a game"]
    captions = Captions([f"c{k}" for k in range(3)], texts, [f"v{k}" for k in range(3)])
    generator = VerbContrasts(VERB)
    items, collection = generator.prepare(captions)
    search = generator.search(collection)
    finder = VerbPhrases(generator.nlp)
    requests = [Request(item, target, finder.find(item), None) for item in items for target in finder.find(item)]
    offered = {new_lemma(c) for found in search.source.generate(requests) for c in found}
    kept = {new_lemma(c) for found, _ in search.eligible(requests) for c in found}
    assert offered & profane_words() - {"kill"}  # the Web's bigrams offer one ("bitching about")
    assert not kept & profane_words() - {"kill"} and {"kill"} <= profane_words()  # "killing" is the captions' own word


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
    uninterrupted one. The last chunk repeats captions of the first: their span scores and sentence
    embeddings must not come from the first chunk's in one run and from their own in the other."""
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


@pytest.fixture(scope="module")
def chunk_lm() -> str:
    """The language model of the chunk test: Gemma where installed, else the n-gram."""
    from tvrbench.lm.offline import OFFLINE_LMS

    return "gemma3-270m" if OFFLINE_LMS["gemma3-270m"].installed() else "ngram"


def test_a_chunk_does_not_depend_on_the_chunks_before_it(offline_run, nlp, chunk_lm):
    """A chunk's records, and the span scores and sentence embeddings they were chosen by, are the same to
    the bit whether an earlier chunk of the same search held the same captions or not (without clearing,
    a repeated caption's scores would come from the earlier chunk)."""
    from tvrbench.generators.verb.evidence import wordnet_usage
    from tvrbench.generators.verb.filters import MeaningChanged, ReadsAsReal
    from tvrbench.generators.verb.measures import Embeddings
    from tvrbench.generators.verb.pool import CaptionVerbs

    class Recorded(Embeddings):
        def __init__(self, model):
            super().__init__(model)
            self.calls = []

        def __call__(self, texts):
            self.calls.append(super().__call__(texts))
            return self.calls[-1]

    captions, _, _ = offline_run
    docs = list(nlp.pipe(captions.texts[:16]))
    ids = [*captions.caption_ids[:16], *(f"again{k}" for k in range(8))]
    videos = [*captions.video_ids[:16], *captions.video_ids[:8]]
    docs += docs[:8]
    items = [CaptionItem(k, ids[k], videos[k], doc.text, doc) for k, doc in enumerate(docs)]

    def last_chunk(chunks):
        search = VerbContrasts(VerbConfig(lm=chunk_lm, device="cpu")).search(CaptionVerbs(docs, wordnet_usage()[0]))
        (meaning,) = [f for f in search.filters if isinstance(f, MeaningChanged)]
        (judge,) = [f for f in search.filters if isinstance(f, ReadsAsReal)]
        meaning.embed = Recorded(meaning.embed.model)
        for chunk in chunks:
            meaning.embed.calls.clear()
            outcomes = search.run([items[i] for i in chunk])
        return meaning.embed.calls, dict(judge.spans.scores), [o.record.to_json() if o.record else None for o in outcomes]

    last = list(range(16, 24))  # the first 8 captions again, under new ids
    embedded_after, spans_after, records_after = last_chunk([list(range(16)), last])
    embedded_alone, spans_alone, records_alone = last_chunk([last])
    assert records_after == records_alone and any(records_alone)
    assert len(embedded_after) == len(embedded_alone) > 0 and all(np.array_equal(a, b) for a, b in zip(embedded_after, embedded_alone))
    assert spans_after.keys() == spans_alone.keys() and {index for index, _, _ in spans_after} <= set(last)
    for key, scores in spans_after.items():
        assert all(np.array_equal(getattr(scores, part), getattr(spans_alone[key], part)) for part in ("left", "fill", "right")), key


def test_only_fitting_candidates_are_drawn_in_a_seeded_order(nlp):
    """Only candidates whose verb fits the original's frame pass the argument-fit constraint (soup is eaten,
    not worn), each scored with the fit's strength, which weighs the draw; the draw among them is
    decided by the caption's seed alone."""
    from tvrbench.generators.config import ArgumentFitConfig
    from tvrbench.generators.ranker import SeededDraw
    from tvrbench.generators.verb.constraints import FitsFrame
    from tvrbench.generators.verb.evidence import wordnet_usage
    from tvrbench.generators.verb.fit import ArgumentFit, FrameFits
    from tvrbench.generators.verb.frames import frame_of
    from tvrbench.generators.verb.lexicon import LexiconSettings, verb_lexicon
    from tvrbench.generators.verb.pool import CaptionVerbs, VerbPool, new_lemma
    from tvrbench.generators.verb.sources import ListedVerbs, WordNetRelation

    classes, usage = wordnet_usage()
    captions = ["a man eats a pot of rice", "a chef serves the soup", "a girl tastes the sauce", "a girl wears a jacket", "a boy rides a horse"]
    collection = CaptionVerbs(nlp.pipe(captions), classes)
    lexicon = verb_lexicon(LexiconSettings(5, 100, 1))
    pool = VerbPool([WordNetRelation("antonym", lexicon.antonyms), ListedVerbs("captions", collection.common(1, 300))], lexicon)
    fit = ArgumentFit(lexicon, usage.merged(collection.usage), classes, ArgumentFitConfig(evidence="seen"))
    frame_fits = FrameFits(fit, classes, new_lemma)
    search = ContrastSearch("verb", VerbPhrases(nlp), pool, [FitsFrame(frame_fits)], SeededDraw({}, new_lemma, ChoiceConfig(), frame_fits.strengths))
    doc = nlp("a woman is cooking the soup in the kitchen")
    item = CaptionItem(0, "c0", "v0", doc.text, doc)
    (target,) = VerbPhrases(nlp).find(item)
    frame = frame_of(doc[target.start], target.end, classes)
    assert (frame.subject, frame.object, frame.object_class) == ("noun.person", "soup", "noun.food")
    offered = [c.details["new_lemma"] for c in pool.generate([Request(item, target, [target], None)])[0]]
    ((candidates, turned_down),) = search.eligible([Request(item, target, [target], None)])
    kept = {c.details["new_lemma"] for c in candidates}
    assert kept < set(offered) and "eat" in kept and not {"wear", "ride", "walk"} & kept  # soup is eaten, not worn
    assert kept == {lemma for lemma in offered if fit.fits(frame, lemma)} and turned_down == {"argument-fit": len(offered) - len(kept)}
    assert all(c.checks["argument-fit"] == {"passed": True, "score": round(fit.strength(frame, c.details["new_lemma"]), 6)} for c in candidates)

    def order(seed):
        return [c.text for c in search.ranker.order(Request(item, target, [target], caption_rng(seed, "c0")), candidates)]

    assert order(0) == order(0) and order(0) != order(1) and sorted(order(0)) == sorted(c.text for c in candidates)


# Captions and verbs put in their place, for the language model's judgement: one caption ends with its verb.
JUDGED = [
    ("a man is playing a guitar on the stage", ["strumming", "tuning", "eating", "wearing", "driving", "holding"]),
    ("a woman is cooking food in the kitchen", ["eating", "preparing", "throwing", "wearing", "serving"]),
    ("a little girl is dancing", ["singing", "sleeping", "cooking", "running", "crying", "parking"]),
    ("a man is riding a horse", ["cooking", "wearing", "reading", "typing"]),
]


@pytest.mark.parametrize("score", ["verb+after", "after"])
def test_the_language_model_judges_candidates_as_a_plain_loop_does(nlp, score):
    """Of a target's judged candidates, those whose caption's verb and words after it (``score="after"``:
    the words after it alone) are at most ``max_behind_best`` nats less likely than the best judged
    verb's, and at most ``max_loss`` less than the original's, pass; a caption that ends with its verb
    compares the verbs' PMI with the words before them. Oracle: the n-gram's whole-sentence token
    scores, summed by hand."""
    from tvrbench.generators.verb.filters import ReadsAsReal
    from tvrbench.generators.verb.measures import SpanScores
    from tvrbench.lm.models import load_language_model, words

    lm, choice = load_language_model("ngram"), ChoiceConfig(score=score, max_loss=1.5)
    candidates = []
    for index, (text, fills) in enumerate(JUDGED):
        doc = nlp(text)
        item = CaptionItem(index, f"c{index}", "v", text, doc)
        target = VerbPhrases(nlp).find(item)[0]
        span = replace_tokens(doc, target.start, target.start + 1, "")
        request = Request(item, target, [target], None)
        candidates += [Candidate(request, (Replacement(span.token_start, span.token_end, span.char_start, span.char_end, span.original, fill),))
                       for fill in fills]  # fmt: skip
    checks = ReadsAsReal(SpanScores(lm), choice).check(candidates)

    def logprob(sentence: str, start: int, end: int | None = None) -> float:
        return float(lm.token_logprobs([sentence])[0][start:end].sum())

    rules = set()
    for index, (text, fills) in enumerate(JUDGED):
        mine = [check for candidate, check in zip(candidates, checks) if candidate.request.item.index == index]
        replacement = next(c for c in candidates if c.request.item.index == index).replacements[0]
        before, verb, after = text[: replacement.char_start], replacement.original, text[replacement.char_end :]
        if after.strip():  # the words after the verb (and </s>) given the caption up to and including it
            scored_from = {fill: len(words(before + ("" if score == "verb+after" else fill))) for fill in [verb, *fills]}
            gaps = [logprob(before + fill + after, scored_from[fill]) - logprob(text, scored_from[verb]) for fill in fills]
        else:  # log P(verb | the words before) - log P(verb | nothing)
            pmi = {
                word: logprob(before + word, len(words(before)), len(words(before + word))) - logprob(word, 0, len(words(word)))
                for word in [verb, *fills]
            }
            gaps = [pmi[fill] - pmi[verb] for fill in fills]
        gaps = [round(gap, NATS) for gap in gaps]  # decided on at the precision the record shows (tvrbench.numerics)
        best = max(gaps)
        for check, gap in zip(mine, gaps):
            assert check.score == gap and check.extra["best"] == best
            assert check.extra["compared"] == (("verb+continuation" if score == "verb+after" else "continuation") if after.strip() else "verb")
            near, no_loss = gap >= round(best - choice.max_behind_best, NATS), gap >= -choice.max_loss
            assert check.passed == (near and no_loss), (text, gap, best)
            rules.add((near, no_loss))
    assert rules == {(True, True), (True, False), (False, True), (False, False)}  # each rule passes and fails some


def test_each_record_s_verb_fits_by_the_evidence_it_was_chosen_by(offline_run, nlp):
    """``argument_fit.evidence``: every record of the default ``frames`` run has a new verb that
    ``ArgumentFit(evidence="frames")`` lets fill the original's frame, every record of a ``seen`` run
    one that ``evidence="seen"`` does; and the frames run lets in verbs the seen evidence would not
    (the setting reached the fit)."""
    from tvrbench.generators.verb.evidence import wordnet_usage
    from tvrbench.generators.verb.fit import ArgumentFit
    from tvrbench.generators.verb.frames import frame_of
    from tvrbench.generators.verb.lexicon import LexiconSettings, verb_lexicon
    from tvrbench.generators.verb.pool import CaptionVerbs, new_lemma

    captions, frames_records, _ = offline_run
    config = VerbConfig(lm="ngram", argument_fit={"evidence": "seen"})
    seen_records = VerbContrasts(config).contrasts(captions)
    classes, usage = wordnet_usage()
    usage = usage.merged(CaptionVerbs(nlp.pipe(captions.texts), classes).usage)  # what the generator reads of these captions
    lexicon = verb_lexicon(LexiconSettings.of(config.wordnet))
    fit = config.argument_fit
    fits = {evidence: ArgumentFit(lexicon, usage, classes, fit.model_copy(update={"evidence": evidence})) for evidence in ("seen", "frames")}

    def fitting(records, evidence: str) -> list[bool]:
        verdicts = []
        for record in records:
            doc = nlp(record.original)
            start, end = record.edit[0]["tokens"]
            verdicts.append(fits[evidence].fits(frame_of(doc[start], end, classes), new_lemma(record)))
        return verdicts

    assert len(frames_records) >= 0.5 * len(captions) and all(fitting(frames_records, "frames"))
    assert seen_records and all(fitting(seen_records, "seen"))
    assert not all(fitting(frames_records, "seen"))


def test_wordnet_candidates_do_not_depend_on_python_hash_order(tmp_path):
    """The verb lexicon is built from NLTK's sets; the candidates must not follow their iteration order."""
    code = ("from tvrbench.generators.verb.lexicon import LexiconSettings, verb_lexicon; "
            "from tvrbench.generators.verb.pool import VerbPool; from tvrbench.generators.verb.sources import WordNetRelation as R; "
            "lexicon = verb_lexicon(LexiconSettings(5, 100, 1)); "
            "w = VerbPool([R('antonym', lexicon.antonyms), R('sister', lexicon.sisters)], lexicon); "
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
    """A T5 beam's fill is the text after ``<extra_id_0>`` up to the next sentinel, special tokens dropped."""
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
    """A causal LM's per-token scores in batches equal the model's own loss on each sentence alone."""
    import torch

    from tvrbench.lm.models import CausalLM, mean_logprobs

    folder, _ = tiny_models
    lm = CausalLM(str(folder / "gpt2"), batch_size=4)
    texts = ["a man is playing a guitar", "two people is cooking", "the boy is holding the door by a car", "a girl"]
    batched = np.exp(-mean_logprobs(lm, texts))
    for text, value in zip(texts, batched):
        ids = lm.tokenizer(lm.tokenizer.bos_token + text, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            loss = lm.model(input_ids=ids, labels=ids).loss  # mean NLL of tokens 2..n given the prefix
        assert value == pytest.approx(float(torch.exp(loss)), rel=1e-4)


def test_the_lm_relation_proposes_the_verbs_a_language_model_expects_in_the_original_s_form(tiny_models, nlp):
    """``lm``: the pool adds the WordNet verbs among the words the language model expects where the verb
    stands, in the original's form ("playing": the -ing forms; not "man", a verb whose -ing form is
    another word, not "is", not the original's own verb or a synonym); a verb the pool already holds
    keeps its own relation, and without ``lm`` the model proposes nothing."""
    import functools

    from tvrbench.generators.verb.lexicon import LexiconSettings, verb_lexicon
    from tvrbench.generators.verb.pool import VerbPool
    from tvrbench.generators.verb.sources import ExpectedVerbs, WordNetRelation
    from tvrbench.lm.models import CausalLM

    folder, _ = tiny_models
    lm = CausalLM(str(folder / "gpt2"))
    lexicon = verb_lexicon(LexiconSettings(5, 100, 1))
    doc = nlp("a man is playing a guitar")
    item = CaptionItem(0, "c0", "v0", doc.text, doc)
    (target,) = VerbPhrases(nlp).find(item)
    (expected,) = lm.next_words(["a man is "], 20)
    assert {"man", "is", "playing"} & set(expected)  # words the rule must turn down are among those offered

    def proposed(relations):
        sources = {"antonym": WordNetRelation("antonym", lexicon.antonyms), "sister": WordNetRelation("sister", lexicon.sisters),
                   "domain": WordNetRelation("domain", lexicon.domain_verbs),
                   "lm": ExpectedVerbs(functools.partial(lm.next_words, top=20), lexicon)}  # fmt: skip
        pool = VerbPool([sources[relation] for relation in relations], lexicon)
        (found,) = pool.generate([Request(item, target, [target], None)])
        return {c.details["new_lemma"]: (c.details["relation"], c.replacements[0].replacement) for c in found}

    forms = {"cooking": "cook", "holding": "hold", "cleaning": "clean", "throwing": "throw", "pushing": "push"}  # the tiny model's other verbs
    by_lm = proposed(["lm"])
    assert by_lm and by_lm == {lemma: ("lm", word) for word, lemma in forms.items() if word in expected and lemma not in lexicon.synonyms("play")}
    wordnet_only = proposed(["antonym", "sister", "domain"])
    assert "lm" not in {relation for relation, _ in wordnet_only.values()}
    added = {lemma: found for lemma, found in by_lm.items() if lemma not in wordnet_only}
    assert proposed(["antonym", "sister", "domain", "lm"]) == wordnet_only | added and len(added) < len(by_lm)


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
        choice=ChoiceConfig(primer=2, score="verb+after"),
        chunk_size=3,
        device="cpu",
    )
    from tvrbench.generators.verb.t5 import T5Verbs, masked_input
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
    primers = Primers.draw(captions.texts, captions.video_ids, 2, seed=0)  # two captions of other videos before each caption
    assert f"|primer:{primers.name}|" in signature and primers.name.startswith("2+2-captions(seed=0,")
    assert "reads-as-real(score=verb+after,primer=2)" in signature
    rejected = sidecar["candidates_rejected"]
    assert records or rejected, "candidates were generated and judged"
    for record in records:
        assert checks_in_order(record)
        assert all(check["passed"] for check in record.filters.values())
        ppl = record.filters["perplexity"]
        assert ppl["score"] == round((ppl["ppl_contrast"] - ppl["ppl_original"]) / ppl["ppl_original"], 3)  # from the record's own figures
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
        f"not resuming {out}.partial: its records were made with another settings, generator, constraints, filters, primer, preset; starting over"
    ]  # the preset's thresholds are the parts' own settings, named beside each part
    rerun = json.loads(Path(f"{out}.json").read_text())
    assert "preset:park2022" in rerun["signature"] and f"generator:t5={folder / 't5'}:" in rerun["signature"]
    assert "|primer:" not in rerun["signature"]  # read cold, as by default
    assert "verb-changed(verb_cosine_max=0.4)" in rerun["signature"] and "perplexity(ppl_diff_max=10.0)" in rerun["signature"]
    assert "(num_beams=8,num_candidates=8)|lm:" in rerun["signature"]  # T5's own settings, beside its name
    assert "planted" not in json.dumps(rerun["counts"])


def test_a_collection_of_one_caption_is_judged_unprimed_as_its_signature_says(tmp_path):
    """The judge's primer holds captions of other videos only: a collection of one caption has none, is
    read cold and says so; its record is the one a run read cold by default makes."""
    captions = Captions(["c0"], ["a man is cooking some food in the kitchen"], ["v0"])
    config = VERB
    runs = [verb_contrasts(captions, tmp_path / f"{name}.jsonl", settings) for name, settings in
            (("primed", config.model_copy(update={"choice": ChoiceConfig(primer=2)})), ("cold", config))]  # fmt: skip
    (records, run), (cold_records, cold_run) = runs
    assert str(run.signature).endswith("|primer:none") and "|primer:" not in str(cold_run.signature)
    assert [r.to_json() for r in records] == [r.to_json() for r in cold_records]


def test_verb_lexicon_equals_wordnet_and_is_cached_on_disk(tmp_path, monkeypatch):
    """The lexicon answers as NLTK's WordNet does; a second process reads the file; a corrupt one is rebuilt."""
    from tvrbench.generators.verb.lexicon import LexiconSettings, verb_lexicon
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


def test_the_form_a_contrast_shows_must_be_one_people_write(nlp):
    """ "rumoring" fails though "rumor" is common (its other forms are); a form the captions use passes
    whatever the Web says; the score is the form's log10 share of the Web's words, as wordsegment counts."""
    import wordsegment

    from tvrbench.generators.verb.constraints import FormFrequency
    from tvrbench.generators.verb.evidence import WEB_WORDS

    doc = nlp("a man is talking about the game")
    item = CaptionItem(0, "c0", "v0", doc.text, doc)
    (target,) = VerbPhrases(nlp).find(item)
    span = replace_tokens(doc, target.start, target.start + 1, "")
    request = Request(item, target, [target], None)
    fills = ["rumoring", "chatting", "garaging"]
    at = (span.token_start, span.token_end, span.char_start, span.char_end, span.original)
    candidates = [Candidate(request, (Replacement(*at, fill),)) for fill in fills]
    checks = FormFrequency(frozenset({"garaging"}), FrequencyConfig(min_form_log10=-6.5)).check(candidates)
    assert [c.passed for c in checks] == [False, True, True]  # garaging: the captions write it
    assert checks[0].score is None and checks[0].extra == {"form": "rumoring"}  # not among the Web's 333,333 commonest words
    wordsegment.load()
    assert checks[1].score == round(float(np.log10(wordsegment.UNIGRAMS["chatting"] / WEB_WORDS)), 3) >= -6.5
