"""The T5 path on tiny models built here (no weights can be downloaded): the masked input and T5's
span corruption against hand-written strings, K distinct fills, fine-tuning, the device, the
park2022 preset, the filters on a fill without a verb, one-line load errors and pinned weights."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tiny_models import OBJECTS, SUBJECTS, VERBS, build_tiny_models, synthetic_captions

from tvrbench.errors import InputError, MissingResource
from tvrbench.generators.base import Candidate, CaptionItem, Request, Target, replace_tokens
from tvrbench.generators.config import FinetuneConfig, T5GeneratorConfig, VerbConfig
from tvrbench.generators.verb.t5 import SpanCorruption, T5Verbs, corrupt, finetune_t5, masked_input, parse_fill, random_spans_noise_mask
from tvrbench.lm.loading import load_pretrained
from tvrbench.resources import torch_device

ROOT = Path(__file__).resolve().parents[2]
QUIET = {**os.environ, "TRANSFORMERS_VERBOSITY": "error", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}


@contextlib.contextmanager
def one_thread():
    """Tiny models train several times faster on one thread than on two shared ones."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return build_tiny_models(tmp_path_factory.mktemp("tiny"))[0]


@pytest.fixture(scope="module")
def continuing_t5(tiny):
    """A tiny T5 taught, as T5 was pre-trained, to go on after ``<extra_id_1>``: target
    ``<extra_id_0> VERB <extra_id_1> OBJECT`` with a random other object after the fill."""
    import torch

    model, tokenizer = load_pretrained("seq2seq", str(tiny / "t5"))
    rng = np.random.default_rng(0)
    pairs = [(f"{SUBJECTS[0]} is <extra_id_0> {o}", f"<extra_id_0> {v.split()[1]} <extra_id_1> {OBJECTS[rng.integers(5)]}")
             for v in VERBS for o in OBJECTS]  # fmt: skip
    batch = tokenizer([s for s, _ in pairs], text_target=[t for _, t in pairs], return_tensors="pt", padding=True)
    batch["labels"][batch["labels"] == tokenizer.pad_token_id] = -100
    torch.manual_seed(0)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model.train()
    with one_thread():
        for _ in range(60):
            loss = model(**batch).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.save_pretrained(tiny / "continuing")
    tokenizer.save_pretrained(tiny / "continuing")
    return tiny / "continuing"


@pytest.fixture(scope="module")
def nlp():
    from tvrbench.resources import spacy_pipeline

    return spacy_pipeline("en_core_web_sm", disable=("ner",))


# --------------------------------------------------------------------------- strings


def test_masked_input_and_span_corruption_strings_by_hand():
    import spacy

    doc = spacy.blank("en")("A man is playing a guitar.")
    assert masked_input(doc, 2, 4) == "A man <extra_id_0> a guitar."
    assert masked_input(doc, 0, 2) == "<extra_id_0> is playing a guitar."

    sentinels = [f"<extra_id_{i}>" for i in range(3)]
    tokens = "a man is playing a guitar in the park".split()
    inputs, targets = corrupt(tokens, np.array([0, 0, 1, 1, 0, 0, 1, 0, 1], bool), sentinels)
    assert " ".join(inputs) == "a man <extra_id_0> a guitar <extra_id_1> the <extra_id_2>"
    assert " ".join(targets) == "<extra_id_0> is playing <extra_id_1> in <extra_id_2> park"


def test_noise_mask_is_t5s():
    """15 % noise in spans of mean length 3, the first span kept, the last masked (T5's layout)."""
    for seed in range(20):
        mask = random_spans_noise_mask(100, 0.15, 3.0, np.random.default_rng(seed))
        starts = np.flatnonzero(np.diff(mask.astype(int)) == 1)
        assert mask.size == 100 and mask.sum() == 15 and len(starts) == 5 and not mask[0] and mask[-1]
    assert random_spans_noise_mask(7, 0.15, 3.0, np.random.default_rng(0)).tolist() == [0, 0, 0, 0, 0, 0, 1]


