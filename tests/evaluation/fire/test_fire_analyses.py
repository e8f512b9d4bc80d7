"""Length, train-test overlap, ranks of positives, queue, pooling and Table 1 against plain loops."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity
from test_fire_cli import make_sample

from tvrbench.errors import InputError
from tvrbench.evaluation import Judgments, evaluate
from tvrbench.evaluation.fire.compare import comparison_rows, comparison_table, format_cell
from tvrbench.evaluation.fire.config import FireConfig
from tvrbench.evaluation.fire.length import OUTCOMES, bin_edges, caption_lengths, outcomes_by_bin, positives_by_length
from tvrbench.evaluation.fire.pooling import labels_from_other_pools, pooled_models, pooling_bias
from tvrbench.evaluation.fire.queue import build_queue, queue_records, unjudged_top_k, write_queue
from tvrbench.evaluation.fire.ranks import positive_ranks
from tvrbench.evaluation.fire.train_overlap import length_correlations, train_test_similarity
from tvrbench.io.captions import read_captions, read_video_ids
from tvrbench.io.fire import read_fire


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("analyses")
    names = make_sample(folder)["models"]
    captions, videos = read_captions(folder / "captions.csv"), read_video_ids(folder / "videos.txt")
    fire = read_fire(folder / "fire.json")
    scores = {name: np.load(folder / f"scores_{name}.npy") for name in names}
    return captions, videos, fire, scores, Judgments.build(captions, videos, fire=fire)


def test_caption_lengths_and_bins():
    texts = ["a man", "  a woman is cooking  ", "x"]
    assert caption_lengths(texts, "words").tolist() == [2, 4, 1]
    assert caption_lengths(texts, "characters").tolist() == [5, 18, 1]
    assert bin_edges(np.array([5, 18, 1]), 10).tolist() == [0, 10, 20]
    with pytest.raises(ValueError):
        caption_lengths(texts, "tokens")


def test_outcomes_by_bin_matches_loop():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 100, 500)
    a, b = rng.random(500) < 0.6, rng.random(500) < 0.4
    edges = bin_edges(values, 20)
    table = outcomes_by_bin(values, a, b, edges)
    for index in range(len(edges) - 1):
        inside = (values >= edges[index]) & ((values < edges[index + 1]) | (index == len(edges) - 2))
        expected = [np.sum(inside & a & b), np.sum(inside & a & ~b), np.sum(inside & ~a & b), np.sum(inside & ~a & ~b)]
        assert table.counts[index].tolist() == expected
    rows = table.to_json()
    assert sum(row["queries"] for row in rows) == 500
    assert all(abs(sum(row[f"{o}_share"] for o in OUTCOMES) - 1) < 1e-12 for row in rows if row["queries"])


def test_positives_by_length():
    data = positives_by_length(np.array([2, 2, 5]), np.array([3, 3, 1]))
    assert data["cells"] == [{"length": 2, "positives": 3, "queries": 2}, {"length": 5, "positives": 1, "queries": 1}]
    assert data["mean_positives_by_length"] == {"2": 3.0, "5": 1.0}


@pytest.mark.parametrize("fit_on", ["test", "both"])
def test_train_similarity_equals_dense_sklearn(fit_on):
    rng = np.random.default_rng(1)
    words = ["man", "woman", "cooking", "pasta", "guitar", "playing", "a", "the", "dog", "running"]
    train = [" ".join(rng.choice(words, rng.integers(2, 8))) for _ in range(300)]
    test = [" ".join(rng.choice(words, rng.integers(2, 8))) for _ in range(40)]
    got = train_test_similarity(test, train, ngram=5, top=10, fit_on=fit_on, block_elements=1000)
    vectorizer = TfidfVectorizer(analyzer="char", ngram_range=(5, 5)).fit(test if fit_on == "test" else test + train)
    dense = cosine_similarity(vectorizer.transform(test), vectorizer.transform(train))
    expected = np.sort(dense, axis=1)[:, -10:].mean(axis=1)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    table = length_correlations(got, test)
    assert table["words"]["spearman"]["statistic"] == pytest.approx(stats.spearmanr(got, [len(t.split()) for t in test]).statistic)
    assert table["characters"]["kendall"]["statistic"] == pytest.approx(stats.kendalltau(got, [len(t) for t in test]).statistic)


def test_positive_ranks_match_argsort(data):
    captions, videos, fire, scores, judgments = data
    matrix = scores["CLIP4CLIP"]
    found = positive_ranks(matrix, judgments, max_rank=15)
    order = np.argsort(-matrix, axis=1, kind="stable")
    rank_of = np.empty_like(order)
    rank_of[np.arange(len(order))[:, None], order] = np.arange(1, order.shape[1] + 1)
    positive, original = judgments.positive.toarray(), judgments.original.toarray()
    expected = {"original": rank_of[positive & original], "fire": rank_of[positive & ~original]}
    for source in expected:
        assert sorted(found[source].tolist()) == sorted(np.minimum(expected[source], 16).tolist())


def test_queue_lists_exactly_the_unjudged_top_k(data, tmp_path):
    captions, videos, fire, scores, judgments = data
    matrix = scores["SSB"]
    rows, columns, ranks = unjudged_top_k(matrix, judgments.judged, 10)
    judged = judgments.judged.toarray()
    top = np.argsort(-matrix, axis=1, kind="stable")[:, :10]
    expected = {(q, int(v), r + 1) for q in range(len(top)) for r, v in enumerate(top[q]) if not judged[q, v]}
    assert set(zip(rows.tolist(), columns.tolist(), ranks.tolist())) == expected
    queue = build_queue(matrix, judgments, k=10, n_queries=10, seed=0)
    assert len(queue.selected_queries) == 10 and set(queue.query_index.tolist()) <= set(queue.selected_queries.tolist())
    before = np.mean([judged[q, top[q]].mean() for q in range(len(top))])
    assert queue.judged_before == pytest.approx(before)
    after = np.mean([1.0 if q in set(queue.selected_queries.tolist()) else judged[q, top[q]].mean() for q in range(len(top))])
    assert queue.judged_after == pytest.approx(after)
    records = queue_records(queue, matrix, captions, videos, "SSB")
    write_queue(tmp_path / "q.csv", records)
    write_queue(tmp_path / "q.jsonl", records)
    assert len((tmp_path / "q.csv").read_text().splitlines()) == len(records) + 1
    assert len((tmp_path / "q.jsonl").read_text().splitlines()) == len(records)


def test_pooling_drops_only_the_models_own_pool(data):
    captions, videos, fire, scores, judgments = data
    assert pooled_models(fire) == ["CE", "CLIP4CLIP", "SSB"]
    others = labels_from_other_pools(fire, "CLIP4CLIP")
    assert all(set(m) - {"CLIP4CLIP"} for m in others.models)
    assert len(others) == sum(1 for m in fire.models if set(m) - {"CLIP4CLIP"})
    rows = pooling_bias({"CLIP4CLIP": scores["CLIP4CLIP"]}, captions, videos, fire, ["C@1", "C@10"])
    expected = evaluate(scores["CLIP4CLIP"], Judgments.build(captions, videos, fire=others), metrics=("C@1", "C@10"))
    assert rows[1]["labels"] == "others" and rows[1]["C@1"] == expected.metrics["C@1"]
    assert rows[0]["C@1"] >= rows[1]["C@1"]
    with pytest.raises(InputError, match="NEWMODEL"):
        labels_from_other_pools(fire, "NEWMODEL")


def test_compare_rows_come_from_the_engine(data):
    captions, videos, fire, scores, judgments = data
    results = {name: FireConfig().evaluate(matrix, judgments, ["C@1", "MdR"]) for name, matrix in scores.items()}
    rows = comparison_rows(results, ["C@1", "MdR"])
    direct = evaluate(scores["CE"], judgments, metrics=("C@1", "MdR"))
    ce = next(r for r in rows if r["model"] == "CE" and r["metric"] == "C@1")
    assert ce["with_fire"] == direct.metrics["C@1"] and ce["original"] == direct.original.metrics["C@1"]
    grid = comparison_table(rows)
    assert grid[0] == ["metric", *scores] and [row[0] for row in grid[1:]] == ["C@1", "MdR"]
    assert format_cell("C@1", 0.674, 0.424) == "67.4 (42.4 + 25.0)"
    assert format_cell("MdR", 2.0, 3.0) == "2.0 (3.0 − 1.0)"


def test_figures_are_byte_stable(tmp_path):
    from tvrbench.evaluation.fire.plots import positive_ranks_figure
    from tvrbench.io.figures import save_figure

    ranks = np.array([1, 1, 2, 5, 30]), np.array([3, 4, 12])
    for attempt in ("a", "b"):
        written = save_figure(positive_ranks_figure(*ranks, 20, "SAMPLE", "model"), tmp_path / attempt / "ranks")
        assert [p.suffix for p in written] == [".png", ".svg"]
    for suffix in ("png", "svg"):
        assert (tmp_path / "a" / f"ranks.{suffix}").read_bytes() == (tmp_path / "b" / f"ranks.{suffix}").read_bytes()
    assert b"rank of positive videos" in (tmp_path / "a" / "ranks.svg").read_bytes()
