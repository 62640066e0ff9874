"""Evaluation: true statistics of released redescriptions and the papers' summary figures.

* :func:`true_statistics`: noisy and true statistics of every redescription of a
  document, with the errors of the noisy ones (one row per redescription);
* summaries over such frames (pooled over runs, grouped by algorithm and budget):
  :func:`share_significant`, :func:`spearman`, :func:`median_true_jaccard`,
  :func:`runs_with_results`, :func:`mann_whitney_best`, :func:`summarise`.
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
]
