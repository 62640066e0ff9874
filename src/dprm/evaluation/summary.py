"""The papers' summary figures over frames of true statistics (issue 4, part 3).

Every function takes a frame of :func:`~dprm.evaluation.true_statistics` rows, or a
concatenation of such frames with extra columns (``algorithm``, ``epsilon``,
``run``, ...), and computes one of the numbers the papers report:

============================== ==================================================
function                       paper (tree-based DP redescription mining)
============================== ==================================================
:func:`runs_with_results`      Tables 7–8: share of runs with ≥ 1 kept result
:func:`share_significant`      Table 3: share of kept redescriptions with p < α
:func:`spearman`               Table 2: Spearman ρ, noisy vs true Jaccard
:func:`median_true_jaccard`    Tables 4 / Figures 4–5: central true accuracy
:func:`mann_whitney_best`      Tables 4–5: best method vs each other, one-sided
:func:`summarise`              all of the above per group (algorithm, epsilon)
============================== ==================================================

*Kept* redescriptions are those with ``pruned`` false (the papers' "filtered"
ones); with ``kept_only=True`` (the default) only they count. A frame without a
``pruned`` column counts every row as kept. Empty inputs give NaN, never an error.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

__all__ = [
    "kept",
    "share_significant",
    "spearman",
    "median_true_jaccard",
    "runs_with_results",
    "mann_whitney_best",
    "summarise",
    "SUMMARY_COLUMNS",
    "MANN_WHITNEY_COLUMNS",
]

#: The statistics columns of :func:`summarise` (after the group columns).
SUMMARY_COLUMNS: tuple[str, ...] = (
    "n_runs",
    "n_kept",
    "median_true_jaccard",
    "share_significant",
    "spearman_rho",
    "spearman_p",
    "median_abs_error_jaccard",
)

#: The columns of :func:`mann_whitney_best`.
MANN_WHITNEY_COLUMNS: tuple[str, ...] = (
    "best",
    "other",
    "n_best",
    "n_other",
    "median_best",
    "median_other",
    "statistic",
    "pvalue",
)


def kept(frame: pd.DataFrame, kept_only: bool = True) -> pd.DataFrame:
    """The rows that count: those not pruned when ``kept_only`` (all rows otherwise).

    Examples
    --------
    >>> frame = pd.DataFrame({"pruned": [False, True, False], "true_jaccard": [0.5, 0.1, 0.9]})
    >>> len(kept(frame)), len(kept(frame, kept_only=False))
    (2, 3)
    """
    if not kept_only or "pruned" not in frame.columns:
        return frame
    pruned = frame["pruned"].fillna(False).astype(bool)
    return frame[~pruned.to_numpy()]


def _values(frame: pd.DataFrame, column: str) -> np.ndarray:
    if column not in frame.columns:
        if frame.empty:
            return np.empty(0)
        raise KeyError(f"the frame has no column {column!r}")
    return pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)


def share_significant(frame: pd.DataFrame, alpha: float = 0.01, kept_only: bool = True) -> float:
    """Share of (kept) redescriptions whose true p-value is below ``alpha`` (Table 3).

    Parameters
    ----------
    frame : pandas.DataFrame
        Needs ``true_pvalue`` (and ``pruned`` for ``kept_only``).
    alpha : float
        The significance threshold (the papers use 0.01); significant means ``p < alpha``.
    kept_only : bool
        Count only the redescriptions that are not pruned.

    Returns
    -------
    float
        In [0, 1]; NaN when no redescription counts. Rows with an unknown p-value
        are left out.

    Examples
    --------
    >>> frame = pd.DataFrame({"pruned": [False, False, False, True],
    ...                       "true_pvalue": [1e-5, 0.003, 0.2, 1e-9]})
    >>> share_significant(frame)
    0.6666666666666666
    >>> share_significant(frame, kept_only=False)
    0.75
    >>> share_significant(frame.iloc[:0])
    nan
    """
    p = _values(kept(frame, kept_only), "true_pvalue")
    p = p[~np.isnan(p)]
    return float(np.mean(p < alpha)) if p.size else math.nan


def spearman(frame: pd.DataFrame, kept_only: bool = True) -> tuple[float, float]:
    """Spearman's ρ between noisy and true Jaccard, with its p-value (Table 2).

    Uses :func:`scipy.stats.spearmanr` (two-sided p-value) over the rows where both
    values are known.

    Returns
    -------
    (rho, pvalue) : tuple of float
        ``(nan, nan)`` with fewer than two rows or when either column is constant.

    Examples
    --------
    >>> frame = pd.DataFrame({"noisy_jaccard": [0.2, 0.5, 0.6, 0.9], "true_jaccard": [0.1, 0.3, 0.35, 0.8]})
    >>> rho, p = spearman(frame)
    >>> float(rho)
    1.0
    >>> spearman(frame.iloc[:1])
    (nan, nan)
    """
    rows = kept(frame, kept_only)
    noisy, true = _values(rows, "noisy_jaccard"), _values(rows, "true_jaccard")
    both = ~(np.isnan(noisy) | np.isnan(true))
    noisy, true = noisy[both], true[both]
    if noisy.size < 2 or np.all(noisy == noisy[0]) or np.all(true == true[0]):
        return math.nan, math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = stats.spearmanr(noisy, true)
    return float(result.statistic), float(result.pvalue)


def median_true_jaccard(frame: pd.DataFrame, kept_only: bool = True) -> float:
    """Median true Jaccard of the (kept) redescriptions; NaN when there are none.

    Examples
    --------
    >>> frame = pd.DataFrame({"pruned": [False, False, True], "true_jaccard": [0.2, 0.4, 0.9]})
    >>> round(median_true_jaccard(frame), 6), median_true_jaccard(frame, kept_only=False)
    (0.3, 0.4)
    """
    values = _values(kept(frame, kept_only), "true_jaccard")
    values = values[~np.isnan(values)]
    return float(np.median(values)) if values.size else math.nan


def _group_columns(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    if isinstance(by, str):
        return [by]
    return list(by)


def runs_with_results(runs: pd.DataFrame, by: str | Sequence[str] | None = None) -> float | pd.Series:
    """Share of runs that returned at least one kept redescription (Tables 7–8).

    Parameters
    ----------
    runs : pandas.DataFrame
        One row per run (``runs.csv`` of the experiment runner) with a ``kept``
        column: the number of kept redescriptions of the run.
    by : str or sequence of str, optional
        Group columns (e.g. ``["algorithm", "epsilon"]``): then a Series indexed by
        group, else one number.

    Returns
    -------
    float or pandas.Series
        Shares in [0, 1]; NaN for no runs.

    Examples
    --------
    >>> runs = pd.DataFrame({"algorithm": ["a", "a", "a", "b"], "kept": [3, 0, 1, 0]})
    >>> runs_with_results(runs)
    0.5
    >>> runs_with_results(runs, by="algorithm").to_dict()
    {'a': 0.6666666666666666, 'b': 0.0}
    >>> runs_with_results(runs.iloc[:0])
    nan
    """
    columns = _group_columns(by)
    if "kept" not in runs.columns:
        if runs.empty and not columns:
            return math.nan
        raise KeyError("runs_with_results needs a 'kept' column (kept redescriptions per run)")
    success = pd.to_numeric(runs["kept"], errors="coerce").fillna(0) >= 1
    if not columns:
        return float(success.mean()) if len(success) else math.nan
    return success.groupby([runs[c] for c in columns], sort=True).mean().astype(float).rename("runs_with_results")


def mann_whitney_best(
    frame: pd.DataFrame,
    value: str = "true_jaccard",
    by: str | Sequence[str] = "algorithm",
    *,
    better: str = "auto",
    kept_only: bool = True,
) -> pd.DataFrame:
    """One-sided Mann–Whitney U tests of the best method against each other (Tables 4–5).

    The *best* group is the one with the highest median of ``value`` (Table 4, true
    Jaccard) or, with ``better="lower"``, the lowest (Table 5, the absolute error).
    It is tested against every other group with :func:`scipy.stats.mannwhitneyu`,
    ``alternative="greater"`` (best stochastically larger) or ``"less"`` for
    ``better="lower"``.

    Parameters
    ----------
    frame : pandas.DataFrame
        Redescription rows (pooled over runs) with the ``value`` and ``by`` columns.
    value : str
        The compared column.
    by : str or sequence of str
        The column(s) naming the methods; with several, a method is a tuple.
    better : {"auto", "higher", "lower"}
        Which direction is better; ``"auto"`` means ``"lower"`` for columns whose
        name contains ``error`` and ``"higher"`` otherwise.
    kept_only : bool
        Use only the redescriptions that are not pruned (the papers' filtered sets).

    Returns
    -------
    pandas.DataFrame
        Columns :data:`MANN_WHITNEY_COLUMNS`, one row per other method, sorted by
        p-value. Empty when fewer than two methods have values; a comparison with
        an empty group has NaN statistic and p-value.

    Examples
    --------
    >>> frame = pd.DataFrame({"algorithm": ["a"] * 4 + ["b"] * 4,
    ...                       "true_jaccard": [0.8, 0.9, 0.85, 0.95, 0.1, 0.2, 0.15, 0.3]})
    >>> table = mann_whitney_best(frame)
    >>> table.loc[0, "best"], table.loc[0, "other"], float(table.loc[0, "statistic"]), round(float(table.loc[0, "pvalue"]), 4)
    ('a', 'b', 16.0, 0.0143)
    """
    if better == "auto":
        better = "lower" if "error" in value else "higher"
    if better not in ("higher", "lower"):
        raise ValueError(f"better must be 'auto', 'higher' or 'lower', got {better!r}")
    columns = _group_columns(by)
    rows = kept(frame, kept_only)
    empty = pd.DataFrame({c: pd.Series(dtype=object if c in ("best", "other") else float)
                          for c in MANN_WHITNEY_COLUMNS})
    if rows.empty or not columns:
        return empty
    for column in [value, *columns]:
        if column not in rows.columns:
            raise KeyError(f"the frame has no column {column!r}")
    key = columns[0] if len(columns) == 1 else columns
    groups: dict[Any, np.ndarray] = {}
    for name, group in rows.groupby(key, sort=True, dropna=False):
        values = pd.to_numeric(group[value], errors="coerce").to_numpy(dtype=np.float64)
        groups[name] = values[~np.isnan(values)]
    medians = {name: (float(np.median(v)) if v.size else math.nan) for name, v in groups.items()}
    candidates = [name for name, m in medians.items() if not math.isnan(m)]
    if len(groups) < 2 or not candidates:
        return empty
    pick = max if better == "higher" else min
    best = pick(candidates, key=lambda name: medians[name])
    alternative = "greater" if better == "higher" else "less"
    out = []
    for name, values in groups.items():
        if name == best:
            continue
        statistic = pvalue = math.nan
        if values.size and groups[best].size:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = stats.mannwhitneyu(groups[best], values, alternative=alternative)
            statistic, pvalue = float(result.statistic), float(result.pvalue)
        out.append({"best": best, "other": name, "n_best": groups[best].size, "n_other": values.size,
                    "median_best": medians[best], "median_other": medians[name],
                    "statistic": statistic, "pvalue": pvalue})
    table = pd.DataFrame(out, columns=list(MANN_WHITNEY_COLUMNS))
    return table.sort_values("pvalue", kind="stable", na_position="last").reset_index(drop=True)


def _summary_row(group: pd.DataFrame, alpha: float, kept_only: bool) -> dict[str, float]:
    rows = kept(group, kept_only)
    if "abs_error_jaccard" in rows.columns:
        errors = _values(rows, "abs_error_jaccard")
    elif {"noisy_jaccard", "true_jaccard"} <= set(rows.columns):
        errors = np.abs(_values(rows, "noisy_jaccard") - _values(rows, "true_jaccard"))
    else:
        errors = np.empty(0)
    errors = errors[~np.isnan(errors)]
    rho, p = spearman(rows, kept_only=False)
    return {
        "n_runs": group["run"].nunique() if "run" in group.columns else math.nan,
        "n_kept": len(rows),
        "median_true_jaccard": median_true_jaccard(rows, kept_only=False),
        "share_significant": share_significant(rows, alpha=alpha, kept_only=False),
        "spearman_rho": rho,
        "spearman_p": p,
        "median_abs_error_jaccard": float(np.median(errors)) if errors.size else math.nan,
    }


def summarise(
    frame: pd.DataFrame,
    by: str | Iterable[str] | None = ("algorithm", "epsilon"),
    *,
    alpha: float = 0.01,
    kept_only: bool = True,
) -> pd.DataFrame:
    """One row per group with the papers' summary figures.

    Parameters
    ----------
    frame : pandas.DataFrame
        Redescription rows (one :func:`~dprm.evaluation.true_statistics` frame or a
        concatenation with ``algorithm``/``epsilon``/``run`` columns).
    by : str or iterable of str, optional
        Group columns. Those absent from the frame are ignored; with none left the
        whole frame is one group.
    alpha : float
        Significance threshold of ``share_significant``.
    kept_only : bool
        Compute the figures over the kept (not pruned) redescriptions.

    Returns
    -------
    pandas.DataFrame
        The group columns, then :data:`SUMMARY_COLUMNS`: ``n_runs`` (distinct values
        of ``run`` in the group, NaN without a ``run`` column; a run that returned no
        redescription has no row and is not counted — use :func:`runs_with_results`
        on the runs table for that), ``n_kept``, ``median_true_jaccard``,
        ``share_significant``, ``spearman_rho``, ``spearman_p``,
        ``median_abs_error_jaccard``. An empty frame gives an empty table (or one
        row of NaN and zero counts when there are no group columns).

    Examples
    --------
    >>> frame = pd.DataFrame({
    ...     "algorithm": ["x", "x", "x", "y", "y"], "epsilon": 1.0, "run": [0, 0, 1, 0, 0],
    ...     "pruned": [False, False, False, False, True],
    ...     "noisy_jaccard": [0.3, 0.5, 0.7, 0.4, 0.9], "true_jaccard": [0.2, 0.4, 0.6, 0.4, 0.1],
    ...     "abs_error_jaccard": [0.1, 0.1, 0.1, 0.0, 0.8], "true_pvalue": [0.5, 1e-4, 1e-6, 1e-3, 0.9]})
    >>> table = summarise(frame)
    >>> table[["algorithm", "n_runs", "n_kept", "median_true_jaccard", "spearman_rho"]].to_string(index=False)
    'algorithm  n_runs  n_kept  median_true_jaccard  spearman_rho\\n        x       2       3                  0.4           1.0\\n        y       1       1                  0.4           NaN'
    """
    columns = [c for c in _group_columns(by if by is None or isinstance(by, str) else list(by))
               if c in frame.columns]
    if not columns:
        return pd.DataFrame([_summary_row(frame, alpha, kept_only)], columns=list(SUMMARY_COLUMNS))
    out = []
    key = columns[0] if len(columns) == 1 else columns
    for name, group in frame.groupby(key, sort=True, dropna=False):
        names = name if isinstance(name, tuple) else (name,)
        out.append({**dict(zip(columns, names)), **_summary_row(group, alpha, kept_only)})
    table = pd.DataFrame(out, columns=[*columns, *SUMMARY_COLUMNS])
    if table.empty:
        table = table.astype({c: float for c in SUMMARY_COLUMNS})
    return table
