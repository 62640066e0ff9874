"""Queries of tree leaves: the conjunction of the tests on a leaf's path.

A path's tests on one numeric attribute merge into one interval (``a > 3 ∧ a ≤ 7``
is the literal ``3 < a ≤ 7``). The false branch of a categorical test ``a = v`` is the
disjunction of the attribute's other categories, so that, like every literal, it is
false where ``a`` is missing: the support of a leaf's query is exactly the set of rows
the tree sorts into that leaf. Where the types file declares the attribute complete (a
public fact: no row misses it, checked when the data are read), the same rows are
written ``¬[a = v]``, the plain complement, one literal instead of a disjunction of
every other category.
"""

from __future__ import annotations

import numpy as np

from dprm.data.attributes import AttributeKind
from dprm.data.literal_index import LiteralIndex, Split
from dprm.queries import And, BooleanLiteral, CategoricalLiteral, Not, NumericLiteral, Or, Query
from dprm.trees.tree import Tree

__all__ = ["TreeQueries", "leaf_cells", "leaf_query", "leaf_queries", "node_cells"]


def _branch_literal(index: LiteralIndex, split: Split, holds: bool) -> Query:
    attribute = index.attributes[split.attribute]
    if split.kind is AttributeKind.BOOLEAN:
        return BooleanLiteral(attribute.name, holds)
    categories = attribute.domain.categories or ()
    if holds:
        return CategoricalLiteral(attribute.name, categories[split.code])
    if attribute.domain.complete:  # declared: the plain complement holds on exactly the other categories' rows
        return Not(CategoricalLiteral(attribute.name, categories[split.code]))
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
        literal = _branch_literal(index, split, holds)
        if literal not in literals:  # a test repeated on the path adds nothing
            literals.append(literal)
    literals += [NumericLiteral(name, **bounds) for name, bounds in intervals.items()]
    if not literals:
        raise ValueError("the root of a tree has no query")
    return literals[0] if len(literals) == 1 else And(*literals)


def leaf_queries(tree: Tree, index: LiteralIndex) -> list[Query]:
    """Queries of all leaves, in leaf-number order."""
    return [leaf_query(tree, index, node) for node in tree.leaves]


def node_cells(tree: Tree) -> tuple[list[int], np.ndarray]:
    """Every node below the root as the set of cells its query holds on.

    A node's query (the conjunction of its path) holds on the leaves below it and on
    the drop-out cells of the node itself and of the internal nodes below it (rows
    that reach the node but miss a later test). Returns the heap positions of the
    nodes and a Boolean matrix, one row per node and one column per cell
    (:meth:`Tree.apply_cells` numbering). Leaves are nodes too: their row is their
    single cell.
    """
    n_leaves = tree.n_leaves
    column = {position: k for k, position in enumerate(tree.leaves)}
    column.update({position: n_leaves + j for j, position in enumerate(tree.internal_nodes)})
    nodes = [node for node in range(1, 2 ** (tree.depth + 1) - 1) if tree.reachable(node)]
    masks = np.zeros((len(nodes), tree.n_cells), dtype=bool)
    for row, node in enumerate(nodes):
        stack = [node]
        while stack:
            current = stack.pop()
            masks[row, column[current]] = True
            if tree.is_internal(current):
                stack += [2 * current + 1, 2 * current + 2]
    return nodes, masks


def leaf_cells(tree: Tree) -> np.ndarray:
    """The single-leaf units of the paper's Algorithm 6, as cell masks."""
    return np.eye(tree.n_leaves, tree.n_cells, dtype=bool)


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
    >>> _, masks = node_cells(tree)
    >>> str(queries.union(masks[0]))                  # node 1: both of its leaves
    '[x ≤ 6]'
    >>> str(queries.union(~masks[2], negated=True))   # all cells but the first leaf
    '¬[x ≤ 2]'
    """

    def __init__(self, tree: Tree, index: LiteralIndex) -> None:
        self.tree = tree
        self.index = index
        nodes, masks = node_cells(tree)
        self._masks = {node: frozenset(np.flatnonzero(mask).tolist()) for node, mask in zip(nodes, masks)}
        self._node_queries: dict[int, Query] = {}
        self._unions: dict[tuple[tuple[int, ...], bool], Query] = {}

    def node(self, node: int) -> Query:
        """The query of a node: the conjunction of its path."""
        if node not in self._node_queries:
            self._node_queries[node] = leaf_query(self.tree, self.index, node)
        return self._node_queries[node]

    def _cover(self, node: int, inside: frozenset[int]) -> list[int]:
        """Fewest nodes (root excluded) whose cell sets make up ``inside`` exactly."""
        if node > 0 and self._masks[node] <= inside:
            return [node]
        if not self.tree.is_internal(node):
            return []
        return self._cover(2 * node + 1, inside) + self._cover(2 * node + 2, inside)

    def union(self, cells: tuple[bool, ...] | np.ndarray, negated: bool = False) -> Query:
        """The query of a set of cells made of units (nodes) or, if ``negated``, of the
        complement of such a set: ``¬(...)``, the plain complement, as in the spec.

        A union of nodes is written as the disjunction of the largest nodes it
        covers; the cells must be a union of node cell sets (as extraction makes
        them), else a ValueError.
        """
        chosen = frozenset(np.flatnonzero(np.asarray(cells, dtype=bool) != negated).tolist())
        key = (tuple(sorted(chosen)), negated)
        if key not in self._unions:
            cover = self._cover(0, chosen)
            if not cover or frozenset().union(*(self._masks[n] for n in cover)) != chosen:
                raise ValueError(f"cells {sorted(chosen)} are not a union of the tree's nodes")
            parts = [self.node(node) for node in cover]
            query = parts[0] if len(parts) == 1 else Or(*parts)
            self._unions[key] = Not(query) if negated else query
        return self._unions[key]
