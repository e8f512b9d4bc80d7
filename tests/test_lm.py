"""The language-model layer: the n-gram backend against trigram sums computed by hand on a tiny ARPA
model written here, the variant scoring against whole sentences, the preference measure, and
clear errors for a missing or unreadable model."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tvrbench.errors import InputError
from tvrbench.generators.lm import UNKNOWN_LOG10, NGramLM, load_language_model, mean_logprobs, preference, total_logprobs
from tvrbench.numerics import NATS_PER_TOKEN

ROOT = Path(__file__).resolve().parents[1]

# log10 probabilities and back-off weights, as an ARPA file holds them.
TINY_ARPA = r"""
\data\
ngram 1=6
ngram 2=4
ngram 3=2

\1-grams:
-1.0 </s>
-99 <s> -0.5
-0.7 a -0.3
-1.2 man -0.2
-1.5 runs -0.1
-2.0 dog -0.4

\2-grams:
-0.2 <s> a -0.1
-0.4 a man -0.25
-0.6 man runs
-0.3 runs </s>

\3-grams:
-0.1 <s> a man
-0.05 a man runs

\end\
"""

# By hand: P(w | u v) is the trigram when listed, else bow(u v) + P(w | v), where P(w | v) is the
# bigram when listed, else bow(v) + P(w); a missing back-off weight is 0 (log10 1).
EXPECTED_LOG10 = {
    "a man runs": [-0.2, -0.1, -0.05, -0.3],  # a|<s> (bigram), man|<s> a, runs|a man (trigrams), </s>|runs (bigram)
    "a dog runs": [-0.2, -0.1 + -0.3 + -2.0, -0.4 + -1.5, -0.3],  # dog: bow(<s> a) + bow(a) + P(dog); runs: bow(dog) + P(runs)
    "A Man runs": [-0.2, -0.1, -0.05, -0.3],  # lower-cased
    "a cat runs": [-0.2, UNKNOWN_LOG10, -1.5, -0.3],  # cat is unknown; runs backs off past it to its unigram
}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    path = tmp_path_factory.mktemp("lm") / "tiny.arpa"
    path.write_text(TINY_ARPA.lstrip(), encoding="ascii")
    return NGramLM(path)


@pytest.mark.parametrize("text", list(EXPECTED_LOG10))
def test_ngram_token_logprobs_equal_the_trigram_sums_by_hand(tiny, text):
    (logprobs,) = tiny.token_logprobs([text])
    np.testing.assert_allclose(logprobs, np.array(EXPECTED_LOG10[text]) * math.log(10), atol=1e-3)  # pocketsphinx keeps 1e-4 in its log base


def test_totals_means_and_names(tiny):
    texts = list(EXPECTED_LOG10)
    np.testing.assert_allclose(total_logprobs(tiny, texts), [sum(v) * math.log(10) for v in EXPECTED_LOG10.values()], atol=4e-3)
    np.testing.assert_allclose(mean_logprobs(tiny, texts), [np.mean(v) * math.log(10) for v in EXPECTED_LOG10.values()], atol=1e-3)
    assert tiny.name.startswith("ngram=tiny.arpa:")
    assert tiny.unigram_log10("man") == pytest.approx(-1.2, abs=1e-4) and tiny.unigram_log10("cat") == -np.inf


def test_preference_against_a_plain_loop(tiny):
    originals = ["a man runs", "a man runs", "a dog runs"]
    contrasts = ["a dog runs", "a cat runs", "a man runs"]
    result = preference(tiny, originals, contrasts)
    gaps = [np.mean(tiny.token_logprobs([o])[0]) - np.mean(tiny.token_logprobs([c])[0]) for o, c in zip(originals, contrasts)]
    assert result.pairs == 3 and result.prefers_original == pytest.approx(2 / 3)
    assert result.median_gap == round(float(np.median(gaps)), NATS_PER_TOKEN)  # at the contract's precision (tvrbench.numerics)
    assert "66.7 % of 3 pairs" in str(result) and result.to_json()["lm"] == tiny.name


def test_missing_or_unreadable_model_files_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="no such language model file"):
        load_language_model(str(tmp_path / "nope.arpa"))
    garbage = tmp_path / "garbage.lm.bin"
    garbage.write_bytes(b"\x00garbage" * 100)
    with pytest.raises(InputError, match="not an ARPA or binary n-gram"):
        load_language_model(str(garbage))


def test_cli_names_a_missing_lm_in_one_line(tmp_path):
    captions = tmp_path / "c.csv"
    captions.write_text("caption_id,text,video_id\nc1,a man is cooking,v1\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "tvrbench.cli", "contrast", "verb", "--captions", str(captions), "--out", str(tmp_path / "v.jsonl"),
         "--lm", str(tmp_path / "missing.arpa")],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"tvrbench: error: {tmp_path / 'missing.arpa'}: no such language model file"]
