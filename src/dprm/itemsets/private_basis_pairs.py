"""The pairs' route of a basis release (``rule="pairs"``): Fréchet joins, pair tables, bases from their graph.

With ``rule="pairs"`` (the sixth and seventh rounds' release;
:func:`~dprm.itemsets.private_basis.release_bases`, whose notes give the whole release
and its split of ε), the bases are chosen from the noisy counts of pairs of items: this
module releases those pairs (step 2 of the release, below) and builds the bases from them
(post-processing, below; the graph's cliques and merges are
:mod:`dprm.itemsets.private_basis_graph`'s). :func:`pair_noise`, the noise of an item
pair's count on this route or on the one basis over every item, is what
``private_method="auto"`` reads to choose between the bases and the chain
(:mod:`dprm.itemsets.private_chain`).

The pairs' release (step 2: sensitivity and budget)
---------------------------------------------------
**pairs** (:data:`PAIR_SHARE` of ε, only when the items do not fit in one basis of
:data:`ONE_BASIS_CELLS` cells and there are at least two item columns): for each of
the ``P`` pairs of columns holding a kept item, the two-way histogram over the two
compressed domains, except the pairs of columns all of whose item pairs are frequent by
the Fréchet bound on the items' noisy counts (``ŝ_p + ŝ_q − 1 ≥ θ +`` :data:`FRECHET_Z`
sd, :func:`frechet_joined`: joined without a release; which tables are released is a
function of step 1's output, and ``P`` counts the released ones; no table left: the
share goes to the bases). A row has one value per column, so it falls in exactly one cell of
each pair's table: adding or removing it changes that table by exactly 1 in L1. Each
table is one :class:`~dprm.privacy.DiscreteLaplaceHistogram` of ``ε_pairs / P``
(sensitivity 1, :func:`_release_pairs`); the ``P`` releases read every row, so they compose
sequentially to ``ε_pairs`` (equivalently: the ``P`` tables together have L1 sensitivity ``P``).

Choosing the bases (post-processing)
------------------------------------
Without pairs the one basis is every item. With pairs, two items of different columns are
joined when their pair's noisy count reaches ``θ·n̂ − EDGE_Z·sd`` or the Fréchet bound
joined them (step 2) (``n̂`` the noisy number of
rows of the item selection; :data:`EDGE_Z` is 0): a frequent itemset is a clique of this
graph up to the noise. The maximal cliques (Bron–Kerbosch with pivoting, at most
:data:`~dprm.itemsets.private_basis_graph.MAX_CLIQUES`) are the candidate bases; a clique of
more than :data:`~dprm.itemsets.private_basis_graph.MAX_BASIS_CELLS` cells keeps its items of
largest noisy one-way count (:func:`_choose_bases`). Bases are then merged
(:func:`~dprm.itemsets.private_basis_graph.merge_bases`) while a union has at most
:data:`~dprm.itemsets.private_basis_graph.MAX_BASIS_CELLS` cells: fewer bases
mean less noise per cell (``b = k / ε_bases``), larger ones more cells summed per support.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from dprm.itemsets.private_basis_graph import MAX_BASIS_CELLS, Item, _cells, grow_within, maximal_cliques, merge_bases
from dprm.itemsets.private_basis_supports import discrete_laplace_variance
from dprm.itemsets.private_items import ITEM_SHARE, ItemSelection
from dprm.privacy import Accountant, DiscreteLaplaceHistogram

__all__ = ["PAIR_SHARE", "ONE_BASIS_CELLS", "EDGE_Z", "FRECHET_Z", "BASIS_MAX_NOISE", "frechet_joined", "pair_noise"]

#: The share of ε that releases the pairs' two-way histograms (when there are pairs).
PAIR_SHARE = Fraction(2, 5)
#: Most cells of the one basis over every item, released without pairs when the items fit in it.
ONE_BASIS_CELLS = 4096
#: Margin, in standard deviations of a pair's noisy count, below ``θ·n̂`` at which two items are joined.
EDGE_Z = 0.0
#: Margin, in standard deviations of the sum of two items' noisy supports, by which the
#: Fréchet bound ``ŝ_p + ŝ_q − 1`` must clear ``θ`` for the pair to be joined without a
#: release of its table (None: every pair table is released).
FRECHET_Z: float | None = 3.0
#: Largest :func:`pair_noise` at which ``private_method="auto"`` releases bases (the chain otherwise).
BASIS_MAX_NOISE = 0.35


def pair_noise(selection: ItemSelection, sizes: Sequence[int], epsilon: float | Fraction, min_support: float) -> float:
    """The sd of an item pair's count on the basis path, over ``θ·n̂``: a function of the released items only.

    With pairs (the kept items do not fit one basis of :data:`ONE_BASIS_CELLS` cells): one
    pair table's cell, scale ``P / (ε·PAIR_SHARE)`` for the ``P`` pairs of item columns whose
    table is released (those :func:`frechet_joined` leaves undecided). Without:
    the sum of the one basis's cells that hold a pair of items of its two narrowest columns
    (``cells / (w₁·w₂)`` cells of scale ``1 / (ε·(1 − ITEM_SHARE))``). Fewer than two item
    columns: 0 (no pair to resolve). It reads ``selection`` (noisy ``n̂`` and kept items),
    ``sizes``, ``ε`` and ``θ`` (public): deciding on it is post-processing of the items'
    release. ``private_method="auto"`` releases bases when it is at most
    :data:`BASIS_MAX_NOISE` (:mod:`dprm.itemsets.private_chain`).

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> from dprm.itemsets.private_items import release_items
    >>> codes = np.zeros((1000, 3), dtype=np.int64)
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> selection = release_items(codes, [2, 2, 2], Fraction(1, 10), 0.3, acc, ["a", "b", "c"])
    >>> 0 < pair_noise(selection, [2, 2, 2], 1, 0.3) < 0.1    # one basis of 8 cells, 2 summed
    True
    """
    eps = Fraction(epsilon)
    item_columns = [j for j, size in enumerate(sizes) if size >= 2 and len(selection.kept[j])]
    if len(item_columns) < 2:
        return 0.0
    items = {(j, v) for j in item_columns for v in selection.kept_codes(j)}
    cells = _cells(items, selection.sizes)
    if cells <= ONE_BASIS_CELLS:
        widths = sorted(len(selection.kept[j]) + (1 if len(selection.kept[j]) < selection.sizes[j] else 0)
                        for j in item_columns)
        var = cells / (widths[0] * widths[1]) * discrete_laplace_variance(float(1 / (eps * (1 - ITEM_SHARE))))
    else:
        pairs = len(_undecided_pairs(item_columns, selection, min_support)[0])
        if not pairs:  # every pair joined by its items' counts: no pair to resolve
            return 0.0
        var = discrete_laplace_variance(float(pairs / (eps * PAIR_SHARE)))
    return math.sqrt(var) / (min_support * selection.n_hat)



def frechet_joined(items: Sequence[Item], selection: ItemSelection, min_support: float,
                   z: float | None = None) -> set[tuple[Item, Item]]:
    """Pairs of items of two columns frequent by the Fréchet bound on their released one-way counts.

    ``count(p ∧ q) ≥ count(p) + count(q) − n`` for every table: a pair whose noisy supports
    ``ŝ = y / n̂`` give ``ŝ_p + ŝ_q − 1 ≥ θ + z·√2·σ/n̂`` (``σ`` the items' noise sd) is joined
    without measuring it. Post-processing of the items' release.

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> from dprm.itemsets.private_items import release_items
    >>> codes = np.column_stack([np.zeros(2000, dtype=int), np.r_[np.zeros(1900, dtype=int), np.ones(100, dtype=int)],
    ...                          np.r_[np.zeros(1000, dtype=int), np.ones(1000, dtype=int)]])
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> selection = release_items(codes, [2, 2, 2], 0.1, 0.3, acc, ["a", "b", "c"])
    >>> sorted(frechet_joined([(0, 0), (1, 0), (2, 0), (2, 1)], selection, 0.3, 2.0))
    [((0, 0), (1, 0)), ((0, 0), (2, 0)), ((0, 0), (2, 1)), ((1, 0), (2, 0)), ((1, 0), (2, 1))]
    """
    z = FRECHET_Z if z is None else z
    n_hat = selection.n_hat
    share = {(j, v): float(selection.counts[j][selection.kept[j][v]]) / n_hat for j, v in items}
    margin = z * math.sqrt(2.0 * discrete_laplace_variance(selection.scale)) / n_hat if selection.scale > 0 else 0.0
    ordered = sorted(set(items))
    first, second = _pairs_reaching(np.array([share[item] for item in ordered], dtype=np.float64),
                                    np.array([j for j, _ in ordered], dtype=np.int64), min_support + margin)
    return {(ordered[a], ordered[b]) for a, b in zip(first.tolist(), second.tolist())}


def _pairs_reaching(shares: np.ndarray, column: np.ndarray, bar: float) -> tuple[np.ndarray, np.ndarray]:
    """The pairs ``a < b`` of two columns with ``shares[a] + shares[b] - 1.0 >= bar``, in the order of
    ``itertools.combinations`` (so a set of them is built as the pairs' loop built it).

    The test is the loop's floating-point expression; it grows with ``shares[b]`` (rounding
    is monotone), so each ``a``'s partners are the shares from a bound up, found by a
    binary search over the sorted shares: the pairs that pass, not all the pairs (a
    column of 100,000 declared categories kept by the noise: 30,000 items, 4.5 · 10⁸ pairs,
    ten minutes in the loop).

    Examples
    --------
    >>> [a.tolist() for a in _pairs_reaching(np.array([0.9, 0.5, 0.45, 0.2]), np.array([0, 1, 1, 2]), 0.3)]
    [[0, 0], [1, 2]]
    """
    n = len(shares)
    if n < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.argsort(shares, kind="stable")
    ranked = shares[order]
    low, high = np.zeros(n, dtype=np.int64), np.full(n, n, dtype=np.int64)  # first rank whose share passes
    while (open_ := low < high).any():
        middle = (low + high) // 2  # < n while open
        passes = shares + ranked[np.minimum(middle, n - 1)] - 1.0 >= bar
        high = np.where(open_ & passes, middle, high)
        low = np.where(open_ & ~passes, middle + 1, low)
    counts = n - low
    a = np.repeat(np.arange(n), counts)
    b = order[np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts) + np.repeat(low, counts)]
    keep = (a < b) & (column[a] != column[b])
    a, b = a[keep], b[keep]
    by = np.lexsort((b, a))
    return a[by], b[by]



def _undecided_pairs(item_columns: Sequence[int], selection: ItemSelection, min_support: float
                     ) -> tuple[list[tuple[int, int]], set[tuple[Item, Item]]]:
    """The pairs of item columns whose table is released (some pair of their items not joined by
    :func:`frechet_joined`), and the pairs so joined (none when :data:`FRECHET_Z` is None)."""
    items = [(j, v) for j in item_columns for v in selection.kept_codes(j)]
    joined = frechet_joined(items, selection, min_support) if FRECHET_Z is not None else set()
    pairs = [(a, c) for a, c in itertools.combinations(item_columns, 2)
             if any(((a, va), (c, vc)) not in joined for va in selection.kept_codes(a) for vc in selection.kept_codes(c))]
    return pairs, joined



def _release_pairs(codes: np.ndarray, selection: ItemSelection, columns: Sequence[str],
                   pairs: Sequence[tuple[int, int]], epsilon: Fraction, accountant: Accountant
                   ) -> tuple[dict[tuple[Item, Item], int], float, list[tuple[float, int]]]:
    """Step 2 of the module notes: the two-way histogram of each pair of item columns in ``pairs`` (sensitivity 1 each).

    Returns the kept item pairs' noisy counts, the noise scale, and each table's noisy
    total with its number of cells (for :func:`~dprm.itemsets.private_basis_supports._combined_total`).
    """
    mechanism = DiscreteLaplaceHistogram(epsilon / len(pairs))
    counts: dict[tuple[Item, Item], int] = {}
    totals: list[tuple[float, int]] = []
    for a, c in pairs:  # one row, one cell of each table: L1 sensitivity 1; P tables compose to epsilon
        sa, sc = selection.sizes[a], selection.sizes[c]
        table = np.bincount(codes[:, a] * sc + codes[:, c], minlength=sa * sc).reshape(sa, sc)
        noisy = mechanism.release(accountant, f"pairs: {columns[a]} x {columns[c]}", table)
        totals.append((float(noisy.sum()), int(noisy.size)))
        for va in selection.kept_codes(a):
            for vc in selection.kept_codes(c):
                counts[((a, va), (c, vc))] = int(noisy[va, vc])
    return counts, float(mechanism.scale), totals



def _choose_bases(items: list[Item], pair_counts: dict[tuple[Item, Item], int], threshold: float,
                  one_way: dict[Item, float], sizes: Sequence[int], joined: set[tuple[Item, Item]] | None = None
                  ) -> tuple[list[set[Item]], int, int]:
    """The bases (module notes: graph of joined pairs, maximal cliques, greedy merge); edges and cliques found.

    ``joined``: pairs joined without a count (:func:`frechet_joined`).
    """
    index = {item: i for i, item in enumerate(items)}
    adjacency: list[set[int]] = [set() for _ in items]
    edges = 0
    decided = {pair: math.inf for pair in joined or ()}
    for (p, q), count in {**pair_counts, **decided}.items():
        if count >= threshold:
            adjacency[index[p]].add(index[q])
            adjacency[index[q]].add(index[p])
            edges += 1
    cliques = maximal_cliques(len(items), adjacency)
    bases = []
    for clique in cliques:
        if len(clique) < 2:  # a lone item: its one-way count estimates it; a basis would cost a share of the budget
            continue
        members = sorted((items[i] for i in clique), key=lambda it: -one_way[it])
        bases.append(grow_within(members, sizes, MAX_BASIS_CELLS))  # a clique too large: its largest counts
    return merge_bases(bases, sizes), edges, len(cliques)

