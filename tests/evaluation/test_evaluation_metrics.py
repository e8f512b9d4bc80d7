"""The engine against plain, obviously-correct loops (SPEC §2), the SPEC test vector and the peers."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from scipy.stats import rankdata

from tvrbench.evaluation import rank_top_k, target_ranks
from tvrbench.evaluation.choices import AP_VARIANTS, FUSION_POLICIES, NDCG_VARIANTS, TIE_RULES, listed
from tvrbench.evaluation.engine import evaluate
from tvrbench.evaluation.labels import Judgments
from tvrbench.evaluation.tables import evaluation_tables

METRICS = ["C@1", "C@5", "C@10", "R@5", "P@5", "AP", "MdR", "MnR", "GMR", "nDCG", "Judged@10"]


# --------------------------------------------------------------------------- reference loops


def reference_order(scores_row, gains_row, ties):
    """The full ranking of one query: a list of column indices, best first."""
    columns = range(len(scores_row))
    if ties == "optimistic":
        return sorted(columns, key=lambda c: (-scores_row[c], -gains_row[c], c))
    if ties == "pessimistic":
        return sorted(columns, key=lambda c: (-scores_row[c], gains_row[c], c))
    return sorted(columns, key=lambda c: (-scores_row[c], c))


def reference_ranks(scores_row, gains_row, ties):
    if ties == "average":
        return list(rankdata([-s for s in scores_row], method="average"))
    ranks = [0.0] * len(scores_row)
    for position, column in enumerate(reference_order(scores_row, gains_row, ties), start=1):
        ranks[column] = float(position)
    return ranks


def reference_query(scores_row, positive_row, judged_row, ties, ap="standard"):
    """Every binary metric of one query, from its ranks, with plain loops."""
    gains = [1.0 if p else 0.0 for p in positive_row]
    ranks = reference_ranks(scores_row, gains, ties)
    positive_ranks = sorted(ranks[c] for c in range(len(ranks)) if positive_row[c])
    n_pos = len(positive_ranks)
    out = {}
    for k in (1, 5, 10):
        out[f"C@{k}"] = float(any(r <= k for r in positive_ranks))
    out["R@5"] = sum(r <= 5 for r in positive_ranks) / n_pos
    out["P@5"] = sum(r <= 5 for r in positive_ranks) / 5
    if ap == "standard":
        out["AP"] = sum((i + 1) / r for i, r in enumerate(positive_ranks)) / n_pos
    else:
        top = [r for r in positive_ranks if r <= 20]
        out["AP"] = sum((i + 1) / r for i, r in enumerate(top)) / len(top) if top else 0.0
    out["first"] = positive_ranks[0]
    out["Judged@10"] = sum(1 for c in range(len(ranks)) if judged_row[c] and ranks[c] <= 10) / 10
    return out


def reference_ndcg(scores_row, gains_row, ties, variant):
    """nDCG of one query: walk the ranking position by position (Wray et al. eq. 2)."""
    if not any(g > 0 for g in gains_row):
        return math.nan
    gain = (lambda s: 2**s - 1) if variant == "paper" else (lambda s: s)
    k = sum(1 for g in gains_row if g > 0) if variant != "full" else len(gains_row)
    ranks = reference_ranks(scores_row, gains_row, ties)
    dcg = sum(gain(gains_row[c]) / math.log2(ranks[c] + 1) for c in range(len(ranks)) if gains_row[c] > 0 and ranks[c] <= k)
    ideal = sorted(gains_row, reverse=True)
    idcg = sum(gain(g) / math.log2(j + 2) for j, g in enumerate(ideal[:k]) if g > 0)
    return dcg / idcg


def reference_metrics(scores, positive, judged, ties, ap="standard", ndcg="epic", relevance=None):
    per_query = [reference_query(scores[q], positive[q], judged[q], ties, ap) for q in range(scores.shape[0])]
    out = {name: float(np.mean([row[name] for row in per_query])) for name in per_query[0] if name != "first"}
    firsts = [row["first"] for row in per_query]
    out["MdR"] = float(np.median(firsts))
    out["MnR"] = float(np.mean(firsts))
    out["GMR"] = (out["C@1"] * out["C@5"] * out["C@10"]) ** (1 / 3)
    gains = positive.astype(float) if relevance is None else relevance
    t2v = [reference_ndcg(scores[q], gains[q], ties, ndcg) for q in range(scores.shape[0])]
    v2t = [reference_ndcg(scores[:, v], gains[:, v], ties, ndcg) for v in range(scores.shape[1])]
    out["nDCG_t2v"] = float(np.nanmean(t2v))
    out["nDCG_v2t"] = float(np.nanmean(v2t))
    out["nDCG"] = (out["nDCG_t2v"] + out["nDCG_v2t"]) / 2
    return out


def random_case(seed, n_queries=40, n_videos=30, levels=6, dtype=np.float64):
    """Scores with many ties, several positives per query (its own video plus extras), some judged."""
    rng = np.random.default_rng(seed)
    scores = rng.integers(0, levels, size=(n_queries, n_videos)).astype(dtype)
    positive = rng.random((n_queries, n_videos)) < 0.08
    positive[np.arange(n_queries), rng.integers(0, n_videos, n_queries)] = True
    judged = positive | (rng.random((n_queries, n_videos)) < 0.15)
    return scores, positive, judged


# --------------------------------------------------------------------------- tests


def test_spec_ndcg_test_vector():
    scores = np.array([[1.0, 0.7, 0.4, 0.0], [0.3, 0.9, 0.6, 0.1], [0.2, 0.5, 0.8, 0.4]])
    relevance = np.array([[1.0, 0.5, 0.25, 0.0], [0.0, 1.0, 0.4, 0.0], [0.5, 0.3, 1.0, 0.0]])
    judgments = Judgments.from_matrices(np.zeros_like(scores, dtype=bool))
    result = evaluate(scores, judgments, metrics=["nDCG_t2v"], relevance=relevance, fusion="none")
    assert result.metrics["nDCG_t2v"] == pytest.approx(0.9371789900735429, abs=1e-15)


@pytest.mark.parametrize("ties", ["stable", "optimistic", "pessimistic", "average"])
@pytest.mark.parametrize("seed", range(4))
def test_binary_metrics_equal_reference_loops(ties, seed):
    scores, positive, judged = random_case(seed)
    judgments = Judgments.from_matrices(positive, irrelevant=judged & ~positive)
    result = evaluate(scores, judgments, metrics=METRICS, ties=ties)
    expected = reference_metrics(scores, positive, judged, ties)
    for name, value in expected.items():
        assert result.metrics[name] == pytest.approx(value, abs=1e-12), name


@pytest.mark.parametrize("ap", ["standard", "fire"])
def test_fire_ap_uses_only_the_top_20(ap):
    scores, positive, judged = random_case(7, n_queries=30, n_videos=60, levels=1000)
    result = evaluate(scores, Judgments.from_matrices(positive), metrics=["AP"], ap=ap)
    expected = reference_metrics(scores, positive, positive, "stable", ap=ap)["AP"]
    name = {"standard": "AP", "fire": "AP(variant=fire)"}[ap]  # a variant other than the default is in the name
    assert list(result.metrics) == [name] and result.metrics[name] == pytest.approx(expected, abs=1e-12)
    assert result.signature.fields["ap"] == ap


@pytest.mark.parametrize("variant", ["epic", "paper", "full"])
@pytest.mark.parametrize("ties", ["stable", "optimistic", "pessimistic", "average"])
def test_graded_ndcg_equals_reference_loop(variant, ties):
    scores, positive, _ = random_case(11, levels=4)
    rng = np.random.default_rng(3)
    relevance = np.where(rng.random(scores.shape) < 0.3, rng.choice([0.25, 0.5, 1.0], scores.shape), 0.0)
    judgments = Judgments.from_matrices(np.zeros_like(positive))
    result = evaluate(scores, judgments, metrics=["nDCG"], ndcg=variant, ties=ties, relevance=relevance, fusion="none")
    expected = reference_metrics(scores, positive, positive, ties, ndcg=variant, relevance=relevance)
    suffix = "" if variant == "epic" else f"(variant={variant})"
    assert list(result.metrics) == [f"{name}{suffix}" for name in ("nDCG", "nDCG_t2v", "nDCG_v2t")]
    for name in ("nDCG", "nDCG_t2v", "nDCG_v2t"):
        assert result.metrics[name + suffix] == pytest.approx(expected[name], abs=1e-12), name


def test_relevance_fusion_overrides_proxy_with_labels():
    scores, positive, judged = random_case(5, levels=50)
    irrelevant = judged & ~positive
    proxy = np.random.default_rng(5).random(scores.shape) * 0.8
    judgments = Judgments.from_matrices(positive, irrelevant=irrelevant)
    fused = proxy.copy()
    fused[positive] = 1.0
    fused[irrelevant] = 0.0
    result = evaluate(scores, judgments, metrics=["nDCG"], relevance=proxy, fusion="judged")
    plain = evaluate(scores, Judgments.from_matrices(np.zeros_like(positive)), metrics=["nDCG"], relevance=fused, fusion="none")
    assert result.metrics["nDCG"] == pytest.approx(plain.metrics["nDCG"], abs=1e-12)
    assert result.signature.fields["fusion"] == "judged" and result.signature.fields["relevance"] == "proxy"


def test_ranks_from_rows_and_columns_in_one_pass_match_separate_passes():
    scores, positive, _ = random_case(9, n_queries=70, n_videos=130, levels=3, dtype=np.float32)
    from scipy import sparse

    rows = sparse.csr_matrix(positive.astype(float))
    columns = sparse.csr_matrix(positive.T.astype(float))
    both = target_ranks(scores, rows, columns)
    assert np.array_equal(both[0], target_ranks(scores, rows=rows)[0])
    assert np.array_equal(both[1], target_ranks(np.ascontiguousarray(scores.T), rows=columns)[0])


def test_non_finite_scores_are_rejected():
    scores, positive, _ = random_case(1)
    for bad in (np.nan, np.inf, -np.inf):
        broken = scores.copy()
        broken[3, 4] = bad
        with pytest.raises(ValueError, match="NaN or infinite"):
            evaluate(broken, Judgments.from_matrices(positive), metrics=["C@1"])


def test_non_finite_scores_of_labelled_cells_are_rejected():
    """A NaN or infinite label score still leaves every line's targets a permutation (no write
    out of bounds) and the whole evaluation reports it."""
    from tvrbench.evaluation.ranking import _prepare_columns

    scores = np.array([[np.nan], [1.0], [np.nan], [2.0], [0.5]])
    order = np.full(5, -1, np.int32)
    _prepare_columns(scores, np.array([0, 5]), np.arange(5), np.empty(5), np.empty(5), order)
    assert sorted(order) == list(range(5))
    assert list(order[3:]) == [0, 2]  # NaN last, in their own order, as argsort does

    scores, positive, _ = random_case(2)
    row, column = np.argwhere(positive)[0]
    for bad in (np.nan, np.inf, -np.inf):
        broken = scores.copy()
        broken[row, column] = bad
        with pytest.raises(ValueError, match="NaN or infinite"):
            evaluate(broken, Judgments.from_matrices(positive), metrics=["C@1", "nDCG"])


def test_rank_top_k_is_the_stable_order():
    scores, _, _ = random_case(2, levels=3)
    top = rank_top_k(scores, 7)
    for q in range(scores.shape[0]):
        assert list(top[q]) == reference_order(scores[q], [0.0] * scores.shape[1], "stable")[:7]


def test_extra_labels_report_original_and_delta():
    scores, positive, judged = random_case(4)
    original = np.zeros_like(positive)
    original[np.arange(positive.shape[0]), positive.argmax(1)] = True
    judgments = Judgments.from_matrices(positive, irrelevant=judged & ~positive, original=original)
    result = evaluate(scores, judgments, metrics=["C@1", "AP"])
    alone = evaluate(scores, Judgments.from_matrices(original), metrics=["C@1", "AP"])
    assert result.original.metrics == alone.metrics
    payload = result.to_json()
    assert set(payload) == {"metrics", "signature", "n_queries", "original", "delta"}
    assert payload["delta"]["C@1"] == pytest.approx(result.metrics["C@1"] - alone.metrics["C@1"])
    assert result.metrics["C@1"] >= alone.metrics["C@1"]


# --------------------------------------------------------------------------- peers


def _peer_inputs(seed):
    """Tie-free scores (the peers break ties by document id, we by column) and graded labels."""
    rng = np.random.default_rng(seed)
    scores = rng.random((50, 80))
    grades = np.where(rng.random(scores.shape) < 0.1, rng.integers(1, 4, scores.shape), 0)
    grades[np.arange(50), rng.integers(0, 80, 50)] = 3
    qrels = {f"q{q}": {f"d{d}": int(grades[q, d]) for d in range(80) if grades[q, d] > 0} for q in range(50)}
    run = {f"q{q}": {f"d{d}": float(scores[q, d]) for d in range(80)} for q in range(50)}
    return scores, grades, qrels, run


def test_ap_recall_precision_success_equal_ir_measures():
    ir_measures = pytest.importorskip("ir_measures")
    scores, grades, qrels, run = _peer_inputs(0)
    result = evaluate(scores, Judgments.from_matrices(grades > 0), metrics=["AP", "R@5", "P@5", "C@5", "C@10"])
    peer = ir_measures.calc_aggregate(
        [ir_measures.AP, ir_measures.R @ 5, ir_measures.P @ 5, ir_measures.Success @ 5, ir_measures.Success @ 10], qrels, run
    )
    assert result.metrics["AP"] == pytest.approx(peer[ir_measures.AP], abs=1e-12)
    assert result.metrics["R@5"] == pytest.approx(peer[ir_measures.R @ 5], abs=1e-12)
    assert result.metrics["P@5"] == pytest.approx(peer[ir_measures.P @ 5], abs=1e-12)
    assert result.metrics["C@5"] == pytest.approx(peer[ir_measures.Success @ 5], abs=1e-12)
    assert result.metrics["C@10"] == pytest.approx(peer[ir_measures.Success @ 10], abs=1e-12)


def test_full_ndcg_equals_ir_measures_and_ranx_on_graded_labels():
    ir_measures = pytest.importorskip("ir_measures")
    ranx = pytest.importorskip("ranx")
    scores, grades, qrels, run = _peer_inputs(1)
    judgments = Judgments.from_matrices(np.zeros_like(grades, dtype=bool))
    # nDCG with gain s is scale-free: grades 1..3 as relevance 1/3..1 give the peers' value.
    result = evaluate(scores, judgments, metrics=["nDCG_t2v"], ndcg="full", relevance=grades / 3, fusion="none")
    trec = ir_measures.calc_aggregate([ir_measures.nDCG], qrels, run)[ir_measures.nDCG]
    ranx_value = ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg")
    assert result.metrics["nDCG_t2v(variant=full)"] == pytest.approx(trec, abs=1e-12)
    assert result.metrics["nDCG_t2v(variant=full)"] == pytest.approx(ranx_value, abs=1e-12)


def test_epic_ndcg_equals_ranx_at_the_number_of_relevant_items():
    """With the same number k of relevant videos per query, `epic` is nDCG@k of the IR tools."""
    ranx = pytest.importorskip("ranx")
    rng = np.random.default_rng(2)
    scores = rng.random((40, 60))
    grades = np.zeros((40, 60), dtype=int)
    for q in range(40):
        grades[q, rng.choice(60, 4, replace=False)] = rng.integers(1, 4, 4)
    qrels = {f"q{q}": {f"d{d}": int(grades[q, d]) for d in range(60) if grades[q, d]} for q in range(40)}
    run = {f"q{q}": {f"d{d}": float(scores[q, d]) for d in range(60)} for q in range(40)}
    judgments = Judgments.from_matrices(np.zeros_like(grades, dtype=bool))
    result = evaluate(scores, judgments, metrics=["nDCG_t2v"], relevance=grades / 3, fusion="none")
    assert result.metrics["nDCG_t2v"] == pytest.approx(ranx.evaluate(ranx.Qrels(qrels), ranx.Run(run), "ndcg@4"), abs=1e-12)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ties", ["stable", "optimistic", "pessimistic", "average"])
def test_target_ranks_equal_sort_based_ranks(ties, dtype):
    """Rows with few labels (counted) and many labels (screened), columns too, with and without ties."""
    from scipy import sparse

    from tvrbench.evaluation.ranking import _COUNTED_ROW_TARGETS

    rng = np.random.default_rng(13)
    most_labels = 0
    for trial in range(12):
        n_rows, n_columns = rng.integers(1, 25), rng.integers(1, 150)
        levels = rng.choice([3, 50, 10**9])
        scores = rng.integers(0, levels, size=(n_rows, n_columns)).astype(dtype)
        density = rng.choice([0.02, 0.1, 0.6])
        rows = sparse.random(n_rows, n_columns, density=density, random_state=trial, format="csr")
        columns = sparse.random(n_columns, n_rows, density=density, random_state=trial + 50, format="csr")
        rows.data = rng.integers(0, 3, rows.nnz).astype(float)
        columns.data = rng.integers(0, 3, columns.nnz).astype(float)
        row_ranks, column_ranks = target_ranks(scores, rows, columns, ties)
        expected_rows = [reference_ranks(scores[q], rows[q].toarray().ravel(), ties)[c] for q in range(n_rows) for c in rows[q].indices]
        expected_columns = [
            reference_ranks(scores[:, v], columns[v].toarray().ravel(), ties)[r] for v in range(n_columns) for r in columns[v].indices
        ]
        assert np.array_equal(row_ranks, expected_rows)
        assert np.array_equal(column_ranks, expected_columns)
        most_labels = max(most_labels, np.diff(rows.indptr).max(initial=0))
    assert most_labels > _COUNTED_ROW_TARGETS  # the screened rows were tested too


@pytest.mark.parametrize("ties", ["stable", "optimistic", "pessimistic", "average"])
def test_columns_top_only_ranks_are_exact_within_the_cutoff(ties):
    """Ranks ≤ m (m = the column's targets) are exact, the others m + 1: on small matrices with
    many ties, and on taller ones where the first screen comes from a sample of the rows."""
    from scipy import sparse

    rng = np.random.default_rng(17)
    for trial in range(40):
        tall = trial % 2 == 0
        n_rows, n_columns = rng.integers(500, 3000) if tall else rng.integers(1, 40), rng.integers(1, 30)
        levels = rng.choice([3, 10**6])
        scores = rng.integers(0, levels, size=(n_rows, n_columns)).astype(rng.choice([np.float32, np.float64]))
        density = rng.uniform(0.001, 0.02) if tall else rng.uniform(0.02, 0.9)
        columns = sparse.random(n_columns, n_rows, density=density, random_state=trial, format="csr")
        columns.data = rng.integers(1, 3, columns.nnz).astype(float)
        targets = columns.T.tocoo()
        scores[targets.row, targets.col] += rng.integers(0, 2, targets.nnz) * (levels // 2)  # some score high
        _, exact = target_ranks(scores, columns=columns, ties=ties)
        _, top = target_ranks(scores, columns=columns, ties=ties, columns_top_only=True)
        cutoff = np.repeat(np.diff(columns.indptr), np.diff(columns.indptr))
        assert np.array_equal(top, np.where(exact <= cutoff, exact, cutoff + 1))


@pytest.mark.parametrize("ties", ["stable", "average"])
def test_column_cells_visited_over_many_batches_keep_ranks_exact(ties):
    """More cells reach their column's screen than one batch of visits holds, so the pass visits
    them over several batches (on each thread): the ranks stay those of a sort, with and without
    the cutoff."""
    from scipy import sparse

    from tvrbench.evaluation.ranking import _HIT_BATCH

    rng = np.random.default_rng(23)
    n_rows, n_columns = 3000, 40
    scores = rng.integers(0, 200, size=(n_rows, n_columns)).astype(np.float32)
    columns = sparse.random(n_columns, n_rows, density=0.01, random_state=4, format="csr")
    columns.data[:] = 1.0
    lowest_target = [scores[columns[v].indices, v].min() for v in range(n_columns)]
    assert (scores >= lowest_target).sum() > 4 * _HIT_BATCH
    _, exact = target_ranks(scores, columns=columns, ties=ties)
    expected = [reference_ranks(scores[:, v], columns[v].toarray().ravel(), ties)[r] for v in range(n_columns) for r in columns[v].indices]
    assert np.array_equal(exact, expected)
    _, top = target_ranks(scores, columns=columns, ties=ties, columns_top_only=True)
    cutoff = np.repeat(np.diff(columns.indptr), np.diff(columns.indptr))
    assert np.array_equal(top, np.where(exact <= cutoff, exact, cutoff + 1))


def test_median_rank_by_counting_equals_numpy_median():
    from tvrbench.evaluation.metrics import _median_rank

    rng = np.random.default_rng(5)
    for size in (1, 2, 7, 10, 1001):
        whole = rng.integers(1, 40, size).astype(np.float64)
        for ranks in (whole, whole / 2 + 0.5, rng.random(size) * 9 + 1):  # whole, half, other numbers
            assert _median_rank(ranks) == np.median(ranks)
    assert math.isnan(_median_rank(np.array([1.0, np.nan, 3.0])))


def test_each_choice_lists_the_engines_default_first_and_an_unknown_one_is_refused():
    defaults = inspect.signature(evaluate).parameters
    for parameter, choices in (("ties", TIE_RULES), ("ap", AP_VARIANTS), ("ndcg", NDCG_VARIANTS), ("fusion", FUSION_POLICIES)):
        assert defaults[parameter].default == choices[0], parameter
    assert listed(("a", "b", "c")) == "a | b | c" and listed(("a", "b"), ", ") == "a, b"
    with pytest.raises(ValueError, match=", ".join(FUSION_POLICIES)):
        evaluate(np.eye(2), Judgments.from_matrices(np.eye(2, dtype=bool)), fusion="loud")


def test_judgments_from_matrices_merge_the_original_pairs_and_let_a_positive_win():
    original = np.eye(3, dtype=bool)
    positive = np.zeros((3, 3), bool)
    positive[0, 1] = True
    irrelevant = np.zeros((3, 3), bool)
    irrelevant[0, 1] = irrelevant[1, 1] = irrelevant[2, 0] = True  # (0, 1) positive too, (1, 1) an original pair
    judgments = Judgments.from_matrices(positive, irrelevant, original)
    expected_positive = original | positive
    assert (judgments.positive.toarray() == expected_positive).all()
    assert (judgments.irrelevant.toarray() == (irrelevant & ~expected_positive)).all()
    assert (judgments.judged.toarray() == (expected_positive | irrelevant)).all()
    assert judgments.sources == ["original", "labels"] and judgments.has_extra_labels
    assert (judgments.gains().toarray() == expected_positive).all()  # gain 1 on positives, 0 on the judged rest
    only = judgments.original_only()
    assert (only.positive.toarray() == original).all() and only.irrelevant.nnz == 0 and not only.has_extra_labels
    assert Judgments.from_matrices(original).sources == ["original"]


def test_the_table_of_an_evaluation_shows_all_labels_with_the_original_and_the_difference():
    assert evaluation_tables({"metrics": {"C@1": 0.5, "MdR": 2.0}})[0].rows == [["C@1", "0.5000"], ["MdR", "2.0000"]]
    scores = np.array([[0.9, 0.8, 0.1], [0.2, 0.7, 0.9], [0.3, 0.6, 0.5]])
    extra = np.zeros((3, 3), bool)
    extra[1, 2] = True  # query 1 ranks video 2 first: relevant once the extra label counts
    result = evaluate(scores, Judgments.from_matrices(np.eye(3, dtype=bool) | extra, original=np.eye(3, dtype=bool)), ["C@1"])
    assert result.metrics["C@1"] == pytest.approx(2 / 3) and result.original.metrics["C@1"] == pytest.approx(1 / 3)
    (table,) = evaluation_tables(result.to_json())
    assert table.columns == ["metric", "all labels (original + delta)"]
    assert table.rows == [["C@1", f"{2 / 3:.4f} ({1 / 3:.4f} +{1 / 3:.4f})"]]