def test_span_corruption_pieces_rebuild_the_captions(tiny):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(tiny / "t5")
    texts = synthetic_captions()[:12]
    pairs = SpanCorruption(tokenizer, texts, FinetuneConfig(max_length=24)).pairs(np.random.default_rng(0))
    stream = []
    for inputs, targets in pairs:
        source, target = tokenizer.decode(inputs), tokenizer.decode(targets)
        assert source.endswith("</s>") and target.endswith("</s>") and target.startswith("<extra_id_0>")
        used = [s for s in (f"<extra_id_{i}>" for i in range(8)) if s in source]
        assert used == [f"<extra_id_{i}>" for i in range(len(used))] and target.count("<extra_id_") == len(used)
        spans = dict(zip(used, [part.split() for part in target.removesuffix("</s>").split("<extra_id_")[1:]]))
        rebuilt = []
        for word in source.removesuffix("</s>").split():
            rebuilt += spans[word][1:] if word in spans else [word]
        stream += rebuilt
    assert sorted(" ".join(stream).split()) == sorted(" ".join(texts).split())


# --------------------------------------------------------------------------- generation


def test_k_distinct_fills_stop_at_the_next_sentinel(continuing_t5):
    """K = 8 of 16 beams: 8 distinct fills, T5's rank and score kept; the old settings (8 beams
    returned, 8 new tokens counting both sentinels, no stop) give fewer: beams differ after the fill."""
    import spacy

    doc = spacy.blank("en")("a man is playing a guitar")
    item = CaptionItem(0, "c0", "v0", doc.text, doc)
    request = Request(item, Target(3, 4, "VERB"), [Target(3, 4, "VERB")], np.random.default_rng(0))
    generator = T5Verbs(T5GeneratorConfig(model=str(continuing_t5), num_beams=16, num_candidates=8), device="cpu")
    (candidates,) = generator.generate([request])
    fills = [c.details["fill"] for c in candidates]
    assert len(fills) == 8 and len(set(fills)) == 8 and "playing" not in fills
    assert [c.details["t5_rank"] for c in candidates] == list(range(8))
    scores = [c.details["t5_score"] for c in candidates]
    assert scores == sorted(scores, reverse=True) and all(s < 0 for s in scores)

    old = generator.model.generate(**generator.tokenizer([masked_input(doc, 3, 4)], return_tensors="pt"),
                                   num_beams=16, num_return_sequences=8, max_new_tokens=8, do_sample=False)  # fmt: skip
    old_fills = {parse_fill(text, generator.special) for text in generator.tokenizer.batch_decode(old)} - {"", "playing"}
    assert len(old_fills) < 8


# --------------------------------------------------------------------------- fine-tuning


def test_finetune_loss_falls_is_seeded_and_the_folder_loads(tiny, tmp_path):
    import torch

    config = FinetuneConfig(epochs=3, batch_size=4, learning_rate=1e-2, max_length=16, device="cpu")
    with one_thread():
        summary = finetune_t5(str(tiny / "t5"), synthetic_captions()[:60], tmp_path / "a", config)
        finetune_t5(str(tiny / "t5"), synthetic_captions()[:60], tmp_path / "b", config)
    held_out = summary["held_out_loss"]
    assert summary["masking"] == "span-corruption" and summary["steps"] == 3 * np.ceil(summary["examples"] / 4)
    assert summary["loss_last"] < summary["loss_first"] and held_out[-1] < held_out[0]
    a, _ = load_pretrained("seq2seq", str(tmp_path / "a"))
    b, _ = load_pretrained("seq2seq", str(tmp_path / "b"))
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    assert T5Verbs(T5GeneratorConfig(model=str(tmp_path / "a")), device="cpu").name.startswith(f"t5={tmp_path / 'a'}:")


# --------------------------------------------------------------------------- device


def test_device_cpu_and_auto_without_a_gpu(tiny):
    import torch

    from tvrbench.lm.models import CausalLM
    from tvrbench.resources import sentence_model

    assert torch_device("cpu") == "cpu"
    t5 = T5Verbs(T5GeneratorConfig(model=str(tiny / "t5")), device="cpu")
    assert t5.model.device.type == "cpu" and t5.model.dtype == torch.float32 and "(" not in t5.name
    assert sentence_model(device="cpu").device.type == "cpu"
    if torch.cuda.is_available():
        return  # auto is the GPU here: test_device_cuda
    assert torch_device("auto") == "cpu"
    assert CausalLM(str(tiny / "gpt2"), device="auto").model.device.type == "cpu"
    with pytest.raises(InputError, match="torch sees no GPU"):
        torch_device("cuda")


