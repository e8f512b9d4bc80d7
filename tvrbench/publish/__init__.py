"""Publish tvrbench's outputs as a Hugging Face dataset (SPEC §6).

>>> from tvrbench.publish import mc_artifact, results_artifact, write_dataset
>>> write_dataset("hf", [mc_artifact("mc_gender.tsv"), results_artifact("results.json")], license="cc-by-4.0")
>>> datasets.load_dataset("hf", "mc_gender", split="test")   # the rows of the TSV, unchanged

:mod:`~tvrbench.publish.artifacts` turns each output file into an Arrow table (one config),
:mod:`~tvrbench.publish.folder` writes the Parquet files and the card
(:mod:`~tvrbench.publish.card`), :mod:`~tvrbench.publish.push` uploads the folder.
"""

from tvrbench.publish.artifacts import (
    KINDS,
    RELEVANCE_FORMS,
    Artifact,
    contrast_artifact,
    fire_qrels_artifact,
    mc_artifact,
    qrels_artifact,
    relevance_artifact,
    results_artifact,
)
from tvrbench.publish.folder import folder_files, parquet_path, write_dataset
from tvrbench.publish.push import PushPlan, hub_endpoint, plan_push, push

__all__ = [
    "KINDS",
    "RELEVANCE_FORMS",
    "Artifact",
    "PushPlan",
    "contrast_artifact",
    "fire_qrels_artifact",
    "folder_files",
    "hub_endpoint",
    "mc_artifact",
    "parquet_path",
    "plan_push",
    "push",
    "qrels_artifact",
    "relevance_artifact",
    "results_artifact",
    "write_dataset",
]
