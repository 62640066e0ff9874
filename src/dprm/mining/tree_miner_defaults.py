"""The keyword parameters the private tree miners share, with their defaults, written once.

AltExpM / AltMCMC (:class:`~dprm.mining.alternation.AlternatingTrees`) and
MCMCTreePair (:class:`~dprm.mining.tree_pair.MCMCTreePair`) take their own
parameters first, then these, in this order: each class's ``__init__`` is
:func:`dprm.mining.base.keyword_init` of its own signature and
:func:`shared_tree_parameters`, wrapped by :func:`variant_init`. What each parameter
means and its limits are the specs of :data:`dprm.mining.tree_parameters.TREE_PARAMETERS`
and ``MCMC_PARAMETERS``.

**Variants** (issue 28). ``variant="dprm"`` (the default) runs every tree miner with
the measured-best private machinery: initial targets scored by their association
with the other view (``targets="scored"``) and the public ``"auto"`` rule for the
trials, the depth, the targets' share (and MCMCTreePair's ω), :mod:`dprm.mining.auto_trees`,
and extraction from whole subtrees as well as leaves (``units="auto"``: subtrees up to
depth 6; post-processing of the same released counts, measured better in session 21).
AltExpM and AltMCMC also split each trial's budget half for the trees, half for the
extraction (``omega``), and score their trees by the rows of each cell's majority class
(``tree_score="counts"``, monotone, sensitivity 1). ``variant="paper"`` gives the
parameters that differ the values of the paper era (:data:`PAPER_VALUES`: uniformly
random initial attributes, four trials of depth 4, MCMCTreePair's ω = 0.1, the
public equally wide grid, extraction from single leaves; the alternations' equal shares
and Gini scores), so that a
seeded run with ``variant="paper"`` writes what the named algorithm wrote before
(with ``numeric_grid="auto"``: exactly what it wrote before issue 28, documents and
ledgers alike). Values given explicitly always win over the variant's.

Examples
--------
>>> import inspect
>>> list(inspect.signature(shared_tree_parameters).parameters)[:3]
['mcmc_stop', 'mcmc_nodes', 'variance_threshold']
>>> from dprm.mining import make_miner
>>> paper = make_miner("mcmc-tree-pair", variant="paper")
>>> paper.targets, paper.init_trials, paper.depth, paper.omega
('uniform', 4, 4, 0.1)
>>> make_miner("mcmc-tree-pair", variant="paper", depth=3).depth   # given values win
3
>>> best = make_miner("alt-mcmc")
>>> best.variant, best.targets, best.init_trials
('dprm', 'scored', 'auto')
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

from dprm.mining.base import Param

__all__ = ["PAPER_VALUES", "VARIANT", "VARIANTS", "shared_tree_parameters", "variant_init"]

#: The variants of the private tree miners.
VARIANTS = ("dprm", "paper")

#: The parameter spec of ``variant``.
VARIANT = Param("variant", "'dprm', the measured-best private machinery (scored initial targets and the auto "
                           "settings, docs/mining.md), or 'paper', the tree paper's settings (uniform initial "
                           "attributes, 4 trials of depth 4, omega 0.1, the public grid); options given explicitly win",
                "choice", choices=VARIANTS)

#: What ``variant="paper"`` sets (unless given): the paper-era values of the parameters
#: whose ``"dprm"`` default differs. ``omega`` only where the miner has it.
PAPER_VALUES: dict[str, Any] = {"targets": "uniform", "init_trials": 4, "depth": 4, "target_share": 0.2,
                                "omega": 0.1, "numeric_grid": "equal-width", "units": "leaves",
                                "trial": "trees", "pair_thresholds": "off", "prune_interval_floor": None,
                                "prune_excess_floor": None, "significance_probability": None}


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
    units: str = "auto",
    prune_support: float | None = None,
    prune_interval: float | None = 0.22,
    prune_interval_floor: float | None = 0.5,
    prune_excess_floor: float | None = 0.05,
    prune_significance: bool = True,
    significance_probability: float | str | None = "auto",
    confidence: float = 0.95,
    size_share: float = 0.05,
    target_binning: str = "fixed",
    binning_share: float = 0.02,
    numeric_grid: str = "auto",
    grid_share: float = 0.05,
    targets: str = "scored",
    target_share: float | str = "auto",
    reestimate_share: float = 0.0,
    trial: str = "auto",
    pair_thresholds: str = "auto",
    variant: str = "dprm",
) -> None:
    """The shared tail of the private tree miners' ``__init__`` (a signature only, never called)."""


def variant_init(init: Callable[..., None], paper: Mapping[str, Any] | None = None) -> Callable[..., None]:
    """``init`` (a :func:`~dprm.mining.base.keyword_init`) where ``variant="paper"`` sets the paper's values.

    The parameters of :data:`PAPER_VALUES` that ``init`` has (and those of ``paper``, a
    miner's own) take the paper's value when the call gives ``variant="paper"`` and not
    the parameter itself. The signature (what the command line and the server read)
    is ``init``'s, with the ``"dprm"`` defaults.
    """
    signature = inspect.signature(init)
    values = {name: value for name, value in {**PAPER_VALUES, **(paper or {})}.items()
              if name in signature.parameters}

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("variant") == "paper":
            kwargs = {**values, **kwargs}
        init(self, *args, **kwargs)

    __init__.__signature__ = signature  # type: ignore[attr-defined]
    return __init__
