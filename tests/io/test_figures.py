"""Every figure the package draws is written by one byte-stable ``save_figure``: drawing the same
figure twice gives the same PNG and SVG bytes (matplotlib alone stamps a date and random ids)."""

from __future__ import annotations

import numpy as np
import pytest

from tvrbench.io.figures import save_figure
from tvrbench.proxies.studies import correlation_figure, curve_figure, gmr_figure


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_proxy_study_figures_are_byte_stable(tmp_path, fmt):
    draw = {
        "curve": lambda: curve_figure({"bow": np.array([9.0, 3.0, 1.0])}, [0.0, 0.5, 1.0]),
        "correlation": lambda: correlation_figure(["bow", "syn"], np.array([[1.0, 0.4], [0.4, 1.0]])),
        "gmr": lambda: gmr_figure({"mine": {"t2v": {"reported": 0.3, "lower": 0.2, "upper": 0.4}}}, "t2v"),
    }
    for name, figure in draw.items():
        [first] = save_figure(figure(), tmp_path / f"{name}_a", (fmt,))
        [second] = save_figure(figure(), tmp_path / f"{name}_b", (fmt,))
        assert first.read_bytes() == second.read_bytes(), name
        if fmt == "svg":
            assert b"<dc:date>" not in first.read_bytes()
