"""Figures written byte-stable: the same figure gives the same PNG and SVG bytes on every run.

Matplotlib stamps an SVG with the date and random element ids, and a PNG with its own version; here
the SVG has no date and ids salted with a fixed string, and the PNG names tvrbench as its software.
Every plot of the package (the FIRE figures, the proxy studies) is written by :func:`save_figure`.
"""

from __future__ import annotations

from pathlib import Path

from tvrbench.io.atomic import atomic_write

HASH_SALT = "tvrbench"


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure, stem: str | Path, formats=("png", "svg"), dpi: int = 200) -> list[Path]:
    """Write ``stem.FORMAT`` for each of ``formats`` (png, svg) atomically, then close the figure."""
    import matplotlib

    written = []
    with matplotlib.rc_context({"svg.hashsalt": HASH_SALT}):
        for fmt in formats:
            path = Path(f"{stem}.{fmt}")
            metadata = {"Date": None} if fmt.lower() == "svg" else {"Software": "tvrbench"}
            with atomic_write(path, "wb") as out:
                figure.savefig(out, format=fmt.lower(), dpi=dpi, bbox_inches="tight", metadata=metadata)
            written.append(path)
    pyplot().close(figure)
    return written
