"""``tvrbench contrast object|attribute|relation|counting|swap|add|event-order``: the word-edit kinds,
one command each, made from the registry (:data:`tvrbench.generators.edits.EDIT_KINDS`): every kind
takes the same options and writes the same files, so the commands are one function. They join the
``contrast`` group of :mod:`tvrbench.cli.contrast`, as ``contrast refine`` does; this module is the one
``tvrbench contrast`` loads."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from tvrbench.cli import contrast_refine  # noqa: F401  (contrast refine joins the group with the kinds)
from tvrbench.cli.contrast import CONTRAST_OUT, DEVICE_HELP, ContrastOptions, contrast, contrast_options, report_run
from tvrbench.cli.inputs import captions_option, reads_captions, selects_captions
from tvrbench.cli.outputs import writes
from tvrbench.generators.edits import EDIT_KINDS, EditKind
from tvrbench.io.inputs import CaptionsReading, CaptionsSelection


def edit_command(kind: EditKind):
    """The command of one word-edit kind: its captions and the shared options in, the records and their sidecar out."""

    def command(
        reading: CaptionsReading,
        selection: CaptionsSelection,
        captions: Path = captions_option(),
        *,
        given: ContrastOptions,
        device: Optional[str] = typer.Option(None, "--device", help=DEVICE_HELP + " [default: auto]"),
    ):
        from tvrbench.generators import edit_contrasts

        settings = given.settings(kind.settings_class(), device=device)
        with given.client() as client:
            _, run = edit_contrasts(kind.name, selection.apply(reading.read(captions), settings.seed), given.out, settings, client)
        report_run(given.out, run)

    command.__name__ = kind.module
    command.__doc__ = f"{kind.summary} E.g. {kind.example}."
    decorated = writes(out=CONTRAST_OUT)(selects_captions(reads_captions(contrast_options(kind.name, "the judge of the candidates")(command))))
    return contrast.command(kind.name)(decorated)


for _kind in EDIT_KINDS.values():
    edit_command(_kind)
