"""Self-contained HTML reports: of an experiment, and of one run's redescriptions.

* :func:`write_experiment_report` reads an experiment directory written by
  ``dprm evaluate`` (or several, combined; see :func:`~dprm.evaluation.experiment_reader.read_experiment`)
  and writes one HTML file with the papers' summary tables (computed with
  :mod:`dprm.evaluation.summary`), the figures of :mod:`dprm.evaluation.figures`
  embedded as PNG ``data:`` URLs, every run, the experiment's parameters and the
  privacy guarantee and ledger of each algorithm and budget.
* :func:`write_run_report` (:mod:`dprm.evaluation.run_report`, re-exported here)
  renders one redescriptions document (the spec's JSON): each redescription in words
  with its released (noisy) statistics and confidence intervals; given the data,
  also the true statistics and a bar of the two supports.

The files need no network and no Python to read: style and the table-sorting
script are inline. All text from input files is escaped. Files are written
atomically (a temporary file renamed over the target), so an interrupted run leaves
the old report or none, never half of one.

Privacy. A run report *without* data shows only what the document holds (the
released values). With data it shows exact counts, so it is for people who may see
the data; the report says so at the top. An experiment report is such a local
evaluation tool too: its tables hold true statistics.
"""

from __future__ import annotations

import json
import math
import os
from collections import OrderedDict
from fractions import Fraction
from pathlib import Path
from typing import Any, Sequence

import pandas as pd

from dprm import __version__ as dprm_version
from dprm.errors import DprmError, printable_text
from dprm.evaluation.budgets import epsilon_label
from dprm.evaluation.experiment_reader import (
    Experiment,
    budget_label,
    experiment_alpha,
    experiment_names,
    method_label,
    methods,
    read_experiment,
    select_method,
)
from dprm.evaluation.figures import (
    FIGURE_NAMES,
    build_figures,
    figure_notes,
    figures_directory,
    render_figures,
    write_figure_files,
)
from dprm.evaluation.html_page import (
    Column,
    check_output,
    definition_table,
    escape,
    exact_number,
    format_exact,
    html_table,
    page,
    png_image,
    write_text_atomic,
)
from dprm.evaluation.run_report import run_report_html, write_run_report
from dprm.evaluation.summary import mann_whitney_best, runs_with_results, summarise
from dprm.evaluation.run_documents import read_run_document
from dprm.queries import run_budget

__all__ = [
    "experiment_summary",
    "mann_whitney_tables",
    "experiment_report_html",
    "write_experiment_report",
    "run_report_html",
    "write_run_report",
    "FIGURE_CAPTIONS",
]

#: Caption of each figure in the experiment report.
FIGURE_CAPTIONS: dict[str, str] = {
    "scatter_jaccard": "Reported (noisy) Jaccard against the true Jaccard of every redescription, one panel "
                       "per algorithm and budget (the tree paper's Figures 2–3). Dots: kept; grey crosses: "
                       "pruned. On the dashed diagonal the reported value is exact.",
    "histogram_true_jaccard": "Histograms of the true Jaccard, stacked: pruned (grey), kept but not significant "
                              "(orange), kept and significant (blue) (Figures 4–5).",
    "box_true_jaccard": "Distribution of the true Jaccard of the kept redescriptions per method: box = "
                        "quartiles, line = median, shaded = density (Table 4 as a figure).",
    "box_abs_error_jaccard": "Distribution of |reported − true| Jaccard of the kept redescriptions per private "
                             "method (Table 5 as a figure).",
    "runtime": "Wall time of each finished run against the number of rows; the line joins each algorithm's "
               "median per data size, pooled over budgets (Figure 6).",
}

FIGURE_TITLES: dict[str, str] = {
    "scatter_jaccard": "Reported vs true Jaccard",
    "histogram_true_jaccard": "True Jaccard: pruned, insignificant, significant",
    "box_true_jaccard": "True Jaccard per method",
    "box_abs_error_jaccard": "Error of the reported Jaccard per method",
    "runtime": "Runtime vs data size",
}


# -- experiment: tables -------------------------------------------------------------


