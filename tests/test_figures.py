"""Every figure the package draws is written by one byte-stable ``save_figure``: drawing the same
figure twice gives the same PNG and SVG bytes (matplotlib alone stamps a date and random ids)."""

from __future__ import annotations

import numpy as np
import pytest

from tvrbench.proxies.studies import plot_correlation, plot_curve, plot_gmr


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_proxy_study_plots_are_byte_stable(tmp_path, suffix):
    draw = {
        "curve": lambda path: plot_curve({"bow": np.array([9.0, 3.0, 1.0])}, [0.0, 0.5, 1.0], path),
        "correlation": lambda path: plot_correlation(["bow", "syn"], np.array([[1.0, 0.4], [0.4, 1.0]]), path),
        "gmr": lambda path: plot_gmr({"mine": {"t2v": {"reported": 0.3, "lower": 0.2, "upper": 0.4}}}, "t2v", path),
    }
    for name, plot in draw.items():
        first, second = tmp_path / f"{name}_a{suffix}", tmp_path / f"{name}_b{suffix}"
        plot(first)
        plot(second)
        assert first.read_bytes() == second.read_bytes(), name
        if suffix == ".svg":
            assert b"<dc:date>" not in first.read_bytes()


def test_plots_are_png_or_svg(tmp_path):
    from tvrbench.errors import InputError

    with pytest.raises(InputError, match="plots are written as .png or .svg"):
        plot_curve({"bow": np.array([1.0])}, [0.0], tmp_path / "curve.pdf")
    assert not list(tmp_path.iterdir())
