"""``tvrbench evaluate``: score one model with every label available."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console

from tvrbench import evaluation
from tvrbench.cli import app
from tvrbench.cli.inputs import AP, SCHEDULER, TIES, WORKERS, config_option, split_list
from tvrbench.cli.models import ModelInputs, reads_models
from tvrbench.cli.outputs import Writes, beside, mark_beside, marked, print_result, writes
from tvrbench.distributed import dask_client
from tvrbench.errors import InputError
from tvrbench.evaluation.choices import FUSION_POLICIES, NDCG_VARIANTS, listed
from tvrbench.io.atomic import write_json

if TYPE_CHECKING:
    from tvrbench.evaluation.inputs import EvaluationFiles


def _checkpoint(json_out: Path) -> Path:
    """The API's checkpoint of a sharded run (its module loads on first use, not for --help)."""
    return evaluation.checkpoint_of(json_out)


# The result and, for sharded scores, the checkpoint a rerun resumes from.
JSON_OUT = Writes(scratch=(_checkpoint,), folder=lambda path: path.name.endswith(".shards"), resumes=_checkpoint)


@app.command("evaluate")
@writes(json_out=JSON_OUT, per_query=beside(".json"))
@reads_models("one_or_embeddings", fire="optional", scores_use="Too big for memory: a Zarr store or a folder of .npy row shards (docs/scaling.md).")
def evaluate_command(
    given: ModelInputs,
    json_out: Optional[Path] = typer.Option(
        None, "--json", help="Write {metrics, signature, n_queries[, original, delta]} here (and resume a sharded run from it)."
    ),
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
    config: Path = config_option("configs/evaluate.yaml"),
    workers: Optional[int] = WORKERS,
    scheduler: Optional[str] = SCHEDULER,
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
    checkpoint = files.checkpoint(json_out) if json_out is not None else None
    with dask_client(workers, scheduler) as client:
        result = inputs.evaluate(settings, client, checkpoint)
    if json_out is not None:
        write_json(json_out, marked(result.to_json()))
    if checkpoint is not None:
        shutil.rmtree(checkpoint, ignore_errors=True)
    if per_query is not None:
        mark_beside(per_query)
        result.write_per_query(per_query, inputs.captions)
    print_result(result)
    Console().print(f"signature: {result.signature}", soft_wrap=True, highlight=False)


def evaluation_files(given: ModelInputs, qrels: Optional[Path], relevance: Optional[Path]) -> EvaluationFiles:
    """The files ``evaluate`` reads. Its one model needs no name: ``--scores`` and the embeddings are paths, never ``NAME=PATH``."""
    from tvrbench.evaluation.inputs import EvaluationFiles

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
