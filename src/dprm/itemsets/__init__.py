"""Frequent itemsets mined from an online density estimate (Geilke & Kramer, ICBK 2017).

The data are not mined directly: an EDDO-style density estimate (an ensemble of
classifier chains of Hoeffding trees) is learned from the stream, optionally modified
to satisfy t-closeness for quasi-identifiers, and ISON mines frequent itemsets from the
estimate's structure.

Modules: :mod:`~dprm.itemsets.domains` (the discrete domain of each variable),
:mod:`~dprm.itemsets.tree_model` (one conditional as an array-based tree),
:mod:`~dprm.itemsets.hoeffding` (its online learner),
:mod:`~dprm.itemsets.parameters` (the estimators' parameters: defaults and checks),
:mod:`~dprm.itemsets.chain` (one chain: order, trees, sampling),
:mod:`~dprm.itemsets.sources` (reading a CSV file or a stream of rows),
:mod:`~dprm.itemsets.reference_sample` (a chain's sample indexed as bitsets),
:mod:`~dprm.itemsets.density` (the queries: densities, conditionals, samples),
:mod:`~dprm.itemsets.estimator` (the ensemble of chains and its learning),
:mod:`~dprm.itemsets.closeness` (t-closeness, Algorithm 1, and its check; a syntactic
property of the estimate, not differential privacy),
:mod:`~dprm.itemsets.ison` (ISON, Algorithms 2-3);
:mod:`~dprm.itemsets.private` (the differentially private estimate and direct releases,
beyond the paper: ``fit_private_estimator``, whose notes name the module of each method).

The paper assumes a stationary stream (rows from one distribution in random order):
a Hoeffding tree's new leaves only count the rows that arrive after their parent was
created, so a file in a systematic order (UCI mushroom is one) should be shuffled with
a seeded permutation before it is learned as a stream.
"""

from dprm.itemsets.closeness import (ClosenessReport, Violation, apply_t_closeness, check_t_closeness,
                                     distribution_distance, global_distribution)
from dprm.itemsets.domains import VariableDomain, bin_labels, encode_frame, infer_domains
from dprm.itemsets.chain import Chain
from dprm.itemsets.estimator import DensityEstimator
from dprm.itemsets.hoeffding import HoeffdingTreeLearner
from dprm.itemsets.ison import IsonRun, Itemset, chain_weights, mine_itemsets, run_ison
from dprm.itemsets.tree_model import ConditionalTree

__all__ = [
    "VariableDomain", "bin_labels", "encode_frame", "infer_domains",
    "ConditionalTree", "HoeffdingTreeLearner", "Chain", "DensityEstimator",
    "ClosenessReport", "Violation", "apply_t_closeness", "check_t_closeness", "distribution_distance",
    "global_distribution",
    "Itemset", "IsonRun", "chain_weights", "mine_itemsets", "run_ison",
]
