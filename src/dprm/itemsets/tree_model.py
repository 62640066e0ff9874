"""One conditional of a classifier chain: an array-based tree over integer-coded variables.

A :class:`ConditionalTree` predicts the distribution of ONE discrete target variable
from variables earlier in its chain. It is the frozen, inspectable form of what a tree
learner produced (the Hoeffding learner of :mod:`dprm.itemsets.hoeffding`, or any other
learner through :meth:`ConditionalTree.from_arrays`), and what inference
(:mod:`dprm.itemsets.estimator`), t-closeness (:mod:`dprm.itemsets.closeness`) and ISON
(:mod:`dprm.itemsets.ison`) read.

Layout (nodes numbered from 0, the root)
    ``feature[node]``
        The column index (in the estimator's column order) of the variable the node
        splits on, -1 for a leaf.
    ``child_offset[node]``, ``n_children[node]``
        A split node's children are ``child[child_offset[node] + code]`` for the codes
        ``0 <= code < n_children[node]`` of its variable: a multiway split, one child
        per category the variable had when the node was split.
    ``counts[node, k]``
        Weighted counts of the target's ``K`` categories among the rows that reached
        the node (float, so that t-closeness and noisy counts fit). Leaves' counts make
        the prediction; an inner node's are used where a row stops there.
    ``child_weight[child_offset[node] + code]``
        The weight of the edge to that child: the node's *edge distribution*, once
        normalised over its children. By default the total count of the child (the
        share of the node's rows that went down that edge); t-closeness moves it.

Where a row goes
    A code ``>= n_children[node]`` (a category the variable did not have when the node
    was split) stops the row at that node, which predicts with its own counts. A
    negative code means *not given*: :meth:`ConditionalTree.predict_proba` then sums
    over the node's children, weighted by the edge distribution (the marginalisation of
    the variable inside this tree, as EDDO does with soft evidence);
    :meth:`ConditionalTree.leaf_of` stops such a row at the node.
Empty nodes
    A node whose counts sum to zero (a child for a category no row of its parent had)
    predicts with the distribution of its nearest ancestor with counts; a whole tree
    without counts predicts the uniform distribution.

Examples
--------
A tree for column 1 (2 categories) that splits on column 0 (3 categories):

>>> import numpy as np
>>> tree = ConditionalTree.from_arrays(
...     target=1, feature=[0, -1, -1, -1], child_offset=[0, 0, 0, 0], n_children=[3, 0, 0, 0],
...     child=[1, 2, 3], counts=[[6, 4], [5, 0], [1, 3], [0, 1]])
>>> tree.predict_proba(np.array([[0, 0], [2, 0]])).tolist()
[[1.0, 0.0], [0.0, 1.0]]
>>> tree.predict_proba(np.array([[-1, 0]])).round(3).tolist()  # column 0 not given
[[0.6, 0.4]]
>>> tree.paths()
[(1, [(0, 0)]), (2, [(0, 1)]), (3, [(0, 2)])]
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dprm.precompiled import kernel

__all__ = ["ConditionalTree"]


class ConditionalTree:
    """A tree predicting one discrete target from earlier variables of a chain (see the module notes).

    Build it with :meth:`from_arrays` (or :meth:`single_leaf`); the arrays are copied
    and not changed afterwards: modifications (t-closeness) build a new tree.

    Attributes
    ----------
    target : int
        The column index of the predicted variable.
    n_classes : int
        ``K``, the number of the target's categories.
    feature, child_offset, n_children, child : numpy.ndarray of int64
    counts : numpy.ndarray of float64, shape (n_nodes, K)
    child_weight : numpy.ndarray of float64, aligned with ``child``
    """

    def __init__(
        self,
        target: int,
        feature: np.ndarray,
        child_offset: np.ndarray,
        n_children: np.ndarray,
        child: np.ndarray,
        counts: np.ndarray,
        child_weight: np.ndarray,
    ) -> None:
        self.target = int(target)
        self.feature = feature
        self.child_offset = child_offset
        self.n_children = n_children
        self.child = child
        self.counts = counts
        self.child_weight = child_weight
        self.n_classes = int(counts.shape[1])
        self.parent = _parents(feature, child_offset, n_children, child)
        self.node_proba = _node_proba(counts, self.parent)
        self.edge_proba = _edge_proba(feature, child_offset, n_children, child_weight)

    @classmethod
    def from_arrays(
        cls,
        *,
        target: int,
        feature: Sequence[int] | np.ndarray,
        child_offset: Sequence[int] | np.ndarray,
        n_children: Sequence[int] | np.ndarray,
        child: Sequence[int] | np.ndarray,
        counts: Sequence[Sequence[float]] | np.ndarray,
        child_weight: Sequence[float] | np.ndarray | None = None,
    ) -> ConditionalTree:
        """A tree from plain arrays (the layout of the module notes), validated.

        Parameters
        ----------
        target : int
            Column index of the predicted variable.
        feature, child_offset, n_children : array-like of int, one entry per node
        child : array-like of int
            Flat array of child node numbers.
        counts : array-like of float, shape (n_nodes, K)
            Non-negative class counts at every node.
        child_weight : array-like of float, optional
            Edge weights aligned with ``child``; default: each child's total count.

        Raises
        ------
        ValueError
            Arrays of inconsistent shapes, a child index out of range, a node reached
            twice or never, negative counts or weights.
        """
        feature = np.asarray(feature, dtype=np.int64)
        child_offset = np.asarray(child_offset, dtype=np.int64)
        n_children = np.asarray(n_children, dtype=np.int64)
        child = np.asarray(child, dtype=np.int64).reshape(-1)
        counts = np.array(counts, dtype=np.float64, ndmin=2)
        n_nodes = len(feature)
        if n_nodes == 0 or len(child_offset) != n_nodes or len(n_children) != n_nodes or counts.shape[0] != n_nodes:
            raise ValueError("feature, child_offset, n_children and counts need one entry per node (at least one)")
        if counts.shape[1] < 1 or not np.all(np.isfinite(counts)) or (counts < 0).any():
            raise ValueError("counts must be finite and non-negative, with at least one class")
        split = feature >= 0
        if (n_children[split] < 1).any() or (n_children[~split] != 0).any():
            raise ValueError("a split node needs at least one child and a leaf none (n_children)")
        ends = child_offset[split] + n_children[split]
        if (child_offset[split] < 0).any() or (ends > len(child)).any():
            raise ValueError("child_offset/n_children point outside the child array")
        slots = _ranges(child_offset[split], n_children[split])  # where the split nodes' children stand in child
        reached = child[slots]
        # reached repeats a node when a count of bincount exceeds 1 (np.unique would import numpy.ma: 0.05 s)
        if (reached <= 0).any() or (reached >= n_nodes).any() or np.bincount(reached).max(initial=0) > 1 \
                or len(reached) != n_nodes - 1:
            raise ValueError("every node but the root must be the child of exactly one split node")
        if child_weight is None:
            child_weight = np.zeros(len(child))
            child_weight[slots] = counts[reached].sum(axis=1)
        child_weight = np.asarray(child_weight, dtype=np.float64).reshape(-1)
        if len(child_weight) != len(child) or not np.all(np.isfinite(child_weight)) or (child_weight < 0).any():
            raise ValueError("child_weight must be finite, non-negative and aligned with child")
        tree = cls(int(target), feature, child_offset, n_children, child, counts, child_weight)
        if _has_cycle(tree):
            raise ValueError("the child arrays do not form a tree")
        return tree

    @classmethod
    def single_leaf(cls, target: int, counts: Sequence[float] | np.ndarray) -> ConditionalTree:
        """A tree that is one leaf with the given class counts.

        Examples
        --------
        >>> ConditionalTree.single_leaf(0, [1.0, 3.0]).predict_proba(np.zeros((1, 1), dtype=int)).tolist()
        [[0.25, 0.75]]
        """
        return cls.from_arrays(target=target, feature=[-1], child_offset=[0], n_children=[0], child=[],
                               counts=[list(np.asarray(counts, dtype=float))])

    # -- structure --------------------------------------------------------------------------

    @property
    def n_nodes(self) -> int:
        """The number of nodes."""
        return len(self.feature)

    def is_leaf(self, node: int) -> bool:
        """Whether ``node`` is a leaf."""
        return bool(self.feature[node] < 0)

    def children_of(self, node: int) -> np.ndarray:
        """The children of ``node``, indexed by its variable's code (empty for a leaf)."""
        o, c = self.child_offset[node], self.n_children[node]
        return self.child[o:o + c]

    def edge_distribution(self, node: int) -> np.ndarray:
        """The normalised weights of the edges from ``node`` to its children."""
        o, c = self.child_offset[node], self.n_children[node]
        return self.edge_proba[o:o + c].copy()

    def class_distribution(self, node: int) -> np.ndarray:
        """The target's distribution predicted at ``node`` (see *Empty nodes*)."""
        return self.node_proba[node].copy()

    def depth(self) -> int:
        """The length of the longest root-to-leaf path (0 for a single leaf)."""
        best = 0
        stack = [(0, 0)]
        while stack:
            node, d = stack.pop()
            best = max(best, d)
            stack.extend((int(c), d + 1) for c in self.children_of(node))
        return best

    def paths(self) -> list[tuple[int, list[tuple[int, int]]]]:
        """Every root-to-leaf path: ``(leaf, [(column, code), ...])``, conditions from the root down.

        Leaves are listed in depth-first order, children by increasing code.
        """
        result: list[tuple[int, list[tuple[int, int]]]] = []
        stack: list[tuple[int, list[tuple[int, int]]]] = [(0, [])]
        while stack:
            node, conditions = stack.pop()
            if self.feature[node] < 0:
                result.append((node, conditions))
                continue
            column = int(self.feature[node])
            kids = self.children_of(node)
            for code in range(len(kids) - 1, -1, -1):
                stack.append((int(kids[code]), conditions + [(column, code)]))
        return result

    def split_columns(self) -> set[int]:
        """The columns some node splits on."""
        return set(self.feature[self.feature >= 0].tolist())

    # -- prediction -------------------------------------------------------------------------

    def predict_proba(self, codes: np.ndarray) -> np.ndarray:
        """The target's distribution for each row of ``codes``.

        Parameters
        ----------
        codes : numpy.ndarray of int, shape (n_rows, n_columns)
            Codes in the estimator's column order; negative = not given (marginalised
            by the edge distributions); a code beyond a split's children stops the row
            at that split node.

        Returns
        -------
        numpy.ndarray of float64, shape (n_rows, K)
        """
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        if codes.ndim != 2:
            raise ValueError("codes must be a 2-d array (rows x columns)")
        return kernel("dprm.itemsets._kernels", "_soft_predict")(codes, self.feature, self.child_offset, self.n_children, self.child,
                             self.edge_proba, self.node_proba)

    def target_proba(self, codes: np.ndarray) -> np.ndarray:
        """The probability of each row's own target code: ``predict_proba(codes)[i, codes[i, target]]``,
        equal bit for bit, without the ``(n_rows, K)`` matrix.

        A row whose codes route it to one node (:meth:`leaf_of`: a leaf, or a split whose code
        is beyond its children) reads that node's probability; :meth:`predict_proba` gives
        such a row ``0 + 1 · p``, the same number. Only a row stopped by a code not given
        (marginalised over the children) is predicted in full. With a target of many
        categories (a column declared with 32,767) the matrix was ISON's cost: 32,767
        single items times 32,767 classes.

        Parameters
        ----------
        codes : numpy.ndarray of int, shape (n_rows, n_columns)
            As for :meth:`predict_proba`; every row's target code must be given (``>= 0``).

        Returns
        -------
        numpy.ndarray of float64, shape (n_rows,)

        Examples
        --------
        >>> tree = ConditionalTree.from_arrays(target=1, feature=[0, -1, -1], child_offset=[0, 0, 0],
        ...     n_children=[2, 0, 0], child=[1, 2], counts=[[2, 2], [3, 1], [0, 4]])
        >>> tree.target_proba(np.array([[0, 0], [1, 1], [-1, 1]])).tolist()
        [0.75, 1.0, 0.625]
        """
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        target = codes[:, self.target]
        node = self.leaf_of(codes)
        out = self.node_proba[node, target]
        split = self.feature[node] >= 0
        soft = np.flatnonzero(split)
        if len(soft):  # stopped at a split: by a code not given (soft) or beyond its children (that node)
            soft = soft[codes[soft, self.feature[node[soft]]] < 0]
        if len(soft):
            out[soft] = self.predict_proba(codes[soft])[np.arange(len(soft)), target[soft]]
        return out

    def leaf_of(self, codes: np.ndarray) -> np.ndarray:
        """The node each row of ``codes`` ends at: a leaf, or the split node where its code is
        negative or beyond the split's children.

        Examples
        --------
        >>> tree = ConditionalTree.from_arrays(target=1, feature=[0, -1, -1], child_offset=[0, 0, 0],
        ...     n_children=[2, 0, 0], child=[1, 2], counts=[[1, 1], [1, 0], [0, 1]])
        >>> tree.leaf_of(np.array([[1, 0], [0, 0], [-1, 0], [5, 0]])).tolist()
        [2, 1, 0, 0]
        """
        codes = np.asarray(codes, dtype=np.int64)
        node = np.zeros(len(codes), dtype=np.int64)
        rows = np.arange(len(codes))
        active = self.feature[node] >= 0
        while active.any():
            r, n = rows[active], node[active]
            code = codes[r, self.feature[n]]
            ok = (code >= 0) & (code < self.n_children[n])
            node[r[ok]] = self.child[self.child_offset[n[ok]] + code[ok]]
            active[r[~ok]] = False
            active[r[ok]] = self.feature[node[r[ok]]] >= 0
        return node

    def with_changes(self, *, counts: np.ndarray | None = None,
                     child_weight: np.ndarray | None = None) -> ConditionalTree:
        """A copy with new counts and/or edge weights (same structure)."""
        return ConditionalTree(
            self.target, self.feature.copy(), self.child_offset.copy(), self.n_children.copy(), self.child.copy(),
            np.array(self.counts if counts is None else counts, dtype=np.float64),
            np.array(self.child_weight if child_weight is None else child_weight, dtype=np.float64))

    def __repr__(self) -> str:
        return f"ConditionalTree(target={self.target}, n_nodes={self.n_nodes}, n_classes={self.n_classes})"


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """The ranges ``[start, start + length)`` one after the other (without a Python loop).

    Examples
    --------
    >>> _ranges(np.array([4, 0]), np.array([2, 3])).tolist()
    [4, 5, 0, 1, 2]
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    ends = np.cumsum(lengths)
    return np.repeat(np.asarray(starts, dtype=np.int64) - (ends - lengths), lengths) + np.arange(int(ends[-1]) if
                                                                                                  len(ends) else 0)


def _parents(feature: np.ndarray, child_offset: np.ndarray, n_children: np.ndarray, child: np.ndarray) -> np.ndarray:
    parent = np.full(len(feature), -1, dtype=np.int64)
    split = np.flatnonzero(feature >= 0)
    parent[child[_ranges(child_offset[split], n_children[split])]] = np.repeat(split, n_children[split])
    return parent


def _has_cycle(tree: ConditionalTree) -> bool:
    """Whether some node is not below the root (every node but the root has exactly one parent, checked
    before): following parents, with the root its own parent, every node reaches the root within
    ``log2(n_nodes)`` doublings exactly when none is on a cycle."""
    up = tree.parent.copy()
    up[0] = 0
    if (up < 0).any():
        return True
    for _ in range(max(1, int(tree.n_nodes).bit_length())):
        up = up[up]
    return bool((up != 0).any())


def _node_proba(counts: np.ndarray, parent: np.ndarray) -> np.ndarray:
    """Normalised counts; an empty node borrows its nearest non-empty ancestor's distribution."""
    totals = counts.sum(axis=1)
    proba = np.full(counts.shape, 1.0 / counts.shape[1])
    full = totals > 0
    proba[full] = counts[full] / totals[full, None]
    for node in np.flatnonzero(~full):
        up = parent[node]
        while up >= 0 and totals[up] <= 0:
            up = parent[up]
        if up >= 0:
            proba[node] = proba[up]
    return proba


def _edge_proba(feature: np.ndarray, child_offset: np.ndarray, n_children: np.ndarray,
                child_weight: np.ndarray) -> np.ndarray:
    """Edge weights normalised per node; a node with no weight on any edge gets uniform ones."""
    proba = np.zeros(len(child_weight))
    for node in np.flatnonzero(feature >= 0):
        o, c = child_offset[node], n_children[node]
        w = child_weight[o:o + c]
        total = w.sum()
        proba[o:o + c] = w / total if total > 0 else 1.0 / c
    return proba


