"""One classifier chain of an estimate: the order of the variables, the tree of each, and its sampling.

A chain writes a joint density by the product rule, ``f(x_1..x_m) = prod_i
f_i(x_i | x_1..x_{i-1})``, each conditional a :class:`~dprm.itemsets.tree_model.ConditionalTree`
that tests only the variables before it. Both estimates (the online one of
:mod:`dprm.itemsets.estimator` and the private one of :mod:`dprm.itemsets.private`)
draw or check their chains' orders by :func:`chain_orders`.

Examples
--------
>>> import numpy as np
>>> from dprm.itemsets.tree_model import ConditionalTree
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
from dprm.itemsets.tree_model import ConditionalTree
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

    Every given order must list each column exactly once, and there must be one at
    least; ``rng`` is used only to draw orders (``n_chains`` permutations).
    """
    if orders is not None:
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
    (the row descends its tree by the values drawn before; compiled).
    """
    codes = np.full((n, len(chain.order)), -1, dtype=np.int64)
    for tree in chain.trees:
        kernel("dprm.itemsets._kernels", "_draw")(codes, rng.random(n), tree.target, tree.feature, tree.child_offset, tree.n_children, tree.child,
              tree.node_proba)
    return codes


