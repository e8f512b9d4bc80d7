"""How commands and the Python API name their files and read captions, one rule each, so every
command reads the same file the same way (a model's scores and labels: :mod:`tvrbench.evaluation.inputs`):

* ``NAME=PATH`` (:func:`split_named_path`, :func:`named_paths`): the text before the first ``=``
  names the file, unless the whole text is an existing path (a path may contain ``=``). A bare path
  is named by its file name up to the first dot, without a ``scores_`` prefix (``scores_clip.npy``
  → ``clip``). Two files of one option may not share a name.
* Captions (:class:`CaptionsReading`, :class:`CaptionsSelection`): a command's captions options.

Every reader raises :class:`~tvrbench.errors.InputError` naming the file or option and the problem.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tvrbench.errors import InputError
from tvrbench.io.captions import Captions, read_captions

# --------------------------------------------------------------------------- NAME=PATH


def default_name(path: Path) -> str:
    """A file's name up to its first dot, without a ``scores_`` prefix."""
    return path.name.split(".")[0].removeprefix("scores_")


def split_named_path(value: str | Path, option: str) -> tuple[str | None, Path]:
    """``NAME=PATH`` → (NAME, PATH); a bare path → (None, PATH). ``option`` names the flag in errors."""
    text = str(value)
    name, separator, path = text.partition("=")
    if not separator or os.path.exists(text):
        return None, Path(text)
    if not name or not path:
        raise InputError(None, f"{option} {text!r}: expected NAME=PATH")
    return name, Path(path)


def named_paths(values: Iterable[str | Path], option: str, name_required: bool = False) -> dict[str, Path]:
    """Paths by name (bare paths named by :func:`default_name`, unless ``name_required``); a name given
    twice is refused."""
    named: dict[str, Path] = {}
    for value in values:
        name, path = split_named_path(value, option)
        if name is None:
            if name_required:
                raise InputError(None, f"{option} {str(value)!r}: expected NAME=PATH")
            name = default_name(path)
        if name in named:
            raise InputError(None, f"{option}: the name {name!r} is given twice; name each file with NAME=PATH")
        named[name] = path
    return named


# --------------------------------------------------------------------------- captions


SAMPLE_STREAM = 0x5A3D1E  # --sample's random stream, apart from the generators' own of the same seed


@dataclass(frozen=True)
class CaptionsReading:
    """How to read captions files: the ``--format``, ``--video-list`` and ``--trust-pickle`` of a command."""

    format: str = "auto"
    video_list: Path | None = None
    trust_pickle: bool = False

    def read(self, path: str | Path, filter_videos: bool = True) -> Captions:
        """The captions of ``path``; ``filter_videos=False`` for a second file (training captions) that
        the video list of the evaluated split does not describe."""
        video_list = self.video_list if filter_videos else None
        return read_captions(path, format=self.format, video_list=video_list, trust_pickle=self.trust_pickle)


@dataclass(frozen=True)
class CaptionsSelection:
    """A part of the captions to try a command on: the first ``limit``, or ``sample`` drawn with the seed
    (kept in file order); the signature then names that part (its digest and count)."""

    limit: int | None = None
    sample: int | None = None

    def apply(self, captions: Captions, seed: int) -> Captions:
        if self.limit is not None and self.sample is not None:
            raise InputError(None, "--limit and --sample: give one of them")
        if self.limit is not None:
            return captions.subset(range(min(self.limit, len(captions))))
        if self.sample is not None and self.sample < len(captions):
            import numpy as np

            return captions.subset(sorted(np.random.default_rng([seed, SAMPLE_STREAM]).choice(len(captions), self.sample, replace=False)))
        return captions
