"""Every input file of every command is pinned in its output's signature: change one input by one byte
(a change that keeps it valid) and ``signature diff`` names exactly that input's field, nothing else.

One case per (command, input). Each command runs once on the pristine inputs (cached per command) and
once with the one input changed, both in-process through :func:`tvrbench.cli.run`.

Left out, and why:
- ``signature diff``, ``report``, ``demo``, ``doctor``, ``fire cache``: they write no signature (a diff
  reads signatures; a report shows them; the demo's steps are the commands below).
- ``fire labels to-fire``: it writes FIRE JSON, a format that holds no signature.
- ``proxy-study human-kit`` / ``human-score``: their inputs are a kit and annotators' rankings that
  only people make; the kit's own signature is checked against its proxy's in tests/test_output_safety.py.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from tvrbench.cli import run
from tvrbench.data import sample_path
from tvrbench.evaluation.fire.tables import signatures_in
from tvrbench.signature import Signature, diff_signatures

MODELS = ("strong", "genderblind")  # the FIRE file's pooled models, so pooling reads them too
QUERIES = ["--queries", "{dir}/captions.csv", "--videos", "{dir}/videos.txt"]
TWO_MODELS = ["--scores", "strong={dir}/strong.npy", "--scores", "genderblind={dir}/genderblind.npy"]
ONE_MODEL = ["--scores", "{dir}/strong.npy"]
FIRE = ["--fire", "{dir}/fire.json"]
FAST = ["--resamples", "20", "--seed", "0"]


# --------------------------------------------------------------------------- the inputs and their one-byte changes


def _write_inputs(folder: Path) -> None:
    """The embedded sample's files, two models, a TREC run, qrels, training captions and an MC split's scores."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("captions.csv", "videos.txt", "fire.json", "relevance.npy"):
        shutil.copy(sample_path(name), folder / name)
    for model in MODELS:
        shutil.copy(sample_path(f"scores_{model}.npy"), folder / f"{model}.npy")
    scores = np.load(sample_path("scores_strong.npy"))
    caption_ids = [line.split(",")[0] for line in sample_path("captions.csv").read_text().splitlines()[1:]]
    video_ids = sample_path("videos.txt").read_text().split()
    lines = [
        f"{c} Q0 {v} {rank + 1} {scores[i, j]:.6f} strong"
        for i, c in enumerate(caption_ids)
        for rank, j in enumerate(np.argsort(-scores[i])[:5])
        for v in [video_ids[j]]
    ]
    (folder / "run.trec").write_text("\n".join(lines) + "\n")
    (folder / "qrels.txt").write_text(f"{caption_ids[0]} 0 {video_ids[1]} 1\n{caption_ids[1]} 0 {video_ids[2]} 1\n")
    train = sample_path("captions.csv").read_text().replace("\ncap", "\ntrain")
    (folder / "train.csv").write_text(train)
    np.save(folder / "mc_scores.npy", np.random.default_rng(0).random((len(video_ids), 5)))


