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
from tvrbench.cli.inputs import AP, TIES, split_list
from tvrbench.cli.models import ModelInputs, reads_models
from tvrbench.cli.outputs import Writes, beside, mark_beside, marked, print_result, writes
from tvrbench.distributed import SCHEDULER_HELP, WORKERS_HELP, dask_client
from tvrbench.errors import InputError
from tvrbench.evaluation.choices import FUSION_POLICIES, NDCG_VARIANTS, listed
from tvrbench.io.atomic import atomic_write, write_json

if TYPE_CHECKING:
    from tvrbench.evaluation import EvaluationResult
    from tvrbench.evaluation.files import EvaluationFiles
    from tvrbench.io.captions import Captions


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
JSON_OUT = Writes(scratch=(checkpoint_of,), folder=lambda path: path.name.endswith(".shards"), resumes=checkpoint_of)


# evaluate reads sharded scores too, and its one model needs no NAME=.
SCORES_HELP = (
    "Score matrix .npy (rows = captions, columns = videos), a TREC run, or, too big for memory, "
    "a Zarr store or a folder of .npy row shards (docs/scaling.md)."
)


@app.command("evaluate")
@writes(json_out=JSON_OUT, per_query=beside(".json"))
@reads_models("one_or_embeddings", fire="optional", scores_help=SCORES_HELP)
def evaluate_command(
    given: ModelInputs,
    json_out: Path = typer.Option(..., "--json", help="Write {metrics, signature, n_queries[, original, delta]} here."),
    qrels: Path = typer.Option(None, "--qrels", help="Extra labels as TREC qrels (caption id, video id)."),
    relevance: Path = typer.Option(
        None, "--relevance", help="Graded relevance for nDCG: .npy, .npz, .zarr or .parquet (a proxy from `tvrbench proxies`)."
    ),
    metrics: str = typer.Option(None, "--metrics", help="Comma-separated, e.g. C@1,C@5,C@10,R@5,P@5,AP,MdR,MnR,GMR,nDCG,Judged@10."),
    ndcg: str = typer.Option(None, "--ndcg", help=f"nDCG variant: {listed(NDCG_VARIANTS)}."),
    ap: str = AP,
    ties: str = TIES,
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
    from tvrbench.evaluation.settings import EvaluateSettings

    settings = load_settings(EvaluateSettings, config, metrics=split_list(metrics), ndcg=ndcg, ap=ap, ties=ties, fusion=fusion)
    files = evaluation_files(given, qrels, relevance)
    if (workers or scheduler) and not files.sharded:  # refused before anything is read
        raise InputError(files.scores, "--workers/--scheduler evaluate sharded scores (a Zarr store or a folder of .npy row shards)")
    inputs = files.read()
    checkpoint = checkpoint_of(json_out) if files.sharded else None
    with dask_client(workers, scheduler) as client:
        result = inputs.evaluate(settings, client, checkpoint)
    write_json(json_out, marked(result.to_json()))
    if checkpoint is not None:
        shutil.rmtree(checkpoint, ignore_errors=True)
    if per_query is not None:
        mark_beside(per_query)
        write_per_query(per_query, result, inputs.captions)
    print_result(result)
    Console().print(f"signature: {result.signature}", soft_wrap=True, highlight=False)


def evaluation_files(given: ModelInputs, qrels: Optional[Path], relevance: Optional[Path]) -> EvaluationFiles:
    """The files ``evaluate`` reads. Its one model needs no name: ``--scores`` and the embeddings are paths, never ``NAME=PATH``."""
    from tvrbench.evaluation.files import EvaluationFiles

    def first(paths: list[str]) -> Optional[Path]:
        return Path(paths[0]) if paths else None

    models = given.embeddings
    return EvaluationFiles(
        queries=given.queries,
        videos=given.videos,
        scores=first(given.scores),
        text_embeddings=first(models.text),
        video_embeddings=first(models.video),
        similarity=models.similarity,
        fire=given.fire,
        fire_dataset=given.dataset,
        qrels=qrels,
        relevance=relevance,
        reading=given.reading,
    )
