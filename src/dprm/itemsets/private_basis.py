"""A PrivBasis-style direct release: noisy histograms of a few item sets that cover the frequent itemsets.

``fit_private_estimator(private_method="basis", min_support=θ)``
(:mod:`dprm.itemsets.private_basis_fit`) releases no model of the rows: after the items that can
be frequent (:func:`~dprm.itemsets.private_items.release_items`), it releases the
co-occurrence counts of pairs of items, builds from them a few **bases** (sets of items
whose joint cells hold every itemset that can be frequent: Li, Qardaji, Su & Cao,
*PrivBasis*, VLDB 2012, a θ-basis set), releases each basis's full cell histogram, and
reads every itemset's support off the cells of the bases that contain it, with the noise
scale of that sum (an interval on each support).

This module makes the release (:func:`release_bases`: the split of ε and each release's
sensitivity, below); :mod:`dprm.itemsets.private_basis_pairs` holds the pairs' route of
``rule="pairs"`` (the pairs' release and its sensitivity, the Fréchet joins, the bases
chosen from the pairs' graph, and :func:`~dprm.itemsets.private_basis_pairs.pair_noise`,
which ``private_method="auto"`` reads), :mod:`dprm.itemsets.private_basis_graph` that
graph's cliques and the bases' merging, and :mod:`dprm.itemsets.private_basis_supports`
the reading of the released cells (every itemset's support and its noise, the heavy
cells, the listing: post-processing). Their public names are importable from here too.

The releases (sensitivities, under adding or removing one row)
--------------------------------------------------------------
The codes are the compressed ones of the item selection (per column, its kept items
``0..k-1`` and, if some category was merged, *other*); a column of one declared category
is an item of every row and needs no release.

1. **items** (:func:`item_share`: 20 % of ε with ``rule="one"``, 10 % with ``"pairs"``): every
   column's one-way histogram, L1 sensitivity 1 each (:mod:`dprm.itemsets.private_items`).

``rule="one"`` (:data:`BASES`, the default since the eighth round) then releases **one basis**:
the items whose noisy count reaches ``θ·n̂``, by decreasing noisy count, each added while
the basis has at most :data:`LARGE_BASIS_CELLS` cells (:func:`largest_basis`: a function of
step 1's output), its histogram released with the rest of ε (a row in exactly one cell: L1
sensitivity 1, scale ``1 / ε_bases``); no pairs. ``rule="pairs"`` (sixth and seventh rounds):

2. **pairs** (:data:`~dprm.itemsets.private_basis_pairs.PAIR_SHARE` of ε, only when the
   items do not fit in one basis of :data:`~dprm.itemsets.private_basis_pairs.ONE_BASIS_CELLS`
   cells and there are at least two item columns): the two-way histograms of the ``P`` pairs
   of item columns whose table is not decided by the Fréchet bound on step 1's output; a
   row falls in exactly one cell of each table (L1 sensitivity 1), each is released with
   ``ε_pairs / P``, and the ``P`` releases compose sequentially to ``ε_pairs`` (derived in
   :mod:`dprm.itemsets.private_basis_pairs`, beside their release; no table left: the share
   goes to the bases).
3. **bases** (the rest, ``ε_bases = ε − ε_items − ε_pairs``: 50 % of ε with pairs, 90 %
   without): ``k`` bases chosen from the released counts only (post-processing: with
   ``rule="one"`` the basis above; with ``"pairs"``, :mod:`dprm.itemsets.private_basis_pairs`,
   *Choosing the bases*).
   Basis ``B`` has, per column it touches, a domain of its items in that column plus
   *rest* (every other compressed code of the column, when some remain); its cells are the
   product of these domains, so a row falls in **exactly one cell of each basis**: each
   basis's histogram has L1 sensitivity 1, and the ``k`` histograms together ``k``. Each
   is released by a discrete Laplace vector of ``ε_bases / k`` (scale ``b = k / ε_bases``);
   sequential composition gives ``ε_bases``.

Whether pairs are released, ``k``, the bases and hence each release's share are functions
of the earlier noisy outputs only (adaptive sequential composition; the total is fixed at
ε before any row is read). The whole fit is ε-DP; ``tests/test_itemsets_private_basis.py``
checks each sensitivity on neighbouring datasets, the exact likelihood ratio of each
release and the ledger. Every itemset's support is then read off the released cells with
its noise (post-processing, :mod:`dprm.itemsets.private_basis_supports`).

The constants (``FRECHET_Z``, ``CONFIDENCE_Z``, ``PAIR_SHARE``, ``EDGE_Z``, ``RESOLUTION``,
``HEAVY_CELLS``, ``BASES``, ``ONE_ITEM_SHARE``, ``LARGE_BASIS_CELLS``) were compared on
mushroom, nmes, rwas, ibm, tic-tac-toe and vote; the figures are in ``docs/itemsets.md``
(sixth, seventh and eighth rounds).

Examples
--------
>>> import numpy as np
>>> from dprm.privacy import Accountant, SeededNoise
>>> rng = np.random.default_rng(0)
>>> a = rng.integers(0, 2, size=4000)
>>> codes = np.column_stack([a, np.where(rng.random(4000) < 0.9, a, 1 - a), rng.integers(0, 3, size=4000)])
>>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(1)))
>>> release = release_bases(codes, [2, 2, 3], 1.0, 0.3, acc, ["a", "b", "c"])
>>> acc.spent(), len(release.bases) >= 1
(Fraction(1, 1), True)
>>> found = {tuple(sorted(s.items)): s for s in release.frequent_itemsets()}
>>> pair = found[((0, 0), (1, 0))]     # a and b both their first category
>>> true = np.mean((codes[:, 0] == 0) & (codes[:, 1] == 0))
>>> bool(abs(pair.support - true) < 0.01), pair.support_sd < 0.01
(True, True)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from dprm.errors import ParameterError
from dprm.itemsets.private_basis_graph import (LARGE_BASIS_CELLS, MAX_BASIS_CELLS, MAX_CLIQUES, Item, _cells,
                                               grow_within, largest_basis, maximal_cliques, merge_bases)
from dprm.itemsets.private_basis_pairs import (BASIS_MAX_NOISE, EDGE_Z, FRECHET_Z, ONE_BASIS_CELLS, PAIR_SHARE,
                                               _choose_bases, _release_pairs, _undecided_pairs, frechet_joined,
                                               pair_noise)
from dprm.itemsets.private_basis_supports import (CONFIDENCE_Z, HEAVY_CELLS, RESOLUTION, Basis, BasisRelease,
                                                  BasisSupport, _combined_total, discrete_laplace_variance,
                                                  heavy_cell_estimates, heavy_cell_sums)
from dprm.itemsets.private_items import ITEM_SHARE, ItemSelection, release_items
from dprm.privacy import Accountant, DiscreteLaplaceHistogram

# The pairs' route, the graph and the reading of the released cells live in their own modules
# (module notes); their public names are named here too, where users import them.
__all__ = ["PAIR_SHARE", "MAX_BASIS_CELLS", "ONE_BASIS_CELLS", "MAX_CLIQUES", "CONFIDENCE_Z", "RESOLUTION", "EDGE_Z",
           "BASIS_MAX_NOISE", "Basis", "BasisRelease", "BasisSupport", "release_bases", "basis_table", "maximal_cliques",
           "merge_bases", "discrete_laplace_variance", "pair_noise", "FRECHET_Z", "frechet_joined", "HEAVY_CELLS",
           "heavy_cell_sums", "heavy_cell_estimates", "BASES", "LARGE_BASIS_CELLS", "largest_basis", "ONE_ITEM_SHARE",
           "item_share", "AUTO_NOISE", "basis_noise", "grow_within"]

#: How the bases are chosen by default: ``"one"`` (the largest basis of the likely frequent items,
#: eighth round) or ``"pairs"`` (pair tables, their graph's cliques merged; sixth and seventh rounds).
BASES = "one"
#: The share of ε that releases the items with ``rule="one"`` (:data:`ITEM_SHARE` with ``"pairs"``): the one
#: basis takes the items by their noisy counts' order, which 10 % of ε leaves too noisy (mushroom at ε = 1,
#: seeds 0 – 11: 3 seeds of 12 meet issue 30's bar with 10 %, 10 with 20 %; docs/itemsets.md, eighth round).
ONE_ITEM_SHARE = Fraction(1, 5)
#: What ``private_method="auto"`` predicts from the items' release (:func:`basis_noise`): ``"basis"``, the
#: noise of an item's count in the one basis :data:`BASES` would release where that basis holds every item
#: reaching ``θ·n̂`` (else the pairs' prediction; the default since session 44: biopsy at ε = 1, θ = 0.3 TPR
#: 0.32 → 0.97, every other table and θ measured on the same branch as before), or ``"pairs"``, the pairs'
#: route's noise (:func:`~dprm.itemsets.private_basis_pairs.pair_noise`; sessions 20 – 43, kept to reproduce
#: them). Predicting the basis's noise also where it leaves frequent items out lost (credit_data at θ = 0.2
#: 0.83 → 0.70; docs/itemsets.md, *Held-out tables from R*).
AUTO_NOISE = "basis"


def item_share(rule: str | None = None) -> Fraction:
    """The items' share of ε under ``rule`` (default :data:`BASES`): :data:`ONE_ITEM_SHARE` or :data:`ITEM_SHARE`.

    Examples
    --------
    >>> item_share("one"), item_share("pairs")
    (Fraction(1, 5), Fraction(1, 10))
    """
    return ONE_ITEM_SHARE if (BASES if rule is None else rule) == "one" else ITEM_SHARE


def basis_noise(selection: ItemSelection, sizes: Sequence[int], epsilon: float | Fraction, min_support: float,
                prediction: str | None = None) -> float:
    """The sd of an item's count summed in the bases to be released, over ``θ·n̂``: a function of the items' release.

    ``private_method="auto"`` releases the bases when this is at most :data:`BASIS_MAX_NOISE`,
    the chain otherwise. ``prediction`` (default :data:`AUTO_NOISE`): ``"basis"`` predicts the
    release that :data:`BASES` makes; with ``"one"`` the basis :func:`largest_basis` builds
    from the items' noisy counts (the items reaching ``θ·n̂``, within :data:`LARGE_BASIS_CELLS`
    cells); where it leaves out an item reaching ``θ·n̂`` (the itemsets with it would not be
    listed), the pairs' prediction below; otherwise an item of its narrowest column sums
    ``cells / w₁`` cells of scale
    ``1 / (ε·(1 − ONE_ITEM_SHARE))``: the largest sum a listed itemset reads (a frequent item
    that the basis cannot resolve is not listed); when fewer than two columns have an item there
    but two or more columns keep items, no pair can be read (``inf``: the chain). With
    ``BASES = "pairs"``, and with ``prediction="pairs"`` (the rule of sessions 20 – 43), it is
    :func:`~dprm.itemsets.private_basis_pairs.pair_noise`. Fewer than two columns with kept
    items: 0 (no pair to resolve). Reads ``selection`` (noisy counts, ``n̂``, kept items),
    ``sizes``, ``ε`` and ``θ``: deciding on it is post-processing of the items' release.

    Examples
    --------
    >>> from dprm.privacy import Accountant, SeededNoise
    >>> from dprm.itemsets.private_items import release_items
    >>> codes = np.zeros((1000, 3), dtype=np.int64)
    >>> acc = Accountant(1.0, SeededNoise(np.random.default_rng(0)))
    >>> selection = release_items(codes, [2, 2, 2], Fraction(1, 5), 0.3, acc, ["a", "b", "c"])
    >>> 0 < basis_noise(selection, [2, 2, 2], 1, 0.3, prediction="basis") < 0.1    # one basis of 8 cells, 4 summed
    True
    """
    prediction = AUTO_NOISE if prediction is None else prediction
    if prediction not in ("basis", "pairs"):
        raise ParameterError(f'prediction must be "basis" or "pairs", not {prediction!r}')
    if prediction == "pairs" or BASES == "pairs":
        return pair_noise(selection, sizes, epsilon, min_support)
    item_columns = [j for j, size in enumerate(sizes) if size >= 2 and len(selection.kept[j])]
    if len(item_columns) < 2:
        return 0.0
    items = [(j, int(v)) for j in item_columns for v in selection.kept_codes(j)]
    one_way = {(j, v): float(selection.counts[j][selection.kept[j][v]]) for j, v in items}
    bar = min_support * selection.n_hat
    basis = largest_basis(items, one_way, bar, selection.sizes)   # of the items reaching the bar, those that fit
    if len(basis) < sum(one_way[item] >= bar for item in items):  # some left out: the pairs' rule
        return pair_noise(selection, sizes, epsilon, min_support)
    per_column = Counter(j for j, _ in basis)
    if len(per_column) < 2:
        return math.inf
    widths = sorted(k + (k < selection.sizes[j]) for j, k in per_column.items())   # a column's items (+ rest)
    cells = _cells(basis, selection.sizes)
    scale = float(1 / (Fraction(epsilon) * (1 - ONE_ITEM_SHARE)))
    return math.sqrt(cells / widths[0] * discrete_laplace_variance(scale)) / (min_support * selection.n_hat)


def _release_basis_histograms(codes: np.ndarray, bases: list[set[Item]], sizes: Sequence[int],
                              columns: Sequence[str], epsilon: Fraction, accountant: Accountant) -> list[Basis]:
    """Step 3 of the module notes: each basis's full cell histogram, ``epsilon / k`` each (sensitivity 1 each)."""
    mechanism = DiscreteLaplaceHistogram(epsilon / len(bases))
    released = []
    for number, basis in enumerate(bases, start=1):
        basis_columns = tuple(sorted({j for j, _ in basis}))
        items = tuple(tuple(sorted(v for j2, v in basis if j2 == j)) for j in basis_columns)
        table = basis_table(codes, basis_columns, items, sizes)
        names = ", ".join(columns[j] for j in basis_columns)
        noisy = mechanism.release(accountant, f"bases: basis {number} ({names})", table)  # one cell per row
        released.append(Basis(basis_columns, items, noisy, float(mechanism.scale)))
    return released



