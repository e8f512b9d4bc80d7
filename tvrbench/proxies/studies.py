"""The studies of Wray et al. on proxy matrices (rows = videos, columns = captions, as the proxies write them).

* :func:`relevant_count_curve` — mean number of captions with S >= T per video as T varies (Fig. 4);
* :func:`gmr_bounds` — Geometric Mean Recall when captions with S_SYN > 0.8 count as equivalent:
  the best-ranked (upper bound) or worst-ranked (lower bound) equivalent item taken as ground truth (Fig. 5);
* :func:`proxy_correlation` — mean over videos of the Pearson correlation between two proxies' rows (supp. B);
* :func:`human_kit` / :func:`human_agreement` — the human-agreement study (supp. A);
* :func:`triplets` — training triplets (video, caption with S >= T, caption with S < T) (§4.3).

All of them read matrices in row blocks, so a memory-mapped ``.npy`` of any size works. The studies
with figures, run on files by :mod:`tvrbench.proxies.study_files`, return the result objects defined
here (:mod:`tvrbench.results`: JSON, signature, tables and ``figures()``, named ``stem`` or ``stem_DIRECTION``),
so ``--plots DIR`` writes them as it writes every other result's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from tvrbench.errors import InputError
from tvrbench.io.figures import pyplot
from tvrbench.results import Table, TablesOfJson, count_or_share
from tvrbench.signature import Signature

BLOCK_CELLS = 1 << 23  # cells of a matrix read at once
HUMAN_SLOTS = ("most", "q1", "median", "q3", "least")  # rank positions 0, 25%, 50%, 75%, 100% (most relevant first)


def row_blocks(matrix: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
    step = max(1, BLOCK_CELLS // max(1, matrix.shape[1]))
    for start in range(0, matrix.shape[0], step):
        rows = slice(start, min(start + step, matrix.shape[0]))
        yield rows, np.asarray(matrix[rows])


def relevant_count_curve(matrix: np.ndarray, thresholds: Sequence[float]) -> np.ndarray:
    """Mean over rows of #{j : S[i, j] >= T} for each T (compared in the matrix's own dtype).

    Thresholds are cast to the matrix's dtype first, so an IoU of exactly 7/10 stored as float32 counts at T = 0.7.
    """
    cut = np.asarray(thresholds, dtype=matrix.dtype if np.issubdtype(matrix.dtype, np.floating) else np.float64)
    order = np.argsort(cut, kind="stable")
    sorted_cut = cut[order]
    at_least = np.zeros(len(cut) + 1, dtype=np.int64)  # at_least[k] = cells with exactly k thresholds <= value
    for _, block in row_blocks(matrix):
        at_least += np.bincount(np.searchsorted(sorted_cut, block.ravel(), side="right"), minlength=len(cut) + 1)
    counts_sorted = np.cumsum(at_least[::-1])[::-1][1:]  # cells with value >= sorted_cut[k]
    counts = np.empty(len(cut), dtype=np.float64)
    counts[order] = counts_sorted
    return counts / matrix.shape[0]


def _ranks_of(scores: np.ndarray, targets: sp.csr_matrix, axis: str) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst 1-based rank (stable ties) of each query's targets; queries along ``axis``."""
    from tvrbench.evaluation.ranking import target_ranks

    targets = targets.tocsr().sorted_indices()
    row_ranks, column_ranks = target_ranks(scores, rows=targets if axis == "rows" else None, columns=targets if axis == "columns" else None)
    ranks = row_ranks if axis == "rows" else column_ranks
    starts = targets.indptr[:-1]
    has = np.diff(targets.indptr) > 0
    best = np.full(targets.shape[0], np.inf)
    worst = np.full(targets.shape[0], np.inf)
    best[has] = np.minimum.reduceat(ranks, starts[has])
    worst[has] = np.maximum.reduceat(ranks, starts[has])
    return best, worst


def geometric_mean_recall(ranks: np.ndarray, ks: Sequence[int] = (1, 5, 10)) -> float:
    recalls = [100.0 * float(np.mean(ranks <= k)) for k in ks]
    return float(np.prod(recalls) ** (1.0 / len(recalls)))


