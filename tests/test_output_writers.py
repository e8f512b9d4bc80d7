"""No command replaces a file it did not write (issue 38, item 4): every output names its writer
(tvrbench.io.writers), a command refuses in one line to replace what another kind of command wrote or
what nothing says who wrote, ``--overwrite`` replaces it and the old output's stale sidecar, and every
command replaces its own earlier output. Real files, real commands, the embedded sample."""

from __future__ import annotations

import csv
import inspect
import json
import shutil
from pathlib import Path

import pytest
from test_output_safety import one_line_error, snapshot

from tvrbench.cli import load_commands, run
from tvrbench.data import sample_path
from tvrbench.generators.edits import EDIT_KINDS
from tvrbench.io.writers import written_by

CAPTIONS = str(sample_path("captions.csv"))


def refused(path: Path, theirs: str, ours: str) -> str:
    return f"tvrbench: error: {path}: written by `tvrbench {theirs}`, another kind of command than `{ours}`; --overwrite replaces it"


# --------------------------------------------------------------------------- the cases (mc score and mc audit: below)


def test_mc_build_does_not_replace_a_report_and_overwrite_leaves_no_stale_sidecar(tmp_path, capsys):
    page, results = tmp_path / "report.html", tmp_path / "r.json"
    results.write_text(json.dumps({"metrics": {"C@1": 0.5}, "signature": "s"}))
    report = ["report", "--out", str(page), "--results", f"m={results}"]
    assert run(report) == 0 and written_by(page) == "report"
    build = ["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", str(page)]
    assert one_line_error(capsys, *build) == refused(page, "report", "mc build --kind random")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "report.html"]  # no TSV, no report.html.json
    assert run([*build, "--overwrite"]) == 0 and written_by(page) == "mc build --kind random" and (tmp_path / "report.html.json").is_file()
    assert one_line_error(capsys, *report) == refused(page, "mc build --kind random", "report")
    assert run([*report, "--overwrite"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "report.html"]  # the split's sidecar went with the split
    assert run(report) == 0 and written_by(page) == "report"


# --------------------------------------------------------------------------- files no command says it wrote


def test_a_file_of_your_own_is_refused_and_replaced_with_overwrite(tmp_path, capsys):
    agreement = ["fire", "agreement", "--fire", str(sample_path("fire.json")), "--json"]
    files = {"notes.json": '{"mine": true}', "empty.json": "", "page.html": '<meta name="generator" content="Hugo">'}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        line = one_line_error(capsys, *agreement, tmp_path / name)
        assert line == (
            f"tvrbench: error: {tmp_path / name}: nothing in it or beside it says which command wrote it "
            "(made elsewhere, by an earlier version, or empty); --overwrite replaces it"
        )
        assert (tmp_path / name).read_text() == text
    split = tmp_path / "split.tsv"  # an MC split whose sidecar is gone
    assert run(["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", str(split)]) == 0
    (tmp_path / "split.tsv.json").unlink()
    assert "nothing in it or beside it says" in one_line_error(capsys, "mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", split)
    (tmp_path / "notes.json.json").write_text("mine too")  # a file beside it, named as its sidecar would be, that says no writer
    for name in files:
        assert run([*agreement, str(tmp_path / name), "--overwrite"]) == 0 and written_by(tmp_path / name) == "fire agreement"
    assert (tmp_path / "notes.json.json").read_text() == "mine too"  # --overwrite removes only a sidecar of what it replaced
    assert run(["mc", "build", "--captions", CAPTIONS, "--kind", "random", "--out", str(split), "--overwrite"]) == 0


def test_an_output_on_another_outputs_sidecar_is_refused(tmp_path, capsys):
    """--per-query Q.csv names its writer in Q.csv.json, so --json there is refused before any work;
    only an option declared as another's sidecar (to-qrels' --metadata Q.qrels.json) may be one."""
    evaluate = ["evaluate", "--queries", CAPTIONS, "--videos", sample_path("videos.txt"), "--scores", sample_path("scores_strong.npy")]
    line = one_line_error(capsys, *evaluate, "--json", tmp_path / "q.csv.json", "--per-query", tmp_path / "q.csv")
    assert line.endswith("--per-query companion q.csv.json and --json are the same file; choose distinct paths") and not any(tmp_path.iterdir())


# --------------------------------------------------------------------------- every command, every output


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """The sample, two models, LSMDC-like captions with names, captions for the word-edit kinds, a tiny T5 and its settings."""
    pytest.importorskip("transformers", reason="finetune-t5 needs transformers (pip install 'tvrbench[t5]')")
    from tiny_models import build_tiny_models

    folder = tmp_path_factory.mktemp("inputs")
    for name in ("captions.csv", "videos.txt", "fire.json"):
        shutil.copy(sample_path(name), folder / name)
    for model in ("strong", "genderblind"):
        shutil.copy(sample_path(f"scores_{model}.npy"), folder / f"{model}.npy")
    (folder / "characters.csv").write_text("movie,name,gender\nM1,Jenko,M\nM1,Schmidt,M\nM1,Zach,M\nM2,Anna,F\nM2,Elsa,F\n")
    (folder / "lsmdc.csv").write_text(
        "caption_id,text,video_id\nc1,Jenko and Schmidt sit in the rear pew.,M1_00.00.01.000-00.00.02.000\n"
        "c2,Anna hugs Elsa.,M2_00.00.01.000-00.00.02.000\n"
    )
    build_tiny_models(folder / "tiny")
    (folder / "edits.csv").write_text(  # a target of every word-edit kind
        "caption_id,text,video_id\ne1,a man in a red shirt opens the door and then walks into the room,v1\ne2,a dog chases a cat on the table,v2\n"
    )
    (folder / "finetune.yaml").write_text("batch_size: 8\nmax_length: 16\ndevice: cpu\n")
    return folder


QUERIES = ["--queries", "{d}/captions.csv", "--videos", "{d}/videos.txt"]
MODELS = ["--scores", "strong={d}/strong.npy", "--scores", "genderblind={d}/genderblind.npy"]
FIRE = ["--fire", "{d}/fire.json"]
FAST = ["--resamples", "20", "--seed", "0"]
# The command as written_by names it, and a command line giving every output it can write, in an order
# where each finds the outputs it reads. Left out: the demo (its steps are these commands; tests/test_demo.py
# checks its own results.json), and the files no command is named in: figures (--plots, --plot).
CASES = [
    ("evaluate", ["evaluate", *QUERIES, "--scores", "{d}/strong.npy", *FIRE, "--json", "{o}/eval.json", "--per-query", "{o}/per_query.csv"]),
    ("proxies --proxy bow", ["proxies", "--captions", "{d}/captions.csv", "--proxy", "bow", "--level", "video", "--out", "{o}/bow.npy"]),
    ("contrast gender", ["contrast", "gender", "--captions", "{d}/captions.csv", "--lm", "ngram", "--out", "{o}/gender.jsonl"]),
    (
        "contrast id",
        ["contrast", "id", "--captions", "{d}/lsmdc.csv", "--characters", "{d}/characters.csv", "--lm", "ngram", "--out", "{o}/id.jsonl"],
    ),
    ("contrast verb", ["contrast", "verb", "--captions", "{d}/lsmdc.csv", "--lm", "ngram", "--out", "{o}/verb.jsonl"]),
    *(
        (f"contrast {kind}", ["contrast", kind, "--captions", "{d}/edits.csv", "--lm", "ngram", "--out", f"{{o}}/{kind}.jsonl"])
        for kind in EDIT_KINDS
    ),
    (
        "contrast finetune-t5",
        ["contrast", "finetune-t5", "--train-captions", "{d}/tiny/train.csv", "--model", "{d}/tiny/t5", "--config", "{d}/finetune.yaml"]
        + ["--out", "{o}/t5"],
    ),
    (  # a kit is replaced only with --overwrite, its own too (verdicts made on it would no longer match)
        "contrast review-kit",
        ["contrast", "review-kit", "--contrast", "g={o}/gender.jsonl", "--captions", "{d}/captions.csv", "--per-source", "3", "--controls", "1"]
        + ["--out", "{o}/kit", "--overwrite"],
    ),
    ("contrast refine", ["contrast", "refine", "--contrast", "{o}/gender.jsonl", "--scorer", "lm", "--lm", "ngram", "--out", "{o}/refined.jsonl"]),
    ("contrast review-score", ["contrast", "review-score", "--kit", "{o}/kit", "--verdicts", "{o}/verdicts.csv", "--json", "{o}/review.json"]),
    ("mc build --kind random", ["mc", "build", "--captions", "{d}/captions.csv", "--kind", "random", "--out", "{o}/random.tsv"]),
    (
        "mc build --kind gender",
        ["mc", "build", "--captions", "{d}/captions.csv", "--kind", "gender", "--contrast", "{o}/gender.jsonl", "--out", "{o}/g.tsv"],
    ),
    ("mc import", ["mc", "import", "--tsv", "{o}/random.tsv", "--out", "{o}/imported.tsv"]),
    ("mc score", ["mc", "score", "--mc", "{o}/g.tsv", "--scorer", "lm", "--lm", "ngram", "--json", "{o}/mc_score.json"]),
    ("mc audit", ["mc", "audit", "--mc", "{o}/g.tsv", "--lm", "ngram", "--json", "{o}/mc_audit.json"]),
    ("fire agreement", ["fire", "agreement", *FIRE, "--json", "{o}/agreement.json"]),
    ("fire compare", ["fire", "compare", *QUERIES, *MODELS, *FIRE, "--json", "{o}/compare.json", "--csv", "{o}/compare.csv"]),
    ("fire overlap", ["fire", "overlap", *QUERIES, *MODELS, "--k", "5", "--json", "{o}/overlap.json"]),
    ("fire pooling", ["fire", "pooling", *QUERIES, *MODELS, *FIRE, "--json", "{o}/pooling.json"]),
    ("fire bootstrap", ["fire", "bootstrap", *QUERIES, "--scores", "{d}/strong.npy", *FIRE, "--sizes", "20", *FAST, "--json", "{o}/bootstrap.json"]),
    ("fire paired", ["fire", "paired", *QUERIES, *MODELS, *FIRE, *FAST, "--json", "{o}/paired.json"]),
    ("fire queue", ["fire", "queue", *QUERIES, "--scores", "{d}/strong.npy", *FIRE, "--out", "{o}/queue.csv", "--json", "{o}/queue.json"]),
    ("fire length", ["fire", "length", *QUERIES, *MODELS, *FIRE, "--json", "{o}/length.json"]),
    ("fire ranks", ["fire", "ranks", *QUERIES, "--scores", "{d}/strong.npy", *FIRE, "--json", "{o}/ranks.json"]),
    (
        "fire overlap-train",
        ["fire", "overlap-train", "--queries", "{d}/captions.csv", "--train", "{d}/captions.csv", "--json", "{o}/overlap_train.json"],
    ),
    ("fire labels to-qrels", ["fire", "labels", "to-qrels", *FIRE, "--out", "{o}/fire.qrels", "--metadata", "{o}/fire.qrels.json"]),
    ("fire labels to-qrels", ["fire", "labels", "to-qrels", *FIRE, "--out", "{o}/plain.qrels"]),  # the sidecar only names the command
    (
        "fire labels to-fire",
        ["fire", "labels", "to-fire", "--qrels", "{o}/fire.qrels", "--metadata", "{o}/fire.qrels.json", "--out", "{o}/back.json"],
    ),
    ("proxy-study curve", ["proxy-study", "curve", "--matrix", "BoW={o}/bow.npy", "--json", "{o}/curve.json"]),
    ("proxy-study gmr", ["proxy-study", "gmr", "--scores", "strong={d}/strong.npy", "--relevance", "{o}/bow.npy", "--json", "{o}/gmr.json"]),
    ("proxy-study correlation", ["proxy-study", "correlation", "--matrix", "A={o}/bow.npy", "--matrix", "B={o}/bow.npy", "--json", "{o}/corr.json"]),
    (
        "proxy-study human-kit",
        ["proxy-study", "human-kit", "--matrix", "{o}/bow.npy", "--captions", "{d}/captions.csv", "--videos", "3", "--out", "{o}/kit.csv"],
    ),
    ("proxy-study human-score", ["proxy-study", "human-score", "--kit", "{o}/kit.csv", "--rankings", "{o}/rankings.csv", "--json", "{o}/human.json"]),
    ("proxy-study triplets", ["proxy-study", "triplets", "--matrix", "{o}/bow.npy", "--threshold", "0.3", "--out", "{o}/triplets.csv"]),
    ("signature diff", ["signature", "diff", "{o}/eval.json", "{o}/eval.json", "--json", "{o}/diff.json"]),
    ("report", ["report", "--out", "{o}/report.html", "--results", "e={o}/eval.json", "--analysis", "a={o}/agreement.json", "--mc", "g={o}/g.tsv"]),
    ("publish", ["publish", "--out", "{o}/dataset", "--mc", "{o}/random.tsv", "--results", "{o}/eval.json"]),
]


def verdicts(out: Path) -> None:
    """What only people make: a reader's verdicts on the review kit."""
    key = json.loads((out / "kit" / "key.json").read_text())
    with open(out / "verdicts.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([["number", "verdict"], *([entry["number"], "yes"] for entry in key["sentences"])])


def rankings(out: Path) -> None:
    """What only people make: an annotator's order of the human kit's captions."""
    with open(out / "kit.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    ranked = [["a", row["video_id"], row["caption_id"], row["presented"]] for row in rows]
    with open(out / "rankings.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([["annotator", "video_id", "caption_id", "rank"], *ranked])


PEOPLE = {"contrast review-score": verdicts, "proxy-study human-score": rankings}  # run before the command reads it, the first time


def commands(typer_app, prefix: tuple[str, ...] = ()):
    """(command as typed, its function), sub-apps included."""
    for info in typer_app.registered_commands:
        yield " ".join((*prefix, info.name or info.callback.__name__.replace("_", "-"))), info.callback
    for group in typer_app.registered_groups:
        yield from commands(group.typer_instance, (*prefix, group.name))


def told_options(command) -> dict:
    """The output options of ``command`` whose files must name their writer: flag -> its declaration."""
    parameters = inspect.signature(command).parameters
    return {parameters[name].default.param_decls[0]: spec for name, spec in command.writes.items() if spec.told}


@pytest.fixture(scope="module")
def made(inputs, tmp_path_factory) -> Path:
    """Every case run once, in order, into one folder."""
    out = tmp_path_factory.mktemp("made")
    for writer, args in CASES:
        if writer in PEOPLE:
            PEOPLE[writer](out)
        argv = [arg.format(d=inputs, o=out) for arg in args]
        assert run(argv) == 0, f"tvrbench {' '.join(argv)}"
    return out


def test_every_output_of_every_command_names_its_writer(inputs, made):
    by_path = dict(commands(load_commands()))
    with_outputs = {path for path, command in by_path.items() if command.writes} - {"demo"}
    assert {writer.partition(" --")[0] for writer, _ in CASES} == with_outputs
    exercised: dict[str, set[str]] = {path: set() for path in with_outputs}
    for writer, args in CASES:
        argv = [arg.format(d=inputs, o=made) for arg in args]
        path = writer.partition(" --")[0]
        for flag, spec in told_options(by_path[path]).items():
            if flag in argv:
                exercised[path].add(flag)
                for output in (make(Path(argv[argv.index(flag) + 1])) for make in spec.files):
                    assert written_by(output) == writer, output
    assert exercised == {path: set(told_options(by_path[path])) for path in with_outputs}
    assert (made / "eval.json").read_text().startswith('{\n  "written_by": "tvrbench evaluate",')  # read from the first bytes
    assert '<meta name="generator" content="tvrbench report">' in (made / "report.html").read_text()[:300]
    assert json.loads((made / "per_query.csv.json").read_text()) == {"written_by": "tvrbench evaluate"}
    assert written_by(made / "dataset") is None  # a folder written into, never replaced whole: publish's manifest rules it


def test_mc_score_and_mc_audit_do_not_replace_each_others_json(made, tmp_path, capsys):
    """The issue's first two cases: each replaced the other's JSON without a word."""
    for name in ("g.tsv", "g.tsv.json", "mc_audit.json", "mc_score.json"):
        shutil.copy(made / name, tmp_path / name)
    audit, score, split = tmp_path / "mc_audit.json", tmp_path / "mc_score.json", tmp_path / "g.tsv"
    before = snapshot(tmp_path)
    line = one_line_error(capsys, "mc", "score", "--mc", split, "--scorer", "lm", "--lm", "ngram", "--json", audit)
    assert line == refused(audit, "mc audit", "mc score")
    assert one_line_error(capsys, "mc", "audit", "--mc", split, "--lm", "ngram", "--json", score) == refused(score, "mc score", "mc audit")
    assert snapshot(tmp_path) == before


# The reruns that add nothing to contrast gender's and review-kit's (the same checks on the same kinds of
# files) and take most of the time: a sentence model, a T5 fine-tuning, the word-edit kinds' parser.
SLOW = ("contrast verb", "contrast finetune-t5", *(f"contrast {kind}" for kind in EDIT_KINDS))


def test_a_rerun_replaces_its_own_outputs(inputs, made):
    for writer, args in CASES:
        if writer not in SLOW:
            argv = [arg.format(d=inputs, o=made) for arg in args]
            assert run(argv) == 0, f"rerun: tvrbench {' '.join(argv)}"
    assert written_by(made / "g.tsv") == "mc build --kind gender" and written_by(made / "report.html") == "report"


def test_a_folder_written_whole_replaces_only_such_a_folder(made, tmp_path, capsys):
    """finetune-t5 and review-kit replace their whole --out: never a folder of other files, even with
    --overwrite; the other's folder only with it. Refused before any model or kit is made."""
    mine, kit, model = tmp_path / "mine", tmp_path / "kit", tmp_path / "t5"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    shutil.copytree(made / "kit", kit)
    shutil.copytree(made / "t5", model)
    before = snapshot(tmp_path)
    finetune = ["contrast", "finetune-t5", "--train-captions", CAPTIONS, "--model", tmp_path / "no-model", "--out"]
    for flags in ((), ("--overwrite",)):
        line = one_line_error(capsys, *finetune, mine, *flags)
        assert line.endswith("--out is a folder of files no tvrbench command wrote as one; choose a new or empty folder (nothing in it is removed)")
    assert one_line_error(capsys, *finetune, kit) == refused(kit, "contrast review-kit", "contrast finetune-t5")
    review = ["contrast", "review-kit", "--contrast", f"g={made / 'gender.jsonl'}", "--captions", CAPTIONS, "--out", model]
    assert one_line_error(capsys, *review) == refused(model, "contrast finetune-t5", "contrast review-kit")
    assert snapshot(tmp_path) == before
    assert run([*map(str, review), "--overwrite"]) == 0 and written_by(model) == "contrast review-kit"
