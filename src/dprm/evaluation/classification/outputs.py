"""The outputs of the classifier comparison: the tidy table (CSV, JSON), the figures, the HTML report.

The paper's Figures 4–6 (:func:`accuracy_figure`: accuracy against the maximum
depth, a panel per ε, a line per embedding depth and baseline) and Figure 8
(:func:`fit_time_figure`: fit time against rows), and every file of a comparison
by name (:func:`output_names`, :func:`render_outputs`).
"""

from __future__ import annotations

import json
import math
from typing import Any, Iterable, Mapping, Sequence

import pandas as pd

from dprm.evaluation.classification.protocol import ClassificationResult
from dprm.json_values import plain_json

__all__ = [
    "table_csv",
    "table_json",
    "accuracy_figure",
    "fit_time_figure",
    "figure_names",
    "render_figures",
    "report_html",
    "output_names",
    "is_output_name",
    "render_outputs",
]

def table_csv(result: ClassificationResult) -> bytes:
    """The tidy table as CSV bytes."""
    return result.table.to_csv(index=False).encode("utf-8")


def table_json(result: ClassificationResult) -> bytes:
    """The settings, notes and table rows as JSON bytes (NaN as null).

    Examples
    --------
    >>> result = ClassificationResult(pd.DataFrame({"epsilon": [math.nan, 1.0]}), {"seed": 3}, ["n"])
    >>> json.loads(table_json(result))["rows"]
    [{'epsilon': None}, {'epsilon': 1.0}]
    """
    rows = [{k: plain_json(v, nan_as_null=True) for k, v in record.items()} for record in result.table.to_dict(orient="records")]
    document = {"settings": result.settings, "notes": result.notes, "columns": list(result.table.columns),
                "rows": rows}
    return (json.dumps(document, indent=1, ensure_ascii=False, default=str) + "\n").encode("utf-8")


#: Line colours of embedding depths (by position) and of the baselines.
_COLOURS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#b07aa1", "#edc948", "#ff9da7")


_BASELINE_COLOURS = {"non-private": "#222222", "diffprivlib": "#9c755f"}