def basis_table(codes: np.ndarray, basis_columns: Sequence[int], items: Sequence[Sequence[int]],
                sizes: Sequence[int]) -> np.ndarray:
    """The exact cell histogram of a basis: per column, its items' positions ``0..k-1`` and *rest* last.

    Every row falls in exactly one cell (its code in each column is an item of the basis
    or *rest*), so the table sums to the number of rows: L1 sensitivity 1.

    Examples
    --------
    >>> basis_table(np.array([[0, 1], [1, 1], [2, 0]]), [0, 1], [[0], [1]], [3, 2]).tolist()
    [[1, 0], [1, 1]]
    """
    shape = []
    cell = np.zeros(len(codes), dtype=np.int64)
    for j, its in zip(basis_columns, items):
        width = len(its) + (1 if len(its) < sizes[j] else 0)
        position = np.full(sizes[j], len(its), dtype=np.int64)  # rest
        position[list(its)] = np.arange(len(its))
        cell = cell * width + position[codes[:, j]]
        shape.append(width)
    return np.bincount(cell, minlength=math.prod(shape)).reshape(shape)



def release_bases(codes: np.ndarray, sizes: Sequence[int], epsilon: float | Fraction, min_support: float,
                  accountant: Accountant, columns: Sequence[str],
                  categories: Sequence[Sequence[object]] | None = None,
                  selection: ItemSelection | None = None, rule: str | None = None,
                  n_items: Sequence[int] | None = None) -> BasisRelease:
    """Release items, pairs and bases of ``codes`` with ``epsilon`` in all (module notes), charged to ``accountant``.

    Parameters
    ----------
    codes : numpy.ndarray of int, shape (n_rows, n_columns)
        The rows, each column's code in its public domain of ``sizes``.
    sizes : sequence of int
        Every column's number of declared states (its categories, and the missing value
        where its domain has one).
    epsilon : number
        The whole budget (items, pairs, bases; every release charged before it reads a row).
    min_support : float
        ``θ`` (public), in ``(0, 1]``.
    accountant : Accountant
    columns : sequence of str
        The columns' names (for the ledger).
    categories : sequence of sequence, optional
        Every column's declared categories (names of the listed items); default their codes.
    selection : ItemSelection, optional
        The items already released by the caller with ``epsilon · item_share(rule)``
        (:func:`~dprm.itemsets.private_items.release_items`, charged by the caller): then
        only the pairs and bases are released here, with the rest of ``epsilon``.
    rule : {"one", "pairs"}, optional
        How the bases are chosen (default :data:`BASES`): ``"one"``, the largest basis of the
        items whose noisy count reaches ``θ·n̂`` (no pairs); ``"pairs"``, the pairs' tables and
        their graph (the sixth and seventh rounds' release).
    n_items : sequence of int, optional
        Every column's number of categories (default ``sizes``): a code past them, the
        missing value, is no item (:func:`~dprm.itemsets.private_items.release_items`
        merges it into *rest*, so a row missing a column falls in that column's *rest*).

    Returns
    -------
    BasisRelease
    """
    rule = BASES if rule is None else rule
    if rule not in ("one", "pairs"):
        raise ParameterError(f'rule must be "one" or "pairs", not {rule!r}')
    eps = Fraction(epsilon)
    items_eps = eps * item_share(rule)
    if selection is None:
        selection = release_items(codes, sizes, items_eps, min_support, accountant, columns, n_items)
    compressed = selection.compress(codes)
    item_columns = [j for j, size in enumerate(sizes) if size >= 2 and len(selection.kept[j])]
    constant = [(j, 0) for j, size in enumerate(sizes) if size == 1]
    items = [(j, int(v)) for j in item_columns for v in selection.kept_codes(j)]
    totals = [(float(selection.counts[j].sum()), size, selection.scale) for j, size in enumerate(sizes) if size >= 2]
    # Pairs only when the items do not fit one basis: otherwise that basis holds every
    # itemset the items can form, and the pairs' budget goes to it (a choice made on the
    # items' noisy counts only).
    one_way = {(j, v): float(selection.counts[j][selection.kept[j][v]]) for j, v in items}
    one_basis = rule == "pairs" and _cells(set(items), selection.sizes) <= ONE_BASIS_CELLS
    pairs, joined = _undecided_pairs(item_columns, selection, min_support) if rule == "pairs" else ([], set())
    pairs_eps = eps * PAIR_SHARE if pairs and not one_basis else Fraction(0)
    pair_counts: dict[tuple[Item, Item], int] = {}
    pair_scale = None
    edges = n_cliques = 0
    if rule == "one":  # the largest basis of the items likely frequent, no pairs (module notes)
        basis = largest_basis(items, one_way, min_support * selection.n_hat, selection.sizes)
        chosen = [basis] if len({j for j, _ in basis}) >= 2 else []  # one column: no itemset of two items
    elif not one_basis and len(item_columns) >= 2:
        edge_at = min_support * selection.n_hat
        if pairs_eps:
            pair_counts, pair_scale, pair_totals = _release_pairs(compressed, selection, columns, pairs, pairs_eps,
                                                                  accountant)
            totals += [(t, cells, pair_scale) for t, cells in pair_totals]
            edge_at -= EDGE_Z * math.sqrt(discrete_laplace_variance(pair_scale))
        chosen, edges, n_cliques = _choose_bases(items, pair_counts, edge_at, one_way, selection.sizes, joined)
    else:
        chosen = [set(items)] if items else []
    bases_eps = eps - items_eps - pairs_eps
    if chosen:
        bases = _release_basis_histograms(compressed, chosen, selection.sizes, columns, bases_eps, accountant)
        totals += [(float(b.noisy.sum()), int(b.noisy.size), b.scale) for b in bases]
    else:  # no two items joined (or no item): nothing to release; the ledger still adds up to epsilon
        accountant.charge(bases_eps, "bases: unspent (no basis of two items or more)", "none")
        bases = []
    n_hat = _combined_total(totals) if totals else selection.n_hat
    names = [(str(c), list(categories[j]) if categories is not None else list(range(sizes[j])))
             for j, c in enumerate(columns)]
    return BasisRelease(selection, bases, constant, float(min_support), pair_scale, edges, n_cliques, names,
                        pair_counts, n_hat)
