"""Proxy matrices on disk (blocks, resume, top-k, sidecar), the settings file, the CLI and the studies."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.stats
import yaml

from tvrbench.cli import main
from tvrbench.errors import InputError
from tvrbench.proxies import ProxyConfig, build_proxy, load_config, parse_captions, studies, write_proxy

ROOT = Path(__file__).resolve().parents[2]
TVRBENCH = str(Path(sys.executable).with_name("tvrbench"))
TEXTS = [
    "a man is playing a guitar",
    "a man plays guitar on stage",
    "a woman is cooking pasta",
    "someone cooks food in a kitchen",
    "a dog runs in the park",
    "dogs are running on grass",
    "a man is playing a guitar",
    "cars race on a track",
]
VIDEOS = ["v0", "v0", "v1", "v1", "v2", "v2", "v3", "v4"]


def write_captions(path: Path, texts=TEXTS, videos=VIDEOS) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["caption_id", "text", "video_id"])
        writer.writerows((f"c{i}", t, v) for i, (t, v) in enumerate(zip(texts, videos)))
    return path


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Parse caches of these tests go to a private folder (WordNet stays where it is prepared)."""
    from tvrbench.resources import wordnet

    wordnet()  # prepare WordNet in the user cache first
    monkeypatch.setattr("tvrbench.proxies.parsing.cache_dir", lambda: tmp_path_factory.getbasetemp() / "cache")


# --------------------------------------------------------------------------- parse cache


def test_parse_cache_parses_each_text_once_and_survives_a_cut_line(tmp_path_factory):
    first = parse_captions(TEXTS)
    assert first.parsed_now in (0, len(set(TEXTS)))
    again = parse_captions(TEXTS + ["a brand new caption about violins"])
    assert again.parsed_now == 1 and again.pos[:8] == first.pos
    cache_files = list((tmp_path_factory.getbasetemp() / "cache" / "parses").glob("*.jsonl"))
    assert len(cache_files) == 1
    with open(cache_files[0], "a", encoding="utf-8") as handle:
        handle.write('{"key": "cut sho')  # an interrupted write
    assert parse_captions(TEXTS).parsed_now == 0
    assert parse_captions(["one more text"]).parsed_now == 1


def test_bow_needs_no_parse_and_equals_bow_on_parsed_captions(tmp_path_factory, monkeypatch):
    """BoW splits the text on spaces: from raw texts it parses nothing, with the same values and signature."""
    parsed = parse_captions(TEXTS)
    monkeypatch.setattr("tvrbench.proxies.matrix.parse_captions", lambda *a, **k: pytest.fail("BoW parsed the captions"))
    for level in ("caption", "video"):
        from_texts = build_proxy(TEXTS, "bow", level, video_ids=VIDEOS)
        from_parsed = build_proxy(parsed, "bow", level, video_ids=VIDEOS)
        assert np.array_equal(from_texts.compute(np.float64), from_parsed.compute(np.float64))
        assert str(from_texts.signature) == str(from_parsed.signature)
        assert f"pipeline:{parsed.pipeline}" in str(from_texts.signature)


# --------------------------------------------------------------------------- writing


def test_sidecar_names_rows_columns_and_settings(tmp_path):
    matrix = build_proxy(TEXTS, "bow", "video", caption_ids=[f"c{i}" for i in range(8)], video_ids=VIDEOS)
    full = matrix.compute(np.float64)
    out = write_proxy(matrix, tmp_path / "M.npy", "float64")
    np.testing.assert_array_equal(np.load(out, allow_pickle=False), full)
    sidecar = json.loads((tmp_path / "M.json").read_text())
    assert sidecar["rows"] == "videos" and sidecar["row_ids"] == ["v0", "v1", "v2", "v3", "v4"]
    assert sidecar["col_ids"] == [f"c{i}" for i in range(8)] and sidecar["col_videos"] == VIDEOS
    assert sidecar["shape"] == [5, 8] and "proxy:bow" in sidecar["signature"] and "video_words:>=0.25" in sidecar["signature"]
    assert full[0, 0] == full[0, 1] == 1.0 and full[0, 6] == full[0, 6]  # own captions are 1


