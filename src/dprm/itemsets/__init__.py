"""Frequent itemsets mined from an online density estimate (Geilke & Kramer, ICBK 2017).

The data are not mined directly: an EDDO-style density estimate (an ensemble of
classifier chains of Hoeffding trees) is learned from the stream, optionally modified
to satisfy t-closeness for quasi-identifiers, and ISON mines frequent itemsets from the
estimate's structure.

Modules: :mod:`~dprm.itemsets.domains` (the discrete domain of each variable),
:mod:`~dprm.itemsets.tree_model` (one conditional as an array-based tree),
:mod:`~dprm.itemsets.hoeffding` (its online learner),
:mod:`~dprm.itemsets.estimator` (the ensemble of chains: learning and inference).
"""

from dprm.itemsets.domains import VariableDomain, bin_labels, encode_frame, infer_domains
from dprm.itemsets.estimator import Chain, DensityEstimator
from dprm.itemsets.hoeffding import HoeffdingTreeLearner
from dprm.itemsets.tree_model import ConditionalTree

__all__ = ["VariableDomain", "bin_labels", "encode_frame", "infer_domains", "ConditionalTree",
           "HoeffdingTreeLearner", "Chain", "DensityEstimator"]
