"""One classifier chain of an estimate: the order of the variables, the tree of each, and its sampling.

A chain writes a joint density by the product rule, ``f(x_1..x_m) = prod_i
f_i(x_i | x_1..x_{i-1})``, each conditional a :class:`~dprm.itemsets.tree_model.ConditionalTree`
that tests only the variables before it. Both estimates (the online one of
:mod:`dprm.itemsets.estimator` and the private one of :mod:`dprm.itemsets.private_chain`)
draw or check their chains' orders by :func:`chain_orders`.

Examples
--------
>>> import numpy as np
>>> from dprm.itemsets.tree_model import ConditionalTree, _ranges
>>> chain = Chain((0,), (ConditionalTree.single_leaf(0, [1.0, 3.0]),))
>>> sample_chain(chain, 4, np.random.default_rng(0)).ravel().tolist()
[1, 1, 0, 0]
>>> chain_orders(["a", "b"], [["b", "a"]], 1, np.random.default_rng(0))
[(1, 0)]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dprm.errors import ParameterError
from dprm.itemsets.parameters import MAX_CHAINS
from dprm.itemsets.tree_model import ConditionalTree, _ranges
from dprm.precompiled import kernel

__all__ = ["Chain", "chain_orders", "sample_chain"]


@dataclass(frozen=True)
class Chain:
    """One classifier chain: the order of the variables and the tree of each.

    Attributes
    ----------
    order : tuple of int
        Column indices (in the estimator's column order), first variable first.
    trees : tuple of ConditionalTree
        ``trees[i]`` predicts column ``order[i]`` and tests only columns ``order[:i]``.
    """

    order: tuple[int, ...]
    trees: tuple[ConditionalTree, ...]

    def __post_init__(self) -> None:
        if len(self.order) != len(self.trees) or sorted(self.order) != list(range(len(self.order))):
            raise ParameterError("a chain needs one tree per column and an order that is a permutation of the columns")
        for i, (column, tree) in enumerate(zip(self.order, self.trees)):
            if tree.target != column:
                raise ParameterError(f"tree {i} of a chain predicts column {tree.target}, the order says {column}")
            if not tree.split_columns() <= set(self.order[:i]):
                raise ParameterError(f"the tree for column {column} tests a column that comes after it in the chain")

    def position(self) -> np.ndarray:
        """``position()[column]``: where the column stands in this chain's order (from 0)."""
        where = np.empty(len(self.order), dtype=np.int64)
        where[list(self.order)] = np.arange(len(self.order))
        return where


def chain_orders(columns: Sequence[str], orders: Sequence[Sequence[str]] | None, n_chains: int,
                 rng: np.random.Generator) -> list[tuple[int, ...]]:
    """The chains' orders as column indices: ``orders`` (by column name) checked, or ``n_chains`` drawn from ``rng``.

    Every given order must list each column exactly once (a list of names: a string
    such as ``"ab"`` is refused, not read as ``["a", "b"]``), and there must be one at
    least and :data:`~dprm.itemsets.parameters.MAX_CHAINS` (100) at most; ``rng`` is used
    only to draw orders (``n_chains`` permutations).
    """
    if orders is not None:
        if isinstance(orders, str) or any(isinstance(order, str) for order in orders):  # "ab" would be ["a", "b"]
            raise ParameterError("orders must be a list of orders, each a list of column names, not a string")
        orders = list(orders)
        if len(orders) > MAX_CHAINS:
            raise ParameterError(f"orders must hold at most {MAX_CHAINS} orders (one per chain), not {len(orders)}")
        index = {name: j for j, name in enumerate(columns)}
        checked = []
        for order in orders:
            if sorted(map(str, order)) != sorted(columns):
                raise ParameterError(f"every order must list each column exactly once (columns: {', '.join(columns)})")
            checked.append(tuple(index[str(name)] for name in order))
        if not checked:
            raise ParameterError("orders must hold at least one order")
        return checked
    return [tuple(int(j) for j in rng.permutation(len(columns))) for _ in range(int(n_chains))]


def sample_chain(chain: Chain, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` code rows drawn from one chain by ancestral sampling (each variable given those drawn before).

    Each variable takes ``n`` uniform draws ``u`` from ``rng`` in the chain's order; a row's
    value is the number of cumulative class probabilities of its node that ``u`` reaches
    (the row descends its tree by the values drawn before; compiled, :func:`descent_ways`).
    The rows are drawn into a column-major array (a tree's column is one contiguous line),
    returned as its transpose: shape ``(n, n_columns)``, Fortran-ordered.
    """
    columns = np.full((len(chain.order), n), -1, dtype=np.int64)
    draw = kernel("dprm.itemsets._kernels", "_draw")
    for tree in chain.trees:
        draw(columns, rng.random(n), tree.target, *descent_ways(tree, chain.order[0]), tree.node_proba)
    return columns.T


def descent_ways(tree: ConditionalTree, anchor: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A tree as the ways a drawn row takes (``_kernels._draw``): ``feature, way_offset, n_ways, way``.

    From node ``g`` a row whose code in column ``feature[g]`` is ``c`` goes to
    ``way[way_offset[g] + min(c, n_ways[g])]``: a split node's child for that code, or the node
    itself for a code beyond its children (the row stops there, as
    :meth:`~dprm.itemsets.tree_model.ConditionalTree.leaf_of` does); a leaf reads column
    ``anchor`` (one drawn before the tree's: the chain's first column) and has one way, to
    itself. A row has arrived when it stays put.

    Examples
    --------
    >>> tree = ConditionalTree.from_arrays(target=1, feature=[0, -1, -1], child_offset=[0, 0, 0],
    ...     n_children=[2, 0, 0], child=[1, 2], counts=[[1, 1], [1, 0], [0, 1]])
    >>> [a.tolist() for a in descent_ways(tree, 0)]
    [[0, 0, 0], [0, 3, 4], [2, 0, 0], [1, 2, 0, 1, 2]]
    """
    split = tree.feature >= 0
    n_ways = np.where(split, tree.n_children, 0)
    way_offset = np.concatenate([[0], np.cumsum(n_ways + 1)[:-1]]).astype(np.int64)
    way = np.repeat(np.arange(tree.n_nodes, dtype=np.int64), n_ways + 1)  # every node's last way: to itself
    nodes = np.flatnonzero(split)
    way[_ranges(way_offset[nodes], n_ways[nodes])] = tree.child[_ranges(tree.child_offset[nodes], n_ways[nodes])]
    return np.where(split, tree.feature, anchor).astype(np.int64), way_offset, n_ways.astype(np.int64), way
