"""Upload a dataset folder to the Hugging Face hub with ``huggingface_hub``.

The token is read from ``HF_TOKEN`` and handed to :class:`huggingface_hub.HfApi` only: tvrbench
never prints it, logs it or writes it anywhere (no ``login()``, so nothing lands in the token
cache). The endpoint is ``endpoint`` if given, else ``HF_ENDPOINT``, else the public hub; tests
point it at a local server.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from tvrbench.errors import InputError
from tvrbench.publish.folder import folder_files

DEFAULT_ENDPOINT = "https://huggingface.co"
IGNORED = [".*", "**/.*"]
LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")  # temporary files of atomic writes, editor and OS droppings


@dataclass
class PushPlan:
    repo_id: str
    endpoint: str
    private: bool
    files: list[tuple[str, int]]

    def describe(self) -> list[str]:
        """What an upload sends, one line per file, for the dry run and the log."""
        total = sum(size for _, size in self.files)
        lines = [
            f"{'private' if self.private else 'public'} dataset repo {self.repo_id} on {self.endpoint}: {len(self.files)} files, {total:,} bytes"
        ]
        lines += [f"  {path} ({size:,} bytes)" for path, size in self.files]
        return lines


def plan_push(folder: str | Path, repo_id: str, private: bool = False, endpoint: str | None = None) -> PushPlan:
    """What :func:`push` would upload; checks the folder is a dataset folder and the repo id is well formed."""
    folder = Path(folder)
    if not (folder / "README.md").is_file():
        raise InputError(folder, "is not a dataset folder (no README.md); write it with tvrbench publish --out first")
    return PushPlan(repo_id, hub_endpoint(repo_id, endpoint), private, folder_files(folder))


def hub_endpoint(repo_id: str, endpoint: str | None = None) -> str:
    """The hub URL to push ``repo_id`` to, both checked (before anything is written or sent).

    The token goes with every request, so the endpoint must be HTTPS, or plain HTTP to this
    machine only (a test server)."""
    owner, slash, name = repo_id.partition("/")
    if slash != "/" or not owner or not name or "/" in name:
        raise InputError(repo_id, "repo id must be OWNER/NAME")
    endpoint = (endpoint or os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
    url = urlsplit(endpoint)
    if not (url.scheme == "https" and url.hostname or url.scheme == "http" and url.hostname in LOCAL_HOSTS):
        raise InputError(
            endpoint, "the hub endpoint must be https:// (plain http:// only to localhost / 127.0.0.1): the token would travel unencrypted"
        )
    return endpoint


def push(folder: str | Path, plan: PushPlan, commit_message: str) -> str:
    """Create the repo if needed and upload the folder in one commit; returns the commit URL."""
    token = os.environ.get("HF_TOKEN")
    if not token:
        raise InputError("HF_TOKEN", "not set: create a write token at https://huggingface.co/settings/tokens and export HF_TOKEN")
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError
    from huggingface_hub.utils import disable_progress_bars

    disable_progress_bars()
    api = HfApi(endpoint=plan.endpoint, token=token)
    try:
        api.create_repo(plan.repo_id, repo_type="dataset", private=plan.private, exist_ok=True)
        commit = api.upload_folder(
            folder_path=str(folder), repo_id=plan.repo_id, repo_type="dataset", commit_message=commit_message, ignore_patterns=IGNORED
        )
    except HfHubHTTPError as error:
        # The server's message names the problem (401, 403, 404, ...); the request headers are not shown.
        raise InputError(f"{plan.endpoint}/datasets/{plan.repo_id}", f"upload failed: {_first_line(error)}") from None
    except ValueError as error:  # the hub rejected the card's metadata
        raise InputError(Path(folder) / "README.md", f"rejected by the hub: {' '.join(str(error).split())}") from None
    except Exception as error:
        if not _is_transport_error(error):
            raise
        raise InputError(plan.endpoint, f"cannot reach the hub: {_first_line(error)}") from None
    return commit.commit_url


def _is_transport_error(error: Exception) -> bool:
    """A connection failure of huggingface_hub's HTTP client (httpx2 in huggingface_hub 2, httpx or requests before)."""
    return isinstance(error, OSError) or type(error).__module__.split(".")[0] in ("httpx2", "httpx", "requests", "urllib3")


def _first_line(error: Exception) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