def _styles(methods: Sequence[str], table: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """A colour per embedding depth, a line style per variant, black/brown for the baselines."""
    info = table.drop_duplicates("method").set_index("method")
    embeddings: list[str] = []
    styles: dict[str, dict[str, Any]] = {}
    for name in methods:
        variant = str(info.loc[name, "variant"]) if name in info.index else ""
        if variant in _BASELINE_COLOURS:
            styles[name] = {"color": _BASELINE_COLOURS[variant], "linestyle": ":" if variant == "diffprivlib" else "--",
                            "marker": "s"}
            continue
        key = name.split("=")[-1] if "=" in name else name
        if key not in embeddings:
            embeddings.append(key)
        styles[name] = {"color": _COLOURS[embeddings.index(key) % len(_COLOURS)],
                        "linestyle": "-" if variant != "paper" else "-.", "marker": "o" if variant != "paper" else "^"}
    return styles


def accuracy_figure(table: pd.DataFrame, dataset: str) -> Any:
    """Accuracy vs maximum depth, one panel per ε, a line per method (the paper's Figures 4–6).

    Non-private methods are drawn in every panel. None when the dataset has no
    accuracy rows.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from matplotlib.ticker import MaxNLocator

    rows = table[(table["experiment"] == "accuracy") & (table["dataset"] == dataset)
                 & (table["status"] == "ok")]
    if rows.empty:
        return None
    epsilons = sorted(rows["epsilon"].dropna().unique().tolist()) or [math.nan]
    methods = list(dict.fromkeys(rows["method"]))
    styles = _styles(methods, table)
    figure = Figure(figsize=(3.6 * len(epsilons) + 1.8, 3.6), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(1, len(epsilons), sharey=True, squeeze=False)[0]
    for ax, epsilon in zip(axes, epsilons):
        for name in methods:
            mine = rows[rows["method"] == name]
            mine = mine[mine["epsilon"].isna() | (mine["epsilon"] == epsilon)].sort_values("max_depth")
            if mine.empty:
                continue
            ax.errorbar(mine["max_depth"], mine["accuracy_mean"], yerr=mine["accuracy_repeat_std"].fillna(0.0),
                        label=name, capsize=2, linewidth=1.3, markersize=3.5, **styles[name])
        ax.set_title(f"ε = {epsilon:g}" if not math.isnan(epsilon) else "non-private")
        ax.set_xlabel("maximum depth")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("accuracy (mean over folds × repeats)")
    handles, labels = axes[-1].get_legend_handles_labels()
    for ax in axes[:-1]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    figure.legend(handles, labels, loc="outside right center", fontsize=8)
    figure.suptitle(f"{dataset}: accuracy vs maximum depth (bars: std of the repeats' means)", fontsize=10)
    return figure


def fit_time_figure(table: pd.DataFrame) -> Any:
    """Mean fit seconds vs rows, a line per method (the paper's Figure 8); None without data."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = table[(table["experiment"] == "fit_time") & (table["status"] == "ok")]
    if rows.empty:
        return None
    methods = list(dict.fromkeys(rows["method"]))
    styles = _styles(methods, table)
    figure = Figure(figsize=(6.4, 4.0), layout="constrained")
    FigureCanvasAgg(figure)
    ax = figure.subplots()
    for name in methods:
        mine = rows[rows["method"] == name].sort_values("rows")
        ax.plot(mine["rows"], mine["fit_seconds_mean"], label=name, linewidth=1.3, markersize=3.5, **styles[name])
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("rows")
    ax.set_ylabel("fit seconds (mean)")
    ax.grid(alpha=0.3, which="both")
    first = rows.iloc[0]
    ax.set_title(f"{first['dataset']}: fit time vs rows (ε = {first['epsilon'] if not pd.isna(first['epsilon']) else '–'}"
                 f", maximum depth {int(first['max_depth'])})", fontsize=10)
    figure.legend(loc="outside right center", fontsize=8)
    return figure


def figure_names(datasets: Iterable[str], timing: bool) -> list[str]:
    """The PNG files a comparison writes: ``accuracy_DATASET.png`` each, ``fit_time.png``.

    Examples
    --------
    >>> figure_names(["vote", "a b"], True)
    ['accuracy_vote.png', 'accuracy_a_b.png', 'fit_time.png']
    """
    import re

    names = [f"accuracy_{re.sub(r'[^A-Za-z0-9_.-]+', '_', d)}.png" for d in datasets]
    return names + (["fit_time.png"] if timing else [])


def _placeholder(title: str) -> Any:
    """A small figure saying that ``title`` has no finished cell to draw."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(5.0, 1.6))
    FigureCanvasAgg(figure)
    figure.text(0.5, 0.5, f"{title}: no finished cell to draw", ha="center", va="center", fontsize=10)
    return figure


def render_figures(result: ClassificationResult) -> dict[str, bytes]:
    """Every figure of :func:`figure_names` as PNG bytes.

    A figure without a finished cell is a short message instead, so the files a
    comparison writes are known before it runs.
    """
    from dprm.evaluation.figures import render_figure

    datasets = list(result.settings.get("datasets", {}))
    timing = result.settings.get("timing") is not None
    out: dict[str, bytes] = {}
    names = figure_names(datasets, timing)
    for name, dataset in zip(names, datasets):
        figure = accuracy_figure(result.table, dataset) or _placeholder(f"{dataset}: accuracy")
        out[name] = render_figure(figure, "png")
    if timing:
        figure = fit_time_figure(result.table) or _placeholder("fit time")
        out[names[-1]] = render_figure(figure, "png")
    return out


def report_html(result: ClassificationResult, figures: Mapping[str, bytes]) -> str:
    """A self-contained HTML page: settings, notes, the figures and the sortable table."""
    from dprm.evaluation.html_page import Column, definition_table, html_table, notes_and_figures, page

    settings = result.settings
    parts = ["<h2>Settings</h2>", definition_table(
        [("epsilons", settings.get("epsilons")), ("maximum depths", settings.get("depths")),
         ("cross-validation", f"{settings.get('folds')} folds × {settings.get('repeats')} repeats, stratified"),
         ("master seed", settings.get("seed")), ("methods", [m["name"] for m in settings.get("methods", [])]),
         ("datasets", settings.get("datasets")), ("fit-time experiment", settings.get("timing"))])]
    parts += notes_and_figures(result.notes, figures)
    columns = [Column("experiment", "experiment"), Column("dataset", "dataset"), Column("method", "method"),
               Column("epsilon", "ε", "float"), Column("max_depth", "max depth", "int"),
               Column("embedding_depth", "embedding", "int"), Column("rows", "rows", "float"),
               Column("fits", "fits", "int"), Column("accuracy_mean", "accuracy", "float"),
               Column("accuracy_std", "std (fits)", "float"),
               Column("accuracy_repeat_std", "std (repeats)", "float", title="std of the repeats' mean accuracies"),
               Column("fit_seconds_mean", "fit s", "float"), Column("status", "status"),
               Column("message", "message")]
    parts.append("<h2>Table</h2>")
    parts.append(html_table(columns, result.table.to_dict(orient="records"),
                            caption="one row per cell; click a header to sort"))
    return page("DP decision trees: accuracy by embedding depth", "\n".join(parts),
                subtitle="Bai et al. (2017), Figures 4–6 and 8, reproduced with dprm")


def output_names(datasets: Iterable[str], timing: bool) -> list[str]:
    """The files :func:`render_outputs` gives, known before the comparison runs.

    Examples
    --------
    >>> output_names(["vote"], False)
    ['classification.csv', 'classification.json', 'accuracy_vote.png', 'report.html']
    """
    return ["classification.csv", "classification.json", *figure_names(datasets, timing), "report.html"]


def is_output_name(name: str) -> bool:
    """Whether a file called ``name`` is one a comparison writes (:func:`output_names` of any datasets).

    A rerun into an earlier result's folder removes such files the new result lacks
    (the figure of a dataset no longer compared), so the folder holds one result.

    Examples
    --------
    >>> [is_output_name(n) for n in ("accuracy_vote.png", "fit_time.png", "report.html", "notes.txt")]
    [True, True, True, False]
    """
    import re

    return (name in ("classification.csv", "classification.json", "fit_time.png", "report.html")
            or re.fullmatch(r"accuracy_[A-Za-z0-9_.-]+\.png", name) is not None)


def render_outputs(result: ClassificationResult) -> dict[str, bytes]:
    """Every file of a comparison by name (:func:`output_names`): the table as CSV and JSON, the PNGs, the report."""
    figures = render_figures(result)
    outputs: dict[str, bytes] = {"classification.csv": table_csv(result),
                                        "classification.json": table_json(result)}
    outputs.update(figures)
    outputs["report.html"] = report_html(result, figures).encode("utf-8")
    return outputs