def _method_keys(experiment: Experiment, by_experiment: bool) -> list[tuple[str | None, str, float]]:
    both = pd.concat([experiment.redescriptions[["experiment", "algorithm", "epsilon"]],
                      experiment.runs[["experiment", "algorithm", "epsilon"]]], ignore_index=True)
    if not by_experiment:
        return [(None, a, e) for a, e in methods(both)]
    out = []
    for name in dict.fromkeys(both["experiment"]):
        out.extend((name, a, e) for a, e in methods(both[both["experiment"] == name]))
    return out


def _median(values: pd.Series) -> float:
    values = pd.to_numeric(values, errors="coerce").dropna()
    return float(values.median()) if len(values) else math.nan


def _coverage(rows: pd.DataFrame) -> float:
    """Share of kept rows with a known Jaccard interval that contains the true Jaccard."""
    if not {"jaccard_low", "jaccard_high"} <= set(rows.columns):
        return math.nan
    rows = rows[~rows["pruned"].to_numpy(dtype=bool)].dropna(subset=["jaccard_low", "jaccard_high", "true_jaccard"])
    if rows.empty:
        return math.nan
    inside = (rows["jaccard_low"] <= rows["true_jaccard"]) & (rows["true_jaccard"] <= rows["jaccard_high"])
    return float(inside.mean())


def experiment_summary(experiment: Experiment, alpha: float = 0.01, by_experiment: bool | None = None
                       ) -> pd.DataFrame:
    """One row per method (algorithm, budget): the papers' summary figures and the runs' cost.

    Columns: ``experiment`` (with several directories), ``algorithm``, ``epsilon``,
    ``method``, ``runs`` (rows of runs.csv), ``failed`` (runs whose status is not a
    success), ``runs_with_results`` (share of the finished runs with ≥ 1 kept
    redescription, Tables 7–8, :func:`~dprm.evaluation.runs_with_results`), ``returned`` and
    ``kept`` (redescriptions), then :func:`~dprm.evaluation.summarise`'s
    ``median_true_jaccard``, ``share_significant`` (Table 3), ``spearman_rho``,
    ``spearman_p`` (Table 2), ``median_abs_error_jaccard`` over the kept
    redescriptions, ``interval_coverage`` (share of kept redescriptions with an
    interval whose true Jaccard lies in it), and ``median_seconds``,
    ``median_peak_mb`` over finished runs.
    """
    if by_experiment is None:
        by_experiment = len(experiment.dirs) > 1
    reds, runs = experiment.redescriptions, experiment.runs
    rows = []
    for name, algorithm, epsilon in _method_keys(experiment, by_experiment):
        mine = reds if name is None else reds[reds["experiment"] == name]
        their_runs = runs if name is None else runs[runs["experiment"] == name]
        mine = select_method(mine, algorithm, epsilon)
        their_runs = select_method(their_runs, algorithm, epsilon)
        figures = summarise(mine, by=None, alpha=alpha).iloc[0].to_dict()
        finished = their_runs[their_runs["ok"].to_numpy(dtype=bool)]
        row: dict[str, Any] = {} if name is None else {"experiment": name}
        row.update(
            algorithm=algorithm,
            epsilon=epsilon,
            method=method_label(algorithm, epsilon),
            runs=len(their_runs),
            failed=int((~their_runs["ok"].to_numpy(dtype=bool)).sum()),
            runs_with_results=runs_with_results(finished),
            returned=len(mine),
            kept=int(figures["n_kept"]),
            median_true_jaccard=figures["median_true_jaccard"],
            share_significant=figures["share_significant"],
            spearman_rho=figures["spearman_rho"],
            spearman_p=figures["spearman_p"],
            median_abs_error_jaccard=figures["median_abs_error_jaccard"],
            interval_coverage=_coverage(mine),
            median_seconds=_median(finished["seconds"]),
            median_peak_mb=_median(finished["peak_mb"]) if "peak_mb" in finished.columns else math.nan,
        )
        rows.append(row)
    columns = (["experiment"] if by_experiment else []) + [
        "algorithm", "epsilon", "method", "runs", "failed", "runs_with_results", "returned", "kept",
        "median_true_jaccard", "share_significant", "spearman_rho", "spearman_p", "median_abs_error_jaccard",
        "interval_coverage", "median_seconds", "median_peak_mb"]
    return pd.DataFrame(rows, columns=columns)


