"""The default private miner of ``dprm mine`` (no ``--algorithm``), chosen by a public rule.

The choice depends only on public values (ε); it was measured with
``benchmarks/quality_weak_signal.py`` (docs/mining.md, "The default miner").
"""

from __future__ import annotations

__all__ = ["DEFAULT_ALGORITHM", "default_algorithm"]

#: The name that stands for "the default miner" (``dprm mine`` without ``--algorithm``).
DEFAULT_ALGORITHM = "default"


def default_algorithm(epsilon: float) -> str:
    """The private algorithm ``dprm mine`` runs without ``--algorithm``.

    Examples
    --------
    >>> default_algorithm(1.0)
    'mcmc-tree-pair'
    """
    return "mcmc-tree-pair"
