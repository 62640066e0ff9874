"""The items that can be frequent, released first: a private chain over the domains they leave.

At a support threshold ``θ`` an itemset can be frequent only if every one of its
items is: a category whose share of the rows is below ``θ`` never appears in a
frequent itemset. :func:`release_items` releases every column's one-way histogram
once, keeps the categories whose noisy count can reach ``θ`` and merges the others
of a column into one category, *other*. The private chain
(:mod:`dprm.itemsets.private_parents`) is then released over these compressed
domains (``private_method="frequent-items"`` of
:func:`~dprm.itemsets.private.fit_private_estimator`): mushroom's columns of up to 12
categories become columns of 2 or 3, so a table with three parents has at most
``3⁴ = 81`` cells instead of thousands, the same noise spreads over far fewer cells,
and a column none of whose categories can be frequent needs no release at all.
:meth:`ItemSelection.expand` turns each released table back into a tree over the
declared categories (post-processing), so the estimate keeps its public domains.

The release (sensitivity)
-------------------------
``m'`` columns of at least two public states; column ``j``'s histogram
``h_j[v] = #{rows with x_j = v}``. Adding or removing one row changes exactly one cell
of each ``h_j`` by one: **L1 sensitivity 1** per histogram (the cells of a column are
disjoint; every row has one value). A column whose public domain has the missing value
has one cell more, the rows missing it: every row is still in exactly one cell, so the
sensitivity stays 1, and that cell is never a kept item (it is merged into *other*).
Each is released by a discrete Laplace vector
(:class:`~dprm.privacy.DiscreteLaplaceHistogram`) with ``ε_items / m'``; the ``m'``
releases each read every row, so they compose sequentially to ``ε_items``
(``ITEM_SHARE`` of the fit's ``ε`` by default). ``tests/test_itemsets_private_items.py``
checks the sensitivity on neighbouring datasets (one row removed) and the ledger.

What is derived from the noisy histograms (post-processing, free)
-----------------------------------------------------------------
* ``n̂``, the median of the columns' noisy totals (the number of rows is private and
  never used un-noised);
* the kept categories: noisy count ``>= θ·n̂ − √2·b`` (``b`` the histograms' noise
  scale, ``√2·b`` one standard deviation of the noise: a frequent item is dropped only
  when its noise is more than one standard deviation below its count);
* the share of each merged category within *other*, ``(max(y, 0) + 1) / Σ (max(y', 0) + 1)``
  over the merged categories (additive smoothing keeps every category possible), used
  by :meth:`ItemSelection.expand` to spread *other*'s counts.

Which columns need a release afterwards, and hence each later release's share of the
budget, depends on these noisy counts only: adaptive sequential composition, the
total fixed at ``ε`` before any row is read.

Examples
--------
>>> import numpy as np
>>> from dprm.privacy import Accountant, SeededNoise
>>> rng = np.random.default_rng(0)
>>> codes = np.column_stack([rng.choice(4, p=[0.6, 0.3, 0.05, 0.05], size=5000), rng.integers(0, 2, size=5000)])
>>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(1)))
>>> chosen = release_items(codes, [4, 2], 1.0, 0.2, acc, ["a", "b"])
>>> chosen.kept[0].tolist(), chosen.sizes, acc.spent()
([0, 1], [3, 2], Fraction(1, 1))
>>> chosen.compress(codes[:3]).tolist() == np.column_stack([chosen.mapping[0][codes[:3, 0]], codes[:3, 1]]).tolist()
True
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from dprm.errors import ParameterError
from dprm.itemsets.private_parents import oblivious_tree
from dprm.itemsets.tree_model import ConditionalTree
from dprm.privacy import Accountant, DiscreteLaplaceHistogram

__all__ = ["ITEM_SHARE", "MAX_EXPANDED_CELLS", "ItemSelection", "release_items"]

#: The share of the fit's budget that releases the one-way histograms.
ITEM_SHARE = Fraction(1, 10)
#: Most cells of a released table once expanded to the declared categories (bounds memory).
MAX_EXPANDED_CELLS = 1 << 16


@dataclass(frozen=True)
class ItemSelection:
    """What :func:`release_items` returns (every field derived from the noisy histograms).

    Attributes
    ----------
    kept : list of numpy.ndarray
        Per column, the codes of the kept categories, ascending.
    mapping : list of numpy.ndarray
        Per column, each declared category's compressed code (kept ones ``0..k-1`` in
        order, merged ones ``k``, *other*).
    shares : list of numpy.ndarray
        Per column, each declared category's share of its compressed category (1 for a
        kept category).
    sizes : list of int
        The compressed domains' sizes.
    n_hat : float
        The noisy number of rows (median of the noisy totals).
    scale : float
        The noise scale of each histogram's counts (rows).
    counts : list of numpy.ndarray
        Per column, the noisy count of each declared category (a one-category column's:
        ``n_hat``).
    """

    kept: list[np.ndarray]
    mapping: list[np.ndarray]
    shares: list[np.ndarray]
    sizes: list[int]
    n_hat: float
    scale: float
    counts: list[np.ndarray] = field(default_factory=list)

    def kept_codes(self, j: int) -> range:
        """The compressed codes of column ``j``'s kept categories (``0..k-1``, in the order of ``kept[j]``)."""
        return range(len(self.kept[j]))

    def compress(self, codes: np.ndarray) -> np.ndarray:
        """The code rows in the compressed domains."""
        return np.column_stack([self.mapping[j][codes[:, j]] for j in range(codes.shape[1])])

    def single_leaf(self, target: int) -> ConditionalTree:
        """The tree of a column compressed to one category: its declared categories by their shares."""
        return ConditionalTree.single_leaf(target, self.shares[target])

    def expanded_cells(self, target: int, parents: Sequence[int]) -> int:
        """Cells of the table of ``target`` given ``parents`` over the declared categories."""
        return math.prod(len(self.mapping[p]) for p in parents) * len(self.mapping[target])

    def expand(self, target: int, parents: Sequence[int], counts: np.ndarray) -> ConditionalTree:
        """The tree over the declared categories of a table released over the compressed ones.

        ``counts[config, x]`` (compressed parent configurations in mixed radix, the first
        parent most significant) becomes, for each declared configuration ``(o_1..o_k)``
        and category ``o``, ``counts[c(o_1..o_k), c(o)] · w(o_1)···w(o_k) · w(o)``: the
        compressed cell's counts spread over its declared categories by their shares
        ``w``, so each node's distribution is its compressed one (*other*'s mass split by
        the shares) and inner nodes' totals add up. Post-processing.
        """
        config = np.zeros(1, dtype=np.int64)
        weight = np.ones(1)
        for p in parents:
            config = (config[:, None] * self.sizes[p] + self.mapping[p][None, :]).ravel()
            weight = (weight[:, None] * self.shares[p][None, :]).ravel()
        rows = np.asarray(counts, dtype=np.float64)[config] * weight[:, None]
        leaf_counts = rows[:, self.mapping[target]] * self.shares[target][None, :]
        return oblivious_tree(target, list(parents), [len(m) for m in self.mapping], leaf_counts)