def gmr_bounds(
    scores: np.ndarray, relevance: np.ndarray, caption_video: np.ndarray, threshold: float = 0.8, ks: Sequence[int] = (1, 5, 10)
) -> dict[str, dict[str, float]]:
    """GMR as reported (own pairs only) and its upper / lower bound when items with S > threshold are equivalent.

    ``scores``: captions x videos (model scores, the evaluate orientation); ``relevance``: videos x
    captions (e.g. the video-level SYN proxy); ``caption_video[j]``: the video index of caption j.
    The reported rank is that of the ground truth (for a video with several captions, its best-ranked
    own caption, as instance-based video-to-text does). The other equivalent items are, for video i,
    the other videos' captions j with S[i, j] > threshold (video-to-text) and, for caption j, the other
    videos i with S[i, j] > threshold (text-to-video). Upper bound: the best of the ground truth's rank
    and theirs; lower bound: the worst. Ranks are positions in the full list (stable ties).
    """
    n_captions, n_videos = scores.shape
    if relevance.shape != (n_videos, n_captions):
        raise InputError(None, f"relevance has shape {relevance.shape}, expected videos x captions {(n_videos, n_captions)}")
    own = sp.csr_matrix((np.ones(n_captions), (caption_video, np.arange(n_captions))), shape=(n_videos, n_captions))
    pieces = [sp.csr_matrix(np.asarray(block) > threshold) for _, block in row_blocks(relevance)]
    above = sp.vstack(pieces).astype(np.float64).tocsr()
    others = (above - above.multiply(own)).tocsr()  # equivalent items other than the ground truth
    others.eliminate_zeros()
    result = {}
    for direction, targets_own, targets_other, axis in (("v2t", own, others, "columns"), ("t2v", own.T.tocsr(), others.T.tocsr(), "rows")):
        reported, _ = _ranks_of(scores, targets_own, axis)
        best_other, worst_other = _ranks_of(scores, targets_other, axis)
        has_other = np.isfinite(worst_other)
        result[direction] = {
            "reported": geometric_mean_recall(reported, ks),
            "upper": geometric_mean_recall(np.minimum(reported, best_other), ks),
            "lower": geometric_mean_recall(np.where(has_other, np.maximum(reported, worst_other), reported), ks),
            "queries_with_other_equivalents": float(np.mean(has_other)),
        }
    return result


def proxy_correlation(first: np.ndarray, second: np.ndarray) -> float:
    """Mean over rows (videos) of the Pearson correlation of the two rows; constant rows are left out."""
    if first.shape != second.shape:
        raise InputError(None, f"matrices differ in shape: {first.shape} and {second.shape}")
    total, counted = 0.0, 0
    for rows, a in row_blocks(first):
        a = a.astype(np.float64)
        b = np.asarray(second[rows], dtype=np.float64)
        a -= a.mean(axis=1, keepdims=True)
        b -= b.mean(axis=1, keepdims=True)
        denominator = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
        defined = denominator > 0
        total += float(((a * b).sum(axis=1)[defined] / denominator[defined]).sum())
        counted += int(defined.sum())
    return total / counted if counted else float("nan")


def human_kit(
    matrix: np.ndarray, row_ids: Sequence[str], col_ids: Sequence[str], texts: Sequence[str], own: sp.csr_matrix, n_videos: int = 100, seed: int = 0
) -> list[dict]:
    """Five captions per sampled video: most and least relevant and the quartiles of the proxy's ranking.

    Captions of the video itself are left out (their S is 1 by definition, so they would test nothing).
    Rows come back in a random order per video (``presented``), with the proxy's slot and score for scoring.
    """
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(matrix.shape[0], size=min(n_videos, matrix.shape[0]), replace=False))
    kit = []
    for video in chosen:
        row = np.asarray(matrix[video], dtype=np.float64)
        candidates = np.setdiff1d(np.arange(matrix.shape[1]), own[video].indices)
        ranked = candidates[np.argsort(-row[candidates], kind="stable")]
        last = len(ranked) - 1
        picks = [ranked[round(q * last)] for q in (0.0, 0.25, 0.5, 0.75, 1.0)]
        for presented, slot in enumerate(rng.permutation(len(picks))):
            caption = picks[slot]
            kit.append(
                {
                    "video_id": row_ids[video],
                    "presented": presented,
                    "caption_id": col_ids[caption],
                    "text": texts[caption],
                    "slot": HUMAN_SLOTS[slot],
                    "proxy_score": float(row[caption]),
                }
            )
    return kit


