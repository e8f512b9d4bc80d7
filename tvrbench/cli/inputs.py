"""The options every command shares, declared once, and the thin glue that reads them.

An option that several commands take is one object or one factory here (``--scores``, ``--captions``,
``--lm``, ``--seed``, ``--config``, ``--workers``, ``--scheduler``); where a command uses it for
something of its own, a factory's argument says so, in one wording. Commands that read captions take
``--format``, ``--video-list`` and ``--trust-pickle`` through :func:`reads_captions`; commands that read
FIRE labels take ``--fire-dataset`` (alias ``--dataset``); the commands over models (``evaluate``, the
fire analyses) take their whole input block from :mod:`tvrbench.cli.models`. A choice lists the names
of the library's registry (captions formats, similarities, label rules), never a copy of them. The
reading itself is the API's: ``NAME=PATH`` and captions in :mod:`tvrbench.io.inputs`, a model's
scores and labels in :mod:`tvrbench.evaluation.inputs` (imported by the commands when they run: it
loads scipy).
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from typing import Optional

import typer

from tvrbench.distributed import SCHEDULER_HELP, WORKERS_HELP
from tvrbench.errors import InputError
from tvrbench.evaluation.choices import AP_VARIANTS, TIE_RULES, listed
from tvrbench.evaluation.fire.pairs import RULES as LABEL_RULES
from tvrbench.io.captions import FORMATS as CAPTIONS_FORMATS
from tvrbench.io.inputs import CaptionsReading, CaptionsSelection
from tvrbench.io.scores import SIMILARITIES

# What a --lm option takes (tvrbench.lm.models.load_language_model).
LANGUAGE_MODELS = (
    "auto (gemma3-270m if installed, else smollm2, else ngram), gemma3-270m or smollm2 (neural, installed offline), "
    "ngram (CMU's trigram model, offline), a .gguf file, an n-gram file (.arpa, .lm.bin) or a causal LM name or path"
)
CAPTIONS_FORMS = "CSV/TSV/JSONL (caption_id,text,video_id), MSR-VTT JSFUSION CSV or MSRVTT_data.json"
SCORE_FORMS = "a .npy score matrix (rows = captions, columns = videos) or a TREC run"


def _help(text: str, use: str) -> str:
    return f"{text} {use}" if use else text


def scores_option(default=None, *, one: bool = False, use: str = "", help: Optional[str] = None):
    """``--scores``, declared once: the ``NAME=PATH`` of each model (repeatable), or of ``one`` model
    (``NAME=`` optional), in :data:`SCORE_FORMS`; ``use`` says what the command does with them. Only
    scores that are not a model's over captions × videos (``mc score``'s, per option) have their own ``help``."""
    models = f"The model's scores: {SCORE_FORMS}; NAME=PATH allowed." if one else f"NAME=PATH of a model's scores: {SCORE_FORMS}; repeatable."
    return typer.Option(default, "--scores", help=help or _help(models, use))


def captions_option(default=..., use: str = ""):
    """``--captions``, declared once, in any of the forms :data:`CAPTIONS_FORMS` names; ``use`` says what the command takes from them."""
    return typer.Option(default, "--captions", help=_help(f"Captions: {CAPTIONS_FORMS}.", use))


def lm_option(role: str, default: Optional[str] = None):
    """``--lm``, declared once: the language model of ``role``. ``None`` lets a config file's model stand
    (the settings' default is ``auto``), so the help names it."""
    return typer.Option(default, "--lm", help=f"Language model of {role}: {LANGUAGE_MODELS}." + (" [default: auto]" if default is None else ""))


def config_option(example: str):
    """``--config``, declared once; ``example`` is the settings file to copy (every command lays its flags over the file's values)."""
    return typer.Option(None, "--config", help=f"YAML settings (see {example}); flags win.")


WORKERS = typer.Option(None, "--workers", min=1, help=WORKERS_HELP)
SCHEDULER = typer.Option(None, "--scheduler", help=SCHEDULER_HELP)
FIRE_DATASET = typer.Option(
    None, "--fire-dataset", "--dataset", help="Dataset of the FIRE file to use (MSRVTT, MSVD) [default: the one matching the captions]."
)
FIRE_DATASET_FILTER = typer.Option(None, "--fire-dataset", "--dataset", help="Only this dataset of the FIRE file [default: every one].")
ONE_TEXT_EMBEDDINGS = typer.Option(
    None, "--text-embeddings", help="Or the model as embeddings: caption embeddings (.npy, .zarr or a folder of .npy row shards)."
)
ONE_VIDEO_EMBEDDINGS = typer.Option(None, "--video-embeddings", help="With --text-embeddings: the video embeddings, in the same forms.")
SIMILARITY = typer.Option("dot", "--similarity", help=f"Scores from embeddings: {' | '.join(SIMILARITIES)}.")
LABEL_RULE = typer.Option(None, "--rule", help=f"Label rule: {', '.join(LABEL_RULES)} (default: file).")
METRICS = typer.Option(None, "--metrics", help="Comma-separated engine metrics [default: C@1,C@5,C@10,AP].")
BOOTSTRAP_METRICS = typer.Option(None, "--metrics", help="Comma-separated metrics [default: C@1,C@5,C@10].")


def seed_option(help: str = "Random seed. [default: 0]", default: Optional[int] = None):
    """``--seed``, declared once (never negative: numpy refuses it); a seed that means something else
    says so in its own ``help``. ``None`` lets a config file's seed stand, so the help names the default."""
    return typer.Option(default, "--seed", min=0, help=help)


SEED = seed_option()
# The engine's ranking settings, shared by ``evaluate`` and ``fire compare`` (the defaults: the first choice).
TIES = typer.Option(None, "--ties", help=f"Equal scores: {listed(TIE_RULES)} (default: {TIE_RULES[0]}).")
AP = typer.Option(None, "--ap", help=f"AP variant: {listed(AP_VARIANTS)} (default: {AP_VARIANTS[0]}; fire: the top 20, as the FIRE code).")
CONFIG = config_option("configs/fire.yaml")
JSON_OUT = typer.Option(None, "--json", help="Write the results as JSON here.")
PLOTS = typer.Option(None, "--plots", help="Write the figure(s) as PNG and SVG into this folder.")


def keyword_options(*declared: tuple[str, object, object]) -> list[inspect.Parameter]:
    """(name, type, typer.Option) as the keyword parameters Typer builds options from."""
    return [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation) for name, annotation, option in declared]


