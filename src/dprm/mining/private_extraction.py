"""Private extraction of redescriptions from a pair of trees (Algorithm 6), error bars, pruning.

The three tree-based private miners (AltExpM, AltMCMC, MCMCTreePair) call
:func:`private_extract` once per tree pair. It releases the counts extraction needs
through the accountant, then everything else is post-processing of those noisy
counts: the shared extraction (:func:`dprm.mining.extraction.extract_combinations`),
the statistics of the returned redescriptions, their confidence intervals
(simulation of the known noise) and, afterwards, :func:`prune`.

Two ways to count (``counts=``)
-------------------------------
``"cells"`` (dprm's default)
    Each tree's drop-out cells (rows with a missing value of a tested attribute,
    :meth:`~dprm.trees.tree.Tree.apply_cells`) are merged into **one residual cell**,
    index ``n_leaves``. The table of (left leaf or residual) × (right leaf or
    residual), shape ``(n_L + 1, n_R + 1)``, partitions the rows, so it is one
    histogram over disjoint cells: adding or removing a row changes exactly one cell
    by one, L1 sensitivity 1, released by **one** ``DiscreteLaplaceHistogram(ε)``
    (ledger step ``"{step}: cell counts"``). Its shape depends on the trees only
    (public outputs of earlier mechanisms), never on the data. Post-processing:
    cells are used as released (sums of unbiased noisy cells stay unbiased; clipping
    the many empty cells at 0 would inflate ``n̂`` and every support), ``n̂`` is the
    sum of the table, and only derived statistics are clipped into range. Units
    are the single leaves (the residual is never a unit); the negation of a leaf is
    every other cell, residual included, which is exactly the plain complement the
    written query ``¬(leaf)`` means. So every support, intersection and the data size
    is a sum of noisy cells of *exactly* the rows the written queries hold on, even
    with missing values: no heuristic, and half the noise of the paper's variant on
    the intersections (ε instead of ε/2).

``"paper"`` (the paper's variant, section 4.5 and Appendix C, kept to reproduce it)
    Two histograms with ε/2 each (``split_budget``, exact Fractions):

    * ``CntInt`` (line 2): the ``n_L × n_R`` leaf-intersection counts; rows outside
      either tree (a missing tested value) are not counted. Disjoint cells, L1
      sensitivity 1: ledger step ``"{step}: leaf intersections"``.
    * ``CntL`` (line 3): the ``n_L`` left-leaf counts; disjoint, L1 sensitivity 1:
      ``"{step}: left leaf counts"``.

    Derived by post-processing, as in the paper: ``CntR`` (line 4) = column sums of
    the noisy intersections; ``dSize`` (line 5) ``n̂ = Σ CntL``. Extraction runs on
    the table ``leaves × (right leaves + one residual column)`` whose residual column
    is ``CntL[l] − Σ_r CntInt[l, r]`` (the rows of left leaf ``l`` outside the right
    tree). Left units are the left leaves (rows), right units the right leaves (the
    residual column is never a unit). On this table extraction's sums are the
    paper's formulas:

    ======================================  ==========================================
    paper                                   table sum
    ======================================  ==========================================
    ``|supp(∨_{I_L} n_l)| = Σ_{I_L} CntL``  rows ``I_L``, all columns
    ``|supp(∨_{I_R} n_r)| = Σ_{I_R} CntR``  columns ``I_R``, all rows
    ``|∨_{I_L} ∩ ∨_{I_R}|``                 ``Σ_{I_L × I_R} CntInt``
    ``|supp(¬n_m)| ≈ Σ_{l≠m} CntL`` (App.C) all rows but ``m`` (left negation)
    ``|¬n_m ∩ ∨_{I_R}| = Σ_{l≠m, I_R}``     rows ``≠ m`` × columns ``I_R``
    ``|D| = Σ CntL``                        the whole table
    ======================================  ==========================================

    Exact equality holds when the noisy counts are consistent; otherwise the table
    is made consistent first by post-processing: negative intersections are clipped
    at 0 and a negative residual at 0 (so a left support is
    ``max(CntL[l], Σ_r CntInt[l, r])``). One deviation: the negation of a *right*
    leaf ``m`` is the complement of its column, residual column included, so its
    support is ``n̂ − CntR[m]`` instead of Appendix C's ``Σ_{r≠m} CntR[r]``; the
    difference is the residual column (rows in the left tree but outside the right
    tree), which the written query ``¬(n_m)`` does hold on, so dprm's number is the
    better estimate of the query it returns. The paper's heuristic also ignores all
    rows outside the left tree (they are not in ``n̂``); in this mode, supports of
    negations and ``n̂`` are therefore biased low with missing values, as in the
    paper.

Confidence intervals (beyond the paper; no budget)
--------------------------------------------------
The noise distribution is public: each released cell is ``R = T + Z``, ``Z``
discrete Laplace of known scale ``s``. :func:`simulate_tables` draws
``n_simulations`` tables ``T* = R + Z*`` with fresh noise of the same scale (a
plain ``numpy`` generator: the draws depend only on released values, so this is
post-processing). As ``Z`` is symmetric this is the parametric bootstrap and the
flat-prior posterior of the true table; for a linear statistic ``θ`` (a support, an
intersection) ``θ(T*) − θ(R)`` has exactly the distribution of ``θ(T) − θ(R)``, so
its percentile interval is an exact confidence interval. The draws are *not*
clipped cell by cell (that would bias sums over many near-empty cells upwards and
measurably under-cover); :func:`combination_intervals` computes each returned
combination's supports, intersection and data size on every draw (matrix products
over the combination masks), clips them into the consistent range of
:mod:`dprm.queries.statistics`, computes the Jaccard index, and writes percentile intervals of posterior mass
``confidence`` to ``Redescription.extra["interval"]``::

    {"confidence": 0.95, "jaccard": [lo, hi], "intersection": [lo, hi],
     "support_left": [lo, hi], "support_right": [lo, hi]}

The Jaccard index is a ratio, so its interval is approximate: the tests measure
95 % intervals covering the true Jaccard in about 93–97 % of repetitions when the
noise scale is small against the counts involved, but coverage drops (≈ 0.6–0.8)
when the noise scale is a sizeable fraction of the supports (scale 10–30 against
supports of ~100). Such redescriptions have wide intervals, which is what
:func:`prune`'s width rule removes. In ``"paper"`` mode the intervals describe the
quantities the paper's counts model (its heuristic negations included), not the exact
supports of the written queries.

**Every interval contains its estimate.** The point estimates (``stats``) are the
statistics of the released table itself, clipped into the consistent range; they
need not lie inside the equal-tailed interval ``[q(α/2), q(1 − α/2)]`` of the draws:

* the Jaccard index is a ratio, and where the noise is large against the counts a
  noisy intersection above a noisy support is clipped to it, which puts the estimate
  at the top of Jaccard's range (``J = 0.98``) while the draws mostly give much lower
  values (``[0.00, 0.70]``); measured with AltExpM at ε = 1 on planted data (2,000
  rows, seeds 1–3): 16 of 564 Jaccard intervals missed their estimate;
* in ``"paper"`` mode the estimates come from the *clipped* table (negative
  intersections and residuals set to 0, which inflates sums over many near-empty
  cells) while the draws are not clipped (clipping them makes the intervals cover the
  true Jaccard in 6 % of cases instead of 98 %, measured as above): 468 of 475
  left-support intervals missed their estimate.

So each interval is the one of :func:`credible_interval`: equal-tailed when that
holds the estimate, otherwise the interval of the same posterior mass with the
nearest tail split that does (or, if the estimate lies beyond every draw, the one
closed by the estimate). Measured as above, it changed no coverage of the true
statistics by more than a percentage point (Jaccard 0.766 in cells mode, 0.977 in
paper mode, before and after). Coverage of what is returned is lower than 95 %
because extraction *selects* what the noise favoured (the winner's curse): of the
redescriptions that survived pruning in those runs, 1 of 8 (AltExpM) and 0 of 18
(MCMCTreePair) intervals held the true Jaccard. These are the *marginal* intervals;
the Jaccard interval written to the output is the selection-aware band below.

Selection-aware Jaccard intervals (the default; no budget)
----------------------------------------------------------
The same released table ``R = T + Z`` chooses the combinations (Γ, the greedy
disjunctions, pruning) and states them, so a marginal interval ``Ĵ_c ± …`` of a
*chosen* ``c`` covers less than its nominal level: it was chosen because its noise
raised ``Ĵ_c`` (measured at ε = 1: 0.90 on spi over 293 kept redescriptions, 27 of
29 misses with the true value below the interval; 0.89 on nmes1988). A band that
covers **every candidate at once** covers whatever is chosen among them, whatever
the rule of choice. The candidates are fixed by the trees (public): every pair
(left set, right set) extraction can return (:func:`reachable_sets`: a unit's
negation or a union of up to ``max_clauses + 1`` units per side), and of those the
ones that can be *kept*: Γ's bounds on supports, Jaccard and p-value, and a
marginal Jaccard interval no wider than pruning's ``prune_width``. The band is the
max-t (studentised maximum) construction on the simulated tables ``T* = R + Z*``
that give the marginal intervals: with ``se_c(T)`` the delta-method standard error of
a Jaccard index computed from a table ``T`` (:func:`jaccard_standard_error`: the
intersection and the two one-sided parts are sums of known numbers of cells of
known noise variance),

    M* = max over the candidates c eligible on T* of |J_c(T*) − Ĵ_c| / se_c(T*),
    q  = the ``confidence`` quantile of M* over the draws,

and each chosen redescription's interval is ``[Ĵ_c − q·se_c(R), Ĵ_c + q·se_c(R)]``
clipped to ``[0, 1]`` and joined with its marginal interval (never narrower). As
``T* − R`` has the law of ``R − T`` for sums of cells (symmetric noise, parametric
bootstrap), ``P(|J_c(R) − J_c(T)| ≤ q·se_c(R) for every eligible c) ≈ confidence``:
a kept redescription's band covers its true Jaccard with at least that probability
(the Jaccard index is a ratio, so this is as approximate as the marginal intervals).
Each draw is studentised by its *own* standard error, as the released table is by
its own: the spread of the draws would not do, since a candidate stuck at ``J = 0``
on most draws has almost no spread but a sizeable error on the draws where it is
eligible (with the spread, ``q`` reached 10–12 at depth 3 on unrelated data; with
the standard error it is 3.4–4.0). ``q`` is about 3.3–3.4 on generated data with a
weak relation at depth 2 (1.96 marginally), so the band is about 1.7 times as wide
as the marginal interval: the price of choosing and stating with one release. When
more than :data:`MAX_BAND_PAIRS` pairs would be
compared, ``q`` is the Bonferroni bound ``Φ⁻¹(1 − (1 − confidence)/(2K))`` over
their number ``K`` (wider, and valid for any dependence). Pruning's width rule
reads the marginal interval (``"jaccard_marginal"``), so the band changes what is
stated, not what is kept; ``"selection"`` records ``q`` and the candidates. With a
held-back share (below) the statement's noise is independent of the choice, and
the marginal intervals are written as they are.

Selection-aware statistics: a held-back share (``reestimate_share``, issue 13)
-------------------------------------------------------------------------------
With ``reestimate_share = r > 0`` (cells mode) the extraction's ε is split: the cell
table released with ``(1 − r)·ε`` *chooses* the combinations, and a second histogram
of the same cells, released with ``r·ε`` and fresh noise (another L1-sensitivity-1
histogram: ``ε`` in all by sequential composition), *states* them: the reported
counts, the data size, the intervals and therefore pruning come from the second
table only. Its noise is independent of the choice made on the first, so for the
chosen combinations the second table's counts are unbiased and the simulated
intervals are exact for linear statistics, as for a single redescription: the
winner's curse above is gone, at the price of noisier statements (scale ``1/(r·ε)``).

Pruning (section 4.6)
---------------------
:func:`prune` marks (``pruned=True``, kept in the list) redescriptions whose noisy
intersection is below ``min_noisy_support`` (the paper's noisy-support threshold,
chosen from the noisy support vs noisy Jaccard plot; e.g. 500 on MAMMAL) or, dprm's
rule, whose Jaccard interval is wider than ``max_interval_width``. Both are
functions of released values only.
"""

