"""The keyword parameters the private tree miners share, with their defaults, written once.

AltExpM / AltMCMC (:class:`~dprm.mining.alternation.AlternatingTrees`) and
MCMCTreePair (:class:`~dprm.mining.tree_pair.MCMCTreePair`) take their own
parameters first, then these, in this order: each class's ``__init__`` is
:func:`dprm.mining.base.keyword_init` of its own signature and
:func:`shared_tree_parameters`. What each parameter means and its limits are the specs
of :data:`dprm.mining.private_trees.TREE_PARAMETERS` and ``MCMC_PARAMETERS``.

Examples
--------
>>> import inspect
>>> list(inspect.signature(shared_tree_parameters).parameters)[:3]
['mcmc_stop', 'mcmc_nodes', 'variance_threshold']
"""

from __future__ import annotations

__all__ = ["shared_tree_parameters"]


def shared_tree_parameters(
    *,
    mcmc_stop: str = "fixed",
    mcmc_nodes: str = "uniform",
    variance_threshold: float = 0.005,
    variance_window: int = 500,
    max_clauses: int = 3,
    min_support: float = 10,
    max_support: float = 0.8,
    min_jaccard: float = 0.1,
    max_pvalue: float = 0.01,
    max_splits: int = 32,
    target_bins: int = 4,
    counts: str = "cells",
    units: str = "leaves",
    prune_support: float | None = None,
    prune_interval: float | None = 0.22,
    prune_significance: bool = True,
    confidence: float = 0.95,
    size_share: float = 0.05,
    target_binning: str = "fixed",
    binning_share: float = 0.02,
    numeric_grid: str = "auto",
    grid_share: float = 0.05,
    targets: str = "uniform",
    target_share: float | str = 0.2,
    reestimate_share: float = 0.0,
) -> None:
    """The shared tail of the private tree miners' ``__init__`` (a signature only, never called)."""
