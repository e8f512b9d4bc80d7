"""One shape for every result: an analysis returns an object with its signature, its JSON and its table.

A result is a frozen dataclass that has

- ``signature``: the :class:`~tvrbench.signature.Signature` of the settings, versions and input files
  behind it, kept as an object until it is written (results that gather several engine runs have
  ``signatures`` instead);
- ``to_json()``: exactly what ``--json`` writes;
- ``title``, ``columns`` and ``rows`` (every cell a string), and optionally ``notes`` (lines under it): its
  table in the paper's layout, which the command line prints (:func:`tvrbench.cli.outputs.print_result`);
- optionally ``parts``: further tables of the same result, shown under its own (Figure 8's under Table 7);
- optionally ``figures()``: the paper's figures as ``(file stem, matplotlib figure)`` pairs, which
  ``--plots DIR`` writes for every command that draws (:func:`tvrbench.cli.outputs.save_figures`).

So a number computed in a notebook and the one the command line wrote carry the same signature. The
tables are views of the JSON (:class:`TablesOfJson`), so a report rebuilds them from the written file
(:mod:`tvrbench.report.tables` finds which result wrote it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Protocol

from tvrbench.signature import Signature, input_digest

Sources = Mapping[str, str | Path | list[str | Path] | None]  # input name (queries, videos, scores, fire, ...) -> the file(s) it was read from


class Result(Protocol):
    title: str
    columns: list[str]
    rows: list[list[str]]

    def to_json(self) -> dict: ...


@dataclass(frozen=True)
class Table:
    """One table as the paper lays it out: a title, named columns, rows of formatted cells, and notes:
    lines shown under it that say what it means (a table of notes alone, without columns, is prose)."""

    title: str
    columns: list[str]
    rows: list[list[str]]
    notes: tuple[str, ...] = ()


class TablesOfJson:
    """A result whose tables are built from its JSON by ``tables_of(payload)`` (its own first, then its
    parts): the command line and the report, which has only the file, show the same tables."""

    def tables_of(self, payload: dict) -> list[Table]:
        raise NotImplementedError

    @cached_property
    def tables(self) -> list[Table]:
        return self.tables_of(self.to_json())

    @property
    def title(self) -> str:
        return self.tables[0].title

    @property
    def columns(self) -> list[str]:
        return self.tables[0].columns

    @property
    def rows(self) -> list[list[str]]:
        return self.tables[0].rows

    @property
    def notes(self) -> tuple[str, ...]:
        return self.tables[0].notes

    @property
    def parts(self) -> list[Table]:
        return self.tables[1:]


def analysis_signature(analysis: str, sources: Sources | None, fields: Mapping[str, object], libraries: Iterable[str] = ("numpy",)) -> Signature:
    """``analysis:NAME``, then every input file in ``sources`` (in their order; the rule is
    :func:`~tvrbench.signature.input_digest`), then the settings ``fields``."""
    signature = Signature({"analysis": analysis}, libraries=libraries)
    for name, paths in (sources or {}).items():
        if paths:  # None or no file: the input was not given
            signature.add(name, input_digest(name, paths))
    for key, value in fields.items():
        signature.add(key, value)
    return signature


def count_or_share(value) -> str:
    """A table cell: ``—`` for none, floats to three decimals, integers with thousands separators."""
    return "—" if value is None else f"{value:.3f}" if isinstance(value, float) else f"{value:,}"