from __future__ import annotations

import math
from dataclasses import replace
from statistics import NormalDist
from typing import Sequence

import numpy as np

from dprm.data.literal_index import LiteralIndex
from dprm.errors import BudgetExceededError, ParameterError
from dprm.mining.extraction import Constraints, LeafCombination, contingency_table, extract_combinations
from dprm.privacy import Accountant, DiscreteLaplaceHistogram, SeededNoise, as_epsilon, split_budget
from dprm.privacy.budget import EpsilonLike, as_fraction
from dprm.queries import Not, Or, Query, Redescription, RedescriptionStats, p_value
from dprm.trees.leaf_queries import TreeQueries, node_cells
from dprm.trees.tree import Tree

__all__ = [
    "COUNTS",
    "INTERVAL_KEY",
    "combination_intervals",
    "leaf_pair_table",
    "private_extract",
    "private_extract_table",
    "simulate_tables",
    "prune",
]

#: The ways to count a tree pair: dprm's exact cells, or the paper's two histograms.
COUNTS: tuple[str, ...] = ("cells", "paper")

#: The key of :attr:`Redescription.extra` that holds the confidence intervals.
INTERVAL_KEY = "interval"

_INTERVAL_STATS = ("jaccard", "intersection", "support_left", "support_right", "p_value")


# -- the released counts and the tables built from them ------------------------------


def _residual_merged(cells: np.ndarray, n_leaves: int) -> np.ndarray:
    """Leaf numbers, with every drop-out cell merged into the residual ``n_leaves``."""
    return np.where(cells < n_leaves, cells, n_leaves)


def _paper_table(intersections: np.ndarray, left_counts: np.ndarray, clip: bool = True) -> np.ndarray:
    """The table ``leaves × (right leaves + residual)`` of the paper's counts.

    Works on one released pair (2-d, 1-d) or on a stack of simulated ones (3-d, 2-d).
    With ``clip``, negative intersections and then negative residuals are clipped at
    0 (post-processing); simulations use ``clip=False``.
    """
    inter = np.asarray(intersections, dtype=np.float64)
    if clip:
        inter = np.clip(inter, 0.0, None)
    residual = np.asarray(left_counts, dtype=np.float64) - inter.sum(axis=-1)
    if clip:
        residual = np.clip(residual, 0.0, None)
    return np.concatenate([inter, residual[..., None]], axis=-1)


