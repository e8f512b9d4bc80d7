"""Multiple-choice splits in Park et al.'s released TSV format: ``clip, ending0 … ending4, label``.

One row per instance: the video id, the option texts and the index of the positive. The format has
no quoting, so option texts may not contain tabs or newlines. Settings and per-instance metadata
(which option is the contrast) live in a sidecar ``MC.tsv.json`` so the TSV keeps exactly the
released columns; a split made elsewhere, without one, has its contrast option inferred by one rule
(:func:`infer_contrast_option`).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tvrbench.errors import InputError
from tvrbench.io.atomic import atomic_write
from tvrbench.io.sidecars import read_sidecar

N_OPTIONS = 5
MC_COLUMNS = ("clip", *(f"ending{i}" for i in range(N_OPTIONS)), "label")


@dataclass(frozen=True)
class MCInstance:
    clip: str
    endings: tuple[str, ...]
    label: int

    @property
    def positive(self) -> str:
        return self.endings[self.label]


def read_mc(path: str | Path) -> list[MCInstance]:
    """Read an MC TSV; InputError naming the line on a wrong header, option count or label."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "no such file")
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as error:
        raise InputError(path, f"not UTF-8 text (byte {error.start})") from None
    if not lines or tuple(lines[0].split("\t")) != MC_COLUMNS:
        raise InputError(path, f"header must be the tab-separated columns {', '.join(MC_COLUMNS)}")
    instances = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        cells = line.split("\t")
        if len(cells) != len(MC_COLUMNS):
            raise InputError(path, f"line {number}: {len(cells)} columns, expected {len(MC_COLUMNS)}")
        clip, *endings, label = cells
        if not clip.strip():
            raise InputError(path, f"line {number}: empty clip id")
        if any(not ending.strip() for ending in endings):
            raise InputError(path, f"line {number}: empty option")
        if label.strip() not in {str(i) for i in range(N_OPTIONS)}:
            raise InputError(path, f"line {number}: label {label!r} is not an option index 0-{N_OPTIONS - 1}")
        instances.append(MCInstance(clip.strip(), tuple(endings), int(label)))
    if not instances:
        raise InputError(path, "header but no instances")
    return instances


def write_mc(path: str | Path, instances: list[MCInstance]) -> None:
    """Write instances as the TSV, atomically; refuses texts the format cannot hold."""
    for instance in instances:
        if len(instance.endings) != N_OPTIONS or not 0 <= instance.label < N_OPTIONS:
            raise ValueError(f"instance {instance.clip!r} needs {N_OPTIONS} options and a label in range")
        for text in (instance.clip, *instance.endings):
            if "\t" in text or "\n" in text or "\r" in text:
                raise InputError(
                    path,
                    f"instance {instance.clip!r}: a caption or clip id holds a tab or line break, "
                    "which the MC TSV cannot hold; remove it from the input",
                )
    with atomic_write(path) as out:
        out.write("\t".join(MC_COLUMNS) + "\n")
        for instance in instances:
            out.write("\t".join((instance.clip, *instance.endings, str(instance.label))) + "\n")


def saved_instances(mc_path: str | Path, n: int) -> list[dict]:
    """The per-instance entries of the split's sidecar, one per instance ([] when they do not match)."""
    saved = read_sidecar(mc_path).get("instances") or []
    return saved if len(saved) == n else []


def saved_contrast_options(mc_path: str | Path, n: int) -> list[int | None] | None:
    """Which option is the contrast, from the split's sidecar (None for Random MC or no sidecar)."""
    return contrast_options_of(saved_instances(mc_path, n))


def contrast_options_of(saved: list[dict]) -> list[int | None] | None:
    options = [entry.get("contrast_option") for entry in saved]
    return options if any(o is not None for o in options) else None


def infer_contrast_option(instance: MCInstance) -> int:
    """For splits made elsewhere (human TSVs): the negative closest to the positive, word by word. The
    one rule: ``mc import`` records it in the sidecar and the report marks it when no sidecar names one."""
    positive = instance.positive.lower().split()
    ratios = [
        -1.0 if i == instance.label else difflib.SequenceMatcher(None, positive, ending.lower().split()).ratio()
        for i, ending in enumerate(instance.endings)
    ]
    return int(np.argmax(ratios))
