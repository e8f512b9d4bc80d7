"""``tvrbench contrast gender|id|verb|finetune-t5``: contrast sets (Park et al. 2022, SPEC §5)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli import app
from tvrbench.cli.inputs import (
    SCHEDULER,
    SEED,
    WORKERS,
    bundle_options,
    captions_option,
    config_option,
    keyword_options,
    lm_option,
    reads_captions,
    seed_option,
    selects_captions,
)
from tvrbench.cli.outputs import FILE, WHOLE_FOLDER, beside, writes
from tvrbench.distributed import dask_client
from tvrbench.errors import InputError
from tvrbench.io.inputs import CaptionsReading, CaptionsSelection

contrast = typer.Typer(
    help="Generate contrast captions: gender, LSMDC person-ID and verb-phrase swaps, and object, attribute, relation, counting, swap, add and "
    "event-order edits.",
    no_args_is_help=True,
)
app.add_typer(contrast, name="contrast")

# The records, their sidecar and the partial file a rerun resumes from.
CONTRAST_OUT = beside(".json", resumable=True)
OUT = typer.Option(..., "--out", help="Output JSONL, one record per contrast; signature and counts go to OUT.json. Resumes an interrupted run.")
DEVICE_HELP = (
    "Where T5, a causal LM and the sentence model run: auto (the GPU when torch sees one, bf16/fp16 where safe, named in the signature), "
    "cpu (float32: the same bytes on any machine) or cuda."
)


@dataclass(frozen=True)
class ContrastOptions:
    """The options every contrast generator takes beside its ``--captions`` (``gender``, ``id``, ``verb``), as given."""

    out: Path
    seed: Optional[int]
    lm: Optional[str]
    config: Optional[Path]
    workers: Optional[int]
    scheduler: Optional[str]

    def settings(self, model, **overrides):
        """The generator's settings: ``--config`` (or the defaults) with these options and ``overrides`` over it."""
        from tvrbench.generators.config import load_config

        return load_config(self.config, model, seed=self.seed, lm=self.lm, **overrides)

    def client(self):
        """The Dask client of ``--workers`` / ``--scheduler`` (None: this process)."""
        return dask_client(self.workers, self.scheduler)


def contrast_options(kind: str, lm_role: str = "the plausibility line"):
    """Give a contrast command the options of :class:`ContrastOptions`, declared once (``kind`` names
    its settings file, ``lm_role`` says what its LM does); it receives them in its ``given`` parameter,
    which stands where they go (after ``--captions`` and what the command reads with them, so that
    a missing option is named in the order it always was)."""
    options = keyword_options(
        ("out", Path, OUT),
        ("seed", Optional[int], SEED),
        ("lm", Optional[str], lm_option(lm_role)),
        ("config", Optional[Path], config_option(f"configs/contrast/{kind}.yaml")),
        ("workers", Optional[int], WORKERS),
        ("scheduler", Optional[str], SCHEDULER),
    )
    return lambda command: bundle_options(command, "given", options, ContrastOptions)


def report_run(out: Path, run) -> None:
    """What the run wrote (the records and their sidecar, the run's JSON, written together), how a
    language model reads its contrasts, and its signature."""
    counts = ", ".join(f"{key} {value}" for key, value in run.counts.items())
    typer.echo(f"wrote {out} and {out}.json: {counts}", err=True)
    typer.echo(str(run.plausibility), err=True)
    typer.echo(str(run.signature))


@contrast.command()
@writes(out=CONTRAST_OUT)
@selects_captions
@reads_captions
@contrast_options("gender")
def gender(reading: CaptionsReading, selection: CaptionsSelection, captions: Path = captions_option(), *, given: ContrastOptions):
    """Swap exactly one gendered noun (SPEC §5 table) and the pronouns of its gender."""
    from tvrbench.generators import gender_contrasts
    from tvrbench.generators.config import GenderConfig

    settings = given.settings(GenderConfig)
    with given.client() as client:
        _, run = gender_contrasts(selection.apply(reading.read(captions), settings.seed), given.out, settings, client)
    report_run(given.out, run)


@contrast.command("id")
@writes(out=CONTRAST_OUT)
@selects_captions
@reads_captions
@contrast_options("id")
def person_id(
    reading: CaptionsReading,
    selection: CaptionsSelection,
    captions: Path = captions_option(use="Names in the text; optional 'movie' column."),
    characters: Path = typer.Option(..., "--characters", help="CSV with columns movie,name,gender."),
    *,
    given: ContrastOptions,
    train_captions: Optional[Path] = typer.Option(None, "--train-captions", help="Training captions: name frequencies for the rare-ID subset."),
):
    """Swap the first character name for another of the same movie and gender (later names: 50 %)."""
    from tvrbench.generators import id_contrasts
    from tvrbench.generators.config import PersonIdConfig

    settings = given.settings(PersonIdConfig)
    train = reading.read(train_captions, filter_videos=False) if train_captions else None
    with given.client() as client:
        _, run = id_contrasts(selection.apply(reading.read(captions), settings.seed), characters, given.out, settings, train, client)
    report_run(given.out, run)