def simulate_tables(released: np.ndarray, scale: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of the true counts given released ones: ``released + fresh noise``.

    The noise is discrete Laplace of the release's ``scale``, drawn from ``rng`` (a
    plain generator: the draws depend on released values only, so this is
    post-processing). Because the noise is symmetric, ``T* = R + Z*`` is both the
    parametric bootstrap and the posterior of the true counts under a flat prior on
    the integers: for any *linear* statistic (a support, an intersection, the data
    size) ``T* − R`` has the distribution of ``T − R``, so its percentile interval is
    an exact confidence interval. Draws are not clipped (clipping each cell would
    bias sums over many near-empty cells upwards); :func:`combination_intervals`
    clips the derived statistics instead.

    Parameters
    ----------
    released : ndarray of int
        Released noisy counts, any shape.
    scale : float
        The discrete Laplace scale they were released with.
    n : int
        Number of draws.
    rng : numpy.random.Generator

    Returns
    -------
    ndarray of int64, shape ``(n,) + released.shape``

    Examples
    --------
    >>> draws = simulate_tables(np.array([-3, 0, 50]), 2.0, 4000, np.random.default_rng(0))
    >>> draws.shape, [bool(abs(m - c) < 0.2) for m, c in zip(draws.mean(axis=0), [-3, 0, 50])]
    ((4000, 3), [True, True, True])
    """
    r = np.asarray(released, dtype=np.int64)
    # The seeded source's sampler (the same draws as before for ordinary scales);
    # for a huge scale (a tiny ε) it saturates at the int64 bounds as the release did.
    return SeededNoise(rng).discrete_laplace(np.broadcast_to(r, (n,) + r.shape), scale)


def _quantiles(values: np.ndarray, probabilities: np.ndarray) -> np.ndarray:
    """``np.quantile`` along the draws (axis 0), probabilities clipped into [0, 1]."""
    return np.quantile(values, np.clip(probabilities, 0.0, 1.0), axis=0)


#: Tail splits tried, as fractions of ``1 − confidence``, when an estimate falls
#: outside the equal-tailed interval (:func:`credible_interval`).
_TAIL_SPLITS = np.linspace(0.0, 1.0, 201)


def credible_interval(values: np.ndarray, estimates: np.ndarray | None, confidence: float) -> np.ndarray:
    """Intervals of posterior mass ``confidence`` over draws, containing the estimates.

    ``values`` holds draws of a statistic (axis 0) for each of ``k`` redescriptions;
    the result, shape ``(2, k)``, is the equal-tailed percentile interval
    ``[q(α/2), q(1 − α/2)]`` (``α = 1 − confidence``) wherever it contains the
    estimate. Where it does not, the interval is ``[q(p), q(p + confidence)]`` with
    the tail split ``p ∈ [0, α]`` nearest to ``α/2`` for which it does: the same
    posterior mass, the nearest interval that holds the estimate. If even
    ``[q(0), q(1)]`` (all draws) misses it, the estimate itself becomes the
    outer end (``[q(α), est]`` or ``[est, q(confidence)]``, mass ``≥ confidence``).

    Why the estimate can fall outside (derivation). The draws are
    ``θ(clip(R + Z*))`` for the released table ``R``; the estimate is
    ``θ(clip(R))``. For a linear statistic ``θ`` and no clipping these are centred
    on each other and the median of the draws is the estimate. The Jaccard index
    is a ratio, and the clipping into the consistent range (``inter ≤ min(sL,
    sR)``, ``0 ≤ s ≤ n``) binds exactly where the noise is large against the
    counts: a noisy intersection above a noisy support is clipped to that support,
    which puts the estimate at the top of Jaccard's range for those supports
    (``min(sL, sR)/max(sL, sR)``, e.g. 0.98), while the draws, which scatter the
    same noise both ways, mostly give much lower values (``[0.00, 0.70]``). Both
    are right about different things: the estimate is the statistic of the
    nearest consistent table, the draws its posterior spread under a flat prior.
    Any interval of posterior mass ``≥ confidence`` is an equally valid credible
    interval; choosing the one that holds the estimate makes the two consistent
    without widening beyond that mass (no ad-hoc margin), and changes nothing
    where the equal-tailed interval already holds the estimate.

    Examples
    --------
    >>> draws = np.linspace(0.0, 0.7, 1001)[:, None]     # the draws of one statistic
    >>> credible_interval(draws, np.array([0.35]), 0.9).ravel().round(3).tolist()
    [0.035, 0.665]
    >>> credible_interval(draws, np.array([0.68]), 0.9).ravel().round(3).tolist()
    [0.05, 0.68]
    >>> credible_interval(draws, np.array([0.98]), 0.9).ravel().round(3).tolist()
    [0.07, 0.98]
    """
    tail = (1.0 - confidence) / 2.0
    bounds = np.quantile(values, [tail, 1.0 - tail], axis=0)
    if estimates is None:
        return bounds
    estimates = np.asarray(estimates, dtype=np.float64)
    outside = np.flatnonzero(~((bounds[0] <= estimates) & (estimates <= bounds[1])))
    if outside.size == 0:
        return bounds
    v, e = values[:, outside], estimates[outside]
    alpha = 1.0 - confidence
    splits = alpha * _TAIL_SPLITS                                   # (G,)
    lows, highs = _quantiles(v, splits), _quantiles(v, splits + confidence)  # (G, m)
    holds = (lows <= e) & (e <= highs)
    distance = np.where(holds, np.abs(splits - tail)[:, None], np.inf)
    best = np.argmin(distance, axis=0)
    found = np.isfinite(distance[best, np.arange(e.size)])
    low, high = lows[best, np.arange(e.size)], highs[best, np.arange(e.size)]
    above = e > bounds[1, outside]
    # Not even all draws reach the estimate: it closes the interval on its side.
    low = np.where(found, low, np.where(above, _quantiles(v, np.array([alpha]))[0], e))
    high = np.where(found, high, np.where(above, e, _quantiles(v, np.array([confidence]))[0]))
    bounds[0, outside], bounds[1, outside] = np.minimum(low, e), np.maximum(high, e)
    return bounds


def combination_intervals(
    tables: np.ndarray, left: np.ndarray, right: np.ndarray, confidence: float,
    n_rows: np.ndarray | None = None, estimates: Sequence[RedescriptionStats] | None = None,
) -> list[dict]:
    """Percentile intervals of each combination's statistics over simulated tables.

    Parameters
    ----------
    tables : ndarray, shape (S, a, b)
        Simulated tables (cells may be negative); per draw, the supports,
        intersection and data size are clipped into the consistent range
        (``0 ≤ s ≤ n``, ``max(0, sL + sR − n) ≤ inter ≤ min(sL, sR)``).
    left, right : ndarray of bool, shapes (k, a) and (k, b)
        The cells of each combination's left and right query.
    confidence : float
        Posterior mass of each interval, in (0, 1).
    n_rows : ndarray, shape (S,), optional
        The data size of each draw; default the sum of each simulated table.
    estimates : sequence of RedescriptionStats, optional
        The reported point estimates, one per combination. Each interval is then
        made to contain its estimate (:func:`credible_interval`); without them the
        intervals are equal-tailed.

    Returns
    -------
    list of dict
        One ``{"confidence", "jaccard", "intersection", "support_left",
        "support_right", "p_value"}`` per combination, each statistic ``[lo, hi]``.

    Examples
    --------
    >>> tables = np.array([[[8, 2], [1, 9]], [[10, 0], [2, 8]]], dtype=float)
    >>> out = combination_intervals(tables, np.array([[True, False]]), np.array([[True, False]]), 0.9)
    >>> out[0]["intersection"], [round(x, 3) for x in out[0]["jaccard"]]
    ([8.1, 9.9], [0.733, 0.828])
    """
    tables = np.asarray(tables, dtype=np.float64)
    lf, rf = np.asarray(left, dtype=np.float64), np.asarray(right, dtype=np.float64)
    if n_rows is None:
        n_rows = tables.sum(axis=(1, 2))
    n_rows = np.maximum(np.asarray(n_rows, dtype=np.float64), 0.0)[:, None]
    support_left = np.clip(tables.sum(axis=2) @ lf.T, 0.0, n_rows)  # (S, k)
    support_right = np.clip(tables.sum(axis=1) @ rf.T, 0.0, n_rows)
    intersection = np.clip(np.einsum("ka,sab,kb->sk", lf, tables, rf),
                           np.maximum(support_left + support_right - n_rows, 0.0),
                           np.minimum(support_left, support_right))
    union = support_left + support_right - intersection
    jaccard = np.divide(intersection, union, out=np.zeros_like(union), where=union > 0)
    pvalues = p_value(intersection, support_left, support_right, np.broadcast_to(n_rows, intersection.shape))
    # scipy's binomial tail is NaN for counts beyond 2**63 (noise of a tiny ε saturates
    # there): such a draw is no evidence of anything, p = 1.
    pvalues = np.where(np.isnan(pvalues), 1.0, pvalues)
    values = {"jaccard": jaccard, "intersection": intersection,
              "support_left": support_left, "support_right": support_right, "p_value": pvalues}
    bounds = {}
    for key, v in values.items():
        point = None
        if estimates is not None:
            point = np.array([np.nan if getattr(e, key) is None else getattr(e, key) for e in estimates])
            point = None if np.isnan(point).any() else point
        bounds[key] = credible_interval(v, point, confidence)
    return [
        {"confidence": float(confidence),
         **{key: [float(bounds[key][0, c]), float(bounds[key][1, c])] for key in _INTERVAL_STATS}}
        for c in range(lf.shape[0])
    ]


# -- selection-aware Jaccard intervals ------------------------------------------------

#: Most candidate pairs (left sets × right sets) whose simulated Jaccard indices the
#: selection-aware band compares draw by draw; beyond, the Bonferroni bound over their
#: number is used (:func:`selection_critical_value`). Depth 3 with leaves: 170 × 170.
MAX_BAND_PAIRS = 60_000

#: Draws × candidate pairs evaluated at once (memory: about 6 arrays of this many floats).
_BAND_CHUNK = 2_000_000


def unique_rows(rows: np.ndarray) -> np.ndarray:
    """``np.unique(rows, axis=0)`` of a Boolean matrix: the same rows in the same order, faster.

    numpy sorts the rows as records of Booleans, one field at a time; here each row's
    bits are packed (first column most significant) into big-endian 64-bit words, whose
    order is the rows' lexicographic order, and the words are sorted (a fifth of the
    time of :func:`reachable_sets` on MAMMAL's tree pairs).

    Examples
    --------
    >>> rows = np.array([[1, 0, 1], [0, 1, 1], [1, 0, 1]], dtype=bool)
    >>> unique_rows(rows).astype(int).tolist()
    [[0, 1, 1], [1, 0, 1]]
    """
    rows = np.asarray(rows, dtype=bool)
    if len(rows) < 2:
        return rows.copy()
    packed = np.packbits(rows, axis=1)
    words = np.zeros((len(rows), -(-packed.shape[1] // 8) * 8), dtype=np.uint8)
    words[:, :packed.shape[1]] = packed
    keys = words.view(">u8")
    order = np.lexsort(keys.T[::-1])  # lexsort's last key is the primary one: the first word
    keys = keys[order]
    first = np.ones(len(rows), dtype=bool)
    first[1:] = (keys[1:] != keys[:-1]).any(axis=1)
    return rows[order[first]]


def reachable_sets(units: np.ndarray, max_clauses: int, limit: int | None = None) -> np.ndarray | None:
    """Every set of cells extraction can return on one side of a tree pair.

    A side of a returned redescription is the negation of a unit (all cells outside
    it) or a union of 1 to ``max_clauses + 1`` units (a simple query extended by
    disjunctions, :func:`dprm.mining.extraction.extract_combinations`); empty and full
    sets are never returned. The result depends on the trees only (public).

    Returns the distinct sets as rows of a Boolean array, or ``None`` when there are
    more than ``limit``.

    Examples
    --------
    >>> units = np.eye(3, dtype=bool)                  # three leaves (no residual cell)
    >>> reachable_sets(units, 1).astype(int).tolist()  # 3 negations, 3 leaves, 3 pairs of leaves
    [[0, 0, 1], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1], [1, 1, 0]]
    >>> reachable_sets(units, 1, limit=5) is None
    True
    """
    units = np.asarray(units, dtype=bool)
    found = [~units, units]
    level = units
    for _ in range(max_clauses):
        if limit is not None and len(level) * len(units) > 4 * limit:
            return None  # bounds the memory of the next level's unions
        level = unique_rows((level[:, None, :] | units[None, :, :]).reshape(-1, units.shape[1]))
        found.append(level)
    sets = unique_rows(np.concatenate(found))
    sets = sets[sets.any(axis=1) & ~sets.all(axis=1)]
    if limit is not None and len(sets) > limit:
        return None
    return sets


def _pair_statistics(tables: np.ndarray, n_rows: np.ndarray, left: np.ndarray, right: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Supports, intersection and Jaccard of every (left set, right set) on every table.

    ``tables`` ``(S, a, b)``, ``n_rows`` ``(S,)``, ``left`` ``(k, a)``, ``right``
    ``(m, b)``; each result ``(S, k, m)``, clipped as in :func:`combination_intervals`.
    """
    lf, rf = left.astype(np.float64), right.astype(np.float64)
    n = np.maximum(n_rows, 0.0)[:, None, None]
    support_left = np.clip((tables.sum(axis=2) @ lf.T)[:, :, None], 0.0, n)
    support_right = np.clip((tables.sum(axis=1) @ rf.T)[:, None, :], 0.0, n)
    intersection = np.clip((lf @ tables) @ rf.T, np.maximum(support_left + support_right - n, 0.0),
                           np.minimum(support_left, support_right))
    union = support_left + support_right - intersection
    jaccard = np.divide(intersection, union, out=np.zeros_like(union), where=union > 0)
    return support_left, support_right, intersection, jaccard


