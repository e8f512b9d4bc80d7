"""The one input layer (tvrbench.io.inputs, tvrbench.evaluation.inputs): NAME=PATH, the score-reading
rule, the sidecar rule, that every command reading scores or captions goes through them, and that a
script reads and writes what ``evaluate`` does with the same calls."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tvrbench.cli import run
from tvrbench.data import sample_path
from tvrbench.errors import InputError
from tvrbench.evaluation.inputs import EvaluationFiles, checkpoint_of, read_inputs
from tvrbench.evaluation.settings import EvaluateSettings
from tvrbench.io.captions import read_captions, read_video_ids
from tvrbench.io.inputs import CaptionsReading, named_paths, split_named_path
from tvrbench.io.scores import open_scores
from tvrbench.io.sidecars import sidecar_path
from tvrbench.io.trec import write_run
from tvrbench.signature import input_digest

CAPTIONS, VIDEOS, FIRE = (str(sample_path(name)) for name in ("captions.csv", "videos.txt", "fire.json"))


# --------------------------------------------------------------------------- NAME=PATH


def test_name_path_pairs_and_bare_paths(tmp_path):
    assert split_named_path("clip=runs/a.npy", "--scores") == ("clip", Path("runs/a.npy"))
    assert split_named_path("../m=a.npy", "--scores") == ("../m", Path("a.npy"))  # a bad name, refused where it names files
    existing = tmp_path / "run=3" / "a.npy"
    existing.parent.mkdir()
    existing.touch()
    assert split_named_path(existing, "--scores") == (None, existing)  # an existing path is a path, '=' and all
    assert named_paths(["scores_clip.npy", "x=y.trec", "dir/m.v2.npy"], "--scores") == {
        "clip": Path("scores_clip.npy"),
        "x": Path("y.trec"),
        "m": Path("dir/m.v2.npy"),
    }


@pytest.mark.parametrize("value", ["=a.npy", "clip="])
def test_a_bad_name_path_item_names_the_option(value):
    with pytest.raises(InputError, match=f"--matrix '{value}': expected NAME=PATH"):
        named_paths([value], "--matrix")


def test_a_name_given_twice_is_refused_and_a_required_name_enforced():
    with pytest.raises(InputError, match="--scores: the name 'a' is given twice"):
        named_paths(["a=x.npy", "scores_a.npy"], "--scores")
    with pytest.raises(InputError, match="--classes 'verbs.csv': expected NAME=PATH"):
        named_paths(["verbs.csv"], "--classes", name_required=True)


def test_commands_refuse_a_duplicate_model_name_in_one_line(capsys, tmp_path):
    strong = str(sample_path("scores_strong.npy"))
    for command in (["fire", "compare", "--fire", FIRE], ["report", "--out", str(tmp_path / "r.html")]):
        capsys.readouterr()
        assert run([*command, "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", f"m={strong}", "--scores", f"m={strong}"]) == 2
        assert capsys.readouterr().err == ("tvrbench: error: --scores: the name 'm' is given twice; name each file with NAME=PATH\n")


def test_a_script_evaluates_files_as_the_command_does(tmp_path):
    """The API's reader, checkpoint name and per-query table are the command's: the same bytes, no glue to write again."""
    strong = sample_path("scores_strong.npy")
    assert run(["evaluate", "--queries", CAPTIONS, "--videos", VIDEOS, "--scores", str(strong), "--fire", FIRE,
                "--json", str(tmp_path / "cli.json"), "--per-query", str(tmp_path / "cli.csv")]) == 0  # fmt: skip
    files = EvaluationFiles(Path(CAPTIONS), Path(VIDEOS), scores=strong, fire=Path(FIRE))
    inputs = files.read()
    result = inputs.evaluate(EvaluateSettings())
    result.write_per_query(tmp_path / "api.csv", inputs.captions)
    assert (tmp_path / "api.csv").read_bytes() == (tmp_path / "cli.csv").read_bytes()
    assert str(result.signature) == json.loads((tmp_path / "cli.json").read_text())["signature"]
    assert files.checkpoint(tmp_path / "r.json") is None  # a .npy is read whole: nothing to resume
    assert checkpoint_of(tmp_path / "r.json") == tmp_path / ".r.json.shards"
    analysed = read_inputs(CaptionsReading(), Path(CAPTIONS), Path(VIDEOS), [f"m={strong}"], Path(FIRE))
    assert np.array_equal(analysed.model[1], inputs.scores.values()) and analysed.dataset == inputs.signature_fields["fire_dataset"]


# --------------------------------------------------------------------------- the score-reading rule


def test_evaluate_and_fire_read_an_unusual_suffix_alike(tmp_path):
    """A TREC run by its suffix, anything else a .npy matrix: both commands get the same numbers."""
    captions, video_ids = read_captions(CAPTIONS), read_video_ids(VIDEOS)
    matrix = np.load(sample_path("scores_strong.npy")).astype(np.float64)
    unusual = tmp_path / "strong.scores"  # .npy bytes under another suffix (fire once read it as a TREC run)
    shutil.copyfile(sample_path("scores_strong.npy"), unusual)
    trec = tmp_path / "strong.TREC"
    write_run(trec, matrix, captions.caption_ids, video_ids)
    for path in (unusual, trec):
        assert np.array_equal(open_scores(path, captions.caption_ids, video_ids).values(), matrix)
        common = ["--queries", CAPTIONS, "--videos", VIDEOS, "--fire", FIRE, "--metrics", "C@1,C@5"]
        assert run(["evaluate", *common, "--scores", str(path), "--json", str(tmp_path / "evaluate.json")]) == 0
        assert run(["fire", "compare", *common, "--scores", f"m={path}", "--json", str(tmp_path / "compare.json")]) == 0
        evaluated = json.loads((tmp_path / "evaluate.json").read_text())["metrics"]
        compared = {row["metric"]: row["with_fire"] for row in json.loads((tmp_path / "compare.json").read_text())["rows"]}
        assert compared == pytest.approx(evaluated)


def test_the_score_source_carries_its_digest_and_source():
    captions, video_ids = read_captions(CAPTIONS), read_video_ids(VIDEOS)
    scores = open_scores(sample_path("scores_strong.npy"), captions.caption_ids, video_ids)
    assert (scores.source, scores.values().shape) == (sample_path("scores_strong.npy"), (len(captions), len(video_ids)))
    assert scores.digest == input_digest("scores", sample_path("scores_strong.npy"))  # the signature's `scores`


# --------------------------------------------------------------------------- sidecars


@pytest.mark.parametrize(
    ("output", "sidecar"),
    [
        ("syn.npy", "syn.json"),
        ("syn.npz", "syn.json"),
        ("syn.zarr", "syn.json"),
        ("syn.parquet", "syn.json"),
        ("gender.jsonl", "gender.jsonl.json"),
        ("mc_verb.tsv", "mc_verb.tsv.json"),
        ("fire.qrels", "fire.qrels.json"),
    ],
)
def test_one_sidecar_rule_keeps_the_names_users_have(output, sidecar):
    assert sidecar_path(Path("out") / output) == Path("out") / sidecar
