"""``tvrbench contrast refine``: keep the contrasts on which text-only scorers are at chance (SugarCrepe's
adversarial refinement, :mod:`tvrbench.mc.refine`). It joins the ``contrast`` group of
:mod:`tvrbench.cli.contrast`; :mod:`tvrbench.cli.contrast_kinds` loads it with the group."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli.contrast import contrast
from tvrbench.cli.inputs import config_option, lm_option, seed_option
from tvrbench.cli.outputs import beside, writes


@contrast.command()
@writes(out=beside(".json"))
def refine(
    contrast_path: Path = typer.Option(..., "--contrast", help="Contrast records (JSONL) of any kind."),
    out: Path = typer.Option(..., "--out", help="The kept records (JSONL); the refinement and the kept set's audit go to OUT.json."),
    reviewed: Optional[Path] = typer.Option(
        None, "--reviewed", help="Review of --contrast (review-score --json): what a reader rejected is left out first."
    ),
    scorers: list[str] = typer.Option(
        [],
        "--scorer",
        help="Balance against this text-only scorer (repeatable): lm, lm:NAME, hypothesis-only, or a .npy of gaps, one per record. "
        "[default: lm and hypothesis-only]",
    ),
    checks: list[str] = typer.Option([], "--check", help="A scorer only measured before and after (repeatable), e.g. lm:ngram."),
    bins: Optional[int] = typer.Option(None, "--bins", min=1, help="Cells of each scorer's gap on each side of zero (1: its sign). [default: 1]"),
    seed: Optional[int] = seed_option("Seed of the draw within a cell. [default: 0]"),
    lm: Optional[str] = lm_option("the lm scorer"),
    config: Optional[Path] = config_option("configs/refine.yaml"),
):
    """Keep the largest subset on which text-only scorers are at chance (SugarCrepe's adversarial refinement)."""
    from tvrbench.cli.outputs import print_result
    from tvrbench.generators.config import RefineConfig, load_config
    from tvrbench.mc.refine import refine_contrast_file

    settings = load_config(config, RefineConfig, scorers=scorers or None, checks=checks or None, bins=bins, seed=seed, lm=lm)
    refinement = refine_contrast_file(contrast_path, out, settings, reviewed)
    print_result(refinement)
    typer.echo(f"wrote {out} and {out}.json: {refinement.summary}", err=True)
    typer.echo(str(refinement.signature))
