"""Loading a pretrained model (T5, or a causal LM) by hub name or local path: through ``transformers``'
Auto classes, never with remote code, on the device ``--device`` names
(:func:`tvrbench.resources.torch_device`), in the dtype of the numeric contract; :func:`pinned` names the
hub commit or the folder's digest for signatures, and :func:`within_reach` says whether a name can be
looked for without waiting on a hub that is not there.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from pathlib import Path
from typing import Literal

from tvrbench.config import Device
from tvrbench.errors import InputError
from tvrbench.resources import torch_device, transformers_library
from tvrbench.signature import file_digest

HUB_TIMEOUT = 1.5  # seconds the hub gets to answer one request before a name it would have to serve is refused


def inference_dtype(place: str, kind: Literal["seq2seq", "causal"]):
    """float32 on the CPU, the numeric contract (:mod:`tvrbench.numerics`). On a GPU, outside it: bf16
    when it has it, else fp16 for a causal LM (its log-softmax is taken in fp32) and fp32 for T5,
    whose activations overflow fp16."""
    import torch

    if place == "cpu":
        return torch.float32
    if torch.cuda.is_bf16_supported():
        return torch.bfloat16
    return torch.float16 if kind == "causal" else torch.float32


def _is_path(name_or_path: str) -> bool:
    return name_or_path.startswith((".", "/", "~")) or name_or_path.count("/") > 1 or Path(name_or_path).expanduser().is_dir()


def _source(name_or_path: str) -> str:
    """What ``from_pretrained`` gets: a folder with ``~`` expanded (refused when missing or unreadable), or a hub name."""
    if not _is_path(name_or_path):
        return name_or_path
    folder = Path(name_or_path).expanduser()
    if not folder.is_dir():
        raise InputError(name_or_path, "no such model folder")
    if not os.access(folder, os.R_OK | os.X_OK) or not all(os.access(f, os.R_OK) for f in folder.iterdir() if f.is_file()):
        raise InputError(name_or_path, "model folder is not readable (permission denied)")
    return str(folder)


def within_reach(name_or_path: str) -> bool:
    """Whether ``from_pretrained`` can look for the model without waiting on a hub that is not there: a
    path (checked when it loads), a hub name whose ``config.json`` is in the Hugging Face cache, or any
    name while the hub answers. Offline, huggingface_hub retries a name it does not have for about 30 s."""
    if _is_path(name_or_path) or importlib.util.find_spec("huggingface_hub") is None:  # no library: loading says which to install
        return True
    from huggingface_hub import try_to_load_from_cache

    try:
        if isinstance(try_to_load_from_cache(name_or_path, "config.json"), str):
            return True
    except ValueError:  # not a repo id the hub could hold (HFValidationError)
        pass
    return hub_reachable()


@functools.cache
def hub_reachable() -> bool:
    """Whether the Hugging Face hub answers one request within :data:`HUB_TIMEOUT`, asked once a process,
    without the library's retries (never in its offline mode, ``HF_HUB_OFFLINE``); through the library's
    own session, so its proxies and client settings apply."""
    from huggingface_hub import constants
    from huggingface_hub.utils import get_session

    if constants.HF_HUB_OFFLINE:
        return False
    try:
        get_session().head(constants.ENDPOINT, timeout=HUB_TIMEOUT)
    except Exception:  # noqa: BLE001 - no answer, whatever the class: requests' before huggingface_hub 1.0, httpx's after
        return False
    return True


def pinned(name_or_path: str) -> tuple[str, str | None]:
    """The model's id for signatures, ``name@commit`` (the hub snapshot) or ``path:digest`` (the
    folder's files), and the revision that loads exactly it (None: a folder); so two runs with
    different weights never share a signature."""
    if _is_path(name_or_path):
        return f"{name_or_path}:{file_digest(_source(name_or_path))}", None
    revision = _revision(name_or_path)
    return f"{name_or_path}@{revision or 'unpinned'}", revision


def _revision(name: str) -> str | None:
    """The commit of the hub snapshot ``config.json`` resolves to (from the cache when offline)."""
    hub = transformers_library().utils.hub
    try:
        path = hub.cached_file(name, "config.json")
    except Exception as error:  # noqa: BLE001 - every cause becomes one line (load_error)
        raise load_error(name, error) from None
    return hub.extract_commit_hash(path, None)


def load_error(name_or_path: str, error: BaseException) -> Exception:
    """One line that keeps why a model did not load: offline, not found, access, memory, or the library's first line."""
    chain = [error]
    while chain[-1].__cause__ or chain[-1].__context__:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)
    kinds = {type(e).__name__ for e in chain}
    text = " ".join(str(e) for e in chain).lower()
    if kinds & {"OutOfMemoryError", "MemoryError"} or "out of memory" in text:
        problem = "out of memory while loading it (try --device cpu, or a smaller model)"
    elif kinds & {"GatedRepoError"} or "gated" in text or "401 client error" in text or "403 client error" in text:
        problem = "access denied: a gated or private model needs a token (HF_TOKEN in the environment) with access to it"
    elif kinds & {"RepositoryNotFoundError", "RevisionNotFoundError"} or "not a valid model identifier" in text:
        problem = "not found on the hub (check the name) and not a local folder"
    elif kinds & {"LocalEntryNotFoundError"} or "couldn't connect" in text or "offline" in text:
        problem = "not in the local cache and the hub cannot be reached (offline); download it on a machine with network, or pass a folder"
    elif kinds & {"PermissionError"}:
        problem = "permission denied reading it"
    else:
        problem = f"cannot load it: {type(error).__name__}: {str(error).strip().splitlines()[0] if str(error).strip() else ''}"
    return InputError(name_or_path, problem)


def load_pretrained(kind: Literal["seq2seq", "causal"], name_or_path: str, device: Device = "cpu", revision: str | None = None):
    """(model in eval mode on ``device``, tokenizer) from a local folder or a hub name; remote code is refused."""
    transformers = transformers_library()
    source = _source(name_or_path)
    place = torch_device(device)
    model_class = transformers.AutoModelForSeq2SeqLM if kind == "seq2seq" else transformers.AutoModelForCausalLM
    transformers.utils.logging.disable_progress_bar()  # a local model loads in seconds; keep stderr for our own lines
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(source, trust_remote_code=False, revision=revision)
        model = model_class.from_pretrained(source, trust_remote_code=False, revision=revision)
        model.to(device=place, dtype=inference_dtype(place, kind))
    except Exception as error:  # noqa: BLE001 - every cause becomes one line
        raise load_error(name_or_path, error) from None
    model.eval()
    return model, tokenizer
