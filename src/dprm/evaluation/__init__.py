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

from importlib import import_module
from typing import Any

# Imported at once: the function shares its module's name, and a later import of the
# module would otherwise shadow it on the package.
from dprm.evaluation.true_statistics import INTERVAL_COLUMNS, STATISTICS_COLUMNS, true_statistics

#: Where each public name lives; a submodule is imported on first use of one of its
#: names, so that a command that needs one module (e.g. the algorithm names for a help
#: text) does not pay for scipy and pandas (PEP 562).
_HOMES = {
    "MANN_WHITNEY_COLUMNS": "summary", "SUMMARY_COLUMNS": "summary", "kept": "summary",
    "mann_whitney_best": "summary", "median_true_jaccard": "summary", "runs_with_results": "summary",
    "share_significant": "summary", "spearman": "summary", "summarise": "summary",
    "Budget": "budgets", "parse_budgets": "budgets",
    "ExperimentConfig": "runner", "ExperimentResult": "runner", "run_experiment": "runner",
    "write_tables": "runner",
    "mann_whitney_table": "tables", "summary_table": "tables",
}


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        value = getattr(import_module(f"dprm.evaluation.{_HOMES[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'dprm.evaluation' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


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
