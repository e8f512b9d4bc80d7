"""The tables of a FIRE analysis's JSON file, whichever analysis wrote it (what ``tvrbench report`` shows).

An analysis is recognised by the ``analysis`` field of the signature in its JSON (``fire-bootstrap``), the
top-level one first; Table 1 and Table 4 written before they had their own signature (issue 25), which
carry only the engine's, by their shape: ``rows``, ``table``, ``signatures`` and ``rows`` of models and
labels. Each table is built by the analysis's own ``*_tables``, the function its result object prints
with, so the report and the command line show the same table.
"""

from __future__ import annotations

import importlib

from tvrbench.io.writers import unmarked
from tvrbench.results import Table
from tvrbench.signature import Signature

TABLES = {  # the signature's analysis field -> (module of tvrbench.evaluation.fire, its tables function)
    "fire-agreement": ("agreement", "agreement_tables"),
    "fire-compare": ("compare", "comparison_tables"),
    "fire-overlap": ("overlap", "overlap_tables"),
    "fire-pooling": ("pooling", "pooling_tables"),
    "fire-bootstrap": ("bootstrap", "bootstrap_tables"),
    "fire-paired": ("bootstrap", "paired_tables"),
    "fire-length": ("length", "length_tables"),
    "fire-ranks": ("ranks", "ranks_tables"),
    "fire-overlap-train": ("train_overlap", "train_overlap_tables"),
    "fire-queue": ("queue", "queue_tables"),
}


def signatures_in(value, depth: int = 0) -> list[str]:
    """Every distinct signature in a JSON value (``signature`` fields, ``signatures`` maps), in order."""
    found: list[str] = []
    if isinstance(value, dict) and depth < 4:
        for key, item in value.items():
            if key == "signature" and isinstance(item, str):
                found.append(item)
            elif key == "signatures" and isinstance(item, dict):
                found += [text for text in item.values() if isinstance(text, str)]
            else:
                found += signatures_in(item, depth + 1)
    elif isinstance(value, list) and depth < 4:
        for item in value:
            found += signatures_in(item, depth + 1)
    return list(dict.fromkeys(found))


def analysis_of(payload) -> str | None:
    """Which FIRE analysis wrote ``payload`` (a key of :data:`TABLES`), or ``None``."""
    if not isinstance(payload, dict):
        return None
    own = payload.get("signature")
    if isinstance(own, str):
        return _analysis_field(own)
    if set(payload) == {"rows", "table", "signatures"}:
        return "fire-compare"
    rows = payload.get("rows")
    if set(payload) == {"rows"} and isinstance(rows, list) and all(isinstance(r, dict) and "labels" in r for r in rows):
        return "fire-pooling"
    return next((_analysis_field(text) for text in signatures_in(payload)[:1]), None)


def _analysis_field(text: str) -> str | None:
    try:
        return Signature.parse(text).fields.get("analysis")
    except ValueError:
        return None


def analysis_tables(payload) -> list[Table] | None:
    """The tables of a FIRE analysis's JSON, or ``None`` when no FIRE analysis wrote it (or it is malformed)."""
    payload = unmarked(payload)
    name = analysis_of(payload)
    if name not in TABLES:
        return None
    module, function = TABLES[name]
    tables = getattr(importlib.import_module(f"tvrbench.evaluation.fire.{module}"), function)
    try:
        return tables(payload)
    except (KeyError, TypeError, ValueError, IndexError, StopIteration):
        return None  # edited or truncated: the report shows it as plain JSON instead
