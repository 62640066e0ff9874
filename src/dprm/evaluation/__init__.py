"""Evaluation: true statistics of released redescriptions and the papers' summary figures.

* :func:`true_statistics`: noisy and true statistics of every redescription of a
  document, with the errors of the noisy ones (one row per redescription);
* summaries over such frames (pooled over runs, grouped by algorithm and budget):
  :func:`share_significant`, :func:`spearman`, :func:`median_true_jaccard`,
  :func:`runs_with_results`, :func:`mann_whitney_best`, :func:`summarise`;
* the experiment runner (``dprm evaluate``): :func:`run_experiment` with an
  :class:`ExperimentConfig` and budgets ``EPSxRUNS`` (:func:`parse_budgets`), and
  the papers' tables from its tidy tables (:func:`summary_table`, :func:`mann_whitney_table`).
"""

from dprm.evaluation.summary import (
    MANN_WHITNEY_COLUMNS,
    SUMMARY_COLUMNS,
    kept,
    mann_whitney_best,
    median_true_jaccard,
    runs_with_results,
    share_significant,
    spearman,
    summarise,
)
from dprm.evaluation.true_statistics import INTERVAL_COLUMNS, STATISTICS_COLUMNS, true_statistics
from dprm.evaluation.budgets import Budget, parse_budgets
from dprm.evaluation.runner import ExperimentConfig, ExperimentResult, run_experiment, write_tables
from dprm.evaluation.tables import mann_whitney_table, summary_table

__all__ = [
    "true_statistics",
    "STATISTICS_COLUMNS",
    "INTERVAL_COLUMNS",
    "kept",
    "share_significant",
    "spearman",
    "median_true_jaccard",
    "runs_with_results",
    "mann_whitney_best",
    "summarise",
    "SUMMARY_COLUMNS",
    "MANN_WHITNEY_COLUMNS",
    "Budget",
    "parse_budgets",
    "ExperimentConfig",
    "ExperimentResult",
    "run_experiment",
    "write_tables",
    "summary_table",
    "mann_whitney_table",
]
