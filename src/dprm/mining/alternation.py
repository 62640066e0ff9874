"""AltExpM and AltMCMC: private redescriptions by alternating private trees.

Algorithm 1 (createRedsAlt) of the tree-based paper. For each of ``init_trials``
initial targets (a random attribute), a private tree on the other view predicts it;
then ``alternations`` times a private tree on the opposite view predicts the leaves of
the last tree, and the last two trees are extracted privately.

Budget (paper, section 4.3.1): every tree and every extraction gets
``ε' = ε / (InTr · (2·RMIter + 1))``; per initial target one first tree plus
``RMIter`` × (tree + extraction), so the total is ``InTr · (2·RMIter + 1) · ε' = ε``
exactly (exact fractions in the ledger). The *stable* setting of the paper is
``init_trials = k, alternations = 1``.

The trees are ``trees="exponential"`` (AltExpM: Algorithm 2, one exponential-mechanism
choice per level, ``pure-dp``) or ``trees="mcmc"`` (AltMCMC: Algorithm 3, a
Metropolis–Hastings chain, ``pure-dp-on-mcmc-convergence``).
"""

from __future__ import annotations

import numpy as np

from dprm.data.attributes import TwoViewData
from dprm.errors import ParameterError
from dprm.mining.private_trees import PrivateTreeMiner
from dprm.privacy import Accountant, split_budget
from dprm.trees.private import grow_exponential_tree, sample_tree

__all__ = ["AlternatingTrees", "TREE_BUILDERS"]

TREE_BUILDERS = ("exponential", "mcmc")


class AlternatingTrees(PrivateTreeMiner):
    """AltExpM (``trees="exponential"``) and AltMCMC (``trees="mcmc"``).

    Parameters
    ----------
    trees : {"exponential", "mcmc"}
        How each private tree is built.
    epsilon : float
        The budget the run spends.
    depth : int
        Tree depth d.
    init_trials : int
        Initial targets InTr.
    alternations : int
        Alternations RMIter per initial target.
    mcmc_iterations : int
        Metropolis–Hastings steps per tree (AltMCMC).
    mcmc_stop : {"fixed", "variance"}
        Stop after ``mcmc_iterations`` (default), or also when the variance of the
        last ``variance_window`` scores is below ``variance_threshold`` (the paper's
        data-dependent stop).
    max_clauses, min_support, max_support, min_jaccard, max_pvalue : number
        Γ and the disjunctions per side.
    max_splits : int
        Grid points per numeric attribute (over its public bounds).
    target_bins : int
        Equal-width bins of a numeric initial target when ``target_binning="fixed"``.
    target_binning : {"fixed", "fd"}
        ``target_bins`` equal-width bins (default) or the paper's Freedman–Diaconis
        number of bins from private estimates (on MAMMAL its 16 bins made the trees
        worse: median true Jaccard of MCMCTreePair 0.47 instead of 0.53).
    binning_share : float
        Share of ``epsilon`` for those estimates (only when a numeric attribute is
        an initial target).
    counts : {"cells", "paper"}
        How extraction releases counts (see :mod:`dprm.mining.private_extraction`).
    units : {"leaves", "subtrees"}
        What a simple query of extraction may be: a leaf (the paper) or a subtree.
    prune_support, prune_interval : float or None
        Pruning: noisy support below, or Jaccard interval wider than.
    prune_significance : bool
        Pruning: also where the upper end of the p-value interval exceeds
        ``max_pvalue`` (not significant at the pessimistic end of the noise).
    confidence : float
        Level of the reported intervals.
    size_share : float
        Share of ``epsilon`` for a noisy count of the rows (default 0.05; 0: none, as
        the paper); the rest is split as the paper does.
    """

    def __init__(
        self,
        *,
        trees: str = "mcmc",
        epsilon: float = 1.0,
        depth: int = 4,
        init_trials: int = 4,
        alternations: int = 1,
        mcmc_iterations: int = 10_000,
        mcmc_stop: str = "fixed",
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
    ) -> None:
        self.trees = trees
        self.alternations = alternations
        self.mcmc_iterations = mcmc_iterations
        self.mcmc_stop = mcmc_stop
        self.variance_threshold = variance_threshold
        self.variance_window = variance_window
        self._common(epsilon, depth, init_trials, max_clauses, min_support, max_support, min_jaccard,
                     max_pvalue, max_splits, target_bins, counts, units, prune_support, prune_interval,
                     prune_significance, confidence, size_share, target_binning, binning_share)

    @property
    def algorithm(self) -> str:  # type: ignore[override]
        return "alt-expm" if self.trees == "exponential" else "alt-mcmc"

    @property
    def guarantee(self) -> str:  # type: ignore[override]
        return "pure-dp" if self.trees == "exponential" else "pure-dp-on-mcmc-convergence"

    def _validate(self) -> None:
        if self.trees not in TREE_BUILDERS:
            raise ParameterError(f"trees must be one of {', '.join(TREE_BUILDERS)}, not {self.trees!r}")
        if self.alternations < 1:
            raise ParameterError(f"alternations must be at least 1, not {self.alternations}")
        if self.mcmc_iterations < 1:
            raise ParameterError(f"mcmc-iterations must be at least 1, not {self.mcmc_iterations}")

    def _tree(self, side: int, target: np.ndarray, n_classes: int, epsilon, step: str,
              accountant: Accountant, rng: np.random.Generator):
        index = self.indexes_[side]
        if self.trees == "exponential":
            return grow_exponential_tree(index, target, n_classes, self.depth, epsilon, accountant, step)
        return sample_tree(index, target, n_classes, self.depth, epsilon, accountant, step, rng,
                           iterations=self.mcmc_iterations, stop=self.mcmc_stop,
                           variance_threshold=self.variance_threshold, variance_window=self.variance_window)

    def _mine(self, data: TwoViewData, accountant: Accountant, rng: np.random.Generator, epsilon) -> None:
        n_releases = self.init_trials * (2 * self.alternations + 1)
        shares = iter(split_budget(epsilon, [1] * n_releases))
        for trial in range(1, self.init_trials + 1):
            source, target, n_classes = self.initial_target(data, rng)
            side = 1 - source
            trees = [None, None]
            trees[side] = self._tree(side, target, n_classes, next(shares), f"tree {trial}.0", accountant, rng)
            for alternation in range(1, self.alternations + 1):
                cells = trees[side].apply_cells(self.indexes_[side])
                n_classes = trees[side].n_leaves
                target = np.where(cells < n_classes, cells, -1)  # leaf of each row; drop-outs: none
                side = 1 - side
                trees[side] = self._tree(side, target, n_classes, next(shares), f"tree {trial}.{alternation}",
                                         accountant, rng)
                self.extract((trees[0], trees[1]), next(shares), f"extraction {trial}.{alternation}")

