"""The papers' tables from an experiment's tidy tables (``redescriptions.csv``, ``runs.csv``).

:func:`summary_table` has one row per ``(algorithm, epsilon)`` with

* ``runs_with_results``: the share of finished runs that returned at least one kept
  (not pruned) redescription (Tables 7–8 of the tree-based paper);
* ``share_significant``: the share of kept redescriptions whose *true* p-value is
  below ``alpha`` (Table 3);
* ``spearman_rho``, ``spearman_p``: Spearman's ρ between noisy and true Jaccard of
  the kept redescriptions, pooled over runs, and its two-sided p-value (Table 2);
* quartiles of the true Jaccard and of ``|noisy − true|`` Jaccard of the kept
  redescriptions (Figures 4–5, Tables 4–5);
* the share of kept redescriptions whose true Jaccard lies in the reported
  interval (``interval_coverage``), median run time and peak memory.

:func:`mann_whitney_table` tests, within every epsilon, the best algorithm (highest
median true Jaccard; lowest median absolute error) against each other one with a
one-sided Mann–Whitney U test (Tables 4–5), via
:func:`dprm.evaluation.summary.mann_whitney_best`.

Non-private algorithms have an empty ``epsilon`` (NaN); they form their own group.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from dprm.file_sets import naming, write_named
from dprm.evaluation.summary import MANN_WHITNEY_COLUMNS, kept, mann_whitney_best, share_significant, spearman

__all__ = ["SUMMARY_TABLE_COLUMNS", "MANN_WHITNEY_TABLE_COLUMNS", "summary_table", "mann_whitney_table",
           "write_paper_tables", "write_csv_atomic"]

#: The columns of :func:`summary_table`.
SUMMARY_TABLE_COLUMNS: tuple[str, ...] = (
    "algorithm", "epsilon", "runs", "runs_ok", "runs_with_results", "returned", "kept",
    "share_significant", "spearman_rho", "spearman_p",
    "true_jaccard_q1", "true_jaccard_median", "true_jaccard_q3",
    "abs_error_jaccard_q1", "abs_error_jaccard_median", "abs_error_jaccard_q3",
    "interval_coverage", "seconds_median", "peak_mb_median",
)

#: The columns of :func:`mann_whitney_table`.
MANN_WHITNEY_TABLE_COLUMNS: tuple[str, ...] = ("epsilon", "value", *MANN_WHITNEY_COLUMNS)


def _quartiles(values: pd.Series) -> tuple[float, float, float]:
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)
    numbers = numbers[~np.isnan(numbers)]
    if not numbers.size:
        return math.nan, math.nan, math.nan
    q1, median, q3 = np.quantile(numbers, [0.25, 0.5, 0.75])
    return float(q1), float(median), float(q3)


def _median(values: pd.Series) -> float:
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    return float(numbers.median()) if len(numbers) else math.nan


def _same_epsilon(column: pd.Series, epsilon: float) -> np.ndarray:
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64)
    return np.isnan(values) if math.isnan(epsilon) else values == epsilon


def _groups(runs: pd.DataFrame, redescriptions: pd.DataFrame,
            algorithms: Sequence[str] | None) -> list[tuple[str, float]]:
    """Every (algorithm, epsilon) present, algorithms in the given order, epsilons descending (none first)."""
    pairs = set()
    for frame in (runs, redescriptions):
        if len(frame):
            epsilons = pd.to_numeric(frame["epsilon"], errors="coerce").to_numpy(dtype=np.float64)
            # NaN (a non-private run) is not equal to itself: key it as None
            pairs.update((str(a), None if math.isnan(e) else float(e)) for a, e in zip(frame["algorithm"], epsilons))
    order = list(algorithms or [])
    order += sorted({a for a, _ in pairs} - set(order))
    ordered = sorted(pairs, key=lambda p: (order.index(p[0]), 0 if p[1] is None else 1, -(p[1] or 0.0)))
    return [(a, math.nan if e is None else e) for a, e in ordered]


def summary_table(
    redescriptions: pd.DataFrame,
    runs: pd.DataFrame,
    *,
    algorithms: Sequence[str] | None = None,
    alpha: float = 0.01,
) -> pd.DataFrame:
    """One row per ``(algorithm, epsilon)`` with the papers' figures (see the module docstring).

    Parameters
    ----------
    redescriptions : pandas.DataFrame
        ``redescriptions.csv``: ``algorithm``, ``epsilon``, ``run``, ``pruned``,
        ``noisy_jaccard``, ``true_jaccard``, ``true_pvalue``, ``abs_error_jaccard``
        (and optionally ``true_jaccard_in_interval``).
    runs : pandas.DataFrame
        ``runs.csv``: ``algorithm``, ``epsilon``, ``status``, ``kept``, ``seconds``,
        ``peak_mb``.
    algorithms : sequence of str, optional
        Row order of the algorithms.
    alpha : float
        Significance level.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`SUMMARY_TABLE_COLUMNS`; ``runs`` counts every run of the
        group, ``runs_ok`` the finished ones, over which ``runs_with_results`` is taken.

    Examples
    --------
    >>> runs = pd.DataFrame({"algorithm": ["a", "a"], "epsilon": [1.0, 1.0], "run": [0, 1],
    ...                      "status": ["ok", "ok"], "kept": [2, 0], "seconds": [1.0, 3.0], "peak_mb": [100, 120]})
    >>> reds = pd.DataFrame({"algorithm": "a", "epsilon": 1.0, "run": [0, 0, 1], "pruned": [False, False, True],
    ...                      "noisy_jaccard": [0.5, 0.7, 0.2], "true_jaccard": [0.4, 0.8, 0.1],
    ...                      "true_pvalue": [1e-5, 0.5, 1e-9], "abs_error_jaccard": [0.1, 0.1, 0.1]})
    >>> row = summary_table(reds, runs).iloc[0]
    >>> float(row.runs_with_results), int(row.kept), float(row.share_significant), float(row.true_jaccard_median)
    (0.5, 2, 0.5, 0.6000000000000001)
    """
    out = []
    for algorithm, epsilon in _groups(runs, redescriptions, algorithms):
        group_runs = runs[(runs["algorithm"] == algorithm).to_numpy() & _same_epsilon(runs["epsilon"], epsilon)] \
            if len(runs) else runs
        ok = group_runs[group_runs["status"] == "ok"] if len(group_runs) else group_runs
        rows = redescriptions[(redescriptions["algorithm"] == algorithm).to_numpy()
                              & _same_epsilon(redescriptions["epsilon"], epsilon)] if len(redescriptions) \
            else redescriptions
        kept_rows = kept(rows)
        success = pd.to_numeric(ok["kept"], errors="coerce").fillna(0) >= 1 if len(ok) else pd.Series(dtype=bool)
        rho, rho_p = spearman(kept_rows, kept_only=False) if len(kept_rows) else (math.nan, math.nan)
        true_q = _quartiles(kept_rows["true_jaccard"]) if len(kept_rows) else (math.nan,) * 3
        if len(kept_rows) and "abs_error_jaccard" in kept_rows.columns:
            error_q = _quartiles(kept_rows["abs_error_jaccard"])
        else:
            error_q = (math.nan,) * 3
        coverage = math.nan
        if len(kept_rows) and "true_jaccard_in_interval" in kept_rows.columns:
            inside = kept_rows["true_jaccard_in_interval"].map(
                lambda v: math.nan if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA
                else float(str(v).lower() in ("true", "1", "1.0")))
            inside = pd.to_numeric(inside, errors="coerce").dropna()
            coverage = float(inside.mean()) if len(inside) else math.nan
        out.append({
            "algorithm": algorithm,
            "epsilon": epsilon,
            "runs": len(group_runs),
            "runs_ok": len(ok),
            "runs_with_results": float(success.mean()) if len(success) else math.nan,
            "returned": len(rows),
            "kept": len(kept_rows),
            "share_significant": share_significant(kept_rows, alpha=alpha, kept_only=False)
            if len(kept_rows) else math.nan,
            "spearman_rho": rho,
            "spearman_p": rho_p,
            "true_jaccard_q1": true_q[0], "true_jaccard_median": true_q[1], "true_jaccard_q3": true_q[2],
            "abs_error_jaccard_q1": error_q[0], "abs_error_jaccard_median": error_q[1],
            "abs_error_jaccard_q3": error_q[2],
            "interval_coverage": coverage,
            "seconds_median": _median(ok["seconds"]) if len(ok) else math.nan,
            "peak_mb_median": _median(ok["peak_mb"]) if len(ok) else math.nan,
        })
    table = pd.DataFrame(out, columns=list(SUMMARY_TABLE_COLUMNS))
    return table


def mann_whitney_table(redescriptions: pd.DataFrame) -> pd.DataFrame:
    """Best method vs each other within every epsilon, for true Jaccard and its absolute error.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`MANN_WHITNEY_TABLE_COLUMNS`: ``value`` is ``true_jaccard``
        (best = highest median, ``alternative="greater"``) or ``abs_error_jaccard``
        (best = lowest median, ``alternative="less"``); kept redescriptions only.

    Examples
    --------
    >>> reds = pd.DataFrame({"algorithm": ["a"] * 4 + ["b"] * 4, "epsilon": 1.0, "pruned": False,
    ...                      "true_jaccard": [0.8, 0.9, 0.85, 0.95, 0.1, 0.2, 0.15, 0.3],
    ...                      "abs_error_jaccard": [0.01, 0.02, 0.01, 0.03, 0.2, 0.1, 0.3, 0.2]})
    >>> table = mann_whitney_table(reds)
    >>> table[["value", "best", "other"]].values.tolist()
    [['true_jaccard', 'a', 'b'], ['abs_error_jaccard', 'a', 'b']]
    """
    parts = []
    if len(redescriptions):
        epsilons = pd.to_numeric(redescriptions["epsilon"], errors="coerce").to_numpy(dtype=np.float64)
        distinct = sorted(set(epsilons[~np.isnan(epsilons)].tolist()), reverse=True)
        if np.isnan(epsilons).any():
            distinct = [math.nan, *distinct]
        for epsilon in distinct:
            rows = redescriptions[_same_epsilon(redescriptions["epsilon"], epsilon)]
            for value in ("true_jaccard", "abs_error_jaccard"):
                if value not in rows.columns:
                    continue
                table = mann_whitney_best(rows, value=value, by="algorithm")
                if table.empty:
                    continue
                table.insert(0, "value", value)
                table.insert(0, "epsilon", epsilon)
                parts.append(table)
    if not parts:
        return pd.DataFrame({c: pd.Series(dtype=object if c in ("value", "best", "other") else float)
                             for c in MANN_WHITNEY_TABLE_COLUMNS})
    return pd.concat(parts, ignore_index=True)[list(MANN_WHITNEY_TABLE_COLUMNS)]


def write_paper_tables(
    redescriptions: pd.DataFrame,
    runs: pd.DataFrame,
    out_dir: str | os.PathLike,
    *,
    algorithms: Sequence[str] | None = None,
    alpha: float = 0.01,
) -> dict[str, Path]:
    """Write ``summary.csv`` and ``mann_whitney.csv`` (atomically) into ``out_dir``.

    Returns
    -------
    dict
        ``{"summary": path, "mann_whitney": path}``.
    """

    out_dir = Path(out_dir)
    return {
        "summary": write_csv_atomic(summary_table(redescriptions, runs, algorithms=algorithms, alpha=alpha),
                                    out_dir / "summary.csv"),
        "mann_whitney": write_csv_atomic(mann_whitney_table(redescriptions), out_dir / "mann_whitney.csv"),
    }


def write_csv_atomic(frame: pd.DataFrame, path: str | os.PathLike) -> Path:
    """Write ``frame`` as CSV (no index) to a temporary file, then move it into place.

    Examples
    --------
    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     out = write_csv_atomic(pd.DataFrame({"a": [1, 2]}), Path(tmp) / "t.csv")
    ...     out.read_text()
    'a\\n1\\n2\\n'
    """
    path = Path(path)
    with naming(path.parent):
        path.parent.mkdir(parents=True, exist_ok=True)
    write_named(path, frame.to_csv(index=False, lineterminator="\n"))  # a full disk's error names the file
    return path