def mann_whitney_tables(experiment: Experiment) -> dict[str, pd.DataFrame]:
    """One-sided Mann–Whitney U tests of the best algorithm against the others, per budget.

    Within each budget (the non-private algorithms form one group), over kept
    redescriptions: ``"true_jaccard"`` (higher is better, Table 4) and
    ``"abs_error_jaccard"`` (lower is better, Table 5; private budgets only, a
    non-private algorithm's error is zero by construction). Budgets with fewer than
    two algorithms give no row. Each table has a ``budget`` column, then
    :data:`~dprm.evaluation.MANN_WHITNEY_COLUMNS`.
    """
    frame = experiment.redescriptions
    out = {}
    for value in ("true_jaccard", "abs_error_jaccard"):
        tables = []
        for algorithm_epsilon in dict.fromkeys(e for _, e in methods(frame)):
            epsilon = algorithm_epsilon
            if value == "abs_error_jaccard" and math.isnan(epsilon):
                continue
            group = frame[frame["epsilon"].isna()] if math.isnan(epsilon) else frame[frame["epsilon"] == epsilon]
            table = mann_whitney_best(group, value=value, by="algorithm")
            if not table.empty:
                table.insert(0, "budget", budget_label(epsilon))
                tables.append(table)
        out[value] = (pd.concat(tables, ignore_index=True) if tables
                      else pd.DataFrame(columns=["budget", "best", "other", "n_best", "n_other", "median_best",
                                                 "median_other", "statistic", "pvalue"]))
    return out


# -- experiment: privacy and parameters from the runs' documents ------------------------


def _run_documents(experiment: Experiment) -> tuple[list[tuple[Path, str, float, Path]], list[str]]:
    """The document of the first finished run of each method, as ``runs.csv`` lists the runs.

    For each directory and each method (algorithm and budget) of its ``runs.csv``, the
    run of the lowest number whose status is finished, at its path
    ``runs/ALGORITHM/EPSILON/RUN.json``. A folder's other files (a failed run's
    ``RUN.failed.json``, a document of a run the tables do not count) are never read
    as the method's. A directory without a ``runs/`` folder (tables written by another
    tool) has no documents.

    Returns
    -------
    documents : list of (directory, algorithm, epsilon, path)
        The documents to read, in the tables' order (``epsilon`` NaN for a
        non-private method).
    missing : list of str
        One line per method without a finished run, or with a name that is not a
        folder's (``../x``), naming the directory and the method.
    """
    documents: list[tuple[Path, str, float, Path]] = []
    missing: list[str] = []
    for directory, name in zip(experiment.dirs, experiment_names(experiment.dirs)):
        if not (directory / "runs").is_dir():
            continue
        runs = experiment.runs[experiment.runs["experiment"] == name]
        for algorithm, epsilon in methods(runs):
            rows = select_method(runs, algorithm, epsilon)
            algorithm, label = str(algorithm), epsilon_label(epsilon)
            where = f"{directory}: {method_label(algorithm, epsilon)}"
            if any(part in ("", ".", "..") or "/" in part or os.sep in part or "\0" in part
                   for part in (algorithm, label)):
                missing.append(f"{where}: not a folder name under runs/")
                continue
            finished = rows[rows["ok"]]
            if finished.empty:
                missing.append(f"{where}: no finished run ({len(rows)} in runs.csv, none finished)")
                continue
            run = int(finished["run"].min())
            documents.append((directory, algorithm, epsilon, directory / "runs" / algorithm / label / f"{run}.json"))
    return documents, missing


def ledger_summary(ledger: Any) -> list[dict[str, Any]]:
    """Steps and total epsilon of a document's ``privacy.ledger`` per mechanism, summed exactly.

    Each entry's epsilon is read as the exact number the document wrote
    (:func:`~dprm.evaluation.html_page.exact_number`) and summed as a fraction, so the
    mechanisms' totals add up to the ledger's; ``shown`` is the total written exactly
    (:func:`~dprm.evaluation.html_page.format_exact`), never rounded. An entry without a
    number makes its mechanism's total None (shown as an en dash).

    Examples
    --------
    >>> ledger_summary([{"step": "a", "mechanism": "m", "epsilon": 0.25}, {"step": "b", "mechanism": "m", "epsilon": 0.5}])
    [{'mechanism': 'm', 'steps': 2, 'epsilon': Fraction(3, 4), 'shown': '0.75'}]
    """
    if not isinstance(ledger, list):
        return []
    totals: OrderedDict[str, dict[str, Any]] = OrderedDict()
    for entry in ledger:
        if not isinstance(entry, dict):
            continue
        mechanism = str(entry.get("mechanism", "?"))
        slot = totals.setdefault(mechanism, {"mechanism": mechanism, "steps": 0, "epsilon": Fraction(0)})
        slot["steps"] += 1
        epsilon = exact_number(entry.get("epsilon", 0))
        slot["epsilon"] = None if epsilon is None or slot["epsilon"] is None else slot["epsilon"] + epsilon
    for slot in totals.values():
        slot["shown"] = format_exact(slot["epsilon"])
    return list(totals.values())


