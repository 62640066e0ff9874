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

from dprm.data.attributes import AttributeKind
from dprm.data.literal_index import LiteralIndex
from dprm.trees.criterion import branch_sizes_from_counts, gini_quality, node_class_counts, qualities_from_counts
from dprm.trees.tree import Tree

__all__ = ["GreedyRows", "grow_greedy_tree"]


class GreedyRows:
    """Where the rows of a greedy tree are, level by level (the rows of this process).

    Parameters
    ----------
    index : LiteralIndex
        The view the tree is grown on, with the rows.
    target : ndarray of int
        Class of each row (``-1``: none).

    Examples
    --------
    >>> from dprm.data.attributes import Attribute, View
    >>> view = View("left", [Attribute("x", "left", AttributeKind.NUMERIC, np.array([1.0, 2.0, 8.0, np.nan]))])
    >>> rows = GreedyRows(LiteralIndex(view), np.array([0, 0, 1, 1]))
    >>> int(rows.level_counts(0, 2).sum())   # each attribute's (code, node, class) counts, all labelled rows
    4
    """

    def __init__(self, index: LiteralIndex, target: np.ndarray) -> None:
        self.index = index
        self.target = np.asarray(target, dtype=np.int64)
        self.node = np.zeros(index.n_rows, dtype=np.int64)  # heap position of each row, -1 = out

    def level_counts(self, level: int, n_classes: int) -> np.ndarray:
        """:func:`~dprm.trees.criterion.node_class_counts` of the nodes of ``level`` (counts of rows)."""
        first = 2**level - 1
        local = np.where((self.node >= first) & (self.node <= 2 * first), self.node - first, -1)
        return node_class_counts(self.index, local, self.target, 2**level, n_classes)

    def route(self, tree: Tree, level: int) -> None:
        """Move the rows of the nodes of ``level`` that ``tree`` splits one step down (missing: out)."""
        first = 2**level - 1
        rows = np.flatnonzero((self.node >= first) & (self.node <= 2 * first))
        nodes = self.node[rows]
        for position in np.unique(nodes):
            split = tree.splits[int(position)]
            if split is None:
                continue
            members = rows[nodes == position]
            true, false = self.index.split_branches(split, members)
            self.node[members[true]] = 2 * position + 1
            self.node[members[false]] = 2 * position + 2
            self.node[members[~(true | false)]] = -1


def grow_greedy_tree(
    index: LiteralIndex,
    target: np.ndarray | None,
    n_classes: int,
    depth: int,
    *,
    min_leaf: int = 1,
    rows: "GreedyRows | None" = None,
) -> Tree:
    """Grow a Gini decision tree of at most ``depth`` levels predicting ``target``.

    Parameters
    ----------
    index : LiteralIndex
        Candidate splits of the view the tree is grown on (with its rows, unless
        ``rows`` is given: then only its splits are read).
    target : ndarray of int or None
        Class of each row (``-1``: no class; such rows do not guide the splits);
        None when ``rows`` holds the target.
    n_classes : int
        Number of classes.
    depth : int
        Maximum depth.
    min_leaf : int
        Minimum number of rows with a class on each side of a split.
    rows : GreedyRows, optional
        Who counts and routes the rows (default: ``GreedyRows(index, target)``; a
        sharded run passes the shards' sum, with the same methods).

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
    splits = index.splits
    if not splits:
        return tree
    rows = GreedyRows(index, target) if rows is None else rows
    first_block = int(index.n_codes[0] + 1) if len(index.n_codes) else 0
    for level in range(depth):
        n_nodes = 2**level
        first = n_nodes - 1
        flat = np.asarray(rows.level_counts(level, n_classes))
        qualities = qualities_from_counts(index, flat, n_nodes, n_classes)
        true_sizes, false_sizes = branch_sizes_from_counts(index, flat, n_nodes, n_classes)
        # every labelled row of a node is in the first attribute's block (its codes and the missing code)
        class_counts = flat[: first_block * n_nodes * n_classes].reshape(first_block, n_nodes, n_classes)
        class_counts = class_counts.sum(axis=0).astype(np.float64)
        unsplit = gini_quality(class_counts[:, None, :])
        grew = False
        for offset in range(n_nodes):
            position = first + offset
            counts = class_counts[offset]
            if not Tree.reachable(tree, position) or counts.sum() < 2 * min_leaf or (counts > 0).sum() < 2:
                continue
            order = np.argsort(-qualities[:, offset], kind="stable")
            for s in order[:8]:
                if qualities[s, offset] <= unsplit[offset] + 1e-9:
                    break
                if true_sizes[s, offset] >= min_leaf and false_sizes[s, offset] >= min_leaf:
                    tree.splits[position] = splits[s]
                    grew = True
                    break
        if not grew:
            break
        rows.route(tree, level)
    return tree
