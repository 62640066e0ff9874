"""The papers' figures from an experiment's tables (issue 4, part 3), as PNG and SVG.

An experiment directory (written by ``dprm evaluate``) holds ``redescriptions.csv``
(one row per redescription of every run, with noisy and true statistics) and
``runs.csv`` (one row per run). :func:`read_experiment` reads and checks them (one
directory or several, combined); :func:`write_figures` draws:

=========================== =============================================================
file (``figures/NAME``)     what
=========================== =============================================================
``scatter_jaccard``         reported (noisy) vs true Jaccard, one panel per algorithm and
                            budget, pruned redescriptions marked, the diagonal drawn
                            (the tree paper's Figures 2–3)
``histogram_true_jaccard``  histograms of the true Jaccard, stacked: pruned / kept and
                            not significant / kept and significant (Figures 4–5)
``box_true_jaccard``        distribution of the true Jaccard of kept redescriptions per
                            method (Table 4 as a figure)
``box_abs_error_jaccard``   distribution of \\|noisy − true\\| Jaccard of kept
                            redescriptions per private method (Table 5 as a figure)
``runtime``                 wall time vs number of rows per algorithm (Figure 6)
=========================== =============================================================

Reading the tables, the methods and their labels live in
:mod:`dprm.evaluation.experiment_reader` (re-exported here). A figure without data
is not drawn; :func:`figure_notes` says why (the report shows that). Figures are
drawn with matplotlib's object interface on the Agg canvas (no display, no global
pyplot state) and written deterministically: the same tables give byte-identical
files (no date in the SVG, fixed SVG ids).

*Significant* means ``true_pvalue < alpha`` (0.01, the papers' threshold), the rule
of :func:`dprm.evaluation.share_significant`; a method is an (algorithm, budget)
pair, and a non-private algorithm (empty ``epsilon``) has the budget "non-private".
Rows with an unknown true or noisy Jaccard cannot be placed and are left out of the
plots that need them.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from dprm.errors import DataError, DprmError
from dprm.evaluation.experiment_reader import (
    REDESCRIPTION_COLUMNS,
    RUN_COLUMNS,
    Experiment,
    _algorithm_order,
    budget_label,
    experiment_alpha,
    method_label,
    methods,
    read_experiment,
    select_method,
)
from dprm.file_sets import write_all

__all__ = [
    "REDESCRIPTION_COLUMNS",
    "RUN_COLUMNS",
    "FIGURE_NAMES",
    "Experiment",
    "read_experiment",
    "method_label",
    "methods",
    "select_method",
    "budget_label",
    "scatter_figure",
    "histogram_figure",
    "distribution_figure",
    "runtime_figure",
    "build_figures",
    "figure_notes",
    "experiment_alpha",
    "render_figure",
    "figures_directory",
    "render_figures",
    "save_figures",
    "write_figure_files",
    "write_figures",
]

#: The figures :func:`build_figures` draws, in the report's order.
FIGURE_NAMES: tuple[str, ...] = (
    "scatter_jaccard",
    "histogram_true_jaccard",
    "box_true_jaccard",
    "box_abs_error_jaccard",
    "runtime",
)

#: Colours of the three parts of the histograms and of the algorithms (colour-blind safe).
PART_COLOURS = {"pruned": "#bdbdbd", "insignificant": "#f28e2b", "significant": "#4e79a7"}
ALGORITHM_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                     "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac")


# -- panels -------------------------------------------------------------------------


def _grid(frame: pd.DataFrame, panel_size: tuple[float, float], title: str, max_columns: int = 4
          ) -> tuple[Figure, dict[tuple[str, float], Axes]]:
    """A figure with one panel per method, in :func:`methods` order, ``max_columns`` a row."""
    pairs = methods(frame)
    n_cols = min(len(pairs), max_columns)
    n_rows = -(-len(pairs) // n_cols)
    figure = Figure(figsize=(panel_size[0] * n_cols + 0.4, panel_size[1] * n_rows + 0.6), layout="constrained")
    FigureCanvasAgg(figure)
    figure.suptitle(title, fontsize=12)
    axes = figure.subplots(n_rows, n_cols, squeeze=False).ravel()
    panels: dict[tuple[str, float], Axes] = {}
    for ax, (algorithm, epsilon) in zip(axes, pairs):
        ax.set_title(method_label(algorithm, epsilon), fontsize=10)
        panels[(algorithm, epsilon)] = ax
    for ax in axes[len(pairs):]:
        ax.set_visible(False)
    return figure, panels


# -- the figures --------------------------------------------------------------------


def scatter_figure(redescriptions: pd.DataFrame) -> Figure | None:
    """Reported (noisy) vs true Jaccard, a panel per method (the papers' Figures 2–3).

    Kept redescriptions are filled dots, pruned ones grey crosses; the dashed
    diagonal is "reported = true". Rows with an unknown Jaccard are left out.

    Returns
    -------
    matplotlib.figure.Figure or None
        None when no row has both values. Each panel's kept points are its first
        collection (labelled ``kept``), its pruned points the second (``pruned``).

    Examples
    --------
    >>> frame = pd.DataFrame({"algorithm": "a", "epsilon": 1.0, "pruned": [False, True],
    ...                       "true_jaccard": [0.2, 0.4], "noisy_jaccard": [0.3, 0.9]})
    >>> figure = scatter_figure(frame)
    >>> sum(len(c.get_offsets()) for ax in figure.axes for c in ax.collections)
    2
    """
    frame = redescriptions.dropna(subset=["true_jaccard", "noisy_jaccard"])
    if frame.empty:
        return None
    figure, panels = _grid(frame, (3.3, 3.1), "Reported (noisy) vs true Jaccard")
    low = min(0.0, float(frame["noisy_jaccard"].min()), float(frame["true_jaccard"].min()))
    high = max(1.0, float(frame["noisy_jaccard"].max()), float(frame["true_jaccard"].max()))
    margin = 0.03 * (high - low)
    for (algorithm, epsilon), ax in panels.items():
        rows = select_method(frame, algorithm, epsilon)
        pruned = rows["pruned"].to_numpy(dtype=bool)
        kept = rows[~pruned]
        cut = rows[pruned]
        ax.plot([low, high], [low, high], linestyle="--", color="#666", linewidth=0.9)
        ax.scatter(kept["true_jaccard"], kept["noisy_jaccard"], s=16, color="#4e79a7", alpha=0.75,
                   edgecolors="none", label="kept", zorder=3)
        ax.scatter(cut["true_jaccard"], cut["noisy_jaccard"], s=18, color="#8c8c8c", alpha=0.7,
                   marker="x", linewidths=0.9, label="pruned", zorder=2)
        ax.set_title(f"{method_label(algorithm, epsilon)}\n{len(kept)} kept, {len(cut)} pruned", fontsize=9.5)
        ax.set_xlim(low - margin, high + margin)
        ax.set_ylim(low - margin, high + margin)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xlabel("true Jaccard")
        ax.set_ylabel("reported Jaccard")
        ax.grid(True, color="#eee", linewidth=0.6)
    handles = [Line2D([], [], linestyle="none", marker="o", color="#4e79a7", label="kept"),
               Line2D([], [], linestyle="none", marker="x", color="#8c8c8c", label="pruned"),
               Line2D([], [], linestyle="--", color="#666", label="reported = true")]
    figure.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=9, frameon=False)
    return figure


def _parts(frame: pd.DataFrame, alpha: float) -> dict[str, np.ndarray]:
    pruned = frame["pruned"].to_numpy(dtype=bool)
    significant = (frame["true_pvalue"].to_numpy(dtype=float) < alpha)
    true = frame["true_jaccard"].to_numpy(dtype=float)
    return {
        "pruned": true[pruned],
        "insignificant": true[~pruned & ~significant],
        "significant": true[~pruned & significant],
    }


HISTOGRAM_BINS = np.linspace(0.0, 1.0, 21)


def histogram_figure(redescriptions: pd.DataFrame, alpha: float = 0.01) -> Figure | None:
    """Histograms of the true Jaccard, stacked in three parts, a panel per method (Figures 4–5).

    The parts: pruned; kept and not significant (``true_pvalue ≥ alpha`` or unknown);
    kept and significant (``true_pvalue < alpha``). Twenty bins of width 0.05 over
    [0, 1]. In each panel the bars of a part form one container, in that order.

    Returns
    -------
    matplotlib.figure.Figure or None
        None when no row has a true Jaccard.

    Examples
    --------
    >>> frame = pd.DataFrame({"algorithm": "a", "epsilon": 1.0, "pruned": [False, False, True],
    ...                       "true_jaccard": [0.22, 0.9, 0.5], "true_pvalue": [0.5, 1e-5, 1e-9]})
    >>> ax = histogram_figure(frame).axes[0]
    >>> [int(sum(bar.get_height() for bar in part)) for part in ax.containers]
    [1, 1, 1]
    """
    frame = redescriptions.dropna(subset=["true_jaccard"])
    if frame.empty:
        return None
    figure, panels = _grid(frame, (3.4, 2.6), f"True Jaccard: pruned, kept not significant, "
                                              f"kept significant (p < {alpha:g})")
    width = HISTOGRAM_BINS[1] - HISTOGRAM_BINS[0]
    labels = {"pruned": "pruned", "insignificant": "kept, not significant", "significant": "kept, significant"}
    for (algorithm, epsilon), ax in panels.items():
        rows = select_method(frame, algorithm, epsilon)
        bottom = np.zeros(len(HISTOGRAM_BINS) - 1)
        sizes = []
        for part, values in _parts(rows, alpha).items():
            counts, _ = np.histogram(np.clip(values, 0.0, 1.0), bins=HISTOGRAM_BINS)
            ax.bar(HISTOGRAM_BINS[:-1], counts, width=width, bottom=bottom, align="edge",
                   color=PART_COLOURS[part], edgecolor="white", linewidth=0.4, label=labels[part])
            bottom += counts
            sizes.append(len(values))
        ax.set_title(f"{method_label(algorithm, epsilon)}\n{sizes[1] + sizes[2]} kept ({sizes[2]} significant), "
                     f"{sizes[0]} pruned", fontsize=9.5)
        ax.set_xlim(0, 1)
        ax.set_xlabel("true Jaccard")
        ax.set_ylabel("redescriptions")
        ax.grid(True, axis="y", color="#eee", linewidth=0.6)
        ax.set_axisbelow(True)
    handles = [Patch(color=PART_COLOURS[part], label=label) for part, label in labels.items()]
    figure.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=9, frameon=False)
    return figure


#: Fewest values for which :func:`distribution_figure` draws a density (violin) behind the box.
VIOLIN_MIN = 10

DISTRIBUTIONS = {
    "true_jaccard": ("True Jaccard of kept redescriptions, per method", "true Jaccard"),
    "abs_error_jaccard": ("|reported − true| Jaccard of kept redescriptions, per private method",
                          "|reported − true| Jaccard"),
}


def distribution_figure(redescriptions: pd.DataFrame, value: str = "true_jaccard") -> Figure | None:
    """Box plots (with the points' violin behind) of ``value`` over kept redescriptions per method.

    ``value`` is ``"true_jaccard"`` (Table 4 as a figure) or ``"abs_error_jaccard"``
    (Table 5; only private methods: a non-private method reports exact values).
    Methods without kept values get an empty slot with ``n = 0``.

    Returns
    -------
    matplotlib.figure.Figure or None
        None when no method has a kept value.

    Examples
    --------
    >>> frame = pd.DataFrame({"algorithm": ["a", "a", "b"], "epsilon": 1.0, "pruned": False,
    ...                       "true_jaccard": [0.2, 0.4, 0.5]})
    >>> [t.get_text() for t in distribution_figure(frame).axes[0].get_yticklabels()]
    ['a, ε = 1\\nn = 2', 'b, ε = 1\\nn = 1']
    """
    if value not in DISTRIBUTIONS:
        raise ValueError(f"value must be one of {', '.join(DISTRIBUTIONS)}, got {value!r}")
    frame = redescriptions
    if value == "abs_error_jaccard":
        frame = frame[frame["epsilon"].notna()]
    pairs = methods(frame)  # every method, also those without a kept redescription (n = 0)
    frame = frame[~frame["pruned"].to_numpy(dtype=bool)]
    samples = []
    for algorithm, epsilon in pairs:
        values = select_method(frame, algorithm, epsilon)[value].to_numpy(dtype=float)
        samples.append(values[~np.isnan(values)])
    if not any(s.size for s in samples):
        return None
    title, label = DISTRIBUTIONS[value]
    figure = Figure(figsize=(8.5, 0.9 + 0.42 * len(pairs) + 0.6), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    positions = np.arange(len(pairs), 0, -1, dtype=float)  # first method on top
    colours = _algorithm_colours({a for a, _ in pairs})
    filled = [i for i, s in enumerate(samples) if s.size >= VIOLIN_MIN and np.ptp(s) > 0]
    if filled:
        parts = ax.violinplot([samples[i] for i in filled], positions=positions[filled], orientation="horizontal",
                              showextrema=False, widths=0.8)
        for i, body in zip(filled, parts["bodies"]):
            body.set_facecolor(colours[pairs[i][0]])
            body.set_alpha(0.22)
            body.set_edgecolor("none")
    present = [i for i, s in enumerate(samples) if s.size]
    boxes = ax.boxplot([samples[i] for i in present], positions=positions[present], orientation="horizontal",
                       widths=0.35, patch_artist=True, showfliers=True,
                       medianprops={"color": "black", "linewidth": 1.4},
                       flierprops={"marker": ".", "markersize": 3, "markerfacecolor": "#555", "alpha": 0.6})
    for i, box in zip(present, boxes["boxes"]):
        box.set_facecolor(colours[pairs[i][0]])
        box.set_alpha(0.8)
    ax.set_yticks(positions, [f"{method_label(a, e)}\nn = {s.size}" for (a, e), s in zip(pairs, samples)],
                  fontsize=8.5)
    ax.set_ylim(0.4, len(pairs) + 0.6)
    ax.set_xlabel(label)
    if value == "true_jaccard":
        ax.set_xlim(-0.02, 1.02)
    else:
        ax.set_xlim(left=0)
    ax.grid(True, axis="x", color="#eee", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.set_title(title, fontsize=12)
    return figure


def _algorithm_colours(algorithms: Iterable[str]) -> dict[str, str]:
    ordered = _algorithm_order(algorithms)
    return {a: ALGORITHM_COLOURS[i % len(ALGORITHM_COLOURS)] for i, a in enumerate(ordered)}


def runtime_figure(runs: pd.DataFrame) -> Figure | None:
    """Wall time vs number of rows, per algorithm (the tree paper's Figure 6).

    Every finished run (``ok``) with known ``rows`` and ``seconds`` is a faint point;
    the line joins each algorithm's median time per data size (pooled over budgets).
    Both axes are logarithmic when the sizes span more than a factor of ten.

    Returns
    -------
    matplotlib.figure.Figure or None
        None when ``runs`` has no ``rows`` column or no finished run with both
        values. The points of an algorithm are one collection.

    Examples
    --------
    >>> runs = pd.DataFrame({"algorithm": ["a", "a", "b"], "epsilon": 1.0, "rows": [100, 200, 100],
    ...                      "seconds": [1.0, 2.0, 0.5], "ok": True})
    >>> sum(len(c.get_offsets()) for c in runtime_figure(runs).axes[0].collections)
    3
    """
    if "rows" not in runs.columns or "seconds" not in runs.columns:
        return None
    ok = runs["ok"].to_numpy(dtype=bool) if "ok" in runs.columns else np.ones(len(runs), dtype=bool)
    frame = runs[ok].dropna(subset=["rows", "seconds"])
    if frame.empty:
        return None
    figure = Figure(figsize=(7.5, 4.6), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    colours = _algorithm_colours(frame["algorithm"])
    for algorithm in _algorithm_order(frame["algorithm"]):
        rows = frame[frame["algorithm"] == algorithm]
        ax.scatter(rows["rows"], rows["seconds"], s=14, color=colours[algorithm], alpha=0.35, edgecolors="none")
        medians = rows.groupby("rows", sort=True)["seconds"].median()
        ax.plot(medians.index.to_numpy(dtype=float), medians.to_numpy(dtype=float), marker="o", markersize=5,
                color=colours[algorithm], linewidth=1.6, label=f"{algorithm} ({len(rows)} run{'' if len(rows) == 1 else 's'})")
    sizes = frame["rows"].to_numpy(dtype=float)
    if sizes.min() > 0 and sizes.max() / sizes.min() > 10:
        ax.set_xscale("log")
        if frame["seconds"].min() > 0:
            ax.set_yscale("log")
    else:
        ax.set_xlim(0, 1.08 * sizes.max() if sizes.max() > 0 else 1)
        ax.set_ylim(bottom=0)
    ax.set_xlabel("rows of the data")
    ax.set_ylabel("wall time per run (s)")
    ax.set_title("Runtime vs data size (line: median per size)", fontsize=12)
    ax.grid(True, color="#eee", linewidth=0.6, which="both")
    ax.set_axisbelow(True)
    ax.legend(fontsize=8.5, frameon=True)
    return figure


def build_figures(experiment: Experiment, alpha: float = 0.01) -> dict[str, Figure | None]:
    """Every figure of :data:`FIGURE_NAMES` (None where there is no data for it)."""
    frame = experiment.redescriptions
    return {
        "scatter_jaccard": scatter_figure(frame),
        "histogram_true_jaccard": histogram_figure(frame, alpha),
        "box_true_jaccard": distribution_figure(frame, "true_jaccard"),
        "box_abs_error_jaccard": distribution_figure(frame, "abs_error_jaccard"),
        "runtime": runtime_figure(experiment.runs),
    }


def figure_notes(experiment: Experiment) -> dict[str, str]:
    """Why each figure that :func:`build_figures` leaves out has no data (name → sentence)."""
    frame, runs = experiment.redescriptions, experiment.runs
    kept = frame[~frame["pruned"].to_numpy(dtype=bool)]
    notes = {}
    if frame.dropna(subset=["true_jaccard", "noisy_jaccard"]).empty:
        notes["scatter_jaccard"] = "no redescription with both a reported and a true Jaccard"
    if frame.dropna(subset=["true_jaccard"]).empty:
        notes["histogram_true_jaccard"] = "no redescription with a true Jaccard"
    if kept.dropna(subset=["true_jaccard"]).empty:
        notes["box_true_jaccard"] = "no kept (not pruned) redescription with a true Jaccard"
    if kept[kept["epsilon"].notna()].dropna(subset=["abs_error_jaccard"]).empty:
        notes["box_abs_error_jaccard"] = "no kept redescription of a private algorithm with a known error"
    if "rows" not in runs.columns:
        notes["runtime"] = "runs.csv has no 'rows' column"
    elif runs[runs["ok"].to_numpy(dtype=bool)].dropna(subset=["rows", "seconds"]).empty:
        notes["runtime"] = "no finished run with known rows and seconds"
    return notes


_CLIP_ID = re.compile(rb"(?<=url\(#)p[0-9a-f]{10}(?=\))|(?<=id=\")p[0-9a-f]{10}(?=\")")


def _stable_clip_ids(svg: bytes) -> bytes:
    """Number the SVG's clip-path ids in order of appearance.

    matplotlib hashes a clip path's text, which can hold an object's memory address,
    so the ids would differ between two drawings of the same figure.
    """
    names: dict[bytes, bytes] = {}

    def rename(match: re.Match) -> bytes:
        return names.setdefault(match.group(0), b"clip%d" % len(names))

    return _CLIP_ID.sub(rename, svg)


def render_figure(figure: Figure, fmt: str) -> bytes:
    """The figure as PNG or SVG bytes, deterministic (no date, fixed SVG ids).

    Examples
    --------
    >>> figure = Figure(figsize=(2, 2)); _ = figure.subplots().plot([0, 1], [1, 0])
    >>> render_figure(figure, "svg") == render_figure(figure, "svg")
    True
    >>> render_figure(figure, "png")[:4]
    b'\\x89PNG'
    """
    import matplotlib

    buffer = io.BytesIO()
    if fmt == "svg":
        with matplotlib.rc_context({"svg.hashsalt": "dprm", "svg.fonttype": "path"}):
            figure.savefig(buffer, format="svg", metadata={"Date": None})
        return _stable_clip_ids(buffer.getvalue())
    elif fmt == "png":
        figure.savefig(buffer, format="png", dpi=110, metadata={"Software": None})
    else:
        raise ValueError(f"fmt must be 'png' or 'svg', got {fmt!r}")
    return buffer.getvalue()


def figures_directory(experiment: Experiment, figures_dir: str | os.PathLike | None) -> Path:
    """``figures_dir`` (default ``figures/`` in the first directory), created if needed."""
    directory = Path(figures_dir) if figures_dir is not None else experiment.dirs[0] / "figures"
    try:
        directory.mkdir(parents=False, exist_ok=True)
    except FileNotFoundError:
        raise DataError(f"{directory}: parent directory {directory.parent} does not exist") from None
    except OSError as err:
        raise DataError(f"{directory}: cannot create: {err.strerror or err}") from None
    if not directory.is_dir():
        raise DataError(f"{directory}: not a directory")
    return directory


def render_figures(figures: Mapping[str, Figure | None], formats: Sequence[str] = ("png", "svg"),
                   ) -> dict[str, dict[str, bytes]]:
    """The drawn figures of ``figures`` (None: not drawn) rendered in each of ``formats``, by name and format."""
    return {name: {fmt: render_figure(figure, fmt) for fmt in formats}
            for name, figure in figures.items() if figure is not None}


def save_figures(figures: dict[str, Figure | None], directory: Path) -> dict[str, dict[str, bytes]]:
    """Write each drawn figure as ``NAME.png`` and ``NAME.svg`` in ``directory`` (:func:`write_figure_files`).

    Returns the rendered bytes by name and format (the report embeds them).
    """
    rendered = render_figures(figures)
    write_figure_files(rendered, directory)
    return rendered


def write_figure_files(rendered: Mapping[str, Mapping[str, bytes]], directory: Path, *,
                       also: Mapping[Path, bytes] | None = None) -> None:
    """Write the ``rendered`` figures as ``NAME.FORMAT`` in ``directory``, and the files of ``also``, all or none.

    The files are written together (:func:`dprm.file_sets.write_all`): a failure or
    an interrupt (Ctrl-C; SIGTERM where the command turns it into one) leaves every
    one of them as it was, so a report and its figures are never a mix of an earlier
    run's and this one's. Once written, the files of the figures not drawn (no data,
    :func:`figure_notes`) that an earlier report left in ``directory`` are removed, so
    the folder holds this report's figures only; other files stay.

    Parameters
    ----------
    rendered : mapping
        Name (of :data:`FIGURE_NAMES`) to format (``png``, ``svg``) to bytes, as
        :func:`render_figures` returns them: the figures drawn.
    directory : Path
        An existing folder.
    also : mapping of Path to bytes, optional
        Other files written with the figures (the report that embeds them).

    Raises
    ------
    DprmError
        A file cannot be written (one line naming it); nothing was written then.
    """
    contents = {directory / f"{name}.{fmt}": data for name, formats in rendered.items()
                for fmt, data in formats.items()}
    contents.update(also or {})
    try:
        write_all(contents)
    except OSError as err:
        raise DprmError(f"{err.filename}: cannot write: {err.strerror or err}") from None
    for name in FIGURE_NAMES:
        if name not in rendered:
            for fmt in ("png", "svg"):
                with contextlib.suppress(FileNotFoundError):
                    (directory / f"{name}.{fmt}").unlink()


def write_figures(out_dir: str | os.PathLike | Sequence[str | os.PathLike],
                  figures_dir: str | os.PathLike | None = None, *, alpha: float | None = None) -> list[Path]:
    """Draw the experiment's figures into ``figures/`` as PNG and SVG.

    Parameters
    ----------
    out_dir : path or sequence of paths
        One experiment directory, or several whose tables are combined.
    figures_dir : path, optional
        Where to write; default ``figures/`` inside the (first) experiment directory
        (created if needed).
    alpha : float, optional
        Significance threshold of the histograms' parts; default the experiment's
        (``alpha`` in ``experiment.json``), else 0.01.

    Returns
    -------
    list of Path
        The files written, two per drawn figure, in :data:`FIGURE_NAMES` order.
        A figure without data is not written (see :func:`figure_notes`).
    """
    experiment = read_experiment(out_dir)
    alpha = experiment_alpha(experiment) if alpha is None else alpha
    directory = figures_directory(experiment, figures_dir)
    rendered = save_figures(build_figures(experiment, alpha), directory)
    return [directory / f"{name}.{fmt}" for name in FIGURE_NAMES if name in rendered for fmt in ("png", "svg")]