def jaccard_standard_error(support_left, support_right, intersection, cells_both, cells_left, cells_right,
                           cell_variance: float):
    """The delta-method standard error of a Jaccard index computed from noisy cells.

    ``J = a / (a + b + c)`` with ``a`` the intersection, ``b = sL − a`` and ``c = sR − a``
    (clipped at 0), each a sum of ``cells_both``, ``cells_left`` and ``cells_right``
    cells of independent noise of variance ``cell_variance``:
    ``Var J ≈ ((b + c)² k_a + a² (k_b + k_c)) · v / u⁴``, ``u = a + b + c`` (at least 1).
    Vectorised (arrays broadcast together).

    Examples
    --------
    >>> round(float(jaccard_standard_error(60.0, 80.0, 50.0, 1, 2, 3, 8.0)), 4)   # J = 50/90
    0.0415
    """
    a = np.maximum(np.asarray(intersection, dtype=np.float64), 0.0)
    b = np.maximum(np.asarray(support_left, dtype=np.float64) - a, 0.0)
    c = np.maximum(np.asarray(support_right, dtype=np.float64) - a, 0.0)
    u = np.maximum(a + b + c, 1.0)
    variance = ((b + c) ** 2 * cells_both + a ** 2 * (np.asarray(cells_left) + cells_right)) * cell_variance / u**4
    return np.sqrt(variance)


def _region_cells(left: np.ndarray, right: np.ndarray, outer: bool = True) -> tuple[np.ndarray, ...]:
    """Cells of the table in ``L × R``, ``L × not R`` and ``not L × R`` for left and right cell sets.

    With ``outer`` every left set with every right set (shape ``(k, m)``), else row by row.
    """
    n_left, n_right = left.sum(axis=1).astype(np.float64), right.sum(axis=1).astype(np.float64)
    a, b = left.shape[1], right.shape[1]
    if outer:
        n_left, n_right = n_left[:, None], n_right[None, :]
    return n_left * n_right, n_left * (b - n_right), (a - n_left) * n_right


