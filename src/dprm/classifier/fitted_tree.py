"""The released tree of :class:`~dprm.classifier.DPDecisionTreeClassifier`, in flat arrays.

The fit grows :class:`~dprm.classifier.subtree_search.GrowNode` objects; what it
keeps is a :class:`FittedTree`: the splits, and the labels or noisy class counts of
the leaves post-processed into each node's class probabilities (free: no row is
read). :meth:`FittedTree.apply` routes encoded rows to the node they end at.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from dprm.classifier.encoding import CATEGORICAL, FeatureEncoding
from dprm.classifier.subtree_search import GrowNode

__all__ = ["FittedTree"]


class FittedTree:
    """The released tree in flat arrays (what a fitted classifier keeps).

    Attributes
    ----------
    feature : ndarray of int
        Feature split on at each node, ``-1`` at leaves.
    threshold : ndarray of int
        Threshold index of a numeric split, ``-1`` otherwise.
    child_start, n_children : ndarray of int
        The node's children are ``children[child_start : child_start + n_children]``.
    children : ndarray of int
    parent, depth : ndarray of int
    noisy_counts : ndarray, shape (n_nodes, n_classes)
        Noisy class counts (leaves released, inner nodes summed from their leaves).
    proba : ndarray, shape (n_nodes, n_classes)
        Class probabilities of rows that end at each node (:meth:`set_counts`).
    """

    def __init__(self, nodes: list[GrowNode], index: dict[int, int]) -> None:
        n = len(nodes)
        self.feature = np.full(n, -1, dtype=np.int64)
        self.threshold = np.full(n, -1, dtype=np.int64)
        self.child_start = np.zeros(n, dtype=np.int64)
        self.n_children = np.zeros(n, dtype=np.int64)
        self.parent = np.full(n, -1, dtype=np.int64)
        self.depth = np.zeros(n, dtype=np.int64)
        children: list[int] = []
        for i, node in enumerate(nodes):
            self.depth[i] = node.depth
            if node.option is not None:
                self.feature[i], self.threshold[i] = node.option
                self.child_start[i] = len(children)
                self.n_children[i] = len(node.children)
                for child in node.children:
                    j = index[id(child)]
                    children.append(j)
                    self.parent[j] = i
        self.children = np.asarray(children, dtype=np.int64)
        self.noisy_counts = np.zeros((n, 0))
        self.proba = np.zeros((n, 0))

    @property
    def node_count(self) -> int:
        return int(self.feature.size)

    @property
    def leaves(self) -> np.ndarray:
        return np.flatnonzero(self.feature < 0)

    def set_counts(self, leaf_counts: np.ndarray, min_rows: float, prior_weight: float) -> None:
        """Post-process the leaves' noisy counts into the tree's labels (free).

        Inner nodes get the sums of their leaves' noisy counts; an inner node whose
        noisy row count is below ``min_rows`` becomes a leaf (its subtree is pruned);
        each node's class probabilities are its clipped noisy counts shrunk towards
        its parent's probabilities with ``prior_weight`` pseudo-rows.
        """
        n = self.node_count
        counts = np.zeros((n, leaf_counts.shape[1]), dtype=np.float64)
        counts[self.leaves] = leaf_counts
        by_depth = np.argsort(self.depth, kind="stable")
        for i in by_depth[::-1]:
            if self.parent[i] >= 0:
                counts[self.parent[i]] += counts[i]
        self.noisy_counts = counts
        clipped = np.clip(counts, 0.0, None)
        totals = clipped.sum(axis=1)
        n_classes = counts.shape[1]
        proba = np.empty_like(clipped)
        for i in by_depth:
            p = self.parent[i]
            if p >= 0 and self.feature[p] < 0:  # below a pruned node
                self.feature[i] = -1
            if self.feature[i] >= 0 and counts[i].sum() < min_rows:
                self.feature[i] = -1
            prior = np.full(n_classes, 1.0 / n_classes) if p < 0 else proba[p]
            proba[i] = (clipped[i] + prior_weight * prior) / (totals[i] + prior_weight)
        self.proba = proba

    def set_labels(self, leaf_labels: np.ndarray, n_classes: int) -> None:
        """Labels released with the structure: each leaf predicts its label."""
        self.noisy_counts = np.zeros((self.node_count, 0))
        proba = np.full((self.node_count, n_classes), 1.0 / n_classes)
        proba[self.leaves] = np.eye(n_classes)[leaf_labels]
        self.proba = proba

    def apply(self, codes: np.ndarray, domains: Sequence[FeatureEncoding]) -> np.ndarray:
        """The leaf each row ends at."""
        n_rows = codes.shape[0]
        node = np.zeros(n_rows, dtype=np.int64)
        categorical = np.array([d.kind == CATEGORICAL for d in domains] + [False])
        missing = np.array([d.missing_code for d in domains] + [0])
        while True:
            f = self.feature[node]
            moving = np.flatnonzero(f >= 0)
            if moving.size == 0:
                return node
            fm = f[moving]
            code = codes[moving, fm]
            is_cat = categorical[fm]
            miss = code == missing[fm]
            threshold = self.threshold[node[moving]]
            multiway = is_cat & (threshold < 0)
            binary_cat = is_cat & (threshold >= 0)
            below = np.where(binary_cat, code == threshold, code <= threshold)
            two_way = np.where(miss, 2, np.where(below, 0, 1))
            # a category unseen in training, categories read off the data (code -1): not v at a test a = v (the other
            # categories' branch, by `below`); at a multiway split, where missing values go
            unknown_to_missing = np.where(code < 0, self.n_children[node[moving]] - 1, code)
            child = np.where(multiway, unknown_to_missing, two_way)
            node[moving] = self.children[self.child_start[node[moving]] + child]
