"""Reading a basis release: every itemset's noisy support, its noise, and which itemsets are listed.

:func:`~dprm.itemsets.private_basis.release_bases` releases noisy cell histograms of a few
bases (its module notes derive each release's sensitivity and the split of ε); this
module reads them. Nothing here reads a row or spends budget: every estimate, interval
and listing is post-processing of the released counts, so the privacy is that of the
release. :class:`BasisRelease` holds what was released and lists the itemsets
(:meth:`BasisRelease.frequent_itemsets`); the constants that decide the listing
(``CONFIDENCE_Z``, ``RESOLUTION``, ``HEAVY_CELLS``) are those of the comparison in
:mod:`dprm.itemsets.private_basis`'s notes.

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
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from dprm.itemsets.private_basis_graph import Item
from dprm.itemsets.private_items import ItemSelection

__all__ = ["CONFIDENCE_Z", "RESOLUTION", "HEAVY_CELLS", "Basis", "BasisRelease", "BasisSupport",
           "discrete_laplace_variance", "heavy_cell_sums", "heavy_cell_estimates"]

#: Margin, in standard deviations of its noisy count, an itemset needs above ``θ·n̂``.
CONFIDENCE_Z = 1.0
#: Largest standard deviation of an itemset's noisy count, relative to ``θ·n̂``, for it to be
#: listed on its own (it may still be listed as a subset of a listed itemset).
RESOLUTION = 0.2
#: Cells at or above this many noise scales are a basis's heavy cells (:func:`heavy_cell_sums`);
#: None: only the plain sums list itemsets.
HEAVY_CELLS: float | None = 6.0


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
    """What :func:`~dprm.itemsets.private_basis.release_bases` returns (every field a function of noisy releases).

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
        The noisy count of every pair of kept items of two columns (step 2 of
        :mod:`dprm.itemsets.private_basis`).
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


def _fold(estimates: dict[frozenset[Item], tuple[float, float]], key: frozenset[Item], count: float,
          var: float) -> None:
    """Fold one ``count`` of variance ``var`` into ``estimates[key]`` by inverse-variance weighting (in place)."""
    if key in estimates:
        c0, v0 = estimates[key]
        w = 1.0 / v0 + 1.0 / var
        estimates[key] = ((c0 / v0 + count / var) / w, 1.0 / w)
    else:
        estimates[key] = (count, var)


def _combine(estimates: dict[frozenset[Item], tuple[float, float]], counts: dict[frozenset[Item], float],
             var: float) -> None:
    """Fold ``counts`` (each of variance ``var``) into ``estimates`` by inverse-variance weighting (in place)."""
    for key, count in counts.items():
        _fold(estimates, key, count, var)


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
            _fold(out, key, float(marg[index]), float(cells[index]) * var1)
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