def _unspent_phrase(unspent: Any) -> str:
    """``" (ε 0.25 left unspent)"`` beside a ledger's total where a run stopped early; else empty.

    Examples
    --------
    >>> _unspent_phrase(0.25), _unspent_phrase(None), _unspent_phrase(0)
    (' (ε 0.25 left unspent)', '', '')
    """
    if not isinstance(unspent, (int, float)) or isinstance(unspent, bool) or not unspent > 0:
        return ""
    return f" (ε {escape(format_exact(exact_number(unspent)))} left unspent)"


def _privacy_section(experiment: Experiment) -> str:
    parts = []
    rows, parameters, problems, reasons = [], [], [], []
    documents, without = _run_documents(experiment)
    order = {a: i for i, (a, _) in enumerate(methods(experiment.runs))}
    for directory, algorithm, budget, path in documents:
        try:
            doc, _ = read_run_document(path, algorithm=algorithm)
        except DprmError as error:
            problems.append(str(error))
            continue
        spent = run_budget(doc["privacy"])
        if not (spent is None if math.isnan(budget) else spent is not None and math.isclose(spent, budget,
                                                                                          rel_tol=1e-9)):
            problems.append(f"{path}: the run's budget (privacy.epsilon {epsilon_label(spent)}) is not its "
                            f"folder's epsilon {epsilon_label(budget)} (a run of another budget)")
            continue
        privacy = doc.get("privacy", {})
        ledger = privacy.get("ledger")
        summary = ledger_summary(ledger)
        # exact sums, written exactly: the mechanisms' shares visibly add up to the total
        totals = [s["epsilon"] for s in summary]
        spent = sum(totals) if totals and None not in totals else None
        mechanisms = "<br>".join(f"ε {escape(s['shown'])} in {s['steps']} × "
                                 f"{escape(s['mechanism'])}" for s in summary) or "–"
        private = privacy.get("private", privacy.get("guarantee") != "none")
        shown = "yes" if private else "no"
        for reason in privacy.get("reasons", []) if isinstance(privacy.get("reasons"), list) else []:
            if str(reason) not in reasons:
                reasons.append(str(reason))
            shown += f" [{reasons.index(str(reason)) + 1}]"
        epsilon = privacy.get("epsilon")
        epsilon = epsilon if isinstance(epsilon, (int, float)) and not isinstance(epsilon, bool) and epsilon else None
        rows.append({
            "experiment": directory.name,
            "algorithm": doc.get("algorithm", algorithm),
            "epsilon": epsilon, "epsilon_shown": escape(format_exact(exact_number(epsilon))),
            "delta": privacy.get("delta") if isinstance(privacy.get("delta"), (int, float)) else None,
            "guarantee": privacy.get("guarantee", "–"),
            "neighbouring": privacy.get("neighbouring", "–"),
            "private": shown,
            "ledger_steps": len(ledger) if isinstance(ledger, list) else 0,
            "ledger_epsilon": None if spent is None else float(spent),
            "ledger_epsilon_shown": escape(format_exact(spent)) + _unspent_phrase(privacy.get("unspent")),
            "mechanisms": mechanisms,
            "file": str(path.relative_to(directory)),
        })
        parameters.append((f"{doc.get('algorithm', algorithm)} ({path.relative_to(directory)})",
                           doc.get("parameters", {})))
    rows.sort(key=lambda r: (order.get(r["algorithm"], len(order)),
                             -(r["epsilon"] if r["epsilon"] is not None else math.inf)))
    parts.append("<p>Read from the document of the first finished run of each algorithm and budget "
                 "(<code>runs/ALGORITHM/EPSILON/RUN.json</code>, the run of <code>runs.csv</code>); every run of a method has the same ledger shape. "
                 "<i>pure-dp</i>: ε-differential privacy under add/remove-one-row neighbours; "
                 "<i>pure-dp-on-mcmc-convergence</i>: the guarantee holds for the exact exponential mechanism "
                 "that a Metropolis–Hastings chain approximates; <i>approx-dp</i>: (ε, δ)-differential privacy "
                 "(the DP synthetic-data baselines); <i>none</i>: not private (a non-private baseline, or a "
                 "seeded run).</p>")
    if rows:
        columns = [Column("algorithm", "algorithm"), Column("epsilon_shown", "ε", raw=True, sort_key="epsilon"),
                   Column("guarantee", "guarantee"), Column("neighbouring", "neighbours"),
                   Column("private", "private", title="no: the run is not differentially private; the "
                                                      "numbers refer to the reasons below the table"),
                   Column("ledger_steps", "releases", "int"),
                   Column("ledger_epsilon_shown", "ε in ledger", raw=True, sort_key="ledger_epsilon",
                          title="the ledger's epsilons summed exactly (as are the mechanisms' shares)"),
                   Column("mechanisms", "ledger by mechanism", raw=True), Column("file", "document")]
        if any(r["delta"] is not None for r in rows):  # an (ε, δ) baseline is among the methods
            columns.insert(2, Column("delta", "δ", "float"))
        if len(experiment.dirs) > 1:
            columns.insert(0, Column("experiment", "experiment"))
        parts.append(html_table(columns, rows, table_id="privacy"))
        if reasons:
            parts.append('<div class="note">Why some runs are not differentially private:<ol>'
                         + "".join(f"<li>{escape(r)}</li>" for r in reasons) + "</ol>"
                         "An experiment fixes seeds so that it can be rerun; a release to an analyst must not.</div>")
    else:
        parts.append('<p class="missing">No run documents found under runs/.</p>')
    for line in without:
        parts.append(f'<p class="note">No run document: {escape(line)}</p>')
    for problem in problems:
        parts.append(f'<p class="note">Could not read a run document: {escape(problem)}</p>')
    if parameters:
        parts.append("<h3>Parameters of each algorithm</h3>")
        for name, values in parameters:
            items = list(values.items()) if isinstance(values, dict) else [("parameters", values)]
            parts.append(f"<details><summary>{escape(name)}</summary>{definition_table(items)}</details>")
    return "".join(parts)


