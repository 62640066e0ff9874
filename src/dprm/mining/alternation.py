"""AltExpM and AltMCMC: private redescriptions by alternating private trees.

Algorithm 1 (createRedsAlt) of the tree-based paper. For each of ``init_trials``
initial targets (a random attribute), a private tree on the other view predicts it;
then ``alternations`` times a private tree on the opposite view predicts the leaves of
the last tree, and the last two trees are extracted privately. With ``alternations``
0 (dprm's ``"auto"`` below one trial's budget, :mod:`dprm.mining.auto_trees`; scored
targets only), the first tree is extracted against the initial target's literal itself
(:meth:`~dprm.mining.initial_targets.InitialTarget.tree`, a released choice): each trial
is then one tree (``ω`` of the trial) and one extraction (``1 − ω``).

Budget (paper, section 4.3.1, ``omega=None``): every tree and every extraction gets
``ε' = ε / (InTr · (2·RMIter + 1))``; per initial target one first tree plus
``RMIter`` × (tree + extraction), so the total is ``InTr · (2·RMIter + 1) · ε' = ε``
exactly (exact fractions in the ledger). The *stable* setting of the paper is
``init_trials = k, alternations = 1``. With a share ``ω`` (``"auto"``: 1/2, the
default), each trial's ``ε / InTr`` is split so that its ``RMIter + 1`` trees get
``ω`` in equal parts and its ``RMIter`` extractions ``1 − ω`` in equal parts: the
weights ``ω/(RMIter+1)`` per tree and ``(1−ω)/RMIter`` per extraction are exact
fractions, so the ledger still adds up to ε exactly. Why: at the paper's equal
shares an extraction gets a third of a trial (``RMIter = 1``), and its noisy cells
decide what is kept (docs/mining.md, "Every miner at its best by default").

The trees are ``trees="exponential"`` (AltExpM: Algorithm 2, one exponential-mechanism
choice per level, ``pure-dp``) or ``trees="mcmc"`` (AltMCMC: Algorithm 3, a
Metropolis–Hastings chain, ``pure-dp-on-mcmc-convergence``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dprm.data.attributes import TwoViewData
from dprm.errors import ParameterError
from dprm.mining.auto_trees import AUTO, ROWS_FOR_EXPONENTIAL_TREES
from dprm.mining.base import ALTERNATIONS, Param, keyword_init, parameter_table
from dprm.mining.private_trees import PrivateTreeMiner
from dprm.mining.tree_parameters import EXTRACTION_UNITS, MCMC_PARAMETERS, TREE_PARAMETERS
from dprm.mining.tree_miner_defaults import VARIANT, shared_tree_parameters, variant_init
from dprm.mining.tree_rows import ShardedGrowingRows
from dprm.privacy import Accountant, split_budget
from dprm.privacy.budget import as_fraction
from dprm.trees.private import TREE_SCORES, grow_exponential_tree

__all__ = ["AlternatingTrees", "TREE_BUILDERS"]

TREE_BUILDERS = ("exponential", "mcmc")


def _own_parameters(
    *,
    trees: str = "mcmc",
    epsilon: float = 1.0,
    depth: int | str = "auto",
    init_trials: int | str = "auto",
    alternations: int | str = "auto",
    mcmc_iterations: int = 10_000,
    omega: float | str | None = "auto",
    tree_score: str = "counts",
) -> None:
    """The first parameters of :class:`AlternatingTrees` (a signature only; the rest are
    :func:`~dprm.mining.tree_miner_defaults.shared_tree_parameters`)."""


class AlternatingTrees(PrivateTreeMiner):
    """AltExpM (``trees="exponential"``) and AltMCMC (``trees="mcmc"``).

    Every parameter's meaning, unit and allowed values are in
    ``AlternatingTrees.parameter_specs`` (``dprm mine --help`` shows them); in short:

    Parameters
    ----------
    trees : {"exponential", "mcmc"}
        How each private tree is built.
    epsilon : float
        The budget the run spends.
    depth : int
        Tree depth d (1 to 7).
    init_trials : int
        Initial targets InTr.
    alternations : int or "auto"
        Alternations RMIter per initial target; 0 extracts the first tree against the
        initial target's literal (scored targets); ``"auto"``: 0 below one trial's
        budget with scored targets, else 1 (the paper's stable setting).
    trial : {"auto", "trees", "pairs-if-weak", "pair", "refined-pair"}
        What a trial releases before its extraction: trees (an initial target, then
        trees), one literal of each view chosen at once
        (:mod:`~dprm.mining.literal_pairs`), or that pair and one more split of either
        side (:mod:`~dprm.mining.pair_refinement`); ``"pairs-if-weak"``: the pairs' top
        score released first, refined pairs throughout where it is weak
        (:func:`~dprm.mining.auto_trees.pairs_first`), else trees; ``"auto"`` (default),
        when no depth is given: the pair below one trial's budget, two refined pairs below
        two trials' (AltExpM: refined pairs below 6,000 rows of budget), else
        pairs-if-weak (:mod:`~dprm.mining.auto_trees`; measured in docs/mining-sessions.md,
        session 40).
    mcmc_iterations : int
        Metropolis–Hastings steps (MCIter) per tree (AltMCMC).
    omega : float, "auto" or None
        Share of each trial's budget for its trees (the rest extracts); ``None``: the
        paper's equal share per release; ``"auto"``: 1/2.
    tree_score : {"counts", "gini"}
        What a tree's mechanism scores: ``"counts"`` (default), the rows of each cell's
        majority class (monotone, sensitivity 1), or ``"gini"``, the papers' Gini
        quality (AltExpM) and Bai's ``G − τ`` (AltMCMC), sensitivity 2: at the same ε the
        Gini scores count a row a quarter as much (:mod:`dprm.trees.private`).
    mcmc_stop : {"fixed", "variance"}
        Stop after ``mcmc_iterations`` (default), or also when the variance of the
        last ``variance_window`` scores is below ``variance_threshold`` (the paper's
        data-dependent stop; the guarantee then says ``data-dependent stop``).
    mcmc_nodes : {"uniform", "by-depth"}
        Which node a step replaces (AltMCMC): uniformly (the paper's, default) or
        with weight ``2^level`` (fewer rows a step; same stationary distribution:
        :mod:`dprm.trees.private`).
    max_clauses, min_support, max_support, min_jaccard, max_pvalue : number
        Γ and the disjunctions per side; ``min_support`` in rows, ``max_support`` a
        share of the rows.
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
    units : {"auto", "leaves", "subtrees"}
        What a simple query of extraction may be: a leaf (the paper) or a subtree;
        ``"auto"`` (default): subtrees up to depth 6, leaves deeper (post-processing
        of the same released counts).
    prune_support, prune_interval : float or None
        Pruning: noisy support below, or Jaccard interval wider than.
    prune_interval_floor : float or None
        Kept despite ``prune_interval`` where the Jaccard interval's lower end is at
        least this (default 0.5; :func:`dprm.mining.pruning.prune`).
    prune_excess_floor : float or None
        Kept despite ``prune_interval`` where the Jaccard interval's lower end exceeds
        the independence baseline by at least this (default 0.05; :func:`dprm.mining.pruning.prune`).
    prune_significance : bool
        Pruning: also where the redescription is not surely significant at ``max_pvalue``.
    significance_probability : float, "auto" or None
        How sure: the posterior probability over the noise that the p-value is at most
        ``max_pvalue`` must be at least this; ``"auto"`` (default): 0.95 where the trials are
        literal pairs, else 0.975 (:mod:`dprm.mining.auto_trees`); ``None`` (the paper
        variant): the upper end of the p-value interval must be (:func:`dprm.mining.pruning.prune`).
    confidence : float
        Level of the reported intervals.
    size_share : float
        Share of ``epsilon`` for a noisy count of the rows (default 0.05; 0: none, as
        the paper); the rest is split as the paper does.
    numeric_grid, grid_share : {"auto", "equal-width"}, float
        ``"auto"`` (default): each numeric column without a declared transform gets
        its grid chosen privately from ``grid_share`` of ``epsilon`` (default 0.05,
        taken first; :mod:`dprm.mining.private_grids`); ``"equal-width"``: equally wide
        between the bounds (the paper).

    Notes
    -----
    Progress units (:meth:`work`): AltExpM counts releases, one per tree and one per
    extraction, ``InTr · (2·RMIter + 1)``; AltMCMC counts MCMC steps, an extraction
    as :data:`~dprm.mining.tree_parameters.EXTRACTION_UNITS` steps.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data import load_two_view
    >>> from dprm.datasets import make_planted
    >>> from dprm.privacy import Accountant, SecureNoise
    >>> planted = make_planted(1000, n_planted=1, random_state=0)
    >>> data = load_two_view(planted.left, planted.right, types=planted.types)
    >>> seen = []
    >>> miner = AlternatingTrees(trees="exponential", init_trials=2).fit(
    ...     data, accountant=Accountant(1.0, SecureNoise()), progress=lambda done, total: seen.append(done))
    >>> miner.privacy_["guarantee"], miner.privacy_["private"], seen[-1], miner.work()
    ('pure-dp', True, 6, 6)
    """

    parameter_specs = {
        "trees": Param("trees", "How the private trees are built: 'exponential' (AltExpM, one exponential-"
                                "mechanism choice per level) or 'mcmc' (AltMCMC, a Metropolis–Hastings chain)",
                       "choice", choices=TREE_BUILDERS),
        **TREE_PARAMETERS,
        **parameter_table(replace(
            ALTERNATIONS, low=0, auto=True,
            help=ALTERNATIONS.help + "; 0: the first tree is extracted against the initial target's literal "
                                     "(targets scored); 'auto': 0 below one trial's budget with scored targets, "
                                     "else 1 (docs/mining.md)")),
        **MCMC_PARAMETERS,
        **parameter_table(
            Param("omega", "Share of each trial's budget for its trees, in equal parts; the rest pays for the "
                           "extractions (none: the paper's equal share per tree and extraction); 'auto': 0.5",
                  "float", unit="share of ε", low=0, high=1, low_open=True, high_open=True, auto=True, none=True),
            Param("tree_score", "What each tree's mechanism scores: 'counts', rows of each cell's majority class "
                                "(monotone, sensitivity 1; default), or 'gini', the papers' Gini scores "
                                "(sensitivity 2)", "choice", choices=TREE_SCORES),
            VARIANT,
        ),
    }

    __init__ = variant_init(keyword_init(_own_parameters, shared_tree_parameters),
                            paper={"omega": None, "tree_score": "gini", "alternations": 1})

    #: The auto rule's depth 1 and larger targets' share below one trial's budget (:mod:`dprm.mining.auto_trees`).
    alternating_rule = True

    def _auto_names(self) -> tuple[str, ...]:
        return super()._auto_names() + ("omega", "alternations")

    def _rows_for_trees(self) -> float:
        """AltExpM's trees need more budget than a chain: refined pairs up to
        :data:`~dprm.mining.auto_trees.ROWS_FOR_EXPONENTIAL_TREES` rows (docs/mining.md, session 27)."""
        return ROWS_FOR_EXPONENTIAL_TREES if self.trees == "exponential" else super()._rows_for_trees()

    def _check_combination(self) -> None:
        super()._check_combination()
        if self.alternations == 0 and self.targets != "scored":
            raise ParameterError("alternations 0 needs targets scored (the first tree is extracted against the "
                                 "initial target's literal)")

    @property
    def algorithm(self) -> str:  # type: ignore[override]
        return "alt-expm" if self.trees == "exponential" else "alt-mcmc"

    def work(self) -> int:
        """Progress total: ``InTr · (2·RMIter + 1)`` releases (AltExpM), or MCMC steps (AltMCMC)."""
        trials = self._most_trials()
        most = 1 if self.alternations == AUTO else int(self.alternations)  # auto: 0 or 1
        trees, extractions = trials * (most + 1), trials * max(most, 1)
        return trees * self._tree_units() + extractions * self._extraction_units()

    def _tree_units(self) -> int:
        return 1 if self.trees == "exponential" else self.mcmc_iterations

    def _extraction_units(self) -> int:
        return 1 if self.trees == "exponential" else EXTRACTION_UNITS

    def _tree(self, side: int, target: np.ndarray, n_classes: int, epsilon, step: str,
              accountant: Accountant, rng: np.random.Generator):
        index = self.indexes_[side]
        if self.trees == "exponential":
            rows = None
            if self._shards is not None:
                rows = ShardedGrowingRows(self._shards, next(self._keys), side, target)
            tree = grow_exponential_tree(index, target, n_classes, self.depth_, epsilon, accountant, step, rows=rows,
                                         score=self.tree_score)
            if rows is not None:
                self.forget(rows.key)
            self._progress.advance(1)
            return tree
        return self.chain_tree(side, target, n_classes, epsilon, step, accountant, rng, self.tree_score)

    def _mine(self, data: TwoViewData, accountant: Accountant, rng: np.random.Generator, epsilon) -> None:
        alternations = self.alternations_
        # Per trial: the first tree, then per alternation a tree and an extraction; with no
        # alternation, the first tree and one extraction (against the target's literal).
        extractions = max(alternations, 1)
        if self.omega_ is None:  # the paper's equal shares
            shares = iter(split_budget(epsilon, [1] * (self.init_trials_ * (alternations + 1 + extractions))))
        else:  # per trial: the trees ω in equal parts, the extractions 1 − ω in equal parts (exact weights)
            omega = as_fraction(self.omega_, "omega")
            tree, extraction = omega / (alternations + 1), (1 - omega) / extractions
            trial_weights = [tree] + [tree, extraction] * alternations if alternations else [tree, extraction]
            shares = iter(split_budget(epsilon, trial_weights * self.init_trials_))
        for trial in range(1, self.init_trials_ + 1):
            source, target, n_classes = self.initial_target(data, rng)
            side = 1 - source
            trees = [None, None]
            trees[side] = self._tree(side, target, n_classes, next(shares), f"tree {trial}.0", accountant, rng)
            self.released(side, trees[side])
            if alternations == 0:  # the first tree against the target's literal (a released choice)
                trees[source] = self._target_literal.tree()
                self.extract((trees[0], trees[1]), next(shares), f"extraction {trial}.0")
            for alternation in range(1, alternations + 1):
                self.forget(target)
                n_classes = trees[side].n_leaves
                target = self.leaf_target(side, trees[side])  # leaf of each row; drop-outs: none
                side = 1 - side
                trees[side] = self._tree(side, target, n_classes, next(shares), f"tree {trial}.{alternation}",
                                         accountant, rng)
                self.released(side, trees[side])
                self.extract((trees[0], trees[1]), next(shares), f"extraction {trial}.{alternation}")
            self.forget(target)

