"""MCMCTreePair: private redescriptions from MCMC-sampled pairs of trees.

Algorithm 4 of the tree-based paper. For each of ``init_trials`` initial targets (a
random attribute), a pair of trees with matching leaves is sampled by
Metropolis–Hastings (Algorithm 5, :func:`dprm.trees.private.sample_tree_pair`) and
extracted privately.

Budget: each trial gets ``ε / InTr``, split by ``ω`` between sampling
(``ω · ε / InTr``) and extraction (``(1 − ω) · ε / InTr``): ``InTr · ε / InTr = ε``
in all, exactly. Guarantee: ``pure-dp-on-mcmc-convergence`` (with
``mcmc_stop="variance"``: ``pure-dp-on-mcmc-convergence; data-dependent stop``),
computed from the ledger's mechanisms; ``none`` with a seed or undeclared domains.

dprm's defaults differ from the paper where the paper is weak (issue 3):
``pair_score="counts"`` (majority masses in rows with bounded range 3; see
:mod:`dprm.trees.private`) instead of the normalised score (6), which leaves the
sampler practically uniform at the paper's budgets (``pair_score="paper"`` keeps it;
``"gini"`` is the Gini form of dprm's score); a fixed number of MCMC steps instead of the
data-dependent variance stop (``mcmc_stop="variance"`` keeps it). With scored targets,
``second_tree="refined-target"`` makes the first tree by its own chain and the second from
the target literal by one exponential-mechanism choice (:mod:`dprm.mining.target_refinement`)
instead of both trees from one chain (the default ``"chain"``).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from fractions import Fraction

import numpy as np

from dprm.data.attributes import TwoViewData
from dprm.mining.auto_trees import TREES_BEFORE_PAIRS, TREES_THEN_PAIRS, pairs_after_trees
from dprm.mining.base import Param, keyword_init, parameter_table
from dprm.mining.initial_targets import InitialTarget
from dprm.mining.private_trees import PrivateTreeMiner
from dprm.mining.tree_parameters import EXTRACTION_UNITS, MCMC_PARAMETERS, TREE_PARAMETERS
from dprm.mining.target_refinement import FIRST_TREE_SHARE, leaf_refinement_counts, refine_target
from dprm.mining.tree_miner_defaults import VARIANT, shared_tree_parameters, variant_init
from dprm.privacy import Accountant, split_budget
from dprm.privacy.budget import as_fraction
from dprm.errors import ParameterError
from dprm.trees.chain_draws import Anchor
from dprm.trees.private import PAIR_SCORES, prepare_tree_pair
from dprm.trees.tree import Tree

__all__ = ["ANCHORS", "MCMCTreePair", "SECOND_TREES"]

#: How a scored trial's second tree is anchored to its initial target (``anchor``).
ANCHORS = ("off", "literal", "attribute")
#: How a trial's second tree is made (``second_tree``): by the pair's chain, or from the target literal.
SECOND_TREES = ("chain", "refined-target")


def _own_parameters(
    *,
    epsilon: float = 1.0,
    depth: int | str = "auto",
    init_trials: int | str = "auto",
    mcmc_iterations: int = 10_000,
    omega: float | str = "auto",
    pair_score: str = "counts",
    second_tree: str = "chain",
    anchor: str = "off",
    anchor_from: int = 3,
    anchor_window: int | None = None,
) -> None:
    """The first parameters of :class:`MCMCTreePair` (a signature only; the rest are
    :func:`~dprm.mining.tree_miner_defaults.shared_tree_parameters`)."""


@contextmanager
def _cancelling(cancelled: threading.Event) -> Iterator[None]:
    """Set ``cancelled`` when the block ends by an exception (``KeyboardInterrupt`` too), then re-raise it."""
    try:
        yield
    except BaseException:
        cancelled.set()
        raise


class MCMCTreePair(PrivateTreeMiner):
    """The MCMCTreePair miner.

    Every parameter's meaning, unit and allowed values are in
    ``MCMCTreePair.parameter_specs`` (``dprm mine --help`` shows them); in short:

    Parameters
    ----------
    epsilon : float
        The budget the run spends.
    depth : int
        Tree depth d (1 to 7).
    init_trials : int
        Initial targets InTr (one tree pair each).
    mcmc_iterations : int
        Metropolis–Hastings steps per tree pair (MCIter).
    omega : float
        Share ω of each trial's budget for sampling the pair; the rest extracts.
    pair_score : {"counts", "gini", "paper"}
        The tree-pair score (see :mod:`dprm.trees.private`).
    second_tree : {"chain", "refined-target"}
        How a trees trial makes its second tree (the target's view): ``"chain"``
        (default), both trees sampled together by one chain (the paper's
        sampleTreePair), or ``"refined-target"``, the first tree by its own chain and the
        second the target's literal with its threshold moved within a few grid points
        and one split under one branch, chosen by the exponential mechanism
        (:mod:`~dprm.mining.target_refinement`; targets scored). Measured in
        docs/mining-sessions.md, session 39: better on wide heavy-tailed tables and on Boolean
        against numeric views from ε = 1, worse on light-tailed numeric and narrow
        tables and at ε = 0.5, hence not the default.
    trial : {"auto", "trees", "trees-then-pairs", "pairs-if-weak", "pair", "refined-pair"}
        What a trial releases before its extraction: trees (an initial target, then
        trees), one literal of each view chosen at once
        (:mod:`~dprm.mining.literal_pairs`), or that pair and one more split of either
        side (:mod:`~dprm.mining.pair_refinement`); ``"trees-then-pairs"``: the pairs'
        top score released first, refined pairs throughout where it is weak
        (:func:`~dprm.mining.auto_trees.pairs_first`, session 36), else two
        trees trials (one of two), extracted at once, then trees if pruning keeps one of their
        redescriptions above independence (noisy excess Jaccard at least
        :data:`~dprm.mining.auto_trees.FOUND_EXCESS`), else refined pairs with the other
        trials' budget, about two trials' each
        (:func:`~dprm.mining.auto_trees.pairs_after_trees`; the decision reads released
        counts only: post-processing; the run spends ε exactly either way; measured in
        docs/mining-sessions.md, session 34); ``"pairs-if-weak"``: the same start, then trees to the
        end. ``"auto"`` (default), when no depth is given: the
        pair below one trial's budget, refined pairs below two trials' (two, or one where
        the released top score of the pairs makes two choices near uniform:
        :func:`~dprm.mining.auto_trees.decisive_pairs`), else trees-then-pairs (with two
        trials, the first decides; :mod:`~dprm.mining.auto_trees`).
    anchor : {"off", "literal", "attribute"}
        From trial ``anchor_from`` on (scored targets), the second tree (the target's
        view) keeps the released target literal at its root (``"literal"``; an interval
        ``t_j < a ≤ t_k``: its two splits) or its attribute, the thresholds moving by
        local steps only, within ``anchor_window`` grid points if given
        (``"attribute"``). A restriction of the chain's states by released choices
        (:class:`~dprm.trees.chain_draws.Anchor`): the same ε, score and guarantee.
        Measured in session 20 (docs/mining.md): not better than ``"off"`` where
        the bars need it, hence not the default.
    anchor_from, anchor_window : int
        First anchored trial; the window (none: the whole grid).
    mcmc_stop : {"fixed", "variance"}
        Fixed number of steps (default) or the paper's variance stop (the guarantee
        then says ``data-dependent stop``).
    mcmc_nodes : {"uniform", "by-depth"}
        Which node a step replaces: uniformly (the paper's, default) or with weight
        ``2^level`` (fewer rows a step; same stationary distribution:
        :mod:`dprm.trees.private`).
    variance_threshold, variance_window : float, int
        σ and k of the variance stop.
    max_clauses, min_support, max_support, min_jaccard, max_pvalue : number
        Γ and the disjunctions per side.
    max_splits, target_bins, counts, units, prune_support, prune_interval, prune_interval_floor,
    prune_excess_floor, prune_significance, significance_probability, confidence,
    size_share, numeric_grid, grid_share, target_binning, binning_share
        As for :class:`~dprm.mining.alternation.AlternatingTrees`.

    Notes
    -----
    The chains are charged and prepared in trial order, a batch of as many as there
    are cores at a time (a chain's pre-drawn random numbers take 48 bytes a step),
    and each batch runs in parallel; then every pair is extracted. Progress units
    (:meth:`work`): MCMC steps, an extraction counting as
    :data:`~dprm.mining.tree_parameters.EXTRACTION_UNITS` steps.

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
    >>> float(accountant.spent()), miner.privacy_["guarantee"], miner.privacy_["private"]
    (1.0, 'none', False)
    >>> miner.privacy_["reasons"][0][:20]
    'seeded noise source:'
    """

    algorithm = "mcmc-tree-pair"
    parameter_specs = {
        **TREE_PARAMETERS,
        **MCMC_PARAMETERS,
        **parameter_table(
            Param("omega", "Share ω of each tree pair's budget for sampling the pair by MCMC; the rest pays for "
                           "extracting redescriptions from it; 'auto': 0.6 from three trees trials on, else 0.5 "
                           "(pair trials: their own shares)", "float", unit="share of ε", low=0, high=1,
                  low_open=True, high_open=True, auto=True),
            Param("pair_score", "Score of a tree pair for its chain: 'counts', rows of each cell's majority "
                                "class (default), 'gini', its Gini form, or 'paper', the paper's normalised "
                                "score", "choice", choices=PAIR_SCORES),
            Param("second_tree", "How a trees trial makes its second tree (the target's view): 'chain' (default), "
                                 "both trees sampled together by one MCMC chain (the paper's), or 'refined-target', "
                                 "the first tree by its own chain, the second the target literal (its threshold "
                                 "within 3 grid points) with one split under one branch, chosen by the exponential "
                                 "mechanism (targets scored; better on wide heavy-tailed tables, docs/mining.md)",
                  "choice", choices=SECOND_TREES),
            Param("anchor", "Anchoring of a scored trial's second tree (the initial target's view): 'off' "
                            "(default), 'literal', its root keeps the released target literal (an interval: its two "
                            "splits) and the chain moves every other node, or 'attribute', the root keeps the "
                            "literal's attribute and moves its threshold by local steps only (targets scored)",
                  "choice", choices=ANCHORS),
            Param("anchor_from", "First trial whose pair is anchored (anchor literal or attribute); the earlier "
                                 "trials' chains are free", "int", unit="trial", low=1, high=1000,
                  why="more trials than any run makes"),
            Param("anchor_window", "With anchor attribute: the anchored attribute's thresholds in the second tree "
                                   "stay within this many grid points of the target literal's (none: anywhere "
                                   "on the grid)", "int", unit="grid points", low=1, high=1000, none=True,
                  why="wider than any grid"),
            VARIANT,
        ),
    }

    __init__ = variant_init(keyword_init(_own_parameters, shared_tree_parameters))

    def _auto_names(self) -> tuple[str, ...]:
        return super()._auto_names() + ("omega",)

    def _check_combination(self) -> None:
        super()._check_combination()
        if self.anchor != "off" and self.targets != "scored":
            raise ParameterError(f"anchor {self.anchor} needs targets scored (a uniform initial target is an "
                                 f"attribute, not a literal to anchor)")
        if self.anchor_window is not None and self.anchor != "attribute":
            raise ParameterError(f"anchor-window needs anchor attribute, not anchor {self.anchor}")
        if self.second_tree == "refined-target":
            if self.targets != "scored":
                raise ParameterError("second-tree refined-target needs targets scored (a uniform initial target is "
                                     "an attribute, not a literal to refine)")
            if self.anchor != "off":
                raise ParameterError(f"anchor {self.anchor} acts on the pair's chain: it needs second-tree chain, "
                                     f"not refined-target")
            if self.pair_score != "counts":
                raise ParameterError(f"pair-score {self.pair_score} scores the pair's chain: it needs second-tree "
                                     f"chain, not refined-target")

    def _anchor(self, trial: int, second: int) -> Anchor | None:
        """The anchor of ``trial``'s second tree (view ``second``), from the released target literal; or None.

        A restriction of the chain's states by released choices only (the literal, the
        public grid and the public parameters): :class:`~dprm.trees.chain_draws.Anchor`.
        """
        literal = self._target_literal
        if self.anchor == "off" or trial < self.anchor_from or literal is None:
            return None
        index = self.indexes_[second]
        tree = literal.tree()  # a split: depth 1; an interval t_j < a <= t_k: a <= t_k, a <= t_j below it
        nodes = tuple(k for k, split in enumerate(tree.splits) if split is not None and k < 2**self.depth_ - 1)
        return Anchor(nodes, tuple(index.splits.index(tree.splits[k]) for k in nodes),
                      "held" if self.anchor == "literal" else "local", self.anchor_window)

    def work(self) -> int:
        """Progress total: ``InTr · (MCIter + EXTRACTION_UNITS)``."""
        return self._most_trials() * (self.mcmc_iterations + EXTRACTION_UNITS)

    def _mine(self, data: TwoViewData, accountant: Accountant, rng: np.random.Generator, epsilon) -> None:
        if self._shards is not None:
            from dprm.trees.chain_shards import ChainRows, run_lockstep  # numba: only where it runs
        omega = as_fraction(self.omega_, "omega")
        per_trial = split_budget(epsilon, [1] * self.init_trials_)
        shares = [split_budget(budget, [omega, Fraction(1) - omega]) for budget in per_trial]
        # The chains are charged and prepared in trial order (all random draws in a
        # fixed order), a batch of `workers` at a time (bounded memory), and each batch
        # runs on the available cores; then each pair is extracted. The result depends
        # neither on the scheduling nor on the batch size: running draws nothing.
        # Scored targets are chosen after the earlier pairs are released (their attributes
        # are taken), so their chains run one at a time.
        # Sharded (self._shards), the chains of a batch run in lock-step over the shards
        # (dprm.trees.chain_shards.run_lockstep): one round trip carries a step of every chain.
        sharded = self._shards is not None
        if self.targets == "scored":
            workers = 1
        else:
            workers = self.init_trials_ if sharded else max(1, min(self.init_trials_, os.cpu_count() or 1))
        pairs, firsts = [], []
        # Trial trees-then-pairs (scored targets: one chain at a time): the first trials' pairs are
        # extracted at once; unless they kept a redescription above independence, the rest goes to
        # refined pairs.
        tested = min(TREES_BEFORE_PAIRS, self.init_trials_ - 1) if self.trial_ == TREES_THEN_PAIRS else 0
        found_before = set(self._found) if tested else set()
        refined_target = self.second_tree == "refined-target"
        # An exception in this thread (Ctrl-C, SIGTERM in `dprm mine`) stops the chains running on
        # the pool's threads after their chunk under way (ChainCancelled, discarded); the pool's
        # exit waits for them, so without it the run would end only when they had finished.
        cancelled = threading.Event()
        with ThreadPoolExecutor(max_workers=1 if sharded else workers) as pool, _cancelling(cancelled):
            for batch in range(0, self.init_trials_, workers):
                jobs, targets = [], []
                for trial in range(batch + 1, min(batch + workers, self.init_trials_) + 1):
                    source, target, n_classes = self.initial_target(data, rng)
                    first, second = 1 - source, source
                    if refined_target:
                        jobs.append(_TreeAndRefinedTarget(self, first, target, n_classes, self._target_literal,
                                                          shares[trial - 1][0], accountant, trial, rng))
                        firsts.append(first)
                        targets.append(target)
                        continue
                    rows = ChainRows(self._shards, (first, second), target, self._n_rows) if sharded else None
                    jobs.append(prepare_tree_pair(
                        self.indexes_[first], self.indexes_[second], target, n_classes, self.depth_,
                        shares[trial - 1][0], accountant, f"sampleTreePair#{trial}", rng,
                        iterations=self.mcmc_iterations, pair_score=self.pair_score, stop=self.mcmc_stop,
                        node_choice=self.mcmc_nodes, variance_threshold=self.variance_threshold,
                        variance_window=self.variance_window, rows=rows, anchor=self._anchor(trial, second),
                    ))
                    firsts.append(first)
                    targets.append(target)
                if refined_target:  # one trial a batch (scored targets); its own chain, sharded or not
                    done = [job.run() for job in jobs]
                    self.forget(*targets)
                elif sharded:
                    done = run_lockstep(jobs, self._progress.advance)
                    self.forget(*targets)
                else:
                    done = list(pool.map(lambda job: job.run(self._progress.advance, cancelled), jobs))
                for (first_tree, second_tree), first in zip(done, firsts[len(pairs):]):
                    self.released(first, first_tree)
                    self.released(1 - first, second_tree)
                pairs += done
                if batch < tested:  # one trial a batch (scored targets)
                    self._extract_trial(batch + 1, pairs[batch], firsts[batch], shares[batch][1])
                if batch + 1 == tested and not self.kept_structure(
                        r for key, r in self._found.items() if key not in found_before):
                    rest = sum(per_trial[tested:], Fraction(0)) + self._chooser.close()
                    count = pairs_after_trees(self.init_trials_, tested)
                    which = "first trees trial" if tested == 1 else f"first {tested} trees trials"
                    others = self.init_trials_ - tested
                    budget = "the other trial's budget" if others == 1 else f"the other {others} trials' budget"
                    self._notes.append(f"trial trees-then-pairs: the {which} kept no "
                                       f"redescription above independence, so {budget} went to {count} refined "
                                       f"pair{'s' if count > 1 else ''}")
                    self._mine_pairs(accountant, rest, after_trees=tested)
                    return
        for trial, (pair, first, (_, extraction)) in enumerate(
            zip(pairs[tested:], firsts[tested:], shares[tested:]), start=tested + 1
        ):
            self._extract_trial(trial, pair, first, extraction)

    def _extract_trial(self, trial: int, pair, first: int, epsilon) -> None:
        """Extract trial ``trial``'s tree pair (``pair``: the first tree, of view ``first``, then the second)."""
        first_tree, second_tree = pair
        trees = (first_tree, second_tree) if first == 0 else (second_tree, first_tree)
        self.extract(trees, epsilon, f"extractReds#{trial}")


class _TreeAndRefinedTarget:
    """A scored trees trial's two trees by :mod:`dprm.mining.target_refinement` (``second_tree="refined-target"``).

    :meth:`run` charges and makes both releases: the first tree (view ``first``) by its
    own chain on :data:`~dprm.mining.target_refinement.FIRST_TREE_SHARE` of ``epsilon``
    (``sampleTree#k``), then the second tree, the target literal refined, by one
    exponential-mechanism choice on the rest (``refineTarget#k``); an interval target is
    its own second tree and the chain takes the whole ``epsilon``. Sharded, the chain and
    the counts run on the miner's shards.
    """

    def __init__(self, miner: MCMCTreePair, first: int, target, n_classes: int, literal: InitialTarget,
                 epsilon, accountant: Accountant, trial: int, rng: np.random.Generator) -> None:
        self.miner, self.first, self.target, self.n_classes, self.literal = miner, first, target, n_classes, literal
        self.epsilon, self.accountant, self.trial, self.rng = epsilon, accountant, trial, rng

    def run(self) -> tuple[Tree, Tree]:
        miner, first, literal = self.miner, self.first, self.literal
        interval = literal.high is not None
        shares = [self.epsilon] if interval else split_budget(self.epsilon, [FIRST_TREE_SHARE,
                                                                              1 - FIRST_TREE_SHARE])
        tree = miner.chain_tree(first, self.target, self.n_classes, shares[0], f"sampleTree#{self.trial}",
                                self.accountant, self.rng, "counts")
        if interval:
            return tree, literal.tree()
        second = literal.side
        classes = miner.leaf_target(first, tree)
        if miner._shards is not None:
            def counter(roots, splits):
                return miner._shards.sum("leaf_refinement_counts", second, classes, tree.n_leaves, roots, splits)
        else:
            def counter(roots, splits):
                return leaf_refinement_counts(miner.indexes_[second], roots, splits, classes, tree.n_leaves)
        choice = refine_target(miner.indexes_[second], literal, counter, shares[1], self.accountant,
                               f"refineTarget#{self.trial}", taken=miner._described[second])
        miner.forget(classes)
        return tree, choice.tree()