def output_bytes(out: Path) -> dict[str, bytes]:
    """An output's bytes (every file of a folder output: a Zarr store, Parquet partitions) and its sidecar's."""
    found = {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()} if out.is_dir() else {"": out.read_bytes()}
    return {**found, "sidecar": out.with_suffix(".json").read_bytes()}


@pytest.mark.parametrize("suffix, options", [(".npy", {}), (".zarr", {}), (".parquet", {"threshold": 0.1}), (".parquet", {"top_k": 2})])
def test_an_interrupted_write_resumes_with_only_the_missing_blocks(tmp_path, suffix, options):
    matrix = build_proxy(TEXTS, "bow", "video", caption_ids=[f"c{i}" for i in range(8)], video_ids=VIDEOS)
    tiny = 2**-12  # MiB: one row of 8 columns per block, 5 blocks
    reference = write_proxy(matrix, tmp_path / f"reference{suffix}", block_mb=tiny, **options)

    class Interrupted(Exception):
        pass

    computed = []
    real_block = matrix.kernel.block

    def failing_block(rows):
        computed.append(rows.start)
        if len(computed) == 3:
            raise Interrupted
        return real_block(rows)

    out = tmp_path / f"M{suffix}"
    matrix.kernel.block = failing_block
    with pytest.raises(Interrupted):
        write_proxy(matrix, out, block_mb=tiny, **options)
    assert not out.exists() and out.with_name(out.name + ".partial").exists()
    computed.clear()
    matrix.kernel.block = lambda rows: computed.append(rows.start) or real_block(rows)
    write_proxy(matrix, out, block_mb=tiny, **options)
    assert computed == [2, 3, 4]
    assert output_bytes(out) == output_bytes(reference)
    assert sorted(path.name for path in tmp_path.iterdir()) == sorted([out.name, "M.json", reference.name, "reference.json"])


def test_parquet_cells_are_the_selection_and_feed_publish(tmp_path):
    """``--top-k`` keeps each row's k largest (ties: lower column), ``--threshold`` the values >= T; the
    Parquet form holds the same cells as the .npz form, and publish reads it as it reads the .npz."""
    from tvrbench.proxies import read_proxy_cells
    from tvrbench.publish import relevance_artifact

    matrix = build_proxy(TEXTS, "bow", "video", caption_ids=[f"c{i}" for i in range(8)], video_ids=VIDEOS)
    dense = matrix.compute(np.float32)
    for options in ({"top_k": 3}, {"threshold": 0.1}, {"top_k": 3, "threshold": 0.1}):
        cells, sidecar = read_proxy_cells(write_proxy(matrix, tmp_path / "M.parquet", block_mb=2**-11, **options))
        kept = write_proxy(matrix, tmp_path / "M.npz", **options)
        assert np.array_equal(cells.toarray(), sp.load_npz(kept).toarray())
        for row in range(dense.shape[0]):
            ranked = np.argsort(-dense[row], kind="stable")[: options.get("top_k", dense.shape[1])]
            wanted = [c for c in sorted(ranked) if dense[row, c] >= options.get("threshold", 0.0)]
            assert list(cells[row].indices) == wanted and np.array_equal(cells[row].data, dense[row, wanted])
    assert relevance_artifact(tmp_path / "M.parquet").table.equals(relevance_artifact(tmp_path / "M.npz").table)
    assert sidecar["storage"] == "top-3 per row, values >= 0.1 (Parquet, one file per 2 rows: query_id, item_id, score)"


def test_block_size_does_not_change_values():
    matrix = build_proxy(TEXTS, "pos")
    assert np.array_equal(matrix.compute(np.float64, block_mb=2**-12), matrix.compute(np.float64))