def test_device_cuda(tiny):
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no GPU: torch.cuda.is_available() is False")
    from tvrbench.lm.models import CausalLM, mean_logprobs

    t5 = T5Verbs(T5GeneratorConfig(model=str(tiny / "t5"), num_beams=4, num_candidates=4), device="cuda")
    assert t5.model.device.type == "cuda" and t5.model.dtype in (torch.bfloat16, torch.float32)
    texts = ["a man is playing a guitar", "two people is cooking"]
    gpu, cpu = CausalLM(str(tiny / "gpt2"), device="cuda"), CausalLM(str(tiny / "gpt2"), device="cpu")
    assert gpu.model.device.type == "cuda"
    assert gpu.name.endswith(f"(cuda,{str(gpu.model.dtype).removeprefix('torch.')})")  # outside the numeric contract: named
    assert cpu.model.dtype == torch.float32 and cpu.name.endswith(")") and "(cpu" not in cpu.name
    np.testing.assert_allclose(mean_logprobs(gpu, texts), mean_logprobs(cpu, texts), atol=0.05)
    fills = ["playing", "cooking the"]
    for fill, spans in zip(fills, gpu.span_logprobs("a man is ", fills, " a guitar")):  # the left context's key-value cache on the GPU
        np.testing.assert_allclose(spans.tokens, gpu.token_logprobs([f"a man is {fill} a guitar"])[0], atol=0.1)


# --------------------------------------------------------------------------- preset and filters


def candidate_of(doc, start: int, end: int, words: str, **details) -> Candidate:
    item = CaptionItem(0, "c0", "v0", doc.text, doc)
    target = Target(start, end, "VERB")
    return Candidate(Request(item, target, [target], np.random.default_rng(0)), (replace_tokens(doc, start, end, words),), details)


def meaning_verdicts(nlp, candidates, config: VerbConfig):
    """Park et al.'s meaning rule as the verb search applies it: the verbs' cosine (a constraint, on every
    candidate), then the rule whole (a filter); each alone gives its own half of the verdict."""
    from tvrbench.generators.verb.constraints import VerbChanged
    from tvrbench.generators.verb.counterfit import verb_vectors
    from tvrbench.generators.verb.filters import MeaningChanged
    from tvrbench.generators.verb.lexicon import LexiconSettings, verb_lexicon
    from tvrbench.generators.verb.measures import CandidateParses, Embeddings, VerbChanges
    from tvrbench.resources import sentence_model

    changes = VerbChanges(CandidateParses(nlp), verb_vectors(), verb_lexicon(LexiconSettings.of(VerbConfig().wordnet)))
    changed = VerbChanged(changes, config.meaning).check(candidates)
    meaning = MeaningChanged(changes, Embeddings(sentence_model()), config.meaning).check(candidates)
    assert all(sentence.passed <= verb.passed for verb, sentence in zip(changed, meaning))  # the rule whole, without the constraint's verdict
    return [(sentence.passed, sentence) for sentence in meaning]


def test_park2022_preset_is_the_papers_and_is_stricter_than_ours(nlp):
    """The preset is Park et al.'s generator, LM and thresholds (values given beside it win); its stricter
    verb cosine turns down a contrast ours keeps."""
    park = VerbConfig(preset="park2022")
    assert (park.generator, park.lm, park.t5.model, park.t5.num_beams, park.t5.num_candidates) == ("t5", "gpt2-xl", "t5-base", 50, 50)
    assert (park.perplexity.ppl_diff_max, park.perplexity.ppl_diff_max_if_fluent, park.perplexity.ppl_fluent_max) == (0.6, 1.4, 750)
    assert park.frequency.min_train_count == 30
    assert (park.meaning.verb_cosine_max, park.meaning.sentence_cosine_max) == (0.4, 0.8)
    assert VerbConfig(preset="park2022", lm="ngram", meaning={"verb_cosine_max": 0.3}).meaning.verb_cosine_max == 0.3

    doc = nlp("a man is playing a guitar")

    def verdicts(config):
        candidates = [candidate_of(doc, 3, 4, "fixing", new_lemma="fix"), candidate_of(doc, 3, 4, "painting", new_lemma="paint")]
        return meaning_verdicts(nlp, candidates, config)

    ours, paper = verdicts(VerbConfig()), verdicts(park)
    assert [passed for passed, _ in ours] == [True, True] and [passed for passed, _ in paper] == [False, True]
    fixing, painting = (check for _, check in ours)
    assert 0.4 <= fixing.extra["verb_cosine"] < 0.5 and fixing.extra["sentence_cosine"] < 0.8  # only the paper's verb cosine fails it
    assert painting.extra["verb_cosine"] < 0.4 and painting.extra["sentence_cosine"] < 0.8


