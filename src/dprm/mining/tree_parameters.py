"""The parameters of the private tree miners: their specifications, limits and choices.

AltExpM, AltMCMC (:mod:`dprm.mining.alternation`) and MCMCTreePair
(:mod:`dprm.mining.tree_pair`) share :data:`TREE_PARAMETERS`; the two with
Metropolis–Hastings chains add :data:`MCMC_PARAMETERS`. Each entry says what the
parameter means, its unit and its limits (:class:`dprm.mining.base.Param`); the
defaults are written once in :mod:`dprm.mining.tree_miner_defaults`, and the miners
themselves (:class:`dprm.mining.private_trees.PrivateTreeMiner`) read the values.

Examples
--------
>>> TREE_PARAMETERS["trial"].choices
('auto', 'trees', 'trees-then-pairs', 'pairs-if-weak', 'pair', 'refined-pair')
>>> MCMC_PARAMETERS["mcmc_iterations"].high
10000000
"""

from __future__ import annotations

from dataclasses import replace

from dprm.mining.auto_trees import AUTO, PAIRS_IF_WEAK, SIGNIFICANCE_PROBABILITY, TREES_THEN_PAIRS
from dprm.mining.base import (
    CONFIDENCE,
    DEPTH,
    EPSILON,
    INIT_TRIALS,
    MAX_CLAUSES,
    MAX_PVALUE,
    MAX_ROWS,
    MAX_SPLITS_TREES,
    MAX_SUPPORT,
    MIN_JACCARD,
    MIN_SUPPORT_ROWS,
    Param,
    parameter_table,
)
from dprm.mining.private_extraction import COUNTS, UNITS
from dprm.mining.private_grids import GRID_SHARE, NUMERIC_GRID
from dprm.trees.private import MCMC_STOPS, NODE_CHOICES

__all__ = ["CHAIN_OPTIONS", "EXTRACTION_UNITS", "MAX_DEPTH_SUBTREES", "MCMC_PARAMETERS", "NO_ROW_COUNT",
           "PAIR_THRESHOLD_CHOICES", "PAIR_TRIALS", "TARGET_CHOICES", "TOP_SCORE_FIRST", "TREE_PARAMETERS",
           "TRIAL_KINDS", "UNIT_CHOICES", "extraction_units"]

#: What a scored trial releases before its extraction (:mod:`dprm.mining.literal_pairs`).
TRIAL_KINDS = (AUTO, "trees", TREES_THEN_PAIRS, PAIRS_IF_WEAK, "pair", "refined-pair")
#: Trial kinds that release the pairs' top score first and make refined pairs throughout where it is weak.
TOP_SCORE_FIRST = (TREES_THEN_PAIRS, PAIRS_IF_WEAK)
#: Trial kinds that choose a literal pair at once (:mod:`dprm.mining.literal_pairs`).
PAIR_TRIALS = ("pair", "refined-pair")
#: The values of ``pair_thresholds``.
PAIR_THRESHOLD_CHOICES = (AUTO, "on", "off")
#: What ``"auto"`` means where the rule has no row count (size-share 0): trees, no thresholds step.
NO_ROW_COUNT = {"trial": "trees", "pair_thresholds": "off", "significance_probability": SIGNIFICANCE_PROBABILITY}

#: How initial targets are chosen: uniformly (the paper) or by the exponential mechanism.
TARGET_CHOICES = ("uniform", "scored")

#: Progress units of one extraction: about the time of a default chain of 10,000
#: steps (measured on MAMMAL; both grow with the depth).
EXTRACTION_UNITS = 10_000

#: Deepest trees with ``units="subtrees"``: twice the units per side, 16 times the
#: extraction's memory of ``units="leaves"`` at the same depth.
MAX_DEPTH_SUBTREES = 6

#: The private tree miners' ``units``: ``"auto"`` (the default) is ``"subtrees"`` for trees
#: of depth at most :data:`MAX_DEPTH_SUBTREES`, ``"leaves"`` deeper (:func:`extraction_units`).
UNIT_CHOICES: tuple[str, ...] = (AUTO, *UNITS)