# -- experiment: the page -------------------------------------------------------------


def _summary_columns(by_experiment: bool) -> list[Column]:
    columns = [
        Column("algorithm", "algorithm"),
        Column("budget", "budget"),
        Column("runs", "runs", "int"),
        Column("failed", "failed", "int", "runs whose status is not a success"),
        Column("runs_with_results", "runs with results", "share",
               "share of the finished runs returning at least one kept redescription (Tables 7–8)"),
        Column("returned", "returned", "int", "redescriptions returned, pruned ones included"),
        Column("kept", "kept", "int", "redescriptions not pruned"),
        Column("share_significant", "significant", "share",
               "share of kept redescriptions with true p-value < α (Table 3)"),
        Column("spearman_rho", "Spearman ρ", "float", "rank correlation of reported and true Jaccard (Table 2)"),
        Column("spearman_p", "ρ p-value", "p"),
        Column("median_true_jaccard", "median true J", "float", "of kept redescriptions (Table 4)"),
        Column("median_abs_error_jaccard", "median |error| J", "float",
               "median |reported − true| Jaccard of kept redescriptions (Table 5)"),
        Column("interval_coverage", "J in interval", "share",
               "share of kept redescriptions whose confidence interval holds the true Jaccard"),
        Column("median_seconds", "median s", "float", "median wall time of a finished run"),
        Column("median_peak_mb", "median MB", "float", "median peak memory of a finished run"),
    ]
    if by_experiment:
        columns.insert(0, Column("experiment", "experiment"))
    return columns


