"""The language-model layer: the n-gram backend against trigram sums computed by hand on a tiny ARPA
model written here, the variant scoring against whole sentences, the preference measure, clear
errors for a missing or unreadable model, and a name that is none of them answered at once when the
hub cannot be reached (and asked of the hub as before when it can)."""

from __future__ import annotations

import http.server
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from tvrbench.data import SAMPLE_DIR
from tvrbench.errors import InputError
from tvrbench.lm.loading import hub_reachable
from tvrbench.lm.models import UNKNOWN_LOG10, NGramLM, check_language_model, load_language_model, mean_logprobs, preference, total_logprobs
from tvrbench.lm.offline import REGISTRY
from tvrbench.numerics import NATS_PER_TOKEN

ROOT = Path(__file__).resolve().parents[2]
CAPTIONS = str(SAMPLE_DIR / "captions.csv")

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


@pytest.fixture(scope="module")
def random_mc(tmp_path_factory) -> Path:
    from tvrbench.cli import run

    path = tmp_path_factory.mktemp("mc") / "random.tsv"
    assert run(["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", str(path)]) == 0
    return path


def tvrbench(*args: str, **env: str) -> tuple[subprocess.CompletedProcess, float]:
    """A command line in a fresh process with an empty Hugging Face cache and ``env``, and its wall time."""
    clean = {key: value for key, value in os.environ.items() if key not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_ENDPOINT")}
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "tvrbench", *args], capture_output=True, text=True, cwd=ROOT, env={**clean, **env}, timeout=300)
    return done, time.monotonic() - start


def unknown_line(spec: str, guess: str | None) -> str:
    installed = [model.name for model in REGISTRY if model.installed()] + ["ngram", "auto"]
    return (
        f"tvrbench: error: {spec}: not an installed language model, a file or a folder, and the Hugging Face hub cannot be reached; "
        f"installed: {', '.join(installed)}" + (f" (did you mean {guess}?)" if guess in installed else "")
    )


@pytest.mark.parametrize("spec, guess", [("foo", None), ("gemma-3-270m", "gemma3-270m"), ("smollm", "smollm2")])
def test_an_unknown_lm_is_one_line_at_once_when_the_hub_cannot_be_reached(spec, guess, random_mc, tmp_path):
    """Issue 38: the hub library retried such a name for about 30 s. A closed port as the hub: the
    connection is refused, as offline; the time bound is generous (the issue's target, 2 s, is measured
    on a fresh process in the report, not here on a loaded machine)."""
    score = ["mc", "score", "--mc", str(random_mc), "--scorer", "lm", "--json", str(tmp_path / "out.json"), "--lm", spec]
    done, seconds = tvrbench(*score, HF_ENDPOINT="http://127.0.0.1:9", HF_HUB_CACHE=str(tmp_path / "hub"))
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [unknown_line(spec, guess)]
    assert seconds < 5 and not (tmp_path / "out.json").exists()


def test_a_contrast_run_refuses_an_unknown_lm_before_it_parses_the_captions(tmp_path):
    verb = ["contrast", "verb", "--captions", CAPTIONS, "--out", str(tmp_path / "verb.jsonl"), "--lm", "gemma-3-270m"]
    done, seconds = tvrbench(*verb, HF_HUB_OFFLINE="1", HF_HUB_CACHE=str(tmp_path / "hub"))
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [unknown_line("gemma-3-270m", "gemma3-270m")]
    assert seconds < 5 and not list(tmp_path.glob("verb.jsonl*"))


@pytest.fixture
def offline_hub_cache(tmp_path, monkeypatch):
    """huggingface_hub offline, its cache in ``tmp_path``; the process's answer on the hub forgotten before and after."""
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    hub_reachable.cache_clear()
    yield tmp_path
    hub_reachable.cache_clear()


def test_a_hub_name_in_the_cache_passes_offline(offline_hub_cache):
    """Laid out as huggingface_hub writes it: loading it needs no hub, so it is not refused."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = offline_hub_cache / "models--tiny-org--lm"
    (repo / "snapshots" / commit).mkdir(parents=True)
    (repo / "snapshots" / commit / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    check_language_model("tiny-org/lm")
    for spec in ("tiny-org/other", "not a repo id"):
        with pytest.raises(InputError, match="the Hugging Face hub cannot be reached"):
            check_language_model(spec)
    for spec in ("auto", "ngram", "smollm2", "missing.gguf", "missing.arpa", "./no/such/folder"):
        check_language_model(spec)  # said by the loader, each in its own words


class UnknownRepos(http.server.BaseHTTPRequestHandler):
    """A hub that answers and holds no model: what the real one says of a name it does not have."""

    asked: list[str] = []

    def do_HEAD(self):
        self.asked.append(self.path)
        self.send_response(200 if self.path == "/" else 404)
        if self.path != "/":
            self.send_header("X-Error-Code", "RepoNotFound")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD

    def log_message(self, *args):
        """Quiet."""


def test_with_a_reachable_hub_an_unknown_name_is_asked_of_the_hub_as_before(random_mc, tmp_path):
    hub = http.server.ThreadingHTTPServer(("127.0.0.1", 0), UnknownRepos)
    threading.Thread(target=hub.serve_forever, daemon=True).start()
    try:
        score = ["mc", "score", "--mc", str(random_mc), "--scorer", "lm", "--json", str(tmp_path / "out.json"), "--lm", "foo"]
        done, _ = tvrbench(*score, HF_ENDPOINT=f"http://127.0.0.1:{hub.server_port}", HF_HUB_CACHE=str(tmp_path / "hub"))
    finally:
        hub.shutdown()
    (line,) = done.stderr.strip().splitlines()
    assert done.returncode == 2 and line.startswith("tvrbench: error: foo: ") and "cannot be reached" not in line
    assert "/foo/resolve/main/config.json" in UnknownRepos.asked
