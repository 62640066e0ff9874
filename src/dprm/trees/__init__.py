"""Decision trees over one view: greedy (non-private) and differentially private.

* :class:`Tree` — a complete binary tree in heap order, its leaves, cells and paths;
* :func:`grow_greedy_tree` — greedy Gini CART (non-private CARTwheels);
* :func:`grow_exponential_tree`, :func:`sample_tree`, :func:`sample_tree_pair` —
  private trees (exponential mechanism per level, MCMC, MCMC tree pairs);
* :class:`TreeQueries`, :func:`leaf_query`, :func:`node_cells` — the queries of
  nodes, leaves and sets of cells;
* targets: :func:`target_from_attribute`, :func:`target_from_leaves`.

The differentially private decision-tree classifier is a package of its own,
:mod:`dprm.classifier` (beside this one; it uses none of these trees).
"""

from dprm.trees.criterion import GINI_SENSITIVITY, gini_quality, split_qualities
from dprm.trees.greedy import grow_greedy_tree
from dprm.trees.leaf_queries import TreeQueries, leaf_cells, leaf_queries, leaf_query, node_cells
from dprm.trees.private import (
    PAIR_SCORES,
    ChainTrace,
    grow_exponential_tree,
    purity_mass,
    random_tree,
    sample_tree,
    sample_tree_pair,
)
from dprm.trees.targets import freedman_diaconis_bins, target_from_attribute, target_from_leaves
from dprm.trees.tree import Tree

__all__ = [
    "GINI_SENSITIVITY",
    "PAIR_SCORES",
    "ChainTrace",
    "Tree",
    "TreeQueries",
    "freedman_diaconis_bins",
    "gini_quality",
    "grow_exponential_tree",
    "grow_greedy_tree",
    "leaf_cells",
    "leaf_queries",
    "leaf_query",
    "node_cells",
    "purity_mass",
    "random_tree",
    "sample_tree",
    "sample_tree_pair",
    "split_qualities",
    "target_from_attribute",
    "target_from_leaves",
]

