"""Greedy (non-private) CART trees by the Gini criterion, grown level by level.

The builder of the non-private CARTwheels baseline: every node of a level takes the
split of highest Gini quality among all candidate splits of the view
(:mod:`dprm.trees.criterion`); a node stays a leaf when it is pure, smaller than
``2 * min_leaf`` rows, or when no split improves on not splitting. Data-dependent
stops like these are fine here (nothing is private); the private builders never use
them.
"""

from __future__ import annotations

import numpy as np

from dprm.data.literal_index import LiteralIndex
from dprm.trees.criterion import gini_quality, split_qualities
from dprm.trees.tree import Tree

__all__ = ["grow_greedy_tree"]


def grow_greedy_tree(
    index: LiteralIndex,
    target: np.ndarray,
    n_classes: int,
    depth: int,
    *,
    min_leaf: int = 1,
) -> Tree:
    """Grow a Gini decision tree of at most ``depth`` levels predicting ``target``.

    Parameters
    ----------
    index : LiteralIndex
        Candidate splits of the view the tree is grown on.
    target : ndarray of int
        Class of each row (``-1``: no class; such rows do not guide the splits).
    n_classes : int
        Number of classes.
    depth : int
        Maximum depth.
    min_leaf : int
        Minimum number of rows with a class on each side of a split.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, View
    >>> x = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 12.0])
    >>> view = View("left", [Attribute("x", "left", AttributeKind.NUMERIC, x)])
    >>> index = LiteralIndex(view)
    >>> tree = grow_greedy_tree(index, np.array([0, 0, 0, 1, 1, 1]), 2, depth=2)
    >>> tree.describe(index)
    '0:[x ≤ 3]'
    """
    tree = Tree(depth=depth)
    target = np.asarray(target, dtype=np.int64)
    node = np.zeros(index.n_rows, dtype=np.int64)  # heap position of each row, -1 = out
    splits = index.splits
    if not splits:
        return tree
    for level in range(depth):
        first = 2**level - 1
        positions = np.arange(first, 2 * first + 1)
        local = np.where((node >= first) & (node <= 2 * first), node - first, -1)
        labelled = (local >= 0) & (target >= 0)
        qualities = split_qualities(index, local, target, len(positions), n_classes)
        class_counts = np.zeros((len(positions), n_classes))
        np.add.at(class_counts, (local[labelled], target[labelled]), 1)
        unsplit = gini_quality(class_counts[:, None, :])
        grew = False
        for offset, position in enumerate(positions):
            counts = class_counts[offset]
            if not Tree.reachable(tree, position) or counts.sum() < 2 * min_leaf or (counts > 0).sum() < 2:
                continue
            order = np.argsort(-qualities[:, offset], kind="stable")
            for s in order[:8]:
                if qualities[s, offset] <= unsplit[offset] + 1e-9:
                    break
                members = np.flatnonzero(local == offset)
                true, false = index.split_branches(splits[s], members)
                has_class = target[members] >= 0
                if (true & has_class).sum() >= min_leaf and (false & has_class).sum() >= min_leaf:
                    tree.splits[position] = splits[s]
                    node[members[true]] = 2 * position + 1
                    node[members[false]] = 2 * position + 2
                    node[members[~(true | false)]] = -1
                    grew = True
                    break
        if not grew:
            break
    return tree
