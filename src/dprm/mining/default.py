"""The default private miner of ``dprm mine`` (no ``--algorithm``), chosen by measurement.

``dprm mine LEFT RIGHT --epsilon E`` runs MCMCTreePair with initial targets chosen
privately by their association with the other view (``targets="scored"``,
:mod:`dprm.mining.initial_targets`) and the ``"auto"`` rule for the number of trials,
the depth, ω and the targets' share (:mod:`dprm.mining.auto_trees`), which reads only
ε and the noisy row count. Since issue 28 these are the class's own defaults
(``variant="dprm"``, :mod:`dprm.mining.tree_miner_defaults`), so ``-a mcmc-tree-pair``
runs the same miner; ``--variant paper`` gives the paper-era settings. Options given on
the command line override these values.
The output's ``algorithm`` is ``mcmc-tree-pair`` and its parameters are the values
used. Why this miner: docs/mining.md ("Weak signal"), measured with
``benchmarks/quality_weak_signal.py`` on planted data with four relations of
different kinds, on MAMMAL, spi and nmes1988, at ε = 0.1, 0.3 and 1.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_ALGORITHM", "default_algorithm", "default_parameters"]

#: The name that stands for "the default miner" in front ends and benchmarks.
DEFAULT_ALGORITHM = "default"


def default_algorithm(epsilon: float | None = None) -> str:
    """The private algorithm ``dprm mine`` runs without ``--algorithm`` (the same for every ε).

    Examples
    --------
    >>> default_algorithm(1.0)
    'mcmc-tree-pair'
    """
    return "mcmc-tree-pair"


def default_parameters(epsilon: float | None = None) -> dict[str, Any]:
    """The parameters of the default miner that differ from the class's defaults: none since issue 28.

    Examples
    --------
    >>> from dprm.mining import make_miner
    >>> miner = make_miner(default_algorithm(), **default_parameters())
    >>> miner.targets, miner.init_trials, miner.depth, miner.omega, miner.variant
    ('scored', 'auto', 'auto', 'auto', 'dprm')
    """
    return {}
