"""Paper-ready figures (matplotlib, PNG and SVG): Figures 2, 3, 4 and the rank histogram of App. G.

Every figure has a title, labelled axes with units and a legend where colours carry meaning; SVG
output is written by :func:`tvrbench.io.figures.save_figure`, byte-stable, so reruns with the same data do not change.
"""

from __future__ import annotations

import numpy as np

from tvrbench.io.figures import pyplot

OUTCOME_STYLE = {  # outcome -> (legend label template, colour)
    "both": ("Both correct", "#4c72b0"),
    "only_a": ("Only {a} correct", "#55a868"),
    "only_b": ("Only {b} correct", "#dd8452"),
    "neither": ("Neither correct", "#8c8c8c"),
}


def positives_vs_length_figure(lengths: np.ndarray, positives: np.ndarray, dataset: str, unit: str = "words"):
    """Figure 2: log-density heatmap of positives per query against caption length, with marginals."""
    from matplotlib.colors import LogNorm

    plt = pyplot()
    figure = plt.figure(figsize=(6.4, 5.6))
    grid = figure.add_gridspec(2, 2, width_ratios=(4, 1), height_ratios=(1, 4), hspace=0.05, wspace=0.05)
    heat = figure.add_subplot(grid[1, 0])
    top = figure.add_subplot(grid[0, 0], sharex=heat)
    right = figure.add_subplot(grid[1, 1], sharey=heat)
    x_edges = np.arange(lengths.min() - 0.5, lengths.max() + 1.5)
    y_edges = np.arange(positives.min() - 0.5, positives.max() + 1.5)
    counts, _, _, image = heat.hist2d(lengths, positives, bins=(x_edges, y_edges), cmap="viridis", norm=LogNorm(), cmin=1)
    colour_axis = figure.add_subplot(grid[0, 1])
    figure.colorbar(image, cax=colour_axis.inset_axes((0.1, 0.15, 0.25, 0.8)), label="Queries\n(log scale)")
    colour_axis.axis("off")
    top.hist(lengths, bins=x_edges, color="#4c72b0")
    right.hist(positives, bins=y_edges, orientation="horizontal", color="#4c72b0")
    heat.set_xlabel(f"Caption length ({unit})")
    heat.set_ylabel("Positive videos per query")
    top.set_ylabel("Queries")
    right.set_xlabel("Queries")
    top.tick_params(labelbottom=False)
    right.tick_params(labelleft=False)
    top.set_title(f"{dataset}: positive videos per query vs caption length")
    return figure


def outcomes_figure(table, model_a: str, model_b: str, xlabel: str, title: str):
    """Figure 3 / 8: stacked shares of both / only A / only B / neither per bin, with the bin sizes."""
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7.2, 4.2))
    centres = (table.edges[:-1] + table.edges[1:]) / 2
    width = np.diff(table.edges) * 0.9
    bottom = np.zeros(len(centres))
    for column, outcome in enumerate(table.outcomes):
        label, colour = OUTCOME_STYLE[outcome]
        share = table.shares[:, column]
        axis.bar(centres, share, width=width, bottom=bottom, color=colour, label=label.format(a=model_a, b=model_b))
        bottom += share
    axis.set_ylim(0, 1)
    axis.set_xlabel(xlabel)
    axis.set_ylabel("Share of queries in bin")
    counts_axis = axis.twinx()
    counts_axis.plot(centres, table.totals, color="black", marker="o", markersize=3, label="Queries per bin")
    counts_axis.set_ylabel("Queries per bin")
    counts_axis.set_ylim(bottom=0)
    handles, labels = axis.get_legend_handles_labels()
    more_handles, more_labels = counts_axis.get_legend_handles_labels()
    axis.legend(
        handles + more_handles, labels + more_labels, loc="upper center", bbox_to_anchor=(0.5, -0.15), ncol=3, frameon=False, fontsize="small"
    )
    axis.set_title(title)
    return figure


def bootstrap_figure(by_size: dict, metric: str, model: str):
    """Figure 4: distribution of |resample mean − full mean| per sample size, quantile marked."""
    plt = pyplot()
    sizes = sorted(by_size)
    figure, axes = plt.subplots(len(sizes), 1, figsize=(6.4, 1.9 * len(sizes) + 0.8), sharex=True, squeeze=False)
    for axis, size in zip(axes[:, 0], sizes):
        result = by_size[size]
        axis.hist(result.differences, bins=50, color="#4c72b0")
        quantile = result.quantile
        axis.axvline(quantile, color="#c44e52", linestyle="--", label=f"{result.confidence:.0%} quantile = {quantile:.3f}")
        axis.set_ylabel("Resamples")
        axis.set_title(f"N = {size:,} queries", fontsize="medium", loc="left")
        axis.legend(loc="upper right", fontsize="small", frameon=False)
    axes[-1, 0].set_xlabel(f"|{metric} on resample − {metric} on all queries|")
    figure.suptitle(f"{model}: bootstrap estimate of detectable {metric} difference")
    figure.tight_layout()
    return figure


def positive_ranks_figure(ranks_original: np.ndarray, ranks_fire: np.ndarray, max_rank: int, dataset: str, model: str):
    """Appendix G: how many positives sit at each rank of a model's ranking, by label source.

    Ranks above ``max_rank`` are gathered in one last bar labelled ``>max_rank``.
    """
    plt = pyplot()
    figure, axis = plt.subplots(figsize=(7.2, 4.0))
    positions = np.arange(1, max_rank + 2)
    bottom = np.zeros(len(positions))
    for ranks, label, colour in ((ranks_original, "Original positive", "#4c72b0"), (ranks_fire, "FIRE positive", "#dd8452")):
        counts = np.bincount(np.minimum(ranks, max_rank + 1), minlength=max_rank + 2)[1:]
        axis.bar(positions, counts, bottom=bottom, color=colour, label=label, width=0.85)
        bottom += counts
    ticks = [1, *range(5, max_rank - 1, 5), max_rank + 1]
    axis.set_xticks(ticks, [str(t) for t in ticks[:-1]] + [f">{max_rank}"])
    axis.set_xlabel(f"Rank of the positive video in {model}'s ranking (1 = top)")
    axis.set_ylabel("Positive (query, video) pairs")
    axis.set_title(f"{dataset}: rank of positive videos, {model}")
    axis.legend(frameon=False)
    return figure
