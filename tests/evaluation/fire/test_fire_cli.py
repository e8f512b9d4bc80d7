"""``tvrbench fire ...`` end to end on the embedded sample (or, until it is there, a synthetic one)."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tvrbench.cli import main

SAMPLE = Path(__file__).resolve().parents[3] / "tvrbench" / "data" / "sample"
SUBJECTS = ("man", "woman", "dog", "child", "chef")
VERBS = ("running", "cooking", "singing", "dancing")
OBJECTS = ("in a kitchen", "on a stage", "outside")


def make_sample(folder: Path, n_videos: int = 60, seed: int = 0) -> dict:
    """Captions, videos, three models' scores and FIRE labels pooled from their top 10.

    A video shows (subject, verb, place); a caption names 1-3 of its video's attributes and is
    relevant to every video that shows all of them, so short captions have many positives.
    """
    rng = np.random.default_rng(seed)
    videos = [(rng.integers(len(SUBJECTS)), rng.integers(len(VERBS)), rng.integers(len(OBJECTS))) for _ in range(n_videos)]
    video_ids = [f"video{7000 + i}" for i in range(n_videos)]
    captions, mentioned = [], []
    for v, (s, b, o) in enumerate(videos):
        for detail in (1, 3):
            text = f"a {SUBJECTS[s]}" + (f" is {VERBS[b]} {OBJECTS[o]}" if detail == 3 else "")
            if text not in [c[1] for c in captions if c[1] == text]:
                captions.append((f"c{len(captions)}", text, video_ids[v]))
                mentioned.append((s, b if detail == 3 else None, o if detail == 3 else None))
    truth = np.array([[all(m is None or m == attr for m, attr in zip(men, video)) for video in videos] for men in mentioned], dtype=float)
    own = np.zeros_like(truth)
    own[np.arange(len(captions)), [video_ids.index(c[2]) for c in captions]] = 1
    shared_noise = rng.normal(size=truth.shape)
    models = {
        "CLIP4CLIP": truth + own * 0.3 + rng.normal(scale=0.5, size=truth.shape),
        "SSB": 0.6 * truth + own * 0.8 + shared_noise,
        "CE": 0.6 * truth + own * 0.8 + shared_noise + rng.normal(scale=0.3, size=truth.shape),
    }
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "captions.csv", "w", newline="") as out:
        writer = csv.writer(out)
        writer.writerow(["caption_id", "text", "video_id"])
        writer.writerows(captions)
    (folder / "videos.txt").write_text("\n".join(video_ids) + "\n")
    pools: dict[tuple[int, int], list[str]] = {}
    for name, matrix in models.items():
        np.save(folder / f"scores_{name}.npy", matrix.astype(np.float32))
        for row, top in enumerate(np.argsort(-matrix, axis=1, kind="stable")[:, :10]):
            for column in top:
                if own[row, column] == 0:
                    pools.setdefault((row, int(column)), []).append(name)
    annotations, disagreements = [], []
    for index, ((row, column), names) in enumerate(sorted(pools.items())):
        label = "relevant" if truth[row, column] else "irrelevant"
        votes = [label] * (2 if index % 7 == 0 else 1)
        if index % 23 == 0:
            votes = ["relevant", "irrelevant"]
        record = {
            "annotator_ids": list(range(len(votes))),
            "video_id": video_ids[column],
            "query": captions[row][1],
            "annotator_labels": votes,
            "response_ids": [index * 2 + i for i in range(len(votes))],
            "queue_ids": [1] * len(votes),
            "models": names,
            "dataset": "MSRVTT",
        }
        if len(set(votes)) > 1:
            disagreements.append(record)
        else:
            annotations.append({**record, "label": label})
    (folder / "fire.json").write_text(
        json.dumps({"annotations": annotations, "disagreements": disagreements, "source_ds": "synthetic", "datasets": ["MSRVTT"]})
    )
    return {"models": list(models)}


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    if (SAMPLE / "fire.json").exists() and (SAMPLE / "captions.csv").exists():
        return SAMPLE
    folder = tmp_path_factory.mktemp("sample")
    make_sample(folder)
    return folder


def models_of(sample: Path) -> list[str]:
    return sorted(p.stem.removeprefix("scores_") for p in sample.glob("scores_*.npy"))


def common(sample: Path) -> list[str]:
    return ["--queries", str(sample / "captions.csv"), "--videos", str(sample / "videos.txt")]


def scores_args(sample: Path, names=None) -> list[str]:
    args = []
    for name in names or models_of(sample):
        args += ["--scores", f"{name}={sample / f'scores_{name}.npy'}"]
    return args


def run(args: list[str]) -> None:
    with pytest.raises(SystemExit) as finished:
        main(["fire", *args])
    assert finished.value.code in (0, None)


def test_every_subcommand_writes_table_json_and_plots(sample, tmp_path, capsys):
    models = models_of(sample)
    fire = ["--fire", str(sample / "fire.json")]
    run(["agreement", *fire, "--json", str(tmp_path / "agreement.json")])
    run(["compare", *common(sample), *scores_args(sample), *fire, "--json", str(tmp_path / "compare.json"), "--csv", str(tmp_path / "compare.csv")])
    run(["overlap", *common(sample), *scores_args(sample), "--json", str(tmp_path / "overlap.json")])
    run(["pooling", *common(sample), *scores_args(sample), *fire, "--json", str(tmp_path / "pooling.json")])
    run(
        [
            "bootstrap",
            *common(sample),
            "--scores",
            str(sample / f"scores_{models[0]}.npy"),
            *fire,
            "--sizes",
            "20,50",
            "--resamples",
            "300",
            "--metrics",
            "C@1",
            "--seed",
            "1",
            "--json",
            str(tmp_path / "bootstrap.json"),
            "--plots",
            str(tmp_path / "plots"),
        ]
    )
    run(["paired", *common(sample), *scores_args(sample, models[:2]), *fire, "--resamples", "300", "--json", str(tmp_path / "paired.json")])
    run(
        [
            "length",
            *common(sample),
            *scores_args(sample, models[:2]),
            *fire,
            "--json",
            str(tmp_path / "length.json"),
            "--plots",
            str(tmp_path / "plots"),
        ]
    )
    run(
        [
            "ranks",
            *common(sample),
            "--scores",
            str(sample / f"scores_{models[0]}.npy"),
            *fire,
            "--max-rank",
            "20",
            "--json",
            str(tmp_path / "ranks.json"),
            "--plots",
            str(tmp_path / "plots"),
        ]
    )
    run(
        [
            "overlap-train",
            "--queries",
            str(sample / "captions.csv"),
            "--train",
            str(sample / "captions.csv"),
            "--videos",
            str(sample / "videos.txt"),
            *scores_args(sample, models[:2]),
            *fire,
            "--json",
            str(tmp_path / "train.json"),
            "--plots",
            str(tmp_path / "plots"),
        ]
    )
    run(
        [
            "queue",
            *common(sample),
            "--scores",
            str(sample / f"scores_{models[0]}.npy"),
            *fire,
            "--out",
            str(tmp_path / "queue.csv"),
            "--effect-size",
            "0.2",
            "--json",
            str(tmp_path / "queue.json"),
        ]
    )
    printed = capsys.readouterr().out
    for title in ("Table 2", "Table 1", "Table 3", "Table 4", "§4.3", "Paired", "Figure 3", "Appendix G", "Table 7", "Figure 8", "Annotation queue"):
        assert title in printed
    for name in ("agreement", "compare", "overlap", "pooling", "bootstrap", "paired", "length", "ranks", "train", "queue"):
        assert json.loads((tmp_path / f"{name}.json").read_text())
    figures = {p.name for p in (tmp_path / "plots").iterdir()}
    dataset = json.loads((sample / "fire.json").read_text())["annotations"][0]["dataset"]
    for stem in (
        f"fig2_positives_vs_length_{dataset}",
        "fig3_outcomes_by_length_fire",
        "fig8_outcomes_by_train_similarity_original",
        "appG_positive_ranks_" + models[0],
        f"fig4_bootstrap_{models[0]}_Cat1",
    ):
        assert {f"{stem}.png", f"{stem}.svg"} <= figures


def test_bootstrap_json_contract_and_stable(sample, tmp_path):
    outputs = []
    for attempt in range(2):
        out = tmp_path / f"boot{attempt}.json"
        run(
            [
                "bootstrap",
                *common(sample),
                "--scores",
                str(sample / f"scores_{models_of(sample)[0]}.npy"),
                "--fire",
                str(sample / "fire.json"),
                "--sizes",
                "10,40",
                "--resamples",
                "200",
                "--seed",
                "3",
                "--json",
                str(out),
            ]
        )
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]
    payload = json.loads(outputs[0])
    assert payload.pop("written_by") == "tvrbench fire bootstrap" and set(payload) == {"C@1", "C@5", "C@10"}
    assert set(payload["C@1"]) == {"10", "40"}
    assert isinstance(payload["C@1"]["10"]["p95"], float)


def test_agreement_json_contract(sample, tmp_path):
    out = tmp_path / "a.json"
    run(["agreement", "--fire", str(sample / "fire.json"), "--json", str(out)])
    payload = json.loads(out.read_text())
    assert payload.pop("written_by") == "tvrbench fire agreement"  # then a dataset's figures under its name
    for stats in payload.values():
        assert {"pairs", "labels", "relevant", "irrelevant", "disagreements", "agreement", "alpha"} <= set(stats)
        assert stats["relevant"] + stats["irrelevant"] + stats["disagreements"] == stats["pairs"]


def error_line(args: list[str], capsys) -> str:
    """Run in-process; the command must exit 2 with one line on stderr."""
    with pytest.raises(SystemExit) as finished:
        main(["fire", *args])
    assert finished.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tvrbench: error: "), lines
    return lines[0]


def test_bad_input_is_one_line_exit_2(sample, tmp_path, capsys):
    fire_text = json.loads((sample / "fire.json").read_text())
    bad_label = json.loads(json.dumps(fire_text))
    bad_label["annotations"][0]["label"] = "maybe"
    (tmp_path / "bad_label.json").write_text(json.dumps(bad_label))
    assert "maybe" in error_line(["agreement", "--fire", str(tmp_path / "bad_label.json")], capsys)
    missing = json.loads(json.dumps(fire_text))
    del missing["annotations"][0]["video_id"]
    (tmp_path / "missing.json").write_text(json.dumps(missing))
    assert "video_id" in error_line(["agreement", "--fire", str(tmp_path / "missing.json")], capsys)
    assert "NOPE" in error_line(["agreement", "--fire", str(sample / "fire.json"), "--dataset", "NOPE"], capsys)
    model = models_of(sample)[0]
    line = error_line(
        ["pooling", *common(sample), "--scores", f"NEWMODEL={sample / f'scores_{model}.npy'}", "--fire", str(sample / "fire.json")], capsys
    )
    assert "NEWMODEL" in line and "pooled" in line
    assert "C@0" in error_line(
        ["bootstrap", *common(sample), "--scores", str(sample / f"scores_{model}.npy"), "--metrics", "C@0", "--resamples", "10"], capsys
    )
    assert "rbo_p" in error_line(["overlap", *common(sample), *scores_args(sample), "--p", "1.5"], capsys)


def test_bad_input_in_a_real_process_has_no_traceback(sample):
    executable = str(Path(sys.executable).with_name("tvrbench"))
    completed = subprocess.run(
        [executable, "fire", "agreement", "--fire", str(sample / "fire.json"), "--dataset", "NOPE"], capture_output=True, text=True
    )
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1 and "Traceback" not in completed.stderr


def test_a_trec_run_scores_like_its_matrix(sample, tmp_path):
    from tvrbench.io.captions import read_captions, read_video_ids
    from tvrbench.io.trec import write_run

    model = models_of(sample)[0]
    captions, videos = read_captions(sample / "captions.csv"), read_video_ids(sample / "videos.txt")
    write_run(tmp_path / "model.run", np.load(sample / f"scores_{model}.npy"), captions.caption_ids, videos)
    run(
        [
            "compare",
            *common(sample),
            "--scores",
            f"matrix={sample / f'scores_{model}.npy'}",
            "--scores",
            f"run={tmp_path / 'model.run'}",
            "--fire",
            str(sample / "fire.json"),
            "--json",
            str(tmp_path / "c.json"),
        ]
    )
    rows = json.loads((tmp_path / "c.json").read_text())["rows"]
    by_model = {(r["model"], r["metric"]): (r["with_fire"], r["original"]) for r in rows}
    for metric in ("C@1", "C@5", "C@10", "AP"):
        assert by_model["matrix", metric] == pytest.approx(by_model["run", metric], abs=1e-12)
