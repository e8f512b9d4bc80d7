"""``tvrbench mc build|import|score|audit``: hard-negative multiple-choice splits (Park et al. App. D)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli import app
from tvrbench.cli.inputs import SEED, captions_option, config_option, lm_option, reads_captions, scores_option, seed_option
from tvrbench.cli.outputs import FILE, beside, writes
from tvrbench.io.inputs import CaptionsReading
from tvrbench.mc.build import MC_KINDS
from tvrbench.mc.score import SCORERS

mc = typer.Typer(
    help="Multiple-choice splits: build (Random MC, or a contrast MC of any kind), import human TSVs, score, audit.", no_args_is_help=True
)
app.add_typer(mc, name="mc")


def _settings(config: Optional[Path], seed: Optional[int], same_movie: bool = False):
    from tvrbench.generators.config import MCConfig, load_config

    return load_config(config, MCConfig, seed=seed, negatives_from="same_movie" if same_movie else None)


@mc.command()
@writes(out=beside(".json"), kind_option="kind")
@reads_captions
def build(
    reading: CaptionsReading,
    captions: Path = captions_option(use="Each video's first caption is its positive."),
    kind: str = typer.Option(..., "--kind", help=f"{', '.join(MC_KINDS[:-1])} or {MC_KINDS[-1]}."),
    out: Path = typer.Option(..., "--out", help="MC TSV (clip, ending0..ending4, label); settings go to OUT.json."),
    contrast: Optional[Path] = typer.Option(None, "--contrast", help="Contrast records (JSONL) of --kind, for every kind but random."),
    reviewed: Optional[Path] = typer.Option(None, "--reviewed", help="Review of --contrast (review-score --json): leave out what a reader rejected."),
    refine: bool = typer.Option(
        False, "--refine", help="Keep only instances whose pairs leave text-only scorers at chance (configs/refine.yaml; contrast refine for others)."
    ),
    same_movie: bool = typer.Option(False, "--same-movie", help="Negatives from other clips of the same movie (LSMDC)."),
    seed: Optional[int] = SEED,
    config: Optional[Path] = config_option("configs/mc.yaml"),
):
    """5 options, 1 positive; a contrast MC swaps one random negative for a contrast of the positive."""
    from tvrbench.generators.config import RefineConfig
    from tvrbench.mc.build import build_mc_file

    split = build_mc_file(
        reading.read(captions), kind, out, _settings(config, seed, same_movie), contrast, reviewed, RefineConfig() if refine else None
    )
    dropped = ", ".join(f"{k} {v}" for k, v in sorted(split.dropped.items())) or "none"
    typer.echo(f"wrote {out} and {out}.json: {len(split.instances)} {kind} MC instances (dropped: {dropped})", err=True)
    if split.review:
        from tvrbench.review.score import review_line

        typer.echo(f"reviewed: {review_line(split.review)}", err=True)
    if refine:
        from tvrbench.cli.outputs import print_table
        from tvrbench.mc.refine import refinement_tables

        for table in refinement_tables(split.refinement):
            print_table(table)


@mc.command("import")
@writes(out=beside(".json"))
def import_(
    tsv: Path = typer.Option(..., "--tsv", help="An MC TSV made elsewhere, e.g. Park et al.'s human verb contrast set."),
    out: Path = typer.Option(..., "--out", help="Where the split goes, with its OUT.json."),
    name: str = typer.Option("verb-human", "--name", help="The split's name."),
):
    """Import a human-made contrast TSV as its own split (checked, with a signature)."""
    from tvrbench.mc.build import import_mc_file

    instances = import_mc_file(tsv, out, name)
    typer.echo(f"wrote {out} and {out}.json: {len(instances)} {name} MC instances", err=True)


@mc.command()
@writes(json_out=FILE)
@reads_captions
def score(
    reading: CaptionsReading,
    mc_path: Path = typer.Option(..., "--mc", help="MC TSV (its OUT.json sidecar, if present, names the contrast options)."),
    json_out: Path = typer.Option(..., "--json", help="Result JSON: accuracy, ties, n, subsets, signature."),
    scores: Optional[Path] = scores_option(help=".npy, one row per instance, one score per option."),
    scorer: Optional[str] = typer.Option(
        None,
        "--scorer",
        help=f"A built-in text-only scorer (no video): {' or '.join(SCORERS)}. "
        "blind: sentence embeddings; lm: the option a language model finds most probable.",
    ),
    lm: Optional[str] = lm_option("the lm scorer"),
    captions: Optional[Path] = captions_option(None, use="Other captions of a video the blind scorer may use."),
    contrast: Optional[Path] = typer.Option(None, "--contrast", help="Contrast records: antonym (Table 5) and rare-ID (Table 4) subsets."),
    config: Optional[Path] = config_option("configs/mc.yaml"),
):
    """Accuracy (positive strictly highest) and tie rate, overall and on the paper's subsets."""
    from tvrbench.cli.outputs import write_result
    from tvrbench.mc.score import score_mc_file

    table = reading.read(captions) if captions else None
    result = score_mc_file(mc_path, scores, scorer, table, contrast, _settings(config, None), lm)
    write_result(result, json_out, show=lambda shown: typer.echo(json.dumps(shown.headline)))


@mc.command()
@writes(json_out=FILE)
def audit(
    mc_path: Path = typer.Option(..., "--mc", help="MC TSV whose sidecar (OUT.json) names the contrast options."),
    reference: Optional[Path] = typer.Option(None, "--reference", help="Another contrast MC TSV, audited beside it (e.g. a human-written split)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Result JSON: every figure of both splits, signature."),
    seed: int = seed_option("Seed of the pair orientations and the folds.", default=0),
    lm: str = lm_option("the LM preference and the lm scorer", default="auto"),
):
    """Can the contrast be told from the positive by text alone? Hypothesis-only baseline, substitute words, LM preference, text-only scorers."""
    from tvrbench.cli.outputs import write_result
    from tvrbench.mc.audit import audit_split

    write_result(audit_split(mc_path, reference, lm, seed), json_out)