def _mann_whitney_html(tables: dict[str, pd.DataFrame]) -> str:
    columns = [Column("budget", "budget"), Column("best", "best"), Column("other", "other"),
               Column("n_best", "n best", "int"), Column("n_other", "n other", "int"),
               Column("median_best", "median best", "float"), Column("median_other", "median other", "float"),
               Column("statistic", "U", "float"), Column("pvalue", "p-value", "p")]
    parts = []
    for value, title in (("true_jaccard", "True Jaccard (higher is better; Table 4)"),
                         ("abs_error_jaccard", "|reported − true| Jaccard (lower is better; Table 5)")):
        parts.append(f"<h3>{escape(title)}</h3>")
        table = tables[value]
        if table.empty:
            parts.append('<p class="missing">No test: no budget has two algorithms with kept redescriptions.</p>')
        else:
            parts.append(html_table(columns, table.to_dict("records"), table_id=f"mann-whitney-{value}"))
    return "".join(parts)


def _runs_html(experiment: Experiment) -> str:
    runs = experiment.runs
    columns = [Column("algorithm", "algorithm"), Column("budget", "budget"), Column("run", "run", "int")]
    for key, header, kind in (("seed", "seed", "text"), ("rows", "rows", "int"), ("seconds", "seconds", "float"),
                              ("peak_mb", "peak MB", "float"), ("returned", "returned", "int"),
                              ("kept", "kept", "int"), ("status", "status", "text")):
        if key in runs.columns:
            columns.append(Column(key, header, kind))
    if len(experiment.dirs) > 1:
        columns.insert(0, Column("experiment", "experiment"))
    records = runs.assign(budget=[budget_label(e) for e in runs["epsilon"]]).to_dict("records")
    parts = []
    if "status" in runs.columns:
        counts = runs["status"].fillna("").astype(str).value_counts()
        parts.append("<p>Status of the runs: " + escape(", ".join(f"{k or '(empty)'}: {v}" for k, v in counts.items()))
                     + ".</p>")
    failed = runs[~runs["ok"].to_numpy(dtype=bool)]
    if len(failed):
        parts.append(f'<p class="note">{len(failed)} run(s) did not finish; they count as runs without results.</p>')
    parts.append(f"<details><summary>All {len(runs)} runs</summary>"
                 f"{html_table(columns, records, table_id='runs')}</details>")
    return "".join(parts)


def _overview_html(experiment: Experiment, alpha: float) -> str:
    reds, runs = experiment.redescriptions, experiment.runs
    items: list[tuple[str, Any]] = [
        ("directories", ", ".join(str(d) for d in experiment.dirs)),
        ("algorithms", ", ".join(dict.fromkeys(a for a, _ in methods(runs)))),
        ("budgets", ", ".join(budget_label(e) for e in dict.fromkeys(e for _, e in methods(runs)))),
        ("runs", f"{len(runs)} ({int(runs['ok'].sum())} finished)"),
        ("redescriptions", f"{len(reds)} ({int((~reds['pruned']).sum())} kept, {int(reds['pruned'].sum())} pruned)"),
        ("significance threshold α", f"{alpha:g} (significant: true p-value < α)"),
    ]
    if "rows" in runs.columns:
        sizes = sorted({int(r) for r in runs["rows"].dropna()})
        items.append(("rows of the data", ", ".join(f"{s:,}" for s in sizes) or "–"))
    for key, name in (("seed", "master seed"), ("parameters", "miner parameters"), ("noise", "noise")):
        values = [(d.resolve().name, m[key]) for d, m in zip(experiment.dirs, experiment.metadata) if key in m]
        text = [json.dumps(v, ensure_ascii=False) if isinstance(v, (dict, list)) else str(v) for _, v in values]
        if len(experiment.dirs) == 1 and values:
            items.append((name, text[0]))
        elif values:
            items.append((name, "; ".join(f"{d}: {t}" for (d, _), t in zip(values, text))))
    parts = [definition_table(items)]
    for directory, metadata in zip(experiment.dirs, experiment.metadata):
        if metadata:
            label = "experiment.json" if len(experiment.dirs) == 1 else f"{directory}/experiment.json"
            parts.append(f"<details><summary>{escape(label)}: the whole manifest</summary>"
                         f"{definition_table(metadata.items())}</details>")
    return "".join(parts)