def test_a_fill_without_a_verb_fails_has_verb_and_nothing_else(nlp):
    """A fill with no verb fails has-verb alone: frequency and the meaning rule (both halves) have nothing to judge and pass it."""
    from tvrbench.generators.verb.constraints import VerbFrequency
    from tvrbench.generators.verb.filters import HasVerb
    from tvrbench.generators.verb.measures import CandidateParses, TrainingFrequency

    doc = nlp("a man is smiling while playing a guitar")
    verbless, verb = candidate_of(doc, 5, 6, "on"), candidate_of(doc, 5, 6, "tuning")
    parses = CandidateParses(nlp)
    assert parses.new_verbs([verbless, verb]) == [[], ["tune"]]  # not the caption's "smile"
    has_verb = HasVerb(parses).check([verbless, verb])
    assert [c.passed for c in has_verb] == [False, True]
    from collections import Counter

    frequency = VerbFrequency(parses, TrainingFrequency(Counter({"smile": 100}), 30)).check([verbless, verb])
    assert frequency[0].passed and frequency[0].score is None and not frequency[1].passed  # "tune" is rare here, "smile" not read
    ((passed, meaning),) = meaning_verdicts(nlp, [verbless], VerbConfig())
    assert passed and meaning.extra["verb_cosine"] is None and meaning.extra["sentence_cosine"] is None


# --------------------------------------------------------------------------- loading


def run(code: str, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env={**QUIET, **env}, timeout=300)


def test_hub_names_are_pinned_to_their_commit_and_a_bad_one_offline_is_one_line(tiny, tmp_path):
    """Offline, from a hub cache laid out as huggingface_hub writes it: ``name@commit`` in the
    signature and the weights loaded at that commit; a name not in the cache says it is offline."""
    import shutil

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--tiny-org--t5"
    shutil.copytree(tiny / "t5", repo / "snapshots" / commit)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    code = ("import sys\nfrom tvrbench.cli import run\nfrom tvrbench.generators.config import T5GeneratorConfig\n"
            "from tvrbench.generators.verb.t5 import T5Verbs\nprint(T5Verbs(T5GeneratorConfig(model='tiny-org/t5')).name)\n"
            f"sys.exit(run(['contrast', 'finetune-t5', '--train-captions', {str(tiny / 'train.csv')!r}, '--out', {str(tmp_path / 'o')!r}, "
            "'--model', 'no-such-org/t5-nope']))")  # fmt: skip
    done = run(code, HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(tmp_path / "hub"))
    assert done.stdout.strip() == f"t5=tiny-org/t5@{commit}"
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [
        "tvrbench: error: no-such-org/t5-nope: not in the local cache and the hub cannot be reached (offline); "
        "download it on a machine with network, or pass a folder"
    ]


def test_load_errors_are_one_line_with_the_cause(tiny, tmp_path, monkeypatch):
    # transformers not importable: the pip install that brings it
    with pytest.raises(MissingResource, match=r"pip install 'tvrbench\[t5\]'"):
        monkeypatch.setitem(sys.modules, "transformers", None)
        load_pretrained("seq2seq", str(tiny / "t5"))
    monkeypatch.undo()
    # ~ expanded; a folder of garbage keeps the library's reason on one line
    monkeypatch.setenv("HOME", str(tiny))
    assert load_pretrained("seq2seq", "~/t5")[0].config.d_model == 32
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    with pytest.raises(InputError) as error:
        load_pretrained("seq2seq", str(broken))
    assert str(error.value).startswith(f"{broken}: cannot load it: ") and "\n" not in str(error.value)


def without_read_override() -> None:
    """In a child of root: drop the capabilities that let root read any file (PR_CAPBSET_DROP of
    CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH), so a folder's permissions apply to it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (1, 2):
        if libc.prctl(24, capability, 0, 0, 0) != 0:
            os._exit(77)


def test_an_unreadable_model_folder_is_one_line(tiny, tmp_path):
    import shutil

    shutil.copytree(tiny / "t5", tmp_path / "t5")
    os.chmod(tmp_path / "t5", 0o000)
    try:
        code = f"from tvrbench.lm.loading import load_pretrained\nload_pretrained('seq2seq', {str(tmp_path / 't5')!r})"
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=QUIET, timeout=300,
                              preexec_fn=without_read_override if os.getuid() == 0 else None)  # fmt: skip
    finally:
        os.chmod(tmp_path / "t5", 0o755)
    if done.returncode == 77:
        pytest.skip("running as root without CAP_SETPCAP: root reads any folder")
    assert done.stderr.strip().splitlines()[-1].endswith(f"{tmp_path / 't5'}: model folder is not readable (permission denied)"), done.stderr
