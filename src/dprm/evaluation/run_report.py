"""The HTML report of one run's redescriptions (``dprm report --run``).

:func:`write_run_report` renders one redescriptions document (the spec's JSON):
each redescription in words with its released (noisy) statistics and confidence
intervals; given the data, also the true statistics and a bar of the two supports.
The file is self-contained and written atomically, as the experiment report
(:mod:`dprm.evaluation.report`).

Privacy. A run report *without* data shows only what the document holds (the
released values). With data it shows exact counts, so it is for people who may see
the data; the report says so at the top.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pandas as pd

from dprm import __version__ as dprm_version
from dprm.data.attributes import TwoViewData
from dprm.errors import DprmError
from dprm.evaluation.html_page import (
    Column,
    check_output,
    definition_table,
    escape,
    exact_number,
    format_exact,
    format_value,
    html_table,
    page,
    support_bar,
    write_text_atomic,
)
from dprm.evaluation.run_documents import read_run_document
from dprm.json_values import finite_number
from dprm.queries import explain_guarantee, to_text
from dprm.mining.independence import excess_of
from dprm.mining.redundancy import REDUNDANT_KEY

__all__ = [
    "run_report_html",
    "write_run_report",
]

def _interval(extra: dict, key: str) -> tuple[float, float] | None:
    return _pair(extra.get("interval"), key)


def _pair(entry: Any, key: str) -> tuple[float, float] | None:
    """``entry[key]`` as two floats (an interval of a document's ``extra``), or None."""
    if not isinstance(entry, dict):
        return None
    pair = entry.get(key)
    if isinstance(pair, (list, tuple)) and len(pair) == 2:
        try:
            return float(pair[0]), float(pair[1])
        except (TypeError, ValueError):
            return None
    return None


def _with_interval(value: Any, interval: tuple[float, float] | None, kind: str = "float") -> str:
    text = format_value(value, kind)
    if interval is not None:
        text += f" [{format_value(interval[0], kind)}, {format_value(interval[1], kind)}]"
    return text


def _count(value: Any) -> Any:
    """A released count for display: rounded to a whole number (it is an estimate)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(number) else round(number)


def _status(redescription: Any) -> str:
    """``redundant`` (marked so in the document: dprm mine's table leaves it out), else ``pruned`` or ``kept``."""
    if redescription.extra.get(REDUNDANT_KEY) is True:
        return "redundant"
    return "pruned" if redescription.pruned else "kept"


def _counts(total: int, kept: int, redundant: int, pruned: int) -> str:
    """The counts in dprm mine's words: all, the redundant it does not show, the kept after pruning.

    Examples
    --------
    >>> _counts(14, 8, 6, 0)
    '14 (6 redundant, not shown by dprm mine), 8 kept after pruning'
    >>> _counts(188, 65, 0, 123)
    '188, 65 kept after pruning, 123 pruned'
    """
    text = f"{total:,}" + (f" ({redundant:,} redundant, not shown by dprm mine)" if redundant else "")
    return text + f", {kept:,} kept after pruning" + (f", {pruned:,} pruned" if pruned else "")


def run_report_html(doc: dict, redescriptions: list, *, source: str = "document",
                    truth: pd.DataFrame | None = None, n_rows: int | None = None,
                    data_source: str = "") -> str:
    """The HTML of one run's report (see :func:`write_run_report`)."""
    privacy = doc.get("privacy", {}) if isinstance(doc.get("privacy"), dict) else {}
    confidence = None
    for r in redescriptions:
        interval = r.extra.get("interval")
        if isinstance(interval, dict) and "confidence" in interval:
            confidence = interval["confidence"]
            break
    level = f"{100 * float(confidence):g}% " if isinstance(confidence, (int, float)) else ""
    status = [_status(r) for r in redescriptions]
    kept = [i for i, st in enumerate(status) if st == "kept"]
    redundant = [i for i, st in enumerate(status) if st == "redundant"]
    pruned = [i for i, st in enumerate(status) if st == "pruned"]
    order = kept + redundant + pruned  # as dprm mine lists them: kept first, pruned last
    parts = []
    parameters = doc.get("parameters") if isinstance(doc.get("parameters"), dict) else {}
    if parameters.get("dummy") is True:  # a server's dummy job: free, and about no row of the data
        parts.append('<p class="note"><b>Dummy data</b>: this run mined rows synthesised from the dataset\'s '
                     "public schema (independent draws, no row of the data), so its results say nothing about "
                     "the data.</p>")
    if truth is not None:
        parts.append('<p class="note"><b>Contains true statistics of the data</b> '
                     f"({escape(data_source)}): exact counts that are not differentially private. "
                     "Share this report only with people who may see the data.</p>")
    elif privacy.get("guarantee") not in (None, "none"):
        parts.append("<p>Every statistic in this report is a released (noisy) value from the document; "
                     f"intervals are {escape(level)}confidence intervals written by the miner.</p>")
    items: list[tuple[str, Any]] = [
        ("algorithm", doc.get("algorithm", "–")),
        ("redescriptions", _counts(len(redescriptions), len(kept), len(redundant), len(pruned))),
        ("ε", format_exact(exact_number(privacy.get("epsilon")))),  # as the ledger's total: exactly
        ("guarantee", privacy.get("guarantee", "–")),
        ("what it means", explain_guarantee(str(privacy.get("guarantee", "none")))),
        ("neighbouring datasets", privacy.get("neighbouring", "–")),
    ]
    if "private" in privacy:
        items.append(("differentially private", privacy["private"]))
    if isinstance(privacy.get("reasons"), list) and privacy["reasons"]:
        items.append(("why not private", "; ".join(map(str, privacy["reasons"]))))
    if truth is not None and n_rows is not None:
        items.append(("rows of the data (exact)", f"{n_rows:,}"))
    parts.append('<section id="run"><h2>Run</h2>' + definition_table(items))
    if privacy.get("private") is False:
        parts.append('<p class="note">This run is not differentially private (see above).</p>')
    ledger = privacy.get("ledger")
    if isinstance(ledger, list) and ledger:
        # each epsilon and the total exactly (no rounding): the entries visibly add up to the total
        rows = [{"step": e.get("step", "–"), "mechanism": e.get("mechanism", "–"),
                 "exact": exact_number(e.get("epsilon"))} for e in ledger if isinstance(e, dict)]
        for row in rows:
            row["epsilon"] = None if row["exact"] is None else float(row["exact"])
            row["shown"] = escape(format_exact(row["exact"]))
        exact = [row["exact"] for row in rows]
        total = sum(exact) if None not in exact else None
        unspent = privacy.get("unspent")  # a run that stopped early: the rest of its budget, stated
        rest = (f", ε {escape(format_exact(exact_number(unspent)))} left unspent"
                if finite_number(unspent) and unspent > 0 else "")
        parts.append(f"<details><summary>Privacy ledger: {len(rows)} releases, ε "
                     f"{escape(format_exact(total))} in all{rest}</summary>"
                     + html_table([Column("step", "step"), Column("mechanism", "mechanism"),
                                   Column("shown", "ε", raw=True, sort_key="epsilon")], rows, table_id="ledger")
                     + "</details>")
    parameters = doc.get("parameters")
    if isinstance(parameters, dict) and parameters:
        parts.append(f"<details><summary>Parameters</summary>{definition_table(parameters.items())}</details>")
    parts.append("</section>")

    # overview table
    truth_rows = {} if truth is None else {int(row["index"]): row for row in truth.to_dict("records")}
    records = []
    for i in order:
        r = redescriptions[i]
        s = r.stats
        ji = _interval(r.extra, "jaccard")
        record = {
            "number": f'<a href="#r{i}">{i}</a>', "position": i,
            "status": status[i],
            "jaccard": s.jaccard, "low": None if ji is None else ji[0], "high": None if ji is None else ji[1],
            "excess": excess_of(r.extra),
            "support_left": _count(s.support_left), "support_right": _count(s.support_right),
            "intersection": _count(s.intersection), "p_value": s.p_value,
        }
        if i in truth_rows:
            t = truth_rows[i]
            record.update(true_jaccard=t["true_jaccard"], true_support_left=t["true_support_left"],
                          true_support_right=t["true_support_right"], true_intersection=t["true_intersection"],
                          true_pvalue=t["true_pvalue"],
                          inside=None if ji is None else bool(ji[0] <= t["true_jaccard"] <= ji[1]))
        records.append(record)
    columns = [Column("number", "#", raw=True, sort_key="position",
                      title="index: the position in the document's list, from 0, as redescriptions.csv's index "
                            "column"),
               Column("status", "status"),
               Column("jaccard", "J", "float", "released Jaccard"),
               Column("low", "J low", "float", f"{level}confidence interval"),
               Column("high", "J high", "float", f"{level}confidence interval"),
               Column("excess", "excess J", "float", "J minus the Jaccard index of independent queries of the "
                                                       "same sizes: near 0, no finding however large J"),
               Column("support_left", "|L|", "int"), Column("support_right", "|R|", "int"),
               Column("intersection", "|L∩R|", "int"), Column("p_value", "p", "p")]
    if truth is not None:
        columns += [Column("true_jaccard", "true J", "float"), Column("true_support_left", "true |L|", "int"),
                    Column("true_support_right", "true |R|", "int"),
                    Column("true_intersection", "true |L∩R|", "int"), Column("true_pvalue", "true p", "p"),
                    Column("inside", "in interval", title="the true Jaccard lies in the interval")]
    statistics = "released statistics" + (" and true ones" if truth is not None else "")
    parts.append(f'<section id="table"><h2>All redescriptions</h2><p>{escape(statistics)}; click a header to '
                 "sort, a number to see the redescription.</p>"
                 + html_table(columns, records, table_id="redescriptions") + "</section>")

    # one card per redescription
    def card(i: int) -> str:
        r = redescriptions[i]
        s = r.stats
        left_text = to_text(r.left)
        right_text = to_text(r.right)
        tag = f'<span class="tag {"kept" if status[i] == "kept" else "pruned"}">{status[i]}</span>'
        ji = _interval(r.extra, "jaccard")
        head = f"#{i}: J = {_with_interval(s.jaccard, ji)}"
        lines = [f'<div class="card{" pruned" if r.pruned else ""}" id="r{i}"><h3>{escape(head)} {tag}</h3>',
                 f'<div>Left: <span class="query">{escape(left_text)}</span></div>',
                 f'<div>Right: <span class="query">{escape(right_text)}</span></div>',
                 f"<p>The rows where the left query holds are nearly those where the right query holds: of the "
                 f"rows where either holds, a share of about {escape(format_value(s.jaccard))} satisfies both"
                 f"{' (' + escape(level) + 'interval ' + escape(_with_interval(s.jaccard, ji).split(' ', 1)[1]) + ')' if ji else ''}.</p>"]
        excess = excess_of(r.extra)
        if excess is not None:
            band = _pair(r.extra.get("independence"), "excess_interval")
            lines.append(f"<p>Excess over independence {escape(_with_interval(excess, band))}: the "
                         "Jaccard index above that of two independent queries of the same sizes (near 0: no "
                         "finding, however large J).</p>")
        released = [("|L|", _with_interval(_count(s.support_left), _interval(r.extra, "support_left"), "int")),
                    ("|R|", _with_interval(_count(s.support_right), _interval(r.extra, "support_right"), "int")),
                    ("|L∩R|", _with_interval(_count(s.intersection), _interval(r.extra, "intersection"), "int")),
                    ("p-value", _with_interval(s.p_value, _interval(r.extra, "p_value"), "p"))]
        sure = (r.extra.get("interval") or {}).get("significance")
        if isinstance(sure, dict):  # what pruning's significance rule reads (dprm.mining.pruning)
            released.append((f"P(p ≤ {sure['max_pvalue']:g})", f"{sure['probability']:.2f}"))
        lines.append("<div>" + ("released: " if truth is not None else "")
                     + " · ".join(f"{escape(k)} {escape(v)}" for k, v in released) + "</div>")
        if i in truth_rows:
            t = truth_rows[i]
            sl, sr, both = int(t["true_support_left"]), int(t["true_support_right"]), int(t["true_intersection"])
            true_items = [("|L|", sl), ("|R|", sr), ("|L∩R|", both)]
            lines.append("<div>true: " + " · ".join(f"{escape(k)} {v:,}" for k, v in true_items)
                         + f" · J {escape(format_value(t['true_jaccard']))} · p-value "
                         + escape(format_value(t["true_pvalue"], "p")) + "</div>")
            neither = None if n_rows is None else n_rows - (sl + sr - both)
            lines.append(support_bar(sl - both, both, sr - both, neither))
        lines.append("</div>")
        return "".join(lines)

    parts.append(f'<section id="kept"><h2>Kept redescriptions ({len(kept)})</h2>')
    parts.append("".join(card(i) for i in kept) if kept else '<p class="missing">None.</p>')
    parts.append("</section>")
    if redundant:
        parts.append(f'<section id="redundant"><h2>Redundant redescriptions ({len(redundant)})</h2>'
                     "<p>These describe nearly the same entities as a better one above (dprm mine's table "
                     "leaves them out).</p>"
                     f"<details><summary>Show the {len(redundant)} redundant redescriptions</summary>"
                     + "".join(card(i) for i in redundant) + "</details></section>")
    if pruned:
        parts.append(f'<section id="pruned"><h2>Pruned redescriptions ({len(pruned)})</h2>'
                     "<p>The pruning rule would drop these (kept in the file for inspection).</p>"
                     f"<details{' open' if len(pruned) <= 20 else ''}><summary>Show the {len(pruned)} pruned "
                     "redescriptions</summary>" + "".join(card(i) for i in pruned) + "</details></section>")
    nav = ('<nav><a href="#run">Run</a><a href="#table">All redescriptions</a><a href="#kept">Kept</a>'
           + ('<a href="#redundant">Redundant</a>' if redundant else "")
           + ('<a href="#pruned">Pruned</a>' if pruned else "") + "</nav>")
    body = nav + "".join(parts) + (f"<footer>Written by dprm {escape(dprm_version)} from {escape(source)}"
                                   f"{' and ' + escape(data_source) if truth is not None else ''}.</footer>")
    return page(f"Redescriptions: {Path(source).name}", body,
                subtitle=f"{doc.get('algorithm', '')}, {len(redescriptions)} redescription{'' if len(redescriptions) == 1 else 's'}")


def write_run_report(document_path: str | os.PathLike, output: str | os.PathLike | None = None,
                     data: TwoViewData | None = None, *, data_source: str = "the data") -> Path:
    """Write the report of one run's redescriptions as one self-contained HTML file.

    Parameters
    ----------
    document_path : path
        A redescriptions document (``dprm.redescriptions/1``), read with
        :func:`~dprm.evaluation.run_documents.read_run_document` (one-line error when it
        does not follow the spec or contradicts itself).
    output : path, optional
        The HTML file; default the document's path with ``.html``.
    data : TwoViewData, optional
        The data the run was mined from. Only when given (the reader may see the
        data) does the report show true statistics and a bar of the two supports.
    data_source : str
        How the data is named in the report (e.g. the two file names).

    Returns
    -------
    Path
        The report's path.
    """
    source = os.fspath(document_path)
    doc, redescriptions = read_run_document(source)
    target = Path(output) if output is not None else Path(source).with_suffix(".html")
    check_output(target)
    truth = None
    n_rows = None
    if data is not None:
        from dprm.evaluation.true_statistics import true_statistics

        try:
            truth = true_statistics(doc, data)
        except DprmError as error:  # a query the data cannot answer: say which document holds it
            raise DprmError(f"{source}: {error}", code=error.code, file=error.file or source,
                            column=error.column, row=error.row, data_dependent=error.data_dependent) from None
        n_rows = data.n_rows
    text = run_report_html(doc, redescriptions, source=source, truth=truth, n_rows=n_rows,
                           data_source=data_source)
    return write_text_atomic(text, target)
