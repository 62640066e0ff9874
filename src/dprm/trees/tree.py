"""A decision tree over one view, stored as a complete binary tree in heap order.

Node ``i`` has children ``2i + 1`` (the split's literal holds) and ``2i + 2`` (the
opposite literal holds). A tree of depth ``d`` has ``2**d - 1`` internal positions; a
position whose split is ``None`` is a leaf (greedy trees may stop early; private trees
always have every split set, so their shape never depends on the data).

Rows whose value of a tested attribute is missing satisfy neither branch and fall out
of the tree (leaf ``-1``): a leaf's rows are exactly the support of its query, the
conjunction of the literals on its path (paper, Appendix C).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from dprm.data.attributes import AttributeKind
from dprm.data.literal_index import LiteralIndex, Split
from dprm.trees.compiled import route_rows

__all__ = ["Tree"]


@dataclass
class Tree:
    """A depth-``depth`` decision tree; ``splits[i]`` is node ``i``'s test or ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.data.attributes import Attribute, AttributeKind, View
    >>> view = View("left", [Attribute("a", "left", AttributeKind.BOOLEAN,
    ...                                np.array([1, 0, 1, -1], dtype=np.int8))])
    >>> index = LiteralIndex(view)
    >>> tree = Tree(depth=1, splits=[index.splits[0]])
    >>> tree.apply(index).tolist()     # leaf 0: a holds, leaf 1: ¬a, -1: missing
    [0, 1, 0, -1]
    """

    depth: int
    splits: list[Split | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        n_internal = 2**self.depth - 1
        if not self.splits:
            self.splits = [None] * n_internal
        if len(self.splits) != n_internal:
            raise ValueError(f"a tree of depth {self.depth} has {n_internal} internal positions")

    # -- structure ------------------------------------------------------------------

    def is_internal(self, node: int) -> bool:
        return node < len(self.splits) and self.splits[node] is not None

    def reachable(self, node: int) -> bool:
        """True when every ancestor of ``node`` holds a split."""
        while node > 0:
            node = (node - 1) // 2
            if not self.is_internal(node):
                return False
        return True

    @property
    def leaves(self) -> list[int]:
        """Heap positions of the leaves, in order; leaf number ``k`` is ``leaves[k]``."""
        out, stack = [], [0]
        while stack:
            node = stack.pop()
            if self.is_internal(node):
                stack += [2 * node + 2, 2 * node + 1]
            else:
                out.append(node)
        return out

    @property
    def n_leaves(self) -> int:
        return len(self.leaves)

    def path(self, node: int) -> list[tuple[Split, bool]]:
        """The tests from the root to ``node``: ``(split, branch taken)`` pairs."""
        steps = []
        while node > 0:
            parent = (node - 1) // 2
            steps.append((self.splits[parent], node == 2 * parent + 1))
            node = parent
        return steps[::-1]

    # -- evaluation -----------------------------------------------------------------

    @property
    def internal_nodes(self) -> list[int]:
        """Heap positions of the reachable nodes that hold a split, in heap order."""
        return [node for node, split in enumerate(self.splits) if split is not None and self.reachable(node)]

    @property
    def n_cells(self) -> int:
        """Number of cells: one per leaf and one drop-out cell per internal node."""
        return self.n_leaves + len(self.internal_nodes)

    def _route(self, index: LiteralIndex, rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Final heap position of every row, and whether the row dropped out there."""
        if all(split is not None for split in self.splits):  # complete: one compiled pass
            first_leaf = 2**self.depth - 1
            attribute = np.array([split.attribute for split in self.splits], dtype=np.int64)
            code = np.array([split.code for split in self.splits], dtype=np.int64)
            numeric = np.array([split.kind is AttributeKind.NUMERIC for split in self.splits], dtype=np.bool_)
            selected = np.arange(index.n_rows, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
            node = route_rows(index.codes, index.missing_code, attribute, code, numeric, selected, 0, first_leaf)
            return node, node < first_leaf
        n = index.n_rows if rows is None else len(rows)
        node = np.zeros(n, dtype=np.int64)
        dropped = np.zeros(n, dtype=bool)
        for _ in range(self.depth):
            active = ~dropped
            for parent in np.unique(node[active]):
                split = self.splits[parent] if parent < len(self.splits) else None
                if split is None:
                    continue
                members = np.flatnonzero((node == parent) & active)
                source = members if rows is None else rows[members]
                true, false = index.split_branches(split, source)
                node[members[true]] = 2 * parent + 1
                node[members[false]] = 2 * parent + 2
                dropped[members[~(true | false)]] = True
        return node, dropped

    def apply(self, index: LiteralIndex, rows: np.ndarray | None = None) -> np.ndarray:
        """Leaf number of every row (or of ``rows``), ``-1`` where a test is missing."""
        node, dropped = self._route(index, rows)
        lookup = np.full(2 ** (self.depth + 1), -1, dtype=np.int64)
        for k, position in enumerate(self.leaves):
            lookup[position] = k
        return np.where(dropped, -1, lookup[node])

    def apply_cells(self, index: LiteralIndex, rows: np.ndarray | None = None) -> np.ndarray:
        """Cell of every row: its leaf number, or ``n_leaves + j`` when it dropped out
        at the ``j``-th of :attr:`internal_nodes` (a missing value of that node's test)."""
        node, dropped = self._route(index, rows)
        lookup = np.full(2 ** (self.depth + 1), -1, dtype=np.int64)
        for k, position in enumerate(self.leaves):
            lookup[position] = k
        for j, position in enumerate(self.internal_nodes):
            lookup[position] = self.n_leaves + j
        return lookup[node]

    def satisfiable(self, index: LiteralIndex, node: int) -> bool:
        """False when the tests on the path to ``node`` contradict each other, so that no
        row can reach it (``a`` then ``¬a``; ``a = u`` then ``a = v``; ``a ≤ 3`` then
        ``a > 5``). It depends on the tree and the public candidate splits only.

        Examples
        --------
        >>> import numpy as np
        >>> from dprm.data.attributes import Attribute, AttributeKind, View
        >>> view = View("left", [Attribute("x", "left", AttributeKind.NUMERIC, np.arange(10.0))])
        >>> index = LiteralIndex(view)
        >>> tree = Tree(depth=2, splits=[index.splits[2], index.splits[6], index.splits[6]])
        >>> [tree.satisfiable(index, leaf) for leaf in tree.leaves]   # x ≤ 2 and x > 6 is empty
        [True, False, True, True]
        """
        low: dict[int, float] = {}
        high: dict[int, float] = {}
        allowed: dict[int, set[int]] = {}
        for split, holds in self.path(node):
            position = split.attribute
            if split.kind is AttributeKind.NUMERIC:
                t = index.threshold(split)
                if holds:
                    high[position] = min(high.get(position, np.inf), t)
                else:
                    low[position] = max(low.get(position, -np.inf), t)
                if low.get(position, -np.inf) >= high.get(position, np.inf):
                    return False
                continue
            n_codes = int(index.n_codes[position])
            codes = {split.code} if holds else set(range(n_codes)) - {split.code}
            if split.kind is AttributeKind.BOOLEAN:
                codes = {1} if holds else {0}
            allowed[position] = allowed.get(position, codes) & codes
            if not allowed[position]:
                return False
        return True

    def describe(self, index: LiteralIndex) -> str:
        """A one-line text of the tree's splits (for logs of non-private runs)."""
        parts = []
        for node, split in enumerate(self.splits):
            if split is None or not self.reachable(node):
                continue
            attribute = index.attributes[split.attribute]
            if split.kind is AttributeKind.NUMERIC:
                parts.append(f"{node}:[{attribute.name} ≤ {index.threshold(split):g}]")
            elif split.kind is AttributeKind.CATEGORICAL:
                parts.append(f"{node}:[{attribute.name} = {attribute.domain.categories[split.code]}]")
            else:
                parts.append(f"{node}:{attribute.name}")
        return " ".join(parts)