def test_top_k_keeps_the_largest_values_per_row(tmp_path):
    matrix = build_proxy(TEXTS, "bow")
    dense = matrix.compute(np.float32)
    write_proxy(matrix, tmp_path / "M.npz", top_k=3)
    sparse = sp.load_npz(tmp_path / "M.npz")
    assert sparse.shape == dense.shape and np.all(np.diff(sparse.indptr) == 3)
    for i in range(len(TEXTS)):
        assert np.array_equal(np.sort(sparse[i].data)[::-1], np.sort(dense[i])[::-1][:3])
    with pytest.raises(InputError, match="npz"):
        write_proxy(matrix, tmp_path / "M.npy", top_k=3)


# --------------------------------------------------------------------------- settings


def test_yaml_is_a_copy_of_the_defaults():
    assert yaml.safe_load((ROOT / "configs" / "proxies.yaml").read_text()) == ProxyConfig().model_dump()


def test_bad_settings_name_the_file(tmp_path):
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text("spacy_modle: en_core_web_sm\n")
    with pytest.raises(InputError, match="unknown.yaml"):
        load_config(unknown)
    weights = tmp_path / "weights.yaml"
    weights.write_text("pos_weights: {VERB: 0.7, NOUN: 0.7}\n")
    with pytest.raises(InputError, match="sum to 1"):
        load_config(weights)


def test_pos_weights_are_applied():
    default = build_proxy(TEXTS, "pos").compute(np.float64)
    verbs_only = build_proxy(TEXTS, "pos", config=ProxyConfig(pos_weights={"VERB": 1.0, "NOUN": 0.0})).compute(np.float64)
    nouns_only = build_proxy(TEXTS, "pos", config=ProxyConfig(pos_weights={"VERB": 0.0, "NOUN": 1.0})).compute(np.float64)
    off = ~np.eye(len(TEXTS), dtype=bool)
    np.testing.assert_allclose(default[off], 0.5 * verbs_only[off] + 0.5 * nouns_only[off], atol=1e-15)


def test_class_csv_replaces_wordnet_senses(tmp_path):
    classes = tmp_path / "verb_classes.csv"
    classes.write_text("id,key,instances\n0,put,\"['put', 'place']\"\n1,take,\"['take', 'grab']\"\n")
    texts = ["a man puts a cup on the table", "a woman places a cup on the table", "a man grabs a cup"]
    parsed = parse_captions(texts)
    assert parsed.pos[0][2] == parsed.pos[1][2] == "VERB"
    verbs_only = {"VERB": 1.0, "NOUN": 0.0}
    with_classes = build_proxy(parsed, "syn", config=ProxyConfig(pos_weights=verbs_only, classes={"VERB": str(classes)}))
    got = with_classes.compute(np.float64)
    assert got[0, 1] == 1.0 and got[0, 2] == 0.0
    assert "classes:VERB=verb_classes.csv" in str(with_classes.signature)
    bad = tmp_path / "bad.csv"
    bad.write_text("id,key,instances\n0,put,\"__import__('os')\"\n")
    with pytest.raises(InputError, match="list of words"):
        build_proxy(parsed, "syn", config=ProxyConfig(classes={"VERB": str(bad)}))


# --------------------------------------------------------------------------- command line


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TVRBENCH, *args], capture_output=True, text=True)


def test_cli_contract_line(tmp_path, capsys):
    captions = write_captions(tmp_path / "C.csv")
    assert main_exit("proxies", "--captions", str(captions), "--proxy", "bow", "--out", str(tmp_path / "M.npy")) == 0
    matrix = np.load(tmp_path / "M.npy", allow_pickle=False)
    assert matrix.dtype == np.float32 and matrix.shape == (8, 8)
    expected = build_proxy(TEXTS, "bow").compute(np.float32)
    assert np.array_equal(matrix, expected)
    sidecar = json.loads((tmp_path / "M.json").read_text())
    assert sidecar["signature"] == capsys.readouterr().out.strip() and sidecar["rows"] == "captions"


