"""A certified lower bound on how many itemsets ISON lists: every set of near-certain items is frequent.

A wide table at a high θ can have millions of frequent itemsets with no long one: 2,000
rows of 500 columns of 2 – 4 values (Dirichlet(0.7) shares) have 64 items of support at
least 0.9, and about 10^7 of their combinations reach 0.9 (a union of 16 items at most).
ISON's greedy probe (:func:`dprm.itemsets.ison.explosive_length`) sees one long itemset
and lets such a run through; it then listed for more than 9 minutes and 6 GB. This module
counts instead the sets of items that are frequent *whatever* the estimate does between
them, by a union bound (Bonferroni), from the single items alone.

The bound
    Each chain ``c`` answers an itemset ``X`` either by the product of its trees' target
    probabilities (exact, or with the ``"paths"`` method marginalised over the edges: each
    factor a convex combination of node distributions) or by the share ``Q_c(X)`` of its
    reference sample holding ``X``. Let ``a_c(u)`` be one minus the least probability a
    node of the tree of ``u``'s column where a product can end gives ``u``'s code (with
    ``"exact-or-sample"``, a product is taken only when the set holds every column its
    trees test, so a row follows the children of the pool's items: :func:`_ends`; with
    ``"paths"``, any node), and ``b_c(u) = 1 - Q_c(u)``. A
    product is at least ``prod_u (1 - a_c(u)) >= 1 - sum_u a_c(u)``, and a sample's share at
    least ``1 - sum_u b_c(u)`` (a row misses ``X`` only if it misses one of its items). With
    ``d(u) = max_c max(a_c(u), b_c(u))`` the *deficit* of ``u``, every chain gives ``X`` at
    least ``1 - sum_{u in X} d(u)``, and so does the estimate's support, a weighted mean of
    the chains' densities (weights non-negative, summing to one). Hence every itemset of
    items of distinct columns whose deficits add up to at most ``1 - θ`` reaches θ, and so
    does each of its subsets: ISON lists every one of them (each is a frequent itemset one
    item smaller plus a frequent item). Nothing here assumes monotone supports.
Counting
    The pool is the frequent single items; the deficits hold for every set of them.
    The sets are counted by a knapsack over the columns (at most one item of each), each
    deficit rounded *up* to a grid of :data:`GRID` steps of ``1 - θ`` (minus a margin of
    1e-9 for the floating-point sums), so every set counted satisfies the bound: the count
    is a lower bound of the listing, never more. With ``max_length`` only sets of at most
    that many items are counted. Counts stop growing at ``cap`` (enough to compare).

The deficits read only the estimate (its trees and reference samples), so on a
differentially private estimate the bound is post-processing.

Examples
--------
>>> certain_subsets(np.array([0.01, 0.02, 0.03, 0.5]), np.array([0, 1, 2, 3]), 0.9, None, 10**6)
7
>>> certain_subsets(np.array([0.01, 0.02, 0.03, 0.5]), np.array([0, 1, 2, 3]), 0.9, 1, 10**6)
3
"""

from __future__ import annotations

import numpy as np

from dprm.itemsets.density import DensityQueries
from dprm.itemsets.tree_model import ConditionalTree

__all__ = ["GRID", "MARGIN", "certain_subsets", "deficits"]

#: Steps of the grid the deficits are rounded up to (of ``1 - θ``): finer counts more sets, never too many.
GRID = 2048
#: What the deficits' sum must stay below ``1 - θ`` by: the estimate's supports are floating-point sums.
MARGIN = 1e-9