def extraction_units(units: str, depth: int) -> str:
    """The units extraction uses: ``units`` as given, or for ``"auto"`` by the trees' depth.

    Subtree units (every node's leaves as one unit, as CARTwheels' extraction has them)
    are a choice among the same released cell counts, so post-processing: the same
    releases and ledger as leaves. Measured better on every dataset of
    ``benchmarks/quality_weak_signal.py`` at ε = 1 (docs/mining.md, session 21); deeper
    than :data:`MAX_DEPTH_SUBTREES` their memory is too large, so ``"auto"`` takes leaves.

    Examples
    --------
    >>> extraction_units("auto", 2), extraction_units("auto", 7), extraction_units("leaves", 2)
    ('subtrees', 'leaves', 'leaves')
    """
    if units != AUTO:
        return units
    return "subtrees" if depth <= MAX_DEPTH_SUBTREES else "leaves"

#: The parameters the three private tree miners share (each class lists them in its
#: ``__init__`` with its own defaults, and adds its own).
TREE_PARAMETERS: dict[str, Param] = parameter_table(
    EPSILON,
    replace(DEPTH, help=DEPTH.help + "; 'auto': 2 or 3 by the budget in rows (alt-expm, alt-mcmc: 1 below one "
                                     "trial's budget; docs/mining.md)", auto=True),
    replace(INIT_TRIALS, help=INIT_TRIALS.help + "; 'auto': 1 to 8 by the budget in rows, epsilon times the "
                                                 "noisy row count (docs/mining.md)", auto=True),
    MAX_CLAUSES,
    MIN_SUPPORT_ROWS,
    MAX_SUPPORT,
    MIN_JACCARD,
    MAX_PVALUE,
    MAX_SPLITS_TREES,
    Param("target_bins", "Equal-width classes of a numeric initial target over its declared bounds (with "
                         "target-binning fixed)", "int", unit="classes", low=2, high=128,
          why="a tree of depth 7 has at most 128 leaves to tell the classes apart"),
    Param("counts", "How extraction releases counts: 'cells', one noisy histogram of every pair of cells "
                    "(default), or 'paper', the paper's two histograms", "choice", choices=COUNTS),
    Param("units", "What a simple query of extraction may be: a tree's 'leaves' (the paper) or whole "
                   "'subtrees' (at most depth 6); 'auto': subtrees up to depth 6, leaves deeper (the same "
                   "released counts either way; docs/mining.md)", "choice", choices=UNIT_CHOICES),
    Param("prune_support", "Mark as pruned the redescriptions whose noisy intersection is below this many rows "
                           "(none: no such rule)", "float", unit="rows", low=0, high=MAX_ROWS, none=True,
          why="more rows than any table in memory"),
    Param("prune_interval", "Mark as pruned the redescriptions whose marginal Jaccard confidence interval is wider "
                            "than this (none: no such rule; the interval written out also accounts for the choice "
                            "and is wider)", "float", low=0, high=1, low_open=True, none=True),
    Param("prune_interval_floor", "Keep a redescription whose interval is wider than prune-interval when the "
                                  "interval's lower end is at least this: its Jaccard index is surely that high, "
                                  "only imprecise (none: no such exception, as the paper variant)", "float", low=0,
          high=1, none=True),
    Param("prune_excess_floor", "Keep a redescription whose interval is wider than prune-interval when the "
                                "interval's lower end exceeds the Jaccard index of independent queries of the same "
                                "sizes by at least this: it is surely above independence, only imprecise (none: no "
                                "such exception, as the paper variant)", "float", low=0, high=1, none=True),
    Param("prune_significance", "Also mark as pruned the redescriptions that are not surely significant "
                                "(p-value at most max-pvalue; see significance-probability)", "bool"),
    Param("significance_probability", "With prune-significance: keep a redescription only where the posterior "
                                      "probability over the noise that its p-value is at most max-pvalue is at "
                                      "least this; 'auto': 0.95 where the trials are literal pairs (below one "
                                      "trial's budget), else 0.975; none: where the upper end of its p-value "
                                      "interval is, as the paper variant", "float", low=0, high=1, low_open=True,
          high_open=True, none=True, auto=True),
    CONFIDENCE,
    Param("size_share", "Share of ε for a noisy count of the rows, which sets the maximum support and the "
                        "p-values (0: none, as in the paper)", "float", unit="share of ε", low=0, high=1,
          high_open=True),
    Param("target_binning", "Classes of a numeric initial target: 'fixed', target-bins equal-width bins "
                            "(default), or 'fd', the paper's Freedman–Diaconis number of bins from private "
                            "estimates paid from binning-share", "choice", choices=("fixed", "fd")),
    Param("binning_share", "Share of ε for the Freedman–Diaconis estimates (target-binning fd, when a numeric "
                           "attribute is an initial target)", "float", unit="share of ε", low=0, high=1,
          high_open=True),
    Param("reestimate_share", "Share of each extraction's budget held back to restate the chosen redescriptions "
                              "from an independent second count of the cells (counts, intervals and pruning "
                              "from it: no winner's curse); 0: one count, as the paper", "float",
          unit="share of ε", low=0, high=1, high_open=True),
    NUMERIC_GRID,
    GRID_SHARE,
    Param("targets", "How the initial targets are chosen: 'uniform', a uniformly random attribute (the paper), "
                     "or 'scored', a split literal chosen by the exponential mechanism for how well one split of "
                     "the other view predicts it, paid from target-share", "choice", choices=TARGET_CHOICES),
    Param("target_share", "Share of ε for choosing the initial targets (targets scored); 'auto': 0.1 per "
                          "trial, at most 0.3 (alt-expm, alt-mcmc: 0.4 below one trial's budget)", "float", unit="share of ε", low=0, high=1, low_open=True,
          high_open=True, auto=True),
    Param("trial", "What a trial releases before its extraction (targets scored): 'trees', an initial "
                   "target, then trees, 'pair', a literal of each view chosen at once, 'refined-pair', the "
                   "pair then one more split of either side (dprm.mining.pair_refinement), or "
                   "'trees-then-pairs' (mcmc-tree-pair): refined pairs throughout where the released top score "
                   "of the pairs is below 0.15 of the noisy row count, else two trees trials (one of two), then "
                   "trees if they kept a redescription above independence (by its noisy excess Jaccard), else "
                   "refined pairs; 'pairs-if-weak': refined pairs throughout where that top score is weak, else "
                   "trees; "
                   "'auto' (default): unless a depth is given, pair below one trial's budget (epsilon times the "
                   "noisy row count under 600 rows), refined pairs below 1,200 rows (two, or one where the "
                   "released top score of the pairs makes two choices near uniform), else trees-then-pairs "
                   "(alt-expm, alt-mcmc: pairs-if-weak)", "choice",
          choices=TRIAL_KINDS),
    Param("pair_thresholds", "Whether a pair trial with one numeric literal chooses it again near its released "
                             "threshold, by how well it agrees with the other side's literal "
                             "(dprm.mining.pair_thresholds), with a fifth of the pair's share: 'on', 'off', or "
                             "'auto' (default): where the rule's refined pairs have at least 600 rows of budget "
                             "each (epsilon times the noisy row count over the trials)", "choice",
          choices=PAIR_THRESHOLD_CHOICES),
)