def test_cli_video_level_feeds_evaluate(tmp_path):
    texts, videos = TEXTS[:6], ["v0", "v1", "v2", "v3", "v4", "v5"]
    captions = write_captions(tmp_path / "C.csv", texts, videos)
    assert main_exit("proxies", "--captions", str(captions), "--proxy", "pos", "--level", "video", "--out", str(tmp_path / "R.npy")) == 0
    scores = np.random.default_rng(0).normal(size=(6, 6))
    np.save(tmp_path / "S.npy", scores)
    (tmp_path / "videos.txt").write_text("\n".join(videos) + "\n")
    completed = run(
        "evaluate",
        "--scores",
        str(tmp_path / "S.npy"),
        "--queries",
        str(captions),
        "--videos",
        str(tmp_path / "videos.txt"),
        "--relevance",
        str(tmp_path / "R.npy"),
        "--json",
        str(tmp_path / "E.json"),
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads((tmp_path / "E.json").read_text())
    assert "nDCG" in result["metrics"] and "proxy" in result["signature"]


def test_cli_parquet_relevance_feeds_evaluate_as_the_dense_matrix(tmp_path):
    """``--threshold 0`` keeps every cell: evaluate reads the Parquet folder as the .npy it equals."""
    texts, videos = TEXTS[:6], ["v0", "v1", "v2", "v3", "v4", "v5"]
    captions = write_captions(tmp_path / "C.csv", texts, videos)
    np.save(tmp_path / "S.npy", np.random.default_rng(0).normal(size=(6, 6)))
    (tmp_path / "videos.txt").write_text("\n".join(videos) + "\n")
    metrics = {}
    for out, options in (("R.npy", []), ("P.parquet", ["--threshold", "0"])):
        assert main_exit("proxies", "--captions", str(captions), "--proxy", "bow", "--level", "video", "--out", str(tmp_path / out), *options) == 0
        completed = run(
            "evaluate",
            "--scores",
            str(tmp_path / "S.npy"),
            "--queries",
            str(captions),
            "--videos",
            str(tmp_path / "videos.txt"),
            "--relevance",
            str(tmp_path / out),
            "--json",
            str(tmp_path / f"{out}.json"),
        )
        assert completed.returncode == 0, completed.stderr
        metrics[out] = json.loads((tmp_path / f"{out}.json").read_text())["metrics"]
    assert metrics["P.parquet"] == metrics["R.npy"] and "nDCG" in metrics["R.npy"]


def main_exit(*args: str) -> int:
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    return exit_info.value.code


def test_cli_bad_input_is_one_line_without_traceback(tmp_path):
    captions = tmp_path / "C.csv"
    captions.write_bytes("caption_id,text,video_id\nc0,un café noir,v0\n".encode("latin-1"))
    completed = run("proxies", "--captions", str(captions), "--proxy", "bow", "--out", str(tmp_path / "M.npy"))
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1 and "Traceback" not in completed.stderr
    assert "C.csv" in completed.stderr and "UTF-8" in completed.stderr
    assert not (tmp_path / "M.npy").exists()


@pytest.mark.parametrize(
    "option, message",
    [
        (("--spacy-model", "xx_missing_pipeline"), "spacy download xx_missing_pipeline"),
        (("--dtype", "int8"), "dtype"),
        (("--level", "video", "--proxy", "visual"), "features"),
        (("--threshold", "0.5"), ".npz or FILE.parquet"),
        (("--threshold", "1.5"), "not a similarity in [0, 1]"),
        (("--workers", "1", "--scheduler", "tcp://127.0.0.1:9"), "give one"),
    ],
)
def test_cli_bad_options_are_one_clear_line(tmp_path, capsys, option, message):
    captions = write_captions(tmp_path / "C.csv")
    proxy = [] if "--proxy" in option else ["--proxy", "pos"]
    assert main_exit("proxies", "--captions", str(captions), *proxy, "--out", str(tmp_path / "M.npy"), *option) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and error[0].startswith("tvrbench: error:") and message in error[0]
    assert not (tmp_path / "M.npy").exists()


# --------------------------------------------------------------------------- studies


def random_matrix(shape, seed=0, dtype=np.float32):
    rng = np.random.default_rng(seed)
    return (rng.integers(0, 11, size=shape) / 10).astype(dtype)  # IoU-like values, exact tenths


def test_relevant_count_curve_matches_counting_loop():
    matrix = random_matrix((30, 50))
    thresholds = np.linspace(0, 1, 11)
    expected = [np.mean([(row >= np.float32(t)).sum() for row in matrix]) for t in thresholds]
    np.testing.assert_allclose(studies.relevant_count_curve(matrix, thresholds), expected)
    # 0.7 stored as float32 still counts at T = 0.7 (a float64 comparison would miss it)
    assert studies.relevant_count_curve(np.full((1, 1), 0.7, np.float32), [0.7])[0] == 1.0


def loop_ranks(scores_row, targets):
    order = np.argsort(-scores_row, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(1, len(order) + 1)
    return [position[t] for t in targets]


def test_gmr_bounds_match_a_ranking_loop():
    rng = np.random.default_rng(1)
    n_videos, caption_video = 12, np.repeat(np.arange(12), 2)
    scores = rng.normal(size=(24, n_videos))
    relevance = random_matrix((n_videos, 24), seed=2, dtype=np.float64)
    result = studies.gmr_bounds(scores, relevance, caption_video, threshold=0.8)

    def gmr(ranks):
        return np.prod([100 * np.mean(np.asarray(ranks) <= k) for k in (1, 5, 10)]) ** (1 / 3)

    v2t = {"reported": [], "upper": [], "lower": []}
    for video in range(n_videos):
        own = list(np.flatnonzero(caption_video == video))
        reported = min(loop_ranks(scores[:, video], own))
        others = [j for j in np.flatnonzero(relevance[video] > 0.8) if caption_video[j] != video]
        ranks = [reported] + loop_ranks(scores[:, video], others)
        v2t["reported"].append(reported)
        v2t["upper"].append(min(ranks))
        v2t["lower"].append(max(ranks))
    t2v = {"reported": [], "upper": [], "lower": []}
    for caption in range(24):
        reported = loop_ranks(scores[caption], [caption_video[caption]])[0]
        others = [i for i in np.flatnonzero(relevance[:, caption] > 0.8) if i != caption_video[caption]]
        ranks = [reported] + loop_ranks(scores[caption], others)
        t2v["reported"].append(reported)
        t2v["upper"].append(min(ranks))
        t2v["lower"].append(max(ranks))
    for direction, expected in (("v2t", v2t), ("t2v", t2v)):
        for bound, ranks in expected.items():
            assert result[direction][bound] == pytest.approx(gmr(ranks), abs=1e-12)
    for direction in ("t2v", "v2t"):
        assert result[direction]["lower"] <= result[direction]["reported"] <= result[direction]["upper"]
    assert result["t2v"]["lower"] < result["t2v"]["upper"]


def test_proxy_correlation_is_mean_rowwise_pearson():
    first, second = random_matrix((20, 40), 3), random_matrix((20, 40), 4)
    second[:10] = first[:10] * 0.5 + second[:10] * 0.5
    first[5] = 0.3  # a constant row is left out
    expected = np.mean([scipy.stats.pearsonr(a.astype(np.float64), b.astype(np.float64))[0] for i, (a, b) in enumerate(zip(first, second)) if i != 5])
    assert studies.proxy_correlation(first, second) == pytest.approx(expected, abs=1e-9)


def test_human_kit_and_agreement():
    matrix = random_matrix((6, 30), 5, np.float64)
    own = sp.csr_matrix((np.ones(30), (np.repeat(np.arange(6), 5), np.arange(30))), shape=(6, 30))
    kit = studies.human_kit(matrix, [f"v{i}" for i in range(6)], [f"c{j}" for j in range(30)], [f"t{j}" for j in range(30)], own, 4, seed=1)
    assert len(kit) == 20
    for video in {row["video_id"] for row in kit}:
        rows = sorted((r for r in kit if r["video_id"] == video), key=lambda r: studies.HUMAN_SLOTS.index(r["slot"]))
        scores = [r["proxy_score"] for r in rows]
        assert scores == sorted(scores, reverse=True)
        v = int(video[1:])
        others = np.delete(matrix[v], own[v].indices)
        assert scores[0] == others.max() and scores[-1] == others.min()
        assert all(int(r["caption_id"][1:]) not in own[v].indices for r in rows)
    # Two annotators who order every kit the way the proxy does, and a third who reverses one video.
    rankings = []
    for annotator in ("a", "b", "c"):
        for video in sorted({r["video_id"] for r in kit}):
            rows = sorted((r for r in kit if r["video_id"] == video), key=lambda r: (-r["proxy_score"], r["caption_id"]))
            if annotator == "c" and video == rows[0]["video_id"] == kit[0]["video_id"]:
                rows = rows[::-1]
            rankings += [{"annotator": annotator, "video_id": video, "caption_id": r["caption_id"], "rank": k + 1} for k, r in enumerate(rows)]
    result = studies.human_agreement(kit, rankings)
    assert result["pairs"] == 40 and result["consistent_pairs"] == 30
    distinct_scores = all(len({r["proxy_score"] for r in kit if r["video_id"] == v}) == 5 for v in {r["video_id"] for r in kit})
    if distinct_scores:
        assert result["human_to_proxy_agreement"] == 100.0


def test_triplets_respect_the_threshold():
    matrix = random_matrix((10, 25), 6)
    found = list(studies.triplets(matrix, 0.6, per_video=4, seed=0))
    assert len(found) == 40
    assert all(matrix[v, p] >= np.float32(0.6) > matrix[v, n] for v, p, n in found)


def test_study_commands_write_plots_and_json(tmp_path):
    texts, videos = TEXTS[:6], ["v0", "v1", "v2", "v3", "v4", "v5"]
    captions = write_captions(tmp_path / "C.csv", texts, videos)
    for proxy in ("bow", "pos"):
        assert main_exit("proxies", "--captions", str(captions), "--proxy", proxy, "--level", "video", "--out", str(tmp_path / f"{proxy}.npy")) == 0
    matrices = [f"BoW={tmp_path / 'bow.npy'}", f"PoS={tmp_path / 'pos.npy'}"]
    assert (
        main_exit(
            "proxy-study",
            "curve",
            *sum((["--matrix", m] for m in matrices), []),
            "--plots",
            str(tmp_path / "plots"),
            "--json",
            str(tmp_path / "curve.json"),
        )
        == 0
    )
    assert (tmp_path / "plots" / "proxy_curve.svg").read_text().lstrip().startswith("<?xml")
    assert set(json.loads((tmp_path / "curve.json").read_text())["mean_relevant"]) == {"BoW", "PoS"}
    assert main_exit("proxy-study", "correlation", *sum((["--matrix", m] for m in matrices), []), "--plots", str(tmp_path / "plots")) == 0
    assert (tmp_path / "plots" / "proxy_correlation.png").read_bytes()[:4] == b"\x89PNG"
    np.save(tmp_path / "S.npy", np.random.default_rng(0).normal(size=(6, 6)))
    assert (
        main_exit(
            "proxy-study",
            "gmr",
            "--scores",
            f"model={tmp_path / 'S.npy'}",
            "--relevance",
            str(tmp_path / "pos.npy"),
            "--plots",
            str(tmp_path / "plots"),
        )
        == 0
    )
    assert {p.name for p in (tmp_path / "plots").iterdir()} == {
        f"proxy_{stem}.{fmt}" for stem in ("curve", "correlation", "gmr_t2v", "gmr_v2t") for fmt in ("png", "svg")
    }
    assert main_exit("proxy-study", "triplets", "--matrix", str(tmp_path / "pos.npy"), "--threshold", "0.3", "--out", str(tmp_path / "t.csv")) == 0
    assert (tmp_path / "t.csv").read_text().startswith("video_id,positive_caption_id,negative_caption_id")
    assert (
        main_exit(
            "proxy-study",
            "human-kit",
            "--matrix",
            str(tmp_path / "pos.npy"),
            "--captions",
            str(captions),
            "--videos",
            "3",
            "--out",
            str(tmp_path / "kit.csv"),
        )
        == 0
    )
    with open(tmp_path / "kit.csv", encoding="utf-8") as handle:
        kit = list(csv.DictReader(handle))
    assert len(kit) == 15 and {r["slot"] for r in kit} == set(studies.HUMAN_SLOTS)
    with open(tmp_path / "rankings.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["annotator", "video_id", "caption_id", "rank"])
        for annotator in ("a", "b"):
            for row in kit:
                writer.writerow([annotator, row["video_id"], row["caption_id"], studies.HUMAN_SLOTS.index(row["slot"]) + 1])
    assert (
        main_exit(
            "proxy-study",
            "human-score",
            "--kit",
            str(tmp_path / "kit.csv"),
            "--rankings",
            str(tmp_path / "rankings.csv"),
            "--json",
            str(tmp_path / "human.json"),
        )
        == 0
    )
    human = json.loads((tmp_path / "human.json").read_text())
    assert human["pairs"] == human["consistent_pairs"] == 30


def test_deprecated_plot_file_still_writes_the_study_figure_as_that_file(tmp_path, capsys):
    """``--plot FILE`` (before ``--plots DIR``) keeps working for one release, hidden, saying once what replaces it."""
    captions = write_captions(tmp_path / "C.csv", TEXTS[:6], ["v0", "v1", "v2", "v3", "v4", "v5"])
    assert main_exit("proxies", "--captions", str(captions), "--proxy", "bow", "--level", "video", "--out", str(tmp_path / "bow.npy")) == 0
    capsys.readouterr()
    assert main_exit("proxy-study", "curve", "--matrix", f"BoW={tmp_path / 'bow.npy'}", "--plot", str(tmp_path / "fig4.svg")) == 0
    assert [line for line in capsys.readouterr().err.splitlines() if "--plot FILE" in line] == [
        "tvrbench: --plot FILE is deprecated and goes in the next release; use --plots DIR (PNG and SVG)"
    ]
    assert (tmp_path / "fig4.svg").read_text().lstrip().startswith("<?xml") and not (tmp_path / "fig4.png").exists()
    np.save(tmp_path / "S.npy", np.random.default_rng(0).normal(size=(6, 6)))
    gmr = ("proxy-study", "gmr", "--scores", f"model={tmp_path / 'S.npy'}", "--relevance", str(tmp_path / "bow.npy"))
    assert main_exit(*gmr, "--plot", str(tmp_path / "fig5.png")) == 0
    assert (tmp_path / "fig5_t2v.png").is_file() and (tmp_path / "fig5_v2t.png").is_file()
    assert main_exit(*gmr, "--plot", str(tmp_path / "fig5.pdf")) == 2
    assert "plots are written as .png or .svg" in capsys.readouterr().err and not list(tmp_path.glob("fig5*.pdf"))
    assert main_exit("proxy-study", "curve", "--help") == 0
    assert "--plot " not in capsys.readouterr().out
