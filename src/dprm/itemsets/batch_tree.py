"""One conditional of a chain grown from the whole table at once (batch statistics, no Hoeffding bound).

The Hoeffding bound decides a split from the rows a leaf has seen so far, because a
stream cannot be read again. When the whole table is at hand every leaf's statistics
are exact, so :func:`grow_batch_tree` decides from them directly:

* a leaf's statistics are the class counts of its rows per (attribute, value): one
  pass over the rows that reach it;
* its best split is the multiway split of largest information gain (log base 2),
  among the attributes with at least two values holding more than
  ``min_branch_fraction`` of the leaf's rows (as the Hoeffding learner);
* the split is *significant* when the G statistic of the split's contingency table,
  ``G = 2 ln 2 · n · gain`` (``n`` the leaf's rows), exceeds the ``1 - significance``
  quantile of the chi-squared distribution with ``(values - 1)(classes - 1)``
  degrees of freedom (values and classes that occur in the leaf; the quantile by the
  Wilson-Hilferty approximation): the test of independence of the target and the
  attribute within the leaf. A leaf without a significant split, with one class, or
  whose majority class holds more than ``max_share_to_split`` of its rows stays a leaf;
* leaves are split **best first**, largest ``n · gain`` (the drop of the tree's
  log-loss on the table, in bits) first, while the tree has room: a split that would
  take it past ``max_nodes`` nodes is not made and the leaf stays a leaf (the
  Hoeffding learner's budget rule); ``max_depth`` stops a branch.

The result is the tree a Hoeffding tree converges to on an unending stream from the
table's distribution (Domingos & Hulten 2000) up to the split test, grown with each
row read once per level instead of the passes rule's ``ceil(200,000 / n)`` times.
Children exist for every category of the split attribute (an empty one predicts its
parent's distribution); a node's counts are the class counts of all its rows, and
edge weights are the children's totals, as in :meth:`HoeffdingTreeLearner.to_tree
<dprm.itemsets.hoeffding.HoeffdingTreeLearner.to_tree>`.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> x = rng.integers(0, 3, size=3000)
>>> y = (x == 2).astype(np.int64)
>>> tree = grow_batch_tree(np.column_stack([x, y]), target=1, attributes=[0], sizes=[3, 2])
>>> int(tree.feature[0]), tree.n_nodes
(0, 4)
>>> tree.predict_proba(np.array([[2, -1], [0, -1]])).round(2).tolist()
[[0.0, 1.0], [1.0, 0.0]]
>>> noise = rng.integers(0, 2, size=3000)     # independent of x: no significant split at a strict level
>>> grow_batch_tree(np.column_stack([x, noise]), target=1, attributes=[0], sizes=[3, 2], significance=1e-3).n_nodes
1
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from dprm.errors import ParameterError
from dprm.itemsets.parameters import SPLIT_SIGNIFICANCE
from dprm.itemsets.tree_model import ConditionalTree
from dprm.precompiled import kernel

__all__ = ["grow_batch_tree"]


def grow_batch_tree(codes: np.ndarray, target: int, attributes: Sequence[int], sizes: Sequence[int], *,
                    max_nodes: int | None = 200, max_depth: int | None = None, significance: float = SPLIT_SIGNIFICANCE,
                    min_branch_fraction: float = 0.01, max_share_to_split: float = 0.99) -> ConditionalTree:
    """The tree of ``target`` given ``attributes`` grown from all rows of ``codes`` (see the module notes).

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n_rows, n_columns)
        Every column's code, in the estimator's column order (codes in their domains).
    target : int
        The predicted column.
    attributes : sequence of int
        The columns the tree may test.
    sizes : sequence of int
        The number of categories of every column.
    max_nodes, max_depth : int or None
        The size budget (nodes) and the deepest leaf; None for none.
    significance : float
        The split test's level, in (0, 1) (:data:`~dprm.itemsets.parameters.SPLIT_SIGNIFICANCE`).
    min_branch_fraction, max_share_to_split : float
        As for :class:`~dprm.itemsets.hoeffding.HoeffdingTreeLearner`.

    Returns
    -------
    ConditionalTree
    """
    if not 0.0 < significance < 1.0:
        raise ParameterError(f"significance must lie in (0, 1), not {significance!r}")
    if max_nodes is not None and (isinstance(max_nodes, bool) or int(max_nodes) != max_nodes or max_nodes < 1):
        raise ParameterError(f"max_nodes must be a positive integer or None, got {max_nodes!r}")
    if max_depth is not None and max_depth < 0:
        raise ParameterError("max_depth must not be negative")
    codes = np.ascontiguousarray(codes, dtype=np.int64)
    sizes_ = np.asarray(sizes, dtype=np.int64)
    attributes_ = np.asarray(attributes, dtype=np.int64).reshape(-1)
    k = int(sizes_[target])
    z = NormalDist().inv_cdf(1.0 - significance)
    budget = -1 if max_nodes is None else int(max_nodes)
    capacity = budget if budget > 0 else 1024
    while True:
        out = kernel("dprm.itemsets._kernels", "_grow")(codes, int(target), attributes_, sizes_, k, budget, -1 if max_depth is None else int(max_depth),
                    z, float(min_branch_fraction), float(max_share_to_split), capacity)
        if out[0] >= 0:
            break
        capacity *= 2  # no budget and the arrays were full: grow again with room (same result)
    n_nodes, feature, child_offset, n_children, child, n_child, counts = out
    return ConditionalTree.from_arrays(target=int(target), feature=feature[:n_nodes],
                                       child_offset=child_offset[:n_nodes], n_children=n_children[:n_nodes],
                                       child=child[:n_child], counts=counts[:n_nodes])