@contrast.command()
@writes(out=CONTRAST_OUT)
@selects_captions
@reads_captions
@contrast_options("verb", lm_role="the ranking and the perplexity filter (paper: gpt2-xl)")
def verb(
    reading: CaptionsReading,
    selection: CaptionsSelection,
    captions: Path = captions_option(),
    *,
    given: ContrastOptions,
    generator: Optional[str] = typer.Option(None, "--generator", help="wordnet (offline) or t5. [default: wordnet]"),
    model: Optional[str] = typer.Option(None, "--model", help="T5 model, hub name or local folder (implies --generator t5). [default: t5-base]"),
    train_captions: Optional[Path] = typer.Option(
        None,
        "--train-captions",
        help="Training captions: the verb-frequency filter counts in them (else the LM's unigrams), and their verbs join the pool.",
    ),
    preset: Optional[str] = typer.Option(
        None, "--preset", help="park2022: Park et al.'s settings (T5, gpt2-xl, their thresholds; docs/contrast.md); --config and flags win."
    ),
    device: Optional[str] = typer.Option(None, "--device", help=DEVICE_HELP + " [default: auto]"),
):
    """Replace one verb phrase: verbs that fit, drawn in a seeded order, judged by a language model, through Park et al.'s filters."""
    from typing import get_args

    from tvrbench.generators import verb_contrasts
    from tvrbench.generators.config import Generator, VerbConfig

    if generator is not None and generator not in get_args(Generator):
        raise InputError(None, f"unknown --generator {generator!r}; choose {' or '.join(get_args(Generator))}")
    if model is not None and generator == "wordnet":
        raise InputError(None, "--model names a T5 model; it cannot go with --generator wordnet")
    settings = given.settings(
        VerbConfig, generator="t5" if model is not None else generator, preset=preset, device=device, t5=None if model is None else {"model": model}
    )
    train = reading.read(train_captions, filter_videos=False) if train_captions else None
    with given.client() as client:
        _, run = verb_contrasts(selection.apply(reading.read(captions), settings.seed), given.out, settings, train, client)
    report_run(given.out, run)


@contrast.command("finetune-t5")
@writes(out=WHOLE_FOLDER)
@reads_captions
def finetune_t5(
    reading: CaptionsReading,
    train_captions: Path = typer.Option(..., "--train-captions", help="Training captions whose verb phrases T5 learns to fill."),
    out: Path = typer.Option(..., "--out", help="Folder for the fine-tuned model (written complete or not at all)."),
    model: str = typer.Option("t5-base", "--model", help="T5 model to start from, hub name or local folder."),
    config: Optional[Path] = config_option("configs/contrast/finetune-t5.yaml"),
    seed: Optional[int] = seed_option("Random seed: the same seed gives the same weights. [default: 0]"),
    device: Optional[str] = typer.Option(None, "--device", help=DEVICE_HELP + " [default: auto]"),
):
    """Fine-tune T5 on the captions with its own span corruption (or verb-phrase masking, masking:
    verb-phrases in --config), for --model of contrast verb."""
    from tvrbench.generators.config import FinetuneConfig, load_config
    from tvrbench.generators.runner import check_texts
    from tvrbench.generators.verb.t5 import finetune_t5 as run_finetune

    settings = load_config(config, FinetuneConfig, seed=seed, device=device)
    table = reading.read(train_captions)
    check_texts(table)
    summary = run_finetune(model, table.texts, out, settings)
    held_out = ", ".join(f"{loss:.3f}" for loss in summary["held_out_loss"] if loss is not None) or "none"
    typer.echo(f"wrote {out}: {summary['examples']} {summary['masking']} examples, {summary['steps']} steps, "
               f"loss {summary['loss_first']:.3f} -> {summary['loss_last']:.3f}, held-out loss per epoch {held_out}", err=True)  # fmt: skip


@contrast.command("review-kit")
@writes(out=WHOLE_FOLDER)
@reads_captions
def review_kit(
    reading: CaptionsReading,
    contrasts: list[str] = typer.Option(..., "--contrast", help="NAME=FILE: a set to review (JSONL of `contrast`, or an MC split); repeatable."),
    captions: Path = captions_option(use="The real-caption controls are drawn from them."),
    out: Path = typer.Option(..., "--out", help="The kit folder: reader/ (form.html, sentences.csv, instructions.md) and the hidden key.json."),
    references: list[str] = typer.Option([], "--reference", help="NAME=FILE: another set shown as a control, e.g. a human-written split."),
    per_source: int = typer.Option(50, "--per-source", min=1, help="Sentences sampled from each contrast and reference set."),
    controls: int = typer.Option(25, "--controls", min=0, help="Real captions mixed in: each reader's care."),
    seed: int = seed_option("Seed of the sample and the order: the same seed gives the same kit.", default=0),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace a kit already in --out (verdicts made on it will no longer match)."),
):
    """A blind review kit: a seeded sample of each set and real captions, shuffled, sources hidden (docs/review.md)."""
    from tvrbench.io.inputs import named_paths
    from tvrbench.review import make_kit, write_kit

    kit = make_kit(
        named_paths(contrasts, "--contrast", name_required=True), reading.read(captions), captions, per_source, controls, seed,
        named_paths(references, "--reference", name_required=True),
    )  # fmt: skip
    write_kit(kit, out, overwrite)
    typer.echo(f"wrote {out}: {kit.summary}; give readers {out / 'reader'}, keep {out / 'key.json'}", err=True)
    typer.echo(str(kit.signature))


@contrast.command("review-score")
@writes(json_out=FILE)
def review_score(
    kit: Path = typer.Option(..., "--kit", help="The kit folder of review-kit."),
    verdicts: list[Path] = typer.Option(
        ..., "--verdicts", help="Filled CSV (number, verdict, optional reader), one per reader or a crowd export; repeatable."
    ),
    json_out: Optional[Path] = typer.Option(
        None, "--json", help="Result JSON (per-set shares, care, agreement, every verdict) for mc build --reviewed."
    ),
):
    """Each set's share that every reader accepted (Wilson 95 % interval), the readers' care on real captions, and their agreement."""
    from tvrbench.cli.outputs import write_result
    from tvrbench.review import score_review

    write_result(score_review(kit, verdicts), json_out)
