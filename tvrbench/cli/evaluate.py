"""``tvrbench evaluate``: score one model with every label available."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import numpy as np
import typer
from rich.console import Console

from tvrbench.cli import app
from tvrbench.cli.inputs import FIRE_DATASET, ONE_TEXT_EMBEDDINGS, ONE_VIDEO_EMBEDDINGS, SIMILARITY, reads_captions
from tvrbench.cli.outputs import FILE, Writes, print_result, writes
from tvrbench.distributed import SCHEDULER_HELP, WORKERS_HELP, dask_client
from tvrbench.errors import InputError
from tvrbench.evaluation.choices import AP_VARIANTS, FUSION_POLICIES, NDCG_VARIANTS, TIE_RULES, listed
from tvrbench.io.atomic import atomic_write, write_json
from tvrbench.io.captions import Captions, read_video_ids
from tvrbench.io.inputs import CaptionsReading, read_fire_dataset, read_score_matrix
from tvrbench.io.relevance import load_relevance
from tvrbench.io.scores import require_finite
from tvrbench.io.shards import is_sharded
from tvrbench.signature import input_digest

if TYPE_CHECKING:
    from tvrbench.evaluation import EvaluationResult


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


def checkpoint_of(json_out: Path) -> Path:
    """The folder where a sharded evaluation keeps each finished shard until its JSON is written."""
    return json_out.with_name(f".{json_out.name}.shards")


# The result and, for sharded scores, the checkpoint a rerun resumes from.
JSON_OUT = Writes((FILE.files[0], checkpoint_of), folder=lambda path: path.name.endswith(".shards"), resumes=checkpoint_of)


@app.command("evaluate")
@writes(json_out=JSON_OUT, per_query=FILE)
@reads_captions
def evaluate_command(
    reading: CaptionsReading,
    queries: Path = typer.Option(..., "--queries", help="Captions: CSV/TSV/JSONL with caption_id,text,video_id, or MSR-VTT's JSFUSION CSV."),
    videos: Path = typer.Option(..., "--videos", help="One video id per line, in the column order of the scores."),
    scores: Optional[Path] = typer.Option(
        None,
        "--scores",
        help="Score matrix .npy (rows = captions, columns = videos), a TREC run, or, too big for "
        "memory, a Zarr store or a folder of .npy row shards (docs/scaling.md).",
    ),
    text_embeddings: Optional[Path] = ONE_TEXT_EMBEDDINGS,
    video_embeddings: Optional[Path] = ONE_VIDEO_EMBEDDINGS,
    similarity: str = SIMILARITY,
    json_out: Path = typer.Option(..., "--json", help="Write {metrics, signature, n_queries[, original, delta]} here."),
    fire: Path = typer.Option(None, "--fire", help="FIRE relevance labels (JSON)."),
    fire_dataset: str = FIRE_DATASET,
    qrels: Path = typer.Option(None, "--qrels", help="Extra labels as TREC qrels (caption id, video id)."),
    relevance: Path = typer.Option(
        None, "--relevance", help="Graded relevance for nDCG: .npy, .npz, .zarr or .parquet (a proxy from `tvrbench proxies`)."
    ),
    metrics: str = typer.Option(None, "--metrics", help="Comma-separated, e.g. C@1,C@5,C@10,R@5,P@5,AP,MdR,MnR,GMR,nDCG,Judged@10."),
    ndcg: str = typer.Option(None, "--ndcg", help=f"nDCG variant: {listed(NDCG_VARIANTS)}."),
    ap: str = typer.Option(None, "--ap", help=f"AP variant: {listed(AP_VARIANTS)} (fire: the top 20, as the FIRE code)."),
    ties: str = typer.Option(None, "--ties", help=f"Equal scores: {listed(TIE_RULES)}."),
    fusion: str = typer.Option(None, "--fusion", help=f"Labels over a proxy: {listed(FUSION_POLICIES)}."),
    per_query: Path = typer.Option(None, "--per-query", help="Also write every per-caption value as CSV."),
    config: Path = typer.Option(None, "--config", help="Settings YAML (see configs/evaluate.yaml); flags win."),
    workers: Optional[int] = typer.Option(None, "--workers", min=1, help=WORKERS_HELP),
    scheduler: Optional[str] = typer.Option(None, "--scheduler", help=SCHEDULER_HELP),
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
    embedded = text_embeddings is not None or video_embeddings is not None
    if embedded == (scores is not None) or embedded and None in (text_embeddings, video_embeddings):
        raise InputError(None, "give --scores, or --text-embeddings and --video-embeddings")
    sharded = embedded or is_sharded(scores)  # read (or computed) shard by shard, here or on a cluster
    if (workers or scheduler) and not sharded:  # refused before anything is read
        raise InputError(scores, "--workers/--scheduler evaluate sharded scores (a Zarr store or a folder of .npy row shards)")
    captions = reading.read(queries)
    video_ids = read_video_ids(videos)
    files = {"queries_file": input_digest("queries", queries), "videos_file": input_digest("videos", videos)}  # queries, videos: the engine's counts
    if embedded:
        from tvrbench.evaluation.embeddings import read_embedding_scores

        matrix = read_embedding_scores(text_embeddings, video_embeddings, similarity, len(captions), len(video_ids))
        fields = files  # the engine signs the embeddings' digests and the similarity
    else:
        model = read_score_matrix(scores, captions.caption_ids, video_ids, check_finite=False, sharded=True)  # the ranking pass checks every cell
        matrix, fields = model.values, {**files, "scores": model.digest}
    fire_labels = None
    if fire is not None:
        fire_labels = read_fire_dataset(fire, captions, fire_dataset)
        fields["fire"], fields["fire_dataset"] = input_digest("fire", fire), "+".join(fire_labels.datasets())
    qrels_labels = None
    if qrels is not None:
        from tvrbench.io.trec import read_qrels

        qrels_labels = read_qrels(qrels)
        fields["qrels"] = input_digest("qrels", qrels)
    judgments = Judgments.build(captions, video_ids, fire=fire_labels, qrels=qrels_labels, videos_source=str(videos))
    relevance_matrix = None
    if relevance is not None:
        relevance_matrix, fields["proxy"] = load_relevance(relevance, matrix.shape, captions, video_ids)
    checkpoint = checkpoint_of(json_out) if sharded else None
    try:
        with dask_client(workers, scheduler) as client:
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
                client=client,
                checkpoint=checkpoint,
            )
    except NonFiniteScores:
        require_finite(scores or text_embeddings, matrix)  # names the first bad cell
        raise
    write_json(json_out, result.to_json())
    if checkpoint is not None:
        shutil.rmtree(checkpoint, ignore_errors=True)
    if per_query is not None:
        write_per_query(per_query, result, captions)
    print_result(result)
    Console().print(f"signature: {result.signature}", soft_wrap=True, highlight=False)