def selection_critical_value(
    draws: np.ndarray, n_draws: np.ndarray, table: np.ndarray, n_hat: float, left_sets: np.ndarray | None,
    right_sets: np.ndarray | None, constraints: Constraints, confidence: float, cell_variance: float,
    n_candidates: int | None = None, max_width: float | None = None,
) -> tuple[float, int]:
    """The multiplier ``q`` of the selection-aware Jaccard band, and the candidates it covers.

    ``q`` is the ``confidence`` quantile over the draws of
    ``max_c |J_c(T*) − Ĵ_c| / se_c(T*)``, the largest studentised deviation among the
    candidate pairs ``c`` (every left set × every right set extraction can return,
    :func:`reachable_sets`) that could be kept on that draw: Γ's bounds on supports,
    Jaccard and p-value, and (with ``max_width``) a marginal interval no wider than it
    (module docstring, "Selection-aware Jaccard intervals"). ``Ĵ_c`` is the Jaccard
    index of the released ``table`` (``n_hat`` rows), ``se_c(T*)`` the standard error
    of :func:`jaccard_standard_error` on the draw, with cells of noise variance
    ``cell_variance``.
    When the sets are not enumerated (``None``: too many), ``q`` is the Bonferroni
    bound ``Φ⁻¹(1 − (1 − confidence) / (2K))`` over ``K = n_candidates`` pairs.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> table = np.array([[300.0, 20.0, 5.0], [30.0, 400.0, 10.0], [4.0, 6.0, 8.0]])
    >>> draws = simulate_tables(table, 5.0, 400, rng).astype(float)
    >>> sets = reachable_sets(np.eye(3, dtype=bool), 1)
    >>> q, k = selection_critical_value(draws, draws.sum(axis=(1, 2)), table, table.sum(), sets, sets,
    ...                                 Constraints(min_support=10), 0.95, discrete_laplace_variance(5.0))
    >>> k, bool(1.96 < q < 4.0)
    (36, True)
    """
    alpha = 1.0 - confidence
    if not math.isfinite(cell_variance):
        return math.inf, int(n_candidates or 0)
    if left_sets is None or right_sets is None or len(left_sets) * len(right_sets) > MAX_BAND_PAIRS:
        k = int(n_candidates if n_candidates is not None else MAX_BAND_PAIRS)
        return float(NormalDist().inv_cdf(1.0 - alpha / (2.0 * max(k, 1)))), k
    draws = np.asarray(draws, dtype=np.float64)
    n_draws = np.asarray(n_draws, dtype=np.float64)
    worst = np.zeros(draws.shape[0])
    chunk = max(1, _BAND_CHUNK // max(1, draws.shape[0] * len(right_sets)))
    for start in range(0, len(left_sets), chunk):
        left = left_sets[start:start + chunk]
        *_, estimate = _pair_statistics(np.asarray(table, dtype=np.float64)[None], np.array([float(n_hat)]),
                                        left, right_sets)
        support_left, support_right, intersection, jaccard = _pair_statistics(draws, n_draws, left, right_sets)
        # Studentised by each draw's own standard error (the band uses the released
        # table's): a candidate stuck at J = 0 on most draws has a tiny spread of draws
        # but a sizeable error wherever it is eligible.
        spread = np.maximum(jaccard_standard_error(support_left, support_right, intersection,
                                                   *_region_cells(left, right_sets), cell_variance), 1e-9)
        n = np.broadcast_to(n_draws[:, None, None], jaccard.shape)
        eligible = ((intersection >= constraints.min_support) & (jaccard >= constraints.min_jaccard)
                    & (support_left <= constraints.max_support * n) & (support_right <= constraints.max_support * n))
        if max_width is not None:
            low, high = np.quantile(jaccard, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
            eligible &= (high - low <= max_width)[None]
        if eligible.any():
            eligible[eligible] = p_value(intersection[eligible], np.broadcast_to(support_left, n.shape)[eligible],
                                         np.broadcast_to(support_right, n.shape)[eligible],
                                         n[eligible]) <= constraints.max_pvalue
        deviation = np.where(eligible, np.abs(jaccard - estimate) / spread, 0.0)
        worst = np.maximum(worst, deviation.reshape(draws.shape[0], -1).max(axis=1))
    return float(np.quantile(worst, confidence)), len(left_sets) * len(right_sets)


def selection_aware_intervals(intervals: list[dict], estimates: Sequence[RedescriptionStats], left: np.ndarray,
                              right: np.ndarray, cell_variance: float, critical: float, candidates: int) -> list[dict]:
    """Each interval with its Jaccard widened to ``Ĵ ± q·se`` (never narrower than before).

    ``se`` is :func:`jaccard_standard_error` of the reported statistics (``estimates``)
    over the cells of each combination (``left``, ``right``: its cell masks). The
    marginal interval stays as ``"jaccard_marginal"`` (pruning's width rule reads it);
    ``"selection"`` records ``q`` and the number of candidate pairs.

    Examples
    --------
    >>> stats = RedescriptionStats.from_counts(60, 80, 50, 1000)
    >>> out = selection_aware_intervals([{"confidence": 0.95, "jaccard": [0.5, 0.6]}], [stats],
    ...                                 np.array([[True, False]]), np.array([[True, True, False]]), 8.0, 3.0, 36)
    >>> [round(x, 3) for x in out[0]["jaccard"]], out[0]["jaccard_marginal"], out[0]["selection"]["critical_value"]
    ([0.447, 0.664], [0.5, 0.6], 3.0)
    """
    estimates = list(estimates)
    if not (math.isfinite(cell_variance) and math.isfinite(critical)):
        # noise beyond the float range (a tiny ε): nothing is known of the Jaccard index
        error = np.full(len(estimates), np.inf)
    else:
        error = jaccard_standard_error(np.array([e.support_left for e in estimates]),
                                       np.array([e.support_right for e in estimates]),
                                       np.array([e.intersection for e in estimates]),
                                       *_region_cells(np.asarray(left, bool), np.asarray(right, bool), outer=False),
                                       cell_variance)
    out = []
    for interval, estimate, se in zip(intervals, estimates, error):
        low, high = interval["jaccard"]
        band = [max(0.0, min(low, estimate.jaccard - critical * se)),
                min(1.0, max(high, estimate.jaccard + critical * se))]
        out.append({**interval, "jaccard": [float(round(band[0], 12)), float(round(band[1], 12))],
                    "jaccard_marginal": [low, high],
                    "selection": {"critical_value": round(float(critical), 4) if math.isfinite(critical) else None,
                                  "candidates": int(candidates)}})
    return out


def _count_reachable(units: np.ndarray, max_clauses: int) -> int:
    """An upper bound on :func:`reachable_sets`' number: negations plus unions of up to ``max_clauses + 1`` units."""
    k = int(np.asarray(units).shape[0])
    return k + sum(math.comb(k, j) for j in range(1, min(k, max_clauses + 1) + 1))



# -- queries -----------------------------------------------------------------------


def _side_query(queries: TreeQueries, tree: Tree, cells: tuple[bool, ...], negated: bool) -> Query:
    """The query of a set of leaf cells (residual last, if present), or of ``¬unit``.

    A union of leaves is the disjunction of the leaves' queries, never simplified to
    a parent node's query: with missing values the parent's query also holds on
    drop-out rows, which the union of its leaves does not contain.
    """
    mask = np.asarray(cells, dtype=bool)
    n_leaves = tree.n_leaves
    leaves = ~mask[:n_leaves] if negated else mask[:n_leaves]
    if not negated and mask[n_leaves:].any():
        raise ValueError("a union of leaves cannot hold the residual cell")
    parts = [queries.node(tree.leaves[k]) for k in np.flatnonzero(leaves)]
    if not parts:
        raise ValueError("a side query needs at least one leaf")
    query = parts[0] if len(parts) == 1 else Or(*parts)
    return Not(query) if negated else query


# -- the extraction ----------------------------------------------------------------


def discrete_laplace_variance(scale: float) -> float:
    """Variance ``2a / (1 − a)²`` of discrete Laplace noise with ``a = exp(−1/scale)``.

    ``1 − a`` is computed as ``−expm1(−1/scale)``, exact to rounding for any scale
    (``1 − exp(−1/s)`` is 0 in float64 once ``s > 2**53``, which divided by zero for a
    tiny ε), and the division is done in two steps so that a variance beyond the
    float range is ``inf`` (an honest "unknown") instead of an error.

    Examples
    --------
    >>> round(discrete_laplace_variance(10.0), 1)   # close to 2·scale² = 200
    199.8
    >>> round(discrete_laplace_variance(1e30) / 2e60, 12)      # ε = 1e-30
    1.0
    >>> discrete_laplace_variance(1e300)
    inf
    """
    one_minus_a = -math.expm1(-1.0 / scale)
    a = 1.0 - one_minus_a
    return (2.0 * a / one_minus_a) / one_minus_a


def combine_estimates(
    estimate: float, variance: float, other: tuple[float, float] | None
) -> tuple[float, float]:
    """Inverse-variance weighted mean of two independent unbiased estimates.

    An infinite variance gives its estimate no weight (if both are infinite, the
    first estimate is kept).

    Examples
    --------
    >>> combine_estimates(100.0, 4.0, (110.0, 4.0))
    (105.0, 2.0)
    >>> combine_estimates(100.0, 4.0, None)
    (100.0, 4.0)
    >>> combine_estimates(100.0, math.inf, (110.0, 4.0))
    (110.0, 4.0)
    """
    if other is None or variance == 0 or math.isinf(other[1]):
        return estimate, variance
    if other[1] == 0 or math.isinf(variance):
        return other
    value, other_variance = other
    weight, other_weight = 1.0 / variance, 1.0 / other_variance
    return (estimate * weight + value * other_weight) / (weight + other_weight), 1.0 / (weight + other_weight)


def consistent_cells(table: np.ndarray, free: np.ndarray, total) -> np.ndarray:
    """Noisy cells made to add up to a better estimate of their total.

    With independent cell noises of equal variance ``v`` on the ``K`` free cells
    (``free``; the others are known to be 0) and an independent unbiased estimate
    ``t`` of the total with variance ``w``, the best linear unbiased estimate of the
    cells is ``x_c + (n̂ − Σx)/K``, where ``n̂`` is the inverse-variance mean of ``Σx``
    and ``t`` (:func:`combine_estimates`): least squares under the constraint, Hay et
    al. 2010. Post-processing only. Sums over large sets of cells gain most: the
    support of a negation ``¬u`` (all cells outside ``u``) gets about the variance of
    ``n̂`` plus that of the cells of ``u``, instead of that of every other cell.

    ``table`` may be a stack of tables (leading axis) with one total each.

    Examples
    --------
    >>> table = np.array([[10.0, 4.0], [-2.0, 0.0]])
    >>> free = np.array([[True, True], [True, False]])
    >>> consistent_cells(table, free, 15.0)
    array([[11.,  5.],
           [-1.,  0.]])
    """
    table = np.array(table, dtype=np.float64)
    k = int(free.sum())
    if k == 0:
        return table
    sums = table.sum(axis=(-2, -1))
    shift = (np.asarray(total, dtype=np.float64) - sums) / k
    table[..., free] += np.asarray(shift)[..., None]
    return table


UNITS = ("leaves", "subtrees")


def _simulated_sizes(sums: np.ndarray, table_variance: float, data_size: tuple[float, float] | None,
                     rng: np.random.Generator) -> np.ndarray:
    """The data size of each simulated table, estimated as ``n̂`` was.

    Mirrors :func:`combine_estimates` case by case: the simulated table's sum
    (``sums``) and, if there is a separate count, a simulated one (its released
    value plus Laplace noise of the same variance), weighted by inverse variance. An
    infinite variance (a tiny ε) gives its estimate no weight; a separate count of
    variance 0 (a public size) is used as it is.

    Examples
    --------
    >>> sums = np.array([90.0, 110.0])
    >>> _simulated_sizes(sums, 4.0, None, np.random.default_rng(0)).tolist()
    [90.0, 110.0]
    >>> _simulated_sizes(sums, 4.0, (100.0, 0.0), np.random.default_rng(0)).tolist()
    [100.0, 100.0]
    >>> bool(np.all(np.isfinite(_simulated_sizes(sums, math.inf, (100.0, 8.0), np.random.default_rng(0)))))
    True
    """
    if data_size is None or table_variance == 0 or math.isinf(data_size[1]):
        return sums
    value, variance = data_size
    if variance == 0:
        return np.full(sums.shape, float(value))
    drawn = value + rng.laplace(0.0, math.sqrt(variance / 2), size=sums.shape)
    if math.isinf(table_variance):
        return drawn
    weight, other_weight = 1.0 / table_variance, 1.0 / variance
    return (sums * weight + drawn * other_weight) / (weight + other_weight)


def _restated(c: LeafCombination, table: np.ndarray, n_rows: float) -> LeafCombination:
    """The combination's counts in another table of the same cells (its cell sets are kept)."""
    left, right = np.asarray(c.left, dtype=np.float64), np.asarray(c.right, dtype=np.float64)
    return replace(c, support_left=float(table.sum(axis=1) @ left), support_right=float(table.sum(axis=0) @ right),
                   intersection=float(left @ table @ right), n_rows=float(n_rows))


def _stats(c: LeafCombination) -> RedescriptionStats:
    """The reported (noisy) statistics of a combination: its counts, clipped."""
    return RedescriptionStats.from_counts(c.support_left, c.support_right, c.intersection, c.n_rows)


def _empty_leaves(tree: Tree, index: LiteralIndex) -> np.ndarray:
    """Which leaves no row can reach (their tests contradict each other)."""
    return np.array([not tree.satisfiable(index, leaf) for leaf in tree.leaves], dtype=bool)


def _leaf_units(tree: Tree, units: str, residual: bool, empty: np.ndarray | None = None) -> np.ndarray:
    """Unit masks over the tree's leaves (plus a false residual column if asked),
    without units made only of leaves known to be ``empty``."""
    if units == "leaves":
        masks = np.eye(tree.n_leaves, dtype=bool)
    else:
        masks = node_cells(tree)[1][:, : tree.n_leaves]
    if empty is not None:
        masks = masks & ~empty[None, :]
    masks = masks[masks.any(axis=1)]
    if residual:
        masks = np.column_stack([masks, np.zeros(masks.shape[0], dtype=bool)])
    return masks


def _check_extraction(counts: str, units: str, confidence: float, reestimate_share: float, n_simulations: int,
                      rng: object) -> None:
    """The options of :func:`private_extract` and :func:`private_extract_table` (ParameterError)."""
    if counts not in COUNTS:
        raise ParameterError(f"counts must be one of {', '.join(COUNTS)}, not {counts!r}")
    if units not in UNITS:
        raise ParameterError(f"units must be one of {', '.join(UNITS)}, not {units!r}")
    if not 0 < confidence < 1:
        raise ParameterError(f"confidence must be in (0, 1), not {confidence}")
    if not 0 <= reestimate_share < 1:
        raise ParameterError(f"reestimate-share must be in [0, 1), not {reestimate_share}")
    if reestimate_share > 0 and counts != "cells":
        raise ParameterError("reestimate-share needs counts 'cells'")
    if isinstance(n_simulations, bool) or not isinstance(n_simulations, (int, np.integer)) or n_simulations < 0:
        raise ParameterError(f"n-simulations must be a non-negative integer, not {n_simulations!r}")
    if not isinstance(rng, np.random.Generator):
        raise ParameterError("private_extract needs rng, a numpy.random.Generator")


def private_extract(
    left_cells: np.ndarray,
    left_tree: Tree,
    left_index: LiteralIndex,
    right_cells: np.ndarray,
    right_tree: Tree,
    right_index: LiteralIndex,
    epsilon: EpsilonLike,
    accountant: Accountant,
    step: str,
    constraints: Constraints,
    *,
    counts: str = "cells",
    units: str = "leaves",
    data_size: tuple[float, float] | None = None,
    confidence: float = 0.95,
    n_simulations: int = 500,
    reestimate_share: float = 0.0,
    prune_width: float | None = 0.22,
    rng: np.random.Generator,
) -> list[Redescription]:
    """ε-DP redescriptions of one tree pair (Algorithm 6), with confidence intervals.

    Parameters
    ----------
    left_cells, right_cells : ndarray of int
        ``tree.apply_cells(index)`` of every row (true data, server side; row-aligned).
    left_tree, right_tree : Tree
        The trees (already released by a mechanism: their shape is public).
    left_index, right_index : LiteralIndex
        The views' literal indexes, to write the leaves' queries.
    epsilon : int, float, str or Fraction
        The extraction's budget; exactly this much is charged.
    accountant : Accountant
        Charged before any noise is drawn; the noise comes from ``accountant.noise``.
    step : str
        Prefix of the ledger steps, e.g. ``"extractReds#3"``.
    constraints : Constraints
        Γ and ``max_clauses``, evaluated on the noisy counts (``max_support`` as a
        share of the noisy data size ``n̂``).
    counts : {"cells", "paper"}
        One histogram of exact cells with ε (default), or the paper's two histograms
        with ε/2 each (module docstring).
    data_size : (float, float), optional
        A separately released estimate of the number of rows and its variance
        (e.g. a discrete-Laplace count). The data size used for Γ's maximum support
        and the p-values is then the inverse-variance weighted mean of it and the
        table's own sum (post-processing); without it, the table's sum alone — the
        sum of some hundred noisy cells, whose spread makes p-values of large
        redescriptions unreliable.
    units : {"leaves", "subtrees"}
        What a simple query may be: a single leaf (the paper), or the leaves below
        any node of the tree (a subtree, written as the disjunction of its leaves,
        which is exact with missing values too). Pure post-processing either way.
    confidence : float
        Coverage of the intervals in ``extra["interval"]``, in (0, 1).
    n_simulations : int
        Simulated tables for the intervals; 0 writes no interval.
    reestimate_share : float
        Share of ``epsilon`` held back (``counts="cells"`` only; 0: none, the default).
        The first table (the rest of ``epsilon``) chooses the combinations; a second,
        independent histogram of the same cells (ledger step ``"{step}: re-estimate
        counts"``, L1 sensitivity 1) gives the reported statistics and intervals of
        the chosen ones. Its noise is independent of the choice, so the estimates are
        not biased by it (no winner's curse) and the simulated intervals keep their
        coverage for what is chosen (module docstring).
    prune_width : float, optional
        The width rule of :func:`prune` that will judge these redescriptions (the
        miner's ``prune_interval``; ``None``: no such rule). Without a held-back share,
        the selection-aware band is simultaneous over the candidates this rule would
        keep (module docstring, "Selection-aware Jaccard intervals").
    rng : numpy.random.Generator
        Randomness of the simulation (post-processing only; the released noise comes
        from the accountant's source).

    Returns
    -------
    list of Redescription
        Best noisy Jaccard first. ``stats`` are computed from the noisy table only
        (``RedescriptionStats.from_counts(sL, sR, inter, n̂)``); nothing exact leaves
        the function.

    Raises
    ------
    BudgetExceededError
        If the accountant cannot afford ``epsilon``; nothing is charged or drawn.
    ParameterError
        For a bad ``counts``, ``confidence``, ``n_simulations`` or cell arrays.
    """
    exact_epsilon = as_epsilon(epsilon)
    _check_extraction(counts, units, confidence, reestimate_share, n_simulations, rng)
    left_cells, right_cells = np.asarray(left_cells), np.asarray(right_cells)
    if left_cells.shape != right_cells.shape or left_cells.ndim != 1:
        raise ParameterError("left_cells and right_cells must be 1-d and row-aligned")
    n_left, n_right = left_tree.n_leaves, right_tree.n_leaves
    for name, cells, tree in (("left", left_cells, left_tree), ("right", right_cells, right_tree)):
        if cells.size and (cells.min() < 0 or cells.max() >= tree.n_cells):
            raise ParameterError(f"{name}_cells must be cells of the {name} tree (apply_cells)")
    # Refuse before anything is charged: the paper's mode makes two charges.
    if not accountant.can_afford(exact_epsilon):
        raise BudgetExceededError(
            f"privacy budget exceeded at step {step!r}: requested epsilon {float(exact_epsilon):g}, "
            f"remaining {float(accountant.remaining()):g} of {float(accountant.total_epsilon):g}"
        )

    table = leaf_pair_table(left_cells, n_left, right_cells, n_right)
    return private_extract_table(
        table, left_tree, left_index, right_tree, right_index, epsilon, accountant, step, constraints,
        counts=counts, units=units, data_size=data_size, confidence=confidence, n_simulations=n_simulations,
        reestimate_share=reestimate_share, prune_width=prune_width, rng=rng)


def leaf_pair_table(left_cells: np.ndarray, n_left: int, right_cells: np.ndarray, n_right: int) -> np.ndarray:
    """Exact rows of every (left leaf, right leaf) pair, drop-outs merged into a residual row and column.

    ``left_cells``/``right_cells`` are :meth:`~dprm.trees.tree.Tree.apply_cells` of the
    same rows; the table has shape ``(n_left + 1, n_right + 1)`` (int64). It is a count
    of rows per cell, so the tables of disjoint sets of rows (shards) add up to the
    table of their union. Everything :func:`private_extract_table` releases is made
    from it.

    Examples
    --------
    >>> leaf_pair_table(np.array([0, 1, 5]), 2, np.array([1, 1, 0]), 2).tolist()
    [[0, 1, 0], [0, 1, 0], [1, 0, 0]]
    """
    return contingency_table(_residual_merged(np.asarray(left_cells), n_left), n_left + 1,
                             _residual_merged(np.asarray(right_cells), n_right), n_right + 1).astype(np.int64)


def private_extract_table(
    table: np.ndarray,
    left_tree: Tree,
    left_index: LiteralIndex,
    right_tree: Tree,
    right_index: LiteralIndex,
    epsilon: EpsilonLike,
    accountant: Accountant,
    step: str,
    constraints: Constraints,
    *,
    counts: str = "cells",
    units: str = "leaves",
    data_size: tuple[float, float] | None = None,
    confidence: float = 0.95,
    n_simulations: int = 500,
    reestimate_share: float = 0.0,
    prune_width: float | None = 0.22,
    rng: np.random.Generator,
) -> list[Redescription]:
    """:func:`private_extract` from the exact :func:`leaf_pair_table` of the two trees' cells.

    The only thing extraction reads of the rows is that table (one request to a
    counting engine for a whole extraction); the arguments are otherwise those of
    :func:`private_extract`, which checks them.
    """
    exact_epsilon = as_epsilon(epsilon)
    _check_extraction(counts, units, confidence, reestimate_share, n_simulations, rng)
    n_left, n_right = left_tree.n_leaves, right_tree.n_leaves
    table = np.asarray(table)
    if table.shape != (n_left + 1, n_right + 1):
        raise ParameterError(f"the leaf-pair table must have shape {(n_left + 1, n_right + 1)}, not {table.shape}")
    if not accountant.can_afford(exact_epsilon):
        raise BudgetExceededError(
            f"privacy budget exceeded at step {step!r}: requested epsilon {float(exact_epsilon):g}, "
            f"remaining {float(accountant.remaining()):g} of {float(accountant.total_epsilon):g}"
        )
    if counts == "cells":
        exact = table
        select_epsilon, reestimate_epsilon = exact_epsilon, None
        if reestimate_share > 0:
            share = as_fraction(reestimate_share, "reestimate-share")
            select_epsilon, reestimate_epsilon = split_budget(exact_epsilon, [1 - share, share])
        mechanism = DiscreteLaplaceHistogram(select_epsilon)
        released = [mechanism.release(accountant, f"{step}: cell counts", exact)]
        scales = [mechanism.scale]
        if reestimate_epsilon is not None:
            second = DiscreteLaplaceHistogram(reestimate_epsilon)
            reestimate = (second.release(accountant, f"{step}: re-estimate counts", exact), second.scale)
        del exact

        # Leaves whose path contradicts itself (a then ¬a, x ≤ 3 then x > 5) hold no
        # row whatever the data: their cells are known to be 0 (tree structure only).
        known_empty = [_empty_leaves(left_tree, left_index), _empty_leaves(right_tree, right_index)]

        def build(parts, clip=True):
            # No clipping of cells: sums of unbiased noisy cells stay unbiased
            # (clipping the many empty cells at 0 would inflate n̂ and every support).
            table = np.array(parts[0], dtype=np.float64)
            table[..., np.flatnonzero(known_empty[0]), :] = 0.0
            table[..., :, np.flatnonzero(known_empty[1])] = 0.0
            return table

        left_units = _leaf_units(left_tree, units, residual=True, empty=known_empty[0])
    else:
        eps_inter, eps_left = split_budget(exact_epsilon, [1, 1])
        inter_mech, left_mech = DiscreteLaplaceHistogram(eps_inter), DiscreteLaplaceHistogram(eps_left)
        exact_inter = np.ascontiguousarray(table[:n_left, :n_right])
        exact_left = table[:n_left, :].sum(axis=1)
        released = [
            inter_mech.release(accountant, f"{step}: leaf intersections", exact_inter),
            left_mech.release(accountant, f"{step}: left leaf counts", exact_left),
        ]
        scales = [inter_mech.scale, left_mech.scale]
        del exact_inter, exact_left

        def build(parts, clip=True):
            return _paper_table(parts[0], parts[1], clip)

        left_units = _leaf_units(left_tree, units, residual=False)
    # From here on only released values are used.
    table = build(released)
    # The table's own estimate of the data size is the sum of the last release (all
    # cells, or the paper's left-leaf counts): a sum of independent noisy cells.
    if counts == "cells":
        free = np.ones(table.shape, dtype=bool)
        free[np.flatnonzero(known_empty[0]), :] = False
        free[:, np.flatnonzero(known_empty[1])] = False
        n_free = int(free.sum())
    else:
        free, n_free = None, np.size(released[-1])
    table_variance = n_free * discrete_laplace_variance(scales[-1])
    n_hat, _ = combine_estimates(float(table.sum()), table_variance, data_size)
    if free is not None and data_size is not None:
        table = consistent_cells(table, free, n_hat)
    right_units = _leaf_units(right_tree, units, residual=True,
                              empty=known_empty[1] if counts == "cells" else None)
    combinations: list[LeafCombination] = extract_combinations(table, constraints, left_units, right_units,
                                                               n_rows=n_hat)
    if not combinations:
        return []
    if counts == "cells" and reestimate_share > 0:
        # Report from the independent second table: the same cells, fresh noise.
        released, scales = [reestimate[0]], [reestimate[1]]
        table = build(released)
        table_variance = n_free * discrete_laplace_variance(scales[-1])
        n_hat, _ = combine_estimates(float(table.sum()), table_variance, data_size)
        if data_size is not None:
            table = consistent_cells(table, free, n_hat)
        combinations = [_restated(c, table, n_hat) for c in combinations]

    intervals: list[dict | None] = [None] * len(combinations)
    if n_simulations > 0:
        draws = build([simulate_tables(r, s, int(n_simulations), rng) for r, s in zip(released, scales)],
                      clip=False)
        # The data size is simulated as it was estimated: from the simulated table's
        # sum and, if there is one, a simulated separate count (same variance).
        n_draws = _simulated_sizes(draws.sum(axis=(1, 2)), table_variance, data_size, rng)
        if free is not None and data_size is not None:
            draws = consistent_cells(draws, free, n_draws)
        intervals = combination_intervals(
            draws,
            np.array([c.left for c in combinations]),
            np.array([c.right for c in combinations]),
            confidence,
            n_rows=n_draws,
            estimates=[_stats(c) for c in combinations],
        )
        if not reestimate_share > 0:
            # The same noise chose these combinations: widen their Jaccard intervals to
            # the selection-aware band (module docstring).
            left_masks = np.array([c.left for c in combinations])
            right_masks = np.array([c.right for c in combinations])
            sets = [reachable_sets(u, constraints.max_clauses, limit=MAX_BAND_PAIRS)
                    for u in (left_units, right_units)]
            cell_variance = max(discrete_laplace_variance(scale) for scale in scales)
            critical, candidates = selection_critical_value(
                draws, n_draws, table, n_hat, sets[0], sets[1], constraints, confidence, cell_variance,
                max_width=prune_width, n_candidates=_count_reachable(left_units, constraints.max_clauses)
                * _count_reachable(right_units, constraints.max_clauses))
            intervals = selection_aware_intervals(intervals, [_stats(c) for c in combinations], left_masks,
                                                  right_masks, cell_variance, critical, candidates)

    queries = (TreeQueries(left_tree, left_index), TreeQueries(right_tree, right_index))
    found = []
    for c, interval in zip(combinations, intervals):
        left = _side_query(queries[0], left_tree, c.left, c.left_negated)
        right = _side_query(queries[1], right_tree, c.right, c.right_negated)
        stats = _stats(c)
        extra = {} if interval is None else {INTERVAL_KEY: interval}
        found.append(Redescription(left, right, stats, extra=extra))
    return found


# -- pruning -----------------------------------------------------------------------


def prune(
    redescriptions: Sequence[Redescription],
    *,
    min_noisy_support: float | None = None,
    max_interval_width: float | None = 0.22,
    max_pvalue: float | None = None,
) -> list[Redescription]:
    """Mark redescriptions that are probably artefacts of the noise (section 4.6).

    Parameters
    ----------
    redescriptions : sequence of Redescription
    min_noisy_support : float, optional
        The paper's rule: prune where the noisy intersection is below this threshold
        (e.g. 500 on MAMMAL). ``None``: not applied.
    max_interval_width : float, optional
        dprm's rule: prune where the Jaccard interval (``extra["interval"]``: its
        marginal interval ``"jaccard_marginal"`` where there is one, else
        ``"jaccard"``) is wider than this. ``None``: not applied. A redescription
        without an interval is not judged by this rule.
    max_pvalue : float, optional
        dprm's significance rule: prune where the upper end of the p-value interval
        exceeds this, i.e. where the redescription is not significant at the
        pessimistic end of the noise (the winner's curse: among many candidates,
        those whose noise raised the intersection pass Γ most easily). ``None``:
        not applied.

    Returns
    -------
    list of Redescription
        The same redescriptions in the same order, ``pruned=True`` where a rule
        applies (already pruned ones stay pruned). Pure post-processing.

    Examples
    --------
    >>> from dprm.queries import BooleanLiteral
    >>> r = Redescription(BooleanLiteral("a"), BooleanLiteral("b"),
    ...                   RedescriptionStats.from_counts(600, 640, 520, 2000),
    ...                   extra={"interval": {"confidence": 0.95, "jaccard": [0.4, 0.9]}})
    >>> [x.pruned for x in prune([r], min_noisy_support=500, max_interval_width=None)]
    [False]
    >>> [x.pruned for x in prune([r], min_noisy_support=500, max_interval_width=0.25)]
    [True]
    """
    if min_noisy_support is not None and not min_noisy_support >= 0:
        raise ParameterError(f"prune-support must be non-negative, not {min_noisy_support}")
    if max_interval_width is not None and not max_interval_width >= 0:
        raise ParameterError(f"max-interval-width must be non-negative, not {max_interval_width}")
    out = []
    for r in redescriptions:
        drop = min_noisy_support is not None and r.stats.intersection < min_noisy_support
        interval = r.extra.get(INTERVAL_KEY)
        if max_interval_width is not None and isinstance(interval, dict) and "jaccard" in interval:
            lo, hi = interval.get("jaccard_marginal", interval["jaccard"])
            drop = drop or (hi - lo) > max_interval_width
        if max_pvalue is not None and isinstance(interval, dict) and "p_value" in interval:
            drop = drop or interval["p_value"][1] > max_pvalue
        out.append(replace(r, pruned=True) if drop and not r.pruned else r)
    return out
