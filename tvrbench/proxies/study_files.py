"""The proxy studies on files, as ``tvrbench proxy-study`` runs them: each reads the matrices (with
their sidecars) and the other files it is given, checks that they belong together, and calls
:mod:`tvrbench.proxies.studies`. Every mismatch is an :class:`~tvrbench.errors.InputError`.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.io.captions import Captions
from tvrbench.io.csv_tables import read_csv
from tvrbench.io.files import string_list
from tvrbench.io.relevance import open_relevance
from tvrbench.io.scores import open_scores
from tvrbench.proxies.studies import (
    CorrelationStudy,
    CurveStudy,
    GmrStudy,
    HumanAgreement,
    gmr_bounds,
    human_agreement,
    human_kit,
    proxy_correlation,
    relevant_count_curve,
    triplets,
)
from tvrbench.proxies.video import VideoGroups
from tvrbench.results import analysis_signature
from tvrbench.signature import Signature, text_digest


def _signature(study: str, files: dict[str, Path | list[Path]], fields: dict) -> Signature:
    """``analysis:proxy-STUDY``, each input's digest (the one pinning rule), then the settings."""
    return analysis_signature(f"proxy-{study}", files, fields)


def curve_study(matrices: dict[str, Path], steps: int) -> CurveStudy:
    """Fig. 4: ``steps`` thresholds evenly spaced in [0, 1] and each proxy's mean count of captions with S >= T."""
    thresholds = np.linspace(0.0, 1.0, steps)
    curves = {name: relevant_count_curve(open_relevance(path, require_sidecar=True).dense(), thresholds) for name, path in matrices.items()}
    return CurveStudy(thresholds, curves, _signature("curve", {"relevance": list(matrices.values())}, {"names": ",".join(matrices), "steps": steps}))


def gmr_study(scores: dict[str, Path], relevance: Path, threshold: float) -> GmrStudy:
    """Fig. 5: each model's GMR bounds on a video-level proxy (its rows and columns name the scores' columns and rows)."""
    proxy = open_relevance(relevance, require_sidecar=True)
    matrix, sidecar = proxy.dense(), proxy.sidecar
    if sidecar.get("rows") != "videos":
        raise InputError(relevance, "needs a video-level matrix (tvrbench proxies --level video)")
    caption_video = _caption_video(sidecar, {video: i for i, video in enumerate(sidecar["row_ids"])}, relevance)
    bounds = {
        name: gmr_bounds(open_scores(path, sidecar["col_ids"], sidecar["row_ids"]).values(), matrix, caption_video, threshold)
        for name, path in scores.items()
    }
    files = {"relevance": relevance, "scores": list(scores.values())}
    return GmrStudy(threshold, bounds, _signature("gmr", files, {"models": ",".join(scores), "threshold": threshold}))


def _caption_video(sidecar: dict, row_index: dict[str, int], source: Path) -> np.ndarray:
    """The row (video) of each column's caption, from the sidecar's ``col_videos``."""
    if sidecar.get("col_videos") is None:
        raise InputError(source, "sidecar lacks col_videos (the video of each caption); rebuild with this version")
    owners = string_list(sidecar, "col_videos", source, len(sidecar["col_ids"]))
    if not set(owners) <= row_index.keys():
        raise InputError(source, "sidecar's col_videos name videos that are not its rows")
    return np.asarray([row_index[v] for v in owners], dtype=np.int64)


def correlation_study(matrices: dict[str, Path]) -> CorrelationStudy:
    """Supp. B: the mean per-video Pearson correlation of every two proxies (in the order given), 1 on the diagonal."""
    loaded = [open_relevance(path, require_sidecar=True).dense() for path in matrices.values()]
    values = np.eye(len(loaded))
    for i in range(len(loaded)):
        for j in range(i + 1, len(loaded)):
            values[i, j] = values[j, i] = proxy_correlation(loaded[i], loaded[j])
    return CorrelationStudy(list(matrices), values, _signature("correlation", {"relevance": list(matrices.values())}, {"names": ",".join(matrices)}))


def human_score_study(kit: Path, rankings: Path) -> HumanAgreement:
    """Supp. A: the annotators' agreement on a kit from :func:`human_kit_study` and the proxy's with them."""
    agreement = human_agreement(
        read_csv(kit, ("video_id", "caption_id", "proxy_score"), {"proxy_score": float}),
        read_csv(rankings, ("annotator", "video_id", "caption_id", "rank"), {"rank": int}),
    )
    return HumanAgreement(agreement, _signature("human-score", {"kit": kit, "rankings": rankings}, {}))


def human_kit_study(matrix_path: Path, captions: Captions, captions_path: Path, videos: int, seed: int) -> list[dict]:
    """Supp. A: the annotators' kit from a video-level proxy and the captions file it was built from."""
    proxy = open_relevance(matrix_path, require_sidecar=True)
    matrix, sidecar = proxy.dense(), proxy.sidecar
    if captions.caption_ids != sidecar["col_ids"]:
        raise InputError(captions_path, f"caption ids differ from the columns of {matrix_path}")
    # The kit shows these texts as the ones the scores were computed on: the signature's caption digest must match.
    try:
        built_from = Signature.parse(str(sidecar.get("signature", ""))).fields.get("captions")
    except ValueError as error:
        raise InputError(matrix_path, f"its sidecar's signature cannot be read: {error}") from None
    if built_from != f"{len(captions.texts)}:{text_digest(captions.texts)}":
        raise InputError(captions_path, f"caption texts differ from those {matrix_path} was built from")
    groups = VideoGroups.from_caption_videos(captions.video_ids)
    if sidecar.get("rows") != "videos" or groups.video_ids != sidecar["row_ids"]:
        raise InputError(matrix_path, "needs the video-level matrix built from this captions file")
    return human_kit(matrix, sidecar["row_ids"], sidecar["col_ids"], captions.texts, groups.membership().tocsr(), videos, seed)


def triplets_study(matrix_path: Path, threshold: float, per_video: int, seed: int) -> Iterator[dict]:
    """§4.3: training triplets by id (video, a caption with S >= T, one with S < T)."""
    proxy = open_relevance(matrix_path, require_sidecar=True)
    matrix, sidecar = proxy.dense(), proxy.sidecar
    rows, columns = sidecar["row_ids"], sidecar["col_ids"]
    return (
        {"video_id": rows[v], "positive_caption_id": columns[p], "negative_caption_id": columns[n]}
        for v, p, n in triplets(matrix, threshold, per_video, seed)
    )
