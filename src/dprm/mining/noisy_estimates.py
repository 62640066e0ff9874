"""Estimates from discrete-Laplace counts: their variance, two estimates combined, cells made consistent.

Post-processing of released counts only (no budget): :func:`discrete_laplace_variance`
of a release's noise, the inverse-variance mean of two independent estimates of one
quantity (:func:`combine_estimates`, e.g. a table's sum and a separate row count), and
noisy cells shifted to add up to such a better total (:func:`consistent_cells`, Hay et
al. 2010). Private extraction (:mod:`dprm.mining.private_extraction`), its intervals
(:mod:`dprm.mining.interval_estimates`) and the greedy miners' quality releases use
them.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["combine_estimates", "consistent_cells", "discrete_laplace_quantile", "discrete_laplace_sum_quantile",
           "discrete_laplace_variance", "simulated_sizes"]


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


def discrete_laplace_quantile(scale: float, probability: float) -> float:
    """The smallest ``k ≥ 0`` with ``P(|Z| ≤ k) ≥ probability`` for discrete Laplace ``Z``.

    With ``a = exp(−1/scale)``, ``P(Z = z) = (1 − a)/(1 + a)·a^|z|``, so
    ``P(|Z| > k) = 2a^(k+1)/(1 + a)``, and ``k = ⌈−scale·ln((1 − probability)(1 + a)/2)⌉ − 1``
    (0 where ``P(Z = 0)`` already reaches ``probability``). A float: for a tiny ε it
    exceeds every integer type; where float64 cannot resolve ``k`` it is one too many,
    never one too few.

    Examples
    --------
    >>> discrete_laplace_quantile(1.0, 0.95)          # P(|Z| <= 3) = 1 - 2e^-4/(1 + e^-1)
    3.0
    >>> discrete_laplace_quantile(1.0, 0.2)           # P(Z = 0) = 0.46 already
    0.0
    >>> round(discrete_laplace_quantile(1e9, 0.95) / 1e9, 3)   # scale·ln(20)·(1 + tiny)
    2.996
    """
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be in (0, 1), not {probability!r}")
    a = math.exp(-1.0 / scale)
    needed = -scale * math.log((1.0 - probability) * (1.0 + a) / 2.0)
    return float(max(math.ceil(needed) - 1, 0))  # where rounding errs, it errs wide


def discrete_laplace_sum_quantile(scale: float, probability: float) -> float:
    """The smallest ``k ≥ 0`` with ``P(|Z₁ + Z₂| ≤ k) ≥ probability``, ``Z₁, Z₂`` i.i.d. discrete Laplace.

    With ``a = exp(−1/scale)`` and ``C = ((1 − a)/(1 + a))²``, the sum's law is
    ``P(S = k) = C·a^|k|·(|k| + 1 + B)``, ``B = 2a²/(1 − a²)`` (the convolution's terms
    ``a^(|j| + |k − j|)`` summed: ``k + 1`` of them equal ``a^k``, the others a
    geometric series on each side), so
    ``P(|S| > k) = 2C·a^(k+1)·((k + 2 + B)/(1 − a) + a/(1 − a)²)``, decreasing in
    ``k``: found by bisection (a float, one too many where float64 cannot tell).

    Examples
    --------
    >>> discrete_laplace_sum_quantile(1.0, 0.95)       # P(|S| <= 4) = 0.968, P(|S| <= 3) = 0.927
    4.0
    >>> round(discrete_laplace_sum_quantile(1e6, 0.95) / 1e6, 2)   # the Laplace sum's: e^-t (2 + t) = 0.1
    4.11
    """
    if not 0.0 < probability < 1.0:
        raise ValueError(f"probability must be in (0, 1), not {probability!r}")
    one_minus_a = -math.expm1(-1.0 / scale)
    a = 1.0 - one_minus_a
    c = (one_minus_a / (1.0 + a)) ** 2
    b = 2.0 * a * a / (one_minus_a * (1.0 + a))

    def beyond(k: float) -> float:
        return 2.0 * c * math.exp((k + 1.0) * math.log(a) if a > 0 else -math.inf) * (
            (k + 2.0 + b) / one_minus_a + a / one_minus_a ** 2)

    if beyond(0.0) <= 1.0 - probability:
        return 0.0
    low, high = 0.0, 1.0
    while beyond(high) > 1.0 - probability:
        low, high = high, high * 2.0
    while high - low > max(1.0, high * 1e-12):
        middle = math.floor((low + high) / 2.0)
        if beyond(middle) > 1.0 - probability:
            low = middle
        else:
            high = middle
    return float(high)


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


def simulated_sizes(sums: np.ndarray, table_variance: float, data_size: tuple[float, float] | None,
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
    >>> simulated_sizes(sums, 4.0, None, np.random.default_rng(0)).tolist()
    [90.0, 110.0]
    >>> simulated_sizes(sums, 4.0, (100.0, 0.0), np.random.default_rng(0)).tolist()
    [100.0, 100.0]
    >>> bool(np.all(np.isfinite(simulated_sizes(sums, math.inf, (100.0, 8.0), np.random.default_rng(0)))))
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
