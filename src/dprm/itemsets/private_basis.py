"""A PrivBasis-style direct release: noisy histograms of a few item sets that cover the frequent itemsets.

``fit_private_estimator(private_method="basis", min_support=θ)``
(:mod:`dprm.itemsets.private`) releases no model of the rows: after the items that can
be frequent (:func:`~dprm.itemsets.private_items.release_items`), it releases the
co-occurrence counts of pairs of items, builds from them a few **bases** (sets of items
whose joint cells hold every itemset that can be frequent: Li, Qardaji, Su & Cao,
*PrivBasis*, VLDB 2012, a θ-basis set), releases each basis's full cell histogram, and
reads every itemset's support off the cells of the bases that contain it, with the noise
scale of that sum (an interval on each support).

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

2. **pairs** (:data:`PAIR_SHARE` of ε, only when the items do not fit in one basis of
   :data:`ONE_BASIS_CELLS` cells and there are at least two item columns): for each of
   the ``P`` pairs of columns holding a kept item, the two-way histogram over the two
   compressed domains, except the pairs of columns all of whose item pairs are frequent by
   the Fréchet bound on the items' noisy counts (``ŝ_p + ŝ_q − 1 ≥ θ +`` :data:`FRECHET_Z`
   sd, :func:`frechet_joined`: joined without a release; which tables are released is a
   function of step 1's output, and ``P`` counts the released ones; no table left: the
   share goes to the bases). A row has one value per column, so it falls in exactly one cell of
   each pair's table: adding or removing it changes that table by exactly 1 in L1. Each
   table is one :class:`~dprm.privacy.DiscreteLaplaceHistogram` of ``ε_pairs / P``
   (sensitivity 1); the ``P`` releases read every row, so they compose sequentially to
   ``ε_pairs`` (equivalently: the ``P`` tables together have L1 sensitivity ``P``).
3. **bases** (the rest, ``ε_bases = ε − ε_items − ε_pairs``: 50 % of ε with pairs, 90 %
   without): ``k`` bases chosen from the released counts only (post-processing, below).
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
release and the ledger.

Choosing the bases (post-processing)
------------------------------------
Without pairs the one basis is every item. With pairs, two items of different columns are
joined when their pair's noisy count reaches ``θ·n̂ − EDGE_Z·sd`` or the Fréchet bound
joined them (step 2) (``n̂`` the noisy number of
rows of the item selection; :data:`EDGE_Z` is 0): a frequent itemset is a clique of this
graph up to the noise. The maximal cliques (Bron–Kerbosch with pivoting, at most
:data:`MAX_CLIQUES`) are the candidate bases; a clique of more than :data:`MAX_BASIS_CELLS`
cells keeps its items of largest noisy one-way count. Bases are then merged
(:func:`merge_bases`) while a union has at most :data:`MAX_BASIS_CELLS` cells: fewer bases
mean less noise per cell (``b = k / ε_bases``), larger ones more cells summed per support.

Supports and their noise (post-processing)
------------------------------------------
Every sub-itemset of a basis (one item or none per column) has as noisy count the sum of
the cells that hold it, computed for all at once by appending to each axis its sum (the
"column absent" index). The sum of ``c`` cells carries noise of variance
``c · σ²``, ``σ² = 2a / (1 − a)²`` (``a = e^{−1/b}``, the discrete Laplace variance). An
itemset held by several bases gets the inverse-variance mean of their sums, and of the
items' one-way and the pairs' noisy counts when it is a single item or a pair, with the
variance ``1 / Σ 1/v``; its standard deviation (in rows and as a support, over ``n̂``) is
reported with it. ``n̂`` is the inverse-variance mean of every released histogram's total
(each an unbiased count of the rows). An itemset is listed when its noisy count is at
least ``θ·n̂ + z·sd`` (``z`` = :data:`CONFIDENCE_Z`, a margin against noisy short itemsets,
whose sums run over many cells) and its sd is at most :data:`RESOLUTION` ``· θ·n̂`` (a
support the release cannot resolve is not listed on its own: without this limit, at small
``n·ε`` one noisy long itemset in a hundred of thousands clears the margin and its closure
lists thousands of false ones), and with it every subset of it (supports are
anti-monotone, and a long itemset's sum runs over few cells, so its estimate is the more
precise one: the subsets are listed with their own estimates, flagged ``by_closure``);
items of one-category columns are added to every listed itemset.

An itemset is also listed when its **heavy cells** reach ``θ·n̂`` (:func:`heavy_cell_sums`):
a basis's cells of at least :data:`HEAVY_CELLS` noise scales, the others read as empty,
summed and less ``z`` sd of their noise. The plain sum of a mid-size itemset runs over
hundreds of cells, mostly empty on tables like mushroom (420 distinct rows), and carries
all their noise; the heavy cells carry only their own (an empty cell passes ``6b`` with
probability ``a⁶ᵇ/(1 + a) ≈ e⁻⁶/2``, about 5 of a 4,096-cell basis, 40 of a 32,768-cell
one, each ≈ ``7b`` rows), and the light true cells they drop make the sum lower, not
higher. Skipped for a basis whose ``6b`` exceeds the resolution limit. An itemset listed
by this rule alone is reported with the estimate that listed it: the heavy cells' sum
(:func:`heavy_cell_estimates`, at least ``θ·n̂`` since its lower bound is) and the sd of
their noise. Its plain sum may be far below θ (0.19 and 0.0 on vote at ε = 1 with a sd
of 0.36), so reporting the plain sum beside "support >= θ" contradicted the listing; and
on the itemsets the heavy cells alone list, the heavy sum is the closer estimate (RMSE
against the true support 0.004 against 0.012 on mushroom, seeds 0 – 3; 0.10 against 0.29
on vote, seeds 0 – 7, ε = 1, θ = 0.3). Post-processing of the released cells, as the plain
sums are: the privacy is unchanged (measured in ``docs/itemsets.md``, seventh round).

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

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from dprm.errors import ParameterError
from dprm.itemsets.private_basis_graph import (LARGE_BASIS_CELLS, MAX_BASIS_CELLS, MAX_CLIQUES, Item, _cells,
                                               largest_basis, maximal_cliques, merge_bases)
from dprm.itemsets.private_items import ITEM_SHARE, ItemSelection, release_items
from dprm.privacy import Accountant, DiscreteLaplaceHistogram

__all__ = ["PAIR_SHARE", "MAX_BASIS_CELLS", "ONE_BASIS_CELLS", "MAX_CLIQUES", "CONFIDENCE_Z", "RESOLUTION", "EDGE_Z",
           "BASIS_MAX_NOISE", "Basis", "BasisRelease", "BasisSupport", "release_bases", "basis_table", "maximal_cliques",
           "merge_bases", "discrete_laplace_variance", "pair_noise", "FRECHET_Z", "frechet_joined", "HEAVY_CELLS",
           "heavy_cell_sums", "heavy_cell_estimates", "BASES", "LARGE_BASIS_CELLS", "largest_basis", "ONE_ITEM_SHARE",
           "item_share"]

#: The share of ε that releases the pairs' two-way histograms (when there are pairs).
PAIR_SHARE = Fraction(2, 5)
#: Most cells of the one basis over every item, released without pairs when the items fit in it.
ONE_BASIS_CELLS = 4096
#: Margin, in standard deviations of a pair's noisy count, below ``θ·n̂`` at which two items are joined.
EDGE_Z = 0.0
#: Margin, in standard deviations of its noisy count, an itemset needs above ``θ·n̂``.
CONFIDENCE_Z = 1.0
#: Largest standard deviation of an itemset's noisy count, relative to ``θ·n̂``, for it to be
#: listed on its own (it may still be listed as a subset of a listed itemset).
RESOLUTION = 0.2
#: Margin, in standard deviations of the sum of two items' noisy supports, by which the
#: Fréchet bound ``ŝ_p + ŝ_q − 1`` must clear ``θ`` for the pair to be joined without a
#: release of its table (None: every pair table is released).
FRECHET_Z: float | None = 3.0
#: Cells at or above this many noise scales are a basis's heavy cells (:func:`heavy_cell_sums`);
#: None: only the plain sums list itemsets.
HEAVY_CELLS: float | None = 6.0
#: Largest :func:`pair_noise` at which ``private_method="auto"`` releases bases (the chain otherwise).
BASIS_MAX_NOISE = 0.35
#: How the bases are chosen by default: ``"one"`` (the largest basis of the likely frequent items,
#: eighth round) or ``"pairs"`` (pair tables, their graph's cliques merged; sixth and seventh rounds).
BASES = "one"
#: The share of ε that releases the items with ``rule="one"`` (:data:`ITEM_SHARE` with ``"pairs"``): the one
#: basis takes the items by their noisy counts' order, which 10 % of ε leaves too noisy (mushroom at ε = 1,
#: seeds 0 – 11: 3 seeds of 12 meet issue 30's bar with 10 %, 10 with 20 %; docs/itemsets.md, eighth round).
ONE_ITEM_SHARE = Fraction(1, 5)


def item_share(rule: str | None = None) -> Fraction:
    """The items' share of ε under ``rule`` (default :data:`BASES`): :data:`ONE_ITEM_SHARE` or :data:`ITEM_SHARE`.

    Examples
    --------
    >>> item_share("one"), item_share("pairs")
    (Fraction(1, 5), Fraction(1, 10))
    """
    return ONE_ITEM_SHARE if (BASES if rule is None else rule) == "one" else ITEM_SHARE



def discrete_laplace_variance(scale: float) -> float:
    """Variance of discrete Laplace noise ``P(z) ∝ exp(−|z|/scale)``: ``2a / (1 − a)²``, ``a = e^{−1/scale}``.

    Examples
    --------
    >>> round(discrete_laplace_variance(10.0) / (2 * 10.0**2), 3)   # close to the continuous 2b²
    0.999
    >>> discrete_laplace_variance(1e-4), discrete_laplace_variance(1e30) > 1e59   # ε = 10,000 and 1e-30
    (1e-12, True)
    """
    a = math.exp(-1.0 / scale)  # 0 for a scale below about 1/745 (ε of about 750 and more): every draw is 0
    # expm1: 1 − a exact for a scale of 1e30 too; at least 1e-12 rows², so that inverse-variance weights stay finite
    return max(2.0 * a / math.expm1(-1.0 / scale) ** 2, 1e-12)


@dataclass(frozen=True)
class Basis:
    """One released basis: its items, per column its domain, and its noisy cells.

    Attributes
    ----------
    columns : tuple of int
        The columns it touches, ascending (axes of ``noisy``).
    items : tuple of tuple of int
        Per column, the compressed codes of its items (axis positions ``0..k-1``; a last
        position *rest* when the column has other codes).
    noisy : numpy.ndarray
        The released histogram (int64), one axis per column.
    scale : float
        Its discrete Laplace noise scale (rows).
    """

    columns: tuple[int, ...]
    items: tuple[tuple[int, ...], ...]
    noisy: np.ndarray
    scale: float


@dataclass(frozen=True)
class BasisSupport:
    """One itemset's estimate: ``items`` ((column, compressed code) pairs), count and support with their sd.

    ``by_closure``: listed as a subset of a listed itemset (its own estimate may be below θ);
    ``by_heavy_cells``: listed by the heavy cells alone, ``count`` their sum and ``sd`` their
    noise's (:func:`heavy_cell_estimates`), not the plain sum of every cell.
    """

    items: frozenset[Item]
    count: float
    sd: float
    support: float
    support_sd: float
    by_closure: bool = False
    by_heavy_cells: bool = False


@dataclass
class BasisRelease:
    """What :func:`release_bases` returns (every field a function of noisy releases).

    Attributes
    ----------
    selection : ItemSelection
        The released items (:func:`~dprm.itemsets.private_items.release_items`).
    bases : list of Basis
    constant_items : list of tuple of int
        Items of one-category columns (in every row).
    min_support : float
        The θ the bases were built for (public).
    pair_scale : float or None
        Noise scale of the pairs' cells (None without pairs).
    n_edges : int
        Joined item pairs.
    n_cliques : int
        Maximal cliques found.
    names : list of (str, list)
        Per column, its name and declared categories (for :meth:`named_itemsets`).
    pair_counts : dict
        The noisy count of every pair of kept items of two columns (step 2).
    n_hat : float
        The noisy number of rows: the inverse-variance mean of every released
        histogram's total (:func:`_combined_total`); supports are counts over it.
    """

    selection: ItemSelection
    bases: list[Basis]
    constant_items: list[Item]
    min_support: float
    pair_scale: float | None
    n_edges: int = 0
    n_cliques: int = 0
    names: list[tuple[str, list[object]]] = field(default_factory=list)
    pair_counts: dict[tuple[Item, Item], int] = field(default_factory=dict)
    n_hat: float = 1.0
    _estimates: dict[frozenset[Item], tuple[float, float]] | None = field(default=None, repr=False)

    def estimates(self) -> dict[frozenset[Item], tuple[float, float]]:
        """Every sub-itemset of a basis: (noisy count, variance), inverse-variance mean over bases."""
        if self._estimates is None:
            estimates = _basis_estimates(self.bases)
            singles = {frozenset([(j, v)]): float(self.selection.counts[j][self.selection.kept[j][v]])
                       for j in range(len(self.selection.sizes)) if len(self.selection.counts[j]) >= 2
                       for v in self.selection.kept_codes(j)}
            _combine(estimates, singles, discrete_laplace_variance(self.selection.scale)) if singles else None
            if self.pair_scale is not None:
                pairs = {frozenset(pair): float(count) for pair, count in self.pair_counts.items()}
                _combine(estimates, pairs, discrete_laplace_variance(self.pair_scale))
            self._estimates = estimates
        return self._estimates

    def frequent_itemsets(self, min_support: float | None = None, *, z: float = CONFIDENCE_Z,
                          resolution: float | None = RESOLUTION) -> list[BasisSupport]:
        """The itemsets listed at ``min_support`` (default: the θ of the release), see the module notes.

        ``resolution``: an itemset whose count's sd exceeds ``resolution · θ·n̂`` is not listed on
        its own (None: no such limit).
        """
        theta = self.min_support if min_support is None else float(min_support)
        n_hat = self.n_hat
        estimates = self.estimates()
        widest = math.inf if resolution is None else resolution * theta * n_hat
        listed = {key for key, (count, var) in estimates.items()
                  if count >= theta * n_hat + z * math.sqrt(var) and math.sqrt(var) <= widest}
        by_heavy: dict[frozenset[Item], tuple[float, float]] = {}
        if HEAVY_CELLS is not None:  # the heavy cells' sums (module notes): a second listing rule
            heavy = heavy_cell_sums(self.bases, HEAVY_CELLS, z, widest, at_least=theta * n_hat)
            alone = {key for key, lower in heavy.items() if lower >= theta * n_hat} - listed
            by_heavy = heavy_cell_estimates(self.bases, HEAVY_CELLS, alone, widest)
            listed |= alone
        closed = set(listed)
        for key in listed:
            members = sorted(key)
            for r in range(1, len(members)):
                closed.update(frozenset(sub) for sub in itertools.combinations(members, r))
        constant = frozenset(self.constant_items)
        out = []
        for key in closed:
            count, var = by_heavy.get(key, estimates[key])  # the estimate that listed it (module notes)
            sd = math.sqrt(var)
            for extra in _subsets(constant):
                out.append(BasisSupport(key | extra, count, sd, count / n_hat, sd / n_hat, key not in listed,
                                        key in by_heavy))
        if constant and theta <= 1.0:
            for extra in _subsets(constant):
                if extra:  # the constant items alone: in every row, support 1 (public)
                    out.append(BasisSupport(extra, n_hat, 0.0, 1.0, 0.0, False))
        return out


    def named_itemsets(self, min_support: float | None = None, *, z: float = CONFIDENCE_Z,
                       resolution: float | None = RESOLUTION, level: float = 0.95) -> list[dict[str, object]]:
        """:meth:`frequent_itemsets` with the declared categories' names and a normal interval at ``level``.

        Each: ``{"items": {column: category}, "support", "support_sd", "interval", "by_closure"}``;
        the interval is ``support ± z_level · support_sd`` (the noise of the cells summed;
        the noise of ``n̂``, a far smaller relative error, is left out).
        """
        from statistics import NormalDist

        half = NormalDist().inv_cdf(0.5 + level / 2)
        out = []
        for s in self.frequent_itemsets(min_support, z=z, resolution=resolution):
            named = {self.names[j][0]: self.names[j][1][int(self.selection.kept[j][v])] for j, v in sorted(s.items)}
            out.append({"items": named, "support": s.support, "support_sd": s.support_sd,
                        "interval": (s.support - half * s.support_sd, s.support + half * s.support_sd),
                        "by_closure": s.by_closure})
        return out


def _subsets(items: frozenset[Item]) -> list[frozenset[Item]]:
    members = sorted(items)
    return [frozenset(c) for r in range(len(members) + 1) for c in itertools.combinations(members, r)]


def _combine(estimates: dict[frozenset[Item], tuple[float, float]], counts: dict[frozenset[Item], float],
             var: float) -> None:
    """Fold ``counts`` (each of variance ``var``) into ``estimates`` by inverse-variance weighting (in place)."""
    for key, count in counts.items():
        if key in estimates:
            c0, v0 = estimates[key]
            w = 1.0 / v0 + 1.0 / var
            estimates[key] = ((c0 / v0 + count / var) / w, 1.0 / w)
        else:
            estimates[key] = (count, var)


def _basis_estimates(bases: Sequence[Basis]) -> dict[frozenset[Item], tuple[float, float]]:
    """Sum of cells and its variance for every sub-itemset of every basis, combined by inverse variance."""
    out: dict[frozenset[Item], tuple[float, float]] = {}
    for basis in bases:
        marg = basis.noisy.astype(np.float64)
        cells = np.ones(marg.shape)
        for axis in range(marg.ndim):  # append the axis's sum: index -1 = "column absent"
            marg = np.concatenate([marg, marg.sum(axis=axis, keepdims=True)], axis=axis)
            cells = np.concatenate([cells, cells.sum(axis=axis, keepdims=True)], axis=axis)
        var1 = discrete_laplace_variance(basis.scale)
        options = [list(range(len(items))) + [marg.shape[a] - 1] for a, items in enumerate(basis.items)]
        for index in itertools.product(*options):
            key = frozenset((basis.columns[a], basis.items[a][i]) for a, i in enumerate(index)
                            if i < len(basis.items[a]))
            if not key:
                continue
            count, var = float(marg[index]), float(cells[index]) * var1
            if key in out:
                c0, v0 = out[key]
                w = 1.0 / v0 + 1.0 / var
                out[key] = ((c0 / v0 + count / var) / w, 1.0 / w)
            else:
                out[key] = (count, var)
    return out


def heavy_cell_sums(bases: Sequence[Basis], threshold: float, z: float, widest: float = math.inf,
                    at_least: float = -math.inf) -> dict[frozenset[Item], float]:
    """Every sub-itemset of a basis: the sum of its cells of at least ``threshold · b``, less ``z`` sd of their noise.

    A basis's noisy cell ``y ≥ threshold · b`` (``b`` its noise scale) is a heavy cell; the
    rest are read as empty. For an itemset, ``Σ_heavy y − z·√(h·σ²)`` over its ``h`` heavy
    cells, the mean over the bases that hold it; a basis whose threshold ``threshold · b``
    exceeds ``widest`` (rows) is skipped (it cannot resolve a support). Post-processing.
    ``at_least``: only the itemsets whose value reaches it in some basis (each still the mean
    over every basis holding it), found from the arrays without enumerating the others.

    Examples
    --------
    >>> basis = Basis((0, 1), ((0,), (0,)), np.array([[500, 3], [-2, 400]]), 10.0)
    >>> sums = heavy_cell_sums([basis], 6.0, 0.0)
    >>> sums[frozenset({(0, 0)})], sums[frozenset({(0, 0), (1, 0)})], sums[frozenset({(1, 0)})]
    (500.0, 500.0, 500.0)
    """
    found: dict[frozenset[Item], list[float]] = {}
    lowers = []
    for basis in bases:
        if threshold * basis.scale > widest:
            continue
        heavy = basis.noisy >= threshold * basis.scale
        sums, cells = np.where(heavy, basis.noisy, 0).astype(np.float64), heavy.astype(np.float64)
        for axis in range(sums.ndim):  # append the axis's sum: index -1 = "column absent"
            sums = np.concatenate([sums, sums.sum(axis=axis, keepdims=True)], axis=axis)
            cells = np.concatenate([cells, cells.sum(axis=axis, keepdims=True)], axis=axis)
        lowers.append((basis, sums - z * np.sqrt(cells * discrete_laplace_variance(basis.scale))))
    wanted: set[frozenset[Item]] | None = None
    if at_least > -math.inf:  # the keys reaching at_least in some basis, from the arrays
        wanted = set()
        for basis, lower in lowers:
            options = [np.r_[np.arange(len(items)), lower.shape[a] - 1] for a, items in enumerate(basis.items)]
            for hit in np.argwhere(lower[np.ix_(*options)] >= at_least):
                wanted.add(frozenset((basis.columns[a], basis.items[a][i]) for a, i in enumerate(hit)
                                     if i < len(basis.items[a])))
    for basis, lower in lowers:
        position = {(c, v): (a, i) for a, (c, its) in enumerate(zip(basis.columns, basis.items))
                    for i, v in enumerate(its)}
        if wanted is None:
            options = [list(range(len(items))) + [lower.shape[a] - 1] for a, items in enumerate(basis.items)]
            keys = (frozenset((basis.columns[a], basis.items[a][i]) for a, i in enumerate(index)
                              if i < len(basis.items[a])) for index in itertools.product(*options))
        else:
            keys = (key for key in wanted if all(item in position for item in key))
        for key in keys:
            if key:
                index = [lower.shape[a] - 1 for a in range(lower.ndim)]
                for item in key:
                    index[position[item][0]] = position[item][1]
                found.setdefault(key, []).append(float(lower[tuple(index)]))
    return {key: float(np.mean(values)) for key, values in found.items()}


def heavy_cell_estimates(bases: Sequence[Basis], threshold: float, keys: Iterable[frozenset[Item]],
                         widest: float = math.inf) -> dict[frozenset[Item], tuple[float, float]]:
    """The heavy cells' estimate of each of ``keys``: the sum of its cells of at least ``threshold · b``, and its variance.

    The estimate :func:`heavy_cell_sums` bounds from below (with ``z = 0`` their values
    are the same): per basis holding the itemset (a basis whose ``threshold · b`` exceeds
    ``widest`` rows skipped), the sum ``Σ_heavy y`` over its ``h`` heavy cells with the
    variance ``h·σ²`` of their noise; the mean over those bases, with the variance of the
    mean (the bases' noise is independent). A key that no basis holds is left out.
    Post-processing of the released cells.

    Parameters
    ----------
    bases : sequence of Basis
    threshold : float
        Heavy cells are those of at least ``threshold`` noise scales (:data:`HEAVY_CELLS`).
    keys : iterable of frozenset
        The itemsets wanted ((column, compressed code) pairs).
    widest : float
        The resolution limit in rows (as in :func:`heavy_cell_sums`).

    Returns
    -------
    dict
        ``{key: (count, variance)}``, in rows.

    Examples
    --------
    >>> basis = Basis((0, 1), ((0,), (0,)), np.array([[500, 3], [-2, 400]]), 10.0)
    >>> count, var = heavy_cell_estimates([basis], 6.0, [frozenset({(0, 0)})])[frozenset({(0, 0)})]
    >>> count, math.isclose(var, discrete_laplace_variance(10.0))
    (500.0, True)
    """
    found: dict[frozenset[Item], list[tuple[float, float]]] = {}
    keys = [key for key in keys if key]
    for basis in bases:
        if threshold * basis.scale > widest:
            continue
        position = {(c, v): (a, i) for a, (c, its) in enumerate(zip(basis.columns, basis.items))
                    for i, v in enumerate(its)}
        heavy = basis.noisy >= threshold * basis.scale
        values = np.where(heavy, basis.noisy, 0).astype(np.float64)
        var1 = discrete_laplace_variance(basis.scale)
        for key in keys:
            if not all(item in position for item in key):
                continue
            index: list[int | slice] = [slice(None)] * basis.noisy.ndim
            for item in key:
                axis, i = position[item]
                index[axis] = i
            found.setdefault(key, []).append((float(values[tuple(index)].sum()),
                                              float(heavy[tuple(index)].sum()) * var1))
    return {key: (math.fsum(c for c, _ in parts) / len(parts), math.fsum(v for _, v in parts) / len(parts) ** 2)
            for key, parts in found.items()}


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
    :data:`BASIS_MAX_NOISE` (``dprm.itemsets.private``).

    Examples
    --------
    >>> import numpy as np
    >>> from dprm.privacy import Accountant, SeededNoise
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
    return {(p, q) for p, q in itertools.combinations(sorted(items), 2)
            if p[0] != q[0] and share[p] + share[q] - 1.0 >= min_support + margin}


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
    total with its number of cells (for :func:`_combined_total`).
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


def _combined_total(totals: Sequence[tuple[float, int, float]]) -> float:
    """The inverse-variance mean of noisy totals ``(total, cells, scale)``: each is ``n`` plus ``cells`` noise draws.

    Every released histogram's total is an unbiased estimate of the number of rows, of
    variance ``cells · σ²(scale)`` (independent draws); post-processing. At least 1.

    Examples
    --------
    >>> _combined_total([(100.0, 4, 1.0), (120.0, 400, 1.0)]) < 101
    True
    """
    weights = [1.0 / (cells * discrete_laplace_variance(scale)) for _, cells, scale in totals]
    return max(sum(w * t for w, (t, _, _) in zip(weights, totals)) / sum(weights), 1.0)


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
        basis: set[Item] = set()
        for item in members:  # a clique too large keeps its items of largest noisy count
            if _cells(basis | {item}, sizes) <= MAX_BASIS_CELLS:
                basis.add(item)
        bases.append(basis)
    return merge_bases(bases, sizes), edges, len(cliques)


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
