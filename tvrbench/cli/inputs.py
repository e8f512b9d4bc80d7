"""The options every command shares, declared once, and the thin glue that reads them.

Commands that read captions take ``--format``, ``--video-list`` and ``--trust-pickle`` through
:func:`reads_captions`; commands that read FIRE labels take ``--fire-dataset`` (alias ``--dataset``);
the commands over models (``evaluate``, the fire analyses) take their whole input block from :mod:`tvrbench.cli.models`.
A choice lists the names of the library's registry (captions formats, similarities, label rules),
never a copy of them. The reading itself (``NAME=PATH``, scores, FIRE dataset, relevance) is :mod:`tvrbench.io.inputs`.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Optional

import numpy as np
import typer

from tvrbench.errors import InputError
from tvrbench.evaluation.choices import AP_VARIANTS, TIE_RULES, listed
from tvrbench.evaluation.fire.pairs import RULES as LABEL_RULES
from tvrbench.io.captions import FORMATS as CAPTIONS_FORMATS
from tvrbench.io.inputs import CaptionsReading, CaptionsSelection, default_name, open_named_scores, read_fire_dataset, split_named_path
from tvrbench.io.outputs import safe_name
from tvrbench.io.scores import SIMILARITIES, ScoreSource

# What a --lm option takes (tvrbench.lm.models.load_language_model).
LANGUAGE_MODELS = (
    "auto (gemma3-270m if installed, else smollm2, else ngram), gemma3-270m or smollm2 (neural, installed offline), "
    "ngram (CMU's trigram model, offline), a .gguf file, an n-gram file (.arpa, .lm.bin) or a causal LM name or path"
)
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
CONFIG = typer.Option(None, "--config", help="YAML settings (a copy of configs/fire.yaml).")
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


@dataclass
class Inputs:
    """The files a command was given, read; ``sources`` names them for the result's signature."""

    captions: object
    video_ids: list[str]
    scores: dict[str, ScoreSource]
    labels: object  # FireLabels or None
    sources: dict[str, Optional[Path] | list[Path]]  # scores: one file per --scores, in the order given

    @cached_property
    def models(self) -> dict[str, np.ndarray | ScoreSource]:
        """Scores by model name: each matrix read whole, every value checked; embeddings stay a source,
        scored block by block (only the analyses that take them through the engine are given them)."""
        return {name: scores if scores.computed else scores.values() for name, scores in self.scores.items()}

    @cached_property
    def judgments(self):
        """Original and FIRE labels over captions × videos (built on first use)."""
        from tvrbench.evaluation import Judgments

        return Judgments.build(self.captions, self.video_ids, fire=self.labels, videos_source=str(self.sources["videos"]))

    @property
    def model(self) -> tuple[str, np.ndarray]:
        """The one model given."""
        ((name, matrix),) = self.models.items()
        return name, matrix

    @property
    def dataset(self) -> str:
        """The FIRE dataset's name (it names figures)."""
        return self.labels.datasets()[0]

    def pair(self, analysis: str = "this figure") -> dict[str, np.ndarray]:
        """The two models given, which ``analysis`` compares."""
        if len(self.models) != 2:
            raise InputError(None, f"{analysis} compares two models: give --scores exactly twice")
        return self.models


@dataclass(frozen=True)
class Embeddings:
    """The models a command was given as embeddings: the k-th ``--text-embeddings`` with the k-th
    ``--video-embeddings``, named by the ``NAME=`` of either (the same if both) or the text file's name."""

    text: list[str]
    video: list[str]
    similarity: str = "dot"

    def read(self, caption_ids: list[str], video_ids: list[str]) -> dict[str, ScoreSource]:
        from tvrbench.io.scores import open_scores

        if len(self.text) != len(self.video):
            raise InputError(None, "give --video-embeddings once for each --text-embeddings: the k-th of each are one model")
        models = {}
        for text, video in zip(self.text, self.video):
            text_name, text_path = split_named_path(text, "--text-embeddings")
            video_name, video_path = split_named_path(video, "--video-embeddings")
            if text_name and video_name and text_name != video_name:
                raise InputError(None, f"--text-embeddings {text_name} is paired with --video-embeddings {video_name}: give them in the same order")
            name = text_name or video_name or default_name(text_path)
            if name in models:
                raise InputError(None, f"--text-embeddings: the name {name!r} is given twice; name each model with NAME=PATH")
            models[name] = open_scores((text_path, video_path), caption_ids, video_ids, self.similarity)
        return models


def read_inputs(
    reading: CaptionsReading,
    queries: Path,
    videos: Path,
    scores: list[str] = (),
    fire: Optional[Path] = None,
    dataset: Optional[str] = None,
    fire_required: bool = True,
    embeddings: Embeddings | None = None,
) -> Inputs:
    """Captions, video ids, the ``--scores`` models and those given as ``embeddings`` (their names
    name plot files), and the FIRE labels of one dataset (``None`` when optional and not given)."""
    from tvrbench.io.captions import read_video_ids

    if embeddings is not None and not (scores or embeddings.text or embeddings.video):
        raise InputError(None, "give a model: --scores, or --text-embeddings and --video-embeddings")
    captions, video_ids = reading.read(queries), read_video_ids(videos)
    models = open_named_scores(scores or (), "--scores", captions.caption_ids, video_ids)
    score_files = [model.source for model in models.values()]  # embeddings: the engine signs them
    for name, model in (embeddings.read(captions.caption_ids, video_ids) if embeddings else {}).items():
        if name in models:
            raise InputError(None, f"the model name {name!r} is given to --scores and to --text-embeddings; name each model with NAME=PATH")
        models[name] = model
    for name in models:
        safe_name(name, "model name (it names plot files)")
    if fire is None and fire_required:
        raise InputError(None, "this analysis needs FIRE labels: give --fire F.json")
    labels = None if fire is None else read_fire_dataset(fire, captions, dataset)
    return Inputs(captions, video_ids, models, labels, {"queries": queries, "videos": videos, "scores": score_files, "fire": fire})