def human_agreement(kit: Sequence[dict], rankings: Sequence[dict]) -> dict[str, float]:
    """Supp. A: share of caption pairs all annotators order alike, and how often the proxy orders them the same way.

    ``rankings``: rows ``annotator, video_id, caption_id, rank`` (1 = most relevant). A pair is
    consistent when every annotator who ranked both put them in the same order; the proxy agrees when
    it scores the preferred caption strictly higher.
    """
    score = {(r["video_id"], r["caption_id"]): float(r["proxy_score"]) for r in kit}
    by_video: dict[str, dict[str, dict[str, int]]] = defaultdict(lambda: defaultdict(dict))
    for r in rankings:
        by_video[r["video_id"]][r["annotator"]][r["caption_id"]] = int(r["rank"])
    pairs = consistent = agree = 0
    for video, annotators in by_video.items():
        captions = sorted({c for ranks in annotators.values() for c in ranks})
        for a_index, a in enumerate(captions):
            for b in captions[a_index + 1 :]:
                orders = {np.sign(ranks[a] - ranks[b]) for ranks in annotators.values() if a in ranks and b in ranks}
                if not orders:
                    continue
                pairs += 1
                if len(orders) == 1 and 0 not in orders:
                    consistent += 1
                    preferred, other = (a, b) if orders == {-1} else (b, a)
                    if (video, preferred) not in score or (video, other) not in score:
                        raise InputError(None, f"video {video}: captions {a}, {b} are not in the kit")
                    agree += score[(video, preferred)] > score[(video, other)]
    return {
        "pairs": pairs,
        "consistent_pairs": consistent,
        "percent_consistent": 100.0 * consistent / pairs if pairs else float("nan"),
        "human_to_proxy_agreement": 100.0 * agree / consistent if consistent else float("nan"),
    }


def curve_tables(payload: dict) -> list[Table]:
    """One row per threshold, one column per proxy."""
    curves = payload["mean_relevant"]
    rows = [
        [f"{threshold:.2f}", *(count_or_share(float(curve[i])) for curve in curves.values())] for i, threshold in enumerate(payload["thresholds"])
    ]
    return [Table("Fig. 4: mean captions per video with S >= T", ["T", *curves], rows)]


def gmr_tables(payload: dict) -> list[Table]:
    """One row per model and direction: GMR as reported and its bounds (percent)."""
    rows = [
        [model, direction, *(f"{bounds[key]:.1f}" for key in ("reported", "lower", "upper")), f"{bounds['queries_with_other_equivalents']:.3f}"]
        for model, directions in payload["gmr"].items()
        for direction, bounds in directions.items()
    ]
    columns = ["model", "direction", "reported", "lower bound", "upper bound", "queries with other equivalents"]
    return [Table(f"Fig. 5: GMR when captions with S > {payload['threshold']} count as equivalent", columns, rows)]


def correlation_tables(payload: dict) -> list[Table]:
    """Every two proxies' mean per-video Pearson correlation."""
    names = payload["names"]
    rows = [[name, *(count_or_share(float(value)) for value in values)] for name, values in zip(names, payload["pearson"])]
    return [Table("Supp. B: mean per-video Pearson correlation", ["proxy", *names], rows)]


def agreement_tables(payload: dict) -> list[Table]:
    """Pairs ranked, consistently ordered pairs, and the proxy's agreement with them (percent)."""
    rows = [
        ["caption pairs ranked", count_or_share(payload["pairs"])],
        ["consistently ordered", count_or_share(payload["consistent_pairs"])],
        ["consistent (%)", f"{payload['percent_consistent']:.1f}"],
        ["proxy agrees with the annotators (%)", f"{payload['human_to_proxy_agreement']:.1f}"],
    ]
    return [Table("Supp. A: human agreement", ["figure", "value"], rows)]


@dataclass(frozen=True)
class CurveStudy(TablesOfJson):
    """Fig. 4: each proxy's mean count of captions with S >= T per video at each threshold."""

    thresholds: np.ndarray
    curves: dict[str, np.ndarray]
    signature: Signature
    tables_of = staticmethod(curve_tables)
    stem: ClassVar[str] = "proxy_curve"  # its figure's name in --plots DIR; the deprecated --plot FILE puts FILE's stem in its place

    def to_json(self) -> dict:
        curves = {name: counts.tolist() for name, counts in self.curves.items()}
        return {"thresholds": self.thresholds.round(6).tolist(), "mean_relevant": curves, "signature": str(self.signature)}

    def figures(self):
        yield self.stem, curve_figure(self.curves, self.thresholds)