def release_items(codes: np.ndarray, sizes: Sequence[int], epsilon: float | Fraction, min_support: float,
                  accountant: Accountant, columns: Sequence[str], n_items: Sequence[int] | None = None
                  ) -> ItemSelection:
    """Release every column's one-way histogram and keep the categories that can reach ``min_support``.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n_rows, n_columns)
        The rows, each column's code in its public domain.
    sizes : sequence of int
        Every column's number of public states (its categories, and the missing value
        where its domain has one).
    epsilon : number
        The budget of all the histograms (split equally over the columns of at least two
        categories; charged to ``accountant`` as ``items: COLUMN``).
    min_support : float
        The itemsets' threshold ``θ`` (public), in ``(0, 1]``.
    accountant : Accountant
    columns : sequence of str
        The columns' names (for the ledger).
    n_items : sequence of int, optional
        Every column's number of categories, the codes ``0 .. n_items - 1`` that are
        items (default ``sizes``). A code past them, the missing value, is never kept: it
        is merged into *other* whatever its count, as no itemset holds it.

    Returns
    -------
    ItemSelection
    """
    if not 0 < min_support <= 1:
        raise ParameterError(f"min_support must be in (0, 1], got {min_support!r}")
    releasing = [j for j, size in enumerate(sizes) if size >= 2]
    noisy: dict[int, np.ndarray] = {}
    scale = 0.0
    if releasing:
        mechanism = DiscreteLaplaceHistogram(Fraction(epsilon) / len(releasing))
        scale = float(mechanism.scale)
        for j in releasing:  # L1 sensitivity 1 each (module notes); sequential composition
            counts = np.bincount(codes[:, j], minlength=sizes[j])
            noisy[j] = np.asarray(mechanism.release(accountant, f"items: {columns[j]}", counts), dtype=np.float64)
    n_hat = max(float(np.median([y.sum() for y in noisy.values()])), 1.0) if noisy else 1.0
    threshold = min_support * n_hat - math.sqrt(2.0) * scale
    kept, mapping, shares, compressed, counts = [], [], [], [], []
    for j, size in enumerate(sizes):
        y = noisy.get(j, np.full(size, n_hat))
        counts.append(y)
        items = size if n_items is None else int(n_items[j])
        keep = np.flatnonzero(y[:items] >= threshold)  # the missing value (code items, if any) is no item
        merged = np.setdiff1d(np.arange(size), keep)
        code = np.full(size, len(keep), dtype=np.int64)
        code[keep] = np.arange(len(keep))
        share = np.ones(size)
        if len(merged):
            smooth = np.maximum(y[merged], 0.0) + 1.0
            share[merged] = smooth / smooth.sum()
        kept.append(keep)
        mapping.append(code)
        shares.append(share)
        compressed.append(len(keep) + (1 if len(merged) else 0))
    return ItemSelection(kept, mapping, shares, compressed, n_hat, scale, counts)
