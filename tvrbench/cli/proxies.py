"""``tvrbench proxies``: build a semantic-proxy relevance matrix (the studies: :mod:`tvrbench.cli.proxy_study`)."""

from __future__ import annotations

import time
from enum import Enum
from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli import app
from tvrbench.cli.inputs import SCHEDULER, WORKERS, captions_option, config_option, reads_captions
from tvrbench.cli.outputs import Writes, partial, writes
from tvrbench.distributed import dask_client
from tvrbench.io.inputs import CaptionsReading, named_paths
from tvrbench.io.sidecars import sidecar_path
from tvrbench.proxies.matrix import LEVELS, PROXIES
from tvrbench.proxies.storage import FOLDER_SUFFIXES

# The matrix, its sidecar M.json, and the partial matrix and progress file a rerun resumes from; a
# .zarr or .parquet output and its partial form are folders.
PROXY_OUT = Writes(
    (lambda path: path, sidecar_path),
    (partial, lambda path: path.with_name(path.name + ".partial.json")),
    folder=lambda path: path.name.removesuffix(".partial").endswith(FOLDER_SUFFIXES),
    resumes=partial,
)


# The choices of --proxy and --level: the library's registries, so that --help lists every proxy it builds.
Proxy = Enum("Proxy", {name: name for name in PROXIES}, type=str)
Level = Enum("Level", {name: name for name in LEVELS}, type=str)


@app.command()
@writes(out=PROXY_OUT, kind_option="proxy")
@reads_captions
def proxies(
    reading: CaptionsReading,
    captions: Path = captions_option(),
    proxy: Proxy = typer.Option(..., "--proxy", help="bow, pos, syn, met (METEOR), embedding (sentence-embedding cosine) or visual."),
    out: Path = typer.Option(
        ...,
        "--out",
        help="Output: dense .npy or chunked .zarr; with --top-k / --threshold, scipy.sparse .npz or "
        "partitioned .parquet (query_id, item_id, score). The sidecar goes to OUT.json. Resumes an interrupted run.",
    ),
    level: Level = typer.Option(Level.caption, "--level", help="caption: captions x captions; video: videos x captions."),
    spacy_model: Optional[str] = typer.Option(
        None, "--spacy-model", help="spaCy pipeline (installed package name or path). [default: en_core_web_sm]"
    ),
    config: Optional[Path] = config_option("configs/proxies.yaml"),
    features: Optional[Path] = typer.Option(
        None, "--features", help="Video features .npy (videos x dims, in order of first appearance) for --proxy visual."
    ),
    embedding_model: Optional[str] = typer.Option(None, "--embedding-model", help="sentence-transformers model name or local path."),
    classes: Optional[list[str]] = typer.Option(
        None, "--classes", help="SYN: TAG=classes.csv (id,key,instances; repeatable) replacing WordNet senses for that part of speech."
    ),
    dtype: Optional[str] = typer.Option(None, "--dtype", help="float32 (default) or float64."),
    top_k: Optional[int] = typer.Option(None, "--top-k", min=1, help="Keep only the k largest values per row (.npz or .parquet)."),
    threshold: Optional[float] = typer.Option(None, "--threshold", help="Keep only the values >= T, in [0, 1] (.npz or .parquet)."),
    block_mb: Optional[int] = typer.Option(None, "--block-mb", min=1, help="Memory budget of one block of rows, MiB."),
    n_process: Optional[int] = typer.Option(None, "--n-process", min=1, help="spaCy worker processes."),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", min=1, help="spaCy batch size."),
    workers: Optional[int] = WORKERS,
    scheduler: Optional[str] = SCHEDULER,
):
    """Build a semantic-similarity relevance matrix from captions (Wray et al. §4.4) for nDCG."""
    from tvrbench.proxies import build_proxy, load_config, write_proxy
    from tvrbench.proxies.learned import read_features
    from tvrbench.proxies.storage import check_output

    check_output(out, top_k, threshold)  # before any work
    class_files = {tag: str(path) for tag, path in named_paths(classes, "--classes", name_required=True).items()} if classes else None
    settings = load_config(
        config,
        spacy_model=spacy_model,
        embedding_model=embedding_model,
        dtype=dtype,
        block_mb=block_mb,
        n_process=n_process,
        batch_size=batch_size,
        classes=class_files,
    )
    table = reading.read(captions)
    n_videos = len(table.distinct_videos())
    loaded = read_features(features, n_videos) if features is not None else None
    with dask_client(workers, scheduler) as client:  # a scheduler that does not answer stops the run before the build
        matrix = build_proxy(
            table.texts, proxy.value, level.value, caption_ids=table.caption_ids, video_ids=table.video_ids, config=settings, features=loaded
        )
        started = time.perf_counter()
        write_proxy(matrix, out, settings.dtype, settings.block_mb, top_k, threshold, client)
    seconds = {**matrix.seconds, "matrix": time.perf_counter() - started}
    timing = ", ".join(f"{name} {value:.2f} s" for name, value in seconds.items())
    rows, columns = matrix.shape
    typer.echo(
        f"wrote {out} ({rows} {'videos' if level == Level.video else 'captions'} x {columns} captions, "
        f"{proxy.value}, {settings.dtype}) and {sidecar_path(out)}; {timing}",
        err=True,
    )
    typer.echo(str(matrix.signature))