def _change_text(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def _change_cell(path: Path) -> None:
    """One value changed in its last digit (towards 0.5: a relevance stays within [0, 1])."""
    values = np.load(path)
    values.flat[0] = np.nextafter(values.flat[0], 0.5)
    np.save(path, values)


def _change_run(path: Path) -> None:
    """The first line's score changed in its last digit."""
    first, rest = path.read_text().split("\n", 1)
    *head, score, tag = first.split(" ")
    path.write_text(" ".join([*head, f"{float(score) + 1e-6:.6f}", tag]) + "\n" + rest)


def _change_option(path: Path) -> None:
    """The first instance's first option's text, a full stop added."""
    header, first, rest = path.read_text().split("\n", 2)
    clip, option, others = first.split("\t", 2)
    path.write_text("\n".join([header, "\t".join([clip, option + ".", others]), rest]))


CHANGES = {  # a change's name -> (the file changed, how)
    # A trailing space in a caption's text: the file changes, the captions read do not (texts are
    # stripped), and every caption is a FIRE query, so a FIRE file still matches them.
    "captions.csv": ("captions.csv", lambda path: _change_text(path, "a man is cooking,", "a man is cooking ,")),
    # One caption's text, for the commands that pin the captions they read rather than the file (one
    # with no gender contrast, so the contrast records still match the captions).
    "captions.csv:text": ("captions.csv", lambda path: _change_text(path, "cartoon cars are racing,", "cartoon cars are racing.,")),
    "train.csv": ("train.csv", lambda path: _change_text(path, "a man is cooking,", "a man is cooking.,")),
    "videos.txt": ("videos.txt", lambda path: path.write_text(path.read_text() + "\n")),  # a blank line at the end
    "fire.json": ("fire.json", lambda path: _change_text(path, '"queue_ids": [9002]', '"queue_ids": [9003]')),  # one record's field
    "qrels.txt": ("qrels.txt", lambda path: _change_text(path, " 1\n", " 2\n")),  # one grade
    "run.trec": ("run.trec", _change_run),
    "strong.npy": ("strong.npy", _change_cell),
    "genderblind.npy": ("genderblind.npy", _change_cell),
    "relevance.npy": ("relevance.npy", _change_cell),
    "mc_scores.npy": ("mc_scores.npy", _change_cell),
    "bow.npy": ("bow.npy", _change_cell),
    "mc/random.tsv": ("mc/random.tsv", _change_option),
    "contrast/gender.jsonl": ("contrast/gender.jsonl", lambda path: _change_text(path, '"caption_id": ', '"caption_id":  ')),  # JSON spacing
}


# --------------------------------------------------------------------------- the commands and the inputs each reads


@dataclass(frozen=True)
class Command:
    name: str
    args: tuple[str, ...]  # with {dir} for the inputs' folder and {out} for the output's
    inputs: dict[str, str]  # change (of CHANGES) -> the signature field that must name it
    output: str = "out.json"  # the file holding the signature
    before: tuple[tuple[str, ...], ...] = ()  # commands that make inputs (run once, on the pristine files)


def _fire(name: str, *args: str, inputs: dict[str, str]) -> Command:
    return Command(f"fire {name}", ("fire", name, *args, "--json", "{out}/out.json"), inputs)


QV = {"captions.csv": "queries", "videos.txt": "videos"}
QV_TWO = {**QV, "strong.npy": "scores", "genderblind.npy": "scores"}
QV_ONE = {**QV, "strong.npy": "scores"}
EVALUATE = ("evaluate", *QUERIES, "--json", "{out}/out.json")
MC_RANDOM = ("mc", "build", "--captions", "{dir}/captions.csv", "--kind", "random", "--out", "{dir}/mc/random.tsv")
GENDER = ("contrast", "gender", "--captions", "{dir}/captions.csv", "--lm", "ngram", "--out", "{dir}/contrast/gender.jsonl")
BOW = ("proxies", "--captions", "{dir}/captions.csv", "--proxy", "bow", "--level", "video", "--out", "{dir}/bow.npy")


def _study(name: str, *args: str, inputs: dict[str, str]) -> Command:
    return Command(f"proxy-study {name}", ("proxy-study", name, *args, "--json", "{out}/out.json"), inputs, before=(BOW,))


COMMANDS = [
    Command(
        "evaluate",
        (*EVALUATE, *ONE_MODEL, *FIRE, "--qrels", "{dir}/qrels.txt", "--relevance", "{dir}/relevance.npy"),
        {
            "captions.csv": "queries_file",
            "videos.txt": "videos_file",
            "strong.npy": "scores",
            "fire.json": "fire",
            "qrels.txt": "qrels",
            "relevance.npy": "proxy",
        },
    ),
    Command("evaluate (TREC run)", (*EVALUATE, "--scores", "{dir}/run.trec"), {"run.trec": "scores"}),
    _fire("agreement", *FIRE, inputs={"fire.json": "fire"}),
    _fire("compare", *QUERIES, *TWO_MODELS, *FIRE, inputs={**QV_TWO, "fire.json": "fire"}),
    _fire("overlap", *QUERIES, *TWO_MODELS, "--k", "5", inputs=QV_TWO),
    _fire("pooling", *QUERIES, *TWO_MODELS, *FIRE, inputs={**QV_TWO, "fire.json": "fire"}),
    _fire("bootstrap", *QUERIES, *ONE_MODEL, *FIRE, "--sizes", "20", "--metrics", "C@1", *FAST, inputs={**QV_ONE, "fire.json": "fire"}),
    _fire("paired", *QUERIES, *TWO_MODELS, *FIRE, *FAST, inputs={**QV_TWO, "fire.json": "fire"}),
    _fire("queue", *QUERIES, *ONE_MODEL, *FIRE, "--out", "{out}/queue.csv", inputs={**QV_ONE, "fire.json": "fire"}),
    _fire("length", *QUERIES, *TWO_MODELS, *FIRE, inputs={**QV_TWO, "fire.json": "fire"}),
    _fire("ranks", *QUERIES, *ONE_MODEL, *FIRE, inputs={**QV_ONE, "fire.json": "fire"}),
    _fire("overlap-train", *QUERIES, "--train", "{dir}/train.csv", *TWO_MODELS, *FIRE, inputs={**QV_TWO, "train.csv": "train", "fire.json": "fire"}),
    Command(
        "fire labels to-qrels",
        ("fire", "labels", "to-qrels", *FIRE, "--queries", "{dir}/captions.csv", "--out", "{out}/qrels.txt", "--metadata", "{out}/out.json"),
        {"fire.json": "fire", "captions.csv": "queries"},
    ),
    Command("mc build", MC_RANDOM[:-1] + ("{out}/random.tsv",), {"captions.csv:text": "captions"}, output="random.tsv.json"),
    Command(
        "mc score",
        ("mc", "score", "--mc", "{dir}/mc/random.tsv", "--scores", "{dir}/mc_scores.npy", "--json", "{out}/out.json"),
        {"mc/random.tsv": "mc", "mc_scores.npy": "scores"},
        before=(MC_RANDOM,),
    ),
    Command(  # the blind scorer loads a sentence model: one command for both inputs it adds
        "mc score (blind)",
        (
            "mc",
            "score",
            "--mc",
            "{dir}/mc/gender.tsv",
            "--scorer",
            "blind",
            "--captions",
            "{dir}/captions.csv",
            "--contrast",
            "{dir}/contrast/gender.jsonl",
        )
        + ("--json", "{out}/out.json"),
        {"captions.csv:text": "captions", "contrast/gender.jsonl": "contrast"},
        before=(GENDER, (*MC_RANDOM[:5], "gender", "--contrast", "{dir}/contrast/gender.jsonl", "--out", "{dir}/mc/gender.tsv")),
    ),
    Command(
        "mc build (contrast)",
        (*MC_RANDOM[:5], "gender", "--contrast", "{dir}/contrast/gender.jsonl", "--out", "{out}/gender.tsv"),
        {"captions.csv:text": "captions", "contrast/gender.jsonl": "contrast"},
        output="gender.tsv.json",
        before=(GENDER,),
    ),
    Command(
        "mc import",
        ("mc", "import", "--tsv", "{dir}/mc/random.tsv", "--out", "{out}/human.tsv"),
        {"mc/random.tsv": "imported"},
        output="human.tsv.json",
    ),
    Command("contrast gender", (*GENDER[:-1], "{out}/gender.jsonl"), {"captions.csv:text": "captions"}, output="gender.jsonl.json"),
    Command(
        "proxies",
        ("proxies", "--captions", "{dir}/captions.csv", "--proxy", "bow", "--level", "video", "--out", "{out}/bow.npy"),
        {"captions.csv:text": "captions"},
        output="bow.json",
    ),
    _study("curve", "--matrix", "BoW={dir}/bow.npy", inputs={"bow.npy": "relevance"}),
    _study("correlation", "--matrix", "BoW={dir}/bow.npy", "--matrix", "again={dir}/bow.npy", inputs={"bow.npy": "relevance"}),
    _study("gmr", "--scores", "strong={dir}/strong.npy", "--relevance", "{dir}/bow.npy", inputs={"bow.npy": "relevance", "strong.npy": "scores"}),
    Command(
        "publish",
        (
            "publish",
            "--out",
            "{out}/dataset",
            "--mc",
            "mc_random={dir}/mc/random.tsv",
            "--contrast",
            "contrast_gender={dir}/contrast/gender.jsonl",
            "--qrels",
            "qrels_extra={dir}/qrels.txt",
            "--fire",
            "qrels_fire={dir}/fire.json",
        ),
        {"mc/random.tsv": "mc_random", "contrast/gender.jsonl": "contrast_gender", "qrels.txt": "qrels_extra", "fire.json": "qrels_fire"},
        output="dataset/README.md",
    ),
]

CASES = [pytest.param(command, changed, field, id=f"{command.name}:{changed}") for command in COMMANDS for changed, field in command.inputs.items()]


# --------------------------------------------------------------------------- running


def _run(command: Command, inputs: Path, out: Path) -> Signature:
    out.mkdir(parents=True, exist_ok=True)
    argv = [arg.format(dir=inputs, out=out) for arg in command.args]
    assert run(argv) == 0, f"tvrbench {' '.join(argv)} failed"
    written = (out / command.output).read_text()
    if command.output.endswith(".md"):  # a dataset card: the publish signature is on its own line
        return Signature.parse(re.search(r"^Publish signature: `(.*)`$", written, re.MULTILINE).group(1))
    payload = json.loads(written)
    return Signature.parse(payload["signature"] if "signature" in payload else signatures_in(payload)[0])


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("inputs")
    _write_inputs(folder)
    for before in dict.fromkeys(before for command in COMMANDS for before in command.before):
        assert run([arg.format(dir=folder) for arg in before]) == 0
    return folder


@pytest.fixture(scope="module")
def signatures_before(pristine, tmp_path_factory):
    """Each command's signature on the pristine inputs, computed on first use."""
    cache: dict[str, Signature] = {}

    def signature_of(command: Command) -> Signature:
        if command.name not in cache:
            cache[command.name] = _run(command, pristine, tmp_path_factory.mktemp("before"))
        return cache[command.name]

    return signature_of


@pytest.mark.parametrize(("command", "changed", "field"), CASES)
def test_a_changed_input_changes_exactly_its_field(command, changed, field, pristine, signatures_before, tmp_path):
    before = signatures_before(command)
    inputs = tmp_path / "inputs"
    shutil.copytree(pristine, inputs)
    file, change = CHANGES[changed]
    change(inputs / file)
    after = _run(command, inputs, tmp_path / "out")
    assert [change.key for change in diff_signatures(before, after)] == [field]