def deficits(estimator: DensityQueries, singles: np.ndarray, method: str) -> np.ndarray:
    """Each single item's deficit ``d(u)`` (module notes): at most this much of a chain's density misses it.

    Parameters
    ----------
    estimator : DensityQueries
        The estimate (its chains; with ``method="exact-or-sample"`` its reference samples).
    singles : numpy.ndarray of int, shape (n, n_columns)
        Single items as code rows (one code >= 0 a row).
    method : {"exact-or-sample", "paths"}
        How the estimate marginalises: ``"paths"`` reads no reference sample.

    Returns
    -------
    numpy.ndarray of float64, shape (n,)
    """
    singles = np.asarray(singles, dtype=np.int64).reshape(len(singles), -1)
    columns = np.argmax(singles >= 0, axis=1)
    codes = singles[np.arange(len(singles)), columns]
    pool: dict[int, list[int]] = {}
    for j, v in zip(columns.tolist(), codes.tolist()):
        pool.setdefault(j, []).append(v)
    worst = np.zeros(len(singles))
    for c, chain in enumerate(estimator.chains_):
        tree_of = {tree.target: tree for tree in chain.trees}
        for j in np.unique(columns):
            at = np.flatnonzero(columns == j)
            nodes = _ends(tree_of[int(j)], pool if method == "exact-or-sample" else None)
            least = tree_of[int(j)].node_proba[np.ix_(nodes, codes[at])].min(axis=0, initial=1.0)
            worst[at] = np.maximum(worst[at], 1.0 - least)
        if method == "exact-or-sample":
            worst = np.maximum(worst, 1.0 - estimator._reference_samples()[c].supports(singles))
    return worst


def _ends(tree: ConditionalTree, pool: dict[int, list[int]] | None) -> np.ndarray:
    """The nodes of ``tree`` whose distribution can be a factor of a product over sets of ``pool``'s items
    (column -> codes); every node when ``pool`` is None (the ``"paths"`` method mixes any nodes).

    A chain answers a set by the product of its trees only when every column a tree of
    the set tests is in the set (otherwise by its sample), so a row then follows, at a
    split on column ``k``, the child of its item of ``k``, one of ``pool[k]``, and ends at
    a leaf or at a split whose code is beyond its children.
    """
    if pool is None:
        return np.arange(tree.n_nodes)
    ends, stack = [], [0]
    while stack:
        node = stack.pop()
        column = int(tree.feature[node])
        if column < 0:
            ends.append(node)
            continue
        for code in pool.get(column, []):  # no item of the column: no product reaches further
            if code >= tree.n_children[node]:
                ends.append(node)
            else:
                stack.append(int(tree.child[tree.child_offset[node] + code]))
    return np.array(sorted(set(ends)), dtype=np.int64)


def certain_subsets(deficit: np.ndarray, columns: np.ndarray, min_support: float, max_length: int | None,
                    cap: int) -> int:
    """How many non-empty sets of items of distinct columns (of at most ``max_length`` items) have deficits
    adding up to at most ``1 - min_support`` (less :data:`MARGIN`), rounded up on a grid; at most ``cap``.

    A lower bound of the itemsets reaching ``min_support`` (module notes).
    """
    budget = 1.0 - float(min_support) - MARGIN
    if budget < 0:
        return 0
    keep = deficit <= budget
    deficit, columns = deficit[keep], columns[keep]
    if len(deficit) == 0:
        return 0
    steps = np.ceil(deficit / budget * GRID).astype(np.int64) if budget > 0 else np.zeros(len(deficit), np.int64)
    steps = np.minimum(steps, GRID)  # deficit <= budget: at most GRID steps (a rounding of the division)
    longest = len(np.unique(columns)) if max_length is None else min(max_length, len(np.unique(columns)))
    # count[k, w]: the sets of k items (k up to longest; without max_length, one row for all sizes) and w steps
    by_size = max_length is not None
    count = np.zeros((longest + 1 if by_size else 1, GRID + 1))
    count[0, 0] = 1.0
    for j in np.unique(columns):
        grown = count.copy()
        for w in steps[columns == j].tolist():  # one item of the column, or none
            if by_size:
                grown[1:, w:] += count[:-1, :GRID + 1 - w]
            else:
                grown[:, w:] += count[:, :GRID + 1 - w]
        count = np.minimum(grown, float(cap) + 1.0)  # enough to compare; float64 is exact this far
    return int(min(count.sum() - 1.0, float(cap)))  # less the empty set