def experiment_report_html(experiment: Experiment, rendered: dict[str, dict[str, bytes]], *,
                           alpha: float = 0.01) -> str:
    """The experiment report's HTML from the tables and the rendered figures (name → {"png": bytes})."""
    by_experiment = len(experiment.dirs) > 1
    summary = experiment_summary(experiment, alpha, by_experiment)
    summary["budget"] = [budget_label(e) for e in summary["epsilon"]]
    notes = figure_notes(experiment)
    sections = [
        ("overview", "Experiment", _overview_html(experiment, alpha)),
        ("summary", "Summary per method",
         "<p>Per algorithm and budget; quality figures over the kept (not pruned) redescriptions, pooled over "
         "runs. Click a column header to sort.</p>"
         + html_table(_summary_columns(by_experiment), summary.to_dict("records"), table_id="summary")),
        ("tests", "Best method against the others (one-sided Mann–Whitney U)",
         "<p>Within each budget, the algorithm with the best median is tested against each other one over "
         "their kept redescriptions.</p>" + _mann_whitney_html(mann_whitney_tables(experiment))),
    ]
    figure_parts = []
    for name in FIGURE_NAMES:
        figure_parts.append(f'<h3 id="figure-{name}">{escape(FIGURE_TITLES[name])}</h3>')
        if name in rendered:
            figure_parts.append(f"<figure>{png_image(rendered[name]['png'], FIGURE_TITLES[name], name=name)}"
                                f"<figcaption>{escape(FIGURE_CAPTIONS[name])} Files: figures/{name}.png, "
                                f"figures/{name}.svg.</figcaption></figure>")
        else:
            reason = notes.get(name, "no data")
            figure_parts.append(f'<p class="missing" data-missing-figure="{escape(name)}">No figure: '
                                f"{escape(reason)}.</p>")
    sections.append(("figures", "Figures", "".join(figure_parts)))
    sections.append(("runs", "Runs", _runs_html(experiment)))
    sections.append(("privacy", "Privacy guarantee and ledger", _privacy_section(experiment)))
    nav = "<nav>" + "".join(f'<a href="#{key}">{escape(title)}</a>' for key, title, _ in sections) + "</nav>"
    body = nav + "".join(f'<section id="{key}"><h2>{escape(title)}</h2>{content}</section>'
                         for key, title, content in sections)
    body += (f"<footer>Written by dprm {escape(dprm_version)} from "
             f"{escape(', '.join(str(d) for d in experiment.dirs))} (redescriptions.csv, runs.csv). "
             "This report holds true statistics of the data: it is for people who may see the data.</footer>")
    names = ", ".join(d.resolve().name for d in experiment.dirs)
    return page(f"dprm experiment report: {names}", body,
                subtitle="Noisy (released) against true quality of differentially private redescriptions.")


def write_experiment_report(out_dir: str | os.PathLike | Sequence[str | os.PathLike],
                            output: str | os.PathLike | None = None, *, figures: bool = True,
                            alpha: float | None = None) -> Path:
    """Write the experiment report: one self-contained HTML file.

    Parameters
    ----------
    out_dir : path or sequence of paths
        One experiment directory (written by ``dprm evaluate``) or several, combined.
    output : path, optional
        The HTML file; default ``report.html`` in the (first) directory.
    figures : bool
        Also write the figures as PNG and SVG into ``figures/`` beside the report.
    alpha : float, optional
        Significance threshold (significant: true p-value < alpha); default the
        experiment's (``alpha`` in ``experiment.json``), else 0.01.

    Returns
    -------
    Path
        The report's path.

    Raises
    ------
    DataError
        A directory or table is missing or malformed (one line naming it).
    """
    experiment = read_experiment(out_dir)
    alpha = experiment_alpha(experiment) if alpha is None else alpha
    target = Path(output) if output is not None else experiment.dirs[0] / "report.html"
    check_output(target)
    rendered = render_figures(build_figures(experiment, alpha), ("png", "svg") if figures else ("png",))
    if not figures:
        return write_text_atomic(experiment_report_html(experiment, rendered, alpha=alpha), target)
    # the report with its figures, all or none: an interrupted or failed rerun leaves the earlier ones whole
    html = printable_text(experiment_report_html(experiment, rendered, alpha=alpha)).encode("utf-8")
    write_figure_files(rendered, figures_directory(experiment, target.parent / "figures"), also={target: html})
    return target
