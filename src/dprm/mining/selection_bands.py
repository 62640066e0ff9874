"""Selection-aware Jaccard intervals (the default; no budget): a band over every candidate at once.

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
marginal Jaccard interval no wider than pruning's ``prune_width`` (or one whose lower
end reaches its ``prune_floor``, or exceeds the independence baseline of the released
supports by its ``prune_excess_floor``). The band is the
max-t (studentised maximum) construction on the simulated tables ``T* = R + Z*``
that give the marginal intervals (:mod:`dprm.mining.interval_estimates`): with ``se_c(T)`` the delta-method standard error of
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
held-back share (``reestimate_share``, :mod:`dprm.mining.private_extraction`) the
statement's noise is independent of the choice, and the marginal intervals are
written as they are.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Sequence

import numpy as np

from dprm.mining.extraction import Constraints
from dprm.queries import RedescriptionStats, independence_jaccard, p_value

__all__ = ["EXCESS_FLOOR_SLACK", "MAX_BAND_PAIRS", "count_reachable", "jaccard_standard_error", "reachable_sets",
           "selection_aware_intervals", "selection_critical_value", "unique_rows"]

#: Most candidate pairs (left sets × right sets) whose simulated Jaccard indices the
#: selection-aware band compares draw by draw; beyond, the Bonferroni bound over their
#: number is used (:func:`selection_critical_value`). Depth 3 with leaves: 170 × 170.
MAX_BAND_PAIRS = 60_000

#: How much lower than pruning's excess floor a candidate's interval may start and still be in the
#: band's set: the ``independence`` entry pruning reads is rounded to 3 decimals (half of 0.001 each
#: way), so the set is a little larger than what pruning can keep, never smaller.
EXCESS_FLOOR_SLACK = 0.001

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
    ``(m, b)``; each result ``(S, k, m)``, clipped as in :func:`~dprm.mining.interval_estimates.combination_intervals`.
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
    n_candidates: int | None = None, max_width: float | None = None, width_floor: float | None = None,
    excess_floor: float | None = None,
) -> tuple[float, int]:
    """The multiplier ``q`` of the selection-aware Jaccard band, and the candidates it covers.

    ``q`` is the ``confidence`` quantile over the draws of
    ``max_c |J_c(T*) − Ĵ_c| / se_c(T*)``, the largest studentised deviation among the
    candidate pairs ``c`` (every left set × every right set extraction can return,
    :func:`reachable_sets`) that could be kept on that draw: Γ's bounds on supports,
    Jaccard and p-value, and (with ``max_width``) a marginal interval no wider than it
    or, with ``width_floor``, one whose lower end is at least that (pruning's exception
    for a surely high index, :func:`dprm.mining.pruning.prune`; module docstring) or,
    with ``excess_floor``, one whose lower end exceeds the Jaccard index of independent
    queries of the candidate's released supports by at least that, less
    :data:`EXCESS_FLOOR_SLACK` (pruning's exception for a surely dependent pair; the
    slack covers the rounding of the redescription's ``independence`` entry, so that
    the band's set holds every candidate pruning can keep). ``Ĵ_c`` is the Jaccard
    index of the released ``table`` (``n_hat`` rows), ``se_c(T*)`` the standard error
    of :func:`jaccard_standard_error` on the draw, with cells of noise variance
    ``cell_variance``.
    When the sets are not enumerated (``None``: too many), ``q`` is the Bonferroni
    bound ``Φ⁻¹(1 − (1 − confidence) / (2K))`` over ``K = n_candidates`` pairs.

    Examples
    --------
    >>> from dprm.mining.interval_estimates import simulate_tables
    >>> from dprm.mining.noisy_estimates import discrete_laplace_variance
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
        released_left, released_right, _, estimate = _pair_statistics(
            np.asarray(table, dtype=np.float64)[None], np.array([float(n_hat)]), left, right_sets)
        support_left, support_right, intersection, jaccard = _pair_statistics(draws, n_draws, left, right_sets)
        n = np.broadcast_to(n_draws[:, None, None], jaccard.shape)
        eligible = ((intersection >= constraints.min_support) & (jaccard >= constraints.min_jaccard)
                    & (support_left <= constraints.max_support * n) & (support_right <= constraints.max_support * n))
        if max_width is not None:
            low, high = np.quantile(jaccard, [(1 - confidence) / 2, (1 + confidence) / 2], axis=0)
            kept = high - low <= max_width
            if width_floor is not None:
                kept |= low >= width_floor
            if excess_floor is not None:
                baseline = independence_jaccard(released_left[0], released_right[0], float(n_hat))
                kept |= low >= baseline + excess_floor - EXCESS_FLOOR_SLACK
            eligible &= kept[None]
        # Studentised by each draw's own standard error (the band uses the released
        # table's): a candidate stuck at J = 0 on most draws has a tiny spread of draws
        # but a sizeable error wherever it is eligible. Computed where eligible only
        # (elsewhere the deviation is 0), element by element as on the whole arrays.
        deviation = np.zeros(jaccard.shape)
        if eligible.any():
            def at(values: np.ndarray) -> np.ndarray:
                return np.broadcast_to(values, jaccard.shape)[eligible]

            spread = np.maximum(jaccard_standard_error(at(support_left), at(support_right), at(intersection),
                                                       *(at(c) for c in _region_cells(left, right_sets)),
                                                       cell_variance), 1e-9)
            deviation[eligible] = np.abs(jaccard[eligible] - at(estimate)) / spread
        worst = _significant_max(deviation, worst, (intersection, support_left, support_right, n_draws),
                                 constraints.max_pvalue)
    return float(np.quantile(worst, confidence)), len(left_sets) * len(right_sets)


def _significant_max(deviation: np.ndarray, worst: np.ndarray, counts: tuple[np.ndarray, ...], max_pvalue: float,
                     rounds: int = 8) -> np.ndarray:
    """Per draw, the larger of ``worst`` and the largest ``deviation`` whose pair has a p-value ≤ ``max_pvalue``.

    ``deviation`` ``(S, k, m)`` is 0 where a pair is not eligible on the other bounds;
    ``counts`` are the draws' intersections ``(S, k, m)``, left supports ``(S, k, 1)``,
    right supports ``(S, 1, m)`` and rows ``(S,)``. Exactly the maximum over every
    pair that passes the p-value bound, but the p-value (a binomial tail, the
    costliest step) is computed only where it can decide the maximum: a draw's
    largest remaining deviation first, for ``rounds`` rounds (one round settles a
    draw whose largest deviation is significant, the usual case), then every
    deviation still above the draw's maximum. A pair at or below it cannot change it.

    Examples
    --------
    >>> deviation = np.array([[[3.0, 2.0]], [[1.0, 0.0]]])          # 2 draws, 1 x 2 pairs
    >>> counts = (np.array([[[5.0, 40.0]], [[40.0, 0.0]]]), np.full((2, 1, 1), 50.0),
    ...           np.full((2, 1, 2), 50.0), np.full(2, 100.0))    # the first pair of draw 0 is not significant
    >>> _significant_max(deviation, np.zeros(2), counts, 0.01).tolist()
    [2.0, 1.0]
    """
    intersection, support_left, support_right, n_rows = counts
    n_draws, width = deviation.shape[0], deviation.shape[2]
    open_ = deviation.reshape(n_draws, -1).copy()
    open_[open_ <= worst[:, None]] = 0.0  # cannot raise the draw's maximum
    worst = worst.copy()

    def significant(draw: np.ndarray, pair: np.ndarray) -> np.ndarray:
        i, j = np.divmod(pair, width)
        return p_value(intersection[draw, i, j], support_left[draw, i, 0], support_right[draw, 0, j],
                       n_rows[draw]) <= max_pvalue

    draws = np.arange(n_draws)
    for _ in range(rounds):
        best = open_.argmax(axis=1)
        value = open_[draws, best]
        pending = np.flatnonzero(value > worst)
        if not len(pending):
            return worst
        passed = significant(pending, best[pending])
        settled = pending[passed]
        worst[settled] = value[settled]
        open_[settled] = 0.0  # nothing left in a settled draw exceeds its maximum
        open_[pending[~passed], best[pending[~passed]]] = 0.0
    draw, pair = np.nonzero(open_ > worst[:, None])
    if len(draw):
        passed = significant(draw, pair)
        np.maximum.at(worst, draw[passed], open_[draw[passed], pair[passed]])
    return worst


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


def count_reachable(units: np.ndarray, max_clauses: int) -> int:
    """An upper bound on :func:`reachable_sets`' number: negations plus unions of up to ``max_clauses + 1`` units."""
    k = int(np.asarray(units).shape[0])
    return k + sum(math.comb(k, j) for j in range(1, min(k, max_clauses + 1) + 1))
