"""A Hoeffding tree over integer-coded nominal variables, learned in compiled mini-batches.

:class:`HoeffdingTreeLearner` learns one conditional of a classifier chain: the
distribution of a target column given some other columns, all discrete. It is the
VFDT of Domingos & Hulten (2000) as river's ``HoeffdingTreeClassifier`` implements it
(river 0.26, the reference), restricted to what a chain of discrete variables needs:

* every attribute is nominal and splits are multiway (one child per category of the
  attribute's domain);
* a leaf keeps the weighted class counts of its rows (``counts``; a new leaf starts
  with the counts its parent's attribute observer had for its category, as in river)
  and, while active, counts per (attribute, value, class) of the rows it has seen
  since it was created (the attribute observers);
* whenever the weight a leaf has seen since its last split attempt reaches
  ``grace_period``, and its class counts are not pure, the information gain (log base 2)
  of a multiway split on each attribute is computed from the observers, ``-inf`` for
  an attribute with fewer than two categories holding more than ``min_branch_fraction``
  of the leaf's observed weight; the *pre-split* entropy is that of the leaf's class
  counts (inherited counts included, as in river); with ``R = log2(max(c, 2))`` for the
  ``c`` classes the leaf has seen and ``n`` its total weight, the Hoeffding bound is
  ``eps = sqrt(R^2 ln(1/split_confidence) / (2n))``; the leaf splits on the best
  attribute if ``best - second > eps`` or ``eps < tie_threshold``, the second best
  being the next attribute or the null split (merit ``-inf``), ties going to the later
  attribute as river's stable sort does;
* a leaf whose majority class holds more than ``max_share_to_split`` of its weight
  does not split at an attempt, and its attribute observers start over (river
  deactivates such a leaf, and its memory manager, run after every split attempt that
  decides anything, reactivates it at once with empty observers);
* ``max_depth`` deactivates a leaf that reached it;
* ``max_nodes`` bounds the size of the tree (the role of river's and MOA's memory
  budget, here counted in nodes, which does not depend on the data): a split that
  would take the tree past ``max_nodes`` nodes is not made and the leaf is
  deactivated (its attribute observers are freed; it keeps counting its classes). Once
  the budget is spent the tree's shape is fixed, so everything that reads the tree
  (ISON, sampling) costs the same however many more rows are learned, and learning a
  row costs one descent and one count.

One deliberate difference from river: a leaf never splits on an attribute whose merit
is ``-inf`` (river does when every candidate is ``-inf`` and ``eps < tie_threshold``,
creating a split that separates nothing). river also considers binary splits of a
nominal attribute (one category against the rest) even with ``binary_split=False``;
such a split wins only when the multiway split fails the branch-fraction rule or
through rounding (equal merits), and this learner has none. The tests compare the two
on the same streams: the same attributes chosen at the same rows, the same class
distributions.

Mini-batches
    :meth:`HoeffdingTreeLearner.learn` processes the rows of a batch in order, one
    at a time, inside a compiled (numba) loop: the result is identical to learning
    the rows one by one, whatever the batch size.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> x = rng.integers(0, 3, size=3000)
>>> y = (x == 2).astype(np.int64)          # the target is column 1, it depends on column 0
>>> learner = HoeffdingTreeLearner(target=1, attributes=[0], sizes=[3, 2], grace_period=100)
>>> learner.learn(np.column_stack([x, y]))
>>> tree = learner.to_tree()
>>> int(tree.feature[0]), tree.n_nodes
(0, 4)
>>> tree.predict_proba(np.array([[2, -1], [0, -1]])).round(2).tolist()
[[0.0, 1.0], [1.0, 0.0]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from dprm.errors import ParameterError
from dprm.itemsets.tree_model import ConditionalTree

__all__ = ["HoeffdingTreeLearner"]

_NODES, _CHILDREN, _FREE = 0, 1, 2


class HoeffdingTreeLearner:
    """An incrementally learned Hoeffding tree for one target column (see the module notes).

    Parameters
    ----------
    target : int
        Column index of the target variable.
    attributes : sequence of int
        Column indices the tree may split on (the variables before the target in its
        chain), in the order ties are broken (the later wins).
    sizes : sequence of int
        The number of categories of every column (indexed by column).
    grace_period : int
        Weight a leaf sees between split attempts.
    split_confidence : float
        ``delta`` of the Hoeffding bound, in (0, 1).
    tie_threshold : float
        ``tau``: split on the best attribute when the bound falls below it.
    min_branch_fraction : float
        An attribute whose multiway split puts more than this share of the weight in
        fewer than two categories has merit ``-inf``.
    max_share_to_split : float
        A leaf whose majority class holds more than this share of its weight does not
        split, and its attribute observers start over.
    max_depth : int or None
        Leaves at this depth stop growing.
    max_nodes : int or None
        The most nodes the tree may have (``None``: no bound); a leaf whose split
        would exceed it is deactivated (see the module notes).
    """

    def __init__(
        self,
        target: int,
        attributes: Sequence[int],
        sizes: Sequence[int],
        *,
        grace_period: int = 200,
        split_confidence: float = 1e-7,
        tie_threshold: float = 0.05,
        min_branch_fraction: float = 0.01,
        max_share_to_split: float = 0.99,
        max_depth: int | None = None,
        max_nodes: int | None = None,
    ) -> None:
        if grace_period < 1:
            raise ParameterError("grace_period must be at least 1")
        if not 0.0 < split_confidence < 1.0:
            raise ParameterError("split_confidence must lie in (0, 1)")
        if tie_threshold < 0.0:
            raise ParameterError("tie_threshold must not be negative")
        if not 0.0 <= min_branch_fraction < 0.5:
            raise ParameterError("min_branch_fraction must lie in [0, 0.5)")
        if max_depth is not None and max_depth < 0:
            raise ParameterError("max_depth must not be negative")
        if max_nodes is not None and (isinstance(max_nodes, bool) or int(max_nodes) != max_nodes or max_nodes < 1):
            raise ParameterError(f"max_nodes must be a positive integer or None, got {max_nodes!r}")
        self.target = int(target)
        self.sizes = np.asarray(sizes, dtype=np.int64)
        self.attributes = np.asarray(attributes, dtype=np.int64).reshape(-1)
        if self.target in set(self.attributes.tolist()):
            raise ParameterError("the target cannot be one of its own attributes")
        self.grace_period = float(grace_period)
        self.split_confidence = float(split_confidence)
        self.tie_threshold = float(tie_threshold)
        self.min_branch_fraction = float(min_branch_fraction)
        if not 0.0 < max_share_to_split <= 1.0:
            raise ParameterError("max_share_to_split must lie in (0, 1]")
        self.max_share_to_split = float(max_share_to_split)
        self.max_depth = -1 if max_depth is None else int(max_depth)
        self.max_nodes = -1 if max_nodes is None else int(max_nodes)
        self.n_classes = int(self.sizes[self.target])
        att_sizes = self.sizes[self.attributes] if len(self.attributes) else np.zeros(0, dtype=np.int64)
        self._att_size = att_sizes
        self._att_offset = np.concatenate([[0], np.cumsum(att_sizes)[:-1]]).astype(np.int64) \
            if len(att_sizes) else np.zeros(0, dtype=np.int64)
        self._width = int(att_sizes.sum())
        self._widest = int(att_sizes.max()) if len(att_sizes) else 1
        self.n_seen = 0
        self._allocate(nodes=16, children=16, slots=4)
        # the root: an active leaf in slot 0
        self._state[_NODES] = 1
        self._feature[0] = -1
        self._slot[0] = self._take_slot()
        self._active[0] = 1

    # -- storage --------------------------------------------------------------------------

    def _allocate(self, nodes: int, children: int, slots: int) -> None:
        k = self.n_classes
        self._feature = np.full(nodes, -1, dtype=np.int64)
        self._child_offset = np.zeros(nodes, dtype=np.int64)
        self._n_children = np.zeros(nodes, dtype=np.int64)
        self._depth = np.zeros(nodes, dtype=np.int64)
        self._slot = np.full(nodes, -1, dtype=np.int64)
        self._active = np.zeros(nodes, dtype=np.int8)
        self._last_check = np.zeros(nodes)
        self._total = np.zeros(nodes)
        self._counts = np.zeros((nodes, k))
        self._initial = np.zeros((nodes, k))
        self._child = np.zeros(children, dtype=np.int64)
        self._stats = np.zeros((slots, self._width, k))
        self._free = np.arange(slots - 1, -1, -1, dtype=np.int64)
        self._state = np.array([0, 0, slots], dtype=np.int64)

    def _take_slot(self) -> int:
        self._state[_FREE] -= 1
        return int(self._free[self._state[_FREE]])

    def _grow(self) -> None:
        """Double whatever capacity the next split could exhaust."""
        n_nodes, n_child, n_free = (int(v) for v in self._state)
        if n_nodes + self._widest > len(self._feature):
            extra = len(self._feature) + self._widest
            for name, fill in (("_feature", -1), ("_child_offset", 0), ("_n_children", 0), ("_depth", 0),
                               ("_slot", -1), ("_active", 0), ("_last_check", 0), ("_total", 0)):
                old = getattr(self, name)
                setattr(self, name, np.concatenate([old, np.full(extra, fill, dtype=old.dtype)]))
            self._counts = np.vstack([self._counts, np.zeros((extra, self.n_classes))])
            self._initial = np.vstack([self._initial, np.zeros((extra, self.n_classes))])
        if n_child + self._widest > len(self._child):
            self._child = np.concatenate([self._child, np.zeros(len(self._child) + self._widest, dtype=np.int64)])
        if n_free < self._widest:
            old = len(self._stats)
            extra = old + self._widest
            self._stats = np.concatenate([self._stats, np.zeros((extra, self._width, self.n_classes))])
            free = np.zeros(old + extra, dtype=np.int64)  # room for every slot to be free at once
            free[:extra] = np.arange(old + extra - 1, old - 1, -1)
            free[extra:extra + n_free] = self._free[:n_free]
            self._free = free
            self._state[_FREE] = extra + n_free

    # -- learning -------------------------------------------------------------------------

    def learn(self, codes: np.ndarray) -> None:
        """Learn the rows of ``codes`` in order (the same as one at a time).

        Parameters
        ----------
        codes : numpy.ndarray of int, shape (n_rows, n_columns)
            Every column's code, in the estimator's column order; codes must lie in
            their domains (the estimator checks them).
        """
        codes = np.ascontiguousarray(codes, dtype=np.int64)
        start = 0
        while start < len(codes):
            start = _kernels()._learn_rows(
                codes, start, self.target, self.attributes, self._att_offset, self._att_size, self._widest,
                self._feature, self._child_offset, self._n_children, self._child, self._depth, self._slot,
                self._active, self._last_check, self._total, self._counts, self._initial, self._stats,
                self._free, self._state, self.grace_period, math.log(1.0 / self.split_confidence),
                self.tie_threshold, self.min_branch_fraction, self.max_share_to_split, self.max_depth,
                self.max_nodes)
            if start < len(codes):
                self._grow()
        self.n_seen += len(codes)

    @property
    def n_nodes(self) -> int:
        """The number of nodes grown so far."""
        return int(self._state[_NODES])

    def to_tree(self) -> ConditionalTree:
        """The tree as learned so far, as a :class:`ConditionalTree`.

        A leaf's counts are its class counts; an inner node's are the counts it had
        when it split plus everything that has reached its leaves since (the weighted
        class counts of all the rows that passed through it); edge weights are the
        children's totals.
        """
        n = self.n_nodes
        feature = self._feature[:n].copy()
        counts = self._counts[:n].copy()
        # inner nodes: counts at the split + what their subtrees learned since (children before parents:
        # a child always has a larger number than its parent)
        added = counts - self._initial[:n]
        for node in range(n - 1, -1, -1):
            if feature[node] >= 0:
                o, c = self._child_offset[node], self._n_children[node]
                kids = self._child[o:o + c]
                below = added[kids].sum(axis=0)
                counts[node] = self._counts[node] + below
                added[node] += below
        return ConditionalTree.from_arrays(
            target=self.target, feature=feature, child_offset=self._child_offset[:n], n_children=self._n_children[:n],
            child=self._child[:int(self._state[_CHILDREN])], counts=counts)


def _kernels():  # noqa: ANN202 - a module
    """:mod:`dprm.itemsets._kernels`, imported when a Hoeffding tree first learns (it imports numba)."""
    import dprm.itemsets._kernels as kernels

    return kernels