@dataclass(frozen=True)
class GmrStudy(TablesOfJson):
    """Fig. 5: each model's GMR bounds (:func:`gmr_bounds`) at one threshold."""

    threshold: float
    bounds: dict[str, dict[str, dict[str, float]]]
    signature: Signature
    tables_of = staticmethod(gmr_tables)
    stem: ClassVar[str] = "proxy_gmr"

    def to_json(self) -> dict:
        return {"threshold": self.threshold, "gmr": self.bounds, "signature": str(self.signature)}

    def figures(self):
        """One figure per direction, ``STEM_t2v`` and ``STEM_v2t``."""
        for direction in ("t2v", "v2t"):
            yield f"{self.stem}_{direction}", gmr_figure(self.bounds, direction)


@dataclass(frozen=True)
class CorrelationStudy(TablesOfJson):
    """Supp. B: every two proxies' mean per-video Pearson correlation (1 on the diagonal)."""

    names: list[str]
    pearson: np.ndarray
    signature: Signature
    tables_of = staticmethod(correlation_tables)
    stem: ClassVar[str] = "proxy_correlation"

    def to_json(self) -> dict:
        return {"names": self.names, "pearson": self.pearson.round(6).tolist(), "signature": str(self.signature)}

    def figures(self):
        yield self.stem, correlation_figure(self.names, self.pearson)


@dataclass(frozen=True)
class HumanAgreement(TablesOfJson):
    """Supp. A: :func:`human_agreement` on a kit and its annotators' rankings (not ``figures``, the
    name of the results' plotting method: this study draws none)."""

    agreement: dict[str, float]
    signature: Signature
    tables_of = staticmethod(agreement_tables)

    def to_json(self) -> dict:
        return {**self.agreement, "signature": str(self.signature)}


def triplets(matrix: np.ndarray, threshold: float, per_video: int = 10, seed: int = 0) -> Iterator[tuple[int, int, int]]:
    """(video, positive caption with S >= T, negative caption with S < T), ``per_video`` sampled per video."""
    rng = np.random.default_rng(seed)
    cut = np.asarray(threshold, dtype=matrix.dtype)
    for rows, block in row_blocks(matrix):
        for offset, row in enumerate(block):
            positives = np.flatnonzero(row >= cut)
            negatives = np.flatnonzero(row < cut)
            if len(positives) == 0 or len(negatives) == 0:
                continue
            for p, n in zip(rng.choice(positives, per_video), rng.choice(negatives, per_video)):
                yield rows.start + offset, int(p), int(n)


def curve_figure(curves: dict[str, np.ndarray], thresholds: Sequence[float]):
    """Fig. 4: each proxy's mean count of relevant captions per video against T (log scale)."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(5, 3.5))
    for name, counts in curves.items():
        axis.plot(thresholds, counts, label=name)
    axis.set_yscale("log")
    axis.set_xlabel("threshold T")
    axis.set_ylabel("mean relevant captions per video")
    axis.legend()
    return figure


def correlation_figure(names: Sequence[str], values: np.ndarray):
    """Supp. B: the proxies' correlations as a heat map, each cell labelled."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(4, 3.5))
    image = axis.imshow(values, vmin=0, vmax=1, cmap="viridis")
    axis.set_xticks(range(len(names)), names)
    axis.set_yticks(range(len(names)), names)
    for i in range(len(names)):
        for j in range(len(names)):
            axis.text(j, i, f"{values[i, j]:.2f}", ha="center", va="center", color="white" if values[i, j] < 0.6 else "black")
    figure.colorbar(image)
    return figure


def gmr_figure(bounds: dict[str, dict[str, dict[str, float]]], direction: str):
    """Fig. 5 for one direction: each model's GMR as reported, its bounds as error bars."""
    plt = pyplot()
    names = list(bounds)
    reported = np.array([bounds[n][direction]["reported"] for n in names])
    lower = np.array([bounds[n][direction]["lower"] for n in names])
    upper = np.array([bounds[n][direction]["upper"] for n in names])
    figure, axis = plt.subplots(figsize=(1.2 * len(names) + 2, 3.5))
    axis.bar(names, reported, color="#8da0cb")
    axis.errorbar(names, reported, yerr=[reported - lower, upper - reported], fmt="none", ecolor="black", capsize=6)
    axis.set_ylabel(f"GMR ({direction})")
    return figure
