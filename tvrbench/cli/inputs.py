"""What the commands read: captions and video ids, models' scores (``--scores NAME=PATH``), FIRE labels.

Each reader turns a bad file or option into an :class:`~tvrbench.errors.InputError` (one line, exit 2).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

import numpy as np

from tvrbench.errors import InputError
from tvrbench.io.outputs import safe_name


def split_list(text: Optional[str], convert=str) -> Optional[list]:
    """``a,b,c`` as a list (``None`` when the option was not given)."""
    if text is None:
        return None
    try:
        return [convert(part.strip()) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(None, f"cannot read {text!r} as a comma-separated list") from None


def captions_and_videos(queries: Path, videos: Path):
    from tvrbench.io.captions import read_captions, read_video_ids

    return read_captions(queries), read_video_ids(videos)


def model_name(spec: str) -> tuple[str, Path]:
    """``NAME=PATH``, or a bare path named by its file name minus a ``scores_`` prefix."""
    name, separator, path = spec.partition("=")
    if not separator:
        path = spec
        name = Path(spec).stem.removeprefix("scores_")
    if not name or not path:
        raise InputError(None, f"--scores {spec!r}: expected NAME=PATH")
    return safe_name(name, "model name (it names plot files)"), Path(path)


def read_models(specs: list[str], captions, video_ids) -> dict[str, np.ndarray]:
    """Score matrices by model name; TREC runs become matrices (unretrieved pairs rank last)."""
    from tvrbench.io.scores import read_scores
    from tvrbench.io.trec import read_run, run_to_matrix

    models: dict[str, np.ndarray] = {}
    for spec in specs:
        name, path = model_name(spec)
        if name in models:
            raise InputError(path, f"model name {name!r} is given twice; use NAME=PATH")
        if path.suffix == ".npy":
            models[name] = read_scores(path, shape=(len(captions), len(video_ids)))
        else:
            models[name] = run_to_matrix(read_run(path), captions.caption_ids, video_ids)
    return models


def read_fire_labels(path: Optional[Path], dataset: Optional[str], required: bool = True):
    """FIRE labels of one dataset (the one named, or the file's only one); ``None`` when optional and not given."""
    from tvrbench.io.fire import read_fire

    if path is None:
        if required:
            raise InputError(None, "this analysis needs FIRE labels: give --fire F.json")
        return None
    labels = read_fire(path, dataset)
    if dataset is None and len(labels.datasets()) > 1:
        raise InputError(path, f"has datasets {', '.join(labels.datasets())}; choose one with --dataset")
    return labels


def build_judgments(captions, video_ids, fire_labels, videos: Path):
    from tvrbench.evaluation import Judgments

    return Judgments.build(captions, video_ids, fire=fire_labels, videos_source=str(videos))


@contextmanager
def option_errors(option: str) -> Iterator[None]:
    """A ``ValueError`` raised inside (the engine refusing a metric name) as bad input of ``option``."""
    try:
        yield
    except ValueError as error:
        raise InputError(None, f"{option}: {error}") from None
