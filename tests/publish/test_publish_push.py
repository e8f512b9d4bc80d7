"""``tvrbench publish --push`` against a local stand-in for the hub's HTTP API (127.0.0.1).

The server implements what ``HfApi.create_repo`` and ``HfApi.upload_folder`` call: repo creation,
``preupload`` (answering "regular" for every file, so contents travel base64 in the commit, as the
hub does for small files; the xet/LFS path needs the hub's storage service) and the NDJSON
``commit``. It records every request, so the test checks what arrived byte for byte and where the
token appeared. The real ``huggingface_hub`` client runs unchanged, in a subprocess, with debug logs.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from tvrbench.data import sample_path
from tvrbench.errors import InputError
from tvrbench.publish.push import hub_endpoint, plan_push

TVRBENCH = [sys.executable, "-m", "tvrbench"]


class FakeHub(BaseHTTPRequestHandler):
    requests: list[dict]  # set per server

    def log_message(self, *args) -> None:  # keep the test output clean
        pass

    def _reply(self, status: int, payload: dict) -> None:
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.requests.append({"method": "POST", "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
        endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        if self.path == "/api/repos/create":
            request = json.loads(body)
            self._reply(200, {"url": f"{endpoint}/datasets/{request['organization']}/{request['name']}", "name": request["name"]})
        elif self.path == "/api/validate-yaml":
            # The hub checks the card's metadata; here: the YAML header parses and has a configs list.
            header = json.loads(body)["content"].split("---\n")[1]
            valid = isinstance(yaml.safe_load(header).get("configs"), list)
            self._reply(200 if valid else 400, {"errors": [] if valid else [{"message": "no configs"}], "warnings": []})
        elif "/preupload/" in self.path:
            files = json.loads(body)["files"]
            self._reply(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False} for f in files]})
        elif "/commit/" in self.path:
            repo = self.path.split("/api/datasets/")[1].split("/commit/")[0]
            self._reply(200, {"commitUrl": f"{endpoint}/datasets/{repo}/commit/abc123", "commitOid": "abc123"})
        else:
            self._reply(404, {"error": f"not implemented: {self.path}"})

    def do_GET(self) -> None:
        self.server.requests.append({"method": "GET", "path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": b""})
        self._reply(404, {"error": f"not implemented: {self.path}"})


@pytest.fixture
def hub():
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeHub)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("push") / "hf"
    from tvrbench.data import load_sample
    from tvrbench.publish import fire_qrels_artifact, relevance_artifact, write_dataset

    sample = load_sample()
    write_dataset(
        out,
        [
            fire_qrels_artifact(sample_path("fire.json"), "qrels_fire"),
            relevance_artifact(sample_path("relevance.npy"), "relevance", "top-k", 5, sample.captions.caption_ids, sample.video_ids),
        ],
        license="cc0-1.0",
    )
    return out


def _run(args, env_extra: dict, home: Path) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    env.update({"HF_HOME": str(home), "HF_HUB_VERBOSITY": "debug", "HF_HUB_DISABLE_TELEMETRY": "1", **env_extra})
    return subprocess.run([*TVRBENCH, *args], capture_output=True, text=True, env=env, timeout=120)


def _run_here(args, monkeypatch, capfd, token: str | None = None) -> tuple[int, str, str]:
    """The command in this process (cheaper than a subprocess): exit code, stdout, stderr."""
    import huggingface_hub.constants

    from tvrbench.cli import main

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)  # another test module may have set it
    monkeypatch.delenv("HF_TOKEN", raising=False)
    if token is not None:
        monkeypatch.setenv("HF_TOKEN", token)
    try:
        main(args)
        code = 0
    except SystemExit as stop:
        code = stop.code
    out, err = capfd.readouterr()
    return code, out, err


def _commit_files(request: dict) -> dict[str, bytes]:
    """Paths and contents of an NDJSON commit body."""
    files = {}
    for line in request["body"].decode().splitlines():
        item = json.loads(line)
        if item["key"] == "file":
            assert item["value"]["encoding"] == "base64"
            files[item["value"]["path"]] = base64.b64decode(item["value"]["content"])
    return files


def test_push_uploads_every_file_and_never_shows_the_token(hub, dataset, tmp_path):
    token = "hf_" + secrets.token_hex(16)
    endpoint = f"http://127.0.0.1:{hub.server_address[1]}"
    home = tmp_path / "hfhome"
    result = _run(
        [
            "publish",
            "--out",
            str(dataset),
            "--fire",
            f"qrels_fire={sample_path('fire.json')}",
            "--push",
            "someone/tvr-derived",
            "--private",
            "--endpoint",
            endpoint,
            "--license",
            "cc0-1.0",
        ],
        {"HF_TOKEN": token},
        home,
    )
    assert result.returncode == 0, result.stderr
    assert f"{endpoint}/datasets/someone/tvr-derived" in result.stdout

    paths = [(r["method"], r["path"].split("?")[0]) for r in hub.requests]
    assert paths[0] == ("POST", "/api/repos/create")
    create = json.loads(hub.requests[0]["body"])
    assert create["name"] == "tvr-derived" and create["organization"] == "someone" and create["type"] == "dataset"
    assert create.get("private") is True or create.get("visibility") == "private"
    assert ("POST", "/api/datasets/someone/tvr-derived/preupload/main") in paths
    commits = [r for r in hub.requests if "/commit/" in r["path"]]
    assert len(commits) == 1
    uploaded = _commit_files(commits[0])
    local = {p.relative_to(dataset).as_posix(): p.read_bytes() for p in dataset.rglob("*") if p.is_file() and not p.name.startswith(".")}
    assert uploaded == local  # this run rewrote the folder with one config; the stale one is gone
    assert set(uploaded) == {"README.md", "data/qrels_fire/test-00000-of-00001.parquet"}

    # The token travels in the Authorization header of every request and nowhere else.
    for request in hub.requests:
        assert request["headers"].get("authorization") == f"Bearer {token}"
        assert token.encode() not in request["body"]
        assert all(token not in value for key, value in request["headers"].items() if key != "authorization")
    assert token not in result.stdout and token not in result.stderr
    for root in (dataset, home, tmp_path):
        for path in root.rglob("*"):
            if path.is_file():
                assert token.encode() not in path.read_bytes(), path


def test_dry_run_sends_nothing(hub, dataset, monkeypatch, capfd):
    endpoint = f"http://127.0.0.1:{hub.server_address[1]}"
    code, out, err = _run_here(
        [
            "publish",
            "--out",
            str(dataset),
            "--fire",
            str(sample_path("fire.json")),
            "--push",
            "someone/tvr-derived",
            "--dry-run",
            "--endpoint",
            endpoint,
        ],
        monkeypatch,
        capfd,
        token="hf_" + secrets.token_hex(16),
    )
    assert code == 0, err
    assert hub.requests == []
    assert "dry run" in out and "README.md" in out
    assert "data/qrels_fire/test-00000-of-00001.parquet" in out


def test_push_without_token_is_one_clear_line(hub, dataset, monkeypatch, capfd):
    endpoint = f"http://127.0.0.1:{hub.server_address[1]}"
    code, _, err = _run_here(
        ["publish", "--out", str(dataset), "--fire", str(sample_path("fire.json")), "--push", "someone/x", "--endpoint", endpoint], monkeypatch, capfd
    )
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("tvrbench: error: HF_TOKEN: not set")
    assert "Traceback" not in err
    assert hub.requests == []


def test_rejected_token_is_one_clear_line(dataset, monkeypatch, capfd):
    class Refusing(FakeHub):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self._reply(401, {"error": "Invalid credentials in Authorization header"})

    server = ThreadingHTTPServer(("127.0.0.1", 0), Refusing)
    server.requests = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        token = "hf_" + secrets.token_hex(16)
        code, out, err = _run_here(
            [
                "publish",
                "--out",
                str(dataset),
                "--fire",
                str(sample_path("fire.json")),
                "--push",
                "someone/x",
                "--endpoint",
                f"http://127.0.0.1:{server.server_address[1]}",
            ],
            monkeypatch,
            capfd,
            token,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert code == 2
    assert "upload failed" in err and "401" in err and "Traceback" not in err
    assert token not in err and token not in out


def test_unreachable_hub_is_one_clear_line(dataset, monkeypatch, capfd):
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, _, err = _run_here(
        ["publish", "--out", str(dataset), "--fire", str(sample_path("fire.json")), "--push", "someone/x", "--endpoint", f"http://127.0.0.1:{port}"],
        monkeypatch,
        capfd,
        "hf_" + secrets.token_hex(16),
    )
    assert code == 2
    assert "cannot reach the hub" in err.strip().splitlines()[-1] and "Traceback" not in err


def test_the_plan_lists_what_an_upload_sends_and_checks_the_repo_and_the_endpoint(tmp_path):
    """plan_push, before anything is sent: the folder's files but hidden ones, sizes from the disk, and
    the token's endpoint HTTPS or this machine."""
    with pytest.raises(InputError, match="no README.md"):
        plan_push(tmp_path, "someone/x")
    files = {"README.md": "card\n", "data/mc/test-00000-of-00001.parquet": "x" * 300, ".tvrbench-publish.json": "{}", "data/.part.tmp": "y"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    plan = plan_push(tmp_path, "someone/x", private=True, endpoint="https://hub.example/")
    sent = sorted((name, len(text)) for name, text in files.items() if not any(part.startswith(".") for part in name.split("/")))
    assert plan.files == sent and plan.endpoint == "https://hub.example" and plan.private
    assert plan.describe()[0] == f"private dataset repo someone/x on https://hub.example: 2 files, {5 + 300:,} bytes"
    assert hub_endpoint("someone/x", "http://127.0.0.1:8080") == "http://127.0.0.1:8080"
    for repo, endpoint in [("someone", None), ("a/b/c", None), ("someone/x", "http://hub.example"), ("someone/x", "ftp://127.0.0.1")]:
        with pytest.raises(InputError):
            hub_endpoint(repo, endpoint)