#: The options that act only where an MCMC chain runs (anchoring: MCMCTreePair's): set away from their defaults
#: in a run without a chain, they are listed as unused (:meth:`PrivateTreeMiner.unused_options`).
CHAIN_OPTIONS = ("mcmc_iterations", "mcmc_stop", "mcmc_nodes", "variance_threshold", "variance_window", "anchor",
                 "anchor_from", "anchor_window", "second_tree")

#: The parameters of the Metropolis–Hastings chains (AltMCMC, MCMCTreePair).
MCMC_PARAMETERS: dict[str, Param] = parameter_table(
    Param("mcmc_iterations", "MCMC steps (the papers' MCIter) of each Metropolis–Hastings chain: one chain per "
                             "tree (alt-mcmc) or per tree pair (mcmc-tree-pair)", "int", unit="steps", low=1,
          high=10_000_000,
          why="a chain's random numbers are drawn before it runs, 48 bytes a step: half a gigabyte per chain "
              "at 10^7"),
    Param("mcmc_stop", "When a chain stops: 'fixed', after mcmc-iterations steps (default), or 'variance', also "
                       "when the last variance-window scores vary less than variance-threshold (the papers' "
                       "rule; it looks at the data, and the output's guarantee says so)", "choice",
          choices=MCMC_STOPS),
    Param("mcmc_nodes", "Which node an MCMC step replaces: 'uniform', any internal node alike (the papers', "
                        "default), or 'by-depth', a node at level l with weight 2^l: fewer rows per step, hence "
                        "faster; the same stationary distribution and guarantee, a slower-moving root",
          "choice", choices=NODE_CHOICES),
    Param("variance_threshold", "Variance of the chain's scores below which the variance stop ends it (the "
                                "papers' σ), in squared score units", "float", low=0, low_open=True),
    Param("variance_window", "Last steps over which the variance stop measures the scores' variance (the "
                             "papers' k)", "int", unit="steps", low=2, high=10_000,
          why="the variance over the window is recomputed at every step"),
)

