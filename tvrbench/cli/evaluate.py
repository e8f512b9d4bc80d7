"""``tvrbench evaluate``: score one model with every label available."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import typer
from rich.console import Console

from tvrbench.cli import app
from tvrbench.cli.outputs import FILE, print_result, writes
from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write, write_json
from tvrbench.io.captions import Captions, read_captions, read_video_ids
from tvrbench.io.files import read_json_object, string_list
from tvrbench.io.scores import read_scores, read_scores_digest, require_finite
from tvrbench.signature import file_digest

if TYPE_CHECKING:
    from tvrbench.evaluation import EvaluationResult

RUN_SUFFIXES = (".run", ".trec", ".txt", ".tsv")


def load_scores(path: Path, captions: Captions, video_ids: list[str], check_finite: bool = True) -> np.ndarray:
    """A ``.npy`` matrix, or a TREC run turned into one (rows = captions, columns = videos)."""
    if path.suffix.lower() in RUN_SUFFIXES:
        from tvrbench.io.trec import read_run, run_to_matrix

        return run_to_matrix(read_run(path), captions.caption_ids, video_ids)
    return read_scores(path, shape=(len(captions), len(video_ids)), check_finite=check_finite)


def select_fire_dataset(fire, captions: Captions, wanted: str | None):
    """The FIRE labels of one dataset: the one named, else the one whose queries match the captions."""
    if wanted is not None:
        return fire.select(wanted)
    names = fire.datasets()
    if len(names) <= 1:
        return fire
    texts = set(captions.texts)
    matches = {name: sum(text in texts for text in fire.select(name).query) for name in names}
    best = max(matches, key=matches.get)
    if list(matches.values()).count(matches[best]) > 1:
        raise InputError(fire.source, f"holds datasets {', '.join(names)} and the captions match none best; pass --fire-dataset")
    return fire.select(best)


def load_relevance(path: Path, shape: tuple[int, int], captions: Captions, video_ids: list[str]) -> tuple[np.ndarray, str]:
    """A graded relevance matrix oriented and ordered like the scores, and its name for the signature.

    A proxy's sidecar ``M.json`` (from ``tvrbench proxies``) names its rows (``videos`` or
    ``captions``) and their ids; the matrix is transposed and reordered to captions × videos.
    """
    if path.is_dir():  # a Parquet proxy (tvrbench proxies --out M.parquet): cells not stored are 0
        from tvrbench.proxies.storage import read_proxy_cells

        matrix, digest = read_proxy_cells(path)[0].toarray(), file_digest(path, algorithm="xxh3")
    else:
        matrix, digest = read_scores_digest(path)
    name = f"{path.name}:{digest}"
    sidecar = path.with_suffix(".json")
    if sidecar.is_file():
        meta = read_json_object(sidecar)
        proxy, rows = meta.get("proxy", "proxy"), meta.get("rows", "captions")
        if not isinstance(proxy, str) or rows not in ("videos", "captions"):
            raise InputError(sidecar, "not a proxy sidecar: 'proxy' must be a name and 'rows' videos or captions")
        name = f"{proxy}:{digest}"
        if meta.get("level") == "caption":
            raise InputError(path, "is a caption × caption proxy; build a video-level one (tvrbench proxies --level video)")
        if "row_ids" in meta or "col_ids" in meta:
            row_ids = string_list(meta, "row_ids", sidecar, matrix.shape[0])
            col_ids = string_list(meta, "col_ids", sidecar, matrix.shape[1])
            caption_ids, videos_of = (col_ids, row_ids) if rows == "videos" else (row_ids, col_ids)
            matrix = _reorder(matrix.T if rows == "videos" else matrix, caption_ids, captions.caption_ids, videos_of, video_ids, sidecar)
        elif rows == "videos":
            matrix = matrix.T
    if matrix.shape != shape:
        raise InputError(path, f"has shape {matrix.shape}, expected {shape} (captions × videos)")
    if matrix.min() < 0 or matrix.max() > 1:
        raise InputError(path, "relevance values must lie in [0, 1]")
    return np.ascontiguousarray(matrix), name


def _reorder(matrix, caption_ids, wanted_captions, video_ids, wanted_videos, source) -> np.ndarray:
    row_of = {caption_id: row for row, caption_id in enumerate(caption_ids)}
    column_of = {video_id: column for column, video_id in enumerate(video_ids)}
    missing = [c for c in wanted_captions if c not in row_of] or [v for v in wanted_videos if v not in column_of]
    if missing:
        raise InputError(source, f"has no relevance for {missing[0]!r} of the queries / videos given")
    rows = np.fromiter((row_of[c] for c in wanted_captions), np.int64)
    columns = np.fromiter((column_of[v] for v in wanted_videos), np.int64)
    return matrix[np.ix_(rows, columns)]


def write_per_query(path: Path, result: EvaluationResult, captions: Captions) -> None:
    """One row per caption with every text-to-video metric (and the original-only values)."""
    names = [name for name, values in result.per_query.items() if values.shape[0] == len(captions)]
    header = ["caption_id", "video_id", *names]
    if result.original is not None:
        header += [f"{name}_original" for name in names]
    with atomic_write(path) as out:
        writer = csv.writer(out)
        writer.writerow(header)
        for row, (caption_id, video_id) in enumerate(zip(captions.caption_ids, captions.video_ids)):
            values = [result.per_query[name][row] for name in names]
            if result.original is not None:
                values += [result.original.per_query[name][row] for name in names]
            writer.writerow([caption_id, video_id, *("" if np.isnan(v) else f"{v:.10g}" for v in values)])


@app.command("evaluate")
@writes(json_out=FILE, per_query=FILE)
def evaluate_command(
    queries: Path = typer.Option(..., "--queries", help="Captions: CSV/TSV/JSONL with caption_id,text,video_id, or MSR-VTT's JSFUSION CSV."),
    videos: Path = typer.Option(..., "--videos", help="One video id per line, in the column order of the scores."),
    scores: Path = typer.Option(..., "--scores", help="Score matrix .npy (rows = captions, columns = videos), or a TREC run."),
    json_out: Path = typer.Option(..., "--json", help="Write {metrics, signature, n_queries[, original, delta]} here."),
    fire: Path = typer.Option(None, "--fire", help="FIRE relevance labels (JSON)."),
    fire_dataset: str = typer.Option(None, "--fire-dataset", help="Dataset of the FIRE file to use (default: the one matching the captions)."),
    qrels: Path = typer.Option(None, "--qrels", help="Extra labels as TREC qrels (caption id, video id)."),
    relevance: Path = typer.Option(None, "--relevance", help="Graded relevance .npy or .parquet folder for nDCG (a proxy from `tvrbench proxies`)."),
    metrics: str = typer.Option(None, "--metrics", help="Comma-separated, e.g. C@1,C@5,C@10,R@5,P@5,AP,MdR,MnR,GMR,nDCG,Judged@10."),
    ndcg: str = typer.Option(None, "--ndcg", help="nDCG variant: epic | paper | full."),
    ap: str = typer.Option(None, "--ap", help="AP variant: standard | fire (top 20, as the FIRE code)."),
    ties: str = typer.Option(None, "--ties", help="Equal scores: stable | optimistic | pessimistic | average."),
    fusion: str = typer.Option(None, "--fusion", help="Labels over a proxy: judged | relevant | none."),
    per_query: Path = typer.Option(None, "--per-query", help="Also write every per-caption value as CSV."),
    config: Path = typer.Option(None, "--config", help="Settings YAML (see configs/evaluate.yaml); flags win."),
    captions_format: str = typer.Option("auto", "--format", help="Captions format: auto | generic | jsfusion | msrvtt-json | msvd | lsmdc."),
    video_list: Path = typer.Option(None, "--video-list", help="MSVD: keep only the videos listed here (test_list.txt)."),
    trust_pickle: bool = typer.Option(False, "--trust-pickle", help="Allow MSVD's raw-captions.pkl (a pickle runs code: only for files you trust)."),
) -> None:
    """Score a model with every label you have: original pairs, FIRE labels, qrels, graded relevance.

    Reports Correct@K, Recall@K, Precision@K, AP, median / mean rank, GMR, nDCG (both directions)
    and Judged@K. With --fire or --qrels every metric is shown as A (B + C): with all labels, with
    the original pairs only, and the difference. The JSON carries a signature of every setting.
    """
    from tvrbench.config import load_settings
    from tvrbench.evaluation import Judgments, evaluate  # numba and scipy: imported once the command runs
    from tvrbench.evaluation.ranking import NonFiniteScores
    from tvrbench.evaluation.settings import EvaluateSettings

    settings = load_settings(
        EvaluateSettings,
        config,
        metrics=None if metrics is None else [m.strip() for m in metrics.split(",") if m.strip()],
        ndcg=ndcg,
        ap=ap,
        ties=ties,
        fusion=fusion,
    )
    captions = read_captions(queries, format=captions_format, video_list=video_list, trust_pickle=trust_pickle)
    video_ids = read_video_ids(videos)
    if scores.suffix.lower() in RUN_SUFFIXES:
        matrix, digest = load_scores(scores, captions, video_ids), file_digest(scores, algorithm="xxh3")
    else:  # the ranking pass checks that every cell is finite
        matrix, digest = read_scores_digest(scores, shape=(len(captions), len(video_ids)), check_finite=False)
    fire_labels = None
    fields = {"scores": digest}
    if fire is not None:
        from tvrbench.io.fire import read_fire

        fire_labels = select_fire_dataset(read_fire(fire), captions, fire_dataset)
        fields["fire"] = f"{'+'.join(fire_labels.datasets())}:{file_digest(fire)}"
    qrels_labels = None
    if qrels is not None:
        from tvrbench.io.trec import read_qrels

        qrels_labels = read_qrels(qrels)
        fields["qrels"] = file_digest(qrels)
    judgments = Judgments.build(captions, video_ids, fire=fire_labels, qrels=qrels_labels, videos_source=str(videos))
    relevance_matrix = None
    if relevance is not None:
        relevance_matrix, fields["proxy"] = load_relevance(relevance, matrix.shape, captions, video_ids)
    try:
        result = evaluate(
            matrix,
            judgments,
            metrics=settings.metrics,
            ties=settings.ties,
            ap=settings.ap,
            ndcg=settings.ndcg,
            relevance=relevance_matrix,
            fusion=settings.fusion,
            signature_fields=fields,
        )
    except NonFiniteScores:
        require_finite(scores, matrix)  # names the first bad cell
        raise
    write_json(json_out, result.to_json())
    if per_query is not None:
        write_per_query(per_query, result, captions)
    print_result(result)
    Console().print(f"signature: {result.signature}", soft_wrap=True, highlight=False)
