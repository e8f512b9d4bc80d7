"""Nothing lost, nothing clobbered (issue 17): outputs checked against inputs and each other before
any work, names from data kept inside their folder, every failure one line, publish removing only
what it wrote, Ctrl-C and failing demo steps stopping with their code. Real files, real commands."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from tvrbench.cli import load_commands, run
from tvrbench.data import sample_path
from tvrbench.errors import InputError
from tvrbench.io.outputs import Output, check_outputs, name_in

ROOT = Path(__file__).resolve().parents[1]
CAPTIONS, VIDEOS, FIRE = (str(sample_path(name)) for name in ("captions.csv", "videos.txt", "fire.json"))
SCORES = str(sample_path("scores_strong.npy"))


def one_line_error(capsys, *args: str) -> str:
    """Run in this process: exit code 2 and exactly one ``tvrbench: error:`` line on stderr."""
    capsys.readouterr()
    code = run([str(arg) for arg in args])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("tvrbench: error: "), (code, err)
    return err[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def registered(typer_app) -> list:
    """Every command function of the app, sub-apps included."""
    found = [info.callback for info in typer_app.registered_commands]
    for group in typer_app.registered_groups:
        found += registered(group.typer_instance)
    return found


def test_every_command_declares_what_it_writes():
    """And so every command that writes has --overwrite (publish its own, which also decides what it does in its folder)."""
    commands = registered(load_commands())
    assert len(commands) == 44
    assert [c.__name__ for c in commands if not hasattr(c, "writes")] == []
    assert [c.__name__ for c in commands if c.writes and "overwrite" not in inspect.signature(c).parameters] == []


# --------------------------------------------------------------------------- another kind of command's output


def test_a_command_does_not_replace_what_another_kind_of_command_wrote(tmp_path, capsys):
    """A random split over a verb split, gender contrasts over verb ones, a score's JSON over a split's
    sidecar, a BoW matrix over a visual one: each refused in one line naming the file, what wrote it and
    --overwrite, before any work (these used to exit 0 having replaced it). Rerunning the same kind of
    command replaces its own output as before, and --overwrite replaces another's; a split whose sidecar
    is gone says no command wrote it, so it is refused too (tests/test_output_writers.py: every output)."""
    from tvrbench.io.writers import written_by

    features = tmp_path / "features.npy"
    np.save(features, np.random.default_rng(0).standard_normal((36, 8)).astype(np.float32))
    visual = [
        "proxies",
        "--captions",
        CAPTIONS,
        "--proxy",
        "visual",
        "--features",
        str(features),
        "--level",
        "video",
        "--out",
        str(tmp_path / "m.npy"),
    ]
    human = tmp_path / "human.tsv"
    assert run(["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", str(human)]) == 0
    (tmp_path / "human.tsv.json").unlink()  # an MC TSV made elsewhere: no sidecar, nothing says what wrote it
    for command in (
        ["contrast", "gender", "--captions", CAPTIONS, "--out", str(tmp_path / "gender.jsonl")],
        ["mc", "build", "--captions", CAPTIONS, "--kind", "gender", "--contrast", str(tmp_path / "gender.jsonl"), "--out", str(tmp_path / "g.tsv")],
        ["mc", "import", "--tsv", str(human), "--out", str(tmp_path / "imported.tsv")],
        visual,
    ):
        assert run(command) == 0
    writers = {name: written_by(tmp_path / name) for name in ("gender.jsonl", "g.tsv", "g.tsv.json", "imported.tsv", "m.npy", "m.json", "human.tsv")}
    assert writers == {
        "gender.jsonl": "contrast gender",
        "g.tsv": "mc build --kind gender",
        "g.tsv.json": "mc build --kind gender",  # a sidecar: what wrote the output it describes
        "imported.tsv": "mc import",
        "m.npy": "proxies --proxy visual",
        "m.json": "proxies --proxy visual",
        "human.tsv": None,
    }
    before = snapshot(tmp_path)
    refused = {  # the file -> the command that would replace it, and that command as the line names it
        "g.tsv": (["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", tmp_path / "g.tsv"], "mc build --kind random"),
        "gender.jsonl": (["contrast", "verb", "--captions", CAPTIONS, "--out", tmp_path / "gender.jsonl"], "contrast verb"),
        "g.tsv.json": (["mc", "score", "--mc", tmp_path / "imported.tsv", "--scorer", "lm", "--json", tmp_path / "g.tsv.json"], "mc score"),
        "m.npy": (["proxies", "--captions", CAPTIONS, "--proxy", "bow", "--out", tmp_path / "m.npy"], "proxies --proxy bow"),
        "imported.tsv": (["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", tmp_path / "imported.tsv"], "mc build --kind random"),
    }
    for name, (command, ours) in refused.items():
        written = f"written by `tvrbench {writers[name]}`, another kind of command than `{ours}`; --overwrite replaces it"
        assert one_line_error(capsys, *command) == f"tvrbench: error: {tmp_path / name}: {written}"
    assert snapshot(tmp_path) == before  # nothing replaced, no partial file begun
    assert run(visual) == 0  # its own earlier output
    assert "nothing in it or beside it says" in one_line_error(capsys, "mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", human)
    assert run(["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", str(tmp_path / "g.tsv"), "--overwrite"]) == 0
    assert written_by(tmp_path / "g.tsv") == "mc build --kind random"


# --------------------------------------------------------------------------- outputs vs inputs


@pytest.fixture
def inputs(tmp_path):
    for name in ("captions.csv", "videos.txt", "fire.json", "scores_strong.npy"):
        shutil.copy(sample_path(name), tmp_path / name)
    return tmp_path


def collisions(d: Path) -> list[list[str]]:
    """Seven commands, each with an output (or its sidecar) landing on an input or on another output."""
    return [
        ["fire", "labels", "to-qrels", "--fire", d / "fire.json", "--out", d / "fire.json"],
        ["proxies", "--captions", d / "captions.csv", "--proxy", "bow", "--out", d / "captions.npy", "--config", d / "captions.json"],
        [
            "evaluate",
            "--queries",
            d / "captions.csv",
            "--videos",
            d / "videos.txt",
            "--scores",
            d / "scores_strong.npy",
            "--json",
            d / "o",
            "--per-query",
            d / "o",
        ],
        ["mc", "build", "--captions", d / "captions.csv", "--kind", "random", "--out", d / "captions.csv"],
        ["contrast", "gender", "--captions", d / "fire.json.partial", "--out", d / "fire.json"],
        ["report", "--out", d / "fire.json", "--analysis", f"a={d / 'fire.json'}"],
        [
            "fire",
            "compare",
            "--queries",
            d / "captions.csv",
            "--videos",
            d / "videos.txt",
            "--scores",
            f"m={d / 'scores_strong.npy'}",
            "--fire",
            d / "fire.json",
            "--json",
            d / "videos.txt",
        ],
    ]


@pytest.mark.parametrize("case", range(7))
def test_an_output_on_an_input_is_refused_before_any_work(inputs, capsys, case):
    (inputs / "fire.json.partial").write_text("caption_id,text,video_id\nc1,a man,v1\n")
    (inputs / "captions.json").write_text("{}")
    before = snapshot(inputs)
    line = one_line_error(capsys, *collisions(inputs)[case])
    assert "would overwrite the input" in line or "are the same file" in line
    assert snapshot(inputs) == before  # no input changed, nothing written


def test_the_sidecar_of_an_input_is_an_input(tmp_path, capsys):
    mc = tmp_path / "mc.tsv"
    assert run(["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", str(mc)]) == 0
    before = snapshot(tmp_path)
    assert "--mc" in one_line_error(capsys, "mc", "score", "--mc", mc, "--scorer", "blind", "--json", tmp_path / "mc.tsv.json")
    assert "--mc" in one_line_error(capsys, "report", "--mc", f"m={mc}", "--out", tmp_path / "mc.tsv.json")
    assert snapshot(tmp_path) == before


def test_links_to_an_input_are_the_input(inputs, capsys):
    os.link(inputs / "fire.json", inputs / "hard.json")
    (inputs / "soft.json").symlink_to(inputs / "fire.json")
    for alias in ("hard.json", "soft.json"):
        one_line_error(capsys, "fire", "labels", "to-qrels", "--fire", inputs / "fire.json", "--out", inputs / alias)
    assert (inputs / "fire.json").read_bytes() == Path(FIRE).read_bytes()


def test_unwritable_outputs_are_refused_before_any_work(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    evaluate = ["evaluate", "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", SCORES]
    assert "is a folder" in one_line_error(capsys, *evaluate, "--json", tmp_path / "a.json", "--per-query", tmp_path / "folder")
    assert "is a file, not a folder" in one_line_error(capsys, *evaluate, "--json", tmp_path / "file" / "x.json")
    assert "must be a folder" in one_line_error(
        capsys, "fire", "bootstrap", "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", SCORES, "--plots", tmp_path / "file"
    )
    assert "is a folder" in one_line_error(capsys, "contrast", "gender", "--captions", CAPTIONS, "--out", tmp_path / "folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file", "folder"]  # no first output, no .partial


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_a_read_only_folder_is_refused(tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    assert "not writable" in one_line_error(capsys, "fire", "agreement", "--fire", FIRE, "--json", locked / "a.json")


# --------------------------------------------------------------------------- names from data


def test_names_from_data_never_leave_their_folder(tmp_path, capsys):
    fire = json.loads(Path(FIRE).read_text())
    for record in fire["annotations"] + fire["disagreements"]:
        record["dataset"] = "../../escaped"
    (tmp_path / "fire.json").write_text(json.dumps(fire))
    plots = tmp_path / "deep" / "plots"
    common = ["--queries", CAPTIONS, "--videos", VIDEOS]
    line = one_line_error(
        capsys,
        "fire",
        "length",
        *common,
        "--scores",
        SCORES,
        "--scores",
        str(sample_path("scores_objectonly.npy")),
        "--fire",
        tmp_path / "fire.json",
        "--plots",
        plots,
    )
    assert "../../escaped" in line and "cannot be part of a file name" in line
    assert "model name" in one_line_error(capsys, "fire", "bootstrap", *common, "--scores", f"../../m={SCORES}", "--plots", plots)
    mc = tmp_path / "mc.tsv"
    assert run(["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", str(mc)]) == 0
    assert "split" in one_line_error(capsys, "publish", "--out", tmp_path / "hf", "--mc", mc, "--split", "../../x")
    assert not (tmp_path / "escaped").exists() and not (tmp_path / "deep").exists() and not (tmp_path / "hf").exists()


# --------------------------------------------------------------------------- publish removes only what it wrote


@pytest.fixture
def mc_file(tmp_path):
    mc = tmp_path / "inputs" / "gender.tsv"
    assert run(["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", str(mc)]) == 0
    return mc


def test_publish_keeps_what_it_did_not_write(tmp_path, mc_file, capsys):
    out = tmp_path / "x"
    (out / "data" / "raw").mkdir(parents=True)
    (out / "data" / "raw" / "v.mp4").write_bytes(b"video")
    assert "--overwrite" in one_line_error(capsys, "publish", "--out", out, "--mc", mc_file)
    assert snapshot(out) == {"data/raw/v.mp4": b"video"}
    assert run(["publish", "--out", str(out), "--mc", f"first={mc_file}", "--overwrite"]) == 0
    assert run(["publish", "--out", str(out), "--mc", f"second={mc_file}"]) == 0  # its own folder now: no flag needed
    assert sorted(snapshot(out)) == [".tvrbench-publish.json", "README.md", "data/raw/v.mp4", "data/second/test-00000-of-00001.parquet"]
    assert not (out / "data" / "first").exists()  # the stale config it wrote itself is gone


def test_publish_never_follows_a_symlinked_data_folder(tmp_path, mc_file, capsys):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "raw").mkdir(parents=True)
    (elsewhere / "raw" / "v.mp4").write_bytes(b"video")
    out = tmp_path / "x"
    out.mkdir()
    (out / "data").symlink_to(elsewhere, target_is_directory=True)
    assert "--overwrite" in one_line_error(capsys, "publish", "--out", out, "--mc", mc_file)
    assert "symbolic link" in one_line_error(capsys, "publish", "--out", out, "--mc", mc_file, "--overwrite")
    assert snapshot(elsewhere) == {"raw/v.mp4": b"video"}


def test_publish_refuses_a_manifest_it_did_not_write(tmp_path, mc_file, capsys):
    out = tmp_path / "x"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (out / ".tvrbench-publish.json").write_text(json.dumps({"files": ["../victim.txt"]}))
    assert "not a manifest" in one_line_error(capsys, "publish", "--out", out, "--mc", mc_file)
    assert victim.read_text() == "keep me"


def test_publish_refuses_plain_http_to_another_host(tmp_path, mc_file, capsys, monkeypatch):
    from tvrbench.publish import hub_endpoint

    monkeypatch.setenv("HF_ENDPOINT", "http://hub.example.com")
    assert "https://" in one_line_error(capsys, "publish", "--out", tmp_path / "hf", "--mc", mc_file, "--push", "me/x", "--dry-run")
    assert not (tmp_path / "hf").exists()
    assert hub_endpoint("me/x", "http://127.0.0.1:8080/") == "http://127.0.0.1:8080"
    assert hub_endpoint("me/x", "https://hub.example.com") == "https://hub.example.com"
    for endpoint in ("http://localhost.example.com", "file:///etc", "ftp://localhost"):
        with pytest.raises(InputError, match="https://"):
            hub_endpoint("me/x", endpoint)


# --------------------------------------------------------------------------- one line, exit 2


@pytest.mark.parametrize(
    "args",
    [
        ["fire", "bootstrap", "--queries", CAPTIONS],  # missing option
        ["no-such-command"],
        ["evaluate", "--nope"],  # unknown option
        ["evaluate", "--queries"],  # option without its value
        ["proxies", "--captions", CAPTIONS, "--proxy", "zzz", "--out", "x.npy"],  # bad choice
        ["fire", "ranks", "--max-rank", "zero"],  # not an int
        ["fire", "ranks", "--max-rank", "0"],  # out of range
        ["proxy-study", "triplets", "--matrix", "m.npy", "--threshold", "nan", "--out", "t.csv"],
        ["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", "m.tsv", "--seed", "-1"],  # numpy refuses it
    ],
)
def test_usage_errors_are_one_line(capsys, args):
    assert "--help" in one_line_error(capsys, *args)


def test_input_problems_are_one_line(tmp_path, capsys):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert "nested too deeply" in one_line_error(capsys, "report", "--out", tmp_path / "r.html", "--analysis", f"a={deep}")
    bootstrap = ["fire", "bootstrap", "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", SCORES]
    assert "greater than or equal to 1" in one_line_error(capsys, *bootstrap, "--sizes", "0")
    assert "less than or equal to" in one_line_error(capsys, *bootstrap, "--sizes", "99999999999999999999")
    (tmp_path / "seed.yaml").write_text("seed: -3\n")
    assert "seed" in one_line_error(
        capsys, "contrast", "gender", "--captions", CAPTIONS, "--out", tmp_path / "g.jsonl", "--config", tmp_path / "seed.yaml"
    )
    tabbed = tmp_path / "tab.csv"
    tabbed.write_text("caption_id,text,video_id\n" + "".join(f'c{i},"a man\tis cooking {i}",v{i}\n' for i in range(6)))
    assert "tab" in one_line_error(capsys, "mc", "build", "--captions", tabbed, "--kind", "random", "--out", tmp_path / "mc.tsv")
    characters = tmp_path / "characters.csv"
    characters.write_bytes(b"movie,name,gender\nm,\xff\xfe,f\n")
    assert "not UTF-8" in one_line_error(capsys, "contrast", "id", "--captions", CAPTIONS, "--characters", characters, "--out", tmp_path / "id.jsonl")
    assert "no such model folder" in one_line_error(
        capsys,
        "proxies",
        "--captions",
        CAPTIONS,
        "--proxy",
        "embedding",
        "--embedding-model",
        tmp_path / "missing-model",
        "--out",
        tmp_path / "e.npy",
    )
    kit, rankings = tmp_path / "kit.csv", tmp_path / "rankings.csv"
    kit.write_text("video_id,caption_id,proxy_score\nv1,c1,0.5\n")
    rankings.write_text("annotator,video_id,caption_id,rank\na,v1,c1,first\n")
    assert "rank 'first'" in one_line_error(capsys, "proxy-study", "human-score", "--kit", kit, "--rankings", rankings)
    queries_with_spaces = tmp_path / "spaced.jsonl"
    queries_with_spaces.write_text(
        "".join(
            json.dumps({"caption_id": f"cap {i:03d}", "text": t, "video_id": "v"}) + "\n" for i, t in enumerate(["a man is cooking", "a woman sings"])
        )
    )
    assert "whitespace" in one_line_error(
        capsys, "fire", "labels", "to-qrels", "--fire", FIRE, "--queries", queries_with_spaces, "--out", tmp_path / "q.qrels"
    )


# --------------------------------------------------------------------------- sidecars and partial files read back


def test_foreign_or_malformed_sidecars_are_one_line(tmp_path, capsys):
    relevance = tmp_path / "rel.npy"
    np.save(relevance, np.load(sample_path("relevance.npy")))
    evaluate = ["evaluate", "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", SCORES, "--relevance", relevance, "--json", tmp_path / "o.json"]
    for sidecar in ("{not json", "[1, 2]", json.dumps({"rows": "videos", "row_ids": [1, 2], "col_ids": "x"}), json.dumps({"proxy": {"a": 1}})):
        (tmp_path / "rel.json").write_text(sidecar)
        one_line_error(capsys, *evaluate)
    (tmp_path / "rel.json").write_text(json.dumps({"proxy": "bow", "shape": [1, 1]}))
    assert "shape" in one_line_error(capsys, "proxy-study", "curve", "--matrix", relevance)
    mc = tmp_path / "mc.tsv"
    assert run(["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", str(mc)]) == 0
    (tmp_path / "mc.tsv.json").write_text('"a foreign sidecar"')
    assert "JSON object" in one_line_error(capsys, "report", "--out", tmp_path / "r.html", "--mc", f"m={mc}")
    (tmp_path / "mc.tsv.json").write_text(json.dumps({"instances": [3] * 36, "plausibility": {"lm": 1}}))
    for command in (
        ["report", "--out", tmp_path / "r.html", "--mc", f"m={mc}"],
        ["publish", "--out", tmp_path / "hf", "--mc", mc],
        ["mc", "score", "--mc", mc, "--scorer", "blind", "--json", tmp_path / "s.json"],
    ):
        assert "mc.tsv.json" in one_line_error(capsys, *command)
    np.save(tmp_path / "mc_scores.npy", np.zeros((3, 5, 1)))
    one_line_error(capsys, "mc", "score", "--mc", mc, "--scores", tmp_path / "mc_scores.npy", "--json", tmp_path / "s.json")


def test_a_corrupt_partial_file_is_redone_not_fatal(tmp_path, capsys):
    clean, damaged = tmp_path / "clean.jsonl", tmp_path / "damaged.jsonl"
    assert run(["contrast", "gender", "--captions", CAPTIONS, "--lm", "ngram", "--out", str(clean)]) == 0
    signature = json.loads((tmp_path / "clean.jsonl.json").read_text())["signature"]
    lines = [
        json.dumps({"signature": signature}),
        json.dumps({"caption_id": "cap000", "record": {"kind": 3}}),
        json.dumps(["not", "an", "entry"]),
        "\xff garbage",
    ]
    (tmp_path / "damaged.jsonl.partial").write_text("\n".join(lines) + "\n", encoding="latin-1")
    assert run(["contrast", "gender", "--captions", CAPTIONS, "--lm", "ngram", "--out", str(damaged)]) == 0
    assert damaged.read_bytes() == clean.read_bytes() and not (tmp_path / "damaged.jsonl.partial").exists()


def test_a_corrupt_proxy_progress_file_starts_over(tmp_path):
    clean, resumed = tmp_path / "clean.npy", tmp_path / "resumed.npy"
    args = ["proxies", "--captions", CAPTIONS, "--proxy", "bow", "--level", "video"]
    assert run([*args, "--out", str(clean)]) == 0
    (tmp_path / "resumed.npy.partial").write_bytes(b"\x93NUMPY garbage")
    state = json.loads((tmp_path / "clean.json").read_text())
    (tmp_path / "resumed.npy.partial.json").write_text(
        json.dumps({"signature": state["signature"], "shape": state["shape"], "dtype": "float32", "offset": "x", "rows_done": 10**9})
    )
    assert run([*args, "--out", str(resumed)]) == 0
    assert np.array_equal(np.load(clean), np.load(resumed))


# --------------------------------------------------------------------------- silent wrong results


def test_complex_features_and_template_titles(tmp_path, capsys):
    np.save(tmp_path / "features.npy", np.ones((36, 4), dtype=complex))
    assert "real numbers" in one_line_error(
        capsys,
        "proxies",
        "--captions",
        CAPTIONS,
        "--proxy",
        "visual",
        "--level",
        "video",
        "--features",
        tmp_path / "features.npy",
        "--out",
        tmp_path / "v.npy",
    )
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"metrics": {"C@1": 0.5}, "signature": "s"}))
    assert run(["report", "--out", str(tmp_path / "r.html"), "--title", "{{BODY}} and {{DATA}}", "--results", f"m={results}"]) == 0
    page = (tmp_path / "r.html").read_text()
    assert page.count("{{BODY}} and {{DATA}}") == 2  # <title> and <h1>, never substituted


def test_human_kit_checks_the_texts_not_only_the_ids(tmp_path, capsys):
    matrix = tmp_path / "bow.npy"
    assert run(["proxies", "--captions", CAPTIONS, "--proxy", "bow", "--level", "video", "--out", str(matrix)]) == 0
    edited = tmp_path / "captions.csv"
    edited.write_text(Path(CAPTIONS).read_text().replace("a man is cooking", "a dog is sleeping", 1))
    assert "texts differ" in one_line_error(
        capsys, "proxy-study", "human-kit", "--matrix", matrix, "--captions", edited, "--out", tmp_path / "kit.csv"
    )
    assert run(["proxy-study", "human-kit", "--matrix", str(matrix), "--captions", CAPTIONS, "--out", str(tmp_path / "kit.csv")]) == 0
    sidecar = json.loads(matrix.with_suffix(".json").read_text())
    matrix.with_suffix(".json").write_text(json.dumps({**sidecar, "signature": "tvrbench-0.1 captions=abc"}))  # read by the one parser
    assert "signature cannot be read" in one_line_error(
        capsys, "proxy-study", "human-kit", "--matrix", matrix, "--captions", CAPTIONS, "--out", tmp_path / "kit.csv"
    )


# --------------------------------------------------------------------------- Ctrl-C and the demo


def tvrbench(*args: str) -> subprocess.Popen:
    """The program in a child process that takes Ctrl-C as a terminal would deliver it (a test run
    in the background inherits SIGINT ignored; the child gets Python's default handler back)."""
    return subprocess.Popen(
        [sys.executable, "-m", "tvrbench", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.default_int_handler),
    )


def test_ctrl_c_stops_the_demo_with_130_and_one_line(tmp_path):
    out = tmp_path / "demo"
    process = tvrbench("demo", "--out", str(out))
    deadline = time.monotonic() + 120
    while not (out / "logs" / "proxy-bow.txt").exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # inside the first step
    os.kill(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    # 130, or (once in a loaded full-suite run, not reproduced in 14 tries) death by the SIGINT after
    # the message was printed: a shell reports both as 130
    assert process.returncode in (130, -signal.SIGINT), err
    # the last line: interrupted, and, where the step had begun a partial matrix, that a rerun resumes from it
    assert err.rstrip().splitlines()[-1].startswith("tvrbench: interrupted") and "Traceback" not in err and "done in" not in err
    assert not (out / "results.json").exists() and not (out / "logs" / "proxy-syn.txt").exists()


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the lost interrupt, on purpose
def test_ctrl_c_that_a_library_swallows_still_stops_the_demo_after_the_step(tmp_path, monkeypatch):
    """Python raises the KeyboardInterrupt wherever the main thread is; inside a ``__del__`` it is
    printed as "Exception ignored" and lost (a CI run once finished the whole demo after a Ctrl-C)."""
    from tvrbench.cli import demo
    from tvrbench.data.demo import Step

    class LosesTheInterrupt:
        def __del__(self):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)  # the handler runs here, inside __del__

    def step_that_is_interrupted(args):
        LosesTheInterrupt()

    monkeypatch.setattr(demo, "invoke", step_that_is_interrupted)
    step = Step("proxy-bow", ("proxies",))
    before = signal.getsignal(signal.SIGINT)  # default_int_handler; SIG_IGN under nohup or `cmd &`
    with demo._Interrupts().installed() as interrupts:
        with pytest.raises(KeyboardInterrupt):
            demo.run_step(step, tmp_path, sys.stderr, interrupts)
    assert signal.getsignal(signal.SIGINT) is before


def test_a_failing_demo_step_stops_the_demo_with_its_code(tmp_path):
    out = tmp_path / "demo"
    out.mkdir()
    (out / "proxies").write_text("a file where the demo wants a folder")
    process = tvrbench("demo", "--out", str(out))
    _, err = process.communicate(timeout=300)
    assert process.returncode == 2, err
    assert "step proxy-bow failed" in err and err.strip().splitlines()[-1].startswith("tvrbench: error: ")
    assert "done in" not in err and sorted(p.name for p in (out / "logs").iterdir()) == ["proxy-bow.txt"]


def test_check_outputs_refuses_an_input_a_repeated_output_a_folder_and_a_name_leaving_its_folder(tmp_path):
    """tvrbench.io.outputs from Python: what every command's @writes runs before any work."""
    source = tmp_path / "scores.npy"
    source.write_bytes(b"x")
    fresh = [Output(tmp_path / "out" / "a.json", "--json"), Output(tmp_path / "b.csv", "--out")]
    assert check_outputs(fresh, [("--scores", source)]) == []
    with pytest.raises(InputError, match="--json would overwrite the input --scores"):
        check_outputs([Output(tmp_path / "." / "scores.npy", "--json")], [("--scores", source)])
    with pytest.raises(InputError, match="--out and --json are the same file"):
        check_outputs([Output(tmp_path / "a.json", "--json"), Output(tmp_path / "x" / ".." / "a.json", "--out")], [])
    with pytest.raises(InputError, match="--json is a folder"):
        check_outputs([Output(tmp_path, "--json")], [])
    with pytest.raises(InputError, match=f"{source} is a file, not a folder"):
        check_outputs([Output(source / "a.json", "--json")], [])
    assert name_in(tmp_path, "model_1.v2", "model") == tmp_path / "model_1.v2"
    for name in ("../up", "a/b", "..", "two words", ""):
        with pytest.raises(InputError, match="cannot be part of a file name"):
            name_in(tmp_path, name, "model")
