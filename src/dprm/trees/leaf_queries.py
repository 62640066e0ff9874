"""Queries of tree leaves: the conjunction of the tests on a leaf's path.

A path's tests on one numeric attribute merge into one interval (``a > 3 ∧ a ≤ 7``
is the literal ``3 < a ≤ 7``). The false branch of a categorical test ``a = v`` is the
disjunction of the attribute's other categories, so that, like every literal, it is
false where ``a`` is missing: the support of a leaf's query is exactly the set of rows
the tree sorts into that leaf.
"""

from __future__ import annotations

import numpy as np

from dprm.data.attributes import AttributeKind
from dprm.data.literal_index import LiteralIndex, Split
from dprm.queries import And, BooleanLiteral, CategoricalLiteral, Not, NumericLiteral, Or, Query
from dprm.trees.tree import Tree

__all__ = ["TreeQueries", "leaf_query", "leaf_queries", "node_atoms", "union_query"]


def _branch_literal(index: LiteralIndex, split: Split, holds: bool) -> Query:
    attribute = index.attributes[split.attribute]
    if split.kind is AttributeKind.BOOLEAN:
        return BooleanLiteral(attribute.name, holds)
    categories = attribute.domain.categories or ()
    if holds:
        return CategoricalLiteral(attribute.name, categories[split.code])
    others = [CategoricalLiteral(attribute.name, c) for i, c in enumerate(categories) if i != split.code]
    return others[0] if len(others) == 1 else Or(*others)


def leaf_query(tree: Tree, index: LiteralIndex, node: int) -> Query:
    """The query of the leaf at heap position ``node``.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, View
    >>> x = Attribute("x", "left", AttributeKind.NUMERIC, np.arange(10.0))
    >>> index = LiteralIndex(View("left", [x]))
    >>> tree = Tree(depth=2, splits=[index.splits[6], index.splits[2], None])
    >>> str(leaf_query(tree, index, 4))
    '[2 < x ≤ 6]'
    """
    literals: list[Query] = []
    intervals: dict[str, dict[str, float]] = {}
    for split, holds in tree.path(node):
        if split.kind is AttributeKind.NUMERIC:
            name = index.attributes[split.attribute].name
            bounds = intervals.setdefault(name, {})
            t = index.threshold(split)
            if holds:
                bounds["le"] = min(bounds.get("le", t), t)
            else:
                bounds["gt"] = max(bounds.get("gt", t), t)
            continue
        literals.append(_branch_literal(index, split, holds))
    literals += [NumericLiteral(name, **bounds) for name, bounds in intervals.items()]
    if not literals:
        raise ValueError("the root of a tree has no query")
    return literals[0] if len(literals) == 1 else And(*literals)


def leaf_queries(tree: Tree, index: LiteralIndex) -> list[Query]:
    """Queries of all leaves, in leaf-number order."""
    return [leaf_query(tree, index, node) for node in tree.leaves]


def node_atoms(tree: Tree) -> tuple[list[int], np.ndarray]:
    """Every node below the root and the leaves under it, as atom masks.

    Returns the heap positions of the nodes and a Boolean matrix with one row per
    node and one column per leaf plus a last, always-false column for the residual
    (the cells of :mod:`dprm.mining.extraction`).
    """
    leaves = tree.leaves
    column = {position: k for k, position in enumerate(leaves)}
    nodes = [node for node in range(1, 2 ** (tree.depth + 1) - 1) if tree.reachable(node)]
    masks = np.zeros((len(nodes), len(leaves) + 1), dtype=bool)
    for row, node in enumerate(nodes):
        stack = [node]
        while stack:
            current = stack.pop()
            if tree.is_internal(current):
                stack += [2 * current + 1, 2 * current + 2]
            else:
                masks[row, column[current]] = True
    return nodes, masks


class TreeQueries:
    """Queries of the nodes of one tree and of sets of its cells, computed once each.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, View
    >>> x = Attribute("x", "left", AttributeKind.NUMERIC, np.arange(10.0))
    >>> index = LiteralIndex(View("left", [x]))
    >>> tree = Tree(depth=2, splits=[index.splits[6], index.splits[2], None])
    >>> queries = TreeQueries(tree, index)
    >>> str(queries.union((True, True, False, False)))   # both leaves of node 1
    '[x ≤ 6]'
    >>> str(queries.union((False, True, True, True)))    # all but the first leaf
    '¬[x ≤ 2]'
    """

    def __init__(self, tree: Tree, index: LiteralIndex) -> None:
        self.tree = tree
        self.index = index
        self.leaves = tree.leaves
        self._below: dict[int, frozenset[int]] = {}
        self._fill_below(0)
        self._node_queries: dict[int, Query] = {}
        self._unions: dict[tuple[bool, ...], Query] = {}

    def _fill_below(self, node: int) -> frozenset[int]:
        if self.tree.is_internal(node):
            below = self._fill_below(2 * node + 1) | self._fill_below(2 * node + 2)
        else:
            below = frozenset([node])
        self._below[node] = below
        return below

    def node(self, node: int) -> Query:
        """The query of a node: the conjunction of its path."""
        if node not in self._node_queries:
            self._node_queries[node] = leaf_query(self.tree, self.index, node)
        return self._node_queries[node]

    def _cover(self, node: int, inside: frozenset[int]) -> list[int]:
        """Fewest subtrees (root excluded) whose leaves are exactly ``inside``."""
        below = self._below[node]
        if node > 0 and below <= inside:
            return [node]
        if not self.tree.is_internal(node) or not (below & inside):
            return []
        return self._cover(2 * node + 1, inside) + self._cover(2 * node + 2, inside)

    def union(self, atoms: tuple[bool, ...] | np.ndarray) -> Query:
        """The query of a set of cells, written with the fewest subtrees.

        ``atoms`` has one entry per leaf and a last one for the residual (rows
        outside the tree). Without the residual the set is a union of leaves,
        written as the disjunction of the largest subtrees it covers. With the
        residual it is the complement of the leaves it lacks: ``¬(...)``, the plain
        complement, as in the spec.
        """
        key = tuple(bool(a) for a in atoms)
        if key not in self._unions:
            negated = key[-1]
            chosen = frozenset(p for p, inside in zip(self.leaves, key[:-1]) if inside != negated)
            if not chosen:
                raise ValueError("the set of cells is empty or the whole data")
            parts = [self.node(node) for node in self._cover(0, chosen)]
            query = parts[0] if len(parts) == 1 else Or(*parts)
            self._unions[key] = Not(query) if negated else query
        return self._unions[key]


def union_query(atoms: tuple[bool, ...] | np.ndarray, tree: Tree, index: LiteralIndex) -> Query:
    """The query of a set of cells of ``tree`` (see :meth:`TreeQueries.union`)."""
    return TreeQueries(tree, index).union(atoms)
