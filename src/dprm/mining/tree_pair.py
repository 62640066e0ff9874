"""MCMCTreePair: private redescriptions from MCMC-sampled pairs of trees.

Algorithm 4 of the tree-based paper. For each of ``init_trials`` initial targets (a
random attribute), a pair of trees with matching leaves is sampled by
Metropolis–Hastings (Algorithm 5, :func:`dprm.trees.private.sample_tree_pair`) and
extracted privately.

Budget: each trial gets ``ε / InTr``, split by ``ω`` between sampling
(``ω · ε / InTr``) and extraction (``(1 − ω) · ε / InTr``): ``InTr · ε / InTr = ε``
in all, exactly. Guarantee: ``pure-dp-on-mcmc-convergence``.

dprm's defaults differ from the paper where the paper is weak (issue 3):
``pair_score="counts"`` (majority masses in rows with bounded range 3; see
:mod:`dprm.trees.private`) instead of the normalised score (6), which leaves the
sampler practically uniform at the paper's budgets (``pair_score="paper"`` keeps it;
``"gini"`` is the Gini form of dprm's score); a fixed number of MCMC steps instead of the
data-dependent variance stop (``mcmc_stop="variance"`` keeps it).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction

import numpy as np

from dprm.data.attributes import TwoViewData
from dprm.errors import ParameterError
from dprm.mining.private_trees import PrivateTreeMiner
from dprm.privacy import Accountant, split_budget
from dprm.privacy.budget import as_fraction
from dprm.trees.private import PAIR_SCORES, prepare_tree_pair

__all__ = ["MCMCTreePair"]


class MCMCTreePair(PrivateTreeMiner):
    """The MCMCTreePair miner.

    Parameters
    ----------
    epsilon : float
        The budget the run spends.
    depth : int
        Tree depth d.
    init_trials : int
        Initial targets InTr (one tree pair each).
    mcmc_iterations : int
        Metropolis–Hastings steps per tree pair (MCIter).
    omega : float
        Share ω of each trial's budget for sampling the pair; the rest extracts.
    pair_score : {"counts", "gini", "paper"}
        The tree-pair score (see :mod:`dprm.trees.private`).
    mcmc_stop : {"fixed", "variance"}
        Fixed number of steps (default) or the paper's variance stop.
    variance_threshold, variance_window : float, int
        σ and k of the variance stop.
    max_clauses, min_support, max_support, min_jaccard, max_pvalue : number
        Γ and the disjunctions per side.
    max_splits, target_bins, counts, units, prune_support, prune_interval, prune_significance, confidence,
    size_share, target_binning, binning_share
        As for :class:`~dprm.mining.alternation.AlternatingTrees`.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data import load_two_view
    >>> from dprm.datasets import make_planted
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> planted = make_planted(3000, n_planted=1, noise=0.02, random_state=0)
    >>> data = load_two_view(planted.left, planted.right, types=planted.types)
    >>> accountant = Accountant(1.0, SeededNoise(np.random.default_rng(1)))
    >>> miner = MCMCTreePair(init_trials=2, mcmc_iterations=2000)
    >>> miner = miner.fit(data, accountant=accountant, rng=np.random.default_rng(1))
    >>> float(accountant.spent())
    1.0
    """

    algorithm = "mcmc-tree-pair"
    guarantee = "pure-dp-on-mcmc-convergence"

    def __init__(
        self,
        *,
        epsilon: float = 1.0,
        depth: int = 4,
        init_trials: int = 4,
        mcmc_iterations: int = 10_000,
        omega: float = 0.1,
        pair_score: str = "counts",
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
        self.mcmc_iterations = mcmc_iterations
        self.omega = omega
        self.pair_score = pair_score
        self.mcmc_stop = mcmc_stop
        self.variance_threshold = variance_threshold
        self.variance_window = variance_window
        self._common(epsilon, depth, init_trials, max_clauses, min_support, max_support, min_jaccard,
                     max_pvalue, max_splits, target_bins, counts, units, prune_support, prune_interval,
                     prune_significance, confidence, size_share, target_binning, binning_share)

    def _validate(self) -> None:
        if not 0 < self.omega < 1:
            raise ParameterError(f"omega must be in (0, 1), not {self.omega}")
        if self.pair_score not in PAIR_SCORES:
            raise ParameterError(f"pair-score must be one of {', '.join(PAIR_SCORES)}, not {self.pair_score!r}")
        if self.mcmc_iterations < 1:
            raise ParameterError(f"mcmc-iterations must be at least 1, not {self.mcmc_iterations}")

    def _mine(self, data: TwoViewData, accountant: Accountant, rng: np.random.Generator, epsilon) -> None:
        omega = as_fraction(self.omega, "omega")
        per_trial = split_budget(epsilon, [1] * self.init_trials)
        shares = [split_budget(budget, [omega, Fraction(1) - omega]) for budget in per_trial]
        # Every chain is charged and prepared first (all random draws in a fixed
        # order), then the chains run on the available cores, then each pair is
        # extracted: the result does not depend on the scheduling.
        jobs, firsts = [], []
        for trial, (sampling, _) in enumerate(shares, start=1):
            source, target, n_classes = self.initial_target(data, rng)
            first, second = 1 - source, source
            jobs.append(prepare_tree_pair(
                self.indexes_[first], self.indexes_[second], target, n_classes, self.depth, sampling,
                accountant, f"sampleTreePair#{trial}", rng, iterations=self.mcmc_iterations,
                pair_score=self.pair_score, stop=self.mcmc_stop,
                variance_threshold=self.variance_threshold, variance_window=self.variance_window,
            ))
            firsts.append(first)
        with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), os.cpu_count() or 1))) as pool:
            pairs = list(pool.map(lambda job: job.run(), jobs))
        for trial, ((first_tree, second_tree), first, (_, extraction)) in enumerate(
            zip(pairs, firsts, shares), start=1
        ):
            trees = (first_tree, second_tree) if first == 0 else (second_tree, first_tree)
            self.extract(trees, extraction, f"extractReds#{trial}")