def bundle_options(command, name: str, options: list[inspect.Parameter], build, at_end: bool = False):
    """``command`` with its parameter ``name`` replaced by ``options`` (in its place, or last): it
    receives ``build(**those options' values)`` as ``name``."""
    parameters = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in inspect.signature(command).parameters.values()]
    where = [p.name for p in parameters].index(name)
    kept = parameters[:where] + parameters[where + 1 :]
    replaced = [*kept, *options] if at_end else [*kept[:where], *options, *kept[where:]]

    @functools.wraps(command)
    def with_bundle(**given):
        values = {option.name: given.pop(option.name) for option in options}
        return command(**given, **{name: build(**values)})

    # Typer builds the options from the signature and the type hints (read from __annotations__).
    with_bundle.__signature__ = inspect.Signature(replaced)
    with_bundle.__annotations__ = {p.name: p.annotation for p in replaced}
    return with_bundle


CAPTIONS_FORMAT = typer.Option("auto", "--format", help=f"Captions format: {' | '.join(CAPTIONS_FORMATS)}.")
_CAPTIONS_OPTIONS = keyword_options(
    ("format", str, CAPTIONS_FORMAT),
    ("video_list", Optional[Path], typer.Option(None, "--video-list", help="MSVD: keep only the videos listed here (test_list.txt).")),
    (
        "trust_pickle",
        bool,
        typer.Option(False, "--trust-pickle", help="Allow MSVD's raw-captions.pkl (a pickle runs code: only for files you trust)."),
    ),
)


def reads_captions(command):
    """Give ``command`` the captions options (``--format``, ``--video-list``, ``--trust-pickle``); it
    receives them as one :class:`~tvrbench.io.inputs.CaptionsReading` in its ``reading`` parameter."""
    return bundle_options(command, "reading", _CAPTIONS_OPTIONS, CaptionsReading, at_end=True)


_SELECTION_OPTIONS = keyword_options(
    ("limit", Optional[int], typer.Option(None, "--limit", min=1, help="Only the first N captions (to try a run small).")),
    ("sample", Optional[int], typer.Option(None, "--sample", min=1, help="Only N captions drawn with --seed (to try a run small).")),
)


def selects_captions(command):
    """Give ``command`` ``--limit`` and ``--sample``; it receives them as one
    :class:`~tvrbench.io.inputs.CaptionsSelection` in its ``selection`` parameter."""
    return bundle_options(command, "selection", _SELECTION_OPTIONS, CaptionsSelection, at_end=True)


def read_fire_settings(config: Optional[Path], section: str | None = None, **overrides):
    """The FIRE settings (``configs/fire.yaml`` or the defaults) with the command-line values that were
    given laid over them (or over their ``section``)."""
    from tvrbench.config import load_settings
    from tvrbench.evaluation.fire.config import FireConfig

    settings = load_settings(FireConfig, config, section, **overrides)
    updated = getattr(settings, section) if section else settings
    _check_metrics([*getattr(updated, "metrics", ()), *filter(None, [getattr(updated, "metric", None)])], settings.ap)
    return settings


def _check_metrics(names: list[str], ap: str) -> None:
    """Refuse a metric name the engine would refuse, before any input is read."""
    if not names:
        return
    from tvrbench.evaluation.metrics import parse_metric

    for name in names:
        try:
            parse_metric(name, ap=ap)
        except ValueError as error:
            raise InputError(None, f"--metrics: {error}") from None


def split_list(text: Optional[str], convert=str) -> Optional[list]:
    """``a,b,c`` as a list (``None`` when the option was not given)."""
    if text is None:
        return None
    try:
        return [convert(part.strip()) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(None, f"cannot read {text!r} as a comma-separated list") from None
